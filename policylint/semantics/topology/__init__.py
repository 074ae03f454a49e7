"""The traffic hierarchy as a controller sees it (docs/semantics.md#the-hierarchy).

GatewayClass › Gateway › (ListenerSet) › listener › Route › rule › backend.
Every edge is resolved with the API defaults and admission rules a controller
applies, so that rules never cry "not found" where a controller would attach:

- Gateway → GatewayClass by `gatewayClassName` (#gateway-and-gatewayclass);
- ListenerSet → Gateway by `parentRef`, admitted by the Gateway's
  `allowedListeners` (default None; #listenersets);
- Route → Gateway/ListenerSet listeners by `parentRefs` (defaults: group
  gateway.networking.k8s.io, kind Gateway, the route's namespace), filtered by
  `sectionName` and `port`, admitted by `allowedRoutes` kinds (or the protocol's
  defaults), namespaces (Same/All/Selector over Namespace labels) and hostname
  intersection (#route-attachment);
- Route rule → backends (`backendRefs`, mirror and ext-auth filters; defaults
  group "" kind Service, the route's namespace), Service ports matched by number
  (#backends); any other backend kind is an opaque node that resolves when the
  object is in the input;
- Gateway/ListenerSet → Secrets and CA ConfigMaps (#certificates);
- every cross-namespace reference checked against ReferenceGrants (#referencegrant).

(`#...` are sections of docs/semantics.md.)

A field of the wrong JSON type (PL010, `policylint.k8s.fieldtypes`) makes the API
server reject its object. The object stays in the topology, so nothing that names
it is reported missing, and what depends on the malformed part is *unknown*: the
outcome that reports nothing is assumed, with the reason recorded (status
`Malformed`, or an assumption), so that the malformed field is the one finding:

- a malformed listener admits the routes that could attach to it (a malformed
  `name` or `port` matches any sectionName or port); a Gateway or ListenerSet
  whose `listeners` is malformed admits every parentRef to it;
- a malformed parentRef is attached (status `Malformed`), its parent not
  evaluated; a route whose `parentRefs` is malformed counts as attached
  (`parents_malformed`);
- malformed route `hostnames` intersect every listener hostname;
- a ListenerSet with a malformed `parentRef`, or whose Gateway has a malformed
  `allowedListeners`, is attached;
- a malformed backend, certificate or CA reference is not resolved; a reference
  to a port of a Service whose `ports` are malformed is not checked;
- a malformed ReferenceGrant permits references into its namespace (`policylint.semantics.grants`);
- a sectionName that may name a malformed section is not checked (`ProjectIndex.sections`).

Everything is computed once per run (the effective-policy engine walks it too).

The package is one class built of parts, one module per concept (each a class that adds its
state and its methods; `Topology` inherits them all, so callers keep one entry point):

- `model.py`: the outcomes and the values the topology is made of (Listener, ParentAttachment,
  ObjectRef, ...);
- `base.py`: the state every part shares, and the lookups over it;
- `references.py`: one reference resolved (defaults, lookup, ReferenceGrant, Service port);
- `gateways.py`: Gateway › GatewayClass, implementations, parametersRef, merged Gateways;
- `listeners.py`: listeners parsed, and Conflicted listeners;
- `attachment.py`: ListenerSet › Gateway and Route › listener admission;
- `delegation.py`: route delegation;
- `backends.py`: route and policy backends;
- `certificates.py`: certificate and CA references of Gateways, ListenerSets and policies;
- `targets.py`: why a controller rejects a policy, whole or on one target;
- `hierarchy.py`: `Topology`, which builds the parts in order, and traffic reachability.

A part inherits the parts whose methods it calls, and no other: `References(TopologyBase)`,
`Gateways(References)`, `Listeners(Gateways)`, `Attachments(Listeners)`, `Delegation(Gateways)`,
`Backends(Attachments, Delegation)`, `Certificates(Listeners)`, `PolicyTargets(Listeners)`, and
`Topology(PolicyTargets, Certificates, Backends)`; each `__init__` adds its own state after
`super().__init__`. So a part's calls are checked by mypy, and a part never reaches one that
needs it.
"""

from policylint.k8s.fieldtypes import GATEWAY_GROUP
from policylint.semantics.topology.hierarchy import Topology
from policylint.semantics.topology.model import (
    CORE,
    HOSTNAME_ROUTE_KINDS,
    PROTOCOL_ROUTE_KINDS,
    ROUTE_KINDS,
    TLS_ROUTE_KINDS,
    ClassRef,
    Listener,
    ListenerSetAttachment,
    ObjectRef,
    ParentAttachment,
    ParentRef,
    Rejection,
    TargetError,
    TargetErrorReason,
    expand_pattern,
)

__all__ = [
    "CORE",
    "GATEWAY_GROUP",
    "HOSTNAME_ROUTE_KINDS",
    "PROTOCOL_ROUTE_KINDS",
    "ROUTE_KINDS",
    "TLS_ROUTE_KINDS",
    "ClassRef",
    "Listener",
    "ListenerSetAttachment",
    "ObjectRef",
    "ParentAttachment",
    "ParentRef",
    "Rejection",
    "TargetError",
    "TargetErrorReason",
    "Topology",
    "expand_pattern",
]
