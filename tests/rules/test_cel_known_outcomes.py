"""A node's CEL rules whose outcomes are known and all pass are charged as one sum
(policylint.k8s.celrules `_passing`), exactly as the walk charged them rule by rule."""

from __future__ import annotations

from typing import Any

import pytest

from policylint.k8s import celrules
from policylint.k8s.cel.cost import RUNTIME_BUDGET
from policylint.k8s.fieldtypes import Malformed

# Rules on an item that read only its `n`: items that differ elsewhere (`m`) have one key for them.
_RULES = ["self.n < 3", "self.n >= 0", "!has(self.n) || self.n != 2"]


def _schema(rules: list[str]) -> dict[str, Any]:
    item = {
        "type": "object",
        "properties": {"n": {"type": "integer"}, "m": {"type": "string"}},
        "x-kubernetes-validations": [{"rule": r, "message": f"no: {r}"} for r in rules],
    }
    return {
        "type": "object",
        "properties": {"spec": {"type": "object", "properties": {"items": {"type": "array", "items": item}}}},
    }


def test_the_sum_of_outcomes_that_pass_is_kept_only_for_them() -> None:
    # Worked out by hand: three passes cost 1 + 2 + 3; a failure, an error, a value of the wrong
    # type (None), a negative cost or an outcome missing for a rule is read rule by rule.
    passed = ((True, None, 1), (True, None, 2), (True, None, 3))
    assert celrules._passing(passed, 3) == 6
    assert celrules._PASSING[passed] == 6
    for outcomes in (
        ((True, None, 1), (False, None, 2)),
        ((True, None, 1), (False, celrules.evaluator()[0].EvalError("no such key: x"), 0)),
        ((True, None, 1), None),
        ((True, None, -1), (True, None, 2)),
    ):
        assert celrules._passing(outcomes, 2) == -1
        assert outcomes not in celrules._PASSING  # an error's outcome is not held past its run
    assert celrules._passing(passed, 4) == -1


def test_items_whose_rules_pass_on_what_they_read_are_charged_one_sum_each() -> None:
    schema = _schema(_RULES)
    one = {"spec": {"items": [{"n": 1, "m": "a"}]}}
    _, single = celrules.cel_rejections(one, schema, Malformed(), {}, {})
    assert single > 0
    celrules._PASSING.clear()
    # Three items with one key for the rules (they differ only in `m`, which no rule reads): the
    # first is evaluated, the other two take its outcomes, kept with their sum.
    three = {"spec": {"items": [{"n": 1, "m": "a"}, {"n": 1, "m": "b"}, {"n": 1, "m": "c"}]}}
    rejections, spent = celrules.cel_rejections(three, schema, Malformed(), {}, {})
    assert rejections == ()
    assert spent == 3 * single
    assert list(celrules._PASSING.values()) == [single]


@pytest.mark.parametrize("over", [-2, -1, 0, 1, 2])
@pytest.mark.parametrize("n", [1, 2, 5])
def test_a_sum_taken_at_once_refuses_and_charges_what_the_rules_one_by_one_do(
    monkeypatch: pytest.MonkeyPatch, over: int, n: int
) -> None:
    """The same rejections, cost and stop at the budget's edge whether the known outcomes of a
    node are summed at once or read rule by rule: a second item with the first's outcomes (it
    differs only in `m`) walked where they would take the object's budget `over` units past its
    end, against the same walk with no sum taken. `n` 1 passes every rule, 2 and 5 fail some."""

    def walked(summed: bool) -> tuple[Any, ...]:
        if not summed:
            monkeypatch.setattr(celrules, "_passing", lambda outcomes, count: -1)
        monkeypatch.setattr(celrules, "_PASSING", {})
        schema = _schema(_RULES)
        node = schema["properties"]["spec"]["properties"]["items"]["items"]
        first, second = {"n": n, "m": "a"}, {"n": n, "m": "b"}
        run = celrules._CelRun({"spec": {"items": [first, second]}}, schema, Malformed(), {}, {})
        run._node(first, node, ("spec", "items", 0))
        cost, run.done = run.spent, False
        run.spent = RUNTIME_BUDGET - cost + over
        found = run._node(second, node, ("spec", "items", 1))
        monkeypatch.undo()
        return [(r.path, r.message) for r in found], run.spent, run.done, cost

    summed, one_by_one = walked(True), walked(False)
    assert summed == one_by_one
    if n == 1:
        # Past the budget the rules stop the object (`done`); at its edge or within, they pass.
        assert summed[2] is (over > 0)
