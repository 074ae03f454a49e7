"""PL5xx label conventions: label syntax helpers, the upstream CRDs, hostile shapes."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from policylint.k8s.schemas import newest_release_dirs
from policylint.rules.engine import INTERNAL_ERROR
from policylint.rules.labels import label_value_problem, qualified_name_problem
from tests.lintutil import lint_paths, lint_text, only, select
from tests.manifests import crd as crd_document
from tests.manifests import first

UPSTREAM_CRDS = Path(__file__).resolve().parents[1] / "data" / "crds"


@pytest.mark.parametrize(
    "key",
    [
        "app",
        "app.kubernetes.io/name",
        "gateway.networking.k8s.io/PolicyAffected",
        "a",
        "A_b.c-9",
        "x" * 63,
        "a." * 126 + "b/" + "n" * 63,  # prefix of 253 characters
    ],
)
def test_valid_qualified_names(key: str) -> None:
    assert qualified_name_problem(key) is None


@pytest.mark.parametrize(
    ("key", "reason"),
    [
        ("", "name part is empty"),
        ("/app", "prefix before '/' is empty"),
        ("example.com/", "name part is empty"),
        ("a/b/c", "more than one '/'"),
        ("Example.com/app", "not a DNS-1123 subdomain"),
        ("example_com/app", "not a DNS-1123 subdomain"),
        ("x" * 64, "64 characters long"),
        ("a" * 254 + "/b", "prefix is 254 characters long"),
        ("-app", "must start and end"),
        ("app.", "must start and end"),
        ("my app", "contains ' '"),
        ("café", "contains 'é'"),
    ],
)
def test_invalid_qualified_names(key: str, reason: str) -> None:
    problem = qualified_name_problem(key)
    assert problem is not None and reason in problem


@pytest.mark.parametrize("value", ["", "v1", "v1.2.3", "a_b-c.d", "9" * 63])
def test_valid_label_values(value: str) -> None:
    assert label_value_problem(value) is None


@pytest.mark.parametrize(
    ("value", "reason"),
    [("v1.2.3-", "must start and end"), ("a/b", "contains '/'"), ("x" * 64, "64 characters"), (" a", "contains ' '")],
)
def test_invalid_label_values(value: str, reason: str) -> None:
    problem = label_value_problem(value)
    assert problem is not None and reason in problem


def test_vendored_upstream_crds_get_no_advice_to_edit_them() -> None:
    # docs/semantics.md#label-conventions: Envoy Gateway's five policy CRDs and Kuadrant's four
    # extension kinds carry no policy label. Before: nine PL501 warnings telling the user to add
    # it. After: none: CRDs in the group of a project policylint ships profiles for (or a
    # subdomain of it) are vendored, fixed upstream, not in the user's hands.
    result = lint_paths([UPSTREAM_CRDS], selection=select("PL1", "PL5"))
    assert not only(result, INTERNAL_ERROR)
    assert result.findings == []


def test_upstream_crds_rehomed_to_a_users_group_lack_labels_only_where_the_vendor_ships_none(tmp_path: Path) -> None:
    # The label rules on the real CRDs, as if the user owned them (spec.group moved under
    # example.com): every labelled CRD is well-formed, and no Direct CRD spans two hierarchy
    # levels (NGF ObservabilityPolicy: HTTPRoute + GRPCRoute); the unlabelled kinds remain, and
    # GKE's four kinds, labelled Direct with their settings in the original Policy Attachment
    # `default` block, which GEP-2648 keeps for Inherited kinds (PL504; in GKE's own group the
    # CRDs are vendored and not checked, as test_vendored_upstream_crds_get_no_advice_to_edit_them
    # shows).
    newest = newest_release_dirs(UPSTREAM_CRDS)
    for source in sorted(UPSTREAM_CRDS.rglob("*.yaml")):
        if "/".join(source.relative_to(UPSTREAM_CRDS).parts[:2]) not in newest:
            continue  # older releases, bundled for the schema rules only
        text = re.sub(r"(?m)^(  group: )(\S+)$", r"\1\2.example.com", source.read_text(encoding="utf-8"))
        (tmp_path / f"{source.parent.name}-{source.name}").write_text(text, encoding="utf-8")
    result = lint_paths([tmp_path], selection=select("PL1", "PL5"))
    assert not only(result, INTERNAL_ERROR)
    unlabelled = sorted(f.object.name for f in result.findings if f.rule == "PL501")  # type: ignore[union-attr]
    assert unlabelled == [
        "authorizationpolicies.policy.linkerd.io",
        "authorizationpolicies.security.istio.io",
        "backendtrafficpolicies.gateway.envoyproxy.io",
        "clienttrafficpolicies.gateway.envoyproxy.io",
        "envoyextensionpolicies.gateway.envoyproxy.io",
        "envoypatchpolicies.gateway.envoyproxy.io",
        "httplocalratelimitpolicies.policy.linkerd.io",
        "oidcpolicies.extensions.kuadrant.io",
        "planpolicies.extensions.kuadrant.io",
        "securitypolicies.gateway.envoyproxy.io",
        "telemetrypolicies.extensions.kuadrant.io",
        "threatpolicies.extensions.kuadrant.io",
    ]
    direct_with_default = sorted(f.object.name for f in result.findings if f.rule == "PL504")  # type: ignore[union-attr]
    assert direct_with_default == [
        "gcpbackendpolicies.networking.gke.io",
        "gcpgatewaypolicies.networking.gke.io",
        "gcptrafficdistributionpolicies.networking.gke.io",
        "healthcheckpolicies.networking.gke.io",
    ]
    assert {f.rule for f in result.findings} == {"PL501", "PL504"}


def test_the_users_own_policy_crd_still_gets_the_advice() -> None:
    # The same unlabelled shape under a group the user owns.
    assert rules(crd()) == ["PL501"]


def crd(labels: str = "{}", props: str = "{targetRefs: {type: array}}") -> str:
    """The ColorPolicy CRD with these labels and `spec` properties (flow style)."""
    return first(crd_document("ColorPolicy", f"            properties: {props}\n", labels=labels))


def rules(text: str) -> list[str]:
    result = lint_text(text)
    assert not only(result, INTERNAL_ERROR)
    return [f.rule for f in result.findings if f.rule.startswith("PL5") or f.rule == "PL109"]


@pytest.mark.parametrize(
    ("labels", "expected"),
    [
        ("{gateway.networking.k8s.io/policy: Direct}", []),
        ("{gateway.networking.k8s.io/policy: INHERITED}", []),
        ("{gateway.networking.k8s.io/policy: 'True'}", ["PL503"]),
        ("{gateway.networking.k8s.io/policy: 'yes'}", ["PL502"]),
        ("{gateway.networking.k8s.io/policy: ''}", ["PL502"]),
        ("{gateway.networking.k8s.io/policy-attachment: ''}", ["PL501", "PL503"]),
        ("{}", ["PL501"]),
    ],
)
def test_policy_label_values(labels: str, expected: list[str]) -> None:
    assert sorted(rules(crd(labels))) == expected


def test_a_labelled_crd_without_the_policy_suffix_is_a_policy_crd() -> None:
    text = (
        crd("{gateway.networking.k8s.io/policy: direct}")
        .replace("ColorPolicy", "Color")
        .replace("plural: colorpolicies", "plural: colors")
    )
    assert rules(text) == ["PL109", "PL109"]


def test_an_unlabelled_crd_is_only_a_policy_crd_with_the_suffix_and_target_fields() -> None:
    assert rules(crd(props="{color: {type: string}}")) == []
    assert rules(crd().replace("ColorPolicy", "Color")) == []


def test_direct_label_on_inherited_shapes() -> None:
    direct = "{gateway.networking.k8s.io/policy: direct}"
    assert rules(crd(direct, "{targetRefs: {type: array}, defaults: {type: object}}")) == ["PL504"]
    assert rules(crd(direct, "{targetRef: {type: object}, override: {type: object}}")) == ["PL504"]
    one_level = "{targetRef: {type: object, properties: {kind: {type: string, enum: [HTTPRoute, GRPCRoute]}}}}"
    assert rules(crd(direct, one_level)) == []
    two_levels = "{targetRef: {type: object, properties: {kind: {type: string, enum: [Gateway, HTTPRoute]}}}}"
    [finding] = only(lint_text(crd(direct, two_levels)), "PL504")
    assert "2 levels (Gateway, HTTPRoute)" in finding.message


def test_missing_label_suggests_inherited_for_inherited_shapes() -> None:
    [finding] = only(lint_text(crd(props="{targetRefs: {type: array}, overrides: {type: object}}")), "PL501")
    assert "gateway.networking.k8s.io/policy: inherited" in finding.message


@pytest.mark.parametrize(
    "body",
    [
        "metadata: {name: x, labels: [a]}\nspec: 3\n",
        "metadata: {name: x, labels: {a: 1, 2: b}, annotations: {c: [d]}}\nspec: {versions: 5, names: []}\n",
        "metadata: {name: x}\nspec: {versions: [1, {schema: []}, {schema: {openAPIV3Schema: {properties: {spec: {properties: [1]}}}}}]}\n",
        "metadata: {name: x, labels: {gateway.networking.k8s.io/policy: direct}}\nspec: {names: {kind: 3, plural: {}}}\n",
    ],
)
def test_hostile_crds_never_raise(body: str) -> None:
    text = "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\n" + body
    assert not only(lint_text(text), INTERNAL_ERROR)


@pytest.mark.parametrize(
    "selector",
    [
        "[1, 2]",
        "{matchLabels: [a], matchExpressions: {a: b}}",
        "{matchLabels: {1: 2, a: null}, matchExpressions: [1, {key: 5, operator: [In]}, {operator: In, values: x}]}",
    ],
)
def test_hostile_selectors_never_raise(selector: str) -> None:
    text = (
        "apiVersion: gateway.networking.k8s.io/v1\nkind: Gateway\nmetadata: {name: web, namespace: app}\n"
        f"spec:\n  listeners: [{{name: http, allowedRoutes: {{namespaces: {{from: Selector, selector: {selector}}}}}}}, 7]\n"
        "---\napiVersion: gateway.envoyproxy.io/v1alpha1\nkind: BackendTrafficPolicy\nmetadata: {name: b, namespace: app}\n"
        f"spec:\n  targetSelectors: [{{kind: HTTPRoute, namespaces: {{selector: {selector}}}}}, {selector}, 3]\n"
    )
    assert not only(lint_text(text), INTERNAL_ERROR)


def test_selector_requirements() -> None:
    text = (
        "apiVersion: example.com/v1\nkind: ColorPolicy\nmetadata: {name: c, namespace: app}\nspec:\n  targetRefs:\n"
        "  - group: gateway.networking.k8s.io\n    kind: Gateway\n    selector:\n      matchExpressions:\n"
        "      - {key: env, operator: In, values: [prod, 'bad value']}\n"
        "      - {key: env}\n"
        "      - {key: env, operator: Matches, values: [x]}\n"
        "      - {key: env, operator: NotIn, values: prod}\n"
        "      - {key: Bad/Key, operator: DoesNotExist}\n"
        "      matchLabels: {tier: 3}\n"
    )
    found = [(f.path, f.message) for f in only(lint_text(text), "PL506")]
    base = "spec.targetRefs[0].selector"
    assert [p for p, _ in found] == [
        f"{base}.matchExpressions[0].values[1]",
        f"{base}.matchExpressions[1]",
        f"{base}.matchExpressions[2].operator",
        f"{base}.matchExpressions[3].values",
        f"{base}.matchExpressions[4].key",
        f"{base}.matchLabels.tier",
    ]
    assert "use one of In, NotIn, Exists, DoesNotExist" in found[2][1]
    assert "quote it" in found[5][1]


def test_policy_affected_marks_on_any_object() -> None:
    text = (
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ca\n  namespace: app\n"
        "  labels: {example.com/TimeoutPolicyAffected: 'true', example.com/affected: 'true'}\n"
        "  annotations: {PolicyAffected: 'true'}\n"
    )
    assert [f.path for f in only(lint_text(text), "PL505")] == [
        'metadata.labels["example.com/TimeoutPolicyAffected"]',
        "metadata.annotations.PolicyAffected",
    ]


GATEWAY_WITH_SELECTORS = """\
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw@N@, namespace: infra}
spec:
  gatewayClassName: eg
  listeners:
""" + "".join(
    f"""\
  - name: l{k}
    protocol: HTTP
    port: {8000 + k}
    allowedRoutes:
      namespaces:
        from: Selector
        selector:
          matchLabels: {{"bad key!": team-a}}
          matchExpressions: [{{key: tier, operator: in, values: [web]}}]
"""
    for k in range(3)
)


def test_a_selector_repeated_across_listeners_is_checked_once_and_reported_on_each(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every listener of every Gateway carries one of a few selectors: PL506 checks each distinct
    selector once (`labels._SELECTORS`) and reports its problems at every listener that has it."""
    from policylint.rules import labels

    monkeypatch.setattr(labels, "_SELECTORS", {}, raising=False)
    checked: list[str] = []
    real = labels.qualified_name_problem

    def counted(key: str) -> str | None:
        checked.append(key)
        return real(key)

    monkeypatch.setattr(labels, "qualified_name_problem", counted)
    text = "---\n".join(GATEWAY_WITH_SELECTORS.replace("@N@", str(n)) for n in range(2))
    found = only(lint_text(text, selection=select("PL506")), "PL506")
    at = "spec.listeners[{k}].allowedRoutes.namespaces.selector"
    assert [(f.object.name, f.path, f.line) for f in found] == [
        (f"gw{n}", path, line)
        for n in range(2)
        for k in range(3)
        for path, line in [
            # A document of 33 lines and its `---`; a listener of 9, its selector 7 lines down.
            (at.format(k=k) + '.matchLabels["bad key!"]', 34 * n + 14 + 9 * k),
            (at.format(k=k) + ".matchExpressions[0].operator", 34 * n + 15 + 9 * k),
        ]
    ]
    assert found[0].message.startswith("matchLabels key 'bad key!' is invalid")
    assert found[1].message.startswith("matchExpressions operator 'in' is invalid: write 'In'")
    # The selector's two keys, once; the metadata's own keys are checked apart (their table).
    assert checked.count("bad key!") == 1
    assert checked.count("tier") == 1


def test_a_selector_too_large_for_a_key_is_checked_where_it_stands(monkeypatch: pytest.MonkeyPatch) -> None:
    """The memo keys a selector by its repr only while that is small: a value shared many times
    over (as YAML aliases share it) is counted as its repr would write it out, and such a selector
    is checked without being kept (its repr could take more memory than there is)."""
    from policylint.rules import labels

    monkeypatch.setattr(labels, "_SELECTORS", {}, raising=False)
    shared = ["A" * 100] * 10
    assert labels._small({"matchLabels": {"team": "x"}}, [labels._KEY_BUDGET])
    assert not labels._small({"matchLabels": {"team": [shared] * 10}}, [labels._KEY_BUDGET])
    big = "b" * (labels._KEY_BUDGET + 1)
    text = GATEWAY_WITH_SELECTORS.replace("@N@", "0").replace('"bad key!": team-a', f'"bad key!": {big}')
    found = only(lint_text(text, selection=select("PL506")), "PL506")
    assert {f.path.rsplit(".", 1)[-1] for f in found} == {'matchLabels["bad key!"]', "operator"}
    assert len(found) == 3 * 3  # each listener: the key, the value (over 63 characters), the operator
    assert labels._SELECTORS == {}
