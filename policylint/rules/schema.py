"""PL7xx: what the CRDs themselves say about the fields of an object.

Deprecated fields come from the CRDs' own descriptions (policylint.k8s.deprecations, generated
from the vendored upstream CRDs). No rule here branches on a kind: the data names them.
"""

from __future__ import annotations

from collections.abc import Iterable

from policylint.findings import Issue, Severity
from policylint.k8s.deprecations import deprecations
from policylint.project import Project
from policylint.rules.base import POLICY, Rule
from policylint.semantics.topology import expand_pattern


class DeprecatedField(Rule):
    """A field its CRD marks deprecated is set: say what replaces it, as the controller's own warning does."""

    id = "PL701"
    name = "deprecated-field"
    severity = Severity.WARNING
    subjects = frozenset({POLICY})

    def check(self, project: Project) -> Iterable[Issue]:
        table = deprecations()
        for policy in project.resolution.policies():
            obj = policy.obj
            fields = table.get((obj.group, obj.kind, obj.version))
            if not fields:
                continue
            for field in fields:
                for path, _ in expand_pattern(obj.data, field.path):
                    instead = f": use {field.replacement} instead" if field.replacement else ""
                    message = (
                        f"{path} is deprecated in {obj.kind} {obj.version} (its CRD: {field.text!r}){instead};"
                        " the controller may stop reading it in a later release"
                    )
                    hint = f"Move the value to {field.replacement}." if field.replacement else None
                    yield self.issue(obj, path, message, hint=hint)


RULES: list[type[Rule]] = [DeprecatedField]
