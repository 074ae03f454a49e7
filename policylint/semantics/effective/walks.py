"""What the simulation's walk below one Gateway found, kept between the runs of one process.

A language server analyses the part of the workspace an edit reaches, and the part is mostly
Gateways the edit did not touch (docs/performance.md#the-language-server): walking each of their
contexts again, and stacking each context's policies, was most of the simulation of an update.
The walk below a root prefix ((GatewayClass ›) (Namespace ›) Gateway) reads nothing but

* the children the hierarchy gives each node it goes through (the topology's listeners, the
  routes it attached to each listener, their rules and backend references), and
* which policies of each kind are attached to each of those nodes, in attachment order (the
  answer to "which policies target X", which changes when a policy is added in another file),
* each kind's effective level (which decides where contexts end).

`reads` gathers exactly that, node by node in the order the walk would meet them, as keys (object
keys, sections, the policies' keys and facet positions), never object identities: so a later
run's reads compare equal exactly when its walk below the root would meet the same nodes with the
same stacks. What the walk found (`Walked`) is kept the same way, each context's stack as the
positions of its facets at their nodes, and played back onto the new run's facets
(`Simulation._replay`): per distinct stack, its count, first paths, the nodes and last nodes its
contexts went through, and the order in which the distinct stacks first reached each effective
target.

Working `reads` out again is what checking a kept walk cost most (the children of every node: each
listener's routes, each Gateway's listeners). The topology of the same process hands its
unchanged results on as the same objects (policylint.semantics.topology.kept), and the simulation
works a node's children out of those alone, so a walk also keeps what it worked them out from
(`sources`: the Gateway and its ListenerSets, their lists of listeners, ListenerSets and attached
routes, which listeners are Conflicted) and the nodes of each route it went into
(policylint.semantics.effective.routes, kept by the same rule). The next run compares those by
identity and the facets' keys of every node read (policy attachment is the simulation's own
input), and works `reads` out, to compare them as keys, only where one differs: an edited file's
objects, a route whose references were resolved again (a delegation, a host registry: never
kept), a list the topology gathered anew. The same objects give the same children, so the two
checks agree wherever the first one passes. A walk found unchanged so also hands the next run the
backends below its nodes that the policies' blast radii asked for (`below`), which counting them
at the end of a run worked out again through every node's children: the same children all the
way down, where the walk goes down to routes, whose nodes it compares (`covers_below`); a walk
that stops above them, or whose reads were compared as keys, has its backends worked out again. The folds are kept beside the walks, by the identity of the facets they fold
(policylint.semantics.effective.folds): a fold result holds the run's own facets, which hold its
policies, and rules compare those by identity, so a fold is reused only where the run's policies
are the instances the last run had.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import field
from typing import TYPE_CHECKING

from policylint.k8s.objects import ObjectKey
from policylint.semantics.effective.facets import RANK, Facet, NodeKey
from policylint.semantics.effective.folds import KeptFolds
from policylint.semantics.effective.routes import KeptRouteNodes, RouteNodes
from policylint.values import frozen, record
from policylint.vocabulary import Role

if TYPE_CHECKING:
    from policylint.k8s.objects import K8sObject
    from policylint.semantics.topology import Topology

# A kind of policy, as the simulation keys it: (group, kind).
Kind = tuple[str, str]
# A facet, as a position in the list of the facets of its kind attached to its node.
FacetAt = tuple[NodeKey, int]
# Per kind, the keys of the facets attached to a node: each facet's policy, position and role.
FacetKeys = tuple[tuple[Kind, tuple[tuple[ObjectKey, int, Role], ...]], ...]
# What one node reads: the node, its children, and its facets' keys.
NodeRead = tuple[NodeKey, tuple[NodeKey, ...], FacetKeys]

# Roots kept at most; past it the table starts again (a workspace has fewer Gateways than this).
MAX_ROOTS = 20_000


@record(slots=True)
class Tally:
    """The contexts below one root that share one policy stack."""

    kind: Kind
    stack: tuple[FacetAt, ...]
    count: int = 0
    examples: list[tuple[NodeKey, ...]] = field(default_factory=list)  # the first three paths
    nodes: set[NodeKey] = field(default_factory=set)  # every node of every path
    lasts: set[NodeKey] = field(default_factory=set)  # the last nodes of the paths that end at a backend or a port


@frozen(eq=False)
class Walked:
    """What the walk below one root found, with what it read (`reads`)."""

    reads: tuple[NodeRead, ...]
    levels: tuple[tuple[Kind, int], ...]
    tallies: tuple[Tally, ...]  # in the order their stacks first appeared
    # (tally, last node, path): each stack (by its tally's position) the first time it reached
    # an effective target, in walk order (the simulation keeps the distinct fold results
    # reaching each target).
    arrivals: tuple[tuple[int, NodeKey, tuple[NodeKey, ...]], ...]
    visited: frozenset[NodeKey]
    # What the children of the nodes below the root were worked out from, as the objects the
    # topology handed on (`sources`), and the nodes of each route the walk went into: the
    # next run compares them by identity before it works `reads` out again (`unchanged`).
    sources: tuple[object, ...] = ()
    routes: tuple[RouteNodes, ...] = ()
    # The nodes of `reads` and the keys of their facets (None: none), apart, so that the next
    # run asks each node's keys in one `map` (`same_facets`).
    nodes: tuple[NodeKey, ...] = ()
    keys: tuple[FacetKeys | None, ...] = ()
    # The backends below each node of `visited` that the policies' blast radii asked for
    # (`Simulation.backends_below`), filled by each run that kept the walk, taken by the next run
    # that finds it unchanged by identity, where they are the same (`covers_below`).
    below: dict[NodeKey, frozenset[NodeKey]] = field(default_factory=dict)


class KeptWalks:
    """The walks of the roots of earlier runs, by root prefix. A run replaces the entries of the
    roots it walked; it drops none of the others, whose Gateways another edit's part holds.
    `folds`: the facets and folds of the last run, which the next takes where its policies are
    the same instances (policylint.semantics.effective.folds); `routes`: each route's nodes,
    taken where the route and its references are (policylint.semantics.effective.routes)."""

    def __init__(self) -> None:
        self._walks: dict[tuple[NodeKey, ...], Walked] = {}
        self.folds = KeptFolds()
        self.routes = KeptRouteNodes()

    def __len__(self) -> int:
        return len(self._walks)

    def get(self, prefix: tuple[NodeKey, ...]) -> Walked | None:
        return self._walks.get(prefix)

    def put(self, prefix: tuple[NodeKey, ...], walked: Walked) -> None:
        if len(self._walks) >= MAX_ROOTS and prefix not in self._walks:
            self._walks.clear()
        self._walks[prefix] = walked


def attached_keys(kinds: Mapping[Kind, Mapping[NodeKey, list[Facet]]]) -> dict[NodeKey, FacetKeys]:
    """Per node, the keys of the facets of each kind attached to it: what `reads` asks of every
    node, worked out once per run for the few nodes that have any."""
    found: dict[NodeKey, list[tuple[Kind, tuple[tuple[ObjectKey, int, Role], ...]]]] = {}
    for gk, attached in kinds.items():
        for node, facets in attached.items():
            if facets:
                found.setdefault(node, []).append((gk, tuple((f.policy.key, f.order, f.role) for f in facets)))
    return {node: tuple(keys) for node, keys in found.items()}


def reads(
    prefix: tuple[NodeKey, ...],
    children: Callable[[NodeKey], list[NodeKey]],
    attached: Mapping[NodeKey, FacetKeys],
    deepest: int,
) -> tuple[NodeRead, ...]:
    """What a walk from `prefix` reads: the prefix's nodes and every node below its last one the
    walk can reach (a rank at most `deepest`; a Service port whenever its rule names it), each
    with its children and the keys of its facets (`attached_keys`). More than the walk itself
    reads is harmless (a miss, never a wrong answer)."""
    out: list[NodeRead] = [(node, (), attached.get(node, ())) for node in prefix[:-1]]
    seen: set[NodeKey] = set(prefix)
    frontier = [prefix[-1]]
    while frontier:
        node = frontier.pop()
        below = children(node)
        out.append((node, tuple(below), attached.get(node, ())))
        for child in reversed(below):
            if child not in seen and (child[0] == "port" or RANK[child[0]] <= deepest):
                seen.add(child)
                frontier.append(child)
    return tuple(out)


def sources(topology: Topology, gateway: K8sObject | None, obj: Callable[[ObjectKey], K8sObject | None]) -> tuple[object, ...]:
    """What the children of a Gateway, of its ListenerSets and of their listeners are worked out
    from (`Simulation._compute_children`), as objects: the Gateway and each ListenerSet as the
    simulation looks them up (`obj`), the lists of their listeners, ListenerSets and attached
    routes, and whether each listener is free of conflicts. The topology of a long-lived process
    hands each list on as the same object while it holds the same entries
    (policylint.semantics.topology.kept), so the same sources by identity give the same children
    at every node down to the routes. A list the topology has none for is a new empty list per
    call, hence `()` here."""
    out: list[object] = [gateway]
    if gateway is None:
        return tuple(out)
    sets = topology.listener_sets_of(gateway)
    out.append(sets or ())
    for owner in (gateway, *(obj(ls.key) for ls in sets)):
        out.append(owner)
        if owner is None:
            continue
        listeners = topology.listeners(owner)
        out.append(listeners or ())
        out.append(topology.routes_of(owner) or ())
        # A Conflicted listener has no children (`_accepted_listeners`); which it is, is the
        # topology's answer of this build (the kept `Conflicts` are compared by their owners').
        out.extend(topology.listener_conflict(lst) is None for lst in listeners)
    return tuple(out)


def same_sources(before: tuple[object, ...], now: tuple[object, ...]) -> bool:
    """Whether two `sources` are the same objects, in the same order."""
    return len(before) == len(now) and all(a is b for a, b in zip(before, now, strict=True))


def same_facets(walked: Walked, attached: Mapping[NodeKey, FacetKeys]) -> bool:
    """Whether every node the walk read has the facets it had: which policies target a node is
    the simulation's own input (a policy added in another file changes it), never the topology's."""
    return tuple(map(attached.get, walked.nodes)) == walked.keys


def unchanged(
    walked: Walked,
    found: tuple[object, ...],
    attached: Mapping[NodeKey, FacetKeys],
    route_nodes: Callable[[K8sObject], RouteNodes],
    objects: dict[ObjectKey, K8sObject],
) -> bool:
    """Whether a kept walk reads what it read, told by identity: the same `sources` (`found`),
    the same nodes of each route it went into (`route_nodes`, the run's), and the same facets
    on every node it read."""
    if not same_sources(walked.sources, found):
        return False
    # The routes are the ones attached before (their parents' lists are the same): as the
    # listener's step of the walk would, each is made the object its key stands for (`objects`)
    # before its nodes are asked.
    for nodes in walked.routes:
        route = nodes.route
        objects[route.key] = route
        if route_nodes(route) is not nodes:
            return False
    return same_facets(walked, attached)


def renewed(walked: Walked, found: tuple[object, ...], routes: tuple[RouteNodes, ...]) -> Walked:
    """A walk whose reads compared equal, kept with this run's sources and routes' nodes; the
    backends below its nodes are worked out again (the reads stop at the effective levels)."""
    return dataclasses.replace(walked, sources=found, routes=routes, below={})


def below_of(walked: Walked) -> Mapping[NodeKey, frozenset[NodeKey]]:
    """The backends below the nodes of a walk found unchanged by identity, where they are the
    last run's (`covers_below`)."""
    return walked.below if covers_below(walked) else {}


def keep_below(walks: list[Walked], below: Mapping[NodeKey, frozenset[NodeKey]]) -> None:
    """Keep with each walk a run kept (`walks`, emptied) the backends below its visited nodes that
    the run worked out (`below`), for the next run that finds it unchanged (`below_of`)."""
    for walked in walks:
        if not covers_below(walked):
            continue
        kept = walked.below
        for node in walked.visited:
            if node not in kept:
                found = below.get(node)
                if found is not None:
                    kept[node] = found
    walks.clear()


def covers_below(walked: Walked) -> bool:
    """Whether what `unchanged` compares decides the backends below every node the walk visited:
    where the walk goes down to routes, the nodes of every route below a listener are compared
    (`routes`); where it stops above them, the routes' nodes are not, and the backends below a
    listener are theirs."""
    return max((level for _, level in walked.levels), default=0) >= RANK["route"]


def routes_into(visited: AbstractSet[NodeKey], nodes_of: Mapping[ObjectKey, RouteNodes]) -> tuple[RouteNodes, ...]:
    """The nodes of each route a walk went into (`nodes_of`: the run's, worked out as it went),
    in key order."""
    keys = sorted(node[1] for node in visited if node[0] == "route")
    return tuple(nodes_of[key] for key in keys if key in nodes_of)


class Recorder:
    """Collects the contexts a walk below one root emits, as `Walked` keeps them."""

    def __init__(self, kinds: Mapping[Kind, Mapping[NodeKey, list[Facet]]], backend_levels: Sequence[str]) -> None:
        self._kinds = kinds
        self._backend_levels = backend_levels
        self._tallies: dict[tuple[Kind, tuple[Facet, ...]], tuple[int, Tally]] = {}
        self._arrived: set[tuple[int, NodeKey]] = set()
        self._arrivals: list[tuple[int, NodeKey, tuple[NodeKey, ...]]] = []

    def add(self, gk: Kind, path: tuple[NodeKey, ...], raw_stack: tuple[Facet, ...]) -> None:
        found = self._tallies.get((gk, raw_stack))
        if found is None:
            found = self._tallies[(gk, raw_stack)] = (
                len(self._tallies),
                Tally(gk, self._positions(gk, raw_stack)),
            )
        n, tally = found
        tally.count += 1
        if len(tally.examples) < 3:
            tally.examples.append(path)
        tally.nodes.update(path)
        last = path[-1]
        if last[0] in self._backend_levels:
            tally.lasts.add(last)
        if (n, last) not in self._arrived:
            self._arrived.add((n, last))
            self._arrivals.append((n, last, path))

    def _positions(self, gk: Kind, raw_stack: tuple[Facet, ...]) -> tuple[FacetAt, ...]:
        attached = self._kinds[gk]
        out: list[FacetAt] = []
        for facet in raw_stack:
            at = attached[facet.node]
            # By identity: two facets of one policy at one node (a target named twice) are two.
            out.append((facet.node, next(i for i, f in enumerate(at) if f is facet)))
        return tuple(out)

    def walked(
        self,
        node_reads: tuple[NodeRead, ...],
        levels: tuple[tuple[Kind, int], ...],
        visited: frozenset[NodeKey],
        found: tuple[tuple[object, ...], tuple[RouteNodes, ...]] = ((), ()),
    ) -> Walked:
        """`found`: the walk's `sources` and the nodes of the routes it went into."""
        tallies = tuple(t for _, t in self._tallies.values())
        nodes = tuple(node for node, _, _ in node_reads)
        # `attached_keys` holds a node only when it has facets: no keys there is None.
        keys = tuple(keys or None for _, _, keys in node_reads)
        return Walked(node_reads, levels, tallies, tuple(self._arrivals), visited, *found, nodes, keys)


def stack_of(kinds: Mapping[Kind, Mapping[NodeKey, list[Facet]]], gk: Kind, stack: tuple[FacetAt, ...]) -> tuple[Facet, ...]:
    """The run's facets at the positions a kept stack names (the reads compared equal, so each
    position holds the facet of the same policy it held)."""
    attached = kinds[gk]
    return tuple(attached[node][i] for node, i in stack)
