"""The admission verdicts kept between runs: a part of the entry kept per file
(policylint.input.keptfiles), named by the file's content key, holding what the verdicts of its
objects that nothing refuses hold, by a key that hashes what decides each
(policylint.k8s.verdicts.kept_key)."""

from __future__ import annotations

import hashlib
import re
from typing import TYPE_CHECKING, Any

from policylint.input.jsonparts import map_parts, read_map
from policylint.input.sharing import shared_tree

if TYPE_CHECKING:
    from collections.abc import Iterator

    from policylint.incremental.previous import Previous
    from policylint.input.keptfiles import KeptFiles
    from policylint.input.load import Shared

# Bump when the layout or meaning of what is kept changes. 1: one entry for every file; 2: one
# per file; 3: a part of the entry kept per file (policylint.input.keptfiles).
FORMAT = 3
# Its part of the entry kept per file.
PART = "verdicts"
# A key is a 16-byte digest (policylint.k8s.verdicts.kept_key), written as 32 hex digits.
VERDICT_KEY_BYTES = 16
_VERDICT_KEY = re.compile(rf"[0-9a-f]{{{2 * VERDICT_KEY_BYTES}}}\Z")
# A file's content key as the parse cache writes it (`ParseCache.key`).
_FILE_KEY = re.compile(r"[0-9a-f]{40}\Z")
# A file's entry keeps at least this many verdicts; past it and past four times those its run
# used or added, only those (the same bytes checked against many schemas over time, as CRDs and
# releases change, would otherwise pile up under one content key).
_MIN_KEPT = 4096

# Where a verdict is kept: its file's content key (which names the entry) and its own digest.
KeptKey = tuple[str, bytes]


def by_name(file: str) -> str:
    """Where the verdicts kept by an object's own content are (policylint.k8s.verdicts.content_key):
    under its file's name, whatever the file's content, so that an edited file finds its unchanged
    objects' verdicts. Written as a content key is, which no content key can be: those hash the
    loader's stamp and the bytes."""
    return hashlib.blake2b(b"verdicts by file name\x00" + file.encode("utf-8", "surrogateescape"), digest_size=20).hexdigest()


class VerdictStore:
    """What the admission verdicts of objects nothing refuses hold, kept between runs in the parse
    cache, a part of the entry kept per file content (policylint.input.keptfiles;
    policylint.k8s.admission says what a key and a value are).

    The schema walk and the CEL rules are a quarter of a run (docs/performance.md); between two
    commits almost every object and schema is unchanged. A key hashes the object's file entry, its
    place in the file and the schema that decides it, so that, as with files, nothing can make
    an entry stale. A file's entry is read the first time a verdict of its objects is asked for,
    so a run that analyses a part reads only the entries of the files whose objects it judges, and
    written at the end of a run that added to it, so a one-file change writes one small entry: one
    entry for every file was read and decoded whole by every run, and written whole again once a
    changed file's objects were added (0.04-0.07 s of the pre-commit hook at 10,000 objects).
    Concurrent runs may lose each other's additions (a miss later, never a wrong verdict). An
    entry's content is checked like every entry's: a value that is not what `admission` writes is
    a miss. Keys are held as digests, written as hex: of 3.3 per object, held to the end of the
    rules stage where a run's memory peaks, a 32-character string is 32 bytes more each (10 MiB at
    100k objects).
    """

    def __init__(self, files: KeptFiles, stamp: bytes) -> None:
        """`files`: the entries kept per file, whose verdicts part this store reads and writes.
        `stamp`: what besides an object and its schema decides its verdict (the code that works it
        out), so that a part written by other code is not taken."""
        self._files = files
        files.own(PART, FORMAT.to_bytes(2, "big") + stamp, self._text)
        # Per file content key: what its entry holds (read when first asked for), what this
        # process added, and which kept keys it used.
        self._kept: dict[str, dict[bytes, Any]] = {}
        self._added: dict[str, dict[bytes, Any]] = {}
        self._used: dict[str, set[bytes]] = {}
        # Verdicts repeat: at 100k objects a handful of distinct values stand for 300,000 entries,
        # most of them `[]`. Each value is held once (policylint.input.sharing): the entries read
        # held ~45 MiB at 20k objects as one list per entry, and those added as many again. No
        # reader changes a value (`admission` copies what it takes).
        self._values: Shared = {}
        # Whether a verdict of an object whose file is new to the cache is looked up, and kept, by
        # the object's own content too (`by_name`): set for a run that analyses a part (the
        # pre-commit hook, an editor's edit, policylint.incremental.opened), where one edited
        # file's objects are most of the verdicts worked out. A whole run that fills the cache
        # would pay a digest of every object, 12 us each, and an entry more per file.
        self.by_content = False
        # The content each file had when a whole run last read it (policylint.incremental.previous),
        # through which such a file's first edit since finds the verdicts its unchanged objects had
        # there (policylint.k8s.verdicts `earlier_keys`). The per-object rules' results read the
        # same instance (policylint.incremental.opened), so that a file's earlier content is read
        # and cut into objects once per run. None: not looked up.
        self.previous: Previous | None = None

    @property
    def files(self) -> KeptFiles:
        """The entries kept per file, which the per-object rules' results are a part of too."""
        return self._files

    def entry(self, file_key: str) -> str:
        """The cache entry holding the verdicts of the objects of the file whose content key is
        `file_key` (a run's cache keeps it while it keeps the file's: `ParseCache.keep_beside`)."""
        return self._files.entry(file_key)

    def _file(self, file_key: str) -> dict[bytes, Any]:
        kept = self._kept.get(file_key)
        if kept is None:
            kept = self._kept[file_key] = self._read(file_key)
        return kept

    def _read(self, file_key: str) -> dict[bytes, Any]:
        """What the file's part holds: nothing unless it is what `save` writes, less every verdict
        under a key that is not one; nothing asked for when the file is new to the cache."""
        entries = read_map(self._files.take(file_key, PART))
        values = self._values
        return {bytes.fromhex(k): shared_tree(values, v) for k, v in entries.items() if _VERDICT_KEY.match(k)}

    def get(self, key: KeptKey) -> Any:
        """The value kept under `key`, or None."""
        file_key, digest = key
        added = self._added.get(file_key)
        found = added.get(digest) if added is not None else None
        if found is None:
            found = self._file(file_key).get(digest)
            if found is not None:
                self._used.setdefault(file_key, set()).add(digest)
        return found

    def add(self, key: KeptKey, value: Any) -> None:
        file_key, digest = key
        # New, or a kept value the reader refused: written anew. A file none of whose verdicts
        # this process asked for (another process's additions, `update`) is compared when saved.
        kept = self._kept.get(file_key)
        if kept is None or kept.get(digest) != value:
            self._added.setdefault(file_key, {})[digest] = shared_tree(self._values, value)

    def added(self) -> dict[str, dict[bytes, Any]]:
        """What this process added, by file content key (a `--jobs` rule process sends it back)."""
        return {file_key: dict(entries) for file_key, entries in self._added.items()}

    def update(self, entries: Any) -> None:
        """Entries another process of this run added (`added`), each key and digest checked."""
        if type(entries) is not dict:
            return
        for file_key, added in entries.items():
            if type(file_key) is str and _FILE_KEY.match(file_key) and type(added) is dict:
                for digest, value in added.items():
                    if type(digest) is bytes and len(digest) == VERDICT_KEY_BYTES:
                        self.add((file_key, digest), value)

    def save(self) -> None:
        """Hold, for the entry of each file this run added verdicts to, what it held and what was
        added; the entry is written with the file's other parts (`KeptFiles.save`, at the end of
        the run)."""
        for file_key in sorted(self._added):
            fresh = self._added[file_key]
            kept = self._file(file_key)
            if kept:
                fresh = {digest: value for digest, value in fresh.items() if kept.get(digest) != value}
                if not fresh:
                    continue
                used = self._used.get(file_key, set())
                if len(kept) + len(fresh) > max(_MIN_KEPT, 4 * (len(used) + len(fresh))):
                    kept = {digest: kept[digest] for digest in used}
                # Into what was kept, not a copy of both.
                kept.update(fresh)
            else:
                kept = fresh  # a run that fills the cache adds every entry: not copied
            self._kept[file_key] = kept
            self._files.changed(file_key)
        self._added = {}

    def _text(self, file_key: str) -> Iterator[bytes] | None:
        """The file's part as it is written, encoded as it is written (policylint.input.jsonparts):
        a run that fills the cache writes it where its memory peaks."""
        kept = self._kept.get(file_key)
        if not kept:
            return None
        return map_parts("", ((digest.hex(), value) for digest, value in kept.items()), "")
