"""PL1xx policy boilerplate: profile-driven behaviour, severities, hostile shapes.

The fixture directories (tests/rules/PL1*) pin positions; these tests pin what
the fixtures cannot show compactly: that the rules read field names and limits
from the profile, and that no input shape makes a rule raise.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from policylint.findings import Severity
from policylint.rules.engine import INTERNAL_ERROR
from tests.lintutil import lint_text, only

# An in-house kind whose profile renames every field, so a rule that hard-codes
# `targetRefs`, `defaults` or `strategy` would miss it.
PROFILE = """\
project: acme
policies:
  - group: acme.example.com
    kind: ShieldPolicy
    versions: [v1]
    class: Inherited
    boilerplate: gep713
    targets: {single: attachTo, list: attachments, maxItems: 2, unique: true}
    merge:
      defaults: baseline
      overrides: enforced
      strategyField: mode
      strategies: {keep: atomic, blend: patch}
      implicitDefaults: true
      nonProperFields: [note]
    effectiveTarget: route
  - group: acme.example.com
    kind: LegacyPolicy
    versions: [v1]
    class: Inherited
    boilerplate: policy-attachment
    targets: {single: targetRef}
    merge: {defaults: default, overrides: override}
    effectiveTarget: route
"""

GATEWAY = """\
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: example}
spec: {controllerName: example.com/gateway-controller}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: web, namespace: app}
spec:
  gatewayClassName: example
  listeners: [{name: http, protocol: HTTP, port: 80}]
"""

WEB = "{group: gateway.networking.k8s.io, kind: Gateway, name: web}"


@pytest.fixture
def profile(tmp_path: Path) -> str:
    path = tmp_path / "acme.yaml"
    path.write_text(PROFILE)
    return str(path)


def shield(spec: str, name: str = "p") -> str:
    return f"---\napiVersion: acme.example.com/v1\nkind: ShieldPolicy\nmetadata: {{name: {name}, namespace: app}}\nspec:\n{spec}"


def paths(text: str, rule: str, **options: object) -> list[str]:
    result = lint_text(text, **options)  # type: ignore[arg-type]
    assert not only(result, INTERNAL_ERROR)
    return [f.path for f in only(result, rule)]


def test_target_rules_read_field_names_and_limits_from_the_profile(profile: str) -> None:
    text = GATEWAY + shield(f"  attachTo: {WEB}\n  attachments: [{WEB}, {WEB}, {WEB}]\n  level: 1\n")
    assert paths(text, "PL102", profile_paths=[profile]) == ["spec.attachTo"]
    assert paths(text, "PL103", profile_paths=[profile]) == ["spec.attachments[2]"]
    assert paths(text, "PL104", profile_paths=[profile]) == ["spec.attachments[1]", "spec.attachments[2]"]
    empty = GATEWAY + shield("  attachments: []\n  level: 1\n")
    assert paths(empty, "PL101", profile_paths=[profile]) == ["spec.attachments"]


def test_merge_rules_read_block_and_strategy_names_from_the_profile(profile: str) -> None:
    # `note` is not spec proper (nonProperFields), `level` is: implicit defaults next to `enforced`.
    text = GATEWAY + shield(f"  attachTo: {WEB}\n  note: hi\n  level: 1\n  enforced: {{mode: merge, level: 2}}\n")
    assert paths(text, "PL107", profile_paths=[profile]) == ["spec.enforced"]
    assert paths(text, "PL108", profile_paths=[profile]) == ["spec.enforced.mode"]
    clean = GATEWAY + shield(f"  attachTo: {WEB}\n  note: hi\n  enforced: {{mode: blend, level: 2}}\n")
    assert lint_text(clean, profile_paths=[profile]).findings == []


def test_three_strategies_are_one_finding_with_the_others_related(profile: str) -> None:
    text = GATEWAY + shield(f"  attachTo: {WEB}\n  level: 1\n  baseline: {{level: 2}}\n  enforced: {{level: 3}}\n")
    [finding] = only(lint_text(text, profile_paths=[profile]), "PL107")
    assert finding.path == "spec.enforced"
    assert "3 merge strategies" in finding.message and "top-level level" in finding.message
    assert len(finding.related) == 2


def test_policy_attachment_style_may_carry_default_and_override(profile: str) -> None:
    # The policy-attachment style legitimately holds both blocks in one object
    # (docs/semantics.md#two-boilerplate-styles; acceptance scenarios S09, S10).
    text = GATEWAY + (
        "---\napiVersion: acme.example.com/v1\nkind: LegacyPolicy\nmetadata: {name: p, namespace: app}\n"
        f"spec:\n  targetRef: {WEB}\n  default: {{a: 1}}\n  override: {{b: 2}}\n"
    )
    result = lint_text(text, profile_paths=[profile])
    assert result.findings == []


def test_duplicate_severity_follows_the_profile() -> None:
    btls = (
        "apiVersion: gateway.networking.k8s.io/v1\nkind: BackendTLSPolicy\nmetadata: {name: t, namespace: app}\n"
        "spec:\n  targetRefs: [{group: '', kind: Service, name: s}, {group: '', kind: Service, name: s}]\n"
        "  validation: {wellKnownCACertificates: System, hostname: s.example.com}\n"
    )
    btp = (
        "---\napiVersion: gateway.envoyproxy.io/v1alpha1\nkind: BackendTrafficPolicy\nmetadata: {name: b, namespace: app}\n"
        f"spec:\n  targetRefs: [{WEB}, {WEB}]\n"
    )
    found = {f.object.kind: f.severity for f in only(lint_text(btls + btp), "PL104")}  # type: ignore[union-attr]
    assert found == {"BackendTLSPolicy": Severity.ERROR, "BackendTrafficPolicy": Severity.WARNING}


def test_sections_and_namespaces_distinguish_targets() -> None:
    text = (
        "apiVersion: example.com/v1\nkind: ColorPolicy\nmetadata: {name: c, namespace: app}\nspec:\n  targetRefs:\n"
        f"  - {WEB}\n"
        "  - {group: gateway.networking.k8s.io, kind: Gateway, name: web, sectionName: http}\n"
        "  - {group: gateway.networking.k8s.io, kind: Gateway, name: web, namespace: other}\n"
        "  - {group: gateway.networking.k8s.io, kind: Gateway, name: web, namespace: app}\n"
    )
    assert paths(text, "PL104") == ["spec.targetRefs[3]"]


@pytest.mark.parametrize(
    "spec",
    [
        "  targetRefs: 7\n",
        "  targetRefs: [1, null, [x]]\n",
        "  targetRef: [a]\n  targetRefs: {a: b}\n",
        "  targetRefs: [{group: 1, kind: [], name: {}}]\n  defaults: [1]\n  overrides: 3\n",
        "  targetRef: {group: gateway.networking.k8s.io, kind: Gateway, name: web}\n  defaults: {strategy: {a: 1}}\n",
        "  targetRef: {group: gateway.networking.k8s.io, kind: Gateway, name: web}\n  overrides: {strategy: [merge]}\n",
        "  targetRef: {group: gateway.networking.k8s.io, kind: Gateway, name: web}\n  1: 2\n  defaults: {}\n",
    ],
)
def test_hostile_shapes_never_raise(spec: str) -> None:
    text = f"apiVersion: kuadrant.io/v1\nkind: RateLimitPolicy\nmetadata: {{name: p, namespace: app}}\nspec:\n{spec}status: [x]\n"
    result = lint_text(text)
    assert not only(result, INTERNAL_ERROR)


def test_unhashable_strategy_values_are_reported() -> None:
    text = (
        "apiVersion: kuadrant.io/v1\nkind: RateLimitPolicy\nmetadata: {name: p, namespace: app}\n"
        f"spec:\n  targetRef: {WEB}\n  defaults: {{strategy: {{a: 1}}}}\n"
    )
    assert paths(text, "PL108") == ["spec.defaults.strategy"]


def test_spec_problems_are_reported_once() -> None:
    # No spec: PL105 only; the target and merge rules skip the object.
    text = "apiVersion: kuadrant.io/v1\nkind: RateLimitPolicy\nmetadata: {name: p, namespace: app}\nspec: text\n"
    result = lint_text(text)
    assert [f.rule for f in result.findings if f.rule.startswith("PL1")] == ["PL105"]
    assert "a string, not a mapping" in only(result, "PL105")[0].message


def test_spec_missing_in_a_list_item_points_into_the_list() -> None:
    text = (
        "apiVersion: v1\nkind: List\nitems:\n"
        "- apiVersion: gateway.networking.k8s.io/v1\n  kind: BackendTLSPolicy\n  metadata: {name: t, namespace: app}\n"
    )
    [finding] = only(lint_text(text), "PL105")
    assert finding.line == 4


def test_empty_status_is_not_reported() -> None:
    base = f"apiVersion: example.com/v1\nkind: ColorPolicy\nmetadata: {{name: c, namespace: app}}\nspec:\n  targetRefs: [{WEB}]\n"
    assert paths(base + "status: {}\n", "PL110") == []
    assert paths(base + "status: {ancestors: []}\n", "PL110") == ["status"]


def test_inferred_kind_is_reported_once_per_kind_at_its_first_object_by_name() -> None:
    # By name, not by input order: the finding must not move when documents are reordered.
    doc = "apiVersion: example.com/v1\nkind: ColorPolicy\nmetadata: {{name: {name}, namespace: app}}\nspec:\n  targetRefs: [{ref}]\n"
    text = "---\n".join(doc.format(name=n, ref=WEB) for n in ("zeta", "alpha", "mid"))
    [finding] = only(lint_text(text), "PL111")
    assert finding.line == 8 and finding.object is not None and finding.object.name == "alpha"  # its `kind` line
    assert "all 3 ColorPolicy objects" in finding.message
    assert "--crd" in finding.message and "--profile" in finding.message


# The BackendTLSPolicy of Gateway API v1.0 (GEP-1897 at v1.0.0: v1alpha2, a single `targetRef`,
# `tls.caCertRefs`), applied against the v1 CRD that serves only `targetRefs`.
BTLS_V1ALPHA2 = """\
apiVersion: gateway.networking.k8s.io/v1alpha2
kind: BackendTLSPolicy
metadata: {name: tls, namespace: app}
spec:
  targetRef:
    group: ""
    kind: Service
    name: web
  tls:
    caCertRefs: [{group: "", kind: ConfigMap, name: ca}]
    hostname: web.example.com
"""


def test_an_old_api_version_is_explained_as_such() -> None:
    # Before: "attaches to nothing: it has no spec.targetRefs", at spec. After: the same finding,
    # at the old field, saying the version is not served and which field replaced it.
    (finding,) = only(lint_text(BTLS_V1ALPHA2), "PL101")
    assert finding.path == "spec.targetRef" and finding.line == 5
    assert "gateway.networking.k8s.io/v1alpha2 is not a version the BackendTLSPolicy CRD serves (v1)" in finding.message
    assert finding.message.endswith("whose target field is spec.targetRefs, not spec.targetRef")
