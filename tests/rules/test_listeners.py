"""Listeners judged alone (policylint/semantics/listeners.py, rules PL421): what follows from a
protocol no controller accepts, beyond the rule's own fixtures; and where PL301 looks for another
object defining a listener a policy names."""

from __future__ import annotations

from typing import Any

import pytest

from policylint.pipeline import LintRequest, lint
from tests.lintutil import lint_text, only, select

GATEWAY = """\
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
  listeners:
  - {name: http, port: 80, protocol: HTTP}
  - {name: raw, port: 80, protocol: %s}
"""

POLICY = """\
---
apiVersion: gateway.envoyproxy.io/v1alpha1
kind: ClientTrafficPolicy
metadata: {name: timeouts, namespace: infra}
spec:
  targetRefs:
  - {group: gateway.networking.k8s.io, kind: Gateway, name: edge, sectionName: raw}
  timeout: {http: {idleTimeout: 5s}}
"""


def test_a_listener_with_an_unsupported_protocol_takes_no_port_from_another() -> None:
    # Refused for its protocol (UnsupportedProtocol), a listener is left out of the conflict checks,
    # as Envoy Gateway's are (isSupportedListenerProtocol in internal/gatewayapi/validate.go): two
    # GRPC listeners on one port are two PL421 findings, not a HostnameConflict (PL416) as well.
    text = GATEWAY.replace("  - {name: http, port: 80, protocol: HTTP}\n", "  - {name: grpc, port: 80, protocol: GRPC}\n")
    result = lint_text(text % "GRPC")
    assert [f.path for f in only(result, "PL421")] == ["spec.listeners[0].protocol", "spec.listeners[1].protocol"]
    assert only(result, "PL416") == []
    # Core protocols on the port still conflict.
    assert len(only(lint_text(GATEWAY % "TCP"), "PL416")) == 2


def test_a_policy_on_a_listener_with_an_unsupported_protocol_has_no_effect() -> None:
    # The listener is not accepted (conformance test GatewayListenerUnsupportedProtocol): nothing
    # reaches traffic through it, as through a Conflicted one.
    (finding,) = only(lint_text(GATEWAY % "GRPC" + POLICY), "PL413")
    assert finding.path == "spec.targetRefs[0]"
    assert "targets listener raw of Gateway infra/edge, which carries no traffic" in finding.message
    assert "protocol GRPC, which no controller accepts (Accepted=False, UnsupportedProtocol)" in finding.message
    # UDP shares port 80 with HTTP under Envoy Gateway (HTTPS would not: ProtocolConflict).
    assert only(lint_text(GATEWAY % "UDP" + POLICY), "PL413") == []


ROUTE = """\
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: web, namespace: infra}
spec:
  parentRefs:
  - {name: edge, sectionName: raw}
  rules:
  - backendRefs: [{name: web, port: 80}]
---
apiVersion: v1
kind: Service
metadata: {name: web, namespace: infra}
spec: {ports: [{port: 80}]}
"""


def test_no_route_attaches_to_a_listener_with_an_unsupported_protocol() -> None:
    # The conformance test asserts `SupportedKinds: []` and no attached route on such a listener.
    (finding,) = only(lint_text(GATEWAY % "GRPC" + ROUTE), "PL408")
    assert finding.path == "spec.parentRefs[0]"
    assert "listener protocol GRPC is unsupported (UnsupportedProtocol): it carries no route kind" in finding.message
    assert only(lint_text(GATEWAY % "HTTP" + ROUTE), "PL408") == []


TLS_GATEWAYS = """\
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: eg}
spec: {controllerName: gateway.envoyproxy.io/gatewayclass-controller}
---
apiVersion: v1
kind: Secret
metadata: {name: tls-validity-checks-certificate, namespace: gateway-conformance-infra}
type: kubernetes.io/tls
data: {tls.crt: "", tls.key: ""}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gateway-certificate-unsupported-group, namespace: gateway-conformance-infra}
spec:
  gatewayClassName: eg
  listeners:
  - name: https
    port: 443
    protocol: HTTPS
    tls:
      certificateRefs:
      - {group: wrong.group.company.io, kind: Secret, name: tls-validity-checks-certificate}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gateway-client-certificate-unsupported-group, namespace: gateway-conformance-infra}
spec:
  gatewayClassName: eg
  listeners:
  - {name: http, port: 80, protocol: HTTP}
  tls:
    backend:
      clientCertificateRef: {group: wrong.group.company.io, kind: Secret, name: tls-validity-checks-certificate}
"""


def test_a_certificate_reference_to_a_group_nothing_serves_is_invalid_with_and_without_complete() -> None:
    # Gateway API conformance: GatewayInvalidTLSConfiguration (`gateway-certificate-unsupported-group`,
    # InvalidCertificateRef) and GatewayInvalidTLSBackendConfiguration (the client certificate,
    # InvalidClientCertificateRef), conformance/tests/gateway-invalid-tls-*.yaml in
    # kubernetes-sigs/gateway-api. Before: no finding either way (a kind policylint does not model).
    for complete in (False, True):
        findings = only(lint_text(TLS_GATEWAYS, complete=complete), "PL417")
        assert [(f.path, f.line) for f in findings] == [
            ("spec.listeners[0].tls.certificateRefs[0].kind", 23),
            ("spec.tls.backend.clientCertificateRef.kind", 34),
        ]
        assert "InvalidCertificateRef" in findings[0].message
        assert "InvalidClientCertificateRef" in findings[1].message
        assert "(group wrong.group.company.io), a group no CRD, built-in kind, profile or object" in findings[0].message


SHARED_PORT = """\
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: gc}
spec: {controllerName: %s}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: edge, namespace: infra}
spec:
  gatewayClassName: gc
  listeners:
  - {name: a, port: 8443, protocol: %s, hostname: %s}
  - {name: b, port: 8443, protocol: %s, hostname: %s}
"""

EG = "gateway.envoyproxy.io/gatewayclass-controller"
NGF = "gateway.nginx.org/nginx-gateway-controller"
ISTIO = "istio.io/gateway-controller"
UNKNOWN = "example.com/gateway-controller"


def _conflicts(controller: str, a: tuple[str, str], b: tuple[str, str]) -> list[str]:
    result = lint_text(SHARED_PORT % (controller, *a, *b))
    return [f.message for f in only(result, "PL416")]


def test_which_protocols_share_a_port_is_the_implementations() -> None:
    # Envoy Gateway: HTTP and HTTPS never share a port, whatever the hostnames
    # (validateConflictedProtocolsListeners, internal/gatewayapi/validate.go in envoyproxy/gateway).
    found = _conflicts(EG, ("HTTP", "a.example.com"), ("HTTPS", "b.example.com"))
    assert len(found) == 2
    assert "(HTTP and HTTPS on port 8443, which Envoy Gateway does not serve on one port: ProtocolConflict)" in found[0]
    # NGINX Gateway Fabric likewise (createPortConflictResolver); the Gateway API alone does not
    # require it, so a class policylint does not know is not held to it.
    assert len(_conflicts(NGF, ("HTTP", "a.example.com"), ("TLS", "b.example.com"))) == 2
    assert _conflicts(UNKNOWN, ("HTTP", "a.example.com"), ("HTTPS", "b.example.com")) == []
    # Istio tells HTTP, HTTPS and TLS apart by hostname only, whatever the protocols
    # (listenersDistinct, pilot/pkg/config/kube/gatewaycommon/listener_conflict.go in istio/istio).
    assert _conflicts(ISTIO, ("HTTP", "a.example.com"), ("HTTPS", "b.example.com")) == []
    found = _conflicts(ISTIO, ("HTTP", "a.example.com"), ("HTTPS", "a.example.com"))
    assert "with hostname a.example.com, which Istio tells apart only by hostname: ProtocolConflict" in found[0]


def test_tcp_beside_udp_on_one_port_is_the_implementations_to_refuse() -> None:
    # Istio refuses it; Envoy Gateway ("UDP can coexist with any protocol") and NGINX Gateway
    # Fabric (one L4 protocol group, conflicts only within one protocol) serve both.
    assert len(_conflicts(ISTIO, ("TCP", "''"), ("UDP", "''"))) == 2
    assert _conflicts(EG, ("TCP", "''"), ("UDP", "''")) == []
    assert _conflicts(NGF, ("TCP", "''"), ("UDP", "''")) == []
    # UDP beside HTTP: NGINX Gateway Fabric refuses it (another protocol group), Envoy Gateway not.
    assert len(_conflicts(NGF, ("UDP", "''"), ("HTTP", "''"))) == 2
    assert _conflicts(EG, ("UDP", "''"), ("HTTP", "''")) == []


def test_a_protocol_conflict_hint_names_a_port_not_a_hostname() -> None:
    result = lint_text(SHARED_PORT % (EG, "HTTP", "a.example.com", "HTTPS", "b.example.com"))
    assert only(result, "PL416")[0].hint == "Give the listener another port."
    result = lint_text(SHARED_PORT % (EG, "HTTPS", "a.example.com", "TLS", "a.example.com"))
    first, _ = only(result, "PL416")
    assert "HostnameConflict" in first.message
    assert first.hint == "Give the listener another port, or (for HTTP, HTTPS and TLS) another hostname."


def test_overlapping_https_hostnames_leave_out_listeners_not_accepted() -> None:
    # Two HTTPS listeners with one hostname are Conflicted (PL416), not OverlappingTLSConfig: a
    # controller configures no TLS for them (checkOverlappingHostnames skips invalid listeners).
    same = lint_text(SHARED_PORT % (EG, "HTTPS", "a.example.com", "HTTPS", "a.example.com"))
    assert len(only(same, "PL416")) == 2
    assert only(same, "PL424") == []
    overlapping = lint_text(SHARED_PORT % (EG, "HTTPS", "'*.example.com'", "HTTPS", "a.example.com"))
    assert [f.path for f in only(overlapping, "PL424")] == ["spec.listeners[0].hostname", "spec.listeners[1].hostname"]
    # A deeper name is matched by the wildcard too (Gateway API hostname matching), another domain not.
    deeper = lint_text(SHARED_PORT % (EG, "HTTPS", "'*.example.com'", "HTTPS", "a.b.example.com"))
    assert len(only(deeper, "PL424")) == 2
    other = lint_text(SHARED_PORT % (EG, "HTTPS", "'*.example.com'", "HTTPS", "example.com"))
    assert only(other, "PL424") == []


def test_nginx_gateway_fabric_refuses_https_beside_tls_with_overlapping_hostnames() -> None:
    # NGINX Gateway Fabric (internal/controller/state/graph/gateway_listener.go in
    # nginx/nginx-gateway-fabric): resolveSameProtocolGroupConflict makes HTTPS and TLS listeners of
    # one port HostnameConflict when haveOverlap holds: equal, a wildcard matching the other, or one
    # unset. Envoy Gateway refuses them only with one hostname (validateConflictedHostnameListeners).
    # Before: NGF was held to equal hostnames, so the wildcard pair was accepted.
    found = _conflicts(NGF, ("HTTPS", "'*.example.com'"), ("TLS", "a.example.com"))
    assert len(found) == 2
    assert (
        "(HTTPS and TLS on port 8443 with overlapping hostnames *.example.com and a.example.com, which NGINX Gateway"
        " Fabric refuses: HostnameConflict)"
    ) in found[0]
    assert len(_conflicts(NGF, ("HTTPS", "''"), ("TLS", "a.example.com"))) == 2
    assert _conflicts(NGF, ("HTTPS", "a.example.com"), ("TLS", "b.example.com")) == []
    assert _conflicts(EG, ("HTTPS", "'*.example.com'"), ("TLS", "a.example.com")) == []


def test_which_listeners_get_overlapping_tls_config_is_the_implementations() -> None:
    # NGINX Gateway Fabric's createOverlappingTLSConfigResolver sets OverlappingTLSConfig on HTTPS
    # and TLS listeners alike; Envoy Gateway's checkOverlappingHostnames looks at HTTPS ones only
    # (internal/gatewayapi/listener.go in envoyproxy/gateway). `*.example.com` beside
    # `foo.example.com` on one port: both listeners get the condition, and stay valid, under NGF.
    # Before: TLS listeners were never compared.
    tls = lint_text(SHARED_PORT % (NGF, "TLS", "'*.example.com'", "TLS", "foo.example.com"))
    assert only(tls, "PL416") == []
    findings = only(tls, "PL424")
    assert [f.path for f in findings] == ["spec.listeners[0].hostname", "spec.listeners[1].hostname"]
    assert findings[0].message.startswith("TLS listener ")
    assert only(lint_text(SHARED_PORT % (EG, "TLS", "'*.example.com'", "TLS", "foo.example.com")), "PL424") == []
    https = lint_text(SHARED_PORT % (NGF, "HTTPS", "'*.example.com'", "HTTPS", "foo.example.com"))
    assert len(only(https, "PL424")) == 2


SIBLING_SECTIONS = """\
\
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
  listeners:
  - {name: http, protocol: HTTP, port: 80}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw2, namespace: infra}
spec:
  gatewayClassName: eg
  listeners:
  - {name: ftp, protocol: HTTP, port: 21}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw3, namespace: elsewhere}
spec:
  gatewayClassName: eg
  listeners:
  - {name: ftp, protocol: HTTP, port: 21}
---
apiVersion: gateway.envoyproxy.io/v1alpha1
kind: ClientTrafficPolicy
metadata: {name: c, namespace: infra}
spec:
  targetRefs:
  - {group: gateway.networking.k8s.io, kind: Gateway, name: gw, sectionName: ftp}
"""


def test_a_missing_sections_sibling_is_looked_for_in_the_targets_namespace_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """PL301's hint names another object of the target's namespace that defines the section; the
    sections of objects elsewhere are not listed for it (they were, for every object of the
    project, on every run that had a missing section)."""
    from policylint.k8s.index import ProjectIndex

    asked: list[str] = []
    real = ProjectIndex.sections

    def counted(self: ProjectIndex, obj: Any) -> Any:
        asked.append(f"{obj.namespace}/{obj.name}")
        return real(self, obj)

    monkeypatch.setattr(ProjectIndex, "sections", counted)
    data = SIBLING_SECTIONS.encode()
    # The run alone (`lint_text` builds every stage after it, for tests that inspect them).
    request = LintRequest(paths=["-"], stdin_filename="input.yaml", read_stdin=lambda: data, selection=select("PL301"))
    found = only(lint(request), "PL301")
    assert [(f.line, f.path) for f in found] == [(35, "spec.targetRefs[0].sectionName")]
    assert found[0].message == (
        "listener ftp not found on Gateway gw; have: http; listener ftp is defined on Gateway gw2; target that object instead"
    )
    assert [(r.message, r.line) for r in found[0].related] == [
        ("Gateway gw defines its listeners here", 11),
        ("listener ftp is defined here", 20),
    ]
    assert "elsewhere/gw3" not in asked
    assert "infra/gw2" in asked


def test_the_objects_are_sorted_by_namespace_once_for_every_namespace_asked_about() -> None:
    """PL301 asks about each namespace holding a policy that names a missing section; the objects
    of the project are gone through once for all of them (a scan of every object per namespace
    asked about was quadratic in the namespaces), and each answer holds its namespace's objects
    only, in index order."""
    from policylint.rules.section_name import _SectionsByName

    tenants = [f"t{i}" for i in range(6)]
    docs = [SIBLING_SECTIONS.split("---\n")[0]]
    for ns in tenants:
        for name, listener in (("a", "ftp"), ("b", "http"), ("c", "ftp")):
            docs.append(
                "apiVersion: gateway.networking.k8s.io/v1\nkind: Gateway\n"
                f"metadata: {{name: {name}, namespace: {ns}}}\n"
                f"spec:\n  gatewayClassName: eg\n  listeners:\n  - {{name: {listener}, protocol: HTTP, port: 21}}\n"
            )
    project = lint_text("---\n".join(docs)).project

    class Counted(list[Any]):
        passes = 0

        def __iter__(self) -> Any:
            Counted.passes += 1
            return super().__iter__()

    class Index:
        def __init__(self, real: Any) -> None:
            self.real, self.objects = real, Counted(real.objects)

        def __getattr__(self, name: str) -> Any:
            return getattr(self.real, name)

    class Project:
        index = Index(project.index)

    lookup = _SectionsByName(Project())  # type: ignore[arg-type]
    for ns in tenants:
        found = lookup.named(ns, "listener", "ftp")
        assert [(obj.namespace, obj.name, section.position) for obj, section in found] == [(ns, "a", 0), (ns, "c", 0)]
        assert [obj.name for obj, _ in lookup.named(ns, "listener", "http")] == ["b"]
    assert lookup.named("elsewhere", "listener", "ftp") == []
    assert lookup.named(tenants[0], "rule", "ftp") == []
    assert Counted.passes == 1
