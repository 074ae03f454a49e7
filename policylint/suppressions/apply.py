"""The suppression step: after the rules ran, split their findings into active and suppressed.

In this order: inline comments and the object annotation (`Suppression.kind` COMMENT or
ANNOTATION), then the baseline (BASELINE) for what is left. Then the PL9xx findings about the
suppressions themselves: unused (PL901), unknown code (PL902), no reason (PL903), expired
(PL904), unreadable (PL905), stale baseline entry (PL906). Those are never suppressed (a
comment could otherwise hide the finding about itself) and, like PL000, neither is the
engine's internal error: a run that is incomplete must say so.
"""

from __future__ import annotations

import bisect
import datetime
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import field, replace
from typing import TYPE_CHECKING

from policylint.findings import Finding, Severity, Suppression, SuppressionKind
from policylint.identity import IdentitySet
from policylint.input.kept import Kept, inflated
from policylint.input.load import decode
from policylint.input.positions import PositionResolver
from policylint.k8s.objects import K8sObject, ObjectKey
from policylint.rulecodes import matches
from policylint.rules import suppressions as rules
from policylint.rules.base import Rule
from policylint.rules.engine import INTERNAL_ERROR, INTERNAL_ERROR_NAME, with_fingerprints
from policylint.rules.input import DuplicateObject
from policylint.suppressions import MARKER, MARKER_BYTES, annotation
from policylint.suppressions import baseline as baseline_io
from policylint.suppressions.baseline import Entry
from policylint.suppressions.comments import Comment, FileComments, scan
from policylint.suppressions.directives import DISABLE_FILE, DISABLE_NEXT_LINE, DirectiveError, Spec, parse_spec
from policylint.suppressions.matching import SUPPRESSION_RULES, apply_baseline, recordable
from policylint.values import record

if TYPE_CHECKING:
    from policylint.pipeline import LintRequest

DUPLICATE_OBJECT = DuplicateObject.id


def texts_with_comments(texts: Mapping[str, str | Kept]) -> dict[str, str | bytes]:
    """The files that may hold a `policylint:` comment (a substring search: most have none),
    inflated if a large run kept them deflated (policylint.input.kept)."""
    return {
        f: t if isinstance(t, str) else inflated(t)
        for f, t in texts.items()
        if (MARKER in t if isinstance(t, str) else MARKER_BYTES in t)
    }


@record
class _Suppression:
    """One comment or annotation that is in force, and which of its codes hid something."""

    kind: SuppressionKind
    spec: Spec
    codes: tuple[str, ...]  # the known ones
    file: str = ""
    comment: Comment | None = None
    obj: K8sObject | None = None
    used: set[str] = field(default_factory=set)
    # Codes that would have hidden a duplicate definition (PL005) that the other definition
    # does not suppress too, with which one that is (for PL901's message).
    alone: dict[str, str] = field(default_factory=dict)

    def hides(self, f: Finding) -> str | None:
        """The code that hides `f`, if any."""
        for code in self.codes:
            if matches(code, f.rule, f.name):
                return code
        return None


@record
class _Annotations:
    """The annotations in force, by the object definition that carries them.

    An object may be defined more than once (PL005), so its key does not say which
    definition a finding is on. A finding lies inside its definition's node, in that
    definition's file: of the definitions of its key in its file, the one starting last at or
    before the finding's position. Only keys that carry an annotation are placed (`place`), and
    only their definitions in the annotated files."""

    admitted: list[_Suppression] = field(default_factory=list)
    # (file, key) -> the definitions' start positions, in order, each with its annotations.
    _definitions: dict[tuple[str, ObjectKey], list[tuple[tuple[int, int], list[_Suppression]]]] = field(default_factory=dict)

    def add(self, obj: K8sObject, s: _Suppression) -> None:
        self.admitted.append(s)
        self._definitions.setdefault((obj.doc.file, obj.key), [])

    def place(self, objects: Iterable[K8sObject], resolver: PositionResolver) -> None:
        """Locate every definition of the annotated keys in the annotated files."""
        if not self._definitions:
            return
        by_obj = {s.obj: s for s in self.admitted}
        for obj in objects:
            definitions = self._definitions.get((obj.doc.file, obj.key))
            if definitions is None:
                continue
            # A member of a `kind: List` starts where its item does, not at the document.
            start = resolver.resolve(obj.doc, obj.doc_path("")) if obj.prefix else (obj.doc.line, obj.doc.column)
            s = by_obj.get(obj)
            definitions.append((start, [s] if s is not None else []))
        for definitions in self._definitions.values():
            definitions.sort(key=lambda d: d[0])

    def of(self, f: Finding) -> Sequence[_Suppression]:
        """The annotations of the definition `f` lies in."""
        if f.object is None:
            return ()
        definitions = self._definitions.get((f.file, f.object))
        if not definitions:
            return ()
        i = bisect.bisect_right(definitions, (f.line, f.column), key=lambda d: d[0]) - 1
        return definitions[i][1] if i >= 0 else ()


@record
class Outcome:
    active: list[Finding]
    suppressed: list[Finding]
    baseline_written: tuple[str, int] | None = None  # `--write-baseline`: the file and its entry count
    # Baseline entries that hid a finding only by the fingerprint it had before its rule's
    # findings moved (policylint.suppressions.fingerprint_versions): `--write-baseline` updates them.
    baseline_migrated: int = 0
    failed: bool = False  # the step itself failed (a PL000 finding says so)


@record
class _Step:
    catalogue: Sequence[type[Rule]]  # every rule (unknown codes)
    ran: frozenset[str]  # ids of the rules that ran (unused codes, stale entries, PL9xx)
    resolver: PositionResolver
    today: datetime.date
    require_reason: bool
    new: list[Finding] = field(default_factory=list)

    def report(self, rule: type[Rule], where: Comment | K8sObject, file: str, message: str, hint: str) -> None:
        if rule.id not in self.ran:
            return
        if isinstance(where, Comment):
            self.new.append(Finding(file, where.line, where.column, rule.id, rule.name, rule.severity, message, hint=hint))
            return
        path = where.doc_path(annotation.PATH)
        line, column = self.resolver.resolve(where.doc, path)
        self.new.append(
            Finding(
                where.doc.file,
                line,
                column,
                rule.id,
                rule.name,
                rule.severity,
                message,
                object=where.key,
                api_version=where.api_version,
                path=annotation.PATH,
                hint=hint,
            )
        )

    def admit(self, kind: SuppressionKind, spec: Spec, where: Comment | K8sObject, file: str) -> _Suppression | None:
        """The suppression if it is in force, after reporting what is wrong with it."""
        label = "annotation" if kind is SuppressionKind.ANNOTATION else "suppression"
        if spec.until is not None and spec.until < self.today:
            self.report(
                rules.ExpiredSuppression,
                where,
                file,
                f"{label} of {', '.join(spec.codes)} expired: its until= date {spec.until.isoformat()} has passed, and the findings it hid are reported again",
                "Fix the findings and remove the suppression, or set a later until= date with a reason.",
            )
            return None
        known = []
        for code in spec.codes:
            if any(matches(code, r.id, r.name) for r in self.catalogue):
                known.append(code)
            else:
                self.report(
                    rules.UnknownRuleInSuppression,
                    where,
                    file,
                    f"{label} names {code!r}, which is not a rule id or name",
                    "Use a code from `policylint rules` (an id such as PL201, or a name such as targetref-not-found).",
                )
        if not spec.reason and self.require_reason:
            self.report(
                rules.SuppressionWithoutReason,
                where,
                file,
                f"{label} of {', '.join(spec.codes)} gives no reason",
                "Say why after ` -- `, e.g. `-- the Service is created by the platform team`.",
            )
        obj = where if isinstance(where, K8sObject) else None
        comment = where if isinstance(where, Comment) else None
        return _Suppression(kind, spec, tuple(known), file, comment, obj)


def run(request: LintRequest, findings: Sequence[Finding], inputs: Inputs) -> Outcome:
    """The pipeline's step (policylint.pipeline._lint): `apply`, then what the request asks of
    the baseline.

    With `request.write_baseline`, the findings left after the inline suppressions are written
    there, and that new baseline is the one applied: every finding it records is hidden, and
    no entry of an older baseline is kept. Raises BaselineError (a usage error) if it cannot
    be written. A bug in this step is a PL000 finding, as a rule's is: the findings stay, all
    of them active."""
    try:
        outcome = apply(findings, inputs)
    except Exception as exc:  # a bug must not cost the findings
        first = inputs.linted_files[0] if inputs.linted_files else "<input>"
        failure = Finding(
            first,
            1,
            1,
            INTERNAL_ERROR,
            INTERNAL_ERROR_NAME,
            Severity.ERROR,
            f"applying suppressions failed: {type(exc).__name__}: {exc}; please report this",
        )
        return Outcome(sorted([*findings, failure], key=Finding.sort_key), [], failed=True)
    if request.write_baseline is None:
        return outcome
    by_id = {r.id: r for r in inputs.ran}
    recorded = [f for f in outcome.active if recordable(f) and _shown(f, request, by_id)]
    count = baseline_io.write(request.write_baseline, recorded)
    hidden = IdentitySet(recorded)  # these very findings: two equal ones are both recorded or not
    baselined = [replace(f, suppression=Suppression(SuppressionKind.BASELINE)) for f in recorded]
    return Outcome(
        [f for f in outcome.active if f not in hidden],
        sorted([*outcome.suppressed, *baselined], key=Finding.sort_key),
        (request.write_baseline, count),
    )


def _shown(f: Finding, request: LintRequest, by_id: Mapping[str, type[Rule]]) -> bool:
    """Whether the configuration leaves `f` in the report: a finding its `per-file` settings (or
    a severity `off`) drop after this step is hidden already, and recording it would make an
    entry that hides it again the day the configuration changes."""
    if not request.overrides:
        return True
    from policylint.config import overrides as config_overrides

    return bool(config_overrides.apply([f], by_id, request.overrides))


@record
class Inputs:
    """What the suppression step reads besides the findings."""

    texts: Mapping[str, str | bytes]  # the files that may contain comments (texts_with_comments)
    objects: Sequence[K8sObject]
    catalogue: Sequence[type[Rule]]  # every rule (unknown codes)
    ran: Sequence[type[Rule]]  # the rules that ran (unused codes, stale entries, PL9xx)
    resolver: PositionResolver
    baseline: Sequence[Entry] | None = None  # the entries of `baseline_file`; None: no baseline
    baseline_file: str = ""
    linted_files: Sequence[str] = ()
    require_reason: bool = True
    today: datetime.date | None = None  # None: today, in UTC


def apply(findings: Sequence[Finding], inputs: Inputs) -> Outcome:
    """Split `findings` (the engine's, sorted and fingerprinted) into active and suppressed, and
    add the PL9xx findings of the rules that ran to the active ones."""
    step = _Step(
        inputs.catalogue,
        frozenset(r.id for r in inputs.ran),
        inputs.resolver,
        inputs.today or datetime.datetime.now(datetime.timezone.utc).date(),
        inputs.require_reason,
    )
    scans, by_file = _comments(step, inputs.texts)
    annotations = _annotations(step, inputs.objects)
    annotations.place(inputs.objects, inputs.resolver)
    active, suppressed = _split(findings, by_file, scans, annotations)

    migrated = 0
    if inputs.baseline is not None:
        done = apply_baseline(active, inputs.baseline, inputs.baseline_file, inputs.linted_files, inputs.objects, step.ran)
        active, migrated = done.still, done.migrated
        suppressed.extend(done.hidden)
        step.new.extend(done.stale)

    for candidates in (*by_file.values(), annotations.admitted):
        for s in candidates:
            _report_unused(step, s)

    active.extend(with_fingerprints(sorted(step.new, key=Finding.sort_key)))
    active.sort(key=Finding.sort_key)
    suppressed.sort(key=Finding.sort_key)
    return Outcome(active, suppressed, baseline_migrated=migrated)


def _comments(step: _Step, texts: Mapping[str, str | bytes]) -> tuple[dict[str, FileComments], dict[str, list[_Suppression]]]:
    """Each file's comments, and by file the suppressions among them that are in force."""
    scans: dict[str, FileComments] = {}
    by_file: dict[str, list[_Suppression]] = {}
    for file, raw in sorted(texts.items()):
        text = raw if isinstance(raw, str) else decode(raw, file)[0]
        if text is None:
            continue
        scanned = scans[file] = scan(text)
        for comment in scanned.comments:
            if comment.spec is None or (comment.directive == DISABLE_FILE and comment.file_scope is None):
                step.report(
                    rules.MalformedSuppression,
                    comment,
                    file,
                    f"unreadable policylint comment: {comment.error}",
                    "Write `# policylint: disable=CODES -- reason` (or disable-next-line=, disable-file=).",
                )
                continue
            admitted = step.admit(SuppressionKind.COMMENT, comment.spec, comment, file)
            if admitted is not None:
                by_file.setdefault(file, []).append(admitted)
    return scans, by_file


def _annotations(step: _Step, objects: Sequence[K8sObject]) -> _Annotations:
    """The `policylint.io/ignore` annotations in force."""
    annotations = _Annotations()
    for obj in objects:
        value = obj.annotations.get(annotation.ANNOTATION)
        if value is None:
            continue
        try:
            spec = parse_spec(value)
        except DirectiveError as exc:
            step.report(
                rules.MalformedSuppression,
                obj,
                obj.doc.file,
                f"unreadable {annotation.ANNOTATION} annotation: {exc}",
                'Write the annotation as "CODES -- reason", e.g. "PL301,PL602 -- reason".',
            )
            continue
        admitted = step.admit(SuppressionKind.ANNOTATION, spec, obj, obj.doc.file)
        if admitted is not None:
            annotations.add(obj, admitted)
    return annotations


def _split(
    findings: Sequence[Finding],
    by_file: Mapping[str, Sequence[_Suppression]],
    scans: Mapping[str, FileComments],
    annotations: _Annotations,
) -> tuple[list[Finding], list[Finding]]:
    """The findings no comment or annotation hides, and those hidden, marked with the first that
    does; every suppression that hides one is used."""
    active: list[Finding] = []
    suppressed: list[Finding] = []
    for f in findings:
        found: list[tuple[_Suppression, str]] = []
        if recordable(f):
            found = _matching(f, by_file, scans, annotations)
            if f.rule == DUPLICATE_OBJECT and f.related:
                found = _both_definitions(f, found, by_file, scans, annotations)
        for s, code in found:
            s.used.add(code)
        if not found:
            active.append(f)
        else:
            first = found[0][0]
            suppressed.append(replace(f, suppression=Suppression(first.kind, first.spec.reason)))
    return active, suppressed


def _matching(
    f: Finding,
    by_file: Mapping[str, Sequence[_Suppression]],
    scans: Mapping[str, FileComments],
    annotations: _Annotations,
) -> list[tuple[_Suppression, str]]:
    """Every suppression that hides `f`, with the code that does: the comments of its document
    (or of its whole file) in file order, then the annotation of the object definition it lies
    in. A suppression never reaches into another document: a finding on one definition of an
    object defined twice is not hidden by the other definition's annotation."""
    found: list[tuple[_Suppression, str]] = []
    comments = by_file.get(f.file, ())
    scanned = scans.get(f.file)
    if comments and scanned is not None:
        lines, key_lines = scanned.lines_covered(f.line, f.column, f.path)
        for s in comments:
            comment = s.comment
            assert comment is not None
            if comment.directive == DISABLE_FILE:
                assert comment.file_scope is not None
                applies = comment.file_scope[0] <= f.line <= comment.file_scope[1]
            else:
                line = comment.line + 1 if comment.directive == DISABLE_NEXT_LINE else comment.line
                applies = (line in lines or line in key_lines) and comment.document[0] <= f.line <= comment.document[1]
            code = s.hides(f) if applies else None
            if code is not None:
                found.append((s, code))
    for s in annotations.of(f):
        code = s.hides(f)
        if code is not None:
            found.append((s, code))
    return found


def _both_definitions(
    f: Finding,
    found: list[tuple[_Suppression, str]],
    by_file: Mapping[str, Sequence[_Suppression]],
    scans: Mapping[str, FileComments],
    annotations: _Annotations,
) -> list[tuple[_Suppression, str]]:
    """What hides a PL005 finding: it sits on the later definition and accuses it of replacing
    the first, so that definition alone cannot vouch for itself (a new file could override a
    reviewed object and silence the warning in one go), and the first, which does not carry
    the finding, cannot hide it either. Only both together hide it: the suppressions of the
    later definition and of the first (its `metadata.name`, where the finding's note points).
    Otherwise none of them counts as used, and each is told why (PL901)."""
    note = f.related[0]
    at_first = replace(f, file=note.file, line=note.line, column=note.column, end_line=0, end_column=0)
    other = _matching(at_first, by_file, scans, annotations)
    if found and other:
        return [*found, *other]
    for s, code in found:
        s.alone[code] = f"the first definition, at {note.file}:{note.line},"
    for s, code in other:
        s.alone[code] = f"the later definition, at {f.file}:{f.line},"
    return []


def _report_unused(step: _Step, s: _Suppression) -> None:
    for code in s.codes:
        if code in s.used:
            continue
        # Only a code whose rules ran can be known to hide nothing (`--select PL2` does not run PL3xx).
        if not any(matches(code, r.id, r.name) for r in step.catalogue if r.id in step.ran and r.id not in SUPPRESSION_RULES):
            continue
        where: Comment | K8sObject
        if s.comment is not None:
            where = s.comment
            directive = s.comment.directive
            message = f"{directive}={code} suppresses nothing: no {code} finding where it applies"
        else:
            assert s.obj is not None
            where = s.obj
            message = f"{annotation.ANNOTATION} names {code}, which reports nothing on this object"
        hint = "Remove it (the finding was fixed), or move it to the line of the finding or of its enclosing key."
        other = s.alone.get(code)
        if other is not None:
            label = f"{s.comment.directive}=" if s.comment is not None else f"{annotation.ANNOTATION}: "
            message = f"{label}{code} hides nothing: a duplicate definition ({DUPLICATE_OBJECT}) is hidden only when {other} suppresses it too"
            hint = "Remove the duplicate, or suppress PL005 on both definitions, with a reason."
        step.report(rules.UnusedSuppression, where, s.file, message, hint)
