"""Safe text for human-readable output: every string that came from the input goes through here.

Names, namespaces, label keys, file names and values are chosen by whoever wrote the manifests,
and the output of policylint is read by terminals, CI logs and renderers. A raw newline in a
namespace would forge a finding line or a GitHub Actions workflow command (`::error file=...::`,
which the runner reads at the start of any log line); an escape sequence (ESC, or the C1 control
CSI) would recolour the terminal, rewrite a line (CR), or set the clipboard (OSC 52) and forge a
link (OSC 8); the Unicode bidi overrides reorder what a reviewer sees (CVE-2021-42574, "Trojan
Source"); U+2028/U+2029 end lines in some viewers. This module gives the one escaping every
human-readable format uses (text findings, explain, graph labels, CLI errors, and the annotation
formats to come), and bounded renderings of arbitrary values, so that no input can make the
output unreadable or enormous.

The API:

- `escape(text, limit=None)`: one line of visible, unambiguous text. Every character in `UNSAFE`
  becomes an escape (`\\n`, `\\r`, `\\t`, `\\x1b`, `\\x9b`, `\\u2028`, `\\ud800`) and a backslash
  becomes `\\\\`, so the input is recoverable: `unescape(escape(s)) == s` for every string `s`.
  Printable text, non-ASCII letters included, is unchanged. `limit` (`MAX_FIELD` for names)
  cuts a longer text first. Escape each field, not a whole line: the reporter's own layout
  (line ends, colour codes) is added around escaped fields.
- `defuse_line(line)` / `defuse_lines(text)`: after the fields of a line have been escaped, a
  line can still *start* with `::` (a file or namespace named `::error ...`): its first colon
  becomes `\\x3a`, which `unescape` reads back as `:`. Apply it to every rendered line.
- An annotation format (GitHub `::error file=...::message`, SARIF, JUnit) escapes each field
  with `escape` first, then applies its own syntax's escaping on top (for GitHub workflow
  commands, the runner's `%25`/`%0D`/`%0A`, and `%3A`/`%2C` in properties): the result is still one
  line per annotation, whatever the input.
- `truncate(text, limit)`: at most `limit` characters, with `…` as the last one when cut.
- `json_text(value, limit)` / `short_repr(value, limit)`: a JSON (or Python-repr) rendering of any
  value, built piece by piece and stopped after `limit` characters, with a depth bound and an
  explicit stack: never the whole text of an alias-amplified value, never a RecursionError. The
  strings inside are escaped (JSON or repr escapes), so the result is safe to print as is.
- `jsonable(value, budget)`: a JSON-ready copy of a value (str keys, finite numbers, strings for
  other scalars) within a `Budget` of nodes, characters and depth; what does not fit is replaced
  by a marker string that says so.
- `json_dumps(document)`: `json.dumps` whose output is valid UTF-8 JSON: lone surrogates (file
  names that are not UTF-8) become U+FFFD, and the characters of `UNSAFE` that JSON allows raw
  (DEL, C1, U+2028, bidi controls) are written as `\\uXXXX`.

Colour codes that policylint itself emits are added by the reporters after escaping, so they
are kept.
"""

from __future__ import annotations

import itertools
import json
import math
import re
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping
from typing import Any

# C0 controls (newline, CR, ESC, BEL, ...), the backslash, DEL, C1 controls (NEL U+0085, CSI
# U+009B, OSC U+009D, ...), the Arabic letter mark, LRM/RLM, the line and paragraph separators,
# the bidi embeddings and overrides (U+202A-U+202E) and isolates (U+2066-U+2069), and lone
# surrogates (undecodable file name bytes under PEP 383's surrogateescape), which no UTF-8 stream
# can even encode.
UNSAFE = re.compile("[\\\\\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069\ud800-\udfff]")
_SHORT = {"\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t"}
_ESCAPE_SEQUENCE = re.compile(r"\\(\\|n|r|t|x[0-9a-fA-F]{2}|u[0-9a-fA-F]{4})")
# What JSON leaves raw but a terminal acts on, for JSON text meant to be printed or read by people.
_JSON_UNSAFE = re.compile("[\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]")
_SURROGATE = re.compile("[\ud800-\udfff]")

ELLIPSIS = "…"
# The longest message a finding or a note keeps (policylint.rules.engine): generous for any real
# message, and what bounds the output whatever a rule interpolates.
MAX_MESSAGE = 1_000
# The longest name, namespace or label a human-readable format shows (Kubernetes names have at
# most 253 characters): a longer one is cut, so that it cannot be repeated megabytes at a time.
MAX_FIELD = 1_000


def _escape_char(match: re.Match[str]) -> str:
    ch = match.group()
    short = _SHORT.get(ch)
    if short is not None:
        return short
    code = ord(ch)
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


def escape(text: str, limit: int | None = None) -> str:
    """`text` as one line of printable, unambiguous text (see the module docstring).

    With `limit`, a longer text is first cut to `limit` characters (`truncate`): for fields that
    are repeated on many lines (an object's name), where a name of megabytes would be repeated too.
    """
    if limit is not None and len(text) > limit:
        text = truncate(text, limit)
    if UNSAFE.search(text) is None:
        return text  # the common case: nothing to do, no copy
    return UNSAFE.sub(_escape_char, text)


def _unescape_sequence(match: re.Match[str]) -> str:
    body = match.group(1)
    if body[0] in "xu":
        return chr(int(body[1:], 16))
    return {"\\": "\\", "n": "\n", "r": "\r", "t": "\t"}[body]


def unescape(text: str) -> str:
    """The inverse of `escape` (and of `defuse_lines`): the original text."""
    return _ESCAPE_SEQUENCE.sub(_unescape_sequence, text)


def defuse_line(line: str) -> str:
    """`line` unless it would start a GitHub Actions workflow command (`::` after leading blanks)."""
    stripped = line.lstrip()
    if not stripped.startswith("::"):
        return line
    start = len(line) - len(stripped)
    return f"{line[:start]}\\x3a{line[start + 1 :]}"


def defuse_lines(text: str) -> str:
    """Every line of `text` through `defuse_line`; line ends are kept."""
    if "::" not in text:
        return text
    return "\n".join(defuse_line(line) for line in text.split("\n"))


def truncate(text: str, limit: int, ellipsis: str = ELLIPSIS) -> str:
    """At most `limit` characters: cut texts end with `ellipsis`."""
    if len(text) <= limit:
        return text
    return text[: max(limit - len(ellipsis), 0)] + ellipsis


# -- bounded renderings ------------------------------------------------------------------------

MAX_DEPTH = 64  # deeper than any real spec; values nested deeper are shown as `...`


def _json_string(text: str) -> str:
    out = json.dumps(text, ensure_ascii=False)
    if _JSON_UNSAFE.search(out) is not None or _SURROGATE.search(out) is not None:
        out = _JSON_UNSAFE.sub(lambda m: f"\\u{ord(m.group()):04x}", out)
        out = _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", out)
    return out


def _json_scalar(value: Any) -> str:
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, str):
        return _json_string(value)
    if isinstance(value, int):
        return str(int(value))
    if isinstance(value, float):
        return json.dumps(value) if math.isfinite(value) else _json_string(str(value))
    return _json_string(str(value))  # YAML timestamps and other scalars, as `default=str` would


def _repr_scalar(value: Any) -> str:
    # repr() escapes what str.isprintable() rejects: controls, separators, bidi, surrogates.
    return repr(value)


def _key_text(key: Any, style: str) -> str:
    if style == "json":
        if isinstance(key, str):
            return _json_string(key)
        if key is None or isinstance(key, bool):
            return _json_string(_json_scalar(key))
        return _json_string(str(key))
    return repr(key)


def _render(value: Any, limit: int, style: str, sort_keys: bool, max_depth: int) -> str:
    """Up to `limit` + 1 characters of the rendering of `value` (the caller cuts): an iterative
    walk that stops writing as soon as the limit is passed."""
    pieces: list[str] = []
    size = 0
    scalar = _json_scalar if style == "json" else _repr_scalar
    null = "null" if style == "json" else "None"
    # The stack holds text to write and containers to open; a container's items are pushed as a
    # lazy iterator so that a huge list costs nothing past the limit.
    stack: list[Any] = [(value, 0)]
    while stack and size <= limit:
        item = stack.pop()
        if isinstance(item, str):
            pieces.append(item)
            size += len(item)
            continue
        if isinstance(item, Iterator):
            nxt = next(item, None)
            if nxt is not None:
                stack.append(item)
                stack.extend(reversed(nxt))
            continue
        node, depth = item
        if isinstance(node, Mapping):
            if not node:
                pieces.append("{}")
                size += 2
                continue
            if depth >= max_depth:
                pieces.append("{...}")
                size += 5
                continue
            keys = sorted(node, key=str) if sort_keys else list(node)
            stack.append("}")
            stack.append(_entries(node, keys, depth + 1, style))
            stack.append("{")
        elif isinstance(node, (list, tuple)):
            if not node:
                pieces.append("[]")
                size += 2
                continue
            if depth >= max_depth:
                pieces.append("[...]")
                size += 5
                continue
            stack.append("]")
            stack.append(_items(node, depth + 1))
            stack.append("[")
        else:
            text = null if node is None else scalar(node[: limit + 1] if isinstance(node, (str, bytes)) else node)
            pieces.append(text)
            size += len(text)
    return "".join(pieces)


def _entries(node: Mapping[Any, Any], keys: list[Any], depth: int, style: str) -> Iterator[list[Any]]:
    for i, key in enumerate(keys):
        yield [*([", "] if i else []), _key_text(key, style), ": ", (node[key], depth)]


def _items(node: list[Any] | tuple[Any, ...], depth: int) -> Iterator[list[Any]]:
    for i, value in enumerate(node):
        yield [*([", "] if i else []), (value, depth)]


def _cut(text: str, limit: int) -> str:
    # The convention the explain text has always used: a cut value ends in `...`.
    return truncate(text, limit, "...")


def json_text(value: Any, limit: int = 100, *, sort_keys: bool = False, max_depth: int = MAX_DEPTH) -> str:
    """`value` as JSON text (`json.dumps` spacing), cut to `limit` characters with `...`.

    Safe to print: strings are JSON-escaped, and the characters a terminal acts on that JSON
    allows raw are written as `\\uXXXX`. Bounded in time and memory by `limit`, whatever the
    size of the value (an alias-amplified value is never written out whole)."""
    return _cut(_render(value, limit, "json", sort_keys, max_depth), limit)


def short_repr(value: Any, limit: int = 200, *, max_depth: int = MAX_DEPTH) -> str:
    """`repr(value)` for messages, cut to `limit` characters with `...`, bounded like `json_text`."""
    return _cut(_render(value, limit, "repr", False, max_depth), limit)


class Budget:
    """What `jsonable` may still copy: nodes (containers and scalars), characters of strings,
    and a depth. One budget can be shared by every value of one document."""

    __slots__ = ("chars", "max_depth", "nodes")

    def __init__(self, nodes: int = 200_000, chars: int = 4_000_000, max_depth: int = MAX_DEPTH) -> None:
        self.nodes = nodes
        self.chars = chars
        self.max_depth = max_depth


def _plain_scalar(value: Any, budget: Budget) -> Any:
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return value if math.isfinite(value) else str(value)  # NaN is not JSON
    text = value if isinstance(value, str) else str(value)
    if len(text) > budget.chars:
        kept = text[: max(budget.chars, 0)]
        budget.chars = 0
        return f"{kept}{ELLIPSIS} ({len(text) - len(kept):,} more characters)"
    budget.chars -= len(text)
    return text


def _plain_key(key: Any) -> str:
    # The keys `json.dumps` accepts become what it would write; any other key (a YAML date) its str.
    if isinstance(key, str):
        return key
    if key is None or isinstance(key, bool):
        return str(_json_scalar(key))
    return str(key)


def jsonable(value: Any, budget: Budget, *, sort_keys: bool = False, unwrap: Callable[[Any], Any] | None = None) -> Any:
    """A JSON-ready copy of `value` within `budget` (iterative, so depth cannot overflow the stack).

    `unwrap`, when given, is applied to every node before it is copied (a tagged tree's node to
    its mapping of children or its value). Past the budget, what is left is replaced by a marker
    string (`… (N more items)`, `… (nested deeper than D levels)`, `… (output budget exhausted)`)."""
    root: list[Any] = [None]
    # (source, destination container, destination key or index, depth)
    stack: list[tuple[Any, Any, Any, int]] = [(value, root, 0, 0)]
    while stack:
        node, dest, slot, depth = stack.pop()
        if unwrap is not None:
            node = unwrap(node)
        if budget.nodes <= 0:
            dest[slot] = f"{ELLIPSIS} (output budget exhausted)"
            continue
        budget.nodes -= 1
        if isinstance(node, (Mapping, list, tuple)):
            if depth >= budget.max_depth and node:
                dest[slot] = f"{ELLIPSIS} (nested deeper than {budget.max_depth} levels)"
                continue
            if isinstance(node, Mapping):
                keys = sorted(node, key=str) if sort_keys else list(node)
                out: dict[str, Any] = {}
                dest[slot] = out
                fit = keys[: max(budget.nodes, 0)]
                for key in fit:
                    out[_plain_key(key)] = None  # placeholders keep the key order
                if len(fit) < len(keys):
                    out[ELLIPSIS] = f"({len(keys) - len(fit):,} more keys)"
                for key in reversed(fit):
                    stack.append((node[key], out, _plain_key(key), depth + 1))
            else:
                items = list(node[: max(budget.nodes, 0)])
                seq: list[Any] = [None] * len(items)
                if len(items) < len(node):
                    seq.append(f"{ELLIPSIS} ({len(node) - len(items):,} more items)")
                dest[slot] = seq
                for i in range(len(items) - 1, -1, -1):
                    stack.append((items[i], seq, i, depth + 1))
            continue
        dest[slot] = _plain_scalar(node, budget)
    return root[0]


_NON_ASCII = re.compile("[^\x00-\x7f]")


def _json_escape(match: re.Match[str]) -> str:
    # What `ensure_ascii` writes: `\uXXXX`, as a surrogate pair above the Basic Multilingual Plane.
    code = ord(match.group())
    if code <= 0xFFFF:
        return f"\\u{code:04x}"
    code -= 0x10000
    return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"


def _dumps(document: Any, indent: int | None, fast: bool, newline: bool) -> str:
    """`json.dumps(document, indent=indent, ensure_ascii=False, allow_nan=False)`, then a line
    break when `newline`.

    `fast`: the document holds no floats (a report: strings, integers, booleans, null, lists,
    mappings), so orjson, when installed, writes the same bytes ten times faster (the standard
    library's encoder runs in Python whenever `indent` is set), with the line break appended as
    it writes (adding it after would copy a report of many megabytes once more). What orjson
    refuses (a lone surrogate, an integer beyond 64 bits) goes to the standard library."""
    if fast and indent == 2:
        try:
            import orjson
        except ImportError:
            pass
        else:
            option = orjson.OPT_INDENT_2 | orjson.OPT_NON_STR_KEYS | (orjson.OPT_APPEND_NEWLINE if newline else 0)
            try:
                return orjson.dumps(document, option=option).decode("utf-8")
            except (TypeError, orjson.JSONEncodeError):
                pass
    text = json.dumps(document, indent=indent, ensure_ascii=False, allow_nan=False)
    return text + "\n" if newline else text


def json_dumps(
    document: Any, *, indent: int | None = 2, ensure_ascii: bool = True, fast: bool = False, newline: bool = False
) -> str:
    """`json.dumps(document)` that is valid UTF-8 JSON and prints safely (see the module docstring);
    `fast` for a document without floats (`_dumps`); `newline` ends it with a line break."""
    text = _dumps(document, indent, fast, newline)
    if text.isascii() and "\x7f" not in text:
        # Nearly every report: no surrogate, no non-ASCII character, and of what a terminal acts
        # on only DEL is ASCII. Two scans in C instead of three regex searches, which cost three
        # times the encoding itself on a report of many megabytes.
        return text
    if _SURROGATE.search(text) is not None:
        # Only inside strings, where a lone surrogate cannot be encoded: the replacement character.
        text = _SURROGATE.sub("\ufffd", text)
    if _JSON_UNSAFE.search(text) is not None:
        text = _JSON_UNSAFE.sub(_json_escape, text)
    if ensure_ascii and not text.isascii():
        text = _NON_ASCII.sub(_json_escape, text)
    return text


# Items of a long field written per piece (`json_object_pieces`): one dump per item cost a report
# of thousands of findings a quarter more than one per batch, and a batch is a few tens of KB.
PIECE_ITEMS = 32


def json_object_pieces(
    fields: Iterable[tuple[str, Any]], *, long: Collection[str] = (), ensure_ascii: bool = True, fast: bool = False
) -> Iterator[str]:
    """The JSON object of `fields` in pieces, which joined are `json_dumps(dict(fields), indent=2,
    newline=True)`: a report of many megabytes is never one string. The value of each key in
    `long` is an iterable of items (a generator of the findings) written `PIECE_ITEMS` items a
    piece. Strings hold no line break (JSON escapes it), so indenting a piece is replacing each."""
    first = True
    for key, value in fields:
        head = ("{\n  " if first else ",\n  ") + json_dumps(key, ensure_ascii=ensure_ascii) + ": "
        first = False
        if key not in long:
            yield head + json_dumps(value, indent=2, ensure_ascii=ensure_ascii, fast=fast).replace("\n", "\n  ")
            continue
        empty = True
        items = iter(value)
        while batch := list(itertools.islice(items, PIECE_ITEMS)):
            yield (head + "[\n" if empty else ",\n") + _items_piece(batch, ensure_ascii, fast)
            empty = False
        yield head + "[]" if empty else "\n  ]"
    yield "{}\n" if first else "\n}\n"


def _items_piece(batch: list[Any], ensure_ascii: bool, fast: bool) -> str:
    """Items of a long field, each on its lines four spaces in, separated by commas."""
    text = _dumps(batch, 2, fast, False)
    if text.isascii() and "\x7f" not in text:
        # `[\n  A,\n  B\n]`: the items with the list's indent, which the object's field takes two
        # spaces deeper. Nothing to escape in it (`json_dumps`).
        return "  " + text[2:-2].replace("\n", "\n  ")
    # Escaping searches the text it is given: an item that needs it (a message with an em dash)
    # is searched alone, not with the batch around it.
    dumped = (json_dumps(item, indent=2, ensure_ascii=ensure_ascii, fast=fast) for item in batch)
    return "    " + ",\n    ".join(piece.replace("\n", "\n    ") for piece in dumped)


def mermaid_label(text: str) -> str:
    """Text for a quoted Mermaid label or edge label. Controls (a newline would end the
    statement and start one of the input's choosing) become visible escapes; then entity codes
    replace the characters Mermaid or HTML would read: the closing quote, entities, tags, an
    edge label's `|`, and the backtick that opens a Markdown string."""
    out = []
    for ch in escape(text, MAX_FIELD):
        if ch in '"#<>&;|`':
            out.append(f"#{ord(ch)};")
        else:
            out.append(ch)
    return "".join(out)
