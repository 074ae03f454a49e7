"""The rule processes of `--jobs` started stage by stage (`policylint.rules.workers`,
`engine.start`, `Started.advance`): the rules that read the index alone run in a child forked
before the admissions and the topology are built, those that read no later stage in one forked
once the topology is, while this process builds the simulation. Each pool's units run once,
whoever takes them, and the findings come back as one process gives them.

The children are forked, so the tests of the pools run a fresh interpreter that runs no other
thread (a test runner's process may).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from policylint import pipeline
from policylint.pipeline import LintRequest, lint
from policylint.rules import REGISTRY, workers
from policylint.stages import Stage

LINUX = sys.platform.startswith("linux")
linux_only = pytest.mark.skipif(not LINUX, reason="forks the rule processes as the command does only on Linux")
REPO = Path(__file__).resolve().parents[2]
RUN_TIMEOUT = 180.0
SHARES = workers.SHARES_PER_PROCESS * 2  # shares of a per-object rule with two processes


class _Recorded:
    """A pool that forks nothing: `finish` runs its units and those of the earlier pools here."""

    def __init__(self, rules: Any) -> None:
        self.todo = [((rule, None),) for rule in rules]

    def finish(self, first: Any, run_units: Any, earlier: Any = ()) -> Any:
        return run_units([*first, *(unit for pool in (self, *earlier) for bundle in pool.todo for unit in bundle)])

    def handed_back(self, part: int = 0) -> None:
        return None  # no child: this process works out what one would have handed back

    def close(self) -> None:
        pass


def test_the_rules_reading_the_index_alone_start_before_the_admissions_and_the_topology(monkeypatch: pytest.MonkeyPatch) -> None:
    """The pipeline starts the rules that read no stage before it builds any, and the rules that
    read the admissions or the topology once it has built them, each in a pool of their own; the
    rules that read the simulation stay with this process. The findings are those of one process."""
    calls: list[tuple[list[str], bool, bool, int]] = []

    def start(project: Any, rules: Any, run_units: Any, jobs: int, earlier: Any = (), handback: Any = None) -> _Recorded:
        calls.append(([r.id for r in rules], project.has_stage(Stage.ADMISSION), project.has_stage(Stage.TOPOLOGY), len(earlier)))
        return _Recorded(rules)

    one = lint(LintRequest(paths=[str(REPO / "examples")]))
    monkeypatch.setattr(workers, "start", start)
    monkeypatch.setattr(pipeline, "effective_jobs", lambda jobs: 2)  # whatever CPUs this machine has
    result = lint(LintRequest(paths=[str(REPO / "examples")], jobs=2))
    assert calls == [
        ([r.id for r in REGISTRY if not r.reads and not r.after], False, False, 0),
        ([r.id for r in REGISTRY if (r.reads or r.after) and Stage.SIMULATION not in r.reads], True, True, 1),
    ]
    assert {"PL101", "PL201"} <= set(calls[0][0])
    assert {"PL702", "PL704", "PL401"} <= set(calls[1][0])
    # PL010 reads the index alone, and starts with the later pool, whose children inherit every
    # object's field types from the topology (`Rule.after`).
    assert "PL010" in calls[1][0]
    assert [f.fingerprint for f in result.findings] == [f.fingerprint for f in one.findings]
    assert len(result.findings) > 10


_SUPPRESSED = """\
apiVersion: v1
kind: ConfigMap
metadata:
  name: settings
--- # policylint: disable-next-line=PL003 -- the chart's values, read by the templates
{a: 1}
"""


def test_the_files_with_suppression_comments_are_found_after_the_first_rule_process_is_forked(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Only this process reads them, for the suppressions after the rules: looked for before the
    first fork, they cost the stretch where the other CPU waits, and the child inherited them for
    nothing (docs/performance.md, "`--jobs 2`: the objects built with fewer calls before the first
    fork"). The comment still suppresses its finding, with one job and with two."""
    (tmp_path / "settings.yaml").write_text(_SUPPRESSED, encoding="utf-8")
    steps: list[str] = []
    texts_with_comments = pipeline.suppressions.texts_with_comments

    def start(project: Any, rules: Any, run_units: Any, jobs: int, earlier: Any = (), handback: Any = None) -> _Recorded:
        steps.append("fork")
        return _Recorded(rules)

    def looked_for(texts: Any) -> Any:
        steps.append("comments")
        return texts_with_comments(texts)

    one = lint(LintRequest(paths=[str(tmp_path)]))
    monkeypatch.setattr(pipeline.suppressions, "texts_with_comments", looked_for)
    monkeypatch.setattr(workers, "start", start)
    monkeypatch.setattr(pipeline, "effective_jobs", lambda jobs: 2)
    result = lint(LintRequest(paths=[str(tmp_path)], jobs=2))
    assert steps == ["fork", "comments", "fork"]
    assert [(f.rule, f.line) for f in result.suppressed] == [(f.rule, f.line) for f in one.suppressed] == [("PL003", 6)]
    assert [f.fingerprint for f in result.findings] == [f.fingerprint for f in one.findings]


def test_the_topology_works_out_the_field_types_pl010_reports(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """PL010 comes after the topology (`Rule.after`): once the admissions and the topology are
    built, they have worked out the field types of the objects they read, and the rule works out
    only the others' (the Namespaces, the GatewayClass, a Service no route names), so that a child
    forked then does not work them out again, as one forked after the index did. Counted on the
    benchmark's shape (`benchmarks/generate.py`, 400 objects, 12 of them Namespaces), against the
    rule run with no stage built, which works out every object's."""
    from benchmarks.generate import write_corpus
    from policylint.k8s import index as index_module
    from policylint.pipeline import _project, build_stages
    from policylint.rules import engine

    worked: list[str] = []
    real = index_module.check_object

    def counted(group: str, kind: str, data: Any, clean: Any) -> Any:
        worked.append(kind)
        return real(group, kind, data, clean)

    monkeypatch.setattr(index_module, "check_object", counted)
    rule = next(r for r in REGISTRY if r.id == "PL010")
    assert rule.after == {Stage.TOPOLOGY} and not rule.reads
    write_corpus(400, tmp_path, per_file=50)
    alone = _project(LintRequest(paths=[str(tmp_path)]))[0]
    found = engine._check(rule, alone)
    assert len(worked) == len(alone.index.objects) == 400
    project = _project(LintRequest(paths=[str(tmp_path)]))[0]
    assert not build_stages(project, {Stage.TOPOLOGY})
    before = len(worked)
    assert engine._check(rule, project) == found
    assert set(worked[before:]) <= {"Namespace", "GatewayClass", "Service"}
    assert len(worked) - before < 400 / 20


def _resolutions_at_each_start(monkeypatch: pytest.MonkeyPatch, jobs: int, select: str | None = None) -> tuple[list[int], int]:
    """The policies' target references resolved in this process when each pool is started, and in
    the whole run, with the pools recorded (`_Recorded`: their units run here) and a fork allowed
    whatever the number of objects."""
    from policylint.rulecodes import Selection
    from policylint.semantics.resolution import Resolution

    resolved = [0]
    resolve_target = Resolution.resolve_target

    def counted(self: Resolution, policy: Any, ref: Any) -> Any:
        resolved[0] += 1
        return resolve_target(self, policy, ref)

    at_start: list[int] = []

    def start(project: Any, rules: Any, run_units: Any, jobs: int, earlier: Any = (), handback: Any = None) -> _Recorded:
        at_start.append(resolved[0])
        return _Recorded(rules)

    monkeypatch.setattr(Resolution, "resolve_target", counted)
    monkeypatch.setattr(workers, "start", start)
    monkeypatch.setattr(workers, "MIN_OBJECTS", 0)
    monkeypatch.setattr(workers, "can_fork", lambda: True)
    monkeypatch.setattr(pipeline, "effective_jobs", lambda jobs: jobs)
    selection = Selection(select=(select,)) if select is not None else Selection()
    lint(LintRequest(paths=[str(REPO / "examples")], jobs=jobs, selection=selection))
    return at_start, resolved[0]


def test_the_policies_targets_are_resolved_before_the_topology_s_rules_are_forked(monkeypatch: pytest.MonkeyPatch) -> None:
    """The simulation and the rules resolve every policy's targets in this process: when the
    children that run the topology's rules are forked before the simulation, those are resolved
    first, so that the children inherit them rather than the first of PL403, PL404 and PL413 to run
    in each resolving them all again. The run resolves none more than one process does; one job,
    which forks nothing, and a run that builds no simulation, resolve nothing before the rules."""
    one_process, one_process_total = _resolutions_at_each_start(monkeypatch, jobs=1)
    two_jobs, two_jobs_total = _resolutions_at_each_start(monkeypatch, jobs=2)
    without_simulation, _ = _resolutions_at_each_start(monkeypatch, jobs=2, select="PL4")
    assert one_process == [0, 0]
    assert without_simulation == [0, 0]
    # The examples' 16 policies, one target reference each: the simulation asks for the 14 whose
    # controllers accept them (RateLimitPolicy https-client-limits and AuthPolicy search-api-keys
    # are rejected), the rules for all 16.
    assert two_jobs == [0, 16]
    assert two_jobs_total == one_process_total


_SCRIPT = """\
import fcntl, json, os, struct, sys, termios, time
from policylint.rules import workers

class Rule:
    def __init__(self, rule_id):
        self.id = rule_id
        self.per_object = rule_id in ("PL201", "PL301", "PL702", "PL704")

from tests.poolstub import Project

mode = sys.argv[1]
parent = os.getpid()
pools = []

def run_units(units):
    out = {}
    for rule, share in units:
        child = os.getpid() != parent
        if mode == "plain" and not child and rule.id == "PL603":
            # This process's own rule, busy until the children have taken every queued unit.
            while any(struct.unpack("i", fcntl.ioctl(q, termios.FIONREAD, bytes(4)))[0] for pool in pools for q in pool._queues.values()):
                time.sleep(0.01)
        if mode == "dies" and child and rule.id == sys.argv[2]:
            os._exit(7)  # the child dies holding the unit it took, before it sends anything
        # Whether an earlier pool's queue is open in this child (forked while its own pool was
        # being started, so `pools` holds the earlier ones): it is the main process's alone.
        inherited = []
        for pool in pools if child else []:
            held = False  # any of its queue's pipes open here
            for queue in pool._queues.values():
                try:
                    os.fstat(queue)
                    held = True
                except OSError:
                    pass
            inherited.append(held)
        out[(rule.id, share)] = ([[rule.id, share, inherited]], None)
    return out

early = [Rule("PL101"), Rule("PL201"), Rule("PL301")]
later = [Rule("PL401"), Rule("PL702"), Rule("PL704")]
pools.append(workers.start(Project(), early, run_units, 2))
pools.append(workers.start(Project(), later, run_units, 2, pools))
assert all(pool is not None for pool in pools)
own = [Rule("PL603")]  # a rule of this process's own (one that reads the simulation)
results = pools[-1].finish([(rule, None) for rule in own], run_units, pools[:-1])
print(json.dumps([r[0] for r in workers.results_in_order(early + later + own, results)]))
"""


def _run(mode: str, dies: str = "-") -> list[list[Any]]:
    proc = subprocess.run(
        [sys.executable, "-c", _SCRIPT, mode, dies], capture_output=True, text=True, timeout=RUN_TIMEOUT, cwd=REPO, check=False
    )
    assert proc.returncode == 0, proc.stderr
    result: list[list[Any]] = json.loads(proc.stdout)
    return result


def _one_process() -> list[list[Any]]:
    """What one process gives: each rule's findings, a per-object rule's share by share."""
    shares = [[k, SHARES] for k in range(SHARES)]
    return [
        [[rule, share, []] for share in shares] if rule in ("PL201", "PL301", "PL702", "PL704") else [[rule, None, []]]
        for rule in ("PL101", "PL201", "PL301", "PL401", "PL702", "PL704", "PL603")
    ]


def _without_inherited(results: list[list[Any]]) -> list[list[Any]]:
    return [[[rule, share, []] for rule, share, _ in findings] for findings in results]


@linux_only
def test_the_pools_of_two_stages_run_every_unit_once_in_rule_order() -> None:
    results = _run("plain")
    assert _without_inherited(results) == _one_process()
    # A child of the later pool never holds the earlier pool's queue open: the units there are
    # for the earlier pool's child and this process.
    inherited = [found for findings in results for _, _, found in findings]
    assert [False] in inherited
    assert all(found in ([], [False]) for found in inherited)


@linux_only
@pytest.mark.parametrize("dies", ["PL201", "PL702"], ids=["earlier-pool", "later-pool"])
def test_a_child_of_either_stage_that_dies_costs_only_time(dies: str) -> None:
    # The child dies holding a unit: that unit, and whatever that child took, run here, once each.
    results = _run("dies", dies)
    assert _without_inherited(results) == _one_process()
