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
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.gitrepo import git, init
from tests.lintutil import ROOT

# Slow (each test runs the Action's steps as a runner does, installing the package): `make test` leaves it to `make test-all` (.ci/run).
# One worker (`xdist_group`): the runs share one runner's temporary directory (`runner_temp`), where
# the first installs policylint and the others find it; spread over the workers, each installed it.
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("action")]

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
        "args",
        "upload-reports",
        "artifact-name",
        "version",
        "python-version",
    }
    assert document["inputs"]["job-summary"]["default"] == "true"
    assert document["inputs"]["jobs"]["default"] == "0"
    assert document["inputs"]["upload-reports"]["default"] == "true"
    assert document["inputs"]["version"]["default"] == ""  # the Action's own release
    assert set(document["outputs"]) == {"exit-code", "findings", "sarif-file", "report-dir", "artifact-url"}


def test_the_job_python_is_never_changed() -> None:
    """actions/setup-python runs only when the runner has no Python 3.10 or newer, and then
    without putting it on PATH; nothing writes GITHUB_PATH or GITHUB_ENV, and pip installs only
    into policylint's own environment."""
    steps = action()["runs"]["steps"]
    (setup,) = [s for s in steps if s.get("uses", "").startswith("actions/setup-python@")]
    assert setup["if"] == "steps.python.outputs.python == ''"
    assert setup["with"]["update-environment"] is False
    scripts = "".join(s["run"] for s in steps if "run" in s)
    assert "GITHUB_PATH" not in scripts and "GITHUB_ENV" not in scripts
    installs = [line.strip() for line in scripts.splitlines() if "pip install" in line]
    assert installs == ['"$POLICYLINT_BIN/python" -m pip install --disable-pip-version-check --quiet "$POLICYLINT_SPEC"']


UPLOADED_URL = "https://github.com/o/r/actions/runs/1/artifacts/2"


def _evaluate(expression: str, context: dict[str, str]) -> str:
    # Only the expressions action.yml uses: a new one fails here until it is added, so this
    # evaluator cannot silently drift from the file. A step output nobody wrote is "", as on a runner.
    if expression.startswith("steps."):
        return context.get(expression, "")
    if expression not in context:
        raise AssertionError(f"expression not supported by the test runner: {expression}")
    return context[expression]


def _condition(expression: str, context: dict[str, str]) -> bool:
    """An `if:` of action.yml: comparisons with a quoted string, joined by `&&`."""
    result = True
    for clause in expression.split("&&"):
        match = re.fullmatch(r"\s*([\w.-]+)\s*(==|!=)\s*'([^']*)'\s*", clause)
        assert match, f"condition not supported by the test runner: {expression}"
        value = _evaluate(match.group(1), context)
        result = result and ((value == match.group(3)) == (match.group(2) == "=="))
    return result


@dataclass
class Run:
    code: int  # the action's: its last step's exit code
    stdout: str  # every step's
    outputs: dict[str, str]  # the action's outputs, as action.yml maps them
    summary: str
    uploaded: list[str] | None  # what actions/upload-artifact was given, or None: not run
    job_files: dict[str, str]  # GITHUB_PATH and GITHUB_ENV: how a step changes later steps


def _run_steps(inputs: dict[str, str], workspace: Path, venv_bin: Path, tmp: Path, runner_temp: Path, base_ref: str = "") -> Run:
    """Run the composite action's steps as a runner does: its `run:` steps with bash, each with its
    own GITHUB_OUTPUT read into `steps.<id>.outputs`; actions/setup-python is not needed (the
    job's Python is 3.10 or newer), actions/cache stands for a cache miss or, with `runner_temp`
    shared, for a restored one, and actions/upload-artifact records the directory it is given."""
    document = action()
    values = {name: spec.get("default", "") for name, spec in document["inputs"].items()}
    values.update(inputs)
    summary_file = tmp / "step_summary"
    if not summary_file.exists():
        summary_file.write_text("")
    job_files = {"GITHUB_PATH": tmp / "github_path", "GITHUB_ENV": tmp / "github_env"}
    for path in job_files.values():
        path.write_text("")
    runner_temp.mkdir(exist_ok=True)
    context = {f"inputs.{k}": v for k, v in values.items()}
    context.update(
        {"github.action_path": str(ROOT), "github.base_ref": base_ref, "runner.temp": str(runner_temp), "runner.os": "Linux"}
    )
    base_env = {
        "PATH": f"{venv_bin}{os.pathsep}{os.environ['PATH']}",
        "HOME": os.environ.get("HOME", str(tmp)),
        "GITHUB_ACTIONS": "true",
        "GITHUB_WORKSPACE": str(workspace),
        "GITHUB_STEP_SUMMARY": str(summary_file),
        "RUNNER_TEMP": str(runner_temp),
        "POLICYLINT_CACHE_DIR": os.environ.get("POLICYLINT_CACHE_DIR", str(tmp / "cache")),
        "PIP_DISABLE_PIP_VERSION_CHECK": "1",
        **{name: str(path) for name, path in job_files.items()},
    }
    for name in ("PIP_FIND_LINKS", "PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL", "PIP_CERT", "SSL_CERT_FILE", "REQUESTS_CA_BUNDLE"):
        if name in os.environ:
            base_env[name] = os.environ[name]
    code, stdout, uploaded = 0, "", None
    steps = document["runs"]["steps"]
    for index, step in enumerate(steps):
        if "if" in step and not _condition(step["if"], context):
            continue
        with_ = {k: EXPRESSION.sub(lambda m: _evaluate(m.group(1), context), str(v)) for k, v in (step.get("with") or {}).items()}
        step_id = step.get("id", f"step{index}")
        if "uses" in step:
            name = step["uses"].split("@")[0]
            if name == "actions/upload-artifact":
                uploaded = sorted(p.name for p in Path(with_["path"]).iterdir())
                context[f"steps.{step_id}.outputs.artifact-url"] = UPLOADED_URL
            else:
                assert name == "actions/cache", f"{name} is not expected to run here"
            continue
        output_file = tmp / f"output-{index}"
        output_file.write_text("")
        env = dict(base_env, GITHUB_OUTPUT=str(output_file))
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
        code, stdout = proc.returncode, stdout + proc.stdout
        if index != len(steps) - 1:
            assert proc.returncode == 0, f"{step['name']}: {proc.stdout}{proc.stderr}"
        for line in output_file.read_text().splitlines():
            key, _, value = line.partition("=")
            context[f"steps.{step_id}.outputs.{key}"] = value
    outputs = {}
    for name, spec in document["outputs"].items():
        value = EXPRESSION.sub(lambda m: _evaluate(m.group(1), context), spec["value"])
        if value:
            outputs[name] = value
    return Run(code, stdout, outputs, summary_file.read_text(), uploaded, {k: p.read_text() for k, p in job_files.items()})


@pytest.fixture(scope="module")
def runner_temp(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The runner's temporary directory, shared by the module's runs: the first installs policylint
    into its virtual environment there, the others find it as a restored cache would leave it."""
    return tmp_path_factory.mktemp("runner_temp")


@pytest.fixture(scope="module")
def venv_bin(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The job's Python: a throwaway virtual environment first on PATH, which sees this one's
    packages (a `.pth` file). The action must leave it as it is."""
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


def _snapshot(directory: Path) -> list[tuple[str, int]]:
    return sorted((str(p.relative_to(directory)), p.stat().st_mtime_ns) for p in directory.rglob("*") if not p.is_symlink())


def test_the_action_installs_and_lints_the_examples(workspace: Path, venv_bin: Path, tmp_path: Path, runner_temp: Path) -> None:
    job_python = _snapshot(venv_bin.parent)
    (tmp_path / "step_summary").write_text("earlier step\n")
    sarif = workspace / "reports" / "policylint.sarif"
    junit = workspace / "reports" / "junit.xml"
    run = _run_steps(
        {"paths": "examples", "sarif-file": str(sarif), "junit-file": str(junit)}, workspace, venv_bin, tmp_path, runner_temp
    )
    assert run.code == 1
    assert run.outputs["exit-code"] == "1"
    assert run.outputs["findings"] == str(_expected_findings(workspace, "examples"))
    assert run.outputs["sarif-file"] == str(sarif)
    assert json.loads(sarif.read_text())["version"] == "2.1.0"
    assert junit.read_text().startswith("<?xml")
    # Appended to what earlier steps wrote, not replacing it.
    assert run.summary.startswith("earlier step\n## policylint\n")
    assert "### Policies" in run.summary
    assert any(line.startswith("::error file=examples/") for line in run.stdout.splitlines())
    assert any(line.startswith("::notice title=policylint::") and "full report: " in line for line in run.stdout.splitlines())
    # The reports written, uploaded from the runner's temporary directory, and linked from the
    # summary and a notice.
    report_dir = runner_temp / "policylint-reports"
    assert run.outputs["report-dir"] == str(report_dir)
    assert run.uploaded == ["junit.xml", "policylint.sarif", "report.json", "summary.md"]
    assert json.loads((report_dir / "report.json").read_text())["schemaVersion"] == 1
    assert run.outputs["artifact-url"] == UPLOADED_URL
    assert run.summary.endswith(
        f"\nFull reports (`junit.xml`, `policylint.sarif`, `report.json`, `summary.md`): the artifact [policylint-reports]({UPLOADED_URL}).\n"
    )
    assert f"::notice title=policylint::reports uploaded as the artifact policylint-reports: {UPLOADED_URL}" in run.stdout
    # policylint ran from its own environment under the runner's temporary directory; the job's
    # Python, PATH and environment are as they were.
    assert (runner_temp / "policylint-venv" / "bin" / "policylint").is_file()
    assert _snapshot(venv_bin.parent) == job_python
    assert run.job_files == {"GITHUB_PATH": "", "GITHUB_ENV": ""}


def test_the_action_on_a_clean_input_and_without_a_summary(
    workspace: Path, venv_bin: Path, tmp_path: Path, runner_temp: Path
) -> None:
    (tmp_path / "step_summary").write_text("untouched\n")
    run = _run_steps(
        {"paths": "clean", "job-summary": "false", "upload-reports": "false"}, workspace, venv_bin, tmp_path, runner_temp
    )
    assert run.code == 0
    assert (run.outputs["exit-code"], run.outputs["findings"]) == ("0", "0")
    assert "sarif-file" not in run.outputs and "artifact-url" not in run.outputs
    assert run.uploaded is None
    assert run.summary == "untouched\n"
    assert "policylint from the cache: policylint, version " in run.stdout  # installed once, by the first run


def test_args_are_passed_through_as_words(workspace: Path, venv_bin: Path, tmp_path: Path, runner_temp: Path) -> None:
    run = _run_steps(
        {"paths": "examples", "args": "--select 'PL201' --fail-on warning"}, workspace, venv_bin, tmp_path, runner_temp
    )
    assert run.code == 1
    rules = {m.group(1) for m in re.finditer(r"^::(?:error|warning|notice) file=[^:]*,title=(PL\d{3}) ", run.stdout, re.M)}
    assert rules == {"PL201"}
    report = json.loads((runner_temp / "policylint-reports" / "report.json").read_text())
    assert {f["rule"] for f in report["findings"]} == {"PL201"}
    # A word of `args` is data: `$(...)` runs nothing, and unbalanced quotes are a usage error.
    marker = tmp_path / "owned"
    run = _run_steps({"paths": "clean", "args": f"$(touch {marker})"}, workspace, venv_bin, tmp_path, runner_temp)
    assert not marker.exists()
    assert run.code == 2
    run = _run_steps({"paths": "clean", "args": "--select 'PL2"}, workspace, venv_bin, tmp_path, runner_temp)
    assert (run.code, run.outputs["exit-code"]) == (2, "2")
    assert "args: unbalanced quotes" in run.stdout


def test_a_hostile_input_value_is_data_not_code(workspace: Path, venv_bin: Path, tmp_path: Path, runner_temp: Path) -> None:
    marker = tmp_path / "owned"
    run = _run_steps({"paths": f"clean\n$(touch {marker})", "fail-on": "error"}, workspace, venv_bin, tmp_path, runner_temp)
    assert not marker.exists()
    assert run.code == 2  # `$(touch ...)` is a path that does not exist: a usage error
    assert run.outputs["exit-code"] == "2"


def test_jobs_reach_the_command_as_data(workspace: Path, venv_bin: Path, tmp_path: Path, runner_temp: Path) -> None:
    expected = _expected_findings(workspace, "examples")
    for jobs in ("2", ""):
        run = _run_steps({"paths": "examples", "jobs": jobs}, workspace, venv_bin, tmp_path, runner_temp)
        assert (run.code, run.outputs["findings"]) == (1, str(expected))
    marker = tmp_path / "owned"
    run = _run_steps({"paths": "clean", "jobs": f"$(touch {marker})"}, workspace, venv_bin, tmp_path, runner_temp)
    assert not marker.exists()
    assert run.code == 2  # not a number: a usage error
    assert run.outputs["exit-code"] == "2"


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


@pytest.fixture
def pull_request(tmp_path: Path) -> Path:
    """A checkout of a pull request whose base branch (origin/main) gates PL201, and whose change
    switches it off in the configuration and baselines a finding it adds."""
    repo = init(tmp_path / "repo")
    (repo / "policy.yaml").write_text(
        "apiVersion: gateway.networking.k8s.io/v1\nkind: BackendTLSPolicy\nmetadata: {name: p, namespace: n}\n"
        "spec:\n  targetRefs: [{group: '', kind: Service, name: missing}]\n"
        "  validation: {hostname: x.example.com, wellKnownCACertificates: System}\n"
        # Another Service in namespace n: the repository manages Services there, so PL201 is an error.
        "---\napiVersion: v1\nkind: Service\nmetadata: {name: other, namespace: n}\nspec: {ports: [{port: 80}]}\n"
    )
    (repo / ".policylint.yaml").write_text("paths: [.]\n")
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "base")
    git(repo, "update-ref", "refs/remotes/origin/main", "HEAD")
    (repo / ".policylint.yaml").write_text("paths: [.]\nseverity: {PL: off}\n")
    git(repo, "commit", "-qam", "loosen")
    return repo


def test_on_a_pull_request_the_base_branch_configuration_is_trusted(
    pull_request: Path, venv_bin: Path, tmp_path: Path, runner_temp: Path
) -> None:
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    run = _run_steps({}, pull_request, venv_bin, scratch, runner_temp, base_ref="main")
    # The base branch's configuration applies: PL201 still fails the step ...
    assert run.code == 1
    assert any("PL201" in line for line in run.stdout.splitlines() if line.startswith("::error"))
    # ... and the change that turns every rule off is named, with its file and line.
    assert "The change loosens the gate" in run.summary
    assert ".policylint.yaml:2" in run.summary


def test_trust_checkout_applies_the_checked_out_configuration(
    pull_request: Path, venv_bin: Path, tmp_path: Path, runner_temp: Path
) -> None:
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    run = _run_steps({"trust": "checkout"}, pull_request, venv_bin, scratch, runner_temp, base_ref="main")
    assert (run.code, run.outputs["findings"]) == (0, "0")
    # Not silent: the summary says what the configuration turned off, and where.
    assert "rules off by .policylint.yaml:2" in run.summary


def test_trust_base_without_a_pull_request_is_an_error(
    pull_request: Path, venv_bin: Path, tmp_path: Path, runner_temp: Path
) -> None:
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    run = _run_steps({"trust": "base"}, pull_request, venv_bin, scratch, runner_temp)
    assert run.code == 2
    assert run.outputs["exit-code"] == "2"
    assert "trust: base" in run.stdout
