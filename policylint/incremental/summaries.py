"""What finding the part of a scoped run needs, kept by content (policylint.incremental).

A run whose report scope is narrower than what it reads (`--staged`, `--diff`, the pre-commit
hook, `--context`) analyses only the part of the repository its files can reach
(policylint.semantics.components). Finding that part walked every object of the repository for
what it may reference, and joined them all: on the 10k connected corpus a sixth of a warm hook
run, nearly all of it spent on files the change did not touch. Two entries are kept in the parse
cache's directory, under its trust rules (policylint.input.cache: outside the checkout, behind a
checksum, checked on reading):

- **each file's summary**, under its parse-cache key (its bytes under the loader's stamp) and
  the code's: the keys of the objects the file defines, in order, and what each may reference
  (`components.references`). A summary is believed only when the keys it lists are the keys of
  the objects this run built from the file: what an object references depends on its data
  (the file's bytes, which the key holds) and on its namespace, which `--namespace`, CRDs and
  profiles decide; the keys check exactly that. Anything else is a miss and the file is walked.
- **the part itself**, under a key of everything `components.scope` reads: every object's key
  and file in order, every file's content key, the origin files, the objects the change
  removed, the host-declaring kinds, and the code. The hook run again on the same commit (after
  a failure, or by pre-commit's stash-and-retry) finds the part without joining anything.

Neither changes what a run finds: the differential tests (tests/test_incremental.py) compare
runs with a persistent cache to runs without one, byte for byte.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from policylint.semantics import components
from policylint.semantics.components import Reference, Scoped

if TYPE_CHECKING:
    from policylint.input.cache import ParseCache
    from policylint.k8s.objects import K8sObject, ObjectKey

# Bump when an entry's layout or meaning changes.
FORMAT = 1
_SUMMARY = "summary of a file"
_PART = "part of a scoped run"
_WHOLE = "whole"


def scope(
    cache: ParseCache | None,
    objects: Sequence[K8sObject],
    content_keys: Mapping[str, str],
    origin_files: Iterable[str],
    removed: Iterable[ObjectKey],
    hosts: Mapping[tuple[str, str], str],
) -> Scoped | None:
    """`components.scope(objects, origin_files, removed, hosts=hosts)`, read back or worked out
    from the files' summaries when `cache` holds them (and kept for the next run)."""
    files = frozenset(origin_files)
    removed = sorted(set(removed), key=lambda k: _dumps(_key_row(k)))  # a namespace may be None
    if cache is None or len(objects) < components.MIN_OBJECTS:
        return components.scope(objects, files, removed, hosts=hosts)
    entry = _part_entry(cache, objects, content_keys, files, removed, hosts)
    if entry is not None:
        kept = _recall_part(cache, entry, objects)
        if kept is not None:
            return kept[0]
    refs = references(cache, objects, content_keys)
    scoped = components.scope(objects, files, removed, hosts=hosts, refs=refs)
    if entry is not None:
        _remember_part(cache, entry, objects, scoped)
    return scoped


def references(cache: ParseCache, objects: Sequence[K8sObject], content_keys: Mapping[str, str]) -> list[list[Reference]]:
    """`components.references` of every object, in order: from each file's summary where it is
    kept and matches the objects built, else walked (and the file's summary kept)."""
    by_file: dict[str, list[int]] = {}
    for i, obj in enumerate(objects):
        by_file.setdefault(obj.doc.file, []).append(i)
    out: list[list[Reference]] = [[] for _ in objects]
    stamp = FORMAT.to_bytes(2, "big") + _code()
    for file, indices in by_file.items():
        content = content_keys.get(file)
        keys = [_key_row(objects[i].key) for i in indices]
        entry = cache.named(_SUMMARY, stamp + content.encode("ascii")) if content is not None else None
        found = _recall_summary(cache, entry, keys) if entry is not None else None
        if found is None:
            found = [components.references(objects[i]) for i in indices]
            if entry is not None:
                payload = {"format": FORMAT, "objects": keys, "references": [[list(r) for r in refs] for refs in found]}
                cache.put(entry, _dumps(payload))
        for i, refs in zip(indices, found):
            out[i] = refs
    return out


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


def _recall_summary(cache: ParseCache, entry: str, keys: list[list[str | None]]) -> list[list[Reference]] | None:
    """The references kept in a file's summary, if it lists exactly `keys` and every reference
    is of the shape `components.references` gives."""
    decoded = _decoded(cache, entry)
    if decoded is None or decoded.get("objects") != keys:
        return None
    rows = decoded.get("references")
    if type(rows) is not list or len(rows) != len(keys):
        return None
    out: list[list[Reference]] = []
    for row in rows:
        if type(row) is not list:
            return None
        refs: list[Reference] = []
        for ref in row:
            if not (
                type(ref) is list
                and len(ref) == 4
                and (ref[0] is None or type(ref[0]) is str)
                and type(ref[1]) is str
                and type(ref[2]) is bool
                and type(ref[3]) is bool
            ):
                return None
            refs.append(Reference(ref[0], ref[1], ref[2], ref[3]))
        out.append(refs)
    return out


def _part_entry(
    cache: ParseCache,
    objects: Sequence[K8sObject],
    content_keys: Mapping[str, str],
    files: frozenset[str],
    removed: Sequence[ObjectKey],
    hosts: Mapping[tuple[str, str], str],
) -> str | None:
    """The entry of the part `components.scope` finds for these inputs; None when a file of an
    object has no content key (standard input), whose objects no key can stand for."""
    h = hashlib.blake2b(digest_size=20)
    h.update(FORMAT.to_bytes(2, "big") + _code())
    seen: dict[str, None] = {}
    rows: list[Any] = []
    for obj in objects:
        file = obj.doc.file
        if file not in seen:
            content = content_keys.get(file)
            if content is None:
                return None
            seen[file] = None
            rows.append([file, content])
        rows.append(_key_row(obj.key))
    h.update(_dumps(rows))
    h.update(_dumps([sorted(files), [_key_row(k) for k in removed], sorted([list(k), v] for k, v in hosts.items())]))
    return cache.named(_PART, h.digest())


def _recall_part(cache: ParseCache, entry: str, objects: Sequence[K8sObject]) -> tuple[Scoped | None] | None:
    """The part kept under `entry` (in a 1-tuple: `(None,)` is "everything"), or None: missing,
    or not what `_remember_part` writes for these objects."""
    decoded = _decoded(cache, entry)
    if decoded is None:
        return None
    if decoded.get(_WHOLE) is True:
        return (None,)
    kept, members = decoded.get("objects"), decoded.get("members")
    n = len(objects)
    if not (_ascending(kept, n) and _ascending(members, n)):
        return None
    assert isinstance(kept, list) and isinstance(members, list)
    if not set(members) <= set(kept):
        return None
    return (Scoped([objects[i] for i in kept], frozenset(objects[i].key for i in members)),)


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


def _remember_part(cache: ParseCache, entry: str, objects: Sequence[K8sObject], scoped: Scoped | None) -> None:
    if scoped is None:
        cache.put(entry, _dumps({"format": FORMAT, _WHOLE: True}))
        return
    position = {obj: i for i, obj in enumerate(objects)}
    kept = [position[obj] for obj in scoped.objects]
    members = [i for i in kept if objects[i].key in scoped.members]
    # A key the analysed objects hold twice (a duplicate object) is a member at every position:
    # the part is read back as the same objects and the same member keys.
    cache.put(entry, _dumps({"format": FORMAT, "objects": kept, "members": members}))
