"""What the simulation's walk reads besides its path, and how a node hands it to its children
(policylint.semantics.effective.simulation): the facets of each kind by node, each kind's
effective level, the nodes some facet is attached to; a child's stacks, whether anything can end
below a rule, a rule's ports by backend, a section node's whole object and the nodes' order
(functions of the plan and the nodes alone); and what the walk tallies per stack group and per
policy."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import field

from policylint.k8s.objects import ObjectKey
from policylint.profiles.registry import PolicyProfile
from policylint.semantics.effective.facets import LEVELS, RANK, Affects, Facet, FoldResult, NodeKey, OrderSensitivity
from policylint.semantics.effective.folds import States
from policylint.values import record

_ROUTE_RANK, _RULE_RANK, _BACKEND_RANK, _PORT_RANK = RANK["route"], RANK["rule"], RANK["backend"], RANK["port"]
_BACKEND_LEVELS = ("backend", "port")


@record(slots=True)
class _Reach:
    """What one policy reaches, tallied context by context while the walk runs: every node of
    every path where it contributes, and the last nodes of those paths, where its backends are."""

    level: int  # the rank its kind's contexts end at
    contexts: int = 0  # added per stack group by `_finalize`: the group's count
    nodes: set[NodeKey] = field(default_factory=set)
    # The contexts that end at a backend or a port. The others end at their node of rank `level`,
    # which `nodes` holds: the only one of that rank on the path.
    lasts: set[NodeKey] = field(default_factory=set)


def count_reach(affects: Affects, reach: _Reach, below: Callable[[NodeKey], frozenset[NodeKey]]) -> None:
    """A policy's blast radius from the nodes its contexts went through; `below`: the backends
    below a node (`Simulation.backends_below`)."""
    affects.contexts = reach.contexts
    nodes = reach.nodes  # distinct nodes: distinct rules, listeners and Gateways
    # Counted by level over one list of the nodes' levels, in C: a Gateway's policy passes
    # every node below the Gateway, and a test per node and level was most of this.
    levels = [node[0] for node in nodes]
    affects.rules += levels.count("rule")
    affects.listeners += levels.count("listener")
    affects.gateways += levels.count("gateway")
    affects.routes = len({node[1] for node in nodes if node[0] == "rule" or node[0] == "route"})
    ended = LEVELS[reach.level]
    if ended not in _BACKEND_LEVELS:
        # The contexts that ended at a node of the kind's level: the only one of that rank on
        # their path, so every such node is one.
        affects.backends.update(*[below(node) for node in nodes if node[0] == ended])
    if reach.lasts:
        affects.backends.update(*[below(last) for last in reach.lasts])


@record(slots=True)
class _StackGroup:
    """Every context that shares one policy stack: folded once, tallied per context."""

    profile: PolicyProfile
    stack: tuple[Facet, ...]
    result: FoldResult
    sensitive: list[OrderSensitivity]
    states: States  # each (policy, target) of the stack with its status (`folds.Folded`)
    # The reach of each policy that contributes (Enforced or PartiallyEnforced) to these contexts.
    contributors: tuple[_Reach, ...]
    count: int = 0
    examples: list[tuple[NodeKey, ...]] = field(default_factory=list)
    gateways: set[ObjectKey] | None = field(default_factory=set)  # None once tallied (`_finalize`)


@record(slots=True)
class _Plan:
    """What a walk reads besides its path: the facets of each kind by node, each kind's effective
    level, and every node some facet of those kinds is attached to (`hooked`)."""

    kinds: Mapping[tuple[str, str], Mapping[NodeKey, list[Facet]]]
    targets: Mapping[tuple[str, str], int]
    hooked: AbstractSet[NodeKey]
    deepest: int = field(init=False)
    # The kinds whose contexts end at a backend or a port: the only ones a rule's children carry on.
    to_backends: tuple[tuple[str, str], ...] = field(init=False)

    def __post_init__(self) -> None:
        self.deepest = max(self.targets.values())
        self.to_backends = tuple(gk for gk, level in self.targets.items() if level >= _BACKEND_RANK)


def _child_stacks(
    stacks: Mapping[tuple[str, str], tuple[Facet, ...]], child: NodeKey, child_rank: int, plan: _Plan, attached: bool
) -> dict[tuple[str, str], tuple[Facet, ...]]:
    """A child's stacks: its parent's less the kinds whose level is above it, with the facets
    attached to it."""
    child_stacks: dict[tuple[str, str], tuple[Facet, ...]] = {}
    targets, kinds = plan.targets, plan.kinds
    for gk, stack in stacks.items():
        if child_rank > targets[gk]:
            continue  # below the kind's effective level: no context of it goes on
        extra = kinds[gk].get(child) if attached else None
        child_stacks[gk] = stack + tuple(extra) if extra else stack
    return child_stacks


def _nothing_below_rule(
    children: Sequence[NodeKey], stacks: Mapping[tuple[str, str], tuple[Facet, ...]], plan: _Plan, visited: set[NodeKey]
) -> bool:
    """Whether no context ends below a rule, its children (its backends and their ports) then
    reached: no facet along the path for a kind that reaches a backend, and none on them. Most
    rules: `Simulation._walk`'s loop would go through each backend to skip it."""
    if not plan.hooked.isdisjoint(children) or any(stacks.get(gk) for gk in plan.to_backends):
        return False
    if plan.deepest >= _BACKEND_RANK:
        visited.update(children)
    return True


def _ports_by_backend(children: Sequence[NodeKey]) -> dict[ObjectKey, list[NodeKey]]:
    """A rule's Service ports by the backend they refine, in the rule's order: one pass over its
    children rather than one per backend."""
    ports: dict[ObjectKey, list[NodeKey]] = {}
    for child in children:
        if child[0] == "port":
            ports.setdefault(child[1], []).append(child)
    return ports


def _object_node(node: NodeKey) -> NodeKey:
    """The whole-object node a section node belongs to."""
    level, key, _ = node
    if level == "rule":
        return ("route", key, None)
    if level == "port":
        return ("backend", key, None)
    if level == "listener":
        return ("gateway" if key.kind == "Gateway" else "listenerset", key, None)
    return node


def _node_sort(node: NodeKey) -> tuple[int, ObjectKey, str]:
    return (RANK[node[0]], node[1], str(node[2]))
