"""`--diff [BASE]` and `--staged` gate on what the change introduces (policylint/commands/change.py).

Each test builds a real temporary git repository laid out as a platform team and app teams lay
one out: the shared Gateway in `platform/`, each team's routes and policies under `apps/`. What
is checked: a rename or deletion of a policy's target in another file fails the run; old
findings in untouched files that depend on a changed file are reported as pre-existing and do
not fail it (`--gate all` fails on them); PATHs narrow what is reported, never what is read;
nothing staged checks everything; the first commit has nothing to compare with; the outputs say
which findings the change introduces (golden files in tests/reporters/change-golden/; regenerate
with `pytest tests/scope/test_change_gate.py --update-golden` and review the diff).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from policylint.cli import cli
from tests.gitrepo import commit, git, init
from tests.lintutil import ROOT
from tests.reporters.test_ci_reporters import sarif_of

QUICKSTART = """\
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
  name: eg
  namespace: infra
spec:
  gatewayClassName: eg
  listeners:
  - name: http
    protocol: HTTP
    port: 80
    allowedRoutes:
      namespaces:
        from: All
"""
APP = """\
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata:
  name: shop
  namespace: team-x
spec:
  parentRefs:
  - name: eg
    namespace: infra
  rules:
  - backendRefs:
    - name: shop
      port: 8080
---
apiVersion: v1
kind: Service
metadata:
  name: shop
  namespace: team-x
spec:
  ports:
  - port: 8080
"""
POLICIES = """\
apiVersion: gateway.envoyproxy.io/v1alpha1
kind: BackendTrafficPolicy
metadata:
  name: shop-timeouts
  namespace: team-x
spec:
  targetRefs:
  - group: gateway.networking.k8s.io
    kind: HTTPRoute
    name: shop
  timeout:
    http:
      requestTimeout: 10s
"""
# Two findings committed long ago, both about the listeners of platform/quickstart.yaml's Gateway.
LEGACY = """\
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata:
  name: legacy
  namespace: team-x
spec:
  parentRefs:
  - name: eg
    namespace: infra
    sectionName: https
---
apiVersion: gateway.envoyproxy.io/v1alpha1
kind: ClientTrafficPolicy
metadata:
  name: edge-tls
  namespace: infra
spec:
  targetRefs:
  - group: gateway.networking.k8s.io
    kind: Gateway
    name: eg
    sectionName: https
"""
OLD = [("PL407", "apps/team-x/legacy.yaml", 10), ("PL301", "apps/team-x/legacy.yaml", 22)]


def lay_out(root: Path) -> None:
    (root / "platform").mkdir()
    (root / "apps" / "team-x").mkdir(parents=True)
    (root / "platform" / "quickstart.yaml").write_text(QUICKSTART)
    (root / "apps" / "team-x" / "app.yaml").write_text(APP)
    (root / "apps" / "team-x" / "policies.yaml").write_text(POLICIES)
    (root / "apps" / "team-x" / "legacy.yaml").write_text(LEGACY)


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = init(tmp_path / "repo")
    lay_out(root)
    commit(root)
    monkeypatch.chdir(root)
    return root


def run(*args: str) -> tuple[int, dict[str, Any], str]:
    result = CliRunner().invoke(cli, ["check", "--no-cache", "--format", "json", *args])
    return result.exit_code, json.loads(result.stdout) if result.stdout.startswith("{") else {}, result.stderr


def found(report: dict[str, Any]) -> list[tuple[str, str, int, bool | None]]:
    return [(f["rule"], f["file"], f["line"], f.get("introduced")) for f in report.get("findings", [])]


def test_renaming_a_policys_target_in_another_file_fails(repo: Path) -> None:
    (repo / "apps/team-x/app.yaml").write_text(APP.replace("name: shop\n  namespace", "name: store\n  namespace", 1))
    git(repo, "add", ".")
    for args in (["--staged"], ["--diff", "HEAD"]):
        code, report, _ = run(*args)
        assert code == 1, args
        assert found(report) == [("PL201", "apps/team-x/policies.yaml", 10, True)], args
        assert report["summary"]["change"] == {"base": "HEAD", "introduced": 1, "preExisting": 0}


def test_deleting_a_policys_target_document_fails(repo: Path) -> None:
    (repo / "apps/team-x/app.yaml").write_text(APP.split("---\n")[1])  # the Service stays
    git(repo, "add", ".")
    code, report, _ = run("--staged")
    assert (code, found(report)) == (1, [("PL201", "apps/team-x/policies.yaml", 10, True)])


def test_old_findings_about_a_changed_file_are_reported_not_failed_on(repo: Path) -> None:
    (repo / "platform/quickstart.yaml").write_text(QUICKSTART + "# reviewed by the platform team\n")
    git(repo, "add", ".")
    for args in (["--staged"], ["--diff", "HEAD"]):
        code, report, _ = run(*args)
        assert code == 0, args
        assert found(report) == [(rule, file, line, False) for rule, file, line in OLD], args
        assert report["summary"]["change"] == {"base": "HEAD", "introduced": 0, "preExisting": 2}
    # Text: each old finding says so, and the summary counts them.
    result = CliRunner().invoke(cli, ["check", "--no-cache", "--format", "text", "--staged"])
    assert result.exit_code == 0
    assert result.stdout.count("\n    pre-existing: at HEAD too\n") == 2
    assert "; against HEAD: 0 introduced, 2 pre-existing" in result.stderr


def test_gate_all_fails_on_every_finding_in_scope(repo: Path) -> None:
    (repo / "platform/quickstart.yaml").write_text(QUICKSTART + "# reviewed\n")
    git(repo, "add", ".")
    code, report, _ = run("--staged", "--gate", "all")
    assert (code, len(report["findings"])) == (1, 2)
    (repo / ".policylint.yaml").write_text("gate: all\n")
    git(repo, "add", ".policylint.yaml")
    git(repo, "commit", "-q", "-m", "gate on everything")
    (repo / "platform/quickstart.yaml").write_text(QUICKSTART + "# reviewed again\n")
    git(repo, "add", ".")
    assert run("--staged")[0] == 1  # the configuration key
    assert run("--staged", "--gate", "introduced")[0] == 0  # the flag wins


def test_a_change_that_loosens_the_configured_gate_fails(repo: Path) -> None:
    (repo / ".policylint.yaml").write_text("gate: all\n")
    git(repo, "add", ".policylint.yaml")
    git(repo, "commit", "-q", "-m", "gate on everything")
    (repo / ".policylint.yaml").write_text("gate: introduced\n")
    git(repo, "add", ".policylint.yaml")
    code, report, _ = run("--staged")
    assert code == 1
    assert report["gate"]["loosened"] is True
    assert [c["message"] for c in report["gate"]["changes"] if c["loosens"]] == [
        "gates on what the change introduces instead of all"
    ]


def test_a_finding_the_change_adds_next_to_old_ones_fails(repo: Path) -> None:
    # The old PL301 stays; a new policy in the same file targets a missing section too.
    extra = LEGACY.split("---\n")[1].replace("edge-tls", "edge-mtls").replace("sectionName: https", "sectionName: grpc")
    (repo / "apps/team-x/legacy.yaml").write_text(LEGACY + "---\n" + extra)
    git(repo, "add", ".")
    code, report, _ = run("--staged")
    assert code == 1
    assert found(report) == [
        *((rule, file, line, False) for rule, file, line in OLD),
        ("PL301", "apps/team-x/legacy.yaml", 34, True),
    ]


def test_removing_a_suppression_introduces_its_finding(repo: Path) -> None:
    suppressed = LEGACY.replace(
        "    sectionName: https\n---", "    sectionName: https  # policylint: disable=PL407 -- migrating\n---"
    )
    (repo / "apps/team-x/legacy.yaml").write_text(suppressed)
    git(repo, "commit", "-q", "-am", "suppress")
    (repo / "apps/team-x/legacy.yaml").write_text(LEGACY)
    git(repo, "add", ".")
    code, report, _ = run("--staged")
    assert code == 1
    assert found(report) == [("PL407", "apps/team-x/legacy.yaml", 10, True), ("PL301", "apps/team-x/legacy.yaml", 22, False)]


@pytest.mark.parametrize("args", [["--staged", "apps/"], ["--diff", "HEAD", "apps/"], ["--staged", "apps/team-x/app.yaml"]])
def test_paths_narrow_what_is_reported_not_what_is_read(repo: Path, args: list[str]) -> None:
    # A change inside apps/ with the Gateway in platform/: read, so no false PL406/PL201/PL413.
    (repo / "apps/team-x/app.yaml").write_text(APP.replace("port: 8080\n---", "port: 8080\n      weight: 2\n---"))
    git(repo, "add", ".")
    code, report, _ = run(*args)
    assert (code, found(report)) == (0, [])


def test_paths_choose_the_part_of_the_change_reported_on(repo: Path) -> None:
    (repo / "apps/team-x/app.yaml").write_text(APP.replace("name: shop\n  namespace", "name: store\n  namespace", 1))
    (repo / "platform/quickstart.yaml").write_text(QUICKSTART + "# reviewed\n")
    git(repo, "add", ".")
    code, report, _ = run("--staged", "platform/")
    assert (code, found(report)) == (0, [(rule, file, line, False) for rule, file, line in OLD])
    code, report, _ = run("--staged", "apps/team-x/app.yaml")
    assert (code, found(report)) == (1, [("PL201", "apps/team-x/policies.yaml", 10, True)])


def test_what_a_change_introduces_is_reported_wherever_it_is(repo: Path) -> None:
    # The route names the listener; renaming it detaches the route (PL407, about the changed
    # Gateway: in scope) and leaves the policy on the route without traffic (PL413 two files
    # away, about the route only): both are the change's, and the warning alone fails at warning.
    (repo / "apps/team-x/app.yaml").write_text(
        APP.replace("    namespace: infra\n", "    namespace: infra\n    sectionName: http\n", 1)
    )
    git(repo, "commit", "-q", "-am", "the route names its listener")
    (repo / "platform/quickstart.yaml").write_text(QUICKSTART.replace("- name: http", "- name: web"))
    git(repo, "add", ".")
    expected = [
        ("PL407", "apps/team-x/app.yaml", 10, True),
        *((rule, file, line, False) for rule, file, line in OLD),
        ("PL413", "apps/team-x/policies.yaml", 8, True),
    ]
    for args in (["--staged"], ["--diff", "HEAD"], ["--staged", "platform/"]):
        code, report, _ = run(*args)
        assert (code, found(report)) == (1, expected), args
        assert report["summary"]["change"] == {"base": "HEAD", "introduced": 2, "preExisting": 2}
    code, report, _ = run("--staged", "--select", "PL413", "--fail-on", "warning")
    assert (code, found(report)) == (1, [("PL413", "apps/team-x/policies.yaml", 8, True)])


def test_paths_outside_the_change_consider_none_of_it(repo: Path) -> None:
    (repo / "platform/quickstart.yaml").write_text(QUICKSTART.replace("- name: http", "- name: web"))
    git(repo, "add", ".")
    code, report, _ = run("--staged", "--fail-on", "info", "apps/")
    assert (code, found(report)) == (0, [])
    result = CliRunner().invoke(cli, ["check", "--no-cache", "--staged", "apps/"])
    assert result.exit_code == 0
    assert result.stderr.startswith(
        "0 errors, 0 warnings, 0 info in no changed file under the PATHs given (1 changed file outside them, not considered)"
    )


def test_what_pre_commit_says_of_a_push() -> None:
    from policylint.commands.change import ZERO, Pushed, pushed

    push = {"PRE_COMMIT_REMOTE_NAME": "origin", "PRE_COMMIT_FROM_REF": "a" * 40, "PRE_COMMIT_TO_REF": "b" * 40}
    assert pushed(push) == Pushed("a" * 40, "b" * 40)
    # Pushing a branch's root commit: pre-commit gives no refs (or a zero one), only the remote.
    assert pushed({"PRE_COMMIT_REMOTE_NAME": "origin"}) == Pushed(None, None)
    assert pushed({**push, "PRE_COMMIT_FROM_REF": ZERO}) == Pushed(None, None)
    assert pushed({}) is None


def test_nothing_staged_checks_every_file_and_every_finding_counts(repo: Path) -> None:
    (repo / "platform/quickstart.yaml").write_text(QUICKSTART + "# not staged\n")
    code, report, err = run("--staged")
    assert code == 1
    assert found(report) == [(rule, file, line, None) for rule, file, line in OLD]
    assert "change" not in report["summary"]
    assert "nothing is staged: the PATHs are checked whole, every finding counts" in err
    # The PATHs given, with the repository as context: findings in them or about their objects.
    code, report, _ = run("--staged", "platform/")
    assert (code, found(report)) == (1, [(rule, file, line, None) for rule, file, line in OLD])
    code, report, _ = run("--staged", "apps/team-x/policies.yaml")
    assert (code, found(report)) == (0, [])


def test_the_first_commit_introduces_everything(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = tmp_path / "first"
    init(root)
    lay_out(root)
    git(root, "add", ".")
    monkeypatch.chdir(root)
    code, report, err = run("--staged", "--gate-base", "HEAD")
    assert code == 1, err
    assert found(report) == [(rule, file, line, True) for rule, file, line in OLD]
    assert report["summary"]["change"] == {"base": "the empty tree", "introduced": 2, "preExisting": 0}


def test_diff_from_a_subdirectory_reads_the_whole_repository(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (repo / "apps/team-x/app.yaml").write_text(APP.replace("name: shop\n  namespace", "name: store\n  namespace", 1))
    monkeypatch.chdir(repo / "apps")
    code, report, _ = run("--diff", "HEAD")
    assert (code, found(report)) == (1, [("PL201", "team-x/policies.yaml", 10, True)])


# -- what each output says ---------------------------------------------------------------------

GOLDEN = ROOT / "tests" / "reporters" / "change-golden"
GOLDEN_FILES = {
    "text": "report.txt",
    "json": "report.json",
    "sarif": "report.sarif",
    "github": "report.github.txt",
    "junit": "report.junit.xml",
    "markdown": "report.md",
    "gitlab": "report.gitlab.json",
}


@pytest.fixture
def ci_change(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """tests/reporters/ci committed, then a staged change to policies.yaml that introduces a
    PL201 next to its three old findings."""
    root = tmp_path / "ci"
    init(root)
    for name in ("gateway.yaml", "policies.yaml", "routes.yaml"):
        shutil.copy(ROOT / "tests" / "reporters" / "ci" / name, root / name)
    git(root, "add", ".")
    git(root, "commit", "-q", "-m", "base")
    policies = (root / "policies.yaml").read_text()
    assert policies.count("    name: edge\n") == 1
    (root / "policies.yaml").write_text(policies.replace("    name: edge\n", "    name: egde\n"))
    git(root, "add", ".")
    monkeypatch.chdir(root)
    return root


@pytest.mark.parametrize("fmt", sorted(GOLDEN_FILES))
def test_golden(ci_change: Path, fmt: str, update_golden: bool) -> None:
    result = CliRunner().invoke(cli, ["check", "--no-cache", "--staged", "--format", fmt, "--color", "never"])
    assert result.exit_code == 1
    # policies.yaml only: its old PL301, PL410 and PL110, and the PL201 the change brings.
    assert result.stderr == (
        "2 errors, 1 warning, 1 info in 1 file (+2 context files) (8 objects, 2 policies); against HEAD: 1 introduced, 3 pre-existing\n"
    )
    path = GOLDEN / GOLDEN_FILES[fmt]
    if update_golden:
        path.parent.mkdir(exist_ok=True)
        path.write_text(result.stdout, encoding="utf-8")
    assert result.stdout == path.read_text(encoding="utf-8"), f"{path.name} is stale: run pytest {__file__} --update-golden"


def test_junit_fails_only_on_what_fails_the_run(ci_change: Path) -> None:
    # The golden change introduces one error next to an old one: one failure, the old error in
    # system-out. A comment-only change introduces nothing: no failure, as the exit code says;
    # `--gate all` fails on the old error (PL301; PL410 and PL110 are below `--fail-on`).
    junit = (GOLDEN / "report.junit.xml").read_text(encoding="utf-8")
    assert junit.count("<failure ") == 1 and '<testsuites disabled="0" errors="0" failures="1"' in junit
    assert junit.count("pre-existing: at HEAD too") == 3
    git(ci_change, "checkout", "HEAD", "--", "policies.yaml")
    (ci_change / "policies.yaml").write_text((ci_change / "policies.yaml").read_text() + "# reviewed\n")
    git(ci_change, "add", ".")
    for gate, code, failures in (("introduced", 0, 0), ("all", 1, 1)):
        result = CliRunner().invoke(
            cli, ["check", "--no-cache", "--staged", "--gate", gate, "--format", "junit", "--fail-on", "error"]
        )
        assert result.exit_code == code, gate
        assert result.stdout.count("<failure ") == failures, gate
        assert f'<testsuites disabled="0" errors="0" failures="{failures}"' in result.stdout, gate


def test_sarif_baseline_state_and_json_say_the_same() -> None:
    sarif = sarif_of((GOLDEN / "report.sarif").read_text(encoding="utf-8"))  # valid SARIF 2.1.0
    report = json.loads((GOLDEN / "report.json").read_text(encoding="utf-8"))
    states = {r["partialFingerprints"]["policylintFingerprint/v1"]: r.get("baselineState") for r in sarif["runs"][0]["results"]}
    introduced = {f["fingerprint"]: f["introduced"] for f in report["findings"]}
    assert {k: states[k] for k in introduced} == {k: "new" if v else "unchanged" for k, v in introduced.items()}
    assert sorted(introduced.values()) == [False, False, False, True]
    assert states.keys() == introduced.keys()


def test_staged_reads_a_file_the_working_tree_no_longer_has(repo: Path) -> None:
    # A new policy naming a route that does not exist, staged, then removed from the working tree:
    # the commit holds it, so --staged lints it from the index.
    broken = POLICIES.replace("name: shop\n", "name: nowhere\n").replace("shop-timeouts", "other-timeouts")
    (repo / "apps/team-x/broken.yaml").write_text(broken)
    git(repo, "add", ".")
    (repo / "apps/team-x/broken.yaml").unlink()
    for args in (["--staged"], ["--staged", "apps/"]):
        code, report, _ = run(*args)
        assert (code, found(report)) == (1, [("PL201", "apps/team-x/broken.yaml", 10, True)]), args


def test_staged_reads_the_index_not_a_working_tree_removal(repo: Path) -> None:
    # The staged app.yaml names a Gateway that does not exist; the working tree then loses the
    # file. Read from the disk, the route would be gone (and PL201 would blame policies.yaml);
    # the commit holds the staged version, whose mistake is PL406.
    (repo / "apps/team-x/app.yaml").write_text(APP.replace("  - name: eg\n", "  - name: nowhere\n", 1))
    git(repo, "add", ".")
    (repo / "apps/team-x/app.yaml").unlink()
    code, report, _ = run("--staged")
    # PL413: the policy on the route now has no traffic to act on, a consequence the change brings.
    assert (code, found(report)) == (
        1,
        [("PL406", "apps/team-x/app.yaml", 8, True), ("PL413", "apps/team-x/policies.yaml", 8, True)],
    )


def test_the_readme_sample_is_real_output(repo: Path) -> None:
    """README "Diff modes and the gate": a comment added to platform/quickstart.yaml and staged;
    every line shown is the real output's (standard output, then standard error's summary line),
    a line cut short with " … [" standing for the real line up to there and from there."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    command = "$ git add platform/quickstart.yaml && policylint --staged\n"
    block = readme[readme.index(command) + len(command) :]
    block = block[: block.index("\n$ echo $?")]
    (repo / "platform/quickstart.yaml").write_text(QUICKSTART + "# reviewed by the platform team\n")
    git(repo, "add", "platform/quickstart.yaml")
    result = CliRunner().invoke(cli, ["--staged", "--no-cache"])
    assert result.exit_code == 0  # README: `echo $?` prints 0
    real = (result.stdout + result.stderr).splitlines()
    shown = block.splitlines()
    assert len(shown) == len(real), "\n".join(real)
    for line, actual in zip(shown, real):
        if " … [" in line:
            head, _, tail = line.partition(" … [")
            assert actual.startswith(head) and actual.endswith("[" + tail), (line, actual)
        else:
            assert actual == line
