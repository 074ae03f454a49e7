"""Findings: what rules report, before and after positions are resolved."""

from __future__ import annotations

import enum
from dataclasses import field
from typing import TYPE_CHECKING, Any

from policylint.values import frozen

if TYPE_CHECKING:
    from policylint.input.load import DocumentRef
    from policylint.k8s.objects import K8sObject, ObjectKey

# The rule id of a finding that says something failed inside the run (a rule, a stage, a step).
INTERNAL_ERROR = "PL000"


class Severity(enum.IntEnum):
    """Ordered so that `--fail-on warning` means "warning or worse"."""

    INFO = 0
    WARNING = 1
    ERROR = 2

    @property
    def label(self) -> str:
        return self.name.lower()

    @classmethod
    def parse(cls, value: str) -> Severity:
        try:
            return cls[value.strip().upper()]
        except KeyError:
            raise ValueError(f"unknown severity {value!r} (expected error, warning or info)") from None


@frozen
class Location:
    """A 1-based position in an input file."""

    file: str
    line: int
    column: int


@frozen
class Related:
    """Another place that explains a finding (the Gateway lacking the listener, ...).

    Either an object plus field path (resolved by the engine) or a fixed location.
    """

    message: str
    object: K8sObject | None = None
    path: str = ""
    location: Location | None = None


@frozen
class Edit:
    """One change to a manifest: the field at `path` (inside the object, as Issue.path) set to
    `value`, or deleted (`delete`: a mapping key with its value, or a list entry), or `value`
    added as the last entry of the list at `path` (`extend`)."""

    path: str
    value: Any = None
    delete: bool = False
    extend: bool = False
    # The object the edit is in when it is not the finding's own: a `from` entry added to the
    # ReferenceGrant the finding's note names, rather than a second grant beside it.
    within: K8sObject | None = None
    # A new document (`value`, a mapping) appended to the file of the object at `append_to`
    # (its doc's file): a ReferenceGrant beside the object it lets others reference.
    append_to: K8sObject | None = None


@frozen
class Fix:
    """The one right edit for a finding (policylint.autofix). `safe`: it cannot change what the
    controller does beyond the fix; an unsafe fix is applied only with `--unsafe-fixes`."""

    description: str
    edits: tuple[Edit, ...]
    safe: bool = True


@frozen
class ResolvedFix:
    """A fix located in its file: the document by the line its root starts on, each edit's path
    from the document root (policylint.input.positions syntax)."""

    description: str
    safe: bool
    file: str
    document_line: int
    edits: tuple[Edit, ...]


@frozen
class Issue:
    """What a rule yields: an object and a field path, not yet a file position.

    Input problems found while loading have no object: they carry a location, or
    the document they were found in (then `path` is resolved inside it).
    """

    rule_id: str
    message: str
    object: K8sObject | None = None
    path: str = ""
    location: Location | None = None
    document: DocumentRef | None = None
    related: tuple[Related, ...] = ()
    severity: Severity | None = None  # None: the rule's default severity
    hint: str | None = None  # how to fix it, one sentence; kept out of `message`
    fix: Fix | None = None  # the edit that fixes it, when there is exactly one right answer


@frozen
class ResolvedRelated:
    message: str
    file: str
    line: int
    column: int


class SuppressionKind(enum.Enum):
    """How a finding was hidden. SARIF calls the first two `inSource` and a baseline `external`."""

    COMMENT = "comment"  # `# policylint: disable=...` in the file
    ANNOTATION = "annotation"  # the object's `policylint.io/ignore` annotation
    BASELINE = "baseline"  # an entry of the baseline file


@frozen
class Suppression:
    kind: SuppressionKind
    reason: str = ""  # the justification written with it ("" when none was given)


@frozen
class Finding:
    """A finding with its position resolved: what reporters render."""

    file: str
    line: int
    column: int
    rule: str
    name: str
    severity: Severity
    message: str
    object: ObjectKey | None = None
    api_version: str = ""
    path: str = ""
    related: tuple[ResolvedRelated, ...] = field(default=())
    hint: str | None = None
    # Set by the engine once the findings are sorted (policylint.rules.engine.fingerprint).
    fingerprint: str = ""
    # Set on the findings of `LintResult.suppressed` only: reported, never failing a run.
    suppression: Suppression | None = None
    # Where the span ends (the column after its last character); 0: at the start position.
    end_line: int = 0
    end_column: int = 0
    fix: ResolvedFix | None = None

    @property
    def region(self) -> tuple[int, int, int, int]:
        """Start line and column, end line and column (1-based; the end column is exclusive)."""
        if self.end_line <= 0:
            return self.line, self.column, self.line, self.column
        return self.line, self.column, self.end_line, self.end_column

    def sort_key(self) -> tuple[str, int, int, str, str, str]:
        obj = str(self.object) if self.object else ""
        return (self.file, self.line, self.column, self.rule, obj, self.message)
