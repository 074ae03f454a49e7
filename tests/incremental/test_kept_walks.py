"""The simulation's walks kept between the runs of one process (policylint.semantics.effective.walks):
over random edit sequences of generated corpora, a run whose simulation plays back the walks an
earlier run kept gives what a run from nothing gives, its findings, its policies' enforcement and
blast radius, and `explain` of every policy and target."""

from __future__ import annotations

import copy
import json
import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from policylint import pipeline
from policylint.commands.explain import Found, explain_policy, explain_target, object_node
from policylint.pipeline import LintRequest, lint
from policylint.semantics.effective import simulation, walks
from policylint.semantics.effective.simulation import Simulation
from policylint.semantics.effective.walks import KeptWalks
from policylint.semantics.topology import Topology
from policylint.stages import Stage
from tests.incremental.test_incremental import _corpus, _edit, _policies, _write

# What `explain` is asked about besides every policy: the nodes contexts pass.
TARGET_KINDS = ("Gateway", "HTTPRoute", "Service")


def _outcome(root: Path) -> str:
    """Everything a run says that the simulation decides, as one text to compare."""
    result = lint(LintRequest(paths=[str(root)], report_policies=True))
    project = result.project
    out: dict[str, Any] = {
        "findings": [(f.rule, f.file, f.line, f.column, f.message) for f in result.findings],
        "policies": [repr(report) for report in result.policy_reports or ()],
    }
    explained: dict[str, Any] = {}
    if not project.has_stage(Stage.SIMULATION):
        return json.dumps(out, sort_keys=True, default=str, indent=1)  # a PL000 among the findings says why
    for policy in project.resolution.policies():
        found = Found(policy.obj, None, object_node(project, policy.obj))
        explained[f"policy {policy.key}"] = explain_policy(project, found, policy)
    for obj in project.index.objects:
        if obj.kind in TARGET_KINDS:
            explained[f"target {obj.key}"] = explain_target(project, Found(obj, None, object_node(project, obj)))
    out["explain"] = explained
    return json.dumps(out, sort_keys=True, default=str, indent=1)


def _policy_value(files: dict[str, list[dict[str, Any]]], rng: random.Random) -> str:
    """A policy's values changed where it stands: the same stacks, other fold results."""
    policies = list(_policies(files))
    if not policies:
        return "policy-value (none)"
    spec = rng.choice(policies)["spec"]
    spec["timeout"] = {"http": {"requestTimeout": f"{rng.randrange(1, 99)}s"}}
    return "policy-value"


def _reattach(files: dict[str, list[dict[str, Any]]], rng: random.Random) -> str:
    """A route moved to another listener of its Gateway, or attached to one more: the nodes below
    the Gateway may be the same, the paths through them are not."""
    routes = [d for docs in files.values() for d in docs if d["kind"] == "HTTPRoute" and d["spec"].get("parentRefs")]
    listeners = {
        (d["metadata"].get("namespace"), d["metadata"]["name"]): {
            lst["name"]: lst.get("hostname") for lst in d["spec"]["listeners"]
        }
        for docs in files.values()
        for d in docs
        if d["kind"] == "Gateway" and isinstance(d.get("spec"), dict) and d["spec"].get("listeners")
    }
    rng.shuffle(routes)
    for route in routes:
        ref = route["spec"]["parentRefs"][0]
        named = listeners.get((ref.get("namespace", route["metadata"].get("namespace")), ref.get("name")), {})
        others = sorted(n for n in named if n != ref.get("sectionName"))
        if "sectionName" not in ref or not others:
            continue
        # The listener `_enrich` gave a policy of its own, more often than not.
        other = "https-1" if "https-1" in others and rng.random() < 0.6 else rng.choice(others)
        hostnames = route["spec"].get("hostnames")
        if rng.random() < 0.5:
            ref["sectionName"] = other
            if hostnames and named[other]:
                route["spec"]["hostnames"] = [named[other]]
            return "reattach"
        route["spec"]["parentRefs"].append({**ref, "sectionName": other})
        if hostnames and named[other]:
            hostnames.append(named[other])
        return "attach to one more"
    return "reattach (none)"


def _enrich(files: dict[str, list[dict[str, Any]]], rng: random.Random) -> None:
    """Contexts the generated corpora lack: Services whose TLS policy targets them whole (contexts
    end at a backend), and a Gateway's traffic policy copied onto one of its listeners, which
    admits the routes of its namespace (a rule reached through two listeners then has two
    effective specs once a route attaches to both)."""
    for docs in list(files.values()):
        for doc in list(docs):
            if doc["kind"] == "Gateway" and isinstance(doc.get("spec"), dict):
                # Routes of the Gateway's own namespace may attach to that listener too.
                for listener in doc["spec"].get("listeners") or ():
                    if listener.get("name") == "https-1":
                        listener.pop("allowedRoutes", None)
            refs = doc.get("spec", {}).get("targetRefs") if isinstance(doc.get("spec"), dict) else None
            if not refs:
                continue
            if doc["kind"] == "BackendTLSPolicy" and rng.random() < 0.5:
                refs[0].pop("sectionName", None)
            elif doc["kind"] == "BackendTrafficPolicy" and refs[0].get("kind") == "Gateway" and "sectionName" not in refs[0]:
                copied = copy.deepcopy(doc)
                copied["metadata"]["name"] += "-listener"
                copied["spec"]["targetRefs"][0]["sectionName"] = "https-1"
                copied["spec"]["timeout"] = {"http": {"requestTimeout": "7s"}}
                docs.append(copied)


def _differential(root: Path, seed: int, steps: int, n: int) -> tuple[int, int]:
    """Compare each run that plays back kept walks with one from nothing, after each random edit;
    the number of roots played back and walked again over the sequence."""
    kept = KeptWalks()
    counts = {"replayed": 0, "walked": 0}
    replay = Simulation._replay
    record = walks.Recorder.walked

    def replayed(self: Simulation, *args: Any) -> None:
        counts["replayed"] += 1
        replay(self, *args)

    def walked(self: walks.Recorder, *args: Any) -> walks.Walked:
        counts["walked"] += 1
        return record(self, *args)

    def keeping(topology: Topology, _kept: KeptWalks | None = None) -> Simulation:
        return Simulation(topology, kept)

    rng = random.Random(seed)
    files = _corpus(seed, n, isolated=seed % 2 == 0)
    _enrich(files, rng)
    root.mkdir()
    done: list[str] = []
    for step in range(steps):
        if step:
            roll = rng.random()
            if roll < 0.25:
                done.append(_policy_value(files, rng))
            elif roll < 0.5:
                done.append(_reattach(files, rng))
            else:
                done.extend(_edit(files, rng, editor=True) for _ in range(rng.randint(1, 2)))
        _write(root, files)
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(pipeline, "Simulation", keeping)
            patch.setattr(Simulation, "_replay", replayed)
            patch.setattr(walks.Recorder, "walked", walked)
            played = _outcome(root)
        assert played == _outcome(root), (seed, done)
    return counts["replayed"], counts["walked"]


@pytest.mark.parametrize("seed", [0, 1])
def test_kept_walks_give_what_a_run_from_nothing_gives_fast(tmp_path: Path, seed: int) -> None:
    replayed, walked = _differential(tmp_path / "repo", seed=seed, steps=6, n=60)
    assert replayed > 0 and walked > 0


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(6))
def test_kept_walks_give_what_a_run_from_nothing_gives(tmp_path: Path, seed: int) -> None:
    """Larger corpora, isolated tenants or tenants reaching into each other, longer sequences."""
    replayed, walked = _differential(tmp_path / "repo", seed=seed, steps=10, n=120)
    assert replayed > 0 and walked > 0


@pytest.fixture
def forgetful(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Reads that leave out which policies are attached where: a policy targeting a route of a
    Gateway whose walk was kept, added or moved in another file, goes unseen."""
    monkeypatch.setattr(simulation, "attached_keys", lambda kinds: {})
    yield


def test_the_differential_fails_when_the_reads_leave_out_the_attached_policies(tmp_path: Path, forgetful: None) -> None:
    with pytest.raises(AssertionError):
        for seed in range(4):
            _differential(tmp_path / f"repo-{seed}", seed=seed, steps=6, n=60)


def test_a_walk_is_played_back_only_where_it_reads_the_same(tmp_path: Path) -> None:
    """A second run over the same objects plays every root back; a policy added in a file of its
    own, attached to a listener of one of the two Gateways, has that Gateway walked again, and
    only it."""
    files = _corpus(3, 60, isolated=True)
    gateways = sorted(d["metadata"]["name"] for docs in files.values() for d in docs if d["kind"] == "Gateway")
    assert gateways == ["gw-00000", "gw-00001"]
    _write(tmp_path, files)
    kept = KeptWalks()
    calls: list[str] = []
    replay, record = Simulation._replay, walks.Recorder.walked

    def replayed(self: Simulation, walked: walks.Walked, *args: Any) -> None:
        calls.append(f"replayed {_gateway(walked.reads)}")
        replay(self, walked, *args)

    def recorded(self: walks.Recorder, reads: tuple[walks.NodeRead, ...], *args: Any) -> walks.Walked:
        calls.append(f"walked {_gateway(reads)}")
        return record(self, reads, *args)

    def simulate() -> Simulation:
        project = pipeline.load_project(LintRequest(paths=[str(tmp_path)]))
        pipeline.build_stages(project, {Stage.TOPOLOGY})
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(Simulation, "_replay", replayed)
            patch.setattr(walks.Recorder, "walked", recorded)
            return Simulation(project.topology(), kept)

    simulate()
    assert calls == ["walked gw-00000", "walked gw-00001"]
    calls.clear()
    simulate()
    assert calls == ["replayed gw-00000", "replayed gw-00001"]
    calls.clear()
    # The other Gateway's listener policy, copied over to a listener of this one.
    copied = copy.deepcopy(
        next(d for docs in files.values() for d in docs if d["metadata"]["name"] == "gw-00000-https-14-keepalive")
    )
    copied["metadata"].update(name="added", namespace="tenant-00001")
    copied["spec"]["targetRefs"][0].update(name="gw-00001", sectionName="https-1")
    files["added.yaml"] = [copied]
    _write(tmp_path, files)
    simulate()
    assert calls == ["replayed gw-00000", "walked gw-00001"]


def _gateway(reads: tuple[walks.NodeRead, ...]) -> str:
    return next(node[1].name for node, _, _ in reads if node[0] == "gateway")


def test_a_route_attached_to_one_more_listener_after_its_own_has_its_gateway_walked_again(tmp_path: Path) -> None:
    """The nodes below the Gateway are the same, met in the same order (the route is met below
    its first listener, and not again): only the children each node has tell the walks apart."""
    files = _corpus(0, 60, isolated=True)
    _enrich(files, random.Random(0))
    kept = KeptWalks()

    def played() -> str:
        _write(tmp_path, files)
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(pipeline, "Simulation", lambda topology, _kept=None: Simulation(topology, kept))
            return _outcome(tmp_path)

    played()
    route = next(
        d
        for docs in files.values()
        for d in docs
        if d["kind"] == "HTTPRoute" and (d["metadata"]["namespace"], d["metadata"]["name"]) == ("tenant-00000", "catalog-1-route")
    )
    assert route["spec"]["parentRefs"] == [{"name": "gw-00000", "sectionName": "https-1"}]
    route["spec"]["parentRefs"].append({"name": "gw-00000", "sectionName": "http-15"})
    route["spec"]["hostnames"].append("checkout-15.tenant-00000.example.com")
    assert played() == _outcome(tmp_path)
