"""A change that leaves every object's data as it was, answered from the base's whole analysis
(policylint.incremental).

The gate of `--staged`, `--diff` and the pre-commit hook analyses the change's side, and on a
repository whose objects all reach each other that is the whole repository
(docs/performance.md, "The hook's first run where one change reaches everything"). Yet a change
that only adds or removes comment lines and blank lines outside every value, leaving each object's
data, its place among the file's documents and every other file as they were, cannot change any
verdict: every stage reads the objects' data and the files' names, never their comments. So the
change's findings are the base's, those in a changed file on the lines the same text moved to.

What counts as such a change: every file git says it touched is a source it modified (no file
added, removed or renamed, no ignore file or configuration changed: `_base_files`), so that the
base's files are this side's with the modified ones at their base content; and for each of those
(`_line_map`), decided from its two texts and checked on what the loader makes of them:

- every line that is not the same on both sides is blank or a comment alone (`#` after blanks),
  and no line breaks but `\\n` (YAML also breaks lines at `\\r`, NEL and the Unicode separators);
- the loader finds no problem in either text (PL0xx: a template marker in a comment is one), the
  same number of documents, each with data of the same `repr` (which tells apart `1` and `"1"`
  and keeps the key order: a comment line inside a block scalar is content, and changes it), its
  root on a line the unchanged text moved to, at the same column;
- neither text holds a `policylint:` comment (an inline suppression applies to lines, which the
  change moves: policylint.suppressions.comments); the file is not named `*.json`;
- no finding kept names a changed file's line in its text (PL005's "first definition at
  FILE:LINE", the cluster inferred from an object, quoted with its place), nor is an input
  problem (PL0xx) located there.

Re-indenting, quoting, reordering keys or documents, or anything else that moves text within a
line is not taken: the positions of findings inside such a line are not the base's, and they are
resolved only by analysing (what a finding points at is kept resolved, not as its field path).

The base's findings come from the entry a whole analysis keeps (`remember`): every active and
suppressed finding (what the reporters show, `results`' rows), the policies section when the run
made it, the object and policy counts, and what each object with a finding references (which
decides the report scope: policylint.report_scope). It is named by the whole run's key
(`memo.key`: every file's name and content key, the settings that shape findings, the code), and
written by the whole analyses of a gate's runs (either side), the runs that later compare against
it. Not kept: a run with an internal error, a JSON data file skipped, CRDs in the input (they decide
the kinds' scope, so an object's key: the changed files' keys are built here with the built-in
kinds), a result past `results.MAX_BYTES`.

The answer is the base's findings, fingerprint for fingerprint, so none is introduced; the report
scope is worked out on the entry's rows as `ReportScope.in_scope` does. It is kept for the next
commit, whose base this change's side is: the rows moved, under this side's files, and the whole
run's fingerprints (policylint.incremental.memo). The entry is decoded as plain JSON and only the
rows a run reports are made findings (`results._findings`, every field checked); the others are
checked for what moving them reads.

Anything this cannot prove falls back to analysing: `answer` returns None.
"""

from __future__ import annotations

import difflib
import json
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from policylint.incremental import memo
from policylint.incremental.results import KeptResult, _finding_row, _findings, _list, _pair, _pieces, _quad, put_bounded

if TYPE_CHECKING:
    from policylint.commands.change import Measured
    from policylint.findings import Finding
    from policylint.input.cache import ParseCache
    from policylint.input.document import FileResult
    from policylint.input.sources import Discovery, Source
    from policylint.k8s.objects import K8sObject, ObjectKey
    from policylint.report_scope import ChangeSet
    from policylint.request import LintRequest

# Bump when an entry's layout or meaning changes. 2: the policies section after the rest.
FORMAT = 2
# The same for a link (`_link`), whose layout FORMAT 2 left as it was.
_LINK_FORMAT = 1
_NAME = "findings of a whole analysis"
# Line breaks YAML knows besides `\n` (YAML 1.1 spec §5.4 "Line Break Characters"; libyaml breaks lines at each): a text holding
# one is not mapped line by line here.
_OTHER_BREAKS = ("\r", "\x85", "\u2028", "\u2029")
# The links a run follows back to a whole entry (`recall`): each costs a read and its maps applied
# to the rows, and a link whose base was pruned is a miss (analysed), so a chain is kept short:
# past it, the entry is written whole again.
MAX_LINKS = 8
# How a link's entry starts (`_link`), told apart from a whole one's without decoding it.
_LINK_START = b'{"link":'
_HEX = frozenset("0123456789abcdef")


def entry(cache: ParseCache, request: LintRequest, files: Sequence[tuple[str, str | None]]) -> str | None:
    """The entry of a whole analysis of `request` over `files` ((name, content key) in the run's
    order), or None when none may be kept (`memo.key`)."""
    whole = memo.key(cache, request, files)
    return cache.named(_NAME, whole.encode("ascii")) if whole is not None else None


class Whole:
    """What a whole analysis found (`remember`), read back."""

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
    fields = {
        "format": FORMAT,
        "findings": (_finding_row(f) for f in whole.findings),
        "suppressed": (_finding_row(f) for f in whole.suppressed),
        "policiesKept": whole.policies is not None,
        "objects": whole.objects,
        "policyCount": whole.policy_count,
        "baselineMigrated": whole.baseline_migrated,
        "references": _reference_rows(whole.references),
    }
    put_bounded(cache, name, _laid_out(fields, whole.policies))


def _laid_out(fields: dict[str, Any], policies: Iterable[dict[str, Any]] | None) -> Iterator[str]:
    """The entry's pieces: `fields` as one JSON document, then, when kept, the policies section as
    another after a line break (compact JSON holds none: strings escape theirs). A text report,
    the hook's, never shows the policies section, which is most of the entry on a repository
    analysed whole: `recall` decodes it only for a run that reports it."""
    yield from _pieces(fields)
    if policies is not None:
        yield "\n"
        yield from _pieces({"policies": policies})


def _reference_rows(references: Mapping[Any, Iterable[tuple[Any, ...]]]) -> list[list[Any]]:
    """`references` as the entry's rows, each key and each of its keys as lists, in one order: by
    their JSON text, since a cluster-scoped key's namespace is None and None does not compare with a
    namespace's name."""
    rows = [[list(key), sorted((list(k) for k in keys), key=json.dumps)] for key, keys in references.items()]
    return sorted(rows, key=lambda row: json.dumps(row[0]))


def recall(cache: ParseCache, name: str, *, policies: bool = True) -> tuple[dict[str, Any], bytes, int] | None:
    """What `remember` kept under `name`, as decoded (its rows checked for what `answer` reads of
    them: the others are checked when a run reports them, `results._findings`), the bytes of the
    whole entry it was read from and the number of links followed to it (`_link`); None: missing,
    damaged, not what `remember` or `_link` writes, or past `MAX_LINKS` links. `policies`: the
    policies section decoded too (else `policies` is None and `policiesKept` says whether one is
    kept)."""
    links: list[list[tuple[str, dict[int, int]]]] = []
    while True:
        payload = cache.payload(name)
        if payload is None:
            return None
        data = bytes(payload)
        if not data.startswith(_LINK_START):
            break
        if len(links) == MAX_LINKS:
            return None
        try:
            name, maps = _linked(json.loads(data), name)
        except Exception:  # any shape `_link` does not write: a miss
            return None
        links.append(maps)
    value = _whole(data, policies)
    if value is None:
        return None
    # The link nearest the whole entry moved it first.
    for maps in reversed(links):
        if not _moved(value, dict(maps)):
            return None
    return value, data, len(links)


def _whole(data: bytes, decode_policies: bool) -> dict[str, Any] | None:
    """The whole entry `remember` writes, decoded and checked (see `recall`), or None."""
    try:
        fields, _, rest = data.partition(b"\n")
        value = json.loads(fields)
        if type(value) is not dict or value.get("format") != FORMAT or value["policiesKept"] is not bool(rest):
            return None
        policies = json.loads(rest)["policies"] if rest and decode_policies else None
        if policies is not None and not (type(policies) is list and all(type(p) is dict for p in policies)):
            return None
        value["policies"] = policies
        if not all(type(value[c]) is int for c in ("objects", "policyCount", "baselineMigrated")):
            return None
        for row in (*_list(value["findings"]), *_list(value["suppressed"])):
            _row(row)
        # Compared with the keys of this run's objects only: a key of another shape matches none.
        value["references"] = {
            tuple(_quad(key)): frozenset(map(tuple, _list(keys))) for key, keys in map(_pair, _list(value["references"]))
        }
    except Exception:  # any shape `remember` does not write: a miss
        return None
    return value


def _link(base: str, maps: Mapping[str, dict[int, int]]) -> bytes:
    """The entry of a change answered from the entry `base`: `base`'s name and each changed file's
    line map, as runs of lines that moved together ([first line before, first line after, count]),
    rather than every finding and policy written again (megabytes on a repository analysed whole);
    `recall` applies them to what it reads under `base`."""
    rows = [[file, _runs(lines)] for file, lines in sorted(maps.items())]
    return json.dumps({"link": _LINK_FORMAT, "base": base, "maps": rows}, ensure_ascii=True, separators=(",", ":")).encode(
        "ascii"
    )


def _runs(lines: Mapping[int, int]) -> list[list[int]]:
    """`lines` (line before -> line after) as runs of consecutive lines moved by the same offset."""
    runs: list[list[int]] = []
    for old, new in sorted(lines.items()):
        if runs and old == runs[-1][0] + runs[-1][2] and new == runs[-1][1] + runs[-1][2]:
            runs[-1][2] += 1
        else:
            runs.append([old, new, 1])
    return runs


def _linked(value: Any, name: str) -> tuple[str, list[tuple[str, dict[int, int]]]]:
    """A link's base and its line maps, from what `_link` wrote; raises on any other shape. The base
    is an entry's name of the same shape as the link's own: nothing else is asked of the cache."""
    if type(value) is not dict or value.get("link") != _LINK_FORMAT or set(value) != {"link", "base", "maps"}:
        raise ValueError(value)
    base = value["base"]
    if not (type(base) is str and len(base) == len(name) and base.isascii() and all(c in _HEX for c in base)):
        raise ValueError(base)
    maps: list[tuple[str, dict[int, int]]] = []
    for file, runs in map(_pair, _list(value["maps"])):
        lines: dict[int, int] = {}
        for old, new, count in map(_triple, _list(runs)):
            if not (type(old) is int and type(new) is int and type(count) is int and old > 0 and new > 0 and count > 0):
                raise ValueError(runs)
            lines.update(zip(range(old, old + count), range(new, new + count)))
        if type(file) is not str:
            raise ValueError(file)
        maps.append((file, lines))
    return base, maps


def _triple(value: Any) -> list[Any]:
    if len(_list(value)) != 3:
        raise ValueError(value)
    return list(value)


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


# -- the change's side answered from the base's ----------------------------------------------------


def answer(
    request: LintRequest, measured: Measured, discovered: tuple[Discovery, list[Source]], keys: Mapping[str, str | None]
) -> KeptResult | None:
    """The change's result, classified, when every changed file leaves its objects' data as it
    was and the base's whole analysis is kept (see the module's docstring); None otherwise.
    `keys`: each source's content key, as the command's result entry hashed it. What it answers is
    kept for the next commit, whose base this change is."""
    from policylint.input.cache import open_cache

    change = measured.change
    if (
        change is None
        or request.sources is not None
        or request.crd_paths
        or request.profile_paths
        or request.report_chains
        or tuple(request.context_paths) != (measured.context,)
    ):
        return None
    # As the base's side opens it: never a cache inside the repository.
    cache, _ = open_cache(request.cache_dir, [measured.context])
    if cache is None:
        return None
    found, sources = discovered
    now = [(s.display, keys.get(s.display)) for s in sources]
    paths = _modified(measured)
    before = _base_files(cache, measured, now, paths)
    if before is None:
        return None
    # The changed files first: a change of values (most) is told from them, without reading the
    # base's findings (megabytes of them on a repository analysed whole).
    maps: dict[str, dict[int, int]] = {}
    for (file, new_key), (_, old_key) in zip(now, before):
        if new_key != old_key:
            assert new_key is not None and old_key is not None
            source = next(s for s in sources if s.display == file)
            mapped = _line_map(cache, file, measured.before_contents.get(paths[file]), old_key, source, new_key)
            if mapped is None:
                return None
            maps[file] = mapped
    name = entry(cache, request, before)
    kept = recall(cache, name, policies=request.report_policies) if name is not None else None
    if kept is None:
        return None
    whole, data, links = kept
    # A text quoting a changed file's place (PL005's first definition, the cluster inferred from an
    # object) would quote it moved.
    if (request.report_policies and whole["policies"] is None) or any(
        json.dumps(f"{file}:").encode("ascii")[1:-1] in data for file in maps
    ):
        return None
    scope = _scope(request, sources, change, cache, dict(now), whole["references"])
    if scope is None or not _moved(whole, maps):
        return None
    # Kept for the next commit: its base is this change's side, analysed as a whole. As a link to
    # the base's entry while the chain a run reads back is short, else written whole. Not over an
    # entry of the same files kept already (a comment removed again: the base's base), which says
    # the same, and which a link written over it could make part of a cycle.
    staged = entry(cache, request, now)
    if staged is not None and not cache.holds(staged):
        assert name is not None
        if links < MAX_LINKS:
            cache.put(staged, _link(name, maps))
        else:
            full = whole if whole["policies"] is not None or not whole["policiesKept"] else _with_policies(cache, name, maps)
            if full is not None:
                put_bounded(cache, staged, _laid_out(whole_entry(full), full["policies"]))
    fingerprints = memo.key(cache, request, now)
    if fingerprints is not None:
        memo.remember(cache, fingerprints, (row[12] for row in whole["findings"]))
    return _result(request, measured, found, sources, scope, whole)


def defines_kinds(objects: Iterable[K8sObject]) -> bool:
    """Whether `objects` hold a CRD: it decides the kinds' scope, so the objects' keys, which a
    change answered here works out with the built-in kinds (no whole analysis of them is kept)."""
    return any(o.kind == "CustomResourceDefinition" for o in objects)


def whole_entry(whole: dict[str, Any]) -> dict[str, Any]:
    """The entry's fields as `remember` writes them (the policies section apart: `_laid_out`), from
    what `recall` read."""
    return {key: value for key, value in whole.items() if key != "policies"} | {
        "references": _reference_rows(whole["references"])
    }


def _with_policies(cache: ParseCache, name: str, maps: Mapping[str, dict[int, int]]) -> dict[str, Any] | None:
    """What `recall` reads under `name` with its policies section, moved by `maps`: the entry an
    answer writes whole when its own run did not decode that section."""
    kept = recall(cache, name)
    return kept[0] if kept is not None and _moved(kept[0], maps) else None


def _base_files(
    cache: ParseCache, measured: Measured, now: Sequence[tuple[str, str | None]], paths: Mapping[str, str]
) -> list[tuple[str, str | None]] | None:
    """The base's files as a whole run over it names them: this change's, but for the files it
    modified, at their content at the base; None when the change did anything else (a file added,
    removed or renamed, a file that is not a source modified: an ignore file, the configuration)."""
    from policylint.input.load import is_json_name

    if any(c.status != "M" or c.old is None or c.old != c.new for c in measured.changes) or any(k is None for _, k in now):
        return None
    modified = dict(paths)  # `_modified`'s, emptied as they are found
    out: list[tuple[str, str | None]] = []
    for display, key in now:
        path = modified.pop(display, None)
        if path is not None:
            content = measured.before_contents.get(path)
            if content is None:
                return None
            key = cache.key(content, json=is_json_name(display))
        out.append((display, key))
    return out if not modified else None


def _modified(measured: Measured) -> dict[str, str]:
    """The files the change modified, by the name a run shows (policylint.input.commit
    `commit_sources`: relative to the working directory) -> their path in the repository."""
    import os

    from policylint.input.sources import display_name

    return {display_name(os.path.relpath(os.path.join(measured.root, c.old))): c.old for c in measured.changes if c.old}


def _result(
    request: LintRequest, measured: Measured, found: Discovery, sources: Sequence[Source], scope: _Scope, whole: dict[str, Any]
) -> KeptResult:
    """The run's result as the pipeline and the gate make it (policylint.pipeline `_lint`,
    policylint.commands.change `classify`), from every finding of the whole analysis kept, moved.
    Its findings are the base's (the same fingerprints): none is introduced, in the scope or out."""
    from policylint.input.load import PARSER_IS_C, PURE_PYTHON_NOTE

    files = [s.display for s in sources]
    notes = list(found.notes)
    if not PARSER_IS_C:
        notes.append(PURE_PYTHON_NOTE)
    policies = whole["policies"]
    return KeptResult(
        findings=_findings([row for row in whole["findings"] if scope.holds(row)]),
        suppressed=_findings([row for row in whole["suppressed"] if scope.holds(row)], suppressed=True),
        files=[f for f in files if f in scope.files],
        context_files=sorted(set(files) - scope.files),
        notes=notes,
        skipped=list(found.skipped),
        policy_reports=[p for p in policies if p.get("file") in scope.files] if request.report_policies else None,
        objects=whole["objects"],
        policies=whole["policyCount"],
        baseline_migrated=whole["baselineMigrated"],
        show_suppressed=request.show_suppressed,
        introduced=frozenset(),
        base=measured.base_name,
        change_files=(measured.considered, measured.elsewhere),
    )


class _Scope:
    """policylint.report_scope.ReportScope's `in_scope`, on the rows of the entry."""

    def __init__(
        self,
        files: frozenset[str],
        objects: frozenset[tuple[Any, ...]],
        references: Mapping[tuple[Any, ...], frozenset[tuple[Any, ...]]],
    ) -> None:
        self.files = files
        self.objects = objects
        self.references = references

    def holds(self, row: list[Any]) -> bool:
        from policylint.findings import INTERNAL_ERROR

        if row[3] == INTERNAL_ERROR or row[0] in self.files or any(note[1] in self.files for note in row[10]):
            return True
        return row[7] is not None and bool(self.references.get(tuple(row[7]), frozenset()) & self.objects)


def _scope(
    request: LintRequest,
    sources: Sequence[Source],
    change: ChangeSet,
    cache: ParseCache,
    keys: Mapping[str, str | None],
    references: Mapping[tuple[Any, ...], frozenset[tuple[Any, ...]]],
) -> _Scope | None:
    """The report scope a run would work out (policylint.report_scope.ReportScope.of), or None when
    it cannot be told without the index: the objects of the files reported on, built with the
    built-in kinds (the whole analysis kept had no CRD), and none removed."""
    from policylint.input.load import is_json_name
    from policylint.k8s.objects import KindRegistry, build_objects
    from policylint.report_scope import report_files

    files = report_files(request, sources)
    if files is None:
        return None
    documents = []
    for source in sources:
        if source.display in files:
            key = keys.get(source.display)
            loaded = _loaded(cache, source.display, key, source) if key is not None and not is_json_name(source.display) else None
            if loaded is None or loaded.issues:
                return None
            documents.extend(loaded.documents)
    built = build_objects(documents, KindRegistry.builtin(), request.namespace)
    if defines_kinds(built.objects):
        return None
    objects = frozenset(o.key for o in built.objects)
    if not change.before <= objects:
        return None  # an object the change removed: found through the index
    return _Scope(files, frozenset(tuple(k) for k in objects), references)


def _loaded(cache: ParseCache, file: str, key: str, source: Source | None, data: bytes | None = None) -> FileResult | None:
    """What the loader makes of a file: its cache entry, else its bytes parsed."""
    from policylint.input.load import load_bytes
    from policylint.input.reader import read_bytes

    result = cache.load(key, file)
    if result is not None:
        return result
    if data is None and source is not None:
        data, problem = read_bytes(source)
        if problem is not None:
            return None
    return load_bytes(data, file) if data is not None else None


def _line_map(
    cache: ParseCache, file: str, old: bytes | None, old_key: str, source: Source, new_key: str
) -> dict[int, int] | None:
    """Each line of the file's base text -> its line in the changed text, when the change leaves
    every object's data as it was (see the module's docstring); None otherwise."""
    from policylint.input.load import is_json_name
    from policylint.input.reader import decode, read_bytes
    from policylint.suppressions.comments import MARKER

    new, problem = read_bytes(source)
    if old is None or new is None or problem is not None or is_json_name(file):
        return None
    old_text, old_problem = decode(old, file)
    new_text, new_problem = decode(new, file)
    if old_text is None or new_text is None or old_problem is not None or new_problem is not None:
        return None
    if MARKER in old_text or MARKER in new_text or any(b in old_text or b in new_text for b in _OTHER_BREAKS):
        return None
    before, after = old_text.split("\n"), new_text.split("\n")
    # A line of data one side has more often than the other lies outside every block the two
    # texts share, whatever the alignment, so the diff would decline on it: a change of values
    # (most changes) is told in one pass over the lines, without the diff, which costs a
    # thousand-line file tens of milliseconds.
    if _data_lines(before) != _data_lines(after):
        return None
    mapping: dict[int, int] = {}
    matcher = difflib.SequenceMatcher(None, before, after, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            mapping.update(zip(range(i1 + 1, i2 + 1), range(j1 + 1, j2 + 1)))
        elif not all(_inert(line) for line in before[i1:i2]) or not all(_inert(line) for line in after[j1:j2]):
            return None
    old_loaded = _loaded(cache, file, old_key, None, old)
    new_loaded = _loaded(cache, file, new_key, None, new)
    if old_loaded is None or new_loaded is None or old_loaded.issues or new_loaded.issues:
        return None
    if len(old_loaded.documents) != len(new_loaded.documents):
        return None
    for a, b in zip(old_loaded.documents, new_loaded.documents):
        if mapping.get(a.ref.line) != b.ref.line or a.ref.column != b.ref.column or repr(a.data) != repr(b.data):
            return None
    return mapping


def _data_lines(lines: Iterable[str]) -> Counter[str]:
    """How many times each line that is not `_inert` occurs."""
    return Counter(line for line in lines if not _inert(line))


def _inert(line: str) -> bool:
    """A blank line, or a comment alone on its line."""
    stripped = line.lstrip(" \t")
    return not stripped or stripped.startswith("#")


def _moved(whole: dict[str, Any], maps: Mapping[str, dict[int, int]]) -> bool:
    """Move, in place, the places in the changed files of every finding and policy of `whole` as
    their lines moved; False when one cannot be (an input problem there, a place on a line the
    change touched)."""
    if not maps:
        return True
    for rows in (whole["findings"], whole["suppressed"]):
        for i, row in enumerate(rows):
            moved = _moved_row(row, maps)
            if moved is None:
                return False
            rows[i] = moved
    for report in whole["policies"] or ():
        lines = maps.get(report.get("file"))
        if lines is not None:
            line = lines.get(report.get("line"))
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
