"""Loading YAML and JSON manifests with libyaml, keeping exact positions.

The hot path composes one document at a time with PyYAML's libyaml-backed
`CSafeLoader` and converts the node tree to plain Python data in one tight
pass (faster than PyYAML's own constructor, see benchmarks/). Only the root
position of each document is kept; positions of fields are recomputed lazily,
per document, when a finding needs them (`policylint.input.positions`).

Every problem with the input is an `Issue` with a location, never an
exception: broken YAML, duplicate keys, undecodable bytes, alias bombs,
absurd nesting, template markers and unreadable files (rules PL001-PL008).
"""

from __future__ import annotations

import gc
import io
import re
from collections.abc import Iterator
from typing import Any

import yaml

from policylint.findings import Issue
from policylint.input import bounds
from policylint.input.convert import Converter, TooLarge
from policylint.input.document import (
    DUPLICATE_KEY,
    NOT_A_MANIFEST,
    RESOURCE_LIMIT,
    SHARED_STRING_MAX,
    TEMPLATE_MARKERS,
    UNDECODABLE_FILE,
    UNREADABLE_FILE,
    YAML_SYNTAX_ERROR,
    Document,
    DocumentRef,
    FileResult,
    Shared,
    located_issue,
)
from policylint.input.prescan import (
    DOC_BOUNDARY,
    event_start,
    might_hold_more_nodes_than_limit,
    might_nest_deeper_than_limit,
    scan,
)
from policylint.input.reader import NON_SPACE, decode, line_col, read_bytes
from policylint.input.resolver import LOADER, PARSER_IS_C, node_tag
from policylint.input.sources import Source
from policylint.input.templates import (
    BRACED,
    placeholder_along,
    placeholder_fields,
    placeholder_issue,
    template_issue,
    unrendered,
    without_template_keys,
)

# The note a run gives when the parser is the pure-Python one: the same words whether the run
# analysed or took an earlier analysis's findings (policylint.incremental.equivalent).
PURE_PYTHON_NOTE = "PyYAML was built without libyaml: parsing with its pure-Python loader, several times slower"

# The loader's public face: what callers import from here, wherever it is defined.
__all__ = [
    "DUPLICATE_KEY",
    "LOADER",
    "NOT_A_MANIFEST",
    "PARSER_IS_C",
    "PURE_PYTHON_NOTE",
    "RESOURCE_LIMIT",
    "SHARED_STRING_MAX",
    "TEMPLATE_MARKERS",
    "UNDECODABLE_FILE",
    "UNREADABLE_FILE",
    "YAML_SYNTAX_ERROR",
    "Document",
    "DocumentRef",
    "FileResult",
    "Shared",
    "decode",
    "is_json_name",
    "load_bytes",
    "load_source",
    "load_sources",
    "node_tag",
    "parse_text",
    "placeholder_along",
    "placeholder_fields",
    "printable",
    "read_bytes",
    "unrendered",
]

# Everything outside YAML's printable set (c-printable); libyaml's reader refuses the rest.
_NON_PRINTABLE = re.compile("[^\t\n\r\x20-\x7e\x85\xa0-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


# The ASCII characters YAML allows: an ASCII text left with nothing once they are deleted holds no
# character `_NON_PRINTABLE` finds. Two C passes over its bytes, a tenth of the regexp's time; a
# text that is not ASCII (`str.isascii` is a flag) is searched by the regexp.
_PRINTABLE_BYTES = bytes(range(0x20, 0x7F)) + b"\t\n\r"


def _uses_aliases(text: str) -> bool:
    return "&" in text and "*" in text


def _clamp_to_content(text: str, line: int, column: int) -> tuple[int, int]:
    """An error at the end of the input ("unexpected end of stream") lies past the last line,
    where editors and annotations show nothing: move it to the end of the last non-blank
    line. `line` is 0-based, `column` 1-based."""
    if column != 1 or line < text.count("\n"):
        return line, column
    lines = text.splitlines()  # the line breaks libyaml counts (\r\n, \r, \n, NEL, LS, PS)
    if line < len(lines):
        return line, column
    for i in range(len(lines) - 1, -1, -1):
        if lines[i].strip():
            return i, len(lines[i]) + 1
    return line, column


def _boundary_from(text: str, pos: int, after: int) -> int | None:
    """Offset of the first document boundary at or after `pos` and past `after` (parsing must
    move forward); after a `...` line, the line that follows it.

    The boundary may be on the line of an error (a `---` that ends a broken flow collection).
    """
    match = DOC_BOUNDARY.search(text, max(pos, after + 1))
    if match is None:
        return None
    start = match.start()
    if text.startswith("...", start):
        # `...` ends a document; parsing resumes on the following line.
        nl = text.find("\n", start)
        if nl < 0:
            return None
        start = nl + 1
    return start


def _marker_at(text: str, pos: int) -> bool:
    """Whether a document marker (`---` or `...`, then a space or the end of the line) is at `pos`."""
    return text.startswith(("---", "..."), pos) and text[pos + 3 : pos + 4] in ("", " ", "\t", "\r", "\n")


def _strip_document_boms(text: str) -> str:
    """Without the byte order marks that start a document after the first one.

    YAML 1.2 allows a byte order mark at the start of every document, not only of the stream
    (`cat a.yaml b.yaml` of files saved with one makes such a stream), but libyaml accepts only
    the stream's, and the document after it would be lost. A U+FEFF that starts a line right
    after a `---` or `...` line, or that starts one, goes, like the leading one that decoding
    drops: it is not part of the text, and columns on its line are counted without it.
    """
    if "\ufeff" not in text:
        return text
    pieces: list[str] = []
    last = 0
    line_start = 0  # of the last mark found at the start of a line: no earlier line matters
    i = text.find("\ufeff")
    while i >= 0:
        if i == 0 or text[i - 1] in "\n\r":
            # The line before it, found scanning back no further than the previous such mark,
            # so that many marks cost one pass over the text.
            end = i - 2 if text.startswith("\r\n", i - 2) else i - 1
            previous = max(text.rfind("\n", line_start, end), text.rfind("\r", line_start, end), line_start - 1) + 1
            if i == 0 or _marker_at(text, i + 1) or (previous < end and _marker_at(text, previous)):
                pieces.append(text[last:i])
                last = i + 1
            line_start = i
        i = text.find("\ufeff", i + 1)
    pieces.append(text[last:])
    return "".join(pieces)


def _printable(text: str) -> tuple[str, str, int]:
    """(`text` ready for libyaml, `text` before control characters were replaced, index of the first)."""
    text = _strip_document_boms(text)
    if text.isascii() and not text.encode("ascii").translate(None, _PRINTABLE_BYTES):
        return text, text, -1
    bad = _NON_PRINTABLE.search(text)
    if bad is None:
        return text, text, -1
    return _NON_PRINTABLE.sub(" ", text), text, bad.start()


def printable(text: str) -> tuple[str, int]:
    """`text` as libyaml can read it, and the index of the first character YAML forbids (or -1).

    libyaml rejects the whole stream at the first control character, reading up to
    16 KB ahead of the parser, so one stray escape code would lose the documents
    around it: each is replaced by a space, one for one. Byte order marks that start a
    later document are dropped (`_strip_document_boms`). Lines stay the same, and so
    do columns but after such a mark. The position resolver applies the same function,
    so both see the same text.
    """
    clean, _, bad = _printable(text)
    return clean, bad


def parse_text(text: str, file: str, strings: Shared | None = None) -> FileResult:
    """Parse every document of one file; a syntax error, or a document over a limit, skips
    only to the next `---`. `strings` shares keys and short values with the other files of a
    run (one string object each), else within the file."""
    return _FileParse(text, file, strings).run()


class _FileParse:
    """One file's parse: chunks of documents read in turn, each starting where the last one
    stopped (a syntax error or a document over a limit skips to the next `---`)."""

    def __init__(self, text: str, file: str, strings: Shared | None = None) -> None:
        self.file = file
        self.issues: list[Issue] = []
        self.documents: list[Document] = []
        self.text, original, bad = _printable(text)
        if bad >= 0:
            self.issues.append(_control_character_issue(self.text, original, bad, file))
        # Where each parsed document starts and ends (lines), for template markers (`template_issue`).
        # Kept only where a marker may be: `{{ }}` templates, or placeholders in names (`placeholder_issue`).
        # The two-character markers are looked for only where their first character is: a search for
        # one character is a `memchr`, for two a scan of every position.
        text = self.text
        self.spans: list[tuple[int, int, Any]] | None = (
            []
            if ("{" in text and ("{{" in text or BRACED.search(text) is not None))
            or ("$" in text and ("${" in text or "$(" in text))
            or "<" in text
            or "PLACEHOLDER_" in text
            else None
        )
        # The limit checks run on every chunk: after a syntax error parsing resumes at the next
        # `---`, and a document nested too deep for libyaml's recursive composer, or too big to
        # compose, may follow it. Each scan stops where composing stops, so together they read
        # the text once.
        self.maybe_deep = might_nest_deeper_than_limit(self.text)
        self.maybe_big = might_hold_more_nodes_than_limit(self.text)
        self.converter = Converter(file, 0, _uses_aliases(self.text), {} if strings is None else strings)
        # Parsing resumed further on reads the same text from an offset: slicing the rest of the
        # text for each resumption would cost quadratic time in a file of many broken documents.
        self.stream: io.StringIO | None = None
        self.chunk_start = 0
        self.line_offset = 0
        self.documents_read = 0

    def run(self) -> FileResult:
        skipped = 0
        while True:
            boundary = self._chunk()
            if boundary is None:
                break
            self.line_offset += self.text.count("\n", self.chunk_start, boundary)
            self.chunk_start = boundary
            skipped += 1
            if skipped >= bounds.MAX_SKIPPED_DOCUMENTS:
                message = (
                    f"{bounds.MAX_SKIPPED_DOCUMENTS:,} documents skipped in one file (syntax errors or limits);"
                    " the rest of the file is skipped"
                )
                self.issues.append(located_issue(RESOURCE_LIMIT, self.file, self.line_offset + 1, 1, message))
                break
        issues = self.issues
        if self.spans is not None:
            template = template_issue(self.text, self.file, self.spans, issues) if "{{" in self.text else None
            if template is not None:
                issues.insert(0, template)
                issues = without_template_keys(issues, self.text)
            else:
                placeholder = placeholder_issue(self.text, self.file, self.spans)
                if placeholder is not None:
                    issues.insert(0, placeholder)
        if is_json_name(self.file) and _json_not_a_manifest(issues, self.text):
            return FileResult([], [_not_a_manifest(issues, self.file)])
        return FileResult(self.documents, issues)

    def _chunk(self) -> int | None:
        """Load the documents from `chunk_start` on; where to resume (None: the file is done)."""
        text, chunk_start = self.text, self.chunk_start
        source: str | io.StringIO = text
        if chunk_start:
            self.stream = self.stream or io.StringIO(text)
            self.stream.seek(chunk_start)
            source = self.stream
        over = scan(source, self.maybe_deep, self.maybe_big) if self.maybe_deep or self.maybe_big else None
        if self.stream is not None and chunk_start:
            self.stream.seek(chunk_start)
        loader = LOADER(source)
        self.converter.line_offset = self.line_offset
        self.converter.read_from(text, chunk_start)
        error: yaml.MarkedYAMLError | None = None
        stop = False
        try:
            stop = self._documents(loader, over.document if over is not None else None)
        except yaml.MarkedYAMLError as exc:
            # Without its traceback: kept in this frame, which the traceback holds, it would be a
            # reference cycle (the command runs with the cyclic collector off).
            error = exc.with_traceback(None)
        except yaml.YAMLError as exc:  # unmarked errors: rare, report at the chunk start
            self.issues.append(located_issue(YAML_SYNTAX_ERROR, self.file, self.line_offset + 1, 1, f"YAML error: {exc}"))
        finally:
            loader.dispose()
            self.issues.extend(self.converter.issues)
            self.converter.issues.clear()
        if stop:
            return None
        if over is not None and error is None:
            # Documents before the one over the limit are loaded; it is skipped, and parsing
            # resumes after it.
            line, column = self.line_offset + over.line + 1, over.column + 1
            self.issues.append(located_issue(RESOURCE_LIMIT, self.file, line, column, f"{over.message}; document skipped"))
            nl = text.find("\n", chunk_start + over.index)
            return _boundary_from(text, nl + 1, chunk_start) if nl >= 0 else None
        if error is None:
            return None
        issue, at = _syntax_error(error, text, chunk_start, self.line_offset, self.file)
        self.issues.append(issue)
        return _boundary_from(text, text.rfind("\n", 0, at) + 1, chunk_start)

    def _documents(self, loader: Any, last: int | None) -> bool:
        """Compose and convert the chunk's documents (before document `last`, over a limit);
        True when a file limit stops the file."""
        line_offset, file = self.line_offset, self.file
        doc_in_chunk = 0
        while (last is None or doc_in_chunk < last) and loader.check_node():
            stop = None
            if self.documents_read >= bounds.MAX_DOCUMENTS:
                stop = f"more than {bounds.MAX_DOCUMENTS:,} documents in one file"
            elif self.converter.nodes > bounds.MAX_FILE_NODES:
                stop = f"more than {bounds.MAX_FILE_NODES:,} YAML nodes in one file"
            if stop is not None:
                stop_line, stop_col, _ = event_start(loader.peek_event())
                message = f"{stop}; the rest of the file is skipped"
                self.issues.append(located_issue(RESOURCE_LIMIT, file, line_offset + stop_line + 1, stop_col + 1, message))
                return True
            node = loader.get_node()
            self.documents_read += 1
            if node is None:
                doc_in_chunk += 1
                continue
            mark = node.start_mark
            ref = DocumentRef(file, self.chunk_start, line_offset, doc_in_chunk, line_offset + mark.line + 1, mark.column + 1)
            doc_in_chunk += 1
            try:
                data = self.converter.convert_document(node)
            except TooLarge as exc:
                m = exc.node.start_mark
                self.issues.append(
                    located_issue(RESOURCE_LIMIT, file, line_offset + m.line + 1, m.column + 1, f"{exc}; document skipped")
                )
                continue
            except RecursionError:
                self.issues.append(
                    located_issue(RESOURCE_LIMIT, file, ref.line, ref.column, "document nested too deeply; document skipped")
                )
                continue
            self.documents.append(Document(ref, data))
            if self.spans is not None:
                self.spans.append((ref.line, line_offset + node.end_mark.line + 1, data))
        return False


def _control_character_issue(text: str, original: str, bad: int, file: str) -> Issue:
    line, col = line_col(text, bad)
    count = len(_NON_PRINTABLE.findall(original))
    more = f" (and {count - 1} more)" if count > 1 else ""
    message = f"YAML error: control character U+{ord(original[bad]):04X} is not allowed{more}; read as a space"
    return located_issue(YAML_SYNTAX_ERROR, file, line, col, message)


def _syntax_error(error: yaml.MarkedYAMLError, text: str, chunk_start: int, line_offset: int, file: str) -> tuple[Issue, int]:
    """The PL001 issue of a syntax error in the chunk at `chunk_start`, and its offset in `text`."""
    mark = error.problem_mark or error.context_mark
    err_line = mark.line if mark is not None else 0
    col = mark.column + 1 if mark is not None else 1
    # libyaml does not count a byte order mark that starts the stream in its index.
    at = chunk_start + (mark.index if mark is not None else 0) + text.startswith("\ufeff", chunk_start)
    problem = error.problem or error.context or "invalid YAML"
    context = f" ({error.context})" if error.context and error.problem else ""
    shown_line = err_line
    if NON_SPACE.search(text, at) is None:  # at the end of the input: rare, once per file
        shown_line, col = _clamp_to_content(text[chunk_start:], err_line, col)
    if _PARSER_DEPTH_LIMIT in problem:
        # libyaml 0.2.6 (bundled since PyYAML 6.0.4) refuses deep nesting itself, while scanning
        # ahead, before policylint's own scan (bounds.MAX_DEPTH) sees the events: the same resource
        # limit, found earlier, not a syntax error.
        message = f"nesting deeper than the YAML parser allows ({problem}); document skipped"
        return located_issue(RESOURCE_LIMIT, file, line_offset + shown_line + 1, col, message), at
    issue = located_issue(YAML_SYNTAX_ERROR, file, line_offset + shown_line + 1, col, f"YAML syntax error: {problem}{context}")
    return issue, at


# libyaml's problem text when a document nests deeper than its own limit (yaml_parser_set_max_nest_level).
_PARSER_DEPTH_LIMIT = "exceeded maximum nesting depth"


def is_json_name(file: str) -> bool:
    """Whether a file is named as JSON: then a syntax error may mean "not a manifest"
    (`_json_not_a_manifest`), and the parse cache keys its entry apart."""
    return file.lower().endswith(".json")


def _has_json_key(text: str, key: str) -> bool:
    """Whether `"key"` followed by optional whitespace and `:` occurs in `text` (str methods:
    each character is looked at a bounded number of times)."""
    quoted = f'"{key}"'
    at = text.find(quoted)
    while at >= 0:
        i = at + len(quoted)
        while i < len(text) and text[i] in " \t\r\n":
            i += 1
        if text.startswith(":", i):
            return True
        at = text.find(quoted, i)
    return False


def _json_not_a_manifest(issues: list[Issue], text: str) -> bool:
    """A `.json` file that is not valid JSON (JSON with comments: `tsconfig.json`, VS Code
    settings) and does not look like a Kubernetes object (no `"apiVersion"` and `"kind"` keys) is
    not a manifest: one PL003 (info) instead of syntax errors."""
    if not any(issue.rule_id == YAML_SYNTAX_ERROR for issue in issues):
        return False
    return not (_has_json_key(text, "apiVersion") and _has_json_key(text, "kind"))


def _not_a_manifest(issues: list[Issue], file: str) -> Issue:
    first = next(issue for issue in issues if issue.rule_id == YAML_SYNTAX_ERROR)
    assert first.location is not None
    return located_issue(
        NOT_A_MANIFEST,
        file,
        first.location.line,
        first.location.column,
        "not valid JSON (JSON with comments?) and not a Kubernetes object: not a manifest; ignored",
    )


def load_source(source: Source) -> FileResult:
    data, problem = read_bytes(source)
    if problem is not None:
        return FileResult([], [problem])
    assert data is not None
    return load_bytes(data, source.display, keep_text=source.content is not None)


def load_bytes(data: bytes, file: str, *, keep_text: bool = False, strings: Shared | None = None) -> FileResult:
    """Everything about one file that follows from its bytes alone (what the parse cache stores).

    `keep_text` keeps the decoded text for positions: stdin cannot be read again. `strings`: see
    `parse_text`.
    """
    if len(data) > bounds.MAX_FILE_BYTES:
        return FileResult(
            [],
            [
                located_issue(
                    RESOURCE_LIMIT, file, 1, 1, f"file larger than {bounds.MAX_FILE_BYTES // (1024 * 1024)} MiB; skipped"
                )
            ],
        )
    text, problem = decode(data, file)
    if problem is not None:
        return FileResult([], [problem])
    assert text is not None
    result = parse_text(text, file, strings)
    if keep_text:
        result.text = text
    return result


def load_sources(sources: list[Source]) -> Iterator[tuple[Source, FileResult]]:
    # Parsing allocates many short-lived containers; the cyclic GC only slows it down.
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        for source in sources:
            yield source, load_source(source)
    finally:
        if was_enabled:
            gc.enable()
