"""The directed part search's index kept between processes (policylint.incremental.keptindex):
patched for the files changed since it was kept, its part is the one the search from nothing finds,
object for object; an entry damaged, forged or of other files is no use of it, and the search
runs as before. Through the command, tests/incremental/test_incremental.py's differential runs
(a persistent cache against none) take it wherever a value or a reference changed."""

from __future__ import annotations

import copy
import hashlib
import json
import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from benchmarks.generate import objects as tenants
from policylint.incremental import keptindex, summaries
from policylint.input.cache import ParseCache
from policylint.input.load import Document, DocumentRef
from policylint.k8s.index import ProjectIndex
from policylint.k8s.objects import KindRegistry, ObjectKey, build_objects
from policylint.semantics import components
from policylint.semantics.components import Scoped

Files = dict[str, list[dict[str, Any]]]


def _files(n: int = 600, seed: int = 3) -> Files:
    """The benchmark generator's tenants, some routes reaching other tenants' Services, five
    documents a file: a change's part is a few tenants (on shared tenants at this size, more than
    half of the objects: everything, which would compare nothing)."""
    docs = list(tenants(n, seed, error_rate=0.3))
    return {f"f-{k // 5:03d}.yaml": docs[k : k + 5] for k in range(0, len(docs), 5)}


def _index(files: Files) -> ProjectIndex:
    documents = [Document(DocumentRef(name, 0, 0, i, 1, 1), doc) for name, docs in files.items() for i, doc in enumerate(docs)]
    objects = build_objects(documents, KindRegistry.builtin(), "default").objects
    content = {
        name: hashlib.blake2b(json.dumps(docs, sort_keys=True).encode(), digest_size=20).hexdigest()
        for name, docs in files.items()
    }
    return ProjectIndex(objects, KindRegistry.builtin(), content_keys=content)


def _same(a: Scoped | None, b: Scoped | None) -> bool:
    if a is None or b is None:
        return a is b
    return sorted(map(id, a.objects)) == sorted(map(id, b.objects)) and a.members == b.members


@pytest.fixture
def decided(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """Per search, whether the kept index answered it."""
    found: list[bool] = []
    real = keptindex.scope

    def scope(*args: Any) -> Any:
        answer = real(*args)
        found.append(not isinstance(answer, keptindex.Undecided))
        return answer

    monkeypatch.setattr(keptindex, "scope", scope)
    return found


def _of_kind(files: Files, kind: str, rng: random.Random) -> tuple[str, dict[str, Any]]:
    found = [(name, doc) for name, docs in files.items() for doc in docs if doc["kind"] == kind]
    return rng.choice(found)


def _retarget(files: Files, rng: random.Random) -> str:
    """A route's backend sent to another tenant's Service."""
    name, route = _of_kind(files, "HTTPRoute", rng)
    _, service = _of_kind(files, "Service", rng)
    route["spec"]["rules"][0]["backendRefs"] = [
        {"name": service["metadata"]["name"], "namespace": service["metadata"]["namespace"], "port": 8080}
    ]
    return name


def _typo(files: Files, rng: random.Random) -> str:
    """A policy's target misspelled (a near miss), or spelled back."""
    name, policy = _of_kind(files, "BackendTrafficPolicy", rng)
    ref = policy["spec"]["targetRefs"][0]
    ref["name"] = ref["name"][:-5] if ref["name"].endswith("-typo") else ref["name"] + "-typo"
    return name


def _parent(files: Files, rng: random.Random) -> str:
    """A route moved to another tenant's Gateway."""
    name, route = _of_kind(files, "HTTPRoute", rng)
    _, gateway = _of_kind(files, "Gateway", rng)
    route["spec"]["parentRefs"] = [{"name": gateway["metadata"]["name"], "namespace": gateway["metadata"]["namespace"]}]
    return name


def _selector(files: Files, rng: random.Random) -> str:
    """A policy choosing its targets by label in its namespace."""
    name, policy = _of_kind(files, "BackendTrafficPolicy", rng)
    policy["spec"]["targetSelectors"] = [{"kind": "HTTPRoute", "matchLabels": {"app": "x"}}]
    return name


def _value(files: Files, rng: random.Random) -> str:
    """A route's path made longer: no reference changed."""
    name, route = _of_kind(files, "HTTPRoute", rng)
    route["spec"]["rules"][0]["matches"][0]["path"]["value"] += "-v"
    return name


def _elsewhere(files: Files, rng: random.Random) -> str:
    """A route's backend named after a Service of another tenant, in a third tenant's namespace
    that holds none of that name: a hint names the one elsewhere, which the part's context holds."""
    name, route = _of_kind(files, "HTTPRoute", rng)
    _, service = _of_kind(files, "Service", rng)
    _, gateway = _of_kind(files, "Gateway", rng)
    route["spec"]["rules"][0]["backendRefs"] = [
        {"name": service["metadata"]["name"], "namespace": gateway["metadata"]["namespace"] + "-none", "port": 8080}
    ]
    return name


def _rename(files: Files, rng: random.Random) -> str:
    """A Service renamed: the kept names are no longer the objects'."""
    name, service = _of_kind(files, "Service", rng)
    service["metadata"]["name"] += "-x"
    return name


EDITS: list[Callable[[Files, random.Random], str]] = [_retarget, _typo, _parent, _selector, _value, _elsewhere, _rename]


@pytest.mark.parametrize("seed", range(3))
def test_the_kept_index_patched_gives_the_part_found_from_nothing(tmp_path: Path, decided: list[bool], seed: int) -> None:
    """Random edits of one file at a time, each searched with the cache (the index kept by the
    search before, patched for every file changed since) and without it: the same objects and
    members. A rename is no patch (the search from nothing, its index kept again)."""
    rng = random.Random(seed)
    files = _files()
    cache = ParseCache(tmp_path / "cache")
    before = _index(files)
    summaries.scope(cache, before, {"f-001.yaml"}, (), {})  # the index kept
    assert decided == [False]
    assert cache.payload(keptindex.entry_name(cache, ("default", False, {}))) is not None
    taken = parts = 0
    for _ in range(14):
        edit = rng.choice(EDITS)
        changed = edit(files, rng)
        index = _index(files)
        removed = {o.key for o in before.objects if o.doc.file == changed} - {o.key for o in index.objects}
        expected = components.scope(list(index.objects), {changed}, removed, hosts={})
        del decided[:]
        parts += expected is not None
        assert _same(summaries.scope(cache, index, {changed}, removed, {}), expected), edit.__name__
        # A rename is no patch of the kept index; the other edits are, but where the search before
        # kept none (a part of everything decided before the index was built).
        assert len(decided) == 1 and not (decided[0] and edit is _rename), edit.__name__
        taken += decided[0]
        before = index
    assert taken >= 7 and parts >= 10  # real parts, not everything


def test_an_index_patched_by_many_files_is_kept_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Past a sixteenth of the files changed since it was kept, the index patched is written for
    the run's files, and a later search patches only what changed since then."""
    files = _files()
    cache = ParseCache(tmp_path / "cache")
    summaries.scope(cache, _index(files), {"f-001.yaml"}, (), {})
    rng = random.Random(0)
    patched: list[int] = []
    real = keptindex._Kept.__init__

    def counted(self: Any, parts: Any, differ: list[int]) -> None:
        patched.append(len(differ))
        real(self, parts, differ)

    monkeypatch.setattr(keptindex._Kept, "__init__", counted)
    count = len(files)
    for step in range(count // 16 + 6):
        changed = _value(files, rng) if step % 2 else _retarget(files, rng)
        index = _index(files)
        assert _same(summaries.scope(cache, index, {changed}, (), {}), components.scope(list(index.objects), {changed}, hosts={}))
    # The differing files grow one edit at a time, then start again from the index written anew.
    assert max(patched) > count / 16
    assert patched[-1] < max(patched)


def _forged(payload: bytes) -> list[tuple[str, bytes]]:
    """Entries that are not what `_write` makes, from a real one: its layout broken, or its parts
    (`keptindex._decode`) edited and written in its layout (`keptindex._encode`)."""
    parts = keptindex._decode(payload)
    assert parts is not None and keptindex._encode(parts) == payload  # read back as written

    def made(edit: Callable[[dict[str, Any]], None]) -> bytes:
        forged = copy.deepcopy(parts)
        edit(forged)
        return keptindex._encode(forged)

    def put(table: str, at: int, value: Any) -> Callable[[dict[str, Any]], None]:
        return lambda p: p[table].__setitem__(at, value)

    n, s = len(parts["names"]), len(parts["strings"])
    prelude, _, body = payload.partition(b"\n")
    header = json.loads(prelude)
    first_reader = parts["naming"][0]
    return [
        ("not json", b"not json\n" + body),
        ("no prelude", body),
        ("another format", json.dumps({**header, "format": 1}).encode() + b"\n" + body),
        ("a table's length not its bytes'", json.dumps({**header, "sizes": [*header["sizes"][:-1], 0]}).encode() + b"\n" + body),
        ("a length negative", json.dumps({**header, "sizes": [-1, *header["sizes"][1:]]}).encode() + b"\n" + body),
        ("a bool for a length", json.dumps({**header, "strings": True}).encode() + b"\n" + body),
        ("the strings' length past them", json.dumps({**header, "strings": header["strings"] + 4}).encode() + b"\n" + body),
        ("the integers cut short", payload[:-2]),
        ("the strings not JSON", prelude + b"\n{" + body[1:]),
        ("a string not a string", made(lambda p: p["strings"].__setitem__(0, 7))),
        ("a content key not a string", made(lambda p: p["contents"].__setitem__(0, None))),
        ("a place past the objects", made(lambda p: p["out"].__setitem__(0, n))),
        ("a negative place", made(put("naming", 0, -1))),
        ("a reader past the objects", made(put("naming", 0, first_reader + n))),
        ("a kind out of the table", made(put("kinds", 0, len(parts["table"]) // 2))),
        ("a name past the strings", made(put("names", 0, s))),
        ("a name None", made(put("names", 0, -1))),
        ("a namespace before None", made(put("namespaces", 0, -2))),
        ("an offset past its list", made(lambda p: p["out_at"].__setitem__(-1, len(p["out"]) + 1))),
        ("offsets descending", made(lambda p: p["naming_at"].__setitem__(1, len(p["naming"])))),
        ("an object missing", made(lambda p: [p[t].pop() for t in ("names", "namespaces", "kinds")])),
        ("a selector of three", made(lambda p: p["selecting"].extend([0, -1, 0]))),
        # Every object's references forged: only a changed file's are read, and checked then.
        ("a flag of two", made(lambda p: p["refs"].__setitem__(slice(2, None, 4), [2] * (len(p["refs"]) // 4)))),
        ("a reference's name None", made(lambda p: p["refs"].__setitem__(slice(1, None, 4), [-1] * (len(p["refs"]) // 4)))),
        ("other files", made(lambda p: p.update(shape="0" * 40))),
        ("a file's content key missing", made(lambda p: p["contents"].pop())),
        # Readers that do not hold what the kept references read: every node's readers emptied.
        ("readers emptied", made(lambda p: p.update(naming=[], naming_at=[0] * len(p["naming_at"])))),
    ]


def test_an_index_that_is_not_what_policylint_writes_is_a_miss(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, decided: list[bool]
) -> None:
    """Damaged (its checksum), forged (its parts' shapes, types, places, a file's references) or
    of other files: the search runs as before, its part the one found from nothing, and the index
    is written again, which the next search takes."""
    monkeypatch.setattr(summaries, "_recall_part", lambda *args: None)  # every search searched
    files = _files()
    cache = ParseCache(tmp_path / "cache")
    index = _index(files)
    summaries.scope(cache, index, {"f-001.yaml"}, (), {})
    name = keptindex.entry_name(cache, ("default", False, {}))
    payload = cache.payload(name)
    assert payload is not None
    rng = random.Random(1)
    changed = _retarget(files, rng)  # a file whose references differ from the kept ones
    index = _index(files)
    expected = components.scope(list(index.objects), {changed}, hosts={})
    for why, forged in _forged(bytes(payload)):
        cache.put(name, forged)
        del decided[:]
        assert _same(summaries.scope(cache, index, {changed}, (), {}), expected), why
        assert decided == [False], why
        # Written again for these files: the next search (another origin) takes it.
        other = next(f for f in files if f != changed)
        assert _same(summaries.scope(cache, index, {other}, (), {}), components.scope(list(index.objects), {other}, hosts={}))
        assert decided == [False, True], why
    # Damaged: a byte of the entry's file changed, which its checksum tells.
    path = tmp_path / "cache" / "parse" / name
    damaged = bytearray(path.read_bytes())
    damaged[-2] ^= 1
    path.write_bytes(bytes(damaged))
    del decided[:]
    other = sorted(files)[7]
    assert _same(summaries.scope(cache, index, {other}, (), {}), components.scope(list(index.objects), {other}, hosts={}))
    assert decided == [False]


def test_a_file_added_is_no_patch(tmp_path: Path, decided: list[bool]) -> None:
    """Stale: the index kept for other files (one added since) is not patched; the search runs
    as before and keeps it for these."""
    files = _files()
    cache = ParseCache(tmp_path / "cache")
    summaries.scope(cache, _index(files), {"f-001.yaml"}, (), {})
    files["g-extra.yaml"] = [{"apiVersion": "v1", "kind": "Service", "metadata": {"name": "extra", "namespace": "tenant-00001"}}]
    index = _index(files)
    del decided[:]
    assert _same(
        summaries.scope(cache, index, {"g-extra.yaml"}, (), {}), components.scope(list(index.objects), {"g-extra.yaml"}, hosts={})
    )
    assert decided == [False]
    del decided[:]
    summaries.scope(cache, index, {"f-003.yaml"}, (), {})
    assert decided == [True]


def test_keys_removed_are_searched_as_the_search_from_nothing_does(tmp_path: Path, decided: list[bool]) -> None:
    """A change that removed objects (their keys given) with the kept index: the objects naming
    them are members, as from nothing."""
    files = _files()
    cache = ParseCache(tmp_path / "cache")
    index = _index(files)
    summaries.scope(cache, index, {"f-001.yaml"}, (), {})
    gone = [ObjectKey("", "Service", "tenant-00002", "no-such-service")]
    service = next(o for o in index.objects if o.kind == "Service" and o.namespace == "tenant-00003")
    gone.append(service.key)
    del decided[:]
    found = summaries.scope(cache, index, {"f-009.yaml"}, gone, {})
    assert decided == [True]
    assert _same(found, components.scope(list(index.objects), {"f-009.yaml"}, gone, hosts={}))


def _class_file(files: Files) -> tuple[str, dict[str, Any]]:
    return next((name, doc) for name, docs in files.items() for doc in docs if doc["kind"] == "GatewayClass")


def test_a_class_the_gateways_name_changed_but_its_references_is_patched(tmp_path: Path, decided: list[bool]) -> None:
    """A GatewayClass the Gateways name, its file changed (its description: a comment is the same
    to the index) and still referencing nothing: `classes_apart` holds as it did, so the kept index
    is patched (the tree before searched from nothing). Given a reference (its parameters), it is
    no patch: that class joins its Gateways."""
    files = _files()
    cache = ParseCache(tmp_path / "cache")
    summaries.scope(cache, _index(files), {"f-001.yaml"}, (), {})
    changed, gateway_class = _class_file(files)
    gateway_class["spec"]["description"] = "edited"
    index = _index(files)
    del decided[:]
    other = "f-009.yaml"
    assert _same(summaries.scope(cache, index, {other}, (), {}), components.scope(list(index.objects), {other}, hosts={}))
    assert decided == [True]
    gateway_class["spec"]["parametersRef"] = {"group": "gateway.envoyproxy.io", "kind": "EnvoyProxy", "name": "proxy"}
    index = _index(files)
    del decided[:]
    other = "f-011.yaml"
    assert _same(summaries.scope(cache, index, {other}, (), {}), components.scope(list(index.objects), {other}, hosts={}))
    assert decided == [False]
    assert changed not in (other, "f-009.yaml")


def test_a_base_side_search_leaves_the_index_where_none_is_kept(tmp_path: Path, decided: list[bool]) -> None:
    """A change's base side, searching with the sets its other side brought up to date (the run
    that fills the cache, whose staged side analysed everything), keeps its directed index when no
    index is kept: the next commit's first search patches it (the tree before searched from
    nothing). Where one is kept, the base side leaves it as it is."""
    from policylint.semantics.partgraph import PartGraph

    files = _files()
    cache = ParseCache(tmp_path / "cache")
    name = keptindex.entry_name(cache, ("default", False, {}))
    base = _index(files)
    graph = PartGraph()
    graph.update(base.objects, {})  # the staged side's sets, brought to the base's objects
    summaries.scope(cache, base, {"f-001.yaml"}, (), {}, graph)
    assert decided == []  # no kept index read: the sets are in memory
    kept = cache.payload(name)
    assert kept is not None
    rng = random.Random(4)
    _value(files, rng)
    changed = _retarget(files, rng)
    index = _index(files)
    found = summaries.scope(cache, index, {changed}, (), {})
    assert decided == [True]
    assert _same(found, components.scope(list(index.objects), {changed}, hosts={}))
    # Kept already: a base side's search leaves the entry as it is.
    written = bytes(cache.payload(name) or b"")
    graph = PartGraph()
    graph.update(base.objects, {})
    again = ParseCache(tmp_path / "cache")
    summaries.scope(again, base, {"f-002.yaml"}, (), {}, graph)
    assert not again.wrote(name) and bytes(again.payload(name) or b"") == written
