"""A Gateway's or ListenerSet's part of the hierarchy as the simulation walks it: each listener by
its name, and the routes attached to each (policylint.semantics.effective.simulation).

A listener node names its listener by the owner's key and the listener's name, and the routes on
it are those of the owner's attachments that list it. Looked up per listener node, the owner's
listeners were gone through by name and its attachments by listener once for every listener it
has: a Gateway with 32 listeners read its listeners 33 times and its routes' attachments 32. Here
both are read once per owner, in the topology's order, so that the first listener of a name and
the routes in attachment order are what each lookup found.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from policylint.values import frozen

if TYPE_CHECKING:
    from policylint.k8s.objects import K8sObject
    from policylint.semantics.topology import Listener, Topology


@frozen(eq=False)
class OwnerListeners:
    """One owner's listeners by name (the first of each name) and the routes on each listener."""

    named: dict[str, Listener]
    routes: dict[Listener, list[K8sObject]]  # Listener hashes by identity

    def routes_on(self, name: str | None) -> list[K8sObject] | None:
        """The routes attached through the owner's listener of that name (an entry per attachment
        that lists it, in attachment order); None when the owner has no listener of that name."""
        if name is None:
            return None
        listener = self.named.get(name)
        if listener is None:
            return None
        return self.routes.get(listener, [])


def owner_listeners(topology: Topology, owner: K8sObject) -> OwnerListeners:
    named: dict[str, Listener] = {}
    for listener in topology.listeners(owner):
        if listener.name is not None:
            named.setdefault(listener.name, listener)
    routes: dict[Listener, list[K8sObject]] = {}
    for route, attachment in topology.routes_of(owner):
        # `dict.fromkeys`: an attachment counts once for a listener it lists, as
        # `Topology.routes_on` (a membership test) counts it.
        for listener in dict.fromkeys(attachment.listeners):
            routes.setdefault(listener, []).append(route)
    return OwnerListeners(named, routes)
