"""No dead code in the package: vulture (configured in pyproject.toml `[tool.vulture]`) finds
nothing in policylint/ that nothing uses, counting the tests, benchmarks and fuzz targets as users
and tests/vulture_whitelist.py for what is used where vulture cannot see it (decorators,
dispatch by name, attributes a library reads)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _vulture(*args: str) -> list[str]:
    """What vulture reports in the package (no arguments: as pyproject.toml configures it)."""
    done = subprocess.run([sys.executable, "-m", "vulture", *args], cwd=ROOT, capture_output=True, text=True, check=False)
    assert done.returncode in (0, 3), done.stderr  # 3: vulture found something
    return done.stdout.splitlines()


@pytest.mark.slow
def test_the_package_has_no_dead_code() -> None:
    dead = [line for line in _vulture() if line.startswith("policylint/")]
    assert dead == [], (
        "delete the dead code (or, if it is used where vulture cannot see it, list it in tests/vulture_whitelist.py)"
    )


@pytest.mark.slow
def test_the_check_finds_dead_code(tmp_path: Path) -> None:
    # The same check over one more module, holding a function nothing calls: found, by file and line.
    module = tmp_path / "unused.py"
    module.write_text("def never_called() -> int:\n    return 1\n")
    found = _vulture("policylint", "tests", "tests/vulture_whitelist.py", str(module), "--min-confidence", "60")
    assert f"{module}:1: unused function 'never_called' (60% confidence)" in found
