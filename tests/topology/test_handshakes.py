"""Cross-namespace handshakes (PL401–PL404, PL414): scenario S15 and the cases fixtures do not pin."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from policylint.cli import cli
from policylint.findings import Severity
from policylint.k8s.external import ExternalObjects
from policylint.project import Project
from policylint.rules import handshakes
from policylint.rules.engine import Selection
from tests.lintutil import lint_text, only
from tests.manifests import S15 as TOPOLOGY
from tests.manifests import gateway, listener_set, policy, policy_crd, reference_grant
from tests.manifests import s15_grant as grant

S15_MESSAGE = "HTTPRoute ns2/route-x is not permitted to reference Service default/demo-svc"


HANDSHAKE_RULES = ("PL401", "PL402", "PL403", "PL404", "PL414")


def test_s15_with_the_grant_the_backend_is_permitted() -> None:
    assert [f.rule for f in lint_text(TOPOLOGY + grant()).findings if f.rule in HANDSHAKE_RULES] == []


def test_s15_without_grant_grant_in_ns2_or_other_name_is_an_error() -> None:
    for extra, related in [
        ("", []),
        (grant("ns2"), ["ReferenceGrant ns2/rg would permit this, but it is in namespace ns2"]),
        (grant(to_name="other-svc"), ["ReferenceGrant default/rg permits only Service other-svc, not demo-svc"]),
    ]:
        (finding,) = only(lint_text(TOPOLOGY + extra), "PL402")
        assert finding.message.startswith(S15_MESSAGE + ": ")
        assert finding.path == "spec.rules[0].backendRefs[0]"
        # How to fix it is the finding's hint, one sentence, not part of the message.
        assert finding.hint is not None
        assert finding.hint.startswith(
            "Add a ReferenceGrant in namespace default with from: {group: gateway.networking.k8s.io, kind: HTTPRoute"
        )
        assert "ReferenceGrant in namespace default with" not in finding.message
        assert [r.message[: len(m)] for r, m in zip(finding.related, related)] == related
        assert len(finding.related) == len(related)


def test_grant_in_the_referrers_namespace_is_pl403_not_pl404() -> None:
    result = lint_text(TOPOLOGY + grant("ns2"))
    (finding,) = only(result, "PL403")
    assert (str(finding.object), finding.path) == ("ReferenceGrant ns2/rg", "metadata.namespace")
    assert "move it to namespace default" in finding.message
    assert [r.message for r in finding.related] == ["HTTPRoute ns2/route-x references Service default/demo-svc here"]
    assert only(result, "PL404") == []


def test_unused_grant_is_found_when_the_rule_runs_alone() -> None:
    # PL404 must check every reference itself: nothing else may have filled grants.used.
    text = TOPOLOGY + grant() + grant(from_ns="legacy", name="legacy")
    result = lint_text(text, selection=Selection(select=("PL404",)))
    assert [(f.rule, str(f.object)) for f in result.findings] == [("PL404", "ReferenceGrant default/legacy")]
    assert "referrers outside this repository" in result.findings[0].message


def test_pl403_and_pl404_check_the_references_once_between_them(monkeypatch: pytest.MonkeyPatch) -> None:
    """Both read every cross-namespace reference's grant check: worked out once per run, and each
    finds what it finds alone."""
    text = TOPOLOGY + grant("ns2") + grant(from_ns="legacy", name="legacy")
    calls: list[object] = []
    check = handshakes.checked_references

    def counted(project: Project) -> list[handshakes.CheckedReference]:
        calls.append(project)
        return check(project)

    monkeypatch.setattr(handshakes, "checked_references", counted)
    both = lint_text(text, selection=Selection(select=("PL403", "PL404")))
    assert len(calls) == 1
    found = [(f.rule, str(f.object)) for f in both.findings]
    assert found == [("PL403", "ReferenceGrant ns2/rg"), ("PL404", "ReferenceGrant default/legacy")]
    for rule in ("PL403", "PL404"):
        alone = lint_text(text, selection=Selection(select=(rule,)))
        assert [(f.rule, str(f.object)) for f in alone.findings] == [f for f in found if f[0] == rule]


def test_grants_declared_external_are_assumed_to_permit() -> None:
    from policylint.k8s.external import ExternalObjects

    result = lint_text(TOPOLOGY, external=ExternalObjects.parse(["ReferenceGrant/default/*"]))
    assert only(result, "PL402") == []


COLOR_CRD = (
    policy_crd("ColorPolicy")
    + gateway(ns="ns-b")
    + policy(
        "ColorPolicy",
        "[{group: gateway.networking.k8s.io, kind: Gateway, name: gw, namespace: ns-b}]",
        api="example.com/v1",
        ns="ns-a",
    )
)

COLOR_GRANT = reference_grant(
    "ns-b",
    "[{group: example.com, kind: ColorPolicy, namespace: ns-a}]",
    "[{group: gateway.networking.k8s.io, kind: Gateway}]",
    "colors",
)


def test_s15_policy_extension_needs_a_grant_from_the_policy_kind() -> None:
    (finding,) = only(lint_text(COLOR_CRD), "PL401")
    assert finding.message.startswith("ColorPolicy ns-a/p is not permitted to reference Gateway ns-b/gw: ")
    assert finding.message.endswith("must accept the policy through a handshake)")
    assert finding.hint == (
        "Add a ReferenceGrant in namespace ns-b with from: {group: example.com, kind: ColorPolicy, namespace: ns-a}"
        " and to: {group: gateway.networking.k8s.io, kind: Gateway}."
    )
    result = lint_text(COLOR_CRD + COLOR_GRANT)
    assert only(result, "PL401") == [] and only(result, "PL404") == []


def test_kind_without_namespace_field_is_pl401_for_another_namespace_and_pl205_for_its_own() -> None:
    def ctp(ns: str) -> str:
        return policy(
            "ClientTrafficPolicy",
            f"[{{group: gateway.networking.k8s.io, kind: Gateway, name: gw, namespace: {ns}}}]",
            name="ctp",
            ns="ns2",
        )

    other = lint_text(TOPOLOGY + ctp("infra"))
    assert [(f.rule, f.path) for f in other.findings if f.rule in ("PL205", "PL401")] == [
        ("PL401", "spec.targetRefs[0].namespace")
    ]
    assert "where it resolves to Gateway ns2/gw" in only(other, "PL401")[0].message
    same = lint_text(TOPOLOGY + ctp("ns2"))
    assert [(f.rule, f.path) for f in same.findings if f.rule in ("PL205", "PL401")] == [
        ("PL205", "spec.targetRefs[0].namespace")
    ]


def test_selector_hint_names_the_object_with_one_differing_label() -> None:
    text = TOPOLOGY.replace(
        "metadata: {name: route-x, namespace: ns2}", "metadata: {name: route-x, namespace: ns2, labels: {app: demo}}"
    )
    text += grant() + policy(
        "BackendTrafficPolicy", "[{kind: HTTPRoute, matchLabels: {app: demp}}]", name="btp", ns="ns2", field="targetSelectors"
    )
    (finding,) = only(lint_text(text), "PL414")
    assert finding.message.startswith("targetSelectors[0] of BackendTrafficPolicy ns2/btp matches no HTTPRoute: ")
    assert "HTTPRoute ns2/route-x has app=demo, the selector wants app=demp" in finding.message


# gateway-api conformance/tests/mesh/mesh-consumer-route.yaml (test MeshConsumerRoute): a consumer
# route in one namespace whose parent and backend are a Service in another, with no ReferenceGrant
# anywhere in the conformance manifests. GEP-1294 "Namespace boundaries": mesh routes "can send
# traffic to backendRefs in any namespace ... without a ReferenceGrant".
MESH_CONSUMER_ROUTE = """\
apiVersion: v1
kind: Service
metadata: {name: echo-v1, namespace: gateway-conformance-mesh}
spec:
  ports: [{name: http, port: 80}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata:
  name: mesh-echo-add-header
  namespace: gateway-conformance-mesh-consumer
spec:
  parentRefs:
  - group: ""
    kind: Service
    name: echo-v1
    namespace: gateway-conformance-mesh
  rules:
  - backendRefs:
    - name: echo-v1
      namespace: gateway-conformance-mesh
      port: 80
"""


def test_a_mesh_route_reaches_backends_in_other_namespaces_without_a_grant() -> None:
    # Before: PL402 "not permitted to reference Service gateway-conformance-mesh/echo-v1". After: none.
    result = lint_text(MESH_CONSUMER_ROUTE)
    assert only(result, "PL402") == []
    assert [f.rule for f in result.findings if f.severity.label == "error"] == []


def test_a_route_with_a_gateway_parent_still_needs_the_grant() -> None:
    # The same backend from a Gateway-bound route (north-south): the grant is required (GEP-709).
    gateway_bound = MESH_CONSUMER_ROUTE.replace(
        '  - group: ""\n    kind: Service\n    name: echo-v1\n    namespace: gateway-conformance-mesh\n',
        "  - name: gw\n    namespace: gateway-conformance-mesh-consumer\n",
    )
    gateway_bound += "---\n" + gateway(ns="gateway-conformance-mesh-consumer")
    (finding,) = only(lint_text(gateway_bound), "PL402")
    assert finding.object is not None and finding.object.name == "mesh-echo-add-header"


# istio/istio pilot/pkg/config/kube/gateway/testdata/mesh.yaml, route `consumer-override`: a route
# in `default` whose parent is the Service apple/httpbin-apple (a consumer route, GEP-1294), with
# no ReferenceGrant in the input; its golden status (mesh.status.yaml.golden) is Accepted=True,
# ResolvedRefs=True. A Service parent is no Gateway: ReferenceGrant does not apply to it.
ISTIO_CONSUMER_ROUTE = """\
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: istio}
spec: {controllerName: istio.io/gateway-controller}
---
apiVersion: v1
kind: Service
metadata: {name: httpbin-apple, namespace: apple}
spec:
  ports: [{name: http, port: 80}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata:
  name: consumer-override
  namespace: default
spec:
  parentRefs:
  - group: ""
    kind: Service
    name: httpbin-apple
    namespace: apple
    port: 80
  rules:
  - backendRefs:
    - name: httpbin-apple
      namespace: apple
      port: 80
"""


def test_an_istio_consumer_route_needs_no_grant_for_its_service_parent() -> None:
    result = lint_text(ISTIO_CONSUMER_ROUTE)
    assert [f.rule for f in result.findings] == []
    # The parent is looked up all the same: a Service missing from its namespace is PL406 (and the
    # backend PL411), so the check above is not vacuous. The route stays a mesh route: its backend
    # needs no grant either (before: PL402 as well, as if a Gateway-bound route).
    missing = lint_text(
        ISTIO_CONSUMER_ROUTE.replace(
            "metadata: {name: httpbin-apple, namespace: apple}", "metadata: {name: httpbin-apple, namespace: pear}"
        )
    )
    assert [f.rule for f in missing.findings if f.rule.startswith("PL4")] == ["PL406", "PL411"]


# -- object references in a policy's spec, and --complete ---------------------------------------------

_RESPONSE_OVERRIDE = """\
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata:
  name: eg
spec:
  controllerName: gateway.envoyproxy.io/gatewayclass-controller
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata:
  name: gateway-1
  namespace: default
spec:
  gatewayClassName: eg
  listeners:
  - name: http
    protocol: HTTP
    port: 80
---
apiVersion: gateway.envoyproxy.io/v1alpha1
kind: BackendTrafficPolicy
metadata:
  name: policy-for-gateway
  namespace: default
spec:
  targetRefs:
  - group: gateway.networking.k8s.io
    kind: Gateway
    name: gateway-1
  responseOverride:
  - match:
      statusCodes:
      - type: Value
        value: 404
    response:
      contentType: text/plain
      body:
        type: ValueRef
        valueRef:
          group: ""
          kind: ConfigMap
          name: response-override-config-1
"""


def test_a_missing_configmap_in_a_policy_spec_makes_it_invalid_when_the_input_is_complete() -> None:
    # Envoy Gateway's translator test backendtrafficpolicy-with-response-override-invalid-valueref:
    # EG writes Accepted=False, Invalid ("ResponseOverride: can't find the referenced configmap
    # default/response-override-config-1"). The profile lists the field (objectRefs).
    partial = lint_text(_RESPONSE_OVERRIDE, report_policies=True)
    # A repository holding no ConfigMap in that namespace may keep them elsewhere: not checked.
    assert only(partial, "PL417") == []
    assert partial.policy_reports is not None
    assert partial.policy_reports[0]["targets"][0]["accepted"] == "Accepted"
    complete = lint_text(_RESPONSE_OVERRIDE, report_policies=True, complete=True)
    (finding,) = only(complete, "PL417")
    assert finding.path == "spec.responseOverride[0].response.body.valueRef.name"
    assert finding.message.startswith(
        "object reference names ConfigMap default/response-override-config-1, which is not in the input, and nothing in"
        " it makes it (considered: Bundle, ClusterBundle (trust-manager); kube-root-ca.crt in every namespace (the"
        " kube-controller-manager)) (declared complete: --complete):"
    )
    assert complete.policy_reports is not None
    target = complete.policy_reports[0]["targets"][0]
    assert (target["accepted"], target["message"]) == (
        "Invalid",
        "spec.responseOverride[0].response.body.valueRef: ConfigMap default/response-override-config-1 not found",
    )


# Istio's golden statuses (pilot/pkg/config/kube/gateway/testdata: invalid.yaml `invalid-cert-kind`,
# `invalid-frontendvalidation-unknown`; frontend-tls-invalid.yaml `invalid-frontend-ca-kind`;
# backend-tls-client-cert.yaml `backend-tls-unsupported-kind`) follow the Gateway API's reasons
# (apis/v1/gateway_types.go): a core kind a Gateway's certificate field does not take is
# InvalidCertificateRef on the listener, InvalidCACertificateKind on the HTTPS listeners, and
# InvalidClientCertificateRef on the Gateway.
_CERTIFICATE_KINDS = """\
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw, namespace: infra}
spec:
  gatewayClassName: istio
  tls:
    backend:
      clientCertificateRef: {group: "", kind: ConfigMap, name: client}
    frontend:
      default:
        validation:
          caCertificateRefs:
          - {group: "", kind: Service, name: ca}
          - {group: "", kind: Secret, name: ca}
  listeners:
  - name: https
    port: 443
    protocol: HTTPS
    tls:
      certificateRefs:
      - {group: "", kind: unknown, name: cert}
      - {name: cert}
"""


def test_a_core_kind_a_gateway_certificate_field_does_not_take_is_reported_with_the_gateway_api_reason() -> None:
    # Before: nothing (certificate references to Secrets and ConfigMaps that may live outside the
    # repository are not looked up, and the kind was never checked).
    findings = only(lint_text(_CERTIFICATE_KINDS), "PL417")
    assert [(f.path, f.line) for f in findings] == [
        ("spec.tls.backend.clientCertificateRef.kind", 8),
        ("spec.tls.frontend.default.validation.caCertificateRefs[0].kind", 13),
        ("spec.listeners[0].tls.certificateRefs[0].kind", 21),
    ]
    client, ca, listener = (f.message for f in findings)
    assert client.startswith("client certificate reference names a ConfigMap (group core), a core kind the field does not take")
    assert "the Gateway gets ResolvedRefs=False, InvalidClientCertificateRef" in client
    assert "(it takes ConfigMap or Secret)" in ca and "ResolvedRefs=False, InvalidCACertificateKind" in ca
    assert "the listener gets ResolvedRefs=False, InvalidCertificateRef" in listener


def test_a_missing_certificate_names_the_reason_of_the_field() -> None:
    text = _CERTIFICATE_KINDS.replace("kind: ConfigMap, name: client", "kind: Secret, name: client")
    text = text.replace("kind: Service, name: ca", "kind: ConfigMap, name: ca").replace("kind: unknown", "kind: Secret")
    messages = [f.message for f in only(lint_text(text, complete=True), "PL417")]
    assert len(messages) == 5  # nothing of the kinds is in the input, which is complete
    assert "InvalidClientCertificateRef" in messages[0]
    assert "InvalidCACertificateRef (and Accepted=False, NoValidCACertificate" in messages[1]
    assert all("InvalidCertificateRef" in m for m in messages[3:])


# gateway-api conformance/tests/gateway-invalid-default-frontend-client-certificate-validation.yaml
# (test GatewayInvalidFrontendClientCertificateValidation): a perPort entry for port 80, where only
# an HTTP listener is, names a CA the suite never creates, and the test expects listener http to
# keep ResolvedRefs=True. FrontendTLSConfig (apis/v1/gateway_types.go) applies the default to
# "all Listeners handling HTTPS traffic, unless a per-port configuration is defined" and a perPort
# entry to those "that match this port"; its conditions go to "listeners serving HTTPS on a
# matching port".
_FRONTEND_PORTS = """\
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw, namespace: infra}
spec:
  gatewayClassName: eg
  tls:
    frontend:
      default:
        validation:
          caCertificateRefs: [{group: "", kind: ConfigMap, name: default-ca}]
      perPort:
      - port: 80
        tls:
          validation:
            caCertificateRefs: [{group: "", kind: ConfigMap, name: port-80-ca}]
      - port: 8443
        tls:
          validation:
            caCertificateRefs: [{group: "", kind: ConfigMap, name: port-8443-ca, namespace: other}]
  listeners:
  - {name: https, port: 443, protocol: HTTPS, tls: {certificateRefs: [{name: cert}]}}
  - {name: http, port: 80, protocol: HTTP}
  - {name: tls, port: 8443, protocol: TLS, tls: {mode: Passthrough}}
"""


def test_a_frontend_ca_reference_no_https_listener_uses_changes_no_status() -> None:
    # Before: all three were errors; the port-80 one is the conformance test's false positive.
    result = lint_text(_FRONTEND_PORTS, complete=True)
    findings = [f for f in result.findings if f.rule in ("PL402", "PL417")]
    assert [(f.rule, f.line, f.severity.label) for f in findings] == [
        ("PL417", 10, "error"),
        ("PL417", 15, "info"),
        ("PL402", 19, "info"),
        ("PL417", 21, "error"),  # the listener's own certificate: no frontend configuration
    ]
    default, port_80, refused, _ = (f.message for f in findings)
    assert "listener https gets ResolvedRefs=False, InvalidCACertificateRef (and Accepted=False, NoValidCACertificate" in default
    assert port_80.endswith(
        "no listener handles HTTPS traffic on port 80, the port of this perPort entry, so no listener's status changes"
        " (it would get ResolvedRefs=False, InvalidCACertificateRef)"
    )
    assert "no listener handles HTTPS traffic on port 8443, the port of this perPort entry, and no listener's status" in refused
    # An HTTPS listener on port 80 takes the entry; then no HTTPS listener is left for the default.
    on_80 = lint_text(_FRONTEND_PORTS.replace("{name: https, port: 443", "{name: https, port: 80"), complete=True)
    default, port_80, _ = (f for f in on_80.findings if f.rule == "PL417")
    assert (default.severity.label, port_80.severity.label) == ("info", "error")
    assert "the default configuration applies to no listener: none handles HTTPS traffic on a port without a perPort" in (
        default.message
    )
    assert "listener https gets ResolvedRefs=False" in port_80.message


def test_a_listener_set_listener_takes_its_gateways_frontend_configuration() -> None:
    text = _FRONTEND_PORTS.replace(
        "spec:\n  gatewayClassName: eg\n", "spec:\n  gatewayClassName: eg\n  allowedListeners: {namespaces: {from: All}}\n"
    ) + listener_set(
        name="extra",
        ns="team",
        parent="{name: gw, namespace: infra}",
        listeners="[{name: https-80, port: 80, protocol: HTTPS, hostname: a.example.com, tls: {certificateRefs: [{name: cert}]}}]",
    )
    result = lint_text(text, complete=True)
    (port_80,) = (f for f in result.findings if f.path == "spec.tls.frontend.perPort[0].tls.validation.caCertificateRefs[0].name")
    assert port_80.severity.label == "error"
    assert "listener ListenerSet team/extra#https-80 gets ResolvedRefs=False, InvalidCACertificateRef" in port_80.message


def test_complete_on_the_command_line() -> None:
    result = CliRunner().invoke(
        cli, ["check", "--no-cache", "--complete", "-", "--stdin-filename", "m.yaml"], input=_RESPONSE_OVERRIDE
    )
    assert result.exit_code == 1
    assert "error PL417 object reference names ConfigMap default/response-override-config-1" in result.stdout


# kgateway's route delegation guide (kgateway.dev/docs/traffic-management/route-delegation/basic/,
# kgateway-dev/kgateway.io content/docs/traffic-management/route-delegation/basic.md): a parent
# HTTPRoute delegates /anything/team1 to every HTTPRoute in team1 (`name: "*"`) and /anything/team2
# to team2; child-team1 has no parentRefs, child-team2 names the parent HTTPRoute.
KGATEWAY_DELEGATION = """\
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: kgateway}
spec: {controllerName: kgateway.dev/kgateway}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: http, namespace: kgateway-system}
spec:
  gatewayClassName: kgateway
  listeners: [{name: http, protocol: HTTP, port: 8080, allowedRoutes: {namespaces: {from: All}}}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: parent, namespace: kgateway-system}
spec:
  hostnames: [delegation.example]
  parentRefs: [{name: http}]
  rules:
  - matches: [{path: {type: PathPrefix, value: /anything/team1}}]
    backendRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: "*", namespace: team1}]
  - matches: [{path: {type: PathPrefix, value: /anything/team2}}]
    backendRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: "*", namespace: team2}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: child-team1, namespace: team1}
spec:
  rules:
  - matches: [{path: {type: PathPrefix, value: /anything/team1/foo}}]
    backendRefs: [{name: httpbin, port: 8000}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: child-team2, namespace: team2}
spec:
  parentRefs: [{name: parent, namespace: kgateway-system, group: gateway.networking.k8s.io, kind: HTTPRoute}]
  rules:
  - matches: [{path: {type: Exact, value: /anything/team2/bar}}]
    backendRefs: [{name: httpbin, port: 8000}]
---
apiVersion: v1
kind: Service
metadata: {name: httpbin, namespace: team1}
spec: {ports: [{port: 8000}]}
---
apiVersion: v1
kind: Service
metadata: {name: httpbin, namespace: team2}
spec: {ports: [{port: 8000}]}
"""


def test_route_delegation_needs_no_grant_and_its_children_no_parent_refs() -> None:
    # Before: two PL402 errors on the parent (no ReferenceGrant for HTTPRoute) and PL410 on
    # child-team1. After: clean, and both children carry traffic.
    result = lint_text(KGATEWAY_DELEGATION)
    assert [(f.rule, f.object.name if f.object else None) for f in result.findings] == []
    topology = result.project.topology()
    for name in ("child-team1", "child-team2"):
        child = result.project.index.lookup("gateway.networking.k8s.io", "HTTPRoute", name.replace("child-", ""), name)
        assert child is not None and topology.traffic(child)[0].label == "Carries"
        assert [r.name for r in topology.delegated_by(child)] == ["parent"]


def test_a_grandchild_of_delegation_needs_no_parent_refs() -> None:
    # kgateway's translator test delegation/recursive.yaml: route-a (no parentRefs) delegates to
    # route-a-b (no parentRefs), which kgateway programs; its docs (route-delegation): a grandchild
    # "can ... be selected by all child HTTPRoute resources that want to delegate traffic to this
    # grandchild". Before: PL410 on the grandchild, while PL413 found it carrying traffic.
    grandchild = """\
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: grandchild, namespace: team3}
spec:
  rules:
  - matches: [{path: {type: PathPrefix, value: /anything/team1/foo/a}}]
    backendRefs: [{name: httpbin, port: 8000}]
---
apiVersion: v1
kind: Service
metadata: {name: httpbin, namespace: team3}
spec: {ports: [{port: 8000}]}
"""
    text = KGATEWAY_DELEGATION.replace(
        "    backendRefs: [{name: httpbin, port: 8000}]\n---\napiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\n"
        "metadata: {name: child-team2",
        "    backendRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: '*', namespace: team3}]\n---\n"
        "apiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\nmetadata: {name: child-team2",
        1,
    )
    assert text != KGATEWAY_DELEGATION
    result = lint_text(text + grandchild)
    assert [(f.rule, f.object.name if f.object else None) for f in result.findings] == []
    child = result.project.index.lookup("gateway.networking.k8s.io", "HTTPRoute", "team3", "grandchild")
    assert child is not None and result.project.topology().traffic(child)[0].label == "Carries"
    # A chain whose head names no parent reaches nothing: both routes of a cycle keep PL410
    # (test_a_delegation_cycle_carries_no_traffic).


def test_a_child_route_whose_delegating_parent_is_declared_external_is_not_reported() -> None:
    # A team's repository with only its child route (kgateway docs, route-delegation/basic.md: the
    # child "is automatically selected by all parent HTTPRoute resources that delegate traffic to
    # this child"). Before: PL410 even with the parent declared external.
    child = KGATEWAY_DELEGATION.split("---\n")[3] + "---\n" + KGATEWAY_DELEGATION.split("---\n")[5]
    assert "name: child-team1" in child and "kind: Service" in child
    assert [f.object.name for f in only(lint_text(child), "PL410") if f.object] == ["child-team1"]
    parent = ExternalObjects.parse(["HTTPRoute/kgateway-system/parent"])
    assert only(lint_text(child, external=parent), "PL410") == []
    # Under a controller known not to delegate, a declared external route changes nothing.
    eg = "apiVersion: gateway.networking.k8s.io/v1\nkind: GatewayClass\nmetadata: {name: eg}\nspec: {controllerName: gateway.envoyproxy.io/gatewayclass-controller}\n---\n"
    assert [f.object.name for f in only(lint_text(eg + child, external=parent), "PL410") if f.object] == ["child-team1"]


def test_a_controller_that_does_not_delegate_gets_invalid_kind() -> None:
    # Envoy Gateway's validateBackendRefKind: "Kind is invalid, only Service, MCS ServiceImport and
    # Envoy Gateway Backend are supported" (ResolvedRefs=False, InvalidKind).
    text = KGATEWAY_DELEGATION.replace("kgateway.dev/kgateway", "gateway.envoyproxy.io/gatewayclass-controller")
    result = lint_text(text)
    assert [(f.rule, f.path) for f in result.findings if f.severity.label == "error"] == [
        ("PL411", "spec.rules[0].backendRefs[0].kind"),
        ("PL411", "spec.rules[1].backendRefs[0].kind"),
    ]
    assert "a route; the controllers of its Gateways do not delegate traffic to routes" in result.findings[0].message
    assert [f.object.name for f in only(result, "PL410") if f.object] == ["child-team1"]


def test_a_delegation_cycle_carries_no_traffic() -> None:
    text = """\
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: a, namespace: team}
spec:
  rules: [{backendRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: b}]}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: b, namespace: team}
spec:
  rules: [{backendRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: a}]}]
"""
    result = lint_text(text)
    topology = result.project.topology()
    for route in result.project.index.of_kind("gateway.networking.k8s.io", "HTTPRoute"):
        assert topology.traffic(route)[0].label == "NoParentRefs"
    assert sorted(f.object.name for f in only(result, "PL410") if f.object) == ["a", "b"]


_WAF = """\
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: nginx}
spec: {controllerName: gateway.nginx.org/nginx-gateway-controller}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw, namespace: apps}
spec:
  gatewayClassName: nginx
  listeners: [{name: http, protocol: HTTP, port: 80}]
---
apiVersion: gateway.nginx.org/v1alpha1
kind: WAFPolicy
metadata: {name: waf, namespace: apps}
spec:
  type: PLM
  targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: gw}]
  policyRef:
    apPolicyRef: {name: strict, namespace: security}
  securityLogs:
  - logRef:
      apLogConfRef: {name: log-blocked, namespace: security}
    destination: {type: stderr}
"""
_WAF_GRANT = """\
---
apiVersion: gateway.networking.k8s.io/v1beta1
kind: ReferenceGrant
metadata: {name: waf-bundles, namespace: security}
spec:
  from: [{group: gateway.nginx.org, kind: WAFPolicy, namespace: apps}]
  to: [{group: appprotect.f5.com, kind: APPolicy}, {group: appprotect.f5.com, kind: APLogConf}]
"""


def test_a_waf_policy_reference_to_another_namespace_needs_a_grant() -> None:
    # NGINX Gateway Fabric (main branch, internal/controller/state/graph/policies.go):
    # validatePLMAPolicyReference and validatePLMAPLogConfReference write PolicyRefsNotPermitted
    # ("cross-namespace reference to APPolicy ... not permitted by ReferenceGrant") unless a
    # ReferenceGrant in the APPolicy's namespace lets WAFPolicy (gateway.nginx.org) from the policy's
    # namespace reference appprotect.f5.com APPolicy / APLogConf (toAPPolicy, toAPLogConf).
    # Before: no finding (the references were not modelled).
    findings = only(lint_text(_WAF), "PL402")
    assert [(f.path, f.message.split(":")[0]) for f in findings] == [
        ("spec.policyRef.apPolicyRef", "WAFPolicy apps/waf is not permitted to reference APPolicy security/strict"),
        (
            "spec.securityLogs[0].logRef.apLogConfRef",
            "WAFPolicy apps/waf is not permitted to reference APLogConf security/log-blocked",
        ),
    ]
    assert "group: appprotect.f5.com, kind: APPolicy" in (findings[0].hint or "")
    # NewPolicyRefsNotPermitted (internal/controller/state/conditions/conditions.go): ResolvedRefs=False,
    # RefNotPermitted. Before: "the controller refuses this reference (RefNotPermitted)".
    assert findings[0].message.endswith("so the policy is refused (ResolvedRefs=False, RefNotPermitted; Accepted stays True)")
    assert only(lint_text(_WAF + _WAF_GRANT), "PL402") == []


def test_a_waf_policy_whose_reference_is_missing_is_refused_under_the_conditions_ngf_writes() -> None:
    # NGINX Gateway Fabric's functional test waf-policy (tests/suite/manifests/waf-policy/
    # wafpolicy-plm-missing.yaml) expects ResolvedRefs=False, InvalidRef: getPLMAPPolicyStatus
    # marks the policy invalid, and PrepareNGFPolicyRequests leaves the Accepted=True every policy
    # starts with. Before: "the policy is rejected (Accepted=False, Invalid)".
    text = (
        _WAF
        + _WAF_GRANT
        + "---\napiVersion: appprotect.f5.com/v1\nkind: APLogConf\nmetadata: {name: other, namespace: security}\n"
    )
    (finding,) = only(lint_text(text), "PL417")
    assert finding.path == "spec.securityLogs[0].logRef.apLogConfRef.name"
    # A repository cannot prove the absence: a warning until --complete.
    assert finding.severity is Severity.WARNING
    assert finding.message.endswith(
        "which is not in the input although the input manages APLogConfs in namespace security, and nothing in it"
        " makes it: the policy is refused (ResolvedRefs=False, InvalidRef; Accepted stays True)"
    )


def test_a_backend_tls_policy_whose_ca_is_missing_is_refused_with_the_gateway_api_reasons() -> None:
    # Istio's golden status (pilot/pkg/config/kube/gateway/testdata/backend-tls-policy.yaml,
    # `unknown-configmap`): Accepted=False NoValidCACertificate and ResolvedRefs=False
    # InvalidCACertificateRef, the reasons apis/v1/backendtlspolicy_types.go defines.
    text = """\
apiVersion: v1
kind: ConfigMap
metadata: {name: other, namespace: default}
---
apiVersion: gateway.networking.k8s.io/v1
kind: BackendTLSPolicy
metadata: {name: unknown-configmap, namespace: default}
spec:
  targetRefs: [{group: "", kind: Service, name: httpbin}]
  validation:
    caCertificateRefs: [{group: "", kind: ConfigMap, name: does-not-exist}]
    hostname: httpbin.example.com
"""
    (finding,) = only(lint_text(text), "PL417")
    assert finding.message.endswith(
        "the policy is refused (ResolvedRefs=False, InvalidCACertificateRef, or InvalidKind for a kind, and"
        " Accepted=False, NoValidCACertificate where no CA reference is valid; Envoy Gateway writes Accepted=False, Invalid)"
    )


def test_a_backend_tls_policy_ca_without_a_key_any_controller_reads_is_refused() -> None:
    # Istio's golden backend-tls-policy.yaml, `malformed-configmap`: a ConfigMap without ca.crt
    # gives ResolvedRefs=False, InvalidCACertificateRef. Envoy Gateway also reads tls.crt and a
    # ConfigMap's only entry, Istio `cacert`: what any of them reads counts.
    def text(data: str) -> str:
        return (
            f"apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: ca, namespace: default}}\ndata: {data}\n---\n"
            "apiVersion: gateway.networking.k8s.io/v1\nkind: BackendTLSPolicy\nmetadata: {name: p, namespace: default}\n"
            "spec:\n  targetRefs: [{group: '', kind: Service, name: httpbin}]\n"
            "  validation:\n    caCertificateRefs: [{group: '', kind: ConfigMap, name: ca}]\n    hostname: a.example.com\n"
        )

    (finding,) = only(lint_text(text("{a: x, b: y}")), "PL417")
    assert finding.path == "spec.validation.caCertificateRefs[0]"
    assert "names ConfigMap default/ca, which has none of the keys ca.crt, cacert, tls.crt and more than one entry" in (
        finding.message
    )
    for data in ("{ca.crt: x, b: y}", "{cacert: x, b: y}", "{tls.crt: x, b: y}", "{root.pem: x}"):
        assert only(lint_text(text(data)), "PL417") == [], data


# Envoy Gateway's translator test securitypolicy-with-oidc-invalid-secretref
# (internal/gatewayapi/testdata in envoyproxy/gateway): the three SecurityPolicies, their Secrets.
_EG_OIDC_SECRETS = """\
apiVersion: v1
kind: Secret
metadata: {namespace: envoy-gateway, name: client2-secret}
data: {client-secret: Y2xpZW50MTpzZWNyZXQK}
---
apiVersion: v1
kind: Secret
metadata: {namespace: default, name: client3-secret}
data: {invalid_client_secret_key: Y2xpZW50MTpzZWNyZXQK}
---
apiVersion: gateway.envoyproxy.io/v1alpha1
kind: SecurityPolicy
metadata: {namespace: default, name: policy-non-exist-secretRef}
spec:
  targetRef: {group: gateway.networking.k8s.io, kind: Gateway, name: gateway-1}
  oidc:
    provider: {issuer: "https://accounts.google.com"}
    clientID: client1.apps.googleusercontent.com
    clientSecret: {name: client1-secret}
---
apiVersion: gateway.envoyproxy.io/v1alpha1
kind: SecurityPolicy
metadata: {namespace: default, name: policy-no-referenceGrant}
spec:
  targetRef: {group: gateway.networking.k8s.io, kind: Gateway, name: gateway-2}
  oidc:
    provider: {issuer: "https://accounts.google.com"}
    clientID: client1.apps.googleusercontent.com
    clientSecret: {namespace: envoy-gateway, name: client2-secret}
---
apiVersion: gateway.envoyproxy.io/v1alpha1
kind: SecurityPolicy
metadata: {namespace: default, name: policy-no-client-secret-key}
spec:
  targetRef: {group: gateway.networking.k8s.io, kind: Gateway, name: gateway-3}
  oidc:
    provider: {issuer: "https://accounts.google.com"}
    clientID: client1.apps.googleusercontent.com
    clientSecret: {namespace: default, name: client3-secret}
"""


def test_an_oidc_client_secret_is_found_granted_and_read_as_envoy_gateway_does() -> None:
    # EG writes Accepted=False, Invalid on each: "OIDC: secret default/client1-secret does not
    # exist.", "OIDC: ref to Secret envoy-gateway/client2-secret not permitted by any
    # ReferenceGrant.", "OIDC: client secret not found in secret default/client3-secret."
    # Before: no finding (the clientSecret reference was not in the profile).
    result = lint_text(_EG_OIDC_SECRETS, complete=True)
    missing, no_key = only(result, "PL417")
    (not_permitted,) = only(result, "PL402")
    assert (str(missing.object), missing.path) == (
        "SecurityPolicy default/policy-non-exist-secretRef",
        "spec.oidc.clientSecret.name",
    )
    assert "names Secret default/client1-secret, which is not in the input" in missing.message
    assert missing.message.endswith("the policy is refused (Accepted=False, Invalid)")
    assert (no_key.path, no_key.message) == (
        "spec.oidc.clientSecret",
        "object reference names Secret default/client3-secret, which has no key client-secret: the policy is refused"
        " (Accepted=False, Invalid)",
    )
    assert not_permitted.path == "spec.oidc.clientSecret"
    assert not_permitted.message.endswith(
        "no ReferenceGrant in namespace envoy-gateway permits it for SecurityPolicy from namespace default (Gateway API"
        " ReferenceGrant), so the policy is refused (Accepted=False, Invalid)"
    )
    grant = reference_grant(
        "envoy-gateway",
        "[{group: gateway.envoyproxy.io, kind: SecurityPolicy, namespace: default}]",
        '[{group: "", kind: Secret}]',
    )
    assert only(lint_text(_EG_OIDC_SECRETS + grant, complete=True), "PL402") == []
    # Without --complete the missing Secret cannot be proven absent: a warning, as for PL417's others.
    assert only(lint_text(_EG_OIDC_SECRETS), "PL417")[0].severity is Severity.WARNING


def test_a_lua_configmap_is_found_and_read_as_envoy_gateway_does() -> None:
    # EG's translator test envoyextensionpolicy-with-lua-configmap: "Lua: can't find the referenced
    # configmap cm-policy-for-http-route-no-exist in namespace default." and "Lua: can't find the
    # key lua in the referenced configmap cm-policy-for-http-route-empty.", both Accepted=False,
    # Invalid; a ConfigMap without key lua but with another entry is read from that entry.
    def policy_with(name: str) -> str:
        return f"""\
---
apiVersion: gateway.envoyproxy.io/v1alpha1
kind: EnvoyExtensionPolicy
metadata: {{namespace: default, name: {name}}}
spec:
  targetRef: {{group: gateway.networking.k8s.io, kind: HTTPRoute, name: httproute-1}}
  lua:
  - type: ValueRef
    valueRef: {{group: "", kind: ConfigMap, name: {name}}}
"""

    text = (
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {namespace: default, name: cm-policy-for-http-route-empty}\n"
        "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {namespace: default, name: cm-other-key}\n"
        "data: {script: 'function envoy_on_response(r) end'}\n"
        + policy_with("cm-policy-for-http-route-no-exist")
        + policy_with("cm-policy-for-http-route-empty")
        + policy_with("cm-other-key")
    )
    findings = only(lint_text(text, complete=True), "PL417")
    assert [(str(f.object), f.path) for f in findings] == [
        ("EnvoyExtensionPolicy default/cm-policy-for-http-route-no-exist", "spec.lua[0].valueRef.name"),
        ("EnvoyExtensionPolicy default/cm-policy-for-http-route-empty", "spec.lua[0].valueRef"),
    ]
    assert "which has no key lua and no entry at all" in findings[1].message


def test_an_ext_auth_context_extension_is_read_from_the_key_its_reference_names() -> None:
    # Envoy Gateway's getContextExtensionValueFromRef (internal/gatewayapi/securitypolicy.go in
    # envoyproxy/gateway): the value is the entry `key` of the ConfigMap or Secret, with no
    # fallback; "can't find the key "region" in the referenced configmap "ctx"" fails the policy
    # (Accepted=False, Invalid). Before: the reference was not checked at all.
    text = """\
apiVersion: v1
kind: ConfigMap
metadata: {name: ctx, namespace: default}
data: {tenant: a}
---
apiVersion: gateway.envoyproxy.io/v1alpha1
kind: SecurityPolicy
metadata: {name: auth, namespace: default}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: r}]
  extAuth:
    http:
      backendRefs: [{name: auth, port: 80}]
    contextExtensions:
    - {name: tenant, type: ValueRef, valueRef: {group: "", kind: ConfigMap, name: ctx, key: tenant}}
    - {name: region, type: ValueRef, valueRef: {group: "", kind: ConfigMap, name: ctx, key: region}}
"""
    (finding,) = only(lint_text(text), "PL417")
    assert finding.path == "spec.extAuth.contextExtensions[1].valueRef"
    assert finding.message == (
        "object reference names ConfigMap default/ctx, which has no key region: the policy is refused (Accepted=False, Invalid)"
    )
