"""The rule unit: a small typed check over the whole project index."""

from __future__ import annotations

from collections.abc import Iterable
from typing import ClassVar

from policylint.findings import Issue, Related, Severity
from policylint.k8s.index import ProjectIndex
from policylint.k8s.objects import K8sObject
from policylint.stages import Stage


class Rule:
    """Base class. Subclasses set `id`, `name`, `severity` and implement `check`.

    The first line of the class docstring is the rule's one-line summary (SARIF
    shortDescription, `policylint rules`). A rule never reads files and never
    formats output: it yields `Issue`s naming an object and a field path.
    """

    id: ClassVar[str]
    name: ClassVar[str]
    severity: ClassVar[Severity]
    # The semantic stages the rule reads besides the index (policylint.stages): the pipeline
    # builds only what the selected rules read, and tests/test_rule_inputs.py runs every rule
    # with exactly these built.
    reads: ClassVar[frozenset[Stage]] = frozenset()

    @classmethod
    def summary(cls) -> str:
        doc = (cls.__doc__ or "").strip()
        return doc.splitlines()[0] if doc else cls.name

    def check(self, index: ProjectIndex) -> Iterable[Issue]:
        raise NotImplementedError

    def issue(
        self,
        obj: K8sObject,
        path: str,
        message: str,
        *,
        related: Iterable[Related] = (),
        severity: Severity | None = None,
    ) -> Issue:
        return Issue(rule_id=self.id, message=message, object=obj, path=path, related=tuple(related), severity=severity)


class InputRule(Rule):
    """Input problems are found while loading (policylint.input.load, policylint.k8s.objects);
    the rule only hands them to the engine so that select/ignore apply uniformly."""

    def check(self, index: ProjectIndex) -> Iterable[Issue]:
        return (issue for issue in index.input_issues if issue.rule_id == self.id)
