"""Envoy Gateway's `mergeType` on policies that target one route rule (`sectionName`): what the
rule inherits and what it shields, as the controller computes it.

The scene is Envoy Gateway's translator test `backendtrafficpolicy-strategic-merge-section`
(internal/gatewayapi/testdata/backendtrafficpolicy-strategic-merge-section.in.yaml in
envoyproxy/gateway at commit d32f28294245e454d20f81d323d626a90e660c1e, Apache-2.0), reduced to
the HTTPRoute on `listener-1`: a Gateway policy, a route policy with `mergeType:
StrategicMerge` and a policy on the route's `rule-2`.
"""

from __future__ import annotations

from typing import Any

from policylint.commands.explain import lost_text
from policylint.semantics.effective.merge import untag
from policylint.semantics.effective.verdicts import Lost, why_lost
from tests.lintutil import lint_text

SCENE = """\
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: envoy-gateway-class}
spec: {controllerName: gateway.envoyproxy.io/gatewayclass-controller}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {namespace: envoy-gateway, name: gateway-1}
spec:
  gatewayClassName: envoy-gateway-class
  listeners:
  - {name: listener-1, protocol: HTTP, port: 8081, allowedRoutes: {namespaces: {from: All}}}
---
apiVersion: v1
kind: Service
metadata: {namespace: default, name: service-1}
spec: {ports: [{port: 8080}]}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {namespace: default, name: httproute-1}
spec:
  parentRefs: [{namespace: envoy-gateway, name: gateway-1, sectionName: listener-1}]
  rules:
  - name: rule-1
    matches: [{path: {value: /foo}}]
    backendRefs: [{name: service-1, port: 8080}]
  - name: rule-2
    matches: [{path: {value: /bar}}]
    backendRefs: [{name: service-1, port: 8080}]
---
apiVersion: gateway.envoyproxy.io/v1alpha1
kind: BackendTrafficPolicy
metadata: {namespace: envoy-gateway, name: policy-for-gateway-1}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: gateway-1}]
  timeout:
    tcp: {connectTimeout: 15s}
    http: {connectionIdleTimeout: 16s, maxConnectionDuration: 17s}
---
apiVersion: gateway.envoyproxy.io/v1alpha1
kind: BackendTrafficPolicy
metadata: {namespace: default, name: merged-policy-for-httproute-1}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: httproute-1}]
  mergeType: StrategicMerge
  timeout:
    tcp: {connectTimeout: 10s}
  connection: {bufferLimit: 100M}
  httpUpgrade: [{type: spdy/3.1}]
---
apiVersion: gateway.envoyproxy.io/v1alpha1
kind: BackendTrafficPolicy
metadata: {namespace: default, name: policy-for-httproute-1-rule-2}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: httproute-1, sectionName: rule-2}]
%s  connection: {bufferLimit: 200M}
"""

GATEWAY_TIMEOUTS = {"tcp": {"connectTimeout": "15s"}, "http": {"connectionIdleTimeout": "16s", "maxConnectionDuration": "17s"}}


def _effective(result: Any, rule: str) -> Any:
    (context,) = result.project.simulation().contexts(lambda path: path[-1] == ("rule", path[-1][1], rule))
    return untag(context.result.tree)


def _conditions(result: Any) -> dict[str, list[tuple[str, str]]]:
    return {
        p["object"]["name"]: [(c["type"], c["message"]) for c in p["targets"][0]["conditions"]] for p in result.policy_reports
    }


def test_a_rule_policy_without_merge_type_replaces_the_merged_route_policy_on_its_rule() -> None:
    # EG's status: the route policy is Merged with the Gateway policy and Overridden "for these
    # route rules: [rule-2]"; the rule policy alone configures rule-2 (its connection only).
    result = lint_text(SCENE % "", report_policies=True)
    assert _effective(result, "rule-2") == {"connection": {"bufferLimit": "200M"}}
    assert _effective(result, "rule-1") == {
        "timeout": {**GATEWAY_TIMEOUTS, "tcp": {"connectTimeout": "10s"}},
        "connection": {"bufferLimit": "100M"},
        "httpUpgrade": [{"type": "spdy/3.1"}],
    }
    conditions = _conditions(result)
    assert sorted(t for t, _ in conditions["merged-policy-for-httproute-1"]) == ["Accepted", "Merged", "Overridden"]
    assert [t for t, _ in conditions["policy-for-httproute-1-rule-2"]] == ["Accepted"]


def test_a_rule_policy_with_merge_type_merges_onto_the_gateway_policy_and_shields_the_rule_from_the_route_policy() -> None:
    # EG translates rule policies first: one with mergeType merges onto the closest policy of the
    # route's listener or Gateway (translateBackendTrafficPolicyForRouteWithMerge), and the route
    # policy then skips the rule, already set (applyTrafficFeatureToRoute: "a more specific policy
    # (targeting xRoute rule) has already set it"). So rule-2 gets the Gateway's timeouts, not the
    # route policy's 10s nor its httpUpgrade. Before: the three policies were merged in a row.
    result = lint_text(SCENE % "  mergeType: StrategicMerge\n", report_policies=True)
    assert _effective(result, "rule-2") == {"timeout": GATEWAY_TIMEOUTS, "connection": {"bufferLimit": "200M"}}
    conditions = _conditions(result)
    assert ("Merged", "merged with policy envoy-gateway/policy-for-gateway-1") in conditions["policy-for-httproute-1-rule-2"]
    # The route policy is left out of rule-2 whole: Overridden there, as EG writes it.
    assert "Overridden" in [t for t, _ in conditions["merged-policy-for-httproute-1"]]
    (context,) = result.project.simulation().contexts(lambda path: path[-1][0] == "rule" and path[-1][2] == "rule-2")
    route_facet = next(f for f in context.stack if f.policy.obj.name == "merged-policy-for-httproute-1")
    assert context.result.beaten_by[route_facet] == {"default/policy-for-httproute-1-rule-2"}
    # explain says why, naming the rule policy, not "Atomic Defaults ... replaced this spec whole".
    rule_facet = next(f for f in context.stack if f.policy.obj.name == "policy-for-httproute-1-rule-2")
    why = why_lost(context, route_facet, [rule_facet])
    assert why.reason is Lost.SKIPPED_BY_RULE_MERGE
    assert lost_text(why, route_facet) == (
        "default/policy-for-httproute-1-rule-2 targets this rule with mergeType: it merges onto the policy of the"
        " route's listener or Gateway, and the route's policy does not apply to the rule"
    )


def test_a_rule_policy_with_merge_type_and_nothing_above_the_route_applies_alone() -> None:
    # With no Gateway policy, EG finds no parent policy and applies the rule policy as it is
    # ("not found, fall back to the current policy"); the route policy still skips the rule.
    scene = SCENE % "  mergeType: StrategicMerge\n"
    start = scene.index(
        "---\napiVersion: gateway.envoyproxy.io/v1alpha1\nkind: BackendTrafficPolicy\nmetadata: {namespace: envoy-gateway"
    )
    end = scene.index("---", start + 3)
    result = lint_text(scene[:start] + scene[end:], report_policies=True)
    assert _effective(result, "rule-2") == {"connection": {"bufferLimit": "200M"}}
