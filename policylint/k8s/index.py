"""The project index: every object by key and kind, the kinds the API server would know, and
each object's named sections and malformed fields.

It holds objects and lookups only: policies and what they resolve to are the next stage's
(policylint.semantics.resolution), what the API server would refuse in each object is the
admission stage's (policylint.k8s.admissions), both built by the pipeline on top of it
(policylint.project). Everything here is computed once.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Iterator, Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import field
from typing import TYPE_CHECKING, Any, overload

from policylint.findings import Issue
from policylint.identity import IdentityMap
from policylint.input.positions import join
from policylint.k8s.cluster import Declared, Installer
from policylint.k8s.external import ExternalObjects
from policylint.k8s.fieldtypes import WELL_FORMED, Clean, Malformed, check_object
from policylint.k8s.lazy import LazyObject
from policylint.k8s.objects import CLUSTER, K8sObject, KindInfo, KindRegistry, ObjectKey
from policylint.k8s.ordering import arranged, order_key, rearranged
from policylint.k8s.roster import Roster
from policylint.values import frozen, record

if TYPE_CHECKING:
    from policylint.k8s.cluster import Cluster

CRD_GK = ("apiextensions.k8s.io", "CustomResourceDefinition")


# How many well-formed maps and lists `ProjectIndex.malformed` holds for the objects that share
# them (`check_object`'s `clean`), before it lets them go and starts again: objects are asked about
# kind by kind, and those that share subtrees, a tenant's copies of one application, come together;
# held whole, the table would cost ~40 MiB at 100k objects.
CLEAN_HELD = 4096


@frozen
class LintOptions:
    default_namespace: str = "default"
    # policy-machinery/Kuadrant synthesise `rule-<n>` for unnamed rules; the spec does not
    # (docs/semantics.md#unnamed-route-rules-decision).
    synthetic_rule_names: bool = False
    # Objects that live outside the input (`--external`; docs/semantics.md#partial-repositories).
    external: ExternalObjects = field(default_factory=ExternalObjects)
    # The input is the whole cluster (`--complete`): a referenced Secret or ConfigMap missing from
    # it does not exist, even in a namespace where the input holds none of that kind.
    complete: bool = False
    # What the cluster runs as declared (`gateway-api-version`, `channel`, `implementations`), and
    # what implementations' installers put in a cluster (profile data): with the input, they make
    # the cluster description (`ProjectIndex.cluster`, policylint.k8s.cluster) that decides which
    # bundled CRD schemas the schema rules read.
    declared: Declared = field(default_factory=Declared)
    installers: tuple[Installer, ...] = ()
    # The CRDs given with `--crd` (context, not linted): like a CRD in the input, each decides
    # which versions of its kind are served and which fields they have (the schema rules).
    context_crds: tuple[K8sObject, ...] = ()


# Section.position of a section named on a kind whose sections policylint does not know.
UNKNOWN_POSITION = -1


@frozen
class Section:
    name: str | None
    position: int  # 0-based index in the list (UNKNOWN_POSITION: not known)
    # The list holding it (spec.listeners), shared by its entries: its own path (`path`) is made
    # when asked for (300k path strings at 100k objects, few of them ever read). A section that
    # is not an entry of a list (`indexed` False) has its whole path here.
    within: str
    # The entry is not a mapping or its `name` has the wrong type (PL010): the name it was
    # meant to have is unknown, so a sectionName can neither match nor miss it.
    malformed: bool = False
    indexed: bool = True

    @property
    def path(self) -> str:
        """e.g. spec.listeners[2]"""
        return join(self.within, self.position) if self.indexed else self.within


@record
class ProjectIndex:
    objects: Sequence[K8sObject]
    kinds: KindRegistry
    options: LintOptions = field(default_factory=LintOptions)
    input_issues: Sequence[Issue] = ()
    files: Sequence[str] = ()
    # Each file's parse-cache key: what the results kept between runs are kept by (the admission
    # verdicts, policylint.k8s.admission; what a run found, policylint.incremental).
    content_keys: Mapping[str, str] = field(default_factory=dict)
    # The index of a long-lived process's run before, over mostly the same instances: the order
    # and lookups are worked out from its (policylint.k8s.ordering). Let go once they are.
    previous: ProjectIndex | None = field(default=None, repr=False, compare=False)

    def __post_init__(self) -> None:
        # A scoped run's objects, some built only when read (policylint.k8s.roster): the lookups
        # are answered from it, and the objects are sorted and indexed whole only when something
        # reads every one of them (`_whole`).
        given = self.objects
        self.roster: Roster | None = given if isinstance(given, Roster) else None
        self._by_key: dict[ObjectKey, list[K8sObject]] | None = None
        self._by_gk: dict[tuple[str, str], list[K8sObject]] | None = None
        self._keyed: dict[ObjectKey, list[K8sObject]] = {}
        self._kinded: dict[tuple[str, str], list[K8sObject]] = {}
        self._kind_counts: dict[tuple[str, str], int] | None = None
        self._sections: dict[K8sObject, list[Section]] = {}
        self._groups: set[str] | None = None
        self._malformed: dict[K8sObject, Malformed] = {}
        # The maps and lists `malformed` found well-formed, for the objects that share them.
        self._clean: Clean = IdentityMap()
        # (group, kind) -> the namespaces where an object of the kind is malformed (`has_malformed`).
        self._malformed_in: dict[tuple[str, str], frozenset[str | None]] = {}
        self._placeholders: dict[K8sObject, tuple[tuple[str | int, ...], ...]] = {}
        self._cluster: Cluster | None = None
        self._namespace_ranks: dict[str, int] | None = None
        self._shares: dict[int, list[list[K8sObject]]] = {}  # n -> the objects of each share (`share`)
        if self.roster is not None and self.roster.deferred():
            self.previous = None  # built lazily: not a long-lived process's index
            self.objects = _Whole(self)
        else:
            self._index(given)

    def _index(self, objects: Sequence[K8sObject]) -> None:
        """Sort the objects and file them by key and by kind, from the index of the run before
        where there is one (`previous`, policylint.k8s.ordering), else from nothing."""
        last, self.previous = self.previous, None
        found = None
        if last is not None and last._by_key is not None and last._by_gk is not None and isinstance(last.objects, list):
            found = rearranged((last.objects, last._by_key, last._by_gk), objects)
        self.objects, self._by_key, self._by_gk = found if found is not None else arranged(objects)

    def _whole(self) -> tuple[list[K8sObject], dict[ObjectKey, list[K8sObject]], dict[tuple[str, str], list[K8sObject]]]:
        """Every object, sorted, by key and by kind: every object of the roster built."""
        if self._by_key is None or self._by_gk is None:
            assert self.roster is not None
            self._index(self.roster)
        assert self._by_key is not None and self._by_gk is not None and isinstance(self.objects, list)
        return self.objects, self._by_key, self._by_gk

    def files_outside(self, keys: AbstractSet[ObjectKey], holding: AbstractSet[str] | None = None) -> set[str]:
        """The files holding an object whose key is not among `keys` (a scoped run's members);
        `holding`: the files holding an object of those keys, where known (`Roster.files_outside`)."""
        if self.roster is not None:
            return self.roster.files_outside(keys, holding)
        return {o.doc.file for o in self.objects if o.key not in keys}

    def kind_counts(self) -> dict[tuple[str, str], int]:
        """How many objects of each (group, kind) the input holds, in the order of `objects`;
        answered without building a scoped run's objects outside its part."""
        if self._kind_counts is None:
            if self.roster is not None and self._by_gk is None:
                self._kind_counts = dict(sorted(self.roster.kinds().items()))
            else:
                self._kind_counts = {gk: len(objects) for gk, objects in self._whole()[2].items()}
        return self._kind_counts

    # -- lookups -------------------------------------------------------------------------

    def get(self, key: ObjectKey) -> K8sObject | None:
        """The object with this key; of several definitions (PL005), the one that exists after
        they are applied in file order: the last."""
        by_key = self._by_key
        if by_key is not None:  # the whole index (`_whole`): asked of every reference resolved
            found = by_key.get(key)
            return found[-1] if found else None
        if self.roster is not None:
            found = self._keyed.get(key)
            if found is None:
                # Only the objects bearing its name are built, of the files holding that name.
                found = self._keyed[key] = sorted(self.roster.with_key(key), key=order_key)
        else:
            found = self._whole()[1].get(key)
        return found[-1] if found else None

    def present(self, keys: Iterable[ObjectKey], first: Iterable[str] = ()) -> set[ObjectKey]:
        """Those of `keys` some object bears; a scoped run builds none outside its part for it,
        and looks in the files `first` before the others (`Roster.present`)."""
        if self.roster is not None and self._by_key is None:
            return self.roster.present(keys, first)
        by_key = self._whole()[1]
        return {key for key in keys if key in by_key}

    def lookup(self, group: str, kind: str, namespace: str | None, name: str) -> K8sObject | None:
        return self.get(ObjectKey(group, kind, namespace, name))

    def of_kind(self, group: str, kind: str) -> Sequence[K8sObject]:
        by_gk = self._by_gk
        if by_gk is not None:
            return by_gk.get((group, kind), ())
        if self.roster is not None:
            found = self._kinded.get((group, kind))
            if found is None:
                found = self._kinded[(group, kind)] = sorted(self.roster.of_kind(group, kind), key=order_key)
            return found
        return self._whole()[2].get((group, kind), ())

    def groups(self) -> frozenset[str]:
        """The API groups of the objects in the input and of the kinds known (built in or from a CRD)."""
        return self.input_groups() | self.kinds.groups()

    def kinds_in_input(self) -> list[tuple[str, str]]:
        """The (group, kind) of the objects in the input, in the order of `objects`."""
        return list(self.kind_counts())

    def input_groups(self) -> frozenset[str]:
        """The API groups of the objects in the input."""
        return frozenset(group for group, _ in self.kind_counts())

    def has_kind(self, group: str, kind: str) -> bool:
        return (group, kind) in self.kind_counts() or self.kinds.get(group, kind) is not None

    def duplicate_groups(self) -> list[list[K8sObject]]:
        return [objs for objs in self._whole()[1].values() if len(objs) > 1]

    def crds(self) -> Sequence[K8sObject]:
        return self.of_kind(*CRD_GK)

    def malformed(self, obj: K8sObject) -> Malformed:
        """The fields of `obj` whose JSON type its schema rejects (PL010; `policylint.k8s.fieldtypes`),
        but for the placeholders PL004 reports (`placeholders`): `{GATEWAY_CLASS_NAME}` unquoted
        is a mapping only until the harness substitutes it."""
        cached = self._malformed.get(obj)
        if cached is None and type(obj) is LazyObject and obj.kept_well_formed:
            # What `check_object` found when the file's shell was kept, of the data the object
            # reads: it need not be read, nor checked again once it is (a change's base side takes
            # the objects its other side read, policylint.incremental.resident).
            cached = self._malformed[obj] = WELL_FORMED
        if cached is None:
            cached = check_object(obj.group, obj.kind, obj.data, self._clean)
            if len(self._clean) > CLEAN_HELD:
                self._clean.clear()
            if cached:
                held = self.placeholders(obj)
                if held:
                    kept = tuple(p for p in cached.problems if not any(p.path[: len(h)] == h for h in held))
                    cached = dataclasses.replace(cached, problems=kept)
            self._malformed[obj] = cached
        return cached

    def adopt_malformed(self, known: Mapping[K8sObject, Malformed]) -> None:
        """Take what `malformed` answered of this index's objects in another index (a long-lived
        process's run before, over the same instances: policylint.incremental.resident). The
        answer is a function of the object alone, its kind's field types being the package's."""
        mine = self._malformed
        for obj in self.objects:
            found = known.get(obj)
            if found is not None:
                mine[obj] = found

    def malformed_known(self) -> dict[K8sObject, Malformed]:
        """What `malformed` has answered so far, by object."""
        return dict(self._malformed)

    def placeholders(self, obj: K8sObject) -> tuple[tuple[str | int, ...], ...]:
        """The fields of `obj` holding a placeholder a tool substitutes before applying, which
        PL004 reports (policylint.input.placeholders): no other rule reports on them or inside
        them (policylint.rules.engine). Worked out once per object, for the objects asked about."""
        cached = self._placeholders.get(obj)
        if cached is None:
            from policylint.input.load import placeholder_fields

            cached = self._placeholders[obj] = tuple(path for path, _ in placeholder_fields(obj.data))
        return cached

    def on_placeholder(self, obj: K8sObject, path: tuple[str | int, ...]) -> bool:
        """Whether `path` of `obj` is one of its `placeholders` fields or lies inside one. The
        fields along the path are read first, and the whole object only where one of them may
        hold a placeholder: the engine asks this of every finding, and walking each object a
        finding sits on cost a messy repository 4% of its run."""
        held = self._placeholders.get(obj)
        if held is None:
            from policylint.input.load import placeholder_along

            if not placeholder_along(obj.data, path):
                return False
            held = self.placeholders(obj)
        return any(path[: len(h)] == h for h in held)

    def cluster(self) -> Cluster:
        """What the cluster runs: declared, else inferred from the input (policylint.k8s.cluster)."""
        if self._cluster is None:
            from policylint.k8s.cluster import infer

            crds = [*self.crds(), *self.options.context_crds]
            classes = self.of_kind("gateway.networking.k8s.io", "GatewayClass")
            self._cluster = infer(self.options.declared, crds, classes, self.options.installers)
        return self._cluster

    def share_of(self, obj: K8sObject, n: int) -> int:
        """Which of `n` shares of the objects holds `obj`, when `--jobs` shares them among
        processes (`Rule.mine`): every n-th namespace of the index, in order (cluster-scoped
        objects count as the namespace ""), from the first."""
        if self._namespace_ranks is None:
            names = sorted({o.namespace or "" for o in self.objects})
            self._namespace_ranks = {name: i for i, name in enumerate(names)}
        return self._namespace_ranks[obj.namespace or ""] % n

    def share(self, k: int, n: int) -> Sequence[K8sObject]:
        """The objects of the k-th of `n` shares (`share_of`), in index order: each share's list is
        made once, for the several rules run over it."""
        parts = self._shares.get(n)
        if parts is None:
            parts = self._shares[n] = [[] for _ in range(n)]
            for obj in self.objects:
                parts[self.share_of(obj, n)].append(obj)
        return parts[k]

    def has_malformed(self, group: str, kind: str, namespace: str | None) -> bool:
        """Whether some object of the kind in the namespace has a malformed field (PL010): its
        references are partly unknown, so "nothing references X" cannot be concluded there."""
        # Asked per grant `from` entry: one pass per kind, not one per question (with a grant per
        # tenant namespace, a scan of every route per grant was quadratic in the tenants).
        found = self._malformed_in.get((group, kind))
        if found is None:
            found = self._malformed_in[(group, kind)] = frozenset(
                o.namespace for o in self.of_kind(group, kind) if self.malformed(o)
            )
        return namespace in found

    def is_external(self, group: str, kind: str, namespace: str | None, name: str) -> bool:
        return self.options.external.match(group, kind, namespace, name) is not None

    # -- sections ------------------------------------------------------------------------

    def sections(self, obj: K8sObject) -> list[Section]:
        cached = self._sections.get(obj)
        if cached is not None:
            return cached
        spec = self.kinds.sections(obj.group, obj.kind)
        out: list[Section] = []
        if spec is not None:
            container: Any = obj.data
            parts = tuple(spec.path.split("."))
            for part in parts:
                container = container.get(part) if isinstance(container, dict) else None
            if isinstance(container, list):
                malformed = self.malformed(obj)
                within = spec.path
                if malformed:
                    for i, entry in enumerate(container):
                        name = entry.get("name") if isinstance(entry, dict) else None
                        unknown = malformed.broken(*parts, i, "name")
                        out.append(Section(name if isinstance(name, str) else None, i, within, unknown))
                else:
                    # A well-formed object (nearly every one) has no unknown name: its truth is
                    # asked once, not once per entry (`Malformed.__bool__` is a call), and
                    # `malformed` is left at its default.
                    for i, entry in enumerate(container):
                        name = entry.get("name") if isinstance(entry, dict) else None
                        out.append(Section(name if isinstance(name, str) else None, i, within))
        self._sections[obj] = out
        return out

    def sections_malformed(self, obj: K8sObject) -> bool:
        """Whether some section name of `obj` is unknown: its list, or an entry's name, is malformed (PL010)."""
        malformed = self.malformed(obj)
        if not malformed:
            return False
        spec = self.kinds.sections(obj.group, obj.kind)
        if spec is None:
            return False
        return malformed.broken(*spec.path.split(".")) or any(s.malformed for s in self.sections(obj))

    def kind_has_no_sections(self, group: str, kind: str) -> bool:
        """True when the kind is known (built-in table) and has nothing a sectionName can select.

        Kinds known only from a CRD in the input have unknown sections, not none.
        """
        return self.kinds.sections(group, kind) is None and KindRegistry.builtin().get(group, kind) is not None

    def known_groups(self) -> set[str]:
        """API groups the API server would know: core, built-in kinds, CRDs and objects in the input."""
        if self._groups is None:
            groups = {""} | {group for group, _kind in self.kind_counts()}
            groups |= {group for group, _kind in getattr(self.kinds, "_kinds", {})}
            self._groups = groups
        return self._groups


class _Whole(Sequence[K8sObject]):
    """A scoped run's index's `objects` while some are unbuilt: counted from the roster, every
    object built and sorted the first time one is read."""

    __slots__ = ("_index",)

    def __init__(self, index: ProjectIndex) -> None:
        self._index = index

    def __len__(self) -> int:
        assert self._index.roster is not None
        return len(self._index.roster)

    @overload
    def __getitem__(self, i: int) -> K8sObject: ...
    @overload
    def __getitem__(self, i: slice) -> Sequence[K8sObject]: ...

    def __getitem__(self, i: int | slice) -> K8sObject | Sequence[K8sObject]:
        return self._index._whole()[0][i]

    def __iter__(self) -> Iterator[K8sObject]:
        return iter(self._index._whole()[0])


def crd_kind_infos(crds: Iterable[K8sObject]) -> list[KindInfo]:
    """Kinds declared by CRDs in the input: their scope decides namespace defaulting."""
    out = []
    for crd in crds:
        spec = crd.spec
        names = spec.get("names")
        if not isinstance(names, dict):
            continue
        group, kind, scope = spec.get("group"), names.get("kind"), spec.get("scope")
        if isinstance(group, str) and isinstance(kind, str) and scope in ("Namespaced", CLUSTER):
            out.append(KindInfo(group, kind, scope))
    return out


__all__ = ["CRD_GK", "UNKNOWN_POSITION", "LintOptions", "ProjectIndex", "Section", "crd_kind_infos"]
