"""PL4xx (part 4): listener rules: what a listener's own fields, or the listeners beside it on its
port, make the controller refuse or warn about (docs/semantics.md#listener-admission): `tls`
that does not fit the protocol, listeners that are not distinct (Conflicted), route kinds the
protocol cannot carry, unsupported protocols, overlapping TLS hostnames.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from policylint.findings import Issue, Related, Severity
from policylint.input.positions import join
from policylint.k8s.names import ns_name
from policylint.k8s.objects import K8sObject
from policylint.project import Project
from policylint.rules.base import Rule, UnitRule
from policylint.rules.refs import label, where
from policylint.semantics.listeners import (
    CORE_PROTOCOLS,
    LISTENER_PARENTS,
    hostnames_overlap,
    meant_protocol,
    unsupported_protocol,
)
from policylint.semantics.topology import (
    Listener,
    Topology,
)
from policylint.stages import Stage


def _listener_owners(project: Project) -> Iterator[K8sObject]:
    """Every object that carries listeners: Gateways and ListenerSets (LISTENER_PARENTS)."""
    for group, kind in LISTENER_PARENTS:
        yield from project.index.of_kind(group, kind)


class ListenerProtocolUnsupported(Rule):
    """A listener's protocol is neither a core protocol (HTTP, HTTPS, TLS, TCP, UDP) nor domain-prefixed."""

    id = "PL421"
    name = "listener-protocol-unsupported"
    severity = Severity.ERROR
    subjects = frozenset({"Gateway", "ListenerSet"})
    reads = frozenset({Stage.TOPOLOGY})

    def check(self, project: Project) -> Iterable[Issue]:
        topology = project.topology()
        for owner in _listener_owners(project):
            listeners = topology.listeners(owner)
            refused = [lst for lst in listeners if not lst.malformed and unsupported_protocol(lst.protocol)]
            if not refused:
                continue
            # The Gateway's Accepted condition follows from its listeners (the conformance
            # test's two Gateways): False with none left, True with some, ListenersNotValid both.
            none_left = len(refused) == len(listeners)
            gateway = (
                f"the {owner.kind} gets Accepted=False, ListenersNotValid (none of its listeners is accepted)"
                if none_left
                else f"the {owner.kind} reports ListenersNotValid"
            )
            for listener in refused:
                protocol = listener.protocol or ""
                message = (
                    f"listener {listener.name} of {owner.kind} {ns_name(owner.namespace, owner.name)} has protocol"
                    f" {protocol!r}, which is neither a core protocol ({', '.join(CORE_PROTOCOLS)}) nor"
                    " domain-prefixed (example.com/PROTOCOL): the listener gets Accepted=False, UnsupportedProtocol,"
                    f" and admits no route, and {gateway} (Gateway API ProtocolType)"
                )
                meant = meant_protocol(protocol)
                hint = (
                    f"Use {meant}."
                    if meant is not None
                    else f"Use one of {', '.join(CORE_PROTOCOLS)}, or the domain-prefixed name your implementation documents."
                )
                yield self.issue(owner, join(listener.path, "protocol"), message, hint=hint)


class ListenerTLSHostnamesOverlap(UnitRule[K8sObject]):
    """HTTPS listeners of one Gateway (with its ListenerSets) on one port whose hostnames overlap: the controller sets OverlappingTLSConfig."""

    id = "PL424"
    name = "listener-tls-hostnames-overlap"
    severity = Severity.WARNING
    subjects = frozenset({"Gateway", "ListenerSet"})
    reads = frozenset({Stage.TOPOLOGY})

    def units(self, project: Project) -> Iterable[K8sObject]:
        return project.topology().gateways()

    def check_unit(self, project: Project, gateway: K8sObject) -> Iterable[Issue]:
        topology = project.topology()
        # The listeners a controller accepts (a Conflicted one, PL416, or one of a protocol it
        # refuses, PL421, gets no TLS configuration), as Envoy Gateway's checkOverlappingHostnames
        # skips listeners already invalid.
        # Which protocols the controller checks is its own (profile `listenerPorts.tlsOverlap`:
        # Envoy Gateway HTTPS, NGINX Gateway Fabric HTTPS and TLS); HTTPS where it is not known.
        implementation = topology.gateway_implementation(gateway)
        sharing = implementation.port_sharing if implementation is not None else None
        protocols = sharing.tls_overlap if sharing is not None else ("HTTPS",)
        https = [
            listener
            for listener in topology.gateway_listeners(gateway)
            if listener.protocol in protocols
            and listener.port is not None
            and not listener.malformed
            and topology.listener_conflict(listener) is None
        ]
        for listener, other in _first_overlaps(https):
            mine = listener.hostname or "no hostname (every name)"
            theirs = other.hostname or "no hostname (every name)"
            message = (
                f"{listener.protocol} listener {listener.name} of {listener.owner.kind} {ns_name(listener.owner.namespace, listener.owner.name)}"
                f" on port {listener.port} has {mine}, which overlaps {theirs} of listener {other.name} of"
                f" {other.owner.kind} {ns_name(other.owner.namespace, other.owner.name)}: the listener gets"
                " OverlappingTLSConfig=True, OverlappingHostnames, and a client that reuses one connection for"
                " both names (HTTP/2 connection coalescing) may be served the other listener's certificate and"
                " routes, or refused with 421 Misdirected Request"
            )
            related = [
                Related(
                    f"listener {other.name} is declared here",
                    object=other.owner,
                    path=join(other.path, "hostname" if other.hostname else "port"),
                )
            ]
            hint = "Give the listeners hostnames that do not overlap, or one port each; or serve both names from one listener."
            yield self.issue(
                listener.owner,
                join(listener.path, "hostname" if listener.hostname else "port"),
                message,
                related=related,
                hint=hint,
            )


def _first_overlaps(listeners: list[Listener]) -> Iterator[tuple[Listener, Listener]]:
    """Each listener whose hostname overlaps another's on its port, in order, with the first such
    other listener (`hostnames_overlap`). Listeners are grouped by port, and a name without a
    wildcard is looked up: it overlaps only the same name, a listener without one and a wildcard
    that matches it. Comparing every pair cost a Gateway's n listeners n² comparisons, most of a
    cold run's PL424 (a Gateway holds up to 64 listeners, its ListenerSets more)."""
    by_port: dict[int | None, _Port] = {}
    for position, listener in enumerate(listeners):
        by_port.setdefault(listener.port, _Port()).add(position, listener)
    for position, listener in enumerate(listeners):
        first = by_port[listener.port].first_overlap(position, listener)
        if first is not None:
            yield listener, listeners[first]


class _Port:
    """The listeners of one port, by position in the Gateway's order: each plain hostname's, the
    wildcards' and those without a hostname."""

    def __init__(self) -> None:
        self.every: list[int] = []  # all of them, in order
        self.unset: list[int] = []
        self.named: dict[str, list[int]] = {}
        self.wildcards: list[tuple[int, str]] = []

    def add(self, position: int, listener: Listener) -> None:
        self.every.append(position)
        name = listener.hostname
        if not name:
            self.unset.append(position)
        elif name.startswith("*"):
            self.wildcards.append((position, name))
        else:
            self.named.setdefault(name, []).append(position)

    def first_overlap(self, position: int, listener: Listener) -> int | None:
        """The position of the first other listener whose hostname overlaps `listener`'s."""
        name = listener.hostname
        if not name:
            return _first_other(self.every, position)  # no hostname: every name
        found = [_first_other(self.unset, position)]
        if name.startswith("*"):
            # A wildcard is not among the plain names: each name's first listener is another.
            found += [positions[0] for other, positions in self.named.items() if hostnames_overlap(name, other)]
        else:
            found.append(_first_other(self.named.get(name, []), position))
        found += [p for p, other in self.wildcards if p != position and hostnames_overlap(name, other)]
        return min((p for p in found if p is not None), default=None)


def _first_other(positions: list[int], position: int) -> int | None:
    """The first of `positions` (in order) that is not `position`."""
    for p in positions[:2]:
        if p != position:
            return p
    return None


# Listener protocols with and without TLS (apis/v1/gateway_types.go, Listener.TLS).
_TLS_PROTOCOLS = ("HTTPS", "TLS")
_PLAIN_PROTOCOLS = ("HTTP", "TCP", "UDP")


class ListenerTlsMismatch(UnitRule[K8sObject]):
    """A listener's `tls` does not match its protocol: missing on HTTPS or TLS, set on HTTP, TCP or UDP."""

    id = "PL415"
    name = "listener-tls-mismatch"
    severity = Severity.ERROR
    covers_cel = frozenset(
        {
            "tls must not be specified for protocols ['HTTP', 'TCP', 'UDP']",
            "tls mode must be set for protocol TLS",
            "tls mode must be Terminate for protocol HTTPS",
        }
    )  # the CRDs' CEL rules for the same problem (PL704)
    subjects = frozenset({"Gateway", "ListenerSet"})
    reads = frozenset({Stage.TOPOLOGY})

    def units(self, project: Project) -> Iterable[K8sObject]:
        return _listener_owners(project)

    def check_unit(self, project: Project, owner: K8sObject) -> Iterable[Issue]:
        topology = project.topology()
        malformed = project.index.malformed(owner)
        placeholder = _placeholder_implementation(topology, owner)
        listeners = owner.spec.get("listeners")
        for i, listener in enumerate(listeners if isinstance(listeners, list) else ()):
            if not isinstance(listener, dict) or malformed.tainted("spec", "listeners", i):
                continue  # PL010's
            protocol, has_tls = listener.get("protocol"), "tls" in listener
            path = join("spec.listeners", i)
            name = listener.get("name")
            if protocol in _TLS_PROTOCOLS and not has_tls:
                # Listener.TLS: "required if the Protocol field is HTTPS or TLS". The API server
                # stores it (no CEL rule), and the controller cannot terminate or route it.
                message = (
                    f"listener {name} of {owner.kind} {where(owner)} uses protocol {protocol} without `tls`: the listener"
                    " is invalid (the Gateway API requires tls for HTTPS and TLS listeners), so no route attached"
                    " to it receives traffic through it"
                )
                hint = (
                    "Add tls.certificateRefs (a Secret with the certificate)."
                    if protocol == "HTTPS"
                    else "Add tls.mode (Passthrough or Terminate)."
                )
                if placeholder is not None:
                    message = (
                        f"listener {name} of {owner.kind} {where(owner)} uses protocol {protocol} without `tls`:"
                        f" {placeholder} keeps it as a placeholder for the ListenerSets on its port (its status stays"
                        " Accepted) and serves nothing through it, so no route attached to it receives traffic"
                        " through it"
                    )
                    hint = f"Attach routes to the ListenerSet listeners on its port, or {hint[0].lower()}{hint[1:]}"
                    yield self.issue(owner, join(path, "protocol"), message, hint=hint, severity=Severity.INFO)
                    continue
                yield self.issue(owner, join(path, "protocol"), message, hint=hint)
            elif protocol == "HTTPS" and isinstance(listener["tls"], dict) and listener["tls"].get("mode") == "Passthrough":
                message, hint = _https_passthrough(owner, name)
                yield self.issue(owner, join(join(path, "tls"), "mode"), message, hint=hint)
            elif protocol in _PLAIN_PROTOCOLS and has_tls:
                # CRD validation: "tls must not be specified for protocols ['HTTP', 'TCP', 'UDP']".
                message = (
                    f"listener {name} of {owner.kind} {where(owner)} sets `tls` on protocol {protocol}: the CRD's"
                    " validation rejects the whole object (tls must not be specified for protocols HTTP, TCP, UDP)"
                )
                yield self.issue(owner, join(path, "tls"), message, hint="Use protocol HTTPS or TLS, or remove tls.")


def _https_passthrough(owner: K8sObject, name: object) -> tuple[str, str]:
    """The finding on an HTTPS listener in Passthrough mode, and its hint. An HTTPS listener
    carries HTTPRoutes, which route on what only a terminated session shows; Passthrough hands the
    session on undecrypted ("SSL passthrough is only supported by TLSRoute", TLSModeType in
    apis/v1/gateway_types.go at v1.0.0). From v1.1 the Gateway CRD refuses it (the CEL rule "tls
    mode must be Terminate for protocol HTTPS"); v1.0.0's CRD and its optional webhook store it
    (docs/semantics.md#the-cluster-model), but no release gives it a meaning."""
    message = (
        f"listener {name} of {owner.kind} {where(owner)} uses protocol HTTPS with tls.mode Passthrough: an HTTPS"
        " listener terminates TLS to route HTTP, and passthrough is for protocol TLS with TLSRoutes (Gateway API"
        ' v1.1 and later refuse the object: "tls mode must be Terminate for protocol HTTPS"; v1.0.0 stores it,'
        " and no route attached to the listener receives traffic through it)"
    )
    return message, "Use protocol TLS with TLSRoutes to pass the session through, or tls.mode Terminate with certificateRefs."


def _placeholder_implementation(topology: Topology, owner: K8sObject) -> str | None:
    """The name of the implementation of a Gateway's class that keeps a listener without `tls` as
    a placeholder for ListenerSets (profile `implementations[].placeholderListeners`), if any."""
    implementation = topology.gateway_implementation(owner) if owner.kind == "Gateway" else None
    return implementation.name if implementation is not None and implementation.placeholder_listeners else None


class ListenerConflict(Rule):
    """Listeners of one Gateway (with its ListenerSets) that are not distinct: same port and protocol and hostname, TCP sharing a port, or protocols the implementation does not serve on one port."""

    id = "PL416"
    name = "listener-conflict"
    severity = Severity.ERROR
    covers_cel = frozenset(
        {"Combination of port, protocol and hostname must be unique for each listener"}
    )  # the CRDs' CEL rules for the same problem (PL704)
    subjects = frozenset({"Gateway", "ListenerSet"})
    reads = frozenset({Stage.TOPOLOGY})

    def check(self, project: Project) -> Iterable[Issue]:
        topology = project.topology()
        for gateway in topology.gateways():
            for listener in topology.gateway_listeners(gateway):
                conflict = topology.listener_conflict(listener)
                if conflict is not None:
                    yield self._issue(listener, *conflict)

    def _issue(self, listener: Listener, other: Listener, reason: str) -> Issue:
        message = (
            f"listener {listener.name} of {label(listener.owner)} is not distinct from listener {other.name} of"
            f" {label(other.owner)} ({reason}): it is Conflicted and not accepted, so no route attached to it"
            ' receives traffic through it (Gateway API, Listeners: "Handling indistinct Listeners")'
        )
        related = [Related(f"listener {other.name} is declared here", object=other.owner, path=join(other.path, "port"))]
        # A protocol the implementation does not serve beside another on one port is not told
        # apart by hostname (ProtocolConflict); only another port separates them.
        hint = (
            "Give the listener another port."
            if reason.endswith("ProtocolConflict") and "only by hostname" not in reason
            else "Give the listener another port, or (for HTTP, HTTPS and TLS) another hostname."
        )
        return self.issue(listener.owner, join(listener.path, "port"), message, related=related, hint=hint)


class ListenerRouteKindNotCarried(Rule):
    """A listener's `allowedRoutes.kinds` lists a Gateway API route kind its protocol cannot carry."""

    id = "PL419"
    name = "listener-route-kind-not-carried"
    severity = Severity.ERROR
    subjects = frozenset({"Gateway", "ListenerSet"})
    reads = frozenset({Stage.TOPOLOGY})

    def check(self, project: Project) -> Iterable[Issue]:
        topology = project.topology()
        for owner in _listener_owners(project):
            for listener in topology.listeners(owner):
                if not listener.uncarried:
                    continue
                carried = listener.default_kinds() or ()
                listed = listener.allowed_kinds or ()
                none_left = all(k not in carried for _, k in listed)
                protocol = listener.protocol if listener.protocol != "TLS" else f"TLS {listener.tls_mode or 'Terminate'}"
                a = "an" if (protocol or "").startswith("H") else "a"  # an HTTP(S), a TCP, UDP or TLS listener
                for position, route_kind in listener.uncarried:
                    message = (
                        f"listener {listener.name} of {owner.kind} {where(owner)} lists {route_kind} in allowedRoutes.kinds,"
                        f" which {a} {protocol} listener cannot carry (it carries {', '.join(carried)}): the listener"
                        " gets ResolvedRefs=False, InvalidRouteKinds"
                        + (", and admits no route at all" if none_left else f", and no {route_kind} attaches to it")
                        + " (Gateway API Listener.AllowedRoutes)"
                    )
                    hint = f"List the kinds {a} {protocol} listener carries ({', '.join(carried)}), or change its protocol."
                    path = join(listener.path, "allowedRoutes", "kinds", position, "kind")
                    yield self.issue(owner, path, message, hint=hint)


RULES: list[type[Rule]] = [
    ListenerTlsMismatch,
    ListenerConflict,
    ListenerRouteKindNotCarried,
    ListenerProtocolUnsupported,
    ListenerTLSHostnamesOverlap,
]
