"""The declarations the API server's static cost estimate reads: a CRD's structural schema as
CEL sees it, each node's CEL type with the bounds of its size (k8s.io/apiserver
pkg/cel/common/schemas.go `SchemaDeclType`, pkg/cel/types.go), for `estimate`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from policylint.k8s.cel.convert import escape

MAX_REQUEST_SIZE = 3 * 1024 * 1024  # k8s.io/apiserver pkg/apis/cel/config.go MaxRequestSizeBytes

# -- declarations: the schema as CEL sees it (k8s.io/apiserver pkg/cel/common/schemas.go) ------------


class Decl:
    """A DeclType's part the estimate reads: its kind, MaxElements, MinSerializedSize, fields
    (by CEL name), and element and key declarations."""

    __slots__ = ("elem", "fields", "key", "kind", "max_elements", "min_size")

    def __init__(self, kind: str, min_size: int, max_elements: int = 0) -> None:
        self.kind = kind  # object, list, map, string, bytes, duration, timestamp, bool, int, double, dyn
        self.min_size = min_size
        self.max_elements = max_elements
        self.fields: dict[str, Decl] = {}
        self.elem: Decl | None = None
        self.key: Decl | None = None


_STRING_KEY = Decl("string", 2)  # apiservercel.StringType: MaxElements 0
_SCALARS = {"boolean": Decl("bool", 4), "number": Decl("double", 1), "integer": Decl("int", 1)}


def _nonneg(v: Any) -> int | None:
    return max(v, 0) if type(v) is int else None


def _string_max(s: Mapping[str, Any]) -> int:
    """estimateMaxStringLengthPerRequest."""
    if s.get("x-kubernetes-int-or-string"):
        return MAX_REQUEST_SIZE - 2
    return {"duration": 32, "date": 12, "date-time": 32}.get(s.get("format"), MAX_REQUEST_SIZE - 2)  # type: ignore[arg-type]


def _with_type_and_object_meta(s: Mapping[str, Any]) -> Mapping[str, Any]:
    """WithTypeAndObjectMeta (apiextensions' model/schemas.go): a resource root's kind,
    apiVersion, metadata.name (at most 253) and metadata.generateName (252)."""
    props = s.get("properties")
    props = props if isinstance(props, dict) else {}

    def typed(p: Any, t: str) -> bool:
        return isinstance(p, dict) and p.get("type") == t

    meta = props.get("metadata")
    meta_props = meta.get("properties") if isinstance(meta, dict) else None
    if (
        typed(props.get("kind"), "string")
        and typed(props.get("apiVersion"), "string")
        and typed(meta, "object")
        and isinstance(meta_props, dict)
        and typed(meta_props.get("name"), "string")
        and typed(meta_props.get("generateName"), "string")
    ):
        return s
    meta_props = meta_props if isinstance(meta_props, dict) else {}

    def capped(existing: Any, most: int) -> dict[str, Any]:
        given = existing.get("maxLength") if isinstance(existing, dict) else None
        if type(given) is int and given < most:
            most = given
        return {"type": "string", "maxLength": most}

    out = dict(s)
    out["properties"] = {
        **props,
        "kind": {"type": "string"},
        "apiVersion": {"type": "string"},
        "metadata": {
            "type": "object",
            "properties": {
                "name": capped(meta_props.get("name"), 253),
                "generateName": capped(meta_props.get("generateName"), 252),
            },
        },
    }
    return out


def decl_type(s: Mapping[str, Any], resource_root: bool) -> Decl | None:
    """SchemaDeclType: None where the schema is not exposed to CEL."""
    if s.get("x-kubernetes-int-or-string"):
        most = _nonneg(s.get("maxLength"))
        return Decl("dyn", 1, most * 4 if most is not None else _string_max(s))
    if resource_root:
        s = _with_type_and_object_meta(s)
    t = s.get("type")
    if not isinstance(t, str):
        return None
    typed = _TYPED.get(t)
    return typed(s) if typed is not None else _SCALARS.get(t)


def _embedded(s: Mapping[str, Any]) -> Decl | None:
    """The declaration of a nested schema (an item, a value, a property)."""
    return decl_type(s, bool(s.get("x-kubernetes-embedded-resource")))


def _array(s: Mapping[str, Any]) -> Decl | None:
    items = s.get("items")
    if not isinstance(items, dict):
        return None
    elem = _embedded(items)
    if elem is None:
        return None
    most = _nonneg(s.get("maxItems"))
    d = Decl("list", 2, most if most is not None else (MAX_REQUEST_SIZE - 2) // (elem.min_size + 1))
    d.elem = elem
    return d


def _object(s: Mapping[str, Any]) -> Decl | None:
    additional = s.get("additionalProperties")
    if isinstance(additional, dict):
        elem = _embedded(additional)
        if elem is None:
            return None
        most = _nonneg(s.get("maxProperties"))
        d = Decl("map", 2, most if most is not None else (MAX_REQUEST_SIZE - 2) // (elem.min_size + 6))
        d.elem, d.key = elem, _STRING_KEY
        return d
    d = Decl("object", 2)
    required = s.get("required")
    required = {r for r in required if isinstance(r, str)} if isinstance(required, list) else set()
    props = s.get("properties")
    for name, prop in props.items() if isinstance(props, dict) else ():
        if not isinstance(prop, dict):
            continue
        field = _embedded(prop)
        if field is None:
            continue
        escaped = escape(name) if isinstance(name, str) else None
        if escaped is not None:
            d.fields[escaped] = field
        if name in required and prop.get("default") is None:
            d.min_size += len(str(name).encode()) + field.min_size + 4
    return d


# A string's format that CEL reads as another type: (type, its minimum size in bytes).
_FORMATTED = {"duration": ("duration", 3), "date": ("timestamp", 12), "date-time": ("timestamp", 21)}


def _string(s: Mapping[str, Any]) -> Decl | None:
    fmt = s.get("format")
    most = _nonneg(s.get("maxLength"))
    if fmt == "byte":
        return Decl("bytes", 2, most if most is not None else _string_max(s))
    formatted = _FORMATTED.get(fmt) if isinstance(fmt, str) else None
    if formatted is not None:
        return Decl(formatted[0], formatted[1], _string_max(s))
    if most is not None:
        return Decl("string", 2, most * 4)
    enum = s.get("enum")
    if isinstance(enum, list) and enum:
        return Decl("string", 2, max((len(e.encode()) for e in enum if isinstance(e, str)), default=0))
    return Decl("string", 2, _string_max(s))


# The schema types whose declaration depends on more than the type (`decl_type`); the others are `_SCALARS`.
_TYPED: dict[str, Callable[[Mapping[str, Any]], Decl | None]] = {"array": _array, "object": _object, "string": _string}
