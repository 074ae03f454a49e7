"""Cheap upper bounds on a text's nesting and node count, and the exact check with the event
parser when a bound says a document could be over a limit: before libyaml's recursive composer
ever sees it."""

from __future__ import annotations

import io
import re
from collections.abc import Iterator

import yaml

from policylint.input import bounds
from policylint.input.resolver import LOADER
from policylint.values import frozen

DOC_BOUNDARY = re.compile(r"^(?:---|\.\.\.)(?=[ \t\r\n]|$)", re.M)


def document_spans(text: str) -> Iterator[tuple[int, int]]:
    """(start, end) of each document's text, split where a line starts with `---` or `...`.

    At most bounds.MAX_DOCUMENTS + 1 spans: the last one runs to the end of the text, since the
    documents past the limit are never read (two million `{}` documents must not cost two
    million iterations here).
    """
    start = 0
    count = 0
    for match in DOC_BOUNDARY.finditer(text):
        end = match.start()
        yield start, end
        start = end
        count += 1  # noqa: SIM113  (the count stops the loop early)
        if count > bounds.MAX_DOCUMENTS:
            break
    yield start, len(text)


# The characters that can each open a nesting level at the start of a line, all made spaces.
_OPENERS_AS_SPACES = bytes.maketrans(b"\t?:-", b"    ")


def _starts_a_line_with_openers(text: str, count: int) -> bool:
    """Whether a line (after a `\n`, as `re.M` reads `^`) starts with `count` or more characters
    that can each open a nesting level: one translation and one substring search in C over the
    text's bytes, where a regexp anchored at each line cost eight times as much. Characters
    beyond ASCII encode to bytes >= 0x80, which stay what they are."""
    run = b" " * max(count, 1)
    data = text.encode("utf-8", "surrogatepass").translate(_OPENERS_AS_SPACES)
    return data.startswith(run) or b"\n" + run in data


def might_nest_deeper_than_limit(text: str) -> bool:
    """Cheap upper bound on nesting, so the exact (slower) check runs only when needed.

    Flow nesting needs one `[` or `{` per level within one document (document
    markers are forbidden inside flow collections, so a nest cannot span them);
    block nesting needs one column of indentation (or a compact `- `) per level.
    The two combine (`spec:` blocks holding `[[...]]`), so a document is at most
    as deep as its brackets plus its longest indentation, plus one.
    """
    brackets = text.count("[") + text.count("{")
    if brackets >= bounds.MAX_DEPTH:
        brackets = 0
        for start, end in document_spans(text):
            brackets = max(brackets, text.count("[", start, end) + text.count("{", start, end))
            if brackets >= bounds.MAX_DEPTH:
                return True
    return _starts_a_line_with_openers(text, bounds.MAX_DEPTH - brackets)


def node_bound(text: str, start: int, end: int) -> int:
    """An upper bound on the nodes the text between `start` and `end` can hold, in a few
    C-speed counts.

    Every node but a document's first is introduced by an indicator: `:` or `?` of a mapping
    entry, `-` of a block sequence entry (and of `---`), `[`, `{` and `,` in flow, or follows a
    `...` or a line break. One indicator introduces at most three nodes (a one-pair mapping,
    its key and its value).
    """
    # Counted as what bytes.translate deletes: two C passes instead of nine str.count passes
    # (every byte of a non-ASCII character's UTF-8 form is >= 0x80, so none is counted).
    data = text[start:end].encode("utf-8", "surrogatepass")
    indicators = len(data) - len(data.translate(None, b":?-[{,"))
    others = len(data) - len(data.translate(None, b".\n\r"))
    return 3 * indicators + others + 1


def might_hold_more_nodes_than_limit(text: str) -> bool:
    """Whether some document could hold more than bounds.MAX_DOCUMENT_NODES nodes; free for the files
    of ordinary size (no character introduces more than three nodes)."""
    if 3 * len(text) + 1 <= bounds.MAX_DOCUMENT_NODES:
        return False
    return any(
        3 * (end - start) + 1 > bounds.MAX_DOCUMENT_NODES and node_bound(text, start, end) > bounds.MAX_DOCUMENT_NODES
        for start, end in document_spans(text)
    )


@frozen
class OverLimit:
    """The first node past a limit: 0-based line and column and character index (from where
    parsing started), the number of its document from there, and which limit."""

    line: int
    column: int
    index: int
    document: int
    message: str


def event_start(event: yaml.Event | None) -> tuple[int, int, int]:
    """The 0-based line, column and character index where a parser event starts."""
    # The parser marks every event it emits; it gives None only after the end of the stream,
    # and callers ask for a position only of an event they have just seen or peeked at.
    assert event is not None and event.start_mark is not None
    mark = event.start_mark
    return mark.line, mark.column, mark.index


def scan(source: str | io.StringIO, depth: bool, nodes: bool) -> OverLimit | None:
    """Exact depth and node counts with the event parser, which is a state machine: it never
    recurses and builds no node tree, so neither a deep nor a huge document can hurt it.

    Scanning stops at the first syntax error (the composer stops there too, so nothing after it
    is composed) and after bounds.MAX_DOCUMENTS documents (nothing after them is read).
    """
    level = 0
    count = 0
    doc = -1
    loader = LOADER(source)
    try:
        while True:
            event = loader.get_event()
            cls = event.__class__
            if cls is yaml.ScalarEvent:
                count += 1
            elif cls is yaml.MappingStartEvent or cls is yaml.SequenceStartEvent:
                count += 1
                level += 1
                if depth and level > bounds.MAX_DEPTH:
                    line, column, index = event_start(event)
                    return OverLimit(line, column, index, doc, f"nesting deeper than {bounds.MAX_DEPTH} levels")
            elif cls is yaml.MappingEndEvent or cls is yaml.SequenceEndEvent:
                level -= 1
                continue
            elif cls is yaml.DocumentStartEvent:
                doc += 1
                if doc >= bounds.MAX_DOCUMENTS:
                    return None
                level = 0
                count = 0
                continue
            elif event is None or cls is yaml.StreamEndEvent:
                return None
            else:
                continue
            if nodes and count > bounds.MAX_DOCUMENT_NODES:
                line, column, index = event_start(event)
                return OverLimit(line, column, index, doc, f"more than {bounds.MAX_DOCUMENT_NODES:,} YAML nodes in one document")
    except yaml.YAMLError:
        return None  # the composer reports the syntax error with its position
    finally:
        loader.dispose()
