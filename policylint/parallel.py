"""Loading many files: from the parse cache when it has them, else parsed, in worker processes with `--jobs`.

With `--jobs N`, N - 1 worker processes and this one parse the files the
cache lacks. Workers receive a file's bytes and return the cache's compact
form of the result (marshal of plain tuples, see policylint.cache) rather than
rich objects: that is cheap to send back and to turn into documents. Results are
placed by the file's position in the input, so the output does not depend on
which worker finishes first. Small inputs are parsed in this process: starting
workers costs more than it saves below `PARALLEL_MIN_BYTES`.
"""

from __future__ import annotations

import gc
import os
from collections.abc import Iterator, Sequence

from policylint import load
from policylint.cache import ParseCache, dumps, loads, pack, unpack
from policylint.load import FileResult
from policylint.sources import Source

# Below this many bytes to parse, a pool costs more than it saves: starting a worker
# (interpreter + loader imports) takes ~0.1 s and parsing runs at ~5 MB/s; measured, two jobs
# break even at ~0.7 MB and gain from ~1.4 MB on (docs/performance.md).
PARALLEL_MIN_BYTES = 1024 * 1024
# "spawn" starts clean interpreters: safe whatever threads or state the caller has (fork is
# not), the workers import only the loader, and it measured as fast as fork and forkserver
# here, since this process parses while the workers start (docs/performance.md).
START_METHOD = "spawn"


def effective_jobs(jobs: int) -> int:
    """`--jobs 0` means one worker per CPU this process may run on."""
    if jobs > 0:
        return jobs
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


def load_files(sources: Sequence[Source], *, cache: ParseCache | None = None, jobs: int = 1) -> Iterator[tuple[Source, FileResult]]:
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
    for i, source in enumerate(sources):
        if source.content is not None:
            results[i] = load.load_source(source)  # stdin: never cached
            continue
        data, problem = load.read_bytes(source)
        if problem is not None or data is None:
            results[i] = FileResult([], [problem] if problem is not None else [])
            continue
        key = None
        if cache is not None:
            key = cache.key(data)
            packed = cache.get(key)
            if packed is not None:
                results[i] = unpack(packed, source.display)
                continue
        if jobs > 1:
            pending.append((i, data, key))  # parsed below, maybe in workers
        else:
            results[i] = _parse(data, source.display, key, cache)
    if pending:
        jobs = min(jobs, len(pending)) if _may_start_workers() else 1
        if jobs > 1 and sum(len(data) for _, data, _ in pending) >= PARALLEL_MIN_BYTES:
            _parse_in_workers(sources, pending, results, cache, jobs)
        for i, data, key in pending:
            if results[i] is None:
                results[i] = _parse(data, sources[i].display, key, cache)
    if cache is not None:
        cache.prune()
    return results  # type: ignore[return-value]


def _may_start_workers() -> bool:
    # Never from inside a worker: "spawn" re-imports the caller's main module in each worker, and
    # a script without an `if __name__ == "__main__"` guard would otherwise start pools of its own.
    import multiprocessing

    return multiprocessing.parent_process() is None


def _parse(data: bytes, file: str, key: str | None, cache: ParseCache | None) -> FileResult:
    result = load.load_bytes(data, file)
    if cache is not None and key is not None:
        try:
            cache.put(key, dumps(pack(result)))
        except ValueError:
            pass  # nothing the loader produces, but a cache must never fail a run
    return result


def _parse_in_workers(
    sources: list[Source],
    pending: list[tuple[int, bytes, str | None]],
    results: list[FileResult | None],
    cache: ParseCache | None,
    jobs: int,
) -> None:
    """Fill `results` for the pending files with `jobs - 1` workers and this process.

    This process is one of the `jobs`: while the workers start (an interpreter each), it already
    parses, taking files from the end of the queue that no worker has claimed yet. Files that a
    failing pool leaves unset are parsed by the caller.
    """
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    cache_dir = cache.directory if cache is not None else None
    # Largest first for the workers, so that none is left with a big file at the end;
    # this process works from the other end.
    order = sorted(pending, key=lambda p: -len(p[1]))
    try:
        with ProcessPoolExecutor(
            max_workers=jobs - 1, mp_context=multiprocessing.get_context(START_METHOD), initializer=_init_worker
        ) as pool:
            futures = [pool.submit(_worker_parse, data, sources[i].display, key, cache_dir) for i, data, key in order]
            for (i, data, key), future in zip(reversed(order), reversed(futures)):
                if not future.cancel():
                    break  # a worker has it already, and every file before it
                results[i] = _parse(data, sources[i].display, key, cache)
            for (i, _, key), future in zip(order, futures):
                if future.cancelled():
                    continue
                try:
                    payload = future.result()
                except Exception:  # a worker died (BrokenProcessPool) or failed: the caller parses it
                    continue
                results[i] = unpack(loads(payload), sources[i].display)
                if cache is not None and key is not None:
                    cache.note_written(key)
    except (OSError, ImportError, RuntimeError):
        # No processes on this platform (no sem_open, process limit): the files not done yet
        # are parsed in this process, with the same results.
        pass


_WORKER_CACHE: ParseCache | None = None


def _init_worker() -> None:
    gc.disable()


def _worker_parse(data: bytes, file: str, key: str | None, cache_dir: str | None) -> bytes:
    global _WORKER_CACHE
    payload = dumps(pack(load.load_bytes(data, file)))
    if cache_dir is not None and key is not None:
        if _WORKER_CACHE is None or _WORKER_CACHE.directory != cache_dir:
            _WORKER_CACHE = ParseCache(cache_dir)
        _WORKER_CACHE.put(key, payload)
    return payload
