"""What a run reads and writes of what is kept per file between runs: the admission verdicts
(policylint.input.verdictstore) and the per-object rules' results
(policylint.incremental.rulecache), two parts of one entry per file content
(policylint.input.keptfiles). The pre-commit hook reads those of its part's files only and writes
the one of the file it changed; one entry for the whole repository was read whole by every run and
written whole again when the changed file's objects were added to it. A run that fills the cache
writes one entry per file beside its parse entry (it wrote two), a warm run opens one. The report
is a run's without a cache, byte for byte."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from policylint import pipeline
from policylint.incremental import rulecache
from policylint.input.cache import ParseCache
from policylint.input.keptfiles import KeptFiles
from policylint.k8s import admission
from policylint.semantics import components
from tests.gitrepo import git
from tests.incremental.test_change_handoff import _typo
from tests.incremental.test_incremental import _committed, _corpus, _write, check


@pytest.fixture
def entries(monkeypatch: pytest.MonkeyPatch, without_kept_results: None) -> Iterator[dict[str, list[str]]]:
    """The names of the cache entries read (`ParseCache.payload`) and written (`put`), by runs
    that analyse every time."""
    seen: dict[str, list[str]] = {"read": [], "written": []}
    real_payload, real_put = ParseCache.payload, ParseCache.put

    def payload(self: ParseCache, key: str) -> Any:
        seen["read"].append(key)
        return real_payload(self, key)

    def put(self: ParseCache, key: str, payload: Any) -> None:
        seen["written"].append(key)
        real_put(self, key, payload)

    monkeypatch.setattr(ParseCache, "payload", payload)
    monkeypatch.setattr(ParseCache, "put", put)
    yield seen


def test_a_one_file_change_reads_its_parts_entries_and_writes_the_changed_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, entries: dict[str, list[str]]
) -> None:
    monkeypatch.setattr(components, "MIN_OBJECTS", 0)
    root = tmp_path / "repo"
    files = _corpus(11, 130, isolated=True)
    _committed(root, files)
    monkeypatch.chdir(root)
    cache_dir = str(tmp_path / "cache")
    # A whole run: every file's verdicts and results kept; but not its findings, which the gate
    # would read back as its base's (policylint.incremental.equivalent): the base side runs, and
    # reads what that run kept.
    with monkeypatch.context() as patch:
        patch.setattr(pipeline, "_remember", lambda *args, **kwargs: None)
        check("--cache-dir", cache_dir, ".")
    changed = _typo(files, "tenant-00002")
    name = next(name for name, docs in files.items() if docs is changed)
    _write(root, files)
    git(root, "add", "-A")
    cold = check("--staged", "--no-cache")
    entries["read"].clear()
    entries["written"].clear()
    assert check("--staged", "--cache-dir", cache_dir) == cold

    cache = ParseCache(cache_dir)
    keys = {path.name: cache.key(path.read_bytes()) for path in sorted(root.glob("*.yaml"))}
    assert len(keys) > 5
    files = KeptFiles(cache)
    kept = {files.entry(key): file for file, key in keys.items()}
    by_name = {files.entry(rulecache.by_name(file)): file for file in keys}
    read, written = entries["read"], entries["written"]
    # Read: the entries of some files, not of every one (the part of one tenant of several), each
    # once (the base side's run reads its own files'). The changed file's, its bytes new to the
    # cache, is not looked for: nothing is kept for them.
    kept_read = [kept[e] for e in read if e in kept]
    assert kept_read and name not in kept_read and len(set(kept_read)) < len(keys)
    # Written: the changed file's alone (its objects are new under its new content key; the base
    # side's were kept by the whole run), once, its verdicts and rule results together.
    assert [kept[e] for e in written if e in kept] == [name]
    assert {by_name[e] for e in written if e in by_name} == {name}  # its objects by their own content


def _kept_entries(cache_dir: str, root: Path) -> set[str]:
    """The names of the entries kept per file (`KeptFiles`) of the files under `root` as they are."""
    cache = ParseCache(cache_dir)
    files = KeptFiles(cache)
    return {files.entry(cache.key(path.read_bytes())) for path in root.glob("*.yaml")}


def test_a_run_asks_for_no_verdicts_of_the_files_new_to_the_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, entries: dict[str, list[str]]
) -> None:
    """A file whose parse-cache entry the run wrote has nothing kept beside it: a run that fills
    the cache for thousands of files looked each one's verdicts up in vain. A warm run asks."""
    root = tmp_path / "repo"
    _write_files(root, _corpus(11, 130, isolated=True))
    cache_dir = str(tmp_path / "cache")
    cold = check("--cache-dir", cache_dir, str(root))
    names = _kept_entries(cache_dir, root)
    written = set(entries["written"])
    assert names & written  # the cold run kept verdicts of its files
    assert not names & set(entries["read"])
    entries["read"].clear()
    assert check("--cache-dir", cache_dir, str(root)) == cold
    assert names & written & set(entries["read"])


def test_a_run_asks_for_no_rule_results_of_the_files_new_to_the_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, entries: dict[str, list[str]]
) -> None:
    """Nor for the per-object rules' results of such a file: 3,319 entries looked for in vain by a
    run that filled the cache of the shared corpus. A warm run reads them, and answers the same."""
    root = tmp_path / "repo"
    _write_files(root, _corpus(11, 130, isolated=True))
    cache_dir = str(tmp_path / "cache")
    cold = check("--cache-dir", cache_dir, str(root))
    names = _kept_entries(cache_dir, root)
    written = set(entries["written"])
    assert names <= written  # every file's objects were checked by a per-object rule
    assert not names & set(entries["read"])
    entries["read"].clear()
    assert check("--cache-dir", cache_dir, str(root)) == cold
    assert names <= set(entries["read"])


def _write_files(root: Path, files: dict[str, list[dict[str, Any]]]) -> None:
    root.mkdir()
    _write(root, files)


def _worked_out(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, bool]]:
    """(file, whether it refuses something) of each admission verdict worked out, not read back."""
    worked: list[tuple[str, bool]] = []
    walks = [0]
    real_violations, real_admit = admission.violations, admission._admit

    def violations(*args: Any, **kwargs: Any) -> Any:
        walks[0] += 1
        return real_violations(*args, **kwargs)

    def admit(admissions: Any, obj: Any, found: Any) -> Any:
        before = walks[0]
        verdict = real_admit(admissions, obj, found)
        if walks[0] > before:
            worked.append((obj.doc.file, verdict.rejected))
        return verdict

    monkeypatch.setattr(admission, "violations", violations)
    monkeypatch.setattr(admission, "_admit", admit)
    return worked


def test_an_edited_files_unchanged_objects_keep_their_verdicts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An edit changes the file's content key, which names where its objects' verdicts are kept:
    the hook worked out again the verdict of every object of the file it checked, though the edit
    changed one object or none. A run that analyses a part keeps them by the object's own content
    too, under the file's name, and finds them there after the next edit; the first edit since a
    whole run finds them through the file's content that run read. Objects whose verdict refuses
    something are never kept, whatever the key."""
    monkeypatch.setattr(components, "MIN_OBJECTS", 0)
    root = tmp_path / "repo"
    files = _corpus(11, 130, isolated=True)
    _committed(root, files)
    monkeypatch.chdir(root)
    cache_dir = str(tmp_path / "cache")
    check("--cache-dir", cache_dir, ".")  # every file's verdicts kept by place
    # A file holding policies: the topology asks their verdicts (the rules' kept results answer
    # the schema rules for the others).
    name = next(file for file, docs in sorted(files.items()) if any(d.get("kind", "").endswith("Policy") for d in docs))
    worked = _worked_out(monkeypatch)
    counts = []
    for n, edit in enumerate(["# a comment\n", "# another\n", "# and a third\n"]):
        with (root / name).open("a", encoding="utf-8") as fh:
            fh.write(edit)
        git(root, "add", "-A")
        cold = check("--staged", "--gate-base", "HEAD", "--no-cache")
        worked.clear()
        assert check("--staged", "--gate-base", "HEAD", "--cache-dir", cache_dir) == cold
        counts.append(sum(1 for file, rejected in worked if file == name and not rejected))
        git(root, "commit", "-q", "-m", f"edit {n}")
    # The first edit finds them through the file's content the whole run read, which kept them
    # by place only (policylint.incremental.previous); the next by their own content.
    assert counts == [0, 0, 0]


def test_a_run_that_fills_the_cache_writes_one_entry_per_file_beside_its_parse_entry(
    tmp_path: Path, entries: dict[str, list[str]]
) -> None:
    """Its objects' verdicts and rule results are one entry, written once: creating the files was
    what writing them cost (a file's verdicts and its results were an entry each)."""
    root = tmp_path / "repo"
    _write_files(root, _corpus(11, 130, isolated=True))
    cache_dir = str(tmp_path / "cache")
    check("--cache-dir", cache_dir, str(root))
    cache = ParseCache(cache_dir)
    paths = sorted(root.glob("*.yaml"))
    assert len(paths) > 5
    parse = {cache.key(path.read_bytes()) for path in paths}
    kept = {KeptFiles(cache).entry(key) for key in parse}
    written = entries["written"]
    assert sorted(e for e in written if e in parse) == sorted(parse)
    assert sorted(e for e in written if e in kept) == sorted(kept)  # every file's, once
    # Besides those, what is kept of the whole run (its findings, `incremental.memo`).
    # Besides: the index of the contents it read (policylint.incremental.previous), and what a
    # gate's base side reads back of a whole run, its fingerprints and its findings
    # (policylint.incremental.memo, policylint.incremental.equivalent).
    assert len(written) - 2 * len(paths) <= 3, len(written)


def test_a_warm_run_opens_one_entry_per_file_for_what_is_kept(tmp_path: Path, entries: dict[str, list[str]]) -> None:
    """The topology asks for a file's verdicts, the per-object rules for its results: both are read
    from one entry, opened once."""
    root = tmp_path / "repo"
    _write_files(root, _corpus(11, 130, isolated=True))
    cache_dir = str(tmp_path / "cache")
    cold = check("--cache-dir", cache_dir, str(root))
    entries["read"].clear()
    entries["written"].clear()
    assert check("--cache-dir", cache_dir, str(root)) == cold
    cache = ParseCache(cache_dir)
    paths = sorted(root.glob("*.yaml"))
    parse = {cache.key(path.read_bytes()) for path in paths}
    kept = {KeptFiles(cache).entry(key) for key in parse}
    read = entries["read"]
    assert sorted(e for e in read if e in kept) == sorted(kept)  # every file's, once
    assert sorted(e for e in read if e in parse) == sorted(parse)
    assert len(read) - 2 * len(paths) <= 2, len(read)
    assert entries["written"] == []
