"""The admission verdicts of a changed file's unchanged objects, found through the content the file
had when a whole run last read it (policylint.incremental.previous, policylint.k8s.verdicts
`earlier_keys`): the first run after a file's first edit since the cache was filled works out the
verdicts of the objects the edit changed only, and its report is a run's without a cache, byte for
byte, whatever the index or the earlier content's kept verdicts say."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from policylint.incremental import previous
from policylint.input import keptfiles
from policylint.input.cache import ParseCache
from policylint.input.keptfiles import KeptFiles
from policylint.k8s import admission
from policylint.semantics import components
from tests.gitrepo import git
from tests.incremental.test_incremental import _committed, _corpus, check
from tests.incremental.test_kept_previous import _sequence, _write


@pytest.fixture
def worked(monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, list[tuple[str, str]]]]:
    """(file content key, object name) of each admission verdict asked for (`asked`:
    `admission._admit` called) and of each worked out rather than read back (`worked`: the schema
    walked), that refuses nothing (a refusal is never kept, whatever the key). By content key: a
    change's base side asks the verdicts of the committed file's objects, by their places."""
    seen: dict[str, list[tuple[str, str]]] = {"asked": [], "worked": []}
    walks = [0]
    real_violations, real_admit = admission.violations, admission._admit

    def violations(*args: Any, **kwargs: Any) -> Any:
        walks[0] += 1
        return real_violations(*args, **kwargs)

    def admit(admissions: Any, obj: Any, found: Any) -> Any:
        before = walks[0]
        verdict = real_admit(admissions, obj, found)
        if not verdict.rejected:
            at = (admissions.index.content_keys.get(obj.doc.file), obj.key.name)
            seen["asked"].append(at)
            if walks[0] > before:
                seen["worked"].append(at)
        return verdict

    monkeypatch.setattr(admission, "violations", violations)
    monkeypatch.setattr(admission, "_admit", admit)
    yield seen


def _edited(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, str, str, dict[str, list[dict[str, Any]]]]:
    """A repository whose cache a whole run filled, then one file of policies given a comment on
    its first line (every object of it moves) and one of its HTTPRoutes a field its schema does
    not define, staged: the repository, the cache, the file and its objects."""
    monkeypatch.setattr(components, "MIN_OBJECTS", 0)
    root = tmp_path / "repo"
    files = _corpus(11, 130, isolated=True)
    _committed(root, files)
    monkeypatch.chdir(root)
    cache = str(tmp_path / "cache")
    check("--cache-dir", cache, ".")
    # A tenant's file holding no GatewayClass (every tenant's Gateway names it, so the part would
    # be the whole repository, analysed whole): of those with an HTTPRoute, the one with the most
    # policies.
    name = max(
        (file for file in sorted(files) if not any(d.get("kind") == "GatewayClass" for d in files[file])),
        key=lambda file: (any(d.get("kind") == "HTTPRoute" for d in files[file]), len(_policies(files[file]))),
    )
    changed = next(d for d in files[name] if d.get("kind") == "HTTPRoute")
    changed["spec"]["colour"] = "blue"
    _write(root, files, {name: "# reviewed\n"})
    git(root, "add", "-A")
    return root, cache, name, files


def _policies(docs: list[dict[str, Any]]) -> set[str]:
    """The names of the policies among `docs` (the topology asks what the API server refuses in
    each policy of the part)."""
    return {d["metadata"]["name"] for d in docs if isinstance(d.get("spec"), dict) and d["spec"].get("targetRefs")}


def test_a_files_first_edit_since_a_whole_run_works_out_its_changed_objects_verdict_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, worked: dict[str, list[tuple[str, str]]]
) -> None:
    root, cache, name, files = _edited(tmp_path, monkeypatch)
    staged = ParseCache(cache).key((root / name).read_bytes())
    changed = next(d["metadata"]["name"] for d in files[name] if d.get("spec", {}).get("colour") == "blue")
    policies = _policies(files[name])
    assert policies  # the topology asks their verdicts: worked out again before
    cold = check("--staged", "--no-cache")
    worked["asked"].clear()
    worked["worked"].clear()
    assert check("--staged", "--cache-dir", cache) == cold
    asked = {obj for key, obj in worked["asked"] if key == staged}
    assert policies | {changed} <= asked
    # Every object of the file moved a line down, and one changed: its verdict alone is worked
    # out, the others' found at their places in the content the whole run read.
    assert {obj for key, obj in worked["worked"] if key == staged} == {changed}
    worked["worked"].clear()
    assert check("--staged", "--cache-dir", cache) == cold
    assert not [w for w in worked["worked"] if w[0] == staged]  # the run again: every verdict kept


def _forge_verdicts(parse: ParseCache, earlier: str, how: str) -> None:
    """The kept entry of the file's earlier content (its verdicts and rule results) damaged
    (`garbage`), or its verdicts of the right layout holding values `admit` never writes (`value`)."""
    entry = KeptFiles(parse).entry(earlier)
    if how == "garbage":
        parse.put(entry, b"\x00not an entry")
        return
    payload = parse.payload(entry)
    assert payload is not None
    parts = keptfiles._parts(payload)
    text = parts["verdicts"][1]
    verdicts = json.loads(text)
    assert verdicts  # the whole run kept the file's verdicts by place
    forged = json.dumps({key: [["spec", "forged"]] for key in verdicts}).encode()
    rows = [(part, s, (forged if part == "verdicts" else t,)) for part, (s, t) in sorted(parts.items())]
    parse.put(entry, keptfiles._payload(rows))


@pytest.mark.parametrize("forged", ["another", "garbage", "shape", "pruned", "entry", "value"])
def test_what_names_no_earlier_verdict_of_the_object_is_a_miss(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, worked: dict[str, list[tuple[str, str]]], forged: str
) -> None:
    root, cache, name, files = _edited(tmp_path, monkeypatch)
    cold = check("--staged", "--no-cache")
    parse = ParseCache(cache)
    keys = {path.name: parse.key(path.read_bytes()) for path in sorted(root.glob("*.yaml"))}
    earlier = parse.key(git(root, "show", f"HEAD:{name}").encode())
    staged = keys[name]
    if forged == "another":
        # Another file's content: no object of it has the own content of one of this file's.
        other = next(file for file in sorted(keys) if file != name)
        previous.record(parse, {name: keys[other]})
    elif forged == "garbage":
        parse.put(previous.entry(parse), b"\xff{not json")
    elif forged == "shape":
        parse.put(previous.entry(parse), b'{"files": {"%s": 7}}' % name.encode())
    elif forged == "pruned":  # the earlier content's parse entry is gone: nothing says what its objects were
        (Path(cache) / "parse" / earlier).unlink()
    else:
        _forge_verdicts(parse, earlier, "garbage" if forged == "entry" else "value")
    worked["asked"].clear()
    worked["worked"].clear()
    assert check("--staged", "--cache-dir", cache) == cold
    # Nothing found through the earlier content: every verdict asked of the file is worked out.
    asked = {obj for key, obj in worked["asked"] if key == staged}
    assert _policies(files[name]) <= asked
    assert {obj for key, obj in worked["worked"] if key == staged} == asked


def test_a_part_analysed_whole_looks_for_no_earlier_verdict(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, worked: dict[str, list[tuple[str, str]]]
) -> None:
    """A part that reaches the whole repository is analysed whole, whose per-object rules find
    results by place only: PL703 asks each other plausible schema of the edited file's objects,
    a walk of each whole where the verdict was read back rather than worked out, so the verdicts
    are worked out as before (the earlier content is not looked at)."""
    root, cache, name, files = _edited(tmp_path, monkeypatch)
    cold = check("--staged", "--no-cache")
    staged = ParseCache(cache).key((root / name).read_bytes())
    looked: list[str] = []
    real = admission.earlier_keys

    def earlier_keys(admissions: Any, obj: Any, schema: Any) -> Any:
        keys = real(admissions, obj, schema)
        looked.extend(obj.key.name for _ in keys)
        return keys

    monkeypatch.setattr(admission, "earlier_keys", earlier_keys)
    monkeypatch.setattr(components, "MIN_OBJECTS", 10**9)  # every part analysed whole
    assert check("--staged", "--cache-dir", cache) == cold
    assert looked == []
    assert _policies(files[name]) <= {obj for key, obj in worked["worked"] if key == staged}


def _verdicts_found(patch: pytest.MonkeyPatch) -> Callable[[], int]:
    """Counts the verdicts found through a file's earlier content."""
    found = 0
    real = admission.earlier_keys

    def counted(admissions: Any, obj: Any, schema: Any) -> Any:
        nonlocal found
        keys = real(admissions, obj, schema)
        found += any(admissions.kept.get(key) is not None for key in keys)
        return keys

    patch.setattr(admission, "earlier_keys", counted)
    return lambda: found


def test_random_edits_after_whole_runs_agree_with_no_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(components, "MIN_OBJECTS", 0)
    monkeypatch.chdir(tmp_path)
    assert _sequence(tmp_path / "repo", tmp_path / "cache", seed=2, steps=3, n=130, isolated=True, count=_verdicts_found) > 0


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(4))
def test_random_edits_after_whole_runs_agree_with_no_cache_longer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, seed: int
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(components, "MIN_OBJECTS", 0)
    # Tenants reaching into each other make most parts the whole repository, analysed whole,
    # which looks for no earlier verdict: found on isolated tenants.
    isolated = seed % 2 == 0
    found = _sequence(
        tmp_path / "repo", tmp_path / "cache", seed=seed + 10, steps=12, n=260, isolated=isolated, count=_verdicts_found
    )
    assert found > 0 or not isolated
