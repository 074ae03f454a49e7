"""The GitHub Action (action.yml): valid metadata, no script injection, and its steps run the way
a runner runs them.

- action.yml validates against the GitHub Actions schema bundled with check-jsonschema (offline);
- no `run:` script contains an expression (`${{ ... }}`): inputs reach the shell through `env:`
  only (GitHub Docs, "Security hardening for GitHub Actions", understanding the risk of script
  injections), and every `uses:` is pinned to a full commit SHA;
- the install and run steps are executed with bash as `shell: bash` runs them
  (`bash --noprofile --norc -eo pipefail {0}`), with the environment a runner sets
  (GITHUB_ACTIONS, GITHUB_OUTPUT, GITHUB_STEP_SUMMARY, GITHUB_WORKSPACE, RUNNER_TEMP) and the
  `env:` expressions evaluated; the install goes into a throwaway virtual environment that
  sees this one's dependencies, so only policylint itself is built. The outputs, the summary and
  the annotations are checked against a report made by the CLI directly.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import sysconfig
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.lintutil import ROOT

# Slow (each test runs the Action's steps as a runner does, installing the package): `make test` leaves it to `make test-all` (.ci/run).
pytestmark = pytest.mark.slow

ACTION = ROOT / "action.yml"
EXPRESSION = re.compile(r"\$\{\{\s*(.*?)\s*\}\}")


def action() -> dict[str, Any]:
    document = yaml.safe_load(ACTION.read_text(encoding="utf-8"))
    assert isinstance(document, dict)
    return document


def test_action_yml_is_valid_against_the_github_actions_schema() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "check_jsonschema", "--builtin-schema", "vendor.github-actions", str(ACTION)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_no_expression_in_a_script_and_every_action_pinned() -> None:
    steps = action()["runs"]["steps"]
    assert action()["runs"]["using"] == "composite"
    for step in steps:
        if "run" in step:
            assert "${{" not in step["run"], step["name"]
            assert step["shell"] == "bash"
        if "uses" in step:
            assert re.fullmatch(r"[\w.-]+/[\w.-]+@[0-9a-f]{40}", step["uses"]), step["uses"]
    text = ACTION.read_text(encoding="utf-8")
    assert "${{ inputs." not in "".join(s["run"] for s in steps if "run" in s)
    assert re.search(r"uses: actions/setup-python@[0-9a-f]{40} # v\d", text)


def test_inputs_and_outputs() -> None:
    document = action()
    assert set(document["inputs"]) == {
        "paths",
        "config",
        "fail-on",
        "diff",
        "trust",
        "sarif-file",
        "junit-file",
        "job-summary",
        "jobs",
        "version",
        "python-version",
    }
    assert document["inputs"]["job-summary"]["default"] == "true"
    assert document["inputs"]["jobs"]["default"] == "0"
    assert set(document["outputs"]) == {"exit-code", "findings", "sarif-file"}


def _evaluate(expression: str, context: dict[str, str]) -> str:
    # Only the expressions action.yml uses in `env:`: a new one fails here until it is added,
    # so this evaluator cannot silently drift from the file.
    if expression not in context:
        raise AssertionError(f"expression not supported by the test runner: {expression}")
    return context[expression]


def _run_steps(
    inputs: dict[str, str], workspace: Path, venv_bin: Path, tmp: Path, base_ref: str = ""
) -> tuple[int, str, dict[str, str], str]:
    """Run the composite action's `run:` steps; (exit code, stdout of the last step, outputs, summary)."""
    document = action()
    values = {name: spec.get("default", "") for name, spec in document["inputs"].items()}
    values.update(inputs)
    output_file = tmp / "github_output"
    summary_file = tmp / "step_summary"
    output_file.write_text("")
    if not summary_file.exists():
        summary_file.write_text("")
    runner_temp = tmp / "runner_temp"
    runner_temp.mkdir(exist_ok=True)
    context = {f"inputs.{k}": v for k, v in values.items()}
    context.update({"github.action_path": str(ROOT), "github.base_ref": base_ref, "runner.temp": str(runner_temp)})
    base_env = {
        "PATH": f"{venv_bin}{os.pathsep}{os.environ['PATH']}",
        "HOME": os.environ.get("HOME", str(tmp)),
        "GITHUB_ACTIONS": "true",
        "GITHUB_WORKSPACE": str(workspace),
        "GITHUB_OUTPUT": str(output_file),
        "GITHUB_STEP_SUMMARY": str(summary_file),
        "RUNNER_TEMP": str(runner_temp),
        "POLICYLINT_CACHE_DIR": os.environ.get("POLICYLINT_CACHE_DIR", str(tmp / "cache")),
        "PIP_DISABLE_PIP_VERSION_CHECK": "1",
    }
    for name in ("PIP_FIND_LINKS", "PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL", "PIP_CERT", "SSL_CERT_FILE", "REQUESTS_CA_BUNDLE"):
        if name in os.environ:
            base_env[name] = os.environ[name]
    code, stdout = 0, ""
    for step in document["runs"]["steps"]:
        if "run" not in step:
            continue  # actions/setup-python and actions/cache: the test's Python stands in
        env = dict(base_env)
        for key, value in (step.get("env") or {}).items():
            env[key] = EXPRESSION.sub(lambda m: _evaluate(m.group(1), context), str(value))
        script = tmp / "step.sh"
        script.write_text(step["run"])
        proc = subprocess.run(
            ["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script)],
            cwd=workspace,
            env=env,
            capture_output=True,
            text=True,
            check=False,
            timeout=600,
        )
        code, stdout = proc.returncode, proc.stdout
        if step.get("id") != "run":
            assert proc.returncode == 0, f"{step['name']}: {proc.stdout}{proc.stderr}"
    outputs = dict(line.split("=", 1) for line in output_file.read_text().splitlines() if "=" in line)
    return code, stdout, outputs, summary_file.read_text()


@pytest.fixture(scope="module")
def venv_bin(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A throwaway virtual environment that sees this one's packages (a `.pth` file), so that
    installing the action's checkout builds policylint alone and touches nothing here."""
    root = tmp_path_factory.mktemp("action-venv")
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(root)], check=True)
    bin_dir = root / ("Scripts" if os.name == "nt" else "bin")
    python = bin_dir / "python"
    purelib = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    Path(purelib).mkdir(parents=True, exist_ok=True)
    (Path(purelib) / "outer.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    return bin_dir


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("workspace")
    (root / "examples").mkdir()
    for path in (ROOT / "examples").rglob("*"):
        if path.is_file():
            target = root / "examples" / path.relative_to(ROOT / "examples")
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(path.read_bytes())
    (root / "clean").mkdir()
    (root / "clean" / "service.yaml").write_text(
        "apiVersion: v1\nkind: Service\nmetadata:\n  name: a\n  namespace: n\nspec:\n  ports:\n  - port: 80\n"
    )
    return root


def _expected_findings(workspace: Path, path: str) -> int:
    proc = subprocess.run(
        [sys.executable, "-m", "policylint", "check", "--format", "json", "--no-cache", path],
        cwd=workspace,
        capture_output=True,
        text=True,
        check=False,
    )
    return int(sum(json.loads(proc.stdout)["summary"]["findings"].values()))


def test_the_action_installs_and_lints_the_examples(workspace: Path, venv_bin: Path, tmp_path: Path) -> None:
    (tmp_path / "step_summary").write_text("earlier step\n")
    sarif = workspace / "reports" / "policylint.sarif"
    junit = workspace / "reports" / "junit.xml"
    code, stdout, outputs, summary = _run_steps(
        {"paths": "examples", "sarif-file": str(sarif), "junit-file": str(junit)}, workspace, venv_bin, tmp_path
    )
    assert code == 1
    assert outputs["exit-code"] == "1"
    assert outputs["findings"] == str(_expected_findings(workspace, "examples"))
    assert outputs["sarif-file"] == str(sarif)
    assert json.loads(sarif.read_text())["version"] == "2.1.0"
    assert junit.read_text().startswith("<?xml")
    # Appended to what earlier steps wrote, not replacing it.
    assert summary.startswith("earlier step\n## policylint\n")
    assert "### Policies" in summary
    assert any(line.startswith("::error file=examples/") for line in stdout.splitlines())
    assert stdout.splitlines()[-1].startswith("::notice title=policylint::")


def test_the_action_on_a_clean_input_and_without_a_summary(workspace: Path, venv_bin: Path, tmp_path: Path) -> None:
    (tmp_path / "step_summary").write_text("untouched\n")
    code, _, outputs, summary = _run_steps({"paths": "clean", "job-summary": "false"}, workspace, venv_bin, tmp_path)
    assert code == 0
    assert (outputs["exit-code"], outputs["findings"]) == ("0", "0")
    assert "sarif-file" not in outputs
    assert summary == "untouched\n"


def test_a_hostile_input_value_is_data_not_code(workspace: Path, venv_bin: Path, tmp_path: Path) -> None:
    marker = tmp_path / "owned"
    code, _, outputs, _ = _run_steps({"paths": f"clean\n$(touch {marker})", "fail-on": "error"}, workspace, venv_bin, tmp_path)
    assert not marker.exists()
    assert code == 2  # `$(touch ...)` is a path that does not exist: a usage error
    assert outputs["exit-code"] == "2"


def test_jobs_reach_the_command_as_data(workspace: Path, venv_bin: Path, tmp_path: Path) -> None:
    expected = _expected_findings(workspace, "examples")
    for jobs in ("2", ""):
        code, _, outputs, _ = _run_steps({"paths": "examples", "jobs": jobs}, workspace, venv_bin, tmp_path)
        assert (code, outputs["findings"]) == (1, str(expected))
    marker = tmp_path / "owned"
    code, _, outputs, _ = _run_steps({"paths": "clean", "jobs": f"$(touch {marker})"}, workspace, venv_bin, tmp_path)
    assert not marker.exists()
    assert code == 2  # not a number: a usage error
    assert outputs["exit-code"] == "2"


def test_the_readme_shows_github_gitlab_and_jenkins() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    ci = readme[readme.index("\n## CI\n") : readme.index("\n## pre-commit\n")]
    assert "uses: policylint/policylint@v0.1.0" in ci
    assert re.search(r"uses: github/codeql-action/upload-sarif@[0-9a-f]{40} # v\d", ci)
    assert "codequality: gl-code-quality-report.json" in ci and "--output gitlab=gl-code-quality-report.json" in ci
    assert "junit 'policylint-junit.xml'" in ci and "--output junit=policylint-junit.xml" in ci
    # Every action a snippet uses is pinned to a commit, except policylint's own release tag.
    for uses in re.findall(r"uses: (\S+)", ci):
        assert uses.startswith("policylint/policylint@") or re.fullmatch(r"[\w./-]+@[0-9a-f]{40}", uses), uses


def _git(cwd: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.email=t@example.com", "-c", "user.name=t", "-c", "commit.gpgsign=false", *args],
        cwd=cwd,
        check=True,
        capture_output=True,
    )


@pytest.fixture
def pull_request(tmp_path: Path) -> Path:
    """A checkout of a pull request whose base branch (origin/main) gates PL201, and whose change
    switches it off in the configuration and baselines a finding it adds."""
    repo = tmp_path / "repo"
    repo.mkdir()
    _git(repo, "init", "-q")
    (repo / "policy.yaml").write_text(
        "apiVersion: gateway.networking.k8s.io/v1\nkind: BackendTLSPolicy\nmetadata: {name: p, namespace: n}\n"
        "spec:\n  targetRefs: [{group: '', kind: Service, name: missing}]\n"
        "  validation: {hostname: x.example.com, wellKnownCACertificates: System}\n"
    )
    (repo / ".policylint.yaml").write_text("paths: [.]\n")
    _git(repo, "add", ".")
    _git(repo, "commit", "-qm", "base")
    _git(repo, "update-ref", "refs/remotes/origin/main", "HEAD")
    (repo / ".policylint.yaml").write_text("paths: [.]\nseverity: {PL: off}\n")
    _git(repo, "commit", "-qam", "loosen")
    return repo


def test_on_a_pull_request_the_base_branch_configuration_is_trusted(pull_request: Path, venv_bin: Path, tmp_path: Path) -> None:
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    code, stdout, _, summary = _run_steps({}, pull_request, venv_bin, scratch, base_ref="main")
    # The base branch's configuration applies: PL201 still fails the step ...
    assert code == 1
    assert any("PL201" in line for line in stdout.splitlines() if line.startswith("::error"))
    # ... and the change that turns every rule off is named, with its file and line.
    assert "The change loosens the gate" in summary
    assert ".policylint.yaml:2" in summary


def test_trust_checkout_applies_the_checked_out_configuration(pull_request: Path, venv_bin: Path, tmp_path: Path) -> None:
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    code, _, outputs, summary = _run_steps({"trust": "checkout"}, pull_request, venv_bin, scratch, base_ref="main")
    assert (code, outputs["findings"]) == (0, "0")
    # Not silent: the summary says what the configuration turned off, and where.
    assert "rules off by .policylint.yaml:2" in summary


def test_trust_base_without_a_pull_request_is_an_error(pull_request: Path, venv_bin: Path, tmp_path: Path) -> None:
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    code, stdout, outputs, _ = _run_steps({"trust": "base"}, pull_request, venv_bin, scratch)
    assert code == 2
    assert outputs["exit-code"] == "2"
    assert "trust: base" in stdout
