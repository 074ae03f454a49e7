"""PL010: a field of a core object has the wrong JSON type, so the API server rejects the object.

The field types are data (`policylint.k8s.fieldtypes.SCHEMAS`, taken from the Gateway
API CRDs and the core/v1 Service type); the check itself never branches on a
kind. What the topology and the target resolution do with the malformed part
(treat it as unknown, so that no other rule reports a consequence of it) is
described in `policylint.k8s.fieldtypes` and rules/PL010-malformed-field.md.
"""

from __future__ import annotations

from collections.abc import Iterable

from policylint.findings import Issue, Severity
from policylint.input.load import DocumentRef
from policylint.input.positions import format_path
from policylint.k8s.fieldtypes import EXPECTED, FieldProblem, describe_value, type_hint
from policylint.k8s.objects import K8sObject
from policylint.project import Project
from policylint.rules.base import Rule
from policylint.stages import Stage


class MalformedField(Rule):
    """A field of a Gateway API object or Service has the wrong type; the API server rejects the object."""

    id = "PL010"
    name = "malformed-field"
    severity = Severity.ERROR
    # Every object's field types are worked out by the time the topology is built (the admission
    # verdicts and the topology read them first): this rule then only reads them, 0.002 s against
    # 0.06-0.08 s in a process forked before (10,000 objects, docs/performance.md).
    after = frozenset({Stage.TOPOLOGY})

    def check(self, project: Project) -> Iterable[Issue]:
        # A value the loader already reported at the same place (an integer too large to keep,
        # say) is one cause: its input finding says it, this rule does not repeat it.
        reported: set[tuple[DocumentRef, str]] = {
            (issue.document, issue.path) for issue in project.index.input_issues if issue.document is not None and issue.path
        }
        for obj in project.index.objects:
            malformed = project.index.malformed(obj)
            for problem in malformed.problems:
                if problem.reported_by is not None:
                    continue  # that rule's finding says it (the topology still treats it as malformed)
                path = format_path(problem.path)
                if (obj.doc, obj.doc_path(path)) in reported:
                    continue
                yield self.issue(obj, path, _message(obj, problem, malformed.source))


def _message(obj: K8sObject, problem: FieldProblem, source: str) -> str:
    last = problem.path[-1]
    if isinstance(last, int):
        parent = next((p for p in reversed(problem.path) if isinstance(p, str)), "list")
        subject = f"each {parent} entry"
    else:
        subject = last
    return (
        f"{subject} must be {EXPECTED[problem.expected]}, not {describe_value(problem.value)}"
        f"{type_hint(problem.value, problem.expected)}: the API server rejects the whole {obj.kind} ({source}),"
        " so no controller ever sees it"
    )


RULES: list[type[Rule]] = [MalformedField]
