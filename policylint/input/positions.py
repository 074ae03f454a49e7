"""Field paths and their lazy resolution to 1-based line and column.

A path is written the way users read it: `spec.targetRefs[1].sectionName`,
with keys that contain dots or brackets quoted: `metadata.labels["a.b/c"]`.
Positions are not stored while loading; a finding's document is composed again
(once per file, cached) and walked along the path.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from itertools import accumulate

import yaml
from yaml.error import Mark
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

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


def join(base: str, *parts: PathPart) -> str:
    canonical = _CANONICAL.get(base)
    if canonical is None:
        canonical = format_path(parse_path(base)) == base
        if len(_CANONICAL) >= 4096:
            _CANONICAL.clear()
        _CANONICAL[base] = canonical
    if not canonical:
        return format_path([*parse_path(base), *parts])
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
class _MarkLoader(LOADER):  # type: ignore[valid-type,misc]
    """The loader's parser, for marks only: every node tagged `str` without asking the resolver.
    Positions compare keys by their text and never read tags, and resolving each scalar's tag
    is most of the time of composing a document again (a Python call per scalar)."""

    def resolve(self, kind: type, value: object, implicit: object) -> str:
        return _STR_TAG if kind is ScalarNode else _MAP_TAG if kind is MappingNode else _SEQ_TAG


_STR_TAG = "tag:yaml.org,2002:str"
_MAP_TAG = "tag:yaml.org,2002:map"
_SEQ_TAG = "tag:yaml.org,2002:seq"


_LINE_BREAK = re.compile("\r\n|[\r\n\x85\u2028\u2029]")
_OTHER_BREAKS = re.compile("[\r\x85\u2028\u2029]")
_DOCUMENT_BOUNDARY = re.compile(r"^(?:---|\.\.\.)(?=[ \t\r\n]|$)", re.M)


def _line_starts(text: str) -> list[int]:
    """Offsets where each line starts, by libyaml's line breaks."""
    if _OTHER_BREAKS.search(text) is None:
        # Only `\n`: line lengths summed in C, ten times faster on the files that have findings.
        return [0, *accumulate(map((1).__add__, map(len, text.split("\n")[:-1])))]
    return [0, *(m.end() for m in _LINE_BREAK.finditer(text))]


class PositionResolver:
    """Resolves (document, path) to a position, composing only the documents asked about.

    Each document is composed again from the line its root node starts on, which
    the loader recorded: a finding costs one document, not its whole file. Only
    documents the loader composed successfully are ever asked about, so this never
    reaches a document nested too deep for libyaml's recursive composer.
    """

    def __init__(self, read_text: Callable[[str], str | None]) -> None:
        self._read_text = read_text
        self._files: dict[str, tuple[str, list[int]] | None] = {}
        self._nodes: dict[tuple[str, int], Node | None] = {}

    def _file(self, file: str) -> tuple[str, list[int]] | None:
        if file not in self._files:
            text = self._read_text(file)
            if text is None:
                self._files[file] = None
            else:
                text = printable(text)[0]  # as the loader saw it
                self._files[file] = (text, _line_starts(text))
        return self._files[file]

    def _document_node(self, ref: DocumentRef) -> Node | None:
        key = (ref.file, ref.line)
        if key in self._nodes:
            return self._nodes[key]
        node: Node | None = None
        loaded = self._file(ref.file)
        if loaded is not None and 0 < ref.line <= len(loaded[1]):
            text, starts = loaded
            # The document ends at the next `---` or `...` line at the latest (YAML 1.2 spec
            # §9.1 "Documents"): composing from its root line up to there costs one document, not
            # the rest of the file.
            after = _DOCUMENT_BOUNDARY.search(text, starts[ref.line]) if ref.line < len(starts) else None
            loader = _MarkLoader(text[starts[ref.line - 1] : after.start() if after else len(text)])
            try:
                if loader.check_node():
                    node = loader.get_node()
            except yaml.YAMLError:
                node = None
            finally:
                loader.dispose()
        self._nodes[key] = node
        return node

    def resolve(self, ref: DocumentRef, path: str | Sequence[PathPart]) -> tuple[int, int]:
        return self.span(ref, path)[:2]

    def span(self, ref: DocumentRef, path: str | Sequence[PathPart]) -> tuple[int, int, int, int]:
        """Start line and column of what `path` names, and the end of its span (the column after
        its last character): the key and a scalar value on its line, else the key, else the rest
        of the start line; a document itself, or one that cannot be read again, is only its
        start. SARIF regions and GitHub annotations underline exactly that."""
        parts = parse_path(path) if isinstance(path, str) else path
        # A whole document is its start: its span would cost reading the file, which a finding
        # about the document (two million empty ones, say) must not.
        node = self._document_node(ref) if parts else None
        if node is None:
            return ref.line, ref.column, ref.line, ref.column
        mark, end = _walk(node, parts)
        line = ref.line + mark.line
        if end is None or end.line != mark.line:
            return line, mark.column + 1, *self._line_end(ref.file, line, mark.column + 1)
        return line, mark.column + 1, line, end.column + 1

    def _line_end(self, file: str, line: int, column: int) -> tuple[int, int]:
        """The end of line `line`'s text without trailing blanks; at least `column` (an empty
        line, or a position past the text)."""
        loaded = self._file(file)
        if loaded is None or not 0 < line <= len(loaded[1]):
            return line, column
        text, starts = loaded
        stop = starts[line] if line < len(starts) else len(text)
        content = _LINE_BREAK.sub("", text[starts[line - 1] : stop]).rstrip()
        return line, max(column, len(content) + 1)
