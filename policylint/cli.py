"""Command line: click wiring only. Every command is a function in `policylint.commands`
returning an exit code (exit codes: policylint.commands); the options of every command are
generated from the settings (policylint.settings.options), each declared there once."""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING, Any

import click

from policylint import __version__
from policylint.commands.check import run_configured

# The reporter registry only: no reporter module is imported until one renders.
from policylint.reporters import AUTO as _AUTO
from policylint.reporters import FORMATS as _FORMATS
from policylint.settings import CHECK, CONFIG, DIFF, EXPLAIN, GRAPH, PROFILES, RULES, from_values, options
from policylint.version import yaml_parser

if TYPE_CHECKING:
    from policylint.commands.query import Query

# The other commands' modules (catalogue, query) are imported by their commands alone: `check`,
# the pre-commit hook's, is the one run most.


class _DefaultCheckGroup(click.Group):
    """`policylint PATH...` means `policylint check PATH...`.

    A bare `policylint` lints too when a configuration file applies (README "Usage"): it is
    where `paths` are set, so the configured repository is linted, as `yamllint` and
    `ansible-lint` do; without one there is nothing to lint and the help is printed, as ruff does.
    """

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if not args:
            from policylint.config import find_config

            if find_config() is not None:
                args = ["check"]
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


# The check command's formats are the reporters' (not known to policylint.settings, which stays
# light), and its `--diff` takes an optional value.
_CHECK_EXTRA: dict[str, dict[str, Any]] = {"fmt": {"choices": (*_FORMATS, _AUTO)}, "diff_base": {"cls": _OptionalValue}}


@cli.command("check", cls=_StrictOptionalValues)
@click.argument("paths", nargs=-1)
@options(CHECK, _CHECK_EXTRA)
def check_command(
    paths: tuple[str, ...], config_file: str | None, isolated: bool, show_config: bool, watch: bool, **values: Any
) -> None:
    """Lint manifests: files, directories, or `-` for stdin (default: `paths` of the configuration file)."""
    given = _given(values)
    if watch:
        # Imported here: watchfiles is an extra, and a plain run must not pay for the watcher.
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
@options(CONFIG)
def config_command(config_file: str | None, isolated: bool) -> None:
    """Print the effective configuration and where each value comes from."""
    sys.exit(run_configured((), {}, config=config_file, isolated=isolated, show_config=True))


@cli.command("rules")
@options(RULES)
def rules_command(fmt: str, cel_coverage: bool, crd_paths: tuple[str, ...]) -> None:
    """List every rule: id, name, default severity, summary."""
    from policylint.commands.catalogue import run_cel_coverage, run_rules

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
    from policylint.commands.catalogue import run_rule

    sys.exit(run_rule(code))


@cli.command("profiles")
@options(PROFILES)
def profiles_command(profile_paths: tuple[str, ...]) -> None:
    """List the policy kinds policylint knows."""
    from policylint.commands.catalogue import run_profiles

    sys.exit(run_profiles(profile_paths))


def _query_settings(paths: tuple[str, ...], config_file: str | None, isolated: bool, values: dict[str, Any]) -> Query:
    """The settings of `explain` and `graph`, with the configuration file's values under the
    flags given (policylint.commands.check.configured_query)."""
    from policylint.commands.check import configured_query

    loaded = configured_query(paths, _given(values), values, config=config_file, isolated=isolated)
    if isinstance(loaded, int):
        sys.exit(loaded)
    return loaded


@cli.command("diff")
@click.argument("base")
@click.argument("head", required=False)
@options(DIFF)
def diff_command(base: str, head: str | None, config_file: str | None, isolated: bool, **values: Any) -> None:
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

    settings = from_values(values)
    sys.exit(
        run_configured_diff(
            base, head, settings, given=_given(values), config=config_file, isolated=isolated, root=_repository_root_or_dot()
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
@options(EXPLAIN)
def explain_command(target: str, paths: tuple[str, ...], config_file: str | None, isolated: bool, **values: Any) -> None:
    """Show what an object effectively gets, and why; or what a policy reaches.

    \b
    policylint explain httproute/team-a/storefront examples/
    policylint explain gateway/infra/shared-gw#https examples/
    policylint explain clienttrafficpolicy/infra/shared-gw-clients examples/ --format json

    KIND is case-insensitive and may carry its group (`HTTPRoute.gateway.networking.k8s.io`);
    KIND/NAME names a cluster-scoped object, or one in --namespace. PATHS default to `.`.
    """
    from policylint.commands.query import run_explain

    sys.exit(run_explain(target, _query_settings(paths, config_file, isolated, values)))


@cli.command("graph")
@click.argument("paths", nargs=-1)
@options(GRAPH)
def graph_command(paths: tuple[str, ...], config_file: str | None, isolated: bool, **values: Any) -> None:
    """Draw the topology with its policies (Mermaid for GitHub Markdown, or DOT).

    \b
    policylint graph examples/ > topology.mmd
    policylint graph examples/ --format dot | dot -Tsvg > topology.svg
    policylint graph examples/ --focus httproute/team-a/storefront
    """
    from policylint.commands.query import run_graph

    sys.exit(run_graph(_query_settings(paths, config_file, isolated, values)))
