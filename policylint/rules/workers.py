"""Running the rules in several processes (`--jobs`): the project is built once, then forked.

Once the stages are built, the rules only read the project, so the process forks after the build
and each child runs a share of the rules over its copy-on-write view of the same project, sending
back the findings it resolved (pickled, through a pipe). This process runs its own share
meanwhile, then reads the children's. The findings are put back in the order of the rules, as
one process would have produced them, so the output is the same bytes whatever `--jobs` is
(tests/test_processes.py). Parsing uses clean interpreters ("spawn", policylint.input.parallel)
because it has nothing to share; here sharing the built project is the point, and it needs fork.

A child that cannot be forked, dies, or sends back something unreadable costs nothing but time:
this process runs that share itself (and all of them when another thread runs here, since forking
a threaded process can deadlock the child). Children never outlive the run: on Linux the kernel ends a
child when this process dies (PR_SET_PDEATHSIG), and this process waits for every child it
started before it returns.
"""

from __future__ import annotations

import os
import pickle
import sys
import threading
from collections.abc import Callable, Mapping, Sequence

from policylint.findings import Finding, Issue
from policylint.project import Project
from policylint.rules.base import Rule

# Below this many objects the rules take less than a fork and its pickling: one process.
MIN_OBJECTS = 2_000
# The rules' relative CPU cost at 10k objects (docs/performance.md), to share them evenly; any
# rule not listed counts 1. Only the balance depends on it, never the output.
COST: Mapping[str, float] = {"PL702": 12.0, "PL603": 3.0, "PL506": 2.0, "PL201": 2.0}
# Rules that read one cache built on first use (the admission verdicts, policylint.k8s.admission:
# the first of them pays for all) run in one process, or each process would build it again.
TOGETHER: tuple[frozenset[str], ...] = (frozenset({"PL702", "PL703", "PL704", "PL705", "PL706"}),)

RuleResult = tuple[list[Finding], Issue | None]
# Runs a share of the rules in this process: rule id -> its findings, or the PL000 issue saying it failed.
RunShare = Callable[[Sequence[type[Rule]]], dict[str, RuleResult]]


def can_fork() -> bool:
    # Linux only (macOS's system libraries are not fork-safe), and only while this process runs
    # no other thread: a lock another thread holds at the fork stays held in the child for ever.
    # The command has none once parsing is done; a host program (a test runner) may.
    return sys.platform.startswith("linux") and hasattr(os, "fork") and threading.active_count() == 1


def shares(rules: Sequence[type[Rule]], n: int) -> list[list[type[Rule]]]:
    """The rules split into `n` shares of about equal cost (largest first to the lightest share),
    the rules of a TOGETHER group in one share."""
    units: dict[str, list[type[Rule]]] = {}
    for rule in rules:
        group = next((g for g in TOGETHER if rule.id in g), None)
        units.setdefault(min(group) if group is not None else rule.id, []).append(rule)

    def cost(unit: list[type[Rule]]) -> float:
        return sum(COST.get(r.id, 1.0) for r in unit)

    out: list[list[type[Rule]]] = [[] for _ in range(n)]
    load = [0.0] * n
    for key in sorted(units, key=lambda k: (-cost(units[k]), k)):
        i = min(range(n), key=lambda k: (load[k], k))
        out[i].extend(units[key])
        load[i] += cost(units[key])
    return out


def run_rules(project: Project, rules: Sequence[type[Rule]], run_share: RunShare, jobs: int) -> list[RuleResult]:
    """The result of every rule, in `rules` order: run in `jobs` processes when that pays."""
    if jobs <= 1 or len(rules) < 2 or len(project.index.objects) < MIN_OBJECTS or not can_fork():
        results = run_share(rules)
        return [results[rule.id] for rule in rules]
    groups = shares(rules, min(jobs, len(rules)))
    mine, theirs = groups[0], groups[1:]
    children = [_fork(group, run_share) for group in theirs]
    results = run_share(mine)
    for group, child in zip(theirs, children, strict=True):
        received = _collect(child)
        if received is None or set(received) != {rule.id for rule in group}:
            received = run_share(group)  # the child failed: do its share here
        results.update(received)
    return [results[rule.id] for rule in rules]


def _fork(group: Sequence[type[Rule]], run_share: RunShare) -> tuple[int, int] | None:
    """(pid, read end of its pipe), or None when no child could be started."""
    try:
        read, write = os.pipe()
    except OSError:
        return None
    try:
        pid = os.fork()
    except OSError:
        os.close(read)
        os.close(write)
        return None
    if pid == 0:  # the child: run the share, send it, and leave without any cleanup of the parent's
        code = 1
        try:
            os.close(read)
            _die_with_parent()
            payload = pickle.dumps(run_share(group), protocol=pickle.HIGHEST_PROTOCOL)
            view = memoryview(payload)
            while view:
                view = view[os.write(write, view) :]
            code = 0
        finally:
            os._exit(code)
    os.close(write)
    return pid, read


def _collect(child: tuple[int, int] | None) -> dict[str, RuleResult] | None:
    if child is None:
        return None
    pid, read = child
    chunks = []
    try:
        while True:
            chunk = os.read(read, 1 << 20)
            if not chunk:
                break
            chunks.append(chunk)
    finally:
        os.close(read)
        _, status = os.waitpid(pid, 0)
    if not os.WIFEXITED(status) or os.WEXITSTATUS(status) != 0:
        return None
    try:
        # Unpickling runs code the data names: this is our own child's output, through our own pipe.
        received = pickle.loads(b"".join(chunks))
    except Exception:
        return None
    return received if isinstance(received, dict) else None


def _die_with_parent() -> None:
    from policylint.input.parallel import set_parent_death_signal

    set_parent_death_signal()  # Linux; elsewhere can_fork() is false
