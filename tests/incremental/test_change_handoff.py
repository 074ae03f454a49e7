"""The two sides of a change run in one process (`check --staged`, `--diff`, the pre-commit hook):
the base side takes what the change's side built (policylint.incremental.resident), so a run
whose base must be analysed costs one part search and one read of each unchanged file.

Counted here on the hook's first run on a new commit, whose base part the run before did not
analyse: the objects the part search joins (`PartGraph._relabel`) or indexes (`directed._Graph`)
and those built from the files' shells, the files' kept shells decoded, their parse-cache entries read and their bytes hashed.
The report is a run's without a cache, byte for byte.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from policylint import pipeline
from policylint.incremental import rulecache, shells
from policylint.input import load
from policylint.input.cache import ParseCache
from policylint.k8s import index
from policylint.pipeline import LintRequest
from policylint.semantics import components, directed, partgraph
from tests.gitrepo import git
from tests.incremental.test_incremental import _committed, _corpus, _policies, _write, check


@pytest.fixture
def counted(monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, list[Any]]]:
    """What a command does, in order: its pipeline runs (the request of each), the objects each
    join of the part search joined, the shells decoded and the parse-cache entries read (by
    entry), and the rule results written to the cache or only held."""
    seen: dict[str, list[Any]] = {
        "runs": [],
        "residents": [],
        "joined": [],
        "shells": [],
        "loads": [],
        "saved": [],
        "trimmed": [],
        "checked": [],
        "hashed": [],
        "built": [],
        "indexed": [],
    }
    real_lint, real_relabel, real_decoded = pipeline._lint, partgraph.PartGraph._relabel, shells._decoded
    real_load, real_save, real_trim = ParseCache.load, rulecache.RuleResults.save, rulecache.RuleResults.trim
    real_key = ParseCache.key
    real_check = index.check_object
    real_object = shells._object
    real_index = directed._Graph.__init__

    def lint(
        request: LintRequest,
        part: pipeline.Part | None = None,
        resident: Any = None,
        discovered: Any = None,
        content_keys: Any = None,
        exact: bool = False,
    ) -> pipeline.LintResult:
        seen["runs"].append(request)
        seen["residents"].append(resident)
        return real_lint(request, part, resident, discovered, content_keys, exact)

    def relabel(self: partgraph.PartGraph, slots: Any, affected: Any) -> None:
        seen["joined"].append(len(slots))
        real_relabel(self, slots, affected)

    def decoded(cache: ParseCache, entry: str) -> Any:
        seen["shells"].append(entry)
        return real_decoded(cache, entry)

    def load(self: ParseCache, key: str, *args: Any, **kwargs: Any) -> Any:
        seen["loads"].append(key)
        return real_load(self, key, *args, **kwargs)

    def key(self: ParseCache, data: bytes, **kwargs: Any) -> str:
        seen["hashed"].append(data)
        return real_key(self, data, **kwargs)

    def save(self: rulecache.RuleResults, *args: Any) -> None:
        seen["saved"].append(self)
        real_save(self, *args)

    def trim(self: rulecache.RuleResults, *args: Any) -> None:
        seen["trimmed"].append(self)
        real_trim(self, *args)

    def built(*args: Any) -> Any:
        obj = real_object(*args)
        seen["built"].append(obj.key)
        return obj

    def check_object(group: str, kind: str, data: Any, *rest: Any) -> Any:
        seen["checked"].append(data.get("metadata", {}).get("name"))
        return real_check(group, kind, data, *rest)

    def indexed(self: directed._Graph, names: Any, *rest: Any) -> None:
        seen["indexed"].append(len(names))
        real_index(self, names, *rest)

    monkeypatch.setattr(directed._Graph, "__init__", indexed)
    monkeypatch.setattr(pipeline, "_lint", lint)
    monkeypatch.setattr(index, "check_object", check_object)
    monkeypatch.setattr(shells, "_object", built)
    monkeypatch.setattr(partgraph.PartGraph, "_relabel", relabel)
    monkeypatch.setattr(shells, "_decoded", decoded)
    monkeypatch.setattr(ParseCache, "load", load)
    monkeypatch.setattr(ParseCache, "key", key)
    monkeypatch.setattr(rulecache.RuleResults, "save", save)
    monkeypatch.setattr(rulecache.RuleResults, "trim", trim)
    yield seen


def _typo(files: dict[str, list[dict[str, Any]]], namespace: str) -> list[dict[str, Any]]:
    """The documents of the file whose policy in `namespace` now names a target that is not there."""
    policy = next(d for d in _policies(files) if d["metadata"]["namespace"] == namespace)
    policy["spec"]["targetRefs"][0]["name"] += "-typo"
    return next(docs for docs in files.values() if any(d is policy for d in docs))


@pytest.mark.parametrize("sets_read", [False, True])
def test_the_base_side_reuses_the_objects_and_the_sets_of_the_changes_side(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, counted: dict[str, list[Any]], sets_read: bool
) -> None:
    """`sets_read`: the sets joined for the directed search to tell that no class joins its
    Gateways (`PartGraph.classes_apart` made to fail), as on the tree before; else it tells that
    without them, and neither side joins a set."""
    monkeypatch.setattr(components, "MIN_OBJECTS", 0)
    if sets_read:
        monkeypatch.setattr(partgraph.PartGraph, "classes_apart", lambda self: False)
    root = tmp_path / "repo"
    files = _corpus(11, 130, isolated=True)
    objects = sum(len(docs) for docs in files.values())
    _committed(root, files)
    monkeypatch.chdir(root)
    cache = str(tmp_path / "cache")
    _typo(files, "tenant-00001")
    _write(root, files)
    git(root, "add", "-A")
    check("--staged", "--cache-dir", cache)  # keeps every file's shell, and tenant 1's part
    git(root, "commit", "-q", "-m", "typo")
    # Another tenant: what the run before kept of its part does not cover this one's.
    changed = _typo(files, "tenant-00002")
    name = next(name for name, docs in files.items() if docs is changed)
    at_base = (root / name).read_bytes()
    _write(root, files)
    git(root, "add", "-A")
    cold = check("--staged", "--no-cache")
    assert json.loads(cold[1])["findings"]
    for found in counted.values():
        del found[:]
    assert check("--staged", "--cache-dir", cache) == cold
    runs = counted["runs"]
    assert [r.sources is None for r in runs] == [True, False]  # the staged files, then the base's part
    # One part search over every object; the base's is an edit of its sets: the sets the changed
    # policy was in and reaches are joined again, not the others.
    joined = counted["joined"]
    if sets_read:
        assert joined[0] == objects
        assert sum(joined[1:]) < objects / 2
    else:
        assert joined == []  # the directed part decided both sides alone
        # Its index of what every object reads not built at all: the run before kept it for its
        # staged files, this run's base (policylint.incremental.keptindex); the staged side
        # patches it for the changed policy's references, the base side takes it as kept (the
        # tree before built it once, and each side before that).
        assert counted["indexed"] == []
    # Yet of the objects outside the parts only what the two parts hold is built: the search read
    # the other files from their shells' rows (the tree before built every object for it).
    assert len(counted["built"]) < objects / 2
    # Each file's shell decoded once, each parse-cache entry read once: the base side takes the
    # objects of the files whose bytes are the staged side's, their data read where it was.
    assert counted["shells"], "the staged side builds the files outside its part from their shells"
    assert len(counted["shells"]) == len(set(counted["shells"]))
    # (But the entry of what the changed file held at the base: read first for the keys of its
    # objects, which tell the ones the change removed.)
    loads = counted["loads"]
    assert {key for key in loads if loads.count(key) > 1} <= {ParseCache(cache).key(at_base)}
    # No unchanged file's bytes hashed for its parse-cache key: the run before kept each staged
    # blob's (policylint.incremental.blobkeys), which the staged side's shells and the base side's
    # memo key take for the same bytes (the tree before hashed each of them once). Only the
    # changed file's bytes are, staged and at the base.
    assert set(counted["hashed"]) == {(root / name).read_bytes(), at_base}
    # The fields' types of an object whose shell says they are well formed are not checked again
    # once its data is read: only the changed file's objects, loaded from its new bytes, are.
    assert sorted(counted["checked"]) == sorted(d["metadata"]["name"] for d in changed)
    # A command writes what the per-object rules found, as runs that share nothing do.
    assert counted["saved"]
    assert not counted["trimmed"]


def _next_commit_on_one_tenant(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[str, tuple[int, str]]:
    """Isolated tenants in git: a typo in tenant 1 staged and checked with the cache (the run
    keeps what it found about tenant 1's part) and committed, then a label added to the same
    object and staged. The cache directory, and the staged run's report without a cache."""
    monkeypatch.setattr(components, "MIN_OBJECTS", 0)
    root = tmp_path / "repo"
    files = _corpus(11, 130, isolated=True)
    _committed(root, files)
    monkeypatch.chdir(root)
    cache = str(tmp_path / "cache")
    changed = _typo(files, "tenant-00001")
    _write(root, files)
    git(root, "add", "-A")
    check("--staged", "--cache-dir", cache)
    git(root, "commit", "-q", "-m", "typo")
    changed[0]["metadata"]["labels"] = {"edited": "yes"}
    _write(root, files)
    git(root, "add", "-A")
    return cache, check("--staged", "--no-cache")


def test_the_changes_side_records_nothing_for_a_base_read_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, counted: dict[str, list[Any]], without_kept_results: None
) -> None:
    """The hook's next commit on the same tenant: the base's findings are read back from what the
    run that checked it kept of its part, so the staged side records nothing for a base side
    (the walks, topology and rule units it would play back) and hands nothing over. On another
    tenant's change it does (the test above)."""
    cache, cold = _next_commit_on_one_tenant(tmp_path, monkeypatch)
    assert json.loads(cold[1])["findings"]
    for found in counted.values():
        del found[:]
    assert check("--staged", "--cache-dir", cache) == cold
    assert [r.sources is None for r in counted["runs"]] == [True]  # the base read back
    assert counted["residents"] == [None]


def test_the_base_read_back_reads_its_entry_once_and_names_its_entries_from_one_hash(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, without_kept_results: None
) -> None:
    """The base side of the test above asks what the run that checked the base kept of its part
    before the change's side runs (`Base.read_back`) and again for the findings to match: the
    entry is read and decoded once, and the base's settings and files written for the names of
    its entries (the whole base's, the part's, the members') once, where each was worked out
    for every name and the members' entry read twice."""
    from policylint.incremental import memo

    cache, cold = _next_commit_on_one_tenant(tmp_path, monkeypatch)
    read: list[str] = []
    written: list[bool] = []
    real_members, real_settings = memo.members, memo.settings

    def members(cache: ParseCache, entry: str) -> Any:
        read.append(entry)
        return real_members(cache, entry)

    def settings(request: LintRequest) -> Any:
        written.append(request.sources is not None)  # the base side's request names its sources
        return real_settings(request)

    monkeypatch.setattr(memo, "members", members)
    monkeypatch.setattr(memo, "settings", settings)
    assert check("--staged", "--cache-dir", cache) == cold
    assert len(read) == 1
    assert written.count(True) == 1


def test_what_a_changed_file_held_at_the_base_is_read_from_the_parse_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The objects a change removed are told from the keys its files held at the base: the run
    that checked the base kept what those bytes load to, so they are not parsed again."""
    root = tmp_path / "repo"
    files = _corpus(12, 60, isolated=True)
    _committed(root, files)
    monkeypatch.chdir(root)
    cache = str(tmp_path / "cache")
    changed = _typo(files, "tenant-00001")
    _write(root, files)
    git(root, "add", "-A")
    check("--staged", "--cache-dir", cache)  # parses and keeps the staged bytes: the next base
    git(root, "commit", "-q", "-m", "typo")
    name = next(name for name, docs in files.items() if docs is changed)
    at_base = (root / name).read_bytes()
    changed[0]["metadata"]["labels"] = {"edited": "yes"}
    _write(root, files)
    git(root, "add", "-A")
    cold = check("--staged", "--no-cache")
    parsed: list[bytes] = []
    real = load.load_bytes

    def load_bytes(data: bytes, *args: Any, **kwargs: Any) -> Any:
        parsed.append(data)
        return real(data, *args, **kwargs)

    monkeypatch.setattr(load, "load_bytes", load_bytes)
    assert check("--staged", "--cache-dir", cache) == cold
    assert at_base not in parsed
