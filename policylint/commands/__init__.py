"""Commands: each a function taking plain values and returning an exit code.

`policylint.cli` only wires them to click. Exit codes (README "Exit codes"), the same for every
output format: 0 nothing at or above --fail-on; 1 findings at or above it; 2 usage error, bad
profile, a path that matches nothing, or an internal error.

This module stays light (click only): every command imports what it needs when it runs.
"""

from __future__ import annotations

import os

import click

EXIT_OK = 0
EXIT_FINDINGS = 1
EXIT_USAGE = 2


def error(message: object) -> None:
    """`policylint: error: ...` on standard error. Messages echo paths, codes, queries and names
    from the input: escaped (policylint.textsafe), so that they stay one visible line, and cut
    to MAX_MESSAGE characters, as findings are, so that no input makes them long."""
    from policylint.textsafe import MAX_MESSAGE, escape

    click.echo(f"policylint: error: {escape(str(message), MAX_MESSAGE)}", err=True)


def errors(problem: object) -> None:
    """Each line of a multi-line problem (a ConfigError lists one problem a line) as an `error`."""
    for line in str(problem).splitlines():
        error(line)


def warning(message: str) -> None:
    """`policylint: warning: ...` on standard error, escaped like `_error` (paths come from the
    environment and the command line)."""
    from policylint.textsafe import MAX_MESSAGE, escape

    click.echo(f"policylint: warning: {escape(message, MAX_MESSAGE)}", err=True)


def use_color(choice: str, stream: object) -> bool:
    """`--color`, then NO_COLOR (https://no-color.org), then FORCE_COLOR
    (https://force-color.org), then whether `stream` is a terminal."""
    if choice == "always":
        return True
    if choice == "never" or os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("FORCE_COLOR"):
        return True
    return bool(getattr(stream, "isatty", lambda: False)())
