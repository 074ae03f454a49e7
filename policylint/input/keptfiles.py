"""What later runs keep about each file: one entry of the parse cache (policylint.input.cache) per
file, named by the file's content key (or, for what is kept by an object's own content, by the
file's name), holding a part per kind of thing kept: the admission verdicts of its objects
(policylint.input.verdictstore) and what the per-object rules found on them
(policylint.incremental.rulecache).

Each was an entry of its own. A run that fills the cache then wrote three files per file (its
parse entry, its verdicts, its rule results), and creating files is what those writes cost, most
of it in the kernel (docs/performance.md, "One entry per file for what is kept"); a warm run opened
three per file. Both parts are worked out in the same run and written at its end, so they are
written together (`save`), once per file, and read together: the first time either part is asked
for (`take`), the entry is read, the part asked for handed over and the other held as its text,
undecoded, until it is asked for too. A run whose per-object rules run in `--jobs` shares never
asks for the rule results and never decodes them.

An entry's payload is each part's text, one after the other, then a line holding the footer:
`{"format":1,"parts":[[name, stamp, length], ...]}`. A part's stamp (hex) is what its owner says
besides the file shapes it (its format and the code that works it out): a part under another
stamp is not handed over, and is written anew by a run that holds that part of the file. The
footer's lengths must add up to the payload, else the entry is a miss; a part's text is checked by
its owner like any entry (`read_map`, then each key and value). A part of an entry this run read
and did not ask for is written back as it was read (another configuration's rule results beside
this run's verdicts); so is a part whose owner holds nothing of the file.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from policylint.input.cache import ParseCache

# Bump when the entry's layout changes (a part's own layout is its stamp's).
FORMAT = 1
_NAME = "what is kept of a file"
# A part's name as the owners write it.
_PART = re.compile(r"[a-z]{1,16}\Z")
_STAMP = re.compile(r"[0-9a-f]{0,256}\Z")

# What is held of a file whose entry holds no part not handed over yet: one object for them all,
# never changed (a run reads the entries of 33,000 files at 100,000 objects).
_NOTHING: dict[str, tuple[str, bytes]] = {}

# The text of an owner's part of a file, in parts (policylint.input.jsonparts); None: it holds
# nothing of the file.
PartText = Callable[[str], Iterable[bytes] | None]


class KeptFiles:
    """The entries of what is kept per file, read the first time a part is asked for, written at
    the end of a run (`save`) for each file an owner changed (`changed`)."""

    def __init__(self, cache: ParseCache, new: Callable[[str], bool] | None = None) -> None:
        """`new`: whether a file's content key is new to the cache in this run
        (`ParseCache.wrote`): nothing is kept for it, and its entry is not looked for."""
        self._cache = cache
        self._new = new
        # Per file (its content key, or a name): the parts read and not handed over yet, by name,
        # with their stamps. A file is in it once its entry was read (a file new to the cache
        # never is: nothing is read of it).
        self._held: dict[str, dict[str, tuple[str, bytes]]] = {}
        # Per part: its stamp and how its owner writes it.
        self._owners: dict[str, tuple[str, PartText]] = {}
        self._changed: set[str] = set()

    @property
    def cache(self) -> ParseCache:
        return self._cache

    def entry(self, where: str) -> str:
        """The cache entry of the file `where` (kept from pruning while the file's parse entry is:
        `ParseCache.keep_beside`)."""
        return self._cache.named(_NAME, FORMAT.to_bytes(2, "big") + where.encode("utf-8", "surrogateescape"))

    def own(self, part: str, stamp: bytes, text: PartText) -> None:
        """`part` of every file is written by `text`, under `stamp`."""
        self._owners[part] = (stamp.hex(), text)

    def take(self, where: str, part: str) -> bytes | None:
        """The text of `part` of the file `where` as kept, under its owner's stamp; None when there
        is none. Handed over once: its owner holds what it decodes from it."""
        held = self._read(where)
        found = held.get(part)
        if found is None or found[0] != self._owners[part][0]:
            return None  # another stamp's: written back as it was unless the owner writes the part
        del held[part]
        if not held:
            self._held[where] = _NOTHING
        return found[1]

    def changed(self, where: str) -> None:
        """An owner holds something new of the file: its entry is written by `save`."""
        self._changed.add(where)

    def save(self) -> None:
        """Write the entry of each file changed since the last save: each part as its owner holds
        it, else as it was read (in the order of the parts' names, so that the same run writes the
        same bytes)."""
        changed, self._changed = self._changed, set()
        for where in sorted(changed):
            held = self._read(where)
            parts: list[tuple[str, str, Iterable[bytes]]] = []
            for part in sorted({*self._owners, *held}):
                owner = self._owners.get(part)
                text = owner[1](where) if owner is not None else None
                if owner is not None and text is not None:
                    parts.append((part, owner[0], text))
                elif part in held:
                    stamp, kept = held[part]
                    parts.append((part, stamp, (kept,)))
            if parts:
                self._cache.put(self.entry(where), _payload(parts))

    def _read(self, where: str) -> dict[str, tuple[str, bytes]]:
        """The parts of the file's entry not handed over yet, read the first time it is asked for."""
        held = self._held.get(where)
        if held is None:
            if self._new is not None and self._new(where):
                return _NOTHING  # nothing is kept of it, and nothing need be held to say so
            held = self._held[where] = _parts(self._cache.payload(self.entry(where))) or _NOTHING
        return held


def _payload(parts: list[tuple[str, str, Iterable[bytes]]]) -> Iterator[bytes]:
    """Each part's text as it comes, then the footer with the length of each."""
    footer = []
    for part, stamp, text in parts:
        size = 0
        for chunk in text:
            size += len(chunk)
            yield chunk
        footer.append([part, stamp, size])
    yield b"\n" + json.dumps({"format": FORMAT, "parts": footer}, separators=(",", ":")).encode("ascii")


def _parts(payload: memoryview | None) -> dict[str, tuple[str, bytes]]:
    """The parts of an entry's payload by name, with their stamps; none unless the footer is what
    `_payload` writes and its lengths add up to the payload's."""
    if payload is None:
        return {}
    data = bytes(payload)
    end = data.rfind(b"\n")
    try:
        footer = json.loads(data[end + 1 :]) if end >= 0 else None
    except Exception:
        return {}
    if type(footer) is not dict or type(footer.get("format")) is not int or footer["format"] != FORMAT:
        return {}  # not a footer, or another layout's (`true` is no format)
    rows = footer.get("parts")
    if type(rows) is not list:
        return {}
    parts: dict[str, tuple[str, bytes]] = {}
    at = 0
    for row in rows:
        if type(row) is not list or len(row) != 3:
            return {}
        part, stamp, size = row
        if (
            type(part) is not str
            or type(stamp) is not str
            or type(size) is not int
            or not _PART.match(part)
            or not _STAMP.match(stamp)
            or part in parts
            or size < 0
        ):
            return {}
        parts[part] = (stamp, data[at : at + size])
        at += size
    return parts if at == end else {}
