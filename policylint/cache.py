"""Parse cache: what loading a file produces, keyed by the file's content.

Parsing is most of a run (design.md §4), and between two commits almost every
file is unchanged. For each file the cache keeps exactly what `load_bytes`
returns -- the documents' plain data, where each document starts, and the
input problems found -- in a compact form, under a key that hashes the file's
bytes together with a stamp of everything that shapes the result (policylint's
version, this format, the loader's source and limits, PyYAML and libyaml, the
Python version). Nothing else can make an entry stale, so there is nothing to
invalidate by hand.

Format: `marshal` of plain tuples, behind a magic number and a checksum of the
payload. marshal loads plain data faster than pickle (the loader shares
repeated strings within a file, which marshal writes once); a truncated,
corrupt or foreign entry fails the checksum and is parsed again and rewritten.

Safety: entries are written to a temporary file and renamed into place, so
concurrent runs only ever see whole entries. The directory is created on the
first write, with a `.gitignore` holding `*` (so it is never committed) and a
CACHEDIR.TAG; when it cannot be created or written (a read-only checkout) the
run goes on without a cache and writes nothing. Input read from stdin is never
cached. The file names reported are not part of an entry: they are supplied
again on every load, so one entry serves the same content under any name.
"""

from __future__ import annotations

import hashlib
import marshal
import os
import sys
import tempfile
import time
from collections.abc import Iterable
from typing import Any

from policylint import __version__
from policylint.findings import Issue, Location
from policylint.load import Document, DocumentRef, FileResult

DEFAULT_DIR = ".policylint_cache"
ENV_DIR = "POLICYLINT_CACHE_DIR"
# Bump when the packed layout below changes (the loader's own source is hashed into the stamp).
FORMAT = 1
_MAGIC = b"PLPC\x00\x00\x00\x01"
_DIGEST = 16
_HEADER = len(_MAGIC) + _DIGEST
_MARSHAL_VERSION = 4
_SUBDIR = "parse"
_GITIGNORE = "# Created by policylint: a cache, never committed.\n*\n"
# https://bford.info/cachedir/: backup tools skip directories holding this tag.
_CACHEDIR_TAG = (
    "Signature: 8a477f597d28d172789f06886806bc55\n"
    "# This file is a cache directory tag created by policylint.\n"
    "# For information about cache directory tags see https://bford.info/cachedir/\n"
)
# Entries are never stale (content-addressed) but accumulate as files change; past this many,
# the oldest entries the current run did not use are removed.
_MAX_ENTRIES = 4096
_STALE_TEMP_SECONDS = 3600

Packed = tuple[tuple[tuple[int, int, int, int, int, Any], ...], tuple[tuple[str, str, int, int], ...]]


def pack(result: FileResult) -> Packed:
    """A FileResult as plain tuples, without the file name (supplied again by `unpack`)."""
    documents = tuple(
        (d.ref.chunk_start, d.ref.line_offset, d.ref.doc_in_chunk, d.ref.line, d.ref.column, d.data) for d in result.documents
    )
    issues = []
    for issue in result.issues:
        # The loader reports every problem at a fixed location (never on an object or path).
        loc = issue.location
        assert loc is not None and issue.object is None and issue.document is None and not issue.path
        issues.append((issue.rule_id, issue.message, loc.line, loc.column))
    return documents, tuple(issues)


def unpack(packed: Packed, file: str) -> FileResult:
    documents, issues = packed
    return FileResult(
        [Document(DocumentRef(file, cs, lo, dic, line, col), data) for cs, lo, dic, line, col, data in documents],
        [Issue(rule_id=rule, message=message, location=Location(file, line, col)) for rule, message, line, col in issues],
    )


def dumps(packed: Packed) -> bytes:
    """The payload of an entry; raises ValueError for data marshal cannot write (never from the loader)."""
    return marshal.dumps(packed, _MARSHAL_VERSION)


def loads(payload: bytes) -> Packed:
    return marshal.loads(payload)  # type: ignore[no-any-return]


def _stamp() -> bytes:
    """Everything besides the bytes of a file that decides what loading it produces."""
    import yaml

    from policylint import load

    try:
        libyaml = yaml._yaml.get_version_string()  # type: ignore[attr-defined]
    except AttributeError:
        libyaml = "none"
    h = hashlib.blake2b(digest_size=16)
    h.update(
        f"{__version__}|{FORMAT}|{sys.implementation.cache_tag}|{marshal.version}|{yaml.__version__}|{libyaml}".encode()
    )
    # The loader's limits as they are now (an embedding program or a test may change them).
    h.update(repr((load.MAX_FILE_BYTES, load.MAX_DEPTH, load.MAX_EXPANDED_NODES, load.LOADER.__name__)).encode())
    # A development checkout changes the loader without changing the version: hash its source.
    for module_file in (load.__file__, __file__):
        try:
            with open(module_file, "rb") as fh:
                h.update(fh.read())
        except (OSError, TypeError):
            h.update(b"?")
    return h.digest()


class ParseCache:
    """One cache directory. Every failure to read or write is a cache miss, never an error."""

    def __init__(self, directory: str | os.PathLike[str]) -> None:
        self.directory = os.fspath(directory)
        self._entries = os.path.join(self.directory, _SUBDIR)
        self._stamp = _stamp()
        self._writable: bool | None = None  # decided on the first write
        self._used: set[str] = set()
        self.hits = 0
        self.writes = 0

    def key(self, data: bytes) -> str:
        h = hashlib.blake2b(self._stamp, digest_size=20)
        h.update(data)
        return h.hexdigest()

    def get(self, key: str) -> Packed | None:
        self._used.add(key)
        try:
            with open(os.path.join(self._entries, key), "rb") as fh:
                blob = fh.read()
        except OSError:
            return None
        payload = memoryview(blob)[_HEADER:]
        if blob[: len(_MAGIC)] != _MAGIC or hashlib.blake2b(payload, digest_size=_DIGEST).digest() != blob[len(_MAGIC) : _HEADER]:
            return None  # truncated, corrupt or foreign: parsed again and rewritten
        try:
            packed = loads(payload)
        except (ValueError, EOFError, TypeError):
            return None
        self.hits += 1
        return packed

    def put(self, key: str, payload: bytes) -> None:
        self._used.add(key)
        if not self._ensure_directory():
            return
        blob = b"".join((_MAGIC, hashlib.blake2b(payload, digest_size=_DIGEST).digest(), payload))
        try:
            fd, tmp = tempfile.mkstemp(prefix=".tmp-", dir=self._entries)
        except OSError:
            self._writable = False
            return
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(blob)
            os.replace(tmp, os.path.join(self._entries, key))  # atomic: readers see all of it or nothing
            self.writes += 1
        except OSError:
            self._writable = False
            try:
                os.unlink(tmp)
            except OSError:
                pass

    def note_written(self, key: str) -> None:
        """An entry another process (a `--jobs` worker) wrote for this run."""
        self._used.add(key)
        self.writes += 1

    def _ensure_directory(self) -> bool:
        if self._writable is not None:
            return self._writable
        self._writable = False
        try:
            created = False
            if not os.path.isdir(self.directory):
                try:
                    os.makedirs(self.directory)
                    created = True
                except FileExistsError:
                    pass  # another run created it meanwhile
            if created:
                # Git-ignored from the start, wherever it is created (ruff and pytest do the same).
                for name, text in ((".gitignore", _GITIGNORE), ("CACHEDIR.TAG", _CACHEDIR_TAG)):
                    with open(os.path.join(self.directory, name), "w", encoding="utf-8") as fh:
                        fh.write(text)
            os.makedirs(self._entries, exist_ok=True)
        except OSError:
            return False
        self._writable = os.access(self._entries, os.W_OK)
        return self._writable

    def prune(self, keep: Iterable[str] = ()) -> None:
        """Bound the directory: drop leftovers of interrupted writes and, past the limit, old unused entries."""
        if not self.writes:
            return  # a run that wrote nothing leaves the directory as it found it
        keep_set = self._used.union(keep)
        now = time.time()
        entries: list[tuple[float, str]] = []
        try:
            with os.scandir(self._entries) as it:
                for entry in it:
                    try:
                        mtime = entry.stat(follow_symlinks=False).st_mtime
                    except OSError:
                        continue
                    if entry.name.startswith(".tmp-"):
                        if now - mtime > _STALE_TEMP_SECONDS:
                            _unlink(entry.path)
                    elif entry.name not in keep_set:
                        entries.append((mtime, entry.path))
        except OSError:
            return
        limit = max(_MAX_ENTRIES, 4 * len(keep_set))
        excess = len(entries) + len(keep_set) - limit
        if excess <= 0:
            return
        entries.sort()
        for _, path in entries[: excess + limit // 2]:
            _unlink(path)


def _unlink(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


def open_cache(directory: str | os.PathLike[str] | None) -> ParseCache | None:
    return None if directory is None else ParseCache(directory)
