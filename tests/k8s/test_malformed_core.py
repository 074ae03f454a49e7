"""Malformed core objects (PL010) and the PL003/PL009 messages for values of the wrong type.

The API server validates a Gateway API object against its CRD's OpenAPI schema (a Service
against the core/v1 types) and rejects the whole object when a field has the wrong JSON
type. PL010 reports each such field once, at the field; everything that depends on the
malformed part is unknown to the topology and assumed fine, so no other rule reports a
consequence of the same cause (one finding per cause; rules/PL010-malformed-field.md).
"""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from policylint.findings import Issue
from policylint.k8s.fieldtypes import GATEWAY_GROUP, SCHEMAS, check_object, describe_value
from policylint.k8s.index import ProjectIndex
from policylint.project import Project
from policylint.reporters import json as json_reporter
from policylint.rules.malformed import MalformedField
from policylint.vocabulary import Attachment, ReferenceStatus
from tests.lintutil import assert_valid_report, lint_text, select

# A clean scene whose Gateway API objects and Services hold only fields of the PL010 table,
# each well-typed. Hand-checked to produce no finding at all (test_the_scene_is_clean).
SCENE = """\
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: eg}
spec: {controllerName: gateway.envoyproxy.io/gatewayclass-controller}
---
apiVersion: v1
kind: Namespace
metadata: {name: app, labels: {team: a}}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw, namespace: infra}
spec:
  gatewayClassName: eg
  allowedListeners:
    namespaces: {from: All}
  listeners:
  - name: http
    port: 80
    protocol: HTTP
    allowedRoutes:
      namespaces:
        from: Selector
        selector: {matchLabels: {team: a}}
  - name: https
    port: 443
    protocol: HTTPS
    hostname: "*.example.com"
    tls:
      mode: Terminate
      certificateRefs: [{name: cert}]
    allowedRoutes:
      namespaces: {from: All}
      kinds: [{group: gateway.networking.k8s.io, kind: HTTPRoute}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: web, namespace: app}
spec:
  parentRefs:
  - {group: gateway.networking.k8s.io, kind: Gateway, name: gw, namespace: infra, sectionName: http, port: 80}
  - {name: gw, namespace: infra, sectionName: https, port: 443}
  hostnames: [www.example.com]
  rules:
  - name: main
    backendRefs:
    - {name: web, port: 8080}
    - {group: "", kind: Service, name: other, namespace: backends, port: 9090}
    filters:
    - type: RequestMirror
      requestMirror: {backendRef: {name: web, port: 8080}}
---
apiVersion: v1
kind: Service
metadata: {name: web, namespace: app}
spec:
  type: ClusterIP
  ports:
  - {name: http, port: 8080, targetPort: 8080}
---
apiVersion: v1
kind: Service
metadata: {name: other, namespace: backends}
spec:
  ports:
  - {name: grpc, port: 9090}
---
apiVersion: gateway.networking.k8s.io/v1beta1
kind: ReferenceGrant
metadata: {name: allow-app, namespace: backends}
spec:
  from: [{group: gateway.networking.k8s.io, kind: HTTPRoute, namespace: app}]
  to: [{group: "", kind: Service, name: other}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: ListenerSet
metadata: {name: extra, namespace: infra}
spec:
  parentRef: {group: gateway.networking.k8s.io, kind: Gateway, name: gw, namespace: infra}
  listeners:
  - {name: alt, port: 8080, protocol: HTTP, allowedRoutes: {namespaces: {from: All}}}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: alt, namespace: app}
spec:
  parentRefs:
  - {kind: ListenerSet, name: extra, namespace: infra, sectionName: alt}
  rules:
  - backendRefs: [{name: web, port: 8080}]
---
apiVersion: gateway.envoyproxy.io/v1alpha1
kind: ClientTrafficPolicy
metadata: {name: edge, namespace: infra}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: gw, sectionName: https}]
  timeout: {http: {requestReceivedTimeout: 5s}}
---
apiVersion: gateway.envoyproxy.io/v1alpha1
kind: BackendTrafficPolicy
metadata: {name: retries, namespace: app}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: web, sectionName: main}]
  retry: {numRetries: 3}
---
apiVersion: gateway.networking.k8s.io/v1
kind: BackendTLSPolicy
metadata: {name: tls, namespace: app}
spec:
  targetRefs: [{group: "", kind: Service, name: web, sectionName: http}]
  validation: {hostname: web.app.svc, wellKnownCACertificates: System}
"""

DOCS: list[dict[str, Any]] = list(yaml.safe_load_all(SCENE))
# Objects whose every field (outside metadata) is in the PL010 table.
CORE = {"Gateway", "HTTPRoute", "Service", "ReferenceGrant", "ListenerSet"}
# Label selector values: PL506 reports their type (and more); PL010 leaves them to it.
PL506_PATHS = {("spec", "listeners", 0, "allowedRoutes", "namespaces", "selector", "matchLabels", "team")}
WRONG: list[object] = [5, "x", {"a": "b"}, [5], True]


def _json_type(value: object) -> str:
    if isinstance(value, bool):
        return "boolean"
    return {dict: "object", list: "array", str: "string", int: "integer"}[type(value)]


def _paths(value: object, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [prefix] if prefix else []
    if isinstance(value, dict):
        for k, v in value.items():
            out.extend(_paths(v, (*prefix, k)))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            out.extend(_paths(v, (*prefix, i)))
    return out


def _get(value: Any, path: tuple[Any, ...]) -> Any:
    for part in path:
        value = value[part]
    return value


def _replaced(value: Any, path: tuple[Any, ...], new: object) -> Any:
    if not path:
        return new
    head, rest = path[0], path[1:]
    if isinstance(value, dict):
        return {k: (_replaced(v, rest, new) if k == head else v) for k, v in value.items()}
    return [(_replaced(v, rest, new) if i == head else v) for i, v in enumerate(value)]


def _dotted(path: tuple[Any, ...]) -> str:
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else part)
    return out


def _retyped(original: Any, new: Any, path: tuple[Any, ...]) -> list[tuple[Any, ...]]:
    """Where `new` has another JSON type than the well-typed `original` it replaces: the value
    itself, or (a list replacing a list) its items that differ from the original items' type.
    A mapping replacing a mapping adds an unknown key, which is pruned, not a type error."""
    if path[-1] == "targetPort" and isinstance(new, str):
        return []  # IntOrString
    if _json_type(new) != _json_type(original):
        return [path]
    if isinstance(new, list) and original:
        return [(*path, i) for i, item in enumerate(new) if _json_type(item) != _json_type(original[0])]
    return []


def _variants(every: bool = True) -> list[tuple[str, str, str, tuple[Any, ...], list[tuple[Any, ...]]]]:
    """(label, text, object, mutated path, the paths whose JSON type changed) for every field of
    every core object in the scene, replaced by values of each JSON type (`every`), or by one of
    them, taken in turn from field to field so that each type replaces some field of each kind."""
    out = []
    turn = 0
    for index, doc in enumerate(DOCS):
        if doc["kind"] not in CORE:
            continue
        label_obj = f"{doc['kind']} {doc['metadata']['namespace']}/{doc['metadata']['name']}"
        for path in _paths(doc):
            if path[0] in ("apiVersion", "kind", "metadata"):
                continue
            original = _get(doc, path)
            turn += 1
            for new in WRONG if every else [WRONG[turn % len(WRONG)]]:
                changed = _retyped(original, new, path)
                docs = [_replaced(d, path, new) if i == index else d for i, d in enumerate(DOCS)]
                text = yaml.safe_dump_all(docs, sort_keys=False)
                out.append((f"{label_obj} {_dotted(path)}={new!r}", text, label_obj, path, changed))
    return out


def test_the_scene_is_clean() -> None:
    result = lint_text(SCENE, "scene.yaml")
    assert [(f.rule, f.line, f.message) for f in result.findings] == []
    assert len(result.index.objects) == len(DOCS)


@pytest.mark.parametrize(
    "every",
    [
        pytest.param(False, id="one-type-per-field"),
        pytest.param(True, id="every-type-for-every-field", marks=pytest.mark.slow),
    ],
)
def test_every_field_of_a_core_object_with_the_wrong_type_is_one_finding_at_that_field(every: bool) -> None:
    """The general case: each well-typed field of the scene's Gateway, ListenerSet, routes, Services
    and ReferenceGrant, given a value of another JSON type, gives exactly one finding — PL010
    (PL506 for a label selector value; PL703 for a field only the CRD schema types) at that
    field — and no consequence elsewhere; a value of the same type gives no PL010."""
    variants = _variants(every)
    assert len(variants) > (400 if every else 80)
    failures = []
    for label, text, obj, _path, changed in variants:
        findings = lint_text(text, "scene.yaml").findings
        malformed = [(f.rule, str(f.object), f.path) for f in findings if f.rule == "PL010"]
        if not changed:
            if malformed:
                failures.append(f"{label}: same JSON type, but {malformed}")
            continue
        want = [("PL506" if p in PL506_PATHS else "PL010", obj, _dotted(p)) for p in changed]
        got = [(f.rule, str(f.object), f.path) for f in findings]
        # A field the semantics never read (a filter's `type`) has no PL010 entry: the CRD schema's
        # rule reports it instead, once, at the field.
        schema_only = [("PL703", obj, _dotted(p)) for p in changed]
        if got != want and got != schema_only:
            failures.append(f"{label}: {[(f.rule, f.path, f.message[:100]) for f in findings]}")
    assert failures == [], f"{len(failures)} of {len(variants)} variants, e.g.:\n" + "\n".join(failures[:15])


def test_the_scene_has_every_kind_of_the_table() -> None:
    # The sweep exercises every kind PL010 knows; the other route kinds' tables are variants of
    # HTTPRoute's (test_each_route_kind_has_its_own_fields).
    kinds = {(d["apiVersion"].rpartition("/")[0], d["kind"]) for d in DOCS if d["kind"] in CORE}
    routes_sharing = {(GATEWAY_GROUP, k) for k in ("GRPCRoute", "TLSRoute", "TCPRoute", "UDPRoute")}
    assert set(SCHEMAS) - routes_sharing == kinds


# -- the issue's examples, with their messages and what the topology makes of them -----------------


def _lint(text: str, **options: Any) -> Any:
    return lint_text(text, "input.yaml", **options)


def _scene(kind: str, name: str, path: tuple[Any, ...], value: object) -> str:
    docs = [_replaced(d, path, value) if (d["kind"], d["metadata"]["name"]) == (kind, name) else d for d in DOCS]
    return yaml.safe_dump_all(docs, sort_keys=False)


def _messages(result: Any) -> list[tuple[str, str, str]]:
    return [(f.rule, f.path, f.message) for f in result.findings]


def test_parent_refs_as_a_mapping() -> None:
    result = _lint(_scene("HTTPRoute", "web", ("spec", "parentRefs"), {"name": "gw", "namespace": "infra"}))
    assert _messages(result) == [
        (
            "PL010",
            "spec.parentRefs",
            "parentRefs must be a list, not a mapping: the API server rejects the whole HTTPRoute"
            " (the HTTPRoute CRD schema, Gateway API standard channel), so no controller ever sees it",
        )
    ]
    route = result.index.lookup(GATEWAY_GROUP, "HTTPRoute", "app", "web")
    topology = result.project.topology()
    # No parentRef can be named, but the route counts as attached: policies on it are not "on an
    # object that carries no traffic" (PL413), the route not "without parentRefs" (PL410).
    assert topology.parent_attachments(route) == []
    assert topology.parents_malformed(route) and topology.is_attached(route)
    assert topology.carries_traffic(route) == (True, "")


def test_a_malformed_parent_ref_is_attached_and_not_evaluated() -> None:
    result = _lint(_scene("HTTPRoute", "web", ("spec", "parentRefs", 0, "port"), "80"))
    assert [(r, p) for r, p, _ in _messages(result)] == [("PL010", "spec.parentRefs[0].port")]
    assert "(remove the quotes)" in result.findings[0].message
    route = result.index.lookup(GATEWAY_GROUP, "HTTPRoute", "app", "web")
    first, second = result.project.topology().parent_attachments(route)
    assert (first.ref.path, first.status, first.attached, first.parent) == (
        "spec.parentRefs[0]",
        Attachment.MALFORMED,
        True,
        None,
    )
    assert (second.ref.path, second.status) == ("spec.parentRefs[1]", Attachment.ACCEPTED)


def test_rules_as_a_number_leaves_a_rule_section_name_unchecked() -> None:
    result = _lint(_scene("HTTPRoute", "web", ("spec", "rules"), 5))
    assert [(r, p) for r, p, _ in _messages(result)] == [("PL010", "spec.rules")]
    assert "rules must be a list, not the number 5" in result.findings[0].message
    report = json_reporter.report(result)
    [policy] = [p for p in report["policies"] if p["object"]["name"] == "retries"]
    [target] = policy["targets"]
    assert (target["accepted"], target["detail"]) == ("Accepted", "SectionMalformed")
    assert "rules of HTTPRoute web are malformed (PL010)" in target["message"]


def test_listener_port_as_text() -> None:
    result = _lint(_scene("Gateway", "gw", ("spec", "listeners", 0, "port"), "eighty"))
    assert _messages(result) == [
        (
            "PL010",
            "spec.listeners[0].port",
            "port must be an integer, not the string 'eighty': the API server rejects the whole Gateway"
            " (the Gateway CRD schema, Gateway API standard channel), so no controller ever sees it",
        )
    ]
    # The route's parentRef asks for port 80 on that listener: assumed to attach, and says why.
    route = result.index.lookup(GATEWAY_GROUP, "HTTPRoute", "app", "web")
    first = result.project.topology().parent_attachments(route)[0]
    assert first.status == Attachment.ACCEPTED
    assert [lst.name for lst in first.listeners] == ["http"]
    assert first.assumptions == ("listener #1 of Gateway infra/gw is malformed (PL010); assumed to admit the route",)


def test_a_malformed_listener_does_not_hide_a_section_name_that_names_no_listener() -> None:
    # The malformed listener is `http` (its port is wrong, its name is not); the route's parentRef
    # and the ClientTrafficPolicy both ask for `ftp`, which cannot mean it: PL407 and PL301 stay.
    text = _scene("Gateway", "gw", ("spec", "listeners", 0, "port"), "eighty")
    text = text.replace("sectionName: https", "sectionName: ftp")
    found = [(r, str(f.object), p) for (r, p, _), f in zip(_messages(_lint(text)), _lint(text).findings)]
    assert sorted(found) == [
        ("PL010", "Gateway infra/gw", "spec.listeners[0].port"),
        ("PL301", "ClientTrafficPolicy infra/edge", "spec.targetRefs[0].sectionName"),
        ("PL407", "HTTPRoute app/web", "spec.parentRefs[1].sectionName"),
    ]


def test_a_listener_name_of_the_wrong_type_matches_any_section_name() -> None:
    result = _lint(_scene("Gateway", "gw", ("spec", "listeners", 1, "name"), 443))
    assert [(r, p) for r, p, _ in _messages(result)] == [("PL010", "spec.listeners[1].name")]
    assert "(quote it in YAML)" in result.findings[0].message
    gateway = result.index.lookup(GATEWAY_GROUP, "Gateway", "infra", "gw")
    [section] = [s for s in result.index.sections(gateway) if s.position == 1]
    assert (section.name, section.malformed) == (None, True)


def test_service_port_as_text_is_not_a_missing_port() -> None:
    result = _lint(_scene("Service", "web", ("spec", "ports", 0, "port"), "8080"))
    assert [(r, p) for r, p, _ in _messages(result)] == [("PL010", "spec.ports[0].port")]
    assert "port must be an integer, not the string '8080' (remove the quotes)" in result.findings[0].message
    route = result.index.lookup(GATEWAY_GROUP, "HTTPRoute", "app", "web")
    refs = [r for r in result.project.topology().refs_from(route) if r.name == "web"]
    assert refs and all(r.status is ReferenceStatus.MALFORMED and r.target is not None for r in refs)


def test_a_malformed_reference_grant_permits_and_is_not_unused() -> None:
    result = _lint(_scene("ReferenceGrant", "allow-app", ("spec", "from"), {"group": GATEWAY_GROUP}))
    assert [(r, p) for r, p, _ in _messages(result)] == [("PL010", "spec.from")]
    [grant] = result.project.resolution.grants().grants
    assert grant.malformed


def test_the_grant_of_a_malformed_referrer_is_not_reported_unused() -> None:
    # The route's cross-namespace backendRef is malformed: whether it uses the grant is unknown.
    result = _lint(_scene("HTTPRoute", "web", ("spec", "rules", 0, "backendRefs", 1, "port"), "9090"))
    assert [(r, p) for r, p, _ in _messages(result)] == [("PL010", "spec.rules[0].backendRefs[1].port")]


def test_listener_set_parent_ref_as_text() -> None:
    result = _lint(_scene("ListenerSet", "extra", ("spec", "parentRef"), "gw"))
    assert [(r, p) for r, p, _ in _messages(result)] == [("PL010", "spec.parentRef")]
    listener_set = result.index.lookup(GATEWAY_GROUP, "ListenerSet", "infra", "extra")
    attachment = result.project.topology().listener_sets[listener_set]
    assert (attachment.status, attachment.attached) == (Attachment.MALFORMED, True)


def test_malformed_allowed_listeners_admit_the_listener_set_with_an_assumption() -> None:
    text = """\
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: eg}
spec: {controllerName: example.com/gateway-controller}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw, namespace: infra}
spec:
  gatewayClassName: eg
  allowedListeners:
    namespaces: {from: 5}
  listeners:
  - {name: http, port: 80, protocol: HTTP}
---
apiVersion: gateway.networking.k8s.io/v1
kind: ListenerSet
metadata: {name: extra, namespace: other}
spec:
  parentRef: {name: gw, namespace: infra}
  listeners:
  - {name: alt, port: 8080, protocol: HTTP}
"""
    result = _lint(text)
    # Without the malformed field, `from` defaults to None and PL409 reports the set: here the
    # cause is the field, so PL010 alone.
    assert [(r, p) for r, p, _ in _messages(result)] == [("PL010", "spec.allowedListeners.namespaces.from")]
    listener_set = result.index.lookup(GATEWAY_GROUP, "ListenerSet", "other", "extra")
    attachment = result.project.topology().listener_sets[listener_set]
    assert attachment.status == Attachment.ACCEPTED
    assert attachment.assumptions == (
        "Gateway infra/gw has a malformed allowedListeners (PL010); assumed to admit the ListenerSet",
    )
    assert [(r, p) for r, p, _ in _messages(_lint(text.replace("{from: 5}", "{}")))] == [("PL409", "spec.parentRef")]


def test_a_route_spec_of_the_wrong_type_is_one_finding() -> None:
    # Not also PL410 "has no parentRefs": parentRefs cannot be read at all.
    result = _lint(_scene("HTTPRoute", "alt", ("spec",), [1, 2]))
    assert [(r, p) for r, p, _ in _messages(result)] == [("PL010", "spec")]
    assert "spec must be a mapping, not a list" in result.findings[0].message


def test_a_container_of_the_wrong_type_is_reported_alone() -> None:
    listeners = {"name": "http", "port": "x", "protocol": 5}
    result = _lint(_scene("Gateway", "gw", ("spec", "listeners"), listeners))
    assert [(r, p) for r, p, _ in _messages(result)] == [("PL010", "spec.listeners")]


def test_null_is_absent_but_a_null_list_item_is_malformed() -> None:
    assert not check_object(GATEWAY_GROUP, "HTTPRoute", {"spec": {"hostnames": None, "rules": [{"name": None}]}})
    malformed = check_object(GATEWAY_GROUP, "HTTPRoute", {"spec": {"hostnames": ["a", None]}})
    assert [(p.path, p.expected, p.value) for p in malformed.problems] == [(("spec", "hostnames", 1), "string", None)]
    result = _lint(_scene("HTTPRoute", "web", ("spec", "hostnames"), ["www.example.com", None]))
    assert [(r, p) for r, p, _ in _messages(result)] == [("PL010", "spec.hostnames[1]")]
    assert "each hostnames entry must be a string, not null" in result.findings[0].message


def test_an_integral_float_is_an_integer_as_kubectl_sends_it() -> None:
    # YAML to JSON goes through float64 in kubectl: `80.0` reaches the API server as 80.
    text = SCENE.replace("  - name: http\n    port: 80\n", "  - name: http\n    port: 80.0\n")
    assert "port: 80.0" in text
    assert _messages(_lint(text)) == []
    assert [(p.path, p.value) for p in check_object("", "Service", {"spec": {"ports": [{"port": 80.5}]}}).problems] == [
        (("spec", "ports", 0, "port"), 80.5)
    ]


def test_a_list_inside_a_kind_list_is_located_through_items() -> None:
    text = (
        "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: Service\n  metadata: {name: web, namespace: app}\n"
        "  spec:\n    ports: {name: http}\n"
    )
    [finding] = _lint(text).findings
    assert (finding.rule, finding.path, finding.line, str(finding.object)) == ("PL010", "spec.ports", 8, "Service app/web")


def test_findings_do_not_depend_on_document_order() -> None:
    text = _scene("Gateway", "gw", ("spec", "listeners", 0), "http")
    docs = text.split("\n---\n")
    forward = sorted((f.rule, str(f.object), f.path, f.message) for f in _lint(text).findings)
    backward = sorted((f.rule, str(f.object), f.path, f.message) for f in _lint("\n---\n".join(reversed(docs))).findings)
    assert [f[:3] for f in forward] == [("PL010", "Gateway infra/gw", "spec.listeners[0]")]
    assert backward == forward


def test_a_value_the_loader_already_reported_is_not_repeated() -> None:
    # One cause, one finding: an input problem at the same document and path wins.
    result = _lint(_scene("Service", "web", ("spec", "ports", 0, "port"), "8080"), selection=select("PL001"))
    index = result.index
    service = index.lookup("", "Service", "app", "web")
    loaded = Issue(rule_id="PL001", message="integer too large", document=service.doc, path="spec.ports[0].port")
    again = ProjectIndex(index.objects, index.kinds, index.options, input_issues=[loaded])
    assert list(MalformedField().check(Project(again, result.project.resolution))) == []
    fresh = ProjectIndex(index.objects, index.kinds, index.options)
    assert [i.path for i in MalformedField().check(Project(fresh, result.project.resolution))] == ["spec.ports[0].port"]


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        (None, "null"),
        (True, "the boolean true"),
        (5, "the number 5"),
        (2**200, "a number"),
        (1.5, "the number 1.5"),
        (float("inf"), "a number"),
        ("x" * 100, "the string '" + "x" * 40 + "...'"),
        ([1], "a list"),
        ({"a": 1}, "a mapping"),
    ],
)
def test_values_are_named_as_json_names_them_and_bounded(value: object, shown: str) -> None:
    assert describe_value(value) == shown


# -- PL003 and PL009: every non-string / non-mapping form says what it is ----------------------------


@pytest.mark.parametrize(
    ("document", "rule", "message"),
    [
        (
            "apiVersion: v1\nkind: 12\nmetadata: {name: a}\n",
            "PL003",
            "document is not a Kubernetes object: kind must be a string, not the number 12; ignored",
        ),
        (
            "apiVersion: 1\nkind: Service\nmetadata: {name: a}\n",
            "PL003",
            "document is not a Kubernetes object: apiVersion must be a string, not the number 1; ignored",
        ),
        (
            "kind: [Service]\nmetadata: {name: a}\n",
            "PL003",
            "document is not a Kubernetes object: it has no apiVersion; kind must be a string, not a list; ignored",
        ),
        ("apiVersion: v1\nkind: ''\n", "PL003", "document is not a Kubernetes object: kind is empty; ignored"),
        (
            "apiVersion: v1\nkind: true\n",
            "PL003",
            "document is not a Kubernetes object: kind must be a string, not the boolean true; ignored",
        ),
        ("apiVersion: v1\nmetadata: {name: a}\n", "PL003", "document has no kind: not a Kubernetes object; ignored"),
        (
            "apiVersion: v1\nkind: List\nitems: nope\n",
            "PL003",
            "List items must be a list, not the string 'nope': nothing in it is applied; ignored",
        ),
        ("apiVersion: v1\nkind: Service\nmetadata: []\n", "PL009", "metadata must be a mapping, not a list"),
        ("apiVersion: v1\nkind: Service\nmetadata: web\n", "PL009", "metadata must be a mapping, not the string 'web'"),
        ("apiVersion: v1\nkind: Service\nmetadata: {name: [a]}\n", "PL009", "metadata.name: must be a string, not a list"),
        (
            "apiVersion: v1\nkind: Service\nmetadata: {name: a, labels: [x]}\n",
            "PL009",
            "metadata.labels: must be a mapping, not a list",
        ),
        (
            "apiVersion: v1\nkind: Service\nmetadata: {name: a, labels: {x: null}}\n",
            "PL009",
            "metadata.labels.x: must be a string, not null",
        ),
        (
            "apiVersion: v1\nkind: Service\nmetadata: {name: a, labels: {x: 1}}\n",
            "PL009",
            "metadata.labels.x: must be a string, not int 1 (quote it in YAML)",
        ),
    ],
)
def test_identity_and_metadata_of_the_wrong_type_say_what_they_are(document: str, rule: str, message: str) -> None:
    findings = _lint(document).findings
    assert [(f.rule, f.message) for f in findings] == [(rule, message)]


def test_with_pl010_deselected_no_other_rule_reports_the_malformed_part() -> None:
    # The consequences are handled by the topology and the index, not by the rule: with PL010
    # deselected (`--select PL4`) nothing reports the malformed parentRefs, and the report is valid.
    result = _lint(_scene("HTTPRoute", "web", ("spec", "parentRefs"), {"name": "gw"}), selection=select("PL4"))
    assert result.findings == []
    assert_valid_report(json_reporter.report(result))


@pytest.mark.parametrize(
    ("kind", "spec", "paths"),
    [
        # TCP and UDP routes have no hostnames: the API server prunes the unknown field.
        ("TCPRoute", {"hostnames": 5, "rules": 5}, ["spec.rules"]),
        ("UDPRoute", {"parentRefs": [{"name": "gw", "port": "53"}]}, ["spec.parentRefs[0].port"]),
        ("TLSRoute", {"hostnames": [5]}, ["spec.hostnames[0]"]),
        # gRPC routes have request mirrors; TLS routes have no filters at all.
        (
            "GRPCRoute",
            {"rules": [{"filters": [{"requestMirror": {"backendRef": {"name": 5}}}]}]},
            ["spec.rules[0].filters[0].requestMirror.backendRef.name"],
        ),
        ("TLSRoute", {"rules": [{"filters": 5}]}, []),
    ],
)
def test_each_route_kind_has_its_own_fields(kind: str, spec: dict[str, Any], paths: list[str]) -> None:
    malformed = check_object(GATEWAY_GROUP, kind, {"spec": spec})
    assert [_dotted(p.path) for p in malformed.problems] == paths


def test_a_subtree_objects_share_is_checked_once_and_its_problems_stay_each_objects(monkeypatch: pytest.MonkeyPatch) -> None:
    # Identical maps and lists are one object for the run (policylint.input.sharing): the index
    # checks a well-formed one once under its schema node, whichever object it is read in, and
    # walks a malformed one again for each object, whose problems sit at its own paths.
    import policylint.k8s.fieldtypes as fieldtypes

    rules = "[{matches: [{path: {value: /}}], backendRefs: [{name: web, port: 80}, {name: api, port: 80}]}]"
    bad = "[{backendRefs: [{name: web, port: eighty}]}]"

    def route_doc(name: str, ns: str, rules: str) -> str:
        return (
            f"---\napiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\nmetadata: {{name: {name}, namespace: {ns}}}\n"
            f"spec:\n  hostnames: [{name}.example.com]\n  parentRefs: [{{name: gw}}]\n  rules: {rules}\n"
        )

    text = route_doc("a", "one", rules) + route_doc("b", "two", rules) + route_doc("c", "one", bad) + route_doc("d", "two", bad)
    project = lint_text(text, selection=select("PL001")).project
    fresh = ProjectIndex(objects=list(project.index.objects), kinds=project.index.kinds, options=project.index.options)
    a, b, c, d = (
        fresh.lookup(GATEWAY_GROUP, "HTTPRoute", ns, name)
        for ns, name in (("one", "a"), ("two", "b"), ("one", "c"), ("two", "d"))
    )
    assert a is not None and b is not None and c is not None and d is not None
    assert a.data["spec"]["rules"] is b.data["spec"]["rules"]  # shared by the loader
    visits: list[Any] = []
    walk = fieldtypes._walk_kept

    def counted(node: Any, value: Any, *rest: Any) -> None:
        visits.append(value)
        walk(node, value, *rest)

    monkeypatch.setattr(fieldtypes, "_walk_kept", counted)
    assert not fresh.malformed(a)
    first = len(visits)
    assert not fresh.malformed(b)
    # The second route's walk reads what is its own (its root, `spec`, its hostnames) and stops
    # at the lists it shares with the first, checked with the first. A hostname, a field with
    # nothing below it, is checked in its list's loop, with no visit of its own.
    spec = b.data["spec"]
    assert a.data["spec"]["parentRefs"] is spec["parentRefs"]
    seen = [id(v) for v in visits[first:]]
    assert seen == [
        id(b.data),
        id(spec),
        id(spec["parentRefs"]),
        id(spec["hostnames"]),
        id(spec["rules"]),
    ]
    # The first route's walk went through every map and list of the schema's fields (HTTPRoute's
    # `matches` are not among them), and through none of their scalars: a field with nothing below
    # it (a name, a port, a hostname) is checked in its parent's loop.
    first_spec = a.data["spec"]
    first_rule = first_spec["rules"][0]
    assert [id(v) for v in visits[:first]] == [
        id(a.data),
        id(first_spec),
        id(first_spec["parentRefs"]),
        id(first_spec["parentRefs"][0]),
        id(first_spec["hostnames"]),
        id(first_spec["rules"]),
        id(first_rule),
        id(first_rule["backendRefs"]),
        id(first_rule["backendRefs"][0]),
        id(first_rule["backendRefs"][1]),
    ]
    for obj in (c, d):
        problems = fresh.malformed(obj).problems
        assert [(p.path, p.expected, p.value) for p in problems] == [
            (("spec", "rules", 0, "backendRefs", 0, "port"), "integer", "eighty")
        ]


def _random_value(rng: Any, node: Any, depth: int = 0) -> Any:
    """A value for a field of the schema tree: most of its own type, some of another (a scalar
    where a map or list belongs, a string for a number, an integral float, a bool, null)."""
    odd = rng.random() < 0.15
    if node.fields and not odd and depth < 8:
        return {key: _random_value(rng, child, depth + 1) for key, child in node.fields.items() if rng.random() < 0.7} | (
            {"extra": "x"} if rng.random() < 0.1 else {}
        )
    if node.items is not None and not odd and depth < 8:
        return [None if rng.random() < 0.05 else _random_value(rng, node.items, depth + 1) for _ in range(rng.randrange(4))]
    if node.values is not None and not odd and depth < 8:
        return {f"k{i}": _random_value(rng, node.values, depth + 1) for i in range(rng.randrange(3))}
    return rng.choice(["text", 80, 80.0, 80.5, True, None, "80", [], {}, ["a"], {"a": 1}])


def test_the_walk_that_keeps_clean_subtrees_finds_what_the_plain_walk_finds() -> None:
    # `check_object` with the index's table of clean maps and lists (`_walk_kept`, which checks a
    # leaf's type in its parent's loop and skips a subtree already found clean under the same
    # schema node) against the walk that keeps nothing (`_walk`): the same problems, in the same
    # order, on random objects of every kind of the table, one table kept across all of them as
    # the index keeps it, the objects sharing subtrees as the loader makes them share.
    import random

    from policylint.identity import IdentityMap
    from policylint.k8s.fieldtypes import _schema_tree

    rng = random.Random(7)
    clean: Any = IdentityMap()
    shared: list[Any] = []
    compared = problems = 0
    for _ in range(60):
        for group, kind in sorted(SCHEMAS):
            tree = _schema_tree(group, kind)
            assert tree is not None
            data = _random_value(rng, tree)
            if not isinstance(data, dict):
                continue
            spec = data.get("spec")
            if isinstance(spec, dict) and spec and rng.random() < 0.5:
                if shared and rng.random() < 0.5:
                    key = rng.choice(sorted(spec))
                    spec[key] = rng.choice(shared)  # a subtree of an earlier object, as sharing makes
                shared.extend(v for v in spec.values() if isinstance(v, (dict, list)))
            kept = check_object(group, kind, data, clean)
            plain = check_object(group, kind, data)
            assert [(p.path, p.expected, p.value, p.reported_by) for p in kept.problems] == [
                (p.path, p.expected, p.value, p.reported_by) for p in plain.problems
            ]
            compared += 1
            problems += len(plain.problems)
    assert compared > 400 and problems > 1000
