"""What the effective-policy simulation works out, counted: the walk shares what a child does not
change and goes into no backend where no context can end, a listener owner's listeners and routes
are read once, a stack already in order is not sorted, the values of a facet are listed once for
all the stacks that hold it, and the questions about one policy on one target work out only what
they read (policylint.semantics.effective.simulation, owners, folds, fold, queries;
docs/performance.md "The simulation, positions and the report, done once", "The simulation's and
the topology's own time, by cause")."""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from benchmarks.generate import write_corpus
from policylint.semantics.effective import fold as fold_module
from policylint.semantics.effective import folds as folds_module
from policylint.semantics.effective import simulation as simulation_module
from policylint.semantics.effective.facets import RANK, NodeKey, node_label
from policylint.semantics.effective.simulation import Simulation
from policylint.semantics.effective.states import CONTRIBUTES
from tests.lintutil import lint_paths, lint_text
from tests.simulation.test_effective import CLASS, GW, GW_ROUTE_KINDS, color, gateway, lint_here, profile, route, service


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


# One route, two rules: `secure` reaches a Service port a BackendTLSPolicy targets, `plain`
# another Service no policy reaches.
_TLS_PORT = """\
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: envoy}
spec: {controllerName: gateway.envoyproxy.io/gatewayclass-controller}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: g, namespace: apps}
spec:
  gatewayClassName: envoy
  listeners: [{name: http, protocol: HTTP, port: 80}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: r, namespace: apps}
spec:
  parentRefs: [{name: g}]
  rules:
  - name: secure
    backendRefs: [{name: tls-svc, port: 443}]
  - name: plain
    backendRefs: [{name: web, port: 80}]
---
apiVersion: v1
kind: Service
metadata: {name: tls-svc, namespace: apps}
spec: {ports: [{name: https, port: 443}]}
---
apiVersion: v1
kind: Service
metadata: {name: web, namespace: apps}
spec: {ports: [{name: http, port: 80}]}
---
apiVersion: gateway.networking.k8s.io/v1
kind: BackendTLSPolicy
metadata: {name: tls, namespace: apps}
spec:
  targetRefs: [{group: "", kind: Service, name: tls-svc, sectionName: https}]
  validation: {wellKnownCACertificates: System, hostname: tls-svc.apps.svc}
"""


def _walked(monkeypatch: pytest.MonkeyPatch) -> list[tuple[tuple[NodeKey, ...], dict[tuple[str, str], Any]]]:
    walked: list[tuple[tuple[NodeKey, ...], dict[tuple[str, str], Any]]] = []
    original = Simulation._walk

    def recording(self: Simulation, path: tuple[NodeKey, ...], stacks: Any, *rest: Any) -> None:
        walked.append((path, stacks))
        original(self, path, stacks, *rest)

    monkeypatch.setattr(Simulation, "_walk", recording)
    return walked


def _idle(sim: Simulation, walked: list[tuple[tuple[NodeKey, ...], dict[tuple[str, str], Any]]]) -> list[tuple[NodeKey, ...]]:
    """The walks into a backend or port with no policy along the path, on it or on its ports."""
    hooked = {node for attached in sim._by_kind.values() for node in attached}
    return [
        path
        for path, stacks in walked
        if path[-1][0] in ("backend", "port")
        and not any(stacks.values())
        and not any(node in hooked for node in path if node[0] in ("backend", "port"))
    ]


def test_a_backend_where_no_context_can_end_is_not_walked_into(corpus: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Below a rule only the kinds whose contexts end at a backend or a port go on (a
    BackendTLSPolicy's): where none of them has a policy along the path, on the backend or on its
    ports, no context ends there, and the walk does not go into it (of the 1,289 walks over this
    corpus, 477 went into such backends and ports)."""
    walked = _walked(monkeypatch)
    sim = lint_paths([str(corpus)]).project.simulation()
    assert any(gk[1] == "BackendTLSPolicy" for gk in sim._by_kind)  # the kind reaches backends
    assert len(walked) > 100
    assert _idle(sim, walked) == []


def test_a_backend_port_with_a_policy_is_walked_into(monkeypatch: pytest.MonkeyPatch) -> None:
    """The Service port a BackendTLSPolicy targets is walked into, and its context found there;
    the other rule's backend, which nothing reaches, is not, and is still counted as reached."""
    walked = _walked(monkeypatch)
    sim = lint_text(_TLS_PORT).project.simulation()
    assert _idle(sim, walked) == []
    (group,) = [g for g in sim.stack_groups() if g.profile.kind == "BackendTLSPolicy"]
    assert group.count == 1
    assert [node_label(node) for node in group.examples[0]] == [
        "envoy",
        "apps/g",
        "apps/g#http",
        "apps/r",
        "apps/r#secure",
        "apps/tls-svc",
        "apps/tls-svc#https",
    ]
    assert [path[-1][0] for path, _ in walked].count("port") == 1
    # No context of its own for the policy: its port was reached from the Gateway.
    (policy,) = [p for p in sim.resolution.policies() if p.obj.name == "tls"]
    (target,) = sim.resolution.targets(policy)
    status = sim.target_status(policy, target)
    assert status is not None and status.contexts == 1 and status.enforced == 1


def test_a_listener_owner_s_listeners_and_routes_are_read_once(corpus: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A listener node names its listener by the owner's key and the listener's name: the
    owner's listeners are read by name, and its routes by listener, once per owner, not once per
    listener it has (a Gateway of 32 listeners read them 33 times)."""
    result = lint_paths([str(corpus)])
    topology = result.project.topology()
    listeners_asked: Counter[int] = Counter()
    routes_asked: Counter[int] = Counter()
    original_listeners, original_routes = type(topology).listeners, type(topology).routes_of

    def listeners(self: Any, owner: Any) -> Any:
        listeners_asked[id(owner)] += 1
        return original_listeners(self, owner)

    def routes_of(self: Any, owner: Any) -> Any:
        routes_asked[id(owner)] += 1
        return original_routes(self, owner)

    monkeypatch.setattr(type(topology), "listeners", listeners)
    monkeypatch.setattr(type(topology), "routes_of", routes_of)
    monkeypatch.setattr(type(topology), "routes_on", lambda self, listener: pytest.fail("routes asked per listener"))
    sim = Simulation(topology)
    gateways = topology.gateways()
    assert len(gateways) > 3 and sum(len(topology._listeners[g]) for g in gateways) > 4 * len(gateways)
    # Once for the Gateway's children, once for its listeners by name.
    assert max(listeners_asked.values()) == 2
    assert max(routes_asked.values()) == 1
    # The same contexts as the whole run's simulation found.
    assert sorted((g.profile.kind, g.count) for g in sim.stack_groups()) == sorted(
        (g.profile.kind, g.count) for g in result.project.simulation().stack_groups()
    )


def test_a_stack_of_policies_one_per_level_is_folded_in_its_path_s_order(
    corpus: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A path's facets come top first: where each is of another policy and deeper than the one
    before (a Gateway's policy and a route's, nearly every stack), that is the order the fold
    takes, and no stack is sorted. Two policies on one level, or one policy on two nodes of the
    path, are still ordered: the second counts once, at its more specific node."""
    sorted_stacks: list[int] = []
    original = folds_module.order_stack

    def counting(facets: Any) -> Any:
        sorted_stacks.append(1)
        return original(facets)

    monkeypatch.setattr(folds_module, "order_stack", counting)
    sim = lint_paths([str(corpus)]).project.simulation()
    assert len(sim.stack_groups()) > 50
    assert sorted_stacks == []

    prof = profile(tmp_path, klass="Inherited", effective="route", default="atomic-defaults", kinds=GW_ROUTE_KINDS)
    text = CLASS + gateway("g", "http") + route("r", "g", (None, "svc")) + service("svc")
    gw_ref, route_ref = f"{{group: {GW}, kind: Gateway, name: g}}", f"{{group: {GW}, kind: HTTPRoute, name: r}}"
    text += color("both", f"{gw_ref}, {route_ref}", "color: red", "2024-01-01T00:00:00Z")
    text += color("older", gw_ref, "color: blue", "2023-01-01T00:00:00Z")
    text += color("newer", gw_ref, "color: green", "2025-01-01T00:00:00Z")
    (group,) = lint_here(tmp_path, text, prof).sim.stack_groups()
    assert [(facet.policy.obj.name, facet.node[0]) for facet in group.stack] == [
        ("older", "gateway"),
        ("newer", "gateway"),
        ("both", "route"),
    ]
    assert len(sorted_stacks) == 1


def _quiet_rule(sim: Simulation, path: tuple[NodeKey, ...], stacks: dict[tuple[str, str], Any]) -> bool:
    """A rule with no facet of its own, its route's very stacks, and no context below it: no
    facet of a kind that reaches backends along the path, none on its backends and ports."""
    rule = path[-1]
    hooked = {node for attached in sim._by_kind.values() for node in attached}
    levels = {gk: sim._level_of(gk) for gk in sim._by_kind}
    return (
        rule[0] == "rule"
        and rule not in hooked
        and all(levels[gk] >= RANK["rule"] for gk in stacks)
        and not any(stacks[gk] for gk in stacks if levels[gk] >= RANK["backend"])
        and not any(node in hooked for node in sim.children(rule))
    )


def test_rules_with_nothing_below_them_are_tallied_together_not_walked(corpus: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Most rules add no facet and no context ends below them: their contexts end at the rule
    with the route's stacks. They are tallied with their neighbours, each kind's group found once
    for them all, and not walked one by one (the tree before walked every rule: 477 of its 812
    walks over this corpus, 37 of 372 now); a rule with a policy of its own is still walked."""
    walked = _walked(monkeypatch)
    sim = lint_paths([str(corpus)]).project.simulation()
    rules = [(path, stacks) for path, stacks in walked if path[-1][0] == "rule"]
    assert rules  # the rules with a policy, or with one reaching their backends
    hooked = {node for attached in sim._by_kind.values() for node in attached}
    assert [path for path, stacks in rules if _quiet_rule(sim, path, stacks)] == []
    assert any(path[-1] in hooked for path, _ in rules)
    # Far fewer walks than the rules the contexts end at.
    ended = {path[-1] for group in sim.stack_groups() for path in group.examples if path[-1][0] == "rule"}
    assert len(rules) < len(ended)


def test_contexts_tallied_together_are_those_of_the_walk_one_by_one(corpus: Path) -> None:
    """A differential: the walk again with every context handed over one by one (as `explain`
    collects them), against the run's tallies of each distinct stack: the same stacks, each with
    as many contexts and the same first three paths, in the same order."""
    sim = lint_paths([str(corpus)]).project.simulation()
    one_by_one: dict[tuple[Any, ...], list[tuple[NodeKey, ...]]] = {}

    def collect(gk: tuple[str, str], path: tuple[NodeKey, ...], raw_stack: tuple[Any, ...]) -> None:
        one_by_one.setdefault(raw_stack, []).append(path)

    sim._visit = collect
    try:
        sim._run()
    finally:
        sim._visit = sim._emit
    assert list(one_by_one) == list(sim._groups)
    for raw_stack, group in sim._groups.items():
        paths = one_by_one[raw_stack]
        assert group.count == len(paths)
        assert group.examples == paths[:3]
    assert sum(group.count for group in sim._groups.values()) > 3 * len(sim._groups)


def test_the_blast_radii_are_counted_when_first_asked_for(corpus: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A run whose output shows no blast radius (no policies section: the text report, the hook)
    counts none: every policy's reach is still held after the run. The first question counts each
    reach once and lets go of them, the counts those of the differential below; a run with the
    JSON report's policies section counts each reach once, before its rules run."""
    from policylint.pipeline import LintRequest, lint
    from policylint.semantics.effective import walkplan

    counted: list[object] = []

    def counting(affects: Any, reach: Any, below: Any) -> None:
        counted.append(reach)
        walkplan.count_reach(affects, reach, below)

    monkeypatch.setattr(simulation_module, "count_reach", counting)
    sim = lint(LintRequest(paths=[str(corpus)])).project.simulation()
    assert counted == []
    held = len(sim._reach)
    assert held > 20
    policy = next(p for p in sim.resolution.policies() if p.obj in sim._reach)
    assert sim.policy_affects(policy).contexts > 0
    assert len(counted) == held and not sim._reach and not sim._backends_below and not sim._children
    sim.policy_affects(policy)
    assert len(counted) == held
    counted.clear()
    reported = lint(LintRequest(paths=[str(corpus)], report_policies=True))
    assert len(counted) == held and not reported.project.simulation()._reach
    assert reported.policy_reports is not None
    by_place = {(p["file"], p["line"]): p["affects"] for p in reported.policy_reports}
    assert by_place[(policy.obj.doc.file, policy.obj.doc.line)] == sim.policy_affects(policy).counts()


def test_a_run_no_one_asks_for_blast_radii_lets_them_go_before_its_rules(corpus: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A run of the command (no caller after it) whose output shows no blast radius (no policies
    section: the text report, the hook) and whose PL608 is off counts none, and lets go of the
    reaches and the hierarchy's tables before its rules run, not at its end. Asked after all, the
    simulation walks the hierarchy again, once, and counts each reach of that walk once: the counts
    of the JSON report's policies section. With PL608's max-affected set, or a caller that may ask
    after the run (the library's default), the reaches are counted or held as before."""
    from policylint import pipeline
    from policylint.pipeline import LintRequest, lint
    from policylint.semantics.effective import walkplan

    counted: list[object] = []
    walks: list[Simulation] = []
    at_rules: list[tuple[int, int, int, bool]] = []

    def counting(affects: Any, reach: Any, below: Any) -> None:
        counted.append(reach)
        walkplan.count_reach(affects, reach, below)

    real_run, real_walk = pipeline.engine.run, Simulation._run

    def run(project: Any, *args: Any, **kwargs: Any) -> Any:
        sim = project.simulation()
        at_rules.append((len(sim._reach), len(sim._children), len(sim._backends_below), sim._radii_pending))
        return real_run(project, *args, **kwargs)

    def walk(self: Simulation, *args: Any, **kwargs: Any) -> None:
        walks.append(self)
        real_walk(self, *args, **kwargs)

    monkeypatch.setattr(simulation_module, "count_reach", counting)
    monkeypatch.setattr(pipeline.engine, "run", run)
    monkeypatch.setattr(Simulation, "_run", walk)

    reported = lint(LintRequest(paths=[str(corpus)], report_policies=True, radii_after_run=False))
    held = len(counted)
    assert held > 20 and at_rules == [(0, 0, 0, False)] and len(walks) == 1
    assert reported.policy_reports is not None
    by_place = {(p["file"], p["line"]): p["affects"] for p in reported.policy_reports}

    counted.clear(), walks.clear(), at_rules.clear()
    sim = lint(LintRequest(paths=[str(corpus)], radii_after_run=False)).project.simulation()
    assert counted == [] and len(walks) == 1
    assert at_rules == [(0, 0, 0, False)]  # let go before the rules, uncounted
    policies = [p for p in sim.resolution.policies() if (p.obj.doc.file, p.obj.doc.line) in by_place]
    assert len(policies) == len(by_place)
    assert all(sim.policy_affects(p).counts() == by_place[(p.obj.doc.file, p.obj.doc.line)] for p in policies)
    assert len(counted) == held and len(walks) == 2  # one walk again, each of its reaches once
    assert sum(sim.policy_affects(p).contexts > 0 for p in policies) > 20
    assert len(counted) == held and len(walks) == 2  # asked again: nothing more

    counted.clear(), walks.clear(), at_rules.clear()
    limited = lint(LintRequest(paths=[str(corpus)], max_affected=10**9, radii_after_run=False))
    assert at_rules[0][0] == held and at_rules[0][3]  # held for PL608, which counts each once
    assert len(counted) == held and len(walks) == 1
    assert not any(f.rule == "PL608" for f in limited.findings)

    counted.clear(), walks.clear(), at_rules.clear()
    lint(LintRequest(paths=[str(corpus)]))  # the library's default: held for a question after the run
    assert counted == [] and len(walks) == 1
    assert at_rules[0][0] == held and at_rules[0][1] > 0 and at_rules[0][3]


def test_a_policy_s_blast_radius_is_counted_from_its_contexts(corpus: Path) -> None:
    """A differential against the count node by node: each policy's routes, rules, listeners,
    Gateways and backends are those of the paths of the contexts where it is in force (Enforced
    or PartiallyEnforced), the backends below each context's last node."""
    sim = lint_paths([str(corpus)]).project.simulation()
    one_by_one: list[tuple[tuple[str, str], tuple[NodeKey, ...], tuple[Any, ...]]] = []
    sim._visit = lambda gk, path, raw_stack: one_by_one.append((gk, path, raw_stack))
    try:
        sim._run()
    finally:
        sim._visit = sim._emit
    nodes: dict[Any, set[NodeKey]] = {}
    lasts: dict[Any, set[NodeKey]] = {}
    contexts: Counter[Any] = Counter()
    for _gk, path, raw_stack in one_by_one:
        group = sim._groups[raw_stack]
        for policy in {policy for (policy, _node), (_facets, state) in group.states if state in CONTRIBUTES}:
            nodes.setdefault(policy, set()).update(path)
            lasts.setdefault(policy, set()).add(path[-1])
            contexts[policy] += 1
    assert len(nodes) > 20
    for policy, passed in nodes.items():
        affects = sim.affects[policy]
        backends: set[NodeKey] = set()
        for last in lasts[policy]:
            backends |= sim.backends_below(last)
        assert affects.counts() == {
            "contexts": contexts[policy],
            "routes": len({node[1] for node in passed if node[0] in ("route", "rule")}),
            "rules": sum(node[0] == "rule" for node in passed),
            "listeners": sum(node[0] == "listener" for node in passed),
            "gateways": sum(node[0] == "gateway" for node in passed),
            "backends": len(backends),
        }, policy.key


def test_a_rule_s_children_are_read_from_its_route_s_nodes_not_the_hierarchy_s_table(
    corpus: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The rules the run tallies together (nearly all) have their backends read from their
    route's nodes, which gave the route's rules: none goes through the hierarchy's table
    (`Simulation.children`) on its own. Only a rule the walk goes into is asked for there (the tree
    before asked for every rule's: 477 of this corpus's rules, where 37 are walked)."""
    asked: list[NodeKey] = []
    original = Simulation._compute_children

    def counting(self: Simulation, node: NodeKey) -> list[NodeKey]:
        asked.append(node)
        return original(self, node)

    monkeypatch.setattr(Simulation, "_compute_children", counting)
    walked = _walked(monkeypatch)
    sim = lint_paths([str(corpus)]).project.simulation()
    rules_asked = [node for node in asked if node[0] == "rule"]
    rules_walked = {path[-1] for path, _ in walked if path[-1][0] == "rule"}
    ended = {path[-1] for group in sim.stack_groups() for path in group.examples if path[-1][0] == "rule"}
    assert rules_walked and len(ended) > len(rules_walked)
    assert set(rules_asked) <= rules_walked
    assert len(rules_asked) == len(set(rules_asked))  # each at most once
    # The same contexts as a simulation whose rules are all read through the table, one by one.
    one_by_one: Counter[tuple[Any, ...]] = Counter()
    sim._visit = lambda gk, path, raw_stack: one_by_one.update([raw_stack])
    try:
        sim._run()
    finally:
        sim._visit = sim._emit
    assert one_by_one == Counter({raw_stack: group.count for raw_stack, group in sim._groups.items()})
