"""The content each file had when a whole run last read it, so that a run meeting the file changed
finds what the per-object rules found on the objects the change left alone.

What a per-object rule finds on an object is kept by the object's place in its file's content
(policylint.incremental.rulecache), and, by a run analysing a part, by the object's own content
under the file's name, so that a file edited again finds its unchanged objects' results. A whole
run, which fills the cache, keeps them by place only: working out every object's own content is
a tenth of a second at 10,000 objects, and writing the results twice doubles the entries. So the
first time the pre-commit hook met a file edited since the cache was filled, every per-object rule
ran again on each of the file's objects, a hundred on the generated corpora, where one changed:
PL703 alone, which asks every other plausible release and channel, took 0.17-0.18 s of a first
run of 1.2-1.4 s (docs/performance.md, "Reusing what the rules found across one edit").

A whole run now writes one small entry naming each file's content key (`record`). A run that
analyses a part and finds an object of a changed file kept neither by place nor by its own
content reads the entry, then the parse-cache entry of the file's earlier content, and works out
the own content of each object it held (`Previous.places`: what `build_objects` makes of each
document, without building them): an object of the earlier content with the same own content, in
the same file, had its results kept by its place there, under the same run context, which the
key hashes. Nothing is believed: the index names a content key (a wrong one finds objects of
other content, which match nothing), the earlier content is the parse cache's entry, checked as
any (a miss when it was pruned), and an object is matched by a digest of its data's `repr`, as
the results kept by content are (`digest`).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from policylint.input.positions import format_path

if TYPE_CHECKING:
    from policylint.input.cache import ParseCache

# Bump when the entry's layout or meaning changes.
FORMAT = 1
_NAME = "the content each file had"
# A parse-cache key (policylint.input.cache `ParseCache.key`).
_CONTENT = re.compile(r"[0-9a-f]{40}\Z")
# Where an object was in a file: the line and column of its document, and its path in it (a
# `kind: List` item's `items[i]`), as `K8sObject.sort_key` gives them.
Place = tuple[int, int, str]


def digest(data: Any) -> str:
    """An object's own content: a digest of its data's `repr`, which tells apart what JSON would
    make one (the key 1 and the key "1", 1 and 1.0) and keeps the order a rule reads the fields
    in; a value whose repr is not the same in every process (a set) is a miss, never a wrong hit."""
    return hashlib.blake2b(repr(data).encode("utf-8", "surrogateescape"), digest_size=16).hexdigest()


def entry(cache: ParseCache) -> str:
    return cache.named(_NAME, FORMAT.to_bytes(2, "big"))


def record(cache: ParseCache, keys: Mapping[str, str]) -> None:
    """Name each file's content key (`keys`: a whole run's files), replacing what was named."""
    text = json.dumps({"files": dict(sorted(keys.items()))}, separators=(",", ":"))
    cache.put(entry(cache), text.encode("utf-8", "surrogateescape"))


class Previous:
    """The index a whole run wrote, and the objects of the files' earlier contents, each read the
    first time a run asks for it."""

    def __init__(self, cache: ParseCache) -> None:
        self._cache = cache
        self._entry = entry(cache)
        self._keys: dict[str, str] | None = None
        self._places: dict[tuple[str, str], dict[str, list[Place]]] = {}

    def key(self, file: str) -> str | None:
        """The content key `file` had when a whole run last read it (None: none named it)."""
        if self._keys is None:
            self._keys = _decode(self._cache.payload(self._entry))
        return self._keys.get(file)

    @staticmethod
    def own(data: Any) -> str:
        """`digest`, for a reader that holds the index but does not import this module (the
        admission verdicts, policylint.k8s.verdicts `earlier_keys`, an earlier stage)."""
        return digest(data)

    def places(self, file: str, key: str) -> Mapping[str, list[Place]]:
        """Where each object of `file`'s content `key` was, by its own content (`digest`); nothing
        when that content is no longer in the cache."""
        found = self._places.get((file, key))
        if found is None:
            found = self._places[(file, key)] = {}
            result = self._cache.load(key, file)
            for doc in result.documents if result is not None else ():
                data, ref = doc.data, doc.ref
                # As `build_objects` cuts documents into objects: a List's items are objects of
                # their own. Another document that is no object matches no object's content.
                if isinstance(data, dict) and isinstance(data.get("items"), list) and str(data.get("kind", "")).endswith("List"):
                    for i, item in enumerate(data["items"]):
                        found.setdefault(digest(item), []).append((ref.line, ref.column, format_path(("items", i))))
                elif data is not None:
                    found.setdefault(digest(data), []).append((ref.line, ref.column, ""))
        return found


def _decode(payload: memoryview | None) -> dict[str, str]:
    """The index as `record` writes it; nothing when the entry is anything else."""
    if payload is None:
        return {}
    try:
        value = json.loads(payload.tobytes())
    except ValueError:
        return {}
    files = value.get("files") if type(value) is dict else None
    if type(files) is not dict:
        return {}
    return {file: key for file, key in files.items() if type(key) is str and _CONTENT.match(key)}
