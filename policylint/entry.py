"""Console entry point. Kept tiny so that `policylint --version` imports nothing heavy.

As a command (the console script, `python -m policylint`) it also decides how the process ends:

- SIGINT exits 130 and SIGTERM 143 (SIGHUP 129), 128 + the signal number as shells report a
  process a signal ended, without a traceback: the handler raises `Interrupted` in the main
  thread, the code below unwinds (stopping `--jobs` workers on the way, see policylint.input.parallel)
  and the exit code is returned. A second signal while unwinding exits at once. So does the
  first in a command that cannot unwind (policylint.stopping: the language server).
- A reader that goes away (`policylint . | head -1`) is not a failure of the lint: the rest of the
  output is dropped and the exit code is the one the findings give (0 with `--exit-zero`), with
  no "Exception ignored ... BrokenPipeError" at interpreter exit.

Called with `argv` (tests, embedding), none of that is installed: the caller owns its process.
"""

from __future__ import annotations

import io
import os
import sys

from policylint import __version__, stopping

# Not `from typing import TYPE_CHECKING`: importing typing (and re with it) would cost
# `policylint --version` ~10 ms. Type checkers treat any TYPE_CHECKING as true.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence
    from types import FrameType
    from typing import Any, NoReturn, TextIO

    from _typeshed import ReadableBuffer

# Signals that end a run; each keeps its disposition when it is not the default one (an ignored
# SIGHUP under nohup, an ignored SIGINT in a background job stay ignored).
_STOP_SIGNALS = ("SIGINT", "SIGTERM", "SIGHUP")


class Interrupted(BaseException):
    """A stop signal, raised in the main thread. Not an Exception: nothing may swallow it."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


def main(argv: Sequence[str] | None = None) -> int:
    if argv is not None:
        return _main(list(argv))
    # First of all, so that a stop signal at any moment from here on exits 128 + its number with
    # nothing on stderr, while the modules the command needs are still importing too (there a
    # SIGINT would be a KeyboardInterrupt traceback, a SIGTERM a death with no exit code of ours).
    _install_signal_handlers()
    try:
        args = sys.argv[1:]
        if args == ["--version"]:
            return _command(args)  # before anything below: pre-commit and CI call this often
        import gc

        # One command, then the process exits: the cyclic collector would only rescan what the
        # run builds. The lint keeps it off while it works, but the first pass after (at the first
        # allocations of the report) would visit every object the run made: 0.35 s of a 4.3 s
        # command at 10k objects, to free nothing the process could reuse.
        gc.disable()
        code = _command(args)
    except Interrupted as exc:  # between the handlers and `_command`'s own unwinding
        return _stopped(exc)
    if _was_stopped:
        _leave(code)
    # The command ends here. What the run built is now garbage held in reference cycles (index,
    # topology, simulation); the collector's last pass at interpreter exit would visit and free it
    # object by object: 0.7 s after a 10k-object run. That pass skips frozen objects, and the OS
    # takes the memory back at once.
    gc.freeze()
    return code


def _main(args: list[str]) -> int:
    if args == ["--version"]:
        # Answer without importing anything heavy: pre-commit and CI call this often.
        from policylint.version import yaml_parser

        print(f"policylint, version {__version__} ({yaml_parser()})")
        return 0
    try:
        from policylint.cli import cli

        cli.main(args=args, prog_name="policylint", standalone_mode=True)
    except SystemExit as exc:
        code = exc.code
        return code if isinstance(code, int) else (0 if code is None else 2)
    except Exception as exc:  # a bug in policylint, not a problem with the input
        stop = _carried_stop(exc)
        if stop is not None:
            raise stop from None
        if os.environ.get("POLICYLINT_DEBUG"):
            raise
        # An exception's text may quote the input: escaped like every message (policylint.textsafe).
        from policylint.textsafe import escape

        print(
            f"policylint: internal error: {type(exc).__name__}: {escape(str(exc), 1_000)} (set POLICYLINT_DEBUG=1 for a traceback)",
            file=sys.stderr,
        )
        return 2
    return 0


def _carried_stop(exc: BaseException) -> Interrupted | None:
    """The stop signal an exception carries as its cause or context, if any. The handler raises
    `Interrupted` wherever the main thread is, and a few places turn what is raised there into
    another exception: Python before 3.12 raises a RuntimeError for one raised in a descriptor's
    `__set_name__` (a class being made as a module is imported, at any moment of a run)."""
    seen: set[BaseException] = set()  # exceptions hash by identity
    found: BaseException | None = exc
    while found is not None and found not in seen:
        if isinstance(found, Interrupted):
            return found
        seen.add(found)
        found = found.__cause__ or found.__context__
    return None


# "running": a stop signal raises Interrupted (unless policylint.stopping says otherwise);
# "stopping" (unwinding from one) or "done" (the run is over, its output flushed): a stop signal
# exits the process at once.
_state = "running"


def _command(args: list[str]) -> int:
    global _state
    guards: list[_PipeGuard] = []
    try:
        _guard_standard_streams(guards)
        code = _main(args)
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()  # while a signal can still be answered with its exit code
            except (OSError, ValueError, AttributeError):  # an unguarded stream, closed or None
                pass
    except Interrupted as exc:
        code = _stopped(exc)
    _state = "done"
    lost = next((guard.failure for guard in guards if guard.fileno() == 1 and guard.failure), None)
    if lost is not None:
        # The report did not reach its reader: not a pass, whatever the findings were.
        _say(f"policylint: the report could not be written to standard output: {lost}")
        code = 2
    for guard in guards:
        if guard.reader_gone:
            # The Python docs' recipe for SIGPIPE (library/signal.html): whatever is still written
            # to this descriptor at interpreter exit goes to devnull instead of raising again.
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, guard.fileno())
            os.close(devnull)
    return code


def _say(line: str) -> None:
    """One line on standard error, written past the stream (which may be failing too)."""
    try:
        os.write(2, (line + "\n").encode("utf-8", "backslashreplace"))
    except OSError:
        pass


def _stopped(exc: Interrupted) -> int:
    global _state, _was_stopped
    _state = "done"  # a second signal from here on exits at once, with the same code
    _was_stopped = True
    return 128 + exc.signum


# Whether the command was stopped by a signal (and has unwound from it).
_was_stopped = False


def _leave(code: int) -> NoReturn:
    """End a stopped run now, its output flushed, without the interpreter's finalisation.

    Unwinding from the signal already did what a stop needs: the workers are stopped, temporary
    directories removed by their `with` blocks, cache entries are only ever written whole and then
    renamed. What finalisation would still do is join the parse pool's manager thread, which
    CPython 3.11 wakes at exit through a pipe that thread may be closing at that moment: under
    load, "Exception ignored in atexit callback ... OSError: [Errno 9] Bad file descriptor" was
    printed after a Ctrl-C. The second-signal path (`_on_stop_signal`) leaves the same way."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError, AttributeError):
            pass
    os._exit(code)


def _on_stop_signal(signum: int, frame: FrameType | None) -> None:
    global _state
    if _state == "running" and not stopping.at_once:
        _state = "stopping"
        raise Interrupted(signum)
    os._exit(128 + signum)  # asked twice, or after the run: nothing left worth waiting for


def _on_unraisable(unraisable: Any) -> None:
    """`sys.unraisablehook`: a stop signal's `Interrupted` raised where Python cannot pass it on
    (a weakref callback, a finaliser: "Exception ignored in ..."; the import system's module-lock
    callback runs after every import a run makes) would be lost, and the run go on to its end. It is
    delivered again instead, from another thread, so that the handler raises it in the code the run
    is in (and, should that be such a place again, here once more)."""
    global _state
    exc = unraisable.exc_value
    if isinstance(exc, Interrupted) and _state == "stopping":
        import _thread
        import signal

        _state = "running"
        _thread.start_new_thread(signal.raise_signal, (exc.signum,))
        return
    sys.__unraisablehook__(unraisable)


def _install_signal_handlers() -> None:
    import signal

    sys.unraisablehook = _on_unraisable
    for name in _STOP_SIGNALS:
        signum = getattr(signal, name, None)
        if signum is None:  # SIGHUP on Windows
            continue
        default = signal.default_int_handler if signum == signal.SIGINT else signal.SIG_DFL
        try:
            if signal.getsignal(signum) is default:
                signal.signal(signum, _on_stop_signal)
        except (OSError, ValueError):  # not the main thread, or a signal the platform refuses
            pass


class _PipeGuard(io.RawIOBase):
    """A standard stream's file descriptor, where a reader that went away is not an error.

    The first EPIPE marks the guard; what is written from then on is dropped. Without this, click
    turns the BrokenPipeError into exit code 1 before the findings decide the code.

    Any other write error (a full disk, a descriptor open for reading only) and a stream that was
    closed when the command started (`policylint . >&-`) are failures: what is written is dropped
    too, and `failure` says why, for the command to say so on standard error and exit 2 rather
    than lose the report silently (the findings would otherwise decide the exit code, 0 with none
    of them seen).
    """

    def __init__(self, fd: int, *, closed: bool = False) -> None:
        super().__init__()
        self._fd = fd
        self.reader_gone = False
        self.failure: str | None = None
        self._closed_at_start = closed

    def writable(self) -> bool:
        return True

    def fileno(self) -> int:
        return self._fd

    def isatty(self) -> bool:
        return False if self._closed_at_start else os.isatty(self._fd)

    def write(self, data: ReadableBuffer) -> int:
        view = memoryview(data).cast("B")
        if self._closed_at_start:
            if len(view) and self.failure is None:
                self.failure = "it was closed when the command started"
            return len(view)
        # All of it, as a buffered stream would: an unbuffered one (`python -u`) takes a short
        # write as final, and what a pipe did not take would be lost without an error.
        written = 0
        while written < len(view) and not self.reader_gone and self.failure is None:
            try:
                written += os.write(self._fd, view[written:])
            except BrokenPipeError:
                self.reader_gone = True
            except OSError as exc:
                self.failure = exc.strerror or type(exc).__name__
        return len(view)


def _closed_descriptor(fd: int) -> bool:
    """Whether standard descriptor `fd` is closed; if so, /dev/null takes its place.

    Otherwise the next file the command opens would get that number, and what is written to the
    standard stream would go into that file (a manifest, the cache)."""
    try:
        os.fstat(fd)
        return False
    except OSError:
        pass
    devnull = os.open(os.devnull, os.O_RDWR)
    if devnull != fd:
        os.dup2(devnull, fd)
        os.close(devnull)
    return True


def _guard_standard_streams(guards: list[_PipeGuard]) -> None:
    """Put standard output and error behind `_PipeGuard`s (POSIX; same encoding and buffering)."""
    if os.name != "posix":
        return
    for fd, name in ((1, "stdout"), (2, "stderr")):
        stream = getattr(sys, name)
        if stream is None and _closed_descriptor(fd):
            # Python leaves a stream closed at start-up as None, and print() drops what is written
            # to it without a word; the guard records it instead.
            guard = _PipeGuard(fd, closed=True)
            setattr(sys, name, io.TextIOWrapper(io.BufferedWriter(guard), encoding="utf-8", errors="backslashreplace"))
            guards.append(guard)
            continue
        if not isinstance(stream, io.TextIOWrapper):
            continue
        try:
            fd = stream.fileno()
            stream.flush()
        except (OSError, ValueError):
            continue
        guard = _PipeGuard(fd)
        # Unbuffered (`python -u`: the text layer writes straight to the file) stays unbuffered;
        # a text layer over a raw file is what Python itself builds then.
        buffered = isinstance(stream.buffer, io.BufferedWriter)
        binary: Any = io.BufferedWriter(guard) if buffered else guard
        wrapper: TextIO = io.TextIOWrapper(
            binary,
            encoding=stream.encoding,
            errors=stream.errors,
            newline="\n",  # as Python's own standard streams on POSIX: no translation
            line_buffering=stream.line_buffering,
            write_through=stream.write_through,
        )
        setattr(sys, name, wrapper)
        guards.append(guard)
