"""PL405–PL413 (route attachment and backends): behaviour the fixtures cannot show (external
objects, hints, related locations, one finding per failing parentRef)."""

from __future__ import annotations

from pathlib import Path

from policylint.findings import Severity
from policylint.k8s.external import ExternalObjects
from tests.lintutil import lint_paths, lint_text, only
from tests.manifests import first, gateway, gateway_class, listener_set, policy, selector_listener, service
from tests.manifests import route as route_doc

CLASS = first(gateway_class())

SHARED = (
    CLASS
    + gateway(
        "  - {name: http, protocol: HTTP, port: 80, allowedRoutes: {namespaces: {from: All}}}\n"
        "  - {name: internal, protocol: HTTP, port: 8080}\n",
        name="shared",
        ns="infra",
        spec="  allowedListeners: {namespaces: {from: Same}}\n",
    )
    + listener_set(
        name="extra",
        ns="infra",
        parent="{name: shared}",
        listeners="[{name: admin, protocol: HTTP, port: 9090, allowedRoutes: {namespaces: {from: All}}}]",
    )
    + service(ports="[{name: http, port: 80, targetPort: 8080}]")
)
# A BackendTrafficPolicy with retries on HTTPRoute app/web (routes here are named web).
RETRIES = policy(
    "BackendTrafficPolicy",
    "[{group: gateway.networking.k8s.io, kind: HTTPRoute, name: web}]",
    name="retries",
    spec="  retry: {numRetries: 3}\n",
)


def route(parent_refs: str, *, spec: str = "", backend: str = "{name: web, port: 80}") -> str:
    """HTTPRoute app/web with one rule sending to `backend`."""
    return route_doc(parent_refs, name="web", spec=spec, rules=f"[{{backendRefs: [{backend}]}}]")


def rules_of(text: str, **options: object) -> list[tuple[str, str]]:
    return [(f.rule, f.path) for f in lint_text(text, **options).findings]


def test_complete_topology_is_clean() -> None:
    text = SHARED + route(
        "[{name: shared, namespace: infra, sectionName: http}, {kind: ListenerSet, name: extra, namespace: infra}]"
    )
    assert rules_of(text) == []


def test_pl405_typo_names_the_close_class_instead_of_the_external_hint() -> None:
    text = CLASS + gateway(ns="infra", class_name="egg")
    (finding,) = only(lint_text(text), "PL405")
    assert "did you mean GatewayClass eg?" in finding.message and "--external" not in finding.message
    assert [r.line for r in finding.related] == [3]


# Istio serves istio, istio-waypoint, istio-remote and istio-east-west with no GatewayClass
# object (pilot/pkg/config/kube/gatewaycommon: BuiltinGatewayClasses, FetchGatewayClass); its
# golden status for testdata/listenerset-invalid.yaml has Gateway `waypoint` (class
# istio-waypoint, not in the input) Accepted=True.
ISTIO_CLASS = """\
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: istio}
spec: {controllerName: istio.io/gateway-controller}
---
"""


def test_an_istio_built_in_class_exists_where_istio_runs() -> None:
    # Before: PL405 error, "references a non-existent GatewayClass istio-waypoint".
    text = ISTIO_CLASS + gateway(class_name="istio-waypoint") + route("[{name: gw}]") + service()
    result = lint_text(text)
    assert only(result, "PL405") == []
    topology = result.project.topology()
    (gw,) = topology.gateways()
    ref = topology.class_refs[gw]
    assert (ref.status.value, ref.controller) == ("External", "istio.io/mesh-controller")
    (web,) = result.project.index.of_kind("gateway.networking.k8s.io", "HTTPRoute")
    assert topology.traffic(web)[0].label == "Carries"


def test_an_istio_built_in_class_is_unproven_where_only_another_controller_shows() -> None:
    # istiod creates istio-waypoint itself; a repository holding another controller's class proves
    # nothing about whether istiod runs too: a warning saying how to make it provable, an error
    # once the input is declared the whole cluster.
    (finding,) = only(lint_text(CLASS + gateway(ns="infra", class_name="istio-waypoint")), "PL405")
    assert finding.severity is Severity.WARNING and "creates it when installed" in finding.message
    assert finding.hint is not None and "implementations: [istio]" in finding.hint
    (complete,) = only(lint_text(CLASS + gateway(ns="infra", class_name="istio-waypoint"), complete=True), "PL405")
    assert complete.severity is Severity.ERROR and "non-existent GatewayClass istio-waypoint" in complete.message


def test_a_gke_gateway_class_exists_with_no_gateway_class_in_the_input() -> None:
    # GKE creates its GatewayClasses in every cluster with the Gateway API enabled ("GatewayClass
    # capabilities", GKE documentation), so repositories never define them. Before: PL405,
    # "the input holds no GatewayClass".
    result = lint_text(gateway(class_name="gke-l7-global-external-managed") + route("[{name: gw}]") + service())
    assert only(result, "PL405") == []
    topology = result.project.topology()
    (gw,) = topology.gateways()
    ref = topology.class_refs[gw]
    assert (ref.status.value, ref.controller) == ("External", "networking.gke.io/gateway")
    (web,) = result.project.index.of_kind("gateway.networking.k8s.io", "HTTPRoute")
    assert topology.traffic(web)[0].label == "Carries"
    # A name GKE does not serve is still missing.
    (finding,) = only(lint_text(gateway(class_name="gke-l7-global-external")), "PL405")
    assert "gke-l7-global-external" in finding.message


# Istio's golden statuses (pilot/pkg/config/kube/gateway/testdata): serviceentry.yaml routes to
# `kind: Hostname, group: networking.istio.io, name: google.com`, a host its ServiceEntry declares
# (ResolvedRefs=True); invalid.yaml `invalid-backendRef-hostname` names unknown.example.com, which
# nothing declares (backend not found). buildDestination in conversion.go looks the name up among
# the services visible to the route's namespace.
def _hostname_route(
    host: str, *, export: str = "", entry_ns: str = "app", class_text: str = ISTIO_CLASS, class_name: str = "istio"
) -> str:
    entry = (
        "---\napiVersion: networking.istio.io/v1\nkind: ServiceEntry\n"
        f"metadata: {{name: egress, namespace: {entry_ns}}}\n"
        f"spec: {{hosts: [google.com, '*.egress.com']{export}, ports: [{{number: 80, name: http, protocol: HTTP}}]}}\n"
    )
    backend = f"{{group: networking.istio.io, kind: Hostname, name: {host}, port: 80}}"
    return class_text + gateway(class_name=class_name) + route("[{name: gw}]", backend=backend) + entry


def test_istio_looks_a_service_import_backend_up_as_the_service_of_its_name() -> None:
    # Istio's golden mcs.yaml: ServiceImport `echo` with only Service `echo` in the cluster,
    # ResolvedRefs=True (buildDestination: "currently we are always looking for Service").
    # Before: PL411 "names ServiceImport app/echo, which is not in the input".
    backends = "[{group: multicluster.x-k8s.io, kind: ServiceImport, name: web, port: 80}, {group: multicluster.x-k8s.io, kind: ServiceImport, name: gone, port: 80}]"
    istio = (
        ISTIO_CLASS
        + gateway(class_name="istio")
        + route_doc("[{name: gw}]", name="r", rules=f"[{{backendRefs: {backends}}}]")
        + service()
    )
    (finding,) = only(lint_text(istio), "PL411")
    assert finding.path == "spec.rules[0].backendRefs[1].name"
    assert "names ServiceImport app/gone, which is not in the input (its controller looks it up as the Service app/gone" in (
        finding.message
    )
    # Another controller needs the ServiceImport itself.
    other = istio.replace("istio.io/gateway-controller", "gateway.envoyproxy.io/gatewayclass-controller")
    assert [f.path for f in only(lint_text(other), "PL411")] == [
        "spec.rules[0].backendRefs[0].name",
        "spec.rules[0].backendRefs[1].name",
    ]


def test_an_istio_service_entry_parent_must_exist_as_a_service_parent_must() -> None:
    # Istio's golden invalid.yaml `invalid-parentRef-service-entry`: Accepted=False, "parent
    # service entry: "not-found" not found"; serviceentry.yaml: a route on an existing one is
    # Accepted. Before: nothing ("parent kind not modelled").
    entry = _hostname_route("google.com").split("---\n")[-1]
    text = (
        first(
            route_doc("[{group: networking.istio.io, kind: ServiceEntry, name: not-found}]", name="missing")
            + route_doc("[{group: networking.istio.io, kind: ServiceEntry, name: egress}]", name="found")
            + service()
        )
        + "---\n"
        + entry
    )
    result = lint_text(text)
    assert [(f.rule, f.object.name if f.object else None) for f in result.findings] == [("PL406", "missing")]
    assert "parentRef names ServiceEntry app/not-found, which is not in the input" in result.findings[0].message


def test_an_istio_hostname_backend_resolves_to_the_service_entry_declaring_the_host() -> None:
    # Before: PL411 warning "unresolved backend of a kind not modelled ... Hostname app/google.com".
    result = lint_text(_hostname_route("google.com"))
    assert [f.rule for f in result.findings] == []
    (web,) = result.project.index.of_kind("gateway.networking.k8s.io", "HTTPRoute")
    (ref,) = result.project.topology().refs_from(web)
    assert (ref.status.value, ref.target is not None and ref.target.name) == ("Resolved", "egress")


def test_an_istio_hostname_nothing_declares_is_a_warning_and_with_complete_an_error() -> None:
    (finding,) = only(lint_text(_hostname_route("unknown.example.com")), "PL411")
    assert finding.severity is Severity.WARNING and finding.path == "spec.rules[0].backendRefs[0].name"
    assert finding.message.startswith(
        "backendRef names host unknown.example.com (Hostname, group networking.istio.io), and no ServiceEntry of the"
        " input declares host unknown.example.com for namespace app: the controller looks it up in its service registry"
    )
    # A wildcard host is a host of its own: a lookup of a name under it does not find it.
    assert only(lint_text(_hostname_route("a.egress.com")), "PL411")[0].severity is Severity.WARNING
    (complete,) = only(lint_text(_hostname_route("unknown.example.com"), complete=True), "PL411")
    assert complete.severity is Severity.ERROR and "BackendNotFound" in complete.message


def test_an_istio_hostname_is_found_only_where_the_service_entry_exports_it() -> None:
    assert only(lint_text(_hostname_route("google.com", entry_ns="egress")), "PL411") == []  # exported everywhere
    for export, found in [(", exportTo: ['.']", False), (", exportTo: [app]", True), (", exportTo: ['~']", False)]:
        findings = only(lint_text(_hostname_route("google.com", export=export, entry_ns="egress")), "PL411")
        assert (findings == []) is found, export
    # In its own namespace, "." exports it to the route.
    assert only(lint_text(_hostname_route("google.com", export=", exportTo: ['.']")), "PL411") == []


def test_a_hostname_backend_under_another_controller_is_not_looked_up() -> None:
    # Envoy Gateway serves no Hostname kind: the reference stays a kind policylint does not model.
    text = _hostname_route(
        "google.com", class_text=first(gateway_class("eg", "gateway.envoyproxy.io/gatewayclass-controller")), class_name="eg"
    )
    (finding,) = only(lint_text(text), "PL411")
    assert finding.message.startswith("unresolved backend of a kind not modelled")


def test_an_istio_gateway_listener_without_tls_is_a_placeholder_for_listener_sets() -> None:
    # Istio's golden listenerset-overlapping-port.yaml: the Gateway's own HTTPS listener without
    # tls is Accepted and Programmed (conversion.go: "a placeholder listener for ListenerSets").
    # Before: PL415 error, "the listener is invalid".
    text = ISTIO_CLASS + gateway(
        "[{name: https, port: 443, protocol: HTTPS}]", class_name="istio", spec="  allowedListeners: {namespaces: {from: All}}\n"
    )
    (finding,) = only(lint_text(text), "PL415")
    assert finding.severity is Severity.INFO and finding.path == "spec.listeners[0].protocol"
    assert "Istio keeps it as a placeholder for the ListenerSets on its port (its status stays Accepted)" in finding.message
    # Under another controller the listener is invalid, as the Gateway API says.
    (other,) = only(lint_text(CLASS + gateway("[{name: https, port: 443, protocol: HTTPS}]")), "PL415")
    assert other.severity is Severity.ERROR and "the listener is invalid" in other.message


def test_pl406_missing_namespace_hint_and_external_parent() -> None:
    text = SHARED + route("[{name: shared}]")
    (finding,) = only(lint_text(text), "PL406")
    assert "Gateway app/shared" in finding.message
    assert "set namespace: infra in the parentRef" in finding.message
    assert only(lint_text(text, external=ExternalObjects.parse(["Gateway/app/shared"])), "PL406") == []


def test_pl406_names_a_guess_once_when_its_object_is_defined_in_several_files(tmp_path: Path) -> None:
    # NGF's tests/suite/manifests/reconfig/ holds Gateway default/gateway in more than one file;
    # the guess "did you mean namespace: default?" was given once per definition.
    for name in ("a.yaml", "b.yaml", "c.yaml"):
        (tmp_path / name).write_text(SHARED, encoding="utf-8")
    (tmp_path / "route.yaml").write_text(route("[{name: shared, namespace: elsewhere}]"), encoding="utf-8")
    (finding,) = only(lint_paths([tmp_path]), "PL406")
    assert finding.message.count("did you mean namespace: infra?") == 1
    assert len(finding.related) == 1


def test_pl406_kind_hint_between_gateway_and_listener_set() -> None:
    text = SHARED + route("[{name: extra, namespace: infra}]")
    (finding,) = only(lint_text(text), "PL406")
    assert "did you mean kind: ListenerSet?" in finding.message


def test_pl407_listener_of_an_attached_listener_set_is_not_seen_through_the_gateway() -> None:
    text = SHARED + route("[{name: shared, namespace: infra, sectionName: admin}]")
    (finding,) = only(lint_text(text), "PL407")
    assert finding.path == "spec.parentRefs[0].sectionName"
    assert "have: http (HTTP 80), internal (HTTP 8080)" in finding.message
    assert "set kind: ListenerSet, name: extra, namespace: infra" in finding.message
    assert len(finding.related) == 2  # the Gateway's listeners, the ListenerSet's listener


def test_pl408_each_failing_parent_ref_is_reported_even_when_attached_elsewhere() -> None:
    text = SHARED + route(
        "[{name: shared, namespace: infra, sectionName: http}, {name: shared, namespace: infra, sectionName: internal}]"
    )
    result = lint_text(text)
    (finding,) = only(result, "PL408")
    assert finding.path == "spec.parentRefs[1]"
    assert "attached through another parentRef" in finding.message
    assert "from: Same, the default" in finding.message
    assert only(result, "PL413") == []


# Istio's golden route-binding.yaml, route `same-namespace-invalid`: a route from another namespace
# on a from: Same listener whose hostname it does not share. Istio (hostnames first) writes
# NoMatchingListenerHostname; Envoy Gateway (kinds, namespaces, hostnames) NotAllowedByListeners.
def test_pl408_says_every_check_a_listener_fails_and_both_reasons() -> None:
    text = (
        CLASS
        + gateway("[{name: same-namespace, hostname: '*.same-namespace.example', port: 80, protocol: HTTP}]", ns="infra")
        + route_doc("[{name: gw, namespace: infra, sectionName: same-namespace}]", name="web", hostnames="[foo.same.example]")
    )
    (finding,) = only(lint_text(text), "PL408")
    assert (
        "listener same-namespace: allowedRoutes admits routes only from the Gateway's namespace infra (from: Same, the"
        " default), not from app: set allowedRoutes.namespaces.from to All or Selector on the listener, or move the route"
        " to namespace infra; and listener hostname *.same-namespace.example does not intersect the route's hostnames"
        " foo.same.example:" in finding.message
    )
    assert finding.message.endswith(
        "(Accepted=False, NotAllowedByListeners, or NoMatchingListenerHostname where the controller checks hostnames"
        " first; Gateway API route attachment)"
    )
    assert [r.message for r in finding.related][-1] == "HTTPRoute app/web sets its hostnames here"
    # The namespace alone: one reason.
    alone = only(lint_text(text.replace("foo.same.example", "a.same-namespace.example")), "PL408")[0].message
    assert "; and " not in alone and alone.endswith("(Accepted=False, NotAllowedByListeners; Gateway API route attachment)")


def test_pl408_selector_on_the_name_label_is_decided_without_the_namespace_object() -> None:
    listener = selector_listener("{matchLabels: {kubernetes.io/metadata.name: team-a}}")
    text = CLASS + gateway(listener, ns="infra") + route("[{name: gw, namespace: infra}]")
    (finding,) = only(lint_text(text), "PL408")
    assert "Namespace app is not in the input, so only its name label is known" in finding.message


def test_pl409_and_pl408_for_a_listener_set_the_gateway_does_not_admit() -> None:
    text = SHARED.replace("allowedListeners: {namespaces: {from: Same}}", "allowedListeners: {namespaces: {from: None}}")
    text += route("[{kind: ListenerSet, name: extra, namespace: infra}]")
    result = lint_text(text)
    assert [(f.rule, f.path) for f in result.findings if f.rule in ("PL408", "PL409", "PL413")] == [
        ("PL409", "spec.parentRef"),
        ("PL408", "spec.parentRefs[0]"),
    ]


def test_pl410_default_gateways_are_not_reported_and_carry_traffic() -> None:
    bare = rules_of(SHARED + route("[]") + RETRIES)
    assert ("PL410", "spec.parentRefs") in bare and ("PL413", "spec.targetRefs[0]") in bare
    defaulted = rules_of(SHARED + route("[]", spec="  useDefaultGateways: All\n") + RETRIES)
    assert [r for r, _ in defaulted if r in ("PL410", "PL413")] == []


def test_pl411_skips_references_without_a_grant() -> None:
    text = SHARED + route("[{name: shared, namespace: infra}]", backend="{name: missing, namespace: other, port: 80}")
    result = lint_text(text)
    assert only(result, "PL411") == []  # never reveal whether an un-granted target exists (docs/semantics.md#referencegrant)


def test_pl411_opaque_kind_is_a_warning_and_a_known_kind_an_error() -> None:
    text = SHARED + route(
        "[{name: shared, namespace: infra}]",
        backend="{group: example.com, kind: Pool, name: p}, {group: multicluster.x-k8s.io, kind: ServiceImport, name: s, port: 80}",
    )
    findings = only(lint_text(text), "PL411")
    assert [(f.severity, f.path) for f in findings] == [
        (Severity.WARNING, "spec.rules[0].backendRefs[0]"),
        # A ServiceImport is made in the cluster (profile producers): unproven without --complete.
        (Severity.WARNING, "spec.rules[0].backendRefs[1].name"),
    ]
    assert "not modelled" in findings[0].message and "Service" not in findings[0].message.split(":")[1]
    complete = only(lint_text(text, complete=True), "PL411")
    assert [(f.severity, f.path) for f in complete][1] == (Severity.ERROR, "spec.rules[0].backendRefs[1].name")


def test_pl412_target_port_hint_and_missing_port_on_an_external_service() -> None:
    text = SHARED + route("[{name: shared, namespace: infra}]", backend="{name: web, port: 8080}, {name: ext}")
    result = lint_text(text, external=ExternalObjects.parse(["Service/app/ext"]))
    first, second = only(result, "PL412")
    assert first.path == "spec.rules[0].backendRefs[0].port" and "8080 is the targetPort of Service port 80" in first.message
    assert first.hint == "Use port: 80."
    # What holds for every controller, not a status one of them writes (Istio does not compare ports).
    assert "cannot reach this backend on that port" in first.message and "ResolvedRefs" not in first.message
    assert second.path == "spec.rules[0].backendRefs[1]" and "Must have port for Service reference" in second.message


def test_pl413_selector_target_says_selects() -> None:
    text = (
        SHARED
        + route_doc(None, name="lonely", labels="{tier: web}")
        + policy(
            "BackendTrafficPolicy",
            "[{kind: HTTPRoute, matchLabels: {tier: web}}]",
            name="tier",
            field="targetSelectors",
            spec="  retry: {numRetries: 3}\n",
        )
    )
    (finding,) = only(lint_text(text), "PL413")
    assert finding.path == "spec.targetSelectors[0]" and finding.severity is Severity.WARNING
    assert "selects HTTPRoute app/lonely, which carries no traffic" in finding.message


LISTED_KIND_THE_PROTOCOL_CANNOT_CARRY = (
    CLASS  # lines 1-4
    + gateway(  # lines 5-16: the listener's protocol on line 13
        "  - name: https\n"
        "    protocol: HTTPS\n"
        "    port: 443\n"
        "    tls: {certificateRefs: [{name: cert}]}\n"
        "    allowedRoutes: {kinds: [{kind: TLSRoute}]}\n"
    )
    # lines 17-24: the parentRef on line 22
    + route_doc(kind="TLSRoute", name="t", hostnames="[a.example.com]", rules="[{backendRefs: [{name: s, port: 443}]}]")
    + service("s", ports="[{port: 443}]")
)


def test_pl408_a_listed_kind_the_protocol_cannot_carry_is_not_admitted() -> None:
    # docs/semantics.md#listener-admission: a kind in allowedRoutes.kinds that the listener's protocol
    # cannot carry makes the listener ResolvedRefs=False, InvalidRouteKinds; an HTTPS listener
    # carries HTTPRoute and GRPCRoute, never TLSRoute.
    [finding] = only(lint_text(LISTED_KIND_THE_PROTOCOL_CANNOT_CARRY), "PL408")
    assert finding.line == 22  # the parentRef `- name: gw` of the TLSRoute
    assert "a HTTPS listener cannot carry it" in finding.message and "InvalidRouteKinds" in finding.message
    assert [r.line for r in finding.related] == [13]  # the listener's protocol


# kubectl apply of a directory applies its files in order: of two definitions of one object, the
# later replaces the earlier, and that is the one the controller reads.
TWICE = """\
apiVersion: v1
kind: Service
metadata: {name: web, namespace: app}
spec:
  ports: [{name: http, port: 80}]
---
apiVersion: v1
kind: Service
metadata: {name: web, namespace: app}
spec:
  ports: [{name: http, port: 80}, {name: alt, port: 8080}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: r, namespace: app}
spec:
  rules:
  - backendRefs: [{name: web, port: 8080}]
"""


def test_references_resolve_against_the_definition_applied_last() -> None:
    # Before: PL412 (port 8080 is not on the first definition). After: the route reaches port 8080.
    result = lint_text(TWICE)
    assert only(result, "PL412") == []
    (duplicate,) = only(result, "PL005")
    assert duplicate.severity.label == "error" and duplicate.line == 9


def test_an_identical_duplicate_is_redundant_not_an_error() -> None:
    first = TWICE.split("---\n")[0]
    result = lint_text(first + "---\n" + first)
    (duplicate,) = only(result, "PL005")
    assert duplicate.severity.label == "info"
    assert "identical content" in duplicate.message


# gateway-api conformance/tests/httproute-invalid-backendref-unknown-kind.yaml, with the kind in the
# core group: apis/v1/httproute_types.go, HTTPRoute backendRefs: "It refers to an unknown or
# unsupported kind of resource. In this case, the Reason must be set to `InvalidKind`".
CORE_NON_SERVICE = """\
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: invalid-backend-ref-core-kind, namespace: gateway-conformance-infra}
spec:
  rules:
  - backendRefs:
    - group: ""
      kind: Pod
      name: infra-backend-v1
      port: 8080
"""


def test_a_core_backend_that_is_not_a_service_is_invalid_kind() -> None:
    # Before: a warning, "a kind not modelled". After: an error on the kind, InvalidKind.
    (finding,) = only(lint_text(CORE_NON_SERVICE), "PL411")
    assert finding.severity is Severity.ERROR and finding.path == "spec.rules[0].backendRefs[0].kind"
    assert "InvalidKind" in finding.message and finding.line == 8


# Envoy Gateway checks a backendRef's group and kind apart and looks the object up by kind
# (internal/gatewayapi/validate.go: validateBackendRefGroup, validateBackendRefKind,
# validateBackendRef); its translator test backendtrafficpolicy-dns-lookup-family names
# `kind: Backend` with no group from an HTTPRoute and a GRPCRoute, both ResolvedRefs=True, and
# httproute-with-multiple-invalid-rules a `kind: ServiceImport` with no group that is missing:
# "service import default/serviceimport-not-found-1 not found" (BackendNotFound, not InvalidKind).
# The ReferenceGrant is matched with the group as written (validateBackendNamespace).
BY_KIND = """\
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: eg}
spec: {controllerName: gateway.envoyproxy.io/gatewayclass-controller}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw, namespace: infra}
spec:
  gatewayClassName: eg
  listeners: [{name: http, protocol: HTTP, port: 80, allowedRoutes: {namespaces: {from: All}}}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: r, namespace: app}
spec:
  parentRefs: [{name: gw, namespace: infra}]
  rules:
  - backendRefs:
    - {kind: Backend, name: fqdn, port: 8080}
    - {group: gateway.envoyproxy.io, kind: Service, name: web, port: 80}
    - {kind: Backend, name: far, namespace: other, port: 8080}
    - {kind: ServiceImport, name: missing, port: 8080}
---
apiVersion: gateway.envoyproxy.io/v1alpha1
kind: Backend
metadata: {name: fqdn, namespace: app}
spec: {endpoints: [{fqdn: {hostname: backend.example.com, port: 8080}}]}
---
apiVersion: gateway.envoyproxy.io/v1alpha1
kind: Backend
metadata: {name: far, namespace: other}
spec: {endpoints: [{fqdn: {hostname: far.example.com, port: 8080}}]}
---
apiVersion: v1
kind: Service
metadata: {name: web, namespace: app}
spec: {ports: [{port: 80}]}
---
apiVersion: gateway.networking.k8s.io/v1beta1
kind: ReferenceGrant
metadata: {name: to-backends, namespace: other}
spec:
  from: [{group: gateway.networking.k8s.io, kind: HTTPRoute, namespace: app}]
  to: [{group: GRANTED, kind: Backend}]
"""


def _backend_refs(text: str) -> list[tuple[str, str, str, str | None]]:
    result = lint_text(text)
    (route,) = result.project.index.of_kind("gateway.networking.k8s.io", "HTTPRoute")
    return [
        (r.status.value, r.group, r.kind, r.target.kind if r.target is not None else None)
        for r in result.project.topology().refs_from(route)
        if r.purpose == "backend"
    ]


def test_envoy_gateway_resolves_a_backend_ref_by_its_kind() -> None:
    # Before: PL411 InvalidKind twice ("Backend ... in the core group") and PL412 never checked
    # the Service named with Envoy Gateway's group. The grant names the group as written: "".
    text = BY_KIND.replace("GRANTED", '""')
    assert _backend_refs(text) == [
        ("Resolved", "gateway.envoyproxy.io", "Backend", "Backend"),
        ("Resolved", "", "Service", "Service"),
        ("Resolved", "gateway.envoyproxy.io", "Backend", "Backend"),
        ("NotFound", "multicluster.x-k8s.io", "ServiceImport", None),
    ]
    # A ServiceImport is made by the multicluster controller, never kept in git: its absence is
    # unproven (a warning) until the input is declared the whole cluster.
    assert [f for f in lint_text(text).findings if f.severity is Severity.ERROR] == []
    errors = [f for f in lint_text(text, complete=True).findings if f.severity is Severity.ERROR]
    assert [(f.rule, f.path, f.line) for f in errors] == [("PL411", "spec.rules[0].backendRefs[3].name", 23)]
    assert "names ServiceImport app/missing, which is not in the input" in errors[0].message


def test_a_missing_envoy_gateway_backend_is_not_found_whether_or_not_the_input_holds_others() -> None:
    # Envoy Gateway serves its Backend kind (backendRefsByKind): a missing one is BackendNotFound
    # like a missing Service. Before: an error where the input held another Backend, and a
    # "kind not modelled" warning where it held none. Now "not found" both ways: an error where
    # the input manages Backends in that namespace, else unprovable (docs/semantics.md#partial-repositories).
    text = BY_KIND.replace("GRANTED", '""').replace("name: fqdn, port", "name: gone, port")
    alone = "---\n".join(d for d in text.split("---\n") if "kind: Backend\n" not in d)
    for variant, severity in ((text, Severity.ERROR), (alone, Severity.WARNING)):
        (missing, *_) = (f for f in only(lint_text(variant), "PL411") if f.path == "spec.rules[0].backendRefs[0].name")
        assert missing.severity is severity
        assert "names Backend app/gone, which is not in the input" in missing.message


def test_envoy_gateway_matches_the_grant_with_the_group_as_written() -> None:
    text = BY_KIND.replace("GRANTED", "gateway.envoyproxy.io")
    assert _backend_refs(text)[2][0] == "RefNotPermitted"
    (finding,) = only(lint_text(text), "PL402")
    assert finding.path == "spec.rules[0].backendRefs[2]" and finding.line == 22
    # The hint and the fix name the group the grant must give, not the one the kind resolved to.
    assert finding.hint is not None and 'to: {group: "", kind: Backend}' in finding.hint
    assert finding.fix is not None
    (edit,) = finding.fix.edits
    assert isinstance(edit.value, dict) and edit.value["spec"]["to"] == [{"group": "", "kind": "Backend", "name": "far"}]


def test_other_controllers_keep_the_group_and_kind_together() -> None:
    # NGINX Gateway Fabric supports core Services only; a route whose GatewayClass is not in the
    # input gets the Gateway API's own resolution: a core kind other than Service is InvalidKind.
    for text, first_line in (
        (BY_KIND.replace("gateway.envoyproxy.io/gatewayclass-controller", "gateway.nginx.org/nginx-gateway-controller"), 20),
        (BY_KIND.split("---\n", 1)[1], 15),  # no GatewayClass: 5 lines fewer
    ):
        text = text.replace("GRANTED", '""')
        errors = [f for f in only(lint_text(text), "PL411") if f.severity is Severity.ERROR]
        assert [(f.path, f.line) for f in errors] == [
            ("spec.rules[0].backendRefs[0].kind", first_line),
            ("spec.rules[0].backendRefs[2].kind", first_line + 2),
            ("spec.rules[0].backendRefs[3].kind", first_line + 3),
        ]
        # A Service in Envoy Gateway's group is no core Service here: a kind not modelled.
        assert _backend_refs(text)[1] == ("Opaque", "gateway.envoyproxy.io", "Service", None)


# GEP-1713 (ListenerSet): a ListenerSet listener not distinct from a Gateway listener is
# Conflicted and not accepted (the Gateway's own listener has precedence); Gateway API, Listeners:
# "Handling indistinct Listeners".
CONFLICTED_LISTENER = """\
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: eg}
spec: {controllerName: gateway.envoyproxy.io/gatewayclass-controller}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: edge, namespace: infra}
spec:
  gatewayClassName: eg
  allowedListeners: {namespaces: {from: Same}}
  listeners:
  - {name: web, protocol: HTTP, port: 80, hostname: shop.example.com}
---
apiVersion: gateway.networking.k8s.io/v1
kind: ListenerSet
metadata: {name: team, namespace: infra, creationTimestamp: "2025-01-01T00:00:00Z"}
spec:
  parentRef: {name: edge}
  listeners:
  - {name: shop, protocol: HTTP, port: 80, hostname: shop.example.com}
---
apiVersion: gateway.envoyproxy.io/v1alpha1
kind: ClientTrafficPolicy
metadata: {name: shop-timeouts, namespace: infra}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: ListenerSet, name: team, sectionName: shop}]
  timeout: {http: {requestReceivedTimeout: 5s}}
"""


def test_a_policy_on_a_conflicted_listener_reaches_nothing() -> None:
    # Before: PL416 on the listener only; the policy looked in force (and PL418 blamed a shared
    # port). After: PL413 on the policy, naming the listener and why it is Conflicted, and no
    # context through the listener.
    # Envoy Gateway v1.9, whose ClientTrafficPolicy may target a ListenerSet (older releases refuse
    # the policy: a PL704 warning naming them when the release is not declared).
    result = lint_text(CONFLICTED_LISTENER, implementations=["envoy-gateway@v1.9"])
    assert sorted(f.rule for f in result.findings) == ["PL413", "PL416"]
    (finding,) = only(result, "PL413")
    assert finding.path == "spec.targetRefs[0]"
    assert "targets listener shop of ListenerSet infra/team, which carries no traffic" in finding.message
    assert "is Conflicted (both HTTP on port 80 with hostname shop.example.com: HostnameConflict" in finding.message
    (target,) = (result.policy_reports or [])[0]["targets"]
    assert target["enforcement"] is None and target["ancestors"] == []


# The conformance test ListenerSetProtocolConflict (kubernetes-sigs/gateway-api v1.6.1,
# conformance/tests/listenerset-protocol-conflict.yaml and .go; its comments and the .go say which
# listener is Accepted and which Conflicted), with the class name the suite substitutes and its
# class. Each ListenerSet's TCP listener on port 80 loses to an HTTP listener of higher precedence
# and is Conflicted; the HTTP listeners beside it are Accepted: a listener that lost frees its place.
PROTOCOL_CONFLICT = """\
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: conformance}
spec: {controllerName: example.com/conformance}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gateway-with-listenerset-protocol-conflict, namespace: gateway-conformance-infra}
spec:
  gatewayClassName: conformance
  allowedListeners: {namespaces: {from: Same}}
  listeners:
  - {name: gateway-listener, port: 80, protocol: HTTP, hostname: gateway-listener.com}
  - {name: protocol-conflict-with-gateway-listener, port: 80, protocol: HTTP, hostname: protocol-conflict-with-gateway-listener.com}
---
apiVersion: gateway.networking.k8s.io/v1
kind: ListenerSet
metadata: {name: listenerset-with-protocol-conflict-with-gateway-1, namespace: gateway-conformance-infra}
spec:
  parentRef: {kind: Gateway, group: gateway.networking.k8s.io, name: gateway-with-listenerset-protocol-conflict}
  listeners:
  - {name: listener-set-1-listener, port: 80, protocol: HTTP, hostname: listener-set-1-listener.com}
  - {name: protocol-conflict-with-gateway-listener, port: 80, protocol: TCP}
  - {name: protocol-conflict-with-listener-set-listener, port: 80, protocol: HTTP, hostname: protocol-conflict-with-listener-set-listener.com}
---
apiVersion: gateway.networking.k8s.io/v1
kind: ListenerSet
metadata: {name: listenerset-with-protocol-conflict-with-gateway-2, namespace: gateway-conformance-infra}
spec:
  parentRef: {kind: Gateway, group: gateway.networking.k8s.io, name: gateway-with-listenerset-protocol-conflict}
  listeners:
  - {name: protocol-conflict-with-gateway-listener, port: 80, protocol: TCP}
---
apiVersion: gateway.networking.k8s.io/v1
kind: ListenerSet
metadata: {name: listenerset-with-protocol-conflict-with-listener-set-1, namespace: gateway-conformance-infra}
spec:
  parentRef: {kind: Gateway, group: gateway.networking.k8s.io, name: gateway-with-listenerset-protocol-conflict}
  listeners:
  - {name: listener-set-2-listener, port: 80, protocol: HTTP, hostname: listener-set-2-listener.com}
  - {name: protocol-conflict-with-listener-set-listener, port: 80, protocol: TCP}
---
apiVersion: gateway.networking.k8s.io/v1
kind: ListenerSet
metadata: {name: listenerset-with-protocol-conflict-with-listener-set-2, namespace: gateway-conformance-infra}
spec:
  parentRef: {kind: Gateway, group: gateway.networking.k8s.io, name: gateway-with-listenerset-protocol-conflict}
  listeners:
  - {name: protocol-conflict-with-listener-set-listener, port: 80, protocol: TCP}
"""


def test_a_listener_that_lost_on_precedence_rejects_none_of_its_siblings() -> None:
    # Before: the HTTP listeners beside a TCP listener that had lost to the Gateway's were
    # Conflicted too (3 of the 7 PL416 findings). After: only the four TCP listeners, each against
    # the Gateway's first listener, as the conformance test expects.
    findings = only(lint_text(PROTOCOL_CONFLICT), "PL416")
    found = [(f.line, f.path, f.object.name if f.object else None) for f in findings]
    assert found == [
        (23, "spec.listeners[1].port", "listenerset-with-protocol-conflict-with-gateway-1"),
        (32, "spec.listeners[0].port", "listenerset-with-protocol-conflict-with-gateway-2"),
        (41, "spec.listeners[1].port", "listenerset-with-protocol-conflict-with-listener-set-1"),
        (49, "spec.listeners[0].port", "listenerset-with-protocol-conflict-with-listener-set-2"),
    ]
    assert all(
        "from listener gateway-listener of Gateway" in f.message and "TCP and HTTP on port 80" in f.message for f in findings
    )


def test_two_listeners_of_one_object_are_both_rejected() -> None:
    # Gateway API, Listeners, "Handling indistinct Listeners": no winner is picked among one
    # object's listeners. With the Gateway's two listeners on one hostname, both are Conflicted;
    # then nothing of higher precedence holds port 80, and the first ListenerSet's three listeners
    # reject one another (a TCP and two HTTP listeners of one object), while the second
    # ListenerSet's lone TCP listener is accepted and rejects what comes after it.
    text = PROTOCOL_CONFLICT.replace("hostname: protocol-conflict-with-gateway-listener.com", "hostname: gateway-listener.com")
    found = [(f.line, f.object.name if f.object else None) for f in only(lint_text(text), "PL416")]
    assert found == [
        (13, "gateway-with-listenerset-protocol-conflict"),
        (14, "gateway-with-listenerset-protocol-conflict"),
        (22, "listenerset-with-protocol-conflict-with-gateway-1"),
        (23, "listenerset-with-protocol-conflict-with-gateway-1"),
        (24, "listenerset-with-protocol-conflict-with-gateway-1"),
        (40, "listenerset-with-protocol-conflict-with-listener-set-1"),
        (41, "listenerset-with-protocol-conflict-with-listener-set-1"),
        (49, "listenerset-with-protocol-conflict-with-listener-set-2"),
    ]


# -- references to a kind the input holds none of in that namespace (docs/semantics.md#partial-repositories)


def test_a_parent_gateway_in_a_namespace_holding_no_gateway_is_unprovable() -> None:
    # The platform's Gateways live in namespace infra, applied from another repository.
    text = route_doc("[{name: shared, namespace: infra}]", rules="[{backendRefs: [{name: web, port: 80}]}]") + service()
    (finding,) = only(lint_text(text), "PL406")
    assert (finding.severity, finding.path) == (Severity.WARNING, "spec.parentRefs[0].name")
    assert "the input holds no Gateway in namespace infra, so the repository does not look like it manages them" in (
        finding.message
    )
    assert finding.hint == (
        "To make it provable: declare it with --external Gateway/infra/shared, lint with the repository that holds it"
        " (--context PATH), or pass --complete if the input is the whole cluster."
    )
    # Only severity and words: the route still does not attach through it.
    result = lint_text(text)
    (route,) = result.project.index.of_kind("gateway.networking.k8s.io", "HTTPRoute")
    (att,) = result.project.topology().parent_attachments(route)
    assert att.status.label == "ParentNotFound" and not att.attached
    # --complete: the input is the cluster.
    (error,) = only(lint_text(text, complete=True), "PL406")
    assert (error.severity, error.line) == (Severity.ERROR, finding.line)
    # A Gateway of another name in infra: the repository manages Gateways there.
    managed = text + gateway(name="internal", ns="infra")
    (error,) = only(lint_text(managed), "PL406")
    assert error.severity is Severity.ERROR and "manages them" not in error.message


def test_a_backend_hint_says_how_to_make_it_provable_with_a_did_you_mean_too() -> None:
    text = gateway_class() + gateway() + route_doc(rules="[{backendRefs: [{name: webb, port: 80}]}]") + service()
    (finding,) = only(lint_text(text), "PL411")
    assert finding.severity is Severity.ERROR and "did you mean Service web?" in finding.message
    assert finding.hint == (
        "If it is defined outside this repository, declare it with --external Service/app/webb, or lint with the"
        " repository that holds it (--context PATH)."
    )
