"""`policylint check`: lint the inputs, print the report, return the exit code."""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import click

from policylint.commands import EXIT_FINDINGS, EXIT_OK, EXIT_USAGE, error, errors, use_color, warning
from policylint.rulecodes import split_codes
from policylint.settings import EXPLAIN, GRAPH, Settings, from_keys, from_values, takes
from policylint.values import frozen

if TYPE_CHECKING:
    from policylint.commands.change import Base, Measured
    from policylint.commands.query import Query
    from policylint.commands.trust import Trust
    from policylint.config.effective import Effective
    from policylint.config.load import LoadedConfig
    from policylint.config.overrides import Overrides
    from policylint.findings import Severity
    from policylint.incremental.resident import Resident
    from policylint.input.cache import ContentKeys
    from policylint.input.gitref import TreeRef
    from policylint.input.ignore import WalkFilter
    from policylint.input.sources import Skipped, Source
    from policylint.k8s.external import ExternalObjects
    from policylint.pipeline import LintResult
    from policylint.reported import Reported
    from policylint.reporters import Reporter
    from policylint.request import LintRequest
    from policylint.rulecodes import Selection
    from policylint.suppressions.baseline import Entry


@frozen(slots=False)
class Configured:
    """What a run takes from the configuration file besides its settings' values, worked out
    by `run_configured` (a run without one, or called directly, has the defaults)."""

    trust: Trust | None = None
    walk: WalkFilter | None = None
    overrides: Overrides | None = None
    rule_options: Mapping[str, Mapping[str, object]] | None = None
    # Each cluster key's source (policylint.config.effective.CLUSTER_KEYS), for `--show-config`
    # and the messages that name where a declaration comes from.
    cluster_sources: Mapping[str, str] | None = None
    # The commits the files `crd` and `profile` name are read from (None: the working tree).
    crds_at: TreeRef | None = None
    profiles_at: TreeRef | None = None


def run_check(settings: Settings, configured: Configured | None = None) -> int:
    """`_run_check`, asking git each of its questions once (policylint.input.git.snapshot)."""
    from policylint.input.git import snapshot

    with snapshot():
        return _run_check(settings, configured)


def _run_check(settings: Settings, configured: Configured | None = None) -> int:
    """Lint `paths`; print the report to stdout in `fmt`, write each `outputs` entry
    (`FORMAT=PATH`) to its file, and a summary to stderr. The exit code does not depend on the
    formats: only on the findings, `fail_on` and `exit_zero`, or 2 for a usage error, an
    internal error or an output that cannot be written.

    The parse cache lives in `cache_dir`, else $POLICYLINT_CACHE_DIR, else the user's cache
    directory (policylint.input.cache.default_directory); `cache=False` neither reads nor writes it.
    A directory that is not safe to use is not used, with a warning on stderr.

    `baseline` names the baseline file: its entries hide the findings they recorded; with
    `write_baseline` it is (re)written first from the findings left after inline suppressions
    (default file: policylint.suppressions.baseline.DEFAULT_FILE). With `baseline_ref` the
    baseline is read from that git ref instead of the working tree.

    With `diff_base` or `staged` the repository is read as context whatever `paths` are given, the
    findings in scope of the change are reported, and the base is linted too: with `gate`
    `introduced` only the findings the change introduces decide the exit code, with `all` every
    finding reported does (policylint.commands.change).

    `trust` says which configuration was applied and where from (policylint.commands.trust): the
    summary states what it turned off or down, and with a base to compare with (`--diff`,
    `--staged`, a ref, `gate_base`) what the change did to the configuration and the baseline; a
    change that loosens them makes the exit code 1.
    """
    from policylint.commands.trust import Trust, gate_report
    from policylint.input.git import GitError
    from policylint.input.sources import SourceError
    from policylint.profiles import ProfileError
    from policylint.reporters import REPORTERS
    from policylint.request import LintRequest
    from policylint.rulecodes import RuleOptionError
    from policylint.suppressions.baseline import DEFAULT_FILE, BaselineError

    configured = configured if configured is not None else Configured()
    # The values this function works out further (a change's context, the baseline a ref implies).
    paths, context_paths, baseline = settings.paths, settings.context_paths, settings.baseline
    trust, overrides = configured.trust, configured.overrides

    misuse = _misuse(settings)
    if misuse is not None:
        error(misuse)
        return EXIT_USAGE
    fixing = settings.fix or settings.diff_fix or bool(settings.fix_only)
    parsed = parse_options(settings.select, settings.ignore, settings.fail_on, settings.external, overrides)
    files = parse_outputs(settings.outputs)
    from policylint.commands.cluster import parse_gateway_api

    declared = parse_gateway_api(
        settings.channel, settings.gateway_api_version, settings.implementations, configured.cluster_sources
    )
    if parsed is None or files is None or declared is None:
        return EXIT_USAGE
    selection, threshold, external_objects, overrides = parsed
    measuring = settings.diff_base is not None or settings.staged
    measured = _measure(paths, settings, cache_directory(settings.cache, settings.cache_dir)) if measuring else None
    if isinstance(measured, int):
        return measured
    change = measured.change if measured is not None else None
    if measured is not None:
        # The repository is the context of a change, whatever PATHs choose to report on.
        context_paths = (*context_paths, measured.context)
    trust = trust if trust is not None else Trust(None, None, frozenset(), baseline_ref=settings.baseline_ref)
    if settings.baseline_ref is not None:
        baseline = baseline or DEFAULT_FILE
    try:
        baseline_entries = _baseline_at_ref(settings.baseline_ref, baseline)
    except (GitError, BaselineError) as exc:
        error(exc)
        return EXIT_USAGE
    sources = _pushed_sources(measured, configured, settings.helm_templates, fixing=fixing)
    if isinstance(sources, int):
        return sources
    fmt = resolve_format(settings.fmt)
    formats = [REPORTERS[f] for f in (fmt, *(f for f, _ in files))]
    request = LintRequest(
        report_policies=any(r.policies for r in formats),
        report_chains=any(r.chains for r in formats),
        radii_after_run=False,
        follow_outside_links=settings.follow_outside_links,
        paths=paths,
        context_paths=context_paths,
        sources=sources,
        change=change,
        staged=settings.staged,
        complete=settings.complete,
        stdin_filename=settings.stdin_filename,
        read_stdin=lambda: sys.stdin.buffer.read(),
        namespace=settings.namespace,
        crd_paths=settings.crd_paths,
        crds_at=configured.crds_at,
        declared=declared,
        profile_paths=settings.profile_paths,
        profiles_at=configured.profiles_at,
        selection=selection,
        synthetic_rule_names=settings.synthetic_rule_names,
        external=external_objects,
        cache_dir=cache_directory(settings.cache, settings.cache_dir),
        jobs=settings.jobs,
        max_affected=settings.max_affected,
        baseline=baseline,
        baseline_entries=baseline_entries,
        write_baseline=(baseline or DEFAULT_FILE) if settings.write_baseline else None,
        require_suppression_reason=settings.require_suppression_reason,
        show_suppressed=settings.show_suppressed,
        walk=configured.walk,
        helm_templates=settings.helm_templates,
        overrides=overrides if overrides else None,
        rule_options=configured.rule_options or {},
    )
    try:
        if fixing:
            resident = _resident(measured)
            from policylint.commands.fixes import run_fixes

            outcome = run_fixes(
                request,
                unsafe=settings.unsafe_fixes,
                only=split_codes(settings.fix_only),
                diff_only=settings.diff_fix and not settings.fix,
            )
            if isinstance(outcome, int):
                return outcome  # --diff-fix: the diff is the output
            result: Reported = outcome
            _classify(request, outcome, measured, resident)
        else:
            result = _result(request, measured, formats)
        diff_base, head = _gate_sides(settings, measured)
        result.gate = gate_report(
            trust,
            baseline=baseline,
            baseline_entries=baseline_entries,
            diff_base=diff_base,
            staged=settings.staged,
            head=head,
            gate_base=settings.gate_base,
        )
    except (SourceError, ProfileError, RuleOptionError, BaselineError, GitError) as exc:
        error(exc)
        return EXIT_USAGE
    _say_what_happened(result)
    written = _render(result, fmt, settings.color, files, threshold, settings.gate)
    if result.internal_error or not written:
        return EXIT_USAGE
    if settings.exit_zero:
        return EXIT_OK
    if result.gate is not None and result.gate.loosened:
        return EXIT_FINDINGS  # whatever --fail-on: the change loosens the gate that judges it
    from policylint.commands.change import gating

    return EXIT_FINDINGS if any(f.severity >= threshold for f in gating(result, settings.gate)) else EXIT_OK


def _pushed_sources(
    measured: Measured | None, configured: Configured, helm_templates: bool, *, fixing: bool
) -> list[Source] | int | None:
    """The files of the commit a push sends, for a pre-push hook's run (None: the working tree's
    files are read), or EXIT_USAGE after saying why they cannot be."""
    if measured is None or measured.head is None:
        return None
    if fixing:
        error("--fix and --diff-fix edit files on disk: not the commit a push sends")
        return EXIT_USAGE
    # A pre-push hook lints the commit pushed, not the working tree (which may hold other work).
    from policylint.input.commit import commit_sources
    from policylint.input.git import GitError

    try:
        return commit_sources(measured.head, measured.root, [measured.root], configured.walk, helm_templates, located=True)
    except GitError as exc:
        error(exc)
        return EXIT_USAGE


def _gate_sides(settings: Settings, measured: Measured | None) -> tuple[str | None, str | None]:
    """The base and the head the trust gate compares the configuration and the baseline at."""
    if measured is not None and not settings.staged and settings.diff_base == "":
        # A pre-push hook's push: the configuration and the baseline of the commit pushed
        # against the base's; none on a root commit's push, which has no base.
        return (measured.base_name if measured.base is not None else None), measured.head
    return settings.diff_base, None


def _measure(paths: Sequence[str], settings: Settings, cache_dir: str | None) -> Measured | int:
    """The change `--diff [BASE]` / `--staged` report on (policylint.commands.change), or
    EXIT_USAGE after saying why there is none (not a repository, an unknown base, ...)."""
    from policylint.commands.change import measure
    from policylint.input.git import GitError

    try:
        measured = measure(paths, settings.diff_base or None, settings.staged, settings.namespace, cache_dir)
    except GitError as exc:
        error(exc)
        return EXIT_USAGE
    if measured.change is None:
        # `pre-commit run --all-files` in CI lands here: no change to measure, so nothing is let
        # through as pre-existing.
        click.echo(f"policylint: info: {measured.whole}: the PATHs are checked whole, every finding counts", err=True)
    return measured


def _result(request: LintRequest, measured: Measured | None, formats: Sequence[Reporter]) -> Reported:
    """The run's result, classified by the change it measured: read back when an earlier run's
    inputs were all this one's (policylint.incremental.results), else worked out, and kept."""
    # Neither the pipeline nor what a run hands its base side is imported before the result is
    # known not to be kept: they import every stage and rule, which a result read back never uses.
    from policylint.input.cache import ContentKeys
    from policylint.request import discover, materialized, precheck

    kept = None
    discovered = None
    keys = ContentKeys()
    if request.cache_dir is not None and not any(r.objects or r.chains for r in formats):
        from policylint.incremental.results import open_results

        precheck(request)  # the usage errors a run says before reading files, in their order
        # The staged files' blobs named, not read: an answer from what earlier runs kept reads
        # none but the changed files (policylint.incremental.blobkeys); an analysis reads them.
        discovered = discover(request, lazy=True)
        kept = open_results(request, discovered, _measured_inputs(measured), keys)
        if kept is not None:
            found = kept.recall(request)
            if found is not None:
                return found
    if kept is not None and discovered is not None and measured is not None and measured.base is not None:
        # A change that leaves every object's data as it was: the base's findings, moved.
        from policylint.incremental.equivalent import answer

        answered = answer(request, measured, discovered, kept.content_keys)
        if answered is not None:
            kept.remember_kept(answered)
            return answered
    if discovered is not None:
        discovered = materialized(discovered)
        if kept is not None:
            kept.lend_keys(discovered[1], keys)
    resident = _resident(measured, keys)
    base = None
    if discovered is not None and measured is not None and measured.base is not None and resident is not None:
        from policylint.commands.change import Base

        # What the change's side records for its base's run (policylint.incremental.resident)
        # costs it time that only that run gets back: not when the base's findings are read back.
        # (After the sources were read: the base's files are the same blobs, read once.)
        base = Base(request, measured, resident)
        if base.read_back(measured.change):
            resident = None
    from policylint.pipeline import lint

    result = lint(request, resident=resident, discovered=discovered, content_keys=keys)
    _classify(request, result, measured, resident, base)
    if kept is not None:
        kept.remember(request, result)
    return result


def _measured_inputs(measured: Measured | None) -> list[object]:
    """What the command measured of a change, besides the request's `change`: what its base
    is (a commit: its tree is its content) and how it is named, the commit pushed, and how many
    changed files lie under the PATHs and outside them."""
    if measured is None:
        return []
    return [measured.base, measured.base_name, measured.head, measured.considered, measured.elsewhere]


def _classify(
    request: LintRequest, result: LintResult, measured: Measured | None, resident: Resident | None, base: Base | None = None
) -> None:
    """Which of `result`'s findings the change introduces, if it measured one: the base is linted
    too, from what `resident` kept of the change's side (`base`: its side, prepared before)."""
    from policylint.commands.change import classify

    if measured is not None and measured.base is not None:
        classify(request, result, measured, resident, base)


def _resident(measured: Measured | None, keys: ContentKeys | None = None) -> Resident | None:
    """What the change's side hands its base's: the base's part is, but for the files the change
    touched, the objects this side reads (policylint.incremental.resident). `keys`: the content
    keys the command worked out already. None: no base to hand anything to."""
    if measured is None or measured.base is None:
        return None
    from policylint.incremental.resident import Resident

    return Resident(writes=True, keys=keys)


def _baseline_at_ref(ref: str | None, baseline: str | None) -> list[Entry] | None:
    """The entries of `baseline` as git ref `ref` holds them (None: no ref; GitError, BaselineError)."""
    if ref is None or baseline is None:
        return None
    from policylint.commands.trust import baseline_at
    from policylint.input.git import repository_root
    from policylint.input.gitref import verify_ref

    root = repository_root(os.getcwd())
    return baseline_at(verify_ref(ref, root), ref, baseline, root)


def parse_options(
    select: Sequence[str], ignore: Sequence[str], fail_on: str, external: Sequence[str], overrides: Overrides | None
) -> tuple[Selection, Severity, ExternalObjects, Overrides | None] | None:
    """The options that can be wrong before any work: the rule selection, --fail-on, --external.
    None after saying what is wrong (a usage error)."""
    from policylint.findings import Severity
    from policylint.k8s.external import ExternalObjects, ExternalPatternError
    from policylint.rulecodes import Selection

    selection = Selection(split_codes(select), split_codes(ignore))
    if selection.select or selection.ignore or overrides:
        # Only codes need the rules to be matched against: a run whose result is read back
        # (policylint.incremental.results) imports none of them otherwise.
        from policylint.rules import REGISTRY

        unknown = selection.unknown_codes(REGISTRY)
        if unknown:
            error(f"no rule matches {', '.join(unknown)} (see `policylint rules`)")
            return None
    if overrides:
        from policylint.config.overrides import run_selection
        from policylint.rules import REGISTRY

        # Per-file `select` may enable a rule the global selection leaves out: run it, and
        # keep its findings only in those files (policylint.config.overrides).
        overrides = replace(overrides, selection=selection)
        selection = run_selection(selection, overrides.per_file, REGISTRY)
    try:
        threshold = Severity.parse(fail_on)
        external_objects = ExternalObjects.parse(external)
    except (ValueError, ExternalPatternError) as exc:
        error(exc)
        return None
    return selection, threshold, external_objects, overrides


def _say_what_happened(result: Reported) -> None:
    """On standard error: notes (a cache not used, ...), skipped files, a baseline written."""
    for note in result.notes:
        warning(note)
    if result.skipped:
        _say_skipped(result.skipped)
    if result.baseline_written is not None:
        from policylint.k8s.names import plural
        from policylint.textsafe import escape

        written, entries = result.baseline_written
        click.echo(f"policylint: wrote {plural(entries, 'baseline entry', 'baseline entries')} to {escape(written)}", err=True)
    if result.baseline_migrated:
        _say_migrated(result.baseline_migrated)


def _say_migrated(count: int) -> None:
    """Once a run: entries that still hide their findings only by an older fingerprint, which
    the next location change may not know; `--write-baseline` records them as they are now."""
    from policylint.k8s.names import plural

    entries = plural(count, "baseline entry", "baseline entries")
    click.echo(
        f"policylint: info: baseline: {entries} matched by a finding's fingerprint from before its rule moved it to"
        " another field; run --write-baseline to update them",
        err=True,
    )


def resolve_format(fmt: str) -> str:
    """`auto`: GitHub workflow commands in a GitHub Actions job, else text (coloured or not by
    --color, NO_COLOR and FORCE_COLOR)."""
    from policylint.reporters import AUTO

    if fmt != AUTO:
        return fmt
    return "github" if os.environ.get("GITHUB_ACTIONS") == "true" else "text"


def parse_outputs(values: Sequence[str]) -> list[tuple[str, str]] | None:
    """`FORMAT=PATH` values as (format, path); None after saying which one is wrong."""
    from policylint.reporters import FORMATS

    out: list[tuple[str, str]] = []
    for value in values:
        fmt, sep, path = value.partition("=")
        if not sep or not path or fmt not in FORMATS:
            error(f"--output {value!r}: expected FORMAT=PATH with FORMAT one of {', '.join(FORMATS)}")
            return None
        if path == "-":
            # Most tools read `-` as standard output, where --format's report already goes: a
            # file named `-` written into the working directory would surprise, and two reports
            # on standard output would be neither.
            error(f"--output {value!r}: standard output holds the --format report; --output writes files (./- names a file '-')")
            return None
        out.append((fmt, path))
    return out


def _render(result: Reported, fmt: str, color: str, files: Sequence[tuple[str, str]], fail_on: Severity, gate: str) -> bool:
    """The report on standard output, each output file, the summary line on standard error.
    False when a file could not be written (said on standard error)."""
    from policylint.reporters import environment_options, streamer
    from policylint.reporters.text import summary

    colored = fmt == "text" and use_color(color, sys.stdout)
    from policylint.commands.change import ALL

    options = environment_options(outputs=tuple(files), fail_on=fail_on, gate_all=gate == ALL)
    # color=True keeps the escape codes click would strip when stdout is not a terminal.
    _write(streamer(fmt, replace(options, color=colored))(result), colored)
    ok = True
    for out_fmt, path in files:
        try:
            write_output(path, streamer(out_fmt, options)(result))
        except OSError as exc:
            error(f"cannot write the {out_fmt} report to {path}: {exc.strerror or exc}")
            ok = False
    click.echo(summary(result), err=True)
    return ok


# A report is written to stdout in pieces of this many characters: encoding a report of tens of
# megabytes whole holds a second copy of it (77 MB of JSON on a 100k-object repository).
_ECHO_PIECE = 1 << 20


def _write(pieces: Iterable[str], colored: bool) -> None:
    """A report's pieces to stdout, gathered into writes of about _ECHO_PIECE characters."""
    gathered: list[str] = []
    size = 0
    for piece in pieces:
        gathered.append(piece)
        size += len(piece)
        if size >= _ECHO_PIECE:
            _echo("".join(gathered), colored)
            gathered, size = [], 0
    if gathered:
        _echo("".join(gathered), colored)


def _echo(text: str, colored: bool) -> None:
    if colored:  # a piece could end inside an escape sequence; terminals get small reports
        click.echo(text, nl=False, color=True)
        return
    for start in range(0, len(text), _ECHO_PIECE):
        click.echo(text[start : start + _ECHO_PIECE], nl=False, color=False)


def write_output(path: str, text: str | Iterable[str]) -> None:
    """Write a report file whole or not at all: to a temporary file beside it, then renamed, so
    that a reader (a CI upload step, an editor) never sees half a report. Parent directories are
    created, as a CI step's `reports/policylint.sarif` expects."""
    import tempfile

    directory = os.path.dirname(path) or "."
    os.makedirs(directory, exist_ok=True)
    fd, temporary = tempfile.mkstemp(prefix=".policylint-", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as handle:
            handle.writelines([text] if isinstance(text, str) else text)
        os.chmod(temporary, 0o666 & ~_umask())
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise


def _umask() -> int:
    # mkstemp creates the file 0600; a report is an ordinary file, readable as the umask allows.
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _say_skipped(skipped: Sequence[Skipped]) -> None:
    """One info line on standard error for the files recognised as not manifests
    (policylint.input.nonmanifest): not findings, but a run should say what it did not read."""
    from policylint.input import nonmanifest
    from policylint.k8s.names import plural
    from policylint.textsafe import escape

    counts: dict[str, int] = {}
    for item in skipped:
        counts[item.category] = counts.get(item.category, 0) + 1
    words = {
        nonmanifest.KUSTOMIZE: ("Kustomize file", None),
        nonmanifest.KUSTOMIZE_PATCH: ("Kustomize patch", "Kustomize patches"),
        nonmanifest.HELM: ("Helm chart file or directory", "Helm chart files or directories"),
        nonmanifest.TOOL: ("tool configuration file", None),
        nonmanifest.DATA: ("JSON file that is no Kubernetes object", "JSON files that are no Kubernetes objects"),
    }
    parts = [plural(counts[c], *words[c]) for c in words if counts.get(c)]
    render = (
        "; lint what `kustomize build` or `helm template` outputs"
        if counts.get(nonmanifest.KUSTOMIZE) or counts.get(nonmanifest.KUSTOMIZE_PATCH) or counts.get(nonmanifest.HELM)
        else ""
    )
    click.echo(f"policylint: info: not manifests, skipped: {escape(', '.join(parts))}{render}", err=True)


def run_configured(
    paths: Sequence[str],
    given: Mapping[str, Any],
    *,
    config: str | None = None,
    isolated: bool = False,
    show_config: bool = False,
) -> int:
    """`check` with the configuration file applied: find it (or read `config`; none when
    `isolated`), then run with its values under the command-line keywords `given` (the flags
    actually given). `show_config` prints the effective settings instead of linting."""
    from policylint.input.git import snapshot

    with snapshot():
        return _run_configured(paths, given, config=config, isolated=isolated, show_config=show_config)


def _run_configured(
    paths: Sequence[str], given: Mapping[str, Any], *, config: str | None, isolated: bool, show_config: bool
) -> int:
    from policylint.commands.trust import Trust
    from policylint.config import find_config

    given = dict(given)
    config_ref: str | None = given.pop("config_ref", None)
    found = None if isolated or config else find_config()
    # Messages and `--show-config` name a discovered file as seen from the working directory.
    path = config if config is not None and not isolated else (os.path.relpath(found) if found is not None else None)
    local = Trust(None, None, frozenset(), None, given.get("baseline_ref"), path, isolated)
    if config_ref is not None and not isolated:
        return _run_from_ref(paths, given, config_ref, local, show_config, config)
    if path is None and not show_config:
        if not paths and _measures_a_change(given):
            paths = (".",)  # a change is measured over the repository by default
        if not paths:
            error("no paths given: name files or directories, or set `paths` in a configuration file")
            return EXIT_USAGE
        # No configuration: pydantic is never imported.
        return run_check(from_values({**given, "paths": tuple(paths)}), Configured(trust=local))
    from policylint.config.load import ConfigError, load

    try:
        # A file found in the repository is confined to it; one named with --config is not.
        loaded = load(path, confine=config is None) if path is not None else None
    except ConfigError as exc:
        errors(exc)
        return EXIT_USAGE
    return _run_loaded(paths, given, loaded, replace(local, label=path), show_config)


def _run_from_ref(
    paths: Sequence[str], given: dict[str, Any], ref: str, local: Trust, show_config: bool, named: str | None
) -> int:
    """`--config-ref REF`: the configuration file as REF holds it, none if REF has none, whatever
    the working tree holds (a usage error when REF is not a commit or the file does not validate)."""
    from policylint.commands.trust import config_at
    from policylint.config.load import ConfigError
    from policylint.input.git import GitError, repository_root
    from policylint.input.gitref import TreeRef, verify_ref

    try:
        root = repository_root(os.getcwd())
        commit = verify_ref(ref, root)
        loaded = config_at(commit, ref, named, root)
    except GitError as exc:
        error(exc)
        return EXIT_USAGE
    except ConfigError as exc:
        errors(exc)
        return EXIT_USAGE
    trust = replace(
        local,
        config_ref=ref,
        label=f"{ref}:{os.path.relpath(loaded.path)}" if loaded is not None else None,
        tree=TreeRef(commit, ref, root),
    )
    return _run_loaded(paths, given, loaded, trust, show_config)


def _run_loaded(paths: Sequence[str], given: dict[str, Any], loaded: LoadedConfig | None, trust: Trust, show_config: bool) -> int:
    from policylint.config.effective import build
    from policylint.config.load import ConfigError

    cli = dict(given)
    if paths:
        cli["paths"] = tuple(paths)
    try:
        # Paths the file names stay inside its repository (config.effective): a ConfigError.
        effective = build(loaded, cli, trust.label, from_tree=trust.tree is not None)
    except ConfigError as exc:
        errors(exc)
        return EXIT_USAGE
    if show_config:
        from policylint.commands.cluster import describe

        click.echo(effective.render(), nl=False)
        cluster = describe(effective)
        if cluster is None:
            return EXIT_USAGE
        click.echo(cluster, nl=False)
        return EXIT_OK
    if loaded is not None:
        from policylint.config.effective import COMMAND_LINE, DEFAULT

        from_file = frozenset(k for k, source in effective.sources.items() if source not in (DEFAULT, COMMAND_LINE))
        trust = replace(trust, config=loaded, from_file=from_file)
    return _run_effective(effective, given, trust)


def _measures_a_change(given: Mapping[str, Any]) -> bool:
    return given.get("diff_base") is not None or bool(given.get("staged"))


def _run_effective(effective: Effective, given: Mapping[str, Any], trust: Trust) -> int:
    from policylint.config.effective import CLUSTER_KEYS, run_settings

    values = effective.values
    if not values["paths"] and _measures_a_change(given):
        values["paths"] = ["."]
    if not values["paths"]:
        error("no paths given: name files or directories, or set `paths` in the configuration file")
        return EXIT_USAGE
    if effective.file is None:
        return run_check(from_values({**given, "paths": tuple(values["paths"])}), Configured(trust=trust))
    # The file's values under the flags given (Effective holds both by key); the flags that have
    # no key (--exit-zero, --write-baseline, ...) as given.
    settings = from_keys(values, from_values(given))
    applied = run_settings(effective)
    crds_at, profiles_at = trust.files_at(effective.sources)
    configured = Configured(
        trust=trust,
        walk=applied.walk,
        overrides=applied.overrides,
        rule_options=applied.rule_options,
        cluster_sources={key: effective.sources[key] for key in CLUSTER_KEYS},
        # The files a configuration read from a commit names are read from that commit.
        crds_at=crds_at,
        profiles_at=profiles_at,
    )
    return run_check(settings, configured)


def configured_query(
    paths: Sequence[str], given: Mapping[str, Any], values: Mapping[str, Any], *, config: str | None, isolated: bool
) -> Query | int:
    """The settings of `explain` and `graph`: `values` (every flag, given or default) when there
    is no configuration file, else the file's values under the flags `given`; paths default to
    the file's `paths`, then to `.`. EXIT_USAGE for a bad file."""
    from policylint.commands.query import Query
    from policylint.config import find_config

    found = None if isolated or config else find_config()
    path = config if config is not None and not isolated else (os.path.relpath(found) if found is not None else None)
    settings = from_values(values)
    if path is None:
        return Query(settings.replace(paths=tuple(paths) or (".",)))
    from policylint.config.effective import build
    from policylint.config.load import ConfigError, load

    try:
        effective = build(load(path, confine=config is None), given)
    except ConfigError as exc:
        errors(exc)
        return EXIT_USAGE
    from policylint.config.effective import run_settings

    # Only the keys of the settings both queries take: the file's `format` is `check`'s.
    settings = from_keys({key: effective.values[key] for key in _QUERY_KEYS}, settings)
    return Query(settings.replace(paths=tuple(paths) or tuple(effective.values["paths"]) or (".",)), run_settings(effective).walk)


# The configuration keys `explain` and `graph` read.
_QUERY_KEYS = tuple(s.key for s in takes(EXPLAIN) if s.key not in (None, "format", "paths") and GRAPH in s.commands)


def _misuse(settings: Settings) -> str | None:
    """What makes a combination of options a usage error, or None."""
    if settings.baseline_ref is not None and settings.write_baseline:
        return "--write-baseline writes the working tree's baseline: not with --baseline-ref"
    if (settings.context_paths or settings.diff_base is not None or settings.staged) and settings.write_baseline:
        # A baseline records every finding of the repository; a run that reports on part of it
        # would drop the others' entries.
        return "--write-baseline records every finding: run it without --context, --diff or --staged"
    if settings.stdin_filename is not None and "-" not in settings.paths:
        # Said, not ignored: the name is only ever given to standard input, and a run that
        # reads files instead would report none of what the user meant to lint.
        return f"--stdin-filename {settings.stdin_filename!r} names standard input: give `-` among the paths to read it"
    fixing = settings.fix or settings.diff_fix or bool(settings.fix_only)
    if fixing and ("-" in settings.paths or settings.staged):
        return "--fix and --diff-fix edit files on disk: not standard input, not the staged snapshot"
    return None


def cache_directory(enabled: bool, directory: str | None) -> str | None:
    """The parse cache's directory for `--cache`/`--no-cache` and `--cache-dir` (None: no cache);
    the editor's server reads the same settings."""
    if not enabled:
        return None
    from policylint.input.cache import ENV_DIR, default_directory

    # Outside the working directory by default: in CI that is the checkout under review, and
    # whoever writes the cache decides what policylint believes the files say.
    return directory or os.environ.get(ENV_DIR) or default_directory()
