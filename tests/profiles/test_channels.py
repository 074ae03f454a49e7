"""The Gateway API channel and release the schema rules read (`--channel`, `--gateway-api-version`,
the configuration keys `channel` and `gateway-api-version`): which versions each channel's CRDs
serve (PL705), which fields only the experimental channel has (PL706, not PL702), and PL703's
`pattern` (RE2) and `format` checks (policylint.k8s.strformats) and schema alternatives (allOf,
anyOf, oneOf, not).

Every expected value is read from the vendored CRDs of Gateway API v1.6.1
(tests/data/crds/gateway-api/v1.6.1/{standard,experimental}/) or from kube-openapi's strfmt
(k8s.io/kube-openapi/pkg/validation/strfmt), not from policylint's output.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from policylint.cli import cli
from policylint.findings import Severity
from policylint.k8s import schemas, strformats
from tests.lintutil import lint_paths, lint_text, only
from tests.manifests import crd

GW = "gateway.networking.k8s.io"
XGW = "gateway.networking.x-k8s.io"


def invoke(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args))


def rules_and_paths(result: object, *rules: str) -> list[tuple[str, str]]:
    return [(f.rule, f.path) for f in result.findings if f.rule in rules]  # type: ignore[attr-defined]


# -- the bundled data --------------------------------------------------------------------------------


def test_the_bundled_releases_are_the_data_s() -> None:
    # The newest patch release of every minor release from v1.0 (tests/data/crds/SOURCES.md).
    assert (
        schemas.bundled_gateway_api_versions()
        == schemas.GATEWAY_API_VERSIONS
        == ("v1.0.0", "v1.1.1", "v1.2.1", "v1.3.0", "v1.4.1", "v1.5.1", "v1.6.1")
    )
    assert schemas.DEFAULT_GATEWAY_API_VERSION == "v1.6.1" and schemas.DEFAULT_CHANNEL == "standard"
    assert schemas.gateway_api_groups() == {GW, XGW}


def test_served_versions_per_channel() -> None:
    # `spec.versions[]` with `served: true` in each channel's CRD file.
    served = schemas.gateway_api_served("v1.6.1")
    assert served[(GW, "TLSRoute")] == {"standard": ("v1",), "experimental": ("v1", "v1alpha2", "v1alpha3")}
    assert served[(GW, "TCPRoute")] == {"standard": ("v1",), "experimental": ("v1", "v1alpha2")}
    assert served[(GW, "BackendTLSPolicy")] == {"standard": ("v1",), "experimental": ("v1", "v1alpha3")}
    assert served[(GW, "HTTPRoute")] == {"standard": ("v1", "v1beta1"), "experimental": ("v1", "v1beta1")}
    for kind in ("XBackend", "XBackendTrafficPolicy", "XMesh"):
        assert served[(XGW, kind)] == {"standard": (), "experimental": ("v1alpha1",)}
    # A release not bundled has nothing; the vendor CRDs are in every release's schemas.
    assert schemas.gateway_api_served("v1.5.0") == {}
    btp = ("gateway.envoyproxy.io", "BackendTrafficPolicy", "v1alpha1")
    assert btp in schemas.schemas("standard", "v1.6.1") and btp in schemas.schemas("experimental", "v1.6.1")
    assert (GW, "HTTPRoute", "v1") not in schemas.schemas("standard", "v1.5.0")


# -- the same input, standard and experimental ------------------------------------------------------

ROUTES = """\
apiVersion: gateway.networking.k8s.io/v1alpha2
kind: TLSRoute
metadata: {name: db, namespace: apps}
spec:
  parentRefs: [{name: edge}]
  rules: [{backendRefs: [{name: db, port: 5432}]}]
---
apiVersion: gateway.networking.x-k8s.io/v1alpha1
kind: XBackendTrafficPolicy
metadata: {name: db-retries, namespace: apps}
spec:
  targetRefs: [{group: "", kind: Service, name: db}]
  retryConstraint: {budget: {percent: 20}}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: web, namespace: apps}
spec:
  parentRefs: [{name: edge}]
  rules:
  - backendRefs: [{name: web, port: 80, wieght: 1}]
    sessionPersistence: {sessionName: s}
    filters:
    - type: ExternalAuth
      externalAuth: {protocol: HTTP, backendRef: {name: auth, port: 8080}}
"""


def test_standard_channel_reports_what_only_the_experimental_channel_has() -> None:
    result = lint_text(ROUTES, channel="standard", gateway_api_version="v1.6.1")
    assert rules_and_paths(result, "PL702", "PL705", "PL706") == [
        ("PL705", "apiVersion"),  # TLSRoute v1alpha2: the standard CRD serves v1 only
        ("PL705", "kind"),  # XBackendTrafficPolicy: no CRD in the standard channel
        ("PL702", "spec.rules[0].backendRefs[0].wieght"),  # a typo, in neither channel
        ("PL706", "spec.rules[0].sessionPersistence"),
        ("PL706", "spec.rules[0].filters[0].externalAuth"),
    ]
    tls, xbtp = only(result, "PL705")
    assert tls.severity.label == "error" and "which serves v1:" in tls.message
    assert "the experimental channel's CRD serves it" in tls.message and "--channel experimental" in tls.hint
    assert "is not a kind of Gateway API v1.6.1's standard channel" in xbtp.message
    assert "the experimental channel's CRD serves gateway.networking.x-k8s.io/v1alpha1" in xbtp.message
    session, _ = only(result, "PL706")
    assert session.severity.label == "error"
    assert "standard channel CRD does not define it, only the experimental channel's does" in session.message
    # The filter type ExternalAuth is an enum value only the experimental channel adds.
    (enum,) = [f for f in only(result, "PL703") if f.path == "spec.rules[0].filters[0].type"]
    assert enum.severity.label == "error"
    assert enum.message.endswith(
        "; the cluster runs Gateway API v1.6.1 (declared in the test), standard channel (declared in the test)"
    )


def test_with_no_channel_known_what_the_experimental_channel_accepts_is_a_warning_naming_it() -> None:
    result = lint_text(ROUTES)
    found = {
        (f.rule, f.path, f.object.name): f for f in result.findings if f.rule in ("PL702", "PL703", "PL704", "PL705", "PL706")
    }
    # TLSRoute v1alpha2: every bundled release's experimental channel serves it (v1.0.0 to v1.6.1).
    tls = found[("PL705", "apiVersion", "db")]
    assert tls.severity.label == "warning"
    assert tls.message.startswith(
        "TLSRoute gateway.networking.k8s.io/v1alpha2 is served only by Gateway API v1.0.0 to v1.6.1's experimental channel"
    )
    assert "declare the cluster with `gateway-api-version` and `channel`" in tls.message
    # The route `web`: the standard channel refuses its ExternalAuth filter type, and the
    # experimental channel (v1.4 on) its externalAuth, which lacks `http` for protocol HTTP: no
    # bundled release admits it, and the experimental channel's CEL rule says why, as an error.
    refused = found[("PL704", "spec.rules[0].filters[0].externalAuth", "web")]
    assert refused.severity.label == "error"
    assert "http must be specified when protocol is set to 'HTTP'" in refused.message
    # A typo no release defines stays an error.
    typo = found[("PL702", "spec.rules[0].backendRefs[0].wieght", "web")]
    assert typo.severity.label == "error"
    assert typo.message.endswith("no bundled release of Gateway API v1.0.0 to v1.6.1 in either channel accepts it")


SESSION = """\
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: web, namespace: apps}
spec:
  parentRefs: [{name: edge}]
  rules:
  - backendRefs: [{name: web, port: 80}]
    sessionPersistence: {sessionName: web-session, type: Cookie}
    filters:
    - type: ExternalAuth
      externalAuth: {protocol: HTTP, backendRef: {name: auth, port: 8080}, http: {}}
"""


def test_with_no_channel_known_an_experimental_field_and_value_are_warnings_naming_the_releases() -> None:
    found = {(f.rule, f.path): f for f in lint_text(SESSION).findings if f.rule in ("PL702", "PL703", "PL704", "PL706")}
    assert sorted(found) == [
        ("PL703", "spec.rules[0].filters[0].type"),
        ("PL706", "spec.rules[0].filters[0].externalAuth"),
        ("PL706", "spec.rules[0].sessionPersistence"),
    ]
    assert all(f.severity.label == "warning" for f in found.values())
    # sessionPersistence on a rule: experimental since v1.1 (GEP-1619), not in v1.0.0's CRD.
    assert (
        "Gateway API v1.1.1 to v1.6.1's experimental channel accept it"
        in found[("PL706", "spec.rules[0].sessionPersistence")].message
    )
    # The filter type ExternalAuth: in the experimental channel's HTTPRoute CRD from v1.4 (GEP-1494;
    # not in tests/data/crds/gateway-api/v1.3.0/experimental/, in v1.4.1's).
    enum = found[("PL703", "spec.rules[0].filters[0].type")]
    assert "Gateway API v1.4.1 to v1.6.1's experimental channel accept the object" in enum.message


def test_experimental_channel_accepts_them() -> None:
    result = lint_text(ROUTES, channel="experimental")
    assert rules_and_paths(result, "PL702", "PL703", "PL705", "PL706") == [
        ("PL702", "spec.rules[0].backendRefs[0].wieght"),
    ]


def test_a_version_neither_channel_serves_and_a_kind_gateway_api_lacks() -> None:
    text = """\
apiVersion: gateway.networking.k8s.io/v1alpha2
kind: HTTPRoute
metadata: {name: old, namespace: apps}
spec: {}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HttpRoute
metadata: {name: typo, namespace: apps}
spec: {}
"""
    for channel in ("standard", "experimental"):
        old, typo = only(lint_text(text, channel=channel), "PL705")
        assert (old.path, typo.path) == ("apiVersion", "kind")
        assert f"is not served by Gateway API v1.6.1's {channel} channel CRD, which serves v1, v1beta1" in old.message
        assert "channel's CRD serves it" not in old.message
        assert old.hint == "Use gateway.networking.k8s.io/v1."
        assert "has no kind 'HttpRoute' in gateway.networking.k8s.io (in either channel)" in typo.message
        assert typo.hint == "Did you mean `HTTPRoute`?"


def test_a_vendor_version_no_bundled_release_serves_is_an_error() -> None:
    # Envoy Gateway serves its policies as v1alpha1 only, in every bundled release (v1.6.7 to
    # v1.9.0; api/v1alpha1 is its only API package): v1alpha2 fails on every cluster the bundle
    # knows, so it is an error (docs/semantics.md#the-cluster-model), naming the newer-release escape.
    text = """\
apiVersion: gateway.envoyproxy.io/v1alpha2
kind: BackendTrafficPolicy
metadata: {name: p, namespace: apps}
spec: {targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: web}]}
"""
    (finding,) = only(lint_text(text), "PL705")
    assert finding.severity is Severity.ERROR and finding.line == 1
    assert "not served by any bundled release of envoy-gateway (v1.6.7 to v1.9.0), which serves v1alpha1" in finding.message
    assert "if the cluster runs a release newer than envoy-gateway v1.9.0, lint with its CRDs (--crd)" in finding.message
    assert finding.hint == "Use gateway.envoyproxy.io/v1alpha1."


# -- a CRD in the input, or given with --crd, decides -----------------------------------------------

TLSROUTE_CRD = """\
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: tlsroutes.gateway.networking.k8s.io}
spec:
  group: gateway.networking.k8s.io
  names: {kind: TLSRoute, plural: tlsroutes}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              parentRefs: {type: array, items: {type: object, x-kubernetes-preserve-unknown-fields: true}}
              rules: {type: array, items: {type: object, x-kubernetes-preserve-unknown-fields: true}}
  - name: v1alpha2
    served: SERVED
    storage: false
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              parentRefs: {type: array, items: {type: object, x-kubernetes-preserve-unknown-fields: true}}
              rules: {type: array, items: {type: object, x-kubernetes-preserve-unknown-fields: true}}
              extra: {type: string}
"""
TLSROUTE = """\
apiVersion: gateway.networking.k8s.io/v1alpha2
kind: TLSRoute
metadata: {name: db, namespace: apps}
spec:
  parentRefs: [{name: edge}]
  rules: [{backendRefs: [{name: db, port: 5432}]}]
  extra: x
---
"""


def test_a_crd_in_the_input_that_serves_the_version_takes_the_bundled_channel_s_place() -> None:
    result = lint_text(TLSROUTE + TLSROUTE_CRD.replace("SERVED", "true"))
    assert only(result, "PL705") == [] and only(result, "PL706") == []
    # Its schema decides the fields: `extra` is one of v1alpha2's there.
    assert [f for f in only(result, "PL702") if f.object is not None and f.object.kind == "TLSRoute"] == []


def test_a_crd_in_the_input_that_does_not_serve_the_version_is_an_error() -> None:
    result = lint_text(TLSROUTE + TLSROUTE_CRD.replace("SERVED", "false"), channel="experimental")
    (finding,) = only(result, "PL705")
    assert finding.severity.label == "error" and finding.line == 1
    assert "is not served by its CRD in the input, which serves v1:" in finding.message
    assert [r.message for r in finding.related] == ["its CRD's versions"]
    assert finding.related[0].line == 16  # spec.versions of the CRD (line 8 of its document)


def test_a_crd_given_with_crd_decides_too(tmp_path: Path) -> None:
    crd = tmp_path / "crds" / "tlsroutes.yaml"
    crd.parent.mkdir()
    crd.write_text(TLSROUTE_CRD.replace("SERVED", "false"))
    route = tmp_path / "route.yaml"
    route.write_text(TLSROUTE.replace("  extra: x\n", "  typo: x\n"))
    result = lint_paths([route], crd_paths=[str(crd.parent)])
    (finding,) = only(result, "PL705")
    assert "is not served by its CRD given with --crd, which serves v1:" in finding.message and not finding.related
    # A version it serves: its schema decides, and an unknown field there is an error.
    route.write_text(TLSROUTE.replace("v1alpha2", "v1").replace("  extra: x\n", "  typo: x\n"))
    result = lint_paths([route], crd_paths=[str(crd.parent)])
    assert only(result, "PL705") == []
    (typo,) = only(result, "PL702")
    assert (typo.path, typo.severity.label) == ("spec.typo", "error") and "(its CRD given with --crd)" in typo.message


def test_a_crd_path_that_gives_no_crd_is_a_usage_error(tmp_path: Path) -> None:
    # A chart's templates (`{{ }}` lines) are no YAML a CRD can be read from: the kinds they were
    # meant to describe would go unchecked, so the run stops and says why.
    crds = tmp_path / "templates"
    crds.mkdir()
    (crds / "server.yaml").write_text(
        TLSROUTE_CRD.replace("SERVED", "true").replace("  names:", '  {{- include "x" . }}\n  names:')
    )
    route = tmp_path / "route.yaml"
    route.write_text(TLSROUTE)
    result = invoke("check", "--no-cache", "--isolated", "--crd", str(crds), str(route))
    assert result.exit_code == 2
    assert f"--crd {crds}: no CustomResourceDefinition could be read ({crds / 'server.yaml'}:" in result.output
    assert "unrendered template marker" in result.output
    # Files without any CRD at all.
    (crds / "server.yaml").write_text(TLSROUTE)
    result = invoke("check", "--no-cache", "--isolated", "--crd", str(crds), str(route))
    assert result.exit_code == 2 and f"--crd {crds}: no CustomResourceDefinition in it" in result.output


def test_a_broken_file_beside_the_crds_is_said_and_the_rest_read(tmp_path: Path) -> None:
    crds = tmp_path / "crds"
    crds.mkdir()
    (crds / "tlsroutes.yaml").write_text(TLSROUTE_CRD.replace("SERVED", "false"))
    (crds / "broken.yaml").write_text("kind: [\n")
    route = tmp_path / "route.yaml"
    route.write_text(TLSROUTE)
    result = lint_paths([route], crd_paths=[str(crds)])
    assert only(result, "PL705")  # the CRD that could be read decides
    # At the end of the content, where the flow list stops (the input ends on the next line).
    assert any(note.startswith(f"--crd {crds / 'broken.yaml'}:1:8: YAML syntax error") for note in result.notes), result.notes
    assert not any(f.file.endswith("broken.yaml") for f in result.findings)  # context, not linted


# -- pattern and format (PL703) ---------------------------------------------------------------------

GATEWAY = """\
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: edge, namespace: apps}
spec:
  gatewayClassName: eg
  listeners:
  - name: https
    protocol: HTTPS
    port: 443
    hostname: HOSTNAME
    tls: {certificateRefs: [{name: cert}]}
"""


@pytest.mark.parametrize(
    ("hostname", "rejected"),
    [
        # The CRD's listener hostname pattern: ^(\*\.)?[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$
        ("web.example.com", False),
        ("*.example.com", False),
        ("Web.Example.com", True),  # uppercase
        ("web_1.example.com", True),  # underscore
        ("-web.example.com", True),  # a label starting with a hyphen
        ('"web.example.com\\n"', True),  # Go's `$` is the end of the text, not before a final newline
    ],
)
def test_a_pattern_is_matched_as_go_matches_it(hostname: str, rejected: bool) -> None:
    result = lint_text(GATEWAY.replace("HOSTNAME", hostname))
    found = [f for f in only(result, "PL703") if f.path == "spec.listeners[0].hostname"]
    assert bool(found) == rejected, [f.message for f in found]
    if rejected:
        (finding,) = found
        assert (finding.line, finding.column) == (10, 5)  # at its key, as every finding on a field
        assert "which does not match the schema's pattern `^(\\*\\.)?[a-z0-9]" in finding.message
        # Gateway API's Hostname pattern is the same in every bundled release, v1.0.0 to v1.6.1:
        # with no release declared, what all of them refuse is an error.
        assert finding.severity.label == "error"
        assert finding.message.endswith("no bundled release of Gateway API v1.0.0 to v1.6.1 in either channel accepts the object")


@pytest.mark.parametrize(
    ("hostname", "placeholder"),
    [
        ("app.${ZONE_ROOT_DOMAIN}", "'${ZONE_ROOT_DOMAIN}'"),  # envsubst, as Kuadrant's examples/dnspolicy/gateway.yaml
        ('"{{ .Values.host }}.example.com"', "'{{ .Values.host }}'"),  # a Helm template's action, quoted
        ("$(HOST)", "'$(HOST)'"),  # Kustomize vars
        ('"<your-domain>"', "'<your-domain>'"),  # a documentation placeholder
        ("web.${A}.${B}", "'${A}'"),  # the first of several
    ],
)
def test_a_pattern_refusing_only_a_placeholder_says_to_substitute_it(hostname: str, placeholder: str) -> None:
    # Rendered with a name in its place the value matches the pattern: the placeholder is what the
    # API server would refuse, so the finding says so instead of pointing at newer CRDs.
    result = lint_text(GATEWAY.replace("HOSTNAME", hostname))
    (finding,) = [f for f in only(result, "PL703") if f.path == "spec.listeners[0].hostname"]
    assert (finding.line, finding.column) == (10, 5)
    assert finding.message.startswith(f"spec.listeners[0].hostname holds the unrendered placeholder {placeholder}")
    assert "which does not match the schema's pattern" in finding.message
    assert finding.message.endswith("(the gateway-api v1.6.1 CRD): the API server rejects the object as written")
    assert finding.hint is not None and finding.hint.startswith("Substitute the placeholder first")
    assert finding.severity.label == "warning"


def test_a_placeholder_that_is_not_the_cause_leaves_the_plain_message() -> None:
    # `web_` has an underscore, which no rendering of `${ZONE}` makes valid.
    result = lint_text(GATEWAY.replace("HOSTNAME", "web_${ZONE}.example.com"))
    (finding,) = [f for f in only(result, "PL703") if f.path == "spec.listeners[0].hostname"]
    assert finding.message.startswith("spec.listeners[0].hostname is 'web_${ZONE}.example.com', which does not match")
    assert finding.message.endswith("no bundled release of Gateway API v1.0.0 to v1.6.1 in either channel accepts the object")


def test_a_format_refusing_only_a_placeholder_says_to_substitute_it() -> None:
    # `cidr` (strfmt IsCIDR) takes no letters: the number stand-in renders `10.${OCTET}.0.0/8` valid.
    text = POLICY_CRD + '  subnet: "10.${OCTET}.0.0/8"\n'
    (finding,) = only(lint_text(text), "PL703")
    assert finding.message.startswith(
        "spec.subnet holds the unrendered placeholder '${OCTET}' (is '10.${OCTET}.0.0/8'), not a valid cidr (the schema's format)"
    )
    assert finding.severity.label == "error"  # a CRD in the input


def test_placeholders_are_found_in_linear_time() -> None:
    from policylint.input.load import unrendered

    assert unrendered("{{ ${x} }}-$(y)-<z>") == ["{{ ${x} }}", "$(y)", "<z>"]  # one inside another counts once
    assert unrendered("a<b, <>, ${open") == []
    assert unrendered("a<b, <c>") == ["<c>"]
    assert len(unrendered("${a}" * 100_000)) == 16  # bounded
    assert unrendered("<" * 200_000 + "x") == []  # one pass, not one per `<`


ADDRESSES = """\
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: edge, namespace: apps}
spec:
  gatewayClassName: eg
  addresses:
  - {value: 10.0.0.1}
  - {type: IPAddress, value: "2001:db8::1"}
  - {type: Hostname, value: lb.example.com}
  - {type: example.com/pool, value: anything}
  - {type: IPAddress}
  - {type: IPAddress, value: not-an-ip}
  - {value: also-not-an-ip}
  listeners:
  - {name: http, protocol: HTTP, port: 80}
"""


def test_a_gateway_address_is_checked_by_its_schema_s_one_of() -> None:
    # GatewaySpecAddress: oneOf [{type: enum [IPAddress], value: anyOf [format ipv4, format ipv6]},
    # {type: not enum [IPAddress]}], and `type` defaults to IPAddress (v1.6.1 gateways CRD). The API
    # server defaults before it validates: an address without `type` must be an IP address.
    findings = only(lint_text(ADDRESSES), "PL703")
    assert [(f.path, f.line) for f in findings] == [("spec.addresses[5]", 12), ("spec.addresses[6]", 13)]
    assert findings[0].message.startswith(
        "spec.addresses[5] matches none of the schema's oneOf alternatives [1: value matches none of the schema's"
        " anyOf alternatives [1: is 'not-an-ip', not a valid ipv4 (the schema's format); 2: is 'not-an-ip', not a"
        " valid ipv6 (the schema's format)]; 2: type is 'IPAddress', which the schema's `not` excludes]"
    )
    assert "2: type is 'IPAddress', which the schema's `not` excludes" in findings[1].message  # the default's


def test_a_quantity_is_checked_by_every_pattern_of_its_all_of() -> None:
    # ClientTrafficPolicy connection.bufferLimit (Envoy Gateway v1.9.0 CRD): int-or-string, allOf two
    # patterns; `500m` matches the first (a quantity: milli) but not ^[1-9]+[0-9]*([EPTGMK]i|[EPTGMk])?$.
    policy = """\
apiVersion: gateway.envoyproxy.io/v1alpha1
kind: ClientTrafficPolicy
metadata: {name: limits, namespace: apps}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: edge}]
  connection: {bufferLimit: LIMIT}
"""
    (finding,) = only(lint_text(policy.replace("LIMIT", "500m")), "PL703")
    assert (finding.path, finding.line) == ("spec.connection.bufferLimit", 6)
    assert finding.message.startswith(
        "spec.connection.bufferLimit is '500m', which does not match the schema's pattern `^[1-9]+[0-9]*([EPTGMK]i|[EPTGMk])?$`"
    )
    assert only(lint_text(policy.replace("LIMIT", "500Mi")), "PL703") == []
    assert only(lint_text(policy.replace("LIMIT", "1024")), "PL703") == []


# As Linkerd's Server (policy.linkerd.io v1beta3): one selector or the other.
ALTERNATIVES_CRD = (
    crd(
        "Server",
        """\
            oneOf:
            - required: [podSelector]
            - required: [workloadSelector]
            anyOf:
            - required: [port]
            - required: [portName]
            properties:
              podSelector: {type: object, x-kubernetes-preserve-unknown-fields: true}
              workloadSelector: {type: object, x-kubernetes-preserve-unknown-fields: true}
              port: {type: integer}
              portName: {type: string, not: {enum: [admin]}}
""",
        labels="{}",
    )
    + "---\n"
)


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ("{podSelector: {}, port: 80}", []),
        ("{workloadSelector: {}, portName: http}", []),
        (
            "{podSelector: {}, workloadSelector: {}, port: 80}",
            [("spec", "spec matches 2 of the schema's oneOf alternatives, where exactly one must match")],
        ),
        (
            "{port: 80}",
            [
                (
                    "spec",
                    "spec matches none of the schema's oneOf alternatives [1: podSelector is required by the schema"
                    " and missing; 2: workloadSelector is required by the schema and missing]",
                )
            ],
        ),
        (
            "{podSelector: {}}",
            [
                (
                    "spec",
                    "spec matches none of the schema's anyOf alternatives [1: port is required by the schema and"
                    " missing; 2: portName is required by the schema and missing]",
                )
            ],
        ),
        (
            "{podSelector: {}, portName: admin}",
            [("spec.portName", "spec.portName is 'admin', which the schema's `not` excludes")],
        ),
    ],
)
def test_schema_alternatives_of_a_crd_in_the_input(spec: str, expected: list[tuple[str, str]]) -> None:
    text = ALTERNATIVES_CRD + f"apiVersion: example.com/v1\nkind: Server\nmetadata: {{name: s, namespace: apps}}\nspec: {spec}\n"
    findings = only(lint_text(text), "PL703")
    assert [(f.path, f.message.split(" (its CRD in the input)")[0]) for f in findings] == expected
    assert all(f.severity.label == "error" for f in findings)


POLICY_CRD = """\
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: stamppolicies.example.com}
spec:
  group: example.com
  names: {kind: StampPolicy, plural: stamppolicies}
  scope: Namespaced
  versions:
  - name: v1
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
              since: {type: string, format: date-time}
              payload: {type: string, format: byte}
              subnet: {type: string, format: cidr}
              size: {type: string, format: int32}
              code: {type: string, pattern: "(?=lookahead)x"}
              tag: {type: string, pattern: "^(a+)+$"}
---
apiVersion: example.com/v1
kind: StampPolicy
metadata: {name: p, namespace: apps}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: edge}]
"""


def test_formats_kubernetes_validates_and_patterns_re2_cannot_compile() -> None:
    good = POLICY_CRD + '  since: "2026-02-28T23:59:59Z"\n  payload: aGVsbG8=\n  subnet: 10.0.0.0/8\n  size: big\n'
    good += "  code: anything\n  tag: aaaa\n"
    assert only(lint_text(good), "PL703") == []
    bad = POLICY_CRD + '  since: "2026-02-29T10:00:00Z"\n  payload: "hello!"\n  subnet: 10.0.0.0/33\n'
    bad += "  tag: " + "a" * 5000 + "b\n"
    findings = only(lint_text(bad), "PL703")
    assert [(f.path, f.severity.label) for f in findings] == [
        ("spec.since", "error"),  # 2026 is not a leap year
        ("spec.payload", "error"),
        ("spec.subnet", "error"),
        ("spec.tag", "error"),  # RE2 in linear time, where a backtracking engine takes forever
    ]
    assert findings[0].message.startswith("spec.since is '2026-02-29T10:00:00Z', not a valid date-time (the schema's format)")
    assert "(?=lookahead)x" in strformats.uncompiled()  # RE2 has no lookahead: not checked, no crash


@pytest.mark.parametrize(
    ("fmt", "value", "valid"),
    [
        # strfmt IsDateTime: date, `t`, hh:mm:ss, optional fraction, `z` or an offset.
        ("date-time", "2024-02-29T23:59:59Z", True),
        ("datetime", "2024-01-02t03:04:05.123+02:00", True),
        ("date-time", "2024-01-02T24:00:00Z", False),
        ("date-time", "2024-01-02T03:04:05", False),
        ("date-time", "2024-01-02 03:04:05Z", False),
        ("date-time", "2023-02-29T00:00:00Z", False),
        # strfmt IsDate: Go's time.Parse("2006-01-02").
        ("date", "2024-04-30", True),
        ("date", "2024-04-31", False),
        ("date", "2024-4-30", False),
        # govalidator IsBase64: padded standard alphabet; the empty string is not base64 there.
        ("byte", "aGVsbG8=", True),
        ("byte", "aGVsbG8", False),
        ("byte", "", False),
        ("byte", "a-_b", False),
        # ParseIPSloppy + a dot; net.ParseIP + a colon; ParseCIDRSloppy.
        ("ipv4", "10.0.0.1", True),
        ("ipv4", "010.000.000.001", True),
        ("ipv4", "10.0.0", False),
        ("ipv4", "10.0.0.256", False),
        ("ipv6", "::1", True),
        ("ipv6", "fe80::1%eth0", False),
        ("ipv6", "10.0.0.1", False),
        ("cidr", "10.0.0.0/8", True),
        ("cidr", "::/0", True),
        ("cidr", "10.0.0.0/33", False),
        ("cidr", "10.0.0.0", False),
        # strfmt IsUUID / IsUUID4, case-insensitive.
        ("uuid", "123E4567-E89B-12D3-A456-426614174000", True),
        ("uuid4", "123e4567-e89b-12d3-a456-426614174000", False),
        ("uuid4", "123e4567-e89b-42d3-a456-426614174000", True),
        # strfmt IsHostname.
        ("hostname", "example.com", True),
        ("hostname", "-example.com", False),
        ("hostname", "a" * 64 + ".com", False),
    ],
)
def test_formats(fmt: str, value: str, valid: bool) -> None:
    assert strformats.format_ok(fmt, value) is valid


def test_formats_kubernetes_does_not_validate_are_ignored() -> None:
    for fmt in ("int32", "int64", "float", "k8s-example", "uri"):
        assert strformats.format_ok(fmt, "not really") is None
    assert strformats.format_ok("password", "anything") is True


def test_a_lone_surrogate_is_matched_not_a_crash() -> None:
    assert strformats.matches("^a.$", "a\ud800") is True  # U+FFFD, as Go's JSON decoder reads it
    assert strformats.matches("^[a-z]+$", "a\ud800") is False


# -- options ----------------------------------------------------------------------------------------


def test_an_unknown_release_or_channel_is_a_usage_error(tmp_path: Path) -> None:
    manifest = tmp_path / "m.yaml"
    manifest.write_text(ROUTES)
    result = invoke("check", str(manifest), "--gateway-api-version", "v1.7.0", "--no-cache")
    assert result.exit_code == 2 and result.stdout == ""
    assert "Gateway API v1.7.0 is not bundled (bundled: v1.0.0, v1.1.1, v1.2.1, v1.3.0, v1.4.1, v1.5.1, v1.6.1)" in result.stderr
    result = invoke("check", str(manifest), "--channel", "beta", "--no-cache")
    assert result.exit_code == 2 and "'beta' is not one of 'standard', 'experimental'" in result.stderr
    result = invoke("check", str(manifest), "--gateway-api-version", "v1.6.1", "--channel", "experimental", "--no-cache")
    assert result.exit_code == 1 and "PL705" not in result.stdout and "PL706" not in result.stdout


def test_the_configuration_keys_and_the_flag_over_them(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / ".git").mkdir()  # the configuration search stops at the repository root
    (tmp_path / "m.yaml").write_text(ROUTES)
    (tmp_path / ".policylint.yaml").write_text("channel: experimental\ngateway-api-version: v1.6.1\n")
    shown = invoke("config")
    assert 'channel: "experimental"  # .policylint.yaml:1' in shown.stdout
    assert 'gateway-api-version: "v1.6.1"  # .policylint.yaml:2' in shown.stdout
    result = invoke("check", "m.yaml", "--no-cache", "--select", "PL7")
    assert "PL705" not in result.stdout and "PL706" not in result.stdout
    result = invoke("check", "m.yaml", "--no-cache", "--select", "PL7", "--channel", "standard")
    assert "PL705" in result.stdout and "PL706" in result.stdout
    assert 'channel: "standard"  # command line' in invoke("check", "--show-config", "--channel", "standard").stdout


def test_diff_takes_the_channel(tmp_path: Path) -> None:
    result = invoke("diff", "--help")
    assert "--channel [standard|experimental]" in result.stdout and "--gateway-api-version VERSION" in result.stdout


def test_a_pattern_is_searched_in_the_values_bytes_with_characters_as_go_counts_them(monkeypatch: pytest.MonkeyPatch) -> None:
    # RE2 is handed the value's UTF-8 bytes, not the `str`: its Python wrapper maps a `str`
    # match's offsets back to characters, more than half of a search (each distinct value of a
    # run is searched once, thousands of them). The pattern still counts characters, not bytes,
    # as Go's regexp does on a UTF-8 string, and a lone surrogate is U+FFFD.
    searched: list[Any] = []
    compiled = strformats._compiled("^.{3}$")
    assert compiled is not None

    class Recording:
        def search(self, text: Any) -> Any:
            searched.append(text)
            return compiled.search(text)

    monkeypatch.setitem(strformats._COMPILED, "^.{3}$", Recording())
    monkeypatch.setattr(strformats, "_ANSWERS", {})  # no answer kept from another test
    values = ["äöü", "abc", "\u00e4b", "ab\ud800", "abcd", "日本語"]
    answers = [strformats.matches("^.{3}$", value) for value in values]
    assert answers == [True, True, False, True, False, True]
    assert [type(text) for text in searched] == [bytes] * len(values)  # before: str
    assert searched[0] == "äöü".encode()
