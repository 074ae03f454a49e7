"""What `policylint graph` says about status, read from the verdicts the pipeline made, never
derived again here.

- A policy's target: the Accepted condition and the enforcement `explain POLICY` shows for it
  (`Simulation.accepted`, `Simulation.target_status`), written on the target's edge.
- A policy: the mix of its targets. One Accepted on one target and refused on another is neither
  Invalid nor Enforced, so its node says how many of its targets accept it (GEP-713 writes a
  status per target, not one per policy).
- The hierarchy's references that do not hold (docs/semantics.md#route-attachment): a route's
  parentRef no listener admits, with the admission check that failed (`ParentAttachment`,
  `Rejection`), a parent that is not there, a ListenerSet its Gateway does not take, and a
  backendRef its controller refuses (no ReferenceGrant, not found): the topology's verdicts.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING

from policylint.values import frozen
from policylint.vocabulary import Accepted, Attachment, Enforcement, ReferenceStatus

if TYPE_CHECKING:
    from policylint.k8s.objects import K8sObject
    from policylint.profiles.policy import Policy
    from policylint.semantics.effective.simulation import Simulation
    from policylint.semantics.resolution import TargetResolution
    from policylint.semantics.topology import Listener, ObjectRef, Topology

_CLASS_OF = {Enforcement.ENFORCED: "enforced", Enforcement.PARTIALLY_ENFORCED: "partial", Enforcement.OVERRIDDEN: "overridden"}


@frozen
class TargetState:
    """One target of a policy, as `explain POLICY` states it."""

    accepted: Accepted
    enforcement: Enforcement | None  # over the contexts through the target; None: not accepted, or no context
    css: str  # enforced | partial | overridden | inert | conflicted | invalid

    @property
    def text(self) -> str:
        """`explain`'s words: "Accepted, Enforced", "Invalid", "TargetNotFound"."""
        return f"{self.accepted.label}, {self.enforcement.label}" if self.enforcement is not None else self.accepted.label


def target_state(sim: Simulation, policy: Policy, res: TargetResolution) -> TargetState:
    accepted, _ = sim.accepted(policy, res)
    accepted = Accepted(accepted)
    if accepted is Accepted.ACCEPTED:
        status = sim.target_status(policy, res)
        enforcement = status.enforcement if status is not None else None
        # Accepted where no traffic passes (or the target is external): it reaches nothing.
        return TargetState(accepted, enforcement, _CLASS_OF.get(enforcement, "inert") if enforcement else "inert")
    return TargetState(accepted, None, "conflicted" if accepted is Accepted.CONFLICTED else "invalid")


@frozen
class PolicyState:
    css: str  # a target class, or "mixed": accepted on some targets and refused on others
    text: str


def policy_state(states: Sequence[TargetState]) -> PolicyState:
    """A policy's node from its targets' states."""
    if not states:
        return PolicyState("invalid", "no target")
    accepted = [s for s in states if s.accepted is Accepted.ACCEPTED]
    if len(accepted) == len(states):
        live = {s.enforcement for s in accepted if s.enforcement is not None}
        if not live:
            return PolicyState("inert", "reaches no traffic")
        # Enforced on one target and overridden on another takes effect in part: as a policy with
        # two facets in one context is partially enforced there (docs/effective-policy.md#status).
        enforcement = live.pop() if len(live) == 1 else Enforcement.PARTIALLY_ENFORCED
        return PolicyState(_CLASS_OF[enforcement], enforcement.label)
    if accepted:
        return PolicyState("mixed", f"{len(accepted)} of {len(states)} targets accepted")
    refusals = list(dict.fromkeys(s.accepted.label for s in states))
    css = "conflicted" if all(s.accepted is Accepted.CONFLICTED for s in states) else "invalid"
    return PolicyState(css, ", ".join(refusals))


# -- references of the hierarchy that do not hold ------------------------------------------------


@frozen
class BrokenParent:
    """A parentRef of a route that attaches it nowhere: drawn from the parent (or the listener
    that refused it) to the route."""

    route: K8sObject
    parent: K8sObject | None  # None: not in the input
    listener: Listener | None  # the listener whose admission check failed
    ref_label: tuple[str, str, str | None, str, str | None]  # group, kind, namespace, name, sectionName
    reason: str


def broken_parents(topology: Topology) -> Iterator[BrokenParent]:
    for route in sorted(topology.routes(), key=lambda r: r.key):
        for att in topology.parent_attachments(route):
            if att.attached:
                continue
            ref = att.ref
            label = (ref.group, ref.kind, ref.namespace, ref.name, ref.section_name)
            if att.undecided:
                # Neither attached nor refused: drawn from the parent with the reason, beside the
                # listeners that refuse it for certain.
                yield BrokenParent(route, att.parent, None, label, att.status.label)
            if att.rejections:
                # Each listener that refused the route, with the first of its checks that failed
                # (docs/semantics.md#listener-admission).
                for rejection in att.rejections:
                    yield BrokenParent(
                        route, att.parent, rejection.listener, label, f"{rejection.reason.label}: {rejection.check.label}"
                    )
            elif not att.undecided:
                yield BrokenParent(route, att.parent, None, label, att.status.label)


@frozen
class BrokenListenerSet:
    listener_set: K8sObject
    gateway: K8sObject | None
    reason: Attachment


def broken_listener_sets(topology: Topology) -> Iterator[BrokenListenerSet]:
    for att in sorted(topology.listener_sets.values(), key=lambda a: a.listener_set.key):
        if not att.attached and att.gateway is not None:
            yield BrokenListenerSet(att.listener_set, att.gateway, att.status)


# The backendRefs whose backend a controller sends no traffic to (the route's ResolvedRefs=False),
# which the simulation's hierarchy leaves out: drawn from the route (or rule) to the backend.
_REFUSED = (ReferenceStatus.REF_NOT_PERMITTED, ReferenceStatus.NOT_FOUND)
_BACKEND_PURPOSES = ("backend", "mirror")


def refused_backends(topology: Topology, route: K8sObject) -> Iterator[ObjectRef]:
    for ref in topology.refs_from(route):
        if ref.purpose in _BACKEND_PURPOSES and ref.status in _REFUSED:
            yield ref


def backend_reason(ref: ObjectRef) -> str:
    if ref.status == ReferenceStatus.REF_NOT_PERMITTED:
        return f"{ref.status.label}: no ReferenceGrant"  # Gateway API: a cross-namespace backendRef needs one
    return f"Backend{ref.status.label}"  # the route condition's reason, BackendNotFound
