"""The string formatting of cel-go's strings extension (ext/strings.go, ext/formatting.go), which
the Kubernetes CEL environment includes: `"...".format([args])` and `strings.quote(s)`.
"""

from __future__ import annotations

import math
from typing import Any

from policylint.k8s.cel.stdlib import _format_double, _to_string
from policylint.k8s.cel.values import MAX_LENGTH, Duration, EvalError, TooLarge, Type, UInt, _overload, type_name

_QUOTED = {
    "\a": "\\a",
    "\b": "\\b",
    "\f": "\\f",
    "\n": "\\n",
    "\r": "\\r",
    "\t": "\\t",
    "\v": "\\v",
    "\\": "\\\\",
    '"': '\\"',
}


def quote(s: Any) -> str:
    """`strings.quote`: the string as a double-quoted CEL literal; only the C escapes, the
    backslash and the double quote are escaped, every other character is kept (as cel-go does)."""
    if type(s) is not str:
        raise _overload("strings.quote", s)
    return '"' + "".join(_QUOTED.get(c, c) for c in s) + '"'


def _special(x: float) -> str | None:
    """cel-go's spelling of a double no clause can write as digits."""
    if math.isnan(x):
        return "NaN"
    if math.isinf(x):
        return "Infinity" if x > 0 else "-Infinity"
    return None


def _as_string(x: Any) -> str:
    """`%s`: strings as they are, other scalars as `string()` writes them (doubles as
    `Infinity`, not `+Inf`), lists and maps as `[a, b]` and `{k: v}` with the keys in the order
    of their text."""
    t = type(x)
    if t is str:
        return x  # type: ignore[no-any-return]
    if x is None:
        return "null"
    if t is float:
        return _special(x) or _format_double(x)
    if t is bytes:
        return x.decode("utf-8", "replace")  # type: ignore[no-any-return]
    if t is Type:
        return x.name  # type: ignore[no-any-return]
    if t is list:
        return "[" + ", ".join(_as_string(v) for v in x) + "]"
    if t is dict:
        entries = sorted((_as_string(k), _as_string(v)) for k, v in x.items())
        return "{" + ", ".join(f"{k}: {v}" for k, v in entries) + "}"
    if t in (bool, int, UInt, Duration) or type_name(x) == "google.protobuf.Timestamp":
        return _to_string(x)
    raise EvalError(
        f"error during formatting: string clause can only be used on strings, bools, bytes, ints, doubles, maps, lists, types, durations, and timestamps, was given {type_name(x)}"
    )


def _integer(x: Any, clause: str, base: int, upper: bool = False) -> str:
    t = type(x)
    if t is bool and base == 2:
        return "1" if x else "0"
    if t in (int, UInt):
        digits = format(abs(int(x)), {2: "b", 8: "o", 10: "d", 16: "X" if upper else "x"}[base])
        return ("-" if x < 0 else "") + digits
    if base == 16 and t in (str, bytes):
        data = x.encode("utf-8") if t is str else x
        return data.hex().upper() if upper else data.hex()  # type: ignore[no-any-return]
    if base == 10 and t is float and _special(x) is not None:
        return _special(x)  # type: ignore[return-value]
    if base == 2:
        raise EvalError(f"error during formatting: only integers and bools can be formatted as binary, was given {type_name(x)}")
    if base == 16:
        raise EvalError(
            f"error during formatting: only integers, byte buffers, and strings can be formatted as hex, was given {type_name(x)}"
        )
    raise EvalError(f"error during formatting: {clause} clause can only be used on integers, was given {type_name(x)}")


def _floating(x: Any, verb: str, precision: int) -> str:
    t = type(x)
    if t not in (int, UInt, float):
        clause = "fixed-point" if verb == "f" else "scientific"
        raise EvalError(f"error during formatting: {clause} clause can only be used on doubles, was given {type_name(x)}")
    value = float(x)
    return _special(value) or f"{value:.{precision}{verb}}"


def format_string(template: Any, args: Any) -> str:
    """`template.format(args)`: `%s`, `%d`, `%f`/`%e` (with an optional `.precision`, 6 by
    default), `%b`, `%o`, `%x`, `%X`, and `%%` for a percent sign, each clause taking the next
    argument of the list."""
    if type(template) is not str or type(args) is not list:
        raise _overload("format", template, args)
    out: list[str] = []
    size = 0
    pos, used, n = 0, 0, len(template)
    while pos < n:
        percent = template.find("%", pos)
        if percent < 0:
            out.append(template[pos:])
            break
        out.append(template[pos:percent])
        pos = percent + 1
        if template.startswith("%", pos):
            out.append("%")
            pos += 1
            continue
        precision = None
        if template.startswith(".", pos):
            end = pos + 1
            while end < n and template[end].isdigit():
                end += 1
            if end == pos + 1:
                raise EvalError("could not parse formatting clause: precision must be a number")
            if end - pos - 1 > len(str(MAX_LENGTH)) or int(template[pos + 1 : end]) > MAX_LENGTH:
                # the digits alone would pass the length bound: stop before building them
                raise TooLarge(f"a formatting precision past {MAX_LENGTH} digits")
            precision, pos = int(template[pos + 1 : end]), end
        verb = template[pos : pos + 1]
        if verb not in ("s", "d", "f", "e", "b", "o", "x", "X"):
            raise EvalError(f'could not parse formatting clause: unrecognized formatting clause "{verb}"')
        pos += 1
        if used >= len(args):
            raise EvalError(f"index {used} out of range")
        arg = args[used]
        used += 1
        if verb == "s":
            piece = _as_string(arg)
        elif verb in ("f", "e"):
            piece = _floating(arg, verb, 6 if precision is None else precision)
        else:
            clause = {"d": "decimal", "o": "octal"}.get(verb, "")
            piece = _integer(arg, clause, {"d": 10, "b": 2, "o": 8, "x": 16, "X": 16}[verb], verb == "X")
        size += len(piece)
        if size > MAX_LENGTH:
            raise TooLarge(f"the formatted string is longer than {MAX_LENGTH} characters")
        out.append(piece)
    return "".join(out)
