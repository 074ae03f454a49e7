"""A Gateway's and a GatewayClass's own configuration (policylint/semantics/parameters.py, rules
PL422 and PL423): what follows from it beyond the rules' own fixtures."""

from __future__ import annotations

from policylint.findings import Severity
from tests.lintutil import lint_text, only

CLASS = """\
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: eg}
spec:
  controllerName: gateway.envoyproxy.io/gatewayclass-controller
%s"""

GATEWAY = """\
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: edge, namespace: infra}
spec:
  gatewayClassName: eg
%s  listeners:
  - {name: http, port: 80, protocol: HTTP}
---
apiVersion: gateway.envoyproxy.io/v1alpha1
kind: ClientTrafficPolicy
metadata: {name: timeouts, namespace: infra}
spec:
  targetRefs:
  - {group: gateway.networking.k8s.io, kind: Gateway, name: edge}
  timeout: {http: {idleTimeout: 5s}}
"""

# The reference of conformance test GatewayInvalidParametersRef
# (conformance/tests/gateway-invalid-parameters-ref.yaml in kubernetes-sigs/gateway-api).
INVALID = "{group: invalid.io, kind: InvalidParameters, name: invalid}"


def test_a_gateway_whose_parameters_nothing_serves_carries_no_traffic() -> None:
    # Accepted=False, InvalidParameters: the Gateway is not programmed, so a policy on it has no effect.
    result = lint_text(CLASS % "" + GATEWAY % f"  infrastructure:\n    parametersRef: {INVALID}\n")
    (finding,) = only(result, "PL422")
    assert finding.path == "spec.infrastructure.parametersRef.group"
    assert finding.severity is Severity.ERROR
    (effect,) = only(result, "PL413")
    assert "its parametersRef names InvalidParameters of group invalid.io, which nothing serves" in effect.message
    # A group the input serves (a CRD for it) is resolved: no finding, and the Gateway carries traffic.
    crd = """\
---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: invalidparameters.invalid.io}
spec:
  group: invalid.io
  names: {kind: InvalidParameters, plural: invalidparameters, singular: invalidparameters, listKind: InvalidParametersList}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}
"""
    # Under a class policylint knows no parameters kinds for, a group the input serves (a CRD
    # for it) is resolved: no finding, and the Gateway carries traffic.
    unknown_class = CLASS.replace("gateway.envoyproxy.io/gatewayclass-controller", "example.com/gateway-controller")
    served = lint_text(unknown_class % "" + GATEWAY % f"  infrastructure:\n    parametersRef: {INVALID}\n" + crd)
    assert only(served, "PL422") == []
    assert only(served, "PL413") == []
    # Envoy Gateway takes an EnvoyProxy only, whatever else the cluster serves.
    refused = lint_text(CLASS % "" + GATEWAY % f"  infrastructure:\n    parametersRef: {INVALID}\n" + crd)
    assert [f.path for f in only(refused, "PL422")] == ["spec.infrastructure.parametersRef.kind"]


def test_the_gateways_of_a_class_whose_parameters_nothing_serves_carry_no_traffic() -> None:
    result = lint_text(CLASS % f"  parametersRef: {INVALID[:-1]}, namespace: infra}}\n" + GATEWAY % "")
    (finding,) = only(result, "PL422")
    assert str(finding.object) == "GatewayClass eg"
    assert "the GatewayClass gets Accepted=False, InvalidParameters" in finding.message
    (effect,) = only(result, "PL413")
    assert "its GatewayClass eg's parametersRef names InvalidParameters" in effect.message


def test_a_missing_parameters_object_is_a_warning_until_the_input_is_complete() -> None:
    # The input holds an EnvoyProxy in the namespace, not the one named: a repository cannot prove
    # the other is absent from the cluster (as for certificates, PL417), --complete can.
    proxy = (
        "---\napiVersion: gateway.envoyproxy.io/v1alpha1\nkind: EnvoyProxy\nmetadata: {name: other, namespace: infra}\nspec: {}\n"
    )
    text = (
        CLASS % ""
        + GATEWAY % "  infrastructure:\n    parametersRef: {group: gateway.envoyproxy.io, kind: EnvoyProxy, name: edge-proxy}\n"
        + proxy
    )
    (warning,) = only(lint_text(text), "PL422")
    assert warning.severity is Severity.WARNING
    assert warning.path == "spec.infrastructure.parametersRef.name"
    assert (
        "EnvoyProxy infra/edge-proxy, which is not in the input although the input holds other EnvoyProxy objects"
        in warning.message
    )
    (error,) = only(lint_text(text, complete=True), "PL422")
    assert error.severity is Severity.ERROR
    # Unknown, the object does not change whether the Gateway carries traffic.
    assert only(lint_text(text), "PL413") == []


def test_which_parameters_kinds_a_controller_takes_is_its_own() -> None:
    # Envoy Gateway: a GatewayClass or Gateway parametersRef other than gateway.envoyproxy.io
    # EnvoyProxy is "unsupported parametersRef for gateway ..." (processGatewayParamsRef in
    # internal/provider/kubernetes/controller.go of envoyproxy/gateway): Accepted=False,
    # InvalidParameters. Before: a kind of a group the input knows was taken as resolved.
    ngf_proxy = "{group: gateway.nginx.org, kind: NginxProxy, name: proxy}"
    result = lint_text(CLASS % "" + GATEWAY % f"  infrastructure:\n    parametersRef: {ngf_proxy}\n")
    (finding,) = only(result, "PL422")
    assert finding.path == "spec.infrastructure.parametersRef.kind"
    assert finding.severity is Severity.ERROR
    assert (
        "a kind Envoy Gateway does not take for its parameters (it takes gateway.envoyproxy.io/EnvoyProxy): the Gateway"
        " gets Accepted=False, InvalidParameters"
    ) in finding.message
    (effect,) = only(result, "PL413")
    assert "a kind Envoy Gateway does not take for its parameters" in effect.message


NGF_CLASS = """\
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: nginx}
spec:
  controllerName: gateway.nginx.org/nginx-gateway-controller
  parametersRef: %s
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: web, namespace: apps}
spec:
  gatewayClassName: nginx
  listeners:
  - {name: http, port: 80, protocol: HTTP}
---
apiVersion: gateway.nginx.org/v1alpha1
kind: ClientSettingsPolicy
metadata: {name: body, namespace: apps}
spec:
  targetRef: {group: gateway.networking.k8s.io, kind: Gateway, name: web}
  body: {maxSize: 10m}
"""


def test_nginx_gateway_fabric_ignores_a_class_parameters_kind_it_does_not_take() -> None:
    # NGINX Gateway Fabric checks the kind alone (supportedParamKinds: NginxProxy). A GatewayClass
    # naming another stays Accepted=True, reason InvalidParameters ("The GatewayClass is accepted,
    # but ParametersRef is ignored due to an error": validateGatewayClassParametersRef in
    # internal/controller/state/graph/gatewayclass.go, NewGatewayClassInvalidParameters), so its
    # Gateways carry traffic: a warning, and no PL413.
    result = lint_text(NGF_CLASS % "{group: '', kind: ConfigMap, name: proxy, namespace: nginx-gateway}")
    (finding,) = only(result, "PL422")
    assert (finding.path, finding.severity) == ("spec.parametersRef.kind", Severity.WARNING)
    assert finding.message.endswith(
        "the GatewayClass stays Accepted=True with reason InvalidParameters, and its controller ignores the reference:"
        " its Gateways run without these parameters"
    )
    assert only(result, "PL413") == []
    taken = lint_text(NGF_CLASS % "{group: gateway.nginx.org, kind: NginxProxy, name: proxy, namespace: nginx-gateway}")
    assert only(taken, "PL422") == []


ISTIO = """\
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: istio-custom}
spec:
  controllerName: istio.io/gateway-controller
%s---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: edge, namespace: apps}
spec:
  gatewayClassName: istio-custom
%s  listeners:
  - {name: http, port: 80, protocol: HTTP}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: edge-options, namespace: apps}
data: {deployment: "{}"}
"""


def test_istio_reads_a_gateway_s_parameters_from_a_config_map_only() -> None:
    # istiod's deployment controller takes a Gateway's infrastructure.parametersRef only as a core
    # ConfigMap of the Gateway's namespace; another kind is "unknown infrastructure parameters
    # type", and no deployment is rendered (fetchParameters and render in
    # pilot/pkg/config/kube/gatewaycommon/deploymentcontroller.go of istio/istio at 1.30.3).
    # Before: Istio's profile named no parameters kind, and any kind of a served group passed.
    config_map = "  infrastructure:\n    parametersRef: {group: '', kind: ConfigMap, name: edge-options}\n"
    assert only(lint_text(ISTIO % ("", config_map)), "PL422") == []
    envoy_proxy = "  infrastructure:\n    parametersRef: {group: gateway.envoyproxy.io, kind: EnvoyProxy, name: edge}\n"
    (finding,) = only(lint_text(ISTIO % ("", envoy_proxy)), "PL422")
    assert (finding.path, finding.severity) == ("spec.infrastructure.parametersRef.kind", Severity.ERROR)
    assert "a kind Istio does not take for its parameters (it takes ConfigMap)" in finding.message
    assert finding.message.endswith(
        'istiod\'s deployment controller renders no deployment for the Gateway ("invalid parameters"), so nothing serves its listeners'
    )
    # A missing ConfigMap, where the input holds others in the namespace: the same outcome.
    missing = "  infrastructure:\n    parametersRef: {group: '', kind: ConfigMap, name: gone}\n"
    (warning,) = only(lint_text(ISTIO % ("", missing)), "PL422")
    assert (warning.path, warning.severity) == ("spec.infrastructure.parametersRef.name", Severity.WARNING)
    assert "renders no deployment for the Gateway" in warning.message


def test_istio_never_reads_a_gateway_class_s_parameters() -> None:
    # Nothing in istiod reads GatewayClass.spec.parametersRef (its class defaults come from
    # ConfigMaps labelled gateway.istio.io/defaults-for-class): whatever it names, no finding.
    for ref in (
        "{group: invalid.io, kind: InvalidParameters, name: invalid}",
        "{group: '', kind: ConfigMap, name: gone, namespace: apps}",
    ):
        assert only(lint_text(ISTIO % (f"  parametersRef: {ref}\n", "")), "PL422") == []
