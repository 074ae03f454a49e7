"""Report scope (`--context PATH`): everything is read, only findings in or about the PATHs are
reported (policylint/report_scope.py; README "pre-commit").

The cases are the ones a pre-commit hook meets: a changed policy whose target sits in an
unchanged file (no false PL201), an old finding in an untouched file (not reported), and a changed
Gateway that breaks a policy in another file (reported, on the policy).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from policylint.cli import cli
from tests.lintutil import ROOT

# Every JSON report these tests render is checked against the report schema (tests/conftest.py).
pytestmark = pytest.mark.usefixtures("validate_json_reports")

GATEWAY = """\
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
"""
CLASS = """\
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata:
  name: eg
spec:
  controllerName: gateway.envoyproxy.io/gatewayclass-controller
"""
POLICY = """\
apiVersion: gateway.envoyproxy.io/v1alpha1
kind: ClientTrafficPolicy
metadata:
  name: edge-timeouts
  namespace: infra
spec:
  targetRefs:
  - group: gateway.networking.k8s.io
    kind: Gateway
    name: edge
    sectionName: {section}
"""
# An old mistake nobody touches: a route without parentRefs (PL410).
OLD = """\
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata:
  name: legacy
  namespace: infra
spec: {}
"""


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / ".git").mkdir()
    (tmp_path / "class.yaml").write_text(CLASS)
    (tmp_path / "gateway.yaml").write_text(GATEWAY)
    (tmp_path / "policy.yaml").write_text(POLICY.format(section="http"))
    (tmp_path / "legacy.yaml").write_text(OLD)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def run(*args: str, stdin: str | None = None) -> tuple[int, list[dict[str, object]], str]:
    result = CliRunner().invoke(cli, ["check", "--no-cache", "--format", "json", *args], input=stdin)
    report = json.loads(result.stdout) if result.stdout else {}
    return result.exit_code, report.get("findings", []), result.stderr


def test_a_changed_policy_resolves_its_target_in_an_unchanged_file(repo: Path) -> None:
    code, findings, _ = run("policy.yaml")
    # Without context the file holds no Gateway: the target is unprovable, a warning, not a false error.
    assert code == 0 and [(f["rule"], f["severity"]) for f in findings] == [("PL201", "warning")]
    code, findings, err = run("--context", ".", "policy.yaml")
    assert (code, findings) == (0, [])
    assert err == "0 errors, 0 warnings, 0 info in 1 file (+3 context files) (4 objects, 1 policy)\n"


def test_old_findings_in_untouched_files_are_not_reported(repo: Path) -> None:
    code, findings, _ = run(".")
    assert [f["rule"] for f in findings] == ["PL410"]
    code, findings, _ = run("--context", ".", "gateway.yaml", "policy.yaml")
    assert (code, findings) == (0, [])


def test_a_change_that_breaks_a_policy_elsewhere_is_reported_on_the_policy(repo: Path) -> None:
    (repo / "gateway.yaml").write_text(GATEWAY.replace("name: http", "name: web"))
    code, findings, _ = run("--context", ".", "gateway.yaml")
    assert code == 1
    assert [(f["rule"], f["file"], f["line"]) for f in findings] == [("PL301", "policy.yaml", 11)]


def test_a_finding_on_a_policy_whose_target_is_in_scope_is_reported(repo: Path) -> None:
    # A policy in a context file, targeting a changed Gateway: about the change, even without a
    # note pointing into it (a status stanza, PL110, is on the policy alone).
    (repo / "policy.yaml").write_text(POLICY.format(section="http") + "status:\n  ancestors: []\n")
    code, findings, _ = run("--context", ".", "gateway.yaml")
    assert [(f["rule"], f["file"]) for f in findings] == [("PL110", "policy.yaml")]
    assert code == 0  # info


def test_standard_input_with_context(repo: Path) -> None:
    code, findings, err = run(
        "-",
        "--stdin-filename",
        "new.yaml",
        "--context",
        ".",
        stdin=POLICY.format(section="https").replace("edge-timeouts", "edge-tls"),
    )
    assert code == 1
    assert [(f["rule"], f["file"]) for f in findings] == [("PL301", "new.yaml")]
    assert "(+4 context files)" in err


def test_the_policies_section_keeps_the_report_scope(repo: Path) -> None:
    result = CliRunner().invoke(cli, ["check", "--no-cache", "--format", "json", "--context", ".", "gateway.yaml"])
    assert json.loads(result.stdout)["policies"] == []
    result = CliRunner().invoke(cli, ["check", "--no-cache", "--format", "json", "--context", ".", "policy.yaml"])
    assert [p["object"]["name"] for p in json.loads(result.stdout)["policies"]] == ["edge-timeouts"]


def test_write_baseline_refuses_a_partial_scope(repo: Path) -> None:
    result = CliRunner().invoke(cli, ["check", "--no-cache", "--context", ".", "--write-baseline", "policy.yaml"])
    assert result.exit_code == 2
    assert "--write-baseline records every finding" in result.stderr
    assert not (repo / ".policylint-baseline.json").exists()


def test_the_shipped_pre_commit_hook_lints_the_staged_change() -> None:
    hook, diff = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))
    assert hook["entry"] == "policylint check --staged --gate-base HEAD"
    # The change comes from git: pre-commit's file list never holds a deleted file.
    assert (hook["require_serial"], hook["pass_filenames"], hook["always_run"]) == (True, False, True)
    assert (diff["id"], diff["entry"], diff["pass_filenames"]) == ("policylint-diff", "policylint check --diff", False)
