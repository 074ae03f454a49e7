"""The simulation's kept walks told unchanged by identity (policylint.semantics.effective.walks:
`sources`, `unchanged`): in an editor's updates, where the topology hands its unchanged results
on as the same objects, a kept walk is played back without its reads worked out again, and only
where the objects it was worked out from, its routes' nodes and the facets on its nodes are the
ones it had. Each comparison left out makes an update say what a simulation from nothing does not.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from policylint.semantics import components
from policylint.semantics.effective import simulation, walks
from tests.incremental.test_incremental import _corpus, _editor_workspace
from tests.incremental.test_kept_folds import _differential, _from_nothing, _said


def _counting(monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    """How many kept walks the updates found unchanged by identity, and how often `reads` ran."""
    counts = {"unchanged": 0, "reads": 0}
    unchanged, reads = walks.unchanged, walks.reads

    def counted_unchanged(*args: Any) -> bool:
        same = unchanged(*args)
        counts["unchanged"] += same
        return same

    def counted_reads(*args: Any) -> tuple[walks.NodeRead, ...]:
        counts["reads"] += 1
        return reads(*args)

    monkeypatch.setattr(simulation, "unchanged", counted_unchanged)
    monkeypatch.setattr(simulation, "reads", counted_reads)
    return counts


def test_an_edit_of_a_file_of_policies_plays_every_walk_back_by_identity(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Its policies are new instances with the keys, positions and roles they had, and every
    Gateway, listener list, route list and route's nodes is the object the last update had:
    no walk reads the topology again, whether the edit added a comment or changed a value."""
    monkeypatch.setattr(components, "MIN_OBJECTS", 0)
    files = _corpus(3, 60, isolated=True)
    texts = {name: yaml.safe_dump_all(docs, sort_keys=False) for name, docs in files.items()}
    workspace, _ = _editor_workspace(tmp_path, monkeypatch, texts)
    name = next(name for name, docs in sorted(files.items()) if [d["kind"] for d in docs] == ["BackendTrafficPolicy"])
    # The first update is a whole run, the second loads the files, the third builds the objects
    # the next ones take (test_kept_folds).
    for n in range(3):
        workspace.update(name, texts[name] + f"# {n}\n")
    counts = _counting(monkeypatch)
    workspace.update(name, texts[name] + "# again\n")
    assert counts == {"unchanged": 2, "reads": 0}  # the corpus's two Gateways
    files[name][0]["spec"]["timeout"] = {"http": {"requestTimeout": "77s"}}
    workspace.update(name, yaml.safe_dump_all(files[name], sort_keys=False))
    assert counts == {"unchanged": 4, "reads": 0}


def test_the_updates_take_kept_walks_by_identity_and_by_their_reads(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Over the random edits of test_kept_folds (each update compared with a cold run and with a
    simulation from nothing), some walks are found unchanged by identity and some need `reads`."""
    counts = _counting(monkeypatch)
    _differential(tmp_path, monkeypatch, seed=0, steps=6, n=60)
    assert counts["unchanged"] > 0 and counts["reads"] > 0, counts


def _grant_deleted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The ReferenceGrant that lets the routes of tenant-00001 send traffic to cart-0 of
    tenant-00000 deleted from its file: the Gateway above those routes, its listeners and routes
    are the objects the last update had, and so are the TLS policy on cart-0 and its facets; the
    routes' references, and so their nodes, are not (the routes reach cart-0, and its policy, no
    more)."""
    monkeypatch.setattr(components, "MIN_OBJECTS", 0)
    files = _corpus(3, 60, isolated=False)
    grant = next(d for d in files["m-006.yaml"] if d["kind"] == "ReferenceGrant")
    assert grant["spec"]["to"] == [{"group": "", "kind": "Service", "name": "cart-0"}]
    tls = next(d for d in files["m-011.yaml"] if d["metadata"]["name"] == "cart-0-tls")
    # On the whole Service: every context through a route to cart-0 ends there, with its policy.
    assert tls["spec"]["targetRefs"][0].pop("sectionName") == "https"
    texts = {name: yaml.safe_dump_all(docs, sort_keys=False) for name, docs in files.items()}
    workspace, _ = _editor_workspace(tmp_path, monkeypatch, texts)
    for n in range(4):  # until the objects of the other files are kept (test_kept_folds)
        workspace.update("m-006.yaml", texts["m-006.yaml"] + f"# {n}\n")
    files["m-006.yaml"].remove(grant)
    result = workspace.update("m-006.yaml", yaml.safe_dump_all(files["m-006.yaml"], sort_keys=False)).result
    analysed = result.analysed if result.analysed is not None else result.project
    assert _said(analysed) == _said(_from_nothing(analysed))


def test_routes_that_reach_a_service_no_more_have_their_gateway_walked_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    counts = _counting(monkeypatch)
    _grant_deleted(tmp_path, monkeypatch)
    assert counts["reads"] > 0, counts


def _without_routes_attached(monkeypatch: pytest.MonkeyPatch) -> None:
    """`sources` without the routes attached to each parent: a route attached to one more
    listener, or moved to another, in its own file goes unseen below its Gateway."""
    real = walks.sources

    def blind(topology: Any, gateway: Any, obj: Callable[..., Any]) -> tuple[object, ...]:
        owners = [gateway, *(obj(ls.key) for ls in topology.listener_sets_of(gateway))] if gateway is not None else []
        attached = [topology.routes_of(o) for o in owners if o is not None and topology.routes_of(o)]
        return tuple(s for s in real(topology, gateway, obj) if not any(s is a for a in attached))

    monkeypatch.setattr(simulation, "sources", blind)


def _without_route_nodes(monkeypatch: pytest.MonkeyPatch) -> None:
    """The nodes of the routes a walk went into not kept, so not compared: a Service deleted in
    another file is still reached through the kept walk."""
    monkeypatch.setattr(simulation, "routes_into", lambda visited, nodes_of: ())


def _without_facets(monkeypatch: pytest.MonkeyPatch) -> None:
    """The facets on the walk's nodes not compared: a policy attached, moved or deleted in
    another file goes unseen below a Gateway whose topology did not change."""
    monkeypatch.setattr(walks, "same_facets", lambda walked, attached: True)


def _children_for_reach(monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    """How many nodes' children the blast radii worked out (`Simulation._finalize`), per update."""
    counts = {"children": 0}
    finalize, compute = simulation.Simulation._finalize, simulation.Simulation._compute_children
    inside = [False]

    def counted_finalize(self: simulation.Simulation) -> None:
        inside[0] = True
        try:
            finalize(self)
        finally:
            inside[0] = False

    def counted_compute(self: simulation.Simulation, node: Any) -> Any:
        counts["children"] += inside[0]
        return compute(self, node)

    monkeypatch.setattr(simulation.Simulation, "_finalize", counted_finalize)
    monkeypatch.setattr(simulation.Simulation, "_compute_children", counted_compute)
    return counts


def test_the_backends_below_an_unchanged_walk_are_the_last_updates(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The blast radii count the backends below the nodes the policies reach: below a walk played
    back by identity they are the ones the last update worked out, so an edit of a file of
    policies works out no node's children for them."""
    monkeypatch.setattr(components, "MIN_OBJECTS", 0)
    files = _corpus(3, 60, isolated=True)
    texts = {name: yaml.safe_dump_all(docs, sort_keys=False) for name, docs in files.items()}
    workspace, _ = _editor_workspace(tmp_path, monkeypatch, texts)
    name = next(name for name, docs in sorted(files.items()) if [d["kind"] for d in docs] == ["BackendTrafficPolicy"])
    for n in range(3):
        workspace.update(name, texts[name] + f"# {n}\n")
    counts = _children_for_reach(monkeypatch)
    workspace.update(name, texts[name] + "# again\n")
    assert counts == {"children": 0}
    files[name][0]["spec"]["timeout"] = {"http": {"requestTimeout": "77s"}}
    result = workspace.update(name, yaml.safe_dump_all(files[name], sort_keys=False)).result
    assert counts == {"children": 0}
    analysed = result.analysed if result.analysed is not None else result.project
    assert _said(analysed) == _said(_from_nothing(analysed))


def _listener_policy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A policy whose kind's contexts end at listeners (ClientTrafficPolicy), the only one: the
    walk below its Gateway stops above the routes, so their nodes are not compared. The
    ReferenceGrant that lets the route reach a Service of another namespace deleted from its file:
    the Gateway's lists are the objects the last update had, the backends below its listener
    are not (the policy's blast radius reaches the Service no more)."""
    monkeypatch.setattr(components, "MIN_OBJECTS", 0)
    gw = "gateway.networking.k8s.io"
    files: dict[str, list[dict[str, Any]]] = {
        "infra.yaml": [
            {
                "apiVersion": f"{gw}/v1",
                "kind": "GatewayClass",
                "metadata": {"name": "eg"},
                "spec": {"controllerName": "gateway.envoyproxy.io/gatewayclass-controller"},
            },
            {
                "apiVersion": f"{gw}/v1",
                "kind": "Gateway",
                "metadata": {"name": "gw", "namespace": "team-a"},
                "spec": {"gatewayClassName": "eg", "listeners": [{"name": "http", "port": 80, "protocol": "HTTP"}]},
            },
        ],
        "ctp.yaml": [
            {
                "apiVersion": "gateway.envoyproxy.io/v1alpha1",
                "kind": "ClientTrafficPolicy",
                "metadata": {"name": "ctp", "namespace": "team-a"},
                "spec": {
                    "targetRefs": [{"group": gw, "kind": "Gateway", "name": "gw"}],
                    "timeout": {"http": {"idleTimeout": "5s"}},
                },
            }
        ],
        "route.yaml": [
            {
                "apiVersion": f"{gw}/v1",
                "kind": "HTTPRoute",
                "metadata": {"name": "web", "namespace": "team-a"},
                "spec": {
                    "parentRefs": [{"name": "gw"}],
                    "rules": [{"backendRefs": [{"name": "api", "namespace": "team-b", "port": 80}]}],
                },
            }
        ],
        "api.yaml": [
            {
                "apiVersion": "v1",
                "kind": "Service",
                "metadata": {"name": "api", "namespace": "team-b"},
                "spec": {"ports": [{"port": 80}]},
            }
        ],
        "grants.yaml": [
            {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "keep", "namespace": "team-b"}},
            {
                "apiVersion": f"{gw}/v1beta1",
                "kind": "ReferenceGrant",
                "metadata": {"name": "allow", "namespace": "team-b"},
                "spec": {
                    "from": [{"group": gw, "kind": "HTTPRoute", "namespace": "team-a"}],
                    "to": [{"group": "", "kind": "Service"}],
                },
            },
        ],
    }
    texts = {name: yaml.safe_dump_all(docs, sort_keys=False) for name, docs in files.items()}
    workspace, _ = _editor_workspace(tmp_path, monkeypatch, texts)
    for n in range(4):  # until the objects of the other files are kept (test_kept_folds)
        workspace.update("grants.yaml", texts["grants.yaml"] + f"# {n}\n")
    result = workspace.update("grants.yaml", yaml.safe_dump_all(files["grants.yaml"][:1], sort_keys=False)).result
    analysed = result.analysed if result.analysed is not None else result.project
    assert _said(analysed) == _said(_from_nothing(analysed))


def test_the_backends_below_a_walk_above_the_routes_are_worked_out_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _listener_policy(tmp_path, monkeypatch)


def _below_kept_above_the_routes(monkeypatch: pytest.MonkeyPatch) -> None:
    """The backends below a walk's nodes taken from the last update whatever levels it goes down
    to: below a walk that stops above the routes, a route's backends changed in another file go
    unseen."""
    monkeypatch.setattr(walks, "covers_below", lambda walked: True)


def _differentials(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Seed 1 first: the only one of the four whose updates expose facets kept without comparing
    # them (each of the four exposes routes kept without theirs), so that a breakage test stops at
    # its first sequence, where it ran seed 0's whole sequence before (half its CPU).
    for seed in (1, 0, 2, 3):
        (tmp_path / str(seed)).mkdir()
        _differential(tmp_path / str(seed), monkeypatch, seed=seed, steps=6, n=60)


# Each comparison left out, and the updates that expose it.
BREAKAGES: dict[str, tuple[Callable[[pytest.MonkeyPatch], None], Callable[[Path, pytest.MonkeyPatch], None]]] = {
    "the routes attached to each parent": (_without_routes_attached, _differentials),
    "the nodes of each route": (_without_route_nodes, _grant_deleted),
    "the facets on each node": (_without_facets, _differentials),
    "the levels a walk goes down to, for the backends below its nodes": (_below_kept_above_the_routes, _listener_policy),
}


@pytest.mark.parametrize("breakage", sorted(BREAKAGES))
def test_it_fails_for_each_comparison_left_out(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, breakage: str) -> None:
    breaking, updates = BREAKAGES[breakage]
    breaking(monkeypatch)
    with pytest.raises(AssertionError):
        updates(tmp_path, monkeypatch)
