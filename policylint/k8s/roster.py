"""Every object of a run, file by file, where the objects of some files are built only when asked for.

A scoped run (the pre-commit hook, `--staged`, `--diff`, an editor's edit) analyses the part of
the repository its files reach (policylint.semantics.components): on a large repository most
objects lie outside it, and what the run needs of them is answered per file, from what an earlier
run kept of the file (policylint.incremental.shells): how many objects it holds, of which kinds,
under which keys. Building an object for each of them was the largest per-run cost the files
outside the part still made. A `Roster` holds the objects of the files loaded (built) and, for
each file read from its shell, a `Deferred` that answers those questions from the shell's rows
and builds an object only when something reads it (the part's members and context, a lookup by
key). Each object is built once, so every reader holds the same instance.

The index (policylint.k8s.index) answers its lookups from the roster while it holds unbuilt
objects; anything that reads every object (a reporter listing each, `--jobs` shares) builds the
rest then. The answers are those of the objects built: tests/incremental/test_outside.py holds
each to the objects', row by row.
"""

from __future__ import annotations

from abc import abstractmethod
from bisect import bisect_right
from collections.abc import Iterable, Iterator, Mapping, Sequence
from collections.abc import Set as AbstractSet
from itertools import accumulate
from typing import Any, NamedTuple, Protocol, overload

from policylint.k8s.objects import K8sObject, ObjectKey


class Outline(NamedTuple):
    """What the part search reads of each object of a file (policylint.semantics.partgraph), in
    the file's order, told without building the objects."""

    names: list[str]
    namespaces: list[str | None]
    kinds: list[tuple[str, str]]  # (group, kind)
    references: list[list[Any]]  # `namerefs.Reference`s, a later stage's type
    classes: list[str | None]  # the class a Gateway names (`namerefs.gateway_class`)


class Deferred(Sequence[K8sObject]):
    """The objects of one file, each built on first read (policylint.incremental.shells `Slots`),
    and what is known of them without building any."""

    file: str

    @abstractmethod
    def key(self, i: int) -> ObjectKey:
        """The key of the `i`-th object, without building it."""

    @abstractmethod
    def kinds(self) -> Mapping[tuple[str, str], int]:
        """How many objects of each (group, kind) the file holds."""

    @abstractmethod
    def scopes(self) -> Mapping[tuple[str, str], bool]:
        """Whether each (group, kind) of the file is cluster-scoped, as the run's kinds said when
        its keys were made (what the keys depend on besides the file's bytes)."""

    @abstractmethod
    def places(self) -> Iterable[tuple[tuple[str | None, str], int]]:
        """Each object's namespace and name, and its position."""

    @abstractmethod
    def outline(self) -> Outline:
        """What the part search reads of the objects, none built but those whose references were
        not kept for the namespace they have in this run."""

    @abstractmethod
    def place(self, i: int) -> tuple[str, int, int, str]:
        """The `i`-th object's `sort_key()` (where the index puts it among objects of its key),
        without building it."""

    @abstractmethod
    def outside(self, keys: AbstractSet[ObjectKey]) -> bool:
        """Whether an object's key is not among `keys`."""

    @abstractmethod
    def built(self) -> list[tuple[int, K8sObject]]:
        """The objects built so far, with their positions."""

    def of_kind(self, group: str, kind: str) -> list[K8sObject]:
        """The objects of the kind, built, in order."""
        if (group, kind) not in self.kinds():
            return []
        return [o for o in self if o.key.group == group and o.key.kind == kind]


class Roster(Sequence[K8sObject]):
    """The objects of a run's files in input order: a built file's objects (a list), or a file's
    `Deferred` (the module docstring)."""

    def __init__(self, files: Sequence[tuple[str, Sequence[K8sObject]]]) -> None:
        self.files = list(files)
        self._starts = [0, *accumulate(len(objects) for _, objects in self.files)]
        self._position = {file: i for i, (file, _) in enumerate(self.files)}
        # (namespace, name) -> the file and place of each object bearing it (`with_key`).
        self._named: dict[tuple[str | None, str], list[tuple[int, int]]] | None = None

    def __len__(self) -> int:
        return self._starts[-1]

    @overload
    def __getitem__(self, i: int) -> K8sObject: ...
    @overload
    def __getitem__(self, i: slice) -> Sequence[K8sObject]: ...

    def __getitem__(self, i: int | slice) -> K8sObject | Sequence[K8sObject]:
        if isinstance(i, slice):
            return list(self)[i]
        if i < 0:
            i += len(self)
        if not 0 <= i < len(self):
            raise IndexError(i)
        f = bisect_right(self._starts, i) - 1
        return self.files[f][1][i - self._starts[f]]

    def __iter__(self) -> Iterator[K8sObject]:
        for _, objects in self.files:
            yield from objects

    def deferred(self) -> bool:
        """Whether some file's objects are built only when read."""
        return any(isinstance(objects, Deferred) for _, objects in self.files)

    def starts(self) -> list[int]:
        """Where each file's objects start in the roster's order."""
        return self._starts

    def locate(self) -> dict[K8sObject, tuple[int, int]]:
        """Each object built so far, by identity: its file's number and its place in the file."""
        out: dict[K8sObject, tuple[int, int]] = {}
        for f, (_, objects) in enumerate(self.files):
            built = objects.built() if isinstance(objects, Deferred) else enumerate(objects)
            out.update((obj, (f, i)) for i, obj in built)
        return out

    def keys_of(self, file: int) -> Iterator[ObjectKey]:
        """The keys of the `file`-th file's objects, none built for it."""
        objects = self.files[file][1]
        if not isinstance(objects, Deferred):
            return (o.key for o in objects)
        return (objects.key(i) for i in range(len(objects)))

    def files_outside(self, keys: AbstractSet[ObjectKey], holding: AbstractSet[str] | None = None) -> set[str]:
        """The files holding an object whose key is not among `keys`. `holding`: the files that
        hold an object of those keys, where the caller knows them (a scoped run's members are
        built, each with its file): a file holding objects but none of those keys is outside
        untold, where making each file's first key to look it up cost 2.5 µs a file. A file left
        out of `holding` is taken as outside: never is a file said to hold only those keys that
        does not."""
        out: set[str] = set()
        for file, objects in self.files:
            if holding is not None and file not in holding:
                if len(objects):
                    out.add(file)
            elif objects.outside(keys) if isinstance(objects, Deferred) else any(o.key not in keys for o in objects):
                out.add(file)
        return out

    def kinds(self) -> dict[tuple[str, str], int]:
        """How many objects of each (group, kind) the run holds."""
        out: dict[tuple[str, str], int] = {}
        for _, objects in self.files:
            counts = _kinds(objects)
            for gk, n in counts.items():
                out[gk] = out.get(gk, 0) + n
        return out

    def of_kind(self, group: str, kind: str) -> list[K8sObject]:
        """The objects of the kind, built, in input order."""
        out: list[K8sObject] = []
        for _, objects in self.files:
            if isinstance(objects, Deferred):
                out.extend(objects.of_kind(group, kind))
            else:
                out.extend(o for o in objects if o.key.group == group and o.key.kind == kind)
        return out

    def with_key(self, key: ObjectKey) -> list[K8sObject]:
        """The objects with this key, built, in input order: asked by namespace and name, of
        every object's gathered once."""
        if self._named is None:
            named: dict[tuple[str | None, str], list[tuple[int, int]]] = {}
            for f, (_, objects) in enumerate(self.files):
                if isinstance(objects, Deferred):
                    places: Iterable[tuple[tuple[str | None, str], int]] = objects.places()
                else:
                    places = (((o.namespace, o.name), i) for i, o in enumerate(objects))
                for place, i in places:
                    named.setdefault(place, []).append((f, i))
            self._named = named
        found = (self.files[f][1][i] for f, i in self._named.get((key.namespace, key.name), ()))
        return [o for o in found if o.key == key]

    def present(self, keys: Iterable[ObjectKey], first: Iterable[str] = ()) -> set[ObjectKey]:
        """Those of `keys` some object bears: looked for in the files `first` (a change's files,
        which hold most of the keys it asks about), then by namespace and name."""
        wanted = set(keys)
        found: set[ObjectKey] = set()
        for file in first:
            f = self._position.get(file)
            if f is not None:
                found.update(k for k in self.keys_of(f) if k in wanted)
        return found | {key for key in wanted - found if self.with_key(key)}

    def file_rows(self, content_keys: Mapping[str, str], is_cluster_scoped: ScopeOf) -> list[list[object]] | None:
        """What each file's objects' keys are a function of, file by file in input order: its name,
        its content key, how many objects it holds and whether each of its kinds is cluster-scoped
        (the run's default namespace decides the rest); None when a file has no content key
        (standard input)."""
        rows: list[list[object]] = []
        for file, objects in self.files:
            content = content_keys.get(file)
            if content is None:
                return None
            if isinstance(objects, Deferred):
                scoped = dict(objects.scopes())
            else:
                scoped = {gk: is_cluster_scoped(*gk) for gk in dict.fromkeys((o.key.group, o.key.kind) for o in objects)}
            rows.append([file, content, len(objects), sorted([g, k, s] for (g, k), s in scoped.items())])
        return rows


class ScopeOf(Protocol):
    def __call__(self, group: str, kind: str) -> bool: ...


def _kinds(objects: Sequence[K8sObject]) -> Mapping[tuple[str, str], int]:
    if isinstance(objects, Deferred):
        return objects.kinds()
    out: dict[tuple[str, str], int] = {}
    for o in objects:
        gk = (o.key.group, o.key.kind)
        out[gk] = out.get(gk, 0) + 1
    return out


__all__ = ["Deferred", "Outline", "Roster"]
