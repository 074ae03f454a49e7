"""Collections keyed by identity (policylint/identity.py)."""

from __future__ import annotations

import gc

from policylint.identity import IdentityMap, IdentitySet, Numbering


def test_equal_keys_are_apart_and_unhashable_ones_are_taken() -> None:
    a, b = {"x": 1}, {"x": 1}
    table: IdentityMap[dict[str, int], str] = IdentityMap()
    table[a] = "a"
    table[b] = "b"
    assert (table[a], table[b], len(table)) == ("a", "b", 2)
    assert table.get({"x": 1}) is None and table.get({"x": 1}, "none") == "none"
    assert {"x": 1} not in table and a in table
    assert [k is a for k in table] == [True, False]
    del table[a]
    assert list(table.items()) == [(b, "b")]
    table.clear()
    assert len(table) == 0


def test_a_key_is_held_so_its_id_is_never_another_objects() -> None:
    """With `dict[id(obj)]`, a new object can take a dead one's id and read its entry."""
    table: IdentityMap[list[int], str] = IdentityMap()
    table[[1, 2]] = "first"  # the only reference to the list is the table's
    gc.collect()
    fresh = [[3] for _ in range(1000)]  # would reuse the first list's memory if it were freed
    assert all(x not in table for x in fresh)
    assert list(table) == [[1, 2]]


def test_identity_set_and_numbering() -> None:
    a, b = [1], [1]
    seen = IdentitySet([a])
    assert a in seen and b not in seen
    seen.add(b)
    seen.add(b)
    seen.discard(a)
    assert len(seen) == 1 and next(iter(seen)) is b
    number: Numbering[list[int]] = Numbering()
    assert (number(a), number(b), number(a), len(number)) == (0, 1, 0, 2)
