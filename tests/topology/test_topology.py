"""The building blocks of the traffic hierarchy, with hand-checked expectations.

Hostname intersection, label selectors (apimachinery `LabelSelectorAsSelector`), `--external`
patterns, ReferenceGrant matching, route attachment, ListenerSet attachment and backends, each
as docs/semantics.md states it (`#...` below are sections of that page).
"""

from __future__ import annotations

from typing import Any

import pytest

from policylint.k8s.external import ExternalObjects, ExternalPattern, ExternalPatternError
from policylint.k8s.hostnames import effective_hostnames, intersect
from policylint.k8s.selectors import LabelSelector, Requirement, SelectorError, parse_selector
from policylint.project import Project
from policylint.semantics.grants import Reference, ReferenceGrants
from policylint.semantics.topology import GATEWAY_GROUP, ParentAttachment, Topology
from policylint.vocabulary import Attachment, ReferenceStatus
from tests.lintutil import lint_text, select
from tests.manifests import HTTP_HTTPS, first, gateway, gateway_class, listener_set, namespace, route, selector_listener, service
from tests.manifests import reference_grant as grant


def index_of(text: str, external: tuple[str, ...] = ()) -> Project:
    # Only the project's stages matter here; run one cheap rule.
    result = lint_text(text, selection=select("PL001"), external=ExternalObjects.parse(external))
    return result.project


def topology_of(text: str, external: tuple[str, ...] = ()) -> Topology:
    return index_of(text, external).topology()


def obj(project: Project, group: str, kind: str, namespace: str | None, name: str) -> Any:
    found = project.index.lookup(group, kind, namespace, name)
    assert found is not None, f"{kind} {namespace}/{name} not in the input"
    return found


def route_of(index: Project, namespace: str, name: str, kind: str = "HTTPRoute") -> Any:
    return obj(index, GATEWAY_GROUP, kind, namespace, name)


def attachment(
    text: str, route: str = "r", namespace: str = "app", kind: str = "HTTPRoute", external: tuple[str, ...] = ()
) -> ParentAttachment:
    index = index_of(text, external)
    (att,) = index.topology().parent_attachments(route_of(index, namespace, route, kind))
    return att


def names(att: ParentAttachment) -> list[str | None]:
    return [lst.name for lst in att.listeners]


# ---------------------------------------------------------------------------------------
# Hostname intersection (#hostname-intersection)
# ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("listener", "route", "expected"),
    [
        # no listener hostname: the route hostname as is
        (None, "a.example.com", "a.example.com"),
        (None, "*.example.com", "*.example.com"),
        # equal names
        ("a.example.com", "a.example.com", "a.example.com"),
        ("*.example.com", "*.example.com", "*.example.com"),
        # wildcard listener, exact route: one or more extra labels, never the bare domain
        ("*.example.com", "a.example.com", "a.example.com"),
        ("*.example.com", "a.b.example.com", "a.b.example.com"),
        ("*.example.com", "example.com", None),
        ("*.example.com", "aexample.com", None),  # label boundary: `.example.com` is the suffix
        ("*.example.com", "a.example.org", None),
        # wildcard route, exact listener: the listener's hostname is the effective one
        ("foo.example.com", "*.example.com", "foo.example.com"),
        ("a.b.example.com", "*.example.com", "a.b.example.com"),
        ("example.com", "*.example.com", None),
        # exact on both sides, different
        ("a.example.com", "b.example.com", None),
        # both wildcards: the more specific one, if one contains the other
        ("*.example.com", "*.a.example.com", "*.a.example.com"),
        ("*.a.example.com", "*.example.com", "*.a.example.com"),
        ("*.example.com", "*.example.org", None),
        ("*.a.example.com", "*.b.example.com", None),
    ],
)
def test_hostname_intersection(listener: str | None, route: str, expected: str | None) -> None:
    assert intersect(listener, route) == expected


@pytest.mark.parametrize(
    ("listener", "route", "expected"),
    [
        (None, [], []),  # H empty, h empty: everything
        ("a.example.com", [], ["a.example.com"]),  # H empty, h set: {h}
        (None, ["x.example.com", "y.example.org"], ["x.example.com", "y.example.org"]),  # h empty: H
        # both set: hostnames that do not intersect are ignored for this listener
        ("*.example.com", ["a.example.com", "b.example.org", "*.example.com"], ["a.example.com", "*.example.com"]),
        ("foo.example.com", ["*.example.com", "bar.example.com"], ["foo.example.com"]),
        # an empty result excludes the listener
        ("*.example.com", ["example.com", "b.example.org"], None),
    ],
)
def test_effective_hostnames_table(listener: str | None, route: list[str], expected: list[str] | None) -> None:
    assert effective_hostnames(listener, route) == expected


# ---------------------------------------------------------------------------------------
# Label selectors
# ---------------------------------------------------------------------------------------


def test_empty_selectors_match_everything() -> None:
    for raw in (None, {}, {"matchLabels": {}}, {"matchExpressions": []}):
        selector = parse_selector(raw)
        assert selector.matches({}) and selector.matches({"a": "b"})


def test_match_labels_are_anded() -> None:
    selector = parse_selector({"matchLabels": {"team": "a", "env": "prod"}})
    assert selector.matches({"team": "a", "env": "prod", "extra": "x"})
    assert not selector.matches({"team": "a"})
    assert not selector.matches({"team": "a", "env": "dev"})
    assert selector.keys == {"team", "env"}


@pytest.mark.parametrize(
    ("expression", "labels", "expected"),
    [
        ({"key": "env", "operator": "In", "values": ["prod", "staging"]}, {"env": "staging"}, True),
        ({"key": "env", "operator": "In", "values": ["prod", "staging"]}, {"env": "dev"}, False),
        ({"key": "env", "operator": "In", "values": ["prod"]}, {}, False),
        ({"key": "env", "operator": "NotIn", "values": ["prod"]}, {"env": "dev"}, True),
        ({"key": "env", "operator": "NotIn", "values": ["prod"]}, {"env": "prod"}, False),
        # apimachinery: NotIn matches objects that do not have the key at all
        ({"key": "env", "operator": "NotIn", "values": ["prod"]}, {}, True),
        ({"key": "env", "operator": "Exists"}, {"env": ""}, True),
        ({"key": "env", "operator": "Exists"}, {"other": "x"}, False),
        ({"key": "env", "operator": "DoesNotExist"}, {"other": "x"}, True),
        ({"key": "env", "operator": "DoesNotExist"}, {"env": "prod"}, False),
    ],
)
def test_match_expressions(expression: dict[str, Any], labels: dict[str, str], expected: bool) -> None:
    assert parse_selector({"matchExpressions": [expression]}).matches(labels) is expected


def test_match_labels_and_expressions_are_anded() -> None:
    selector = parse_selector(
        {
            "matchLabels": {"team": "a"},
            "matchExpressions": [
                {"key": "env", "operator": "In", "values": ["prod"]},
                {"key": "legacy", "operator": "DoesNotExist"},
            ],
        }
    )
    assert selector.matches({"team": "a", "env": "prod"})
    assert not selector.matches({"team": "b", "env": "prod"})
    assert not selector.matches({"team": "a", "env": "dev"})
    assert not selector.matches({"team": "a", "env": "prod", "legacy": "true"})
    assert [str(r) for r in selector.failing({"team": "b", "env": "prod", "legacy": "1"})] == ["team in (a)", "!legacy"]


def test_selector_text_form() -> None:
    selector = parse_selector(
        {
            "matchLabels": {"team": "a"},
            "matchExpressions": [
                {"key": "env", "operator": "NotIn", "values": ["dev", "test"]},
                {"key": "x", "operator": "Exists"},
            ],
        }
    )
    assert str(selector) == "team in (a), env notin (dev, test), x"
    assert str(LabelSelector()) == "(everything)"
    assert Requirement("k", "DoesNotExist").matches({}) and str(Requirement("k", "DoesNotExist")) == "!k"


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        (["team"], "a label selector must be a mapping"),
        ({"matchLabels": ["team"]}, "matchLabels must be a mapping"),
        ({"matchLabels": {"team": 1}}, "matchLabels['team'] must be a string"),
        ({"matchExpressions": {"key": "team"}}, "matchExpressions must be a list"),
        ({"matchExpressions": ["team"]}, "matchExpressions[0] must be a mapping"),
        ({"matchExpressions": [{"operator": "Exists"}]}, "matchExpressions[0].key must be a non-empty string"),
        (
            {"matchExpressions": [{"key": "team", "operator": "Equals", "values": ["a"]}]},
            "matchExpressions[0].operator must be one of",
        ),
        ({"matchExpressions": [{"key": "team", "operator": "In"}]}, "matchExpressions[0]: operator In needs at least one value"),
        ({"matchExpressions": [{"key": "team", "operator": "NotIn", "values": []}]}, "operator NotIn needs at least one value"),
        ({"matchExpressions": [{"key": "team", "operator": "Exists", "values": ["a"]}]}, "operator Exists takes no values"),
        (
            {"matchExpressions": [{"key": "team", "operator": "In", "values": "a"}]},
            "matchExpressions[0].values must be a list of strings",
        ),
        (
            {"matchExpressions": [{"key": "team", "operator": "In", "values": [1]}]},
            "matchExpressions[0].values must be a list of strings",
        ),
    ],
)
def test_invalid_selectors_raise(raw: Any, message: str) -> None:
    with pytest.raises(SelectorError) as excinfo:
        parse_selector(raw)
    assert message in str(excinfo.value)


# ---------------------------------------------------------------------------------------
# --external patterns (#partial-repositories)
# ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("pattern", "group", "kind", "namespace", "name", "expected"),
    [
        # KIND alone, case-insensitive (scenario S16 writes `gatewayclass/*`)
        ("gatewayclass/*", GATEWAY_GROUP, "GatewayClass", None, "random-gateway-class", True),
        ("GATEWAYCLASS", GATEWAY_GROUP, "GatewayClass", None, "eg", True),
        ("Gateway", GATEWAY_GROUP, "Gateway", "infra", "edge", True),
        ("Gateway", GATEWAY_GROUP, "HTTPRoute", "infra", "edge", False),
        # KIND/NS
        ("Gateway/infra", GATEWAY_GROUP, "Gateway", "infra", "edge", True),
        ("Gateway/infra", GATEWAY_GROUP, "Gateway", "team-a", "edge", False),
        ("ReferenceGrant/team-*", GATEWAY_GROUP, "ReferenceGrant", "team-b", "rg", True),
        # KIND/NS/NAME, globs in every segment
        ("Gateway/infra/edge-*", GATEWAY_GROUP, "Gateway", "infra", "edge-eu", True),
        ("Gateway/infra/edge-*", GATEWAY_GROUP, "Gateway", "infra", "internal", False),
        ("service/*/web", "", "Service", "team-a", "web", True),
        ("service/*/web", "", "Service", "team-a", "api", False),
        # cluster-scoped kinds: the second segment is the name (`KIND/NAME`), or `KIND/*/NAME`
        ("GatewayClass/eg", GATEWAY_GROUP, "GatewayClass", None, "eg", True),
        ("GatewayClass/eg", GATEWAY_GROUP, "GatewayClass", None, "nginx", False),
        ("GatewayClass/e*", GATEWAY_GROUP, "GatewayClass", None, "eg", True),
        ("GatewayClass/*/eg", GATEWAY_GROUP, "GatewayClass", None, "eg", True),
        ("GatewayClass/*/eg", GATEWAY_GROUP, "GatewayClass", None, "other", False),
        # Kind.group pins the API group
        ("Gateway.gateway.networking.k8s.io/infra", GATEWAY_GROUP, "Gateway", "infra", "edge", True),
        ("Gateway.example.com", GATEWAY_GROUP, "Gateway", "infra", "edge", False),
        ("Backend.gateway.envoyproxy.io/*/*", "gateway.envoyproxy.io", "Backend", "app", "b", True),
        ("InferencePool.inference.networking.k8s.io", "inference.networking.k8s.io", "InferencePool", "app", "pool", True),
    ],
)
def test_external_pattern_matching(pattern: str, group: str, kind: str, namespace: str | None, name: str, expected: bool) -> None:
    assert ExternalPattern.parse(pattern).matches(group, kind, namespace, name) is expected


@pytest.mark.parametrize("text", ["", "/", "Gateway//edge", "Gateway/infra/edge/x", "/infra"])
def test_malformed_external_patterns_are_usage_errors(text: str) -> None:
    with pytest.raises(ExternalPatternError, match="expected KIND"):
        ExternalPattern.parse(text)


def test_external_objects_match_first_pattern_and_cover_namespaces() -> None:
    external = ExternalObjects.parse(["GatewayClass/*", "ReferenceGrant/team-b/*"])
    assert bool(external) and not bool(ExternalObjects())
    match = external.match(GATEWAY_GROUP, "GatewayClass", None, "eg")
    assert match is not None and match.text == "GatewayClass/*"
    assert external.match(GATEWAY_GROUP, "Gateway", "infra", "eg") is None
    assert external.covers_namespace(GATEWAY_GROUP, "ReferenceGrant", "team-b")
    assert not external.covers_namespace(GATEWAY_GROUP, "ReferenceGrant", "team-a")


# ---------------------------------------------------------------------------------------
# ReferenceGrant matching (#referencegrant)
# ---------------------------------------------------------------------------------------


ROUTE_FROM_NS2 = "[{group: gateway.networking.k8s.io, kind: HTTPRoute, namespace: ns2}]"
TO_SERVICE = '[{group: "", kind: Service}]'
# HTTPRoute ns2 -> Service default/demo-svc (scenario S15)
S15_REF = Reference(GATEWAY_GROUP, "HTTPRoute", "ns2", "", "Service", "default", "demo-svc")


def grants_of(text: str, external: tuple[str, ...] = ()) -> ReferenceGrants:
    return index_of(text, external).resolution.grants()


def test_same_namespace_never_needs_a_grant() -> None:
    check = grants_of("").check(Reference(GATEWAY_GROUP, "HTTPRoute", "app", "", "Service", "app", "web"))
    assert check.permitted and check.grants == () and not check.assumed


def test_exact_grant_permits_and_is_recorded_as_used() -> None:
    grants = grants_of(grant("default", ROUTE_FROM_NS2, TO_SERVICE))
    check = grants.check(S15_REF)
    assert check.permitted and [g.obj.name for g in check.grants] == ["rg"]
    (rg,) = grants.grants
    assert grants.used == {(rg, "spec.from[0]", "spec.to[0]")}


def test_no_grant_is_not_permitted_and_has_no_near_miss() -> None:
    check = grants_of("").check(S15_REF)
    assert not check.permitted and check.near_misses == ()


def test_grant_in_the_referrers_namespace_is_a_near_miss() -> None:
    check = grants_of(grant("ns2", ROUTE_FROM_NS2, TO_SERVICE)).check(S15_REF)
    assert not check.permitted
    (miss,) = check.near_misses
    assert miss.path == "metadata.namespace"
    assert miss.reason == (
        "ReferenceGrant ns2/rg would permit this, but it is in namespace ns2: a grant must live in the namespace of the"
        " referenced object (default)"
    )


def test_to_name_must_match() -> None:
    text = grant("default", ROUTE_FROM_NS2, '[{group: "", kind: Service, name: other-svc}]')
    check = grants_of(text).check(S15_REF)
    assert not check.permitted
    (miss,) = check.near_misses
    assert (miss.path, miss.reason) == ("spec.to[0]", "ReferenceGrant default/rg permits only Service other-svc, not demo-svc")
    named = grant("default", ROUTE_FROM_NS2, '[{group: "", kind: Service, name: demo-svc}]')
    assert grants_of(named).check(S15_REF).permitted


def test_from_group_must_be_the_referrers_real_group() -> None:
    # An empty from.group means core: it does not match an HTTPRoute (#referencegrant).
    text = grant("default", '[{group: "", kind: HTTPRoute, namespace: ns2}]', TO_SERVICE)
    check = grants_of(text).check(S15_REF)
    assert not check.permitted
    (miss,) = check.near_misses
    assert miss.path == "spec.from[0]"
    assert (
        miss.reason
        == 'ReferenceGrant default/rg allows a referrer with group "" (the referrer\'s group is gateway.networking.k8s.io)'
    )


def test_from_namespace_and_kind_must_match_exactly() -> None:
    other_ns = grant("default", "[{group: gateway.networking.k8s.io, kind: HTTPRoute, namespace: ns3}]", TO_SERVICE)
    check = grants_of(other_ns).check(S15_REF)
    assert not check.permitted
    assert (
        check.near_misses[0].reason == "ReferenceGrant default/rg allows a referrer with namespace ns3 (the referrer is in ns2)"
    )
    grpc = Reference(GATEWAY_GROUP, "GRPCRoute", "ns2", "", "Service", "default", "demo-svc")
    assert not grants_of(grant("default", ROUTE_FROM_NS2, TO_SERVICE)).check(grpc).permitted
    # comparisons are case-sensitive
    lower = grant("default", "[{group: gateway.networking.k8s.io, kind: httproute, namespace: ns2}]", TO_SERVICE)
    assert not grants_of(lower).check(S15_REF).permitted


def test_to_kind_must_match() -> None:
    check = grants_of(grant("default", ROUTE_FROM_NS2, '[{group: "", kind: Secret}]')).check(S15_REF)
    assert not check.permitted
    assert check.near_misses[0].reason == "ReferenceGrant default/rg permits references to core/Secret, not core/Service"


def test_from_and_to_entries_are_ored() -> None:
    text = grant(
        "default",
        "[{group: gateway.networking.k8s.io, kind: GRPCRoute, namespace: ns9},"
        " {group: gateway.networking.k8s.io, kind: HTTPRoute, namespace: ns2}]",
        '[{group: "", kind: Secret}, {group: "", kind: Service}]',
    )
    grants = grants_of(text)
    assert grants.check(S15_REF).permitted
    (rg,) = grants.grants
    assert grants.used == {(rg, "spec.from[1]", "spec.to[1]")}
    assert grants.check(Reference(GATEWAY_GROUP, "GRPCRoute", "ns9", "", "Secret", "default", "s")).permitted


def test_external_grants_in_the_target_namespace_are_assumed() -> None:
    check = grants_of("", external=("ReferenceGrant/default/*",)).check(S15_REF)
    assert check.permitted and check.assumed and check.grants == ()
    assert not grants_of("", external=("ReferenceGrant/ns2",)).check(S15_REF).permitted


# ---------------------------------------------------------------------------------------
# Route attachment (#route-attachment)
# ---------------------------------------------------------------------------------------

CLASS = first(gateway_class())


def test_parent_ref_defaults() -> None:
    att = attachment(CLASS + gateway(HTTP_HTTPS) + route("[{name: gw}]"))
    ref = att.ref
    assert (ref.group, ref.kind, ref.namespace, ref.name, ref.section_name, ref.port) == (
        GATEWAY_GROUP,
        "Gateway",
        "app",
        "gw",
        None,
        None,
    )
    assert ref.path == "spec.parentRefs[0]"
    assert att.status == Attachment.ACCEPTED and att.attached
    assert names(att) == ["http", "https"]
    assert att.parent is not None and att.parent.name == "gw"


def test_parent_ref_namespace_defaults_to_the_routes_not_the_gateways() -> None:
    att = attachment(CLASS + gateway(HTTP_HTTPS, ns="infra") + route("[{name: gw}]"))
    assert (att.status, att.ref.namespace, att.message) == (Attachment.PARENT_NOT_FOUND, "app", "Gateway app/gw not found")


def test_section_name_selects_one_listener() -> None:
    att = attachment(CLASS + gateway(HTTP_HTTPS) + route("[{name: gw, sectionName: https}]"))
    assert (att.status, names(att)) == (Attachment.ACCEPTED, ["https"])


def test_missing_section_name_is_no_matching_parent() -> None:
    att = attachment(CLASS + gateway(HTTP_HTTPS) + route("[{name: gw, sectionName: ftp}]"))
    assert att.status == Attachment.NO_MATCHING_PARENT and not att.attached
    assert att.message == "Gateway app/gw has no listener with name ftp; have: http (HTTP 80), https (HTTPS 443)"


def test_port_selects_listeners_and_must_agree_with_section_name() -> None:
    assert names(attachment(CLASS + gateway(HTTP_HTTPS) + route("[{name: gw, port: 443}]"))) == ["https"]
    both = attachment(CLASS + gateway(HTTP_HTTPS) + route("[{name: gw, sectionName: http, port: 443}]"))
    assert both.status == Attachment.NO_MATCHING_PARENT
    assert both.message.startswith("Gateway app/gw has no listener with name http and port 443; have:")
    assert attachment(CLASS + gateway(HTTP_HTTPS) + route("[{name: gw, port: 8080}]")).status == Attachment.NO_MATCHING_PARENT


def test_allowed_routes_same_is_the_default() -> None:
    att = attachment(
        CLASS + gateway(HTTP_HTTPS, ns="infra") + route("[{name: gw, namespace: infra}]", ns="team-a"), namespace="team-a"
    )
    assert att.status == Attachment.NOT_ALLOWED_BY_LISTENERS and not att.attached
    assert [r.reason for r in att.rejections] == [Attachment.NOT_ALLOWED_BY_LISTENERS, Attachment.NOT_ALLOWED_BY_LISTENERS]
    assert (
        att.rejections[0].message == "allowedRoutes admits routes only from namespace infra (from: Same, the default), not team-a"
    )


def test_allowed_routes_all() -> None:
    listeners = "  - {name: http, protocol: HTTP, port: 80, allowedRoutes: {namespaces: {from: All}}}\n"
    att = attachment(
        CLASS + gateway(listeners, ns="infra") + route("[{name: gw, namespace: infra}]", ns="team-a"), namespace="team-a"
    )
    assert (att.status, names(att), att.assumptions) == (Attachment.ACCEPTED, ["http"], ())


SELECTOR_LISTENER = selector_listener('{matchLabels: {shared-gateway-access: "true"}}')


def selector_setup(namespaces: str, route_ns: str = "team-a", listeners: str = SELECTOR_LISTENER) -> ParentAttachment:
    text = CLASS + gateway(listeners, ns="infra") + namespaces + route("[{name: gw, namespace: infra}]", ns=route_ns)
    return attachment(text, namespace=route_ns)


def test_allowed_routes_selector_with_labelled_namespace() -> None:
    att = selector_setup(namespace("team-a", '{shared-gateway-access: "true"}'))
    assert (att.status, names(att), att.assumptions) == (Attachment.ACCEPTED, ["http"], ())


def test_allowed_routes_selector_with_unlabelled_namespace() -> None:
    att = selector_setup(namespace("team-a", "{team: a}"))
    assert att.status == Attachment.NOT_ALLOWED_BY_LISTENERS
    assert (
        att.rejections[0].message
        == "namespace team-a does not match the allowedRoutes selector (shared-gateway-access in (true))"
    )


def test_allowed_routes_selector_with_namespace_absent_from_the_input_is_undecided() -> None:
    att = selector_setup("")
    # Neither attached nor refused (docs/semantics.md#namespaces-not-in-the-input).
    assert (att.status, names(att), att.attached, att.undecided) == (Attachment.NAMESPACE_LABELS_UNKNOWN, [], False, True)
    assert [(u.namespace, u.listener, u.path) for u in att.unknown] == [
        ("team-a", "http", "spec.listeners[0].allowedRoutes.namespaces")
    ]
    assert att.message == (
        "Gateway infra/gw may or may not admit it: namespace team-a is not in the input, so whether it matches"
        " shared-gateway-access in (true) cannot be decided (its labels are unknown)"
    )


def test_allowed_routes_selector_on_the_implicit_name_label() -> None:
    # kubernetes.io/metadata.name is set on every Namespace by the API server: known without the object.
    listeners = selector_listener("{matchLabels: {kubernetes.io/metadata.name: team-a}}")
    admitted = selector_setup("", listeners=listeners)
    assert (admitted.status, admitted.assumptions) == (Attachment.ACCEPTED, ())
    rejected = selector_setup("", route_ns="team-b", listeners=listeners)
    assert rejected.status == Attachment.NOT_ALLOWED_BY_LISTENERS and rejected.assumptions == ()
    expr = selector_listener("{matchExpressions: [{key: kubernetes.io/metadata.name, operator: In, values: [team-a, team-b]}]}")
    assert selector_setup("", route_ns="team-b", listeners=expr).status == Attachment.ACCEPTED


def test_allowed_routes_selector_without_a_selector_admits_nothing() -> None:
    listeners = "  - {name: http, protocol: HTTP, port: 80, allowedRoutes: {namespaces: {from: Selector}}}\n"
    att = selector_setup(namespace("team-a", '{shared-gateway-access: "true"}'), listeners=listeners)
    assert att.status == Attachment.NOT_ALLOWED_BY_LISTENERS
    assert att.rejections[0].message == "allowedRoutes from: Selector has no valid selector"


def test_allowed_routes_selector_is_ignored_for_other_from_values() -> None:
    listeners = SELECTOR_LISTENER.replace("from: Selector", "from: All")
    assert selector_setup(namespace("team-a", "{}"), listeners=listeners).status == Attachment.ACCEPTED


@pytest.mark.parametrize(
    ("kinds", "route_kind", "admitted"),
    [
        ("[{kind: HTTPRoute}]", "HTTPRoute", True),  # group defaults to gateway.networking.k8s.io
        ("[{group: gateway.networking.k8s.io, kind: HTTPRoute}]", "HTTPRoute", True),
        ("[{kind: GRPCRoute}]", "HTTPRoute", False),
        ("[{group: example.com, kind: HTTPRoute}]", "HTTPRoute", False),
        ("[{kind: GRPCRoute}, {kind: HTTPRoute}]", "GRPCRoute", True),
    ],
)
def test_allowed_routes_kinds(kinds: str, route_kind: str, admitted: bool) -> None:
    listeners = f"  - {{name: http, protocol: HTTP, port: 80, allowedRoutes: {{kinds: {kinds}}}}}\n"
    att = attachment(CLASS + gateway(listeners) + route("[{name: gw}]", kind=route_kind), kind=route_kind)
    assert (att.status == Attachment.ACCEPTED) is admitted
    if not admitted:
        assert att.status == Attachment.NOT_ALLOWED_BY_LISTENERS
        assert att.rejections[0].message.startswith("allowedRoutes.kinds admits ")


@pytest.mark.parametrize(
    ("listener", "route_kind", "admitted"),
    [
        ("{name: l, protocol: HTTP, port: 80}", "HTTPRoute", True),
        ("{name: l, protocol: HTTP, port: 80}", "GRPCRoute", True),
        ("{name: l, protocol: HTTP, port: 80}", "TCPRoute", False),
        ("{name: l, protocol: HTTPS, port: 443, tls: {certificateRefs: [{name: c}]}}", "GRPCRoute", True),
        ("{name: l, protocol: HTTPS, port: 443, tls: {certificateRefs: [{name: c}]}}", "TLSRoute", False),
        ("{name: l, protocol: TCP, port: 5432}", "TCPRoute", True),
        ("{name: l, protocol: TCP, port: 5432}", "HTTPRoute", False),
        ("{name: l, protocol: UDP, port: 53}", "UDPRoute", True),
        ("{name: l, protocol: UDP, port: 53}", "TCPRoute", False),
        # TLS passthrough carries TLSRoute only; Terminate carries TLSRoute and TCPRoute
        ("{name: l, protocol: TLS, port: 443, tls: {mode: Passthrough}}", "TLSRoute", True),
        ("{name: l, protocol: TLS, port: 443, tls: {mode: Passthrough}}", "TCPRoute", False),
        ("{name: l, protocol: TLS, port: 443, tls: {mode: Passthrough}}", "HTTPRoute", False),
        ("{name: l, protocol: TLS, port: 443, tls: {mode: Terminate, certificateRefs: [{name: c}]}}", "TLSRoute", True),
        ("{name: l, protocol: TLS, port: 443, tls: {mode: Terminate, certificateRefs: [{name: c}]}}", "TCPRoute", True),
        # an implementation-specific protocol: no default mapping, so nothing is rejected
        ("{name: l, protocol: example.com/mqtt, port: 1883}", "TCPRoute", True),
    ],
)
def test_protocol_default_route_kinds(listener: str, route_kind: str, admitted: bool) -> None:
    hostnames = "[tls.example.com]" if route_kind == "TLSRoute" else None
    text = CLASS + gateway(f"  - {listener}\n") + route("[{name: gw}]", kind=route_kind, hostnames=hostnames)
    att = attachment(text, kind=route_kind)
    assert att.status == (Attachment.ACCEPTED if admitted else Attachment.NOT_ALLOWED_BY_LISTENERS)


def test_tls_passthrough_rejection_names_the_kinds_it_carries() -> None:
    listeners = "  - {name: tls, protocol: TLS, port: 443, tls: {mode: Passthrough}}\n"
    att = attachment(CLASS + gateway(listeners) + route("[{name: gw}]", kind="TCPRoute"), kind="TCPRoute")
    assert att.rejections[0].message == "a TLS listener carries TLSRoute, not TCPRoute"


def test_wildcard_listener_hostname_admits_a_deeper_route_hostname() -> None:
    listeners = '  - {name: http, protocol: HTTP, port: 80, hostname: "*.example.com"}\n'
    att = attachment(CLASS + gateway(listeners) + route("[{name: gw}]", hostnames="[a.b.example.com]"))
    assert (att.status, names(att)) == (Attachment.ACCEPTED, ["http"])
    bare = attachment(CLASS + gateway(listeners) + route("[{name: gw}]", hostnames="[example.com]"))
    assert bare.status == Attachment.NO_MATCHING_LISTENER_HOSTNAME
    assert bare.rejections[0].message == "listener hostname *.example.com does not intersect the route's hostnames example.com"


def test_wildcard_route_hostname_admits_an_exact_listener() -> None:
    listeners = "  - {name: http, protocol: HTTP, port: 80, hostname: foo.example.com}\n"
    att = attachment(CLASS + gateway(listeners) + route("[{name: gw}]", hostnames='["*.example.com"]'))
    assert att.status == Attachment.ACCEPTED


def test_hostnames_are_ignored_for_tcp_routes() -> None:
    listeners = "  - {name: tcp, protocol: TCP, port: 5432}\n"
    att = attachment(
        CLASS + gateway(listeners) + route("[{name: gw}]", kind="TCPRoute", hostnames="[db.example.com]"), kind="TCPRoute"
    )
    assert att.status == Attachment.ACCEPTED


def test_mixed_rejections_report_not_allowed_by_listeners() -> None:
    # NoMatchingListenerHostname only when every listener fails on hostnames alone
    # (#listener-admission, step 4).
    listeners = "  - {name: a, protocol: HTTP, port: 80, hostname: a.example.com}\n  - {name: b, protocol: TCP, port: 81}\n"
    att = attachment(CLASS + gateway(listeners) + route("[{name: gw}]", hostnames="[b.example.com]"))
    assert att.status == Attachment.NOT_ALLOWED_BY_LISTENERS
    assert [r.reason for r in att.rejections] == [Attachment.NO_MATCHING_LISTENER_HOSTNAME, Attachment.NOT_ALLOWED_BY_LISTENERS]
    assert att.message.startswith("no listener of Gateway app/gw admits it: a: listener hostname a.example.com")


def test_one_admitting_listener_is_enough() -> None:
    listeners = "  - {name: a, protocol: HTTP, port: 80, hostname: a.example.com}\n  - {name: b, protocol: HTTP, port: 81}\n"
    att = attachment(CLASS + gateway(listeners) + route("[{name: gw}]", hostnames="[b.example.com]"))
    assert (att.status, names(att), [r.listener.name for r in att.rejections]) == (Attachment.ACCEPTED, ["b"], ["a"])


def test_external_parent_is_assumed_to_admit() -> None:
    att = attachment(route("[{name: shared, namespace: infra}]"), external=("Gateway/infra/*",))
    assert (att.status, att.attached, att.parent) == (Attachment.EXTERNAL, True, None)
    missing = attachment(route("[{name: shared, namespace: infra}]"), external=("Gateway/other/*",))
    assert (missing.status, missing.attached) == (Attachment.PARENT_NOT_FOUND, False)


def test_service_parent_is_mesh_and_needs_no_grant() -> None:
    att = attachment(service(ns="shop") + route('[{group: "", kind: Service, name: web, namespace: shop}]'))
    assert (att.status, att.attached) == (Attachment.MESH, True)
    assert att.ref.group == "" and att.ref.namespace == "shop"
    absent = attachment(route('[{group: "", kind: Service, name: web}]'))
    assert (absent.status, absent.message) == (Attachment.PARENT_NOT_FOUND, "Service app/web not found")


def test_implementation_specific_parent_kind_is_never_not_found() -> None:
    att = attachment(route("[{group: networking.example.com, kind: Mesh, name: m}]"))
    assert (att.status, att.attached) == (Attachment.UNKNOWN_PARENT_KIND, True)


def test_routes_on_and_is_attached() -> None:
    text = (
        CLASS
        + gateway(HTTP_HTTPS)
        + route("[{name: gw, sectionName: http}]")
        + route("[{name: gw, sectionName: nope}]", name="lost")
    )
    index = index_of(text)
    topo = index.topology()
    gw = obj(index, GATEWAY_GROUP, "Gateway", "app", "gw")
    http, https = topo.listeners(gw)
    assert [r.name for r, _ in topo.routes_on(http)] == ["r"]
    assert topo.routes_on(https) == []
    assert [r.name for r, _ in topo.routes_of(gw)] == ["r"]
    assert topo.is_attached(route_of(index, "app", "r")) and not topo.is_attached(route_of(index, "app", "lost"))
    carries, why = topo.carries_traffic(route_of(index, "app", "lost"))
    assert not carries and why.startswith(
        "HTTPRoute app/lost is attached to no listener (Gateway app/gw has no listener with name nope"
    )


def test_route_without_parent_refs_carries_no_traffic() -> None:
    index = index_of(route("[]"))
    carries, why = index.topology().carries_traffic(route_of(index, "app", "r"))
    assert (carries, why) == (False, "HTTPRoute app/r has no parentRefs, so it is attached to nothing")


# ---------------------------------------------------------------------------------------
# ListenerSets (#listenersets)
# ---------------------------------------------------------------------------------------


def allowed_listeners(block: str) -> str:
    return f"  allowedListeners: {block}\n"


def ls_attachment(text: str, ns: str = "app", name: str = "ls", external: tuple[str, ...] = ()) -> Any:
    index = index_of(text, external)
    return index.topology().listener_sets[obj(index, GATEWAY_GROUP, "ListenerSet", ns, name)]


def test_allowed_listeners_default_is_none() -> None:
    att = ls_attachment(CLASS + gateway(HTTP_HTTPS) + listener_set())
    assert (att.status.label, att.attached) == ("NotAllowed", False)
    assert att.message == "Gateway app/gw does not allow ListenerSets (allowedListeners.namespaces.from is None by default)"
    explicit = ls_attachment(CLASS + gateway(HTTP_HTTPS, spec=allowed_listeners("{namespaces: {from: None}}")) + listener_set())
    assert explicit.status.label == "NotAllowed"


def test_allowed_listeners_same() -> None:
    extra = allowed_listeners("{namespaces: {from: Same}}")
    assert ls_attachment(CLASS + gateway(HTTP_HTTPS, spec=extra) + listener_set()).status == Attachment.ACCEPTED
    other = ls_attachment(
        CLASS + gateway(HTTP_HTTPS, spec=extra) + listener_set(ns="team-a", parent="{name: gw, namespace: app}"), ns="team-a"
    )
    assert other.status.label == "NotAllowed"
    assert other.message == "Gateway app/gw allows ListenerSets only from its own namespace (allowedListeners from: Same)"


def test_allowed_listeners_all() -> None:
    extra = allowed_listeners("{namespaces: {from: All}}")
    text = CLASS + gateway(HTTP_HTTPS, spec=extra) + listener_set(ns="team-a", parent="{name: gw, namespace: app}")
    att = ls_attachment(text, ns="team-a")
    assert att.status == Attachment.ACCEPTED and att.gateway is not None and att.gateway.name == "gw"


def test_allowed_listeners_selector() -> None:
    extra = allowed_listeners("{namespaces: {from: Selector, selector: {matchLabels: {team: a}}}}")
    ls = listener_set(ns="team-a", parent="{name: gw, namespace: app}")
    base = CLASS + gateway(HTTP_HTTPS, spec=extra) + ls
    labelled = ls_attachment(base + namespace("team-a", "{team: a}"), ns="team-a")
    assert (labelled.status, labelled.assumptions) == (Attachment.ACCEPTED, ())
    unlabelled = ls_attachment(base + namespace("team-a", "{team: b}"), ns="team-a")
    assert unlabelled.status.label == "NotAllowed"
    assert unlabelled.message == "namespace team-a does not match the allowedListeners selector of Gateway app/gw (team in (a))"
    absent = ls_attachment(base, ns="team-a")
    assert (absent.status, absent.attached) == (Attachment.NAMESPACE_LABELS_UNKNOWN, False)
    assert absent.unknown is not None and (absent.unknown.namespace, absent.unknown.listener) == ("team-a", None)
    no_selector = ls_attachment(
        CLASS + gateway(HTTP_HTTPS, spec=allowed_listeners("{namespaces: {from: Selector}}")) + ls, ns="team-a"
    )
    assert no_selector.status.label == "NotAllowed"


def test_listener_set_parent_defaults_and_not_found() -> None:
    missing = ls_attachment(listener_set(parent="{name: nope}"))
    assert (missing.status, missing.message) == (Attachment.PARENT_NOT_FOUND, "Gateway app/nope not found")
    external = ls_attachment(listener_set(parent="{name: shared, namespace: infra}"), external=("Gateway/infra/shared",))
    assert (external.status, external.attached) == (Attachment.EXTERNAL, True)


def test_route_on_a_listener_set_uses_only_the_sets_listeners() -> None:
    extra = allowed_listeners("{namespaces: {from: Same}}")
    ls = listener_set(listeners="[{name: extra, protocol: HTTP, port: 8080}, {name: http, protocol: HTTP, port: 8081}]")
    base = CLASS + gateway(HTTP_HTTPS, spec=extra) + ls
    index = index_of(base + route("[{kind: ListenerSet, name: ls}]"))
    topo = index.topology()
    gw = obj(index, GATEWAY_GROUP, "Gateway", "app", "gw")
    assert [o.name for o in topo.listener_sets_of(gw)] == ["ls"]
    # The Gateway's own listeners never include its ListenerSets' (#listener-admission, step 1).
    assert [lst.name for lst in topo.listeners(gw)] == ["http", "https"]
    (att,) = topo.parent_attachments(route_of(index, "app", "r"))
    assert att.status == Attachment.ACCEPTED and [(lst.owner.kind, lst.name, lst.port) for lst in att.listeners] == [
        ("ListenerSet", "extra", 8080),
        ("ListenerSet", "http", 8081),
    ]
    # sectionName on a ListenerSet parent names the set's listener; a same-named Gateway listener is not it.
    named = attachment(base + route("[{kind: ListenerSet, name: ls, sectionName: http}]"))
    assert [(lst.owner.kind, lst.port) for lst in named.listeners] == [("ListenerSet", 8081)]
    on_gw = attachment(base + route("[{name: gw, sectionName: http}]"))
    assert [(lst.owner.kind, lst.port) for lst in on_gw.listeners] == [("Gateway", 80)]
    # A Gateway parentRef cannot select a listener that only its ListenerSet declares.
    assert attachment(base + route("[{name: gw, sectionName: extra}]")).status == Attachment.NO_MATCHING_PARENT


def test_listener_set_listeners_admit_same_namespace_relative_to_the_set() -> None:
    # `Same` means the namespace of the object owning the listener (conformance ListenerSetAllowedRoutesCrossNamespace).
    extra = allowed_listeners("{namespaces: {from: All}}")
    base = CLASS + gateway(HTTP_HTTPS, ns="infra", spec=extra) + listener_set(ns="team-a", parent="{name: gw, namespace: infra}")
    same = attachment(base + route("[{kind: ListenerSet, name: ls}]", ns="team-a"), namespace="team-a")
    assert same.status == Attachment.ACCEPTED
    other = attachment(base + route("[{kind: ListenerSet, name: ls, namespace: team-a}]", ns="infra"), namespace="infra")
    assert other.status == Attachment.NOT_ALLOWED_BY_LISTENERS
    assert (
        other.rejections[0].message
        == "allowedRoutes admits routes only from namespace team-a (from: Same, the default), not infra"
    )


def test_route_on_a_listener_set_that_is_not_attached() -> None:
    att = attachment(CLASS + gateway(HTTP_HTTPS) + listener_set() + route("[{kind: ListenerSet, name: ls}]"))
    assert att.status == Attachment.LISTENER_SET_NOT_ATTACHED and not att.attached
    assert att.message.startswith("ListenerSet app/ls is not attached: Gateway app/gw does not allow ListenerSets")


def test_listener_set_not_attached_carries_no_traffic() -> None:
    index = index_of(CLASS + gateway(HTTP_HTTPS) + listener_set())
    carries, why = index.topology().carries_traffic(obj(index, GATEWAY_GROUP, "ListenerSet", "app", "ls"))
    assert not carries and why.startswith("ListenerSet app/ls is not attached to its Gateway (Gateway app/gw does not allow")


# ---------------------------------------------------------------------------------------
# Gateway -> GatewayClass (#gateway-and-gatewayclass)
# ---------------------------------------------------------------------------------------


def test_gateway_class_reference() -> None:
    index = index_of(CLASS + gateway(HTTP_HTTPS) + gateway(HTTP_HTTPS, name="lost", class_name="nope"))
    topo = index.topology()
    gw = obj(index, GATEWAY_GROUP, "Gateway", "app", "gw")
    lost = obj(index, GATEWAY_GROUP, "Gateway", "app", "lost")
    assert topo.class_refs[gw].status == ReferenceStatus.RESOLVED
    assert (topo.class_refs[lost].status, topo.class_refs[lost].name) == (ReferenceStatus.NOT_FOUND, "nope")
    carries, why = topo.carries_traffic(lost)
    assert not carries and why == "Gateway app/lost names GatewayClass nope, which is not in the input, so it is never reconciled"
    external = index_of(gateway(HTTP_HTTPS), external=("gatewayclass/*",))
    gw_ext = obj(external, GATEWAY_GROUP, "Gateway", "app", "gw")
    assert external.topology().class_refs[gw_ext].status is ReferenceStatus.EXTERNAL
    assert external.topology().carries_traffic(gw_ext) == (True, "")


# ---------------------------------------------------------------------------------------
# Backends (#backends) and certificates (#certificates)
# ---------------------------------------------------------------------------------------

SERVICE_3 = service(
    "service-3", ports="  - {name: port-1, port: 80, targetPort: 8080}\n  - {name: port-2, port: 443, targetPort: 8443}\n"
)


def backend_refs(text: str, route_name: str = "r", ns: str = "app") -> list[Any]:
    index = index_of(text)
    return index.topology().refs_from(route_of(index, ns, route_name))


def test_service_backend_port_is_matched_by_number_to_the_named_port() -> None:
    (ref,) = backend_refs(SERVICE_3 + route("[{name: gw}]", rules="[{backendRefs: [{name: service-3, port: 80}]}]"))
    assert (ref.group, ref.kind, ref.namespace, ref.name, ref.port, ref.status) == (
        "",
        "Service",
        "app",
        "service-3",
        80,
        ReferenceStatus.RESOLVED,
    )
    assert (ref.purpose, ref.path, ref.rule) == ("backend", "spec.rules[0].backendRefs[0]", 0)
    assert ref.port_section is not None and (ref.port_section.name, ref.port_section.path) == ("port-1", "spec.ports[0]")
    (https,) = backend_refs(SERVICE_3 + route("[{name: gw}]", rules="[{backendRefs: [{name: service-3, port: 443}]}]"))
    assert https.port_section is not None and https.port_section.name == "port-2"


def test_service_backend_port_is_the_service_port_not_the_target_port() -> None:
    (ref,) = backend_refs(SERVICE_3 + route("[{name: gw}]", rules="[{backendRefs: [{name: service-3, port: 8080}]}]"))
    assert ref.status == ReferenceStatus.RESOLVED and ref.port_section is None and ref.has_port


def test_backend_without_port_is_recorded() -> None:
    (ref,) = backend_refs(SERVICE_3 + route("[{name: gw}]", rules="[{backendRefs: [{name: service-3}]}]"))
    assert (ref.port, ref.has_port, ref.port_section) == (None, False, None)


def test_missing_service_backend_is_not_found() -> None:
    (ref,) = backend_refs(route("[{name: gw}]", rules="[{backendRefs: [{name: nope, port: 80}]}]"))
    assert ref.status == ReferenceStatus.NOT_FOUND and ref.target is None


def test_non_service_backends_resolve_when_present_and_are_opaque_otherwise() -> None:
    pool = """\
---
apiVersion: inference.networking.k8s.io/v1
kind: InferencePool
metadata: {name: pool, namespace: app}
spec: {targetPorts: [{number: 8000}], selector: {matchLabels: {app: vllm}}, endpointPickerRef: {name: epp, port: {number: 9002}}}
"""
    rules = "[{backendRefs: [{group: inference.networking.k8s.io, kind: InferencePool, name: pool}]}]"
    (present,) = backend_refs(pool + route("[{name: gw}]", rules=rules))
    assert (present.status, present.target is not None, present.port_section) == (ReferenceStatus.RESOLVED, True, None)
    (absent,) = backend_refs(route("[{name: gw}]", rules=rules))
    assert (absent.group, absent.kind, absent.status) == ("inference.networking.k8s.io", "InferencePool", ReferenceStatus.OPAQUE)


def test_mirror_and_backend_filters_are_references_too() -> None:
    rules = (
        "[{filters: [{type: RequestMirror, requestMirror: {backendRef: {name: service-3, port: 443}}}],"
        " backendRefs: [{name: service-3, port: 80, filters: [{type: RequestMirror, requestMirror: {backendRef: {name: gone, port: 80}}}]}]}]"
    )
    refs = backend_refs(SERVICE_3 + route("[{name: gw}]", rules=rules))
    assert [(r.purpose, r.path, r.status) for r in refs] == [
        ("backend", "spec.rules[0].backendRefs[0]", ReferenceStatus.RESOLVED),
        ("mirror", "spec.rules[0].backendRefs[0].filters[0].requestMirror.backendRef", ReferenceStatus.NOT_FOUND),
        ("mirror", "spec.rules[0].filters[0].requestMirror.backendRef", ReferenceStatus.RESOLVED),
    ]


def test_cross_namespace_backend_needs_a_grant_whether_or_not_it_exists() -> None:
    rules = "[{backendRefs: [{name: service-3, namespace: app, port: 80}, {name: ghost, namespace: app, port: 80}]}]"
    refs = backend_refs(SERVICE_3 + route("[{name: gw}]", ns="other", rules=rules), ns="other")
    # Status never reveals whether an un-granted target exists (#referencegrant).
    assert [(r.name, r.status, r.target) for r in refs] == [
        ("service-3", ReferenceStatus.REF_NOT_PERMITTED, None),
        ("ghost", ReferenceStatus.REF_NOT_PERMITTED, None),
    ]
    granted = SERVICE_3 + grant("app", "[{group: gateway.networking.k8s.io, kind: HTTPRoute, namespace: other}]", TO_SERVICE)
    refs = backend_refs(granted + route("[{name: gw}]", ns="other", rules=rules), ns="other")
    assert [(r.name, r.status) for r in refs] == [("service-3", ReferenceStatus.RESOLVED), ("ghost", ReferenceStatus.NOT_FOUND)]
    assert refs[0].grant is not None and refs[0].grant.permitted and refs[0].port_section is not None


def test_refs_to_lists_the_referrers() -> None:
    text = (
        SERVICE_3
        + route("[{name: gw}]", rules="[{backendRefs: [{name: service-3, port: 80}]}]")
        + route("[{name: gw}]", name="r2", rules="[{backendRefs: [{name: service-3, port: 443}]}]")
    )
    index = index_of(text)
    refs = index.topology().refs_to(obj(index, "", "Service", "app", "service-3"))
    assert sorted((r.owner.name, r.port) for r in refs) == [("r", 80), ("r2", 443)]


def test_certificate_refs_check_grants_but_not_existence() -> None:
    listeners = (
        "  - {name: https, protocol: HTTPS, port: 443, tls: {certificateRefs: [{name: local}, {name: wild, namespace: certs}]}}\n"
    )
    index = index_of(CLASS + gateway(listeners, ns="infra"))
    refs = index.topology().refs_from(obj(index, GATEWAY_GROUP, "Gateway", "infra", "gw"))
    assert [(r.purpose, r.kind, r.namespace, r.name, r.status) for r in refs] == [
        ("certificate", "Secret", "infra", "local", ReferenceStatus.UNCHECKED),
        ("certificate", "Secret", "certs", "wild", ReferenceStatus.REF_NOT_PERMITTED),
    ]
    granted = grant(
        "certs", "[{group: gateway.networking.k8s.io, kind: Gateway, namespace: infra}]", '[{group: "", kind: Secret}]'
    )
    index = index_of(CLASS + gateway(listeners, ns="infra") + granted)
    refs = index.topology().refs_from(obj(index, GATEWAY_GROUP, "Gateway", "infra", "gw"))
    assert [r.status for r in refs] == [ReferenceStatus.UNCHECKED, ReferenceStatus.UNCHECKED]


def test_listener_set_certificates_need_a_grant_from_the_listener_set() -> None:
    # GEP-1713: a grant to the Gateway does not extend to its ListenerSets' listeners.
    gw_grant = grant(
        "certs", "[{group: gateway.networking.k8s.io, kind: Gateway, namespace: app}]", '[{group: "", kind: Secret}]'
    )
    ls = listener_set(listeners="[{name: s, protocol: HTTPS, port: 8443, tls: {certificateRefs: [{name: c, namespace: certs}]}}]")
    text = CLASS + gateway(HTTP_HTTPS, spec=allowed_listeners("{namespaces: {from: Same}}")) + ls + gw_grant
    index = index_of(text)
    (ref,) = index.topology().refs_from(obj(index, GATEWAY_GROUP, "ListenerSet", "app", "ls"))
    assert ref.status == ReferenceStatus.REF_NOT_PERMITTED
    ls_grant = gw_grant.replace("kind: Gateway, namespace: app", "kind: ListenerSet, namespace: app")
    index = index_of(text.replace(gw_grant, ls_grant))
    (ref,) = index.topology().refs_from(obj(index, GATEWAY_GROUP, "ListenerSet", "app", "ls"))
    assert ref.status == ReferenceStatus.UNCHECKED


def test_name_label_mismatch_is_known_even_when_other_labels_are_not() -> None:
    # The Namespace object is absent, so `tier` is unknown; but kubernetes.io/metadata.name is always
    # the namespace's name, and team-b != team-a: no namespace labels can make this selector match.
    listeners = selector_listener("{matchLabels: {kubernetes.io/metadata.name: team-a, tier: web}}")
    rejected = selector_setup("", route_ns="team-b", listeners=listeners)
    assert (rejected.status, rejected.assumptions) == (Attachment.NOT_ALLOWED_BY_LISTENERS, ())
    undecided = selector_setup("", route_ns="team-a", listeners=listeners)
    assert undecided.status == Attachment.NAMESPACE_LABELS_UNKNOWN
    assert [str(u.selector) for u in undecided.unknown] == ["kubernetes.io/metadata.name in (team-a), tier in (web)"]
