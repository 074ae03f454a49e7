"""Reading only what policylint should read (rule PL008 unreadable-file).

A repository can hold, or a symlink in it can point to, things that are not
manifests: FIFOs, sockets, devices (`/dev/zero`, `/dev/stdin`), our own
standard output (`/proc/self/fd/1`), or whole trees outside the linted paths
(`/`, `/usr`). Only regular files inside the named paths are read; everything
else is a located PL008 finding, and every other file is still linted.

Runs that could hang go through the command in a subprocess, with standard
output a pipe, standard input open and never written (as in CI, where a read
of /dev/stdin blocks) and a timeout: a regression fails instead of hanging the
suite.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from policylint.commands.check import run_check
from policylint.findings import Location
from policylint.input import load
from policylint.input.sources import OUTSIDE_LINK, Source, discover, display_name
from policylint.settings import Settings
from tests.lintutil import assert_valid_report, lint_paths

# A Service and a policy targeting it: the policy's target resolves only if both documents of
# this file were read and indexed, so "the good file is linted" shows in the JSON report.
GOOD = """\
apiVersion: v1
kind: Service
metadata:
  name: web
  namespace: app
spec:
  ports:
  - name: https
    port: 443
---
apiVersion: gateway.networking.k8s.io/v1
kind: BackendTLSPolicy
metadata:
  name: web-tls
  namespace: app
spec:
  targetRefs:
  - group: ""
    kind: Service
    name: web
  validation:
    hostname: web.app.svc.cluster.local
    wellKnownCACertificates: System
"""
# A YAML syntax error (PL001), for files that must (or must not) be read: the flow sequence is
# never closed, reported at the end of the last line, "b: [1, 2" (8 characters): line 2, column 9.
BROKEN = "a: 1\nb: [1, 2\n"
BROKEN_AT = (2, 9)
# Far more than a run needs; only a run that blocks (or reads /dev/zero to the cap) gets near it.
TIMEOUT = 60.0


@dataclass
class Run:
    returncode: int
    stdout: bytes
    stderr: str

    def report(self) -> dict[str, Any]:
        document = json.loads(self.stdout.decode("utf-8"))  # strict: the report must be valid UTF-8
        assert isinstance(document, dict)
        assert_valid_report(document)
        return document


def _drain(stream: Any, into: list[bytes]) -> threading.Thread:
    thread = threading.Thread(target=lambda: into.append(stream.read()), daemon=True)
    thread.start()
    return thread


def run_cli(*args: str | os.PathLike[str], cwd: Path | None = None) -> Run:
    """`policylint check ARGS --format json --no-cache` in a subprocess that cannot hang the suite.

    Standard input is a pipe that is never written nor closed (not `communicate()`, which closes
    it): reading /dev/stdin blocks there, as it does in a CI job.
    """
    command = [sys.executable, "-m", "policylint", "check", *map(str, args), "--format", "json", "--no-cache"]
    env = {k: v for k, v in os.environ.items() if not k.startswith("POLICYLINT_")}
    env["NO_COLOR"] = "1"
    proc = subprocess.Popen(command, cwd=cwd, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out: list[bytes] = []
    err: list[bytes] = []
    readers = [_drain(proc.stdout, out), _drain(proc.stderr, err)]
    try:
        proc.wait(timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        pytest.fail(f"policylint did not finish within {TIMEOUT:.0f} s: {command}")
    finally:
        for reader in readers:
            reader.join(10)
        assert proc.stdin is not None
        proc.stdin.close()
    return Run(proc.returncode, b"".join(out), b"".join(err).decode("utf-8", "replace"))


def _findings(report: dict[str, Any], root: Path) -> list[tuple[str, str, int, int, str, str]]:
    """(file relative to root, rule, line, column, severity, message) of every finding."""
    out = []
    for f in report["findings"]:
        rel = os.path.relpath(f["file"], root).replace(os.sep, "/")
        out.append((rel, f["rule"], f["line"], f["column"], f["severity"], f["message"]))
    return out


def _good_file_linted(report: dict[str, Any], root: Path) -> None:
    """good.yaml: no finding, and its policy listed with its target resolved (both documents read)."""
    assert [f for f in _findings(report, root) if f[0] == "good.yaml"] == []
    policies = {(p["object"]["namespace"], p["object"]["name"]): p for p in report["policies"]}
    assert [t["accepted"] for t in policies[("app", "web-tls")]["targets"]] == ["Accepted"]


# -- every kind of special file, next to a good manifest ---------------------------------------------


def _fifo(repo: Path, outside: Path) -> None:
    os.mkfifo(repo / "hostile.yaml")


def _socket(repo: Path, outside: Path) -> None:
    # AF_UNIX addresses are short (108 bytes on Linux) and tmp_path is long: bind by a relative name.
    previous = os.getcwd()
    os.chdir(repo)
    try:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.bind("hostile.yaml")
        sock.close()  # the socket file stays, with nobody behind it
    finally:
        os.chdir(previous)


def _link_to(target: str) -> Callable[[Path, Path], None]:
    def build(repo: Path, outside: Path) -> None:
        os.symlink(target, repo / "hostile.yaml")

    return build


def _link_to_fifo_outside(repo: Path, outside: Path) -> None:
    os.mkfifo(outside / "pipe")
    os.symlink(outside / "pipe", repo / "hostile.yaml")


def _link_to_fifo_inside(repo: Path, outside: Path) -> None:
    # The FIFO's own name is no manifest name: only the link would make it an input.
    os.mkfifo(repo / "pipe")
    os.symlink("pipe", repo / "hostile.yaml")


def _link_to_directory_outside(repo: Path, outside: Path) -> None:
    (outside / "tree").mkdir()
    (outside / "tree" / "broken.yaml").write_text(BROKEN)
    os.symlink(outside / "tree", repo / "hostile.yaml")


def _link_to_file_outside(repo: Path, outside: Path) -> None:
    (outside / "broken.yaml").write_text(BROKEN)
    os.symlink(outside / "broken.yaml", repo / "hostile.yaml")


@dataclass(frozen=True)
class Special:
    id: str
    build: Callable[[Path, Path], None]
    message: str  # what the PL008 message must say (case-sensitive substring)


SPECIALS = [
    Special("fifo", _fifo, "not a regular file: a FIFO"),
    Special("unix-socket", _socket, "not a regular file: a socket"),
    Special("link-to-dev-null", _link_to("/dev/null"), "not a regular file: a symlink to a character device (/dev/null)"),
    Special("link-to-dev-zero", _link_to("/dev/zero"), "not a regular file: a symlink to a character device (/dev/zero)"),
    # Standard input and output of the run are pipes here (in a terminal they are devices).
    Special("link-to-dev-stdin", _link_to("/dev/stdin"), "not a regular file: a symlink to a FIFO (/dev/stdin)"),
    Special("link-to-own-stdout", _link_to("/proc/self/fd/1"), "not a regular file: a symlink to a FIFO (/proc/self/fd/1)"),
    Special("link-to-fifo-outside", _link_to_fifo_outside, "not a regular file: a symlink to a FIFO"),
    Special("link-to-fifo-inside", _link_to_fifo_inside, "not a regular file: a symlink to a FIFO (pipe)"),
    Special("link-to-directory-outside", _link_to_directory_outside, OUTSIDE_LINK + ": "),
    Special("link-to-file-outside", _link_to_file_outside, OUTSIDE_LINK + ": "),
    Special("link-to-root", _link_to("/"), OUTSIDE_LINK + ": / (a directory)"),
]


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    (tmp_path / "repo").mkdir()
    (tmp_path / "outside").mkdir()
    (tmp_path / "repo" / "good.yaml").write_text(GOOD)
    return tmp_path / "repo"


@pytest.mark.parametrize("special", SPECIALS, ids=[s.id for s in SPECIALS])
def test_a_special_file_is_a_located_finding_and_the_run_goes_on(repo: Path, special: Special) -> None:
    outside = repo.parent / "outside"
    special.build(repo, outside)
    run = run_cli(repo)
    assert run.returncode == 1, run.stderr
    assert "Traceback" not in run.stderr
    report = run.report()
    findings = _findings(report, repo)
    # Exactly one finding: nothing behind the link (a broken manifest, for the links out) was read.
    assert [f[:5] for f in findings] == [("hostile.yaml", "PL008", 1, 1, "error")], findings
    assert special.message in findings[0][5], findings[0][5]
    _good_file_linted(report, repo)
    assert report["summary"]["objects"] == 2


def test_every_special_file_at_once(repo: Path) -> None:
    """All of them in one directory, as an attacker would commit them: one finding each."""
    outside = repo.parent / "outside"
    for n, special in enumerate(SPECIALS):
        sub = repo / f"{n:02d}-{special.id}"
        sub.mkdir()
        (outside / sub.name).mkdir()
        special.build(sub, outside / sub.name)
    run = run_cli(repo)
    assert run.returncode == 1, run.stderr
    report = run.report()
    findings = _findings(report, repo)
    assert [(f[0], f[1], f[2], f[3]) for f in findings] == [
        (f"{n:02d}-{s.id}/hostile.yaml", "PL008", 1, 1) for n, s in enumerate(SPECIALS)
    ]
    for (_, _, _, _, _, message), special in zip(findings, SPECIALS):
        assert special.message in message
    _good_file_linted(report, repo)


def test_a_link_to_a_directory_outside_is_reported_under_any_name(repo: Path) -> None:
    """Directories are walked whatever their name, so a link to one needs no manifest suffix."""
    outside = repo.parent / "outside"
    _link_to_directory_outside(repo, outside)
    os.rename(repo / "hostile.yaml", repo / "shared")
    run = run_cli(repo)
    findings = _findings(run.report(), repo)
    assert [f[:4] for f in findings] == [("shared", "PL008", 1, 1)]
    assert findings[0][5] == f"{OUTSIDE_LINK}: {outside / 'tree'} (a directory); not followed (--follow-outside-links to allow)"


def test_special_files_named_on_the_command_line_are_findings(repo: Path) -> None:
    os.mkfifo(repo / "pipe.yaml")
    run = run_cli(repo / "pipe.yaml", "/dev/null", repo / "good.yaml")
    assert run.returncode == 1, run.stderr
    report = run.report()
    got = sorted((f["file"], f["rule"], f["line"], f["column"], f["message"]) for f in report["findings"])
    assert got == [
        ("/dev/null", "PL008", 1, 1, "not a regular file: a character device; not read (to read standard input, name it `-`)"),
        (str(repo / "pipe.yaml"), "PL008", 1, 1, "not a regular file: a FIFO; not read (to read standard input, name it `-`)"),
    ]
    _good_file_linted(report, repo)


def test_dev_stdin_named_on_the_command_line_does_not_wait_for_input(repo: Path) -> None:
    run = run_cli("/dev/stdin", repo / "good.yaml")
    report = run.report()
    [finding] = report["findings"]
    assert (finding["file"], finding["rule"], finding["line"], finding["column"]) == ("/dev/stdin", "PL008", 1, 1)
    assert finding["message"].startswith("not a regular file: a symlink to a FIFO (")


# -- links out of the named paths ------------------------------------------------------------------


def test_links_out_of_the_roots_are_followed_only_with_the_option(repo: Path) -> None:
    outside = repo.parent / "outside"
    (outside / "tree").mkdir()
    (outside / "tree" / "in-tree.yaml").write_text(BROKEN)
    (outside / "single.yaml").write_text(BROKEN)
    os.mkfifo(outside / "pipe")
    os.symlink(outside / "tree", repo / "shared")
    os.symlink(outside / "single.yaml", repo / "single.yaml")
    os.symlink(outside / "pipe", repo / "pipe.yaml")

    without = _findings(run_cli(repo).report(), repo)
    assert [(f[0], f[1], f[2], f[3], f[4]) for f in without] == [
        ("pipe.yaml", "PL008", 1, 1, "error"),
        ("shared", "PL008", 1, 1, "error"),
        ("single.yaml", "PL008", 1, 1, "error"),
    ]
    assert [OUTSIDE_LINK in f[5] for f in without] == [False, True, True]

    run = run_cli(repo, "--follow-outside-links")
    with_option = _findings(run.report(), repo)
    # Read now, each under the link's name; a link to a FIFO is still never followed.
    assert [(f[0], f[1], f[2], f[3]) for f in with_option] == [
        ("pipe.yaml", "PL008", 1, 1),
        ("shared/in-tree.yaml", "PL001", *BROKEN_AT),
        ("single.yaml", "PL001", *BROKEN_AT),
    ]
    assert "a symlink to a FIFO" in with_option[0][5]


def test_links_inside_the_roots_are_read_as_before(repo: Path) -> None:
    (repo / "data").mkdir()
    (repo / "data" / "broken.txt").write_text(BROKEN)  # no manifest name: only the link is an input
    os.symlink("data/broken.txt", repo / "alias.yaml")
    (repo / "sub").mkdir()
    os.symlink("..", repo / "sub" / "up")  # a loop inside the root: entered once, ends
    os.symlink(repo / "data", repo / "sub" / "data-again")
    findings = _findings(run_cli(repo).report(), repo)
    assert [(f[0], f[1], f[2], f[3]) for f in findings] == [("alias.yaml", "PL001", *BROKEN_AT)]


def test_a_link_into_another_named_path_is_inside_the_roots(tmp_path: Path) -> None:
    (tmp_path / "apps").mkdir()
    (tmp_path / "common").mkdir()
    (tmp_path / "common" / "svc.yaml").write_text(GOOD)
    os.symlink("../common", tmp_path / "apps" / "shared")
    alone = lint_paths([tmp_path / "apps"])
    assert [(Path(f.file).name, f.rule) for f in alone.findings] == [("shared", "PL008")]
    both = lint_paths([tmp_path / "apps", tmp_path / "common"])
    assert all(f.rule != "PL008" for f in both.findings)
    assert sorted(os.path.relpath(f, tmp_path) for f in both.files) == ["apps/shared/svc.yaml", "common/svc.yaml"]


def test_a_symlink_named_on_the_command_line_is_its_own_root(repo: Path) -> None:
    """Naming a path is asking for it: a named link to a regular file is read wherever it points."""
    outside = repo.parent / "outside"
    (outside / "broken.yaml").write_text(BROKEN)
    os.symlink(outside / "broken.yaml", repo / "named.yaml")
    result = lint_paths([repo / "named.yaml"])
    assert [(f.rule, f.line, f.column) for f in result.findings] == [("PL001", *BROKEN_AT)]


def test_the_option_reaches_explain_and_graph(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from policylint.cli import cli

    outside = repo.parent / "outside"
    (outside / "tree").mkdir()
    (outside / "tree" / "gw.yaml").write_text(
        "apiVersion: gateway.networking.k8s.io/v1\nkind: Gateway\nmetadata: {name: far, namespace: app}\n"
        "spec:\n  gatewayClassName: envoy\n  listeners:\n  - {name: http, port: 80, protocol: HTTP}\n"
    )
    os.symlink(outside / "tree", repo / "shared")

    def run(*args: str) -> tuple[int | str | None, str, str]:
        with pytest.raises(SystemExit) as exit_:
            cli.main(list(args), standalone_mode=True)
        captured = capsys.readouterr()
        return exit_.value.code, captured.out, captured.err

    code, out, err = run("graph", str(repo))
    assert (code, "far" in out) == (0, False)
    assert "1 input problem skipped" in err  # the PL008 of the link
    code, out, _ = run("graph", str(repo), "--follow-outside-links")
    assert (code, "far" in out) == (0, True)
    code, _, err = run("explain", "gateway/app/far", str(repo))
    assert code == 2 and "no object of kind gateway" in err  # the link was not followed
    code, out, _ = run("explain", "gateway/app/far", str(repo), "--follow-outside-links")
    assert code == 0 and out.startswith(f"Gateway app/far  ({repo / 'shared' / 'gw.yaml'}:1)")


# -- directories that cannot be listed ---------------------------------------------------------------


@pytest.fixture
def unlistable(monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[[Path], None]]:
    """Make a directory unlistable: chmod 000, and where that does not stop us (root, or
    CAP_DAC_OVERRIDE), os.scandir refusing it as the kernel refuses other users."""
    denied: set[str] = set()
    restore: list[Path] = []
    real_scandir = os.scandir

    def scandir(path: Any = ".") -> Any:
        if isinstance(path, (str, os.PathLike)) and os.path.realpath(path) in denied:
            raise PermissionError(13, "Permission denied", path)
        return real_scandir(path)

    def make(directory: Path) -> None:
        directory.chmod(0)
        restore.append(directory)
        try:
            with real_scandir(directory):
                listable = True
        except PermissionError:
            listable = False
        if listable:
            denied.add(os.path.realpath(directory))
            monkeypatch.setattr(os, "scandir", scandir)

    yield make
    for directory in restore:
        directory.chmod(0o755)


def test_an_unreadable_subdirectory_is_a_finding(
    repo: Path, unlistable: Callable[[Path], None], capsys: pytest.CaptureFixture[str]
) -> None:
    (repo / "secret").mkdir()
    (repo / "secret" / "broken.yaml").write_text(BROKEN)
    unlistable(repo / "secret")
    assert run_check(Settings(paths=(str(repo),), fmt="json", cache=False)) == 1  # a gate that skipped it would pass
    report = json.loads(capsys.readouterr().out)
    findings = _findings(report, repo)
    assert findings == [
        ("secret", "PL008", 1, 1, "error", "cannot read directory: Permission denied; its files are not linted"),
    ]
    _good_file_linted(report, repo)


def test_an_unreadable_root_directory_is_a_finding_not_a_usage_error(
    tmp_path: Path, unlistable: Callable[[Path], None], capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "locked").mkdir()
    unlistable(tmp_path / "locked")
    assert run_check(Settings(paths=(str(tmp_path / "locked"),), cache=False)) == 1
    out = capsys.readouterr().out
    assert out == f"{tmp_path / 'locked'}:1:1: error PL008 cannot read directory: Permission denied; its files are not linted\n"


# -- the tree changing under the run ---------------------------------------------------------------


def _within(seconds: float, fn: Callable[[], Any], unblock: Callable[[], None]) -> Any:
    """fn() in a thread: a call that blocks fails the test (then `unblock` releases the thread)."""
    box: list[Any] = []
    thread = threading.Thread(target=lambda: box.append(fn()), daemon=True)
    thread.start()
    thread.join(seconds)
    if thread.is_alive():
        unblock()
        thread.join(seconds)
        pytest.fail("blocked")
    return box[0]


def _open_writer(path: Path) -> Callable[[], None]:
    def unblock() -> None:
        try:
            os.close(os.open(path, os.O_WRONLY | os.O_NONBLOCK))
        except OSError:
            pass

    return unblock


def test_a_fifo_swapped_in_after_the_walk_is_not_read(repo: Path) -> None:
    [source] = discover([str(repo)])
    os.unlink(repo / "good.yaml")
    os.mkfifo(repo / "good.yaml")
    data, issue = _within(10, lambda: load.read_bytes(source), _open_writer(repo / "good.yaml"))
    assert data is None and issue is not None
    assert (issue.rule_id, issue.location, issue.message) == (
        "PL008",
        Location(source.display, 1, 1),
        "not a regular file: a FIFO; not read",
    )


def test_a_link_changed_after_the_walk_is_not_followed(repo: Path) -> None:
    outside = repo.parent / "outside"
    (repo / "real.txt").write_text(GOOD)
    (outside / "secret.yaml").write_text(BROKEN)
    os.symlink("real.txt", repo / "link.yaml")
    [source] = [s for s in discover([str(repo)]) if s.display.endswith("link.yaml")]
    assert load.read_bytes(source)[0] == GOOD.encode()
    os.unlink(repo / "link.yaml")
    os.symlink(outside / "secret.yaml", repo / "link.yaml")  # now out of the root
    data, issue = load.read_bytes(source)
    assert data is None and issue is not None and issue.rule_id == "PL008"
    assert "symlink changed while policylint ran" in issue.message


def test_a_file_replaced_by_a_link_after_the_walk_is_not_followed(repo: Path) -> None:
    outside = repo.parent / "outside"
    (outside / "secret.yaml").write_text(BROKEN)
    [source] = [s for s in discover([str(repo)]) if s.display.endswith("good.yaml")]
    os.unlink(repo / "good.yaml")
    os.symlink(outside / "secret.yaml", repo / "good.yaml")
    data, issue = load.read_bytes(source)
    assert data is None and issue is not None and issue.rule_id == "PL008"
    assert "replaced by a symlink" in issue.message


@pytest.fixture
def edit_before_positions(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[Callable[[], None]]]:
    """Actions run after every file was parsed, just before positions are resolved."""
    from policylint import pipeline
    from policylint.input.positions import PositionResolver

    actions: list[Callable[[], None]] = []

    class Resolver(PositionResolver):
        def __init__(self, read_text: Callable[[str], str | None], *args: Any) -> None:
            for action in actions:
                action()
            super().__init__(read_text, *args)

    monkeypatch.setattr(pipeline, "PositionResolver", Resolver)
    yield actions


# A policy whose target does not exist: PL201 at the targetRef, `- group: ""` on line 8, whose
# mapping starts at column 5 (after `  - `).
MISSING_TARGET = """\
apiVersion: gateway.networking.k8s.io/v1
kind: BackendTLSPolicy
metadata:
  name: lost
  namespace: app
spec:
  targetRefs:
  - group: ""
    kind: Service
    name: nope
  validation:
    hostname: x.example.com
    wellKnownCACertificates: System
"""


@pytest.mark.parametrize("mode", ["parsed-here", "from-the-cache", "parsed-in-a-worker"])
def test_positions_are_those_of_what_was_parsed_when_the_file_changes(
    tmp_path: Path, edit_before_positions: list[Callable[[], None]], monkeypatch: pytest.MonkeyPatch, mode: str
) -> None:
    from policylint.input import parallel

    path = tmp_path / "repo" / "policy.yaml"
    path.parent.mkdir()
    path.write_text(MISSING_TARGET)
    # A smaller second file: with two jobs, the pool is handed the largest file (policy.yaml) first.
    (path.parent / "small.yaml").write_text("apiVersion: v1\nkind: Service\nmetadata: {name: s, namespace: app}\n")
    options: dict[str, Any] = {}
    if mode == "from-the-cache":
        options["cache_dir"] = str(tmp_path / "cache")
        lint_paths([path.parent], **options)  # fills the cache
    elif mode == "parsed-in-a-worker":
        monkeypatch.setattr(parallel, "PARALLEL_MIN_BYTES", 0)
        monkeypatch.setattr(parallel, "effective_jobs", lambda jobs: 2)  # even on one CPU
        options["jobs"] = 2
    parsed_here: list[str] = []
    real_parse = parallel._parse

    def parse(data: bytes, file: str, *args: Any) -> Any:
        parsed_here.append(os.path.basename(file))
        return real_parse(data, file, *args)

    monkeypatch.setattr(parallel, "_parse", parse)

    def edit() -> None:
        # Twenty lines inserted above: positions from a re-read would move by 20 (line 30).
        path.write_text("# edited\n" * 20 + MISSING_TARGET)

    edit_before_positions.append(edit)
    result = lint_paths([path.parent], **options)
    if mode == "parsed-in-a-worker":
        assert "policy.yaml" not in parsed_here  # the pool took it (small.yaml may go either way)
    else:
        assert parsed_here == {"parsed-here": ["policy.yaml", "small.yaml"], "from-the-cache": []}[mode]
    assert [(f.rule, f.line, f.column, f.path) for f in result.findings if f.rule == "PL201"] == [
        ("PL201", 10, 5, "spec.targetRefs[0].name")
    ]
    assert MISSING_TARGET.splitlines()[7] == '  - group: ""'


def test_positions_are_resolved_when_the_file_became_a_fifo(
    tmp_path: Path, edit_before_positions: list[Callable[[], None]]
) -> None:
    path = tmp_path / "policy.yaml"
    path.write_text(MISSING_TARGET)

    def swap() -> None:
        path.unlink()
        os.mkfifo(path)

    edit_before_positions.append(swap)
    result = _within(30, lambda: lint_paths([path]), _open_writer(path))
    assert [(f.rule, f.line, f.column) for f in result.findings if f.rule == "PL201"] == [("PL201", 10, 5)]


# -- file names that are not UTF-8 ---------------------------------------------------------------------


def test_display_names_escape_bytes_that_are_not_utf8() -> None:
    assert display_name(os.fsdecode(b"dir/bad\xff\xfe.yaml")) == "dir/bad\\xff\\xfe.yaml"
    assert display_name("dir/caf\u00e9.yaml") == "dir/caf\u00e9.yaml"  # valid UTF-8 is shown as is


@pytest.mark.skipif(sys.platform == "darwin", reason="APFS refuses file names that are not UTF-8")
def test_a_file_name_that_is_not_utf8_is_reported_with_an_escape(repo: Path) -> None:
    raw = os.fsencode(repo) + b"/bad\xff.yaml"
    fd = os.open(raw, os.O_WRONLY | os.O_CREAT, 0o644)
    os.write(fd, BROKEN.encode())
    os.close(fd)
    run = run_cli(repo)
    assert run.returncode == 1
    report = run.report()  # decodes the output as strict UTF-8
    findings = _findings(report, repo)
    # The real bytes path was opened (the syntax error is found where it is), the name is text.
    assert [(f[0], f[1], f[2], f[3]) for f in findings] == [("bad\\xff.yaml", "PL001", *BROKEN_AT)]
    assert "\\\\xff" in run.stdout.decode("ascii")  # JSON spelling of the backslash in `bad\xff`
    _good_file_linted(report, repo)


def test_sources_keep_the_real_path_of_a_name_that_is_not_utf8(tmp_path: Path) -> None:
    raw = os.fsencode(tmp_path) + b"/x\xff.yaml"
    with open(raw, "wb") as fh:
        fh.write(b"a: 1\n")
    [source] = discover([str(tmp_path)])
    assert source == Source(display=display_name(str(tmp_path)) + "/x\\xff.yaml", fs_path=os.fsdecode(raw), nofollow=True)
    assert load.read_bytes(source) == (b"a: 1\n", None)


@pytest.mark.skipif(sys.platform == "darwin", reason="APFS refuses file names that are not UTF-8")
def test_two_names_that_display_alike_are_both_linted(tmp_path: Path) -> None:
    # `x\xff.yaml` spelled out with a backslash, and `x` + the raw byte 0xff + `.yaml`: one
    # display name, two files. Neither may be dropped as a duplicate of the other.
    with open(os.fsencode(tmp_path) + b"/x\xff.yaml", "wb") as fh:
        fh.write(b"a: 1\n")
    (tmp_path / "x\\xff.yaml").write_text("b: 2\n")
    sources = discover([str(tmp_path)])
    assert len(sources) == 2
    assert len({s.display for s in sources}) == 2
    assert {s.fs_path for s in sources} == {os.fsdecode(os.fsencode(tmp_path) + b"/x\xff.yaml"), str(tmp_path / "x\\xff.yaml")}
    assert {load.read_bytes(s)[0] for s in sources} == {b"a: 1\n", b"b: 2\n"}


def test_json_files_that_are_no_kubernetes_objects_are_skipped_not_linted(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Envoy Gateway's examples/kubernetes/jwt/ keeps jwks.json (a JWKS) beside the manifests that
    # read it: data, counted neither as a linted file nor as PL003. A JSON manifest is linted; so
    # is a JSON file that is not valid JSON (PL003 at its syntax error, as before).
    (tmp_path / "jwks.json").write_text('{"keys": [{"kty": "RSA", "e": "AQAB", "n": "xyz"}]}\n', encoding="utf-8")
    (tmp_path / "list.json").write_text("[1, 2]\n", encoding="utf-8")
    (tmp_path / "service.json").write_text(
        '{"apiVersion": "v1", "kind": "Service", "metadata": {"name": "s", "namespace": "default"},'
        ' "spec": {"ports": [{"port": 80}]}}\n',
        encoding="utf-8",
    )
    (tmp_path / "lost-kind.json").write_text('{"apiVersion": "v1", "metadata": {"name": "x"}}\n', encoding="utf-8")
    (tmp_path / "values.yaml").write_text("keys:\n- a\n", encoding="utf-8")
    assert run_check(Settings(paths=(str(tmp_path),), fmt="json", cache=False)) == 0
    out, err = capsys.readouterr()
    report = json.loads(out)
    assert report["summary"]["files"] == 3  # service.json, lost-kind.json, values.yaml
    assert sorted((Path(f["file"]).name, f["rule"]) for f in report["findings"]) == [
        ("lost-kind.json", "PL003"),
        ("values.yaml", "PL003"),
    ]
    assert "not manifests, skipped: 2 JSON files that are no Kubernetes objects" in err
