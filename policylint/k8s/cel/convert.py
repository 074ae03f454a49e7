"""Values from YAML the way the API server converts them for CEL under their schema
(k8s.io/apiserver pkg/cel/common/valuesunstructured.go, after defaulting and pruning), and the
escaping of property names CEL cannot spell (pkg/cel/escaping.go).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Mapping
from typing import Any

from policylint.identity import IdentityMap
from policylint.k8s.cel.parser import _RESERVED
from policylint.k8s.cel.stdlib import parse_duration
from policylint.k8s.cel.times import parse_timestamp
from policylint.k8s.cel.values import _BAD, _NONE, EvalError

# k8s.io/apiserver pkg/cel/escaping.go: property names CEL cannot spell are escaped.
CEL_RESERVED = frozenset({"true", "false", "null", "in", *_RESERVED})
_ESCAPE_PIECE = re.compile(r"__|[-./]|[^a-zA-Z0-9-./_]")


def escape(name: str) -> str | None:
    """The name a property has in CEL (`namespace` -> `__namespace__`, `a-b` -> `a__dash__b`);
    None when it has none (it is not accessible)."""
    if not name or name[0].isdigit():
        return None
    if name in CEL_RESERVED:
        return f"__{name}__"
    ok = True

    def piece(m: re.Match[str]) -> str:
        nonlocal ok
        s = m.group()
        if s == "__":
            return "__underscores__"
        if s in _PIECES:
            return _PIECES[s]
        ok = False
        return ""

    out = _ESCAPE_PIECE.sub(piece, name)
    return out if ok else None


_PIECES = {".": "__dot__", "-": "__dash__", "/": "__slash__"}


@functools.lru_cache(maxsize=4096)
def _escaped(name: str) -> str | None:
    return escape(name) if not name.isidentifier() or "__" in name or name in CEL_RESERVED else name


# The memo's entry for the names of required fields found missing (the set of CEL names).
MISSING = -1


def to_cel(value: Any, schema: Mapping[str, Any], memo: dict[int, Any] | None = None) -> Any:
    """`value` (from YAML) as the API server hands it to CEL under `schema`, after its defaulting:
    nulls of non-nullable fields dropped, defaults set, unknown fields pruned, property names
    escaped, integers of `number` fields as doubles, `duration` strings as durations, `date-time`
    and `date` strings as timestamps. A value of
    the wrong type (or not one of its `enum`) becomes `BAD`. `memo` (id of a YAML map or list ->
    its CEL value) lets nested schema nodes reuse what their ancestor converted, and collects
    the missing required fields (`MISSING`)."""
    return _to(_info(schema), value, memo)


def _to(info: _Info, value: Any, memo: dict[int, Any] | None) -> Any:
    t = type(value)
    if memo is not None and (t is dict or t is list):
        got = memo.get(id(value))
        if got is not None and got[0] is info.node:
            return got[1]
        out = _convert(info, value, memo)
        memo[id(value)] = (info.node, out)
        return out
    return _convert(info, value, memo)


class _Info:
    """What conversion reads of a schema node, worked out once per node (its children's too)."""

    __slots__ = (
        "additional",
        "convert",
        "defaults",
        "enum",
        "fields",
        "items",
        "kind",
        "node",
        "nullable",
        "properties",
        "required",
        "scalar",
        "string",
    )

    def __init__(self, node: Mapping[str, Any]) -> None:
        self.node = node  # keeps the node alive while its id is a key of _INFO
        self.nullable = bool(node.get("nullable"))
        properties = node.get("properties")
        additional = node.get("additionalProperties")
        kind = _kind(node)
        self.kind = kind
        props = properties if isinstance(properties, dict) else {}
        # name -> (its CEL name or None, its schema's info)
        self.properties = {k: (_escaped(k) if isinstance(k, str) else None, _info(sub)) for k, sub in props.items()}
        # (name, its CEL name, its schema's info, its default converted once when a scalar, else _NONE)
        self.defaults: list[tuple[Any, str | None, _Info, Any]] = []
        for k, sub in props.items():
            if "default" in sub:
                default = sub["default"]
                once = _convert(_info(sub), default, None) if type(default) not in (dict, list) else _NONE
                self.defaults.append((k, _escaped(k), _info(sub), once))
        self.required = [
            (k, _escaped(k)) for k in node.get("required", ()) if isinstance(k, str) and "default" not in props.get(k, {})
        ]
        self.additional = _info(additional) if isinstance(additional, dict) else None
        items = node.get("items")
        self.items = _info(items) if isinstance(items, dict) else None
        enum = node.get("enum")
        self.enum = enum if isinstance(enum, list) else None
        # A string without an enum: a `str` value is its own CEL value (most values).
        self.string = kind == "string" and self.enum is None
        if kind == "object" and node.get("x-kubernetes-preserve-unknown-fields"):
            self.kind = kind = "object+preserve"
        # The conversion of the node's values, picked here once rather than per value.
        self.scalar = self.convert = _CONVERTERS.get(kind, _any)
        # name -> its schema's info, where the node converts a map as an object (its fields by
        # name): what a rule's key follows down (policylint.k8s.cel.projection).
        self.fields = {k: sub for k, (_, sub) in self.properties.items()} if kind.startswith("object") else {}
        if self.enum is not None and kind not in _UNENUMERATED:
            self.convert = _enumerated


def _kind(node: Mapping[str, Any]) -> str:
    """What a schema node converts its values to: an object, a map, a list, a scalar type or
    format, "int-or-string", "preserve" (a map kept as it is), "empty" or "any"."""
    wanted = node.get("type")
    properties = node.get("properties")
    additional = node.get("additionalProperties")
    if node.get("x-kubernetes-int-or-string"):
        return "int-or-string"
    if wanted == "object" or (wanted is None and (properties is not None or additional is not None)):
        if properties is not None or node.get("x-kubernetes-embedded-resource"):
            return "object"
        if isinstance(additional, dict):
            return "map"
        return "preserve" if node.get("x-kubernetes-preserve-unknown-fields") else "empty"
    if wanted == "string" and node.get("format") in ("duration", "date-time", "date"):
        return str(node["format"])  # a CEL duration or timestamp (k8s.io/apiserver pkg/cel/common/values.go)
    if isinstance(wanted, str):
        return wanted
    return "any"


_INFO: IdentityMap[Mapping[str, Any], _Info] = IdentityMap()


def _info(schema: Mapping[str, Any]) -> _Info:
    got = _INFO.get(schema)
    if got is not None:
        return got
    if len(_INFO) > 100_000:
        _INFO.clear()  # schemas of CRDs read from many inputs in one process (tests): bounded
    info = _INFO[schema] = _Info(schema)
    return info


def _convert(info: _Info, value: Any, memo: dict[int, Any] | None) -> Any:
    if value is None:
        return None if info.nullable else _BAD
    return info.convert(info, value, memo)


# One converter per kind of schema node, picked once per node (`_Info.convert`): each takes a
# value that is not None (`_convert` answers for null).
_Converter = Callable[["_Info", Any, "dict[int, Any] | None"], Any]


def _object(info: _Info, value: Any, memo: dict[int, Any] | None) -> Any:
    if type(value) is not dict:
        return _BAD
    properties = info.properties
    preserve = info.kind == "object+preserve"
    out: dict[Any, Any] = {}
    for k, v in value.items():
        entry = properties.get(k)
        if entry is None:
            if preserve and type(k) is str:
                name = _escaped(k)
                if name is not None:
                    out[name] = _plain(v)
            continue  # pruned by the API server (PL702's finding)
        name, sub = entry
        if name is None:
            continue
        tv = type(v)
        if tv is str and sub.string:
            out[name] = v
        elif v is None:
            if sub.nullable:  # else a null is an unset field
                out[name] = None
        elif memo is not None and (tv is dict or tv is list):
            got = memo.get(id(v))
            if got is not None and got[0] is sub.node:
                out[name] = got[1]
            else:
                converted = out[name] = sub.convert(sub, v, memo)
                memo[id(v)] = (sub.node, converted)
        else:
            out[name] = sub.convert(sub, v, memo)
    if info.defaults or info.required:
        _defaults_and_required(info, value, out, memo)
    return out


def _defaults_and_required(info: _Info, value: dict[Any, Any], out: dict[Any, Any], memo: dict[int, Any] | None) -> None:
    """The defaults the API server sets on an object's unset fields, and (into the memo) the
    required fields it does not have."""
    for k, name, sub, once in info.defaults:
        if name is not None and name not in out and value.get(k) is None:
            out[name] = once if once is not _NONE else _convert(sub, sub.node["default"], None)
    if memo is not None:
        for k, name in info.required:
            if value.get(k) is None:
                memo.setdefault(MISSING, set()).add(name)  # PL703's finding


def _map(info: _Info, value: Any, memo: dict[int, Any] | None) -> Any:
    if type(value) is not dict:
        return _BAD
    additional = info.additional
    assert additional is not None
    nullable = additional.nullable
    return {k: _to(additional, v, memo) for k, v in value.items() if v is not None or nullable}


def _preserve(info: _Info, value: Any, memo: dict[int, Any] | None) -> Any:
    return _plain(value) if type(value) is dict else _BAD


def _empty(info: _Info, value: Any, memo: dict[int, Any] | None) -> Any:
    return {} if type(value) is dict else _BAD


def _array(info: _Info, value: Any, memo: dict[int, Any] | None) -> Any:
    if type(value) is not list:
        return _BAD
    items = info.items
    if items is None:
        return _plain(value)
    if items.string:
        return [v if type(v) is str else _to(items, v, memo) for v in value]
    return [_to(items, v, memo) for v in value]


def _int_or_string(info: _Info, value: Any, memo: dict[int, Any] | None) -> Any:
    t = type(value)
    if t is int or t is str:
        return value
    if t is float and value.is_integer():
        return int(value)
    return _BAD


def _string(info: _Info, value: Any, memo: dict[int, Any] | None) -> Any:
    return value if type(value) is str else _BAD


def _duration(info: _Info, value: Any, memo: dict[int, Any] | None) -> Any:
    if type(value) is not str:
        return _BAD
    try:
        return parse_duration(value)
    except EvalError:
        return _BAD


# The API server reads `date-time` and `date` with strfmt, which admits more layouts than RFC 3339
# (a lowercase t, no seconds, a space): what this parse does not read is left BAD, so that a rule
# reading it is not reported rather than reported on a string CEL never sees.
def _date_time(info: _Info, value: Any, memo: dict[int, Any] | None) -> Any:
    if type(value) is not str:
        return _BAD
    try:
        return parse_timestamp(value.upper())
    except EvalError:
        return _BAD


def _date(info: _Info, value: Any, memo: dict[int, Any] | None) -> Any:
    if type(value) is not str:
        return _BAD
    try:
        return parse_timestamp(value + "T00:00:00Z")
    except EvalError:
        return _BAD


def _integer(info: _Info, value: Any, memo: dict[int, Any] | None) -> Any:
    t = type(value)
    if t is int:
        return value
    if t is float and value.is_integer():
        return int(value)  # kubectl sends an integral float as an integer
    return _BAD


def _number(info: _Info, value: Any, memo: dict[int, Any] | None) -> Any:
    t = type(value)
    return float(value) if (t is int or t is float) else _BAD


def _boolean(info: _Info, value: Any, memo: dict[int, Any] | None) -> Any:
    return value if type(value) is bool else _BAD


def _any(info: _Info, value: Any, memo: dict[int, Any] | None) -> Any:
    return _plain(value)


def _enumerated(info: _Info, value: Any, memo: dict[int, Any] | None) -> Any:
    """A scalar kind with an `enum`: a value not among it is BAD (PL703's finding; the API
    server does not run the rules then), else the kind's own conversion."""
    enum = info.enum
    assert enum is not None
    if type(value) in (str, int, float, bool) and value not in enum:
        return _BAD
    return info.scalar(info, value, memo)


_CONVERTERS: dict[str, _Converter] = {
    "object": _object,
    "object+preserve": _object,
    "map": _map,
    "preserve": _preserve,
    "empty": _empty,
    "array": _array,
    "int-or-string": _int_or_string,
    "string": _string,
    "duration": _duration,
    "date-time": _date_time,
    "date": _date,
    "integer": _integer,
    "number": _number,
    "boolean": _boolean,
}
# The kinds whose `enum` is not checked: a container's, and int-or-string's.
_UNENUMERATED = frozenset({"object", "object+preserve", "map", "preserve", "empty", "array", "int-or-string"})


def _plain(value: Any) -> Any:
    """A value without a schema (`x-kubernetes-preserve-unknown-fields`): as it is."""
    t = type(value)
    if t is dict:
        return {k: _plain(v) for k, v in value.items() if v is not None}
    if t is list:
        return [_plain(v) for v in value]
    if t in (str, int, float, bool) or value is None:
        return value
    return str(value)  # timestamps and other YAML scalars PyYAML types: strings to the API server
