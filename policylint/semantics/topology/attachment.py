"""Route › listener and ListenerSet › Gateway attachment (docs/semantics.md#route-attachment,
#listenersets): each parentRef matched to listeners by sectionName and port, then admitted by
allowedRoutes kinds, namespaces and hostname intersection, in Envoy Gateway's order."""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

from policylint.input.positions import join
from policylint.k8s.fieldtypes import GATEWAY_GROUP
from policylint.k8s.hostnames import effective_hostnames
from policylint.k8s.objects import K8sObject
from policylint.k8s.selectors import SelectorError, parse_selector
from policylint.profiles.registry import TargetKind
from policylint.semantics.listeners import unsupported_protocol
from policylint.semantics.namespace_admission import (
    ALLOWED_LISTENERS_PATH,
    UnknownNamespace,
    Verdict,
    listener_namespaces_path,
    selector_verdict,
)
from policylint.semantics.topology.listeners import Listeners
from policylint.semantics.topology.model import (
    CORE,
    HOSTNAME_ROUTE_KINDS,
    Listener,
    ListenerSetAttachment,
    ParentAttachment,
    ParentRef,
    Rejection,
    _dict,
    _int,
    _list,
    _str,
    _where,
)
from policylint.vocabulary import Admission, Attachment

if TYPE_CHECKING:
    from policylint.k8s.admissions import Admissions
    from policylint.semantics.resolution import Resolution


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


class Attachments(Listeners):
    """Attaches ListenerSets to Gateways and routes to listeners."""

    def __init__(self, resolution: Resolution, admissions: Admissions) -> None:
        super().__init__(resolution, admissions)
        # The parent kinds besides Service that mean mesh traffic (profile `meshParents`).
        self._mesh_parents = frozenset(k for i in self.resolution.profiles.implementations for k in i.mesh_parent_kinds)

    def _attach_listener_set(self, listener_set: K8sObject) -> ListenerSetAttachment:
        raw = listener_set.spec.get("parentRef")
        if self.index.malformed(listener_set).tainted("spec", "parentRef"):
            return ListenerSetAttachment(
                listener_set, None, Attachment.MALFORMED, "spec.parentRef is malformed (PL010); its Gateway is not evaluated"
            )
        if not isinstance(raw, dict) or not isinstance(raw.get("name"), str):
            return ListenerSetAttachment(listener_set, None, Attachment.INVALID_REF, "spec.parentRef has no name")
        group = _str(raw.get("group"))
        group = GATEWAY_GROUP if group is None else group
        kind = _str(raw.get("kind")) or "Gateway"
        namespace = _str(raw.get("namespace")) or listener_set.namespace or ""
        name = raw["name"]
        gateway = self.index.lookup(group, kind, namespace, name)
        if gateway is None:
            if self.external.match(group, kind, namespace, name):
                return ListenerSetAttachment(listener_set, None, Attachment.EXTERNAL, f"{kind} {namespace}/{name} is external")
            return ListenerSetAttachment(listener_set, None, Attachment.PARENT_NOT_FOUND, f"{kind} {namespace}/{name} not found")
        allowed = _dict(_dict(gateway.spec.get("allowedListeners")).get("namespaces"))
        allowed_from = _str(allowed.get("from")) or "None"
        ls_ns = listener_set.namespace or ""
        where = f"Gateway {_where(gateway)}"
        if self.index.malformed(gateway).tainted("spec", "allowedListeners"):
            assumed = f"{where} has a malformed allowedListeners (PL010); assumed to admit the ListenerSet"
            return ListenerSetAttachment(listener_set, gateway, Attachment.ACCEPTED, assumptions=(assumed,))
        if allowed_from == "All":
            return ListenerSetAttachment(listener_set, gateway, Attachment.ACCEPTED)
        if allowed_from == "Same":
            if ls_ns == gateway.namespace:
                return ListenerSetAttachment(listener_set, gateway, Attachment.ACCEPTED)
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
                return ListenerSetAttachment(listener_set, gateway, Attachment.ACCEPTED)
            if unknown is not None:
                return ListenerSetAttachment(
                    listener_set,
                    gateway,
                    Attachment.NAMESPACE_LABELS_UNKNOWN,
                    f"allowedListeners of {where}: {unknown.message()}",
                    unknown=unknown,
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

    def _kept_attachments(self, route: K8sObject) -> list[ParentAttachment]:
        """`_attach_route`, reused from the last build while every read it made answers the same
        (its parents looked up, their listeners, a ListenerSet's attachment, the namespace
        selectors' verdicts), else worked out with its reads recorded."""
        if self._kept is None:
            return self._attach_route(route)
        return self._recorded(self._kept.attachments, route, self._attach_route, self._reads_hold)

    def _attach(self, route: K8sObject, ref: ParentRef) -> ParentAttachment:
        if ref.malformed:
            return ParentAttachment(
                route, ref, None, Attachment.MALFORMED, message=f"{ref.path} is malformed (PL010); its parent is not evaluated"
            )
        parent = self.index.lookup(ref.group, ref.kind, ref.namespace, ref.name)
        self._note("lookup", (ref.group, ref.kind), ref.namespace, ref.name, parent)
        label = f"{ref.kind} {ref.namespace}/{ref.name}"
        if self._mesh_parent(ref):
            if parent is None and not self.external.match(ref.group, ref.kind, ref.namespace, ref.name):
                return ParentAttachment(route, ref, None, Attachment.PARENT_NOT_FOUND, message=f"{label} not found")
            return ParentAttachment(route, ref, parent, Attachment.MESH)
        if ref.group != GATEWAY_GROUP or ref.kind not in ("Gateway", "ListenerSet"):
            if parent is None:
                # An implementation-specific parent kind: not modelled, never "not found".
                return ParentAttachment(
                    route, ref, None, Attachment.UNKNOWN_PARENT_KIND, message=f"{label}: parent kind not modelled"
                )
            return ParentAttachment(route, ref, parent, Attachment.UNKNOWN_PARENT_KIND)
        if parent is None:
            if self.external.match(ref.group, ref.kind, ref.namespace, ref.name):
                return ParentAttachment(route, ref, None, Attachment.EXTERNAL, message=f"{label} is external")
            return ParentAttachment(route, ref, None, Attachment.PARENT_NOT_FOUND, message=f"{label} not found")
        if ref.kind == "ListenerSet":
            refused = self._through_listener_set(route, ref, parent)
            if refused is not None:
                return refused
        if self.index.malformed(parent).broken("spec", "listeners"):
            message = f"the listeners of {label} are malformed (PL010); attachment not evaluated"
            return ParentAttachment(route, ref, parent, Attachment.MALFORMED, message=message)
        candidates = self.listeners(parent)
        self._note("listeners", parent, candidates)
        if ref.section_name is not None:
            candidates = [c for c in candidates if c.name == ref.section_name or c.unknown_name]
        if ref.port is not None:
            candidates = [c for c in candidates if c.port == ref.port or c.unknown_port]
        if not candidates:
            return self._no_matching_listener(route, ref, parent, label)
        return self._admit(route, ref, parent, label, candidates)

    def _through_listener_set(self, route: K8sObject, ref: ParentRef, parent: K8sObject) -> ParentAttachment | None:
        """The route's attachment when the ListenerSet it names is not attached for certain, else None."""
        att = self.listener_sets.get(parent)
        self._note("listener-set", parent, att)
        if att is not None and att.undecided:
            message = f"ListenerSet {_where(parent)} may or may not be attached: {att.message}"
            from_set = () if att.unknown is None else (att.unknown,)
            return ParentAttachment(route, ref, parent, Attachment.NAMESPACE_LABELS_UNKNOWN, message=message, unknown=from_set)
        if att is not None and not att.attached:
            return ParentAttachment(
                route,
                ref,
                parent,
                Attachment.LISTENER_SET_NOT_ATTACHED,
                message=f"ListenerSet {_where(parent)} is not attached: {att.message}",
            )
        return None

    def _no_matching_listener(self, route: K8sObject, ref: ParentRef, parent: K8sObject, label: str) -> ParentAttachment:
        """No listener of the parent has the sectionName and port the parentRef names."""
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
        return ParentAttachment(route, ref, parent, Attachment.NO_MATCHING_PARENT, message=message)

    def _admit(
        self, route: K8sObject, ref: ParentRef, parent: K8sObject, label: str, candidates: list[Listener]
    ) -> ParentAttachment:
        """The route's attachment through the listeners that match its parentRef, as they admit it."""
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
                Attachment.ACCEPTED,
                tuple(admitted),
                tuple(rejections),
                assumptions=tuple(dict.fromkeys(assumptions)),
                unknown=tuple(unknowns),
            )
        if unknowns:
            # Some listener may admit it, none does for certain: the route is neither attached nor
            # refused (docs/semantics.md#namespaces-not-in-the-input).
            message = f"{label} may or may not admit it: {unknowns[0].message()}"
            return ParentAttachment(
                route, ref, parent, Attachment.NAMESPACE_LABELS_UNKNOWN, (), tuple(rejections), message, unknown=tuple(unknowns)
            )
        # NoMatchingListenerHostname only when every listener fails on hostnames alone
        # (docs/semantics.md#listener-admission, step 4).
        reason = (
            Attachment.NO_MATCHING_LISTENER_HOSTNAME
            if all(r.reason == Attachment.NO_MATCHING_LISTENER_HOSTNAME for r in rejections)
            else Attachment.NOT_ALLOWED_BY_LISTENERS
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
            asked = (listener.owner, listener_namespaces_path(listener.path), listener.allowed_selector, route_ns, "routes")
            verdict, unknown = selector_verdict(self.resolution, *asked, listener.name)
            # What the route's namespace's labels decide: a Namespace added, or relabelled, changes it.
            self._note("selector", *asked, listener.name, (verdict, unknown))
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
