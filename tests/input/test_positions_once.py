"""What positions work out once, or not at all, give the positions they gave before.

- the steps of a document's paths that share a beginning (`spec.rules[2]`, `spec.rules[4]`) are
  taken once (`blockpaths._locate`'s steps), counted, with paths that part at a key that also
  stands deeper;
- where each document's root line starts is found from the `---` lines (`positions._Text`),
  compared with every line's start on texts made of boundaries and near misses, and the table of
  every line's start is made only for a file with a document that is composed;
- the end of a span that runs to its line's end is read from the document's own lines
  (`blockpaths.locate(..., line_ends=True)`), compared with the file's;
- a line break other than `\\n` in a comment or a block scalar, which the block reader's line
  checks skip, sends the document to be composed: its positions are libyaml's;
- a key of the root mapping is found by searching the document's text for its name
  (`blockpaths._find_root_key`), the lines of the root's other keys' values never read, with
  libyaml's answers where the name starts a longer key, a comment, a list item at column 0, a
  block scalar's line or a value, where it is quoted and where it is given twice;
- a key of a nested mapping is found by searching the document's text for the lines that start
  with its name at the mapping's column (`blockpaths._find_nested_key`), no line of the mapping's
  other keys read one at a time, with libyaml's answers where the name starts a longer key, stands
  in a comment, in a list's item or a deeper mapping, is given twice, is quoted (after an item's
  dash too), stands in a later mapping of the same column, or is absent;
- the node below a key is made once: a null node only where the value is empty;
- the regexp that finds the characters the block reader looks at closer, in an ASCII text, finds
  what the one for every text finds, and whether a document holds one at all is told by deleting
  every other character of its bytes (`blockpaths._QUIET_BYTES`), as the regexp tells it;
- a key's line is taken apart (`blockpaths._pair`: the key and the value after it on the line) once
  per line and column for the run, counted: a second route that repeats the first's lines takes
  apart only the line it changed; a key or a value the reader declines is declined again from
  the table, a value only where a path reads it; the table starts again past its bound.
"""

from __future__ import annotations

from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from policylint.input import blockpaths, positions
from policylint.input.load import parse_text
from policylint.input.positions import PositionResolver
from tests.examples import examples
from tests.input.test_positions import _block_documents, _composed, _node_paths

ROUTE = """\
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata:
  name: shop
  namespace: apps
spec:
  name: not-the-route
  rules:
  - name: first
    backendRefs:
    - name: a
      port: 80
    - name: b
      port: 80
  - name: second
    backendRefs:
    - name: c
  - name: third
    backendRefs:
    - name: d
      port: 80
    - name: e
"""

PATHS: list[tuple[str | int, ...]] = [
    ("spec", "rules", 0, "backendRefs", 1),
    ("spec", "rules", 2, "backendRefs", 1),
    ("spec", "rules", 2, "backendRefs", 0, "name"),
    ("spec", "rules", 2, "name"),
    ("spec", "name"),  # `name` also stands deeper, in every rule and backend
    ("metadata", "name"),
    ("spec", "rules", 7),  # past the list's end
    ("spec", "hostnames"),  # absent
]


def _libyaml(text: str, paths: list[tuple[str | int, ...]]) -> list[tuple[int, int, int | None]]:
    node = _composed(text)
    assert node is not None
    out: list[tuple[int, int, int | None]] = []
    for parts in paths:
        mark, end = positions._walk(node, parts)
        out.append((mark.line, mark.column, end.column if end is not None and end.line == mark.line else None))
    return out


def test_paths_that_share_a_beginning_take_each_step_once(monkeypatch: pytest.MonkeyPatch) -> None:
    keys: list[tuple[int, str]] = []
    items: list[tuple[int, int]] = []
    find_key, find_item = blockpaths._find_key, blockpaths._find_item

    def counting_key(doc: Any, node: Any, name: str) -> Any:
        keys.append((node.line, name))
        return find_key(doc, node, name)

    def counting_item(doc: Any, node: Any, index: int) -> Any:
        items.append((node.line, index))
        return find_item(doc, node, index)

    monkeypatch.setattr(blockpaths, "_find_key", counting_key)
    monkeypatch.setattr(blockpaths, "_find_item", counting_item)
    got = blockpaths.locate(ROUTE, PATHS)
    assert got == _libyaml(ROUTE, PATHS)
    # Each path alone gives what it gives among the others.
    assert got == [answer for parts in PATHS for answer in blockpaths.locate(ROUTE, [parts]) or []]
    # Counted by hand: `spec` and `metadata` in the root; `rules`, `name` and `hostnames` in
    # `spec`; `backendRefs` in the first and third rules, `name` in the third rule and in its
    # first backend. Every path alone looked `spec` up 7 times and `rules` 5 times.
    keys.clear()
    items.clear()
    blockpaths.locate(ROUTE, PATHS)
    assert sorted(name for _, name in keys) == sorted(
        ["spec", "metadata", "rules", "name", "hostnames", "backendRefs", "backendRefs", "name", "name", "name"]
    )
    assert len(keys) == len(set(keys)) == 10
    # rules[0], rules[2], rules[7]; the third rule's backends 1 and 0, the first rule's 1.
    assert len(items) == len(set(items)) == 6


def _paths_of(text: str) -> list[tuple[str | int, ...]] | None:
    """The paths of every node of a generated block document; None when the text is not YAML (the
    generator's comments can break it) or holds no document."""
    try:
        node = _composed(text)
    except yaml.YAMLError:
        return None
    return _node_paths(node, flow=False) if node is not None else None


@examples(100, 300)
@given(_block_documents())
def test_a_document_s_paths_together_give_what_each_gives_alone(text: str) -> None:
    paths = _paths_of(text)
    if paths is None:
        return
    together = blockpaths.locate(text, paths)
    if together is None:
        return
    assert together == [answer for parts in paths for answer in blockpaths.locate(text, [parts]) or []]


@examples(100, 300)
@given(_block_documents())
def test_a_span_to_its_line_s_end_ends_where_the_file_s_line_does(text: str) -> None:
    paths = _paths_of(text)
    if paths is None:
        return
    plain = blockpaths.locate(text, paths)
    ends = blockpaths.locate(text, paths, line_ends=True)
    assert (plain is None) == (ends is None)
    if plain is None or ends is None:
        return
    resolver = PositionResolver(lambda _: text)
    for (row, column, end), (row_after, column_after, end_after) in zip(plain, ends, strict=True):
        assert (row_after, column_after) == (row, column)
        if end is not None:
            assert end_after == end
        else:
            assert end_after is not None
            assert resolver._line_end("f", row + 1, column + 1) == (row + 1, end_after + 1)


# Texts of lines that start a document or nearly do, as a file's lines.
_LINES = st.lists(
    st.sampled_from(["---", "...", "--- a", "---x", "----", "...x", " ---", "a: 1", "", "# c", "- x", "--- # c"]), max_size=40
)


@settings(max_examples=600, deadline=None)
@given(_LINES, st.booleans(), st.lists(st.integers(min_value=-1, max_value=45), max_size=12), st.sampled_from([0, 2, 32]))
def test_a_line_s_start_found_from_the_boundaries_is_the_table_s(
    lines: list[str], newline_at_end: bool, asked: list[int], steps: int
) -> None:
    text = "\n".join(lines) + ("\n" if newline_at_end else "")
    starts = positions._line_starts(text)
    found = positions._Text(text)
    kept = positions._Text._STEPS
    positions._Text._STEPS = steps  # few: the table is made at once, or after a step or two
    try:
        for line in asked:
            assert found.start(line) == (starts[line - 1] if 0 < line <= len(starts) else -1), (text, line)
    finally:
        positions._Text._STEPS = kept


PATHS_OF_A_SERVICE = ("metadata.name", "kind", "spec.ports[0]")


def test_a_root_s_start_is_found_without_every_line_s_where_no_document_is_composed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    block = "".join(
        f"---\napiVersion: v1\nkind: Service\nmetadata:\n  name: s{i}\n  namespace: a\nspec:\n  ports:\n  - port: 80\n"
        for i in range(6)
    )
    flow = "---\napiVersion: v1\nkind: Service\nmetadata: {name: f, namespace: a}\nspec: {ports: [{port: 80}]}\n"
    texts = {"block.yaml": block, "mixed.yaml": block + flow}
    tables: list[str] = []
    line_starts = positions._line_starts

    def counting(text: str) -> Any:
        tables.append(next(name for name, known in texts.items() if known == text))
        return line_starts(text)

    monkeypatch.setattr(positions, "_line_starts", counting)
    resolver = PositionResolver(texts.get)
    documents = {name: parse_text(text, name).documents for name, text in texts.items()}
    requests = [(doc.ref, path) for docs in documents.values() for doc in docs for path in PATHS_OF_A_SERVICE]
    resolver.prefetch(requests)
    # Only the file with a document composed whose span runs to its line's end (the item of its
    # flow list) made the table: the block documents' line ends are read from their own lines.
    assert tables == ["mixed.yaml"]
    for ref, path in requests:
        node = _composed(positions._document_text(texts[ref.file], line_starts(texts[ref.file])[ref.line - 1]))
        assert node is not None
        mark, end = positions._walk(node, positions.path_parts(path))
        line, column, end_line, end_column = resolver.span(ref, path)
        assert (line, column, end_line) == (ref.line + mark.line, mark.column + 1, line)
        rest = texts[ref.file].split("\n")[line - 1].rstrip()
        assert end_column == (end.column + 1 if end is not None else max(column, len(rest) + 1)), (ref, path)


@pytest.mark.parametrize(
    "text",
    [
        # A `\r` in a comment: libyaml's next line starts after it.
        "apiVersion: v1\nkind: ConfigMap\n# one\r# two\nmetadata:\n  name: a\n  namespace: b\n",
        # A `\r` in a block scalar's text.
        "apiVersion: v1\nkind: ConfigMap\ndata:\n  x: |\n    one\r    two\n  y: z\nmetadata:\n  name: a\n",
        # The breaks beyond ASCII, in a comment.
        "apiVersion: v1\nkind: ConfigMap\n# one\x85# two\u2028# three\nmetadata:\n  name: a\n",
    ],
)
def test_a_break_other_than_newline_the_line_checks_skip_gives_libyaml_s_lines(text: str) -> None:
    paths: list[tuple[str | int, ...]] = [("metadata", "name"), ("metadata",), ("kind",)]
    assert blockpaths.locate(text, paths) is None
    (document,) = parse_text(text, "f.yaml").documents
    resolver = PositionResolver(lambda _: text)
    resolver.prefetch((document.ref, parts) for parts in paths)
    node = yaml.compose(text, Loader=positions.MarkLoader)
    for parts in paths:
        mark, _ = positions._walk(node, parts)
        assert resolver.resolve(document.ref, parts) == (mark.line + 1, mark.column + 1), parts


def _counted_lines(monkeypatch: pytest.MonkeyPatch) -> tuple[list[int], list[int]]:
    """The lines whose indentation the block reader reads from here on: every one (a slice's
    lines each), and those read one at a time."""
    read: list[int] = []
    one_at_a_time: list[int] = []

    class Counting(list):  # type: ignore[type-arg]
        def __getitem__(self, at: Any) -> Any:
            if isinstance(at, slice):
                read.extend(range(*at.indices(len(self))))
            else:
                read.append(at)
                one_at_a_time.append(at)
            return super().__getitem__(at)

    original = blockpaths._Doc.__init__

    def counting(self: Any, text: Any) -> None:
        original(self, text)
        self.indents = Counting(self.indents)

    monkeypatch.setattr(blockpaths._Doc, "__init__", counting)
    return read, one_at_a_time


def test_a_root_key_is_found_without_reading_the_lines_of_the_root_s_other_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    """`metadata.name` in a route: the root's keys are found by their text, so the block reader
    reads no line's indentation past `metadata`'s mapping (line 5, `spec`, ends it), where it went
    through every line of the document to find the root's last `metadata` (the loaded data keeps
    the last of duplicate keys)."""
    read, _ = _counted_lines(monkeypatch)
    paths: list[tuple[str | int, ...]] = [("metadata", "name")]
    # `  name: shop`: from the key to the end of its value.
    assert blockpaths.locate(ROUTE, paths) == _libyaml(ROUTE, paths) == [(3, 2, 12)]
    assert read and max(read) <= 5 < ROUTE.count("\n")


ROOT_KEYS = [
    # Given twice: the last is the one.
    "metadata:\n  name: a\nspec: {}\nmetadata:\n  name: b\n",
    # The name starts a longer key, and stands as a value.
    "metadataX: 1\nkind: metadata\nmetadata:\n  name: a\nmetadata2:\n  name: b\n",
    # In a comment at column 0, in a list's item at column 0, in a block scalar's line.
    "kind: x\n#metadata:\n#  name: no\nitems:\n- metadata:\n    name: no\nnote: |\n  metadata:\n   name: no\nmetadata:\n  name: a\n",
    # Quoted, alone or beside the plain one.
    "'metadata':\n  name: a\nkind: x\n",
    'metadata:\n  name: a\n"metadata":\n  name: b\n',
    "metadata:\n  name: a\n'metadata':\n  name: b\nmetadata :\n  name: c\n",
    # Absent, and a root whose first line is the key.
    "kind: x\nspec:\n  metadata:\n    name: no\n",
    "metadata:\n  name: a\n",
]


@pytest.mark.parametrize("text", ROOT_KEYS)
def test_a_root_key_found_by_its_text_is_libyaml_s(text: str) -> None:
    paths: list[tuple[str | int, ...]] = [("metadata", "name"), ("metadata",), ("spec",), ("kind",), ("items", 0, "metadata")]
    paths = [parts for parts in paths if (parts[0] + ":") in text or parts[0] == "metadata"]
    got = blockpaths.locate(text, paths)
    assert got is not None  # read from its lines, not composed
    assert got == _libyaml(text, paths)


LONG_SPEC = """\
kind: HTTPRoute
metadata:
  name: shop
spec:
  parentRefs:
  - name: gw
  rules:
  - name: first
    backendRefs:
    - name: a
      port: 80
    - name: b
  - name: second
    matches:
    - path:
        value: /
  hostnames:
  - shop.example
"""


def test_a_nested_key_is_found_without_reading_the_lines_of_its_mapping_s_other_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    """`spec.hostnames`, after the route's rules: the keys of `spec` are found by their text, so
    the block reader reads no line's indentation one at a time between `spec`'s first key (line 4)
    and `hostnames` (line 16), where
    it went through every line of `spec` (the rules' lines among them) to find its last
    `hostnames`; the lines between `spec`'s first key and `hostnames` are read together, for the
    least of their indentations."""
    _, one_at_a_time = _counted_lines(monkeypatch)
    paths: list[tuple[str | int, ...]] = [("spec", "hostnames")]
    # `  hostnames:`: the key, its value below it.
    assert blockpaths.locate(LONG_SPEC, paths) == _libyaml(LONG_SPEC, paths) == [(16, 2, 11)]
    # The root's first line, and `spec`'s first key (line 4, the mapping found below `spec:`); then
    # `hostnames` and the line below it, its value.
    assert sorted(set(one_at_a_time)) == [0, 4, 17]


def test_the_node_below_a_key_is_made_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """`spec:`'s mapping, below it: one node made, the mapping, where a null node was made first
    for every key whose value is on a later line, and dropped unless the value was empty."""
    made: list[str] = []

    class Counting(blockpaths._Node):
        def __init__(self, kind: str, *args: Any, **kwargs: Any) -> None:
            made.append(kind)
            super().__init__(kind, *args, **kwargs)

    monkeypatch.setattr(blockpaths, "_Node", Counting)
    doc = blockpaths._Doc("spec:\n  a: 1\nb:\n")
    below = blockpaths._below(doc, 0, 0, 5)
    assert (below.kind, below.line, below.col) == ("map", 1, 2)
    assert made == ["map"]
    made.clear()
    empty = blockpaths._below(doc, 2, 0, 2)  # `b:`, the document's last line: an empty value
    assert (empty.kind, empty.line, empty.col, empty.end) == ("null", 2, 2, 2)
    assert made == ["null"]


NESTED_KEYS = [
    # Given twice: the last is the one; the name starts a longer key, and stands as a value.
    "spec:\n  name: a\n  kind: name\n  nameX: 1\n  name: b\n",
    # In a comment at the mapping's column, in a list's item there and in a deeper mapping.
    "spec:\n  kind: x\n  #name: no\n  items:\n  - name: no\n  deeper:\n    name: no\n  name: a\n",
    # In a block scalar's lines and a plain scalar's next line, deeper than the keys.
    "spec:\n  note: |\n    name: no\n  other: one\n    name\n  name: a\n",
    # In a later mapping of the same column only: absent from the first.
    "spec:\n  a:\n    kind: x\n  b:\n    name: no\nstatus:\n  a:\n    name: no\n",
    # Quoted, alone or beside the plain one, and after an item's dash.
    "spec:\n  'name': a\n  kind: x\n",
    'spec:\n  name: a\n  "name": b\n',
    "items:\n- 'name': a\n  kind: x\n- kind: y\n  name: b\n",
    # In the items of a list: each item's mapping its own.
    "items:\n- kind: x\n  name: a\n- name: b\n- kind: z\n",
    # Absent.
    "spec:\n  kind: x\nname: no\n",
]


@pytest.mark.parametrize("text", NESTED_KEYS)
def test_a_nested_key_found_by_its_text_is_libyaml_s(text: str) -> None:
    paths: list[tuple[str | int, ...]] = [
        ("spec", "name"),
        ("spec", "a", "name"),
        ("spec", "b", "name"),
        ("status", "a", "name"),
        ("items", 0, "name"),
        ("items", 1, "name"),
        ("items", 2, "name"),
        ("spec", "kind"),
    ]
    got = blockpaths.locate(text, paths)
    assert got is not None  # read from its lines, not composed
    assert got == _libyaml(text, paths)


@settings(max_examples=500, deadline=None)
@given(st.text(alphabet=st.characters(max_codepoint=127), max_size=60))
def test_a_noteworthy_character_of_an_ascii_text_is_told_by_deleting_the_others(text: str) -> None:
    assert bool(text.encode("ascii").translate(None, blockpaths._QUIET_BYTES)) == (
        blockpaths._NOTEWORTHY_ASCII.search(text) is not None
    )


@settings(max_examples=500, deadline=None)
@given(st.text(alphabet=st.characters(max_codepoint=127), max_size=60))
def test_the_noteworthy_characters_of_an_ascii_text_are_found_by_the_ascii_regexp(text: str) -> None:
    assert [m.start() for m in blockpaths._NOTEWORTHY_ASCII.finditer(text)] == [
        m.start() for m in blockpaths._NOTEWORTHY.finditer(text)
    ]


def test_a_key_s_line_is_taken_apart_once_per_line_and_column(monkeypatch: pytest.MonkeyPatch) -> None:
    """The documents with findings repeat their lines (`  - name: http`, `    backendRefs:`): each
    key's line is taken apart once for the run, where every path took apart every key's line it
    went through, in every document."""
    blockpaths._PAIRS.clear()
    taken: list[tuple[str, int]] = []
    key = blockpaths._key

    def counting(line: str, col: int) -> Any:
        taken.append((line, col))
        return key(line, col)

    monkeypatch.setattr(blockpaths, "_key", counting)
    assert blockpaths.locate(ROUTE, PATHS) == _libyaml(ROUTE, PATHS)
    # Counted by hand: the root's first line, `spec` and `metadata`; in `spec` its first key (the
    # mapping found below `spec:`), `rules`; the first and third rules' first lines and their
    # `backendRefs` line (one text for both); the second and fifth backends, and the fourth,
    # whose `name` is read from the same line; in `metadata` its first key and `namespace`, which
    # starts with `name`.
    assert sorted(taken) == sorted(
        [
            ("apiVersion: gateway.networking.k8s.io/v1", 0),
            ("spec:", 0),
            ("metadata:", 0),
            ("  name: not-the-route", 2),
            ("  rules:", 2),
            ("  - name: first", 4),
            ("  - name: third", 4),
            ("    backendRefs:", 4),
            ("    - name: b", 6),
            ("    - name: e", 6),
            ("    - name: d", 6),
            ("  name: shop", 2),
            ("  namespace: apps", 2),
        ]
    )
    taken.clear()
    other = ROUTE.replace("name: shop", "name: cart")
    assert blockpaths.locate(other, PATHS) == _libyaml(other, PATHS)
    assert taken == [("  name: cart", 2)]


def test_a_key_or_value_declined_is_declined_from_the_table(monkeypatch: pytest.MonkeyPatch) -> None:
    blockpaths._PAIRS.clear()
    for _ in range(2):  # worked out, then from the table
        with pytest.raises(blockpaths._Declined):
            blockpaths._pair('"a\\tb": 1', 0)  # an escaped double-quoted key
    # A value the reader declines (a dash after the key) is declined only where a path reads it.
    pair = blockpaths._pair("a: - x", 0)
    assert pair is not None and pair[:4] == ("a", 1, 2, 3) and pair[4] == blockpaths._NOT_READ
    doc = blockpaths._Doc("a: - x\n")
    with pytest.raises(blockpaths._Declined):
        blockpaths._value_node(doc, 0, 0, pair)
    assert blockpaths._pair("b", 0) is None  # no key: kept as such
    monkeypatch.setattr(blockpaths, "MAX_LINES", 3)
    blockpaths._pair("c: 1", 0)
    assert len(blockpaths._PAIRS) == 1  # past the bound the table starts again
    blockpaths._PAIRS.clear()
