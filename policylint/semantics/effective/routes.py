"""A route's part of the hierarchy, as the simulation walks it: its rules, each rule's backends and
Service ports, and the backends below each (policylint.semantics.effective.simulation).

They are a function of the route object, the sections its kind has, and the references the
topology resolved for it; nothing else. The topology of a long-lived process hands on a route's
references as the same list while what resolving them read is unchanged
(policylint.semantics.topology.kept), and the objects of unchanged files are the same instances
(policylint.incremental.resident). So a `KeptRouteNodes` of that process gives the next run the same
nodes for a route whose object, kind's sections and references are the very ones it had: the
children the kept walks' reads compare (policylint.semantics.effective.walks) and the backends a
policy's blast radius counts are then read, not worked out again, for every route of the part
but those the edit touched.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from policylint.k8s.objects import K8sObject, ObjectKey
from policylint.semantics.effective.facets import NodeKey
from policylint.values import frozen
from policylint.vocabulary import ReferenceStatus

if TYPE_CHECKING:
    from policylint.k8s.objects import SectionSpec
    from policylint.semantics.topology import ObjectRef, Topology

# Routes kept at most; past it the table starts again.
MAX_ROUTES = 200_000


@frozen(eq=False)
class RouteNodes:
    """One route's nodes below it, with what they were worked out from (compared by identity)."""

    route: K8sObject
    refs: list[ObjectRef]
    spec: SectionSpec | None
    rules: list[NodeKey]  # the route node's children
    position_of: dict[str | int | None, int]  # a rule node's section -> the first rule's position
    backends: dict[int | None, list[NodeKey]]  # by rule position: backends and ports, in reference order
    targets: tuple[tuple[ObjectKey, K8sObject], ...]  # the objects the backends' nodes stand for
    belows: dict[str | int | None, frozenset[NodeKey]]  # `below`, by rule, as asked

    def rule_children(self, section: str | int | None) -> list[NodeKey]:
        return self.backends.get(self.position_of.get(section), [])

    def below(self, section: str | int | None) -> frozenset[NodeKey]:
        """The backends a context through the rule ends at: a backendRef with a port reaches that
        Service port (acceptance scenario S14: service-3#port-1), not the whole Service as well."""
        found = self.belows.get(section)
        if found is None:
            children = self.rule_children(section)
            ported = {n[1] for n in children if n[0] == "port"}
            # A rule with no port named (nearly every one) ends at each of its backends.
            found = self.belows[section] = (
                frozenset(n for n in children if not (n[0] == "backend" and n[1] in ported)) if ported else frozenset(children)
            )
        return found


class KeptRouteNodes:
    """`RouteNodes` by route key, from the runs of one process (a run without one keeps its own)."""

    def __init__(self) -> None:
        self._routes: dict[ObjectKey, RouteNodes] = {}

    def nodes(self, topology: Topology, route: K8sObject) -> RouteNodes:
        refs = topology.refs_from(route)
        spec = topology.index.kinds.sections(route.group, route.kind)
        found = self._routes.get(route.key)
        # The same list when the topology kept them (by identity, at once), else by what the nodes
        # read of them: a route whose references needed a ReferenceGrant is handed a copy with
        # this run's grant checks, which hold this run's grants (the nodes read only whether
        # each reference is permitted).
        if (
            found is None
            or found.route is not route
            or found.spec != spec
            or not (found.refs is refs or _read(found.refs) == _read(refs))
        ):
            if len(self._routes) >= MAX_ROUTES:
                self._routes.clear()
            found = self._routes[route.key] = _nodes(topology, route, refs, spec)
        return found


def _nodes(topology: Topology, route: K8sObject, refs: list[ObjectRef], spec: SectionSpec | None) -> RouteNodes:
    key = route.key
    rules: list[NodeKey] = []
    position_of: dict[str | int | None, int] = {}
    for section in topology.rules(route):
        name = section.name if section.name is not None else section.position
        rules.append(("rule", key, name))
        position_of.setdefault(name, section.position)
    backends: dict[int | None, list[NodeKey]] = {}
    targets: dict[ObjectKey, K8sObject] = {}
    # One pass over the references, in this loop rather than through a generator and with no new
    # list per reference: a run makes the nodes of every route (`Simulation.children`).
    for ref in refs:
        # The references traffic follows: backends and mirrors, found and permitted.
        if ref.purpose not in _TRAFFIC or ref.status in _UNREACHED:
            continue
        target = ref.target
        if target is not None:
            target_key = target.key
            targets[target_key] = target
        else:
            target_key = ObjectKey(ref.group, ref.kind, ref.namespace, ref.name)
        nodes = backends.get(ref.rule)
        if nodes is None:
            nodes = backends[ref.rule] = []
        backend: NodeKey = ("backend", target_key, None)
        if backend not in nodes:
            nodes.append(backend)
        named = ref.port_section
        if named is not None and named.name is not None:
            port: NodeKey = ("port", target_key, named.name)
            if port not in nodes:
                nodes.append(port)
    return RouteNodes(route, refs, spec, rules, position_of, backends, tuple(targets.items()), {})


def _read(refs: list[ObjectRef]) -> tuple[tuple[object, ...], ...]:
    """What `_nodes` reads of each reference (its target by identity)."""
    return tuple(
        (
            ref.purpose,
            ref.status,
            ref.target,
            ref.group,
            ref.kind,
            ref.namespace,
            ref.name,
            ref.rule,
            ref.port_section.name if ref.port_section is not None else None,
        )
        for ref in refs
    )


_TRAFFIC = ("backend", "mirror")
_UNREACHED = (ReferenceStatus.REF_NOT_PERMITTED, ReferenceStatus.NOT_FOUND)
