"""Autofix (`check --fix`, `--unsafe-fixes`, `--diff-fix`, `--fix-only`; policylint/autofix.py).

For every fixable rule, its doc's Bad example is fixed and then lints clean for that rule, and a
second `--fix` changes nothing. Edits change only the nodes they fix: comments, quoting, flow
style elsewhere, CRLF line ends and a byte order mark survive byte for byte (checked line by
line). `--diff-fix` writes nothing and its diff applies with `patch`. Suppressed findings are
never fixed, standard input is refused, and a file changed between read and write is left alone.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from policylint import autofix
from policylint.cli import cli
from policylint.rules import REGISTRY
from policylint.rules.docs import doc_path, parse_doc
from tests.lintutil import ROOT

FIXABLE = [r for r in REGISTRY if r.fixable is not None]


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, ["check", "--no-cache", *args])
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result.exit_code, result.stdout, result.stderr


def rules_reported(path: Path) -> list[str]:
    _, out, _ = run("--format", "json", str(path))
    return [f["rule"] for f in json.loads(out)["findings"]]


def test_the_fixable_rules() -> None:
    assert {r.id: r.fixable for r in FIXABLE} == {
        "PL104": "safe",
        "PL201": "unsafe",
        "PL110": "safe",
        "PL203": "safe",
        "PL301": "unsafe",
        "PL401": "unsafe",
        "PL402": "unsafe",
        "PL501": "unsafe",
        "PL503": "safe",
        "PL505": "safe",
    }


@pytest.mark.parametrize("rule", FIXABLE, ids=lambda r: r.id)
def test_every_fixable_rule_fixes_its_bad_example(rule: type, tmp_path: Path) -> None:
    doc = parse_doc(doc_path(rule).read_text(encoding="utf-8"))
    assert f"**Fix** ({rule.fixable})" in doc.sections["Fix"]
    bad = doc.yaml_block("Bad")
    assert bad is not None
    manifest = tmp_path / "bad.yaml"
    manifest.write_text(bad, encoding="utf-8")
    assert rule.id in rules_reported(manifest)
    _, _, err = run("--fix", "--unsafe-fixes", str(manifest))
    # PL503's example has two findings: `policy: "true"` and the obsolete label beside it.
    assert f"policylint: fixed {2 if rule.id == 'PL503' else 1} finding" in err
    assert rule.id not in rules_reported(manifest)
    fixed = manifest.read_bytes()
    run("--fix", "--unsafe-fixes", str(manifest))
    assert manifest.read_bytes() == fixed  # idempotent
    good = doc.yaml_block("Good")
    assert good is not None
    if rule.id == "PL503":
        # The value keeps the original's quoting; the obsolete label is gone.
        assert '    gateway.networking.k8s.io/policy: "inherited"\n' in fixed.decode()
        assert "policy-attachment" not in fixed.decode()
    if rule.id in ("PL104", "PL505", "PL501"):
        # The Good example is the Bad one with exactly this fix (PL505's keeps another label).
        expected = good if rule.id != "PL505" else good.replace("  labels:\n    app.kubernetes.io/name: store\n", "")
        assert fixed.decode() == expected
    if rule.id == "PL203":
        # The value changes; the comment beside it stays.
        assert "  - group: gateway.networking.k8s.io   # an apiVersion, not a group\n" in fixed.decode()
    if rule.id == "PL201":
        assert "    name: billing        # did you mean Service 'billing'?" in fixed.decode()
    if rule.id == "PL301":
        assert "    sectionName: admin      # listener admn not found" in fixed.decode()


def test_unsafe_fixes_need_the_flag(tmp_path: Path) -> None:
    bad = parse_doc(doc_path(next(r for r in REGISTRY if r.id == "PL301")).read_text()).yaml_block("Bad")
    assert bad is not None
    manifest = tmp_path / "bad.yaml"
    manifest.write_text(bad)
    code, _, err = run("--fix", str(manifest))
    assert code == 1 and manifest.read_text() == bad
    assert "fixed 0 findings in 0 files; 1 fixable finding left (1 with --unsafe-fixes)" in err
    code, _, _ = run("--fix", "--unsafe-fixes", str(manifest))
    assert code == 0 and "sectionName: admin " in manifest.read_text()


STYLED = (
    "\ufeff# a comment that stays\r\n"
    "apiVersion: gateway.networking.k8s.io/v1   # trailing comment\r\n"
    "kind: BackendTLSPolicy\r\n"
    "metadata:\r\n"
    "  name: 'store-tls'\r\n"
    "  namespace: app\r\n"
    '  labels: {team: store, tier: "1"}\r\n'
    "  annotations:\r\n"
    '    gateway.envoyproxy.io/PolicyAffected: "true"   # copied from the cluster\r\n'
    "    keep: me\r\n"
    "spec:\r\n"
    "  targetRefs:\r\n"
    "    - group: gateway.networking.k8s.io/v1\r\n"
    "      kind: Service\r\n"
    "      name: store\r\n"
    "  validation: {wellKnownCACertificates: System, hostname: store.app.svc.cluster.local}\r\n"
    "status:\r\n"
    "  ancestors: []\r\n"
    "  note: stale\r\n"
    "---\r\n"
    "apiVersion: v1\r\n"
    "kind: Service\r\n"
    "metadata: {name: store, namespace: app}\r\n"
    "spec:\r\n"
    "  ports:\r\n"
    "  - {name: https, port: 443}\r\n"
)


def test_only_the_fixed_nodes_change(tmp_path: Path) -> None:
    manifest = tmp_path / "styled.yaml"
    manifest.write_bytes(STYLED.encode("utf-8"))
    _, _, err = run("--fix", str(manifest))
    assert "fixed 3 findings in 1 file" in err
    after = manifest.read_bytes().decode("utf-8")
    before_lines = STYLED.split("\r\n")
    after_lines = after.split("\r\n")
    assert after.startswith("\ufeff# a comment that stays\r\n")  # BOM and CRLF kept
    assert "\n" not in after.replace("\r\n", "")
    # Exactly: the annotation line deleted, the group's version dropped, the status stanza gone.
    removed = [line for line in before_lines if line not in after_lines]
    added = [line for line in after_lines if line not in before_lines]
    assert removed == [
        '    gateway.envoyproxy.io/PolicyAffected: "true"   # copied from the cluster',
        "    - group: gateway.networking.k8s.io/v1",
        "status:",
        "  ancestors: []",
        "  note: stale",
    ]
    assert added == ["    - group: gateway.networking.k8s.io"]


def test_diff_fix_writes_nothing_and_applies_with_patch(tmp_path: Path) -> None:
    work = tmp_path / "work"
    shutil.copytree(ROOT / "examples", work)
    before = {p: (p.read_bytes(), p.stat().st_mtime_ns) for p in work.rglob("*") if p.is_file()}
    result = subprocess.run(
        [str(Path(__import__("sys").executable)), "-m", "policylint", "check", "--no-cache", "--diff-fix", "."],
        cwd=work,
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 1
    assert result.stdout.startswith("--- a/")
    assert {p: (p.read_bytes(), p.stat().st_mtime_ns) for p in work.rglob("*") if p.is_file()} == before
    patched = tmp_path / "patched"
    shutil.copytree(ROOT / "examples", patched)
    subprocess.run(["patch", "-p1", "--quiet"], cwd=patched, input=result.stdout, text=True, check=True)
    fixed = tmp_path / "fixed"
    shutil.copytree(ROOT / "examples", fixed)
    assert run("--fix", str(fixed))[0] == 1  # what is left: the findings with no fix
    for path in fixed.rglob("*"):
        if path.is_file():
            assert path.read_bytes() == (patched / path.relative_to(fixed)).read_bytes(), path
    # The fixes in the example repository: three files, only the fixed lines.
    changed = [
        p.relative_to(fixed).as_posix()
        for p in fixed.rglob("*")
        if p.is_file() and p.read_bytes() != (ROOT / "examples" / p.relative_to(fixed)).read_bytes()
    ]
    assert sorted(changed) == ["infra/backend-traffic-policy.yaml", "team-a/backend-tls.yaml", "team-b/kuadrant-policies.yaml"]


def test_suppressed_findings_are_not_fixed(tmp_path: Path) -> None:
    text = STYLED.replace("status:\r\n", "status:  # policylint: disable=PL110 -- kept for the demo\r\n")
    manifest = tmp_path / "m.yaml"
    manifest.write_bytes(text.encode("utf-8"))
    run("--fix", "--fix-only", "PL110", str(manifest))
    assert manifest.read_bytes() == text.encode("utf-8")


def test_fix_only_fixes_those_rules(tmp_path: Path) -> None:
    manifest = tmp_path / "m.yaml"
    manifest.write_bytes(STYLED.encode("utf-8"))
    run("--fix-only", "PL203", str(manifest))
    after = manifest.read_bytes().decode("utf-8")
    assert "group: gateway.networking.k8s.io\r\n" in after
    assert "status:" in after and "PolicyAffected" in after


def test_fix_only_takes_what_select_takes(tmp_path: Path) -> None:
    # A prefix of a rule's name, written in another case, names the rule as it does for --select.
    manifest = tmp_path / "m.yaml"
    manifest.write_bytes(STYLED.encode("utf-8"))
    run("--fix-only", "TargetRef-Group", str(manifest))
    after = manifest.read_bytes().decode("utf-8")
    assert "group: gateway.networking.k8s.io\r\n" in after
    assert "status:" in after and "PolicyAffected" in after


def test_a_flow_style_field_is_left_for_a_person(tmp_path: Path) -> None:
    manifest = tmp_path / "m.yaml"
    text = (
        "apiVersion: gateway.networking.k8s.io/v1\nkind: BackendTLSPolicy\nmetadata: {name: p, namespace: app,"
        ' labels: {gateway.envoyproxy.io/PolicyAffected: "true"}}\nspec:\n  targetRefs: [{group: "", kind: Service, name: s}]\n'
        "  validation: {wellKnownCACertificates: System, hostname: s.app}\n"
    )
    manifest.write_text(text)
    _, _, err = run("--fix", str(manifest))
    assert manifest.read_text() == text
    assert "PL505 not fixed: the field is in a flow-style collection" in err


def test_standard_input_cannot_be_fixed() -> None:
    result = CliRunner().invoke(cli, ["check", "--fix", "-"], input="kind: x\n")
    assert result.exit_code == 2
    assert "--fix and --diff-fix edit files on disk" in result.stderr


def test_a_file_changed_since_it_was_read_is_not_overwritten(tmp_path: Path) -> None:
    path = tmp_path / "m.yaml"
    path.write_text("new content\n")
    assert autofix.write_atomic(str(path), b"fixed\n", b"old content\n") is False
    assert path.read_text() == "new content\n"
    path.chmod(0o640)
    assert autofix.write_atomic(str(path), b"fixed\n", b"new content\n") is True
    assert path.read_text() == "fixed\n" and (path.stat().st_mode & 0o777) == 0o640
    assert [p.name for p in tmp_path.iterdir()] == ["m.yaml"]  # no temporary file left


def test_the_docs_with_a_fix_section_are_the_fixable_rules() -> None:
    documented = {r.id for r in REGISTRY if "Fix" in parse_doc(doc_path(r).read_text(encoding="utf-8")).sections}
    assert documented == {r.id for r in FIXABLE}


# -- property: a tree with planted mistakes, fixed, is the tree written right -----------------------


def _manifests(gateways: list[str], plant_status: bool, plant_duplicate: bool, plant_group: bool, plant_label: str) -> str:
    """A Gateway per name and a ClientTrafficPolicy targeting each; the planted mistakes are
    extra lines or a changed value, so that fixing them gives back the text without them."""
    docs = [
        "apiVersion: gateway.networking.k8s.io/v1\nkind: GatewayClass\nmetadata:\n  name: eg\n"
        "spec:\n  controllerName: gateway.envoyproxy.io/gatewayclass-controller\n"
    ]
    for name in gateways:
        docs.append(
            f"apiVersion: gateway.networking.k8s.io/v1\nkind: Gateway\nmetadata:\n  name: {name}\n  namespace: infra\n"
            "spec:\n  gatewayClassName: eg\n  listeners:\n  - name: http\n    protocol: HTTP\n    port: 80\n"
        )
    refs = ""
    for i, name in enumerate(gateways):
        group = "gateway.networking.k8s.io/v1" if plant_group and i == 0 else "gateway.networking.k8s.io"
        entry = f"  - group: {group}\n    kind: Gateway\n    name: {name}\n"
        refs += entry
        if plant_duplicate and i == 0:
            refs += entry.replace(group, "gateway.networking.k8s.io")
    metadata = "metadata:\n  name: timeouts\n  namespace: infra\n"
    if plant_label == "alone":
        metadata += '  labels:\n    gateway.envoyproxy.io/PolicyAffected: "true"\n'
    elif plant_label == "beside":
        metadata += '  labels:\n    team: edge\n    gateway.envoyproxy.io/PolicyAffected: "true"\n'
    policy = (
        f"apiVersion: gateway.envoyproxy.io/v1alpha1\nkind: ClientTrafficPolicy\n{metadata}"
        f"spec:\n  targetRefs:\n{refs}  timeout:\n    http:\n      idleTimeout: 30s\n"
    )
    if plant_status:
        policy += "status:\n  ancestors:\n  - ancestorRef:\n      name: gw\n"
    docs.append(policy)
    return "---\n".join(docs)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    gateways=st.lists(st.sampled_from(["edge", "internal", "public"]), min_size=1, max_size=3, unique=True),
    plant_status=st.booleans(),
    plant_duplicate=st.booleans(),
    plant_group=st.booleans(),
    plant_label=st.sampled_from(["none", "alone", "beside"]),
)
def test_fixing_planted_mistakes_gives_the_tree_written_right(
    tmp_path_factory: pytest.TempPathFactory,
    gateways: list[str],
    plant_status: bool,
    plant_duplicate: bool,
    plant_group: bool,
    plant_label: str,
) -> None:
    directory = tmp_path_factory.mktemp("planted")
    planted = directory / "m.yaml"
    planted.write_text(_manifests(gateways, plant_status, plant_duplicate, plant_group, plant_label))
    right = _manifests(gateways, False, False, False, "beside-clean" if plant_label == "beside" else "none")
    if plant_label == "beside":
        right = right.replace(
            "  namespace: infra\nspec:\n  targetRefs", "  namespace: infra\n  labels:\n    team: edge\nspec:\n  targetRefs", 1
        )
    run("--fix", str(planted))
    assert planted.read_text() == right
    assert rules_reported(planted) == []


def test_a_missing_key_is_added_beside_its_siblings(tmp_path: Path) -> None:
    # PL203 without a group, for a kind only one group has: `group: ""` is added to the entry.
    manifest = tmp_path / "m.yaml"
    manifest.write_bytes(
        b"apiVersion: v1\r\nkind: Service\r\nmetadata: {name: s, namespace: a}\r\nspec:\r\n  ports:\r\n  - port: 443\r\n---\r\n"
        b"apiVersion: gateway.networking.k8s.io/v1\r\nkind: BackendTLSPolicy\r\nmetadata:\r\n  name: p\r\n  namespace: a\r\n"
        b"spec:\r\n  targetRefs:\r\n    - kind: Service   # no group\r\n      name: s\r\n"
        b"  validation:\r\n    hostname: s.a\r\n    wellKnownCACertificates: System\r\n"
    )
    _, _, err = run("--fix", str(manifest))
    assert "fixed 1 finding in 1 file" in err
    assert b'    - kind: Service   # no group\r\n      name: s\r\n      group: ""\r\n  validation:' in manifest.read_bytes()
    assert rules_reported(manifest) == []


@pytest.mark.parametrize("rule", FIXABLE, ids=lambda r: r.id)
def test_every_fixable_rules_fixture_is_fixed_where_a_fix_exists(rule: type, tmp_path: Path) -> None:
    from tests.lintutil import lint_paths

    source = ROOT / "tests" / "rules" / f"{rule.id}-{rule.name}" / "bad.yaml"
    copy = tmp_path / "bad.yaml"
    shutil.copy(source, copy)
    before = [f for f in lint_paths([copy]).findings if f.rule == rule.id]
    with_fix = [f for f in before if f.fix is not None]
    assert with_fix, "the fixture should show the fix"
    run("--fix", "--unsafe-fixes", "--fix-only", rule.id, str(copy))
    after = [f for f in lint_paths([copy]).findings if f.rule == rule.id]
    # What had a fix is gone; what had none is still reported, unchanged.
    assert [(f.message, str(f.object)) for f in after] == [(f.message, str(f.object)) for f in before if f.fix is None]


def test_a_missing_grant_is_appended_once_beside_the_object(tmp_path: Path) -> None:
    bad = parse_doc(doc_path(next(r for r in REGISTRY if r.id == "PL402")).read_text()).yaml_block("Bad")
    assert bad is not None
    manifest = tmp_path / "m.yaml"
    manifest.write_text(bad + bad.split("---\n")[-1].replace("route-x", "route-y"))  # two routes, one grant
    run("--fix", "--unsafe-fixes", str(manifest))
    text = manifest.read_text()
    assert text.count("kind: ReferenceGrant") == 1
    assert text.endswith(
        "---\napiVersion: gateway.networking.k8s.io/v1beta1\nkind: ReferenceGrant\nmetadata:\n  name: allow-httproute-from-ns2\n"
        "  namespace: default\nspec:\n  from:\n  - group: gateway.networking.k8s.io\n    kind: HTTPRoute\n    namespace: ns2\n"
        '  to:\n  - group: ""\n    kind: Service\n    name: demo-svc\n'
    )
    assert "PL402" not in rules_reported(manifest)


def test_an_appended_grant_follows_the_files_sequence_style(tmp_path: Path) -> None:
    # Sequences indented under their keys (`  - `), as many charts write them.
    manifest = tmp_path / "m.yaml"
    manifest.write_text(
        "apiVersion: v1\nkind: Service\nmetadata:\n  name: demo-svc\n  namespace: default\nspec:\n  ports:\n    - port: 80\n"
        "---\napiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\nmetadata:\n  name: route-x\n  namespace: ns2\n"
        "spec:\n  rules:\n    - backendRefs:\n        - name: demo-svc\n          namespace: default\n          port: 80\n"
    )
    assert "PL402" in rules_reported(manifest)
    run("--fix", "--unsafe-fixes", "--fix-only", "PL402", str(manifest))
    assert manifest.read_text().endswith(
        "  from:\n    - group: gateway.networking.k8s.io\n      kind: HTTPRoute\n      namespace: ns2\n"
        '  to:\n    - group: ""\n      kind: Service\n      name: demo-svc\n'
    )
    assert "PL402" not in rules_reported(manifest)


_SERVICE_AND_ROUTE = (
    "apiVersion: v1\nkind: Service\nmetadata:\n  name: demo-svc\n  namespace: default\nspec:\n  ports:\n  - port: 80\n"
    "---\napiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\nmetadata:\n  name: route-x\n  namespace: ns2\n"
    "spec:\n  rules:\n  - backendRefs:\n    - name: demo-svc\n      namespace: default\n      port: 80\n"
)
_GRANT = "---\napiVersion: gateway.networking.k8s.io/v1beta1\nkind: ReferenceGrant\nmetadata:\n  name: rg\n  namespace: default\n"


@pytest.mark.parametrize("quote", ['""', "''"])
def test_an_appended_grant_quotes_empty_strings_as_the_file_does(quote: str, tmp_path: Path) -> None:
    manifest = tmp_path / "m.yaml"
    # The file's one quoted empty string is quoted with `quote`: so is the new grant's `group`.
    manifest.write_text(_SERVICE_AND_ROUTE.replace("  ports:\n", f"  clusterIP: {quote}\n  ports:\n"))
    run("--fix", "--unsafe-fixes", "--fix-only", "PL402", str(manifest))
    assert manifest.read_text().endswith(f"  to:\n  - group: {quote}\n    kind: Service\n    name: demo-svc\n")
    assert "PL402" not in rules_reported(manifest)


def test_the_grant_the_note_names_gets_a_from_entry(tmp_path: Path) -> None:
    manifest = tmp_path / "m.yaml"
    grant = (
        _GRANT + "spec:\n  from:\n  - group: gateway.networking.k8s.io\n    kind: HTTPRoute\n    namespace: ns1\n"
        '  # what the teams may reach\n  to:\n  - group: ""\n    kind: Service\n'
    )
    manifest.write_text(_SERVICE_AND_ROUTE + grant)
    _, out, _ = run(str(manifest))
    assert "ReferenceGrant default/rg allows a referrer with namespace ns1" in out
    run("--fix", "--unsafe-fixes", "--fix-only", "PL402", str(manifest))
    # One grant, one more `from` entry laid out as the one above it; the comment stays with `to`.
    assert manifest.read_text() == _SERVICE_AND_ROUTE + grant.replace(
        "    namespace: ns1\n",
        "    namespace: ns1\n  - group: gateway.networking.k8s.io\n    kind: HTTPRoute\n    namespace: ns2\n",
    )
    assert "PL402" not in rules_reported(manifest)


def test_a_from_entry_follows_the_entry_before_it(tmp_path: Path) -> None:
    # Sequences indented under their keys, keys in another order, quoted values, no final newline.
    manifest = tmp_path / "m.yaml"
    grant = (
        _GRANT + "spec:\n  to:\n    - kind: Service\n      group: ''\n  from:\n"
        "    - namespace: 'ns1'\n      kind: HTTPRoute\n      group: gateway.networking.k8s.io"
    )
    manifest.write_text(_SERVICE_AND_ROUTE + grant)
    run("--fix", "--unsafe-fixes", "--fix-only", "PL402", str(manifest))
    assert manifest.read_text() == (
        _SERVICE_AND_ROUTE + grant + "\n    - namespace: 'ns2'\n      kind: HTTPRoute\n      group: gateway.networking.k8s.io\n"
    )
    assert "PL402" not in rules_reported(manifest)


def test_a_flow_style_from_list_gets_a_flow_entry(tmp_path: Path) -> None:
    manifest = tmp_path / "m.yaml"
    grant = (
        _GRANT
        + "spec:\n  from: [{group: gateway.networking.k8s.io, kind: HTTPRoute, namespace: ns1}]\n  to: [{group: '', kind: Service}]\n"
    )
    manifest.write_text(_SERVICE_AND_ROUTE + grant)
    run("--fix", "--unsafe-fixes", "--fix-only", "PL402", str(manifest))
    assert manifest.read_text() == _SERVICE_AND_ROUTE + grant.replace(
        "ns1}]", "ns1}, {group: gateway.networking.k8s.io, kind: HTTPRoute, namespace: ns2}]"
    )
    assert "PL402" not in rules_reported(manifest)


def test_a_grant_for_another_object_is_not_widened(tmp_path: Path) -> None:
    # The note names rg (it admits HTTPRoutes from ns2, but only to Service other): a `from` entry
    # there would not permit the reference, a `to` entry would open demo-svc to more than asked.
    manifest = tmp_path / "m.yaml"
    grant = (
        _GRANT + "spec:\n  from:\n  - group: gateway.networking.k8s.io\n    kind: HTTPRoute\n    namespace: ns2\n"
        '  to:\n  - group: ""\n    kind: Service\n    name: other\n'
    )
    manifest.write_text(_SERVICE_AND_ROUTE + grant)
    _, out, _ = run(str(manifest))
    assert "ReferenceGrant default/rg permits only Service other, not demo-svc" in out
    run("--fix", "--unsafe-fixes", "--fix-only", "PL402", str(manifest))
    text = manifest.read_text()
    assert text.startswith(_SERVICE_AND_ROUTE + grant)
    assert text.count("kind: ReferenceGrant") == 2
    assert "PL402" not in rules_reported(manifest)


def test_fixing_the_example_repository_touches_only_the_fixed_lines(tmp_path: Path) -> None:
    import difflib

    fixed = tmp_path / "examples"
    shutil.copytree(ROOT / "examples", fixed)
    run("--fix", str(fixed))
    removed: list[str] = []
    added: list[str] = []
    for path in sorted(fixed.rglob("*.yaml")):
        before = (ROOT / "examples" / path.relative_to(fixed)).read_text().splitlines()
        for line in difflib.ndiff(before, path.read_text().splitlines()):
            if line.startswith("- "):
                removed.append(f"{path.relative_to(fixed)}: {line[2:]}")
            elif line.startswith("+ "):
                added.append(f"{path.relative_to(fixed)}: {line[2:]}")
    status = (ROOT / "examples" / "infra" / "backend-traffic-policy.yaml").read_text().split("\nstatus:\n", 1)[1]
    assert removed == [
        "infra/backend-traffic-policy.yaml: status:",
        *(f"infra/backend-traffic-policy.yaml: {line}" for line in status.splitlines()),
        'team-a/backend-tls.yaml:     gateway.envoyproxy.io/PolicyAffected: "true"',
        "team-b/kuadrant-policies.yaml:     group: gateway.networking.k8s.io/v1",
    ]
    assert added == ["team-b/kuadrant-policies.yaml:     group: gateway.networking.k8s.io"]


def test_a_file_over_a_safety_limit_is_not_composed_again(tmp_path: Path) -> None:
    # A fixable finding beside a document nested past the loader's limit (PL007): the fixer does
    # not compose the file again (libyaml before 0.2.6 would overflow the C stack), it says why.
    manifest = tmp_path / "m.yaml"
    text = STYLED.replace("\ufeff", "").replace("\r\n", "\n") + "---\ndeep: " + "[" * 5000 + "]" * 5000 + "\n"
    manifest.write_text(text)
    _, _, err = run("--fix", str(manifest))
    assert manifest.read_text() == text
    assert "not fixed: the file is over a safety limit (PL007); fix it by hand" in err


UNSAFE_ONLY = """\
apiVersion: v1
kind: Service
metadata:
  name: storefront
  namespace: app
spec:
  ports:
  - name: https
    port: 443
---
apiVersion: gateway.networking.k8s.io/v1
kind: BackendTLSPolicy
metadata:
  name: tls
  namespace: app
spec:
  targetRefs:
  - group: ""
    kind: Service
    name: storfront
  validation:
    hostname: storefront.app.svc.cluster.local
    wellKnownCACertificates: System
"""


def test_diff_fix_with_only_unsafe_fixes_says_so_and_fails(tmp_path: Path) -> None:
    # PL201's did-you-mean fix is unsafe: without --unsafe-fixes the diff is empty, but the error
    # it would fix is still there, so the run is not clean.
    manifest = tmp_path / "m.yaml"
    manifest.write_text(UNSAFE_ONLY)
    code, out, err = run("--diff-fix", str(manifest))
    assert (code, out) == (1, "")
    assert "policylint: 0 fixes in 0 files (nothing written); 1 more fix with --unsafe-fixes (PL201)\n" in err
    code, out, err = run("--diff-fix", "--unsafe-fixes", str(manifest))
    assert code == 1 and "+    name: storefront\n" in out
    assert "policylint: 1 fix in 1 file (nothing written)\n" in err
    # --fix-only leaves out the rules it does not name, held back or not.
    assert run("--diff-fix", "--fix-only", "PL110", str(manifest))[0] == 0
    assert manifest.read_text() == UNSAFE_ONLY
