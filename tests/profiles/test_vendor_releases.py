"""Several releases of each vendor's policy CRDs are bundled (tests/data/crds/<project>/<release>/,
provenance in tests/data/crds/SOURCES.md), and a vendor's kind is judged against the release the
cluster runs: declared (`implementations: [envoy-gateway@v1.8]`), else inferred from a CRD of the
vendor in the input, else every bundled release of the vendor, an error only when every one
refuses (policylint.rules.releases; docs/semantics.md#the-cluster-model).

The fields below were read in the vendored CRDs: BackendTrafficPolicy's `spec.routingType` comes
in Envoy Gateway v1.7 (absent from v1.6.7's
charts/gateway-helm/crds/generated/gateway.envoyproxy.io_backendtrafficpolicies.yaml, present in
v1.7.5's); SecurityPolicy's `spec.authorization.rules[].principal.sourceCIDRs` is in v1.7.5 only
(beside `clientCIDRs`; v1.6.7's and v1.8.3's principal have no such field).
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from policylint.cli import cli
from policylint.k8s import schemas
from policylint.k8s.cluster import bundled_vendor_release
from tests.lintutil import lint_text

CRDS = Path(__file__).resolve().parents[1] / "data" / "crds"

ROUTING_TYPE = """\
apiVersion: gateway.envoyproxy.io/v1alpha1
kind: BackendTrafficPolicy
metadata: {name: p, namespace: apps}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: web}]
  routingType: Service
"""

SOURCE_CIDRS = """\
apiVersion: gateway.envoyproxy.io/v1alpha1
kind: SecurityPolicy
metadata: {name: p, namespace: apps}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: web}]
  authorization:
    defaultAction: Deny
    rules:
    - action: Allow
      principal: {clientCIDRs: [10.0.0.0/8], sourceCIDRs: [192.168.0.0/16]}
"""

RETRIES = """\
apiVersion: gateway.envoyproxy.io/v1alpha1
kind: BackendTrafficPolicy
metadata: {name: p, namespace: apps}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: web}]
  retries: {numRetries: 3}
"""


def pl702(text: str, **options: object) -> list[tuple[str, str, str]]:
    return [(f.path, f.severity.label, f.message) for f in lint_text(text, **options).findings if f.rule == "PL702"]


def test_the_bundled_vendor_releases_are_the_vendored_directories() -> None:
    for project, releases in schemas.vendor_releases().items():
        on_disk = sorted((p.name for p in (CRDS / project).iterdir() if p.is_dir()), key=schemas.release_key)
        assert list(releases) == on_disk, project
    assert schemas.vendor_releases()["envoy-gateway"] == ("v1.6.7", "v1.7.5", "v1.8.3", "v1.9.0")
    assert schemas.vendor_releases()["istio"] == ("1.28.10", "1.29.6", "1.30.3")
    assert schemas.vendor_releases()["linkerd"] == ("version-2.18", "version-2.19", "version-2.20")
    # A declared minor release stands for its bundled patch; one not bundled for nothing.
    assert bundled_vendor_release("envoy-gateway", "v1.8") == "v1.8.3"
    assert bundled_vendor_release("envoy-gateway", "v1.8.1") == "v1.8.3"
    assert bundled_vendor_release("istio", "1.29") == "1.29.6"
    assert bundled_vendor_release("envoy-gateway", "v1.5") is None


def test_a_field_every_bundled_release_lacks_is_an_error_with_no_configuration() -> None:
    ((path, severity, message),) = pl702(RETRIES)
    assert (path, severity) == ("spec.retries", "error")
    assert "(the envoy-gateway v1.9.0 CRD)" in message
    assert "no bundled release of envoy-gateway (v1.6.7 to v1.9.0) accepts it" in message
    assert "if the cluster runs a release newer than envoy-gateway v1.9.0, lint with its CRDs (--crd)" in message


def test_a_field_only_an_older_release_has_is_a_warning_naming_it() -> None:
    ((path, severity, message),) = pl702(SOURCE_CIDRS)
    assert (path, severity) == ("spec.authorization.rules[0].principal.sourceCIDRs", "warning")
    assert "envoy-gateway v1.7.5 accepts it: if the cluster runs it, declare it with" in message
    assert "`implementations: [envoy-gateway@<release>]`" in message


def test_a_declared_release_decides_and_its_refusals_are_errors() -> None:
    # routingType is in v1.7 and later: clean with no declaration (the newest has it) and under
    # v1.7, an error under a declared v1.6.
    assert pl702(ROUTING_TYPE) == []
    assert pl702(ROUTING_TYPE, implementations=["envoy-gateway@v1.7"]) == []
    ((path, severity, message),) = pl702(ROUTING_TYPE, implementations=["envoy-gateway@v1.6"])
    assert (path, severity) == ("spec.routingType", "error")
    assert "(the envoy-gateway v1.6.7 CRD)" in message
    assert (
        "the cluster runs envoy-gateway v1.6.7 (declared in the test: envoy-gateway@v1.6, linted as v1.6.7"
        " (the bundled patch release of that minor release))" in message
    )
    # A declared release refuses what only another accepts: v1.7.5's field under v1.8.
    ((_, severity, _),) = pl702(SOURCE_CIDRS, implementations=["envoy-gateway@v1.8"])
    assert severity == "error"
    assert pl702(SOURCE_CIDRS, implementations=["envoy-gateway@v1.7.5"]) == []


def test_a_declared_release_that_is_not_bundled_is_unknown() -> None:
    result = lint_text(SOURCE_CIDRS, implementations=["envoy-gateway@v1.5"])
    known = result.project.index.cluster().vendor_release("envoy-gateway")
    assert known.value is None
    assert known.source == (
        "unknown: declared in the test: envoy-gateway@v1.5, whose CRDs are not bundled (bundled: v1.6.7, v1.7.5, v1.8.3, v1.9.0)"
    )
    assert [s for _, s, _ in pl702(SOURCE_CIDRS, implementations=["envoy-gateway@v1.5"])] == ["warning"]


def _crd(project: str, release: str, name: str) -> str:
    return (CRDS / project / release / name).read_text(encoding="utf-8")


def test_a_vendor_crd_in_the_input_shows_the_release() -> None:
    # v1.6.7's ClientTrafficPolicy CRD in the input: its schema is v1.6.7's alone, so the
    # BackendTrafficPolicy (whose CRD is not in the input) is judged against v1.6.7's.
    text = _crd("envoy-gateway", "v1.6.7", "gateway.envoyproxy.io_clienttrafficpolicies.yaml") + "---\n" + ROUTING_TYPE
    result = lint_text(text)
    known = result.project.index.cluster().vendor_release("envoy-gateway")
    assert known.value == "v1.6.7"
    assert known.source == (
        "inferred from CustomResourceDefinition clienttrafficpolicies.gateway.envoyproxy.io (input.yaml:2):"
        " its schema is that of envoy-gateway v1.6.7"
    )
    assert [(f.path, f.severity.label) for f in result.findings if f.rule == "PL702"] == [("spec.routingType", "error")]
    # The declaration wins over the CRD.
    declared = lint_text(text, implementations=["envoy-gateway@v1.9"])
    assert declared.project.index.cluster().vendor_release("envoy-gateway").value == "v1.9.0"
    assert [f for f in declared.findings if f.rule == "PL702"] == []


def test_a_crd_schema_several_releases_share_stands_for_the_newest_and_one_none_has_for_nothing() -> None:
    # EnvoyPatchPolicy's schema is the same in every bundled release (v1.6.7's file differs from
    # the others in descriptions only): the newest of the releases that share it stands for the
    # cluster's.
    crd = _crd("envoy-gateway", "v1.7.5", "gateway.envoyproxy.io_envoypatchpolicies.yaml")
    assert schemas.releases_of_crd(yaml.safe_load(crd)) == ("envoy-gateway", ("v1.6.7", "v1.7.5", "v1.8.3", "v1.9.0"))
    edited = crd.replace("                - JSONPatch\n", "                - JSONPatch\n                - MergePatch\n", 1)
    assert edited != crd
    assert schemas.releases_of_crd(yaml.safe_load(edited)) == ("envoy-gateway", ())
    assert lint_text(edited).project.index.cluster().vendor_release("envoy-gateway").value is None


def test_show_config_shows_each_vendor_release_and_its_source(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / ".git").mkdir()
    (tmp_path / ".policylint.yaml").write_text("implementations: [envoy-gateway@v1.8, istio@1.29]\n")
    lines = CliRunner().invoke(cli, ["config"]).stdout.splitlines()
    assert (
        "cluster.schemas.envoy-gateway: v1.8.3  # declared in .policylint.yaml:1: envoy-gateway@v1.8, linted as v1.8.3 (the bundled patch release of that minor release)"
        in lines
    )
    assert (
        "cluster.schemas.istio: 1.29.6  # declared in .policylint.yaml:1: istio@1.29, linted as 1.29.6 (the bundled patch release of that minor release)"
        in lines
    )


def test_a_run_reads_only_the_vendor_schemas_of_the_release_it_uses(monkeypatch: pytest.MonkeyPatch) -> None:
    # Every bundled schema is built from one table of the archive's nodes (policylint.k8s.schemas
    # `_table`): what the run asks for is which schemas it looks up there.
    looked_up: list[str] = []
    original = schemas._schema
    monkeypatch.setattr(schemas, "_schema", lambda digest: looked_up.append(digest) or original(digest))
    lint_text(ROUTING_TYPE, implementations=["envoy-gateway@v1.7"])
    (v175,) = [
        e["schema"]
        for e in schemas._entries()
        if e["kind"] == "BackendTrafficPolicy" and e["source"].startswith("envoy-gateway/v1.7.5/")
    ]
    # v1.7.5's BackendTrafficPolicy schema, admitted, and nothing else: no other release's.
    assert looked_up and set(looked_up) == {v175}


# -- PL705: the versions a vendor's CRD serves in the releases the cluster may run -------------------
#
# Read in the vendored CRDs: Kuadrant's AuthPolicy CRD serves v1 only from v1.0.0
# (config/crd/bases/kuadrant.io_authpolicies.yaml of Kuadrant/kuadrant-operator: v1beta2, served and
# stored, at v0.11.0; v1 at v1.0.0), and so in every bundled release (v1.3.1 to v1.5.2); no release of
# Envoy Gateway serves gateway.envoyproxy.io/v1alpha2 (its CRDs, v1.6.7 to v1.9.0, serve v1alpha1);
# NGINX Gateway Fabric's WAFPolicy CRD is in v2.6.7 only of the bundled releases (v2.3.0 to v2.6.7).

VENDOR_VERSIONS = """\
apiVersion: kuadrant.io/v1beta2
kind: AuthPolicy
metadata: {name: auth, namespace: apps}
spec:
  targetRef: {group: gateway.networking.k8s.io, kind: HTTPRoute, name: web}
---
apiVersion: gateway.envoyproxy.io/v1alpha2
kind: BackendTrafficPolicy
metadata: {name: btp, namespace: apps}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: edge}]
---
apiVersion: gateway.nginx.org/v1alpha1
kind: WAFPolicy
metadata: {name: waf, namespace: apps}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: edge}]
"""


def pl705(text: str, **options: object) -> list[tuple[str, str, str, str]]:
    result = lint_text(text, **options)
    return [
        (f"{f.object.kind} {f.object.namespace}/{f.object.name}", f.path, f.severity.label, f.message)
        for f in result.findings
        if f.rule == "PL705" and f.object is not None
    ]


def test_a_vendor_version_no_bundled_release_serves_is_an_error() -> None:
    found = pl705(VENDOR_VERSIONS)
    assert [(o, p, s) for o, p, s, _ in found[:2]] == [
        ("AuthPolicy apps/auth", "apiVersion", "error"),
        ("BackendTrafficPolicy apps/btp", "apiVersion", "error"),
    ]
    assert found[0][3].startswith(
        "AuthPolicy kuadrant.io/v1beta2 is not served by any bundled release of kuadrant (v1.3.1 to v1.5.2), which serves v1"
    )
    assert "if the cluster runs a release newer than kuadrant v1.5.2, lint with its CRDs (--crd)" in found[0][3]
    assert "envoy-gateway (v1.6.7 to v1.9.0), which serves v1alpha1" in found[1][3]


def test_a_vendor_kind_only_some_releases_serve_is_a_warning_naming_them_until_the_release_is_declared() -> None:
    (waf,) = [f for f in pl705(VENDOR_VERSIONS) if f[0] == "WAFPolicy apps/waf"]
    assert waf[1:3] == ("apiVersion", "warning")
    assert "WAFPolicy gateway.nginx.org/v1alpha1 is served only by nginx-gateway-fabric v2.6.7" in waf[3]
    assert "`implementations: [nginx-gateway-fabric@<release>]`" in waf[3]
    (declared,) = [
        f for f in pl705(VENDOR_VERSIONS, implementations=["nginx-gateway-fabric@v2.5"]) if f[0] == "WAFPolicy apps/waf"
    ]
    assert declared[1:3] == ("kind", "error")
    assert declared[3].startswith("WAFPolicy is not a kind of nginx-gateway-fabric v2.5.1, which the cluster runs")
    assert [
        f for f in pl705(VENDOR_VERSIONS, implementations=["nginx-gateway-fabric@v2.6"]) if f[0] == "WAFPolicy apps/waf"
    ] == []
