"""What the topology is made of: its outcomes (attachment and reference statuses), the
listeners, parentRefs, attachments and object references it resolves, and the small readers of
raw fields every part shares (`_str`, `_int`, ...; a field of the wrong type reads as absent)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any, Literal

from policylint.input.positions import format_path, parse_path
from policylint.k8s.fieldtypes import INTEGER, Malformed, has_type
from policylint.k8s.names import ns_name
from policylint.k8s.objects import K8sObject
from policylint.k8s.selectors import LabelSelector
from policylint.semantics.grants import GrantCheck, Reference
from policylint.semantics.namespace_admission import (
    UnknownNamespace,
)
from policylint.values import frozen
from policylint.vocabulary import Admission, Attachment, ReferenceStatus

if TYPE_CHECKING:
    from policylint.k8s.index import Section


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
        return (
            Attachment.NO_MATCHING_LISTENER_HOSTNAME if self.check is Admission.HOSTNAME else Attachment.NOT_ALLOWED_BY_LISTENERS
        )


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
        return self.status in (
            Attachment.ACCEPTED,
            Attachment.EXTERNAL,
            Attachment.MESH,
            Attachment.UNKNOWN_PARENT_KIND,
            Attachment.MALFORMED,
        )

    @property
    def undecided(self) -> bool:
        return self.status is Attachment.NAMESPACE_LABELS_UNKNOWN


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
        return self.status in (Attachment.ACCEPTED, Attachment.EXTERNAL, Attachment.MALFORMED)

    @property
    def undecided(self) -> bool:
        return self.status is Attachment.NAMESPACE_LABELS_UNKNOWN


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
    # A holder's reference (an object other than a policy: policylint.profiles.holders): what its
    # controller does when the reference is invalid, in words (profile `holders[].effect`).
    effect: str = ""

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


TargetErrorReason = Literal["shared-http-port", "merged-gateways", "kind-fields"]


@frozen
class TargetError:
    """Why the controller rejects a policy on one target: the profile fact behind it (`reason`:
    `sharedHttpPort`, `mergedGateways`, `targetKindFields`) and what it says."""

    reason: TargetErrorReason
    message: str

    def __str__(self) -> str:
        return self.message


def expand_pattern(data: Any, pattern: str) -> Iterator[tuple[str, Any]]:
    """Values at a profile path pattern such as `spec.extAuth.http.backendRefs[*]` (`[*]`: every item;
    a `*` segment: every value of a map, `spec.rules.authentication.*.apiKey`)."""
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
    elif part == "*" and isinstance(value, dict):
        for key, item in value.items():
            if isinstance(key, str):
                yield from _expand(parts, item, i + 1, [*path, key])
    elif isinstance(value, dict) and part in value:
        yield from _expand(parts, value[part], i + 1, [*path, part])
