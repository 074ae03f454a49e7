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

import bisect
import codecs
import errno
import gc
import io
import math
import os
import re
import stat
import sys
from collections.abc import Iterator
from dataclasses import field
from typing import Any

import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from policylint.findings import Issue, Location
from policylint.input import placeholders
from policylint.input.kept import Deflated
from policylint.input.named import O_NOFOLLOW, OPEN_FLAGS, describe_mode, read_capped
from policylint.input.placeholders import Braces
from policylint.input.sources import Source
from policylint.values import frozen, record

# The C parser is required: the pure-Python one is an order of magnitude slower.
# PyYAML wheels bundle libyaml; a build without it is reported by `policylint --version`.
# libyaml's C parser when PyYAML was built with it (its wheels bundle it); otherwise the pure-Python
# loader, which gives the same documents, errors and positions, several times slower (`policylint
# --version` and a warning on stderr say so).
PARSER_IS_C: bool = bool(getattr(yaml, "__with_libyaml__", False))

# PyYAML's safe resolver, for every plain scalar: (tag, regexp) in the order it tries them, by
# the scalar's first character ("" for an empty one); the wildcard resolvers after each list.
_WILDCARD: tuple[tuple[str, re.Pattern[str]], ...] = tuple(yaml.SafeLoader.yaml_implicit_resolvers.get(None, ()))
_IMPLICIT: dict[str, tuple[tuple[str, re.Pattern[str]], ...]] = {
    first: (*resolvers, *_WILDCARD) for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items() if first is not None
}
_SCALAR_TAG = yaml.SafeLoader.DEFAULT_SCALAR_TAG
_SEQUENCE_TAG = yaml.SafeLoader.DEFAULT_SEQUENCE_TAG
_MAPPING_TAG = yaml.SafeLoader.DEFAULT_MAPPING_TAG


class _Resolve:
    """PyYAML's safe resolver (`BaseResolver.resolve`), asked only where a tag is read.

    The composer calls three resolver methods for every node: `descend_resolver` and
    `ascend_resolver`, which do nothing without path resolvers (the safe loader has none), and
    `resolve(kind, value, implicit)` for every node written without a tag. All three are C
    callables here, with no Python frame: the first two take the same arguments and do nothing
    with them (`slice`, `tuple`); `resolve` is `slice` too, so that the node keeps the question
    as its tag (`slice(kind, value, implicit)`) and `node_tag` answers it where a tag is read:
    the scalar values `_scalar` converts and the keys that may be `<<`. Keys are half the scalars
    and collections never need theirs; resolving every node in Python took a tenth of the load.
    `node_tag` gives every node the tag PyYAML gives it (tests/test_load.py compares them).
    """

    descend_resolver = staticmethod(slice)  # (parent, index) -> an unused slice
    ascend_resolver = staticmethod(tuple)  # () -> the empty tuple, unused
    resolve = staticmethod(slice)  # (kind, value, implicit) -> the question, answered by `node_tag`


def node_tag(node: Node) -> str:
    """The node's tag as PyYAML's safe loader gives it: the one written, else the implicit one its
    resolver finds (a plain scalar's by its text, by first character)."""
    # Typed `str` by PyYAML; a slice here until answered (`_Resolve`).
    tag: Any = node.tag
    if tag.__class__ is not slice:
        return str(tag)
    kind, value, implicit = tag.start, tag.stop, tag.step
    if kind is ScalarNode:
        # A scalar's `implicit` is (plain, quoted): only a plain one is resolved by its text.
        if implicit[0]:
            for resolved, regexp in _IMPLICIT.get(value[:1], _WILDCARD):
                if regexp.match(value):
                    return resolved
        return _SCALAR_TAG
    return _SEQUENCE_TAG if kind is SequenceNode else _MAPPING_TAG


def _is_merge(knode: Node) -> bool:
    """Whether a key is YAML 1.1's merge key: `!!merge` written, or the plain scalar `<<`."""
    tag: Any = knode.tag
    return (tag.__class__ is not slice or knode.value == "<<") and node_tag(knode) == _MERGE


assert not yaml.SafeLoader.yaml_path_resolvers  # what `_Resolve` leaves out


# The C callables do not have BaseResolver's signatures, which mypy compares.
class _PythonLoader(_Resolve, yaml.SafeLoader):  # type: ignore[misc]
    pass


LOADER: type[yaml.SafeLoader] | type[yaml.CSafeLoader] = _PythonLoader
if PARSER_IS_C:  # PyYAML defines CSafeLoader only when it was built with libyaml

    class _CLoader(_Resolve, yaml.CSafeLoader):  # type: ignore[misc]
        pass

    LOADER = _CLoader

# Bounds on hostile input. No file may hang policylint or take memory out of proportion to
# what it really holds; each bound below is reported as a located PL007 finding (PL001 for
# the integer range) and costs at most the document or file it is found in. None is reached
# by real manifests: files of the generated benchmark corpus (benchmarks/) hold 100
# documents, at most 836 nodes per document and 9,000 per file, and no alias. They are module
# constants so that a program embedding policylint, or a test, can change them; the parse
# cache keys its entries by `limits()`. rules/PL007-input-resource-limit.md lists them too.

# Bytes read from one file; a larger file is refused unread.
MAX_FILE_BYTES = 64 * 1024 * 1024
# Nesting of collections in one document, counted once aliases are expanded. libyaml composes
# recursively in C, so a document nested 100,000 levels deep would crash the interpreter: the
# written depth is checked with the event parser (which does not recurse) before composing,
# whenever the text could possibly be that deep; the depth aliases add, before converting.
MAX_DEPTH = 256
# Documents in one file. Each costs a parser pass, and an object or a finding: two million
# `{}` documents in a 14 MB file took a minute and 7 GB. The rest of the file is skipped.
MAX_DOCUMENTS = 10_000
# Documents skipped in one file for a syntax error or a limit. Parsing resumes at the next
# `---` after each, with a new parser (about 0.3 ms): a file of broken documents would make
# ten thousand of them. The rest of the file is skipped.
MAX_SKIPPED_DOCUMENTS = 1_000
# Nodes written in one document. The composer builds a Python node of about 300 bytes per YAML
# node before anything can look at the document (an 8 MB flow list `[1,1,...]` took 1.2 GB), so
# a document that could be larger is counted with the event parser first and skipped unread.
MAX_DOCUMENT_NODES = 250_000
# Nodes written in one file, all documents together: what the loaded data keeps of it.
MAX_FILE_NODES = 2_000_000
# Nodes and scalar characters that YAML aliases add to one file once expanded. The loaded data
# shares what aliases repeat, but whatever walks or serialises it later (rules, the parse cache,
# explain) sees it expanded: a 1 KB "billion laughs" file expands to 10^12 nodes, and one long
# string aliased 250,000 times to gigabytes.
MAX_EXPANDED_NODES = 250_000
MAX_EXPANDED_CHARS = 8 * 1024 * 1024
# Integers, whatever their form (decimal, 0x, 0o, 0b, sexagesimal, `_` separators, a sign): the
# Kubernetes API stores integer fields as int64. One that does not fit is kept as its text and
# reported (PL001); no larger int is ever built (CPython refuses to print one of more than
# 4,300 digits, and rules print numbers in their messages).
INT_MIN = -(2**63)
INT_MAX = 2**63 - 1
# The text that stands for a mapping key that is a collection (`{[1, 2]: x}`): at most this long.
MAX_KEY_TEXT = 64
_SIZE_CAP = 1 << 60  # expanded sizes saturate here: a bomb's true size can have thousands of digits


def limits() -> tuple[int, ...]:
    """Every bound above, as it is now: what loading produces depends on them."""
    return (
        MAX_FILE_BYTES,
        MAX_DEPTH,
        MAX_DOCUMENTS,
        MAX_SKIPPED_DOCUMENTS,
        MAX_DOCUMENT_NODES,
        MAX_FILE_NODES,
        MAX_EXPANDED_NODES,
        MAX_EXPANDED_CHARS,
        INT_MIN,
        INT_MAX,
        MAX_KEY_TEXT,
    )


YAML_SYNTAX_ERROR = "PL001"
DUPLICATE_KEY = "PL002"
NOT_A_MANIFEST = "PL003"
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
_NON_SPACE = re.compile(r"\S")  # whitespace as str.isspace() sees it
_DOC_BOUNDARY = re.compile(r"^(?:---|\.\.\.)(?=[ \t\r\n]|$)", re.M)
SHARED_STRING_MAX = 64
# The strings and integers the files of one run share: one object each (a port, `apiVersion`).
# One table for both: a str never equals an int, and bools (equal to 0 and 1) are not kept.
Shared = dict[Any, Any]


@frozen
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


@frozen
class Document:
    ref: DocumentRef
    data: Any


@record(slots=True)
class FileResult:
    documents: list[Document]
    issues: list[Issue]
    text: str | None = None
    # The bytes this result was parsed from (policylint.input.parallel keeps them, deflated in a
    # large run: policylint.input.kept): positions of findings are resolved in what was parsed,
    # even if the file changes on disk meanwhile.
    data: bytes | Deflated | None = field(default=None, compare=False, repr=False)
    # The parse cache's key of those bytes (None: no cache, or stdin): it names the file's
    # content, for what is kept about its objects (policylint.input.cache.VerdictStore).
    key: str | None = field(default=None, compare=False, repr=False)


class _TooLarge(Exception):
    def __init__(self, message: str, node: Node) -> None:
        super().__init__(message)
        self.node = node


def _issue(rule: str, file: str, line: int, column: int, message: str) -> Issue:
    return Issue(rule_id=rule, message=message, location=Location(file, line, column))


# Opened as every file named by configuration is (policylint.input.named): never blocking,
# never taking a terminal.
_OPEN_FLAGS = OPEN_FLAGS
_O_NOFOLLOW = O_NOFOLLOW


def read_bytes(source: Source) -> tuple[bytes | None, Issue | None]:
    """The bytes of one source, at most MAX_FILE_BYTES + 1 of them, or its PL008 issue.

    Only a regular file is read: the entry was checked when it was found (policylint.input.sources),
    and the open descriptor is checked again (fstat) before any read, since the tree may have
    changed in between.
    """
    if source.content is not None:
        return source.content, None

    def unreadable(message: str) -> tuple[None, Issue]:
        return None, _issue(UNREADABLE_FILE, source.display, 1, 1, message)

    if source.problem is not None:
        return unreadable(source.problem)
    assert source.fs_path is not None
    try:
        fd = os.open(source.fs_path, _OPEN_FLAGS | (_O_NOFOLLOW if source.nofollow else 0))
    except OSError as exc:
        if source.nofollow and exc.errno == errno.ELOOP:
            return unreadable("cannot read file: it was replaced by a symlink while policylint ran; not followed")
        return unreadable(f"cannot read file: {exc.strerror or type(exc).__name__}")
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            return unreadable(f"not a regular file: {describe_mode(st.st_mode)}; not read")
        if source.identity is not None and (st.st_dev, st.st_ino) != source.identity:
            # The symlink now leads to another file than the one checked against the roots.
            return unreadable("cannot read file: its symlink changed while policylint ran; not followed")
        return read_capped(fd, st.st_size, MAX_FILE_BYTES), None
    except OSError as exc:
        return unreadable(f"cannot read file: {exc.strerror or type(exc).__name__}")
    finally:
        os.close(fd)


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
                    UNDECODABLE_FILE,
                    file,
                    1,
                    1,
                    f"file starts with a {codec.upper()} byte order mark but is not valid {codec.upper()} ({exc.reason})",
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


class _Unrepresentable(ValueError):
    """A scalar YAML reads but the Kubernetes API cannot hold: an integer beyond int64, an infinite float."""


_INT_RANGE = "does not fit in 64 bits"
_BASE_DIGITS = {2: "01", 8: "01234567", 10: "0123456789", 16: "0123456789abcdefABCDEF"}
_MAX_DIGITS = {2: 64, 8: 22, 10: 19, 16: 16}  # significant digits of the largest int64 magnitude


def _magnitude(digits: str, base: int) -> int:
    """Unsigned digits in `base`, refused before conversion when they cannot fit in 64 bits."""
    if not digits or digits.lstrip(_BASE_DIGITS[base]):
        raise ValueError("not a valid int")
    significant = digits.lstrip("0")
    if len(significant) > _MAX_DIGITS[base]:
        raise _Unrepresentable(_INT_RANGE)
    return int(significant or "0", base)


def _int(text: str) -> int:
    """A YAML 1.1 integer in every form PyYAML reads (`construct_yaml_int`: 0b, 0x, 0 or 0o for
    octal, sexagesimal `1:30`, `_` separators, a sign), bounded to int64 as it is read."""
    value = text.replace("_", "")
    negative = value.startswith("-")
    if value.startswith(("-", "+")):
        value = value[1:]
    if value == "0":
        magnitude = 0
    elif value.startswith("0b"):
        magnitude = _magnitude(value[2:], 2)
    elif value.startswith("0x"):
        magnitude = _magnitude(value[2:], 16)
    elif value.startswith("0o"):
        magnitude = _magnitude(value[2:], 8)
    elif value.startswith("0"):
        magnitude = _magnitude(value[1:], 8)
    elif ":" in value:
        magnitude = 0
        for part in value.split(":"):
            # Most significant part first; stop as soon as it is out of range.
            magnitude = magnitude * 60 + _magnitude(part, 10)
            if magnitude > -INT_MIN:
                raise _Unrepresentable(_INT_RANGE)
    else:
        magnitude = _magnitude(value, 10)
    result = -magnitude if negative else magnitude
    if not INT_MIN <= result <= INT_MAX:
        raise _Unrepresentable(_INT_RANGE)
    return result


def _scalar(node: ScalarNode) -> Any:
    tag: Any = node.tag
    if tag.__class__ is slice:  # no tag written: resolved here, as `node_tag` does
        value = node.value
        # Most scalars: quoted, or plain with a first character no implicit tag starts with.
        if not tag.step[0] or (value[:1] not in _IMPLICIT and not _WILDCARD):
            return value
        tag = node_tag(node)
    if tag == _STR:
        return node.value
    if tag == _INT:
        value = node.value
        # The common case, a positive decimal of up to 18 digits, always fits in int64. Not one
        # with a leading 0: int("017") is 17, but YAML 1.1 (and Kubernetes) read it as octal 15.
        if len(value) < 19 and value[:1] in "123456789":
            try:
                return int(value)
            except ValueError:
                pass
        return _int(value)  # 0x1F, 0o17, 017, signs, 1_000, sexagesimal, and long numbers
    if tag == _BOOL:
        return _SAFE.bool_values[node.value.lower()]
    if tag == _NULL:
        return None
    if tag == _FLOAT:
        number = _SAFE.construct_yaml_float(node)  # linear in the text, whatever its length
        if not math.isfinite(number):
            # `.inf`, `.nan`, `1e999999`: JSON has no such numbers, so kubectl cannot send them.
            raise _Unrepresentable("not a finite number, which JSON and so the Kubernetes API cannot hold")
        return number
    # Timestamps, binary and custom tags: Kubernetes converts YAML to JSON, where these are strings.
    return node.value


def _children(node: Node) -> list[Node]:
    return node.value if node.__class__ is SequenceNode else [c for kv in node.value for c in kv]


def _plain_text(value: str, limit: int) -> str:
    """A scalar as flow YAML shows it: as is when nothing in it could be misread, else JSON-quoted."""
    if value and value.isprintable() and not any(c in value for c in " ,[]{}:#\"'&*!|>%@`"):
        return value[: limit + 1]
    import json  # only for odd keys: not worth its import on every run

    return json.dumps(value[: limit + 1], ensure_ascii=False)


def _flow_items(node: Node) -> Iterator[Node | str]:
    """The pieces of a collection's flow text, lazily: a huge collection costs what is shown."""
    if node.__class__ is SequenceNode:
        for i, child in enumerate(node.value):
            if i:
                yield ", "
            yield child
        yield "]"
        return
    for i, (key, value) in enumerate(node.value):
        if i:
            yield ", "
        yield key
        yield ": "
        yield value
    yield "}"


def flow_text(node: Node, limit: int) -> str:
    """`node` as one line of YAML flow text (`[1, 2]`, `{a: 1}`), at most `limit` characters
    (cut with `...`). Iterative and lazy: it stops at the limit, so a node built from an alias
    bomb, or one that contains itself, costs no more than a small one."""
    out: list[str] = []
    size = 0
    stack: list[Iterator[Node | str]] = [iter((node,))]
    while stack and size <= limit:
        item = next(stack[-1], None)
        if item is None:
            stack.pop()
            continue
        if isinstance(item, str):
            piece = item
        elif item.__class__ is ScalarNode:
            piece = _plain_text(item.value, limit)
        else:
            piece = "[" if item.__class__ is SequenceNode else "{"
            stack.append(_flow_items(item))
        out.append(piece)
        size += len(piece)
    text = "".join(out)
    if stack or len(text) > limit:
        text = text[: max(limit - 3, 0)] + "..."
    return text


class _Converter:
    """Node tree to Python data, reporting duplicate keys and what JSON cannot hold.

    `shared=True` is the careful mode for text that may use anchors and aliases:
    repeated nodes are converted once and shared, recursion is detected, and the
    size the document would have once expanded is bounded (billion laughs). One
    converter serves a whole file, so the alias budgets and the node count are
    the file's.
    """

    __slots__ = (
        "_active",
        "_alias_chars",
        "_alias_nodes",
        "_memo",
        "_sizes",
        "_strings",
        "file",
        "issues",
        "line_offset",
        "nodes",
        "shared",
    )

    def __init__(self, file: str, line_offset: int, shared: bool, strings: Shared | None = None) -> None:
        self.issues: list[Issue] = []
        self.file = file
        self.line_offset = line_offset
        self.shared = shared
        # Nodes converted so far, for MAX_FILE_NODES (collections count their children: the
        # hot path pays one addition per collection, not per node).
        self.nodes = 0
        # Keys and short values repeat in every object (`apiVersion`, `HTTPRoute`, group names):
        # one string object per file, or per run when the caller shares `strings`, saves memory
        # (benchmarks/, docs/performance.md).
        self._strings: Shared = {} if strings is None else strings
        self._memo: dict[Node, Any] = {}
        self._sizes: dict[Node, tuple[int, int, int]] = {}
        self._active: set[Node] = set()
        self._alias_nodes = 0  # what aliases added to the documents converted so far
        self._alias_chars = 0

    def convert_document(self, node: Node) -> Any:
        if self.shared:
            # Node ids are only unique while the previous document's nodes are alive.
            self._memo.clear()
            self._sizes.clear()
            self._active.clear()
            nodes, chars, depth, written_nodes, written_chars = self._expanded(node)
            # Only what aliases add counts: a big document written out in full (a `kind: List`
            # dump) is not a bomb, even when `&` and `*` occur in its strings.
            added_nodes = self._alias_nodes + nodes - written_nodes
            added_chars = self._alias_chars + chars - written_chars
            if added_nodes > MAX_EXPANDED_NODES:
                raise _TooLarge(f"YAML aliases expand this file by more than {MAX_EXPANDED_NODES:,} nodes (alias bomb?)", node)
            if added_chars > MAX_EXPANDED_CHARS:
                raise _TooLarge(
                    f"YAML aliases expand this file by more than {MAX_EXPANDED_CHARS:,} characters of text (alias bomb?)", node
                )
            if depth > MAX_DEPTH:
                raise _TooLarge(f"nesting deeper than {MAX_DEPTH} levels once YAML aliases are expanded", node)
            self._alias_nodes = added_nodes
            self._alias_chars = added_chars
        self.nodes += 1
        return self._convert(node)

    def _expanded(self, root: Node) -> tuple[int, int, int, int, int]:
        """The document once aliases are expanded: nodes, scalar characters and nesting depth of
        collections; then nodes and scalar characters counting each distinct node once (what is
        written). Iterative post-order walk, each distinct node once, so that neither depth nor
        cycles can hurt."""
        sizes = self._sizes
        active = self._active
        written_nodes = 0
        written_chars = 0
        stack: list[tuple[Node, bool]] = [(root, False)]
        while stack:
            node, done = stack.pop()
            key = node
            if done:
                active.discard(key)
                nodes, chars, depth = 1, 0, 0
                for child in _children(node):
                    n, c, d = sizes[child]
                    nodes += n
                    chars += c
                    if d > depth:
                        depth = d
                sizes[key] = (min(nodes, _SIZE_CAP), min(chars, _SIZE_CAP), min(depth + 1, _SIZE_CAP))
                continue
            if key in sizes:
                continue
            if node.__class__ is ScalarNode:
                length = len(node.value)
                sizes[key] = (1, length, 0)
                written_nodes += 1
                written_chars += length
                continue
            if key in active:
                raise _TooLarge("recursive YAML alias: a node contains itself", node)
            active.add(key)
            written_nodes += 1
            stack.append((node, True))
            for child in _children(node):
                if child not in sizes:
                    stack.append((child, False))
        return (*sizes[root], written_nodes, written_chars)

    def _share(self, text: str) -> str:
        # Interned, not only kept in the table: results that come back from `--jobs` workers
        # (marshalled, policylint.input.parallel) are interned again as they are read, and so
        # share these very objects instead of bringing one copy of every key per file.
        shared = self._strings[text] = sys.intern(text)
        return shared

    def _convert(self, node: Node) -> Any:
        cls = node.__class__
        if cls is ScalarNode:
            # `cls is ScalarNode`, cheaper than isinstance on this hot path, does not narrow `node`.
            try:
                value = _scalar(node)  # type: ignore[arg-type]
            except (ValueError, LookupError, ArithmeticError, TypeError) as exc:
                return self._bad_scalar(node, exc)  # type: ignore[arg-type]
            if value.__class__ is str:
                if len(value) <= SHARED_STRING_MAX:
                    shared = self._strings.get(value)
                    return shared if shared is not None else self._share(value)
            elif value.__class__ is int:
                return self._strings.setdefault(value, value)
            return value
        if self.shared:
            key = node
            if key in self._memo:
                return self._memo[key]
        if cls is SequenceNode:
            self.nodes += len(node.value)
            out_list = [self._convert(child) for child in node.value]
            if self.shared:
                self._memo[node] = out_list
            return out_list
        out: dict[str, Any] = {}
        pairs = node.value
        self.nodes += 2 * len(pairs)
        for knode, vnode in pairs:
            if knode.__class__ is ScalarNode:
                if _is_merge(knode):
                    self._merge(out, vnode)
                    continue
                # Kubernetes turns YAML into JSON: every key is a string (`1:` -> "1").
                text: str = knode.value
                k = self._strings.get(text)
                if k is None:
                    k = self._share(text)
            else:
                k = self._collection_key(knode)
            out[k] = self._convert(vnode)
        if len(out) != len(pairs):
            self._report_duplicates(pairs)
        if self.shared:
            self._memo[node] = out
        return out

    def _report(self, node: Node, rule: str, message: str) -> None:
        mark = node.start_mark
        self.issues.append(_issue(rule, self.file, self.line_offset + mark.line + 1, mark.column + 1, message))

    def _collection_key(self, knode: Node) -> str:
        """`{[1, 2]: x}`, `? [a]`: YAML allows a collection as a key, JSON (and so the Kubernetes
        API, which reads YAML as JSON) does not. The key becomes its flow text, bounded: never the
        text of its whole value, which aliases can make gigabytes long."""
        text = flow_text(knode, MAX_KEY_TEXT)
        what = "sequence" if knode.__class__ is SequenceNode else "mapping"
        self._report(
            knode,
            YAML_SYNTAX_ERROR,
            f"{_COLLECTION_KEY_MESSAGE} {what} (the Kubernetes API reads YAML as JSON,"
            f" whose keys are strings); read as the key {text!r}",
        )
        return text

    def _bad_scalar(self, node: ScalarNode, exc: Exception) -> str:
        """`!!int x`, `!!bool maybe`, a 10,000-digit number, `.inf`: keep the text, report where it is."""
        tag = node_tag(node).rsplit(":", 1)[-1]
        shown = node.value if len(node.value) <= 40 else node.value[:37] + "..."
        if isinstance(exc, _Unrepresentable):
            reason = str(exc)
        elif isinstance(exc, ValueError) and "digits" in str(exc):
            reason = "too many digits"
        else:
            reason = f"not a valid {tag}"
        self._report(node, YAML_SYNTAX_ERROR, f"YAML error: cannot read {shown!r} as !!{tag} ({reason}); it is kept as a string")
        text: str = node.value
        return text

    def _merge(self, out: dict[str, Any], vnode: Node) -> None:
        sources = vnode.value if vnode.__class__ is SequenceNode else [vnode]
        for src in sources:
            if src.__class__ is not MappingNode:
                # PyYAML refuses the document; YAML's merge key type allows only mappings here.
                self._report(
                    src,
                    YAML_SYNTAX_ERROR,
                    f"YAML error: merge key `<<` needs a mapping or a list of mappings, not {flow_text(src, 40)!r}; ignored",
                )
                continue
            value = self._convert(src)
            for k, v in value.items():
                out.setdefault(k, v)

    def _report_duplicates(self, pairs: list[tuple[Node, Node]]) -> None:
        seen: dict[str, Node] = {}
        for knode, _ in pairs:
            if knode.__class__ is not ScalarNode or _is_merge(knode):
                continue
            first = seen.get(knode.value)
            if first is None:
                seen[knode.value] = knode
                continue
            shown = knode.value if len(knode.value) <= 60 else knode.value[:57] + "..."
            self._report(
                knode,
                DUPLICATE_KEY,
                f"duplicate key {shown!r} (first defined on line {self.line_offset + first.start_mark.line + 1});"
                " the Kubernetes API rejects it and YAML tools disagree on which value wins",
            )


def _document_spans(text: str) -> Iterator[tuple[int, int]]:
    """(start, end) of each document's text, split where a line starts with `---` or `...`.

    At most MAX_DOCUMENTS + 1 spans: the last one runs to the end of the text, since the
    documents past the limit are never read (two million `{}` documents must not cost two
    million iterations here).
    """
    start = 0
    count = 0
    for match in _DOC_BOUNDARY.finditer(text):
        end = match.start()
        yield start, end
        start = end
        count += 1  # noqa: SIM113  (the count stops the loop early)
        if count > MAX_DOCUMENTS:
            break
    yield start, len(text)


def _indentation_pattern(count: int) -> re.Pattern[str]:
    """A line that starts with `count` or more characters that can each open a nesting level
    (compiled once per count by `re`'s own cache; a single character class, so linear)."""
    return re.compile(rf"^[ \t?:\-]{{{max(count, 1)},}}", re.M)


def might_nest_deeper_than_limit(text: str) -> bool:
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
        for start, end in _document_spans(text):
            brackets = max(brackets, text.count("[", start, end) + text.count("{", start, end))
            if brackets >= MAX_DEPTH:
                return True
    return _indentation_pattern(MAX_DEPTH - brackets).search(text) is not None


def _node_bound(text: str, start: int, end: int) -> int:
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


def _might_hold_more_nodes_than_limit(text: str) -> bool:
    """Whether some document could hold more than MAX_DOCUMENT_NODES nodes; free for the files
    of ordinary size (no character introduces more than three nodes)."""
    if 3 * len(text) + 1 <= MAX_DOCUMENT_NODES:
        return False
    return any(
        3 * (end - start) + 1 > MAX_DOCUMENT_NODES and _node_bound(text, start, end) > MAX_DOCUMENT_NODES
        for start, end in _document_spans(text)
    )


@frozen
class _OverLimit:
    """The first node past a limit: 0-based line and column and character index (from where
    parsing started), the number of its document from there, and which limit."""

    line: int
    column: int
    index: int
    document: int
    message: str


def _event_start(event: yaml.Event | None) -> tuple[int, int, int]:
    """The 0-based line, column and character index where a parser event starts."""
    # The parser marks every event it emits; it gives None only after the end of the stream,
    # and callers ask for a position only of an event they have just seen or peeked at.
    assert event is not None and event.start_mark is not None
    mark = event.start_mark
    return mark.line, mark.column, mark.index


def _scan(source: str | io.StringIO, depth: bool, nodes: bool) -> _OverLimit | None:
    """Exact depth and node counts with the event parser, which is a state machine: it never
    recurses and builds no node tree, so neither a deep nor a huge document can hurt it.

    Scanning stops at the first syntax error (the composer stops there too, so nothing after it
    is composed) and after MAX_DOCUMENTS documents (nothing after them is read).
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
                if depth and level > MAX_DEPTH:
                    line, column, index = _event_start(event)
                    return _OverLimit(line, column, index, doc, f"nesting deeper than {MAX_DEPTH} levels")
            elif cls is yaml.MappingEndEvent or cls is yaml.SequenceEndEvent:
                level -= 1
                continue
            elif cls is yaml.DocumentStartEvent:
                doc += 1
                if doc >= MAX_DOCUMENTS:
                    return None
                level = 0
                count = 0
                continue
            elif event is None or cls is yaml.StreamEndEvent:
                return None
            else:
                continue
            if nodes and count > MAX_DOCUMENT_NODES:
                line, column, index = _event_start(event)
                return _OverLimit(line, column, index, doc, f"more than {MAX_DOCUMENT_NODES:,} YAML nodes in one document")
    except yaml.YAMLError:
        return None  # the composer reports the syntax error with its position
    finally:
        loader.dispose()


_COLLECTION_KEY_MESSAGE = "YAML error: a mapping key must be a string, not a"


def _template_marker(text: str) -> tuple[int, int, str] | None:
    """The first template action in `text` (`_template_markers`), or None."""
    return next(_template_markers(text), None)


def _template_markers(text: str) -> Iterator[tuple[int, int, str]]:
    """Each template action `{{ ... }}` (Go templates as Helm uses them, Jinja), in text order:
    `{{`, an optional `-`, whitespace, the action on one line, whitespace, an optional `-`,
    `}}`; the whitespace next to the braces may span lines.

    Found with str methods, looking at each character a bounded number of times: the regular
    expression this replaces (`\\{\\{-?\\s*.*?\\s*-?\\}\\}`) backtracked quadratically, and `{{`
    followed by 2,000 spaces took 15 s.
    """
    pos = text.find("{{")
    last_close = text.rfind("}}")
    while 0 <= pos < last_close:
        i = pos + 2
        if text.startswith("-", i):
            i += 1
        first = _NON_SPACE.search(text, i)
        if first is None:
            return
        i = first.start()  # where the action starts
        eol = text.find("\n", i)
        if eol < 0:
            eol = len(text)
        close = text.find("}}", i, eol)
        if close >= 0:
            end = close + 2
        else:
            after = _NON_SPACE.search(text, eol)
            j = after.start() if after is not None else len(text)
            if text.startswith("}}", j):
                end = j + 2
            elif text.startswith("-}}", j):
                end = j + 3
            else:
                # Every `{{` up to the end of this line fails the same way, but for the last one
                # when only whitespace follows it: its action would start on a later line.
                last = text.rfind("{{", pos + 1, eol)
                if last >= 0:
                    rest = last + 3 if text.startswith("-", last + 2) else last + 2
                    if _NON_SPACE.search(text, rest, eol) is None:
                        pos = last
                        continue
                pos = text.find("{{", eol)
                continue
        line, col = _line_col(text, pos)
        yield line, col, text[pos:end][:60]
        pos = text.find("{{", end)


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
    match = _DOC_BOUNDARY.search(text, max(pos, after + 1))
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
        # Where each parsed document starts and ends (lines), for template markers (`_template_issue`).
        # Kept only where a marker may be: `{{ }}` templates, or placeholders in names (`_placeholder_issue`).
        text = self.text
        self.spans: list[tuple[int, int, Any]] | None = (
            []
            if "{{" in text or "${" in text or "$(" in text or "<" in text or "PLACEHOLDER_" in text or _BRACED.search(text)
            else None
        )
        # The limit checks run on every chunk: after a syntax error parsing resumes at the next
        # `---`, and a document nested too deep for libyaml's recursive composer, or too big to
        # compose, may follow it. Each scan stops where composing stops, so together they read
        # the text once.
        self.maybe_deep = might_nest_deeper_than_limit(self.text)
        self.maybe_big = _might_hold_more_nodes_than_limit(self.text)
        self.converter = _Converter(file, 0, _uses_aliases(self.text), {} if strings is None else strings)
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
            if skipped >= MAX_SKIPPED_DOCUMENTS:
                message = (
                    f"{MAX_SKIPPED_DOCUMENTS:,} documents skipped in one file (syntax errors or limits);"
                    " the rest of the file is skipped"
                )
                self.issues.append(_issue(RESOURCE_LIMIT, self.file, self.line_offset + 1, 1, message))
                break
        issues = self.issues
        if self.spans is not None:
            template = _template_issue(self.text, self.file, self.spans, issues) if "{{" in self.text else None
            if template is not None:
                issues.insert(0, template)
                issues = _without_template_keys(issues, self.text)
            else:
                placeholder = _placeholder_issue(self.text, self.file, self.spans)
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
        over = _scan(source, self.maybe_deep, self.maybe_big) if self.maybe_deep or self.maybe_big else None
        if self.stream is not None and chunk_start:
            self.stream.seek(chunk_start)
        loader = LOADER(source)
        self.converter.line_offset = self.line_offset
        error: yaml.MarkedYAMLError | None = None
        stop = False
        try:
            stop = self._documents(loader, over.document if over is not None else None)
        except yaml.MarkedYAMLError as exc:
            # Without its traceback: kept in this frame, which the traceback holds, it would be a
            # reference cycle (the command runs with the cyclic collector off).
            error = exc.with_traceback(None)
        except yaml.YAMLError as exc:  # unmarked errors: rare, report at the chunk start
            self.issues.append(_issue(YAML_SYNTAX_ERROR, self.file, self.line_offset + 1, 1, f"YAML error: {exc}"))
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
            self.issues.append(_issue(RESOURCE_LIMIT, self.file, line, column, f"{over.message}; document skipped"))
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
            if self.documents_read >= MAX_DOCUMENTS:
                stop = f"more than {MAX_DOCUMENTS:,} documents in one file"
            elif self.converter.nodes > MAX_FILE_NODES:
                stop = f"more than {MAX_FILE_NODES:,} YAML nodes in one file"
            if stop is not None:
                stop_line, stop_col, _ = _event_start(loader.peek_event())
                message = f"{stop}; the rest of the file is skipped"
                self.issues.append(_issue(RESOURCE_LIMIT, file, line_offset + stop_line + 1, stop_col + 1, message))
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
            except _TooLarge as exc:
                m = exc.node.start_mark
                self.issues.append(
                    _issue(RESOURCE_LIMIT, file, line_offset + m.line + 1, m.column + 1, f"{exc}; document skipped")
                )
                continue
            except RecursionError:
                self.issues.append(
                    _issue(RESOURCE_LIMIT, file, ref.line, ref.column, "document nested too deeply; document skipped")
                )
                continue
            self.documents.append(Document(ref, data))
            if self.spans is not None:
                self.spans.append((ref.line, line_offset + node.end_mark.line + 1, data))
        return False


def _control_character_issue(text: str, original: str, bad: int, file: str) -> Issue:
    line, col = _line_col(text, bad)
    count = len(_NON_PRINTABLE.findall(original))
    more = f" (and {count - 1} more)" if count > 1 else ""
    message = f"YAML error: control character U+{ord(original[bad]):04X} is not allowed{more}; read as a space"
    return _issue(YAML_SYNTAX_ERROR, file, line, col, message)


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
    if _NON_SPACE.search(text, at) is None:  # at the end of the input: rare, once per file
        shown_line, col = _clamp_to_content(text[chunk_start:], err_line, col)
    if _PARSER_DEPTH_LIMIT in problem:
        # libyaml 0.2.6 (bundled since PyYAML 6.0.4) refuses deep nesting itself, while scanning
        # ahead, before policylint's own scan (MAX_DEPTH) sees the events: the same resource
        # limit, found earlier, not a syntax error.
        message = f"nesting deeper than the YAML parser allows ({problem}); document skipped"
        return _issue(RESOURCE_LIMIT, file, line_offset + shown_line + 1, col, message), at
    issue = _issue(YAML_SYNTAX_ERROR, file, line_offset + shown_line + 1, col, f"YAML syntax error: {problem}{context}")
    return issue, at


# libyaml's problem text when a document nests deeper than its own limit (yaml_parser_set_max_nest_level).
_PARSER_DEPTH_LIMIT = "exceeded maximum nesting depth"


# API groups whose objects may hold template markers as values of their own: Argo Workflows
# (`{{inputs.parameters.x}}`) and the like. Every other group is decided by
# `_markers_are_own_syntax`.
def _markers_are_own_syntax(data: Any) -> bool:
    """Whether a document that parsed is an object of a kind that uses `{{ }}` as its own syntax,
    so that a marker in one of its string values is not an unrendered template (PL004).

    Kept for Gateway API, policy and core kinds (rules/PL004-unrendered-template.md): the core
    group and the built-in groups (no dot: `apps`, `batch`, `policy`), every `*k8s.io` group
    (Gateway API, `networking.k8s.io`), and every kind named `...Policy`, which is how GEP-713
    policy kinds are named; not for a mapping with neither `apiVersion` nor `kind`, which is no
    object of any kind. Decided from the document alone, so that the parse cache can keep it.
    """
    if not isinstance(data, dict):
        return False
    if "apiVersion" not in data and "kind" not in data:
        # No Kubernetes object at all (PL003 ignores it): a Grafana dashboard's `{{code}}` legend,
        # a configuration file's own placeholders. A manifest whose apiVersion or kind a template
        # writes keeps the key (`kind: "{{ .Values.kind }}"`), or breaks the YAML (unquoted).
        return True
    api_version, kind = data.get("apiVersion"), data.get("kind")
    if not isinstance(api_version, str) or not isinstance(kind, str) or not api_version or not kind:
        return False
    group = api_version.rpartition("/")[0]
    if "." not in group or group.endswith("k8s.io"):
        return False
    return not kind.endswith("Policy")


def _template_issue(text: str, file: str, spans: list[tuple[int, int, Any]], issues: list[Issue]) -> Issue | None:
    """The PL004 issue of a file: at its first template marker that is not the own syntax of the
    object it sits in (`_markers_are_own_syntax`), or None. A marker outside every parsed
    document, or on a line where YAML read it as a mapping key (`{{ x }}` unquoted), breaks the
    YAML structure and always counts."""
    broken_lines = {
        issue.location.line
        for issue in issues
        if issue.location is not None and issue.rule_id == YAML_SYNTAX_ERROR and issue.message.startswith(_COLLECTION_KEY_MESSAGE)
    }
    starts = [span[0] for span in spans]
    for line, col, snippet in _template_markers(text):
        at = bisect.bisect_right(starts, line) - 1
        inside = at >= 0 and spans[at][0] <= line <= spans[at][1]
        if inside and line not in broken_lines and _markers_are_own_syntax(spans[at][2]):
            continue
        return _issue(
            TEMPLATE_MARKERS,
            file,
            line,
            col,
            f"unrendered template marker {snippet!r}: render the chart or template first (helm template, kustomize build)",
        )
    return None


# Whether a text may hold a brace placeholder (`{VAR}`, `{{VAR}}`): an identifier between braces.
# A YAML or JSON flow mapping has a `:` or a space inside its braces, so this rarely keeps the
# document spans of a file that holds none. Linear: one character class, no nesting.
_BRACED = re.compile(r"\{[A-Za-z_][A-Za-z0-9_.\-]*\}")


# Openers and closers of the placeholders `unrendered` finds: template actions and variables.
_PLACEHOLDER_PAIRS = (("{{", "}}"), ("${", "}"), ("$(", ")"))
_MAX_PLACEHOLDERS = 16  # per value: a bound on the work, far more than a real value holds


def unrendered(value: str) -> list[str]:
    """The placeholders a value holds, in order: `{{ ... }}` (Helm, gomplate, Jinja), `${VAR}`
    (envsubst, Flux), `$(VAR)` (Kustomize vars) and `<name>` (documentation). Each is ordinary
    text in some values, so callers decide whether it matters where it stands. Linear: str
    methods only, and at most `_MAX_PLACEHOLDERS`."""
    found: list[tuple[int, str]] = []
    for opening, closing in _PLACEHOLDER_PAIRS:
        start = value.find(opening)
        while start >= 0 and len(found) < _MAX_PLACEHOLDERS:
            end = value.find(closing, start + len(opening))
            if end < 0:
                break
            found.append((start, value[start : end + len(closing)]))
            start = value.find(opening, end + len(closing))
    start = value.find("<")
    while start >= 0 and len(found) < _MAX_PLACEHOLDERS:
        end = value.find(">", start + 1)
        if end < 0:
            break
        start = value.rfind("<", start, end)  # the innermost: `a<b, <c>` holds `<c>`
        if end > start + 1:
            found.append((start, value[start : end + 1]))
        start = value.find("<", end + 1)
    out: list[str] = []
    reached = 0
    for at, text in sorted(found):
        if at >= reached:  # not inside the one before (`{{ ${x} }}`)
            out.append(text)
            reached = at + len(text)
    return out


def _placeholder_issue(text: str, file: str, spans: list[tuple[int, int, Any]]) -> Issue | None:
    """The PL004 issue of a file without `{{ }}` markers: at the first placeholder where a
    Kubernetes name is expected (`metadata.name`, a reference's `name` or `namespace`), or None."""
    for first_line, last_line, data in spans:
        first = _first_placeholder(data, braces=_brace_forms(data))
        if first is None:
            continue
        found, where = first
        line, col = first_line, 1
        lines = text.split("\n")
        for number in range(first_line, min(last_line, len(lines)) + 1):
            at = lines[number - 1].find(found)
            if at >= 0:
                line, col = number, at + 1
                break
        return _issue(
            TEMPLATE_MARKERS,
            file,
            line,
            col,
            f"unrendered placeholder {found!r} where {where} is expected: substitute it first"
            " (envsubst, kustomize replacements, your deployment tool's variables)",
        )
    return None


def _brace_forms(data: Any) -> Braces:
    """Which brace placeholders count in a document's names: none in a document that is no
    Kubernetes object (an OpenAPI file's `name: "{id}"` is its own), `{VAR}` but not `{{VAR}}` in
    an object whose kind uses `{{ }}` as its own syntax (`_markers_are_own_syntax`), both elsewhere."""
    if not isinstance(data, dict) or "apiVersion" not in data or "kind" not in data:
        return "none"
    return "single" if _markers_are_own_syntax(data) else "all"


def _first_placeholder(data: Any, *, braces: Braces) -> tuple[str, str] | None:
    """The first placeholder of a document, and what its field expects ("a Kubernetes name", "a value")."""
    found = placeholders.fields(data, braces=braces, first=True)
    if not found:
        return None
    path, text = found[0]
    return text, "a Kubernetes name" if path and path[-1] in placeholders.NAME_KEYS else "a value"


def placeholder_fields(data: Any) -> list[tuple[placeholders.PathParts, str]]:
    """The fields of a parsed document that hold a placeholder PL004 reports
    (policylint.input.placeholders), in document order."""
    return placeholders.fields(data, braces=_brace_forms(data))


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
    return _issue(
        NOT_A_MANIFEST,
        file,
        first.location.line,
        first.location.column,
        "not valid JSON (JSON with comments?) and not a Kubernetes object: not a manifest; ignored",
    )


def _without_template_keys(issues: list[Issue], text: str) -> list[Issue]:
    """One finding per cause: YAML reads `{{ .Values.x }}` as a mapping whose key is a mapping,
    so a line holding a template marker (PL004) would also get PL001 for that key."""
    lines = text.splitlines()
    out = []
    for issue in issues:
        loc = issue.location
        if (
            issue.rule_id == YAML_SYNTAX_ERROR
            and issue.message.startswith(_COLLECTION_KEY_MESSAGE)
            and loc is not None
            and 0 < loc.line <= len(lines)
            and "{{" in lines[loc.line - 1]
        ):
            continue
        out.append(issue)
    return out


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
    if len(data) > MAX_FILE_BYTES:
        return FileResult(
            [],
            [_issue(RESOURCE_LIMIT, file, 1, 1, f"file larger than {MAX_FILE_BYTES // (1024 * 1024)} MiB; skipped")],
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
