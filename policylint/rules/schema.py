"""PL7xx: what the CRDs themselves say about the fields of an object.

Deprecated fields come from the CRDs' own descriptions (policylint.k8s.deprecations), the fields
an object may have from their schemas (policylint.k8s.schemas), both generated from the vendored
upstream CRDs. No rule here branches on a kind: the data names them.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from policylint.findings import Issue, Severity
from policylint.input.positions import format_path, join
from policylint.k8s.deprecations import deprecations
from policylint.k8s.objects import K8sObject
from policylint.project import Project
from policylint.rules.base import POLICY, Rule
from policylint.rules.hints import close_name
from policylint.semantics.topology import expand_pattern


class DeprecatedField(Rule):
    """A field its CRD marks deprecated is set: say what replaces it, as the controller's own warning does."""

    id = "PL701"
    name = "deprecated-field"
    severity = Severity.WARNING
    subjects = frozenset({POLICY})

    def check(self, project: Project) -> Iterable[Issue]:
        table = deprecations()
        for policy in project.resolution.policies():
            obj = policy.obj
            fields = table.get((obj.group, obj.kind, obj.version))
            if not fields:
                continue
            for field in fields:
                for path, _ in expand_pattern(obj.data, field.path):
                    instead = f": use {field.replacement} instead" if field.replacement else ""
                    message = (
                        f"{path} is deprecated in {obj.kind} {obj.version} (its CRD: {field.text!r}){instead};"
                        " the controller may stop reading it in a later release"
                    )
                    hint = f"Move the value to {field.replacement}." if field.replacement else None
                    yield self.issue(obj, path, message, hint=hint)


# Kinds whose CRDs are vendored besides the policies' (tests/data/crds/SOURCES.md).
GATEWAY_API_KINDS = frozenset(
    {
        "GatewayClass",
        "Gateway",
        "ListenerSet",
        "HTTPRoute",
        "GRPCRoute",
        "TLSRoute",
        "TCPRoute",
        "UDPRoute",
        "ReferenceGrant",
        "XBackend",
        "XMesh",
    }
)
# The object's own fields the schema rules leave to others: metadata (ObjectMeta, which the
# CRDs do not describe), status (PL110).
_TOP_LEVEL_SKIPPED = frozenset({"apiVersion", "kind", "metadata", "status"})


class UnknownField(Rule):
    """A field its CRD does not define: the API server prunes it, and `kubectl apply` rejects the object."""

    id = "PL702"
    name = "unknown-field"
    severity = Severity.ERROR
    subjects = GATEWAY_API_KINDS | {POLICY}

    def check(self, project: Project) -> Iterable[Issue]:
        # A CRD in the input (or given with --crd) is the one the cluster serves: its schema
        # decides, and an unknown field is an error. Otherwise the bundled schemas of the
        # experimental channel (a superset of the standard one's fields) stand in, and the
        # finding is a warning naming the release they come from: a newer release may have
        # added the field (`_schemas_for`).
        targets = _target_fields(project)
        for obj, schema, source in _schemas_for(project):
            found = _unknown(obj.data, schema)
            if not found:
                continue
            malformed = project.index.malformed(obj)
            # Inside a policy's target references, PL205 names unknown fields (one finding per cause).
            skipped = targets.get(id(obj), ())
            for parts, key_name, known in found:
                path = format_path(parts)
                if _under(path, skipped) or malformed.tainted(*parts):
                    continue  # PL205's, or its parent has the wrong type (PL010)
                at = join(path, key_name) if path else key_name
                guess = next((k for k in known if k.lower() == key_name.lower()), None) or close_name(key_name, known)
                hint = f"Did you mean `{guess}`?" if guess else "Remove it, or check its spelling and place against the CRD."
                where = f"in {path}" if path else "at the top level"
                origin = f"the {source} CRD" if source else "its CRD in the input"
                message = (
                    f"{key_name!r} is not a field {where} of {obj.kind} {obj.version} ({origin}): the API server"
                    " prunes it, and `kubectl apply` rejects the object (strict field validation is its default)"
                )
                if source:
                    message += f"; if the cluster runs a newer release than {source}, lint with its CRDs (--crd)"
                yield self.issue(obj, at, message, hint=hint, severity=None if source is None else Severity.WARNING)


def _template(value: Any) -> bool:
    """An unquoted template action (`{{ .Values.x }}`), which YAML reads as a map with one
    `{...}` key and no value: PL004 reports the file, and it is no field of the object."""
    if type(value) is not dict or len(value) != 1:
        return False
    ((key, inner),) = value.items()
    return inner is None and isinstance(key, str) and key.startswith("{") and key.endswith("}")


_PRESERVE = "x-kubernetes-preserve-unknown-fields"
_EMBEDDED = "x-kubernetes-embedded-resource"


def _unknown(data: Mapping[str, Any], schema: Mapping[str, Any]) -> list[tuple[tuple[str | int, ...], str, list[str]]]:
    """(path of the parent, unknown key, the keys the parent may have) for every field the schema
    does not define, where it does not keep unknown fields (`x-kubernetes-preserve-unknown-fields`),
    in document order. One pass over the object's maps and lists; scalars are never visited."""
    out: list[tuple[tuple[str | int, ...], str, list[str]]] = []
    root = {k: v for k, v in data.items() if k not in _TOP_LEVEL_SKIPPED}
    stack: list[tuple[Any, Mapping[str, Any], tuple[str | int, ...]]] = [(root, schema, ())]
    while stack:
        value, node, path = stack.pop()
        if node.get(_PRESERVE) or node.get(_EMBEDDED):
            continue
        if type(value) is dict:
            if _template(value):
                continue  # an unrendered template action (PL004)
            properties = node.get("properties")
            additional = node.get("additionalProperties")
            if properties is None and additional is None:
                continue  # an object the schema does not describe further (any keys), or `anyOf` forms
            children = []
            for key, child in value.items():
                sub = properties.get(key) if properties is not None else None
                if sub is None:
                    if isinstance(additional, dict):
                        sub = additional
                    elif additional is True:
                        continue
                    else:
                        out.append((path, str(key), sorted(properties or ())))
                        continue
                if type(child) is dict or type(child) is list:
                    children.append((child, sub, (*path, key)))
            stack.extend(reversed(children))
        elif type(value) is list:
            items = node.get("items")
            if isinstance(items, dict):
                stack.extend(
                    (item, items, (*path, i))
                    for i, item in reversed(list(enumerate(value)))
                    if type(item) is dict or type(item) is list
                )
    return out


class SchemaViolation(Rule):
    """A value its CRD's schema rejects: wrong type, not one of the allowed values, out of bounds, or a required field missing."""

    id = "PL703"
    name = "schema-violation"
    severity = Severity.ERROR
    subjects = GATEWAY_API_KINDS | {POLICY}

    def check(self, project: Project) -> Iterable[Issue]:
        targets = _target_fields(project)
        for obj, schema, source in _schemas_for(project):
            found = _violations(obj.data, schema)
            if not found:
                continue
            malformed = project.index.malformed(obj)
            # Target references: the PL1xx and PL2xx rules check them, field by field.
            skipped = targets.get(id(obj), ())
            for parts, problem in found:
                path = format_path(parts)
                if _under(path, skipped) or malformed.tainted(*parts):
                    continue  # theirs, or PL010's finding already
                origin = f"the {source} CRD" if source else "its CRD in the input"
                message = f"{path or 'the object'} {problem} ({origin}): the API server rejects the object"
                if source:
                    message += f"; if the cluster runs a newer release than {source}, lint with its CRDs (--crd)"
                yield self.issue(obj, path, message, severity=None if source is None else Severity.WARNING)


def _target_fields(project: Project) -> dict[int, tuple[str, ...]]:
    """id(policy object) -> the paths of its target fields (`spec.targetRefs`, ...)."""
    return {id(p.obj): tuple(f"spec.{field}" for field in p.profile.targets.fields) for p in project.resolution.policies()}


def _under(path: str, prefixes: Iterable[str]) -> bool:
    return any(path == p or path.startswith((p + ".", p + "[")) for p in prefixes)


def _schemas_for(project: Project) -> Iterator[tuple[K8sObject, Mapping[str, Any], str | None]]:
    """Each object with the schema that decides its fields, and the bundled release it comes from
    (None: a CRD in the input, which the cluster serves)."""
    from policylint.k8s.schemas import crd_schemas, schemas

    given: dict[tuple[str, str, str], Mapping[str, Any]] = {}
    for crd in project.index.crds():
        given.update(crd_schemas(crd.data))
    given_kinds = {k[:2] for k in given}
    bundled = schemas("experimental")
    for obj in project.index.objects:
        if not isinstance(obj.data, dict):
            continue
        key = (obj.group, obj.kind, obj.version)
        schema = given.get(key)
        if schema is not None:
            yield obj, schema, None
        elif key[:2] not in given_kinds and key in bundled:
            yield obj, *bundled[key]


_TYPES: Mapping[str, tuple[type, ...]] = {
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
    "object": (dict,),
    "array": (list,),
}


def _kind_of(value: Any) -> str:
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int):
        return "an integer"
    if isinstance(value, float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, dict):
        return "a map"
    if isinstance(value, list):
        return "a list"
    return type(value).__name__


def _violations(data: Mapping[str, Any], schema: Mapping[str, Any]) -> list[tuple[tuple[str | int, ...], str]]:
    """(path, what is wrong) for every value the schema rejects: type, enum, string length,
    numeric bounds, item and property counts, and missing required fields. Patterns and formats
    are not checked (a CRD's regular expression is RE2; Python's engine differs and can backtrack)."""
    out: list[tuple[tuple[str | int, ...], str]] = []
    root = {k: v for k, v in data.items() if k not in _TOP_LEVEL_SKIPPED}
    top_required = [r for r in schema.get("required", ()) if r not in _TOP_LEVEL_SKIPPED]
    stack: list[tuple[Any, Mapping[str, Any], tuple[str | int, ...]]] = [(root, {**schema, "required": top_required}, ())]
    while stack:
        value, node, path = stack.pop()
        if value is None or _template(value):
            continue  # a null is an unset field to the API server; a template action is PL004's
        if node.get("x-kubernetes-int-or-string"):
            if isinstance(value, bool) or not isinstance(value, (int, str)):
                out.append((path, f"is {_kind_of(value)}, where the schema takes an integer or a string"))
            continue
        wanted = node.get("type")
        types = _TYPES.get(wanted) if isinstance(wanted, str) else None
        if wanted == "integer" and isinstance(value, float) and value.is_integer():
            value = int(value)  # kubectl sends an integral float as an integer
        if (
            isinstance(wanted, str)
            and types is not None
            and (not isinstance(value, types) or (isinstance(value, bool) and wanted != "boolean"))
        ):
            out.append((path, f"is {_kind_of(value)}, where the schema takes {'an' if wanted[0] in 'aeio' else 'a'} {wanted}"))
            continue
        enum = node.get("enum")
        if isinstance(enum, list) and not isinstance(value, (dict, list)) and value not in enum:
            shown = ", ".join(repr(e) for e in enum[:12]) + (", ..." if len(enum) > 12 else "")
            out.append((path, f"is {value!r}, not one of the values the schema allows ({shown})"))
        if isinstance(value, str):
            _bound(out, path, len(value), node, "minLength", "maxLength", "characters long")
        elif isinstance(value, (int, float)) and not isinstance(value, bool):
            _value_bound(out, path, value, node)
        elif isinstance(value, list):
            _bound(out, path, len(value), node, "minItems", "maxItems", "items")
            items = node.get("items")
            if isinstance(items, dict):
                stack.extend((item, items, (*path, i)) for i, item in reversed(list(enumerate(value))))
        elif isinstance(value, dict):
            _bound(out, path, len(value), node, "minProperties", "maxProperties", "fields")
            properties = node.get("properties") or {}
            for name in node.get("required", ()):
                # The API server sets a field's default before it validates: a default satisfies.
                if value.get(name) is None and "default" not in properties.get(name, {}):
                    out.append(((*path, name), "is required by the schema and missing"))
            if node.get(_PRESERVE) and node.get("properties") is None:
                continue
            additional = node.get("additionalProperties")
            children = []
            for key, child in value.items():
                sub = properties.get(key)
                if sub is None and isinstance(additional, dict):
                    sub = additional
                if sub is None:
                    continue
                if type(child) is str and sub.get("type") == "string" and "enum" not in sub:
                    # Most values: a string whose length is all there is to check, checked here.
                    least, most = sub.get("minLength"), sub.get("maxLength")
                    if (least is None or len(child) >= least) and (most is None or len(child) <= most):
                        continue
                children.append((child, sub, (*path, key)))
            stack.extend(reversed(children))
    return out


def _bound(
    out: list[tuple[tuple[str | int, ...], str]],
    path: tuple[str | int, ...],
    n: int,
    node: Mapping[str, Any],
    low: str,
    high: str,
    unit: str,
) -> None:
    least, most = node.get(low), node.get(high)
    if isinstance(least, int) and n < least:
        out.append((path, f"is {n} {unit}, fewer than the schema's {low} of {least}"))
    if isinstance(most, int) and n > most:
        out.append((path, f"is {n} {unit}, more than the schema's {high} of {most}"))


def _value_bound(
    out: list[tuple[tuple[str | int, ...], str]], path: tuple[str | int, ...], value: float, node: Mapping[str, Any]
) -> None:
    least, most = node.get("minimum"), node.get("maximum")
    if isinstance(least, (int, float)) and (value < least or (node.get("exclusiveMinimum") is True and value == least)):
        out.append((path, f"is {value}, below the schema's minimum of {least}"))
    if isinstance(most, (int, float)) and (value > most or (node.get("exclusiveMaximum") is True and value == most)):
        out.append((path, f"is {value}, above the schema's maximum of {most}"))


RULES: list[type[Rule]] = [DeprecatedField, UnknownField, SchemaViolation]
