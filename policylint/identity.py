"""Collections keyed by object identity, for the keys that are not hashable or compare by value
(a CRD schema's dicts, a finding, a fold's result) where the object itself is meant.

They hold each key for as long as its entry lives, so that the id of an object is never reused by
a new one while a table still answers for it: the bug a raw `id(...)` dictionary key risks once
its object is gone. Keys that hash by identity already (`K8sObject`, `Facet`, `Listener`, `Grant`:
`@frozen(eq=False)`) key an ordinary dict or set themselves. `tests/hygiene/test_code_hygiene.py` keeps
`id()` keys out of every other module.

`content_key` keys the other way: by content, for what is worked out again when the same data is
read again as other objects (a `--crd` file every run reads afresh).
"""

from __future__ import annotations

import hashlib
import marshal
from collections.abc import Callable, Iterable, Iterator, MutableMapping, MutableSet
from typing import Any, Generic, TypeVar, overload

K = TypeVar("K")
V = TypeVar("V")
T = TypeVar("T")


class IdentityMap(MutableMapping[K, V], Generic[K, V]):
    """A mapping whose keys are objects compared by identity (`is`), in insertion order."""

    __slots__ = ("_items",)

    def __init__(self) -> None:
        self._items: dict[int, tuple[K, V]] = {}

    def __getitem__(self, key: K) -> V:
        return self._items[id(key)][1]

    def __setitem__(self, key: K, value: V) -> None:
        self._items[id(key)] = (key, value)

    def __delitem__(self, key: K) -> None:
        del self._items[id(key)]

    def __contains__(self, key: object) -> bool:
        return id(key) in self._items

    def __iter__(self) -> Iterator[K]:
        return (key for key, _ in self._items.values())

    def __len__(self) -> int:
        return len(self._items)

    def clear(self) -> None:
        self._items.clear()  # MutableMapping's pops one entry at a time

    @overload
    def get(self, key: K, /) -> V | None: ...
    @overload
    def get(self, key: K, default: V | T, /) -> V | T: ...
    def get(self, key: K, default: object = None, /) -> object:
        # Faster than Mapping.get's try/except on the hot paths that memoise schema nodes.
        got = self._items.get(id(key))
        return default if got is None else got[1]

    def __repr__(self) -> str:
        return f"IdentityMap({len(self._items)} entries)"


class Numbering(Generic[T]):
    """A small number per object, by identity, for the composite keys of memo tables
    (`(node number, a value's shape)`): the numbering holds each object, so that a number is
    never another object's."""

    __slots__ = ("_numbers",)

    def __init__(self) -> None:
        self._numbers: dict[int, tuple[T, int]] = {}

    def __call__(self, item: T) -> int:
        got = self._numbers.get(id(item))
        if got is None:
            got = self._numbers[id(item)] = (item, len(self._numbers))
        return got[1]

    def __len__(self) -> int:
        return len(self._numbers)


class IdentitySet(MutableSet[T], Generic[T]):
    """A set of objects compared by identity (`is`), in insertion order."""

    __slots__ = ("_items",)

    def __init__(self, items: Iterable[T] = ()) -> None:
        self._items: dict[int, T] = {id(item): item for item in items}

    def __contains__(self, item: object) -> bool:
        return id(item) in self._items

    def __iter__(self) -> Iterator[T]:
        return iter(self._items.values())

    def __len__(self) -> int:
        return len(self._items)

    def add(self, item: T) -> None:
        self._items[id(item)] = item

    def discard(self, item: T) -> None:
        self._items.pop(id(item), None)

    def __repr__(self) -> str:
        return f"IdentitySet({len(self._items)} items)"


def content_key(value: object) -> bytes | None:
    """A digest of a value's content (maps, lists, strings, numbers, booleans, None), types
    included; None when it holds a value `marshal` cannot write (a YAML timestamp, a map of
    another class) or nests too deep.

    marshal's version 2 writes no back-references, so equal content gives equal bytes whatever
    the objects' sharing; it writes each value's type, so `1` and `True`, or a key `1` and a key
    `"1"`, which compare equal in Python and which a walk may tell apart, give different
    bytes. Different bytes for equal content (a string interned in one and not the other) only
    miss; equal bytes read back as one content, so they never stand for two."""
    content: Any = value  # a map of another class is refused by marshal, not by the type
    try:
        written = marshal.dumps(content, 2)
    except ValueError:
        return None
    return hashlib.blake2b(written, digest_size=16).digest()


def kept_by_content(table: dict[bytes, V], value: T, compute: Callable[[T], V], limit: int = 1_000) -> V:
    """`compute(value)`, kept in `table` by the value's content (`content_key`): worked out once
    per content however many objects hold it, and every time for a value marshal cannot write.
    The table is emptied once it holds `limit` answers, so a long-lived process stays bounded."""
    key = content_key(value)
    if key is None:
        return compute(value)
    got = table.get(key)
    if got is None:
        if len(table) >= limit:
            table.clear()
        got = table[key] = compute(value)
    return got
