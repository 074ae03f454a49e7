"""The listeners of Gateways and ListenerSets (docs/semantics.md#listener-admission): each
one parsed with its API defaults, and the ones that are not distinct from a listener of higher
precedence (Conflicted, GEP-1713)."""

from __future__ import annotations

import dataclasses
from collections import defaultdict
from collections.abc import Iterator
from typing import TYPE_CHECKING

from policylint.k8s.fieldtypes import GATEWAY_GROUP
from policylint.k8s.objects import K8sObject
from policylint.k8s.selectors import LabelSelector, SelectorError, parse_selector
from policylint.semantics.listeners import port_conflict, unsupported_protocol
from policylint.semantics.topology.gateways import Gateways
from policylint.semantics.topology.kept import Conflicts, same_entries
from policylint.semantics.topology.model import (
    Listener,
    _dict,
    _int,
    _list,
    _str,
)

if TYPE_CHECKING:
    from policylint.k8s.admissions import Admissions
    from policylint.profiles.implementations import PortSharing
    from policylint.semantics.resolution import Resolution


def _listener_set_order(listener_set: K8sObject) -> tuple[int, str, str, str]:
    stamp = listener_set.creation_timestamp
    return (0 if stamp is not None else 1, stamp.isoformat() if stamp else "", listener_set.namespace or "", listener_set.name)


def _maybe_indistinct(group: list[Listener]) -> Iterator[tuple[Listener, list[Listener]]]:
    """Each listener of one owner on one port, with the others that `port_conflict` may find it
    not distinct from, in the group's order: all but those of its own protocol (not TCP or UDP)
    with another hostname, which are always distinct. A Gateway lists dozens of HTTPS listeners
    on one port, one per hostname: comparing every pair cost a build a twentieth of its time."""
    by_protocol: dict[str | None, list[int]] = defaultdict(list)
    by_host: dict[tuple[str | None, str], list[int]] = defaultdict(list)
    for k, listener in enumerate(group):
        by_protocol[listener.protocol].append(k)
        by_host[(listener.protocol, listener.hostname or "")].append(k)
    other_protocols: dict[str | None, list[int]] = {}
    for k, listener in enumerate(group):
        protocol = listener.protocol
        same = by_protocol[protocol] if protocol in ("TCP", "UDP") else by_host[(protocol, listener.hostname or "")]
        others = other_protocols.get(protocol)
        if others is None:
            others = other_protocols[protocol] = [j for q, at in by_protocol.items() if q != protocol for j in at]
        yield listener, [group[j] for j in sorted((*same, *others)) if j != k]


class Listeners(Gateways):
    """Listeners as parsed, and their conflicts."""

    def __init__(self, resolution: Resolution, admissions: Admissions) -> None:
        super().__init__(resolution, admissions)
        self._conflicts: dict[Listener, tuple[Listener, str]] = {}  # listener -> (the one it yields to, why)

    def listener_conflict(self, listener: Listener) -> tuple[Listener, str] | None:
        """The listener of higher precedence (or of the same object) that this one is not distinct
        from, and why, when it is Conflicted (Gateway API, Listeners: "Handling indistinct
        Listeners"): it is not accepted, and nothing reaches traffic through it."""
        return self._conflicts.get(listener)

    def _kept_listeners(self, owner: K8sObject) -> list[Listener]:
        """`_parse_listeners`, the same list as the last build's while `owner` is the same object:
        what a listener is depends on its owner and the run's context alone, and the routes'
        attachments kept with it (`Attachments._kept_attachments`) hold these listeners."""
        kept = self._kept
        if kept is None:
            return self._parse_listeners(owner)
        found = kept.listeners.get(owner)
        if found is None:
            found = self._parse_listeners(owner)
            kept.listeners.resolved += 1
        else:
            kept.listeners.reused += 1
        kept.listeners.put(owner, found)
        return found

    def _find_conflicts(self, gateway: K8sObject) -> None:
        # Precedence (GEP-1713): the Gateway's own listeners, then its ListenerSets, oldest first,
        # then by namespace and name.
        sets = sorted(self.listener_sets_of(gateway), key=_listener_set_order)
        # Which protocols share a port beyond the Gateway API's rules is the implementation's
        # (profile `listenerPorts`); a class policylint does not know is held to those rules only.
        implementation = self.gateway_implementation(gateway)
        sharing = implementation.port_sharing if implementation is not None else None
        who = implementation.name if implementation is not None else "its implementation"
        owners = tuple((owner, self.listeners(owner)) for owner in (gateway, *sets))
        kept = self._kept
        before = kept.conflicts.get(gateway) if kept is not None else None
        if before is not None and before.sharing == (sharing, who) and same_entries(before.owners, owners):
            # The same listeners (each owner's list is kept while the owner is the same object)
            # under the same rules: the same conflicts.
            record = before
        else:
            record = Conflicts(owners, (sharing, who), tuple(self._conflicts_among(owners, sharing, who).items()))
        if kept is not None:
            if record is before:
                kept.conflicts.reused += 1
            else:
                kept.conflicts.resolved += 1
            kept.conflicts.put(gateway, record)
        self._conflicts.update(record.found)

    def _conflicts_among(
        self, owners: tuple[tuple[K8sObject, list[Listener]], ...], sharing: PortSharing | None, who: str
    ) -> dict[Listener, tuple[Listener, str]]:
        """The Conflicted listeners of `owners` (in precedence order), each with the listener it
        yields to and why. A ListenerSet's listener that collides with an accepted one of higher
        precedence is the one rejected; two of one object are both rejected (the Gateway API
        forbids picking a winner among them). A listener rejected frees its place: it rejects no
        sibling and nothing of lower precedence (the conformance test ListenerSetProtocolConflict,
        conformance/tests/listenerset-protocol-conflict.go: HTTP listeners of a ListenerSet whose
        TCP listener lost to the Gateway's are accepted)."""
        conflicts: dict[Listener, tuple[Listener, str]] = {}

        def _indistinct(a: Listener, b: Listener) -> str | None:
            assert a.port is not None and a.protocol is not None and b.protocol is not None
            return port_conflict(a.port, (a.protocol, a.hostname), (b.protocol, b.hostname), sharing, who)

        accepted: dict[int, list[Listener]] = defaultdict(list)  # by port, of higher precedence
        for _, listeners in owners:
            mine = [
                (listener.port, listener)
                for listener in listeners
                if not listener.malformed
                and listener.port is not None
                and listener.protocol is not None
                # Not accepted for its protocol (PL421): it takes no port from another listener,
                # as Envoy Gateway's conflict checks skip it (isSupportedListenerProtocol).
                and not unsupported_protocol(listener.protocol)
            ]
            survivors: dict[int, list[Listener]] = defaultdict(list)  # by port, in order
            for port, listener in mine:
                found = next(((o, r) for o in accepted[port] if (r := _indistinct(listener, o)) is not None), None)
                if found is not None:
                    conflicts[listener] = found
                else:
                    survivors[port].append(listener)
            for port, group in survivors.items():
                for listener, others in _maybe_indistinct(group):
                    found = next(((o, r) for o in others if (r := _indistinct(listener, o))), None)
                    if found is not None:
                        conflicts[listener] = found
                accepted[port].extend(listener for listener in group if listener not in conflicts)
        return conflicts

    def gateway_listeners(self, gateway: K8sObject) -> list[Listener]:
        """The listeners of a Gateway and of the ListenerSets attached to it."""
        out = list(self.listeners(gateway))
        for listener_set in self.listener_sets_of(gateway):
            out.extend(self.listeners(listener_set))
        return out

    def _parse_listeners(self, owner: K8sObject) -> list[Listener]:
        out = []
        malformed = self.index.malformed(owner)
        for section in self.index.sections(owner):
            raw = _dict(_list(owner.spec.get("listeners"))[section.position])
            at = ("spec", "listeners", section.position)
            if malformed.tainted(*at):
                # Rejected with its Gateway (PL010): parse nothing from it, assume it admits.
                out.append(
                    Listener(
                        owner=owner,
                        section=section,
                        port=_int(raw.get("port")),
                        protocol=_str(raw.get("protocol")),
                        hostname=_str(raw.get("hostname")) or None,
                        tls_mode=None,
                        allowed_from="All",
                        allowed_selector=None,
                        allowed_kinds=None,
                        malformed=True,
                        unknown_name=section.malformed,
                        unknown_port=malformed.broken(*at, "port"),
                    )
                )
                continue
            allowed = _dict(raw.get("allowedRoutes"))
            namespaces = _dict(allowed.get("namespaces"))
            allowed_from = _str(namespaces.get("from")) or "Same"
            selector: LabelSelector | None = None
            if allowed_from == "Selector":
                try:
                    selector = parse_selector(namespaces.get("selector")) if namespaces.get("selector") is not None else None
                except SelectorError:
                    selector = None
            kinds_raw = allowed.get("kinds")
            # (position, group, kind) of each entry, the group defaulted as the API server does. A
            # group that is present but not a string becomes None, which the declared type omits.
            listed = [
                (j, _str(k.get("group")) if k.get("group") is not None else GATEWAY_GROUP, k["kind"])
                for j, k in enumerate(kinds_raw if isinstance(kinds_raw, list) else ())
                if isinstance(k, dict) and isinstance(k.get("kind"), str)
            ]
            kinds: tuple[tuple[str, str], ...] | None = None
            if isinstance(kinds_raw, list) and kinds_raw:
                kinds = tuple((group, kind) for _, group, kind in listed)  # type: ignore[misc]
            tls = _dict(raw.get("tls"))
            listener = Listener(
                owner=owner,
                section=section,
                port=_int(raw.get("port")),
                protocol=_str(raw.get("protocol")),
                hostname=_str(raw.get("hostname")) or None,
                tls_mode=_str(tls.get("mode")),
                allowed_from=allowed_from,
                allowed_selector=selector,
                allowed_kinds=kinds,
            )
            carried = listener.default_kinds() if kinds else None
            if carried is not None:
                # Only the Gateway API's own route kinds: another group's kind is the implementation's.
                uncarried = tuple((j, kind) for j, group, kind in listed if group == GATEWAY_GROUP and kind not in carried)
                if uncarried:
                    listener = dataclasses.replace(listener, uncarried=uncarried)
            out.append(listener)
        return out
