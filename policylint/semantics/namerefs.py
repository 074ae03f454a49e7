"""What an object may refer to by name, read without resolving anything: the references the part
search joins objects by (policylint.semantics.components, whose docstring says what counts as
one) and a Gateway's class, or what was kept of them for an object not read yet
(policylint.k8s.lazy)."""

from __future__ import annotations

from typing import Any, NamedTuple

from policylint.k8s.lazy import LazyObject
from policylint.k8s.objects import K8sObject

# Lists whose entries have a `name` that is not a reference: sections of the object itself
# (listeners, rules, ports), and HTTP header, query and environment entries.
_NOT_REFERENCES = frozenset({"listeners", "rules", "ports", "headers", "queryParams", "set", "add", "remove", "env"})


class Reference(NamedTuple):
    namespace: str | None
    name: str
    explicit_namespace: bool
    selector: bool = False  # reaches every object of the namespace (selector, `name: "*"`)


def references(obj: K8sObject) -> list[Reference]:
    """Everything `obj` may refer to by name (an over-approximation: see the module docstring),
    each once; what was kept of an object not read yet (policylint.k8s.lazy), when it was."""
    if type(obj) is LazyObject and obj.unread and obj.kept_references is not None:
        return list(obj.kept_references)
    data = obj.data
    if type(data) is not dict:
        return []
    own = obj.namespace
    out: dict[Reference, None] = {}  # ordered and without repeats (a backend of every rule)
    # (value, whether a `name` in it is a reference); exact type checks: the loader builds
    # plain dicts and lists, and this walk runs over every object of a scoped run.
    stack: list[tuple[Any, bool]] = [(v, True) for k, v in data.items() if k not in _TOP_LEVEL and type(v) in _CONTAINERS]
    pop, push = stack.pop, stack.append
    while stack:
        value, may_refer = pop()
        if type(value) is list:
            for item in value:
                if type(item) in _CONTAINERS:
                    push((item, may_refer))
            continue
        if may_refer:
            name = value.get("name")
            if type(name) is str:
                namespace = value.get("namespace")
                if type(namespace) is str:
                    out[Reference(namespace, name, True, name == "*")] = None
                else:
                    out[Reference(own, name, False, name == "*")] = None
        for key, child in value.items():
            if type(child) in _CONTAINERS and key not in _NO_REFERENCES_BELOW:
                if key in _SELECTORS and child:
                    out[Reference(own, "", False, True)] = None
                    if key == "targetSelectors" and type(child) is list and any(_across(item) for item in child):
                        out[EVERYWHERE] = None
                push((child, key not in _NOT_REFERENCES))
    return list(out)


# Route matches (paths, headers, query parameters, methods) hold no reference at any depth.
_NO_REFERENCES_BELOW = frozenset({"matches"})


def _across(selector: Any) -> bool:
    """A target selector that reaches other namespaces (Envoy Gateway `targetSelectors[].namespaces`)."""
    namespaces = selector.get("namespaces") if type(selector) is dict else None
    return type(namespaces) is dict and namespaces.get("from") not in (None, "Same")


# A reference that may reach any object of any namespace.
EVERYWHERE = Reference(None, "", False, True)
_TOP_LEVEL = frozenset({"metadata", "status", "apiVersion", "kind"})
_CONTAINERS = frozenset({dict, list})
_SELECTORS = frozenset({"targetSelectors", "selector"})


def gateway_class(obj: K8sObject) -> str | None:
    """The class a Gateway names (`spec.gatewayClassName`), or what was kept of it for an object
    not read yet (policylint.k8s.lazy)."""
    if type(obj) is LazyObject and obj.unread:
        return obj.kept_class
    data = obj.data
    spec = data.get("spec") if isinstance(data, dict) else None
    name = spec.get("gatewayClassName") if isinstance(spec, dict) else None
    return name if isinstance(name, str) else None
