"""What a rule over the whole project found per unit, reused while every answer the unit read is
the same object.

A rule over the whole project that declares its unit (`UnitRule`, policylint.rules.base: a
policy, an object, a Gateway, whatever it iterates; `PerPolicy` for the policy) finds on each unit
what `check_unit` finds, independently of the other units. In a long-lived process (a language
server) each unit's check runs over a view of the project (`_Recording`) that writes down every
answer it asks of the stages: the index, the resolution, the admissions, the topology, the
simulation and the `derived` lookups, each as the path it was asked by (a method and its
arguments, an attribute, an item, a membership) and the answer. The next run takes a unit's
issues when the unit is the same object as in the last run and, asked again in order, every
answer is the same object (`is`; plain values by type and value; lists and tuples item by item),
and runs the unit otherwise.

Why that is exact: a unit's issues are a function of the unit, the rule's options and the run's
context (both in `KeptUnits.begin`'s stamp), and what it read. The unit and every answer being
the very objects of the last run, and those being immutable (`@frozen` values, `K8sObject`s,
plain values and tuples of them: an answer of any other type, a lookup table or a part of a
stage, is not compared but read through, its own answers written down), every value the check
computed from them is what it computed then, including the arguments of its later questions,
which are asked again with those same objects. The stages hand back what an edit did not reach
as the same instances (the topology per route and Gateway, policylint.semantics.topology.kept;
the simulation's folds and walks, policylint.semantics.effective.folds and walks; the policies
built of the same objects), so after an edit most units' answers are found the same at the cost
of asking again, and only the units the edit reached run. A unit that read anything the view
does not know (another attribute of the project, a view of a stage handed to a stage as an
argument) is not kept: it runs every time.
"""

from __future__ import annotations

import enum
import types
from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING, Any, cast

from policylint.identity import IdentityMap
from policylint.values import is_frozen

if TYPE_CHECKING:
    from policylint.findings import Issue
    from policylint.project import Project
    from policylint.rules.base import UnitRule
    from policylint.stages import Stage

# One step of a path from a stage to an answer: ("a", name) an attribute, ("c", name, args,
# kwargs) a method called, ("i", key) an item, ("in", key) a membership, ("it",) the items in
# order, ("n",) the length, ("b",) the truth.
Step = tuple[Any, ...]
# A root (a stage's name, or the function a `derived` lookup is built by), the steps from it, the answer.
Read = tuple[object, tuple[Step, ...], object]

_PLAIN = (str, int, float, bool, bytes, type(None))
# Per type: whether its instances are answers compared as they are (True) or read through (False).
_KINDS: dict[type, bool] = {}


def _is_answer(value: object) -> bool:
    kind = type(value)
    found = _KINDS.get(kind)
    if found is None:
        found = _KINDS[kind] = (
            kind in _PLAIN
            or issubclass(kind, (tuple, list, frozenset, set, enum.Enum, type, types.FunctionType, types.BuiltinFunctionType))
            or is_frozen(kind)
        )
    return found


def _same(old: object, new: object) -> bool:
    """Whether `new` is what `old` was: the same object, a plain value of the same type and value,
    or lists, tuples and sets whose items are."""
    if old is new:
        return True
    kind = type(old)
    if kind is not type(new):
        return False
    if kind in _PLAIN:
        return old == new
    if isinstance(old, (tuple, list)):
        items = cast("tuple[object, ...]", new)
        return len(old) == len(items) and all(_same(a, b) for a, b in zip(old, items))
    if isinstance(old, (set, frozenset)):
        # Sets of plain values or of objects that hash by identity: equality is sameness then.
        other = cast("frozenset[object]", new)
        return len(old) == len(other) and all(_hashes_plainly(item) for item in old) and old == other
    return False


def _hashes_plainly(item: object) -> bool:
    kind = type(item)
    if kind in _PLAIN or kind.__hash__ is object.__hash__:
        return True
    return isinstance(item, tuple) and all(_hashes_plainly(part) for part in item)


class _Log:
    """What one unit's check read: `reads` in order; `whole` false once it read something this
    view cannot ask again."""

    __slots__ = ("reads", "whole")

    def __init__(self) -> None:
        self.reads: list[Read] = []
        self.whole = True

    def take(self) -> list[Read] | None:
        """What the unit read (None: something not asked again), and a fresh start for the next."""
        reads = self.reads if self.whole else None
        self.reads, self.whole = [], True
        return reads


class _Through:
    """A stage, or what a stage answered with that is not an answer compared as it is (a lookup
    table, a part of the stage, an iterator), read through: each answer it gives is written down
    with the path it was asked by. It passes for its target's class (`isinstance`)."""

    __slots__ = ("_log", "_methods", "_path", "_root", "_target")

    def __init__(self, target: object, root: object, path: tuple[Step, ...], log: _Log) -> None:
        self._target = target
        self._root = root
        self._path = path
        self._log = log
        # A stage's methods, made once for every unit of a rule (`_Recording` is reused).
        self._methods: dict[str, _Method] | None = {} if not path else None

    @property  # type: ignore[misc]
    def __class__(self) -> type:  # what `isinstance` asks once the type itself is not the class
        return type(self._target)

    def _answer(self, step: Step, value: object) -> Any:
        path = (*self._path, step)
        if _is_answer(value):
            self._log.reads.append((self._root, path, value))
            return value
        if isinstance(value, Iterator):
            # A generator a method answered with: its items are the answer (asked again, the
            # method gives a new one, whose items are compared).
            items = list(value)
            self._log.reads.append((self._root, (*path, ("it",)), items))
            return iter(items)
        return _Through(value, self._root, path, self._log)

    def __getattr__(self, name: str) -> Any:
        methods = self._methods
        if methods is not None:
            found = methods.get(name)
            if found is not None:
                return found
        value = getattr(self._target, name)
        if callable(value) and not isinstance(value, type):
            # A method (or a function a stage holds): what it answers is read, per call.
            method = _Method(value, self, name)
            if methods is not None:
                methods[name] = method
            return method
        return self._answer(("a", name), value)

    def __getitem__(self, key: object) -> Any:
        key = _argument(key, self._log)
        return self._answer(("i", key), cast("Any", self._target)[key])

    def __contains__(self, key: object) -> bool:
        key = _argument(key, self._log)
        found = key in cast("Any", self._target)
        self._log.reads.append((self._root, (*self._path, ("in", key)), found))
        return found

    def __iter__(self) -> Iterator[Any]:
        items = list(cast("Iterable[object]", self._target))
        self._log.reads.append((self._root, (*self._path, ("it",)), items))
        return iter(items)

    def __len__(self) -> int:
        n = len(cast("Any", self._target))
        self._log.reads.append((self._root, (*self._path, ("n",)), n))
        return n

    def __bool__(self) -> bool:
        truth = bool(self._target)
        self._log.reads.append((self._root, (*self._path, ("b",)), truth))
        return truth


class _Method:
    """A method of something read through: each call is written down with its arguments."""

    __slots__ = ("_function", "_name", "_owner")

    def __init__(self, function: Callable[..., Any], owner: _Through, name: str) -> None:
        self._function = function
        self._owner = owner
        self._name = name

    def __call__(self, *args: object, **kwargs: object) -> Any:
        owner = self._owner
        for value in (*args, *kwargs.values()) if kwargs else args:
            if type(value) is _Through or type(value) is _Method:
                # A view of this run's stage cannot be asked again in the next run, whose stages
                # are others, and what the stage reads of it is not written down: the check is
                # not kept. The stage is given what the view stands for, as without a view.
                owner._log.whole = False
                args = tuple(_unwrapped(a) for a in args)
                kwargs = {k: _unwrapped(v) for k, v in kwargs.items()}
                break
        step = ("c", self._name, args, tuple(kwargs.items()) if kwargs else ())
        return owner._answer(step, self._function(*args, **kwargs))


def _unwrapped(value: object) -> object:
    if isinstance(value, _Through):
        return value._target
    if isinstance(value, _Method):
        return value._function
    return value


def _argument(value: object, log: _Log) -> object:
    """A key as written down: a view of this run's stage cannot be asked again (see `_Method`)."""
    if type(value) is _Through or type(value) is _Method:
        log.whole = False
        return _unwrapped(value)
    return value


class _Recording:
    """The project as one unit's check reads it, writing down each answer of the stages."""

    def __init__(self, project: Project, log: _Log) -> None:
        self._project = project
        self._log = log
        self._stages: dict[str, _Through] = {}

    def _stage(self, name: str) -> _Through:
        found = self._stages.get(name)
        if found is None:
            found = self._stages[name] = _Through(_root(self._project, name), name, (), self._log)
        return found

    @property
    def index(self) -> Any:
        return self._stage("index")

    @property
    def resolution(self) -> Any:
        return self._stage("resolution")

    def admissions(self) -> Any:
        return self._stage("admissions")

    def topology(self) -> Any:
        return self._stage("topology")

    def simulation(self) -> Any:
        return self._stage("simulation")

    def derived(self, compute: Callable[[Project], Any]) -> Any:
        value = self._project.derived(compute)
        if _is_answer(value):
            self._log.reads.append((compute, (), value))
            return value
        return _Through(value, compute, (), self._log)

    def has_stage(self, stage: Stage) -> bool:
        return self._project.has_stage(stage)  # the stages built are the run's: in the stamp

    def __getattr__(self, name: str) -> Any:
        self._log.whole = False  # something this view does not know how to ask again
        return getattr(self._project, name)


def _root(project: Project, root: object) -> object:
    if root == "index":
        return project.index
    if root == "resolution":
        return project.resolution
    if root == "admissions":
        return project.admissions()
    if root == "topology":
        return project.topology()
    if root == "simulation":
        return project.simulation()
    return project.derived(cast("Callable[[Project], object]", root))


def _step(value: Any, step: Step) -> object:
    kind = step[0]
    if kind == "a":
        return getattr(value, step[1])
    if kind == "c":
        return getattr(value, step[1])(*step[2], **dict(step[3]))
    if kind == "i":
        return value[step[1]]
    if kind == "in":
        return step[1] in value
    if kind == "it":
        return list(value)
    if kind == "n":
        return len(value)
    return bool(value)


def holds(project: Project, reads: list[Read]) -> bool:
    """Whether every answer of `reads`, asked again in order of this run's stages, is the same."""
    roots: dict[object, object] = {}
    try:
        for root, path, old in reads:
            value = roots.get(root)
            if value is None:
                value = roots[root] = _root(project, root)
            for step in path:
                value = _step(value, step)
            if not _same(old, value):
                return False
    except Exception:
        # A question asked of what is not there any more (a key of a table this run does not
        # hold): the unit runs, and only a failure of its own check is the rule's (PL000).
        return False
    return True


class KeptUnits:
    """Each unit rule's units of the last run, with what each read and found (per process)."""

    def __init__(self) -> None:
        self._stamp: tuple[object, ...] | None = None
        self._units: dict[str, IdentityMap[object, tuple[list[Read], list[Issue]]]] = {}
        self._next: dict[str, IdentityMap[object, tuple[list[Read], list[Issue]]]] = {}
        # What the last run did, for the tests: units answered from what was kept, units run.
        self.reused = 0
        self.ran = 0

    def begin(self, stamp: tuple[object, ...]) -> None:
        """A run with `stamp` (its context and the stages built) starts: what the last run kept
        holds for it only if that had the same."""
        if stamp != self._stamp:
            self._units = {}
        self._stamp = stamp
        self._next = {}
        self.reused = self.ran = 0

    def carry(self, rule_id: str) -> None:
        """The rule was not run (its issues were the last run's whole): its units stay kept."""
        found = self._units.get(rule_id)
        if found is not None:
            self._next[rule_id] = found

    def finish(self) -> None:
        self._units, self._next = self._next, {}

    def issues(self, rule: UnitRule[Any], project: Project) -> list[Issue]:
        """The rule's issues, unit by unit in its order: a kept unit's where it holds."""
        kept = self._units.get(rule.id)
        mine: IdentityMap[object, tuple[list[Read], list[Issue]]] = IdentityMap()
        out: list[Issue] = []
        reused = 0
        # One view for all the units run, its log taken after each.
        recording: Project | None = None
        log = _Log()
        for unit in rule.units(project):
            found = kept.get(unit) if kept is not None else None
            # Most units of most rules read nothing but themselves: nothing to ask again.
            if found is not None and (not found[0] or holds(project, found[0])):
                reused += 1
                mine[unit] = found
                out.extend(found[1])
                continue
            self.ran += 1
            if recording is None:
                log = _Log()
                recording = cast("Project", _Recording(project, log))
            issues = list(rule.check_unit(recording, unit))
            reads = log.take()
            if reads is not None:
                mine[unit] = (reads, issues)
            out.extend(issues)
        self.reused += reused
        self._next[rule.id] = mine
        return out
