"""Human-readable text: `path:line:col: severity PLnnn message [Kind ns/name]`."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from typing import TYPE_CHECKING

from policylint.findings import Finding, Severity, SuppressionKind
from policylint.k8s.names import plural
from policylint.textsafe import MAX_FIELD, defuse_line, escape

if TYPE_CHECKING:
    from policylint.reported import Reported
    from policylint.reporters import RenderOptions

_COLORS = {Severity.ERROR: "\033[1;31m", Severity.WARNING: "\033[1;33m", Severity.INFO: "\033[1;36m"}
_DIM = "\033[2m"
_BOLD = "\033[1m"
_RESET = "\033[0m"
# Findings a piece of the report holds (`pieces`).
PIECE_LINES = 1000


def format_finding(f: Finding, *, color: bool = False) -> str:
    """One line per finding, one per note, one for the hint if any. Every field from the input (file, message, object) is
    escaped (policylint.textsafe): no name can add a line, forge a finding or a CI workflow
    command, or send the terminal a control sequence. Only policylint's own colour codes are raw."""
    severity = f.severity.label
    where = f"{escape(f.file)}:{f.line}:{f.column}:"
    obj = f" [{escape(str(f.object), MAX_FIELD)}]" if f.object is not None else ""
    message = escape(f.message)
    if color:
        dim_obj = f"{_DIM}{obj}{_RESET}" if obj else ""
        line = f"{_BOLD}{where}{_RESET} {_COLORS[f.severity]}{severity}{_RESET} {_DIM}{f.rule}{_RESET} {message}{dim_obj}"
    else:
        line = defuse_line(f"{where} {severity} {f.rule} {message}{obj}")
    notes = [f"    note: {escape(r.file)}:{r.line}:{r.column}: {escape(r.message)}" for r in f.related]
    if f.hint:
        notes.append(f"    hint: {escape(f.hint)}")
    return "\n".join([line, *notes])


def pieces(result: Reported, options: RenderOptions | None = None) -> Iterator[str]:
    """The report in pieces of `PIECE_LINES` findings, each ending with its line break (`render`
    joins them, the command writes them as they come): the text of 100k objects' findings (39 MB
    on the benchmark's shared corpus) and a string per finding were held whole besides the
    analysis, the run's peak."""
    color = options is not None and options.color
    texts: Iterator[str] = (_with_change(result, f, format_finding(f, color=color)) for f in result.findings)
    if result.show_suppressed:  # `--show-suppressed`: after the findings, each with how it was hidden
        texts = itertools.chain(texts, (_suppressed(f, color=color) for f in result.suppressed))
    while batch := list(itertools.islice(texts, PIECE_LINES)):
        yield "\n".join(batch) + "\n"


def render(result: Reported, options: RenderOptions | None = None) -> str:
    return "".join(pieces(result, options))


def _with_change(result: Reported, f: Finding, text: str) -> str:
    # `--diff` / `--staged`: a finding the base has too is said to be so (policylint.commands.change).
    if result.introduced_by_change(f) is False:
        return f"{text}\n    pre-existing: at {escape(result.base or 'the base')} too"
    return text


def _suppressed(f: Finding, *, color: bool) -> str:
    how = f.suppression.kind.value if f.suppression is not None else "suppressed"
    reason = f" -- {escape(f.suppression.reason)}" if f.suppression is not None and f.suppression.reason else ""
    return f"{format_finding(f, color=color)}\n    suppressed: {how}{reason}"


def summary(result: Reported) -> str:
    counts = dict.fromkeys(Severity, 0)
    for f in result.findings:
        counts[f.severity] += 1

    found = ", ".join(
        plural(counts[s], s.label, "info" if s is Severity.INFO else None)
        for s in (Severity.ERROR, Severity.WARNING, Severity.INFO)
    )
    hidden = ""
    if result.suppressed:
        baselined = sum(
            1 for f in result.suppressed if f.suppression is not None and f.suppression.kind is SuppressionKind.BASELINE
        )
        hidden = f"; {len(result.suppressed) - baselined} suppressed, {baselined} baselined"
    change = result.change_counts()
    if change is not None:
        hidden += f"; against {escape(result.base or 'the base')}: {change[0]} introduced, {change[1]} pre-existing"
    context = f" (+{plural(len(result.context_files), 'context file')})" if result.context_files else ""
    where = f"{plural(len(result.files), 'file')}{context}"
    if result.change_files is not None and result.change_files[0] == 0:
        # PATHs choose the part of the change considered: here none of it (README "Diff modes").
        outside = plural(result.change_files[1], "changed file")
        where = f"no changed file under the PATHs given ({outside} outside them, not considered)"
    line = f"{found} in {where} ({plural(result.object_count(), 'object')}, {plural(result.policy_count(), 'policy')}){hidden}"
    # What the configuration turned off or down, and what the change did to it: never silent.
    gate = [escape(text) for text in result.gate.summary_lines()] if result.gate is not None else []
    return "\n".join([line, *gate])
