"""Upstream manifests their own suites apply to a real cluster, linted with default flags
(tests/data/upstream-valid/README.md says which files, from which commit, and why those).

What the API server admits is what these suites rely on, so the guarantee is about the findings
that stand for a refusal: the input problems (PL0xx) and the schema rules (PL7xx). With no
cluster declared none of them may be an error, and Envoy Gateway's files, whose installer ships
the experimental channel, get no PL705/PL706 at all once its GatewayClass is in the input
(docs/semantics.md#the-cluster-model). The references each file makes to objects it does not
hold (PL2xx, PL4xx) are the fragment's, not a refusal; the Gateway API examples are also checked
with those objects declared external, so that every other rule has its say.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from policylint.k8s.external import ExternalObjects
from tests.lintutil import lint_paths

CORPUS = Path(__file__).resolve().parents[1] / "data" / "upstream-valid"
EG = CORPUS / "envoy-gateway"
GA = CORPUS / "gateway-api"

# What the suites substitute before applying (the values they are given on the command line):
# Gateway API's conformance Applier sets every Gateway's gatewayClassName and every GatewayClass's
# controllerName and overlays the PLACEHOLDER_* addresses with the caller's address pools
# (conformance/utils/kubernetes/apply.go); Envoy Gateway runs both its e2e tests and the
# conformance suite with --gateway-class=envoy-gateway (tools/make/kube.mk), the class of
# test/config/gatewayclass.yaml. The addresses stand in for the pools its script passes
# (tools/hack/get-static-address-args.sh); documentation addresses (RFC 5737) keep them neutral.
ENVOY_GATEWAY_RUN = {
    "{GATEWAY_CLASS_NAME}": "envoy-gateway",
    "{GATEWAY_CONTROLLER_NAME}": "gateway.envoyproxy.io/gatewayclass-controller",
    "PLACEHOLDER_USABLE_ADDRS": "192.0.2.250",
    "PLACEHOLDER_UNUSABLE_ADDRS": "198.51.100.1",
}
EG_CLASS = EG / "test" / "config" / "gatewayclass.yaml"


def substituted(paths: list[Path], root: Path, into: Path) -> list[Path]:
    """Copies of `paths` (below `root`) in `into`, with the suites' placeholders replaced: one
    line for one line, so that a finding's line is the upstream file's."""
    out = []
    for path in paths:
        text = path.read_text(encoding="utf-8")
        for placeholder, value in ENVOY_GATEWAY_RUN.items():
            text = text.replace(placeholder, value)
        copy = into / path.relative_to(root)
        copy.parent.mkdir(parents=True, exist_ok=True)
        copy.write_text(text, encoding="utf-8")
        out.append(copy)
    return out


def refusals(result: object) -> list[tuple[str, str, int | None, str]]:
    """The errors that say the API server refuses something: input problems and schema rules."""
    return [
        (f.rule, Path(f.file).name, f.line, f.message)
        for f in result.findings  # type: ignore[attr-defined]
        if f.severity.label == "error" and f.rule[:3] in ("PL0", "PL7")
    ]


def errors(result: object) -> list[tuple[str, str, int | None, str]]:
    return [(f.rule, Path(f.file).name, f.line, f.message) for f in result.findings if f.severity.label == "error"]  # type: ignore[attr-defined]


def served(result: object) -> list[tuple[str, str, int | None]]:
    """PL705 (apiVersion not served) and PL706 (experimental field), at any severity."""
    return [(f.rule, Path(f.file).name, f.line) for f in result.findings if f.rule in ("PL705", "PL706")]  # type: ignore[attr-defined]


def _ids(paths: list[Path], root: Path) -> list[str]:
    return [p.relative_to(root).as_posix() for p in paths]


# -- Envoy Gateway: examples and e2e manifests ------------------------------------------------------

EG_EXAMPLES = sorted((EG / "examples").rglob("*.yaml"))
EG_E2E = sorted((EG / "test" / "e2e" / "testdata").glob("*.yaml"))
EG_BASE = EG / "test" / "e2e" / "base" / "manifests.yaml"


def test_envoy_gateway_examples_with_their_gateway_class_get_no_pl705_or_pl706() -> None:
    # quickstart.yaml holds GatewayClass eg, which the other examples' Gateways name; its
    # controller is Envoy Gateway's, whose installer ships the experimental channel: TLSRoute
    # v1alpha2 and BackendTLSPolicy v1alpha3 are served there.
    result = lint_paths([EG / "examples"])
    assert served(result) == []
    assert refusals(result) == []
    assert result.project.index.cluster().channel.value == "experimental"


# An upstream mistake the API server hides: `tcpKeepalive` indented under `backendSettings.retry`
# (it belongs to `backendSettings`, beside `retry`). No bundled release of Envoy Gateway (v1.6.7 to
# v1.9.0) defines it there, so the API server prunes it silently and the e2e test passes; PL702
# reports it as an error, as it does a field no Gateway API release defines.
EG_E2E_MISTAKES = {
    ("oidc-securitypolicy-backendcluster.yaml", 77): "'tcpKeepalive' is not a field in spec.oidc.provider.backendSettings.retry"
}


@pytest.mark.parametrize("path", EG_E2E, ids=_ids(EG_E2E, EG))
def test_each_envoy_gateway_e2e_manifest_as_its_suite_applies_it_gets_no_pl705_or_pl706(path: Path, tmp_path: Path) -> None:
    # The e2e suite applies its GatewayClass and base manifests, then each test's manifests.
    result = lint_paths(substituted([EG_CLASS, EG_BASE, path], EG, tmp_path))
    assert served(result) == []
    mistakes = [(rule, name, line) for rule, name, line, message in refusals(result) if (name, line) in EG_E2E_MISTAKES]
    assert [r for r in refusals(result) if (r[1], r[2]) not in EG_E2E_MISTAKES] == []
    for rule, name, line, message in refusals(result):
        if (name, line) in EG_E2E_MISTAKES:
            assert rule == "PL702" and message.startswith(EG_E2E_MISTAKES[name, line])
    assert len(mistakes) == sum(1 for file, _ in EG_E2E_MISTAKES if file == path.name)


@pytest.mark.parametrize("path", EG_EXAMPLES + EG_E2E, ids=_ids(EG_EXAMPLES + EG_E2E, EG))
def test_each_envoy_gateway_manifest_alone_gets_no_pl705_or_pl706_error(path: Path) -> None:
    # Alone, a file may hold no GatewayClass: the channel is then unknown, and what only the
    # experimental channel serves is a warning naming it, never an error.
    result = lint_paths([path])
    for finding in result.findings:
        if finding.rule in ("PL705", "PL706"):
            assert finding.severity.label == "warning"
            assert "experimental channel" in finding.message


def test_the_e2e_files_chosen_are_those_the_standard_channel_refuses() -> None:
    # The point of the choice (README): each e2e file uses what the standard channel lacks, so
    # that the tests above fail if the channel stops being inferred.
    for path in EG_E2E:
        result = lint_paths([path, EG_CLASS], channel="standard", gateway_api_version="v1.6.1")
        assert [r for r, _, _, _ in errors(result) if r in ("PL705", "PL706")], path.name


# -- Gateway API: examples (standard and experimental) ------------------------------------------------

GA_STANDARD = sorted((GA / "examples" / "standard").rglob("*.yaml"))
GA_EXPERIMENTAL = sorted((GA / "examples" / "experimental").rglob("*.yaml"))
# The objects the examples name and leave to the reader (Services behind the routes, Gateways of
# the routes' parents, the multicluster examples' ServiceImports): declared as a user would (README "Partial repositories").
FRAGMENT = ExternalObjects.parse(["Service", "ServiceImport", "Gateway"])


@pytest.mark.parametrize("path", GA_STANDARD + GA_EXPERIMENTAL, ids=_ids(GA_STANDARD + GA_EXPERIMENTAL, GA))
def test_each_gateway_api_example_is_admitted_with_default_flags(path: Path) -> None:
    assert refusals(lint_paths([path])) == []


@pytest.mark.parametrize("path", GA_STANDARD + GA_EXPERIMENTAL, ids=_ids(GA_STANDARD + GA_EXPERIMENTAL, GA))
def test_each_gateway_api_example_has_no_error_once_what_it_leaves_out_is_external(path: Path) -> None:
    assert errors(lint_paths([path], external=FRAGMENT)) == []


@pytest.mark.parametrize("path", GA_EXPERIMENTAL, ids=_ids(GA_EXPERIMENTAL, GA))
def test_each_experimental_example_is_served_on_the_experimental_channel(path: Path) -> None:
    # Upstream installs them with the experimental channel's CRDs of the same tag
    # (tests/crd/crd_test.go, "should be able to install experimental examples").
    result = lint_paths([path], channel="experimental", gateway_api_version="v1.6.1")
    assert served(result) == []
    assert refusals(result) == []


def test_tlsroute_v1alpha2_example_with_no_cluster_known_is_a_warning_naming_the_channel() -> None:
    path = GA / "examples" / "experimental" / "v1alpha2" / "tls-routing" / "tls-route.yaml"
    (finding,) = [f for f in lint_paths([path]).findings if f.rule == "PL705"]
    assert (finding.severity.label, finding.line) == ("warning", 1)
    assert "experimental channel" in finding.message


# -- Gateway API: conformance manifests -----------------------------------------------------------------

GA_CONFORMANCE = sorted((GA / "conformance" / "tests").glob("*.yaml"))
GA_BASE = GA / "conformance" / "base" / "manifests.yaml"


@pytest.mark.parametrize("path", GA_CONFORMANCE, ids=_ids(GA_CONFORMANCE, GA))
def test_each_conformance_test_s_manifests_as_the_suite_applies_them_are_admitted(path: Path, tmp_path: Path) -> None:
    # The suite applies its base manifests, then each test's; the class is Envoy Gateway's as
    # its `make conformance` names it, but its GatewayClass is not given: the cluster is
    # unknown, as with a repository that holds only these files.
    assert refusals(lint_paths(substituted([GA_BASE, path], GA, tmp_path))) == []


def test_the_retry_conformance_test_is_clean_with_envoy_gateway_s_class(tmp_path: Path) -> None:
    # `retry` is an experimental field of HTTPRoute rules: with the channel unknown it is a
    # warning; with Envoy Gateway's GatewayClass in the input the channel is inferred and it is served.
    retry = GA / "conformance" / "tests" / "httproute-retry.yaml"
    unknown = lint_paths(substituted([GA_BASE, retry], GA, tmp_path / "unknown"))
    assert [(f.rule, f.line, f.severity.label) for f in unknown.findings if f.rule == "PL706"] == [
        ("PL706", 14, "warning"),
        ("PL706", 25, "warning"),
    ]
    known = lint_paths([*substituted([GA_BASE, retry], GA, tmp_path / "known"), EG_CLASS])
    assert served(known) == []


def test_the_conformance_placeholders_unsubstituted_are_pl004_alone() -> None:
    # Unsubstituted, the files are what the suite substitutes before applying: PL004 once per file,
    # at its first placeholder, and no other rule reports on a placeholder field (the controller
    # name at line 6 is no domain-prefixed path, the addresses at lines 20 and 23 no addresses).
    raw = GA / "conformance" / "tests"
    for name, line in (("gatewayclass-observed-generation-bump.yaml", 6), ("gateway-static-addresses.yaml", 10)):
        assert [(r, n, ln) for r, n, ln, _ in refusals(lint_paths([raw / name]))] == [("PL004", name, line)]
