"""PL7xx: what the CRDs themselves say about the fields of an object.

Deprecated fields come from the CRDs' own descriptions (policylint.k8s.deprecations), the fields
an object may have from their schemas (policylint.k8s.schemas), both generated from the vendored
upstream CRDs. No rule here branches on a kind: the data names them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from policylint.findings import Issue, Severity
from policylint.input.positions import format_path, join
from policylint.k8s.deprecations import deprecations
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
_GATEWAY_API_KINDS = frozenset(
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
    subjects = _GATEWAY_API_KINDS | {POLICY}

    def check(self, project: Project) -> Iterable[Issue]:
        from policylint.k8s.schemas import crd_schemas, schemas

        # A CRD in the input (or given with --crd) is the one the cluster serves: its schema
        # decides, and an unknown field is an error. Otherwise the bundled schemas of the
        # experimental channel (a superset of the standard one's fields) stand in, and the
        # finding is a warning naming the release they come from: a newer release may have
        # added the field.
        given: dict[tuple[str, str, str], Mapping[str, Any]] = {}
        for crd in project.index.crds():
            given.update(crd_schemas(crd.data))
        bundled = schemas("experimental")
        targets = {id(p.obj): p.profile.targets.fields for p in project.resolution.policies()}
        for obj in project.index.objects:
            key = (obj.group, obj.kind, obj.version)
            source = None
            schema = given.get(key)
            if schema is None and key in bundled and not any(k[:2] == key[:2] for k in given):
                schema, source = bundled[key]
            if schema is None or not isinstance(obj.data, dict):
                continue
            found = _unknown(obj.data, schema)
            if not found:
                continue
            malformed = project.index.malformed(obj)
            # Inside a policy's target references, PL205 names unknown fields (one finding per cause).
            skipped = {f"spec.{field}" for field in targets.get(id(obj), ())}
            for parts, key_name, known in found:
                path = format_path(parts)
                if any(path == s or path.startswith((s + ".", s + "[")) for s in skipped):
                    continue
                if malformed.tainted(*parts):
                    continue  # its parent has the wrong type (PL010)
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


RULES: list[type[Rule]] = [DeprecatedField, UnknownField]
