"""The trust model (README "Security"): the configuration never switches the gate off silently,
`--config-ref` and `--baseline-ref` read them from a git ref, and a change that loosens them is
reported and fails the run."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from policylint.cli import cli
from policylint.rules import REGISTRY
from tests.gitrepo import git, init

# A policy whose target does not exist: PL201, an error, fails a run that nothing loosens.
POLICY = (
    "apiVersion: gateway.networking.k8s.io/v1\nkind: BackendTLSPolicy\nmetadata: {name: p, namespace: n}\n"
    "spec:\n  targetRefs: [{group: '', kind: Service, name: missing}]\n"
    "  validation: {hostname: x.example.com, wellKnownCACertificates: System}\n"
    # Another Service in namespace n: the input manages Services there, so the missing one is an
    # error (PL201), not unprovable.
    "---\napiVersion: v1\nkind: Service\nmetadata: {name: other, namespace: n}\nspec: {ports: [{port: 80}]}\n"
)
# Every rule configuration can touch: the engine's own (PL000, PL007) are never changed.
CONFIGURABLE = len([r for r in REGISTRY if r.id not in ("PL000", "PL007")])
PL2 = len([r for r in REGISTRY if r.id.startswith("PL2")])

# The five configurations of the issue that each turn the gate off, the line that does it, and
# what the summary must say about it.
SWITCHES = [
    ("severity: {PL: off}", f"{CONFIGURABLE} rules off by .policylint.yaml:2"),
    ("ignore: [PL]", f"{CONFIGURABLE} rules ignored by .policylint.yaml:2"),
    ("select: [PL003]", f"{CONFIGURABLE - 1} rules not selected by .policylint.yaml:2"),
    ('external: ["*"]', "references to * not checked by .policylint.yaml:2"),
    ('per-file: {"*": {ignore: [PL]}}', f"{CONFIGURABLE} rules ignored in files matching '*' by .policylint.yaml:2"),
]


ENVIRONMENT = {"NO_COLOR": "1", "GITHUB_ACTIONS": ""}


def run(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """The command run in this process, in `cwd`: these tests read what the gate decides, its
    exit code, report and messages, not how a process ends (as a process of its own, each run cost
    several times its lint's CPU in the interpreter's start and the package's imports). An
    exception is raised, never taken for an exit code: as a process the command would have said
    "internal error" and exited 2, which the tests that expect 2 would not tell from a usage
    error. `run_process` runs the command as users do."""
    before = os.getcwd()
    os.chdir(cwd)
    try:
        result = CliRunner().invoke(cli, list(args), prog_name="policylint", env=ENVIRONMENT)
    finally:
        os.chdir(before)
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    return subprocess.CompletedProcess(list(args), result.exit_code, result.stdout, result.stderr)


def run_process(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """`python -m policylint` as a process: the entry point's exit code and standard streams."""
    return subprocess.run(
        [sys.executable, "-m", "policylint", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, **ENVIRONMENT},
    )


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A repository whose committed configuration turns nothing off."""
    (tmp_path / "policy.yaml").write_text(POLICY)
    (tmp_path / ".policylint.yaml").write_text("# gate\nfail-on: error\n")
    init(tmp_path)
    git(tmp_path, "add", ".")
    git(tmp_path, "commit", "-qm", "base")
    return tmp_path


@pytest.mark.parametrize(("setting", "said"), SWITCHES)
def test_every_switch_is_stated_with_its_file_and_line(repo: Path, setting: str, said: str) -> None:
    (repo / ".policylint.yaml").write_text(f"# gate\n{setting}\n")
    proc = run(repo, "check", "--no-cache", "--format", "json", ".")
    # The checkout's configuration is trusted locally (as ruff's is) ...
    if "external" in setting:
        assert proc.returncode == 0, proc.stderr
    assert said in proc.stderr
    # ... and the JSON report says the same, with the rules each setting turned off.
    gate = json.loads(proc.stdout)["gate"]
    assert [r["line"] for r in gate["relaxations"]] == [2]
    assert gate["relaxations"][0]["message"] == said + gate["relaxations"][0]["message"][len(said) :]
    if "rules" in said:
        assert len(gate["relaxations"][0]["rules"]) == int(said.split()[0])
        assert "PL201" in gate["relaxations"][0]["rules"]


def test_a_configuration_that_turns_nothing_off_adds_nothing(repo: Path) -> None:
    proc = run(repo, "check", "--no-cache", "--format", "json", ".")
    assert proc.returncode == 1
    assert "configuration:" not in proc.stderr
    assert "gate" not in json.loads(proc.stdout)


def test_a_downgrade_is_stated(repo: Path) -> None:
    (repo / ".policylint.yaml").write_text("severity:\n  PL2: warning\n")
    proc = run(repo, "check", "--no-cache", ".")
    downgraded = len([r for r in REGISTRY if r.id.startswith("PL2") and r.severity.label == "error"])
    assert f"{downgraded} rules downgraded to warning by .policylint.yaml:2" in proc.stderr


def test_the_markdown_and_sarif_reports_say_it(repo: Path) -> None:
    (repo / ".policylint.yaml").write_text("# gate\nseverity: {PL: off}\n")
    md = run(repo, "check", "--no-cache", "--format", "markdown", ".").stdout
    assert f"{CONFIGURABLE} rules off by .policylint.yaml:2" in md
    sarif = json.loads(run(repo, "check", "--no-cache", "--format", "sarif", ".").stdout)
    gate = sarif["runs"][0]["properties"]["policylintGate"]
    assert gate["relaxations"][0]["file"] == ".policylint.yaml"


def test_a_change_that_loosens_the_configuration_fails_the_diff(repo: Path) -> None:
    (repo / ".policylint.yaml").write_text("# gate\nfail-on: error\nseverity: {PL2: off}\n")
    # Through the process, as CI runs the gate: its exit code is the one the process ends with.
    proc = run_process(repo, "check", "--no-cache", "--format", "json", "--diff", "HEAD", ".")
    assert proc.returncode == 1, proc.stderr
    gate = json.loads(proc.stdout)["gate"]
    assert gate["loosened"] is True
    assert [(c["subject"], c["loosens"], c["line"]) for c in gate["changes"]] == [("configuration", True, 3)]
    assert "the change loosens the gate" in proc.stderr


def test_a_change_that_tightens_the_configuration_does_not_fail(repo: Path) -> None:
    (repo / ".policylint.yaml").write_text("# gate\nfail-on: warning\n")
    (repo / "policy.yaml").write_text(POLICY.replace("name: missing", "name: p"))  # PL201 gone too
    git(repo, "add", ".")
    proc = run(repo, "check", "--no-cache", "--format", "json", "--staged")
    gate = json.loads(proc.stdout)["gate"]
    assert gate["loosened"] is False
    assert [c["message"] for c in gate["changes"]] == ["changes `fail-on`"]


def test_config_ref_reads_the_configuration_from_the_ref(repo: Path) -> None:
    (repo / ".policylint.yaml").write_text("# gate\nseverity: {PL: off}\n")
    # The working tree's configuration would pass; the ref's applies, and the change is reported.
    assert run(repo, "check", "--no-cache", ".").returncode == 0
    proc = run(repo, "check", "--no-cache", "--format", "json", "--config-ref", "HEAD", ".")
    assert proc.returncode == 1
    report = json.loads(proc.stdout)
    assert [f["rule"] for f in report["findings"]] == ["PL201"]
    assert report["gate"]["configuration"] == "HEAD:.policylint.yaml"
    assert report["gate"]["changes"][0]["message"].startswith(f"adds {CONFIGURABLE} rules off by .policylint.yaml:2")


def test_config_ref_without_a_file_at_the_ref_applies_none(repo: Path) -> None:
    git(repo, "rm", "-q", "--cached", ".policylint.yaml")
    git(repo, "commit", "-qm", "no configuration")
    (repo / ".policylint.yaml").write_text("ignore: [PL]\n")
    proc = run(repo, "check", "--no-cache", "--config-ref", "HEAD", ".")
    assert proc.returncode == 1
    assert "PL201" in proc.stdout


@pytest.mark.parametrize("ref", ["-x", "--output=json=/tmp/x", "", "no-such-ref"])
def test_a_bad_ref_is_a_usage_error(repo: Path, ref: str) -> None:
    for flag in ("--config-ref", "--baseline-ref"):
        proc = run(repo, "check", "--no-cache", f"{flag}={ref}", ".")
        assert proc.returncode == 2, (flag, ref, proc.stderr)
        assert "Traceback" not in proc.stderr
        assert "ref" in proc.stderr


def test_a_symlink_at_the_ref_is_not_read(repo: Path) -> None:
    os.symlink("/etc/passwd", repo / "link.yaml")
    git(repo, "add", "link.yaml")
    git(repo, "commit", "-qm", "link")
    proc = run(repo, "check", "--no-cache", "--config", "link.yaml", "--config-ref", "HEAD", ".")
    assert proc.returncode == 2
    assert "not a regular file" in proc.stderr


def _baseline(repo: Path) -> None:
    assert run(repo, "check", "--no-cache", "--write-baseline", ".").returncode == 0


def test_baseline_ref_reads_the_baseline_from_the_ref(repo: Path) -> None:
    # The base has no baseline; the change records its own finding in one.
    _baseline(repo)
    assert run(repo, "check", "--no-cache", "--baseline", ".policylint-baseline.json", ".").returncode == 0
    proc = run(repo, "check", "--no-cache", "--format", "json", "--baseline-ref", "HEAD", ".")
    assert proc.returncode == 1, proc.stderr
    report = json.loads(proc.stdout)
    assert [f["rule"] for f in report["findings"]] == ["PL201"]
    [change] = report["gate"]["changes"]
    assert (change["subject"], change["loosens"], change["file"]) == ("baseline", True, ".policylint-baseline.json")
    assert change["message"].startswith("adds baseline entry PL201 BackendTLSPolicy n/p")


def test_a_baseline_entry_the_change_adds_fails_the_diff(repo: Path) -> None:
    (repo / ".policylint.yaml").write_text("# gate\nbaseline: .policylint-baseline.json\n")
    (repo / ".policylint-baseline.json").write_text('{"tool": "policylint", "version": 1, "entries": [\n]}\n')
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "empty baseline")
    _baseline(repo)
    proc = run(repo, "check", "--no-cache", "--diff", "HEAD", ".")
    assert proc.returncode == 1, proc.stderr
    assert "adds baseline entry PL201" in proc.stderr
    # Committing the baseline is the same change, measured against the commit before.
    git(repo, "commit", "-qam", "baseline")
    assert run(repo, "check", "--no-cache", "--diff", "HEAD~1", ".").returncode == 1
    assert run(repo, "check", "--no-cache", "--diff", "HEAD", ".").returncode == 0


def test_isolated_ignores_the_checkout(repo: Path) -> None:
    (repo / ".policylint.yaml").write_text("severity: {PL: off}\n")
    proc = run(repo, "check", "--no-cache", "--isolated", ".")
    assert proc.returncode == 1
    assert "configuration:" not in proc.stderr


def test_show_config_names_a_value_from_the_ref_by_ref_and_path(repo: Path) -> None:
    (repo / ".policylint.yaml").write_text("# gate\n\nfail-on: warning\n")
    proc = run(repo, "check", "--config-ref", "HEAD", "--show-config")
    assert proc.returncode == 0, proc.stderr
    assert "# configuration file: HEAD:.policylint.yaml\n" in proc.stdout
    assert 'fail-on: "error"  # HEAD:.policylint.yaml:2\n' in proc.stdout
    # Without the ref the working tree's file, named by its path.
    local = run(repo, "check", "--show-config").stdout
    assert 'fail-on: "warning"  # .policylint.yaml:3\n' in local


def test_diff_applies_the_base_configuration_and_reports_the_change_as_check_does(repo: Path) -> None:
    (repo / ".policylint.yaml").write_text("# gate\nfail-on: error\nseverity: {PL2: off}\n")
    proc = run(repo, "diff", "HEAD", "--format", "json")
    assert proc.returncode == 1, proc.stderr
    report = json.loads(proc.stdout)
    # BASE's configuration judges both sides: PL201 is not turned off, it is unchanged.
    assert report["findings"]["unchanged"] == 1 and not report["findings"]["introduced"]
    gate = report["gate"]
    assert gate["configuration"] == "HEAD:.policylint.yaml"
    assert gate["loosened"] is True
    checked = json.loads(run(repo, "check", "--no-cache", "--format", "json", "--diff", "HEAD", ".").stdout)["gate"]
    assert gate["changes"] == checked["changes"]
    assert [(c["subject"], c["loosens"], c["line"]) for c in gate["changes"]] == [("configuration", True, 3)]
    said = "gate: the change loosens the gate (against configuration at HEAD): adds 6 rules off by .policylint.yaml:3"
    assert said in run(repo, "diff", "HEAD").stdout
    assert (
        ":x: **The change loosens the gate** (against configuration at HEAD)"
        in run(repo, "diff", "HEAD", "--format", "markdown").stdout
    )
    assert run(repo, "diff", "HEAD", "--exit-zero").returncode == 0


def test_diff_between_two_commits_reads_both_configurations_from_git(repo: Path) -> None:
    (repo / ".policylint.yaml").write_text("# gate\nfail-on: error\nignore: [PL201]\n")
    git(repo, "commit", "-qam", "loosen")
    (repo / ".policylint.yaml").write_text("# gate\n")  # the working tree plays no part
    proc = run(repo, "diff", "HEAD~1", "HEAD", "--format", "json")
    assert proc.returncode == 1, proc.stderr
    [change] = json.loads(proc.stdout)["gate"]["changes"]
    assert change["file"] == "HEAD:.policylint.yaml"
    assert change["message"] == "adds 1 rule ignored by HEAD:.policylint.yaml:3 (ignore[0]: PL201)"
    # The other way round the change tightens the gate: it is listed, the run passes.
    proc = run(repo, "diff", "HEAD", "HEAD~1", "--format", "json")
    assert proc.returncode == 0, proc.stdout
    assert json.loads(proc.stdout)["gate"]["loosened"] is False


def test_diff_reports_the_baseline_entries_a_change_adds(repo: Path) -> None:
    (repo / ".policylint.yaml").write_text("# gate\nbaseline: .policylint-baseline.json\n")
    git(repo, "commit", "-qam", "a baseline")
    _baseline(repo)
    proc = run(repo, "diff", "HEAD", "--format", "json")
    assert proc.returncode == 1, proc.stderr
    [change] = json.loads(proc.stdout)["gate"]["changes"]
    assert (change["subject"], change["loosens"]) == ("baseline", True)
    assert change["message"].startswith("adds baseline entry PL201 BackendTLSPolicy n/p")


def test_diff_config_ref_and_isolated(repo: Path) -> None:
    (repo / ".policylint.yaml").write_text("# gate\nignore: [PL201]\n")
    git(repo, "commit", "-qam", "loosen")
    # The configuration from another ref than BASE: the change against it is judged.
    proc = run(repo, "diff", "HEAD", "--config-ref", "HEAD~1", "--format", "json")
    assert proc.returncode == 1, proc.stderr
    assert json.loads(proc.stdout)["gate"]["configuration"] == "HEAD~1:.policylint.yaml"
    assert run(repo, "diff", "HEAD", "--format", "json").returncode == 0
    # No configuration at all: nothing to compare.
    proc = run(repo, "diff", "HEAD~1", "--isolated", "--format", "json")
    assert proc.returncode == 0, proc.stderr
    assert "gate" not in json.loads(proc.stdout)
    assert run(repo, "diff", "HEAD", "--config-ref=-x").returncode == 2


def _gate_of_diff(repo: Path, configuration: str) -> tuple[int, dict[str, object]]:
    (repo / ".policylint.yaml").write_text(configuration)
    proc = run(repo, "diff", "HEAD", "--format", "json")
    assert proc.returncode in (0, 1), proc.stderr
    return proc.returncode, json.loads(proc.stdout)["gate"]


@pytest.mark.parametrize(
    ("before", "after", "message", "loosens"),
    [
        # PL608's max-affected is declared a maximum (fewer: higher): raising it, or unsetting
        # it, makes the rule report less.
        ("10", "50", "raises rules.PL608.max-affected from 10 to 50: PL608 reports less", True),
        ("10", None, "unsets rules.PL608.max-affected (was 10): PL608 reports less", True),
        ("50", "10", "lowers rules.PL608.max-affected from 50 to 10", False),
        (None, "10", "sets rules.PL608.max-affected from unset to 10", False),
    ],
)
def test_a_rule_option_change_is_judged_from_its_declaration(
    repo: Path, before: str | None, after: str | None, message: str, loosens: bool
) -> None:
    def configuration(value: str | None) -> str:
        return "# gate\nfail-on: error\n" + (f"rules:\n  PL608:\n    max-affected: {value}\n" if value else "")

    (repo / ".policylint.yaml").write_text(configuration(before))
    git(repo, "commit", "-qam", "options", "--allow-empty")
    code, gate = _gate_of_diff(repo, configuration(after))
    assert [(c["message"], c["loosens"]) for c in gate["changes"]] == [(message, loosens)]  # type: ignore[index]
    assert code == (1 if loosens else 0)


def test_an_option_that_does_not_say_which_way_reports_less_is_not_judged() -> None:
    from policylint.rules.base import RuleOption

    assert RuleOption("strict", bool, False, "").reports_less(True, False) is None
    assert RuleOption("limit", int, 3, "").reports_less(3, 9) is None
    assert RuleOption("limit", int, 3, "", fewer="lower").reports_less(3, 1) is True


def test_profile_and_crd_paths_added_are_listed_and_removed_ones_judged(repo: Path) -> None:
    from tests.manifests import policy_crd

    for name in ("a", "b"):
        (repo / "crds" / name).mkdir(parents=True)
        (repo / "crds" / name / "crd.yaml").write_text(policy_crd(f"{name.upper()}Policy"))
    (repo / ".policylint.yaml").write_text("# gate\nfail-on: error\ncrd: [crds/a, crds/b]\n")
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "crds")
    code, gate = _gate_of_diff(repo, "# gate\nfail-on: error\ncrd: [crds/a]\nprofile: [mine.yaml]\n")
    # A path added is listed; one removed drops what its files checked at the base: a type.
    assert code == 1
    assert [(c["message"].split(":")[0], c["line"], c["loosens"]) for c in gate["changes"]] == [  # type: ignore[index]
        ("adds profile mine.yaml", 4, False),
        ("removes crd crds/b", 3, True),
    ]
    assert "drops type at BPolicy.example.com v1 spec" in gate["changes"][1]["message"]  # type: ignore[index]


def test_a_staged_change_that_turns_a_rule_off_fails(repo: Path) -> None:
    (repo / ".policylint.yaml").write_text("# gate\nfail-on: error\nignore: [PL201]\n")
    git(repo, "add", ".policylint.yaml")
    proc = run(repo, "check", "--no-cache", "--staged")
    assert proc.returncode == 1, proc.stderr
    said = "gate: the change loosens the gate (against configuration at HEAD): adds 1 rule ignored by index:.policylint.yaml:3"
    assert said in proc.stderr


def test_gate_base_compares_the_configuration_whatever_the_files_reported_on(repo: Path) -> None:
    # The pre-commit hook's run: the files pre-commit passes, the whole repository as context.
    (repo / ".policylint.yaml").write_text("# gate\nfail-on: error\nignore: [PL201]\n")
    assert run(repo, "check", "--no-cache", "--context", ".", ".policylint.yaml").returncode == 0
    proc = run(repo, "check", "--no-cache", "--context", ".", "--gate-base", "HEAD", ".policylint.yaml")
    assert proc.returncode == 1, proc.stderr
    assert "adds 1 rule ignored by .policylint.yaml:3 (ignore[0]: PL201)" in proc.stderr


def test_gate_base_head_before_the_first_commit_compares_nothing(tmp_path: Path) -> None:
    (tmp_path / "policy.yaml").write_text(POLICY.replace("name: missing", "name: p"))
    (tmp_path / ".policylint.yaml").write_text("ignore: [PL201]\n")
    init(tmp_path)
    git(tmp_path, "add", ".")
    proc = run(tmp_path, "check", "--no-cache", "--context", ".", "--gate-base", "HEAD", "policy.yaml")
    assert proc.returncode == 0, proc.stderr
    assert "gate:" not in proc.stderr


# A policy CRD whose schema says what `spec.mode` may be and that `spec.limit` is positive; the
# policy below breaks both (PL703, PL704), and targets nothing that exists (PL201).
CRD_SCHEMA = """\
            properties:
              targetRefs:
                type: array
                items:
                  type: object
                  properties:
                    group: {type: string}
                    kind: {type: string}
                    name: {type: string}
              mode: {type: string, enum: [strict, lax]}
              limit: {type: integer, maximum: 10}
            required: [mode]
            x-kubernetes-validations:
            - rule: "self.limit > 0"
              message: limit must be positive
"""
EXAMPLE_POLICY = (
    "apiVersion: example.com/v1\nkind: ExamplePolicy\nmetadata: {name: e, namespace: n}\n"
    "spec:\n  targetRefs: [{group: '', kind: Service, name: missing}]\n  mode: whatever\n  limit: 0\n"
)
PROFILE = """\
project: in-house
policies:
- group: example.com
  kind: ExamplePolicy
  versions: [v1]
  class: Direct
  boilerplate: gep713
  targets:
    list: targetRefs
    kinds: [{group: '', kind: Service}]
  merge: {default: none}
  effectiveTarget: backend
"""


def _crd_text() -> str:
    from tests.manifests import crd

    return crd("ExamplePolicy", CRD_SCHEMA)


@pytest.fixture
def crd_repo(repo: Path) -> Path:
    """`repo` whose configuration names a CRD directory and a profile, committed."""
    (repo / "crds").mkdir()
    (repo / "crds" / "example.yaml").write_text(_crd_text())
    (repo / "profiles").mkdir()
    (repo / "profiles" / "mine.yaml").write_text(PROFILE)
    (repo / "example.yaml").write_text(EXAMPLE_POLICY)
    (repo / ".policylint.yaml").write_text("# gate\nfail-on: error\ncrd: [crds]\nprofile: [profiles/mine.yaml]\n")
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "crds and profiles")
    return repo


def _drop_validation(repo: Path) -> None:
    # The change under review: the CEL rule and the enum are gone from the CRD.
    text = _crd_text().replace('            x-kubernetes-validations:\n            - rule: "self.limit > 0"\n', "")
    text = text.replace("              message: limit must be positive\n", "").replace(", enum: [strict, lax]", "")
    (repo / "crds" / "example.yaml").write_text(text)


def _rules(proc: subprocess.CompletedProcess[str]) -> list[str]:
    return sorted(f["rule"] for f in json.loads(proc.stdout)["findings"])


def test_config_ref_reads_the_crds_its_configuration_names_from_the_ref(crd_repo: Path) -> None:
    _drop_validation(crd_repo)
    local = run(crd_repo, "check", "--no-cache", "--format", "json", "example.yaml")
    assert "PL704" not in _rules(local) and "PL703" not in _rules(local)
    # The base's CRD applies: its CEL rule and its enum still judge the policy, named REF:PATH.
    proc = run(crd_repo, "check", "--no-cache", "--format", "json", "--config-ref", "HEAD", "example.yaml")
    assert proc.returncode == 1, proc.stderr
    assert {"PL703", "PL704"} <= set(_rules(proc))
    # `diff` applies BASE's CRD to both sides: the policy's findings are unchanged, none fixed.
    diffed = json.loads(run(crd_repo, "diff", "HEAD", "--format", "json").stdout)
    assert not diffed["findings"]["fixed"]


def test_config_ref_reads_the_profiles_its_configuration_names_from_the_ref(crd_repo: Path) -> None:
    # The change makes the profile describe another kind: the policy falls back on its CRD's
    # profile, unless the base's profile applies.
    (crd_repo / "profiles" / "mine.yaml").write_text(PROFILE.replace("kind: ExamplePolicy", "kind: OtherPolicy"))

    def origin(*flags: str) -> str:
        proc = run(crd_repo, "check", "--no-cache", "--format", "json", *flags, "example.yaml")
        [policy] = [p for p in json.loads(proc.stdout)["policies"] if p["object"]["kind"] == "ExamplePolicy"]
        return str(policy["profileOrigin"])

    assert origin() == "crd"
    assert origin("--config-ref", "HEAD") == "profile"
    # A profile the ref does not hold is a usage error naming it REF:PATH, whatever the checkout holds.
    git(crd_repo, "rm", "-q", "--cached", "profiles/mine.yaml")
    git(crd_repo, "commit", "-qm", "no profile")
    proc = run(crd_repo, "check", "--no-cache", "--config-ref", "HEAD", "example.yaml")
    assert proc.returncode == 2
    assert "profile HEAD:profiles/mine.yaml: HEAD holds no such file" in proc.stderr


@pytest.mark.parametrize("what", ["crd", "profile"])
def test_a_symlink_named_by_the_configuration_at_the_ref_is_not_read(repo: Path, what: str) -> None:
    os.symlink("/etc/passwd", repo / "link.yaml")
    (repo / ".policylint.yaml").write_text(f"# gate\n{what}: [link.yaml]\n")
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "link")
    proc = run(repo, "check", "--no-cache", "--config-ref", "HEAD", "policy.yaml")
    assert proc.returncode == 2, proc.stderr
    assert f"{what} HEAD:link.yaml" in proc.stderr and "not a regular file (mode 120000)" in proc.stderr
    assert "root:" not in proc.stderr


def test_a_symlink_or_an_oversized_file_in_a_crd_directory_at_the_ref_is_not_read(crd_repo: Path) -> None:
    from policylint.input.bounds import MAX_FILE_BYTES

    os.symlink("/etc/passwd", crd_repo / "crds" / "passwd.yaml")
    with open(crd_repo / "crds" / "huge.yaml", "wb") as handle:
        handle.truncate(MAX_FILE_BYTES + 1)
    git(crd_repo, "add", ".")
    git(crd_repo, "commit", "-qm", "a link and a huge file")
    proc = run(crd_repo, "check", "--no-cache", "--format", "json", "--config-ref", "HEAD", "example.yaml")
    assert {"PL703", "PL704"} <= set(_rules(proc)), proc.stderr  # the regular file is read
    assert "crd HEAD:crds/passwd.yaml:1:1: not a regular file (mode 120000): not read" in proc.stderr
    assert f"crd HEAD:crds/huge.yaml:1:1: {MAX_FILE_BYTES + 1:,} bytes is more than policylint reads" in proc.stderr
    # Named by itself, an oversized profile at the ref is refused unread.
    from policylint.input.named import MAX_PROFILE_BYTES

    with open(crd_repo / "profiles" / "mine.yaml", "ab") as handle:
        handle.write(b"#" * MAX_PROFILE_BYTES)
    git(crd_repo, "commit", "-qam", "a huge profile")
    proc = run(crd_repo, "check", "--no-cache", "--config-ref", "HEAD", "example.yaml")
    assert proc.returncode == 2
    assert "profile HEAD:profiles/mine.yaml:" in proc.stderr and "is more than policylint reads from git" in proc.stderr


CLEAN = "apiVersion: v1\nkind: Service\nmetadata: {name: s, namespace: n}\nspec:\n  ports: [{port: 80}]\n"


def _gate(proc: subprocess.CompletedProcess[str]) -> dict[str, object]:
    gate = json.loads(proc.stdout)["gate"]
    assert isinstance(gate, dict)
    return gate


def test_an_edit_of_a_crd_the_base_names_is_listed_and_applied_from_the_ref(crd_repo: Path) -> None:
    _drop_validation(crd_repo)
    proc = run(crd_repo, "check", "--no-cache", "--format", "json", "--config-ref", "HEAD", "example.yaml")
    assert {"PL703", "PL704"} <= set(_rules(proc)), proc.stderr  # the base's CRD applies
    gate = _gate(proc)
    assert gate["changes"] == [
        {
            "subject": "crd",
            "loosens": True,
            "file": "crds/example.yaml",
            "line": 1,
            "message": "changes crd crds/example.yaml: drops the rule `self.limit > 0` at ExamplePolicy.example.com v1 spec;"
            " drops the enum at ExamplePolicy.example.com v1 spec.mode",
        }
    ]
    assert (
        "gate: the change loosens the gate (against configuration at HEAD): changes crd crds/example.yaml: drops" in proc.stderr
    )


def test_gate_base_fails_a_change_that_drops_a_crd_validation_rule(crd_repo: Path) -> None:
    (crd_repo / "ok.yaml").write_text(CLEAN)
    assert run(crd_repo, "check", "--no-cache", "--gate-base", "HEAD", "ok.yaml").returncode == 0
    _drop_validation(crd_repo)
    proc = run(crd_repo, "check", "--no-cache", "--gate-base", "HEAD", "ok.yaml")
    assert proc.returncode == 1, proc.stderr
    assert "changes crd crds/example.yaml: drops the rule `self.limit > 0`" in proc.stderr
    # So does --diff, and --staged once it is staged.
    assert run(crd_repo, "check", "--no-cache", "--diff", "HEAD", "ok.yaml").returncode == 1
    git(crd_repo, "add", "crds")
    proc = run(crd_repo, "check", "--no-cache", "--format", "json", "--staged")
    assert proc.returncode == 1
    [change] = _gate(proc)["changes"]  # type: ignore[misc]
    assert change["file"] == "index:crds/example.yaml"


@pytest.mark.parametrize(
    ("old", "new", "reason"),
    [
        ("maximum: 10", "maximum: 20", "raises maximum at ExamplePolicy.example.com v1 spec.limit"),
        ("maximum: 10", "minimum: 1", "drops maximum at ExamplePolicy.example.com v1 spec.limit"),
        ("required: [mode]", "required: []", "no longer requires mode at ExamplePolicy.example.com v1 spec"),
        (
            "enum: [strict, lax]",
            "enum: [strict, lax, loose]",
            'adds "loose" to the enum at ExamplePolicy.example.com v1 spec.mode',
        ),
        ("type: string, enum", "type: string, pattern: '^a', enum", None),  # a new constraint: listed only
        ("maximum: 10", "maximum: 5", None),
    ],
)
def test_which_crd_edits_loosen_the_gate(crd_repo: Path, old: str, new: str, reason: str | None) -> None:
    (crd_repo / "crds" / "example.yaml").write_text(_crd_text().replace(old, new))
    proc = run(crd_repo, "diff", "HEAD", "--format", "json")
    [change] = _gate(proc)["changes"]  # type: ignore[misc]
    if reason is None:
        assert (change["loosens"], change["message"]) == (False, "changes crd crds/example.yaml")
    else:
        assert (change["loosens"], change["message"]) == (True, f"changes crd crds/example.yaml: {reason}")
    assert proc.returncode == (1 if reason else 0)


def test_profile_edits_are_listed_and_one_that_drops_a_kind_fails(crd_repo: Path) -> None:
    (crd_repo / "ok.yaml").write_text(CLEAN)
    profile = crd_repo / "profiles" / "mine.yaml"
    profile.write_text(PROFILE.replace("effectiveTarget: backend", "effectiveTarget: route"))
    proc = run(crd_repo, "check", "--no-cache", "--format", "json", "--gate-base", "HEAD", "ok.yaml")
    assert proc.returncode == 0, proc.stderr
    assert [(c["message"], c["loosens"]) for c in _gate(proc)["changes"]] == [  # type: ignore[attr-defined]
        ("changes profile profiles/mine.yaml", False)
    ]
    profile.write_text(PROFILE.replace("kind: ExamplePolicy", "kind: OtherPolicy"))
    proc = run(crd_repo, "check", "--no-cache", "--gate-base", "HEAD", "ok.yaml")
    assert proc.returncode == 1, proc.stderr
    assert "changes profile profiles/mine.yaml: no longer describes ExamplePolicy.example.com" in proc.stderr
    profile.unlink()
    proc = run(crd_repo, "check", "--no-cache", "--format", "json", "--config-ref", "HEAD", "ok.yaml")
    assert proc.returncode == 1, proc.stderr
    assert [c["message"] for c in _gate(proc)["changes"]] == [  # type: ignore[attr-defined]
        "deletes profile profiles/mine.yaml: no longer describes ExamplePolicy.example.com"
    ]


def test_diff_between_commits_names_the_crd_edit_by_its_commit(crd_repo: Path) -> None:
    (crd_repo / "crds" / "more.yaml").write_text(
        _crd_text().replace("ExamplePolicy", "MorePolicy").replace("examplepolicies", "morepolicies")
    )
    _drop_validation(crd_repo)
    git(crd_repo, "add", ".")
    git(crd_repo, "commit", "-qm", "edit the CRDs")
    proc = run(crd_repo, "diff", "HEAD~1", "HEAD", "--format", "json")
    assert proc.returncode == 1, proc.stderr
    changes = _gate(proc)["changes"]
    assert [(c["file"], c["loosens"], c["message"].split(":")[0]) for c in changes] == [  # type: ignore[attr-defined]
        ("HEAD:crds/example.yaml", True, "changes crd crds/example.yaml"),
        ("HEAD:crds/more.yaml", False, "adds crd crds/more.yaml"),
    ]


@pytest.mark.parametrize(
    ("before", "after", "message"),
    [
        # TLSRoute v1alpha2 is refused by every standard channel and served by the experimental one.
        ("channel: standard\n", "channel: experimental\n", "changes `channel` from standard to experimental"),
        ("channel: standard\n", "", "changes `channel` from standard to unset"),
        ("", "implementations: [envoy-gateway@v1.7]\n", "changes `implementations` from unset to [envoy-gateway@v1.7]"),
        ("gateway-api-version: v1.6.1\n", "gateway-api-version: v1.3.0\n", "changes `gateway-api-version` from v1.6.1 to v1.3.0"),
    ],
)
@pytest.mark.slow
def test_a_change_of_the_cluster_description_loosens_the_gate(repo: Path, before: str, after: str, message: str) -> None:
    (repo / ".policylint.yaml").write_text("# gate\nfail-on: error\n" + before)
    git(repo, "commit", "-qam", "cluster", "--allow-empty")
    code, gate = _gate_of_diff(repo, "# gate\nfail-on: error\n" + after)
    [change] = gate["changes"]  # type: ignore[index]
    assert change["loosens"] is True
    assert change["message"] == (
        f"{message}: the schema rules judge objects against the cluster it describes, which may accept what the base's refused"
    )
    assert code == 1
