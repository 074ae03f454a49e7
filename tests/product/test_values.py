"""`policylint.values`: `@frozen` and `@record` behave as the standard library's dataclasses.

The oracle is `dataclasses.dataclass` itself. Every class is made twice from the same body, once
with the standard decorator (`frozen=True, slots=True` for `@frozen`; plain for `@record`) and once
with ours, and the two are compared on what code can observe: `__init__`'s signature and what it
sets, defaults and factories, equality, hashes, reprs, the frozen errors, `__match_args__`,
`fields`, `replace`, `asdict`, pickling and copying. A hypothesis property draws the field lists
(defaults, factories, `compare`, `hash`, `repr`, `init`, `kw_only`); named cases pin what a class
body can add (its own methods, `__post_init__`, a base class).
"""

from __future__ import annotations

import copy
import dataclasses
import inspect
import pickle
from collections.abc import Callable
from typing import Any, NamedTuple

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from policylint import values


class Spec(NamedTuple):
    name: str
    default: str  # "none", "value", "factory"
    compare: bool
    hash: bool | None
    repr: bool
    init: bool
    kw_only: bool


def _field(spec: Spec) -> Any:
    if spec.default == "value":
        extra: dict[str, Any] = {"default": 7}
    elif spec.default == "factory":
        extra = {"default_factory": list}
    else:
        extra = {}
    return dataclasses.field(compare=spec.compare, hash=spec.hash, repr=spec.repr, init=spec.init, kw_only=spec.kw_only, **extra)


def _body(specs: list[Spec]) -> dict[str, Any]:
    return {"__annotations__": {s.name: "object" for s in specs}} | {s.name: _field(s) for s in specs}


def _pair(
    body: Callable[[], dict[str, Any]], ours: Callable[..., Any], theirs: Callable[..., Any], bases: tuple[type, ...] = ()
) -> tuple[Any, Any]:
    """The same class body made by each decorator, both named `Value` (their reprs then compare)."""
    made = []
    for decorate in (ours, theirs):
        namespace = body()
        namespace["__qualname__"] = "Value"
        namespace["__module__"] = __name__
        made.append(decorate(type("Value", bases, namespace)))
    return made[0], made[1]


def _observed(cls: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[str, Any]:
    try:
        obj = cls(*args, **kwargs)
    except TypeError as err:
        return "TypeError", str(err).replace(cls.__init__.__qualname__, "__init__")
    state = {f.name: getattr(obj, f.name, "<unset>") for f in dataclasses.fields(cls)}
    return "made", (state, repr(obj))


FROZEN = (values.frozen, dataclasses.dataclass(frozen=True, slots=True))
RECORD = (values.record, dataclasses.dataclass)

specs = st.lists(
    st.builds(
        Spec,
        name=st.sampled_from(["a", "b", "c", "d", "e"]),
        default=st.sampled_from(["none", "value", "factory"]),
        compare=st.booleans(),
        hash=st.sampled_from([None, True, False]),
        repr=st.booleans(),
        init=st.booleans(),
        kw_only=st.booleans(),
    ),
    max_size=5,
    unique_by=lambda s: s.name,
).filter(lambda fields: all(s.init or s.default != "none" for s in fields))  # else a field left unset


def _make_both(fields: list[Spec], decorators: tuple[Callable[..., Any], Callable[..., Any]]) -> tuple[Any, Any] | None:
    outcomes = []
    for decorate in decorators:
        try:
            outcomes.append(decorate(type("Value", (), {"__qualname__": "Value", **_body(fields)})))
        except TypeError as err:
            outcomes.append(err)
    ours, theirs = outcomes
    if isinstance(theirs, TypeError):
        # A required parameter after a defaulted one: refused by both. (Python 3.13 names the
        # defaulted one too, as ours does; earlier versions end the message before it.)
        assert isinstance(ours, TypeError)
        assert str(ours).startswith(str(theirs).split(" follows ")[0] + " follows default argument")
        return None
    assert not isinstance(ours, TypeError), ours
    return ours, theirs


@settings(max_examples=300, deadline=None)
@given(fields=specs, kinds=st.sampled_from([FROZEN, RECORD]), data=st.data())
def test_classes_behave_as_dataclasses(
    fields: list[Spec], kinds: tuple[Callable[..., Any], Callable[..., Any]], data: st.DataObject
) -> None:
    pair = _make_both(fields, kinds)
    if pair is None:
        return
    ours, theirs = pair
    assert str(inspect.signature(ours.__init__)) == str(inspect.signature(theirs.__init__))
    assert ours.__match_args__ == theirs.__match_args__
    assert [(f.name, f.compare, f.hash, f.repr) for f in dataclasses.fields(ours)] == [
        (f.name, f.compare, f.hash, f.repr) for f in dataclasses.fields(theirs)
    ]
    assert ("__slots__" in ours.__dict__) == ("__slots__" in theirs.__dict__)
    assert ours.__hash__ is None if theirs.__hash__ is None else ours.__hash__ is not None

    # Calls: every init parameter given or not, by position or keyword, and one unknown keyword.
    params = [s for s in fields if s.init]
    pool = st.integers(0, 3) | st.lists(st.integers(0, 2), max_size=2).map(tuple)
    args: list[Any] = []
    kwargs: dict[str, Any] = {}
    for spec in params:
        if data.draw(st.booleans()):
            value = data.draw(pool)
            if not spec.kw_only and not kwargs and data.draw(st.booleans()):
                args.append(value)
            else:
                kwargs[spec.name] = value
    if data.draw(st.integers(0, 9)) == 0:
        kwargs["unknown"] = 1
    observed = _observed(theirs, tuple(args), kwargs)
    assert _observed(ours, tuple(args), kwargs) == observed
    if observed[0] != "made":
        return

    # From here on, every argument by keyword.
    positional = [s.name for s in params if not s.kw_only]
    kwargs = dict(zip(positional, args)) | kwargs
    a, b = ours(**kwargs), theirs(**kwargs)
    a2, b2 = ours(**kwargs), theirs(**kwargs)
    assert (a == a2) == (b == b2)
    assert a.__eq__(b) is NotImplemented and b.__eq__(a) is NotImplemented
    if theirs.__hash__ is not None:
        assert _attempt(hash, a) == _attempt(hash, b)  # a list in a field: unhashable in both
    # An instance differing in one field: equal exactly when that field is not compared.
    for spec in params:
        other = {**kwargs, spec.name: ("changed",)}
        assert (ours(**other) == a) == (theirs(**other) == b)
    # Factories run per instance, in both.
    for f in dataclasses.fields(theirs):
        if f.default_factory is not dataclasses.MISSING and f.name not in kwargs:
            assert (getattr(a, f.name) is getattr(a2, f.name)) == (getattr(b, f.name) is getattr(b2, f.name))

    assert dataclasses.asdict(a) == dataclasses.asdict(b)
    changes = {s.name: "replaced" for s in params[:1]}
    assert _state(dataclasses.replace(a, **changes)) == _state(dataclasses.replace(b, **changes))
    assert _state(copy.copy(a)) == _state(a)  # the path pickling takes, without naming the class
    assert _state(copy.deepcopy(a)) == _state(a)
    for name in [s.name for s in fields]:
        assert _attempt(setattr, a, name, 1) == _attempt(setattr, b, name, 1)
        assert _attempt(delattr, a, name) == _attempt(delattr, b, name)
    # An attribute that is not a field: a frozen class refuses it. (CPython 3.11's frozen slots
    # dataclass fails here with a TypeError from `super()`: its check names the class as it was
    # before `__slots__` were added. A frozen dataclass without slots refuses, as ours does.)
    if kinds is FROZEN:
        assert _attempt(setattr, a, "unknown", 1)[0] == "FrozenInstanceError"
        assert _attempt(delattr, a, "unknown")[0] == "FrozenInstanceError"
    else:
        assert _attempt(setattr, a, "unknown", 1) == _attempt(setattr, b, "unknown", 1)


def _state(obj: Any) -> tuple[str, dict[str, Any]]:
    return type(obj).__qualname__, {f.name: getattr(obj, f.name, "<unset>") for f in dataclasses.fields(obj)}


def _attempt(action: Callable[..., object], *args: object) -> tuple[str, str]:
    try:
        action(*args)
    except Exception as err:
        return type(err).__name__, str(err)
    return "ok", ""


@values.frozen
class Pickled:
    x: int
    y: tuple[int, ...] = ()


@values.record(slots=True)
class PickledRecord:
    x: int


def test_values_survive_pickling() -> None:
    """`--jobs` workers send findings and verdicts back pickled; a frozen slots class needs its own
    `__getstate__`/`__setstate__` for that, as the standard one has."""
    for obj in (Pickled(1, (2,)), PickledRecord(3)):
        for protocol in range(2, pickle.HIGHEST_PROTOCOL + 1):
            back = pickle.loads(pickle.dumps(obj, protocol))
            assert back == obj and type(back) is type(obj)


def test_a_frozen_value_is_refused_assignment_as_a_dataclass_is() -> None:
    ours, theirs = _pair(lambda: {"__annotations__": {"x": "int"}}, *FROZEN)
    a, b = ours(1), theirs(1)
    for target in (a, b):
        with pytest.raises(dataclasses.FrozenInstanceError, match="cannot assign to field 'x'"):
            target.x = 2
        with pytest.raises(dataclasses.FrozenInstanceError, match="cannot delete field 'x'"):
            del target.x
    assert repr(a) == repr(b) == "Value(x=1)"
    assert hash(a) == hash(b) == hash((1,))
    assert {a: "found"}[ours(1)] == "found"


def test_what_the_class_body_defines_is_kept() -> None:
    def body() -> dict[str, Any]:
        return {
            "__annotations__": {"x": "int", "y": "int"},
            "__eq__": lambda self, other: "own eq",
            "__hash__": lambda self: 41,
            "__repr__": lambda self: "own repr",
        }

    for ours, theirs in (_pair(body, *FROZEN), _pair(body, *RECORD)):
        for obj in (ours(1, 2), theirs(1, 2)):
            assert obj.__eq__(None) == "own eq"
            assert hash(obj) == 41
            assert repr(obj) == "own repr"


def test_an_eq_in_the_body_without_a_hash_gets_the_generated_hash_when_frozen() -> None:
    def body() -> dict[str, Any]:
        return {"__annotations__": {"x": "int"}, "__eq__": lambda self, other: True}

    ours, theirs = _pair(body, *FROZEN)
    assert hash(ours(3)) == hash(theirs(3)) == hash((3,))
    ours, theirs = _pair(body, *RECORD)
    assert ours.__hash__ is None and theirs.__hash__ is None


def test_eq_false_keeps_identity() -> None:
    ours, theirs = _pair(
        lambda: {"__annotations__": {"x": "int"}},
        values.frozen(eq=False),
        dataclasses.dataclass(frozen=True, slots=True, eq=False),
    )
    for cls in (ours, theirs):
        one = cls(1)
        assert one != cls(1)
        assert one == one
        assert hash(one) == object.__hash__(one)


def test_post_init_runs_after_the_fields_are_set() -> None:
    seen: list[tuple[str, int]] = []

    def body() -> dict[str, Any]:
        return {"__annotations__": {"x": "int"}, "__post_init__": lambda self: seen.append(("post", self.x))}

    for ours, theirs in (_pair(body, *FROZEN), _pair(body, *RECORD)):
        ours(5)
        theirs(5)
    assert seen == [("post", 5)] * 4


def test_a_subclass_takes_its_bases_fields_first() -> None:
    for decorate, standard in (FROZEN, RECORD):
        base_ours = decorate(type("Base", (), {"__annotations__": {"a": "int", "b": "int"}, "b": 2}))
        base_theirs = standard(type("Base", (), {"__annotations__": {"a": "int", "b": "int"}, "b": 2}))
        ours = decorate(type("Sub", (base_ours,), {"__annotations__": {"c": "int"}, "c": 3}))
        theirs = standard(type("Sub", (base_theirs,), {"__annotations__": {"c": "int"}, "c": 3}))
        assert str(inspect.signature(ours.__init__)) == str(inspect.signature(theirs.__init__))
        assert repr(ours(1)) == repr(theirs(1)) == "Sub(a=1, b=2, c=3)"
        assert ours(1) == ours(1, 2, 3) and ours(1) != ours(1, 2, 4)


def test_a_mutable_record_is_assignable_and_unhashable() -> None:
    ours, theirs = _pair(lambda: {"__annotations__": {"x": "int"}}, *RECORD)
    for cls in (ours, theirs):
        obj = cls(1)
        obj.x = 2
        assert obj == cls(2)
        with pytest.raises(TypeError, match="unhashable"):
            hash(obj)


def test_a_records_own_setattr_is_used_by_init() -> None:
    """The standard `__init__` assigns with `self.x = x`; so does a record's."""

    def body() -> dict[str, Any]:
        return {"__annotations__": {"x": "int"}, "__setattr__": lambda self, name, v: object.__setattr__(self, name, v * 10)}

    ours, theirs = _pair(body, *RECORD)
    assert ours(1).x == theirs(1).x == 10


def test_a_mutable_default_is_refused() -> None:
    for decorate in (values.frozen, values.record):
        with pytest.raises(ValueError, match="mutable default"):
            decorate(type("Value", (), {"__annotations__": {"x": "list"}, "x": []}))


def test_a_frozen_class_may_not_define_setattr() -> None:
    for decorate in (values.frozen, dataclasses.dataclass(frozen=True)):
        with pytest.raises(TypeError, match="Cannot overwrite attribute __setattr__ in class Value"):
            decorate(type("Value", (), {"__annotations__": {"x": "int"}, "__setattr__": lambda *_: None}))


def test_initvar_fields_are_refused() -> None:
    with pytest.raises(TypeError, match="InitVar"):
        values.frozen(type("Value", (), {"__annotations__": {"x": "dataclasses.InitVar[int]"}}))


def test_undocumented_classes_stay_undocumented_and_documented_ones_keep_theirs() -> None:
    assert values.frozen(type("Value", (), {"__annotations__": {"x": "int"}})).__doc__ is None
    assert values.frozen(type("Value", (), {"__annotations__": {"x": "int"}, "__doc__": "Mine."})).__doc__ == "Mine."


def test_the_project_value_classes_are_made_by_these_decorators() -> None:
    """No standard `@dataclass` is left in the package: each costs ~0.5 ms of every cold run."""
    import pathlib

    import policylint

    root = pathlib.Path(policylint.__file__).parent
    left = [
        f"{path.relative_to(root)}:{n}"
        for path in sorted(root.rglob("*.py"))
        if path.name != "values.py"
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if line.lstrip().startswith("@dataclass")
    ]
    assert left == []
