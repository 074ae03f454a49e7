"""What a rule process sends back (`policylint.rules.workers`, `--jobs`): streamed through its pipe
and read a pickle at a time, so that neither process holds the pickled text whole beside what it
becomes; the admission verdicts it added merged a batch at a time; the project's objects and keys
sent by their place in the index and read back as this process's own instances.

At 100,000 objects a first run with `--jobs 2` peaked where this process read a child's results
back (docs/performance.md, "The filling run under 1 GiB"). The children are forked, so each test
runs a fresh interpreter that runs no other thread (a test runner's process may).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from policylint.rules import workers

LINUX = sys.platform.startswith("linux")
linux_only = pytest.mark.skipif(not LINUX, reason="forks the rule processes as the command does only on Linux")
REPO = Path(__file__).resolve().parents[2]
RUN_TIMEOUT = 180.0
# What the child sends: 2 units of 1,024 findings of 8 KiB each, 16 MiB pickled.
FINDINGS_PER_UNIT = 1024
FINDING_BYTES = 8192
PAYLOAD = 2 * FINDINGS_PER_UNIT * FINDING_BYTES
# The child's verdicts: two batches and a half.
VERDICTS = workers.VERDICT_BATCH * 5 // 2

_SCRIPT = """\
import fcntl, json, os, struct, sys, termios, time, tracemalloc
from policylint.pipeline import LintRequest, load_project
from policylint.rules import workers

FINDINGS, SIZE, VERDICTS, REPORT = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
PER_FILE = 512  # verdicts per file content key: a batch holds whole files
# Real objects, in a list as long as the rules need to be shared: their places are what is sent.
real = load_project(LintRequest(paths=[sys.argv[5]])).index.objects
objects = [*real, *range(workers.MIN_OBJECTS)]
stranger = load_project(LintRequest(paths=[sys.argv[5]])).index.objects[0]  # not this run's object

class Rule:
    per_object = False

    def __init__(self, rule_id):
        self.id = rule_id

class Store:
    # The verdict store's side a rule process reads and this process writes.
    def __init__(self):
        self.made = {}
        self.merged = []

    def added(self):
        return self.made

    def update(self, entries):
        # By file content key, as the store keeps them; a file's verdicts are never split.
        assert all(len(entries[f]) == PER_FILE for f in entries)
        self.merged.append(sorted(int.from_bytes(key, "big") for f in entries for key in entries[f]))

class Index:
    pass

class Project:
    index = Index()
    kept_verdicts = Store()

Project.index.objects = objects
parent = os.getpid()
real_exit = os._exit

def reporting_exit(code):
    # The child's high-water mark of what it allocated to send its results, read as it leaves.
    with open(REPORT, "w") as out:
        json.dump(tracemalloc.get_traced_memory()[1], out)
    real_exit(code)

def run_units(units):
    out = {}
    for rule, share in units:
        if os.getpid() == parent:
            # This process's own unit, busy until the child has taken every queued one (FIONREAD):
            # whatever the schedule, the child sends both.
            while any(struct.unpack("i", fcntl.ioctl(q, termios.FIONREAD, bytes(4)))[0] for q in pool._queues.values()):
                time.sleep(0.01)
            out[(rule.id, share)] = ([], None)
            continue
        findings = [f"{rule.id} {i} ".ljust(SIZE, "x") for i in range(FINDINGS)]
        findings.append((real[1], real[2].key, stranger))
        out[(rule.id, share)] = (findings, None)
    if os.getpid() != parent:
        Project.kept_verdicts.made = {
            f"file{start:08d}": {i.to_bytes(16, "big"): [] for i in range(start, start + PER_FILE)}
            for start in range(0, VERDICTS, PER_FILE)
        }
        os._exit = reporting_exit
        tracemalloc.start()  # from here on: what sending the results allocates
    return out

pool = workers.start(Project(), [Rule("PL101"), Rule("PL102")], run_units, 2)
tracemalloc.start()
results = pool.finish([(Rule("PL999"), None)], run_units)
held, peak = tracemalloc.get_traced_memory()
tracemalloc.stop()
sent = [results[(rule, None)][0] for rule in ("PL101", "PL102")]
print(json.dumps({
    "held": held,
    "peak": peak,
    "findings": [len(found) - 1 for found in sent],
    "distinct": len({text for found in sent for text in found[:-1]}),
    "objects": [[found[-1][0] is real[1], found[-1][1] is real[2].key] for found in sent],
    "stranger": [[found[-1][2] is not stranger, found[-1][2].key == stranger.key] for found in sent],
    "merged": Project.kept_verdicts.merged,
}))
"""


@pytest.fixture(scope="module")
def sent(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    report = tmp_path_factory.mktemp("child") / "peak.json"
    proc = subprocess.run(
        [
            sys.executable,
            "-c",
            _SCRIPT,
            str(FINDINGS_PER_UNIT),
            str(FINDING_BYTES),
            str(VERDICTS),
            str(report),
            str(REPO / "examples"),
        ],
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT,
        cwd=REPO,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    out: dict[str, Any] = json.loads(proc.stdout)
    out["child_peak"] = json.loads(report.read_text())
    return out


@linux_only
def test_the_child_results_come_back_whole(sent: dict[str, Any]) -> None:
    assert sent["findings"] == [FINDINGS_PER_UNIT, FINDINGS_PER_UNIT]
    assert sent["distinct"] == 2 * FINDINGS_PER_UNIT
    assert sent["held"] > PAYLOAD  # what this process keeps: the findings themselves


@linux_only
def test_this_process_never_holds_the_pickled_results_whole(sent: dict[str, Any]) -> None:
    # Read whole, then joined, then unpickled, the 16 MiB of text were held twice beside the
    # findings they became: a high-water mark 32 MiB above what is kept. Read a frame at a time,
    # a frame and a batch of verdicts at most.
    assert sent["peak"] - sent["held"] < PAYLOAD / 8


@linux_only
def test_the_child_never_holds_its_pickled_results_whole(sent: dict[str, Any]) -> None:
    # Pickled into one bytes object, then written: 16 MiB beside the results.
    assert sent["child_peak"] < PAYLOAD / 8


@linux_only
def test_the_verdicts_a_child_added_are_merged_a_batch_at_a_time(sent: dict[str, Any]) -> None:
    batch = workers.VERDICT_BATCH
    # Every one, each once, in the order the child added them; never more than a batch at once.
    assert sent["merged"] == [list(range(batch)), list(range(batch, 2 * batch)), list(range(2 * batch, VERDICTS))]


@linux_only
def test_the_projects_objects_come_back_as_this_process_instances(sent: dict[str, Any]) -> None:
    # A finding's key and a fix's objects are this process's own, not copies of them.
    assert sent["objects"] == [[True, True], [True, True]]
    # An object that is not the project's is sent whole, and comes back equal.
    assert sent["stranger"] == [[True, True], [True, True]]


_REFUSED_SCRIPT = """\
import fcntl, json, os, struct, sys, termios, time
from policylint.rules import workers

class Rule:
    per_object = False

    def __init__(self, rule_id):
        self.id = rule_id

from tests.poolstub import Project

parent = os.getpid()

def run_units(units):
    out = {}
    for rule, share in units:
        if rule.id == "PL999":
            # This process's own unit, busy until the child has taken every queued one (FIONREAD).
            while any(struct.unpack("i", fcntl.ioctl(q, termios.FIONREAD, bytes(4)))[0] for q in pool._queues.values()):
                time.sleep(0.01)
        out[(rule.id, share)] = ([f"{rule.id} here" if os.getpid() == parent else f"{rule.id} child"], None)
    if os.getpid() != parent:
        # A unit no one queued first, then 4 MiB more: the child is still writing when this
        # process stops reading, which must not wait for it.
        return {("PL000", None): ([], None), **out, ("PL998", None): (["x" * 4096] * 1024, None)}
    return out

rules = [Rule(f"PL{n}") for n in (101, 102, 103, 104)]
pool = workers.start(Project(), rules, run_units, 2)
results = pool.finish([(Rule("PL999"), None)], run_units)
print(json.dumps([r[0] for r in workers.results_in_order(rules, results)]))
"""


@linux_only
def test_a_child_that_sends_what_was_not_queued_is_ended_and_its_units_run_here() -> None:
    proc = subprocess.run(
        [sys.executable, "-c", _REFUSED_SCRIPT], capture_output=True, text=True, timeout=RUN_TIMEOUT, cwd=REPO, check=False
    )
    assert proc.returncode == 0, proc.stderr
    # The child took every queued unit; none of its results is taken: each unit ran here, once.
    assert json.loads(proc.stdout) == [[f"PL{n} here"] for n in (101, 102, 103, 104)]
