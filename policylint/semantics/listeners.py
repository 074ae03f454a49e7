"""What a listener's protocol lets a controller do with it, apart from the rest of the topology.

The Gateway API's `ProtocolType` (apis/v1/gateway_types.go in kubernetes-sigs/gateway-api): the
core protocols are HTTP, HTTPS, TLS, TCP and UDP; "implementations can define their own
protocols if a core ProtocolType does not exist. Such definitions must use prefixed name, such
as `mycompany.com/my-custom-protocol`. Un-prefixed names are reserved for core protocols." A
listener whose protocol the implementation does not support gets `Accepted=False`, reason
`UnsupportedProtocol`, and its Gateway `ListenersNotValid` (conformance test
GatewayListenerUnsupportedProtocol, conformance/tests/gateway-invalid-listeners-unsupported-protocol.go).
An un-prefixed name outside the core set is one no implementation may define, so every
controller refuses it; a prefixed one is the implementation's to judge, and is not.
"""

from __future__ import annotations

from policylint.k8s.fieldtypes import GATEWAY_GROUP
from policylint.k8s.hostnames import intersect
from policylint.profiles.implementations import PortSharing

# The kinds that carry listeners (a ListenerSet's merge into its Gateway's: GEP-1713).
LISTENER_PARENTS = ((GATEWAY_GROUP, "Gateway"), (GATEWAY_GROUP, "ListenerSet"))
CORE_PROTOCOLS = ("HTTP", "HTTPS", "TLS", "TCP", "UDP")
# Un-prefixed protocols an implementation serves all the same, against the reservation: Istio's
# waypoints and east-west gateways listen with `protocol: HBONE` (Istio's ambient documentation,
# "Configure waypoint proxies"; pilot/pkg/config/kube/gateway/conversion.go in istio/istio).
IMPLEMENTATION_PROTOCOLS = ("HBONE",)

# Protocols people write where a core one is meant, and the core one that carries that traffic
# (GRPCRoute attaches to HTTP and HTTPS listeners; HTTP/2 and WebSocket ride on HTTP(S)).
_MEANT = {"GRPC": "HTTP or HTTPS", "GRPCS": "HTTPS", "HTTP2": "HTTP or HTTPS", "H2C": "HTTP", "WS": "HTTP", "WSS": "HTTPS"}


def unsupported_protocol(protocol: str | None) -> bool:
    """Whether no controller accepts a listener with this protocol: not a core protocol and not
    domain-prefixed. None (no protocol, or not a string: PL010, PL703) is not judged here."""
    return (
        protocol is not None
        and protocol not in CORE_PROTOCOLS
        and protocol not in IMPLEMENTATION_PROTOCOLS
        and "/" not in protocol
    )


def meant_protocol(protocol: str) -> str | None:
    """The core protocol a listener with this unsupported one most likely meant, if any: the
    same name in another case (`http`), or what carries the traffic it names (`GRPC`)."""
    upper = protocol.upper()
    if upper in CORE_PROTOCOLS:
        return upper
    return _MEANT.get(upper)


# -- sharing a port ---------------------------------------------------------------------------


def port_conflict(
    port: int,
    a: tuple[str, str | None],
    b: tuple[str, str | None],
    sharing: PortSharing | None = None,
    implementation: str = "its implementation",
) -> str | None:
    """Why two listeners on one port, each (protocol, hostname), are not distinct, if they are not.

    What every implementation must refuse (apis/v1/gateway_types.go, Listeners): listeners of one
    protocol must differ in hostname (HTTP, HTTPS, TLS) or not share a port at all (TCP, UDP), and
    a TCP listener conflicts with an HTTP, HTTPS or TLS one on its port. Which other protocols
    share a port is the implementation's (`sharing`, from its profile): the Gateway API leaves it
    open, and controllers differ (Envoy Gateway refuses HTTP beside HTTPS or TLS, Istio TCP beside
    UDP)."""
    (pa, ha), (pb, hb) = a, b
    same_host = (ha or "") == (hb or "")
    if pa == pb:
        if pa in ("TCP", "UDP"):
            return f"both {pa} on port {port}"
        if same_host:
            shown = f"hostname {ha}" if ha else "no hostname"
            return f"both {pa} on port {port} with {shown}: HostnameConflict"
        return None
    if "TCP" in (pa, pb) and {pa, pb} & {"HTTP", "HTTPS", "TLS"}:
        return f"{pa} and {pb} on port {port}: ProtocolConflict"
    if sharing is None:
        return None
    pair = frozenset((pa, pb))
    if pair in sharing.conflicts:
        return f"{pa} and {pb} on port {port}, which {implementation} does not serve on one port: ProtocolConflict"
    if pair in sharing.hostnames and same_host:
        shown = f"hostname {ha}" if ha else "no hostname"
        return f"{pa} and {pb} on port {port} with {shown}, which {implementation} tells apart only by hostname: {sharing.hostname_reason}"
    if pair in sharing.hostnames and sharing.hostname_overlap and hostnames_overlap(ha, hb):
        # NGINX Gateway Fabric routes HTTPS and TLS of one port by SNI in one server: a name both
        # could take is ambiguous, so it refuses them (resolveSameProtocolGroupConflict, haveOverlap).
        return (
            f"{pa} and {pb} on port {port} with overlapping hostnames {ha or '(none: every name)'} and"
            f" {hb or '(none: every name)'}, which {implementation} refuses: {sharing.hostname_reason}"
        )
    return None


def hostnames_overlap(a: str | None, b: str | None) -> bool:
    """Whether two listeners' hostnames share a name: equal, one a wildcard the other matches, or
    either unset (it matches every name). Gateway API, ListenerConditionOverlappingTLSConfig:
    "Listener A matches *.example.com while Listener B matches foo.example.com"; Envoy Gateway
    (areOverlappingHostnames) and NGINX Gateway Fabric (haveOverlap) take an unset one to overlap
    all."""
    if not a or not b:
        return True
    return intersect(a, b) is not None
