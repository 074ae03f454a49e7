"""Findings of a per-object rule that depend on nothing of an object but its apiVersion and kind.

Whether the cluster serves an object's version (PL705) and whether that version is deprecated
(PL707) are questions about the object's apiVersion and kind, asked of every object: ten thousand
objects of a dozen kinds asked the catalogue the same dozen questions a thousand times each, and
the two rules were a tenth of the rules' own time. Each is answered once per apiVersion and kind,
and the findings of the first object asked are given to the others, on themselves.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import replace

from policylint.findings import Issue
from policylint.k8s.objects import K8sObject
from policylint.project import Project, object_local


# Object-local: what it keeps for an object is what the rule finds on that object alone.
@object_local
class ByApiVersion:
    """A per-object rule's findings by (rule, apiVersion, kind), for `Project.derived`."""

    def __init__(self, project: Project) -> None:
        del project  # what it keeps comes from the rules that ask
        self._found: dict[tuple[str, str, str], tuple[Issue, ...]] = {}

    def issues(self, rule_id: str, obj: K8sObject, check: Callable[[K8sObject], Iterable[Issue]]) -> Iterator[Issue]:
        """What `check` finds on `obj`, which must depend on nothing of `obj` but its apiVersion and
        kind, and sit on `obj` itself: worked out for the first object of its apiVersion and kind."""
        key = (rule_id, obj.api_version, obj.kind)
        found = self._found.get(key)
        if found is None:
            found = self._found[key] = tuple(check(obj))
        for issue in found:
            yield issue if issue.object is obj else replace(issue, object=obj)
