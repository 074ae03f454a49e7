"""The part of a project a scoped run must analyse: the objects whose findings can be in the
report scope, with everything those findings depend on (policylint.report_scope).

A run with a report scope narrower than its load scope (`--context`, `--diff`, `--staged`, the
pre-commit hook) reports only the findings in scope, but resolution, topology, the
effective-policy simulation and the rules cost in proportion to everything loaded. Most
repositories split into parts that cannot see each other (a tenant's Gateway with its routes,
policies, backends and grants), so the analysis is run on the parts the scope can reach, and
gives the findings a run over everything would give, restricted to the scope
(tests/test_scoped_analysis.py compares the two on random repositories and changes).

The parts are found over an over-approximation of every dependency between objects, built
without resolving anything:

- any mapping with a string `name` outside `metadata` and `status` is read as a reference to
  that name, in its `namespace` or the object's own: target, parent, backend, certificate, CA,
  parameters and extension references alike, whatever their kind (objects of one namespace that
  share a name are connected too, which also covers duplicates);
- `name: "*"` (route delegation), label selectors and a reference by a namespace's name (a
  policy on the Namespace) reach every object of the namespace; a target selector across
  namespaces reaches everything, and the whole repository is analysed;
- a reference into another namespace depends on the ReferenceGrants there;
- a GatewayClass joins its Gateways when something other than them references it (a policy on
  the class reaches every Gateway of it), or when it has a `parametersRef` (the parameters can
  merge its Gateways into one proxy).

Origins are the objects of the report scope's files (a Namespace among them makes its objects
origins; another cluster-scoped object, a GatewayClass or a CRD, makes the run analyse everything) and the objects that could carry a finding
whose note points at them without referencing them: near-miss hints ("did you mean ...?") name
objects of the kind and namespace referenced, or of the same name elsewhere, so every object in a
origin's namespace, every object referencing into it and every object whose reference to a origin's
name finds nothing is a origin. The analysed set is every object connected to a origin ("members", whose findings are
kept), plus context whose presence lookups read but whose own findings are not computed right and
are dropped: every cluster-scoped object (classes, Namespaces, CRDs), every object of the
namespaces the members live in or reference, objects bearing a name a member's reference finds
nowhere else (hints name them), and one
object of each kind present (whether a kind exists in the input at all).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, NamedTuple

from policylint.k8s.objects import K8sObject, ObjectKey
from policylint.values import frozen

_GATEWAY_CLASS = ("gateway.networking.k8s.io", "GatewayClass")
_GRANT = ("gateway.networking.k8s.io", "ReferenceGrant")
# Lists whose entries have a `name` that is not a reference: sections of the object itself
# (listeners, rules, ports), and HTTP header, query and environment entries.
_NOT_REFERENCES = frozenset({"listeners", "rules", "ports", "headers", "queryParams", "set", "add", "remove", "env"})
# Below this many objects the whole project is analysed: the bookkeeping is not worth it.
MIN_OBJECTS = 200
# A scoped analysis that would cover more than this share of the objects runs over everything.
MAX_SHARE = 0.5


class Reference(NamedTuple):
    namespace: str | None
    name: str
    explicit_namespace: bool
    selector: bool = False  # reaches every object of the namespace (selector, `name: "*"`)


@frozen(slots=False)
class Scoped:
    """The objects to analyse (input order) and the keys of those whose findings are kept."""

    objects: list[K8sObject]
    members: frozenset[ObjectKey]


def references(obj: K8sObject) -> list[Reference]:
    """Everything `obj` may refer to by name (an over-approximation: see the module docstring)."""
    data = obj.data
    if type(data) is not dict:
        return []
    own = obj.namespace
    out: list[Reference] = []
    # (value, whether a `name` in it is a reference); exact type checks: the loader builds
    # plain dicts and lists, and this walk runs over every object of a scoped run.
    stack: list[tuple[Any, bool]] = [(v, True) for k, v in data.items() if k not in _TOP_LEVEL and type(v) in _CONTAINERS]
    while stack:
        value, may_refer = stack.pop()
        if type(value) is dict:
            name = value.get("name")
            if may_refer and type(name) is str:
                namespace = value.get("namespace")
                if type(namespace) is str:
                    out.append(Reference(namespace, name, True, name == "*"))
                else:
                    out.append(Reference(own, name, False, name == "*"))
            for key, child in value.items():
                if type(child) in _CONTAINERS and key not in _NO_REFERENCES_BELOW:
                    if key in _SELECTORS and child:
                        out.append(Reference(own, "", False, True))
                        if key == "targetSelectors" and type(child) is list and any(_across(item) for item in child):
                            out.append(EVERYWHERE)
                    stack.append((child, key not in _NOT_REFERENCES))
        else:
            stack.extend((item, may_refer) for item in value if type(item) in _CONTAINERS)
    return out


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


class _Sets:
    """Union-find over integer nodes."""

    def __init__(self) -> None:
        self.parent: list[int] = []

    def add(self) -> int:
        self.parent.append(len(self.parent))
        return len(self.parent) - 1

    def find(self, x: int) -> int:
        parent = self.parent
        root = x
        while parent[root] != root:
            root = parent[root]
        while parent[x] != root:
            parent[x], x = root, parent[x]
        return root

    def union(self, a: int, b: int) -> None:
        ra, rb = self.find(a), self.find(b)
        if ra != rb:
            self.parent[max(ra, rb)] = min(ra, rb)


def scope(
    objects: Sequence[K8sObject],
    origin_files: Iterable[str],
    removed: Iterable[ObjectKey] = (),
    *,
    min_objects: int | None = None,
    max_share: float | None = None,
) -> Scoped | None:
    """The objects a run reporting on `origin_files` (and on what references `removed`, the
    objects a change deleted) must analyse; None when that is (nearly) everything, or when a
    origin is a cluster-scoped object, whose reach is the whole repository."""
    min_objects = MIN_OBJECTS if min_objects is None else min_objects
    max_share = MAX_SHARE if max_share is None else max_share
    if len(objects) < min_objects:
        return None
    files = frozenset(origin_files)
    removed = list(removed)
    origins = [i for i, o in enumerate(objects) if o.doc.file in files]
    # A Namespace is reached through its objects (all origins, below): a selector that reads its
    # labels belongs to what they reference. Another cluster-scoped origin (a class, a CRD) reaches
    # what no name traces.
    cluster_origins = [objects[i].key for i in origins if objects[i].namespace is None] + [
        k for k in removed if k.namespace is None
    ]
    if any(k.kind != "Namespace" for k in cluster_origins):
        return None
    refs = [references(o) for o in objects]
    if any(EVERYWHERE in r for r in refs):
        return None

    sets = _Sets()
    for _ in objects:
        sets.add()
    names: dict[tuple[str | None, str], int] = {}
    wide: dict[str | None, int] = {}

    def node(table: dict[Any, int], key: Any) -> int:
        found = table.get(key)
        if found is None:
            found = table[key] = sets.add()
        return found

    cluster_names = {o.name for o in objects if o.namespace is None and o.kind != "Namespace"}
    # A reference by a namespace's name may target the Namespace: a policy there reaches all of it.
    namespace_names = {o.namespace for o in objects} | {o.name for o in objects if o.kind == "Namespace" and o.group == ""}
    grant_namespaces = {o.namespace for o in objects if (o.group, o.kind) == _GRANT}
    grants: dict[str | None, int] = {}
    for i, obj in enumerate(objects):
        sets.union(i, node(names, (obj.namespace, obj.name)))
        if (obj.group, obj.kind) == _GRANT:
            sets.union(i, node(grants, obj.namespace))
        for ref in refs[i]:
            if ref.selector:
                sets.union(i, node(wide, ref.namespace))
                continue
            sets.union(i, node(names, (ref.namespace, ref.name)))
            if not ref.explicit_namespace and ref.name in cluster_names:
                sets.union(i, node(names, (None, ref.name)))
            if ref.name in namespace_names:
                sets.union(i, node(wide, ref.name))
            if ref.explicit_namespace and ref.namespace != obj.namespace and ref.namespace in grant_namespaces:
                sets.union(i, node(grants, ref.namespace))
    for i, obj in enumerate(objects):
        if obj.namespace in wide:
            sets.union(i, wide[obj.namespace])
    _join_classes(objects, refs, sets, names)

    # Origins: see the module docstring (near-miss hints).
    origin_namespaces = (
        {objects[i].namespace for i in origins} | {k.namespace for k in removed} | {k.name for k in cluster_origins}
    )
    origin_namespaces.discard(None)
    origin_names = {objects[i].name for i in origins} | {k.name for k in removed}
    existing = {(o.namespace, o.name) for o in objects}
    for i, obj in enumerate(objects):
        if obj.namespace in origin_namespaces or any(
            (r.explicit_namespace and r.namespace in origin_namespaces)
            # A reference that finds nothing may be hinted at a origin of that name elsewhere.
            or (r.name in origin_names and (r.namespace, r.name) not in existing)
            for r in refs[i]
        ):
            origins.append(i)
    for key in removed:
        found = names.get((key.namespace, key.name))
        if found is not None:
            origins.append(found)
    roots = {sets.find(i) for i in origins}
    members = [i for i in range(len(objects)) if sets.find(i) in roots]
    if len(members) > max_share * len(objects):
        return None

    # Context: what the members' lookups read beyond their own references.
    namespaces = {objects[i].namespace for i in members} | {r.namespace for i in members for r in refs[i]}
    # A reference that finds nothing is hinted at objects of its name in other namespaces.
    referenced = {r.name for i in members for r in refs[i] if (r.namespace, r.name) not in existing}
    seen_kinds: set[tuple[str, str]] = set()
    keep: list[K8sObject] = []
    member_set = set(members)
    for i, obj in enumerate(objects):
        gk = (obj.group, obj.kind)
        first_of_kind = gk not in seen_kinds
        seen_kinds.add(gk)
        if i in member_set or first_of_kind or obj.namespace is None or obj.namespace in namespaces or obj.name in referenced:
            keep.append(obj)
    if len(keep) > max_share * len(objects):
        return None
    return Scoped(keep, frozenset(objects[i].key for i in members))


def _join_classes(objects: Sequence[K8sObject], refs: list[list[Reference]], sets: _Sets, names: Mapping[Any, int]) -> None:
    """A GatewayClass that something references, or that has parameters, joins its Gateways."""
    by_class: dict[str, list[int]] = {}
    classes: dict[str, int] = {}
    for i, obj in enumerate(objects):
        if (obj.group, obj.kind) == _GATEWAY_CLASS:
            classes[obj.name] = i
        elif obj.kind == "Gateway" and isinstance(obj.data, dict):
            spec = obj.data.get("spec")
            name = spec.get("gatewayClassName") if isinstance(spec, dict) else None
            if isinstance(name, str):
                by_class.setdefault(name, []).append(i)
    for name, gateways in by_class.items():
        index = classes.get(name)
        if index is None:
            continue
        node = names.get((None, name))
        referenced = node is not None and any(
            sets.find(j) == sets.find(node) for j in range(len(objects)) if j != index and objects[j].kind != "Gateway"
        )
        if referenced or refs[index]:
            for g in gateways:
                sets.union(index, g)
