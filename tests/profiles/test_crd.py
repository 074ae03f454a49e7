"""Deriving policy profiles from CRDs (policylint.profiles.crd).

The expected facts below were checked by hand against the vendored upstream
CRDs (tests/data/crds/) and the facts docs/semantics.md states for them: #label-conventions,
#backendtlspolicy, #xbackendtrafficpolicy, #envoy-gateway (allowed kinds), #kuadrant (CEL
on the targetRef) and #nginx-gateway-fabric (the table).
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from policylint.findings import Severity
from policylint.input.load import DocumentRef
from policylint.k8s.objects import K8sObject, ObjectKey
from policylint.k8s.schemas import newest_release_dirs
from policylint.profiles.crd import CrdFacts, crd_facts, profile_from_facts, profiles_from_crds
from policylint.profiles.registry import DIRECT, GEP713, INHERITED, ORIGIN_BUILTIN, ORIGIN_CRD, POLICY_ATTACHMENT, TargetKind
from tests.lintutil import lint_paths, lint_text
from tests.manifests import crd as crd_document
from tests.manifests import first, gateway, gateway_class, policy

CRDS = Path(__file__).resolve().parents[1] / "data" / "crds"
GW = "gateway.networking.k8s.io"


def load_crd(rel: str) -> dict[str, Any]:
    with open(CRDS / rel, encoding="utf-8") as fh:
        docs = [d for d in yaml.load_all(fh, Loader=yaml.CSafeLoader) if isinstance(d, dict)]
    crds = [d for d in docs if d.get("kind") == "CustomResourceDefinition"]
    assert len(crds) == 1, rel
    return crds[0]


def gw(*kinds: str) -> set[TargetKind]:
    return {TargetKind(GW, k) for k in kinds}


# file -> (kind, served versions, label, (single, list, selectors), maxItems, sectionName, namespace, unique, kinds or None)
EXPECTED: dict[str, tuple[Any, ...]] = {
    # docs/semantics.md#backendtlspolicy: no CEL on kind; 1..16; exists_one CEL makes entries unique.
    "gateway-api/v1.6.1/standard/gateway.networking.k8s.io_backendtlspolicies.yaml": (
        "BackendTLSPolicy",
        ("v1",),
        "Direct",
        (None, "targetRefs", None),
        16,
        True,
        False,
        True,
        None,
    ),
    # experimental channel still serves the deprecated v1alpha3.
    "gateway-api/v1.6.1/experimental/gateway.networking.k8s.io_backendtlspolicies.yaml": (
        "BackendTLSPolicy",
        ("v1", "v1alpha3"),
        "Direct",
        (None, "targetRefs", None),
        16,
        True,
        False,
        True,
        None,
    ),
    # docs/semantics.md#xbackendtrafficpolicy: list-map keyed by (group, kind, name), no sectionName,
    # no kind CEL.
    "gateway-api/v1.6.1/experimental/gateway.networking.x-k8s.io_xbackendtrafficpolicies.yaml": (
        "XBackendTrafficPolicy",
        ("v1alpha1",),
        "Direct",
        (None, "targetRefs", None),
        16,
        False,
        False,
        True,
        None,
    ),
    # docs/semantics.md#envoy-gateway: no label, targetRef + targetRefs (no maxItems, no list-map)
    # + targetSelectors.
    "envoy-gateway/v1.9.0/gateway.envoyproxy.io_clienttrafficpolicies.yaml": (
        "ClientTrafficPolicy",
        ("v1alpha1",),
        None,
        ("targetRef", "targetRefs", "targetSelectors"),
        None,
        True,
        False,
        False,
        gw("Gateway", "ListenerSet"),
    ),
    "envoy-gateway/v1.9.0/gateway.envoyproxy.io_backendtrafficpolicies.yaml": (
        "BackendTrafficPolicy",
        ("v1alpha1",),
        None,
        ("targetRef", "targetRefs", "targetSelectors"),
        None,
        True,
        False,
        False,
        gw("Gateway", "ListenerSet", "HTTPRoute", "GRPCRoute", "UDPRoute", "TCPRoute", "TLSRoute"),
    ),
    "envoy-gateway/v1.9.0/gateway.envoyproxy.io_securitypolicies.yaml": (
        "SecurityPolicy",
        ("v1alpha1",),
        None,
        ("targetRef", "targetRefs", "targetSelectors"),
        None,
        True,
        False,
        False,
        gw("Gateway", "ListenerSet", "HTTPRoute", "GRPCRoute", "TCPRoute"),
    ),
    "envoy-gateway/v1.9.0/gateway.envoyproxy.io_envoyextensionpolicies.yaml": (
        "EnvoyExtensionPolicy",
        ("v1alpha1",),
        None,
        ("targetRef", "targetRefs", "targetSelectors"),
        None,
        True,
        False,
        False,
        gw("Gateway", "ListenerSet", "HTTPRoute", "GRPCRoute", "UDPRoute", "TCPRoute", "TLSRoute"),
    ),
    # EnvoyPatchPolicy: kind checked by the controller only.
    "envoy-gateway/v1.9.0/gateway.envoyproxy.io_envoypatchpolicies.yaml": (
        "EnvoyPatchPolicy",
        ("v1alpha1",),
        None,
        ("targetRef", None, None),
        None,
        False,
        False,
        False,
        None,
    ),
    # docs/semantics.md#kuadrant: CEL on the targetRef.
    "kuadrant/v1.5.2/kuadrant.io_authpolicies.yaml": (
        "AuthPolicy",
        ("v1",),
        "inherited",
        ("targetRef", None, None),
        None,
        True,
        False,
        False,
        gw("HTTPRoute", "GRPCRoute", "Gateway"),
    ),
    "kuadrant/v1.5.2/kuadrant.io_ratelimitpolicies.yaml": (
        "RateLimitPolicy",
        ("v1",),
        "inherited",
        ("targetRef", None, None),
        None,
        True,
        False,
        False,
        gw("HTTPRoute", "GRPCRoute", "Gateway"),
    ),
    "kuadrant/v1.5.2/kuadrant.io_tokenratelimitpolicies.yaml": (
        "TokenRateLimitPolicy",
        ("v1alpha1",),
        "inherited",
        ("targetRef", None, None),
        None,
        True,
        False,
        False,
        gw("HTTPRoute", "Gateway"),
    ),
    "kuadrant/v1.5.2/kuadrant.io_dnspolicies.yaml": (
        "DNSPolicy",
        ("v1",),
        "direct",
        ("targetRef", None, None),
        None,
        True,
        False,
        False,
        gw("Gateway"),
    ),
    "kuadrant/v1.5.2/kuadrant.io_tlspolicies.yaml": (
        "TLSPolicy",
        ("v1",),
        "direct",
        ("targetRef", None, None),
        None,
        True,
        False,
        False,
        gw("Gateway"),
    ),
    "kuadrant/v1.5.2/extensions.kuadrant.io_oidcpolicies.yaml": (
        "OIDCPolicy",
        ("v1alpha1",),
        None,
        ("targetRef", None, None),
        None,
        True,
        False,
        False,
        gw("HTTPRoute", "Gateway"),
    ),
    "kuadrant/v1.5.2/extensions.kuadrant.io_planpolicies.yaml": (
        "PlanPolicy",
        ("v1alpha1",),
        None,
        ("targetRef", None, None),
        None,
        True,
        False,
        False,
        gw("HTTPRoute", "GRPCRoute", "Gateway"),
    ),
    "kuadrant/v1.5.2/extensions.kuadrant.io_telemetrypolicies.yaml": (
        "TelemetryPolicy",
        ("v1alpha1",),
        None,
        ("targetRef", None, None),
        None,
        True,
        False,
        False,
        gw("Gateway"),
    ),
    "kuadrant/v1.5.2/extensions.kuadrant.io_threatpolicies.yaml": (
        "ThreatPolicy",
        ("v1alpha1",),
        None,
        ("targetRef", None, None),
        None,
        True,
        False,
        False,
        gw("HTTPRoute", "Gateway"),
    ),
    # docs/semantics.md#nginx-gateway-fabric table.
    "nginx-gateway-fabric/v2.6.7/gateway.nginx.org_clientsettingspolicies.yaml": (
        "ClientSettingsPolicy",
        ("v1alpha1",),
        "inherited",
        ("targetRef", None, None),
        None,
        False,
        False,
        False,
        gw("Gateway", "HTTPRoute", "GRPCRoute"),
    ),
    "nginx-gateway-fabric/v2.6.7/gateway.nginx.org_proxysettingspolicies.yaml": (
        "ProxySettingsPolicy",
        ("v1alpha1",),
        "inherited",
        (None, "targetRefs", None),
        16,
        False,
        False,
        True,
        gw("Gateway", "HTTPRoute", "GRPCRoute"),
    ),
    "nginx-gateway-fabric/v2.6.7/gateway.nginx.org_ratelimitpolicies.yaml": (
        "RateLimitPolicy",
        ("v1alpha1",),
        "inherited",
        (None, "targetRefs", None),
        16,
        False,
        False,
        True,
        gw("Gateway", "HTTPRoute", "GRPCRoute"),
    ),
    "nginx-gateway-fabric/v2.6.7/gateway.nginx.org_wafpolicies.yaml": (
        "WAFPolicy",
        ("v1alpha1",),
        "inherited",
        (None, "targetRefs", None),
        16,
        False,
        False,
        True,
        gw("Gateway", "HTTPRoute", "GRPCRoute"),
    ),
    # ObservabilityPolicy: only v1alpha2 is served; its kind CEL uses `exists`.
    "nginx-gateway-fabric/v2.6.7/gateway.nginx.org_observabilitypolicies.yaml": (
        "ObservabilityPolicy",
        ("v1alpha2",),
        "direct",
        (None, "targetRefs", None),
        16,
        False,
        False,
        True,
        gw("HTTPRoute", "GRPCRoute"),
    ),
    # UpstreamSettingsPolicy: Service in group "" or "core".
    "nginx-gateway-fabric/v2.6.7/gateway.nginx.org_upstreamsettingspolicies.yaml": (
        "UpstreamSettingsPolicy",
        ("v1alpha1",),
        "direct",
        (None, "targetRefs", None),
        16,
        False,
        False,
        True,
        {TargetKind("", "Service"), TargetKind("core", "Service")},
    ),
    "nginx-gateway-fabric/v2.6.7/gateway.nginx.org_snippetspolicies.yaml": (
        "SnippetsPolicy",
        ("v1alpha1",),
        "direct",
        (None, "targetRefs", None),
        16,
        False,
        False,
        True,
        gw("Gateway"),
    ),
    # docs/semantics.md#linkerd: unlabelled; one targetRef of Linkerd's own LocalTargetRef type
    # (group, kind, name; no sectionName, no namespace), no CEL on the kind.
    "linkerd/version-2.20/policy.linkerd.io_authorizationpolicies.yaml": (
        "AuthorizationPolicy",
        ("v1alpha1",),
        None,
        ("targetRef", None, None),
        None,
        False,
        False,
        False,
        None,
    ),
    "linkerd/version-2.20/policy.linkerd.io_httplocalratelimitpolicies.yaml": (
        "HTTPLocalRateLimitPolicy",
        ("v1alpha1",),
        None,
        ("targetRef", None, None),
        None,
        False,
        False,
        False,
        None,
    ),
    # docs/semantics.md#gke: labelled Direct. Three kinds with one targetRef of Gateway API's
    # v1alpha2 NamespacedPolicyTargetReference (a namespace, no sectionName) and no CEL on the
    # kind (GKE documents the kinds); GCPTrafficDistributionPolicy with targetRefs of the
    # repository's LocalPolicyTargetReference and CEL "TargetRefs must reference Service".
    **{
        f"gke/main-fc40d60/networking.gke.io_{plural}.yaml": (
            kind,
            ("v1",),
            "Direct",
            ("targetRef", None, None),
            None,
            False,
            True,
            False,
            None,
        )
        for plural, kind in (
            ("gcpbackendpolicies", "GCPBackendPolicy"),
            ("healthcheckpolicies", "HealthCheckPolicy"),
            ("gcpgatewaypolicies", "GCPGatewayPolicy"),
        )
    },
    # docs/semantics.md#istio: unlabelled; targetRef and targetRefs (at most one of them or a
    # workload selector: CEL), of Istio's own PolicyTargetReference (group optional, a namespace
    # that CEL refuses, no sectionName), no CEL on the kind. RequestAuthentication and
    # WasmPlugin are no policies by name: their facts are read all the same.
    **{
        f"istio/1.30.3/{file}": (kind, versions, None, ("targetRef", "targetRefs", None), 16, False, True, False, None)
        for file, kind, versions in (
            ("security.istio.io_authorizationpolicies.yaml", "AuthorizationPolicy", ("v1", "v1beta1")),
            ("security.istio.io_requestauthentications.yaml", "RequestAuthentication", ("v1", "v1beta1")),
            ("extensions.istio.io_wasmplugins.yaml", "WasmPlugin", ("v1alpha1",)),
        )
    },
    "gke/main-fc40d60/networking.gke.io_gcptrafficdistributionpolicies.yaml": (
        "GCPTrafficDistributionPolicy",
        ("v1",),
        "Direct",
        (None, "targetRefs", None),
        16,
        False,
        False,
        False,
        {TargetKind("", "Service")},
    ),
}


# Istio's kinds select their workloads by target references, a workload selector or neither
# (docs/semantics.md#istio): a target is optional. Two of them are no policies by name or label.
ISTIO = "istio/1.30.3/"
OPTIONAL_TARGETS = {
    ISTIO + "security.istio.io_authorizationpolicies.yaml",
    ISTIO + "security.istio.io_requestauthentications.yaml",
    ISTIO + "extensions.istio.io_wasmplugins.yaml",
}
UNNAMED_POLICIES = OPTIONAL_TARGETS - {ISTIO + "security.istio.io_authorizationpolicies.yaml"}


def test_expectations_cover_every_vendored_crd() -> None:
    # Every vendored policy CRD; Gateway API's own kinds are there for the schema rules.
    vendored = {
        p.relative_to(CRDS).as_posix()
        for p in CRDS.rglob("*.yaml")
        # Older releases (Gateway API's and the vendors') are bundled for the schema rules only.
        if "/".join(p.relative_to(CRDS).parts[:2]) in newest_release_dirs(CRDS)
        and crd_facts(load_crd(p.relative_to(CRDS).as_posix())).is_policy
    }
    assert vendored | UNNAMED_POLICIES == set(EXPECTED)


@pytest.mark.parametrize("rel", sorted(EXPECTED))
def test_crd_facts_of_vendored_crds(rel: str) -> None:
    kind, served, label, fields, max_items, section, namespace, unique, kinds = EXPECTED[rel]
    facts = crd_facts(load_crd(rel))
    assert facts.is_policy is (rel not in UNNAMED_POLICIES)
    assert facts.kind == kind
    assert facts.plural == (kind.lower()[:-1] + "ies" if kind.endswith("y") else kind.lower() + "s")
    assert facts.scope == "Namespaced"
    assert facts.served_versions == served
    assert facts.label == label
    assert (facts.single_field, facts.list_field, facts.selectors_field) == fields
    assert facts.max_items == max_items
    assert facts.section_name is section
    assert facts.namespace is namespace
    assert facts.unique is unique
    # Every other shipped kind requires a target (schema `required` or CEL).
    assert facts.required is (rel not in OPTIONAL_TARGETS)
    if kinds is None:
        assert facts.allowed_kinds is None
        assert facts.target_kinds == ()
    else:
        assert set(facts.target_kinds) == kinds


def test_envoy_gateway_cel_requires_exactly_one_of_targetref_and_targetrefs() -> None:
    facts = crd_facts(load_crd("envoy-gateway/v1.9.0/gateway.envoyproxy.io_backendtrafficpolicies.yaml"))
    # "either targetRef or targetRefs must be used" (unless targetSelectors is non-empty)
    assert facts.required and facts.exclusive
    # the mergeType rule restricts kinds only when mergeType is set: not a general restriction
    assert "Gateway" in (facts.allowed_kinds or ())


def test_kuadrant_merge_facts() -> None:
    facts = crd_facts(load_crd("kuadrant/v1.5.2/kuadrant.io_ratelimitpolicies.yaml"))
    assert (facts.has_defaults, facts.has_overrides, facts.has_default, facts.has_override) == (True, True, False, False)
    assert facts.strategy_values == ("atomic", "merge")
    assert facts.strategy_default == "atomic"
    assert facts.policy_class == INHERITED
    assert facts.boilerplate == GEP713
    profile = profile_from_facts(facts)
    assert profile is not None
    assert profile.merge.defaults == "defaults" and profile.merge.overrides == "overrides"
    assert profile.merge.strategy_field == "strategy"
    assert profile.merge.strategies == {"atomic": "atomic", "merge": "custom"}
    assert profile.merge.implicit_defaults


def test_unlabelled_kinds_are_direct_by_default() -> None:
    # docs/semantics.md#crds-without-a-class-label: kinds not declared Inherited are treated as Direct.
    facts = crd_facts(load_crd("envoy-gateway/v1.9.0/gateway.envoyproxy.io_clienttrafficpolicies.yaml"))
    assert facts.label_class is None
    assert facts.policy_class == DIRECT


@pytest.mark.parametrize("rel", sorted(EXPECTED))
def test_profile_from_each_vendored_crd(rel: str) -> None:
    facts = crd_facts(load_crd(rel))
    profile = profile_from_facts(facts, source=rel)
    if rel in UNNAMED_POLICIES:
        assert profile is None  # no policy to a CRD alone: the built-in profile says it is
        return
    assert profile is not None
    assert profile.origin == ORIGIN_CRD
    assert profile.targets.fields == facts.target_fields
    assert profile.targets.kinds_enforced is facts.kinds_restricted
    if facts.kinds_restricted:
        assert set(profile.targets.kinds) == set(facts.target_kinds)
    assert not profile.targets.virtual_kinds or not facts.kinds_restricted


# -- CEL shapes ------------------------------------------------------------------------------


def crd(
    *,
    kind: str = "ColorPolicy",
    group: str = "example.com",
    labels: dict[str, Any] | None = None,
    spec_props: dict[str, Any] | None = None,
    spec_rules: list[str] | None = None,
    ref_rules: list[str] | None = None,
    list_rules: list[str] | None = None,
    item_rules: list[str] | None = None,
    ref_props: dict[str, Any] | None = None,
    single: bool = False,
    many: bool = True,
    versions: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    ref_schema = {
        "type": "object",
        "required": ["group", "kind", "name"],
        "properties": ref_props
        if ref_props is not None
        else {"group": {"type": "string"}, "kind": {"type": "string"}, "name": {"type": "string"}},
    }
    props: dict[str, Any] = {}
    if single:
        props["targetRef"] = {**copy.deepcopy(ref_schema), "x-kubernetes-validations": [{"rule": r} for r in ref_rules or []]}
    if many:
        items = {**copy.deepcopy(ref_schema), "x-kubernetes-validations": [{"rule": r} for r in item_rules or []]}
        props["targetRefs"] = {
            "type": "array",
            "maxItems": 4,
            "items": items,
            "x-kubernetes-validations": [{"rule": r} for r in list_rules or []],
        }
    props.update(spec_props or {})
    spec_schema = {"type": "object", "properties": props, "x-kubernetes-validations": [{"rule": r} for r in spec_rules or []]}
    schema = {"openAPIV3Schema": {"type": "object", "properties": {"spec": spec_schema}}}
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{kind.lower()}s.{group}", "labels": labels or {}},
        "spec": {
            "group": group,
            "names": {"kind": kind, "plural": kind.lower()[:-1] + "ies", "singular": kind.lower()},
            "scope": "Namespaced",
            "versions": versions if versions is not None else [{"name": "v1", "served": True, "storage": True, "schema": schema}],
        },
    }


def test_a_crd_read_again_is_read_for_its_facts_once_per_content(monkeypatch: pytest.MonkeyPatch) -> None:
    # A CRD given with --crd is read afresh by every run: another object of the same content is
    # answered from the first's facts, counted; content equal in Python but of another type is
    # other content.
    import policylint.profiles.crd as crd_module

    read: list[object] = []
    original = crd_module._crd_facts
    monkeypatch.setattr(crd_module, "_crd_facts", lambda data: read.append(data) or original(data))
    monkeypatch.setattr(crd_module, "_FACTS", {})
    rule = "self.all(x, x.kind in ['Gateway','HTTPRoute'])"
    first = crd_facts(crd(list_rules=[rule]))
    assert (first.list_field, first.max_items, first.allowed_kinds) == ("targetRefs", 4, ("Gateway", "HTTPRoute"))
    assert crd_facts(crd(list_rules=[rule])) == first
    assert len(read) == 1
    # `maxItems: 4.0` == 4 in Python, but no integer to the API server: no bound read, read again.
    other = crd(list_rules=[rule])
    other["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]["targetRefs"]["maxItems"] = 4.0
    assert crd_facts(other).max_items is None
    assert len(read) == 2


@pytest.mark.parametrize(
    ("where", "rule", "kinds", "groups"),
    [
        ("list", "self.all(x, x.kind in ['Gateway','HTTPRoute'])", ("Gateway", "HTTPRoute"), None),
        ("list", "self.all(x, x.kind == 'Gateway' || x.kind == 'HTTPRoute')", ("Gateway", "HTTPRoute"), None),
        ("list", "self.all(x, x.group in ['', 'core'])", None, ("", "core")),
        ("list", "self.exists(t, t.group=='') || self.exists(t, t.group=='core')", None, ("", "core")),
        (
            "list",
            "(self.exists(t, t.kind=='HTTPRoute') || self.exists(t, t.kind=='GRPCRoute'))",
            ("GRPCRoute", "HTTPRoute"),
            None,
        ),
        ("item", "self.kind == 'Gateway'", ("Gateway",), None),
        ("item", "(self.group=='gateway.networking.k8s.io')", None, ("gateway.networking.k8s.io",)),
        ("item", '"Gateway" == self.kind', ("Gateway",), None),
        (
            "spec",
            "has(self.targetRefs) ? self.targetRefs.all(ref, ref.kind in ['Gateway', 'ListenerSet']) : true",
            ("Gateway", "ListenerSet"),
            None,
        ),
        ("spec", "self.targetRefs.all(ref, ref.group == 'gateway.networking.k8s.io')", None, ("gateway.networking.k8s.io",)),
        # A conjunction holds only where each conjunct does: those on the kind or the group
        # restrict them, the others are left out (GKE GCPTrafficDistributionPolicy's rule).
        ("list", "self.all(x, x.kind == 'Service' && x.group == '')", ("Service",), ("",)),
        ("list", "self.all(t, t.kind == 'Gateway' && t.name == 'x')", ("Gateway",), None),
        # Not restrictions: conditional on another field, negated, comparing entries, unknown names.
        ("spec", "!has(self.mergeType) || self.targetRefs.all(ref, ref.kind in ['HTTPRoute'])", None, None),
        ("list", "!(self.exists(t, t.kind == 'Gateway') && self.exists(t, t.kind == 'HTTPRoute'))", None, None),
        ("list", "self.all(t1, self.all(t2, t1.kind == t2.kind))", None, None),
        ("list", "self.all(t, other.kind == 'Gateway')", None, None),
        ("list", "self.size() > 0 ? self.all(t, t.kind == 'Gateway') : true", None, None),
        ("list", "self.all(t, t.kind in [other])", None, None),
        ("list", "self.all(t, t.kind == 'Gate", None, None),
        ("list", "(" * 200 + "self.kind == 'A'" + ")" * 200, None, None),
    ],
)
def test_cel_kind_and_group_restrictions(
    where: str, rule: str, kinds: tuple[str, ...] | None, groups: tuple[str, ...] | None
) -> None:
    key = {"list": "list_rules", "item": "item_rules", "spec": "spec_rules"}[where]
    facts = crd_facts(crd(**{key: [rule]}))
    assert facts.allowed_kinds == (tuple(sorted(kinds)) if kinds else None)
    assert facts.allowed_groups == (tuple(sorted(groups)) if groups else None)


def test_rules_on_one_field_intersect_and_fields_union() -> None:
    facts = crd_facts(
        crd(
            single=True,
            ref_rules=["self.kind == 'Gateway' || self.kind == 'HTTPRoute'", "self.kind in ['Gateway', 'GRPCRoute']"],
            list_rules=["self.all(t, t.kind == 'Service')"],
        )
    )
    assert facts.allowed_kinds == ("Gateway", "Service")


def test_enum_restricts_kinds_and_groups() -> None:
    facts = crd_facts(
        crd(
            ref_props={
                "group": {"type": "string", "enum": ["gateway.networking.k8s.io"]},
                "kind": {"type": "string", "enum": ["Gateway", "HTTPRoute"]},
                "name": {"type": "string"},
            }
        )
    )
    assert set(facts.target_kinds) == gw("Gateway", "HTTPRoute")


def test_kinds_without_group_restriction_get_their_well_known_group() -> None:
    facts = crd_facts(crd(list_rules=["self.all(t, t.kind in ['Gateway', 'Service'])"]))
    assert set(facts.target_kinds) == {TargetKind(GW, "Gateway"), TargetKind("", "Service")}
    assert profile_from_facts(facts).targets.kinds_enforced  # type: ignore[union-attr]
    # a kind we cannot place in a group: do not enforce (a wrong group would be a false error)
    facts = crd_facts(crd(list_rules=["self.all(t, t.kind in ['Gateway', 'Widget'])"]))
    profile = profile_from_facts(facts)
    assert profile is not None and not profile.targets.kinds_enforced and profile.targets.kinds == ()


def test_required_and_exclusive_from_cel() -> None:
    both = {"single": True, "many": True}
    facts = crd_facts(crd(**both))
    assert not facts.required and not facts.exclusive
    facts = crd_facts(
        crd(
            **both,
            spec_rules=["(has(self.targetRef) && !has(self.targetRefs)) || (!has(self.targetRef) && has(self.targetRefs))"],
        )
    )
    assert facts.required and facts.exclusive
    facts = crd_facts(crd(**both, spec_rules=["!(has(self.targetRef) && has(self.targetRefs))"]))
    assert not facts.required and facts.exclusive
    facts = crd_facts(crd(**both, spec_rules=["has(self.targetRef) || has(self.targetRefs)"]))
    assert facts.required and not facts.exclusive
    # Istio's "only one of targetRefs or selector can be set": the fields set, counted.
    count = "(has(self.selector) ? 1 : 0) + (has(self.targetRef) ? 1 : 0)\n  + (has(self.targetRefs) ? 1 : 0)"
    for bound in ("<= 1", "< 2", "== 1"):
        facts = crd_facts(crd(**both, spec_rules=[f"{count} {bound}"]))
        assert not facts.required and facts.exclusive, bound
    for rule in (
        f"{count} <= 2",  # two may be set
        f"{count} <= 10",
        "(has(self.targetRef) ? 2 : 0) + (has(self.targetRefs) ? 1 : 0) <= 1",  # not a count
        "(has(self.targetRef) ? 1 : 0) + (has(self.selector) ? 1 : 0) <= 1",  # targetRefs not counted
    ):
        assert not crd_facts(crd(**both, spec_rules=[rule])).exclusive, rule


def test_storage_version_schema_is_preferred_among_served() -> None:
    def version(name: str, served: bool, storage: bool, field: str) -> dict[str, Any]:
        spec = {"type": "object", "properties": {field: {"type": "array", "items": {"type": "object"}}}}
        return {"name": name, "served": served, "storage": storage, "schema": {"openAPIV3Schema": {"properties": {"spec": spec}}}}

    facts = crd_facts(
        crd(versions=[version("v1alpha1", True, False, "targetRefs"), version("v1", True, True, "targetSelectors")])
    )
    assert facts.schema_version == "v1" and facts.target_fields == ("targetSelectors",)
    assert facts.served_versions == ("v1alpha1", "v1")
    facts = crd_facts(
        crd(versions=[version("v1alpha1", False, False, "targetRef"), version("v1beta1", True, False, "targetRefs")])
    )
    assert facts.served_versions == ("v1beta1",) and facts.target_fields == ("targetRefs",)
    # apiextensions v1beta1: one schema in spec.validation
    legacy = crd(versions=[])
    legacy["spec"]["version"] = "v1"
    legacy["spec"]["validation"] = {
        "openAPIV3Schema": {"properties": {"spec": {"properties": {"targetRef": {"type": "object"}}}}}
    }
    assert crd_facts(legacy).target_fields == ("targetRef",)


@pytest.mark.parametrize(
    ("value", "is_policy", "policy_class"),
    [
        ("Direct", True, DIRECT),
        ("direct", True, DIRECT),
        ("INHERITED", True, INHERITED),
        ("true", True, DIRECT),
        ("bogus", False, None),
    ],
)
def test_label_values_case_insensitive(value: str, is_policy: bool, policy_class: str | None) -> None:
    # A labelled kind need not look like a policy (gwctl discovers by label alone).
    facts = crd_facts(crd(kind="Color", many=False, labels={"gateway.networking.k8s.io/policy": value}))
    assert facts.is_policy is is_policy
    if policy_class is not None:
        assert facts.policy_class == policy_class


def test_non_policy_crds_are_skipped() -> None:
    assert not crd_facts(crd(kind="Widget")).is_policy  # has targetRefs but is no *Policy
    assert not crd_facts(crd(kind="ColorPolicy", many=False)).is_policy  # no target fields, no label
    assert crd_facts(crd(kind="ColorPolicy")).is_policy


def test_policy_attachment_style_boilerplate() -> None:
    # The original Policy Attachment page: targetRef plus `default` and/or `override`.
    facts = crd_facts(crd(single=True, many=False, spec_props={"default": {"type": "object"}, "override": {"type": "object"}}))
    assert facts.boilerplate == POLICY_ATTACHMENT
    assert facts.policy_class == INHERITED
    profile = profile_from_facts(facts)
    assert profile is not None
    assert profile.boilerplate == POLICY_ATTACHMENT
    assert (profile.merge.defaults, profile.merge.overrides) == ("default", "override")


def test_gep713_defaults_overrides_with_patch_strategy() -> None:
    block = {"type": "object", "properties": {"strategy": {"type": "string", "enum": ["atomic", "patch"], "default": "patch"}}}
    facts = crd_facts(
        crd(labels={"gateway.networking.k8s.io/policy": "Inherited"}, spec_props={"defaults": block, "overrides": block})
    )
    profile = profile_from_facts(facts)
    assert profile is not None
    assert profile.boilerplate == GEP713
    assert profile.merge.default == "patch-defaults"
    assert profile.merge.strategies == {"atomic": "atomic", "patch": "patch"}


# -- a custom policy CRD in the input -------------------------------------------------------

COLOR_CRD = first(
    crd_document(
        "ColorPolicy",
        """\
            required: [targetRefs]
            properties:
              targetRefs:
                type: array
                minItems: 1
                maxItems: 8
                x-kubernetes-list-type: map
                x-kubernetes-list-map-keys: [group, kind, name]
                x-kubernetes-validations:
                  - message: ColorPolicy targets Gateways and HTTPRoutes
                    rule: "self.all(x, x.kind in ['Gateway', 'HTTPRoute'])"
                items:
                  type: object
                  required: [group, kind, name]
                  properties:
                    group: {type: string}
                    kind: {type: string}
                    name: {type: string}
                    sectionName: {type: string}
              color: {type: string}
              overrides:
                type: object
                properties:
                  color: {type: string}
""",
        labels="{gateway.networking.k8s.io/policy: Inherited}",
        names="{kind: ColorPolicy, listKind: ColorPolicyList, plural: colorpolicies, singular: colorpolicy}",
    )
)

COLOR_TOPOLOGY = (
    first(gateway_class("example"))
    + gateway(name="g1", class_name="example")
    + policy(
        "ColorPolicy",
        "  - {group: gateway.networking.k8s.io, kind: Gateway, name: g1, sectionName: http}\n",
        api="example.com/v1",
        name="p1",
        spec="  color: red\n",
    )
)


def test_custom_policy_crd_in_the_input_yields_a_crd_profile() -> None:
    result = lint_text(COLOR_CRD + "---\n" + COLOR_TOPOLOGY)
    policies = result.project.resolution.policies()
    assert len(policies) == 1
    profile = policies[0].profile
    assert profile.origin == "crd"
    assert (profile.group, profile.kind, profile.plural, profile.versions) == (
        "example.com",
        "ColorPolicy",
        "colorpolicies",
        ("v1",),
    )
    assert profile.policy_class == INHERITED
    assert profile.targets.list == "targetRefs" and profile.targets.single is None
    assert profile.targets.max_items == 8 and profile.targets.unique and profile.targets.section_name
    assert set(profile.targets.kinds) == gw("Gateway", "HTTPRoute") and profile.targets.kinds_enforced
    assert profile.merge.overrides == "overrides" and profile.merge.implicit_defaults
    assert profile.effective_target == "rule"
    [resolution] = result.project.resolution.resolutions(policies[0])
    assert resolution.status.label == "Accepted" and resolution.section is not None
    assert "PL111" not in {f.rule for f in result.findings}  # not an inferred kind any more
    assert [f for f in result.findings if f.severity >= Severity.WARNING] == []


def test_custom_policy_crd_passed_with_crd_option(tmp_path: Path) -> None:
    crd_file = tmp_path / "crds" / "colorpolicy.yaml"
    crd_file.parent.mkdir()
    crd_file.write_text(COLOR_CRD)
    manifests = tmp_path / "manifests.yaml"
    manifests.write_text(COLOR_TOPOLOGY)
    result = lint_paths([manifests], crd_paths=[str(crd_file.parent)])
    [policy] = result.project.resolution.policies()
    assert policy.profile.origin == ORIGIN_CRD
    assert "colorpolicies.example.com" in policy.profile.source


def test_builtin_profile_wins_over_a_crd_in_the_input() -> None:
    # docs/semantics.md#how-policy-kinds-are-known: --profile, built-in, CRDs.
    crd_text = (CRDS / "nginx-gateway-fabric/v2.6.7/gateway.nginx.org_snippetspolicies.yaml").read_text()
    policy = """\
apiVersion: gateway.nginx.org/v1alpha1
kind: SnippetsPolicy
metadata:
  name: s
  namespace: app
spec:
  targetRefs:
    - {group: gateway.networking.k8s.io, kind: Gateway, name: g1}
  snippets:
    - {context: http, value: "client_body_buffer_size 16k;"}
"""
    result = lint_text(crd_text + "\n---\n" + policy)
    [found] = result.project.resolution.policies()
    assert found.profile.origin == ORIGIN_BUILTIN


# -- malformed CRDs never raise ---------------------------------------------------------------


def _object(data: Any) -> K8sObject:
    ref = DocumentRef("crd.yaml", 0, 0, 0, 1, 1)
    return K8sObject(
        ObjectKey("apiextensions.k8s.io", "CustomResourceDefinition", None, "x"), "apiextensions.k8s.io/v1", data, ref
    )


def _mutations() -> list[Any]:
    base = crd(single=True, spec_rules=["has(self.targetRef) ? self.targetRef.kind in ['Gateway'] : true"])
    out: list[Any] = [
        None,
        "crd",
        [],
        7,
        {},
        {"spec": "a string"},
        {"spec": {"versions": "not a list"}},
        {"metadata": [], "spec": []},
    ]
    paths: list[tuple[Any, ...]] = [
        ("spec",),
        ("spec", "names"),
        ("spec", "names", "kind"),
        ("spec", "group"),
        ("spec", "scope"),
        ("spec", "versions"),
        ("spec", "versions", 0),
        ("spec", "versions", 0, "name"),
        ("spec", "versions", 0, "served"),
        ("spec", "versions", 0, "schema"),
        ("spec", "versions", 0, "schema", "openAPIV3Schema"),
        ("spec", "versions", 0, "schema", "openAPIV3Schema", "properties"),
        ("spec", "versions", 0, "schema", "openAPIV3Schema", "properties", "spec"),
        ("spec", "versions", 0, "schema", "openAPIV3Schema", "properties", "spec", "properties"),
        ("spec", "versions", 0, "schema", "openAPIV3Schema", "properties", "spec", "required"),
        ("spec", "versions", 0, "schema", "openAPIV3Schema", "properties", "spec", "x-kubernetes-validations"),
        ("spec", "versions", 0, "schema", "openAPIV3Schema", "properties", "spec", "x-kubernetes-validations", 0),
        ("spec", "versions", 0, "schema", "openAPIV3Schema", "properties", "spec", "x-kubernetes-validations", 0, "rule"),
        ("spec", "versions", 0, "schema", "openAPIV3Schema", "properties", "spec", "properties", "targetRef"),
        ("spec", "versions", 0, "schema", "openAPIV3Schema", "properties", "spec", "properties", "targetRef", "properties"),
        ("spec", "versions", 0, "schema", "openAPIV3Schema", "properties", "spec", "properties", "targetRefs", "items"),
        ("spec", "versions", 0, "schema", "openAPIV3Schema", "properties", "spec", "properties", "targetRefs", "maxItems"),
        (
            "spec",
            "versions",
            0,
            "schema",
            "openAPIV3Schema",
            "properties",
            "spec",
            "properties",
            "targetRefs",
            "items",
            "properties",
            "kind",
        ),
        ("metadata",),
        ("metadata", "labels"),
        ("metadata", "labels", "gateway.networking.k8s.io/policy"),
    ]
    for path in paths:
        for bad in ("a string", 42, None, [1, "x"], {"unexpected": {"deep": [None]}}, True, -3.5):
            doc = copy.deepcopy(base)
            node = doc
            for part in path[:-1]:
                node = node[part]
            node[path[-1]] = bad
            out.append(doc)
    return out


@pytest.mark.parametrize("data", _mutations())
def test_malformed_crds_never_raise(data: Any) -> None:
    facts = crd_facts(data)
    assert isinstance(facts, CrdFacts)
    profiles_from_crds([_object(data)])


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | st.text(max_size=12),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=12), children, max_size=4),
    max_leaves=20,
)


@settings(max_examples=200, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(replacement=json_values, index=st.integers(min_value=0, max_value=10_000))
def test_fuzzed_crds_never_raise(replacement: Any, index: int) -> None:
    doc = crd(
        single=True,
        spec_rules=["has(self.targetRef) ? self.targetRef.kind in ['Gateway'] : true"],
        list_rules=["self.all(t, t.kind == 'Gateway')"],
    )
    # Replace one node, chosen by index, anywhere in the document.
    nodes: list[tuple[Any, Any]] = []

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            for k in list(node):
                nodes.append((node, k))
                walk(node[k])
        elif isinstance(node, list):
            for i in range(len(node)):
                nodes.append((node, i))
                walk(node[i])

    walk(doc)
    parent, key = nodes[index % len(nodes)]
    parent[key] = replacement
    crd_facts(doc)
    profiles_from_crds([_object(doc)])


def test_malformed_crds_in_the_input_are_not_an_internal_error() -> None:
    text = """\
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: a.example.com, labels: {gateway.networking.k8s.io/policy: Direct}}
spec: a string
---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: b.example.com}
spec: {group: example.com, names: {kind: BPolicy, plural: bpolicies}, scope: Namespaced, versions: not-a-list}
---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: c.example.com, labels: {gateway.networking.k8s.io/policy: Inherited}}
spec:
  group: example.com
  names: {kind: CPolicy, plural: cpolicies}
  scope: Namespaced
  versions:
    - name: v1
      served: true
      storage: true
      schema:
        openAPIV3Schema:
          properties:
            spec:
              properties:
                targetRefs: {type: array, maxItems: many, items: [1, 2], x-kubernetes-validations: {rule: 3}}
              x-kubernetes-validations: [{rule: ["self"]}, "oops", {rule: "self.all(x, x.kind == "}]
              required: targetRefs
"""
    result = lint_text(text)
    assert not result.internal_error
    assert "PL000" not in {f.rule for f in result.findings}


def test_direct_kinds_keep_their_boilerplate_fields() -> None:
    # A Direct-labelled CRD in the policy-attachment style still names default/override for the PL1xx rules.
    facts = crd_facts(
        crd(
            single=True,
            many=False,
            labels={"gateway.networking.k8s.io/policy": "direct"},
            spec_props={"default": {"type": "object"}},
        )
    )
    profile = profile_from_facts(facts)
    assert profile is not None
    assert profile.policy_class == DIRECT and profile.merge.default == "none"
    assert profile.boilerplate == POLICY_ATTACHMENT and profile.merge.defaults == "default" and profile.merge.overrides is None


# -- target references of other shapes (docs/semantics.md#target-references-of-other-shapes) -------

# Modelled on GKE's GCPServerTLSPolicy (config/crd/networking.gke.io_gcpservertlspolicies.yaml in
# GoogleCloudPlatform/gke-gateway-api: `required: [kind, selector]`-style references, no name for
# Pods) and Linkerd's HTTPLocalRateLimitPolicy (`spec.overrides` is a list of per-client limits).
_MESH_REFS = """\
            required: [targetRefs]
            properties:
              targetRefs:
                type: array
                items:
                  type: object
                  required: [kind]
                  properties:
                    group: {type: string}
                    kind: {type: string}
                    name: {type: string}
                    selector:
                      type: object
                      properties:
                        matchLabels: {type: object, additionalProperties: {type: string}}
                  x-kubernetes-validations:
                  - {rule: "self.kind != 'Pod' || !has(self.name)", message: "If Kind is Pod, Name must be empty"}
"""
_WEB = "---\napiVersion: v1\nkind: Service\nmetadata: {name: web, namespace: apps}\nspec: {ports: [{name: http, port: 80}]}\n"


def _mesh_crd(
    labels: str = "{}", field: str = "overrides: {type: array, items: {type: object, x-kubernetes-preserve-unknown-fields: true}}"
) -> str:
    """The MeshPolicy CRD (and the Service `web`), with one more spec field."""
    return crd_document("MeshPolicy", _MESH_REFS + f"              {field}\n", labels=labels) + _WEB


MESH_CRD = _mesh_crd()


def first_document(text: str) -> Any:
    return next(d for d in yaml.safe_load_all(text) if d)


def _mesh_policy(name: str, refs: str, extra: str = "") -> str:
    return f"---\napiVersion: example.com/v1\nkind: MeshPolicy\nmetadata: {{name: {name}, namespace: apps}}\nspec:\n  targetRefs: {refs}\n{extra}"


def test_a_reference_schema_of_its_own_decides_what_is_required_and_known() -> None:
    facts = crd_facts(first_document(MESH_CRD))
    assert (facts.ref_required, facts.ref_defaults, facts.ref_extra_fields) == (("kind",), (), ("selector",))
    assert not facts.has_overrides and facts.policy_class == DIRECT  # a list named overrides is no GEP-713 block
    result = lint_text(
        MESH_CRD
        + _mesh_policy("by-name", "[{kind: Service, name: web}]")  # no group: the core group
        + _mesh_policy("by-selector", "[{kind: Pod, selector: {matchLabels: {app: web}}}]")
        + _mesh_policy("both", "[{kind: Pod, name: web-0, selector: {matchLabels: {app: web}}}]")
        + _mesh_policy("limits", "[{kind: Service, name: web}]", "  overrides: [{client: a}]\n")
    )
    by_name = {p.obj.name: p for p in result.project.resolution.policies()}
    [named] = result.project.resolution.resolutions(by_name["by-name"])
    assert (named.status.label, named.detail.label, named.target is not None and named.target.name) == (
        "Accepted",
        "Resolved",
        "web",
    )
    [selected] = result.project.resolution.resolutions(by_name["by-selector"])
    assert (selected.status.label, selected.detail.label) == ("Accepted", "Unnamed")
    assert selected.message == "names no object: it selects by its selector, which policylint does not resolve"
    assert selected.ref.display() == "Pod (no name)"
    # The schema's own fields are no PL205, an absent group no PL203, a list named `overrides` no
    # PL107; the CEL rule on the reference is reported rather than left to them.
    rules = {(f.rule, f.object.name if f.object else None, f.path) for f in result.findings}
    assert not {r for r in rules if r[0] in ("PL203", "PL205", "PL107")}
    assert ("PL704", "both", "spec.targetRefs[0]") in rules
    assert [f.message for f in result.findings if f.rule == "PL704"] == [
        "spec.targetRefs[0]: If Kind is Pod, Name must be empty (a CEL rule of its CRD in the input): the API server"
        " rejects the object"
    ]


def test_reference_defaults_are_what_an_absent_field_reads_as() -> None:
    text = MESH_CRD.replace("group: {type: string}", "group: {type: string, default: gateway.networking.k8s.io}")
    facts = crd_facts(first_document(text))
    assert facts.ref_defaults == (("group", "gateway.networking.k8s.io"),)
    result = lint_text(text + _mesh_policy("p", "[{kind: Service, name: web}]"))
    [res] = result.project.resolution.resolutions(result.project.resolution.policies()[0])
    # gateway.networking.k8s.io has no Service: the default decides, not the core group.
    assert (res.status.label, res.detail.label) == ("TargetNotFound", "ObjectNotFound")


def test_namespace_targets_of_a_namespaced_policy() -> None:
    result = lint_text(
        MESH_CRD
        + _mesh_policy("own", "[{kind: Namespace, name: apps}]")
        + _mesh_policy("system", "[{kind: Namespace, name: kube-system}]")
        + _mesh_policy("other", "[{kind: Namespace, name: team-b}]")
    )
    by_name = {p.obj.name: p for p in result.project.resolution.policies()}
    # Neither Namespace is in the input; the policy's own and the system ones exist anyway.
    [own] = result.project.resolution.resolutions(by_name["own"])
    assert (own.status.label, own.detail.label, own.message) == (
        "Accepted",
        "Implied",
        "the namespace the policy lives in, so it exists",
    )
    [system] = result.project.resolution.resolutions(by_name["system"])
    assert (system.status.label, system.detail.label) == ("Accepted", "Implied")
    findings = [
        (f.rule, f.object.name, f.path) for f in result.findings if f.object is not None and f.object.kind == "MeshPolicy"
    ]
    assert sorted(findings) == [
        ("PL201", "other", "spec.targetRefs[0].name"),  # team-b is not in the input
        ("PL204", "other", "spec.targetRefs[0].name"),
        ("PL204", "system", "spec.targetRefs[0].name"),
    ]
    pl204 = next(f for f in result.findings if f.rule == "PL204" and f.object is not None and f.object.name == "other")
    assert pl204.message.startswith("namespaced MeshPolicy apps/other targets Namespace 'team-b', not its own namespace apps")


def test_a_direct_kind_in_the_original_style_merges_nothing() -> None:
    # GKE's GCPBackendPolicy: labelled Direct, with `spec.default`; "only one GCPBackendPolicy can
    # attach to a Service" (GKE docs, "Configure Gateway resources using Policies").
    text = _mesh_crd(
        labels="{gateway.networking.k8s.io/policy: Direct}",
        field="default: {type: object, x-kubernetes-preserve-unknown-fields: true}",
    )
    result = lint_text(
        text
        + _mesh_policy("a-timeout", "[{kind: Service, name: web}]", "  default: {timeoutSec: 30}\n")
        + _mesh_policy("b-logging", "[{kind: Service, name: web}]", "  default: {logging: {enable: true}}\n")
    )
    [policy] = [p for p in result.project.resolution.policies() if p.obj.name == "a-timeout"]
    assert policy.profile.boilerplate == POLICY_ATTACHMENT and policy.profile.policy_class == DIRECT
    conflicts = [(f.rule, f.object.name if f.object else None) for f in result.findings if f.rule == "PL601"]
    assert conflicts == [("PL601", "b-logging")]  # the tie-break: a-timeout sorts first
    # One block in the kind's boilerplate: a policy without it sets nothing.
    empty = lint_text(text + _mesh_policy("nothing", "[{kind: Service, name: web}]"))
    [pl106] = [f for f in empty.findings if f.rule == "PL106"]
    assert pl106.message == (
        "MeshPolicy sets no spec.default: the policy-attachment boilerplate requires it, and the policy configures nothing"
    )


def test_explain_shows_a_reference_that_names_no_object(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from policylint.cli import cli

    manifests = tmp_path / "mesh.yaml"
    manifests.write_text(MESH_CRD + _mesh_policy("by-selector", "[{kind: Pod, selector: {matchLabels: {app: web}}}]"))
    result = CliRunner().invoke(cli, ["explain", "meshpolicy/apps/by-selector", str(manifests)])
    assert result.exit_code == 0, result.output
    assert "target Pod (no name) (spec.targetRefs[0]): Accepted" in result.output
    assert "Unnamed: names no object: it selects by its selector, which policylint does not resolve" in result.output
