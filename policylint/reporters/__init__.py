"""Reporters: `render(result) -> str`, one module per format.

Every format is listed in `FORMATS`; tests/test_output_safety.py runs hostile input through each
of them, so a new format is covered as soon as it is listed. A format read by people (text, and
the annotation formats to come) escapes every field from the input with
`policylint.textsafe.escape`; a document for programs (`MACHINE_FORMATS`) relies on its own
syntax's escaping, written with `policylint.textsafe.json_dumps` for JSON.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from policylint.pipeline import LintResult

FORMATS = ("text", "json")
# Documents for programs (parsed, not read line by line); the others are text for people.
MACHINE_FORMATS = frozenset({"json"})


def renderer(fmt: str, *, color: bool = False) -> Callable[[LintResult], str]:
    if fmt == "json":
        from policylint.reporters import json as json_reporter

        return json_reporter.render
    from policylint.reporters import text

    return lambda result: text.render(result, color=color)
