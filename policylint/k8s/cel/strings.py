"""cel-go's string extensions (ext/strings.go) that Kubernetes enables: `charAt`, `indexOf`,
`lastIndexOf`, `lowerAscii`, `upperAscii`, `replace`, `split`, `substring`, `trim`, `join`.
"""

from __future__ import annotations

from typing import Any

from policylint.k8s.cel.stdlib import _str_args
from policylint.k8s.cel.values import MAX_LENGTH, EvalError, TooLarge, _overload, equals


def _lower_ascii(s: Any) -> str:
    _str_args("lowerAscii", s)
    return str(s.translate(_LOWER))


def _upper_ascii(s: Any) -> str:
    _str_args("upperAscii", s)
    return str(s.translate(_UPPER))


_LOWER = {c: c + 32 for c in range(ord("A"), ord("Z") + 1)}
_UPPER = {c: c - 32 for c in range(ord("a"), ord("z") + 1)}


def _char_at(s: Any, i: Any) -> str:
    if type(s) is not str or type(i) is not int:
        raise _overload("charAt", s, i)
    if i < 0 or i > len(s):
        raise EvalError(f"index out of range: {i}")
    return s[i : i + 1]


def _index_of(s: Any, sub: Any, start: Any = 0) -> int:
    if type(s) is list:
        return _list_index_of(s, sub)
    if type(s) is not str or type(sub) is not str or type(start) is not int:
        raise _overload("indexOf", s, sub)
    if start < 0 or start > len(s):
        raise EvalError(f"index out of range: {start}")
    return s.find(sub, start)


def _last_index_of(s: Any, sub: Any, end: Any = None) -> int:
    if type(s) is list:
        for i in range(len(s) - 1, -1, -1):
            if equals(s[i], sub):
                return i
        return -1
    if type(s) is not str or type(sub) is not str or (end is not None and type(end) is not int):
        raise _overload("lastIndexOf", s, sub)
    if end is None:
        return s.rfind(sub)
    if end < 0 or end > len(s):
        raise EvalError(f"index out of range: {end}")
    return s.rfind(sub, 0, end + len(sub))


def _list_index_of(items: list[Any], value: Any) -> int:
    for i, item in enumerate(items):
        if equals(item, value):
            return i
    return -1


def _replace(s: Any, old: Any, new: Any, limit: Any = -1) -> str:
    if type(s) is not str or type(old) is not str or type(new) is not str or type(limit) is not int:
        raise _overload("replace", s, old, new)
    # The result's length first: `s.replace('', s)` would build len(s) squared characters.
    found = len(s) + 1 if old == "" else s.count(old)
    if limit >= 0:
        found = min(found, limit)
    if len(s) + found * (len(new) - len(old)) > MAX_LENGTH:
        raise TooLarge(f"a value built by the rule is longer than {MAX_LENGTH}")
    return str(s.replace(old, new, limit))


def _split(s: Any, sep: Any, limit: Any = -1) -> list[str]:
    if type(s) is not str or type(sep) is not str or type(limit) is not int:
        raise _overload("split", s, sep)
    if limit == 0:
        return []
    if sep == "":
        chars = list(s)
        return chars if limit < 0 or limit >= len(chars) else [*chars[: limit - 1], "".join(chars[limit - 1 :])]
    return s.split(sep, -1 if limit < 0 else limit - 1)


def _substring(s: Any, start: Any, end: Any = None) -> str:
    if type(s) is not str or type(start) is not int or (end is not None and type(end) is not int):
        raise _overload("substring", s, start)
    stop = len(s) if end is None else end
    if start < 0 or start > len(s) or stop > len(s) or stop < start:
        raise EvalError(f"index out of range: {start}" if start < 0 or start > len(s) else f"index out of range: {stop}")
    return s[start:stop]


_CEL_SPACE = (
    "\t\n\v\f\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000"
)


def _trim(s: Any) -> str:
    _str_args("trim", s)
    return str(s.strip(_CEL_SPACE))


def _join(items: Any, sep: Any = "") -> str:
    if type(items) is not list or type(sep) is not str or any(type(x) is not str for x in items):
        raise _overload("join", items, sep)
    if sum(len(x) for x in items) + len(sep) * max(len(items) - 1, 0) > MAX_LENGTH:
        raise TooLarge(f"a value built by the rule is longer than {MAX_LENGTH}")
    return str(sep.join(items))
