"""The routes' backend references a language server's topology keeps between edits
(policylint.semantics.topology.kept) are the ones a build from nothing resolves.

Differential: random edits of a generated workspace, each analysed as the editor's update
analyses it (a part over the objects kept in memory); after each, the topology the update built,
reusing what the build before resolved where its reads still answer the same, is compared with
one built from nothing over the same project: every object's references and what each grant
check found. The edits are the ones whose
effect reaches routes in other files: a Service's port changed or the Service deleted, a grant
added or removed, a Gateway moved to a class of another implementation (which resolves a
ServiceImport backend otherwise), a backend pointed across namespaces.
"""

from __future__ import annotations

import copy
import random
from pathlib import Path
from typing import Any

import pytest
import yaml

from benchmarks.generate import objects as tenants
from policylint.incremental.workspace import Workspace
from policylint.pipeline import LintRequest
from policylint.project import Project
from policylint.semantics import components
from policylint.semantics.grants import grant_meaning
from policylint.semantics.resolution import Resolution
from policylint.semantics.topology import Topology
from policylint.semantics.topology.model import ObjectRef
from policylint.stages import Stage
from tests.lintutil import in_files

ISTIO = {
    "apiVersion": "gateway.networking.k8s.io/v1",
    "kind": "GatewayClass",
    "metadata": {"name": "istio"},
    "spec": {"controllerName": "istio.io/gateway-controller"},
}
# Istio looks a ServiceImport backend up as the Service of its name; Envoy Gateway as the
# ServiceImport itself (profile `backendsResolvedAs`, `backendRefsByKind`).
IMPORT = {"group": "multicluster.x-k8s.io", "kind": "ServiceImport"}


def _corpus(seed: int, n: int) -> dict[str, list[dict[str, Any]]]:
    rng = random.Random(seed)
    docs = [ISTIO, *tenants(n, seed, error_rate=0.3, isolated=True)]
    for doc in docs:
        if doc.get("kind") == "HTTPRoute" and rng.random() < 0.3:
            for rule in doc["spec"].get("rules", []):
                for ref in rule.get("backendRefs", [])[:1]:
                    ref.update(IMPORT)
    return in_files(docs, rng)


def _crossing(route: dict[str, Any]) -> list[dict[str, Any]]:
    """The route's backend references into another namespace."""
    return [
        ref
        for rule in route["spec"].get("rules", [])
        for ref in rule.get("backendRefs", [])
        if ref.get("namespace", route["metadata"]["namespace"]) != route["metadata"]["namespace"]
    ]


def _grant(source: str, target: str, rng: random.Random) -> dict[str, Any]:
    """A ReferenceGrant in `target` letting the HTTPRoutes of `source` reach its Services."""
    return {
        "apiVersion": "gateway.networking.k8s.io/v1beta1",
        "kind": "ReferenceGrant",
        "metadata": {"name": f"allow-{rng.randrange(10**6)}", "namespace": target},
        "spec": {
            "from": [{"group": "gateway.networking.k8s.io", "kind": "HTTPRoute", "namespace": source}],
            "to": [{"group": "", "kind": "Service"}],
        },
    }


def _every(files: dict[str, list[dict[str, Any]]], kind: str) -> list[tuple[str, dict[str, Any]]]:
    return [(name, d) for name, docs in files.items() for d in docs if d.get("kind") == kind]


def _edit(files: dict[str, list[dict[str, Any]]], rng: random.Random) -> str | None:
    """One edit, in place; the file it changed (None: nothing to do)."""
    edit = rng.choice(["port", "unservice", "class", "grant", "grant", "ungrant", "ungrant", "cross", "cross", "import"])
    services, routes = _every(files, "Service"), [r for r in _every(files, "HTTPRoute") if r[1]["spec"].get("rules")]
    if edit == "port" and services:
        name, service = rng.choice(services)
        for port in service["spec"].get("ports", []):
            port["port"] += 1
        return name
    if edit == "unservice" and services:
        name, service = rng.choice(services)
        files[name].remove(service)
        return name
    if edit == "class":
        gateways = _every(files, "Gateway")
        if gateways:
            name, gateway = rng.choice(gateways)
            gateway["spec"]["gatewayClassName"] = "istio" if gateway["spec"]["gatewayClassName"] == "envoy" else "envoy"
            return name
    if edit == "grant":
        # Granted where a route already reaches across namespaces: the route, in another file,
        # is kept, and only its grant check tells it is now permitted.
        crossing = [(route, ref) for _, route in routes for ref in _crossing(route)]
        if crossing:
            route, ref = rng.choice(crossing)
            name = next(n for n, docs in files.items() for d in docs if d["metadata"].get("namespace") == ref["namespace"])
            files[name].append(_grant(route["metadata"]["namespace"], ref["namespace"], rng))
            return name
    if edit == "ungrant":
        grants = _every(files, "ReferenceGrant")
        if grants:
            name, grant = rng.choice(grants)
            files[name].remove(grant)
            return name
    if edit in ("cross", "import") and services and routes:
        (_, service), (name, route) = rng.choice(services), rng.choice(routes)
        rule = rng.choice(route["spec"]["rules"])
        ref = {"name": service["metadata"]["name"], "namespace": service["metadata"]["namespace"], "port": 8080}
        rule["backendRefs"] = [{**ref, **IMPORT} if edit == "import" else ref]
        return name
    return None


def _refs(topology: Topology) -> dict[ObjectRef, tuple[object, ...]]:
    """Every reference of every object, keyed by itself with its grant left out, and its grant
    check's meaning (a build from nothing parses the grants anew)."""
    import dataclasses

    return {
        dataclasses.replace(ref, grant=None): grant_meaning(ref.grant) if ref.grant is not None else ()
        for refs in topology.references.values()
        for ref in refs
    }


def _differential(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, *, seed: int, steps: int, n: int) -> dict[str, int]:
    """The updates analysed as parts, and over them the routes reused and the kept ones refused."""
    monkeypatch.setattr(components, "MIN_OBJECTS", 0)
    rng = random.Random(seed)
    files = _corpus(seed, n)
    root = tmp_path / "ws"
    root.mkdir()
    for name, docs in files.items():
        (root / name).write_text(yaml.safe_dump_all(docs, sort_keys=False), encoding="utf-8")
    monkeypatch.chdir(root)
    workspace = Workspace(LintRequest(paths=["."], cache_dir=str(tmp_path / "cache")))
    kept = workspace._resident.topology.backends
    totals = {"reused": 0, "refused": 0, "parts": 0}
    for step in range(steps):
        before = copy.deepcopy(files)
        name = _edit(files, rng)
        if name is None or files == before:
            continue
        workspace.update(name, yaml.safe_dump_all(files[name], sort_keys=False))
        analysed = workspace.result.analysed
        if not workspace.last_was_part or analysed is None or not analysed.has_stage(Stage.TOPOLOGY):
            continue
        totals["parts"] += 1
        totals["reused"] += kept.reused
        totals["refused"] += kept.refused
        fresh = Project(analysed.index, Resolution(analysed.index, analysed.resolution.profiles))
        rebuilt = Topology(fresh.resolution, analysed.admissions())
        assert _refs(analysed.topology()) == _refs(rebuilt), (seed, step, name)
    return totals


def test_routes_kept_between_edits_resolve_as_a_build_from_nothing_fast(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A sequence that fails when a lookup's answer, a grant check's or the parents'
    implementations are not compared (each tried)."""
    totals = _differential(tmp_path, monkeypatch, seed=3, steps=12, n=260)
    assert totals["reused"] > 0 and totals["refused"] > 0, totals


@pytest.mark.slow
@pytest.mark.parametrize("seed", [1, 2, 4, 5])
def test_routes_kept_between_edits_resolve_as_a_build_from_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, seed: int
) -> None:
    totals = _differential(tmp_path, monkeypatch, seed=seed, steps=25, n=400)
    assert totals["reused"] > 0, totals
