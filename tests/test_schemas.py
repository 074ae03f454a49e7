"""The schema rules' data and decisions: the bundled field schemas are what the vendored upstream
CRDs say (policylint.k8s.schemas), and a CRD in the input takes their place (PL702)."""

from __future__ import annotations

import gzip

from policylint.k8s import schemas
from tests.lintutil import ROOT, lint_text, only

# Gateway API v1.6.1, config/crd/standard/gateway.networking.k8s.io_httproutes.yaml: the fields of
# a backendRef.
BACKEND_REF_FIELDS = ["filters", "group", "kind", "name", "namespace", "port", "weight"]


def test_the_committed_schemas_are_what_the_generator_writes() -> None:
    generated = schemas.render(schemas.generate(ROOT / "tests" / "data" / "crds"))
    assert gzip.decompress(schemas.DATA.read_bytes()) == gzip.decompress(generated), (
        "run `python -m policylint.k8s.schemas tests/data/crds`"
    )


def test_channels_and_versions() -> None:
    standard, experimental = schemas.schemas("standard"), schemas.schemas("experimental")
    route = ("gateway.networking.k8s.io", "HTTPRoute", "v1")
    backend = standard[route][0]["properties"]["spec"]["properties"]["rules"]["items"]["properties"]["backendRefs"]["items"]
    assert sorted(backend["properties"]) == BACKEND_REF_FIELDS
    assert standard[route][1] == "gateway-api v1.6.1"
    # TCPRoute v1alpha2 is served by the experimental channel only; vendor CRDs count as both.
    assert ("gateway.networking.k8s.io", "TCPRoute", "v1alpha2") in experimental
    assert ("gateway.networking.k8s.io", "TCPRoute", "v1alpha2") not in standard
    btp = ("gateway.envoyproxy.io", "BackendTrafficPolicy", "v1alpha1")
    assert btp in standard and btp in experimental and standard[btp][1] == "envoy-gateway v1.9.0"


POLICY = """\
apiVersion: gateway.envoyproxy.io/v1alpha1
kind: BackendTrafficPolicy
metadata: {name: p, namespace: apps, labels: {anything: goes}}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: web, Typo: x}]
  retries: {numRetries: 3}
status: {ancestors: []}
"""


def test_bundled_schemas_give_warnings_that_name_their_release() -> None:
    result = lint_text(POLICY)
    (finding,) = only(result, "PL702")  # not inside targetRefs (PL205's), not metadata or status
    assert finding.path == "spec.retries" and finding.severity.label == "warning"
    assert "(the envoy-gateway v1.9.0 CRD)" in finding.message
    assert "if the cluster runs a newer release than envoy-gateway v1.9.0, lint with its CRDs (--crd)" in finding.message
    assert "PL205" in [f.rule for f in result.findings if f.path.startswith("spec.targetRefs[0]")]


def test_a_crd_in_the_input_decides_and_its_findings_are_errors() -> None:
    crd = """\
---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: backendtrafficpolicies.gateway.envoyproxy.io}
spec:
  group: gateway.envoyproxy.io
  names: {kind: BackendTrafficPolicy, plural: backendtrafficpolicies}
  scope: Namespaced
  versions:
  - name: v1alpha1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              targetRefs: {type: array, items: {type: object, x-kubernetes-preserve-unknown-fields: true}}
              retries: {type: object, properties: {numRetries: {type: integer}}}
              extra: {type: object, x-kubernetes-preserve-unknown-fields: true}
              settings: {type: object, additionalProperties: {type: object, properties: {on: {type: boolean}}}}
"""
    # A newer CRD that has `retries`: no finding there; its own schema decides everywhere else.
    text = POLICY.replace(
        "retries: {numRetries: 3}",
        "retries: {numRetries: 3, backoff: 1}\n  extra: {free: form}\n  settings: {a: {on: true, off: false}}",
    )
    findings = only(lint_text(text + crd), "PL702")
    assert [(f.path, f.severity.label) for f in findings] == [
        ("spec.retries.backoff", "error"),
        ("spec.settings.a.off", "error"),
    ]
    assert "(its CRD in the input)" in findings[0].message


def test_schema_violations_respect_defaults_nulls_templates_and_int_or_string() -> None:
    # Gateway API v1.6.1 HTTPRoute: `path.type` has default PathPrefix, so a path match without it
    # is complete; `value` of a header match is required. A `null` is an unset field; an unquoted
    # template action is PL004's.
    text = """\
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: web, namespace: apps}
spec:
  rules:
  - matches:
    - path: {value: /}
      headers: [{name: x-a}]
    timeouts: {request: null}
    backendRefs: [{name: web, port: 80, weight: {{ .Values.weight }}}]
"""
    findings = only(lint_text(text), "PL703")
    assert [(f.path, f.message.split(" (")[0]) for f in findings] == [
        (
            "spec.rules[0].matches[0].headers[0].value",
            "spec.rules[0].matches[0].headers[0].value is required by the schema and missing",
        ),
    ]
