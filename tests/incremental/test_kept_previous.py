"""What the per-object rules found on a changed file's unchanged objects, found through the content
the file had when a whole run last read it (policylint.incremental.previous): the first run after
a file's first edit since the cache was filled runs the rules on the objects the edit changed only,
and its report is a run's without a cache, byte for byte, whatever the index says."""

from __future__ import annotations

import os
import random
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from policylint.incremental import previous, rulecache
from policylint.input.cache import ParseCache
from policylint.rules import REGISTRY
from policylint.rules.base import ObjectRule
from policylint.semantics import components
from tests.gitrepo import git
from tests.incremental.test_incremental import _committed, _corpus, _edit, check

# The per-object rules whose findings on an object depend on nothing but the object and its
# verdict: kept for every object (PL704 and PL426 may read more, and then run every time).
OWN = ("PL702", "PL703", "PL705", "PL706", "PL707")


@pytest.fixture
def checked(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[tuple[str, str, str]]]:
    """(rule, file, object name) of every check of an object by a per-object rule of `OWN`."""
    seen: list[tuple[str, str, str]] = []
    for rule in REGISTRY:
        if rule.id in OWN and issubclass(rule, ObjectRule):
            real = rule.check_object

            def counted(self: ObjectRule, project: Any, obj: Any, _real: Any = real) -> Any:
                seen.append((self.id, obj.doc.file, obj.key.name))
                return _real(self, project, obj)

            monkeypatch.setattr(rule, "check_object", counted)
    yield seen


def _write(root: Path, files: dict[str, list[dict[str, Any]]], headers: dict[str, str]) -> None:
    """The files, each after its header (comments, which move every document down a line each)."""
    for existing in root.glob("*.yaml"):
        if existing.name not in files:
            existing.unlink()
    for name, docs in files.items():
        text = headers.get(name, "") + yaml.safe_dump_all(docs, sort_keys=False)
        (root / name).write_text(text, encoding="utf-8")


def _edited(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, str, str, dict[str, list[dict[str, Any]]]]:
    """A repository whose cache a whole run filled, then one file given a comment on its first
    line (every object of it moves) and one of its objects a field its schema does not define,
    staged: the repository, the cache, the file and the changed object's name."""
    monkeypatch.setattr(components, "MIN_OBJECTS", 0)
    root = tmp_path / "repo"
    files = _corpus(11, 130, isolated=True)
    _committed(root, files)
    monkeypatch.chdir(root)
    cache = str(tmp_path / "cache")
    check("--cache-dir", cache, ".")
    # A tenant's route, in a file holding no GatewayClass (every tenant's Gateway names it, so the
    # part would be the whole repository, analysed whole).
    name = max(
        (file for file in sorted(files) if not any(d.get("kind") == "GatewayClass" for d in files[file])),
        key=lambda file: sum(d.get("kind") == "HTTPRoute" for d in files[file]),
    )
    changed = next(d for d in files[name] if d.get("kind") == "HTTPRoute")
    changed["spec"]["colour"] = "blue"
    _write(root, files, {name: "# reviewed\n"})
    git(root, "add", "-A")
    return root, cache, name, files


def test_a_files_first_edit_since_a_whole_run_checks_its_changed_object_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, checked: list[tuple[str, str, str]]
) -> None:
    _, cache, name, files = _edited(tmp_path, monkeypatch)
    cold = check("--staged", "--no-cache")
    changed = next(d["metadata"]["name"] for d in files[name] if d.get("spec", {}).get("colour") == "blue")
    checked.clear()
    assert check("--staged", "--cache-dir", cache) == cold
    # Every object of the file moved a line down, and one changed: that one alone is checked (by
    # each rule once, on the change's side; the base's are the whole run's, kept by place).
    # Before, every object of the file in the part was, the whole run having kept none by content.
    assert sorted({(rule, obj) for rule, file, obj in checked if file == name}) == [(rule, changed) for rule in OWN]
    assert len(files[name]) > 3
    checked.clear()
    assert check("--staged", "--cache-dir", cache) == cold
    assert not [c for c in checked if c[1] == name]  # the run again: every object kept


def _index(cache: str) -> tuple[ParseCache, str]:
    parse = ParseCache(cache)
    return parse, previous.entry(parse)


@pytest.mark.parametrize("forged", ["another", "garbage", "shape", "pruned"])
def test_an_index_that_names_no_earlier_content_of_the_file_is_a_miss(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, checked: list[tuple[str, str, str]], forged: str
) -> None:
    root, cache, name, files = _edited(tmp_path, monkeypatch)
    cold = check("--staged", "--no-cache")
    parse, entry = _index(cache)
    keys = {path.name: parse.key(path.read_bytes()) for path in sorted(root.glob("*.yaml"))}
    if forged == "another":
        # Another file's content: its objects are kept under that file's name, never this one's.
        other = next(file for file in sorted(keys) if file != name)
        previous.record(parse, {name: keys[other]})
    elif forged == "garbage":
        parse.put(entry, b"\xff{not json")
    elif forged == "shape":
        parse.put(entry, b'{"files": {"%s": 7}}' % name.encode())
    else:  # the earlier content's parse entry is gone: nothing says what its objects were
        earlier = git(root, "show", f"HEAD:{name}")
        (Path(cache) / "parse" / parse.key(earlier.encode())).unlink()
    checked.clear()
    assert check("--staged", "--cache-dir", cache) == cold
    # Nothing found through the index: every object of the file in the part is checked again.
    objects = {d["metadata"]["name"] for d in files[name]}
    assert {obj for _, file, obj in checked if file == name} == objects


def test_the_index_names_each_file_a_whole_run_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root, cache, _, _ = _edited(tmp_path, monkeypatch)
    parse, _ = _index(cache)
    earlier = {name: git(root, "show", f"HEAD:{name}").encode() for name in git(root, "ls-files").split()}
    index = previous.Previous(parse)
    assert {name: index.key(name) for name in earlier} == {name: parse.key(data) for name, data in earlier.items()}
    # A run over a part names nothing: the index is the whole run's.
    check("--staged", "--cache-dir", cache)
    again = previous.Previous(ParseCache(cache))
    assert {name: again.key(name) for name in earlier} == {name: parse.key(data) for name, data in earlier.items()}


def _sequence(
    root: Path,
    cache: Path,
    seed: int,
    steps: int,
    n: int,
    *,
    isolated: bool,
    count: Callable[[pytest.MonkeyPatch], Callable[[], int]],
) -> int:
    """Random edits, each staged and checked with the cache and without it (the reports must be the
    same bytes), a whole run now and then (which names every file's content), some edits giving a
    file a comment on its first line (its objects all move); what `count` counted (it patches what
    it counts, and gives the count at the end): what was found through the earlier content of a
    file."""
    rng = random.Random(seed)
    files = _corpus(seed, n, isolated=isolated)
    headers: dict[str, str] = {}
    _committed(root, files)
    os.chdir(root)
    done: list[str] = []
    with pytest.MonkeyPatch.context() as patch:
        found = count(patch)
        for step in range(steps):
            if step == 0 or rng.random() < 0.3:
                done.append("whole")
                assert check("--cache-dir", str(cache), ".") == check("--no-cache", "."), (seed, done)
            for _ in range(rng.randint(1, 2)):
                if rng.random() < 0.5:
                    name = rng.choice(sorted(files))
                    headers[name] = headers.get(name, "") + f"# step {step}\n"
                    done.append(f"comment {name}")
                done.append(_edit(files, rng, outside=True))
            _write(root, files, headers)
            git(root, "add", "-A")
            for _ in range(rng.choice((1, 2))):
                cached = check("--staged", "--cache-dir", str(cache))
                assert cached == check("--staged", "--no-cache"), (seed, done)
            if rng.random() < 0.7:
                git(root, "commit", "-q", "--allow-empty", "-m", f"step {step}")
        return found()


def _rows_found(patch: pytest.MonkeyPatch) -> Callable[[], int]:
    """Counts the rule results found through a file's earlier content."""
    found = 0
    real = rulecache.Reuse._before

    def counted(self: rulecache.Reuse, rule_id: str, obj: Any) -> Any:
        nonlocal found
        rows = real(self, rule_id, obj)
        found += rows is not None
        return rows

    patch.setattr(rulecache.Reuse, "_before", counted)
    return lambda: found


def test_random_edits_after_whole_runs_agree_with_no_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(components, "MIN_OBJECTS", 0)
    monkeypatch.chdir(tmp_path)
    assert _sequence(tmp_path / "repo", tmp_path / "cache", seed=2, steps=3, n=130, isolated=True, count=_rows_found) > 0


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(4))
def test_random_edits_after_whole_runs_agree_with_no_cache_longer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, seed: int
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(components, "MIN_OBJECTS", 0)
    # Tenants reaching into each other make most parts the whole repository, analysed whole:
    # the earlier content is asked for on isolated tenants.
    isolated = seed % 2 == 0
    found = _sequence(tmp_path / "repo", tmp_path / "cache", seed=seed, steps=12, n=260, isolated=isolated, count=_rows_found)
    assert found > 0 or not isolated
