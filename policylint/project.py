"""The project: what the pipeline built, in order, for rules, commands and reporters to read.

    index (objects, kinds, lookups)            policylint.k8s.index
      › resolution (policies, what they name)  policylint.semantics.resolution
        › topology (the traffic hierarchy)     policylint.semantics.topology
          › simulation (effective policy)      policylint.semantics.effective

The index and the resolution are always there (the resolution is computed lazily, per policy);
the pipeline builds the topology and the simulation only when a selected rule or a requested
output reads them (policylint.stages). Nothing here builds anything: reading a stage that was
not built raises `StageNotBuilt`, a bug in the reader's declared `reads`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import field
from typing import TYPE_CHECKING, Any, TypeVar

from policylint.stages import Stage, StageNotBuilt
from policylint.values import record

if TYPE_CHECKING:
    from policylint.k8s.index import ProjectIndex
    from policylint.semantics.effective.simulation import Simulation
    from policylint.semantics.resolution import Resolution
    from policylint.semantics.topology import Topology

T = TypeVar("T")


@record
class Project:
    index: ProjectIndex
    resolution: Resolution
    _topology: Topology | None = None
    _simulation: Simulation | None = None
    _derived: dict[Callable[[Project], Any], Any] = field(default_factory=dict, repr=False)

    def attach(self, *, topology: Topology | None = None, simulation: Simulation | None = None) -> None:
        """Called by the pipeline as it builds each stage (policylint.pipeline.build_stages)."""
        if topology is not None:
            self._topology = topology
        if simulation is not None:
            self._simulation = simulation

    def topology(self) -> Topology:
        """The resolved traffic hierarchy (policylint.semantics.topology), if it was built."""
        if self._topology is None:
            raise StageNotBuilt(Stage.TOPOLOGY)
        return self._topology

    def simulation(self) -> Simulation:
        """Effective policy per context (policylint.semantics.effective), if it was built."""
        if self._simulation is None:
            raise StageNotBuilt(Stage.SIMULATION)
        return self._simulation

    def derived(self, compute: Callable[[Project], T]) -> T:
        """`compute(project)`, computed once per project and process: a lookup a rule builds over
        the whole project, which a per-object rule (`ObjectRule`, `PolicyRule`) reads for each of
        its objects, so that it is built once per process, not once per object or per share.
        `compute` must depend on nothing but the project (a module-level function or class)."""
        if compute not in self._derived:
            self._derived[compute] = compute(self)
        return self._derived[compute]  # type: ignore[no-any-return]

    def forget_derived(self) -> None:
        """Drop the lookups `derived` built: the rules that read them are done."""
        self._derived.clear()

    def has_stage(self, stage: Stage) -> bool:
        return (self._topology if stage is Stage.TOPOLOGY else self._simulation) is not None
