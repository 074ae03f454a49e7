"""Generate a synthetic, realistic Gateway API corpus for benchmarks.

    python benchmarks/generate.py 10000 OUTDIR [--seed 1] [--per-file 100]
    python benchmarks/generate.py 2500 OUTDIR --grants   # 2,500 namespaces, a grant each in one shared namespace
    python benchmarks/generate.py 10000 OUTDIR --per-file 0 --error-rate 0.75 --shared   # the shared corpus

The corpus is a platform of many tenants. Each tenant namespace holds a
Gateway with many listeners (HTTP and HTTPS with certificateRefs), HTTPRoutes
with named rules attached to listeners, Services with named ports, a
ReferenceGrant for cross-namespace backends, and policies at every level:
Envoy Gateway ClientTrafficPolicy (Gateway, listener), BackendTrafficPolicy
(Gateway, route, rule), Kuadrant RateLimitPolicy (Gateway, route, rule) and
BackendTLSPolicy (Service port). About 2% of the policies carry a mistake
(misspelled target, missing listener) so that the run also resolves positions
for findings, as a real run does. The output depends only on the arguments.
"""

from __future__ import annotations

import argparse
import random
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import yaml

GW_GROUP = "gateway.networking.k8s.io"
EG_API = "gateway.envoyproxy.io/v1alpha1"
KUADRANT_API = "kuadrant.io/v1"
ERROR_RATE = 0.02
# The messy corpus (benchmarks/run.py): 1 to 5 objects per file and three policy references in
# four misspelled, so that about a quarter of the documents carry a finding, most with a note in
# another file — what a first run over an existing repository looks like.
MESSY_ERROR_RATE = 0.75

_APPS = ("cart", "catalog", "search", "checkout", "profile", "orders", "billing", "media", "reviews", "ads", "auth", "inventory")
_RULES = ("read", "write", "admin", "health", "static", "api", "legacy", "export")


def _ref(kind: str, name: str, section: str | None = None, group: str = GW_GROUP) -> dict[str, Any]:
    ref: dict[str, Any] = {"group": group, "kind": kind, "name": name}
    if section is not None:
        ref["sectionName"] = section
    return ref


def _meta(name: str, namespace: str, rng: random.Random) -> dict[str, Any]:
    return {
        "name": name,
        "namespace": namespace,
        "labels": {
            "app.kubernetes.io/part-of": namespace,
            "app.kubernetes.io/managed-by": rng.choice(("argocd", "flux", "helm")),
        },
    }


# The mistake rate of the run being generated (`objects(..., error_rate=)`).
_RATE = [ERROR_RATE]


# Whether tenants stand alone (`objects(..., isolated=True)`): no route reaches a neighbour's
# Service, so each tenant is a part of the repository that cannot see the others.
_ISOLATED = [False]

# Whether tenants share Services (`objects(..., shared=True)`): routes also send traffic to
# Services of the eight tenants before them, which grant it to the six tenants after them for two
# of their Services, so that some of those references are refused (PL402) with near misses.
_SHARED = [False]
SHARED_REACH = 8
SHARED_GRANTED = 6


def _maybe_typo(name: str, rng: random.Random) -> str:
    if rng.random() >= _RATE[0] or len(name) < 3:
        return name
    i = rng.randrange(1, len(name) - 1)
    return name[:i] + name[i + 1 :]  # drop one letter: the classic copy-edit slip


def tenant(k: int, rng: random.Random) -> Iterator[dict[str, Any]]:
    """One tenant namespace: ~40 objects, in the order a team would write them."""
    ns = f"tenant-{k:05d}"
    gw = f"gw-{k:05d}"
    yield {
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": {"name": ns, "labels": {"gateway-access": "shared", "tenant": str(k)}},
    }

    listeners = []
    n_listeners = rng.randint(8, 32)
    for i in range(n_listeners):
        host = f"{_APPS[i % len(_APPS)]}-{i}.{ns}.example.com"
        if i % 3 == 0:
            listeners.append({"name": f"http-{i}", "protocol": "HTTP", "port": 80, "hostname": host})
        else:
            listeners.append(
                {
                    "name": f"https-{i}",
                    "protocol": "HTTPS",
                    "port": 443,
                    "hostname": host,
                    "tls": {"mode": "Terminate", "certificateRefs": [{"group": "", "kind": "Secret", "name": f"cert-{i}"}]},
                    "allowedRoutes": {
                        "namespaces": {"from": "Selector", "selector": {"matchLabels": {"gateway-access": "shared"}}}
                    },
                }
            )
    yield {
        "apiVersion": f"{GW_GROUP}/v1",
        "kind": "Gateway",
        "metadata": _meta(gw, ns, rng),
        "spec": {"gatewayClassName": "envoy", "listeners": listeners},
    }

    n_apps = rng.randint(6, 12)
    apps = [f"{_APPS[i % len(_APPS)]}-{i}" for i in range(n_apps)]
    for app in apps:
        yield {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": _meta(app, ns, rng),
            "spec": {
                "selector": {"app.kubernetes.io/name": app},
                "ports": [
                    {"name": "http", "port": 8080, "targetPort": "http", "protocol": "TCP"},
                    {"name": "https", "port": 8443, "targetPort": "https", "protocol": "TCP"},
                    {"name": "metrics", "port": 9090, "targetPort": "metrics", "protocol": "TCP"},
                ],
            },
        }

    routes: list[tuple[str, list[str]]] = []
    for i, app in enumerate(apps):
        listener = listeners[i % n_listeners]
        # 2 to 8 rules: routes with 7 or more have "legacy", the cross-namespace backend the grants allow.
        rule_names = list(_RULES[: rng.randint(2, len(_RULES))])
        rules = []
        for r in rule_names:
            backend: dict[str, Any] = {"name": app, "port": 8080}
            if r == "legacy" and k > 0 and not _ISOLATED[0]:
                # A cross-namespace backend, allowed by the neighbour's ReferenceGrant.
                backend = {"name": f"{_APPS[0]}-0", "namespace": f"tenant-{k - 1:05d}", "port": 8080}
            backends = [backend]
            if _SHARED[0] and k > 0 and rng.random() < 0.35:
                other = rng.randrange(max(0, k - SHARED_REACH), k)
                j = rng.randrange(4)
                service = f"{_APPS[j]}-{j}"
                backends.append({"name": service, "namespace": f"tenant-{other:05d}", "port": 8080, "weight": 1})
            rules.append(
                {
                    "name": r,
                    "matches": [{"path": {"type": "PathPrefix", "value": f"/{app}/{r}"}}],
                    "backendRefs": backends,
                }
            )
        route = f"{app}-route"
        routes.append((route, rule_names))
        yield {
            "apiVersion": f"{GW_GROUP}/v1",
            "kind": "HTTPRoute",
            "metadata": _meta(route, ns, rng),
            "spec": {
                "parentRefs": [{"name": gw, "sectionName": listener["name"]}],
                "hostnames": [listener["hostname"]],
                "rules": rules,
            },
        }

    grant_from = [{"group": GW_GROUP, "kind": "HTTPRoute", "namespace": f"tenant-{k + 1:05d}"}]
    grant_to = [{"group": "", "kind": "Service", "name": f"{_APPS[0]}-0"}]
    if _SHARED[0]:
        grant_from = [
            {"group": GW_GROUP, "kind": "HTTPRoute", "namespace": f"tenant-{k + d:05d}"} for d in range(1, SHARED_GRANTED + 1)
        ]
        grant_to.append({"group": "", "kind": "Service", "name": f"{_APPS[1]}-1"})
    yield {
        "apiVersion": f"{GW_GROUP}/v1beta1",
        "kind": "ReferenceGrant",
        "metadata": _meta("allow-next-tenant", ns, rng),
        "spec": {"from": grant_from, "to": grant_to},
    }

    # Policies at every level of the hierarchy.
    https = [lst["name"] for lst in listeners if lst["protocol"] == "HTTPS"]
    yield {
        "apiVersion": EG_API,
        "kind": "ClientTrafficPolicy",
        "metadata": _meta(f"{gw}-clients", ns, rng),
        "spec": {"targetRefs": [_ref("Gateway", gw)], "tls": {"minVersion": "1.2"}, "timeout": {"http": {"idleTimeout": "5m"}}},
    }
    section = rng.choice(https)
    yield {
        "apiVersion": EG_API,
        "kind": "ClientTrafficPolicy",
        "metadata": _meta(f"{gw}-{section}-keepalive", ns, rng),
        "spec": {
            "targetRefs": [_ref("Gateway", gw, _maybe_typo(section, rng))],
            "tcpKeepalive": {"idleTime": "60s", "interval": "10s", "probes": 3},
        },
    }
    yield {
        "apiVersion": EG_API,
        "kind": "BackendTrafficPolicy",
        "metadata": _meta(f"{gw}-backends", ns, rng),
        "spec": {"targetRefs": [_ref("Gateway", gw)], "timeout": {"http": {"requestTimeout": "30s"}}},
    }
    yield {
        "apiVersion": KUADRANT_API,
        "kind": "RateLimitPolicy",
        "metadata": _meta(f"{gw}-limits", ns, rng),
        "spec": {
            "targetRef": _ref("Gateway", gw),
            "defaults": {
                "strategy": "merge",
                "limits": {"per-ip": {"rates": [{"limit": 600, "window": "1m"}], "counters": [{"expression": "source.address"}]}},
            },
        },
    }
    for route, rule_names in routes:
        level = rng.random()
        if level < 0.4:
            yield {
                "apiVersion": EG_API,
                "kind": "BackendTrafficPolicy",
                "metadata": _meta(f"{route}-retries", ns, rng),
                "spec": {
                    "targetRefs": [_ref("HTTPRoute", _maybe_typo(route, rng), rng.choice(rule_names))],
                    "retry": {"numRetries": rng.randint(1, 5), "retryOn": {"triggers": ["connect-failure", "reset"]}},
                },
            }
        elif level < 0.8:
            yield {
                "apiVersion": KUADRANT_API,
                "kind": "RateLimitPolicy",
                "metadata": _meta(f"{route}-limits", ns, rng),
                "spec": {
                    "targetRef": _ref(
                        "HTTPRoute", _maybe_typo(route, rng), rng.choice(rule_names) if rng.random() < 0.5 else None
                    ),
                    "limits": {
                        "per-user": {
                            "rates": [{"limit": rng.randint(10, 1000), "window": "1m"}],
                            "counters": [{"expression": "auth.identity.sub"}],
                        }
                    },
                },
            }
    for app in apps[: max(1, n_apps // 3)]:
        yield {
            "apiVersion": f"{GW_GROUP}/v1",
            "kind": "BackendTLSPolicy",
            "metadata": _meta(f"{app}-tls", ns, rng),
            "spec": {
                "targetRefs": [_ref("Service", _maybe_typo(app, rng), "https", group="")],
                "validation": {"wellKnownCACertificates": "System", "hostname": f"{app}.{ns}.svc.cluster.local"},
            },
        }


def objects(
    n: int, seed: int, error_rate: float = ERROR_RATE, *, isolated: bool = False, shared: bool = False
) -> Iterator[dict[str, Any]]:
    """Exactly `n` objects: whole tenants, the last one cut short; `error_rate` of the policy
    references misspelled; `isolated`: no tenant's route reaches into another tenant; `shared`:
    routes reach the Services of the tenants before them, not all granted."""
    _RATE[0] = error_rate
    _ISOLATED[0] = isolated
    _SHARED[0] = shared
    rng = random.Random(seed)
    if n <= 0:
        return
    # The class every tenant Gateway names: without it no Gateway would be reconciled (PL405).
    yield {
        "apiVersion": f"{GW_GROUP}/v1",
        "kind": "GatewayClass",
        "metadata": {"name": "envoy"},
        "spec": {"controllerName": "gateway.envoyproxy.io/gatewayclass-controller"},
    }
    produced = 1
    k = 0
    while produced < n:
        for obj in tenant(k, rng):
            yield obj
            produced += 1
            if produced == n:
                return
        k += 1


def grant_objects(namespaces: int, seed: int) -> Iterator[dict[str, Any]]:
    """The grant-heavy shape: `namespaces` tenant namespaces whose routes all use one shared
    Gateway and the Services of one shared namespace, each through a ReferenceGrant there.

    Every tenant has a Namespace, a Service and an HTTPRoute attached to the shared Gateway, with
    one backend of its own and one in the shared namespace. The shared namespace holds one
    ReferenceGrant per tenant (from that tenant's HTTPRoutes to the Service it uses), so the grants
    of one namespace grow with the tenants, as on a platform where each team files its own grant.
    One tenant in ten has a grant that misses (another Service's name, the wrong kind, or the
    grant filed in the tenant's own namespace): its reference is refused and the grants that
    almost permit it are looked for, as a real repository's mistakes make them be.
    """
    rng = random.Random(seed)
    shared = "shared-services"
    services = max(8, namespaces // 50)
    yield {
        "apiVersion": f"{GW_GROUP}/v1",
        "kind": "GatewayClass",
        "metadata": {"name": "envoy"},
        "spec": {"controllerName": "gateway.envoyproxy.io/gatewayclass-controller"},
    }
    yield {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": shared}}
    yield {
        "apiVersion": f"{GW_GROUP}/v1",
        "kind": "Gateway",
        "metadata": {"name": "edge", "namespace": shared},
        "spec": {
            "gatewayClassName": "envoy",
            "listeners": [{"name": "http", "protocol": "HTTP", "port": 80, "allowedRoutes": {"namespaces": {"from": "All"}}}],
        },
    }
    for s in range(services):
        yield {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": {"name": f"shared-{s:04d}", "namespace": shared},
            "spec": {"selector": {"app": f"shared-{s:04d}"}, "ports": [{"name": "http", "port": 8080, "protocol": "TCP"}]},
        }
    for k in range(namespaces):
        ns = f"team-{k:05d}"
        app = _APPS[k % len(_APPS)]
        service = f"shared-{rng.randrange(services):04d}"
        yield {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}}
        yield {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": {"name": app, "namespace": ns},
            "spec": {"selector": {"app": app}, "ports": [{"name": "http", "port": 8080, "protocol": "TCP"}]},
        }
        yield {
            "apiVersion": f"{GW_GROUP}/v1",
            "kind": "HTTPRoute",
            "metadata": {"name": f"{app}-route", "namespace": ns},
            "spec": {
                "parentRefs": [{"name": "edge", "namespace": shared}],
                "hostnames": [f"{app}.{ns}.example.com"],
                "rules": [
                    {"matches": [{"path": {"type": "PathPrefix", "value": "/"}}], "backendRefs": [{"name": app, "port": 8080}]},
                    {
                        "matches": [{"path": {"type": "PathPrefix", "value": "/shared"}}],
                        "backendRefs": [{"name": service, "namespace": shared, "port": 8080}],
                    },
                ],
            },
        }
        to: dict[str, Any] = {"group": "", "kind": "Service", "name": service}
        grant_ns = shared
        mistake = rng.random()
        if mistake < 0.04:
            to = {"group": "", "kind": "Service", "name": f"shared-{(int(service[-4:]) + 1) % services:04d}"}
        elif mistake < 0.07:
            to = {"group": "", "kind": "Secret"}
        elif mistake < 0.10:
            grant_ns = ns
        yield {
            "apiVersion": f"{GW_GROUP}/v1beta1",
            "kind": "ReferenceGrant",
            "metadata": {"name": f"from-{ns}", "namespace": grant_ns},
            "spec": {"from": [{"group": GW_GROUP, "kind": "HTTPRoute", "namespace": ns}], "to": [to]},
        }


def write_grants_corpus(namespaces: int, out: Path, *, seed: int = 1, per_file: int = 100) -> list[Path]:
    """Write the grant-heavy shape (`grant_objects`) into `out/corpus-NNNNN.yaml`."""
    return _write(grant_objects(namespaces, seed), out, seed=seed, per_file=per_file)


def write_corpus(
    n: int,
    out: Path,
    *,
    seed: int = 1,
    per_file: int = 100,
    error_rate: float = ERROR_RATE,
    isolated: bool = False,
    shared: bool = False,
) -> list[Path]:
    """Write `n` objects into `out/corpus-NNNNN.yaml`, `per_file` documents per file; 0: between
    1 and 5, varied, as real repositories keep them (which exposes per-file costs)."""
    return _write(objects(n, seed, error_rate, isolated=isolated, shared=shared), out, seed=seed, per_file=per_file)


def _write(objs: Iterable[dict[str, Any]], out: Path, *, seed: int, per_file: int) -> list[Path]:
    out.mkdir(parents=True, exist_ok=True)
    files: list[Path] = []
    batch: list[dict[str, Any]] = []
    sizes = random.Random(seed + 1)
    size = per_file if per_file > 0 else sizes.randint(1, 5)

    def flush() -> None:
        path = out / f"corpus-{len(files):05d}.yaml"
        # Block style, keys in authoring order: what people keep in git.
        text = yaml.dump_all(batch, Dumper=yaml.CSafeDumper, sort_keys=False, default_flow_style=False, explicit_start=True)
        path.write_text(text, encoding="utf-8")
        files.append(path)
        batch.clear()

    for obj in objs:
        batch.append(obj)
        if len(batch) == size:
            flush()
            size = per_file if per_file > 0 else sizes.randint(1, 5)
    if batch:
        flush()
    return files


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("objects", type=int, help="number of objects to generate")
    parser.add_argument("out", type=Path, help="output directory (created)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--per-file", type=int, default=100, help="objects per file (default 100; 0: 1 to 5, varied)")
    parser.add_argument(
        "--error-rate", type=float, default=ERROR_RATE, help=f"share of misspelled policy references (default {ERROR_RATE})"
    )
    parser.add_argument(
        "--isolated", action="store_true", help="tenants that do not reach into each other (no cross-namespace backends)"
    )
    parser.add_argument(
        "--shared",
        action="store_true",
        help="tenants whose routes also reach Services of other tenants, some without a ReferenceGrant",
    )
    parser.add_argument(
        "--grants",
        action="store_true",
        help="the grant-heavy shape: the count is of tenant namespaces, each with a ReferenceGrant in one shared namespace",
    )
    args = parser.parse_args(argv)
    if args.grants:
        files = write_grants_corpus(args.objects, args.out, seed=args.seed, per_file=args.per_file)
        what = f"{args.objects} namespaces"
    else:
        files = write_corpus(
            args.objects,
            args.out,
            seed=args.seed,
            per_file=args.per_file,
            error_rate=args.error_rate,
            isolated=args.isolated,
            shared=args.shared,
        )
        what = f"{args.objects} objects"
    size = sum(f.stat().st_size for f in files)
    print(f"wrote {what} in {len(files)} files ({size / 1e6:.1f} MB) to {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
