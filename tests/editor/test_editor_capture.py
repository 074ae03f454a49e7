"""The picture of README "In your editor": drawn from what the real server sends, and current.

The frame is tested on captures written here, with coordinates counted by hand from the grid of
`tests/editor_frame.py`: a pane starts under the title bar (30) and its tab bar (30) plus 6, so its
first line's top is y 66; a line is 19 high; column c of the code is at x 56 + 7.8 c. The committed
image is compared with one drawn from a new session with `policylint server` (slow: it starts the
server and analyses `examples/`).
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from tests.editor_capture import OUTPUT, CaptureError, Shot, _position, capture
from tests.editor_frame import (
    Capture,
    Diagnostic,
    Pane,
    Run,
    markdown_rows,
    markdown_runs,
    popup_rows,
    render,
    wrap,
)

ROOT = Path(__file__).resolve().parents[2]
TEXT = "a: 1\n  name: bad\n"
MISSING = Diagnostic("p.yaml", 1, 8, 1, 11, 1, "PL201", "policylint", "gone")
HOVER = "**targetRef** `HTTPRoute bad`: **TargetNotFound**\n\nNot in the workspace.\n"


def _capture(*diagnostics: Diagnostic, hover: str = HOVER, at: tuple[int, int] = (1, 8)) -> Capture:
    pane = Pane("p.yaml", TEXT, 1, 2, at, hover, diagnostics)
    return Capture("title", "what it shows", (pane,), diagnostics)


def _texts(rows: list[list[Run] | None]) -> list[str | None]:
    return [None if row is None else "".join(run.text for run in row) for row in rows]


def test_a_diagnostic_is_underlined_under_its_characters() -> None:
    svg = render(_capture(MISSING))
    # Line 2 (row 1): its top at 66 + 19, the underline 18 below; `bad` is columns 8 to 11.
    assert '<g class="error squiggle"><path d="M118.4,103 L120.4,101.5 L122.4,103 ' in svg
    assert ' L141.8,103"/></g>' in svg
    # The key `name` at column 2, on the line's baseline (top + 14), held to its four cells.
    assert '<text x="71.6" y="99" class="k" textLength="31.2">name</text>' in svg
    assert '<text x="118.4" y="99" class="s" textLength="23.4">bad</text>' in svg


def test_an_empty_range_is_underlined_on_one_character() -> None:
    at_start = Diagnostic("p.yaml", 0, 0, 0, 0, 2, "PL001", "policylint", "here")
    svg = render(_capture(at_start, at=(1, 0)))
    assert '<g class="warning squiggle"><path d="M56,84 L58,82.5 L60,84 L62,82.5 L63.8,84"/></g>' in svg


def test_the_popup_shows_the_diagnostics_at_the_cursor_then_the_hover() -> None:
    elsewhere = Diagnostic("p.yaml", 0, 0, 0, 1, 3, "PL603", "policylint", "not here")
    pane = _capture(MISSING, elsewhere).panes[0]
    assert _texts(popup_rows(pane)) == [
        "gone  policylint(PL201)",
        None,
        "targetRef HTTPRoute bad: TargetNotFound",
        "",
        "Not in the workspace.",
    ]
    # A diagnostic's hint (after its first line) is a row of its own.
    hinted = MISSING._replace(message="gone\nFix the name.")
    assert _texts(popup_rows(pane._replace(diagnostics=(hinted,), hover=""))) == ["gone  policylint(PL201)", "Fix the name."]


def test_the_hover_markdown_is_drawn_as_styled_text() -> None:
    assert markdown_runs("**targetRef** `HTTPRoute bad`: **TargetNotFound**") == [
        Run("targetRef", "b"),
        Run(" ", ""),
        Run("HTTPRoute bad", "code"),
        Run(": ", ""),
        Run("TargetNotFound", "b"),
    ]
    assert markdown_runs("**`Gateway a/b`**") == [Run("Gateway a/b", "bc")]
    # Code spans of any fence (hovers.code), padding dropped; an unclosed backtick is text.
    assert markdown_runs("``a`b`` and `` `x` ``") == [Run("a`b", "code"), Run(" and ", ""), Run("`x`", "code")]
    assert markdown_runs("a ` b") == [Run("a ` b", "")]
    svg = render(_capture(MISSING))
    assert 'class="b" textLength="70.2">targetRef</text>' in svg
    # Rows break at spaces, so each word is a run of its own.
    assert 'class="code" textLength="70.2">HTTPRoute</text>' in svg


def test_rows_wrap_at_spaces_with_a_hanging_indent_and_cut_long_words() -> None:
    assert _texts(list(wrap([Run("aaa bbb ccc", "")], 7))) == ["aaa bbb ", "ccc"]
    assert _texts(list(wrap([Run("abcdefghij", "")], 4))) == ["abcd", "efgh", "ij"]
    assert _texts(list(markdown_rows("- one two three\n  - deep", 9))) == ["• one two ", "  three", "  ◦ deep"]


def test_a_long_hover_scrolls() -> None:
    hover = "\n".join(f"- item {i}" for i in range(40))
    svg = render(_capture(hover=hover, at=(0, 0)))
    # 16 of 40 rows shown: the popup is 16 * 18 + 12 high, the thumb 296 * 16 / 40 of its track.
    assert '<rect class="thumb" ' in svg and 'width="6" height="118.4"/>' in svg
    assert ">15</text>" in svg and ">16</text>" not in svg


def test_problems_are_listed_cut_to_the_width_and_escaped() -> None:
    long = MISSING._replace(message="x" * 200)
    hostile = MISSING._replace(line=0, message="a <b> & c")
    svg = render(_capture(long, hostile))
    # 117 cells from x 30: `PL201 p.yaml:2:9  ` takes 18, the message the other 99, its last `…`.
    assert f">{'x' * 98}…</text>" in svg
    assert ">a &lt;b&gt; &amp; c</text>" in svg
    assert "2 errors" in svg
    ET.fromstring(svg)  # well-formed


def test_a_shot_whose_anchor_is_gone_is_a_clear_error() -> None:
    with pytest.raises(CaptureError, match="update SHOTS"):
        _position("kind: Gateway\n", Shot("infra/gateway.yaml", 1, 2, "  name: shared-gw"))
    assert _position("metadata:\n  name: shared-gw\n", Shot("x", 1, 2, "  name: shared-gw")) == (1, 8)


def test_the_readme_and_the_editors_page_show_the_committed_picture() -> None:
    ET.parse(OUTPUT)  # well-formed
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("## In your editor", 1)[1].split("\n## ", 1)[0]
    assert "](docs/images/editor.svg)" in section
    assert "](images/editor.svg)" in (ROOT / "docs" / "editors.md").read_text(encoding="utf-8")


@pytest.mark.slow  # starts the server and analyses examples/
def test_the_committed_picture_is_what_the_server_sends_now() -> None:
    drawn = capture()
    assert "PL201" in drawn and "storfront" in drawn
    assert drawn == OUTPUT.read_text(encoding="utf-8"), "docs/images/editor.svg is stale: run `make editor-capture`"
