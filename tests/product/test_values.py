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

import abc
import copy
import dataclasses
import inspect
import pickle
import sys
from collections.abc import Callable
from typing import Any, ClassVar, NamedTuple

import pytest
from hypothesis import given
from hypothesis import strategies as st

from policylint import values
from tests.examples import examples


class Spec(NamedTuple):
    name: str
    default: str  # "none", "value", "factory"
    compare: bool
    hash: bool | None
    repr: bool
    init: bool
    kw_only: bool
    bare: bool  # declared by its annotation and a plain default, no `field()`


def _field(spec: Spec) -> Any:
    if spec.default == "value":
        extra: dict[str, Any] = {"default": 7}
    elif spec.default == "factory":
        extra = {"default_factory": list}
    else:
        extra = {}
    return dataclasses.field(compare=spec.compare, hash=spec.hash, repr=spec.repr, init=spec.init, kw_only=spec.kw_only, **extra)


def _body(specs: list[Spec]) -> dict[str, Any]:
    defaults = {s.name: 7 if s.bare else _field(s) for s in specs if not (s.bare and s.default == "none")}
    return {"__annotations__": {s.name: "object" for s in specs}} | defaults


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
        bare=st.booleans(),
    ).map(lambda s: Spec(s.name, s.default, True, None, True, True, False, s.default != "factory") if s.bare else s),
    max_size=5,
    unique_by=lambda s: s.name,
).filter(lambda fields: all(s.init or s.default != "none" for s in fields))  # else a field left unset


def _make_both(
    fields: list[Spec], decorators: tuple[Callable[..., Any], Callable[..., Any]], inherited: list[Spec] | None = None
) -> tuple[Any, Any] | None:
    """The class of `fields` made by each decorator, on a base of `inherited` made by the same one."""
    outcomes = []
    for decorate in decorators:
        try:
            bases = () if inherited is None else (decorate(type("Base", (), {"__qualname__": "Base", **_body(inherited)})),)
            outcomes.append(decorate(type("Value", bases, {"__qualname__": "Value", **_body(fields)})))
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


@examples(100, 400)
@given(fields=specs, kinds=st.sampled_from([FROZEN, RECORD]), inherited=st.none() | specs, data=st.data())
def test_classes_behave_as_dataclasses(
    fields: list[Spec], kinds: tuple[Callable[..., Any], Callable[..., Any]], inherited: list[Spec] | None, data: st.DataObject
) -> None:
    """Drawn with or without a base made by the same decorator, whose fields come first and which
    the class's may declare again (keeping their place, taking an inherited default)."""
    pair = _make_both(fields, kinds, inherited)
    if pair is None:
        return
    ours, theirs = pair
    own = {s.name: s for s in fields}
    fields = [*(own.pop(s.name, s) for s in inherited or []), *own.values()]
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


def test_a_class_is_made_without_dataclass_and_its_init_compiled_on_first_use(monkeypatch: pytest.MonkeyPatch) -> None:
    """What making a class cost on a cold run: `dataclass`'s own processing of the fields, and
    compiling `__init__`. Plain fields (defaults, `field()`, a base's) are worked out here, and
    `__init__` is compiled when the class is first used, once."""
    processed: list[str] = []
    compiled: list[str] = []
    standard, init = dataclasses.dataclass, values._init
    monkeypatch.setattr(dataclasses, "dataclass", lambda *a, **k: processed.append("dataclass") or standard(*a, **k))
    monkeypatch.setattr(values, "_init", lambda cls, *a: compiled.append(cls.__name__) or init(cls, *a))

    base = values.frozen(type("Base", (), {"__annotations__": {"a": "int", "b": "int"}, "b": 2}))
    made = values.frozen(
        type("Made", (base,), {"__annotations__": {"c": "list[int]"}, "c": dataclasses.field(default_factory=list)})
    )
    record = values.record(type("Record", (), {"__annotations__": {"x": "int"}}))
    assert processed == [] and compiled == []

    assert made(1) == made(1, 2, []) and record(1).x == 1
    assert made(1, 3).b == 3
    assert compiled == ["Made", "Record"]  # the base's is compiled only when asked for
    assert str(inspect.signature(base)) == "(a: 'int', b: 'int' = 2) -> None"
    assert compiled == ["Made", "Record", "Base"]
    assert type(base.__dict__["__init__"]).__name__ == "function"


def test_a_subclass_reaches_the_compiled_init_of_its_base() -> None:
    """A plain subclass made first, and a subclass whose `__init__` calls `super().__init__`."""
    base = values.frozen(type("Base", (), {"__annotations__": {"a": "int"}}))

    class Plain(base):  # type: ignore[valid-type, misc]
        pass

    class Calling(base):  # type: ignore[valid-type, misc]
        def __init__(self, a: int) -> None:
            super().__init__(a * 2)

    assert Plain(1).a == 1 and Calling(1).a == 2 and base(3).a == 3
    assert Plain.__init__ is base.__init__ and base.__init__.__qualname__ == "Base.__init__"


CV = ClassVar  # `dataclass` takes a name bound to `ClassVar` as `ClassVar` itself
KW_ONLY = dataclasses.KW_ONLY  # read from the class's module, as a string annotation's names are


def test_pseudo_fields_and_markers_are_as_dataclass_makes_them() -> None:
    """`ClassVar` (under its name or an alias) and `KW_ONLY` are left to `dataclass` to tell apart."""

    def body() -> dict[str, Any]:
        return {
            "__annotations__": {"a": "int", "shared": "ClassVar[int]", "aliased": "CV[int]", "_": "KW_ONLY", "b": "int"},
            "shared": 1,
            "aliased": 2,
            "b": 3,
        }

    for decorators in (FROZEN, RECORD):
        ours, theirs = _pair(body, *decorators)
        assert [f.name for f in dataclasses.fields(ours)] == [f.name for f in dataclasses.fields(theirs)] == ["a", "b"]
        assert str(inspect.signature(ours)) == str(inspect.signature(theirs)) == "(a: 'int', *, b: 'int' = 3) -> None"
        assert ours.__match_args__ == theirs.__match_args__ == ("a",)
        assert (ours.shared, ours.aliased) == (theirs.shared, theirs.aliased) == (1, 2)
        assert repr(ours(0)) == repr(theirs(0)) == "Value(a=0, b=3)"


def test_a_field_without_an_annotation_is_refused_as_dataclass_refuses_it() -> None:
    for decorate, standard in (FROZEN, RECORD):
        errors = []
        for make in (decorate, standard):
            with pytest.raises(TypeError) as caught:
                make(type("Value", (), {"__annotations__": {"x": "int"}, "y": dataclasses.field(default=1)}))
            errors.append(str(caught.value))
        assert errors[0] == errors[1] == "'y' is a field but has no type annotation"


def test_the_project_value_classes_have_their_fields_worked_out_here() -> None:
    """Every `@frozen` and `@record` class of the package has only plain fields, made without
    `dataclass` (which gives each class its own `__dataclass_params__`; these share one)."""
    import importlib
    import pkgutil

    import policylint

    for module in pkgutil.walk_packages(policylint.__path__, "policylint."):
        if not module.name.endswith("__main__"):
            importlib.import_module(module.name)
    made = [
        cls
        for name, module in sorted(sys.modules.items())
        if name.startswith("policylint.")
        for cls in vars(module).values()
        if isinstance(cls, type) and cls.__module__ == name and "__dataclass_fields__" in vars(cls)
    ]
    assert len(made) > 100
    assert [cls.__qualname__ for cls in made if cls.__dataclass_params__ not in values._PARAMS.values()] == []


def test_a_field_declared_again_keeps_its_place_and_takes_what_the_base_leaves_as_default() -> None:
    """A class attribute of the base is the default of a field declared again without one; a
    slot (a frozen base's field) is not a default."""
    for decorators, signature in (
        (FROZEN, "(a: 'int', b: 'str', c: 'int' = 3) -> None"),
        (RECORD, "(a: 'int', b: 'str' = 2, c: 'int' = 3) -> None"),
    ):
        made = []
        for decorate in decorators:
            base = decorate(type("Base", (), {"__annotations__": {"a": "int", "b": "int"}, "b": 2}))
            made.append(decorate(type("Value", (base,), {"__annotations__": {"b": "str", "c": "int"}, "c": 3})))
        ours, theirs = made
        assert str(inspect.signature(ours)) == str(inspect.signature(theirs)) == signature
        assert ours.__match_args__ == theirs.__match_args__ == ("a", "b", "c")
        assert repr(ours(1, "x")) == repr(theirs(1, "x")) == "Value(a=1, b='x', c=3)"


def test_classes_of_one_shape_share_one_compilation(monkeypatch: pytest.MonkeyPatch) -> None:
    """Compiling is what an `__init__` costs: classes whose fields differ only in their names,
    defaults and factories take one compiled code with their own names put in."""
    monkeypatch.setattr(values, "_CODE", {})

    def body(names: tuple[str, str, str], default: object) -> dict[str, Any]:
        first, second, third = names
        return {
            "__annotations__": {first: "int", second: "int", third: "list[int]"},
            second: default,
            third: dataclasses.field(default_factory=list, kw_only=True),
        }

    made = [
        values.frozen(type("One", (), body(("a", "b", "c"), 1))),
        values.frozen(type("Two", (), body(("x", "y", "z"), 2))),
    ]
    first, second = (cls(0) for cls in made)
    assert len(values._CODE) == 1
    assert (first.a, first.b, first.c, second.x, second.y, second.z) == (0, 1, [], 0, 2, [])
    assert first.c is not made[0](0).c
    assert str(inspect.signature(made[1])) == "(x: 'int', y: 'int' = 2, *, z: 'list[int]' = <factory>) -> None"
    assert made[1](5, z=[3]) == made[1](x=5, y=2, z=[3])
    with pytest.raises(TypeError, match=r"Two.__init__\(\) missing 1 required positional argument: 'x'"):
        made[1]()
    values.record(type("Three", (), body(("p", "q", "r"), 3)))(0)  # assigned, not set past a frozen class
    assert len(values._CODE) == 2


def test_a_method_given_here_implements_an_abstract_one() -> None:
    """As `dataclass` does, the abstract methods are counted again once the methods are given."""

    class Shown(abc.ABC):
        @abc.abstractmethod
        def __repr__(self) -> str: ...

    for decorate, standard in (FROZEN, RECORD):
        ours = decorate(type("Value", (Shown,), {"__annotations__": {"x": "int"}}))
        theirs = standard(type("Value", (Shown,), {"__annotations__": {"x": "int"}}))
        assert ours.__abstractmethods__ == theirs.__abstractmethods__ == frozenset()
        assert repr(ours(1)) == repr(theirs(1)) == "Value(x=1)"


def test_frozen_classes_are_told_from_mutable_ones() -> None:
    """What policylint.incremental.units compares by identity: a `@frozen` class's instances
    never change; a `@record`'s and a plain class's may."""

    @values.frozen
    class Kept:
        a: int

    @values.frozen(eq=False)
    class KeptByIdentity:
        a: int

    @values.record
    class Mutable:
        a: int

    assert values.is_frozen(Kept) and values.is_frozen(KeptByIdentity)
    assert not values.is_frozen(Mutable) and not values.is_frozen(dict) and not values.is_frozen(object)


def test_a_frozen_class_of_several_fields_sets_them_under_its_twin(monkeypatch: pytest.MonkeyPatch) -> None:
    """A frozen class's fields were set one `object.__setattr__` call each (0.2-0.3 µs a field; an
    `ObjectRef` has 20): from three fields on, the instance takes a class of its layout that
    assigns them directly and is given its own back, two calls however many fields. A class of two
    fields, a plain subclass's instance and a class without slots set field by field, as before;
    a factory that raises leaves the instance its own class."""
    calls: list[str] = []
    standard = object.__setattr__

    def counted(obj: object, name: str, value: object) -> None:
        calls.append(name)
        standard(obj, name, value)

    monkeypatch.setattr(values, "_SET", counted)  # before the classes' `__init__`s are compiled

    def failing() -> list[int]:
        raise ValueError("factory")

    body: dict[str, Any] = {
        "__annotations__": {"a": "int", "b": "int", "c": "int", "d": "int", "e": "list[int]"},
        "d": 4,
        "e": dataclasses.field(default_factory=list),
    }
    five = values.frozen(type("Five", (), dict(body)))
    two = values.frozen(type("Two", (), {"__annotations__": {"a": "int", "b": "int"}}))
    unslotted = values.frozen(slots=False)(type("Unslotted", (), dict(body)))
    raising = values.frozen(type("Raising", (), {**body, "e": dataclasses.field(default_factory=failing)}))

    class Plain(five):  # type: ignore[valid-type, misc]
        pass

    made = five(1, 2, 3)
    assert calls == ["__class__", "__class__"]
    assert type(made) is five and (made.a, made.b, made.c, made.d, made.e) == (1, 2, 3, 4, [])
    assert made == five(1, 2, 3, 4, [])
    with pytest.raises(dataclasses.FrozenInstanceError):
        made.a = 2
    calls.clear()
    assert (two(1, 2).a, calls) == (1, ["a", "b"])
    calls.clear()
    plain = Plain(1, 2, 3)
    assert type(plain) is Plain and plain.e == [] and calls == ["a", "b", "c", "d", "e"]
    calls.clear()
    assert unslotted(1, 2, 3).c == 3 and calls == ["a", "b", "c", "d", "e"]
    blank = object.__new__(raising)
    with pytest.raises(ValueError, match="factory"):
        raising.__init__(blank, 1, 2, 3)
    assert type(blank) is raising
