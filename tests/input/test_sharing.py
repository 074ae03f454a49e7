"""Maps and lists of the same content are one object for the run (policylint.input.sharing).

Whether a file was parsed in this process, by a `--jobs` worker or read from the parse cache,
a subtree met before is the object met before; values that compare equal in Python but are
different YAML or JSON values (`1`, `1.0`, `true`; `0.0` and `-0.0`; keys in another order)
are never merged into one.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from policylint.input import parallel
from policylint.input.cache import ParseCache, ThriftyDecoder, dumps, loads, pack
from policylint.input.keptfiles import KeptFiles
from policylint.input.load import FileResult
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
