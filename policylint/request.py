"""What a run is asked to do (`LintRequest`), and what a command works out of it before the
pipeline runs: the sources it reads and the usage errors said before any work.

Kept apart from policylint.pipeline, which imports every stage and rule: a command whose result an
earlier run kept (policylint.incremental.results) builds its request, reads its sources and renders
what was kept without importing them."""

from __future__ import annotations

import datetime
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import field
from typing import TYPE_CHECKING

from policylint.input.sources import Discovery, Source, discover_all
from policylint.k8s.cluster import Declared
from policylint.k8s.external import ExternalObjects
from policylint.rulecodes import Selection
from policylint.values import frozen

if TYPE_CHECKING:
    from policylint.config.overrides import Overrides
    from policylint.input.gitref import TreeRef
    from policylint.input.ignore import WalkFilter
    from policylint.report_scope import ChangeSet
    from policylint.suppressions.baseline import Entry


@frozen(slots=False)
class LintRequest:
    paths: Sequence[str]
    stdin_filename: str | None = None
    read_stdin: Callable[[], bytes] | None = None
    namespace: str = "default"
    crd_paths: Sequence[str] = ()
    profile_paths: Sequence[str] = ()
    # The commit `crd_paths` and `profile_paths` are read from instead of the working tree: they
    # were named by a configuration read from that commit (`--config-ref`, `diff`'s BASE), so
    # the change under review cannot edit what they say (README "Security"). None: from disk.
    crds_at: TreeRef | None = None
    profiles_at: TreeRef | None = None
    # What the cluster runs, as declared (`--gateway-api-version`, `--channel`, `--implementation`
    # and their keys; policylint.k8s.cluster): the input completes it.
    declared: Declared = field(default_factory=Declared)
    selection: Selection = field(default_factory=Selection)
    synthetic_rule_names: bool = False
    external: ExternalObjects = field(default_factory=ExternalObjects)
    max_affected: int | None = None  # shortcut for rule_options {"PL608": {"max-affected": N}}
    # Per-rule options: rule id -> option name -> value (each rule declares its own, Rule.options).
    rule_options: Mapping[str, Mapping[str, object]] = field(default_factory=dict)
    # Parse cache directory (None: no cache; the CLI defaults to the user's cache directory, see
    # policylint.input.cache) and worker processes for parsing (1: none; 0: one per CPU). Neither
    # changes the findings.
    cache_dir: str | None = None
    jobs: int = 1
    # Compute the JSON report's `policies` section during the run, under a guard (a failure is a
    # PL000 finding); `--format json` asks for it, other formats do not pay for it.
    report_policies: bool = False
    # Compute each policy finding's attachment chain (policylint.attachment_chain): SARIF's
    # codeFlows.
    report_chains: bool = False
    # Whether the caller may ask the simulation for blast radii after the run (`Simulation.affects`),
    # as a library caller may. The command may not: what it shows reads them during the run (the
    # policies section, PL608) or never, and a run that reads none lets go of what counting them
    # reads before its rules (a question after it would walk the hierarchy again).
    radii_after_run: bool = True
    # Follow symlinks whose target lies outside the named paths (never to a FIFO or a device):
    # `--follow-outside-links`. Off, such a link is a PL008 finding (policylint.input.sources).
    follow_outside_links: bool = False
    # Suppressions (policylint.suppressions, docs/suppressions.md): the baseline file to read
    # (None: none), or to write from this run's findings and then use (`--write-baseline`);
    # whether a suppression without ` -- reason` is a PL903 finding; the date `until=` is
    # compared with (None: today in UTC); and whether the text output lists suppressed findings.
    baseline: str | None = None
    # The entries of `baseline` as a git ref holds them (`--baseline-ref`), read instead of the
    # file in the working tree (None: read the file).
    baseline_entries: Sequence[Entry] | None = None
    write_baseline: str | None = None
    require_suppression_reason: bool = True
    today: datetime.date | None = None
    show_suppressed: bool = False
    # Configuration (policylint.config): what directory walks leave out (None: `.gitignore`
    # files respected, the default `exclude`), whether a Helm chart's templates/ is linted, and
    # the per-rule severities and per-file settings applied to the findings (None: none).
    walk: WalkFilter | None = None
    helm_templates: bool = False
    overrides: Overrides | None = None
    # The input is the whole cluster: every referenced object must be in it (`--complete`).
    complete: bool = False
    # Load-only paths (`--context`): read to resolve references, their findings not reported
    # unless they are about an object of `paths` (policylint.report_scope).
    context_paths: Sequence[str] = ()
    # `--diff` / `--staged`: the files a git change touched are the report scope, and what it
    # removed is in scope through what references it (policylint.report_scope).
    change: ChangeSet | None = None
    # `--staged`: read each file as the git index holds it (policylint.input.git).
    staged: bool = False
    # The sources to read instead of discovering `paths` (`policylint diff`: a commit's files).
    sources: Sequence[Source] | None = None
    # With a report scope, analyse only the part of the project it can reach
    # (policylint.semantics.components); the findings are the same either way.
    scoped_analysis: bool = True


def precheck(request: LintRequest) -> None:
    """The usage errors a run finds before any work (RuleOptionError, BaselineError), for a command
    that reads the files first (policylint.incremental.results) to say them in the same order, as
    policylint.pipeline's run says them."""
    options = rule_options(request)
    if options:  # no options, nothing to check them against: the rules are not imported for it
        from policylint.rules import REGISTRY, engine

        engine.check_options(REGISTRY, options)
    from policylint.suppressions.baseline import read_baseline

    read_baseline(request)


def discover(request: LintRequest, *, lazy: bool = False) -> tuple[Discovery, list[Source]]:
    """What the request reads: the files found (or given), and the sources to read, as the git
    index holds them with `staged`. `lazy`: the staged files' blobs named, not read
    (policylint.input.staged `staged_snapshot`); `materialized` reads them."""
    found = (
        Discovery(list(request.sources))
        if request.sources is not None
        else discover_all(
            [*request.paths, *request.context_paths],
            stdin_filename=request.stdin_filename,
            read_stdin=request.read_stdin,
            follow_outside_links=request.follow_outside_links,
            walk=request.walk,
            helm_templates=request.helm_templates,
        )
    )
    return found, _staged(request, found, lazy=lazy) if request.staged else found.sources


def materialized(discovered: tuple[Discovery, list[Source]]) -> tuple[Discovery, list[Source]]:
    """`discovered` with the staged blobs `discover(lazy=True)` named read: what a run that
    analyses the files takes."""
    from policylint.input.staged import materialize

    found, sources = discovered
    return found, materialize(sources)


def _staged(request: LintRequest, found: Discovery, *, lazy: bool = False) -> list[Source]:
    """The sources as the index holds them (`--staged`), with the files the index holds that the
    work tree no longer does."""
    from policylint.input.git import repository_root, staged_files
    from policylint.input.staged import in_index, removed_from_worktree, staged_snapshot

    sources = found.sources
    top = repository_root(os.getcwd())
    index = staged_files(top)  # parsed once for both questions
    # Each source's name in the index, placed once for both questions from the absolute path
    # discovery found it under.
    named = in_index(sources, top, found.absolute)
    removed = removed_from_worktree(
        sources,
        [*request.paths, *request.context_paths],
        top,
        request.walk,
        helm_templates=request.helm_templates,
        index=index,
        named=named,
    )
    staged = staged_snapshot(sources, top, index, lazy=lazy, named=named)
    return sorted([*staged, *removed], key=lambda s: s.display) if removed else staged


def rule_options(request: LintRequest) -> dict[str, Mapping[str, object]]:
    """Each rule's options, `max_affected` among PL608's."""
    options: dict[str, dict[str, object]] = {rule_id: dict(config) for rule_id, config in request.rule_options.items()}
    if request.max_affected is not None:
        options.setdefault("PL608", {})["max-affected"] = request.max_affected
    return dict(options)
