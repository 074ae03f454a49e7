"""The part of a scoped run, kept by what finding it reads (policylint.incremental).

A run whose report scope is narrower than what it reads (`--staged`, `--diff`, the pre-commit
hook, `--context`) analyses only the part of the repository its files can reach
(policylint.semantics.components). Finding it joins every object with what it may reference;
the references of the objects of unchanged files are those their files' shells kept
(policylint.incremental.shells), so only the files read again are walked. The part itself is
kept in the parse cache's directory, under its trust rules (policylint.input.cache: outside the
checkout, behind a checksum, checked on reading), under a key of everything `components.scope`
reads: every object's key and file in order, every file's content key, the origin files, the
objects the change removed, the host-declaring kinds, and the code. The hook run again on the
same commit (after a failure, or by pre-commit's stash-and-retry) finds the part without
joining anything.
A first run on a new commit takes the directed search's index the run before kept
(policylint.incremental.keptindex), patched for the files changed since.

It does not change what a run finds: the differential tests (tests/incremental/test_incremental.py) compare
runs with a persistent cache to runs without one, byte for byte.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from policylint.incremental import keptindex
from policylint.k8s.roster import Roster
from policylint.semantics import components
from policylint.semantics.components import Scoped
from policylint.semantics.partgraph import PartGraph

if TYPE_CHECKING:
    from policylint.input.cache import ParseCache
    from policylint.k8s.index import ProjectIndex
    from policylint.k8s.objects import K8sObject, KindRegistry, ObjectKey

# Bump when an entry's layout or meaning changes.
FORMAT = 2
_PART = "part of a scoped run"
_WHOLE = "whole"


def scope(
    cache: ParseCache | None,
    index: ProjectIndex,
    origin_files: Iterable[str],
    removed: Iterable[ObjectKey],
    hosts: Mapping[tuple[str, str], str],
    graph: PartGraph | None = None,
    exact: bool = False,
) -> Scoped | None:
    """`components.scope` of the index's objects, file by file, read back
    when `cache` holds it (and kept for the next run), unless the sets are kept in memory (`graph`)
    from an earlier run. Read back, only the part's objects are built of the files outside it
    (`index.roster`, policylint.k8s.roster). `exact`: as `components.scope`'s."""
    files = frozenset(origin_files)
    search = components.scope_exact if exact else components.scope
    removed = sorted(set(removed), key=lambda k: _dumps(_key_row(k)))  # a namespace may be None
    roster = index.roster
    if roster is None:
        # Objects not read file by file (`--context`'s overlay replaced some): grouped by file in
        # the index's order, under entries of their own (`_part_entry`).
        grouped: dict[str, list[K8sObject]] = {}
        for obj in index.objects:
            grouped.setdefault(obj.doc.file, []).append(obj)
        roster = Roster(list(grouped.items()))
    # The search reads the roster file by file: the objects of files told by what was kept of
    # them are built only when the part holds them.
    if cache is None or (graph is not None and not graph.fresh) or len(roster) < components.MIN_OBJECTS:
        # With the sets kept in memory (a language server, a change's base side after its other
        # side), the search costs what the change does: less than hashing every object's key for
        # the entry.
        scoped = search(roster, files, removed, hosts=hosts, kept=graph)
        if cache is not None and graph is not None and len(roster) >= components.MIN_OBJECTS:
            _leave_index(cache, index, roster, graph, hosts)
        return scoped
    # A fresh `graph` (the first run of a process) is filled by the search only when the entry
    # misses: the hook run again on the same commit reads its part back, and its base's
    # findings too, so no later run of the process needs the sets.
    made = (index.kinds, index.options.default_namespace, index.roster is not None)
    rows = roster.file_rows(index.content_keys, index.kinds.is_cluster_scoped)
    entry = _part_entry(cache, rows, files, removed, hosts, made, exact) if rows is not None else None
    if entry is not None:
        kept = _recall_part(cache, entry, roster)
        if kept is not None:
            return kept[0]
    # The directed index of an earlier run, patched for the files changed since
    # (policylint.incremental.keptindex).
    if rows is not None:
        found = keptindex.scope(cache, roster, rows, files, removed, (*made[1:], hosts), exact)
        if not isinstance(found, keptindex.Undecided):
            if entry is not None:
                _remember_part(cache, entry, roster, found)
            return found
    # The references of the objects of unchanged files are what their shells kept
    # (policylint.incremental.shells): only the files read again are walked.
    graph = graph if graph is not None else PartGraph()
    scoped = search(roster, files, removed, hosts=hosts, kept=graph)
    if rows is not None:
        keptindex.remember(cache, graph, rows, (*made[1:], hosts))
    if entry is not None:
        _remember_part(cache, entry, roster, scoped)
    return scoped


def _leave_index(
    cache: ParseCache, index: ProjectIndex, roster: Roster, graph: PartGraph, hosts: Mapping[tuple[str, str], str]
) -> None:
    """Keep the directed index a change's base side built, where no index is kept yet: the run
    that fills the cache analyses its staged side whole (a class among its changed objects, a
    part of nearly everything) and searches only on its base side, whose files are the next
    commit's but for this change. Without it, the first value change after that run searched
    from nothing and wrote the index; with it, that run patches it as later ones do
    (docs/performance.md, "The hook's first run after one value changed: the kept index left by
    the run that fills the cache"). An index kept already is left as it is: the staged side's,
    or a later run's, are nearer the next commit's files."""
    if graph.directed.graph is None:
        return
    made = (index.options.default_namespace, index.roster is not None, hosts)
    if cache.holds(keptindex.entry_name(cache, made)):
        return
    rows = roster.file_rows(index.content_keys, index.kinds.is_cluster_scoped)
    if rows is not None:
        keptindex.remember(cache, graph, rows, made)


def _code() -> bytes:
    from policylint.incremental.memo import code_stamp

    return code_stamp()


def _key_row(key: ObjectKey) -> list[str | None]:
    return [key.group, key.kind, key.namespace, key.name]


def _dumps(value: Any) -> bytes:
    return json.dumps(value, ensure_ascii=True, separators=(",", ":")).encode("ascii")


def _decoded(cache: ParseCache, entry: str) -> Any:
    payload = cache.payload(entry)
    if payload is None:
        return None
    try:
        decoded = json.loads(bytes(payload))
    except Exception:
        return None
    return decoded if type(decoded) is dict and decoded.get("format") == FORMAT else None


def _part_entry(
    cache: ParseCache,
    rows: Iterable[list[object]],
    files: frozenset[str],
    removed: Sequence[ObjectKey],
    hosts: Mapping[tuple[str, str], str],
    made: tuple[KindRegistry, str, bool],
    exact: bool = False,
) -> str:
    """The entry of the part `components.scope` finds for these inputs, the files' `rows`
    (`Roster.file_rows`: None when a file of an object has no content key, standard input, whose
    objects no key can stand for). The objects' keys, and what the search reads of them, are a
    function of their files' bytes, of whether each of their kinds is cluster-scoped and of the
    default namespace (`made`): those are hashed, file by file, rather than every object's key;
    and whether the objects' places are in the files' input order (a roster) or the index's; and
    whether the members are the origins alone (`exact`), which another search with the same
    origins does not find."""
    _, default_namespace, in_input_order = made
    h = hashlib.blake2b(digest_size=20)
    h.update(FORMAT.to_bytes(2, "big") + _code())
    h.update(_dumps([default_namespace, in_input_order, rows]))
    h.update(_dumps([sorted(files), [_key_row(k) for k in removed], sorted([list(k), v] for k, v in hosts.items())]))
    if exact:  # the entries of a change's search named as before
        h.update(b"exact")
    return cache.named(_PART, h.digest())


def _recall_part(cache: ParseCache, entry: str, roster: Roster) -> tuple[Scoped | None] | None:
    """The part kept under `entry` (in a 1-tuple: `(None,)` is "everything"), or None: missing,
    or not what `_remember_part` writes for these objects. Only its objects are built."""
    decoded = _decoded(cache, entry)
    if decoded is None:
        return None
    if decoded.get(_WHOLE) is True:
        return (None,)
    kept, members = decoded.get("objects"), decoded.get("members")
    n = len(roster)
    if not (_ascending(kept, n) and _ascending(members, n)):
        return None
    assert isinstance(kept, list) and isinstance(members, list)
    if not set(members) <= set(kept):
        return None
    return (Scoped([roster[i] for i in kept], frozenset(roster[i].key for i in members)),)


def _ascending(value: Any, n: int) -> bool:
    """A list of distinct indices below `n`, in order."""
    if type(value) is not list:
        return False
    previous = -1
    for i in value:
        if type(i) is not int or not previous < i < n:
            return False
        previous = i
    return True


def _remember_part(cache: ParseCache, entry: str, roster: Roster, scoped: Scoped | None) -> None:
    if scoped is None:
        cache.put(entry, _dumps({"format": FORMAT, _WHOLE: True}))
        return
    # Each object by its place in the roster (input order), which the run reading it back builds
    # alone: the search was given the roster, whose order its places are.
    assert scoped.places is not None
    kept = scoped.places
    members = [i for i, obj in zip(kept, scoped.objects) if obj.key in scoped.members]
    # A key the analysed objects hold twice (a duplicate object) is a member at every position:
    # the part is read back as the same objects and the same member keys.
    cache.put(entry, _dumps({"format": FORMAT, "objects": kept, "members": members}))
