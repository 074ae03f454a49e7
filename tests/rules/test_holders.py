"""References held by objects other than policies (profile `holders`, policylint/profiles/holders.py;
docs/semantics.md#envoy-gateway): Envoy Gateway's HTTPRouteFilter and EnvoyProxy, checked as a
policy's references are (PL411, PL417, PL402), with what the controller does when one is invalid.

What Envoy Gateway reads, at v1.9.0 (envoyproxy/gateway):
- HTTPRouteFilter `spec.directResponse.body.valueRef`: a ConfigMap of the filter's namespace, its key
  `response.body` else any entry (getCustomResponseBody in internal/gatewayapi/backendtrafficpolicy.go);
- HTTPRouteFilter `spec.credentialInjection.credential.valueRef`: a Secret, in another namespace
  with a ReferenceGrant from HTTPRouteFilter (validateSecretRef), its key `credential`
  (InjectedCredentialKey, api/v1alpha1/httproutefilter_types.go); an invalid one makes the route
  rule Accepted=False, UnsupportedValue, answering 500 (processInvalidHTTPFilter, filters.go);
- EnvoyProxy telemetry backendRefs: Services or Backends, no ReferenceGrant; a missing one makes the
  Gateway Accepted=False, InvalidParameters (processProxyObservability, internal/gatewayapi/
  listener.go; translator test envoyproxy-accesslog-backend-invalid).
"""

from __future__ import annotations

from policylint.findings import Severity
from tests.lintutil import lint_text, only

FILTERS = """\
apiVersion: gateway.envoyproxy.io/v1alpha1
kind: HTTPRouteFilter
metadata: {name: direct, namespace: apps}
spec:
  directResponse:
    body: {type: ValueRef, valueRef: {group: "", kind: ConfigMap, name: %s}}
---
apiVersion: gateway.envoyproxy.io/v1alpha1
kind: HTTPRouteFilter
metadata: {name: inject, namespace: apps}
spec:
  credentialInjection:
    credential:
      valueRef: {name: %s}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: body, namespace: apps}
data: {response.body: "maintenance"}
---
apiVersion: v1
kind: Secret
metadata: {name: token, namespace: apps}
stringData: {credential: "Bearer abc"}
---
apiVersion: v1
kind: Secret
metadata: {name: no-credential, namespace: apps}
stringData: {token: "Bearer abc"}
"""

FILTER_EFFECT = (
    'every HTTPRoute rule that uses the filter gets Accepted=False, UnsupportedValue ("invalid filter HTTPRouteFilter")'
    " and answers HTTP 500"
)


def test_a_filter_s_config_map_and_secret_resolve() -> None:
    result = lint_text(FILTERS % ("body", "token"))
    assert [f for f in result.findings if f.rule in ("PL402", "PL411", "PL417")] == []


def test_a_filter_s_missing_config_map_is_found_where_the_input_manages_config_maps() -> None:
    # Before: a filter's references were not read at all.
    (finding,) = only(lint_text(FILTERS % ("gone", "token")), "PL417")
    assert (finding.path, finding.line, finding.severity) == ("spec.directResponse.body.valueRef.name", 6, Severity.WARNING)
    assert "names ConfigMap apps/gone, which is not in the input" in finding.message
    assert finding.message.endswith(FILTER_EFFECT)
    (error,) = only(lint_text(FILTERS % ("gone", "token"), complete=True), "PL417")
    assert error.severity is Severity.ERROR


def test_an_injected_credential_s_secret_needs_its_credential_key() -> None:
    (finding,) = only(lint_text(FILTERS % ("body", "no-credential")), "PL417")
    assert (finding.path, finding.line, finding.severity) == ("spec.credentialInjection.credential.valueRef", 14, Severity.ERROR)
    assert "names Secret apps/no-credential, which has no key credential" in finding.message
    assert finding.message.endswith(FILTER_EFFECT)


def test_an_injected_credential_in_another_namespace_needs_a_reference_grant() -> None:
    other = FILTERS.replace("valueRef: {name: %s}", "valueRef: {name: %s, namespace: vault}") + (
        "---\napiVersion: v1\nkind: Secret\nmetadata: {name: token, namespace: vault}\nstringData: {credential: x}\n"
    )
    (finding,) = only(lint_text(other % ("body", "token")), "PL402")
    assert finding.object is not None and (finding.object.kind, finding.object.name) == ("HTTPRouteFilter", "inject")
    assert "no ReferenceGrant in namespace vault permits it for HTTPRouteFilter from namespace apps" in finding.message
    granted = other + (
        "---\napiVersion: gateway.networking.k8s.io/v1beta1\nkind: ReferenceGrant\nmetadata: {name: filters, namespace: vault}\n"
        "spec:\n  from: [{group: gateway.envoyproxy.io, kind: HTTPRouteFilter, namespace: apps}]\n"
        "  to: [{group: '', kind: Secret}]\n"
    )
    result = lint_text(granted % ("body", "token"))
    assert only(result, "PL402") == [] and only(result, "PL404") == []


PROXY = """\
apiVersion: gateway.envoyproxy.io/v1alpha1
kind: EnvoyProxy
metadata: {name: proxy, namespace: infra}
spec:
  telemetry:
    accessLog:
      settings:
      - sinks:
        - type: OpenTelemetry
          openTelemetry:
            backendRefs: [{name: %s, namespace: monitoring, port: 4317}]
---
apiVersion: v1
kind: Service
metadata: {name: otel-collector, namespace: monitoring}
spec:
  ports: [{name: grpc, port: 4317}]
"""


def test_an_envoy_proxy_s_telemetry_backend_must_exist_and_needs_no_grant() -> None:
    assert [f for f in lint_text(PROXY % "otel-collector").findings if f.rule in ("PL402", "PL411")] == []
    (finding,) = only(lint_text(PROXY % "collector"), "PL411")
    assert (finding.path, finding.line) == ("spec.telemetry.accessLog.settings[0].sinks[0].openTelemetry.backendRefs[0].name", 11)
    assert "names Service monitoring/collector, which is not in the input" in finding.message
    assert "every Gateway the EnvoyProxy configures gets Accepted=False, InvalidParameters" in finding.message


BACKEND = """\
apiVersion: gateway.envoyproxy.io/v1alpha1
kind: Backend
metadata: {name: api, namespace: apps}
spec:
  endpoints: [{fqdn: {hostname: api.example.com, port: 443}}]
  tls:
    caCertificateRefs: [{group: "", kind: ConfigMap, name: %s}]
---
apiVersion: v1
kind: ConfigMap
metadata: {name: api-ca, namespace: apps}
data: {ca.crt: "-----BEGIN CERTIFICATE-----"}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: empty, namespace: apps}
"""


def test_a_backend_s_ca_bundle_must_hold_a_certificate() -> None:
    # getCaCertsFromCARefs (internal/gatewayapi/backendtlspolicy.go): ca.crt, else tls.crt, else
    # the first entry; "no ca found in configmap" when there is none.
    assert only(lint_text(BACKEND % "api-ca"), "PL417") == []
    (finding,) = only(lint_text(BACKEND % "empty"), "PL417")
    assert (finding.path, finding.line, finding.severity) == ("spec.tls.caCertificateRefs[0]", 7, Severity.ERROR)
    assert "names ConfigMap apps/empty, which" in finding.message
    assert finding.message.endswith(
        "every route backendRef to the Backend gets ResolvedRefs=False, InvalidBackendTLS, and the requests meant for it fail"
    )
