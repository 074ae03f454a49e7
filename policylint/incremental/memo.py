"""What a whole run over a set of files finds, kept by content (policylint.incremental).

The gate of `--staged`, `--diff` and the pre-commit hook lints the base of a change whole, from
git objects, to tell the findings the change introduces from those already there
(policylint.commands.change). On a repository whose tenants reference each other that is as
much work as the run itself, and it is nearly always work done before: the base of a hook run
is the commit the previous run checked as staged, and a commit that fails the hook is retried
against the same base. So the fingerprints of a whole run's active findings are kept under a
key that hashes

- each file's name and content key, in the run's order (the parse cache's key: the file's bytes
  under the stamp of the loader that reads them);
- the request's settings that shape the findings (`SHAPING`: rules, options, cluster, profiles,
  suppressions, the date `until=` is compared with; the content of `--crd`, `--profile` and
  baseline files read from disk);
- the code that computes them: every file of this package, so that a development checkout
  never reuses what other code found.

Nothing else can make an entry stale: a change to any of these is another key. A run records
its entry only when it analysed every file it read (no report scope narrowed the analysis, or
the scope reached everything) and nothing failed inside it; the differential test
(tests/incremental/test_incremental.py) checks, over random edit sequences, that the gate's verdicts with
entries are those of runs without.

A run whose analysis covered only a part (the staged side of a hook run) keeps what it found
about that part instead, under another name (`remember_members`, below).

An entry is JSON behind the cache's magic number and checksum (ParseCache.put), read back only
if it is a list of fingerprints as the engine writes them: anything else is a miss, and the base
is linted.
"""

from __future__ import annotations

import dataclasses
import datetime
import enum
import hashlib
import json
import os
import re
import stat
from collections.abc import Iterable, Sequence
from pathlib import PurePath
from typing import TYPE_CHECKING, Any

from policylint.input.cache import hash_sources

if TYPE_CHECKING:
    from policylint.input.cache import ParseCache
    from policylint.k8s.objects import ObjectKey
    from policylint.pipeline import LintRequest, Part

# Bump when an entry's layout or meaning changes.
FORMAT = 1
_NAME = "whole-run findings"
_PART_NAME = "findings of a part"
_MEMBERS_NAME = "findings of the members of a scoped run"
# The engine's fingerprints: hex of FINGERPRINT_BYTES (policylint.rules.engine).
_FINGERPRINT = re.compile(r"[0-9a-f]{16,64}\Z")
# A JSON list of them, as `remember` writes it.
_LISTED = re.compile(r'\[(?:"[0-9a-f]{16,64}"(?:,"[0-9a-f]{16,64}")*)?\]')

# The request's fields that decide what a whole run finds in files it is given.
SHAPING = frozenset(
    {
        "namespace",
        "crd_paths",
        "profile_paths",
        "crds_at",
        "profiles_at",
        "declared",
        "selection",
        "synthetic_rule_names",
        "external",
        "max_affected",
        "rule_options",
        "baseline",
        "baseline_entries",
        "require_suppression_reason",
        "today",
        "walk",
        "helm_templates",
        "overrides",
        "complete",
        "follow_outside_links",
    }
)
# Those that do not: which files are read and how they are found (the key names every file and
# its content), what is reported of the findings (scope, extra report sections, suppressed ones
# listed) and how the run is carried out (cache, processes, a scoped analysis: the same findings).
# A run reading standard input or writing a baseline records nothing (`key`).
NOT_SHAPING = frozenset(
    {
        "paths",
        "stdin_filename",
        "read_stdin",
        "cache_dir",
        "jobs",
        "report_policies",
        "report_chains",
        "radii_after_run",
        "write_baseline",
        "show_suppressed",
        "context_paths",
        "change",
        "staged",
        "sources",
        "scoped_analysis",
    }
)

_code: list[bytes] = []


class Unknown(Exception):
    """A setting of a type `canonical` cannot write the same way in every run."""


def code_stamp() -> bytes:
    """A hash of every file of the installed package (sources and data), once per process."""
    if not _code:
        import policylint

        package = os.path.dirname(os.path.abspath(policylint.__file__))
        files: list[str] = []
        for directory, subdirectories, names in os.walk(package):
            subdirectories[:] = sorted(d for d in subdirectories if d != "__pycache__")
            files.extend(os.path.join(directory, n) for n in sorted(names) if not n.endswith(".pyc"))
        h = hashlib.blake2b(digest_size=16)
        for file in files:
            h.update(os.path.relpath(file, package).encode("utf-8", "surrogateescape") + b"\x00")
        hash_sources(h, files)
        _code.append(h.digest())
    return _code[0]


def canonical(value: Any) -> Any:
    """`value` as JSON data that is the same in every process: sets sorted (their iteration
    order changes with the string hash seed), dataclasses by their fields. Raises Unknown for
    anything else (a callable, an object of unknown type): no entry is better than a wrong one."""
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, enum.Enum):
        return [type(value).__name__, canonical(value.value)]
    if isinstance(value, list | tuple):
        return [canonical(v) for v in value]
    if isinstance(value, set | frozenset):
        return sorted((canonical(v) for v in value), key=_sort_key)
    if isinstance(value, dict):
        return sorted(([canonical(k), canonical(v)] for k, v in value.items()), key=_sort_key)
    if isinstance(value, datetime.date):
        return value.isoformat()
    if isinstance(value, PurePath):
        return str(value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        name = type(value).__name__
        return [
            name,
            [[f.name, canonical(getattr(value, f.name))] for f in dataclasses.fields(value) if (name, f.name) not in _DERIVED],
        ]
    raise Unknown(type(value).__name__)


# Fields compiled from another field of the same object, which the key holds: a `per-file`
# entry's matcher (pathspec, of no type `canonical` writes) is its `pattern`.
_DERIVED = frozenset({("PerFile", "spec")})


def _sort_key(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=True)


def _digest_path(path: str) -> str:
    """A hash of what `path` holds on disk: a file's bytes, or every regular file under a
    directory with its relative name ("?" for what cannot be read; FIFOs and devices are never
    opened, so nothing blocks)."""
    h = hashlib.blake2b(digest_size=16)
    if os.path.isdir(path):
        for directory, subdirectories, names in os.walk(path):
            subdirectories.sort()
            for name in sorted(names):
                file = os.path.join(directory, name)
                h.update(os.path.relpath(file, path).encode("utf-8", "surrogateescape") + b"\x00")
                h.update(_file_bytes(file))
    else:
        h.update(_file_bytes(path))
    return h.hexdigest()


def _file_bytes(path: str) -> bytes:
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
    except OSError:
        return b"?"
    with open(fd, "rb") as fh:
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                return b"?"
            return b"!" + fh.read()
        except OSError:
            return b"?"


def settings(request: LintRequest) -> bytes | None:
    """What in `request` shapes a whole run's findings, as bytes; None when a setting cannot be
    written reliably (then nothing is kept or read)."""
    fields = {f.name: getattr(request, f.name) for f in dataclasses.fields(request) if f.name in SHAPING}
    # `until=` is compared with today in UTC unless the request names the day (suppressions.apply).
    fields["today"] = request.today or datetime.datetime.now(datetime.timezone.utc).date()
    try:
        parts: list[Any] = sorted([name, canonical(value)] for name, value in fields.items())
    except Unknown:
        return None
    # Files read from disk by name: their content, which the name alone does not tell.
    if request.crds_at is None:
        parts.append(["crd files", [_digest_path(p) for p in request.crd_paths]])
    if request.profiles_at is None:
        parts.append(["profile files", [_digest_path(p) for p in request.profile_paths]])
    if request.baseline is not None and request.baseline_entries is None and request.write_baseline is None:
        parts.append(["baseline file", _digest_path(request.baseline)])
    return json.dumps(parts, ensure_ascii=True, separators=(",", ":")).encode("ascii")


def key(
    cache: ParseCache,
    request: LintRequest,
    files: Sequence[tuple[str, str | None]],
    part: Part | None = None,
    *,
    members: bool = False,
) -> str | None:
    """The entry of a whole run of `request` over `files` ((name, parse-cache content key) in
    the run's order), or of the `part` of it a run analysed (`pipeline.lint(part=...)`); None
    when no entry may be kept: a file without a content key (standard input, which is never
    cached; one that could not be read), a baseline being written, a setting `settings` cannot
    write."""
    return Keys(cache, request, files).key(part, members=members)


class Keys:
    """`key` of one request over one list of files, for several entries (the whole run's, a
    part's, the members'): the settings and the files, most of the work at thousands of files,
    written and hashed once."""

    def __init__(self, cache: ParseCache, request: LintRequest, files: Sequence[tuple[str, str | None]]) -> None:
        self._cache = cache
        self._hashed: hashlib.blake2b | None = None
        if request.write_baseline is not None or any(k is None for _, k in files):
            return
        shaping = settings(request)
        if shaping is None:
            return
        h = hashlib.blake2b(digest_size=20)
        h.update(FORMAT.to_bytes(2, "big") + code_stamp() + shaping)
        h.update(json.dumps(list(files), ensure_ascii=True, separators=(",", ":")).encode("ascii"))
        self._hashed = h

    def key(self, part: Part | None = None, *, members: bool = False) -> str | None:
        if self._hashed is None:
            return None
        h = self._hashed.copy()
        if part is not None:
            named, objects = part
            h.update(json.dumps([sorted(named), sorted(json.dumps(list(k)) for k in objects)], ensure_ascii=True).encode("ascii"))
        return self._cache.named(_MEMBERS_NAME if members else _NAME if part is None else _PART_NAME, h.digest())


def recall(cache: ParseCache, entry: str) -> frozenset[str] | None:
    """The fingerprints kept under `entry`, or None: missing, corrupt, or not what `remember`
    writes."""
    payload = cache.payload(entry)
    if payload is None:
        return None
    try:
        decoded = json.loads(bytes(payload))
    except Exception:
        return None
    if type(decoded) is not dict or decoded.get("format") != FORMAT:
        return None
    found = decoded.get("fingerprints")
    if type(found) is not list or not all(type(f) is str and _FINGERPRINT.match(f) for f in found):
        return None
    return frozenset(found)


def remember(cache: ParseCache, entry: str, fingerprints: Iterable[str]) -> None:
    """Keep the fingerprints of a run's active findings under `entry`."""
    fingerprints = sorted(set(fingerprints))
    if not all(_FINGERPRINT.match(f) for f in fingerprints):
        return  # not fingerprinted by the engine: nothing a later run could match
    payload = json.dumps({"format": FORMAT, "fingerprints": fingerprints}, separators=(",", ":")).encode("ascii")
    cache.put(entry, payload)


def remember_listed(cache: ParseCache, entry: str, listed: bytes) -> None:
    """`remember`, from the list it writes, as a JSON text (a whole analysis's entry keeps it,
    policylint.incremental.equivalent): written as it is when it is such a list, else nothing."""
    if listed.isascii() and _LISTED.fullmatch(listed.decode("ascii")):
        cache.put(entry, b'{"format":%d,"fingerprints":%s}' % (FORMAT, listed))


# -- what a scoped run found about the part it analysed ------------------------------------------
#
# The staged side of the hook analyses only the part of the repository its change reaches
# (policylint.semantics.components), so it cannot keep what the whole repository finds; but what
# it finds about the members of that part is a whole run's, and the staged state is the next
# commit's base. So it keeps, under the key of its files (`key(..., members=True)`), the
# members, the files whose findings on no object it computed whole (every object of the file a
# member, or none), and the fingerprints of those findings. The next commit's base side reads
# them back when the findings it must match are all about those objects and files: a finding's
# fingerprint names its object (or, on none, its file), so the fingerprints of more objects than
# asked for tell the same.


def remember_members(
    cache: ParseCache, entry: str, members: Iterable[ObjectKey], files: Iterable[str], fingerprints: Iterable[str]
) -> None:
    """Keep what a scoped run found about its `members` and the `files` it covered whole."""
    found = sorted(set(fingerprints))
    if not all(_FINGERPRINT.match(f) for f in found):
        return
    rows = sorted(([k.group, k.kind, k.namespace, k.name] for k in members), key=_sort_key)
    payload = {"format": FORMAT, "members": rows, "files": sorted(set(files)), "fingerprints": found}
    cache.put(entry, json.dumps(payload, separators=(",", ":"), ensure_ascii=True).encode("ascii"))


def recall_members(cache: ParseCache, entry: str, part: Part) -> frozenset[str] | None:
    """The fingerprints kept under `entry` when they cover `part` (its objects among the
    members, its files among those covered whole), else None: missing, corrupt, not what
    `remember_members` writes, or about other objects."""
    return covered(members(cache, entry), part)


def covered(kept: tuple[frozenset[ObjectKey], frozenset[str], frozenset[str]] | None, part: Part) -> frozenset[str] | None:
    """The fingerprints of `kept` (what `members` read) when they cover `part`, else None."""
    if kept is None:
        return None
    keys, files, found = kept
    named, objects = part
    if not (objects <= keys and named <= files):
        return None
    return found


def members(cache: ParseCache, entry: str) -> tuple[frozenset[ObjectKey], frozenset[str], frozenset[str]] | None:
    """What `remember_members` kept under `entry` (the members, the files covered whole, the
    fingerprints), or None: missing, corrupt, not what it writes."""
    from policylint.k8s.objects import ObjectKey

    payload = cache.payload(entry)
    if payload is None:
        return None
    try:
        decoded = json.loads(bytes(payload))
    except Exception:
        return None
    if type(decoded) is not dict or decoded.get("format") != FORMAT:
        return None
    rows, files, found = decoded.get("members"), decoded.get("files"), decoded.get("fingerprints")
    if not (type(rows) is list and type(files) is list and type(found) is list):
        return None
    if not all(type(f) is str and _FINGERPRINT.match(f) for f in found) or not all(type(f) is str for f in files):
        return None
    keys: set[ObjectKey] = set()
    for row in rows:
        if not (
            type(row) is list
            and len(row) == 4
            and all(type(v) is str for v in (row[0], row[1], row[3]))
            and (row[2] is None or type(row[2]) is str)
        ):
            return None
        keys.add(ObjectKey(row[0], row[1], row[2], row[3]))
    return frozenset(keys), frozenset(files), frozenset(found)
