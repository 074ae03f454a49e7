"""An editor's frame as SVG, drawn from what `policylint server` sent (`tests/editor_capture.py`).

The picture of README "In your editor": each pane is a file as an editor shows it (line numbers,
YAML coloured by a plain reading of each line, a wavy underline at every diagnostic's range) with
the popup the editor shows on hover there: the diagnostics at that position, then the hover's
Markdown as text; under the panes, the Problems list of the whole workspace. Nothing here talks to
the server: the capture is data, so this module is tested on data counted by hand
(`tests/editor/test_editor_capture.py`).

Every glyph sits on a fixed grid: each run of text carries its `x` and its `textLength`, so a
viewer whose monospace font is a little wider or narrower than the one assumed still puts each
underline under its characters. The output is a function of the capture alone (no clock, no
random ids, numbers written with a fixed precision), so the committed image can be compared with
a fresh one byte for byte.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Sequence
from typing import NamedTuple
from xml.sax.saxutils import escape as xml_escape
from xml.sax.saxutils import quoteattr

WIDTH = 960
FONT_SIZE = 13
CELL = 7.8  # the advance of one monospace character at FONT_SIZE (0.6 em)
LINE = 19  # a line of code
POPUP_LINE = 18
GUTTER = 56  # line numbers, right-aligned in 5 cells, and a margin
PAD = 10
POPUP_COLUMNS = 84
POPUP_ROWS = 16  # rows shown; a longer popup scrolls, as an editor's does
BAR = 30  # the title bar and a pane's tab bar
FONTS = 'ui-monospace, SFMono-Regular, Menlo, Consolas, "DejaVu Sans Mono", "Liberation Mono", monospace'

# LSP DiagnosticSeverity: 1 error, 2 warning, 3 information, 4 hint.
SEVERITY_CLASS = {1: "error", 2: "warning", 3: "info", 4: "info"}
SEVERITY_WORD = {1: "error", 2: "warning", 3: "info", 4: "hint"}

STYLE = """\
svg { white-space: pre; }
text { font-family: FONTS; font-size: 13px; fill: #d4d4d4; }
.win { fill: #1e1e1e; }
.chrome { fill: #323233; }
.tabbar { fill: #252526; }
.tab { fill: #1e1e1e; }
.title, .muted { fill: #9d9d9d; }
.gutter { fill: #6e7681; }
.k { fill: #9cdcfe; }
.s { fill: #ce9178; }
.n { fill: #b5cea8; }
.c { fill: #6a9955; }
.p { fill: #808080; }
.b { font-weight: bold; fill: #e8e8e8; }
.code { fill: #d7ba7d; }
.bc { font-weight: bold; fill: #d7ba7d; }
.popup { fill: #252526; stroke: #454545; }
.rule { stroke: #454545; }
.thumb { fill: #4f4f4f; }
.current { fill: #2a2d2e; }
.error { stroke: #f14c4c; fill: #f14c4c; }
.warning { stroke: #cca700; fill: #cca700; }
.info { stroke: #3794ff; fill: #3794ff; }
.squiggle { fill: none; stroke-width: 1.2; }
""".replace("FONTS", FONTS)


class Diagnostic(NamedTuple):
    """One published diagnostic; lines and characters from 0, as the protocol counts them."""

    file: str
    line: int
    character: int
    end_line: int
    end_character: int
    severity: int
    code: str
    source: str
    message: str


class Pane(NamedTuple):
    """A file shown from line `first` to `last` (from 1), hovered at `hover_at` (from 0)."""

    file: str
    text: str
    first: int
    last: int
    hover_at: tuple[int, int]
    hover: str  # the hover's Markdown, as the server sent it
    diagnostics: tuple[Diagnostic, ...]  # this file's


class Capture(NamedTuple):
    title: str
    description: str  # the picture's text alternative
    panes: tuple[Pane, ...]
    problems: tuple[Diagnostic, ...]  # every file's, in the Problems list's order


class Run(NamedTuple):
    """A run of text in one style (a class of STYLE, or "" for the default)."""

    text: str
    style: str


def num(value: float) -> str:
    """A coordinate with at most two decimals and no trailing zeros: the same text on every machine."""
    return f"{value:.2f}".rstrip("0").rstrip(".")


def text_at(x: float, y: float, runs: Iterable[Run]) -> Iterator[str]:
    """`<text>` elements for `runs` from `x`, each held to its cells by `textLength`."""
    for run in runs:
        body = run.text
        lead = len(body) - len(body.lstrip(" "))
        body = body.strip(" ")
        if body:
            start = x + lead * CELL
            style = f" class={quoteattr(run.style)}" if run.style else ""
            yield f'<text x="{num(start)}" y="{num(y)}"{style} textLength="{num(len(body) * CELL)}">{xml_escape(body)}</text>'
        x += len(run.text) * CELL


# ---- YAML, coloured as an editor's grammar would, for display only --------------------------------


def _scalar(text: str) -> str:
    stripped = text.strip()
    if stripped in {"true", "false", "null", "~"} or stripped.lstrip("-").replace(".", "", 1).isdigit():
        return "n"
    return "s"


def _comment_at(text: str) -> int:
    """Where a trailing comment starts (` #` outside quotes), or -1."""
    quote = ""
    for index, char in enumerate(text):
        if quote:
            quote = "" if char == quote else quote
        elif char in "'\"":
            quote = char
        elif char == "#" and (index == 0 or text[index - 1] in " \t"):
            return index
    return -1


def yaml_runs(line: str) -> list[Run]:
    """A line of YAML as runs: keys, scalars, comments, punctuation."""
    cut = _comment_at(line)
    body, comment = (line, "") if cut < 0 else (line[:cut], line[cut:])
    runs: list[Run] = []
    rest = body
    indent = len(rest) - len(rest.lstrip(" "))
    runs.append(Run(rest[:indent], ""))
    rest = rest[indent:]
    if rest.strip() in {"---", "..."}:
        return [*runs, Run(rest, "p"), Run(comment, "c")]
    while rest.startswith("- "):
        runs.append(Run("- ", "p"))
        rest = rest[2:]
    key, colon, value = rest.partition(": ")
    if not colon and rest.rstrip().endswith(":"):
        key, colon, value = rest.rstrip()[:-1], ":", rest[len(rest.rstrip()) :]
    if colon and not key.startswith(("'", '"', "{", "[")):
        runs += [Run(key, "k"), Run(colon, "p"), Run(value, _scalar(value) if value.strip() else "")]
    else:
        runs.append(Run(rest, _scalar(rest) if rest.strip() else ""))
    runs.append(Run(comment, "c"))
    return [run for run in runs if run.text]


# ---- the hover's Markdown, as text -----------------------------------------------------------------


def markdown_runs(line: str) -> list[Run]:
    """One line of the Markdown the server writes: `**strong**` and code spans of any fence.

    Runs are plain (""), strong ("b"), code ("code") or strong code ("bc"). Code spans follow
    CommonMark §6.1 "Code spans" (the fence is a run of backticks closed by a run of the same
    length, one space of padding on both sides is dropped); outside them `**` toggles strong.
    """
    runs: list[Run] = []
    bold = False
    plain: list[str] = []

    def flush() -> None:
        if plain:
            runs.append(Run("".join(plain), "b" if bold else ""))
            plain.clear()

    index = 0
    while index < len(line):
        if line.startswith("**", index):
            flush()
            bold = not bold
            index += 2
            continue
        if line[index] == "`":
            fence_end = index
            while fence_end < len(line) and line[fence_end] == "`":
                fence_end += 1
            fence = line[index:fence_end]
            close = _closing_fence(line, fence, fence_end)
            if close >= 0:
                flush()
                body = line[fence_end:close]
                if len(body) > 1 and body.startswith(" ") and body.endswith(" ") and body.strip(" "):
                    body = body[1:-1]
                runs.append(Run(body, "bc" if bold else "code"))
                index = close + len(fence)
                continue
            plain.append(fence)
            index = fence_end
            continue
        plain.append(line[index])
        index += 1
    flush()
    return runs


def _closing_fence(line: str, fence: str, start: int) -> int:
    """Where the run of backticks exactly as long as `fence` starts after `start`, or -1."""
    index = line.find(fence, start)
    while index >= 0:
        end = index + len(fence)
        if (index == 0 or line[index - 1] != "`") and (end >= len(line) or line[end] != "`"):
            return index
        while end < len(line) and line[end] == "`":
            end += 1
        index = line.find(fence, end)
    return -1


def wrap(runs: Sequence[Run], columns: int, indent: int = 0) -> list[list[Run]]:
    """`runs` in rows of at most `columns` cells, broken after spaces; later rows start at `indent`.

    A word longer than a whole row is cut, as an editor breaks it; spaces that would start a
    wrapped row are dropped.
    """
    tokens = [(style, token) for text, style in runs for token in re.findall(r"\S+ *| +", text)]
    rows: list[list[Run]] = [[]]
    used = 0
    fresh = True  # nothing but the indent on the current row yet

    def new_row() -> None:
        nonlocal used, fresh
        rows.append([Run(" " * indent, "")] if indent else [])
        used, fresh = indent, True

    for style, token in tokens:
        word = token.rstrip(" ")
        if not word and fresh and len(rows) > 1:
            continue
        if used + len(word) > columns and not fresh:
            new_row()
        while len(word) > columns - used:
            room = columns - used
            rows[-1].append(Run(token[:room], style))
            token, word = token[room:], word[room:]
            new_row()
        rows[-1].append(Run(token, style))
        used += len(token)
        fresh = fresh and not word
    return [row for row in rows if any(run.text.strip() for run in row)]


def markdown_rows(markdown: str, columns: int) -> list[list[Run]]:
    """The hover's Markdown as rows of text: paragraphs, bullets (`•`, `◦` nested), wrapped."""
    rows: list[list[Run]] = []
    for line in markdown.splitlines():
        if not line.strip():
            if rows and rows[-1]:
                rows.append([])
            continue
        depth = len(line) - len(line.lstrip(" "))
        stripped = line.lstrip(" ")
        if stripped.startswith("- "):
            bullet = "◦ " if depth else "• "
            runs = [Run(" " * depth + bullet, "muted"), *markdown_runs(stripped[2:])]
            rows += wrap(runs, columns, depth + 2)
        else:
            rows += wrap(markdown_runs(stripped), columns)
    while rows and not rows[-1]:
        rows.pop()
    return rows


def diagnostic_rows(diagnostic: Diagnostic, columns: int) -> list[list[Run]]:
    """A diagnostic as an editor's hover shows it: the message, its hint, `source(code)`."""
    message, _, hint = diagnostic.message.partition("\n")
    rows = wrap([Run(message, ""), Run(f"  {diagnostic.source}({diagnostic.code})", "muted")], columns)
    if hint:
        rows += wrap([Run(hint, "muted")], columns)
    return rows


# ---- the frame --------------------------------------------------------------------------------------


def squiggle(x0: float, x1: float, y: float) -> str:
    """A wavy underline from `x0` to `x1` (at least one cell), as editors draw a diagnostic's range."""
    points = [f"M{num(x0)},{num(y)}"]
    x, up = x0, True
    while x < x1:
        x = min(x + 2, x1)
        points.append(f"L{num(x)},{num(y - 1.5 if up else y)}")
        up = not up
    return f'<path d="{" ".join(points)}"/>'


def _covers(diagnostic: Diagnostic, line: int, character: int) -> bool:
    start = (diagnostic.line, diagnostic.character)
    end = (diagnostic.end_line, diagnostic.end_character)
    return start <= (line, character) <= end


def _marks(pane: Pane, lines: Sequence[str]) -> Iterator[tuple[int, int, int, str]]:
    """(row, start, end, class) of each visible line's part of each diagnostic's range."""
    for diagnostic in pane.diagnostics:
        for line in range(diagnostic.line, diagnostic.end_line + 1):
            row = line - (pane.first - 1)
            if not 0 <= row < len(lines):
                continue
            text = lines[row]
            start = diagnostic.character if line == diagnostic.line else len(text) - len(text.lstrip(" "))
            end = diagnostic.end_character if line == diagnostic.end_line else len(text)
            yield row, start, max(end, start + 1), SEVERITY_CLASS.get(diagnostic.severity, "info")


def popup_rows(pane: Pane) -> list[list[Run] | None]:
    """What the editor shows on hover at `pane.hover_at`: the diagnostics there, then the hover."""
    line, character = pane.hover_at
    rows: list[list[Run] | None] = []
    for diagnostic in pane.diagnostics:
        if _covers(diagnostic, line, character):
            if rows:
                rows.append(None)
            rows += diagnostic_rows(diagnostic, POPUP_COLUMNS)
    if pane.hover:
        if rows:
            rows.append(None)
        rows += markdown_rows(pane.hover, POPUP_COLUMNS)
    return rows


def _tab_bar(parts: list[str], y: float, label: str, note: str = "") -> None:
    parts.append(f'<rect class="tabbar" x="0" y="{num(y)}" width="{WIDTH}" height="{BAR}"/>')
    parts.append(f'<rect class="tab" x="0" y="{num(y)}" width="{num((len(label) + 4) * CELL)}" height="{BAR}"/>')
    parts += text_at(2 * CELL, y + 20, [Run(label, "title")])
    if note:
        parts += text_at((len(label) + 6) * CELL, y + 20, [Run(note, "muted")])


def _pane(parts: list[str], pane: Pane, y: float) -> float:
    """Draw `pane` from `y`; the y where the next part starts."""
    _tab_bar(parts, y, pane.file)
    top = y + BAR + 6
    lines = pane.text.splitlines()[pane.first - 1 : pane.last]
    hover_row = pane.hover_at[0] - (pane.first - 1)
    if 0 <= hover_row < len(lines):
        parts.append(f'<rect class="current" x="0" y="{num(top + hover_row * LINE)}" width="{WIDTH}" height="{LINE}"/>')
    for row, text in enumerate(lines):
        number = str(pane.first + row)
        baseline = top + row * LINE + 14
        parts += text_at(8 + (5 - len(number)) * CELL, baseline, [Run(number, "gutter")])
        parts += text_at(GUTTER, baseline, yaml_runs(text))
    for row, start, end, cls in _marks(pane, lines):
        parts.append(
            f'<g class="{cls} squiggle">{squiggle(GUTTER + start * CELL, GUTTER + end * CELL, top + row * LINE + 18)}</g>'
        )
    bottom = top + len(lines) * LINE
    rows = popup_rows(pane)
    if rows and 0 <= hover_row < len(lines):
        bottom = max(bottom, _popup(parts, rows, GUTTER + pane.hover_at[1] * CELL, top + (hover_row + 1) * LINE + 2))
    return bottom + 8


def _popup(parts: list[str], rows: list[list[Run] | None], x: float, y: float) -> float:
    """The hover popup at (`x`, `y`), scrolled to its top; the y of its bottom edge."""
    shown = rows[:POPUP_ROWS]
    scrolls = len(rows) > len(shown)
    cells = max((sum(len(run.text) for run in row) for row in shown if row), default=0)
    width = cells * CELL + 2 * PAD + (10 if scrolls else 0)
    height = len(shown) * POPUP_LINE + 12
    x = max(GUTTER, min(x - PAD, WIDTH - 12 - width))
    parts.append(f'<rect class="popup" x="{num(x)}" y="{num(y)}" width="{num(width)}" height="{num(height)}" rx="3"/>')
    for index, row in enumerate(shown):
        row_top = y + 6 + index * POPUP_LINE
        if row is None:
            middle = num(row_top + POPUP_LINE / 2)
            parts.append(f'<line class="rule" x1="{num(x)}" y1="{middle}" x2="{num(x + width)}" y2="{middle}"/>')
        else:
            parts += text_at(x + PAD, row_top + 13, row)
    if scrolls:
        track = height - 4
        thumb = track * len(shown) / len(rows)
        parts.append(f'<rect class="thumb" x="{num(x + width - 8)}" y="{num(y + 2)}" width="6" height="{num(thumb)}"/>')
    return y + height


def _counts(problems: Sequence[Diagnostic]) -> str:
    words = []
    for severity in (1, 2, 3, 4):
        count = sum(1 for problem in problems if problem.severity == severity)
        if count:
            word = SEVERITY_WORD[severity]
            words.append(f"{count} {word}{'' if count == 1 else 's'}")
    return ", ".join(words) or "no problems"


def _icon(severity: int, x: float, y: float) -> str:
    cls = SEVERITY_CLASS.get(severity, "info")
    if cls == "warning":
        return f'<path class="{cls}" d="M{num(x)},{num(y - 5)} L{num(x + 5.5)},{num(y + 4.5)} L{num(x - 5.5)},{num(y + 4.5)} Z"/>'
    return f'<circle class="{cls}" cx="{num(x)}" cy="{num(y)}" r="4.5"/>'


def _problems(parts: list[str], problems: Sequence[Diagnostic], y: float) -> float:
    """The Problems list: one row per diagnostic of the workspace, cut to the width."""
    _tab_bar(parts, y, "PROBLEMS", _counts(problems))
    top = y + BAR + 6
    columns = int((WIDTH - 30 - PAD) / CELL)
    for index, problem in enumerate(problems):
        baseline = top + index * LINE + 14
        parts.append(_icon(problem.severity, 16, baseline - 4.5))
        place = f"{problem.file}:{problem.line + 1}:{problem.character + 1}"
        head = [Run(problem.code, "b"), Run(" ", ""), Run(place, "muted"), Run("  ", "")]
        room = columns - sum(len(run.text) for run in head)
        message = problem.message.partition("\n")[0]
        if len(message) > room:
            message = message[: room - 1] + "…"
        parts += text_at(30, baseline, [*head, Run(message, "")])
    return top + len(problems) * LINE + 8


def render(capture: Capture) -> str:
    """The capture as one SVG document."""
    parts: list[str] = []
    for x in (16, 34, 52):
        parts.append(f'<circle cx="{x}" cy="15" r="6" fill="#5a5a5a"/>')
    parts += text_at(76, 20, [Run(capture.title, "title")])
    y: float = BAR
    for pane in capture.panes:
        y = _pane(parts, pane, y)
    height = num(_problems(parts, capture.problems, y))
    head = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" viewBox="0 0 {WIDTH} {height}"'
        ' role="img" aria-labelledby="title desc" xml:space="preserve">',
        f'<title id="title">{xml_escape(capture.title)}</title>',
        f'<desc id="desc">{xml_escape(capture.description)}</desc>',
        f"<style>\n{STYLE}</style>",
        f'<rect class="win" x="0" y="0" width="{WIDTH}" height="{height}" rx="8"/>',
        f'<rect class="chrome" x="0" y="0" width="{WIDTH}" height="{BAR}" rx="8"/>',
        f'<rect class="chrome" x="0" y="8" width="{WIDTH}" height="{BAR - 8}"/>',
    ]
    return "\n".join([*head, *parts, "</svg>"]) + "\n"
