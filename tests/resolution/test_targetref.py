"""PL2xx targetRef rules and `ProjectIndex.resolve_target`: scenario S18, resolution details, the JSON report, GKE's targets."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from policylint.findings import Severity
from policylint.pipeline import LintResult
from policylint.reporters import json as json_reporter
from policylint.semantics.resolution import TargetResolution
from tests.lintutil import lint_text, only
from tests.manifests import crd, first, gateway, gateway_class, policy, reference_grant, route, service

GATEWAY = (
    gateway_class()
    + gateway()
    + route(name="web", rules="[{name: api, backendRefs: [{name: web, port: 8080}]}]")
    + service(ports="[{name: http, port: 8080}]")
)


def inferred(refs: str, *, field: str = "targetRefs", name: str = "p") -> str:
    """A `*Policy` kind no profile or CRD knows: structural detection (kinds unrestricted, virtual kinds allowed)."""
    return policy("ColorPolicy", refs, api="policies.controller.io/v1", field=field, name=name)


def codes(result: LintResult, prefix: str = "PL") -> list[str]:
    return [f.rule for f in result.findings if f.rule.startswith(prefix) and f.rule[2] in "23"]


def resolutions(result: LintResult) -> list[TargetResolution]:
    resolution = result.project.resolution
    return [resolution.resolve_target(p, r) for p in resolution.policies() for r in p.refs]


def report_targets(result: LintResult) -> list[dict[str, Any]]:
    return [t for p in json_reporter.report(result)["policies"] for t in p["targets"]]


# -- S18: namespaced policy, cluster-scoped target -----------------------------------------

# A namespaced and a cluster-scoped policy kind, each with a single targetRef; the second's has a namespace.
TARGET_REF = """\
            properties:
              targetRef:
                type: object
                properties: {group: {type: string}, kind: {type: string}, name: {type: string}%s}
"""
CRDS = (
    first(crd("TimeoutPolicy", TARGET_REF % ""))
    + crd("ClusterTimeoutPolicy", TARGET_REF % ", namespace: {type: string}", scope="Cluster")
    + gateway_class("foo")
)


def test_s18_namespaced_policy_on_gatewayclass_is_never_silent() -> None:
    text = CRDS + policy(
        "TimeoutPolicy",
        "{group: gateway.networking.k8s.io, kind: GatewayClass, name: foo}",
        api="example.com/v1",
        name="t",
        ns="default",
        field="targetRef",
    )
    result = lint_text(text)
    (finding,) = only(result, "PL204")
    assert finding.severity is Severity.WARNING
    assert str(finding.object) == "TimeoutPolicy default/t" and finding.path == "spec.targetRef.kind"
    assert "must be cluster scoped" in finding.message and "Attaching Policy to GatewayClass" in finding.message
    # The cluster-scoped target itself is found by name: the namespace is irrelevant.
    (target,) = report_targets(result)
    assert (target["accepted"], target["detail"], target["ref"]["namespace"]) == ("Accepted", "Resolved", None)


def test_s18_cluster_scoped_policy_on_namespaced_route_without_namespace_is_an_error() -> None:
    text = (
        CRDS
        + GATEWAY
        + policy(
            "ClusterTimeoutPolicy",
            "{group: gateway.networking.k8s.io, kind: HTTPRoute, name: web}",
            api="example.com/v1",
            name="c",
            ns=None,
            field="targetRef",
        )
    )
    result = lint_text(text)
    (finding,) = only(result, "PL204")
    assert finding.severity is Severity.ERROR
    assert str(finding.object) == "ClusterTimeoutPolicy c"
    assert finding.message.startswith(
        "cluster-scoped ClusterTimeoutPolicy c targets namespaced HTTPRoute 'web' without a namespace"
    )
    assert only(result, "PL201") == []  # one finding for one cause
    (target,) = report_targets(result)
    assert (target["accepted"], target["detail"]) == ("TargetNotFound", "NamespaceRequired")


def test_cluster_scoped_policy_with_a_namespace_resolves() -> None:
    text = (
        CRDS
        + GATEWAY
        + policy(
            "ClusterTimeoutPolicy",
            "{group: gateway.networking.k8s.io, kind: HTTPRoute, name: web, namespace: app}",
            api="example.com/v1",
            name="c",
            ns=None,
            field="targetRef",
        )
    )
    result = lint_text(text)
    assert codes(result) == []
    (target,) = report_targets(result)
    assert (target["accepted"], target["detail"], target["ref"]["namespace"]) == ("Accepted", "Resolved", "app")


def test_documented_cluster_target_of_a_namespaced_kind_is_info() -> None:
    # Envoy Gateway's EnvoyPatchPolicy documents GatewayClass targets (mergeGateways).
    text = GATEWAY + policy(
        "EnvoyPatchPolicy", "{group: gateway.networking.k8s.io, kind: GatewayClass, name: eg}", field="targetRef"
    )
    (finding,) = only(lint_text(text), "PL204")
    assert finding.severity is Severity.INFO
    assert "documents GatewayClass as a target" in finding.message


# -- resolution details ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("doc", "status", "detail", "rules"),
    [
        (
            policy("ClientTrafficPolicy", "[{group: gateway.networking.k8s.io, kind: Gateway, name: gw}]"),
            "Accepted",
            "Resolved",
            [],
        ),
        (policy("ClientTrafficPolicy", "[{kind: Gateway, name: gw}]"), "Invalid", "InvalidRef", ["PL203"]),
        (
            policy("ClientTrafficPolicy", "[{group: gateway.networking.k8s.io/v1, kind: Gateway, name: gw}]"),
            "Invalid",
            "InvalidRef",
            ["PL203"],
        ),
        (
            policy("ClientTrafficPolicy", "[{group: gateway.networking.k8s.io, kind: Gateway}]"),
            "Invalid",
            "InvalidRef",
            ["PL205"],
        ),
        (
            policy("ClientTrafficPolicy", "[{group: gateway.networking.k8s.io, kind: HTTPRoute, name: web}]"),
            "Invalid",
            "KindNotAllowed",
            ["PL202"],
        ),
        (
            policy("ClientTrafficPolicy", "[{group: gateway.networking.k8s.io, kind: Gateway, name: nope}]"),
            "TargetNotFound",
            "ObjectNotFound",
            ["PL201"],
        ),
        (
            inferred("{group: networking.acme.io, kind: ExternalService, name: foo.com}", field="targetRef"),
            "Accepted",
            "VirtualKind",
            ["PL206"],
        ),
        # A kind missing from a group the API server knows is a typo, not a virtual kind.
        (
            inferred("[{group: gateway.networking.k8s.io, kind: HTTPRoutes, name: web}]"),
            "TargetNotFound",
            "ObjectNotFound",
            ["PL201"],
        ),
        (
            policy("ClientTrafficPolicy", "[{group: gateway.networking.k8s.io, kind: Gateway, name: gw, sectionName: ftp}]"),
            "TargetNotFound",
            "SectionNotFound",
            ["PL301"],
        ),
    ],
)
def test_resolution_detail_and_the_one_rule_that_reports_it(doc: str, status: str, detail: str, rules: list[str]) -> None:
    result = lint_text(GATEWAY + doc)
    (res,) = resolutions(result)
    assert (res.status.label, res.detail.label) == (status, detail)
    assert codes(result) == rules
    (target,) = report_targets(result)
    assert (target["accepted"], target["detail"]) == (status, detail)


def test_namespace_on_a_local_reference_is_ignored_for_resolution() -> None:
    # LocalPolicyTargetReference has no namespace: pruned by the API server, so the policy's namespace decides.
    text = GATEWAY + policy(
        "ClientTrafficPolicy", "[{group: gateway.networking.k8s.io, kind: Gateway, name: gw, namespace: other}]"
    )
    result = lint_text(text)
    # Another namespace than the policy's is PL401's (one finding per cause); PL205 keeps the same-namespace case.
    assert [(f.rule, f.path) for f in result.findings if f.rule.startswith("PL2")] == []
    assert [(f.rule, f.path) for f in result.findings if f.rule == "PL401"] == [("PL401", "spec.targetRefs[0].namespace")]
    (target,) = report_targets(result)
    assert (target["accepted"], target["ref"]["namespace"]) == ("Accepted", "app")


# -- PL201 hints -------------------------------------------------------------------------


def test_pl201_hint_for_the_right_name_in_another_group() -> None:
    result = lint_text(GATEWAY + inferred('[{group: "", kind: Gateway, name: gw}]'))
    (finding,) = only(result, "PL201")
    assert finding.message == (
        "Gateway 'gw' not found in namespace app; did you mean gateway.networking.k8s.io/Gateway 'gw'"
        " (group: gateway.networking.k8s.io, kind: Gateway)?"
    )
    assert [r.message for r in finding.related] == ["did you mean this Gateway?"]


def test_pl201_hint_for_another_namespace_with_a_namespace_capable_profile(tmp_path: Path) -> None:
    profile = tmp_path / "acme.yaml"
    profile.write_text(
        """\
project: acme
policies:
  - group: acme.example.com
    kind: MirrorPolicy
    versions: [v1]
    class: Direct
    boilerplate: gep713
    targets:
      list: targetRefs
      namespace: true
      sectionName: false
      kinds: [{group: gateway.networking.k8s.io, kind: HTTPRoute}]
    merge: {default: none}
    effectiveTarget: route
"""
    )
    text = GATEWAY + policy(
        "MirrorPolicy", "[{group: gateway.networking.k8s.io, kind: HTTPRoute, name: web}]", api="acme.example.com/v1", ns="team"
    )
    (finding,) = only(lint_text(text, profile_paths=[str(profile)]), "PL201")
    assert (
        finding.message
        == "HTTPRoute 'web' not found in namespace team; HTTPRoute app/web exists: set namespace: app in the targetRef"
    )
    # With the namespace set, it resolves across namespaces.
    fixed = text.replace("name: web}]", "name: web, namespace: app}]")
    assert codes(lint_text(fixed, profile_paths=[str(profile)])) == []


def test_pl201_name_that_no_object_can_have() -> None:
    text = GATEWAY + policy("ClientTrafficPolicy", "[{group: gateway.networking.k8s.io, kind: Gateway, name: Edge_GW}]")
    (finding,) = only(lint_text(text), "PL201")
    assert "'Edge_GW' is not a valid object name" in finding.message


def test_pl201_without_near_match_mentions_objects_outside_the_repository() -> None:
    text = GATEWAY + policy("ClientTrafficPolicy", "[{group: gateway.networking.k8s.io, kind: Gateway, name: edge}]")
    (finding,) = only(lint_text(text), "PL201")
    # The input holds a Gateway in namespace app: it manages Gateways there, so a missing one is an error.
    assert finding.severity is Severity.ERROR
    assert finding.message == "Gateway 'edge' not found in namespace app"
    assert finding.hint == (
        "If it is defined outside this repository, declare it with --external Gateway/app/edge, or lint with the"
        " repository that holds it (--context PATH)."
    )


def test_pl201_on_a_kind_the_input_holds_none_of_in_the_namespace_is_unprovable() -> None:
    # A policy alone in its namespace (Kuadrant's config/samples): the target route lives elsewhere.
    text = GATEWAY + policy("ClientTrafficPolicy", "[{group: gateway.networking.k8s.io, kind: Gateway, name: edge}]", ns="team")
    (finding,) = only(lint_text(text), "PL201")
    assert (finding.severity, finding.path) == (Severity.WARNING, "spec.targetRefs[0].name")
    assert finding.message == (
        "targetRef names Gateway team/edge, which is not in the input, and the input holds no Gateway in namespace team,"
        " so the repository does not look like it manages them: if it does not exist, the policy does not apply to it"
        " (TargetNotFound)"
    )
    assert finding.hint == (
        "To make it provable: declare it with --external Gateway/team/edge, lint with the repository that holds it"
        " (--context PATH), or pass --complete if the input is the whole cluster."
    )
    # --complete: the input is the cluster, and the Gateway is not in it.
    (error,) = only(lint_text(text, complete=True), "PL201")
    assert (error.severity, error.message, error.line) == (
        Severity.ERROR,
        "Gateway 'edge' not found in namespace team",
        finding.line,
    )


def test_pl201_with_a_near_miss_stays_an_error_where_the_kind_is_unmanaged() -> None:
    # Gateway app/gw exists: the policy in namespace team most likely meant it (a namespace slip).
    text = GATEWAY + policy("ClientTrafficPolicy", "[{group: gateway.networking.k8s.io, kind: Gateway, name: gw}]", ns="team")
    (finding,) = only(lint_text(text), "PL201")
    assert finding.severity is Severity.ERROR
    assert finding.hint is not None and "--external Gateway/team/gw" in finding.hint and "--context PATH" in finding.hint


def test_pl201_target_stays_unresolved_whatever_its_severity() -> None:
    # Only severity and words change: the simulation still gives the policy no target.
    text = GATEWAY + policy("ClientTrafficPolicy", "[{group: gateway.networking.k8s.io, kind: Gateway, name: edge}]", ns="team")
    result = lint_text(text)
    (pol,) = result.project.resolution.policies()
    (res,) = [result.project.resolution.resolve_target(pol, ref) for ref in pol.refs]
    assert res.detail.label == "ObjectNotFound" and res.target is None


# -- PL202 / PL203 / PL205 messages ------------------------------------------------------


def test_pl202_error_when_enforced_warning_when_documented_only() -> None:
    text = (
        GATEWAY
        + policy("ClientTrafficPolicy", "[{group: gateway.networking.k8s.io, kind: gateway, name: gw}]", name="ctp")
        + policy(
            "BackendTLSPolicy",
            "[{group: gateway.networking.k8s.io, kind: HTTPRoute, name: web}]",
            api="gateway.networking.k8s.io/v1",
            name="btls",
        )
    )
    enforced, documented = only(lint_text(text), "PL202")
    assert enforced.severity is Severity.ERROR
    assert enforced.message.endswith("did you mean kind: Gateway?")
    assert documented.severity is Severity.WARNING
    assert documented.message.startswith("BackendTLSPolicy documents core/Service as targets")


def test_pl202_wrong_group_is_reported_on_group() -> None:
    text = GATEWAY + policy("ClientTrafficPolicy", '[{group: "", kind: Gateway, name: gw}]')
    (finding,) = only(lint_text(text), "PL202")
    assert finding.path == "spec.targetRefs[0].group"
    assert finding.message.endswith("use group: gateway.networking.k8s.io")


@pytest.mark.parametrize(
    ("ref", "path", "suggestion"),
    [
        ("{kind: Service, name: web}", "spec.targetRefs[0]", 'add group: "" for Service'),
        ("{group: null, kind: Service, name: web}", "spec.targetRefs[0].group", 'add group: "" for Service'),
        ("{group: v1/Core, kind: Service, name: web}", "spec.targetRefs[0].group", "is not a valid API group"),
        (
            "{group: Gateway.Networking.K8s.io, kind: Gateway, name: gw}",
            "spec.targetRefs[0].group",
            "use group: gateway.networking.k8s.io",
        ),
    ],
)
def test_pl203_suggests_the_fix(ref: str, path: str, suggestion: str) -> None:
    text = GATEWAY + policy("BackendTLSPolicy", f"[{ref}]", api="gateway.networking.k8s.io/v1")
    (finding,) = only(lint_text(text), "PL203")
    assert finding.path == path
    assert suggestion in finding.message


def test_pl205_shape_and_unknown_field() -> None:
    text = (
        GATEWAY
        + policy("ClientTrafficPolicy", "{group: gateway.networking.k8s.io, kind: Gateway, name: gw}", name="a")
        + policy(
            "ClientTrafficPolicy", "[{group: gateway.networking.k8s.io, kind: Gateway, name: gw, sectionname: http}]", name="b"
        )
    )
    shape, unknown = only(lint_text(text), "PL205")
    assert shape.path == "spec.targetRefs" and shape.message.startswith("targetRefs must be a list, not a mapping")
    assert unknown.path == "spec.targetRefs[0].sectionname" and "(did you mean sectionName?)" in unknown.message


def test_pl205_long_values() -> None:
    long_name = "a" * 254
    text = GATEWAY + policy("ClientTrafficPolicy", f"[{{group: gateway.networking.k8s.io, kind: Gateway, name: {long_name}}}]")
    (finding,) = only(lint_text(text), "PL205")
    assert finding.message.startswith("name is 254 characters long; at most 253 are allowed")


def test_core_group_alias_only_where_the_profile_lists_it() -> None:
    # NGINX Gateway Fabric's UpstreamSettingsPolicy lists {group: core, kind: Service}: an alias of "".
    usp = policy("UpstreamSettingsPolicy", "[{group: core, kind: Service, name: web}]", api="gateway.nginx.org/v1alpha1")
    result = lint_text(GATEWAY + usp)
    assert codes(result) == []
    (target,) = report_targets(result)
    assert (target["accepted"], target["detail"]) == ("Accepted", "Resolved")
    # BackendTLSPolicy does not: `core` is just another (wrong) group there.
    btls = policy("BackendTLSPolicy", "[{group: core, kind: Service, name: web}]", api="gateway.networking.k8s.io/v1")
    (finding,) = only(lint_text(GATEWAY + btls), "PL202")
    assert finding.path == "spec.targetRefs[0].group" and finding.message.endswith('use group: ""')


# Envoy Gateway translator test data backend-tls-settings.in.yaml (envoyproxy/gateway,
# internal/gatewayapi/testdata): BackendTLSPolicies on EG's own Backend kind, one of them on a port
# by sectionName; EG accepts every one.
EG_BACKEND_TLS = """\
apiVersion: gateway.envoyproxy.io/v1alpha1
kind: Backend
metadata: {name: backend-4, namespace: default}
spec:
  endpoints:
  - ip: {address: 1.1.1.1, port: 3001}
  - ip: {address: 2.2.2.2, port: 3002}
---
apiVersion: gateway.networking.k8s.io/v1
kind: BackendTLSPolicy
metadata: {name: policy-btls-for-backend-4, namespace: default}
spec:
  targetRefs:
  - {group: gateway.envoyproxy.io, kind: Backend, name: backend-4, sectionName: "3001"}
  validation: {wellKnownCACertificates: System, hostname: example.com}
---
apiVersion: gateway.networking.k8s.io/v1
kind: BackendTLSPolicy
metadata: {name: policy-btls-for-backend-4b, namespace: default}
spec:
  targetRefs:
  - {group: gateway.envoyproxy.io, kind: Backend, name: backend-4, sectionName: "3002"}
  validation: {wellKnownCACertificates: System, hostname: example.com}
"""


def test_backend_tls_policy_on_a_kind_an_implementation_documents_is_not_pl202() -> None:
    # Before: PL202 warning "documents core/Service as targets, not gateway.envoyproxy.io/Backend".
    # After: none (profile data: the BackendTLSPolicy profile's implementationKinds).
    result = lint_text(EG_BACKEND_TLS)
    assert only(result, "PL202") == []
    # A kind no implementation documents is still reported.
    other = EG_BACKEND_TLS.replace("kind: Backend, name: backend-4", "kind: Widget, name: backend-4")
    assert len(only(lint_text(other), "PL202")) == 2


def test_policies_on_different_sections_of_an_unmodelled_kind_do_not_conflict() -> None:
    # Before: the sections of an unknown kind were dropped, both policies landed on the whole
    # Backend and one was Conflicted (PL601). After: two targets, both accepted.
    result = lint_text(EG_BACKEND_TLS)
    assert only(result, "PL601") == []
    targets = report_targets(result)
    assert [t["accepted"] for t in targets] == ["Accepted", "Accepted"]


# istio/istio pilot/pkg/config/kube/gateway/testdata/backend-tls-policy.yaml: BackendTLSPolicies on
# a ServiceEntry, whole and by port (sectionName); its .status.yaml.golden: Accepted for the whole
# ServiceEntry and for port `https`, TargetNotFound for "non-existing-port-name" ("sectionName
# \"non-existing-port-name\" does not exist in ServiceEntry default/external-service").
ISTIO_SERVICE_ENTRY_TLS = """\
apiVersion: networking.istio.io/v1
kind: ServiceEntry
metadata: {name: external-service, namespace: default}
spec:
  hosts: [external.example.com]
  ports:
  - {number: 80, name: http, protocol: HTTP}
  - {number: 443, name: https, protocol: HTTPS}
  resolution: DNS
---
apiVersion: gateway.networking.k8s.io/v1
kind: BackendTLSPolicy
metadata: {name: tls-external-service-https, namespace: default}
spec:
  targetRefs:
  - {kind: ServiceEntry, name: external-service, group: networking.istio.io, sectionName: https}
  - {kind: ServiceEntry, name: external-service, group: networking.istio.io, sectionName: non-existing-port-name}
  validation: {wellKnownCACertificates: System, hostname: external.example.com}
"""


def test_backend_tls_policy_on_an_istio_service_entry() -> None:
    # Before: PL202 on both targets (a kind BackendTLSPolicy does not document) and no check of
    # the port names. After: no PL202; the missing port is PL301, as Istio reports TargetNotFound.
    result = lint_text(ISTIO_SERVICE_ENTRY_TLS)
    assert only(result, "PL202") == []
    (missing,) = only(result, "PL301")
    assert missing.path == "spec.targetRefs[1].sectionName"
    assert [t["accepted"] for t in report_targets(result)] == ["Accepted", "TargetNotFound"]


# envoyproxy/gateway internal/gatewayapi/testdata/backendtlspolicy-serviceimport-target.in.yaml: a
# BackendTLSPolicy on a multicluster ServiceImport, by port; its .out.yaml: ResolvedRefs and
# Accepted (backendTLSTargetMatched in internal/gatewayapi/backendtlspolicy.go matches a route's
# backendRef by group, kind and name).
EG_SERVICE_IMPORT_TLS = """\
apiVersion: multicluster.x-k8s.io/v1alpha1
kind: ServiceImport
metadata: {name: service-import-1, namespace: default}
spec: {ips: ["7.7.7.7"], ports: [{port: 8080, name: http, protocol: TCP}]}
---
apiVersion: gateway.networking.k8s.io/v1
kind: BackendTLSPolicy
metadata: {name: policy-btls, namespace: default}
spec:
  targetRefs: [{group: multicluster.x-k8s.io, kind: ServiceImport, name: service-import-1, sectionName: http}]
  validation: {wellKnownCACertificates: System, hostname: example.com}
"""


def test_backend_tls_policy_on_a_service_import() -> None:
    # Before: PL202, a kind BackendTLSPolicy does not document. After: none; accepted.
    result = lint_text(EG_SERVICE_IMPORT_TLS)
    assert only(result, "PL202") == [] and only(result, "PL301") == []
    assert [t["accepted"] for t in report_targets(result)] == ["Accepted"]


# envoyproxy/gateway test/e2e/testdata/backend-tls-clustertrustbundle.yaml (test
# BackendClusterTrustBundleTest expects traffic through it; translator test
# backendtlspolicy-ca-clustertrustbundle: Accepted): the CA is a ClusterTrustBundle named with
# `group: ""`, which Envoy Gateway resolves by kind (internal/gatewayapi/backendtlspolicy.go).
CTB_BY_KIND = """\
apiVersion: certificates.k8s.io/v1beta1
kind: ClusterTrustBundle
metadata: {name: backend-tls-ca}
spec: {trustBundle: ca}
---
apiVersion: v1
kind: Service
metadata: {name: web, namespace: default}
spec: {ports: [{name: https, port: 443}]}
---
apiVersion: gateway.networking.k8s.io/v1
kind: BackendTLSPolicy
metadata: {name: btls, namespace: default}
spec:
  targetRefs: [{group: "", kind: Service, name: web}]
  validation:
    caCertificateRefs: [{group: "", kind: ClusterTrustBundle, name: %(name)s}]
    hostname: example.com
"""


def test_a_cluster_trust_bundle_named_without_its_group_is_resolved_by_kind() -> None:
    # Before: PL417, "a kind its policy kind does not support", and Invalid. After: Accepted.
    result = lint_text(CTB_BY_KIND % {"name": "backend-tls-ca"}, complete=True)
    assert only(result, "PL417") == []
    assert [t["accepted"] for t in report_targets(result)] == ["Accepted"]
    # By kind, but still checked: one that does not exist is not found (--complete).
    missing = lint_text(CTB_BY_KIND % {"name": "other-ca"}, complete=True)
    (finding,) = only(missing, "PL417")
    assert "names ClusterTrustBundle other-ca, which is not in the input" in finding.message


# -- GKE (docs/semantics.md#gke) -------------------------------------------------------------

GKE = "networking.gke.io/v1"
GKE_BACKEND = "  default: {timeoutSec: 40}\n"


def gke_backend_policy(ref: str, *, name: str = "p", ns: str = "app") -> str:
    return policy("GCPBackendPolicy", ref, api=GKE, field="targetRef", name=name, ns=ns, spec=GKE_BACKEND)


def test_a_gke_policy_on_another_namespace_is_refused_whatever_the_grants() -> None:
    # "HealthCheckPolicy and GCPBackendPolicy resources must exist in the same namespace as the
    # target Service or ServiceImport resource" (GKE, "Configure Gateway resources using
    # Policies"). The reference type has a namespace field, so the reference is not pruned; a
    # ReferenceGrant from GCPBackendPolicy does not change the controller's rule. With the
    # profile derived from the CRD alone (the rule is not in the CRD), a ReferenceGrant made it
    # Accepted, and without one PL401 advised to add one.
    grant = reference_grant(
        "shop", "[{group: networking.gke.io, kind: GCPBackendPolicy, namespace: app}]", "[{group: '', kind: Service}]"
    )
    result = lint_text(service(ns="shop") + gke_backend_policy("{group: '', kind: Service, name: web, namespace: shop}") + grant)
    [finding] = only(result, "PL401")
    assert finding.path == "spec.targetRef.namespace"
    assert (finding.line, finding.column) == (11, 52)  # `namespace: shop` in the policy's targetRef
    assert "only to a target in the policy's own namespace" in finding.message
    assert "ReferenceGrant" in finding.message and finding.fix is None
    assert finding.hint == "Create the policy in namespace shop, or remove namespace: shop from the reference."
    [res] = resolutions(result)
    assert (res.status.value, res.detail.value) == ("Invalid", "RefNotPermitted")
    # The same reference within the policy's own namespace attaches.
    ok = lint_text(service(ns="app") + gke_backend_policy("{group: '', kind: Service, name: web, namespace: app}"))
    assert codes(ok) == [] and only(ok, "PL401") == []
    assert [r.detail.value for r in resolutions(ok)] == ["Resolved"]


def test_a_missing_target_in_another_namespace_of_a_gke_policy_is_not_told_to_set_the_namespace() -> None:
    # The Service exists in namespace shop: with a namespaced reference type the hint would be
    # "set namespace: shop in the targetRef", which GKE refuses; it says to move the policy.
    result = lint_text(service(ns="shop") + gke_backend_policy("{group: '', kind: Service, name: web}"))
    [finding] = only(result, "PL201")
    assert "move the policy to namespace shop" in finding.message
    assert "set namespace" not in finding.message


def service_export(name: str, ns: str = "app") -> str:
    return f"---\napiVersion: net.gke.io/v1\nkind: ServiceExport\nmetadata: {{name: {name}, namespace: {ns}}}\n"


def test_a_gke_service_import_target_exists_when_its_service_export_does() -> None:
    # GKE multi-cluster Services create a ServiceImport for each ServiceExport of the same name
    # and namespace; repositories keep the ServiceExport. With the profile derived from the CRD
    # alone: PL206 (info), a virtual kind.
    ref = "{group: net.gke.io, kind: ServiceImport, name: store}"
    result = lint_text(service_export("store") + gke_backend_policy(ref))
    assert codes(result) == []
    [res] = resolutions(result)
    assert (res.status.value, res.detail.value) == ("Accepted", "Implied")
    assert res.message == "created in the cluster by GKE multi-cluster Services from ServiceExport app/store"
    # Without the ServiceExport (or with one of another name) the ServiceImport does not exist.
    missing = lint_text(service_export("other") + gke_backend_policy(ref))
    [finding] = only(missing, "PL201")
    assert finding.path == "spec.targetRef.name"  # the field at fault
    assert finding.message.startswith(
        "ServiceImport 'store' not found in namespace app: GKE multi-cluster Services create one for a ServiceExport"
        " of the same name and namespace, and there is none in the input either"
    )


def test_two_gke_backend_policies_on_one_service_conflict_and_the_oldest_applies() -> None:
    # "If two GCPBackendPolicy policies are created that target the same Service or
    # ServiceImport, the oldest policy takes precedence and the second one fails to be
    # attached": Direct, one per target. Without timestamps the first in name order is the
    # older (docs/semantics.md#missing-creation-timestamps).
    ref = "{group: '', kind: Service, name: web}"
    result = lint_text(service() + gke_backend_policy(ref, name="a") + gke_backend_policy(ref, name="b"))
    [finding] = only(result, "PL601")
    assert str(finding.object) == "GCPBackendPolicy app/b"


# -- Istio (docs/semantics.md#istio) -----------------------------------------------------------

WAYPOINT_CLASS = """\
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: istio-waypoint}
spec: {controllerName: istio.io/mesh-controller}
"""
WAYPOINT = """\
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: waypoint, namespace: app}
spec:
  gatewayClassName: istio-waypoint
  listeners: [{name: mesh, port: 15008, protocol: HBONE}]
"""
WEB = """\
---
apiVersion: v1
kind: Service
metadata: {name: web, namespace: app}
spec: {ports: [{name: http, port: 80}]}
"""
ISTIO_WAYPOINT = WAYPOINT_CLASS + WAYPOINT + WEB


def istio_policy(name: str, spec: str, kind: str = "AuthorizationPolicy", api: str = "security.istio.io/v1") -> str:
    return f"---\napiVersion: {api}\nkind: {kind}\nmetadata: {{name: {name}, namespace: app}}\nspec:\n{spec}"


ISTIO_CLASS_POLICY = """\
apiVersion: security.istio.io/v1
kind: AuthorizationPolicy
metadata: {name: waypoints-deny, namespace: %s}
spec:
  targetRefs: [{kind: GatewayClass, group: gateway.networking.k8s.io, name: istio-waypoint}]
  action: DENY
  rules: [{to: [{operation: {methods: [DELETE]}}]}]
"""


def test_istio_gateway_classes_exist_where_istio_objects_do() -> None:
    # istiod creates its GatewayClasses itself (pilot/pkg/config/kube/gatewaycommon), and a policy
    # on every waypoint targets the class istio-waypoint from the root namespace (Istio's
    # "default-deny-waypoint" example). An Istio object in the input shows Istio runs. Before:
    # PL201 (no such GatewayClass), PL204 (a namespaced policy on a cluster-scoped class) and
    # PL405 on the Gateway.
    result = lint_text(ISTIO_CLASS_POLICY % "istio-system" + WAYPOINT)
    assert result.findings == []
    [res] = resolutions(result)
    assert (res.status.value, res.detail.value) == ("Accepted", "Implied")
    assert (
        res.message == "a class its implementation serves without a GatewayClass object in the input (istio.io/mesh-controller)"
    )
    # From another namespace Istio ignores a policy on a GatewayClass.
    [finding] = lint_text(ISTIO_CLASS_POLICY % "app" + WAYPOINT).findings
    assert (finding.rule, finding.severity, finding.path) == ("PL204", Severity.WARNING, "spec.targetRefs[0].kind")
    assert "honours a policy on a cluster-scoped target only from namespace istio-system" in finding.message
    # Without any Istio object, the class of the Gateway is unknown (PL405), as before.
    assert [f.rule for f in lint_text(WAYPOINT).findings] == ["PL405"]


def test_an_istio_service_target_takes_effect_only_through_a_waypoint() -> None:
    # Istio enforces a policy on a Service (or ServiceEntry) only in the waypoint that serves it:
    # the Service's istio.io/use-waypoint label, or else its Namespace's, names it, `none` opts
    # out; otherwise it writes WaypointAccepted=False, AncestorNotBound and enforces nothing
    # (pilot/pkg/serviceregistry/ambient/policies.go, waypoints.go). Before: no finding, and the
    # simulation counted the policy as enforced.
    def case(namespace_labels: str, service_labels: str) -> str:
        namespace = f"---\napiVersion: v1\nkind: Namespace\nmetadata: {{name: app, labels: {namespace_labels}}}\n"
        service = (
            "---\napiVersion: v1\nkind: Service\n"
            f"metadata: {{name: web, namespace: app, labels: {service_labels}}}\nspec: {{ports: [{{port: 80}}]}}\n"
        )
        policy = istio_policy("deny", "  targetRefs: [{kind: Service, group: '', name: web}]\n  action: DENY\n  rules: [{}]\n")
        return namespace + service + policy

    unbound = lint_text(case("{}", "{}"))
    [finding] = only(unbound, "PL413")
    assert (finding.path, finding.severity) == ("spec.targetRefs[0]", Severity.WARNING)
    assert finding.message == (
        "AuthorizationPolicy app/deny targets Service app/web, which is not bound to a waypoint: neither it nor its"
        " Namespace carries the label istio.io/use-waypoint; the policy takes effect on a Service's traffic only"
        " through a waypoint, so it has none"
    )
    [res] = resolutions(unbound)
    assert (res.status.value, res.detail.value) == ("Invalid", "NotBound")
    opted_out = only(lint_text(case("{istio.io/use-waypoint: waypoint}", "{istio.io/use-waypoint: none}")), "PL413")
    assert [f.message.split("; ")[0].split(", which is ")[1] for f in opted_out] == [
        "not bound to a waypoint: it opts out (istio.io/use-waypoint: none)"
    ]
    for namespace_labels, service_labels in (("{istio.io/use-waypoint: waypoint}", "{}"), ("{}", "{istio.io/use-waypoint: w}")):
        bound = lint_text(case(namespace_labels, service_labels))
        assert only(bound, "PL413") == [] and [r.detail.value for r in resolutions(bound)] == ["Resolved"]
    # A Namespace not in the input may carry the label: nothing is said.
    no_namespace = case("{}", "{}").split("---\n", 2)[2]
    assert [r.detail.value for r in resolutions(lint_text("---\n" + no_namespace))] == ["Resolved"]


def test_istio_policies_on_one_target_all_apply() -> None:
    # An ALLOW and a DENY AuthorizationPolicy, a RequestAuthentication and a WasmPlugin on one
    # waypoint: Istio applies every one (docs/semantics.md#istio). Structural detection alone
    # took AuthorizationPolicy for a Direct kind with strategy None and rejected the second.
    on_waypoint = "  targetRefs: [{kind: Gateway, group: gateway.networking.k8s.io, name: waypoint}]\n"
    text = (
        ISTIO_WAYPOINT
        + istio_policy("allow-get", on_waypoint + "  action: ALLOW\n  rules: [{to: [{operation: {methods: [GET]}}]}]\n")
        + istio_policy("deny-admin", on_waypoint + "  action: DENY\n  rules: [{to: [{operation: {paths: [/admin]}}]}]\n")
        + istio_policy("jwt", on_waypoint + "  jwtRules: [{issuer: https://idp.example.com}]\n", kind="RequestAuthentication")
        + istio_policy(
            "plugin",
            on_waypoint + "  url: oci://registry.example.com/p:1\n",
            kind="WasmPlugin",
            api="extensions.istio.io/v1alpha1",
        )
    )
    result = lint_text(text)
    assert [f.rule for f in result.findings] == []
    assert [(r.ref.name, r.detail.value) for r in resolutions(result)] == [("waypoint", "Resolved")] * 4
    assert {p.profile.project for p in result.project.resolution.policies()} == {"istio"}


def test_an_istio_policy_without_target_references_attaches_to_nothing() -> None:
    # A workload selector, or nothing (the namespace, or the mesh in the root namespace):
    # Istio's other two ways of choosing workloads, not policy attachment, and not an error.
    # An AuthorizationPolicy without spec is Istio's "allow-nothing" policy too (its CRD does not
    # require spec): not PL105's "configures nothing". Before: PL105, advising to add a targetRef.
    text = (
        ISTIO_WAYPOINT
        + istio_policy("sidecar", "  selector: {matchLabels: {app: web}}\n  action: ALLOW\n  rules: [{}]\n")
        + istio_policy("allow-nothing", "  {}\n")
        + "---\napiVersion: security.istio.io/v1\nkind: AuthorizationPolicy\nmetadata: {name: deny-all, namespace: app}\n"
    )
    result = lint_text(text)
    assert [f.rule for f in result.findings] == []
    assert [p.refs for p in result.project.resolution.policies()] == [(), (), ()]


def test_an_istio_target_in_another_namespace_is_the_crds_refusal() -> None:
    # The reference type has `namespace`, and a CEL rule on it refuses any value ("cross
    # namespace referencing is not currently supported"): one finding, PL704 with the CRD's
    # message, not PL401 as well (docs/semantics.md#one-finding-per-cause).
    ref = "  targetRefs: [{kind: Service, group: '', name: web, namespace: shop}]\n"
    result = lint_text(ISTIO_WAYPOINT + istio_policy("xns", ref + "  action: DENY\n  rules: [{}]\n"))
    assert [(f.rule, f.path, f.line) for f in result.findings] == [("PL704", "spec.targetRefs[0].namespace", 22)]
    assert "cross namespace referencing is not currently supported" in result.findings[0].message
    [res] = resolutions(result)
    assert (res.status.value, res.detail.value) == ("Invalid", "RefNotPermitted")


def test_istio_target_kinds_are_the_webhooks() -> None:
    # istiod's validating webhook takes a Service (group "" or "core"), a ServiceEntry, a Gateway or
    # a GatewayClass (validatePolicyTargetReference) and refuses the object otherwise; the CRD
    # takes any kind. Before: a PL202 warning, "the API server accepts it".
    route = "  targetRefs: [{kind: HTTPRoute, group: gateway.networking.k8s.io, name: web}]\n"
    core = "  targetRefs: [{kind: Service, group: core, name: web}]\n"
    result = lint_text(ISTIO_WAYPOINT + istio_policy("on-route", route) + istio_policy("on-core", core))
    [finding] = only(result, "PL202")
    assert str(finding.object) == "AuthorizationPolicy app/on-route" and finding.severity is Severity.ERROR
    assert finding.message.startswith(
        "AuthorizationPolicy cannot target gateway.networking.k8s.io/HTTPRoute: istiod's validating webhook rejects"
        " the object when it is created; allowed: gateway.networking.k8s.io/Gateway,"
    )
    assert "core/Service, networking.istio.io/ServiceEntry" in finding.message  # "" and core read alike, once
    assert [r.detail.value for r in resolutions(result)] == ["Resolved", "ObjectNotFound"]  # on-core, on-route


def test_a_slip_repeated_among_the_same_names_is_matched_once(monkeypatch: pytest.MonkeyPatch) -> None:
    # The same application in two namespaces, each with a policy on the misspelt route `webb`:
    # both get the near match, which is worked out once per missing name and set of names it is
    # compared with. On the messy benchmark corpora two questions in three repeated one asked
    # before (docs/performance.md).
    from policylint.rules import targetref

    asked: list[str] = []
    closest = targetref.did_you_mean

    def counted(word: str, candidates: Any, **kwargs: Any) -> list[str]:
        asked.append(word)
        return closest(word, candidates, **kwargs)

    monkeypatch.setattr(targetref, "did_you_mean", counted)
    refs = "[{group: gateway.networking.k8s.io, kind: HTTPRoute, name: webb}]"
    text = "".join(
        route(name="web", ns=ns) + route(name="api", ns=ns) + policy("BackendTrafficPolicy", refs, name="p", ns=ns)
        for ns in ("app", "shop")
    )
    found = only(lint_text(gateway_class() + gateway() + text), "PL201")
    assert [(f.object.namespace, f.path) for f in found] == [
        ("app", "spec.targetRefs[0].name"),
        ("shop", "spec.targetRefs[0].name"),
    ]
    assert all("did you mean HTTPRoute 'web'?" in f.message for f in found)
    assert asked == ["webb"]


def test_a_policys_targets_are_made_once_for_every_stage_that_asks() -> None:
    # The topology, the simulation, the rules and the report each ask for every policy's targets:
    # the list is made once, each reference resolved once, and every later asker gets that list.
    from policylint.semantics.resolution import Resolution

    text = (
        first(gateway_class())
        + gateway()
        + route()
        + service()
        + policy(
            "BackendTrafficPolicy",
            "[{group: gateway.networking.k8s.io, kind: HTTPRoute, name: r}, {group: gateway.networking.k8s.io, kind: Gateway, name: gw}]",
        )
    )
    project = lint_text(text).project
    fresh = Resolution(project.index, project.resolution.profiles)
    asked: list[str] = []
    resolve = fresh.resolve_target

    def counted(policy: Any, ref: Any) -> TargetResolution:
        asked.append(ref.path)
        return resolve(policy, ref)

    fresh.resolve_target = counted  # type: ignore[method-assign]
    (found,) = fresh.policies()
    first_answer = fresh.targets(found)
    route_obj = project.index.lookup("gateway.networking.k8s.io", "HTTPRoute", "app", "r")
    gw = project.index.lookup("gateway.networking.k8s.io", "Gateway", "app", "gw")
    assert [(r.ref.kind, r.target, r.accepted) for r in first_answer] == [("HTTPRoute", route_obj, True), ("Gateway", gw, True)]
    for _ in range(5):
        assert fresh.targets(found) is first_answer
    assert asked == ["spec.targetRefs[0]", "spec.targetRefs[1]"]


def test_a_target_references_patterns_are_matched_once_per_distinct_text(monkeypatch: pytest.MonkeyPatch) -> None:
    # The resolution and the reference rules each ask `ref_problems` of every reference, and the
    # references name few distinct groups, kinds and namespaces: each pattern is matched once per
    # distinct text, its verdict the pattern's own, valid or not.
    import random
    import re

    from policylint.profiles import policy as policy_module
    from policylint.profiles.policy import TargetRef, ref_problems

    matched: list[tuple[str, str]] = []

    class Counted:
        def __init__(self, which: str, pattern: re.Pattern[str]) -> None:
            self.which, self.pattern = which, pattern

        def match(self, text: str) -> re.Match[str] | None:
            matched.append((self.which, text))
            return self.pattern.match(text)

    monkeypatch.setattr(policy_module, "_VERDICTS", {})
    monkeypatch.setattr(policy_module, "_PATTERNS", {k: Counted(k, p) for k, p in policy_module._PATTERNS.items()})
    rng = random.Random(3)
    texts = ["gateway.networking.k8s.io", "HTTPRoute", "team-a", "http", "", "Bad_Kind", "a..b", "-x", "UPPER", "x" * 70]
    refs = [
        TargetRef(
            f"spec.targetRefs[{i}]",
            {},
            rng.choice(texts),
            rng.choice(texts),
            "web",
            rng.choice([*texts, None]),
            rng.choice([*texts, None]),
        )
        for i in range(300)
    ]
    answers = [[(p.field, p.path, p.message) for p in ref_problems(ref)] for ref in refs * 3]
    assert len(matched) == len(set(matched)) <= 4 * len(texts)
    # The answers are those of the patterns matched every time.
    monkeypatch.setattr(policy_module, "_VERDICTS", {})
    plain = {k: c.pattern for k, c in policy_module._PATTERNS.items()}
    every: list[list[tuple[str, str, str]]] = []
    for ref in refs * 3:
        policy_module._VERDICTS.clear()
        monkeypatch.setattr(policy_module, "_PATTERNS", plain)
        every.append([(p.field, p.path, p.message) for p in ref_problems(ref)])
    assert answers == every
    assert sum(map(len, answers)) > 300  # invalid texts among them
