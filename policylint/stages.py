"""The semantic stages the pipeline builds after the index, in this order.

Each stage reads only the stages before it. Rules and outputs declare the stages they read
(`Rule.reads`); the pipeline builds what the selected rules and the requested output need, and
nothing else, so `--select PL2` never runs the effective-policy simulation.
"""

from __future__ import annotations

import enum


class Stage(enum.Enum):
    TOPOLOGY = "topology"  # the traffic hierarchy: policylint.semantics.topology
    SIMULATION = "simulation"  # effective policy per context: policylint.semantics.effective


# A stage needs every stage before it.
ORDER: tuple[Stage, ...] = (Stage.TOPOLOGY, Stage.SIMULATION)


def closure(stages: frozenset[Stage] | set[Stage]) -> tuple[Stage, ...]:
    """`stages` and every stage they need, in build order."""
    if not stages:
        return ()
    last = max(ORDER.index(s) for s in stages)
    return ORDER[: last + 1]


class StageNotBuilt(RuntimeError):
    """A rule or output read a stage it did not declare (a bug in policylint, reported as PL000)."""

    def __init__(self, stage: Stage) -> None:
        super().__init__(f"the {stage.value} stage was not built: declare it in the reader's `reads`")
        self.stage = stage
