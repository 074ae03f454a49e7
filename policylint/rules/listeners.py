"""Listener rules that read one listener alone: what its own fields make the controller refuse.

Kept apart from `attachment.py` (routes, references, conflicts between listeners), which is
large already.
"""

from __future__ import annotations

from collections.abc import Iterable

from policylint.findings import Issue, Severity
from policylint.input.positions import join
from policylint.k8s.fieldtypes import GATEWAY_GROUP
from policylint.k8s.names import ns_name
from policylint.project import Project
from policylint.rules.base import Rule
from policylint.semantics.listeners import CORE_PROTOCOLS, meant_protocol, unsupported_protocol
from policylint.stages import Stage

_LISTENER_PARENTS = ((GATEWAY_GROUP, "Gateway"), (GATEWAY_GROUP, "ListenerSet"))


class ListenerProtocolUnsupported(Rule):
    """A listener's protocol is neither a core protocol (HTTP, HTTPS, TLS, TCP, UDP) nor domain-prefixed."""

    id = "PL421"
    name = "listener-protocol-unsupported"
    severity = Severity.ERROR
    subjects = frozenset({"Gateway", "ListenerSet"})
    reads = frozenset({Stage.TOPOLOGY})

    def check(self, project: Project) -> Iterable[Issue]:
        topology = project.topology()
        for group, kind in _LISTENER_PARENTS:
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


RULES: list[type[Rule]] = [ListenerProtocolUnsupported]
