"""Merge strategies over tagged specs (policylint/semantics/effective/merge.py) and the fold that applies them.

- RFC 7386 JSON merge patch: the examples of the RFC's Appendix A, each checked against the
  RFC text (maps merge, arrays and scalars replace, `null` deletes, a non-object patch
  replaces the target whole).
- Rule-keyed merge (policy-machinery's "merge" strategy, Kuadrant's `merge`): scenario S05's
  twelve cases, through `fold` with the strategy dictated by the established source S.
- Provenance: every leaf of a merged spec keeps the source that supplied it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import pytest

from policylint.k8s.objects import ObjectKey
from policylint.profiles.registry import PolicyProfile, profile_from_dict
from policylint.semantics.effective.facets import Facet
from policylint.semantics.effective.fold import fold
from policylint.semantics.effective.merge import (
    Tagged,
    default_containers,
    format_key,
    leaves,
    merge_patch,
    merge_rules,
    tag,
    untag,
)
from policylint.vocabulary import Atomicity, Enforcement, Role

GATEWAY_GROUP = "gateway.networking.k8s.io"


def sources(tree: Tagged | None) -> dict[str, Any]:
    """Dotted key path of every leaf -> its source."""
    return {format_key(path): leaf.source for path, leaf in leaves(tree)}


# ---------------------------------------------------------------------------------------------
# RFC 7386
# ---------------------------------------------------------------------------------------------

# RFC 7386 Appendix A "Example Test Cases": (original, patch, result).
RFC7386_APPENDIX_A = [
    ({"a": "b"}, {"a": "c"}, {"a": "c"}),
    ({"a": "b"}, {"b": "c"}, {"a": "b", "b": "c"}),
    ({"a": "b"}, {"a": None}, {}),
    ({"a": "b", "b": "c"}, {"a": None}, {"b": "c"}),
    ({"a": ["b"]}, {"a": "c"}, {"a": "c"}),
    ({"a": "c"}, {"a": ["b"]}, {"a": ["b"]}),
    ({"a": {"b": "c"}}, {"a": {"b": "d", "c": None}}, {"a": {"b": "d"}}),
    ({"a": [{"b": "c"}]}, {"a": [1]}, {"a": [1]}),
    (["a", "b"], ["c", "d"], ["c", "d"]),
    ({"a": "b"}, ["c"], ["c"]),
    ({"a": "foo"}, None, None),
    ({"a": "foo"}, "bar", "bar"),
    ({"e": None}, {"a": 1}, {"e": None, "a": 1}),
    ([1, 2], {"a": "b", "c": None}, {"a": "b"}),
    ({}, {"a": {"bb": {"ccc": None}}}, {"a": {"bb": {}}}),
]


@pytest.mark.parametrize(
    ("original", "patch", "expected"), RFC7386_APPENDIX_A, ids=[str(i + 1) for i in range(len(RFC7386_APPENDIX_A))]
)
def test_rfc7386_appendix_a(original: Any, patch: Any, expected: Any) -> None:
    assert untag(merge_patch(tag(original, "E"), tag(patch, "C"))) == expected


def test_merge_patch_onto_nothing_drops_nulls() -> None:
    """MergePatch(undefined, patch): the target is not an object, so it starts as {}."""
    assert untag(merge_patch(None, tag({"a": 1, "b": None, "c": {"d": None}}, "C"))) == {"a": 1, "c": {}}


def test_maps_merge_recursively() -> None:
    target = tag({"cdn": {"enabled": True, "cachePolicy": {"includeHost": True, "includeQueryString": True}}}, "gw")
    patch = tag({"cdn": {"cachePolicy": {"includeQueryString": False}}}, "route")
    assert untag(merge_patch(target, patch)) == {
        "cdn": {"enabled": True, "cachePolicy": {"includeHost": True, "includeQueryString": False}}
    }


def test_lists_replace_whole() -> None:
    target = tag({"rates": [{"limit": 3}, {"limit": 10}]}, "E")
    assert untag(merge_patch(target, tag({"rates": [{"limit": 5}]}, "C"))) == {"rates": [{"limit": 5}]}


def test_null_deletes_a_key_and_only_that_key() -> None:
    target = tag({"a": 1, "b": {"c": 2, "d": 3}}, "E")
    assert untag(merge_patch(target, tag({"b": {"c": None}}, "C"))) == {"a": 1, "b": {"d": 3}}
    assert untag(merge_patch(target, tag({"b": None}, "C"))) == {"a": 1}


def test_non_map_patch_replaces_the_target() -> None:
    target = tag({"a": {"b": 1}}, "E")
    assert untag(merge_patch(target, tag({"a": 7}, "C"))) == {"a": 7}
    assert untag(merge_patch(target, tag("scalar", "C"))) == "scalar"


def test_merge_patch_does_not_mutate_its_inputs() -> None:
    target = tag({"a": {"b": 1}, "c": 2}, "E")
    patch = tag({"a": {"b": None, "x": 1}, "c": None}, "C")
    merge_patch(target, patch)
    assert untag(target) == {"a": {"b": 1}, "c": 2}
    assert untag(patch) == {"a": {"b": None, "x": 1}, "c": None}


# -- provenance ------------------------------------------------------------------------------


def test_patch_provenance_per_leaf() -> None:
    """GEP-713 Example 3 on g2 > r4: p3's light over p4's {dark, light}: dark <- p4, light <- p3."""
    merged = merge_patch(tag({"colors": {"dark": "olive", "light": "green"}}, "p4"), tag({"colors": {"light": "yellow"}}, "p3"))
    assert untag(merged) == {"colors": {"dark": "olive", "light": "yellow"}}
    assert sources(merged) == {"colors.dark": "p4", "colors.light": "p3"}


def test_replaced_list_and_empty_map_are_leaves_of_the_patch() -> None:
    merged = merge_patch(tag({"rates": [1, 2], "m": {"k": 1}, "keep": 0}, "E"), tag({"rates": [3], "m": {"k": None}}, "C"))
    # `m` lost its only key: an empty map set by nobody in particular stays the target's map.
    assert untag(merged) == {"rates": [3], "m": {}, "keep": 0}
    assert sources(merged) == {"rates": "C", "m": "E", "keep": "E"}


def test_leaves_of_a_scalar_spec_and_of_nothing() -> None:
    assert list(leaves(None)) == []
    ((path, leaf),) = leaves(tag("x", "S"))
    assert path == () and leaf.source == "S" and format_key(path) == "(whole spec)"


# ---------------------------------------------------------------------------------------------
# Rule-keyed merge
# ---------------------------------------------------------------------------------------------


def test_default_containers_are_the_top_level_maps() -> None:
    spec = tag({"limits": {"a": 1}, "when": [1], "rules": {"r": {}}}, "S")
    assert default_containers(spec, None) == [("limits",), ("rules",)]


def test_rule_is_an_atomic_unit() -> None:
    """Rule-keyed: the winner's rule replaces the loser's rule of the same name whole (no
    field merge inside a rule, unlike RFC 7386); the loser's other rules stay."""
    loser = tag({"rules": {"rule-1": {"color": "blue", "width": 1}, "rule-2": {"color": "red"}}}, "S")
    winner = tag({"rules": {"rule-1": {"color": "yellow"}}}, "T")
    merged = merge_rules(loser, winner, [("rules",)])
    assert untag(merged) == {"rules": {"rule-1": {"color": "yellow"}, "rule-2": {"color": "red"}}}
    assert sources(merged) == {"rules.rule-1.color": "T", "rules.rule-2.color": "S"}
    # RFC 7386 on the same input keeps width: the two strategies differ exactly here.
    assert untag(merge_patch(loser, winner)) == {"rules": {"rule-1": {"color": "yellow", "width": 1}, "rule-2": {"color": "red"}}}


def test_fields_outside_the_containers_are_units() -> None:
    loser = tag({"limits": {"a": 1}, "when": ["x"], "extra": 1}, "L")
    winner = tag({"limits": {"b": 2}, "when": ["y"]}, "W")
    merged = merge_rules(loser, winner, [("limits",)])
    assert untag(merged) == {"limits": {"a": 1, "b": 2}, "when": ["y"], "extra": 1}
    assert sources(merged) == {"limits.a": "L", "limits.b": "W", "when": "W", "extra": "L"}


def test_nested_container_path() -> None:
    loser = tag({"rules": {"authentication": {"jwt": 1, "apikey": 2}}}, "L")
    winner = tag({"rules": {"authentication": {"jwt": 3}}}, "W")
    merged = merge_rules(loser, winner, [("rules", "authentication")])
    assert untag(merged) == {"rules": {"authentication": {"jwt": 3, "apikey": 2}}}


def test_empty_container_is_kept() -> None:
    """`rules: {}` is a value someone set (an empty map is a leaf, as in `leaves`): merging it
    with itself must not drop it; with entries on the other side, the entries are the union."""
    assert untag(merge_rules(tag({"rules": {}}, "L"), tag({"rules": {}}, "W"))) == {"rules": {}}
    assert untag(merge_rules(tag({"rules": {"a": 1}}, "L"), tag({"rules": {}}, "W"))) == {"rules": {"a": 1}}
    merged = merge_rules(tag({"rules": {}}, "L"), tag({"rules": {}}, "W"))
    assert sources(merged) == {"rules": "W"}


def test_merge_rules_without_a_loser_is_the_winner() -> None:
    winner = tag({"rules": {"rule-1": "blue"}}, "W")
    assert untag(merge_rules(None, winner)) == {"rules": {"rule-1": "blue"}}


# ---------------------------------------------------------------------------------------------
# S05: the 12-case matrix through the fold
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class FakeObj:
    creation_timestamp: datetime | None = None


@dataclass(frozen=True, eq=False)
class FakePolicy:
    """What the fold reads of a policy: its key (name, tie-break) and its timestamp."""

    key: ObjectKey
    obj: FakeObj


RULE_KEYED = profile_from_dict(
    {
        "group": "example.com",
        "kind": "ColorPolicy",
        "versions": ["v1"],
        "class": "Inherited",
        "boilerplate": "gep713",
        "targets": {"list": "targetRefs"},
        "merge": {
            "default": "atomic-defaults",
            "defaults": "defaults",
            "overrides": "overrides",
            "strategyField": "strategy",
            "strategies": {"atomic": "atomic", "merge": "custom", "patch": "patch"},
            "custom": "kuadrant-rule-keyed",
            "ruleContainers": ["rules"],
        },
        "effectiveTarget": "route",
    },
    project="test",
    origin="profile",
    source="tests/simulation/test_merge.py",
)


def make_facet(name: str, level: str, role: str, atomicity: str, spec: Mapping[str, Any], *, target: str | None = None) -> Facet:
    key = ObjectKey(GATEWAY_GROUP, "Gateway" if level == "gateway" else "HTTPRoute", "app", target or level)
    policy = FakePolicy(ObjectKey("example.com", "ColorPolicy", "app", name), FakeObj())
    tree = tag(dict(spec), None)
    facet = Facet(policy, (level, key, None), Role(role), Atomicity(atomicity), tree, "spec")  # type: ignore[arg-type]
    _point(tree, facet)  # every value remembers the facet that supplied it
    return facet


def _point(node: Tagged, source: Facet) -> None:
    node.source = source
    for child in (node.children or {}).values():
        _point(child, source)


S = {"rules": {"rule-1": "blue", "rule-2": "red"}}
TARGETS = {
    "none": None,
    "3": {"rules": {"rule-3": "green"}},
    "13": {"rules": {"rule-1": "yellow", "rule-3": "green"}},
}
# (S's role, S's atomicity) -> expected per target, exactly the table of acceptance scenario S05
# (policy-machinery examples/color_policy/color_policy_test.go; docs/semantics.md#acceptance-scenarios).
S05 = {
    ("default", "atomic"): {
        "none": {"rule-1": "blue", "rule-2": "red"},
        "3": {"rule-3": "green"},
        "13": {"rule-1": "yellow", "rule-3": "green"},
    },
    ("override", "atomic"): {
        "none": {"rule-1": "blue", "rule-2": "red"},
        "3": {"rule-1": "blue", "rule-2": "red"},
        "13": {"rule-1": "blue", "rule-2": "red"},
    },
    ("default", "rules"): {
        "none": {"rule-1": "blue", "rule-2": "red"},
        "3": {"rule-1": "blue", "rule-2": "red", "rule-3": "green"},
        "13": {"rule-1": "yellow", "rule-2": "red", "rule-3": "green"},
    },
    ("override", "rules"): {
        "none": {"rule-1": "blue", "rule-2": "red"},
        "3": {"rule-1": "blue", "rule-2": "red", "rule-3": "green"},
        "13": {"rule-1": "blue", "rule-2": "red", "rule-3": "green"},
    },
}
CASES = [(role, atom, column) for (role, atom) in S05 for column in TARGETS]


def s05_fold(role: str, atomicity: str, column: str) -> tuple[Any, Facet, Facet | None, Any]:
    source = make_facet("s", "gateway", role, atomicity, S)
    spec = TARGETS[column]
    target = make_facet("t", "route", "default", "atomic", spec) if spec is not None else None
    stack = [source] + ([target] if target is not None else [])
    result = fold(stack, RULE_KEYED)
    return untag(result.tree)["rules"], source, target, result


@pytest.mark.parametrize(("role", "atomicity", "column"), CASES, ids=[f"{r}-{a}-target-{c}" for r, a, c in CASES])
def test_s05_rule_keyed_matrix(role: str, atomicity: str, column: str) -> None:
    """S = {rule-1: blue, rule-2: red} is attached higher, so it is established and dictates
    the strategy (GEP-713); the target is the more specific policy (plain spec)."""
    got, *_ = s05_fold(role, atomicity, column)
    assert got == S05[(role, atomicity)][column]


@pytest.mark.parametrize(("role", "atomicity", "column"), [c for c in CASES if c[1] == "rules"], ids=lambda v: str(v))
def test_s05_json_patch_variant_gives_the_merge_rows(role: str, atomicity: str, column: str) -> None:
    """S05's JSON-patch variant (policy-machinery examples/json_patch/color_policy_test.go) uses the
    same cases with maps and RFC 7386, and gives the 'merge' rows for both defaults and overrides
    (every rule here is a scalar)."""
    got, *_ = s05_fold(role, "patch", column)
    assert got == S05[(role, atomicity)][column]


def test_s05_provenance_and_status_merge_defaults() -> None:
    """Merge defaults with target {rule-1: yellow, rule-3: green}: rule-1 and rule-3 from the
    target, rule-2 from S; S loses rule-1, so it is PartiallyEnforced and the target Enforced."""
    _, source, target, result = s05_fold("default", "rules", "13")
    assert target is not None
    assert {k: v.policy.key.name for k, v in sources(result.tree).items()} == {
        "rules.rule-1": "t",
        "rules.rule-2": "s",
        "rules.rule-3": "t",
    }
    assert result.status[source] == Enforcement.PARTIALLY_ENFORCED
    assert result.status[target] == Enforcement.ENFORCED
    assert result.beaten_by[source] == {"app/t"}


def test_s05_status_merge_overrides() -> None:
    _, source, target, result = s05_fold("override", "rules", "13")
    assert target is not None
    assert result.status[source] == Enforcement.ENFORCED
    assert result.status[target] == Enforcement.PARTIALLY_ENFORCED
    assert result.beaten_by[target] == {"app/s"}


def test_s05_status_atomic() -> None:
    _, source, target, result = s05_fold("default", "atomic", "3")
    assert (
        result.status[source] == Enforcement.OVERRIDDEN and target is not None and result.status[target] == Enforcement.ENFORCED
    )
    _, source, target, result = s05_fold("override", "atomic", "3")
    assert (
        result.status[source] == Enforcement.ENFORCED and target is not None and result.status[target] == Enforcement.OVERRIDDEN
    )
    assert result.beaten_by[target] == {"app/s"}


def test_s05_source_alone_is_enforced_whatever_its_strategy() -> None:
    for role, atomicity in S05:
        _, source, _, result = s05_fold(role, atomicity, "none")
        assert result.status[source] == Enforcement.ENFORCED


def test_rule_keyed_profile_fixture_is_what_it_says() -> None:
    assert isinstance(RULE_KEYED, PolicyProfile)
    assert RULE_KEYED.merge.rule_containers == ("rules",)
