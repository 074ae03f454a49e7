"""The policies' admission verdicts the first rule child hands back to the main process before its
rules (`policylint.k8s.portableverdicts`, the pipeline's `_policies_verdicts`), which the topology
reads there while the child would otherwise wait for it.

A verdict read back is the one the reading process works out alone, with what working it out
records besides (the schema admits the object, the CEL cost spent); a refusal is not written; an
entry that is not what the child writes is not taken. The main process of a `--jobs 2` run works
out none of the verdicts the child handed back (counted), and its findings are one process's; a
child whose work fails, or that dies first, leaves them to the main process. The forking tests run
a fresh interpreter, which runs no other thread (a test runner's process may).
"""

from __future__ import annotations

import json
import marshal
import subprocess
import sys
from pathlib import Path

import pytest

from policylint.k8s import portableverdicts
from policylint.k8s.admissions import Admissions
from policylint.k8s.objects import K8sObject
from policylint.pipeline import LintRequest, _project
from policylint.project import Project

LINUX = sys.platform.startswith("linux")
linux_only = pytest.mark.skipif(not LINUX, reason="forks the rule processes as the command does only on Linux")
REPO = Path(__file__).resolve().parents[2]
RUN_TIMEOUT = 180.0
# The examples' two policies their CRD refuses (examples/README.md: PL107 on
# infra/https-client-limits, a CEL rule; PL203 on team-b/search-api-keys, the schema and a CEL rule).
REFUSED = {"RateLimitPolicy infra/https-client-limits", "AuthPolicy team-b/search-api-keys"}


def _built(paths: list[str]) -> tuple[Project, Admissions, list[K8sObject]]:
    project = _project(LintRequest(paths=paths))[0]
    admissions = Admissions(project.index, None)
    return project, admissions, [policy.obj for policy in project.resolution.policies()]


def _paths(corpus: str, tmp_path: Path) -> list[str]:
    if corpus == "examples":
        return [str(REPO / "examples")]
    from benchmarks.generate import write_corpus

    write_corpus(600, tmp_path, per_file=0, error_rate=0.75)
    return [str(tmp_path)]


@pytest.mark.parametrize("corpus", ["examples", "benchmark"])
def test_verdicts_read_back_are_those_worked_out_here(corpus: str, tmp_path: Path) -> None:
    """Written from one project and read by another built from the same files (as a child and its
    parent hold them), every verdict taken is the one the reader works out alone, and records what
    working it out records: that its schema admits the object, and the CEL cost spent. On the
    examples (16 policies, by hand: all but the two their CRD refuses written) and the benchmark's
    messy shape."""
    paths = _paths(corpus, tmp_path)
    writer, _, policies = _built(paths)
    data = portableverdicts.write(writer.index, None, policies)
    _, reader, read_objects = _built(paths)
    taken = portableverdicts.read(reader, data)
    assert taken == len(marshal.loads(data))
    _, alone, alone_objects = _built(paths)
    adopted = 0
    for own, other in zip(read_objects, alone_objects, strict=True):
        assert own.key == other.key
        held = reader._verdicts.get(own)
        expected = alone.verdict(other)
        if held is None:
            assert expected is None or expected.schema or expected.cel  # only what refuses nothing is written
            continue
        adopted += 1
        assert held == expected
        own_schema, other_schema = reader.catalogue.schema(own), alone.catalogue.schema(other)
        assert own_schema is not None and other_schema is not None
        number = reader.catalogue.schema_numbers(own_schema[0])
        alone_number = alone.catalogue.schema_numbers(other_schema[0])
        assert reader.catalogue.admitted[own, number] is True
        assert alone.catalogue.admitted[other, alone_number] is True
        assert reader.catalogue.cel_spent.get((own, number)) == alone.catalogue.cel_spent.get((other, alone_number))
        assert reader.verdict(own) is held
    assert adopted == taken
    if corpus == "examples":
        assert len(read_objects) == 16
        assert taken == 14
        refused = {f"{obj.kind} {obj.namespace}/{obj.name}" for obj in read_objects if obj not in reader._verdicts}
        assert refused == REFUSED
    else:
        assert taken > len(read_objects) * 0.9


def test_a_damaged_or_other_entry_is_not_taken() -> None:
    """An entry that is not what `write` writes, names no object of the index, names another schema
    than the reader's for its object, or names an object whose verdict the reader holds already is
    not taken; the reader works those verdicts out itself."""
    paths = [str(REPO / "examples")]
    writer, _, policies = _built(paths)
    entries = marshal.loads(portableverdicts.write(writer.index, None, policies))
    good = entries[0]
    place, source, given, pruned, spent = good
    bad = [
        "not a tuple",
        good[:4],
        (str(place), source, given, pruned, spent),
        (len(writer.index.objects), source, given, pruned, spent),  # past the index
        (-1, source, given, pruned, spent),
        (place, "another release v0.0.1", given, pruned, spent),  # another schema decided it there
        (place, source, 1, pruned, spent),
        (place, source, given, [list(p) for p in pruned], spent),
        (place, source, given, ((("spec",), "x", ("not", "a list")),), spent),
        (place, source, given, pruned, 1.5),
    ]
    _, reader, _ = _built(paths)
    for entry in bad:
        assert portableverdicts.read(reader, marshal.dumps([entry])) == 0, entry
    assert portableverdicts.read(reader, b"not marshal data") == 0
    assert portableverdicts.read(reader, marshal.dumps({"not": "a list"})) == 0
    assert not reader._verdicts
    assert portableverdicts.read(reader, marshal.dumps([good])) == 1
    assert portableverdicts.read(reader, marshal.dumps([good])) == 0  # held already


_LINT = """\
import json, os, sys
from policylint import pipeline
from policylint.k8s import admission, portableverdicts
from policylint.pipeline import LintRequest, lint
from policylint.rules import workers

mode = sys.argv[1]
parent = os.getpid()
worked = []
real = admission.admit

def counted(admissions, obj):
    if os.getpid() == parent and obj.kind.endswith("Policy"):
        worked.append(f"{obj.kind} {obj.namespace}/{obj.name}")
    return real(admissions, obj)

admission.admit = counted
workers.MIN_OBJECTS = 0  # the examples are fewer objects than a fork pays for
pipeline.effective_jobs = lambda jobs: jobs
if mode == "fails":
    def failing(index, kept, objects):
        raise RuntimeError("the child's work fails")
    portableverdicts.write = failing
if mode == "dies":
    def dying(index, kept, objects):
        os._exit(5)
    portableverdicts.write = dying
result = lint(LintRequest(paths=["examples"], jobs=int(sys.argv[2])))
print(json.dumps([sorted(worked), [f.fingerprint for f in result.findings]]))
"""


def _lint(mode: str, jobs: int) -> tuple[list[str], list[str]]:
    proc = subprocess.run(
        [sys.executable, "-c", _LINT, mode, str(jobs)], capture_output=True, text=True, timeout=RUN_TIMEOUT, cwd=REPO, check=False
    )
    assert proc.returncode == 0, proc.stderr
    worked, fingerprints = json.loads(proc.stdout)
    return worked, fingerprints


@linux_only
def test_the_main_process_works_out_only_the_refusals_the_child_did_not_hand_back() -> None:
    """With two jobs the first child works out the policies' verdicts before its rules and hands
    back those that refuse nothing: this process works out only the examples' two refusals (one
    process works out all 16, each once), and the findings are one process's. A child whose work
    fails, or that dies before writing it, leaves this process to work them all out, with the same
    findings."""
    one_worked, one = _lint("plain", 1)
    assert len(one_worked) == len(set(one_worked)) == 16
    assert _lint("plain", 2) == (sorted(REFUSED), one)
    assert _lint("fails", 2) == (one_worked, one)
    assert _lint("dies", 2) == (one_worked, one)  # its rules too, run here


_NO_POLICIES = """\
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata:
  name: eg
spec:
  controllerName: gateway.envoyproxy.io/gatewayclass-controller
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata:
  name: gw
  namespace: infra
spec:
  gatewayClassName: eg
  listeners:
    - name: http
      protocol: HTTP
      port: 80
      bogus: 1
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata:
  name: r
  namespace: infra
spec:
  parentRefs:
    - name: gw
  rules:
    - backendRefs:
        - name: svc
          port: 80
      unknownField: x
"""

_FINDINGS = """\
import json, sys
from policylint import pipeline
from policylint.pipeline import LintRequest, lint
from policylint.rules import workers

workers.MIN_OBJECTS = 0
pipeline.effective_jobs = lambda jobs: jobs
result = lint(LintRequest(paths=[sys.argv[1]], jobs=int(sys.argv[2])))
print(json.dumps([[f.rule, f.fingerprint] for f in result.findings]))
"""


@linux_only
def test_a_child_that_asks_for_the_first_verdict_works_it_out_itself(tmp_path: Path) -> None:
    """With no policy, the topology asks for no verdict before the topology's rules are forked,
    and the first to ask is one of their children, which holds a copy of the pool whose hand-back
    descriptors are closed there: it works the verdicts out itself, and the findings are one
    process's (on the tree before this fix, PL702 failed there: a PL000 "Bad file descriptor").
    By hand: the two fields no schema defines, `bogus` on the listener and `unknownField` on the
    route's rule, are PL702's."""
    (tmp_path / "a.yaml").write_text(_NO_POLICIES, encoding="utf-8")
    found = []
    for jobs in (1, 2):
        proc = subprocess.run(
            [sys.executable, "-c", _FINDINGS, str(tmp_path), str(jobs)],
            capture_output=True,
            text=True,
            timeout=RUN_TIMEOUT,
            cwd=REPO,
            check=False,
        )
        assert proc.returncode == 0, proc.stderr
        found.append(json.loads(proc.stdout))
    assert found[1] == found[0]
    rules = [rule for rule, _ in found[0]]
    assert rules.count("PL702") == 2
    assert "PL000" not in rules


_POOL = """\
import json, os, sys
from policylint.rules import workers

class Rule:
    def __init__(self, rule_id):
        self.id = rule_id
        self.per_object = False

from tests.poolstub import Project

def run_units(units):
    return {(rule.id, share): ([[rule.id, os.getpid()]], None) for rule, share in units}

def failing():
    raise RuntimeError("this part's work fails")

parts = [lambda: b"first", failing, lambda: bytes(range(256)) * 4096]
pool = workers.start(Project(), [Rule("PL101"), Rule("PL102")], run_units, 2, handback=parts)
assert pool is not None
got = [pool.handed_back(2), pool.handed_back(0), pool.handed_back(1), pool.handed_back(0), pool.handed_back(3)]
pool.finish([], run_units)
print(json.dumps([g if g is None else len(g) for g in got]))
"""


@linux_only
def test_each_part_of_a_hand_back_is_read_on_its_own() -> None:
    """The child works the parts out in order, each written on its own: this process reads any
    part, in any order, once; a part whose work fails reads as nothing and leaves the others."""
    proc = subprocess.run(
        [sys.executable, "-c", _POOL], capture_output=True, text=True, timeout=RUN_TIMEOUT, cwd=REPO, check=False
    )
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == [256 * 4096, 5, None, None, None]
