"""What a run's reporters and its command read of it (`Reported`): a `LintResult`, or a run's
result kept in the cache and read back without analysing (policylint.incremental.results).

Reporters only render what a run worked out (policylint.reporters), so they read the findings,
the report's sections and two counts, never the project: that is what lets a run whose inputs are
all an earlier run's give that run's result, under any `--format` whose reporter reads no more
(JUnit lists every object, SARIF each finding's attachment chain: runs that write them analyse).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from policylint.attachment_chain import Chain
    from policylint.findings import Finding
    from policylint.gate import GateReport
    from policylint.input.sources import Skipped


class Reported(Protocol):
    """A run's result as the command reports it: what `policylint.pipeline.LintResult` holds for
    its reporters (see there for each field)."""

    findings: list[Finding]
    suppressed: list[Finding]
    files: list[str]
    context_files: list[str]
    notes: list[str]
    skipped: list[Skipped]
    policy_reports: list[dict[str, Any]] | None
    chains: dict[str, tuple[Chain, ...]]
    internal_error: bool
    show_suppressed: bool
    baseline_written: tuple[str, int] | None
    baseline_migrated: int
    gate: GateReport | None
    introduced: frozenset[str] | None
    base: str | None
    change_files: tuple[int, int] | None

    def object_count(self) -> int:
        """The objects the run read (the report's summary)."""
        ...

    def policy_count(self) -> int:
        """The policies among them (the text summary)."""
        ...

    def introduced_by_change(self, finding: Finding) -> bool | None: ...

    def change_counts(self) -> tuple[int, int] | None: ...


def introduced_by_change(result: Reported, finding: Finding) -> bool | None:
    """True when the measured change introduced `finding`, False when the base has it too;
    None when no change was measured, or for a suppressed finding (it gates nothing)."""
    if result.introduced is None or finding.suppression is not None:
        return None
    return finding.fingerprint in result.introduced


def change_counts(result: Reported) -> tuple[int, int] | None:
    """(introduced, pre-existing) among the findings reported; None when no change was measured."""
    if result.introduced is None:
        return None
    new = sum(1 for f in result.findings if f.fingerprint in result.introduced)
    return new, len(result.findings) - new
