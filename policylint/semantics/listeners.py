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
