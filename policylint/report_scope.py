"""Report scope: which findings a run shows when it reads more than it reports on.

`--context PATH` adds load-only paths: everything is linted together, so that a policy in a
changed file resolves its target in an unchanged one, but only findings in scope are reported.
A finding is in scope when:

- it sits in a file of the report scope (the PATHs given, or standard input); or
- it is *about* one: one of its notes points into such a file (a policy in a context file whose
  sectionName the changed Gateway no longer has: PL301's note is at the Gateway's listeners), or
  its object references an object defined there (a context route whose parentRef names a changed
  Gateway that no longer admits it); or
- it is policylint's own failure (PL000): an internal error is never hidden.

The JSON report's `policies` section keeps the policies defined in report-scope files.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from policylint.findings import Finding
from policylint.rules.engine import INTERNAL_ERROR

if TYPE_CHECKING:
    from policylint.input.sources import Source
    from policylint.k8s.objects import ObjectKey
    from policylint.pipeline import LintRequest
    from policylint.project import Project


def _under(path: str, roots: Sequence[str]) -> bool:
    return any(path == root or path.startswith(root.rstrip(os.sep) + os.sep) for root in roots)


@dataclass(frozen=True)
class ReportScope:
    files: frozenset[str]  # display names of the files reported on
    objects: frozenset[ObjectKey]  # the objects defined in them
    # Policy -> the objects its targets resolved to (what a policy finding is about).
    targets: dict[ObjectKey, frozenset[ObjectKey]]

    @classmethod
    def of(cls, request: LintRequest, sources: Sequence[Source], project: Project) -> ReportScope | None:
        """The scope of a run with context paths; None when everything read is reported."""
        if not request.context_paths:
            return None
        from policylint.input.sources import STDIN

        roots = [os.path.abspath(p) for p in request.paths if p != STDIN]
        files = frozenset(s.display for s in sources if s.fs_path is None or _under(os.path.abspath(s.fs_path), roots))
        objects = frozenset(o.key for o in project.index.objects if o.doc.file in files)
        resolution = project.resolution
        targets = {
            p.obj.key: frozenset(r.target.key for r in resolution.targets(p) if r.target is not None)
            for p in resolution.policies()
        }
        return cls(files, objects, targets)

    def in_scope(self, finding: Finding) -> bool:
        if finding.rule == INTERNAL_ERROR or finding.file in self.files:
            return True
        if any(r.file in self.files for r in finding.related):
            return True
        return finding.object is not None and bool(self.targets.get(finding.object, frozenset()) & self.objects)

    def findings(self, findings: Sequence[Finding]) -> list[Finding]:
        return [f for f in findings if self.in_scope(f)]

    def policy_reports(self, reports: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
        return [r for r in reports if r["file"] in self.files]
