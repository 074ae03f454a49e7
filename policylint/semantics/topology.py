"""The traffic hierarchy as a controller sees it (docs/semantics.md#the-hierarchy).

GatewayClass › Gateway › (ListenerSet) › listener › Route › rule › backend.
Every edge is resolved with the API defaults and admission rules a controller
applies, so that rules never cry "not found" where a controller would attach:

- Gateway → GatewayClass by `gatewayClassName` (#gateway-and-gatewayclass);
- ListenerSet → Gateway by `parentRef`, admitted by the Gateway's
  `allowedListeners` (default None; #listenersets);
- Route → Gateway/ListenerSet listeners by `parentRefs` (defaults: group
  gateway.networking.k8s.io, kind Gateway, the route's namespace), filtered by
  `sectionName` and `port`, admitted by `allowedRoutes` kinds (or the protocol's
  defaults), namespaces (Same/All/Selector over Namespace labels) and hostname
  intersection (#route-attachment);
- Route rule → backends (`backendRefs`, mirror and ext-auth filters; defaults
  group "" kind Service, the route's namespace), Service ports matched by number
  (#backends); any other backend kind is an opaque node that resolves when the
  object is in the input;
- Gateway/ListenerSet → Secrets and CA ConfigMaps (#certificates);
- every cross-namespace reference checked against ReferenceGrants (#referencegrant).

(`#...` are sections of docs/semantics.md.)

A field of the wrong JSON type (PL010, `policylint.k8s.fieldtypes`) makes the API
server reject its object. The object stays in the topology, so nothing that names
it is reported missing, and what depends on the malformed part is *unknown*: the
outcome that reports nothing is assumed, with the reason recorded (status
`Malformed`, or an assumption), so that the malformed field is the one finding:

- a malformed listener admits the routes that could attach to it (a malformed
  `name` or `port` matches any sectionName or port); a Gateway or ListenerSet
  whose `listeners` is malformed admits every parentRef to it;
- a malformed parentRef is attached (status `Malformed`), its parent not
  evaluated; a route whose `parentRefs` is malformed counts as attached
  (`parents_malformed`);
- malformed route `hostnames` intersect every listener hostname;
- a ListenerSet with a malformed `parentRef`, or whose Gateway has a malformed
  `allowedListeners`, is attached;
- a malformed backend, certificate or CA reference is not resolved; a reference
  to a port of a Service whose `ports` are malformed is not checked;
- a malformed ReferenceGrant permits references into its namespace (`policylint.semantics.grants`);
- a sectionName that may name a malformed section is not checked (`ProjectIndex.sections`).

Everything is computed once per run (the effective-policy engine walks it too).
"""

from __future__ import annotations

import dataclasses
import functools
from collections import defaultdict
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal

from policylint.input.positions import format_path, join, parse_path
from policylint.k8s.fieldtypes import GATEWAY_GROUP, INTEGER, Malformed, has_type
from policylint.k8s.hostnames import effective_hostnames
from policylint.k8s.names import ns_name
from policylint.k8s.objects import K8sObject
from policylint.k8s.selectors import LabelSelector, SelectorError, parse_selector
from policylint.profiles.registry import DataSpec, HostSource, Implementation, PolicyProfile, TargetKind
from policylint.semantics.grants import NOT_NEEDED, GrantCheck, Reference
from policylint.semantics.listeners import port_conflict, unsupported_protocol
from policylint.semantics.namespace_admission import (
    ALLOWED_LISTENERS_PATH,
    UnknownNamespace,
    Verdict,
    listener_namespaces_path,
    selector_verdict,
)
from policylint.semantics.parameters import PURPOSE as PARAMETERS
from policylint.semantics.parameters import parameters_ref, unserved
from policylint.values import frozen
from policylint.vocabulary import Admission, Attachment, ReferenceStatus, Traffic

if TYPE_CHECKING:
    from policylint.k8s.index import Section
    from policylint.profiles.policy import Policy
    from policylint.semantics.resolution import Resolution, TargetResolution

CORE = ""
ROUTE_KINDS = ("HTTPRoute", "GRPCRoute", "TLSRoute", "TCPRoute", "UDPRoute")
# Route kinds whose `spec.hostnames` take part in listener matching
# (docs/semantics.md#hostname-intersection).
HOSTNAME_ROUTE_KINDS = ("HTTPRoute", "GRPCRoute", "TLSRoute")
# Route kinds a listener admits when `allowedRoutes.kinds` is empty, by protocol
# (docs/semantics.md#listener-admission; the common mapping Envoy Gateway implements). Other protocols are implementation-specific:
# any kind may be admitted, so none is rejected.
PROTOCOL_ROUTE_KINDS: Mapping[str, tuple[str, ...]] = {
    "HTTP": ("HTTPRoute", "GRPCRoute"),
    "HTTPS": ("HTTPRoute", "GRPCRoute"),
    "TCP": ("TCPRoute",),
    "UDP": ("UDPRoute",),
}
TLS_ROUTE_KINDS = {"Passthrough": ("TLSRoute",), "Terminate": ("TLSRoute", "TCPRoute")}

# Attachment outcomes and reference outcomes (policylint.vocabulary).
ACCEPTED = Attachment.ACCEPTED
EXTERNAL = Attachment.EXTERNAL
PARENT_NOT_FOUND = Attachment.PARENT_NOT_FOUND
NO_MATCHING_PARENT = Attachment.NO_MATCHING_PARENT
NOT_ALLOWED_BY_LISTENERS = Attachment.NOT_ALLOWED_BY_LISTENERS
NO_MATCHING_LISTENER_HOSTNAME = Attachment.NO_MATCHING_LISTENER_HOSTNAME
LISTENER_SET_NOT_ATTACHED = Attachment.LISTENER_SET_NOT_ATTACHED
MESH = Attachment.MESH
UNKNOWN_PARENT_KIND = Attachment.UNKNOWN_PARENT_KIND
INVALID_REF = Attachment.INVALID_REF
MALFORMED = Attachment.MALFORMED
LABELS_UNKNOWN = Attachment.NAMESPACE_LABELS_UNKNOWN
RESOLVED = ReferenceStatus.RESOLVED
NOT_FOUND = ReferenceStatus.NOT_FOUND
REF_NOT_PERMITTED = ReferenceStatus.REF_NOT_PERMITTED
OPAQUE = ReferenceStatus.OPAQUE
UNCHECKED = ReferenceStatus.UNCHECKED
# An `exportTo` naming more namespaces than this counts as every namespace (`_declaring`): real
# ServiceEntries name a few, and the bound keeps a hostile one from costing hosts × namespaces.
MAX_EXPORTS = 64
# The references that are BackendObjectReferences of a route.
_BACKEND_PURPOSES = ("backend", "mirror", "ext-auth")


@frozen(eq=False)
class Listener:
    owner: K8sObject  # the Gateway or ListenerSet that declares it
    section: Section
    port: int | None
    protocol: str | None
    hostname: str | None
    tls_mode: str | None
    allowed_from: str
    allowed_selector: LabelSelector | None
    allowed_kinds: tuple[tuple[str, str], ...] | None  # None: the protocol's defaults
    # Some field of the listener has the wrong type (PL010): what it admits is unknown, so it is
    # assumed to admit; a malformed name or port matches any sectionName or port.
    malformed: bool = False
    unknown_name: bool = False
    unknown_port: bool = False
    # (position in allowedRoutes.kinds, kind) of the Gateway API route kinds listed there that the
    # protocol cannot carry: the listener gets ResolvedRefs=False, InvalidRouteKinds.
    uncarried: tuple[tuple[int, str], ...] = ()

    @property
    def name(self) -> str | None:
        return self.section.name

    @property
    def path(self) -> str:
        return self.section.path

    def label(self) -> str:
        return f"{self.owner.kind} {_where(self.owner)}#{self.name}"

    def default_kinds(self) -> tuple[str, ...] | None:
        if self.protocol == "TLS":
            return TLS_ROUTE_KINDS.get(self.tls_mode or "Terminate")
        return PROTOCOL_ROUTE_KINDS.get(self.protocol or "")


@frozen
class ParentRef:
    path: str
    group: str
    kind: str
    namespace: str
    name: str
    section_name: str | None
    port: int | None
    malformed: bool = False  # the parentRef (or `parentRefs`) has a field of the wrong type (PL010)


@frozen
class Rejection:
    listener: Listener
    check: Admission  # the first admission check that failed (Envoy Gateway's order)
    message: str
    also: tuple[Rejection, ...] = ()  # the other checks that failed on this listener

    @property
    def reason(self) -> Attachment:
        """The route status reason this rejection alone would give."""
        return NO_MATCHING_LISTENER_HOSTNAME if self.check is Admission.HOSTNAME else NOT_ALLOWED_BY_LISTENERS


@frozen
class ParentAttachment:
    route: K8sObject
    ref: ParentRef
    parent: K8sObject | None
    status: Attachment
    listeners: tuple[Listener, ...] = ()  # the listeners that admit the route
    rejections: tuple[Rejection, ...] = ()
    message: str = ""
    assumptions: tuple[str, ...] = ()  # e.g. a malformed listener assumed to admit
    # The listeners (or the ListenerSet's Gateway) whose namespace selector could not be decided:
    # the whole verdict when the status is NamespaceLabelsUnknown, else listeners besides those
    # that admit the route, which it may or may not be attached to as well.
    unknown: tuple[UnknownNamespace, ...] = ()

    @property
    def attached(self) -> bool:
        """Attached for certain; `undecided` is neither attached nor refused."""
        return self.status in (ACCEPTED, EXTERNAL, MESH, UNKNOWN_PARENT_KIND, MALFORMED)

    @property
    def undecided(self) -> bool:
        return self.status is LABELS_UNKNOWN


@frozen
class ListenerSetAttachment:
    listener_set: K8sObject
    gateway: K8sObject | None
    status: Attachment  # Accepted | External | ParentNotFound | NotAllowed | InvalidRef | Malformed
    message: str = ""
    path: str = "spec.parentRef"
    assumptions: tuple[str, ...] = ()
    unknown: UnknownNamespace | None = None  # why the status is NamespaceLabelsUnknown

    @property
    def attached(self) -> bool:
        return self.status in (ACCEPTED, EXTERNAL, MALFORMED)

    @property
    def undecided(self) -> bool:
        return self.status is LABELS_UNKNOWN


@frozen
class ObjectRef:
    """A reference from one object to another (backend, certificate, CA bundle, policy backend)."""

    owner: K8sObject
    path: str
    purpose: str  # backend | mirror | ext-auth | policy-backend | certificate | client-certificate | ca-certificate
    group: str
    kind: str
    namespace: str
    name: str
    port: int | None
    has_port: bool
    rule: int | None  # route rule position, for route backends
    status: ReferenceStatus
    target: K8sObject | None = None
    port_section: Section | None = None
    grant: GrantCheck | None = None
    detail: str = ""  # MissingData: what the object lacks; a backend not found: how its controller looks
    # The group a ReferenceGrant had to name, where it is not `group`: a controller that resolves
    # by kind matches grants against the group as written (`_resolve_ref`, `grant_as_written`).
    grant_group: str | None = None
    # A Gateway's frontend CA reference in a `spec.tls.frontend.perPort` entry: that entry's port
    # (None: the default configuration, or another kind of reference). `frontend_listeners`.
    tls_port: int | None = None
    # A policy's certificate or object reference: what its controller writes when the reference is
    # invalid (profile `certificateRefs.refusedStatus`, `objectRefs[].refusedStatus`; empty:
    # `Accepted=False, Invalid`).
    refused_status: str = ""
    # ... and when it names another namespace no ReferenceGrant opens (`objectRefs[].notPermittedStatus`).
    not_permitted_status: str = ""

    def label(self) -> str:
        return f"{self.kind} {self.namespace}/{self.name}" if self.namespace else f"{self.kind} {self.name}"

    def grant_reference(self) -> Reference:
        """The edge `grant` was checked for: what a ReferenceGrant must permit."""
        owner = self.owner
        group = self.group if self.grant_group is None else self.grant_group
        return Reference(owner.group, owner.kind, owner.namespace or "", group, self.kind, self.namespace, self.name)


@frozen
class ClassRef:
    gateway: K8sObject
    name: str | None
    status: ReferenceStatus  # Resolved | NotFound | External | InvalidRef
    target: K8sObject | None = None
    # The controllerName of a class the implementation serves without an object (External).
    builtin_controller: str | None = None

    @property
    def controller(self) -> str | None:
        if self.target is not None:
            return _str(self.target.spec.get("controllerName"))
        return self.builtin_controller


def _kind_admission(listener: Listener, route: K8sObject) -> Rejection | None:
    """allowedRoutes.kinds, or the kinds the listener's protocol carries when it lists none."""
    if not listener.malformed and unsupported_protocol(listener.protocol):
        # Not accepted, with no supported kinds (conformance test GatewayListenerUnsupportedProtocol:
        # `SupportedKinds: []`): no route attaches to it, whatever it lists.
        message = f"listener protocol {listener.protocol} is unsupported (UnsupportedProtocol): it carries no route kind"
        return Rejection(listener, Admission.PROTOCOL_KIND, message)
    if listener.allowed_kinds is None:
        defaults = listener.default_kinds()
        if defaults is not None and route.kind not in defaults:
            message = f"a {listener.protocol} listener carries {', '.join(defaults)}, not {route.kind}"
            return Rejection(listener, Admission.PROTOCOL_KIND, message)
        return None
    if (route.group, route.kind) not in listener.allowed_kinds:
        kinds = ", ".join(k for _, k in listener.allowed_kinds)
        return Rejection(listener, Admission.KIND_NOT_LISTED, f"allowedRoutes.kinds admits {kinds}, not {route.kind}")
    if any(kind == route.kind for _, kind in listener.uncarried):
        # A listed kind the protocol cannot carry: the listener gets ResolvedRefs=False,
        # InvalidRouteKinds, and such routes are not attached (docs/semantics.md#listener-admission).
        carried = listener.default_kinds() or ()
        message = (
            f"allowedRoutes.kinds lists {route.kind}, but a {listener.protocol} listener cannot carry it"
            f" (it carries {', '.join(carried)}; InvalidRouteKinds)"
        )
        return Rejection(listener, Admission.KIND_NOT_CARRIED, message)
    return None


def _where(obj: K8sObject) -> str:
    return ns_name(obj.namespace, obj.name)


def _int(value: Any) -> int | None:
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, float) and has_type(value, INTEGER):
        return int(value)  # kubectl sends `80.0` as 80 (YAML to JSON goes through float64)
    return None


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


_REF_FIELDS = ("group", "kind", "name", "namespace", "port")


def _ref_malformed(malformed: Malformed, path: str) -> bool:
    """Whether the reference at `path`, or one of its own fields, has the wrong type (PL010).

    Malformed filters nested in a backendRef are not the reference's own problem.
    """
    if not malformed:
        return False
    parts = parse_path(path)
    return malformed.broken(*parts) or any(malformed.broken(*parts, f) for f in _REF_FIELDS)


class Topology:
    """The resolved hierarchy. Build with `Topology(resolution)`; everything is computed eagerly, once."""

    def __init__(self, resolution: Resolution) -> None:
        self.resolution = resolution
        self.index = resolution.index
        self.external = self.index.options.external
        self.grants = resolution.grants()
        self._listeners: dict[int, list[Listener]] = {}
        self.class_refs: dict[int, ClassRef] = {}
        self.listener_sets: dict[int, ListenerSetAttachment] = {}
        self._sets_of_gateway: dict[int, list[K8sObject]] = defaultdict(list)
        self.parents: dict[int, list[ParentAttachment]] = {}
        self._routes_on: dict[int, list[tuple[K8sObject, ParentAttachment]]] = defaultdict(list)
        self.references: dict[int, list[ObjectRef]] = {}
        # id(policy) -> why its controller rejects its spec (policy_errors).
        self.spec_errors: dict[int, tuple[str, ...]] = {}
        self._managed: dict[tuple[str, str], set[str]] = {}
        # The parent kinds besides Service that mean mesh traffic (profile `meshParents`).
        self._mesh_parents = frozenset(k for i in self.resolution.profiles.implementations for k in i.mesh_parent_kinds)
        # Host source -> host -> the objects declaring it, by namespace and name, each with the
        # namespaces it exports the host to (None: every one); and, per host looked up, the first
        # object exporting it everywhere and the first per namespace (`_declaring`).
        self._hosts: dict[HostSource, dict[str, list[tuple[K8sObject, frozenset[str] | None]]]] = {}
        self._declared: dict[tuple[HostSource, str], tuple[K8sObject | None, dict[str, K8sObject]]] = {}
        # id(Gateway) -> its HTTPS listeners by port, those on an unknown port, and those the
        # frontend `default` applies to (`frontend_listeners`).
        self._frontend: dict[int, tuple[dict[int, list[Listener]], list[Listener], list[Listener]]] = {}
        self._referrers: dict[int, list[ObjectRef]] = defaultdict(list)
        self._groups: frozenset[str] | None = None
        self._target_errors: dict[tuple[int, int], tuple[TargetError, ...]] = {}
        self._delegated_by: dict[int, list[K8sObject]] = defaultdict(list)
        self._conflicts: dict[int, tuple[Listener, str]] = {}  # id(listener) -> (the one it yields to, why)
        self._build()

    # -- queries ---------------------------------------------------------------------------

    def gateways(self) -> Sequence[K8sObject]:
        return self.index.of_kind(GATEWAY_GROUP, "Gateway")

    def routes(self) -> Iterator[K8sObject]:
        for kind in ROUTE_KINDS:
            yield from self.index.of_kind(GATEWAY_GROUP, kind)

    def listeners(self, owner: K8sObject) -> list[Listener]:
        """The listeners an object declares itself (a Gateway never includes its ListenerSets')."""
        return self._listeners.get(id(owner), [])

    def listener_sets_of(self, gateway: K8sObject) -> list[K8sObject]:
        """ListenerSets attached to the Gateway (admitted by allowedListeners)."""
        return self._sets_of_gateway.get(id(gateway), [])

    def routes_on(self, listener: Listener) -> list[tuple[K8sObject, ParentAttachment]]:
        return [(r, a) for r, a in self._routes_on.get(id(listener.owner), []) if listener in a.listeners]

    def routes_of(self, owner: K8sObject) -> list[tuple[K8sObject, ParentAttachment]]:
        """Routes attached to any listener of a Gateway or ListenerSet."""
        return self._routes_on.get(id(owner), [])

    def parent_attachments(self, route: K8sObject) -> list[ParentAttachment]:
        return self.parents.get(id(route), [])

    def refs_from(self, obj: K8sObject) -> list[ObjectRef]:
        return self.references.get(id(obj), [])

    def refs_to(self, obj: K8sObject) -> list[ObjectRef]:
        return self._referrers.get(id(obj), [])

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

    def carries_traffic(self, obj: K8sObject) -> tuple[bool, str]:
        """Whether traffic can reach `obj` at all, and why not. Kinds not modelled here always can."""
        traffic, why = self.traffic(obj)
        return traffic is Traffic.CARRIES, why

    def traffic(self, obj: K8sObject) -> tuple[Traffic, str]:
        """Whether traffic can reach `obj`, as a verdict with its cause, and the cause in words."""
        if obj.group != GATEWAY_GROUP:
            return Traffic.CARRIES, ""
        if obj.kind in ROUTE_KINDS:
            attachments = self.parent_attachments(obj)
            if not attachments and self.parents_malformed(obj):
                return Traffic.CARRIES, ""
            if self.delegated_by(obj) and self._delegated_traffic(obj, set()):
                return Traffic.CARRIES, ""  # handed traffic by a route that carries it (route delegation)
            if not attachments:
                if obj.spec.get("useDefaultGateways") == "All":
                    # Experimental default Gateways (docs/semantics.md#routes-without-parents): claimed
                    # by any Gateway with defaultScope All, which may live outside the input; not modelled, so assume it.
                    return Traffic.CARRIES, ""
                return Traffic.NO_PARENT_REFS, f"{obj.kind} {_where(obj)} has no parentRefs, so it is attached to nothing"
            if any(a.attached for a in attachments):
                return Traffic.CARRIES, ""
            undecided = [u for a in attachments if a.undecided for u in a.unknown]
            if undecided:
                return Traffic.UNKNOWN, f"{obj.kind} {_where(obj)} may or may not be attached: {undecided[0].message()}"
            reasons = "; ".join(a.message for a in attachments if a.message)
            return Traffic.NOT_ATTACHED, f"{obj.kind} {_where(obj)} is attached to no listener ({reasons})"
        if obj.kind == "ListenerSet":
            att = self.listener_sets.get(id(obj))
            if att is not None and att.undecided and att.unknown is not None:
                return Traffic.UNKNOWN, f"ListenerSet {_where(obj)} may or may not be attached: {att.unknown.message()}"
            if att is not None and not att.attached:
                return (
                    Traffic.LISTENER_SET_NOT_ATTACHED,
                    f"ListenerSet {_where(obj)} is not attached to its Gateway ({att.message})",
                )
        if obj.kind == "Gateway":
            ref = self.class_refs.get(id(obj))
            if ref is not None and ref.status == NOT_FOUND:
                return (
                    Traffic.NO_GATEWAY_CLASS,
                    f"Gateway {_where(obj)} names GatewayClass {ref.name}, which is not in the input, so it is never reconciled",
                )
            invalid = self._invalid_parameters(obj, ref.target if ref is not None else None)
            if invalid is not None:
                return Traffic.INVALID_PARAMETERS, invalid
        return Traffic.CARRIES, ""

    # -- building --------------------------------------------------------------------------

    def _build(self) -> None:
        index = self.index
        for gateway in self.gateways():
            self._listeners[id(gateway)] = self._parse_listeners(gateway)
            self.class_refs[id(gateway)] = self._class_ref(gateway)
            self._add_refs(gateway, self._certificate_refs(gateway) + self._parameters_refs(gateway))
        for gateway_class in index.of_kind(GATEWAY_GROUP, "GatewayClass"):
            self._add_refs(gateway_class, self._parameters_refs(gateway_class))
        for listener_set in index.of_kind(GATEWAY_GROUP, "ListenerSet"):
            self._listeners[id(listener_set)] = self._parse_listeners(listener_set)
            set_att = self._attach_listener_set(listener_set)
            self.listener_sets[id(listener_set)] = set_att
            if set_att.gateway is not None and set_att.attached:
                self._sets_of_gateway[id(set_att.gateway)].append(listener_set)
            self._add_refs(listener_set, self._certificate_refs(listener_set))
        for gateway in self.gateways():
            self._find_conflicts(gateway)
        for route in self.routes():
            attachments = self._attach_route(route)
            self.parents[id(route)] = attachments
            for att in attachments:
                if att.parent is not None and att.listeners:
                    self._routes_on[id(att.parent)].append((route, att))
            self._add_refs(route, self._route_backends(route))
        for policy in self.resolution.policies():
            profile = policy.profile
            errors = self._admission_errors(policy.obj)
            if profile.backend_refs or profile.certificate_refs or profile.object_refs:
                refs = self._policy_backends(policy.obj, profile.backend_refs)
                refs += self._policy_certificates(policy.obj, profile)
                self._add_refs(policy.obj, refs)
                errors += tuple(e for e in map(self._backend_error, refs) if e is not None)
            if errors:
                self.spec_errors[id(policy.obj)] = errors

    def _admission_errors(self, policy: K8sObject) -> tuple[str, ...]:
        """What the API server refuses in the policy (policylint.k8s.admission): a policy it refuses
        never reaches its controller, which is as if the controller rejected it (docs/semantics.md#policies-the-api-server-rejects).
        Unknown fields are pruned, not refused (PL702); a CEL rule not evaluated to the end decides nothing."""
        verdict = self.index.admission(policy)
        if verdict is None or not verdict.rejected:
            return ()
        return tuple(f"rejected by the API server: {verdict.reason(r)}" for r in verdict.rejections())

    def _backend_error(self, ref: ObjectRef) -> str | None:
        """Why a controller cannot program a policy through this backend reference of its spec, if
        it cannot: the backend is missing, not granted, or not reachable on the port named (Envoy
        Gateway then sets the policy Accepted=False, Invalid: "ExtAuth: service default/x not found")."""
        where = ref.label()
        if ref.status == NOT_FOUND:
            return f"{ref.path}: {where} not found"
        if ref.status == ReferenceStatus.INVALID_KIND:
            return f"{ref.path}: {ref.kind} (group {ref.group or 'core'}) is not a kind this reference supports"
        if ref.status == REF_NOT_PERMITTED:
            return f"{ref.path}: {where} is in another namespace and no ReferenceGrant there permits the reference"
        if ref.status == ReferenceStatus.MISSING_DATA:
            return f"{ref.path}: {ref.label()} {ref.detail}"
        target = ref.target
        if ref.status != RESOLVED or target is None or (target.group, target.kind) != (CORE, "Service"):
            return None
        if target.spec.get("type") == "ExternalName":
            return None  # how its port is used is implementation-specific (PL412 skips it too)
        if not ref.has_port:
            return f"{ref.path}: a port of Service {ref.namespace}/{ref.name} must be given"
        if ref.port is not None and ref.port_section is None:
            return f"{ref.path}: port {ref.port} not found on Service {ref.namespace}/{ref.name}"
        return None

    def policy_errors(self, policy: K8sObject) -> tuple[str, ...]:
        """What in the policy's spec makes its controller reject it (Accepted=False, Invalid): what
        the API server refuses first (policylint.k8s.admission), then what the controller does."""
        return self.spec_errors.get(id(policy), ())

    def target_errors(self, policy: Policy, res: TargetResolution) -> tuple[TargetError, ...]:
        """What makes the controller reject the policy on this one target (Accepted=False, Invalid
        on that ancestor only): a plain-HTTP listener port it covers only in part
        (`sharedHttpPort`), a target kind that merged Gateways rule out (`mergedGateways`), or a
        field the controller does not support on that kind of target (`targetKindFields`)."""
        profile = policy.profile
        if not res.accepted or res.target is None or res.target.group != GATEWAY_GROUP:
            return ()
        if not profile.rejects_on_target:
            return ()
        key = (id(policy.obj), id(res))
        found = self._target_errors.get(key)
        if found is None:
            found = self._target_errors[key] = (
                self._merged_kind_errors(profile, res.target)
                + (self._shared_port_errors(profile, res.target, res.section) if profile.shared_http_port else ())
                + self._kind_field_errors(policy, res.target)
            )
        return found

    def _kind_field_errors(self, policy: Policy, target: K8sObject) -> tuple[TargetError, ...]:
        """Spec fields the controller does not support on this kind of target (`targetKindFields`),
        in the policy's own spec or, when it merges onto its parent's (Envoy Gateway `mergeType`),
        in the spec the merge gives: the policy of the same kind on the closest parent of the route
        (a listener it attaches through, else its Gateway), as Envoy Gateway merges."""
        profile = policy.profile
        for spec in profile.target_kind_fields:
            if (target.group, target.kind) != (spec.kind.group, spec.kind.kind):
                continue
            allowed = set(spec.fields)
            extra = sorted(set(_proper_fields(policy)) - allowed)
            merged: set[str] = set()
            if profile.merge.custom == "envoy-merge-type" and isinstance(policy.obj.spec.get("mergeType"), str):
                for parent in self._closest_parent_policies(policy, target):
                    merged |= set(_proper_fields(parent)) - allowed
            where = f"{target.kind} {target.namespace}/{target.name}"
            if extra:
                return (TargetError("kind-fields", f"{spec.message} (it sets {', '.join(extra)} on {where})"),)
            if merged:
                what = ", ".join(sorted(merged))
                return (
                    TargetError(
                        "kind-fields", f"{spec.message} (merged with its parent's policy, the spec sets {what} on {where})"
                    ),
                )
        return ()

    def _closest_parent_policies(self, policy: Policy, route: K8sObject) -> list[Policy]:
        found: list[Policy] = []
        same_kind = [p for p in self.resolution.policies() if p.profile.gk == policy.profile.gk and p is not policy]
        for attachment in self.parents.get(id(route), []):
            gateway = attachment.parent
            if gateway is None:
                continue
            on_listener, on_gateway = [], []
            for other in same_kind:
                for res in self.resolution.targets(other):
                    if res.target is not gateway:
                        continue
                    if res.section is None:
                        on_gateway.append(other)
                    elif any(listener.section == res.section for listener in attachment.listeners):
                        on_listener.append(other)
            found.extend(on_listener or on_gateway)
        return found

    def _merges(self, gateway_class: K8sObject, profile: PolicyProfile) -> bool:
        """Whether the class's parameters object merges its Gateways (`mergedGateways`)."""
        spec = profile.merged_gateways
        if spec is None:
            return False
        params = _dict(gateway_class.spec.get("parametersRef"))
        kind = spec.parameters
        if (_str(params.get("group")) or CORE, _str(params.get("kind"))) != (kind.group, kind.kind):
            return False
        name, namespace = _str(params.get("name")), _str(params.get("namespace"))
        holder = self.index.lookup(kind.group, kind.kind, namespace, name) if name else None
        return holder is not None and holder.spec.get(spec.field) is True

    def _merged_kind_errors(self, profile: PolicyProfile, target: K8sObject) -> tuple[TargetError, ...]:
        spec = profile.merged_gateways
        if spec is None or spec.target_kind is None:
            return ()
        if target.kind == "Gateway":
            ref = self.class_refs.get(id(target))
            if ref is not None and ref.target is not None and self._merges(ref.target, profile):
                return (
                    TargetError(
                        "merged-gateways",
                        f"the Gateways of class {ref.target.name} are merged ({spec.parameters.kind} {spec.field}), so the"
                        f" controller reads the target as a {spec.target_kind} and finds none named {target.name}",
                    ),
                )
        elif target.kind == spec.target_kind and not self._merges(target, profile):
            return (
                TargetError(
                    "merged-gateways",
                    f"the Gateways of {spec.target_kind} {target.name} are not merged ({spec.parameters.kind} {spec.field}),"
                    " so the controller takes only a Gateway as the target",
                ),
            )
        return ()

    def listener_conflict(self, listener: Listener) -> tuple[Listener, str] | None:
        """The listener of higher precedence (or of the same object) that this one is not distinct
        from, and why, when it is Conflicted (Gateway API, Listeners: "Handling indistinct
        Listeners"): it is not accepted, and nothing reaches traffic through it."""
        return self._conflicts.get(id(listener))

    def _find_conflicts(self, gateway: K8sObject) -> None:
        # Precedence (GEP-1713): the Gateway's own listeners, then its ListenerSets, oldest first,
        # then by namespace and name. A ListenerSet's listener that collides with an accepted one
        # of higher precedence is the one rejected; two of one object are both rejected (the
        # Gateway API forbids picking a winner among them). A listener rejected frees its place:
        # it rejects no sibling and nothing of lower precedence (the conformance test
        # ListenerSetProtocolConflict, conformance/tests/listenerset-protocol-conflict.go: HTTP
        # listeners of a ListenerSet whose TCP listener lost to the Gateway's are accepted).
        sets = sorted(self.listener_sets_of(gateway), key=_listener_set_order)
        # Which protocols share a port beyond the Gateway API's rules is the implementation's
        # (profile `listenerPorts`); a class policylint does not know is held to those rules only.
        implementation = self.gateway_implementation(gateway)
        sharing = implementation.port_sharing if implementation is not None else None
        who = implementation.name if implementation is not None else "its implementation"

        def _indistinct(a: Listener, b: Listener) -> str | None:
            assert a.port is not None and a.protocol is not None and b.protocol is not None
            return port_conflict(a.port, (a.protocol, a.hostname), (b.protocol, b.hostname), sharing, who)

        accepted: dict[int, list[Listener]] = defaultdict(list)  # by port, of higher precedence
        for owner in (gateway, *sets):
            mine = [
                (listener.port, listener)
                for listener in self.listeners(owner)
                if not listener.malformed
                and listener.port is not None
                and listener.protocol is not None
                # Not accepted for its protocol (PL421): it takes no port from another listener,
                # as Envoy Gateway's conflict checks skip it (isSupportedListenerProtocol).
                and not unsupported_protocol(listener.protocol)
            ]
            survivors: dict[int, list[Listener]] = defaultdict(list)  # by port, in order
            for port, listener in mine:
                found = next(((o, r) for o in accepted[port] if (r := _indistinct(listener, o)) is not None), None)
                if found is not None:
                    self._conflicts[id(listener)] = found
                else:
                    survivors[port].append(listener)
            for port, group in survivors.items():
                for listener in group:
                    found = next(((o, r) for o in group if o is not listener and (r := _indistinct(listener, o))), None)
                    if found is not None:
                        self._conflicts[id(listener)] = found
                accepted[port].extend(listener for listener in group if id(listener) not in self._conflicts)

    def gateway_listeners(self, gateway: K8sObject) -> list[Listener]:
        """The listeners of a Gateway and of the ListenerSets attached to it."""
        out = list(self.listeners(gateway))
        for listener_set in self.listener_sets_of(gateway):
            out.extend(self.listeners(listener_set))
        return out

    def proxy_gateways(self, gateway: K8sObject, profile: PolicyProfile) -> list[K8sObject]:
        """The Gateways whose listeners share proxy listeners with this one: itself, or every Gateway
        of its class when the class merges its Gateways (`mergedGateways`)."""
        ref = self.class_refs.get(id(gateway))
        gateway_class = ref.target if ref is not None else None
        if gateway_class is None or not self._merges(gateway_class, profile):
            return [gateway]
        return [g for g in self.gateways() if (r := self.class_refs.get(id(g))) is not None and r.target is gateway_class]

    def _shared_port_errors(self, profile: PolicyProfile, target: K8sObject, section: Section | None) -> tuple[TargetError, ...]:
        if target.kind == "Gateway":
            gateway: K8sObject | None = target
            own = self.gateway_listeners(target)
        elif target.kind == "ListenerSet":
            attachment = self.listener_sets.get(id(target))
            gateway = attachment.gateway if attachment is not None and attachment.attached else None
            own = self.listeners(target)
        else:
            return ()
        if gateway is None:
            return ()
        covered = [listener for listener in own if section is None or listener.section == section]
        everyone = [listener for g in self.proxy_gateways(gateway, profile) for listener in self.gateway_listeners(g)]
        errors: list[TargetError] = []
        ports: set[int] = set()
        for listener in covered:
            if listener.protocol != "HTTP" or listener.port is None or listener.port in ports:
                continue
            if self.listener_conflict(listener) is not None:
                continue  # not accepted at all (PL416): no proxy listener serves it
            others = [
                m
                for m in everyone
                if m is not listener and m.protocol == "HTTP" and m.port == listener.port and self.listener_conflict(m) is None
            ]
            if section is None:
                # A whole-object policy covers its object's own listeners on the port as well.
                others = [m for m in others if m not in own]
            if others:
                ports.add(listener.port)
                names = ", ".join(_listener_label(m) for m in others)
                errors.append(
                    TargetError(
                        "shared-http-port",
                        f"plain-HTTP listener {_listener_label(listener)} shares port {listener.port} with {names},"
                        " which the policy does not cover: its controller serves them as one listener and rejects a"
                        " policy on only some of them",
                    )
                )
        return tuple(errors)

    def _add_refs(self, owner: K8sObject, refs: list[ObjectRef]) -> None:
        self.references[id(owner)] = refs
        for ref in refs:
            if ref.target is not None:
                self._referrers[id(ref.target)].append(ref)

    def _parse_listeners(self, owner: K8sObject) -> list[Listener]:
        out = []
        malformed = self.index.malformed(owner)
        for section in self.index.sections(owner):
            raw = _dict(_list(owner.spec.get("listeners"))[section.position])
            at = ("spec", "listeners", section.position)
            if malformed.tainted(*at):
                # Rejected with its Gateway (PL010): parse nothing from it, assume it admits.
                out.append(
                    Listener(
                        owner=owner,
                        section=section,
                        port=_int(raw.get("port")),
                        protocol=_str(raw.get("protocol")),
                        hostname=_str(raw.get("hostname")) or None,
                        tls_mode=None,
                        allowed_from="All",
                        allowed_selector=None,
                        allowed_kinds=None,
                        malformed=True,
                        unknown_name=section.malformed,
                        unknown_port=malformed.broken(*at, "port"),
                    )
                )
                continue
            allowed = _dict(raw.get("allowedRoutes"))
            namespaces = _dict(allowed.get("namespaces"))
            allowed_from = _str(namespaces.get("from")) or "Same"
            selector: LabelSelector | None = None
            if allowed_from == "Selector":
                try:
                    selector = parse_selector(namespaces.get("selector")) if namespaces.get("selector") is not None else None
                except SelectorError:
                    selector = None
            kinds_raw = allowed.get("kinds")
            # (position, group, kind) of each entry, the group defaulted as the API server does. A
            # group that is present but not a string becomes None, which the declared type omits.
            listed = [
                (j, _str(k.get("group")) if k.get("group") is not None else GATEWAY_GROUP, k["kind"])
                for j, k in enumerate(kinds_raw if isinstance(kinds_raw, list) else ())
                if isinstance(k, dict) and isinstance(k.get("kind"), str)
            ]
            kinds: tuple[tuple[str, str], ...] | None = None
            if isinstance(kinds_raw, list) and kinds_raw:
                kinds = tuple((group, kind) for _, group, kind in listed)  # type: ignore[misc]
            tls = _dict(raw.get("tls"))
            listener = Listener(
                owner=owner,
                section=section,
                port=_int(raw.get("port")),
                protocol=_str(raw.get("protocol")),
                hostname=_str(raw.get("hostname")) or None,
                tls_mode=_str(tls.get("mode")),
                allowed_from=allowed_from,
                allowed_selector=selector,
                allowed_kinds=kinds,
            )
            carried = listener.default_kinds() if kinds else None
            if carried is not None:
                # Only the Gateway API's own route kinds: another group's kind is the implementation's.
                uncarried = tuple((j, kind) for j, group, kind in listed if group == GATEWAY_GROUP and kind not in carried)
                if uncarried:
                    listener = dataclasses.replace(listener, uncarried=uncarried)
            out.append(listener)
        return out

    def _class_ref(self, gateway: K8sObject) -> ClassRef:
        name = _str(gateway.spec.get("gatewayClassName"))
        if not name:
            return ClassRef(gateway, None, ReferenceStatus.INVALID_REF)
        target = self.index.lookup(GATEWAY_GROUP, "GatewayClass", None, name)
        if target is not None:
            return ClassRef(gateway, name, RESOLVED, target)
        if self.external.match(GATEWAY_GROUP, "GatewayClass", None, name):
            return ClassRef(gateway, name, ReferenceStatus.EXTERNAL)
        controller = self._builtin_classes().get(name)
        if controller is not None:
            return ClassRef(gateway, name, ReferenceStatus.EXTERNAL, builtin_controller=controller)
        return ClassRef(gateway, name, NOT_FOUND)

    def _builtin_classes(self) -> dict[str, str]:
        """Class name -> controllerName of the classes served with no GatewayClass object in the
        input (decided once, by the resolution: `Resolution.builtin_classes`)."""
        return self.resolution.builtin_classes()

    def _class_implementations(self) -> list[Implementation | None]:
        return self.resolution.class_implementations()

    def _attach_listener_set(self, listener_set: K8sObject) -> ListenerSetAttachment:
        raw = listener_set.spec.get("parentRef")
        if self.index.malformed(listener_set).tainted("spec", "parentRef"):
            return ListenerSetAttachment(
                listener_set, None, MALFORMED, "spec.parentRef is malformed (PL010); its Gateway is not evaluated"
            )
        if not isinstance(raw, dict) or not isinstance(raw.get("name"), str):
            return ListenerSetAttachment(listener_set, None, INVALID_REF, "spec.parentRef has no name")
        group = _str(raw.get("group"))
        group = GATEWAY_GROUP if group is None else group
        kind = _str(raw.get("kind")) or "Gateway"
        namespace = _str(raw.get("namespace")) or listener_set.namespace or ""
        name = raw["name"]
        gateway = self.index.lookup(group, kind, namespace, name)
        if gateway is None:
            if self.external.match(group, kind, namespace, name):
                return ListenerSetAttachment(listener_set, None, EXTERNAL, f"{kind} {namespace}/{name} is external")
            return ListenerSetAttachment(listener_set, None, PARENT_NOT_FOUND, f"{kind} {namespace}/{name} not found")
        allowed = _dict(_dict(gateway.spec.get("allowedListeners")).get("namespaces"))
        allowed_from = _str(allowed.get("from")) or "None"
        ls_ns = listener_set.namespace or ""
        where = f"Gateway {_where(gateway)}"
        if self.index.malformed(gateway).tainted("spec", "allowedListeners"):
            assumed = f"{where} has a malformed allowedListeners (PL010); assumed to admit the ListenerSet"
            return ListenerSetAttachment(listener_set, gateway, ACCEPTED, assumptions=(assumed,))
        if allowed_from == "All":
            return ListenerSetAttachment(listener_set, gateway, ACCEPTED)
        if allowed_from == "Same":
            if ls_ns == gateway.namespace:
                return ListenerSetAttachment(listener_set, gateway, ACCEPTED)
            return ListenerSetAttachment(
                listener_set,
                gateway,
                Attachment.NOT_ALLOWED,
                f"{where} allows ListenerSets only from its own namespace (allowedListeners from: Same)",
            )
        if allowed_from == "Selector":
            try:
                # Envoy Gateway: a missing selector matches nothing (docs/semantics.md#listenersets).
                if allowed.get("selector") is None:
                    return ListenerSetAttachment(
                        listener_set,
                        gateway,
                        Attachment.NOT_ALLOWED,
                        f"{where} has allowedListeners from: Selector without a selector, which matches nothing",
                    )
                selector = parse_selector(allowed.get("selector"))
            except SelectorError as exc:
                return ListenerSetAttachment(
                    listener_set, gateway, Attachment.NOT_ALLOWED, f"{where} has an invalid allowedListeners selector: {exc}"
                )
            verdict, unknown = selector_verdict(self.resolution, gateway, ALLOWED_LISTENERS_PATH, selector, ls_ns, "ListenerSets")
            if verdict is Verdict.ADMITTED:
                return ListenerSetAttachment(listener_set, gateway, ACCEPTED)
            if unknown is not None:
                return ListenerSetAttachment(
                    listener_set, gateway, LABELS_UNKNOWN, f"allowedListeners of {where}: {unknown.message()}", unknown=unknown
                )
            return ListenerSetAttachment(
                listener_set,
                gateway,
                Attachment.NOT_ALLOWED,
                f"namespace {ls_ns} does not match the allowedListeners selector of {where} ({selector})",
            )
        return ListenerSetAttachment(
            listener_set,
            gateway,
            Attachment.NOT_ALLOWED,
            f"{where} does not allow ListenerSets (allowedListeners.namespaces.from is None by default)",
        )

    def _parent_refs(self, route: K8sObject) -> list[ParentRef]:
        out = []
        malformed = self.index.malformed(route)
        if malformed.broken("spec", "parentRefs"):
            return []  # unreadable (PL010): `parents_malformed` says so; there is no parentRef to name
        for i, raw in enumerate(_list(route.spec.get("parentRefs"))):
            if malformed.tainted("spec", "parentRefs", i):
                item = _dict(raw)
                out.append(
                    ParentRef(
                        path=join("spec.parentRefs", i),
                        group=_str(item.get("group")) or GATEWAY_GROUP,
                        kind=_str(item.get("kind")) or "Gateway",
                        namespace=_str(item.get("namespace")) or route.namespace or "",
                        name=_str(item.get("name")) or "",
                        section_name=_str(item.get("sectionName")),
                        port=_int(item.get("port")),
                        malformed=True,
                    )
                )
                continue
            if not isinstance(raw, dict) or not isinstance(raw.get("name"), str):
                continue
            group = raw.get("group")
            out.append(
                ParentRef(
                    path=join("spec.parentRefs", i),
                    group=GATEWAY_GROUP if group is None else str(group),
                    kind=_str(raw.get("kind")) or "Gateway",
                    namespace=_str(raw.get("namespace")) or route.namespace or "",
                    name=raw["name"],
                    section_name=_str(raw.get("sectionName")),
                    port=_int(raw.get("port")),
                )
            )
        return out

    def _mesh_parent(self, ref: ParentRef) -> bool:
        """Whether a parentRef names a mesh parent (GEP-1294): a Service, or a kind an implementation
        takes as one (profile `meshParents`)."""
        return not ref.malformed and (
            (ref.group, ref.kind) == (CORE, "Service") or TargetKind(ref.group, ref.kind) in self._mesh_parents
        )

    def _attach_route(self, route: K8sObject) -> list[ParentAttachment]:
        return [self._attach(route, ref) for ref in self._parent_refs(route)]

    def _attach(self, route: K8sObject, ref: ParentRef) -> ParentAttachment:
        if ref.malformed:
            return ParentAttachment(
                route, ref, None, MALFORMED, message=f"{ref.path} is malformed (PL010); its parent is not evaluated"
            )
        parent = self.index.lookup(ref.group, ref.kind, ref.namespace, ref.name)
        label = f"{ref.kind} {ref.namespace}/{ref.name}"
        if self._mesh_parent(ref):
            if parent is None and not self.external.match(ref.group, ref.kind, ref.namespace, ref.name):
                return ParentAttachment(route, ref, None, PARENT_NOT_FOUND, message=f"{label} not found")
            return ParentAttachment(route, ref, parent, MESH)
        if ref.group != GATEWAY_GROUP or ref.kind not in ("Gateway", "ListenerSet"):
            if parent is None:
                # An implementation-specific parent kind: not modelled, never "not found".
                return ParentAttachment(route, ref, None, UNKNOWN_PARENT_KIND, message=f"{label}: parent kind not modelled")
            return ParentAttachment(route, ref, parent, UNKNOWN_PARENT_KIND)
        if parent is None:
            if self.external.match(ref.group, ref.kind, ref.namespace, ref.name):
                return ParentAttachment(route, ref, None, EXTERNAL, message=f"{label} is external")
            return ParentAttachment(route, ref, None, PARENT_NOT_FOUND, message=f"{label} not found")
        if ref.kind == "ListenerSet":
            att = self.listener_sets.get(id(parent))
            if att is not None and att.undecided:
                message = f"ListenerSet {_where(parent)} may or may not be attached: {att.message}"
                from_set = () if att.unknown is None else (att.unknown,)
                return ParentAttachment(route, ref, parent, LABELS_UNKNOWN, message=message, unknown=from_set)
            if att is not None and not att.attached:
                return ParentAttachment(
                    route,
                    ref,
                    parent,
                    LISTENER_SET_NOT_ATTACHED,
                    message=f"ListenerSet {_where(parent)} is not attached: {att.message}",
                )
        if self.index.malformed(parent).broken("spec", "listeners"):
            message = f"the listeners of {label} are malformed (PL010); attachment not evaluated"
            return ParentAttachment(route, ref, parent, MALFORMED, message=message)
        candidates = self.listeners(parent)
        if ref.section_name is not None:
            candidates = [c for c in candidates if c.name == ref.section_name or c.unknown_name]
        if ref.port is not None:
            candidates = [c for c in candidates if c.port == ref.port or c.unknown_port]
        if not candidates:
            wanted = " and ".join(
                part
                for part in (
                    f"name {ref.section_name}" if ref.section_name is not None else "",
                    f"port {ref.port}" if ref.port is not None else "",
                )
                if part
            )
            have = ", ".join(f"{lst.name} ({lst.protocol} {lst.port})" for lst in self.listeners(parent)) or "no listeners"
            message = f"{label} has no listener with {wanted or 'any name'}; have: {have}"
            return ParentAttachment(route, ref, parent, NO_MATCHING_PARENT, message=message)
        admitted: list[Listener] = []
        rejections: list[Rejection] = []
        assumptions: list[str] = []
        unknowns: list[UnknownNamespace] = []
        for listener in candidates:
            if listener.malformed:
                admitted.append(listener)
                assumptions.append(
                    f"listener #{listener.section.position + 1} of {label} is malformed (PL010); assumed to admit the route"
                )
                continue
            rejection, unknown = self._admits(listener, route)
            if rejection is not None:
                rejections.append(rejection)
            elif unknown is not None:
                unknowns.append(unknown)
            else:
                admitted.append(listener)
        if admitted:
            return ParentAttachment(
                route,
                ref,
                parent,
                ACCEPTED,
                tuple(admitted),
                tuple(rejections),
                assumptions=tuple(dict.fromkeys(assumptions)),
                unknown=tuple(unknowns),
            )
        if unknowns:
            # Some listener may admit it, none does for certain: the route is neither attached nor
            # refused (docs/semantics.md#namespaces-not-in-the-input).
            message = f"{label} may or may not admit it: {unknowns[0].message()}"
            return ParentAttachment(route, ref, parent, LABELS_UNKNOWN, (), tuple(rejections), message, unknown=tuple(unknowns))
        # NoMatchingListenerHostname only when every listener fails on hostnames alone
        # (docs/semantics.md#listener-admission, step 4).
        reason = (
            NO_MATCHING_LISTENER_HOSTNAME
            if all(r.reason == NO_MATCHING_LISTENER_HOSTNAME for r in rejections)
            else NOT_ALLOWED_BY_LISTENERS
        )
        message = f"no listener of {label} admits it: " + "; ".join(f"{r.listener.name}: {r.message}" for r in rejections)
        return ParentAttachment(route, ref, parent, reason, (), tuple(rejections), message)

    def _admits(self, listener: Listener, route: K8sObject) -> tuple[Rejection | None, UnknownNamespace | None]:
        """(the rejection, or None; why the namespace check is undecided, or None). The rejection's check is the
        first that fails in Envoy Gateway's order (docs/semantics.md#listener-admission, step 3):
        kinds, namespaces, hostnames; `also` holds the other checks that fail, since fixing one
        leaves the route rejected by the others, and other controllers check in another order
        (Istio: hostnames before namespaces and kinds)."""
        failed = [r for r in (_kind_admission(listener, route),) if r is not None]
        namespace, unknown = self._namespace_admission(listener, route)
        if namespace is not None:
            failed.append(namespace)
        hostname = self._hostname_admission(listener, route)
        if hostname is not None:
            failed.append(hostname)
        if not failed:
            # Another check that fails decides on its own; only then is an unknown namespace the answer.
            return None, unknown
        return dataclasses.replace(failed[0], also=tuple(failed[1:])) if len(failed) > 1 else failed[0], None

    def _namespace_admission(self, listener: Listener, route: K8sObject) -> tuple[Rejection | None, UnknownNamespace | None]:
        route_ns = route.namespace or ""
        owner_ns = listener.owner.namespace or ""
        if listener.allowed_from == "Same":
            if route_ns == owner_ns:
                return None, None
            message = f"allowedRoutes admits routes only from namespace {owner_ns} (from: Same, the default), not {route_ns}"
            return Rejection(listener, Admission.NAMESPACE, message), None
        if listener.allowed_from == "Selector":
            if listener.allowed_selector is None:
                return Rejection(
                    listener, Admission.NAMESPACE_SELECTOR_INVALID, "allowedRoutes from: Selector has no valid selector"
                ), None
            verdict, unknown = selector_verdict(
                self.resolution,
                listener.owner,
                listener_namespaces_path(listener.path),
                listener.allowed_selector,
                route_ns,
                "routes",
                listener.name,
            )
            if verdict is not Verdict.REFUSED:
                return None, unknown
            message = f"namespace {route_ns} does not match the allowedRoutes selector ({listener.allowed_selector})"
            return Rejection(listener, Admission.NAMESPACE, message), None
        if listener.allowed_from != "All":
            message = f"allowedRoutes from: {listener.allowed_from} is not a known value"
            return Rejection(listener, Admission.NAMESPACE_FROM_UNKNOWN, message), None
        return None, None

    def _hostname_admission(self, listener: Listener, route: K8sObject) -> Rejection | None:
        if route.kind not in HOSTNAME_ROUTE_KINDS or self.index.malformed(route).tainted("spec", "hostnames"):
            return None
        hostnames = [h for h in _list(route.spec.get("hostnames")) if isinstance(h, str)]
        if effective_hostnames(listener.hostname, hostnames) is not None:
            return None
        message = f"listener hostname {listener.hostname} does not intersect the route's hostnames {', '.join(hostnames)}"
        return Rejection(listener, Admission.HOSTNAME, message)

    # -- references ------------------------------------------------------------------------

    def _resolve_ref(
        self,
        owner: K8sObject,
        path: str,
        raw: Mapping[str, Any],
        purpose: str,
        *,
        default_kind: str,
        rule: int | None = None,
        check_existence: bool = True,
        grant_needed: bool = True,
        group_for_kind: Callable[[str], str | None] | None = None,
        grant_as_written: bool = False,
        lookup_as: TargetKind | None = None,
    ) -> ObjectRef | None:
        """`lookup_as`: the kind the controller looks the object up as (`_backend_resolved_as`);
        the reference keeps its kind as written, which its ReferenceGrant names."""
        name = _str(raw.get("name"))
        if not name:
            return None
        group = written = _str(raw.get("group")) or CORE
        kind = _str(raw.get("kind")) or default_kind
        if group_for_kind is not None:
            found = group_for_kind(kind)
            if found is not None:
                group = found
        cluster_scoped = self.index.kinds.is_cluster_scoped(group, kind)
        # A cluster-scoped object has no namespace, and a reference to it crosses none.
        namespace = "" if cluster_scoped else _str(raw.get("namespace")) or owner.namespace or ""
        port = _int(raw.get("port"))
        has_port = "port" in raw
        # `grant_as_written`: a controller that resolves by kind still matches a ReferenceGrant's
        # `to` against the group the reference gives (Envoy Gateway's validateBackendNamespace).
        grant_group = written if grant_as_written and written != group else None
        reference = Reference(
            owner.group, owner.kind, owner.namespace or "", group if grant_group is None else grant_group, kind, namespace, name
        )
        grant = self.grants.check(reference) if grant_needed and not cluster_scoped else NOT_NEEDED
        # The kind is checked before the namespace, as controllers do (Envoy Gateway's
        # validateBackendRef: group, then kind, then the ReferenceGrant): a reference no object
        # could satisfy is InvalidKind whether or not a grant would admit it.
        invalid_kind = ""
        if purpose in _BACKEND_PURPOSES:
            if group == CORE and kind != "Service":
                # The core group has one backend kind: any other is "unknown or unsupported", and the
                # Gateway API requires ResolvedRefs=False, reason InvalidKind (RouteReasonInvalidKind).
                invalid_kind = "in the core group, where Service is the only backend kind"
            elif group == GATEWAY_GROUP and kind in ROUTE_KINDS:
                # A route is never a backend: naming one delegates traffic where the implementation
                # supports route delegation (`_delegation`), and is an unsupported kind elsewhere.
                invalid_kind = ", a route; the controllers of its Gateways do not delegate traffic to routes"
            elif self.index.options.complete and group != CORE and group not in self._known_groups():
                # With --complete, a group nothing knows (no built-in kind, CRD, profile or object in
                # the input belongs to it) names a kind the cluster does not serve.
                invalid_kind = f"in group {group}, which no CRD, built-in kind or object in the input belongs to (--complete)"
        base = {
            "owner": owner,
            "path": path,
            "purpose": purpose,
            "group": group,
            "kind": kind,
            "namespace": namespace,
            "name": name,
            "port": port,
            "has_port": has_port,
            "rule": rule,
            "grant": grant,
            "grant_group": grant_group,
        }
        if invalid_kind:
            return ObjectRef(status=ReferenceStatus.INVALID_KIND, detail=invalid_kind, **base)  # type: ignore[arg-type]
        if not grant.permitted:
            # Never reveal whether an un-granted target exists (docs/semantics.md#referencegrant):
            # RefNotPermitted either way.
            return ObjectRef(status=REF_NOT_PERMITTED, **base)  # type: ignore[arg-type]
        scope_ns = None if cluster_scoped else namespace
        looked_up = (group, kind) if lookup_as is None else (lookup_as.group, lookup_as.kind)
        target = self.index.lookup(*looked_up, scope_ns, name)
        if target is None:
            status: ReferenceStatus
            if self.external.match(group, kind, scope_ns, name) or (
                lookup_as is not None and self.external.match(*looked_up, scope_ns, name)
            ):
                status = ReferenceStatus.EXTERNAL
            elif (made := self.resolution.producers().made(*looked_up, scope_ns, name)) is not None:
                status = ReferenceStatus.PRODUCED
                base["detail"] = made.describe()
            elif lookup_as is not None:
                status = NOT_FOUND  # a kind the input's cluster serves (a Service)
                base["detail"] = f"its controller looks it up as the {lookup_as.kind} {namespace}/{name}, not in the input either"
            elif not check_existence and not self._manages(group, kind, namespace):
                # Secrets and ConfigMaps often live outside the repository: checked only where
                # the input holds objects of that kind in that namespace.
                status = UNCHECKED
            elif (
                self.index.kinds.get(group, kind) is None
                and not self.index.of_kind(group, kind)
                # A backend kind the controller of every parent resolves itself (Envoy Gateway's
                # Backend, `backendRefsByKind`) is one it serves: a missing one is not found,
                # whether or not the input holds others of the kind.
                and not (group_for_kind is not None and purpose in _BACKEND_PURPOSES)
            ):
                status = OPAQUE
            else:
                status = NOT_FOUND
            return ObjectRef(status=status, **base)  # type: ignore[arg-type]
        port_section = None
        status = RESOLVED
        if port is not None and looked_up == (CORE, "Service"):
            port_section = self._service_port(target, port)
            if port_section is None and self.index.malformed(target).tainted("spec", "ports"):
                status = ReferenceStatus.MALFORMED  # the port may be the malformed one (PL010): not checked
        return ObjectRef(status=status, target=target, port_section=port_section, **base)  # type: ignore[arg-type]

    def _service_port(self, service: K8sObject, port: int) -> Section | None:
        ports = _list(service.spec.get("ports"))
        for section in self.index.sections(service):
            entry = ports[section.position] if section.position < len(ports) else None
            if isinstance(entry, dict) and _int(entry.get("port")) == port:
                return section
        return None

    def service_ports(self, service: K8sObject) -> list[int]:
        return [
            p for p in (_int(e.get("port")) for e in _list(service.spec.get("ports")) if isinstance(e, dict)) if p is not None
        ]

    def _route_backends(self, route: K8sObject) -> list[ObjectRef]:
        out: list[ObjectRef] = []
        malformed = self.index.malformed(route)
        # GEP-1294 "Namespace boundaries": a mesh route (every parent a Service) "can send traffic
        # to backendRefs in any namespace ... without a ReferenceGrant"; a Gateway-bound route needs one.
        # Whether a route is a mesh route is what its parentRefs name, not whether they resolve:
        # a missing Service parent is PL406's one finding, and makes no grant due on the backends.
        parents = self.parents.get(id(route), [])
        mesh_only = bool(parents) and all(self._mesh_parent(att.ref) for att in parents)

        known: list[list[Implementation | None]] = []

        def implementations() -> list[Implementation | None]:
            # The parents' implementations, worked out once per route and only for a reference
            # whose kind some implementation treats in its own way.
            if not known:
                known.append(self._parent_implementations(route))
            return known[0]

        def add(path: str, raw: dict[str, Any], purpose: str, rule: int) -> None:
            if _ref_malformed(malformed, path):
                return  # rejected with the route (PL010): resolving it would guess its group or kind
            if purpose == "backend" and self._delegation(implementations, raw):
                out.append(self._delegate(route, path, raw, rule))
                return
            host = self._host_backend(route, implementations, path, raw, purpose, rule) if purpose != "ext-auth" else None
            if host is not None:
                out.append(host)
                return
            by_kind = self._backend_by_kind(implementations, raw) if purpose != "ext-auth" else None
            ref = self._resolve_ref(
                route,
                path,
                raw,
                purpose,
                default_kind="Service",
                rule=rule,
                grant_needed=not mesh_only,
                group_for_kind=by_kind,
                grant_as_written=by_kind is not None,
                lookup_as=self._backend_resolved_as(implementations, raw) if purpose != "ext-auth" else None,
            )
            if ref is not None:
                out.append(ref)

        def filters(base: tuple[int | str, ...], raw_filters: Any, rule: int) -> None:
            # Paths are joined only for the references there are: most filters hold none.
            for k, f in enumerate(_list(raw_filters)):
                f = _dict(f)
                for field, purpose in (("requestMirror", "mirror"), ("externalAuth", "ext-auth")):
                    raw = _dict(f.get(field)).get("backendRef")
                    if isinstance(raw, dict):
                        add(join("spec.rules", *base, "filters", k, field, "backendRef"), raw, purpose, rule)

        for i, rule_raw in enumerate(_list(route.spec.get("rules"))):
            rule_raw = _dict(rule_raw)
            for j, backend in enumerate(_list(rule_raw.get("backendRefs"))):
                if isinstance(backend, dict):
                    add(join("spec.rules", i, "backendRefs", j), backend, "backend", i)
                    filters((i, "backendRefs", j), backend.get("filters"), i)
            filters((i,), rule_raw.get("filters"), i)
        return out

    # -- route delegation (implementation-specific: kgateway) ------------------------------

    def _delegation(self, parents: Callable[[], list[Implementation | None]], raw: Mapping[str, Any]) -> bool:
        """Whether a backendRef delegates to routes: it names a kind an implementation delegates
        to (profile `implementations[].routeDelegation`), and some parent Gateway of the route
        belongs to such an implementation or to one policylint does not know. Under a controller
        known not to delegate, the reference stays a backend of an unsupported kind."""
        group = _str(raw.get("group"))
        kind = _str(raw.get("kind"))
        implementations = self.resolution.profiles.implementations
        wanted = TargetKind(CORE if group is None else group, kind or "Service")
        if not any(wanted in i.delegation_kinds for i in implementations):
            return False
        known = parents()
        return not known or any(i is None or wanted in i.delegation_kinds for i in known)

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
        namespace = route.namespace or ""
        declaring = sorted(
            (obj for source in sources if (obj := self._declaring(source, name, namespace)) is not None),
            key=lambda o: (o.namespace or "", o.name),
        )
        status = RESOLVED
        detail = ""
        if not declaring:
            if self.external.match(group, kind, namespace, name):
                status = ReferenceStatus.EXTERNAL
            else:
                status = NOT_FOUND if self.index.options.complete else OPAQUE
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
        gateways = (self._parent_gateway(a) for a in self.parents.get(id(route), []))
        return [self.gateway_implementation(g) for g in gateways if g is not None]

    def gateway_implementation(self, gateway: K8sObject) -> Implementation | None:
        """The implementation of a Gateway, by its GatewayClass's controllerName; None for one
        policylint does not know (or no class)."""
        ref = self.class_refs.get(id(gateway))
        controller = ref.controller if ref is not None else None
        return self.resolution.profiles.implementation_of(controller) if controller else None

    def _parent_gateway(self, attachment: ParentAttachment) -> K8sObject | None:
        parent = attachment.parent
        if parent is None or parent.group != GATEWAY_GROUP:
            return None
        if parent.kind == "Gateway":
            return parent
        if parent.kind == "ListenerSet":
            set_att = self.listener_sets.get(id(parent))
            return set_att.gateway if set_att is not None else None
        return None

    def _delegate(self, route: K8sObject, path: str, raw: Mapping[str, Any], rule: int) -> ObjectRef:
        """A delegation reference, and the routes it hands traffic to: those of the kind in the
        namespace named (`name: "*"`: every one), but the route itself, that name no parent or
        name this route as their parent. No ReferenceGrant is involved."""
        group = _str(raw.get("group"))
        group = CORE if group is None else group
        kind = _str(raw.get("kind")) or "Service"
        namespace = _str(raw.get("namespace")) or route.namespace or ""
        name = _str(raw.get("name")) or ""
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
            self._delegated_by[id(child)].append(route)
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
            status=RESOLVED if children else ReferenceStatus.OPAQUE,
            target=children[0] if len(children) == 1 else None,
            grant=NOT_NEEDED,
        )

    def section_traffic(self, owner: K8sObject, section: Section) -> tuple[Traffic, str]:
        """Whether traffic can reach one section of an object: a Conflicted listener, or one whose
        protocol no controller accepts, carries none."""
        if owner.group == GATEWAY_GROUP and owner.kind in ("Gateway", "ListenerSet"):
            listener = next((lst for lst in self.listeners(owner) if lst.section == section), None)
            if listener is not None and not listener.malformed and unsupported_protocol(listener.protocol):
                return (
                    Traffic.UNSUPPORTED_PROTOCOL,
                    f"listener {listener.name} of {owner.kind} {_where(owner)} has protocol {listener.protocol}, which no"
                    " controller accepts (Accepted=False, UnsupportedProtocol)",
                )
            conflict = self.listener_conflict(listener) if listener is not None else None
            if listener is not None and conflict is not None:
                other, reason = conflict
                return (
                    Traffic.LISTENER_CONFLICTED,
                    f"listener {listener.name} of {owner.kind} {_where(owner)} is Conflicted ({reason}, with listener"
                    f" {other.name} of {other.owner.kind} {_where(other.owner)}) and not accepted",
                )
        return self.traffic(owner)

    def delegated_from_parents(self, route: K8sObject) -> bool:
        """Whether a route up some chain of route delegation to this one names parents of its own
        (the chain's head, whose attachment is its own finding: a grandchild selected by a child
        that has none is still reached); a delegation cycle reaches none."""
        seen = {id(route)}
        stack = list(self.delegated_by(route))
        while stack:
            parent = stack.pop()
            if id(parent) in seen:
                continue
            seen.add(id(parent))
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

    def _delegated_traffic(self, route: K8sObject, seen: set[int]) -> bool:
        """Whether a route that delegates to this one carries traffic (through its own parents, or
        through a route delegating to it in turn; a delegation cycle carries none)."""
        seen.add(id(route))
        for parent in self.delegated_by(route):
            if id(parent) in seen:
                continue
            if any(a.attached for a in self.parent_attachments(parent)) or self._delegated_traffic(parent, seen):
                return True
        return False

    def delegated_by(self, route: K8sObject) -> list[K8sObject]:
        """The routes that delegate traffic to this one (implementation-specific route delegation)."""
        return self._delegated_by.get(id(route), [])

    def _invalid_parameters(self, gateway: K8sObject, gateway_class: K8sObject | None) -> str | None:
        """Why a Gateway is not accepted for its parameters, if it is not: its own reference, or its
        class's, names a group nothing serves (Accepted=False, InvalidParameters; PL422)."""
        for owner in (gateway, gateway_class):
            if owner is None or (owner is gateway_class and self._class_parameters_ignored(owner)):
                continue
            for ref in self.references.get(id(owner), []):
                if ref.purpose == PARAMETERS and ref.status == ReferenceStatus.INVALID_KIND:
                    whose = "its" if owner is gateway else f"its GatewayClass {owner.name}'s"
                    why = ref.detail if ref.detail.startswith("a kind ") else "which nothing serves"
                    return (
                        f"Gateway {_where(gateway)} is not accepted: {whose} parametersRef names {ref.kind} of group"
                        f" {ref.group or 'core'}, {why} (InvalidParameters)"
                    )
        return None

    def _class_parameters_ignored(self, gateway_class: K8sObject) -> bool:
        """Whether the class's implementation accepts a class whose parameters reference it
        refuses, ignoring the reference (`parametersRef.classIgnored`: NGINX Gateway Fabric)."""
        implementation = self.parameters_implementation(gateway_class)
        return implementation is not None and implementation.parameters is not None and implementation.parameters.class_ignored

    def _parameters_refs(self, owner: K8sObject) -> list[ObjectRef]:
        """The parameters reference of a GatewayClass or Gateway (`policylint.semantics.parameters`),
        resolved as a certificate reference is: a missing object is looked for only where the input
        manages its kind (or with --complete), and a group nothing serves is InvalidKind always."""
        found = parameters_ref(owner)
        if found is None:
            return []
        path, raw = found
        if _ref_malformed(self.index.malformed(owner), path):
            return []  # rejected with its owner (PL010)
        ref = self._resolve_ref(owner, path, raw, PARAMETERS, default_kind="", check_existence=False, grant_needed=False)
        if ref is None or not ref.kind:
            return []  # group and kind are required: the schema refuses the object (PL705)
        if ref.group != CORE and ref.group not in self._known_groups():
            # Refused by a controller known to take other kinds, else unprovable (parameters.unserved).
            status, detail = unserved(self.parameters_implementation(owner), complete=self.index.options.complete)
            ref = dataclasses.replace(ref, status=status, target=None, detail=detail)
        elif (implementation := self.parameters_implementation(owner)) is not None:
            # A kind the implementation does not take for its parameters, though some CRD serves
            # it (profile `implementations[].parametersRef`): its controller refuses it just the same.
            spec = implementation.parameters
            assert spec is not None
            if not spec.takes(ref.group, ref.kind):
                detail = f"a kind {implementation.name} does not take for its parameters (it takes {spec.describe()})"
                ref = dataclasses.replace(ref, status=ReferenceStatus.INVALID_KIND, target=None, detail=detail)
        return [ref]

    def parameters_implementation(self, owner: K8sObject) -> Implementation | None:
        """The implementation that reads a GatewayClass's or Gateway's parameters reference, when
        its profile says which kinds it takes: the class's by its controllerName, the Gateway's by
        its class."""
        if owner.kind == "GatewayClass":
            controller = _str(owner.spec.get("controllerName"))
            implementation = self.resolution.profiles.implementation_of(controller) if controller else None
        else:
            implementation = self.gateway_implementation(owner)
        return implementation if implementation is not None and implementation.parameters is not None else None

    def _certificate_refs(self, owner: K8sObject) -> list[ObjectRef]:
        out: list[ObjectRef] = []
        malformed = self.index.malformed(owner)

        def add(path: str, raw: Any, purpose: str, default_kind: str, tls_port: int | None = None) -> None:
            if _ref_malformed(malformed, path):
                return  # rejected with its owner (PL010)
            if isinstance(raw, dict):
                ref = self._resolve_ref(owner, path, raw, purpose, default_kind=default_kind, check_existence=False)
                if ref is None:
                    return
                if tls_port is not None:
                    ref = dataclasses.replace(ref, tls_port=tls_port)
                core = _CORE_CERTIFICATE_KINDS[purpose]
                if ref.group == CORE and ref.kind not in core:
                    # A core kind holds a certificate in the kinds the field names and no other: the
                    # rest of the core group is no "implementation-specific custom resource".
                    detail = f"a core kind the field does not take (it takes {' or '.join(core)})"
                    ref = dataclasses.replace(ref, status=ReferenceStatus.INVALID_KIND, target=None, detail=detail)
                elif purpose in _CUSTOM_CERTIFICATE_PURPOSES and ref.group != CORE and ref.group not in self._known_groups():
                    # A group no CRD, built-in kind, profile or object in the input belongs to: no
                    # controller resolves it, with or without --complete (conformance test
                    # GatewayInvalidTLSConfiguration, `gateway-certificate-unsupported-group`:
                    # InvalidCertificateRef; GatewayInvalidTLSBackendConfiguration for the client
                    # certificate: InvalidClientCertificateRef).
                    detail = "a group no CRD, built-in kind, profile or object in the input belongs to"
                    ref = dataclasses.replace(ref, status=ReferenceStatus.INVALID_KIND, target=None, detail=detail)
                out.append(ref)

        for i, listener in enumerate(_list(owner.spec.get("listeners"))):
            for j, cert in enumerate(_list(_dict(_dict(listener).get("tls")).get("certificateRefs"))):
                add(join("spec.listeners", i, "tls", "certificateRefs", j), cert, "certificate", "Secret")
        tls = _dict(owner.spec.get("tls"))
        add(
            "spec.tls.backend.clientCertificateRef",
            _dict(tls.get("backend")).get("clientCertificateRef"),
            "client-certificate",
            "Secret",
        )
        frontend = _dict(tls.get("frontend"))
        for j, ca in enumerate(_list(_dict(_dict(frontend.get("default")).get("validation")).get("caCertificateRefs"))):
            add(join("spec.tls.frontend.default.validation.caCertificateRefs", j), ca, "ca-certificate", "ConfigMap")
        for p, per_port in enumerate(_list(frontend.get("perPort"))):
            refs = _list(_dict(_dict(_dict(per_port).get("tls")).get("validation")).get("caCertificateRefs"))
            port = _dict(per_port).get("port")
            for j, ca in enumerate(refs):
                add(
                    join("spec.tls.frontend.perPort", p, "tls", "validation", "caCertificateRefs", j),
                    ca,
                    "ca-certificate",
                    "ConfigMap",
                    # A port of the wrong type rejects the Gateway (PL010, PL703): the entry then
                    # counts as the default, which applies to more listeners, not fewer.
                    port if type(port) is int else None,
                )
        return out

    def frontend_listeners(self, ref: ObjectRef) -> Sequence[Listener]:
        """The listeners a Gateway's frontend CA reference applies to (Gateway API
        `FrontendTLSConfig`): the listeners handling HTTPS traffic on the port of its `perPort`
        entry, or, for the `default` configuration, on a port no `perPort` entry names; the
        Gateway's own and those of its ListenerSets. A listener whose protocol or port is unknown
        (PL010) counts. Empty: the reference changes no listener's status (an HTTP-only port,
        every HTTPS port configured per port). Worked out once per Gateway."""
        gateway = ref.owner
        found = self._frontend.get(id(gateway))
        if found is None:
            per_port = _list(_dict(_dict(gateway.spec.get("tls")).get("frontend")).get("perPort"))
            named = {port for entry in per_port if type(port := _dict(entry).get("port")) is int}
            by_port: dict[int, list[Listener]] = {}
            unknown: list[Listener] = []  # on every port
            default: list[Listener] = []
            for owner in (gateway, *self.listener_sets_of(gateway)):
                for listener in self.listeners(owner):
                    if listener.protocol != "HTTPS" and not listener.malformed:
                        continue
                    port = listener.port
                    if port is None or listener.unknown_port:
                        unknown.append(listener)
                        default.append(listener)
                        continue
                    by_port.setdefault(port, []).append(listener)
                    if port not in named:
                        default.append(listener)
            found = self._frontend[id(gateway)] = (by_port, unknown, default)
        by_port, unknown, default = found
        if ref.tls_port is None:
            return default
        return [*by_port.get(ref.tls_port, ()), *unknown] if unknown else by_port.get(ref.tls_port, [])

    def _manages(self, group: str, kind: str, namespace: str) -> bool:
        """Whether the input holds objects of this kind in this namespace (the repository manages them),
        or is declared complete (`--complete`: nothing exists outside it)."""
        if self.index.options.complete:
            return True
        namespaces = self._managed.get((group, kind))
        if namespaces is None:
            namespaces = self._managed[(group, kind)] = {o.namespace or "" for o in self.index.of_kind(group, kind)}
        # An object of the input that makes one there (a cert-manager Certificate) is evidence too.
        return namespace in namespaces or self.resolution.producers().makes_in(group, kind, namespace)

    def _policy_certificates(self, obj: K8sObject, profile: PolicyProfile) -> list[ObjectRef]:
        out: list[ObjectRef] = []
        by_kind = (
            functools.partial(self._group_for_kind, profile.certificate_kinds) if profile.certificate_match_by_kind else None
        )
        for pattern in profile.certificate_refs:
            for path, raw in expand_pattern(obj.data, pattern):
                if not isinstance(raw, dict):
                    continue
                ref = self._resolve_ref(
                    obj,
                    path,
                    raw,
                    "policy-certificate",
                    default_kind="ConfigMap",
                    check_existence=False,
                    group_for_kind=by_kind,
                )
                if ref is not None:
                    kinds = profile.certificate_kinds
                    out.append(_checked(ref, kinds, profile.certificate_data, profile.certificate_refused_status))
        for spec in profile.object_refs:
            for pattern in spec.paths:
                for path, raw in expand_pattern(obj.data, pattern):
                    if not isinstance(raw, dict):
                        continue
                    group_for_kind: Callable[[str], str | None] | None = None
                    if spec.match_by_kind:
                        group_for_kind = functools.partial(self._group_for_kind, spec.kinds)
                    elif spec.default_group is not None and "group" not in raw:
                        group_for_kind = functools.partial(_constant, spec.default_group)
                    ref = self._resolve_ref(
                        obj,
                        path,
                        raw,
                        "policy-object",
                        default_kind=spec.default_kind,
                        check_existence=False,
                        group_for_kind=group_for_kind,
                    )
                    if ref is not None:
                        if spec.not_permitted_status:
                            ref = dataclasses.replace(ref, not_permitted_status=spec.not_permitted_status)
                        data = spec.data
                        if spec.key_field is not None and isinstance(key := raw.get(spec.key_field), str) and key:
                            data = DataSpec((key,))  # the entry the reference names, no fallback
                        out.append(_checked(ref, spec.kinds or None, data, spec.refused_status))
        return out

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

    def _policy_backends(self, obj: K8sObject, fields: Sequence[str]) -> list[ObjectRef]:
        out: list[ObjectRef] = []
        for pattern in fields:
            for path, raw in expand_pattern(obj.data, pattern):
                if isinstance(raw, dict):
                    ref = self._resolve_ref(obj, path, raw, "policy-backend", default_kind="Service")
                    if ref is not None:
                        out.append(ref)
        return out


TargetErrorReason = Literal["shared-http-port", "merged-gateways", "kind-fields"]


@frozen
class TargetError:
    """Why the controller rejects a policy on one target: the profile fact behind it (`reason`:
    `sharedHttpPort`, `mergedGateways`, `targetKindFields`) and what it says."""

    reason: TargetErrorReason
    message: str

    def __str__(self) -> str:
        return self.message


def _proper_fields(policy: Policy) -> list[str]:
    """The fields of a policy's spec that configure something: not its targets, not what the
    profile says is about merging (`nonProperFields`, the strategy field)."""
    profile = policy.profile
    skip = {*profile.targets.fields, *profile.merge.non_proper_fields}
    if profile.merge.strategy_field:
        skip.add(profile.merge.strategy_field)
    return [k for k in policy.obj.spec if k not in skip]


# The core kinds a Gateway's certificate references may name (Gateway API, apis/v1/gateway_types.go):
# listener certificateRefs and the backend client certificate "can reference standard Kubernetes
# resources, i.e. Secret, or implementation-specific custom resources"; a frontend CA reference is
# a ConfigMap (Core support, key ca.crt) or, as implementations document, a Secret.
_CORE_CERTIFICATE_KINDS: Mapping[str, tuple[str, ...]] = {
    "certificate": ("Secret",),
    "client-certificate": ("Secret",),
    "ca-certificate": ("ConfigMap", "Secret"),
}


# The Gateway's certificate references that may name "implementation-specific custom resources"
# (above): judged by group where they name one outside the core group.
_CUSTOM_CERTIFICATE_PURPOSES = frozenset({"certificate", "client-certificate"})


def _group_of_kind(kinds: Sequence[TargetKind], kind: str) -> str | None:
    return next((k.group for k in kinds if k.kind == kind), None)


def _constant(value: str, _kind: str) -> str:
    return value


def _listener_set_order(listener_set: K8sObject) -> tuple[int, str, str, str]:
    stamp = listener_set.creation_timestamp
    return (0 if stamp is not None else 1, stamp.isoformat() if stamp else "", listener_set.namespace or "", listener_set.name)


def _listener_label(listener: Listener) -> str:
    owner = listener.owner
    return f"{owner.namespace}/{owner.name}/{listener.name}"


# The kinds whose entries a DataSpec describes (a ClusterTrustBundle holds its bundle in spec).
_DATA_KINDS = frozenset({(CORE, "Secret"), (CORE, "ConfigMap")})


def _checked(ref: ObjectRef, kinds: Sequence[TargetKind] | None, data: DataSpec | None, refused: str) -> ObjectRef:
    """A policy's certificate or object reference as its profile judges it: InvalidKind for a
    kind not in `kinds` (None: any kind), MissingData for a Secret or ConfigMap without what
    `data` says its controller reads; `refused`: the conditions the controller then writes."""
    if refused:
        ref = dataclasses.replace(ref, refused_status=refused)
    if kinds is not None and TargetKind(ref.group, ref.kind) not in kinds:
        return dataclasses.replace(ref, status=ReferenceStatus.INVALID_KIND, target=None)
    if data is not None and ref.status == RESOLVED and ref.target is not None and (ref.group, ref.kind) in _DATA_KINDS:
        lacking = _lacks_data(ref.target, data)
        if lacking:
            return dataclasses.replace(ref, status=ReferenceStatus.MISSING_DATA, detail=lacking)
    return ref


def _lacks_data(obj: K8sObject, spec: DataSpec) -> str:
    """What a Secret or ConfigMap lacks of what its reader needs (`spec`), or "" when it has it.
    A Secret's `stringData` is written into `data` by the API server, so both count."""
    entries: set[str] = set()
    for field_name in ("data", "stringData", "binaryData"):
        value = obj.data.get(field_name)
        if isinstance(value, dict):
            entries.update(str(k) for k in value)
    if any(key in entries for key in spec.keys):
        return ""
    if spec.otherwise == "any-entry" and entries:
        return ""
    if spec.otherwise == "only-entry" and len(entries) == 1:
        return ""
    keys = f"no key {spec.keys[0]}" if len(spec.keys) == 1 else f"none of the keys {', '.join(spec.keys)}"
    if spec.otherwise == "only-entry" and entries:
        return f"has {keys} and more than one entry"
    return f"has {keys}" + (" and no entry at all" if spec.otherwise != "none" and not entries else "")


def expand_pattern(data: Any, pattern: str) -> Iterator[tuple[str, Any]]:
    """Values at a profile path pattern such as `spec.extAuth.http.backendRefs[*]` (`[*]`: every item)."""
    parts: list[str | None] = []
    for segment in pattern.split("."):
        if segment.endswith("[*]"):
            parts.extend([segment[:-3], None])
        else:
            parts.append(segment)

    yield from _expand(parts, data, 0, [])


def _expand(parts: list[str | None], value: Any, i: int, path: list[str | int]) -> Iterator[tuple[str, Any]]:
    # A module function, not a closure: a closure that calls itself is a reference cycle, which
    # the command (it runs with the cyclic collector off) would keep until exit, 40 MiB at 100k objects.
    if i == len(parts):
        yield format_path(path), value
        return
    part = parts[i]
    if part is None:
        for k, item in enumerate(_list(value)):
            yield from _expand(parts, item, i + 1, [*path, k])
    elif isinstance(value, dict) and part in value:
        yield from _expand(parts, value[part], i + 1, [*path, part])
