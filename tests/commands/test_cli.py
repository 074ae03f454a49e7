"""The command line contract (README "Usage", "Exit codes"): commands, exit codes, streams, determinism."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from policylint import __version__, pipeline
from policylint.cli import cli
from policylint.entry import main
from policylint.rules import REGISTRY
from policylint.rules.docs import catalogue_markdown, doc_path
from tests.lintutil import ROOT, assert_valid_report
from tests.rules.test_engine import Warner, use_rules

SERVICE = """\
apiVersion: v1
kind: Service
metadata:
  name: {name}
  namespace: app
spec:
  ports:
  - name: https
    port: 443
"""

POLICY = """\
apiVersion: gateway.networking.k8s.io/v1
kind: BackendTLSPolicy
metadata:
  name: {name}-tls
  namespace: app
spec:
  targetRefs:
  - group: ""
    kind: Service
    name: {name}
    sectionName: https
  validation:
    hostname: {name}.app.svc.cluster.local
    wellKnownCACertificates: System
"""

CLEAN = SERVICE.format(name="web") + "---\n" + POLICY.format(name="web")
INFO_ONLY = "apiVersion: v1\nmetadata:\n  name: not-an-object\n"  # PL003 (info)
ERRORS = "apiVersion: v1\nkind: Service\nmetadata:\n  name: web\n  labels: {tier: 1}\n  name: again\n---\nbroken: [\n"


def invoke(*args: str, input: bytes | str | None = None, env: dict[str, str] | None = None) -> Result:
    return CliRunner().invoke(cli, list(args), input=input, env=env)


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def findings_of(result: Result) -> list[dict[str, Any]]:
    report = json.loads(result.stdout)
    assert_valid_report(report)
    return report["findings"]  # type: ignore[no-any-return]


# -- commands -----------------------------------------------------------------------------------


def test_check_is_the_default_command(tmp_path: Path) -> None:
    path = write(tmp_path, "m.yaml", ERRORS)
    implicit = invoke(str(path))
    explicit = invoke("check", str(path))
    assert implicit.exit_code == explicit.exit_code == 1
    assert implicit.stdout == explicit.stdout != ""
    assert implicit.stderr == explicit.stderr
    with_options = invoke("--format", "json", "--select", "PL0", str(path))
    assert with_options.exit_code == 1 and json.loads(with_options.stdout)["findings"]


def test_no_arguments_is_a_usage_error() -> None:
    assert invoke().exit_code == 2
    assert invoke("check").exit_code == 2


def test_rules_lists_the_whole_catalogue() -> None:
    result = invoke("rules")
    assert result.exit_code == 0
    lines = result.stdout.splitlines()
    assert [line.split()[0] for line in lines] == [r.id for r in REGISTRY]
    for rule, line in zip(REGISTRY, lines):
        assert line.split()[1:3] == [rule.name, rule.severity.label]
        assert line.endswith(rule.summary())
    markdown = invoke("rules", "--format", "markdown")
    assert markdown.exit_code == 0 and markdown.stdout == catalogue_markdown()


@pytest.mark.parametrize("code", ["PL001", "pl001", "yaml-syntax-error"])
def test_rule_prints_its_documentation(code: str) -> None:
    result = invoke("rule", code)
    assert result.exit_code == 0
    rule = next(r for r in REGISTRY if r.id == "PL001")
    assert result.stdout == doc_path(rule).read_text(encoding="utf-8")
    assert result.stdout.startswith("# PL001 yaml-syntax-error\n")


def test_an_empty_directory_is_said_and_passes(tmp_path: Path) -> None:
    # As ruff's "No Python files found": a warning on standard error and exit 0, with an empty
    # report; a path that does not exist stays a usage error.
    (tmp_path / "empty").mkdir()
    (tmp_path / "empty" / "notes.md").write_text("# not a manifest\n")
    result = invoke("--format", "json", str(tmp_path / "empty"))
    assert result.exit_code == 0
    assert f"policylint: warning: no manifests found under {tmp_path / 'empty'}" in result.stderr
    assert findings_of(result) == []
    # Next to a directory with manifests, the empty one is said and the other one linted.
    write(tmp_path, "full/m.yaml", ERRORS)
    both = invoke("--format", "json", str(tmp_path / "empty"), str(tmp_path / "full"))
    assert both.exit_code == 1 and findings_of(both)
    assert "no manifests found under" in both.stderr


@pytest.mark.parametrize("code", ["PL000", "pl000", "internal-error"])
def test_rule_prints_the_internal_error_doc(code: str) -> None:
    result = invoke("rule", code)
    assert result.exit_code == 0
    assert result.stdout.startswith("# PL000 internal-error\n")
    assert "## What it checks" in result.stdout


@pytest.mark.parametrize("code", ["nope", "PL99", "PL0"])
def test_rule_unknown_is_a_usage_error(code: str) -> None:
    result = invoke("rule", code)
    assert result.exit_code == 2
    assert result.stdout == ""
    assert "no rule" in result.stderr


def test_version() -> None:
    result = invoke("--version")
    assert result.exit_code == 0
    assert result.stdout.strip() == f"policylint, version {__version__} (YAML parser: libyaml)"


def test_version_fast_path_imports_nothing_heavy() -> None:
    code = (
        "import sys\n"
        "from policylint.entry import main\n"
        "code = main(['--version'])\n"
        "heavy = [m for m in ('click', 'yaml', 'pydantic', 'jsonschema', 'policylint.cli', 'policylint.pipeline') if m in sys.modules]\n"
        "print(code, heavy)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == [f"policylint, version {__version__} (YAML parser: libyaml)", "0 []"]


# -- exit codes ------------------------------------------------------------------------------------


@pytest.fixture
def inputs(tmp_path: Path) -> dict[str, Path]:
    (tmp_path / "empty").mkdir()
    write(tmp_path, "empty/README.md", "no manifests here")
    return {
        "clean": write(tmp_path, "clean.yaml", CLEAN),
        "info": write(tmp_path, "info.yaml", INFO_ONLY),
        "errors": write(tmp_path, "errors.yaml", ERRORS),
        "missing": tmp_path / "missing.yaml",
        "empty-dir": tmp_path / "empty",
    }


@pytest.mark.parametrize(
    ("name", "options", "code"),
    [
        ("clean", [], 0),
        ("info", [], 0),
        ("info", ["--fail-on", "warning"], 0),
        ("info", ["--fail-on", "info"], 1),
        ("info", ["--fail-on", "INFO"], 1),
        ("errors", [], 1),
        ("errors", ["--exit-zero"], 0),
        ("errors", ["--fail-on", "info", "--exit-zero"], 0),
        ("errors", ["--ignore", "PL0"], 0),
        ("errors", ["--select", "PL003"], 0),
        ("missing", [], 2),
        ("missing", ["--exit-zero"], 2),
        ("empty-dir", [], 0),
        ("errors", ["--select", "PL0,NOPE"], 2),
        ("errors", ["--ignore", "PL999"], 2),
        ("errors", ["--fail-on", "fatal"], 2),
        ("errors", ["--format", "xml"], 2),
    ],
)
@pytest.mark.parametrize("fmt", ["text", "json"])
def test_exit_codes_are_the_same_for_every_format(
    inputs: dict[str, Path], name: str, options: list[str], code: int, fmt: str
) -> None:
    format_option = [] if "--format" in options else ["--format", fmt]
    result = invoke(*format_option, *options, str(inputs[name]))
    assert result.exit_code == code, result.output
    if code == 2:
        assert result.stdout == ""  # no partial report for usage errors
        assert result.stderr.strip() != ""
    elif fmt == "json":
        findings_of(result)


def test_fail_on_warning(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    use_rules(monkeypatch, Warner)
    path = write(tmp_path, "clean.yaml", CLEAN)
    assert invoke(str(path)).exit_code == 0
    assert invoke("--fail-on", "warning", str(path)).exit_code == 1
    assert invoke("--fail-on", "info", str(path)).exit_code == 1
    assert invoke("--fail-on", "warning", "--ignore", "warner", str(path)).exit_code == 0


def test_usage_error_messages(inputs: dict[str, Path]) -> None:
    missing = invoke(str(inputs["missing"]))
    assert "path does not exist" in missing.stderr
    unknown = invoke("--select", "PL0,NOPE", str(inputs["clean"]))
    assert "no rule matches NOPE" in unknown.stderr


# -- select / ignore ---------------------------------------------------------------------------------


def _rules(result: Result) -> list[str]:
    return [f["rule"] for f in findings_of(result)]


def test_select_and_ignore(inputs: dict[str, Path]) -> None:
    path = str(inputs["errors"])
    everything = _rules(invoke("--format", "json", path))
    assert everything == ["PL009", "PL002", "PL001"]
    assert _rules(invoke("--format", "json", "--select", "PL0", "--ignore", "PL002", path)) == ["PL009", "PL001"]
    assert _rules(invoke("--format", "json", "--select", "PL002", "--ignore", "PL0", path)) == ["PL002"]
    assert _rules(invoke("--format", "json", "--select", "PL001,PL002", path)) == ["PL002", "PL001"]
    assert _rules(invoke("--format", "json", "--select", "PL001", "--select", "PL009", path)) == ["PL009", "PL001"]
    assert _rules(invoke("--format", "json", "--ignore", "duplicate-mapping-key", path)) == ["PL009", "PL001"]
    assert _rules(invoke("--format", "json", "--select", "yaml", path)) == ["PL001"]


# -- streams ----------------------------------------------------------------------------------------------


@pytest.mark.usefixtures("validate_json_reports")  # the report of the command, end to end, is valid
def test_json_goes_to_stdout_and_the_summary_to_stderr(inputs: dict[str, Path]) -> None:
    result = invoke("--format", "json", str(inputs["errors"]), str(inputs["clean"]))
    report = json.loads(result.stdout)  # nothing but the document
    assert_valid_report(report)
    assert report["summary"]["files"] == 2
    assert result.stderr.strip() == "3 errors, 0 warnings, 0 info in 2 files (3 objects, 1 policy)"


def test_the_other_tests_read_the_json_report_unchecked() -> None:
    """The schema check of every JSON report runs in the reporter tests and the one above: each
    check of a large report takes milliseconds, and most tests only read what a report says."""
    from policylint.reporters import json as json_reporter

    assert json_reporter.report.__module__ == json_reporter.pieces.__module__ == "policylint.reporters.json"


def test_text_goes_to_stdout_and_the_summary_to_stderr(inputs: dict[str, Path]) -> None:
    result = invoke(str(inputs["errors"]))
    lines = result.stdout.splitlines()
    assert len(lines) == 3
    assert all(line.startswith(str(inputs["errors"]) + ":") for line in lines)
    assert "errors" not in result.stdout.split(":")[-1]
    assert result.stderr.strip() == "3 errors, 0 warnings, 0 info in 1 file (1 object, 0 policies)"


def test_clean_run_prints_no_findings(inputs: dict[str, Path]) -> None:
    text = invoke(str(inputs["clean"]))
    assert text.exit_code == 0 and text.stdout == ""
    assert text.stderr.startswith("0 errors, 0 warnings, 0 info in 1 file")
    as_json = invoke("--format", "json", str(inputs["clean"]))
    assert findings_of(as_json) == []


def test_stdin_with_a_file_name() -> None:
    result = invoke("--format", "json", "-", "--stdin-filename", "team/web.yaml", input=ERRORS)
    assert result.exit_code == 1
    findings = findings_of(result)
    assert {f["file"] for f in findings} == {"team/web.yaml"}
    assert [(f["rule"], f["line"], f["column"]) for f in findings] == [("PL009", 5, 12), ("PL002", 6, 3), ("PL001", 8, 10)]


def test_stdin_without_a_file_name() -> None:
    result = invoke("-", input=INFO_ONLY)
    assert result.exit_code == 0
    assert result.stdout.startswith("<stdin>:1:1: info PL003 ")


def _subprocess(*args: str, cwd: Path = ROOT, input: str | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("NO_COLOR", None)
    return subprocess.run(
        [sys.executable, "-m", "policylint", *args], capture_output=True, text=True, cwd=cwd, env=env, input=input, timeout=300
    )


def test_the_installed_entry_point_behaves_like_the_click_command(inputs: dict[str, Path]) -> None:
    args = ["--format", "json", str(inputs["errors"]), str(inputs["clean"])]
    proc = _subprocess(*args)
    in_process = invoke(*args)
    assert proc.returncode == in_process.exit_code == 1
    assert proc.stdout == in_process.stdout
    assert proc.stderr == in_process.stderr
    assert_valid_report(json.loads(proc.stdout))
    assert _subprocess(str(inputs["missing"])).returncode == 2
    assert _subprocess(str(inputs["clean"])).returncode == 0
    assert _subprocess("rule", "nope").returncode == 2
    piped = _subprocess("-", "--stdin-filename", "x.yaml", input=ERRORS)
    assert piped.returncode == 1 and piped.stdout.startswith("x.yaml:")
    version = _subprocess("--version")
    assert (version.returncode, version.stdout) == (0, f"policylint, version {__version__} (YAML parser: libyaml)\n")


def test_an_unexpected_exception_is_exit_2_without_a_traceback(
    monkeypatch: pytest.MonkeyPatch, inputs: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    def explode(request: object, **options: object) -> None:
        raise RuntimeError("bug in the pipeline")

    monkeypatch.setattr(pipeline, "lint", explode)
    monkeypatch.delenv("POLICYLINT_DEBUG", raising=False)
    assert main([str(inputs["clean"])]) == 2
    captured = capsys.readouterr()
    assert "policylint: internal error: RuntimeError: bug in the pipeline" in captured.err
    assert "Traceback" not in captured.err


# -- determinism ---------------------------------------------------------------------------------------


def _corpus(tmp_path: Path) -> dict[str, str]:
    docs = [
        SERVICE.format(name="web"),
        POLICY.format(name="web"),
        SERVICE.format(name="api").replace("  namespace: app\n", "  namespace: app\n  labels: {tier: 1}\n"),
        POLICY.format(name="api").replace("sectionName: https", "sectionName: grpc"),
        POLICY.format(name="ghost"),
        INFO_ONLY,
        SERVICE.format(name="web").replace("443", "8443"),  # duplicate of the first Service
    ]
    return {
        "b/policies.yaml": "---\n".join(docs[1:5]),
        "a/services.yaml": "---\n".join([docs[0], docs[2]]),
        "c.yaml": "---\n".join(docs[5:]),
    }


def test_output_does_not_depend_on_the_order_of_paths(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for rel, text in _corpus(tmp_path).items():
        write(tmp_path, rel, text)
    monkeypatch.chdir(tmp_path)
    paths = ["b/policies.yaml", "a/services.yaml", "c.yaml"]
    outputs = set()
    for order in (paths, list(reversed(paths)), [paths[1], paths[2], paths[0]]):
        for fmt in ("text", "json"):
            result = invoke("--format", fmt, *order)
            assert result.exit_code == 1
            outputs.add((fmt, result.stdout))
    assert len(outputs) == 2
    # A directory, and a directory plus a file inside it, name the files the same way.
    for args in (["."], [".", "./c.yaml", "a/../a/services.yaml"]):
        again = invoke("--format", "json", *args)
        assert again.stdout == next(out for fmt, out in outputs if fmt == "json")


def _fingerprint(report: dict[str, Any]) -> tuple[Counter[tuple[str, ...]], list[Any]]:
    findings = Counter((f["rule"], f["file"], json.dumps(f["object"], sort_keys=True), f["path"]) for f in report["findings"])
    policies = [{k: v for k, v in p.items() if k != "line"} for p in report["policies"]]
    return findings, policies


def test_output_does_not_depend_on_the_order_of_documents(tmp_path: Path) -> None:
    corpus = _corpus(tmp_path)
    docs = [d for text in corpus.values() for d in text.split("---\n")]
    reference = None
    rng = random.Random(713)
    for attempt in range(5):
        shuffled = docs[:]
        rng.shuffle(shuffled)
        path = write(tmp_path, f"run{attempt}/all.yaml", "---\n".join(shuffled))
        result = invoke("--format", "json", str(path))
        assert result.exit_code == 1
        report = json.loads(result.stdout)
        assert_valid_report(report)
        positions = [(f["line"], f["column"], f["rule"]) for f in report["findings"]]
        assert positions == sorted(positions)
        fingerprint = _fingerprint(json.loads(result.stdout.replace(f"run{attempt}/", "runN/")))
        if reference is None:
            reference = fingerprint
        assert fingerprint == reference
    assert reference is not None
    rules = {rule for rule, *_ in reference[0]}
    assert {"PL003", "PL005", "PL009"} <= rules
    assert len(reference[1]) == 3  # web-tls, api-tls, ghost-tls


# -- colour ---------------------------------------------------------------------------------------------


def test_color_only_when_asked_for(inputs: dict[str, Path]) -> None:
    path = str(inputs["errors"])
    assert "\x1b[" not in invoke(path).stdout  # not a terminal
    assert "\x1b[" not in invoke("--color", "never", path).stdout
    forced = invoke("--color", "always", path).stdout
    assert "\x1b[1;31merror\x1b[0m" in forced
    assert "\x1b[" in invoke("--color", "always", path, env={"NO_COLOR": "1"}).stdout  # an explicit flag wins
    assert "\x1b[" not in invoke("--format", "json", "--color", "always", path).stdout


def test_no_arguments_prints_the_help_as_it_is(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The help text is policylint's own: its line breaks stay line breaks (usage errors that
    # quote arguments are escaped, tests/reporters/test_output_safety.py). No configuration file applies.
    (tmp_path / ".git").mkdir()
    monkeypatch.chdir(tmp_path)
    result = invoke()
    assert result.exit_code == 2
    assert result.output.startswith("Usage: ")
    assert "\\n" not in result.output and "\n  policylint rules " in result.output


def test_no_arguments_with_a_configuration_lints_its_paths(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / ".git").mkdir()
    write(tmp_path, ".policylint.yaml", "paths: [deploy/]\n")
    write(tmp_path, "deploy/m.yaml", ERRORS)
    write(tmp_path, "elsewhere/m.yaml", ERRORS)  # not among the configured paths: not linted
    monkeypatch.chdir(tmp_path / "deploy")  # found upward, as `check` finds it
    result = invoke()
    assert result.exit_code == invoke("check").exit_code == 1
    assert result.stdout == invoke("check").stdout
    # Configured paths are relative to the configuration file's directory, shown from the cwd.
    files = {line.split(":", 1)[0] for line in result.stdout.splitlines() if ": error PL" in line}
    assert files == {"../deploy/m.yaml"}, result.stdout


def test_no_arguments_with_a_configuration_without_paths_says_so(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / ".git").mkdir()
    write(tmp_path, ".policylint.yaml", "fail-on: warning\n")
    monkeypatch.chdir(tmp_path)
    result = invoke()
    assert result.exit_code == 2
    assert "no paths given: name files or directories, or set `paths` in the configuration file" in result.output
