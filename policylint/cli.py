"""Command line: thin click wiring; every command is a function returning an exit code.

Exit codes (README "Exit codes"), the same for every output format:
0 nothing at or above --fail-on; 1 findings at or above it; 2 usage error,
bad profile, a path that matches nothing, or an internal error.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, TypedDict, TypeVar

import click

from policylint import __version__

# The reporter registry only: no reporter module is imported until one renders.
from policylint.reporters import FORMATS as _FORMATS

if TYPE_CHECKING:
    from typing_extensions import Unpack

    from policylint.k8s.index import ProjectIndex

EXIT_OK = 0
EXIT_FINDINGS = 1
EXIT_USAGE = 2


def _error(message: object) -> None:
    """`policylint: error: ...` on standard error. Messages echo paths, codes, queries and names
    from the input: escaped (policylint.textsafe), so that they stay one visible line."""
    from policylint.textsafe import escape

    click.echo(f"policylint: error: {escape(str(message))}", err=True)


def _warning(message: str) -> None:
    """`policylint: warning: ...` on standard error, escaped like `_error` (paths come from the
    environment and the command line)."""
    from policylint.textsafe import escape

    click.echo(f"policylint: warning: {escape(message)}", err=True)


def _split_codes(values: Sequence[str]) -> tuple[str, ...]:
    return tuple(c.strip() for v in values for c in v.split(",") if c.strip())


def _use_color(choice: str, stream: object) -> bool:
    if choice == "always":
        return True
    if choice == "never" or os.environ.get("NO_COLOR"):
        return False
    return bool(getattr(stream, "isatty", lambda: False)())


def run_check(
    paths: Sequence[str],
    *,
    fmt: str = "text",
    select: Sequence[str] = (),
    ignore: Sequence[str] = (),
    fail_on: str = "error",
    exit_zero: bool = False,
    crd_paths: Sequence[str] = (),
    profile_paths: Sequence[str] = (),
    namespace: str = "default",
    stdin_filename: str | None = None,
    synthetic_rule_names: bool = False,
    external: Sequence[str] = (),
    max_affected: int | None = None,
    color: str = "auto",
    jobs: int = 1,
    cache: bool = True,
    cache_dir: str | None = None,
    follow_outside_links: bool = False,
) -> int:
    """Lint `paths`; print the report to stdout and a summary to stderr.

    The parse cache lives in `cache_dir`, else $POLICYLINT_CACHE_DIR, else the user's cache
    directory (policylint.input.cache.default_directory); `cache=False` neither reads nor writes it.
    A directory that is not safe to use is not used, with a warning on stderr.
    """
    from policylint.findings import Severity
    from policylint.input.sources import SourceError
    from policylint.k8s.external import ExternalObjects, ExternalPatternError
    from policylint.pipeline import LintRequest, lint
    from policylint.profiles.registry import ProfileError
    from policylint.reporters import REPORTERS, renderer
    from policylint.reporters.text import summary
    from policylint.rules import REGISTRY
    from policylint.rules.base import RuleOptionError
    from policylint.rules.engine import Selection

    selection = Selection(_split_codes(select), _split_codes(ignore))
    unknown = selection.unknown_codes(REGISTRY)
    if unknown:
        _error(f"no rule matches {', '.join(unknown)} (see `policylint rules`)")
        return EXIT_USAGE
    try:
        threshold = Severity.parse(fail_on)
    except ValueError as exc:
        _error(exc)
        return EXIT_USAGE
    try:
        external_objects = ExternalObjects.parse(external)
    except ExternalPatternError as exc:
        _error(exc)
        return EXIT_USAGE
    request = LintRequest(
        report_policies=REPORTERS[fmt].policies,
        follow_outside_links=follow_outside_links,
        paths=paths,
        stdin_filename=stdin_filename,
        read_stdin=lambda: sys.stdin.buffer.read(),
        namespace=namespace,
        crd_paths=crd_paths,
        profile_paths=profile_paths,
        selection=selection,
        synthetic_rule_names=synthetic_rule_names,
        external=external_objects,
        cache_dir=_cache_dir(cache, cache_dir),
        jobs=jobs,
        max_affected=max_affected,
    )
    try:
        result = lint(request)
    except (SourceError, ProfileError, RuleOptionError) as exc:
        _error(exc)
        return EXIT_USAGE
    for note in result.notes:
        _warning(note)
    use_color = fmt == "text" and _use_color(color, sys.stdout)
    render = renderer(fmt, color=use_color)
    # color=True keeps the escape codes click would strip when stdout is not a terminal.
    click.echo(render(result), nl=False, color=use_color)
    click.echo(summary(result), err=True)
    if result.internal_error:
        return EXIT_USAGE
    if exit_zero:
        return EXIT_OK
    return EXIT_FINDINGS if any(f.severity >= threshold for f in result.findings) else EXIT_OK


def _cache_dir(enabled: bool, directory: str | None) -> str | None:
    if not enabled:
        return None
    from policylint.input.cache import ENV_DIR, default_directory

    # Outside the working directory by default: in CI that is the checkout under review, and
    # whoever writes the cache decides what policylint believes the files say.
    return directory or os.environ.get(ENV_DIR) or default_directory()


def run_rules(fmt: str = "text") -> int:
    """List the rule catalogue."""
    from policylint.rules import REGISTRY
    from policylint.rules.docs import catalogue_markdown

    if fmt == "markdown":
        click.echo(catalogue_markdown(), nl=False)
        return EXIT_OK
    width = max(len(r.name) for r in REGISTRY)
    for rule in REGISTRY:
        click.echo(f"{rule.id}  {rule.name:<{width}}  {rule.severity.label:<7}  {rule.summary()}")
    return EXIT_OK


def run_rule(code: str) -> int:
    """Print one rule's documentation, offline."""
    from policylint.rules import REGISTRY
    from policylint.rules.docs import doc_path

    wanted = code.strip()
    for rule in REGISTRY:
        if rule.id.upper() == wanted.upper() or rule.name == wanted.lower():
            path = doc_path(rule)
            click.echo(path.read_text(encoding="utf-8"), nl=False)
            return EXIT_OK
    _error(f"no rule {code!r} (see `policylint rules`)")
    return EXIT_USAGE


def run_profiles(profile_paths: Sequence[str] = ()) -> int:
    """List the policy kinds policylint knows and how it treats them."""
    from pathlib import Path

    from policylint.profiles.registry import ORIGIN_PROFILE, ProfileError, ProfileRegistry, builtin_profiles, load_profile_file
    from policylint.textsafe import defuse_line, escape

    try:
        user = [p for path in profile_paths for p in load_profile_file(Path(path), origin=ORIGIN_PROFILE)]
    except ProfileError as exc:
        _error(exc)
        return EXIT_USAGE
    for p in ProfileRegistry([user, builtin_profiles()]):
        fields = ", ".join(p.targets.fields)
        kinds = ", ".join(dict.fromkeys(t.kind for t in p.targets.kinds)) or "any"
        line = f"{p.group}/{p.kind:<24} {p.policy_class:<9} {p.boilerplate:<17} {p.merge.default:<16} [{fields}] -> {kinds}  ({p.project})"
        click.echo(defuse_line(escape(line)))  # a --profile file's strings are input too
    return EXIT_OK


class _QueryLoad(TypedDict, total=False):
    """The loading options `explain` and `graph` share with `check` (`_query_options`)."""

    crd_paths: Sequence[str]
    profile_paths: Sequence[str]
    namespace: str
    synthetic_rule_names: bool
    external: Sequence[str]
    follow_outside_links: bool


class _CheckOptions(_QueryLoad, total=False):
    """The options of `check` besides its paths and --format: `run_check`'s keywords."""

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


def _load_index_for_query(
    paths: Sequence[str],
    *,
    crd_paths: Sequence[str] = (),
    profile_paths: Sequence[str] = (),
    namespace: str = "default",
    synthetic_rule_names: bool = False,
    external: Sequence[str] = (),
    follow_outside_links: bool = False,
) -> ProjectIndex | int:
    """The index `explain` and `graph` query (no rules run), or EXIT_USAGE after saying why."""
    from policylint.input.sources import SourceError
    from policylint.k8s.external import ExternalObjects, ExternalPatternError
    from policylint.pipeline import LintRequest, load_index
    from policylint.profiles.registry import ProfileError

    try:
        external_objects = ExternalObjects.parse(external)
        index = load_index(
            LintRequest(
                paths=paths,
                read_stdin=lambda: sys.stdin.buffer.read(),
                namespace=namespace,
                crd_paths=crd_paths,
                profile_paths=profile_paths,
                synthetic_rule_names=synthetic_rule_names,
                external=external_objects,
                follow_outside_links=follow_outside_links,
            )
        )
    except (ExternalPatternError, SourceError, ProfileError) as exc:
        _error(exc)
        return EXIT_USAGE
    if index.input_issues:
        # Unparsable or malformed documents are findings of `check`; here they are only missing.
        n = len(index.input_issues)
        click.echo(f"policylint: note: {n} input problem{'s' if n != 1 else ''} skipped; `policylint check` lists them", err=True)
    return index


def run_explain(
    target: str,
    paths: Sequence[str] = (".",),
    *,
    fmt: str = "text",
    limit: int = 20,
    **load: Unpack[_QueryLoad],
) -> int:
    """Explain the effective policy of one object, or what one policy reaches (README "Explain")."""
    from policylint.commands.explain import ExplainError, explain, render_json, render_text

    index = _load_index_for_query(paths or (".",), **load)
    if isinstance(index, int):
        return index
    try:
        doc = explain(index, target, default_namespace=str(load.get("namespace", "default")), limit=limit)
    except ExplainError as exc:
        _error(exc)
        return EXIT_USAGE
    click.echo(render_json(doc) if fmt == "json" else render_text(doc), nl=False)
    return EXIT_OK


def run_graph(
    paths: Sequence[str] = (".",),
    *,
    fmt: str = "mermaid",
    focus: str | None = None,
    depth: int | None = None,
    rules: bool = False,
    **load: Unpack[_QueryLoad],
) -> int:
    """Draw the topology with its policies, in Mermaid or DOT."""
    from policylint.commands.explain import ExplainError
    from policylint.commands.graph import build_graph, render

    index = _load_index_for_query(paths or (".",), **load)
    if isinstance(index, int):
        return index
    try:
        graph = build_graph(
            index, focus=focus, depth=depth, show_rules=rules, default_namespace=str(load.get("namespace", "default"))
        )
    except ExplainError as exc:
        _error(exc)
        return EXIT_USAGE
    click.echo(render(graph, fmt), nl=False)
    return EXIT_OK


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

    # Click declares `message` Final, yet escaping it in place is the only way to keep the
    # exception's own class, context (usage line, hint) and exit code.
    exc.message = escape(exc.message)  # type: ignore[misc]
    return exc


@click.group(cls=_DefaultCheckGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="policylint")
def cli() -> None:
    """Offline linter for Gateway API Policy Attachment manifests.

    \b
    policylint ./manifests              lint a directory (same as `check`)
    policylint rules                    list the rules
    policylint rule PL201               show one rule's documentation
    policylint explain httproute/ns/x   what an object effectively gets, and from which policy
    policylint graph --format mermaid   the topology with its policies
    """


# Shared by `check`, `explain` and `graph` (click makes a new option object per command).
_FOLLOW_OUTSIDE_LINKS = click.option(
    "--follow-outside-links",
    is_flag=True,
    help="Follow symlinks that lead outside PATHS (never to a FIFO or device); otherwise each is a PL008 finding.",
)


@cli.command("check")
@click.argument("paths", nargs=-1, required=True)
@click.option("--format", "fmt", type=click.Choice(list(_FORMATS)), default="text", show_default=True)
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
    help="Processes parsing files (0: one per CPU; never more than the CPUs this process may use); small inputs are parsed in one process anyway.",
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
def check_command(paths: tuple[str, ...], fmt: str, **kwargs: Unpack[_CheckOptions]) -> None:
    """Lint manifests: files, directories, or `-` for stdin."""
    sys.exit(run_check(paths, fmt=fmt, **kwargs))


@cli.command("rules")
@click.option("--format", "fmt", type=click.Choice(["text", "markdown"]), default="text", show_default=True)
def rules_command(fmt: str) -> None:
    """List every rule: id, name, default severity, summary."""
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
        ]
    ):
        command = option(command)
    return command


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
def explain_command(target: str, paths: tuple[str, ...], fmt: str, limit: int, **kwargs: Unpack[_QueryLoad]) -> None:
    """Show what an object effectively gets, and why; or what a policy reaches.

    \b
    policylint explain httproute/team-a/storefront examples/
    policylint explain gateway/infra/shared-gw#https examples/
    policylint explain clienttrafficpolicy/infra/shared-gw-clients examples/ --format json

    KIND is case-insensitive and may carry its group (`HTTPRoute.gateway.networking.k8s.io`);
    KIND/NAME names a cluster-scoped object, or one in --namespace. PATHS default to `.`.
    """
    sys.exit(run_explain(target, paths or (".",), fmt=fmt, limit=limit, **kwargs))


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
    paths: tuple[str, ...], fmt: str, focus: str | None, depth: int | None, rules: bool, **kwargs: Unpack[_QueryLoad]
) -> None:
    """Draw the topology with its policies (Mermaid for GitHub Markdown, or DOT).

    \b
    policylint graph examples/ > topology.mmd
    policylint graph examples/ --format dot | dot -Tsvg > topology.svg
    policylint graph examples/ --focus httproute/team-a/storefront
    """
    sys.exit(run_graph(paths or (".",), fmt=fmt, focus=focus, depth=depth, rules=rules, **kwargs))
