"""Loading YAML and JSON manifests with libyaml, keeping exact positions.

The hot path composes one document at a time with PyYAML's libyaml-backed
`CSafeLoader` and converts the node tree to plain Python data in one tight
pass (faster than PyYAML's own constructor, see benchmarks/). Only the root
position of each document is kept; positions of fields are recomputed lazily,
per document, when a finding needs them (`policylint.positions`).

Every problem with the input is an `Issue` with a location, never an
exception: broken YAML, duplicate keys, undecodable bytes, alias bombs,
absurd nesting, template markers and unreadable files (rules PL001-PL008).
"""

from __future__ import annotations

import codecs
import gc
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from policylint.findings import Issue, Location
from policylint.sources import Source

# The C parser is required: the pure-Python one is an order of magnitude slower.
# PyYAML wheels bundle libyaml; a build without it is reported by `policylint --version`.
LOADER: type[yaml.CSafeLoader] = yaml.CSafeLoader
PARSER_IS_C: bool = bool(getattr(yaml, "__with_libyaml__", False))

# Bounds on hostile input (design.md §5). libyaml composes recursively in C, so a
# document nested 100,000 levels deep crashes the interpreter: depth is checked
# before composing whenever the text could possibly be that deep.
MAX_DEPTH = 256
MAX_FILE_BYTES = 64 * 1024 * 1024
MAX_EXPANDED_NODES = 250_000
_SIZE_CAP = 1 << 60  # expanded sizes saturate here: a bomb's true size can have thousands of digits

YAML_SYNTAX_ERROR = "PL001"
DUPLICATE_KEY = "PL002"
TEMPLATE_MARKERS = "PL004"
UNDECODABLE_FILE = "PL006"
RESOURCE_LIMIT = "PL007"
UNREADABLE_FILE = "PL008"

_STR = "tag:yaml.org,2002:str"
_INT = "tag:yaml.org,2002:int"
_BOOL = "tag:yaml.org,2002:bool"
_NULL = "tag:yaml.org,2002:null"
_FLOAT = "tag:yaml.org,2002:float"
_MERGE = "tag:yaml.org,2002:merge"
_SAFE = yaml.constructor.SafeConstructor()

# Everything outside YAML's printable set (c-printable); libyaml's reader refuses the rest.
_NON_PRINTABLE = re.compile("[^\t\n\r\x20-\x7e\x85\xa0-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")
_TEMPLATE = re.compile(r"\{\{-?\s*.*?\s*-?\}\}")
_DOC_BOUNDARY = re.compile(r"^(?:---|\.\.\.)(?=[ \t\r\n]|$)", re.M)
_SHARED_STRING_MAX = 64


@dataclass(frozen=True, slots=True)
class DocumentRef:
    """Where a document lives, enough to re-compose it for positions.

    `chunk_start` is the character offset where parsing (re)started after a
    syntax error, `line_offset` the line number of that offset, and
    `doc_in_chunk` the document's number counted from there.
    """

    file: str
    chunk_start: int
    line_offset: int
    doc_in_chunk: int
    line: int
    column: int


@dataclass(frozen=True, slots=True)
class Document:
    ref: DocumentRef
    data: Any


@dataclass(slots=True)
class FileResult:
    documents: list[Document]
    issues: list[Issue]
    text: str | None = None


class _TooLarge(Exception):
    def __init__(self, message: str, node: Node) -> None:
        super().__init__(message)
        self.node = node


def _issue(rule: str, file: str, line: int, column: int, message: str) -> Issue:
    return Issue(rule_id=rule, message=message, location=Location(file, line, column))


def read_bytes(source: Source) -> tuple[bytes | None, Issue | None]:
    if source.content is not None:
        return source.content, None
    assert source.fs_path is not None
    try:
        with open(source.fs_path, "rb") as fh:
            data = fh.read(MAX_FILE_BYTES + 1)
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        return None, _issue(UNREADABLE_FILE, source.display, 1, 1, f"cannot read file: {reason}")
    return data, None


def _line_col(text: str, index: int) -> tuple[int, int]:
    line = text.count("\n", 0, index) + 1
    start = text.rfind("\n", 0, index) + 1
    return line, index - start + 1


def decode(data: bytes, file: str) -> tuple[str | None, Issue | None]:
    """Bytes to text: UTF-8 (BOM stripped), or UTF-16/32 announced by a BOM, as YAML 1.2 allows."""
    for bom, codec in (
        (codecs.BOM_UTF32_LE, "utf-32"),
        (codecs.BOM_UTF32_BE, "utf-32"),
        (codecs.BOM_UTF8, "utf-8-sig"),
        (codecs.BOM_UTF16_LE, "utf-16"),
        (codecs.BOM_UTF16_BE, "utf-16"),
    ):
        if data.startswith(bom):
            try:
                return data.decode(codec), None
            except UnicodeDecodeError as exc:
                return None, _issue(
                    UNDECODABLE_FILE, file, 1, 1, f"file starts with a {codec.upper()} byte order mark but is not valid {codec.upper()} ({exc.reason})"
                )
    if b"\x00" in data[:8192]:
        hint = " (UTF-16 without a byte order mark?)" if data[1:2] == b"\x00" or data[:1] == b"\x00" else ""
        return None, _issue(UNDECODABLE_FILE, file, 1, 1, f"binary file, not YAML or JSON{hint}")
    try:
        return data.decode("utf-8"), None
    except UnicodeDecodeError as exc:
        good = data[: exc.start].decode("utf-8", errors="replace")
        line, col = _line_col(good, len(good))
        return None, _issue(
            UNDECODABLE_FILE, file, line, col, f"not valid UTF-8: byte 0x{data[exc.start]:02x} at offset {exc.start}"
        )


def _scalar(node: ScalarNode) -> Any:
    tag = node.tag
    if tag == _STR:
        return node.value
    if tag == _INT:
        try:
            return int(node.value)
        except ValueError:
            return _SAFE.construct_yaml_int(node)  # 0x1F, 0o17, 1_000, sexagesimal
    if tag == _BOOL:
        return _SAFE.bool_values[node.value.lower()]
    if tag == _NULL:
        return None
    if tag == _FLOAT:
        return _SAFE.construct_yaml_float(node)
    # Timestamps, binary and custom tags: Kubernetes converts YAML to JSON, where these are strings.
    return node.value


class _Converter:
    """Node tree to Python data, reporting duplicate keys.

    `shared=True` is the careful mode for text that may use anchors and aliases:
    repeated nodes are converted once and shared, recursion is detected, and the
    size the document would have once expanded is bounded (billion laughs).
    """

    __slots__ = ("issues", "file", "line_offset", "shared", "_memo", "_sizes", "_active", "_strings")

    def __init__(self, file: str, line_offset: int, shared: bool, strings: dict[str, str] | None = None) -> None:
        self.issues: list[Issue] = []
        self.file = file
        self.line_offset = line_offset
        self.shared = shared
        # Keys and short values repeat in every object (`apiVersion`, `HTTPRoute`, group names):
        # one string object per file saves memory, and the parse cache (marshal) then writes each
        # once, which halves its size and its load time (benchmarks/, docs/performance.md).
        self._strings: dict[str, str] = {} if strings is None else strings
        self._memo: dict[int, Any] = {}
        self._sizes: dict[int, int] = {}
        self._active: set[int] = set()

    def convert_document(self, node: Node) -> Any:
        if self.shared:
            # Node ids are only unique while the previous document's nodes are alive.
            self._memo.clear()
            self._sizes.clear()
            self._active.clear()
            size = self._expanded_size(node)
            # Only what aliases add counts: a big document written out in full (a `kind: List`
            # dump) is not a bomb, even when `&` and `*` occur in its strings.
            if size - len(self._sizes) > MAX_EXPANDED_NODES:
                raise _TooLarge(
                    f"document expands to more than {MAX_EXPANDED_NODES:,} nodes through YAML aliases (alias bomb?)",
                    node,
                )
        return self._convert(node)

    def _expanded_size(self, root: Node) -> int:
        # Iterative post-order walk so that neither depth nor cycles can hurt.
        sizes = self._sizes
        stack: list[tuple[Node, bool]] = [(root, False)]
        while stack:
            node, done = stack.pop()
            key = id(node)
            if node.__class__ is ScalarNode:
                sizes[key] = 1
                continue
            if done:
                self._active.discard(key)
                children = node.value if node.__class__ is SequenceNode else [c for kv in node.value for c in kv]
                total = 1
                for child in children:
                    total += sizes[id(child)]
                sizes[key] = min(total, _SIZE_CAP)
                continue
            if key in sizes:
                continue
            if key in self._active:
                raise _TooLarge("recursive YAML alias: a node contains itself", node)
            self._active.add(key)
            stack.append((node, True))
            children = node.value if node.__class__ is SequenceNode else [c for kv in node.value for c in kv]
            for child in children:
                if id(child) not in sizes:
                    stack.append((child, False))
        return sizes[id(root)]

    def _convert(self, node: Node) -> Any:
        cls = node.__class__
        if cls is ScalarNode:
            try:
                value = _scalar(node)  # type: ignore[arg-type]
            except (ValueError, LookupError, ArithmeticError, TypeError) as exc:
                return self._bad_scalar(node, exc)  # type: ignore[arg-type]
            if value.__class__ is str and len(value) <= _SHARED_STRING_MAX:
                return self._strings.setdefault(value, value)
            return value
        if self.shared:
            key = id(node)
            if key in self._memo:
                return self._memo[key]
        if cls is SequenceNode:
            out_list = [self._convert(child) for child in node.value]
            if self.shared:
                self._memo[id(node)] = out_list
            return out_list
        out: dict[str, Any] = {}
        pairs = node.value
        for knode, vnode in pairs:
            if knode.__class__ is ScalarNode:
                if knode.tag == _MERGE:
                    self._merge(out, vnode)
                    continue
                # Kubernetes turns YAML into JSON: every key is a string (`1:` -> "1").
                k = self._strings.setdefault(knode.value, knode.value)
            else:
                k = repr(self._convert(knode))
            out[k] = self._convert(vnode)
        if len(out) != len(pairs):
            self._report_duplicates(pairs)
        if self.shared:
            self._memo[id(node)] = out
        return out

    def _bad_scalar(self, node: ScalarNode, exc: Exception) -> str:
        """`!!int x`, `!!bool maybe`, a 10,000-digit number: keep the text, report where it is."""
        mark = node.start_mark
        tag = node.tag.rsplit(":", 1)[-1]
        shown = node.value if len(node.value) <= 40 else node.value[:37] + "..."
        reason = "too many digits" if isinstance(exc, ValueError) and "digits" in str(exc) else f"not a valid {tag}"
        self.issues.append(
            _issue(
                YAML_SYNTAX_ERROR,
                self.file,
                self.line_offset + mark.line + 1,
                mark.column + 1,
                f"YAML error: cannot read {shown!r} as !!{tag} ({reason}); it is kept as a string",
            )
        )
        return node.value

    def _merge(self, out: dict[str, Any], vnode: Node) -> None:
        sources = vnode.value if vnode.__class__ is SequenceNode else [vnode]
        for src in sources:
            value = self._convert(src)
            if isinstance(value, dict):
                for k, v in value.items():
                    out.setdefault(k, v)

    def _report_duplicates(self, pairs: list[tuple[Node, Node]]) -> None:
        seen: dict[str, Node] = {}
        for knode, _ in pairs:
            if knode.__class__ is not ScalarNode or knode.tag == _MERGE:
                continue
            first = seen.get(knode.value)
            if first is None:
                seen[knode.value] = knode
                continue
            mark = knode.start_mark
            self.issues.append(
                _issue(
                    DUPLICATE_KEY,
                    self.file,
                    self.line_offset + mark.line + 1,
                    mark.column + 1,
                    f"duplicate key {knode.value!r} (first defined on line {self.line_offset + first.start_mark.line + 1});"
                    " the Kubernetes API rejects it and YAML tools disagree on which value wins",
                )
            )


def _might_nest_deeper_than_limit(text: str) -> bool:
    """Cheap upper bound on nesting, so the exact (slower) check runs only when needed.

    Flow nesting needs one `[` or `{` per level within one document (document
    markers are forbidden inside flow collections, so a nest cannot span them);
    block nesting needs one column of indentation (or a compact `- `) per level.
    The two combine (`spec:` blocks holding `[[...]]`), so a document is at most
    as deep as its brackets plus its longest indentation, plus one.
    """
    brackets = text.count("[") + text.count("{")
    if brackets >= MAX_DEPTH:
        brackets = 0
        start = 0
        for match in _DOC_BOUNDARY.finditer(text):
            end = match.start()
            brackets = max(brackets, text.count("[", start, end) + text.count("{", start, end))
            if brackets >= MAX_DEPTH:
                return True
            start = end
        brackets = max(brackets, text.count("[", start) + text.count("{", start))
        if brackets >= MAX_DEPTH:
            return True
    return re.search(r"^[ \t?:\-]{%d,}" % (MAX_DEPTH - brackets), text, re.M) is not None


def _too_deep(text: str) -> tuple[int, int, int] | None:
    """Exact depth check with the event parser, which is a state machine and never recurses.

    Returns the 0-based line and column of the first node past the limit and the
    number of the document holding it, or None. Scanning stops at the first syntax
    error: the composer stops there too, so nothing after it is composed.
    """
    depth = 0
    doc = -1
    loader = LOADER(text)
    try:
        while True:
            event = loader.get_event()
            if event is None:
                return None
            cls = event.__class__
            if cls is yaml.MappingStartEvent or cls is yaml.SequenceStartEvent:
                depth += 1
                if depth > MAX_DEPTH:
                    return event.start_mark.line, event.start_mark.column, doc
            elif cls is yaml.MappingEndEvent or cls is yaml.SequenceEndEvent:
                depth -= 1
            elif cls is yaml.DocumentStartEvent:
                doc += 1
                depth = 0
            elif cls is yaml.StreamEndEvent:
                return None
    except yaml.YAMLError:
        return None  # the composer reports the syntax error with its position
    finally:
        loader.dispose()


def _template_marker(text: str) -> tuple[int, int, str] | None:
    if "{{" not in text:
        return None
    match = _TEMPLATE.search(text)
    if match is None:
        return None
    line, col = _line_col(text, match.start())
    return line, col, match.group(0)[:60]


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


def _next_boundary(text: str, error_line: int) -> tuple[int, int] | None:
    """Offset and line number of the first document boundary at or after line `error_line` (0-based).

    The boundary may be the error line itself (a `---` that ends a broken flow
    collection); parsing must move forward, so offset 0 never counts.
    """
    pos = 0
    for _ in range(error_line):
        nl = text.find("\n", pos)
        if nl < 0:
            return None
        pos = nl + 1
    match = _DOC_BOUNDARY.search(text, max(pos, 1))
    if match is None:
        return None
    start = match.start()
    if text.startswith("...", start):
        # `...` ends a document; parsing resumes on the following line.
        nl = text.find("\n", start)
        if nl < 0:
            return None
        start = nl + 1
    return start, text.count("\n", 0, start)


def printable(text: str) -> tuple[str, int]:
    """`text` with the characters YAML forbids replaced by spaces, and the index of the first (or -1).

    libyaml rejects the whole stream at the first control character, reading up to
    16 KB ahead of the parser, so one stray escape code would lose the documents
    around it. One for one replacement keeps every position. The position resolver
    applies the same function, so both see the same text.
    """
    bad = _NON_PRINTABLE.search(text)
    if bad is None:
        return text, -1
    return _NON_PRINTABLE.sub(" ", text), bad.start()


def parse_text(text: str, file: str) -> FileResult:
    """Parse every document of one file; a syntax error skips only to the next `---`."""
    issues: list[Issue] = []
    documents: list[Document] = []
    original = text
    text, bad = printable(text)
    if bad >= 0:
        line, col = _line_col(text, bad)
        count = len(_NON_PRINTABLE.findall(original))
        more = f" (and {count - 1} more)" if count > 1 else ""
        issues.append(
            _issue(
                YAML_SYNTAX_ERROR,
                file,
                line,
                col,
                f"YAML error: control character U+{ord(original[bad]):04X} is not allowed{more}; read as a space",
            )
        )
    template = _template_marker(text)
    if template is not None:
        line, col, snippet = template
        issues.append(
            _issue(
                TEMPLATE_MARKERS,
                file,
                line,
                col,
                f"unrendered template marker {snippet!r}: render the chart or template first (helm template, kustomize build)",
            )
        )
    # The depth check runs on every chunk: after a syntax error parsing resumes at the next
    # `---`, and a document nested too deep for libyaml's recursive composer may follow it.
    maybe_deep = _might_nest_deeper_than_limit(text)
    shared = _uses_aliases(text)
    strings: dict[str, str] = {}
    chunk_start = 0
    line_offset = 0
    while True:
        chunk = text[chunk_start:] if chunk_start else text
        deep = _too_deep(chunk) if maybe_deep else None
        loader = LOADER(chunk)
        converter = _Converter(file, line_offset, shared, strings)
        doc_in_chunk = 0
        error: yaml.MarkedYAMLError | None = None
        try:
            while (deep is None or doc_in_chunk < deep[2]) and loader.check_node():
                node = loader.get_node()
                if node is None:
                    doc_in_chunk += 1
                    continue
                mark = node.start_mark
                ref = DocumentRef(file, chunk_start, line_offset, doc_in_chunk, line_offset + mark.line + 1, mark.column + 1)
                doc_in_chunk += 1
                try:
                    data = converter.convert_document(node)
                except _TooLarge as exc:
                    m = exc.node.start_mark
                    issues.append(
                        _issue(RESOURCE_LIMIT, file, line_offset + m.line + 1, m.column + 1, f"{exc}; document skipped")
                    )
                    continue
                except RecursionError:
                    issues.append(
                        _issue(RESOURCE_LIMIT, file, ref.line, ref.column, "document nested too deeply; document skipped")
                    )
                    continue
                documents.append(Document(ref, data))
        except yaml.MarkedYAMLError as exc:
            error = exc
        except yaml.YAMLError as exc:  # unmarked errors: rare, report at the chunk start
            issues.append(_issue(YAML_SYNTAX_ERROR, file, line_offset + 1, 1, f"YAML error: {exc}"))
        finally:
            loader.dispose()
            issues.extend(converter.issues)
        if deep is not None and error is None:
            # Documents before the deep one are loaded; it is skipped, and parsing resumes after it.
            issues.append(
                _issue(
                    RESOURCE_LIMIT,
                    file,
                    line_offset + deep[0] + 1,
                    deep[1] + 1,
                    f"nesting deeper than {MAX_DEPTH} levels; document skipped",
                )
            )
            boundary = _next_boundary(chunk, deep[0] + 1)
            if boundary is None:
                break
            chunk_start += boundary[0]
            line_offset += boundary[1]
            continue
        if error is None:
            break
        mark = error.problem_mark or error.context_mark
        err_line = mark.line if mark is not None else 0
        col = mark.column + 1 if mark is not None else 1
        problem = error.problem or error.context or "invalid YAML"
        context = f" ({error.context})" if error.context and error.problem else ""
        shown_line, col = _clamp_to_content(chunk, err_line, col)
        issues.append(_issue(YAML_SYNTAX_ERROR, file, line_offset + shown_line + 1, col, f"YAML syntax error: {problem}{context}"))
        boundary = _next_boundary(chunk, err_line)
        if boundary is None:
            break
        chunk_start += boundary[0]
        line_offset += boundary[1]
    return FileResult(documents, issues)


def load_source(source: Source) -> FileResult:
    data, problem = read_bytes(source)
    if problem is not None:
        return FileResult([], [problem])
    assert data is not None
    return load_bytes(data, source.display, keep_text=source.content is not None)


def load_bytes(data: bytes, file: str, *, keep_text: bool = False) -> FileResult:
    """Everything about one file that follows from its bytes alone (what the parse cache stores).

    `keep_text` keeps the decoded text for positions: stdin cannot be read again.
    """
    if len(data) > MAX_FILE_BYTES:
        return FileResult(
            [],
            [_issue(RESOURCE_LIMIT, file, 1, 1, f"file larger than {MAX_FILE_BYTES // (1024 * 1024)} MiB; skipped")],
        )
    text, problem = decode(data, file)
    if problem is not None:
        return FileResult([], [problem])
    assert text is not None
    result = parse_text(text, file)
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
