"""Code actions: the fix a finding carries, and a suppression comment with room for its reason.

A fix is applied by `policylint.autofix` to the text the finding was found in (the editor's,
saved or not), exactly as `check --fix` applies it to the file: the editor receives the smallest
edit that turns the one text into the other. A safe fix is the preferred quick fix (what an
editor's "fix all" applies); an unsafe one is offered with "(unsafe)" in its title and never
preferred, as `--unsafe-fixes` keeps it out of `--fix`.
"""

from __future__ import annotations

import re

from policylint.autofix import FilePlan, apply_to
from policylint.findings import Finding
from policylint.server.documents import Lines, Spot
from policylint.values import frozen

# The findings a comment cannot hide (docs/suppressions.md): the internal error and the findings
# about suppressions themselves.
UNSUPPRESSIBLE = re.compile(r"^PL(000|90\d)$")
# A `#` that starts a comment: at the start of the line or after white space (YAML 1.2 §6.6 "Comments").
_COMMENT = re.compile(r"(^|[ \t])#")


@frozen
class TextEdit:
    """Replace the 0-based range start..end of `file` with `text`."""

    file: str
    start: Spot
    end: Spot
    text: str


@frozen
class Action:
    title: str
    finding: Finding
    edits: tuple[TextEdit, ...]
    preferred: bool
    kind: str  # "quickfix"


def fix_action(finding: Finding, text: str) -> Action | None:
    """The finding's fix as an edit of `text` (the file `finding.fix.file` as analysed); None
    when it has none or autofix cannot apply it to this text (a flow collection, say)."""
    fix = finding.fix
    if fix is None or finding.suppression is not None:
        return None
    planned = apply_to(FilePlan(fix.file, findings=[finding]), text.encode("utf-8"))
    if not planned.applied:
        return None
    fixed = planned.fixed.decode("utf-8")
    edit = smallest_edit(fix.file, text, fixed)
    title = f"Fix {finding.rule}: {fix.description}" + ("" if fix.safe else " (unsafe)")
    return Action(title, finding, (edit,), fix.safe, "quickfix")


def smallest_edit(file: str, before: str, after: str) -> TextEdit:
    """One edit that turns `before` into `after`: the span between their common prefix and suffix."""
    start = 0
    limit = min(len(before), len(after))
    while start < limit and before[start] == after[start]:
        start += 1
    end = 0
    while end < limit - start and before[len(before) - 1 - end] == after[len(after) - 1 - end]:
        end += 1
    lines = Lines(before)
    return TextEdit(file, _spot(lines, before, start), _spot(lines, before, len(before) - end), after[start : len(after) - end])


def _spot(lines: Lines, text: str, offset: int) -> Spot:
    line = text.count("\n", 0, offset)
    column = offset - (text.rfind("\n", 0, offset) + 1)
    return lines.to_lsp(line + 1, column + 1)


def suppress_action(finding: Finding, text: str) -> Action | None:
    """`# policylint: disable=RULE -- ` at the end of the finding's line, or, when the line has a
    comment already, `disable-next-line` above it. The reason is the user's to write after `--`:
    a suppression without one is PL903, so one left empty is said, not silently accepted."""
    if UNSUPPRESSIBLE.match(finding.rule) or finding.suppression is not None or finding.line < 1:
        return None
    lines = Lines(text)
    row = finding.line - 1
    content = lines.line(row)
    title = f"Suppress {finding.rule} ({finding.name}) on this line, with a reason"
    if _COMMENT.search(content) is None and content.strip() and not content.rstrip().endswith(("|", ">", "|-", ">-")):
        end = lines.end_of(finding.line)
        comment = f"  # policylint: disable={finding.rule} -- "
        return Action(title, finding, (TextEdit(finding.file, end, end, comment),), False, "quickfix")
    indent = content[: len(content) - len(content.lstrip())]
    start = Spot(row, 0)
    comment = f"{indent}# policylint: disable-next-line={finding.rule} -- \n"
    return Action(title, finding, (TextEdit(finding.file, start, start, comment),), False, "quickfix")
