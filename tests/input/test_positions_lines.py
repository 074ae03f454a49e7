"""The block reader's work per line, done once (docs/performance.md "The block reader's lines
looked at once: a list's items by their column, a line's closer look kept"):

- a list's items are found by the lines at their dashes' column (`blockpaths._find_item`), the
  lines between them read together for the least of their indentations, where every line of
  every item before the one asked for was read one at a time; with libyaml's answers where the
  list is indentless, ends at a line indented less, holds comments and blank lines at any
  column, or is shorter than the index;
- what the closer look at a line holding a quote or another character it looks at finds
  (`blockpaths._look`) is kept with the line's indentation for the run (`blockpaths._NOTED`): an
  ASCII document whose lines were all looked up while the table held is checked from it, the
  regexp search through its text not made, and declines what the search declines; a document
  during whose lines the table started again is checked as before.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from policylint.input import blockpaths, positions
from tests.examples import examples
from tests.input.test_positions import _block_documents, _composed, _node_paths

PathParts = tuple[str | int, ...]

RULES = """\
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata:
  name: shop
spec:
  rules:
  - name: first
    backendRefs:
    - name: a
      port: 80
  - name: second
    backendRefs:
    - name: b
      port: 80
  - name: third
    backendRefs:
    - name: c
"""


def _libyaml(text: str, paths: list[PathParts]) -> list[tuple[int, int, int | None]]:
    node = _composed(text)
    assert node is not None
    out: list[tuple[int, int, int | None]] = []
    for parts in paths:
        mark, end = positions._walk(node, parts)
        out.append((mark.line, mark.column, end.column if end is not None and end.line == mark.line else None))
    return out


def _one_at_a_time(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The lines whose indentation the block reader reads one at a time from here on."""
    read: list[int] = []

    class Counting(list):  # type: ignore[type-arg]
        def __getitem__(self, at: Any) -> Any:
            if not isinstance(at, slice):
                read.append(at)
            return super().__getitem__(at)

    original = blockpaths._Doc.__init__

    def counting(self: Any, text: Any) -> None:
        original(self, text)
        self.indents = Counting(self.indents)

    monkeypatch.setattr(blockpaths._Doc, "__init__", counting)
    return read


def test_a_list_s_items_are_found_without_reading_the_lines_between_them(monkeypatch: pytest.MonkeyPatch) -> None:
    """`spec.rules[2]`: the rules' dashes are on lines 6, 10 and 14; the lines of the first two
    rules (7-9, 11-13) are not read one at a time, where the tree before read each of them."""
    read = _one_at_a_time(monkeypatch)
    paths: list[PathParts] = [("spec", "rules", 2)]
    assert blockpaths.locate(RULES, paths) == _libyaml(RULES, paths) == [(14, 4, None)]
    assert not {7, 8, 9, 11, 12, 13} & set(read)


LISTS = [
    # Indentless, followed by a key of the mapping that holds it.
    "a:\n- x\n- y\nb: 1\n",
    # Ended by a line indented less, and items of several lines.
    "a:\n  b:\n    - x: 1\n      y: 2\n    - x: 3\n  c: 4\n",
    # Comments at every column and blank lines between the items, and before the first.
    "a:\n\n# c\n  - x\n# c\n\n      # c\n  - y: 1\n    z: 2\n  # c\n  - w\n",
    # A list at the root, its items lists and maps.
    "- a\n-\n  - b\n  - c\n- d: 1\n  e:\n  - f\n",
    # Nested lists, each item's last line deeper than the next dash.
    "a:\n  - b:\n    - c\n    - d\n  - e:\n      - f\n",
]


@pytest.mark.parametrize("text", LISTS)
def test_a_list_s_items_found_by_their_column_are_libyaml_s(text: str) -> None:
    node = _composed(text)
    assert node is not None
    paths = [parts for parts in _node_paths(node, flow=False) if any(isinstance(part, int) for part in parts)]
    paths += [(*parts[:-1], 9) for parts in paths if isinstance(parts[-1], int)]  # past the end
    got = blockpaths.locate(text, paths)
    assert got is not None  # read from its lines, not composed
    assert got == _libyaml(text, paths)


QUOTED = "kind: Route\nspec:\n  backendRefs:\n  - group: ''\n    name: a\n  - group: ''\n    name: b\n"


def test_a_line_s_closer_look_is_kept_and_the_text_not_searched(monkeypatch: pytest.MonkeyPatch) -> None:
    """A document whose lines hold a quote is checked from what the table kept of them: the
    regexp search through its text (`_check`) is not made, the lines are not taken apart again,
    and the answers are libyaml's."""
    searched: list[str] = []
    looked: list[str] = []
    check, look = blockpaths._check, blockpaths._look

    def counting_check(text: str, *args: Any) -> None:
        searched.append(text)
        check(text, *args)

    def counting_look(line: str, *args: Any) -> Any:
        looked.append(line)
        return look(line, *args)

    monkeypatch.setattr(blockpaths, "_check", counting_check)
    monkeypatch.setattr(blockpaths, "_look", counting_look)
    blockpaths._INDENTS.clear()
    paths: list[PathParts] = [("spec", "backendRefs", 1, "name"), ("spec", "backendRefs", 0, "group")]
    assert blockpaths.locate(QUOTED, paths) == _libyaml(QUOTED, paths) == [(6, 4, 11), (3, 4, 13)]
    assert looked == ["  - group: ''"]  # once, when the line was first seen
    assert blockpaths.locate(QUOTED.replace("name: b", "name: c"), paths) == [(6, 4, 11), (3, 4, 13)]
    assert searched == []
    assert looked == ["  - group: ''"]


DECLINED = [
    # A quoted scalar that goes on to the next line.
    "a: 'b\n  c'\nd: 1\n",
    # A quoted key at the root, and deeper: not looked for by its text, so read line by line.
    "'a': 1\nb:\n  'c': 2\n  d: 3\n",
    # A flow collection that goes on to the next line.
    "a: [b,\n  c]\nd: 1\n",
    # A block scalar's content that would be declined outside it, then a line after it.
    "a: |\n  'b\n  [c\nd: 'e'\n",
    # A block scalar with an explicit indentation.
    "a: |2\n   b\nc: 1\n",
    # The same line as a last line no break ends, and inside a document.
    "a: 'b'\nc:\n  d: 'e'",
    "a: 'b'\nc:\n  d: 'e'\nf: 1\n",
]


@pytest.mark.parametrize("text", DECLINED)
def test_a_document_is_declined_from_the_kept_looks_as_by_the_search(text: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The same answers (and the same documents declined) with the kept looks as with the search
    through the text, which a table started again during the document's lines falls back to."""
    node = _composed(text)
    assert node is not None
    paths = _node_paths(node, flow=False)
    blockpaths._INDENTS.clear()
    kept = blockpaths.locate(text, paths)
    assert kept == blockpaths.locate(text, paths)  # every line seen before
    searched: list[str] = []
    check = blockpaths._check

    def counting(text: str, *args: Any) -> None:
        searched.append(text)
        check(text, *args)

    monkeypatch.setattr(blockpaths, "_check", counting)
    monkeypatch.setattr(blockpaths, "MAX_LINES", 1)
    blockpaths._INDENTS.clear()
    assert blockpaths.locate(text, paths) == kept
    assert searched == [text]
    if kept is not None:
        assert kept == _libyaml(text, paths)


_NOTEWORTHY_LINES = st.lists(
    st.sampled_from(["a: 1", "  b: 2", "- c", "  - d: 'e'", "f: |", "  g'", "h: '", "'i': j", "  k: [l]", "", "# '", "m: [n,"]),
    min_size=1,
    max_size=10,
).map("\n".join)


@examples(200, 1000)
@given(st.one_of(_NOTEWORTHY_LINES, _block_documents()), st.booleans())
def test_the_kept_looks_answer_as_the_search_through_the_text(text: str, warm: bool) -> None:
    """Whatever the document, the answers from the kept looks (the table warm or started empty)
    are those of the search through the text, which the table restarting on every line forces."""
    try:
        node = _composed(text)
    except Exception:
        return
    if node is None:
        return
    paths = _node_paths(node, flow=False)
    if not warm:
        blockpaths._INDENTS.clear()
    kept = blockpaths.locate(text, paths)
    bound = blockpaths.MAX_LINES
    blockpaths.MAX_LINES = 1
    try:
        blockpaths._INDENTS.clear()
        searched = blockpaths.locate(text, paths)
    finally:
        blockpaths.MAX_LINES = bound
        blockpaths._INDENTS.clear()
    assert kept == searched, text
