"""What a one-file change reads and writes of what is kept per file between runs: the admission
verdicts (policylint.input.verdictstore) and the per-object rules' results
(policylint.incremental.rulecache), one entry per file content each. The pre-commit hook reads
those of its part's files only and writes those of the file it changed; one entry for the whole
repository was read whole by every run and written whole again when the changed file's objects
were added to it. The report is a run's without a cache, byte for byte."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from policylint.incremental import memo, rulecache
from policylint.input.cache import ParseCache
from policylint.input.verdictstore import VerdictStore
from policylint.k8s import admission
from policylint.semantics import components
from tests.gitrepo import git
from tests.incremental.test_change_handoff import _typo
from tests.incremental.test_incremental import _committed, _corpus, _write, check


@pytest.fixture
def entries(monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, list[str]]]:
    """The names of the cache entries read (`ParseCache.payload`) and written (`put`)."""
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
    check("--cache-dir", cache_dir, ".")  # a whole run: every file's verdicts and results kept
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
    verdicts = VerdictStore(cache, admission.code_stamp())
    verdict_entries = {verdicts.entry(key): file for file, key in keys.items()}
    stamp = memo.code_stamp()
    result_entries = {rulecache.entry_name(cache, stamp, key): file for file, key in keys.items()}
    by_name = {rulecache.entry_name(cache, stamp, rulecache.by_name(file)): file for file in keys}
    read, written = set(entries["read"]), entries["written"]
    # Read: the entries of some files, not of every one (the part of one tenant of several).
    verdicts_read = {verdict_entries[e] for e in read if e in verdict_entries}
    results_read = {result_entries[e] for e in read if e in result_entries}
    # (But the changed file's verdicts: its bytes are new to the cache, nothing is kept for them.)
    assert verdicts_read and name not in verdicts_read and name in results_read
    assert len(verdicts_read) < len(keys) and len(results_read) < len(keys)
    # Written: the changed file's alone (its objects are new under its new content key; the base
    # side's were kept by the whole run), each entry once.
    assert [verdict_entries[e] for e in written if e in verdict_entries] == [name]
    assert [result_entries[e] for e in written if e in result_entries] == [name]
    assert {by_name[e] for e in written if e in by_name} == {name}  # its objects by their own content


def test_a_run_asks_for_no_verdicts_of_the_files_new_to_the_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, entries: dict[str, list[str]]
) -> None:
    """A file whose parse-cache entry the run wrote has nothing kept beside it: a run that fills
    the cache for thousands of files looked each one's verdicts up in vain. A warm run asks."""
    root = tmp_path / "repo"
    _write_files(root, _corpus(11, 130, isolated=True))
    cache_dir = str(tmp_path / "cache")
    cold = check("--cache-dir", cache_dir, str(root))
    cache = ParseCache(cache_dir)
    verdicts = VerdictStore(cache, admission.code_stamp())
    names = {verdicts.entry(cache.key(path.read_bytes())) for path in root.glob("*.yaml")}
    written = set(entries["written"])
    assert names & written  # the cold run kept verdicts of its files
    assert not names & set(entries["read"])
    entries["read"].clear()
    assert check("--cache-dir", cache_dir, str(root)) == cold
    # The warm run asks for those of the files whose verdicts the topology reads (the rules'
    # kept results answer the schema rules).
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
    cache = ParseCache(cache_dir)
    stamp = memo.code_stamp()
    names = {rulecache.entry_name(cache, stamp, cache.key(path.read_bytes())) for path in root.glob("*.yaml")}
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
    too, under the file's name, and finds them there after the next edit. Objects whose verdict
    refuses something are never kept, whatever the key."""
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
    # The first edit works them out (the whole run kept none by content); the next find them.
    assert counts[0] > 0
    assert counts[1:] == [0, 0]
