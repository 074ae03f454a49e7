"""The `Topology`: every part built once, in the order the hierarchy needs (classes and
listeners, ListenerSets, conflicts, routes, policies), and whether traffic reaches an object."""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

from policylint.k8s.fieldtypes import GATEWAY_GROUP
from policylint.k8s.objects import K8sObject
from policylint.profiles.holders import builtin_holders
from policylint.semantics.listeners import unsupported_protocol
from policylint.semantics.topology.backends import Backends
from policylint.semantics.topology.certificates import Certificates
from policylint.semantics.topology.kept import KeptTopology, hand_on
from policylint.semantics.topology.model import ROUTE_KINDS, _where
from policylint.semantics.topology.targets import PolicyTargets
from policylint.vocabulary import ReferenceStatus, Traffic

if TYPE_CHECKING:
    from policylint.k8s.admissions import Admissions
    from policylint.k8s.index import Section
    from policylint.profiles.registry import PolicyProfile
    from policylint.semantics.resolution import Resolution
    from policylint.semantics.topology.model import ObjectRef


class Topology(PolicyTargets, Certificates, Backends):
    """The resolved hierarchy. Build with `Topology(resolution, admissions)`; everything is computed eagerly, once.
    `kept`: what the last build of a long-lived process resolved, to reuse where its reads still
    hold (policylint.semantics.topology.kept)."""

    def __init__(self, resolution: Resolution, admissions: Admissions, kept: KeptTopology | None = None) -> None:
        super().__init__(resolution, admissions)
        self._kept = kept
        # Each distinct reference resolved once while the topology is built (`_resolve_ref`), the
        # table let go once it is.
        self._resolved = {}
        try:
            self._build()
        finally:
            self._resolved = None
        if kept is not None:
            kept.finish()

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
            att = self.listener_sets.get(obj)
            if att is not None and att.undecided and att.unknown is not None:
                return Traffic.UNKNOWN, f"ListenerSet {_where(obj)} may or may not be attached: {att.unknown.message()}"
            if att is not None and not att.attached:
                return (
                    Traffic.LISTENER_SET_NOT_ATTACHED,
                    f"ListenerSet {_where(obj)} is not attached to its Gateway ({att.message})",
                )
        if obj.kind == "Gateway":
            ref = self.class_refs.get(obj)
            if ref is not None and ref.status == ReferenceStatus.NOT_FOUND:
                return (
                    Traffic.NO_GATEWAY_CLASS,
                    f"Gateway {_where(obj)} names GatewayClass {ref.name}, which is not in the input, so it is never reconciled",
                )
            invalid = self._invalid_parameters(obj, ref.target if ref is not None else None)
            if invalid is not None:
                return Traffic.INVALID_PARAMETERS, invalid
        return Traffic.CARRIES, ""

    def _build(self) -> None:
        index = self.index
        for gateway in self.gateways():
            self._listeners[gateway] = self._kept_listeners(gateway)
            self.class_refs[gateway] = self._class_ref(gateway)
            self._add_refs(gateway, self._kept_certificate_refs(gateway) + self._parameters_refs(gateway))
        for gateway_class in index.of_kind(GATEWAY_GROUP, "GatewayClass"):
            self._add_refs(gateway_class, self._parameters_refs(gateway_class))
        for listener_set in index.of_kind(GATEWAY_GROUP, "ListenerSet"):
            self._listeners[listener_set] = self._kept_listeners(listener_set)
            set_att = self._attach_listener_set(listener_set)
            self.listener_sets[listener_set] = set_att
            if set_att.gateway is not None and set_att.attached:
                self._sets_of_gateway[set_att.gateway].append(listener_set)
            self._add_refs(listener_set, self._kept_certificate_refs(listener_set))
        if self._kept is not None:
            hand_on(self._kept.sets_of, self._sets_of_gateway)
        for gateway in self.gateways():
            self._find_conflicts(gateway)
        for route in self.routes():
            attachments = self._kept_attachments(route)
            self.parents[route] = attachments
            for att in attachments:
                if att.parent is not None and att.listeners:
                    self._routes_on[att.parent].append((route, att))
            self._add_refs(route, self._kept_route_backends(route))
        if self._kept is not None:
            # Gathered from every route, kept or not: a route attached in another file counts.
            hand_on(self._kept.routes_on, self._routes_on)
        for policy in self.resolution.policies():
            profile = policy.profile
            errors = self._kept_admission_errors(policy.obj)
            if profile.backend_refs or profile.certificate_refs or profile.object_refs:
                refs = self._kept_policy_refs(policy.obj, profile)
                self._add_refs(policy.obj, refs)
                errors += tuple(e for e in map(self._backend_error, refs) if e is not None)
            if errors:
                self.spec_errors[policy.obj] = errors
        self._holder_refs()

    def _kept_policy_refs(self, obj: K8sObject, profile: PolicyProfile) -> list[ObjectRef]:
        """A policy's backend, certificate and object references (its profile is a function of its
        kind and the run's profiles), reused from the last build while every read they made
        answers the same, else resolved with their reads recorded."""

        def work(policy: K8sObject) -> list[ObjectRef]:
            return self._policy_backends(policy, profile.backend_refs) + self._policy_certificates(policy, profile)

        if self._kept is None:
            return work(obj)
        return self._recorded(self._kept.policies, obj, work, self._refs_hold)

    def _holder_refs(self) -> None:
        """The references objects other than policies hold (profile `holders`: Envoy Gateway's
        HTTPRouteFilter and EnvoyProxy), resolved as a policy's are; each carries what its
        controller does when it is invalid (`ObjectRef.effect`)."""
        for holder in builtin_holders():
            for obj in self.index.of_kind(holder.group, holder.kind):
                if self.index.malformed(obj).tainted("spec"):
                    continue  # PL010's
                refs = self._policy_backends(obj, holder.backend_refs, grants=holder.backend_grants)
                refs += self._object_refs(obj, holder.object_refs)
                self._add_refs(obj, [dataclasses.replace(ref, effect=holder.effect) for ref in refs])

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
