"""When the main process reads what the rule processes send back (`policylint.rules.workers`,
`--jobs`): a child that is done is read first, whichever pool it is of, and a child's pipe holds
what it sends at 10,000 objects, so that it ends without waiting to be read.

The children are forked, so each test runs a fresh interpreter that runs no other thread (a test
runner's process may).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

LINUX = sys.platform.startswith("linux")
linux_only = pytest.mark.skipif(not LINUX, reason="forks the rule processes as the command does only on Linux")
REPO = Path(__file__).resolve().parents[2]
RUN_TIMEOUT = 180.0

_SHARED = """\
import fcntl, json, os, select, struct, sys, termios, time
from policylint.rules import workers

class Rule:
    per_object = False

    def __init__(self, rule_id):
        self.id = rule_id

from tests.poolstub import Project

parent = os.getpid()
pools = []

def queued():
    return sum(struct.unpack("i", fcntl.ioctl(q, termios.FIONREAD, bytes(4)))[0] for pool in pools for q in pool._queues.values())
"""

_ORDER_SCRIPT = (
    _SHARED
    + """
release_read, release_write = os.pipe()  # written once this process reads a child's results
collected = []
collect = workers._collect

def collecting(child, keys, pool):
    collected.append(sorted(keys)[0][0])
    os.write(release_write, b"x")
    return collect(child, keys, pool)

workers._collect = collecting

def run_units(units):
    if os.getpid() == parent:
        for rule, share in units:
            # This process's own unit, busy until the children have taken every queued one.
            while queued():
                time.sleep(0.01)
        return {}
    taken = list(units)  # all of its queue, before the later pool's child waits
    if taken[0][0].id == "PL201":
        # The later pool's child holds its results until this process reads some child's.
        select.select([release_read], [], [], 30.0)
    return {(rule.id, share): ([f"{rule.id} child"], None) for rule, share in taken}

pools.append(workers.start(Project(), [Rule("PL101"), Rule("PL102")], run_units, 2))
pools.append(workers.start(Project(), [Rule("PL201"), Rule("PL202")], run_units, 2, earlier=pools[:1]))
results = pools[1].finish([(Rule("PL999"), None)], run_units, pools[:1])
print(json.dumps({"collected": collected, "results": sorted(f for found, _ in results.values() for f in found)}))
"""
)


@linux_only
def test_a_child_that_is_done_is_read_before_a_later_pools_child_that_is_not() -> None:
    proc = subprocess.run(
        [sys.executable, "-c", _ORDER_SCRIPT], capture_output=True, text=True, timeout=RUN_TIMEOUT, cwd=REPO, check=False
    )
    assert proc.returncode == 0, proc.stderr
    got = json.loads(proc.stdout)
    # The earlier pool's child is done; the later pool's waits until some child is read. Read in
    # pool order, the later pool's came first (this process waited for the one still working).
    assert got["collected"] == ["PL101", "PL201"]
    assert got["results"] == ["PL101 child", "PL102 child", "PL201 child", "PL202 child"]


_ENDED_SCRIPT = (
    _SHARED
    + """
SENT = int(sys.argv[1])
ended = []

def state(pid):
    with open(f"/proc/{pid}/stat") as stat:
        return stat.read().rsplit(")", 1)[1].split()[0]

def run_units(units):
    if os.getpid() != parent:
        # Distinct texts: the pickler would send a text repeated once.
        made = lambda rule: [f"{rule.id} {i} ".ljust(4096, "x") for i in range(SENT // 4096 // 2)]
        return {(rule.id, share): (made(rule), None) for rule, share in units}
    for rule, share in units:
        # This process's own unit: busy until the child has taken every queued one, then until it
        # has ended (a zombie until reaped) or is seen waiting for this process to read it.
        while queued():
            time.sleep(0.01)
        pid = pools[0]._children[0][0]
        deadline = time.monotonic() + 20.0
        while state(pid) != "Z" and time.monotonic() < deadline:
            time.sleep(0.01)
        ended.append(state(pid) == "Z")
    return {}

pools.append(workers.start(Project(), [Rule("PL101"), Rule("PL102")], run_units, 2))
results = pools[0].finish([(Rule("PL999"), None)], run_units)
print(json.dumps({"ended": ended, "sent": sum(len(found) for found, _ in results.values())}))
"""
)


@linux_only
def test_a_child_ends_before_its_results_are_read() -> None:
    # About what the first child sends at 10,000 objects (1.2 MB on the shared benchmark corpus,
    # docs/performance.md), less what the pipe's buffer may lack for the pickle's framing.
    sent = 900 * 1024
    proc = subprocess.run(
        [sys.executable, "-c", _ENDED_SCRIPT, str(sent)],
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT,
        cwd=REPO,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    got = json.loads(proc.stdout)
    # With the pipe's default 64 KiB, the child waited for this process to read (never a zombie).
    assert got["ended"] == [True]
    assert got["sent"] == 2 * (sent // 4096 // 2)
