"""The linted files over the files read for context only (`--context`).

`policylint check example.yaml --context quickstart.yaml` reads the quickstart to resolve
references, but the example is what is applied over it: each object of a linted file with the
key (group, kind, namespace, name) of an object of a context file replaces that object, as
`kubectl apply` of the example would update what the quickstart had created. So does a rendered
stream on standard input over the files it was rendered from (`kubectl kustomize overlays/prod |
policylint - --context base/`). The linted copy is the one analysed, whatever order the paths
come in. Two definitions within the linted files are still two (PL005), and a context object no
linted file holds stays context.

A linted file inside a context path (the pre-commit hook's `--context . FILE`, a change's
repository) is part of that tree, not applied over it: it replaces nothing, and a second
definition there stays PL005 (README "pre-commit", `--context`; docs/semantics.md#context-paths).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

from policylint.k8s.objects import K8sObject


def overlay(objects: Sequence[K8sObject], over: Collection[str], reported: Collection[str]) -> list[K8sObject]:
    """`objects` without the context objects (those not in a `reported` file) that an object of
    one of the files `over` (linted files applied over the context) defines again."""
    keys = {o.key for o in objects if o.doc.file in over}
    if not keys:
        return list(objects)
    return [o for o in objects if o.doc.file in reported or o.key not in keys]


__all__ = ["overlay"]
