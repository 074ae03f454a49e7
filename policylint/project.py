"""The project: what the pipeline built, in order, for rules, commands and reporters to read.

    index (objects, kinds, lookups)              policylint.k8s.index
      › resolution (policies, what they name)    policylint.semantics.resolution
        › admissions (the API server's verdicts) policylint.k8s.admissions
          › topology (the traffic hierarchy)     policylint.semantics.topology
            › simulation (effective policy)      policylint.semantics.effective

The index and the resolution are always there (the resolution is computed lazily, per policy);
the pipeline builds the admissions, the topology and the simulation only when a selected rule or
a requested output reads them (policylint.stages). Nothing here builds anything: reading a stage that was
not built raises `StageNotBuilt`, a bug in the reader's declared `reads`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import field
from typing import TYPE_CHECKING, Any, TypeVar

from policylint.stages import Stage, StageNotBuilt
from policylint.values import record

if TYPE_CHECKING:
    from policylint.input.verdictstore import VerdictStore
    from policylint.k8s.admissions import Admissions
    from policylint.k8s.index import ProjectIndex
    from policylint.semantics.effective.simulation import Simulation
    from policylint.semantics.effective.walks import KeptWalks
    from policylint.semantics.resolution import Resolution
    from policylint.semantics.topology import Topology
    from policylint.semantics.topology.kept import KeptTopology

T = TypeVar("T")
C = TypeVar("C", bound=Callable[..., Any])

# The lookups marked `object_local`.
_OBJECT_LOCAL: set[Callable[..., Any]] = set()


def object_local(compute: C) -> C:
    """Mark a lookup for `Project.derived` whose answer about an object depends on nothing but
    that object, its admission verdict and what is the same for every object of the run (settings,
    CRDs, the cluster): a per-object rule that reads no other lookup and no later stage for an
    object can have its findings on it kept between runs (policylint.incremental.rulecache)."""
    _OBJECT_LOCAL.add(compute)
    return compute


def is_object_local(compute: Callable[..., Any]) -> bool:
    return compute in _OBJECT_LOCAL


# The lookups marked `across_rules`.
_ACROSS_RULES: set[Callable[..., Any]] = set()


def across_rules(compute: C) -> C:
    """Mark a lookup for `Project.derived` that several rules over the whole project read: kept
    until the rules are done, where a whole rule's other lookups are freed as it ends
    (`forget_derived`)."""
    _ACROSS_RULES.add(compute)
    return compute


@record
class Project:
    index: ProjectIndex
    resolution: Resolution
    # The admission verdicts kept between runs (policylint.input.cache; None: no cache): what the
    # admission stage is built with, kept here from the reading of the files to the stage's build.
    kept_verdicts: VerdictStore | None = None
    # The simulation's walks of earlier runs of a long-lived process (a language server's
    # `Resident`), which the simulation plays back where they read what they read then.
    kept_walks: KeptWalks | None = None
    # What a long-lived process's last topology resolved, for this one's build to reuse where
    # what it read still holds (policylint.semantics.topology.kept; None: none).
    kept_topology: KeptTopology | None = None
    _admissions: Admissions | None = None
    _topology: Topology | None = None
    _simulation: Simulation | None = None
    _derived: dict[Callable[[Project], Any], Any] = field(default_factory=dict, repr=False)

    def attach(
        self, *, admissions: Admissions | None = None, topology: Topology | None = None, simulation: Simulation | None = None
    ) -> None:
        """Called by the pipeline as it builds each stage (policylint.pipeline.build_stages)."""
        if admissions is not None:
            self._admissions = admissions
        if topology is not None:
            self._topology = topology
        if simulation is not None:
            self._simulation = simulation

    def admissions(self) -> Admissions:
        """What the API server would refuse in each object (policylint.k8s.admissions), if it was built."""
        if self._admissions is None:
            raise StageNotBuilt(Stage.ADMISSION)
        return self._admissions

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

    def forget_derived(self, *, done: bool = True) -> None:
        """Drop the lookups `derived` built: the rules that read them are done (`done`), or one
        whole rule is, and those marked `across_rules` are kept for the next."""
        if done:
            self._derived.clear()
        else:
            self._derived = {c: v for c, v in self._derived.items() if c in _ACROSS_RULES}

    def has_stage(self, stage: Stage) -> bool:
        built = {Stage.ADMISSION: self._admissions, Stage.TOPOLOGY: self._topology, Stage.SIMULATION: self._simulation}
        return built[stage] is not None
