"""The pipeline builds its stages in order, only those asked for, and no module imports in a cycle.

Every rule declares the stages it reads besides the index (`Rule.reads`, policylint.stages).
Each rule is run here alone, by the pipeline itself (not tests.lintutil, which builds every
stage for inspection), over repositories that exercise every family: it must neither fail
(a read of an undeclared stage is PL000) nor make the pipeline build more than it declared.
"""

from __future__ import annotations

import ast
import functools
import sys
from pathlib import Path

import pytest
import yaml

from policylint.pipeline import LintRequest, lint
from policylint.project import Project
from policylint.rules import REGISTRY
from policylint.rules.base import Rule
from policylint.rules.engine import INTERNAL_ERROR, Selection
from policylint.stages import ORDER, Stage, closure
from tests import package_trees
from tests.lintutil import ROOT, declared, fixture_dirs
from tests.rules.test_rule_fixtures import materialise

CORPORA = [ROOT / "examples", ROOT / "tests" / "data" / "multi-namespace"]


def _built(project: Project) -> set[Stage]:
    return {stage for stage in ORDER if project.has_stage(stage)}


@pytest.mark.parametrize("rule", REGISTRY, ids=lambda r: r.id)
def test_each_rule_runs_with_exactly_the_stages_it_declares(rule: type[Rule]) -> None:
    for corpus in CORPORA:
        result = lint(LintRequest(paths=[str(corpus)], selection=Selection(select=(rule.id,)), cache_dir=None))
        assert [f.message for f in result.findings if f.rule == INTERNAL_ERROR] == [], corpus
        assert not result.internal_error
        assert _built(result.project) == set(closure(rule.reads)), corpus


def test_the_declared_stages_are_needed_where_a_rule_reads_them() -> None:
    # Over-declaring costs only time, but the families that read a stage must say so: the
    # effective-policy rules read the simulation, attachment and handshake rules the topology.
    families = {r.id[:3]: set() for r in REGISTRY}  # type: dict[str, set[Stage]]
    for r in REGISTRY:
        families[r.id[:3]] |= set(r.reads)
    assert families["PL6"] == {Stage.SIMULATION}
    assert families["PL4"] == {Stage.TOPOLOGY}
    # The schema family reads the admission verdicts; PL704 the topology too (which is after them).
    assert families["PL7"] == {Stage.ADMISSION, Stage.TOPOLOGY}
    assert families["PL2"] == families["PL3"] == families["PL1"] == families["PL5"] == set()


@pytest.mark.slow  # a 10k-object corpus
def test_select_pl2_on_a_10k_object_corpus_does_no_simulation_work(tmp_path: Path) -> None:
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        from generate import write_corpus  # benchmarks/ holds scripts, not a package
    finally:
        sys.path.remove(str(ROOT / "benchmarks"))
    write_corpus(10_000, tmp_path)
    narrow = lint(LintRequest(paths=[str(tmp_path)], selection=Selection(select=("PL2",)), cache_dir=None))
    assert len(narrow.index.objects) >= 10_000
    assert _built(narrow.project) == set()
    assert {f.rule for f in narrow.findings} <= {r.id for r in REGISTRY if r.id.startswith("PL2")}
    # The JSON report's policy section reads the simulation: asking for it builds it.
    report = lint(LintRequest(paths=[str(tmp_path)], selection=Selection(select=("PL2",)), cache_dir=None, report_policies=True))
    assert _built(report.project) == {Stage.ADMISSION, Stage.TOPOLOGY, Stage.SIMULATION}
    assert [f.line for f in report.findings] == [f.line for f in narrow.findings]


# -- the import graph ----------------------------------------------------------------------


def _runtime_imports(tree: ast.Module, module: str) -> set[str]:
    """Modules of the package `module` imports when it runs: function-level imports count,
    `if TYPE_CHECKING:` blocks do not (annotations only)."""
    out: set[str] = set()

    def visit(node: ast.AST) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and "TYPE_CHECKING" in ast.unparse(child.test):
                for sub in child.orelse:
                    visit(sub)
                continue
            if isinstance(child, ast.ImportFrom):
                base = child.module or ""
                if child.level:
                    parent = module.rsplit(".", child.level)[0]
                    base = f"{parent}.{base}" if base else parent
                if base.startswith("policylint"):
                    out.add(base)
                    out.update(f"{base}.{a.name}" for a in child.names)
            elif isinstance(child, ast.Import):
                out.update(a.name for a in child.names if a.name.startswith("policylint"))
            visit(child)

    visit(tree)
    return out


@functools.cache  # read, never changed: worked out once per process, not once per test
def _graph() -> dict[str, set[str]]:
    """The package's import graph, from the trees parsed once per process (tests/package_trees.py)."""
    trees = {name: tree for name, _, tree in package_trees.modules()}
    # Importing a.b.c runs a/__init__ and a/b/__init__ too, but those are edges of their own.
    return {name: {m for m in _runtime_imports(tree, name) if m in trees and m != name} for name, tree in trees.items()}


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    out: list[list[str]] = []
    counter = 0
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            advanced = False
            for child in children:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                    advanced = True
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    out.append(sorted(component))
    return out


@pytest.mark.xdist_group(package_trees.GROUP)
def test_the_package_has_no_import_cycle() -> None:
    graph = _graph()
    # Package __init__ modules that only re-export (policylint.rules lists the rule modules)
    # are nodes like any other: a cycle through them is still a cycle.
    assert _cycles(graph) == []


def test_the_cycle_finder_finds_cycles() -> None:
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []


@pytest.mark.xdist_group(package_trees.GROUP)
def test_earlier_stages_never_import_later_ones() -> None:
    """input -> k8s -> profiles -> semantics -> project -> rules -> reporters -> commands: a module
    imports only its own stage and earlier ones (shared vocabulary modules at the top level aside)."""
    order = ["input", "k8s", "profiles", "semantics", "project", "rules", "reporters", "commands"]
    shared = {"policylint", "policylint.findings", "policylint.stages", "policylint.textsafe", "policylint.resources"}
    violations = []
    for module, imports in _graph().items():
        parts = module.split(".")
        if len(parts) < 2 or parts[1] not in order:
            continue
        rank = order.index(parts[1])
        for imported in imports:
            if imported in shared:
                continue
            other = imported.split(".")
            if len(other) >= 2 and other[1] in order and order.index(other[1]) > rank:
                violations.append(f"{module} -> {imported}")
    assert sorted(violations) == []


def test_the_index_holds_data_and_runs_no_validation() -> None:
    """The index is a data stage (objects, lookups, parse-cache keys): what the API server would
    refuse in an object is the admission stage's (policylint.k8s.admissions), which the pipeline
    builds after it. The index neither imports the code that validates, even lazily or for its
    annotations, nor keeps verdicts, a catalogue of schemas or the store of kept verdicts."""
    from policylint.k8s.index import ProjectIndex

    validation = {"policylint.k8s.admission", "policylint.k8s.admissions", "policylint.k8s.celrules", "policylint.k8s.schemawalk"}
    tree = ast.parse((ROOT / "policylint" / "k8s" / "index.py").read_text(encoding="utf-8"))
    imported = {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
    imported |= {alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names}
    assert sorted(imported & validation) == []
    index = lint(LintRequest(paths=[str(ROOT / "examples")], cache_dir=None)).index
    held = {name for name in (*vars(ProjectIndex), *vars(index)) if "admission" in name or "catalogue" in name}
    assert sorted(held) == []
    assert not hasattr(index, "verdicts")


# -- what findings sit on ----------------------------------------------------------------------


def _subject_corpora(tmp_path: Path) -> list[Path]:
    fixtures = sorted(materialise(p, tmp_path) for p in fixture_dirs(ROOT / "tests" / "rules"))
    return [*CORPORA, *fixtures]


def test_every_finding_sits_on_a_subject_its_rule_declares(tmp_path: Path) -> None:
    """Rule.subjects lets a narrower report scope skip rules: a finding outside the declaration
    would be lost there, so every finding over the examples and every rule fixture must fit it."""
    by_id = {r.id: r for r in REGISTRY}
    seen: dict[str, set[str]] = {}
    for corpus in _subject_corpora(tmp_path):
        # A fixture's declared cluster (its options.yaml: PL705's and PL706's standard channel).
        options = yaml.safe_load((corpus / "options.yaml").read_text()) if (corpus / "options.yaml").is_file() else {}
        cluster = {k: v for k, v in (options or {}).items() if k in ("channel", "gateway_api_version")}
        result = lint(LintRequest(paths=[str(corpus)], cache_dir=None, **declared(cluster)))
        policies = {p.key for p in result.project.resolution.policies()}
        for f in result.findings:
            rule = by_id.get(f.rule)
            if rule is None:  # PL000: the run's own failure
                continue
            kind = f.object.kind if f.object is not None else None
            assert rule.reports_on(kind, policy=f.object in policies), (corpus.name, f.rule, kind, f.message)
            seen.setdefault(f.rule, set()).add(kind or "<file>")
    # The fixtures exercise the rules: most must have produced something to check.
    assert len(seen) >= len(REGISTRY) - 6, sorted(set(by_id) - set(seen))


def test_reports_on_reads_the_declaration() -> None:
    by_id = {r.id: r for r in REGISTRY}
    assert by_id["PL201"].reports_on("ClientTrafficPolicy", policy=True)
    assert not by_id["PL201"].reports_on("Gateway", policy=False)
    assert by_id["PL406"].reports_on("GRPCRoute", policy=False) and not by_id["PL406"].reports_on("Gateway", policy=False)
    assert by_id["PL001"].reports_on(None, policy=False) and not by_id["PL001"].reports_on("Gateway", policy=False)
    assert by_id["PL005"].reports_on("Service", policy=False)  # any object


@pytest.mark.parametrize("stage", ["admission", "topology", "simulation"])
def test_a_stage_that_fails_to_build_is_one_pl000_and_is_tried_once(stage: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """A bug in a stage costs the rules that read it (one PL000 says why), never the others'
    findings, and the stage is not built again for the rules that start before the rest."""
    from policylint.k8s import admissions
    from policylint.semantics import topology
    from policylint.semantics.effective import simulation

    owner, name = {
        "admission": (admissions.Admissions, "__init__"),
        "topology": (topology.Topology, "_build"),
        "simulation": (simulation.Simulation, "_run"),
    }[stage]
    tries: list[int] = []

    def broken(self: object, *args: object, **kwargs: object) -> None:
        tries.append(1)
        raise RuntimeError("boom")

    monkeypatch.setattr(owner, name, broken)
    result = lint(LintRequest(paths=[str(ROOT / "examples")], cache_dir=None))
    internal = [f.message for f in result.findings if f.rule == INTERNAL_ERROR]
    assert internal == [f"building the {stage} failed: RuntimeError: boom; please report this"]
    assert tries == [1]
    ran = {rule.id for rule in result.rules}
    assert "PL201" in ran and "PL601" not in ran
    assert ("PL401" in ran) == (stage == "simulation")
    assert ("PL703" in ran) == (stage != "admission")
