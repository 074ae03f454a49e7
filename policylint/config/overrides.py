"""Per-rule severities and per-file settings, applied to the findings after the rules ran.

Rules keep their own default severity (`Rule.severity`); configuration changes it here, after
the engine, so that no rule reads configuration it did not declare as an option.

- `severity`: rule id or name prefix -> `off`, `info`, `warning` or `error`. The longest prefix
  that matches a rule decides, as for `--select` (`PL3: warning` with `PL301: error` makes PL301
  an error and the other PL3xx rules warnings); `off` drops the rule's findings like `ignore`.
- `per-file`: gitignore-style patterns (relative to the configuration file's directory) with
  `select`, `ignore` and `severity` for the files they match. A file's selection is the global
  one with the per-file `select` in place of the global `select` when given and the per-file
  `ignore` added; its severities are the global ones with the per-file ones added, a per-file
  entry winning over a global entry of the same length. Entries apply in the order written.

Findings of the engine's own rules (PL000, a rule that crashed; PL007, findings not shown)
are never dropped nor changed: they say the report itself is incomplete.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from policylint.findings import Finding, Severity
from policylint.rulecodes import prefix_length
from policylint.values import frozen

if TYPE_CHECKING:
    from pathspec import GitIgnoreSpec

    from policylint.rules.base import Rule
    from policylint.rules.engine import Selection

OFF = "off"
LEVELS = (OFF, "info", "warning", "error")
_ENGINE_RULES = frozenset({"PL000", "PL007"})


def severity_for(rule: type[Rule], entries: Sequence[tuple[str, str]]) -> str | None:
    """The level the longest matching prefix gives `rule` (later entries win ties), or None."""
    best, level = -1, None
    for code, value in entries:
        n = prefix_length(code, rule.id, rule.name)
        if n >= 0 and n >= best:
            best, level = n, value
    return level


@frozen(slots=False)
class PerFile:
    """One `per-file` entry: `pattern` (gitignore syntax) relative to `base` (absolute)."""

    pattern: str
    base: str
    spec: GitIgnoreSpec
    select: tuple[str, ...] | None = None
    ignore: tuple[str, ...] = ()
    severity: tuple[tuple[str, str], ...] = ()

    def matches(self, file: str) -> bool:
        path = os.path.abspath(file)
        prefix = self.base if self.base.endswith(os.sep) else self.base + os.sep
        if not path.startswith(prefix):
            return False
        rel = path[len(prefix) :].replace(os.sep, "/")
        return bool(self.spec.match_file(rel))


@frozen(slots=False)
class Overrides:
    """What configuration changes in the findings. `selection` is the global selection (the
    run itself selects every rule that some file's selection enables)."""

    selection: Selection | None = None
    severity: tuple[tuple[str, str], ...] = ()
    per_file: tuple[PerFile, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.severity or self.per_file)


def run_selection(global_selection: Selection, per_file: Sequence[PerFile], rules: Sequence[type[Rule]]) -> Selection:
    """The rules to run: every rule the global selection or some per-file selection enables."""
    from policylint.rules.engine import Selection

    if not any(entry.select is not None or entry.ignore for entry in per_file):
        return global_selection
    enabled = [rule.id for rule in rules if global_selection.enabled(rule)]
    for entry in per_file:
        selection = _file_selection(global_selection, [entry])
        enabled.extend(rule.id for rule in rules if selection.enabled(rule))
    return Selection(select=tuple(sorted(set(enabled))) or ("PL000",))


def _file_selection(global_selection: Selection, entries: Sequence[PerFile]) -> Selection:
    from policylint.rules.engine import Selection

    select = global_selection.select
    ignore = list(global_selection.ignore)
    for entry in entries:
        if entry.select is not None:
            select = entry.select
        ignore.extend(entry.ignore)
    return Selection(select=select, ignore=tuple(ignore))


def apply(findings: list[Finding], rules: Mapping[str, type[Rule]], overrides: Overrides) -> list[Finding]:
    """`findings` with severities changed and the findings the configuration turns off dropped."""
    global_selection = overrides.selection
    cache: dict[str, tuple[Selection | None, tuple[tuple[str, str], ...]]] = {}
    out: list[Finding] = []
    for finding in findings:
        rule = rules.get(finding.rule)
        if rule is None or finding.rule in _ENGINE_RULES:
            out.append(finding)
            continue
        settings = cache.get(finding.file)
        if settings is None:
            entries = [entry for entry in overrides.per_file if entry.matches(finding.file)]
            selection = _file_selection(global_selection, entries) if global_selection is not None else None
            severity = overrides.severity + tuple(pair for entry in entries for pair in entry.severity)
            settings = cache[finding.file] = (selection, severity)
        selection, severity = settings
        if selection is not None and not selection.enabled(rule):
            continue
        level = severity_for(rule, severity)
        if level == OFF:
            continue
        if level is not None:
            finding = replace(finding, severity=Severity.parse(level))
        out.append(finding)
    return out
