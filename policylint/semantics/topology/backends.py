"""Route rule › backend and a policy's backend references (docs/semantics.md#backends):
`backendRefs`, mirror and ext-auth filters, hosts declared by other objects (profile host
sources), each resolved as the route's implementations resolve it."""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from policylint.input.positions import join
from policylint.k8s.fieldtypes import GATEWAY_GROUP
from policylint.k8s.objects import K8sObject
from policylint.profiles.implementations import HostSource, Implementation
from policylint.profiles.registry import TargetKind
from policylint.semantics.grants import NOT_NEEDED
from policylint.semantics.topology.attachment import Attachments
from policylint.semantics.topology.delegation import Delegation
from policylint.semantics.topology.model import (
    CORE,
    ObjectRef,
    ParentAttachment,
    _dict,
    _int,
    _list,
    _ref_malformed,
    _str,
    expand_pattern,
)
from policylint.semantics.topology.references import Read, Resolving
from policylint.vocabulary import ReferenceStatus

if TYPE_CHECKING:
    from policylint.k8s.admissions import Admissions
    from policylint.semantics.resolution import Resolution


# An `exportTo` naming more namespaces than this counts as every namespace (`_declaring`): real
# ServiceEntries name a few, and the bound keeps a hostile one from costing hosts × namespaces.
MAX_EXPORTS = 64

# How a route's backend reference is resolved when no parent's controller resolves its kind in
# its own way: by the Gateway API's rules, with a ReferenceGrant across namespaces, or without one
# under a mesh route (GEP-1294).
_BACKEND = Resolving("Service")
_MESH_BACKEND = Resolving("Service", grant_needed=False)


def _group_of_kind(kinds: Sequence[TargetKind], kind: str) -> str | None:
    return next((k.group for k in kinds if k.kind == kind), None)


def _filter_refs(
    add: Callable[[str, dict[str, Any], str, int], None], base: tuple[int | str, ...], raw_filters: Any, rule: int
) -> None:
    """The backend references of a route rule's (or a backend's) filters, given to `add`."""
    # Paths are joined only for the references there are: most filters hold none.
    for k, f in enumerate(_list(raw_filters)):
        f = _dict(f)
        for field, purpose in (("requestMirror", "mirror"), ("externalAuth", "ext-auth")):
            raw = _dict(f.get(field)).get("backendRef")
            if isinstance(raw, dict):
                add(join("spec.rules", *base, "filters", k, field, "backendRef"), raw, purpose, rule)


class Backends(Attachments, Delegation):
    """The backends of routes and policies."""

    def __init__(self, resolution: Resolution, admissions: Admissions) -> None:
        super().__init__(resolution, admissions)
        # Host source -> host -> the objects declaring it, by namespace and name, each with the
        # namespaces it exports the host to (None: every one); and, per host looked up, the first
        # object exporting it everywhere and the first per namespace (`_declaring`).
        self._hosts: dict[HostSource, dict[str, list[tuple[K8sObject, frozenset[str] | None]]]] = {}
        self._declared: dict[tuple[HostSource, str], tuple[K8sObject | None, dict[str, K8sObject]]] = {}

    def _backend_error(self, ref: ObjectRef) -> str | None:
        """Why a controller cannot program a policy through this backend reference of its spec, if
        it cannot: the backend is missing, not granted, or not reachable on the port named (Envoy
        Gateway then sets the policy Accepted=False, Invalid: "ExtAuth: service default/x not found")."""
        where = ref.label()
        if ref.status == ReferenceStatus.NOT_FOUND:
            return f"{ref.path}: {where} not found"
        if ref.status == ReferenceStatus.INVALID_KIND:
            return f"{ref.path}: {ref.kind} (group {ref.group or 'core'}) is not a kind this reference supports"
        if ref.status == ReferenceStatus.REF_NOT_PERMITTED:
            return f"{ref.path}: {where} is in another namespace and no ReferenceGrant there permits the reference"
        if ref.status == ReferenceStatus.MISSING_DATA:
            return f"{ref.path}: {ref.label()} {ref.detail}"
        target = ref.target
        if ref.status != ReferenceStatus.RESOLVED or target is None or (target.group, target.kind) != (CORE, "Service"):
            return None
        if target.spec.get("type") == "ExternalName":
            return None  # how its port is used is implementation-specific (PL412 skips it too)
        if not ref.has_port:
            return f"{ref.path}: a port of Service {ref.namespace}/{ref.name} must be given"
        if ref.port is not None and ref.port_section is None:
            return f"{ref.path}: port {ref.port} not found on Service {ref.namespace}/{ref.name}"
        return None

    def _kept_route_backends(self, route: K8sObject) -> list[ObjectRef]:
        """`_route_backends`, reused from the last build while every read it made answers the
        same, else resolved with its reads recorded."""
        if self._kept is None:
            return self._route_backends(route)
        return self._recorded(self._kept.backends, route, self._route_backends, self._refs_hold)

    def _answers_alike(self, owner: K8sObject, read: Read) -> bool:
        if read[0] == "implementations":
            return self._parent_implementations(owner) == read[-1]
        return super()._answers_alike(owner, read)

    def _route_backends(self, route: K8sObject) -> list[ObjectRef]:
        out: list[ObjectRef] = []
        malformed = self.index.malformed(route)
        # GEP-1294 "Namespace boundaries": a mesh route (every parent a Service) "can send traffic
        # to backendRefs in any namespace ... without a ReferenceGrant"; a Gateway-bound route needs one.
        # Whether a route is a mesh route is what its parentRefs name, not whether they resolve:
        # a missing Service parent is PL406's one finding, and makes no grant due on the backends.
        # A function of the route's own parentRefs and the profiles: no read to record.
        mesh_only = self._mesh_only(route)

        known: list[list[Implementation | None]] = []

        def implementations() -> list[Implementation | None]:
            # The parents' implementations, worked out once per route and only for a reference
            # whose kind some implementation treats in its own way.
            if not known:
                known.append(self._parent_implementations(route))
                self._note("implementations", known[0])
            return known[0]

        # A Service named as the Gateway API writes it (no group or the core one, no kind or
        # Service), as nearly every reference is: no implementation reads a host or resolves a
        # backend by kind through it, so how it is resolved is the route's alone, asked of no
        # parent. Unless some implementation delegates to Services, it goes straight to
        # `_resolve_ref`, without the four questions below that each answer "no" for it.
        plain = _MESH_BACKEND if mesh_only else _BACKEND
        plain_delegates = (CORE, "Service") in self._delegated()

        def add(path: str, raw: dict[str, Any], purpose: str, rule: int) -> None:
            if _ref_malformed(malformed, path):
                return  # rejected with the route (PL010): resolving it would guess its group or kind
            if not plain_delegates and raw.get("kind", "Service") == "Service" and raw.get("group", CORE) == CORE:
                ref = self._resolve_ref(route, path, raw, purpose, plain, rule=rule)
                if ref is not None:
                    out.append(ref)
                return
            if purpose == "backend" and self._delegation(implementations, raw):
                out.append(self._delegate(route, path, raw, rule))
                return
            host = self._host_backend(route, implementations, path, raw, purpose, rule) if purpose != "ext-auth" else None
            if host is not None:
                out.append(host)
                return
            how = self._backend_resolving(implementations, raw, purpose, mesh_only)
            ref = self._resolve_ref(route, path, raw, purpose, how, rule=rule)
            if ref is not None:
                out.append(ref)

        for i, rule_raw in enumerate(_list(route.spec.get("rules"))):
            rule_raw = _dict(rule_raw)
            for j, backend in enumerate(_list(rule_raw.get("backendRefs"))):
                if isinstance(backend, dict):
                    # `join("spec.rules", i, "backendRefs", j)`, written out: a path for every backend.
                    add(f"spec.rules[{i}].backendRefs[{j}]", backend, "backend", i)
                    if "filters" in backend:  # most backends and rules have none
                        _filter_refs(add, (i, "backendRefs", j), backend["filters"], i)
            if "filters" in rule_raw:
                _filter_refs(add, (i,), rule_raw["filters"], i)
        return out

    def _backend_resolving(
        self, parents: Callable[[], list[Implementation | None]], raw: Mapping[str, Any], purpose: str, mesh_only: bool
    ) -> Resolving:
        """How a route's backend reference is resolved: as the Gateway API says, or by its kind as
        the controllers of the route's parents resolve it (`_backend_by_kind`, `_backend_resolved_as`)."""
        by_kind = self._backend_by_kind(parents, raw) if purpose != "ext-auth" else None
        lookup_as = self._backend_resolved_as(parents, raw) if purpose != "ext-auth" else None
        if by_kind is None and lookup_as is None:
            return _MESH_BACKEND if mesh_only else _BACKEND  # nearly every reference: made once
        return Resolving(
            "Service",
            grant_needed=not mesh_only,
            group_for_kind=by_kind,
            grant_as_written=by_kind is not None,
            lookup_as=lookup_as,
        )

    def _mesh_only(self, route: K8sObject) -> bool:
        """Whether every parent of the route is a Service (a mesh route: GEP-1294)."""
        parents = self.parents.get(route, [])
        return bool(parents) and all(self._mesh_parent(att.ref) for att in parents)

    def _host_backend(
        self,
        route: K8sObject,
        parents: Callable[[], list[Implementation | None]],
        path: str,
        raw: Mapping[str, Any],
        purpose: str,
        rule: int,
    ) -> ObjectRef | None:
        """A backendRef whose name is a host of an implementation's service registry (profile
        `implementations[].hostBackends`: Istio's Hostname kind), under a route whose parent
        Gateways all belong to that implementation or to one policylint does not know: resolved to
        the object of the input that declares the host and exports it to the route's namespace
        (the first by namespace and name). Not in the input, the host may still be in the
        registry (a ServiceEntry elsewhere, a Service's own name): OPAQUE, or NOT_FOUND with
        `--complete`. None for any other reference, and for one with a `namespace`, which the
        implementation refuses (left to the general resolution)."""
        kind = _str(raw.get("kind"))
        if kind is None or kind == "Service":
            return None  # most references: no implementation names a host by a Service
        group = _str(raw.get("group")) or CORE
        wanted = TargetKind(group, kind)
        sources = [
            source
            for i in self.resolution.profiles.implementations
            if wanted in i.host_backend_kinds
            for source in i.host_sources
        ]
        name = _str(raw.get("name"))
        if not sources or not name or "namespace" in raw:
            return None
        known = parents()
        if known and not any(i is None or wanted in i.host_backend_kinds for i in known):
            return None  # a controller known not to read hosts: an unsupported kind to it
        self._note("never")  # the hosts every object of the source kinds declares: not recorded
        namespace = route.namespace or ""
        declaring = sorted(
            (obj for source in sources if (obj := self._declaring(source, name, namespace)) is not None),
            key=lambda o: (o.namespace or "", o.name),
        )
        status = ReferenceStatus.RESOLVED
        detail = ""
        if not declaring:
            if self.external.match(group, kind, namespace, name):
                status = ReferenceStatus.EXTERNAL
            else:
                status = ReferenceStatus.NOT_FOUND if self.index.options.complete else ReferenceStatus.OPAQUE
            kinds = " or ".join(sorted({s.kind.kind for s in sources}))
            detail = f"no {kinds} of the input declares host {name} for namespace {namespace}"
        return ObjectRef(
            owner=route,
            path=path,
            purpose=purpose,
            group=group,
            kind=kind,
            namespace=namespace,
            name=name,
            port=_int(raw.get("port")),
            has_port="port" in raw,
            rule=rule,
            status=status,
            target=declaring[0] if declaring else None,
            grant=NOT_NEEDED,
            detail=detail,
        )

    def _declaring(self, source: HostSource, host: str, namespace: str) -> K8sObject | None:
        """The object of a host source kind that declares `host` and exports it to `namespace`
        (`exportTo`: absent, empty or `*` every namespace, `.` the object's own, `~` none), the
        first by namespace and name. The kind is read once and each host's answers worked out
        once, in time linear in the input (an `exportTo` of more than `MAX_EXPORTS` namespaces
        counts as every namespace)."""
        answers = self._declared.get((source, host))
        if answers is None:
            table = self._hosts.get(source)
            if table is None:
                table = self._hosts[source] = {}
                objects = sorted(
                    self.index.of_kind(source.kind.group, source.kind.kind), key=lambda o: (o.namespace or "", o.name)
                )
                for obj in objects:
                    raw = _list(obj.spec.get(source.export_to)) if source.export_to else []
                    export = {e for e in raw if isinstance(e, str)}
                    visible = None
                    if export and "*" not in export and len(export) <= MAX_EXPORTS:
                        visible = frozenset((obj.namespace or "") if e == "." else e for e in export if e != "~")
                    for h in dict.fromkeys(h for h in _list(obj.spec.get(source.hosts)) if isinstance(h, str)):
                        table.setdefault(h, []).append((obj, visible))
            everywhere: K8sObject | None = None
            per_namespace: dict[str, K8sObject] = {}
            for obj, visible in table.get(host, ()):
                if visible is None:
                    everywhere = everywhere or obj
                else:
                    for ns in visible:
                        per_namespace.setdefault(ns, obj)
            answers = self._declared[(source, host)] = (everywhere, per_namespace)
        everywhere, per_namespace = answers
        here = per_namespace.get(namespace)
        if everywhere is None or here is None:
            return everywhere or here
        return min(everywhere, here, key=lambda o: (o.namespace or "", o.name))

    def _backend_resolved_as(
        self, parents: Callable[[], list[Implementation | None]], raw: Mapping[str, Any]
    ) -> TargetKind | None:
        """The kind a backendRef is looked up as, when the controller of every parent Gateway of
        the route looks that kind up as another (profile `implementations[].backendsResolvedAs`:
        Istio takes a ServiceImport as the Service of its name); None otherwise."""
        kind = _str(raw.get("kind"))
        if kind is None or kind == "Service":
            return None
        written = TargetKind(_str(raw.get("group")) or CORE, kind)
        known = parents()
        if not known or any(i is None for i in known):
            return None
        targets = {dict(i.backends_resolved_as).get(written) for i in known if i is not None}
        if len(targets) != 1:
            return None  # controllers that disagree: the kind as written
        (target,) = targets
        return target

    def _backend_by_kind(
        self, parents: Callable[[], list[Implementation | None]], raw: Mapping[str, Any]
    ) -> Callable[[str], str | None] | None:
        """How a backendRef's kind picks its group, when the controller of every parent Gateway
        of the route resolves backends by kind alone (profile `implementations[].backendRefsByKind`)
        and the group written is one of its backend groups; None for the Gateway API's own
        resolution (group and kind together), which a plain Service reference always gets."""
        group = _str(raw.get("group")) or CORE
        kind = _str(raw.get("kind")) or "Service"
        if group == CORE and kind == "Service":
            return None
        known = parents()
        if not known or any(i is None for i in known):
            return None
        kinds = {i.backend_kinds_by_kind for i in known if i is not None}
        if len(kinds) != 1:
            return None  # Gateways of controllers that disagree: the specification decides
        (by_kind,) = kinds
        if group not in {k.group for k in by_kind}:
            return None
        return functools.partial(_group_of_kind, by_kind)

    def _parent_implementations(self, route: K8sObject) -> list[Implementation | None]:
        """The implementation of each parent Gateway of the route (through a ListenerSet too),
        by its GatewayClass's controllerName; None for one policylint does not know."""
        gateways = (self._parent_gateway(a) for a in self.parents.get(route, []))
        return [self.gateway_implementation(g) for g in gateways if g is not None]

    def _parent_gateway(self, attachment: ParentAttachment) -> K8sObject | None:
        parent = attachment.parent
        if parent is None or parent.group != GATEWAY_GROUP:
            return None
        if parent.kind == "Gateway":
            return parent
        if parent.kind == "ListenerSet":
            set_att = self.listener_sets.get(parent)
            return set_att.gateway if set_att is not None else None
        return None

    def _policy_backends(self, obj: K8sObject, fields: Sequence[str], *, grants: bool = True) -> list[ObjectRef]:
        """The backend references at `fields` of a policy's (or a holder's) spec; `grants`: a
        reference into another namespace needs a ReferenceGrant."""
        out: list[ObjectRef] = []
        for pattern in fields:
            for path, raw in expand_pattern(obj.data, pattern):
                if isinstance(raw, dict):
                    ref = self._resolve_ref(obj, path, raw, "policy-backend", Resolving("Service", grant_needed=grants))
                    if ref is not None:
                        out.append(ref)
        return out
