"""Absences a repository cannot prove, decided from profile data:

- a reference to an object not in the input, of a kind a cluster component makes under names no
  object of the input shows (profile producers with `anyName`: the ServiceImports a multicluster
  controller makes from other clusters' ServiceExports; docs/semantics.md#objects-made-in-the-cluster);
- a GatewayClass an implementation's installer creates (`implementations[].builtinGatewayClasses`:
  Istio's `istio`), where nothing shows that the implementation runs.

Each is a warning naming what was considered, until `--complete` says the input is the whole
cluster; the rules keep their error for every other missing object.
"""

from __future__ import annotations

from policylint.profiles.implementations import Implementation, implementation_name
from policylint.project import Project
from policylint.semantics.topology import ObjectRef
from policylint.values import frozen

# What makes an unprovable absence provable, after the hint that declares the object external.
COMPLETE_HINT = "With --complete (the input is the whole cluster) its absence is an error."


@frozen
class Unprovable:
    """Why an absence is unprovable (`why`, inserted after "which is not in the input")."""

    why: str

    def hint(self, near: str | None) -> str:
        return f"{near} {COMPLETE_HINT}" if near else COMPLETE_HINT


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
