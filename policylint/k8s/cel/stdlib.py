"""CEL's standard functions (cel-spec langdef.md): `size`, `contains`, `startsWith`, `endsWith`,
`matches` (RE2 syntax, run by Python's `re` after translation), the type conversions and
`duration()` with Go's duration syntax.
"""

from __future__ import annotations

import functools
import math
import re
from typing import Any

from policylint.k8s.cel.times import format_timestamp, timestamp_seconds
from policylint.k8s.cel.values import _INT_MIN, Duration, EvalError, Timestamp, UInt, _int, _overload, _uint

# -- functions ------------------------------------------------------------------------------------


def _size(x: Any) -> int:
    if type(x) in (str, bytes, list, dict):
        return len(x)
    raise _overload("size", x)


def _str_args(name: str, *args: Any) -> None:
    if any(type(a) is not str for a in args):
        raise _overload(name, *args)


def _contains(s: Any, sub: Any) -> bool:
    _str_args("contains", s, sub)
    return sub in s


def _starts(s: Any, prefix: Any) -> bool:
    _str_args("startsWith", s, prefix)
    return bool(s.startswith(prefix))


def _ends(s: Any, suffix: Any) -> bool:
    _str_args("endsWith", s, suffix)
    return bool(s.endswith(suffix))


@functools.lru_cache(maxsize=512)
def _regex(pattern: str) -> Any:
    """`matches()` and the Kubernetes regex functions use RE2, as cel-go does (Go's regexp):
    the same syntax, and linear time whatever pattern a CRD in the input brings (google-re2,
    a dependency of policylint's schema rules)."""
    import importlib

    re2: Any = importlib.import_module("re2")
    options = re2.Options()
    options.max_mem = 8 << 20  # a bound on the compiled program, as Go's regexp has
    options.log_errors = False  # RE2 would print parse errors to stderr itself
    try:
        return re2.compile(pattern, options)
    except re2.error as exc:
        detail = exc.args[0] if exc.args else exc
        if isinstance(detail, bytes):
            detail = detail.decode("utf-8", "replace")
        raise EvalError(f"invalid regular expression {pattern!r}: {detail}") from None


def _matches(s: Any, pattern: Any) -> bool:
    _str_args("matches", s, pattern)
    return _regex(pattern).search(s) is not None


def _find(s: Any, pattern: Any) -> str:
    _str_args("find", s, pattern)
    m = _regex(pattern).search(s)
    return m.group(0) if m is not None else ""


def _find_all(s: Any, pattern: Any, limit: Any = -1) -> list[str]:
    _str_args("findAll", s, pattern)
    if type(limit) is not int:
        raise _overload("findAll", s, pattern, limit)
    out = [m.group(0) for m in _regex(pattern).finditer(s)]
    return out if limit < 0 else out[:limit]


_DURATION_PART = re.compile(r"([0-9]*(?:\.[0-9]*)?)(ns|us|µs|μs|ms|s|m|h)")
_UNIT_NS = {"ns": 1, "us": 1_000, "µs": 1_000, "μs": 1_000, "ms": 1_000_000, "s": 10**9, "m": 60 * 10**9, "h": 3600 * 10**9}


def parse_duration(text: str) -> Duration:
    s = text
    sign = 1
    if s[:1] in "+-" and s:
        sign = -1 if s[0] == "-" else 1
        s = s[1:]
    if s == "0":
        return Duration(0)
    if not s:
        raise EvalError(f"invalid duration {text!r}")
    total = 0
    pos = 0
    while pos < len(s):
        m = _DURATION_PART.match(s, pos)
        if m is None or m.group(1) in ("", "."):
            raise EvalError(f"invalid duration {text!r}")
        number, unit = m.group(1), m.group(2)
        whole, _, frac = number.partition(".")
        scale = _UNIT_NS[unit]
        total += int(whole or "0") * scale
        if frac:
            total += int(frac) * scale // 10 ** len(frac)
        pos = m.end()
    total *= sign
    # CEL durations span about ±10,000 years (google.protobuf.Duration's range).
    if abs(total) > 315_576_000_000 * 10**9:
        raise EvalError(f"invalid duration {text!r}: out of range")
    return Duration(total)


def _duration(x: Any) -> Duration:
    if type(x) is Duration:
        return x
    if type(x) is str:
        return parse_duration(x)
    raise _overload("duration", x)


def _to_int(x: Any) -> int:
    t = type(x)
    if t is int:
        return x  # type: ignore[no-any-return]
    if t is UInt:
        return _int(int(x))
    if t is float:
        # cel-go refuses both ends (doubleToInt64Checked: v <= MinInt64 || v >= MaxInt64, as
        # doubles), so int(-9223372036854775808.0) is an error like int(9223372036854775808.0)
        if math.isnan(x) or math.isinf(x) or not (_INT_MIN < x < 2.0**63):
            raise EvalError("double out of range for int")
        return int(x)
    if t is str:
        try:
            return _int(int(x, 10))
        except ValueError:
            raise EvalError(f"cannot convert {x!r} to int") from None
    if t is Duration:
        return x.ns // 10**9 if x.ns >= 0 else -((-x.ns) // 10**9)  # type: ignore[no-any-return]
    if t is Timestamp:
        return timestamp_seconds(x)
    raise _overload("int", x)


def _to_uint(x: Any) -> UInt:
    t = type(x)
    if t in (int, UInt):
        return _uint(int(x))
    if t is float:
        if math.isnan(x) or not (0 <= x < 2.0**64):
            raise EvalError("double out of range for uint")
        return UInt(int(x))
    if t is str:
        try:
            return _uint(int(x, 10))
        except ValueError:
            raise EvalError(f"cannot convert {x!r} to uint") from None
    raise _overload("uint", x)


def _to_double(x: Any) -> float:
    t = type(x)
    if t in (int, UInt, float):
        return float(x)
    if t is str:
        try:
            return float(x)
        except ValueError:
            raise EvalError(f"cannot convert {x!r} to double") from None
    raise _overload("double", x)


def _format_double(x: float) -> str:
    if math.isnan(x):
        return "NaN"
    if math.isinf(x):
        return "+Inf" if x > 0 else "-Inf"
    return repr(x) if not x.is_integer() or abs(x) >= 1e21 else str(int(x))


def _to_string(x: Any) -> str:
    t = type(x)
    if t is str:
        return x  # type: ignore[no-any-return]
    if t is bool:
        return "true" if x else "false"
    if t in (int, UInt):
        return str(int(x))
    if t is float:
        return _format_double(x)
    if t is bytes:
        try:
            return x.decode("utf-8")  # type: ignore[no-any-return]
        except UnicodeDecodeError:
            raise EvalError("invalid UTF-8 in bytes, cannot convert to string") from None
    if t is Duration:
        seconds = x.ns / 10**9
        return (str(int(seconds)) if seconds.is_integer() else repr(seconds)) + "s"
    if t is Timestamp:
        return format_timestamp(x)
    raise _overload("string", x)


def _to_bool(x: Any) -> bool:
    if type(x) is bool:
        return bool(x)
    if type(x) is str:
        if x in ("1", "t", "T", "true", "TRUE", "True"):
            return True
        if x in ("0", "f", "F", "false", "FALSE", "False"):
            return False
        raise EvalError(f"type conversion error from 'string' to 'bool': {x!r}")
    raise _overload("bool", x)


def _to_bytes(x: Any) -> bytes:
    if type(x) is bytes:
        return bytes(x)
    if type(x) is str:
        return x.encode("utf-8")
    raise _overload("bytes", x)


def _dyn(x: Any) -> Any:
    return x
