"""Command line: click wiring only. Every command is a function in `policylint.commands`
returning an exit code (exit codes: policylint.commands)."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

import click

from policylint import __version__
from policylint.commands.catalogue import run_cel_coverage, run_profiles, run_rule, run_rules
from policylint.commands.check import run_configured
from policylint.commands.query import QueryLoad, run_explain, run_graph
from policylint.k8s.schemas import CHANNELS, GATEWAY_API_VERSIONS

# The reporter registry only: no reporter module is imported until one renders.
from policylint.reporters import AUTO as _AUTO
from policylint.reporters import FORMATS as _FORMATS
from policylint.resources import yaml_parser

if TYPE_CHECKING:
    from typing_extensions import Unpack


class _CheckOptions(QueryLoad, total=False):
    """The options of `check` besides its paths and --format: `run_check`'s keywords."""

    outputs: Sequence[str]
    context_paths: Sequence[str]
    diff_base: str | None
    staged: bool
    fix: bool
    unsafe_fixes: bool
    diff_fix: bool
    fix_only: Sequence[str]
    complete: bool
    channel: str | None
    gateway_api_version: str | None
    implementations: Sequence[str]

    select: Sequence[str]
    ignore: Sequence[str]
    fail_on: str
    exit_zero: bool
    stdin_filename: str | None
    max_affected: int | None
    color: str
    jobs: int
    cache: bool
    cache_dir: str | None
    baseline: str | None
    baseline_ref: str | None
    config_ref: str | None
    gate_base: str | None
    gate: str
    write_baseline: bool
    show_suppressed: bool
    helm_templates: bool


class _DefaultCheckGroup(click.Group):
    """`policylint PATH...` means `policylint check PATH...`."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if args and args[0] not in self.commands and args[0] not in ("--help", "-h", "--version"):
            args = ["check", *args]
        try:
            return super().parse_args(ctx, args)
        except click.ClickException as exc:
            raise _escaped(exc) from None

    def invoke(self, ctx: click.Context) -> object:
        try:
            return super().invoke(ctx)
        except click.ClickException as exc:  # a subcommand's usage error
            raise _escaped(exc) from None


def _escaped(exc: click.ClickException) -> click.ClickException:
    """Click's usage errors quote the arguments (`Got unexpected extra argument (...)`): escaped
    like every other message that echoes input (policylint.textsafe)."""
    from policylint.textsafe import escape

    # Click 8.2+ raises the help text itself when there are no arguments: nothing from the input.
    no_args: type[Exception] | None = getattr(click.exceptions, "NoArgsIsHelpError", None)
    if no_args is not None and isinstance(exc, no_args):
        return exc
    # Click declares `message` Final, yet escaping it in place is the only way to keep the
    # exception's own class, context (usage line, hint) and exit code.
    exc.message = escape(exc.message)  # type: ignore[misc]
    return exc


class _OptionalValue(click.Option):
    """An option whose value may be left out (`--diff [BASE]`): see _StrictOptionalValues."""


class _StrictOptionalValues(click.Command):
    """A command that refuses a value starting with `-` given with `=` to an optional-value option.

    Click puts the value of `--diff=VALUE` back among the arguments and then, since the value may
    be left out, reads one that starts with `-` as the next option: `--diff=--exit-zero` turned
    the gate off, `--diff=--isolated` dropped the configuration. No git revision starts with
    `-`, so such a value is a usage error (exit 2) rather than an option.
    """

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        names = {name for p in self.params if isinstance(p, _OptionalValue) for name in p.opts if name.startswith("--")}
        for arg in args:
            if arg == "--":
                break
            name, equals, value = arg.partition("=")
            if equals and name in names and value.startswith("-"):
                raise click.UsageError(f"{name}: {value!r} starts with '-': give a git revision, not an option", ctx)
        return super().parse_args(ctx, args)


@click.group(cls=_DefaultCheckGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="policylint", message=f"%(prog)s, version %(version)s ({yaml_parser()})")
def cli() -> None:
    """Offline linter for Gateway API Policy Attachment manifests.

    \b
    policylint ./manifests              lint a directory (same as `check`)
    policylint rules                    list the rules
    policylint rule PL201               show one rule's documentation
    policylint explain httproute/ns/x   what an object effectively gets, and from which policy
    policylint graph --format mermaid   the topology with its policies
    """


# The baseline `--write-baseline` writes without `--baseline` (policylint.suppressions.baseline.
# DEFAULT_FILE, not imported here so that startup stays light). A flag, not an option with an
# optional value: click would take the next argument, a path to lint, for the file to overwrite.
_DEFAULT_BASELINE = ".policylint-baseline.json"

# Shared by `check`, `explain` and `graph` (click makes a new option object per command).
_FOLLOW_OUTSIDE_LINKS = click.option(
    "--follow-outside-links",
    is_flag=True,
    help="Follow symlinks that lead outside PATHS (never to a FIFO or device); otherwise each is a PL008 finding.",
)


# What the cluster runs (policylint.k8s.cluster), shared by `check` and `diff`: each is
# inferred from the input when not given (`--show-config` says from what).
_CHANNEL = click.option(
    "--channel",
    type=click.Choice(CHANNELS),
    help="The Gateway API release channel whose CRDs the cluster runs [default: inferred from the input, else unknown].",
)
_GATEWAY_API_VERSION = click.option(
    "--gateway-api-version",
    metavar="VERSION",
    help=f"The Gateway API release whose CRDs the cluster runs (bundled: {', '.join(GATEWAY_API_VERSIONS)}) [default: inferred from the input, else unknown].",
)
_IMPLEMENTATION = click.option(
    "--implementation",
    "implementations",
    multiple=True,
    metavar="NAME[@VERSION]",
    help="A Gateway API implementation the cluster runs, e.g. envoy-gateway@v1.5 (repeatable): its installer's default channel counts when the channel is not known.",
)


# The configuration file (policylint.config), shared by `check` and `config`.
_CONFIG = click.option(
    "--config",
    "config_file",
    metavar="FILE",
    help="Configuration file to use [default: .policylint.yaml or [tool.policylint] in pyproject.toml, searched upward to the repository root].",
)
_ISOLATED = click.option("--isolated", is_flag=True, help="Ignore every configuration file.")


@cli.command("check", cls=_StrictOptionalValues)
@click.argument("paths", nargs=-1)
@_CONFIG
@_ISOLATED
@click.option(
    "--show-config", is_flag=True, help="Print the effective configuration and where each value comes from; lint nothing."
)
@click.option(
    "--helm-templates", is_flag=True, help="Lint the files of Helm charts' templates/ directories instead of skipping them."
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice([*_FORMATS, _AUTO]),
    default=_AUTO,
    show_default=True,
    help="Format of standard output; auto: GitHub annotations in GitHub Actions, else text.",
)
@click.option(
    "--output",
    "outputs",
    multiple=True,
    metavar="FORMAT=PATH",
    help="Also write the report in FORMAT to PATH (repeatable: e.g. sarif=policylint.sarif junit=junit.xml).",
)
@click.option(
    "--context",
    "context_paths",
    multiple=True,
    metavar="PATH",
    help="Also read PATH to resolve references, reporting only findings in or about the PATHS given (repeatable).",
)
@click.option(
    "--diff",
    "diff_base",
    cls=_OptionalValue,
    is_flag=False,
    flag_value="",
    default=None,
    metavar="[BASE]",
    help="Report only findings in files changed since BASE (default: the merge-base with the upstream branch), or about their objects.",
)
@click.option("--staged", is_flag=True, help="Lint the staged snapshot (git index) and report on the staged changes.")
@click.option(
    "--gate",
    type=click.Choice(["introduced", "all"]),
    default="introduced",
    show_default=True,
    help="With --diff or --staged: fail on the findings the change introduces, or on all it reports (pre-existing ones too).",
)
@click.option(
    "--complete",
    is_flag=True,
    help="The input is the whole cluster: a referenced Secret or ConfigMap missing from it does not exist.",
)
@click.option(
    "--fix", is_flag=True, help="Apply the safe fixes findings carry, editing only the nodes they fix, then report what remains."
)
@click.option(
    "--unsafe-fixes", is_flag=True, help="With --fix or --diff-fix, also apply fixes that change what the controller does."
)
@click.option(
    "--diff-fix",
    is_flag=True,
    help="Print the fixes as a unified diff and write nothing (exit 1 when there is something to fix).",
)
@click.option("--fix-only", multiple=True, metavar="CODES", help="Fix only these rules (id or name prefixes); implies --fix.")
@click.option("--select", multiple=True, metavar="CODES", help="Only these rules (id or name prefixes, comma-separated).")
@click.option("--ignore", multiple=True, metavar="CODES", help="Skip these rules (id or name prefixes).")
@click.option(
    "--fail-on",
    type=click.Choice(["error", "warning", "info"], case_sensitive=False),
    default="error",
    show_default=True,
    help="Lowest severity that makes the exit code 1.",
)
@click.option("--exit-zero", is_flag=True, help="Exit 0 even when findings are reported.")
@click.option("--crd", "crd_paths", multiple=True, metavar="PATH", help="CRD files or directories describing policy kinds.")
@_CHANNEL
@_GATEWAY_API_VERSION
@_IMPLEMENTATION
@click.option("--profile", "profile_paths", multiple=True, metavar="PATH", help="Extra policy profile file (repeatable).")
@click.option("--namespace", default="default", show_default=True, help="Namespace of objects that declare none.")
@click.option("--stdin-filename", metavar="NAME", help="File name to report for input read from `-`.")
@click.option(
    "--synthetic-rule-names",
    is_flag=True,
    help="Accept `rule-<n>` for unnamed route rules, as Kuadrant does (a warning instead of an error).",
)
@click.option(
    "--external",
    multiple=True,
    metavar="KIND[/NS[/NAME]]",
    help="Objects that live outside the input (globs, repeatable): references to them are not errors.",
)
@click.option(
    "--max-affected",
    type=click.IntRange(min=0),
    metavar="N",
    help="Report policies whose blast radius exceeds N contexts (PL608).",
)
@click.option("--color", type=click.Choice(["auto", "always", "never"]), default="auto", show_default=True)
@click.option(
    "--jobs",
    "-j",
    type=click.IntRange(min=0),
    default=1,
    show_default=True,
    help="Processes parsing files and running the rules (0: one per CPU; never more than the CPUs this process may use); small inputs use one process anyway.",
)
@click.option("--no-cache", "cache", flag_value=False, default=True, help="Neither read nor write the parse cache.")
@_FOLLOW_OUTSIDE_LINKS
@click.option(
    "--cache-dir",
    metavar="DIR",
    help=(
        "Parse cache directory [default: $POLICYLINT_CACHE_DIR, else the user's cache directory, e.g."
        " ~/.cache/policylint]. Not used (with a warning) inside the linted repository, or unless"
        " this user alone can write it and policylint created it."
    ),
)
@click.option(
    "--baseline",
    metavar="FILE",
    help="Hide the findings recorded in this baseline file (docs/suppressions.md); entries that match nothing are PL906.",
)
@click.option(
    "--write-baseline",
    is_flag=True,
    help=f"Record this run's findings in the --baseline file [default: {_DEFAULT_BASELINE}], dropping stale entries, and hide them.",
)
@click.option(
    "--baseline-ref",
    metavar="REF",
    help="Read the baseline file from this git ref (the pull request's base branch), not the working tree; report the entries the working tree adds.",
)
@click.option(
    "--config-ref",
    metavar="REF",
    help="Read the configuration file from this git ref (the pull request's base branch), not the working tree; report what the working tree's changes.",
)
@click.option(
    "--gate-base",
    metavar="REF",
    help="Compare the configuration and the baseline with REF's and fail when the change loosens them, whatever the files reported on (the pre-commit hook: HEAD).",
)
@click.option("--show-suppressed", is_flag=True, help="Also list the findings hidden by suppressions and the baseline.")
@click.option(
    "--watch",
    is_flag=True,
    help="Lint again whenever a file changes, showing what changed since the last run; Ctrl-C stops (exit 130). Needs policylint[watch].",
)
def check_command(
    paths: tuple[str, ...],
    fmt: str,
    config_file: str | None,
    isolated: bool,
    show_config: bool,
    watch: bool,
    **kwargs: Unpack[_CheckOptions],
) -> None:
    """Lint manifests: files, directories, or `-` for stdin (default: `paths` of the configuration file)."""
    given = _given({"fmt": fmt, **kwargs})
    if watch:
        from policylint.commands.watch import run_watch

        sys.exit(run_watch(paths, given, config=config_file, isolated=isolated, show_config=show_config))
    sys.exit(run_configured(paths, given, config=config_file, isolated=isolated, show_config=show_config))


def _given(values: dict[str, Any]) -> dict[str, Any]:
    """The options given on the command line (or in the environment), not left at their
    defaults: only those override the configuration file."""
    from click.core import ParameterSource

    ctx = click.get_current_context()
    defaults = (ParameterSource.DEFAULT, ParameterSource.DEFAULT_MAP)
    return {name: value for name, value in values.items() if ctx.get_parameter_source(name) not in defaults}


@cli.command("server")
def server_command() -> None:
    """Run the language server on stdin and stdout, for editors (docs/editors.md). Needs policylint[server]."""
    from policylint.commands.server import run_server

    sys.exit(run_server())


@cli.command("config")
@_CONFIG
@_ISOLATED
def config_command(config_file: str | None, isolated: bool) -> None:
    """Print the effective configuration and where each value comes from."""
    sys.exit(run_configured((), {}, config=config_file, isolated=isolated, show_config=True))


@cli.command("rules")
@click.option("--format", "fmt", type=click.Choice(["text", "markdown", "json"]), default="text", show_default=True)
@click.option(
    "--cel-coverage",
    is_flag=True,
    help="Instead: per bundled CRD, its CEL validation rules, how many PL704 evaluates and why not the others (text or json).",
)
@click.option(
    "--crd",
    "crd_paths",
    multiple=True,
    metavar="PATH",
    help="With --cel-coverage: these CRD files or directories instead of the bundled CRDs (repeatable).",
)
def rules_command(fmt: str, cel_coverage: bool, crd_paths: tuple[str, ...]) -> None:
    """List every rule: id, name, default severity, summary."""
    if crd_paths and not cel_coverage:
        raise click.UsageError("--crd goes with --cel-coverage")
    if cel_coverage:
        if fmt == "markdown":
            raise click.UsageError("--cel-coverage prints text or json")
        sys.exit(run_cel_coverage(fmt, crd_paths))
    sys.exit(run_rules(fmt))


@cli.command("rule")
@click.argument("code")
def rule_command(code: str) -> None:
    """Show the documentation of one rule (by id or name)."""
    sys.exit(run_rule(code))


@cli.command("profiles")
@click.option("--profile", "profile_paths", multiple=True, metavar="PATH")
def profiles_command(profile_paths: tuple[str, ...]) -> None:
    """List the policy kinds policylint knows."""
    sys.exit(run_profiles(profile_paths))


_F = TypeVar("_F", bound=Callable[..., Any])


def _query_options(command: _F) -> _F:
    """The loading options `explain` and `graph` share with `check`."""
    for option in reversed(
        [
            click.option(
                "--crd", "crd_paths", multiple=True, metavar="PATH", help="CRD files or directories describing policy kinds."
            ),
            click.option(
                "--profile", "profile_paths", multiple=True, metavar="PATH", help="Extra policy profile file (repeatable)."
            ),
            click.option("--namespace", default="default", show_default=True, help="Namespace of objects that declare none."),
            click.option(
                "--synthetic-rule-names", is_flag=True, help="Accept `rule-<n>` for unnamed route rules, as Kuadrant does."
            ),
            click.option(
                "--external", multiple=True, metavar="KIND[/NS[/NAME]]", help="Objects that live outside the input (globs)."
            ),
            _FOLLOW_OUTSIDE_LINKS,
            _CONFIG,
            _ISOLATED,
        ]
    ):
        command = option(command)
    return command


def _query_load(
    paths: tuple[str, ...], config_file: str | None, isolated: bool, kwargs: QueryLoad
) -> tuple[tuple[str, ...], QueryLoad]:
    """The paths and loading options of `explain` and `graph`, with the configuration file's
    values under the flags given (policylint.commands.check.configured_query)."""
    from policylint.commands.check import configured_query

    loaded = configured_query(paths, _given(dict(kwargs)), dict(kwargs), config=config_file, isolated=isolated)
    if isinstance(loaded, int):
        sys.exit(loaded)
    query_paths, options = loaded
    return query_paths, QueryLoad(**options)  # type: ignore[typeddict-item]


@cli.command("diff")
@click.argument("base")
@click.argument("head", required=False)
@click.option(
    "--path",
    "paths",
    multiple=True,
    metavar="PATH",
    help="Files or directories to compare (repeatable) [default: the repository root].",
)
@click.option("--format", "fmt", type=click.Choice(["text", "json", "markdown"]), default="text", show_default=True)
@click.option(
    "--fail-on",
    type=click.Choice(["error", "warning", "info"], case_sensitive=False),
    default="error",
    show_default=True,
    help="Exit 1 when the change introduces a finding of this severity or worse.",
)
@click.option(
    "--max-affected",
    type=click.IntRange(min=0),
    metavar="N",
    help="Exit 1 when a policy the change adds, modifies or deletes affects more than N contexts.",
)
@click.option("--crd", "crd_paths", multiple=True, metavar="PATH", help="CRD files or directories describing policy kinds.")
@_CHANNEL
@_GATEWAY_API_VERSION
@_IMPLEMENTATION
@click.option("--profile", "profile_paths", multiple=True, metavar="PATH", help="Extra policy profile file (repeatable).")
@click.option("--namespace", default="default", show_default=True, help="Namespace of objects that declare none.")
@click.option("--external", multiple=True, metavar="KIND[/NS[/NAME]]", help="Objects that live outside the input (globs).")
@click.option("--exit-zero", is_flag=True, help="Exit 0 even when the change introduces findings or loosens the gate.")
@_CONFIG
@click.option(
    "--config-ref",
    metavar="REF",
    help="Read the configuration file from this git ref [default: BASE], not from HEAD or the working tree; report what the change does to it.",
)
@_ISOLATED
def diff_command(
    base: str,
    head: str | None,
    paths: tuple[str, ...],
    fmt: str,
    exit_zero: bool,
    config_file: str | None,
    config_ref: str | None,
    isolated: bool,
    **options: Any,
) -> None:
    """What a change does: findings introduced and fixed, policy status and blast radius, effective
    policy before and after, and what it does to the configuration and the baseline. BASE and
    HEAD are git revisions (HEAD: the working tree); both are read from git objects, nothing is
    checked out. The configuration file applied is BASE's: the change's own is compared with it.

    \b
    policylint diff main                 the working tree against main
    policylint diff origin/main HEAD     the last commit(s) against the upstream
    policylint diff main --format markdown >> "$GITHUB_STEP_SUMMARY"
    """
    from policylint.commands.diff import run_configured_diff

    given = _given(dict(options))
    sys.exit(
        run_configured_diff(
            base,
            head,
            paths,
            fmt=fmt,
            given=given,
            options=options,
            config=config_file,
            isolated=isolated,
            root=_repository_root_or_dot(),
            config_ref=config_ref,
            exit_zero=exit_zero,
        )
    )


def _repository_root_or_dot() -> str:
    from policylint.input.git import GitError, repository_root

    try:
        return os.path.relpath(repository_root(os.getcwd()))
    except GitError:
        return "."


@cli.command("explain")
@click.argument("target", metavar="KIND/NAMESPACE/NAME[#SECTION]")
@click.argument("paths", nargs=-1)
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
@click.option(
    "--limit",
    type=click.IntRange(min=0),
    default=20,
    show_default=True,
    help="Contexts listed per result or target (0: all); counts are always complete.",
)
@_query_options
def explain_command(
    target: str,
    paths: tuple[str, ...],
    fmt: str,
    limit: int,
    config_file: str | None,
    isolated: bool,
    **kwargs: Unpack[QueryLoad],
) -> None:
    """Show what an object effectively gets, and why; or what a policy reaches.

    \b
    policylint explain httproute/team-a/storefront examples/
    policylint explain gateway/infra/shared-gw#https examples/
    policylint explain clienttrafficpolicy/infra/shared-gw-clients examples/ --format json

    KIND is case-insensitive and may carry its group (`HTTPRoute.gateway.networking.k8s.io`);
    KIND/NAME names a cluster-scoped object, or one in --namespace. PATHS default to `.`.
    """
    query_paths, load = _query_load(paths, config_file, isolated, kwargs)
    sys.exit(run_explain(target, query_paths, fmt=fmt, limit=limit, **load))


@cli.command("graph")
@click.argument("paths", nargs=-1)
@click.option("--format", "fmt", type=click.Choice(["mermaid", "dot"]), default="mermaid", show_default=True)
@click.option(
    "--focus", metavar="KIND/NAMESPACE/NAME[#SECTION]", help="Only this object's ancestors and descendants, and their policies."
)
@click.option(
    "--depth",
    type=click.IntRange(min=0),
    metavar="N",
    help="Hierarchy steps from the focused object (or from the roots without --focus).",
)
@click.option("--rules", is_flag=True, help="Draw route rules as nodes of their own.")
@_query_options
def graph_command(
    paths: tuple[str, ...],
    fmt: str,
    focus: str | None,
    depth: int | None,
    rules: bool,
    config_file: str | None,
    isolated: bool,
    **kwargs: Unpack[QueryLoad],
) -> None:
    """Draw the topology with its policies (Mermaid for GitHub Markdown, or DOT).

    \b
    policylint graph examples/ > topology.mmd
    policylint graph examples/ --format dot | dot -Tsvg > topology.svg
    policylint graph examples/ --focus httproute/team-a/storefront
    """
    query_paths, load = _query_load(paths, config_file, isolated, kwargs)
    sys.exit(run_graph(query_paths, fmt=fmt, focus=focus, depth=depth, rules=rules, **load))
