"""What the effective-policy simulation works out, counted: the walk shares what a child does not
change, the values of a facet are listed once for all the stacks that hold it, and the questions
about one policy on one target work out only what they read (policylint.semantics.effective.simulation,
fold, queries; docs/performance.md "The simulation, positions
and the report, done once")."""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from benchmarks.generate import write_corpus
from policylint.semantics.effective import fold as fold_module
from policylint.semantics.effective import simulation as simulation_module
from policylint.semantics.effective.facets import RANK, NodeKey
from policylint.semantics.effective.simulation import Simulation
from tests.lintutil import lint_paths
from tests.simulation.test_effective import CLASS, GW, color, gateway, lint_here, profile, route, service


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("corpus")
    write_corpus(400, out, seed=3, per_file=0, error_rate=0.3)
    return out


def test_a_child_that_adds_no_facet_walks_with_its_parents_stacks(corpus: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Most nodes below a route (its rules, their backends) have no policy of their own: their
    contexts have the stacks of their parent's, and the walk hands them the parent's very table
    instead of a copy per child. A kind whose effective level is above a node has no context
    there or below: it is not carried down at all (it was an empty stack per child)."""
    walked: dict[tuple[NodeKey, ...], dict[tuple[str, str], Any]] = {}
    original = Simulation._walk

    def recording(self: Simulation, path: tuple[NodeKey, ...], stacks: Any, *rest: Any) -> None:
        walked[path] = stacks  # held: no table's identity is reused while the test reads them
        original(self, path, stacks, *rest)

    monkeypatch.setattr(Simulation, "_walk", recording)
    result = lint_paths([str(corpus)])
    sim = result.project.simulation()
    kinds = {gk: sim._by_kind[gk] for gk in sorted(sim._by_kind)}
    levels = {gk: sim._level_of(gk) for gk in kinds}
    shared = copied = 0
    for path, stacks in walked.items():
        parent = walked.get(path[:-1])
        if parent is None:
            continue  # a root, or a port (below its backend)
        node = path[-1]
        rank = RANK[node[0]]
        expected = {gk: stack + tuple(kinds[gk].get(node, ())) for gk, stack in parent.items() if levels[gk] >= rank}
        assert stacks == expected, path
        if expected == parent:
            assert stacks is parent, path
            shared += 1
        else:
            copied += 1
    assert shared > copied > 0  # the corpus has both, and mostly the first


def test_a_policy_with_one_target_is_not_displaced_by_itself(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A policy is displaced by itself only through its own attachment to a listener or
    ListenerSet below its Gateway target: with no such target (one targetRef, as nearly every
    policy has), the Gateway's listeners are not worked out for the question. With one, the
    listener's contexts count, and no listener's routes are worked out for it."""
    prof = profile(
        tmp_path,
        klass="Inherited",
        effective="listener",
        default="atomic-defaults",
        kinds=f"{{group: {GW}, kind: Gateway}}",
    )
    text = CLASS + gateway("g", "http", "alt") + route("r", "g", (None, "svc")) + service("svc")
    text += color("one", f"{{group: {GW}, kind: Gateway, name: g}}", "color: red")
    text += color(
        "two",
        f"{{group: {GW}, kind: Gateway, name: g}}, {{group: {GW}, kind: Gateway, name: g, sectionName: alt}}",
        "color: blue",
        "2024-01-01T00:00:00Z",
    )
    run_ = lint_here(tmp_path, text, prof)
    sim, resolution = run_.sim, run_.result.project.resolution
    policies = {p.obj.name: p for p in resolution.policies()}
    asked: list[NodeKey] = []
    original = simulation_module.Simulation.children

    def counting(self: Simulation, node: NodeKey) -> list[NodeKey]:
        asked.append(node)
        return original(self, node)

    monkeypatch.setattr(simulation_module.Simulation, "children", counting)
    one = policies["one"]
    (target,) = resolution.targets(one)
    assert sim.displaced_by_itself(one, target) == 0
    assert asked == []
    two = policies["two"]
    whole, _section = resolution.targets(two)
    # Its listener `alt` has one context (the route on it), taken by its own section attachment.
    assert sim.displaced_by_itself(two, whole) == 1
    assert [node[0] for node in asked] == ["gateway"]


def test_a_facet_s_values_are_listed_once_for_every_stack_that_holds_it(corpus: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Whether a policy's values are all in force in a folded stack compares them with what the
    fold kept: a Gateway's policy is in hundreds of stacks, and its values are listed once."""
    listed: Counter[int] = Counter()
    trees: dict[int, Any] = {}  # held: no tree's identity is reused while the test counts
    original = fold_module.leaves

    def counting(node: Any, prefix: tuple[str, ...] = ()) -> Any:
        caller = sys._getframe(1)
        # What a facet offers, listed while `_outcome` looks at that facet (not the folded spec's).
        facet = caller.f_locals.get("facet") if caller.f_code.co_name == "_outcome" else None
        if not prefix and facet is not None and facet.tree is node:
            listed[id(node)] += 1
            trees[id(node)] = node
        return original(node, prefix)

    monkeypatch.setattr(fold_module, "leaves", counting)
    result = lint_paths([str(corpus)])
    sim = result.project.simulation()
    facet_trees = {id(facet.tree) for facets in sim.facets.values() for facet in facets}
    counted = {tree: n for tree, n in listed.items() if tree in facet_trees}
    assert len(counted) > 10
    assert max(counted.values()) == 1
    # Facets shared by stacks (a Gateway's policy in every stack below it), each listed once all the same.
    assert sum(len(group.stack) for group in sim.stack_groups()) > len(counted)
