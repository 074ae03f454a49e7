"""What the rules' keys do per value, counted (policylint.k8s.cel.projection), and the verdict
record objects that refuse and prune nothing share (policylint.k8s.verdicts `admission_record`).
Expected counts and keys are worked out by hand from the schemas and values written here."""

from __future__ import annotations

import sys
from typing import Any

from policylint.k8s.cel import node_rules, rules_key
from policylint.k8s.cel.projection import _ABSENT, merged, project
from policylint.k8s.verdicts import Admission, Check, Rejection, admission_record

_ROUTE_RULES = {
    "type": "array",
    "items": {
        "type": "object",
        "properties": {"name": {"type": "string"}, "matches": {"type": "array", "items": {"type": "object"}}},
    },
    "x-kubernetes-validations": [
        {"rule": "self.all(r, r.matches.size() <= 8)"},
        {"rule": "self.all(r, !has(r.name) || r.name != '')"},
    ],
}


def test_a_list_read_for_its_size_is_keyed_in_its_maps_loop() -> None:
    # A route's rules, keyed by what the two rules read together: each rule's matches read for
    # their size, its name compared for equality. The value's projector, the list's and one call
    # per item, the map's; the size of each item's matches taken in the map's loop, where it was
    # two calls more per item (the projector of the field, then of the list it holds).
    rules = node_rules(_ROUTE_RULES)
    value = [{"name": "a", "matches": [{}, {}]}, {"matches": [{}]}, {"name": "a", "matches": []}]
    calls: list[str] = []

    def counting(frame: Any, event: str, arg: Any) -> None:
        if event == "call" and frame.f_code.co_filename.endswith("projection.py"):
            calls.append(frame.f_code.co_name)

    rules_key(rules, value, {}, _ROUTE_RULES)  # the node's projector made on its first value
    sys.setprofile(counting)
    try:
        key = rules_key(rules, value, {}, _ROUTE_RULES)
    finally:
        sys.setprofile(None)
    assert calls == ["project_", "project_list", "project_map", "project_map", "project_map"]
    # The key is `project`'s, strings numbered after the literal '' (0): "a" is 1, twice.
    need = merged([compiled.need for _, compiled in rules if compiled.need is not None])
    from policylint.k8s.cel import program
    from policylint.k8s.cel.convert import _info

    expected = project(value, need, {}, program.shape, {"": 0}, _info(_ROUTE_RULES))
    assert key is not None and key[1] == expected
    parts = [item[1:] for item in expected[1:]]  # per item: its matches' part, its name's
    assert [part[0][1] for part in parts] == [2, 1, 0]
    assert [part[1] for part in parts] == [1, _ABSENT, 1]


def test_verdicts_that_refuse_and_prune_nothing_share_one_record_per_source() -> None:
    plain = admission_record((), (), "gateway-api v1.6.1", False, [])
    assert admission_record((), (), "gateway-api v1.6.1", False, []) is plain
    assert plain == Admission((), (), "gateway-api v1.6.1", False, ())
    assert admission_record((), (), "gateway-api v1.5.1", False, []) is not plain
    assert admission_record((), (), None, True, []) == Admission((), (), None, True)
    pruned = [(("spec",), "x", ["a"])]
    own = admission_record((), (), "gateway-api v1.6.1", False, pruned)
    assert own is not plain and own.pruned == ((("spec",), "x", ["a"]),)
    refusal = (Rejection(Check.SCHEMA, ("spec",), "spec", "is wrong", "FieldValueInvalid"),)
    refused = admission_record(refusal, (), "gateway-api v1.6.1", False, [])
    assert refused.rejected and refused is not plain
