"""`check --fix`, `--unsafe-fixes`, `--diff-fix`, `--fix-only`: apply the fixes findings carry
(policylint.autofix), then report what remains."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

import click

from policylint.commands import EXIT_FINDINGS, EXIT_OK, warning
from policylint.findings import Finding, Severity
from policylint.rules.input import UnreadableFile

if TYPE_CHECKING:
    from policylint.autofix import FilePlan
    from policylint.pipeline import LintRequest, LintResult

# Passes of lint-and-fix: a fix that overlaps another waits for the next pass; a fix that keeps
# producing findings to fix (it should not) stops here.
MAX_PASSES = 5


def run_fixes(request: LintRequest, *, unsafe: bool, only: Sequence[str], diff_only: bool) -> LintResult | int:
    """Lint, fix, lint again until nothing is left to fix; the last lint's result. With
    `diff_only`, print the unified diff of the first pass instead, write nothing, and return
    the exit code (1 when there is something to fix).

    A file that must not be written (read-only, in a read-only directory, a link out of the
    linted paths: policylint.autofix.write_target) or that fails to be is left as it was and
    gets a PL008 finding in the report; every other file is still fixed."""
    from policylint.autofix import WriteRoots, apply_plan, fixable, plan, write_atomic, write_target
    from policylint.pipeline import lint
    from policylint.textsafe import escape

    fixed = 0
    files: set[str] = set()
    refused: dict[str, Finding] = {}  # by file: not written, and not tried again
    roots = WriteRoots(request.paths)
    result = lint(request)
    for _ in range(MAX_PASSES):
        candidates = [f for f in fixable(result.findings, unsafe=unsafe, only=only) if f.fix and f.fix.file not in refused]
        plans = [apply_plan(p) for p in plan(candidates)]
        for p in plans:
            for finding, why in p.skipped:
                warning(f"{finding.file}:{finding.line}: {finding.rule} not fixed: {why}")
        changed = [p for p in plans if p.fixed != p.original]
        if diff_only:
            return _print_diff(result, changed, unsafe=unsafe, only=only)
        written = False
        targets: set[str] = set()  # written in this pass
        for p in changed:
            target = write_target(p.path, roots)
            if target.path in targets:
                continue  # a link and its target both linted: the next pass fixes what is left
            targets.add(target.path)
            try:
                done = not target.refusal and write_atomic(target.path, p.fixed, p.original)
            except OSError as exc:
                target = replace(target, refusal=f"could not be written: {exc.strerror or type(exc).__name__}")
                done = False
            if target.refusal:
                refused[p.path] = _refusal(p.path, target.refusal, len(p.applied))
            elif done:
                fixed += len(p.applied)
                files.add(p.path)
                written = True
            else:
                warning(f"{escape(p.path)} changed while policylint ran: not fixed")
        if not written:
            break
        result = lint(request)
    if refused:
        # The findings left unfixed stay in the report, with their severities: the exit code is
        # the one of a run that fixed nothing in those files.
        result.findings = sorted([*result.findings, *refused.values()], key=Finding.sort_key)
    click.echo(_summary(result, fixed, len(files), len(refused), unsafe=unsafe), err=True)
    return result


def _print_diff(result: LintResult, changed: Sequence[FilePlan], *, unsafe: bool, only: Sequence[str]) -> int:
    """`--diff-fix`: print the first pass's unified diff, and say what it holds; the exit code."""
    from policylint.autofix import fixable, unified_diff
    from policylint.k8s.names import plural

    click.echo(unified_diff(changed), nl=False)
    count = sum(len(p.applied) for p in changed)
    message = f"policylint: {plural(count, 'fix', 'fixes')} in {plural(len(changed), 'file')} (nothing written)"
    # A fix held back for --unsafe-fixes is still something to fix: an empty diff must
    # not read as a clean check (ruff's --diff says "N hidden fixes can be enabled").
    held = [] if unsafe else [f for f in fixable(result.findings, unsafe=True, only=only) if f.fix and not f.fix.safe]
    if held:
        rules = ", ".join(sorted({f.rule for f in held}))
        message += f"; {plural(len(held), 'more fix', 'more fixes')} with --unsafe-fixes ({rules})"
    click.echo(message, err=True)
    return EXIT_FINDINGS if changed or held else EXIT_OK


def _summary(result: LintResult, fixed: int, files: int, refused: int, *, unsafe: bool) -> str:
    """What the fixes did, and what is left to fix, in one line."""
    from policylint.k8s.names import plural

    remaining = [f for f in result.findings if f.fix is not None]
    unsafe_left = sum(1 for f in remaining if not f.fix or not f.fix.safe) if not unsafe else 0
    message = f"policylint: fixed {plural(fixed, 'finding')} in {plural(files, 'file')}"
    if refused:
        message += f"; {plural(refused, 'file')} not written ({UnreadableFile.id})"
    if remaining:
        message += f"; {plural(len(remaining), 'fixable finding')} left"
        if unsafe_left:
            message += f" ({unsafe_left} with --unsafe-fixes)"
    return message


def _refusal(file: str, reason: str, count: int) -> Finding:
    """The finding that says the fixes of `file` were not written, and why: PL008, the rule of
    inputs policylint must not touch, at warning level (the unfixed findings keep theirs)."""
    from policylint.k8s.names import plural
    from policylint.rules.engine import fingerprint

    finding = Finding(
        file,
        1,
        1,
        UnreadableFile.id,
        UnreadableFile.name,
        Severity.WARNING,
        f"--fix did not write this file ({plural(count, 'fix', 'fixes')}): it {reason}",
        hint="Fix it by hand, or make it (or its directory) writable and run --fix again; policylint never changes permissions.",
    )
    return replace(finding, fingerprint=fingerprint(finding))
