"""GitHub Actions workflow commands: each finding an annotation on the pull request's diff.

`::error file=F,line=L,col=C,endLine=L2,endColumn=C2,title=PLnnn name::message`, with the file
relative to the repository root (the checkout, $GITHUB_WORKSPACE) and the message escaped as the
runner reads it (GitHub Docs, "Workflow commands for GitHub Actions"; the escaping is that of
`escapeData` and `escapeProperty` in actions/toolkit's `packages/core/src/command.ts`).

GitHub shows at most 10 error, 10 warning and 10 notice annotations per step and drops the rest
without a word. So the first findings of each severity are annotated (errors first, in report
order), the others are listed as plain log lines in a collapsed group, and a closing `::notice`
gives the totals and names the files this run wrote with the full report. Every field from the
input is escaped twice: first by policylint.textsafe (no control character, no line break of
its own), then for the runner; no name can end a command or start one.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from policylint.findings import Finding, Severity
from policylint.identity import IdentitySet
from policylint.k8s.names import plural
from policylint.reporters.text import format_finding
from policylint.textsafe import escape

if TYPE_CHECKING:
    from policylint.reported import Reported
    from policylint.reporters import RenderOptions

# Annotations GitHub shows per step and level ("Workflow commands for GitHub Actions").
MAX_PER_LEVEL = 10
COMMANDS = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "notice"}


def escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def unescape_data(text: str) -> str:
    """What the runner reads back from an escaped message (tests check the round trip)."""
    return text.replace("%0A", "\n").replace("%0D", "\r").replace("%3A", ":").replace("%2C", ",").replace("%25", "%")


def annotation(f: Finding, options: RenderOptions, *, pre_existing: bool = False) -> str:
    line, column, end_line, end_column = f.region
    props = [f"file={escape_property(escape(options.repo_path(f.file)))}", f"line={line}"]
    if end_line == line:
        # GitHub's columns are inclusive and only meaningful on one line; ours end exclusively.
        props += [f"col={column}", f"endLine={end_line}", f"endColumn={max(column, end_column - 1)}"]
    else:
        props.append(f"endLine={end_line}")
    # A finding the change did not introduce says so where the reviewer sees it (commands.change).
    pre = " (pre-existing)" if pre_existing else ""
    props.append(f"title={escape_property(f'{f.rule} {f.name}{pre}')}")
    body = [escape(f.message)]
    if f.object is not None:
        body[0] += f" [{escape(str(f.object))}]"
    body += [f"note: {escape(options.repo_path(r.file))}:{r.line}:{r.column}: {escape(r.message)}" for r in f.related]
    if f.hint:
        body.append(f"hint: {escape(f.hint)}")
    return f"::{COMMANDS[f.severity]} {','.join(props)}::{escape_data(chr(10).join(body))}"


def render(result: Reported, options: RenderOptions | None = None) -> str:
    from policylint.reporters import RenderOptions

    options = options or RenderOptions()
    annotated: list[Finding] = []
    rest: list[Finding] = []
    # The closing totals notice is one of the step's notices.
    room = {Severity.ERROR: MAX_PER_LEVEL, Severity.WARNING: MAX_PER_LEVEL, Severity.INFO: MAX_PER_LEVEL - 1}
    for f in sorted(result.findings, key=lambda f: -f.severity):  # stable: report order within a severity
        if room[f.severity] > 0:
            room[f.severity] -= 1
            annotated.append(f)
        else:
            rest.append(f)
    annotated_set = IdentitySet(annotated)
    lines = [
        annotation(f, options, pre_existing=result.introduced_by_change(f) is False)
        for f in result.findings
        if f in annotated_set
    ]
    if rest:
        lines.append(f"::group::policylint: {plural(len(rest), 'more finding')} (GitHub annotates {MAX_PER_LEVEL} per severity)")
        lines.extend(format_finding(f) for f in rest)
        lines.append("::endgroup::")
    lines.append(f"::notice title=policylint::{escape_data(_totals(result, len(annotated), options))}")
    return "\n".join(lines) + "\n"


def _totals(result: Reported, annotated: int, options: RenderOptions) -> str:
    counts = dict.fromkeys(Severity, 0)
    for f in result.findings:
        counts[f.severity] += 1
    found = ", ".join(
        plural(counts[s], s.label, "info" if s is Severity.INFO else None)
        for s in (Severity.ERROR, Severity.WARNING, Severity.INFO)
    )
    text = f"{found} in {plural(len(result.files), 'file')}"
    if result.suppressed:
        text += f", {len(result.suppressed)} suppressed"
    change = result.change_counts()
    if change is not None:
        text += f"; against {escape(result.base or 'the base')}: {change[0]} introduced, {change[1]} pre-existing"
    if len(result.findings) > annotated:
        text += f"; {annotated} annotated, the others are listed in the log"
    if options.outputs:
        text += "; full report: " + ", ".join(f"{escape(path)} ({fmt})" for fmt, path in options.outputs)
    return text + "."
