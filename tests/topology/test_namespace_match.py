"""A namespace selector (`namespaces.from: Selector`) against a Namespace that is not in the input:
the match is Unknown, and no finding rests on it (docs/semantics.md#namespaces-not-in-the-input;
policylint.semantics.resolution `namespace_selected`, PL420).
"""

from __future__ import annotations

from pathlib import Path

from policylint.findings import Severity
from policylint.k8s.selectors import parse_selector
from policylint.vocabulary import NamespaceMatch
from tests.lintutil import ROOT, lint_paths, lint_text, only

E2E = ROOT / "tests" / "data" / "envoy-gateway-e2e"
FIXTURE = E2E / "backendtrafficpolicy-cross-namespace.yaml"
UPGRADE = E2E / "eg-upgrade.yaml"
FILE = str(FIXTURE.relative_to(ROOT))


def located(findings: list[object]) -> list[tuple[str, int, str]]:
    return [(f.file, f.line, str(f.object)) for f in findings]  # type: ignore[attr-defined]


def test_envoy_gateway_cross_namespace_fixture_has_no_pl401_on_unknown_labels(monkeypatch: object) -> None:
    import os

    os.chdir(ROOT)
    result = lint_paths([FIXTURE.relative_to(ROOT), UPGRADE.relative_to(ROOT)])
    # Before: two more PL401, one under each policy, for the HTTPRoute of gateway-upgrade-infra,
    # whose Namespace (and so its policy-target label) is not in the input. The one left is the
    # fixture's point: no ReferenceGrant in btp-cross-ns-denied admits the denied policy.
    pl401 = only(result, "PL401")
    assert located(pl401) == [(FILE, 148, "BackendTrafficPolicy gateway-conformance-infra/cross-namespace-btp-denied")]
    assert "HTTPRoute btp-cross-ns-denied/cross-namespace-btp" in pl401[0].message
    # Said once per selector, at its `namespaces` (lines 132 and 150 of the fixture; the
    # selectors themselves start at 130 and 148).
    pl420 = only(result, "PL420")
    assert located(pl420) == [
        (FILE, 132, "BackendTrafficPolicy gateway-conformance-infra/cross-namespace-btp-granted"),
        (FILE, 150, "BackendTrafficPolicy gateway-conformance-infra/cross-namespace-btp-denied"),
    ]
    assert all(f.severity is Severity.INFO for f in pl420)
    assert pl420[0].message == (
        "targetSelectors[0] of BackendTrafficPolicy gateway-conformance-infra/cross-namespace-btp-granted matches the"
        " labels of HTTPRoute gateway-upgrade-infra/http-backend-eg-upgrade, but whether namespaces.selector"
        " (policy-target in (granted))"
        " takes Namespace gateway-upgrade-infra cannot be decided: it is not in the input, so only the name label is"
        " known; these matches are left out, and no finding rests on them"
    )
    assert "--complete" in (pl420[0].hint or "")
    assert only(result, "PL414") == []  # nor "matches nothing": the matches are undecided, not absent


def test_complete_decides_a_namespace_not_in_the_input_has_only_its_name_label() -> None:
    import os

    os.chdir(ROOT)
    result = lint_paths([FIXTURE.relative_to(ROOT), UPGRADE.relative_to(ROOT)], complete=True)
    assert only(result, "PL420") == []
    assert [f.line for f in only(result, "PL401")] == [148]


def test_a_decided_match_is_still_reported(tmp_path: Path) -> None:
    # The Namespace in the input with the label: the granted policy selects its routes, and no
    # ReferenceGrant there admits it.
    namespace = tmp_path / "namespace.yaml"
    namespace.write_text(
        "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: gateway-upgrade-infra\n  labels:\n    policy-target: granted\n",
        encoding="utf-8",
    )
    result = lint_paths([FIXTURE, UPGRADE, namespace])
    assert only(result, "PL420") == []
    pl401 = only(result, "PL401")
    assert [f.line for f in pl401] == [130, 148]  # each policy's targetSelectors[0]
    assert "HTTPRoute gateway-upgrade-infra/http-backend-eg-upgrade" in pl401[0].message
    assert "HTTPRoute btp-cross-ns-denied/cross-namespace-btp" in pl401[1].message


ROUTE_THROUGH_SELECTOR = """\
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata:
  name: eg
spec:
  controllerName: gateway.envoyproxy.io/gatewayclass-controller
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata:
  name: edge
  namespace: infra
spec:
  gatewayClassName: eg
  listeners:
  - name: http
    protocol: HTTP
    port: 80
    allowedRoutes:
      namespaces:
        from: Selector
        selector:
          matchLabels:
            shared-gateway: "true"
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata:
  name: store
  namespace: team-a
spec:
  parentRefs:
  - name: edge
    namespace: infra
  rules:
  - name: main
    backendRefs:
    - name: store
      port: 8080
---
apiVersion: v1
kind: Service
metadata:
  name: store
  namespace: team-a
spec:
  ports:
  - port: 8080
"""


def test_a_route_through_an_undecided_allowed_routes_selector_is_not_reported_refused() -> None:
    result = lint_text(ROUTE_THROUGH_SELECTOR)
    # Said once, at info, on the selector that could not be decided; nothing else.
    assert [(f.rule, f.line, str(f.object), f.path) for f in result.findings] == [
        ("PL425", 20, "Gateway infra/edge", "spec.listeners[0].allowedRoutes.namespaces")
    ]
    route = next(o for o in result.project.index.objects if o.kind == "HTTPRoute")
    attachment = result.project.topology().parent_attachments(route)
    # Neither attached nor refused: the verdict is its own, with its reason.
    assert [a.status.value for a in attachment] == ["NamespaceLabelsUnknown"]
    assert not attachment[0].attached and attachment[0].undecided
    assert [(u.namespace, u.listener, str(u.selector)) for u in attachment[0].unknown] == [
        ("team-a", "http", "shared-gateway in (true)")
    ]
    assert result.project.topology().traffic(route)[0].value == "Unknown"
    # With --complete the Namespace has only its name label: refused, and said so.
    complete = lint_text(ROUTE_THROUGH_SELECTOR, complete=True)
    assert [(f.rule, f.line) for f in complete.findings if f.rule.startswith("PL4")] == [("PL408", 33)]


def test_namespace_selected_is_three_valued() -> None:
    known = "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: labelled\n  labels:\n    team: a\n"
    resolution = lint_text(known).project.resolution
    team_a = parse_selector({"matchLabels": {"team": "a"}})
    assert resolution.namespace_selected(team_a, "labelled") is NamespaceMatch.MATCHES
    assert resolution.namespace_selected(parse_selector({"matchLabels": {"team": "b"}}), "labelled") is NamespaceMatch.NO_MATCH
    assert resolution.namespace_selected(team_a, "elsewhere") is NamespaceMatch.UNKNOWN
    # The API server sets the name label on every Namespace: a requirement on it decides alone.
    by_name = parse_selector({"matchLabels": {"kubernetes.io/metadata.name": "other", "team": "a"}})
    assert resolution.namespace_selected(by_name, "elsewhere") is NamespaceMatch.NO_MATCH
    named = parse_selector({"matchLabels": {"kubernetes.io/metadata.name": "elsewhere"}})
    assert resolution.namespace_selected(named, "elsewhere") is NamespaceMatch.MATCHES
    complete = lint_text(known, complete=True).project.resolution
    assert complete.namespace_selected(team_a, "elsewhere") is NamespaceMatch.NO_MATCH


def _gateway_and_team_policies(namespace_doc: str = "") -> str:
    """A Gateway policy and a route policy on a route admitted through a label selector."""
    return (
        namespace_doc
        + ROUTE_THROUGH_SELECTOR
        + """---
apiVersion: gateway.envoyproxy.io/v1alpha1
kind: BackendTrafficPolicy
metadata:
  name: timeouts
  namespace: team-a
spec:
  targetRefs:
  - group: gateway.networking.k8s.io
    kind: HTTPRoute
    name: store
  timeout:
    http:
      requestTimeout: 10s
---
apiVersion: gateway.envoyproxy.io/v1alpha1
kind: BackendTrafficPolicy
metadata:
  name: gw-timeouts
  namespace: infra
spec:
  targetRefs:
  - group: gateway.networking.k8s.io
    kind: Gateway
    name: edge
  timeout:
    http:
      requestTimeout: 30s
"""
    )


def test_no_effective_policy_rests_on_an_undecided_route_attachment() -> None:
    # Before: PL602 said the Gateway's defaults were overridden in the route's context, a context
    # that exists only if team-a carries the label; and nothing said the route might not attach.
    result = lint_text(_gateway_and_team_policies())
    assert [f.rule for f in result.findings] == ["PL425"]
    # Nor "the target carries no traffic" (PL413): unknown is not "not attached".
    assert only(result, "PL413") == []
    labelled = "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: team-a\n  labels:\n    shared-gateway: 'true'\n---\n"
    decided = lint_text(_gateway_and_team_policies(labelled))
    assert [f.rule for f in decided.findings] == ["PL602"]
    unlabelled = "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: team-a\n---\n"
    refused = lint_text(_gateway_and_team_policies(unlabelled))
    assert sorted(f.rule for f in refused.findings) == ["PL408", "PL413"]


LISTENER_SET = (ROOT / "tests" / "rules" / "PL425-namespace-labels-unknown" / "bad.yaml").read_text(encoding="utf-8")


def test_an_undecided_listener_set_has_no_listener_conflict() -> None:
    # Before: PL416 said the ListenerSet's listener conflicts with the Gateway's, as if the Gateway
    # had admitted it; team-b's labels are not in the input.
    result = lint_text(LISTENER_SET)
    assert [(f.rule, f.line) for f in result.findings] == [("PL425", 16), ("PL425", 27)]
    listener_set = next(o for o in result.project.index.objects if o.kind == "ListenerSet")
    att = result.project.topology().listener_sets[listener_set]
    assert att.status.value == "NamespaceLabelsUnknown" and att.unknown is not None
    assert (att.unknown.namespace, att.unknown.path) == ("team-b", "spec.allowedListeners.namespaces")
    # With --complete the Namespaces carry only their name labels: refused, and said so.
    complete = lint_text(LISTENER_SET, complete=True)
    assert sorted(f.rule for f in complete.findings) == ["PL408", "PL409"]


def test_a_listener_that_admits_for_certain_decides_the_attachment() -> None:
    # A second listener admitting from All: attached through it alone, the undecided one noted.
    text = ROUTE_THROUGH_SELECTOR.replace(
        "  - name: http\n",
        "  - name: any\n    protocol: HTTP\n    port: 8080\n    allowedRoutes:\n      namespaces:\n        from: All\n  - name: http\n",
        1,
    )
    result = lint_text(text)
    route = next(o for o in result.project.index.objects if o.kind == "HTTPRoute")
    (att,) = result.project.topology().parent_attachments(route)
    assert att.status.value == "Accepted"
    assert [lst.name for lst in att.listeners] == ["any"]
    assert [u.listener for u in att.unknown] == ["http"]
    assert [f.rule for f in result.findings] == ["PL425"]


def test_no_unused_grant_rests_on_an_undecided_match() -> None:
    # The fixture without its Namespaces: whether the granted policy's selector takes the granted
    # namespace is unknown (PL420), so the grant it would use may be used: no PL404 (before: one,
    # on that grant).
    text = "---\n".join(d for d in FIXTURE.read_text(encoding="utf-8").split("---\n") if "kind: Namespace\n" not in d)
    result = lint_text(text)
    assert len(only(result, "PL420")) == 2
    assert only(result, "PL404") == []
    # Decided, the grant is used, and an unused grant next to it is still reported.
    unused = (
        "---\napiVersion: gateway.networking.k8s.io/v1beta1\nkind: ReferenceGrant\nmetadata:\n  name: stale\n"
        "  namespace: btp-cross-ns-granted\nspec:\n  from:\n  - group: gateway.envoyproxy.io\n"
        "    kind: BackendTrafficPolicy\n    namespace: elsewhere\n  to:\n  - group: gateway.networking.k8s.io\n"
        "    kind: HTTPRoute\n"
    )
    result = lint_text(text + unused)
    assert [str(f.object) for f in only(result, "PL404")] == ["ReferenceGrant btp-cross-ns-granted/stale"]
