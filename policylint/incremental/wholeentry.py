"""The entry a whole analysis keeps of what it found, for a change answered from it
(policylint.incremental.equivalent): its layout, written (`remember`) and read back row by row
(`Recalled`).

A repository analysed whole holds thousands of findings (5.4k rows, 5 MB, at 10,000 objects on
the benchmark's shared corpus), and a comment's answer reports those of the changed files and of
the objects that reference theirs: a few. So the entry is lines of JSON with an index, written
last, that says where each row starts and which rows a file's answer reads (`_laid_out`); the
answer decodes the index and those rows alone, and the fingerprints the next commit's base reads
(`memo.remember`'s list, kept apart), not every row (docs/performance.md, "A comment's answer
decoded by file").
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import TYPE_CHECKING, Any

from policylint.incremental.results import _finding_row, _list, _pair, _pieces, _quad, put_bounded

if TYPE_CHECKING:
    from policylint.findings import Finding
    from policylint.input.cache import ParseCache
    from policylint.k8s.objects import ObjectKey

# Bump when an entry's layout or meaning changes. 2: the policies section after the rest. 3: each
# row read on its own, through an index written last (`_laid_out`).
FORMAT = 3
_DUMPS = json.JSONEncoder(ensure_ascii=True, separators=(",", ":")).encode


class Whole:
    """What a whole analysis found (`remember`)."""

    def __init__(
        self,
        findings: list[Finding],
        suppressed: list[Finding],
        policies: list[dict[str, Any]] | None,
        objects: int,
        policy_count: int,
        baseline_migrated: int,
        references: dict[ObjectKey, frozenset[ObjectKey]],
    ) -> None:
        self.findings = findings
        self.suppressed = suppressed
        self.policies = policies
        self.objects = objects
        self.policy_count = policy_count
        self.baseline_migrated = baseline_migrated
        self.references = references


def remember(cache: ParseCache, name: str, whole: Whole) -> None:
    """Keep `whole` under the entry `name` (nothing past `results.MAX_BYTES`)."""
    index = _Index(whole.references)
    rows = (index.add(i, f.object, _finding_row(f)) for i, f in enumerate((*whole.findings, *whole.suppressed)))
    fields = {
        "format": FORMAT,
        "findings": len(whole.findings),
        "suppressed": len(whole.suppressed),
        "policiesKept": whole.policies is not None,
        "objects": whole.objects,
        "policyCount": whole.policy_count,
        "baselineMigrated": whole.baseline_migrated,
    }
    fingerprints = (f.fingerprint for f in whole.findings)
    put_bounded(cache, name, _laid_out(fields, rows, fingerprints, index.sections, whole.policies))


class _Index:
    """Which rows a file's answer reads, built as the rows are written: the rows each file holds
    or whose notes or fix name it (`files`), and, by the namespace of each object an object with a
    finding references, the rows of the objects that reference it (the report scope's third way
    in, policylint.report_scope `ReportScope.in_scope`)."""

    def __init__(self, references: Mapping[ObjectKey, Iterable[ObjectKey]]) -> None:
        self.references = references
        self.files: dict[str, list[int]] = {}
        self.always: list[int] = []
        self.objects: list[tuple[int, ObjectKey]] = []

    def add(self, i: int, obj: ObjectKey | None, row: list[Any]) -> list[Any]:
        from policylint.findings import INTERNAL_ERROR

        for file in _places(row):
            ids = self.files.setdefault(file, [])
            if not ids or ids[-1] != i:
                ids.append(i)
        if row[3] == INTERNAL_ERROR:
            self.always.append(i)
        if obj is not None:
            self.objects.append((i, obj))
        return row

    def sections(self) -> tuple[dict[str, list[list[int]]], list[int], dict[str, str]]:
        """The index's fields and each namespace's section, once every row was written (a result
        given up past the bound builds none of it)."""
        referencing: dict[str, dict[str, list[int]]] = {}
        for i, obj in self.objects:
            for key in self.references.get(obj, ()):
                referencing.setdefault(_DUMPS(key[2]), {}).setdefault(_key_text(key), []).append(i)
        buckets = {ns: _DUMPS(dict(sorted(keys.items()))) for ns, keys in sorted(referencing.items())}
        return {file: _runs_of(ids) for file, ids in sorted(self.files.items())}, self.always, buckets


def _places(row: list[Any]) -> Iterator[str]:
    """The files whose lines `row` names: its own, its notes', its fix's (`_moved_row` moves them)."""
    yield row[0]
    for note in row[10]:
        yield note[1]
    if row[16] is not None:
        yield row[16][2]


def _key_text(key: Iterable[Any]) -> str:
    return _DUMPS(list(key))


def _runs_of(ids: Iterable[int]) -> list[list[int]]:
    """Ascending `ids` as runs [first, count]."""
    runs: list[list[int]] = []
    for i in ids:
        if runs and i == runs[-1][0] + runs[-1][1]:
            runs[-1][1] += 1
        else:
            runs.append([i, 1])
    return runs


def _laid_out(
    fields: dict[str, Any],
    rows: Iterable[list[Any]],
    fingerprints: Iterable[str] | str,
    sections: Callable[[], tuple[dict[str, list[list[int]]], list[int], dict[str, str]]],
    policies: Iterable[dict[str, Any]] | None,
) -> Iterator[str]:
    """The entry's pieces, as lines (compact JSON holds no line break: strings escape theirs):

    - every row, the active findings' then the suppressed ones', each followed by a comma, so
      that the rows from the i-th to before the j-th are a JSON list once put in brackets;
    - the active findings' fingerprints, as the list `memo.remember` writes (`fingerprints`: that
      list's text, or the fingerprints);
    - the sections of the rows of the objects that reference each namespace's objects
      (`_Index.sections`), one after another;
    - the policies section, when kept (empty otherwise);
    - the index, last, so that the rows are written as they are encoded: `fields`, where each row
      starts and the others end (`offsets`), where each section lies, which rows each file's
      answer reads (`files`, as runs) and those every answer reads (`always`: an internal
      error's).

    A comment's answer decodes the index and the rows it reads alone (policylint.incremental
    `recall`), not the thousands of rows of a repository analysed whole; a text report, the
    hook's, never reads the policies section."""
    offsets = [0]
    position = 0
    for row in rows:
        text = _DUMPS(row) + ","
        yield text
        position += len(text)
        offsets.append(position)
    listed = fingerprints if isinstance(fingerprints, str) else _DUMPS(sorted(set(fingerprints)))
    yield "\n" + listed + "\n"
    located = [position + 1, position + 1 + len(listed)]
    position = located[1] + 1
    files, always, buckets = sections()
    spans: dict[str, list[int]] = {}
    for ns, text in buckets.items():
        yield text
        spans[ns] = [position, position + len(text)]
        position += len(text)
    yield "\n"
    position += 1
    policies_at = None
    if policies is not None:
        start = position
        for piece in _pieces({"policies": policies}):
            yield piece
            position += len(piece)
        policies_at = [start, position]
    yield "\n"
    index = {
        **fields,
        "offsets": offsets,
        "fingerprints": located,
        "buckets": spans,
        "policies": policies_at,
        "files": files,
        "always": always,
    }
    yield _DUMPS(index)


class Recalled:
    """A whole entry read back: its index decoded and checked; each row decoded, checked
    (`_row`) and moved by the links followed to it when it is read (`rows`). Raises on any shape
    `remember` does not write."""

    def __init__(self, data: bytes, links: list[dict[str, dict[int, int]]], decode_policies: bool) -> None:
        self.data = data
        self.links = links
        index = json.loads(data[data.rindex(b"\n") + 1 :])
        if type(index) is not dict or index.get("format") != FORMAT:
            raise ValueError("format")
        size = len(data)
        self.findings, self.suppressed = _int(index["findings"]), _int(index["suppressed"])
        self.objects, self.policy_count = _int(index["objects"]), _int(index["policyCount"])
        self.baseline_migrated = _int(index["baselineMigrated"])
        self.policies_kept = index["policiesKept"]
        offsets = _list(index["offsets"])
        if (
            type(self.policies_kept) is not bool
            or len(offsets) != self.findings + self.suppressed + 1
            or offsets[0] != 0
            or not all(type(o) is int for o in offsets)
            or any(a >= b for a, b in itertools.pairwise(offsets))
            or data[offsets[-1] : offsets[-1] + 1] != b"\n"
        ):
            raise ValueError("offsets")
        self._offsets = offsets
        self._fingerprints = _span(index["fingerprints"], size)
        self._buckets = {_str(ns): _span(at, size) for ns, at in _dict(index["buckets"]).items()}
        files = _dict(index["files"])
        self._files = files
        self._always = [_id(i, len(offsets) - 1) for i in _list(index["always"])]
        at = index["policies"]
        if (at is not None) is not self.policies_kept:
            raise ValueError("policies")
        self.policies: list[dict[str, Any]] | None = None
        if at is not None and decode_policies:
            start, end = _span(at, size)
            policies = json.loads(data[start:end])["policies"]
            if not (type(policies) is list and all(type(p) is dict for p in policies)):
                raise ValueError("policies")
            self.policies = policies

    def ids_touching(self, files: Iterable[str]) -> set[int]:
        """The rows whose lines are in `files` (theirs, their notes', their fix's: `_places`)."""
        total = len(self._offsets) - 1
        ids: set[int] = set()
        for file in files:
            for first, count in map(_pair, _list(self._files.get(file, []))):
                if not (type(first) is int and type(count) is int and first >= 0 and count > 0 and first + count <= total):
                    raise ValueError(file)
                ids.update(range(first, first + count))
        return ids

    def ids_referencing(self, keys: Iterable[tuple[Any, ...]]) -> set[int]:
        """The rows of the objects that reference one of `keys` (`_Index`), and those of an
        internal error (which every report scope holds)."""
        total = len(self._offsets) - 1
        ids = set(self._always)
        decoded: dict[str, dict[str, Any]] = {}
        for key in keys:
            ns = _DUMPS(key[2])
            bucket = decoded.get(ns)
            if bucket is None:
                at = self._buckets.get(ns)
                bucket = decoded[ns] = _dict(json.loads(self.data[at[0] : at[1]])) if at is not None else {}
            ids.update(_id(i, total) for i in _list(bucket.get(_key_text(key), [])))
        return ids

    def rows(self, ids: Iterable[int]) -> dict[int, list[Any]]:
        """The rows `ids`, each checked and moved by the links followed to the entry; raises
        when one cannot be (a place on a line a link's change touched)."""
        out: dict[int, list[Any]] = {}
        offsets, data = self._offsets, self.data
        ordered = sorted(ids)
        k = 0
        while k < len(ordered):
            # A run of consecutive rows decoded in one call.
            j = k
            while j + 1 < len(ordered) and ordered[j + 1] == ordered[j] + 1:
                j += 1
            first, last = ordered[k], ordered[j]
            decoded = json.loads(b"[" + data[offsets[first] : offsets[last + 1] - 1] + b"]")
            if len(_list(decoded)) != last - first + 1:
                raise ValueError(first)
            for i, row in zip(range(first, last + 1), decoded):
                _row(row)
                if (i < self.findings) is (row[13] is not None):
                    raise ValueError(row)  # a suppressed finding carries how, an active one does not
                for maps in self.links:
                    moved = _moved_row(row, maps)
                    if moved is None:
                        raise ValueError(row)
                    row = moved
                out[i] = row
            k = j + 1
        return out

    def all_rows(self) -> list[list[Any]]:
        rows = self.rows(range(len(self._offsets) - 1))
        return [rows[i] for i in range(len(rows))]

    def fingerprints(self) -> bytes:
        """The active findings' fingerprints, as the list `memo.remember` writes."""
        start, end = self._fingerprints
        return self.data[start:end]

    def sections(self) -> tuple[dict[str, list[list[int]]], list[int], dict[str, str]]:
        """The index's fields and the namespaces' sections, as `_Index.sections` gave them."""
        buckets = {ns: self.data[start:end].decode("ascii") for ns, (start, end) in self._buckets.items()}
        return self._files, self._always, buckets

    def fields(self) -> dict[str, Any]:
        return {
            "format": FORMAT,
            "findings": self.findings,
            "suppressed": self.suppressed,
            "policiesKept": self.policies_kept,
            "objects": self.objects,
            "policyCount": self.policy_count,
            "baselineMigrated": self.baseline_migrated,
        }


def _span(value: Any, size: int) -> tuple[int, int]:
    start, end = _pair(value)
    if not (type(start) is int and type(end) is int and 0 < start <= end < size):
        raise ValueError(value)
    return start, end


def _id(value: Any, total: int) -> int:
    if not (type(value) is int and 0 <= value < total):
        raise ValueError(value)
    return value


def _int(value: Any) -> int:
    if type(value) is not int:
        raise ValueError(value)
    return value


def _str(value: Any) -> str:
    if type(value) is not str:
        raise ValueError(value)
    return value


def _dict(value: Any) -> dict[Any, Any]:
    if type(value) is not dict:
        raise ValueError(value)
    return value


def _row(row: Any) -> None:
    """Raises unless `row` has the shape of `results._finding_row`'s where `answer` reads it."""
    file, line, related, end_line, fix = row[0], row[1], row[10], row[14], row[16]
    if not (type(row) is list and len(row) == 17 and type(file) is str and type(line) is int and type(end_line) is int):
        raise ValueError(row)
    for note in _list(related):
        if not (len(_quad(note)) == 4 and type(note[1]) is str and type(note[2]) is int):
            raise ValueError(row)
    if fix is not None and not (type(_quad(fix)[2]) is str and type(fix[3]) is int):
        raise ValueError(row)
    if row[7] is not None:
        _key(row[7])


def _key(row: Any) -> ObjectKey:
    from policylint.k8s.objects import ObjectKey

    group, kind, namespace, name = _quad(row)
    if not (type(group) is str and type(kind) is str and type(name) is str and (namespace is None or type(namespace) is str)):
        raise ValueError(row)
    return ObjectKey(group, kind, namespace, name)


def _moved_policies(policies: list[dict[str, Any]], maps: Mapping[str, dict[int, int]]) -> bool:
    """Move, in place, the lines in the changed files of the policies section's reports as their
    lines moved; False when one cannot be (a report on a line the change touched)."""
    for report in policies if maps else ():
        file: Any = report.get("file")
        lines = maps.get(file)
        if lines is not None:
            at: Any = report.get("line")
            line = lines.get(at)
            if line is None:
                return False
            report["line"] = line
    return True


def _moved_row(row: list[Any], maps: Mapping[str, dict[int, int]]) -> list[Any] | None:
    """`row` (`results._finding_row`'s) with its places in the changed files moved, or None."""
    lines = maps.get(row[0])
    related, fix = row[10], row[16]
    if lines is None and not any(note[1] in maps for note in related) and (fix is None or fix[2] not in maps):
        return row
    row = list(row)
    if lines is not None:
        if row[3].startswith("PL0"):
            return None  # an input problem: its message may name lines
        line = lines.get(row[1])
        end = lines.get(row[14]) if row[14] > 0 else row[14]
        if line is None or end is None:
            return None
        row[1], row[14] = line, end
    notes = []
    for note in related:
        at = maps[note[1]].get(note[2]) if note[1] in maps else note[2]
        if at is None:
            return None
        notes.append([note[0], note[1], at, note[3]])
    row[10] = notes
    # A fix's document by the line its root starts on; 0: a new document appended to the file.
    if fix is not None and fix[2] in maps and fix[3] > 0:
        at = maps[fix[2]].get(fix[3])
        if at is None:
            return None
        row[16] = [fix[0], fix[1], fix[2], at]
    return row
