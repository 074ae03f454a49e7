"""A rule's units kept with the answers they read (policylint.incremental.units), on a project
whose stages are stand-ins: a unit is taken while it and every answer it read are the same
objects, and run otherwise."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any, cast

from policylint.findings import Issue
from policylint.incremental.units import KeptUnits
from policylint.k8s.objects import K8sObject
from policylint.project import Project
from policylint.rules.base import UnitRule
from policylint.stages import Stage
from policylint.values import frozen


@frozen
class Answer:
    value: int


class Stage_:
    """A stand-in for the topology: a method, a table, an attribute."""

    def __init__(self, answers: dict[str, object]) -> None:
        self.answers = answers
        self.table = dict(answers)

    def answer(self, unit: str) -> object:
        return self.answers[unit]

    def each(self, unit: str) -> Iterator[object]:
        yield self.answers[unit]
        yield unit


class Stub:
    """The parts of a project the view reads."""

    def __init__(self, stage: Stage_, units: list[str]) -> None:
        self.stage = stage
        self.unit_names = units
        self.index = self
        self.resolution = self
        self.extra = "not a stage"

    def topology(self) -> Stage_:
        return self.stage

    def has_stage(self, stage: Stage) -> bool:
        return stage is Stage.TOPOLOGY


class Reads(UnitRule[str]):
    """Each unit's issue says what the stand-in answered for it, read in the way `how` says."""

    id = "PL999"
    name = "test-units"

    def __init__(self, how: str) -> None:
        super().__init__()
        self.how = how
        self.checked: list[str] = []

    def units(self, project: Project) -> Iterable[str]:
        return cast("Stub", project).unit_names

    def check_unit(self, project: Project, unit: str) -> Iterator[Issue]:
        self.checked.append(unit)
        topology: Any = project.topology()
        if self.how == "method":
            found = topology.answer(unit)
        elif self.how == "table":
            found = topology.table.get(unit)
        elif self.how == "item":
            try:
                found = topology.table[unit]
            except KeyError:
                found = None
        elif self.how == "generator":
            found = next(topology.each(unit))
        elif self.how == "attribute":
            found = cast("Any", project).extra
        else:  # a view of the stage handed to the stage (which is given the stage itself)
            found = topology.table.get(topology, "the stage") if unit == "never" else topology.answer(unit)
        yield Issue(self.id, repr(found), cast("K8sObject", None), unit)


def _run(kept: KeptUnits, rule: Reads, stub: Stub) -> list[str]:
    rule.checked = []
    kept.begin(("context",))
    issues = kept.issues(rule, cast("Project", stub))
    kept.finish()
    return [issue.message for issue in issues]


def _checked(how: str, before: dict[str, object], after: dict[str, object]) -> tuple[list[str], list[str]]:
    """The units checked in a second run whose stand-in answers `after`, and what it found."""
    units = list(before)
    kept, rule = KeptUnits(), Reads(how)
    _run(kept, rule, Stub(Stage_(before), units))
    found = _run(kept, rule, Stub(Stage_(after), units))
    return rule.checked, found


def test_a_unit_whose_answers_are_the_same_objects_is_taken() -> None:
    same, other = Answer(1), Answer(2)
    checked, found = _checked("method", {"a": same, "b": other}, {"a": same, "b": Answer(2)})
    # `b`'s answer is equal but another object: run again (identity, never equality).
    assert checked == ["b"]
    assert found == ["Answer(value=1)", "Answer(value=2)"]


def test_plain_answers_are_compared_by_type_and_value() -> None:
    checked, found = _checked("method", {"a": 1, "b": 1, "c": (1, "x"), "d": [1]}, {"a": 1, "b": True, "c": (1, "x"), "d": [2]})
    assert checked == ["b", "d"]
    assert found == ["1", "True", "(1, 'x')", "[2]"]


def test_an_answer_of_a_table_read_through_is_asked_again() -> None:
    one, two = Answer(1), Answer(2)
    checked, found = _checked("table", {"a": one, "b": two}, {"a": one, "b": one})
    assert checked == ["b"]
    assert found == ["Answer(value=1)", "Answer(value=1)"]


def test_a_generator_is_read_by_its_items() -> None:
    one = Answer(1)
    checked, found = _checked("generator", {"a": one, "b": one}, {"a": one, "b": Answer(1)})
    assert checked == ["b"]
    assert found == ["Answer(value=1)", "Answer(value=1)"]


def test_a_unit_that_read_what_the_view_cannot_ask_again_runs_every_time() -> None:
    checked, _ = _checked("attribute", {"a": 1}, {"a": 1})
    assert checked == ["a"]
    answer = Answer(1)
    checked, found = _checked("argument", {"a": answer, "never": answer}, {"a": answer, "never": answer})
    assert checked == ["never"]
    assert found == ["Answer(value=1)", "'the stage'"]


def test_a_question_that_fails_when_asked_again_runs_the_unit() -> None:
    """`b`'s answer was an item of a table that no longer holds it: asking again raises, and the
    unit runs (and finds nothing in the table)."""
    one = Answer(1)
    kept, rule = KeptUnits(), Reads("item")
    _run(kept, rule, Stub(Stage_({"a": one, "b": one}), ["a", "b"]))
    found = _run(kept, rule, Stub(Stage_({"a": one}), ["a", "b"]))
    assert rule.checked == ["b"]
    assert found == ["Answer(value=1)", "None"]


def test_another_context_takes_nothing() -> None:
    kept, rule = KeptUnits(), Reads("method")
    stub = Stub(Stage_({"a": 1}), ["a"])
    _run(kept, rule, stub)
    rule.checked = []
    kept.begin(("another context",))
    kept.issues(rule, cast("Project", stub))
    assert rule.checked == ["a"]
