"""Autofix: apply the edits findings carry (`Finding.fix`) to the manifests, changing nothing else.

An edit is applied to the file's text, not by re-emitting a parsed document: the document is
composed again (PyYAML's C parser, as the loader does) to find the exact character range of the
node an edit names, and only that range is replaced. Everything else — comments, key order,
quoting, indentation, flow or block style, document separators, anchors, other documents, line
endings, the final newline and a byte order mark — stays byte for byte, whatever the file's
style; an emitter (ruamel.yaml's round trip included) normalises at least indentation and
quoting of the nodes it writes, which is the noise reviewers object to in fix diffs.

Supported edits, in block style (a fix inside a flow collection is not applied, and said so):
set a scalar (written in the original's quoting style when it can hold the value), add a key
that is missing (with any missing mappings above it, indented like its siblings), delete a
mapping key with its value, delete a list entry, add an entry at the end of a list (laid out like
the entry before it), append a document. An empty string is quoted as the file quotes its empty
strings (`""`, Gateway API's own examples' way, when it has none). Edits that overlap in one pass are applied one
at a time: the command lints again and applies what is left, a bounded number of times.
"""

from __future__ import annotations

import json
import os
import re
import stat
from collections.abc import Iterable, Sequence
from dataclasses import field
from typing import Any

import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from policylint.findings import Edit, Finding, ResolvedFix
from policylint.input.bounds import MAX_FILE_BYTES
from policylint.input.named import NamedFileError, read_named
from policylint.input.positions import parse_path
from policylint.rulecodes import matches
from policylint.textsafe import escape
from policylint.values import frozen, record

BOM = "\ufeff"


class Unfixable(Exception):
    """An edit that cannot be applied to this text (a flow collection, a path not there)."""


@record
class FilePlan:
    """The fixes to apply to one file, and what came of them."""

    path: str
    findings: list[Finding] = field(default_factory=list)
    applied: list[Finding] = field(default_factory=list)
    skipped: list[tuple[Finding, str]] = field(default_factory=list)
    original: bytes = b""
    fixed: bytes = b""


def fixable(findings: Iterable[Finding], *, unsafe: bool, only: Sequence[str] = ()) -> list[Finding]:
    """The findings whose fix this run may apply: safe ones (unsafe too with `unsafe`), of the
    rules `only` names by id or name prefix (all when empty)."""
    out = []
    for f in findings:
        if f.fix is None or f.suppression is not None or (not f.fix.safe and not unsafe):
            continue
        if only and not any(matches(code, f.rule, f.name) for code in only):
            continue
        out.append(f)
    return out


def plan(findings: Iterable[Finding]) -> list[FilePlan]:
    by_file: dict[str, FilePlan] = {}
    for f in findings:
        assert f.fix is not None
        by_file.setdefault(f.fix.file, FilePlan(f.fix.file)).findings.append(f)
    return [by_file[k] for k in sorted(by_file)]


def _read_manifest(path: str) -> bytes:
    """A manifest's bytes, read as the loader reads it (NamedFileError): a regular file, opened
    without blocking, within the loader's size bound. What was linted as a regular file may have
    been swapped for a FIFO or a device since, in the tree under review."""
    return read_named(path, what="manifest", limit=MAX_FILE_BYTES)


def apply_plan(file_plan: FilePlan) -> FilePlan:
    """Compute the fixed bytes of one file (nothing is written)."""
    try:
        data = _read_manifest(file_plan.path)
    except NamedFileError as exc:
        file_plan.skipped.extend((f, f"cannot read the file: {exc.problem}") for f in file_plan.findings)
        return file_plan
    return apply_to(file_plan, data)


def apply_to(file_plan: FilePlan, data: bytes) -> FilePlan:
    """`apply_plan` on the bytes `data` instead of the file on disk: the language server fixes the
    text an editor holds, which may not be saved yet."""
    file_plan.original = file_plan.fixed = data
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        file_plan.skipped.extend((f, "the file is not UTF-8") for f in file_plan.findings)
        return file_plan
    bom = text.startswith(BOM)
    body = text[1:] if bom else text
    from policylint.input import bounds
    from policylint.input.prescan import might_nest_deeper_than_limit

    if len(data) > bounds.MAX_FILE_BYTES or might_nest_deeper_than_limit(body):
        # Composing the whole file again must not meet what the loader refused (a document nested
        # deep enough to overflow libyaml's recursive composer, a file over the size limit).
        file_plan.skipped.extend((f, "the file is over a safety limit (PL007); fix it by hand") for f in file_plan.findings)
        return file_plan
    try:
        roots = {node.start_mark.line + 1: node for node in yaml.compose_all(body, Loader=_LOADER) if node is not None}
    except yaml.YAMLError:
        file_plan.skipped.extend((f, "the file does not parse") for f in file_plan.findings)
        return file_plan
    empty = _empty_string_style(roots.values())
    per_finding: list[tuple[Finding, list[tuple[int, int, str]]]] = []
    for f in file_plan.findings:
        assert f.fix is not None
        if any(edit.append_to is not None for edit in f.fix.edits):
            per_finding.append((f, [_appended(body, edit.value, empty) for edit in f.fix.edits]))
            continue
        root = roots.get(f.fix.document_line)
        if root is None:
            file_plan.skipped.append((f, "its document was not found again"))
            continue
        try:
            per_finding.append((f, _splices(body, root, f.fix, empty)))
        except Unfixable as exc:
            file_plan.skipped.append((f, str(exc)))
    # A finding's edits are applied together or not at all; one that overlaps an edit already
    # taken waits for the next pass (the command lints again and applies what is left).
    taken: list[tuple[int, int, str]] = []
    for f, splices in per_finding:
        if any(_overlap(s, t) for s in splices for t in taken):
            continue
        taken.extend(splices)
        file_plan.applied.append(f)
    out = body
    for start, end, replacement in sorted(taken, key=lambda s: (s[0], s[1]), reverse=True):
        out = out[:start] + replacement + out[end:]
    file_plan.fixed = ((BOM if bom else "") + out).encode("utf-8") if file_plan.applied else data
    return file_plan


def _overlap(a: tuple[int, int, str], b: tuple[int, int, str]) -> bool:
    return (a[0] < b[1] and b[0] < a[1]) or a[:2] == b[:2]


_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def _find(root: Node, parts: Sequence[Any]) -> tuple[Node | None, Node, Node | None, int]:
    """The parent collection, the node at `parts`, its key node (in a mapping), and its index in
    the parent's list of entries."""
    parent: Node | None = None
    node = root
    key_node: Node | None = None
    index = -1
    for part in parts:
        if isinstance(node, MappingNode) and isinstance(part, str):
            found = [(i, k, v) for i, (k, v) in enumerate(node.value) if isinstance(k, ScalarNode) and k.value == part]
            if not found:
                raise Unfixable(f"{part} is not in the document")
            parent, (index, key_node, node) = node, found[-1]
        elif isinstance(node, SequenceNode) and isinstance(part, int) and 0 <= part < len(node.value):
            parent, key_node, index, node = node, None, part, node.value[part]
        else:
            raise Unfixable(f"{part} is not in the document")
    return parent, node, key_node, index


def _line_start(text: str, index: int) -> int:
    return text.rfind("\n", 0, index) + 1


def _next_line(text: str, index: int) -> int:
    end = text.find("\n", index)
    return len(text) if end < 0 else end + 1


def _empty_string_style(roots: Iterable[Node]) -> str:
    """How the file quotes an empty string: `'` or `"`, whichever its quoted empty scalars use
    most (`"` on a tie or when it has none). An empty string cannot be plain (`group:` is null)."""
    counts = {'"': 0, "'": 0}
    stack: list[Node] = list(roots)
    while stack:
        node = stack.pop()
        if isinstance(node, ScalarNode):
            if node.value == "" and node.style in counts:
                counts[node.style] += 1
        elif isinstance(node, SequenceNode):
            stack.extend(node.value)
        elif isinstance(node, MappingNode):
            stack.extend(value for _, value in node.value)
    return "'" if counts["'"] > counts['"'] else '"'


def _splices(text: str, root: Node, fix: ResolvedFix, empty: str = '"') -> list[tuple[int, int, str]]:
    out = []
    newline = "\r\n" if "\r\n" in text else "\n"
    for edit in fix.edits:
        parts = list(parse_path(edit.path))
        if edit.extend:
            out.append(_extension(text, root, parts, edit.value, newline, empty))
            continue
        if not edit.delete:
            missing = _missing(root, parts)
            if missing is not None:
                out.append(_insertion(text, root, parts[:missing], parts[missing:], edit.value, newline))
                continue
        parent, node, key_node, index = _find(root, parts)
        # Deleting the only entry of a collection deletes the collection's own key too: no
        # `labels:` left holding nothing (null).
        while edit.delete and len(parts) > 1 and parent is not None and len(parent.value) == 1:
            parts.pop()
            parent, node, key_node, index = _find(root, parts)
        if parent is None:
            raise Unfixable("an edit of a whole document")
        if getattr(parent, "flow_style", False):
            raise Unfixable("the field is in a flow-style collection ({...} or [...]); fix it by hand")
        if edit.delete:
            out.append(_deletion(text, parent, node, key_node, index))
        else:
            out.append(_replacement(text, node, edit))
    return out


def _deletion(text: str, parent: Node, node: Node, key_node: Node | None, index: int) -> tuple[int, int, str]:
    """Whole lines: from the line the entry starts on to the line its next sibling starts on
    (or past the entry's last line). An entry that shares its first line with something else
    (`- name: x` where `name` is deleted from a mapping that continues) is not deleted by lines."""
    first = key_node if key_node is not None else node
    start = _line_start(text, first.start_mark.index)
    if isinstance(parent, SequenceNode):
        # The dash sits before the item on its line: the line must hold only the dash and it.
        prefix = text[start : first.start_mark.index]
        if prefix.strip() != "-":
            raise Unfixable("the list entry shares its line; fix it by hand")
    elif text[start : first.start_mark.index].strip() not in ("", "-"):
        raise Unfixable("the key shares its line with another; fix it by hand")
    if text[start : first.start_mark.index].strip() == "-" and isinstance(parent, MappingNode):
        raise Unfixable("the key starts a list entry; delete the entry instead")
    siblings = parent.value
    if index + 1 < len(siblings):
        following = siblings[index + 1]
        nxt = following[0] if isinstance(following, tuple) else following
        end = _line_start(text, nxt.start_mark.index)
    else:
        last = node.end_mark
        if last.index >= len(text):
            end = len(text)
        elif isinstance(node, MappingNode | SequenceNode) and not node.flow_style:
            # A block collection ends where the next, less indented token starts: its own lines
            # end where that token's line starts.
            end = _line_start(text, last.index)
        elif last.column == 0:
            end = last.index  # a block scalar (`|`, `>`) ends at the start of the next line
        else:
            end = _next_line(text, last.index)
    return start, max(end, start), ""


# A block sequence indented under its key (`key:` then `  - item`), as opposed to kubectl's
# indentless style (`- item` level with the key).
_INDENTED_SEQUENCE = re.compile(r"^( *)[^\s#-][^\n]*:[ \t]*\r?\n\1  - ", re.M)


def _extension(text: str, root: Node, parts: Sequence[Any], value: Any, newline: str, empty: str) -> tuple[int, int, str]:
    """`value`, a mapping of scalars, as a new last entry of the list at `parts`, laid out as the
    entry before it: its dash and key columns in block style, `{...}` after a comma in flow
    style; keys in that entry's order, each value quoted as that entry quotes the same key."""
    _, sequence, _, _ = _find(root, parts)
    if not isinstance(sequence, SequenceNode) or not sequence.value or not isinstance(value, dict):
        raise Unfixable("the list to extend is empty or not a list; add the entry by hand")
    last = sequence.value[-1]
    if not isinstance(last, MappingNode):
        raise Unfixable("the list's entries are not mappings; add the entry by hand")
    styles = {k.value: v.style for k, v in last.value if isinstance(k, ScalarNode) and isinstance(v, ScalarNode)}
    keys = [k for k in styles if k in value] + [k for k in value if k not in styles]

    def scalar(key: str) -> str:
        item = value[key]
        style = empty if item == "" else styles.get(key) if styles.get(key) in ("'", '"') else None
        return _scalar(item, style)

    fields = [f"{_scalar(key, None)}: {scalar(key)}" for key in keys]
    if sequence.flow_style:
        at = last.end_mark.index
        return at, at, ", {" + ", ".join(fields) + "}"
    if not _line_holds_only_dash(text, last):
        raise Unfixable("the list entry shares its line; add the entry by hand")
    dash = text[_line_start(text, last.start_mark.index) : last.start_mark.index]
    if last.flow_style:
        lines = [dash + "{" + ", ".join(fields) + "}"]
    else:
        lines = [dash + fields[0], *(" " * last.start_mark.column + item for item in fields[1:])]
    at = _content_end(text, last)
    prefix = newline if at == len(text) and text and not text.endswith("\n") else ""
    return at, at, prefix + newline.join(lines) + newline


def _line_holds_only_dash(text: str, node: Node) -> bool:
    """The node starts its line after a dash alone (`  - group: ...`)."""
    return text[_line_start(text, node.start_mark.index) : node.start_mark.index].strip() == "-"


def _content_end(text: str, node: Node) -> int:
    """Where the line after a block collection's last value starts: a comment below it, which
    belongs to what follows, stays below what is inserted there."""
    while isinstance(node, MappingNode | SequenceNode) and not node.flow_style and node.value:
        last = node.value[-1]
        node = last[1] if isinstance(last, tuple) else last
    end = node.end_mark
    if end.index >= len(text):
        return len(text)
    if end.column == 0:
        return end.index  # a block scalar (`|`, `>`) ends at the start of the next line
    return _next_line(text, end.index)


def _quoted_empty(value: Any, empty: str) -> Any:
    """`value` with each empty string marked for ruamel.yaml to quote with `empty`."""
    from ruamel.yaml.scalarstring import DoubleQuotedScalarString, SingleQuotedScalarString

    if value == "":
        return DoubleQuotedScalarString("") if empty == '"' else SingleQuotedScalarString("")
    if isinstance(value, dict):
        return {k: _quoted_empty(v, empty) for k, v in value.items()}
    if isinstance(value, list):
        return [_quoted_empty(v, empty) for v in value]
    return value


def _appended(text: str, document: Any, empty: str = '"') -> tuple[int, int, str]:
    """A new document at the end of the file, after a `---`, written by ruamel.yaml's emitter in
    the file's own style: its sequence indentation, its quoting of empty strings and its line
    endings."""
    import io

    from ruamel.yaml import YAML

    emitter = YAML(typ="rt")
    if _INDENTED_SEQUENCE.search(text):
        emitter.indent(mapping=2, sequence=4, offset=2)
    else:
        emitter.indent(mapping=2, sequence=2, offset=0)
    buffer = io.StringIO()
    emitter.dump(_quoted_empty(document, empty), buffer)
    newline = "\r\n" if "\r\n" in text else "\n"
    separator = "" if not text or text.endswith("\n") else newline
    return len(text), len(text), separator + "---" + newline + buffer.getvalue().replace("\n", newline)


def _missing(root: Node, parts: Sequence[Any]) -> int | None:
    """The index of the first key of `parts` absent from its mapping (None: all present)."""
    node = root
    for i, part in enumerate(parts):
        if isinstance(node, MappingNode) and isinstance(part, str):
            found = [v for k, v in node.value if isinstance(k, ScalarNode) and k.value == part]
            if not found:
                return i
            node = found[-1]
        elif isinstance(node, SequenceNode) and isinstance(part, int) and 0 <= part < len(node.value):
            node = node.value[part]
        else:
            return None
    return None


def _insertion(
    text: str, root: Node, present: Sequence[Any], keys: Sequence[Any], value: Any, newline: str
) -> tuple[int, int, str]:
    """New lines after the last entry of the block mapping at `present`: `keys` nested, the last
    holding `value`, indented like that mapping's keys."""
    _, mapping, _, _ = _find(root, present) if present else (None, root, None, -1)
    if not isinstance(mapping, MappingNode) or mapping.flow_style or not mapping.value:
        raise Unfixable("the field would go into a flow-style or empty collection; add it by hand")
    if not all(isinstance(k, str) for k in keys) or not isinstance(value, str | int | bool | float):
        raise Unfixable("only a scalar under mapping keys can be added")
    indent = mapping.value[0][0].start_mark.column
    last_value = mapping.value[-1][1]
    end = last_value.end_mark
    if isinstance(last_value, MappingNode | SequenceNode) and not last_value.flow_style:
        at = len(text) if end.index >= len(text) else _line_start(text, end.index)
    elif end.column == 0:
        at = end.index
    else:
        at = _next_line(text, end.index)
    lines = []
    for depth, key in enumerate(keys):
        name = _scalar(key, None)
        if depth == len(keys) - 1:
            lines.append(f"{' ' * (indent + 2 * depth)}{name}: {_scalar(value, None)}")
        else:
            lines.append(f"{' ' * (indent + 2 * depth)}{name}:")
    prefix = newline if at == len(text) and text and not text.endswith("\n") else ""
    return at, at, prefix + newline.join(lines) + newline


def _replacement(text: str, node: Node, edit: Edit) -> tuple[int, int, str]:
    if not isinstance(node, ScalarNode) or not isinstance(edit.value, str | int | bool | float) or edit.value is None:
        raise Unfixable("only a scalar value can be replaced")
    start, end = node.start_mark.index, node.end_mark.index
    if "\n" in text[start:end]:
        raise Unfixable("the value spans lines; fix it by hand")
    return start, end, _scalar(edit.value, node.style)


def _scalar(value: str | int | bool | float, style: str | None) -> str:
    """`value` as a YAML scalar in the original's style when that style can hold it and reads
    back as the same value; else JSON's double-quoted form, which YAML reads back as is."""
    if isinstance(value, str):
        if style == "'" and "\n" not in value:
            return "'" + value.replace("'", "''") + "'"
        if style == '"':
            return json.dumps(value, ensure_ascii=False)
        # A plain scalar: style None from PyYAML's Python loader, "" from its C loader.
        if (
            not style
            and value
            and yaml.safe_load(value) == value
            and value.strip() == value
            and "#" not in value
            and ": " not in value
        ):
            return value
        return json.dumps(value, ensure_ascii=False)
    return json.dumps(value)


class WriteRoots:
    """Where `--fix` may write: inside a directory named on the command line, or a file named
    there, by their real paths.

    A link's target is written only when it lies inside them. A file named on the command line
    is a root as named (its directory resolved, not the file): a link named `a.yaml` in the
    repository under review may point anywhere, and `policylint --fix $(git ls-files)` names it."""

    def __init__(self, paths: Iterable[str]) -> None:
        self._files: set[str] = set()
        self._directories: list[str] = []
        for path in paths:
            if path == "-":
                continue
            if os.path.isdir(path):
                real = os.path.normcase(os.path.realpath(path))
                self._directories.append(real if real.endswith(os.sep) else real + os.sep)
            else:
                absolute = os.path.abspath(path)
                directory = os.path.realpath(os.path.dirname(absolute))
                self._files.add(os.path.normcase(os.path.join(directory, os.path.basename(absolute))))

    def inside(self, real_path: str) -> bool:
        real = os.path.normcase(real_path)
        return real in self._files or any(real.startswith(d) for d in self._directories)


@frozen
class WriteTarget:
    """The file a fix of `path` writes (the manifest itself, or the target of its link), or why
    nothing may be written (`refusal`, a clause after "the file ...")."""

    path: str
    refusal: str = ""


def write_target(path: str, roots: WriteRoots) -> WriteTarget:
    """Where a fix of `path` may be written. Permissions are read, never changed: a read-only
    file or directory is refused even where they would not stop the write (as root), as `rm`
    asks before removing a write-protected file."""
    real = os.path.realpath(path)
    if not roots.inside(real):
        if os.path.islink(path):
            return WriteTarget(real, "is a symlink to a file outside the linted paths")
        return WriteTarget(real, "lies outside the linted paths (through a linked directory)")
    try:
        status = os.stat(real)
        directory = os.path.dirname(real)
        directory_status = os.stat(directory)
    except OSError as exc:
        return WriteTarget(real, f"cannot be examined: {exc.strerror or exc}")
    if not stat.S_ISREG(status.st_mode):
        return WriteTarget(real, "is not a regular file")
    if not status.st_mode & stat.S_IWUSR or not os.access(real, os.W_OK):
        return WriteTarget(real, f"is read-only (mode {stat.S_IMODE(status.st_mode):04o})")
    if not directory_status.st_mode & stat.S_IWUSR or not os.access(directory, os.W_OK | os.X_OK):
        # The fixed text is written to a new file renamed over the old one (write_atomic).
        return WriteTarget(
            real,
            f"is in a read-only directory (mode {stat.S_IMODE(directory_status.st_mode):04o}), where no file can be replaced",
        )
    return WriteTarget(real)


def write_atomic(path: str, data: bytes, expected: bytes) -> bool:
    """Replace `path` with `data` unless it no longer holds `expected` (changed since it was
    read: then it is left alone, False). Atomic (a temporary file renamed over it), mode kept.
    `path` is a regular file (write_target): renaming over a symlink would replace the link.
    Raises OSError when it cannot be written, leaving no temporary file."""
    import tempfile

    try:
        if _read_manifest(path) != expected:
            return False
        mode = os.stat(path).st_mode & 0o7777
    except (NamedFileError, OSError):
        return False
    directory = os.path.dirname(path) or "."
    fd, temporary = tempfile.mkstemp(prefix=".policylint-fix-", dir=directory)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.chmod(temporary, mode)
        os.replace(temporary, path)
    except BaseException:
        try:
            os.unlink(temporary)
        except OSError:
            pass
        raise
    return True


def unified_diff(plans: Iterable[FilePlan]) -> str:
    import difflib

    out: list[str] = []
    for p in plans:
        if p.fixed == p.original:
            continue
        before = p.original.decode("utf-8").splitlines(keepends=True)
        after = p.fixed.decode("utf-8").splitlines(keepends=True)
        # The file name comes from the input: escaped, so that no name can add a line to the diff.
        name = escape(p.path)
        out.extend(difflib.unified_diff(before, after, f"a/{name}", f"b/{name}"))
    return "".join(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in out)
