"""Field paths and their lazy resolution to 1-based line and column.

A path is written the way users read it: `spec.targetRefs[1].sectionName`,
with keys that contain dots or brackets quoted: `metadata.labels["a.b/c"]`.
Positions are not stored while loading; the documents that have findings are read again (one
pass per file, `PositionResolver.prefetch`): from their lines where they are plain block style
(`policylint.input.blockpaths`), else composed and walked along each path.
"""

from __future__ import annotations

import json
import re
from array import array
from collections.abc import Callable, Iterable, Mapping, Sequence
from itertools import accumulate

import yaml
from yaml.error import Mark
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from policylint.input.blockshapes import locate
from policylint.input.load import LOADER, DocumentRef, printable

PathPart = str | int
_PLAIN_KEY = re.compile(r"^[A-Za-z_$][A-Za-z0-9_$-]*$")
# Each alternative starts with a different character and none can match the same text two ways
# (the quoted key's two alternatives are disjoint), so matching is linear. An index has at most
# 18 digits: no list is longer, and int() of thousands of digits would be slow or refused.
_TOKEN = re.compile(r'\.?([A-Za-z_$][A-Za-z0-9_$-]*)|\[(\d{1,18})\]|\[("(?:[^"\\]|\\.)*")\]')


def format_path(parts: Sequence[PathPart]) -> str:
    out: list[str] = []
    for part in parts:
        if isinstance(part, int):
            out.append(f"[{part}]")
        elif _PLAIN_KEY.match(part):
            out.append(f".{part}" if out else part)
        else:
            out.append(f"[{json.dumps(part)}]")
    return "".join(out)


# Whether a base path is already in the form format_path writes. Paths are joined about ten
# times per object from a few dozen distinct bases (`spec.rules`, `metadata.labels`): for those,
# appending the new parts gives what re-parsing and re-formatting the whole path gives.
_CANONICAL: dict[str, bool] = {}
# Paths joined, by base and parts: a run's 25,000-32,000 joins on the 10k corpora are of 81-87
# distinct (base, parts), each worked out once while the table stays small. A `bool` part (an
# int to the key's equality, but written `[True]`) is never looked up or kept.
_JOINED: dict[tuple[PathPart, ...], str] = {}


def join(base: str, *parts: PathPart) -> str:
    if bool in map(type, parts):
        return _join(base, parts)
    key = (base, *parts)
    joined = _JOINED.get(key)
    if joined is None:
        joined = _join(base, parts)
        if len(_JOINED) >= 4096:
            _JOINED.clear()
        _JOINED[key] = joined
    return joined


def _join(base: str, parts: tuple[PathPart, ...]) -> str:
    """`join` worked out."""
    canonical = _CANONICAL.get(base)
    if canonical is None:
        canonical = format_path(path_parts(base)) == base
        if len(_CANONICAL) >= 4096:
            _CANONICAL.clear()
        _CANONICAL[base] = canonical
    if not canonical:
        return format_path([*path_parts(base), *parts])
    out = [base]
    nonempty = bool(base)
    for part in parts:  # as format_path does, continuing after `base`
        if isinstance(part, int):
            out.append(f"[{part}]")
        elif _PLAIN_KEY.match(part):
            out.append(f".{part}" if nonempty else part)
        else:
            out.append(f"[{json.dumps(part)}]")
        nonempty = True
    return "".join(out)


def parse_path(path: str) -> list[PathPart]:
    parts: list[PathPart] = []
    pos = 0
    while pos < len(path):
        match = _TOKEN.match(path, pos)
        if match is None or match.end() == pos:
            break  # malformed tail: resolve as far as we got
        name, index, quoted = match.groups()
        if name is not None:
            parts.append(name)
        elif index is not None:
            parts.append(int(index))
        else:
            parts.append(json.loads(quoted))
        pos = match.end()
    return parts


# The paths positions are asked about repeat: a run's thousands of findings and notes hold a few
# hundred distinct ones (`spec.targetRefs[0]`), each asked by the engine's batch and again by its
# finding's span. Each is parsed once, while the table stays small.
_PARTS: dict[str, tuple[PathPart, ...]] = {}


def path_parts(path: str) -> tuple[PathPart, ...]:
    """`parse_path(path)` as a tuple, parsed once per distinct path."""
    parts = _PARTS.get(path)
    if parts is None:
        if len(_PARTS) >= 4096:
            _PARTS.clear()
        parts = _PARTS[path] = tuple(parse_path(path))
    return parts


def _walk(node: Node, parts: Sequence[PathPart]) -> tuple[Mark, Mark | None]:
    """The start of what `parts` names (its key, or its item), and the end of its span: the end
    of a scalar value on the key's line, else of the key; None when only the line is known (the
    path stopped short, or a collection item starts the span)."""
    mark = node.start_mark
    end: Mark | None = None
    for part in parts:
        if isinstance(node, MappingNode) and isinstance(part, str):
            found = None
            for knode, vnode in node.value:
                if isinstance(knode, ScalarNode) and knode.value == part:
                    found = (knode, vnode)  # last one wins, as in the loaded data
            if found is None:
                return mark, None
            mark, end = found[0].start_mark, found[0].end_mark
            node = found[1]
        elif isinstance(node, SequenceNode) and isinstance(part, int) and 0 <= part < len(node.value):
            node = node.value[part]
            mark, end = node.start_mark, None
        else:
            return mark, None
    if isinstance(node, ScalarNode) and node.end_mark.line == mark.line:
        end = node.end_mark  # `sectionName: http-typo`, the whole pair
    return mark, end


# The line breaks libyaml counts (YAML 1.1 spec §5.4 "Line Break Characters"), so line numbers
# agree with its marks.
class MarkLoader(LOADER):  # type: ignore[valid-type,misc]
    """The loader's parser, for marks only: positions compare keys by their text and never read
    a tag, so none is ever resolved (`load.node_tag`). A class of its own, so that the tests
    count the documents composed for positions apart from those the loader composes."""


_LINE_BREAK = re.compile("\r\n|[\r\n\x85\u2028\u2029]")
_OTHER_BREAKS = re.compile("[\r\x85\u2028\u2029]")
_DOCUMENT_BOUNDARY = re.compile(r"^(?:---|\.\.\.)(?=[ \t\r\n]|$)", re.M)


def _only_newlines(text: str) -> bool:
    """Whether `\n` is the text's only line break: `\r` is looked for with `memchr`, and the
    others cannot be in an ASCII text (`str.isascii` is a flag), where the regexp looked at every
    character of every file with findings."""
    return "\r" not in text and (text.isascii() or _OTHER_BREAKS.search(text) is None)


# Offsets fit 32 bits (files are at most MAX_FILE_BYTES); "I" is 4 bytes on every platform
# CPython supports, "L" is the fallback the array module guarantees 4 for.
_OFFSET = "I" if array("I").itemsize >= 4 else "L"


def _line_starts(text: str) -> array[int]:
    """Offsets where each line starts, by libyaml's line breaks: 4 bytes a line, where a list of
    ints took 40 (the files with findings stay read until the run ends)."""
    starts = array(_OFFSET, (0,))
    if _only_newlines(text):
        # Only `\n`: line lengths summed in C, ten times faster on the files that have findings.
        starts.extend(accumulate(map((1).__add__, map(len, text.split("\n")[:-1]))))
    else:
        starts.extend(m.end() for m in _LINE_BREAK.finditer(text))
    return starts


Span = tuple[int, int, int, int]
Request = tuple[DocumentRef, str | Sequence[PathPart]]

# Documents composed for `span` calls outside a batch (`prefetch`), kept for the next call: the
# calls of one finding, or of one object's notes, come together.
_RECENT_DOCUMENTS = 16
# Files' texts and line starts kept for the next requests: a pass answers one file's requests
# together, so a few are enough. Keeping every file read to the end of the run held the text of
# most of a messy repository at once (70 MiB at 100,000 objects, the run's peak); the reader
# (`read_text`) is asked again for a file that was let go.
_RECENT_FILES = 8


def _document_text(text: str, start: int) -> str:
    """The text of the document whose root's line starts at offset `start`: from that line to
    the next `---` or `...` line, where the document ends at the latest
    (YAML 1.2 spec §9.1 "Documents"), so composing it costs one document, not the whole file."""
    after = text.find("\n", start) + 1
    after = _boundary(text, after) if after else -1
    return text[start : after if after >= 0 else len(text)]


class _Text:
    """A file's text as the loader saw it, and where its lines start, found as they are asked for.

    The documents read from their lines (`blockpaths`) need only where each one's root line
    starts: found by going from one `---` or `...` line to the next (`_boundary`, a search in C)
    and counting the breaks between (`str.count`), then a line at a time to the root, so that a
    file whose documents all answer that way never has every line's start worked out, which
    cost as much as reading those documents from their lines. A document composed, a line's end,
    or a text with breaks other than `\n` take the table of every line's start (`_line_starts`)."""

    __slots__ = ("_at", "_starts", "text")

    # Lines stepped one at a time, past the last boundary before a root, before the table of
    # every line's start is made instead.
    _STEPS = 32

    def __init__(self, text: str) -> None:
        self.text = text
        self._starts: array[int] | None = None if _only_newlines(text) else _line_starts(text)
        self._at = (1, 0)  # the last line found (1-based) and its offset: the next is after it

    def starts(self) -> array[int]:
        """Every line's start."""
        if self._starts is None:
            self._starts = _line_starts(self.text)
        return self._starts

    def start(self, line: int) -> int:
        """The offset where line `line` (1-based) starts; -1 past the text's last line."""
        if self._starts is not None or line < 1:
            starts = self.starts()
            return starts[line - 1] if 0 < line <= len(starts) else -1
        text = self.text
        row, at = self._at if self._at[0] <= line else (1, 0)
        while row < line:
            boundary = _boundary(text, at)
            if boundary >= 0:
                past = row + text.count("\n", at, boundary)  # the boundary's line
                if past < line:
                    after = text.find("\n", boundary) + 1
                    if not after:
                        return -1
                    row, at = past + 1, after
                    continue
            if line - row > self._STEPS:
                self.starts()
                return self.start(line)
            after = text.find("\n", at) + 1
            if not after:
                return -1
            row, at = row + 1, after
        self._at = (row, at)
        return at

    def document(self, line: int) -> str | None:
        """`_document_text` of the document whose root starts on line `line`; None past the text.
        The boundary that ends it is where the next `start` steps on from: the documents of a file
        are asked for in order, and each boundary was searched for twice, once as the end of a
        document and again on the way to the next one's root."""
        start = self.start(line)
        if start < 0:
            return None
        text = self.text
        after = text.find("\n", start) + 1
        end = _boundary(text, after) if after else -1
        if end < 0:
            return text[start:]
        if self._starts is None:
            self._at = (line + 1 + text.count("\n", after, end), end)
        return text[start:end]


# What may follow a boundary's three characters (`_DOCUMENT_BOUNDARY`'s lookahead; "" is the end).
_AFTER_BOUNDARY = ("", " ", "\t", "\r", "\n")


def _boundary(text: str, pos: int) -> int:
    """Where `_DOCUMENT_BOUNDARY.search(text, pos)` matches, or -1: the regex tries every offset
    (its `^` gives the engine no literal to skip to), which on the files with findings cost as
    much as reading their documents' lines; `str.find` jumps to each candidate line. No part of
    the text is searched twice, and `...` is looked for only up to the next `---` candidate, so
    each document costs its own length, not the rest of its file's."""
    if (
        (pos == 0 or text[pos - 1] == "\n")
        and text.startswith(("---", "..."), pos)
        and text[pos + 3 : pos + 4] in _AFTER_BOUNDARY
    ):
        return pos
    at = pos
    dashes = text.find("\n---", at)
    while True:
        dots = text.find("\n...", at, dashes if dashes >= 0 else len(text))
        found = dots if dots >= 0 else dashes
        if found < 0:
            return -1
        at = found + 1
        if text[at + 3 : at + 4] in _AFTER_BOUNDARY:
            return at
        if found == dashes:  # `----` or `---x`: the next `---` candidate
            dashes = text.find("\n---", at)


class KeptSpans:
    """The spans a long-lived process's runs answered (`PositionResolver.prefetch`), per file, kept
    while the file's content key is the same: a span is a function of the file's text and the
    request. A language server's update resolves the positions of its part's findings, nearly all
    in files the edit did not change; reading each such file again for them (its text, its line
    starts, its documents) was a tenth of the update's rules stage at 10,000 objects
    (docs/performance.md#the-language-server)."""

    def __init__(self) -> None:
        self._files: dict[str, tuple[str, dict[tuple[int, tuple[PathPart, ...]], Span]]] = {}

    def of(self, file: str, content: str) -> dict[tuple[int, tuple[PathPart, ...]], Span]:
        """The spans kept of `file` as its content key is `content`: (document line, path parts)
        -> span, for the resolver to read and add to; a file whose content changed starts empty."""
        found = self._files.get(file)
        if found is None or found[0] != content:
            found = self._files[file] = (content, {})
        return found[1]

    def retain(self, files: Iterable[str]) -> None:
        """Hold the spans of `files` only (the run's): a file deleted or renamed is let go."""
        keep = set(files)
        self._files = {file: found for file, found in self._files.items() if file in keep}


class PositionResolver:
    """Resolves (document, path) to a position, composing only the documents asked about.

    `prefetch` answers a batch of requests (every finding and note of a run) with one pass per
    file: the documents asked about in plain block style are read from their lines
    (`blockpaths.locate`), and the others composed, one composition from the first to the last,
    each document's paths answered as it is composed and its nodes dropped at once, so that the
    cost grows with
    the files and documents that have findings, not with the findings, and memory holds one
    document's nodes at a time. `span` then reads the answers; a request outside any batch
    composes its document alone (from the line its root node starts on, which the loader
    recorded), and the last few are kept. Only documents the loader composed successfully are
    ever asked about, so this never reaches a document nested too deep for libyaml's recursive
    composer.
    """

    def __init__(
        self,
        read_text: Callable[[str], str | None],
        kept: KeptSpans | None = None,
        content_keys: Mapping[str, str] | None = None,
    ) -> None:
        self._read_text = read_text
        # Spans answered by earlier runs of this process, per file, for the files whose content
        # key (`content_keys`, their bytes) is still the one they were answered for.
        self._kept = kept if content_keys is not None else None
        self._content_keys = content_keys or {}
        self._files: dict[str, _Text | None] = {}
        self._nodes: dict[tuple[str, int], Node | None] = {}  # the last documents composed alone
        # (file, document line, path parts) -> span, answered by `prefetch`
        self._spans: dict[tuple[str, int, tuple[PathPart, ...]], Span] = {}
        # Compositions per file (a batch's pass, or one document alone): what tests count.
        self.passes: dict[str, int] = {}

    def _file(self, file: str) -> _Text | None:
        if file not in self._files:
            text = self._read_text(file)
            if len(self._files) >= _RECENT_FILES:
                del self._files[next(iter(self._files))]
            # As the loader saw it.
            self._files[file] = None if text is None else _Text(printable(text)[0])
        return self._files[file]

    def prefetch(self, requests: Iterable[Request]) -> None:
        """Answer every request (document, path) with one pass per file; `span` reads them."""
        wanted: dict[str, dict[int, set[tuple[PathPart, ...]]]] = {}
        kept = self._kept
        tables: dict[str, dict[tuple[int, tuple[PathPart, ...]], Span] | None] = {}
        for ref, path in requests:
            parts = path_parts(path) if isinstance(path, str) else tuple(path)
            if not parts or (ref.file, ref.line, parts) in self._spans:
                continue
            if kept is not None:
                if ref.file not in tables:
                    content = self._content_keys.get(ref.file)
                    tables[ref.file] = kept.of(ref.file, content) if content is not None else None
                table = tables[ref.file]
                span = table.get((ref.line, parts)) if table is not None else None
                if span is not None:
                    self._spans[(ref.file, ref.line, parts)] = span
                    continue
            wanted.setdefault(ref.file, {}).setdefault(ref.line, set()).add(parts)
        for file in sorted(wanted):
            self._pass(file, wanted[file])
            table = tables.get(file)
            if table is not None:
                for line, asked in wanted[file].items():
                    for parts in asked:
                        span = self._spans.get((file, line, parts))
                        if span is not None:
                            table[(line, parts)] = span

    def _pass(self, file: str, documents: dict[int, set[tuple[PathPart, ...]]]) -> None:
        loaded = self._file(file)
        if loaded is None:
            return
        # The documents asked about, each from the line its root starts on to the next `---` or
        # `...` line (YAML 1.2 spec §9.1 "Documents"), one after the other: one composition of
        # the file that skips the documents nobody asked about.
        pieces: list[str] = []
        at: dict[int, int] = {}  # line in the pieces (0-based) -> the document's line in the file
        lines = 0
        read = False
        for line in sorted(documents):
            piece = loaded.document(line)
            if piece is None:
                continue
            if not piece.endswith(("\n", "\r")):
                piece += "\n"
            # A document in plain block style is read from its lines (`blockpaths`), a fraction
            # of the cost of composing it, once per shape (`blockshapes`); the others are
            # composed below.
            paths = list(documents[line])
            answers = locate(piece, paths)
            if answers is not None:
                read = True
                for parts, (row, column, end) in zip(paths, answers):
                    self._spans[(file, line, parts)] = (line + row, column + 1, line + row, (column if end is None else end) + 1)
                continue
            if pieces:
                if _DOCUMENT_BOUNDARY.match(piece) is None:
                    pieces.append("---\n")
                    lines += 1
            at[lines] = line
            pieces.append(piece)
            lines += piece.count("\n") if _only_newlines(piece) else len(_LINE_BREAK.findall(piece))
        if read or at:
            self.passes[file] = self.passes.get(file, 0) + 1
        if not at:
            return
        loader = MarkLoader("".join(pieces))
        try:
            while loader.check_node():
                node = loader.get_node()
                base = at.get(node.start_mark.line)
                if base is None:
                    continue  # not a document asked about (an empty one, say)
                for parts in documents[base]:
                    self._spans[(file, base, parts)] = self._span_in(file, node, base - node.start_mark.line, parts)
        except yaml.YAMLError:
            pass  # the documents not answered yet are answered alone, by `span`
        finally:
            loader.dispose()

    def _document_node(self, ref: DocumentRef) -> Node | None:
        key = (ref.file, ref.line)
        if key in self._nodes:
            return self._nodes[key]
        node: Node | None = None
        loaded = self._file(ref.file)
        start = -1 if loaded is None else loaded.start(ref.line)
        if loaded is not None and start >= 0:
            self.passes[ref.file] = self.passes.get(ref.file, 0) + 1
            loader = MarkLoader(_document_text(loaded.text, start))
            try:
                if loader.check_node():
                    node = loader.get_node()
            except yaml.YAMLError:
                node = None
            finally:
                loader.dispose()
        if len(self._nodes) >= _RECENT_DOCUMENTS:
            del self._nodes[next(iter(self._nodes))]
        self._nodes[key] = node
        return node

    def resolve(self, ref: DocumentRef, path: str | Sequence[PathPart]) -> tuple[int, int]:
        return self.span(ref, path)[:2]

    def span(self, ref: DocumentRef, path: str | Sequence[PathPart]) -> Span:
        """Start line and column of what `path` names, and the end of its span (the column after
        its last character): the key and a scalar value on its line, else the key, else the rest
        of the start line; a document itself, or one that cannot be read again, is only its
        start. SARIF regions and GitHub annotations underline exactly that."""
        parts = path_parts(path) if isinstance(path, str) else tuple(path)
        # A whole document is its start: its span would cost reading the file, which a finding
        # about the document (two million empty ones, say) must not.
        if not parts:
            return ref.line, ref.column, ref.line, ref.column
        known = self._spans.get((ref.file, ref.line, parts))
        if known is not None:
            return known
        node = self._document_node(ref)
        if node is None:
            return ref.line, ref.column, ref.line, ref.column
        return self._span_in(ref.file, node, ref.line, parts)

    def _span_in(self, file: str, node: Node, base: int, parts: Sequence[PathPart]) -> Span:
        """The span of `parts` in a document node composed from line `base` on."""
        mark, end = _walk(node, parts)
        return self._span_at(
            file, base + mark.line, mark.column, end.column if end is not None and end.line == mark.line else None
        )

    def _span_at(self, file: str, line: int, column: int, end: int | None) -> Span:
        """The span from 0-based `column` of `line` to the 0-based column `end` of the same line,
        or (None) to the end of its text."""
        if end is None:
            return line, column + 1, *self._line_end(file, line, column + 1)
        return line, column + 1, line, end + 1

    def _line_end(self, file: str, line: int, column: int) -> tuple[int, int]:
        """The end of line `line`'s text without trailing blanks; at least `column` (an empty
        line, or a position past the text)."""
        loaded = self._file(file)
        if loaded is None or not 0 < line <= len(starts := loaded.starts()):
            return line, column
        text = loaded.text
        stop = starts[line] if line < len(starts) else len(text)
        # The line's only break is its last character(s), and every break libyaml counts is
        # whitespace to `str.rstrip`: no regexp is needed to take it off.
        content = text[starts[line - 1] : stop].rstrip()
        return line, max(column, len(content) + 1)
