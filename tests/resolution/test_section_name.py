"""PL3xx sectionName rules and section resolution: scenarios S12 and S13, the JSON report's view."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from policylint.findings import Severity
from policylint.pipeline import LintResult
from policylint.reporters import json as json_reporter
from tests.lintutil import lint_paths, lint_text, only

GATEWAY = """\
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
  name: gw
  namespace: infra
spec:
  gatewayClassName: eg
  listeners:
  - {name: http, protocol: HTTP, port: 80}
  - {name: https, protocol: HTTPS, port: 443, tls: {certificateRefs: [{name: gw-cert}]}}
"""


def ctp(name: str, section: str | None = None, *, target: str = "gw", kind: str = "Gateway", ns: str = "infra") -> str:
    section_line = f"\n    sectionName: {section}" if section else ""
    return f"""\
---
apiVersion: gateway.envoyproxy.io/v1alpha1
kind: ClientTrafficPolicy
metadata:
  name: {name}
  namespace: {ns}
spec:
  targetRefs:
  - group: gateway.networking.k8s.io
    kind: {kind}
    name: {target}{section_line}
"""


def btp(name: str, section: str, *, target: str = "r", ns: str = "app") -> str:
    return f"""\
---
apiVersion: gateway.envoyproxy.io/v1alpha1
kind: BackendTrafficPolicy
metadata:
  name: {name}
  namespace: {ns}
spec:
  targetRefs:
  - group: gateway.networking.k8s.io
    kind: HTTPRoute
    name: {target}
    sectionName: {section}
"""


def rlp(name: str, section: str, *, target: str = "r", ns: str = "app") -> str:
    return f"""\
---
apiVersion: kuadrant.io/v1
kind: RateLimitPolicy
metadata:
  name: {name}
  namespace: {ns}
spec:
  targetRef:
    group: gateway.networking.k8s.io
    kind: HTTPRoute
    name: {target}
    sectionName: {section}
  limits:
    per-client:
      rates: [{{limit: 5, window: 1m}}]
"""


# S13: rules [first, <unnamed>, third]
ROUTE_S13 = """\
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata:
  name: r
  namespace: app
spec:
  rules:
  - name: first
    backendRefs: [{name: web, port: 8080}]
  - backendRefs: [{name: web, port: 8080}]
  - name: third
    backendRefs: [{name: web, port: 8080}]
"""


def targets_by_policy(result: LintResult) -> dict[str, list[dict[str, Any]]]:
    return {f"{p['object']['kind']} {p['object']['name']}": p["targets"] for p in json_reporter.report(result)["policies"]}


def pl3(result: LintResult) -> list[tuple[str, str, str]]:
    return [(f.rule, str(f.object), f.path) for f in result.findings if f.rule.startswith("PL3")]


# -- S12: sectionName specificity and a missing section ---------------------------------


def test_s12_missing_listener_is_reported_with_the_listeners_that_exist() -> None:
    result = lint_text(GATEWAY + ctp("a") + ctp("b", "https") + ctp("c", "ftp"))
    assert pl3(result) == [("PL301", "ClientTrafficPolicy infra/c", "spec.targetRefs[0].sectionName")]
    (finding,) = only(result, "PL301")
    assert finding.message == "listener ftp not found on Gateway gw; have: http, https"
    assert finding.severity is Severity.ERROR
    # The related location is the Gateway's listener list (GEP-2648: fail to attach; show what exists).
    assert [r.message for r in finding.related] == ["Gateway gw defines its listeners here"]
    assert finding.related[0].line == 15


def test_s12_json_report_shows_accepted_and_target_not_found() -> None:
    targets = targets_by_policy(lint_text(GATEWAY + ctp("a") + ctp("b", "https") + ctp("c", "ftp")))
    assert [(t["accepted"], t["detail"]) for t in targets["ClientTrafficPolicy a"]] == [("Accepted", "Resolved")]
    assert [(t["accepted"], t["detail"], t["ref"]["sectionName"]) for t in targets["ClientTrafficPolicy b"]] == [
        ("Accepted", "Resolved", "https")
    ]
    (c,) = targets["ClientTrafficPolicy c"]
    assert (c["accepted"], c["detail"]) == ("TargetNotFound", "SectionNotFound")
    assert c["message"] == "listener ftp not found on Gateway gw; have: http, https"
    assert c["ref"]["namespace"] == "infra"


def test_resolution_points_at_the_named_section() -> None:
    result = lint_text(GATEWAY + ctp("b", "https"))
    (policy,) = result.project.resolution.policies()
    res = result.project.resolution.resolve_target(policy, policy.refs[0])
    assert res.target is not None and res.target.name == "gw"
    assert res.section is not None and (res.section.name, res.section.path) == ("https", "spec.listeners[1]")


def test_close_section_name_gets_a_did_you_mean_hint() -> None:
    (finding,) = only(lint_text(GATEWAY + ctp("c", "htps")), "PL301")
    assert finding.message.endswith("; did you mean https?")


def test_listener_of_a_listenerset_is_named_as_the_object_to_target() -> None:
    listener_set = """\
---
apiVersion: gateway.networking.k8s.io/v1
kind: ListenerSet
metadata:
  name: extra
  namespace: infra
spec:
  parentRef: {name: gw}
  listeners:
  - {name: ftp, protocol: TCP, port: 21}
"""
    (finding,) = only(lint_text(GATEWAY + listener_set + ctp("c", "ftp")), "PL301")
    assert "listener ftp is defined on ListenerSet extra; target that object instead" in finding.message
    assert [r.message for r in finding.related][1] == "listener ftp is defined here"


def test_unnamed_rules_are_counted_in_the_list_of_sections() -> None:
    (finding,) = only(lint_text(ROUTE_S13 + btp("p", "fourth")), "PL301")
    assert finding.message == "rule fourth not found on HTTPRoute r; have: first, third (rule #2 unnamed)"


def test_service_port_names_are_sections() -> None:
    service = """\
apiVersion: v1
kind: Service
metadata: {name: web, namespace: app}
spec:
  ports:
  - {name: http, port: 80}
  - {name: grpc, port: 9090}
---
apiVersion: gateway.networking.k8s.io/v1
kind: BackendTLSPolicy
metadata: {name: web-tls, namespace: app}
spec:
  targetRefs:
  - {group: "", kind: Service, name: web, sectionName: https}
  validation: {hostname: web.app.svc, wellKnownCACertificates: System}
"""
    (finding,) = only(lint_text(service), "PL301")
    assert finding.message.startswith("port https not found on Service web; have: http, grpc")


# -- S13: rule names vs synthetic names --------------------------------------------------


def test_s13_real_name_attaches_and_synthetic_name_is_pl304_not_pl301() -> None:
    result = lint_text(ROUTE_S13 + rlp("p1", "first") + rlp("p2", "rule-2"))
    assert pl3(result) == [("PL304", "RateLimitPolicy app/p2", "spec.targetRef.sectionName")]
    (finding,) = only(result, "PL304")
    assert finding.severity is Severity.ERROR
    assert finding.message == (
        "rule #2 of HTTPRoute r is unnamed; policy-machinery/Kuadrant synthesize `rule-2`, the Gateway API spec does not: name the rule"
    )
    assert [(r.message, r.line) for r in finding.related] == [("rule #2 has no name", 10)]
    targets = targets_by_policy(result)
    assert [(t["accepted"], t["detail"]) for t in targets["RateLimitPolicy p1"]] == [("Accepted", "Resolved")]
    assert [(t["accepted"], t["detail"]) for t in targets["RateLimitPolicy p2"]] == [("TargetNotFound", "SyntheticRuleName")]


def test_s13_synthetic_rule_names_option_makes_it_a_warning_and_accepted() -> None:
    result = lint_text(ROUTE_S13 + rlp("p2", "rule-2"), synthetic_rule_names=True)
    (finding,) = only(result, "PL304")
    assert finding.severity is Severity.WARNING
    assert "synthetic rule names are enabled" in finding.message
    (target,) = targets_by_policy(result)["RateLimitPolicy p2"]
    assert (target["accepted"], target["detail"]) == ("Accepted", "SyntheticRuleName")


def test_s13_kuadrant_wording_only_for_kinds_that_synthesize_names() -> None:
    (finding,) = only(lint_text(ROUTE_S13 + btp("p", "rule-2")), "PL304")
    assert "Kuadrant" not in finding.message
    assert "the Gateway API spec and BackendTrafficPolicy do not: name the rule" in finding.message


def test_s13_a_real_name_takes_precedence_over_a_synthetic_one() -> None:
    # policy-machinery v0.8: `rule-1` is the name of rule #2 here, not the synthetic name of rule #1.
    route = ROUTE_S13.replace("  - name: third\n", "  - name: rule-1\n")
    result = lint_text(route + rlp("p", "rule-1"))
    assert pl3(result) == []
    (policy,) = result.project.resolution.policies()
    res = result.project.resolution.resolve_target(policy, policy.refs[0])
    assert (res.detail.label, res.section.position if res.section else None) == ("Resolved", 2)


def test_synthetic_name_beyond_the_rules_is_simply_not_found() -> None:
    result = lint_text(ROUTE_S13 + rlp("p", "rule-7"))
    assert [f.rule for f in result.findings if f.rule.startswith("PL3")] == ["PL301"]


# -- PL302 / PL303 -----------------------------------------------------------------------


def test_section_on_a_kind_known_only_from_a_crd_is_unchecked_not_reported() -> None:
    text = """\
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: meshes.example.com}
spec:
  group: example.com
  names: {kind: Mesh, plural: meshes}
  scope: Namespaced
  versions: [{name: v1, served: true, storage: true}]
---
apiVersion: example.com/v1
kind: Mesh
metadata: {name: m, namespace: app}
spec: {}
---
apiVersion: example.com/v1
kind: TracingPolicy
metadata: {name: t, namespace: app}
spec:
  targetRefs:
  - {group: example.com, kind: Mesh, name: m, sectionName: east}
"""
    result = lint_text(text)
    assert pl3(result) == []
    (target,) = targets_by_policy(result)["TracingPolicy t"]
    assert (target["accepted"], target["detail"]) == ("Accepted", "SectionUnchecked")


def test_section_on_gatewayclass_is_section_not_supported() -> None:
    text = """\
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: eg}
spec: {controllerName: example.com/gc}
---
apiVersion: example.com/v1
kind: ClassPolicy
metadata: {name: p, namespace: app}
spec:
  targetRefs:
  - {group: gateway.networking.k8s.io, kind: GatewayClass, name: eg, sectionName: http}
"""
    result = lint_text(text)
    assert [f.rule for f in result.findings if f.rule.startswith("PL3")] == ["PL302"]
    (target,) = targets_by_policy(result)["ClassPolicy p"]
    assert (target["accepted"], target["detail"]) == ("TargetNotFound", "SectionNotSupported")


def test_duplicate_listener_names_reported_once_on_the_gateway() -> None:
    gateway = GATEWAY.replace("{name: https, protocol: HTTPS", "{name: http, protocol: HTTPS")
    result = lint_text(gateway + ctp("one", "http") + ctp("two", "http") + ctp("three"))
    assert pl3(result) == [("PL303", "Gateway infra/gw", "spec.listeners[1].name")]
    (finding,) = only(result, "PL303")
    assert "sectionName http from ClientTrafficPolicy infra/one, ClientTrafficPolicy infra/two is ambiguous" in finding.message
    assert next(r.message for r in finding.related) == "first listener named http"


def test_duplicate_names_are_not_reported_when_no_policy_targets_a_section() -> None:
    gateway = GATEWAY.replace("{name: https, protocol: HTTPS", "{name: http, protocol: HTTPS")
    assert only(lint_text(gateway + ctp("whole")), "PL303") == []


def test_sectionname_on_a_kind_without_the_field_is_not_a_section_finding() -> None:
    # XBackendTrafficPolicy has no sectionName (PL205 reports the field); the section is never looked up.
    text = """\
apiVersion: v1
kind: Service
metadata: {name: web, namespace: app}
spec:
  ports: [{name: http, port: 80}]
---
apiVersion: gateway.networking.x-k8s.io/v1alpha1
kind: XBackendTrafficPolicy
metadata: {name: x, namespace: app}
spec:
  targetRefs:
  - {group: "", kind: Service, name: web, sectionName: nope}
"""
    result = lint_text(text)
    assert pl3(result) == []
    assert [f.path for f in only(result, "PL205")] == ["spec.targetRefs[0].sectionName"]
    (target,) = targets_by_policy(result)["XBackendTrafficPolicy x"]
    assert (target["accepted"], target["detail"]) == ("Accepted", "Resolved")


def test_fixture_s12_file_lints_from_disk() -> None:
    fixture = Path(__file__).resolve().parents[1] / "rules" / "PL301-section-not-found" / "bad.yaml"
    messages = [f.message for f in only(lint_paths([fixture]), "PL301")]
    assert messages[0] == "listener ftp not found on Gateway gw; have: http, https"
