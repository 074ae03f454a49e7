"""The part of a scoped run kept by what finding it reads (policylint.incremental.summaries): read
back only when it is exactly what this run would work out, and `components.scope`'s either way.
What is kept of each file (its shell) is tests/incremental/test_incremental_shells.py's; the runs through
the command, with a persistent cache against none, are the differential tests of
tests/incremental/test_incremental.py."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import pytest

from benchmarks.generate import objects as tenants
from policylint.incremental import summaries
from policylint.input.cache import ParseCache
from policylint.input.load import Document, DocumentRef
from policylint.k8s.index import ProjectIndex
from policylint.k8s.objects import K8sObject, KindRegistry, build_objects
from policylint.semantics import components, partgraph
from policylint.semantics.components import Scoped


def _index(objects: list[K8sObject], content: dict[str, str]) -> ProjectIndex:
    return ProjectIndex(objects, KindRegistry.builtin(), content_keys=content)


def _objects(n: int = 600, namespace: str | None = None) -> tuple[list[K8sObject], dict[str, str]]:
    """The benchmark generator's objects, five documents a file, with a content key per file;
    `namespace`: the first ten files' documents name none, and are read in this one."""
    docs = list(tenants(n, 3, error_rate=0.3, isolated=False))
    if namespace is not None:
        for doc in docs[:50]:
            doc["metadata"].pop("namespace", None)
    documents = [Document(DocumentRef(f"f-{i // 5:03d}.yaml", 0, 0, i % 5, 1, 1), doc) for i, doc in enumerate(docs)]
    objects = build_objects(documents, KindRegistry.builtin(), namespace or "default").objects
    files = sorted({o.doc.file for o in objects})
    content = {f: hashlib.blake2b(f.encode(), digest_size=20).hexdigest() for f in files}
    return objects, content


def _walks(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The files whose objects the part search walks (`namerefs.references`, read by
    `partgraph`), one entry per object."""
    walked: list[str] = []
    real = partgraph.references

    def counted(obj: K8sObject) -> Any:
        walked.append(obj.doc.file)
        return real(obj)

    monkeypatch.setattr(partgraph, "references", counted)
    return walked


def _same(a: Scoped | None, b: Scoped | None) -> bool:
    if a is None or b is None:
        return a is b
    # The part read back is in input order, the one found in the index's: the index sorts it.
    return sorted(map(id, a.objects)) == sorted(map(id, b.objects)) and a.members == b.members


def test_the_part_is_read_back(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    objects, content = _objects()
    objects = list(_index(objects, content).objects)  # the order the pipeline searches in
    origin = {"f-004.yaml"}
    expected = components.scope(objects, origin, hosts={})
    assert expected is not None and len(expected.members) < len(objects)  # a real part, not everything
    other = {"f-030.yaml"}
    expected_other = components.scope(objects, other, hosts={})
    walked = _walks(monkeypatch)
    cache = ParseCache(tmp_path / "cache")
    assert _same(summaries.scope(cache, _index(objects, content), origin, (), {}), expected)
    assert len(walked) == len(objects)  # nothing kept yet: every object walked
    del walked[:]
    assert _same(summaries.scope(cache, _index(objects, content), origin, (), {}), expected)
    assert walked == []  # the part read back
    # Another origin: another part, worked out again, from the directed index the first search
    # kept (policylint.incremental.keptindex): only the analysed objects' files are walked, for
    # their references (the tree before walked every object).
    assert _same(summaries.scope(cache, _index(objects, content), other, (), {}), expected_other)
    assert expected_other is not None
    assert walked and set(walked) <= {o.doc.file for o in expected_other.objects}
    del walked[:]
    content["f-010.yaml"] = "0" * 40  # a file's bytes changed: not the part kept
    assert _same(summaries.scope(cache, _index(objects, content), origin, (), {}), expected)
    # The index patched for that file: its objects walked, and the analysed objects' files.
    assert "f-010.yaml" in walked and set(walked) <= {o.doc.file for o in expected.objects} | {"f-010.yaml"}
    assert len(walked) < len(objects)


@pytest.mark.parametrize(
    "payload",
    [
        b"not json",
        b'{"format": 1, "objects": [0, 1], "members": [0]}',  # another format
        b'{"format": 2, "objects": [0, 1], "members": [2]}',  # a member not analysed
        b'{"format": 2, "objects": [1, 0], "members": []}',  # out of order
        b'{"format": 2, "objects": [0, 100000], "members": []}',  # no such object
        b'{"format": 2, "objects": [0, true], "members": []}',
        b'{"format": 2, "whole": 1}',
    ],
)
def test_a_part_that_is_not_what_policylint_writes_is_a_miss(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, payload: bytes
) -> None:
    objects, content = _objects()
    objects = list(_index(objects, content).objects)
    cache = ParseCache(tmp_path / "cache")
    written: list[str] = []
    real = ParseCache.put

    def put(self: ParseCache, key: str, data: bytes) -> None:
        if data.startswith((b'{"format":2,"objects"', b'{"format":2,"whole"')):  # the part's entry, not the directed index's
            written.append(key)
        real(self, key, data)

    monkeypatch.setattr(ParseCache, "put", put)
    summaries.scope(cache, _index(objects, content), {"f-004.yaml"}, (), {})
    (part,) = written
    cache.put(part, payload)
    assert _same(
        summaries.scope(cache, _index(objects, content), {"f-004.yaml"}, (), {}),
        components.scope(objects, {"f-004.yaml"}, hosts={}),
    )
