"""policylint never uses the network and never writes to what it lints (CONTRIBUTING.md "Reliability").

Every run here goes through the console entry point in-process (`policylint.entry.main`),
so that whatever the command line turns on by default (the parse cache, its directory
in the working directory) is exercised as users get it.

- Network: socket creation, connection and name resolution raise while every command runs.
- Writes: a read-only copy of examples/ is linted with the working directory outside
  it and inside it; a snapshot of every path below it (type, mode, size, mtime) must not
  change. The process's file-writing calls are watched too: running as root ignores
  permission bits, so inside the tree they fail as on a read-only file system (EROFS)
  and every attempt is recorded. The only writes allowed anywhere are under the parse
  cache directory (the user's cache directory, outside the tree and the working
  directory), and the run must answer exactly as it does on a writable copy.
"""

from __future__ import annotations

import errno
import io
import json
import os
import shutil
import socket
import stat
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from policylint.entry import main
from tests.lintutil import ROOT

EXAMPLES = ROOT / "examples"

Snapshot = dict[str, tuple[str, int, int, int]]


def snapshot(root: Path) -> Snapshot:
    """Every path below `root` (hidden ones too): kind, permission bits, size, mtime in ns."""
    out: Snapshot = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in [*dirnames, *filenames, "."]:
            path = Path(dirpath, name)
            st = path.lstat()
            kind = "dir" if stat.S_ISDIR(st.st_mode) else "link" if stat.S_ISLNK(st.st_mode) else "file"
            out[str(path.relative_to(root))] = (
                kind,
                stat.S_IMODE(st.st_mode),
                st.st_size if kind == "file" else 0,
                st.st_mtime_ns,
            )
    return out


def make_read_only(root: Path) -> None:
    for dirpath, _dirnames, filenames in os.walk(root):
        for name in filenames:
            os.chmod(Path(dirpath, name), 0o444)
        os.chmod(dirpath, 0o555)


def make_writable(root: Path) -> None:
    for dirpath, _dirnames, filenames in os.walk(root):
        os.chmod(dirpath, 0o755)
        for name in filenames:
            os.chmod(Path(dirpath, name), 0o644)


@pytest.fixture
def read_only_tree(tmp_path: Path) -> Iterator[Path]:
    tree = tmp_path / "tree"
    shutil.copytree(EXAMPLES, tree)
    make_read_only(tree)
    yield tree
    make_writable(tree)  # so that pytest can remove it


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(argv)
    out, err = capsys.readouterr()
    assert "internal error" not in err and "Traceback" not in err, err
    return code, out, err


# -- network -----------------------------------------------------------------------------------------------


class NetworkUsed(AssertionError):
    pass


@pytest.fixture
def no_network(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Make every way into the network raise; returns the list of attempts."""
    attempts: list[str] = []

    def refuse(name: str) -> Callable[..., Any]:
        def refused(*args: Any, **kwargs: Any) -> Any:
            attempts.append(f"{name}{args!r}")
            raise NetworkUsed(f"policylint must not use the network: {name}{args!r}")

        return refused

    monkeypatch.setattr(socket.socket, "__init__", refuse("socket.socket"))
    for name in (
        "create_connection",
        "getaddrinfo",
        "gethostbyname",
        "gethostbyname_ex",
        "gethostbyaddr",
        "socketpair",
        "fromfd",
    ):
        monkeypatch.setattr(socket, name, refuse(f"socket.{name}"))
    return attempts


def test_sockets_are_really_blocked(no_network: list[str]) -> None:
    with pytest.raises(NetworkUsed):
        socket.create_connection(("example.com", 443))
    with pytest.raises(NetworkUsed):
        socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    no_network.clear()


SCHEMA_FIXTURES = [(3, "schema-violation"), (5, "api-version-not-served"), (6, "experimental-field")]


@pytest.mark.parametrize(
    "argv",
    [
        [str(EXAMPLES)],
        ["check", "--format", "json", str(EXAMPLES)],
        ["--version"],
        ["rules"],
        ["rule", "PL201"],
        ["profiles"],
        ["rules", "--cel-coverage"],
        # The CEL rules evaluated, regular expressions (RE2) among them (PL704).
        [str(EXAMPLES.parent / "tests" / "rules" / "PL704-cel-violation")],
        # The schema rules against a channel: served versions, experimental fields, RE2 patterns.
        [
            *(str(EXAMPLES.parent / "tests" / "rules" / f"PL70{n}-{name}") for n, name in SCHEMA_FIXTURES),
            "--channel",
            "standard",
        ],
    ],
    ids=["lint", "lint-json", "version", "rules", "rule", "profiles", "cel-coverage", "lint-cel", "lint-channels"],
)
def test_no_command_uses_the_network(
    argv: list[str], no_network: list[str], capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    code, out, _ = run(argv, capsys)
    assert code in (0, 1)  # 1: the examples have findings on purpose
    assert out
    assert no_network == []


# -- writes ------------------------------------------------------------------------------------------------

_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND


class WriteGuard:
    """Records every attempt to create or change a file system entry; refuses those under `protected`."""

    def __init__(self, protected: Path) -> None:
        self.protected = os.path.realpath(protected)
        self.attempts: list[tuple[str, str]] = []

    def check(self, op: str, path: Any) -> None:
        if isinstance(path, int):
            return  # an open file descriptor: its opening was checked
        full = os.path.realpath(os.fsdecode(path))
        self.attempts.append((op, full))
        if full == self.protected or full.startswith(self.protected + os.sep):
            raise OSError(errno.EROFS, "Read-only file system (simulated by the test)", os.fsdecode(path))

    def install(self, monkeypatch: pytest.MonkeyPatch) -> None:
        real_open, real_os_open = io.open, os.open

        def guarded_open(file: Any, mode: str = "r", *args: Any, **kwargs: Any) -> Any:
            if any(c in mode for c in "wax+"):
                self.check(f"open({mode!r})", file)
            return real_open(file, mode, *args, **kwargs)

        def guarded_os_open(path: Any, flags: int, *args: Any, **kwargs: Any) -> int:
            if flags & _WRITE_FLAGS:
                self.check("os.open", path)
            return real_os_open(path, flags, *args, **kwargs)

        monkeypatch.setattr("builtins.open", guarded_open)
        monkeypatch.setattr(io, "open", guarded_open)
        monkeypatch.setattr(os, "open", guarded_os_open)
        for name in ("mkdir", "rmdir", "remove", "unlink", "chmod", "utime", "truncate", "symlink", "link", "mkfifo"):
            real = getattr(os, name, None)
            if real is not None:
                monkeypatch.setattr(os, name, self._wrap(name, real))
        for name in ("rename", "replace"):
            real = getattr(os, name)
            monkeypatch.setattr(os, name, self._wrap(name, real, both=True))

    def _wrap(self, name: str, real: Callable[..., Any], both: bool = False) -> Callable[..., Any]:
        def wrapped(path: Any, *args: Any, **kwargs: Any) -> Any:
            self.check(f"os.{name}", path)
            if both and args:
                self.check(f"os.{name}", args[0])
            return real(path, *args, **kwargs)

        return wrapped


@pytest.mark.parametrize("cwd", ["outside", "inside"])
def test_a_read_only_tree_is_never_written(
    cwd: str, read_only_tree: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # The default cache location: the user's cache directory (here in tmp_path).
    monkeypatch.delenv("POLICYLINT_CACHE_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("LOCALAPPDATA", str(tmp_path / "local"))
    from policylint.input.cache import default_directory

    cache = os.path.realpath(default_directory() or "")
    assert cache.startswith(os.path.realpath(tmp_path) + os.sep)
    # What a writable copy gives (linted from inside, so file names are relative): the same answer.
    writable = tmp_path / "writable"
    shutil.copytree(EXAMPLES, writable)
    monkeypatch.chdir(writable)
    expected = run(["check", "--format", "json", "."], capsys)[:2]
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()

    monkeypatch.chdir(read_only_tree if cwd == "inside" else elsewhere)
    target = "." if cwd == "inside" else str(read_only_tree)
    before = snapshot(read_only_tree)
    guard = WriteGuard(read_only_tree)
    guard.install(monkeypatch)
    for _ in range(2):  # the second run would read a cache written by the first
        code, out, _ = run(["check", "--format", "json", target], capsys)
        assert (code, _file_fingerprints_blanked(out.replace(str(read_only_tree) + "/", ""))) == (
            expected[0],
            _file_fingerprints_blanked(expected[1]),
        )
    monkeypatch.undo()  # stop guarding before inspecting

    assert snapshot(read_only_tree) == before
    # Nothing written anywhere, except the parse cache; the working directory stays empty.
    cache_home = os.path.dirname(cache)  # creating the cache directory creates its parent too
    stray = [(op, path) for op, path in guard.attempts if not (path == cache_home or path.startswith(cache_home + os.sep))]
    assert stray == []
    assert list(elsewhere.rglob("*")) == []
    assert list(Path(cache, "parse").iterdir())  # the cache was used, not silently dropped


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX permission bits")
def test_a_read_only_tree_is_never_written_by_the_installed_command(read_only_tree: Path, tmp_path: Path) -> None:
    """The real thing: a separate process and real permission bits. The working directory is
    outside the tree, where the parse cache may go: root ignores permission bits, so only this
    placement proves the same thing for every user (the in-process test covers a working
    directory inside a read-only tree)."""
    before = snapshot(read_only_tree)
    workdir = tmp_path / "workdir"
    workdir.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "POLICYLINT_CACHE_DIR")}
    # The default cache location, the user's cache directory, here in tmp_path.
    env.update(HOME=str(tmp_path / "home"), XDG_CACHE_HOME=str(tmp_path / "xdg"), LOCALAPPDATA=str(tmp_path / "local"))
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(Path(__file__).resolve().parents[2]), env.get("PYTHONPATH")) if p)
    proc = subprocess.run(
        [sys.executable, "-m", "policylint", "--format", "json", str(read_only_tree)],
        cwd=workdir,
        env=env,
        capture_output=True,
        text=True,
    )
    assert proc.returncode in (0, 1), proc.stderr
    assert "internal error" not in proc.stderr
    assert snapshot(read_only_tree) == before
    assert list(workdir.rglob("*")) == []  # the cache is not in the working directory


def _file_fingerprints_blanked(report_text: str) -> str:
    """The report with the fingerprints of object-less findings blanked: those hash the file name
    as shown (relative here, absolute there); every other field must be identical."""
    report = json.loads(report_text)
    for finding in report["findings"]:
        if finding["object"] is None:
            finding["fingerprint"] = "(file name)"
    return json.dumps(report, indent=2)
