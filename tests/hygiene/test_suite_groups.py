"""The suite's own distribution: the tests of one `xdist_group` run on one worker
(tests/xdist_groups.py), so that a module fixture they share is built once, not once per worker.

A small suite is run in a subprocess with two workers and `--dist loadgroup`, as `make test` runs
this one: six tests of a group sharing a module fixture that notes each time it is built, and six
tests of no group. The scheduler hands out the units in collection order, one to each worker in
turn, so a group that is not one unit has its tests on both workers and its fixture built twice.
And the property tests' example counts: the quick one in `make test`, the full one in `make
test-all` (tests/examples.py).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

CONFTEST = """\
import pytest

from tests.xdist_groups import keep_groups


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config, items):
    keep_groups(config, items)
"""

GROUPED = """\
import os

import pytest

pytestmark = pytest.mark.xdist_group("costly")


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    with open(os.environ["BUILT_LOG"], "a") as log:
        log.write(os.environ["PYTEST_XDIST_WORKER"] + "\\n")


@pytest.mark.parametrize("n", range(6))
def test_grouped(built, n):
    pass
"""

LOOSE = """\
import pytest


@pytest.mark.parametrize("n", range(6))
def test_loose(n):
    pass
"""


def test_a_groups_tests_run_on_one_worker_and_build_its_fixture_once(tmp_path: Path) -> None:
    suite = tmp_path / "suite"
    suite.mkdir()
    (suite / "conftest.py").write_text(CONFTEST, encoding="utf-8")
    (suite / "test_a_grouped.py").write_text(GROUPED, encoding="utf-8")
    (suite / "test_b_loose.py").write_text(LOOSE, encoding="utf-8")
    log = tmp_path / "built.log"
    # Run from a worker of this suite, the inner run is a run of its own, not one of its workers.
    env = {name: value for name, value in os.environ.items() if not name.startswith("PYTEST_XDIST_")}
    env.update(BUILT_LOG=str(log), PYTHONPATH=str(ROOT))
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-n", "2", "--dist", "loadgroup", str(suite)],
        cwd=suite,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "12 passed" in done.stdout, done.stdout
    # Built once, on one worker: the six grouped tests were one unit.
    assert len(log.read_text(encoding="utf-8").splitlines()) == 1


def test_no_property_test_is_judged_by_the_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    """The profile `tests/conftest.py` loads: no deadline and no too-slow health check, which fail
    on a busy machine where nothing is wrong; the example counts are Hypothesis's or the test's."""
    from hypothesis import HealthCheck, settings

    current = settings()
    assert current.deadline is None
    assert HealthCheck.too_slow in current.suppress_health_check
    assert current.max_examples == settings.get_profile("default").max_examples
    long = settings.get_profile("long")
    assert long.deadline is None and HealthCheck.too_slow in long.suppress_health_check
    # The fuzz tests' own counts hold under the suite's profile as under Hypothesis's default.
    from tests.hostile.test_fuzz import budget

    monkeypatch.delenv("POLICYLINT_FUZZ_EXAMPLES", raising=False)
    assert budget(ci=7).max_examples == 7


def test_a_property_test_tries_its_quick_count_in_make_test_and_its_full_count_in_ci(monkeypatch: pytest.MonkeyPatch) -> None:
    """tests/examples.py: `make test` the quick count, `make test-all` (POLICYLINT_FULL_EXAMPLES=1)
    the full one, POLICYLINT_FUZZ_EXAMPLES or a profile of more examples what it asks."""
    from hypothesis import settings

    from tests.examples import count, examples

    monkeypatch.delenv("POLICYLINT_FUZZ_EXAMPLES", raising=False)
    monkeypatch.delenv("POLICYLINT_FULL_EXAMPLES", raising=False)
    assert count(30, 300) == 30
    assert examples(30, 300).max_examples == 30 and examples(30, 300).deadline is None
    monkeypatch.setenv("POLICYLINT_FULL_EXAMPLES", "1")
    assert count(30, 300) == 300
    monkeypatch.setenv("POLICYLINT_FUZZ_EXAMPLES", "5000")
    assert count(30, 300) == 5000
    monkeypatch.delenv("POLICYLINT_FUZZ_EXAMPLES")
    monkeypatch.delenv("POLICYLINT_FULL_EXAMPLES")
    current = settings.get_current_profile_name()
    settings.load_profile("long")
    try:
        assert count(30, 300) == settings.get_profile("long").max_examples
    finally:
        settings.load_profile(current)


def test_make_test_all_runs_the_property_tests_full_counts() -> None:
    """CI's run on the primary Python (`make test-all`, .ci/run) is the one that tries every
    property test's full count: the pytest line of its recipe sets POLICYLINT_FULL_EXAMPLES."""
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    recipe = makefile.split("\ntest-all:", 1)[1].split("\n\n", 1)[0]
    pytest_lines = [line for line in recipe.splitlines() if "-m pytest" in line]
    assert pytest_lines and all(line.strip().startswith("POLICYLINT_FULL_EXAMPLES=1 ") for line in pytest_lines), recipe


def test_the_other_pythons_run_the_fast_tests_and_the_slow_ones_marked_for_every_python() -> None:
    """.ci/pythons runs on 3.10 and 3.13 what `make test` runs and the slow tests marked
    `every_python`, registered in pyproject.toml; each of those is slow (else the mark says
    nothing), and the wheel and the hostile budgets are among them."""
    script = (ROOT / ".ci" / "pythons").read_text(encoding="utf-8")
    runs = [line for line in script.splitlines() if "-m pytest" in line]
    assert len(runs) == 1 and runs[0].rstrip().endswith('-m "not slow or every_python"'), runs
    assert "every_python:" in (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    marked = []
    for path in sorted((ROOT / "tests").rglob("test_*.py")):
        lines = path.read_text(encoding="utf-8").splitlines()
        for k, line in enumerate(lines):
            if line.startswith(("@pytest.mark.every_python", "pytestmark =")) and "every_python" in line:
                marked.append(path.relative_to(ROOT).as_posix())
                assert "pytest.mark.slow" in line or "pytest.mark.slow" in lines[k - 1], f"{path}:{k + 1}"
    assert {"tests/release/test_wheel.py", "tests/hostile/test_hostile_budget.py"} <= set(marked), marked
