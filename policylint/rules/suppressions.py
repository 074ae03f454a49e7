"""PL9xx: the suppressions themselves (inline comments, the `policylint.io/ignore` annotation,
the baseline file).

These rules have no per-object check: their findings are made by the suppression step after
the other rules ran (policylint.suppressions.apply), since only then is it known what each
suppression hid. They are rules all the same, so that `--select`/`--ignore`, the catalogue,
`policylint rule PL901` and the reporters treat them like any other. No suppression can hide
a PL9xx finding: a comment could otherwise silence the finding about itself.
"""

from __future__ import annotations

from collections.abc import Iterable

from policylint.findings import Issue, Severity
from policylint.project import Project
from policylint.rules.base import ANY, FILE, Rule


class SuppressionRule(Rule):
    """Findings made by policylint.suppressions.apply, not by `check`."""

    # A comment sits in a file (no object); an annotation on its object.
    subjects = frozenset({ANY, FILE})

    def check(self, project: Project) -> Iterable[Issue]:
        return ()


class UnusedSuppression(SuppressionRule):
    """A suppression names a rule that reported nothing where it applies."""

    id = "PL901"
    name = "unused-suppression"
    severity = Severity.WARNING


class UnknownRuleInSuppression(SuppressionRule):
    """A suppression names a code that matches no rule."""

    id = "PL902"
    name = "unknown-rule-in-suppression"
    severity = Severity.WARNING


class SuppressionWithoutReason(SuppressionRule):
    """A suppression gives no reason after ` -- `."""

    id = "PL903"
    name = "suppression-without-reason"
    severity = Severity.WARNING


class ExpiredSuppression(SuppressionRule):
    """A suppression's `until=` date has passed: it no longer hides anything."""

    id = "PL904"
    name = "expired-suppression"
    severity = Severity.WARNING


class MalformedSuppression(SuppressionRule):
    """A `policylint:` comment or `policylint.io/ignore` annotation cannot be read."""

    id = "PL905"
    name = "malformed-suppression"
    severity = Severity.WARNING


class StaleBaselineEntry(SuppressionRule):
    """A baseline entry matches no finding any more: what it recorded was fixed."""

    id = "PL906"
    name = "stale-baseline-entry"
    severity = Severity.INFO
    subjects = frozenset({FILE})


RULES: tuple[type[Rule], ...] = (
    UnusedSuppression,
    UnknownRuleInSuppression,
    SuppressionWithoutReason,
    ExpiredSuppression,
    MalformedSuppression,
    StaleBaselineEntry,
)
