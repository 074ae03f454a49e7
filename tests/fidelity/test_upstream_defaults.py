"""Upstream manifests that policylint once reported falsely with default flags
(tests/data/upstream/README.md says which files, from where). Each test names the upstream file
and the finding it must not get, and, where the class has a true case, that it still gets one.
"""

from __future__ import annotations

from pathlib import Path

from tests.lintutil import lint_paths, lint_text

UPSTREAM = Path(__file__).resolve().parents[1] / "data" / "upstream"
EG = UPSTREAM / "envoy-gateway"


def rules_at(result: object) -> list[tuple[str, str, int | None]]:
    return [(f.rule, f.severity.label, f.line) for f in result.findings]  # type: ignore[attr-defined]


# -- object references of Envoy Gateway written with the core group as `v1` ----------------------


def test_lua_value_ref_with_group_v1_names_the_core_configmap() -> None:
    # envoyproxy/gateway test/e2e/testdata/envoyextensionpolicy-merged.yaml:46: the CRD's CEL
    # takes `group: v1` for the core group, and Envoy Gateway reads the ConfigMap by kind.
    result = lint_paths([EG / "test" / "e2e" / "testdata" / "envoyextensionpolicy-merged.yaml"])
    assert [r for r in rules_at(result) if r[0] in ("PL417", "PL703", "PL704")] == []


def test_lua_value_ref_with_another_group_is_still_refused() -> None:
    text = (EG / "test" / "e2e" / "testdata" / "envoyextensionpolicy-merged.yaml").read_text(encoding="utf-8")
    result = lint_text(text.replace("group: v1\n", "group: example.com\n"))
    # The CRD's rule on the reference's group is in every bundled Envoy Gateway release, so its
    # failure is an error with no release declared (the severity policy, docs/semantics.md).
    assert [r for r in rules_at(result) if r[0] in ("PL417", "PL703", "PL704")] == [("PL704", "error", 44)]


CONTEXT_EXTENSION = """\
apiVersion: gateway.envoyproxy.io/v1alpha1
kind: SecurityPolicy
metadata: {name: auth, namespace: default}
spec:
  targetRefs:
  - {group: gateway.networking.k8s.io, kind: Gateway, name: eg}
  extAuth:
    http:
      backendRefs:
      - {name: auth, port: 80}
    contextExtensions:
    - name: tenant
      type: ValueRef
      valueRef: {group: v1, kind: ConfigMap, name: tenants, key: tenant}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: tenants, namespace: default}
data: {tenant: acme}
"""


def test_context_extension_value_ref_with_group_v1_names_the_core_configmap() -> None:
    # The SecurityPolicy CRD's CEL on contextExtensions[].valueRef takes group '' or 'v1' too.
    result = lint_text(CONTEXT_EXTENSION)
    assert [r for r in rules_at(result) if r[0] in ("PL417", "PL703", "PL704")] == []
    # ... and the key is still read from the ConfigMap the reference names.
    missing = lint_text(CONTEXT_EXTENSION.replace("data: {tenant: acme}", "data: {other: acme}"))
    assert [r[0] for r in rules_at(missing) if r[0] == "PL417"] == ["PL417"]


# -- backends a controller makes from outside the repository ----------------------------------------

MULTICLUSTER = EG / "examples" / "kubernetes" / "multicluster-service.yaml"


def test_service_import_not_in_the_input_is_a_warning_naming_the_multicluster_controllers() -> None:
    # envoyproxy/gateway examples/kubernetes/multicluster-service.yaml:51: the ServiceImport is
    # made by the multicluster controller from a ServiceExport, possibly in another cluster.
    (finding,) = lint_paths([MULTICLUSTER]).findings
    assert (finding.rule, finding.severity.label, finding.line, finding.path) == (
        "PL411",
        "warning",
        51,
        "spec.rules[0].backendRefs[0].name",
    )
    assert "considered: any ServiceImport made by the ClusterSet's multicluster controller (Submariner" in finding.message
    assert "--complete" in (finding.hint or "")


def test_service_import_not_in_the_input_is_an_error_when_the_input_is_the_cluster() -> None:
    (finding,) = lint_paths([MULTICLUSTER], complete=True).findings
    assert (finding.rule, finding.severity.label, finding.line) == ("PL411", "error", 51)
    assert "considered" not in finding.message


def test_a_missing_service_stays_an_error_where_the_input_manages_services_there() -> None:
    text = MULTICLUSTER.read_text(encoding="utf-8")
    text = text.replace("        - group: multicluster.x-k8s.io\n          kind: ServiceImport\n", "        - kind: Service\n")
    text = text.replace("namespace: submariner-operator\n          port", "namespace: default\n          port")
    # The file holds no Service in namespace default: unprovable (below), a warning.
    assert [(f.rule, f.severity.label) for f in lint_text(text).findings if f.rule == "PL411"] == [("PL411", "warning")]
    # With another Service there, the repository manages Services in default: a missing one is an error.
    text += "---\napiVersion: v1\nkind: Service\nmetadata: {name: other, namespace: default}\nspec: {ports: [{port: 80}]}\n"
    assert [(f.rule, f.severity.label) for f in lint_text(text).findings if f.rule == "PL411"] == [("PL411", "error")]


# -- references to objects of a kind the input holds none of in that namespace ---------------------

DESTINATION_PORT = UPSTREAM / "gateway-api" / "examples" / "experimental" / "destination-port-matching-tcp.yaml"
KUADRANT_SAMPLE = UPSTREAM / "kuadrant" / "config" / "samples" / "kuadrant_v1_ratelimitpolicy.yaml"


def test_a_backend_service_of_a_one_route_example_is_unprovable() -> None:
    # kubernetes-sigs/gateway-api examples/experimental/destination-port-matching-tcp.yaml:13: a
    # one-object example whose backendRef names Service my-service, which the user creates.
    (finding,) = lint_paths([DESTINATION_PORT]).findings
    assert (finding.rule, finding.severity.label, finding.line, finding.path) == (
        "PL411",
        "warning",
        13,
        "spec.rules[0].backendRefs[0].name",
    )
    assert "the input holds no Service in namespace default, so the repository does not look like it manages them" in (
        finding.message
    )
    assert "--external Service/default/my-service" in (finding.hint or "") and "--complete" in (finding.hint or "")
    (error,) = lint_paths([DESTINATION_PORT], complete=True).findings
    assert (error.rule, error.severity.label, error.line) == ("PL411", "error", 13)


def test_the_target_route_of_a_kuadrant_sample_is_unprovable() -> None:
    # Kuadrant/kuadrant-operator config/samples/kuadrant_v1_ratelimitpolicy.yaml:10 (v1.5.2): the
    # sample policy targets HTTPRoute toystore, which the sample does not contain.
    (finding,) = lint_paths([KUADRANT_SAMPLE]).findings
    assert (finding.rule, finding.severity.label, finding.line, finding.path) == (
        "PL201",
        "warning",
        10,
        "spec.targetRef.name",
    )
    assert "the input holds no HTTPRoute in namespace default" in finding.message
    (error,) = lint_paths([KUADRANT_SAMPLE], complete=True).findings
    assert (error.rule, error.severity.label, error.line) == ("PL201", "error", 10)
    # An HTTPRoute of another name in namespace default: routes are managed there, so an error.
    route = (
        "---\napiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\nmetadata: {name: shop, namespace: default}\n"
        "spec: {rules: [{}]}\n"
    )
    result = lint_text(KUADRANT_SAMPLE.read_text(encoding="utf-8") + route)
    assert [(f.rule, f.severity.label, f.line) for f in result.findings if f.rule == "PL201"] == [("PL201", "error", 10)]


NGF_GATEWAY = """\
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gateway, namespace: default}
spec:
  gatewayClassName: nginx
  listeners:
  - {name: http, port: 80, protocol: HTTP}
"""


def test_the_class_nginx_gateway_fabric_creates_exists_where_it_is_declared() -> None:
    # nginx/nginx-gateway-fabric charts/nginx-gateway-fabric/templates/gatewayclass.yaml (v2.6.7)
    # creates GatewayClass `nginx` (values.yaml nginxGateway.gatewayClassName), which the
    # project's examples name (examples/cafe-example/gateway.yaml).
    (finding,) = lint_text(NGF_GATEWAY).findings
    assert (finding.rule, finding.severity.label, finding.line) == ("PL405", "warning", 5)
    assert "NGINX Gateway Fabric creates it when installed" in finding.message
    assert lint_text(NGF_GATEWAY, implementations=["nginx-gateway-fabric"]).findings == []
    # An object of NGINX Gateway Fabric's group in the input shows it runs.
    proxy = "---\napiVersion: gateway.nginx.org/v1alpha2\nkind: NginxProxy\nmetadata: {name: proxy, namespace: default}\n"
    result = lint_text(NGF_GATEWAY + proxy)
    assert [f for f in result.findings if f.rule == "PL405"] == []
    gateway = result.project.index.lookup("gateway.networking.k8s.io", "Gateway", "default", "gateway")
    assert gateway is not None
    # The class exists outside the input, with NGINX Gateway Fabric's controller.
    ref = result.project.topology().class_refs[gateway]
    assert (ref.status.label, ref.builtin_controller) == ("External", "gateway.nginx.org/nginx-gateway-controller")


# -- parameters of an implementation policylint does not model ------------------------------------

BASIC_GRPC = UPSTREAM / "gateway-api" / "examples" / "standard" / "basic-grpc.yaml"


def test_parameters_of_a_controller_policylint_does_not_model_are_unprovable() -> None:
    # kubernetes-sigs/gateway-api examples/standard/basic-grpc.yaml:11: `acme.io` Parameters, whose
    # CRD the acme.io controller installs in the cluster.
    result = lint_paths([BASIC_GRPC])
    (finding,) = [f for f in result.findings if f.rule == "PL422"]
    assert (finding.severity.label, finding.line, finding.path) == ("warning", 11, "spec.parametersRef.group")
    assert "read by a controller whose parameters kinds policylint does not know" in finding.message
    assert "--crd" in (finding.hint or "")
    # Unprovable, the reference does not stop the class's Gateway from carrying traffic.
    assert [f for f in result.findings if f.rule == "PL413"] == []
    # With --complete the input holds every CRD of the cluster: the group is served by nothing.
    (error,) = [f for f in lint_paths([BASIC_GRPC], complete=True).findings if f.rule == "PL422"]
    assert (error.severity.label, error.line) == ("error", 11)


VENDOR_CLASS = """\
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: vendor}
spec:
  controllerName: %s
  parametersRef: {group: %s, kind: %s, name: params%s}
"""


def test_parameters_kinds_of_other_implementations_are_warnings() -> None:
    for controller, group, kind, namespace in (
        ("io.cilium/gateway-controller", "cilium.io", "CiliumGatewayClassConfig", ", namespace: kube-system"),
        ("konghq.com/gateway-operator", "gateway-operator.konghq.com", "GatewayConfiguration", ", namespace: kong"),
    ):
        (finding,) = [f for f in lint_text(VENDOR_CLASS % (controller, group, kind, namespace)).findings if f.rule == "PL422"]
        assert (finding.severity.label, finding.line) == ("warning", 6), group


def test_parameters_of_an_unserved_group_stay_an_error_where_the_implementation_says_what_it_takes() -> None:
    # Envoy Gateway takes an EnvoyProxy only, NGINX Gateway Fabric an NginxProxy (a Gateway of
    # its class naming another kind is Accepted=False).
    envoy = VENDOR_CLASS % ("gateway.envoyproxy.io/gatewayclass-controller", "acme.io", "Parameters", ", namespace: infra")
    (finding,) = [f for f in lint_text(envoy).findings if f.rule == "PL422"]
    assert (finding.severity.label, finding.path) == ("error", "spec.parametersRef.group")


# -- GatewayClasses an implementation creates ------------------------------------------------------

BOOKINFO = UPSTREAM / "istio" / "samples" / "bookinfo" / "gateway-api" / "bookinfo-gateway.yaml"
ALS = EG / "examples" / "kubernetes" / "accesslog" / "als-accesslog.yaml"


def test_a_class_istio_creates_is_a_warning_naming_istio_where_nothing_shows_it_runs() -> None:
    # istio/istio samples/bookinfo/gateway-api/bookinfo-gateway.yaml:6, in a repository that also
    # holds another implementation's GatewayClass (Envoy Gateway's eg): istiod creates `istio`.
    result = lint_paths([BOOKINFO, ALS])
    (finding,) = [f for f in result.findings if f.rule == "PL405"]
    assert (finding.severity.label, finding.line, finding.path) == ("warning", 6, "spec.gatewayClassName")
    assert "Istio creates it when installed" in finding.message
    assert "implementations: [istio]" in (finding.hint or "") and "--implementation istio" in (finding.hint or "")
    # Declared, the class exists and has Istio's controller.
    declared = lint_paths([BOOKINFO, ALS], implementations=["istio"])
    assert [f for f in declared.findings if f.rule == "PL405"] == []
    # With --complete the input is the cluster, and it holds no such class.
    (error,) = [f for f in lint_paths([BOOKINFO, ALS], complete=True).findings if f.rule == "PL405"]
    assert error.severity.label == "error"


def test_a_class_no_implementation_creates_stays_an_error() -> None:
    text = BOOKINFO.read_text(encoding="utf-8").replace("gatewayClassName: istio", "gatewayClassName: istoi")
    text += "---\n" + ALS.read_text(encoding="utf-8")
    (finding,) = [f for f in lint_text(text).findings if f.rule == "PL405"]
    assert finding.severity.label == "error"


# -- a linted file applied over its --context ----------------------------------------------------

QUICKSTART = (
    Path(__file__).resolve().parents[1]
    / "data"
    / "upstream-valid"
    / "envoy-gateway"
    / "examples"
    / "kubernetes"
    / "quickstart.yaml"
)


def test_a_linted_file_redefining_a_context_object_replaces_it_whatever_the_order() -> None:
    # envoyproxy/gateway examples/kubernetes/accesslog/als-accesslog.yaml applied over the
    # quickstart: its GatewayClass eg (with parametersRef) updates the quickstart's.
    import json

    from click.testing import CliRunner

    from policylint.cli import cli

    result = lint_paths([ALS], context_paths=[str(QUICKSTART)])
    assert [f for f in result.findings if f.rule == "PL005"] == []
    (eg,) = [o for o in result.project.index.objects if o.kind == "GatewayClass" and o.name == "eg"]
    assert (Path(eg.doc.file).name, "parametersRef" in eg.spec) == ("als-accesslog.yaml", True)
    for args in ([str(ALS), "--context", str(QUICKSTART)], ["--context", str(QUICKSTART), str(ALS)]):
        checked = CliRunner().invoke(cli, ["check", "--no-cache", "--format", "json", *args])
        assert [f["rule"] for f in json.loads(checked.stdout)["findings"] if f["rule"] == "PL005"] == [], args
        explained = CliRunner().invoke(cli, ["explain", "gatewayclass/eg", *args, "--format", "json"])
        assert explained.exit_code == 0, explained.stderr
        assert Path(json.loads(explained.stdout)["object"]["file"]).name == "als-accesslog.yaml", args


def test_two_linted_copies_of_an_object_stay_a_duplicate() -> None:
    # Both in the linted paths: nothing is applied over anything, PL005 as before.
    result = lint_paths([ALS, QUICKSTART])
    assert [(f.rule, Path(f.file).name) for f in result.findings if f.rule == "PL005"] != []


def test_a_linted_file_inside_a_context_path_replaces_nothing(tmp_path: Path) -> None:
    # The pre-commit hook's `--context . FILE`: the file is part of the tree read for context, so
    # a second definition there is a duplicate of that tree.
    (tmp_path / "a.yaml").write_text(QUICKSTART.read_text(encoding="utf-8"), encoding="utf-8")
    (tmp_path / "b.yaml").write_text(ALS.read_text(encoding="utf-8"), encoding="utf-8")
    result = lint_paths([tmp_path / "b.yaml"], context_paths=[str(tmp_path)])
    assert [(f.rule, Path(f.file).name) for f in result.findings if f.rule == "PL005"] == [("PL005", "b.yaml")]


# -- placeholders of test harnesses ----------------------------------------------------------------

OTEL = EG / "test" / "e2e" / "testdata" / "accesslog-otel-default.yaml"


def test_an_unquoted_brace_placeholder_is_pl004_alone() -> None:
    # envoyproxy/gateway test/e2e/testdata/accesslog-otel-default.yaml:10: `{GATEWAY_CLASS_NAME}`
    # unquoted, a flow mapping to YAML until the suite substitutes it. Not PL010 ("must be a
    # string, not a mapping"), not PL405, not PL703.
    result = lint_paths([OTEL])
    on_gateway = [(f.rule, f.line) for f in result.findings if f.line is not None and f.line <= 22]
    assert on_gateway == [("PL004", 10)]
    (pl004,) = [f for f in result.findings if f.rule == "PL004"]
    assert "'{GATEWAY_CLASS_NAME}' where a Kubernetes name is expected" in pl004.message


def test_a_quoted_brace_placeholder_in_a_gateway_class_name_is_pl004_alone() -> None:
    # Envoy Gateway's accesslog-als.yaml quotes it: PL405 "non-existent GatewayClass
    # {GATEWAY_CLASS_NAME}" was stacked on PL004.
    text = OTEL.read_text(encoding="utf-8").replace("{GATEWAY_CLASS_NAME}", '"{GATEWAY_CLASS_NAME}"')
    text += "---\napiVersion: gateway.networking.k8s.io/v1\nkind: GatewayClass\nmetadata: {name: eg}\nspec:\n  controllerName: example.com/gw\n"
    result = lint_text(text)
    assert [(f.rule, f.line) for f in result.findings if f.rule in ("PL004", "PL405", "PL010", "PL703")] == [("PL004", 10)]


def test_harness_placeholders_in_values_are_pl004_and_other_values_are_still_checked() -> None:
    # kubernetes-sigs/gateway-api conformance/tests/gateway-static-addresses.yaml:20 and 23:
    # PLACEHOLDER_UNUSABLE_ADDRS and PLACEHOLDER_USABLE_ADDRS, which the Applier replaces with
    # the caller's address pools. A value that is not the whole placeholder is checked as ever.
    path = UPSTREAM.parent / "upstream-valid" / "gateway-api" / "conformance" / "tests" / "gateway-static-addresses.yaml"
    result = lint_paths([path])
    assert [(f.rule, f.line) for f in result.findings if f.severity.label == "error"] == [("PL004", 10)]
    text = path.read_text(encoding="utf-8").replace("PLACEHOLDER_UNUSABLE_ADDRS", "UNUSABLE_ADDRS")
    assert [(f.rule, f.line) for f in lint_text(text).findings if f.rule == "PL703"] == [("PL703", 20)]
