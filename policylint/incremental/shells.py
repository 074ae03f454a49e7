"""What a scoped run needs of a file it does not analyse, kept by the file's content.

A run that reports on a few files (`--staged`, `--diff`, `--context`, the pre-commit hook, an
editor's edit, the gate's base side) analyses only the part of the repository they reach
(policylint.semantics.components), but it indexes every object: the index's lookups, the
report's object and policy counts, the JUnit report's test cases and the part search read each
object's key, file, position and references. Decoding every file's parse-cache entry to give
them was the largest cost of a warm hook run on a large repository. So the first scoped run that
reads a file keeps its **shell** next to its parse-cache entry: what the file gives besides its
objects' fields (the loader's problems, each document's position, the problems of building its
objects) and, per object, its identity (apiVersion, kind, name, the namespace its metadata says),
labels and annotations, and what the part search reads (its references and Gateway class). A
later scoped run builds the file's objects from the shell as `LazyObject`s (policylint.k8s.lazy),
whose data is decoded only when something reads it: the part's files, and the few objects outside
it that a lookup reads (a GatewayClass, a CRD).

A shell is written as its head, a tab and its rows (`_ROWS`): the head holds what a run reads of
every file (the problems, how many documents, each object's kind and names, from which its key
and the file's kind counts are told), the rows the documents' positions and the rest of each
object, which a run reads
only for the objects it builds and the files whose outline it reads: a hook run after one value
changed reads the rows of a few dozen files of 3,319, and decoding and checking every file's rows
was most of its shells' time (docs/performance.md).

The trust rules are the parse cache's (policylint.input.cache): an entry is named by the file's
parse-cache key (its bytes under the loader's stamp) and the code's hash, lives outside the
checkout behind a checksum, and is checked on reading: anything but exactly what `_shell` writes
is a miss, and the file is loaded as before; rows not exactly what `_shell` writes, or that do
not name the objects the head names, are found when first read, and the file's objects are then
built from its data as loading builds them (`Slots._fall_back`). The shells of the last run's files are also read as
one entry (`Pack`), which holds those very entries and is checked as a whole, then each shell as
its own entry is. An object's namespace is not the file's alone
(`--namespace`, CRDs and profiles decide whether its kind is namespaced): it is worked out again
from the metadata's, and the references kept (which are relative to it) are believed only when
it is the namespace they were found in. A file holding a CRD (it changes how every other file's
objects are built) or named `*.json` (whose data may not be objects at all) is always loaded.

Neither changes what a run finds: the differential tests (tests/incremental/test_incremental.py) compare
runs with a persistent cache to runs without one, byte for byte.
"""

from __future__ import annotations

import json
import json.scanner
from collections.abc import Callable, Iterator, Sequence
from collections.abc import Set as AbstractSet
from datetime import datetime
from typing import TYPE_CHECKING, Any, overload

from policylint.findings import Issue, Location
from policylint.incremental import shellcheck
from policylint.incremental.handover import rebuilt, shelled
from policylint.incremental.resident import Held
from policylint.incremental.shellpack import Pack
from policylint.input import load
from policylint.input.cache import ThriftyDecoder
from policylint.input.kept import Keeper, Kept, inflated
from policylint.input.load import Document, DocumentRef
from policylint.input.positions import format_path
from policylint.k8s.fieldtypes import check_object
from policylint.k8s.lazy import FileData, LazyObject, lazy_object
from policylint.k8s.objects import NO_LABELS, BuildResult, K8sObject, KindRegistry, ObjectKey, build_objects
from policylint.k8s.roster import Deferred, Outline, Roster
from policylint.semantics import namerefs
from policylint.semantics.namerefs import Reference
from policylint.values import frozen

if TYPE_CHECKING:
    from policylint.incremental.resident import Resident
    from policylint.input.cache import ContentKeys, ParseCache
    from policylint.input.sources import Source

# Bump when an entry's layout or meaning changes.
FORMAT = 2
_SHELL = "shell of a file"
# The entry of a file that is always loaded (it holds a CRD).
_LOADED = "loaded"
# Between a shell's head and its rows: compact JSON written with `ensure_ascii` holds no tab.
_ROWS = b"\t"


@frozen(slots=False)
class Combined:
    """What `Session.combine` gives: every object, in input order, and the problems of building them."""

    objects: Sequence[K8sObject]
    issues: list[Issue]


@frozen(slots=False)
class Shell:
    """A file's shell as read back (see the module docstring), with the bytes it stands for."""

    file: str
    key: str
    kept: Kept
    issues: list[Any]  # the loader's: [rule, message, line, column]
    documents: int  # how many (their positions are in `rows`)
    built: list[Any]  # the problems of building objects: [document, rule, message, path]
    names: list[Any]  # each object's group, kind, metadata namespace and name, one after another
    # The JSON of each document's DocumentRef fields after the file name and each object's
    # `_object_row`, decoded when first read (`Slots`).
    rows: bytes


class Session:
    """The shells of one run: those found for its files (`found`, by file name), the files loaded
    instead remembered (`remember`), and the objects of both put in input order (`combine`)."""

    def __init__(
        self,
        cache: ParseCache,
        sources: Sequence[Source],
        keys: dict[str, str],
        resident: Resident | None = None,
        known: ContentKeys | None = None,
    ) -> None:
        """Read the shells kept for `sources`; `keys` receives their files' parse-cache keys. A
        file whose shell is missing or not believed is not `found`: it is loaded. A file whose
        bytes `resident` holds the objects of (a long-lived process's last run) is found without
        reading its shell. `known`: the keys the command has of the same bytes, where `resident`
        carries none (the hook's staged side when its base's findings are read back), so that
        no file is hashed again."""
        self.cache = cache
        # The files not loaded: their shell, or None for one held from a whole run's loading.
        self.found: dict[str, Shell | None] = {}
        self._resident = resident
        self._held: dict[str, Held] = {}
        self._stamp = FORMAT.to_bytes(2, "big") + _code()
        keeper = Keeper()
        read: list[bytes] = []
        wanted: list[tuple[str, str, bytes]] = []
        for source in sources:
            if not shelled(source):
                continue
            data, problem = load.read_bytes(source)
            if problem is not None or data is None:
                continue
            read.append(data)
            if resident is not None:
                key = resident.content_key(cache, data)
            elif known is not None and source.snapshot:
                # Held by the bytes object, which the snapshot's source holds to the run's end
                # anyway: a file read from disk is not (policylint.incremental.results `_sources`).
                key = known.key(cache, data)
            else:
                key = cache.key(data)
            held = resident.get(source.display, key) if resident is not None else None
            if held is not None:
                self.found[source.display] = held.shell
                self._held[source.display] = held
                keys[source.display] = key
                cache.keep(key)
                continue
            wanted.append((source.display, key, data))
        # The pack is read where no file was handed over: a long-lived process (or the change's
        # side, to its base's) hands over nearly every file and reads a shell or two, which their
        # own entries give at less than the pack's read.
        self._pack = Pack(cache, self._stamp, packed=not self._held)
        for file, key, data in wanted:
            decoded = _decoded(self._pack, self._entry(key))
            shell = _checked(*decoded, file, key, keeper.keep(data)) if decoded is not None else None
            if shell is not None:
                self.found[file] = shell
                keys[file] = key
                # Its parse-cache entry is read only if an object's data is: kept from pruning anyway.
                cache.keep(key)
        if resident is not None:
            resident.keep_keys(read)

    def _entry(self, key: str) -> str:
        return self.cache.named(_SHELL, self._stamp + key.encode("ascii"))

    def combine(
        self,
        sources: Sequence[Source],
        input_issues: list[Issue],
        built: BuildResult,
        texts: dict[str, str | Kept],
        kinds: KindRegistry,
        default_namespace: str,
    ) -> tuple[Combined, dict[str, str | Kept]]:
        """The objects and problems of every file, those loaded (`input_issues`, the loader's,
        extended in place, `built`, `texts`) and those of the shells found, in the order loading
        every file and `build_objects` give them: the objects of the shells' files are built as
        they are read (policylint.k8s.roster)."""
        held: dict[str, Held] = {}
        strings: load.Shared = {}
        decoder = ThriftyDecoder(strings)
        for source in sources:
            if source.display not in self.found:
                continue
            shell = self.found[source.display]
            kept_before = self._held.get(source.display)
            if kept_before is not None and kept_before.holds_for(kinds, default_namespace):
                held[source.display] = kept_before
            elif shell is not None:
                held[source.display] = _build(shell, self.cache, kinds, default_namespace, strings, decoder)
            else:
                assert kept_before is not None
                held[source.display] = rebuilt(kept_before, kinds, default_namespace)
        if self._resident is not None:
            self._resident.keep(held)
        issues = [i for h in held.values() for i in h.issues]
        built_issues = [i for h in held.values() for i in h.built]
        kept = {file: h.kept for file, h in held.items() if h.kept is not None}
        order = {s.display: i for i, s in enumerate(sources)}
        last = len(order)

        def at(file: str | None) -> int:
            return order.get(file, last) if file is not None else last

        input_issues[:] = sorted([*input_issues, *issues], key=lambda i: at(i.location.file if i.location else None))
        all_built = sorted([*built.issues, *built_issues], key=lambda i: at(i.document.file if i.document else None))
        # The objects of the files loaded, and of the others as built when read, in input order.
        loaded: dict[str, list[K8sObject]] = {}
        for obj in built.objects:
            loaded.setdefault(obj.doc.file, []).append(obj)
        files: list[tuple[str, Sequence[K8sObject]]] = []
        for source in sources:
            found = held.get(source.display)
            objects = found.objects if found is not None else loaded.pop(source.display, None)
            if objects:
                files.append((source.display, objects))
        files.extend(loaded.items())  # none: every object's file is a source's
        both = {**texts, **kept}
        return Combined(Roster(files), all_built), {s.display: both[s.display] for s in sources if s.display in both}

    def remember(
        self,
        sources: Sequence[Source],
        keys: dict[str, str],
        documents: Sequence[Document],
        loader_issues: Sequence[Issue],
        built: BuildResult,
        crd_files: set[str],
        default_namespace: str,
    ) -> None:
        """Keep the shell of every file of `sources` that was loaded from its bytes (its
        documents, the loader's problems, its objects and the problems of building them)."""
        wanted = {s.display: keys[s.display] for s in sources if s.display in keys and shelled(s)}
        if not wanted:
            # The shells read from their own entries are packed for the next run all the same.
            self._pack.save()
            return
        docs: dict[str, list[DocumentRef]] = {}
        for d in documents:
            if d.ref.file in wanted:
                docs.setdefault(d.ref.file, []).append(d.ref)
        number = {ref: i for refs in docs.values() for i, ref in enumerate(refs)}
        rows: dict[str, dict[str, list[Any]]] = {f: {"issues": [], "built": [], "objects": []} for f in wanted}
        for issue in loader_issues:
            where = issue.location
            if where is not None and where.file in rows:
                rows[where.file]["issues"].append([issue.rule_id, issue.message, where.line, where.column])
        for issue in built.issues:
            ref = issue.document
            if ref is not None and ref.file in rows:
                rows[ref.file]["built"].append([number[ref], issue.rule_id, issue.message, issue.path])
        loaded = set(crd_files)
        for obj in built.objects:
            file = obj.doc.file
            if file in rows:
                row = _object_row(obj, number[obj.doc])
                rows[file]["objects"].append(row)
                if obj.namespace is not None and (row[5] or default_namespace) != obj.namespace:
                    loaded.add(file)  # not the namespace `_object` would work out: always loaded
        for file, key in wanted.items():
            if file in loaded:
                self._put(key, _dumps({"format": FORMAT, _LOADED: True}))
                continue
            documents_rows = [[r.chunk_start, r.line_offset, r.doc_in_chunk, r.line, r.column] for r in docs.get(file, [])]
            shell = rows[file]
            objects = shell.pop("objects")
            names = [name for row in objects for name in row[3:7]]
            head = _dumps({"format": FORMAT, "documents": len(documents_rows), **shell, "names": names})
            self._put(key, head + _ROWS + _dumps([documents_rows, objects]))
        self._pack.save()

    def _put(self, key: str, payload: bytes) -> None:
        entry = self._entry(key)
        self.cache.put(entry, payload)
        self._pack.add(entry, payload)


def _build(
    shell: Shell, cache: ParseCache, kinds: KindRegistry, default_namespace: str, strings: load.Shared, decoder: Any
) -> Held:
    """The objects of the file of `shell`, the loader's problems, the problems of building
    them and what the file was parsed from (for positions); `decoder` decodes the entries of every
    file the run reads (`ThriftyDecoder`: shared through `strings` past the first few MiB), and a
    file parsed again shares its strings through `strings`."""
    file = shell.file
    issues = [Issue(rule_id=r, message=m, location=Location(file, line, col)) for r, m, line, col in shell.issues]

    def documents() -> list[Document]:
        result = cache.load(shell.key, shell.file, decoder)
        if result is None:  # pruned or damaged since: the same bytes parse to the same data
            result = load.load_bytes(inflated(shell.kept), shell.file, strings=strings)
        return result.documents

    def read() -> list[Any]:
        return [d.data for d in documents()]

    def loaded() -> tuple[list[DocumentRef], Sequence[K8sObject]]:
        # The file's documents and objects as loading builds them: for rows not believed
        # (`Slots._fall_back`).
        found = documents()
        return [d.ref for d in found], build_objects(found, kinds, default_namespace).objects

    # Whether each kind is cluster-scoped, asked of the run's kinds once per file: a file of a
    # hundred objects holds a handful of kinds, and the answer decides every object's namespace.
    scopes: dict[tuple[str, str], bool] = {}
    names = shell.names
    for group_kind in zip(names[0::4], names[1::4]):
        if group_kind not in scopes:
            scopes[group_kind] = kinds.is_cluster_scoped(*group_kind)
    objects = Slots(shell, FileData(read), scopes, default_namespace, loaded)
    # The problems of building objects name their document: its position read from the rows.
    built = [Issue(rule_id=r, message=m, document=objects.document(d), path=p) for d, r, m, p in shell.built]
    return Held(shell.key, shell, objects, issues, built, shell.kept if shell.documents else None, default_namespace, scopes)


class Slots(Deferred):
    """The objects of a file read from its shell, each built from its row when first read, and
    what the shell's head tells of them without decoding a row or building any object
    (policylint.k8s.roster)."""

    __slots__ = (
        "_built",
        "_default",
        "_documents",
        "_holder",
        "_kinds",
        "_loaded",
        "_names",
        "_raw",
        "_refs",
        "_rows",
        "_scopes",
        "file",
    )

    def __init__(
        self,
        shell: Shell,
        holder: FileData,
        scopes: dict[tuple[str, str], bool],
        default_namespace: str,
        loaded: Callable[[], tuple[list[DocumentRef], Sequence[K8sObject]]],
    ) -> None:
        self.file = shell.file
        names = self._names = shell.names
        self._raw = shell.rows
        self._rows: list[list[Any]] | None = None
        self._holder = holder
        self._documents = shell.documents
        self._refs: list[DocumentRef] = []
        self._scopes = scopes
        self._default = default_namespace
        self._loaded = loaded
        self._built: list[K8sObject | None] = [None] * (len(names) // 4)
        self._kinds: dict[tuple[str, str], int] | None = None

    def _decoded(self) -> list[list[Any]]:
        """The rows, decoded and checked when first read; none where they are not believed, each
        object then built from the file's data (`_fall_back`)."""
        rows = self._rows
        if rows is None:
            decoded = shellcheck.rows(self._raw, self._names, self._documents)
            if decoded is None:
                self._fall_back()
                rows = []
            else:
                self._refs = [DocumentRef(self.file, *row) for row in decoded[0]]
                rows = decoded[1]
            self._raw = b""
            self._rows = rows
        return rows

    def document(self, i: int) -> DocumentRef:
        """The position of the file's `i`-th document (`i` is below the head's count)."""
        self._decoded()
        refs = self._refs
        return refs[i] if i < len(refs) else DocumentRef(self.file, 0, 0, 0, 1, 1)

    def _fall_back(self) -> None:
        """Every object built from the file's data, as loading builds them: rows not what `_shell`
        writes, or naming other objects than the head. Where those objects are not the ones the
        head names (a head no run wrote for these bytes), each is the one of its place and key,
        else an object of that key with no data: the head's count and keys, which the run has
        read already, are kept."""
        refs, loaded = self._loaded()
        self._refs = refs
        for i in range(len(self._built)):
            key = self.key(i)
            found = loaded[i] if i < len(loaded) else None
            if found is None or found.key != key:
                found = K8sObject(key, "", {}, refs[0] if refs else DocumentRef(self.file, 0, 0, 0, 1, 1))
            self._built[i] = found

    def __len__(self) -> int:
        return len(self._built)

    @overload
    def __getitem__(self, i: int) -> K8sObject: ...
    @overload
    def __getitem__(self, i: slice) -> Sequence[K8sObject]: ...

    def __getitem__(self, i: int | slice) -> K8sObject | Sequence[K8sObject]:
        if isinstance(i, slice):
            return [self[k] for k in range(len(self._built))[i]]
        found = self._built[i]
        if found is None:
            rows = self._decoded()
            found = self._built[i]  # every object, where the rows were not believed
            if found is None:
                found = self._built[i] = _object(self._holder, self._refs, rows[i], self._scopes, self._default)
        return found

    def __iter__(self) -> Iterator[K8sObject]:
        return (self[i] for i in range(len(self._built)))

    def key(self, i: int) -> ObjectKey:
        found = self._built[i]
        if found is not None:
            return found.key
        names, at = self._names, 4 * i
        return _key((names[at], names[at + 1], _namespace(names, at, self._scopes, self._default), names[at + 3]))

    def kinds(self) -> dict[tuple[str, str], int]:
        if self._kinds is None:
            counts: dict[tuple[str, str], int] = {}
            names = self._names
            for gk in zip(names[0::4], names[1::4]):
                counts[gk] = counts.get(gk, 0) + 1
            self._kinds = counts
        return self._kinds

    def scopes(self) -> dict[tuple[str, str], bool]:
        return self._scopes

    def places(self) -> Iterator[tuple[tuple[str | None, str], int]]:
        scopes, default, names = self._scopes, self._default, self._names
        return (((_namespace(names, 4 * i, scopes, default), names[4 * i + 3]), i) for i in range(len(self._built)))

    def outline(self) -> Outline:
        rows = self._decoded()
        scopes, default = self._scopes, self._default
        names: list[str] = []
        namespaces: list[str | None] = []
        kinds: list[tuple[str, str]] = []
        references: list[list[Any]] = []
        classes: list[str | None] = []
        for i, row in enumerate(rows):
            namespace = _namespace(row, 3, scopes, default)
            names.append(row[6])
            namespaces.append(namespace)
            kinds.append((row[3], row[4]))
            # The references kept are relative to the namespace they were found in (`_object`):
            # in another, the object is built and its data walked.
            references.append([_tuple(Reference, r) for r in row[12]] if row[7] == namespace else namerefs.references(self[i]))
            classes.append(row[11])
        if not rows:  # the rows not believed: every object built from the data
            for obj in self:
                names.append(obj.key.name)
                namespaces.append(obj.key.namespace)
                kinds.append((obj.key.group, obj.key.kind))
                references.append(namerefs.references(obj))
                classes.append(namerefs.gateway_class(obj))
        return Outline(names, namespaces, kinds, references, classes)

    def place(self, i: int) -> tuple[str, int, int, str]:
        rows = self._decoded()
        if not rows:
            return self[i].sort_key()
        row = rows[i]
        document = self._refs[row[0]]
        return (self.file, document.line, document.column, format_path(row[1]))

    def outside(self, keys: AbstractSet[ObjectKey]) -> bool:
        scopes, default, names = self._scopes, self._default, self._names
        # The unbuilt first: a file outside the part says so at its first object. A key is a
        # tuple: one of plain values hashes and compares as the key does.
        unbuilt = (4 * i for i, built in enumerate(self._built) if built is None)
        return any(
            (names[at], names[at + 1], _namespace(names, at, scopes, default), names[at + 3]) not in keys for at in unbuilt
        ) or any(o.key not in keys for o in self._built if o is not None)

    def built(self) -> list[tuple[int, K8sObject]]:
        return [(i, o) for i, o in enumerate(self._built) if o is not None]

    def of_kind(self, group: str, kind: str) -> list[K8sObject]:
        if (group, kind) not in self.kinds():
            return []
        names = self._names
        return [self[i] for i in range(len(self._built)) if names[4 * i] == group and names[4 * i + 1] == kind]


def _namespace(names: list[Any], at: int, scopes: dict[tuple[str, str], bool], default_namespace: str) -> str | None:
    # As `build_objects` decides it (policylint.k8s.objects): the metadata's namespace, else the
    # run's default, for a namespaced kind. `names[at:at + 4]`: the group, kind, metadata
    # namespace and name, of a head's names or a row.
    return None if scopes[(names[at], names[at + 1])] else (names[at + 2] or default_namespace)


def _object(
    holder: FileData, refs: list[DocumentRef], row: list[Any], scopes: dict[tuple[str, str], bool], default_namespace: str
) -> LazyObject:
    document, prefix, api_version, group, kind, _, name, found_in, labels, annotations, stamp, klass = row[:12]
    refs_kept, well_formed = row[12:]
    namespace = _namespace(row, 3, scopes, default_namespace)
    # References name the object's own namespace where they give none: found in another, they
    # are found again from the data. (`_make`: the row's shape was checked, `_object_ok`.)
    kept = [_reference(r) for r in refs_kept] if found_in == namespace else None
    return lazy_object(
        holder,
        document,
        kept,
        klass,
        well_formed,
        _key((group, kind, namespace, name)),
        api_version,
        refs[document],
        tuple(prefix),
        labels or NO_LABELS,
        annotations or NO_LABELS,
        datetime.fromisoformat(stamp) if stamp is not None else None,
    )


# Built from a checked row as a tuple is, not through the named tuple's keyword `__new__`: ten
# thousand objects and their references are built per run.
_key = ObjectKey._make
_reference = Reference._make
# A checked row's references, for the part search over every object outside the part: made as
# tuples are, without `_make`'s call per reference.
_tuple = tuple.__new__


def _object_row(obj: K8sObject, document: int) -> list[Any]:
    data = obj.data
    meta = data.get("metadata") if isinstance(data, dict) else None
    meta_namespace = meta.get("namespace") if isinstance(meta, dict) else None
    stamp = obj.creation_timestamp
    return [
        document,
        list(obj.prefix),
        obj.api_version,
        obj.key.group,
        obj.key.kind,
        meta_namespace if isinstance(meta_namespace, str) else None,
        obj.key.name,
        obj.key.namespace,
        dict(obj.labels),
        dict(obj.annotations),
        stamp.isoformat() if stamp is not None else None,
        namerefs.gateway_class(obj),
        [list(r) for r in namerefs.references(obj)],
        # No field of the wrong type (PL010): the lookups of a part read that of every object.
        not check_object(obj.group, obj.kind, obj.data),
    ]


def _code() -> bytes:
    from policylint.incremental.memo import code_stamp

    return code_stamp()


def _dumps(value: Any) -> bytes:
    return json.dumps(value, ensure_ascii=True, separators=(",", ":")).encode("ascii")


def _decoded(pack: Pack, entry: str) -> tuple[dict[str, Any], bytes] | None:
    """The head of the shell under `entry`, decoded, and its rows' JSON, not decoded."""
    raw = pack.payload(entry)
    if raw is None:
        return None
    head, _, rows = raw.partition(_ROWS)
    decoded = shellcheck.json_value(head)
    return (decoded, rows) if type(decoded) is dict and decoded.get("format") == FORMAT else None


def _checked(decoded: dict[str, Any], rows: bytes, file: str, key: str, kept: Kept) -> Shell | None:
    """The shell `decoded` holds, if its head is exactly of the shape `remember` writes (its rows
    are checked when first read: policylint.incremental.shellcheck `rows`)."""
    head = shellcheck.head(decoded, rows)
    return Shell(file, key, kept, *head, rows) if head is not None else None
