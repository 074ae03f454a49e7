"""The configuration file (README "Configuration"): discovery, validation, precedence, overrides,
and the files that are not manifests (Kustomize, Helm, tool configuration, .gitignore)."""

from __future__ import annotations

import fnmatch
import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from hypothesis import given
from hypothesis import strategies as st

from policylint.cli import cli
from policylint.config import find_config
from policylint.input import nonmanifest
from tests.gitrepo import init
from tests.lintutil import ROOT

REPO = ROOT / "tests" / "data" / "realistic-repo"
SCHEMA = ROOT / "schemas" / "policylint-config.schema.json"

# Three findings of three rules and severities, each on a line of its own:
# PL003 (info) line 1, PL410 (warning) at the route's spec (line 7), PL201 (error) at the targetRef (line 15).
MIXED = """\
apiVersion: v1
metadata: {name: not-an-object}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: r, namespace: app}
spec: {}
---
apiVersion: gateway.networking.k8s.io/v1
kind: BackendTLSPolicy
metadata: {name: tls, namespace: app}
spec:
  validation: {hostname: x.example.com, wellKnownCACertificates: System}
  targetRefs:
  - {group: "", kind: Service, name: missing}
---
# The input manages Services in namespace app, so the missing one is an error (PL201), not unprovable.
apiVersion: v1
kind: Service
metadata: {name: other, namespace: app}
spec: {ports: [{port: 80}]}
"""


def invoke(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args))


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def findings(result: Result) -> list[tuple[str, str, str, int]]:
    """(rule, severity, file, line) of each finding of a `--format json` run."""
    assert result.exit_code in (0, 1), result.output
    report: dict[str, Any] = json.loads(result.stdout)
    return [(f["rule"], f["severity"], f["file"], f["line"]) for f in report["findings"]]


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty repository (a `.git` directory) as the working directory."""
    (tmp_path / ".git").mkdir()
    monkeypatch.chdir(tmp_path)
    return tmp_path


# -- discovery -----------------------------------------------------------------------------------


def test_discovery_prefers_the_nearest_directory_then_yaml_over_pyproject(repo: Path) -> None:
    sub = repo / "a" / "b"
    sub.mkdir(parents=True)
    assert find_config(sub) is None
    write(repo / "pyproject.toml", "[tool.policylint]\nnamespace = 'x'\n")
    assert find_config(sub) == repo / "pyproject.toml"
    write(repo / ".policylint.yml", "namespace: y\n")
    assert find_config(sub) == repo / ".policylint.yml"
    write(repo / ".policylint.yaml", "namespace: z\n")
    assert find_config(sub) == repo / ".policylint.yaml"
    write(repo / "a" / "pyproject.toml", "[tool.policylint]\nnamespace = 'w'\n")
    assert find_config(sub) == repo / "a" / "pyproject.toml"


def test_a_pyproject_without_the_table_is_passed_over(repo: Path) -> None:
    write(repo / "pyproject.toml", "[tool.policylint]\nnamespace = 'x'\n")
    write(repo / "a" / "pyproject.toml", "[project]\nname = 'policylint-like'\n[tool.ruff]\nline-length = 1\n")
    assert find_config(repo / "a") == repo / "pyproject.toml"


def test_discovery_stops_at_the_repository_root(tmp_path: Path) -> None:
    write(tmp_path / ".policylint.yaml", "namespace: outside\n")
    (tmp_path / "checkout" / ".git").mkdir(parents=True)
    (tmp_path / "checkout" / "sub").mkdir()
    assert find_config(tmp_path / "checkout" / "sub") is None
    assert find_config(tmp_path) == tmp_path / ".policylint.yaml"


def test_config_flag_and_isolated(repo: Path) -> None:
    write(repo / "m.yaml", MIXED)
    write(repo / ".policylint.yaml", "select: [PL003]\n")
    write(repo / "other.yaml", "select: [PL410]\n")
    assert [f[0] for f in findings(invoke("check", "m.yaml", "--format", "json", "--no-cache"))] == ["PL003"]
    assert [f[0] for f in findings(invoke("check", "m.yaml", "--format", "json", "--no-cache", "--config", "other.yaml"))] == [
        "PL410"
    ]
    isolated = findings(invoke("check", "m.yaml", "--format", "json", "--no-cache", "--isolated"))
    assert [f[0] for f in isolated] == ["PL003", "PL410", "PL201"]


def test_config_in_pyproject(repo: Path) -> None:
    write(repo / "m.yaml", MIXED)
    write(repo / "pyproject.toml", '[project]\nname = "x"\n\n[tool.policylint]\nselect = ["PL2"]\n')
    assert [f[0] for f in findings(invoke("check", "m.yaml", "--format", "json", "--no-cache"))] == ["PL201"]


def test_paths_are_relative_to_the_configuration_file(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write(repo / "manifests" / "m.yaml", MIXED)
    write(repo / ".policylint.yaml", "paths: [manifests]\nselect: [PL410]\n")
    sub = repo / "docs"
    sub.mkdir()
    monkeypatch.chdir(sub)
    result = invoke("check", "--format", "json", "--no-cache")
    assert findings(result) == [("PL410", "warning", "../manifests/m.yaml", 7)]


def test_no_paths_anywhere_is_a_usage_error(repo: Path) -> None:
    write(repo / ".policylint.yaml", "select: [PL410]\n")
    result = invoke("check")
    assert result.exit_code == 2
    assert "no paths given" in result.stderr


# -- invalid configuration: exit 2 naming the file, the line and the key -------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("select: [PL4]\nexclud: [x/]\n", ".policylint.yaml:2: exclud: unknown key (did you mean 'exclude'?)"),
        ("jobs: '2'\n", ".policylint.yaml:1: jobs: must be an integer, not the string '2'"),
        ("jobs: -1\n", ".policylint.yaml:1: jobs: Input should be greater than or equal to 0"),
        ("respect-gitignore: 1\n", ".policylint.yaml:1: respect-gitignore: must be true or false, not the number 1"),
        ("select:\n  - PL2\n  - PL99\n", ".policylint.yaml:3: select[1]: no rule matches 'PL99'"),
        (
            "ignore: [targetref-not-foud]\n",
            "ignore[0]: no rule matches 'targetref-not-foud' (did you mean 'targetref-not-found'?)",
        ),
        (
            "severity:\n  PL2: fatal\n",
            ".policylint.yaml:2: severity.PL2: must be one of off, info, warning, error, not the string 'fatal'",
        ),
        ("severity:\n  PL201: eror\n", "not the string 'eror' (did you mean 'error'?)"),
        ("severity:\n  PL777: error\n", ".policylint.yaml:2: severity.PL777: no rule matches 'PL777'"),
        ("exclude:\n  - ok/\n  - '!'\n", ".policylint.yaml:3: exclude[1]: invalid pattern '!'"),
        (
            "per-file:\n  'legacy/':\n    selec: [PL2]\n",
            ".policylint.yaml:3: per-file.\"legacy/\".selec: unknown key (did you mean 'select'?)",
        ),
        ("per-file:\n  'foo\\':\n    ignore: [PL2]\n", '.policylint.yaml:2: per-file."foo\\\\": invalid pattern'),
        (
            "rules:\n  PL608:\n    max-afected: 3\n",
            ".policylint.yaml:3: rules.PL608.max-afected: PL608 has no option 'max-afected'",
        ),
        (
            "rules:\n  PL608:\n    max-affected: many\n",
            ".policylint.yaml:3: rules.PL608.max-affected: option max-affected takes int",
        ),
        ("rules:\n  PL6O8: {}\n", ".policylint.yaml:2: rules.PL6O8: no rule 'PL6O8' (did you mean 'PL608'?)"),
        ("format: jsn\n", ".policylint.yaml:1: format: unknown format 'jsn' (did you mean 'json'?)"),
        (
            "namespace: app\nchannel: experimantal\n",
            ".policylint.yaml:2: channel: must be one of standard, experimental, not the string 'experimantal'"
            " (did you mean 'experimental'?)",
        ),
        (
            "gateway-api-version: v1.7.0\n",
            ".policylint.yaml:1: gateway-api-version: Gateway API v1.7.0 is not bundled (bundled: v1.0.0, v1.1.1, v1.2.1,"
            " v1.3.0, v1.4.1, v1.5.1, v1.6.1)",
        ),
        ("fail-on: warning\nfail-on: info\n", ".policylint.yaml:2: fail-on: key given twice"),
        ("select: [PL2\n", ".policylint.yaml:2: YAML syntax error"),
        ("- select\n", ".policylint.yaml:1: the configuration must be a mapping of keys"),
    ],
)
def test_invalid_configuration_is_exit_2_with_file_line_and_key(repo: Path, text: str, expected: str) -> None:
    write(repo / "m.yaml", MIXED)
    write(repo / ".policylint.yaml", text)
    result = invoke("check", "m.yaml", "--no-cache")
    assert result.exit_code == 2, result.output
    assert expected in result.stderr
    assert "Traceback" not in result.output
    assert result.stdout == ""


def test_every_problem_is_reported_in_line_order(repo: Path) -> None:
    write(repo / ".policylint.yaml", "jobs: x\nnamespace: ok\nexclud: []\n")
    result = invoke("check", ".", "--no-cache")
    assert result.exit_code == 2
    lines = [line for line in result.stderr.splitlines() if line.startswith("policylint: error:")]
    assert [line.split(": ")[2].split(":")[1] for line in lines] == ["1", "3"]


def test_invalid_pyproject_names_the_line_of_the_key(repo: Path) -> None:
    write(
        repo / "pyproject.toml",
        '[project]\nname = "x"\n\n[tool.policylint]\nselect = ["PL2"]\nnamespce = "app"\n\n[tool.policylint.severity]\nPL201 = "loud"\n',
    )
    result = invoke("check", ".", "--no-cache")
    assert result.exit_code == 2
    assert "pyproject.toml:6: namespce: unknown key (did you mean 'namespace'?)" in result.stderr
    assert "pyproject.toml:9: severity.PL201: must be one of off, info, warning, error" in result.stderr


def test_a_missing_config_file_is_a_usage_error(repo: Path) -> None:
    result = invoke("check", ".", "--config", "nope.yaml")
    assert result.exit_code == 2
    assert "nope.yaml:1: configuration file not found" in result.stderr


# -- severity and per-file overrides -------------------------------------------------------------


def _run(repo: Path, config: str, *args: str) -> list[tuple[str, str, str, int]]:
    write(repo / ".policylint.yaml", config)
    return findings(invoke("check", "--format", "json", "--no-cache", *args))


def test_severity_by_id_or_name_prefix(repo: Path) -> None:
    write(repo / "m.yaml", MIXED)
    assert _run(repo, "paths: [m.yaml]\nseverity: {PL2: warning}\n") == [
        ("PL003", "info", "m.yaml", 1),
        ("PL410", "warning", "m.yaml", 7),
        ("PL201", "warning", "m.yaml", 15),
    ]
    by_name = _run(repo, "paths: [m.yaml]\nseverity: {route-without: error, not-a-kubernetes: off}\n")
    assert by_name == [("PL410", "error", "m.yaml", 7), ("PL201", "error", "m.yaml", 15)]


def test_the_longest_severity_prefix_wins(repo: Path) -> None:
    write(repo / "m.yaml", MIXED)
    assert _run(repo, "paths: [m.yaml]\nseverity: {PL: info, PL4: off, PL201: error}\n") == [
        ("PL003", "info", "m.yaml", 1),
        ("PL201", "error", "m.yaml", 15),
    ]
    # The same entries written the other way round decide the same.
    assert _run(repo, "paths: [m.yaml]\nseverity: {PL201: error, PL4: off, PL: info}\n") == [
        ("PL003", "info", "m.yaml", 1),
        ("PL201", "error", "m.yaml", 15),
    ]


def test_a_lowered_severity_changes_the_exit_code(repo: Path) -> None:
    write(repo / "m.yaml", MIXED)
    write(repo / ".policylint.yaml", "paths: [m.yaml]\n")
    assert invoke("check", "--no-cache").exit_code == 1
    write(repo / ".policylint.yaml", "paths: [m.yaml]\nseverity: {PL201: warning}\n")
    assert invoke("check", "--no-cache").exit_code == 0
    assert invoke("check", "--no-cache", "--fail-on", "warning").exit_code == 1


def test_per_file_settings_apply_to_the_files_they_match(repo: Path) -> None:
    write(repo / "legacy" / "m.yaml", MIXED)
    write(repo / "new" / "m.yaml", MIXED)
    config = (
        "paths: [.]\n"
        "per-file:\n"
        "  legacy/:\n"
        "    ignore: [PL003]\n"
        "    severity: {PL201: info}\n"
        "  'new/*.yaml':\n"
        "    select: [PL410]\n"
    )
    assert _run(repo, config) == [
        ("PL410", "warning", "legacy/m.yaml", 7),
        ("PL201", "info", "legacy/m.yaml", 15),
        ("PL410", "warning", "new/m.yaml", 7),
    ]


def test_write_baseline_leaves_out_what_per_file_settings_hide(repo: Path) -> None:
    # legacy/'s PL003 is ignored there and its PL410 turned off: neither is recorded, so neither
    # comes back hidden by the baseline once the configuration changes. new/ has all three.
    write(repo / "legacy" / "m.yaml", MIXED)
    write(repo / "new" / "m.yaml", MIXED)
    config = "paths: [.]\nper-file:\n  legacy/:\n    ignore: [PL003]\n    severity: {PL410: off}\n"
    write(repo / ".policylint.yaml", config)
    result = invoke("check", "--no-cache", "--write-baseline")
    assert result.exit_code == 0, result.output
    recorded = json.loads((repo / ".policylint-baseline.json").read_text())
    legacy = sorted(e["rule"] for e in recorded["entries"] if e["file"] == "legacy/m.yaml")
    new = sorted(e["rule"] for e in recorded["entries"] if e["file"] == "new/m.yaml")
    assert legacy == ["PL201"]
    assert {"PL003", "PL201", "PL410"} <= set(new)  # (and PL005: the two files define the same objects)
    assert f"wrote {len(recorded['entries'])} baseline entries" in result.stderr


def test_per_file_select_runs_a_rule_the_global_selection_leaves_out(repo: Path) -> None:
    write(repo / "a" / "m.yaml", MIXED)
    write(repo / "b" / "m.yaml", MIXED)
    config = "paths: [.]\nselect: [PL003]\nper-file:\n  b/:\n    select: [PL2]\n"
    assert _run(repo, config) == [("PL003", "info", "a/m.yaml", 1), ("PL201", "error", "b/m.yaml", 15)]


def test_per_file_and_global_severity_precedence(repo: Path) -> None:
    write(repo / "legacy" / "m.yaml", MIXED)
    # The global entry is the longer prefix: it wins over the shorter per-file one.
    longer_global = "paths: [.]\nselect: [PL201]\nseverity: {PL201: warning}\nper-file:\n  legacy/:\n    severity: {PL2: info}\n"
    assert _run(repo, longer_global) == [("PL201", "warning", "legacy/m.yaml", 15)]
    # The same length: the per-file entry wins.
    same = "paths: [.]\nselect: [PL201]\nseverity: {PL201: warning}\nper-file:\n  legacy/:\n    severity: {PL201: info}\n"
    assert _run(repo, same) == [("PL201", "info", "legacy/m.yaml", 15)]


def test_rule_options_from_the_configuration(repo: Path) -> None:
    write(repo / ".policylint.yaml", "rules:\n  blast-radius-exceeded: {max-affected: 0}\n")
    result = invoke("check", str(ROOT / "examples"), "--select", "PL608", "--format", "json", "--no-cache")
    assert {f[0] for f in findings(result)} == {"PL608"}
    write(repo / ".policylint.yaml", "rules:\n  PL608: {}\n")
    result = invoke("check", str(ROOT / "examples"), "--select", "PL608", "--format", "json", "--no-cache")
    assert findings(result) == []  # no threshold, no finding


# -- the command line overrides the file ---------------------------------------------------------


def test_command_line_flags_override_the_file(repo: Path) -> None:
    write(repo / "m.yaml", MIXED)
    write(repo / ".policylint.yaml", "paths: [m.yaml]\nselect: [PL410]\nfail-on: warning\nformat: json\n")
    from_file = invoke("check", "--no-cache")
    assert from_file.exit_code == 1  # fail-on warning, from the file
    assert [f[0] for f in findings(from_file)] == ["PL410"]  # format json, from the file
    flags = invoke("check", "--no-cache", "--fail-on", "error", "--select", "PL003")
    assert flags.exit_code == 0
    assert [f[0] for f in findings(flags)] == ["PL003"]
    other_paths = invoke("check", "--no-cache", str(ROOT / "examples" / "team-a"), "--select", "PL5")
    assert {f[0] for f in findings(other_paths)} == {"PL505"}


def test_show_config_names_the_source_of_each_value(repo: Path) -> None:
    write(repo / ".policylint.yaml", "# comment\nexternal:\n  - GatewayClass/eg\nfail-on: warning\n")
    result = invoke("check", "--show-config", "--fail-on", "info", "--jobs", "2")
    assert result.exit_code == 0
    # The cluster's description follows the keys (tests/profiles/test_cluster.py).
    lines = result.stdout.split("# the cluster, declared or inferred")[0].splitlines()
    assert lines[0] == "# configuration file: .policylint.yaml" or lines[0].endswith("/.policylint.yaml")
    assert 'external: ["GatewayClass/eg"]  # ' in result.stdout
    assert any(line.startswith('external: ["GatewayClass/eg"]') and line.endswith(".policylint.yaml:2") for line in lines)
    assert 'fail-on: "info"  # command line' in lines
    assert "jobs: 2  # command line" in lines
    assert 'namespace: "default"  # default' in lines
    same = invoke("config")
    assert 'fail-on: "warning"' in same.stdout and same.stdout.count("# default") == len(lines) - 3


# -- generated files -----------------------------------------------------------------------------


def test_the_json_schema_is_generated_from_the_models() -> None:
    from policylint.config.model import json_schema

    assert json.loads(SCHEMA.read_text()) == json_schema(), "regenerate: python -m policylint.config.reference --schema"


def test_the_readme_key_reference_is_generated_from_the_models() -> None:
    from policylint.config.reference import README_BEGIN, README_END, key_reference

    readme = (ROOT / "README.md").read_text()
    block = readme.split(README_BEGIN, 1)[1].split(README_END, 1)[0]
    assert block.strip() == key_reference().strip(), "regenerate: python -m policylint.config.reference --readme"


def test_the_readme_example_is_a_valid_configuration(tmp_path: Path) -> None:
    from policylint.config.load import load
    from policylint.config.reference import README_EXAMPLE

    readme = (ROOT / "README.md").read_text()
    example = readme.split(README_EXAMPLE, 1)[1].split("```yaml\n", 1)[1].split("```", 1)[0]
    loaded = load(write(tmp_path / ".policylint.yaml", example))
    assert loaded.config.model_fields_set  # it sets keys, and every one is valid


def test_the_schema_accepts_what_the_models_accept_and_refuses_unknown_keys() -> None:
    from jsonschema import Draft202012Validator

    validator = Draft202012Validator(json.loads(SCHEMA.read_text()))
    assert not list(validator.iter_errors({"severity": {"PL3": "off"}, "per-file": {"x/": {"ignore": ["PL2"]}}, "jobs": 0}))
    assert list(validator.iter_errors({"exclud": []}))
    assert list(validator.iter_errors({"severity": {"PL3": "fatal"}}))


# -- files that are not manifests ----------------------------------------------------------------


def _acceptance_copy(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    shutil.copytree(REPO, root)
    # A dependency directory git ignores, holding YAML that is not ours (and is broken).
    write(root / "node_modules" / "pkg" / "config.yaml", "a: [\n")
    write(root / "node_modules" / "pkg" / "chart.yaml", "apiVersion: v1\nkind: Service\n")
    write(root / ".gitignore", "# dependencies\nnode_modules/\n")
    return root


EXPECTED_PLANTED = [
    ("PL301", "error", "manifests/policies.yaml", 12),
    ("PL201", "error", "manifests/policies.yaml", 25),
]


def test_a_realistic_repository_gives_exactly_the_planted_findings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = _acceptance_copy(tmp_path)
    monkeypatch.chdir(root)
    result = invoke("check", "--format", "json", "--no-cache")
    assert result.exit_code == 1, result.output
    assert findings(result) == EXPECTED_PLANTED
    report = json.loads(result.stdout)
    assert report["summary"]["files"] == 4  # gateway, routes, policies, the Argo template (vendor/ is excluded)
    assert "not manifests, skipped: 1 Kustomize file, 4 Helm chart files or directories, 2 tool configuration files" in (
        result.stderr
    )


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_the_realistic_repository_inside_a_git_work_tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = _acceptance_copy(tmp_path)
    (root / ".gitignore").unlink()
    init(root)
    (root / ".git" / "info").mkdir(exist_ok=True)
    (root / ".git" / "info" / "exclude").write_text("node_modules/\n")
    monkeypatch.chdir(root / "manifests")  # the configuration is found upward
    result = invoke("check", "--format", "json", "--no-cache")
    assert [(rule, sev, f"manifests/{Path(file).name}", line) for rule, sev, file, line in findings(result)] == EXPECTED_PLANTED


def test_the_crd_key_is_what_makes_the_policy_kind_known(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = _acceptance_copy(tmp_path)
    config = root / ".policylint.yaml"
    config.write_text(config.read_text().replace("crd:\n  - vendor/crds/\n", ""))
    monkeypatch.chdir(root)
    rules = [f[0] for f in findings(invoke("check", "--format", "json", "--no-cache"))]
    assert "PL111" in rules  # RetryPolicy known by its shape only


def test_without_the_configuration_the_repository_fails_as_before(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = _acceptance_copy(tmp_path)
    monkeypatch.chdir(root)
    result = invoke("check", ".", "--isolated", "--format", "json", "--no-cache")
    rules = {f[0] for f in findings(result)}
    assert {"PL405", "PL001"} <= rules  # the GatewayClass is not declared external; generated/ is linted


def test_gitignore_negation_and_nesting(repo: Path) -> None:
    write(repo / ".gitignore", "out/\n*.gen.yaml\n!keep.gen.yaml\n")
    write(repo / "a" / ".gitignore", "!x.gen.yaml\nlocal.yaml\n")
    for name in ("out/m.yaml", "m.gen.yaml", "keep.gen.yaml", "a/x.gen.yaml", "a/local.yaml", "local.yaml", "a/y.gen.yaml"):
        write(repo / name, "apiVersion: v1\nmetadata: {name: x}\n")
    result = invoke("check", ".", "--format", "json", "--no-cache", "--isolated")
    assert sorted(f[2] for f in findings(result)) == ["a/x.gen.yaml", "keep.gen.yaml", "local.yaml"]


def test_respect_gitignore_off_and_explicit_files(repo: Path) -> None:
    write(repo / ".gitignore", "ignored/\n")
    write(repo / "ignored" / "m.yaml", "apiVersion: v1\nmetadata: {name: x}\n")
    write(repo / "m.yaml", "apiVersion: v1\nmetadata: {name: x}\n")
    assert [f[2] for f in findings(invoke("check", ".", "--format", "json", "--no-cache"))] == ["m.yaml"]
    # A file named explicitly is linted whatever ignores it.
    named = invoke("check", "ignored/m.yaml", "--format", "json", "--no-cache")
    assert [f[2] for f in findings(named)] == ["ignored/m.yaml"]
    write(repo / ".policylint.yaml", "respect-gitignore: false\n")
    assert sorted(f[2] for f in findings(invoke("check", ".", "--format", "json", "--no-cache"))) == ["ignored/m.yaml", "m.yaml"]


def test_exclude_replaces_and_extend_exclude_adds(repo: Path) -> None:
    for name in ("node_modules/m.yaml", "gen/m.yaml", "m.yaml"):
        write(repo / name, "apiVersion: v1\nmetadata: {name: x}\n")
    assert [f[2] for f in findings(invoke("check", ".", "--format", "json", "--no-cache"))] == ["gen/m.yaml", "m.yaml"]
    write(repo / ".policylint.yaml", "extend-exclude: [gen/]\n")
    assert [f[2] for f in findings(invoke("check", ".", "--format", "json", "--no-cache"))] == ["m.yaml"]
    write(repo / ".policylint.yaml", "exclude: [gen/]\n")
    found = [f[2] for f in findings(invoke("check", ".", "--format", "json", "--no-cache"))]
    assert found == ["m.yaml", "node_modules/m.yaml"]


def test_helm_templates_are_linted_only_when_asked(repo: Path) -> None:
    write(repo / "chart" / "Chart.yaml", "apiVersion: v2\nname: c\nversion: 0.1.0\n")
    write(repo / "chart" / "values.yaml", "replicas: 1\n")
    write(repo / "chart" / "templates" / "svc.yaml", "apiVersion: v1\nkind: Service\nmetadata:\n  name: {{ .Release.Name }}\n")
    write(repo / "chart" / "crds" / "crd.yaml", "apiVersion: v1\nmetadata: {name: x}\n")
    skipped = invoke("check", ".", "--format", "json", "--no-cache")
    assert [f[:3] for f in findings(skipped)] == [("PL003", "info", "chart/crds/crd.yaml")]
    assert "3 Helm chart files or directories" in skipped.stderr
    asked = invoke("check", ".", "--format", "json", "--no-cache", "--helm-templates")
    assert ("PL004", "error", "chart/templates/svc.yaml", 4) in findings(asked)
    # pre-commit names each file: a template named explicitly is skipped too.
    named = invoke("check", "chart/templates/svc.yaml", "chart/values.yaml", "--format", "json", "--no-cache")
    assert named.exit_code == 0 and findings(named) == []


def test_files_that_pre_commit_passes_are_not_errors(repo: Path) -> None:
    files = {
        ".github/workflows/ci.yml": "on: [push]\njobs: {}\n",
        ".pre-commit-config.yaml": "repos: []\n",
        "mkdocs.yml": "site_name: x\nnav: [{Home: index.md}]\n",
        "kustomization.yaml": "resources: [a.yaml]\n",
        "tsconfig.json": '{\n  // comment\n  "compilerOptions": {},\n}\n',
    }
    for name, text in files.items():
        write(repo / name, text)
    result = invoke("check", *files, "--format", "json", "--no-cache")
    assert result.exit_code == 0 and findings(result) == []
    assert "1 Kustomize file, 4 tool configuration files" in result.stderr


def test_json_that_is_not_json_is_not_a_manifest(repo: Path) -> None:
    write(repo / "settings.json", '{\n  // editor settings\n  "tabSize": 2\n}\n')
    write(repo / "object.json", '{"apiVersion": "v1", "kind": "Service", // broken\n "metadata": {"name": "x"}}\n')
    result = invoke("check", ".", "--format", "json", "--no-cache")
    assert [(f[0], f[1], f[2]) for f in findings(result)] == [
        ("PL001", "error", "object.json"),
        ("PL003", "info", "settings.json"),
    ]
    message = json.loads(result.stdout)["findings"][1]["message"]
    assert message.startswith("not valid JSON (JSON with comments?) and not a Kubernetes object")


ARGO_AND_ROUTE = """\
apiVersion: argoproj.io/v1alpha1
kind: WorkflowTemplate
metadata: {name: wt, namespace: ci}
spec:
  templates:
  - name: main
    container: {image: alpine, args: ["{{inputs.parameters.x}}"]}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: r, namespace: "{{ .Values.ns }}"}
spec: {parentRefs: [{name: gw}]}
"""


def test_template_markers_are_the_syntax_of_some_kinds(repo: Path) -> None:
    write(repo / "argo.yaml", ARGO_AND_ROUTE.split("---\n")[0])
    assert findings(invoke("check", "argo.yaml", "--format", "json", "--no-cache", "--select", "PL0")) == []
    # No Kubernetes object: a Grafana dashboard's legend (as Kuadrant's examples/dashboards ship
    # them, in a ConfigMap made from the file): a JSON file of data, skipped, its marker no PL004.
    write(repo / "dashboard.json", '{"title": "t", "panels": [{"targets": [{"legendFormat": "{{code}}"}]}]}\n')
    result = invoke("check", "dashboard.json", "--format", "json", "--no-cache", "--select", "PL0")
    assert findings(result) == []
    assert "skipped: 1 JSON file that is no Kubernetes object" in result.stderr
    # The same file with a Gateway API object holding a marker: PL004 at that marker.
    write(repo / "both.yaml", ARGO_AND_ROUTE)
    result = invoke("check", "both.yaml", "--format", "json", "--no-cache", "--select", "PL004")
    assert findings(result) == [("PL004", "error", "both.yaml", 11)]


@pytest.mark.parametrize(
    ("text", "line"),
    [
        # A policy kind (`...Policy`) from a vendor group keeps PL004.
        ("apiVersion: acme.io/v1\nkind: RetryPolicy\nmetadata: {name: '{{ x }}'}\n", 3),
        # A core kind keeps it.
        ("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: {a: '{{ x }}'}\n", 4),
        # An unquoted marker breaks the YAML structure, whatever the kind.
        ("apiVersion: argoproj.io/v1alpha1\nkind: Workflow\nmetadata: {name: w}\nspec:\n  x: {{ y }}\n", 5),
        # A marker outside any document that parsed.
        ('apiVersion: argoproj.io/v1alpha1\nkind: Workflow\nmetadata: {name: w}\n---\n{{- include "x" . }}\n', 5),
        # A manifest whose kind a template writes is still one.
        ("apiVersion: v1\nkind: '{{ .Values.kind }}'\nmetadata: {name: c}\n", 2),
        ("apiVersion: v1\nmetadata: {name: '{{ x }}'}\n", 2),
    ],
)
def test_template_markers_that_stay_pl004(repo: Path, text: str, line: int) -> None:
    write(repo / "t.yaml", text)
    result = invoke("check", "t.yaml", "--format", "json", "--no-cache", "--select", "PL004")
    assert findings(result) == [("PL004", "error", "t.yaml", line)]


def test_a_run_without_configuration_stays_light(tmp_path: Path) -> None:
    """No configuration file: neither pydantic nor the configuration models are imported
    (tests/k8s/test_startup.py pins pydantic for the plain run; this pins the models)."""
    import sys

    code = (
        "import sys; from policylint.entry import main; main(sys.argv[1:]);"
        " print(sorted(m for m in sys.modules if m.startswith(('pydantic', 'policylint.config'))), file=sys.stderr)"
    )
    (tmp_path / ".git").mkdir()
    write(tmp_path / "m.yaml", "apiVersion: v1\nmetadata: {name: x}\n")
    proc = subprocess.run([sys.executable, "-c", code, "m.yaml", "--no-cache"], capture_output=True, text=True, cwd=tmp_path)
    # Nor the configured overrides, which the pipeline imports where a configuration sets some.
    assert proc.stderr.strip().splitlines()[-1] == "['policylint.config']"


def test_explain_and_graph_read_the_configuration(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = _acceptance_copy(tmp_path)
    monkeypatch.chdir(root)
    configured = invoke("explain", "httproute/shop/store")
    assert configured.exit_code == 0, configured.output
    assert configured.stdout.startswith("HTTPRoute shop/store  (manifests/routes.yaml:1)")
    assert "input problem" not in configured.stderr  # generated/ is excluded by the file
    isolated = invoke("graph", "--isolated")
    assert isolated.exit_code == 0
    assert "1 input problem skipped" in isolated.stderr  # generated/broken.yaml


def test_the_parse_cache_tells_json_names_apart(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Broken JSON-looking bytes are PL003 in `*.json` and PL001 in `*.yaml`: the same bytes under
    both names must not share a cache entry."""
    work = tmp_path / "work"
    (work / ".git").mkdir(parents=True)
    monkeypatch.chdir(work)
    text = '{\n  // comment\n  "a": 1\n}\n'
    write(work / "a.json", text)
    write(work / "b.yaml", text)
    cache = str(tmp_path / "cache")
    for _ in range(2):  # cold, then warm
        result = invoke("check", "a.json", "b.yaml", "--format", "json", "--cache-dir", cache)
        assert [(f[0], f[2]) for f in findings(result)] == [("PL003", "a.json"), ("PL001", "b.yaml")]
    assert any((tmp_path / "cache").rglob("*"))


def test_overrides_apply_after_suppressions(repo: Path) -> None:
    # A suppression without a reason is PL903 (warning by default): the configured severity
    # applies to it too, and a suppression of a rule the configuration turns off for the file
    # still counts as used (it suppressed a finding), so it is not PL901.
    write(
        repo / "m.yaml",
        MIXED.replace(
            '  - {group: "", kind: Service, name: missing}',
            '  - {group: "", kind: Service, name: missing}  # policylint: disable=PL201',
        ),
    )
    assert _run(repo, "paths: [m.yaml]\nseverity: {PL903: error, PL410: off, PL003: off}\n") == [("PL903", "error", "m.yaml", 15)]
    assert (
        _run(repo, "paths: [m.yaml]\nrequire-suppression-reason: false\nseverity: {PL201: off, PL410: off, PL003: off}\n") == []
    )


_NAME_PIECES = [
    "docker-compose",
    "compose",
    "values",
    "tsconfig",
    "mkdocs",
    "action",
    ".yml",
    ".yaml",
    ".json",
    "-",
    ".",
    "a",
    "X",
    "*",
    "?",
    "[",
    "\n",
    "é",
]


@given(st.lists(st.sampled_from(_NAME_PIECES), max_size=6).map("".join))
def test_file_names_are_classified_as_their_globs_say(name: str) -> None:
    # The globs of tool and chart files are matched as one regular expression each: on any name,
    # what matching each glob with `fnmatch.fnmatchcase` gives.
    assert nonmanifest.tool_file(name) == any(fnmatch.fnmatchcase(name.lower(), p) for p in nonmanifest.TOOL_FILES)
    assert nonmanifest.chart_file(name) == (
        name == nonmanifest.CHART_FILE or any(fnmatch.fnmatchcase(name.lower(), p) for p in nonmanifest._CHART_VALUES)
    )
