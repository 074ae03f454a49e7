"""What the simulation answers about one policy on one target beyond its tallies
(policylint.semantics.effective.simulation): the Accepted condition a controller writes, and what
is decided when the policies attach rather than per context (a conflict, or the listeners more
specific policies take, on a target no traffic passes yet; the contexts the policy's own more
specific attachment takes). `Simulation`'s methods of the same names call these."""

from __future__ import annotations

from typing import TYPE_CHECKING

from policylint.semantics.effective.facets import Facet, NodeKey
from policylint.semantics.effective.fold import fold, order_stack
from policylint.vocabulary import Accepted, Enforcement

if TYPE_CHECKING:
    from policylint.profiles.policy import Policy
    from policylint.semantics.effective.simulation import Simulation
    from policylint.semantics.resolution import TargetResolution


def accepted(sim: Simulation, policy: Policy, res: TargetResolution) -> tuple[Accepted, str]:
    """The Accepted condition a controller writes for the policy on this target, with its
    message: the resolution's, Invalid when the controller rejects the spec, or Conflicted
    when the policy loses every context through the target to a conflict."""
    if not res.accepted:
        return res.status, res.message
    errors = sim.topology.policy_errors(policy.obj) or tuple(e.message for e in sim.topology.target_errors(policy, res))
    if errors:
        return Accepted.INVALID, "; ".join(errors)
    status = sim.target_status(policy, res)
    if status is not None and status.contexts and status.conflicted == status.contexts:
        return Accepted.CONFLICTED, res.message
    if (status is None or not status.contexts) and sim.conflict_at_target(policy, res) is not None:
        return Accepted.CONFLICTED, res.message
    return res.status, res.message


def conflict_at_target(sim: Simulation, policy: Policy, res: TargetResolution) -> tuple[Facet, str] | None:
    """For a target no traffic passes (a ListenerSet with no route yet, say): the policy that
    wins it and why, when this policy loses it to a conflict. A controller decides conflicts
    when the policies attach, not per request path (Envoy Gateway: "another
    EnvoyExtensionPolicy has already attached to it", its translator test
    envoyextensionpolicy-listenerset-invalid): the same fold as a context holding that target
    alone."""
    node = sim.node_of(res)
    if node is None:
        return None
    facets = sim._by_kind.get(policy.profile.gk, {}).get(node, [])
    if len({f.policy.obj for f in facets}) < 2:
        return None
    stack, _ = order_stack(facets)
    result = fold(stack, policy.profile)
    mine = [f for f in facets if f.policy is policy]
    if not mine or any(result.status.get(f) != Enforcement.CONFLICTED for f in mine):
        return None
    return result.conflicts.get(mine[0])


def override_at_target(sim: Simulation, policy: Policy, res: TargetResolution) -> tuple[int, int, frozenset[str]] | None:
    """For a Gateway or ListenerSet target no traffic passes (no route yet): of its listeners,
    how many there are, how many more specific policies of the same kind take, and which
    policies take them. A controller decides precedence when the policies attach, per
    listener (Envoy Gateway: "This policy is being overridden by other envoyExtensionPolicies
    for these listenerset listeners", its translator test envoyextensionpolicy-listenerset-invalid):
    each listener folds the policies on the path down to it, as a context holding it alone."""
    node = sim.node_of(res)
    if node is None or node[0] not in ("gateway", "listenerset"):
        return None
    status = sim.status.get((policy.obj, node))
    if status is not None and status.contexts:
        return None
    attached = sim._by_kind.get(policy.profile.gk, {})
    mine = [f for f in attached.get(node, []) if f.policy is policy]
    if not mine:
        return None
    paths: list[list[NodeKey]] = []
    for child in sim.children(node):
        if child[0] == "listener":
            paths.append([node, child])
        elif child[0] == "listenerset":
            paths.extend([node, child, grandchild] for grandchild in sim.children(child) if grandchild[0] == "listener")
    taken = 0
    winners: set[str] = set()
    for path in paths:
        facets = [f for n in path for f in attached.get(n, [])]
        if len({f.policy.obj for f in facets}) < 2:
            continue
        stack, _ = order_stack(facets)
        result = fold(stack, policy.profile)
        states = [result.status.get(f) for f in mine]
        if any(state in (Enforcement.OVERRIDDEN, Enforcement.PARTIALLY_ENFORCED) for state in states):
            taken += 1
            for f in mine:
                winners |= result.beaten_by.get(f, set())
    return len(paths), taken, frozenset(winners)


def displaced_by_itself(sim: Simulation, policy: Policy, res: TargetResolution) -> int:
    """Contexts below this target that the policy's own attachment to a more specific target
    takes (one policy on a Gateway and on a ListenerSet or listener of it): its values are in
    force there, but through the other target, which Envoy Gateway reports as Overridden at
    the broader ancestor (its translator test clienttrafficpolicy-listenerset-mixed-targetrefs)."""
    node = sim.node_of(res)
    if node is None or node[0] not in ("gateway", "listenerset"):
        return 0
    # Only a listener or a ListenerSet of the policy's own can be below: a policy with none (most
    # have one target) displaces nothing, and the listeners below need not be worked out.
    others = [other for target in sim.resolution.targets(policy) if (other := sim.node_of(target)) is not None]
    if not any(other[0] in _SECTIONS_BELOW for other in others):
        return 0
    below: set[NodeKey] = set()
    frontier = [node]
    while frontier:
        # A listener's children are routes: only a Gateway's or a ListenerSet's are looked at.
        for child in sim.children(frontier.pop()):
            if child[0] in _SECTIONS_BELOW and child not in below:
                below.add(child)
                if child[0] == "listenerset":
                    frontier.append(child)
    total = 0
    for other in others:
        if other in below:
            status = sim.status.get((policy.obj, other))
            total += status.contexts if status is not None else 0
    return total


_SECTIONS_BELOW = ("listenerset", "listener")
