"""The whole run as one function: sources -> load -> objects -> index -> resolution -> admissions ->
topology -> simulation -> rules -> findings. Each stage is built once, in that order (policylint.project)."""

from __future__ import annotations

import dataclasses
import gc
import os
from collections.abc import Callable, Iterable, Sequence
from dataclasses import field
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from policylint import reported
from policylint.findings import Finding, Issue, Location
from policylint.gate import GateReport
from policylint.incremental.opened import analysed_whole, keep_per_file, kept_per_file, kept_spans, rule_reuse
from policylint.input.cache import ParseCache, open_cache
from policylint.input.kept import Kept, inflated
from policylint.input.load import PARSER_IS_C, PURE_PYTHON_NOTE, Document, decode
from policylint.input.nonmanifest import DATA, json_data_files
from policylint.input.parallel import effective_jobs
from policylint.input.positions import PositionResolver
from policylint.input.sources import STDIN, Discovery, Skipped, Source
from policylint.k8s.admissions import Admissions
from policylint.k8s.cluster import Cluster
from policylint.k8s.index import LintOptions, ProjectIndex, crd_kind_infos
from policylint.k8s.objects import K8sObject, KindInfo, KindRegistry, ObjectKey, build_objects
from policylint.profiles.crd import profiles_from_crds
from policylint.profiles.implementations import builtin_implementations, installers
from policylint.profiles.producers import Producer, builtin_producers, load_profile_document
from policylint.profiles.registry import ORIGIN_PROFILE, PolicyProfile, ProfileRegistry, builtin_profiles
from policylint.project import Project
from policylint.reading import is_crd as _is_crd
from policylint.reading import load_sources as _load
from policylint.reading import profiles_at as _profiles_at
from policylint.reading import read_crds, read_crds_at
from policylint.report_scope import ReportScope, references, removed, report_files, within
from policylint.request import LintRequest as LintRequest
from policylint.request import discover as discover
from policylint.request import precheck as precheck
from policylint.request import rule_options
from policylint.rules import REGISTRY, engine
from policylint.rules.base import Rule
from policylint.semantics.effective.simulation import Simulation
from policylint.semantics.resolution import Resolution
from policylint.semantics.topology import Topology
from policylint.stages import Stage, closure
from policylint.suppressions import apply as suppressions
from policylint.suppressions.baseline import read_baseline
from policylint.values import record

if TYPE_CHECKING:
    from policylint.attachment_chain import Chain
    from policylint.incremental.resident import Resident
    from policylint.input.cache import ContentKeys


@record
class LintResult:
    findings: list[Finding]
    index: ProjectIndex  # the objects and lookups: `project.index`
    project: Project
    files: list[str]
    internal_error: bool
    rules: tuple[type[Rule], ...]
    # The JSON report's `policies` section when the request asked for it (None: not computed).
    policy_reports: list[dict[str, Any]] | None = None
    # Things the user should know that are not findings, e.g. a cache directory not used and why
    # (the CLI prints each on stderr as a warning).
    notes: list[str] = field(default_factory=list)
    # Findings hidden by an inline suppression, an object annotation or the baseline, each with
    # its `suppression` set: counted and shown on request by every reporter, never failing a run.
    suppressed: list[Finding] = field(default_factory=list)
    # `--show-suppressed`: the text output lists `suppressed` after the findings.
    show_suppressed: bool = False
    # `--write-baseline`: the file written and its entry count (None: not asked).
    baseline_written: tuple[str, int] | None = None
    # Baseline entries that matched only by a finding's fingerprint before its rule's findings
    # moved to another field (policylint.suppressions.fingerprint_versions).
    baseline_migrated: int = 0
    # Files recognised as not manifests (Kustomize, Helm, tool configuration) and not read
    # (policylint.input.nonmanifest): the CLI says how many in one info line.
    skipped: list[Skipped] = field(default_factory=list)
    # `report_chains`: the attachment chains of the findings on policies, active and suppressed,
    # by fingerprint (policylint.attachment_chain).
    chains: dict[str, tuple[Chain, ...]] = field(default_factory=dict)
    # `context_paths`: the files read for context only (not in `files`, their findings hidden).
    context_files: list[str] = field(default_factory=list)
    # What the configuration turned off or down, and what the change under review did to the
    # configuration and the baseline (policylint.gate; set by the command, None: nothing to say).
    gate: GateReport | None = None
    # `--diff` / `--staged` (policylint.commands.change; set by the command): the fingerprints of
    # the findings the change introduces, the others being at the base too, and how the base is
    # named (`HEAD`, the BASE given). None: no change was measured, every finding stands alone.
    introduced: frozenset[str] | None = None
    base: str | None = None
    # A change's run (`change`): the active findings outside the report scope. Those the change
    # introduces are caused by it wherever they are, and are reported too (policylint.commands.change).
    beyond_scope: list[Finding] = field(default_factory=list)
    # A change's run: how many changed files lie under the PATHs given (the change considered),
    # and outside them (not considered).
    change_files: tuple[int, int] | None = None
    # `lint(part=...)`: the objects whose findings the run computed as a whole run would (the
    # members of the part it analysed); None: it analysed everything (policylint.incremental.workspace).
    members: frozenset[ObjectKey] | None = None
    # With `members`: the project of the part analysed, its stages built for it (what the language
    # server navigates after an edit: policylint.server.layers).
    analysed: Project | None = None

    def introduced_by_change(self, finding: Finding) -> bool | None:
        return reported.introduced_by_change(self, finding)

    def change_counts(self) -> tuple[int, int] | None:
        return reported.change_counts(self)

    def object_count(self) -> int:
        return len(self.index.objects)

    def policy_count(self) -> int:
        return self.project.resolution.policy_count()


def _text_reader(texts: dict[str, str | Kept]) -> Callable[[str], str | None]:
    """Positions are resolved in the very text that was parsed, never in the file read again:
    a file edited (or replaced) on disk after parsing would give positions that match nothing
    in what was linted, and a file swapped for a FIFO would block. The resolver asks once per file."""

    def read(file: str) -> str | None:
        # Kept to the end of the run: the resolver keeps only the last few files' texts, and asks
        # again for a file it let go.
        kept = texts.get(file)
        if kept is None or isinstance(kept, str):
            return kept
        text, _ = decode(inflated(kept), file)
        return text

    return read


# What a run must get right, when not everything (`lint(part=...)`): the findings of the files
# and those about the objects named, with everything they depend on.
Part = tuple[frozenset[str], frozenset[ObjectKey]]


def lint(
    request: LintRequest,
    *,
    part: Part | None = None,
    resident: Resident | None = None,
    discovered: tuple[Discovery, list[Source]] | None = None,
    content_keys: ContentKeys | None = None,
    exact: bool = False,
) -> LintResult:
    """Run every selected rule over the inputs. Raises SourceError / ProfileError for usage errors.

    `part`: analyse only what the findings of those files and objects can depend on
    (policylint.semantics.components): they are a whole run's, the others are left out (the
    gate's base side, policylint.commands.change). `resident`: the objects this process's last
    run kept of its files (a long-lived process's, or a change's side handed to its base's),
    taken where the bytes are the same (policylint.incremental.resident), and replaced by this
    run's. `discovered`: what `discover(request)` found already (the command, which keys the
    result it keeps by it: policylint.incremental.results). `content_keys`: the keys of the bytes
    the command read, worked out or kept by their staged blobs, taken where `resident` does not
    carry them (policylint.input.cache `ContentKeys`). `exact`: the findings wanted of `part`
    are its own alone (the gate's base side, which matches a change's findings by their objects
    and files), not those a change of its objects could move besides (an editor's edit, whose
    part is the edited file's: policylint.incremental.workspace), so its objects and its files'
    are the members (policylint.semantics.directed `searched`)."""
    # A lint run allocates millions of short-lived, acyclic objects (YAML nodes, dicts);
    # the cyclic collector only rescans them. One run is short: collect afterwards instead.
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        return _lint(request, part, resident, discovered, content_keys, exact)
    finally:
        if was_enabled:
            gc.enable()


def load_project(request: LintRequest) -> Project:
    """Sources -> project with every stage built, without running the rules (`explain`, `graph`)."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        project = _project(request)[0]
        failures = build_stages(project, (Stage.SIMULATION,))
        if failures:
            raise RuntimeError(failures[0].message)
        return project
    finally:
        if was_enabled:
            gc.enable()


def cluster_of(request: LintRequest) -> Cluster:
    """What the cluster runs, declared and inferred from the request's input (`--show-config`):
    the files are read, no stage is built and no rule runs."""
    return _project(request)[0].index.cluster()


def _project(
    request: LintRequest,
    part: bool = False,
    resident: Resident | None = None,
    discovered: tuple[Discovery, list[Source]] | None = None,
    known: ContentKeys | None = None,
) -> tuple[Project, list[Source], dict[str, str | Kept], list[str], list[Skipped]]:
    found, sources = discovered if discovered is not None else discover(request)
    user_profiles, user_producers = _user_profiles(request)

    # Never a cache inside the linted repository: its authors would choose what the files say.
    cache, cache_note = open_cache(request.cache_dir, [*request.paths, *request.crd_paths])
    notes = [cache_note] if cache_note is not None else []
    notes.extend(found.notes)
    if not PARSER_IS_C:
        notes.append(PURE_PYTHON_NOTE)
    # A run analysing a part builds the objects of the files an earlier scoped run kept the
    # shell of without decoding them (policylint.incremental.shells): the others are loaded.
    lazy = part or (request.scoped_analysis and report_files(request, sources) is not None)
    # Opened before the files are read, so that pruning the cache after them keeps what is kept
    # per file (its objects' verdicts and rule results) with the file's own entry.
    verdicts = kept_per_file(cache, resident, by_content=lazy) if cache is not None else None
    content_keys: dict[str, str] = {}
    shells = None
    if lazy and cache is not None:
        from policylint.incremental.shells import Session

        shells = Session(cache, sources, content_keys, resident, known)
    loaded_sources = [s for s in sources if s.display not in shells.found] if shells is not None else sources
    documents, input_issues, texts = _load(loaded_sources, cache, request.jobs, content_keys)
    # JSON files that hold data, not objects, are skipped like the files known by name.
    data_files = json_data_files(
        ((d.ref.file, d.data) for d in documents), {i.location.file for i in input_issues if i.location is not None}
    )
    skipped = found.skipped
    if data_files:
        documents = [d for d in documents if d.ref.file not in data_files]
        sources = [s for s in sources if s.display not in data_files]
        skipped = [*skipped, *(Skipped(file, DATA) for file in sorted(data_files))]

    # CRDs passed with --crd describe kinds; they are context, not linted themselves.
    input_crds: list[Document] = [d for d in documents if _is_crd(d)]
    kinds, crd_objects, context_crds = _kinds(request, input_crds, user_profiles, cache, notes)
    built = build_objects(documents, kinds, request.namespace)
    every: Sequence[K8sObject] = built.objects
    if shells is not None:
        crd_files = {d.ref.file for d in input_crds}
        shells.remember(loaded_sources, content_keys, documents, input_issues, built, crd_files, request.namespace)
        combined, texts = shells.combine(sources, input_issues, built, texts, kinds, request.namespace)
        every = combined.objects
        input_issues.extend(combined.issues)
    else:
        if resident is not None and cache is not None:
            from policylint.incremental.handover import held_loaded

            # A whole run of a long-lived process: the next part run takes these very objects.
            crd_files = {d.ref.file for d in input_crds}  # loaded by every run: they decide the kinds
            plain = [s for s in sources if s.display not in crd_files]
            resident.keep(held_loaded(plain, content_keys, documents, input_issues, built, texts, request.namespace))
        input_issues.extend(built.issues)

    profiles = ProfileRegistry(
        [user_profiles, builtin_profiles(), profiles_from_crds(crd_objects)],
        implementations=builtin_implementations(),
        producers=[*user_producers, *builtin_producers()],
    )
    index = ProjectIndex(
        objects=_overlaid(request, sources, every),
        kinds=kinds,
        options=LintOptions(
            default_namespace=request.namespace,
            synthetic_rule_names=request.synthetic_rule_names,
            external=request.external,
            complete=request.complete,
            declared=request.declared,
            installers=installers(),
            context_crds=tuple(context_crds),
        ),
        input_issues=input_issues,
        files=[s.display for s in sources],
        content_keys=content_keys,
        previous=resident.index if resident is not None else None,  # its order, worked out from the last run's
    )
    return Project(index, Resolution(index, profiles), verdicts), sources, texts, notes, skipped


def _user_profiles(request: LintRequest) -> tuple[list[PolicyProfile], list[Producer]]:
    """The profiles and producers of the request's `profile:` files, on disk or at its git ref."""
    user_profiles: list[PolicyProfile] = []
    user_producers: list[Producer] = []
    for path in request.profile_paths:
        if request.profiles_at is not None:
            profiles_found, producers_found = _profiles_at(request.profiles_at, path)
        else:
            profiles_found, producers_found = load_profile_document(Path(path), origin=ORIGIN_PROFILE)
        user_profiles.extend(profiles_found)
        user_producers.extend(producers_found)
    return user_profiles, user_producers


def _kinds(
    request: LintRequest,
    input_crds: list[Document],
    user_profiles: list[PolicyProfile],
    cache: ParseCache | None,
    notes: list[str],
) -> tuple[KindRegistry, list[K8sObject], list[K8sObject]]:
    """The kinds the run knows, the CRDs declaring them (the input's, then `--crd`'s) and those of
    `--crd` alone; what went wrong reading `--crd` files is added to `notes`."""
    crd_documents: list[Document] = list(input_crds)
    for crd_path in request.crd_paths:
        if request.crds_at is not None:
            found_crds, problems = read_crds_at(request.crds_at, crd_path, cache, request.jobs)
        else:
            found_crds, problems = read_crds(crd_path, cache, request.jobs, follow_outside_links=request.follow_outside_links)
        crd_documents.extend(found_crds)
        notes.extend(problems)

    builtin_kinds = KindRegistry.builtin()
    crd_objects = build_objects(crd_documents, builtin_kinds).objects
    context_crds = build_objects(crd_documents[len(input_crds) :], builtin_kinds).objects if request.crd_paths else []
    # Scope decides namespace defaulting: user profiles first, then CRDs in the input override.
    profile_kinds = [KindInfo(p.group, p.kind, p.scope) for p in user_profiles]
    return builtin_kinds.with_kinds([*profile_kinds, *crd_kind_infos(crd_objects)]), crd_objects, context_crds


def _overlaid(request: LintRequest, sources: Sequence[Source], objects: Sequence[K8sObject]) -> Sequence[K8sObject]:
    """The objects read, with those of the context that a linted file defines again replaced by
    the linted file's (policylint.k8s.overlay): only with context paths, and only by the linted
    files outside them (standard input's stream always is)."""
    if not request.context_paths or request.sources is not None:
        return objects
    files = report_files(request, sources)
    if files is None:
        return objects
    roots = [os.path.abspath(p) for p in request.context_paths if p != STDIN]
    over = {
        s.display
        for s in sources
        if s.display in files
        and (
            (s.fs_path is None and s.content is not None and not s.snapshot)
            or (s.fs_path is not None and not within(os.path.abspath(s.fs_path), roots))
        )
    }
    if not over:
        return objects
    from policylint.k8s.overlay import overlay  # context paths alone

    return overlay(objects, over, files)


def build_stages(project: Project, wanted: Iterable[Stage], expect: Callable[[Admissions], object] | None = None) -> list[Issue]:
    """Build the semantic stages `wanted` needs, in order (policylint.stages), onto the project.

    A stage that fails to build is left unbuilt and reported as one PL000 issue; what reads it
    is then not run. No stage builds another: each receives the ones before it. `expect`: what
    adopts the verdicts another process works out for this one, once the first is asked for
    (`Admissions.expect`).
    """
    failures: list[Issue] = []
    for stage in closure(frozenset(wanted)):
        if project.has_stage(stage):
            continue
        try:
            if stage is Stage.ADMISSION:
                admissions = Admissions(project.index, project.kept_verdicts)
                if expect is not None:
                    admissions.expect(expect)
                project.attach(admissions=admissions)
            elif stage is Stage.TOPOLOGY:
                project.attach(topology=Topology(project.resolution, project.admissions(), project.kept_topology))
            else:
                project.attach(simulation=Simulation(project.topology(), project.kept_walks))
        except Exception as exc:  # a bug must not cost the findings of the other stages
            first = project.index.files[0] if project.index.files else "<input>"
            failures.append(
                Issue(
                    rule_id=engine.INTERNAL_ERROR,
                    message=f"building the {stage.value} failed: {type(exc).__name__}: {exc}; please report this",
                    location=Location(first, 1, 1),
                )
            )
            break
    return failures


# What the first child works out for this process before its rules (`engine.start`'s
# `handback`), by its part: the parts are in the order it works them out (`_handed_back`).
_VERDICTS = 0
_TARGETS = 1


def _handed_back(project: Project, wanted: set[Stage], resident: Resident | None) -> list[Callable[[], bytes]]:
    """What the first child works out before its rules for this process, in that order (`engine.start`):
    the policies' admission verdicts, which the topology here reads (`_take_verdicts`), then their
    targets, which the child's rules read and the simulation here reads (`_resolve_targets`). The
    verdicts come first: the topology asks for them a stage before the simulation, which builds
    on the topology. None in a long-lived process, whose resolutions are kept with what they read
    (policylint.semantics.keptresolution) and whose topology keeps its refusals
    (policylint.semantics.topology.kept)."""
    if resident is not None or Stage.TOPOLOGY not in closure(frozenset(wanted)):
        return []
    works: list[Callable[[], bytes]] = [partial(_policies_verdicts, project)]
    if Stage.SIMULATION in wanted:
        works.append(partial(_resolutions, project.resolution))
    return works


def _resolutions(resolution: Resolution) -> bytes:
    """In the first child: the policies' target resolutions (policylint.semantics.portable)."""
    from policylint.semantics import portable  # here: only a child of `--jobs` 2 or more runs this

    return portable.write(resolution)


def _policies_verdicts(project: Project) -> bytes:
    """In the first child: the policies' admission verdicts (policylint.k8s.portableverdicts),
    which the topology asks for first thing it reads of the admissions."""
    from policylint.k8s import portableverdicts  # here: only a child of `--jobs` 2 or more runs this

    return portableverdicts.write(project.index, project.kept_verdicts, [policy.obj for policy in project.resolution.policies()])


def _take_verdicts(started: engine.Started, admissions: Admissions) -> None:
    """The policies' verdicts the first child worked out (`_policies_verdicts`), adopted here,
    waiting for them if the child has not written them yet (it does so first); none when it did
    not, and this process works each out when asked (docs/performance.md, "The policies' admission
    verdicts handed back")."""
    handed = started.handed_back(_VERDICTS)
    if handed is not None:
        from policylint.k8s import portableverdicts

        portableverdicts.read(admissions, handed)


def _resolve_targets(project: Project, started: engine.Started | None = None) -> None:
    """Every policy's targets (`Resolution.targets`, kept per policy). PL403, PL404 and PL413 each
    read all of them, and in a child forked before the simulation the first of them to run worked
    them all out again (0.07-0.09 s of CPU at 10,000 objects), as the simulation then did here.
    `started`: the rules started before the stages, whose first child resolved the references
    before its rules (`portable.write`), as PL201 would have first thing: this process takes
    those rather than resolving them again while the child waits (docs/performance.md, "The
    early child's resolutions handed back")."""
    resolution = project.resolution
    handed = started.handed_back(_TARGETS) if started is not None else None
    if handed is not None:
        from policylint.semantics import portable

        portable.read(resolution, handed)
    for policy in resolution.policies():
        resolution.targets(policy)


def _policies_section(
    request: LintRequest, project: Project, rules: Sequence[type[Rule]]
) -> tuple[list[dict[str, Any]] | None, list[Issue]]:
    """The policies section and its failures, when the run reports it. Else, where nothing reads a
    blast radius (PL608 off, no caller after the run: the text report, SARIF, the hook), what
    counting them reads is let go before the rules, not held to the end of the run, where its
    peak memory is (docs/performance.md, "Peak memory at 100,000 objects: the blast radii let go
    before the rules, the kept result written as encoded")."""
    if request.report_policies:
        # Imported here: most runs report no policies section (the text report, the hook).
        from policylint.policy_report import policy_reports

        return policy_reports(project)
    if project.has_stage(Stage.SIMULATION) and not request.radii_after_run:
        options = rule_options(request)
        if not any(rule(options.get(rule.id)).counts_blast_radii() for rule in rules):
            try:
                project.simulation().let_go_of_radii()
            except Exception:  # it only saves memory: a failure here must not cost the findings
                pass
    return None, []


def _lint(
    request: LintRequest,
    part: Part | None = None,
    resident: Resident | None = None,
    discovered: tuple[Discovery, list[Source]] | None = None,
    content_keys: ContentKeys | None = None,
    exact: bool = False,
) -> LintResult:
    engine.check_options(REGISTRY, rule_options(request))  # a usage error, before any work
    baseline = read_baseline(request)  # likewise (BaselineError)
    loaded, sources, texts, notes, skipped = _project(request, part is not None, resident, discovered, content_keys)
    # The project analysed: all of it, or the part the report scope can reach.
    project, members = _analysed(request, sources, loaded, part, resident, exact)
    if members is None:
        analysed_whole(project)
    if resident is not None:
        project.kept_walks = resident.walks
        from policylint.incremental import rulecache

        # Under the key the per-object rule results are kept under: what decides them besides
        # the objects decides what the topology and the policies' resolutions keep too
        # (policylint.semantics.topology.kept, policylint.semantics.keptresolution).
        project.kept_topology = resident.topology.begin(context := rulecache.context(request, project))
        # The same instances as the run before where the objects are: their facets and folds are
        # kept, and their target references' resolutions while what those read answers the same.
        project.resolution.adopt_policies(resident.policies, resident.resolution.begin(context))
        # The same instances as the run before where their files' bytes are: what their fields'
        # types are (PL010, read by every stage) is known already.
        project.index.adopt_malformed(resident.malformed)
    selected = tuple(r for r in REGISTRY if request.selection.enabled(r))
    wanted = {stage for rule in selected for stage in rule.reads}
    if request.report_policies:
        wanted.add(Stage.SIMULATION)  # the JSON report's enforcement and blast radius
    # The spans earlier runs answered of files whose bytes are unchanged: a long-lived process's,
    # else the cache's (policylint.incremental.spans).
    spans = kept_spans(project, resident)
    resolver = PositionResolver(_text_reader(texts), spans, loaded.index.content_keys)
    reuse = rule_reuse(request, project, resident, members)
    # With --jobs, the rules start in other processes as soon as the stages they read are built
    # (policylint.rules.workers): those that read the index alone while this process builds the
    # admissions and the topology, then those that read no later stage while it builds the simulation.
    started = engine.start(
        project,
        selected,
        resolver,
        rule_options(request),
        effective_jobs(request.jobs),
        reuse,
        handback=_handed_back(project, wanted, resident),
    )
    try:
        # The files that may hold `# policylint:` comments, which only this process reads (the
        # suppressions, after the rules): found once the first rule process is forked, not in the
        # stretch before it, where the other CPU waits (docs/performance.md, "`--jobs 2`: the
        # objects built with fewer calls before the first fork").
        commented = suppressions.texts_with_comments(texts)
        failures = build_stages(
            project, {Stage.ADMISSION, Stage.TOPOLOGY} & set(closure(frozenset(wanted))), expect=partial(_take_verdicts, started)
        )
        # The simulation and the rules work out every policy's targets in this process anyway:
        # worked out before the topology's rules are forked, the children inherit them
        # (docs/performance.md, "The policies' targets resolved before the topology's rules are forked").
        started.advance(
            project, prepare=partial(_resolve_targets, project, started) if not failures and Stage.SIMULATION in wanted else None
        )
        if not failures:  # a stage that failed is not built again, nor any after it
            failures = build_stages(project, wanted)
        # A rule whose stage failed to build is not run: the stage's PL000 says why.
        rules = tuple(r for r in selected if all(project.has_stage(s) for s in r.reads))
        # The policies section, whose step that fails is a PL000 next to every other finding, and
        # exit code 2; or, where nothing asks for their blast radii, what counting them reads let go.
        policy_reports, report_failures = _policies_section(request, project, rules)
        failures.extend(report_failures)
        # Context objects of a scoped analysis were analysed without all they depend on: their
        # findings are not theirs, and are dropped.
        result = engine.run(project, rules, resolver, failures=failures, objects=members, started=started)
    finally:
        started.close()
    # A long-lived process holds an edit's few new verdicts and rule results in memory: writing
    # them rewrites each whole entry (`Resident.writes`). Its whole runs write, for the next process.
    write = resident is None or resident.writes or members is None
    if resident is not None:
        from policylint.incremental.handover import keep

        keep(resident, project, loaded, whole=members is None and part is None)
    keep_per_file(project, reuse, len(loaded.index.objects), write=write, spans=spans)
    files = [s.display for s in sources]
    scope = ReportScope.of(request, sources, project, loaded.index)
    outcome = suppressions.run(
        request,
        result.findings,
        suppressions.Inputs(
            texts=commented,
            objects=project.index.objects,
            catalogue=REGISTRY,
            ran=rules,
            resolver=resolver,
            baseline=baseline,
            baseline_file=request.baseline or "",
            linted_files=files,
            require_reason=request.require_suppression_reason,
            today=request.today,
        ),
    )
    active, suppressed = outcome.active, outcome.suppressed
    if request.overrides:
        # Configured severities and per-file settings (policylint.config.overrides), after the
        # suppressions: a suppression of a rule a file turns off is not "unused", and the PL9xx
        # findings about suppressions take their configured severity too.
        from policylint.config import overrides as config_overrides  # configured runs alone

        by_id = {r.id: r for r in rules}
        active = config_overrides.apply(active, by_id, request.overrides)
        suppressed = config_overrides.apply(suppressed, by_id, request.overrides)
    if members is None and not (result.internal_error or outcome.failed):
        _remember(
            request,
            sources,
            loaded,
            skipped,
            (active, suppressed, policy_reports, outcome.baseline_migrated),
            command=resident is None,
        )
    elif members is not None and part is None and not (result.internal_error or outcome.failed):
        _remember_members(request, sources, loaded.index, members, active, project.index.objects)
    beyond: list[Finding] = []
    if scope is not None:
        if request.change is not None:
            beyond = [f for f in active if not scope.in_scope(f)]
        active, suppressed = scope.findings(active), scope.findings(suppressed)
        if policy_reports is not None:
            policy_reports = scope.policy_reports(policy_reports)
    chains = _chains(project, [*active, *suppressed], resolver, notes) if request.report_chains else {}
    return LintResult(
        active,
        loaded.index,
        loaded,
        [f for f in files if f in scope.files] if scope is not None else files,
        result.internal_error or outcome.failed,
        rules,
        policy_reports,
        notes,
        suppressed=suppressed,
        show_suppressed=request.show_suppressed,
        baseline_written=outcome.baseline_written,
        baseline_migrated=outcome.baseline_migrated,
        skipped=skipped,
        chains=chains,
        context_files=sorted(set(files) - scope.files) if scope is not None else [],
        beyond_scope=beyond,
        members=members,
        analysed=project if members is not None else None,
    )


def _remember(
    request: LintRequest,
    sources: Sequence[Source],
    loaded: Project,
    skipped: Sequence[Skipped],
    found: tuple[Sequence[Finding], Sequence[Finding], list[dict[str, Any]] | None, int],
    *,
    command: bool,
) -> None:
    """Keep what this whole analysis found, by the content of its files (policylint.incremental),
    for the gate of a later change to read as its base's findings: in the runs of a gate, this
    run's side of the change (`change`) or the base's (`sources`, read from git), and in a
    command's whole run with a cache (`command`; not a language server's, which keeps its own in
    memory): a user's first run is a whole one (CI, or by hand), their first commit the hook,
    whose base it is (docs/performance.md, "A comment answered from the base's findings"). `found`:
    the active and suppressed findings, the policies section and the baseline's migrated entries,
    before the report scope (`_remember_whole`)."""
    if request.cache_dir is None or (request.change is None and request.sources is None and not command):
        return
    from policylint.incremental import memo

    cache, _ = open_cache(request.cache_dir, [*request.paths, *request.crd_paths])
    if cache is None:
        return
    files = [(s.display, loaded.index.content_keys.get(s.display)) for s in sources]
    entry = memo.key(cache, request, files)
    # A command's run again over the same files: what it found is kept already.
    if entry is not None and not (command and cache.holds(entry)):
        memo.remember(cache, entry, (f.fingerprint for f in found[0]))
    _remember_whole(cache, request, files, loaded, skipped, found, again=command)


def _remember_whole(
    cache: ParseCache,
    request: LintRequest,
    files: Sequence[tuple[str, str | None]],
    loaded: Project,
    skipped: Sequence[Skipped],
    found: tuple[Sequence[Finding], Sequence[Finding], list[dict[str, Any]] | None, int],
    *,
    again: bool,
) -> None:
    """Keep every finding of this whole analysis, before the report scope, for a later change
    that leaves every object's data as it was (policylint.incremental.equivalent). Not when a JSON
    file was skipped as data (the files a later run names are not these) or the input holds a
    CRD (it decides the kinds' scope, so the objects' keys, which that change works out with the
    built-in kinds). `again`: not when it is kept already (a command's run again)."""
    from policylint.incremental import equivalent

    index = loaded.index
    if any(s.category == DATA for s in skipped) or equivalent.defines_kinds(index.objects):
        return
    name = equivalent.entry(cache, request, files)
    if name is None or (again and cache.holds(name)):
        return  # `again`: a command's run, which keeps nothing new of the same files
    active, suppressed, policy_reports, migrated = found
    with_findings = {f.object for f in (*active, *suppressed) if f.object is not None}
    whole = equivalent.Whole(
        list(active),
        list(suppressed),
        policy_reports,
        len(index.objects),
        loaded.resolution.policy_count(),
        migrated,
        references(loaded, with_findings),
    )
    equivalent.remember(cache, name, whole)


def _remember_members(
    request: LintRequest,
    sources: Sequence[Source],
    index: ProjectIndex,
    members: frozenset[ObjectKey],
    active: Sequence[Finding],
    analysed: Sequence[K8sObject],
) -> None:
    """Keep what this scoped analysis found about its part (policylint.incremental.memo,
    `remember_members`): only on the side of a change, whose files are the next commit's base.
    `analysed`: the part's objects, built, whose members' files are the only ones that can hold
    nothing but members besides those holding no object."""
    if request.cache_dir is None or request.change is None or any(f.rule == engine.RESOURCE_LIMIT for f in active):
        return  # a file past the cap of findings hides some: not what a whole run hides
    from policylint.incremental import memo

    cache, _ = open_cache(request.cache_dir, [*request.paths, *request.crd_paths])
    if cache is None:
        return
    entry = memo.key(cache, request, [(s.display, index.content_keys.get(s.display)) for s in sources], members=True)
    if entry is None:
        return
    # Asked only of the files holding a member: the other files holding an object hold one that
    # is not (the members are the part's, every object bearing a member's key among them).
    outside = index.files_outside(members, {o.doc.file for o in analysed if o.key in members})
    whole = {s.display for s in sources} - outside  # every object of the file a member, or none
    found = (f.fingerprint for f in active if (f.object in members if f.object is not None else f.file in whole))
    memo.remember_members(cache, entry, members, whole, found)


def _analysed(
    request: LintRequest,
    sources: Sequence[Source],
    loaded: Project,
    part: Part | None = None,
    resident: Resident | None = None,
    exact: bool = False,
) -> tuple[Project, frozenset[ObjectKey] | None]:
    """The project to analyse and the objects whose findings count (None: all of it), for a run
    whose report scope is narrower than what it read, or that asks for a `part`."""
    index = loaded.index
    if part is not None:
        # The objects named are origins as a change's deleted objects are: themselves, what
        # references them and what their near-miss hints may name.
        files, deleted = part
    else:
        found = report_files(request, sources) if request.scoped_analysis else None
        if found is None:
            return loaded, None
        files = found
        deleted = removed(request.change, index, files) if request.change is not None else frozenset()
    from policylint.incremental.handover import hosts as host_kinds

    hosts = host_kinds(loaded.resolution)
    # Found from what earlier runs kept of each file, where they kept it (the files a change did
    # not touch): policylint.incremental.summaries.
    from policylint.incremental import summaries

    cache, _ = open_cache(request.cache_dir, [*request.paths, *request.crd_paths])
    # A long-lived process keeps the sets the search joined objects into (`resident.graph`).
    kept = resident.graph if resident is not None else None
    scoped = summaries.scope(cache, index, files, deleted, hosts, kept, exact=part is not None and exact)
    if scoped is None:
        return loaded, None
    reduced = dataclasses.replace(index, objects=scoped.objects)  # the same index of fewer objects
    return Project(reduced, Resolution(reduced, loaded.resolution.profiles), loaded.kept_verdicts), scoped.members


def _chains(
    project: Project, findings: list[Finding], resolver: PositionResolver, notes: list[str]
) -> dict[str, tuple[Chain, ...]]:
    """The findings' attachment chains; a failure costs the chains, not the report."""
    # Imported here: only a report that shows the chains asks for them (SARIF: `Reporter.chains`).
    from policylint import attachment_chain

    try:
        return attachment_chain.compute(project, findings, resolver)
    except Exception as exc:  # a bug must not cost the findings: say so, report without chains
        notes.append(f"attachment chains not computed: {type(exc).__name__}: {exc}; please report this")
        return {}
