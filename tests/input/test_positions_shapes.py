"""Positions read once per document shape (docs/performance.md "Positions read once per document
shape"): a document whose lines differ from one read before only in plain values that end their
lines takes that document's answers (`blockshapes.locate`), each span ending where its own
value or line does; what it answers is the block reader's answer on the document itself, and
libyaml's marks. The shapes kept are bounded by their lines. A document's text is cut with the
boundary that ends it kept as where the next root is looked for (`positions._Text.document`).
"""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from policylint.input import blockpaths, blockshapes, positions
from policylint.input.load import DocumentRef
from tests.examples import examples
from tests.input.test_positions import _block_documents, _composed, _node_paths
from tests.input.test_positions_lines import _libyaml

PathParts = tuple[str | int, ...]

ROUTE = """\
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata:
  name: {name}
  namespace: {namespace}
spec:
  parentRefs:
  - name: {gateway}
  rules:
  - backendRefs:
    - name: {service}
      port: 80
    - {item}
"""

PATHS: list[PathParts] = [
    ("metadata", "name"),
    ("metadata", "namespace"),
    ("spec", "parentRefs", 0, "name"),
    ("spec", "rules", 0, "backendRefs", 0, "name"),
    ("spec", "rules", 0, "backendRefs", 1),
    ("spec", "rules", 0),
    ("spec",),
    ("spec", "rules", 0, "backendRefs", 0, "missing"),
]


def _fresh() -> None:
    blockshapes._SHAPES.clear()
    blockshapes._ANSWERS.clear()
    blockshapes._ANSWERS.lines = 0


def _read(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The texts the block reader is given from now on."""
    texts: list[str] = []
    original = blockpaths.locate

    def counting(text: str, paths: list[PathParts], line_ends: bool = False) -> object:
        texts.append(text)
        return original(text, paths, line_ends)

    monkeypatch.setattr(blockshapes, "locate_lines", counting)
    return texts


def test_a_document_of_a_shape_read_before_is_not_read_again(monkeypatch: pytest.MonkeyPatch) -> None:
    _fresh()
    read = _read(monkeypatch)
    first = ROUTE.format(name="shop", namespace="a", gateway="gw", service="cart", item="x")
    second = ROUTE.format(name="checkout-2", namespace="tenant-00017", gateway="edge.gw", service="v1/api", item="a b-c")
    assert blockshapes.locate(first, PATHS) == blockpaths.locate(first, PATHS, line_ends=True)
    assert len(read) == 1
    assert blockshapes.locate(second, PATHS) == blockpaths.locate(second, PATHS, line_ends=True)
    assert len(read) == 1  # the second document took the first one's answers
    # Each span ends where its own value does: `name: checkout-2` is longer than `name: shop`.
    assert blockshapes.locate(second, PATHS[:1]) == [(3, 2, 18)]
    assert _libyaml(second, PATHS) == blockpaths.locate(second, PATHS)


def test_the_resolver_reads_one_document_of_each_shape(monkeypatch: pytest.MonkeyPatch) -> None:
    _fresh()
    read = _read(monkeypatch)
    docs = [
        ROUTE.format(name=f"route-{i}", namespace=f"tenant-{i:05d}", gateway="gw", service=f"svc-{i}", item=str(i))
        for i in range(5)
    ]
    text = "---\n" + "---\n".join(docs)
    resolver = positions.PositionResolver({"f.yaml": text}.get)
    starts = [2 + i * (ROUTE.count("\n") + 1) for i in range(5)]
    refs = [DocumentRef("f.yaml", 0, 0, i, line, 1) for i, line in enumerate(starts)]
    resolver.prefetch([(ref, "spec.rules[0].backendRefs[0].name") for ref in refs])
    assert len(read) == 1  # five documents of one shape: the tree before read each of them
    for i, ref in enumerate(refs):
        assert resolver.span(ref, "spec.rules[0].backendRefs[0].name") == (ref.line + 10, 7, ref.line + 10, 13 + len(f"svc-{i}"))


def test_the_shapes_kept_hold_at_most_their_bound_of_lines(monkeypatch: pytest.MonkeyPatch) -> None:
    """What is kept is bounded by the lines of the shapes held, not by their number: a document
    longer than the bound is read and not kept, and the table starts again when the next shape
    would take it past the bound."""
    _fresh()
    read = _read(monkeypatch)
    lines = ROUTE.count("\n") + 1
    monkeypatch.setattr(blockshapes, "MAX_SHAPE_LINES", 2 * lines)
    route = ROUTE.format(name="a", namespace="b", gateway="c", service="d", item="e")
    long = route + "".join(f"  k{i}: v\n" for i in range(lines + 1))  # more lines than the bound
    for text in (long, long):
        assert blockshapes.locate(text, PATHS) == blockpaths.locate(text, PATHS, line_ends=True)
    assert len(read) == 2 and not blockshapes._ANSWERS
    others = [route.replace("apiVersion:", f"apiVersion{i}:") for i in range(3)]  # three shapes
    for text in others:
        assert blockshapes.locate(text, PATHS) == blockpaths.locate(text, PATHS, line_ends=True)
    assert list(blockshapes._ANSWERS) == [tuple(blockshapes._SHAPES[line] for line in others[2].split("\n"))]
    assert blockshapes._ANSWERS.lines == lines
    assert blockshapes.locate(others[2], PATHS) == blockpaths.locate(others[2], PATHS, line_ends=True)
    assert len(read) == 5  # the last shape kept, not read again


@pytest.mark.parametrize(
    ("line", "shape"),
    [
        ("  name: billing-6-route", "  name: v"),
        ("- name: a", "- name: v"),
        ("  - connect-failure", "  - v"),
        ("    value: /cart-0/read", "    value: v"),
        ("msg: two words", "msg: v"),
        # Not set aside: the block reader looks at these values, or they may be something else.
        ("  name: a  ", "  name: a  "),  # a blank after it: the span ends before it
        ("  name: a # note", "  name: a # note"),
        ("  group: ''", "  group: ''"),
        ("  name: it's", "  name: it's"),
        ("  name: -a", "  name: -a"),
        ("  name: a:b", "  name: a:b"),
        ("  name: café", "  name: café"),
        ("  name: a  b", "  name: a  b"),
        ("  - - a", "  - - a"),
        ("  - a: b: c", "  - a: b: c"),
        ("  word", "  word"),  # a plain scalar's later line, or a key a search may find
        ("'a': b", "'a': b"),
        ("a: |", "a: |"),
    ],
)
def test_a_line_s_shape_sets_aside_only_a_plain_value_that_ends_it(line: str, shape: str) -> None:
    _fresh()
    assert blockshapes._SHAPES[line] == shape


# Values of a line's shape: what `_VALUE_LINE` sets aside.
_SET_ASIDE = st.from_regex(re.compile(blockshapes._VALUE), fullmatch=True).filter(lambda v: len(v) < 40)


@st.composite
def _siblings(draw: st.DrawFn) -> tuple[str, str]:
    """A block document, and one of the same shape: each value set aside drawn again."""
    text = draw(_block_documents())
    lines = []
    for line in text.split("\n"):
        found = blockshapes._VALUE_LINE.fullmatch(line)
        lines.append(line if found is None else found.group(1) + draw(_SET_ASIDE))
    return text, "\n".join(lines)


@examples(200, 1000)
@given(_siblings(), st.booleans())
def test_a_shape_s_answers_are_the_block_reader_s_on_each_document(siblings: tuple[str, str], sibling_first: bool) -> None:
    """Whatever the document and whichever of two documents of one shape is read first, each
    gets the block reader's answers on its own text (libyaml's, where the reader answers)."""
    text, sibling = siblings
    assert [blockshapes._SHAPES[line] for line in text.split("\n")] == [blockshapes._SHAPES[line] for line in sibling.split("\n")]
    try:
        nodes = [_composed(text), _composed(sibling)]
    except Exception:
        return
    if nodes[0] is None or nodes[1] is None:
        return
    paths = _node_paths(nodes[0], flow=False)
    _fresh()
    order = [sibling, text] if sibling_first else [text, sibling]
    for doc in order:
        expected = blockpaths.locate(doc, paths, line_ends=True)
        assert blockshapes.locate(doc, paths) == expected, (doc, order)
        if expected is not None:
            lines = doc.split("\n")
            assert expected == [
                (row, column, max(column, len(lines[row].rstrip())) if end is None else end)
                for row, column, end in _libyaml(doc, paths)
            ]


# Texts of lines that start a document or nearly do, as a file's lines.
_LINES = st.lists(
    st.sampled_from(["---", "...", "--- a", "---x", "----", "...x", " ---", "a: 1", "", "# c", "- x", "--- # c"]), max_size=40
)


@examples(200, 600)
@given(_LINES, st.booleans(), st.lists(st.integers(min_value=-1, max_value=45), max_size=12), st.booleans())
def test_a_document_s_text_and_the_next_root_s_start_are_the_table_s(
    lines: list[str], newline_at_end: bool, asked: list[int], in_order: bool
) -> None:
    """A document's text taken with the boundary that ends it kept (`_Text.document`) is the one
    cut from every line's start, and so is where the next root is found from that boundary on."""
    text = "\n".join(lines) + ("\n" if newline_at_end else "")
    starts = positions._line_starts(text)
    found = positions._Text(text)
    for line in sorted(asked) if in_order else asked:
        expected = positions._document_text(text, starts[line - 1]) if 0 < line <= len(starts) else None
        assert found.document(line) == expected, (text, line)
        assert found.start(line + 1) == (starts[line] if 0 <= line < len(starts) else -1), (text, line)


def test_each_boundary_is_searched_for_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """The boundary that ends a document is where the search for the next root starts: one search
    a document, where the tree before searched for each boundary twice."""
    _fresh()
    docs = [ROUTE.format(name=f"r{i}", namespace="a", gateway="gw", service="s", item="x") for i in range(6)]
    text = "---\n" + "---\n".join(docs)
    searched: list[int] = []
    original = positions._boundary

    def counting(text: str, pos: int) -> int:
        found = original(text, pos)
        if found != pos:  # not the boundary the search starts on
            searched.append(pos)
        return found

    monkeypatch.setattr(positions, "_boundary", counting)
    resolver = positions.PositionResolver({"f.yaml": text}.get)
    refs = [DocumentRef("f.yaml", 0, 0, i, 2 + i * (ROUTE.count("\n") + 1), 1) for i in range(6)]
    resolver.prefetch([(ref, "metadata.name") for ref in refs])
    assert len(searched) == 6
    assert [resolver.span(ref, "metadata.name")[:2] for ref in refs] == [(ref.line + 3, 3) for ref in refs]
