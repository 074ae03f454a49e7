"""`policylint check --watch`: lint again on every change to the files, and say what changed.

Each run clears the screen and prints the findings that appeared since the previous run (`+`)
and those that went away (`-`), by fingerprint (the identity `--baseline` uses: a finding that
only moved lines is neither), then the totals. The first run prints every finding as new. The
analysis is the language server's (policylint.server.analysis): the configuration file found
from the working directory, the PATHS given or its `paths`. Ctrl-C stops with exit code 130, the
shell's code for an interrupted command.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import click

from policylint.commands import EXIT_USAGE, error
from policylint.findings import Finding, Severity
from policylint.server.analysis import Problem
from policylint.textsafe import escape

EXIT_INTERRUPTED = 130


def run_watch(
    paths: Sequence[str],
    given: Mapping[str, Any],
    *,
    config: str | None = None,
    isolated: bool = False,
    show_config: bool = False,
    changes: Iterable[object] | None = None,
    clear: Callable[[], None] | None = None,
) -> int:
    """Watch `paths` (default: the configuration's `paths`, then `.`). `changes` yields once per
    batch of file changes (default: watchfiles over the paths); `clear` clears the screen."""
    flags = sorted(k for k in given if k != "fmt") + [
        name for name, on in (("config", config), ("isolated", isolated), ("show_config", show_config)) if on
    ]
    if flags:
        shown = ", ".join("--" + f.replace("_", "-") for f in flags)
        error(f"--watch reads the configuration file found here and PATHS only: not with {shown}")
        return EXIT_USAGE
    if "-" in paths:
        error("--watch reads files: not standard input")
        return EXIT_USAGE
    if changes is None:
        try:
            from watchfiles import watch
        except ImportError as exc:
            error(f"--watch needs watchfiles ({exc}): pip install 'policylint[watch]'")
            return EXIT_USAGE
        changes = watch(*(paths or (".",)), raise_interrupt=True)
    from policylint.server.analysis import analyse

    previous: dict[str, Finding] | None = None
    try:
        while True:
            analysis = analyse(os.getcwd(), {}, paths)
            current = {f.fingerprint: f for f in analysis.findings}
            (clear or click.clear)()
            _report(analysis.problems, previous, current)
            previous = current
            for _ in changes:
                break
            else:
                return 0  # the watcher stopped
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED


def _line(f: Finding) -> str:
    return escape(f"{f.file}:{f.line}:{f.column}: {f.rule} {f.severity.label}: {f.message}")


def _report(problems: Sequence[Problem], previous: Mapping[str, Finding] | None, current: Mapping[str, Finding]) -> None:
    click.echo(f"policylint: watching, last run {time.strftime('%H:%M:%S')}")
    for problem in problems:
        click.echo(escape(f"{problem.file}:{problem.line}: {problem.message}"))
    before = previous or {}
    new = sorted((f for k, f in current.items() if k not in before), key=_order)
    gone = sorted((f for k, f in before.items() if k not in current), key=_order)
    for f in new:
        click.echo(f"+ {_line(f)}")
    for f in gone:
        click.echo(f"- {_line(f)}")
    if previous is not None and not new and not gone:
        click.echo("no change in the findings")
    errors = sum(1 for f in current.values() if f.severity is Severity.ERROR)
    click.echo(f"{len(current)} findings ({errors} errors): {len(new)} new, {len(gone)} gone")


def _order(f: Finding) -> tuple[str, int, int, str]:
    return (f.file, f.line, f.column, f.rule)
