"""Reporters: `render(result) -> str`, one module per format."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from policylint.pipeline import LintResult

FORMATS = ("text", "json")


def renderer(fmt: str, *, color: bool = False) -> Callable[[LintResult], str]:
    if fmt == "json":
        from policylint.reporters import json as json_reporter

        return json_reporter.render
    from policylint.reporters import text

    return lambda result: text.render(result, color=color)
