"""`# policylint: ...` comments, and which lines each one covers.

Comments are found with libyaml's own parser (the one the loader uses), not by a regex over
the raw text: a `#` is a comment only where YAML says so, never inside a quoted or block
scalar (`"a # policylint: disable=PL201"` is a string). libyaml does not report comments, but
it reports where every scalar starts and ends; a `#` at the start of a line or after a space
or tab, outside every scalar, starts a comment (YAML 1.2 spec §6.6 "Comments"). The same
parse gives the structure the scopes need: where each mapping entry's key sits, the last line
of its value, and the keys enclosing it. Its line numbers are libyaml's, as the findings' are.

Only files that contain `policylint:` are parsed here, so most files cost one substring search,
and in those only the documents that contain it (a comment applies within its own document).
At most MAX_EVENTS YAML events are walked per file: past that (a generated file of millions of
nodes), one PL905 finding says where reading comments stopped.

Scopes (docs/suppressions.md):

- `disable=` on line L covers a finding if L is the finding's line, any line of the YAML node
  the finding points at (a finding on `spec.targetRefs[0]` covers the reference's `name:` line
  below it), or the line of a key enclosing that node (`spec:` covers everything under it) or
  the first line of a list item enclosing it (`- group: ""` covers a finding on the item's
  `name`);
- `disable-next-line=` on line L acts as `disable=` written on line L+1;
- both apply within the comment's own document only (a comment above a `---` does not reach a
  document whose root starts on the `---` line);
- `disable-file=` before the first node of a document covers that document; before the first
  document of a file (no `---` above it), the whole file.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterator
from dataclasses import field
from typing import NamedTuple, Protocol

import yaml
from yaml.events import (
    AliasEvent,
    CollectionEndEvent,
    CollectionStartEvent,
    Event,
    MappingStartEvent,
    ScalarEvent,
)

from policylint.input.load import LOADER, printable
from policylint.input.positions import parse_path
from policylint.suppressions import MARKER
from policylint.suppressions.directives import DISABLE_FILE, DirectiveError, Spec, parse_comment
from policylint.values import frozen, record

# A line that starts a new document (YAML 1.2 spec §9.1 "Documents"), as the loader splits files: a
# syntax error in one document does not hide the comments of the next.
_DOCUMENT_BOUNDARY = re.compile(r"^(?:---|\.\.\.)(?=[ \t\r\n]|$)", re.M)
_LINE_BREAK = re.compile("\r\n|[\r\n\x85\u2028\u2029]")
# Events walked per file for the comments' structure: about a second of Python at worst, and
# far more than hand-written manifests with suppressions hold (a policy is some 50 events).
MAX_EVENTS = 100_000
# Comments read per file (each may be a finding: the output stays proportional to what a reader
# can use, as the engine's MAX_FINDINGS_PER_FILE keeps it).
MAX_COMMENTS = 1_000

Position = tuple[int, int]  # 1-based line, column


@frozen
class Comment:
    """One `policylint:` comment. `spec` is None when it cannot be read (`error` says why)."""

    line: int
    column: int
    directive: str
    spec: Spec | None
    error: str = ""
    # disable-file: the lines it covers (whole file or one document); None when misplaced.
    file_scope: tuple[int, int] | None = None
    # The lines of the document the comment sits in (from its `---`): `disable=` and
    # `disable-next-line=` apply there only, so a comment above a `---` never reaches a
    # document that starts on that line (`--- {kind: ...}`). (0, 0): not known.
    document: tuple[int, int] = (0, 0)


@frozen
class _Node:
    last_line: int
    key_lines: tuple[int, ...]  # lines of the keys enclosing the node, outermost first


@record
class _Document:
    first_line: int  # the chunk's first line (its `---`, or 1)
    last_line: int
    root_line: int | None = None  # line of the root node; None for an empty document
    explicit: bool = False  # starts with `---`


@record
class FileComments:
    """The comments of one file and the structure that gives their scopes."""

    comments: list[Comment] = field(default_factory=list)
    entries: dict[Position, _Node] = field(default_factory=dict)  # by key position
    items: dict[Position, _Node] = field(default_factory=dict)  # sequence items, by start
    roots: dict[Position, _Node] = field(default_factory=dict)  # document roots, by start

    def lines_covered(self, line: int, column: int, path: str) -> tuple[range, tuple[int, ...]]:
        """For a finding at (line, column) on `path`: the lines from the finding through the end
        of its node, and the lines of the keys enclosing it. The finding's position is where the
        position resolver put it: the key of a mapping entry, the start of a sequence item, or
        the document's root (policylint.input.positions)."""
        parts = parse_path(path)
        last = parts[-1] if parts else None
        order = (
            (self.entries, self.items, self.roots)
            if isinstance(last, str)
            else (self.items, self.entries, self.roots)
            if isinstance(last, int)
            else (self.roots, self.items, self.entries)
        )
        for table in order:
            node = table.get((line, column))
            if node is not None:
                return range(line, max(line, node.last_line) + 1), node.key_lines
        return range(line, line + 1), ()


def scan(text: str) -> FileComments:
    """Every `policylint:` comment of `text` with the structure around it."""
    text = printable(text)[0]  # as the loader and the position resolver see it
    starts = [0, *(m.end() for m in _LINE_BREAK.finditer(text))]
    out = FileComments()
    scalars: list[tuple[Position, Position]] = []
    documents: list[_Document] = []
    unread: list[tuple[int, int]] = []  # line ranges not parsed (after a syntax error)
    budget = [MAX_EVENTS]  # events left to walk
    stopped: int | None = None  # the line where the budget ran out
    bounds = [m.start() for m in _DOCUMENT_BOUNDARY.finditer(text)]
    chunk_starts = [0, *(b for b in bounds if b > 0)]
    for i, start in enumerate(chunk_starts):
        end = chunk_starts[i + 1] if i + 1 < len(chunk_starts) else len(text)
        offset = bisect.bisect_right(starts, start) - 1  # lines before the chunk
        last_line = bisect.bisect_right(starts, max(start, end - 1))
        document = _Document(first_line=offset + 1, last_line=last_line, explicit=text.startswith(("---", "..."), start))
        documents.append(document)
        chunk = text[start:end]
        if MARKER not in chunk:
            continue  # a comment applies within its own document only: this one's structure is not needed
        if budget[0] <= 0:
            stopped = stopped or offset + 1
            unread.append((offset + 1, last_line))
            continue
        broken_at = _structure(chunk, offset, out, scalars, document, budget)
        if budget[0] <= 0:
            stopped = stopped or broken_at
        if broken_at is not None:
            # Past a syntax error, what is a string and what a comment is unknown.
            unread.append((broken_at, last_line))
    scalars.sort()
    firsts = [d.first_line for d in documents]
    marked = sorted({bisect.bisect_right(starts, at) for at in _occurrences(text, MARKER)})
    for line_no in marked:  # the lines holding the marker, not every line
        begin = starts[line_no - 1]
        stop = starts[line_no] if line_no < len(starts) else len(text)
        line_text = text[begin:stop]
        if stopped is not None and line_no >= stopped:
            message = f"suppression comments from here on are not read: the file has more than {MAX_EVENTS:,} YAML nodes"
            out.comments.append(Comment(line_no, 1, "", None, message))
            break
        if _within(unread, line_no):
            continue
        if len(out.comments) >= MAX_COMMENTS:
            message = f"suppression comments from here on are not read: at most {MAX_COMMENTS:,} per file"
            out.comments.append(Comment(line_no, 1, "", None, message))
            break
        column = _comment_column(line_text, line_no, scalars)
        if column is None:
            continue
        body = line_text[column + 1 :].rstrip("\r\n\x85\u2028\u2029").lstrip(" \t")  # after the `#`
        if not body.startswith(MARKER):
            continue
        out.comments.append(_comment(body[len(MARKER) :], line_no, column, documents, firsts))
    return out


def _within(ranges: list[tuple[int, int]], line: int) -> bool:
    """Whether `line` lies in one of `ranges` (sorted, disjoint: one per document)."""
    i = bisect.bisect_right(ranges, (line, 1 << 62)) - 1
    return i >= 0 and ranges[i][0] <= line <= ranges[i][1]


def _occurrences(text: str, needle: str) -> Iterator[int]:
    """Where `needle` occurs in `text` (str.find: linear, no pattern to backtrack)."""
    at = text.find(needle)
    while at >= 0:
        yield at
        at = text.find(needle, at + 1)


def _comment_column(line_text: str, line_no: int, scalars: list[tuple[Position, Position]]) -> int | None:
    """0-based column of the `#` that starts this line's comment, or None."""
    for col in _occurrences(line_text, "#"):
        if col > 0 and line_text[col - 1] not in " \t":
            continue
        if _inside_scalar((line_no, col + 1), scalars):
            continue
        return col
    return None


def _inside_scalar(pos: Position, scalars: list[tuple[Position, Position]]) -> bool:
    # Scalars do not overlap: only the last one starting at or before `pos` can contain it.
    i = bisect.bisect_right(scalars, (pos, (1 << 62, 0))) - 1
    return i >= 0 and scalars[i][0] <= pos < scalars[i][1]


def _comment(text: str, line: int, column0: int, documents: list[_Document], firsts: list[int]) -> Comment:
    column = column0 + 1
    try:
        directive, spec = parse_comment(text)
    except DirectiveError as exc:
        return Comment(line, column, "", None, str(exc))
    if directive != DISABLE_FILE:
        i = bisect.bisect_right(firsts, line) - 1
        document = (documents[i].first_line, documents[i].last_line) if i >= 0 else (0, 0)
        return Comment(line, column, directive, spec, document=document)
    scope = _file_scope(line, documents, firsts)
    if scope is None:
        return Comment(
            line,
            column,
            directive,
            spec,
            "disable-file must come before the first key of a document (or of the file); use disable= here",
        )
    return Comment(line, column, directive, spec, file_scope=scope)


def _file_scope(line: int, documents: list[_Document], firsts: list[int]) -> tuple[int, int] | None:
    last = documents[-1].last_line if documents else line
    # Documents are in file order: the one holding `line` is the last starting at or before it.
    i = bisect.bisect_right(firsts, line) - 1
    if i >= 0:
        doc = documents[i]
        if doc.root_line is not None and line >= doc.root_line:
            return None  # inside a document's content
        if i == 0 and not doc.explicit:
            return (1, last)  # above the first document: the whole file
        if doc.root_line is None:
            return None  # an empty document: nothing to cover
        return (doc.first_line, doc.last_line)
    return None


@record
class _Frame:
    """An open collection while walking the events."""

    mapping: bool
    flow: bool
    start: Position
    role: str  # "key", "value", "item" or "root": what the collection is to its parent
    key: Position | None  # for a value: its key's position
    key_lines: tuple[int, ...]
    last_line: int
    expecting_key: bool = True
    key_line: int = 0
    key_pos: Position = (0, 0)


def _structure(
    chunk: str,
    offset: int,
    out: FileComments,
    scalars: list[tuple[Position, Position]],
    document: _Document,
    budget: list[int],
) -> int | None:
    """Record scalar spans and node scopes of one document's text (lines shifted by `offset`).

    A syntax error ends the document's structure where it is (the line from which the text is
    not known to be parsed is returned, else None); what was parsed before it is kept. libyaml
    parses without recursion, and this walk keeps its own stack: no depth limit applies."""
    stack: list[_Frame] = []
    reached = offset + 1
    loader = LOADER(chunk)
    try:
        for event in _events(loader):
            budget[0] -= 1
            if budget[0] < 0:
                return reached  # the rest is as unknown as after a syntax error
            reached = _at(event.end_mark, offset)[0]
            if isinstance(event, ScalarEvent | AliasEvent):
                start, end = _at(event.start_mark, offset), _at(event.end_mark, offset)
                scalars.append((start, end))
                # A block scalar ends at column 0 of the line after its last line.
                last = end[0] - 1 if end[1] == 1 and end[0] > start[0] else end[0]
                _node_done(stack, out, document, _Place(start, *_role(stack), _enclosing(stack)), last)
            elif isinstance(event, CollectionStartEvent):
                start = _at(event.start_mark, offset)
                role, key = _role(stack)
                stack.append(
                    _Frame(
                        mapping=isinstance(event, MappingStartEvent),
                        flow=bool(event.flow_style),
                        start=start,
                        role=role,
                        key=key,
                        key_lines=_enclosing(stack),
                        last_line=start[0],
                    )
                )
            elif isinstance(event, CollectionEndEvent):
                frame = stack.pop()
                last = frame.last_line
                if frame.flow:  # `]` or `}` may sit on a line of its own
                    last = max(last, _at(event.end_mark, offset)[0])
                _node_done(stack, out, document, _Place(frame.start, frame.role, frame.key, frame.key_lines), last)
    except yaml.YAMLError:  # the loader reports it (PL001)
        # From the end of the last event parsed: an unterminated quote may have begun there.
        return reached
    finally:
        loader.dispose()
    return None


def _events(loader: yaml.SafeLoader | yaml.CSafeLoader) -> Iterator[Event]:
    while loader.check_event():
        event = loader.get_event()
        if event is not None:
            yield event


class _Mark(Protocol):
    line: int
    column: int


def _at(mark: _Mark | None, offset: int) -> Position:
    """A libyaml mark (0-based, within the document's text) as a 1-based position in the file."""
    if mark is None:  # libyaml always sets marks; PyYAML's types allow none
        return (offset + 1, 1)
    return (offset + mark.line + 1, mark.column + 1)


def _enclosing(stack: list[_Frame]) -> tuple[int, ...]:
    """Key lines enclosing a node that starts now (its own key included)."""
    if not stack:
        return ()
    parent = stack[-1]
    if parent.mapping and not parent.expecting_key:
        # A mapping that is a list item encloses its values as a key does: findings point at the
        # field that is wrong (`name:` of a targetRef), and a comment on the item's first line
        # (`- group: ""  # policylint: disable=...`) is where a reader looks for the reference's.
        item = (parent.start[0],) if parent.role == "item" else ()
        return (*parent.key_lines, *item, parent.key_line)
    return parent.key_lines


def _role(stack: list[_Frame]) -> tuple[str, Position | None]:
    """What a node starting now is to its parent, and for a value the position of its key."""
    if not stack:
        return "root", None
    parent = stack[-1]
    if not parent.mapping:
        return "item", None
    if parent.expecting_key:
        return "key", None
    return "value", parent.key_pos


class _Place(NamedTuple):
    """Where a node sits: where it starts, what it is to its parent ("key", "value", "item" or
    "root", `_role`), for a value its key's position, and the key lines enclosing it."""

    start: Position
    role: str
    key: Position | None
    key_lines: tuple[int, ...]


def _node_done(stack: list[_Frame], out: FileComments, document: _Document, place: _Place, last: int) -> None:
    """A node at `place` ended on line `last`: record its scope, and tell its parent."""
    start, role, key, key_lines = place
    if role == "value" and key is not None:
        out.entries[key] = _Node(last, key_lines)
    elif role == "item":
        out.items[start] = _Node(last, key_lines)
    elif role == "root":
        out.roots[start] = _Node(last, key_lines)
        document.root_line = start[0]
    if not stack:
        return
    parent = stack[-1]
    parent.last_line = max(parent.last_line, last)
    if parent.mapping:
        if role == "key":  # the value comes next
            parent.expecting_key, parent.key_line, parent.key_pos = False, start[0], start
        else:
            parent.expecting_key = True
