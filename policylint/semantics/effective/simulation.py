"""Effective policy simulation (GEP-713 "Effective metaresources"; docs/effective-policy.md).

For each policy kind, a *context* is a path through the hierarchy

    GatewayClass › (Namespace) › Gateway › (ListenerSet) › listener › Route › rule › backend › (port)

from a root down to the kind's effective target level (its profile's
`effectiveTarget`). In each context the policies of that kind attached to any
node of the path are stacked from least to most specific and folded pairwise
(GEP-713 "Abstract process for calculating Effective metaresources"): the
*established* policy (attached higher; at the same level the older
`creationTimestamp`, then `{namespace}/{name}`) dictates the merge strategy. A `sectionName` target is a node below its object
(GEP-2648: the section policy applies whole to that section, the whole-object
policy to the other sections). Policies of different kinds never interact.

Contexts are enumerated along the fixed hierarchy with each node's children
computed once (a route's rules and backends are shared by every listener it is
attached to), and identical policy stacks are folded once: never an
all-simple-paths search. A long-lived process (a language server) keeps what the walk below each
Gateway found, with what it read, and plays it back in its next run where the reads are the same
(policylint.semantics.effective.walks).

Decisions where the sources leave room (documented in docs/effective-policy.md):

* Values an override puts in force are locked for the rest of the fold (an
  atomic override locks everything): overrides "enforce policy from the top
  down" (the original Policy Attachment page, "Hierarchy"), so nothing more
  specific undoes them, while the other values still follow the defaults rule.
* Kinds in that page's policy-attachment style (`default` and `override` in one
  object) are reduced with its precedence list "A override > B override >
  C override > C default > B default > A default", field by field, oldest first
  at one level.
* A GEP-713 style policy that declares two strategies (an error, PL107) still
  takes part: its override facet first, then its defaults.
* Strategy None between different levels: the more specific policy wins
  (section beats whole object); on the same target the oldest wins and the
  others are Conflicted.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterator, Mapping, Sequence
from collections.abc import Set as AbstractSet
from typing import TYPE_CHECKING

from policylint.identity import IdentityMap
from policylint.k8s.fieldtypes import GATEWAY_GROUP
from policylint.k8s.objects import K8sObject, ObjectKey
from policylint.profiles.registry import PolicyProfile
from policylint.semantics.effective import queries
from policylint.semantics.effective.facets import (
    _CLAIMED,
    _ROUTE_KINDS,
    RANK,
    Affects,
    Context,
    Facet,
    FoldResult,
    NodeKey,
    OrderSensitivity,
    TargetStatus,
    node_label,
)
from policylint.semantics.effective.fold import _why
from policylint.semantics.effective.folds import KeptFolds
from policylint.semantics.effective.owners import OwnerListeners, owner_listeners
from policylint.semantics.effective.routes import KeptRouteNodes, RouteNodes
from policylint.semantics.effective.states import count_state, grow
from policylint.semantics.effective.walkplan import (
    _BACKEND_LEVELS,
    _BACKEND_RANK,
    _PORT_RANK,
    _ROUTE_RANK,
    _RULE_RANK,
    _child_stacks,
    _node_sort,
    _nothing_below_rule,
    _object_node,
    _Plan,
    _ports_by_backend,
    _Reach,
    _StackGroup,
    count_reach,
)
from policylint.semantics.effective.walks import (
    FacetKeys,
    KeptWalks,
    NodeRead,
    Recorder,
    Walked,
    attached_keys,
    below_of,
    keep_below,
    reads,
    renewed,
    routes_into,
    sources,
    stack_of,
    unchanged,
)
from policylint.semantics.listeners import unsupported_protocol
from policylint.vocabulary import Accepted, Role

if TYPE_CHECKING:
    from policylint.profiles.policy import Policy
    from policylint.semantics.resolution import TargetResolution
    from policylint.semantics.topology import Listener, Topology


# -- the simulation ---------------------------------------------------------------------


class Simulation:
    """Contexts, effective specs and per-policy status for every policy kind in the index."""

    def __init__(self, topology: Topology, kept: KeptWalks | None = None) -> None:
        """`kept`: the walks of earlier runs of this process, to play back below the roots whose
        walk would read the same, and to keep this run's walks in (policylint.semantics.effective.walks)."""
        self.resolution = topology.resolution
        self.index = topology.index
        self.topology = topology
        # What `_walk` does with each context: tally it (the run), or collect it (`contexts`).
        self._visit: Callable[[tuple[str, str], tuple[NodeKey, ...], tuple[Facet, ...]], None] = self._emit
        self.status: dict[tuple[K8sObject, NodeKey], TargetStatus] = defaultdict(TargetStatus)
        # Each policy's blast radius, counted the first time it is asked for (`affects`).
        self._affects: dict[K8sObject, Affects] = defaultdict(Affects)
        self._radii_pending = self._radii_let_go = False
        self.facets: dict[K8sObject, list[Facet]] = {}  # policy object -> facets
        self.order_sensitive: dict[tuple[str, ...], tuple[Context, OrderSensitivity]] = {}
        self.erasures: dict[Facet, tuple[Facet, int, int]] = {}  # facet -> (facet, units, contexts)
        self.override_challenged: set[Facet] = set()  # facet of overrides that had something below
        # (kind, effective target node) -> distinct fold results reaching it, with one path each.
        # Only targets reached with more than one distinct result are kept whole (PL605); for the
        # others one (result, path) pair is enough — one entry per effective target adds up at 100k.
        self.object_results: dict[
            tuple[tuple[str, str], NodeKey], IdentityMap[FoldResult, tuple[FoldResult, tuple[NodeKey, ...]]]
        ] = {}
        # The first per kind, then per target: no (kind, target) key for each of the targets.
        self._first_result: dict[tuple[str, str], dict[NodeKey, tuple[FoldResult, tuple[NodeKey, ...]]]] = defaultdict(dict)
        # The facets and folds of the run, taken from the last run's where they are made of the
        # same policy instances (policylint.semantics.effective.folds).
        self._kept = kept is not None
        self._folds = kept.folds if kept is not None else KeptFolds()
        self._folds.begin()
        self._groups: dict[tuple[Facet, ...], _StackGroup] = {}
        self._children: dict[NodeKey, list[NodeKey]] = {}
        self._objects: dict[ObjectKey, K8sObject] = {}
        self._backends_below: dict[NodeKey, frozenset[NodeKey]] = {}
        self._keep_below: list[Walked] = []  # the walks this run kept: their nodes' backends are kept with them
        # Each route's rules and backends as nodes: the last run's where the route and its
        # references are the same instances (policylint.semantics.effective.routes).
        self._routes = kept.routes if kept is not None else KeptRouteNodes()
        self._route_nodes_of: dict[ObjectKey, RouteNodes] = {}  # this run's, asked once per route
        self._owners: dict[K8sObject, OwnerListeners] = {}  # each listener owner's, read once (`owners`)
        # policy object -> what it reaches. One tally per policy rather than node sets per stack:
        # a policy shared by many stacks (a Gateway's) would have its nodes repeated in each.
        self._reach: dict[K8sObject, _Reach] = {}
        self._levels: dict[tuple[str, str], int] = {}  # each kind's effective level (`_level_of`)
        self._attach()
        self._run(kept)
        self._finalize()

    # -- attachment of facets to nodes ------------------------------------------------------

    def node_of(self, res: TargetResolution) -> NodeKey | None:
        obj = res.target
        if obj is None or not res.accepted:
            return None
        self._objects[obj.key] = obj
        section = res.section
        kind, group = obj.kind, obj.group
        if group == GATEWAY_GROUP and kind == "GatewayClass":
            return ("gatewayclass", obj.key, None)
        if group == "" and kind == "Namespace":
            return ("namespace", obj.key, None)
        if group == GATEWAY_GROUP and kind in ("Gateway", "ListenerSet"):
            if section is not None:
                return ("listener", obj.key, section.name)
            return ("gateway" if kind == "Gateway" else "listenerset", obj.key, None)
        if group == GATEWAY_GROUP and kind in _ROUTE_KINDS:
            if section is not None:
                return ("rule", obj.key, section.name if section.name is not None else section.position)
            return ("route", obj.key, None)
        if section is not None:
            return ("port", obj.key, section.name)
        return ("backend", obj.key, None)

    def _attach(self) -> None:
        self._by_kind: dict[tuple[str, str], dict[NodeKey, list[Facet]]] = defaultdict(lambda: defaultdict(list))
        self._profiles: dict[tuple[str, str], PolicyProfile] = {}
        self._namespace_level = False
        for policy in self.resolution.policies():
            facets: list[Facet] = []
            if self.index.get(policy.key) is not policy.obj:
                # A second definition of one object (PL005): it is one policy when applied, and
                # simulating both copies would make it conflict with, or override, itself.
                self.facets[policy.obj] = facets
                continue
            rejected = self.topology.policy_errors(policy.obj)
            # A controller that takes a route or listener for a policy before it validates it
            # (`invalidClaimsTarget`) leaves the policies above Overridden there even when it then
            # rejects the policy; one the API server refuses never reaches it.
            claims = policy.profile.invalid_claims_target and not self._refused(policy.obj)
            if rejected and not claims:
                # Rejected by its controller (Accepted=False, Invalid): it applies nowhere, so it
                # neither conflicts with nor overrides anything (`accepted` says why).
                self.facets[policy.obj] = facets
                continue
            for res in self.resolution.targets(policy):
                node = self.node_of(res)
                if node is None:
                    continue
                if rejected or self.topology.target_errors(policy, res):
                    # Rejected on this target (`accepted` says why): nothing of it applies, but it
                    # may still take the target from the policies above.
                    if claims and node[0] in _CLAIMED:
                        self._by_kind[policy.profile.gk][node].extend(self._folds.facets(policy, node, claim=True))
                        self._profiles[policy.profile.gk] = policy.profile
                    continue
                if node[0] == "namespace":
                    self._namespace_level = True
                for facet in self._folds.facets(policy, node):
                    facets.append(facet)
                    self._by_kind[policy.profile.gk][node].append(facet)
                self._profiles[policy.profile.gk] = policy.profile
            self.facets[policy.obj] = facets

    def _refused(self, obj: K8sObject) -> bool:
        verdict = self.topology.admissions.verdict(obj)
        return verdict is not None and verdict.rejected

    # -- the hierarchy ----------------------------------------------------------------------

    def children(self, node: NodeKey) -> list[NodeKey]:
        cached = self._children.get(node)
        if cached is None:
            cached = self._children[node] = self._compute_children(node)
        return cached

    def _obj(self, key: ObjectKey) -> K8sObject | None:
        obj = self._objects.get(key)
        if obj is None:
            obj = self.index.get(key)
            if obj is not None:
                self._objects[key] = obj
        return obj

    def _compute_children(self, node: NodeKey) -> list[NodeKey]:
        level, key, section = node
        topo = self.topology
        obj = self._obj(key)
        if level == "gatewayclass":
            return []  # roots are Gateways; the class is prepended to their paths
        if obj is None:
            return []
        if level == "gateway":
            out = self._accepted_listeners(obj, key)
            out.extend(("listenerset", ls.key, None) for ls in topo.listener_sets_of(obj))
            return out
        if level == "listenerset":
            return self._accepted_listeners(obj, key)
        if level == "listener":
            routes = self._owner_listeners(obj).routes_on(section)
            if routes is None:
                return []
            for route in routes:
                self._objects[route.key] = route
            return [("route", r.key, None) for r in sorted(routes, key=lambda r: r.key)]
        if level == "route":
            return self._route_nodes(obj).rules
        if level == "rule":
            return self._route_nodes(obj).rule_children(section)
        return []

    def _accepted_listeners(self, owner: K8sObject, key: ObjectKey) -> list[NodeKey]:
        # A Conflicted listener (PL416), or one refused for its protocol (PL421), is not accepted:
        # no traffic passes it.
        topo = self.topology
        return [
            ("listener", key, lst.name)
            for lst in topo.listeners(owner)
            if lst.name is not None and topo.listener_conflict(lst) is None and not _refused_protocol(lst)
        ]

    def _owner_listeners(self, owner: K8sObject) -> OwnerListeners:
        found = self._owners.get(owner)
        if found is None:
            found = self._owners[owner] = owner_listeners(self.topology, owner)
        return found

    def _route_nodes(self, route: K8sObject) -> RouteNodes:
        nodes = self._route_nodes_of.get(route.key)
        if nodes is None:
            nodes = self._route_nodes_of[route.key] = self._routes.nodes(self.topology, route)
            self._objects.update(nodes.targets)
        return nodes

    def backends_below(self, node: NodeKey) -> frozenset[NodeKey]:
        cached = self._backends_below.get(node)
        if cached is None:
            if node[0] in ("backend", "port"):
                cached = frozenset([node])
            elif node[0] == "rule":
                route = self._obj(node[1])
                cached = self._route_nodes(route).below(node[2]) if route is not None else frozenset()
            else:
                acc: set[NodeKey] = set()
                for child in self.children(node):
                    acc |= self.backends_below(child)
                cached = frozenset(acc)
            self._backends_below[node] = cached
        return cached

    def _roots(self) -> Iterator[tuple[NodeKey, ...]]:
        """Root prefixes: (GatewayClass ›) (Namespace ›) Gateway."""
        for gateway in self.topology.gateways():
            self._objects[gateway.key] = gateway
            prefix: list[NodeKey] = []
            ref = self.topology.class_refs.get(gateway)
            if ref is not None and ref.target is not None:
                self._objects[ref.target.key] = ref.target
                prefix.append(("gatewayclass", ref.target.key, None))
            if self._namespace_level and gateway.namespace:
                ns = self.index.lookup("", "Namespace", None, gateway.namespace)
                ns_key = ns.key if ns is not None else ObjectKey("", "Namespace", None, gateway.namespace)
                prefix.append(("namespace", ns_key, None))
            prefix.append(("gateway", gateway.key, None))
            yield tuple(prefix)

    # -- enumeration ------------------------------------------------------------------------

    def stack_groups(self) -> list[_StackGroup]:
        """Every distinct policy stack the run folded: its fold result (the effective spec), how
        many contexts share it and a few of their paths (PL609 reads them)."""
        return list(self._groups.values())

    def contexts(self, keep: Callable[[tuple[NodeKey, ...]], bool]) -> list[Context]:
        """The contexts whose path `keep` accepts, each with the stack and fold result this
        simulation made for it: the hierarchy walked again, with nothing attached or folded
        again (what `explain` shows). A run keeps no context itself: at 100k routes they would
        not fit in memory, and the tallies are all the rules need."""
        found: list[Context] = []

        def collect(gk: tuple[str, str], path: tuple[NodeKey, ...], raw_stack: tuple[Facet, ...]) -> None:
            if keep(path):
                group = self._groups.get(raw_stack)
                if group is None:  # every stack was folded by the run; kept for safety
                    group = self._prepare(gk, raw_stack)
                found.append(Context(group.profile, path, group.stack, group.result))

        self._visit = collect
        try:
            self._run()
        finally:
            self._visit = self._emit
        return found

    def _run(self, kept: KeptWalks | None = None) -> None:
        kinds = {gk: self._by_kind[gk] for gk in sorted(self._by_kind)}
        if not kinds:
            return
        targets = self._levels = {gk: self._level_of(gk) for gk in kinds}
        plan = _Plan(kinds, targets, set().union(*kinds.values()))
        visited: set[NodeKey] = set()
        facet_keys: dict[NodeKey, FacetKeys] | None = None
        for prefix in self._roots():
            stacks = {gk: tuple(f for n in prefix for f in kinds[gk].get(n, ())) for gk in kinds}
            visited.update(prefix)
            if kept is None:
                self._walk(prefix, stacks, plan, visited)
            else:
                if facet_keys is None:
                    facet_keys = attached_keys(kinds)
                visited |= self._walk_kept(kept, prefix, stacks, plan, facet_keys)
        # Targets no root reaches (a Service no route in the input uses, a route attached to an
        # external Gateway): contexts of their own, when traffic can reach them at all.
        for gk, attached in kinds.items():
            done: set[NodeKey] = set()
            for node in sorted(attached, key=_node_sort):
                if node in visited:
                    continue
                root = _object_node(node)
                if root in done or root in visited:
                    continue
                done.add(root)
                obj = self._obj(root[1])
                if obj is None or not self.topology.carries_traffic(obj)[0]:
                    continue
                only = _Plan({gk: attached}, {gk: targets[gk]}, attached.keys())
                stack = {gk: tuple(attached.get(root, ()))}
                if root[0] == "backend":
                    ports = sorted((n for n in attached if n[0] == "port" and n[1] == root[1]), key=_node_sort)
                    self._walk_backend((root,), stack, only, set(), ports)
                    if ports:
                        self._walk((root,), stack, only, set())
                else:
                    self._walk((root,), stack, only, set())

    def _walk_kept(
        self,
        kept: KeptWalks,
        prefix: tuple[NodeKey, ...],
        stacks: dict[tuple[str, str], tuple[Facet, ...]],
        plan: _Plan,
        attached: Mapping[NodeKey, FacetKeys],
    ) -> set[NodeKey] | frozenset[NodeKey]:
        """The walk below one root, played back from `kept` when it would read what it read then,
        else walked and kept; the nodes it visited. What it read is compared by identity first
        (`unchanged`), and worked out as `reads` only where something differs."""
        kinds, targets = plan.kinds, plan.targets
        levels = tuple(targets.items())
        gateway = self._obj(prefix[-1][1])
        found = sources(self.topology, gateway, self._obj)
        walked = kept.get(prefix)
        read: tuple[NodeRead, ...] | None = None
        if walked is not None and walked.levels == levels:
            if unchanged(walked, found, attached, self._route_nodes, self._objects):
                self._replay(walked, kinds, prefix[-1][1])
                self._backends_below.update(below_of(walked))  # the same nodes below: the same backends
                self._keep_below.append(walked)
                return walked.visited
            read = reads(prefix, self.children, attached, max(targets.values()))
            if walked.reads == read:
                # The same reads from other objects (a route's references resolved again, say):
                # kept with this run's, which the next run may find unchanged.
                kept.put(prefix, again := renewed(walked, found, routes_into(walked.visited, self._route_nodes_of)))
                self._keep_below.append(again)
                self._replay(walked, kinds, prefix[-1][1])
                return walked.visited
        if read is None:
            read = reads(prefix, self.children, attached, max(targets.values()))
        recorder = Recorder(kinds, _BACKEND_LEVELS)

        def both(gk: tuple[str, str], path: tuple[NodeKey, ...], raw_stack: tuple[Facet, ...]) -> None:
            recorder.add(gk, path, raw_stack)
            self._emit(gk, path, raw_stack)

        own: set[NodeKey] = set(prefix)
        self._visit = both
        try:
            self._walk(prefix, stacks, plan, own)
        finally:
            self._visit = self._emit
        visited = frozenset(own)
        kept.put(prefix, walked := recorder.walked(read, levels, visited, (found, routes_into(visited, self._route_nodes_of))))
        self._keep_below.append(walked)
        return own

    def _replay(self, walked: Walked, kinds: Mapping[tuple[str, str], Mapping[NodeKey, list[Facet]]], gateway: ObjectKey) -> None:
        """Tally a kept walk's contexts onto this run's facets, as `_emit` would tally them one by one."""
        groups: list[_StackGroup] = []
        for tally in walked.tallies:
            raw_stack = stack_of(kinds, tally.kind, tally.stack)
            group = self._groups.get(raw_stack)
            if group is None:
                group = self._groups[raw_stack] = self._prepare(tally.kind, raw_stack)
            groups.append(group)
            group.count += tally.count
            if len(group.examples) < 3:
                group.examples.extend(tally.examples[: 3 - len(group.examples)])
            if group.gateways is not None:
                group.gateways.add(gateway)
            for reach in group.contributors:
                reach.nodes |= tally.nodes
                reach.lasts |= tally.lasts
        tallies = walked.tallies
        for n, last, path in walked.arrivals:
            self._arrive(tallies[n].kind, groups[n], last, path)

    def _level_of(self, gk: tuple[str, str]) -> int:
        """The kind's effective level: its profile's, or deeper when a policy targets deeper (a
        CRD-derived profile guesses `route`, but a policy with a rule sectionName reaches a rule)."""
        level = RANK.get(self._profiles[gk].effective_target, RANK["route"])
        deepest = max((RANK[n[0]] for n in self._by_kind[gk]), default=level)
        deepest = min(deepest, RANK["backend"])  # a port refines a backend context
        return max(level, deepest)

    def _walk(
        self, path: tuple[NodeKey, ...], stacks: dict[tuple[str, str], tuple[Facet, ...]], plan: _Plan, visited: set[NodeKey]
    ) -> None:
        """Emit the contexts ending at the last node of `path` and walk below it. `stacks` holds
        the kinds whose effective level is not above the node (a kind's contexts end at its
        level, so below it the kind is dropped), each with the facets attached along the path;
        the dict is shared, never changed, by every child that adds no facet and drops no kind
        (most of them: a route's rules and backends with no policy of their own)."""
        node = path[-1]
        rank = RANK[node[0]]
        targets = plan.targets
        for gk, stack in stacks.items():
            if not stack:
                continue
            # Emit at the effective level; a backend context is refined by its port when it has one.
            level = targets[gk]
            if rank == level or (level == _BACKEND_RANK and rank == _PORT_RANK):
                self._visit(gk, path, stack)
        children = self.children(node)
        if not children:
            return
        deepest, hooked = plan.deepest, plan.hooked
        if rank == _RULE_RANK and _nothing_below_rule(children, stacks, plan, visited):
            return
        lowest = min(map(targets.__getitem__, stacks), default=deepest)  # the first level a child may pass
        if rank == _ROUTE_RANK and self._visit == self._emit:
            self._walk_rules(path, children, stacks, plan, visited, lowest)
            return
        ports_of: dict[ObjectKey, list[NodeKey]] | None = None  # a rule's ports by backend, when asked
        for child in children:
            child_level = child[0]
            if child_level == "port":
                continue  # reached through its backend
            child_rank = RANK[child_level]
            if child_rank > deepest:
                continue
            visited.add(child)
            child_stacks = stacks
            attached = child in hooked
            if attached or child_rank > lowest:
                child_stacks = _child_stacks(stacks, child, child_rank, plan, attached)
            if child_level == "backend":
                if ports_of is None:
                    ports_of = _ports_by_backend(children)
                ports = ports_of.get(child[1], _NO_PORTS)
                if not attached and not any(child_stacks.values()) and not any(port in hooked for port in ports):
                    # No facet along the path for the kinds that reach a backend, none on it or its
                    # ports: no context ends here (a kind's contexts are those with a policy). The
                    # walk below it would emit nothing; its nodes are reached all the same.
                    visited.update(ports)
                    continue
                self._walk_backend((*path, child), child_stacks, plan, visited, ports)
            else:
                self._walk((*path, child), child_stacks, plan, visited)

    def _walk_rules(
        self,
        path: tuple[NodeKey, ...],
        rules: Sequence[NodeKey],
        stacks: dict[tuple[str, str], tuple[Facet, ...]],
        plan: _Plan,
        visited: set[NodeKey],
        lowest: int,
    ) -> None:
        """`_walk`'s loop over a route's rules, while the run tallies its contexts (`_emit`). A run
        of rules next to each other that add no facet, drop no kind and have no context below them
        (most rules) all end their contexts with the very stacks of the route: they are tallied
        together (`_emit_rules`), in the order the loop would tally them one by one for each kind,
        with no walk of their own."""
        if plan.deepest < _RULE_RANK:
            return
        # A rule's children read from its route's nodes, and `_nothing_below_rule`'s test of the path
        # made once: through `children` and a test each, the 12,936 rules of the 10k clean corpus
        # each cost a lookup of its object and route, a list and the test, most to find nothing.
        route = self._obj(path[-1][1])
        if route is None:
            return
        nodes = self._route_nodes(route)
        hooked = plan.hooked
        carried = any(stacks.get(gk) for gk in plan.to_backends)  # a facet along the path reaches backends
        reached = plan.deepest >= _BACKEND_RANK  # a quiet rule's children are then reached
        same: list[NodeKey] = []  # the run so far
        for rule in rules:
            visited.add(rule)
            attached = rule in hooked
            if not attached and lowest >= _RULE_RANK:
                below = nodes.rule_children(rule[2])
                if not below or (not carried and hooked.isdisjoint(below)):
                    if below and reached:
                        visited.update(below)
                    same.append(rule)
                    continue
                child_stacks = stacks
            else:
                child_stacks = _child_stacks(stacks, rule, _RULE_RANK, plan, attached)
            if same:
                self._emit_rules(path, same, stacks, plan)
                same = []
            self._walk((*path, rule), child_stacks, plan, visited)
        if same:
            self._emit_rules(path, same, stacks, plan)

    def _emit_rules(
        self, path: tuple[NodeKey, ...], rules: list[NodeKey], stacks: dict[tuple[str, str], tuple[Facet, ...]], plan: _Plan
    ) -> None:
        """What `_emit` tallies for each context ending at one of `rules`, below `path` with the
        same stacks: each kind's stack group found once, the path above the rules added once to
        the reach of each policy that contributes. Each kind's contexts come in the rules' order,
        as one by one; kinds never share a group, and a rule's contexts are the last of its kind
        before the next rule's."""
        for gk, raw_stack in stacks.items():
            if not raw_stack or plan.targets[gk] != _RULE_RANK:
                continue
            group = self._groups.get(raw_stack)
            if group is None:
                group = self._groups[raw_stack] = self._prepare(gk, raw_stack)
            group.count += len(rules)
            examples = group.examples
            for rule in rules[: max(0, 3 - len(examples))]:
                examples.append((*path, rule))
            gateways = group.gateways
            if gateways is not None:
                for node in path:
                    if node[0] == "gateway":
                        gateways.add(node[1])
                        break
            for reach in group.contributors:
                reach.nodes.update(path)
                reach.nodes.update(rules)
            firsts, result = self._first_result[gk], group.result
            for rule in rules:
                first = firsts.get(rule)
                if first is None:
                    firsts[rule] = (result, (*path, rule))
                elif first[0] is not result:
                    self._arrive(gk, group, rule, (*path, rule))

    def _walk_backend(
        self,
        path: tuple[NodeKey, ...],
        stacks: dict[tuple[str, str], tuple[Facet, ...]],
        plan: _Plan,
        visited: set[NodeKey],
        ports: Sequence[NodeKey],
    ) -> None:
        if not ports:
            self._walk(path, stacks, plan, visited)
            return
        for port in ports:
            visited.add(port)
            port_stacks = stacks
            if port in plan.hooked:
                port_stacks = {}
                for gk, stack in stacks.items():
                    extra = plan.kinds[gk].get(port)
                    port_stacks[gk] = stack + tuple(extra) if extra else stack
            self._walk((*path, port), port_stacks, plan, visited)

    def _emit(self, gk: tuple[str, str], path: tuple[NodeKey, ...], raw_stack: tuple[Facet, ...]) -> None:
        # Hot path: one call per context (100k for 10k routes × 5 listeners). Everything per
        # stack is computed once (`_prepare`); per context only cheap tallies are kept.
        raw_key = raw_stack
        group = self._groups.get(raw_key)
        if group is None:
            group = self._groups[raw_key] = self._prepare(gk, raw_stack)
        group.count += 1
        last = path[-1]
        if len(group.examples) < 3:
            group.examples.append(path)
        gateways = group.gateways
        if gateways is not None:
            for node in path:
                if node[0] == "gateway":  # at most one per path, near its start
                    gateways.add(node[1])
                    break
        if group.contributors:
            at_backend = last[0] in _BACKEND_LEVELS
            for reach in group.contributors:
                reach.nodes.update(path)
                if at_backend:
                    reach.lasts.add(last)
        self._arrive(gk, group, last, path)

    def _arrive(self, gk: tuple[str, str], group: _StackGroup, last: NodeKey, path: tuple[NodeKey, ...]) -> None:
        """Note the fold result a context ending at `last` has, when it is new there."""
        firsts = self._first_result[gk]
        first = firsts.get(last)
        if first is None:
            firsts[last] = (group.result, path)
        elif first[0] is not group.result:
            key = (gk, last)
            seen = self.object_results.get(key)
            if seen is None:
                seen = self.object_results[key] = IdentityMap()
                seen[first[0]] = first
            if group.result not in seen:
                seen[group.result] = (group.result, path)

    def _prepare(self, gk: tuple[str, str], raw_stack: tuple[Facet, ...]) -> _StackGroup:
        ordered = self._folds.ordered(raw_stack)
        folded = self._folds.folded(ordered, self._profiles[gk])
        reach = self._reach
        contributors = tuple(reach.get(pid) or reach.setdefault(pid, _Reach(self._levels[gk])) for pid in folded.contributing)
        return _StackGroup(self._profiles[gk], ordered.stack, folded.result, folded.sensitive, folded.states, contributors)

    def _finalize(self) -> None:
        """Turn the per-stack tallies into per (policy, target) status and per-policy blast radius."""
        for group in self._groups.values():
            self._count_group(group)
        # What only the walk and these tallies needed, dropped before the rules run (a third of the simulation's
        # memory at 100k): the rules, reports and `explain` read the statuses, the hierarchy computed again if asked.
        for group in self._groups.values():
            group.gateways = None
            group.contributors = ()
        self._first_result = defaultdict(dict)
        # Read by the JSON and Markdown reports' policies section, `explain`, hover and PL608 with max-affected alone:
        # counted when asked (0.05-0.07 s at 10k); now by a long-lived process, whose kept walks keep `keep_below`.
        self._radii_pending = True
        if self._kept:
            self._blast_radii()
        else:
            # Nothing outlives this run: the tables serve only what is asked again (`contexts`).
            self._folds = KeptFolds()

    @property
    def affects(self) -> dict[K8sObject, Affects]:
        """Each policy's blast radius (its object -> `Affects`), counted the first time it is asked for."""
        if self._radii_pending:
            self._blast_radii()
        elif self._radii_let_go:  # the same counts, from the walk made again
            self._radii_let_go, self._affects = False, Simulation(self.topology).affects
        return self._affects

    def let_go_of_radii(self) -> None:
        """Let go, uncounted, of what only the blast radii read: a run none of whose readers asks
        (no policies section, PL608 off) held the reaches and tables to its end (90 MiB at 100k)."""
        if self._radii_pending:
            self._reach, self._radii_let_go = {}, True
            self._blast_radii()

    def _blast_radii(self) -> None:
        """Count each policy's blast radius from the nodes the walk tallied (`count_reach`), then let
        go of what only the count needed: the reaches, the hierarchy's children and backends."""
        self._radii_pending = False
        # Each reach is counted and dropped in turn, so that its memory serves the next one.
        while self._reach:
            pid, reach = self._reach.popitem()
            count_reach(self._affects[pid], reach, self.backends_below)
        keep_below(self._keep_below, self._backends_below)
        self._backends_below = {}
        self._route_nodes_of = {}
        self._owners = {}
        self._children = {}
        if not self._kept:
            self._routes = KeptRouteNodes()

    def _count_group(self, group: _StackGroup) -> None:
        """Count one distinct stack, in every context it stands for, into the statuses."""
        result, stack = group.result, group.stack
        context = Context(group.profile, group.examples[0], stack, result)
        for item in group.sensitive:
            self.order_sensitive.setdefault((*item.policies, group.profile.kind), (context, item))
        gateways: AbstractSet[ObjectKey] = group.gateways or frozenset()
        for facet in stack:
            fid = facet
            if fid in result.erased:
                prev = self.erasures.get(fid)
                units = result.erased[fid] * group.count
                self.erasures[fid] = (facet, units + (prev[1] if prev else 0), group.count + (prev[2] if prev else 0))
            if facet.role is Role.OVERRIDE and any(
                f.rank > facet.rank or (f.rank == facet.rank and f.policy is not facet.policy) for f in stack
            ):
                self.override_challenged.add(fid)
        for target, (facets, state) in group.states:
            entry = self.status[target]
            count_state(entry, group, facets, state)
            entry.ancestors = grow(entry.ancestors, gateways)
        # The policies that contribute here, as `_prepare` found them.
        for reach in group.contributors:
            reach.contexts += group.count

    # -- queries (what they answer: policylint.semantics.effective.queries) -----------------

    def accepted(self, policy: Policy, res: TargetResolution) -> tuple[Accepted, str]:
        return queries.accepted(self, policy, res)

    def conflict_at_target(self, policy: Policy, res: TargetResolution) -> tuple[Facet, str] | None:
        return queries.conflict_at_target(self, policy, res)

    def override_at_target(self, policy: Policy, res: TargetResolution) -> tuple[int, int, frozenset[str]] | None:
        return queries.override_at_target(self, policy, res)

    def displaced_by_itself(self, policy: Policy, res: TargetResolution) -> int:
        return queries.displaced_by_itself(self, policy, res)

    def target_status(self, policy: Policy, res: TargetResolution) -> TargetStatus | None:
        node = self.node_of(res)
        if node is None:
            return None
        return self.status.get((policy.obj, node))

    def policy_affects(self, policy: Policy) -> Affects:
        return self.affects.get(policy.obj, Affects())


_NO_PORTS: list[NodeKey] = []


def path_label(path: Sequence[NodeKey]) -> str:
    return " > ".join(node_label(n) for n in path)


# -- for explanations (policylint.commands.explain) ----------------------------------------------


def why_established(established: Facet, challenger: Facet) -> str:
    """Why `established` comes first at one level: older creationTimestamp, or the name tie-break."""
    return _why(established, challenger)


def _refused_protocol(listener: Listener) -> bool:
    return not listener.malformed and unsupported_protocol(listener.protocol)
