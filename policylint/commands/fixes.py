"""`check --fix`, `--unsafe-fixes`, `--diff-fix`, `--fix-only`: apply the fixes findings carry
(policylint.autofix), then report what remains."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import click

from policylint.commands import EXIT_FINDINGS, EXIT_OK, warning

if TYPE_CHECKING:
    from policylint.pipeline import LintRequest, LintResult

# Passes of lint-and-fix: a fix that overlaps another waits for the next pass; a fix that keeps
# producing findings to fix (it should not) stops here.
MAX_PASSES = 5


def run_fixes(request: LintRequest, *, unsafe: bool, only: Sequence[str], diff_only: bool) -> LintResult | int:
    """Lint, fix, lint again until nothing is left to fix; the last lint's result. With
    `diff_only`, print the unified diff of the first pass instead, write nothing, and return
    the exit code (1 when there is something to fix)."""
    from policylint.autofix import apply_plan, fixable, plan, unified_diff, write_atomic
    from policylint.k8s.names import plural
    from policylint.pipeline import lint
    from policylint.textsafe import escape

    fixed = 0
    files: set[str] = set()
    result = lint(request)
    for _ in range(MAX_PASSES):
        candidates = fixable(result.findings, unsafe=unsafe, only=only)
        plans = [apply_plan(p) for p in plan(candidates)]
        for p in plans:
            for finding, why in p.skipped:
                warning(f"{finding.file}:{finding.line}: {finding.rule} not fixed: {why}")
        changed = [p for p in plans if p.fixed != p.original]
        if diff_only:
            click.echo(unified_diff(changed), nl=False)
            count = sum(len(p.applied) for p in changed)
            click.echo(
                f"policylint: {plural(count, 'fix', 'fixes')} in {plural(len(changed), 'file')} (nothing written)", err=True
            )
            return EXIT_FINDINGS if changed else EXIT_OK
        if not changed:
            break
        for p in changed:
            if write_atomic(p.path, p.fixed, p.original):
                fixed += len(p.applied)
                files.add(p.path)
            else:
                warning(f"{escape(p.path)} changed while policylint ran: not fixed")
        result = lint(request)
    remaining = [f for f in result.findings if f.fix is not None]
    unsafe_left = sum(1 for f in remaining if not f.fix or not f.fix.safe) if not unsafe else 0
    message = f"policylint: fixed {plural(fixed, 'finding')} in {plural(len(files), 'file')}"
    if remaining:
        message += f"; {plural(len(remaining), 'fixable finding')} left"
        if unsafe_left:
            message += f" ({unsafe_left} with --unsafe-fixes)"
    click.echo(message, err=True)
    return result
