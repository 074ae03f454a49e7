"""Built-in policy profiles (policylint/profiles/builtin/*.yaml): valid, true to their CRDs, and exercised.

Each profiled kind is checked against the upstream CRD it names in `crd:`
(vendored under tests/data/crds/, provenance in SOURCES.md there), and has a
fixture directory tests/profiles/<project>-<kind>/ whose `valid.yaml` — a
realistic policy of that kind plus the objects it targets — lints clean.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from policylint.cli import cli
from policylint.findings import Severity
from policylint.k8s.schemas import newest_release_dirs, vendor_releases
from policylint.profiles.crd import crd_facts
from policylint.profiles.registry import (
    ORIGIN_BUILTIN,
    ORIGIN_PROFILE,
    PolicyProfile,
    ProfileError,
    builtin_profiles,
    load_profile_file,
    profile_from_dict,
    validate_profile_document,
)
from policylint.rules.schema import GATEWAY_API_KINDS
from policylint.vocabulary import Accepted
from tests.lintutil import ROOT, fixture_dirs, lint_paths, lint_text

PROFILES = ROOT / "policylint" / "profiles" / "builtin"
TESTS = Path(__file__).resolve().parents[1]
CRDS = TESTS / "data" / "crds"
FIXTURES = TESTS / "profiles"
VALID_REFERENCE = TESTS / "data" / "valid-reference"

PROFILE_FILES = sorted(PROFILES.glob("*.yaml"))


def _load(path: Path) -> Any:
    with open(path, encoding="utf-8") as fh:
        return yaml.load(fh, Loader=yaml.CSafeLoader)


def _entries() -> list[tuple[str, dict[str, Any]]]:
    out = []
    for path in PROFILE_FILES:
        raw = _load(path)
        out.extend((raw["project"], entry) for entry in raw.get("policies", ()))
    return out


ENTRIES = _entries()
IDS = [f"{project}/{entry['kind']}" for project, entry in ENTRIES]


def _profile(project: str, entry: dict[str, Any]) -> PolicyProfile:
    return profile_from_dict(entry, project=project, origin=ORIGIN_BUILTIN, source="")


def _fixture_dir(project: str, kind: str) -> Path:
    return FIXTURES / f"{project}-{kind.lower()}"


def _problems(findings: list[Any]) -> list[tuple[str, str, int, str]]:
    return [(f.rule, f.file, f.line, f.message) for f in findings if f.severity >= Severity.WARNING]


# -- the files themselves ----------------------------------------------------------------------


def test_there_is_one_profile_file_per_project() -> None:
    assert [p.stem for p in PROFILE_FILES] == [
        "cert-manager",
        "envoy-ai-gateway",
        "envoy-gateway",
        "external-secrets",
        "gateway-api",
        "gke",
        "istio",
        "kuadrant",
        "kubernetes",
        "linkerd",
        "nginx-gateway-fabric",
        "vault-secrets-operator",
    ]


@pytest.mark.parametrize("path", PROFILE_FILES, ids=[p.stem for p in PROFILE_FILES])
def test_profile_file_validates_and_names_its_source(path: Path) -> None:
    raw = _load(path)
    validate_profile_document(raw, str(path))
    assert raw["project"] == path.stem
    if "policies" not in raw:
        # Producers only (docs/semantics.md#objects-made-in-the-cluster): no CRD is vendored for
        # them; the source names the upstream repositories, files and licence they come from
        # (Vault Secrets Operator's is BUSL-1.1: its profile states facts of its API, no text).
        assert raw["producers"]
        assert "github.com/" in raw["source"] and re.search(r"\b(Apache-2\.0|BUSL-1\.1)\b", raw["source"])
        assert all(p["docs"].startswith("https://") for p in raw["producers"])
        return
    # source: upstream repository, tag, the commit recorded in SOURCES.md, directory, licence.
    sources = (CRDS / "SOURCES.md").read_text(encoding="utf-8")
    row = re.search(rf"^\| `{re.escape(path.stem)}/([^/]+)/` \| (\S+) \| (\S+) \| ([0-9a-f]{{40}}) \|", sources, re.M)
    assert row, f"no SOURCES.md row for {path.stem}"
    version, repo, tag, commit = row.groups()
    # A release tag; or, for a repository whose tags lag its CRDs (GKE), a branch and its commit.
    assert raw["version"] == version
    assert version == tag or version == f"{tag}-{commit[:7]}"
    for part in (repo, tag, commit, "Apache-2.0"):
        assert part in raw["source"]
    for entry in raw.get("policies", ()):
        assert entry["crd"].startswith(f"{path.stem}/{version}/"), entry["kind"]


def test_builtin_profiles_load_and_are_unique() -> None:
    profiles = builtin_profiles()
    assert len(profiles) == len(ENTRIES) == 32
    assert len({p.gk for p in profiles}) == len(profiles)
    assert all(p.origin == ORIGIN_BUILTIN for p in profiles)


def test_every_vendored_policy_crd_is_profiled() -> None:
    vendored = set()
    others = set()
    # Istio's RequestAuthentication and WasmPlugin attach through targetRefs, though neither
    # their names nor a label say they are policies (docs/semantics.md#istio).
    attaching = {("security.istio.io", "RequestAuthentication"), ("extensions.istio.io", "WasmPlugin")}
    for path in CRDS.rglob("*.yaml"):
        parts = path.relative_to(CRDS).parts
        if "/".join(parts[:2]) not in newest_release_dirs(CRDS):
            continue  # older releases (Gateway API's and the vendors'), bundled for the schema rules only
        facts = crd_facts(_load(path))
        if facts.is_policy or (facts.group, facts.kind) in attaching:
            vendored.add((facts.group, facts.kind))
        else:
            others.add(facts.kind)
    assert vendored == {p.gk for p in builtin_profiles()}
    assert others == GATEWAY_API_KINDS  # vendored for the schema rules (tests/data/crds/SOURCES.md)


# -- each profile is true to its CRD -------------------------------------------------------------


@pytest.mark.parametrize(("project", "entry"), ENTRIES, ids=IDS)
def test_profile_matches_its_crd(project: str, entry: dict[str, Any]) -> None:
    crd_path = CRDS / entry["crd"]
    assert crd_path.is_file(), f"{entry['crd']} is not vendored under tests/data/crds/"
    facts = crd_facts(_load(crd_path))
    profile = _profile(project, entry)
    t = profile.targets

    assert (profile.group, profile.kind, profile.plural, profile.scope) == (facts.group, facts.kind, facts.plural, facts.scope)
    assert set(profile.versions) >= set(facts.served_versions)
    assert (t.single, t.list, t.selectors) == (facts.single_field, facts.list_field, facts.selectors_field)
    assert t.required is facts.required
    assert t.exclusive is facts.exclusive
    assert t.section_name is facts.section_name
    assert t.namespace is facts.namespace
    if t.list:
        assert t.max_items == facts.max_items
        assert t.unique is facts.unique
    if t.kinds_enforced:
        assert set(t.kinds) == set(facts.target_kinds), "enforced kinds must be exactly the CEL-derived ones"
    else:
        assert not facts.kinds_restricted, "the CRD restricts kinds: the profile should enforce them"
        assert t.kinds, "unenforced profiles document the supported kinds"
    if facts.label_class is not None:
        assert profile.policy_class == facts.label_class
    else:
        assert entry.get("notes"), "the class of an unlabelled kind is a judgement call: explain it in notes"
    # Boilerplate fields named by the merge spec exist in the CRD.
    for fname in (profile.merge.defaults, profile.merge.overrides):
        if fname:
            assert fname in facts.spec_fields
    for fname in profile.merge.non_proper_fields:
        assert fname in facts.spec_fields
    if profile.merge.strategy_field:
        assert set(profile.merge.strategies) == set(facts.strategy_values)
    assert profile.boilerplate == facts.boilerplate


@pytest.mark.parametrize(("project", "entry"), ENTRIES, ids=IDS)
def test_merge_defaults_follow_the_class(project: str, entry: dict[str, Any]) -> None:
    profile = _profile(project, entry)
    if profile.policy_class == "Direct":
        # GEP-713: Direct kinds use None; EnvoyPatchPolicy's priority ordering is the one custom case.
        assert profile.merge.default in ("none", "custom")
        assert profile.merge.default == "none" or profile.merge.custom
    else:
        assert profile.merge.default != "none"


# -- fixtures ---------------------------------------------------------------------------------------


def test_every_fixture_directory_belongs_to_a_profile() -> None:
    expected = {_fixture_dir(project, entry["kind"]).name for project, entry in ENTRIES}
    present = {p.name for p in fixture_dirs(FIXTURES)}
    assert sorted(present - expected) == [], "orphaned fixture directories"
    assert sorted(expected - present) == [], "profiles without a fixture directory"


# The valid inputs cover every profiled kind, XBackendTrafficPolicy among them, whose CRD only
# Gateway API's experimental channel has: they are valid in a cluster that runs that channel
# (PL705 api-version-not-served otherwise).
VALID_CHANNEL = "experimental"
# ... and in a cluster that runs each vendor's newest bundled release, the one its profile
# describes: a kind a vendor added in it (NGINX Gateway Fabric's WAFPolicy in v2.6, Kuadrant's
# ThreatPolicy in v1.5) is served only from that release (a PL705 warning naming it otherwise).
VALID_IMPLEMENTATIONS = [f"{project}@{releases[-1]}" for project, releases in vendor_releases().items()]


@pytest.mark.parametrize(("project", "entry"), ENTRIES, ids=IDS)
def test_valid_fixture_lints_clean(project: str, entry: dict[str, Any]) -> None:
    valid = _fixture_dir(project, entry["kind"]) / "valid.yaml"
    assert valid.is_file()
    result = lint_paths([valid], channel=VALID_CHANNEL, implementations=VALID_IMPLEMENTATIONS)
    assert not result.internal_error
    assert _problems(result.findings) == []
    policies = [p for p in result.project.resolution.policies() if (p.obj.group, p.obj.kind) == (entry["group"], entry["kind"])]
    assert policies, f"valid.yaml has no {entry['kind']}"
    for policy in policies:
        assert policy.profile.origin == ORIGIN_BUILTIN and policy.profile.project == project
        assert policy.refs or policy.profile.targets.selectors
        for resolution in result.project.resolution.resolutions(policy):
            assert resolution.status == Accepted.ACCEPTED, (resolution.ref.display(), resolution.detail, resolution.message)
            assert resolution.target is not None  # a real object of the input, not a virtual kind


def test_valid_reference_lints_clean() -> None:
    result = lint_paths([VALID_REFERENCE], channel=VALID_CHANNEL, implementations=VALID_IMPLEMENTATIONS)
    assert not result.internal_error
    assert _problems(result.findings) == []


def test_valid_reference_has_a_policy_of_every_profiled_kind_and_all_attach() -> None:
    result = lint_paths([VALID_REFERENCE])
    seen = {(p.obj.group, p.obj.kind) for p in result.project.resolution.policies()}
    assert seen >= {p.gk for p in builtin_profiles()}
    for policy in result.project.resolution.policies():
        assert policy.profile.origin == ORIGIN_BUILTIN, policy.obj.key
        for resolution in result.project.resolution.resolutions(policy):
            assert resolution.status == Accepted.ACCEPTED, (str(policy.obj.key), resolution.ref.display(), resolution.detail)
            assert resolution.target is not None
            if resolution.ref.section_name:
                assert resolution.section is not None and resolution.section.name == resolution.ref.section_name


def test_ngf_core_group_alias_resolves_to_the_service() -> None:
    # UpstreamSettingsPolicy CEL: "TargetRefs Group must be core" accepts '' or 'core' (docs/semantics.md#nginx-gateway-fabric);
    # the profile lists {group: core, kind: Service}, which makes `core` an alias of "" for Service.
    text = (_fixture_dir("nginx-gateway-fabric", "UpstreamSettingsPolicy") / "valid.yaml").read_text(encoding="utf-8")
    head, sep, tail = text.rpartition('- group: ""')
    assert sep
    result = lint_text(head + "- group: core" + tail)
    assert _problems(result.findings) == []


# -- user profiles (--profile) ---------------------------------------------------------------------

USER_PROFILE = """\
project: acme
source: in-house
policies:
  - group: gateway.networking.k8s.io
    kind: BackendTLSPolicy
    versions: [v1]
    class: Direct
    boilerplate: gep713
    targets:
      list: targetRefs
      maxItems: 16
      sectionName: true
      kinds:
        - {group: "", kind: Service}
        - {group: inference.networking.k8s.io, kind: InferencePool}
      kindsEnforced: true
    merge: {default: none}
    effectiveTarget: backend
  - group: acme.example.com
    kind: ColorPolicy
    versions: [v1]
    class: Inherited
    boilerplate: gep713
    targets:
      list: targetRefs
      kinds: [{group: gateway.networking.k8s.io, kind: Gateway}]
    merge: {default: atomic-defaults}
    effectiveTarget: listener
"""

BTLS = """\
apiVersion: v1
kind: Service
metadata: {name: billing, namespace: app}
spec:
  ports: [{name: https, port: 443}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: BackendTLSPolicy
metadata: {name: billing-tls, namespace: app}
spec:
  targetRefs:
    - {group: "", kind: Service, name: billing}
  validation:
    wellKnownCACertificates: System
    hostname: billing.example.com
"""


def test_user_profile_overrides_builtin(tmp_path: Path) -> None:
    path = tmp_path / "acme.yaml"
    path.write_text(USER_PROFILE)
    loaded = load_profile_file(path, origin=ORIGIN_PROFILE)
    assert [p.kind for p in loaded] == ["BackendTLSPolicy", "ColorPolicy"]

    builtin = lint_text(BTLS)
    [policy] = builtin.project.resolution.policies()
    assert policy.profile.origin == ORIGIN_BUILTIN and not policy.profile.targets.kinds_enforced

    result = lint_text(BTLS, profile_paths=[str(path)])
    [policy] = result.project.resolution.policies()
    assert policy.profile.origin == ORIGIN_PROFILE
    assert policy.profile.project == "acme"
    assert policy.profile.targets.kinds_enforced
    assert result.project.resolution.profiles.get("acme.example.com", "ColorPolicy") is not None
    # built-ins the user file does not mention are still there
    assert result.project.resolution.profiles.get("kuadrant.io", "RateLimitPolicy").origin == ORIGIN_BUILTIN  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("text", "match"),
    [
        ("project: acme\n", "policies"),
        (USER_PROFILE.replace("class: Direct", "class: Sideways"), "class"),
        (USER_PROFILE.replace("effectiveTarget: backend", "effectiveTarget: somewhere"), "effectiveTarget"),
        (USER_PROFILE.replace("maxItems: 16", "maxItems: 0"), "maxItems"),
        (USER_PROFILE.replace("      list: targetRefs\n      maxItems", "      maxItems"), "targets"),
        ("project: acme\npolicies: [\n", "cannot parse"),
        ("- just\n- a list\n", "top level"),
    ],
)
def test_invalid_profile_raises_profile_error_with_the_path(tmp_path: Path, text: str, match: str) -> None:
    path = tmp_path / "broken-profile.yaml"
    path.write_text(text)
    with pytest.raises(ProfileError) as excinfo:
        lint_text(BTLS, profile_paths=[str(path)])
    assert str(path) in str(excinfo.value)
    assert match in str(excinfo.value)


def test_missing_profile_file_raises_profile_error(tmp_path: Path) -> None:
    path = tmp_path / "nope.yaml"
    with pytest.raises(ProfileError, match=re.escape(str(path))):
        lint_text(BTLS, profile_paths=[str(path)])


# -- `policylint profiles` -----------------------------------------------------------------------------


def test_cli_profiles_lists_every_builtin_kind() -> None:
    result = CliRunner().invoke(cli, ["profiles"])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    for profile in builtin_profiles():
        assert any(line.startswith(f"{profile.group}/{profile.kind} ") and f"({profile.project})" in line for line in lines), (
            profile.name
        )
    # A header row, then one line per kind.
    assert lines[0].split() == [
        "KIND",
        "CLASS",
        "BOILERPLATE",
        "MERGE",
        "[TARGET",
        "FIELDS]",
        "->",
        "TARGET",
        "KINDS",
        "(PROJECT)",
    ]
    assert len(lines) == 1 + len(builtin_profiles())


def test_cli_profiles_columns_line_up() -> None:
    # Each column starts at the same place on every line, the header's included, however long
    # the group and kind.
    lines = CliRunner().invoke(cli, ["profiles"]).output.splitlines()
    starts = {tuple(m.start() for m in re.finditer(r"(?<=  )\S", line))[:4] for line in lines}
    assert len(starts) == 1, starts


def test_cli_profiles_with_user_profile(tmp_path: Path) -> None:
    path = tmp_path / "acme.yaml"
    path.write_text(USER_PROFILE)
    result = CliRunner().invoke(cli, ["profiles", "--profile", str(path)])
    assert result.exit_code == 0, result.output
    assert any(line.startswith("acme.example.com/ColorPolicy ") for line in result.output.splitlines())
    btls = [line for line in result.output.splitlines() if line.startswith("gateway.networking.k8s.io/BackendTLSPolicy ")]
    assert len(btls) == 1 and "(acme)" in btls[0]


def test_cli_profiles_rejects_an_invalid_profile(tmp_path: Path) -> None:
    path = tmp_path / "broken.yaml"
    path.write_text("project: Not Valid\npolicies: []\n")
    result = CliRunner().invoke(cli, ["profiles", "--profile", str(path)])
    assert result.exit_code == 2
    assert str(path) in result.output
