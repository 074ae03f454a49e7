"""The parse cache cannot be turned against the user.

Whoever can write a cache entry decides what policylint believes a file says, and pruning deletes
files. So (policylint/input/cache.py, docs/performance.md):

1. a cache inside the repository being linted (a linted path, or the git work tree holding one)
   is never used: in CI that is the pull request's checkout, and a committed entry could pass a
   broken manifest;
2. a cache directory is used only if it is a real directory (not a symlink), owned by this user,
   not group- or world-writable, and policylint's (its CACHEDIR.TAG; an empty directory becomes
   policylint's). Otherwise nothing in it is read, written or deleted, and the user is told once;
   pruning deletes only files named like entries or like its own temporary files;
3. no entry can crash or fail a run: entries are JSON checked field by field, and anything wrong
   with one (bytes, shape, size, depth) is a miss: the file is parsed again.
"""

from __future__ import annotations

import hashlib
import json
import marshal
import os
import random
import shutil
import stat
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from policylint.entry import main
from policylint.input import cache as cache_mod
from policylint.input.cache import ParseCache, dumps, pack
from policylint.input.load import FileResult, load_bytes
from tests.lintutil import ROOT

# `b: c` after `spec:` is a YAML syntax error on line 4 (PL001, an error: exit code 1).
BAD = b"apiVersion: v1\nkind: Service\nmetadata: {name: forged, namespace: app}\nspec: b: c\n"
GOOD = b"apiVersion: v1\nkind: Service\nmetadata: {name: web, namespace: app}\nspec:\n  ports: [{name: http, port: 80}]\n"
WARNING = "policylint: warning: cache directory "


def make_repo(root: Path) -> Path:
    """A git work tree (as a CI checkout is) with one broken and one good manifest."""
    (root / ".git").mkdir(parents=True)
    (root / "manifests").mkdir()
    (root / "manifests" / "bad.yaml").write_bytes(BAD)
    (root / "manifests" / "good.yaml").write_bytes(GOOD)
    return root


def plant_forged_cache(directory: Path) -> None:
    """A cache made by policylint itself, whose entry for BAD says: no documents, no problems."""
    cache = ParseCache(directory)
    cache.put(cache.key(BAD), dumps(pack(FileResult([], []))))
    assert (directory / "CACHEDIR.TAG").is_file() and cache.writes == 1


def clean_env(tmp_path: Path) -> dict[str, str]:
    """The environment of a policylint process whose user cache directory is under tmp_path."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("POLICYLINT_")}
    env.update(
        HOME=str(tmp_path / "home"), XDG_CACHE_HOME=str(tmp_path / "xdg"), LOCALAPPDATA=str(tmp_path / "local"), NO_COLOR="1"
    )
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p)
    return env


def run_cli(args: list[str], *, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """policylint in its own process: a crash (a segfault is rc -11) fails only the calling test."""
    return subprocess.run(
        [sys.executable, "-m", "policylint", "check", "--format", "json", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def warnings(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith(WARNING)]


def rule_ids(report: str) -> list[tuple[str, str]]:
    return sorted((f["rule"], Path(f["file"]).name) for f in json.loads(report)["findings"])


# -- 1. a cache in the repository being linted is not used ------------------------------------------


@pytest.mark.parametrize(
    "where",
    ["cache-dir-option", "environment", "default-location", "work-tree-outside-linted-path"],
)
def test_a_forged_entry_in_a_repository_local_cache_is_not_used(where: str, tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    env = clean_env(tmp_path)
    args = ["."]
    cwd = repo
    if where == "cache-dir-option":
        planted = repo / ".policylint_cache"
        args = ["--cache-dir", ".policylint_cache", "."]
    elif where == "environment":
        planted = repo / ".policylint_cache"
        env["POLICYLINT_CACHE_DIR"] = str(planted)
    elif where == "default-location":
        # A CI job whose cache home is in the checkout (HOME=$PWD, or XDG_CACHE_HOME=.cache).
        planted = repo / ".cache" / "policylint"
        env["XDG_CACHE_HOME"] = str(repo / ".cache")
        env["HOME"] = str(repo)
        env["LOCALAPPDATA"] = str(repo / ".cache")
    else:
        # Only manifests/ is linted, but the cache is elsewhere in the same work tree.
        planted = repo / "tooling" / "cache"
        args = ["--cache-dir", str(planted), "manifests"]
    if where == "default-location" and sys.platform == "darwin":
        planted = repo / "Library" / "Caches" / "policylint"
    if where == "default-location" and sys.platform == "win32":
        planted = repo / ".cache" / "policylint" / "Cache"
    plant_forged_cache(planted)
    before = sorted(p.name for p in (planted / "parse").iterdir())

    proc = run_cli(args, cwd=cwd, env=env)

    assert proc.returncode == 1, proc.stderr
    assert ("PL001", "bad.yaml") in rule_ids(proc.stdout)
    assert len(warnings(proc.stderr)) == 1, proc.stderr
    assert "not used: it lies inside" in proc.stderr
    assert sorted(p.name for p in (planted / "parse").iterdir()) == before  # nothing written there either


def test_the_same_forged_cache_outside_the_repository_would_be_believed(tmp_path: Path) -> None:
    """The control for the test above: the planted cache is a well-formed policylint cache, so
    only where it lies keeps it out. (A cache the user keeps outside the repository is trusted:
    only that user can write it.)"""
    repo = make_repo(tmp_path / "repo")
    outside = tmp_path / "outside-cache"
    plant_forged_cache(outside)
    proc = run_cli(["--cache-dir", str(outside), "."], cwd=repo, env=clean_env(tmp_path))
    assert proc.returncode == 0, proc.stderr
    assert ("PL001", "bad.yaml") not in rule_ids(proc.stdout)
    assert warnings(proc.stderr) == []


def test_inside_linted_names_the_reason(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    assert cache_mod.inside_linted(str(repo / "x"), [str(repo / "manifests")]) is not None
    assert cache_mod.inside_linted(str(repo / "manifests" / "c"), [str(repo / "manifests" / "bad.yaml")]) is not None
    assert cache_mod.inside_linted(str(tmp_path / "elsewhere"), [str(repo / "manifests"), "-"]) is None
    # Without .git, only the linted directory itself is the user's input.
    plain = tmp_path / "plain"
    (plain / "sub").mkdir(parents=True)
    assert cache_mod.inside_linted(str(plain / "cache"), [str(plain / "sub")]) is None
    assert cache_mod.inside_linted(str(plain / "sub" / "cache"), [str(plain / "sub")]) is not None


# -- 2. directories that are not policylint's, or not this user's alone ------------------------------

VICTIMS = 40


def fill_with_victims(directory: Path) -> None:
    """Files named like cache entries (40 hex digits), old: the first that pruning would pick."""
    directory.mkdir(parents=True, exist_ok=True)
    for i in range(VICTIMS):
        path = directory / hashlib.blake2b(str(i).encode(), digest_size=20).hexdigest()
        path.write_bytes(b"someone else's file\n")
        os.utime(path, (1_000_000_000, 1_000_000_000))
    (directory / "notes.txt").write_text("someone else's file\n")


def tree_state(root: Path) -> dict[str, tuple[str, bytes, int]]:
    """Every path below `root`, links not followed: kind, content, mtime."""
    out: dict[str, tuple[str, bytes, int]] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in [*dirnames, *filenames]:
            path = Path(dirpath, name)
            st = path.lstat()
            if stat.S_ISLNK(st.st_mode):
                out[str(path.relative_to(root))] = ("link", os.readlink(path).encode(), 0)
            elif stat.S_ISDIR(st.st_mode):
                out[str(path.relative_to(root))] = ("dir", b"", 0)
            else:
                out[str(path.relative_to(root))] = ("file", path.read_bytes(), st.st_mtime_ns)
    return out


def _symlinked_cache_dir(base: Path, victim: Path) -> Path:
    # Even a genuine policylint cache is not used through a link: what the link points to is
    # decided by whoever made the link.
    ParseCache(victim).put("0" * 40, dumps(pack(FileResult([], []))))
    fill_with_victims(victim / "parse")
    os.symlink(victim, base / "cache")
    return base / "cache"


def _symlinked_entries_dir(base: Path, victim: Path) -> Path:
    ParseCache(base / "cache").put("0" * 40, dumps(pack(FileResult([], []))))
    shutil.rmtree(base / "cache" / "parse")
    fill_with_victims(victim)
    os.symlink(victim, base / "cache" / "parse")
    return base / "cache"


def _foreign_dir(base: Path, victim: Path) -> Path:
    # An existing directory policylint did not make (`--cache-dir ~/Documents` by mistake).
    fill_with_victims(victim / "parse")
    fill_with_victims(victim)
    return victim


def _foreign_tag(base: Path, victim: Path) -> Path:
    # Another tool's cache: the standard signature, but not policylint's tag.
    fill_with_victims(victim / "parse")
    (victim / "CACHEDIR.TAG").write_text("Signature: 8a477f597d28d172789f06886806bc55\n# another tool\n")
    return victim


def _writable_by(mode: int, entries: bool) -> Callable[[Path, Path], Path]:
    def build(base: Path, victim: Path) -> Path:
        ParseCache(victim).put("0" * 40, dumps(pack(FileResult([], []))))
        fill_with_victims(victim / "parse")
        (victim / "parse" if entries else victim).chmod(mode)
        return victim

    return build


UNSAFE: dict[str, tuple[Callable[[Path, Path], Path], str]] = {
    "symlinked-cache-dir": (_symlinked_cache_dir, "it is a symlink"),
    "symlinked-entries-dir": (_symlinked_entries_dir, "its 'parse' subdirectory is a symlink"),
    "foreign-dir-without-tag": (_foreign_dir, "it was not created by policylint"),
    "foreign-cachedir-tag": (_foreign_tag, "it was not created by policylint"),
    "group-writable-dir": (_writable_by(0o770, entries=False), "it is group- or world-writable"),
    "world-writable-dir": (_writable_by(0o707, entries=False), "it is group- or world-writable"),
    "group-writable-entries-dir": (_writable_by(0o770, entries=True), "its 'parse' subdirectory is group- or world-writable"),
}


def run_main(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(["check", "--format", "json", *args])
    out, err = capsys.readouterr()
    assert "Traceback" not in err and "internal error" not in err, err
    return code, out, err


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX owners, modes and symlinks")
@pytest.mark.parametrize("kind", sorted(UNSAFE))
def test_an_unsafe_directory_is_not_used_and_nothing_in_it_is_deleted(
    kind: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    build, reason = UNSAFE[kind]
    repo = make_repo(tmp_path / "repo")
    base = tmp_path / "base"
    base.mkdir()
    cache_dir = build(base, tmp_path / "victim")
    # Pruning pressure: were the directory used, the run would delete every unused entry.
    monkeypatch.setattr(cache_mod, "_MAX_ENTRIES", 1)
    before = tree_state(tmp_path / "victim")
    expected = run_main(["--no-cache", str(repo)], capsys)[:2]

    code, out, err = run_main(["--cache-dir", str(cache_dir), str(repo)], capsys)

    assert (code, out) == expected
    notes = warnings(err)
    assert len(notes) == 1 and notes[0].startswith(f"{WARNING}{cache_dir} not used: {reason}"), err
    assert tree_state(tmp_path / "victim") == before


@pytest.mark.skipif(not hasattr(os, "geteuid"), reason="POSIX owners")
def test_a_directory_owned_by_another_user_is_not_used(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = make_repo(tmp_path / "repo")
    cache_dir = tmp_path / "theirs"
    ParseCache(cache_dir).put("0" * 40, dumps(pack(FileResult([], []))))
    fill_with_victims(cache_dir / "parse")
    monkeypatch.setattr(cache_mod, "_MAX_ENTRIES", 1)
    before = tree_state(cache_dir)
    expected = run_main(["--no-cache", str(repo)], capsys)[:2]
    # As if another user had made it: chown needs root, a different effective uid does not.
    real_uid = os.geteuid()
    monkeypatch.setattr(os, "geteuid", lambda: real_uid + 1)

    code, out, err = run_main(["--cache-dir", str(cache_dir), str(repo)], capsys)

    assert (code, out) == expected
    assert len(warnings(err)) == 1 and f"not used: it is owned by another user (uid {real_uid})" in err
    assert tree_state(cache_dir) == before


def test_one_note_however_many_files_and_crd_paths(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    repo = make_repo(tmp_path / "repo")
    for i in range(20):
        (repo / "manifests" / f"more-{i}.yaml").write_bytes(GOOD.replace(b"web", b"web-%d" % i))
    crds = tmp_path / "crds"
    crds.mkdir()
    for i in range(20):
        (crds / f"crd-{i}.yaml").write_text(
            "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\n"
            f"metadata: {{name: widgets{i}.example.com}}\nspec:\n  group: example.com\n"
            f"  names: {{kind: Widget{i}, plural: widgets{i}}}\n  scope: Namespaced\n"
            "  versions: [{name: v1, served: true, storage: true, schema: {openAPIV3Schema: {type: object}}}]\n"
        )
    foreign = tmp_path / "foreign"
    fill_with_victims(foreign)
    _, _, err = run_main(["--cache-dir", str(foreign), "--crd", str(crds), str(repo)], capsys)
    assert len(warnings(err)) == 1, err


def test_an_empty_directory_becomes_policylints(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`mkdir cache && policylint --cache-dir cache` (or `mktemp -d`): nothing in it to lose."""
    repo = make_repo(tmp_path / "repo")
    empty = tmp_path / "empty"
    empty.mkdir(mode=0o700)
    empty.chmod(0o700)
    _, _, err = run_main(["--cache-dir", str(empty), str(repo)], capsys)
    assert warnings(err) == []
    assert (empty / "CACHEDIR.TAG").read_text().startswith("Signature: 8a477f597d28d172789f06886806bc55")
    # bad.yaml, good.yaml, what the per-object rules found (policylint.incremental.rulecache), the
    # content the run read of each file (policylint.incremental.previous), the run's result
    # (policylint.incremental.results), and what a gate reads back of a whole run: its findings'
    # fingerprints and its findings (policylint.incremental.memo, policylint.incremental.equivalent)
    assert len(list((empty / "parse").iterdir())) == 7


def test_new_directories_are_private(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    repo = make_repo(tmp_path / "repo")
    old_umask = os.umask(0o002)  # a umask that would make directories group-writable
    try:
        run_main(["--cache-dir", str(tmp_path / "a" / "cache"), str(repo)], capsys)
    finally:
        os.umask(old_umask)
    if hasattr(os, "geteuid"):
        assert stat.S_IMODE((tmp_path / "a" / "cache").stat().st_mode) == 0o700
        assert stat.S_IMODE((tmp_path / "a" / "cache" / "parse").stat().st_mode) == 0o700
    # ... and therefore usable by the next run, silently.
    _, _, err = run_main(["--cache-dir", str(tmp_path / "a" / "cache"), str(repo)], capsys)
    assert warnings(err) == []


# -- pruning touches only its own files ---------------------------------------------------------------


def test_prune_deletes_only_entry_named_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = make_repo(tmp_path / "repo")
    cache_dir = tmp_path / "cache"
    ParseCache(cache_dir).put("f" * 40, dumps(pack(FileResult([], []))))  # tagged: policylint's
    entries = cache_dir / "parse"
    old = (1_000_000_000, 1_000_000_000)
    outside = tmp_path / "outside.txt"
    outside.write_text("not the cache's\n")
    # Old entries of earlier runs: these are what pruning is for.
    stale_entries = [entries / hashlib.blake2b(b"%d" % i, digest_size=20).hexdigest() for i in range(20)]
    for path in stale_entries:
        path.write_bytes(b"old entry")
    stale_temp = entries / ".tmp-abcd_123"
    stale_temp.write_bytes(b"half an entry")
    unrelated = {
        cache_dir / "notes.txt": b"x",
        entries / "README": b"x",
        entries / ("a" * 39): b"x",  # too short
        entries / ("a" * 41): b"x",  # too long
        entries / ("A" * 40): b"x",  # not lower-case hex
        entries / ("b" * 40 + ".bak"): b"x",
        entries / ".tmp-": b"x",
        entries / ".tmp-abc": b"x",  # not mkstemp's 8 characters
        entries / ".tmp-ABCDEFGH": b"x",
    }
    for path, data in unrelated.items():
        path.write_bytes(data)
    (entries / ("c" * 40)).mkdir()  # an entry-named directory, with something in it
    (entries / ("c" * 40) / "inner").write_bytes(b"x")
    os.symlink(outside, entries / ("d" * 40))  # an entry-named symlink
    for path in [*stale_entries, stale_temp, *unrelated, entries / ("c" * 40) / "inner", entries / ("c" * 40)]:
        os.utime(path, old)
    os.utime(entries / ("d" * 40), old, follow_symlinks=False)
    monkeypatch.setattr(cache_mod, "_MAX_ENTRIES", 1)

    _, _, err = run_main(["--cache-dir", str(cache_dir), str(repo)], capsys)

    assert warnings(err) == []
    # Pruning did run: 20 old entries + 3 of this run's against a limit of 8 (4 per file linted).
    assert sum(not p.exists() for p in stale_entries) >= 15
    assert not stale_temp.exists()
    for path, data in unrelated.items():
        assert path.read_bytes() == data, path.name
    assert (entries / ("c" * 40) / "inner").read_bytes() == b"x"
    assert (entries / ("d" * 40)).is_symlink()
    assert outside.read_text() == "not the cache's\n"


# -- 3. hostile entry bytes are misses ---------------------------------------------------------------


def _deep(depth: int) -> bytes:
    return b"[" * depth + b"]" * depth


HOSTILE_PAYLOADS: dict[str, bytes] = {
    # The 12-byte marshal payload that segfaulted CPython when entries were marshal.
    "marshal-code-object-12-bytes": b"\xe3\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00",
    "marshal-of-a-real-code-object": marshal.dumps(compile("import os; os._exit(42)", "x", "exec")),
    "marshal-of-plain-tuples": marshal.dumps(((), ())),
    "random-bytes": random.Random(7).randbytes(4096),
    "empty": b"",
    "not-ascii": '[[],[["PL001","é",1,1]]]'.encode(),
    "json-object": b'{"documents": [], "issues": []}',
    "json-scalar": b"0",
    "json-triple": b"[[],[],[]]",
    "json-strings-for-lists": b'["", ""]',
    "document-row-too-short": b"[[[0,0,0,1]],[]]",
    "document-row-too-long": b"[[[0,0,0,1,1,{},7]],[]]",
    "document-position-string": b'[[["0",0,0,1,1,{}]],[]]',
    "document-position-bool": b"[[[true,0,0,1,1,{}]],[]]",
    "document-position-float": b"[[[0.5,0,0,1,1,{}]],[]]",
    "document-position-negative": b"[[[-1,0,0,1,1,{}]],[]]",
    "document-position-null": b"[[[null,0,0,1,1,{}]],[]]",
    "issue-rule-not-string": b'[[],[[1,"m",1,1]]]',
    "issue-line-string": b'[[],[["PL001","m","1",1]]]',
    "issue-not-an-input-rule": b'[[],[["PL201","forged",1,1]]]',
    "issue-row-dict": b'[[],[{"rule":"PL001"}]]',
    "deeply-nested": _deep(200_000),
    "deeply-nested-data": b"[[[0,0,0,1,1," + _deep(200_000) + b"]],[]]",
    "huge-int": b"[[[" + b"9" * 100_000 + b",0,0,1,1,{}]],[]]",
    "huge-int-in-data": b'[[[0,0,0,1,1,{"a":' + b"9" * 100_000 + b"}]],[]]",
    "huge-exponent": b"[[[1e999999,0,0,1,1,{}]],[]]",
    "nan-position": b"[[[NaN,0,0,1,1,{}]],[]]",
    "truncated-json": b'[[[0,0,0,1,1,{"a":',
    "lone-surrogate-escape-in-rule": b'[[],[["\\ud800","m",1,1]]]',
}


def write_entry(cache_dir: Path, data: bytes, payload: bytes) -> Path:
    """An entry for `data` holding `payload` behind the right magic and a valid checksum."""
    cache = ParseCache(cache_dir)
    cache.put(cache.key(data), b"placeholder")  # creates the directory as policylint does
    path = cache_dir / "parse" / cache.key(data)
    digest = hashlib.blake2b(payload, digest_size=cache_mod._DIGEST).digest()
    path.write_bytes(cache_mod._MAGIC + digest + payload)
    return path


@pytest.fixture(scope="module")
def uncached_report(tmp_path_factory: pytest.TempPathFactory) -> str:
    """The report of a `--no-cache` run over make_repo's files (file names relative: the same for
    every copy of the repository)."""
    tmp_path = tmp_path_factory.mktemp("uncached")
    proc = run_cli(["--no-cache", "."], cwd=make_repo(tmp_path / "repo"), env=clean_env(tmp_path))
    assert proc.returncode == 1, proc.stderr
    assert ("PL001", "bad.yaml") in rule_ids(proc.stdout)
    return proc.stdout


@pytest.mark.parametrize("name", sorted(HOSTILE_PAYLOADS))
def test_a_hostile_entry_with_a_valid_checksum_is_a_miss(name: str, tmp_path: Path, uncached_report: str) -> None:
    repo = make_repo(tmp_path / "repo")
    env = clean_env(tmp_path)
    cache_dir = tmp_path / "cache"
    entry = write_entry(cache_dir, BAD, HOSTILE_PAYLOADS[name])

    proc = run_cli(["--cache-dir", str(cache_dir), "."], cwd=repo, env=env)

    assert (proc.returncode, proc.stdout) == (1, uncached_report), proc.stderr[-2000:]
    assert "Traceback" not in proc.stderr and warnings(proc.stderr) == []
    # Parsed again, the entry was rewritten with what the file really holds.
    blob = entry.read_bytes()
    assert cache_mod.loads(blob[cache_mod._HEADER :]) == pack(load_bytes(BAD, "any"))
    if not name.startswith(("marshal", "deeply", "huge")):
        return
    # The payloads that crashed runs or could: with --exit-zero too the run gets to the end, exit 0.
    entry.write_bytes(
        cache_mod._MAGIC
        + hashlib.blake2b(HOSTILE_PAYLOADS[name], digest_size=cache_mod._DIGEST).digest()
        + HOSTILE_PAYLOADS[name]
    )
    assert run_cli(["--cache-dir", str(cache_dir), "--exit-zero", "."], cwd=repo, env=env).returncode == 0


@pytest.mark.parametrize("name", sorted(HOSTILE_PAYLOADS))
def test_loads_rejects_every_hostile_payload(name: str) -> None:
    with pytest.raises(Exception):  # noqa: B017 - any exception: the caller treats all as a miss
        cache_mod.loads(HOSTILE_PAYLOADS[name])


def test_an_entry_that_fails_to_unpack_is_a_miss(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Unpacking is part of the miss handling too (parallel._load_all calls ParseCache.load)."""
    repo = make_repo(tmp_path / "repo")
    cache_dir = tmp_path / "cache"
    expected = run_main(["--cache-dir", str(cache_dir), str(repo)], capsys)[:2]  # fills the cache

    def broken(packed: object, file: str) -> FileResult:
        raise KeyError("unpack failed")

    monkeypatch.setattr(cache_mod, "unpack", broken)
    assert run_main(["--cache-dir", str(cache_dir), str(repo)], capsys)[:2] == expected


def test_json_round_trips_what_the_loader_returns() -> None:
    """Big ints, bools next to ints, -0.0, control and non-ASCII characters, int-looking keys,
    and whatever the loader makes of `.inf` and `.nan`."""
    text = (
        b"a: .inf\nb: -.inf\nc: .nan\nd: 12345678901234567890123456789\ne: true\nf: 1\ng: ~\n"
        b'h: "\\x00 \\x1b \\u2028 \\U0001F600 caf\xc3\xa9"\ni: -0.0\nj: [1, [2, {k: v}]]\n1: int key\n'
    )
    result = load_bytes(text, "x.yaml")
    data = result.documents[0].data
    assert data["h"] == "\x00 \x1b \u2028 \U0001f600 caf\xe9"
    back = cache_mod.unpack(cache_mod.loads(dumps(pack(result))), "x.yaml")
    assert repr(back.documents[0].data) == repr(data)  # repr: NaN is not equal to itself
    assert [type(v) for v in back.documents[0].data.values()] == [type(v) for v in data.values()]
    assert back.documents[0].ref == result.documents[0].ref
    assert back.issues == result.issues


def test_json_round_trips_non_finite_floats() -> None:
    """Whatever the loader does with `.inf` and `.nan`, the format keeps floats as they are."""
    data = {"inf": float("inf"), "-inf": float("-inf"), "nan": float("nan"), "tiny": 5e-324, "big": 1.7976931348623157e308}
    packed: cache_mod.Packed = (((0, 0, 0, 1, 1, data),), ())
    documents, issues = cache_mod.loads(dumps(packed))
    assert issues == ()
    assert repr(documents[0][5]) == repr(data)
