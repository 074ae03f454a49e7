"""What a `--jobs` parse worker runs, and what the process that starts it shares with it.

The pool of `policylint.input.parallel` and the forked workers of `policylint.input.forked` start
workers the same way (`_stop_signals_blocked`, `_init_worker`: stop signals, the collector, dying
with the parent), parse a file the same way (`_worker_parse` in a worker, `_parse` in this process)
and take a worker's results as this process's own the same way (`_Received`). They are here, below
both, so that neither of the two ways imports the other.
"""

from __future__ import annotations

import gc
import marshal
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from policylint.identity import IdentityMap
from policylint.input import load
from policylint.input.cache import ParseCache, dumps, pack, unpack
from policylint.input.load import FileResult
from policylint.input.sharing import shared_list, shared_map, shared_tree

# prctl(2) option PR_SET_PDEATHSIG, from <linux/prctl.h>.
_PR_SET_PDEATHSIG = 1


def _parse(data: bytes, file: str, key: str | None, cache: ParseCache | None, strings: load.Shared | None = None) -> FileResult:
    result = load.load_bytes(data, file, strings=strings)
    if cache is not None and key is not None:
        try:
            cache.put(key, dumps(pack(result)))
        except ValueError:
            pass  # nothing the loader produces, but a cache must never fail a run
    return result


class _Received:
    """Takes the workers' packed results as this process's own: every map and list the run's one
    of its content (`policylint.input.sharing`), as if this process had parsed the file.

    A pool's worker shares the maps and lists of all the files it parses, and sends each once
    (`_Numbering`): a later one is its number, `(n,)` (the documents hold no tuple: JSON's types
    only). So each is made the run's one once, not at every place a file repeats it (three in
    four maps and lists of the benchmark's corpora repeat one before them); a worker's numbers are
    its files' in the order it sent them, which `numbered` (per worker, by its pid) follows. A
    result that does not start at the number this process is at (one before it was lost: a batch
    that failed, a payload that did not decode) raises: its file, and every later one of that
    worker, is parsed again by the caller, never read with numbers it does not know. A result
    without numbers (`_worker_parse` outside a pool) is shared map by map."""

    def __init__(self, strings: load.Shared | None) -> None:
        self.strings: load.Shared = strings if strings is not None else {}
        self.numbered: dict[int, list[Any]] = {}

    def own(self, payload: Any) -> Any:
        if len(payload) == 2:
            documents, issues = payload
            return tuple((*row[:5], shared_tree(self.strings, row[5])) for row in documents), issues
        (worker, base, count), documents, issues = payload
        held = self.numbered.setdefault(worker, [])
        if base != len(held):
            raise ValueError(f"numbers from {base}, this process is at {len(held)}")
        table = self.strings
        try:
            documents = tuple((*row[:5], _owned(row[5], held, table)) for row in documents)
            if len(held) != base + count:
                raise ValueError(f"{len(held) - base} maps and lists numbered, the worker numbered {count}")
        except BaseException:
            del held[base:]
            raise
        return documents, issues

    def result(self, payload: bytes, file: str, cache: ParseCache | None, key: str | None) -> FileResult | None:
        """The file's result from a worker's marshalled `payload` (`own`), noted as written to the
        cache under `key` where the worker wrote it; None where it cannot be taken (its file is
        parsed again by the caller, as is any later file of a worker whose numbers it lost).
        marshal, not the cache's checked JSON: the payload comes from this run's own worker (forked
        from this process, or through a pool's pickle channel, trusted as much), never from disk."""
        try:
            documents, issues = self.own(marshal.loads(payload))
        except Exception:
            return None
        result = unpack((documents, issues), file)
        if cache is not None and key is not None:
            cache.note_written(key)
        return result


def _owned(value: Any, held: list[Any], table: load.Shared) -> Any:
    """`value` made this process's own (`_Received.own`): a number, `(n,)`, the map or list `held`
    at it; a map or list the run's one of its content, numbered. A function of the module, not a
    closure in `own`: a closure that calls itself is a reference cycle, one per file, and with the
    collector off for the run each held the loader's table (the strings and texts of the run) and
    the worker's numbered maps and lists to the end of the run (47 MiB at 20,000 objects)."""
    cls = value.__class__
    if cls is tuple:
        return held[value[0]]
    out: Any
    if cls is dict:
        for k, v in value.items():
            if v.__class__ is dict or v.__class__ is list or v.__class__ is tuple:
                value[k] = _owned(v, held, table)
        out = shared_map(table, value)
    elif cls is list:
        for i, v in enumerate(value):
            if v.__class__ is dict or v.__class__ is list or v.__class__ is tuple:
                value[i] = _owned(v, held, table)
        out = shared_list(table, value)
    else:
        return value
    held.append(out)  # children first, in the worker's order (`_Numbering.marked`)
    return out


class _Numbering:
    """What a pool's worker sent of its maps and lists: each by its identity (the worker's loader
    shares them across its files, `shared`, so a repeated one is one object), numbered in the
    order sent (`held`)."""

    def __init__(self) -> None:
        self.shared: load.Shared = {}
        self.numbers: IdentityMap[Any, int] = IdentityMap()
        self.held: list[Any] = []

    def marked(self, value: Any) -> Any:
        """`value` with each map and list sent before as its number `(n,)`, the others numbered,
        children first; the documents themselves are never changed (a copy is made of what holds
        a number)."""
        cls = value.__class__
        if cls is not dict and cls is not list:
            return value
        number = self.numbers.get(value)
        if number is not None:
            return (number,)
        marked = self.marked
        if cls is dict:
            out: Any = {k: marked(v) if v.__class__ is dict or v.__class__ is list else v for k, v in value.items()}
        else:
            out = [marked(v) if v.__class__ is dict or v.__class__ is list else v for v in value]
        self.numbers[value] = len(self.held)
        self.held.append(value)
        return out

    def forget(self, base: int) -> None:
        """Take back the numbers from `base` on."""
        for value in self.held[base:]:
            del self.numbers[value]
        del self.held[base:]


# Signals the command turns into an orderly stop (policylint.entry); absent ones are skipped.
_STOP_SIGNALS = frozenset(getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, name))


@contextmanager
def _stop_signals_blocked() -> Iterator[None]:
    """Block the stop signals in this thread while it starts workers; they inherit the mask.

    In this process, a stop signal that arrived halfway through starting a worker (after the
    fork, before the worker got its instructions through a pipe) would leave that worker printing
    an EOFError traceback. A blocked signal is not lost: it is delivered here when the mask is
    restored, a few milliseconds later. Only this thread is affected; threads the pool starts
    meanwhile inherit the mask, so the signal still comes to this one.

    In the workers, SIGINT stays blocked: Ctrl-C in a terminal reaches the whole process group,
    and each worker would print a KeyboardInterrupt traceback; this process handles it and stops
    them. `_init_worker` unblocks the others, so that SIGTERM (`Process.terminate`) still ends a
    worker.
    """
    if not hasattr(signal, "pthread_sigmask"):  # Windows: `_init_worker` ignores SIGINT instead
        yield
        return
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, _STOP_SIGNALS)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


_WORKER_CACHE: ParseCache | None = None
# What this pool worker sent of its maps and lists (`_Numbering`); None outside a pool's worker.
_WORKER_NUMBERING: _Numbering | None = None


def _init_worker(parent: int) -> None:
    """Runs first in every worker; `parent` is the pid of the process that started the pool."""
    global _WORKER_NUMBERING
    gc.disable()
    _WORKER_NUMBERING = _Numbering()
    # The main process handles Ctrl-C and stops the workers (see `_stop_signals_blocked`).
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    # A forked worker holds the command's handlers of the other stop signals, which raise where
    # they interrupt it: SIGTERM (`Process.terminate`) ends it, as it ends a spawned one.
    for stop in _STOP_SIGNALS - {signal.SIGINT}:
        signal.signal(stop, signal.SIG_DFL)
    if hasattr(signal, "pthread_sigmask"):
        signal.pthread_sigmask(signal.SIG_UNBLOCK, _STOP_SIGNALS - {signal.SIGINT})
    _exit_with_parent(parent)


def _exit_with_parent(parent: int, *, use_prctl: bool = True) -> None:
    """Make this worker die with the process that started it, however that one ends.

    A SIGKILL (or an OOM kill) to the main process runs none of its cleanup: without this, its
    workers would go on parsing files nobody waits for, for as long as their queue lasts. On
    Linux the kernel kills the worker when its parent thread exits (prctl(2) PR_SET_PDEATHSIG;
    the thread that starts the pool waits for it, so that is the parent process ending). Elsewhere,
    or when prctl is unavailable, a daemon thread watches the parent and ends the worker.
    """
    if use_prctl and sys.platform.startswith("linux") and set_parent_death_signal():
        # The parent may have died before prctl took effect; then no signal will come.
        if os.getppid() != parent:
            os._exit(1)
        return
    threading.Thread(target=_watch_parent, args=(parent,), name="policylint-parent-watchdog", daemon=True).start()


def set_parent_death_signal() -> bool:
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        return int(libc.prctl(_PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)) == 0
    except (OSError, AttributeError):  # no libc symbol, or not allowed
        return False


def _watch_parent(parent: int) -> None:
    import multiprocessing

    # The parent's sentinel (a pipe on POSIX, a process handle on Windows) is ready when the parent
    # ends, even where an orphan's parent pid does not change (Windows); the pid check covers a
    # worker started some other way.
    handle = multiprocessing.parent_process()
    while os.getppid() == parent and (handle is None or handle.is_alive()):
        if handle is not None:
            handle.join(1.0)
        else:
            time.sleep(0.5)
    os._exit(1)


def _worker_parse_batch(
    parse: Callable[[bytes, str, str | None, str | None], bytes],
    items: list[tuple[bytes, str, str | None]],
    cache_dir: str | None,
) -> list[bytes | None]:
    """Parse a batch of files in a worker; None for a file the worker failed on (its caller parses it)."""
    payloads: list[bytes | None] = []
    for data, file, key in items:
        try:
            payloads.append(parse(data, file, key, cache_dir))
        except Exception:
            payloads.append(None)
    return payloads


def _worker_parse(data: bytes, file: str, key: str | None, cache_dir: str | None) -> bytes:
    global _WORKER_CACHE
    numbering = _WORKER_NUMBERING
    packed = pack(load.load_bytes(data, file, strings=numbering.shared if numbering is not None else None))
    if cache_dir is not None and key is not None:
        if _WORKER_CACHE is None or _WORKER_CACHE.directory != cache_dir:
            _WORKER_CACHE = ParseCache(cache_dir)
        _WORKER_CACHE.put(key, dumps(packed))
    # Version 4 keeps strings' interned flag (marshal interns them again as it reads them) and
    # writes an object met twice (a YAML alias) once, as this process's own loader shares it.
    if numbering is None:
        return marshal.dumps(packed, 4)
    base = len(numbering.held)
    try:
        documents = tuple((*row[:5], numbering.marked(row[5])) for row in packed[0])
        return marshal.dumps(((os.getpid(), base, len(numbering.held) - base), documents, packed[1]), 4)
    except BaseException:
        numbering.forget(base)  # numbers never sent are given again to the next file's
        raise
