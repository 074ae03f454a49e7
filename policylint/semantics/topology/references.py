"""References from one object to another, resolved as a controller resolves them
(docs/semantics.md#backends, #certificates, #referencegrant): the kind and group defaulted, the
object looked up (or declared external), a cross-namespace reference checked against the
ReferenceGrants, a Service port matched by number."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeVar, cast

from policylint.k8s.fieldtypes import GATEWAY_GROUP
from policylint.k8s.objects import K8sObject
from policylint.profiles.registry import TargetKind
from policylint.semantics.grants import NOT_NEEDED, SAME_NAMESPACE, GrantCheck, Reference, grant_meaning
from policylint.semantics.namespace_admission import selector_verdict
from policylint.semantics.topology.base import TopologyBase
from policylint.semantics.topology.kept import Recorded
from policylint.semantics.topology.model import (
    _BACKEND_PURPOSES,
    CORE,
    ROUTE_KINDS,
    ObjectRef,
    _int,
    _list,
    _str,
)
from policylint.values import frozen
from policylint.vocabulary import ReferenceStatus

if TYPE_CHECKING:
    from policylint.k8s.admissions import Admissions
    from policylint.k8s.index import Section
    from policylint.semantics.resolution import Resolution
    from policylint.semantics.topology.kept import KeptTopology, Table

T = TypeVar("T")

# The kinds of read whose question and answer are values or objects, the same for every owner.
_SHARED = frozenset({"lookup", "made", "scoped", "kind", "holds", "manages", "group"})

# One read recorded (`References._note`): its kind, what was asked, then the answer.
Read = tuple[object, ...]


# Compared by identity: it is part of the key each resolved reference is kept under
# (`References._resolved`), and a few shared instances describe nearly every reference.
@frozen(eq=False)
class Resolving:
    """How a controller resolves one kind of reference (`References._resolve_ref`)."""

    default_kind: str  # the kind when the reference names none
    # False: a missing object is reported only where the input holds objects of its kind in its
    # namespace (Secrets and ConfigMaps often live outside the repository).
    check_existence: bool = True
    grant_needed: bool = True  # a reference into another namespace needs a ReferenceGrant
    group_for_kind: Callable[[str], str | None] | None = None  # the group a controller resolving by kind gives it
    grant_as_written: bool = False  # the ReferenceGrant must name the group as written (`ObjectRef.grant_group`)
    # The kind the controller looks the object up as (`_backend_resolved_as`); the reference keeps
    # its kind as written, which its ReferenceGrant names.
    lookup_as: TargetKind | None = None


class References(TopologyBase):
    """Resolves one reference (`_resolve_ref`) for every part that reads references."""

    def __init__(self, resolution: Resolution, admissions: Admissions) -> None:
        super().__init__(resolution, admissions)
        self._managed: dict[tuple[str, str], set[str]] = {}
        self._ports: dict[K8sObject, dict[int, Section]] = {}  # Service -> port number -> section (`_service_port`)
        self._groups: frozenset[str] | None = None
        # What the last build of this process resolved (policylint.semantics.topology.kept).
        self._kept: KeptTopology | None = None
        # What working out one kept result reads beyond its object and the run's context, while
        # it is recorded (`_recorded`); None: not recorded.
        self._reads: list[Read] | None = None
        # Whether a kept read answers as recorded, asked once per build: most are shared (every
        # route of a namespace looks up its Services, asks whether Services are cluster-scoped).
        self._asked: dict[Read, bool] = {}
        # The first reference resolved for each distinct question (`_resolve_ref`), while the
        # topology is built and no read is recorded; None: every reference is resolved.
        self._resolved: dict[tuple[object, ...], ObjectRef] | None = None

    def _note(self, *read: object) -> None:
        """Record one read (its kind, what was asked, the answer) while reads are recorded."""
        if self._reads is not None:
            self._reads.append(read)

    def _recorded(
        self,
        table: Table[Recorded[T]],
        obj: K8sObject,
        work: Callable[[K8sObject], T],
        replay: Callable[[K8sObject, Recorded[T]], T | None],
    ) -> T:
        """`work(obj)`, reused from the last build while every read it made answers the same
        (`replay`: the value to hand on, or None when a read answers otherwise), else worked out
        with its reads recorded and kept for the next build."""
        before = table.get(obj)
        if before is not None:
            value = replay(obj, before)
            if value is not None:
                table.reused += 1
                table.put(obj, before if value is before.value else Recorded(value, before.reads))
                return value
            table.refused += 1
        # One result at a time: a read made while working out another would be recorded for
        # neither, and its answer never checked again.
        assert self._reads is None
        reads: list[Read] = []
        self._reads = reads
        try:
            value = work(obj)
        finally:
            self._reads = None
        table.resolved += 1
        if ("never",) not in reads:
            table.put(obj, Recorded(value, tuple(reads)))
        return value

    def _reads_hold(self, obj: K8sObject, kept: Recorded[T]) -> T | None:
        """The kept value if every read it made answers as it did, else None."""
        return kept.value if all(self._holds(obj, read) for read in kept.reads) else None

    def _refs_hold(self, owner: K8sObject, kept: Recorded[list[ObjectRef]]) -> list[ObjectRef] | None:
        """The kept references of `owner` if every read answers as it did, with this run's grant
        checks (whose side effect, the grant entries used, is this run's too); None otherwise."""
        if not all(self._holds(owner, read) for read in kept.reads):
            return None
        refs: list[ObjectRef] | None = None
        for i, ref in enumerate(kept.value):
            # A reference within its owner's namespace stays one (both are the kept reference's),
            # and checking it records no grant entry used: nothing to check again.
            if ref.grant is None or ref.grant is NOT_NEEDED or ref.grant is SAME_NAMESPACE:
                continue
            check = self.grants.check(ref.grant_reference())
            if check is ref.grant:
                continue
            if grant_meaning(check) != grant_meaning(ref.grant):
                return None
            refs = list(kept.value) if refs is None else refs
            refs[i] = dataclasses.replace(ref, grant=check)
        return kept.value if refs is None else refs

    def _holds(self, owner: K8sObject, read: Read) -> bool:
        """`_answers_alike`, asked once per build for the reads whose question and answer are
        values or objects (the others hold lists, or depend on `owner`)."""
        if read[0] not in _SHARED:
            return self._answers_alike(owner, read)
        found = self._asked.get(read)
        if found is None:
            found = self._asked[read] = self._answers_alike(owner, read)
        return found

    def _answers_alike(self, owner: K8sObject, read: Read) -> bool:
        """Whether asking `read` again (`_note`) gives the answer recorded."""
        kind, asked, answer = read[0], cast("tuple[Any, ...]", read[1:-1]), read[-1]
        if kind == "lookup":
            (group, kind_), namespace, name = asked
            return self.index.lookup(group, kind_, namespace, name) is answer
        if kind == "made":
            return self._made(*asked) == answer
        if kind == "scoped":
            return self._cluster_scoped(*asked) == answer
        if kind == "kind":
            return self._kind_known(*asked) == answer
        if kind == "holds":
            return self._holds_kind(*asked) == answer
        if kind == "manages":
            return self._manages(*asked) == answer
        if kind == "group":
            return self._knows_group(*asked) == answer
        if kind == "listeners":
            # Kept per object (`Listeners._kept_listeners`): the same list while the parent is.
            return self.listeners(asked[0]) is answer
        if kind == "listener-set":
            return self.listener_sets.get(asked[0]) == answer
        if kind == "selector":
            return selector_verdict(self.resolution, *asked) == answer
        return False  # "never": what it read is not recorded

    def _resolve_ref(
        self,
        owner: K8sObject,
        path: str,
        raw: Mapping[str, Any],
        purpose: str,
        how: Resolving,
        *,
        rule: int | None = None,
    ) -> ObjectRef | None:
        """The reference at `path` of `owner`, resolved as `how` says its controller resolves it."""
        resolved = self._resolved
        if resolved is None or self._reads is not None:
            return self._resolve_new(owner, path, raw, purpose, how, rule)
        name = _str(raw.get("name"))
        if not name:
            return None
        port = _int(raw.get("port"))
        has_port = "port" in raw
        # What the answer depends on besides the run's objects and settings: the referrer's kind and
        # namespace (the namespace defaulted, the grant's `from`), the purpose, how it is resolved,
        # and what the reference says, as read. A route's 13,000-17,000 backend references name
        # 6,000-10,000 distinct ones (docs/performance.md): the others are the first's, made again
        # with their own owner, path and rule.
        written = (_str(raw.get("group")), _str(raw.get("kind")), _str(raw.get("namespace")))
        key = (how, purpose, owner.group, owner.kind, owner.namespace, name, *written, port, has_port)
        first = resolved.get(key)
        if first is None:
            found = self._resolve_new(owner, path, raw, purpose, how, rule)
            if found is not None:
                resolved[key] = found
            return found
        return ObjectRef(
            owner,
            path,
            purpose,
            first.group,
            first.kind,
            first.namespace,
            name,
            port,
            has_port,
            rule,
            first.status,
            first.target,
            first.port_section,
            first.grant,
            first.detail,
            first.grant_group,
        )

    def _resolve_new(
        self, owner: K8sObject, path: str, raw: Mapping[str, Any], purpose: str, how: Resolving, rule: int | None
    ) -> ObjectRef | None:
        """`_resolve_ref` worked out."""
        default_kind, group_for_kind, lookup_as = how.default_kind, how.group_for_kind, how.lookup_as
        name = _str(raw.get("name"))
        if not name:
            return None
        group = written = _str(raw.get("group")) or CORE
        kind = _str(raw.get("kind")) or default_kind
        if group_for_kind is not None:
            found = group_for_kind(kind)
            if found is not None:
                group = found
        cluster_scoped = self._cluster_scoped(group, kind)
        # A cluster-scoped object has no namespace, and a reference to it crosses none.
        namespace = "" if cluster_scoped else _str(raw.get("namespace")) or owner.namespace or ""
        port = _int(raw.get("port"))
        has_port = "port" in raw
        # `grant_as_written`: a controller that resolves by kind still matches a ReferenceGrant's
        # `to` against the group the reference gives (Envoy Gateway's validateBackendNamespace).
        grant_group = written if how.grant_as_written and written != group else None
        if not how.grant_needed or cluster_scoped:
            grant = NOT_NEEDED
        else:
            grant = self._grant_check(owner, group if grant_group is None else grant_group, kind, namespace, name)
        # The kind is checked before the namespace, as controllers do (Envoy Gateway's
        # validateBackendRef: group, then kind, then the ReferenceGrant): a reference no object
        # could satisfy is InvalidKind whether or not a grant would admit it.
        invalid_kind = self._invalid_kind(purpose, group, kind)
        # ObjectRef's fields in order, up to `status`; then target, port_section, grant, detail,
        # grant_group (positional: a reference is made for every backend of every route).
        fields = (owner, path, purpose, group, kind, namespace, name, port, has_port, rule)
        if invalid_kind:
            return ObjectRef(*fields, ReferenceStatus.INVALID_KIND, None, None, grant, invalid_kind, grant_group)
        if not grant.permitted:
            # Never reveal whether an un-granted target exists (docs/semantics.md#referencegrant):
            # RefNotPermitted either way.
            return ObjectRef(*fields, ReferenceStatus.REF_NOT_PERMITTED, None, None, grant, "", grant_group)
        scope_ns = None if cluster_scoped else namespace
        looked_up = (group, kind) if lookup_as is None else (lookup_as.group, lookup_as.kind)
        target = self.index.lookup(*looked_up, scope_ns, name)
        self._note("lookup", looked_up, scope_ns, name, target)
        if target is None:
            status, detail = self._missing(how, purpose, (group, kind), namespace, scope_ns, name)
            return ObjectRef(*fields, status, None, None, grant, detail, grant_group)
        port_section = None
        status = ReferenceStatus.RESOLVED
        if port is not None and looked_up == (CORE, "Service"):
            port_section = self._service_port(target, port)
            if port_section is None and self.index.malformed(target).tainted("spec", "ports"):
                status = ReferenceStatus.MALFORMED  # the port may be the malformed one (PL010): not checked
        return ObjectRef(*fields, status, target, port_section, grant, "", grant_group)

    def _grant_check(self, owner: K8sObject, group: str, kind: str, namespace: str, name: str) -> GrantCheck:
        """Whether a ReferenceGrant lets `owner` reference the object: what `ReferenceGrants.check`
        answers, without making the edge it is asked with for a reference that crosses no
        namespace (most references stay in their own)."""
        owner_namespace = owner.namespace or ""
        if namespace == owner_namespace:
            return SAME_NAMESPACE
        return self.grants.check(Reference(owner.group, owner.kind, owner_namespace, group, kind, namespace, name))

    def _missing(
        self, how: Resolving, purpose: str, kind_of: tuple[str, str], namespace: str, scope_ns: str | None, name: str
    ) -> tuple[ReferenceStatus, str]:
        """The status of a reference to an object of `kind_of` (as written, its group defaulted)
        that the input does not hold, and its detail; `scope_ns` is None for a cluster-scoped kind."""
        group, kind = kind_of
        lookup_as = how.lookup_as
        looked_up = kind_of if lookup_as is None else (lookup_as.group, lookup_as.kind)
        if self.external.match(group, kind, scope_ns, name) or (
            lookup_as is not None and self.external.match(*looked_up, scope_ns, name)
        ):
            return ReferenceStatus.EXTERNAL, ""
        made = self._made(looked_up, scope_ns, name)
        if made is not None:
            return ReferenceStatus.PRODUCED, made
        if lookup_as is not None:
            # A kind the input's cluster serves (a Service).
            return (
                ReferenceStatus.NOT_FOUND,
                f"its controller looks it up as the {lookup_as.kind} {namespace}/{name}, not in the input either",
            )
        if not how.check_existence and not self._manages(group, kind, namespace):
            # Secrets and ConfigMaps often live outside the repository: checked only where
            # the input holds objects of that kind in that namespace.
            return ReferenceStatus.UNCHECKED, ""
        if (
            not self._kind_known(group, kind)
            and not self._holds_kind(group, kind)
            # A backend kind the controller of every parent resolves itself (Envoy Gateway's
            # Backend, `backendRefsByKind`) is one it serves: a missing one is not found,
            # whether or not the input holds others of the kind.
            and not (how.group_for_kind is not None and purpose in _BACKEND_PURPOSES)
        ):
            return ReferenceStatus.OPAQUE, ""
        return ReferenceStatus.NOT_FOUND, ""

    def _made(self, kind: tuple[str, str], namespace: str | None, name: str) -> str | None:
        """What makes the object in the cluster (an object of the input through a producer), in
        words; None: nothing."""
        made = self.resolution.producers().made(*kind, namespace, name)
        said = made.describe() if made is not None else None
        self._note("made", kind, namespace, name, said)
        return said

    def _cluster_scoped(self, group: str, kind: str) -> bool:
        """Whether the run's kinds (built-in, CRDs, profiles) say the kind is cluster-scoped."""
        scoped = self.index.kinds.is_cluster_scoped(group, kind)
        self._note("scoped", group, kind, scoped)
        return scoped

    def _kind_known(self, group: str, kind: str) -> bool:
        """Whether the run's kinds know the kind."""
        known = self.index.kinds.get(group, kind) is not None
        self._note("kind", group, kind, known)
        return known

    def _holds_kind(self, group: str, kind: str) -> bool:
        """Whether the input holds an object of the kind."""
        held = bool(self.index.of_kind(group, kind))
        self._note("holds", group, kind, held)
        return held

    def _invalid_kind(self, purpose: str, group: str, kind: str) -> str:
        """Why no object of the kind can be this backend reference, or "" (InvalidKind)."""
        if purpose not in _BACKEND_PURPOSES:
            return ""
        if group == CORE and kind != "Service":
            # The core group has one backend kind: any other is "unknown or unsupported", and the
            # Gateway API requires ResolvedRefs=False, reason InvalidKind (RouteReasonInvalidKind).
            return "in the core group, where Service is the only backend kind"
        if group == GATEWAY_GROUP and kind in ROUTE_KINDS:
            # A route is never a backend: naming one delegates traffic where the implementation
            # supports route delegation (`_delegation`), and is an unsupported kind elsewhere.
            return ", a route; the controllers of its Gateways do not delegate traffic to routes"
        if self.index.options.complete and group != CORE and not self._knows_group(group):
            # With --complete, a group nothing knows (no built-in kind, CRD, profile or object in
            # the input belongs to it) names a kind the cluster does not serve.
            return f"in group {group}, which no CRD, built-in kind or object in the input belongs to (--complete)"
        return ""

    def _service_port(self, service: K8sObject, port: int) -> Section | None:
        """The first port section of a Service with this port number."""
        table = self._ports.get(service)
        if table is None:
            # Read once per Service: every backend reference to it asks.
            table = self._ports[service] = {}
            ports = _list(service.spec.get("ports"))
            for section in self.index.sections(service):
                entry = ports[section.position] if section.position < len(ports) else None
                number = _int(entry.get("port")) if isinstance(entry, dict) else None
                if number is not None:
                    table.setdefault(number, section)
        return table.get(port)

    def service_ports(self, service: K8sObject) -> list[int]:
        return [
            p for p in (_int(e.get("port")) for e in _list(service.spec.get("ports")) if isinstance(e, dict)) if p is not None
        ]

    def _manages(self, group: str, kind: str, namespace: str) -> bool:
        """Whether the input holds objects of this kind in this namespace (the repository manages them),
        or is declared complete (`--complete`: nothing exists outside it)."""
        if self.index.options.complete:
            return True
        namespaces = self._managed.get((group, kind))
        if namespaces is None:
            namespaces = self._managed[(group, kind)] = {o.namespace or "" for o in self.index.of_kind(group, kind)}
        # An object of the input that makes one there (a cert-manager Certificate) is evidence too.
        managed = namespace in namespaces or self.resolution.producers().makes_in(group, kind, namespace)
        self._note("manages", group, kind, namespace, managed)
        return managed

    def _knows_group(self, group: str) -> bool:
        known = group in self._known_groups()
        self._note("group", group, known)
        return known

    def _known_groups(self) -> frozenset[str]:
        if self._groups is None:
            profiles = self.resolution.profiles
            self._groups = (
                self.index.groups()
                | {p.group for p in profiles}
                | {k.group for p in profiles for k in (*p.targets.kinds, *p.targets.implementation_kinds)}
            )
        return self._groups

    def _group_for_kind(self, kinds: Sequence[TargetKind], kind: str) -> str | None:
        """The group a by-kind reference resolves in: the one of `kinds` (what a profile lists for
        the reference) with this kind name that the kind registry knows (ClusterTrustBundle:
        certificates.k8s.io)."""
        for k in kinds:
            if k.kind == kind and self.index.kinds.get(k.group, k.kind) is not None:
                return k.group
        return None
