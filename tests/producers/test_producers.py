"""Objects made in the cluster (profile `producers`) and tool configuration kinds (PL003).

Over upstream files (tests/data/producers/, attributed in its README): a Secret written by a
cert-manager Certificate or gateway-shim, an ExternalSecret, a ClusterExternalSecret (in the
namespaces it selects) or a SealedSecret of the input is found, as are trust-manager's
ClusterBundle targets and Vault Secrets Operator's destination Secrets, and so is the HTTPRoute Envoy AI Gateway generates from an AIGatewayRoute; Envoy Gateway's
configuration file, an IstioOperator, a Gateway API conformance report and a GEP's metadata are
PL003 info, never an error (docs/semantics.md#objects-made-in-the-cluster).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from policylint.findings import Severity
from policylint.vocabulary import ReferenceStatus, Resolved
from tests.lintutil import ROOT, lint_paths, lint_text, only

DATA = ROOT / "tests" / "data" / "producers"


def _certificate_refs(result: object) -> dict[str, ReferenceStatus]:
    project = result.project  # type: ignore[attr-defined]
    topology = project.topology()
    out = {}
    for gateway in topology.gateways():
        for ref in topology.refs_from(gateway):
            out[f"{ref.namespace}/{ref.name}"] = ref.status
    return out


@pytest.mark.parametrize(
    ("name", "made"),
    [
        ("cert-manager.yaml", {"sandbox/example-com-tls", "shim/example-com-tls"}),
        ("external-secrets.yaml", {"app/secret-to-be-created"}),
        ("sealed-secrets.yaml", {"default/example"}),
    ],
)
@pytest.mark.parametrize("complete", [False, True])
def test_upstream_producers_make_the_secrets_referenced(name: str, made: set[str], complete: bool) -> None:
    # Each file also holds another Secret of the namespace: before producers, the input
    # "managed" Secrets there and the reference was a PL417 error.
    result = lint_paths([DATA / name], complete=complete)
    assert only(result, "PL417") == []
    statuses = _certificate_refs(result)
    assert {ref for ref, status in statuses.items() if status is ReferenceStatus.PRODUCED} == made


def test_without_its_producer_the_secret_is_a_warning_and_an_error_with_complete() -> None:
    text = (DATA / "external-secrets.yaml").read_text()
    without = text.split("---\n", 1)[1]  # the ExternalSecret is the first document
    [warning] = only(lint_text(without), "PL417")
    assert warning.severity is Severity.WARNING
    assert (warning.object.kind, warning.object.name, warning.line) == ("Gateway", "web", 16)
    assert "Secret app/secret-to-be-created, which is not in the input" in warning.message
    assert "considered: Certificate (cert-manager);" in warning.message
    assert "ExternalSecret, ClusterExternalSecret (External Secrets Operator)" in warning.message
    assert "SealedSecret (the Sealed Secrets controller)" in warning.message
    assert warning.hint is not None and "--complete" in warning.hint
    [error] = only(lint_text(without, complete=True), "PL417")
    assert error.severity is Severity.ERROR
    assert "(declared complete: --complete)" in error.message


GATEWAY_SHIM = """\
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata:
  name: web
  namespace: app
  annotations:
    cert-manager.io/cluster-issuer: letsencrypt
spec:
  gatewayClassName: eg
  listeners:
  - name: https
    protocol: HTTPS
    port: 443
    hostname: web.example.com
    tls:
      certificateRefs:
      - name: web-tls
  - name: nohost
    protocol: HTTPS
    port: 8443
    tls:
      certificateRefs:
      - name: nohost-tls
  - name: passthrough
    protocol: TLS
    port: 9443
    hostname: tls.example.com
    tls:
      mode: Passthrough
      certificateRefs:
      - name: passthrough-tls
"""


def test_gateway_shim_makes_secrets_only_for_the_listeners_it_accepts() -> None:
    # cert-manager's validateGatewayListenerBlock skips a listener without a hostname, and
    # handleGatewayAPIListeners one in Passthrough mode: no Certificate, so no Secret, for them.
    result = lint_text(GATEWAY_SHIM, complete=True)
    statuses = _certificate_refs(result)
    assert statuses == {
        "app/web-tls": ReferenceStatus.PRODUCED,
        "app/nohost-tls": ReferenceStatus.NOT_FOUND,
        "app/passthrough-tls": ReferenceStatus.NOT_FOUND,
    }
    # Without --complete, the Secrets the shim makes in app are evidence the input manages them.
    findings = only(lint_text(GATEWAY_SHIM), "PL417")
    assert [(f.line, f.severity) for f in findings] == [(23, Severity.WARNING), (31, Severity.WARNING)]


def test_without_the_annotation_the_gateway_makes_nothing() -> None:
    text = GATEWAY_SHIM.replace("  annotations:\n    cert-manager.io/cluster-issuer: letsencrypt\n", "")
    assert set(_certificate_refs(lint_text(text, complete=True)).values()) == {ReferenceStatus.NOT_FOUND}


BUNDLE = """\
apiVersion: trust.cert-manager.io/v1alpha1
kind: Bundle
metadata:
  name: example-bundle
spec:
  sources:
  - useDefaultCAs: true
  target:
    configMap:
      key: ca.crt
    namespaceSelector:
      matchLabels:
        trust: enabled
---
apiVersion: v1
kind: Namespace
metadata:
  name: app
  labels:
    trust: enabled
---
apiVersion: v1
kind: Namespace
metadata:
  name: other
---
apiVersion: v1
kind: Service
metadata: {name: web, namespace: NS}
spec:
  ports:
  - {name: https, port: 443}
---
apiVersion: gateway.networking.k8s.io/v1
kind: BackendTLSPolicy
metadata: {name: web-tls, namespace: NS}
spec:
  targetRefs:
  - {group: "", kind: Service, name: web}
  validation:
    hostname: web.example.com
    caCertificateRefs:
    - {group: "", kind: ConfigMap, name: example-bundle}
    - {group: "", kind: ConfigMap, name: kube-root-ca.crt}
"""


def _policy_refs(result: object) -> list[ReferenceStatus]:
    project = result.project  # type: ignore[attr-defined]
    topology = project.topology()
    return [ref.status for policy in project.resolution.policies() for ref in topology.refs_from(policy.obj)]


def test_trust_manager_bundle_and_kube_root_ca_in_the_namespaces_they_reach() -> None:
    # trust-manager writes the Bundle's ConfigMap in the namespaces its selector matches; the
    # kube-controller-manager writes kube-root-ca.crt in every namespace.
    matched = lint_text(BUNDLE.replace("NS", "app"), complete=True)
    assert _policy_refs(matched) == [ReferenceStatus.PRODUCED, ReferenceStatus.PRODUCED]
    assert only(matched, "PL417") == []
    unmatched = lint_text(BUNDLE.replace("NS", "other"), complete=True)
    assert _policy_refs(unmatched) == [ReferenceStatus.NOT_FOUND, ReferenceStatus.PRODUCED]
    [finding] = only(unmatched, "PL417")
    assert (finding.path, finding.severity) == ("spec.validation.caCertificateRefs[0].name", Severity.ERROR)
    # A namespace whose Namespace object is not in the input may match: its labels are unknown.
    elsewhere = BUNDLE.replace("NS", "unlisted")
    assert _policy_refs(lint_text(elsewhere))[0] is ReferenceStatus.PRODUCED
    assert _policy_refs(lint_text(elsewhere, complete=True))[0] is ReferenceStatus.NOT_FOUND


def test_policy_on_the_httproute_an_aigatewayroute_generates_is_accepted() -> None:
    result = lint_paths([DATA / "ai-gateway.yaml"])
    assert only(result, "PL201") == []
    [policy] = result.project.resolution.policies()
    [resolution] = result.project.resolution.targets(policy)
    assert resolution.detail is Resolved.IMPLIED
    assert "made by Envoy AI Gateway from AIGatewayRoute default/provider-fallback" in resolution.message
    # Without the AIGatewayRoute, the HTTPRoute is missing.
    text = (DATA / "ai-gateway.yaml").read_text()
    start = text.index("apiVersion: aigateway.envoyproxy.io/v1beta1")
    end = text.index("---\n", start) + 4
    assert [f.rule for f in only(lint_text(text[:start] + text[end:]), "PL201")] == ["PL201"]


def test_an_inference_pool_not_in_the_input_is_a_warning_naming_the_chart_that_makes_it() -> None:
    """Envoy AI Gateway's routes name InferencePools that the Gateway API Inference Extension's
    inferencepool Helm chart makes, named after the Helm release (profile envoy-ai-gateway.yaml):
    an absent one is unprovable, a warning naming that chart; with --complete, an error."""
    [finding] = only(lint_paths([DATA / "inference-pool.yaml"]), "PL411")
    assert (finding.line, finding.path, finding.severity) == (62, "spec.rules[0].backendRefs[0]", Severity.WARNING)
    assert (
        "which is not in the input, and may be made in the cluster from outside it (considered: any InferencePool made"
        " by the Gateway API Inference Extension's inferencepool Helm chart, one InferencePool per Helm release)"
    ) in finding.message
    [complete] = only(lint_paths([DATA / "inference-pool.yaml"], complete=True), "PL411")
    assert (complete.line, complete.path, complete.severity) == (63, "spec.rules[0].backendRefs[0].kind", Severity.ERROR)
    assert "considered" not in complete.message


def test_an_inference_pool_of_the_older_api_group_is_a_warning_naming_the_chart_too() -> None:
    """Envoy AI Gateway v0.3.0 routes to InferencePool v1alpha2 of inference.networking.x-k8s.io
    (its examples/inference-pool/httproute.yaml), which the Inference Extension's chart made before
    v1.0.0 (profile envoy-ai-gateway.yaml): an absent one is a warning naming that chart, an error
    with --complete, as for the v1 group; one in the input resolves."""
    [finding] = only(lint_paths([DATA / "inference-pool-v1alpha2.yaml"]), "PL411")
    assert (finding.line, finding.path, finding.severity) == (42, "spec.rules[0].backendRefs[0]", Severity.WARNING)
    assert (
        "(group inference.networking.x-k8s.io), which is not in the input, and may be made in the cluster from outside it"
        " (considered: any InferencePool made by the Gateway API Inference Extension's inferencepool Helm chart (v0.3.0"
        " to v0.5.1, or later with inferencePool.apiVersion inference.networking.x-k8s.io/v1alpha2), one InferencePool"
        " per Helm release)"
    ) in finding.message
    [complete] = only(lint_paths([DATA / "inference-pool-v1alpha2.yaml"], complete=True), "PL411")
    assert (complete.line, complete.path, complete.severity) == (43, "spec.rules[0].backendRefs[0].kind", Severity.ERROR)
    # The pool in the input (as v0.3.0's examples/inference-pool/base.yaml writes one) resolves; a
    # missing one beside it is still the chart's to make.
    pool = (
        "---\napiVersion: inference.networking.x-k8s.io/v1alpha2\nkind: InferencePool\n"
        "metadata: {name: vllm-llama3-8b-instruct, namespace: default}\n"
        "spec: {targetPortNumber: 8000, selector: {app: vllm}, extensionRef: {name: epp}}\n"
    )
    text = (DATA / "inference-pool-v1alpha2.yaml").read_text()
    assert only(lint_text(text + pool), "PL411") == []
    missing = text.replace(
        "name: vllm-llama3-8b-instruct\n          namespace: default", "name: other\n          namespace: default"
    )
    [other] = only(lint_text(missing + pool), "PL411")
    assert other.severity is Severity.WARNING and "inferencepool Helm chart (v0.3.0 to v0.5.1" in other.message


def test_user_profile_declares_producers(tmp_path: Path) -> None:
    profile = tmp_path / "acme.yaml"
    profile.write_text(
        "project: acme\n"
        "producers:\n"
        "- by: the ACME vault operator\n"
        "  from: {group: vault.acme.io, kind: VaultSecret}\n"
        "  makes: {kind: Secret}\n"
        "  name: [spec.destination]\n"
    )
    manifests = tmp_path / "app.yaml"
    text = (DATA / "external-secrets.yaml").read_text().split("---\n", 1)[1]
    text += "---\napiVersion: vault.acme.io/v1\nkind: VaultSecret\nmetadata: {name: v, namespace: app}\n"
    text += "spec: {destination: secret-to-be-created}\n"
    manifests.write_text(text)
    assert len(only(lint_paths([manifests]), "PL417")) == 1
    result = lint_paths([manifests], profile_paths=[str(profile)], complete=True)
    assert only(result, "PL417") == []
    assert _certificate_refs(result) == {"app/secret-to-be-created": ReferenceStatus.PRODUCED}


@pytest.mark.parametrize("name", ["envoy-gateway.yaml", "istio-minimal.yaml", "conformance-report.yaml", "gep-metadata.yaml"])
def test_tool_configuration_kinds_are_info_not_errors(name: str) -> None:
    result = lint_paths([DATA / "tools" / name])
    findings = result.findings
    assert findings, "each document is reported as not a Kubernetes object"
    assert {(f.rule, f.severity) for f in findings} == {("PL003", Severity.INFO)}
    assert all("which no API server serves" in f.message for f in findings)
    assert not result.project.index.objects


# -- ClusterExternalSecret, trust-manager's ClusterBundle, Vault Secrets Operator ----------------------


def test_a_cluster_external_secret_makes_its_secret_in_the_namespaces_it_selects() -> None:
    # External Secrets' fan-out example: namespaceSelectors [{matchLabels: {shared-credentials:
    # "true"}}]; team-a carries the label, team-b does not.
    for complete in (False, True):
        result = lint_paths([DATA / "cluster-external-secret.yaml"], complete=complete)
        statuses = _certificate_refs(result)
        assert statuses["team-a/shared-credentials"] is ReferenceStatus.PRODUCED
        assert statuses["team-b/shared-credentials"] is ReferenceStatus.NOT_FOUND
        [finding] = only(result, "PL417")
        assert finding.object.namespace == "team-b"  # type: ignore[union-attr]
        assert finding.severity is (Severity.ERROR if complete else Severity.WARNING)
        assert "ExternalSecret, ClusterExternalSecret (External Secrets Operator)" in finding.message


def test_a_cluster_external_secret_s_namespaces_by_name_and_by_deprecated_selector() -> None:
    text = (DATA / "cluster-external-secret.yaml").read_text()
    # `namespaces` names team-b: decided without its labels, with --complete too.
    named = text.replace(
        '  namespaceSelectors:\n  - matchLabels:\n      shared-credentials: "true"\n', "  namespaces: [team-b]\n"
    )
    assert named != text
    statuses = _certificate_refs(lint_paths_text(named, complete=True))
    assert statuses["team-b/shared-credentials"] is ReferenceStatus.PRODUCED
    assert statuses["team-a/shared-credentials"] is ReferenceStatus.NOT_FOUND
    # The deprecated single namespaceSelector, empty: every namespace.
    every = text.replace(
        '  namespaceSelectors:\n  - matchLabels:\n      shared-credentials: "true"\n', "  namespaceSelector: {}\n"
    )
    statuses = _certificate_refs(lint_paths_text(every, complete=True))
    assert set(statuses.values()) == {ReferenceStatus.PRODUCED}
    # No selector and no names: no namespace.
    none = text.replace('  namespaceSelectors:\n  - matchLabels:\n      shared-credentials: "true"\n', "")
    assert set(_certificate_refs(lint_paths_text(none)).values()) == {ReferenceStatus.NOT_FOUND}


def lint_paths_text(text: str, **options: object) -> object:
    return lint_text(text, "cluster-external-secret.yaml", **options)


CLUSTER_BUNDLE = """\
apiVersion: trust-manager.io/v1alpha2
kind: ClusterBundle
metadata:
  name: example-bundle
spec:
  sources:
  - configMap: {name: my-ca, key: ca.crt}
  target:
    configMap:
      data:
      - key: ca.crt
    namespaceSelector:
      matchLabels:
        trust: enabled
"""


def test_trust_manager_cluster_bundle_makes_its_configmap_in_the_namespaces_it_selects() -> None:
    # trust-manager v0.24's ClusterBundle (deploy/crds/trust-manager.io_clusterbundles.yaml):
    # Bundle's targets, cluster-scoped, named as the ClusterBundle.
    text = CLUSTER_BUNDLE + "---\n" + BUNDLE.split("---\n", 1)[1]
    matched = lint_text(text.replace("NS", "app"), complete=True)
    assert _policy_refs(matched) == [ReferenceStatus.PRODUCED, ReferenceStatus.PRODUCED]
    unmatched = lint_text(text.replace("NS", "other"), complete=True)
    assert _policy_refs(unmatched) == [ReferenceStatus.NOT_FOUND, ReferenceStatus.PRODUCED]
    [finding] = only(unmatched, "PL417")
    assert "ClusterBundle (trust-manager)" in finding.message


VAULT = """\
apiVersion: secrets.hashicorp.com/v1beta1
kind: KIND
metadata: {name: web-tls, namespace: app}
spec:
  vaultAuthRef: default
  mount: pki
  role: web
  destination: {name: web-tls, CREATE}
---
apiVersion: v1
kind: Secret
metadata: {name: other, namespace: app}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: web, namespace: app}
spec:
  gatewayClassName: eg
  listeners:
  - name: https
    hostname: example.com
    port: 443
    protocol: HTTPS
    tls: {certificateRefs: [{name: web-tls}]}
"""


@pytest.mark.parametrize("kind", ["VaultStaticSecret", "VaultDynamicSecret", "VaultPKISecret", "HCPVaultSecretsApp"])
def test_vault_secrets_operator_makes_the_destination_secret_it_creates(kind: str) -> None:
    # Vault Secrets Operator's Destination (api/v1beta1/common.go): the Secret `name`, created
    # only with `create: true` (default false: it must exist already).
    created = lint_text(VAULT.replace("KIND", kind).replace("CREATE", "create: true"), complete=True)
    assert _certificate_refs(created) == {"app/web-tls": ReferenceStatus.PRODUCED}
    assert only(created, "PL417") == []
    existing = lint_text(VAULT.replace("KIND", kind).replace(", CREATE", ""), complete=True)
    assert _certificate_refs(existing) == {"app/web-tls": ReferenceStatus.NOT_FOUND}
    [finding] = only(existing, "PL417")
    # The producers looked for, grouped by who makes the Secret.
    vault = "VaultStaticSecret, VaultDynamicSecret, VaultPKISecret, HCPVaultSecretsApp (Vault Secrets Operator)"
    assert kind in vault and vault in finding.message
