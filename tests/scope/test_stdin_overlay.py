"""Standard input over context paths: the README's recipe
`kubectl kustomize overlays/prod | policylint - --stdin-filename prod.yaml --context base/`
(policylint/k8s/overlay.py, policylint/input/sources.py `_stand_in`; README "pre-commit").

The tree is tests/data/kustomize-overlay: a base, an overlay patching the policy, and the
overlay's rendered stream, written by hand as `kubectl kustomize` prints it.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from policylint.cli import cli
from tests.lintutil import ROOT

TREE = ROOT / "tests" / "data" / "kustomize-overlay"
STREAM = (TREE / "prod.rendered.yaml").read_text(encoding="utf-8")


@pytest.fixture
def tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    shutil.copytree(TREE, tmp_path / "tree")
    (tmp_path / "tree" / "prod.rendered.yaml").unlink()  # what the pipe carries, not a file of the tree
    monkeypatch.chdir(tmp_path / "tree")
    return tmp_path / "tree"


def run(*args: str, stdin: str | None = None) -> tuple[int, list[dict[str, object]], str]:
    result = CliRunner().invoke(cli, ["--no-cache", "--format", "json", *args], input=stdin)
    report = json.loads(result.stdout) if result.stdout else {}
    return result.exit_code, report.get("findings", []), result.stderr


def located(findings: list[dict[str, object]]) -> list[tuple[object, ...]]:
    out = []
    for f in findings:
        obj = f["object"]
        assert isinstance(obj, dict)
        out.append((f["rule"], f["file"], f["line"], f"{obj['kind']} {obj['namespace']}/{obj['name']}"))
    return out


def test_the_readme_recipe_is_clean_on_a_valid_overlay(tree: Path) -> None:
    # Before: PL005 for every object the stream holds, an error for the patched policy.
    code, findings, err = run("-", "--stdin-filename", "prod.yaml", "--context", "base/", stdin=STREAM)
    assert (code, findings) == (0, [])
    # The stream's five objects replace the base's five: five objects, not ten.
    assert err.endswith("0 errors, 0 warnings, 0 info in 1 file (+3 context files) (5 objects, 1 policy)\n")


def test_a_mistake_in_the_overlay_is_reported_at_the_streams_lines(tree: Path) -> None:
    stream = STREAM.replace("sectionName: checkout", "sectionName: chekout")
    code, findings, _ = run("-", "--stdin-filename", "prod.yaml", "--context", "base/", stdin=stream)
    assert code == 1
    assert located(findings) == [("PL301", "prod.yaml", 20, "BackendTrafficPolicy shop/web-timeouts")]
    # The note points at the stream's HTTPRoute, which replaced the base's.
    assert [(r["file"], r["line"]) for r in findings[0]["related"]] == [("prod.yaml", 53)]  # type: ignore[attr-defined]


def test_the_stream_replaces_the_base_objects_it_redefines(tree: Path) -> None:
    # The base's route has no rule `checkout` any more; the stream's has: the policy resolves
    # against the stream's version, so the base's (context) is not read for it.
    (tree / "base" / "app.yaml").write_text(
        (tree / "base" / "app.yaml").read_text().replace("name: checkout", "name: cart"), encoding="utf-8"
    )
    (tree / "base" / "policy.yaml").unlink()  # only the stream defines the policy
    code, findings, _ = run("-", "--stdin-filename", "prod.yaml", "--context", "base/", stdin=STREAM)
    assert (code, findings) == (0, [])


def test_context_objects_the_stream_lacks_stay_context(tree: Path) -> None:
    # A stream of the policy alone: its target and the rest come from the base.
    policy = STREAM.split("---\n")[1]
    code, findings, err = run("-", "--stdin-filename", "prod.yaml", "--context", "base/", stdin=policy)
    assert (code, findings) == (0, [])
    assert "(5 objects, 1 policy)" in err


def test_two_definitions_within_the_stream_are_still_pl005(tree: Path) -> None:
    service = STREAM.split("---\n")[0]
    changed = service.replace("port: 8080", "port: 9090")
    stream = f"{STREAM}---\n{changed}"
    code, findings, _ = run("-", "--stdin-filename", "prod.yaml", "--context", "base/", stdin=stream)
    assert code == 1
    # The second Service starts after the stream's 57 lines and the `---`: metadata.name at 62.
    assert [(f["rule"], f["file"], f["line"]) for f in findings if f["rule"] == "PL005"] == [("PL005", "prod.yaml", 62)]


def test_a_duplicate_between_two_reported_files_is_still_pl005(tree: Path) -> None:
    # Only context files are overlaid: a linted file and the stream defining one object is a mistake.
    code, findings, _ = run("-", "base/app.yaml", "--stdin-filename", "prod.yaml", "--context", "base/", stdin=STREAM)
    assert code == 0  # identical definitions: info only
    assert sorted((f["rule"], f["severity"], f["file"]) for f in findings) == [
        ("PL005", "info", "prod.yaml"),
        ("PL005", "info", "prod.yaml"),
    ]


def test_a_stream_named_after_a_file_stands_for_it(tree: Path) -> None:
    # A committed render, stale and broken on disk; the stream is what will be applied.
    rendered = tree / "rendered"
    rendered.mkdir()
    (rendered / "prod.yaml").write_text(STREAM.replace("sectionName: checkout", "sectionName: stale"), encoding="utf-8")
    stream = STREAM.replace("sectionName: checkout", "sectionName: chekout")
    for name in ("rendered/prod.yaml", "./rendered/../rendered/prod.yaml", str(rendered / "prod.yaml")):
        code, findings, err = run("-", "--stdin-filename", name, "--context", "rendered/", "--context", "base/", stdin=stream)
        assert code == 1, name
        # At the stream's line, under the file's own name (not `rendered/prod.yaml (2)`), and
        # the file's on-disk version is not read (no `stale`, no PL005 against it).
        assert located(findings) == [("PL301", "rendered/prod.yaml", 20, "BackendTrafficPolicy shop/web-timeouts")], name
        assert "(+3 context files)" in err, name


def test_stdin_filename_without_standard_input_is_a_usage_error(tree: Path) -> None:
    result = CliRunner().invoke(cli, ["--no-cache", "--stdin-filename", "prod.yaml", "base/"])
    assert result.exit_code == 2
    assert (
        result.stderr
        == "policylint: error: --stdin-filename 'prod.yaml' names standard input: give `-` among the paths to read it\n"
    )
    assert result.stdout == ""


def test_the_readme_states_the_recipe_these_tests_run() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    # The command the first tests run, as the README gives it.
    assert "`kubectl kustomize overlays/prod | policylint - --stdin-filename prod.yaml --context base/`" in readme
    assert "`--stdin-filename` without `-` is a usage error (exit 2)" in readme
    assert "the stream replaces the context objects it defines again" in readme


@pytest.mark.slow  # the whole CLI in a subprocess, fed through a real pipe
@pytest.mark.every_python
def test_the_readme_recipe_through_a_pipe(tree: Path) -> None:
    import subprocess
    import sys

    stream = STREAM.replace("sectionName: checkout", "sectionName: chekout")
    command = [sys.executable, "-m", "policylint", "-", "--stdin-filename", "prod.yaml", "--context", "base/", "--no-cache"]
    done = subprocess.run(command, input=stream.encode(), capture_output=True, check=False, timeout=120)
    assert done.returncode == 1
    assert done.stdout.decode().splitlines()[0].startswith("prod.yaml:20:5: error PL301 rule chekout not found on HTTPRoute web")
    clean = subprocess.run(command, input=STREAM.encode(), capture_output=True, check=False, timeout=120)
    assert (clean.returncode, clean.stdout) == (0, b"")
    # Nothing is written into the tree.
    assert sorted(str(p.relative_to(tree)) for p in tree.rglob("*")) == [
        "README.md",
        "base",
        "base/app.yaml",
        "base/gateway.yaml",
        "base/kustomization.yaml",
        "base/policy.yaml",
        "overlays",
        "overlays/prod",
        "overlays/prod/kustomization.yaml",
        "overlays/prod/timeouts.yaml",
    ]
