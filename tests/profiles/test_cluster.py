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

DATA = Path(__file__).resolve().parents[1] / "data"
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
# Every one of them is an error with default flags (the acceptance). Two need more than
# the first plausible schema:
# - gateway/invalid-tls-mode.yaml, an HTTPS listener in Passthrough mode: the CEL rule "tls mode
#   must be Terminate for protocol HTTPS" came in v1.1 (#2652, 2024-01-05). v1.0.0's CRD has no such
#   rule and its validating webhook (apis/v1/validation/gateway.go at v1.0.0) did not check the
#   mode either; the webhook was an optional install its changelog advised against on Kubernetes
#   1.25+. A v1.0.0 cluster stores the Gateway, but the listener has no meaning on any release
#   (TLSModeType at v1.0.0: "SSL passthrough is only supported by TLSRoute"): PL415, an error
#   whatever the release, and PL704 leaves the CEL rule's message to it.
# - experimental/httproute/invalid-header-value.yaml, a header value with CR and LF: only the
#   experimental channel's CRD from v1.5 has the RFC 7230 pattern (#3774); HTTP forbids the value
#   on every cluster (RFC 7230 section 3.2), so PL426 reports it, and PL703 says nothing more there.
HTTPS_PASSTHROUGH = "gateway/invalid-tls-mode.yaml"
HEADER_VALUE = "httproute/invalid-header-value.yaml"


def _errors(result: object) -> list[str]:
    return [f.rule for f in result.findings if f.severity.label == "error"]  # type: ignore[attr-defined]


@pytest.mark.parametrize("path", STANDARD, ids=[p.relative_to(INVALID).as_posix() for p in STANDARD])
def test_every_standard_invalid_example_is_an_error_with_default_flags(path: Path) -> None:
    assert _errors(lint_paths([path]))


@pytest.mark.parametrize("path", EXPERIMENTAL, ids=[p.relative_to(INVALID).as_posix() for p in EXPERIMENTAL])
def test_every_experimental_invalid_example_is_an_error_with_default_flags_and_on_its_channel(path: Path) -> None:
    # Upstream applies these with its experimental channel's CRDs only (SOURCES.md there), of the
    # same tag: v1.6.1.
    assert _errors(lint_paths([path]))
    assert _errors(lint_paths([path], channel="experimental", gateway_api_version="v1.6.1"))


def test_an_https_listener_in_passthrough_mode_is_an_error_on_every_release() -> None:
    path = INVALID / "standard" / HTTPS_PASSTHROUGH
    for flags in ({}, {"gateway_api_version": "v1.0.0"}, {"gateway_api_version": "v1.1.1"}):
        found = [(f.rule, f.path, f.severity.label) for f in lint_paths([path], **flags).findings if f.severity.label == "error"]
        assert found == [("PL415", "spec.listeners[0].tls.mode", "error")], flags


def test_a_header_value_http_forbids_is_an_error_whatever_the_channel_and_release() -> None:
    path = INVALID / "experimental" / HEADER_VALUE
    at = "spec.rules[0].filters[0].responseHeaderModifier.add[0].value"
    for flags in ({}, {"channel": "experimental"}, {"channel": "experimental", "gateway_api_version": "v1.5.1"}):
        result = lint_paths([path], **flags)
        assert [(f.rule, f.path, f.line) for f in result.findings if f.severity.label == "error"] == [("PL426", at, 12)]
        assert pl7(result) == []  # the pattern's finding would say the same


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


# -- an object the first plausible schema admits and others refuse ------------------------------------

# The CORS filter: in the experimental channel's HTTPRoute CRD from v1.3.0, in the standard one's
# from v1.5.1 (the `CORS` value of HTTPRouteFilter.type in tests/data/crds/gateway-api/*/*/
# gateway.networking.k8s.io_httproutes.yaml). The first plausible schema (v1.6.1, standard) admits
# the route; a cluster on an older release refuses it.
CORS_ROUTE = """\
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: web, namespace: apps}
spec:
  parentRefs: [{name: edge}]
  rules:
  - filters:
    - type: CORS
      cors:
        allowOrigins: ["https://app.example.com"]
    backendRefs: [{name: web, port: 80}]
"""


def test_an_object_the_first_schema_admits_is_a_warning_naming_the_releases_that_refuse_it() -> None:
    (finding,) = [f for f in lint_text(CORS_ROUTE).findings if f.rule.startswith("PL7")]
    assert (finding.rule, finding.path, finding.line, finding.severity.label) == (
        "PL703",
        "spec.rules[0].filters[0].type",
        8,
        "warning",
    )
    # The first refusing schema: the newest release that refuses it, the standard channel first.
    assert "(the gateway-api v1.4.1 CRD, standard channel): a cluster that runs it rejects the object" in finding.message
    assert (
        "Gateway API v1.0.0 to v1.4.1's standard channel and v1.0.0 to v1.2.1's experimental channel refuse the object"
        " and v1.5.1 to v1.6.1's standard channel and v1.3.0 to v1.6.1's experimental channel accept it" in finding.message
    )
    assert "declare the cluster with `gateway-api-version` and `channel`" in finding.message


def test_an_object_the_declared_cluster_admits_is_not_judged_by_other_releases() -> None:
    assert pl7(lint_text(CORS_ROUTE, gateway_api_version="v1.5.1", channel="standard")) == []
    assert pl7(lint_text(CORS_ROUTE, gateway_api_version="v1.4.1", channel="experimental")) == []
    # Declared, a release that refuses it is an error (and `cors` a field of its experimental channel).
    assert pl7(lint_text(CORS_ROUTE, gateway_api_version="v1.4.1", channel="standard")) == [
        ("PL703", "spec.rules[0].filters[0].type", "error"),
        ("PL706", "spec.rules[0].filters[0].cors", "error"),
    ]


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
