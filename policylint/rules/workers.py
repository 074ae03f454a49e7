"""Running the rules in several processes (`--jobs`): the project is built once, then forked.

Once the stages are built, the rules only read the project, so the process forks after the build
and each child runs a share of the rules over its copy-on-write view of the same project, sending
back the findings it resolved (pickled, through a pipe). This process runs its own share
meanwhile, then reads the children's. The findings are put back in the order of the rules, as
one process would have produced them, so the output is the same bytes whatever `--jobs` is
(tests/test_processes.py). The costliest rules are `per_object` (`Rule.per_object`): each
process runs them over its share of the objects, so that no process waits on one rule the others
cannot help with (the schema family computes every object's admission verdict). Parsing uses
clean interpreters ("spawn", policylint.input.parallel) because it has nothing to share; here
sharing the built project is the point, and it needs fork.

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
# rule not listed counts 1. Only the balance depends on it, never the output. The costliest
# rules, the schema family (PL702-PL706, PL702 computing every object's admission verdict) and
# those with the most findings (PL201, PL301, PL603: positions to resolve), are `per_object`:
# they run in every process over its share of the objects, and their cost is counted per process
# in proportion to its share of the objects (`plan`).
COST: Mapping[str, float] = {"PL702": 12.0, "PL603": 3.0, "PL506": 2.0, "PL201": 2.0}

RuleResult = tuple[list[Finding], Issue | None]
# A rule to run, and the share of the objects it checks (`Rule.share`; None: all of them).
Unit = tuple[type[Rule], tuple[int, int] | None]
# Runs a share of the rules in this process: rule id -> its findings, or the PL000 issue saying it failed.
RunShare = Callable[[Sequence[Unit]], dict[str, RuleResult]]


def can_fork() -> bool:
    # Linux only (macOS's system libraries are not fork-safe), and only while this process runs
    # no other thread: a lock another thread holds at the fork stays held in the child for ever.
    # The command has none once parsing is done; a host program (a test runner) may.
    return sys.platform.startswith("linux") and hasattr(os, "fork") and threading.active_count() == 1


def shares(rules: Sequence[type[Rule]], n: int, start: Sequence[float] | None = None) -> list[list[type[Rule]]]:
    """The rules split into `n` shares of about equal cost (largest first to the lightest share),
    each share starting from the cost `start` gives it (none by default)."""
    out: list[list[type[Rule]]] = [[] for _ in range(n)]
    load = list(start) if start is not None else [0.0] * n
    for rule in sorted(rules, key=lambda r: (-COST.get(r.id, 1.0), r.id)):
        i = min(range(n), key=lambda k: (load[k], k))
        out[i].append(rule)
        load[i] += COST.get(rule.id, 1.0)
    return out


def plan(rules: Sequence[type[Rule]], n: int, objects: Sequence[int] | None = None) -> list[list[Unit]]:
    """What each of `n` processes runs: every `per_object` rule over the process's share of the
    objects (the k-th of n), then its share of the other rules (`shares`). `objects`: how many
    objects each share holds (even by default); the per-object rules cost each process in
    proportion, so that a repository whose objects sit in one namespace, all in one share, gives
    the other rules to the other processes."""
    split = [rule for rule in rules if rule.per_object]
    counts = objects if objects is not None and sum(objects) > 0 else [1] * n
    per_object = sum(COST.get(rule.id, 1.0) for rule in split)
    start = [per_object * count / sum(counts) for count in counts]
    whole = shares([rule for rule in rules if not rule.per_object], n, start)
    return [[*((rule, (k, n)) for rule in split), *((rule, None) for rule in whole[k])] for k in range(n)]


def run_rules(project: Project, rules: Sequence[type[Rule]], run_share: RunShare, jobs: int) -> list[RuleResult]:
    """The result of every rule, in `rules` order: run in `jobs` processes when that pays.

    A `per_object` rule's result is the union of its shares' findings; the engine sorts every
    finding by place, and the findings of one object come from one share in the order one run
    gives them, so the output is that of one process. A share that failed (PL000) fails the rule.
    """
    if jobs <= 1 or len(rules) < 2 or len(project.index.objects) < MIN_OBJECTS or not can_fork():
        results = run_share([(rule, None) for rule in rules])
        return [results[rule.id] for rule in rules]
    index = project.index
    counts = [0] * jobs
    for obj in index.objects:
        counts[index.share_of(obj, jobs)] += 1
    units = plan(rules, jobs, counts)
    mine, theirs = units[0], units[1:]
    children = [_fork(share, run_share) for share in theirs]
    parts = [run_share(mine)]
    for share, child in zip(theirs, children, strict=True):
        received = _collect(child)
        if received is None or set(received) != {rule.id for rule, _ in share}:
            received = run_share(share)  # the child failed: do its share here
        parts.append(received)
    out: list[RuleResult] = []
    for rule in rules:
        found = [part[rule.id] for part in parts if rule.id in part]
        failure = next((failed for _, failed in found if failed is not None), None)
        out.append(([], failure) if failure is not None else ([f for findings, _ in found for f in findings], None))
    return out


def _fork(group: Sequence[Unit], run_share: RunShare) -> tuple[int, int] | None:
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
