"""Loading many files: from the parse cache when it has them, else parsed, in worker processes with `--jobs`.

With `--jobs N`, N - 1 worker processes and this one parse the files the
cache lacks. Where a fork is safe (`start_method`), the workers are forked and take
the files they hold already from a queue, with no pool and no thread in this process
(policylint.input.forked); elsewhere they are spawned by a pool, which sends each
worker files' bytes (small files in batches, `BATCH_BYTES`). Workers
return the cache's compact form of each result (plain tuples, see
policylint.input.cache) rather than rich objects, marshalled: that is cheap to
send back and to turn into documents, and the loader's interned keys and short
values come back interned, one object each across all files, as when this
process parses them. Results are
placed by the file's position in the input, so the output does not depend on
which worker finishes first. Small inputs are parsed in this process: starting
workers costs more than it saves below `PARALLEL_MIN_BYTES`.

Workers never outlive the run and never hold it up. A pool that cannot start,
a worker that dies (the OOM killer, a signal) or raises only means this process
parses the files not done, with the same results; nothing waits on a worker
that is gone. When this process unwinds (an error, SIGINT or SIGTERM turned
into an exception by the command), it stops the workers before going on; when
it is killed outright, the workers die with it (see `workerside._exit_with_parent`).
"""

from __future__ import annotations

import gc
import os
import sys
import threading
import time
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

from policylint.input import load
from policylint.input.cache import ParseCache, sharing_decoder
from policylint.input.kept import Keeper, Kept
from policylint.input.load import FileResult
from policylint.input.sources import Source
from policylint.input.workerside import (
    _init_worker,
    _parse,
    _Received,
    _stop_signals_blocked,
    _worker_parse,
    _worker_parse_batch,
)

if TYPE_CHECKING:
    from concurrent.futures import Future, ProcessPoolExecutor
    from multiprocessing.process import BaseProcess

# Below this many bytes to parse, a pool costs more than it saves: starting a worker
# (interpreter + loader imports) takes ~0.1 s and parsing runs at ~5 MB/s; measured, two jobs
# break even at ~0.7 MB and gain from ~1.4 MB on (docs/performance.md).
PARALLEL_MIN_BYTES = 1024 * 1024
# How a worker is started where `fork` is not safe: "spawn" starts clean interpreters, safe
# whatever threads or state the caller has, the workers importing only the loader.
START_METHOD = "spawn"
# Where it is (Linux, a process running no other thread: the command while it loads the files),
# a worker is forked (`start_method`): a spawned worker spent 0.13-0.15 s of CPU on its
# interpreter and imports before its first file, and its semaphores started multiprocessing's
# resource tracker, one more interpreter, while this process parsed alone; a forked one starts
# in milliseconds, with no tracker, so that this process parses fewer of the files
# (docs/performance.md, "The parse worker forked where it is safe"). A forked worker runs without
# the pool (policylint.input.forked): its threads took this process's GIL at every step.
FORK_METHOD = "fork"
# Files handed to the pool and not yet answered, per worker. Two keep a worker busy while this
# process parses one file (its files are the smallest left, the workers' the largest); the rest
# stay in this process's queue, where this process can still take them.
IN_FLIGHT_PER_WORKER = 2
# Small files go to a worker in batches of about this many bytes: one round trip through the pool
# costs about as much as parsing a 2 KB file, so a repository of small files sent one file at a
# time kept the workers waiting on this process and gained nothing (docs/performance.md).
BATCH_BYTES = 65536
# The interpreter's thread switch interval while workers parse, in seconds (CPython's default is
# 0.005). This thread holds the GIL while it parses; the pool's threads, which hand files to the
# workers and read their results back through pipes smaller than one result, wait for it at
# every step, and with the default the worker spent much of its time waiting: two jobs parsed
# the 10k corpora in 0.92-0.96 s (clean) and 0.92-1.03 s (messy), 0.76-0.84 s and 0.81-0.86 s
# with 0.5 ms (docs/performance.md).
SWITCH_INTERVAL = 0.0005
# How long to wait for a stopped worker to exit before killing it, in seconds.
STOP_GRACE = 2.0


def usable_cpus() -> int:
    """The CPUs this process may use, at least 1: those it may run on (its affinity mask, cgroup
    cpusets included), and no more than its cgroup's CPU quota lets it keep busy."""
    process_cpu_count = getattr(os, "process_cpu_count", None)  # Python 3.13+
    if process_cpu_count is not None:
        cpus = max(1, process_cpu_count() or 1)
    else:
        try:
            cpus = max(1, len(os.sched_getaffinity(0)))
        except AttributeError:  # not on Linux
            cpus = max(1, os.cpu_count() or 1)
    quota = cgroup_cpu_quota()
    return cpus if quota is None else min(cpus, quota)


def cgroup_cpu_quota(root: str = "/") -> int | None:
    """The CPUs the process's cgroups let it keep busy (CFS bandwidth: a container's `--cpus`, a
    Kubernetes CPU limit), rounded up; None where nothing limits it or Linux's files cannot be read.

    A container limited to 2 CPUs on a 64-CPU node has an affinity mask of 64: one process per
    CPU there would be 64 processes time-sliced onto 2 CPUs, each with its own memory. The quota
    is read as Rust's `std::thread::available_parallelism` reads it: for cgroup v2 (`cpu.max`)
    and v1 (`cpu.cfs_quota_us` / `cpu.cfs_period_us`), in the process's own cgroup and each
    ancestor up to the mount (`/proc/self/cgroup`, `/proc/self/mountinfo`), the smallest. `root`
    is where the file system starts (tests)."""
    try:
        with open(os.path.join(root, "proc/self/cgroup"), encoding="utf-8") as fh:
            memberships = fh.read().splitlines()
        with open(os.path.join(root, "proc/self/mountinfo"), encoding="utf-8") as fh:
            mounts = fh.read().splitlines()
    except (OSError, UnicodeDecodeError):
        return None
    v2_path = v1_path = None
    for line in memberships:
        hierarchy, _, rest = line.partition(":")
        controllers, _, path = rest.partition(":")
        if hierarchy == "0" and not controllers:
            v2_path = path
        elif "cpu" in controllers.split(","):
            v1_path = path
    found: list[int] = []
    for line in mounts:
        # "36 25 0:32 <root> <mount point> <options> [optional fields] - <type> <source> <super options>"
        fields, separator, tail = line.partition(" - ")
        before, after = fields.split(), tail.split()
        if not separator or len(before) < 5 or len(after) < 3:
            continue
        files: tuple[str, ...]
        if after[0] == "cgroup2" and v2_path is not None:
            path, files = v2_path, ("cpu.max",)
        elif after[0] == "cgroup" and "cpu" in after[2].split(",") and v1_path is not None:
            path, files = v1_path, ("cpu.cfs_quota_us", "cpu.cfs_period_us")
        else:
            continue
        mount_root, mount_point = before[3], before[4]
        # The cgroup's path below the mounted one; without a cgroup namespace a container sees
        # the host's path, and the mount holds its own cgroup at the top: the walk up finds it.
        if mount_root != "/" and (path == mount_root or path.startswith(mount_root + "/")):
            path = path[len(mount_root) :]
        limit = _quota_up(os.path.join(root, mount_point.lstrip("/")), path, files)
        if limit is not None:
            found.append(limit)
    return min(found) if found else None


def _quota_up(mount: str, path: str, files: tuple[str, ...]) -> int | None:
    """The smallest quota of the cgroup at `path` below `mount` and of each one above it."""
    parts = [p for p in path.split("/") if p and p not in (".", "..")]
    smallest: int | None = None
    for depth in range(len(parts), -1, -1):
        directory = os.path.join(mount, *parts[:depth])
        try:
            texts = []
            for name in files:
                with open(os.path.join(directory, name), encoding="ascii") as fh:
                    texts.append(fh.read())
        except (OSError, UnicodeDecodeError):
            continue
        words = texts[0].split() if len(files) == 1 else [texts[0].strip(), texts[1].strip()]
        if len(words) != 2 or not (words[0].isdigit() and words[1].isdigit()):
            continue  # "max 100000" (v2) or "-1" (v1): no quota here
        quota, period = int(words[0]), int(words[1])
        if quota > 0 and period > 0:
            limit = max(1, -(-quota // period))
            smallest = limit if smallest is None else min(smallest, limit)
    return smallest


def effective_jobs(jobs: int) -> int:
    """The processes `--jobs` asks for, capped at the CPUs this process may use.

    `0` means one per CPU. Parsing is CPU-bound, so more processes than CPUs are never faster:
    each only adds an interpreter's start-up and memory (`--jobs 100000` would start that many).
    """
    if jobs == 1:
        return 1  # the common case reads no file of /proc
    cpus = usable_cpus()
    return cpus if jobs <= 0 else min(jobs, cpus)


def load_files(
    sources: Sequence[Source], *, cache: ParseCache | None = None, jobs: int = 1
) -> Iterator[tuple[Source, FileResult]]:
    """Load every source, in input order, whatever `jobs` is."""
    # Parsing allocates many short-lived containers; the cyclic GC only slows it down.
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        results = _load_all(list(sources), cache, effective_jobs(jobs))
    finally:
        if was_enabled:
            gc.enable()
    return zip(sources, results)


def _load_all(sources: list[Source], cache: ParseCache | None, jobs: int) -> list[FileResult]:
    results: list[FileResult | None] = [None] * len(sources)
    pending: list[tuple[int, bytes, str | None]] = []
    # The bytes each file was parsed from, kept for positions (see FileResult.data), and their key.
    kept: list[Kept | None] = [None] * len(sources)
    keeper = Keeper()
    keys: list[str | None] = [None] * len(sources)
    # Keys and short values repeat across files (`apiVersion`, `HTTPRoute`, group names): the
    # files parsed here share one string object each (a repository of small files kept 20% more
    # memory in its documents with a table per file).
    strings: load.Shared = {}
    decoder = sharing_decoder(strings) if cache is not None else None  # entries share them too
    for i, source in enumerate(sources):
        if source.content is not None and not source.snapshot:
            results[i] = load.load_source(source)  # stdin: never cached
            continue
        data, problem = load.read_bytes(source)
        if problem is not None or data is None:
            results[i] = FileResult([], [problem] if problem is not None else [])
            continue
        kept[i] = keeper.keep(data)
        key = None
        if cache is not None:
            key = keys[i] = cache.key(data, json=load.is_json_name(source.display))
            # Reading, decoding and unpacking the entry all happen inside `load`: any failure is
            # a miss and the file is parsed below, never an error.
            cached = cache.load(key, source.display, decoder)
            if cached is not None:
                results[i] = cached
                continue
        if jobs > 1:
            pending.append((i, data, key))  # parsed below, maybe in workers
        else:
            results[i] = _parse(data, source.display, key, cache, strings)
    if pending:
        jobs = min(jobs, len(pending)) if _may_start_workers() else 1
        if jobs > 1 and sum(len(data) for _, data, _ in pending) >= PARALLEL_MIN_BYTES:
            _parse_in_workers(sources, pending, results, cache, jobs, strings)
        for i, data, key in pending:
            if results[i] is None:
                results[i] = _parse(data, sources[i].display, key, cache, strings)
    if cache is not None:
        cache.prune()
    for result, held, key in zip(results, kept, keys):
        if result is not None:
            result.data, result.key = held, key
    # Every slot is filled by now (each source is parsed, read from the cache or reported above).
    return results  # type: ignore[return-value]


def start_method() -> str:
    """How the workers are started: forked where that is safe, else spawned (`START_METHOD`).

    A fork copies only the thread that calls it: a lock another thread holds at that moment stays
    held in the worker for ever, so a process that runs another thread (a language server, a test
    runner, a host program) spawns. macOS's system libraries are not fork-safe either. The forked
    worker gets this process's state as it is, which `_init_worker` resets where it matters: the
    stop signals' handlers (the command's raise an exception in the thread they interrupt, where a
    spawned worker has the default, which ends it) and the maps and lists it has sent; the loader
    keeps no table between files but those it is handed."""
    import multiprocessing

    if sys.platform.startswith("linux") and runs_one_thread() and FORK_METHOD in multiprocessing.get_all_start_methods():
        return FORK_METHOD
    return START_METHOD


def runs_one_thread() -> bool:
    """Whether this process runs no thread but the calling one, so that a fork copies all of it.

    `threading` counts only the threads it started: a thread started otherwise (`_thread`, a C
    extension's, pytest-xdist's execnet channel) is not in `threading.active_count()`, and a fork
    beside it is what CPython 3.12+ warns of ("is multi-threaded, use of fork() may lead to
    deadlocks"). So on Linux the kernel's count is read too, the tasks of /proc/self/task, as
    CPython's own warning counts them; where /proc cannot be read, `threading`'s alone."""
    if threading.active_count() != 1:
        return False
    try:
        return len(os.listdir("/proc/self/task")) == 1
    except OSError:
        return True


def _may_start_workers() -> bool:
    # Never from inside a worker: "spawn" re-imports the caller's main module in each worker, and
    # a script without an `if __name__ == "__main__"` guard would otherwise start pools of its own.
    import multiprocessing

    return multiprocessing.parent_process() is None


def _parse_in_workers(
    sources: list[Source],
    pending: list[tuple[int, bytes, str | None]],
    results: list[FileResult | None],
    cache: ParseCache | None,
    jobs: int,
    strings: load.Shared | None = None,
) -> None:
    """Fill `results` for the pending files with `jobs - 1` workers and this process.

    This process is one of the `jobs`: while the workers start (`start_method`), it already
    parses, from the small end of the queue, while the workers get files from the large end, a few
    at a time. Nothing is ever taken back from the pool (`Future.cancel()` from this thread races
    with the pool marking its futures failed when a worker dies: CPython raises InvalidStateError
    in the pool's manager thread, which then never cleans up, and the run hangs at exit). Files
    that a failing pool leaves unset are parsed by the caller.
    """
    method = start_method()
    if method == FORK_METHOD:
        # Forked workers hold the files already: no pool, and no thread in this process.
        from policylint.input import forked

        forked.parse(
            sources,
            pending,
            results,
            cache,
            jobs,
            strings,
            how=forked.Parsing(BATCH_BYTES, _parse, _worker_parse),
        )
        return
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    try:
        pool = ProcessPoolExecutor(
            max_workers=jobs - 1,
            mp_context=multiprocessing.get_context(method),
            initializer=_init_worker,
            initargs=(os.getpid(),),
        )
    except (OSError, ImportError, RuntimeError, ValueError):
        # No processes on this platform (no sem_open: NotImplementedError, a RuntimeError): the
        # caller parses every file in this process, with the same results.
        return
    healthy = False
    switch = sys.getswitchinterval()
    sys.setswitchinterval(min(switch, SWITCH_INTERVAL))
    try:
        healthy = _share_work(pool, sources, pending, results, cache, jobs - 1, strings)
    finally:
        sys.setswitchinterval(switch)
        _close_pool(pool, healthy)


def _collect(
    done: Sequence[Future[list[bytes | None]]],
    in_flight: dict[Future[list[bytes | None]], range],
    order: list[tuple[int, bytes, str | None]],
    sources: list[Source],
    results: list[FileResult | None],
    cache: ParseCache | None,
    received: _Received,
) -> bool:
    """Take the results of the batches `done` into `results` (made this process's own by
    `received`); False when a worker died."""
    from concurrent.futures import BrokenExecutor

    healthy = True
    for future in done:
        batch = in_flight.pop(future)
        # exception() rather than result() in a try: it never raises what the worker raised, so
        # an exception from this process's own signal handlers is never mistaken for it.
        error = future.exception()
        if error is not None:
            # BrokenProcessPool: a worker died. Anything else: the batch failed as a whole;
            # its files, parsed again here, give whatever `--jobs 1` gives.
            healthy = healthy and not isinstance(error, BrokenExecutor)
            continue
        for position, payload in zip(batch, future.result()):
            i, _, key = order[position]
            if payload is None:  # the worker failed on this file: parsed again by the caller
                continue
            result = received.result(payload, sources[i].display, cache, key)
            if result is not None:
                results[i] = result
    return healthy


def _share_work(
    pool: ProcessPoolExecutor,
    sources: list[Source],
    pending: list[tuple[int, bytes, str | None]],
    results: list[FileResult | None],
    cache: ParseCache | None,
    workers: int,
    strings: load.Shared | None = None,
) -> bool:
    """Parse the pending files between the pool and this process; False when the pool failed.

    A worker that raised leaves its file unset and the pool healthy; a worker that died, or a pool
    that cannot start one, makes the pool unusable: this stops at once, and the caller parses what
    is left.
    """
    from concurrent.futures import FIRST_COMPLETED, wait

    cache_dir = cache.directory if cache is not None else None
    # Largest first for the workers, so that none is left with a big file at the end;
    # this process works from the other end.
    order = sorted(pending, key=lambda p: -len(p[1]))
    in_flight: dict[Future[list[bytes | None]], range] = {}  # future -> its positions in `order`
    handed_out = 0  # order[:handed_out] went to the pool
    left = len(order)  # order[left:] were parsed here
    received = _Received(strings)

    def collect(done: Sequence[Future[list[bytes | None]]]) -> bool:
        return _collect(done, in_flight, order, sources, results, cache, received)

    def hand_out() -> bool:
        nonlocal handed_out
        while handed_out < left and len(in_flight) < IN_FLIGHT_PER_WORKER * workers:
            end, size = handed_out, 0
            while end < left and (end == handed_out or size + len(order[end][1]) <= BATCH_BYTES):
                size += len(order[end][1])
                end += 1
            items = [(data, sources[i].display, key) for i, data, key in order[handed_out:end]]
            try:
                future = pool.submit(_worker_parse_batch, _worker_parse, items, cache_dir)
            except (OSError, RuntimeError):  # cannot start a worker (process limit), or broken
                return False
            in_flight[future] = range(handed_out, end)
            handed_out = end
        return True

    # The first hand-out starts the workers (one per submit, up to `workers`).
    with _stop_signals_blocked():
        healthy = hand_out()
    while healthy:
        if handed_out < left:
            left -= 1
            i, data, key = order[left]
            results[i] = _parse(data, sources[i].display, key, cache, strings)
        elif in_flight:
            # All that is left is in the workers. The pool wakes this wait when a worker dies
            # (BrokenProcessPool on every future); the timeout is a second line of defence, in
            # case a worker is gone and the pool has not noticed.
            wait(in_flight, timeout=1.0, return_when=FIRST_COMPLETED)
            if not any(f.done() for f in in_flight) and not all(p.is_alive() for p in _processes(pool)):
                return False
        else:
            return True
        healthy = collect([f for f in in_flight if f.done()]) and hand_out()
    # Keep what the workers finished before the pool failed; the caller parses the rest.
    collect([f for f in in_flight if f.done() and f.exception() is None])
    return False


def _processes(pool: ProcessPoolExecutor) -> list[BaseProcess]:
    # The executor has no public way to its processes; `_processes` (pid -> Process) has been
    # there since Python 3.2. It is None after shutdown, hence the snapshot before it.
    return list((getattr(pool, "_processes", None) or {}).values())


def _close_pool(pool: ProcessPoolExecutor, healthy: bool) -> None:
    """Shut the pool down without ever waiting on a worker that may never answer.

    A healthy pool whose every file is answered has idle workers: a normal shutdown returns at
    once. Otherwise (a worker died or hangs, or this process is unwinding from an error or a signal)
    `shutdown(wait=True)` could wait forever on what a dead worker left half done: the pool is
    told to cancel what it has not started, and the workers are terminated, then killed.
    """
    processes = _processes(pool)
    # Like `_processes`: the pool's manager thread, None once shut down.
    manager: threading.Thread | None = getattr(pool, "_executor_manager_thread", None)
    # And its task queue: see `_stop`.
    call_queue = getattr(pool, "_call_queue", None)
    if healthy:
        try:
            pool.shutdown(wait=True)
            return
        except BaseException:
            _stop(processes, manager, call_queue)
            raise
    pool.shutdown(wait=False, cancel_futures=True)
    _stop(processes, manager, call_queue)


def _stop(processes: Sequence[BaseProcess], manager: threading.Thread | None, call_queue: Any = None) -> None:
    for process in processes:
        if process.is_alive():
            process.terminate()
    deadline = time.monotonic() + STOP_GRACE
    for process in processes:
        process.join(max(0.0, deadline - time.monotonic()))
        if process.is_alive():
            process.kill()
            process.join(STOP_GRACE)
    if manager is not None:
        # With its workers gone, the manager thread finds the pool broken and cleans up at once. Let
        # it finish here: at interpreter exit, CPython 3.11 wakes it through a pipe that it may be
        # closing at that very moment ("Exception ignored ... OSError: Bad file descriptor").
        manager.join(STOP_GRACE)
    reader = getattr(call_queue, "_reader", None)
    if (
        reader is not None
        and not hasattr(call_queue, "_terminate_broken")
        and not reader.closed
        and (manager is None or manager.is_alive())
    ):
        # With every worker gone, nothing reads the task pipe: a feeder thread blocked writing a
        # large file into it would block forever, and with it the pool's manager thread and this
        # process's exit (CPython before the fix of gh-94777; the run hung after a worker was
        # killed). Closing this process's read end makes that write fail. A CPython with the fix
        # (3.11.7 among others, every 3.12) closes it itself, in the manager thread, as it finds
        # the pool broken: closing it here while that thread may be doing so races with it, and the
        # loser's "OSError: Bad file descriptor" traceback was printed. So the manager thread is
        # given its grace first, and the read end closed here only if it is still open behind a
        # manager thread that has not finished.
        try:
            reader.close()
        except OSError:
            pass
        if manager is not None:
            manager.join(STOP_GRACE)
