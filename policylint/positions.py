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

import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from policylint.load import LOADER, DocumentRef, printable, safe_document_count

PathPart = str | int
_PLAIN_KEY = re.compile(r"^[A-Za-z_$][A-Za-z0-9_$-]*$")
_TOKEN = re.compile(r'\.?([A-Za-z_$][A-Za-z0-9_$-]*)|\[(\d+)\]|\[("(?:[^"\\]|\\.)*")\]')


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


def join(base: str, *parts: PathPart) -> str:
    return format_path([*parse_path(base), *parts])


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


def _walk(node: Node, parts: Sequence[PathPart], line_offset: int) -> tuple[int, int]:
    mark = node.start_mark
    for part in parts:
        if isinstance(node, MappingNode) and isinstance(part, str):
            found = None
            for knode, vnode in node.value:
                if isinstance(knode, ScalarNode) and knode.value == part:
                    found = (knode, vnode)  # last one wins, as in the loaded data
            if found is None:
                break
            mark = found[0].start_mark
            node = found[1]
        elif isinstance(node, SequenceNode) and isinstance(part, int) and 0 <= part < len(node.value):
            node = node.value[part]
            mark = node.start_mark
        else:
            break
    return line_offset + mark.line + 1, mark.column + 1


class PositionResolver:
    """Resolves (document, path) to a position, composing each file at most once.

    A chunk is composed as far as the loader composed it: never into a document
    nested too deep for libyaml's recursive composer, which the loader skipped.
    """

    def __init__(self, read_text: Callable[[str], str | None]) -> None:
        self._read_text = read_text
        self._texts: dict[str, str | None] = {}
        self._nodes: dict[tuple[str, int], list[Node | None]] = {}

    def _chunk_nodes(self, ref: DocumentRef) -> list[Node | None]:
        key = (ref.file, ref.chunk_start)
        cached = self._nodes.get(key)
        if cached is not None:
            return cached
        if ref.file not in self._texts:
            text = self._read_text(ref.file)
            self._texts[ref.file] = printable(text)[0] if text is not None else None  # as the loader saw it
        text = self._texts[ref.file]
        nodes: list[Node | None] = []
        if text is not None:
            chunk = text[ref.chunk_start :]
            limit = safe_document_count(chunk)
            loader = LOADER(chunk)
            try:
                while (limit is None or len(nodes) < limit) and loader.check_node():
                    nodes.append(loader.get_node())
            except yaml.YAMLError:
                pass  # documents before the error are kept, as when loading
            finally:
                loader.dispose()
        self._nodes[key] = nodes
        return nodes

    def resolve(self, ref: DocumentRef, path: str | Sequence[PathPart]) -> tuple[int, int]:
        parts = parse_path(path) if isinstance(path, str) else path
        if not parts:
            return ref.line, ref.column
        nodes = self._chunk_nodes(ref)
        if ref.doc_in_chunk >= len(nodes) or nodes[ref.doc_in_chunk] is None:
            return ref.line, ref.column
        return _walk(nodes[ref.doc_in_chunk], parts, ref.line_offset)  # type: ignore[arg-type]
