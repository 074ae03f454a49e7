"""The sets `components.scope` joins objects into, kept between the runs of one process and
updated for the files that changed instead of joined again over every object.

A language server runs a scoped analysis per edit over the same workspace, of which one file
changed; joining every object's references anew was a seventh of an edit's analysis at 10,000
objects (docs/performance.md#the-language-server). The graph is bipartite: objects on one side,
on the other the nodes their references join them to (a name in a namespace, a namespace's
"every object" node, a namespace's ReferenceGrants, a service registry's host). Which nodes an
object joins (its *edges*, `_edges`) depends on the object and on a few facts about all objects
(`_Facts`: the names of cluster-scoped objects and of namespaces, the namespaces holding grants,
the namespaces something reaches whole, the declared hosts).

A union-find cannot take an edge back, so the sets are not kept as one: each set is a *label*,
and an update with the same facts relabels only the sets the changed files' objects were in
before and the sets the nodes of their new edges are in, joining again the edges of those sets'
objects alone. Every other set keeps its label: none of its objects changed, and no new edge
reaches any of its nodes, so it is the same set of the new graph (the edges of an unchanged
object are a function of the object and the facts). Removals and renames that split a set are
so handled like additions that join two. When the facts change (a namespace, a grant's
namespace, a selector's namespace or a host appears or goes), every edge may change and all is
joined again. A file's objects are taken as unchanged when they are the same objects as the
run before (`policylint.incremental.resident` hands them over; they are immutable), or the same
`Deferred` of a roster.

The graph reads the objects file by file (`files_of`). A roster's file told by what an earlier run
kept of it (policylint.k8s.roster, policylint.incremental.shells) is read from its rows
(`Deferred.outline`): its objects are built only when a part holds them, so the first run on a new
commit, which joins every object, builds what the same run again builds. Two answers depend on the
project index's order, which sorts the objects by key: the one object of each kind the part's
context holds (`firsts`), and which class of a name joins its Gateways, class by class in the order
of their first Gateways (`sets`); both are worked out from each object's place in that order
(`_File.order_key`, `ordering.order_key` read from the graph), never from the graph's own.

GatewayClasses join their Gateways after the sets are found, as `components` describes, over the
labels: the rule reads the sets, not edges, and costs one step per class and Gateway.

The sets are joined when first read, not by `update`: the directed part
(policylint.semantics.directed) reads them only where it declines, and where it can prove no class
joins its Gateways without them (`classes_apart`); a first run that it decides alone joined every
object for nothing (docs/performance.md, "The hook's first run after one value changed: the sets
joined only when read"). Once joined, each update keeps them so.
tests/scope/test_part_graph.py compares every update with the sets joined from nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from collections.abc import Set as AbstractSet
from typing import TYPE_CHECKING, Any

from policylint.k8s.roster import Deferred, Outline, Roster
from policylint.semantics.directed import Kept
from policylint.semantics.namerefs import EVERYWHERE, Reference, gateway_class, references
from policylint.values import frozen

if TYPE_CHECKING:
    from policylint.k8s.objects import K8sObject
    from policylint.k8s.ordering import Order

_GATEWAY_CLASS = ("gateway.networking.k8s.io", "GatewayClass")
_GRANT = ("gateway.networking.k8s.io", "ReferenceGrant")
# Nodes other than a name in a namespace (a 2-tuple) are 3-tuples tagged by what they stand for.
_WIDE, _GRANTS, _HOST = "*", "g", "h"
_NONE: list[str] = []  # no host declared (shared, never changed)


@frozen
class _Facts:
    """What every object's edges read of the other objects (the module docstring)."""

    cluster_names: frozenset[str]  # names of cluster-scoped objects but Namespaces
    namespace_names: frozenset[str | None]  # the namespaces objects live in, and Namespaces' names
    grant_namespaces: frozenset[str | None]
    wide: frozenset[str | None]  # namespaces whose every object a reference reaches
    hosts: frozenset[str]  # hosts a service registry's object declares


class _File:
    """One file's objects and what the graph reads of them, computed once per object."""

    __slots__ = (
        "cluster_names",
        "declared",
        "edges",
        "edges_for",
        "everywhere",
        "first_of_kind",
        "gateways",
        "grant_namespaces",
        "hosts",
        "kinds",
        "labels",
        "names",
        "namespace_names",
        "namespaces",
        "objects",
        "ref_names",
        "refs",
        "selected",
    )

    def __init__(self, objects: Sequence[K8sObject], hosts: Mapping[tuple[str, str], str]) -> None:
        # A file's objects as the run holds them: built, or a `Deferred` whose objects are built
        # only when read (policylint.k8s.roster), told by what was kept of the file instead.
        self.objects = objects
        outline = outline_of(objects)
        self.names, self.namespaces, self.kinds = outline.names, outline.namespaces, outline.kinds
        self.refs: list[list[Reference]] = outline.references
        classes: Sequence[str | None] = outline.classes
        self.everywhere = False
        kinds = self.kinds
        self.cluster_names = {n for n, ns, gk in zip(self.names, self.namespaces, kinds) if ns is None and gk[1] != "Namespace"}
        self.namespace_names = set(self.namespaces) | {n for n, gk in zip(self.names, kinds) if gk == ("", "Namespace")}
        self.grant_namespaces = {ns for ns, gk in zip(self.namespaces, kinds) if gk == _GRANT}
        self.selected: set[str | None] = set()
        self.ref_names: set[str] = set()
        for found in self.refs:
            for ref in found:
                if ref.selector:
                    self.selected.add(ref.namespace)
                    self.everywhere = self.everywhere or ref == EVERYWHERE
                else:
                    self.ref_names.add(ref.name)
        self.declared: list[list[str]] = [_NONE] * len(objects)  # per object, the hosts it declares
        if hosts:
            for i, gk in enumerate(kinds):
                field = hosts.get(gk)
                # Only a registry's objects are read (built) for their hosts.
                value = objects[i].spec.get(field) if field is not None else None
                if type(value) is list:
                    self.declared[i] = [h for h in value if type(h) is str]
        self.hosts = {h for declared in self.declared for h in declared}
        # The class each Gateway names, by its position in the file.
        self.gateways = {i: classes[i] for i, gk in enumerate(kinds) if gk[1] == "Gateway"}
        self.edges: list[list[Any]] = []
        self.edges_for: _Facts | None = None
        self.labels: list[int] = []
        self.first_of_kind: dict[tuple[str, str], int] | None = None

    def order_key(self, i: int) -> Order:
        """Where the `i`-th object sits in the project index's order (`ordering.order_key`),
        from what the graph read of it."""
        objects = self.objects
        place = objects.place(i) if isinstance(objects, Deferred) else objects[i].sort_key()
        group, kind = self.kinds[i]
        return (group, kind, self.namespaces[i] or "", self.names[i], place)

    def firsts(self) -> dict[tuple[str, str], int]:
        """The position of the file's first object of each kind in the index's order: by namespace
        and name, then (objects of one key) by where each is written."""
        if self.first_of_kind is None:
            best: dict[tuple[str, str], tuple[tuple[str, str], int]] = {}
            for i, (gk, namespace, name) in enumerate(zip(self.kinds, self.namespaces, self.names)):
                key = (namespace or "", name)
                found = best.get(gk)
                if found is None or key < found[0] or (key == found[0] and self.order_key(i) < self.order_key(found[1])):
                    best[gk] = (key, i)
            self.first_of_kind = {gk: i for gk, (_, i) in best.items()}
        return self.first_of_kind

    def shape(self) -> tuple[Any, ...]:
        """Everything the graph reads of the file's objects: two files of one shape have the same
        edges under the same facts, and give the same facts."""
        return (self.names, self.namespaces, self.kinds, self.refs, self.declared, self.gateways)

    def connect(self, facts: _Facts) -> None:
        """Each object's edges under `facts` (what `components` joins, the module docstring there)."""
        if self.edges_for is facts or self.edges_for == facts:
            return
        cluster_names, namespace_names, grant_namespaces = facts.cluster_names, facts.namespace_names, facts.grant_namespaces
        wide, hosts = facts.wide, facts.hosts
        out: list[list[Any]] = []
        for name, own, kind, refs, declared in zip(self.names, self.namespaces, self.kinds, self.refs, self.declared):
            edges: list[Any] = [(own, name)]
            if kind == _GRANT:
                edges.append((_GRANTS, own, 0))
            for namespace, target, explicit, selector in refs:
                if target in hosts:
                    edges.append((_HOST, target, 0))
                if selector:
                    edges.append((_WIDE, namespace, 0))
                    continue
                edges.append((namespace, target))
                if not explicit and target in cluster_names:
                    edges.append((None, target))
                if target in namespace_names:
                    edges.append((_WIDE, target, 0))
                if explicit and namespace != own and namespace in grant_namespaces:
                    edges.append((_GRANTS, namespace, 0))
            if own in wide:
                edges.append((_WIDE, own, 0))
            if declared:
                edges.extend((_HOST, host, 0) for host in declared)
            out.append(edges)
        self.edges, self.edges_for = out, facts


class PartGraph:
    """The sets of the last run's objects, by file; `update` brings them to another run's."""

    def __init__(self) -> None:
        self._files: dict[str, _File] = {}
        self._hosts: Mapping[tuple[str, str], str] | None = None
        self._facts: _Facts | None = None
        self._node_label: dict[Any, int] = {}
        self._label_nodes: dict[int, list[Any]] = {}
        self._not_gateways: dict[int, int] = {}  # label -> how many of its objects are not Gateways
        self._next = 0
        # Whether the labels are the sets of the last update's objects: a search that the directed
        # part decides alone never reads them (`classes_apart`), so they are joined when first
        # read (`_labelled`), from nothing, and kept up to date by each update from then on.
        self._current = False
        # This run's objects in input order: file, position in it.
        self.order: list[tuple[_File, int]] = []
        self.everywhere = False
        # The directed search's index, kept with the sets for the next search over these files:
        # the change's other side patches it rather than index every object again.
        self.directed = Kept()

    @property
    def hosts(self) -> bool:
        """Whether an object of the last update declares hosts of a service registry."""
        return self._facts is not None and bool(self._facts.hosts)

    @property
    def joined(self) -> bool:
        """Whether the sets of the last update's objects are joined (read by a search since the
        graph was made, and kept up to date since), so that reading them costs no join."""
        return self._current

    @property
    def fresh(self) -> bool:
        """Whether no run brought the sets to its objects yet."""
        return self._facts is None

    def update(self, objects: Sequence[K8sObject], hosts: Mapping[tuple[str, str], str]) -> None:
        """Bring the sets to those of `objects`, joining again only what the changed files reach.
        The graph's order is the objects', file by file (`files_of`): a roster's objects whose
        files are told by what was kept of them are not built (policylint.k8s.roster)."""
        grouped = files_of(objects)
        if hosts != self._hosts:  # which objects declare hosts, and so every file's facts
            self._files, self._hosts = {}, dict(hosts)
        before = self._files
        files: dict[str, _File] = {}
        changed: list[_File] = []
        reshaped: set[str] = set()  # files of other objects of the same shape (below)
        for name, found in grouped:
            kept = before.get(name)
            if kept is not None and _same_objects(kept.objects, found):
                files[name] = kept
                continue
            files[name] = entry = _File(found, hosts)
            if kept is not None and kept.shape() == entry.shape():
                # Other objects with what the graph reads of them unchanged (an edit of a value or
                # a comment): their edges, hence their sets, are the old objects'.
                entry.edges, entry.edges_for, entry.labels = kept.edges, kept.edges_for, kept.labels
                reshaped.add(name)
            else:
                changed.append(entry)
        gone = [entry for name, entry in before.items() if files.get(name) is not entry and name not in reshaped]
        order = [(entry, i) for entry in files.values() for i in range(len(entry.objects))]
        self._files, self.order = files, order
        self.everywhere = any(f.everywhere for f in files.values())
        for entry in changed:
            entry.labels = [-1] * len(entry.objects)
        facts = _facts(files.values())
        if not self._current:
            # No labels to bring up to date: joined from nothing if ever read.
            self._facts = facts
            return
        if facts != self._facts:
            self._facts = facts
            everything = [(entry, i) for entry in files.values() for i in range(len(entry.objects))]
            self._relabel(everything, set(self._label_nodes))
            return
        if not changed and not gone:
            return
        affected = {label for entry in gone for label in entry.labels}
        node_label = self._node_label
        for entry in changed:
            entry.connect(facts)
            for edges in entry.edges:
                for node in edges:
                    label = node_label.get(node)
                    if label is not None:
                        affected.add(label)
        # Per object, not per file: an unchanged object of a set no change reaches keeps its
        # label, which the other objects of its set keep too.
        again = [(entry, i) for entry in files.values() for i, label in enumerate(entry.labels) if label < 0 or label in affected]
        self._relabel(again, affected)

    def _labelled(self) -> None:
        """Join every object from nothing unless the labels are the last update's sets."""
        if self._current:
            return
        self._node_label, self._label_nodes, self._not_gateways = {}, {}, {}
        self._relabel([(entry, i) for entry in self._files.values() for i in range(len(entry.objects))], set())
        self._current = True

    def classes_apart(self) -> bool:
        """Whether no GatewayClass joins its Gateways in `sets` (its second answer empty), proven
        from what each object reads without joining any set; False: that takes the sets.

        `sets` joins a class's Gateways when the class references something, or when an object
        other than the class and Gateways is in the set of the class's name. Where the class is the
        only object bearing its name among the cluster-scoped ones, references nothing, declares
        no host and no reference anywhere is to its name (nor does a selector reach the
        cluster-scoped objects whole), its only edge is its name's node and that node has no other
        object: its set is the class alone, so it joins nothing; and where no class joins, each
        class reads the sets as they are, whatever the order."""
        facts = self._facts
        if facts is None:
            return False
        named: set[str] = set()  # classes named by a Gateway
        for entry in self._files.values():
            named.update(name for name in entry.gateways.values() if name is not None)
        if not named:
            return True
        if None in facts.wide or any(not named.isdisjoint(entry.ref_names) for entry in self._files.values()):
            return False
        bearing: dict[str, int] = {}  # of the names in `named`: 1, the one class of its name; -1, not proven
        for entry in self._files.values():
            if None not in entry.namespaces:
                continue
            for i, (name, own) in enumerate(zip(entry.names, entry.namespaces)):
                if own is None and name in named:
                    if bearing.get(name) is not None or entry.kinds[i] != _GATEWAY_CLASS:
                        bearing[name] = -1  # another object of the name, or not a class: not proven
                    elif entry.refs[i] or entry.declared[i]:
                        bearing[name] = -1
                    else:
                        bearing[name] = 1
        return all(n > 0 for n in bearing.values())

    def _relabel(self, slots: Sequence[tuple[_File, int]], affected: set[int]) -> None:
        """Join the objects at `slots` again: the objects of the sets labelled `affected`, and the
        new ones (labelled -1)."""
        node_label, label_nodes, not_gateways = self._node_label, self._label_nodes, self._not_gateways
        for label in affected:
            for node in label_nodes.pop(label, ()):
                if node_label.get(node) == label:
                    del node_label[node]
            not_gateways.pop(label, None)
        facts = self._facts
        assert facts is not None
        # A union-find over ints: the objects in the order of `slots`, nodes after them.
        parent = list(range(len(slots)))
        nodes: dict[Any, int] = {}

        def find(x: int) -> int:
            root = x
            while parent[root] != root:
                root = parent[root]
            while parent[x] != root:
                parent[x], x = root, parent[x]
            return root

        # Each file's edges once (`connect` answers at once when they are this facts', but a call
        # per object was a tenth of a search from nothing).
        for entry in dict.fromkeys(entry for entry, _ in slots):
            entry.connect(facts)
        for k, (entry, i) in enumerate(slots):
            root = k  # the root of k's set: k has joined nothing yet
            for node in entry.edges[i]:
                found = nodes.get(node)
                if found is None:
                    # A new node joins the object's set directly: it is never a root, so every
                    # root is an object.
                    nodes[node] = len(parent)
                    parent.append(root)
                    continue
                # A node's parent is an object (never a node), most often a root already.
                other = parent[found]
                if parent[other] != other:
                    other = find(other)
                if other < root:
                    parent[root] = root = other
                elif other > root:
                    parent[other] = root
        self._label(slots, nodes, parent, find)

    def _label(
        self, slots: Sequence[tuple[_File, int]], nodes: Mapping[Any, int], parent: list[int], find: Callable[[int], int]
    ) -> None:
        """A new label for each set the objects at `slots` were joined into, and its nodes."""
        node_label, label_nodes, not_gateways = self._node_label, self._label_nodes, self._not_gateways
        labels_of: dict[int, int] = {}
        roots = [find(k) for k in range(len(slots))]
        for k, (entry, i) in enumerate(slots):
            root = roots[k]
            made = labels_of.get(root)
            if made is None:
                made = labels_of[root] = self._next
                self._next += 1
                label_nodes[made] = []
                not_gateways[made] = 0
            entry.labels[i] = made
            if entry.kinds[i][1] != "Gateway":
                not_gateways[made] += 1
        for node, x in nodes.items():
            label = labels_of[roots[parent[x]]]  # a node's parent is an object: its root is known
            node_label[node] = label
            label_nodes[label].append(node)

    def sets(self) -> tuple[list[int], dict[int, int]]:
        """The set of each object of the run, in input order, and the set each label is part of
        where that is another (absent: the label's own), GatewayClasses joined to their
        Gateways (`components._join_classes` before): a class that something other than its
        Gateways references, or that has parameters, joins them, class by class in the order of
        each class's first Gateway, each reading the sets the classes before it joined."""
        self._labelled()
        order = self.order
        base = [entry.labels[i] for entry, i in order]
        by_class: dict[str, list[int]] = {}
        first_gateway: dict[str, Order] = {}
        classes: dict[str, tuple[Order, int]] = {}
        for k, (entry, i) in enumerate(order):
            kind = entry.kinds[i]  # (group, kind), read once per object (`_File`)
            if kind == _GATEWAY_CLASS:
                # Of several classes of one name (PL005), the last in the index's order.
                key, found = entry.order_key(i), classes.get(entry.names[i])
                if found is None or found[0] < key:
                    classes[entry.names[i]] = (key, k)
            elif kind[1] == "Gateway":
                name = entry.gateways[i]
                if name is not None:
                    by_class.setdefault(name, []).append(k)
                    key, first = entry.order_key(i), first_gateway.get(name)
                    if first is None or key < first:
                        first_gateway[name] = key
        if not classes or not by_class:
            return base, {}
        parent: dict[int, int] = {}
        count = dict(self._not_gateways)

        def find(x: int) -> int:
            while parent.get(x, x) != x:
                x = parent[x]
            return x

        # Class by class in the index's order of each one's first Gateway: each reads the sets the
        # classes before it joined.
        for name in sorted(by_class, key=first_gateway.__getitem__):
            gateways = by_class[name]
            found = classes.get(name)
            if found is None:
                continue
            index = found[1]
            entry, i = order[index]
            node = self._node_label.get((None, name))
            root = find(node) if node is not None else None
            # Something but the class itself and Gateways in the set of the class's name.
            referenced = root is not None and count[root] - (1 if find(base[index]) == root else 0) > 0
            if referenced or entry.refs[i]:
                for g in gateways:
                    a, b = find(base[index]), find(base[g])
                    if a != b:
                        parent[b] = a
                        count[a] += count.pop(b)
        return [find(label) for label in base], {label: find(label) for label in parent}

    def refs(self) -> list[list[Reference]]:
        return [entry.refs[i] for entry, i in self.order]

    def namespaces(self) -> list[str | None]:
        return [entry.namespaces[i] for entry, i in self.order]

    def names(self) -> list[str]:
        return [entry.names[i] for entry, i in self.order]

    def kinds(self) -> list[tuple[str, str]]:
        """Each object's (group, kind), in input order."""
        return [entry.kinds[i] for entry, i in self.order]

    def object(self, k: int) -> K8sObject:
        """The `k`-th object of the graph's order, built if it was not."""
        entry, i = self.order[k]
        return entry.objects[i]

    def in_files(self, names: AbstractSet[str]) -> list[int]:
        """The places in the graph's order of the objects of the files `names`."""
        out: list[int] = []
        start = 0
        for name, entry in self._files.items():
            n = len(entry.objects)
            if name in names:
                out.extend(range(start, start + n))
            start += n
        return out

    def firsts(self) -> set[int]:
        """The place of the first object of each kind in the project index's order (what the
        index sorts by, `ordering.order_key`, read from the graph), none built for it."""
        best: dict[tuple[str, str], tuple[tuple[str, str], _File, int, int]] = {}
        start = 0
        for entry in self._files.values():
            for gk, i in entry.firsts().items():
                # By namespace and name, the place (a path formatted) only between objects of
                # one key: the kind is the same, and the rest of the index's order follows.
                key, found = (entry.namespaces[i] or "", entry.names[i]), best.get(gk)
                if found is None or key < found[0] or (key == found[0] and entry.order_key(i) < found[1].order_key(found[2])):
                    best[gk] = (key, entry, i, start + i)
            start += len(entry.objects)
        return {found[3] for found in best.values()}

    def file_refs(self) -> list[list[list[Reference]]]:
        """Each file's objects' references, file by file in the graph's order."""
        return [entry.refs for entry in self._files.values()]

    def named_classes(self) -> set[str]:
        """The classes the Gateways name."""
        return {name for entry in self._files.values() for name in entry.gateways.values() if name is not None}

    def label_of(self, node: tuple[str | None, str]) -> int | None:
        """The label of the set a name in a namespace is in (before classes join), if any object
        bears or references it."""
        self._labelled()
        return self._node_label.get(node)


def outline_of(objects: Sequence[K8sObject]) -> Outline:
    """What the graph reads of a file's objects: told by what was kept of the file (a
    `Deferred`), or read from the objects built."""
    if isinstance(objects, Deferred):
        return objects.outline()
    kinds = [(o.group, o.kind) for o in objects]
    return Outline(
        [o.name for o in objects],
        [o.namespace for o in objects],  # a property: read once
        kinds,
        [references(o) for o in objects],
        [gateway_class(o) if gk[1] == "Gateway" else None for o, gk in zip(objects, kinds)],
    )


def files_of(objects: Sequence[K8sObject]) -> list[tuple[str, Sequence[K8sObject]]]:
    """The objects file by file: a roster's files (policylint.k8s.roster), or the objects grouped
    by file in the order given."""
    if isinstance(objects, Roster):
        return objects.files
    grouped: dict[str, list[K8sObject]] = {}
    for obj in objects:
        grouped.setdefault(obj.doc.file, []).append(obj)
    return list(grouped.items())


def _same_objects(kept: Sequence[K8sObject], found: Sequence[K8sObject]) -> bool:
    """Whether a file's objects are the ones the graph read: the same `Deferred` (handed from the
    last run, policylint.incremental.resident), or the same objects in the same order."""
    if kept is found:
        return True
    if isinstance(kept, Deferred) or isinstance(found, Deferred) or len(kept) != len(found):
        return False
    return all(map(_same, kept, found))


def _same(a: K8sObject, b: K8sObject) -> bool:
    return a is b


def _facts(files: Iterable[_File]) -> _Facts:
    cluster_names: set[str] = set()
    namespace_names: set[str | None] = set()
    grant_namespaces: set[str | None] = set()
    selected: set[str | None] = set()
    ref_names: set[str] = set()
    hosts: set[str] = set()
    for entry in files:
        cluster_names |= entry.cluster_names
        namespace_names |= entry.namespace_names
        grant_namespaces |= entry.grant_namespaces
        selected |= entry.selected
        ref_names |= entry.ref_names
        hosts |= entry.hosts
    # A namespace's every-object node exists when a selector in it, or a reference by its name,
    # joins it (`components` before: only then are the namespace's objects joined to it).
    wide = selected | (ref_names & namespace_names)
    return _Facts(
        frozenset(cluster_names), frozenset(namespace_names), frozenset(grant_namespaces), frozenset(wide), frozenset(hosts)
    )
