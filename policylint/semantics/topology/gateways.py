"""Gateway › GatewayClass (docs/semantics.md#gateway-and-gatewayclass): the class each
Gateway names, the implementation that serves it, its `parametersRef` and whether the class
merges its Gateways (profile `mergedGateways`)."""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

from policylint.k8s.fieldtypes import GATEWAY_GROUP
from policylint.k8s.objects import K8sObject
from policylint.profiles.implementations import Implementation
from policylint.profiles.registry import PolicyProfile
from policylint.semantics.parameters import PURPOSE as PARAMETERS
from policylint.semantics.parameters import parameters_ref, unserved
from policylint.semantics.topology.model import CORE, ClassRef, ObjectRef, _dict, _ref_malformed, _str, _where
from policylint.semantics.topology.references import References, Resolving
from policylint.vocabulary import ReferenceStatus

if TYPE_CHECKING:
    pass


class Gateways(References):
    """A Gateway's class, implementation and parameters."""

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

    def proxy_gateways(self, gateway: K8sObject, profile: PolicyProfile) -> list[K8sObject]:
        """The Gateways whose listeners share proxy listeners with this one: itself, or every Gateway
        of its class when the class merges its Gateways (`mergedGateways`)."""
        ref = self.class_refs.get(gateway)
        gateway_class = ref.target if ref is not None else None
        if gateway_class is None or not self._merges(gateway_class, profile):
            return [gateway]
        return [g for g in self.gateways() if (r := self.class_refs.get(g)) is not None and r.target is gateway_class]

    def _class_ref(self, gateway: K8sObject) -> ClassRef:
        name = _str(gateway.spec.get("gatewayClassName"))
        if not name:
            return ClassRef(gateway, None, ReferenceStatus.INVALID_REF)
        target = self.index.lookup(GATEWAY_GROUP, "GatewayClass", None, name)
        if target is not None:
            return ClassRef(gateway, name, ReferenceStatus.RESOLVED, target)
        if self.external.match(GATEWAY_GROUP, "GatewayClass", None, name):
            return ClassRef(gateway, name, ReferenceStatus.EXTERNAL)
        controller = self._builtin_classes().get(name)
        if controller is not None:
            return ClassRef(gateway, name, ReferenceStatus.EXTERNAL, builtin_controller=controller)
        return ClassRef(gateway, name, ReferenceStatus.NOT_FOUND)

    def _builtin_classes(self) -> dict[str, str]:
        """Class name -> controllerName of the classes served with no GatewayClass object in the
        input (decided once, by the resolution: `Resolution.builtin_classes`)."""
        return self.resolution.builtin_classes()

    def _class_implementations(self) -> list[Implementation | None]:
        return self.resolution.class_implementations()

    def gateway_implementation(self, gateway: K8sObject) -> Implementation | None:
        """The implementation of a Gateway, by its GatewayClass's controllerName; None for one
        policylint does not know (or no class)."""
        ref = self.class_refs.get(gateway)
        controller = ref.controller if ref is not None else None
        return self.resolution.profiles.implementation_of(controller) if controller else None

    def _invalid_parameters(self, gateway: K8sObject, gateway_class: K8sObject | None) -> str | None:
        """Why a Gateway is not accepted for its parameters, if it is not: its own reference, or its
        class's, names a group nothing serves (Accepted=False, InvalidParameters; PL422)."""
        for owner in (gateway, gateway_class):
            if owner is None or (owner is gateway_class and self._class_parameters_ignored(owner)):
                continue
            for ref in self.references.get(owner, []):
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

    def _class_parameters_unread(self, gateway_class: K8sObject) -> bool:
        """Whether the class's implementation never reads a GatewayClass's parameters reference
        (`parametersRef.classUnread`: Istio reads only a Gateway's)."""
        implementation = self.parameters_implementation(gateway_class)
        return implementation is not None and implementation.parameters is not None and implementation.parameters.class_unread

    def _parameters_refs(self, owner: K8sObject) -> list[ObjectRef]:
        """The parameters reference of a GatewayClass or Gateway (`policylint.semantics.parameters`),
        resolved as a certificate reference is: a missing object is looked for only where the input
        manages its kind (or with --complete), and a group nothing serves is InvalidKind always."""
        found = parameters_ref(owner)
        if found is None or (owner.kind == "GatewayClass" and self._class_parameters_unread(owner)):
            return []
        path, raw = found
        if _ref_malformed(self.index.malformed(owner), path):
            return []  # rejected with its owner (PL010)
        ref = self._resolve_ref(owner, path, raw, PARAMETERS, Resolving("", check_existence=False, grant_needed=False))
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
