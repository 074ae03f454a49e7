"""Dataclasses that cost little to define: `@frozen` is `@dataclass(frozen=True, slots=True)`, `@record` `@dataclass`.

The standard library's `dataclass` writes each method it adds as source text and compiles it when
the class is defined: `__init__`, `__repr__`, `__eq__`, `__hash__`, `__setattr__` and
`__delattr__` for a frozen dataclass, 50-90 µs each on CPython 3.11. With a hundred value classes
that was about a third of a cold one-file run (see docs/performance.md, "Cold run"). These
decorators let `dataclass` work out the fields (defaults, `field()`, `__slots__`, `__match_args__`,
`fields()` and `replace()` support) with no method of its own, compiles `__init__` alone, the one
method that must be specific to be fast, and gives the others as closures built without
compiling.

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

import dataclasses
import reprlib
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
    documented = cls.__doc__ is not None
    if not documented:
        cls.__doc__ = "-"  # else `dataclass` writes one from `inspect.signature`: slow, and of no use
    made = dataclasses.dataclass(init=False, repr=False, eq=False, slots=slots)(cls)
    if not documented:
        made.__doc__ = None
    fields = dataclasses.fields(made)  # type: ignore[arg-type]
    declared: dict[str, dataclasses.Field[Any]] = made.__dataclass_fields__  # type: ignore[attr-defined]
    if len(fields) != len(declared) and any("InitVar" in str(f.type) for f in declared.values()):
        raise TypeError(f"{made.__qualname__}: InitVar fields are not supported here")
    own = made.__dict__
    _install(made, _init(made, fields, immutable))
    if immutable:
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
    return made


class _Factory:
    """The default of a parameter whose field has a `default_factory`, shown as `dataclass` shows it."""

    def __repr__(self) -> str:
        return "<factory>"


_FACTORY = _Factory()


def _init(cls: type, fields: tuple[dataclasses.Field[Any], ...], immutable: bool) -> Callable[..., None]:
    """`__init__`, compiled from source as `dataclass` writes it: what a call to it costs matters."""
    bound: dict[str, Any] = {"_set": object.__setattr__, "_FACTORY": _FACTORY}
    positional: list[str] = []
    keyword: list[str] = []
    body: list[str] = []
    defaulted: str | None = None
    for i, f in enumerate(fields):
        has_factory = f.default_factory is not dataclasses.MISSING
        if has_factory:
            bound[f"_factory{i}"] = f.default_factory
        if f.init:
            if f.default is not dataclasses.MISSING:
                bound[f"_default{i}"] = f.default
                param = f"{f.name}=_default{i}"
            elif has_factory:
                param = f"{f.name}=_FACTORY"
            else:
                param = f.name
            if not f.kw_only:
                if defaulted is not None and param == f.name:
                    raise TypeError(f"non-default argument {f.name!r} follows default argument {defaulted!r}")
                defaulted = f.name if param != f.name else defaulted
            (keyword if f.kw_only else positional).append(param)
            given = f"_factory{i}() if {f.name} is _FACTORY else {f.name}" if has_factory else f.name
        elif has_factory:
            given = f"_factory{i}()"
        elif f.default is not dataclasses.MISSING:
            bound[f"_default{i}"] = f.default
            given = f"_default{i}"
        else:
            continue
        body.append(f"  _set(self, {f.name!r}, {given})" if immutable else f"  self.{f.name} = {given}")
    if hasattr(cls, "__post_init__"):
        body.append("  self.__post_init__()")
    params = ", ".join(["self", *positional, *(["*", *keyword] if keyword else [])])
    source = f"def __init__({params}):\n" + ("\n".join(body) or "  pass")
    namespace: dict[str, Any] = {}
    exec(source, bound, namespace)  # the fields' names are identifiers: `dataclass` checked them
    init: Callable[..., None] = namespace["__init__"]
    init.__annotations__ = {f.name: f.type for f in fields if f.init} | {"return": None}
    return init


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
