"""The admission verdicts kept between runs: one entry of the parse cache (policylint.input.cache)
holding what the verdicts of the objects nothing refuses hold, by a key that hashes what decides
them (policylint.k8s.verdicts.kept_key)."""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any

from policylint.input.jsonparts import map_parts
from policylint.input.sharing import shared_tree

if TYPE_CHECKING:
    from policylint.input.cache import ParseCache
    from policylint.input.load import Shared

# Entries kept at most; past it a run keeps only the ones it used or added (a cache shared by
# many repositories drops those of the others rather than grow without bound).
_MAX_VERDICTS = 200_000
# A key is a 16-byte digest (policylint.k8s.verdicts.kept_key), written as 32 hex digits.
VERDICT_KEY_BYTES = 16
_VERDICT_KEY = re.compile(rf"[0-9a-f]{{{2 * VERDICT_KEY_BYTES}}}\Z")


class VerdictStore:
    """What the admission verdicts of objects nothing refuses hold, kept between runs in one
    entry of the parse cache (policylint.k8s.admission says what a key and a value are).

    The schema walk and the CEL rules are a quarter of a run (docs/performance.md); between two
    commits almost every object and schema is unchanged. A key hashes the object's file entry, its
    place in the file and the schema that decides it, so that, as with files, nothing can make
    an entry stale. The entry is read once, as the first use of the cache, and written once, at
    the end of a run that added to it; concurrent runs may lose each other's additions (a miss
    later, never a wrong verdict). Its content is checked like every entry's: a value that is
    not what `admission` writes is a miss. Keys are held as digests, written as hex: of 3.3 per
    object, held to the end of the rules stage where a run's memory peaks, a 32-character string
    is 32 bytes more each (10 MiB at 100k objects).
    """

    def __init__(self, cache: ParseCache, stamp: bytes) -> None:
        """`stamp`: what besides an object and its schema decides its verdict (the code that works
        it out), so that an entry made by other code is another entry."""
        self._cache = cache
        self._key = cache.named("admission verdicts", stamp)
        self._kept: dict[bytes, Any] = {}
        self._added: dict[bytes, Any] = {}
        self._used: set[bytes] = set()
        # Verdicts repeat: at 100k objects a handful of distinct values stand for 300,000 entries,
        # most of them `[]`. Each value is held once (policylint.input.sharing): the entries read
        # held ~45 MiB at 20k objects as one list per entry, and those added as many again. No
        # reader changes a value (`admission` copies what it takes).
        self._values: Shared = {}
        payload = cache.payload(self._key)
        if payload is None:
            return
        try:
            decoded = json.loads(bytes(payload))
        except Exception:
            return
        entries = decoded.get("verdicts") if type(decoded) is dict and decoded.get("format") == 1 else None
        if type(entries) is dict:
            values = self._values
            self._kept = {bytes.fromhex(k): shared_tree(values, v) for k, v in entries.items() if _VERDICT_KEY.match(k)}

    def get(self, key: bytes) -> Any:
        """The value kept under `key`, or None."""
        found = self._added.get(key)
        if found is None:
            found = self._kept.get(key)
            if found is not None:
                self._used.add(key)
        return found

    def add(self, key: bytes, value: Any) -> None:
        if self._kept.get(key) != value:  # new, or a kept value the reader refused: written anew
            self._added[key] = shared_tree(self._values, value)

    def added(self) -> dict[bytes, Any]:
        """What this process added (a `--jobs` rule process sends it back)."""
        return dict(self._added)

    def update(self, entries: Any) -> None:
        """Entries another process of this run added."""
        if type(entries) is dict:
            for key, value in entries.items():
                if type(key) is bytes and len(key) == VERDICT_KEY_BYTES:
                    self.add(key, value)

    def save(self) -> None:
        """Write the entry if this run added to it."""
        if not self._added:
            return
        kept = self._kept
        if len(kept) + len(self._added) > _MAX_VERDICTS:
            kept = {k: kept[k] for k in self._used}
        # Into what was kept, not a copy of both: a run that fills the cache adds every entry.
        if kept:
            kept.update(self._added)
        else:
            kept = self._added
        parts = map_parts('{"format":1,"verdicts":', ((key.hex(), value) for key, value in kept.items()), "}")
        self._kept, self._added = kept, {}
        self._cache.put(self._key, parts)
