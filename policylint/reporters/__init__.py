"""Reporters: one module per format, each with `render(result, *, color) -> str`, listed in `REPORTERS`.

Adding a format is one module plus one `Reporter` line here: the CLI's `--format` choices, the
pipeline's choice of stages and tests/test_output_safety.py (which runs hostile input through
every listed format) all read this table. Reporters only render: everything they show is in the
`LintResult` already (findings, and the per-policy section when `policies` is set), so rendering
never computes, and cannot fail on input.

A format read by people (text, and the annotation formats to come) escapes every field taken
from the input with `policylint.textsafe.escape`; a document for programs (`machine`) relies on
its own syntax's escaping, written with `policylint.textsafe.json_dumps` for JSON.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, cast

if TYPE_CHECKING:
    from policylint.pipeline import LintResult


@dataclass(frozen=True, slots=True)
class Reporter:
    name: str
    # Imported when used, so that a text run never imports the other formats.
    module: str
    summary: str
    # A document for programs (parsed, not read line by line); else text for people.
    machine: bool = False
    # Shows the per-policy section (targets, enforcement, blast radius): the pipeline computes
    # it, which builds the effective-policy simulation.
    policies: bool = False


REPORTERS: dict[str, Reporter] = {
    r.name: r
    for r in (
        Reporter("text", "policylint.reporters.text", "path:line:col: severity RULE message [Kind ns/name]"),
        Reporter("json", "policylint.reporters.json", "the JSON report, schemaVersion 1", machine=True, policies=True),
    )
}
FORMATS = tuple(REPORTERS)
MACHINE_FORMATS = frozenset(name for name, r in REPORTERS.items() if r.machine)


def renderer(fmt: str, *, color: bool = False) -> Callable[[LintResult], str]:
    render = cast("Callable[..., str]", importlib.import_module(REPORTERS[fmt].module).render)
    return lambda result: render(result, color=color)
