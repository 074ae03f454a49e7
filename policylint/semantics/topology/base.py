"""The state every part of the topology shares, and the queries rules ask of it.

`TopologyBase` holds what the build decides (the listeners of each Gateway and ListenerSet, the
attachments of each route, the references of each object) and answers the plain lookups over it;
each part (`references`, `gateways`, `listeners`, `attachment`, `delegation`, `backends`,
`certificates`, `targets`) adds the state and the methods of its concept, and `hierarchy.Topology`
builds them all once."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING

from policylint.k8s.fieldtypes import GATEWAY_GROUP
from policylint.k8s.objects import K8sObject
from policylint.semantics.topology.model import (
    ROUTE_KINDS,
    ClassRef,
    Listener,
    ListenerSetAttachment,
    ObjectRef,
    ParentAttachment,
)

if TYPE_CHECKING:
    from policylint.k8s.admissions import Admissions
    from policylint.k8s.index import Section
    from policylint.semantics.resolution import Resolution


class TopologyBase:
    """The resolved hierarchy as lookups: what the build stored, by object."""

    def __init__(self, resolution: Resolution, admissions: Admissions) -> None:
        self.resolution = resolution
        self.index = resolution.index
        # What the API server would refuse in each object: a policy it refuses is invalid (`targets`).
        self.admissions = admissions
        self.external = self.index.options.external
        self.grants = resolution.grants()
        self._listeners: dict[K8sObject, list[Listener]] = {}
        self.class_refs: dict[K8sObject, ClassRef] = {}
        self.listener_sets: dict[K8sObject, ListenerSetAttachment] = {}
        self._sets_of_gateway: dict[K8sObject, list[K8sObject]] = defaultdict(list)
        self.parents: dict[K8sObject, list[ParentAttachment]] = {}
        self._routes_on: dict[K8sObject, list[tuple[K8sObject, ParentAttachment]]] = defaultdict(list)
        self.references: dict[K8sObject, list[ObjectRef]] = {}
        self._referrers: dict[K8sObject, list[ObjectRef]] = defaultdict(list)
        # policy -> why its controller rejects its spec (policy_errors).
        self.spec_errors: dict[K8sObject, tuple[str, ...]] = {}

    # -- queries ---------------------------------------------------------------------------

    def gateways(self) -> Sequence[K8sObject]:
        return self.index.of_kind(GATEWAY_GROUP, "Gateway")

    def routes(self) -> Iterator[K8sObject]:
        for kind in ROUTE_KINDS:
            yield from self.index.of_kind(GATEWAY_GROUP, kind)

    def listeners(self, owner: K8sObject) -> list[Listener]:
        """The listeners an object declares itself (a Gateway never includes its ListenerSets')."""
        return self._listeners.get(owner, [])

    def listener_sets_of(self, gateway: K8sObject) -> list[K8sObject]:
        """ListenerSets attached to the Gateway (admitted by allowedListeners)."""
        return self._sets_of_gateway.get(gateway, [])

    def routes_on(self, listener: Listener) -> list[tuple[K8sObject, ParentAttachment]]:
        return [(r, a) for r, a in self._routes_on.get(listener.owner, []) if listener in a.listeners]

    def routes_of(self, owner: K8sObject) -> list[tuple[K8sObject, ParentAttachment]]:
        """Routes attached to any listener of a Gateway or ListenerSet."""
        return self._routes_on.get(owner, [])

    def parent_attachments(self, route: K8sObject) -> list[ParentAttachment]:
        return self.parents.get(route, [])

    def refs_from(self, obj: K8sObject) -> list[ObjectRef]:
        return self.references.get(obj, [])

    def refs_to(self, obj: K8sObject) -> list[ObjectRef]:
        return self._referrers.get(obj, [])

    def rules(self, route: K8sObject) -> list[Section]:
        """Route rules; a route without `spec.rules` has one implicit rule (HTTPRoute defaults one)."""
        sections = self.index.sections(route)
        if sections:
            return sections
        from policylint.k8s.index import Section

        return [Section(None, 0, "spec", indexed=False)]

    def is_attached(self, route: K8sObject) -> bool:
        return any(a.attached for a in self.parent_attachments(route)) or self.parents_malformed(route)

    def parents_malformed(self, route: K8sObject) -> bool:
        """Whether the route's `parentRefs` (or its `spec`) has the wrong type (PL010): its parents
        are unknown, and it is assumed attached."""
        return self.index.malformed(route).broken("spec", "parentRefs")

    def _add_refs(self, owner: K8sObject, refs: list[ObjectRef]) -> None:
        self.references[owner] = refs
        for ref in refs:
            if ref.target is not None:
                self._referrers[ref.target].append(ref)
