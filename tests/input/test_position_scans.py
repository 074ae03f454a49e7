"""The scans positions make of a file's text, each the one it replaced (docs/performance.md "The
simulation, positions and the report, done once"): where the next document starts, found with
`str.find` instead of a regex that tries every offset (`positions._boundary`), and the block
reader's check for lines it does not take apart with the indentation taken whole
(`blockpaths._ODD_LINE`). Both are compared with the regex they replaced on texts made of what
they look for. A document's lines are taken by their text, each distinct line's indentation and
oddness worked out once for the run (`blockpaths._LineIndents`, counted), compared with the
line-by-line indentation and `_ODD_LINE` searched through the whole text. And each path a run asks
positions about is parsed once (`positions.path_parts`)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from benchmarks.generate import write_corpus
from policylint.input import blockpaths, positions
from policylint.input.positions import _DOCUMENT_BOUNDARY, _boundary
from tests.examples import examples
from tests.lintutil import lint_paths

# The pieces a boundary search meets: boundaries, near misses, every line break libyaml counts.
_TEXT = st.lists(
    st.sampled_from(["---", "...", "----", "--- x", "...x", "-", ".", "\n", "\r", "\r\n", " ", "\t", "a", "\x85", "\u2028"]),
    max_size=16,
).map("".join)


@examples(300, 3000)
@given(_TEXT)
def test_the_next_boundary_is_the_regex_s(text: str) -> None:
    for pos in range(len(text) + 1):
        match = _DOCUMENT_BOUNDARY.search(text, pos)
        assert _boundary(text, pos) == (match.start() if match else -1), (text, pos)


# The pattern before: its indentation could be given back a space at a time.
_ODD_LINE_BEFORE = re.compile(r"\n *(?:- +)*(?:- +-|:)(?: |\n)")
_LINES = st.lists(
    st.lists(st.sampled_from([" ", "  ", "-", "- ", ":", ": ", "a", "a:", "#", "\n"]), max_size=8).map("".join), max_size=6
).map("\n".join)


@examples(300, 3000)
@given(_LINES)
def test_odd_lines_are_found_as_before(text: str) -> None:
    before = _ODD_LINE_BEFORE.search("\n" + text)
    now = blockpaths._ODD_LINE.search("\n" + text)
    assert (now is None) == (before is None), text
    if now is not None and before is not None:
        assert now.span() == before.span(), text


# Lines of one text: repeated, indented, blank, comments, dashes, colons, a last line with or
# without its `\n`.
_DOC_LINES = st.lists(
    st.lists(st.sampled_from([" ", "  ", "-", "- ", ":", ": ", "a", "a:", "#", "\t"]), max_size=8).map("".join), max_size=8
).map("\n".join)


def _indent_before(line: str) -> int:
    """A line's indentation as the block reader worked it out for every line of every document."""
    rest = line.lstrip(" ")
    return (len(line) - len(rest) if rest[0] != "#" else blockpaths._COMMENT) if rest else blockpaths._BLANK


@examples(200, 1000)
@given(_DOC_LINES, st.booleans(), st.booleans())
def test_a_document_s_lines_are_read_as_before(text: str, ended: bool, seen: bool) -> None:
    """A document's lines taken by their text (`blockpaths._LineIndents`), whether the table
    starts empty or has seen them: declined where `_ODD_LINE` searched through the whole text
    found a line, else each line's indentation as worked out line by line."""
    text += "\n" if ended else ""
    if not seen:
        blockpaths._INDENTS.clear()
    doc = blockpaths._Doc(text)
    assert doc.odd == (blockpaths._ODD_LINE.search("\n" + text) is not None), text
    if not doc.odd:
        assert doc.indents == [_indent_before(line) for line in text.split("\n")], text


def test_an_odd_last_line_needs_its_break() -> None:
    """`_ODD_LINE` needs a blank or a break after a complex key's `:` or a nested dash: a last
    line no `\n` ends is not odd for it, though the same line is where one follows."""
    blockpaths._INDENTS.clear()
    assert blockpaths._Doc("a: b\n  :\n").odd
    assert not blockpaths._Doc("a: b\n  :").odd
    assert blockpaths._Doc("a: b\n  :").indents == [0, 2]
    assert blockpaths._Doc("- - a\n").odd and blockpaths._Doc("- - a").odd


def test_each_distinct_line_is_worked_out_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """The lines of the documents positions read are worked out once per distinct text for the
    run: two documents of six lines and the empty text after their last break, each holding six
    distinct texts, five of them shared, work out seven; the table starts again past
    `MAX_LINES`. The spans are the key and its value on their line (0-based line, column, end)."""
    worked: list[str] = []
    original = blockpaths._LineIndents.__missing__

    def counting(table: blockpaths._LineIndents, line: str) -> int:
        worked.append(line)
        return original(table, line)

    monkeypatch.setattr(blockpaths._LineIndents, "__missing__", counting)
    blockpaths._INDENTS.clear()
    first = "kind: A\nmetadata:\n  name: a\nspec:\n  name: a\n  port: 80\n"
    second = "kind: B\nmetadata:\n  name: a\nspec:\n  name: a\n  port: 80\n"
    assert blockpaths.locate(first, [["metadata", "name"], ["spec", "port"]]) == [(2, 2, 9), (5, 2, 10)]
    assert blockpaths.locate(second, [["spec", "port"]]) == [(5, 2, 10)]
    # "kind: A", "metadata:", "  name: a", "spec:", "  port: 80", "" (after the last break); then "kind: B".
    assert worked == ["kind: A", "metadata:", "  name: a", "spec:", "  port: 80", "", "kind: B"]
    monkeypatch.setattr(blockpaths, "MAX_LINES", 4)
    blockpaths._INDENTS.clear()
    blockpaths._Doc(first)
    assert len(blockpaths._INDENTS) <= 4


def test_each_path_a_run_asks_about_is_parsed_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The engine asks for the span of every finding and note twice (the batch, then the finding
    itself), and whether it sits on a placeholder: a path is parsed the first time only."""
    write_corpus(300, tmp_path, seed=5, per_file=0, error_rate=0.75, shared=True)
    parsed: list[str] = []
    original = positions.parse_path

    def counting(path: str) -> list[positions.PathPart]:
        parsed.append(path)
        return original(path)

    monkeypatch.setattr(positions, "_PARTS", {}, raising=False)
    monkeypatch.setattr(positions, "parse_path", counting)
    result = lint_paths([str(tmp_path)])
    assert len(result.findings) > 100
    assert len(parsed) == len(set(parsed)) > 0


# Texts made of every line break libyaml counts, near misses and characters beyond ASCII.
_BREAKS = st.lists(
    st.sampled_from(["a", " ", "\t", "\n", "\r", "\r\n", "\x85", "\u2028", "\u2029", "\x0b", "\x0c", "é", "#"]), max_size=16
).map("".join)


@examples(200, 1000)
@given(_BREAKS)
def test_a_text_whose_only_break_is_a_newline_is_found_as_before(text: str) -> None:
    assert positions._only_newlines(text) == (positions._OTHER_BREAKS.search(text) is None)


@examples(200, 1000)
@given(_BREAKS)
def test_a_line_s_end_is_the_regex_s(text: str) -> None:
    """The end of each line's text, with its break taken off by `str.rstrip` alone, is where
    taking it off with the line-break regex, then the blanks, put it."""
    resolver = positions.PositionResolver(lambda _: text)
    starts = positions._line_starts(text)
    for line in range(1, len(starts) + 1):
        stop = starts[line] if line < len(starts) else len(text)
        before = len(positions._LINE_BREAK.sub("", text[starts[line - 1] : stop]).rstrip()) + 1
        assert resolver._line_end("f", line, 1) == (line, max(1, before)), (text, line)
