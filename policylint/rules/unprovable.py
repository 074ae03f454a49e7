"""Absences a repository cannot prove: a reference to an object not in the input, of a kind a
cluster component makes under names no object of the input shows (profile producers with
`anyName`: the ServiceImports a multicluster controller makes from other clusters'
ServiceExports; docs/semantics.md#objects-made-in-the-cluster).

Such a reference is a warning naming the producers considered, until `--complete` says the
input is the whole cluster; the rule keeps its error for every other missing object.
"""

from __future__ import annotations

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
