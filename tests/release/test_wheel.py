"""policylint works from an installed wheel, not only from the source tree.

rules/ (docs, profiles, kinds) and schemas/ are read at run time and are
force-included in the wheel as policylint/_data/. An editable install finds
them in the checkout, so only a real wheel in a fresh virtual environment,
run from outside the source tree, proves they are packaged.

One wheel and one venv serve the whole module: building and installing is
the slow part. pip may fetch the dependencies from the package index.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tarfile
import zipfile
from dataclasses import dataclass
from pathlib import Path

import pytest

# Slow (builds the wheel): `make test` leaves it to `make test-all` (.ci/run). On every supported
# Python: what the wheel installs depends on the interpreter (tomli below 3.11, google-re2's wheels).
pytestmark = [pytest.mark.slow, pytest.mark.every_python]

ROOT = Path(__file__).resolve().parents[2]
TIMEOUT = 600


@dataclass(frozen=True)
class Installed:
    wheel: Path
    sdist: Path
    venv: Path
    workdir: Path  # outside the source tree: nothing can be imported from the checkout

    @property
    def bin(self) -> Path:
        return self.venv / ("Scripts" if os.name == "nt" else "bin")

    def run(self, program: str, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(self.bin / program), *args],
            cwd=self.workdir,
            env=_clean_env(),
            capture_output=True,
            text=True,
            timeout=TIMEOUT,
        )


def _clean_env() -> dict[str, str]:
    # The test runner's venv and PYTHONPATH must not leak into the fresh venv.
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME")}
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    env["NO_COLOR"] = "1"
    return env


def _check(cmd: list[str], cwd: Path) -> None:
    proc = subprocess.run(cmd, cwd=cwd, env=_clean_env(), capture_output=True, text=True, timeout=TIMEOUT)
    assert proc.returncode == 0, f"{' '.join(cmd)} failed:\n{proc.stdout}\n{proc.stderr}"


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Installed:
    base = tmp_path_factory.mktemp("wheel")
    dist = base / "dist"
    # As a release builds it (`make dist`, .github/workflows/release.yml): the sdist, then the
    # wheel from the unpacked sdist, so a file the sdist cannot carry fails here.
    # --no-isolation: hatchling comes from the test extras, no download needed to build.
    _check([sys.executable, "-m", "build", "--no-isolation", "--outdir", str(dist), str(ROOT)], cwd=base)
    (wheel,) = dist.glob("policylint-*.whl")
    (sdist,) = dist.glob("policylint-*.tar.gz")
    _check([sys.executable, "-m", "twine", "check", "--strict", str(wheel), str(sdist)], cwd=base)
    venv = base / "venv"
    _check([sys.executable, "-m", "venv", str(venv)], cwd=base)
    inst = Installed(wheel, sdist, venv, base)
    _check([str(inst.bin / "python"), "-m", "pip", "install", "--quiet", str(wheel)], cwd=base)
    return inst


def test_wheel_contains_the_data_files(installed: Installed) -> None:
    names = set(zipfile.ZipFile(installed.wheel).namelist())
    assert "policylint/k8s/kinds.yaml" in names
    assert "policylint/_data/schemas/report.schema.json" in names
    assert "policylint/_data/schemas/profile.schema.json" in names
    assert any(n.startswith("policylint/profiles/builtin/") and n.endswith(".yaml") for n in names)
    assert "policylint/profiles/builtin.json" in names  # what runs read instead of parsing them
    assert "policylint/_data/rules/PL001-yaml-syntax-error.md" in names
    # The tables the schema rules read (PL701, PL702).
    assert "policylint/k8s/deprecated_fields.json" in names
    assert "policylint/k8s/schema_differences.json" in names
    assert "policylint/k8s/crd_schemas.zip" in names


def test_installed_package_is_the_wheel_not_the_checkout(installed: Installed) -> None:
    proc = installed.run(
        "python",
        "-c",
        "import pathlib, policylint, policylint.input.load as l; print(pathlib.Path(policylint.__file__).parent); print(l.PARSER_IS_C)",
    )
    assert proc.returncode == 0, proc.stderr
    package_dir, parser_is_c = proc.stdout.split()
    package = Path(package_dir)
    assert installed.venv in package.parents
    # The libyaml C parser is the hot path (docs/performance.md): the installed PyYAML must have it.
    assert parser_is_c == "True"
    data = package / "_data"
    assert (package / "k8s" / "kinds.yaml").is_file()
    assert sorted((package / "profiles" / "builtin").glob("*.yaml")), "no built-in profiles in the installed package"
    assert (data / "schemas" / "report.schema.json").is_file()


def test_installed_cli_lints_the_examples(installed: Installed) -> None:
    proc = installed.run("policylint", str(ROOT / "examples"))
    assert proc.returncode == 1, proc.stderr
    findings = [line for line in proc.stdout.splitlines() if ": error PL" in line or ": warning PL" in line]
    assert findings, proc.stdout
    assert "PL001" in proc.stdout
    assert "error" in proc.stderr  # the summary line


def test_installed_cli_prints_rule_docs(installed: Installed) -> None:
    proc = installed.run("policylint", "rule", "PL001")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("# PL001 yaml-syntax-error")
    assert "## Bad" in proc.stdout


def test_installed_cli_lists_profiles_and_version(installed: Installed) -> None:
    proc = installed.run("policylint", "profiles")
    assert proc.returncode == 0, proc.stderr
    assert "BackendTLSPolicy" in proc.stdout
    version = installed.run("policylint", "--version")
    assert version.returncode == 0 and version.stdout.startswith("policylint, version ")


def test_installed_cli_reports_the_demo_findings(installed: Installed) -> None:
    """`make demo` from the wheel alone: the same findings, at the same places, as the checkout."""

    def findings(*command: str) -> list[tuple[str, str, int, int, str]]:
        proc = subprocess.run(
            [*command, "check", "--format", "json", "--no-cache", str(ROOT / "examples")],
            cwd=installed.workdir,
            env=_clean_env(),
            capture_output=True,
            text=True,
            timeout=TIMEOUT,
            check=False,
        )
        assert proc.returncode == 1, proc.stderr
        report = json.loads(proc.stdout)
        return [(f["rule"], f["file"], f["line"], f["column"], f["message"]) for f in report["findings"]]

    from_wheel = findings(str(installed.bin / "policylint"))
    assert from_wheel == findings(sys.executable, "-m", "policylint")
    assert {"PL001", "PL201", "PL203"} <= {rule for rule, *_ in from_wheel}


def test_the_sdist_unpacks_with_the_data_filter(installed: Installed) -> None:
    # pip and build unpack an sdist with tarfile's "data" filter, which refuses links to absolute
    # paths and out of the tree: every member must pass it.
    with tarfile.open(installed.sdist) as archive:
        members = archive.getmembers()
        for member in members:
            tarfile.data_filter(member, str(installed.workdir / "unpacked"))
    names = {m.name.split("/", 1)[1] for m in members if "/" in m.name}
    assert {"pyproject.toml", "README.md", "CHANGELOG.md", "policylint/__init__.py", "rules/PL008-unreadable-file.md"} <= names
    assert "tests/rules/PL008-unreadable-file/links.txt" in names
    assert not any(m.issym() or m.islnk() for m in members)
