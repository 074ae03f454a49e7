"""Running the rules in several processes (`--jobs`): forked children take rules from a queue.

The rules only read the project, so each child is forked from the built project and runs rules over
its copy-on-write view of it, sending back the findings it resolved (pickled, streamed through a
pipe and read a pickle at a time: `_send`, `_collect`; the project's objects by their place).
Parsing's workers share nothing with this process but the files they are handed (forked where
that is safe, else clean interpreters, policylint.input.parallel); here sharing the built project
is the point, and it needs fork.

The children start as early as the rules allow, one pool of them per stage the rules wait for. The
stages (policylint.stages) are built by one process, but most of the rules' work reads the index,
the admission verdicts and the topology alone (`Rule.reads`: the schema family reads every object's
admission verdict, which each process works out for the objects of its shares). So a first pool is
forked before any stage is built, for the rules that read the index alone, which run while this
process builds the admissions and the topology; a second once the topology is built, for the rules
that read no later stage, which run while this process builds the simulation (`start`, called by
the engine's `start` and `Started.advance`; a pool's children never hold an earlier pool's pipes).
The rules that read the admission verdicts wait for the topology with those that read it: PL704
reads both, and reads the verdicts and refusals PL702 and PL703 work out in the same process, which
a process forked earlier would work out again. This process then runs the rules that read the
simulation, and takes from the queues, the latest pool's first, what the children have not taken
yet (`finish`). When no rule is ready before the build (all read the simulation), the children are
forked after it, over all the rules; a pool that does not start leaves its rules to the next.

The queue is two pipes filled, before the fork, with the number of every unit of work, costliest
first (`COST`): one with the shares of the objects for all the `per_object` rules together
(`Rule.per_object`: their findings depend on their object alone; `bundles`), one with the other
rules, each a unit. Each process reads one number at a time until both pipes are empty. A read of
a pipe is atomic, so no unit is taken twice, and whichever process is free takes the next unit: no
split made in advance has to guess how long the stages or the rules take here. The children read
the shares first, this process the whole rules (`Pool.finish`): the shares of the schema family
read every object's admission verdict, and a verdict's work (the schemas read and compiled, the
plans for the other plausible schemas, the content a namespace repeats from another) is done once
per process that asks for it, so that this process taking two of the shares its child was taking
cost the run a third more of the family's CPU; the whole rules read what this process built.

The findings are put back in the order of the rules, a per-object rule's in the order of its
shares, as one process would have produced them, so the output is the same bytes whatever `--jobs`
is (tests/input/test_processes.py). A child that cannot be forked, dies, or sends back something
unreadable costs nothing but time: this process runs the units that child took. Forking needs a
process that runs no other thread (a lock another thread holds at the fork stays held in the
child for ever). Children never outlive the run: on Linux the kernel ends a child when this process
dies (PR_SET_PDEATHSIG), and `Pool.close` ends and reaps those still running when the run ends
early.
"""

from __future__ import annotations

import contextlib
import os
import pickle
import signal
import sys
from collections.abc import Callable, Container, Iterable, Iterator, Mapping, Sequence
from itertools import chain
from typing import TYPE_CHECKING, Any, BinaryIO

from policylint.findings import Finding, Issue
from policylint.k8s.objects import K8sObject, ObjectKey
from policylint.project import Project
from policylint.rules.base import Rule

if TYPE_CHECKING:
    from policylint.input.verdictstore import VerdictStore

# Below this many objects the rules take less than a fork and its pickling: one process.
MIN_OBJECTS = 2_000
# Shares of the objects a per-object rule is cut into, per process: more than one, so that the last
# units taken are small and the processes end together.
SHARES_PER_PROCESS = 4
# The rules' relative CPU cost at 10k objects (docs/performance.md), to queue the costliest first;
# any rule not listed counts 1, and a share of a per-object rule its part. Only the order in which
# units are taken depends on it, never the output.
COST: Mapping[str, float] = {"PL702": 12.0, "PL603": 3.0, "PL506": 2.0, "PL201": 2.0}
# The order in which a child reads the queue's pipes (`Pool._take`): the shares of the per-object
# rules first (True), then the whole rules (False). This process reads them the other way round.
CHILDREN_TAKE = (True, False)
# What this process's first share of a pool costs it, in the shares a child that has run one takes
# meanwhile: the share, and the work a process does once for its rules (the admission family's
# schemas of the other plausible releases, its plans for their answers, the verdicts of the content
# the namespaces repeat: 0.12-0.16 s at 10,000 objects against 0.08-0.13 s a share;
# docs/performance.md, "The schema family's shares left to the children, PL010 after the topology"
# and "A share taken by this process only where it pays for its first"). So it takes a first share
# only while the queue holds more than this many per child, and then, prepared, more than one.
FIRST_SHARE = 2
# Units are queued as 2-byte numbers: at most this many, so that the whole queue fits in a pipe's
# buffer (4 KiB is less than any Linux pipe holds) and filling it never blocks.
MAX_UNITS = 2048
# The admission verdicts a child added are sent this many at a time (`_send`): each batch is
# merged into this process's store as it comes, and let go.
VERDICT_BATCH = 4096
# What the first child writes to its signal pipe once its hand-back is whole (`Pool.handed_back`).
HANDED_BACK = b"\x01"

RuleResult = tuple[list[Finding], Issue | None]
# A unit of work: a rule, and the share of the objects it checks (`engine.issues`; None: all of them).
Unit = tuple[type[Rule], tuple[int, int] | None]
UnitKey = tuple[str, tuple[int, int] | None]
# What the queue hands a process at a time: units run together in one process.
Bundle = tuple[Unit, ...]
# Runs units of work in this process, taking each from the iterable only when it is ready for it:
# (rule id, share) -> its findings, or the PL000 issue saying it failed.
RunUnits = Callable[[Iterable[Unit]], dict[UnitKey, RuleResult]]


def can_fork() -> bool:
    # Linux only (macOS's system libraries are not fork-safe), and only while this process runs
    # no other thread, counted by the kernel (`parallel.runs_one_thread`). The command has none once
    # parsing is done; a host program (a test runner) may.
    from policylint.input.parallel import runs_one_thread

    return sys.platform.startswith("linux") and hasattr(os, "fork") and runs_one_thread()


def key(unit: Unit) -> UnitKey:
    return unit[0].id, unit[1]


def _cost(bundle: Bundle) -> float:
    return sum(COST.get(rule.id, 1.0) / (share[1] if share is not None else 1) for rule, share in bundle)


def bundles(rules: Sequence[type[Rule]], shares: int) -> list[Bundle]:
    """The units of work of `rules`, costliest first: the `per_object` rules together over each of
    `shares` shares of the objects (when more than one), every other rule alone. One process runs
    all the per-object rules over a share: they read the same verdicts (the schema family reads
    every object's admission), which each process computes once per object it reads them for."""
    split = [rule for rule in rules if rule.per_object] if shares > 1 else []
    out: list[Bundle] = [tuple((rule, (k, shares)) for rule in split) for k in range(shares)] if split else []
    out.extend(((rule, None),) for rule in rules if rule not in split)
    return sorted(out, key=lambda bundle: (-_cost(bundle), bundle[0][0].id, bundle[0][1] or (0, 0)))


class Pool:
    """Children that take units from a queue (`start`); this process takes the rest (`finish`)."""

    def __init__(
        self,
        todo: list[Bundle],
        queues: dict[bool, int],
        children: list[tuple[int, int]],
        verdicts: VerdictStore | None = None,
        objects: Sequence[object] = (),
    ) -> None:
        self.todo = todo
        # The read ends of the queue's pipes: the shares' units under True, the whole rules' under
        # False (`_queues`); a pipe that would hold nothing is not made.
        self._queues = queues
        self._children = children
        # The admission verdicts the children work out are kept in this process's store.
        self.verdicts = verdicts
        # The project's objects, the same in every process of the run (forked once the index was
        # built): a finding's object or key is sent back by its place among them (`_Sender`).
        self.objects = objects
        # What the first child hands back before its units (`start`'s `handback`), one entry per
        # part, in order: the read end of the pipe it signals on and the memory file it writes to
        # (`handed_back`), or None once read or never made.
        self._handback: list[tuple[int, int] | None] = []
        # The process that started the pool: a child forked later holds a copy of this object,
        # whose descriptors are closed there (or reused by files of its own), and never reads them.
        self._owner = os.getpid()

    def _take(self, shares: Sequence[bool] = CHILDREN_TAKE, leave: int = 0, first: int = 0) -> Iterator[Unit]:
        """The units left in the queue's pipes named by `shares`, in that order (True: the
        shares', False: the whole rules'), one at a time, as this process gets to them, until a
        pipe holds no more than `leave` units: those are left to the children. `first`: before
        the first unit is taken, no more than `first` are left instead (`FIRST_SHARE`)."""
        taken = False
        for which in shares:
            while (queue := self._queues.get(which)) is not None:
                keep = leave if taken else max(leave, first)
                if keep and _queued(queue) <= keep:
                    break
                got = os.read(queue, 2)
                if len(got) != 2:
                    break  # empty: every write end is closed, so nothing more will come
                taken = True
                yield from self.todo[int.from_bytes(got, "big")]

    def finish(self, first: Sequence[Unit], run_units: RunUnits, earlier: Sequence[Pool] = ()) -> dict[UnitKey, RuleResult]:
        """Run `first` here, then the units still queued; gather the children's results, and run
        here every unit that no child sent back. `earlier`: the pools started at an earlier stage
        (`engine.start`): what their queues still hold is run here after this one's, the whole
        rules with `first` (their findings' positions are resolved in one pass per file), and their
        children are gathered too."""
        pools = (self, *earlier)
        try:
            # The whole rules first, every pool's, their findings' positions with them; then the
            # shares the children have not taken by then, but for one per child: this process
            # takes a share only when nothing else is left, and pays for its first the preparation
            # its child has done already (the schemas and plans of the admission family, 0.1 s at
            # 10,000 objects), so that the last share costs it more than its child's finishing the
            # one it holds and taking it, and its first share pays only where `FIRST_SHARE` per
            # child are left besides.
            results = run_units(chain(first, *(pool._take((False,)) for pool in pools)))
            results.update(
                run_units(
                    chain(
                        *(
                            pool._take((True,), leave=len(pool._children), first=FIRST_SHARE * len(pool._children))
                            for pool in pools
                        )
                    )
                )
            )
            units = {pool: [unit for bundle in pool.todo for unit in bundle] for pool in pools}
            keys = {pool: {key(unit) for unit in units[pool]} for pool in pools}
            for pool, child in _ready_first(pools):
                received = _collect(child, keys[pool], pool)
                if received is not None:
                    results.update(received)
            missing = [unit for pool in pools for unit in units[pool] if key(unit) not in results]
            if missing:  # a child failed: its units, run here
                results.update(run_units(missing))
            return results
        finally:
            for pool in pools:
                pool.close()

    def handed_back(self, part: int = 0) -> bytes | None:
        """The `part`th of what the first child wrote before it took any unit (`start`'s
        `handback`), waiting until it has (it does so first, the parts in order); None when it
        wrote nothing of it: it died first, that work failed, no child was asked to (then this
        process works it out, as with one job), the part was read already, or this is a process
        forked since, which works it out itself (what asks for it may first ask there: the
        topology's rules read the admission verdicts a run without policies never asked for
        before the fork)."""
        if os.getpid() != self._owner or not 0 <= part < len(self._handback) or self._handback[part] is None:
            return None
        found = self._handback[part]
        assert found is not None  # checked above
        signal_read, written = found
        self._handback[part] = None
        try:
            # One byte once the file is whole; the end of the pipe (b"") if the child is gone.
            if os.read(signal_read, 1) != HANDED_BACK:
                return None
            size = os.fstat(written).st_size
            chunks: list[bytes] = []
            offset = 0
            while offset < size and (chunk := os.pread(written, size - offset, offset)):
                chunks.append(chunk)
                offset += len(chunk)
            return b"".join(chunks) if offset == size else None
        except OSError:
            return None
        finally:
            os.close(signal_read)
            os.close(written)

    def descriptors(self) -> list[int]:
        """The queue's and the children's pipes this process holds open."""
        return [*self._queues.values(), *(fd for _, fd in self._children), *self._handback_descriptors()]

    def _handback_descriptors(self) -> list[int]:
        return [fd for part in self._handback if part is not None for fd in part]

    def close(self) -> None:
        """End and reap the children still running (a run stopped before `finish`), close the queue."""
        while self._queues:
            os.close(self._queues.popitem()[1])
        for fd in self._handback_descriptors():
            os.close(fd)
        self._handback = []
        while self._children:
            pid, read = self._children.pop()
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
            os.close(read)
            with contextlib.suppress(ChildProcessError):
                os.waitpid(pid, 0)


def forks(project: Project, jobs: int) -> bool:
    """Whether `start` may fork children for this project: more than one job, enough objects for
    the rules to outweigh a fork, and a process that can fork."""
    return jobs > 1 and len(project.index.objects) >= MIN_OBJECTS and can_fork()


def start(
    project: Project,
    rules: Sequence[type[Rule]],
    run_units: RunUnits,
    jobs: int,
    earlier: Sequence[Pool] = (),
    handback: Sequence[Callable[[], bytes]] = (),
) -> Pool | None:
    """Fork `jobs - 1` children that take `rules`' units from a queue and run them; None when
    one process is better (few objects, one job, one unit of work) or no child can be forked.
    `earlier`: the pools started before this one, whose queue and pipes are this process's alone.
    `handback`: work the first child does before it takes any unit, in parts done in this order,
    whose results this process reads each when it needs it (`Pool.handed_back`), rather than
    doing that work itself meanwhile."""
    if not forks(project, jobs):
        return None
    todo = bundles(rules, SHARES_PER_PROCESS * jobs)
    if not 2 <= len(todo) <= MAX_UNITS:
        return None
    queues = _queues(todo)
    if queues is None:
        return None
    pool = Pool(todo, queues, [], project.kept_verdicts, project.index.objects)
    inherited = [fd for other in earlier for fd in other.descriptors()]
    # One channel per part, so that this process reads each as soon as the child has written it.
    channels = [_handback_channel() for _ in handback]
    for first in range(jobs - 1):
        if first == 0 and handback:
            parts = [(work, *channel) for work, channel in zip(handback, channels) if channel is not None]
            child = _fork(pool, run_units, inherited, parts)
            for channel in channels:
                if channel is None:
                    pool._handback.append(None)
                    continue
                signal_read, signal_write, written = channel
                # The write ends are the child's alone: the pipe reads as its end once it is gone.
                os.close(signal_write)
                if child is not None:
                    pool._handback.append((signal_read, written))
                else:
                    pool._handback.append(None)
                    os.close(signal_read)
                    os.close(written)
        else:
            child = _fork(pool, run_units, inherited)
        if child is not None:
            pool._children.append(child)
    return pool


def _handback_channel() -> tuple[int, int, int] | None:
    """(read end, write end) of the pipe the first child signals on, and the memory file it writes
    its hand-back to: a file, not the pipe, so that the child never waits for this process to read
    (it reads when it needs the result, a stage later); None when they cannot be made."""
    try:
        written = os.memfd_create("policylint-handback", os.MFD_CLOEXEC)
    except (AttributeError, OSError):  # Linux alone has memfd_create, as it alone forks here
        return None
    try:
        signal_read, signal_write = os.pipe()
    except OSError:
        os.close(written)
        return None
    return signal_read, signal_write, written


def _queued(queue: int) -> int:
    """How many units the queue's pipe holds now (FIONREAD; Linux, where children are forked)."""
    import fcntl
    import termios

    held = bytearray(4)
    fcntl.ioctl(queue, termios.FIONREAD, held)
    return int.from_bytes(held, sys.byteorder) // 2


def _queues(todo: Sequence[Bundle]) -> dict[bool, int] | None:
    """The read ends of the queue's pipes, filled with the numbers of `todo`'s units in its order:
    the shares' under True, the whole rules' under False, a pipe only for units there are; None
    when a pipe cannot be made."""
    queues: dict[bool, int] = {}
    for shares in (True, False):
        numbers = [i for i, bundle in enumerate(todo) if (bundle[0][1] is not None) is shares]
        if not numbers:
            continue
        try:
            read, write = os.pipe()
        except OSError:
            for fd in queues.values():
                os.close(fd)
            return None
        try:
            os.write(write, b"".join(i.to_bytes(2, "big") for i in numbers))
        finally:
            os.close(write)  # the children inherit only the read end: an empty queue reads as its end
        queues[shares] = read
    return queues


def results_in_order(rules: Sequence[type[Rule]], results: Mapping[UnitKey, RuleResult]) -> list[RuleResult]:
    """Each rule's result, in `rules` order: a per-object rule's is the union of its shares'
    findings, in share order (the engine sorts every finding by place, and one object's findings
    all come from one share in the order one run gives them, so the output is one process's). A
    share that failed (PL000) fails the rule."""
    parts: dict[str, list[tuple[tuple[int, int] | None, RuleResult]]] = {}
    for (rule_id, share), result in results.items():
        parts.setdefault(rule_id, []).append((share, result))
    out: list[RuleResult] = []
    for rule in rules:
        found = [result for _, result in sorted(parts.get(rule.id, ()), key=lambda part: part[0] or (0, 0))]
        failure = next((failed for _, failed in found if failed is not None), None)
        out.append(([], failure) if failure is not None else ([f for findings, _ in found for f in findings], None))
    return out


def _fork(
    pool: Pool,
    run_units: RunUnits,
    inherited: Sequence[int] = (),
    handback: Sequence[tuple[Callable[[], bytes], int, int, int]] = (),
) -> tuple[int, int] | None:
    """(pid, read end of its pipe), or None when no child could be started. `inherited`: the
    descriptors of earlier pools, closed in the child. `handback`: what the child works out before
    its units, part after part, each with the read and write ends of the pipe it signals on and
    the file it writes to (`_handback_channel`)."""
    try:
        read, write = os.pipe()
    except OSError:
        return None
    from policylint.input.forked import widen

    # The first child's results are about 1.2 MB at 10,000 objects: with the default 64 KiB of
    # buffer it wrote one twentieth of them and waited, holding its memory, until this process
    # read them, so that most of its pickling ran while it was read, on this process's path.
    widen(write)
    try:
        pid = os.fork()
    except OSError:
        os.close(read)
        os.close(write)
        return None
    if pid == 0:  # the child: run what it takes, send it, and leave without any cleanup of the parent's
        code = 1
        try:
            os.close(read)
            for other in [*(fd for _, fd in pool._children), *inherited, *pool._handback_descriptors()]:
                # An earlier sibling's results, and an earlier pool's queue, are this process's
                # to read, not its.
                os.close(other)
            _die_with_parent()
            for part in handback:
                _hand_back(*part)
            results = run_units(pool._take())
            with os.fdopen(write, "wb") as out:  # flushed and closed before os._exit
                _send(out, results, pool)
            code = 0
        finally:
            os._exit(code)
    os.close(write)
    return pid, read


def _hand_back(work: Callable[[], bytes], signal_read: int, signal_write: int, written: int) -> None:
    """In the first child: write what `work` gives to the memory file, then one byte to the pipe;
    a failure writes nothing, and the parent, reading the pipe's end, works it out itself."""
    os.close(signal_read)
    try:
        view = memoryview(work())
        while view:
            view = view[os.write(written, view) :]
        os.write(signal_write, HANDED_BACK)
    except Exception:
        pass  # the parent's own work is the same: it only costs time
    finally:
        os.close(signal_write)
        os.close(written)


class _Sender(pickle.Pickler):
    """Pickles a child's results with the project's objects and their keys by their place in the
    index, which this process holds too (forked from it): a finding's key and a fix's objects come
    back as this process's own instances rather than copies (the fixes of PL402 hold the object
    a ReferenceGrant is added beside, 1,100 distinct at 20,000 objects), and are not pickled one
    field at a time."""

    def __init__(self, out: BinaryIO, objects: Sequence[object]) -> None:
        super().__init__(out, protocol=pickle.HIGHEST_PROTOCOL)
        # By identity (a `K8sObject` hashes so); a key by value, the first object's where two
        # share it (an `ObjectKey` is compared by value wherever it is read).
        self._places: dict[object, int] = {}
        self._keys: dict[ObjectKey, int] = {}
        for place, obj in enumerate(objects):
            if isinstance(obj, K8sObject):
                self._places[obj] = place
                self._keys.setdefault(obj.key, place)

    def persistent_id(self, obj: Any) -> tuple[bool, int] | None:
        if isinstance(obj, K8sObject):
            place = self._places.get(obj)
            return None if place is None else (False, place)
        if type(obj) is ObjectKey:
            place = self._keys.get(obj)
            return None if place is None else (True, place)
        return None


class _Receiver(pickle.Unpickler):
    """Reads what `_Sender` pickled: an object or key by its place in this process's index."""

    def __init__(self, stream: BinaryIO, objects: Sequence[object]) -> None:
        super().__init__(stream)
        self._objects = objects

    def persistent_load(self, pid: Any) -> Any:
        is_key, place = pid
        obj = self._objects[place] if type(place) is int and 0 <= place < len(self._objects) else None
        if not isinstance(obj, K8sObject):
            raise pickle.UnpicklingError(f"no object at {place!r}")
        return obj.key if is_key else obj


def _send(out: BinaryIO, results: dict[UnitKey, RuleResult], pool: Pool) -> None:
    """Stream the child's results into the pipe (`_collect` reads them): each (unit, result), then
    None, then the admission verdicts it added, `VERDICT_BATCH` to a pickle, then None. The pickles
    are written straight into the pipe, a frame at a time: no process holds the whole pickled text
    beside what it becomes (43 MiB at 100,000 objects: docs/performance.md, "The filling run under
    1 GiB"). The units share one pickler, whose memo sends a string they share once, as one pickle
    did; each batch of verdicts has its own, so that the reader lets a batch go once merged."""
    pickler = _Sender(out, pool.objects)
    for item in results.items():
        pickler.dump(item)
    pickler.dump(None)
    added = pool.verdicts.added() if pool.verdicts is not None else {}
    # By file content key, as the store keeps them (`VerdictStore.added`); a batch ends once it
    # holds `VERDICT_BATCH` verdicts, a file's never split.
    batch: dict[str, dict[bytes, Any]] = {}
    held = 0
    for file_key, entries in added.items():
        batch[file_key] = entries
        held += len(entries)
        if held >= VERDICT_BATCH:
            pickle.dump(batch, out, protocol=pickle.HIGHEST_PROTOCOL)
            batch, held = {}, 0
    if batch:
        pickle.dump(batch, out, protocol=pickle.HIGHEST_PROTOCOL)
    pickle.dump(None, out, protocol=pickle.HIGHEST_PROTOCOL)


def _collect(child: tuple[int, int], keys: Container[UnitKey], pool: Pool) -> dict[UnitKey, RuleResult] | None:
    """The child's results, or None if it failed: read as the child streams them (`_send`), a frame
    at a time, and the verdicts it added merged into the pool's store a batch at a time. This
    process holds its own results by then, and the run's memory peaks here: it never holds the
    pickled text whole, nor a copy of it joined, nor the child's verdicts as a map of their own. A
    unit this process did not queue, or anything but what `_send` writes, fails the child."""
    pid, read = child
    units: dict[UnitKey, RuleResult] = {}
    ended = False
    try:
        with os.fdopen(read, "rb") as stream:
            # Unpickling runs code the data names: this is our own child's output, through our own pipe.
            receiver = _Receiver(stream, pool.objects)
            while (item := receiver.load()) is not None:
                unit, result = item
                if unit not in keys:
                    raise ValueError(f"a unit not queued: {unit!r}")
                units[unit] = result
            # A pickle of its own per batch, read by a new unpickler: its memo goes with the batch.
            while (batch := pickle.load(stream)) is not None:
                if pool.verdicts is not None:
                    pool.verdicts.update(batch)
            ended = True
    except Exception:
        pass  # a failed child: its units are run here
    finally:
        if not ended:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)  # it may be blocked writing what is no longer read
        _, status = os.waitpid(pid, 0)
    return units if ended and os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0 else None


def _ready_first(pools: Sequence[Pool]) -> Iterator[tuple[Pool, tuple[int, int]]]:
    """Every child of `pools`, each taken from its pool's list as it is given: first those whose
    pipe holds something to read (or its end), in pool order, then, waiting for the next one
    that does, the others. A child writes only once it has run all it took, so the one given is
    done and its results are read as fast as it writes them. In pool order, this process waited
    for the latest pool's child, which usually ends last, while an earlier pool's child, done
    long before, waited with its results half written in the pipe: those were then written and
    read after the last child had ended, one process working while the other CPU had nothing
    left (docs/performance.md, "`--jobs 2`'s tail: the children's results read as they are
    done")."""
    import select

    waiting = [(pool, child) for pool in pools for child in pool._children]
    poller = select.poll()
    for _, (_, read) in waiting:
        poller.register(read, select.POLLIN)
    while waiting:
        ready = {fd for fd, _ in poller.poll()}
        for pool, child in [(pool, child) for pool, child in waiting if child[1] in ready]:
            waiting.remove((pool, child))
            poller.unregister(child[1])
            pool._children.remove(child)
            yield pool, child


def _die_with_parent() -> None:
    from policylint.input.workerside import set_parent_death_signal

    set_parent_death_signal()  # Linux; elsewhere can_fork() is false
