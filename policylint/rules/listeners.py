"""Listener rules that read one listener alone, or beside the others on its port without a
conflict: what its own fields make the controller refuse or warn about.

Kept apart from `attachment.py` (routes, references, conflicts between listeners), which is
large already.
"""

from __future__ import annotations

from collections.abc import Iterable

from policylint.findings import Issue, Related, Severity
from policylint.input.positions import join
from policylint.k8s.names import ns_name
from policylint.project import Project
from policylint.rules.base import Rule
from policylint.semantics.listeners import (
    CORE_PROTOCOLS,
    LISTENER_PARENTS,
    hostnames_overlap,
    meant_protocol,
    unsupported_protocol,
)
from policylint.stages import Stage


class ListenerProtocolUnsupported(Rule):
    """A listener's protocol is neither a core protocol (HTTP, HTTPS, TLS, TCP, UDP) nor domain-prefixed."""

    id = "PL421"
    name = "listener-protocol-unsupported"
    severity = Severity.ERROR
    subjects = frozenset({"Gateway", "ListenerSet"})
    reads = frozenset({Stage.TOPOLOGY})

    def check(self, project: Project) -> Iterable[Issue]:
        topology = project.topology()
        for group, kind in LISTENER_PARENTS:
            for owner in project.index.of_kind(group, kind):
                listeners = topology.listeners(owner)
                refused = [lst for lst in listeners if not lst.malformed and unsupported_protocol(lst.protocol)]
                if not refused:
                    continue
                # The Gateway's Accepted condition follows from its listeners (the conformance
                # test's two Gateways): False with none left, True with some, ListenersNotValid both.
                none_left = len(refused) == len(listeners)
                gateway = (
                    f"the {kind} gets Accepted=False, ListenersNotValid (none of its listeners is accepted)"
                    if none_left
                    else f"the {kind} reports ListenersNotValid"
                )
                for listener in refused:
                    protocol = listener.protocol or ""
                    message = (
                        f"listener {listener.name} of {kind} {ns_name(owner.namespace, owner.name)} has protocol"
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


class ListenerTLSHostnamesOverlap(Rule):
    """HTTPS listeners of one Gateway (with its ListenerSets) on one port whose hostnames overlap: the controller sets OverlappingTLSConfig."""

    id = "PL424"
    name = "listener-tls-hostnames-overlap"
    severity = Severity.WARNING
    subjects = frozenset({"Gateway", "ListenerSet"})
    reads = frozenset({Stage.TOPOLOGY})

    def check(self, project: Project) -> Iterable[Issue]:
        topology = project.topology()
        for gateway in topology.gateways():
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
            for listener in https:
                other = next(
                    (
                        o
                        for o in https
                        if o is not listener and o.port == listener.port and hostnames_overlap(listener.hostname, o.hostname)
                    ),
                    None,
                )
                if other is None:
                    continue
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
                hint = (
                    "Give the listeners hostnames that do not overlap, or one port each; or serve both names from one listener."
                )
                yield self.issue(
                    listener.owner,
                    join(listener.path, "hostname" if listener.hostname else "port"),
                    message,
                    related=related,
                    hint=hint,
                )


RULES: list[type[Rule]] = [ListenerProtocolUnsupported, ListenerTLSHostnamesOverlap]
