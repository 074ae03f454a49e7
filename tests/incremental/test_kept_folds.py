"""The simulation's facets and folds kept between an editor's updates
(policylint.semantics.effective.folds): over random edit sequences of generated corpora, each
update of a workspace whose policies outlive the run gives a cold run's findings, and its part's
simulation, which took the folds of the stacks the edit left alone, explains every policy, Gateway,
route and Service of the part, and reports every policy's enforcement and blast radius, as a
simulation from nothing over the same topology does."""

from __future__ import annotations

import copy
import dataclasses
import json
import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from policylint.commands.explain import Found, explain_policy, explain_target, object_node
from policylint.pipeline import LintRequest, lint, load_project
from policylint.policy_report import policy_reports
from policylint.profiles.registry import ProfileRegistry, builtin_profiles
from policylint.project import Project
from policylint.semantics import components, resolution
from policylint.semantics.effective import folds, routes
from policylint.semantics.effective.simulation import Simulation
from policylint.semantics.resolution import Resolution
from tests.incremental.test_incremental import _corpus, _edit, _editor_workspace, _rows, _write
from tests.incremental.test_kept_walks import TARGET_KINDS, _enrich, _policy_value, _reattach


def _said(project: Project) -> str:
    """What the project's simulation decides, as one text: every policy's report and `explain`
    of every policy and of the objects contexts pass."""
    reports, failures = policy_reports(project)
    assert not failures
    out: dict[str, Any] = {"policies": [repr(report) for report in reports or ()]}
    for policy in project.resolution.policies():
        found = Found(policy.obj, None, object_node(project, policy.obj))
        out[f"policy {policy.key}"] = explain_policy(project, found, policy)
    for obj in project.index.objects:
        if obj.kind in TARGET_KINDS:
            out[f"target {obj.key}"] = explain_target(project, Found(obj, None, object_node(project, obj)))
    return json.dumps(out, sort_keys=True, default=str, indent=1)


def _from_nothing(project: Project) -> Project:
    """The same objects, policies, admissions and topology, with a simulation that keeps nothing."""
    fresh = Project(project.index, project.resolution)
    topology = project.topology()
    fresh.attach(admissions=project.admissions(), topology=topology, simulation=Simulation(topology))
    return fresh


def _differential(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, *, seed: int, steps: int, n: int) -> dict[str, int]:
    """Compare every update with a cold run (findings) and with a simulation from nothing over its
    part (reports and `explain`); how many stacks the updates' simulations took kept and folded."""
    monkeypatch.setattr(components, "MIN_OBJECTS", 0)
    counts = {"reused": 0, "fresh": 0}
    begin = folds.KeptFolds.begin

    def counted(self: folds.KeptFolds) -> None:
        counts["reused"] += self.reused
        counts["fresh"] += self.fresh
        begin(self)

    monkeypatch.setattr(folds.KeptFolds, "begin", counted)
    rng = random.Random(seed)
    files = _corpus(seed, n, isolated=seed % 2 == 0)
    _enrich(files, rng)
    texts = {name: yaml.safe_dump_all(docs, sort_keys=False) for name, docs in files.items()}
    workspace, disk = _editor_workspace(tmp_path, monkeypatch, texts)
    done: list[str] = []
    for _ in range(steps):
        before = copy.deepcopy(files)
        roll = rng.random()
        if roll < 0.3:
            done.append(_policy_value(files, rng))
        elif roll < 0.55:
            done.append(_reattach(files, rng))
        else:
            done.append(_edit(files, rng, editor=True))
        changed = {
            name: yaml.safe_dump_all(files[name], sort_keys=False) if name in files else ""
            for name in sorted(set(before) | set(files))
            if before.get(name) != files.get(name)
        }
        for name, text in changed.items():
            texts[name] = text
            result = workspace.update(name, text).result
            # The part's project; a part that was everything is the run's.
            analysed = result.analysed if result.analysed is not None else result.project
            assert _said(analysed) == _said(_from_nothing(analysed)), (seed, done)
            cold = _cold(texts, disk, monkeypatch, tmp_path / "editor")
            assert _rows(result.findings) == _rows(cold), (seed, done)
    return counts


def _cold(texts: dict[str, str], disk: Path, monkeypatch: pytest.MonkeyPatch, back: Path) -> list[Any]:
    for stale in disk.glob("*.yaml"):
        stale.unlink()
    for name, text in texts.items():
        (disk / name).write_text(text, encoding="utf-8")
    monkeypatch.chdir(disk)
    try:
        return lint(LintRequest(paths=["."])).findings
    finally:
        monkeypatch.chdir(back)


@pytest.mark.parametrize("seed", [0, 1])
def test_kept_folds_give_what_a_simulation_from_nothing_gives_fast(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, seed: int
) -> None:
    counts = _differential(tmp_path, monkeypatch, seed=seed, steps=6, n=60)
    assert counts["reused"] > 0 and counts["fresh"] > 0, counts


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(2, 6))
def test_kept_folds_give_what_a_simulation_from_nothing_gives(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, seed: int) -> None:
    """Larger corpora, isolated tenants or tenants reaching into each other, longer sequences."""
    counts = _differential(tmp_path, monkeypatch, seed=seed, steps=10, n=120)
    assert counts["reused"] > 0 and counts["fresh"] > 0, counts


def test_an_update_folds_only_the_stacks_of_the_edited_policies(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The objects of the edited file are new instances, so are its policies: the stacks holding
    its policy are folded again (its new value in force), every other stack of the part is the
    last update's, whether the edit changed the policy's value or added a comment."""
    monkeypatch.setattr(components, "MIN_OBJECTS", 0)
    files = _corpus(3, 60, isolated=True)
    texts = {name: yaml.safe_dump_all(docs, sort_keys=False) for name, docs in files.items()}
    workspace, _ = _editor_workspace(tmp_path, monkeypatch, texts)
    runs: list[Simulation] = []
    real = Simulation.__init__

    def simulate(self: Simulation, topology: Any, walks: Any = None) -> None:
        real(self, topology, walks)
        runs.append(self)

    monkeypatch.setattr(Simulation, "__init__", simulate)
    # A file holding one route's traffic policy: the stacks of the other routes do not hold it.
    name, policy = next(
        (name, docs[0]) for name, docs in sorted(files.items()) if [d["kind"] for d in docs] == ["BackendTrafficPolicy"]
    )

    def folded(text: str) -> tuple[int, int, int]:
        """Stacks folded and reused by the update, and how many of its stacks hold the policy."""
        workspace.update(name, text)
        run = runs[-1]
        stacks = {group.stack for group in run.stack_groups()}
        holding = {stack for stack in stacks if any(f.policy.obj.name == policy["metadata"]["name"] for f in stack)}
        assert holding and len(holding) < len(stacks)
        return run._folds.fresh, run._folds.reused, len(holding)

    # The first update is a whole run, the second loads the files, the third builds the objects
    # the next ones take.
    for n in range(3):
        workspace.update(name, texts[name] + f"# {n}\n")
    fresh, reused, holding = folded(texts[name] + "# again\n")
    assert (fresh, reused) == (holding, len({g.stack for g in runs[-1].stack_groups()}) - holding)
    policy["spec"]["timeout"] = {"http": {"requestTimeout": "77s"}}
    fresh, reused, holding = folded(yaml.safe_dump_all(files[name], sort_keys=False))
    assert fresh == holding and reused > 0
    result = workspace.result
    analysed = result.analysed if result.analysed is not None else result.project
    route = next(o for o in analysed.index.objects if o.kind == "HTTPRoute" and o.name == policy["spec"]["targetRefs"][0]["name"])
    explained = json.dumps(explain_target(analysed, Found(route, None, object_node(analysed, route))))
    assert '"77s"' in explained, explained


@pytest.fixture
def stale(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Facets taken from the last run for a policy of the same name whatever its instance: a
    policy edited in place keeps its old values."""

    def facets(self: folds.KeptFolds, policy: Any, node: Any, *, claim: bool = False) -> Any:
        at = (policy.key, node, claim)
        found = self._facets.get(at) or self._old_facets.get(at)  # type: ignore[call-overload]
        if found is None:
            made = folds._claim(policy, node) if claim else None
            found = (policy, [made] if made is not None else folds.policy_facets(policy, node))
        self._facets[at] = found  # type: ignore[index]
        return found[1]

    monkeypatch.setattr(folds.KeptFolds, "facets", facets)
    yield


def test_the_differential_fails_when_facets_are_kept_by_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, stale: None
) -> None:
    with pytest.raises(AssertionError):
        for seed in range(2):
            (tmp_path / str(seed)).mkdir()
            _differential(tmp_path / str(seed), monkeypatch, seed=seed, steps=6, n=60)


@pytest.mark.slow
def test_the_differential_fails_when_policies_are_adopted_by_name(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A policy taken from the last run for an object of the same name, not the same instance: an
    edited policy keeps its old values and its old object."""
    real = resolution.Resolution._build_policies

    def build(self: resolution.Resolution) -> Any:
        by_key = {obj.key: policy for obj, policy in self._adopted.items()}
        self._adopted = {obj: by_key[obj.key] for obj in self.index.objects if obj.key in by_key}
        return real(self)

    monkeypatch.setattr(resolution.Resolution, "_build_policies", build)
    with pytest.raises(AssertionError):
        for seed in range(2):
            (tmp_path / str(seed)).mkdir()
            _differential(tmp_path / str(seed), monkeypatch, seed=seed, steps=6, n=60)


def _service_removed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A Service a route in another file sends traffic to, deleted: the route object is the one the
    updates before had, its references are not, and neither are the backends below its rules."""
    monkeypatch.setattr(components, "MIN_OBJECTS", 0)
    files = _corpus(3, 60, isolated=True)
    texts = {name: yaml.safe_dump_all(docs, sort_keys=False) for name, docs in files.items()}
    workspace, _ = _editor_workspace(tmp_path, monkeypatch, texts)
    where = {
        (d["metadata"].get("namespace"), d["metadata"]["name"]): name
        for name, docs in files.items()
        for d in docs
        if d["kind"] == "Service"
    }
    name, service = next(
        (where[(d["metadata"]["namespace"], ref["name"])], ref["name"])
        for route_file, docs in sorted(files.items())
        for d in docs
        if d["kind"] == "HTTPRoute"
        for rule in d["spec"].get("rules") or ()
        for ref in rule.get("backendRefs") or ()
        if where.get((d["metadata"]["namespace"], ref["name"]), route_file) != route_file
    )
    for n in range(4):  # until the objects of the other files are kept (see above)
        workspace.update(name, texts[name] + f"# {n}\n")
    files[name] = [d for d in files[name] if not (d["kind"] == "Service" and d["metadata"]["name"] == service)]
    result = workspace.update(name, yaml.safe_dump_all(files[name], sort_keys=False)).result
    analysed = result.analysed if result.analysed is not None else result.project
    said = _said(analysed)
    assert _said(_from_nothing(analysed)) == said


def test_a_route_whose_service_is_deleted_in_another_file_reaches_it_no_more(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _service_removed(tmp_path, monkeypatch)


def test_it_fails_when_a_route_nodes_are_kept_by_the_route_alone(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Its rules' backends taken from the last run whatever the references resolved to now."""

    def nodes(self: routes.KeptRouteNodes, topology: Any, route: Any) -> routes.RouteNodes:
        found = self._routes.get(route.key)
        if found is None or found.route is not route:
            found = self._routes[route.key] = routes._nodes(topology, route, topology.refs_from(route), None)
        return found

    monkeypatch.setattr(routes.KeptRouteNodes, "nodes", nodes)
    with pytest.raises(AssertionError):
        _service_removed(tmp_path, monkeypatch)


def test_it_fails_when_references_handed_on_anew_are_not_compared(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """References the topology resolved again (a new list) taken as the same, whatever they say."""
    monkeypatch.setattr(routes, "_read", lambda refs: ())
    with pytest.raises(AssertionError):
        _service_removed(tmp_path, monkeypatch)


def test_a_policy_is_adopted_only_for_the_same_object_with_its_kind_s_profile(tmp_path: Path) -> None:
    """A policy is a function of its object and its kind's profile: the last run's is taken for the
    same object under the same profile, or an equal one made again, and built anew under another."""
    _write(tmp_path, _corpus(3, 60, isolated=True))
    project = load_project(LintRequest(paths=[str(tmp_path)]))
    before = project.resolution.policies()
    kept = project.resolution.built_policies()
    assert before and kept == {p.obj: p for p in before}
    profiles = project.resolution.profiles
    kind = before[0].profile

    def adopted(registry: ProfileRegistry) -> list[bool]:
        again = Resolution(project.index, registry)
        again.adopt_policies(kept)
        return [policy is kept[policy.obj] for policy in again.policies() if policy.profile.gk == kind.gk]

    assert all(adopted(profiles))
    equal = ProfileRegistry([[dataclasses.replace(kind)], builtin_profiles()])
    assert all(adopted(equal))
    level = "listener" if kind.effective_target != "listener" else "route"
    other = ProfileRegistry([[dataclasses.replace(kind, effective_target=level)], builtin_profiles()])
    assert adopted(other) and not any(adopted(other))
