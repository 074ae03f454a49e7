"""How the contexts of one folded stack count into each policy's standing on each target
(`TargetStatus`): the policy's facets there combined into one status per context, each state
tallied by the number of contexts sharing the stack (policylint.semantics.effective.simulation)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator, Sequence
from collections.abc import Set as AbstractSet
from typing import TYPE_CHECKING

from policylint.k8s.objects import K8sObject
from policylint.semantics.effective.facets import Facet, FoldResult, NodeKey, T, TargetStatus
from policylint.vocabulary import Enforcement

if TYPE_CHECKING:
    from policylint.semantics.effective.walkplan import _StackGroup

# The states in which a policy's values are in force in a context: it reaches what it contributes to.
CONTRIBUTES = (Enforcement.ENFORCED, Enforcement.PARTIALLY_ENFORCED)


def grow(have: frozenset[T], more: AbstractSet[T] | None) -> frozenset[T]:
    """`have` with `more`: `have` itself when nothing is new (no copy per context group)."""
    if not more or more <= have:
        return have
    return have | more


def count_state(entry: TargetStatus, group: _StackGroup, facets: Sequence[Facet], state: Enforcement) -> None:
    """Count the contexts of one stack where a policy's facets on a target stand in `state`."""
    result = group.result
    entry.contexts += group.count
    if state == Enforcement.CONFLICTED:
        entry.conflicted += group.count
        entry.conflict = next(result.conflicts[f] for f in facets if f in result.conflicts)
    elif state == Enforcement.ENFORCED:
        entry.enforced += group.count
    elif state == Enforcement.OVERRIDDEN:
        entry.overridden += group.count
    else:
        entry.partial += group.count
    if state in (Enforcement.OVERRIDDEN, Enforcement.PARTIALLY_ENFORCED):
        for example in group.examples:
            if len(entry.overridden_in) < 3 and example not in entry.overridden_in:
                entry.overridden_in = (*entry.overridden_in, example)
    for facet in facets:
        entry.beaten_by = grow(entry.beaten_by, result.beaten_by.get(facet))
        entry.merged_with = grow(entry.merged_with, result.merged_with.get(facet))
    if state in (Enforcement.OVERRIDDEN, Enforcement.PARTIALLY_ENFORCED) and all(
        f in result.merged_only or result.status[f] == Enforcement.ENFORCED for f in facets
    ):
        entry.merged_away += group.count


def target_states(
    stack: Sequence[Facet], result: FoldResult
) -> Iterator[tuple[tuple[K8sObject, NodeKey], tuple[list[Facet], Enforcement]]]:
    """Each (policy object, target node) of a folded stack, with its facets there and its
    status in the stack's contexts. A policy with two blocks (policy-attachment style, or PL107)
    has two facets in one context: its status there combines them, and the context counts once."""
    by_target: dict[tuple[K8sObject, NodeKey], list[Facet]] = defaultdict(list)
    for facet in stack:
        by_target[(facet.policy.obj, facet.node)].append(facet)
    status = result.status
    for target, facets in by_target.items():
        # One facet on the target (a policy with one block, nearly all): its status is the policy's.
        yield target, (facets, status[facets[0]] if len(facets) == 1 else combined_status([status[f] for f in facets]))


def combined_status(states: Sequence[Enforcement]) -> Enforcement:
    """The status of one policy in one context from the statuses of its facets there."""
    live = [s for s in states if s != Enforcement.CONFLICTED]
    if not live:
        return Enforcement.CONFLICTED
    if all(s == Enforcement.ENFORCED for s in live):
        return Enforcement.ENFORCED
    if all(s == Enforcement.OVERRIDDEN for s in live):
        return Enforcement.OVERRIDDEN
    return Enforcement.PARTIALLY_ENFORCED
