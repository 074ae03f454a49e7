"""Where a field path lands in a block-style document, read once per document shape.

The documents a run reads again for its findings' positions are written from a few templates:
the 10k shared corpus's 5,959 documents with findings are 404 shapes once each line's plain
value is set aside (`  name: billing-6-route` and `  name: ads-9-route` are one line shape).
The block reader (`policylint.input.blockpaths`) answers a path from the lines' indentation,
keys and dashes, and reads nothing of such a value but where it ends: on two documents of one
shape it takes every step alike, and its answers differ only in the column where a value that
ends a span ends. So each shape's answers are kept for the run, by path, and a document of a
shape read before takes them, with a value's end taken from its own line.

A line's value is set aside (`_VALUE_LINE`) only where it is a plain scalar that reaches the
end of its line, after a simple key or a list item's dash: ASCII letters, digits and a few
punctuation characters that none of the block reader's checks looks for (no quote, bracket,
`#`, `:`, tab or other character `blockpaths._NOTEWORTHY` finds; no character past ASCII, none
that may start another node), words split by single blanks, the last character not a blank. Of
such a line the block reader reads its indentation, its key (everything up to `: `), that a
plain value starts where the value does, and where that value ends (the end of the line). The
value is written `v` in the line's shape: a line of the same indentation, key and kind of
value. Everything else of the document is kept as written, so every decision that declines a
document, and every line a search finds, is the same in its shape. A span that ends where the
shape's line ends, on a line whose value was set aside, ends where the document's line ends;
a span that runs to the end of its line is measured on the document's line.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Sequence

from policylint.input.blockpaths import Answer, PathPart
from policylint.input.blockpaths import locate as locate_lines

# A value's characters: none of `blockpaths._NOTEWORTHY`, no blank but single ones between words,
# no `:` (a key's end), `#` (a comment's start) or `,`; the first not one that starts another node
# (`-`, `?`, `!`, `&`, `*`, ...). A key is a simple one of the same characters.
_WORD = r"[A-Za-z0-9_./=+()~^;<$-]"
_VALUE = rf"[A-Za-z0-9_./=+(~^;<$]{_WORD}*(?: {_WORD}+)*"
_KEY = r"[A-Za-z0-9_][A-Za-z0-9_./-]*"
# What stays of a line whose value is set aside: its indentation, a dash, a key and its `: `.
_VALUE_LINE = re.compile(rf"( *(?:- (?:{_KEY}: )?|{_KEY}: )){_VALUE}")
# Lines whose shapes are kept at most, as the block reader's line tables keep theirs; and lines of
# the documents' shapes whose answers are kept at most (the 10k shared corpus's 404 shapes hold
# 37,195), each table then starting again: a table of shapes bounded by their number alone would
# hold thousands of the longest documents of a repository with few repeated ones.
MAX_LINES = 32_768
MAX_SHAPE_LINES = 65_536


class _LineShapes(dict[str, str]):
    """Each line's shape, by the line's text, for the run: the lines of the documents with
    findings repeat (10,314 distinct texts of the 10k shared corpus's 272,219), so a line is
    looked up in C and worked out in Python once. The shapes are interned: the many lines of
    one shape (`  name: v`) are one string, which a shape's tuple compares by identity."""

    def __missing__(self, line: str) -> str:
        found = _VALUE_LINE.fullmatch(line)
        shape = line if found is None else sys.intern(found.group(1) + "v")
        if len(self) >= MAX_LINES:
            self.clear()
        self[line] = shape
        return shape


class _Answers(dict[tuple[str, ...], dict[tuple[PathPart, ...], Answer]]):
    """A document shape's lines -> each path's answer in it (row, column, end column or None), as
    the block reader gives it on the shape's text; `lines`: the lines of the shapes held."""

    lines = 0

    def keep(self, shape: tuple[str, ...]) -> dict[tuple[PathPart, ...], Answer]:
        """A new table of answers for `shape`, kept while the lines held stay within the bound."""
        known: dict[tuple[PathPart, ...], Answer] = {}
        if len(shape) > MAX_SHAPE_LINES:
            return known
        if self.lines + len(shape) > MAX_SHAPE_LINES:
            self.clear()
            self.lines = 0
        self[shape] = known
        self.lines += len(shape)
        return known


_SHAPES = _LineShapes()
_ANSWERS = _Answers()


def locate(text: str, paths: Sequence[tuple[PathPart, ...]]) -> list[Answer] | None:
    """`blockpaths.locate(text, paths, line_ends=True)`: each path's answer, read from the
    shape of `text` (the paths its shape was asked about before are not read again); None when
    the block reader declines the document."""
    lines = text.split("\n")
    shape = tuple(map(_SHAPES.__getitem__, lines))
    known = _ANSWERS.get(shape)
    missing = list(paths) if known is None else [parts for parts in paths if parts not in known]
    if known is None or missing:
        # A shape not read yet is read whatever it is asked: the reader may decline it. One it
        # declines is not kept; another path of a shape kept may be declined.
        read = locate_lines("\n".join(shape), missing)
        if read is None:
            return None
        if known is None:
            known = _ANSWERS.keep(shape)
        known.update(zip(missing, read))
    answers: list[Answer] = []
    for parts in paths:
        row, column, end = known[parts]
        line = lines[row]
        if end is None:
            end = max(column, len(line.rstrip()))
        elif end == len(shape[row]):
            end = len(line)  # a value set aside ends its line (the same column where none was)
        answers.append((row, column, end))
    return answers
