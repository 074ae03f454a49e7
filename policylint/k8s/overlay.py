"""A rendered stream on standard input over the files it was rendered from.

`kubectl kustomize overlays/prod | policylint - --context base/` reads the base's files to
resolve references, but the stream is what will be applied: each object in it with the key
(group, kind, namespace, name) of an object in a context file replaces that object, as
`kubectl apply` of the stream would replace what the base alone had created. Two definitions
within the stream are still two (PL005), and a context object the stream does not hold stays
context. Files of the report scope are never overlaid: two definitions there are a mistake in
what is reported on (README "pre-commit", `--context`).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

from policylint.k8s.objects import K8sObject


def overlay(objects: Sequence[K8sObject], stream: str, reported: Collection[str]) -> list[K8sObject]:
    """`objects` without the context objects (those not in a `reported` file) that an object of
    the file `stream` (standard input's name) defines again."""
    keys = {o.key for o in objects if o.doc.file == stream}
    if not keys:
        return list(objects)
    return [o for o in objects if o.doc.file in reported or o.key not in keys]


__all__ = ["overlay"]
