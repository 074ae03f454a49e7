"""What the first rule child hands back to the main process before its rules (`workers.start`'s
`handback`, `Pool.handed_back`): the policies' target resolutions, which its rules read first and
the simulation reads in the main process (`policylint.semantics.portable`).

A resolution read back is the one the reading process would have worked out, with its own
objects, references and sections (compared with projects built alone from the same files); the
main process of a `--jobs 2` run works out none of them itself (counted), and its findings are one
process's; a child that dies first, or whose work fails, leaves the main process to work them out,
and a hand-back larger than a pipe holds never keeps the child waiting for the reader. The forking
tests run a fresh interpreter, which runs no other thread (a test runner's process may).
"""

from __future__ import annotations

import dataclasses
import json
import marshal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from policylint.pipeline import LintRequest, _project
from policylint.semantics import portable
from policylint.semantics.grants import NOT_NEEDED, SAME_NAMESPACE, GrantCheck
from policylint.semantics.resolution import Resolution, TargetResolution

LINUX = sys.platform.startswith("linux")
linux_only = pytest.mark.skipif(not LINUX, reason="forks the rule processes as the command does only on Linux")
REPO = Path(__file__).resolve().parents[2]
RUN_TIMEOUT = 180.0


def test_every_field_of_a_resolution_is_written() -> None:
    # A field added to TargetResolution and not written would be lost on the way back.
    assert tuple(f.name for f in dataclasses.fields(TargetResolution)) == portable.FIELDS


def _resolved_alone(paths: list[str]) -> tuple[Resolution, list[tuple[Any, Any, TargetResolution]]]:
    resolution = _project(LintRequest(paths=paths))[0].resolution
    return resolution, [(p, ref, resolution.resolve_target(p, ref)) for p in resolution.policies() for ref in p.refs]


def _same(read: TargetResolution, alone: TargetResolution, reader: Resolution, other: Resolution) -> None:
    """`read`, taken by `reader`, is `alone`, which `other` worked out from the same files: the
    same values, and `reader`'s own objects and sections in the places `other`'s are."""
    assert (read.status, read.detail, read.message, read.namespace, read.selector) == (
        alone.status,
        alone.detail,
        alone.message,
        alone.namespace,
        alone.selector,
    )
    assert read.grant is alone.grant  # None, or one of the shared checks
    if alone.target is None:
        assert read.target is None
    else:
        assert read.target is not None
        place = [i for i, obj in enumerate(other.index.objects) if obj is alone.target]
        assert [i for i, obj in enumerate(reader.index.objects) if obj is read.target] == place
        assert read.target.key == alone.target.key
    if alone.section is None:
        assert read.section is None
    else:
        assert read.target is not None and read.section is not None
        assert read.section == alone.section
        assert any(read.section is s for s in reader.index.sections(read.target))


@pytest.mark.parametrize("corpus", ["examples", "benchmark"])
def test_resolutions_read_back_are_those_worked_out_here(corpus: str, tmp_path: Path) -> None:
    """Written by one project's resolution and read by another's built from the same files (as a
    child and its parent hold them), every reference's resolution is the reader's own: its
    references, objects and sections, with the values the reader works out alone. On the
    examples (16 policies, by hand: every one written) and the benchmark's messy shape."""
    if corpus == "examples":
        paths = [str(REPO / "examples")]
    else:
        from benchmarks.generate import write_corpus

        write_corpus(600, tmp_path, per_file=0, error_rate=0.75)
        paths = [str(tmp_path)]
    writer, _ = _resolved_alone(paths)
    data = portable.write(writer)
    reader = _project(LintRequest(paths=paths))[0].resolution
    assert portable.read(reader, data) == sum(e is not None for e in marshal.loads(data))
    other, alone = _resolved_alone(paths)
    taken = 0
    for (policy, _ref, expected), (own_policy, own_ref) in zip(alone, [(p, r) for p in reader.policies() for r in p.refs]):
        assert own_policy.obj.key == policy.obj.key
        adopted = reader._resolved.get((own_policy.obj, own_ref.path))
        if adopted is None:
            continue  # not written: the reader works it out
        taken += 1
        assert adopted.ref is own_ref
        _same(adopted, expected, reader, other)
        assert reader.resolve_target(own_policy, own_ref) is adopted
    if corpus == "examples":
        assert taken == len(alone) == 16
    else:
        assert taken > len(alone) * 0.9


def test_a_resolution_with_grants_or_an_object_outside_the_index_is_not_written() -> None:
    """A ReferenceGrant check that holds grants (the rules compare them by identity) and an object
    no place names are left to the reader, which works them out itself; the shared checks are
    written by identity."""
    writer, alone = _resolved_alone([str(REPO / "examples")])
    _, ref, res = alone[0]
    places = {obj: i for i, obj in enumerate(writer.index.objects)}
    index = writer.index
    assert portable._entry(res, ref, places, index) is not None
    for check in (SAME_NAMESPACE, NOT_NEEDED):
        entry = portable._entry(dataclasses.replace(res, grant=check), ref, places, index)
        assert entry is not None and portable._GRANTS[entry[6]] is check
    assert SAME_NAMESPACE is not NOT_NEEDED
    granted = GrantCheck(True, grants=())  # equal to the shared ones, not one of them
    assert granted == SAME_NAMESPACE
    assert portable._entry(dataclasses.replace(res, grant=granted), ref, places, index) is None
    outside = _project(LintRequest(paths=[str(REPO / "examples")]))[0].index.objects[0]
    assert portable._entry(dataclasses.replace(res, target=outside), ref, places, index) is None
    assert portable._entry(res, dataclasses.replace(ref), places, index) is None  # another reference


def test_a_damaged_or_other_hand_back_is_not_read() -> None:
    reader = _project(LintRequest(paths=[str(REPO / "examples")]))[0].resolution
    assert portable.read(reader, b"not marshal") == 0
    assert portable.read(reader, marshal.dumps([None] * 3)) == 0  # not one per reference
    assert portable.read(reader, marshal.dumps({"a": 1})) == 0
    # One per reference, each one that `_entry` never writes: no object at that place, no such
    # section, status or grant code, another shape. Each is worked out here.
    references = sum(len(policy.refs) for policy in reader.policies())
    bad = [
        ("ACCEPTED", "RESOLVED", 10**6, -1, "", None, 0, None),
        ("ACCEPTED", "RESOLVED", 0, 10**6, "", None, 0, None),
        ("NO_SUCH_STATUS", "RESOLVED", -1, -1, "", None, 0, None),
        ("ACCEPTED", "RESOLVED", -1, -1, "", None, 7, None),
        ("ACCEPTED", "RESOLVED"),
        "not a tuple",
    ]
    assert portable.read(reader, marshal.dumps(bad + [None] * (references - len(bad)))) == 0
    assert not reader._resolved


_LINT = """\
import json, os, sys
from policylint import pipeline
from policylint.pipeline import LintRequest, lint
from policylint.rules import workers
from policylint.semantics import portable
from policylint.semantics.resolution import Resolution

mode = sys.argv[1]
parent = os.getpid()
worked = []
real = Resolution._resolve

def counted(self, policy, ref):
    if os.getpid() == parent:
        worked.append(1)
    return real(self, policy, ref)

Resolution._resolve = counted
workers.MIN_OBJECTS = 0  # the examples are fewer objects than a fork pays for
pipeline.effective_jobs = lambda jobs: jobs
if mode == "fails":
    def failing(resolution):
        raise RuntimeError("the child's work fails")
    portable.write = failing
if mode == "dies":
    def dying(resolution):
        os._exit(5)
    portable.write = dying
result = lint(LintRequest(paths=["examples"], jobs=int(sys.argv[2])))
print(json.dumps([len(worked), [f.fingerprint for f in result.findings]]))
"""


def _lint(mode: str, jobs: int) -> tuple[int, list[str]]:
    proc = subprocess.run(
        [sys.executable, "-c", _LINT, mode, str(jobs)], capture_output=True, text=True, timeout=RUN_TIMEOUT, cwd=REPO, check=False
    )
    assert proc.returncode == 0, proc.stderr
    worked, fingerprints = json.loads(proc.stdout)
    return worked, fingerprints


@linux_only
def test_the_main_process_works_out_none_of_the_references_the_child_handed_back() -> None:
    """With two jobs the first child resolves every policy's references before its rules and hands
    them back: this process works out none of the examples' 16 (one process works out each once),
    and the findings are one process's. A child whose work fails, or that dies before writing it,
    leaves this process to work them all out, with the same findings."""
    one_worked, one = _lint("plain", 1)
    assert one_worked == 16
    assert _lint("plain", 2) == (0, one)
    assert _lint("fails", 2) == (16, one)
    assert _lint("dies", 2) == (16, one)  # its rules too, run here, read what this process resolved


_POOL = """\
import fcntl, json, os, struct, sys, termios, time
from policylint.rules import workers

class Rule:
    def __init__(self, rule_id):
        self.id = rule_id
        self.per_object = False

from tests.poolstub import Project

size = int(sys.argv[1])
payload = bytes(range(256)) * (size // 256)

def run_units(units):
    return {(rule.id, share): ([[rule.id, os.getpid()]], None) for rule, share in units}

rules = [Rule("PL101"), Rule("PL102"), Rule("PL103")]
pool = workers.start(Project(), rules, run_units, 2, handback=[lambda: payload])
assert pool is not None
# The child takes every unit before this process reads what it handed back: it never waits for
# the reader, whatever the size.
while any(struct.unpack("i", fcntl.ioctl(q, termios.FIONREAD, bytes(4)))[0] for q in pool._queues.values()):
    time.sleep(0.01)
got = pool.handed_back()
again = pool.handed_back()
results = pool.finish([], run_units)
pids = [found[0][1] for found, _ in results.values()]
print(json.dumps([got == payload, again is None, [pid != os.getpid() for pid in pids]]))
"""


@linux_only
@pytest.mark.parametrize("size", [0, 1 << 22], ids=["empty", "larger-than-a-pipe"])
def test_a_hand_back_is_read_whole_and_never_keeps_the_child_waiting(size: int) -> None:
    proc = subprocess.run(
        [sys.executable, "-c", _POOL, str(size)], capture_output=True, text=True, timeout=RUN_TIMEOUT, cwd=REPO, check=False
    )
    assert proc.returncode == 0, proc.stderr
    whole, once, by_child = json.loads(proc.stdout)
    assert whole and once
    assert by_child == [True, True, True]  # the child took every unit
