"""Startup cost of the `policylint` command: what every pre-commit hook and CI step pays.

    python benchmarks/startup.py [--runs 21] [--imports]

Measures, as the median wall time of `--runs` fresh processes each (CPU
time and the fastest run are printed too):

* `python -c pass`: the interpreter alone, the floor;
* `policylint --version`: target at most 100 ms over the floor;
* a cold `policylint` run on 1 and on 5 small files (a Gateway, a route, a
  Service, policies): target at most 150 ms wall.

CPU time (user + system) is printed next to wall time: on a busy machine wall
time grows while CPU time stays put, which tells a slow machine from slow code.

"Cold" means a new process with no parse cache: the run happens in a fresh
working directory, with `POLICYLINT_CACHE_DIR` set to a `.policylint_cache/`
in it that is removed before each run (the default, the user's cache
directory, would be warm after the first run and is left alone).
The first run of each command is a warm-up that is not counted: it lets
Python write its bytecode caches, as `pip install` does at install time.

`--imports` adds the slowest imports of a small lint (`python -X importtime`),
the first thing to look at when the figures regress. Figures depend on the
machine; the script prints it.
"""

from __future__ import annotations

import argparse
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
from collections.abc import Sequence
from pathlib import Path

VERSION_OVERHEAD_TARGET_MS = 100.0
COLD_RUN_TARGET_MS = 150.0

FILES = {
    "gateway.yaml": """\
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata:
  name: edge
  namespace: infra
spec:
  gatewayClassName: eg
  listeners:
  - name: http
    port: 80
    protocol: HTTP
    allowedRoutes:
      namespaces:
        from: All
  - name: https
    port: 443
    protocol: HTTPS
    hostname: "*.example.com"
    tls:
      certificateRefs:
      - name: wildcard-cert
    allowedRoutes:
      namespaces:
        from: All
""",
    "route.yaml": """\
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata:
  name: store
  namespace: app
spec:
  parentRefs:
  - name: edge
    namespace: infra
    sectionName: https
  hostnames:
  - store.example.com
  rules:
  - name: checkout
    matches:
    - path: {type: PathPrefix, value: /checkout}
    backendRefs:
    - name: checkout
      port: 8080
  - name: catalog
    backendRefs:
    - name: catalog
      port: 8080
""",
    "services.yaml": """\
apiVersion: v1
kind: Service
metadata:
  name: checkout
  namespace: app
spec:
  selector: {app: checkout}
  ports:
  - name: http
    port: 8080
---
apiVersion: v1
kind: Service
metadata:
  name: catalog
  namespace: app
spec:
  selector: {app: catalog}
  ports:
  - name: http
    port: 8080
""",
    "policies.yaml": """\
apiVersion: gateway.envoyproxy.io/v1alpha1
kind: BackendTrafficPolicy
metadata:
  name: store-retries
  namespace: app
spec:
  targetRefs:
  - group: gateway.networking.k8s.io
    kind: HTTPRoute
    name: store
    sectionName: checkout
  retry:
    numRetries: 3
---
apiVersion: kuadrant.io/v1
kind: RateLimitPolicy
metadata:
  name: store-limits
  namespace: app
spec:
  targetRef:
    group: gateway.networking.k8s.io
    kind: HTTPRoute
    name: store
  defaults:
    limits:
      global:
        rates:
        - limit: 100
          window: 1s
""",
    "gateway-policies.yaml": """\
apiVersion: gateway.envoyproxy.io/v1alpha1
kind: ClientTrafficPolicy
metadata:
  name: edge-timeouts
  namespace: infra
spec:
  targetRefs:
  - group: gateway.networking.k8s.io
    kind: Gateway
    name: edge
    sectionName: https
  timeout:
    http:
      requestReceivedTimeout: 5s
""",
}


def _command() -> list[str]:
    """The installed console script next to this interpreter, else `python -m policylint`."""
    script = shutil.which("policylint", path=str(Path(sys.executable).parent))
    return [script] if script else [sys.executable, "-m", "policylint"]


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # the warm-up run writes bytecode, as an install does
    env.pop("POLICYLINT_DEBUG", None)
    env.pop("POLICYLINT_CACHE_DIR", None)  # set per command by _median_ms, in the (fresh) working directory
    return env


def _cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _median_ms(argv: Sequence[str], runs: int, cwd: Path, env: dict[str, str]) -> tuple[float, float, float]:
    """Median wall, median CPU (user + system) and fastest wall time of a fresh process, in ms."""
    cache = cwd / ".policylint_cache"
    env = {**env, "POLICYLINT_CACHE_DIR": str(cache)}  # never the user's own cache directory
    wall, cpu = [], []
    for i in range(runs + 1):  # run 0 is the warm-up
        shutil.rmtree(cache, ignore_errors=True)
        cpu_start = _cpu_seconds()
        start = time.perf_counter()
        proc = subprocess.run(argv, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        elapsed = time.perf_counter() - start
        cpu_used = _cpu_seconds() - cpu_start
        if proc.returncode not in (0, 1):
            raise SystemExit(f"{' '.join(argv)} exited {proc.returncode}:\n{proc.stderr.decode(errors='replace')}")
        if i:
            wall.append(elapsed * 1000)
            cpu.append(cpu_used * 1000)
    shutil.rmtree(cache, ignore_errors=True)
    return statistics.median(wall), statistics.median(cpu), min(wall)


def slowest_imports(argv: Sequence[str], cwd: Path, env: dict[str, str], top: int = 15) -> list[tuple[int, str]]:
    """(cumulative microseconds, module) of the slowest top-level imports of a run."""
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "policylint", *argv], cwd=cwd, env=env, capture_output=True, text=True
    )
    rows = []
    for line in proc.stderr.splitlines():
        match = re.match(r"import time:\s+\d+ \|\s+(\d+) \| (\s*)(\S+)", line)
        if match and len(match.group(2)) <= 2:  # top-level and first-level imports
            rows.append((int(match.group(1)), match.group(2) + match.group(3)))
    return sorted(rows, reverse=True)[:top]


def cpu_model() -> str:
    """The CPU model as /proc/cpuinfo names it (benchmarks/run.py uses it too)."""
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as fh:
            for line in fh:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return cpu


def machine() -> str:
    return f"{cpu_model()}, {os.cpu_count()} CPUs, {platform.system()} {platform.release()}, Python {platform.python_version()}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=21, help="measured runs per command; the median is reported (default 21)")
    parser.add_argument("--imports", action="store_true", help="also list the slowest imports of a small lint")
    args = parser.parse_args(argv)

    command = _command()
    env = _env()
    print(f"machine: {machine()}")
    print(f"command: {' '.join(command)}")
    print(f"median of {args.runs} runs each, after one warm-up run\n")
    with tempfile.TemporaryDirectory(prefix="policylint-startup-") as tmp:
        root = Path(tmp)
        one, five = root / "one", root / "five"
        one.mkdir()
        five.mkdir()
        (one / "policies.yaml").write_text(FILES["policies.yaml"], encoding="utf-8")
        for name, text in FILES.items():
            (five / name).write_text(text, encoding="utf-8")

        floor = _median_ms([sys.executable, "-c", "pass"], args.runs, root, env)
        version = _median_ms([*command, "--version"], args.runs, root, env)
        cold_one = _median_ms([*command, str(one)], args.runs, root, env)
        cold_five = _median_ms([*command, str(five)], args.runs, root, env)

        def verdict(ok: bool) -> str:
            return "meets the target" if ok else "MISSES the target"

        overhead = version[0] - floor[0]
        print(f"{'':<30}{'wall':>9}{'cpu':>9}{'fastest':>10}")
        print(f"{'python -c pass':<30}{floor[0]:6.1f} ms{floor[1]:6.1f} ms{floor[2]:7.1f} ms")
        print(
            f"{'policylint --version':<30}{version[0]:6.1f} ms{version[1]:6.1f} ms{version[2]:7.1f} ms"
            f"   +{overhead:.1f} ms over the floor (target <= {VERSION_OVERHEAD_TARGET_MS:.0f}):"
            f" {verdict(overhead <= VERSION_OVERHEAD_TARGET_MS)}"
        )
        for label, value in (("policylint, 1 file, cold", cold_one), ("policylint, 5 files, cold", cold_five)):
            print(
                f"{label:<30}{value[0]:6.1f} ms{value[1]:6.1f} ms{value[2]:7.1f} ms   (target <= {COLD_RUN_TARGET_MS:.0f} wall):"
                f" {verdict(value[0] <= COLD_RUN_TARGET_MS)}"
            )
        if max(cold_one[0] / max(cold_one[1], 1e-9), cold_five[0] / max(cold_five[1], 1e-9)) > 1.5:
            print("note: wall time is well above CPU time: the machine is busy, the wall figures are pessimistic")

        if args.imports:
            print(f"\nslowest imports of `policylint {five}` (cumulative, ms):")
            for micros, module in slowest_imports([str(five)], root, env):
                print(f"  {micros / 1000:7.1f}  {module}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
