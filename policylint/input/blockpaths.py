"""Where a field path lands in block-style YAML, read from the text without composing it.

Most manifests are written in YAML's block style: one key or list item per line, nesting by
indentation, plain or quoted scalars that end on their line. In such a document the marks
libyaml would give a key, a list item or a scalar follow from the lines alone, and reading
them costs a fraction of composing the document again (`policylint.input.positions`, which
composes what this declines). Only what can be told apart on a line is taken; a document is
declined (None) as soon as a line holds anything else, and composed as before:

- tabs, line breaks other than `\\n`, byte order marks;
- anchors, aliases, tags, complex keys (`? `), nested compact lists (`- - a`), directives;
- a quoted scalar, or a flow collection, that does not close on its line (they may continue on
  lines of any indentation); a flow collection the path goes into; an escaped double-quoted key;
- a block scalar with an explicit indentation; an item or a key whose value is a scalar
  starting on a later line, or an empty list item.

The answers are libyaml's by construction and by test: `tests/input/test_positions.py` compares every
path of every document of the tests' YAML, of the examples and of random block documents with
the marks of the composed document (`positions._walk`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

PathPart = str | int

# (line, column) of what the path names, 0-based in the document's text, and the column where
# its span ends on that line (None: the rest of the line) — `positions._walk`'s answer.
Answer = tuple[int, int, int | None]

# A line holding none of these is keys, dashes and plain scalars only, and needs no closer look:
# the characters that can start a quoted, flow, block, anchored, aliased, tagged or reserved
# node, tabs and other line breaks. (A character class: the regex engine scans for it in C.)
_NOTEWORTHY = re.compile(r"""['"\[\]{}&*!|>?%@`\t\r\x85\u2028\u2029\ufeff]""")
# The same in a text that is ASCII (nearly every one; `str.isascii` is a flag): a class of ASCII
# characters alone is one table lookup per character to the regex engine, where the three beyond
# ASCII made it test each character against them too.
_NOTEWORTHY_ASCII = re.compile(r"""['"\[\]{}&*!|>?%@`\t\r]""")
# Every ASCII character but those `_NOTEWORTHY_ASCII` finds: an ASCII text whose bytes are left with
# nothing once these are deleted holds none of them. Whether a document holds one is asked of every
# document read again; the regex engine tested each character against the class (a tenth of the
# block reader's instructions on the shared corpus), `bytes.translate` deletes by a table in C.
_QUIET_BYTES = bytes(c for c in range(128) if _NOTEWORTHY_ASCII.match(chr(c)) is None)
# A nested compact list (`- - a`) or a complex key's value (`: a`) at a line's start; searched
# from a line break (a literal first character, so the engine skips to each break in C). The
# indentation is taken whole, as an atomic group would (a lookahead and its backreference: the
# engine never gives spaces back, which cannot help, since what follows them is `-` or `:`): a
# line's indentation costs one step, not one per space it could give back.
_ODD_LINE = re.compile(r"\n(?=( *))\1(?:- +)*(?:- +-|:)(?: |\n)")
_UNSAFE = re.compile("[\t\r\x85\u2028\u2029\ufeff]")
# The line breaks other than `\n` libyaml counts (YAML 1.1 spec §5.4 "Line Break Characters"), beyond
# ASCII.
_OTHER_BREAKS = re.compile("[\x85\u2028\u2029]")
_BLOCK_HEADER = re.compile(r"[|>][+-]?(?: +#.*)? *$")
# Indicators that cannot start a plain scalar or a simple key and that this reader does not take
# apart (YAML 1.2 spec §5.3 "Indicator Characters"): anchors, aliases, tags, reserved, closers.
_NOT_TAKEN = frozenset("&*!%@`]},")

# A value's kinds on its line.
_EMPTY, _PLAIN, _QUOTED, _FLOW, _BLOCK = range(5)


class _Declined(Exception):
    """Raised where the text holds something this reader does not take apart."""


def _quoted_end(line: str, col: int) -> int:
    """The column after a quoted scalar that starts at `col` and closes on the line."""
    quote = line[col]
    at = col + 1
    while True:
        close = line.find(quote, at)
        if close < 0:
            raise _Declined  # continues on a later line
        if quote == "'":
            if line.startswith("'", close + 1):
                at = close + 2  # '' is an escaped quote
                continue
            return close + 1
        backslashes = 0
        while line[close - 1 - backslashes] == "\\":
            backslashes += 1
        if backslashes % 2:
            at = close + 1
            continue
        return close + 1


def _after(line: str, col: int) -> bool:
    """Nothing but blanks and a comment from `col` on."""
    rest = line[col:].lstrip(" ")
    return not rest or rest[0] == "#"


def _value(line: str, col: int) -> tuple[int, int]:
    """The kind of the value written at `col` and the column after it on this line (for an
    empty one, `col`)."""
    if col >= len(line) or line[col] == "#":
        return _EMPTY, col
    first = line[col]
    if first in "'\"":
        end = _quoted_end(line, col)
        if not _after(line, end):
            raise _Declined
        return _QUOTED, end
    if first in "[{":
        depth = 0
        for at in range(col, len(line)):
            char = line[at]
            if char in "'\"#":
                raise _Declined
            if char in "[{":
                depth += 1
            elif char in "]}":
                depth -= 1
                if depth == 0:
                    if not _after(line, at + 1):
                        raise _Declined
                    return _FLOW, at + 1
        raise _Declined  # continues on a later line
    if first in "|>":
        if _BLOCK_HEADER.match(line, col) is None:
            raise _Declined  # an explicit indentation, or not a header
        return _BLOCK, col
    if first in _NOT_TAKEN or (first in "-?:" and (col + 1 == len(line) or line[col + 1] == " ")):
        raise _Declined
    cut = line.find(" #", col)
    return _PLAIN, len(line[col : len(line) if cut < 0 else cut].rstrip(" ")) + col


def _key(line: str, col: int) -> tuple[str, int, int] | None:
    """The simple key written at `col`: (its text as libyaml reads it, the column after it, the
    column after its `:`); None if the line holds no key there."""
    first = line[col] if col < len(line) else ""
    if first in ("'", '"'):
        end = _quoted_end(line, col)
        at = end
        while line.startswith(" ", at):
            at += 1
        if not line.startswith(":", at) or not (at + 1 == len(line) or line[at + 1] == " "):
            return None
        raw = line[col + 1 : end - 1]
        if first == '"':
            if "\\" in raw:
                raise _Declined
            text = raw
        else:
            text = raw.replace("''", "'")
        return text, end, at + 1
    if not first or first == "#" or first in _NOT_TAKEN or first in "[{|>":
        return None
    if first in "-?:" and (col + 1 == len(line) or line[col + 1] == " "):
        return None
    at = col
    while True:
        sep = line.find(":", at)
        if sep < 0:
            return None
        if sep + 1 == len(line) or line[sep + 1] == " ":
            break
        at = sep + 1
    comment = line.find(" #", col, sep)
    if comment >= 0:
        return None
    text = line[col:sep].rstrip(" ")
    return text, col + len(text), sep + 1


# A key's line taken apart where the key stands (`_pair`): the key's text, the column after it and
# after its `:`, then the column of what follows, that value's kind and the column after it on the
# line (`_value`; `_NOT_READ`: a value this reader declines, raised only where the path reads it).
Pair = tuple[str, int, int, int, int, int]
_NOT_READ = -1
_DECLINED: Pair = ("", -1, -1, -1, _NOT_READ, -1)  # a key this reader declines


class _Pairs(dict[tuple[str, int], "Pair | None"]):
    """`_pair`'s answers by (line, column), for the run, as `_LineIndents` keeps the lines'
    indentation: the lines of the documents with findings repeat (`  - name: http`,
    `    backendRefs:`), and a path's steps take apart the keys' lines of each mapping they go
    through (the root's and `metadata`'s, `spec`'s, a rule's), each a few string searches in
    Python. At most `MAX_LINES` kept, then it starts again."""

    def __missing__(self, at: tuple[str, int]) -> Pair | None:
        line, col = at
        found: Pair | None
        try:
            key = _key(line, col)
        except _Declined:
            found = _DECLINED
        else:
            if key is None:
                found = None
            else:
                value_col = _skip(line, key[2])
                try:
                    kind, end = _value(line, value_col)
                except _Declined:
                    kind, end = _NOT_READ, value_col
                found = (*key, value_col, kind, end)
        if len(self) >= MAX_LINES:
            self.clear()
        self[at] = found
        return found


def _pair(line: str, col: int) -> Pair | None:
    """The key written at `col` and the value after it on its line (`Pair`); None if the line
    holds no key there: `_key` and `_value` worked out once per line and column for the run."""
    found = _PAIRS[(line, col)]
    if found is _DECLINED:
        raise _Declined
    return found


def _skip(line: str, col: int) -> int:
    while line.startswith(" ", col):
        col += 1
    return col


def _is_dash(line: str, col: int) -> bool:
    return line.startswith("-", col) and (col + 1 == len(line) or line[col + 1] == " ")


def _after_dash(line: str, dash: int) -> int:
    """The column of what is written after the list item's dash at `dash` (a nested compact list,
    `- - a`, is not taken apart)."""
    start = _skip(line, dash + 1)
    if _is_dash(line, start):
        raise _Declined
    return start


# A line that is blank, or only a comment: past any line's indentation, so that the least of a run
# of lines' values is the least indentation of their content (`min` in C, `_find_nested_key`).
_BLANK = 1 << 30
_COMMENT = _BLANK + 1
# A line `_ODD_LINE` finds (`_LineIndents`): its document is declined, so its indentation is never read.
_ODD = _BLANK + 2
# Lines whose answer `_LineIndents` keeps at most; past it the table starts again.
MAX_LINES = 32_768


class _LineIndents(dict[str, int]):
    """Each line's indentation (`_BLANK`, `_COMMENT`: neither; `_ODD`: a line `_ODD_LINE` finds),
    by the line's text, for the run. The documents a run reads again are its findings' documents,
    whose lines repeat (`  - name: http`, `spec:`): the 272,219 lines of the 10k shared corpus's
    5,959 documents with findings are 10,314 distinct texts. Looked up in C (`map` of
    `__getitem__`), a line whose answer is kept costs a hash and a probe, where working it out
    cost a Python step, and the search of `_ODD_LINE` through every document is made once per
    distinct line. `__missing__` works out a line not seen yet, and what `_check` finds on it
    when it holds a character `_NOTEWORTHY_ASCII` finds (`_NOTED`); `starts` counts the times
    the table started again, when `_NOTED` did too."""

    starts = 0

    def __missing__(self, line: str) -> int:
        rest = line.lstrip(" ")
        if not rest:
            indent = _BLANK
        elif rest[0] == "#":
            indent = _COMMENT  # neither blank nor a comment can be an odd line: it needs `-` or `:`
        elif _ODD_LINE.match("\n" + line + "\n") is not None:
            # As `_ODD_LINE.search` over the whole text finds it on this line, which a `\n` ends.
            indent = _ODD
        else:
            indent = len(line) - len(rest)
        if len(self) >= MAX_LINES:
            self.clear()
            _NOTED.clear()
            self.starts += 1
        self[line] = indent
        first = _NOTEWORTHY_ASCII.search(line)
        if first is not None:
            _NOTED[line] = (indent, *_look(line, indent, first.start()))
        return indent


# What `_check` finds on a line that holds a character `_NOTEWORTHY_ASCII` finds, by the line's
# text, for the run (`_LineIndents` fills and empties it): the indentation it was worked out for,
# then `_look`'s answer. An ASCII document none of whose lines is here needs no closer look; one
# with such lines is checked from their answers (`_check_noted`), where its text was searched by
# the regex engine, a character class tested for every character, and each such line taken apart
# again: on the shared corpus nearly every one of them is the same `- group: ''`.
_NOTED: dict[str, tuple[int, bool, int, int]] = {}

# `_look`'s verdicts on a line: nothing to decline, declined, a block scalar's header.
_FINE, _REFUSED, _HEADER = range(3)


def _look(line: str, indent: int, first: int) -> tuple[bool, int, int]:
    """What `_check` finds on one line of indentation `indent` whose first character it looks at
    is at `first`: whether that is a quote that starts the line's content (a quoted key
    `_find_nested_key` does not look for, or at column 0 `_find_root_key`), the verdict
    (`_FINE`, `_REFUSED`, `_HEADER`) and, for a block scalar's header, the column of the key
    or dash it belongs to (its content is the lines after it indented deeper)."""
    quoted = indent < _BLANK and line[first] in "'\"" and first == indent
    if indent >= _BLANK:
        return quoted, _FINE, 0  # a comment
    if _UNSAFE.search(line):
        return quoted, _REFUSED, 0
    col, parent = indent, indent
    try:
        if _is_dash(line, col):
            col = _after_dash(line, col)
        key = _key(line, col)
        if key is not None:
            parent = col
            col = _skip(line, key[2])
        kind, _ = _value(line, col)
    except _Declined:
        return quoted, _REFUSED, 0
    return quoted, (_HEADER if kind == _BLOCK else _FINE), parent


_INDENTS = _LineIndents()
_PAIRS = _Pairs()


class _Doc:
    """A document's text, its lines and, for each, its indentation (`_BLANK`, `_COMMENT`:
    neither; `_ODD`: the document is declined, `odd`); whether a line at column 0 starts with a
    quote, and whether any line does (`_check` tells, the only lines that can); whether what
    `_check` finds on each of its lines is in `_NOTED` (`noted`: the table did not start again
    while they were looked up)."""

    __slots__ = ("indents", "lines", "noted", "odd", "quoted_key", "quoted_root", "text")

    def __init__(self, text: str) -> None:
        self.text = text
        self.quoted_root = False
        self.quoted_key = False
        lines = self.lines = text.split("\n")
        starts = _INDENTS.starts
        indents = self.indents = list(map(_INDENTS.__getitem__, lines))
        self.noted = _INDENTS.starts == starts
        if indents[-1] == _ODD and _ODD_LINE.match("\n" + lines[-1]) is None:
            # The text's last line, which no `\n` ends (`_LineIndents` reads every line as ended):
            # `_ODD_LINE` needs a blank or a break after its `:` or dash.
            rest = lines[-1].lstrip(" ")
            indents[-1] = len(lines[-1]) - len(rest)
        # Whether some line holds what `_ODD_LINE` finds: a nested compact list or a complex key's value.
        self.odd = _ODD in indents

    def content(self, at: int) -> int:
        """The first line from `at` on that is neither blank nor only a comment."""
        indents = self.indents
        while at < len(indents) and indents[at] >= _BLANK:
            at += 1
        return at


def _block_end(doc: _Doc, row: int, parent: int) -> int:
    """The first line after a block scalar's header on line `row` that is not its content: its
    content is the lines after it indented deeper than `parent`, and blank ones."""
    lines, indents = doc.lines, doc.indents
    skip = row + 1
    while skip < len(lines):
        deep = indents[skip]
        if deep == _COMMENT:
            deep = len(lines[skip]) - len(lines[skip].lstrip(" "))
        if deep != _BLANK and deep <= parent:
            break
        skip += 1
    return skip


def _take(doc: _Doc, row: int, quoted: bool, verdict: int, parent: int, skip: int) -> int:
    """`_check`'s step on line `row`, given what `_look` found on it: the line before which the
    lines are a block scalar's content (`skip`, as it was or moved past this line's)."""
    if quoted:
        doc.quoted_key = True
        if doc.indents[row] == 0:
            doc.quoted_root = True
    if row < skip or doc.indents[row] >= _BLANK:
        return skip  # block scalar content, or a comment
    if verdict == _REFUSED:
        raise _Declined
    return _block_end(doc, row, parent) if verdict == _HEADER else skip


def _check(text: str, doc: _Doc, noteworthy: re.Pattern[str] = _NOTEWORTHY) -> None:
    """Decline a document whose lines hold what this reader does not take apart (see the
    module's doc): only the lines holding a `_NOTEWORTHY` character are looked at (`noteworthy`:
    that regexp, or one that finds the same in this text)."""
    lines, indents = doc.lines, doc.indents
    row, line_start = 0, 0  # the line of the last match looked at, and its offset
    checked = 0  # matches before this offset are on lines already looked at
    skip = 0  # lines before this one are a block scalar's content
    for match in noteworthy.finditer(text):
        at = match.start()
        if at < checked:
            continue
        row += text.count("\n", line_start, at)
        line_start = text.rfind("\n", 0, at) + 1
        end = text.find("\n", at)
        checked = len(text) if end < 0 else end + 1
        skip = _take(doc, row, *_look(lines[row], indents[row], at - line_start), skip)


def _check_noted(doc: _Doc) -> None:
    """`_check` of an ASCII document whose lines' answers are all in `_NOTED`: the lines found
    there, in order, each with its kept answer (worked out again for a line whose indentation
    in this document is not the one it was kept for: a last line no `\n` ends)."""
    indents = doc.indents
    skip = 0
    for row, line in enumerate(doc.lines):
        noted = _NOTED.get(line)
        if noted is not None:
            indent = indents[row]
            if noted[0] == indent:
                skip = _take(doc, row, noted[1], noted[2], noted[3], skip)
            else:
                first = _NOTEWORTHY_ASCII.search(line)
                assert first is not None
                skip = _take(doc, row, *_look(line, indent, first.start()), skip)


class _Node:
    """A node of the document as far as the path needs it: its kind, where it starts, and for
    collections the column its keys or dashes stand at."""

    __slots__ = ("col", "end", "indentless", "kind", "line")

    def __init__(self, kind: str, line: int, col: int, end: int | None = None, indentless: bool = False) -> None:
        self.kind = kind  # "map", "seq", "scalar" or "null" (end: on its line, or None), "flow"
        self.line = line
        self.col = col
        self.end = end
        self.indentless = indentless


def _below(doc: _Doc, line: int, parent: int, after: int, item: bool = False) -> _Node:
    """The node that starts on a later line than `line` as the value of a key (or, `item`, of a
    dash) standing at column `parent`, whose indicator ends at column `after`. libyaml marks an
    empty value where its indicator ends (`yaml_parser_process_empty_scalar`)."""
    at = doc.content(line + 1)
    if at == len(doc.lines):
        return _Node("null", line, after, after)
    text, indent = doc.lines[at], doc.indents[at]
    if indent < parent:
        return _Node("null", line, after, after)
    if indent == parent:
        if not item and _is_dash(text, indent):
            return _Node("seq", at, indent, indentless=True)
        return _Node("null", line, after, after)
    if _is_dash(text, indent):
        return _Node("seq", at, indent)
    if _pair(text, indent) is not None:
        return _Node("map", at, indent)
    raise _Declined  # a scalar on a line of its own


def _scalar(doc: _Doc, line: int, col: int, kind: int, end: int, block: int) -> _Node:
    """A value written on `line` at `col`, in a block whose indentation is `block`."""
    if kind == _FLOW:
        return _Node("flow", line, col)
    if kind == _BLOCK:
        return _Node("scalar", line, col)  # its content is on later lines
    if kind == _PLAIN:
        # A plain scalar goes on while the next lines are indented deeper than its block and do
        # not start a comment (libyaml's `yaml_parser_scan_plain_scalar`).
        indents = doc.indents
        at = line + 1
        while at < len(indents) and indents[at] == _BLANK:
            at += 1
        if at < len(indents) and block < indents[at] < _BLANK:
            return _Node("scalar", line, col)
    return _Node("scalar", line, col, end)


def _value_node(doc: _Doc, line: int, key_col: int, pair: Pair) -> _Node:
    """The value of the key `pair` at column `key_col` of `line`."""
    _, _, colon_end, value_col, kind, end = pair
    if kind == _NOT_READ:
        raise _Declined
    if kind == _EMPTY:
        return _below(doc, line, key_col, colon_end)
    return _scalar(doc, line, value_col, kind, end, key_col)


def _find_key(doc: _Doc, node: _Node, name: str) -> tuple[int, int, Pair] | None:
    """(line, key column, its line taken apart) of the last key `name` of a block mapping (the
    loaded data keeps the last of duplicate keys)."""
    lines, indents = doc.lines, doc.indents
    col = node.col
    if name and name[0] not in _NOT_ROOT_FAST:
        if col == 0 and node.line == 0 and not doc.quoted_root:
            return _find_root_key(doc, name)
        if not doc.quoted_key and "\n" not in name:
            return _find_nested_key(doc, node, name)
    found = None
    at = node.line
    count = len(indents)
    while True:
        text = lines[at]
        # Only a line starting with the name, or with a quote, can hold it: the others are keys
        # of this mapping (a line at its keys' indentation is one, in a document libyaml read).
        if text.startswith(name, col) or text[col] in "'\"":
            key = _pair(text, col)
            if key is None:
                raise _Declined
            if key[0] == name:
                found = (at, col, key)
        # The next key of this mapping: skip deeper lines, blank ones, comments, and the items
        # of a list written at the keys' own indentation (the previous key's value). The loop
        # every line of the mapping goes through: each indentation read once, and a dash told
        # (`_is_dash`) without a call.
        at += 1
        while at < count:
            indent = indents[at]
            if indent == col:
                line = lines[at]
                if not (line.startswith("- ", col) or (len(line) == col + 1 and line[col] == "-")):
                    break
            elif indent < col:
                return found
            at += 1
        if at == count:
            return found


# The first characters of a name `_find_root_key` does not look for by its text: one that may
# start a dash, a comment or a quoted key, or a blank or a break (a name holding a break further
# on is the key of no line, found by the text as by the lines).
_NOT_ROOT_FAST = frozenset("-#'\" \n")


def _find_root_key(doc: _Doc, name: str) -> tuple[int, int, Pair] | None:
    """`_find_key` in a mapping that starts at the document's first line and column 0: it runs to
    the document's end, and its keys are the lines that start at column 0 (a comment starts with
    `#`, the items of a list written at column 0 with a dash, and nothing else can: a block scalar's
    or a plain scalar's lines are indented deeper than their key, and a quoted scalar or a flow
    collection that goes on to another line is declined). The lines that start with the name are
    found by searching the text (in C), where going through the mapping's lines read every line
    of the document for each path (most paths start from the root: `metadata.name`, `spec`).
    As there, each is taken apart as a key, and the last whose text is the name is the one."""
    text, lines = doc.text, doc.lines
    needle = "\n" + name
    found = None
    row, offset = 0, 0  # a line and where it starts in the text
    start = 0 if text.startswith(name) else (text.find(needle) + 1 or -1)  # the next line that starts with it
    while start >= 0:
        row += text.count("\n", offset, start)
        offset = start
        key = _pair(lines[row], 0)
        if key is None:
            raise _Declined
        if key[0] == name:
            found = (row, 0, key)
        start = text.find(needle, start) + 1 or -1
    return found


def _find_nested_key(doc: _Doc, node: _Node, name: str) -> tuple[int, int, Pair] | None:
    """`_find_key` in any block mapping, where no line starts with a quote: its keys are its lines
    at its column, from its first line (which may start with a dash, its item's) to the first line
    of content indented less. After that first line, the only lines that can hold the key are those
    that start with the name at the mapping's column, found by searching the text (in C), as
    `_find_root_key` finds a root key; a line found is the mapping's while no line of content
    between it and the mapping's first is indented less (the least of their indentations, in C:
    a blank line's and a comment's are past any), and the first line found past the mapping ends
    the search. Going through the mapping's lines
    cost a Python step per line of each mapping a path goes through (`spec`, a rule), where most
    of the document's lines are. A name is never a blank, a dash, a comment or a quote
    (`_NOT_ROOT_FAST`), nor holds a break, so a line found starts at the mapping's column."""
    lines, col = doc.lines, node.col
    found = None
    first = node.line
    line = lines[first]
    if line.startswith(name, col) or line[col] in "'\"":  # a quote after an item's dash
        key = _pair(line, col)
        if key is None:
            raise _Declined
        if key[0] == name:
            found = (first, col, key)
    row = first + 1  # the lines before this one are the mapping's
    indents, text = doc.indents, doc.text
    needle = "\n" + " " * col + name
    at = text.find(needle)
    candidate, brk = 1, 0  # a line, and the break before it or one before that
    while at >= 0:
        candidate += text.count("\n", brk, at)  # the line after the break found
        brk = at
        if candidate >= row:
            if candidate > row and min(indents[row:candidate]) < col:
                return found  # the mapping ended before it
            key = _pair(lines[candidate], col)
            if key is None:
                raise _Declined
            if key[0] == name:
                found = (candidate, col, key)
            row = candidate + 1
        at = text.find(needle, at + 1)
    return found


def _find_item(doc: _Doc, node: _Node, index: int) -> _Node | None:
    """Item `index` of a block sequence, or None past its end.

    The sequence's items are its lines at its dashes' column; the lines between are deeper,
    blank or comments, and a line indented less ends it. Each next line at that column is found
    in C (`list.index` on the lines' indentation), and the lines skipped are told to be all
    deeper by their least indentation (`min` in C, as `_find_nested_key` does): going through
    them one at a time cost a Python step for every line of every item before the one asked
    for (a route's rules, their backends)."""
    lines, indents = doc.lines, doc.indents
    col = node.col
    count = len(indents)
    seen = -1
    at = node.line
    if at < count and indents[at] != col:
        # Not a line at the dashes' column (a sequence starts on one): the lines up to the first
        # that is, as the loop below reads those after each item.
        try:
            nxt = indents.index(col, at)
        except ValueError:
            nxt = count
        if min(indents[at:nxt]) < col:
            return None
        at = nxt
    while at < count:
        text = lines[at]
        if not _is_dash(text, col):
            if node.indentless:
                return None
            raise _Declined
        seen += 1
        if seen == index:
            start = _after_dash(text, col)
            if start >= len(text) or text[start] == "#":
                item = _below(doc, at, col, col + 1, item=True)
                if item.kind == "null":
                    raise _Declined  # an empty item: its mark is the next token's
                return item
            if _pair(text, start) is not None:
                return _Node("map", at, start)
            kind, end = _value(text, start)
            return _scalar(doc, at, start, kind, end, col)
        try:
            nxt = indents.index(col, at + 1)
        except ValueError:
            nxt = count
        if nxt > at + 1 and min(indents[at + 1 : nxt]) < col:
            return None  # a line indented less ends the sequence before the next item
        at = nxt
    return None


def locate(text: str, paths: Sequence[Sequence[PathPart]], line_ends: bool = False) -> list[Answer] | None:
    """Where each path lands in a document whose text starts on its root's line, as
    `positions._walk` finds it in the composed document; None when the text is not plain
    block style (see the module's doc). `line_ends`: a span that runs to the end of its line
    ends where the line's text does without trailing blanks (at least at its start), rather
    than None, so that the caller need not find that line in the file."""
    # Lines are counted by `\n` here, and libyaml counts every break: a `\r` in a comment or in a
    # block scalar, which the line checks skip, would put every later line one off.
    if "\r" in text or not (text.isascii() or _OTHER_BREAKS.search(text) is None):
        return None
    doc = _Doc(text)
    try:
        if doc.odd:
            raise _Declined
        if text.isascii():
            if doc.noted:
                if not _NOTED.keys().isdisjoint(doc.lines):
                    _check_noted(doc)
            elif text.encode("ascii").translate(None, _QUIET_BYTES):
                _check(text, doc, _NOTEWORTHY_ASCII)
        elif _NOTEWORTHY.search(text) is not None:
            _check(text, doc, _NOTEWORTHY)
        first = doc.lines[0]
        if first.startswith(("---", "...", "%")) or doc.indents[0] >= _BLANK:
            raise _Declined
        indent = doc.indents[0]
        if _is_dash(first, indent):
            root = _Node("seq", 0, indent)
        elif _pair(first, indent) is not None:
            root = _Node("map", 0, indent)
        else:
            raise _Declined
        steps: dict[tuple[int, int, PathPart], _Step] | None = {} if len(paths) > 1 else None
        answers = [_locate(doc, root, parts, steps) for parts in paths]
    except _Declined:
        return None
    if line_ends:
        lines = doc.lines
        answers = [(row, col, max(col, len(lines[row].rstrip())) if end is None else end) for row, col, end in answers]
    return answers


# A step of a walk: from the node at (line, column) along one part, to the node it names, its
# mark and the end of its span; None where the part names nothing.
_Step = tuple[_Node, tuple[int, int], int | None] | None


def _locate(doc: _Doc, node: _Node, parts: Sequence[PathPart], steps: dict[tuple[int, int, PathPart], _Step] | None) -> Answer:
    """Where `parts` lands; `steps` (a document's other paths) holds each step already taken from a
    node, so that paths that share a beginning (`spec.rules[2]`, `spec.rules[4]`) take it once."""
    mark = (node.line, node.col)
    end: int | None = None
    for part in parts:
        if steps is not None:
            known = (node.line, node.col, part)
            if known in steps:
                step = steps[known]
                if step is None:
                    return (*mark, None)
                node, mark, end = step
                continue
        if node.kind == "map" and isinstance(part, str):
            found = _find_key(doc, node, part)
            if found is None:
                step = None
            else:
                line, key_col, pair = found
                step = (_value_node(doc, line, key_col, pair), (line, key_col), pair[1])
        elif node.kind == "seq" and isinstance(part, int) and part >= 0:
            item = _find_item(doc, node, part)
            step = None if item is None else (item, (item.line, item.col), None)
        elif node.kind == "flow":
            raise _Declined  # its content is not taken apart
        else:
            step = None
        if steps is not None:
            steps[known] = step
        if step is None:
            return (*mark, None)
        node, mark, end = step
    if node.kind in ("scalar", "null") and node.end is not None and node.line == mark[0]:
        end = node.end
    return (*mark, end)
