"""The hostile-input acceptance run: every hostile case in bounded time and memory.

    python fuzz/hostile.py [--seconds 2] [--mb 300] [--timeout 10] [--no-cache-runs] [-k TEXT] [--keep DIR]

Builds the corpus of tests/hostile_cases.py (every case of
tests/hostile/test_hostile_inputs.py plus the classes of the hostile-input review, each
in its own directory next to a known-good file), then lints each case with
`python -m policylint check DIR --format json` in a subprocess:

* `no-cache`: `--no-cache`, for every case;
* `jobs-2`: `--no-cache --jobs 2`, for the cases big enough for worker processes;
* `cache-cold`, `cache-warm`: the default parse cache in a cache home of the
  case's own (`XDG_CACHE_HOME`, `HOME`; `POLICYLINT_CACHE_DIR` unset), empty and
  then filled by the cold run; the report must equal the `no-cache` one;
* `text`: `--format text` for the cases whose names carry control characters.

Each run has standard input open and never written, standard output a pipe,
and is killed at `--timeout`. The table shows its exit code, wall time (process
start included), CPU time (user + system, workers included) and peak RSS (the
largest `ru_maxrss` of the command and its reaped worker processes, from
`os.wait4`). Load barely changes CPU time: a run over the time budget with
little CPU time was slowed down by the machine, not by its input. A run fails
when it exceeds the budget (`--seconds`, `--mb`; the acceptance is 2 s and
300 MB per case), prints a traceback, exits other than 0 or 1, loses the good
file, reports a finding without a location inside the case, writes into the
linted tree or changes files outside it, or misses the finding its case
expects. The command exits 1 when any run fails.

`make hostile` runs it. tests/hostile/test_hostile_budget.py runs the same cases in the
test suite with budgets that do not depend on the machine's load.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # `tests` is importable from a checkout

from tests.hostile_cases import (
    CACHE_WARM,
    NO_CACHE,
    TEXT,
    BuiltCase,
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


def _row(run: Run, failures: list[str]) -> str:
    code = "-" if run.exit_code is None else str(run.exit_code)
    cpu = "-" if run.cpu_seconds is None else f"{run.cpu_seconds:.2f}"
    result = "ok" if not failures else f"FAIL {failures[0][:70]}" + (f" (+{len(failures) - 1})" if len(failures) > 1 else "")
    return f"{run.case[:44]:<44} {run.mode:<10} {code:>4} {run.seconds:>7.2f} {cpu:>6} {run.peak_rss / 1e6:>7.0f}  {result}"


def _run_all(built: list[BuiltCase], runs_root: Path, args: argparse.Namespace) -> list[tuple[Run, list[str]]]:
    outcomes: list[tuple[Run, list[str]]] = []
    print(f"{'case':<44} {'mode':<10} {'exit':>4} {'time s':>7} {'cpu s':>6} {'peak MB':>7}  result", flush=True)
    for item in built:
        reference: Run | None = None
        for mode in modes_for(item.case, cache=not args.no_cache_runs):
            # The warm run reuses the cold run's cache home.
            scratch = runs_root / item.directory.name / ("cache-cold" if mode is CACHE_WARM else mode.name)
            run = run_case(item, mode, scratch, timeout=args.timeout)
            failures = problems(item, run)
            failures += over_budget(run, seconds=args.seconds, rss=int(args.mb * 1e6))
            if mode is TEXT:
                failures += text_problems(item, run)
            else:
                failures += unmet(item, run)
            if mode is NO_CACHE:
                reference = run
            elif reference is not None and mode is not TEXT:
                failures += differences(reference, run)
            # Keep what the summary needs, not megabytes of output per run.
            run.stdout = b""
            run.report = None if mode is not NO_CACHE else run.report
            outcomes.append((run, failures))
            print(_row(run, failures), flush=True)
    return outcomes


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=2.0, help="wall-time budget per run (default 2)")
    parser.add_argument("--mb", type=float, default=300.0, help="peak RSS budget per run, in MB (default 300)")
    parser.add_argument("--timeout", type=float, default=10.0, help="kill a run after this many seconds (default 10)")
    parser.add_argument(
        "--no-cache-runs", action="store_true", help="skip the cache-cold/cache-warm runs of cases that do not plant a cache"
    )
    parser.add_argument("-k", dest="only", default="", help="only the cases whose id contains TEXT")
    parser.add_argument("--keep", metavar="DIR", help="build the corpus in DIR (must not exist) and keep it")
    args = parser.parse_args()

    cases = [c for c in all_cases() if args.only in c.id]
    if not cases:
        print(f"no case id contains {args.only!r}", file=sys.stderr)
        return 2
    if args.keep:
        root = Path(args.keep).resolve()
        root.mkdir(parents=True)
    else:
        root = Path(tempfile.mkdtemp(prefix="policylint-hostile-"))
    built = build_corpus(root / "corpus", cases)
    try:
        outcomes = _run_all(built, root / "runs", args)
    finally:
        release_corpus(built)
        if not args.keep:
            shutil.rmtree(root, ignore_errors=True)

    failed = [(run, failures) for run, failures in outcomes if failures]
    cases_failed = sorted({run.case for run, _ in failed})
    print(
        f"\n{len(outcomes)} runs of {len(built)} cases; {len(failed)} runs failed ({len(cases_failed)} cases); "
        f"budget {args.seconds:g} s and {args.mb:g} MB per run"
        + ("" if os.geteuid() != 0 else "; running as root: unreadable directories are simulated")
    )
    for run, failures in failed:
        print(f"\n{run.case} [{run.mode}]")
        for failure in failures:
            print(f"  - {failure}")
    if args.keep:
        print(f"\ncorpus kept in {root}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
