"""CEL's arithmetic and membership operators (`+ - * / % in`) over the value model, with int64
and uint64 overflow errors and the offline length bound on built values.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from policylint.k8s.cel.times import checked_timestamp
from policylint.k8s.cel.values import (
    _NONE,
    MAX_LENGTH,
    Duration,
    EvalError,
    Timestamp,
    TooLarge,
    UInt,
    _compare,
    _int,
    _map_get,
    _overload,
    _uint,
    equals,
)


def _check_length(a: Any, b: Any) -> None:
    if len(a) + len(b) > MAX_LENGTH:
        raise TooLarge(f"a value built by the rule is longer than {MAX_LENGTH}")


def _add(a: Any, b: Any) -> Any:
    ta, tb = type(a), type(b)
    if ta is tb:
        if ta is int:
            return _int(a + b)
        if ta is float:
            return a + b
        if ta is UInt:
            return _uint(a + b)
        if ta in (str, bytes, list):
            _check_length(a, b)  # before building it
            return a + b
        if ta is Duration:
            return Duration(_int(a.ns + b.ns))
    if ta is Timestamp and tb is Duration:
        return checked_timestamp(a.ns + b.ns)
    if ta is Duration and tb is Timestamp:
        return checked_timestamp(a.ns + b.ns)
    raise _overload("_+_", a, b)


def _sub(a: Any, b: Any) -> Any:
    ta, tb = type(a), type(b)
    if ta is tb:
        if ta is int:
            return _int(a - b)
        if ta is float:
            return a - b
        if ta is UInt:
            return _uint(a - b)
        if ta is Duration:
            return Duration(_int(a.ns - b.ns))
        if ta is Timestamp:
            return Duration(_int(a.ns - b.ns))
    if ta is Timestamp and tb is Duration:
        return checked_timestamp(a.ns - b.ns)
    raise _overload("_-_", a, b)


def _mul(a: Any, b: Any) -> Any:
    ta, tb = type(a), type(b)
    if ta is tb:
        if ta is int:
            return _int(a * b)
        if ta is float:
            return a * b
        if ta is UInt:
            return _uint(a * b)
    raise _overload("_*_", a, b)


def _div(a: Any, b: Any) -> Any:
    ta, tb = type(a), type(b)
    if ta is tb:
        if ta is float:
            if b == 0:
                return math.copysign(math.inf, a) * math.copysign(1.0, b) if a != 0 and not math.isnan(a) else math.nan
            return a / b
        if ta in (int, UInt):
            if b == 0:
                raise EvalError("division by zero")
            q = abs(a) // abs(b)  # Go truncates toward zero
            q = q if (a >= 0) == (b >= 0) else -q
            return _uint(q) if ta is UInt else _int(q)
    raise _overload("_/_", a, b)


def _mod(a: Any, b: Any) -> Any:
    ta, tb = type(a), type(b)
    if ta is tb and ta in (int, UInt):
        if b == 0:
            raise EvalError("modulus by zero")
        r = abs(a) % abs(b)  # Go: the sign of the dividend
        r = -r if a < 0 else r
        return UInt(r) if ta is UInt else r
    raise _overload("_%_", a, b)


def _in(a: Any, b: Any) -> bool:
    if type(b) is list:
        return any(equals(a, x) for x in b)
    if type(b) is dict:
        return _map_get(b, a) is not _NONE
    raise _overload("@in", a, b)


_BINOPS: dict[str, Callable[[Any, Any], Any]] = {
    "+": _add,
    "-": _sub,
    "*": _mul,
    "/": _div,
    "%": _mod,
    "==": equals,
    "!=": lambda a, b: not equals(a, b),
    "<": lambda a, b: _compare("_<_", a, b) == -1,
    "<=": lambda a, b: _compare("_<=_", a, b) in (-1, 0),
    ">": lambda a, b: _compare("_>_", a, b) == 1,
    ">=": lambda a, b: _compare("_>=_", a, b) in (0, 1),
    "in": _in,
}
