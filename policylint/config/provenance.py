"""Which settings of a configuration file turn checks off or down, each with its file and line
(policylint.gate.Relaxation): the summary of every run states them (README "Security").

The rules each setting affects are worked out with the same matching the run applies
(`Selection.enabled`, the longest prefix of `severity`, per-file selections), so the count in
"12 rules off by .policylint.yaml:3" is what the run really lost. The engine's own rules (PL000,
PL007) are left out: configuration never changes them. A key the command line overrides is not
the file's doing and is not listed.
"""

from __future__ import annotations

from collections.abc import Container, Sequence
from typing import TYPE_CHECKING

from policylint.config.load import Loc, key_text
from policylint.gate import Relaxation
from policylint.k8s.names import plural
from policylint.rulecodes import prefix_length

if TYPE_CHECKING:
    from policylint.config.load import LoadedConfig
    from policylint.rules.base import Rule

_ENGINE_RULES = frozenset({"PL000", "PL007"})
_LEVEL_RANK = {"info": 0, "warning": 1, "error": 2}


def _deciding(code_entries: Sequence[tuple[str, Loc]], rule: type[Rule]) -> tuple[str, Loc] | None:
    """The entry whose code is the longest prefix of the rule's id or name (later wins ties)."""
    best, chosen = -1, None
    for code, loc in code_entries:
        n = prefix_length(code, rule.id, rule.name)
        if n >= 0 and n >= best:
            best, chosen = n, (code, loc)
    return chosen


class _Collector:
    def __init__(self, loaded: LoadedConfig, label: str) -> None:
        self.loaded = loaded
        self.label = label
        self.out: list[Relaxation] = []

    def add(self, loc: Loc, value: str, effect: str, rules: Sequence[str], what: str) -> None:
        line = self.loaded.line(loc)
        key = key_text(loc)
        message = f"{what} by {self.label}:{line} ({key}: {value})"
        self.out.append(Relaxation(key, value, effect, tuple(sorted(rules)), self.label, line, message))


def _rules_text(rules: Sequence[str], effect: str, where: str = "") -> str:
    return f"{plural(len(rules), 'rule')} {effect}{where}"


def _severities(c: _Collector, rules: Sequence[type[Rule]], entries: Sequence[tuple[str, str, Loc]], where: str) -> None:
    """`off` and downgrades, attributed to the entry that decides each rule's level."""
    codes = [(code, loc) for code, _, loc in entries]
    levels = {loc: level for _, level, loc in entries}
    decided: dict[Loc, list[str]] = {}
    for rule in rules:
        chosen = _deciding(codes, rule)
        if chosen is None:
            continue
        level = levels[chosen[1]]
        if level == "off" or _LEVEL_RANK[level] < _LEVEL_RANK[rule.severity.label]:
            decided.setdefault(chosen[1], []).append(rule.id)
    for _, level, loc in entries:
        affected = decided.get(loc)
        if affected:
            effect = "off" if level == "off" else f"downgraded to {level}"
            c.add(loc, level, "off" if level == "off" else "downgraded", affected, _rules_text(affected, effect, where))


def _selection(
    c: _Collector,
    rules: Sequence[type[Rule]],
    select: Sequence[tuple[str, Loc]] | None,
    select_loc: Loc,
    ignore: Sequence[tuple[str, Loc]],
    already_off: Container[str],
    where: str,
) -> None:
    """Rules a `select`/`ignore` pair leaves out, attributed to the `ignore` entry that decides,
    else to `select` (no entry of it matches)."""
    from policylint.rules.engine import Selection

    selection = Selection(select=tuple(code for code, _ in select or ()), ignore=tuple(code for code, _ in ignore))
    by_ignore: dict[Loc, list[str]] = {}
    unselected: list[str] = []
    for rule in rules:
        if rule.id in already_off or selection.enabled(rule):
            continue
        chosen = _deciding(ignore, rule)
        selected = Selection.best([code for code, _ in select or ()], rule) if select else 0
        if chosen is not None and (selected < 0 or len(chosen[0].strip()) >= selected):
            by_ignore.setdefault(chosen[1], []).append(rule.id)
        else:
            unselected.append(rule.id)
    for code, loc in ignore:
        if loc in by_ignore:
            c.add(loc, code, "ignored", by_ignore[loc], _rules_text(by_ignore[loc], "ignored", where))
    if unselected and select:
        value = ", ".join(code for code, _ in select)
        c.add(select_loc, value, "not selected", unselected, _rules_text(unselected, "not selected", where))


def relaxations(loaded: LoadedConfig, from_file: Container[str], label: str | None = None) -> list[Relaxation]:
    """The relaxations of `loaded`, for the keys `from_file` (those the command line did not
    override), named as `label` (default: the file's path)."""
    from policylint.input.ignore import DEFAULT_EXCLUDE
    from policylint.rules import REGISTRY

    config = loaded.config
    c = _Collector(loaded, label or loaded.path)
    rules = [r for r in REGISTRY if r.id not in _ENGINE_RULES]

    def listed(key: str, values: Sequence[str], base: Loc = ()) -> list[tuple[str, Loc]]:
        return [(value, (*base, key, i)) for i, value in enumerate(values)]

    select = listed("select", config.select) if "select" in from_file else []
    ignore = listed("ignore", config.ignore) if "ignore" in from_file else []
    _selection(c, rules, select, ("select",), ignore, (), "")
    from policylint.rules.engine import Selection

    global_selection = Selection(select=tuple(code for code, _ in select), ignore=tuple(code for code, _ in ignore))
    off_globally = {r.id for r in rules if not global_selection.enabled(r)}
    if "severity" in from_file:
        entries = [(code, str(level), ("severity", code)) for code, level in config.severity.items()]
        _severities(c, [r for r in rules if r.id not in off_globally], entries, "")
    if "per-file" in from_file:
        for pattern, settings in config.per_file.items():
            base: Loc = ("per-file", pattern)
            where = f" in files matching {pattern!r}"
            file_select = listed("select", settings.select, base) if settings.select is not None else select
            file_ignore = [*ignore, *listed("ignore", settings.ignore, base)]
            own = [entry for entry in file_ignore if entry[1][:2] == base]
            _selection(
                c, rules, file_select if settings.select is not None else None, (*base, "select"), own, off_globally, where
            )
            severity = [(code, str(level), (*base, "severity", code)) for code, level in settings.severity.items()]
            if severity:
                _severities(c, [r for r in rules if r.id not in off_globally], severity, where)
    if "external" in from_file:
        for value, loc in listed("external", config.external):
            c.add(loc, value, "trusted", (), f"references to {value} not checked")
    excluded: list[tuple[str, Loc]] = []
    if "exclude" in from_file:
        excluded += [(v, loc) for v, loc in listed("exclude", config.exclude) if v not in DEFAULT_EXCLUDE]
    if "extend-exclude" in from_file:
        excluded += listed("extend-exclude", config.extend_exclude)
    for value, loc in excluded:
        c.add(loc, value, "excluded", (), f"files matching {value} not linted")
    if "require-suppression-reason" in from_file and not config.require_suppression_reason:
        c.add(
            ("require-suppression-reason",), "false", "reason not required", ("PL903",), "suppressions without a reason allowed"
        )
    if "baseline" in from_file and config.baseline is not None:
        c.add(("baseline",), config.baseline, "baselined", (), f"findings recorded in {config.baseline} hidden")
    return sorted(c.out, key=lambda r: (r.line, r.key))
