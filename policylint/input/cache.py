"""Parse cache: what loading a file produces, keyed by the file's content.

Parsing is most of a run (docs/performance.md), and between two commits almost
every file is unchanged. For each file the cache keeps exactly what
`load_bytes` returns -- the documents' plain data, where each document starts,
and the input problems found -- in a compact form, under a key that hashes the
file's bytes together with a stamp of everything that shapes the result
(policylint's version, this format, the loader's source and limits, PyYAML and
libyaml, the Python version). Nothing else can make an entry stale, so there is
nothing to invalidate by hand.

Where: outside the repository being linted. By default the user's cache
directory (`$XDG_CACHE_HOME/policylint`, else `~/.cache/policylint` on Linux;
`~/Library/Caches/policylint` on macOS; `%LOCALAPPDATA%\\policylint\\Cache` on
Windows); `$POLICYLINT_CACHE_DIR` or `--cache-dir` override it. Whoever can
write into the cache directory decides what policylint believes the files say,
so a directory is used only when this user alone can write it and policylint
made it (see `inspect_directory`), and never when it lies inside a linted path
or inside the git work tree of one (`open_cache`): in CI the checkout is the
pull request's, and a committed cache would let it switch the gate off.

Format: JSON of plain lists (`dumps`), behind a magic number and a BLAKE2b
checksum of the payload; on reading, the payload is decoded and its shape
checked (`loads`), and any failure is a miss: the file is parsed again and the
entry rewritten. FORMAT 1 was `marshal`, which loads about twice as fast, but
the CPython documentation warns that marshal is not secure against erroneous
or maliciously constructed data: hostile entries made runs exit 2, reserve
terabytes of memory, or crash the interpreter. JSON decoding builds only plain
data, and the loader's data is JSON already (str keys; str, int, float, bool
and None values; non-finite floats are kept). Safety costs speed: on the
10k-object corpus (100 entries) loading every entry takes 0.13 s of CPU
instead of 0.07 s, encoding 0.11 s instead of 0.04 s (docs/performance.md).

Beside a file's entry, one more per file keeps what later runs reuse about its objects
(policylint.input.keptfiles): the admission verdicts of those nothing refuses
(policylint.input.verdictstore), which the schema rules and the topology would otherwise work out
again in every run, and what the per-object rules found (policylint.incremental.rulecache).

Safety: entries are written to a temporary file and renamed into place, so
concurrent runs only ever see whole entries. The directory is created on the
first write, mode 0o700, with a CACHEDIR.TAG (https://bford.info/cachedir/),
which marks it as policylint's, and a `.gitignore` holding `*`; when it cannot
be created or written the run goes on without a cache and writes nothing.
Pruning removes only files named like entries or like its own temporary files,
inside an entries directory that is a real directory of a tagged cache
directory. Input read from stdin is never cached. The file names reported are
not part of an entry: they are supplied again on every load, so one entry
serves the same content under any name.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import stat
import sys
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import Any

from policylint import __version__
from policylint.findings import Issue, Location
from policylint.identity import IdentityMap
from policylint.input.entryfile import DIGEST, TEMP_PREFIX, open_temp, write_entry
from policylint.input.load import SHARED_STRING_MAX, Document, DocumentRef, FileResult, Shared
from policylint.input.sharing import shared_decoded_list
from policylint.input.sharing import shared_map as share_map

ENV_DIR = "POLICYLINT_CACHE_DIR"
APP_NAME = "policylint"
# Bump when the packed layout or its encoding changes (the loader's own source is hashed into the
# stamp). 1: marshal; 2: JSON, validated on reading.
FORMAT = 2
_MAGIC = b"PLPC\x00\x00\x00\x02"
_DIGEST = DIGEST
_HEADER = len(_MAGIC) + _DIGEST
_SUBDIR = "parse"
_TAG_NAME = "CACHEDIR.TAG"
_GITIGNORE = "# Created by policylint: a cache, never committed.\n*\n"
# https://bford.info/cachedir/: backup tools skip directories holding this tag. The whole text,
# not only the standard signature, marks a directory as policylint's: other tools write the
# signature too.
_CACHEDIR_TAG = (
    "Signature: 8a477f597d28d172789f06886806bc55\n"
    "# This file is a cache directory tag created by policylint.\n"
    "# For information about cache directory tags see https://bford.info/cachedir/\n"
)
# Entries are never stale (content-addressed) but accumulate as files change; past this many,
# the oldest entries the current run did not use are removed.
_MAX_ENTRIES = 4096
_STALE_TEMP_SECONDS = 3600
_KEY_BYTES = 20
# The only names pruning may delete: entries (the hex key) and the temporary files `put` makes
# (policylint.input.entryfile, else tempfile.mkstemp: the prefix, then 8 of mkstemp's characters).
_TEMP_PREFIX = TEMP_PREFIX
_ENTRY_NAME = re.compile(rf"[0-9a-f]{{{2 * _KEY_BYTES}}}\Z")
_TEMP_NAME = re.compile(rf"{re.escape(_TEMP_PREFIX)}[a-z0-9_]{{8}}\Z")
# The loader reports input problems only (PL0xx): an entry naming any other id is not one it wrote.
_RULE_ID = re.compile(r"PL0[0-9]{2}\Z")
_DIR_MODE = 0o700
# How long a run that finds the directory just created by another run waits for its tag.
_TAG_WAIT_SECONDS = 1.0
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)

# ensure_ascii: any string (a lone surrogate included) is written as escapes and read back as it
# was, and the payload is plain ASCII; allow_nan: non-finite floats are kept as floats.
# check_circular=False saves a fifth of the time: the loader's data is never cyclic (it refuses
# recursive aliases), and a cycle would only end in RecursionError, which `dumps` reports.
_ENCODER = json.JSONEncoder(ensure_ascii=True, allow_nan=True, check_circular=False, separators=(",", ":"))

DocumentRow = tuple[int, int, int, int, int, Any]
IssueRow = tuple[str, str, int, int]
Packed = tuple[tuple[DocumentRow, ...], tuple[IssueRow, ...]]


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
    """The payload of an entry (ASCII JSON); raises ValueError for data JSON cannot hold.

    The loader never produces such data; ints of more digits than Python converts
    (sys.get_int_max_str_digits) are kept as strings by the loader already.
    """
    try:
        return _ENCODER.encode(packed).encode("ascii")
    except (TypeError, OverflowError, RecursionError) as exc:
        raise ValueError(f"cannot encode a cache entry: {exc}") from exc


def sharing_decoder(strings: Shared) -> json.JSONDecoder:
    """A JSON decoder whose maps share their keys, short strings and integers through `strings`,
    the table the loader shares them through (policylint.input.load): one object each for the
    run, whether a file was parsed or read from the cache. `json` makes new objects for every
    value, and for every key of another entry: at 100k objects a warm run held ~120 MiB more
    than the cold run that filled the cache (docs/performance.md, "Parse cache")."""
    get, intern = strings.get, sys.intern

    def shared_map(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        out = {}
        for key, value in pairs:
            k = get(key)
            if k is None:
                k = strings[key] = intern(key)
            cls = value.__class__
            if (cls is str and len(value) <= SHARED_STRING_MAX) or cls is int:
                v = get(value)
                if v is None:
                    v = strings[value] = intern(value) if cls is str else value
                value = v
            elif cls is list:
                value = shared_decoded_list(strings, value)
            out[k] = value
        # Maps and lists of the same content are one object (policylint.input.sharing).
        return share_map(strings, out)

    return json.JSONDecoder(object_pairs_hook=shared_map)


# How much of the entries a run reads one by one (a scoped run's files outside the loading,
# policylint.k8s.lazy) is decoded without sharing: about ten thousand objects' worth.
PLAIN_BYTES = 8 << 20


class ThriftyDecoder(json.JSONDecoder):
    """Decodes the first `plain_bytes` of text plainly, the rest as `sharing_decoder(strings)`.

    The sharing decoder's hook runs in Python for every map: decoding the 17 entries a hook run's
    part reads took 0.053 s through it and 0.015 s plainly (a tenth of that run's analysis). What
    sharing saves is memory, which counts when a run reads most of a large repository's files,
    not the few its part reaches; the data decoded is the same either way."""

    def __init__(self, strings: Shared, plain_bytes: int | None = None) -> None:
        super().__init__()
        self._shared = sharing_decoder(strings)
        self.plain_left = PLAIN_BYTES if plain_bytes is None else plain_bytes

    def decode(self, s: str, _w: Callable[..., Any] | None = None) -> Any:
        if len(s) <= self.plain_left:
            self.plain_left -= len(s)
            return super().decode(s)
        self.plain_left = 0  # one entry past it: from then on the run reads many
        return self._shared.decode(s)


def loads(payload: bytes | memoryview, decoder: json.JSONDecoder | None = None) -> Packed:
    """The packed tuples of an entry's payload, checked position by position (decoded by
    `decoder`, if given: `sharing_decoder`).

    Raises (ValueError, UnicodeDecodeError, RecursionError, MemoryError, ...) on anything `dumps`
    did not write; callers treat every exception as a miss. JSON decoding only builds plain data,
    whatever the bytes are; the checks below make sure `unpack` gets the types it expects.
    """
    text = str(payload, "ascii")
    decoded = json.loads(text) if decoder is None else decoder.decode(text)
    if type(decoded) is not list or len(decoded) != 2:
        raise ValueError("cache entry: not a pair")
    raw_documents, raw_issues = decoded
    if type(raw_documents) is not list or type(raw_issues) is not list:
        raise ValueError("cache entry: not two lists")
    documents: list[DocumentRow] = []
    for row in raw_documents:
        if type(row) is not list or len(row) != 6:
            raise ValueError("cache entry: malformed document")
        cs, lo, dic, line, col, data = row
        # `type(x) is int`, not isinstance: JSON `true` is a bool, which is an int subclass.
        if not (type(cs) is int and type(lo) is int and type(dic) is int and type(line) is int and type(col) is int):
            raise ValueError("cache entry: malformed document position")
        if min(cs, lo, dic, line, col) < 0:
            raise ValueError("cache entry: negative document position")
        documents.append((cs, lo, dic, line, col, data))
    issues: list[IssueRow] = []
    for row in raw_issues:
        if type(row) is not list or len(row) != 4:
            raise ValueError("cache entry: malformed issue")
        rule, message, line, col = row
        if not (type(rule) is str and type(message) is str and type(line) is int and type(col) is int):
            raise ValueError("cache entry: malformed issue fields")
        if _RULE_ID.match(rule) is None:
            raise ValueError("cache entry: not an input rule id")
        if line < 0 or col < 0:
            raise ValueError("cache entry: negative issue position")
        issues.append((rule, message, line, col))
    return tuple(documents), tuple(issues)


def _stamp() -> bytes:
    """Everything besides the bytes of a file that decides what loading it produces."""
    import yaml

    from policylint.input import bounds, convert, document, load, placeholders, prescan, reader, resolver, templates

    try:
        libyaml = yaml._yaml.get_version_string()
    except AttributeError:
        libyaml = "none"
    h = hashlib.blake2b(digest_size=16)
    h.update(f"{__version__}|{FORMAT}|{sys.implementation.cache_tag}|json|{yaml.__version__}|{libyaml}".encode())
    # The loader's limits as they are now (an embedding program or a test may change them).
    h.update(repr((bounds.limits(), load.LOADER.__name__)).encode())
    # A development checkout changes the loader without changing the version: hash its sources,
    # every module of it, with the placeholders it reports (PL004) that are kept with each file's
    # result.
    loader = (bounds, convert, document, load, placeholders, prescan, reader, resolver, templates)
    hash_sources(h, (*(module.__file__ for module in loader), __file__))
    return h.digest()


def hash_sources(h: Any, files: Iterable[str | None]) -> None:
    """Feed `h` the bytes of each source file (a module's `__file__`); one that cannot be read
    counts as "?". What a stamp holds besides versions: a development checkout changes the code
    without changing policylint's version."""
    for module_file in files:
        try:
            with open(module_file, "rb") as fh:  # type: ignore[arg-type]
                h.update(fh.read())
        except (OSError, TypeError):
            h.update(b"?")


# -- where the cache lives -------------------------------------------------------------------------


def default_directory() -> str | None:
    """The user's cache directory for policylint, outside any repository; None if there is no home.

    The platforms' usual places, as platformdirs' `user_cache_dir` gives them: the XDG Base
    Directory specification on Linux and other Unix systems (a relative `$XDG_CACHE_HOME` is
    ignored, as the specification says), `~/Library/Caches` on macOS, `%LOCALAPPDATA%` on Windows.
    """
    if sys.platform == "win32":
        base = os.environ.get("LOCALAPPDATA") or os.path.join(os.path.expanduser("~"), "AppData", "Local")
        return None if base.startswith("~") else os.path.join(base, APP_NAME, "Cache")
    if sys.platform == "darwin":
        base = os.path.join(os.path.expanduser("~"), "Library", "Caches")
    else:
        xdg = os.environ.get("XDG_CACHE_HOME", "")
        base = xdg if os.path.isabs(xdg) else os.path.join(os.path.expanduser("~"), ".cache")
    return None if base.startswith("~") else os.path.join(base, APP_NAME)


def _is_link(path: str, st: os.stat_result) -> bool:
    if stat.S_ISLNK(st.st_mode):
        return True
    isjunction = getattr(os.path, "isjunction", None)  # Windows directory junctions, Python 3.12+
    return bool(isjunction is not None and isjunction(path))


def _ownership_problem(st: os.stat_result, what: str = "it") -> str | None:
    """Why a directory with this lstat may be written by someone else than this user, or None."""
    geteuid = getattr(os, "geteuid", None)
    if geteuid is None:
        return None  # Windows: no POSIX owner or mode bits to check
    if st.st_uid != geteuid():
        return f"{what} is owned by another user (uid {st.st_uid})"
    if st.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        return f"{what} is group- or world-writable (mode {stat.S_IMODE(st.st_mode):o})"
    return None


def _directory_problem(path: str, what: str) -> str | None:
    """Why the existing `path` is not a directory only this user can write, or None."""
    st = os.lstat(path)
    if _is_link(path, st):
        return f"{what} is a symlink"
    if not stat.S_ISDIR(st.st_mode):
        return f"{what} is not a directory"
    return _ownership_problem(st, what)


def _has_tag(directory: str) -> bool:
    """Whether `directory` holds policylint's CACHEDIR.TAG, as a regular file (never a link)."""
    expected = _CACHEDIR_TAG.encode()
    try:
        fd = os.open(os.path.join(directory, _TAG_NAME), os.O_RDONLY | _NOFOLLOW | getattr(os, "O_NONBLOCK", 0))
    except OSError:
        return False
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return False  # a FIFO or a device would block or never end
        return os.read(fd, len(expected) + 1)[: len(expected)] == expected
    except OSError:
        return False
    finally:
        os.close(fd)


def _is_empty(directory: str) -> bool:
    with os.scandir(directory) as it:
        return next(it, None) is None


def inspect_directory(directory: str) -> tuple[str | None, bool]:
    """(why `directory` must not be used as a cache or None, whether it exists already).

    Used only if it is a real directory (not a symlink, checked with lstat), owned by this user
    and not writable by group or others, and policylint made it: it holds policylint's
    CACHEDIR.TAG, or it is empty (a directory made for the cache, e.g. by `mkdir` or `mktemp -d`,
    then tagged on the first write). Its entries directory, if present, must be a real directory
    owned by this user too. A directory that does not exist yet is fine: it is created on the
    first write, as policylint's.
    """
    try:
        problem = _directory_problem(directory, "it")
    except (FileNotFoundError, NotADirectoryError):
        return None, False  # created on the first write (or found impossible to create, silently)
    except OSError as exc:
        return f"it cannot be inspected ({exc.strerror or exc})", True
    if problem is not None:
        return problem, True
    try:
        if not _has_tag(directory) and not _is_empty(directory):
            return f"it was not created by policylint (no policylint {_TAG_NAME} in it)", True
        problem = _directory_problem(os.path.join(directory, _SUBDIR), f"its {_SUBDIR!r} subdirectory")
    except FileNotFoundError:
        return None, True
    except OSError as exc:
        return f"it cannot be inspected ({exc.strerror or exc})", True
    return problem, True


def _within(path: str, directory: str) -> bool:
    path, directory = os.path.normcase(path), os.path.normcase(directory)
    return path == directory or path.startswith(directory.rstrip(os.sep) + os.sep)


def _work_tree(directory: str) -> str | None:
    """The nearest ancestor of `directory` (itself included) holding `.git`, or None."""
    current = directory
    while True:
        if os.path.lexists(os.path.join(current, ".git")):
            return current
        parent = os.path.dirname(current)
        if parent == current:
            return None
        current = parent


def inside_linted(directory: str, linted: Iterable[str]) -> str | None:
    """Why `directory` lies where the linted input's authors could write it, or None.

    A cache inside a linted directory, or inside the git work tree that holds a linted path (the
    nearest ancestor with `.git`), could have been committed by whoever wrote that repository:
    a pull request linted in CI would choose its own verdict.
    """
    cache = os.path.realpath(directory)
    searched: set[str] = set()  # pre-commit passes many files of few directories
    for path in linted:
        if path == "-":
            continue  # standard input
        real = os.path.realpath(path)
        is_dir = os.path.isdir(real)
        if is_dir and _within(cache, real):
            return f"it lies inside the linted path {path}"
        start = real if is_dir else os.path.dirname(real)
        if start in searched:
            continue
        searched.add(start)
        tree = _work_tree(start)
        if tree is not None and _within(cache, tree):
            return f"it lies inside the git work tree {tree}, which holds the linted path {path}"
    return None


# -- the cache ---------------------------------------------------------------------------------------


class ContentKeys:
    """The parse-cache key of each file's bytes, by the bytes object itself (with the loader's
    stamp and whether the file is JSON, which the key hashes too): worked out once for the same
    bytes, whichever side of a change or which step of a command reads them."""

    def __init__(self) -> None:
        self._keys: IdentityMap[bytes, tuple[bytes, bool, str]] = IdentityMap()

    def key(self, cache: ParseCache, data: bytes, *, json: bool = False, kept: str | None = None) -> str:
        """`cache.key(data, json=json)`, worked out once for the same bytes object; `kept`: their staged blob's kept key."""
        found = self._keys.get(data)
        if found is not None and found[0] == cache.stamp and found[1] is json:
            return found[2]
        key = cache.key(data, json=json) if kept is None else kept
        self._keys[data] = (cache.stamp, json, key)
        return key

    def keep(self, data: Iterable[bytes]) -> None:
        """Hold the keys of these bytes alone (a run's files)."""
        kept: IdentityMap[bytes, tuple[bytes, bool, str]] = IdentityMap()
        for item in data:
            found = self._keys.get(item)
            if found is not None:
                kept[item] = found
        self._keys = kept


class ParseCache:
    """One cache directory. Every failure to read or write is a cache miss, never an error.

    The directory is inspected when the cache is made (`inspect_directory`); `problem` says why it
    is not used, in which case every `get` misses and nothing is written or deleted.
    """

    def __init__(self, directory: str | os.PathLike[str]) -> None:
        self.directory = os.fspath(directory)
        self._entries = os.path.join(self.directory, _SUBDIR)
        self._stamp = _stamp()
        self.problem, self._existed = inspect_directory(self.directory)
        self._writable: bool | None = False if self.problem is not None else None  # decided on the first write
        self._used: set[str] = set()
        # How the entries kept per file beside its parse-cache entry are named from its key.
        self._beside: list[Callable[[str], str]] = []
        self._written: set[str] = set()
        self.hits = 0
        self.writes = 0

    @property
    def stamp(self) -> bytes:
        """What besides a file's bytes its key hashes (the loader's code, limits and versions)."""
        return self._stamp

    def key(self, data: bytes, *, json: bool = False) -> str:
        """The entry of a file's bytes. `json`: the file is named `*.json`, which decides how a
        syntax error is reported (policylint.input.load.is_json_name), so the same bytes under
        another name are another entry."""
        h = hashlib.blake2b(self._stamp, digest_size=_KEY_BYTES)
        h.update(b"\x01" if json else b"\x00")
        h.update(data)
        return h.hexdigest()

    def get(self, key: str) -> Packed | None:
        """The packed entry under `key`, or None: missing, unreadable, corrupt, foreign, any shape
        `dumps` would not write. Nothing in an entry is trusted before it is checked."""
        packed = self._get(key)
        if packed is not None:
            self.hits += 1
        return packed

    def load(self, key: str, file: str, decoder: json.JSONDecoder | None = None) -> FileResult | None:
        """The FileResult cached under `key`, named `file`; None (a miss: the file is parsed again)
        on any failure of reading, decoding or unpacking alike."""
        packed = self._get(key, decoder)
        if packed is None:
            return None
        try:
            result = unpack(packed, file)
        except Exception:
            return None
        self.hits += 1
        return result

    def _get(self, key: str, decoder: json.JSONDecoder | None = None) -> Packed | None:
        payload = self.payload(key)
        if payload is None:
            return None  # missing, truncated, corrupt or foreign: parsed again and rewritten
        try:
            return loads(payload, decoder)
        except Exception:
            return None

    def _read(self, key: str) -> bytes | None:
        # O_NOFOLLOW and a regular file only: an entry that is a link or a FIFO is a miss.
        try:
            fd = os.open(
                os.path.join(self._entries, key),
                os.O_RDONLY | _NOFOLLOW | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0),
            )
        except OSError:
            return None
        # Read with the descriptor alone, no file object around it: a hook run on a repository
        # of 3,300 files reads 10,000 entries (each file's shell, parse entry and what is kept of
        # it), and the file object was a third of each read's CPU.
        try:
            status = os.fstat(fd)
            if not stat.S_ISREG(status.st_mode):
                return None
            # To the end, as a file object's `read()` does: its size first, then until a read
            # gives nothing (a read may give less than asked, and an entry is replaced, not
            # written in place, so its size stays that of the file opened).
            chunks = [os.read(fd, status.st_size + 1)]
            while chunks[-1]:
                chunks.append(os.read(fd, 1 << 20))
            return chunks[0] if len(chunks) == 2 else b"".join(chunks)
        finally:
            os.close(fd)

    def put(self, key: str, payload: bytes | Iterable[bytes]) -> None:
        """Write the entry `key`: its payload, or the payload's parts in order (policylint.input.jsonparts:
        the entries kept per object are tens of MB at 100k objects, written at the end of a run,
        where its peak memory is; `write_entry` holds at most 64 KiB of them)."""
        self._used.add(key)
        if not self._ensure_directory():
            return
        opened = open_temp(self._entries)
        if opened is None:
            self._writable = False
            return
        fd, tmp = opened
        try:
            try:
                write_entry(fd, payload, _MAGIC)
            finally:
                os.close(fd)
            os.replace(tmp, os.path.join(self._entries, key))  # atomic: readers see all of it or nothing
            self.writes += 1
            self._written.add(key)
        except OSError:
            self._writable = False
            _discard(tmp)
        except BaseException:
            _discard(tmp)  # a payload that cannot be made: the caller's error, no file left behind
            raise

    def payload(self, key: str) -> memoryview | None:
        """The payload of the entry under `key` if its magic and checksum are right, not decoded."""
        self._used.add(key)
        if self.problem is not None:
            return None
        try:
            blob = self._read(key)
        except Exception:
            return None
        if blob is None:
            return None
        payload = memoryview(blob)[_HEADER:]
        if blob[: len(_MAGIC)] != _MAGIC or hashlib.blake2b(payload, digest_size=_DIGEST).digest() != blob[len(_MAGIC) : _HEADER]:
            return None
        return payload

    def named(self, name: str, stamp: bytes = b"") -> str:
        """The entry key of something that is not a file's bytes, under this cache's stamp and
        `stamp` (what else shapes that entry)."""
        h = hashlib.blake2b(self._stamp, digest_size=_KEY_BYTES)
        h.update(b"\x02" + name.encode() + b"\x00" + stamp)
        return h.hexdigest()

    def holds(self, key: str) -> bool:
        """Whether an entry is under `key` (not read: a later read may still find it damaged),
        kept from pruning as an entry read is."""
        self._used.add(key)
        return self.problem is None and os.path.isfile(os.path.join(self._entries, key))

    def keep(self, key: str) -> None:
        """An entry this run may read later (a file whose objects are read on demand:
        policylint.k8s.lazy), kept from pruning as the entries it read are."""
        self._used.add(key)

    def keep_beside(self, name: Callable[[str], str]) -> None:
        """Entries kept per file, named by `name` from the file's key (its objects' admission
        verdicts, policylint.input.verdictstore; the per-object rules' results,
        policylint.incremental.rulecache), are kept from pruning while the file's entry is: a run
        that analyses a part reads only its part's, and the others are still its files'."""
        self._beside.append(name)

    def wrote(self, key: str) -> bool:
        """Whether this run wrote the entry `key`: for a file's, its bytes were new to the cache,
        so nothing kept beside it (`keep_beside`) is worth asking for. (One left when the file's
        entry was pruned is missed: worked out again, never a wrong answer.) A run that fills the
        cache for thousands of files otherwise looks each one up in vain."""
        return key in self._written

    def note_written(self, key: str) -> None:
        """An entry another process (a `--jobs` worker) wrote for this run."""
        self._written.add(key)
        self._used.add(key)
        self.writes += 1

    def _ensure_directory(self) -> bool:
        if self._writable is not None:
            return self._writable
        self._writable = False
        try:
            if not self._existed:
                parent = os.path.dirname(os.path.abspath(self.directory))
                # The XDG specification asks for 0700 on directories it creates (~/.cache).
                os.makedirs(parent, mode=_DIR_MODE, exist_ok=True)
                try:
                    os.mkdir(self.directory, _DIR_MODE)
                except FileExistsError:
                    pass  # another run created it meanwhile: inspected below like any other
            # Checked again: it may have been created by another run since it was inspected.
            if _directory_problem(self.directory, "it") is not None:
                return False
            if not self._wait_for_tag():
                if _is_empty(self.directory):
                    # A new directory, or an empty one made for the cache: policylint's from now on.
                    _write_file(os.path.join(self.directory, _TAG_NAME), _CACHEDIR_TAG)
                    # Git-ignored, wherever it is (ruff and pytest do the same).
                    _write_file(os.path.join(self.directory, ".gitignore"), _GITIGNORE)
                elif not self._wait_for_tag():
                    # Not empty any more: either another run is tagging it right now (its
                    # temporary file appeared after the first look), or it is not ours.
                    return False
            try:
                os.mkdir(self._entries, _DIR_MODE)
            except FileExistsError:
                pass
            if _directory_problem(self._entries, "entries") is not None:
                return False
        except OSError:
            return False
        self._writable = os.access(self._entries, os.W_OK)
        return self._writable

    def _wait_for_tag(self) -> bool:
        """Whether the directory is tagged; waits a moment when another run is just creating it."""
        deadline = time.monotonic() + _TAG_WAIT_SECONDS
        while not _has_tag(self.directory):
            # Another run made the directory and is writing its tag (an atomic rename): only its
            # temporary file can be there meanwhile. Anything else: not ours, decided at once.
            names = os.listdir(self.directory)
            if not names or not all(_TEMP_NAME.match(n) for n in names) or time.monotonic() > deadline:
                # The other run may have renamed its tag into place between the two looks.
                return _has_tag(self.directory)
            time.sleep(0.01)
        return True

    def prune(self, keep: Iterable[str] = ()) -> None:
        """Bound the directory: drop leftovers of interrupted writes and, past the limit, old unused entries.

        Deletes only regular files named like an entry or like this module's temporary files, in
        the entries directory of a directory that carries policylint's tag, both real directories
        of this user (checked again now); symlinks are never followed.
        """
        if not self.writes or self.problem is not None:
            return  # a run that wrote nothing leaves the directory as it found it
        try:
            if _directory_problem(self.directory, "it") is not None or not _has_tag(self.directory):
                return
            with _open_entries(self._entries) as (scan_target, unlink):
                self._prune(scan_target, unlink, keep)
        except OSError:
            return

    def _prune(self, scan_target: str | int, unlink: Callable[[str], None], keep: Iterable[str]) -> None:
        keep_set = self._used.union(keep)
        # Kept too, though not counted against the bound (the number of files the run used is).
        beside = {name(key) for name in self._beside for key in keep_set}
        limit = max(_MAX_ENTRIES, 4 * len(keep_set))
        # An entry's `lstat` only once the names say the directory may be over the bound (a 3,319-file
        # repository's ~12,600 are not: 0.1 s a run); the names count at least the regular files counted.
        with os.scandir(scan_target) as it:  # a name this module does not write is never touched
            named = [e for e in it if _ENTRY_NAME.match(e.name) is not None or _TEMP_NAME.match(e.name) is not None]
        for entry in named:  # leftovers of interrupted writes: few, each looked at
            if entry.name[0] == "." and (st := _regular(entry)) and time.time() - st.st_mtime > _STALE_TEMP_SECONDS:
                unlink(entry.name)
        candidates = [e for e in named if e.name[0] != "." and e.name not in keep_set and e.name not in beside]
        if len(candidates) + len(keep_set) - limit <= 0:
            return
        entries = [(st.st_mtime, e.name) for e in candidates if (st := _regular(e)) is not None]
        excess = len(entries) + len(keep_set) - limit
        if excess <= 0:
            return
        entries.sort()
        for _, name in entries[: excess + limit // 2]:
            unlink(name)


def _regular(entry: os.DirEntry[str]) -> os.stat_result | None:
    """The entry's `lstat` when a regular file: a link, a directory, a FIFO is not what `put` made."""
    try:
        st = entry.stat(follow_symlinks=False)
    except OSError:
        return None
    return st if stat.S_ISREG(st.st_mode) else None


@contextmanager
def _open_entries(path: str) -> Iterator[tuple[str | int, Callable[[str], None]]]:
    """(what to scan, how to delete a name in it) for the entries directory at `path`.

    Where the platform allows, the directory is opened once without following a symlink and
    everything happens relative to that descriptor, so that the directory cannot be swapped for a
    link between the check and the deletions. Elsewhere it is checked with lstat first.
    """
    directory_flag = getattr(os, "O_DIRECTORY", 0)
    if _NOFOLLOW and directory_flag and os.scandir in os.supports_fd and os.unlink in os.supports_dir_fd:
        fd = os.open(path, os.O_RDONLY | directory_flag | _NOFOLLOW)  # ELOOP for a symlink
        try:
            st = os.fstat(fd)
            if not stat.S_ISDIR(st.st_mode) or _ownership_problem(st) is not None:
                raise NotADirectoryError(path)

            def unlink_at(name: str) -> None:
                try:
                    os.unlink(name, dir_fd=fd)
                except OSError:
                    pass

            yield fd, unlink_at
        finally:
            os.close(fd)
        return
    if _directory_problem(path, "entries") is not None:
        raise NotADirectoryError(path)

    def unlink_path(name: str) -> None:
        try:
            os.unlink(os.path.join(path, name))
        except OSError:
            pass

    yield path, unlink_path


def _write_file(path: str, text: str) -> None:
    """Write `text` to `path` whole or not at all (a temporary file renamed into place)."""
    import tempfile  # here: only a new cache directory's first run writes these, not every run's start

    fd, tmp = tempfile.mkstemp(prefix=_TEMP_PREFIX, dir=os.path.dirname(path))
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.replace(tmp, path)
    except BaseException:
        _discard(tmp)
        raise


def _discard(path: str) -> None:
    """Remove a temporary file of ours, if it is still there."""
    try:
        os.unlink(path)
    except OSError:
        pass


def open_cache(directory: str | os.PathLike[str] | None, linted: Iterable[str] = ()) -> tuple[ParseCache | None, str | None]:
    """The cache in `directory` for a run over the paths `linted`, and a note for the user when the
    directory is not used (None when it is used, or when no cache was asked for)."""
    if directory is None:
        return None, None
    path = os.fspath(directory)
    reason = inside_linted(path, linted)
    if reason is None:
        cache = ParseCache(path)
        if cache.problem is None:
            return cache, None
        reason = cache.problem
    return None, f"cache directory {path} not used: {reason}"
