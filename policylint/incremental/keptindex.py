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
Gateways name; and every object's references. A run whose files are the same
names, counts and kinds' scopes takes it, and patches the files whose content keys differ
(`_Graph.patch`: each object taken out of the nodes its kept references read and reading its
new ones), where their objects' names, namespaces and kinds are the kept ones; anything else
(a file added, removed or renamed, an object renamed) is no use of it, and the search runs as
before, writing the index anew. Only a file that changed is read (its outline), and only the
objects the part reaches are looked at: the seeds, closures and context are read off the index
(`_Graph.seeds`, `_context`).

It is written as numbers (`_encode`): a line of JSON (the format, the files' digest, how long each
part is), the strings once each and the files' content keys as JSON, then every table as
four-byte integers, a string by its number, a list per object or node as one flat list and where
each one starts. Decoding JSON costs by the values, lists and numbers more than by the bytes, and
`array` reads every number at once; the lists are sliced from the flat ones. The references,
a quarter of the numbers, are checked and decoded only for a changed file (`_Kept.references`).

It is kept only where the directed search decides alone: no host of a service registry (the
run's `hosts` empty), no reference across every namespace, no class joined to its Gateways
(`PartGraph.classes_apart`). A patch that could change one of those (a changed object naming a
class a Gateway names, bearing one's name, a Gateway naming another class, a selector of the
cluster-scoped objects) is no use of it either.

An entry damaged, of another layout, whose parts are not what `_write` makes (lengths, numbers
out of the range of what they number, offsets not ascending to their list's end) is a miss. Patched by more than a sixteenth of the files, it is written
again for the run's files; the search's part is the same objects and members as the search from
nothing gives (tests/incremental/test_kept_index.py compares them on random edits).
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from array import array
from bisect import bisect_right
from collections.abc import Iterable, Mapping, Sequence, Sized
from itertools import accumulate, chain, pairwise
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
FORMAT = 2
_INDEX = "directed index of a scoped run"
_GATEWAY_CLASS = ("gateway.networking.k8s.io", "GatewayClass")
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
    exact: bool = False,
) -> Scoped | Undecided | None:
    """`components.scope`'s answer for these objects with the search directed, from the kept
    index patched for the files that differ from it; UNDECIDED where it cannot be had so.
    `exact`: as `components.scope`'s."""
    name = entry_name(cache, made)
    kept = _read(cache, name, rows)
    if kept is None:
        return UNDECIDED
    starts = roster.starts()
    patched: dict[int, tuple[list[Reference], list[Reference]]] = {}
    outlines: dict[int, Outline] = {}
    for f in kept.differ:
        outline = outlines[f] = outline_of(roster.files[f][1])
        if not kept.takes(outline, starts[f]) or _declares(roster.files[f][1], outline, made[2]):
            return UNDECIDED
        old = kept.references(starts[f], starts[f + 1])
        if old is None:
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
        refs = kept.references(0, starts[-1])
        if refs is None:
            return UNDECIDED
        for f, outline in outlines.items():
            refs[starts[f] : starts[f + 1]] = outline.references
        _write(cache, name, rows, graph, firsts, kept.named, refs)
    return _searched(graph, roster, starts, (origin_files, removed, exact), firsts, outlines)


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
    _write(cache, entry_name(cache, made), rows, index, sorted(graph.firsts()), graph.named_classes(), index.refs)


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
    asked: tuple[frozenset[str], Sequence[ObjectKey], bool],
    firsts: list[int],
    outlines: dict[int, Outline],
) -> Scoped | Undecided | None:
    """`components.scope`'s directed answer over the patched index (its declines, shares and
    context, read off the index); `asked`: the origin files, the keys removed, and whether the
    members are those alone (`components.scope_exact`)."""
    origin_files, removed, exact = asked
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
    found = directed.searched(graph, origins, removed, exact=exact)
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
    """An entry read and checked against the run's files (`_read`): its tables decoded (`_decode`)
    and checked (`_checked`)."""

    def __init__(self, parts: dict[str, Any], differ: list[int]) -> None:
        strings: list[str] = parts["strings"]
        # A namespace's string number is -1 for None: the list's last item.
        maybe: list[str | None] = [*strings, None]
        name_of, namespace_of = strings.__getitem__, maybe.__getitem__
        self.names: list[str] = list(map(name_of, parts["names"]))
        self.namespaces: list[str | None] = list(map(namespace_of, parts["namespaces"]))
        table = parts["table"]
        pairs = list(zip(map(name_of, table[0::2]), map(name_of, table[1::2])))
        self.kinds: list[tuple[str, str]] = list(map(pairs.__getitem__, parts["kinds"]))
        self.named: set[str] = set(map(name_of, parts["named"]))
        self.firsts: list[int] = parts["firsts"]
        self.differ = differ
        self._strings, self._maybe = strings, maybe
        self._refs_at, self._refs = parts["refs_at"], parts["refs"]
        nodes = zip(map(namespace_of, parts["node_namespaces"]), map(name_of, parts["node_names"]))
        selecting = parts["selecting"]
        self.readers = directed.Readers(
            _split(parts["out"], parts["out_at"]),
            dict(zip(nodes, _split(parts["naming"], parts["naming_at"]))),
            dict(zip(map(namespace_of, parts["wholes"]), _split(parts["wholes_read"], parts["wholes_at"]))),
            dict(zip(map(namespace_of, parts["grants"]), _split(parts["grants_read"], parts["grants_at"]))),
            [
                (i, maybe[ns], strings[name], explicit == 1)
                for i, ns, name, explicit in zip(selecting[0::4], selecting[1::4], selecting[2::4], selecting[3::4])
            ],
        )

    def references(self, start: int, end: int) -> list[list[Reference]] | None:
        """The kept references of the objects at places [start, end), or None where they are not
        what `_write` makes: checked here, as only a changed file's are read (`_checked`)."""
        strings, at, refs = self._strings, self._refs_at, self._refs
        found = refs[4 * at[start] : 4 * at[end]]
        flags = found[2::4] + found[3::4]
        if not (_within(found[0::4], -1, len(strings)) and _within(found[1::4], 0, len(strings)) and _within(flags, 0, 2)):
            return None
        maybe = self._maybe
        return [
            [
                Reference(maybe[refs[r]], strings[refs[r + 1]], refs[r + 2] == 1, refs[r + 3] == 1)
                for r in range(4 * at[j], 4 * at[j + 1], 4)
            ]
            for j in range(start, end)
        ]

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
            # A class the Gateways name, still referencing nothing (and declaring no host:
            # `_declares`), keeps `classes_apart`'s proof: the one object of its name, joining
            # nothing. A comment in its file is no reason to search from nothing.
            if own is None and name in named and (kind != _GATEWAY_CLASS or refs):
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
    parts = _decode(payload)
    if parts is None or parts["shape"] != _shape(rows):
        return None  # not what `_write` makes; or other files, counts or kinds' scopes
    contents = parts["contents"]
    if len(contents) != len(rows) or not _checked(parts, sum(row[2] for row in rows)):  # type: ignore[misc]
        return None
    differ = [f for f, (row, content) in enumerate(zip(rows, contents)) if row[1] != content]
    return _Kept(parts, differ)


# The integer tables of an entry, in the order they are written: for n objects, each object's
# name, namespace and kind (numbers into the strings, the namespace -1 for None; the kind into
# `table`, pairs of strings); a list per object or per node written as one flat list and the
# offsets where each one's items start (`_at`, one more than the lists); the readers of each
# node (a name in a namespace), of each namespace whole and of each namespace's grants; the
# selector references (four numbers each: the object, a namespace, a name, explicit); the first
# object of each kind; the classes the Gateways name; each object's references (four numbers
# each: a namespace, a name, explicit, selector).
_TABLES = (
    "names",
    "namespaces",
    "kinds",
    "table",
    "out_at",
    "out",
    "node_namespaces",
    "node_names",
    "naming_at",
    "naming",
    "wholes",
    "wholes_at",
    "wholes_read",
    "grants",
    "grants_at",
    "grants_read",
    "selecting",
    "firsts",
    "named",
    "refs_at",
    "refs",
)
# Four-byte signed integers, little-endian whatever the machine (`array`'s own are native).
_INT = "i" if array("i").itemsize == 4 else "l"
_SWAP = sys.byteorder != "little"


def _decode(payload: memoryview | bytes) -> dict[str, Any] | None:
    """An entry's parts, as `_encode` takes them, or None where its layout is not `_encode`'s:
    a line of JSON (the format, the files' digest, the strings' length in bytes, each table's
    length), the strings and the files' content keys (JSON), then every table's integers. JSON
    decoding costs by the values, lists and numbers (docs/performance.md, "The hook's first run
    after one value changed: the directed index kept between processes"): the tables are read
    by `array` as they are, every number at once."""
    data = bytes(payload)
    end = data.find(b"\n")
    try:
        prelude = json.loads(data[:end])
    except Exception:
        return None
    if end < 0 or type(prelude) is not dict or prelude.get("format") != FORMAT:
        return None
    shape, length, sizes = prelude.get("shape"), prelude.get("strings"), prelude.get("sizes")
    if type(shape) is not str or type(length) is not int or type(sizes) is not list or len(sizes) != len(_TABLES):
        return None
    if not _places(sizes, 1 << 31) or length < 0 or len(data) != end + 1 + length + 4 * sum(sizes):
        return None
    try:
        strings = json.loads(data[end + 1 : end + 1 + length])
    except Exception:
        return None
    if type(strings) is not list or len(strings) != 2 or not all(type(part) is list and _strings(part) for part in strings):
        return None
    numbers = array(_INT)
    numbers.frombytes(data[end + 1 + length :])
    if _SWAP:
        numbers.byteswap()
    values = numbers.tolist()
    parts: dict[str, Any] = {"shape": shape, "contents": strings[0], "strings": strings[1]}
    at = 0
    for table, size in zip(_TABLES, sizes):
        parts[table] = values[at : at + size]
        at += size
    return parts


def _encode(parts: Mapping[str, Any]) -> bytes:
    """The entry `_decode` reads back as `parts`."""
    numbers = array(_INT)
    for table in _TABLES:
        numbers.fromlist(parts[table])  # a list at once: an iterator is read a number at a time
    if _SWAP:
        numbers.byteswap()
    strings = _dumps([parts["contents"], parts["strings"]])
    prelude = {"format": FORMAT, "shape": parts["shape"], "strings": len(strings), "sizes": [len(parts[t]) for t in _TABLES]}
    return b"\n".join([_dumps(prelude), strings + numbers.tobytes()])


def _checked(parts: dict[str, Any], n: int) -> bool:
    """Whether the tables are what `_write` makes for `n` objects: their lengths, their numbers in
    the range of what they number, their offsets ascending from 0 to their list's end; so that
    nothing read through them is read past its end. The objects' references are checked where
    they are read (`_Kept.references`), only a changed file's: they are a quarter of the numbers."""
    s = len(parts["strings"])
    get = parts.__getitem__
    names, namespaces, kinds, table = get("names"), get("namespaces"), get("kinds"), get("table")
    nodes, selecting = get("node_names"), get("selecting")
    if not len(names) == len(namespaces) == len(kinds) == n or len(table) % 2 or len(selecting) % 4:
        return False
    if len(get("node_namespaces")) != len(nodes) or not _offsets(get("refs_at"), n, len(get("refs")) // 4):
        return False
    listed = [
        ("out_at", "out", n),
        ("naming_at", "naming", len(nodes)),
        ("wholes_at", "wholes_read", len(get("wholes"))),
        ("grants_at", "grants_read", len(get("grants"))),
    ]
    if not all(_offsets(get(at), count, len(get(flat))) for at, flat, count in listed) or len(get("refs")) % 4:
        return False
    strings = (names, table, nodes, get("named"), selecting[2::4])
    places = (get("out"), get("naming"), get("wholes_read"), get("grants_read"), get("firsts"), selecting[0::4])
    maybe = (namespaces, get("node_namespaces"), get("wholes"), get("grants"), selecting[1::4])
    return (
        all(_within(values, 0, s) for values in strings)
        and all(_within(values, 0, n) for values in places)
        and all(_within(values, -1, s) for values in maybe)
        and _within(kinds, 0, len(table) // 2)
        and _within(selecting[3::4], 0, 2)
    )


def _within(values: list[int], low: int, high: int) -> bool:
    """Every number in [low, high)."""
    return not values or (min(values) >= low and max(values) < high)


def _offsets(at: list[int], count: int, length: int) -> bool:
    """Offsets of `count` lists into a flat list of `length` items: from 0 to its end, ascending."""
    return len(at) == count + 1 and at[0] == 0 and at[-1] == length and sorted(at) == at


def _split(flat: list[int], at: list[int]) -> list[list[int]]:
    return [flat[a:b] for a, b in pairwise(at)]


def _strings(values: Iterable[Any]) -> bool:
    return set(map(type, values)) <= {str}


def _places(values: Iterable[Any], n: int) -> bool:
    """Integers in [0, n)."""
    values = list(values)
    return set(map(type, values)) <= {int} and (not values or (min(values) >= 0 and max(values) < n))


def _write(
    cache: ParseCache,
    name: str,
    rows: list[list[object]],
    graph: directed._Graph,
    firsts: list[int],
    named: Iterable[str],
    refs: Sequence[Sequence[Reference]],
) -> None:
    """The entry for `rows`' files: the index, and `refs`, each object's references."""
    out, naming, wholes, grants, selecting = graph.readers_kept()
    flat = list(chain.from_iterable(refs))
    table = sorted(set(graph.kinds))
    kind_number = {kind: k for k, kind in enumerate(table)}
    nodes = list(naming)
    # Every string a table numbers, each column taken whole: a dict's keys keep the order first
    # met, and each column is mapped through one dict (a call per value was most of a write).
    columns = {
        "names": graph.names,
        "namespaces": graph.namespaces,
        "table": list(chain.from_iterable(table)),
        "node_namespaces": [node[0] for node in nodes],
        "node_names": [node[1] for node in nodes],
        "wholes": list(wholes),
        "grants": list(grants),
        "named": sorted(named),
        "selecting_namespaces": [found[1] for found in selecting],
        "selecting_names": [found[2] for found in selecting],
        "ref_namespaces": [ref.namespace for ref in flat],
        "ref_names": [ref.name for ref in flat],
    }
    strings = [value for value in dict.fromkeys(chain.from_iterable(columns.values())) if value is not None]
    number: dict[str | None, int] = dict(zip(strings, range(len(strings))))
    number[None] = -1
    numbered = {table: list(map(number.__getitem__, column)) for table, column in columns.items()}
    parts: dict[str, Any] = {
        "shape": _shape(rows),
        "contents": [row[1] for row in rows],
        "strings": strings,
        "names": numbered["names"],
        "namespaces": numbered["namespaces"],
        "kinds": [kind_number[kind] for kind in graph.kinds],
        "table": numbered["table"],
        "out_at": _at(out),
        "out": list(chain.from_iterable(out)),
        "node_namespaces": numbered["node_namespaces"],
        "node_names": numbered["node_names"],
        "naming_at": _at(naming.values()),
        "naming": list(chain.from_iterable(naming.values())),
        "wholes": numbered["wholes"],
        "wholes_at": _at(wholes.values()),
        "wholes_read": list(chain.from_iterable(wholes.values())),
        "grants": numbered["grants"],
        "grants_at": _at(grants.values()),
        "grants_read": list(chain.from_iterable(grants.values())),
        "selecting": _interleaved(
            [found[0] for found in selecting],
            numbered["selecting_namespaces"],
            numbered["selecting_names"],
            [int(found[3]) for found in selecting],
        ),
        "firsts": firsts,
        "named": numbered["named"],
        "refs_at": _at(refs),
        "refs": _interleaved(
            numbered["ref_namespaces"],
            numbered["ref_names"],
            [int(ref.explicit_namespace) for ref in flat],
            [int(ref.selector) for ref in flat],
        ),
    }
    cache.put(name, _encode(parts))


def _interleaved(*columns: list[int]) -> list[int]:
    """Rows of one number from each column, one after the other."""
    out = [0] * (len(columns) * len(columns[0]))
    for k, column in enumerate(columns):
        out[k :: len(columns)] = column
    return out


def _at(lists: Iterable[Sized]) -> list[int]:
    """Where each list's items start in the lists joined, and where the last ends."""
    return [0, *accumulate(map(len, lists))]


def _dumps(value: Any) -> bytes:
    # Compact JSON holds no line break: the prelude is one line.
    return json.dumps(value, ensure_ascii=True, separators=(",", ":")).encode("ascii")
