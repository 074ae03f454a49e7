"""`policylint check`: lint the inputs, print the report, return the exit code."""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence

import click

from policylint.commands import EXIT_FINDINGS, EXIT_OK, EXIT_USAGE, error, split_codes, use_color, warning


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

    selection = Selection(split_codes(select), split_codes(ignore))
    unknown = selection.unknown_codes(REGISTRY)
    if unknown:
        error(f"no rule matches {', '.join(unknown)} (see `policylint rules`)")
        return EXIT_USAGE
    try:
        threshold = Severity.parse(fail_on)
    except ValueError as exc:
        error(exc)
        return EXIT_USAGE
    try:
        external_objects = ExternalObjects.parse(external)
    except ExternalPatternError as exc:
        error(exc)
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
        error(exc)
        return EXIT_USAGE
    for note in result.notes:
        warning(note)
    colored = fmt == "text" and use_color(color, sys.stdout)
    render = renderer(fmt, color=colored)
    # color=True keeps the escape codes click would strip when stdout is not a terminal.
    click.echo(render(result), nl=False, color=colored)
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
