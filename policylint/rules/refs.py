"""Where a finding about a reference sits, and how findings name objects: shared by the
attachment family's modules (PL4xx).
"""

from __future__ import annotations

from policylint.input.positions import join, parse_path
from policylint.k8s.names import ns_name
from policylint.k8s.objects import K8sObject
from policylint.profiles.holders import builtin_holders
from policylint.project import Project


def where(obj: K8sObject) -> str:
    """`ns/name`, or `name` for a cluster-scoped object."""
    return ns_name(obj.namespace, obj.name)


def label(obj: K8sObject) -> str:
    return f"{obj.kind} {where(obj)}"


def field_value(obj: K8sObject, path: str) -> object:
    """The value at a simple field path of the object (`spec.parentRefs[0]`), or None."""
    value: object = obj.data
    for part in parse_path(path):
        if isinstance(part, int) and isinstance(value, list) and 0 <= part < len(value):  # noqa: SIM114  (each arm narrows its own types)
            value = value[part]
        elif isinstance(part, str) and isinstance(value, dict) and part in value:
            value = value[part]
        else:
            return None
    return value


def has_field(obj: K8sObject, path: str, key: str) -> bool:
    value = field_value(obj, path)
    return isinstance(value, dict) and key in value


def at_field(obj: K8sObject, path: str, key: str) -> str:
    """The field `key` of the reference at `path` when it is written there, else the reference.

    A finding about what a reference names sits on the field that is wrong (`name` for an object
    that is not there), not on the reference's first line. Always the same field for a given
    rule, whatever the near matches suggest: the path is part of the finding's fingerprint, which
    other objects coming and going must not change (policylint.rules.engine.fingerprint)."""
    return join(path, key) if has_field(obj, path, key) else path


# Kinds other than policies whose references their controller follows (profile `holders`, Envoy
# Gateway's HTTPRouteFilter and EnvoyProxy): the reference rules' findings may sit on them.
HOLDER_KINDS = frozenset(h.kind for h in builtin_holders())


def holding(project: Project) -> list[K8sObject]:
    """The objects of the holder kinds (`HOLDER_KINDS`) in the input, whose references the
    topology resolved (`Topology.refs_from`)."""
    return [obj for h in builtin_holders() for obj in project.index.of_kind(h.group, h.kind)]
