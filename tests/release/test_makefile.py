"""`make` never traps a user: an unsupported interpreter is refused before a virtual environment
is made with it, and a .venv that one made is made again with the interpreter named.

Each test runs the real Makefile in a scratch copy of the files its venv targets read, with a
fake `python3` that says it is 3.9 (and fails whatever it is asked to run, as the version check
does on 3.9).
"""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from tests.lintutil import ROOT

FAKE_PYTHON_39 = '#!/bin/sh\ncase "$1" in --version) echo "Python 3.9.18";; *) exit 1;; esac\n'


def _project(tmp_path: Path) -> Path:
    project = tmp_path / "project"
    project.mkdir()
    for name in ("Makefile", "pyproject.toml"):
        shutil.copy(ROOT / name, project / name)
    return project


def _fake(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(FAKE_PYTHON_39)
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


def _make(project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MAKELEVEL", "VIRTUAL_ENV")}
    return subprocess.run(["make", "-C", str(project), *args], env=env, capture_output=True, text=True, timeout=300, check=False)


def test_an_old_python_is_refused_before_a_venv_is_made(tmp_path: Path) -> None:
    project = _project(tmp_path)
    fake = _fake(tmp_path / "bin" / "python3")
    proc = _make(project, f"PYTHON={fake}", "demo")
    assert proc.returncode != 0
    assert f"{fake} is Python 3.9.18; policylint needs Python >= 3.10" in proc.stderr
    assert "make demo PYTHON=python3.11" in proc.stderr
    assert not (project / ".venv").exists()


def test_a_missing_python_is_named(tmp_path: Path) -> None:
    project = _project(tmp_path)
    proc = _make(project, "PYTHON=python3-that-does-not-exist", "test")
    assert proc.returncode != 0
    assert "python3-that-does-not-exist not found. policylint needs Python >= 3.10" in proc.stderr
    assert "make test PYTHON=python3.11" in proc.stderr
    assert not (project / ".venv").exists()


@pytest.mark.slow
def test_a_venv_made_by_an_old_python_is_made_again(tmp_path: Path) -> None:
    project = _project(tmp_path)
    _fake(project / ".venv" / "bin" / "python")
    (project / ".venv" / "stale-marker").write_text("")
    # The interpreter running the tests is a supported one.
    proc = _make(project, f"PYTHON={sys.executable}", ".venv/bin/python")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert ".venv was made by an unsupported Python (Python 3.9.18): making it again" in proc.stdout
    assert not (project / ".venv" / "stale-marker").exists()
    version = subprocess.run([str(project / ".venv" / "bin" / "python"), "--version"], capture_output=True, text=True, check=True)
    assert version.stdout.strip() == f"Python {sys.version.split()[0]}"
    # Made once: the next run finds it supported and leaves it.
    again = _make(project, f"PYTHON={sys.executable}", ".venv/bin/python")
    assert again.returncode == 0 and "is up to date" in again.stdout
