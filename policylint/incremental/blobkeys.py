"""The parse-cache key of each staged file's bytes, kept between runs by its git blob's object id
(policylint.incremental).

A `--staged` run (the pre-commit hook) names every file it reads by its content key
(policylint.input.cache: its bytes hashed under the loader's stamp), in the key of its result
(policylint.incremental.results) and of the base's findings a comment is answered from
(policylint.incremental.equivalent). The git index already names each staged file's bytes: its
blob's object id, a hash of those very bytes (SHA-1 or SHA-256 of `blob <size>\\0` and the
bytes), which is what every other read of a snapshot keys them by (policylint.input.git). So the
content key of a blob is a function of its object id, and a hook run kept it: the next run reads
none of the files it did not change to name them, where it read and hashed all of them (3,319
files on the messy and shared corpora, docs/performance.md). A run that analyses still reads
them (policylint.input.staged `materialize`) and works their keys out from the bytes, which the
result it keeps is checked against (`Results.remember`).

One entry per repository (named by its top directory and the cache's stamp, which the keys hash
too: another loader is another entry), holding the keys of the last run that worked one out, for
the files it read: a repository's entry stays the size of its staged files. It lives in the parse
cache's directory under its trust rules (policylint.input.cache: this user's, outside the
checkout, behind a checksum); its shape and every key read are checked, and anything else is a
miss: the file is read and hashed.
"""

from __future__ import annotations

import json
import os
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from policylint.input.cache import ParseCache

# Bump when the entry's layout or meaning changes.
FORMAT = 1
_NAME = "content keys of staged blobs"
_HEX = frozenset("0123456789abcdef")
_HEX_BYTES = b"0123456789abcdef"
# A content key: hex of the parse cache's 20-byte digest.
_KEY_LENGTH = 40


class BlobKeys:
    """The content keys kept for one repository's blobs, and those a run adds."""

    def __init__(self, cache: ParseCache, top: str) -> None:
        self.cache = cache
        self.entry = cache.named(_NAME, os.fsencode(top))
        self._kept = _read(cache, self.entry)
        # Every key kept of a key's shape, told once for the entry: a lookup is then the dict's,
        # where checking each key as it was looked up cost a run 1 µs per staged file.
        self._checked = _all_keys(self._kept)
        self._used: dict[str, str] = {}
        self.added = 0

    def key(self, blob: str, *, json: bool) -> str | None:
        """The content key kept for the bytes of `blob` under a name `*.json` (`json`) or not, or
        None: not kept, or not a key's shape."""
        name = _name(blob, json)
        key = self._kept.get(name)
        if self._checked:
            if key is not None:
                self._used[name] = key
            return key
        if type(key) is str and len(key) == _KEY_LENGTH and _HEX.issuperset(key):
            self._used[name] = key
            return key
        return None

    def add(self, blob: str, key: str, *, json: bool) -> None:
        """The content key of the bytes of `blob`, worked out from them."""
        self._used[_name(blob, json)] = key
        self.added += 1

    def save(self) -> None:
        """Keep the keys this run used, when it worked one out (the changed files' blobs are new
        at every commit): those of the files it read alone, so the entry does not grow."""
        if self.added:
            value = {"format": FORMAT, "keys": dict(sorted(self._used.items()))}
            self.cache.put(self.entry, json.dumps(value, ensure_ascii=True, separators=(",", ":")).encode("ascii"))


def _name(blob: str, json: bool) -> str:
    # The same bytes named `*.json` are another content key (policylint.input.cache `key`).
    return f"{blob}.json" if json else blob


def _all_keys(kept: dict[str, Any]) -> bool:
    """Whether every value of `kept` is a content key's shape (lowercase hex, `_KEY_LENGTH` long),
    told in a few calls over all of them; False: each is told as it is looked up, and one of
    another shape is a miss for its file alone."""
    values = list(kept.values())
    try:
        joined = "".join(values)  # a TypeError for anything but strings
    except TypeError:
        return False
    return set(map(len, values)) <= {_KEY_LENGTH} and joined.isascii() and not joined.encode("ascii").translate(None, _HEX_BYTES)


def _read(cache: ParseCache, entry: str) -> dict[str, Any]:
    """The keys kept under `entry`, or none: missing, damaged or of another shape."""
    payload = cache.payload(entry)
    if payload is None:
        return {}
    try:
        value = json.loads(bytes(payload))
    except Exception:  # any shape `save` does not write: a miss
        return {}
    if type(value) is not dict or value.get("format") != FORMAT or type(value.get("keys")) is not dict:
        return {}
    keys: dict[str, Any] = value["keys"]
    return keys
