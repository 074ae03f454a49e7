"""A run's result, kept by every input it depends on (policylint.incremental): a run whose inputs
are all what an earlier run saw gives that run's result without analysing anything.

It is the action cache of Bazel, the result cache of ruff: the pre-commit hook run again on the
same commit (after a failure, by pre-commit's retry), `check` run twice over an unchanged tree, a
CI job retried. What is kept is the result as the reporters read it (`policylint.reported.Reported`:
the findings, the suppressed ones, the files, the counts, the policies section, what the gate
classified), not a rendered report, so another `--format` reads the same entry. The entry is named
by a digest of

- every source in the run's order: its name and the parse-cache key of its bytes (the bytes under
  the loader's stamp), or why it is not read; what discovery skipped and said;
- the request's settings that shape the findings (`memo.settings`: rules, options, severities,
  per-file settings, suppression settings, the cluster declared, the content of `--crd`,
  `--profile` and baseline files, the day `until=` is compared with) and those that shape what is
  reported (`REPORTING`: the PATHs and context paths, the change and its scope, `--staged`,
  `--show-suppressed`), the working directory the names are relative to;
- what the command measured of a change (`command`: the base commit and its name, the files the
  change touched under the PATHs and outside them): a base is a commit, whose tree is its content;
- the code: every file of the package (`memo.code_stamp`) and the parse cache's stamp (the
  loader's code, PyYAML's and libyaml's versions, the Python version).

`tests/incremental/test_results.py` changes each input in turn and checks the run misses, and
checks every `LintRequest` field is in `memo.SHAPING`, `REPORTING` or `NOT_KEYED`. An entry
lives in the parse cache's directory under its trust rules (policylint.input.cache: outside the
checkout, behind a checksum, pruned with the others); every field is checked when it is read, and
anything else is a miss: the run analyses. Past `MAX_BYTES` no entry is written.

Not kept: runs reading standard input (no content key), writing a baseline (the file is written
by the run), fixing files (a fix is kept as reporters show it, without its edits), a result with an
internal error, and runs for a format that reads more than `Reported` holds (`Reporter.objects`:
JUnit's test case per object; `Reporter.chains`: SARIF's attachment chains).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator, Sequence
from dataclasses import field
from typing import TYPE_CHECKING, Any

from policylint import reported
from policylint.values import record

if TYPE_CHECKING:
    from policylint.attachment_chain import Chain
    from policylint.findings import Finding
    from policylint.gate import GateReport
    from policylint.input.cache import ContentKeys, ParseCache
    from policylint.input.sources import Discovery, Skipped, Source
    from policylint.pipeline import LintRequest, LintResult
    from policylint.reported import Reported

# Bump when an entry's layout or meaning changes.
FORMAT = 1
_NAME = "result of a run"
# An entry larger than this is not written: a whole run over 100,000 objects with a finding on
# most of them is tens of MB of JSON, which is read as fast as it is worked out again.
MAX_BYTES = 16 << 20

# The request's fields, besides `memo.SHAPING`, that decide what a run reports.
REPORTING = frozenset(
    {"paths", "context_paths", "change", "staged", "show_suppressed", "scoped_analysis", "stdin_filename", "sources"}
)
# Those that decide neither: how the run is carried out, or what the key holds otherwise (the
# sources' bytes; the policies section, which an entry holds when its run computed it and a run
# that needs it misses without; a run reading standard input or writing a baseline or attachment
# chains keeps nothing).
NOT_KEYED = frozenset(
    {"read_stdin", "cache_dir", "jobs", "report_policies", "report_chains", "radii_after_run", "write_baseline"}
)


@record(slots=True)
class KeptResult:
    """A run's result read back (`Reported`)."""

    findings: list[Finding]
    suppressed: list[Finding]
    files: list[str]
    context_files: list[str]
    notes: list[str]
    skipped: list[Skipped]
    policy_reports: list[dict[str, Any]] | None
    objects: int
    policies: int
    baseline_migrated: int
    show_suppressed: bool
    introduced: frozenset[str] | None
    base: str | None
    change_files: tuple[int, int] | None
    chains: dict[str, tuple[Chain, ...]] = field(default_factory=dict)
    internal_error: bool = False
    baseline_written: tuple[str, int] | None = None
    gate: GateReport | None = None

    def object_count(self) -> int:
        return self.objects

    def policy_count(self) -> int:
        return self.policies

    def introduced_by_change(self, finding: Finding) -> bool | None:
        return reported.introduced_by_change(self, finding)

    def change_counts(self) -> tuple[int, int] | None:
        return reported.change_counts(self)


class Results:
    """The result of one run of the command: read back before it analyses, kept after."""

    def __init__(
        self, cache: ParseCache, entry: str, keys: dict[str, str | None], by_blob: dict[str, tuple[str, bool]] | None = None
    ) -> None:
        self.cache = cache
        self.entry = entry
        self._keys = keys  # each source's content key, as hashed for the entry
        # The staged files not read, by name: the content key kept by their blob, and whether
        # it is that of a `*.json` name.
        self._by_blob = by_blob or {}

    @property
    def content_keys(self) -> dict[str, str | None]:
        """Each source's content key, as hashed for the entry."""
        return self._keys

    def lend_keys(self, sources: Sequence[Source], content_keys: ContentKeys) -> None:
        """Give `content_keys` the key of each source read since from the staged blob its key was
        kept by (policylint.input.staged `materialize`: the blob's bytes, checked against its
        object id): a run that analyses takes every file's key from them where it hashed every
        file's bytes, twice where the base's findings are read back (the staged side and the
        base's files), 0.02-0.03 s of CPU each at 3,319 files."""
        by_blob = self._by_blob
        for source in sources:
            kept = by_blob.get(source.display)
            if kept is not None and source.content is not None and source.snapshot:
                content_keys.key(self.cache, source.content, json=kept[1], kept=kept[0])

    def recall(self, request: LintRequest) -> KeptResult | None:
        """The result kept under this run's entry, or None: missing, damaged, foreign, or without
        the policies section this run reports."""
        payload = self.cache.payload(self.entry)
        if payload is None:
            return None
        try:
            kept = _decoded(json.loads(bytes(payload)))
        except Exception:  # any shape `_encoded` does not write: a miss
            return None
        if kept is None or (request.report_policies and kept.policy_reports is None):
            return None
        return kept

    def remember(self, request: LintRequest, result: LintResult) -> None:
        """Keep `result`, the run's after the gate classified it, when it is whole and its files were
        the bytes the entry was named by (a file edited while the run read it is not kept)."""
        if result.internal_error or result.baseline_written is not None:
            return
        content_keys = result.index.content_keys
        if any(key is not None and content_keys.get(name, key) != key for name, key in self._keys.items()):
            return
        self._put(result)

    def remember_kept(self, result: KeptResult) -> None:
        """Keep `result`, made from kept results of the same bytes the entry was named by
        (policylint.incremental.equivalent)."""
        self._put(result)

    def _put(self, result: Reported) -> None:
        put_bounded(self.cache, self.entry, _pieces(_encoded(result)))


def open_results(
    request: LintRequest,
    discovered: tuple[Discovery, list[Source]],
    command: Sequence[object],
    content_keys: ContentKeys | None = None,
) -> Results | None:
    """The entry of this run (`command`: what the command measured besides the request, as JSON
    data), or None when no result of it may be kept (see the module's docstring). `content_keys`:
    the run's, which keeps the content keys worked out here for the run to take (the same bytes)."""
    from policylint.input.cache import open_cache

    if request.cache_dir is None or request.write_baseline is not None or request.report_chains:
        return None
    cache, _ = open_cache(request.cache_dir, [*request.paths, *request.crd_paths])
    if cache is None:
        return None
    found, sources = discovered
    by_blob: dict[str, tuple[str, bool]] = {}
    rows, keys = _sources(cache, request, sources, content_keys, by_blob)
    if rows is None:
        return None
    digest = _digest(request, found, rows, command)
    return Results(cache, cache.named(_NAME, digest), keys, by_blob) if digest is not None else None


def _sources(
    cache: ParseCache,
    request: LintRequest,
    sources: Sequence[Source],
    content_keys: ContentKeys | None,
    by_blob: dict[str, tuple[str, bool]],
) -> tuple[list[Any] | None, dict[str, str | None]]:
    """Each source as the key names it, and its content key; None for a run reading standard
    input, which no key stands for. `by_blob` receives the keys kept by a staged blob, by name."""
    from policylint.incremental.blobkeys import BlobKeys
    from policylint.input.git import repository_root
    from policylint.input.load import is_json_name
    from policylint.input.reader import read_bytes
    from policylint.input.sources import STDIN

    rows: list[Any] = []
    keys: dict[str, str | None] = {}
    blobs: BlobKeys | None = None
    for source in sources:
        if source.display == STDIN or (source.content is not None and not source.snapshot and request.sources is None):
            return None, {}
        if source.blob is not None and source.content is None:
            # A staged file not read yet: its key kept by its blob, else its bytes read and hashed.
            if blobs is None:
                blobs = BlobKeys(cache, repository_root(os.getcwd()))
            is_json = is_json_name(source.display)
            key = blobs.key(source.blob, json=is_json)
            if key is None:
                data, problem = read_bytes(source)
                if data is not None:
                    key = (
                        content_keys.key(cache, data, json=is_json) if content_keys is not None else cache.key(data, json=is_json)
                    )
                    blobs.add(source.blob, key, json=is_json)
                rows.append([source.display, key, problem.message if problem is not None else None, False])
            else:
                rows.append([source.display, key, None, False])
                by_blob[source.display] = (key, is_json)
            keys[source.display] = key
            continue
        data, problem = read_bytes(source)
        key = None
        if data is not None:
            is_json = is_json_name(source.display)
            # Only bytes the run will read again as this very object (a snapshot's) are worth a
            # place in `content_keys`, which holds them by identity: a file on disk is read again
            # as other bytes, so its entry would only hold its bytes to the end of the run (80 MB
            # at 100,000 objects, beside the run's own copy).
            if content_keys is not None and source.content is not None:
                key = content_keys.key(cache, data, json=is_json)
            else:
                key = cache.key(data, json=is_json)
        keys[source.display] = key
        rows.append([source.display, key, problem.message if problem is not None else None, source.fs_path is None])
    if blobs is not None:
        blobs.save()
    return rows, keys


def _digest(request: LintRequest, found: Discovery, rows: list[Any], command: Sequence[object]) -> bytes | None:
    import dataclasses
    import hashlib

    from policylint.incremental import memo
    from policylint.input.load import PARSER_IS_C

    shaping = memo.settings(request)
    if shaping is None:
        return None
    try:
        reporting = [
            [f.name, memo.canonical(getattr(request, f.name))]
            for f in dataclasses.fields(request)
            if f.name in REPORTING and f.name != "sources"
        ]
        extra = memo.canonical(list(command))
    except memo.Unknown:
        return None
    h = hashlib.blake2b(digest_size=20)
    h.update(FORMAT.to_bytes(2, "big") + memo.code_stamp() + shaping)
    described = [
        os.getcwd(),
        request.sources is not None,
        PARSER_IS_C,
        reporting,
        extra,
        rows,
        found.notes,
        [[s.display, s.category] for s in found.skipped],
    ]
    h.update(json.dumps(described, ensure_ascii=True, separators=(",", ":")).encode("ascii"))
    return h.digest()


# -- the entry ------------------------------------------------------------------------------------


# The fields that hold a row per finding or policy: encoded a row at a time (`_pieces`).
_LONG = frozenset({"findings", "suppressed", "policies"})


# The pieces of an entry's text joined and written together: an entry of 16 MiB in 256 writes.
_PART = 1 << 16


class _TooLarge(Exception):
    """An entry's text past `MAX_BYTES`: given up, nothing written."""


def put_bounded(cache: ParseCache, key: str, pieces: Iterator[str]) -> None:
    """Write the entry `key`, `pieces`' text, as it is encoded (`ParseCache.put` of parts), or
    nothing once the text passes `MAX_BYTES`: given up as soon as it is over, the file begun
    removed. The entry is written at the end of the run, where its peak memory is: neither a
    result too large to keep (findings on most of 100,000 objects: tens of MB) nor one kept has
    its rows or its JSON held whole (they were held in pieces up to the bound, then joined and
    encoded: three copies of up to 16 MiB)."""
    try:
        cache.put(key, _parts(pieces))
    except _TooLarge:
        pass


def _parts(pieces: Iterator[str]) -> Iterator[bytes]:
    held: list[str] = []
    size = part = 0
    for piece in pieces:
        size += len(piece)
        if size > MAX_BYTES:
            raise _TooLarge
        held.append(piece)
        part += len(piece)
        if part >= _PART:
            yield "".join(held).encode("ascii")
            held, part = [], 0
    yield "".join(held).encode("ascii")


def _pieces(fields: dict[str, Any]) -> Iterator[str]:
    """`fields` as compact ASCII JSON (what `json.dumps(fields, ensure_ascii=True,
    separators=(",", ":"))` writes), a row of each `_LONG` field a piece."""
    dumps = json.JSONEncoder(ensure_ascii=True, separators=(",", ":")).encode
    yield "{"
    for i, (key, value) in enumerate(fields.items()):
        yield ("," if i else "") + dumps(key) + ":"
        if key in _LONG and value is not None:
            yield "["
            for j, item in enumerate(value):
                yield ("," if j else "") + dumps(item)
            yield "]"
        else:
            yield dumps(value)
    yield "}"


def _encoded(result: Reported) -> dict[str, Any]:
    """The entry's fields; those in `_LONG` iterables, their rows made as they are encoded."""
    return {
        "format": FORMAT,
        "findings": (_finding_row(f) for f in result.findings),
        "suppressed": (_finding_row(f) for f in result.suppressed),
        "files": result.files,
        "contextFiles": result.context_files,
        "notes": result.notes,
        "skipped": [[s.display, s.category] for s in result.skipped],
        "policies": result.policy_reports,
        "objects": result.object_count(),
        "policyCount": result.policy_count(),
        "baselineMigrated": result.baseline_migrated,
        "showSuppressed": result.show_suppressed,
        "introduced": sorted(result.introduced) if result.introduced is not None else None,
        "base": result.base,
        "changeFiles": list(result.change_files) if result.change_files is not None else None,
    }


def _finding_row(f: Finding) -> list[Any]:
    """A finding as the entry holds it. Of a fix, what reporters show (its description, whether it
    is safe) and where it applies, not its edits, which hold the objects they edit: a run that
    applies fixes (`--fix`, `--diff-fix`) analyses."""
    fix = [f.fix.description, f.fix.safe, f.fix.file, f.fix.document_line] if f.fix is not None else None
    return [
        f.file,
        f.line,
        f.column,
        f.rule,
        f.name,
        int(f.severity),
        f.message,
        list(f.object) if f.object is not None else None,
        f.api_version,
        f.path,
        [[r.message, r.file, r.line, r.column] for r in f.related],
        f.hint,
        f.fingerprint,
        [f.suppression.kind.value, f.suppression.reason] if f.suppression is not None else None,
        f.end_line,
        f.end_column,
        fix,
    ]


class _Damaged(Exception):
    """An entry that is not what `_encoded` writes."""


def _decoded(value: Any) -> KeptResult | None:
    from policylint.input.sources import Skipped

    if type(value) is not dict or value.get("format") != FORMAT:
        return None
    try:
        introduced = value["introduced"]
        change_files = value["changeFiles"]
        policies = value["policies"]
        if policies is not None and not (type(policies) is list and all(type(p) is dict for p in policies)):
            raise _Damaged
        if change_files is not None:
            first, second = _pair(change_files)
            change_files = (_int(first), _int(second))
        return KeptResult(
            findings=_findings(value["findings"]),
            suppressed=_findings(value["suppressed"], suppressed=True),
            files=_strings(value["files"]),
            context_files=_strings(value["contextFiles"]),
            notes=_strings(value["notes"]),
            skipped=[Skipped(_str(s[0]), _str(s[1])) for s in map(_pair, _list(value["skipped"]))],
            policy_reports=policies,
            objects=_int(value["objects"]),
            policies=_int(value["policyCount"]),
            baseline_migrated=_int(value["baselineMigrated"]),
            show_suppressed=_bool(value["showSuppressed"]),
            introduced=frozenset(_strings(introduced)) if introduced is not None else None,
            base=_str(value["base"]) if value["base"] is not None else None,
            change_files=change_files,
        )
    except (_Damaged, KeyError, IndexError, TypeError, ValueError):
        return None


def _findings(rows: Any, *, suppressed: bool = False) -> list[Finding]:
    from policylint.findings import Finding, ResolvedFix, ResolvedRelated, Severity, Suppression, SuppressionKind
    from policylint.k8s.objects import ObjectKey

    out: list[Finding] = []
    for row in _list(rows):
        if type(row) is not list or len(row) != 17:
            raise _Damaged
        (
            file,
            line,
            column,
            rule,
            name,
            severity,
            message,
            obj,
            api,
            path,
            related,
            hint,
            fingerprint,
            sup,
            end_line,
            end_column,
            fix,
        ) = row
        if obj is not None:
            group, kind, namespace, oname = _list(obj)
            key: ObjectKey | None = ObjectKey(
                _str(group), _str(kind), _str(namespace) if namespace is not None else None, _str(oname)
            )
        else:
            key = None
        if (sup is None) is suppressed:
            raise _Damaged  # a suppressed finding carries how, an active one does not
        resolved_fix = None
        if fix is not None:
            description, safe, fix_file, document_line = _quad(fix)
            resolved_fix = ResolvedFix(_str(description), _bool(safe), _str(fix_file), _int(document_line), ())
        out.append(
            Finding(
                _str(file),
                _int(line),
                _int(column),
                _str(rule),
                _str(name),
                Severity(_int(severity)),
                _str(message),
                key,
                _str(api),
                _str(path),
                tuple(ResolvedRelated(_str(m), _str(f), _int(ln), _int(col)) for m, f, ln, col in map(_quad, _list(related))),
                _str(hint) if hint is not None else None,
                _str(fingerprint),
                Suppression(SuppressionKind(_str(sup[0])), _str(sup[1])) if sup is not None else None,
                _int(end_line),
                _int(end_column),
                resolved_fix,
            )
        )
    return out


def _list(value: Any) -> list[Any]:
    if type(value) is not list:
        raise _Damaged
    return value


def _pair(value: Any) -> list[Any]:
    if len(_list(value)) != 2:
        raise _Damaged
    return list(value)


def _quad(value: Any) -> list[Any]:
    if len(_list(value)) != 4:
        raise _Damaged
    return list(value)


def _strings(value: Any) -> list[str]:
    return [_str(v) for v in _list(value)]


def _str(value: Any) -> str:
    if type(value) is not str:
        raise _Damaged
    return value


def _int(value: Any) -> int:
    if type(value) is not int:
        raise _Damaged
    return value


def _bool(value: Any) -> bool:
    if type(value) is not bool:
        raise _Damaged
    return value
