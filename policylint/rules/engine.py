"""The rule engine: select rules, run them, resolve positions, sort."""

from __future__ import annotations

import contextlib
import hashlib
import json
import re
from collections.abc import Callable, Container, Iterable, Iterator, Mapping, Sequence
from dataclasses import field, fields, replace
from json.encoder import encode_basestring_ascii
from operator import attrgetter
from typing import TYPE_CHECKING

from policylint.findings import INTERNAL_ERROR as INTERNAL_ERROR  # where a report can read it without the rules
from policylint.findings import Finding, Issue, Location, Related, ResolvedFix, ResolvedRelated, Severity
from policylint.input.positions import PositionResolver, Request, path_parts
from policylint.k8s.objects import ObjectKey
from policylint.profiles.registry import ORIGIN_INFERRED
from policylint.project import Project
from policylint.rulecodes import Selection as Selection  # with the codes it matches, out of the rules' package
from policylint.rules import workers
from policylint.rules.base import POLICY, ObjectRule, PolicyRule, Rule, RuleOptionError, UnitRule
from policylint.textsafe import MAX_MESSAGE, truncate
from policylint.values import frozen, record

if TYPE_CHECKING:
    from policylint.incremental.rulecache import Reuse
    from policylint.profiles.policy import Policy

INTERNAL_ERROR_NAME = "internal-error"

# Findings shown per file. A file with more is broken or generated wholesale (10,000 empty
# documents make 10,000 PL003 findings, a 14 MB file of them made 913 MB of JSON): its first
# thousand findings, in file order, show what is wrong, and output and memory stay
# proportional to what a reader can use. One PL007 finding, where the hidden ones start,
# says how many are not shown; it has the highest severity among them, so that the exit
# code and `--fail-on` decide as they would have on every finding.
MAX_FINDINGS_PER_FILE = 1_000
RESOURCE_LIMIT = "PL007"
RESOURCE_LIMIT_NAME = "input-resource-limit"


@frozen
class EngineResult:
    findings: list[Finding]
    internal_error: bool


def issues(rule: Rule, project: Project, share: tuple[int, int] | None = None, reuse: Reuse | None = None) -> Iterable[Issue]:
    """What `rule` finds: over the whole project, or, for a per-object rule (`ObjectRule`,
    `PolicyRule`), over the k-th of n shares of the objects (`share`, (k, n); None: all of them),
    in index order. The objects are shared by namespace (every n-th namespace, from the k-th,
    `ProjectIndex.share_of`): a namespace's objects repeat each other's content, whose verdicts
    the admission memo computes once per process; shared object by object, each process computed
    most of them again (docs/performance.md, "`--jobs`"). `reuse`: the results kept of earlier
    runs, for the rules they hold (policylint.incremental.rulecache) run in this process."""
    if share is None:
        if reuse is not None and isinstance(rule, ObjectRule) and reuse.covers(type(rule)):
            return reuse.checks(rule)
        if reuse is not None and reuse.whole is not None:
            # A long-lived process's last run's issues, while the project holds the same objects
            # (policylint.incremental.unchanged), else, for a rule that declares its unit, each
            # unit's while the answers it read are the same objects (policylint.incremental.units).
            whole = reuse.whole
            if isinstance(rule, UnitRule):
                return whole.issues(rule.id, lambda: whole.units(rule, project))
            return whole.issues(rule.id, lambda: rule.check(project))
        return rule.check(project)
    k, n = share
    index = project.index
    if isinstance(rule, ObjectRule):
        return (issue for obj in index.share(k, n) for issue in rule.check_object(project, obj))
    if isinstance(rule, PolicyRule):
        return (issue for policy in project.derived(_PolicyShares).share(k, n) for issue in rule.check_policy(project, policy))
    raise TypeError(f"{rule.id} is not a per-object rule: it runs over the whole project")


class _PolicyShares:
    """The policies of each share of the objects (`ProjectIndex.share_of`), in `policies()` order,
    each share's list made once per process for every `PolicyRule` run over it: each share of
    each rule went through every policy to find its own, 32,008 calls of `share_of` for PL201's
    8 shares at 10,000 objects, and as many for PL301's (docs/performance.md, "`--jobs 2`'s
    critical path: less work after the fork")."""

    def __init__(self, project: Project) -> None:
        self._project = project
        self._parts: dict[int, list[list[Policy]]] = {}

    def share(self, k: int, n: int) -> list[Policy]:
        parts = self._parts.get(n)
        if parts is None:
            parts = self._parts[n] = [[] for _ in range(n)]
            share_of = self._project.index.share_of
            for policy in self._project.resolution.policies():
                parts[share_of(policy.obj, n)].append(policy)
        return parts[k]


def _check(
    rule_cls: type[Rule],
    project: Project,
    config: Mapping[str, object] | None = None,
    share: tuple[int, int] | None = None,
    reuse: Reuse | None = None,
) -> tuple[list[Issue], Issue | None]:
    """The rule's issues (on a share of the objects, `issues`), or the PL000 issue saying it
    failed; none on a field holding a placeholder PL004 reports, or inside one (`_on_placeholder`)."""
    try:
        found = list(issues(rule_cls(config), project, share, reuse))
    except Exception as exc:  # a broken rule must not cost the other rules' findings
        return [], _failure(rule_cls, project, exc)
    try:
        return [issue for issue in found if not _on_placeholder(project, issue)], None
    except Exception as exc:
        return [], _failure(rule_cls, project, exc)


def _on_placeholder(project: Project, issue: Issue) -> bool:
    """Whether the issue sits on a field, or inside one, that holds a placeholder a tool
    substitutes before applying (`{GATEWAY_CLASS_NAME}`, `${NAMESPACE}`, `PLACEHOLDER_ADDRS`):
    PL004 reports the file once, and the value checked is not the one applied
    (policylint.input.placeholders; `ProjectIndex.placeholders`)."""
    obj = issue.object
    if obj is None or not issue.path:
        return False
    return project.index.on_placeholder(obj, path_parts(issue.path))


def _resolve_rule(
    rule_cls: type[Rule], project: Project, issues: list[Issue], resolve: Callable[[Issue], Finding]
) -> tuple[list[Finding], Issue | None]:
    # Positions are resolved inside a guard too: an issue a rule cannot describe (a bad object or
    # path) is that rule's failure, not the whole run's.
    try:
        return [resolve(issue) for issue in issues], None
    except Exception as exc:
        return [], _failure(rule_cls, project, exc)


def _failure(rule_cls: type[Rule], project: Project, exc: Exception) -> Issue:
    import traceback  # only when a rule fails: not worth its import on every run

    frame = traceback.extract_tb(exc.__traceback__)[-1]
    where = f"{frame.filename.rsplit('/', 1)[-1]}:{frame.lineno}"
    first = project.index.files[0] if project.index.files else "<input>"
    return Issue(
        rule_id=INTERNAL_ERROR,
        message=f"rule {rule_cls.id} ({rule_cls.name}) failed: {type(exc).__name__}: {exc} [{where}]; please report this",
        location=Location(first, 1, 1),
    )


def _requests(issues: Iterable[Issue]) -> Iterator[Request]:
    """The (document, path) of every issue and note that has one, for `PositionResolver.prefetch`."""
    for issue in issues:
        places: tuple[Issue | Related, ...] = (issue, *issue.related)
        for where in places:
            try:
                if where.object is not None:
                    yield where.object.doc, where.object.doc_path(where.path)
                elif isinstance(where, Issue) and where.document is not None:
                    yield where.document, where.path
            except Exception:  # resolving it alone fails the same way: that rule's PL000
                continue


def check_options(rules: Sequence[type[Rule]], options: Mapping[str, Mapping[str, object]]) -> None:
    """Raise RuleOptionError (a usage error) for options of unknown rules or that a rule does not
    declare, before anything runs: inside a rule's guard they would read as a crash (PL000)."""
    by_id = {r.id: r for r in rules}
    for rule_id, config in options.items():
        rule_cls = by_id.get(rule_id)
        if rule_cls is None:
            raise RuleOptionError(f"options for {rule_id}, which is not a rule")
        rule_cls(config)


class _Runner:
    """Runs units of work (`workers.Unit`) in this process: every rule over its share of the
    objects first, then the positions of all their findings and notes together, one pass per
    file that has any (PositionResolver.prefetch). With shares of the per-object rules (several
    processes), the positions of a share's findings are resolved as soon as its units are done,
    so that they are part of the unit of work the queue shares out: resolved at the end, those
    of the process that took the shares with most findings kept the other waiting."""

    def __init__(
        self,
        project: Project,
        rules: Sequence[type[Rule]],
        resolver: PositionResolver,
        options: Mapping[str, Mapping[str, object]],
        reuse: Reuse | None = None,
    ) -> None:
        self.project = project
        self.resolver = resolver
        self.options = options
        self.reuse = reuse
        self.catalogue: dict[str, type[Rule]] = {rule_cls.id: rule_cls for rule_cls in rules}
        self.guessed = _guessed_policies(project) if any(POLICY in r.subjects for r in rules) else frozenset()

    def resolve(self, issue: Issue) -> Finding:
        return _resolve(issue, self.catalogue, self.resolver, self.guessed)

    def _prefetch(self, checked: list[tuple[workers.Unit, list[Issue], Issue | None]], answered: int) -> int:
        # The batch only saves work: a request it cannot answer (an issue no rule should have made)
        # is resolved alone below, where it is its rule's PL000.
        with contextlib.suppress(Exception):
            self.resolver.prefetch(_requests(issue for _, issues, _ in checked[answered:] for issue in issues))
        return len(checked)

    def __call__(self, units: Iterable[workers.Unit]) -> dict[workers.UnitKey, workers.RuleResult]:
        project = self.project
        checked: list[tuple[workers.Unit, list[Issue], Issue | None]] = []
        shares = False
        answered = 0  # checked[:answered] have their positions
        for unit in units:
            if checked and checked[-1][0][1] is not None and checked[-1][0][1] != unit[1]:
                answered = self._prefetch(checked, answered)
            checked.append((unit, *_check(unit[0], project, self.options.get(unit[0].id), unit[1], self.reuse)))
            shares = shares or unit[1] is not None
            if not shares:
                # A whole rule's lookups serve no other unit: freed now, as a rule object's own
                # would be (at 100k objects they are tens of MiB). Once shares of per-object rules
                # run here, more of them may follow: their lookups are kept to the end.
                project.forget_derived(done=False)
        project.forget_derived()
        self._prefetch(checked, answered)
        return {
            workers.key(unit): _resolve_rule(unit[0], project, issues, self.resolve) if failure is None else ([], failure)
            for unit, issues, failure in checked
        }


@record
class Started:
    """Rules started before the stages are built (`start`, `advance`); `run` finishes them."""

    runner: _Runner
    # One per stage the rules were started at, in that order (policylint.rules.workers).
    pools: list[workers.Pool]
    jobs: int
    rules: list[type[Rule]] = field(default_factory=list)

    def queued(self) -> set[str]:
        """The ids of the rules handed to the pools."""
        return {rule_cls.id for pool in self.pools for bundle in pool.todo for rule_cls, _ in bundle}

    def advance(
        self, project: Project, prepare: Callable[[], object] | None = None, handback: Sequence[Callable[[], bytes]] = ()
    ) -> None:
        """Start, in other processes, the rules whose stages are built now (those they read and
        those they come after, `Rule.after`) and that no earlier call started: the pipeline calls it
        once the topology is built, so that what reads the topology runs while this process builds
        the simulation. `prepare`: work this process does next whatever happens, done first when
        children are forked, so that they inherit its results rather than each working them out
        again."""
        queued = self.queued()
        ready = [r for r in self.rules if r.id not in queued and all(project.has_stage(stage) for stage in r.reads | r.after)]
        if ready:
            if prepare is not None and workers.forks(project, self.jobs):
                prepare()
            pool = workers.start(project, ready, self.runner, self.jobs, self.pools, handback=handback)
            if pool is not None:
                self.pools.append(pool)

    def handed_back(self, part: int = 0) -> bytes | None:
        """The `part`th of what the first pool's first child worked out before its rules
        (`start`'s `handback`), once it has; None when no child was asked to, or it did not write
        it."""
        return self.pools[0].handed_back(part) if self.pools else None

    def close(self) -> None:
        """End the processes still running the rules (a run that stopped before `run`)."""
        for pool in self.pools:
            pool.close()


def start(
    project: Project,
    rules: Iterable[type[Rule]],
    resolver: PositionResolver,
    options: Mapping[str, Mapping[str, object]] | None = None,
    jobs: int = 1,
    reuse: Reuse | None = None,
    handback: Sequence[Callable[[], bytes]] = (),
) -> Started:
    """Start, in other processes (`jobs` > 1, policylint.rules.workers), the rules of `rules` whose
    stages are built, while this process builds the rest (`Started.advance` starts more as they
    are built); `run` runs the others and gathers all. The pipeline calls it before the first stage
    is built, with every rule `run` may be given: the rules that read the index alone then run
    while this process builds the admissions and the topology. `reuse`: what the per-object rules
    found in earlier runs (policylint.incremental.rulecache), read and added to by the rules run
    in this process. `handback`: work the first child does before its rules, part after part, each of
    which this process reads once it needs it (`Started.handed_back`) rather than doing it
    meanwhile."""
    selected = list(rules)
    started = Started(_Runner(project, selected, resolver, options or {}, reuse), [], jobs, selected)
    started.advance(project, handback=handback)
    return started


def run(
    project: Project,
    rules: Iterable[type[Rule]],
    resolver: PositionResolver,
    failures: Iterable[Issue] = (),
    objects: Container[ObjectKey] | None = None,
    started: Started | None = None,
) -> EngineResult:
    """Run `rules` over the project.

    `failures` are PL000 issues of the pipeline's own steps (a stage that failed to build, the
    report's policies section): resolved, sorted and fingerprinted with the rules' findings.
    `objects`: the objects whose findings are kept (None: all); the others' are dropped before the
    per-file cap, as if never found (the context of a scoped analysis, policylint.semantics.components).
    `started`: what `start` started before the stages were built, with each rule's options (rule
    id -> option name -> value) and the processes to share the rules among
    (policylint.rules.workers; the result is the same); None: every rule runs here, in this
    process, with its default options."""
    selected = list(rules)
    runner = started.runner if started is not None else _Runner(project, selected, resolver, {})
    jobs = started.jobs if started is not None else 1
    if started is not None and started.pools:
        queued = started.queued()
        results = started.pools[-1].finish([(r, None) for r in selected if r.id not in queued], runner, started.pools[:-1])
    else:
        # Nothing started before the simulation (no rule was ready, or one process): all now.
        pool = workers.start(project, selected, runner, jobs)
        results = pool.finish([], runner) if pool is not None else runner([(r, None) for r in selected])
    findings: list[Finding] = []
    internal: list[Issue] = list(failures)
    for produced, failure in workers.results_in_order(selected, results):
        findings.extend(produced)
        if failure is not None:
            internal.append(failure)
    if objects is not None:
        findings = [f for f in findings if f.object is None or f.object in objects]
    findings.extend(runner.resolve(issue) for issue in internal)
    findings = _dedupe(findings)
    findings.sort(key=Finding.sort_key)
    return EngineResult(with_fingerprints(_cap_per_file(findings)), bool(internal))


def _cap_per_file(findings: list[Finding]) -> list[Finding]:
    """At most MAX_FINDINGS_PER_FILE findings per file (sorted), then one PL007 finding for the rest.

    PL000 (a rule that failed) is never hidden: it says the run itself is incomplete.
    """
    shown: dict[str, int] = {}
    hidden: dict[str, tuple[Finding, int, Severity]] = {}  # first hidden, how many, worst severity
    out: list[Finding] = []
    for f in findings:
        if f.rule == INTERNAL_ERROR:
            out.append(f)
            continue
        count = shown.get(f.file, 0)
        if count < MAX_FINDINGS_PER_FILE:
            shown[f.file] = count + 1
            out.append(f)
            continue
        first, n, worst = hidden.get(f.file, (f, 0, f.severity))
        hidden[f.file] = (first, n + 1, max(worst, f.severity))
    if not hidden:
        return findings
    for file, (first, n, worst) in hidden.items():
        out.append(
            Finding(
                file=file,
                line=first.line,
                column=first.column,
                rule=RESOURCE_LIMIT,
                name=RESOURCE_LIMIT_NAME,
                severity=worst,
                message=f"{n:,} more findings in this file not shown (at most {MAX_FINDINGS_PER_FILE:,} per file)",
            )
        )
    out.sort(key=Finding.sort_key)
    return out


def _dedupe(findings: list[Finding]) -> list[Finding]:
    seen: set[tuple[object, ...]] = set()
    out = []
    for f in findings:
        key = (f.file, f.line, f.column, f.rule, f.message, f.object)
        if key not in seen:
            seen.add(key)
            out.append(f)
    return out


def _position(issue: Issue | Related, resolver: PositionResolver) -> tuple[str, int, int, int, int]:
    """File, start line and column, end line and column of an issue or a note."""
    if issue.object is not None:
        obj = issue.object
        return obj.doc.file, *resolver.span(obj.doc, obj.doc_path(issue.path))
    document = getattr(issue, "document", None)
    if document is not None:
        return document.file, *resolver.span(document, issue.path)
    if issue.location is not None:
        loc = issue.location
        return loc.file, loc.line, loc.column, loc.line, loc.column
    return "<input>", 1, 1, 1, 1


def _guessed_policies(project: Project) -> frozenset[ObjectKey]:
    """Policies whose kind no profile or CRD describes: their profile is inferred from the shape
    (policylint.profiles.registry.inferred_profile), so what the rules about policies conclude
    from it is a guess. Istio's and Linkerd's additive `AuthorizationPolicy` look like Gateway API
    policies and are not: a guess never fails a run."""
    return frozenset(p.key for p in project.resolution.policies() if p.profile.origin == ORIGIN_INFERRED)


def _resolve(
    issue: Issue, catalogue: dict[str, type[Rule]], resolver: PositionResolver, guessed: frozenset[ObjectKey] = frozenset()
) -> Finding:
    file, line, column, end_line, end_column = _position(issue, resolver)
    rule = catalogue.get(issue.rule_id)
    if rule is None:
        name, severity = INTERNAL_ERROR_NAME, Severity.ERROR
    else:
        name, severity = rule.name, rule.severity
    # Messages are bounded here, where every finding is made: a rule that quotes a huge value
    # cannot make a finding (or a note) megabytes long.
    related = tuple(ResolvedRelated(truncate(r.message, MAX_MESSAGE), *_position(r, resolver)[:3]) for r in issue.related)
    obj = issue.object
    key = obj.key if obj is not None else None
    message = truncate(issue.message, MAX_MESSAGE)
    return Finding(
        file=file,
        line=line,
        column=column,
        rule=issue.rule_id,
        name=name,
        severity=_capped(issue.severity if issue.severity is not None else severity, issue, rule, guessed),
        message=message,
        object=key,
        api_version=obj.api_version if obj is not None else "",
        path=issue.path,
        related=related,
        hint=truncate(issue.hint, MAX_MESSAGE) if issue.hint else None,
        # Its base fingerprint (occurrence 0), written as the finding is made: `with_fingerprints`
        # numbers the few that share one, and made each finding a second time to set it.
        fingerprint=_digest(issue.rule_id, key, file, issue.path, message),
        end_line=end_line,
        end_column=end_column,
        fix=_resolved_fix(issue),
    )


def _resolved_fix(issue: Issue) -> ResolvedFix | None:
    fix, obj = issue.fix, issue.object
    if fix is None or obj is None:
        return None
    appended = [edit.append_to for edit in fix.edits if edit.append_to is not None]
    if appended:  # a new document in another object's file (policylint.autofix)
        return ResolvedFix(fix.description, fix.safe, appended[0].doc.file, 0, fix.edits)
    within = [edit.within for edit in fix.edits if edit.within is not None]
    if within:  # edits of another object (one object per fix: policylint.autofix applies one document)
        obj = within[0]
    if not obj.prefix:
        # The object is its document, so each edit's path is already the document's (`doc_path`):
        # the fix's own edits, not a copy of each made per finding.
        return ResolvedFix(fix.description, fix.safe, obj.doc.file, obj.doc.line, fix.edits)
    edits = tuple(replace(edit, path=obj.doc_path(edit.path)) for edit in fix.edits)
    return ResolvedFix(fix.description, fix.safe, obj.doc.file, obj.doc.line, edits)


def _capped(severity: Severity, issue: Issue, rule: type[Rule] | None, guessed: frozenset[ObjectKey]) -> Severity:
    """At most info for a finding of a rule about policies on a policy whose kind was guessed."""
    if rule is not None and issue.object is not None and POLICY in rule.subjects and issue.object.key in guessed:
        return min(severity, Severity.INFO)
    return severity


FINGERPRINT_BYTES = 16
_POSITION_IN_MESSAGE = re.compile(r"\b(line|column) [0-9]+")


def fingerprint(f: Finding, occurrence: int = 0) -> str:
    """A stable identity for a finding, for baselines and code-scanning deduplication.

    The hex BLAKE2b digest (16 bytes, 32 hex digits) of the JSON array
    `[rule, group, kind, namespace, name, file, path, message, occurrence]` where:

    - `rule` is the rule id (`PL201`);
    - for a finding on an object, `group`, `kind`, `namespace` (null when cluster-scoped) and
      `name` are its `ObjectKey`, and `file` and `message` are empty strings: moving the object
      to another file or rewording the message keeps the fingerprint;
    - for a finding without an object (an input problem: PL0xx, PL000), `group`, `kind`,
      `namespace` and `name` are null, `file` is the file's display name and `message` the
      message, which is what tells such findings apart, with each `line <n>` and `column <n>`
      in it made `line _` and `column _` (PL002 names the line of the first key);
    - `path` is the finding's field path (`spec.targetRefs[0]`; empty for none);
    - `occurrence` is 0, or n for the (n+1)-th finding with the same other fields, counted in
      the engine's sort order (`with_fingerprints`).

    Line and column numbers are never part of it, nor any other finding: inserting lines above
    an object, adding or removing other objects or findings, or passing the files in another
    order leaves it unchanged.
    """
    return _digest(f.rule, f.object, f.file, f.path, f.message, occurrence)


def _digest(rule: str, key: ObjectKey | None, file: str, path: str, message: str, occurrence: int = 0) -> str:
    """`fingerprint` of a finding with these fields."""
    # The array written out as `json.dumps(parts, ensure_ascii=True, separators=(",", ":"))`
    # writes it, item by item (`_json`; the occurrence, an int, as its digits): dumping a list
    # builds an encoder per call, and was a third of the fingerprints' time.
    if key is not None:
        text = (
            f"[{_json(rule)},{_json(key.group)},{_json(key.kind)},{_json(key.namespace)},{_json(key.name)},"
            f'"",{_json(path)},"",{occurrence:d}]'
        )
    else:
        message = _POSITION_IN_MESSAGE.sub(r"\1 _", message)
        text = f"[{_json(rule)},null,null,null,null,{_json(file)},{_json(path)},{_json(message)},{occurrence:d}]"
    return hashlib.blake2b(text.encode("ascii"), digest_size=FINGERPRINT_BYTES).hexdigest()


def _json(value: object) -> str:
    """`value` as `json.dumps(value, ensure_ascii=True)` writes it: a string as the encoder's own
    ASCII escaping writes it, None as null, anything else through `json.dumps`."""
    if isinstance(value, str):
        return encode_basestring_ascii(value)
    if value is None:
        return "null"
    return json.dumps(value, ensure_ascii=True, separators=(",", ":"))


def with_fingerprints(findings: list[Finding]) -> list[Finding]:
    """The sorted findings with their fingerprints; findings that would share one (same rule,
    object or file, path and, for file-level findings, message) are told apart by their
    occurrence counter in that order. A finding that carries a fingerprint carries its base one
    (occurrence 0), as the engine makes it (`_resolve`): it is kept as it is unless it is a
    repeat; one without is given its own."""
    seen: dict[str, int] = {}
    out = []
    for f in findings:
        base = f.fingerprint or fingerprint(f)
        occurrence = seen.get(base, 0)
        seen[base] = occurrence + 1
        if occurrence == 0 and f.fingerprint:
            out.append(f)
        else:
            out.append(_with_fingerprint(f, base if occurrence == 0 else fingerprint(f, occurrence)))
    return out


# Finding's fields, in the order its `__init__` takes them, and where the fingerprint is among them.
_FINDING_FIELDS = tuple(f.name for f in fields(Finding))
_FINDING_VALUES = attrgetter(*_FINDING_FIELDS)
_FINGERPRINT_AT = _FINDING_FIELDS.index("fingerprint")


def _with_fingerprint(f: Finding, value: str) -> Finding:
    """`dataclasses.replace(f, fingerprint=value)`, which looks every field up by name again and
    cost two thirds of the fingerprints' time on a repository with thousands of findings."""
    values: list[object] = list(_FINDING_VALUES(f))
    values[_FINGERPRINT_AT] = value
    return Finding(*values)  # type: ignore[arg-type]  # each in its field's place
