"""What the cluster runs (policylint.k8s.cluster): declared, inferred from the input, or unknown,
and the severity of the schema rules' findings that follows (policylint.rules.releases;
docs/semantics.md#the-cluster-model).

Expected releases and channels are read from the vendored CRDs (tests/data/crds/gateway-api/) and
their annotations; Envoy Gateway's installer channel from its chart's values
(charts/gateway-crds-helm/values.yaml: `crds.gatewayAPI.channel: experimental`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner, Result

from policylint.cli import cli
from policylint.k8s import schemas
from tests.lintutil import lint_paths, lint_text

DATA = Path(__file__).parent / "data"
INVALID = DATA / "gateway-api-invalid-examples"
CRDS = DATA / "crds" / "gateway-api"


def invoke(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args))


def pl7(result: object) -> list[tuple[str, str, str]]:
    return [(f.rule, f.path, f.severity.label) for f in result.findings if f.rule.startswith("PL7")]  # type: ignore[attr-defined]


# -- no release ever accepted it: an error with no configuration -------------------------------------

GATEWAY = """\
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: edge, namespace: apps}
spec:
  gatewayClassName: example
  listeners:
  - {name: http, port: 70000, protocol: HTTP}
"""

ROUTE = """\
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: web, namespace: apps}
spec:
  parentRefs: [{name: edge}]
  rules:
  - matches: [{path: {type: Prefixx, value: /}}]
"""


def test_a_port_no_release_allows_is_an_error_with_no_configuration() -> None:
    # PortNumber is 1 to 65535 in every release (minimum 1, maximum 65535).
    assert pl7(lint_text(GATEWAY)) == [("PL703", "spec.listeners[0].port", "error")]


def test_a_path_type_no_release_allows_is_an_error_with_no_configuration(tmp_path: Path) -> None:
    # PathMatchType is Exact, PathPrefix or RegularExpression in every release.
    assert pl7(lint_text(ROUTE)) == [("PL703", "spec.rules[0].matches[0].path.type", "error")]
    (tmp_path / "route.yaml").write_text(ROUTE)
    result = invoke("check", "--isolated", "--no-cache", str(tmp_path / "route.yaml"))
    assert result.exit_code == 1
    assert "no bundled release of Gateway API v1.0.0 to v1.6.1 in either channel accepts the object" in result.stdout


# -- Gateway API's own invalid examples --------------------------------------------------------------

STANDARD = sorted((INVALID / "standard").rglob("*.yaml"))
EXPERIMENTAL = sorted((INVALID / "experimental").rglob("*.yaml"))
# Gateway API v1.0.0's Gateway CRD has no rule refusing an HTTPS listener in Passthrough mode: its
# validating webhook did (the webhook left in v1.1, where the CEL rule "tls mode must be Terminate
# for protocol HTTPS" came in; tests/data/crds/gateway-api/v1.1.1/standard/). In v1.0.0 the
# webhook was an install of its own (hack/build-install-yaml.sh at v1.0.0 writes
# release/standard-install.yaml, the CRDs, and release/webhook-install.yaml apart): a v1.0.0
# cluster installed from standard-install.yaml accepts the Gateway. policylint models the CRDs:
# with no release declared it is a warning naming v1.0.0, and an error from v1.1 on.
V1_0_WEBHOOK = {"gateway/invalid-tls-mode.yaml"}
# The header value pattern of RFC 7230 (#3774, 2025-11-27) is in the experimental channel's
# HTTPRoute CRD only, from v1.5: the standard channel of every release, and the experimental one
# before v1.5, accept the value. With the channel unknown, the object is judged against the
# standard channel's schema first, which admits it, and an object the first plausible schema
# admits is not checked against the others (that would be every object against fourteen
# schemas): no finding. Declared experimental, it is a warning naming v1.0.0 to v1.4.1; declared
# v1.5 or later and experimental, an error.
EXPERIMENTAL_PATTERN = {"httproute/invalid-header-value.yaml"}


def _errors(result: object) -> list[str]:
    return [f.rule for f in result.findings if f.severity.label == "error"]  # type: ignore[attr-defined]


@pytest.mark.parametrize("path", STANDARD, ids=[p.relative_to(INVALID).as_posix() for p in STANDARD])
def test_every_standard_invalid_example_is_an_error_with_default_flags(path: Path) -> None:
    rel = path.relative_to(INVALID / "standard").as_posix()
    if rel in V1_0_WEBHOOK:
        (finding,) = [f for f in lint_paths([path]).findings if f.rule == "PL704"]
        assert finding.severity.label == "warning"
        assert "Gateway API v1.0.0's standard channel and v1.0.0's experimental channel accept the object" in finding.message
        assert "PL704" in _errors(lint_paths([path], gateway_api_version="v1.1.1"))
        return
    assert _errors(lint_paths([path]))


@pytest.mark.parametrize("path", EXPERIMENTAL, ids=[p.relative_to(INVALID).as_posix() for p in EXPERIMENTAL])
def test_every_experimental_invalid_example_is_an_error_on_the_experimental_channel(path: Path) -> None:
    # Upstream applies these with its experimental channel's CRDs only (SOURCES.md there), of the
    # same tag: v1.6.1. (invalid-header-value.yaml is refused by v1.5's and v1.6.1's header value
    # pattern, which older releases' CRDs do not have.)
    assert _errors(lint_paths([path], channel="experimental", gateway_api_version="v1.6.1"))
    rel = path.relative_to(INVALID / "experimental").as_posix()
    if rel not in EXPERIMENTAL_PATTERN:
        assert _errors(lint_paths([path]))  # and with default flags


def test_the_experimental_header_value_pattern_is_judged_by_the_channel_and_release() -> None:
    path = INVALID / "experimental" / "httproute" / "invalid-header-value.yaml"
    assert pl7(lint_paths([path])) == []
    (finding,) = [f for f in lint_paths([path], channel="experimental").findings if f.rule == "PL703"]
    assert finding.severity.label == "warning"
    assert "Gateway API v1.0.0 to v1.4.1's experimental channel accept the object" in finding.message
    assert pl7(lint_paths([path], channel="experimental", gateway_api_version="v1.5.1"))[0][2] == "error"
    assert pl7(lint_paths([path], channel="standard", gateway_api_version="v1.6.1")) == []


def test_an_example_the_standard_channel_refuses_for_not_knowing_the_field_reports_the_experimental_mistake() -> None:
    # The ExternalAuth filter exists in the experimental channel only (v1.4 on); the example's
    # mistake is that the filter has no `externalAuth`. With the channel unknown, every plausible
    # schema refuses the object: the verdict reported is the one it fails least, ties going to
    # the newest release's experimental channel, whose CEL rule says what is wrong.
    path = INVALID / "experimental" / "httproute" / "invalid-filter-externalauth-empty.yaml"
    (finding,) = [f for f in lint_paths([path]).findings if f.rule.startswith("PL7")]
    assert (finding.rule, finding.severity.label) == ("PL704", "error")
    assert "filter.externalAuth must be specified for ExternalAuth filter.type" in finding.message
    assert finding.message.endswith("no bundled release of Gateway API v1.0.0 to v1.6.1 in either channel accepts the object")


def test_the_vendored_invalid_examples_are_gateway_api_s() -> None:
    assert len(STANDARD) == 32 and len(EXPERIMENTAL) == 4
    for path in [*STANDARD, *EXPERIMENTAL]:
        for doc in yaml.safe_load_all(path.read_text()):
            assert doc["apiVersion"].startswith("gateway.networking.k8s.io/")


# -- inference: a GatewayClass's implementation, the CRDs' annotations --------------------------------

TLS_ROUTE = """\
apiVersion: gateway.networking.k8s.io/v1alpha2
kind: TLSRoute
metadata: {name: db, namespace: apps}
spec:
  parentRefs: [{name: edge}]
  hostnames: [db.example.com]
  rules: [{backendRefs: [{name: db, port: 5432}]}]
"""

EG_CLASS = """\
---
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: eg}
spec: {controllerName: gateway.envoyproxy.io/gatewayclass-controller}
"""


def test_tlsroute_v1alpha2_under_an_envoy_gateway_class_is_served() -> None:
    # Envoy Gateway's installer ships the experimental channel, which serves TLSRoute v1alpha2.
    result = lint_text(TLS_ROUTE + EG_CLASS)
    assert [r for r, _, _ in pl7(result) if r in ("PL705", "PL706")] == []
    cluster = result.project.index.cluster()
    assert cluster.channel.value == "experimental"
    assert cluster.channel.source.startswith("inferred from envoy-gateway (inferred from GatewayClass eg (input.yaml:9)")
    assert cluster.release.value is None


def test_tlsroute_v1alpha2_with_no_cluster_known_is_a_warning_naming_the_channel() -> None:
    (finding,) = [f for f in lint_text(TLS_ROUTE).findings if f.rule == "PL705"]
    assert finding.severity.label == "warning"
    assert "served only by Gateway API v1.0.0 to v1.6.1's experimental channel" in finding.message


def test_a_declared_channel_wins_over_the_inferred_one() -> None:
    # TLSRoute v1alpha2 with `channel: standard` declared: no bundled release's standard CRD serves it.
    result = lint_text(TLS_ROUTE + EG_CLASS, channel="standard")
    assert pl7(result)[0] == ("PL705", "apiVersion", "error")
    assert result.project.index.cluster().channel.source == "declared in the test"


def _crd(release: str, channel: str, kind_file: str) -> str:
    return (CRDS / release / channel / kind_file).read_text(encoding="utf-8")


def test_the_crds_in_the_input_win_over_an_implementation_s_default() -> None:
    # A Gateway API v1.3.0 standard HTTPRoute CRD in the input names its release and channel
    # (gateway.networking.k8s.io/bundle-version v1.3.0, /channel standard): the TLSRoute, whose
    # CRD is not in the input, is judged against v1.3.0's standard channel, which has no TLSRoute.
    text = _crd("v1.3.0", "standard", "gateway.networking.k8s.io_httproutes.yaml") + "---\n" + TLS_ROUTE + EG_CLASS
    result = lint_text(text)
    cluster = result.project.index.cluster()
    assert (cluster.release.value, cluster.channel.value) == ("v1.3.0", "standard")
    assert "gateway.networking.k8s.io/bundle-version v1.3.0" in cluster.release.source
    assert [(r, s) for r, _, s in pl7(result) if r == "PL705"] == [("PL705", "error")]


def test_the_crds_in_the_input_win_over_the_defaults() -> None:
    # v1.3.0's experimental channel: ExternalAuth (a v1.4 filter) is refused, as an error.
    route = """\
---
apiVersion: gateway.networking.k8s.io/v1
kind: GRPCRoute
metadata: {name: g, namespace: apps}
spec:
  parentRefs: [{name: edge}]
  rules: [{backendRefs: [{name: g, port: 50051}], sessionPersistence: {sessionName: s, type: Cookie}}]
"""
    text = _crd("v1.3.0", "experimental", "gateway.networking.k8s.io_httproutes.yaml") + route
    result = lint_text(text)
    cluster = result.project.index.cluster()
    assert (cluster.release.value, cluster.channel.value) == ("v1.3.0", "experimental")
    # GRPCRoute's sessionPersistence is in v1.3.0's experimental channel: nothing to report.
    assert [r for r, _, _ in pl7(result)] == []
    # Without the CRD the channel is unknown: the experimental field is a warning.
    assert ("PL706", "spec.rules[0].sessionPersistence", "warning") in pl7(lint_text(route))


def test_a_release_of_a_bundled_minor_stands_for_its_patch() -> None:
    assert [schemas.release_key(v) for v in ("v1.2.0", "v1.10.0")] == [(1, 2, 0), (1, 10, 0)]
    from policylint.k8s.cluster import bundled_release

    assert bundled_release("v1.2.0") == "v1.2.1" and bundled_release("v1.6.1") == "v1.6.1"
    assert bundled_release("v1.7.0") is None


# -- --show-config -------------------------------------------------------------------------------


def test_show_config_shows_each_part_of_the_cluster_and_its_source(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / ".git").mkdir()
    (tmp_path / "m.yaml").write_text(TLS_ROUTE + EG_CLASS)
    (tmp_path / ".policylint.yaml").write_text("paths: [m.yaml]\ngateway-api-version: v1.4.1\n")
    lines = invoke("check", "--show-config").stdout.splitlines()
    assert "cluster.gateway-api-version: v1.4.1  # declared in .policylint.yaml:2" in lines
    assert any(
        line.startswith("cluster.channel: experimental  # inferred from envoy-gateway")
        and "its installer ships the experimental channel's CRDs by default" in line
        for line in lines
    )
    assert (
        "cluster.implementations[]: envoy-gateway  # inferred from GatewayClass eg (m.yaml:9): controllerName gateway.envoyproxy.io/gatewayclass-controller"
        in lines
    )
    flagged = invoke(
        "check", "--show-config", "--channel", "standard", "--implementation", "envoy-gateway@v1.5"
    ).stdout.splitlines()
    assert "cluster.channel: standard  # declared in command line" in flagged
    assert "cluster.implementations[]: envoy-gateway@v1.5  # declared in command line" in flagged
    unknown = invoke("check", "--show-config", "--implementation", "nginx-gateway-fabric").stdout
    assert "cluster.channel: experimental" in unknown  # the class still shows Envoy Gateway
    bad = invoke("check", "--show-config", "--implementation", "envoy")
    assert bad.exit_code == 2 and "unknown implementation 'envoy'" in bad.stderr


def test_config_without_paths_shows_the_declared_cluster(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / ".git").mkdir()
    (tmp_path / ".policylint.yaml").write_text("channel: experimental\nimplementations: [envoy-gateway]\n")
    lines = invoke("config").stdout.splitlines()
    assert "# the cluster, declared or inferred from no input (no paths given)" in lines
    assert "cluster.gateway-api-version: unknown  # unknown" in lines
    assert "cluster.channel: experimental  # declared in .policylint.yaml:1" in lines
    assert "cluster.implementations[]: envoy-gateway  # declared in .policylint.yaml:2" in lines


# -- schemas load per kind and release -----------------------------------------------------------


def test_a_run_reads_only_the_schemas_it_looks_up() -> None:
    schemas._schema.cache_clear()
    lint_text(GATEWAY)
    # The Gateway's schemas of the plausible releases and channels (the first refuses the object,
    # so the others are asked too): no HTTPRoute's, no vendor's.
    read = schemas._schema.cache_info().currsize
    gateways = {e["schema"] for e in schemas._entries() if e["kind"] == "Gateway" and e["version"] == "v1"}
    assert 0 < read <= len(gateways)


# -- cost of an unknown cluster -----------------------------------------------------------------


def test_releases_share_the_schema_nodes_they_hold_alike() -> None:
    """A node two releases hold alike is one object: the admission memo tables, keyed by node,
    answer for it once whichever release asks (policylint.k8s.schemas._interned)."""
    key = ("gateway.networking.k8s.io", "HTTPRoute", "v1")
    old, _ = schemas.schemas("standard", "v1.5.1")[key]
    new, _ = schemas.schemas("experimental", "v1.6.1")[key]
    assert old is not new  # the releases differ (the experimental channel has more fields)
    hostnames = ("properties", "spec", "properties", "hostnames")
    a, b = old, new
    for part in hostnames:
        a, b = a[part], b[part]
    assert a == b and a is b


def test_a_refused_object_is_walked_once_per_plausible_schema_however_many_findings(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each finding of an object the first plausible schema refuses asks every other plausible
    schema whether it admits the object (policylint.rules.releases): that answer is worked out
    once per schema, not once per finding, or a large refused object costs findings x walks."""
    from policylint.k8s import admission

    walks: list[str] = []
    real = admission.violations

    def counting(data: Any, *args: Any, **kwargs: Any) -> Any:
        walks.append(str(data.get("metadata", {}).get("name")))
        return real(data, *args, **kwargs)

    monkeypatch.setattr(admission, "violations", counting)
    matches = "".join(f"    - path: {{type: Prefixx, value: /p{i}}}\n" for i in range(40))
    route = (
        "apiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\nmetadata: {name: many, namespace: app}\n"
        f"spec:\n  rules:\n  - matches:\n{matches}"
    )
    result = lint_text(route)
    refusals = [f for f in result.findings if f.rule == "PL703" and f.path.endswith(".path.type")]
    assert len(refusals) == 40
    catalogue = result.project.admissions().catalogue
    distinct = {id(found[0]) for _, _, found in catalogue.plausible(("gateway.networking.k8s.io", "HTTPRoute", "v1")) if found}
    assert walks.count("many") <= len(distinct)


# -- every implementation's installer: which channel it ships, or leaves to the user ------------------
#
# Read in each project's installer (profile `gatewayAPI`, which cites it): GKE installs and manages
# the standard channel's CRDs (`--gateway-api=standard`); NGINX Gateway Fabric's chart, Istio's
# installers, Kuadrant's operator chart and Linkerd's CRD chart install none, and their
# documentation has the user install the standard channel's.

GKE_CLASS = """\
---
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: gke}
spec: {controllerName: networking.gke.io/gateway}
"""

ISTIO_CLASS = """\
---
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: istio}
spec: {controllerName: istio.io/gateway-controller}
"""


def test_a_gke_class_shows_the_standard_channel_gke_installs() -> None:
    result = lint_text(TLS_ROUTE + GKE_CLASS)
    cluster = result.project.index.cluster()
    assert cluster.channel.value == "standard"
    assert cluster.channel.source == (
        "inferred from gke (inferred from GatewayClass gke (input.yaml:9): controllerName networking.gke.io/gateway): its"
        " installer ships the standard channel's CRDs by default"
        " (https://cloud.google.com/kubernetes-engine/docs/how-to/deploying-gateways#enable-gateway)"
    )
    # No bundled release's standard channel serves TLSRoute v1alpha2: an error.
    assert [(r, s) for r, _, s in pl7(result) if r == "PL705"] == [("PL705", "error")]


def test_an_installer_that_leaves_the_crds_to_the_user_decides_no_channel_and_says_what_its_docs_install() -> None:
    result = lint_text(TLS_ROUTE + ISTIO_CLASS)
    channel = result.project.index.cluster().channel
    assert channel.value is None
    assert channel.source == (
        "unknown: the implementations' installers leave the Gateway API CRDs to the user (istio's documentation installs"
        " the standard channel's CRDs (https://github.com/istio/istio/blob/1.30.3/samples/helloworld/gateway-api/README.md))"
    )
    assert [(r, s) for r, _, s in pl7(result) if r == "PL705"] == [("PL705", "warning")]
    # Beside an installer that ships the CRDs, that one's channel is the cluster's: GKE's.
    both = lint_text(TLS_ROUTE + ISTIO_CLASS + GKE_CLASS)
    assert both.project.index.cluster().channel.value == "standard"


@pytest.mark.parametrize(
    ("written", "project", "release"),
    [
        ("kuadrant@v1.4", "kuadrant", "v1.4.6"),
        ("linkerd@2.19", "linkerd", "version-2.19"),
        ("nginx-gateway-fabric@v2.5", "nginx-gateway-fabric", "v2.5.1"),
    ],
)
def test_every_vendor_with_bundled_releases_can_be_declared(
    written: str, project: str, release: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / ".git").mkdir()
    (tmp_path / ".policylint.yaml").write_text(f"implementations: [{written}]\n")
    result = invoke("config")
    assert result.exit_code == 0, result.stderr
    assert f"cluster.schemas.{project}: {release}  # declared in .policylint.yaml:1: {written}" in result.stdout
