"""Dataclasses that cost little to define: `@frozen` is `@dataclass(frozen=True, slots=True)`, `@record` `@dataclass`.

The standard library's `dataclass` writes each method it adds as source text and compiles it when
the class is defined: `__init__`, `__repr__`, `__eq__`, `__hash__`, `__setattr__` and
`__delattr__` for a frozen dataclass, 50-90 µs each on CPython 3.11. With a hundred value classes
that was about a third of a cold one-file run (see docs/performance.md, "Cold run"). These
decorators give `__eq__`, `__hash__`, `__repr__` and the frozen `__setattr__`/`__delattr__` as
closures built without compiling, and compile `__init__`, the one method that must be specific to
be fast, when the class is first used (`_LazyInit`): a run makes instances of only some classes.
`dataclass`'s own processing of the fields (three lookups per annotation to tell a `ClassVar`, an
`InitVar` or `KW_ONLY` apart) was the other half of the cost: a class whose annotations can be none
of those has its fields, `__dataclass_fields__`, `__match_args__` and `__slots__` worked out here as
`dataclass` works them out (`fields()`, `replace()` and `asdict()` read them); any other class is
left to `dataclass` for that part.

They behave as the generated ones do: `__init__` takes the fields in order (defaults,
`default_factory`, `init=False`, `kw_only`, `__post_init__`) and sets them (past the frozen
`__setattr__`); assigning or deleting a field of a frozen one raises
`dataclasses.FrozenInstanceError`; instances are equal when of the same class with equal compared fields (`NotImplemented` otherwise); the hash
is the hash of the tuple of the hashed fields (`field(hash=...)`, else `compare`), a mutable one
has none; the repr is
`Name(field=value, ...)` of the `repr` fields; a method the class body defines is kept. `InitVar`
fields are not supported. tests/product/test_values.py compares them with real dataclasses.
"""

from __future__ import annotations

import abc
import dataclasses
import inspect
import reprlib
import sys
import types
import typing
from collections.abc import Callable
from operator import attrgetter
from typing import Any, TypeVar, overload

# Not imported from typing_extensions at run time: the decorator only marks the function for type
# checkers (PEP 681), and typing has it from Python 3.11 only.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing_extensions import dataclass_transform
else:

    def dataclass_transform(**_: object) -> Callable[[Any], Any]:
        return lambda decorated: decorated


_T = TypeVar("_T")

# The classes `@frozen` made: their instances never change, so one that is the same object as
# before holds what it held (policylint.incremental.units compares such answers by identity).
_FROZEN: set[type] = set()


def is_frozen(cls: type) -> bool:
    """Whether `cls` was made by `@frozen`, or derives from a class that was."""
    return any(base in _FROZEN for base in cls.__mro__)


@overload
def frozen(cls: type[_T], /) -> type[_T]: ...
@overload
def frozen(*, slots: bool = True, eq: bool = True) -> Callable[[type[_T]], type[_T]]: ...


@dataclass_transform(frozen_default=True, field_specifiers=(dataclasses.field, dataclasses.Field))
def frozen(cls: type[_T] | None = None, /, *, slots: bool = True, eq: bool = True) -> type[_T] | Callable[[type[_T]], type[_T]]:
    """`@dataclass(frozen=True, slots=True)`: `slots=False` leaves `__slots__` out, `eq=False` keeps identity."""
    return _decorator(cls, slots=slots, eq=eq, immutable=True)


@overload
def record(cls: type[_T], /) -> type[_T]: ...
@overload
def record(*, slots: bool = False, eq: bool = True) -> Callable[[type[_T]], type[_T]]: ...


@dataclass_transform(field_specifiers=(dataclasses.field, dataclasses.Field))
def record(cls: type[_T] | None = None, /, *, slots: bool = False, eq: bool = True) -> type[_T] | Callable[[type[_T]], type[_T]]:
    """`@dataclass`, mutable: `slots=True` adds `__slots__`, `eq=False` keeps identity."""
    return _decorator(cls, slots=slots, eq=eq, immutable=False)


def _decorator(cls: type[_T] | None, *, slots: bool, eq: bool, immutable: bool) -> type[_T] | Callable[[type[_T]], type[_T]]:
    def make(cls: type[_T]) -> type[_T]:
        return _make(cls, slots=slots, eq=eq, immutable=immutable)

    return make if cls is None else make(cls)


def _make(cls: type[_T], *, slots: bool, eq: bool, immutable: bool) -> type[_T]:
    made = _fields_made(cls, slots=slots)
    if made is None:
        made = _dataclass_made(cls, slots=slots)
    declared: dict[str, dataclasses.Field[Any]] = made.__dataclass_fields__  # type: ignore[attr-defined]
    if any(f._field_type is _INITVAR for f in declared.values()):  # type: ignore[attr-defined]
        raise TypeError(f"{made.__qualname__}: InitVar fields are not supported here")
    fields = tuple(f for f in declared.values() if f._field_type is _FIELD)  # type: ignore[attr-defined]
    own = made.__dict__
    _refuse_required_after_default(fields)
    # Compiled when the class is first used: compiling is most of what making a class costs, and a
    # small run makes instances of only some of the package's classes.
    made.__init__ = _LazyInit(made, fields, immutable)  # type: ignore[assignment]
    if immutable:
        _FROZEN.add(made)
        for name in ("__setattr__", "__delattr__"):
            if name in own:
                raise TypeError(f"Cannot overwrite attribute {name} in class {made.__name__}")
        for method in _refusals(made, fields):
            _install(made, method)
        if slots and "__getstate__" not in own:
            # Unpickling (`--jobs` workers, copy) sets slots with setattr, which a frozen class refuses.
            names = [f.name for f in fields]
            _install(made, _getstate(names))
            _install(made, _setstate(names))
    if eq:
        if "__eq__" not in own:
            _install(made, _eq([f.name for f in fields if f.compare]))
        # As `dataclass` decides: a `__hash__` the class body defines stays (an `__eq__` there
        # without one leaves None, which is not a definition); else a frozen class hashes its
        # fields and a mutable one is unhashable.
        if own.get("__hash__") is None:
            if immutable:
                _install(made, _hash([f.name for f in fields if (f.compare if f.hash is None else f.hash)]))
            else:
                made.__hash__ = None  # type: ignore[assignment]
    if "__repr__" not in own:
        _install(made, _repr([f.name for f in fields if f.repr]))
    abc.update_abstractmethods(made)  # a method given here may be one an abstract base declares
    return made


def _dataclass_made(cls: type[_T], *, slots: bool) -> type[_T]:
    """The fields worked out by `dataclass` itself, for the classes `_fields_made` leaves to it."""
    documented = cls.__doc__ is not None
    if not documented:
        cls.__doc__ = "-"  # else `dataclass` writes one from `inspect.signature`: slow, and of no use
    made = dataclasses.dataclass(init=False, repr=False, eq=False, slots=slots)(cls)
    if not documented:
        made.__doc__ = None
    return made


# What `dataclass` marks each entry of `__dataclass_fields__` with: a field, or a pseudo-field
# (`ClassVar`, `InitVar`) that `fields()` leaves out. The markers are private to the module, but
# `fields()`, `replace()` and `asdict()` read them, so a field made here must carry the same one.
_FIELD = dataclasses._FIELD  # type: ignore[attr-defined]
_INITVAR = dataclasses._FIELD_INITVAR  # type: ignore[attr-defined]
# An annotation `dataclass` treats apart (a `ClassVar`, an `InitVar`, the `KW_ONLY` marker) names
# one of them or, under an alias, starts with a name the class's module binds to one. A class with
# no such annotation has only plain fields, worked out here.


def _params(slots: bool) -> object:
    """The `__dataclass_params__` `dataclass(init=False, repr=False, eq=False)` gives: a standard
    `@dataclass` made on one of these classes reads it (whether its bases are frozen)."""
    probe = type("_Probe", (), {"__doc__": "-"})
    return dataclasses.dataclass(init=False, repr=False, eq=False, slots=slots)(probe).__dataclass_params__  # type: ignore[attr-defined]


_PARAMS = {False: _params(False), True: _params(True)}


def _fields_made(cls: type[_T], *, slots: bool) -> type[_T] | None:
    """`cls` with `__dataclass_fields__`, `__dataclass_params__` and `__match_args__` as
    `dataclass(init=False, repr=False, eq=False, slots=slots)` sets them, or None for a class an
    annotation of which may be a `ClassVar`, an `InitVar` or `KW_ONLY`, or is not a string (left to
    `dataclass`).

    `dataclass` spends most of its time on each field's three lookups for those words; the rest is
    done as it does it: the bases' fields first (in reverse MRO order, a field declared again
    keeping its place), then the class's annotations in order, the default the class attribute
    (inherited ones too, not a slot's descriptor) or the `field()` there, which is replaced by its
    default or removed.
    """
    annotations: dict[str, object] = inspect.get_annotations(cls)  # `dataclasses` imports `inspect`
    module = sys.modules.get(cls.__module__)
    names = vars(module) if module is not None else {}
    for annotation in annotations.values():
        if not isinstance(annotation, str) or "ClassVar" in annotation or "InitVar" in annotation or "KW_ONLY" in annotation:
            return None
        # `dataclass` reads the annotation's first name (`X` of `X[...]`) in the module: under an
        # alias, a `ClassVar` holds none of the words. (`m.X` is one only when `X` is one of them.)
        head = names.get(annotation.split("[", 1)[0].strip())
        if head is typing.ClassVar or head is dataclasses.InitVar or head is dataclasses.KW_ONLY:
            return None
    fields: dict[str, dataclasses.Field[Any]] = {}
    for base in cls.__mro__[-1:0:-1]:
        fields.update(getattr(base, "__dataclass_fields__", {}))
    for name, annotation in annotations.items():
        default = getattr(cls, name, dataclasses.MISSING)
        if isinstance(default, dataclasses.Field):
            f = default
        else:
            f = dataclasses.field(default=dataclasses.MISSING if isinstance(default, types.MemberDescriptorType) else default)  # type: ignore[arg-type]
        f.name = name
        f.type = annotation
        f._field_type = _FIELD  # type: ignore[attr-defined]
        if f.kw_only is dataclasses.MISSING:
            f.kw_only = False
        if f.default.__class__.__hash__ is None:
            raise ValueError(f"mutable default {type(f.default)} for field {name} is not allowed: use default_factory")
        fields[name] = f
        if isinstance(default, dataclasses.Field):
            if f.default is dataclasses.MISSING:
                delattr(cls, name)
            else:
                setattr(cls, name, f.default)
    for name, value in cls.__dict__.items():
        if isinstance(value, dataclasses.Field) and name not in annotations:
            raise TypeError(f"{name!r} is a field but has no type annotation")
    cls.__dataclass_params__ = _PARAMS[slots]  # type: ignore[attr-defined]
    cls.__dataclass_fields__ = fields  # type: ignore[attr-defined]
    if "__match_args__" not in cls.__dict__:
        cls.__match_args__ = tuple(  # type: ignore[attr-defined, misc]
            f.name
            for f in fields.values()
            if f._field_type in (_FIELD, _INITVAR) and f.init and not f.kw_only  # type: ignore[attr-defined]
        )
    return _with_slots(cls, fields) if slots else cls


def _with_slots(cls: type[_T], fields: dict[str, dataclasses.Field[Any]]) -> type[_T]:
    """The class made again with `__slots__`, as `dataclass(slots=True)` makes it: its fields'
    names less the slots of its bases, and no `__dict__`."""
    if "__slots__" in cls.__dict__:
        raise TypeError(f"{cls.__name__} already specifies __slots__")
    names = [f.name for f in fields.values() if f._field_type is _FIELD]  # type: ignore[attr-defined]
    inherited = {slot for base in cls.__mro__[1:-1] for slot in _slots(base)}
    namespace = dict(cls.__dict__)
    namespace["__slots__"] = tuple(name for name in names if name not in inherited)
    for name in (*names, "__dict__", "__weakref__"):
        namespace.pop(name, None)
    made: type[_T] = type.__call__(type(cls), cls.__name__, cls.__bases__, namespace)
    made.__qualname__ = cls.__qualname__
    return made


def _slots(cls: type) -> tuple[str, ...]:
    declared = cls.__dict__.get("__slots__")
    if declared is None:
        return ()
    if isinstance(declared, str):
        return (declared,)
    if hasattr(declared, "__next__"):
        raise TypeError(f"Slots of '{cls.__name__}' cannot be determined")
    return tuple(declared)


class _LazyInit:
    """A class's `__init__` until it is first looked up (making an instance, `inspect`, a
    subclass's `super().__init__`): then compiled, put in this one's place, and returned, so that
    what any code sees of it is the compiled function."""

    __slots__ = ("cls", "fields", "immutable")

    def __init__(self, cls: type, fields: tuple[dataclasses.Field[Any], ...], immutable: bool) -> None:
        self.cls = cls
        self.fields = fields
        self.immutable = immutable

    def __get__(self, obj: object, owner: type | None = None) -> Callable[..., None]:
        init = _init(self.cls, self.fields, self.immutable)
        _install(self.cls, init)
        return init if obj is None else types.MethodType(init, obj)


def _refuse_required_after_default(fields: tuple[dataclasses.Field[Any], ...]) -> None:
    """`dataclass`'s check, when the class is made: a positional parameter without a default may
    not follow one with a default."""
    defaulted: str | None = None
    for f in fields:
        if not f.init or f.kw_only:
            continue
        if f.default is not dataclasses.MISSING or f.default_factory is not dataclasses.MISSING:
            defaulted = f.name
        elif defaulted is not None:
            raise TypeError(f"non-default argument {f.name!r} follows default argument {defaulted!r}")


class _Factory:
    """The default of a parameter whose field has a `default_factory`, shown as `dataclass` shows it."""

    def __repr__(self) -> str:
        return "<factory>"


_FACTORY = _Factory()


# What a frozen class's `__init__` sets an attribute with, past its own `__setattr__`.
_SET = object.__setattr__


# An `__init__`'s code by its source written with placeholders for the fields' names: the classes
# of one shape (the same number of fields, passed the same way) share one compilation.
_CODE: dict[str, types.CodeType] = {}


def _init(cls: type, fields: tuple[dataclasses.Field[Any], ...], immutable: bool) -> Callable[..., None]:
    """`__init__` as `dataclass` writes it, compiled: what a call to it costs matters.

    Compiling is what costs here (~0.1 ms), so the source names each field `_f<i>_`, its default
    `_default<i>` and its factory `_factory<i>`; a class takes its shape's code with its fields'
    names put in place of the placeholders (`CodeType.replace`, a hundredth of the cost), and its
    defaults and factories in the function's globals and defaults. The code is the one compiling
    the class's own source gives.
    """
    bound: dict[str, Any] = {"_set": _SET, "_FACTORY": _FACTORY}
    positional: list[str] = []
    keyword: list[str] = []
    defaults: list[object] = []
    kwdefaults: dict[str, object] = {}
    assigned: list[tuple[str, str]] = []  # (field, the expression it is given)
    for i, f in enumerate(fields):
        name = f"_f{i}_"
        has_factory = f.default_factory is not dataclasses.MISSING
        if has_factory:
            bound[f"_factory{i}"] = f.default_factory
        if f.init:
            (keyword if f.kw_only else positional).append(name)
            if f.default is not dataclasses.MISSING or has_factory:
                default = f.default if f.default is not dataclasses.MISSING else _FACTORY
                # Positional ones are the last: `_refuse_required_after_default` saw to it.
                if f.kw_only:
                    kwdefaults[f.name] = default
                else:
                    defaults.append(default)
            given = f"_factory{i}() if {name} is _FACTORY else {name}" if has_factory else name
        elif has_factory:
            given = f"_factory{i}()"
        elif f.default is not dataclasses.MISSING:
            bound[f"_default{i}"] = f.default
            given = f"_default{i}"
        else:
            continue
        assigned.append((name, given))
    twin = _twin(cls) if immutable and len(assigned) >= _TWIN_FROM else None
    if twin is None:
        body = [f"  _set(self, {name!r}, {given})" if immutable else f"  self.{name} = {given}" for name, given in assigned]
    else:
        # A frozen class's own `__setattr__` refuses its fields, and setting each past it with
        # `object.__setattr__` cost 0.2-0.3 µs a field (an `ObjectRef` of 20 fields, made for every
        # reference a route holds, 6 µs): the instance takes its twin's class, whose fields are
        # assigned as a mutable class's are, and is given its own back (1.8 µs). An instance of a
        # subclass not made here, which inherits this `__init__`, has another layout: its fields
        # are set one by one.
        bound["_cls"], bound["_twin"] = cls, twin
        body = [
            "  if self.__class__ is _cls:",
            "    _set(self, '__class__', _twin)",
            "    try:",
            *(f"      self.{name} = {given}" for name, given in assigned),
            "    finally:",
            "      _set(self, '__class__', _cls)",
            "  else:",
            *(f"    _set(self, {name!r}, {given})" for name, given in assigned),
        ]
    if hasattr(cls, "__post_init__"):
        body.append("  self.__post_init__()")
    params = ", ".join(["self", *positional, *(["*", *keyword] if keyword else [])])
    source = f"def __init__({params}):\n" + ("\n".join(body) or "  pass")
    shape = _CODE.get(source)
    if shape is None:
        namespace: dict[str, Any] = {}
        exec(source, {}, namespace)  # the fields' names are identifiers: `dataclass` checked them
        shape = _CODE[source] = namespace["__init__"].__code__
    names = {f"_f{i}_": f.name for i, f in enumerate(fields)}

    def named(items: tuple[Any, ...]) -> tuple[Any, ...]:
        return tuple(names.get(item, item) if isinstance(item, str) else item for item in items)

    code = shape.replace(co_varnames=named(shape.co_varnames), co_names=named(shape.co_names), co_consts=named(shape.co_consts))
    init: Callable[..., None] = types.FunctionType(code, bound, "__init__", tuple(defaults) or None)
    init.__kwdefaults__ = kwdefaults or None
    init.__annotations__ = {f.name: f.type for f in fields if f.init} | {"return": None}
    return init


# The fewest fields a frozen class sets in `__init__` for which taking its twin's class and back
# (~0.5 µs) costs less than setting each field past its `__setattr__`.
_TWIN_FROM = 3


def _twin(cls: type) -> type | None:
    """A class of `cls`'s layout whose fields are assigned as a mutable class's (its
    `__setattr__` and `__delattr__` are `object`'s), which an instance of `cls` may take as its
    class and give back (`__class__` assignment, which needs the same base and the same slots);
    None for a class without `__slots__` of its own, or one whose instances cannot change class."""
    slots = cls.__dict__.get("__slots__")
    if slots is None:
        return None
    namespace = {
        "__slots__": slots,
        "__module__": cls.__module__,
        "__qualname__": cls.__qualname__,
        "__setattr__": object.__setattr__,
        "__delattr__": object.__delattr__,
    }
    try:
        twin: type = type(cls)(cls.__name__, cls.__bases__, namespace)
        probe: object = object.__new__(cls)
        object.__setattr__(probe, "__class__", twin)
        object.__setattr__(probe, "__class__", cls)
    except TypeError:
        return None
    return twin


def _getstate(names: list[str]) -> Callable[[object], list[object]]:
    def __getstate__(self: object) -> list[object]:
        return [getattr(self, name) for name in names]

    return __getstate__


def _setstate(names: list[str]) -> Callable[[object, list[object]], None]:
    def __setstate__(self: object, state: list[object]) -> None:
        for name, item in zip(names, state):
            object.__setattr__(self, name, item)

    return __setstate__


def _refusals(cls: type[Any], fields: tuple[dataclasses.Field[Any], ...]) -> tuple[Callable[..., None], ...]:
    """`__setattr__` and `__delattr__` of a frozen class, with the checks and errors of `dataclass`'s."""
    names = frozenset(f.name for f in fields)

    def __setattr__(self: object, name: str, value: object) -> None:
        if type(self) is cls or name in names:
            raise dataclasses.FrozenInstanceError(f"cannot assign to field {name!r}")
        super(cls, self).__setattr__(name, value)

    def __delattr__(self: object, name: str) -> None:
        if type(self) is cls or name in names:
            raise dataclasses.FrozenInstanceError(f"cannot delete field {name!r}")
        super(cls, self).__delattr__(name)

    return __setattr__, __delattr__


def _getter(names: list[str]) -> Callable[[object], tuple[object, ...]]:
    """The tuple of the named attributes: what the generated methods build as `(self.a, self.b)`."""
    if len(names) >= 2:
        return attrgetter(*names)
    if names:
        one = attrgetter(names[0])
        return lambda obj: (one(obj),)
    return lambda obj: ()


def _eq(names: list[str]) -> Callable[[object, object], bool]:
    compared = _getter(names)

    def __eq__(self: object, other: object) -> bool:
        if other.__class__ is self.__class__:
            return compared(self) == compared(other)
        return NotImplemented

    return __eq__


def _hash(names: list[str]) -> Callable[[object], int]:
    hashed = _getter(names)

    def __hash__(self: object) -> int:
        return hash(hashed(self))

    return __hash__


def _repr(names: list[str]) -> Callable[[object], str]:
    shown = _getter(names)

    @reprlib.recursive_repr()
    def __repr__(self: object) -> str:
        pairs = ", ".join(f"{name}={item!r}" for name, item in zip(names, shown(self)))
        return f"{self.__class__.__qualname__}({pairs})"

    return __repr__


def _install(cls: type, method: Callable[..., Any]) -> None:
    method.__qualname__ = f"{cls.__qualname__}.{method.__name__}"
    setattr(cls, method.__name__, method)
