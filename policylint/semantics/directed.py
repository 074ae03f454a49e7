"""A part found by what reads what: the objects whose findings a change can put in the report
scope, and what those findings read, rather than every object a reference joins in either
direction (policylint.semantics.components).

The part search joins an object with everything it names and everything naming it, so tenants
that send traffic to each other's Services make one set: on a repository where each tenant's
routes reach the Services of the tenants before it, a change to one route's path analyses every
tenant (docs/performance.md, "The hook's first run after a one-value change where the change
reaches everything"). Yet the findings such a change can move, and what they read, are a few
tenants'. This search follows the same over-approximated references (`namerefs.references`: any
mapping with a string `name` outside `metadata` and `status`, whatever its kind), with their
direction.

**What an object reads** (`_Graph.forward`), for the analysis of its findings to be that of a
run over everything: what it names, in its namespace or the one given; the objects of its own
name in its namespace (duplicates, PL005, and what a near miss may take it for); the
ReferenceGrants of a namespace it names across (whether the reference is permitted); every
object of a namespace whose name it names (a policy on the Namespace) or that a label selector
of it reaches (`targetSelectors`, a profile's `selections`: the objects chosen, and what they
read in turn). Two selectors read only what is always analysed, and are not followed: a Gateway's
(`allowedRoutes` and `allowedListeners` namespace selectors, GEP-1867 and the Gateway API
reference) read Namespaces' labels, and cluster-scoped objects are the context of every part; a
core Service's `selector` chooses Pods, which no stage reads (the selectors read are those two,
policies' `targetSelectors` and the profiles' `selections`, all policies). What an object reads
reads in turn: the closure (`_Graph.closure`) is transitive.

**The members** (whose findings are kept), for a change of the files `origins` and the objects
`removed`, are everything a finding in the report scope can be on (policylint.report_scope: a
finding in a changed file, about an object there, or with a note there):

- the changed files' objects and the objects the change removed;
- every object of their namespaces, every object naming into those namespaces, and every object
  whose reference to one of their names finds nothing (near-miss hints: the part search's own
  origins, object by object rather than set by set);
- what the changed objects read (transitively), and every object reading one of those
  (siblings: another route on the changed route's Gateway, whose conflict finding notes the
  changed route; a BackendTLSPolicy on a Service the changed route reaches, whose tallies count
  it; a policy on the Gateway a changed route policy's route attaches to, whose overrides it
  meets);
- transitively, every object reading a member (a policy on a route naming a changed Service:
  its findings read the route, whose findings read the Service).

**What is analysed**: the members, what they read (transitively), every object reading what they
read (a Gateway's whole subtree: its listeners' conflicts, PL408, overrides; every route reaching
a Service they reach: the BackendTLSPolicies' tallies and blast radii), and what those read in
turn (so that whether each of those routes is accepted, by which Gateway, is decided as in a run
over everything); and the context `components` adds (every cluster-scoped object, the objects
hinted at, one object of each kind, every object of the namespaces the analysed objects live in
or name), for every analysed object, not the members alone: what an analysed object gives a
member's findings is decided by its lookups as well as by what it names (whether a reference is
granted, whether the input holds or makes the kind in that namespace, what a producer there
makes). An object analysed but not a member has its findings dropped: only what it gives the
members' findings counts.

**When it declines** (None, and the caller searches as before): a reference that may reach every
namespace (a target selector across namespaces), objects declaring hosts of a service registry
(a host joins objects in any namespace by a name no reference spells), GatewayClasses joined to
their Gateways (a policy on a class, a class's parameters: every Gateway of the class reads it),
a cluster-scoped object other than a Namespace among the changed ones (a class, a CRD: the caller
declines first), and a Namespace removed (deleted or renamed: the sets answer it, as before).
These are the joins the part search makes that are not references with a direction.

**A Namespace changed** (among the changed files' objects, as a tenant's file holds its
Namespace): its name is an origin namespace, so every object of the namespace is a member, as for
a changed object of that namespace. What reads a Namespace, from the stages and rules:

- its labels: a listener's `allowedRoutes` and a Gateway's `allowedListeners` namespace selector,
  for a route or ListenerSet *of that namespace* (policylint.semantics.namespace_admission; the
  findings that note "Namespace ... has these labels", rules/attachment.py, are about that route
  or ListenerSet); a profile's `boundBy` label, for a target *of that namespace*, which the policy
  names in it (`Resolution._unbound`); a producer's namespace selector, for a reference *from that
  namespace* (policylint.semantics.producers); a target selector across namespaces, for any
  object (`namerefs.EVERYWHERE`: the whole repository is analysed);
- its existence: the simulation's namespace level above the Gateways *of that namespace*; a
  policy naming it as its target, a reference followed here (the node of its name with no
  namespace, and its namespace whole); a reference to its name finding nothing elsewhere (a near
  miss: the origins' names below);
- its own findings (its schema, its fields' types, another Namespace of its name) read itself and
  the objects of its name with no namespace, which it reads.

So every finding a Namespace's labels or existence decides is about an object of its namespace,
one naming into it or by its name, or one reading those, all members by the rules below. A
finding elsewhere that changes with its labels (a Gateway of another namespace that admits a
route of it, or no longer does; the routes on that Gateway) is in the report scope only through
a note at an object of the changed files, and such a note is made of what the noted object
reads: a route of the changed files reads its parent Gateway, so the Gateway and its readers are
members (the siblings below). A label no selector reads changes nothing but the Namespace's own
findings. What the members' findings read of any Namespace is in the part: every cluster-scoped
object is the context of every part (`components._Found.context`), which is why a Gateway's
namespace selectors need no edge here. tests/incremental/test_incremental.py's Namespace edits
(labels a selector matches or no longer matches, a Namespace renamed, deleted and added, its
annotations changed) hold it to a run analysing the whole repository.

tests/incremental/test_incremental.py holds it to a run analysing the whole repository: random
sequences of value edits and of edits that reach beyond a Gateway (renames, sectionNames,
grants, targets and parents moved), on tenants sharing Services, tenants reaching a neighbour,
and isolated ones; tests/scope/test_directed.py pins what the part holds on hand-made shapes.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from collections.abc import Set as AbstractSet
from typing import NamedTuple

from policylint.k8s.objects import ObjectKey
from policylint.semantics.namerefs import Reference

_GRANT = ("gateway.networking.k8s.io", "ReferenceGrant")
_NAMESPACE = ("", "Namespace")
# Kinds whose label selectors read nothing but cluster-scoped objects, or nothing the analysis
# reads (the module docstring): a Gateway's namespace selectors, a core Service's Pod selector.
_SELECTORS_READ_NOTHING = frozenset({("gateway.networking.k8s.io", "Gateway"), ("", "Service")})


class Readers(NamedTuple):
    """Who reads whom, as an index holds it (`_Graph`): what each object reads, the readers of
    each name in a namespace, of each namespace whole and of each namespace's grants, and every
    selector reference with its object."""

    out: list[list[int]]
    naming: dict[tuple[str | None, str], list[int]]
    reading_namespace: dict[str | None, list[int]]
    reading_grants: dict[str | None, list[int]]
    selecting: list[tuple[int, str | None, str, bool]]


class _Graph:
    """Who reads whom among the objects of one search, from their references (the module
    docstring), in the part graph's order."""

    def __init__(
        self,
        names: Sequence[str],
        namespaces: Sequence[str | None],
        kinds: Sequence[tuple[str, str]],
        refs: Sequence[Sequence[Reference]],
    ) -> None:
        self._tables(names, namespaces, kinds)
        self.refs = refs
        # Who reads each node: a name in a namespace, a namespace whole, a namespace's grants.
        self.naming: dict[tuple[str | None, str], list[int]] = {}
        self.reading_namespace: dict[str | None, list[int]] = {}
        self.reading_grants: dict[str | None, list[int]] = {}
        # Every selector reference, with its object: a selector reads a namespace whole, and is
        # not among the nodes above, yet a search's seeds read its namespace and name.
        self.selecting: list[tuple[int, str | None, str, bool]] = []
        self.out: list[list[int]] = []
        for i in range(len(names)):
            self.out.append(self._reads(i, refs[i]))

    def _tables(self, names: Sequence[str], namespaces: Sequence[str | None], kinds: Sequence[tuple[str, str]]) -> None:
        """What is defined where, which namespaces hold objects and grants, which names are
        cluster-scoped: functions of the names, namespaces and kinds alone."""
        self.names, self.namespaces, self.kinds = names, namespaces, kinds
        defined: dict[tuple[str | None, str], list[int]] = {}
        in_namespace: dict[str | None, list[int]] = {}
        grants: dict[str | None, list[int]] = {}
        for i, (name, own, kind) in enumerate(zip(names, namespaces, kinds)):
            defined.setdefault((own, name), []).append(i)
            in_namespace.setdefault(own, []).append(i)
            if kind == _GRANT:
                grants.setdefault(own, []).append(i)
        self.defined, self.in_namespace, self.grants = defined, in_namespace, grants
        self.cluster_names = {name for name, own in zip(names, namespaces) if own is None}

    @classmethod
    def restored(
        cls, names: Sequence[str], namespaces: Sequence[str | None], kinds: Sequence[tuple[str, str]], readers: Readers
    ) -> _Graph:
        """The index of objects whose readers were kept (policylint.incremental.keptindex): the
        tables of what is defined where made again from the names, namespaces and kinds, the
        rest as given. Its objects' references are not held (`refs` is empty): `patch` is given
        the old and new references of each object it changes."""
        graph = cls.__new__(cls)
        graph._tables(names, namespaces, kinds)
        graph.refs = []
        graph.out, graph.naming, graph.reading_namespace, graph.reading_grants, graph.selecting = readers
        return graph

    def readers_kept(self) -> Readers:
        """What `restored` takes besides the names, namespaces and kinds."""
        return Readers(self.out, self.naming, self.reading_namespace, self.reading_grants, self.selecting)

    def _nodes(
        self, i: int, refs: Sequence[Reference]
    ) -> tuple[dict[tuple[str | None, str], None], dict[str | None, None], dict[str | None, None]]:
        """The nodes object `i` reads through its references `refs`, each once: names in a
        namespace, namespaces whole, the grants of namespaces. A function of its references and
        of the names, namespaces and kinds of every object (which namespaces hold objects, which
        names are cluster-scoped)."""
        own, kind = self.namespaces[i], self.kinds[i]
        nodes: dict[tuple[str | None, str], None] = {(own, self.names[i]): None}
        wholes: dict[str | None, None] = {}
        across: dict[str | None, None] = {}
        cluster_names, in_namespace = self.cluster_names, self.in_namespace
        for namespace, name, explicit, selector in refs:
            if selector:
                if kind not in _SELECTORS_READ_NOTHING:
                    wholes[namespace] = None
                continue
            nodes[namespace, name] = None
            if not explicit and name in cluster_names:
                nodes[None, name] = None
            if name in in_namespace:  # a namespace's name: the namespace whole
                wholes[name] = None
            if explicit and namespace != own:
                across[namespace] = None
        return nodes, wholes, across

    def _reads(self, i: int, refs: Sequence[Reference]) -> list[int]:
        """What object `i` reads directly through `refs`; records it as a reader of each node on
        the way, and its selectors."""
        nodes, wholes, across = self._nodes(i, refs)
        self.selecting.extend((i, namespace, name, explicit) for namespace, name, explicit, selector in refs if selector)
        found: list[int] = []
        for node in nodes:
            self.naming.setdefault(node, []).append(i)
            found.extend(self.defined.get(node, ()))
        for namespace in wholes:
            self.reading_namespace.setdefault(namespace, []).append(i)
            found.extend(self.in_namespace.get(namespace, ()))
        for namespace in across:
            self.reading_grants.setdefault(namespace, []).append(i)
            found.extend(self.grants.get(namespace, ()))
        return found

    def patched(self, refs: Sequence[Sequence[Reference]]) -> _Graph:
        """This index brought to the same objects' names, namespaces and kinds with the
        references `refs`, in place (`patch`): the objects whose references are other (not the
        same lists, nor equal ones) are patched."""
        changed = {i: (was, now) for i, (now, was) in enumerate(zip(refs, self.refs)) if now is not was and now != was}
        self.patch(changed)
        self.refs = refs
        return self

    def patch(self, changed: Mapping[int, tuple[Sequence[Reference], Sequence[Reference]]]) -> None:
        """Each object of `changed` (its references before and now) taken out of the nodes it read
        and reading its new ones. The tables of what is defined where, which namespaces hold
        objects and grants, and which names are cluster-scoped are functions of the names,
        namespaces and kinds alone, so every other object reads what it read; the readers of a
        node are the same objects as an index built from nothing holds (in another order, which
        no search reads: its closures and seeds are sets)."""
        for i, (was, _) in changed.items():
            nodes, wholes, across = self._nodes(i, was)
            for node in nodes:
                self.naming[node].remove(i)
            for namespace in wholes:
                self.reading_namespace[namespace].remove(i)
            for namespace in across:
                self.reading_grants[namespace].remove(i)
        if changed:
            self.selecting = [found for found in self.selecting if found[0] not in changed]
        for i, (_, now) in changed.items():
            self.out[i] = self._reads(i, now)

    def seeds(
        self, origins: Iterable[int], origin_namespaces: AbstractSet[str | None], origin_names: AbstractSet[str]
    ) -> set[int]:
        """`origins`, every object of `origin_namespaces`, every object whose reference names
        into one of them, and every object whose reference to a name of `origin_names` finds
        nothing (a hint may take it for a changed object), from the index alone: an explicit
        reference across namespaces reads that namespace's grants, and a reference finding
        nothing is the only reader of its node that is not defined (an object's own name and a
        cluster-scoped name are defined nodes); selectors are listed apart."""
        defined = self.defined
        seeds = set(origins)
        for namespace in origin_namespaces:
            seeds.update(self.in_namespace.get(namespace, ()))
            seeds.update(self.reading_grants.get(namespace, ()))
        for i, namespace, name, explicit in self.selecting:
            if (explicit and namespace in origin_namespaces) or (name in origin_names and (namespace, name) not in defined):
                seeds.add(i)
        for node, readers in self.naming.items():
            if node[1] in origin_names and node not in defined:
                seeds.update(readers)
        return seeds

    def readers(self, j: int) -> Iterable[int]:
        """Every object reading object `j` directly."""
        own = self.namespaces[j]
        yield from self.naming.get((own, self.names[j]), ())
        yield from self.reading_namespace.get(own, ())
        if self.kinds[j] == _GRANT:
            yield from self.reading_grants.get(own, ())

    def closure(self, start: Iterable[int], *, backward: bool = False) -> set[int]:
        """`start` and everything it reads, transitively (`backward`: everything reading it)."""
        seen = set(start)
        todo = list(seen)
        step = self.readers if backward else self.out.__getitem__
        while todo:
            for k in step(todo.pop()):
                if k not in seen:
                    seen.add(k)
                    todo.append(k)
        return seen


class Kept:
    """The index of a process's last search (`search`), for its next: the change's other side
    searches over the same files but the changed ones, and an editor's next update over the same
    files but the edited one. Its own index was 0.03-0.05 s over 10,000 objects, once per side
    (docs/performance.md, "The hook's first run after one value changed: a tenant's Namespace
    taken by the directed part")."""

    def __init__(self) -> None:
        self.graph: _Graph | None = None

    def index(
        self,
        names: Sequence[str],
        namespaces: Sequence[str | None],
        kinds: Sequence[tuple[str, str]],
        refs: Sequence[Sequence[Reference]],
    ) -> _Graph:
        """The index of these objects: the last one patched (`_Graph.patched`) where every
        object's name, namespace and kind are the last search's, else built from nothing."""
        last = self.graph
        if last is not None and last.names == names and last.namespaces == namespaces and last.kinds == kinds:
            return last.patched(refs)
        self.graph = _Graph(names, namespaces, kinds, refs)
        return self.graph


def search(
    names: Sequence[str],
    namespaces: Sequence[str | None],
    kinds: Sequence[tuple[str, str]],
    refs: Sequence[Sequence[Reference]],
    origins: Sequence[int],
    removed: Sequence[ObjectKey],
    kept: Kept | None = None,
) -> tuple[set[int], set[int]] | None:
    """The members and the analysed objects (the members among them) of a change of the objects
    at `origins` that removed `removed`, by place in the part graph's order; None where the module
    docstring says it declines. The caller adds the analysed objects' context
    (`components._Found.context`) and checks for classes joined, hosts and selectors across
    namespaces, which the graph knows. `kept`: the index of this process's last search, patched
    where it can be (`Kept.index`) and kept for the next."""
    graph = _index(names, namespaces, kinds, refs, origins, removed, kept)
    return searched(graph, origins, removed) if graph is not None else None


def search_exact(
    names: Sequence[str],
    namespaces: Sequence[str | None],
    kinds: Sequence[tuple[str, str]],
    refs: Sequence[Sequence[Reference]],
    origins: Sequence[int],
    removed: Sequence[ObjectKey],
    kept: Kept | None = None,
) -> tuple[set[int], set[int]] | None:
    """`search` where the objects at `origins` and those bearing the keys `removed` are the
    members (`searched`'s `exact`)."""
    graph = _index(names, namespaces, kinds, refs, origins, removed, kept)
    return searched(graph, origins, removed, exact=True) if graph is not None else None


def _index(
    names: Sequence[str],
    namespaces: Sequence[str | None],
    kinds: Sequence[tuple[str, str]],
    refs: Sequence[Sequence[Reference]],
    origins: Sequence[int],
    removed: Sequence[ObjectKey],
    kept: Kept | None,
) -> _Graph | None:
    """The index a search reads (`Kept.index`, or built), None where the search declines."""
    # A Namespace among the changed objects is taken (the module docstring, "A Namespace changed");
    # any other cluster-scoped origin, and a Namespace removed, decline.
    if any(namespaces[i] is None and kinds[i] != _NAMESPACE for i in origins) or any(k.namespace is None for k in removed):
        return None  # before the index is built
    return kept.index(names, namespaces, kinds, refs) if kept is not None else _Graph(names, namespaces, kinds, refs)


def searched(
    graph: _Graph, origins: Sequence[int], removed: Sequence[ObjectKey], *, exact: bool = False
) -> tuple[set[int], set[int]] | None:
    """`search` over an index made already (a kept one, policylint.incremental.keptindex), with
    the same declines. `exact`: the findings wanted are those of the objects at `origins` and of
    the objects bearing the keys `removed`, not those a change of them could move (the gate's
    base side, which matches the change's findings by their objects: policylint.commands.change),
    so they are the members, and what is analysed is what their findings read, as for any
    members (the module docstring, "What is analysed"). The members a change has besides its
    objects (their namespaces' objects, their readers, the objects a hint may take for them) are
    there for the findings a change moves, which a run asking for these objects' own does not
    report."""
    names, namespaces, kinds = graph.names, graph.namespaces, graph.kinds
    if any(namespaces[i] is None and kinds[i] != _NAMESPACE for i in origins) or any(k.namespace is None for k in removed):
        return None
    if exact:
        members = set(origins) | _bearing(graph, removed)
    else:
        # A changed Namespace makes its namespace's objects origins, as a changed object of it does.
        origin_namespaces = {namespaces[i] for i in origins if namespaces[i] is not None} | {k.namespace for k in removed}
        origin_namespaces |= {names[i] for i in origins if namespaces[i] is None and kinds[i] == _NAMESPACE}
        origin_names = {names[i] for i in origins} | {k.name for k in removed}
        # Every object of a changed namespace, naming into one, or whose reference finding
        # nothing a hint may take for a changed object's name.
        seeds = graph.seeds(origins, origin_namespaces, origin_names)
        for key in removed:
            seeds.update(graph.naming.get((key.namespace, key.name), ()))
        # What the changed objects read, and every object reading any of it: siblings, whose
        # findings may note a changed object they do not read themselves.
        seeds |= graph.closure(graph.closure(origins), backward=True)
        members = graph.closure(seeds, backward=True)
    analysed = graph.closure(graph.closure(graph.closure(members), backward=True))
    return members, analysed


def _bearing(graph: _Graph, keys: Sequence[ObjectKey]) -> set[int]:
    """The places of the objects bearing `keys` (each of a duplicated key)."""
    kinds = graph.kinds
    return {i for key in keys for i in graph.defined.get((key.namespace, key.name), ()) if kinds[i] == (key.group, key.kind)}
