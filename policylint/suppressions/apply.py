"""The suppression step: after the rules ran, split their findings into active and suppressed.

In this order: inline comments and the object annotation (`Suppression.kind` COMMENT or
ANNOTATION), then the baseline (BASELINE) for what is left. Then the PL9xx findings about the
suppressions themselves: unused (PL901), unknown code (PL902), no reason (PL903), expired
(PL904), unreadable (PL905), stale baseline entry (PL906). Those are never suppressed (a
comment could otherwise hide the finding about itself) and, like PL000, neither is the
engine's internal error: a run that is incomplete must say so.
"""

from __future__ import annotations

import datetime
import os
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import field, replace
from typing import TYPE_CHECKING

from policylint.findings import Finding, Severity, Suppression, SuppressionKind
from policylint.input.load import decode
from policylint.input.positions import PositionResolver
from policylint.k8s.objects import K8sObject, ObjectKey
from policylint.rules import REGISTRY
from policylint.rules import suppressions as rules
from policylint.rules.base import Rule
from policylint.rules.engine import INTERNAL_ERROR, INTERNAL_ERROR_NAME, with_fingerprints
from policylint.suppressions import annotation
from policylint.suppressions import baseline as baseline_io
from policylint.suppressions.baseline import Entry
from policylint.suppressions.comments import MARKER, MARKER_BYTES, Comment, FileComments, scan
from policylint.suppressions.directives import DISABLE_FILE, DISABLE_NEXT_LINE, DirectiveError, Spec, parse_spec
from policylint.values import record

if TYPE_CHECKING:
    from policylint.pipeline import LintRequest

SUPPRESSION_RULES = frozenset(r.id for r in rules.RULES)


def texts_with_comments(texts: Mapping[str, str | bytes]) -> dict[str, str | bytes]:
    """The files that may hold a `policylint:` comment (a substring search: most have none)."""
    return {f: t for f, t in texts.items() if (MARKER in t if isinstance(t, str) else MARKER_BYTES in t)}


def matches(code: str, rule_id: str, name: str) -> bool:
    """A code names a rule as `--select` does: a prefix of its id or of its name."""
    return rule_id.upper().startswith(code.upper()) or name.startswith(code.lower())


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

    def hides(self, f: Finding) -> str | None:
        """The code that hides `f`, if any."""
        for code in self.codes:
            if matches(code, f.rule, f.name):
                return code
        return None


@record
class Outcome:
    active: list[Finding]
    suppressed: list[Finding]
    baseline_written: tuple[str, int] | None = None  # `--write-baseline`: the file and its entry count
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


def read_baseline(request: LintRequest) -> list[Entry] | None:
    """The entries of the request's baseline (None: none, or `--write-baseline` replaces it).
    Read before any work: a baseline that cannot be read is a usage error (BaselineError)."""
    if request.baseline is None or request.write_baseline is not None:
        return None
    if request.baseline_entries is not None:  # read from a git ref (`--baseline-ref`)
        return list(request.baseline_entries)
    return baseline_io.read(request.baseline)


def run(
    request: LintRequest,
    entries: list[Entry] | None,
    findings: Sequence[Finding],
    texts: Mapping[str, str | bytes],
    objects: Iterable[K8sObject],
    ran: Sequence[type[Rule]],
    resolver: PositionResolver,
    linted_files: Sequence[str],
) -> Outcome:
    """The pipeline's step (policylint.pipeline._lint): `apply` with the request's settings and
    the baseline `entries` (read_baseline).

    With `request.write_baseline`, the findings left after the inline suppressions are written
    there, and that new baseline is the one applied: every finding it records is hidden, and
    no entry of an older baseline is kept. Raises BaselineError (a usage error) if it cannot
    be written. A bug in this step is a PL000 finding, as a rule's is: the findings stay, all
    of them active."""
    try:
        outcome = apply(
            findings,
            texts=texts,
            objects=objects,
            catalogue=REGISTRY,
            ran=ran,
            resolver=resolver,
            baseline=entries,
            baseline_file=request.baseline or "",
            linted_files=linted_files,
            require_reason=request.require_suppression_reason,
            today=request.today,
        )
    except Exception as exc:  # a bug must not cost the findings
        first = linted_files[0] if linted_files else "<input>"
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
    recorded = [f for f in outcome.active if recordable(f)]
    count = baseline_io.write(request.write_baseline, recorded)
    hidden = {id(f) for f in recorded}
    baselined = [replace(f, suppression=Suppression(SuppressionKind.BASELINE)) for f in recorded]
    return Outcome(
        [f for f in outcome.active if id(f) not in hidden],
        sorted([*outcome.suppressed, *baselined], key=Finding.sort_key),
        (request.write_baseline, count),
    )


def recordable(f: Finding) -> bool:
    """Whether a baseline may hide `f`: not the run's own failure, not a finding about suppressions."""
    return f.rule != INTERNAL_ERROR and f.rule not in SUPPRESSION_RULES


def apply(
    findings: Sequence[Finding],
    *,
    texts: Mapping[str, str | bytes],
    objects: Iterable[K8sObject],
    catalogue: Sequence[type[Rule]],
    ran: Iterable[type[Rule]],
    resolver: PositionResolver,
    baseline: Sequence[Entry] | None = None,
    baseline_file: str = "",
    linted_files: Iterable[str] = (),
    require_reason: bool = True,
    today: datetime.date | None = None,
) -> Outcome:
    """Split `findings` (the engine's, sorted and fingerprinted) into active and suppressed, and
    add the PL9xx findings of the rules in `ran` to the active ones.

    `texts` holds the files that may contain comments (texts_with_comments); `baseline` the
    entries of the baseline file `baseline_file`, or None for no baseline."""
    step = _Step(
        catalogue,
        frozenset(r.id for r in ran),
        resolver,
        today or datetime.datetime.now(datetime.timezone.utc).date(),
        require_reason,
    )
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

    by_object: dict[ObjectKey, list[_Suppression]] = {}
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
            by_object.setdefault(obj.key, []).append(admitted)

    active: list[Finding] = []
    suppressed: list[Finding] = []
    for f in findings:
        hidden = None
        if recordable(f):
            hidden = _hide(f, by_file.get(f.file, ()), scans.get(f.file), by_object.get(f.object, ()) if f.object else ())
        if hidden is None:
            active.append(f)
        else:
            suppressed.append(replace(f, suppression=hidden))

    if baseline is not None:
        active, baselined = _apply_baseline(step, active, baseline, baseline_file, frozenset(linted_files))
        suppressed.extend(baselined)

    for candidates in (*by_file.values(), *by_object.values()):
        for s in candidates:
            _report_unused(step, s)

    active.extend(with_fingerprints(sorted(step.new, key=Finding.sort_key)))
    active.sort(key=Finding.sort_key)
    suppressed.sort(key=Finding.sort_key)
    return Outcome(active, suppressed)


def _hide(
    f: Finding, comments: Sequence[_Suppression], scanned: FileComments | None, annotations: Sequence[_Suppression]
) -> Suppression | None:
    """The suppression that hides `f` (comments first, then its object's annotation); every
    suppression that would hide it counts as used."""
    found: Suppression | None = None
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
                applies = line in lines or line in key_lines
            code = s.hides(f) if applies else None
            if code is not None:
                s.used.add(code)
                found = found or Suppression(SuppressionKind.COMMENT, s.spec.reason)
    for s in annotations:
        code = s.hides(f)
        if code is not None:
            s.used.add(code)
            found = found or Suppression(SuppressionKind.ANNOTATION, s.spec.reason)
    return found


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
        step.report(
            rules.UnusedSuppression,
            where,
            s.file,
            message,
            "Remove it (the finding was fixed), or move it to the line of the finding or of its enclosing key.",
        )


def _apply_baseline(
    step: _Step, active: list[Finding], entries: Sequence[Entry], baseline_file: str, linted: frozenset[str]
) -> tuple[list[Finding], list[Finding]]:
    remaining = Counter(e.fingerprint for e in entries)
    base = os.path.abspath(os.path.dirname(baseline_file) or ".")
    linted = frozenset(os.path.normpath(os.path.abspath(f)) for f in linted)
    in_scope: dict[str, bool] = {}  # by entry file: entries share few files
    still: list[Finding] = []
    baselined: list[Finding] = []
    for f in active:
        if recordable(f) and remaining[f.fingerprint] > 0:
            remaining[f.fingerprint] -= 1
            baselined.append(replace(f, suppression=Suppression(SuppressionKind.BASELINE)))
        else:
            still.append(f)
    if rules.StaleBaselineEntry.id in step.ran:
        for e in entries:
            if remaining[e.fingerprint] <= 0:
                continue
            remaining[e.fingerprint] -= 1
            # An entry is known to be stale only if its rule ran over its file (a run over a few
            # files, or `--select PL2`, says nothing about the others).
            if e.file not in in_scope:
                in_scope[e.file] = baseline_io.absolute(e.file, base) in linted
            if e.rule not in step.ran or not in_scope[e.file]:
                continue
            what = " ".join(p for p in (e.object, e.path) if p)
            rule = rules.StaleBaselineEntry
            step.new.append(
                Finding(
                    baseline_file,
                    e.line,
                    1,
                    rule.id,
                    rule.name,
                    rule.severity,
                    f"baseline entry {e.rule} {what or e.file} ({e.file}) matches no finding: fixed, or the object was renamed",
                    hint="Run with --write-baseline to drop stale entries.",
                )
            )
    return still, baselined
