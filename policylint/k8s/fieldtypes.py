"""JSON types of the core object fields policylint reads, and what is malformed in an object.

The API server validates every object against its schema before storing it: the
OpenAPI schema of a CRD (Gateway API kinds) or the Go types of a built-in kind
(Service). An object with a field of the wrong JSON type — `parentRefs` as a
mapping, `rules: 5`, a listener `port: "eighty"` — is rejected as a whole, so
no controller ever sees it. PL010 (`policylint.rules.malformed`) reports each
such field once; the topology (`policylint.semantics.topology`) and the target resolution
(`policylint.k8s.index`) treat what depends on a malformed part as unknown rather
than as absent, so that no other rule reports a consequence of the same cause.

The table below is data: per (group, kind), the field paths the topology reads
and the JSON type the schema gives them. Sources:

- Gateway API v1.6.1, standard channel: `config/crd/standard/gateway.networking.k8s.io_*.yaml`
  in github.com/kubernetes-sigs/gateway-api (the `openAPIV3Schema` of version v1; the other
  served versions have the same types), and the API reference at
  https://gateway-api.sigs.k8s.io/reference/spec/ (Gateway, Listener, AllowedRoutes,
  RouteGroupKind, ParentReference, BackendRef, HTTPRequestMirrorFilter, ListenerSet,
  ReferenceGrant). Fields of the experimental channel only are not checked: a
  standard-channel API server prunes them instead of rejecting the object.
- Kubernetes core/v1 Service: https://kubernetes.io/docs/reference/kubernetes-api/service-resources/service-v1/
  (ServiceSpec.type, ServicePort.name, .port int32, .targetPort IntOrString).

Null is not a wrong type: the API server prunes a null field of a CRD object that is not
nullable ("Defaulting and Nullable" in the Kubernetes CRD documentation) and decodes it to
the zero value for built-in kinds, so a null field is treated as absent. A null *list
item* is malformed (it is not the object or string the item schema requires).
"""

from __future__ import annotations

import builtins
import functools
import math
from collections.abc import Iterable, Mapping
from dataclasses import field
from typing import Any

from policylint.identity import IdentityMap
from policylint.values import frozen, record

PathParts = tuple[str | int, ...]

OBJECT = "object"
ARRAY = "array"
STRING = "string"
INTEGER = "integer"
INT_OR_STRING = "int-or-string"

EXPECTED: Mapping[str, str] = {
    OBJECT: "a mapping",
    ARRAY: "a list",
    STRING: "a string",
    INTEGER: "an integer",
    INT_OR_STRING: "an integer or a string",
}

GATEWAY_GROUP = "gateway.networking.k8s.io"

# A field table: (path relative to the fragment's root, JSON type[, the rule that reports it]).
# `[*]` is every list item, `.*` every value of a map; "" is the fragment's root itself. A field
# another rule already reports (with more to say about it) is still malformed for the topology,
# but PL010 leaves the finding to that rule: one finding per cause.
Field = tuple[str, str] | tuple[str, str, str]
Fields = tuple[Field, ...]


def _at(prefix: str, fields: Fields) -> Fields:
    """A fragment placed at `prefix` (shared sub-schemas: references, selectors, listeners)."""
    out: list[Field] = []
    for path, kind, *owner in fields:
        if not path:
            full = prefix
        elif path.startswith("["):
            full = prefix + path
        else:
            full = f"{prefix}.{path}"
        if owner:
            out.append((full, kind, owner[0]))
        else:
            out.append((full, kind))
    return tuple(out)


# LabelSelector (apimachinery meta/v1), as the Gateway CRD embeds it. PL506 (invalid-label-syntax)
# validates label values, operators and `values`, types included.
_LABEL_SELECTOR: Fields = (
    ("", OBJECT),
    ("matchLabels", OBJECT),
    ("matchLabels.*", STRING, "PL506"),
    ("matchExpressions", ARRAY),
    ("matchExpressions[*]", OBJECT),
    ("matchExpressions[*].key", STRING),
    ("matchExpressions[*].operator", STRING, "PL506"),
    ("matchExpressions[*].values", ARRAY, "PL506"),
    ("matchExpressions[*].values[*]", STRING, "PL506"),
)
# SecretObjectReference, ObjectReference and ParentGatewayReference: all string fields.
_OBJECT_REF: Fields = (("", OBJECT), ("group", STRING), ("kind", STRING), ("name", STRING), ("namespace", STRING))
# ParentReference.
_PARENT_REF: Fields = (*_OBJECT_REF, ("sectionName", STRING), ("port", INTEGER))
# BackendObjectReference (BackendRef, HTTPBackendRef, GRPCBackendRef, a mirror's backendRef).
_BACKEND_REF: Fields = (*_OBJECT_REF, ("port", INTEGER))
# Listener (Gateway) and ListenerEntry (ListenerSet): the same fields.
_LISTENER: Fields = (
    ("", OBJECT),
    ("name", STRING),
    ("hostname", STRING),
    ("port", INTEGER),
    ("protocol", STRING),
    ("tls", OBJECT),
    ("tls.mode", STRING),
    ("tls.certificateRefs", ARRAY),
    *_at("tls.certificateRefs[*]", _OBJECT_REF),
    ("allowedRoutes", OBJECT),
    ("allowedRoutes.namespaces", OBJECT),
    ("allowedRoutes.namespaces.from", STRING),
    *_at("allowedRoutes.namespaces.selector", _LABEL_SELECTOR),
    ("allowedRoutes.kinds", ARRAY),
    ("allowedRoutes.kinds[*]", OBJECT),
    ("allowedRoutes.kinds[*].group", STRING),
    ("allowedRoutes.kinds[*].kind", STRING),
)
_MIRROR_FILTERS: Fields = (
    ("", ARRAY),
    ("[*]", OBJECT),
    ("[*].requestMirror", OBJECT),
    *_at("[*].requestMirror.backendRef", _BACKEND_REF),
)


def _route(*, hostnames: bool, filters: bool) -> Fields:
    backend: Fields = _BACKEND_REF + (_at("filters", _MIRROR_FILTERS) if filters else ())
    rule: Fields = (
        ("", OBJECT),
        ("name", STRING),
        ("backendRefs", ARRAY),
        *_at("backendRefs[*]", backend),
        *(_at("filters", _MIRROR_FILTERS) if filters else ()),
    )
    return (
        ("spec", OBJECT),
        ("spec.parentRefs", ARRAY),
        *_at("spec.parentRefs[*]", _PARENT_REF),
        *((("spec.hostnames", ARRAY), ("spec.hostnames[*]", STRING)) if hostnames else ()),
        ("spec.rules", ARRAY),
        *_at("spec.rules[*]", rule),
    )


_GATEWAY_TLS: Fields = (
    ("spec.tls", OBJECT),
    ("spec.tls.backend", OBJECT),
    *_at("spec.tls.backend.clientCertificateRef", _OBJECT_REF),
    ("spec.tls.frontend", OBJECT),
    ("spec.tls.frontend.default", OBJECT),
    ("spec.tls.frontend.default.validation", OBJECT),
    ("spec.tls.frontend.default.validation.caCertificateRefs", ARRAY),
    *_at("spec.tls.frontend.default.validation.caCertificateRefs[*]", _OBJECT_REF),
    ("spec.tls.frontend.perPort", ARRAY),
    ("spec.tls.frontend.perPort[*]", OBJECT),
    ("spec.tls.frontend.perPort[*].port", INTEGER),
    ("spec.tls.frontend.perPort[*].tls", OBJECT),
    ("spec.tls.frontend.perPort[*].tls.validation", OBJECT),
    ("spec.tls.frontend.perPort[*].tls.validation.caCertificateRefs", ARRAY),
    *_at("spec.tls.frontend.perPort[*].tls.validation.caCertificateRefs[*]", _OBJECT_REF),
)


@frozen
class KindSchema:
    source: str  # where the types come from, for the finding's message
    fields: Fields


_CRD = "the {kind} CRD schema, Gateway API standard channel"

SCHEMAS: Mapping[tuple[str, str], KindSchema] = {
    (GATEWAY_GROUP, "Gateway"): KindSchema(
        _CRD,
        (
            ("spec", OBJECT),
            ("spec.gatewayClassName", STRING),
            ("spec.listeners", ARRAY),
            *_at("spec.listeners[*]", _LISTENER),
            ("spec.allowedListeners", OBJECT),
            ("spec.allowedListeners.namespaces", OBJECT),
            ("spec.allowedListeners.namespaces.from", STRING),
            *_at("spec.allowedListeners.namespaces.selector", _LABEL_SELECTOR),
            *_GATEWAY_TLS,
        ),
    ),
    (GATEWAY_GROUP, "ListenerSet"): KindSchema(
        _CRD,
        (
            ("spec", OBJECT),
            *_at("spec.parentRef", _OBJECT_REF),
            ("spec.listeners", ARRAY),
            *_at("spec.listeners[*]", _LISTENER),
        ),
    ),
    (GATEWAY_GROUP, "HTTPRoute"): KindSchema(_CRD, _route(hostnames=True, filters=True)),
    (GATEWAY_GROUP, "GRPCRoute"): KindSchema(_CRD, _route(hostnames=True, filters=True)),
    (GATEWAY_GROUP, "TLSRoute"): KindSchema(_CRD, _route(hostnames=True, filters=False)),
    (GATEWAY_GROUP, "TCPRoute"): KindSchema(_CRD, _route(hostnames=False, filters=False)),
    (GATEWAY_GROUP, "UDPRoute"): KindSchema(_CRD, _route(hostnames=False, filters=False)),
    (GATEWAY_GROUP, "ReferenceGrant"): KindSchema(
        _CRD,
        (
            ("spec", OBJECT),
            ("spec.from", ARRAY),
            ("spec.from[*]", OBJECT),
            ("spec.from[*].group", STRING),
            ("spec.from[*].kind", STRING),
            ("spec.from[*].namespace", STRING),
            ("spec.to", ARRAY),
            ("spec.to[*]", OBJECT),
            ("spec.to[*].group", STRING),
            ("spec.to[*].kind", STRING),
            ("spec.to[*].name", STRING),
        ),
    ),
    ("", "Service"): KindSchema(
        "the core/v1 Service type",
        (
            ("spec", OBJECT),
            ("spec.type", STRING),
            ("spec.ports", ARRAY),
            ("spec.ports[*]", OBJECT),
            ("spec.ports[*].name", STRING),
            ("spec.ports[*].port", INTEGER),
            ("spec.ports[*].targetPort", INT_OR_STRING),
        ),
    ),
}


# -- the walk ---------------------------------------------------------------------------------


@record(slots=True)
class _Node:
    """One field of the schema tree built from a kind's table."""

    type: str | None = None
    reported_by: str | None = None  # another rule reports this field's type (see Fields)
    fields: dict[str, _Node] = field(default_factory=dict)
    items: _Node | None = None  # `[*]`
    values: _Node | None = None  # `.*`
    # Some field below this one is a container with fields of its own to check: what `_walk_kept`
    # keeps (checking a map of scalars again costs what looking it up would).
    deep: bool = False
    # Its type, when nothing is below this field (no fields, items or values): only that is
    # checked, which `_walk_kept` does in its parent's loop rather than in a call of its own; ""
    # otherwise. `exact`: the one Python type of `type` when it has one (`_EXACT`), else None
    # (`has_type` decides).
    leaf: str = ""
    exact: builtins.type | None = None


def _tokens(path: str) -> list[str]:
    """`spec.listeners[*].allowedRoutes.kinds[*]` -> spec, listeners, [*], allowedRoutes, kinds, [*]."""
    out: list[str] = []
    for segment in path.split("."):
        stars = 0
        while segment.endswith("[*]"):
            segment, stars = segment[: -len("[*]")], stars + 1
        if segment:
            out.append(segment)
        out.extend(["[*]"] * stars)
    return out


def _tree(fields: Iterable[Field]) -> _Node:
    root = _Node(OBJECT)
    for path, kind, *owner in fields:
        node = root
        for token in _tokens(path):
            if token == "[*]":
                node.items = node.items or _Node()
                node = node.items
            elif token == "*":
                node.values = node.values or _Node()
                node = node.values
            else:
                node = node.fields.setdefault(token, _Node())
        node.type = kind
        node.reported_by = owner[0] if owner else None
    _mark_deep(root)
    return root


def _mark_deep(node: _Node) -> bool:
    """Mark the nodes with a container below them (`_Node.deep`); whether `node` is a container."""
    children = [*node.fields.values(), *(n for n in (node.items, node.values) if n is not None)]
    below = [_mark_deep(child) for child in children]
    node.deep = any(below)
    node.leaf = node.type if not children and node.type is not None else ""
    node.exact = _EXACT.get(node.type) if node.type is not None else None
    return bool(children)


@functools.cache
def _schema_tree(group: str, kind: str) -> _Node | None:
    schema = SCHEMAS.get((group, kind))
    return _tree(schema.fields) if schema is not None else None


def has_type(value: Any, kind: str) -> bool:
    """Whether `value` (as YAML or JSON decoded it) has the JSON type `kind`."""
    if kind == OBJECT:
        return type(value) is dict
    if kind == ARRAY:
        return type(value) is list
    if kind == STRING:
        return type(value) is str
    if kind in (INTEGER, INT_OR_STRING):
        if kind == INT_OR_STRING and type(value) is str:
            return True
        if type(value) is int:
            return True
        # kubectl converts YAML to JSON through float64: `80.0` reaches the API server as 80.
        return type(value) is float and math.isfinite(value) and value.is_integer()
    return True


@frozen
class FieldProblem:
    """A field whose value has the wrong JSON type."""

    path: PathParts
    expected: str  # OBJECT, ARRAY, STRING, INTEGER or INT_OR_STRING
    value: Any
    reported_by: str | None = None  # the rule that reports it, when not PL010


@frozen
class Malformed:
    """What is malformed in one object: its field problems and two questions about a path.

    `broken(path)`: the value at `path` cannot be read — it, or a field above it, has the
    wrong type. `tainted(path)`: broken, or something inside it is malformed.
    """

    source: str = ""
    problems: tuple[FieldProblem, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.problems)

    def broken(self, *path: str | int) -> bool:
        return any(path[: len(p.path)] == p.path for p in self.problems)

    def tainted(self, *path: str | int) -> bool:
        n = len(path)
        return any(p.path[:n] == path or path[: len(p.path)] == p.path for p in self.problems)


WELL_FORMED = Malformed()


# Maps and lists found well-formed, each with the schema node it was checked under
# (`check_object`'s `clean`).
Clean = IdentityMap[Any, "_Node"]


def check_object(group: str, kind: str, data: Mapping[str, Any], clean: Clean | None = None) -> Malformed:
    """The fields of an object of (group, kind) that have the wrong JSON type, in table order.

    A container of the wrong type is reported alone: what it should contain cannot be read.
    `clean`: the maps and lists of earlier objects found well-formed, kept by the caller across
    objects: the documents share the maps and lists of identical content (policylint.input.sharing),
    and a subtree found well-formed under a schema node is well-formed there again, wherever it
    sits (a well-formed subtree's answer does not depend on its path), so it is not walked again.
    """
    tree = _schema_tree(group, kind)
    if tree is None:
        return WELL_FORMED
    problems: list[FieldProblem] = []
    if clean is None:
        _walk(tree, data, [], problems)
    else:
        _walk_kept(tree, data, [], problems, clean)
    if not problems:
        return WELL_FORMED
    schema = SCHEMAS[(group, kind)]
    return Malformed(schema.source.format(kind=kind), tuple(problems))


# has_type for the kinds a type check can be written inline for.
_EXACT: dict[str, type] = {OBJECT: dict, ARRAY: list, STRING: str}


def _walk(node: _Node, value: Any, path: list[str | int], out: list[FieldProblem]) -> None:
    # `path` is one list for the whole walk, extended and shortened as it descends: a tuple is
    # made only for a problem (most objects have none, and this walk visits every field the
    # rules read, of every object).
    kind = node.type
    if kind is not None:
        exact = _EXACT.get(kind)
        if not (type(value) is exact if exact is not None else has_type(value, kind)):
            out.append(FieldProblem(tuple(path), kind, value, node.reported_by))
            return
    if type(value) is dict:
        for key, child in node.fields.items():
            sub = value.get(key)
            if sub is not None:
                path.append(key)
                _walk(child, sub, path, out)
                path.pop()
        if node.values is not None:
            for key, sub in value.items():
                if sub is not None:
                    path.append(key)
                    _walk(node.values, sub, path, out)
                    path.pop()
    elif type(value) is list and node.items is not None:
        for i, item in enumerate(value):
            if item is None:
                out.append(FieldProblem((*path, i), node.items.type or OBJECT, None, node.items.reported_by))
            else:
                path.append(i)
                _walk(node.items, item, path, out)
                path.pop()


def _walk_kept(node: _Node, value: Any, path: list[str | int], out: list[FieldProblem], clean: Clean) -> None:
    # `_walk`, skipping the maps and lists `clean` holds under this very node, and adding those
    # it finds well-formed. A scalar is not kept: reading it again costs what looking it up would.
    kind = node.type
    if kind is not None:
        exact = _EXACT.get(kind)
        if not (type(value) is exact if exact is not None else has_type(value, kind)):
            out.append(FieldProblem(tuple(path), kind, value, node.reported_by))
            return
    cls = type(value)
    if cls is not dict and (cls is not list or node.items is None):
        return
    deep = node.deep
    if deep and clean.get(value) is node:
        return
    found = len(out)
    if cls is dict:
        # A leaf's type is checked here, as the call of `_walk_kept` for it would check it before
        # returning: most fields of most objects are leaves (names, ports, hostnames), and a call
        # each was most of the walk.
        for key, child in node.fields.items():
            sub = value.get(key)
            if sub is not None:
                if not child.leaf:
                    path.append(key)
                    _walk_kept(child, sub, path, out, clean)
                    path.pop()
                elif not (type(sub) is child.exact if child.exact is not None else has_type(sub, child.leaf)):
                    out.append(FieldProblem((*path, key), child.leaf, sub, child.reported_by))
        if node.values is not None:
            _walk_values(node.values, value, path, out, clean)
    else:
        _walk_items(node.items, value, path, out, clean)
    if deep and len(out) == found:
        clean[value] = node


def _walk_values(values: _Node, value: dict[str, Any], path: list[str | int], out: list[FieldProblem], clean: Clean) -> None:
    """`_walk_kept` of each value of a map whose keys are any (`.*`), a leaf's type checked in place."""
    for key, sub in value.items():
        if sub is not None:
            if not values.leaf:
                path.append(key)
                _walk_kept(values, sub, path, out, clean)
                path.pop()
            elif not (type(sub) is values.exact if values.exact is not None else has_type(sub, values.leaf)):
                out.append(FieldProblem((*path, key), values.leaf, sub, values.reported_by))


def _walk_items(items: _Node | None, value: list[Any], path: list[str | int], out: list[FieldProblem], clean: Clean) -> None:
    """`_walk_kept` of each item of a list, a leaf's type checked in place."""
    assert items is not None
    for i, item in enumerate(value):
        if item is None:
            out.append(FieldProblem((*path, i), items.type or OBJECT, None, items.reported_by))
        elif not items.leaf:
            path.append(i)
            _walk_kept(items, item, path, out, clean)
            path.pop()
        elif not (type(item) is items.exact if items.exact is not None else has_type(item, items.leaf)):
            out.append(FieldProblem((*path, i), items.leaf, item, items.reported_by))


# -- how a value is named in messages ------------------------------------------------------------

_SHOWN = 40  # characters of a string shown in a message: enough to recognise it, bounded


def describe_value(value: Any) -> str:
    """A value as JSON would name it, bounded: `the number 5`, `the string 'eighty'`, `a list`."""
    if value is None:
        return "null"
    if type(value) is bool:
        return f"the boolean {'true' if value else 'false'}"
    if type(value) is int:
        # Never format a huge integer: its text is unbounded (and CPython refuses past 4300 digits).
        return f"the number {value}" if value.bit_length() <= 64 else "a number"
    if type(value) is float:
        return f"the number {value!r}" if math.isfinite(value) and abs(value) < 1e16 else "a number"
    if type(value) is str:
        shown = value if len(value) <= _SHOWN else value[:_SHOWN] + "..."
        return f"the string {shown!r}"
    if type(value) is list:
        return "a list"
    if type(value) is dict:
        return "a mapping"
    if isinstance(value, bytes):
        return "binary data"
    return f"a {type(value).__name__} value"


def type_hint(value: Any, expected: str) -> str:
    """A short fix for the usual YAML slips: an unquoted number where text belongs, and back."""
    if expected == STRING and type(value) in (int, float, bool):
        return " (quote it in YAML)"
    if expected in (INTEGER, INT_OR_STRING) and type(value) is str and value.strip().isdigit():
        return " (remove the quotes)"
    return ""
