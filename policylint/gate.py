"""What the gate trusted and what loosened it: the report section every output shows (README
"Security", the trust model).

A repository's configuration can turn rules off, downgrade them, leave files out or take
objects on trust, and its baseline hides findings. That is its right on a developer's machine,
as ruff's or ESLint's configuration is; it is never silent. `GateReport.relaxations` lists
every such setting with the file and line that made it, and every output states them (the
summary line on standard error, the JSON report's `gate`, SARIF run properties, the Markdown
summary). `GateReport.changes` lists what a change under review does to the configuration, the
baseline and the profiles and CRDs the configuration names (policylint.commands.trust_files),
against the base it is measured from; a change that loosens the gate fails the
run (exit 1, whatever `--fail-on`), so that a pull request cannot turn its own gate off.

This is a report section, not a rule: it judges the very settings that select, silence and
grade rules, so none of them may apply to it, and it is about no manifest.
"""

from __future__ import annotations

from typing import Any

from policylint.values import frozen

CONFIGURATION = "configuration"
BASELINE = "baseline"


@frozen
class Relaxation:
    """One setting of the configuration that turns checks off or down."""

    key: str  # as written in the file: `severity.PL`, `ignore[0]`, `per-file."*".ignore[0]`
    value: str  # what it says: `off`, `PL003`, `*`
    effect: str  # off, downgraded, ignored, not selected, trusted, excluded, ...
    rules: tuple[str, ...]  # the rule ids it turns off or down (empty: not about rules)
    file: str  # the configuration file, `REF:PATH` when read from a git ref
    line: int
    message: str  # "12 rules off by .policylint.yaml:3 (severity PL: off)"

    def as_dict(self) -> dict[str, Any]:
        return {
            "key": self.key,
            "value": self.value,
            "effect": self.effect,
            "rules": list(self.rules),
            "file": self.file,
            "line": self.line,
            "message": self.message,
        }


@frozen
class GateChange:
    """One thing a change does to the configuration or the baseline, against its base."""

    subject: str  # CONFIGURATION, BASELINE, or `profile`/`crd`: a file the base's configuration names
    loosens: bool
    file: str
    line: int
    message: str

    def as_dict(self) -> dict[str, Any]:
        return {"subject": self.subject, "loosens": self.loosens, "file": self.file, "line": self.line, "message": self.message}


@frozen
class GateReport:
    """Where the configuration and the baseline were read from, what they relax, and what the
    change under review does to them (`base`: what it is compared with; None: no comparison)."""

    configuration: str | None = None  # the file applied (`REF:PATH` from a git ref), None: none
    baseline: str | None = None
    relaxations: tuple[Relaxation, ...] = ()
    base: str | None = None
    changes: tuple[GateChange, ...] = ()

    @property
    def loosened(self) -> bool:
        return any(c.loosens for c in self.changes)

    def __bool__(self) -> bool:
        return bool(self.relaxations or self.changes or self.base is not None)

    def as_dict(self) -> dict[str, Any]:
        return {
            "configuration": self.configuration,
            "baseline": self.baseline,
            "relaxations": [r.as_dict() for r in self.relaxations],
            "base": self.base,
            "changes": [c.as_dict() for c in self.changes],
            "loosened": self.loosened,
        }

    def summary_lines(self) -> list[str]:
        """The lines the text summary adds (unescaped: the caller escapes them)."""
        lines = []
        if self.relaxations:
            lines.append("configuration: " + "; ".join(r.message for r in self.relaxations))
        if self.changes:
            verdict = "loosens the gate" if self.loosened else "does not loosen the gate"
            lines.append(f"gate: the change {verdict} (against {self.base}): " + "; ".join(c.message for c in self.changes))
        return lines
