"""The parse cache and `--jobs`: they change how fast a run is, never what it answers."""

from __future__ import annotations

import json
import os
import shutil
import stat
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from policylint.entry import main
from policylint.input import bounds, load, parallel
from policylint.input import cache as cache_mod
from policylint.input.cache import ParseCache, dumps, loads, pack, unpack
from policylint.input.load import load_bytes
from policylint.input.parallel import load_files
from policylint.input.sources import discover
from policylint.pipeline import LintRequest, lint
from tests.input.test_keptfiles import framed, parts
from tests.lintutil import ROOT
from tests.manifests import crd

EXAMPLES = ROOT / "examples"

HOSTILE = {
    "aliases.yaml": b"base: &b {a: 1, b: [1, 2]}\nuse: *b\nmerged: {<<: *b, c: 3}\n",
    "broken.yaml": b"apiVersion: v1\nkind: Service\nmetadata: {name: a}\n---\nbroken: [\n---\napiVersion: v1\nkind: Service\nmetadata: {name: b}\n",
    "dupes.yaml": b"apiVersion: v1\nkind: Service\nmetadata:\n  name: a\n  name: b\n",
    "bom-crlf.yaml": b"\xef\xbb\xbfapiVersion: v1\r\nkind: Service\r\nmetadata: {name: c}\r\n",
    "binary.yaml": b"\x00\x01\x02\x03",
    "latin1.yaml": b"name: caf\xe9\n",
    "template.yaml": b"name: {{ .Values.name }}\n",
    "scalars.yaml": b"a: 0x1F\nb: 1_000\nc: .inf\nd: 2001-12-14\ne: !!binary aGVsbG8=\nf: ~\ng: yes\n",
    "empty.yaml": b"",
    "control.yaml": b"a: b\x07c\n",
}


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "tree"
    shutil.copytree(EXAMPLES, root)
    return root


@pytest.fixture
def parses(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """The files actually parsed (not served from the cache) in this process."""
    seen: list[str] = []
    real = load.load_bytes

    def counting(data: bytes, file: str, **kwargs: object) -> object:
        seen.append(file)
        return real(data, file, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(load, "load_bytes", counting)
    yield seen


def run_json(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    code = main(["check", "--format", "json", *argv])
    out, err = capsys.readouterr()
    assert code in (0, 1), err
    assert "internal error" not in err
    return out


def entries(directory: Path) -> list[Path]:
    return sorted((directory / "parse").glob("[0-9a-f]*"))


def test_pack_round_trips_whatever_the_loader_returns() -> None:
    for name, data in HOSTILE.items():
        result = load_bytes(data, name)
        assert unpack(loads(dumps(pack(result))), name) == result, name
    # The file name is not stored: an entry serves the same content under another name.
    result = load_bytes(HOSTILE["broken.yaml"], "a.yaml")
    assert unpack(loads(dumps(pack(result))), "b.yaml") == load_bytes(HOSTILE["broken.yaml"], "b.yaml")


def test_second_run_is_served_from_the_cache(tree: Path, tmp_path: Path, parses: list[str]) -> None:
    cache_dir = tmp_path / "cache"
    sources = discover([str(tree)])
    first = list(load_files(sources, cache=ParseCache(cache_dir)))
    assert len(parses) == len(sources)
    assert len(entries(cache_dir)) == len({s.display for s in sources})
    parses.clear()
    second_cache = ParseCache(cache_dir)
    second = list(load_files(sources, cache=second_cache))
    assert parses == []
    assert second_cache.hits == len(sources)
    assert second == first


def test_a_changed_file_is_parsed_again(
    tree: Path, tmp_path: Path, parses: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    cache_dir = str(tmp_path / "cache")
    run_json(["--cache-dir", cache_dir, str(tree)], capsys)
    changed = sorted(tree.rglob("*.yaml"))[0]
    changed.write_text(changed.read_text(encoding="utf-8") + "---\nbroken: [\n", encoding="utf-8")
    parses.clear()
    warm = run_json(["--cache-dir", cache_dir, str(tree)], capsys)
    assert parses == [str(changed)]
    assert warm == run_json(["--no-cache", str(tree)], capsys)
    assert '"PL001"' in warm  # the new syntax error is reported, not an old cached answer


def file_entries(cache_dir: Path, tree: Path) -> list[Path]:
    """The entries of the tree's files (not those a run keeps under a name: the admission
    verdicts, the rules' results), which sort among them by a name that hashes the code."""
    cache = ParseCache(cache_dir)
    keys = {cache.key(path.read_bytes(), json=path.suffix == ".json") for path in tree.rglob("*") if path.is_file()}
    return [path for path in entries(cache_dir) if path.name in keys]


def damage(paths: list[Path]) -> dict[Path, bytes]:
    """Four kinds of damage, in turn; what each entry held before."""
    good = {p: p.read_bytes() for p in paths}
    for i, path in enumerate(paths):
        kind = i % 4
        if kind == 0:
            path.write_bytes(good[path][:40])  # truncated
        elif kind == 1:
            blob = bytearray(good[path])
            blob[-5] ^= 0xFF  # one flipped bit in the payload
            path.write_bytes(bytes(blob))
        elif kind == 2:
            path.write_bytes(b"")  # empty
        else:
            path.write_bytes(b"\x00" * 7 + good[path][7:])  # wrong magic
    return good


def test_corrupt_and_truncated_entries_are_ignored_and_rewritten(
    without_kept_results: None, tree: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cache_dir = tmp_path / "cache"
    expected = run_json(["--cache-dir", str(cache_dir), str(tree)], capsys)
    damaged = file_entries(cache_dir, tree)[:4]
    assert len(damaged) == 4
    good = damage(damaged)
    assert run_json(["--cache-dir", str(cache_dir), str(tree)], capsys) == expected
    for path in damaged:
        assert path.read_bytes() == good[path], path.name  # a file's entry is its content's alone


def test_damaged_entries_of_what_a_run_keeps_are_ignored(tree: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The entries kept under a name (verdicts, rules' results, summaries) damaged every way at
    once: the run answers as before. What it writes back is what it worked out, which a run that
    takes the rest from other entries may make less than before (a miss later, never a wrong
    answer: tests of each store check what it keeps)."""
    cache_dir = tmp_path / "cache"
    expected = run_json(["--cache-dir", str(cache_dir), str(tree)], capsys)
    files = set(file_entries(cache_dir, tree))
    named = [path for path in entries(cache_dir) if path not in files]
    # Among them, each file's admission verdicts: one entry per file.
    verdicts = set(_verdict_entries(ParseCache(cache_dir), tree).values())
    assert len(verdicts) > 1 and verdicts <= {path.name for path in named}
    damage(named)
    assert run_json(["--cache-dir", str(cache_dir), str(tree)], capsys) == expected
    assert run_json(["--cache-dir", str(cache_dir), str(tree)], capsys) == expected


def test_cached_uncached_and_parallel_runs_answer_byte_for_byte_alike(
    tree: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    for name, data in HOSTILE.items():
        (tree / name).write_bytes(data)
    monkeypatch.chdir(tree)  # relative file names, as a pre-commit run has them
    cache_dir = str(tmp_path / "cache")
    uncached = run_json(["--no-cache", "."], capsys)
    assert '"PL001"' in uncached and '"PL006"' in uncached
    assert run_json(["--cache-dir", cache_dir, "."], capsys) == uncached  # cold: writes
    assert run_json(["--cache-dir", cache_dir, "."], capsys) == uncached  # warm: reads
    monkeypatch.setattr(parallel, "PARALLEL_MIN_BYTES", 0)  # force workers on this small input
    parallel_cold = run_json(["--no-cache", "--jobs", "2", "."], capsys)
    assert parallel_cold == uncached
    other_dir = str(tmp_path / "cache2")
    assert run_json(["--cache-dir", other_dir, "-j", "2", "."], capsys) == uncached  # workers write the entries
    assert len(entries(Path(other_dir))) == len(entries(Path(cache_dir)))
    assert run_json(["--cache-dir", other_dir, "-j", "0", "."], capsys) == uncached


def test_parallel_results_are_in_input_order(tree: Path, monkeypatch: pytest.MonkeyPatch, parses: list[str]) -> None:
    monkeypatch.setattr(parallel, "PARALLEL_MIN_BYTES", 0)
    for i in range(12):
        (tree / f"bulk-{i:02d}.yaml").write_text(f"a: {i}\n" * (i * 50 + 1), encoding="utf-8")
    sources = discover([str(tree)])
    serial = list(load_files(sources, jobs=1))
    assert len(parses) == len(sources)
    parses.clear()
    assert list(load_files(sources, jobs=2)) == serial
    # This process parses too, from the small end; the worker's share is not counted here.
    assert len(parses) < len(sources)
    assert [s for s, _ in serial] == sources


def _write_bulk(directory: Path, files: int, items: int) -> None:
    """Files of a list of maps whose keys and values repeat across files (three keys, four values,
    four ports), names no interpreter interns by itself: only policylint's sharing makes them one
    object each."""
    for i in range(files):
        body = "".join(
            f"- tenantLabelKey{i % 3}: value-of-tenant-{j % 4}\n  port: {7000 + j % 4}\n" for j in range(i * items + 1)
        )
        (directory / f"bulk-{i:02d}.yaml").write_text(body, encoding="utf-8")


def _identities(results: list[load.FileResult]) -> tuple[dict[str, set[int]], dict[object, set[int]]]:
    """The ids of the objects each key and each value of `_write_bulk`'s files is held as."""
    keys: dict[str, set[int]] = {}
    values: dict[object, set[int]] = {}
    for result in results:
        for item in result.documents[0].data:
            for key, value in item.items():
                keys.setdefault(key, set()).add(id(key))
                values.setdefault(value, set()).add(id(value))
    return keys, values


def test_files_parsed_by_workers_share_one_object_per_key_and_short_value(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, parses: list[str]
) -> None:
    # Results read back from the workers used to bring a copy of every key and short value per
    # file (JSON decoding shares them within one payload only): with two jobs a 100k-object
    # repository peaked 75-150 MiB above one job. Names no interpreter interns by itself, so that
    # only the loader's sharing can make them one object.
    monkeypatch.setattr(parallel, "PARALLEL_MIN_BYTES", 0)
    _write_bulk(tmp_path, 12, 40)
    sources = discover([str(tmp_path)])
    results = [r for _, r in load_files(sources, jobs=2)]
    assert len(parses) < len(sources)  # the worker parsed some of them
    assert results == [r for _, r in load_files(sources, jobs=1)]
    keys, values = _identities(results)
    assert sorted(keys) == ["port", "tenantLabelKey0", "tenantLabelKey1", "tenantLabelKey2"]
    assert all(len(ids) == 1 for ids in keys.values())
    strings = {v: ids for v, ids in values.items() if isinstance(v, str)}
    assert len(strings) == 4 and all(len(ids) == 1 for ids in strings.values())


def test_files_read_from_the_cache_share_one_object_per_key_short_value_and_integer(tmp_path: Path) -> None:
    # JSON decoding makes new objects for every value, and for the keys of every entry: a warm
    # run at 100k objects peaked ~120 MiB above the cold run that filled the cache. Entries are
    # decoded sharing the loader's table, with the files parsed in the same run.
    repo = tmp_path / "repo"
    repo.mkdir()
    _write_bulk(repo, 6, 5)
    sources = discover([str(repo)])
    directory = tmp_path / "cache"
    uncached = [r for _, r in load_files(sources, cache=ParseCache(directory))]
    (repo / "bulk-05.yaml").write_text("- tenantLabelKey2: value-of-tenant-1\n  port: 7001\n", encoding="utf-8")
    sources = discover([str(repo)])
    cache = ParseCache(directory)
    results = [r for _, r in load_files(sources, cache=cache)]
    assert cache.hits == 5  # every file but the changed one, which is parsed
    assert results[:5] == uncached[:5]
    keys, values = _identities(results)
    assert sorted(keys) == ["port", "tenantLabelKey0", "tenantLabelKey1", "tenantLabelKey2"]
    assert all(len(ids) == 1 for ids in keys.values())
    assert sorted(v for v in values if isinstance(v, str)) == [f"value-of-tenant-{j}" for j in range(4)]
    assert sorted(v for v in values if isinstance(v, int)) == [7000, 7001, 7002, 7003]
    assert all(len(ids) == 1 for ids in values.values())


class _InlinePool:
    """A pool that runs each task at once in this process and records what it was handed."""

    def __init__(self) -> None:
        self.batches: list[list[str]] = []

    def submit(self, fn: Any, *args: Any) -> Any:
        from concurrent.futures import Future

        _, items, _ = args
        self.batches.append([file for _, file, _ in items])
        future: Future[Any] = Future()
        future.set_result(fn(*args))
        return future


def test_small_files_go_to_a_worker_in_batches(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # A repository of small files: one round trip through the pool per file cost about as much
    # as parsing the file, and the worker was idle; a batch of files up to BATCH_BYTES is one.
    monkeypatch.setattr(parallel, "BATCH_BYTES", 4096)
    for i in range(60):
        (tmp_path / f"f{i:02d}.yaml").write_text(
            f"apiVersion: v1\nkind: Service\nmetadata: {{name: s{i}}}\n" + "# pad\n" * (i * 2)
        )
    (tmp_path / "big.yaml").write_text("a: 1\n" + "# pad\n" * 2000)  # over a batch by itself
    sources = discover([str(tmp_path)])
    serial = list(load_files(sources, jobs=1))
    data = {s.display: Path(s.fs_path).read_bytes() for s in sources if s.fs_path}
    pending = [(i, data[s.display], None) for i, s in enumerate(sources)]
    results: list[Any] = [None] * len(sources)
    pool = _InlinePool()
    assert parallel._share_work(pool, list(sources), pending, results, None, 1)  # type: ignore[arg-type]
    handed = [file for batch in pool.batches for file in batch]
    # Largest first; each batch within BATCH_BYTES unless one file is larger by itself.
    assert pool.batches[0] == [next(s.display for s in sources if s.display.endswith("big.yaml"))]
    for batch in pool.batches[1:]:
        assert len(batch) > 1 and sum(len(data[f]) for f in batch) <= 4096
    assert len(pool.batches) < len(handed) / 2
    sizes = [len(data[f]) for f in handed]
    assert sizes == sorted(sizes, reverse=True)
    # What the pool did not take, this process parsed: every result is the one of `--jobs 1`.
    assert [(s, r) for s, r in zip(sources, results, strict=True)] == [(s, r) for s, r in serial]
    assert len(handed) < len(sources)


def test_threads_switch_often_while_workers_parse_and_as_before_after(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The pool's threads move files and results while this thread parses: with CPython's default
    # interval (5 ms) they waited for it, and so did the worker.
    monkeypatch.setattr(parallel, "PARALLEL_MIN_BYTES", 0)
    monkeypatch.setattr(parallel, "effective_jobs", lambda jobs: 2)
    seen: list[float] = []

    def share_work(*args: Any) -> bool:
        seen.append(sys.getswitchinterval())
        return True  # nothing parsed in a worker: this process parses every file after

    monkeypatch.setattr(parallel, "_share_work", share_work)
    (tmp_path / "a.yaml").write_text("a: 1\n")
    (tmp_path / "b.yaml").write_text("b: 2\n")
    before = sys.getswitchinterval()
    results = list(load_files(discover([str(tmp_path)]), jobs=2))
    assert seen == [parallel.SWITCH_INTERVAL] and sys.getswitchinterval() == before
    assert [r.documents[0].data for _, r in results] == [{"a": 1}, {"b": 2}]


def test_a_worker_failing_on_one_file_of_a_batch_leaves_only_that_file_to_this_process() -> None:
    def parse_or_raise(data: bytes, file: str, key: str | None, cache_dir: str | None) -> bytes:
        if file == "bad.yaml":
            raise ValueError("a worker failing on one file")
        return parallel._worker_parse(data, file, key, cache_dir)

    items = [(b"a: 1\n", "one.yaml", None), (b"b: 2\n", "bad.yaml", None), (b"c: 3\n", "three.yaml", None)]
    payloads = parallel._worker_parse_batch(parse_or_raise, items, None)
    assert [p is None for p in payloads] == [False, True, False]
    assert payloads[0] == parallel._worker_parse(b"a: 1\n", "one.yaml", None, None)


def test_no_cache_writes_nothing(
    tree: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    monkeypatch.chdir(cwd)
    monkeypatch.setenv(cache_mod.ENV_DIR, str(tmp_path / "from-env"))
    run_json(["--no-cache", str(tree)], capsys)
    assert list(cwd.iterdir()) == []
    assert not (tmp_path / "from-env").exists()


def test_stdin_is_never_cached(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv(cache_mod.ENV_DIR, str(tmp_path / "cache"))
    monkeypatch.setattr("sys.stdin", _Stdin(b"apiVersion: v1\nkind: Service\nmetadata: {name: a}\n"))
    run_json(["-"], capsys)
    assert list(tmp_path.iterdir()) == []  # neither an entry nor the directory


class _Stdin:
    def __init__(self, data: bytes) -> None:
        import io

        self.buffer = io.BytesIO(data)


def test_default_directory_is_the_users_cache_directory_not_the_working_directory(
    tree: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """$XDG_CACHE_HOME/policylint (Linux), created 0700 with policylint's tag; nothing in the
    working directory, which in CI is the checkout under review."""
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    monkeypatch.chdir(cwd)
    monkeypatch.delenv(cache_mod.ENV_DIR, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))  # macOS: ~/Library/Caches
    monkeypatch.setenv("LOCALAPPDATA", str(tmp_path / "local"))  # Windows
    run_json([str(tree)], capsys)
    assert list(cwd.iterdir()) == []
    cache_dir = Path(cache_mod.default_directory() or "")
    assert cache_dir.is_relative_to(tmp_path)
    if sys.platform not in ("darwin", "win32"):
        assert cache_dir == tmp_path / "xdg" / "policylint"
        assert stat.S_IMODE(cache_dir.stat().st_mode) == 0o700
        assert stat.S_IMODE((cache_dir / "parse").stat().st_mode) == 0o700
    assert (cache_dir / ".gitignore").read_text(encoding="utf-8").splitlines()[-1] == "*"
    assert (cache_dir / "CACHEDIR.TAG").read_text(encoding="utf-8").startswith("Signature: 8a477f597d28d172789f06886806bc55")
    assert entries(cache_dir)


@pytest.mark.skipif(sys.platform in ("darwin", "win32"), reason="XDG_CACHE_HOME is the Linux and Unix convention")
def test_a_relative_xdg_cache_home_is_ignored(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The XDG Base Directory specification: relative paths in its variables are invalid."""
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("XDG_CACHE_HOME", "relative/cache")
    assert cache_mod.default_directory() == str(tmp_path / ".cache" / "policylint")
    monkeypatch.delenv("XDG_CACHE_HOME")
    assert cache_mod.default_directory() == str(tmp_path / ".cache" / "policylint")


def test_environment_variable_chooses_the_directory(
    tree: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv(cache_mod.ENV_DIR, str(tmp_path / "elsewhere"))
    run_json([str(tree)], capsys)
    assert entries(tmp_path / "elsewhere")
    assert not (tmp_path / ".policylint_cache").exists()


def test_a_directory_that_cannot_be_created_means_no_cache(
    tree: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory", encoding="utf-8")
    expected = run_json(["--no-cache", str(tree)], capsys)
    # Works whoever runs the tests (root ignores permission bits, not file types).
    assert run_json(["--cache-dir", str(blocker / "cache"), str(tree)], capsys) == expected
    assert blocker.read_text(encoding="utf-8") == "not a directory"


def test_a_stamp_change_misses(tree: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, parses: list[str]) -> None:
    sources = discover([str(tree)])
    list(load_files(sources, cache=ParseCache(tmp_path / "cache")))
    parses.clear()
    monkeypatch.setattr(cache_mod, "__version__", "999.0")  # another policylint version
    list(load_files(sources, cache=ParseCache(tmp_path / "cache")))
    assert len(parses) == len(sources)
    parses.clear()
    monkeypatch.setattr(bounds, "MAX_FILE_BYTES", 100)  # other loader limits: other results
    list(load_files(sources, cache=ParseCache(tmp_path / "cache")))
    assert len(parses) == len(sources)


def test_concurrent_writers_leave_whole_entries(tmp_path: Path) -> None:
    payload = dumps(pack(load_bytes(HOSTILE["broken.yaml"], "x.yaml")))
    caches = [ParseCache(tmp_path / "cache") for _ in range(8)]
    key = caches[0].key(HOSTILE["broken.yaml"])

    misses: list[int] = []  # an assertion inside a thread would only be a warning

    def write(c: ParseCache) -> None:
        for _ in range(25):
            c.put(key, payload)
            if c.get(key) is None:  # a reader never sees half an entry, nor loses the cache
                misses.append(1)

    threads = [threading.Thread(target=write, args=(c,)) for c in caches]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert misses == []
    assert [p.name for p in (tmp_path / "cache" / "parse").iterdir()] == [key]  # no temporary files left


def _earlier_runs(tmp_path: Path) -> bytes:
    """A cache directory holding 30 entries of earlier runs and the stale temporary file of an
    interrupted write (named as `tempfile.mkstemp` names them); the entries' payload."""
    old = ParseCache(tmp_path / "cache")
    payload = dumps(pack(load_bytes(b"a: 1\n", "x.yaml")))
    for i in range(30):
        old.put(old.key(b"old %d" % i), payload)
    stale_tmp = tmp_path / "cache" / "parse" / ".tmp-crash_01"
    stale_tmp.write_bytes(b"partial")
    os.utime(stale_tmp, (1, 1))
    return payload


def test_prune_bounds_the_directory_and_keeps_what_the_run_used(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cache_mod, "_MAX_ENTRIES", 10)
    payload = _earlier_runs(tmp_path)
    current = ParseCache(tmp_path / "cache")
    used = [current.key(b"new %d" % i) for i in range(3)]
    for key in used:
        current.put(key, payload)
    current.prune()
    names = {p.name for p in (tmp_path / "cache" / "parse").iterdir()}
    assert set(used) <= names
    assert len(names) <= 10
    assert ".tmp-crash_01" not in names


class _Counted:
    """A directory entry whose `stat` calls are counted (`_counting_scandir`)."""

    def __init__(self, entry: os.DirEntry[str], asked: list[str]) -> None:
        self.name = entry.name
        self._entry = entry
        self._asked = asked

    def stat(self, *, follow_symlinks: bool = True) -> os.stat_result:
        self._asked.append(self.name)
        return self._entry.stat(follow_symlinks=follow_symlinks)

    def __getattr__(self, name: str) -> Any:
        # The patch is on `os` itself, so every listing in the test sees these entries: Python
        # 3.13's `Path.iterdir` lists through `os.scandir` and reads `path` from each.
        return getattr(self._entry, name)


def _counting_scandir(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The names whose `stat` pruning asks, from here on."""
    asked: list[str] = []
    scandir = os.scandir

    class Listing:
        def __init__(self, target: Any) -> None:
            self._it = scandir(target)

        def __enter__(self) -> Iterator[_Counted]:
            return (_Counted(e, asked) for e in self._it.__enter__())

        def __exit__(self, *exc: object) -> None:
            self._it.__exit__(*exc)

    monkeypatch.setattr(cache_mod.os, "scandir", Listing)
    return asked


def test_prune_under_the_bound_asks_no_entry_its_time(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # 30 entries of earlier runs and 3 of this one, under a bound of 40: nothing to drop, so no
    # entry is asked its type or time (an lstat each: 0.1 s a run on a repository of 3,319 files);
    # the temporary file of an interrupted write is, and removed once stale.
    monkeypatch.setattr(cache_mod, "_MAX_ENTRIES", 40)
    payload = _earlier_runs(tmp_path)
    current = ParseCache(tmp_path / "cache")
    for i in range(3):
        current.put(current.key(b"new %d" % i), payload)
    asked = _counting_scandir(monkeypatch)
    current.prune()
    assert asked == [".tmp-crash_01"]
    assert len(list((tmp_path / "cache" / "parse").iterdir())) == 33

    # Past the bound (33 entries against 10), every entry not kept is asked, and the oldest dropped
    # as before: what this run used stays.
    monkeypatch.setattr(cache_mod, "_MAX_ENTRIES", 10)
    used = [current.key(b"new %d" % i) for i in range(3)]
    for i, name in enumerate(sorted(p.name for p in (tmp_path / "cache" / "parse").iterdir() if p.name not in used)):
        os.utime(tmp_path / "cache" / "parse" / name, (1000 + i, 1000 + i))
    asked.clear()
    current.prune()
    assert sorted(asked) == sorted(set(asked)) and len(asked) == 30
    names = {p.name for p in (tmp_path / "cache" / "parse").iterdir()}
    assert set(used) <= names
    assert len(names) <= 10


def test_runs_creating_the_cache_at_once_all_use_it(tmp_path: Path) -> None:
    # Eight runs find no cache directory and create it together: whichever tags it, every one
    # must then accept it (a run that looked between another's mkdir and its tag once gave up).
    for trial in range(40):
        caches = [ParseCache(tmp_path / f"cache-{trial}") for _ in range(8)]
        usable: list[bool] = []

        def create(c: ParseCache, out: list[bool] = usable) -> None:
            out.append(c._ensure_directory())

        threads = [threading.Thread(target=create, args=(c,)) for c in caches]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert usable == [True] * 8, trial


# -- admission verdicts kept between runs (VerdictStore) -----------------------------------------


@pytest.fixture
def schema_tree(tree: Path) -> Path:
    """The examples with the schema rules' Bad examples beside them: objects the API server
    refuses (PL703, PL704), objects with fields it prunes (PL702), and clean ones."""
    for rule in ("PL702-unknown-field", "PL703-schema-violation", "PL704-cel-violation"):
        shutil.copy(ROOT / "tests" / "rules" / rule / "bad.yaml", tree / f"{rule}.yaml")
    return tree


# The cluster declared: with its release or channel unknown, an object the first plausible schema
# refuses is judged again by every other one (policylint.k8s.admission.admit), and those verdicts
# are never kept; these tests count what the store saves. The examples' Envoy Gateway and Kuadrant
# policies need their implementations' releases declared too, or every bundled release judges them.
DECIDED = [
    "--gateway-api-version",
    "v1.6.1",
    "--channel",
    "experimental",
    "--implementation",
    "envoy-gateway@v1.9",
    "--implementation",
    "kuadrant@v1.5",
]


@pytest.fixture
def verdicts_computed(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """The objects whose admission verdict was worked out (not taken from the store) in this process.
    The rules' own results kept per object are left out (each run works them out), so that every
    run asks for the verdicts the schema rules read: those are what the store answers
    (tests/incremental/test_rulecache.py tests the rules' results)."""
    from policylint.incremental import rulecache
    from policylint.k8s import admission

    monkeypatch.setattr(rulecache, "open_results", lambda store, held=False: None)
    seen: list[str] = []
    real = admission.violations

    def counting(data: Any, *args: Any, **kwargs: Any) -> Any:
        seen.append(str(data.get("metadata", {}).get("name")))
        return real(data, *args, **kwargs)

    monkeypatch.setattr(admission, "violations", counting)
    yield seen


def test_verdicts_nothing_refuses_are_kept_and_answer_as_computed_ones(
    without_kept_results: None,
    schema_tree: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    verdicts_computed: list[str],
) -> None:
    cache_dir = str(tmp_path / "cache")
    uncached = run_json(["--no-cache", *DECIDED, str(schema_tree)], capsys)
    findings = json.loads(uncached)["findings"]
    for code in ("PL702", "PL703", "PL704"):
        assert any(f["rule"] == code for f in findings), code
    computed = len(verdicts_computed)
    verdicts_computed.clear()
    assert run_json(["--cache-dir", cache_dir, *DECIDED, str(schema_tree)], capsys) == uncached  # cold: writes
    assert len(verdicts_computed) == computed
    verdicts_computed.clear()
    assert run_json(["--cache-dir", cache_dir, *DECIDED, str(schema_tree)], capsys) == uncached  # warm: reads
    warm = list(verdicts_computed)
    # Worked out again: only the objects the API server refuses, whose verdicts are not kept.
    # Those with pruned fields (PL702's) come from the store, fields and all.
    project = lint(LintRequest(paths=[str(schema_tree)])).project
    verdicts = [(o, project.admissions().verdict(o)) for o in project.index.objects]
    refused = {o.name for o, v in verdicts if v is not None and (v.schema or v.cel)}
    assert any(v is not None and v.pruned and not (v.schema or v.cel) for _, v in verdicts)  # kept with their fields
    assert warm and set(warm) <= refused
    assert len(warm) < computed / 4


def _widget_crd(maximum: int) -> str:
    return crd("Widget", f"            properties:\n              size: {{type: integer, maximum: {maximum}}}\n", labels="{}")


_WIDGET = """\
apiVersion: example.com/v1
kind: Widget
metadata: {name: w, namespace: apps}
spec:
  size: 3
  colour: blue
"""


def test_a_kept_verdict_is_not_taken_under_another_schema(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], verdicts_computed: list[str]
) -> None:
    """The object's file is unchanged, its CRD in the input is not: the verdict is worked out
    again under the new schema (the store's key names the schema's content)."""
    tree, cache_dir = tmp_path / "tree", str(tmp_path / "cache")
    tree.mkdir()
    (tree / "widget.yaml").write_text(_WIDGET, encoding="utf-8")
    (tree / "crd.yaml").write_text(_widget_crd(5), encoding="utf-8")
    first = json.loads(run_json(["--cache-dir", cache_dir, str(tree)], capsys))["findings"]
    assert [f["rule"] for f in first if f["rule"].startswith("PL70")] == ["PL702"]  # `colour`: pruned, kept
    verdicts_computed.clear()
    assert json.loads(run_json(["--cache-dir", cache_dir, str(tree)], capsys))["findings"] == first
    assert verdicts_computed == []  # from the store
    (tree / "crd.yaml").write_text(_widget_crd(2), encoding="utf-8")
    second = json.loads(run_json(["--cache-dir", cache_dir, str(tree)], capsys))["findings"]
    assert verdicts_computed == ["w"]
    assert sorted(f["rule"] for f in second if f["rule"].startswith("PL70")) == ["PL702", "PL703"]
    assert second == json.loads(run_json(["--no-cache", str(tree)], capsys))["findings"]


def _verdict_entries(cache: ParseCache, tree: Path) -> dict[str, str]:
    """The name of the entry kept per file (policylint.input.keptfiles) holding each file's
    admission verdicts (policylint.input.verdictstore), by the file's name, for those written. An
    entry may hold other parts only (the positions of findings, policylint.incremental.spans)."""
    from policylint.input.keptfiles import KeptFiles

    files = KeptFiles(cache)
    names = {path.name: files.entry(cache.key(path.read_bytes())) for path in sorted(tree.rglob("*.yaml"))}
    payloads = {file: cache.payload(name) for file, name in names.items()}
    return {
        file: names[file] for file, payload in payloads.items() if payload is not None and "verdicts" in parts(bytes(payload))
    }


def test_a_damaged_or_forged_store_is_a_miss(
    without_kept_results: None,
    schema_tree: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    verdicts_computed: list[str],
) -> None:
    """Whatever a file's entry of the store holds, a value that is not what `admission` writes is
    a miss: the run answers as with no cache, and works the verdict out again. So is an entry
    moved under another file's name: its keys hash the file they were worked out for."""
    cache_dir = tmp_path / "cache"
    uncached = run_json(["--no-cache", *DECIDED, str(schema_tree)], capsys)
    assert run_json(["--cache-dir", str(cache_dir), *DECIDED, str(schema_tree)], capsys) == uncached
    cache = ParseCache(cache_dir)
    names = _verdict_entries(cache, schema_tree)
    assert len(names) > 3  # one entry per file
    kept: dict[str, dict[str, Any]] = {}
    stamp = ""
    for file, name in names.items():
        payload = cache.payload(name)
        assert payload is not None
        stamp, kept[file] = parts(bytes(payload))["verdicts"]
    keys = [key for verdicts in kept.values() for key in verdicts]
    assert keys and any(value for verdicts in kept.values() for value in verdicts.values())  # some keep pruned fields
    wrong_values: list[Any] = [
        "pruned",
        {"spec": 1},
        [["spec", "x", ["a"]]],
        [[["spec", True], "x", ["a"]]],
        [[["spec"], 1, ["a"]]],
        [[["spec"], "x", [1]]],
        [[["spec"], "x"]],
        None,
    ]
    files = sorted(names)

    def forged_every_way(file: str) -> list[bytes]:
        verdicts = kept[file]
        moved = kept[files[(files.index(file) + 1) % len(files)]]
        return [
            framed(("verdicts", stamp, b"not json")),
            framed(("verdicts", stamp, b"[]")),
            json.dumps({"format": 2, "verdicts": verdicts}).encode(),  # the layout before
            framed(("verdicts", stamp, json.dumps([1, 2]).encode())),
            framed(
                ("verdicts", stamp, json.dumps({k: wrong_values[i % len(wrong_values)] for i, k in enumerate(verdicts)}).encode())
            ),
            framed(("verdicts", stamp, json.dumps(moved).encode())),
            framed(
                ("verdicts", stamp[:-1] + ("1" if stamp.endswith("0") else "0"), json.dumps(verdicts).encode())
            ),  # another code's
        ]

    for way in range(7):
        for file, name in names.items():
            ParseCache(cache_dir).put(name, forged_every_way(file)[way])
        verdicts_computed.clear()
        assert run_json(["--cache-dir", str(cache_dir), *DECIDED, str(schema_tree)], capsys) == uncached, way
        assert len(verdicts_computed) >= len(keys)  # every kept verdict worked out again
        verdicts_computed.clear()
        assert run_json(["--cache-dir", str(cache_dir), *DECIDED, str(schema_tree)], capsys) == uncached
        assert len(verdicts_computed) < len(keys)  # and written anew: the next run takes them


def test_verdicts_kept_by_other_code_are_not_taken(
    without_kept_results: None,
    schema_tree: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    verdicts_computed: list[str],
) -> None:
    """A development checkout changes the code that works verdicts out without changing the
    version: the sources of that code are in the store's key (`admission.code_stamp`)."""
    from policylint.k8s import admission

    cache_dir = str(tmp_path / "cache")
    run_json(["--cache-dir", cache_dir, *DECIDED, str(schema_tree)], capsys)
    computed = len(verdicts_computed)
    verdicts_computed.clear()
    run_json(["--cache-dir", cache_dir, *DECIDED, str(schema_tree)], capsys)
    assert len(verdicts_computed) < computed / 4
    stamp = admission.code_stamp()
    monkeypatch.setattr(admission, "code_stamp", lambda: stamp + b"another checkout")
    verdicts_computed.clear()
    run_json(["--cache-dir", cache_dir, *DECIDED, str(schema_tree)], capsys)
    assert len(verdicts_computed) == computed


@pytest.mark.parametrize("size", [0, 1, 4095, 65536, 3 << 20])
def test_an_entry_is_read_whole_with_its_descriptor_alone(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, size: int) -> None:
    """An entry is read with `os.read` to the end, as a file object's `read()` reads it, without
    making one (`ParseCache._read`): the payload of every size, over the 64 KiB an entry is written
    in and the 1 MiB read at a time past its size, even when each read gives only a few bytes."""
    cache = ParseCache(str(tmp_path / "cache"))
    payload = bytes(range(256)) * (size // 256) + b"x" * (size % 256)
    cache.put("entry", payload)
    assert cache.payload("entry") == payload
    later = ParseCache(str(tmp_path / "cache"))
    real = os.read
    monkeypatch.setattr(cache_mod.os, "read", lambda fd, n: real(fd, min(n, 1000)))
    made: list[object] = []
    monkeypatch.setattr("builtins.open", lambda *args, **kwargs: made.append(args))
    assert later.payload("entry") == payload
    assert made == []  # no file object made for it
