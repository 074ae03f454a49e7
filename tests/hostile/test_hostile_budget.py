"""Every hostile input through the real command, in bounded time and memory.

The cases are those of tests/hostile_cases.py: every case of
tests/hostile/test_hostile_inputs.py plus the classes of the hostile-input review
(regex backtracking on template markers, alias amplification of bytes, keys
and depth, millions of documents or nodes, integers too long to print, special
files, an unreadable directory, a parse cache planted in the repository, control
characters in names). Each is linted next to a good file by
`python -m policylint check` in a subprocess with stdin open and never written,
so that a read that blocks fails the test instead of hanging it.

fuzz/hostile.py (`make hostile`) holds the acceptance budgets, 2 s and 300 MB
per case. Here the budgets must not depend on the machine's load: 20 s is a
structural bound (the inputs that regressed took from 15 s to hours, or never
ended), and peak RSS, which load does not change, keeps the acceptance's
300 MB. Each case and mode runs once per session, two cases at a time; the
tests of a case share its runs.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.hostile_cases import (
    CACHE_COLD,
    CACHE_WARM,
    JOBS_2,
    NO_CACHE,
    TEXT,
    BuiltCase,
    HostileCase,
    Mode,
    Run,
    all_cases,
    build_corpus,
    differences,
    modes_for,
    over_budget,
    problems,
    release_corpus,
    run_case,
    text_problems,
    unmet,
)

# Slow (every hostile case in a subprocess of its own, each with its budget): `make test` leaves it to `make test-all` (.ci/run).
# On every supported Python: peak memory, recursion and the time a case takes are the interpreter's.
pytestmark = [pytest.mark.slow, pytest.mark.every_python]

SECONDS = 20.0  # also the timeout: a run that hangs is killed here and fails
PEAK_RSS = 300 * 10**6

CASES = all_cases()
RUNS = [(case, mode) for case in CASES for mode in modes_for(case, cache=case.large)]
# Runs that produce a report, of the cases that expect something of it.
EXPECTING = [(c, m) for c, m in RUNS if m is not TEXT and (c.expect or c.clean or c.accepted or c.absent)]


def _id(pair: tuple[HostileCase, Mode]) -> str:
    return f"{pair[0].id}-{pair[1].name}"


@dataclass
class Outcome:
    run: Run
    problems: list[str]


@pytest.fixture(scope="session")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, BuiltCase]]:
    # Built once: the big files (a 64 MiB file, 14 MB of documents) are written once per session.
    built = build_corpus(tmp_path_factory.mktemp("hostile"), CASES)
    yield {item.case.id: item for item in built}
    release_corpus(built)


# The order of a case's runs: the reference first, the cold cache before the warm one.
ORDER = [NO_CACHE, JOBS_2, CACHE_COLD, CACHE_WARM, TEXT]
# Cases linted at once. Two fill a 2-core CI machine; peak RSS is per process, and the time
# budget is an order of magnitude above what a case needs, so neither judgement depends on it.
WORKERS = 2


@pytest.fixture(scope="session")
def outcome(
    request: pytest.FixtureRequest, corpus: dict[str, BuiltCase], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Callable[[HostileCase, Mode], Outcome]]:
    """The run of a case in a mode, shared by every test that asks for it. The runs the selected
    tests need are started at the first request, two cases at a time, each case's runs in ORDER."""
    runs_root = tmp_path_factory.mktemp("hostile-runs")
    wanted: dict[str, set[str]] = {}
    for test in request.session.items:
        pair = getattr(getattr(test, "callspec", None), "params", {}).get("pair")
        if pair is not None:
            wanted.setdefault(pair[0].id, {NO_CACHE.name}).add(pair[1].name)

    # Taken here, in pytest's thread: the runs start in the pool's threads (`run_case`).
    environ = dict(os.environ)

    def run_all(case: HostileCase, names: set[str]) -> dict[str, Run]:
        item = corpus[case.id]
        if CACHE_WARM.name in names:
            names = names | {CACHE_COLD.name}  # warm means after the cold run filled the same cache
        runs: dict[str, Run] = {}
        for mode in ORDER:
            if mode.name in names:
                scratch = runs_root / item.directory.name / ("cache-cold" if mode is CACHE_WARM else mode.name)
                runs[mode.name] = run_case(item, mode, scratch, timeout=SECONDS, environ=environ)
        return runs

    pool = ThreadPoolExecutor(max_workers=WORKERS)
    futures: dict[str, Future[dict[str, Run]]] = {}
    by_id = {case.id: case for case in CASES}

    def start() -> None:
        if not futures:
            for case_id, names in wanted.items():
                futures[case_id] = pool.submit(run_all, by_id[case_id], names)

    def get(case: HostileCase, mode: Mode) -> Outcome:
        start()
        if case.id not in futures or mode.name not in wanted.get(case.id, set()):
            if case.id in futures:
                futures[case.id].result()  # never two runs of one case at once: they share directories
            wanted[case.id] = wanted.get(case.id, {NO_CACHE.name}) | {NO_CACHE.name, mode.name}
            futures[case.id] = pool.submit(run_all, case, wanted[case.id])
        runs = futures[case.id].result()
        item, run = corpus[case.id], runs[mode.name]
        found = problems(item, run) + over_budget(run, seconds=SECONDS, rss=PEAK_RSS)
        if mode is TEXT:
            found += text_problems(item, run)
        elif mode is not NO_CACHE:
            found += differences(runs[NO_CACHE.name], run)
        return Outcome(run, found)

    yield get
    pool.shutdown(wait=True, cancel_futures=True)


def test_the_corpus_covers_the_suite_and_the_review() -> None:
    from tests.hostile.test_hostile_inputs import CASES as SUITE

    ids = {c.id for c in CASES}
    assert {c.id for c in SUITE} <= ids
    # Every class of the review has at least one case, and every mode runs at least once.
    for prefix in (
        "template-",
        "alias-",
        "integer-",
        "hostname-",
        "fifo",
        "symlink-",
        "unreadable-",
        "forged-cache",
        "control-characters",
        "config-",
    ):
        assert any(i.startswith(prefix) for i in ids), prefix
    assert {m.name for _, m in RUNS} == {"no-cache", "jobs-2", "cache-cold", "cache-warm", "text"}


@pytest.mark.parametrize("pair", RUNS, ids=[_id(p) for p in RUNS])
def test_no_traceback_bounded_and_the_good_file_linted(
    pair: tuple[HostileCase, Mode], outcome: Callable[[HostileCase, Mode], Outcome]
) -> None:
    """No traceback, exit 0 or 1, within 20 s and 300 MB, a valid report in which the good file
    is linted and clean and every finding is located inside the case, nothing written into the
    tree or changed outside it, and the same report whether parsed here, in workers or from cache."""
    result = outcome(*pair)
    run = result.run
    assert not result.problems, f"exit {run.exit_code}, {run.seconds:.1f} s, {run.peak_rss / 1e6:.0f} MB:\n" + "\n".join(
        result.problems
    )


@pytest.mark.parametrize("pair", EXPECTING, ids=[_id(p) for p in EXPECTING])
def test_the_hostile_file_gets_its_finding(
    pair: tuple[HostileCase, Mode], corpus: dict[str, BuiltCase], outcome: Callable[[HostileCase, Mode], Outcome]
) -> None:
    """The rule each class calls for (PL007 for bounds, PL004 for template markers, PL008 for
    special files, PL001 for bad integers and merges, ...), at its line where the input fixes it."""
    missing = unmet(corpus[pair[0].id], outcome(*pair).run)
    assert not missing, "\n".join(missing)


def test_a_run_that_does_not_end_is_killed_and_fails(corpus: dict[str, BuiltCase], tmp_path: Path) -> None:
    """The runner itself: a run still going at the timeout is killed with its whole process group
    and fails the budget, so a hang can never pass. 0.05 s is shorter than the interpreter takes
    to import policylint, so the run is killed whatever policylint does with the FIFO."""
    item = corpus["fifo"]
    run = run_case(item, NO_CACHE, tmp_path, timeout=0.05)
    assert run.timed_out
    assert over_budget(run, seconds=SECONDS, rss=PEAK_RSS) == [f"killed after {run.seconds:.1f} s"]
    assert run.report is None and not run.leftover_processes
    assert (item.directory / "pipe.yaml").exists()


def test_the_checks_catch_what_they_claim_to(corpus: dict[str, BuiltCase], tmp_path: Path) -> None:
    """The checks themselves, on a report doctored from a real one: each defect is named."""
    import copy

    item = corpus["two-colons"]
    run = run_case(item, NO_CACHE, tmp_path, timeout=SECONDS)
    assert run.report is not None and problems(item, run) == [] and unmet(item, run) == []
    original = run.report
    finding = next(f for f in original["findings"] if f["rule"] == "PL001")

    def doctored(change: Callable[[dict[str, Any]], None]) -> Run:
        report = copy.deepcopy(original)
        change(report)
        return Run(**{**run.__dict__, "report": report})

    def on_good_file(r: dict[str, Any]) -> None:
        r["findings"].append({**finding, "file": str(item.directory / "good.yaml")})

    def internal_error(r: dict[str, Any]) -> None:
        r["findings"].append({**finding, "rule": "PL000", "name": "internal-error"})

    def unlocated(r: dict[str, Any]) -> None:
        r["findings"][0]["line"] = 0

    def past_the_end(r: dict[str, Any]) -> None:
        r["findings"][0]["line"] = 99

    def policy_lost(r: dict[str, Any]) -> None:
        r["policies"] = []

    def finding_lost(r: dict[str, Any]) -> None:
        r["findings"] = []

    expected = {
        on_good_file: "findings on the good file",
        internal_error: "internal errors (PL000)",
        unlocated: "unlocated findings",
        past_the_end: "findings past the end of their file",
        policy_lost: "the good file was not linted",
    }
    for change, words in expected.items():
        found = problems(item, doctored(change))
        assert any(words in p for p in found), (change.__name__, found)
    assert unmet(item, doctored(finding_lost)) == ["expected PL001 on 'hostile.yaml' line 1; got no finding on it"]
    assert differences(run, doctored(finding_lost))[0].startswith("the report differs from the no-cache run's in 'findings'")
