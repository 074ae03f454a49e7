"""Where GatewayClasses and Gateways name the objects holding their implementation's parameters.

Gateway API (apis/v1/gatewayclass_types.go and gateway_types.go in kubernetes-sigs/gateway-api):

- `GatewayClass.spec.parametersRef` is a `ParametersReference` (group, kind, name, and a namespace
  that is "required when referring to a Namespace-scoped resource and MUST be unset when referring
  to a Cluster-scoped resource"). "If the referent cannot be found, refers to an unsupported kind,
  or when the data within that resource is malformed, the GatewayClass SHOULD be rejected with the
  `Accepted` status condition set to `False` and an `InvalidParameters` reason."
- `Gateway.spec.infrastructure.parametersRef` is a `LocalParametersReference` (group, kind, name)
  in the Gateway's own namespace, with the same consequence for the Gateway: `Accepted=False`,
  `InvalidParameters` (conformance test GatewayInvalidParametersRef,
  conformance/tests/gateway-invalid-parameters-ref.go: a reference to group `invalid.io`, kind
  `InvalidParameters`).

This module says where the references are and what a reference of a kind the input does not
serve means (`unserved`); `Topology` resolves them as it resolves certificate references
(purpose `parameters`), and rule PL422 judges them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from policylint.k8s.fieldtypes import GATEWAY_GROUP
from policylint.k8s.objects import K8sObject
from policylint.profiles.implementations import Implementation
from policylint.vocabulary import ReferenceStatus

PURPOSE = "parameters"

# Where each kind holds its reference, and whether it may cross namespaces (a GatewayClass is
# cluster-scoped: its reference names the namespace, or none for a cluster-scoped object).
_FIELDS: Mapping[tuple[str, str], tuple[str, ...]] = {
    (GATEWAY_GROUP, "GatewayClass"): ("spec", "parametersRef"),
    (GATEWAY_GROUP, "Gateway"): ("spec", "infrastructure", "parametersRef"),
}

OWNER_KINDS = tuple(kind for _, kind in _FIELDS)


def parameters_ref(obj: K8sObject) -> tuple[str, Mapping[str, Any]] | None:
    """The path and the raw mapping of an object's parameters reference, if it has one written
    as a mapping with a name (anything else is the schema's to refuse: PL010, PL705)."""
    fields = _FIELDS.get((obj.group, obj.kind))
    if fields is None:
        return None
    node: Any = obj.spec
    for field in fields[1:]:
        if not isinstance(node, dict):
            return None
        node = node.get(field)
    if not isinstance(node, dict) or not isinstance(node.get("name"), str) or not node.get("name"):
        return None
    return ".".join(fields), node


# What a parameters reference of a group no CRD, built-in kind, profile or object of the input
# belongs to says, when nothing known refuses it.
UNSERVED = "a group no CRD, built-in kind, profile or object in the input belongs to"


def unserved(implementation: Implementation | None, *, complete: bool) -> tuple[ReferenceStatus, str]:
    """The status of a parameters reference whose group nothing in the input or the profiles
    serves. An implementation whose profile lists the kinds it takes (Envoy Gateway: EnvoyProxy;
    NGINX Gateway Fabric: NginxProxy) refuses it: InvalidKind, an error (conformance test
    GatewayInvalidParametersRef: group invalid.io). Any other controller may take a kind whose
    CRD is in the cluster rather than the repository (Cilium's CiliumGatewayClassConfig, Kong's
    GatewayConfiguration, `acme.io` in Gateway API's examples/standard/basic-grpc.yaml): Opaque,
    unprovable, unless `--complete` says the input, CRDs included, is the whole cluster."""
    if implementation is not None or complete:
        return ReferenceStatus.INVALID_KIND, UNSERVED
    return ReferenceStatus.OPAQUE, (
        "a group no CRD, built-in kind, profile or object in the input belongs to, read by a controller whose"
        " parameters kinds policylint does not know"
    )
