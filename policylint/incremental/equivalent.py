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
run's fingerprints (policylint.incremental.memo). The entry is read through its index
(policylint.incremental.wholeentry): only the rows the report scope may hold (those in the files
reported on, or whose notes name them, and those of the objects referencing theirs) and those the
change or a link moves are decoded, checked for what moving them reads, and only those the scope
holds are made findings (`results._findings`, every field checked).

Anything this cannot prove falls back to analysing: `answer` returns None.
"""

from __future__ import annotations

import difflib
import json
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from policylint.incremental import memo
from policylint.incremental.results import KeptResult, _findings, _list, _pair, put_bounded
from policylint.incremental.wholeentry import FORMAT, Recalled, Whole, _laid_out, _moved_policies, _moved_row, remember

__all__ = ["FORMAT", "MAX_LINKS", "Recalled", "Whole", "answer", "defines_kinds", "entry", "recall", "remember"]

if TYPE_CHECKING:
    from policylint.commands.change import Measured
    from policylint.input.cache import ParseCache
    from policylint.input.document import FileResult
    from policylint.input.sources import Discovery, Source
    from policylint.k8s.objects import K8sObject
    from policylint.report_scope import ChangeSet
    from policylint.request import LintRequest

# The same for a link (`_link`), whose layout FORMATs 2 and 3 left as they were.
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
    return _named(cache, whole) if whole is not None else None


def _named(cache: ParseCache, whole: str) -> str:
    """The entry of a whole analysis whose `memo.key` is `whole`."""
    return cache.named(_NAME, whole.encode("ascii"))


def recall(cache: ParseCache, name: str, *, policies: bool = True) -> tuple[Recalled, bytes, int] | None:
    """What `remember` kept under `name`, its index decoded and checked (its rows are decoded and
    checked as they are read, `Recalled.rows`), the bytes of the whole entry it was read from and
    the number of links followed to it (`_link`); None: missing, damaged, not what `remember` or
    `_link` writes, or past `MAX_LINKS` links. `policies`: the policies section decoded too (else
    `policies` is None and `policies_kept` says whether one is kept)."""
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
        # The link nearest the whole entry moved it first.
        links.insert(0, maps)
    try:
        value = Recalled(data, [dict(maps) for maps in links], policies)
    except Exception:  # any shape `remember` does not write: a miss
        return None
    if value.policies is not None and not all(_moved_policies(value.policies, maps) for maps in value.links):
        return None
    return value, data, len(links)


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
    if (request.report_policies and whole.policies is None) or any(
        json.dumps(f"{file}:").encode("ascii")[1:-1] in data for file in maps
    ):
        return None
    scope = _scope(request, sources, change, cache, dict(now))
    if scope is None:
        return None
    rows = _rows(whole, scope, maps)
    if rows is None:
        return None
    # Kept for the next commit: its base is this change's side, analysed as a whole. As a link to
    # the base's entry while the chain a run reads back is short, else written whole. Not over an
    # entry of the same files kept already (a comment removed again: the base's base), which says
    # the same, and which a link written over it could make part of a cycle.
    fingerprints = memo.key(cache, request, now)
    staged = _named(cache, fingerprints) if fingerprints is not None else None
    if staged is not None and not cache.holds(staged):
        assert name is not None
        if links < MAX_LINKS:
            cache.put(staged, _link(name, maps))
        else:
            _write_whole(cache, staged, name, whole, maps)
    if fingerprints is not None:
        memo.remember_listed(cache, fingerprints, whole.fingerprints())
    in_scope = sorted(i for i in rows if scope.holds(i, rows[i]))
    return _result(request, measured, found, sources, scope, whole, [(i, rows[i]) for i in in_scope])


def _rows(whole: Recalled, scope: _Scope, maps: Mapping[str, dict[int, int]]) -> dict[int, list[Any]] | None:
    """The rows of `whole` that the report scope may hold and every row the change or a link
    moves, moved (any of them that cannot be declines the answer, as reading them all did), and
    the policies section's reports moved when it was decoded; None: a row or a report that
    cannot be moved, or an entry not as `remember` writes it."""
    try:
        scope.referencing = whole.ids_referencing(scope.objects)
        moved = whole.ids_touching(maps)
        linked = whole.ids_touching({file for link in whole.links for file in link})
        rows = whole.rows(whole.ids_touching(scope.files) | scope.referencing | moved | linked)
    except Exception:  # any shape `remember` does not write: a miss
        return None
    for i in moved:
        row = _moved_row(rows[i], maps)
        if row is None:
            return None
        rows[i] = row
    if whole.policies is not None and not _moved_policies(whole.policies, maps):
        return None
    return rows


def defines_kinds(objects: Iterable[K8sObject]) -> bool:
    """Whether `objects` hold a CRD: it decides the kinds' scope, so the objects' keys, which a
    change answered here works out with the built-in kinds (no whole analysis of them is kept)."""
    return any(o.kind == "CustomResourceDefinition" for o in objects)


def _write_whole(cache: ParseCache, staged: str, name: str, whole: Recalled, maps: Mapping[str, dict[int, int]]) -> None:
    """Write the entry `staged` whole: what `recall` reads under `name` (`whole`, read again with
    its policies section when its own run did not decode it), every row and policy moved by
    `maps`; nothing when one cannot be moved."""
    if whole.policies is None and whole.policies_kept:
        kept = recall(cache, name)
        if kept is None:
            return
        whole = kept[0]
    try:
        rows = whole.all_rows()
    except Exception:  # any shape `remember` does not write: nothing kept
        return
    for i, row in enumerate(rows):
        moved = _moved_row(row, maps)
        if moved is None:
            return
        rows[i] = moved
    if whole.policies is not None and not _moved_policies(whole.policies, maps):
        return
    fingerprints = whole.fingerprints().decode("ascii")
    put_bounded(cache, staged, _laid_out(whole.fields(), rows, fingerprints, whole.sections, whole.policies))


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
    request: LintRequest,
    measured: Measured,
    found: Discovery,
    sources: Sequence[Source],
    scope: _Scope,
    whole: Recalled,
    rows: Iterable[tuple[int, list[Any]]],
) -> KeptResult:
    """The run's result as the pipeline and the gate make it (policylint.pipeline `_lint`,
    policylint.commands.change `classify`), from every finding of the whole analysis kept, moved
    (`rows`: those the report scope holds, in the entry's order). Its findings are the base's
    (the same fingerprints): none is introduced, in the scope or out."""
    from policylint.input.load import PARSER_IS_C, PURE_PYTHON_NOTE

    files = [s.display for s in sources]
    notes = list(found.notes)
    if not PARSER_IS_C:
        notes.append(PURE_PYTHON_NOTE)
    held = list(rows)
    policies = whole.policies
    return KeptResult(
        findings=_findings([row for i, row in held if i < whole.findings]),
        suppressed=_findings([row for i, row in held if i >= whole.findings], suppressed=True),
        files=[f for f in files if f in scope.files],
        context_files=sorted(set(files) - scope.files),
        notes=notes,
        skipped=list(found.skipped),
        policy_reports=[p for p in policies if p.get("file") in scope.files] if request.report_policies and policies else None,
        objects=whole.objects,
        policies=whole.policy_count,
        baseline_migrated=whole.baseline_migrated,
        show_suppressed=request.show_suppressed,
        introduced=frozenset(),
        base=measured.base_name,
        change_files=(measured.considered, measured.elsewhere),
    )


class _Scope:
    """policylint.report_scope.ReportScope's `in_scope`, on the rows of the entry: `objects`, those
    of the files reported on, whose referrers' rows `Recalled.ids_referencing` gives."""

    def __init__(self, files: frozenset[str], objects: frozenset[tuple[Any, ...]]) -> None:
        self.files = files
        self.objects = objects
        self.referencing: set[int] = set()

    def holds(self, i: int, row: list[Any]) -> bool:
        """Whether the row `i` is in scope: in a file reported on, or a note there, or about an
        object that references one of theirs (`referencing`)."""
        from policylint.findings import INTERNAL_ERROR

        return (
            row[3] == INTERNAL_ERROR
            or row[0] in self.files
            or any(note[1] in self.files for note in row[10])
            or i in self.referencing
        )


def _scope(
    request: LintRequest,
    sources: Sequence[Source],
    change: ChangeSet,
    cache: ParseCache,
    keys: Mapping[str, str | None],
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
    return _Scope(files, frozenset(tuple(k) for k in objects))


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
    from policylint.suppressions import MARKER

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
