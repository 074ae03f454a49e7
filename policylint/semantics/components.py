"""The part of a project a scoped run must analyse: the objects whose findings can be in the
report scope, with everything those findings depend on (policylint.report_scope).

A run with a report scope narrower than its load scope (`--context`, `--diff`, `--staged`, the
pre-commit hook) reports only the findings in scope, but resolution, topology, the
effective-policy simulation and the rules cost in proportion to everything loaded. Most
repositories split into parts that cannot see each other (a tenant's Gateway with its routes,
policies, backends and grants), so the analysis is run on the parts the scope can reach, and
gives the findings a run over everything would give, restricted to the scope
(tests/scope/test_scoped_analysis.py compares the two on random repositories and changes).

The parts are found over an over-approximation of every dependency between objects, built
without resolving anything:

- any mapping with a string `name` outside `metadata` and `status` is read as a reference to
  that name, in its `namespace` or the object's own: target, parent, backend, certificate, CA,
  parameters and extension references alike, whatever their kind (objects of one namespace that
  share a name are connected too, which also covers duplicates);
- `name: "*"` (route delegation), label selectors and a reference by a namespace's name (a
  policy on the Namespace) reach every object of the namespace; a target selector across
  namespaces reaches everything, and the whole repository is analysed;
- a reference into another namespace depends on the ReferenceGrants there;
- an object declaring hosts of a service registry (an Istio ServiceEntry's `hosts`, which a
  route's `Hostname` backend names) joins every object referring to one of those names, in any
  namespace;
- a GatewayClass joins its Gateways when something other than them references it (a policy on
  the class reaches every Gateway of it), or when it has a `parametersRef` (the parameters can
  merge its Gateways into one proxy).

The sets these joins make are found by `policylint.semantics.partgraph`, which a long-lived
process (the language server) keeps between runs and updates for the files that changed.

Origins are the objects of the report scope's files (a Namespace among them makes its objects
origins; another cluster-scoped object, a GatewayClass or a CRD, makes the run analyse everything) and the objects that could carry a finding
whose note points at them without referencing them: near-miss hints ("did you mean ...?") name
objects of the kind and namespace referenced, or of the same name elsewhere, so every object in a
origin's namespace, every object referencing into it and every object whose reference to a origin's
name finds nothing is a origin. The analysed set is every object connected to a origin ("members", whose findings are
kept), plus context whose presence lookups read but whose own findings are not computed right and
are dropped: every cluster-scoped object (classes, Namespaces, CRDs), every object of the
namespaces the members live in or reference, objects bearing a name a member's reference finds
nowhere else (hints name them), and one
object of each kind present (whether a kind exists in the input at all).

Where it can, the search follows those references with their direction instead
(policylint.semantics.directed, `DIRECTED`): the members are the objects whose findings the
scope can hold, the analysed objects what those findings read, rule by rule as its docstring
argues; it declines (and the sets above are the part) on what is no reference with a direction:
hosts, classes joined to their Gateways, selectors across namespaces, a Namespace removed (a
changed one it takes: what reads a Namespace is argued there).
On tenants that send traffic to each other's Services, one set holds every tenant, and the
directed part a few of them. Where the sets are joined already (the change's other side declined)
and their part is small (`SETS_FIRST`), it is taken: both parts are sound, and the directed one
would cost an index of every object's references to leave out a few objects.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from policylint.k8s.objects import K8sObject, ObjectKey
from policylint.k8s.roster import Roster
from policylint.semantics import directed
from policylint.semantics.namerefs import Reference, references
from policylint.semantics.partgraph import PartGraph
from policylint.values import frozen

# Below this many objects the whole project is analysed: the bookkeeping is not worth it.
MIN_OBJECTS = 200
# A scoped analysis that would cover more than this share of the objects runs over everything.
MAX_SHARE = 0.5
# Whether the part follows what reads what (policylint.semantics.directed) where it can prove
# that enough, rather than every reference both ways.
DIRECTED = True
# Where the sets are joined already and their part's members are at most this share of the
# objects, the part is theirs: the directed search would cost a pass over every object's references
# to leave out a few of those.
SETS_FIRST = 0.02


@frozen(slots=False)
class Scoped:
    """The objects to analyse and the keys of those whose findings are kept; `places`: where each
    object is in the input the search was given, file by file (`partgraph.files_of`), ascending."""

    objects: list[K8sObject]
    members: frozenset[ObjectKey]
    places: list[int] | None = None


def scope(
    objects: Sequence[K8sObject],
    origin_files: Iterable[str],
    removed: Iterable[ObjectKey] = (),
    *,
    hosts: Mapping[tuple[str, str], str] | None = None,
    min_objects: int | None = None,
    max_share: float | None = None,
    kept: PartGraph | None = None,
) -> Scoped | None:
    """The objects a run reporting on `origin_files` (and on what references `removed`, the
    objects a change deleted) must analyse; None when that is (nearly) everything, or when a
    origin is a cluster-scoped object, whose reach is the whole repository. `hosts`: the kinds
    whose objects declare hosts of a service registry, and their spec field listing them
    (profile `implementations[].hostBackends`): a reference by such a host's name, in any
    namespace, may resolve to the object. `kept`: the sets of an earlier call in this process
    (policylint.semantics.partgraph), brought to these objects and kept for the next. Of a
    roster's objects told by what was kept of their files (policylint.k8s.roster), only those the
    part holds are built."""
    limits = (MIN_OBJECTS if min_objects is None else min_objects, MAX_SHARE if max_share is None else max_share)
    return _scope(objects, origin_files, removed, hosts, limits, kept, exact=False)


def scope_exact(
    objects: Sequence[K8sObject],
    origin_files: Iterable[str],
    removed: Iterable[ObjectKey] = (),
    *,
    hosts: Mapping[tuple[str, str], str] | None = None,
    kept: PartGraph | None = None,
) -> Scoped | None:
    """`scope` where the findings wanted are those of the objects of `origin_files` and of the
    objects bearing the keys `removed` alone (the gate's base side: policylint.commands.change),
    not those a change of them could move: the directed search takes them as the members
    (`directed.searched`'s `exact`); the sets' members hold them and more."""
    return _scope(objects, origin_files, removed, hosts, (MIN_OBJECTS, MAX_SHARE), kept, exact=True)


def _scope(
    objects: Sequence[K8sObject],
    origin_files: Iterable[str],
    removed: Iterable[ObjectKey],
    hosts: Mapping[tuple[str, str], str] | None,
    limits: tuple[int, float],
    kept: PartGraph | None,
    exact: bool,
) -> Scoped | None:
    min_objects, max_share = limits
    if len(objects) < min_objects:
        return None
    files = frozenset(origin_files)
    removed = list(removed)
    # A Namespace is reached through its objects (all origins, below): a selector that reads its
    # labels belongs to what they reference. Another cluster-scoped origin (a class, a CRD) reaches
    # what no name traces.
    cluster_origins = [k for k in _keys_in(objects, files) if k.namespace is None] + [k for k in removed if k.namespace is None]
    if any(k.kind != "Namespace" for k in cluster_origins):
        return None
    graph = kept if kept is not None else PartGraph()
    graph.update(objects, hosts or {})
    if graph.everywhere:
        return None
    found = _Found(graph)
    origins = graph.in_files(files)
    by_sets: list[int] | None = None
    if graph.joined:
        # The sets are joined already (an earlier search of this process took them: the change's
        # other side, an editor's last update): where the part they give is small, the directed
        # part can leave out few of its objects, and its index reads every object's references.
        by_sets = _by_sets(found, origins, removed, cluster_origins)
        if len(by_sets) > SETS_FIRST * len(objects):
            by_sets = None
    directed = _directed(found, origins, removed, exact) if DIRECTED and by_sets is None else None
    if directed is not None:
        members, analysed = directed
        if len(members) > max_share * len(objects):
            return None
        # The context of every object analysed, not of the members alone: what an analysed
        # object gives a member's findings is decided by its own lookups too (a reference's
        # grant, whether its namespace holds or makes the kind, a producer there).
        keep = found.context(sorted(analysed))
        if len(keep) > max_share * len(objects):
            return None
        built = {i: graph.object(i) for i in keep}
        return Scoped(list(built.values()), frozenset(built[i].key for i in members), keep)
    members = by_sets if by_sets is not None else _by_sets(found, origins, removed, cluster_origins)
    if len(members) > max_share * len(objects):
        return None
    keep = found.context(members)
    if len(keep) > max_share * len(objects):
        return None
    built = {i: graph.object(i) for i in keep}  # the members among them
    return Scoped(list(built.values()), frozenset(built[i].key for i in members), keep)


def _by_sets(found: _Found, origins: list[int], removed: list[ObjectKey], cluster_origins: list[ObjectKey]) -> list[int]:
    """The members the sets give: every object of a set holding an origin (the module docstring)."""
    roots = found.origins(origins, removed, cluster_origins)
    return [i for i, label in enumerate(found.sets) if label in roots]


def _directed(found: _Found, origins: list[int], removed: list[ObjectKey], exact: bool) -> tuple[list[int], set[int]] | None:
    """The members, ascending, and the analysed objects of a search that follows what reads what
    (policylint.semantics.directed); None where it declines: the joins of this search that are no
    reference with a direction (hosts of a service registry, classes joined to their Gateways),
    and those it declines itself."""
    # Without joining a set where no class can join its Gateways (`classes_apart`): the sets are
    # read only where the search declines.
    if found.graph.hosts or not (found.graph.classes_apart() or not found.merged):
        return None
    search = directed.search_exact if exact else directed.search
    searched = search(found.names, found.namespaces_of, found.kinds, found.refs, origins, removed, found.graph.directed)
    if searched is None:
        return None
    members, analysed = searched
    return sorted(members), analysed


def _keys_in(objects: Sequence[K8sObject], files: frozenset[str]) -> list[ObjectKey]:
    """The keys of the objects of `files`, none built for it."""
    if not isinstance(objects, Roster):
        return [o.key for o in objects if o.doc.file in files]
    return [key for f, (name, _) in enumerate(objects.files) if name in files for key in objects.keys_of(f)]


class _Found:
    """The objects' references and the sets they fall into, in the graph's order, for one call
    of `scope`."""

    def __init__(self, graph: PartGraph) -> None:
        self.graph = graph
        self.refs = graph.refs()
        self.namespaces_of = graph.namespaces()
        # What the graph read of each object once: its properties cost a call each, per object.
        self.names, self.kinds = graph.names(), graph.kinds()
        self.existing = set(zip(self.namespaces_of, self.names))
        self._sets: tuple[list[int], dict[int, int]] | None = None

    @property
    def sets(self) -> list[int]:
        """The set of each object (`PartGraph.sets`), joined when first read."""
        return self._joined()[0]

    @property
    def merged(self) -> dict[int, int]:
        """The sets classes joined to their Gateways' (`PartGraph.sets`)."""
        return self._joined()[1]

    def _joined(self) -> tuple[list[int], dict[int, int]]:
        if self._sets is None:
            self._sets = self.graph.sets()
        return self._sets

    def origins(self, origins: list[int], removed: list[ObjectKey], cluster_origins: list[ObjectKey]) -> set[int]:
        """The sets of `origins` and of the objects a near-miss hint may point from (the module
        docstring)."""
        refs, namespaces_of, names = self.refs, self.namespaces_of, self.names
        origin_namespaces = (
            {namespaces_of[i] for i in origins} | {k.namespace for k in removed} | {k.name for k in cluster_origins}
        )
        origin_namespaces.discard(None)
        origin_names = {names[i] for i in origins} | {k.name for k in removed}
        existing = self.existing
        sets = self.sets
        roots = {sets[i] for i in origins}
        for i, own in enumerate(namespaces_of):
            if own in origin_namespaces:
                roots.add(sets[i])
                continue
            for namespace, name, explicit, _ in refs[i]:
                # A reference that finds nothing may be hinted at a origin of that name elsewhere.
                if (explicit and namespace in origin_namespaces) or (name in origin_names and (namespace, name) not in existing):
                    roots.add(sets[i])
                    break
        for key in removed:
            label = self.graph.label_of((key.namespace, key.name))
            if label is not None:
                roots.add(self.merged.get(label, label))
        return roots

    def context(self, members: list[int]) -> list[int]:
        """The places of the members and of what their lookups read beyond their own references,
        ascending."""
        refs, namespaces_of = self.refs, self.namespaces_of
        namespaces = {namespaces_of[i] for i in members} | {r.namespace for i in members for r in refs[i]}
        # A reference that finds nothing is hinted at objects of its name in other namespaces.
        referenced = {r.name for i in members for r in refs[i] if (r.namespace, r.name) not in self.existing}
        # One object of each kind (whether a kind is in the input at all): the first in the
        # index's order, as the index would answer it.
        keep = set(members) | self.graph.firsts()
        for i, (name, own) in enumerate(zip(self.names, namespaces_of)):
            if own is None or own in namespaces or name in referenced:
                keep.add(i)
        return sorted(keep)


# The reference walk (policylint.semantics.namerefs), as callers of the part search name it.
__all__ = ["MAX_SHARE", "MIN_OBJECTS", "Reference", "Scoped", "references", "scope"]
