"""Benchmark the effective-policy simulation on a synthetic topology.

    python benchmarks/effective.py [--routes 1000,5000,10000] [--listeners 5]

The topology is the worst case issue 4 names: every route attaches to all
listeners of its Gateway (a parentRef without sectionName), each route has two
named rules, and policies sit at every level: Envoy Gateway
BackendTrafficPolicy on each Gateway, on one listener of it, on every tenth
route and on one rule of every twentieth route; ClientTrafficPolicy on each
Gateway and listener; Kuadrant RateLimitPolicy defaults on each Gateway and
overrides on every fifth route. With 10,000 routes and 5 listeners that is
100,000 rule contexts per rule-level kind.

For each size it prints the time to load and index the corpus (the whole
lint, parse included), the time of the simulation alone, the number of
contexts, and how the simulation time grows with the number of routes (it
must be linear: never an all-simple-paths search).
"""

from __future__ import annotations

import argparse
import gc
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

GW = "gateway.networking.k8s.io"
ROUTES_PER_GATEWAY = 500


def _ref(kind: str, name: str, section: str | None = None) -> dict[str, Any]:
    ref: dict[str, Any] = {"group": GW, "kind": kind, "name": name}
    if section is not None:
        ref["sectionName"] = section
    return ref


def build(routes: int, listeners: int) -> list[dict[str, Any]]:
    docs: list[dict[str, Any]] = [
        {
            "apiVersion": f"{GW}/v1",
            "kind": "GatewayClass",
            "metadata": {"name": "eg"},
            "spec": {"controllerName": "gateway.envoyproxy.io/gatewayclass-controller"},
        }
    ]
    gateways = max(1, routes // ROUTES_PER_GATEWAY)
    ns = "bench"
    for g in range(gateways):
        gw = f"gw-{g}"
        docs.append(
            {
                "apiVersion": f"{GW}/v1",
                "kind": "Gateway",
                "metadata": {"name": gw, "namespace": ns},
                "spec": {
                    "gatewayClassName": "eg",
                    "listeners": [{"name": f"l{i}", "protocol": "HTTP", "port": 8000 + i} for i in range(listeners)],
                },
            }
        )
        docs.append(
            _policy(
                "gateway.envoyproxy.io/v1alpha1",
                "BackendTrafficPolicy",
                f"btp-{gw}",
                ns,
                _ref("Gateway", gw),
                {"timeout": {"http": {"requestTimeout": "10s"}}},
            )
        )
        docs.append(
            _policy(
                "gateway.envoyproxy.io/v1alpha1",
                "BackendTrafficPolicy",
                f"btp-{gw}-l0",
                ns,
                _ref("Gateway", gw, "l0"),
                {"timeout": {"http": {"requestTimeout": "5s"}}},
            )
        )
        docs.append(
            _policy(
                "gateway.envoyproxy.io/v1alpha1",
                "ClientTrafficPolicy",
                f"ctp-{gw}",
                ns,
                _ref("Gateway", gw),
                {"timeout": {"http": {"idleTimeout": "60s"}}},
            )
        )
        for i in range(listeners):
            docs.append(
                _policy(
                    "gateway.envoyproxy.io/v1alpha1",
                    "ClientTrafficPolicy",
                    f"ctp-{gw}-l{i}",
                    ns,
                    _ref("Gateway", gw, f"l{i}"),
                    {"timeout": {"http": {"idleTimeout": "30s"}}},
                )
            )
        docs.append(
            _policy(
                "kuadrant.io/v1",
                "RateLimitPolicy",
                f"rlp-{gw}",
                ns,
                _ref("Gateway", gw),
                {"defaults": {"limits": {"global": {"rates": [{"limit": 100, "window": "1s"}]}}}},
                single=True,
            )
        )
    for r in range(routes):
        gw = f"gw-{r % gateways}"
        route = f"route-{r}"
        svc = f"svc-{r % 2000}"
        docs.append(
            {
                "apiVersion": f"{GW}/v1",
                "kind": "HTTPRoute",
                "metadata": {"name": route, "namespace": ns},
                "spec": {
                    "parentRefs": [{"name": gw}],
                    "rules": [
                        {"name": "read", "backendRefs": [{"name": svc, "port": 80}]},
                        {"name": "write", "backendRefs": [{"name": svc, "port": 80}]},
                    ],
                },
            }
        )
        if r % 10 == 0:
            docs.append(
                _policy(
                    "gateway.envoyproxy.io/v1alpha1",
                    "BackendTrafficPolicy",
                    f"btp-{route}",
                    ns,
                    _ref("HTTPRoute", route),
                    {"timeout": {"http": {"requestTimeout": "2s"}}},
                )
            )
        if r % 20 == 0:
            docs.append(
                _policy(
                    "gateway.envoyproxy.io/v1alpha1",
                    "BackendTrafficPolicy",
                    f"btp-{route}-write",
                    ns,
                    _ref("HTTPRoute", route, "write"),
                    {"retry": {"numRetries": 3}},
                )
            )
        if r % 5 == 0:
            docs.append(
                _policy(
                    "kuadrant.io/v1",
                    "RateLimitPolicy",
                    f"rlp-{route}",
                    ns,
                    _ref("HTTPRoute", route),
                    {"overrides": {"limits": {"route": {"rates": [{"limit": 10, "window": "1s"}]}}}},
                    single=True,
                )
            )
    for s in range(min(routes, 2000)):
        docs.append(
            {
                "apiVersion": "v1",
                "kind": "Service",
                "metadata": {"name": f"svc-{s}", "namespace": ns},
                "spec": {"ports": [{"name": "http", "port": 80}]},
            }
        )
    return docs


def _policy(
    api: str, kind: str, name: str, ns: str, ref: dict[str, Any], body: dict[str, Any], single: bool = False
) -> dict[str, Any]:
    spec: dict[str, Any] = {"targetRef": ref} if single else {"targetRefs": [ref]}
    spec.update(body)
    return {"apiVersion": api, "kind": kind, "metadata": {"name": name, "namespace": ns}, "spec": spec}


def write(docs: list[dict[str, Any]], out: Path, per_file: int = 200) -> None:
    out.mkdir(parents=True, exist_ok=True)
    for i in range(0, len(docs), per_file):
        (out / f"part-{i // per_file:05d}.yaml").write_text(yaml.safe_dump_all(docs[i : i + per_file], sort_keys=False))


def measure(routes: int, listeners: int) -> dict[str, float]:
    from policylint.pipeline import LintRequest, lint
    from policylint.semantics.effective.simulation import Simulation

    with tempfile.TemporaryDirectory() as tmp:
        write(build(routes, listeners), Path(tmp))
        gc.collect()
        start = time.perf_counter()
        result = lint(LintRequest(paths=[tmp]))
        total = time.perf_counter() - start
        index = result.index
        topology = result.project.topology()  # built by the run: the default rules read it
        gc.collect()
        gc.disable()
        start = time.perf_counter()
        sim = Simulation(topology)
        simulate = time.perf_counter() - start
        gc.enable()
        contexts = sum(s.contexts for s in sim.status.values())
        return {
            "routes": routes,
            "objects": len(index.objects),
            "lint_s": total,
            "simulate_s": simulate,
            "stack_entries": contexts,
            "distinct_stacks": len({group.stack for group in sim.stack_groups()}),
            "findings": len(result.findings),
        }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--routes", default="1000,5000,10000")
    parser.add_argument("--listeners", type=int, default=5)
    args = parser.parse_args(argv)
    sizes = [int(s) for s in args.routes.split(",")]
    rows = [measure(n, args.listeners) for n in sizes]
    print(
        f"{'routes':>7} {'objects':>8} {'lint s':>8} {'simulate s':>11} {'policy-context entries':>23} {'distinct stacks':>16} {'findings':>9}"
    )
    for row in rows:
        print(
            f"{row['routes']:>7} {row['objects']:>8} {row['lint_s']:>8.2f} {row['simulate_s']:>11.2f}"
            f" {row['stack_entries']:>23} {row['distinct_stacks']:>16} {row['findings']:>9}"
        )
    if len(rows) > 1:
        first, last = rows[0], rows[-1]
        size_ratio = last["routes"] / first["routes"]
        print(
            f"growth {first['routes']}→{last['routes']} routes (×{size_ratio:g}): simulation ×{last['simulate_s'] / first['simulate_s']:.2f},"
            f" whole lint ×{last['lint_s'] / first['lint_s']:.2f}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
