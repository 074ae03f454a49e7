"""Route delegation (docs/semantics.md#backends): a route rule whose backendRef names a route
kind hands its traffic to the routes it names, for the implementations that delegate (profile
`implementations[].routeDelegation`)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from policylint.k8s.objects import K8sObject
from policylint.profiles.implementations import Implementation
from policylint.profiles.registry import TargetKind
from policylint.semantics.grants import NOT_NEEDED
from policylint.semantics.topology.gateways import Gateways
from policylint.semantics.topology.model import CORE, ObjectRef, _list, _str
from policylint.vocabulary import ReferenceStatus

if TYPE_CHECKING:
    from policylint.k8s.admissions import Admissions
    from policylint.semantics.resolution import Resolution


class Delegation(Gateways):
    """Which routes hand traffic to which."""

    def __init__(self, resolution: Resolution, admissions: Admissions) -> None:
        super().__init__(resolution, admissions)
        self._delegated_by: dict[K8sObject, list[K8sObject]] = defaultdict(list)
        self._delegated_kinds: frozenset[tuple[str, str]] | None = None  # (group, kind): `_delegation`

    def _delegation(self, parents: Callable[[], list[Implementation | None]], raw: Mapping[str, Any]) -> bool:
        """Whether a backendRef delegates to routes: it names a kind an implementation delegates
        to (profile `implementations[].routeDelegation`), and some parent Gateway of the route
        belongs to such an implementation or to one policylint does not know. Under a controller
        known not to delegate, the reference stays a backend of an unsupported kind."""
        group = _str(raw.get("group"))
        kind = _str(raw.get("kind"))
        delegated = self._delegated()
        group_kind = (CORE if group is None else group, kind or "Service")
        if group_kind not in delegated:
            return False
        wanted = TargetKind(*group_kind)
        known = parents()
        return not known or any(i is None or wanted in i.delegation_kinds for i in known)

    def _delegated(self) -> frozenset[tuple[str, str]]:
        """The (group, kind) of the kinds some implementation delegates to, gathered once: asked
        of every backend reference of every route, and the implementations are the run's."""
        delegated = self._delegated_kinds
        if delegated is None:
            implementations = self.resolution.profiles.implementations
            delegated = self._delegated_kinds = frozenset((k.group, k.kind) for i in implementations for k in i.delegation_kinds)
        return delegated

    def _delegate(self, route: K8sObject, path: str, raw: Mapping[str, Any], rule: int) -> ObjectRef:
        """A delegation reference, and the routes it hands traffic to: those of the kind in the
        namespace named (`name: "*"`: every one), but the route itself, that name no parent or
        name this route as their parent. No ReferenceGrant is involved."""
        group = _str(raw.get("group"))
        group = CORE if group is None else group
        kind = _str(raw.get("kind")) or "Service"
        namespace = _str(raw.get("namespace")) or route.namespace or ""
        name = _str(raw.get("name")) or ""
        # Every route of the kind is read, and each child told it is delegated to: never kept.
        self._note("never")
        children = []
        for child in self.index.of_kind(group, kind):
            if child is route or (child.namespace or "") != namespace or name not in ("*", child.name):
                continue
            parents = [p for p in _list(child.spec.get("parentRefs")) if isinstance(p, dict)]
            if parents and not any(
                _str(p.get("kind")) == route.kind
                and (_str(p.get("namespace")) or child.namespace) == route.namespace
                and _str(p.get("name")) == route.name
                for p in parents
            ):
                continue
            children.append(child)
            self._delegated_by[child].append(route)
        return ObjectRef(
            owner=route,
            path=path,
            purpose="delegation",
            group=group,
            kind=kind,
            namespace=namespace,
            name=name,
            port=None,
            has_port=False,
            rule=rule,
            status=ReferenceStatus.RESOLVED if children else ReferenceStatus.OPAQUE,
            target=children[0] if len(children) == 1 else None,
            grant=NOT_NEEDED,
        )

    def delegated_from_parents(self, route: K8sObject) -> bool:
        """Whether a route up some chain of route delegation to this one names parents of its own
        (the chain's head, whose attachment is its own finding: a grandchild selected by a child
        that has none is still reached); a delegation cycle reaches none."""
        seen = {route}
        stack = list(self.delegated_by(route))
        while stack:
            parent = stack.pop()
            if parent in seen:
                continue
            seen.add(parent)
            if parent.spec.get("parentRefs"):
                return True
            stack.extend(self.delegated_by(parent))
        return False

    def may_be_delegated(self, route: K8sObject) -> bool:
        """Whether a route may be a child of route delegation from outside the input (a team's
        repository holding only its child routes): its kind is one an implementation delegates
        to, routes of that kind are declared external (`--external`), and no GatewayClass in the
        input belongs to an implementation known not to delegate it."""
        wanted = TargetKind(route.group, route.kind)
        profiles = self.resolution.profiles
        if not any(wanted in i.delegation_kinds for i in profiles.implementations):
            return False
        if not self.external.declares_kind(route.group, route.kind):
            return False
        return all(i is None or wanted in i.delegation_kinds for i in self._class_implementations())

    def _delegated_traffic(self, route: K8sObject, seen: set[K8sObject]) -> bool:
        """Whether a route that delegates to this one carries traffic (through its own parents, or
        through a route delegating to it in turn; a delegation cycle carries none)."""
        seen.add(route)
        for parent in self.delegated_by(route):
            if parent in seen:
                continue
            if any(a.attached for a in self.parent_attachments(parent)) or self._delegated_traffic(parent, seen):
                return True
        return False

    def delegated_by(self, route: K8sObject) -> list[K8sObject]:
        """The routes that delegate traffic to this one (implementation-specific route delegation)."""
        return self._delegated_by.get(route, [])
