"""The stages the pipeline builds after the index and the resolution, in this order.

Each stage reads only the stages before it. Rules and outputs declare the stages they read
(`Rule.reads`); the pipeline builds what the selected rules and the requested output need, and
nothing else, so `--select PL2` never runs the effective-policy simulation.
"""

from __future__ import annotations

import enum


class Stage(enum.Enum):
    # What the API server would refuse in each object, worked out per object as it is asked for:
    # policylint.k8s.admissions. The topology reads it (a policy it refuses never reaches its
    # controller), and so do the schema rules.
    ADMISSION = "admission"
    TOPOLOGY = "topology"  # the traffic hierarchy: policylint.semantics.topology
    SIMULATION = "simulation"  # effective policy per context: policylint.semantics.effective


# A stage needs every stage before it.
ORDER: tuple[Stage, ...] = (Stage.ADMISSION, Stage.TOPOLOGY, Stage.SIMULATION)


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
