"""What a scoped run needs of the objects outside its part, answered from their files' shells
without building them (policylint.k8s.roster, policylint.incremental.shells `Slots`): only the
objects the part's analysis reads are built, every answer is the one the built objects give, and
the reports are those of a run without a cache. The random edit sequences through the command are
tests/incremental/test_incremental.py's; the scoped runs against whole ones,
tests/scope/test_scoped_analysis.py's."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest
import yaml

from benchmarks.generate import objects as tenants
from policylint.incremental import shells
from policylint.input import cache as parse_cache
from policylint.k8s import lazy
from policylint.k8s.index import ProjectIndex
from policylint.k8s.objects import ObjectKey
from policylint.k8s.roster import Roster
from policylint.pipeline import LintRequest, LintResult, lint
from policylint.reporters import renderer
from tests.scope.test_scoped_analysis import DUMPER


def _repository(root: Path) -> list[Path]:
    """Isolated tenants, ten documents a file, a List among them (objects not at a document's top)."""
    root.mkdir()
    docs: list[Any] = list(tenants(400, 3, error_rate=0.3, isolated=True))
    docs[-6:-3] = [{"apiVersion": "v1", "kind": "List", "items": docs[-6:-3]}]
    files = []
    # The bytes PyYAML's own emitter writes, by libyaml's in a quarter of the time (`DUMPER`).
    for i in range(0, len(docs), 10):
        path = root / f"f-{i // 10:03d}.yaml"
        path.write_text(yaml.dump_all(docs[i : i + 10], Dumper=DUMPER, sort_keys=False), encoding="utf-8")
        files.append(path)
    return files


def _run(root: Path, file: Path, cache: Path | None) -> LintResult:
    return lint(LintRequest(paths=[str(file)], context_paths=[str(root)], cache_dir=str(cache) if cache else None))


def _built(monkeypatch: pytest.MonkeyPatch) -> list[ObjectKey]:
    """The objects built from shells, one entry each."""
    built: list[ObjectKey] = []
    real = shells._object

    def counted(*args: Any) -> Any:
        obj = real(*args)
        built.append(obj.key)
        return obj

    monkeypatch.setattr(shells, "_object", counted)
    return built


def test_a_scoped_run_builds_only_the_objects_of_its_part(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root, cache = tmp_path / "repo", tmp_path / "cache"
    files = _repository(root)
    expected = _run(root, files[3], None)
    _run(root, files[3], cache)  # every file loaded, its shell kept
    built = _built(monkeypatch)
    again = _run(root, files[3], cache)
    assert again.index.roster is not None and again.index.roster.deferred()
    assert again.analysed is not None
    analysed = {o.key for o in again.analysed.index.objects}
    assert len(analysed) < len(again.index.objects) / 2  # a part, not everything
    # The part's objects, each once; none of the others, though the report counts them all.
    assert len(built) == len(set(built)) and set(built) <= analysed
    assert renderer("text")(again) == renderer("text")(expected)
    assert set(built) <= analysed  # the counts and the policy count built nothing
    assert renderer("junit")(again) == renderer("junit")(expected)  # a test case per object: all built


def _shared_maps(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """A count of the maps the parse cache's sharing decoder hands to the sharing table while the
    entries of files built from their shells are read (not those of the files loaded)."""
    calls, filling = [0], [False]
    real_share, real_fill = parse_cache.share_map, lazy.FileData.fill

    def counted(*args: Any) -> Any:
        calls[0] += filling[0]
        return real_share(*args)

    def fill(self: lazy.FileData) -> None:
        filling[0] = True
        try:
            real_fill(self)
        finally:
            filling[0] = False

    monkeypatch.setattr(parse_cache, "share_map", counted)
    monkeypatch.setattr(lazy.FileData, "fill", fill)
    return calls


def test_the_entries_a_part_reads_are_decoded_without_the_sharing_hook(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root, cache = tmp_path / "repo", tmp_path / "cache"
    files = _repository(root)
    expected = renderer("text")(_run(root, files[3], None))
    _run(root, files[3], cache)
    _run(root, files[3], cache)  # the linted file's entry and every shell kept
    plain = _shared_maps(monkeypatch)
    again = _run(root, files[3], cache)
    read = [o for o in again.index.objects if isinstance(o, lazy.LazyObject) and not o.unread]
    assert read  # the part's files were read from their entries
    assert plain[0] == 0  # ... and none through the sharing decoder's hook (every one, before)
    assert renderer("text")(again) == expected
    # Past its budget the decoder shares again (a run reading most of a large repository).
    monkeypatch.setattr(parse_cache, "PLAIN_BYTES", 0)
    shared = _shared_maps(monkeypatch)
    assert renderer("text")(_run(root, files[3], cache)) == expected
    assert shared[0] > 0


def test_a_part_found_from_nothing_builds_only_the_objects_of_its_part(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The first run on a new commit finds its part from nothing (the part kept is another file's):
    the search reads the files outside the part from their shells' rows, and builds only the
    objects the part holds, as the run again does (the tree before built every object)."""
    root, cache = tmp_path / "repo", tmp_path / "cache"
    files = _repository(root)
    _run(root, files[3], cache)  # every file loaded, its shell kept
    expected = _run(root, files[30], None)
    built = _built(monkeypatch)
    first = _run(root, files[30], cache)  # another file's part: not kept, searched for
    assert first.analysed is not None and first.index.roster is not None
    analysed = {o.key for o in first.analysed.index.objects}
    assert len(analysed) < len(first.index.objects) / 2
    assert len(built) == len(set(built)) and set(built) <= analysed
    assert renderer("text")(first) == renderer("text")(expected)
    assert [(f.fingerprint, f.line, f.message) for f in first.findings] == [
        (f.fingerprint, f.line, f.message) for f in expected.findings
    ]
    searched = sorted(built, key=repr)
    built.clear()
    again = _run(root, files[30], cache)  # the part read back
    assert sorted(built, key=repr) == searched
    assert renderer("text")(again) == renderer("text")(expected)


def _answers(index: ProjectIndex, keys: list[ObjectKey], members: frozenset[ObjectKey]) -> dict[str, Any]:
    """What a scoped run asks of the index of every object it read, each answer as plain values."""

    def shown(objects: Any) -> list[tuple[Any, ...]]:
        return [(o.key, o.doc, o.prefix, dict(o.labels), o.api_version) for o in objects]

    missing = [ObjectKey(k.group, k.kind, k.namespace, k.name + "-gone") for k in keys[::7]]
    elsewhere = [ObjectKey(k.group, k.kind, "elsewhere", k.name) for k in keys[::11]]
    return {
        "count": len(index.objects),
        "kinds": list(index.kind_counts().items()),
        "kinds in input": index.kinds_in_input(),
        "groups": sorted(index.input_groups()),
        "present": sorted(index.present([*keys, *missing, *elsewhere], first=index.files[:2])),
        "outside": sorted(index.files_outside(members)),
        "outside of none": sorted(index.files_outside(frozenset())),
        "outside of all": sorted(index.files_outside(frozenset(keys))),
        "of kind": {gk: shown(index.of_kind(*gk)) for gk in index.kind_counts()},
        "get": [shown([index.get(k)]) for k in [*keys[::3], *missing[:3]] if index.get(k) is not None],
        "missing": [index.get(k) for k in missing],
    }


def test_what_is_asked_of_unbuilt_objects_is_what_the_built_ones_answer(tmp_path: Path) -> None:
    root, cache = tmp_path / "repo", tmp_path / "cache"
    files = _repository(root)
    eager = _run(root, files[3], None)
    _run(root, files[3], cache)
    lazy = _run(root, files[3], cache)
    assert lazy.members is not None and lazy.index.roster is not None
    keys = sorted({o.key for o in eager.index.objects}, key=repr)
    expected = _answers(eager.index, keys, lazy.members)
    # Asked of the index as the run left it: the objects outside the part unbuilt.
    assert _answers(lazy.index, keys, lazy.members) == expected
    assert lazy.project.resolution.policy_count() == len(eager.project.resolution.policy_objects())
    assert lazy.index._by_key is None  # none of it needed every object built
    # Every object built and sorted when something reads them all, as loading builds them.
    assert [(o.key, o.doc, o.prefix, o.data) for o in lazy.index.objects] == [
        (o.key, o.doc, o.prefix, o.data) for o in eager.index.objects
    ]
    assert _answers(lazy.index, keys, lazy.members) == expected


def test_an_object_built_after_its_file_was_read_has_its_data(tmp_path: Path) -> None:
    root, cache = tmp_path / "repo", tmp_path / "cache"
    files = _repository(root)
    eager = {(o.key, o.doc, o.prefix): o.data for o in _run(root, files[3], None).index.objects}
    _run(root, files[3], cache)
    roster = _run(root, files[3], cache).index.roster
    assert roster is not None
    rng = random.Random(0)
    for _, objects in roster.files:
        if isinstance(objects, shells.Slots):
            order = list(range(len(objects)))
            rng.shuffle(order)
            for i in order:  # the first read reads the file; the others are built after it
                obj = objects[i]
                assert obj.data == eager[(obj.key, obj.doc, obj.prefix)]
                assert objects[i] is obj  # built once


def test_a_roster_answers_as_the_list_of_its_objects(tmp_path: Path) -> None:
    root, cache = tmp_path / "repo", tmp_path / "cache"
    files = _repository(root)
    _run(root, files[3], cache)
    roster = _run(root, files[3], cache).index.roster
    assert roster is not None
    keys = [k for f in range(len(roster.files)) for k in roster.keys_of(f)]
    located = {}
    for f, (_, objects) in enumerate(roster.files):
        for i in range(len(objects)):
            located[objects[i]] = (f, i)
    every = list(roster)
    assert [o.key for o in every] == keys and len(every) == len(roster)
    assert [roster[i] for i in range(len(roster))] == every and roster[-1] is every[-1]
    assert roster.locate() == located
    starts = roster.starts()
    assert all(roster[starts[f] + i] is o for o, (f, i) in located.items())
    assert isinstance(roster, Roster) and list(roster[3:5]) == every[3:5]


def test_the_files_holding_only_members_are_told_from_the_members_files(tmp_path: Path) -> None:
    """The members kept for the next commit's base name the files holding only members (or no
    object) from the files of the part's members alone (`files_outside`'s `holding`): the same
    files as asking every file, where a member is defined again in another file (PL005), beside
    an object that is not a member, and where a file holds no object."""
    root, cache = tmp_path / "repo", tmp_path / "cache"
    files = _repository(root)
    docs = list(yaml.safe_load_all(files[3].read_text(encoding="utf-8")))
    (root / "again.yaml").write_text(yaml.dump_all(docs, Dumper=DUMPER, sort_keys=False), encoding="utf-8")
    other = list(yaml.safe_load_all(files[30].read_text(encoding="utf-8")))
    (root / "mixed.yaml").write_text(yaml.dump_all([docs[0], other[0]], Dumper=DUMPER, sort_keys=False), encoding="utf-8")
    (root / "none.yaml").write_text("# nothing here\n", encoding="utf-8")
    for run in (_run(root, files[3], cache), _run(root, files[3], cache)):
        assert run.members is not None and run.analysed is not None
        holding = {o.doc.file for o in run.analysed.index.objects if o.key in run.members}
        outside = run.index.files_outside(run.members)
        assert run.index.files_outside(run.members, holding) == outside
        whole = {f for f in run.index.files if f not in outside}
        assert {Path(f).name for f in whole} >= {"again.yaml", "none.yaml", files[3].name}
        assert "mixed.yaml" not in {Path(f).name for f in whole}
    assert run.index.roster is not None and run.index.roster.deferred()


def test_a_file_left_out_of_the_holding_files_is_outside_unasked() -> None:
    """`Roster.files_outside` asks only the files `holding` names; any other file holding an object
    is outside (never said to hold only the keys), one holding none is not."""
    from policylint.input.document import DocumentRef
    from policylint.k8s.objects import K8sObject

    def obj(file: str, name: str) -> K8sObject:
        return K8sObject(ObjectKey("", "Service", "a", name), "v1", {}, DocumentRef(file, 0, 0, 0, 1, 1))

    roster = Roster([("x", [obj("x", "m")]), ("y", [obj("y", "m")]), ("z", []), ("w", [obj("w", "n")])])
    keys = frozenset({ObjectKey("", "Service", "a", "m")})
    assert roster.files_outside(keys) == {"w"}
    assert roster.files_outside(keys, {"x", "y"}) == {"w"}
    assert roster.files_outside(keys, {"x"}) == {"y", "w"}  # `y` left out: taken as outside
    assert roster.files_outside(keys, {"x", "y", "w"}) == {"w"}
