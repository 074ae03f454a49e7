"""Benchmark policylint against the parse-only floor, on the same corpus, in one run.

    python benchmarks/run.py [--sizes 1000,10000] [--repeat 3] [--seed 1]

For every size, a corpus is generated (benchmarks/generate.py) in a temporary
directory, then a fresh Python process measures, best of `--repeat` runs:

* the parse-only floor: PyYAML `yaml.load_all(text, Loader=yaml.CSafeLoader)`
  over every file (reading included, no positions, no model) -- what any
  Python tool reading these files has to pay;
* the full lint: `policylint.pipeline.lint` over the directory (every rule,
  positions of findings, nothing printed);

and reports objects/s for both, their ratio, and the process's peak RSS. Each
size runs in its own process so that peak RSS belongs to that size alone.
Finally the time ratio between consecutive sizes shows whether time grows
linearly with the number of objects (normalised 1.00 = linear).

Figures depend on the machine; compare ratios, not absolute numbers.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent


def _best_of(repeat: int, fn: Callable[[], int]) -> tuple[float, int]:
    best = float("inf")
    count = 0
    for _ in range(repeat):
        start = time.perf_counter()
        count = fn()
        best = min(best, time.perf_counter() - start)
    return best, count


def _peak_rss_mib() -> float:
    # ru_maxrss is KiB on Linux, bytes on macOS.
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / (1024 * 1024) if sys.platform == "darwin" else peak / 1024


def measure(corpus: Path, repeat: int) -> dict[str, Any]:
    """Runs in the child process: both measurements on one corpus."""
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

    def full_lint() -> int:
        result = lint(LintRequest(paths=[str(corpus)]))
        findings[:] = [len(result.findings)]
        return len(result.index.objects)

    rss_start = _peak_rss_mib()
    parse_s, parsed = _best_of(repeat, parse_only)
    rss_parse = _peak_rss_mib()
    lint_s, linted = _best_of(repeat, full_lint)
    return {
        "files": len(files),
        "bytes": sum(os.path.getsize(p) for p in files),
        "objects_parsed": parsed,
        "objects_linted": linted,
        "findings": findings[0],
        "parse_s": parse_s,
        "lint_s": lint_s,
        "rss_start_mib": rss_start,
        "rss_parse_mib": rss_parse,
        "rss_peak_mib": _peak_rss_mib(),
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
    return (
        f"{os.cpu_count()} CPUs, {cpu}; Python {platform.python_version()} ({platform.python_implementation()}), "
        f"PyYAML {yaml.__version__} ({libyaml}), {platform.system()} {platform.release()}"
    )


def run(sizes: list[int], repeat: int, seed: int, per_file: int) -> list[dict[str, Any]]:
    sys.path.insert(0, str(HERE))
    from generate import write_corpus

    rows = []
    with tempfile.TemporaryDirectory(prefix="policylint-bench-") as tmp:
        for n in sizes:
            corpus = Path(tmp) / f"corpus-{n}"
            write_corpus(n, corpus, seed=seed, per_file=per_file)
            # A fresh interpreter per size: peak RSS is per size, and no cache survives.
            proc = subprocess.run(
                [sys.executable, str(Path(__file__).resolve()), "--measure", str(corpus), "--repeat", str(repeat)],
                capture_output=True,
                text=True,
                check=False,
            )
            if proc.returncode != 0:
                raise SystemExit(f"measurement failed for {n} objects:\n{proc.stderr}")
            row = json.loads(proc.stdout)
            row["size"] = n
            rows.append(row)
            print(f"  measured {n} objects", file=sys.stderr)
    return rows


def report(rows: list[dict[str, Any]], repeat: int) -> str:
    out = [
        f"machine: {machine()}",
        f"best of {repeat} runs per measurement; objects/s = objects / wall time",
        "",
        "| objects | files | MB | parse-only objects/s | lint objects/s | lint time / parse time | peak RSS MiB parse-only / lint | findings |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        parse_rate = r["objects_parsed"] / r["parse_s"]
        lint_rate = r["objects_linted"] / r["lint_s"]
        out.append(
            f"| {r['size']:,} | {r['files']} | {r['bytes'] / 1e6:.1f} | {parse_rate:,.0f} | {lint_rate:,.0f} "
            f"| {r['lint_s'] / r['parse_s']:.2f}x | {r['rss_parse_mib']:.0f} / {r['rss_peak_mib']:.0f} | {r['findings']} |"
        )
    if len(rows) > 1:
        out.append("")
        for small, big in zip(rows, rows[1:]):
            size_ratio = big["size"] / small["size"]
            lint_ratio = big["lint_s"] / small["lint_s"]
            parse_ratio = big["parse_s"] / small["parse_s"]
            out.append(
                f"{big['size']:,}/{small['size']:,} objects (x{size_ratio:g}): lint time x{lint_ratio:.2f} "
                f"(normalised {lint_ratio / size_ratio:.2f}; 1.00 = linear), parse-only time x{parse_ratio:.2f}"
            )
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,10000", help="comma-separated corpus sizes in objects (default 1000,10000)")
    parser.add_argument("--repeat", type=int, default=3, help="runs per measurement; the best is kept (default 3)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--per-file", type=int, default=100)
    parser.add_argument("--json", action="store_true", help="print the raw measurements as JSON")
    parser.add_argument("--measure", type=Path, help=argparse.SUPPRESS)  # internal: child process mode
    args = parser.parse_args(argv)
    if args.measure is not None:
        print(json.dumps(measure(args.measure, args.repeat)))
        return 0
    sizes = sorted(int(s) for s in args.sizes.split(",") if s.strip())
    rows = run(sizes, args.repeat, args.seed, args.per_file)
    print(json.dumps({"machine": machine(), "rows": rows}, indent=2) if args.json else report(rows, args.repeat))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
