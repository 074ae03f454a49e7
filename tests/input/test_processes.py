"""Processes and signals: a run never hangs, never leaves a process behind, and exits with the code
its findings (or the signal that stopped it) give.

These tests run the real command in subprocesses, always with a timeout, so that a regression
fails instead of hanging the suite. They find `--jobs` workers as children of the command through
/proc, and wait for processes to end only up to generous bounds.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from policylint.input import parallel
from policylint.rules import engine, workers
from tests.manifests import first, gateway, gateway_class, policy, route, service

LINUX = sys.platform.startswith("linux")
linux_only = pytest.mark.skipif(not LINUX, reason="reads /proc and uses Linux prctl(2); CI runs Linux")
REPO = Path(__file__).resolve().parents[2]
# Bounds for a subprocess to finish, and for processes to be gone. Far above what a run needs
# (a few seconds), so that a loaded machine never fails a test; a hang still fails it.
RUN_TIMEOUT = 180.0
GONE_TIMEOUT = 20.0
FILES = 4
MISSING_ROUTE = "[{group: gateway.networking.k8s.io, kind: HTTPRoute, name: missing}]"

# The command as the console script runs it (`entry.main()` with no argv: signal handlers and
# guarded standard streams installed). On a machine with a single usable CPU, `--jobs` is capped
# to 1 and no worker would start, so there the cap is raised to 2 in the command's process; with
# two CPUs or more this is the unmodified command.
_COMMAND = """\
import signal, sys
# As a shell starts a command: SIGINT handled by Python's default handler. The test's own process
# may ignore SIGINT (a pytest-xdist worker can), and an ignored signal is inherited across exec
# (signal(7)); the command then rightly keeps ignoring it, as under nohup, and a Ctrl-C test would
# see the run finish (exit 1) instead of stop (exit 130).
signal.signal(signal.SIGINT, signal.default_int_handler)
from policylint import entry
from policylint.input import parallel
from policylint.rules import engine, workers
if parallel.usable_cpus() < 2:
    parallel.usable_cpus = lambda: 2
sys.argv[0] = "policylint"
raise SystemExit(entry.main())
"""


def _filler(ns: str, entries: int) -> str:
    """A document of a kind no rule reads, there only to make the file slow to parse."""
    items = "".join(f"    - {{key: k{j:05d}, weight: {j}, tags: [a, b, c], note: value-{j}}}\n" for j in range(entries))
    return (
        f"---\napiVersion: example.com/v1\nkind: Padding\nmetadata: {{name: padding, namespace: {ns}}}\nspec:\n  items:\n{items}"
    )


def write_corpus(root: Path, total_bytes: int) -> list[str]:
    """FILES files of about equal size, `total_bytes` in all; each has exactly one error (PL201).

    Each file holds a Gateway, a Service, an HTTPRoute and a policy whose targetRef names an
    HTTPRoute `missing` that exists nowhere: one PL201 per file, and nothing else to report.
    """
    root.mkdir(parents=True, exist_ok=True)
    names = []
    for k in range(FILES):
        ns = f"team-{k}"
        objects = (gateway_class() if k == 0 else "") + gateway(ns=ns) + service(ns=ns) + route(ns=ns)
        objects += policy("BackendTrafficPolicy", MISSING_ROUTE, name="retries", ns=ns)
        per_entry = len(_filler(ns, 2)) - len(_filler(ns, 1))
        entries = max(1, (total_bytes // FILES - len(objects + _filler(ns, 1))) // per_entry + 1)
        name = f"f{k}.yaml"
        (root / name).write_text(first(objects + _filler(ns, entries)), encoding="utf-8")
        names.append(name)
    return names


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    # Four times the threshold: `--jobs 2` really starts a worker, and it parses for long enough
    # (~0.5 s of CPU and more, on a fast machine) for the tests to catch it at work.
    root = tmp_path_factory.mktemp("corpus")
    write_corpus(root / "manifests", parallel.PARALLEL_MIN_BYTES * 4)
    assert sum(p.stat().st_size for p in (root / "manifests").iterdir()) >= parallel.PARALLEL_MIN_BYTES
    return root


def start(args: list[str], cwd: Path, **kwargs: Any) -> subprocess.Popen[bytes]:
    """The command in a session of its own (its pid is the session id: what it leaves is findable)."""
    return subprocess.Popen(
        [sys.executable, "-c", _COMMAND, *args],
        cwd=cwd,
        stdout=kwargs.pop("stdout", subprocess.PIPE),
        stderr=subprocess.PIPE,
        start_new_session=True,
        **kwargs,
    )


def run(args: list[str], cwd: Path) -> tuple[int, bytes, bytes]:
    proc = start(args, cwd)
    try:
        out, err = proc.communicate(timeout=RUN_TIMEOUT)
    finally:
        _kill_session(proc.pid)
    return proc.returncode, out, err


LINT = ["manifests", "--no-cache", "--format", "json"]


@pytest.fixture(scope="module")
def reference(corpus: Path) -> bytes:
    """The `--jobs 1` report, checked by hand: one PL201 per file, exit code 1."""
    code, out, err = run([*LINT, "--jobs", "1"], corpus)
    assert code == 1, err
    report = json.loads(out)
    found = [(f["rule"], f["file"], f["message"].split(";")[0]) for f in report["findings"]]
    ns = [f"team-{k}" for k in range(FILES)]
    assert found == [
        ("PL201", f"manifests/f{k}.yaml", f"HTTPRoute 'missing' not found in namespace {ns[k]}") for k in range(FILES)
    ]
    assert err.decode().splitlines() == [
        f"{FILES} errors, 0 warnings, 0 info in {FILES} files ({5 * FILES + 1} objects, {FILES} policies)"
    ]
    return out


# --- /proc -------------------------------------------------------------------------------------


def children(pid: int) -> list[int]:
    found: list[int] = []
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return found
    for task in tasks:
        try:
            found += [int(c) for c in Path(f"/proc/{pid}/task/{task}/children").read_text().split()]
        except OSError:
            pass
    return found


def is_worker(pid: int, parent: int) -> bool:
    """A parse worker of the command `parent`: a multiprocessing "spawn" child (the resource
    tracker, also a child, is not one), or a child forked from it (its command line the
    command's, `parallel.start_method`) that ignores SIGINT, as `parallel._init_worker` makes a
    worker: a rule process, forked too, handles it."""
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
        if b"spawn_main" in cmdline:
            return True
        return cmdline == Path(f"/proc/{parent}/cmdline").read_bytes() and _ignores(pid, signal.SIGINT)
    except OSError:
        return False


def _ignores(pid: int, sig: signal.Signals) -> bool:
    """Whether process `pid` ignores `sig` (the SigIgn mask of proc(5))."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("SigIgn:"):
            return bool(int(line.split()[1], 16) >> (sig - 1) & 1)
    return False


def _stat(pid: int) -> list[str] | None:
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return text.rsplit(")", 1)[1].split()  # fields from the third on: state, ppid, pgrp, session, ...


def cpu_seconds(pid: int) -> float:
    fields = _stat(pid)
    return 0.0 if fields is None else (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def alive(pid: int) -> bool:
    fields = _stat(pid)
    return fields is not None and fields[0] not in ("Z", "X")


def in_session(sid: int) -> list[int]:
    """Live processes of session `sid` (zombies excluded: they have ended, only not been reaped)."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            fields = _stat(int(entry))
            if fields is not None and int(fields[3]) == sid and fields[0] not in ("Z", "X"):
                found.append(int(entry))
    return found


def _kill_session(sid: int) -> None:
    """Test cleanup: nothing a failed test started may outlive it."""
    if LINUX:
        for pid in in_session(sid):
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass


def poll(condition: Callable[[], Any], timeout: float, what: str) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}")
        time.sleep(0.01)


def busy_worker(proc: subprocess.Popen[bytes], cpu: float) -> int:
    """A worker of `proc` that has used `cpu` seconds of CPU (0: as soon as it exists)."""

    def find() -> int | None:
        assert proc.poll() is None, "the command ended before its worker got busy"
        for pid in children(proc.pid):
            if is_worker(pid, proc.pid) and cpu_seconds(pid) >= cpu:
                return pid
        return None

    return int(poll(find, RUN_TIMEOUT, f"a worker with {cpu} s of CPU"))


def catches(pid: int, sig: signal.Signals) -> bool:
    """Whether process `pid` has a handler installed for `sig` (the SigCgt mask of proc(5))."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    for line in status.splitlines():
        if line.startswith("SigCgt:"):
            return bool(int(line.split()[1], 16) >> (sig - 1) & 1)
    return False


def handlers_installed(proc: subprocess.Popen[bytes]) -> None:
    """Wait until the command handles its stop signals: an explicit readiness point, not a guess.

    The entry point installs its handlers for SIGINT, SIGTERM and SIGHUP first thing, in that
    order, so SIGTERM caught means all three are (SIGINT alone would not say it: Python itself
    catches SIGINT from start-up). From then on, any moment of the run is one a signal must stop
    with 128 + its number; the run itself (~2 s of parsing) is still far from its end."""
    poll(lambda: catches(proc.pid, signal.SIGTERM) or proc.poll() is not None, RUN_TIMEOUT, "the stop-signal handlers")
    assert proc.poll() is None, "the command ended before it was interrupted"


def assert_session_ends(sid: int) -> None:
    poll(lambda: not in_session(sid), GONE_TIMEOUT, f"the processes of session {sid} to end")


@pytest.fixture
def sessions() -> Iterator[list[int]]:
    started: list[int] = []
    yield started
    for sid in started:
        _kill_session(sid)


# --- a worker that dies ------------------------------------------------------------------------


@linux_only
@pytest.mark.parametrize(
    "cpu",
    [
        pytest.param(0.0, id="at-start"),
        # A worker starts in ~0.1 s of CPU; from 0.4 s on it is parsing (it has ~1 s of files).
        pytest.param(0.4, id="while-parsing"),
    ],
)
def test_a_killed_worker_leaves_its_files_to_the_main_process(
    corpus: Path, reference: bytes, sessions: list[int], cpu: float
) -> None:
    proc = start([*LINT, "--jobs", "2"], corpus)
    sessions.append(proc.pid)
    worker = busy_worker(proc, cpu)
    os.kill(worker, signal.SIGKILL)  # raises if the worker were gone: the kill really happened
    out, err = proc.communicate(timeout=RUN_TIMEOUT)  # before the fix: never returned
    assert proc.returncode == 1
    assert out == reference
    # Only the summary: no InvalidStateError, no traceback from the pool's threads.
    assert err.decode().splitlines() == [
        f"{FILES} errors, 0 warnings, 0 info in {FILES} files ({5 * FILES + 1} objects, {FILES} policies)"
    ]
    assert_session_ends(proc.pid)


@linux_only
def test_the_parse_worker_is_forked_with_the_default_stop_handlers(corpus: Path, reference: bytes, sessions: list[int]) -> None:
    """The command runs one thread while it parses: its worker is forked (`parallel.start_method`),
    no interpreter started for it and no resource tracker beside it, and its SIGTERM and SIGHUP
    are the default, as a spawned worker's are, not the command's handlers, which raise where
    they interrupt; the report is the one of `--jobs 1`."""
    proc = start([*LINT, "--jobs", "2"], corpus)
    sessions.append(proc.pid)
    worker = busy_worker(proc, 0.05)
    assert b"spawn_main" not in Path(f"/proc/{worker}/cmdline").read_bytes()
    assert not catches(worker, signal.SIGTERM)
    assert not catches(worker, signal.SIGHUP)
    started: list[bytes] = []
    for pid in children(proc.pid):
        with contextlib.suppress(OSError):
            started.append(Path(f"/proc/{pid}/cmdline").read_bytes())
    assert not any(b"resource_tracker" in cmdline for cmdline in started)
    out, _ = proc.communicate(timeout=RUN_TIMEOUT)
    assert proc.returncode == 1
    assert out == reference
    assert_session_ends(proc.pid)


def test_workers_are_forked_only_from_a_process_running_one_thread(monkeypatch: pytest.MonkeyPatch) -> None:
    # A fork copies only its own thread: a lock another one holds stays held in the worker.
    monkeypatch.setattr(threading, "active_count", lambda: 2)
    assert parallel.start_method() == "spawn"
    assert not workers.can_fork()


_THREADS_SCRIPT = """\
import _thread, json, sys, threading, warnings
from policylint.input import parallel
from policylint.rules import workers

def answers():
    return [parallel.start_method(), workers.can_fork()]

seen = {"alone": answers()}
# A thread `threading` does not know of, as pytest-xdist's execnet channel starts its own.
release, started = _thread.allocate_lock(), _thread.allocate_lock()
release.acquire()
started.acquire()
def hold():
    started.release()
    release.acquire()
_thread.start_new_thread(hold, ())
started.acquire()
seen["threading's count"] = threading.active_count()
seen["unknown thread"] = answers()
release.release()
print(json.dumps(seen))
"""


@linux_only
def test_a_thread_threading_does_not_count_stops_the_fork() -> None:
    """`threading.active_count()` counts only the threads `threading` started: beside one started
    otherwise (pytest-xdist's execnet channel), forking is what CPython 3.12+ warns of. The kernel's
    count (`parallel.runs_one_thread`) sees it: the parse worker is spawned and the rules run in one
    process, as they do beside any other thread; alone, both fork. A fresh interpreter: the test
    runner's own process may hold such a thread."""
    seen = _run_script(_THREADS_SCRIPT)
    assert seen == {"alone": ["fork", True], "threading's count": 1, "unknown thread": ["spawn", False]}


# Hooks for `test_a_failing_pool_changes_nothing`: workers import this module to run them.


# (In a worker, `parallel._worker_parse` is the original: only the main process replaces it.)


def parse_or_raise(data: bytes, file: str, key: str | None, cache_dir: str | None) -> bytes:
    if file == "big.yaml":
        raise ValueError("a worker failing on one file")
    return parallel._worker_parse(data, file, key, cache_dir)


def parse_or_die(data: bytes, file: str, key: str | None, cache_dir: str | None) -> bytes:
    if file == "big.yaml":
        os.kill(os.getpid(), signal.SIGKILL)  # as the OOM killer would
    return parallel._worker_parse(data, file, key, cache_dir)


def failing_initializer(parent: int) -> None:
    raise RuntimeError("a worker that cannot start")


_FAILING_POOL = """\
import concurrent.futures, os, sys
from pathlib import Path
from policylint.input import parallel
from policylint.rules import engine, workers
from policylint.input.sources import Source
from tests.input import test_processes as t

parallel.PARALLEL_MIN_BYTES = 0
parallel.usable_cpus = lambda: 3
how = sys.argv[1]
if how == "raises":
    parallel._worker_parse = t.parse_or_raise
elif how == "dies":
    parallel._worker_parse = t.parse_or_die
elif how == "initializer-fails":
    parallel._init_worker = t.failing_initializer
elif how == "no-pool":
    def no_pool(*args, **kwargs):
        raise OSError("no processes here")
    concurrent.futures.ProcessPoolExecutor = no_pool
    os.fork = no_pool
elif how == "second-fork-fails":
    forks = []
    real_fork = os.fork
    def fork_once():
        forks.append(1)
        if len(forks) > 1:
            raise OSError("no second process here")
        return real_fork()
    os.fork = fork_once
root = Path(sys.argv[2])
sources = [Source(display=p.name, fs_path=str(p)) for p in sorted(root.iterdir())]
serial = list(parallel.load_files(sources, jobs=1))
assert len(serial) == len(sources) and all(r.documents for _, r in serial)
print("same" if list(parallel.load_files(sources, jobs=3)) == serial else "different")
"""


@pytest.mark.parametrize("how", ["raises", "dies", "initializer-fails", "no-pool", "second-fork-fails"])
def test_a_failing_pool_changes_nothing(tmp_path: Path, how: str) -> None:
    """A worker that raises or dies, a pool whose workers cannot start or that cannot be created
    (forked: no process, or one of the two), the main process parses what is left, with the results
    of `--jobs 1`, and the run ends by itself."""
    write_corpus(tmp_path, 60_000)
    # The largest file, first to be handed to a worker, is the one the hooks fail on.
    (tmp_path / "big.yaml").write_text(first(gateway_class() + _filler("big", 800)), encoding="utf-8")
    proc = subprocess.run(
        [sys.executable, "-c", _FAILING_POOL, how, str(tmp_path)],
        cwd=REPO,
        capture_output=True,
        timeout=RUN_TIMEOUT,  # before the fix, "dies" hung here
        start_new_session=True,
    )
    assert proc.returncode == 0, proc.stderr.decode()
    assert proc.stdout.decode() == "same\n"
    assert b"InvalidStateError" not in proc.stderr


_NO_THREAD = """\
import json, os, sys
from pathlib import Path
from policylint.input import parallel
from policylint.input.sources import Source

parallel.PARALLEL_MIN_BYTES = 0
parallel.usable_cpus = lambda: 2
threads = []
real = parallel._parse
def counting(*args, **kwargs):
    threads.append(len(os.listdir("/proc/self/task")))
    return real(*args, **kwargs)
parallel._parse = counting
root = Path(sys.argv[1])
sources = [Source(display=p.name, fs_path=str(p)) for p in sorted(root.iterdir())]
serial = list(parallel.load_files(sources, jobs=1))
threads.clear()
shared = list(parallel.load_files(sources, jobs=2))
print(json.dumps({"same": shared == serial, "threads": sorted(set(threads)), "parsed here": len(threads) > 0}))
"""


@linux_only
def test_the_forked_parse_runs_no_thread_in_the_main_process(tmp_path: Path) -> None:
    """Forked, the parse worker takes the files it holds from a queue and sends its results through
    a pipe of its own, which the main process reads between its own files: no thread runs beside the
    main process's parse (a pool's threads took its GIL at every step), and the results are
    `--jobs 1`'s."""
    write_corpus(tmp_path, 200_000)
    for k in range(40):
        (tmp_path / f"pad-{k:02d}.yaml").write_text(_filler(f"pad-{k}", 150), encoding="utf-8")
    seen = _run_script(_NO_THREAD, str(tmp_path))
    assert seen == {"same": True, "threads": [1], "parsed here": True}


def test_the_forked_parse_s_batches_are_runs_of_the_largest_files_first() -> None:
    from policylint.input import forked

    sizes = [70_000, 40_000, 30_000, 20_000, 10_000, 5_000]
    # A file over BATCH_BYTES alone; the others together up to it, in order.
    assert forked._batches(sizes, parallel.BATCH_BYTES) == [(0, 1), (1, 2), (2, 6)]


def test_the_forked_parse_s_queue_holds_at_most_max_batches(monkeypatch: pytest.MonkeyPatch) -> None:
    from policylint.input import forked

    monkeypatch.setattr(forked, "MAX_BATCHES", 2)
    sizes = [70_000, 40_000, 30_000, 20_000, 10_000, 5_000]
    assert forked._batches(sizes, parallel.BATCH_BYTES) == [(0, 2), (2, 6)]  # batches of twice BATCH_BYTES
    queue = forked._queue(3)
    assert queue is not None
    try:
        assert [int.from_bytes(os.read(queue, 2), "big") for _ in range(3)] == [0, 1, 2]
        assert os.read(queue, 2) == b""  # empty: its end, for every process that reads it
    finally:
        os.close(queue)


# --- signals to the main process ---------------------------------------------------------------


@linux_only
@pytest.mark.parametrize(
    ("sig", "jobs", "to_group", "code"),
    [
        pytest.param(signal.SIGTERM, 2, False, 143, id="sigterm-jobs2"),
        pytest.param(signal.SIGTERM, 1, False, 143, id="sigterm-jobs1"),
        pytest.param(signal.SIGINT, 2, False, 130, id="sigint-jobs2"),
        # Ctrl-C in a terminal: the whole process group gets SIGINT, workers included.
        pytest.param(signal.SIGINT, 2, True, 130, id="ctrl-c-jobs2"),
        pytest.param(signal.SIGINT, 1, False, 130, id="sigint-jobs1"),
    ],
)
def test_a_stop_signal_stops_the_workers_and_exits_128_plus_its_number(
    corpus: Path, sessions: list[int], sig: signal.Signals, jobs: int, to_group: bool, code: int
) -> None:
    proc = start([*LINT, "--jobs", str(jobs)], corpus)
    sessions.append(proc.pid)
    if jobs > 1:
        busy_worker(proc, 0.2)  # the pool runs: the worker has started and is parsing
    else:
        handlers_installed(proc)
    if to_group:
        os.killpg(proc.pid, sig)
    else:
        os.kill(proc.pid, sig)
    out, err = proc.communicate(timeout=RUN_TIMEOUT)
    assert proc.returncode == code, (err.decode(errors="replace"), len(out), signal.getsignal(signal.SIGINT))
    assert out == b""  # stopped mid-run: no report
    assert err == b""  # no traceback, no "Aborted!", nothing from the workers
    assert_session_ends(proc.pid)  # no worker (nor the resource tracker) outlives the command


# A stop signal the handler turns into `Interrupted` inside a weakref callback, where Python cannot
# pass an exception on ("Exception ignored in ..."): the import system's module-lock callback runs
# after every import, and a run imports modules as it first needs them. Under load a SIGINT landed
# there and the run went on to print its report and exit 1.
_SWALLOWED = """\
import os, signal, time, weakref
signal.signal(signal.SIGINT, signal.default_int_handler)  # as a shell starts a command
from policylint import entry
entry._install_signal_handlers()
class Held: pass
def callback(_ref):
    os.kill(os.getpid(), signal.SIGINT)
    for _ in range(1000):  # the handler runs here, in the callback
        pass
def go_on():
    # A frame of its own: CPython 3.13 looks an exception raised at a bare loop's backward jump
    # up against the instruction before it (python/cpython#108214, #130279), which can miss a
    # `try` around the loop in the same frame; from a call, it reaches the caller's.
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        pass
held = Held()
ref = weakref.ref(held, callback)
try:
    del held
    go_on()
    print("the run went on")
except entry.Interrupted as exc:
    print("unwound", exc.signum)
"""


@linux_only
def test_a_stop_signal_raised_where_python_cannot_pass_it_on_still_stops_the_run() -> None:
    proc = subprocess.run([sys.executable, "-c", _SWALLOWED], cwd=REPO, capture_output=True, timeout=RUN_TIMEOUT)
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, f"unwound {int(signal.SIGINT)}\n".encode(), b"")


@linux_only
def test_a_stopped_run_ends_without_the_interpreter_s_finalisation(corpus: Path, sessions: list[int]) -> None:
    """Unwinding from the signal does what a stop needs; finalisation after it only joins the parse
    pool's manager thread, which CPython 3.11 may be closing a pipe of at that moment (under load:
    "Exception ignored in atexit callback ... Bad file descriptor" after a Ctrl-C). A stopped run
    ends before it: an exit handler registered by the test never runs."""
    finalised = "import atexit, os\natexit.register(os.write, 2, b'finalised')\n"
    proc = subprocess.Popen(
        [sys.executable, "-c", finalised + _COMMAND, *LINT, "--jobs", "2"],
        cwd=corpus,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    sessions.append(proc.pid)
    busy_worker(proc, 0.2)
    os.killpg(proc.pid, signal.SIGINT)
    out, err = proc.communicate(timeout=RUN_TIMEOUT)
    assert (proc.returncode, out, err) == (130, b"", b"")
    # A run that ends by itself is finalised as usual: the handler runs.
    code, _, err = run_with_prefix(finalised, [*LINT, "--jobs", "1"], corpus)
    assert (code, err.endswith(b"finalised")) == (1, True)


def run_with_prefix(prefix: str, args: list[str], cwd: Path) -> tuple[int, bytes, bytes]:
    proc = subprocess.run([sys.executable, "-c", prefix + _COMMAND, *args], cwd=cwd, capture_output=True, timeout=RUN_TIMEOUT)
    return proc.returncode, proc.stdout, proc.stderr


# Records every module imported once `entry.main()` runs, and whether the stop-signal handlers were
# in place at that moment: a signal that came then must already exit 128 + its number.
_IMPORT_ORDER = """\
import builtins, json, signal, sys
from policylint import entry
seen, real_import = [], builtins.__import__
def watching(name, *args, **kwargs):
    if name not in sys.modules:
        seen.append([name, signal.getsignal(signal.SIGTERM) is entry._on_stop_signal])
    return real_import(name, *args, **kwargs)
builtins.__import__ = watching
sys.argv[1:] = json.loads(sys.argv[1])
code = entry.main()
builtins.__import__ = real_import
sys.stderr.write(json.dumps([code, seen]))
"""


@pytest.mark.parametrize("args", [["--version"], ["--no-cache", "."]], ids=["version", "lint"])
def test_the_stop_signal_handlers_come_before_any_import_of_the_command(tmp_path: Path, args: list[str]) -> None:
    (tmp_path / "a.yaml").write_text(first(service(ns="app")), encoding="utf-8")
    proc = subprocess.run(
        [sys.executable, "-c", _IMPORT_ORDER, json.dumps(args)], cwd=tmp_path, capture_output=True, timeout=RUN_TIMEOUT
    )
    code, seen = json.loads(proc.stderr.decode().splitlines()[-1])
    assert code == 0
    assert seen, "the command imported nothing: the check checked nothing"
    assert [name for name, installed in seen if not installed] == []


# Becomes a child subreaper (prctl PR_SET_CHILD_SUBREAPER = 36), so that the processes the command
# leaves when it is killed become its children: it can then tell how each one ended.
_REAPER = """\
import ctypes, json, os, signal, subprocess, sys, time
mode, cwd, limit, command = sys.argv[1], sys.argv[2], float(sys.argv[3]), sys.argv[4:]
assert ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0) == 0
from tests.input.test_processes import busy_worker, in_session
proc = subprocess.Popen(command, cwd=cwd, stdout=subprocess.PIPE, start_new_session=True)
if mode == "worker":
    worker = busy_worker(proc, 0.4)  # parsing, with ~1 s of its files left
else:
    worker = int(proc.stdout.readline())
os.kill(proc.pid, signal.SIGKILL)
statuses, deadline = {}, time.monotonic() + limit
while time.monotonic() < deadline:
    try:
        pid, status = os.waitpid(-1, os.WNOHANG)
    except ChildProcessError:
        break
    if pid:
        statuses[pid] = [os.WEXITSTATUS(status) if os.WIFEXITED(status) else None,
                         os.WTERMSIG(status) if os.WIFSIGNALED(status) else None]
    else:
        time.sleep(0.01)
left = in_session(proc.pid)
print(json.dumps({"worker": worker, "statuses": statuses, "left": left}))
for pid in left:
    os.kill(pid, signal.SIGKILL)
"""


def _reap(mode: str, cwd: Path, command: list[str]) -> dict[str, Any]:
    proc = subprocess.run(
        [sys.executable, "-c", _REAPER, mode, str(cwd), str(GONE_TIMEOUT), *command],
        cwd=REPO,
        capture_output=True,
        timeout=RUN_TIMEOUT,
    )
    assert proc.returncode == 0, proc.stderr.decode()
    return json.loads(proc.stdout)  # type: ignore[no-any-return]


@linux_only
def test_sigkill_to_the_main_process_takes_the_workers_with_it(corpus: Path) -> None:
    result = _reap("worker", corpus, [sys.executable, "-c", _COMMAND, *LINT, "--jobs", "2"])
    assert result["left"] == []  # everything ended within GONE_TIMEOUT
    # Killed by the kernel when its parent died (PR_SET_PDEATHSIG), not done with its files and
    # ending on its own (exit code 1 on the queue's EOF, after ~1 s of parsing nobody waits for).
    assert result["statuses"][str(result["worker"])] == [None, signal.SIGKILL]


_POOL_WITH_WATCHDOG = """\
import functools, os, time, multiprocessing
from concurrent.futures import ProcessPoolExecutor
from policylint.input import workerside
from policylint.rules import engine, workers
pool = ProcessPoolExecutor(
    1,
    mp_context=multiprocessing.get_context("spawn"),
    initializer=functools.partial(workerside._exit_with_parent, os.getpid(), use_prctl=False),
)
print(pool.submit(os.getpid).result(), flush=True)  # the initializer has run
pool.submit(time.sleep, 3600)
time.sleep(3600)
"""


@linux_only
def test_the_watchdog_ends_a_worker_whose_parent_died() -> None:
    """Where prctl(2) is missing (macOS, Windows), a thread in each worker watches the parent."""
    result = _reap("line", REPO, [sys.executable, "-c", _POOL_WITH_WATCHDOG])
    assert result["left"] == []  # without the watchdog, the worker sleeps on for an hour
    assert result["statuses"][str(result["worker"])] == [1, None]  # os._exit(1) from the watchdog


# --- --jobs is capped --------------------------------------------------------------------------


def test_jobs_are_capped_at_the_usable_cpus(monkeypatch: pytest.MonkeyPatch) -> None:
    cpus = parallel.usable_cpus()
    assert 1 <= cpus <= (os.cpu_count() or 1)
    if hasattr(os, "sched_getaffinity"):
        quota = parallel.cgroup_cpu_quota()
        assert cpus == min(len(os.sched_getaffinity(0)), quota if quota is not None else cpus)
    monkeypatch.setattr(parallel, "usable_cpus", lambda: 3)
    assert [parallel.effective_jobs(n) for n in (0, 1, 2, 3, 4, 100_000)] == [3, 1, 2, 3, 3, 3]
    monkeypatch.undo()
    monkeypatch.setattr(parallel, "cgroup_cpu_quota", lambda: 1)
    assert parallel.usable_cpus() == 1  # a container's quota caps what the affinity allows
    assert [parallel.effective_jobs(n) for n in (0, 1, 2)] == [1, 1, 1]


_V2_MOUNTS = "29 23 0:26 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime shared:4 - cgroup2 cgroup2 rw,nsdelegate\n"
_V1_MOUNTS = (
    "31 23 0:28 / /sys/fs/cgroup ro,nosuid - tmpfs tmpfs ro,mode=755\n"
    "32 31 0:29 /docker/abc /sys/fs/cgroup/cpu,cpuacct rw,nosuid - cgroup cgroup rw,cpu,cpuacct\n"
    "33 31 0:30 /docker/abc /sys/fs/cgroup/memory rw,nosuid - cgroup cgroup rw,memory\n"
)


def _cgroup_root(tmp_path: Path, memberships: str, mounts: str, files: dict[str, str]) -> str:
    (tmp_path / "proc/self").mkdir(parents=True)
    (tmp_path / "proc/self/cgroup").write_text(memberships, encoding="utf-8")
    (tmp_path / "proc/self/mountinfo").write_text(mounts, encoding="utf-8")
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text, encoding="ascii")
    return str(tmp_path)


@pytest.mark.parametrize(
    ("memberships", "mounts", "files", "quota"),
    [
        # cgroup v2 inside a cgroup namespace (Docker's default): `docker run --cpus 1.5`.
        ("0::/\n", _V2_MOUNTS, {"sys/fs/cgroup/cpu.max": "150000 100000\n"}, 2),
        ("0::/\n", _V2_MOUNTS, {"sys/fs/cgroup/cpu.max": "max 100000\n"}, None),
        # A parent's limit binds the child's: the smallest on the way up.
        (
            "0::/kubepods/pod1/c1\n",
            _V2_MOUNTS,
            {
                "sys/fs/cgroup/kubepods/pod1/c1/cpu.max": "max 100000\n",
                "sys/fs/cgroup/kubepods/pod1/cpu.max": "50000 100000\n",
                "sys/fs/cgroup/kubepods/cpu.max": "400000 100000\n",
            },
            1,
        ),
        # No cgroup namespace: the host's path is shown, the mount holds the container's cgroup.
        ("0::/system.slice/docker-abc.scope\n", _V2_MOUNTS, {"sys/fs/cgroup/cpu.max": "300000 100000\n"}, 3),
        # cgroup v1: the cpu controller's mount, its root taken off the process's path.
        (
            "5:memory:/docker/abc\n4:cpu,cpuacct:/docker/abc\n0::/\n",
            _V1_MOUNTS,
            {"sys/fs/cgroup/cpu,cpuacct/cpu.cfs_quota_us": "250000\n", "sys/fs/cgroup/cpu,cpuacct/cpu.cfs_period_us": "100000\n"},
            3,
        ),
        (
            "4:cpu,cpuacct:/docker/abc\n",
            _V1_MOUNTS,
            {"sys/fs/cgroup/cpu,cpuacct/cpu.cfs_quota_us": "-1\n", "sys/fs/cgroup/cpu,cpuacct/cpu.cfs_period_us": "100000\n"},
            None,
        ),
        # A quota smaller than one period's worth still leaves one CPU.
        ("0::/\n", _V2_MOUNTS, {"sys/fs/cgroup/cpu.max": "10000 100000\n"}, 1),
        # What cannot be read or makes no sense limits nothing.
        ("0::/\n", _V2_MOUNTS, {"sys/fs/cgroup/cpu.max": "lots\n"}, None),
        ("0::/\n", _V2_MOUNTS, {"sys/fs/cgroup/cpu.max": "0 100000\n"}, None),
        ("0::/\n", _V2_MOUNTS, {}, None),
        ("0::/\n", "garbage\n", {"sys/fs/cgroup/cpu.max": "150000 100000\n"}, None),
        ("2:cpuacct:/\n", _V1_MOUNTS, {}, None),
    ],
    ids=[
        "v2-namespaced",
        "v2-max",
        "v2-parent-binds",
        "v2-host-path",
        "v1",
        "v1-unlimited",
        "v2-fraction",
        "v2-garbage",
        "v2-zero",
        "v2-no-file",
        "no-mount",
        "v1-no-cpu",
    ],
)
def test_the_cgroup_cpu_quota_is_read_as_the_kernel_enforces_it(
    tmp_path: Path, memberships: str, mounts: str, files: dict[str, str], quota: int | None
) -> None:
    assert parallel.cgroup_cpu_quota(_cgroup_root(tmp_path, memberships, mounts, files)) == quota


def test_no_proc_file_system_means_no_quota(tmp_path: Path) -> None:
    assert parallel.cgroup_cpu_quota(str(tmp_path)) is None


def _workers_seen(proc: subprocess.Popen[bytes]) -> set[int]:
    seen: set[int] = set()
    while proc.poll() is None:
        seen.update(pid for pid in children(proc.pid) if is_worker(pid, proc.pid))
        time.sleep(0.01)
    return seen


@linux_only
@pytest.mark.parametrize("one_cpu", [True, False], ids=["one-cpu", "all-cpus"])
def test_jobs_1000_starts_no_more_processes_than_cpus(corpus: Path, reference: bytes, sessions: list[int], one_cpu: bool) -> None:
    cpu = min(os.sched_getaffinity(0))
    # The real command here (not _COMMAND): the cap is what is tested.
    proc = subprocess.Popen(
        [sys.executable, "-m", "policylint", *LINT, "--jobs", "1000"],
        cwd=corpus,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
        preexec_fn=(lambda: os.sched_setaffinity(0, {cpu})) if one_cpu else None,
    )
    sessions.append(proc.pid)
    # Uncapped, 1000 jobs would be FILES processes: FILES - 1 workers for the whole parse.
    workers = _workers_seen(proc)
    out = proc.stdout.read() if proc.stdout is not None else b""
    assert proc.wait(timeout=RUN_TIMEOUT) == 1
    assert out == reference
    allowed = 1 if one_cpu else parallel.usable_cpus()
    assert len(workers) <= allowed - 1, workers


class _Pipe:
    def __init__(self) -> None:
        self.closed = 0

    def close(self) -> None:
        self.closed += 1


class _OldQueue:  # CPython before 3.12: nothing closes the task pipe's read end for the pool
    def __init__(self) -> None:
        self._reader = _Pipe()


class _NewQueue(_OldQueue):  # CPython 3.12+: the manager thread closes it (gh-94777)
    def _terminate_broken(self) -> None:
        self._reader.close()


def test_stopping_a_pool_closes_the_task_pipe_only_where_python_does_not() -> None:
    """Closing the read end in this thread as well as in the pool's manager thread raced: the
    loser printed an "OSError: Bad file descriptor" traceback after a stop signal (3.13)."""
    old, new = _OldQueue(), _NewQueue()
    parallel._stop([], None, old)
    parallel._stop([], None, new)
    assert old._reader.closed == 1
    assert new._reader.closed == 0


def test_stopping_a_pool_leaves_the_task_pipe_to_a_manager_thread_that_closed_it() -> None:
    """CPython 3.11.7 has no `_terminate_broken` on the queue, yet its manager thread closes the
    read end as it finds the pool broken (gh-94777): closing it here too raced with that close, and
    "OSError: Bad file descriptor" was printed after Ctrl-C. The manager thread is let finish
    first; what it closed is not closed again, and what it left open behind it is left."""
    closing, finished = _OldQueue(), _OldQueue()
    manager = threading.Thread(target=closing._reader.close)
    manager.start()
    parallel._stop([], manager, closing)
    assert closing._reader.closed == 1  # by the manager thread alone
    done = threading.Thread(target=lambda: None)
    done.start()
    parallel._stop([], done, finished)
    assert finished._reader.closed == 0  # a manager thread that ended hangs on no feeder


# --- a reader that goes away -------------------------------------------------------------------


@pytest.mark.skipif(os.name != "posix", reason="EPIPE on a closed pipe is POSIX behaviour")
@pytest.mark.parametrize(
    ("exit_zero", "unbuffered"),
    [
        pytest.param(False, False, id="findings-code"),
        pytest.param(True, False, id="exit-zero"),
        pytest.param(True, True, id="exit-zero-unbuffered"),
    ],
)
def test_a_closed_pipe_is_not_a_failure(tmp_path: Path, exit_zero: bool, unbuffered: bool) -> None:
    # 800 findings (400 a file): ~160 KB of text, more than twice what a pipe holds (64 KiB on
    # Linux), so the command is still writing when the reader goes away.
    for f in range(2):
        policies = "".join(policy("BackendTrafficPolicy", MISSING_ROUTE, name=f"p{f}-{k:03d}") for k in range(400))
        (tmp_path / f"many-{f}.yaml").write_text(first(policies), encoding="utf-8")
    # --complete: the input holds no HTTPRoute, so without it each missing one is unprovable, a
    # warning; the input as the whole cluster makes each an error, and the run exit 1.
    args = [".", "--no-cache", "--complete"] + (["--exit-zero"] if exit_zero else [])
    # Unbuffered (`python -u`), Python's own stdout drops what a short write did not take without
    # an error: the guard must see the EPIPE either way.
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    if unbuffered:
        env["PYTHONUNBUFFERED"] = "1"
    proc = subprocess.Popen(
        [sys.executable, "-m", "policylint", *args],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    assert proc.stdout is not None and proc.stderr is not None
    line = proc.stdout.readline()  # `| head -1`
    proc.stdout.close()
    try:
        err = proc.stderr.read()
        code = proc.wait(timeout=RUN_TIMEOUT)
    finally:
        _kill_session(proc.pid)
    # The first policy's targetRefs[0].name: line 5 (apiVersion, kind, metadata, spec, targetRefs),
    # column 68 (`name:` in the flow mapping).
    assert line.startswith(b"many-0.yaml:5:68: error PL201 HTTPRoute 'missing' not found in namespace app")
    assert code == (0 if exit_zero else 1)
    # The summary, and nothing about the pipe (no BrokenPipeError, "Exception ignored", "Aborted!").
    assert err.decode().splitlines() == ["800 errors, 0 warnings, 0 info in 2 files (800 objects, 800 policies)"]


@linux_only  # /dev/full
@pytest.mark.parametrize(
    ("stdout", "why"),
    [
        pytest.param("closed", "it was closed when the command started", id="closed"),  # policylint . >&-
        pytest.param("read-only", "Bad file descriptor", id="read-only"),  # policylint . 1</dev/null
        pytest.param("full", "No space left on device", id="full-disk"),  # policylint . >/dev/full
    ],
)
@pytest.mark.parametrize("exit_zero", [False, True], ids=["findings", "exit-zero"])
def test_a_report_that_cannot_be_written_is_said_and_exits_2(tmp_path: Path, stdout: str, why: str, exit_zero: bool) -> None:
    (tmp_path / "a.yaml").write_text(first(policy("BackendTrafficPolicy", MISSING_ROUTE)), encoding="utf-8")
    (tmp_path / "b.yaml").write_text(first(service(ns="app")), encoding="utf-8")
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    target = open(os.devnull, "rb") if stdout == "read-only" else open("/dev/full", "wb") if stdout == "full" else None  # noqa: SIM115
    try:
        proc = subprocess.run(
            [sys.executable, "-c", _COMMAND, ".", "--no-cache", *(["--exit-zero"] if exit_zero else [])],
            cwd=tmp_path,
            stdout=target,
            stderr=subprocess.PIPE,
            # Closing descriptor 1 in the child, after Popen set it up: as a shell's `>&-` does.
            preexec_fn=(lambda: os.close(1)) if stdout == "closed" else None,
            timeout=RUN_TIMEOUT,
        )
    finally:
        if target is not None:
            target.close()
    err = proc.stderr.decode()
    assert proc.returncode == 2, err  # not 1 (nor 0 with --exit-zero): nobody saw the findings
    assert f"policylint: the report could not be written to standard output: {why}" in err.splitlines()
    assert "Traceback" not in err and "internal error" not in err
    # With descriptor 1 closed, the files the command opened must not have taken its number.
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == before


def test_jobs_2_writes_the_bytes_jobs_1_writes_on_the_messy_corpus(tmp_path: Path) -> None:
    # The benchmark's messy corpus (1 to 5 objects per file, three policy references in four
    # misspelled, so that findings and their notes span files), large enough for a worker.
    from benchmarks.generate import write_corpus as write_messy

    # 2,500 objects: above the size at which the rules, too, are shared among processes
    # (policylint.rules.workers.MIN_OBJECTS), so both halves of `--jobs` are compared.
    write_messy(2500, tmp_path / "manifests", per_file=0, error_rate=0.75)
    assert sum(p.stat().st_size for p in (tmp_path / "manifests").iterdir()) >= parallel.PARALLEL_MIN_BYTES
    outputs = {}
    for jobs in ("1", "2"):
        # One run per `--jobs`: the text report on standard output, the others through `--output`,
        # which writes what `--format` would (tests/reporters/test_ci_reporters.py).
        reports = tmp_path / f"jobs{jobs}"
        reports.mkdir()
        extra = [f"--output={fmt}={reports / fmt}" for fmt in ("json", "sarif")]
        code, out, err = run(["manifests", "--no-cache", "--format", "text", *extra, "--jobs", jobs], tmp_path)
        assert code == 1, err.decode()
        outputs[(jobs, "text")] = out
        for fmt in ("json", "sarif"):
            outputs[(jobs, fmt)] = (reports / fmt).read_bytes()
    for fmt in ("json", "sarif", "text"):
        assert outputs[("2", fmt)] == outputs[("1", fmt)]
    assert outputs[("1", "json")].count(b'"rule": "PL201"') > 100


@linux_only
def test_the_rule_processes_send_back_the_verdicts_they_work_out(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """With `--jobs 2` the schema rules run over shares of the objects in forked processes; the
    admission verdicts they work out come back with their findings and are kept, so that the
    next run works out only those the store does not keep (the objects the API server refuses)."""
    from benchmarks.generate import write_corpus as write_messy
    from policylint.k8s import admission
    from policylint.pipeline import LintRequest, lint

    write_messy(2500, tmp_path / "manifests", per_file=0, error_rate=0.75)
    cache_dir = tmp_path / "cache"
    code, _, err = run(["manifests", "--cache-dir", str(cache_dir), "--format", "json", "--jobs", "2"], tmp_path)
    assert code == 1, err.decode()
    computed: list[object] = []
    real = admission.violations

    def counting(data: Any, *args: Any, **kwargs: Any) -> Any:
        computed.append(data)
        return real(data, *args, **kwargs)

    monkeypatch.setattr(admission, "violations", counting)
    monkeypatch.chdir(tmp_path)
    project = lint(LintRequest(paths=["manifests"], cache_dir=str(cache_dir))).project
    admissions = project.admissions()
    with_schema = [o for o in project.index.objects if admissions.verdict(o) is not None]
    refused = [o for o in with_schema if admissions.verdict(o).schema or admissions.verdict(o).cel]  # type: ignore[union-attr]
    assert len(with_schema) > 1000
    assert len(computed) == len(refused)


_WORKERS_SCRIPT = """\
import fcntl, json, os, struct, sys, termios, threading, time
from policylint.rules import engine, workers

class Rule:
    def __init__(self, rule_id):
        self.id = rule_id
        # As the real ones: the schema family and PL201 run over a share of the objects each.
        self.per_object = rule_id in ("PL201", "PL702", "PL703", "PL704")

from tests.poolstub import Project

mode = sys.argv[1]
parent = os.getpid()
if mode == "threaded":
    gate = threading.Event()
    threading.Thread(target=gate.wait, daemon=True).start()

def run_units(units):
    out = {}
    for rule, share in units:
        if os.getpid() == parent and rule.id == "PL999" and sys.argv[2] == "drain":
            # A rule of this process's own (one that reads a stage), busy until the children have
            # taken every queued unit: the queue's pipe holds no byte more (FIONREAD).
            while any(struct.unpack("i", fcntl.ioctl(q, termios.FIONREAD, bytes(4)))[0] for q in pool._queues.values()):
                time.sleep(0.01)
        if mode == "dies" and os.getpid() != parent:
            os._exit(7)  # the child dies holding the unit it took, before it sends anything
        # One "finding" per unit: which rule, whether a child ran it, and over which share of the objects.
        out[(rule.id, share)] = ([[rule.id, os.getpid() != parent, share]], None)
    return out

rules = [Rule(f"PL{n}") for n in sys.argv[3:]]
queued = [rule for rule in rules if rule.id != "PL999"]
pool = workers.start(Project(), queued, run_units, 2)
first = [(rule, None) for rule in rules if rule.id == "PL999"]
results = pool.finish(first, run_units) if pool is not None else run_units([(rule, None) for rule in rules])
print(json.dumps([r[0] for r in workers.results_in_order(rules, results)]))
"""


def _run_workers(mode: str, rule_numbers: list[int], drain: bool = False) -> list[list[Any]]:
    # A fresh interpreter: the rules fork only from a process running no other thread, which a
    # test runner's process need not be.
    result: list[list[Any]] = _run_script(_WORKERS_SCRIPT, mode, "drain" if drain else "-", *map(str, rule_numbers))
    return result


def _run_script(script: str, *args: str) -> Any:
    """What `script` prints as JSON, run by a fresh interpreter in the checkout with `args`."""
    proc = subprocess.run(
        [sys.executable, "-c", script, *args],
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT,
        cwd=REPO,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert "DeprecationWarning" not in proc.stderr
    return json.loads(proc.stdout)


class _Rule:
    """A stand-in for a rule class: the queue reads only its id and whether it is `per_object`."""

    def __init__(self, rule_id: str, per_object: bool = False) -> None:
        self.id = rule_id
        self.per_object = per_object


SHARES = workers.SHARES_PER_PROCESS * 2  # shares of a per-object rule with two processes


@linux_only
def test_rules_shared_among_processes_come_back_in_rule_order() -> None:
    numbers = [704, 101, 999, 703, 201, 702, 301, 603]
    # This process is busy with its own rule (PL999) until the child has taken the whole queue.
    results = _run_workers("plain", numbers, drain=True)
    # Each rule's findings, in rule order; a per-object rule's from every share, in share order.
    expected = [
        [[f"PL{n}", n != 999, [k, SHARES]] for k in range(SHARES)] if n in (201, 702, 703, 704) else [[f"PL{n}", n != 999, None]]
        for n in numbers
    ]
    assert results == expected


@linux_only
def test_what_the_children_leave_in_the_queue_this_process_runs() -> None:
    numbers = [704, 101, 703, 201, 702, 301, 603]
    results = _run_workers("plain", numbers)
    # Whoever took them, every unit ran once, and the findings come back in rule and share order.
    assert [[f[0] for f in findings] for findings in results] == [
        [f"PL{n}"] * (SHARES if n in (201, 702, 703, 704) else 1) for n in numbers
    ]
    assert all(
        [f[2] for f in findings] == ([[k, SHARES] for k in range(SHARES)] if len(findings) > 1 else [None])
        for findings in results
    )


_CLOSE_SCRIPT = """\
import json, os, sys, time
from policylint.rules import engine, workers

class Rule:
    per_object = False

    def __init__(self, rule_id):
        self.id = rule_id

from tests.poolstub import Project

def run_units(units):
    for unit in units:
        time.sleep(600)  # a child still at work when the run stops
    return {}

assert workers.start(Project(), [Rule("PL101")], run_units, 2) is None  # one unit: nothing to share
pool = workers.start(Project(), [Rule("PL101"), Rule("PL102")], run_units, 2)
children = [pid for pid, _ in pool._children]
time.sleep(0.5)
started = time.monotonic()
pool.close()  # the run stopped before `finish` (an exception, a usage error)
alive = []
for pid in children:
    try:
        os.kill(pid, 0)
        alive.append(pid)
    except ProcessLookupError:
        pass
print(json.dumps([len(children), alive, time.monotonic() - started]))
"""


@linux_only
def test_a_run_stopped_before_it_gathers_the_rules_ends_their_processes() -> None:
    proc = subprocess.run(
        [sys.executable, "-c", _CLOSE_SCRIPT], capture_output=True, text=True, timeout=RUN_TIMEOUT, cwd=REPO, check=False
    )
    assert proc.returncode == 0, proc.stderr
    forked, alive, took = json.loads(proc.stdout)
    assert forked == 1
    assert alive == []  # ended and reaped: no zombie left either
    assert took < GONE_TIMEOUT


def test_the_rules_start_once_the_stages_they_read_are_built(monkeypatch: pytest.MonkeyPatch) -> None:
    """`engine.start` hands the processes every rule whose stages are built, `Started.advance` those
    whose stages were built since (the pipeline calls them before the admissions and once the
    topology is built): the others, which read the simulation, stay with this process."""
    from policylint.input.positions import PositionResolver
    from policylint.pipeline import LintRequest, _project, build_stages
    from policylint.rules import REGISTRY, engine
    from policylint.stages import Stage

    project = _project(LintRequest(paths=[str(REPO / "examples")]))[0]
    given: list[list[str]] = []

    def start(project: Any, rules: Any, run_units: Any, jobs: int, earlier: Any = (), handback: Any = None) -> None:
        assert jobs == 2
        given.append([rule.id for rule in rules])

    monkeypatch.setattr(workers, "start", start)
    started = engine.start(project, REGISTRY, PositionResolver(lambda file: None), jobs=2)
    assert not build_stages(project, {Stage.TOPOLOGY})
    started.advance(project)
    assert started.pools == []
    first, then = given
    assert first == [rule.id for rule in REGISTRY if not rule.reads and not rule.after]
    # No pool started for the first (this stand-in starts none): its rules are offered again with
    # those of the stages built since (tests/input/test_processes_stages.py: when one starts).
    assert then == [rule.id for rule in REGISTRY if Stage.SIMULATION not in rule.reads]
    assert {"PL101", "PL201"} <= set(first)
    assert not {"PL702", "PL704", "PL401", "PL010"} & set(first)
    assert "PL010" in then  # it reads the index alone, and comes after the topology (`Rule.after`)
    assert {"PL702", "PL704", "PL401"} <= set(then)
    assert not {"PL601", "PL603"} & {*first, *then}

    # Rules that all read the simulation (`--select PL6`): none is ready before it, so they are
    # shared among the processes once it is built, with the jobs given to `start`.
    given.clear()
    effective = [rule for rule in REGISTRY if Stage.SIMULATION in rule.reads]
    started = engine.start(project, effective, PositionResolver(lambda file: None), jobs=2)
    started.advance(project)
    assert not build_stages(project, {Stage.SIMULATION})
    result = engine.run(project, effective, PositionResolver(lambda file: None), started=started)
    assert given == [[rule.id for rule in effective]]
    assert not result.internal_error


_PREFERENCE_SCRIPT = """\
import fcntl, json, os, struct, sys, termios, time
from policylint.rules import workers

class Rule:
    def __init__(self, rule_id):
        self.id = rule_id
        self.per_object = rule_id == "PL702"

from tests.poolstub import Project

parent = os.getpid()
taken = []  # (who, rule, share), in the order each process took them
queues = {}  # the queue's pipes, which the child reads before `start` returns here
made = workers._queues

def making(todo):
    queues.update(made(todo))
    return queues

workers._queues = making

def queued(shares):
    return struct.unpack("i", fcntl.ioctl(queues[shares], termios.FIONREAD, bytes(4)))[0] // 2

def run_units(units):
    out = {}
    for rule, share in units:
        child = os.getpid() != parent
        if not child and rule.id == "PL999":
            # This process's own rule, busy until the child has taken its first unit.
            while queued(True) + queued(False) == len(pool.todo):
                time.sleep(0.01)
        taken.append(["child" if child else "here", rule.id, share])
        if child and len(taken) == 1:
            # The child holds its first unit until this process has stopped taking: no whole rule
            # left, and no more shares than children.
            while queued(False) or queued(True) > 1:
                time.sleep(0.01)
        out[(rule.id, share)] = ([list(taken)] if child else [], None)
    return out

rules = [Rule("PL101"), Rule("PL102"), Rule("PL702")]
pool = workers.start(Project(), rules, run_units, 2)
results = pool.finish([(Rule("PL999"), None)], run_units)
sent = [found for (rule_id, share), (findings, _) in sorted(results.items(), key=str) for found in findings]
print(json.dumps({"here": taken, "child": max(sent, key=len) if sent else []}))
"""


@linux_only
def test_the_children_take_the_shares_first_and_this_process_the_whole_rules() -> None:
    proc = subprocess.run(
        [sys.executable, "-c", _PREFERENCE_SCRIPT], capture_output=True, text=True, timeout=RUN_TIMEOUT, cwd=REPO, check=False
    )
    assert proc.returncode == 0, proc.stderr
    got = json.loads(proc.stdout)
    # The child's first unit is a share of the per-object rule, whatever the rules' costs say
    # (PL702's 12 over 8 shares is 1.5, above a whole rule's 1).
    assert got["child"][0] == ["child", "PL702", [0, SHARES]]
    # This process takes the whole rules first, then the shares in order, and leaves the last one
    # to the child, which has done the work a share's first unit prepares in each process.
    assert got["here"] == [
        ["here", "PL999", None],
        ["here", "PL101", None],
        ["here", "PL102", None],
        *(["here", "PL702", [k, SHARES]] for k in range(1, SHARES - 1)),
    ]
    assert got["child"][1:] == [["child", "PL702", [SHARES - 1, SHARES]]]


_FIRST_SHARE_SCRIPT = """\
import fcntl, json, os, struct, sys, termios, time
from policylint.rules import workers

class Rule:
    def __init__(self, rule_id):
        self.id = rule_id
        self.per_object = rule_id == "PL702"

from tests.poolstub import Project

held = int(sys.argv[1])  # the shares the queue holds when this process gets to them
parent = os.getpid()
taken = []  # (who, rule, share), in the order each process took them
queues = {}
made = workers._queues
released_read, released_write = os.pipe()  # written once this process has stopped taking

def making(todo):
    queues.update(made(todo))
    return queues

workers._queues = making
gather = workers._ready_first

def gathering(*args):
    os.write(released_write, b"x")  # this process is done taking: the child may go on
    yield from gather(*args)

workers._ready_first = gathering

def queued(shares):
    return struct.unpack("i", fcntl.ioctl(queues[shares], termios.FIONREAD, bytes(4)))[0] // 2

waited = False

def run_units(units):
    global waited
    out = {}
    for rule, share in units:
        child = os.getpid() != parent
        if not child and rule.id == "PL999":
            # This process's own rule, busy until the child has taken all but `held` shares.
            while queued(True) > held:
                time.sleep(0.01)
        taken.append(["child" if child else "here", rule.id, share])
        if child and not waited and queued(True) <= held:
            # The child holds the share it has until this process has stopped taking.
            os.read(released_read, 1)
            waited = True
        out[(rule.id, share)] = ([list(taken)] if child else [], None)
    return out

rules = [Rule("PL101"), Rule("PL702")]
pool = workers.start(Project(), rules, run_units, 2)
results = pool.finish([(Rule("PL999"), None)], run_units)
sent = [found for (rule_id, share), (findings, _) in sorted(results.items(), key=str) for found in findings]
print(json.dumps({"here": taken, "child": max(sent, key=len) if sent else []}))
"""


@linux_only
@pytest.mark.parametrize(
    ("held", "here"),
    [
        # Two left, one child: the child, prepared, finishes the share it holds and takes both in
        # about the time this process would spend on its first (the preparation and the share),
        # and the run would do that preparation twice: it takes none.
        (2, []),
        # Three left: its first share pays, then the next while more than one per child is left.
        (3, [SHARES - 3, SHARES - 2]),
    ],
)
def test_this_process_takes_a_first_share_only_where_more_than_two_per_child_are_left(held: int, here: list[int]) -> None:
    got = _run_script(_FIRST_SHARE_SCRIPT, str(held))
    assert got["here"] == [
        ["here", "PL999", None],
        ["here", "PL101", None],
        *(["here", "PL702", [k, SHARES]] for k in here),
    ]
    # Every other share the child's, in order.
    assert [share for _, _, share in got["child"]] == [[k, SHARES] for k in range(SHARES) if k not in here]


def test_the_queue_holds_each_share_of_the_per_object_rules_together_costliest_first() -> None:
    rules = [_Rule("PL704", True), _Rule("PL101"), _Rule("PL702", True), _Rule("PL603"), _Rule("PL301"), _Rule("PL506")]
    todo = workers.bundles(rules, 3)  # type: ignore[arg-type]
    assert [[(rule.id, share) for rule, share in bundle] for bundle in todo] == [
        # Per share, every per-object rule (PL702 12 + PL704 1, over 3): the verdicts they read are
        # computed once, in the process that takes the share.
        [("PL704", (0, 3)), ("PL702", (0, 3))],
        [("PL704", (1, 3)), ("PL702", (1, 3))],
        [("PL704", (2, 3)), ("PL702", (2, 3))],
        [("PL603", None)],  # COST 3
        [("PL506", None)],  # 2
        [("PL101", None)],  # 1, then by id
        [("PL301", None)],
    ]
    # One share: the per-object rules run whole, like the others.
    assert [[(rule.id, share) for rule, share in bundle] for bundle in workers.bundles(rules, 1)][:2] == [  # type: ignore[arg-type]
        [("PL702", None)],
        [("PL603", None)],
    ]


def _issue_key(issue: Any) -> str:
    return repr(
        (issue.rule_id, id(issue.object), issue.path, issue.message, issue.severity, issue.hint, issue.related, issue.fix)
    )


def _shares_find_what_one_run_finds(project: Any, rule: Any) -> int:
    """Check the rule's shares (2, 3, and as many as two processes make) against one run; the number of findings."""
    whole = [(issue, _issue_key(issue)) for issue in rule().check(project)]
    for n in (2, 3, SHARES):
        parts = [[_issue_key(issue) for issue in engine.issues(rule(), project, (k, n))] for k in range(n)]
        assert sorted(key for part in parts for key in part) == sorted(key for _, key in whole), (rule.id, n)
        for k, part in enumerate(parts):
            mine = [key for issue, key in whole if project.index.share_of(issue.object, n) == k]
            assert part == mine, (rule.id, n, k)
    return len(whole)


PER_OBJECT = ("PL201", "PL301", "PL426", "PL603", "PL702", "PL703", "PL704", "PL705", "PL706", "PL707")


@pytest.mark.parametrize(
    "where", ["examples", "tests/rules", "tests/data/realistic-repo", "tests/data/valid-per-kind", "messy", "clean"]
)
def test_a_per_object_rule_over_every_share_finds_what_one_run_finds(tmp_path: Path, where: str) -> None:
    """`Rule.per_object` is a promise: each finding depends on its object alone, so the shares of
    the objects `--jobs` runs the rule over find, together, exactly what one run finds, each
    share only its objects' findings, in the order one run gives them."""
    from benchmarks.generate import write_corpus
    from policylint.pipeline import LintRequest, lint

    path = REPO / where
    if where in ("messy", "clean"):  # the benchmark's corpora: many namespaces, many findings
        path = tmp_path / where
        write_corpus(600, path, **({"per_file": 0, "error_rate": 0.75} if where == "messy" else {}))
    result = lint(LintRequest(paths=[str(path)]))  # builds every stage the rules read
    split = [rule for rule in result.rules if rule.per_object]
    assert {rule.id for rule in split} == set(PER_OBJECT)
    found = {rule.id for rule in split if _shares_find_what_one_run_finds(result.project, rule)}
    assert found >= {"messy": {"PL201", "PL301"}, "clean": {"PL603"}, "tests/rules": {"PL707"}}.get(where, set())


def test_rules_never_see_the_shares() -> None:
    """The engine cuts the work of a per-object rule into shares; a rule only says what it finds
    on one object (`ObjectRule.check_object`) or one policy (`PolicyRule.check_policy`), and is
    made without any share."""
    import inspect

    from policylint.rules import REGISTRY
    from policylint.rules.base import ObjectRule, PolicyRule, Rule

    assert list(inspect.signature(Rule.__init__).parameters) == ["self", "config"]
    assert not {"share", "mine", "objects", "policies"} & set(vars(Rule))
    split = {rule.id for rule in REGISTRY if issubclass(rule, (ObjectRule, PolicyRule))}
    assert split == set(PER_OBJECT)
    assert {rule.id for rule in REGISTRY if rule.per_object} == split


def test_a_per_object_rule_finds_the_same_whatever_the_split() -> None:
    """A rule that says what it finds on one object: the engine runs it on every object, or on each
    share of them, and the findings are the same, each share's in index order, whatever the split."""
    from policylint.findings import Issue, Severity
    from policylint.k8s.objects import K8sObject
    from policylint.pipeline import LintRequest, lint
    from policylint.profiles.policy import Policy
    from policylint.project import Project
    from policylint.rules.base import ObjectRule, PolicyRule

    class EveryObject(ObjectRule):
        """Two findings on every object."""

        id = "PL990"
        name = "every-object"
        severity = Severity.INFO

        def check_object(self, project: Project, obj: K8sObject) -> Iterator[Issue]:
            yield self.issue(obj, "metadata.name", f"{obj.key} first")
            yield self.issue(obj, "kind", f"{obj.key} second")

    class EveryPolicy(PolicyRule):
        """One finding per target reference of every policy."""

        id = "PL991"
        name = "every-policy"
        severity = Severity.INFO

        def check_policy(self, project: Project, policy: Policy) -> Iterator[Issue]:
            for ref in policy.refs:
                yield self.issue(policy.obj, ref.path, f"{policy.key} -> {ref.name}")

    project = lint(LintRequest(paths=[str(REPO / "examples")])).project
    objects = project.index.objects
    namespaces = sorted({obj.namespace or "" for obj in objects})
    assert len(namespaces) > 3  # enough for every split below to cut
    policies = project.resolution.policies()
    expected = {
        EveryObject: [f"{obj.key} {which}" for obj in objects for which in ("first", "second")],
        EveryPolicy: [f"{p.key} -> {ref.name}" for p in policies for ref in p.refs],
    }
    for rule_cls, whole in expected.items():
        assert [issue.message for issue in engine.issues(rule_cls(), project)] == whole
        for n in (1, 2, 3, len(namespaces)):
            parts = [list(engine.issues(rule_cls(), project, (k, n))) for k in range(n)]
            assert sorted(issue.message for part in parts for issue in part) == sorted(whole), (rule_cls.id, n)
            for k, part in enumerate(parts):
                # Each share holds whole namespaces, and its findings come in the order one run gives them.
                assert {namespaces.index(issue.object.namespace or "") % n for issue in part} <= {k}  # type: ignore[union-attr]
                assert [issue.message for issue in part] == [m for m in whole if any(i.message == m for i in part)]
        assert 0 < len(list(engine.issues(rule_cls(), project, (0, 2)))) < len(whole)  # a share is not the whole


def test_a_whole_project_rule_is_never_split() -> None:
    from policylint.pipeline import LintRequest, lint
    from policylint.rules import REGISTRY

    project = lint(LintRequest(paths=[str(REPO / "examples")])).project
    (whole,) = (rule for rule in REGISTRY if rule.id == "PL404")
    with pytest.raises(TypeError, match="PL404 is not a per-object rule"):
        list(engine.issues(whole(), project, (0, 2)))


@pytest.mark.parametrize("rule_id", PER_OBJECT)
def test_a_per_object_rule_over_every_share_finds_what_one_run_finds_in_its_fixtures(rule_id: str) -> None:
    from policylint.pipeline import LintRequest, lint

    (fixtures,) = (REPO / "tests" / "rules").glob(f"{rule_id}-*")
    result = lint(LintRequest(paths=[str(fixtures / "bad.yaml")]))
    (rule,) = (rule for rule in result.rules if rule.id == rule_id)
    assert _shares_find_what_one_run_finds(result.project, rule) > 0


def test_the_shares_of_a_rule_build_its_whole_project_lookups_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A lookup a per-object rule builds over the whole project (names for PL201's hints, sections
    for PL301's, the policies' target fields for PL702 and PL703) is built once per project
    (`Project.derived`), not once per share: a run of two processes cuts a rule into eight."""
    from benchmarks.generate import write_corpus
    from policylint.pipeline import LintRequest, lint
    from policylint.rules import schema, section_name, targetref

    write_corpus(600, tmp_path, per_file=0, error_rate=0.75)
    # Objects the schemas refuse, in namespaces of several shares: what reads the target fields.
    (tmp_path / "refused.yaml").write_text(
        "".join(
            f"---\napiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\nmetadata: {{name: refused, namespace: ns-{n}}}\n"
            "spec: {bogus: 1, rules: [{backendRefs: [{name: web, port: 99999}]}]}\n"
            for n in range(SHARES)
        )
    )
    result = lint(LintRequest(paths=[str(tmp_path)]))
    built: dict[str, int] = {}

    def counted(module: Any, name: str) -> None:
        original = getattr(module, name)

        def compute(project: Any) -> Any:
            built[name] = built.get(name, 0) + 1
            return original(project)

        monkeypatch.setattr(module, name, compute)

    for module, name in [
        (targetref, "_objects_by_name"),
        (targetref, "_SimilarNames"),
        (section_name, "_SectionsByName"),
        (schema, "_target_fields"),
    ]:
        counted(module, name)
    rules = {rule.id: rule for rule in result.rules}
    found = {
        rule_id: sum(len(list(engine.issues(rules[rule_id](), result.project, (k, SHARES)))) for k in range(SHARES))
        for rule_id in ("PL201", "PL301", "PL702", "PL703")
    }
    assert found["PL201"] > 0 and found["PL301"] > 0  # what builds their lookups: a reference to nothing
    assert found["PL702"] == found["PL703"] == SHARES  # and a field or a value the schema refuses
    assert built == {"_objects_by_name": 1, "_SimilarNames": 1, "_SectionsByName": 1, "_target_fields": 1}

    # The engine keeps them no longer than the rules that read them run: a whole rule's are
    # dropped once it is done (at 100k objects they are tens of MiB), its shares' at the end.
    from policylint.input.positions import PositionResolver
    from policylint.rules.engine import _Runner

    project = result.project
    project.forget_derived()
    runner = _Runner(project, [rules["PL201"], rules["PL301"]], PositionResolver(lambda file: None), {})
    held: list[int] = []
    forget = project.forget_derived

    def counted_forget(*, done: bool = True) -> None:
        held.append(len(project._derived))
        forget(done=done)

    monkeypatch.setattr(project, "forget_derived", counted_forget)
    runner([(rules["PL201"], None), (rules["PL301"], None)])
    assert held == [2, 1, 0]  # PL201's two lookups, then PL301's one, each dropped after its rule
    held.clear()
    # Shares, and a whole rule between them (the queue may hand a process both): kept to the end.
    units = [(rules["PL201"], (0, 2)), (rules["PL301"], (0, 2)), (rules["PL702"], None), (rules["PL201"], (1, 2))]
    runner([*units, (rules["PL301"], (1, 2))])
    # PL201's two, PL301's one, PL702's target fields, and the policies of each share (`engine._PolicyShares`).
    assert held == [5] and project._derived == {}
    # One build each for the shares checked above, the whole rules' call and this one.
    assert built["_objects_by_name"] == built["_SectionsByName"] == 3


def test_the_shares_of_the_policy_rules_find_their_policies_in_one_pass(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each share of a `PolicyRule` takes its policies from lists made once per process, one pass
    over the policies for every share and every rule (`engine._PolicyShares`): each share of each
    rule went through every policy to find its own, n times the policies per rule. The shares
    still hold, in order, each policy of their namespaces once (checked against `share_of`)."""
    from benchmarks.generate import write_corpus
    from policylint.k8s.index import ProjectIndex
    from policylint.pipeline import LintRequest, lint

    write_corpus(600, tmp_path, per_file=0, error_rate=0.75)
    result = lint(LintRequest(paths=[str(tmp_path)]))
    project = result.project
    policies = project.resolution.policies()
    # The shares each policy belongs to, worked out here before the calls are counted.
    expected = [[p for p in policies if project.index.share_of(p.obj, SHARES) == k] for k in range(SHARES)]
    assert sum(1 for part in expected if part) > 1  # the corpus's namespaces spread over several shares
    project.forget_derived()
    calls: list[object] = []
    share_of = ProjectIndex.share_of

    def counted(index: ProjectIndex, obj: Any, n: int) -> int:
        calls.append(obj)
        return share_of(index, obj, n)

    monkeypatch.setattr(ProjectIndex, "share_of", counted)
    rules = {rule.id: rule for rule in result.rules}
    seen: dict[int, list[Any]] = {k: [] for k in range(SHARES)}

    for rule_id in ("PL201", "PL301"):
        rule = rules[rule_id]
        check_policy = rule.check_policy
        for k in range(SHARES):
            share: list[Any] = []
            monkeypatch.setattr(rule, "check_policy", lambda self, project, policy, share=share: share.append(policy) or ())
            list(engine.issues(rule(), project, (k, SHARES)))
            if rule_id == "PL201":
                seen[k] = share
            else:
                assert share == seen[k]  # the same lists for every rule
        monkeypatch.setattr(rule, "check_policy", check_policy)
    assert [seen[k] for k in range(SHARES)] == expected
    # One call per policy: 16 rule shares here went through the policies 16 times before.
    assert len(calls) == len(policies)


def test_a_process_answers_the_positions_of_each_share_as_it_ends(tmp_path: Path) -> None:
    """Positions cost as much as the rules on a repository with many findings: a process resolves
    those of a share's findings as soon as the share's units are done, so that the queue shares
    that work too (one process's batch at the end left the other waiting). Whole rules' findings
    are still answered in one batch at the end, and one process (no shares) makes one batch."""
    from benchmarks.generate import write_corpus
    from policylint.input.positions import PositionResolver
    from policylint.pipeline import LintRequest, lint
    from policylint.rules.engine import _Runner

    write_corpus(600, tmp_path, per_file=0, error_rate=0.75)
    result = lint(LintRequest(paths=[str(tmp_path)]))
    rules = {rule.id: rule for rule in result.rules}

    class Counted(PositionResolver):
        def __init__(self) -> None:
            super().__init__(lambda file: Path(file).read_text(encoding="utf-8"))
            self.batches: list[int] = []

        def prefetch(self, requests: Any) -> None:
            requests = list(requests)
            self.batches.append(len(requests))
            super().prefetch(requests)

    def findings(resolver: Counted, units: list[Any]) -> list[Any]:
        got = _Runner(result.project, list(rules.values()), resolver, {})(units)
        return sorted((f.rule, f.file, f.line, f.column, f.end_line, f.end_column) for r, _ in got.values() for f in r)

    # A rule that is not cut into shares, with findings in this corpus: the batch at the end.
    other = min({f.rule for f in result.findings} - {"PL201", "PL301"} - set(PER_OBJECT))
    whole, shared = Counted(), Counted()
    one_process = findings(whole, [(rules["PL201"], None), (rules["PL301"], None), (rules[other], None)])
    units = [(rules[r], (k, 2)) for k in range(2) for r in ("PL201", "PL301")] + [(rules[other], None)]
    assert findings(shared, units) == one_process
    assert len(whole.batches) == 1 and len(shared.batches) == 3  # share 0, share 1, then the other rule's
    assert sum(shared.batches) == sum(whole.batches) and all(n > 0 for n in shared.batches)


@linux_only
def test_a_rule_process_that_dies_costs_only_time() -> None:
    # The child dies holding a unit (and maybe this process took the rest): every unit is run
    # here, each once, with the results one process gives.
    results = _run_workers("dies", [704, 101, 703, 201])
    shares = [[k, SHARES] for k in range(SHARES)]
    assert results == [
        [["PL704", False, share] for share in shares],
        [["PL101", False, None]],
        [["PL703", False, share] for share in shares],
        [["PL201", False, share] for share in shares],
    ]


@linux_only
def test_a_process_running_another_thread_does_not_fork() -> None:
    # Forking a threaded process can deadlock the child (a lock held by the other thread): every
    # rule runs in this process, with the same results.
    results = _run_workers("threaded", [704, 101, 703, 201])
    assert results == [[["PL704", False, None]], [["PL101", False, None]], [["PL703", False, None]], [["PL201", False, None]]]


# --- the language server -------------------------------------------------------------------------


def _lsp_message(payload: dict[str, Any]) -> bytes:
    body = json.dumps(payload).encode("utf-8")
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


@pytest.mark.slow
@pytest.mark.every_python
def test_the_language_server_ends_on_sigterm_while_the_editor_keeps_its_input_open(tmp_path: Path) -> None:
    # Before: still running 10 s later, its stdin reader thread joined on the way out.
    # Started as an editor starts it, in the editor's session (in a session of its own, as `start`
    # makes one, the server before the fix happened to end: it must in both).
    proc = subprocess.Popen(
        [sys.executable, "-m", "policylint", "server"],
        cwd=tmp_path,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    try:
        assert proc.stdin is not None and proc.stdout is not None
        initialize = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"processId": None, "capabilities": {}}}
        # The readiness point: the answer to a request handled asynchronously, which the server
        # writes once its reader waits on standard input again (the idle server an editor keeps).
        symbols = {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "textDocument/documentSymbol",
            "params": {"textDocument": {"uri": (tmp_path / "none.yaml").as_uri()}},
        }
        for request in (initialize, symbols):
            proc.stdin.write(_lsp_message(request))
            proc.stdin.flush()
            length = 0
            while (line := proc.stdout.readline().strip()) != b"":
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":")[1])
            assert json.loads(proc.stdout.read(length))["id"] == request["id"]
        os.kill(proc.pid, signal.SIGTERM)
        assert proc.wait(timeout=GONE_TIMEOUT) == 143  # 128 + SIGTERM, as every command (policylint.entry)
        assert proc.stderr is not None and b"Traceback" not in proc.stderr.read()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        for stream in (proc.stdin, proc.stdout, proc.stderr):
            if stream is not None:
                stream.close()


def test_a_stop_signal_raised_where_python_wraps_it_still_stops_the_run(monkeypatch: pytest.MonkeyPatch) -> None:
    """The handler raises `Interrupted` wherever the main thread is. Raised in a descriptor's
    `__set_name__` (a class made as a module is imported), Python before 3.12 turns it into a
    RuntimeError: the run still exits 128 + the signal's number, not as an internal error."""
    from policylint import cli as cli_module
    from policylint import entry

    def making_a_class(**kwargs: Any) -> None:
        class Descriptor:
            def __set_name__(self, owner: type, name: str) -> None:
                raise entry.Interrupted(signal.SIGTERM)

        type("Made", (), {"field": Descriptor()})

    monkeypatch.setattr(cli_module.cli, "main", making_a_class)
    monkeypatch.setattr(entry, "_state", "running")
    monkeypatch.setattr(entry, "_was_stopped", False)
    assert entry._command(["check", "."]) == 128 + signal.SIGTERM
    assert entry._was_stopped
