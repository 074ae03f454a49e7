"""Objects whose data is read only when something asks for it (a scoped run's files outside its part).

A run that reports on a few files (`--staged`, `--diff`, `--context`, the pre-commit hook, an
editor's edit) analyses only the part of the repository those files reach
(policylint.semantics.components), yet it indexes every object: the index's lookups, the
report's counts and the part search need each object's key, file and references, not its
fields. Decoding every file's parse-cache entry to get them was most of a warm hook run on a large
repository. A `LazyObject` is a `K8sObject` built from what an earlier run kept about its file
(policylint.incremental.shells): everything but `data`, which is decoded, for every object of
the file at once, the first time any of them is read. What it reads is what an eager run would
have built: the same parse-cache entry, or the same bytes parsed again when the entry is gone.
Nothing it can be asked gives another answer than a `K8sObject` would, so the findings do not
depend on which objects were read.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from policylint.input.positions import PathPart
from policylint.k8s.objects import K8sObject

# The slot `K8sObject` keeps its data in, written and read past `LazyObject.data`.
_DATA: Any = K8sObject.__dict__["data"]
# The value of the slot until the file is read.
_UNREAD: Mapping[str, Any] = {}


class FileData:
    """The documents of one file, read once for all its lazy objects: `read` gives the data of
    each document in order (the parse cache's entry, else the file's bytes parsed again). An
    object added after they were read takes its data from them at once: a file's objects are built
    one by one, when something asks for each (policylint.k8s.roster)."""

    __slots__ = ("_documents", "_objects", "_read")

    def __init__(self, read: Callable[[], Sequence[Any]]) -> None:
        self._read: Callable[[], Sequence[Any]] | None = read
        self._objects: list[tuple[LazyObject, int]] = []
        self._documents: Sequence[Any] | None = None

    def add(self, obj: LazyObject, document: int) -> None:
        if self._documents is not None:
            _fill(obj, self._documents, document)
        else:
            self._objects.append((obj, document))

    def fill(self) -> None:
        read, self._read = self._read, None
        if read is None:
            return
        documents = self._documents = read()
        for obj, number in self._objects:
            _fill(obj, documents, number)
        self._objects = []


def _fill(obj: LazyObject, documents: Sequence[Any], number: int) -> None:
    data = documents[number] if number < len(documents) else None
    for part in obj.prefix:
        data = _step(data, part)
    # The entry and the bytes are keyed by the same content the summary was made from, so this is
    # the object's mapping; anything else would be a cache written by another tool, read as an
    # object with no fields rather than as a failure.
    _DATA.__set__(obj, data if isinstance(data, dict) else {})


def _step(data: Any, part: PathPart) -> Any:
    if isinstance(part, int):
        return data[part] if isinstance(data, list) and 0 <= part < len(data) else None
    return data.get(part) if isinstance(data, dict) else None


class LazyObject(K8sObject):
    """A `K8sObject` whose `data` is read from its file on first use (see the module docstring).
    `kept_references` and `kept_class` are what the part search reads of it
    (policylint.semantics.components), `kept_well_formed` what the index's lookups do, kept with
    its file's shell (policylint.incremental.shells)."""

    __slots__ = ("_file", "kept_class", "kept_references", "kept_well_formed")
    _file: FileData
    # `namerefs.Reference`s (a later stage's type), and a Gateway's class name.
    kept_references: list[Any] | None
    kept_class: str | None
    # No field of the wrong type for its kind (policylint.k8s.fieldtypes): what the index's
    # `malformed` says of it, which the lookups of a part ask of every object.
    kept_well_formed: bool

    @property
    def data(self) -> Mapping[str, Any]:
        value: Mapping[str, Any] = _DATA.__get__(self, K8sObject)
        if value is _UNREAD:
            self._file.fill()
            value = _DATA.__get__(self, K8sObject)
        return value

    @data.setter
    def data(self, value: Mapping[str, Any]) -> None:
        _DATA.__set__(self, value)

    @property
    def unread(self) -> bool:
        """Whether `data` has not been read yet (what was kept of the object then stands for it)."""
        return _DATA.__get__(self, K8sObject) is _UNREAD

    def __reduce__(self) -> tuple[Any, ...]:
        # Sent to another process as the plain object it stands for, its data read.
        return (
            K8sObject,
            (
                self.key,
                self.api_version,
                self.data,
                self.doc,
                self.prefix,
                self.labels,
                self.annotations,
                self.creation_timestamp,
            ),
        )


def lazy_object(
    file: FileData,
    document: int,
    kept_references: list[Any] | None,
    kept_class: str | None,
    kept_well_formed: bool,
    *fields: Any,
) -> LazyObject:
    """A lazy object of `file`'s `document`-th document, with `fields` (every field of `K8sObject`
    but `data`, in order) and what the part search reads of it."""
    key, api_version, doc, prefix, labels, annotations, creation_timestamp = fields
    obj = _new(LazyObject)
    # Each slot set as the frozen `__init__` sets it, past the frozen `__setattr__`, without the
    # keyword call: a scoped run builds every object of the files outside its part this way.
    _set(obj, "key", key)
    _set(obj, "api_version", api_version)
    _DATA.__set__(obj, _UNREAD)
    _set(obj, "doc", doc)
    _set(obj, "prefix", prefix)
    _set(obj, "labels", labels)
    _set(obj, "annotations", annotations)
    _set(obj, "creation_timestamp", creation_timestamp)
    _set(obj, "_file", file)
    _set(obj, "kept_references", kept_references)
    _set(obj, "kept_class", kept_class)
    _set(obj, "kept_well_formed", kept_well_formed)
    file.add(obj, document)
    return obj


_new = object.__new__
_set = object.__setattr__


__all__ = ["FileData", "LazyObject", "lazy_object"]
