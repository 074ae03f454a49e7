"""The directed part search's index kept between processes (policylint.semantics.directed).

The first hook run on a new commit finds its part (policylint.incremental.summaries) by indexing
who reads whom over every object of the repository, from every file's outline: a third of what
that run spends past its fixed costs at 10,000 objects, for a change of one file
(docs/performance.md, "The hook's first run after one value changed: the directed index kept
between processes"). The index of the run before, whose staged files are this run's base, is the
same but for the files that changed since.

So the index is kept in the parse cache's directory, under its trust rules (policylint.input.cache:
outside the checkout, this user's, behind one checksum, checked on reading), named by the working
directory, the code, the default namespace and whether the objects are in input order. It holds
what it describes, file by file: each file's name, content key, how many objects it holds and
whether each of its kinds is cluster-scoped (`Roster.file_rows`, what every object's key and
place are a function of); every object's name, namespace and kind; who reads whom
(`directed.Readers`); the first object of each kind in the index's order; the classes the
Gateways name; and, one line per file, its objects' references. A run whose files are the same
names, counts and kinds' scopes takes it, and patches the files whose content keys differ
(`_Graph.patch`: each object taken out of the nodes its kept references read and reading its
new ones), where their objects' names, namespaces and kinds are the kept ones; anything else
(a file added, removed or renamed, an object renamed) is no use of it, and the search runs as
before, writing the index anew. Only a file that changed is read (its outline), and only the
objects the part reaches are looked at: the seeds, closures and context are read off the index
(`_Graph.seeds`, `_context`).

It is kept only where the directed search decides alone: no host of a service registry (the
run's `hosts` empty), no reference across every namespace, no class joined to its Gateways
(`PartGraph.classes_apart`). A patch that could change one of those (a changed object naming a
class a Gateway names, bearing one's name, a Gateway naming another class, a selector of the
cluster-scoped objects) is no use of it either.

An entry damaged, of another layout, whose parts are not what `_write` makes (lengths, types,
places out of range) is a miss. Patched by more than a sixteenth of the files, it is written
again for the run's files; the search's part is the same objects and members as the search from
nothing gives (tests/incremental/test_kept_index.py compares them on random edits).
"""

from __future__ import annotations

import hashlib
import json
import os
from bisect import bisect_right
from collections.abc import Iterable, Mapping, Sequence
from itertools import chain
from typing import TYPE_CHECKING, Any

from policylint.semantics import components, directed
from policylint.semantics.components import Scoped
from policylint.semantics.namerefs import EVERYWHERE, Reference
from policylint.semantics.partgraph import outline_of

if TYPE_CHECKING:
    from policylint.input.cache import ParseCache
    from policylint.k8s.objects import ObjectKey
    from policylint.k8s.roster import Outline, Roster
    from policylint.semantics.partgraph import PartGraph

# Bump when an entry's layout or meaning changes.
FORMAT = 1
_INDEX = "directed index of a scoped run"
# The entry is written again once more than this share of the files differ from what it holds.
_STALE = 1 / 16


# What the entry is named by besides the directory: the run's default namespace, whether the
# objects are in input order, the kinds whose objects declare hosts of a service registry and
# their field (`components.scope`'s `hosts`).
Made = tuple[str, bool, Mapping[tuple[str, str], str]]


class Undecided:
    """The kept index cannot answer this search (`scope`): the search runs as before."""


UNDECIDED = Undecided()


def entry_name(cache: ParseCache, made: Made) -> str:
    """The entry of the working directory's index, for a run of this default namespace, order
    and kinds of a service registry's objects (`made`)."""
    from policylint.incremental.memo import code_stamp

    default_namespace, in_input_order, hosts = made
    shape = [default_namespace, in_input_order, sorted([*kind, field] for kind, field in hosts.items())]
    stamp = FORMAT.to_bytes(2, "big") + code_stamp() + _dumps(shape) + b"\x00" + os.fsencode(os.getcwd())
    return cache.named(_INDEX, stamp)


def scope(
    cache: ParseCache,
    roster: Roster,
    rows: list[list[object]],
    origin_files: frozenset[str],
    removed: Sequence[ObjectKey],
    made: Made,
) -> Scoped | Undecided | None:
    """`components.scope`'s answer for these objects with the search directed, from the kept
    index patched for the files that differ from it; UNDECIDED where it cannot be had so."""
    name = entry_name(cache, made)
    kept = _read(cache, name, rows)
    if kept is None:
        return UNDECIDED
    starts = roster.starts()
    patched: dict[int, tuple[list[Reference], list[Reference]]] = {}
    outlines: dict[int, Outline] = {}
    for f in kept.differ:
        outline = outlines[f] = outline_of(roster.files[f][1])
        old = _references(kept.lines[f], rows[f][2])
        if old is None or not kept.takes(outline, starts[f]) or _declares(roster.files[f][1], outline, made[2]):
            return UNDECIDED
        for i, (was, now) in enumerate(zip(old, outline.references)):
            if was != now:
                patched[starts[f] + i] = (was, now)
    graph = directed._Graph.restored(kept.names, kept.namespaces, kept.kinds, kept.readers)
    try:
        graph.patch(patched)
    except (KeyError, ValueError):
        return UNDECIDED  # readers that do not hold what the kept references read: not what `_write` makes
    firsts = kept.firsts_now(graph, roster, starts)
    if len(kept.differ) > _STALE * len(rows):
        lines = [_dumps(outlines[f].references) if f in outlines else line for f, line in enumerate(kept.lines)]
        _write(cache, name, rows, graph, firsts, kept.named, lines)
    return _searched(graph, roster, starts, origin_files, removed, firsts, outlines)


def remember(cache: ParseCache, graph: PartGraph, rows: list[list[object]], made: Made) -> None:
    """Keep the directed index `graph`'s last search built, where it is that of `rows`' files and
    the search was directed (the module docstring)."""
    index = graph.directed.graph
    if index is None or graph.everywhere or graph.hosts or len(index.names) != sum(n for _, _, n, _ in _rows(rows)):
        return
    file_refs = graph.file_refs()
    if (
        index.names != graph.names()
        or index.namespaces != graph.namespaces()
        or index.kinds != graph.kinds()
        or list(index.refs) != list(chain.from_iterable(file_refs))
    ):
        return  # the index of another search (a declined one kept the last)
    if not graph.classes_apart():
        return
    lines = [_dumps(refs) for refs in file_refs]
    _write(cache, entry_name(cache, made), rows, index, sorted(graph.firsts()), graph.named_classes(), lines)


def _declares(objects: Sequence[Any], outline: Outline, hosts: Mapping[tuple[str, str], str]) -> bool:
    """Whether an object of a changed file declares a host of a service registry (`PartGraph.hosts`:
    the search declines), read as the part graph reads it."""
    for i, kind in enumerate(outline.kinds):
        field = hosts.get(kind)
        value = objects[i].spec.get(field) if field is not None else None
        if type(value) is list and any(type(host) is str for host in value):
            return True
    return False


def _rows(rows: list[list[object]]) -> Iterable[tuple[Any, Any, int, Any]]:
    return ((row[0], row[1], row[2], row[3]) for row in rows)  # type: ignore[misc]


def _searched(
    graph: directed._Graph,
    roster: Roster,
    starts: list[int],
    origin_files: frozenset[str],
    removed: Sequence[ObjectKey],
    firsts: list[int],
    outlines: dict[int, Outline],
) -> Scoped | Undecided | None:
    """`components.scope`'s directed answer over the patched index (its declines, shares and
    context, read off the index)."""
    origins = [
        i
        for f, (file, objects) in enumerate(roster.files)
        if file in origin_files
        for i in range(starts[f], starts[f] + len(objects))
    ]
    namespaces, kinds = graph.namespaces, graph.kinds
    # A cluster-scoped origin but a Namespace reaches what no name traces (`components.scope`).
    if any(namespaces[i] is None and kinds[i][1] != "Namespace" for i in origins) or any(
        k.namespace is None and k.kind != "Namespace" for k in removed
    ):
        return None
    found = directed.searched(graph, origins, removed)
    if found is None:
        return UNDECIDED  # declined: the sets answer it
    members, analysed = found
    n = len(roster)
    if len(members) > components.MAX_SHARE * n:
        return None

    def refs_of(i: int) -> list[Reference]:
        f = bisect_right(starts, i) - 1
        outline = outlines.get(f)
        if outline is None:
            outline = outlines[f] = outline_of(roster.files[f][1])
        return outline.references[i - starts[f]]

    keep = _context(graph, sorted(analysed), refs_of, firsts)
    if len(keep) > components.MAX_SHARE * n:
        return None
    built = {i: roster[i] for i in keep}
    return Scoped(list(built.values()), frozenset(built[i].key for i in members), keep)


def _context(graph: directed._Graph, analysed: list[int], refs_of: Any, firsts: list[int]) -> list[int]:
    """`components._Found.context` of the analysed objects, from the index: every object of the
    namespaces they live in or name and every cluster-scoped object (`in_namespace`), every
    object bearing a name one of their references finds nowhere (`defined`), one object of each
    kind."""
    defined, namespaces_of = graph.defined, graph.namespaces
    namespaces: set[str | None] = {None}
    referenced: set[str] = set()
    for i in analysed:
        namespaces.add(namespaces_of[i])
        for ref in refs_of(i):
            namespaces.add(ref.namespace)
            if (ref.namespace, ref.name) not in defined:
                referenced.add(ref.name)
    keep = set(analysed) | set(firsts)
    for namespace in namespaces:
        keep.update(graph.in_namespace.get(namespace, ()))
    if referenced:
        for (_, name), places in defined.items():
            if name in referenced:
                keep.update(places)
    return sorted(keep)


class _Kept:
    """An entry read and checked against the run's files (`_read`)."""

    def __init__(self, header: dict[str, Any], lines: list[bytes], differ: list[int], kinds: list[tuple[str, str]]) -> None:
        self.names: list[str] = header["names"]
        self.namespaces: list[str | None] = header["namespaces"]
        self.kinds = kinds
        self.named: set[str] = set(header["named"])
        self.firsts: list[int] = header["firsts"]
        self.lines, self.differ = lines, differ
        self.readers = directed.Readers(
            header["out"],
            _naming(header, self.names, self.namespaces),
            dict(header["wholes"]),
            dict(header["grants"]),
            [(i, ns, name, explicit) for i, ns, name, explicit in header["selecting"]],
        )

    def takes(self, outline: Outline, start: int) -> bool:
        """Whether a changed file's objects are the kept ones but for their references, and the
        search stays directed with them (the module docstring)."""
        end = start + len(outline.names)
        if outline.names != self.names[start:end] or outline.namespaces != self.namespaces[start:end]:
            return False
        if outline.kinds != self.kinds[start:end]:
            return False
        named = self.named
        for name, own, kind, refs, named_class in zip(
            outline.names, outline.namespaces, outline.kinds, outline.references, outline.classes
        ):
            if own is None and name in named:
                return False
            if kind[1] == "Gateway" and named_class is not None and named_class not in named:
                return False
            for ref in refs:
                if ref == EVERYWHERE or (ref.selector and ref.namespace is None) or (not ref.selector and ref.name in named):
                    return False
        return True

    def firsts_now(self, graph: directed._Graph, roster: Roster, starts: list[int]) -> list[int]:
        """The first object of each kind in the index's order, for the patched files: the
        names, namespaces and kinds are the kept ones, so only which of the objects of a first's
        key comes first (their places, `ordering.order_key`) may differ, where a changed file
        holds one of them."""
        names, namespaces, kinds = self.names, self.namespaces, self.kinds
        changed = {(kinds[j], namespaces[j] or "", names[j]) for f in self.differ for j in range(starts[f], starts[f + 1])}
        out: list[int] = []
        for first in self.firsts:
            key = (kinds[first], namespaces[first] or "", names[first])
            if key in changed:
                # The index's order reads a namespace as `namespace or ""`.
                ties = [j for ns in {key[1], None} for j in graph.defined.get((ns, key[2]), ()) if kinds[j] == key[0]]
                first = min(ties, key=lambda j: _place(roster, starts, j))
            out.append(first)
        return sorted(out)


def _naming(header: dict[str, Any], names: list[str], namespaces: list[str | None]) -> dict[tuple[str | None, str], list[int]]:
    """The readers of each name in a namespace: a name some object bears written as that
    object's place (most nodes), any other as itself."""
    naming = dict(zip([(namespaces[j], names[j]) for j in header["nodes"]], header["naming"]))
    naming.update(zip(map(tuple, header["missing"]), header["naming_missing"]))
    return naming


def _shape(rows: list[list[object]]) -> str:
    """A digest of the files' names, counts and kinds' scopes (`Roster.file_rows` but the content
    keys): what the objects' places and keys are a function of besides the files' bytes."""
    h = hashlib.blake2b(_dumps([[row[0], row[2], row[3]] for row in rows]), digest_size=20)
    return h.hexdigest()


def _place(roster: Roster, starts: list[int], j: int) -> Any:
    f = bisect_right(starts, j) - 1
    objects = roster.files[f][1]
    i = j - starts[f]
    from policylint.k8s.roster import Deferred

    return objects.place(i) if isinstance(objects, Deferred) else objects[i].sort_key()


def _read(cache: ParseCache, name: str, rows: list[list[object]]) -> _Kept | None:
    """The entry `name` checked for the run's files `rows`, or None: missing, damaged, not what
    `_write` makes, or of other files (names, counts, kinds' scopes)."""
    payload = cache.payload(name)
    if payload is None:
        return None
    lines = bytes(payload).split(b"\n")
    try:
        header = json.loads(lines[0])
    except Exception:
        return None
    if type(header) is not dict or header.get("format") != FORMAT:
        return None
    contents = header.get("contents")
    if type(contents) is not list or len(contents) != len(rows) or len(lines) != len(rows) + 1:
        return None
    if header.get("shape") != _shape(rows):
        return None  # other files, counts or kinds' scopes
    differ = [f for f, (row, content) in enumerate(zip(rows, contents)) if row[1] != content]
    n = sum(row[2] for row in rows)  # type: ignore[misc]
    kinds = _checked(header, n)
    if kinds is None:
        return None
    return _Kept(header, lines[1:], differ, kinds)


def _checked(header: dict[str, Any], n: int) -> list[tuple[str, str]] | None:
    """The objects' kinds, where every part of the header is what `_write` makes for `n`
    objects; else None. Checked a column at a time (`zip(*rows)`): a row per object or node
    checked alone was most of a read."""
    names, namespaces, kind_numbers, table = (
        header.get("names"),
        header.get("namespaces"),
        header.get("kinds"),
        header.get("table"),
    )
    out, nodes, naming = header.get("out"), header.get("nodes"), header.get("naming")
    missing, naming_missing = header.get("missing"), header.get("naming_missing")
    wholes, grants, selecting = header.get("wholes"), header.get("grants"), header.get("selecting")
    firsts, named = header.get("firsts"), header.get("named")
    parts = (
        names,
        namespaces,
        kind_numbers,
        table,
        out,
        nodes,
        naming,
        missing,
        naming_missing,
        wholes,
        grants,
        selecting,
        firsts,
        named,
    )
    if any(type(part) is not list for part in parts):
        return None
    assert isinstance(names, list) and isinstance(namespaces, list) and isinstance(kind_numbers, list) and isinstance(table, list)
    assert isinstance(out, list) and isinstance(nodes, list) and isinstance(naming, list) and isinstance(wholes, list)
    assert isinstance(grants, list) and isinstance(selecting, list) and isinstance(firsts, list) and isinstance(named, list)
    assert isinstance(missing, list) and isinstance(naming_missing, list)
    if not len(names) == len(namespaces) == len(kind_numbers) == len(out) == n:
        return None
    if len(nodes) != len(naming) or len(missing) != len(naming_missing) or not _places(nodes, n):
        return None
    if not (_strings(names) and _strings(named) and _strings(namespaces, none=True)):
        return None
    if not _places(kind_numbers, len(table)) or not _places(firsts, n):
        return None
    columns = [_columns(table, (str, str)), _columns(missing, (str | None, str))]
    columns += [_columns(wholes, (str | None, list)), _columns(grants, (str | None, list))]
    columns.append(_columns(selecting, (int, str | None, str, bool)))
    if any(found is None for found in columns):
        return None
    pairs, _, whole, granted, selected = columns
    assert pairs is not None and whole is not None and granted is not None and selected is not None
    readers = [*out, *naming, *naming_missing, *whole[1], *granted[1]]
    if not _lists(readers) or not _places(chain.from_iterable(readers), n) or not _places(selected[0], n):
        return None
    kinds = list(zip(*pairs)) if table else []
    return [kinds[k] for k in kind_numbers]


def _columns(rows: list[Any], types: tuple[Any, ...]) -> list[tuple[Any, ...]] | None:
    """The columns of `rows`, lists of as many values as `types`, each column's values of its
    type (a union, or a type; `int` excludes `bool`); None where a row or value is not."""
    if not _lists(rows) or set(map(len, rows)) - {len(types)}:
        return None
    columns = list(zip(*rows)) if rows else [() for _ in types]
    for column, kind in zip(columns, types):
        allowed = set(kind.__args__) if hasattr(kind, "__args__") else {kind}
        if not set(map(type, column)) <= allowed:
            return None
    return columns


def _lists(values: list[Any]) -> bool:
    return set(map(type, values)) <= {list}


def _strings(values: Iterable[Any], *, none: bool = False) -> bool:
    allowed = {str, type(None)} if none else {str}
    return set(map(type, values)) <= allowed


def _places(values: Iterable[Any], n: int) -> bool:
    """Integers in [0, n)."""
    values = list(values)
    return set(map(type, values)) <= {int} and (not values or (min(values) >= 0 and max(values) < n))


def _references(line: bytes, count: Any) -> list[list[Reference]] | None:
    """A file's objects' kept references (one line of the entry), or None: not what `_write`
    makes for `count` objects."""
    try:
        decoded = json.loads(line)
    except Exception:
        return None
    if type(decoded) is not list or len(decoded) != count:
        return None
    out: list[list[Reference]] = []
    for refs in decoded:
        if type(refs) is not list:
            return None
        made: list[Reference] = []
        for ref in refs:
            if type(ref) is not list or len(ref) != 4 or not _strings(ref[:1], none=True) or type(ref[1]) is not str:
                return None
            if type(ref[2]) is not bool or type(ref[3]) is not bool:
                return None
            made.append(Reference(ref[0], ref[1], ref[2], ref[3]))
        out.append(made)
    return out


def _write(
    cache: ParseCache,
    name: str,
    rows: list[list[object]],
    graph: directed._Graph,
    firsts: list[int],
    named: Iterable[str],
    lines: list[bytes],
) -> None:
    """The entry for `rows`' files: the index, and `lines`, each file's references (`_dumps`)."""
    out, naming, wholes, grants, selecting = graph.readers_kept()
    defined = graph.defined
    table = sorted(set(graph.kinds))
    number = {kind: k for k, kind in enumerate(table)}
    header = {
        "format": FORMAT,
        "shape": _shape(rows),
        "contents": [row[1] for row in rows],
        "names": graph.names,
        "namespaces": graph.namespaces,
        "table": table,
        "kinds": [number[kind] for kind in graph.kinds],
        "out": out,
        "nodes": [defined[node][0] for node in naming if node in defined],
        "naming": [readers for node, readers in naming.items() if node in defined],
        "missing": [node for node in naming if node not in defined],
        "naming_missing": [readers for node, readers in naming.items() if node not in defined],
        "wholes": list(wholes.items()),
        "grants": list(grants.items()),
        "selecting": selecting,
        "firsts": firsts,
        "named": sorted(named),
    }
    cache.put(name, b"\n".join([_dumps(header), *lines]))


def _dumps(value: Any) -> bytes:
    # Compact JSON holds no line break: one line per part.
    return json.dumps(value, ensure_ascii=True, separators=(",", ":")).encode("ascii")
