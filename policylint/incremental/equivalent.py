"""A change that leaves every object's data as it was, answered from the base's whole analysis
(policylint.incremental).

The gate of `--staged`, `--diff` and the pre-commit hook analyses the change's side, and on a
repository whose objects all reach each other that is the whole repository
(docs/performance.md, "The hook's first run where one change reaches everything"). Yet a change
that only adds or removes comment lines and blank lines outside every value, leaving each object's
data, its place among the file's documents and every other file as they were, cannot change any
verdict: every stage reads the objects' data and the files' names, never their comments. So the
change's findings are the base's, those in a changed file on the lines the same text moved to.

What counts as such a change (`_line_map`), decided from the two texts of each changed file and
checked on what the loader makes of them:

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

Anything this cannot prove falls back to analysing: `answer` returns None.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from policylint.incremental import memo
from policylint.incremental.results import KeptResult, _bounded, _finding_row, _findings, _list, _pair, _pieces, _quad

if TYPE_CHECKING:
    from policylint.commands.change import Base, Measured
    from policylint.findings import Finding
    from policylint.input.cache import ParseCache
    from policylint.input.document import FileResult
    from policylint.input.sources import Discovery, Source
    from policylint.k8s.objects import ObjectKey
    from policylint.report_scope import ChangeSet, ReportScope
    from policylint.request import LintRequest

# Bump when an entry's layout or meaning changes.
FORMAT = 1
_NAME = "findings of a whole analysis"
# Line breaks YAML knows besides `\n` (YAML 1.1 spec §5.4 "Line Break Characters"; libyaml breaks lines at each): a text holding
# one is not mapped line by line here.
_OTHER_BREAKS = ("\r", "\x85", "\u2028", "\u2029")


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
        "policies": whole.policies,
        "objects": whole.objects,
        "policyCount": whole.policy_count,
        "baselineMigrated": whole.baseline_migrated,
        "references": [
            [list(key), sorted(list(k) for k in keys)]
            for key, keys in sorted(whole.references.items(), key=lambda item: json.dumps(list(item[0])))
        ],
    }
    payload = _bounded(_pieces(fields))
    if payload is not None:
        cache.put(name, payload)


def recall(cache: ParseCache, name: str) -> Whole | None:
    """What `remember` kept under `name`, or None: missing, damaged, not what it writes."""
    payload = cache.payload(name)
    if payload is None:
        return None
    try:
        value = json.loads(bytes(payload))
        if type(value) is not dict or value.get("format") != FORMAT:
            return None
        policies = value["policies"]
        if policies is not None and not (type(policies) is list and all(type(p) is dict for p in policies)):
            return None
        references: dict[ObjectKey, frozenset[ObjectKey]] = {}
        for row in _list(value["references"]):
            key, keys = _pair(row)
            references[_key(key)] = frozenset(_key(k) for k in _list(keys))
        counts = [value["objects"], value["policyCount"], value["baselineMigrated"]]
        if not all(type(c) is int for c in counts):
            return None
        return Whole(
            _findings(value["findings"]),
            _findings(value["suppressed"], suppressed=True),
            policies,
            counts[0],
            counts[1],
            counts[2],
            references,
        )
    except Exception:  # any shape `remember` does not write: a miss
        return None


def _key(row: Any) -> ObjectKey:
    from policylint.k8s.objects import ObjectKey

    group, kind, namespace, name = _quad(row)
    if not (type(group) is str and type(kind) is str and type(name) is str and (namespace is None or type(namespace) is str)):
        raise ValueError(row)
    return ObjectKey(group, kind, namespace, name)


# -- the change's side answered from the base's ----------------------------------------------------


def answer(
    request: LintRequest,
    measured: Measured,
    discovered: tuple[Discovery, list[Source]],
    keys: Mapping[str, str | None],
    base: Base,
) -> KeptResult | None:
    """The change's result, classified, when every changed file leaves its objects' data as it
    was and the base's whole analysis is kept (see the module's docstring); None otherwise.
    `keys`: each source's content key, as the command's result entry hashed it. What it answers is
    kept for the next commit, whose base this change is."""
    change, cache = measured.change, base.kept.cache
    if (
        change is None
        or cache is None
        or request.sources is not None
        or request.crd_paths
        or request.profile_paths
        or request.report_chains
        or tuple(request.context_paths) != (measured.context,)
    ):
        return None
    found, sources = discovered
    now = [(s.display, keys.get(s.display)) for s in sources]
    before = base.kept.files
    if len(now) != len(before) or any(a[0] != b[0] or a[1] is None or b[1] is None for a, b in zip(now, before)):
        return None  # a file added, removed or renamed, or one that could not be read
    name = entry(cache, base.request, before)
    whole = recall(cache, name) if name is not None else None
    if whole is None or (request.report_policies and whole.policies is None):
        return None
    old_sources = {s.display: s for s in base.sources}
    maps: dict[str, dict[int, int]] = {}
    for (file, new_key), (_, old_key) in zip(now, before):
        if new_key == old_key:
            continue
        assert new_key is not None and old_key is not None
        source = next(s for s in sources if s.display == file)
        mapped = _line_map(cache, file, old_sources[file].content, old_key, source, new_key)
        if mapped is None:
            return None
        maps[file] = mapped
    scope = _scope(request, sources, change, cache, dict(now), whole)
    if scope is None:
        return None
    findings = _moved(whole.findings, maps)
    suppressed = _moved(whole.suppressed, maps)
    policies = _moved_policies(whole.policies, maps) if whole.policies is not None else None
    if findings is None or suppressed is None or (whole.policies is not None and policies is None):
        return None
    moved = Whole(findings, suppressed, policies, whole.objects, whole.policy_count, whole.baseline_migrated, whole.references)
    # Kept for the next commit: its base is this change's side, analysed as a whole.
    staged = entry(cache, request, now)
    if staged is not None:
        remember(cache, staged, moved)
    fingerprints = memo.key(cache, request, now)
    if fingerprints is not None:
        memo.remember(cache, fingerprints, (f.fingerprint for f in findings))
    return _result(request, measured, found, sources, scope, frozenset(f.fingerprint for f in whole.findings), moved)


def _result(
    request: LintRequest,
    measured: Measured,
    found: Discovery,
    sources: Sequence[Source],
    scope: ReportScope,
    base_found: frozenset[str],
    whole: Whole,
) -> KeptResult:
    """The run's result as the pipeline and the gate make it (policylint.pipeline `_lint`,
    policylint.commands.change `classify`), from the findings of every file (`whole`, moved) and
    those of the base (`base_found`, fingerprints)."""
    from policylint.findings import Finding
    from policylint.input.load import PARSER_IS_C

    files = [s.display for s in sources]
    findings = whole.findings
    reported = scope.findings(findings)
    knock_on = [f for f in findings if not scope.in_scope(f)] if measured.elsewhere == 0 else []
    introduced = frozenset(f.fingerprint for f in [*reported, *knock_on] if f.fingerprint not in base_found)
    caused = [f for f in knock_on if f.fingerprint in introduced]
    if caused:
        reported = sorted([*reported, *caused], key=Finding.sort_key)
    notes = list(found.notes)
    if not PARSER_IS_C:
        notes.append("PyYAML was built without libyaml: parsing with its pure-Python loader, several times slower")
    policies = whole.policies
    return KeptResult(
        findings=reported,
        suppressed=scope.findings(whole.suppressed),
        files=[f for f in files if f in scope.files],
        context_files=sorted(set(files) - scope.files),
        notes=notes,
        skipped=list(found.skipped),
        policy_reports=scope.policy_reports(policies) if request.report_policies and policies is not None else None,
        objects=whole.objects,
        policies=whole.policy_count,
        baseline_migrated=whole.baseline_migrated,
        show_suppressed=request.show_suppressed,
        introduced=introduced,
        base=measured.base_name,
        change_files=(measured.considered, measured.elsewhere),
    )


def _scope(
    request: LintRequest,
    sources: Sequence[Source],
    change: ChangeSet,
    cache: ParseCache,
    keys: Mapping[str, str | None],
    whole: Whole,
) -> ReportScope | None:
    """The report scope a run would work out (policylint.report_scope.ReportScope.of), or None when
    it cannot be told without the index: the objects of the files reported on, built with the
    built-in kinds (the whole analysis kept had no CRD), and none removed."""
    from policylint.input.load import is_json_name
    from policylint.k8s.objects import KindRegistry, build_objects
    from policylint.report_scope import ReportScope, report_files

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
    if any(o.kind == "CustomResourceDefinition" for o in built.objects):
        return None
    objects = frozenset(o.key for o in built.objects)
    if not change.before <= objects:
        return None  # an object the change removed: found through the index
    return ReportScope(files, objects, whole.references)


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


def _inert(line: str) -> bool:
    """A blank line, or a comment alone on its line."""
    stripped = line.lstrip(" \t")
    return not stripped or stripped.startswith("#")


def _moved(findings: Iterable[Finding], maps: Mapping[str, dict[int, int]]) -> list[Finding] | None:
    """The findings with their places in the changed files moved as their lines did; None when
    one cannot be (an input problem there, a place on a line the change touched, a text quoting a
    changed file's place)."""
    if not maps:
        return list(findings)
    quoted = tuple(f"{file}:" for file in maps)
    out: list[Finding] = []
    for f in findings:
        texts = (f.message, f.hint or "", *(r.message for r in f.related))
        if any(q in t for q in quoted for t in texts):
            return None
        moved = f
        lines = maps.get(f.file)
        if lines is not None:
            if f.rule.startswith("PL0"):
                return None
            line = lines.get(f.line)
            end = lines.get(f.end_line) if f.end_line > 0 else f.end_line
            if line is None or end is None:
                return None
            moved = replace(moved, line=line, end_line=end)
        if any(r.file in maps for r in f.related):
            related = []
            for r in f.related:
                at = maps[r.file].get(r.line) if r.file in maps else r.line
                if at is None:
                    return None
                related.append(replace(r, line=at) if at != r.line else r)
            moved = replace(moved, related=tuple(related))
        if f.fix is not None and f.fix.file in maps:
            at = maps[f.fix.file].get(f.fix.document_line)
            if at is None:
                return None
            moved = replace(moved, fix=replace(f.fix, document_line=at))
        out.append(moved)
    return out


def _moved_policies(policies: list[dict[str, Any]], maps: Mapping[str, dict[int, int]]) -> list[dict[str, Any]] | None:
    """The policies section with the line of each policy in a changed file moved."""
    quoted = tuple(f"{file}:" for file in maps)
    out = []
    for report in policies:
        if quoted and any(q in json.dumps(report) for q in quoted):
            return None  # a text quoting a changed file's place
        lines = maps.get(report.get("file"))  # type: ignore[arg-type]
        if lines is not None:
            line = lines.get(report.get("line"))  # type: ignore[arg-type]
            if line is None:
                return None
            report = {**report, "line": line}
        out.append(report)
    return out
