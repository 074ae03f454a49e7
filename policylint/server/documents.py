"""Positions between the engine and the editor, and what a cursor is on.

The engine counts lines from 1 and columns in characters from 1; LSP counts both from 0 and
columns in UTF-16 code units (its default position encoding, the one every client supports), so a
line with an emoji or a CJK name before the column is where the two differ. Which object and field
a cursor is on is read by composing the document again with the loader's parser, as
`policylint.input.positions` does for findings: the nodes' marks give the path.
"""

from __future__ import annotations

from collections.abc import Sequence

import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from policylint.input.load import MAX_FILE_BYTES
from policylint.input.positions import MarkLoader, PathPart
from policylint.values import frozen


@frozen
class Spot:
    """A 0-based position in LSP's terms (line, UTF-16 column)."""

    line: int
    character: int


class Lines:
    """One text's lines, for converting columns."""

    def __init__(self, text: str) -> None:
        self.lines = text.splitlines() or [""]

    def line(self, number: int) -> str:
        """Line `number` (0-based), "" past the end."""
        return self.lines[number] if 0 <= number < len(self.lines) else ""

    def to_lsp(self, line: int, column: int) -> Spot:
        """The engine's 1-based (line, character column) as LSP's 0-based (line, UTF-16 column)."""
        row = max(line - 1, 0)
        prefix = self.line(row)[: max(column - 1, 0)]
        return Spot(row, _utf16(prefix))

    def from_lsp(self, line: int, character: int) -> tuple[int, int]:
        """LSP's (line, UTF-16 column) as a 0-based (line, character column)."""
        text = self.line(line)
        units = 0
        for index, ch in enumerate(text):
            if units >= character:
                return line, index
            units += 2 if ord(ch) > 0xFFFF else 1
        return line, len(text)

    def end_of(self, line: int) -> Spot:
        """The end of the 1-based `line`'s text."""
        return Spot(max(line - 1, 0), _utf16(self.line(max(line - 1, 0))))


def _utf16(text: str) -> int:
    return len(text) + sum(1 for ch in text if ord(ch) > 0xFFFF)


@frozen
class Cursor:
    """What a 0-based (line, character) position is on: the document whose root node starts on
    `document_line` (1-based, as `DocumentRef.line`), the path of the deepest node holding the
    position, and whether it is on a mapping key (the path then names that key's value)."""

    document_line: int
    path: tuple[PathPart, ...]


def cursor_at(text: str, line: int, column: int) -> Cursor | None:
    """What is at 0-based (`line`, `column`) in `text`; None outside any document that composes
    (a half-typed document is simply not navigable until it parses) or in a file over the
    loader's size bound, which the loader did not read either."""
    if len(text) > MAX_FILE_BYTES:
        return None
    loader = MarkLoader(text)
    try:
        while loader.check_node():
            root = loader.get_node()
            if root is None:
                continue
            if _before(line, column, root.start_mark) or not _before(line, column, root.end_mark, inclusive=True):
                continue
            return Cursor(root.start_mark.line + 1, tuple(_descend(root, line, column)))
    except yaml.YAMLError:
        return None
    finally:
        loader.dispose()
    return None


def _before(line: int, column: int, mark: yaml.Mark, inclusive: bool = False) -> bool:
    if inclusive:
        return (line, column) <= (mark.line, mark.column)
    return (line, column) < (mark.line, mark.column)


def _contains(node: Node, line: int, column: int) -> bool:
    return not _before(line, column, node.start_mark) and _before(line, column, node.end_mark, inclusive=True)


def _descend(node: Node, line: int, column: int) -> list[PathPart]:
    path: list[PathPart] = []
    while True:
        if isinstance(node, MappingNode):
            nxt: Node | None = None
            for key, value in node.value:
                if not isinstance(key, ScalarNode):
                    continue
                # The key and its value: a cursor on `targetRefs:` is on the references.
                if _contains(key, line, column) or _contains(value, line, column):
                    path.append(key.value)
                    nxt = value
                    break
            if nxt is None:
                return path
            node = nxt
        elif isinstance(node, SequenceNode):
            nxt = None
            for index, item in enumerate(node.value):
                # An item starts at its content; the `- ` before it belongs to it too.
                if item.start_mark.line == line or _contains(item, line, column):
                    path.append(index)
                    nxt = item
                    break
            if nxt is None:
                return path
            node = nxt
        else:
            return path


def has_prefix(path: Sequence[PathPart], prefix: Sequence[PathPart]) -> bool:
    return len(path) >= len(prefix) and tuple(path[: len(prefix)]) == tuple(prefix)
