"""Maps and lists of the same content are one object for the run (policylint.input.sharing).

Whether a file was parsed in this process, by a `--jobs` worker or read from the parse cache,
a subtree met before is the object met before; values that compare equal in Python but are
different YAML or JSON values (`1`, `1.0`, `true`; `0.0` and `-0.0`; keys in another order)
are never merged into one.
"""

from __future__ import annotations

import marshal
from pathlib import Path
from typing import Any

import pytest

from policylint.input import parallel, workerside
from policylint.input.cache import ParseCache, ThriftyDecoder, dumps, loads, pack
from policylint.input.keptfiles import KeptFiles
from policylint.input.load import FileResult, parse_text
from policylint.input.parallel import load_files
from policylint.input.sources import discover
from policylint.input.verdictstore import VerdictStore

ROUTE = """\
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata:
  name: route-{i}
  namespace: tenant-{i}
spec:
  parentRefs:
  - name: shared-gateway
    namespace: infra-ns
    sectionName: https
  rules:
  - backendRefs:
    - name: svc-{i}
      port: 8080
  - backendRefs:
    - name: common-backend
      port: 8080
"""


def _write_routes(directory: Path, files: int) -> None:
    for i in range(files):
        (directory / f"route-{i:02d}.yaml").write_text(ROUTE.format(i=i), encoding="utf-8")


def _ids(results: list[FileResult]) -> dict[str, set[int]]:
    """The ids of each subtree every route holds alike, and of the one it holds alone."""
    seen: dict[str, set[int]] = {"parentRefs": set(), "parentRef": set(), "common": set(), "own": set()}
    for result in results:
        spec = result.documents[0].data["spec"]
        seen["parentRefs"].add(id(spec["parentRefs"]))
        seen["parentRef"].add(id(spec["parentRefs"][0]))
        seen["common"].add(id(spec["rules"][1]))
        seen["own"].add(id(spec["rules"][0]))
    return seen


def _assert_shared(results: list[FileResult], files: int) -> None:
    seen = _ids(results)
    assert len(seen["parentRefs"]) == 1
    assert len(seen["parentRef"]) == 1
    assert len(seen["common"]) == 1
    assert len(seen["own"]) == files  # a different backend per route: nothing to share
    assert [r.documents[0].data["spec"]["rules"][0]["backendRefs"][0]["name"] for r in results] == [
        f"svc-{i}" for i in range(files)
    ]


def test_files_parsed_here_share_their_identical_subtrees(tmp_path: Path) -> None:
    _write_routes(tmp_path, 6)
    results = [r for _, r in load_files(discover([str(tmp_path)]))]
    _assert_shared(results, 6)


def test_files_read_from_the_cache_share_their_identical_subtrees(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    _write_routes(repo, 6)
    sources = discover([str(repo)])
    parsed = [r for _, r in load_files(sources, cache=ParseCache(tmp_path / "cache"))]
    cache = ParseCache(tmp_path / "cache")
    results = [r for _, r in load_files(sources, cache=cache)]
    assert cache.hits == 6
    assert results == parsed
    _assert_shared(results, 6)


def test_entries_read_one_by_one_are_decoded_plainly_until_their_budget_is_spent(tmp_path: Path) -> None:
    """A scoped run reads the entries of its part's files one by one (policylint.k8s.lazy): the
    first few MiB are decoded without the sharing hook, which costs three times the decoding; past
    them, a run reading most of a large repository shares again, and the data is the same."""
    _write_routes(tmp_path, 6)
    parsed = [r for _, r in load_files(discover([str(tmp_path)]))]
    texts = [str(dumps(pack(r)), "ascii") for r in parsed]
    strings: dict[Any, Any] = {}
    decoder = ThriftyDecoder(strings, plain_bytes=sum(map(len, texts[:3])))
    decoded = [loads(text.encode("ascii"), decoder) for text in texts]
    assert decoded == [loads(text.encode("ascii")) for text in texts]
    assert decoder.plain_left == 0
    # The first three decoded plainly: nothing went into the table, each its own parentRefs.
    first = [d[0][0][5] for d in decoded[:3]]
    assert len({id(doc["spec"]["parentRefs"]) for doc in first}) == 3
    # The other three through the sharing decoder: one parentRefs for them.
    rest = [d[0][0][5] for d in decoded[3:]]
    assert len({id(doc["spec"]["parentRefs"]) for doc in rest}) == 1
    assert strings


def test_files_parsed_by_workers_share_their_identical_subtrees(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(parallel, "PARALLEL_MIN_BYTES", 0)
    monkeypatch.setattr(parallel, "BATCH_BYTES", 1)  # a file per batch: every file is its own payload
    _write_routes(tmp_path, 8)
    sources = discover([str(tmp_path)])
    results = [r for _, r in load_files(sources, jobs=2)]
    assert results == [r for _, r in load_files(sources, jobs=1)]
    _assert_shared(results, 8)


VALUES = """\
- {a: 1}
- {a: true}
- {a: 1.0}
- {a: "1"}
- {a: 0.0}
- {a: -0.0}
- {a: "true"}
- {a: null}
- {a: [1]}
- {a: [true]}
- {x: 1, y: 2}
- {y: 2, x: 1}
- {a: 1}
- {a: -0.0}
"""


def _typed(value: Any) -> Any:
    """`value` with each scalar written with its type, -0.0 apart from 0.0."""
    if isinstance(value, dict):
        return ["{", [(k, _typed(v)) for k, v in value.items()]]
    if isinstance(value, list):
        return ["[", [_typed(v) for v in value]]
    if isinstance(value, float):
        return ["float", value.hex()]
    return [type(value).__name__, value]


@pytest.mark.parametrize("cached", [False, True], ids=["parsed", "cached"])
def test_values_equal_in_python_but_not_in_yaml_stay_apart(tmp_path: Path, cached: bool) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "values.yaml").write_text(VALUES, encoding="utf-8")
    (repo / "again.yaml").write_text(VALUES, encoding="utf-8")
    sources = discover([str(repo)])
    cache = ParseCache(tmp_path / "cache") if cached else None
    if cache is not None:
        list(load_files(sources, cache=ParseCache(tmp_path / "cache")))
    results = [r for _, r in load_files(sources, cache=cache)]
    first, second = (r.documents[0].data for r in results)
    expected = [
        ["{", [("a", ["int", 1])]],
        ["{", [("a", ["bool", True])]],
        ["{", [("a", ["float", "0x1.0000000000000p+0"])]],
        ["{", [("a", ["str", "1"])]],
        ["{", [("a", ["float", "0x0.0p+0"])]],
        ["{", [("a", ["float", "-0x0.0p+0"])]],
        ["{", [("a", ["str", "true"])]],
        ["{", [("a", ["NoneType", None])]],
        ["{", [("a", ["[", [["int", 1]]])]],
        ["{", [("a", ["[", [["bool", True]]])]],
        ["{", [("x", ["int", 1]), ("y", ["int", 2])]],
        ["{", [("y", ["int", 2]), ("x", ["int", 1])]],
        ["{", [("a", ["int", 1])]],
        ["{", [("a", ["float", "-0x0.0p+0"])]],
    ]
    assert [_typed(item) for item in first] == expected
    assert [_typed(item) for item in second] == expected
    # The repeats within the file and in the other file are the first item of their content.
    assert first[12] is first[0] and first[13] is first[5]
    assert [id(item) for item in second] == [id(item) for item in first]
    assert len({id(item) for item in first}) == 12


def test_admission_verdicts_of_the_same_value_are_one_object(tmp_path: Path) -> None:
    # Most kept verdicts are `[]`, the others a handful of distinct lists: at 20k objects the
    # entries read back held ~45 MiB as one list each.
    pruned = [[["spec", "rules", 0], "name", ["backendRefs", "matches"]]]
    keys = [("f" * 40 if i % 2 else "e" * 40, i.to_bytes(16, "big")) for i in range(4)]  # across files
    store = VerdictStore(KeptFiles(ParseCache(tmp_path)), b"stamp")
    for key in keys[:2]:
        store.add(key, [])
    for key in keys[2:]:
        store.add(key, [[list(part) if isinstance(part, list) else part for part in entry] for entry in pruned])
    assert store.get(keys[0]) is store.get(keys[1]) == []
    assert store.get(keys[2]) is store.get(keys[3]) == pruned
    store.save()
    store.files.save()
    read = VerdictStore(KeptFiles(ParseCache(tmp_path)), b"stamp")
    assert [read.get(key) for key in keys] == [[], [], pruned, pruned]
    assert read.get(keys[0]) is read.get(keys[1])
    assert read.get(keys[2]) is read.get(keys[3])


SERVICE = """\
kind: Service
metadata: {{name: s{i}, labels: {{app: web}}}}
spec:
  ports: [{{name: http, port: 80}}, {{name: https, port: 443}}]
"""


class _CountingTable(dict[Any, Any]):
    """The run's table of maps and lists, counting the lookups of maps and lists made in it."""

    lookups = 0

    def get(self, key: Any, default: Any = None) -> Any:
        if type(key) is tuple and key and key[0] in ("{", "["):
            self.lookups += 1
        return super().get(key, default)


def _as_worker(monkeypatch: pytest.MonkeyPatch, files: list[tuple[str, str]]) -> list[bytes]:
    """The payloads a pool's worker sends for `files`, in order (`_init_worker` numbers them)."""
    monkeypatch.setattr(workerside, "_WORKER_NUMBERING", workerside._Numbering())
    return [parallel._worker_parse(text.encode(), name, None, None) for name, text in files]


def test_a_worker_sends_each_map_and_list_once_and_this_process_shares_each_once(monkeypatch: pytest.MonkeyPatch) -> None:
    # Five Services that differ by name only: each holds 7 maps and lists, 35 in all. The labels,
    # each port, the ports and the spec are alike in all five (5); each metadata and each document
    # differ (2 a file): 15 of distinct content, each made the run's one in one lookup here, where
    # taking each where it is met took 35.
    files = [(f"s{i}.yaml", SERVICE.format(i=i)) for i in range(5)]
    payloads = _as_worker(monkeypatch, files)
    table = _CountingTable()
    received = parallel._Received(table)
    documents = [received.own(marshal.loads(payload))[0][0][5] for payload in payloads]
    assert table.lookups == 15
    assert documents == [parse_text(text, name).documents[0].data for name, text in files]
    assert len({id(d["spec"]) for d in documents}) == 1 and len({id(d["metadata"]["labels"]) for d in documents}) == 1
    assert len({id(d["metadata"]) for d in documents}) == 5
    # The same content parsed here afterwards is the same object: one table for the run.
    here = parse_text(SERVICE.format(i=9), "here.yaml", strings=table).documents[0].data
    assert here["spec"] is documents[0]["spec"]


def test_values_equal_in_python_but_not_in_yaml_stay_apart_when_a_worker_sends_them(monkeypatch: pytest.MonkeyPatch) -> None:
    payloads = _as_worker(monkeypatch, [("values.yaml", VALUES), ("again.yaml", VALUES)])
    received = parallel._Received({})
    first, second = (received.own(marshal.loads(payload))[0][0][5] for payload in payloads)
    plain = parse_text(VALUES, "plain.yaml").documents[0].data
    assert [_typed(item) for item in first] == [_typed(item) for item in second] == [_typed(item) for item in plain]
    assert first[12] is first[0] and first[13] is first[5]
    assert [id(item) for item in second] == [id(item) for item in first]
    assert len({id(item) for item in first}) == 12


def test_a_worker_result_after_one_lost_is_refused_never_read_with_numbers_unknown(monkeypatch: pytest.MonkeyPatch) -> None:
    files = [(f"s{i}.yaml", SERVICE.format(i=i)) for i in range(4)]
    payloads = _as_worker(monkeypatch, files)
    received = parallel._Received({})
    received.own(marshal.loads(payloads[0]))
    # The second is lost (its batch failed): the third names maps the second numbered, and so
    # does every later one; each is refused, and the caller parses its file.
    for payload in payloads[2:]:
        with pytest.raises(ValueError, match="numbers from"):
            received.own(marshal.loads(payload))
    # Read in order, the second and the others are taken.
    for (name, text), payload in list(zip(files, payloads))[1:]:
        assert received.own(marshal.loads(payload))[0][0][5] == parse_text(text, name).documents[0].data


def test_a_result_numbering_other_than_it_says_is_refused_and_its_numbers_taken_back(monkeypatch: pytest.MonkeyPatch) -> None:
    payloads = _as_worker(monkeypatch, [("a.yaml", SERVICE.format(i=0)), ("b.yaml", SERVICE.format(i=1))])
    received = parallel._Received({})
    (worker, base, count), documents, issues = marshal.loads(payloads[0])
    with pytest.raises(ValueError, match="numbered"):
        received.own(((worker, base, count + 1), documents, issues))
    assert received.numbered[worker] == []  # as if never read: the file is parsed again
    received.own(marshal.loads(payloads[0]))
    assert len(received.numbered[worker]) == count
    received.own(marshal.loads(payloads[1]))


def test_a_worker_failing_after_numbering_a_file_gives_its_numbers_to_the_next(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(workerside, "_WORKER_NUMBERING", workerside._Numbering())
    calls = iter([ValueError("too deep to send"), None])
    real = marshal.dumps

    def dumps_once_failing(value: Any, version: int) -> bytes:
        error = next(calls, None)
        if error is not None:
            raise error
        return real(value, version)

    monkeypatch.setattr(workerside.marshal, "dumps", dumps_once_failing)
    with pytest.raises(ValueError):
        parallel._worker_parse(SERVICE.format(i=0).encode(), "lost.yaml", None, None)
    payload = parallel._worker_parse(SERVICE.format(i=0).encode(), "sent.yaml", None, None)
    monkeypatch.setattr(workerside.marshal, "dumps", real)
    (_, base, count), _, _ = marshal.loads(payload)
    assert (base, count) == (0, 7)  # the lost file's numbers were taken back, not skipped
    assert parallel._Received({}).own(marshal.loads(payload))[0][0][5] == parse_text(SERVICE.format(i=0), "x").documents[0].data
