"""The shells of a run's files kept as one entry of the cache (`Pack`), beside their own entries
(policylint.incremental.shells).
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from policylint.input.cache import ParseCache

# The shells of the last run's files, one entry (`Pack`).
_NAME = "shells of a run's files"
# Its first line; each line after it is an entry's name, a space and that entry's payload as written.
HEADER = b'{"format":1,"pack":"shells"}'
# The pack is written again once the entries it lacks or holds beyond a run's pass 1/_SLACK of them.
_SLACK = 8


class Pack:
    """The shells of the last run's files as one entry: a repository of 3,319 files read them as
    3,319 entries, each opened, read and checksummed (0.1-0.2 s of a hook run's CPU on the
    benchmark's messy and shared corpora, docs/performance.md), where one entry is one read and
    one checksum.

    The pack is named by the working directory (where a hook runs: its repository's top) and
    the code's stamp, and lives beside the entries it packs, under the parse cache's trust rules
    (policylint.input.cache: outside the checkout, this user's, behind one checksum): a pack
    damaged, foreign or of another layout is no pack, and each file's own entry is read, as
    before. It holds, by entry name, the very bytes `Session.remember` wrote under that name,
    decoded and checked as that entry is (policylint.incremental.shells), so a pack gives no
    shell the file's own entry would not. It is written with the entries a run read or wrote
    alone, when they differ from what it held by more than an eighth (`save`), so it stays about
    the size of the run's files."""

    def __init__(self, cache: ParseCache, stamp: bytes, *, packed: bool = True) -> None:
        """`packed`: the pack read and written; else each entry read from its own file alone."""
        self.cache = cache
        self.entry = cache.named(_NAME, stamp + os.fsencode(os.getcwd()))
        self.packed = packed
        self._held: dict[bytes, bytes] | None = None  # read when the first shell is asked for
        self._used: dict[bytes, bytes] = {}

    def payload(self, entry: str) -> bytes | None:
        """The payload of the shell entry `entry`: from the pack, else from the entry itself
        (and packed)."""
        if not self.packed:
            return _payload(self.cache, entry)
        if self._held is None:
            self._held = unpacked(self.cache.payload(self.entry))
        name = entry.encode("ascii")
        raw = self._held.get(name)
        if raw is None:
            raw = _payload(self.cache, entry)
            if raw is None:
                return None
            if b"\n" in raw:
                return raw  # not what `remember` writes (compact JSON holds no line break): not packed
        self._used[name] = raw
        return raw

    def add(self, entry: str, payload: bytes) -> None:
        """The payload a run wrote under `entry`."""
        if self._held is None:
            # Asked for no shell (the first run over these files, or one not packed): packed
            # from the next run on, which reads them.
            if not self.packed:
                return
            self._held = {}
        self._used[entry.encode("ascii")] = payload

    def save(self) -> None:
        """Write the pack again when what it lacks of this run's entries, or holds beyond them,
        passes an eighth of them: a hook run after a value changed adds one file's shell, which
        the next run reads from its own entry, where writing the pack again cost 0.02 s of CPU
        for 3,319 files. So a pack holds at most an eighth more than a run's files."""
        if self._held is None:
            return  # not packed, or no shell asked for
        held = self._held
        off = sum(1 for name in self._used if name not in held) + sum(1 for name in held if name not in self._used)
        if off == 0 or off * _SLACK <= len(self._used):
            return
        lines = [HEADER]
        for name in sorted(self._used):
            lines.append(name + b" " + self._used[name])
        self.cache.put(self.entry, b"\n".join(lines))


def unpacked(payload: memoryview | None) -> dict[bytes, bytes]:
    """The entries a pack holds by content key; none if it is not a pack as `Pack.save` writes it."""
    if payload is None:
        return {}
    lines = bytes(payload).split(b"\n")
    if lines[0] != HEADER:
        return {}
    held: dict[bytes, bytes] = {}
    for line in lines[1:]:
        key, space, raw = line.partition(b" ")
        if not space:
            return {}
        held[key] = raw
    return held


def _payload(cache: ParseCache, entry: str) -> bytes | None:
    payload = cache.payload(entry)
    return bytes(payload) if payload is not None else None
