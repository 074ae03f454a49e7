"""The fold's verdicts (policylint.semantics.effective.verdicts): every reason a value wins or a
policy's values lose, on hand-built stacks, and `explain`'s words for each.

Expected reasons follow GEP-713 "Merge strategies" as docs/effective-policy.md#stacking-and-folding
states them: overrides are enforced from the top down, defaults from the bottom up, strategy None
does not merge across levels, and at one level the established (older) policy's strategy decides.
"""

from __future__ import annotations

from datetime import datetime, timezone
from types import SimpleNamespace
from typing import Any

import pytest

from policylint.commands.explain import lost_text, won_text
from policylint.k8s.objects import ObjectKey
from policylint.semantics.effective.facets import Context, Facet, FoldResult
from policylint.semantics.effective.merge import tag
from policylint.semantics.effective.verdicts import Lost, Won, why_lost, why_won
from policylint.vocabulary import Atomicity, Role

GATEWAY: Any = ("gateway", ObjectKey("gateway.networking.k8s.io", "Gateway", "infra", "gw"), None)
ROUTE: Any = ("route", ObjectKey("gateway.networking.k8s.io", "HTTPRoute", "app", "r"), None)


class _Object:
    """A policy's object as the verdicts read it: its creationTimestamp, keyed by identity as K8sObject is."""

    def __init__(self, created: datetime) -> None:
        self.creation_timestamp = created


def facet(name: str, node: Any, role: Role, atomicity: Atomicity = Atomicity.PATCH, *, created: int = 1) -> Facet:
    obj = _Object(datetime(2026, 1, created, tzinfo=timezone.utc))
    policy: Any = SimpleNamespace(key=ObjectKey("example.io", "ColorPolicy", "ns", name), obj=obj)
    return Facet(policy, node, role, atomicity, tag({"color": name}, None), "spec.defaults")


def context(*stack: Facet, conflicts: dict[Facet, tuple[Facet, str]] | None = None) -> Context:
    result = FoldResult(None, {}, {}, conflicts or {})
    profile: Any = None
    return Context(profile, (GATEWAY, ROUTE), stack, result)


def test_same_level_the_established_policy_decides() -> None:
    old, new = facet("old", ROUTE, Role.DEFAULT, created=1), facet("new", ROUTE, Role.DEFAULT, created=2)
    why = why_won(context(old, new), new, old)
    assert why.reason is Won.ESTABLISHED and why.established is old
    assert why.order == "older: 2026-01-01T00:00:00Z < 2026-01-02T00:00:00Z"
    assert won_text(why) == (
        "same level: ns/old is established (older: 2026-01-01T00:00:00Z < 2026-01-02T00:00:00Z);"
        " under its Patch Defaults, ns/new's value stands"
    )


@pytest.mark.parametrize(
    ("winner_role", "winner_node", "loser_role", "loser_node", "reason", "text"),
    [
        (
            Role.OVERRIDE,
            GATEWAY,
            Role.OVERRIDE,
            ROUTE,
            Won.OVERRIDE_TOP_DOWN,
            "the less specific override wins (overrides are enforced from the top down)",
        ),
        (Role.OVERRIDE, GATEWAY, Role.DEFAULT, ROUTE, Won.OVERRIDE_HOLDS, "an override holds against more specific policies"),
        (Role.OVERRIDE, ROUTE, Role.DEFAULT, GATEWAY, Won.OVERRIDE_BEATS_DEFAULT, "an override beats a default"),
        (
            Role.NONE,
            ROUTE,
            Role.NONE,
            GATEWAY,
            Won.MORE_SPECIFIC_APPLIES,
            "the more specific policy applies (strategy None: no merging across levels)",
        ),
        (Role.DEFAULT, ROUTE, Role.DEFAULT, GATEWAY, Won.MORE_SPECIFIC_WINS, "the more specific policy wins over Patch Defaults"),
        (Role.DEFAULT, GATEWAY, Role.DEFAULT, ROUTE, Won.MERGED, "merged by Patch Defaults of ns/w"),
    ],
)
def test_across_levels(winner_role: Role, winner_node: Any, loser_role: Role, loser_node: Any, reason: Won, text: str) -> None:
    winner, loser = facet("w", winner_node, winner_role), facet("l", loser_node, loser_role)
    stack = sorted((winner, loser), key=lambda f: f.rank)  # least specific first, as the fold orders it
    why = why_won(context(*stack), winner, loser)
    assert why.reason is reason
    assert won_text(why) == text


def test_a_conflict_is_reported_with_the_folds_account() -> None:
    a, b = facet("a", ROUTE, Role.NONE, created=1), facet("b", ROUTE, Role.NONE, created=2)
    why = why_won(context(a, b, conflicts={b: (a, "ns/a is older")}), a, b)
    assert why.reason is Won.CONFLICT
    assert won_text(why) == "conflict, strategy None: ns/a is older"


def test_an_atomic_override_above_replaces_everything_below_even_the_policys_own_defaults() -> None:
    override = facet("p", GATEWAY, Role.OVERRIDE, Atomicity.ATOMIC)
    own_default = Facet(override.policy, GATEWAY, Role.DEFAULT, Atomicity.PATCH, tag({}, None), "spec.defaults")
    why = why_lost(context(override, own_default), own_default, [])
    assert why.reason is Lost.ATOMIC_OVERRIDE_ABOVE and why.owner is override
    assert lost_text(why, own_default) == "the policy's own Atomic Overrides (spec.defaults) replace the whole spec below them"
    other = facet("q", ROUTE, Role.DEFAULT)
    assert lost_text(why_lost(context(override, other), other, [override]), other).startswith("the ns/p Atomic Overrides")


@pytest.mark.parametrize(
    ("loser_role", "loser_atomicity", "winner_role", "reason", "text"),
    [
        (Role.NONE, Atomicity.ATOMIC, Role.NONE, Lost.STRATEGY_NONE, "strategy None: ns/w applies instead"),
        (Role.DEFAULT, Atomicity.ATOMIC, Role.DEFAULT, Lost.ATOMIC_DEFAULTS, "Atomic Defaults: ns/w replaced this spec whole"),
        (Role.DEFAULT, Atomicity.PATCH, Role.OVERRIDE, Lost.OVERRIDDEN, "overridden by ns/w"),
        (Role.DEFAULT, Atomicity.PATCH, Role.DEFAULT, Lost.REPLACED, "every value it sets is replaced by ns/w"),
    ],
)
def test_why_a_policys_values_lose(
    loser_role: Role, loser_atomicity: Atomicity, winner_role: Role, reason: Lost, text: str
) -> None:
    loser, winner = facet("l", GATEWAY, loser_role, loser_atomicity), facet("w", ROUTE, winner_role)
    why = why_lost(context(loser, winner), loser, [winner])
    assert why.reason is reason and why.winners == (winner,)
    assert lost_text(why, loser) == text


def test_lost_to_nothing_else_is_a_removal() -> None:
    loser = facet("l", GATEWAY, Role.DEFAULT)
    why = why_lost(context(loser), loser, [])
    assert why.reason is Lost.REMOVED
    assert lost_text(why, loser) == "removed while merging (a null in a patch deletes a field)"
