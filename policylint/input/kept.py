"""The bytes a file was parsed from, kept until positions are resolved, compressed in large runs.

Positions of findings are resolved in the very bytes that were parsed (FileResult.data), never
in the file read again. A run over a large repository keeps every file's bytes to its end: 80 MB
at 100,000 objects of small files, 7% of the run's peak memory. Past `DEFLATE_FROM` bytes kept
in one run, each further file is kept deflated (zlib, fastest level: about a fifth of the size
for manifests) and inflated only when a finding needs a position in it or a suppression comment
may be in it. Smaller runs keep plain bytes: deflating costs more time than their memory is worth.
"""

from __future__ import annotations

import zlib

# Bytes kept plain in one run before the next files are kept deflated: a 10,000-object
# repository (8 MB) pays nothing, a 100,000-object one keeps 22 MB instead of 80.
DEFLATE_FROM = 8 * 1024 * 1024


class Deflated:
    """A file's bytes, deflated; `in` searches the inflated bytes."""

    __slots__ = ("_packed",)

    def __init__(self, data: bytes) -> None:
        self._packed = zlib.compress(data, 1)

    def inflate(self) -> bytes:
        return zlib.decompress(self._packed)

    def __contains__(self, part: bytes) -> bool:
        return part in self.inflate()

    def __len__(self) -> int:
        return len(self._packed)


Kept = bytes | Deflated


def inflated(kept: Kept) -> bytes:
    return kept.inflate() if isinstance(kept, Deflated) else kept


class Keeper:
    """Keeps the files of one run: plain until `limit` bytes are kept, deflated after."""

    def __init__(self, limit: int | None = None) -> None:
        self._left = DEFLATE_FROM if limit is None else limit

    def keep(self, data: bytes) -> Kept:
        if self._left >= len(data):
            self._left -= len(data)
            return data
        self._left = 0
        return Deflated(data)
