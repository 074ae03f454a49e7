"""Parsing with forked workers and no thread in this process (`--jobs`, where a fork is safe).

A worker forked from this process holds the files to parse already: nothing is sent to it, and
nothing in this process has to hand it work or read its results while this process parses. So
where `parallel.start_method` forks, the pool of `policylint.input.parallel` (its manager and
feeder threads, which took the GIL from this process at every step, the files pickled to the
worker, its results pickled back) is not used. The work is a queue: a pipe filled, before the
fork, with the number of every batch of files (`parallel.BATCH_BYTES`), largest first, from which
each process, this one included, reads one number at a time (a read of a pipe is atomic, so no
batch is taken twice) until it is empty. A worker writes each file's result (the marshalled form
`workerside._worker_parse` gives, made this process's own by `workerside._Received`) to a pipe of its
own, which this process reads without waiting after each file it parses, and to its end once the
queue is empty. Results are placed by the file's position, so the output is `--jobs 1`'s.

A worker that fails on a file sends that file as failed; a worker that dies, or cannot be forked,
leaves what it did not send to the caller, which parses it: the same results, later. When this
process unwinds (an error, a stop signal turned into an exception by the command), it kills and
reaps the workers before going on; when it is killed outright, they die with it
(`workerside._exit_with_parent`).
"""

from __future__ import annotations

import os
import signal
import struct
from collections.abc import Callable, Sequence

from policylint.input import load, workerside
from policylint.input.cache import ParseCache
from policylint.input.load import FileResult
from policylint.input.sources import Source
from policylint.values import frozen

# Batches are queued as 2-byte numbers, at most this many, so that the whole queue fits in a pipe's
# buffer (4 KiB is less than any Linux pipe holds) and filling it never blocks; past this many
# batches of `BATCH_BYTES`, the batches are made larger.
MAX_BATCHES = 2048
# Each result a worker sends: the file's position in the queue's order and its payload's length
# (`_FAILED`: the worker failed on the file), then the payload.
_HEADER = struct.Struct("<II")
_FAILED = 0xFFFFFFFF
# The buffer asked for a worker's pipe (F_SETPIPE_SZ; 1 MiB is Linux's default cap for a process
# that is not privileged). A worker writes a 64 KiB batch's results, about twice its bytes, while
# this process parses a file or two: with the default 64 KiB it would wait for this process to read.
PIPE_BYTES = 1 << 20
_F_SETPIPE_SZ = 1031  # from <linux/fcntl.h>; `fcntl.F_SETPIPE_SZ` from Python 3.10 on Linux
READ_BYTES = 1 << 20

Pending = list[tuple[int, bytes, str | None]]


@frozen
class Parsing:
    """How the caller parses: files of up to `batch_bytes` together in a batch, a file in this
    process with `here`, in a worker with `there` (`workerside._parse`, `workerside._worker_parse`:
    the caller passes the ones it holds, so that its pool and the forked workers parse alike)."""

    batch_bytes: int
    here: Callable[[bytes, str, str | None, ParseCache | None, load.Shared | None], FileResult]
    there: Callable[[bytes, str, str | None, str | None], bytes]


def parse(
    sources: Sequence[Source],
    pending: Pending,
    results: list[FileResult | None],
    cache: ParseCache | None,
    jobs: int,
    strings: load.Shared | None = None,
    *,
    how: Parsing,
) -> None:
    """Fill `results` for the pending files with `jobs - 1` forked workers and this process; the
    files no worker answered are left unset, for the caller to parse."""
    order = sorted(pending, key=lambda p: -len(p[1]))
    batches = _batches([len(data) for _, data, _ in order], how.batch_bytes)
    queue = _queue(len(batches))
    if queue is None:
        return
    workers: list[_Worker] = []
    try:
        with workerside._stop_signals_blocked():
            for _ in range(jobs - 1):
                worker = _fork(queue, order, batches, sources, cache, [w.fd for w in workers], how.there)
                if worker is None:
                    break
                workers.append(worker)
        if not workers:
            return
        received = workerside._Received(strings)
        while len(got := os.read(queue, 2)) == 2:
            start, end = batches[int.from_bytes(got, "big")]
            for position in range(start, end):
                i, data, key = order[position]
                results[i] = how.here(data, sources[i].display, key, cache, strings)
                for worker in workers:
                    worker.take(order, sources, results, cache, received, block=False)
        for worker in workers:
            worker.take(order, sources, results, cache, received, block=True)
    finally:
        os.close(queue)
        # Every worker that has not ended is killed before any is waited for: a stop signal that
        # interrupts a wait leaves none running.
        for worker in workers:
            worker.stop()
        for worker in workers:
            worker.reap()


def _batches(sizes: Sequence[int], limit: int) -> list[tuple[int, int]]:
    """The queue's batches of files, as ranges of positions in `sizes` (largest first): runs of
    files of up to `limit` bytes together, a larger file alone; larger batches where that would
    make more than `MAX_BATCHES`."""
    while True:
        batches: list[tuple[int, int]] = []
        start = 0
        while start < len(sizes):
            end, size = start + 1, sizes[start]
            while end < len(sizes) and size + sizes[end] <= limit:
                size += sizes[end]
                end += 1
            batches.append((start, end))
            start = end
        if len(batches) <= MAX_BATCHES:
            return batches
        limit *= 2


def _queue(count: int) -> int | None:
    """The read end of a pipe holding the numbers 0 to `count - 1`; its write end closed, so that
    an empty queue reads as its end. None when no pipe can be made."""
    try:
        read, write = os.pipe()
    except OSError:
        return None
    try:
        os.write(write, b"".join(n.to_bytes(2, "big") for n in range(count)))
    finally:
        os.close(write)
    return read


def _fork(
    queue: int,
    order: Pending,
    batches: list[tuple[int, int]],
    sources: Sequence[Source],
    cache: ParseCache | None,
    siblings: Sequence[int],
    worker_parse: Callable[[bytes, str, str | None, str | None], bytes],
) -> _Worker | None:
    """A worker forked to take batches from `queue`, parsing with `worker_parse`, or None when none
    can be. `siblings`: the read ends of the workers forked before, closed in this one."""
    try:
        read, write = os.pipe()
    except OSError:
        return None
    widen(write)  # a smaller pipe only makes the worker wait for this process more often
    parent = os.getpid()
    try:
        pid = os.fork()
    except OSError:
        os.close(read)
        os.close(write)
        return None
    if pid == 0:  # the worker: parse what it takes, send it, and leave without the parent's cleanup
        code = 1
        try:
            os.close(read)
            for fd in siblings:
                os.close(fd)
            workerside._init_worker(parent)
            _work(queue, write, order, batches, sources, cache.directory if cache is not None else None, worker_parse)
            code = 0
        finally:
            os._exit(code)
    os.close(write)
    os.set_blocking(read, False)
    return _Worker(pid, read)


def widen(pipe: int) -> None:
    """Ask for `PIPE_BYTES` of buffer in `pipe`, so that its writer seldom waits for its reader;
    where the system refuses, the pipe keeps its size, and the writer only waits more often."""
    try:
        import fcntl

        fcntl.fcntl(pipe, getattr(fcntl, "F_SETPIPE_SZ", _F_SETPIPE_SZ), PIPE_BYTES)
    except (ImportError, OSError):
        pass


def _work(
    queue: int,
    out: int,
    order: Pending,
    batches: list[tuple[int, int]],
    sources: Sequence[Source],
    cache_dir: str | None,
    worker_parse: Callable[[bytes, str, str | None, str | None], bytes],
) -> None:
    """In a worker: each batch taken from `queue` parsed, its results written to `out` together."""
    while len(got := os.read(queue, 2)) == 2:
        start, end = batches[int.from_bytes(got, "big")]
        parts: list[bytes] = []
        for position in range(start, end):
            i, data, key = order[position]
            try:
                payload = worker_parse(data, sources[i].display, key, cache_dir)
            except Exception:
                parts.append(_HEADER.pack(position, _FAILED))  # parsed again by this process
                continue
            parts += (_HEADER.pack(position, len(payload)), payload)
        view = memoryview(b"".join(parts))
        while view:
            view = view[os.write(out, view) :]


class _Worker:
    """A forked worker, and what this process has read of its results."""

    def __init__(self, pid: int, fd: int) -> None:
        self.pid = pid
        self.fd = fd
        self.buffer = bytearray()
        self.ended = False

    def take(
        self,
        order: Pending,
        sources: Sequence[Source],
        results: list[FileResult | None],
        cache: ParseCache | None,
        received: workerside._Received,
        *,
        block: bool,
    ) -> None:
        """Place the results the worker has sent (`block`: all it will send, until it ends)."""
        if self.ended:
            return
        if block:
            os.set_blocking(self.fd, True)
        while True:
            try:
                chunk = os.read(self.fd, READ_BYTES)
            except BlockingIOError:
                return
            except OSError:
                chunk = b""
            if not chunk:
                self.ended = True
                return
            self.buffer += chunk
            self._place(order, sources, results, cache, received)
            if not block and len(chunk) < READ_BYTES:
                return

    def _place(
        self,
        order: Pending,
        sources: Sequence[Source],
        results: list[FileResult | None],
        cache: ParseCache | None,
        received: workerside._Received,
    ) -> None:
        buffer, at, size = self.buffer, 0, _HEADER.size
        while len(buffer) - at >= size:
            position, length = _HEADER.unpack_from(buffer, at)
            if length == _FAILED:
                at += size
                continue  # parsed again by the caller
            if len(buffer) - at - size < length:
                break
            payload = bytes(buffer[at + size : at + size + length])
            at += size + length
            i, _, key = order[position]
            result = received.result(payload, sources[i].display, cache, key)
            if result is not None:
                results[i] = result
        del buffer[:at]

    def stop(self) -> None:
        """Close the pipe; a worker that has not ended (this process is unwinding) is killed:
        nothing waits on it."""
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1
        if not self.ended:
            try:
                os.kill(self.pid, signal.SIGKILL)
            except OSError:
                pass

    def reap(self) -> None:
        try:
            os.waitpid(self.pid, 0)
        except ChildProcessError:
            pass
