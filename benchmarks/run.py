"""Benchmark policylint against the parse-only floor, on the same corpus, in one run.

    python benchmarks/run.py [--sizes 1000,10000] [--repeat 3] [--seed 1] [--no-startup] [--json]
    python benchmarks/run.py --baseline-case [--sizes 1000,10000]   # with a 1,000-entry baseline and a config file
    python benchmarks/run.py --staged-hook --sizes 10000   # only the pre-commit hook's entry and the floor
    python benchmarks/run.py --sizes '' --grants 1250,2500,5000   # only the grant-heavy shape's growth

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
  is measured too;
* the pre-commit hook's own entry, `check --staged --gate-base HEAD`, through the command
  in a git repository holding the corpus, cache warm: one file changed by a comment appended and
  staged, then the same run again, each round committing what it checked; then one value changed
  (a route's path) and staged, each on its own: a comment leaves every object's data as it was,
  which the hook answers from the base's findings, a value does not (`staged_hook`);
* one `policylint check --no-cache --format json` through the command, for
  its wall time and its own peak RSS (the memory target is about this run).

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
import gc
import json
import os
import platform
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import itertools

from startup import cpu_model

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent

# Targets of the performance issue, as ratios against the floor measured in the same run.
TARGET_LINT = 1.3
TARGET_JOBS2 = 0.9
TARGET_GROWTH_100K = 10.5
TARGET_WARM_S = 0.3
TARGET_RSS_100K_MIB = 1024
TARGET_VALIDATION_SHARE = 0.10


def _peak_rss_mib(who: int = resource.RUSAGE_SELF) -> float:
    # ru_maxrss is KiB on Linux, bytes on macOS.
    peak = resource.getrusage(who).ru_maxrss
    return peak / (1024 * 1024) if sys.platform == "darwin" else peak / 1024


def _burn(n: int = 3_000_000) -> float:
    start = time.perf_counter()
    total = 0
    for i in range(n):
        total += i
    return time.perf_counter() - start


def parallel_capacity() -> float:
    """How many CPUs' worth of work two processes get done right now (2.0 on an idle 2-CPU machine).

    On a shared or virtual machine a second CPU may be worth far less than the first; `--jobs 2`
    figures only make sense next to this.
    """
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    with ProcessPoolExecutor(max_workers=2, mp_context=multiprocessing.get_context("spawn")) as pool:
        list(pool.map(_burn, [100_000, 100_000]))  # workers started
        alone = min(pool.submit(_burn).result() for _ in range(3))
        start = time.perf_counter()
        list(pool.map(_burn, [3_000_000, 3_000_000]))
        together = time.perf_counter() - start
    return 2 * alone / together


# Whether every run declares what the cluster runs (`--cluster`): the newest bundled Gateway API
# release on the standard channel, and the newest bundled release of the vendors whose policies
# the corpora hold, so that one schema decides each kind. Undeclared, each object the first
# plausible schema admits is judged by every other plausible one too (policylint.k8s.dissent).
CLUSTER = False


def _cluster_flags() -> list[str]:
    """The command's flags that declare the cluster, when `CLUSTER` is set."""
    if not CLUSTER:
        return []
    from policylint.k8s.schemas import DEFAULT_GATEWAY_API_VERSION, vendor_releases

    newest = vendor_releases()
    flags = ["--gateway-api-version", DEFAULT_GATEWAY_API_VERSION, "--channel", "standard"]
    for vendor in ("envoy-gateway", "kuadrant"):
        flags += ["--implementation", f"{vendor}@{newest[vendor][-1]}"]
    return flags


def _declared() -> Any:
    """The `LintRequest.declared` of the same cluster as `_cluster_flags`."""
    from policylint.k8s.cluster import Declared

    flags = _cluster_flags()
    if not flags:
        return Declared()
    return Declared(
        gateway_api_version=flags[1],
        version_source="benchmark",
        channel=flags[3],
        channel_source="benchmark",
        implementations=tuple(flags[5::2]),
        implementations_source="benchmark",
    )


def _command() -> list[str]:
    script = shutil.which("policylint", path=str(Path(sys.executable).parent))
    return [script] if script else [sys.executable, "-m", "policylint"]


# Where a run's time goes: (stage, "module:qualified name" of the functions whose own time counts
# for it). Time is exclusive: a stage's function called from inside another stage's (the
# topology resolving a target) counts for the inner one only.
STAGES: list[tuple[str, list[str]]] = [
    ("parse", ["policylint.pipeline:_load"]),
    (
        "index",
        [
            "policylint.pipeline:build_objects",
            "policylint.k8s.index:ProjectIndex.__post_init__",
            # The objects' field types (PL010), read by the topology and the rules as much as by
            # the admission verdicts, which ask first.
            "policylint.k8s.index:ProjectIndex.malformed",
        ],
    ),
    (
        "resolution",
        [
            "policylint.semantics.resolution:Resolution._build_policies",
            "policylint.semantics.resolution:Resolution.resolve_target",
        ],
    ),
    ("topology", ["policylint.semantics.topology:Topology.__init__"]),
    (
        "simulation",
        [
            "policylint.semantics.effective.simulation:Simulation.__init__",
            "policylint.semantics.effective.simulation:Simulation.contexts",
        ],
    ),
    ("rules", ["policylint.rules.engine:_check"]),
    # The admission verdicts (schema walk, CEL rules; docs/performance.md "Schema validation"),
    # wherever they are first asked for: by the topology for policies, by the rules for the rest,
    # and on merged specs (PL609). With them, the other plausible schemas' answers on an object
    # the first admits (policylint.k8s.dissent), which PL703 asks first: the same schemas' checks
    # and CEL rules, where the releases differ. `_dissent`, not `dissent`: the rules hold their
    # own reference to `dissent`, which works each object's answer out through `_dissent`.
    (
        "validation",
        [
            "policylint.k8s.admission:build_catalogue",
            "policylint.k8s.admission:admit",
            "policylint.k8s.dissent:_dissent",
            "policylint.rules.effective_policy:validate",
            "policylint.rules.schema:admits",
        ],
    ),
    (
        "positions",
        [
            "policylint.rules.engine:_resolve_rule",
            "policylint.input.positions:PositionResolver.prefetch",
            "policylint.input.positions:PositionResolver.span",
        ],
    ),
]


def stage_split(run: Any) -> dict[str, float]:
    """Exclusive seconds per stage of one call of `run()`, plus "other" (the rest of the run)."""
    import importlib

    spent: dict[str, float] = {name: 0.0 for name, _ in STAGES}
    stack: list[list[Any]] = []  # [stage, started]
    patched: list[tuple[Any, str, Any]] = []

    def wrap(stage: str, fn: Any) -> Any:
        def timed(*args: Any, **kwargs: Any) -> Any:
            now = time.perf_counter()
            if stack:
                spent[stack[-1][0]] += now - stack[-1][1]
            stack.append([stage, now])
            try:
                return fn(*args, **kwargs)
            finally:
                end = time.perf_counter()
                spent[stage] += end - stack.pop()[1]
                if stack:
                    stack[-1][1] = end

        return timed

    for stage, targets in STAGES:
        for target in targets:
            module_name, _, qualified = target.partition(":")
            owner: Any = importlib.import_module(module_name)
            *outer, attr = qualified.split(".")
            for part in outer:
                owner = getattr(owner, part)
            original = owner.__dict__[attr] if isinstance(owner, type) else getattr(owner, attr)
            patched.append((owner, attr, original))
            setattr(owner, attr, wrap(stage, original))
    try:
        start = time.perf_counter()
        run()
        total = time.perf_counter() - start
    finally:
        for owner, attr, original in reversed(patched):
            setattr(owner, attr, original)
    spent["other"] = max(0.0, total - sum(spent.values()))
    return spent


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
        result = lint(LintRequest(paths=[str(corpus)], jobs=jobs, cache_dir=cache_dir, declared=_declared()))
        findings[:] = [len(result.findings)]
        return len(result.index.objects)

    rss_start = _peak_rss_mib()
    parsed = parse_only()  # alone first: the floor's own peak RSS
    rss_parse = _peak_rss_mib()
    linted = full_lint()
    rss_lint = _peak_rss_mib()
    n_findings = findings[0]
    # Interleaved rounds, best of each: on a busy machine, load changes hit all three alike.
    best = {"parse": float("inf"), "lint": float("inf"), "jobs2": float("inf")}
    cpu = {"parse": float("inf"), "lint": float("inf")}
    for _ in range(repeat):
        for name, fn in (("parse", parse_only), ("lint", full_lint), ("jobs2", lambda: full_lint(jobs=2))):
            # The previous measurement's garbage (a whole project, in reference cycles) is
            # collected here, not by the collector's first pass inside the next one.
            gc.collect()
            cpu_start, start = time.process_time(), time.perf_counter()
            fn()
            best[name] = min(best[name], time.perf_counter() - start)
            if name in cpu:
                cpu[name] = min(cpu[name], time.process_time() - cpu_start)
    parse_s, lint_s, jobs2_s = best["parse"], best["lint"], best["jobs2"]
    capacity = max(parallel_capacity() for _ in range(3))

    edits = iter(range(10**9))

    def edit_one_file() -> None:
        # A real edit of one file (a different one each time): its entry misses, the others hit.
        with open(files[next(edits) * 7 % len(files)], "a", encoding="utf-8") as fh:
            fh.write(f"# edited {time.time_ns()}\n")

    cache_best = {"cold": float("inf"), "warm": float("inf"), "one": float("inf")}
    with tempfile.TemporaryDirectory(prefix="policylint-bench-cache-") as tmp:
        for round_ in range(repeat):
            cache_dir = os.path.join(tmp, f"cache-{round_}")  # empty: the first run fills it
            for name in ("cold", "warm", "one"):
                if name == "one":
                    edit_one_file()
                gc.collect()
                start = time.perf_counter()
                full_lint(cache_dir=cache_dir)
                cache_best[name] = min(cache_best[name], time.perf_counter() - start)
        cold_cache_s, warm_s, warm_one_s = cache_best["cold"], cache_best["warm"], cache_best["one"]
        # The same through the command: a fresh interpreter, imports, output rendering included.
        cli_times = []
        for _ in range(max(repeat, 3)):
            edit_one_file()
            start = time.perf_counter()
            proc = subprocess.run(
                [*_command(), "check", *_cluster_flags(), "--format", "json", "--cache-dir", cache_dir, str(corpus)],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
                check=False,
            )
            cli_times.append(time.perf_counter() - start)
            if proc.returncode not in (0, 1):
                raise SystemExit(f"policylint failed:\n{proc.stderr.decode(errors='replace')}")
        # The pre-commit hook: one changed file reported, the repository read for context
        # (`--context`), cache warm; the analysis covers the part of the repository the file can
        # reach (policylint.semantics.components), the whole of it when everything is connected.
        hook_s = float("inf")
        hook_cli: list[float] = []
        for _ in range(max(repeat, 3)):
            changed = files[next(edits) * 7 % len(files)]
            with open(changed, "a", encoding="utf-8") as fh:
                fh.write(f"# edited {time.time_ns()}\n")
            gc.collect()
            start = time.perf_counter()
            lint(LintRequest(paths=[changed], context_paths=[str(corpus)], cache_dir=cache_dir, declared=_declared()))
            hook_s = min(hook_s, time.perf_counter() - start)
            with open(changed, "a", encoding="utf-8") as fh:
                fh.write(f"# edited {time.time_ns()}\n")
            start = time.perf_counter()
            proc = subprocess.run(
                [*_command(), "check", *_cluster_flags(), "--cache-dir", cache_dir, "--context", str(corpus), changed],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
                check=False,
            )
            hook_cli.append(time.perf_counter() - start)
            if proc.returncode not in (0, 1):
                raise SystemExit(f"policylint failed:\n{proc.stderr.decode(errors='replace')}")
        staged = staged_hook(corpus, cache_dir, max(repeat, 3))
    # Where one run's time goes, rendering included (JSON, the largest report), no cache.
    from policylint.reporters import renderer

    rendered: list[Any] = []

    def lint_and_render() -> None:
        result = lint(LintRequest(paths=[str(corpus)], report_policies=True, declared=_declared()))
        start = time.perf_counter()
        renderer("json")(result)
        rendered.append(time.perf_counter() - start)

    # As the command runs: the cyclic collector off from start to end (policylint.entry.main).
    gc.collect()
    gc.disable()
    try:
        stages = stage_split(lint_and_render)
    finally:
        gc.enable()
    stages["other"] -= rendered[0]
    stages["rendering"] = rendered[0]
    command_s, command_mib = command_run(corpus)
    return {
        "stages": stages,
        "files": len(files),
        "bytes": sum(os.path.getsize(p) for p in files),
        "objects_parsed": parsed,
        "objects_linted": linted,
        "findings": n_findings,
        "parse_s": parse_s,
        "lint_s": lint_s,
        "jobs2_s": jobs2_s,
        "parallel_capacity": capacity,
        "parse_cpu_s": cpu["parse"],
        "lint_cpu_s": cpu["lint"],
        "cold_cache_s": cold_cache_s,
        "warm_s": warm_s,
        "warm_one_changed_s": warm_one_s,
        "warm_one_changed_cli_s": statistics.median(cli_times),
        "hook_s": hook_s,
        "hook_cli_s": statistics.median(hook_cli),
        "staged_s": staged.first,
        "staged_again_s": staged.again,
        "staged_value_s": staged.value,
        "rss_start_mib": rss_start,
        "rss_parse_mib": rss_parse,
        "rss_lint_mib": rss_lint,
        "rss_peak_mib": _peak_rss_mib(),
        "rss_workers_mib": _peak_rss_mib(resource.RUSAGE_CHILDREN),
        "command_s": command_s,
        "command_mib": command_mib,
    }


@dataclass(frozen=True)
class Staged:
    """`staged_hook`'s median wall seconds: the first run after a comment appended to one file
    and staged, the same run again, and the first run after one value changed and staged."""

    first: float
    again: float
    value: float


def staged_hook(corpus: Path, cache_dir: str, rounds: int, command: list[str] | None = None) -> Staged:
    """The pre-commit hook's own entry, `check --staged --gate-base HEAD`, through the command, in a
    git repository holding the corpus, its parse cache warm: median wall seconds of the first
    run after one file is changed by a comment and staged, of the same run again (the hook run
    again after a failure, on the same commit), and of the first run after one value is changed
    (`_value_edit`): a comment leaves every object's data as it was (policylint.incremental.equivalent),
    so it cannot stand for every change. Each round commits what it checked, as a passing hook
    does, so the next round's base is the commit the previous run checked (policylint.incremental)."""
    command = command or _command()
    env = {**os.environ, "GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "bench@example.com"}
    env |= {"GIT_COMMITTER_NAME": "bench", "GIT_COMMITTER_EMAIL": "bench@example.com"}
    with tempfile.TemporaryDirectory(prefix="policylint-bench-repo-") as tmp:
        repo = Path(tmp) / "repo"
        shutil.copytree(corpus, repo)
        files = sorted(repo.rglob("*.yaml"))

        def git(*args: str) -> None:
            subprocess.run(["git", *args], cwd=repo, env=env, check=True, capture_output=True)

        def hook() -> float:
            start = time.perf_counter()
            proc = subprocess.run(
                [*command, "check", *_cluster_flags(), "--staged", "--gate-base", "HEAD", "--cache-dir", cache_dir],
                cwd=repo,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
                check=False,
            )
            if proc.returncode not in (0, 1):
                raise SystemExit(f"policylint failed:\n{proc.stderr.decode(errors='replace')}")
            return time.perf_counter() - start

        git("init", "-q")
        git("add", "-A")
        git("commit", "-q", "-m", "corpus")
        first: list[float] = []
        again: list[float] = []
        value: list[float] = []
        for i in range(rounds + 1):
            with open(files[i * 7 % len(files)], "a", encoding="utf-8") as fh:
                fh.write(f"# edited {time.time_ns()}\n")
            git("add", "-A")
            took = hook()
            if i:  # the first round fills the cache for a commit nothing checked before
                first.append(took)
                again.append(hook())
            git("commit", "-q", "-m", f"edit {i}")
        for i in range(rounds):
            _value_edit(files, i * 7 + 3, i)
            git("add", "-A")
            value.append(hook())
            git("commit", "-q", "-m", f"value {i}")
    return Staged(statistics.median(first), statistics.median(again), statistics.median(value))


def _value_edit(files: list[Path], start: int, n: int) -> None:
    """One value changed in one file: the first route path (`value: /...`) of the first file from
    `start` on that has one, made longer; else the first port number of the file at `start`."""
    for k in range(len(files)):
        path = files[(start + k) % len(files)]
        text = path.read_text(encoding="utf-8")
        at = text.find("value: /")
        if at >= 0:
            end = text.index("\n", at)
            path.write_text(f"{text[:end]}-v{n}{text[end:]}", encoding="utf-8")
            return
    path = files[start % len(files)]
    text = path.read_text(encoding="utf-8")
    found = re.search(r"port: (\d+)", text)
    if found is None:
        raise SystemExit(f"no value to change in {path}")
    path.write_text(f"{text[: found.start(1)]}{int(found.group(1)) + 1}{text[found.end(1) :]}", encoding="utf-8")


def _floor(files: list[str]) -> float:
    """The parse-only floor over `files`, best of three: reading and `yaml.load_all` with libyaml."""
    import yaml

    best = float("inf")
    for _ in range(3):
        start = time.perf_counter()
        for path in files:
            with open(path, encoding="utf-8") as fh:
                sum(1 for doc in yaml.load_all(fh.read(), Loader=yaml.CSafeLoader) if doc is not None)
        best = min(best, time.perf_counter() - start)
    return best


def staged_report(sizes: list[int], rounds: int, seed: int, per_file: int) -> str:
    """`staged_hook` alone on the clean corpus of each size, against the floor measured before and
    after it in this process (`--staged-hook`: the pre-commit hook's figures without the rest)."""
    sys.path.insert(0, str(HERE))
    from generate import write_corpus

    lines = []
    with tempfile.TemporaryDirectory(prefix="policylint-bench-") as tmp:
        for n in sizes:
            corpus = Path(tmp) / f"corpus-{n}"
            write_corpus(n, corpus, seed=seed, per_file=per_file)
            files = sorted(str(p) for p in corpus.rglob("*.yaml"))
            before = _floor(files)
            staged = staged_hook(corpus, str(Path(tmp) / f"cache-{n}"), rounds)
            floor = (before + _floor(files)) / 2
            lines.append(
                f"{n:,} objects: floor {floor:.2f} s; a comment added to one file and staged {staged.first:.2f} s"
                f" ({staged.first / floor:.2f}x floor), the same run again {staged.again:.2f} s ({staged.again / floor:.2f}x"
                f" floor); one value changed and staged {staged.value:.2f} s ({staged.value / floor:.2f}x floor)"
            )
    return "\n".join(lines)


def command_run(corpus: Path) -> tuple[float, float]:
    """Wall seconds and peak RSS (MiB) of one `policylint check --no-cache --format json` over
    the corpus, the report written to /dev/null: what a first CI run costs, as the command."""
    start = time.perf_counter()
    proc = subprocess.Popen(
        [*_command(), "check", *_cluster_flags(), "--no-cache", "--format", "json", str(corpus)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    # wait4 gives this child's own resource usage (RUSAGE_CHILDREN is the largest of all of them).
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    elapsed = time.perf_counter() - start
    if proc.returncode not in (0, 1):
        raise SystemExit(f"policylint failed on {corpus} (exit {proc.returncode})")
    peak = usage.ru_maxrss
    return elapsed, peak / (1024 * 1024) if sys.platform == "darwin" else peak / 1024


def measure_lint(corpus: Path, repeat: int) -> dict[str, Any]:
    """Runs in the child process: the floor and the full lint only, interleaved, best of `repeat`
    (the grant-heavy shape, whose question is how the lint grows, not the cache or the hook)."""
    import yaml

    from policylint.pipeline import LintRequest, lint

    files = sorted(str(p) for p in corpus.rglob("*.yaml"))

    def parse_only() -> None:
        for path in files:
            with open(path, encoding="utf-8") as fh:
                text = fh.read()
            for _ in yaml.load_all(text, Loader=yaml.CSafeLoader):
                pass

    found: list[int] = []

    def full_lint() -> None:
        result = lint(LintRequest(paths=[str(corpus)]))
        found[:] = [len(result.index.objects), len(result.findings)]

    best = {"parse": float("inf"), "lint": float("inf")}
    cpu = {"parse": float("inf"), "lint": float("inf")}
    for _ in range(repeat):
        for name, fn in (("parse", parse_only), ("lint", full_lint)):
            gc.collect()
            cpu_start, start = time.process_time(), time.perf_counter()
            fn()
            best[name] = min(best[name], time.perf_counter() - start)
            cpu[name] = min(cpu[name], time.process_time() - cpu_start)
    return {
        "parse_s": best["parse"],
        "lint_s": best["lint"],
        "parse_cpu_s": cpu["parse"],
        "lint_cpu_s": cpu["lint"],
        "objects": found[0],
        "findings": found[1],
        "files": len(files),
    }


# The grant-heavy shape (`generate.py --grants`): tenant namespaces, each with a ReferenceGrant in
# one shared namespace. Doubling the namespaces twice must not take more than 10% over x4.
GRANT_NAMESPACES = (1250, 2500, 5000)
TARGET_GRANT_GROWTH = 1.10


def grants_run(namespaces: tuple[int, ...], repeat: int, seed: int) -> list[dict[str, Any]]:
    sys.path.insert(0, str(HERE))
    from generate import write_grants_corpus

    rows = []
    with tempfile.TemporaryDirectory(prefix="policylint-bench-grants-") as tmp:
        for n in namespaces:
            corpus = Path(tmp) / f"grants-{n}"
            write_grants_corpus(n, corpus, seed=seed)
            proc = subprocess.run(
                [sys.executable, str(Path(__file__).resolve()), "--measure-lint", str(corpus), "--repeat", str(repeat)],
                capture_output=True,
                text=True,
                check=False,
                cwd=tmp,
            )
            if proc.returncode != 0:
                raise SystemExit(f"measurement failed for {n} namespaces (grants):\n{proc.stderr}")
            row = json.loads(proc.stdout)
            row["namespaces"] = n
            rows.append(row)
            print(f"  measured {n:,} namespaces (grants)", file=sys.stderr)
    return rows


def grants_report(rows: list[dict[str, Any]], repeat: int) -> str:
    """The grant-heavy shape: lint / floor per size, and how that ratio grows from the first size
    to the last (1.00: the lint grows as the floor does, linearly)."""
    out = [
        f"grant-heavy shape (`generate.py --grants`: a ReferenceGrant per tenant namespace in one shared namespace; best of {repeat}):",
        "",
        "| namespaces | objects | files | floor | lint | lint / floor | (CPU time) | findings |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        out.append(
            f"| {r['namespaces']:,} | {r['objects']:,} | {r['files']} | {r['parse_s']:.2f} s | {r['lint_s']:.2f} s"
            f" | {r['lint_s'] / r['parse_s']:.2f}x | {r['lint_cpu_s'] / r['parse_cpu_s']:.2f}x | {r['findings']:,} |"
        )
    if len(rows) >= 2:
        first, last = rows[0], rows[-1]
        size = last["objects"] / first["objects"]
        lint_growth = last["lint_s"] / first["lint_s"]
        floor_growth = last["parse_s"] / first["parse_s"]
        # In CPU time against the floor's: a loaded machine slows both alike, and an analysis that
        # grows faster than the input shows in the ratio whatever the load.
        normalised = (last["lint_cpu_s"] / last["parse_cpu_s"]) / (first["lint_cpu_s"] / first["parse_cpu_s"])
        out += [
            "",
            f"  grants {last['namespaces']:,}/{first['namespaces']:,} namespaces (x{size:.2f} objects): lint time"
            f" x{lint_growth:.2f}, floor x{floor_growth:.2f}; lint / floor in CPU time grew x{normalised:.2f}"
            f" (<= {TARGET_GRANT_GROWTH:.2f}, linear within 10%): {_verdict(normalised <= TARGET_GRANT_GROWTH)}",
        ]
    return "\n".join(out)


BASELINE_ENTRIES = 1_000


def measure_baseline(corpus: Path, repeat: int) -> dict[str, Any]:
    """Runs in the child process: the full lint with and without a 1,000-entry baseline
    (docs/suppressions.md), interleaved, best of `repeat`. The baseline records the corpus's
    own findings (up to 1,000), padded with entries for files outside the corpus, which are
    read and matched but never judged stale: every entry costs what a real one costs."""
    import hashlib

    from policylint.pipeline import LintRequest, lint
    from policylint.suppressions import baseline

    plain = lint(LintRequest(paths=[str(corpus)]))
    recorded = plain.findings[:BASELINE_ENTRIES]
    text = baseline.render(recorded, str(corpus.parent))
    padding = [
        json.dumps(
            {
                "fingerprint": hashlib.blake2b(str(i).encode(), digest_size=16).hexdigest(),
                "rule": "PL201",
                "file": f"elsewhere/{i}.yaml",
                "object": f"HTTPRoute app/r{i}",
                "path": "spec.parentRefs[0]",
            }
        )
        for i in range(BASELINE_ENTRIES - len(recorded))
    ]
    if padding:
        head, _, tail = text.rpartition("]}")
        text = head.rstrip("\n") + ("," if recorded else "") + "\n" + ",\n".join(padding) + "\n]}" + tail
    path = corpus.parent / "baseline.json"
    path.write_text(text, encoding="utf-8")
    assert len(baseline.read(str(path))) == BASELINE_ENTRIES

    hidden: list[int] = []

    def with_baseline() -> None:
        result = lint(LintRequest(paths=[str(corpus)], baseline=str(path)))
        hidden[:] = [len(result.suppressed)]

    # A configuration file as a real repository has one: it names the baseline, and every
    # run reads, validates and applies it (patterns for the walk, severities, per-file).
    config = corpus.parent / ".policylint.yaml"
    config.write_text(
        "baseline: baseline.json\n"
        "extend-exclude: [generated/, '*.tmp.yaml']\n"
        "severity: {PL6: warning, PL601: error, PL404: off}\n"
        "per-file:\n  'manifests/legacy-*/':\n    severity: {PL2: info}\n",
        encoding="utf-8",
    )

    def with_config() -> None:
        from policylint.config.effective import build, run_settings
        from policylint.config.load import load

        effective = build(load(str(config)), {"paths": (str(corpus),)})
        settings = run_settings(effective)
        lint(
            LintRequest(
                paths=[str(corpus)],
                baseline=effective.values["baseline"],
                walk=settings.walk,
                overrides=settings.overrides,
                rule_options=settings.rule_options,
            )
        )

    best = {"plain": float("inf"), "baseline": float("inf"), "config": float("inf")}
    for _ in range(repeat):
        for name, fn in (
            ("plain", lambda: lint(LintRequest(paths=[str(corpus)]))),
            ("baseline", with_baseline),
            ("config", with_config),
        ):
            start = time.perf_counter()
            fn()
            best[name] = min(best[name], time.perf_counter() - start)
    return {
        "plain_s": best["plain"],
        "baseline_s": best["baseline"],
        "config_s": best["config"],
        "entries": BASELINE_ENTRIES,
        "baselined": hidden[0],
        "objects": len(plain.index.objects),
    }


def baseline_report(sizes: list[int], repeat: int, seed: int, per_file: int) -> str:
    """The full lint with a 1,000-entry baseline against the same lint without one."""
    sys.path.insert(0, str(HERE))
    from generate import write_corpus

    out = [
        f"full lint with a {BASELINE_ENTRIES:,}-entry baseline (best of {repeat}, interleaved):",
        "",
        "| objects | without | with baseline | ratio | with config file and baseline | ratio | findings baselined |",
        "|---:|---:|---:|---:|---:|---:|---:|",
    ]
    with tempfile.TemporaryDirectory(prefix="policylint-bench-") as tmp:
        for n in sizes:
            corpus = Path(tmp) / f"corpus-{n}" / "manifests"
            write_corpus(n, corpus, seed=seed, per_file=per_file)
            proc = subprocess.run(
                [sys.executable, str(Path(__file__).resolve()), "--measure-baseline", str(corpus), "--repeat", str(repeat)],
                capture_output=True,
                text=True,
                check=False,
                cwd=tmp,
            )
            if proc.returncode != 0:
                raise SystemExit(f"baseline measurement failed for {n} objects:\n{proc.stderr}")
            r = json.loads(proc.stdout)
            out.append(
                f"| {n:,} | {r['plain_s']:.2f} s | {r['baseline_s']:.2f} s | {r['baseline_s'] / r['plain_s']:.2f}x"
                f" | {r['config_s']:.2f} s | {r['config_s'] / r['plain_s']:.2f}x | {r['baselined']:,} |"
            )
    return "\n".join(out)


def machine() -> str:
    cpu = cpu_model()
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


def run(
    sizes: list[int], repeat: int, seed: int, per_file: int, with_peers: bool
) -> tuple[list[dict[str, Any]], list[tuple[str, str]]]:
    sys.path.insert(0, str(HERE))
    from generate import ERROR_RATE, MESSY_ERROR_RATE, write_corpus

    rows = []
    peer_rows: list[tuple[str, str]] = []
    # The benchmark's own corpus, and the messy one a first run over a real repository meets.
    # "isolated": the clean corpus with tenants that do not reach into each other, the shape a
    # scoped pre-commit run analyses a small part of (each clean tenant reaches its neighbour's
    # Service, which connects the whole corpus).
    # "shared": the messy corpus's files and mistakes, with tenants whose routes also reach the
    # Services of the tenants before them, not all granted: a finding on about 44% of the objects,
    # many with notes in other namespaces' files, as on the messier repositories users run it on.
    corpora = [
        ("clean", per_file, ERROR_RATE, False, False),
        ("messy", 0, MESSY_ERROR_RATE, False, False),
        ("isolated", per_file, ERROR_RATE, True, False),
        ("shared", 0, MESSY_ERROR_RATE, False, True),
    ]
    with tempfile.TemporaryDirectory(prefix="policylint-bench-") as tmp:
        for n, (name, files_per, rate, isolated, shared) in itertools.product(sizes, corpora):
            corpus = Path(tmp) / f"corpus-{name}-{n}"
            write_corpus(n, corpus, seed=seed, per_file=files_per, error_rate=rate, isolated=isolated, shared=shared)
            if with_peers and n == sizes[-1] and name == "clean":
                peer_rows = [(f"{name} on {n:,} objects", text) for name, text in peers(corpus)]
            # A fresh interpreter per size: peak RSS is per size, and no in-memory state survives.
            start = time.perf_counter()
            proc = subprocess.run(
                [
                    sys.executable,
                    str(Path(__file__).resolve()),
                    "--measure",
                    str(corpus),
                    "--repeat",
                    str(repeat),
                    *(["--cluster"] if CLUSTER else []),
                ],
                capture_output=True,
                text=True,
                check=False,
                cwd=tmp,
            )
            if proc.returncode != 0:
                raise SystemExit(f"measurement failed for {n} objects:\n{proc.stderr}")
            row = json.loads(proc.stdout)
            row["size"] = n
            row["corpus"] = name
            rows.append(row)
            print(f"  measured {n:,} objects ({name}) in {time.perf_counter() - start:.0f} s", file=sys.stderr)
    return rows, peer_rows


def _verdict(ok: bool) -> str:
    return "meets the target" if ok else "MISSES the target"


def report(rows: list[dict[str, Any]], repeat: int, peer_rows: list[tuple[str, str]]) -> str:
    out = [
        f"machine: {machine()}",
        f"best of {repeat} runs per measurement; objects/s = objects / wall time; ratios are times against the"
        " parse-only floor of the same process (lower is better)",
        "",
        "| corpus | objects | files | MB | floor objects/s | lint objects/s | lint / floor | (CPU time) | --jobs 2 / floor | peak RSS MiB floor / lint | findings |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        parse_rate = r["objects_parsed"] / r["parse_s"]
        lint_rate = r["objects_linted"] / r["lint_s"]
        out.append(
            f"| {r['corpus']} | {r['size']:,} | {r['files']} | {r['bytes'] / 1e6:.1f} | {parse_rate:,.0f} | {lint_rate:,.0f} "
            f"| {r['lint_s'] / r['parse_s']:.2f}x | {r['lint_cpu_s'] / r['parse_cpu_s']:.2f}x | {r['jobs2_s'] / r['parse_s']:.2f}x "
            f"| {r['rss_parse_mib']:.0f} / {r['rss_lint_mib']:.0f} | {r['findings']} |"
        )
    out += [
        "",
        "parse cache (in-process: imports done, lint() called as the command calls it; the `policylint` line adds a"
        " fresh interpreter, imports and JSON output):",
        "",
        "| corpus | objects | cold, filling the cache / no cache | warm, nothing changed | warm, 1 file changed | same, `policylint` command"
        " | pre-commit hook (1 changed file reported, `--context`), in-process / command |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        out.append(
            f"| {r['corpus']} | {r['size']:,} | {r['cold_cache_s'] / r['lint_s']:.2f}x | {r['warm_s']:.2f} s ({r['warm_s'] / r['parse_s']:.2f}x floor) "
            f"| {r['warm_one_changed_s']:.2f} s | {r['warm_one_changed_cli_s']:.2f} s | {r['hook_s']:.2f} s / {r['hook_cli_s']:.2f} s |"
        )
    out += [
        "",
        "the hook's entry, `check --staged --gate-base HEAD`, through the command in a git repository of the corpus, cache warm"
        " (each round commits what it checked, as a passing hook does):",
        "",
        "| corpus | objects | a comment added to 1 file and staged | the same run again | 1 value changed and staged |",
        "|---|---:|---:|---:|---:|",
    ]
    for r in rows:
        out.append(
            f"| {r['corpus']} | {r['size']:,} | {r['staged_s']:.2f} s ({r['staged_s'] / r['parse_s']:.2f}x floor) "
            f"| {r['staged_again_s']:.2f} s ({r['staged_again_s'] / r['parse_s']:.2f}x floor) "
            f"| {r['staged_value_s']:.2f} s ({r['staged_value_s'] / r['parse_s']:.2f}x floor) |"
        )
    stage_names = [name for name, _ in STAGES] + ["rendering", "other"]
    out += [
        "",
        "where one run's time goes (no cache, JSON report rendered; exclusive time per stage, one run with timers):",
        "",
        "| corpus | objects | " + " | ".join(stage_names) + " |",
        "|---|---:|" + "---:|" * len(stage_names),
    ]
    for r in rows:
        total = sum(r["stages"].values())
        cells = [f"{r['stages'][n]:.2f} s ({100 * r['stages'][n] / total:.0f}%)" for n in stage_names]
        out.append(f"| {r['corpus']} | {r['size']:,} | " + " | ".join(cells) + " |")
    out.append("")
    pairs = [
        (small, big)
        for name in dict.fromkeys(r["corpus"] for r in rows)
        for small, big in itertools.pairwise([r for r in rows if r["corpus"] == name])
    ]
    for small, big in pairs:
        size_ratio = big["size"] / small["size"]
        lint_ratio = big["lint_s"] / small["lint_s"]
        parse_ratio = big["parse_s"] / small["parse_s"]
        out.append(
            f"{big['corpus']} {big['size']:,}/{small['size']:,} objects (x{size_ratio:g}): lint time x{lint_ratio:.2f} "
            f"(normalised {lint_ratio / size_ratio:.2f}; 1.00 = linear), parse-only time x{parse_ratio:.2f}"
        )
    by_size = {r["size"]: r for r in rows if r["corpus"] == "clean"}
    out += ["", "targets:"]
    for r in rows:
        if r["size"] >= 10_000:
            lint_ratio = r["lint_s"] / r["parse_s"]
            jobs_ratio = r["jobs2_s"] / r["parse_s"]
            label = f"{r['corpus']} {r['size']:,}"
            out.append(f"  {label}: lint {lint_ratio:.2f}x floor (<= {TARGET_LINT}): {_verdict(lint_ratio <= TARGET_LINT)}")
            out.append(f"  {label}: --jobs 2 {jobs_ratio:.2f}x floor (<= {TARGET_JOBS2}): {_verdict(jobs_ratio <= TARGET_JOBS2)}")
    for r in rows:
        if r["size"] >= 10_000:
            # Issue #38's target: validation (the admission verdicts and the other plausible schemas'
            # answers) at most a tenth of a cold run. Also what the untimed lint's ratio would be
            # without it.
            stages = r["stages"]
            share = stages["validation"] / sum(stages.values())
            without = r["lint_s"] * (1 - share) / r["parse_s"]
            out.append(
                f"  {r['corpus']} {r['size']:,}: validation (schemas, CEL rules) {stages['validation']:.2f} s,"
                f" {100 * share:.0f}% of the run (<= {100 * TARGET_VALIDATION_SHARE:.0f}%):"
                f" {_verdict(share <= TARGET_VALIDATION_SHARE)}; the lint without it would be {without:.2f}x floor"
            )
    for r in rows:
        if r["size"] == 10_000:
            hook = r["hook_cli_s"]
            out.append(
                f"  {r['corpus']} 10,000: pre-commit hook, warm, 1 file changed {hook:.2f} s through the command"
                f" ({r['hook_s']:.2f} s in-process) (<= {TARGET_WARM_S}): {_verdict(hook <= TARGET_WARM_S)}"
            )
    for r in rows:
        if r["size"] == 10_000:
            for what, staged in (("a comment added to 1 file", r["staged_s"]), ("1 value changed", r["staged_value_s"])):
                out.append(
                    f"  {r['corpus']} 10,000: `check --staged` (the hook's entry), warm, {what} {staged:.2f} s through the"
                    f" command, {staged / r['parse_s']:.2f}x the cold floor (<= {TARGET_WARM_S} s):"
                    f" {_verdict(staged <= TARGET_WARM_S)}"
                )
    if 10_000 in by_size and 100_000 in by_size:
        growth = by_size[100_000]["lint_s"] / by_size[10_000]["lint_s"]
        # The floor's own growth tells the machine's (caches, memory) from the linter's.
        floor_growth = by_size[100_000]["parse_s"] / by_size[10_000]["parse_s"]
        out.append(
            f"  t(100k)/t(10k) = {growth:.2f} (<= {TARGET_GROWTH_100K:g}): {_verdict(growth <= TARGET_GROWTH_100K)};"
            f" the floor grew {floor_growth:.2f} in the same run"
        )
    for r in rows:
        out.append(
            f"  {r['corpus']} {r['size']:,}: two processes did {r['parallel_capacity']:.2f} CPUs' worth of work while measuring"
            " (2.00 = two free CPUs); --jobs 2 cannot beat that"
        )
    for r in rows:
        verdict = ""
        if r["size"] >= 100_000:
            verdict = f" (<= {TARGET_RSS_100K_MIB} MiB): {_verdict(r['command_mib'] <= TARGET_RSS_100K_MIB)}"
        out.append(
            f"  {r['corpus']} {r['size']:,}: peak RSS through the command (`check --no-cache --format json`) "
            f"{r['command_mib']:.0f} MiB in {r['command_s']:.2f} s{verdict}; in-process lint {r['rss_peak_mib']:.0f} MiB, "
            f"largest worker or warm command {r['rss_workers_mib']:.0f} MiB"
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
    parser.add_argument(
        "--cluster",
        action="store_true",
        help="declare what the cluster runs in every run (the newest bundled Gateway API release, standard channel,"
        " and the newest bundled Envoy Gateway and Kuadrant releases): one schema decides each kind",
    )
    parser.add_argument("--measure", type=Path, help=argparse.SUPPRESS)  # internal: child process mode
    parser.add_argument(
        "--baseline-case",
        action="store_true",
        help=f"only measure the full lint with and without a {BASELINE_ENTRIES:,}-entry baseline",
    )
    parser.add_argument(
        "--staged-hook",
        action="store_true",
        help="only measure the pre-commit hook's entry on the clean corpus (staged_hook) against the parse-only floor",
    )
    parser.add_argument("--measure-baseline", type=Path, help=argparse.SUPPRESS)  # internal: child process mode
    parser.add_argument("--measure-lint", type=Path, help=argparse.SUPPRESS)  # internal: child process mode
    parser.add_argument(
        "--grants",
        default=",".join(str(n) for n in GRANT_NAMESPACES),
        help="namespace counts of the grant-heavy shape, whose growth is checked (default 1250,2500,5000; '' to skip)",
    )
    args = parser.parse_args(argv)
    # Bytecode is written, as an installed package has it: where the environment says not to
    # (PYTHONDONTWRITEBYTECODE, set on some machines and CI images), every fresh process measured
    # would compile the package from source again (importing the pipeline then costs three times
    # as much), and the figures through the command would be the compiler's. Children inherit this.
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    sys.dont_write_bytecode = False
    global CLUSTER  # read by every measurement of this process and its children's flags
    CLUSTER = args.cluster
    if args.measure_lint is not None:
        print(json.dumps(measure_lint(args.measure_lint, args.repeat)))
        return 0
    if args.measure is not None:
        print(json.dumps(measure(args.measure, args.repeat)))
        return 0
    if args.measure_baseline is not None:
        print(json.dumps(measure_baseline(args.measure_baseline, args.repeat)))
        return 0
    if args.staged_hook:
        print(
            staged_report(
                sorted(int(s) for s in args.sizes.split(",") if s.strip()), max(args.repeat, 3), args.seed, args.per_file
            )
        )
        return 0
    if args.baseline_case:
        print(baseline_report(sorted(int(s) for s in args.sizes.split(",") if s.strip()), args.repeat, args.seed, args.per_file))
        return 0
    sizes = sorted(int(s) for s in args.sizes.split(",") if s.strip())
    rows, peer_rows = run(sizes, args.repeat, args.seed, args.per_file, not args.no_peers)
    namespaces = tuple(sorted(int(s) for s in args.grants.split(",") if s.strip()))
    grant_rows = grants_run(namespaces, args.repeat, args.seed) if namespaces else []
    if args.json:
        print(json.dumps({"machine": machine(), "rows": rows, "grants": grant_rows, "peers": peer_rows}, indent=2))
        return 0
    if rows:
        print(report(rows, args.repeat, peer_rows))
    if grant_rows:
        print("\n" + grants_report(grant_rows, args.repeat))
    if rows and not args.no_startup and (HERE / "startup.py").exists():
        print("\ncold start (benchmarks/startup.py):\n" + startup(args.startup_runs))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
