"""Benchmark policylint against the parse-only floor, on the same corpus, in one run.

    python benchmarks/run.py [--sizes 1000,10000] [--repeat 3] [--seed 1] [--no-startup] [--json]

For every size, a corpus is generated (benchmarks/generate.py) in a temporary
directory, then a fresh Python process measures, best of `--repeat` runs:

* the parse-only floor: PyYAML `yaml.load_all(text, Loader=yaml.CSafeLoader)`
  over every file (reading included, no positions, no model) -- what any
  Python tool reading these files has to pay;
* the full lint: `policylint.pipeline.lint` over the directory (every rule,
  positions of findings, nothing printed), one process, no parse cache;
* the same with `jobs=2` (files parsed in two worker processes);
* the parse cache: a cold run that fills it, a warm run with nothing changed,
  and a warm run after changing one file (a different file each time), as a
  pre-commit hook sees it. These are in-process (imports already done); the
  same warm run through the `policylint` command, interpreter start included,
  is measured too.

It reports objects/s, ratios against the floor measured in the same process,
and the process's peak RSS. Each size runs in its own process so that peak RSS
belongs to that size alone. The time ratio between consecutive sizes shows
whether time grows linearly (normalised 1.00 = linear). Peers found on PATH
(yamllint, checkov) are run on the largest corpus for comparison, and
benchmarks/startup.py measures the command's cold start.

Figures depend on the machine; compare ratios, not absolute numbers.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent

# Targets of the performance issue, as ratios against the floor measured in the same run.
TARGET_LINT = 1.5
TARGET_JOBS2 = 1.0
TARGET_GROWTH_100K = 11.0
TARGET_WARM_S = 0.3


def _best_of(repeat: int, fn: Callable[[], int]) -> tuple[float, int]:
    best = float("inf")
    count = 0
    for _ in range(repeat):
        start = time.perf_counter()
        count = fn()
        best = min(best, time.perf_counter() - start)
    return best, count


def _peak_rss_mib(who: int = resource.RUSAGE_SELF) -> float:
    # ru_maxrss is KiB on Linux, bytes on macOS.
    peak = resource.getrusage(who).ru_maxrss
    return peak / (1024 * 1024) if sys.platform == "darwin" else peak / 1024


def _command() -> list[str]:
    script = shutil.which("policylint", path=str(Path(sys.executable).parent))
    return [script] if script else [sys.executable, "-m", "policylint"]


def measure(corpus: Path, repeat: int) -> dict[str, Any]:
    """Runs in the child process: every measurement on one corpus."""
    import yaml

    from policylint.pipeline import LintRequest, lint

    files = sorted(str(p) for p in corpus.rglob("*.yaml"))

    def parse_only() -> int:
        n = 0
        for path in files:
            with open(path, encoding="utf-8") as fh:
                text = fh.read()
            n += sum(1 for doc in yaml.load_all(text, Loader=yaml.CSafeLoader) if doc is not None)
        return n

    findings: list[int] = []

    def full_lint(jobs: int = 1, cache_dir: str | None = None) -> int:
        result = lint(LintRequest(paths=[str(corpus)], jobs=jobs, cache_dir=cache_dir))
        findings[:] = [len(result.findings)]
        return len(result.index.objects)

    rss_start = _peak_rss_mib()
    parse_s, parsed = _best_of(repeat, parse_only)
    rss_parse = _peak_rss_mib()
    lint_s, linted = _best_of(repeat, full_lint)
    rss_lint = _peak_rss_mib()
    n_findings = findings[0]
    jobs2_s, _ = _best_of(repeat, lambda: full_lint(jobs=2))

    with tempfile.TemporaryDirectory(prefix="policylint-bench-cache-") as cache_dir:
        cold_cache_s, _ = _best_of(1, lambda: full_lint(cache_dir=cache_dir))
        warm_s, _ = _best_of(repeat, lambda: full_lint(cache_dir=cache_dir))
        edits = iter(range(len(files)))

        def one_changed() -> int:
            # A real edit of one file (a different one each time): its entry misses, the rest hit.
            path = files[next(edits) * 7 % len(files)]
            with open(path, "a", encoding="utf-8") as fh:
                fh.write(f"# edited {time.time_ns()}\n")
            return full_lint(cache_dir=cache_dir)

        warm_one_s, _ = _best_of(repeat, one_changed)
        # The same through the command: a fresh interpreter, imports, output rendering included.
        cli_times = []
        for _ in range(max(repeat, 3)):
            with open(files[next(edits) * 7 % len(files)], "a", encoding="utf-8") as fh:
                fh.write(f"# edited {time.time_ns()}\n")
            start = time.perf_counter()
            proc = subprocess.run(
                [*_command(), "check", "--format", "json", "--cache-dir", cache_dir, str(corpus)],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
                check=False,
            )
            cli_times.append(time.perf_counter() - start)
            if proc.returncode not in (0, 1):
                raise SystemExit(f"policylint failed:\n{proc.stderr.decode(errors='replace')}")
    return {
        "files": len(files),
        "bytes": sum(os.path.getsize(p) for p in files),
        "objects_parsed": parsed,
        "objects_linted": linted,
        "findings": n_findings,
        "parse_s": parse_s,
        "lint_s": lint_s,
        "jobs2_s": jobs2_s,
        "cold_cache_s": cold_cache_s,
        "warm_s": warm_s,
        "warm_one_changed_s": warm_one_s,
        "warm_one_changed_cli_s": statistics.median(cli_times),
        "rss_start_mib": rss_start,
        "rss_parse_mib": rss_parse,
        "rss_lint_mib": rss_lint,
        "rss_peak_mib": _peak_rss_mib(),
        "rss_workers_mib": _peak_rss_mib(resource.RUSAGE_CHILDREN),
    }


def machine() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as fh:
            for line in fh:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    import yaml

    libyaml = "libyaml" if getattr(yaml, "__with_libyaml__", False) else "NO libyaml"
    try:
        cpus = len(os.sched_getaffinity(0))
    except AttributeError:
        cpus = os.cpu_count() or 0
    return (
        f"{cpus} CPUs, {cpu}; Python {platform.python_version()} ({platform.python_implementation()}), "
        f"PyYAML {yaml.__version__} ({libyaml}), {platform.system()} {platform.release()}"
    )


def peers(corpus: Path) -> list[tuple[str, str]]:
    """Other linters on PATH, run once each on the same corpus (never installed by this script)."""
    commands = {
        "yamllint": ["yamllint", "--no-warnings", "-f", "parsable", str(corpus)],
        "checkov": ["checkov", "--quiet", "--compact", "--framework", "kubernetes", "-d", str(corpus)],
    }
    out = []
    for name, argv in commands.items():
        if shutil.which(name) is None:
            out.append((name, "not installed"))
            continue
        start = time.perf_counter()
        proc = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=False)
        elapsed = time.perf_counter() - start
        out.append((name, f"{elapsed:.2f} s wall (exit {proc.returncode})"))
    return out


def run(sizes: list[int], repeat: int, seed: int, per_file: int, with_peers: bool) -> tuple[list[dict[str, Any]], list[tuple[str, str]]]:
    sys.path.insert(0, str(HERE))
    from generate import write_corpus

    rows = []
    peer_rows: list[tuple[str, str]] = []
    with tempfile.TemporaryDirectory(prefix="policylint-bench-") as tmp:
        for n in sizes:
            corpus = Path(tmp) / f"corpus-{n}"
            write_corpus(n, corpus, seed=seed, per_file=per_file)
            if with_peers and n == sizes[-1]:
                peer_rows = [(f"{name} on {n:,} objects", text) for name, text in peers(corpus)]
            # A fresh interpreter per size: peak RSS is per size, and no in-memory state survives.
            start = time.perf_counter()
            proc = subprocess.run(
                [sys.executable, str(Path(__file__).resolve()), "--measure", str(corpus), "--repeat", str(repeat)],
                capture_output=True,
                text=True,
                check=False,
                cwd=tmp,
            )
            if proc.returncode != 0:
                raise SystemExit(f"measurement failed for {n} objects:\n{proc.stderr}")
            row = json.loads(proc.stdout)
            row["size"] = n
            rows.append(row)
            print(f"  measured {n:,} objects in {time.perf_counter() - start:.0f} s", file=sys.stderr)
    return rows, peer_rows


def _verdict(ok: bool) -> str:
    return "meets the target" if ok else "MISSES the target"


def report(rows: list[dict[str, Any]], repeat: int, peer_rows: list[tuple[str, str]]) -> str:
    out = [
        f"machine: {machine()}",
        f"best of {repeat} runs per measurement; objects/s = objects / wall time; ratios are times against the"
        " parse-only floor of the same process (lower is better)",
        "",
        "| objects | files | MB | floor objects/s | lint objects/s | lint / floor | --jobs 2 / floor | peak RSS MiB floor / lint | findings |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        parse_rate = r["objects_parsed"] / r["parse_s"]
        lint_rate = r["objects_linted"] / r["lint_s"]
        out.append(
            f"| {r['size']:,} | {r['files']} | {r['bytes'] / 1e6:.1f} | {parse_rate:,.0f} | {lint_rate:,.0f} "
            f"| {r['lint_s'] / r['parse_s']:.2f}x | {r['jobs2_s'] / r['parse_s']:.2f}x "
            f"| {r['rss_parse_mib']:.0f} / {r['rss_lint_mib']:.0f} | {r['findings']} |"
        )
    out += [
        "",
        "parse cache (in-process: imports done, lint() called as the command calls it; the `policylint` line adds a"
        " fresh interpreter, imports and JSON output):",
        "",
        "| objects | cold, filling the cache / no cache | warm, nothing changed | warm, 1 file changed | same, `policylint` command |",
        "|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        out.append(
            f"| {r['size']:,} | {r['cold_cache_s'] / r['lint_s']:.2f}x | {r['warm_s']:.2f} s ({r['warm_s'] / r['parse_s']:.2f}x floor) "
            f"| {r['warm_one_changed_s']:.2f} s | {r['warm_one_changed_cli_s']:.2f} s |"
        )
    out.append("")
    for small, big in zip(rows, rows[1:]):
        size_ratio = big["size"] / small["size"]
        lint_ratio = big["lint_s"] / small["lint_s"]
        parse_ratio = big["parse_s"] / small["parse_s"]
        out.append(
            f"{big['size']:,}/{small['size']:,} objects (x{size_ratio:g}): lint time x{lint_ratio:.2f} "
            f"(normalised {lint_ratio / size_ratio:.2f}; 1.00 = linear), parse-only time x{parse_ratio:.2f}"
        )
    by_size = {r["size"]: r for r in rows}
    out += ["", "targets:"]
    for r in rows:
        if r["size"] >= 10_000:
            lint_ratio = r["lint_s"] / r["parse_s"]
            jobs_ratio = r["jobs2_s"] / r["parse_s"]
            out.append(f"  {r['size']:,}: lint {lint_ratio:.2f}x floor (<= {TARGET_LINT}): {_verdict(lint_ratio <= TARGET_LINT)}")
            out.append(f"  {r['size']:,}: --jobs 2 {jobs_ratio:.2f}x floor (<= {TARGET_JOBS2}): {_verdict(jobs_ratio <= TARGET_JOBS2)}")
    if 10_000 in by_size:
        warm = by_size[10_000]["warm_one_changed_s"]
        out.append(f"  10,000: warm, 1 file changed {warm:.2f} s in-process (<= {TARGET_WARM_S}): {_verdict(warm <= TARGET_WARM_S)}")
    if 10_000 in by_size and 100_000 in by_size:
        growth = by_size[100_000]["lint_s"] / by_size[10_000]["lint_s"]
        out.append(f"  t(100k)/t(10k) = {growth:.2f} (<= {TARGET_GROWTH_100K:g}): {_verdict(growth <= TARGET_GROWTH_100K)}")
    for r in rows:
        out.append(
            f"  {r['size']:,}: peak RSS {r['rss_peak_mib']:.0f} MiB (parent), {r['rss_workers_mib']:.0f} MiB (largest worker or command)"
        )
    if peer_rows:
        out += ["", "peers (same corpus, one run each):"]
        out += [f"  {name}: {text}" for name, text in peer_rows]
    return "\n".join(out)


def startup(runs: int) -> str:
    """Cold start of the command, by benchmarks/startup.py (median of fresh processes)."""
    proc = subprocess.run(
        [sys.executable, str(HERE / "startup.py"), "--runs", str(runs)], capture_output=True, text=True, check=False
    )
    if proc.returncode != 0:
        return f"startup measurement failed:\n{proc.stderr}"
    lines = [line for line in proc.stdout.splitlines() if not line.startswith("machine:")]
    return "\n".join(lines).strip()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,10000", help="comma-separated corpus sizes in objects (default 1000,10000)")
    parser.add_argument("--repeat", type=int, default=3, help="runs per measurement; the best is kept (default 3)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--per-file", type=int, default=100)
    parser.add_argument("--startup-runs", type=int, default=11, help="fresh processes per startup figure (default 11)")
    parser.add_argument("--no-startup", action="store_true", help="skip the cold-start measurement")
    parser.add_argument("--no-peers", action="store_true", help="do not run yamllint or checkov even when installed")
    parser.add_argument("--json", action="store_true", help="print the raw measurements as JSON")
    parser.add_argument("--measure", type=Path, help=argparse.SUPPRESS)  # internal: child process mode
    args = parser.parse_args(argv)
    if args.measure is not None:
        print(json.dumps(measure(args.measure, args.repeat)))
        return 0
    sizes = sorted(int(s) for s in args.sizes.split(",") if s.strip())
    rows, peer_rows = run(sizes, args.repeat, args.seed, args.per_file, not args.no_peers)
    if args.json:
        print(json.dumps({"machine": machine(), "rows": rows, "peers": peer_rows}, indent=2))
        return 0
    print(report(rows, args.repeat, peer_rows))
    if not args.no_startup and (HERE / "startup.py").exists():
        print("\ncold start (benchmarks/startup.py):\n" + startup(args.startup_runs))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
