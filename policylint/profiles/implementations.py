"""Gateway API implementations as profile data (profile files' `implementations`): which
controllerNames each is known by, the route features it documents, what its installer ships, the
listener protocols it lets share a port and the kinds its GatewayClass parameters may name.
Rules and semantics read these; they never branch on an implementation's name."""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any

from policylint.k8s.cluster import Installer
from policylint.profiles.registry import TargetKind, builtin_documents, builtin_profiles, target_kind
from policylint.values import frozen


@frozen
class HostSource:
    """A kind whose objects declare hosts of an implementation's service registry: the hosts in
    `hosts` (a spec field, a list of hostnames), visible to the namespaces `export_to` names (a
    spec field, Istio's `exportTo`: absent or `*` every namespace, `.` the object's own, `~`
    none, or namespace names)."""

    kind: TargetKind
    hosts: str
    export_to: str | None = None


@frozen
class PortSharing:
    """Which listener protocols an implementation refuses on one port beyond what the Gateway API
    requires of every implementation (`implementations[].listenerPorts`): `conflicts`, pairs that
    never share a port (ProtocolConflict); `hostnames`, pairs that share one only with different
    hostnames, refused with `hostname_reason`; `hostname_overlap`: such a pair is refused when
    its hostnames overlap (a wildcard matching the other, or one unset), not only when they are
    equal; `tls_overlap`: the protocols whose listeners of one port the implementation checks for
    overlapping hostnames (OverlappingTLSConfig, PL424). Pairs are unordered."""

    conflicts: frozenset[frozenset[str]] = frozenset()
    hostnames: frozenset[frozenset[str]] = frozenset()
    hostname_reason: str = "HostnameConflict"
    docs: str = ""
    hostname_overlap: bool = False
    tls_overlap: tuple[str, ...] = ("HTTPS",)


@frozen
class ParametersSpec:
    """What an implementation takes in a GatewayClass `parametersRef` or a Gateway
    `infrastructure.parametersRef` (`implementations[].parametersRef`): `kinds`, matched by kind
    alone when `match_by_kind`; another kind is InvalidParameters. `class_ignored`: a GatewayClass
    naming one stays accepted and its reference is ignored (NGINX Gateway Fabric), where the
    Gateway API says it SHOULD be rejected."""

    kinds: tuple[TargetKind, ...]
    match_by_kind: bool = False
    class_ignored: bool = False
    docs: str = ""
    # The controller never reads a GatewayClass's parametersRef, whatever it names (Istio): the
    # reference is neither resolved nor judged.
    class_unread: bool = False
    # What becomes of a Gateway whose reference the controller refuses, where it is not the
    # Gateway API's Accepted=False, InvalidParameters (Istio: no deployment is rendered).
    refusal: str = ""

    def takes(self, group: str, kind: str) -> bool:
        return any(k.kind == kind and (self.match_by_kind or k.group == group) for k in self.kinds)

    def describe(self) -> str:
        return " or ".join(f"{k.group}/{k.kind}" if k.group else k.kind for k in self.kinds)


@frozen
class Implementation:
    """A Gateway API implementation, known by its GatewayClasses' controllerName, and the
    implementation-specific route features it documents (profile files' `implementations`)."""

    name: str
    controller_names: tuple[str, ...]
    # Route kinds a backendRef may name to delegate the matched traffic to those routes (kgateway).
    delegation_kinds: tuple[TargetKind, ...] = ()
    delegation_docs: str = ""
    # Backend kinds a route's backendRef names by kind alone: with the group of any of them
    # written, the kind decides (Envoy Gateway: `kind: Backend` without a group is its Backend).
    backend_kinds_by_kind: tuple[TargetKind, ...] = ()
    # GatewayClass names the implementation serves with no GatewayClass object, and the
    # controllerName each stands for: (name, controllerName).
    builtin_classes: tuple[tuple[str, str], ...] = ()
    # Backend kinds whose `name` is a host of the implementation's service registry, not an
    # object (Istio's `networking.istio.io/Hostname`), and the kinds that declare such hosts.
    host_backend_kinds: tuple[TargetKind, ...] = ()
    host_sources: tuple[HostSource, ...] = ()
    # A Gateway's own HTTPS or TLS listener without `tls` is a placeholder the implementation
    # accepts and serves nothing through, leaving its port to ListenerSet listeners (Istio).
    placeholder_listeners: bool = False
    # Kinds a route may name as its parent for mesh (east-west) traffic besides the core
    # Service (GEP-1294): Istio's ServiceEntry. The object must exist, as a Service parent must.
    mesh_parent_kinds: tuple[TargetKind, ...] = ()
    # Backend kinds the implementation looks up as another kind: (as written, looked up as).
    # Istio resolves a ServiceImport as the Service of the same name.
    backends_resolved_as: tuple[tuple[TargetKind, TargetKind], ...] = ()
    # The platform itself creates the `builtin_classes` GatewayClass objects in every cluster where it runs the
    # implementation, under names no other implementation uses (GKE): taken as existing whatever
    # the input holds, not only where a GatewayClass of the implementation shows it runs.
    classes_installed: bool = False
    # API groups whose objects in the input show that the implementation runs there, as a
    # GatewayClass of it does (Istio's security.istio.io): its built-in classes then exist.
    evidence_groups: frozenset[str] = frozenset()
    # The Gateway API channel whose CRDs the implementation's installer ships by default, and the
    # document that says so (`gatewayAPI`); None: the profile says nothing. With `installs`
    # false, the installer leaves the Gateway API CRDs to the user and the channel is the one its
    # documentation has the user install: what the cluster runs was the user's choice.
    gateway_api_channel: str | None = None
    gateway_api_docs: str = ""
    gateway_api_installs: bool = True
    # Listener protocols the implementation refuses on one port beyond the Gateway API's rules
    # (`listenerPorts`); None: only those (policylint.semantics.listeners.port_conflict).
    port_sharing: PortSharing | None = None
    # The kinds a GatewayClass or Gateway parametersRef may name (`parametersRef`); None: not known.
    parameters: ParametersSpec | None = None


@functools.cache
def builtin_implementations() -> tuple[Implementation, ...]:
    """The implementations the shipped profile files describe (`implementations`)."""
    out: list[Implementation] = []
    for _, document in builtin_documents():
        for raw in document.get("implementations", ()):
            delegation = raw.get("routeDelegation") or {}
            hosts = raw.get("hostBackends") or {}
            out.append(
                Implementation(
                    raw["name"],
                    tuple(raw.get("controllerNames", ())),
                    tuple(target_kind(k) for k in delegation.get("kinds", ())),
                    delegation.get("docs", ""),
                    tuple(target_kind(k) for k in (raw.get("backendRefsByKind") or {}).get("kinds", ())),
                    tuple((c["name"], c["controllerName"]) for c in (raw.get("builtinGatewayClasses") or {}).get("classes", ())),
                    tuple(target_kind(k) for k in hosts.get("kinds", ())),
                    tuple(HostSource(target_kind(h["kind"]), h["hosts"], h.get("exportTo")) for h in hosts.get("sources", ())),
                    "placeholderListeners" in raw,
                    tuple(target_kind(k) for k in (raw.get("meshParents") or {}).get("kinds", ())),
                    tuple(
                        (target_kind(k["kind"]), target_kind(k["as"]))
                        for k in (raw.get("backendsResolvedAs") or {}).get("kinds", ())
                    ),
                    gateway_api_channel=(raw.get("gatewayAPI") or {}).get("channel"),
                    gateway_api_docs=(raw.get("gatewayAPI") or {}).get("docs", ""),
                    gateway_api_installs=bool((raw.get("gatewayAPI") or {}).get("installs", True)),
                    classes_installed=bool((raw.get("builtinGatewayClasses") or {}).get("installed", False)),
                    evidence_groups=frozenset((raw.get("builtinGatewayClasses") or {}).get("evidenceGroups", ())),
                    port_sharing=_port_sharing(raw.get("listenerPorts")),
                    parameters=_parameters(raw.get("parametersRef")),
                )
            )
    return tuple(out)


def _parameters(raw: Mapping[str, Any] | None) -> ParametersSpec | None:
    if raw is None:
        return None
    return ParametersSpec(
        tuple(target_kind(k) for k in raw["kinds"]),
        raw.get("matchByKind", False),
        raw.get("classIgnored", False),
        raw["docs"],
        raw.get("classUnread", False),
        raw.get("refusal", ""),
    )


def _port_sharing(raw: Mapping[str, Any] | None) -> PortSharing | None:
    if raw is None:
        return None
    hostnames = raw.get("hostnames") or {}
    return PortSharing(
        frozenset(frozenset(pair) for pair in raw.get("conflicts", ())),
        frozenset(frozenset(pair) for pair in hostnames.get("pairs", ())),
        hostnames.get("reason", "HostnameConflict"),
        raw["docs"],
        hostnames.get("match", "equal") == "overlap",
        tuple(raw.get("tlsOverlap", ("HTTPS",))),
    )


def implementation_name(title: str) -> str:
    """How the configuration names an implementation: `Envoy Gateway` -> `envoy-gateway`, the name
    of its project's profile file."""
    return "-".join(title.lower().split())


@functools.cache
def installers() -> tuple[Installer, ...]:
    """What each built-in implementation's installer puts in a cluster, for inferring the cluster
    (policylint.k8s.cluster): its Gateway API channel, and the API groups of its own policy kinds
    (a CRD of one in the input shows the implementation runs)."""
    groups: dict[str, set[str]] = {}
    for profile in builtin_profiles():
        groups.setdefault(profile.project, set()).add(profile.group)
    out = []
    for implementation in builtin_implementations():
        name = implementation_name(implementation.name)
        out.append(
            Installer(
                name,
                implementation.name,
                implementation.controller_names,
                frozenset(groups.get(name, ())),
                implementation.gateway_api_channel,
                implementation.gateway_api_docs,
                implementation.gateway_api_installs,
            )
        )
    return tuple(out)
