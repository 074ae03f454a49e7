"""Why a value stands and why a policy's values do not, in one context: typed verdicts.

The fold (policylint.semantics.effective.simulation) decides; this module names the decision
from what the fold recorded (the ordered stack, each facet's role, level and strategy, the
conflicts) so that `explain` renders a verdict and never re-derives one. The rules of the
decision are GEP-713's "Merge strategies" as docs/effective-policy.md#stacking-and-folding
describes them.
"""

from __future__ import annotations

from collections.abc import Sequence

from policylint.semantics.effective.facets import Context, Facet
from policylint.semantics.effective.simulation import why_established
from policylint.values import frozen
from policylint.vocabulary import Atomicity, Role, Term


class Won(Term):
    """Why the winner's value stands where the loser offered one too."""

    CONFLICT = "Conflict"  # strategy None, same target: the established policy is accepted
    ESTABLISHED = "Established"  # same level: the established policy's strategy decides
    OVERRIDE_TOP_DOWN = "OverrideTopDown"  # two overrides: the less specific wins
    OVERRIDE_HOLDS = "OverrideHolds"  # an override against more specific policies
    OVERRIDE_BEATS_DEFAULT = "OverrideBeatsDefault"  # a more specific override over a default
    MORE_SPECIFIC_APPLIES = "MoreSpecificApplies"  # two strategy None policies: no merging across levels
    MORE_SPECIFIC_WINS = "MoreSpecificWins"  # a more specific value over a default
    MERGED = "Merged"  # merged under the established policy's strategy
    # Envoy Gateway: a rule policy with mergeType merged onto the winner, leaving the route's out
    MERGED_PAST_ROUTE = "MergedPastRoute"


class Lost(Term):
    """Why none, or not all, of a policy's values apply."""

    ATOMIC_OVERRIDE_ABOVE = "AtomicOverrideAbove"  # an atomic override established above replaces everything below
    REMOVED = "Removed"  # nothing else set it: a null in a patch deleted it
    STRATEGY_NONE = "StrategyNone"  # strategy None: another policy applies instead
    ATOMIC_DEFAULTS = "AtomicDefaults"  # a more specific policy replaced these atomic defaults whole
    OVERRIDDEN = "Overridden"  # overrides replaced its values
    REPLACED = "Replaced"  # every value it sets is replaced
    # Envoy Gateway: a rule policy with mergeType merges onto the listener's or Gateway's policy,
    # so the route's does not apply to that rule
    SKIPPED_BY_RULE_MERGE = "SkippedByRuleMerge"


@frozen
class WhyWon:
    reason: Won
    winner: Facet
    established: Facet  # the one of the two that comes first in the stack
    order: str = ""  # ESTABLISHED: why it comes first (creationTimestamp, or name)
    conflict: str = ""  # CONFLICT: the fold's account of the conflict


@frozen
class WhyLost:
    reason: Lost
    winners: tuple[Facet, ...] = ()  # facets of other policies that beat it
    owner: Facet | None = None  # ATOMIC_OVERRIDE_ABOVE: the atomic override that replaced it


def why_won(ctx: Context, winner: Facet, loser: Facet) -> WhyWon:
    """Why `winner`'s value stands where `loser` offered one too."""
    conflict = ctx.result.conflicts.get(loser)
    position = {f: i for i, f in enumerate(ctx.stack)}
    established, challenger = (winner, loser) if position[winner] < position[loser] else (loser, winner)
    if conflict is not None:
        return WhyWon(Won.CONFLICT, winner, established, conflict=conflict[1])
    skipping = ctx.result.skipped.get(loser)
    if skipping is not None and winner is not skipping:
        return WhyWon(Won.MERGED_PAST_ROUTE, winner, skipping)
    if winner.rank == loser.rank:
        return WhyWon(Won.ESTABLISHED, winner, established, order=why_established(established, challenger))
    if winner.role is Role.OVERRIDE:
        if loser.role is Role.OVERRIDE:
            return WhyWon(Won.OVERRIDE_TOP_DOWN, winner, established)
        if winner.rank < loser.rank:
            return WhyWon(Won.OVERRIDE_HOLDS, winner, established)
        return WhyWon(Won.OVERRIDE_BEATS_DEFAULT, winner, established)
    if winner.role is Role.NONE and loser.role is Role.NONE:
        return WhyWon(Won.MORE_SPECIFIC_APPLIES, winner, established)
    if winner.rank > loser.rank:
        return WhyWon(Won.MORE_SPECIFIC_WINS, winner, established)
    return WhyWon(Won.MERGED, winner, established)


def why_lost(ctx: Context, loser: Facet, winners: Sequence[Facet]) -> WhyLost:
    """Why `loser`'s values (all, or those not applied) lost to `winners`."""
    position = {f: i for i, f in enumerate(ctx.stack)}
    # An atomic override established above replaces everything below it, the policy's own
    # defaults included (GEP-713 Atomic Overrides; docs/effective-policy.md#decisions).
    for facet in ctx.stack:
        if facet.role is Role.OVERRIDE and facet.atomicity is Atomicity.ATOMIC and position[facet] < position[loser]:
            return WhyLost(Lost.ATOMIC_OVERRIDE_ABOVE, owner=facet)
    skipping = ctx.result.skipped.get(loser)
    if skipping is not None:
        return WhyLost(Lost.SKIPPED_BY_RULE_MERGE, (skipping,))
    others = tuple({w.policy.obj: w for w in winners if w.policy is not loser.policy}.values())
    if not others:
        return WhyLost(Lost.REMOVED)
    if loser.role is Role.NONE:
        return WhyLost(Lost.STRATEGY_NONE, others)
    if loser.atomicity is Atomicity.ATOMIC and loser.role is Role.DEFAULT:
        return WhyLost(Lost.ATOMIC_DEFAULTS, others)
    if all(w.role is Role.OVERRIDE for w in winners):
        return WhyLost(Lost.OVERRIDDEN, others)
    return WhyLost(Lost.REPLACED, others)
