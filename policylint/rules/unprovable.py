"""Absences a repository cannot prove, decided from profile data:

- a reference to an object not in the input, of a kind a cluster component makes under names no
  object of the input shows (profile producers with `anyName`: the ServiceImports a multicluster
  controller makes from other clusters' ServiceExports; docs/semantics.md#objects-made-in-the-cluster);
- a GatewayClass an implementation's installer creates (`implementations[].builtinGatewayClasses`:
  Istio's `istio`, NGINX Gateway Fabric's `nginx`), where nothing shows that the implementation runs;
- a reference (a policy's target, a route's parent or backend) to an object of a kind the input
  holds none of in the namespace the reference names, and that nothing in the input makes there:
  the repository does not look like it manages that kind there (the platform's Gateways, another
  team's Services; docs/semantics.md#partial-repositories).

Each is a warning naming what was considered, until `--complete` says the input is the whole
cluster; the rules keep their error for every other missing object.
"""

from __future__ import annotations

from policylint.profiles.implementations import Implementation, implementation_name
from policylint.project import Project
from policylint.semantics.topology import ObjectRef
from policylint.values import frozen


@frozen
class Unprovable:
    """Why an absence is unprovable (`why`, inserted after "which is not in the input")."""

    why: str


def unprovable_absence(project: Project, ref: ObjectRef) -> Unprovable | None:
    """Whether the missing object of `ref` may be made in the cluster under any name, unseen."""
    if project.index.options.complete or ref.detail:
        # --complete: the input is the cluster. A detail says how the controller looks the object
        # up instead (Istio's ServiceImport as a Service): that object is what must exist.
        return None
    producers = project.resolution.producers().unprovable(ref.group, ref.kind)
    if not producers:
        return None
    considered = "; ".join(dict.fromkeys(p.describe() for p in producers))
    why = f", and may be made in the cluster from outside it (considered: {considered})"
    return Unprovable(why)


def _places(project: Project) -> dict[tuple[str, str], frozenset[str | None]]:
    """(group, kind) -> the namespaces the input holds objects of that kind in (None: cluster-scoped)."""
    places: dict[tuple[str, str], set[str | None]] = {}
    for obj in project.index.objects:
        places.setdefault((obj.group, obj.kind), set()).add(obj.namespace)
    return {key: frozenset(namespaces) for key, namespaces in places.items()}


def unmanaged_kind(project: Project, group: str, kind: str, namespace: str | None) -> Unprovable | None:
    """Whether the input holds no object of this kind in this namespace (for a cluster-scoped kind,
    none at all), and nothing in it makes one there: then the repository does not manage that kind
    there, and a missing object of it is unprovable rather than missing. The same evidence the
    topology reads for Secrets and ConfigMaps (`References._manages`): per namespace, since platform
    repositories split ownership by namespace (the teams' routes, the platform's Gateways)."""
    if project.index.options.complete:
        return None
    if namespace in project.derived(_places).get((group, kind), frozenset()):
        return None
    if namespace is not None and project.resolution.producers().makes_in(group, kind, namespace):
        return None
    where = f" in namespace {namespace}" if namespace is not None else ""
    return Unprovable(f", and the input holds no {kind}{where}, so the repository does not look like it manages them")


def builtin_class_creator(project: Project, name: str) -> tuple[Implementation, str] | None:
    """The implementation whose installer creates a GatewayClass of this name, and the
    implementation's name as `implementations` declares it, where the class was not taken as
    existing (`Resolution.builtin_classes`: nothing shows the implementation runs)."""
    if project.index.options.complete:
        return None
    for implementation in project.resolution.profiles.implementations:
        if any(class_name == name for class_name, _ in implementation.builtin_classes):
            return implementation, implementation_name(implementation.name)
    return None
