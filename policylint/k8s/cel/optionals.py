"""cel-go's optional values (cel.OptionalTypes, which the Kubernetes CEL environment enables):
`optional.of`, `optional.none`, `optional.ofNonZeroValue`, the methods `hasValue`, `value`,
`orValue`, `or`, the selections `x.?f` and `x[?k]`, selection and indexing through an optional
(`optional.of(m).f` is `m.?f`), and the optional entries of list and map literals (`[?x]`,
`{?k: x}`). The macros `optMap` and `optFlatMap` are the evaluator's (`_Compiler.c_call`).
"""

from __future__ import annotations

from typing import Any

from policylint.k8s.cel.values import (
    _BAD,
    _NONE,
    BadValue,
    Duration,
    EvalError,
    Optional,
    Timestamp,
    UInt,
    _map_get,
    _overload,
    type_name,
)

NONE = Optional(_NONE)


def of(x: Any) -> Optional:
    return Optional(x)


def _is_zero(x: Any) -> bool:
    """The zero value of its type (cel-go's IsZeroValue): null, false, 0, 0u, 0.0, '', b'', [],
    {}, a zero duration, the epoch."""
    t = type(x)
    if x is None:
        return True
    if t in (bool, int, UInt, float, str, bytes, list, dict):
        return not x
    if t is Duration or t is Timestamp:
        return bool(x.ns == 0)
    return False


def of_non_zero_value(x: Any) -> Optional:
    return NONE if _is_zero(x) else Optional(x)


def has_value(o: Any) -> bool:
    if type(o) is not Optional:
        raise _overload("hasValue", o)
    return o.value is not _NONE


def value(o: Any) -> Any:
    if type(o) is not Optional:
        raise _overload("value", o)
    if o.value is _NONE:
        raise EvalError("optional.none() dereference")
    return o.value


def or_value(o: Any, default: Any) -> Any:
    if type(o) is not Optional:
        raise _overload("orValue", o, default)
    return default if o.value is _NONE else o.value


def or_optional(o: Any, other: Any) -> Optional:
    """`o.or(other)`: `o` when it has a value, else `other` (an optional too)."""
    if type(o) is not Optional or type(other) is not Optional:
        raise _overload("or", o, other)
    return o if o.value is not _NONE else other


def select(value: Any, field: str) -> Optional:
    """`value.?field`, and `value.field` where `value` is an optional: the field's value if the
    map has it, else none; none stays none."""
    if type(value) is Optional:
        if value.value is _NONE:
            return NONE
        value = value.value
    if type(value) is dict:
        got = value.get(field, _NONE)
        if got is _BAD:
            raise BadValue(f"the value of {field} has a type its schema rejects")
        return NONE if got is _NONE else Optional(got)
    if value is _BAD:
        raise BadValue("a value has a type its schema rejects")
    raise EvalError(f"type '{type_name(value)}' does not support field selection")


def index(value: Any, key: Any) -> Optional:
    """`value[?key]`, and `value[key]` where `value` is an optional: a list's item or a map's
    value if there is one, else none; none stays none."""
    if type(value) is Optional:
        if value.value is _NONE:
            return NONE
        value = value.value
    t = type(value)
    got: Any = _NONE
    if t is list:
        if not (type(key) in (int, UInt) or (type(key) is float and key.is_integer())):
            raise _overload("_[?_]", value, key)
        i = int(key)
        if 0 <= i < len(value):
            got = value[i]
    elif t is dict:
        got = _map_get(value, key)
    elif value is _BAD:
        raise BadValue("a value has a type its schema rejects")
    else:
        raise _overload("_[?_]", value, key)
    if got is _BAD:
        raise BadValue("an item has a type its schema rejects")
    return NONE if got is _NONE else Optional(got)


def has(value: Optional, field: str) -> bool:
    """`has(o.field)` where `o` is an optional: false for none, else whether its map has it."""
    if value.value is _NONE:
        return False
    inner = value.value
    if type(inner) is dict:
        return field in inner
    if inner is _BAD:
        raise BadValue("a value has a type its schema rejects")
    raise EvalError(f"invalid type for field selection: {type_name(inner)}")


def entry(x: Any) -> Any:
    """An optional entry of a list or map literal: its value, or _NONE to leave it out."""
    if type(x) is not Optional:
        raise EvalError(f"an optional entry must be an optional value, not {type_name(x)}")
    return x.value


FUNCTIONS: dict[str, tuple[Any, bool | None, tuple[int, ...]]] = {
    "optional.none": (lambda: NONE, False, (0,)),
    "optional.of": (of, False, (1,)),
    "optional.ofNonZeroValue": (of_non_zero_value, False, (1,)),
    "hasValue": (has_value, True, (1,)),
    "value": (value, True, (1,)),
    "orValue": (or_value, True, (2,)),
    "or": (or_optional, True, (2,)),
}
