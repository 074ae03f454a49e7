"""CEL values as the evaluator holds them, and what every other module of the package shares:
the errors an evaluation raises, its limits (`MAX_LENGTH`, `MAX_DEPTH`), the value types Python
has no own type for (`UInt`, `Duration`, `Optional`, `NamedFormat`), CEL's type names, equality
and ordering across numeric types, and the `Activation` one evaluation runs in.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from policylint.k8s import urls
from policylint.k8s.cel.cost import PER_CALL_LIMIT


class CompileError(Exception):
    """A rule that cannot be compiled: a syntax error, or what this implementation does not
    support (`unsupported` names the function or syntax)."""

    def __init__(self, message: str, unsupported: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.unsupported = unsupported


class EvalError(Exception):
    """An evaluation error (cel-go's `types.Err`): no such key, no such overload, overflow, ..."""

    cost = 0  # what the evaluation had cost when it failed (`Compiled.run`)

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class BadValue(EvalError):
    """The rule read a value whose type its schema rejects: PL703 reports it, not the rule."""


class CostExceeded(EvalError):
    """The evaluation reached its cost limit (`Activation.limit`): the API server cancels it and
    refuses the object. `per_call` says which limit: the one of every evaluation
    (`PER_CALL_LIMIT`), else what was left of the object's budget (`RUNTIME_BUDGET`)."""

    def __init__(self, message: str, per_call: bool = True) -> None:
        super().__init__(message)
        self.per_call = per_call


class TooLarge(EvalError):
    """The rule built a value longer than `MAX_LENGTH` or nested too deeply for policylint to
    evaluate, or one it cannot represent (a map literal with both `true` and `1` as keys): an
    offline bound, not the API server's, so the verdict is left undecided."""


# Strings, bytes and lists built during an evaluation (`+`, `split`, `join`, `map`) beyond this
# length stop it too (memory; the cost limits would allow a few such values).
MAX_LENGTH = 1 << 22
# Parentheses, brackets and operators nested deeper than this are a compile error (cel-go's
# parser has the same kind of limit), so neither the parser nor the evaluator can overflow the
# Python stack.
MAX_DEPTH = 64

# -- values ---------------------------------------------------------------------------------------


class UInt(int):
    """A CEL `uint` (a Python int marked as unsigned)."""

    __slots__ = ()


class Duration:
    """A CEL `google.protobuf.Duration`, in nanoseconds."""

    __slots__ = ("ns",)

    def __init__(self, ns: int) -> None:
        self.ns = ns

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Duration) and other.ns == self.ns

    def __hash__(self) -> int:
        return hash(self.ns)

    def __repr__(self) -> str:
        return f"duration({self.ns}ns)"


class Timestamp:
    """A CEL `google.protobuf.Timestamp`, in nanoseconds since the Unix epoch (UTC), between
    0001-01-01T00:00:00Z and 9999-12-31T23:59:59.999999999Z (`policylint.k8s.cel.times`)."""

    __slots__ = ("ns",)

    def __init__(self, ns: int) -> None:
        self.ns = ns

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Timestamp) and other.ns == self.ns

    def __hash__(self) -> int:
        return hash(("timestamp", self.ns))

    def __repr__(self) -> str:
        return f"timestamp({self.ns}ns)"


class Optional:
    """A CEL optional value (`optional.none()`, `optional.of(x)`); `value` is `_NONE` for none."""

    __slots__ = ("value",)

    def __init__(self, value: Any) -> None:
        self.value = value


_NONE = object()


class Type:
    """A CEL type as a value: what `type(x)` returns and a type denotation (`int`, `list`)
    evaluates to. Types are equal by name, `type(type(x))` is `type`."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Type) and other.name == self.name

    def __hash__(self) -> int:
        return hash(("type", self.name))

    def __repr__(self) -> str:
        return f"type({self.name})"


# The names that denote a type where no variable has them (cel-spec langdef.md "Type values");
# `dyn` is none: it is only a function.
TYPE_DENOTATIONS = frozenset(
    {
        "int",
        "uint",
        "double",
        "bool",
        "string",
        "bytes",
        "list",
        "map",
        "null_type",
        "type",
        "google.protobuf.Duration",
        "google.protobuf.Timestamp",
        "optional_type",
    }
)


class NamedFormat:
    """A Kubernetes CEL format (`format.dns1123Label()`): validate(s) -> ?list<string>."""

    __slots__ = ("name", "validate")

    def __init__(self, name: str, validate: Callable[[str], list[str]]) -> None:
        self.name = name
        self.validate = validate


_INT_MIN, _INT_MAX = -(1 << 63), (1 << 63) - 1
_UINT_MAX = (1 << 64) - 1


def type_name(value: Any) -> str:
    """The CEL name of a value's type (its exact Python type: a bool is not an int here)."""
    t = type(value)
    return _TYPE_NAMES.get(t) or t.__name__


def _overload(name: str, *args: Any) -> EvalError:
    return EvalError(f"no such overload: {name}({', '.join(type_name(a) for a in args)})")


def _int(value: int) -> int:
    if value < _INT_MIN or value > _INT_MAX:
        raise EvalError("integer overflow")
    return value


def _uint(value: int) -> UInt:
    if value < 0 or value > _UINT_MAX:
        raise EvalError("unsigned integer overflow")
    return UInt(value)


_NUMBERS = (int, UInt, float)


def equals(a: Any, b: Any) -> bool:
    """CEL's heterogeneous equality: values of different types are unequal, except numbers,
    which compare by value (`1 == 1.0`, `1u == 1`)."""
    ta, tb = type(a), type(b)
    if ta is not tb:
        if ta in _NUMBERS and tb in _NUMBERS:
            # cel-go compares an int or uint with a double as two doubles (compareIntDouble):
            # 9223372036854775807 == 9223372036854775808.0 holds, as `<` does not
            return bool(float(a) == b if tb is float else a == float(b)) if float in (ta, tb) else bool(a == b)
        return False
    if ta is list:
        return len(a) == len(b) and all(equals(x, y) for x, y in zip(a, b))
    if ta is dict:
        if len(a) != len(b):
            return False
        for k, v in a.items():
            other = _map_get(b, k)
            if other is _NONE or not equals(v, other):
                return False
        return True
    if ta is Optional:
        if a.value is _NONE or b.value is _NONE:
            return a.value is b.value
        return equals(a.value, b.value)
    if ta is NamedFormat:
        return bool(a.name == b.name)
    return bool(a == b)


def _first(left: EvalError, right: EvalError) -> EvalError:
    """The error of a logical operator whose two sides failed: the left one, as cel-go reports,
    unless the right one read a value of the wrong type (which is PL703's to report)."""
    return right if isinstance(right, BadValue) and not isinstance(left, BadValue) else left


def _map_get(m: dict[Any, Any], key: Any) -> Any:
    """A map's value for a key, numbers matching across int, uint and double; _NONE if absent."""
    tk = type(key)
    if tk is bool:
        for k, v in m.items():
            if type(k) is bool and k == key:
                return v
        return _NONE
    if tk in _NUMBERS:
        for k, v in m.items():
            if type(k) in _NUMBERS and k == key:
                return v
        return _NONE
    return m.get(key, _NONE) if tk is str else _NONE


def _compare(op: str, a: Any, b: Any) -> int:
    """-1, 0 or 1 for a `<` comparison; numbers compare across types, others need one type."""
    ta, tb = type(a), type(b)
    if ta in _NUMBERS and tb in _NUMBERS:
        if (isinstance(a, float) and math.isnan(a)) or (isinstance(b, float) and math.isnan(b)):
            return 2  # nothing is ordered with NaN
        if (ta is float) is not (tb is float):
            a, b = float(a), float(b)  # as cel-go does (compareIntDouble): see `equals`
        return int((a > b) - (a < b))
    if ta is tb and ta in (str, bytes, bool):
        return int((a > b) - (a < b))
    if (ta is tb is Duration) or (ta is tb is Timestamp):
        return int((a.ns > b.ns) - (a.ns < b.ns))
    raise _overload(op, a, b)


# A value whose type its schema rejects (PL703's finding): reading it is an error that is not
# the rule's to report.
_BAD: Any = type("_Bad", (), {"__repr__": lambda self: "<a value of the wrong type>"})()
BAD = _BAD


# -- the activation: one evaluation's variables and cost -------------------------------


class Activation:
    """The variables of one evaluation, the cost it has run up and the cost it may reach."""

    __slots__ = ("cost", "limit", "per_call", "vars")

    def __init__(self, variables: dict[str, Any], limit: int = PER_CALL_LIMIT) -> None:
        self.vars = variables
        self.cost = 0
        self.limit = limit if limit < PER_CALL_LIMIT else PER_CALL_LIMIT
        self.per_call = limit >= PER_CALL_LIMIT  # which limit `limit` is, for the error

    def over(self) -> CostExceeded:
        """The error of an evaluation whose cost passed its limit."""
        if self.per_call:
            return CostExceeded("operation cancelled: actual cost limit exceeded")
        return CostExceeded("validation failed due to running out of cost budget", per_call=False)


Eval = Callable[[Activation], Any]


# The CEL name of each value type (`type_name`), by the exact Python type that holds it.
_TYPE_NAMES: dict[type, str] = {
    bool: "bool",
    int: "int",
    UInt: "uint",
    float: "double",
    str: "string",
    bytes: "bytes",
    type(None): "null_type",
    list: "list",
    dict: "map",
    Duration: "google.protobuf.Duration",
    Timestamp: "google.protobuf.Timestamp",
    Optional: "optional_type",
    NamedFormat: "kubernetes.NamedFormat",
    Type: "type",
    urls.URL: "kubernetes.URL",
}
