"""What a scoped run keeps of each file it reads, its shell (policylint.incremental.shells): the next
scoped run builds the objects of the files it does not analyse from their shells and decodes
only the files its part reaches (policylint.k8s.lazy); every report is the one a run without a
cache gives, and a shell that is not exactly what policylint writes is a miss. The random edit
sequences through the command are tests/incremental/test_incremental.py's differential tests."""

from __future__ import annotations

import dataclasses
import json
import pickle
from pathlib import Path
from typing import Any

import pytest
import yaml

from benchmarks.generate import objects as tenants
from policylint.incremental import shellpack, shells
from policylint.input.cache import ParseCache
from policylint.k8s import lazy
from policylint.k8s.lazy import LazyObject
from policylint.k8s.objects import K8sObject, KindRegistry
from policylint.pipeline import LintRequest, LintResult, lint
from policylint.profiles.implementations import builtin_implementations
from policylint.profiles.registry import ProfileRegistry, builtin_profiles
from policylint.reporters import renderer
from policylint.semantics.resolution import Resolution
from tests.scope.test_scoped_analysis import DUMPER


def _repository(root: Path, *, namespaced: bool = True) -> list[Path]:
    """Isolated tenants, ten documents a file; `namespaced` False: no document names its namespace."""
    root.mkdir()
    docs = list(tenants(400, 3, error_rate=0.3, isolated=True))
    if not namespaced:
        for doc in docs:
            doc["metadata"].pop("namespace", None)
    files = []
    # The bytes PyYAML's own emitter writes, by libyaml's in a quarter of the time (`DUMPER`).
    for i in range(0, len(docs), 10):
        path = root / f"f-{i // 10:03d}.yaml"
        path.write_text(yaml.dump_all(docs[i : i + 10], Dumper=DUMPER, sort_keys=False), encoding="utf-8")
        files.append(path)
    return files


def _run(root: Path, file: Path, cache: Path | None, namespace: str = "default") -> LintResult:
    return lint(
        LintRequest(
            paths=[str(file)],
            context_paths=[str(root)],
            cache_dir=str(cache) if cache is not None else None,
            namespace=namespace,
        )
    )


def _report(result: LintResult) -> tuple[str, str, int, int, list[str]]:
    """What the reports say: the text and JUnit reports (counts of objects and policies, a test
    case per object of the files reported) and every input problem."""
    issues = [f"{i.rule_id} {i.message} {i.location} {i.document} {i.path}" for i in result.index.input_issues]
    return (
        renderer("text")(result),
        renderer("junit")(result),
        len(result.index.objects),
        len(result.project.resolution.policy_objects()),
        issues,
    )


def _reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The files whose lazily built objects were read, one entry per file."""
    read: list[str] = []
    real = lazy.FileData.fill

    def fill(self: lazy.FileData) -> None:
        if self._read is not None and self._objects:
            read.append(self._objects[0][0].doc.file)
        real(self)

    monkeypatch.setattr(lazy.FileData, "fill", fill)
    return read


def test_files_outside_the_part_are_built_from_their_shells_and_not_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root, cache = tmp_path / "repo", tmp_path / "cache"
    files = _repository(root)
    expected = _report(_run(root, files[3], None))
    read = _reads(monkeypatch)
    first = _run(root, files[3], cache)  # nothing kept yet: every file loaded, its shell kept
    assert read == [] and not any(isinstance(o, LazyObject) for o in first.index.objects)
    assert _report(first) == expected
    again = _run(root, files[3], cache)
    lazies = [o for o in again.index.objects if isinstance(o, LazyObject)]
    assert len(lazies) == len(again.index.objects)  # every file unchanged: all built from shells
    analysed = {o.doc.file for o in again.project.index.objects if again.members is None or o.key in again.members}
    assert set(read) == analysed  # the files of the part alone were read
    assert len(read) < len(files) / 2
    assert _report(again) == expected  # counts, test cases and input problems from the shells
    # A file edited since: it alone is loaded, the others still not read.
    with files[30].open("a", encoding="utf-8") as fh:
        fh.write("# edited\n")
    del read[:]
    edited = _run(root, files[3], cache)
    assert not any(isinstance(o, LazyObject) for o in edited.index.objects if o.doc.file.endswith("f-030.yaml"))
    assert not any(f.endswith("f-030.yaml") for f in read)
    assert _report(edited) == expected


def _shell_entries(cache_dir: Path, files: list[Path]) -> list[str]:
    cache = ParseCache(cache_dir)
    stamp = shells.FORMAT.to_bytes(2, "big") + shells._code()
    return [cache.named("shell of a file", stamp + cache.key(f.read_bytes()).encode("ascii")) for f in files]


ROW = [0, [], "v1", "", "Service", "a", "s", "a", {}, {}, None, None, [], True]
HEAD = b'{"format":2,"documents":1,"issues":[],"built":[],"names":["","Service","a","s"]}'


def _shell(head: bytes, rows: Any) -> bytes:
    """A shell's entry in the layout `Session.remember` writes (written out here by hand)."""
    return head + b"\t" + json.dumps(rows, separators=(",", ":")).encode()


@pytest.mark.parametrize(
    "payload",
    [
        b"not json",
        # The layout before the rows were read apart: a stale entry.
        b'{"format": 1, "issues": [], "documents": [], "built": [], "objects": []}',
        b'{"format": 2, "loaded": true}',
        HEAD,  # no rows
        # A head whose documents are not a count, whose names are not four per object or not
        # strings (a namespace may be null), a problem of another shape, one naming a document
        # past the count.
        _shell(HEAD.replace(b'"documents":1', b'"documents":[[0,0,0,1,1]]'), [[[0, 0, 0, 1, 1]], [ROW]]),
        _shell(HEAD.replace(b'"s"]', b'"s",""]'), [[[0, 0, 0, 1, 1]], [ROW]]),
        _shell(HEAD.replace(b'"a","s"', b'"a",1'), [[[0, 0, 0, 1, 1]], [ROW]]),
        _shell(HEAD.replace(b'"Service"', b"null"), [[[0, 0, 0, 1, 1]], [ROW]]),
        _shell(HEAD.replace(b'"issues":[]', b'"issues":[["PL001","x","1",1]]'), [[[0, 0, 0, 1, 1]], [ROW]]),
        _shell(HEAD.replace(b'"built":[]', b'"built":[[1,"PL003","x",""]]'), [[[0, 0, 0, 1, 1]], [ROW]]),
    ],
)
def test_a_shell_that_is_not_what_policylint_writes_is_a_miss(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, payload: bytes
) -> None:
    root, cache = tmp_path / "repo", tmp_path / "cache"
    files = _repository(root)
    expected = _report(_run(root, files[3], None))
    _run(root, files[3], cache)
    store = ParseCache(cache)
    forged = _shell_entries(cache, files)
    for entry in forged:
        store.put(entry, payload)
    # The same shells in the pack the run read them from (`shellpack.Pack`), forged alike.
    held = _packed(cache)
    assert set(held) == {e.encode("ascii") for e in forged}
    _pack(cache, dict.fromkeys(held, payload))
    loaded = _loads(monkeypatch)
    result = _run(root, files[3], cache)
    assert not any(isinstance(o, LazyObject) for o in result.index.objects)  # every file loaded
    assert len(loaded) == len(files)  # from the first: the head is read before any object is made
    assert _report(result) == expected


def _loads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The files loaded from their bytes or parse entry before their objects are made."""
    from policylint import pipeline

    loaded: list[str] = []
    real = pipeline._load

    def counted(sources: Any, *args: Any) -> Any:
        loaded.extend(s.display for s in sources)
        return real(sources, *args)

    monkeypatch.setattr(pipeline, "_load", counted)
    return loaded


def _forged_rows(rows: Any, how: str) -> Any:
    """A shell's rows (its documents' positions and objects' rows) made other than `remember`
    writes them, `how`."""
    positions, objects = rows
    first = objects[0]
    if how == "not a list":
        return {"documents": positions, "objects": objects}
    if how == "a document fewer":
        return [positions[:-1], objects]
    if how == "a position of four":
        return [[positions[0][:4], *positions[1:]], objects]
    if how == "an object fewer":
        return [positions, objects[:-1]]
    if how == "another name":  # not the object the head names
        return [positions, [[*first[:6], first[6] + "-x", *first[7:]], *objects[1:]]]
    if how == "a label not a string":
        return [positions, [[*first[:8], {"app": 1}, *first[9:]], *objects[1:]]]
    if how == "a reference of another shape":
        return [positions, [[*first[:12], [["ns", 1, True, False]], first[13]], *objects[1:]]]
    if how == "a reference a string":
        return [positions, [[*first[:12], ["abcd"], first[13]], *objects[1:]]]
    if how == "a prefix holding a boolean":
        return [positions, [[first[0], [True], *first[2:]], *objects[1:]]]
    if how == "a document not there":
        return [positions, [[len(positions), *first[1:]], *objects[1:]]]
    assert how == "a timestamp no time"
    return [positions, [[*first[:10], "yesterday", *first[11:]], *objects[1:]]]


@pytest.mark.parametrize(
    "how",
    [
        "not a list",
        "a document fewer",
        "a position of four",
        "an object fewer",
        "another name",
        "a label not a string",
        "a reference of another shape",
        "a reference a string",
        "a prefix holding a boolean",
        "a document not there",
        "a timestamp no time",
        "not json",
    ],
)
def test_rows_that_are_not_what_policylint_writes_are_not_believed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, how: str
) -> None:
    """A shell's rows are decoded when first read: rows not exactly what `remember` writes, or not
    naming the objects its head names, are found then, and the file's objects are built from its
    data as loading builds them; the report is a run's without a cache."""
    root, cache = tmp_path / "repo", tmp_path / "cache"
    files = _repository(root)
    expected = _report(_run(root, files[3], None))
    _run(root, files[3], cache)
    store = ParseCache(cache)
    held = _packed(cache)
    forged: dict[bytes, bytes] = {}
    for name, payload in held.items():
        head, tab, rows = payload.partition(b"\t")
        assert tab and json.loads(head)["format"] == shells.FORMAT
        bad = b"[[" if how == "not json" else json.dumps(_forged_rows(json.loads(rows), how)).encode()
        forged[name] = head + tab + bad
        store.put(name.decode("ascii"), forged[name])
    _pack(cache, forged)
    loaded = _loads(monkeypatch)
    result = _run(root, files[3], cache)
    assert loaded == []  # the heads believed: no file loaded before its objects are made
    assert not any(isinstance(o, LazyObject) for o in result.index.objects)  # each built from data
    assert _report(result) == expected


def test_a_head_naming_objects_its_file_does_not_hold_gives_objects_of_its_keys(tmp_path: Path) -> None:
    """Rows not believed, where the head names objects the file's data does not hold (a head no
    run wrote for these bytes): each object the head names is made of its key, with no data, and
    the run ends as any other (the objects counted from the head are the ones it holds)."""
    root, cache = tmp_path / "repo", tmp_path / "cache"
    files = _repository(root)
    _run(root, files[3], cache)
    store = ParseCache(cache)
    held = _packed(cache)
    forged: dict[bytes, bytes] = {}
    for name, payload in held.items():
        head, tab, _ = payload.partition(b"\t")
        decoded = json.loads(head)
        decoded["names"][3::4] = [f"{n}-elsewhere" for n in decoded["names"][3::4]]
        forged[name] = json.dumps(decoded, separators=(",", ":")).encode() + tab + b"[["
        store.put(name.decode("ascii"), forged[name])
    _pack(cache, forged)
    result = _run(root, files[3], cache)
    made = list(result.index.objects)
    assert made and all(o.name.endswith("-elsewhere") and not o.data for o in made)
    assert len(result.index.objects) == len(_run(root, files[3], None).index.objects)


def _pack_entry(cache_dir: Path) -> tuple[ParseCache, str]:
    store = ParseCache(cache_dir)
    return store, shellpack.Pack(store, shells.FORMAT.to_bytes(2, "big") + shells._code()).entry


def _packed(cache_dir: Path) -> dict[bytes, bytes]:
    """The shells' pack of the working directory's runs, by entry name."""
    store, entry = _pack_entry(cache_dir)
    return shellpack.unpacked(store.payload(entry))


def _pack(cache_dir: Path, held: dict[bytes, bytes], header: bytes = shellpack.HEADER) -> None:
    """Write the pack, in the layout `Pack.save` writes (written out here by hand)."""
    store, entry = _pack_entry(cache_dir)
    store.put(entry, b"\n".join([header, *(name + b" " + held[name] for name in sorted(held))]))


def _payloads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The entries whose payload a run reads, in order."""
    asked: list[str] = []
    real = ParseCache.payload

    def payload(self: ParseCache, key: str) -> Any:
        asked.append(key)
        return real(self, key)

    monkeypatch.setattr(ParseCache, "payload", payload)
    return asked


def test_the_shells_are_read_from_one_pack_holding_the_runs_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """One entry read where there were one per file: the pack of the last run's shells, holding
    each file's entry as written, and no more than the run's files."""
    root, cache = tmp_path / "repo", tmp_path / "cache"
    files = _repository(root)
    expected = _report(_run(root, files[3], None))
    _run(root, files[3], cache)  # every file loaded: its shell kept, in its entry and in the pack
    entries = _shell_entries(cache, files)
    store = ParseCache(cache)
    held = _packed(cache)
    assert held == {e.encode("ascii"): bytes(store.payload(e) or b"") for e in entries}
    asked = _payloads(monkeypatch)
    again = _run(root, files[3], cache)
    assert _report(again) == expected
    assert all(isinstance(o, LazyObject) for o in again.index.objects)
    _, pack = _pack_entry(cache)
    assert asked.count(pack) == 1 and not set(asked) & set(entries)  # the tree before: each of the 40
    # A file edited: its new shell read from its own entry, the pack not written again for one file
    # in forty (written when what it lacks or holds beyond the run's files passes an eighth).
    with files[30].open("a", encoding="utf-8") as fh:
        fh.write("# edited\n")
    del asked[:]
    assert _report(_run(root, files[3], cache)) == expected
    assert _packed(cache) == held
    now = _shell_entries(cache, files)
    del asked[:]
    assert _report(_run(root, files[3], cache)) == expected
    assert asked.count(pack) == 1 and set(asked) & set(now) == {now[30]}
    # Two more: six entries off (three lacking, three beyond) of forty, written again, holding
    # the run's files alone.
    for file in files[31:33]:
        with file.open("a", encoding="utf-8") as fh:
            fh.write("# edited\n")
    _run(root, files[3], cache)
    now = _shell_entries(cache, files)
    assert set(_packed(cache)) == {e.encode("ascii") for e in now}
    # Five files removed: left out of the pack.
    for file in files[35:]:
        file.unlink()
    _run(root, files[3], cache)
    assert set(_packed(cache)) == {e.encode("ascii") for e in now[:35]}


@pytest.mark.parametrize("damage", ["checksum", "header", "line", "elsewhere"])
def test_a_pack_that_is_not_what_policylint_writes_is_no_pack(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, damage: str
) -> None:
    """A pack damaged, of another layout or made for another working directory is no pack: each
    file's own entry is read, the report a run's without a cache, and the pack written again."""
    root, cache = tmp_path / "repo", tmp_path / "cache"
    files = _repository(root)
    _run(root, files[3], cache)
    entries = _shell_entries(cache, files)
    held = _packed(cache)
    store, pack = _pack_entry(cache)
    if damage == "checksum":
        path = Path(store.directory) / "parse" / pack
        data = bytearray(path.read_bytes())
        data[-2] ^= 1
        path.write_bytes(bytes(data))
    elif damage == "header":
        _pack(cache, held, header=b'{"format":2,"pack":"shells"}')
    elif damage == "line":  # a line with no space after the entry's name
        lines = [shellpack.HEADER, *(name + b" " + held[name] for name in sorted(held)), min(held)]
        store.put(pack, b"\n".join(lines))
    else:
        monkeypatch.chdir(tmp_path)
    expected = _report(_run(root, files[3], None))
    asked = _payloads(monkeypatch)
    result = _run(root, files[3], cache)
    assert _report(result) == expected
    assert all(isinstance(o, LazyObject) for o in result.index.objects)
    assert set(entries) <= set(asked)  # every file's own entry read
    assert _packed(cache) == held  # and packed again


def test_references_found_in_another_namespace_are_found_again(tmp_path: Path) -> None:
    """The same bytes read with another default namespace are other objects, whose references
    name other namespaces: the shell's are not believed, the objects are read for them."""
    root, cache = tmp_path / "repo", tmp_path / "cache"
    files = _repository(root, namespaced=False)
    _run(root, files[3], cache, namespace="default")
    expected = _report(_run(root, files[3], None, namespace="elsewhere"))
    result = _run(root, files[3], cache, namespace="elsewhere")
    # A Namespace is cluster-scoped: its own namespace, hence its references, are the same.
    lazies = [o for o in result.index.objects if isinstance(o, LazyObject) and o.namespace is not None]
    assert lazies and all(o.namespace == "elsewhere" and o.kept_references is None for o in lazies)
    assert _report(result) == expected


def test_a_file_holding_a_crd_is_always_loaded(tmp_path: Path) -> None:
    root, cache = tmp_path / "repo", tmp_path / "cache"
    files = _repository(root)
    crd = {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.example.com"},
        "spec": {"group": "example.com", "names": {"kind": "Widget", "plural": "widgets"}, "scope": "Cluster", "versions": []},
    }
    with files[7].open("a", encoding="utf-8") as fh:
        fh.write("---\n" + yaml.safe_dump(crd))
    _run(root, files[3], cache)
    result = _run(root, files[3], cache)
    assert not any(isinstance(o, LazyObject) for o in result.index.objects if o.doc.file.endswith("f-007.yaml"))
    assert any(isinstance(o, LazyObject) for o in result.index.objects)
    assert _report(result) == _report(_run(root, files[3], None))


def test_a_file_whose_parse_entry_is_gone_is_parsed_again_when_read(tmp_path: Path) -> None:
    root, cache = tmp_path / "repo", tmp_path / "cache"
    files = _repository(root)
    _run(root, files[3], cache)
    store = ParseCache(cache)
    for f in files:
        (cache / "parse" / store.key(f.read_bytes())).unlink()
    result = _run(root, files[3], cache)
    assert _report(result) == _report(_run(root, files[3], None))
    outside = next(o for o in result.index.objects if isinstance(o, LazyObject) and o.unread and o.kind == "HTTPRoute")
    assert outside.spec  # read from the file's bytes


def test_a_lazy_object_is_sent_to_another_process_as_the_object_it_stands_for(tmp_path: Path) -> None:
    root, cache = tmp_path / "repo", tmp_path / "cache"
    files = _repository(root)
    _run(root, files[3], cache)
    result = _run(root, files[3], cache)
    obj: Any = next(o for o in result.index.objects if isinstance(o, LazyObject) and o.unread)
    copy = pickle.loads(pickle.dumps(obj))
    assert type(copy) is K8sObject
    assert (copy.key, copy.data, copy.doc, copy.labels) == (obj.key, obj.data, obj.doc, obj.labels)


def test_a_lazy_object_holds_every_field_of_the_object_loading_builds(tmp_path: Path) -> None:
    """`lazy_object` sets each slot itself (no keyword call): a field of `K8sObject` it missed, or
    set from the wrong column of the shell's row, would differ from the eager object here."""
    root, cache = tmp_path / "repo", tmp_path / "cache"
    files = _repository(root)
    eager = {o.key: o for o in _run(root, files[3], None).index.objects}
    _run(root, files[3], cache)
    lazies = [o for o in _run(root, files[3], cache).index.objects if isinstance(o, LazyObject)]
    assert len(lazies) == len(eager)
    names = [f.name for f in dataclasses.fields(K8sObject)]
    assert "creation_timestamp" in names and "labels" in names
    for obj in lazies:
        assert [getattr(obj, n) for n in names] == [getattr(eager[obj.key], n) for n in names], obj.key


def test_building_objects_from_shells_asks_the_kinds_once_per_kind_and_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Whether a kind is cluster-scoped decides each object's namespace: asked of the run's kinds
    once per kind of a file, not twice per object (a tenth of building 10,000 objects)."""
    root, cache = tmp_path / "repo", tmp_path / "cache"
    files = _repository(root)
    _run(root, files[3], cache)
    asked: list[tuple[str, str]] = []
    real = KindRegistry.is_cluster_scoped

    def is_cluster_scoped(self: KindRegistry, group: str, kind: str) -> bool:
        asked.append((group, kind))
        return real(self, group, kind)

    monkeypatch.setattr(shells, "_build", _counting(asked, monkeypatch, is_cluster_scoped))
    result = _run(root, files[3], cache)
    lazies = [o for o in result.index.objects if isinstance(o, LazyObject)]
    kinds_per_file = {(o.doc.file, o.group, o.kind) for o in lazies}
    assert len(lazies) > 2 * len(kinds_per_file)  # files of several objects of each kind
    assert len(asked) == len(kinds_per_file)


def _counting(asked: list[tuple[str, str]], monkeypatch: pytest.MonkeyPatch, patched: Any) -> Any:
    """`shells._build`, with `KindRegistry.is_cluster_scoped` replaced by `patched` while it runs."""
    real = shells._build

    def build(*args: Any) -> Any:
        with monkeypatch.context() as m:
            m.setattr(KindRegistry, "is_cluster_scoped", patched)
            return real(*args)

    return build


def test_the_policy_count_asks_each_object_only_of_kinds_that_may_be_policies_unprofiled(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The text report counts the policies of the whole repository: kind by kind, each object
    asked (and maybe read, for its spec) only where its kind has no profile and is named like a
    policy's, whose shape decides (an inferred profile, here `WidgetPolicy`'s)."""
    root, cache = tmp_path / "repo", tmp_path / "cache"
    files = _repository(root)
    widgets = [
        {
            "apiVersion": "example.com/v1",
            "kind": "WidgetPolicy",
            "metadata": {"name": f"w{i}", "namespace": "tenant-00000"},
            "spec": {"targetRefs": [{"group": "gateway.networking.k8s.io", "kind": "Gateway", "name": "gw"}]},
        }
        for i in range(3)
    ]
    with files[5].open("a", encoding="utf-8") as fh:
        fh.write("---\n" + yaml.safe_dump_all(widgets))
    expected = _run(root, files[3], None)
    _run(root, files[3], cache)
    result = _run(root, files[3], cache)
    asked: list[str] = []
    real = Resolution.profile_for

    def profile_for(self: Resolution, obj: K8sObject) -> Any:
        asked.append(obj.kind)
        return real(self, obj)

    monkeypatch.setattr(Resolution, "profile_for", profile_for)
    # A resolution whose policies were not built, as the text report's count meets it after a
    # scoped run (this run's built them for its rules), with the shipped profiles alone.
    profiles = ProfileRegistry([builtin_profiles()], implementations=builtin_implementations())
    found = Resolution(result.index, profiles).policy_objects()
    assert sorted(asked) == ["WidgetPolicy"] * 3
    assert [o.key for o in found] == [o.key for o in expected.project.resolution.policy_objects()]
    assert {o.key.name for o in found if o.kind == "WidgetPolicy"} == {"w0", "w1", "w2"}
