"""The project index of a long-lived process's run, its order and lookups worked out from the
index before (policylint.k8s.ordering), is the index built from nothing over the same objects:
the same instances in the same order, the lookups by key and by kind with the same entries in
the same order (which `duplicate_groups` and `kinds_in_input` follow).

Differential: random edits as an editor makes them (one file's objects replaced by new
instances, some renamed, moved to another namespace or kind, deleted, added, defined twice, or
written at the same place as another), each index compared with one sorted from nothing."""

from __future__ import annotations

import random

import pytest

from policylint.input.document import DocumentRef
from policylint.k8s import ordering
from policylint.k8s.index import ProjectIndex
from policylint.k8s.objects import K8sObject, KindRegistry, ObjectKey

# Enough files that one file's objects are few of all: fewer are sorted again from nothing.
FILES = tuple(f"{n:02}.yaml" for n in range(16))
KINDS = (("", "Service"), ("gateway.networking.k8s.io", "HTTPRoute"), ("gateway.networking.k8s.io", "Gateway"), ("x.io", "Z"))


def _object(rng: random.Random, file: str, line: int) -> K8sObject:
    group, kind = rng.choice(KINDS)
    namespace = rng.choice([None, "", "one", "two"])
    key = ObjectKey(group, kind, namespace, f"n{rng.randrange(6)}")
    return K8sObject(key=key, api_version="v1", data={}, doc=DocumentRef(file, 0, 0, 0, line, 1))


def _file(rng: random.Random, file: str) -> list[K8sObject]:
    # A line drawn twice is two objects at one place: a tie only the order given decides.
    return [_object(rng, file, rng.randrange(10)) for _ in range(rng.randrange(12))]


def _same(warm: ProjectIndex, cold: ProjectIndex) -> None:
    assert len(warm.objects) == len(cold.objects)
    assert all(a is b for a, b in zip(warm.objects, cold.objects, strict=True))
    for mine, theirs in ((warm._by_key, cold._by_key), (warm._by_gk, cold._by_gk)):
        assert list(mine) == list(theirs)  # type: ignore[call-overload]
        for key, listed in theirs.items():  # type: ignore[attr-defined]
            assert len(mine[key]) == len(listed) and all(a is b for a, b in zip(mine[key], listed, strict=True))
    assert [[id(o) for o in g] for g in warm.duplicate_groups()] == [[id(o) for o in g] for g in cold.duplicate_groups()]
    assert warm.kinds_in_input() == cold.kinds_in_input()


def _differential(seed: int, steps: int) -> int:
    """Indexes after random edits, each compared with one from nothing; how many were worked out
    from the index before."""
    rng = random.Random(seed)
    kinds = KindRegistry.builtin()
    files = {name: _file(rng, name) for name in FILES}
    last = ProjectIndex(objects=[o for f in FILES for o in files[f]], kinds=kinds)
    taken = 0
    for _ in range(steps):
        edited = rng.choice(FILES)
        if rng.random() < 0.5:
            # Some objects at their places again: new instances (a value changed), of another key,
            # or the same instances (as the objects of any file the edit did not touch).
            kept = files[edited]
            files[edited] = [_object(rng, edited, o.doc.line) if rng.random() < 0.3 else o for o in kept]
            files[edited] = [
                K8sObject(key=o.key, api_version="v1", data={}, doc=o.doc) if o in kept and rng.random() < 0.5 else o
                for o in files[edited]
            ]
        else:
            files[edited] = _file(rng, edited)
        objects = [o for f in FILES for o in files[f]]
        rng.shuffle(objects)  # the order given decides only between objects at one place
        found = ordering.rearranged((last.objects, last._by_key, last._by_gk), objects)
        taken += found is not None
        warm = ProjectIndex(objects=objects, kinds=kinds, previous=last)
        _same(warm, ProjectIndex(objects=objects, kinds=kinds))
        assert warm.previous is None  # let go: no chain of indexes held
        last = warm
    return taken


def test_an_index_ordered_from_the_one_before_is_the_index_from_nothing_fast() -> None:
    assert _differential(seed=0, steps=150) > 30


@pytest.mark.slow
@pytest.mark.parametrize("seed", [1, 2, 3, 4])
def test_an_index_ordered_from_the_one_before_is_the_index_from_nothing(seed: int) -> None:
    assert _differential(seed=seed, steps=2000) > 400
