"""Acceptance scenarios S12–S16 and S18 on the topology, the false-positive guards that keep
policylint quiet wherever a controller would attach, and the multi-namespace fixture.

The acceptance scenarios are numbered S01–S20 and listed, with the public source of each, in
docs/semantics.md#acceptance-scenarios. The ones this module owns, each in its section below:

- S12 a listener policy beats a whole-Gateway policy on its listener, and a missing section is
  TargetNotFound naming the sections that exist (GEP-2648 "Section Names");
- S13 named rules versus the synthetic `rule-<n>` names policy-machinery gives unnamed rules;
- S14 route-to-listener links and the blast radius of a Gateway and of a listener policy;
- S15 a cross-namespace backend with, without and with a misplaced ReferenceGrant, and a
  policy that targets another namespace;
- S16 not-found references, and the parents and backends that must not be reported;
- S18 a namespaced policy targeting a GatewayClass, which must never pass silently.

ColorPolicy (`example.com/v1`) is GEP-713's generic policy kind, defined by an inline CRD
(`tests.manifests.policy_crd`). S14 checks the links first, then the blast radius the
effective-policy simulation computes from them.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from policylint.findings import Severity
from policylint.k8s.external import ExternalObjects
from policylint.k8s.fieldtypes import GATEWAY_GROUP
from policylint.pipeline import LintResult
from policylint.semantics.resolution import TargetResolution
from policylint.vocabulary import Attachment, ReferenceStatus
from tests.lintutil import lint_paths, lint_text, only
from tests.manifests import (
    HTTP_HTTPS,
    S15,
    first,
    gateway,
    gateway_class,
    listener_set,
    namespace,
    policy,
    policy_crd,
    reference_grant,
    route,
    s15_grant,
    selector_listener,
    service,
)

MULTI_NAMESPACE = Path(__file__).resolve().parents[1] / "data" / "multi-namespace"


def problems(result: LintResult) -> list[tuple[str, str, str]]:
    """Errors and warnings as (rule, object, path): what a clean setup must not have."""
    return [(f.rule, str(f.object), f.path) for f in result.findings if f.severity >= Severity.WARNING]


def resolutions(result: LintResult, name: str) -> list[TargetResolution]:
    resolution = result.project.resolution
    (policy,) = [p for p in resolution.policies() if p.obj.name == name]
    return resolution.targets(policy)


def lookup(result: LintResult, kind: str, namespace: str | None, name: str, group: str = GATEWAY_GROUP) -> Any:
    found = result.index.lookup(group, kind, namespace, name)
    assert found is not None
    return found


COLOR_API = "example.com/v1"


def color_policy(name: str, ns: str | None, target: str) -> str:
    """A ColorPolicy whose only targetRef is `target` (flow-style YAML mapping); cluster-scoped when `ns` is None."""
    return policy("ColorPolicy", f"[{target}]", api=COLOR_API, name=name, ns=ns, spec="  color: blue\n")


CLASS = first(gateway_class())


# ---------------------------------------------------------------------------------------
# S12 — sectionName specificity and a missing section
# ---------------------------------------------------------------------------------------

S12 = (
    CLASS  # lines 1-4
    + policy_crd("ColorPolicy")  # lines 5-36
    + gateway(HTTP_HTTPS)  # lines 37-45
    + policy("ColorPolicy", "  - {group: gateway.networking.k8s.io, kind: Gateway, name: gw}\n", api=COLOR_API, name="a")
    + policy(
        "ColorPolicy",
        "  - {group: gateway.networking.k8s.io, kind: Gateway, name: gw, sectionName: https}\n",
        api=COLOR_API,
        name="b",
    )
    + policy(
        "ColorPolicy",
        "  - group: gateway.networking.k8s.io\n    kind: Gateway\n    name: gw\n    sectionName: ftp\n",
        api=COLOR_API,
        name="c",
    )
)


def test_policy_crd_helper_spans_the_expected_lines() -> None:
    # The line numbers below count on it: 32 lines, starting with `---`.
    text = policy_crd("ColorPolicy")
    assert text.startswith("---\n") and text.count("\n") == 32


def test_s12_section_names() -> None:
    result = lint_text(S12)
    (a,) = resolutions(result, "a")
    assert (a.status.label, a.detail.label, a.section) == ("Accepted", "Resolved", None)
    (b,) = resolutions(result, "b")
    assert (b.status.label, b.detail.label) == ("Accepted", "Resolved")
    assert b.section is not None and (b.section.name, b.section.path) == ("https", "spec.listeners[1]")
    (c,) = resolutions(result, "c")
    assert (c.status.label, c.detail.label) == ("TargetNotFound", "SectionNotFound")
    assert c.message == "listener ftp not found on Gateway gw; have: http, https"
    assert problems(result) == [("PL301", "ColorPolicy app/c", "spec.targetRefs[0].sectionName")]
    (finding,) = only(result, "PL301")
    assert finding.message == "listener ftp not found on Gateway gw; have: http, https"
    # CLASS 4 lines + CRD 32 lines = 36; the Gateway document starts at 37 (`---`), policy c's
    # `sectionName: ftp` is the last line of the text.
    assert finding.line == S12.count("\n") == 69


# ---------------------------------------------------------------------------------------
# S13 — rule names vs synthetic names
# ---------------------------------------------------------------------------------------

S13 = (
    CLASS
    + policy_crd("ColorPolicy")
    + gateway()  # lines 37-43
    + route(
        rules=(
            "  - name: first\n    backendRefs: [{name: web, port: 80}]\n"
            "  - backendRefs: [{name: web, port: 80}]\n"  # line 53
            "  - name: third\n    backendRefs: [{name: web, port: 80}]\n"
        )
    )
    + service()
    + color_policy("p1", "app", "{group: gateway.networking.k8s.io, kind: HTTPRoute, name: r, sectionName: first}")
    + color_policy("p2", "app", "{group: gateway.networking.k8s.io, kind: HTTPRoute, name: r, sectionName: rule-2}")
)


def test_s13_synthetic_rule_name_is_an_error_with_the_hint() -> None:
    result = lint_text(S13)
    (p1,) = resolutions(result, "p1")
    assert (p1.status.label, p1.detail.label) == ("Accepted", "Resolved")
    assert p1.section is not None and p1.section.name == "first"
    (p2,) = resolutions(result, "p2")
    assert (p2.status.label, p2.detail.label) == ("TargetNotFound", "SyntheticRuleName")
    assert problems(result) == [("PL304", "ColorPolicy app/p2", "spec.targetRefs[0].sectionName")]
    (finding,) = only(result, "PL304")
    assert finding.severity is Severity.ERROR
    # The hint of S13, worded for a kind that does not synthesize names itself.
    assert finding.message.startswith("rule #2 of HTTPRoute r is unnamed; `rule-2` is a synthetic name")
    assert "policy-machinery" in finding.message and finding.message.endswith("ColorPolicy do not: name the rule")
    # The related location is the unnamed rule: line 37 (`---` of the Gateway) + 16.
    assert [(r.message, r.line) for r in finding.related] == [("rule #2 has no name", 53)]


def test_s13_synthetic_rule_names_make_it_a_warning() -> None:
    result = lint_text(S13, synthetic_rule_names=True)
    (p2,) = resolutions(result, "p2")
    assert (p2.status.label, p2.detail.label) == ("Accepted", "SyntheticRuleName")
    assert p2.section is not None and p2.section.position == 1
    assert problems(result) == [("PL304", "ColorPolicy app/p2", "spec.targetRefs[0].sectionName")]
    assert only(result, "PL304")[0].severity is Severity.WARNING


# ---------------------------------------------------------------------------------------
# S14 — linking and blast radius
# ---------------------------------------------------------------------------------------

TO_SERVICE_3 = "  - backendRefs: [{name: service-3, port: 80}]\n"
S14 = (
    CLASS
    + gateway(
        "  - {name: listener-1, protocol: HTTP, port: 80}\n  - {name: listener-2, protocol: HTTP, port: 8080}\n", name="gateway-1"
    )
    + gateway("  - {name: listener-1, protocol: HTTP, port: 80}\n", name="gateway-2")
    + route(
        "[{name: gateway-1}]",
        name="http-route-1",
        rules="  - backendRefs: [{name: service-1, port: 80}]\n  - backendRefs: [{name: service-2, port: 80}]\n",
    )
    + route(
        "  - {name: gateway-1, sectionName: listener-2}\n  - {name: gateway-2, sectionName: listener-1}\n",
        name="http-route-2",
        rules=TO_SERVICE_3,
    )
    + route("[{name: gateway-2}]", name="http-route-3", rules=TO_SERVICE_3)
    + service("service-1", ports="[{port: 80}]")
    + service("service-2", ports="[{port: 80}]")
    + service("service-3", ports="  - {name: port-1, port: 80}\n  - {name: port-2, port: 443}\n")
)


def shuffled(text: str) -> str:
    """The same documents in reverse order (scenarios must not depend on input order)."""
    docs = [d for d in text.split("---\n") if d.strip()]
    return "---\n" + "---\n".join(reversed(docs))


@pytest.mark.parametrize("order", ["as-written", "reversed"])
def test_s14_links(order: str) -> None:
    result = lint_text(S14 if order == "as-written" else shuffled(S14))
    assert problems(result) == []
    topo = result.project.topology()
    gw1, gw2 = lookup(result, "Gateway", "app", "gateway-1"), lookup(result, "Gateway", "app", "gateway-2")
    (g1l1, g1l2), (g2l1,) = topo.listeners(gw1), topo.listeners(gw2)

    def on(listener: Any) -> list[str]:
        return sorted(r.name for r, _ in topo.routes_on(listener))

    # http-route-1 is under both gateway-1 listeners; http-route-2 only under gateway-1#listener-2
    # and gateway-2#listener-1.
    assert on(g1l1) == ["http-route-1"]
    assert on(g1l2) == ["http-route-1", "http-route-2"]
    assert on(g2l1) == ["http-route-2", "http-route-3"]
    route2 = lookup(result, "HTTPRoute", "app", "http-route-2")
    assert [[lst.label() for lst in a.listeners] for a in topo.parent_attachments(route2)] == [
        ["Gateway app/gateway-1#listener-2"],
        ["Gateway app/gateway-2#listener-1"],
    ]
    # http-route-1's two rules each link one backend
    route1 = lookup(result, "HTTPRoute", "app", "http-route-1")
    assert [(r.rule, r.name, r.status) for r in topo.refs_from(route1)] == [
        (0, "service-1", ReferenceStatus.RESOLVED),
        (1, "service-2", ReferenceStatus.RESOLVED),
    ]
    assert [s.position for s in topo.rules(route1)] == [0, 1]
    # A backendRef with a port links to the ServicePort service-3#port-1, matched by number.
    (backend,) = topo.refs_from(route2)
    assert backend.target is not None and backend.target.name == "service-3"
    assert backend.port_section is not None and (backend.port_section.name, backend.port_section.path) == (
        "port-1",
        "spec.ports[0]",
    )
    service3 = lookup(result, "Service", "app", "service-3", group="")
    assert sorted(r.owner.name for r in topo.refs_to(service3)) == ["http-route-2", "http-route-3"]


# ---------------------------------------------------------------------------------------
# S15 — cross-namespace ReferenceGrant
# ---------------------------------------------------------------------------------------

S15_MESSAGE = "HTTPRoute ns2/route-x is not permitted to reference Service default/demo-svc"


def test_s15_backend_with_the_grant_is_ok() -> None:
    result = lint_text(S15 + s15_grant())
    assert problems(result) == []
    (ref,) = result.project.topology().refs_from(lookup(result, "HTTPRoute", "ns2", "route-x"))
    assert ref.status == ReferenceStatus.RESOLVED and ref.grant is not None and [g.obj.name for g in ref.grant.grants] == ["rg"]


@pytest.mark.parametrize(
    ("grant", "extra"),
    [
        pytest.param("", [], id="without-rg"),
        pytest.param(s15_grant("ns2"), [("PL403", "ReferenceGrant ns2/rg", "metadata.namespace")], id="rg-in-ns2"),
        pytest.param(s15_grant(to_name="other-svc"), [], id="to-name-other-svc"),
    ],
)
def test_s15_backend_not_permitted(grant: str, extra: list[tuple[str, str, str]]) -> None:
    result = lint_text(S15 + grant)
    expected = [("PL402", "HTTPRoute ns2/route-x", "spec.rules[0].backendRefs[0]"), *extra]
    assert sorted(problems(result)) == sorted(expected)
    (finding,) = only(result, "PL402")
    assert finding.severity is Severity.ERROR
    assert finding.message.startswith(S15_MESSAGE)
    # the backendRef `- {name: demo-svc, ...}`: CLASS lines 1-4, Gateway 5-11, the route's 9th line
    assert finding.line == 20


S15_POLICY = (
    gateway_class()
    + gateway(ns="ns-b")
    + color_policy("p", "ns-a", "{group: gateway.networking.k8s.io, kind: Gateway, name: gw, namespace: ns-b}")
)
POLICY_GRANT = reference_grant(
    "ns-b",
    "[{group: example.com, kind: ColorPolicy, namespace: ns-a}]",
    "[{group: gateway.networking.k8s.io, kind: Gateway}]",
    "color-from-ns-a",
)


def test_s15_policy_across_namespaces_without_a_grant_is_pl401() -> None:
    result = lint_text(policy_crd("ColorPolicy") + S15_POLICY)
    (res,) = resolutions(result, "p")
    assert (res.status.label, res.detail.label) == ("Invalid", "RefNotPermitted")
    assert problems(result) == [("PL401", "ColorPolicy ns-a/p", "spec.targetRefs[0]")]
    (finding,) = only(result, "PL401")
    assert finding.severity is Severity.ERROR
    assert finding.message.startswith("ColorPolicy ns-a/p is not permitted to reference Gateway ns-b/gw")
    assert finding.hint is not None
    assert finding.hint.startswith(
        "Add a ReferenceGrant in namespace ns-b with from: {group: example.com, kind: ColorPolicy, namespace: ns-a}"
    )
    # CRD lines 1-32, CLASS 33-37 (with its `---`), Gateway 38-44, the policy's `targetRefs:` 6th line
    assert finding.line == 50


def test_s15_policy_across_namespaces_with_the_grant_is_accepted() -> None:
    result = lint_text(policy_crd("ColorPolicy") + S15_POLICY + POLICY_GRANT)
    (res,) = resolutions(result, "p")
    assert (res.status.label, res.detail.label) == ("Accepted", "Resolved")
    assert res.target is not None and (res.target.namespace, res.target.name) == ("ns-b", "gw")
    assert res.grant is not None and res.grant.permitted
    assert problems(result) == []


def test_s15_policy_kind_that_cannot_cross_namespaces_is_an_error_regardless() -> None:
    # The kind's reference type has no namespace field: the grant cannot help.
    result = lint_text(policy_crd("ColorPolicy", namespace=False) + S15_POLICY + POLICY_GRANT)
    (res,) = resolutions(result, "p")
    assert not res.accepted
    errors = [(f.rule, f.path) for f in result.findings if f.severity is Severity.ERROR and str(f.object) == "ColorPolicy ns-a/p"]
    assert ("PL401", "spec.targetRefs[0].namespace") in errors


# ---------------------------------------------------------------------------------------
# S16 — not-found references and false-positive guards
# ---------------------------------------------------------------------------------------

S16_GATEWAY = first(gateway(name="test-gateway-4", ns="default", class_name="random-gateway-class"))


def test_s16_missing_gateway_class_is_an_error() -> None:
    # The repository manages GatewayClasses (it holds one), and not this one.
    result = lint_text(CLASS + "---\n" + S16_GATEWAY)
    assert problems(result) == [("PL405", "Gateway default/test-gateway-4", "spec.gatewayClassName")]
    (finding,) = only(result, "PL405")
    assert finding.severity is Severity.ERROR and finding.line == 10
    assert "references a non-existent GatewayClass random-gateway-class" in finding.message


def test_s16_missing_gateway_class_is_a_warning_when_the_input_holds_no_class() -> None:
    # An application repository holds no GatewayClass: the class most likely exists in the
    # cluster. Before: an error. After: a warning that says so.
    result = lint_text(S16_GATEWAY)
    (finding,) = only(result, "PL405")
    assert finding.severity is Severity.WARNING and finding.line == 5
    assert "the input holds no GatewayClass" in finding.message


def test_a_policy_on_a_gateway_without_its_class_is_not_reported_again() -> None:
    # One finding per cause: PL405 on the Gateway; no PL413 on the policy attached to it.
    text = (
        CLASS
        + "---\n"
        + S16_GATEWAY
        + "---\n"
        + (
            "apiVersion: gateway.envoyproxy.io/v1alpha1\nkind: ClientTrafficPolicy\n"
            "metadata: {name: ctp, namespace: default}\n"
            "spec:\n  targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: test-gateway-4}]\n"
            "  timeout: {http: {idleTimeout: 30s}}\n"
        )
    )
    result = lint_text(text)
    assert [f.rule for f in result.findings if f.rule.startswith("PL4")] == ["PL405"]


@pytest.mark.parametrize("pattern", ["gatewayclass/*", "GatewayClass/random-gateway-class"])
def test_s16_missing_gateway_class_declared_external_is_not_an_error(pattern: str) -> None:
    result = lint_text(S16_GATEWAY, external=ExternalObjects.parse([pattern]))
    assert problems(result) == [] and only(result, "PL405") == []


S16_ROUTE = (
    CLASS
    + gateway(ns="default", spec="  allowedListeners: {namespaces: {from: Same}}\n")
    + listener_set(name="ls1", ns="default")
    + route(
        "[{kind: ListenerSet, name: ls1}]",
        name="r1",
        ns="default",
        rules="  - backendRefs: [{group: inference.networking.k8s.io, kind: InferencePool, name: pool}]\n",
    )
)
INFERENCE_POOL = """\
---
apiVersion: inference.networking.k8s.io/v1
kind: InferencePool
metadata: {name: pool, namespace: default}
spec:
  targetPorts: [{number: 8000}]
  selector: {matchLabels: {app: vllm-llama3-8b-instruct}}
  endpointPickerRef: {name: vllm-llama3-8b-instruct-epp, port: {number: 9002}}
"""


def test_s16_listener_set_parent_and_present_inference_pool_resolve() -> None:
    result = lint_text(S16_ROUTE + INFERENCE_POOL)
    assert problems(result) == []
    assert only(result, "PL406") == [] and only(result, "PL411") == []
    route = lookup(result, "HTTPRoute", "default", "r1")
    (att,) = result.project.topology().parent_attachments(route)
    assert (att.status, [lst.label() for lst in att.listeners]) == (Attachment.ACCEPTED, ["ListenerSet default/ls1#extra"])
    (ref,) = result.project.topology().refs_from(route)
    assert ref.status == ReferenceStatus.RESOLVED and ref.target is not None and ref.target.kind == "InferencePool"


def test_s16_absent_inference_pool_is_a_warning_not_an_error() -> None:
    result = lint_text(S16_ROUTE)
    assert problems(result) == [("PL411", "HTTPRoute default/r1", "spec.rules[0].backendRefs[0]")]
    (finding,) = only(result, "PL411")
    assert finding.severity is Severity.WARNING
    assert finding.message.startswith("unresolved backend of a kind not modelled")
    (ref,) = result.project.topology().refs_from(lookup(result, "HTTPRoute", "default", "r1"))
    assert ref.status == ReferenceStatus.OPAQUE


def test_s16_missing_listener_set_is_reported_as_a_listener_set_not_a_gateway() -> None:
    result = lint_text(S16_ROUTE.replace("name: ls1}]", "name: ls2}]") + INFERENCE_POOL)
    (finding,) = only(result, "PL406")
    assert str(finding.object) == "HTTPRoute default/r1" and finding.path == "spec.parentRefs[0].name"
    assert "ListenerSet default/ls2" in finding.message and "Gateway default/ls2" not in finding.message


# ---------------------------------------------------------------------------------------
# S18 — namespaced policy targeting a cluster-scoped object: never silent
# ---------------------------------------------------------------------------------------

S18_CLASS = gateway_class("foo")
CLASS_TARGET = "{group: gateway.networking.k8s.io, kind: GatewayClass, name: foo}"


def test_s18_namespaced_policy_on_gatewayclass_is_reported() -> None:
    result = lint_text(policy_crd("ColorPolicy") + S18_CLASS + color_policy("t", "default", CLASS_TARGET))
    assert problems(result) == [("PL204", "ColorPolicy default/t", "spec.targetRefs[0].kind")]
    assert only(result, "PL204")[0].severity is Severity.WARNING


def test_s18_cluster_scoped_policy_on_gatewayclass_attaches() -> None:
    result = lint_text(policy_crd("ColorPolicy", scope="Cluster") + S18_CLASS + color_policy("t", None, CLASS_TARGET))
    assert problems(result) == []
    (res,) = resolutions(result, "t")
    assert (
        (res.status.label, res.detail.label) == ("Accepted", "Resolved") and res.target is not None and res.target.name == "foo"
    )


# ---------------------------------------------------------------------------------------
# False-positive guards: where a controller attaches, no error and no warning
# ---------------------------------------------------------------------------------------

LISTENER_SET_SETUP = (
    CLASS
    + gateway(ns="infra", spec="  allowedListeners: {namespaces: {from: All}}\n")
    + listener_set(ns="team-a", parent="{name: gw, namespace: infra}", listeners="[{name: http, protocol: HTTP, port: 8080}]")
    + route("[{group: gateway.networking.k8s.io, kind: ListenerSet, name: ls}]", name="whole-set", ns="team-a")
    + route("[{kind: ListenerSet, name: ls, sectionName: http, port: 8080}]", name="one-listener", ns="team-a")
    + service(ns="team-a")
)


def test_guard_listener_set_parents() -> None:
    result = lint_text(LISTENER_SET_SETUP)
    assert problems(result) == []
    topo = result.project.topology()
    for name in ("whole-set", "one-listener"):
        (att,) = topo.parent_attachments(lookup(result, "HTTPRoute", "team-a", name))
        assert [lst.label() for lst in att.listeners] == ["ListenerSet team-a/ls#http"]


def test_guard_non_service_backends_present_in_the_input() -> None:
    rules = (
        "  - name: llm\n    backendRefs: [{group: inference.networking.k8s.io, kind: InferencePool, name: pool}]\n"
        "  - name: external\n    backendRefs: [{group: gateway.envoyproxy.io, kind: Backend, name: ext-api, port: 443}]\n"
    )
    text = (
        CLASS
        + gateway()
        + route(rules=rules)
        + """\
---
apiVersion: gateway.envoyproxy.io/v1alpha1
kind: Backend
metadata: {name: ext-api, namespace: app}
spec:
  endpoints: [{fqdn: {hostname: api.example.com, port: 443}}]
"""
        + INFERENCE_POOL.replace("namespace: default", "namespace: app")
    )
    result = lint_text(text)
    assert problems(result) == []
    refs = result.project.topology().refs_from(lookup(result, "HTTPRoute", "app", "r"))
    assert [(r.kind, r.status) for r in refs] == [
        ("InferencePool", ReferenceStatus.RESOLVED),
        ("Backend", ReferenceStatus.RESOLVED),
    ]


def test_guard_same_listener_name_on_a_gateway_and_its_listener_set() -> None:
    # Listener names may repeat across a Gateway and its ListenerSets (docs/semantics.md#listenersets): each sectionName
    # resolves on the object the reference names.
    policies = (
        policy(
            "ClientTrafficPolicy",
            "[{group: gateway.networking.k8s.io, kind: Gateway, name: gw, sectionName: http}]",
            name="on-gateway",
            ns="infra",
        )
        + policy(
            "ClientTrafficPolicy",
            "[{group: gateway.networking.k8s.io, kind: ListenerSet, name: ls, sectionName: http}]",
            name="on-set",
            ns="team-a",
        )
        + route("[{name: gw, sectionName: http}]", name="on-gateway", ns="infra")
        + service(ns="infra")
    )
    # A ClientTrafficPolicy may target a ListenerSet from Envoy Gateway v1.9 on (the CEL rule on its
    # targetRefs): the cluster runs it (older releases refuse the policy, a PL704 warning otherwise).
    result = lint_text(LISTENER_SET_SETUP + policies, implementations=["envoy-gateway@v1.9"])
    assert problems(result) == []
    (gw,) = resolutions(result, "on-gateway")
    assert gw.target is not None and gw.target.kind == "Gateway" and gw.section is not None
    assert gw.section.path == "spec.listeners[0]"
    (ls,) = resolutions(result, "on-set")
    assert ls.target is not None and (ls.target.kind, ls.target.namespace) == ("ListenerSet", "team-a") and ls.section is not None
    topo = result.project.topology()
    (att,) = topo.parent_attachments(lookup(result, "HTTPRoute", "infra", "on-gateway"))
    assert [(lst.label(), lst.port) for lst in att.listeners] == [("Gateway infra/gw#http", 80)]


def test_guard_wildcard_hostnames_that_intersect() -> None:
    listeners = (
        '  - {name: wildcard, protocol: HTTP, port: 80, hostname: "*.example.com"}\n'
        "  - {name: exact, protocol: HTTP, port: 8080, hostname: foo.example.com}\n"
    )
    text = (
        CLASS
        + gateway(listeners)
        + route("[{name: gw, sectionName: wildcard}]", name="deep", hostnames="[a.b.example.com]")
        + route("[{name: gw, sectionName: exact}]", name="wild", hostnames='["*.example.com"]')
        + service()
    )
    result = lint_text(text)
    assert problems(result) == []
    topo = result.project.topology()
    for name in ("deep", "wild"):
        (att,) = topo.parent_attachments(lookup(result, "HTTPRoute", "app", name))
        assert att.status == Attachment.ACCEPTED


def test_guard_selector_namespaces_with_labels() -> None:
    listener = selector_listener(
        "          matchExpressions:\n"
        "          - {key: env, operator: In, values: [prod, staging]}\n"
        "          - {key: quarantined, operator: DoesNotExist}\n"
    )
    text = (
        CLASS
        + gateway(listener, ns="infra")
        + namespace("team-a", "{env: prod}")
        + route("[{name: gw, namespace: infra}]", ns="team-a")
        + service(ns="team-a")
    )
    result = lint_text(text)
    assert problems(result) == []
    (att,) = result.project.topology().parent_attachments(lookup(result, "HTTPRoute", "team-a", "r"))
    assert (att.status, att.assumptions) == (Attachment.ACCEPTED, ())


SELECTOR_POLICY = (
    CLASS
    + gateway("[{name: http, protocol: HTTP, port: 80, allowedRoutes: {namespaces: {from: All}}}]", ns="infra")
    + route("[{name: gw, namespace: infra}]", ns="team-a", labels="{app: web}")
    + service(ns="team-a")
    + policy(
        "BackendTrafficPolicy",
        "  - kind: HTTPRoute\n    matchLabels: {app: web}\n    namespaces: {from: All}\n",
        name="timeouts",
        ns="infra",
        field="targetSelectors",
        spec="  timeout: {http: {requestTimeout: 5s}}\n",
    )
)
SELECTOR_GRANT = reference_grant(
    "team-a",
    "[{group: gateway.envoyproxy.io, kind: BackendTrafficPolicy, namespace: infra}]",
    "[{group: gateway.networking.k8s.io, kind: HTTPRoute}]",
    "infra-policies",
)


def test_guard_target_selector_across_namespaces_with_a_grant() -> None:
    # Envoy Gateway targetSelectors with namespaces.from: All; each cross-namespace match needs a grant
    # (docs/semantics.md#envoy-gateway).
    result = lint_text(SELECTOR_POLICY + SELECTOR_GRANT)
    assert problems(result) == []
    (res,) = resolutions(result, "timeouts")
    assert (
        (res.status.label, res.detail.label) == ("Accepted", "SelectorMatch")
        and res.target is not None
        and res.target.namespace == "team-a"
    )
    without = lint_text(SELECTOR_POLICY)
    assert problems(without) == [("PL401", "BackendTrafficPolicy infra/timeouts", "spec.targetSelectors[0]")]


def _own_namespace_selector(labels: str | None) -> str:
    """A policy in team-a selecting labelled routes in the namespaces labelled policy-target=granted,
    with team-a's Namespace (labelled `labels`) in the input or not (None)."""
    return (
        CLASS
        + gateway(ns="team-a")
        + route(ns="team-a", labels="{app: web}")
        + service(ns="team-a")
        + (namespace("team-a", labels) if labels is not None else "")
        + policy(
            "BackendTrafficPolicy",
            "  - kind: HTTPRoute\n    matchLabels: {app: web}\n"
            "    namespaces: {from: Selector, selector: {matchLabels: {policy-target: granted}}}\n",
            name="sel",
            ns="team-a",
            field="targetSelectors",
            spec="  timeout: {http: {requestTimeout: 5s}}\n",
        )
    )


def test_a_namespace_selector_takes_the_policys_own_namespace_only_when_its_labels_match() -> None:
    # Envoy Gateway decides namespaces.from: Selector by the namespace's labels alone, its own
    # included (internal/gatewayapi/helpers.go targetSelectorNamespacesMatch); its e2e test
    # backendtrafficpolicy-cross-namespace.yaml keeps such policies in an unlabelled namespace,
    # where they select nothing. Before: the route was selected, and conflicted with any other
    # policy on it (PL601).
    unlabelled = lint_text(_own_namespace_selector("{team: x}"))
    assert resolutions(unlabelled, "sel") == []
    (finding,) = only(unlabelled, "PL414")
    assert "there is no HTTPRoute in namespaces matching policy-target in (granted) in the input" in finding.message
    assert (
        "HTTPRoute team-a/r has the labels but is in namespace team-a; its Namespace's labels do not match"
        " policy-target in (granted): label it or widen namespaces.selector" in finding.message
    )
    labelled = lint_text(_own_namespace_selector("{policy-target: granted}"))
    assert problems(labelled) == []
    (res,) = resolutions(labelled, "sel")
    assert (res.detail.label, res.target is not None and res.target.name) == ("SelectorMatch", "r")
    # The Namespace is not in the input: its labels are unknown, so the match is undecided: no
    # target, no PL414 that it matches nothing, and PL420 says so.
    unknown = lint_text(_own_namespace_selector(None))
    assert resolutions(unknown, "sel") == []
    assert only(unknown, "PL414") == []
    (policy,) = [p for p in unknown.project.resolution.policies() if p.obj.name == "sel"]
    assert [(u.target.name, u.namespace) for u in unknown.project.resolution.undecided_targets(policy)] == [("r", "team-a")]
    assert [f.path for f in only(unknown, "PL420")] == ["spec.targetSelectors[0].namespaces"]


def test_a_selector_match_in_a_namespace_not_in_the_input_is_undecided() -> None:
    # Envoy Gateway's e2e testdata has such policies whose routes live in a namespace another
    # suite creates, unlabelled (test/e2e/upgrade/manifests.yaml): whether the selector reaches
    # the route at all depends on labels the input does not show, so no PL401 may rest on it
    # (docs/semantics.md#namespaces-not-in-the-input). Before: PL401, "assumed to match".
    text = SELECTOR_POLICY.replace(
        "namespaces: {from: All}\n", "namespaces: {from: Selector, selector: {matchLabels: {team: a}}}\n"
    )
    unknown = lint_text(text)
    assert only(unknown, "PL401") == []
    (info,) = only(unknown, "PL420")
    assert "Namespace team-a cannot be decided" in info.message
    (labelled,) = only(lint_text(text + namespace("team-a", "{team: a}")), "PL401")
    assert "assumed" not in labelled.message
    assert only(lint_text(text + namespace("team-a", "{team: b}")), "PL401") == []


def test_guard_partial_repository_with_external_objects() -> None:
    # One team's slice: the shared Gateway, its class and the other namespace's grants live elsewhere.
    text = first(
        route(
            "[{name: shared, namespace: infra, sectionName: http}]",
            name="search",
            ns="team-b",
            rules="[{backendRefs: [{name: catalog, namespace: team-a, port: 8080}]}]",
        )
    )
    bare = lint_text(text)
    # The input holds no Gateway in namespace infra: the missing one is unprovable, a warning
    # (docs/semantics.md#partial-repositories); the missing grant is an error.
    assert sorted(f.rule for f in bare.findings if f.severity is Severity.ERROR) == ["PL402"]
    assert [f.rule for f in bare.findings if f.severity is Severity.WARNING and f.rule == "PL406"] == ["PL406"]
    external = ExternalObjects.parse(["Gateway/infra/*", "ReferenceGrant/team-a/*", "Service/team-a/*"])
    result = lint_text(text, external=external)
    assert problems(result) == []
    search = lookup(result, "HTTPRoute", "team-b", "search")
    (att,) = result.project.topology().parent_attachments(search)
    assert att.status.label == "External" and att.attached
    (ref,) = result.project.topology().refs_from(search)
    assert ref.status.label == "External" and ref.grant is not None and ref.grant.assumed


# The README's table "What an external object changes": each row, without and with the pattern.
EXTERNAL_ROWS = [
    pytest.param(
        first(
            listener_set(
                ns="team-a", parent="{name: shared, namespace: infra}", listeners="[{name: http, protocol: HTTP, port: 8080}]"
            )
        ),
        "Gateway/infra/shared",
        "PL409",
        id="listener-set-parent",
    ),
    pytest.param(
        first(route(rules="[{backendRefs: [{group: inference.networking.k8s.io, kind: InferencePool, name: pool}]}]")),
        "InferencePool.inference.networking.k8s.io/app/*",
        "PL411",
        id="inference-pool-backend",
    ),
    pytest.param(
        first(policy("ClientTrafficPolicy", "[{group: gateway.networking.k8s.io, kind: Gateway, name: shared}]", ns="infra")),
        "Gateway/infra/*",
        "PL201",
        id="policy-target",
    ),
    pytest.param(
        policy_crd("ColorPolicy")
        + gateway(name="shared", ns="infra")
        + color_policy("p", "team-a", "{group: gateway.networking.k8s.io, kind: Gateway, name: shared, namespace: infra}"),
        "ReferenceGrant/infra/*",
        "PL401",
        id="policy-grant",
    ),
]


@pytest.mark.parametrize(("text", "pattern", "rule"), EXTERNAL_ROWS)
def test_external_objects_silence_the_not_found_and_not_permitted_rules(text: str, pattern: str, rule: str) -> None:
    # Context for the rows, silencing nothing a row tests: the backend row's route is attached, the
    # policy-grant row's Gateway has a class.
    base = ["Gateway/app/*", "GatewayClass/*"]
    assert rule in {f.rule for f in lint_text(text, external=ExternalObjects.parse(base)).findings}
    result = lint_text(text, external=ExternalObjects.parse([*base, pattern]))
    assert problems(result) == []


def test_external_target_in_another_namespace_still_needs_its_grant() -> None:
    text = policy_crd("ColorPolicy") + color_policy(
        "p", "team-a", "{group: gateway.networking.k8s.io, kind: Gateway, name: shared, namespace: infra}"
    )
    result = lint_text(text, external=ExternalObjects.parse(["Gateway/infra/*"]))
    assert problems(result) == [("PL401", "ColorPolicy team-a/p", "spec.targetRefs[0]")]


# ---------------------------------------------------------------------------------------
# tests/data/multi-namespace: a valid multi-namespace setup, then one handshake broken at a time
# ---------------------------------------------------------------------------------------


def test_multi_namespace_setup_is_clean() -> None:
    result = lint_paths([MULTI_NAMESPACE])
    assert result.findings == []
    topo = result.project.topology()
    for ns, name in (("team-a", "storefront"), ("team-b", "search")):
        (att,) = topo.parent_attachments(lookup(result, "HTTPRoute", ns, name))
        assert (att.status, [lst.name for lst in att.listeners], att.assumptions) == (Attachment.ACCEPTED, ["http"], ())
    (color,) = resolutions(result, "storefront-color")
    assert (
        (color.status.label, color.detail.label) == ("Accepted", "Resolved") and color.grant is not None and color.grant.permitted
    )
    search = topo.refs_from(lookup(result, "HTTPRoute", "team-b", "search"))
    assert [(r.namespace, r.name, r.status) for r in search] == [
        ("team-b", "search", ReferenceStatus.RESOLVED),
        ("team-a", "catalog", ReferenceStatus.RESOLVED),
    ]
    (cert,) = topo.refs_from(lookup(result, "Gateway", "infra", "shared"))
    assert (cert.namespace, cert.name, cert.grant is not None and cert.grant.permitted) == ("certs", "wildcard-example-com", True)


# Each case removes one grant or one namespace label by text substitution and expects exactly one
# finding: (file the finding is in, rule, object, path, line), lines counted in the fixture files.
INFRA_COLOR_GRANT = """\
---
# team-a's ColorPolicy targets this Gateway's http listener from its own namespace.
apiVersion: gateway.networking.k8s.io/v1beta1
kind: ReferenceGrant
metadata:
  name: team-a-color
  namespace: infra
spec:
  from:
  - group: example.com
    kind: ColorPolicy
    namespace: team-a
  to:
  - group: gateway.networking.k8s.io
    kind: Gateway
    name: shared
"""
TEAM_A_ROUTE_GRANT = """\
---
# team-b's search route may send traffic to the catalog Service.
apiVersion: gateway.networking.k8s.io/v1beta1
kind: ReferenceGrant
metadata:
  name: team-b-routes
  namespace: team-a
spec:
  from:
  - group: gateway.networking.k8s.io
    kind: HTTPRoute
    namespace: team-b
  to:
  - group: ""
    kind: Service
    name: catalog
"""
TEAM_A_LABELS = '  labels:\n    team: a\n    shared-gateway-access: "true"\n'
TEAM_B_LABELS = '  labels:\n    team: b\n    shared-gateway-access: "true"\n'

MUTATIONS = [
    pytest.param(
        "certs/reference-grant.yaml",
        None,  # the whole file
        ("infra/gateway.yaml", "PL402", "Gateway infra/shared", "spec.listeners[0].tls.certificateRefs[0]", 16),
        id="certificate-grant",
    ),
    pytest.param(
        "infra/gateway.yaml",
        (INFRA_COLOR_GRANT, ""),
        ("team-a/app.yaml", "PL401", "ColorPolicy team-a/storefront-color", "spec.targetRefs[0]", 59),
        id="policy-grant",
    ),
    pytest.param(
        "team-a/app.yaml",
        (TEAM_A_ROUTE_GRANT, ""),
        ("team-b/app.yaml", "PL402", "HTTPRoute team-b/search", "spec.rules[1].backendRefs[0]", 22),
        id="backend-grant",
    ),
    pytest.param(
        "cluster/namespaces.yaml",
        (TEAM_A_LABELS, "  labels:\n    team: a\n"),
        ("team-a/app.yaml", "PL408", "HTTPRoute team-a/storefront", "spec.parentRefs[0]", 8),
        id="team-a-label",
    ),
    pytest.param(
        "cluster/namespaces.yaml",
        (TEAM_B_LABELS, "  labels:\n    team: b\n"),
        ("team-b/app.yaml", "PL408", "HTTPRoute team-b/search", "spec.parentRefs[0]", 8),
        id="team-b-label",
    ),
]


@pytest.mark.parametrize(("file", "substitution", "expected"), MUTATIONS)
def test_multi_namespace_each_handshake_broken(
    tmp_path: Path, file: str, substitution: tuple[str, str] | None, expected: tuple[str, str, str, str, int]
) -> None:
    tree = tmp_path / "multi-namespace"
    shutil.copytree(MULTI_NAMESPACE, tree)
    target = tree / file
    if substitution is None:
        target.unlink()
    else:
        old, new = substitution
        text = target.read_text(encoding="utf-8")
        assert text.count(old) == 1, f"{old!r} must occur once in {file}"
        target.write_text(text.replace(old, new), encoding="utf-8")
    result = lint_paths([tree])
    found = [
        (Path(f.file).relative_to(tree).as_posix(), f.rule, str(f.object), f.path, f.line)
        for f in result.findings
        if f.severity >= Severity.WARNING
    ]
    assert found == [expected]


def _s14_policy(section: str | None) -> str:
    # Envoy Gateway BackendTrafficPolicy: effective at the route rule (its profile), so each
    # context is listener > route > rule.
    section_line = f"    sectionName: {section}\n" if section else ""
    return (
        "---\napiVersion: gateway.envoyproxy.io/v1alpha1\nkind: BackendTrafficPolicy\n"
        "metadata: {name: gw1-policy, namespace: app}\nspec:\n  targetRefs:\n"
        "  - group: gateway.networking.k8s.io\n    kind: Gateway\n    name: gateway-1\n"
        + section_line
        + "  timeout:\n    http:\n      requestTimeout: 5s\n"
    )


def test_s14_blast_radius_of_a_policy_on_gateway_1() -> None:
    result = lint_text(S14 + _s14_policy(None))
    [policy] = result.project.resolution.policies()
    counts = result.project.simulation().policy_affects(policy).counts()
    # S14: 5 contexts (l1>r1#1, l1>r1#2, l2>r1#1, l2>r1#2, l2>r2#1); 3 rules and 2 routes; the
    # backends service-1, service-2 and service-3#port-1 (the backendRef names port 80).
    assert counts == {"contexts": 5, "routes": 2, "rules": 3, "listeners": 2, "gateways": 1, "backends": 3}


def test_s14_blast_radius_of_a_policy_on_gateway_1_listener_2() -> None:
    result = lint_text(S14 + _s14_policy("listener-2"))
    [policy] = result.project.resolution.policies()
    counts = result.project.simulation().policy_affects(policy).counts()
    # S14: 3 contexts (l2>r1#1, l2>r1#2, l2>r2#1): both routes, their 3 rules, one listener.
    assert counts == {"contexts": 3, "routes": 2, "rules": 3, "listeners": 1, "gateways": 1, "backends": 3}
