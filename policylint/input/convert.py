"""A composed YAML node tree to plain Python data, in one tight pass, within the alias and
nesting bounds; duplicate keys and what JSON cannot hold become issues."""

from __future__ import annotations

import math
import sys
from collections.abc import Iterator
from typing import Any

import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from policylint.findings import Issue
from policylint.input import bounds
from policylint.input.document import DUPLICATE_KEY, SHARED_STRING_MAX, YAML_SYNTAX_ERROR, Shared, located_issue
from policylint.input.resolver import IMPLICIT, WILDCARD, is_merge, node_tag
from policylint.input.sharing import shared_list, shared_map

_STR = "tag:yaml.org,2002:str"
_INT = "tag:yaml.org,2002:int"
_BOOL = "tag:yaml.org,2002:bool"
_NULL = "tag:yaml.org,2002:null"
_FLOAT = "tag:yaml.org,2002:float"
_SAFE = yaml.constructor.SafeConstructor()
_SIZE_CAP = 1 << 60  # expanded sizes saturate here: a bomb's true size can have thousands of digits
COLLECTION_KEY_MESSAGE = "YAML error: a mapping key must be a string, not a"


class TooLarge(Exception):
    def __init__(self, message: str, node: Node) -> None:
        super().__init__(message)
        self.node = node


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
            if magnitude > -bounds.INT_MIN:
                raise _Unrepresentable(_INT_RANGE)
    else:
        magnitude = _magnitude(value, 10)
    result = -magnitude if negative else magnitude
    if not bounds.INT_MIN <= result <= bounds.INT_MAX:
        raise _Unrepresentable(_INT_RANGE)
    return result


def _scalar(node: ScalarNode) -> Any:
    """The value of a scalar that is not a string as written (`Converter._convert` takes those):
    a tag written, or a plain one whose text an implicit tag may claim."""
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


# The key, in a run's table of shared values, of its plain scalars as resolved (`Converter._plain`).
_PLAIN_KEY = ("plain scalars",)
# The key of its collections converted, by the text they were read from (`Converter._spans`).
_SPANS_KEY = ("collections by text",)
# The longest text of a collection kept there. On the 10k corpora nearly every repeat is shorter
# (a route rule, a port, a selector: 97% of the nodes a table without a bound finds again) while
# the long texts are the unique ones (a Gateway's spec); the bound halves what the table holds.
SPAN_MAX = 512
_UNSEEN = object()


class Converter:
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
        "_base",
        "_memo",
        "_plain",
        "_sizes",
        "_spans",
        "_strings",
        "_text",
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
        # Nodes converted so far, for bounds.MAX_FILE_NODES (collections count their children: the
        # hot path pays one addition per collection, not per node).
        self.nodes = 0
        # Keys and short values repeat in every object (`apiVersion`, `HTTPRoute`, group names):
        # one string object per file, or per run when the caller shares `strings`, saves memory
        # (benchmarks/, docs/performance.md).
        self._strings: Shared = {} if strings is None else strings
        # A plain scalar written without a tag resolves by its text alone (YAML 1.1's implicit
        # resolvers: `80`, `true`, `null`, `0777`, `nginx`), and the same few texts recur in every
        # object: each short one is resolved and converted once for the run (through `strings`),
        # not once per occurrence through the resolver's regexps. Only values that convert are
        # kept: one that cannot (`.inf`, `99999999999999999999`) is reported wherever it is.
        plain = self._strings.get(_PLAIN_KEY)
        if plain is None:
            plain = self._strings[_PLAIN_KEY] = {}
        self._plain: dict[str, Any] = plain
        # A collection's value follows from its text and its column alone where no alias can reach
        # outside it and no `%TAG` directive gives its tags another meaning (`read_from`): the
        # same ports, selectors, route rules and policy specs recur in object after object, and
        # one converted before is taken again by its text, without walking its nodes.
        spans = self._strings.get(_SPANS_KEY)
        if spans is None:
            spans = self._strings[_SPANS_KEY] = {}
        self._spans: dict[tuple[int, str], tuple[Any, int]] = spans
        self._text: str | None = None  # the text the nodes' marks index, from `_base` on
        self._base = 0
        self._memo: dict[Node, Any] = {}
        self._sizes: dict[Node, tuple[int, int, int]] = {}
        self._active: set[Node] = set()
        self._alias_nodes = 0  # what aliases added to the documents converted so far
        self._alias_chars = 0

    def read_from(self, text: str, start: int) -> None:
        """The nodes to convert next were composed from `text` read from offset `start`: their
        marks' indexes count from there (characters, as libyaml counts them). Collections are
        taken again by their text only where that text alone decides their value: not in the
        careful mode (an alias's value is its anchor's, written elsewhere), nor where a `%TAG`
        directive may make one tag mean two things in two documents, nor after a byte order
        mark, which libyaml does not count."""
        careful = self.shared or "%TAG" in text or text.startswith("\ufeff", start)
        self._text = None if careful else text
        self._base = start

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
            if added_nodes > bounds.MAX_EXPANDED_NODES:
                raise TooLarge(
                    f"YAML aliases expand this file by more than {bounds.MAX_EXPANDED_NODES:,} nodes (alias bomb?)", node
                )
            if added_chars > bounds.MAX_EXPANDED_CHARS:
                raise TooLarge(
                    f"YAML aliases expand this file by more than {bounds.MAX_EXPANDED_CHARS:,} characters of text (alias bomb?)",
                    node,
                )
            if depth > bounds.MAX_DEPTH:
                raise TooLarge(f"nesting deeper than {bounds.MAX_DEPTH} levels once YAML aliases are expanded", node)
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
                raise TooLarge("recursive YAML alias: a node contains itself", node)
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
            tag: Any = node.tag
            text: str = node.value
            if tag.__class__ is slice:  # no tag written (`resolver._Resolve`)
                # Most scalars: quoted, or plain with a first character no implicit tag starts with.
                if not tag.step[0] or (text[:1] not in IMPLICIT and not WILDCARD):
                    if len(text) <= SHARED_STRING_MAX:
                        shared = self._strings.get(text)
                        return shared if shared is not None else self._share(text)
                    return text
                if len(text) <= SHARED_STRING_MAX:
                    value = self._plain.get(text, _UNSEEN)
                    return self._resolved(node, keep=True) if value is _UNSEEN else value  # type: ignore[arg-type]
            return self._resolved(node, keep=False)  # type: ignore[arg-type]
        # A collection written before as the same text at the same column is taken from the
        # run's table (`read_from`): equal texts from the same column are read alike, since the
        # scanner's state inside a block collection follows from its own column and lines and a
        # flow collection's from its brackets. Only one whose conversion reported nothing is
        # kept (a duplicate key or a bad scalar is reported at every place it is written), with
        # the nodes it added, so that a file's bound on nodes (bounds.MAX_FILE_NODES) counts
        # what it counted before. Inline, not a method: a frame more per level of nesting would
        # make a document at the nesting bound (bounds.MAX_DEPTH) too deep for Python's stack.
        span: tuple[int, str] | None = None
        nodes = issues = 0
        if self.shared:
            key = node
            if key in self._memo:
                return self._memo[key]
        elif self._text is not None:
            start_mark = node.start_mark
            start = start_mark.index
            end = node.end_mark.index
            if end - start <= SPAN_MAX:
                base = self._base
                span = (start_mark.column, self._text[base + start : base + end])
                seen = self._spans.get(span)
                if seen is not None:
                    self.nodes += seen[1]
                    return seen[0]
                nodes, issues = self.nodes, len(self.issues)
        if cls is SequenceNode:
            self.nodes += len(node.value)
            out: Any = shared_list(self._strings, [self._convert(child) for child in node.value])
            if self.shared:
                self._memo[node] = out
        else:
            out = self._mapping(node)
        if span is not None and len(self.issues) == issues:
            self._spans[span] = (out, self.nodes - nodes)
        return out

    def _resolved(self, node: ScalarNode, *, keep: bool) -> Any:
        """A scalar's value by its tag, shared; `keep`: remembered for the run by its text (a
        plain scalar's value depends on nothing else), unless it cannot be read."""
        try:
            value = _scalar(node)
        except (ValueError, LookupError, ArithmeticError, TypeError) as exc:
            return self._bad_scalar(node, exc)
        if value.__class__ is str:
            if len(value) <= SHARED_STRING_MAX:
                shared = self._strings.get(value)
                value = shared if shared is not None else self._share(value)
        elif value.__class__ is int:
            value = self._strings.setdefault(value, value)
        if keep:
            self._plain[node.value] = value
        return value

    def _mapping(self, node: Node) -> dict[str, Any]:
        out: dict[str, Any] = {}
        pairs = node.value
        self.nodes += 2 * len(pairs)
        for knode, vnode in pairs:
            if knode.__class__ is ScalarNode:
                text: str = knode.value
                # `is_merge`'s own first test, without a call for every key.
                key_tag: Any = knode.tag  # a slice until answered (`resolver._Resolve`)
                if (text == "<<" or key_tag.__class__ is not slice) and is_merge(knode):
                    self._merge(out, vnode)
                    continue
                # Kubernetes turns YAML into JSON: every key is a string (`1:` -> "1").
                k = self._strings.get(text)
                if k is None:
                    k = self._share(text)
            else:
                k = self._collection_key(knode)
            out[k] = self._convert(vnode)
        if len(out) != len(pairs):
            self._report_duplicates(pairs)
        out = shared_map(self._strings, out)
        if self.shared:
            self._memo[node] = out
        return out

    def _report(self, node: Node, rule: str, message: str) -> None:
        mark = node.start_mark
        self.issues.append(located_issue(rule, self.file, self.line_offset + mark.line + 1, mark.column + 1, message))

    def _collection_key(self, knode: Node) -> str:
        """`{[1, 2]: x}`, `? [a]`: YAML allows a collection as a key, JSON (and so the Kubernetes
        API, which reads YAML as JSON) does not. The key becomes its flow text, bounded: never the
        text of its whole value, which aliases can make gigabytes long."""
        text = flow_text(knode, bounds.MAX_KEY_TEXT)
        what = "sequence" if knode.__class__ is SequenceNode else "mapping"
        self._report(
            knode,
            YAML_SYNTAX_ERROR,
            f"{COLLECTION_KEY_MESSAGE} {what} (the Kubernetes API reads YAML as JSON,"
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
            if knode.__class__ is not ScalarNode or is_merge(knode):
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
