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
a cluster-scoped object among the changed or removed ones (a Namespace's labels decide what
attaches to Gateways in other namespaces). These are the joins the part search makes that are
not references with a direction.

tests/incremental/test_incremental.py holds it to a run analysing the whole repository: random
sequences of value edits and of edits that reach beyond a Gateway (renames, sectionNames,
grants, targets and parents moved), on tenants sharing Services, tenants reaching a neighbour,
and isolated ones; tests/scope/test_directed.py pins what the part holds on hand-made shapes.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from policylint.k8s.objects import ObjectKey
from policylint.semantics.namerefs import Reference

_GRANT = ("gateway.networking.k8s.io", "ReferenceGrant")
# Kinds whose label selectors read nothing but cluster-scoped objects, or nothing the analysis
# reads (the module docstring): a Gateway's namespace selectors, a core Service's Pod selector.
_SELECTORS_READ_NOTHING = frozenset({("gateway.networking.k8s.io", "Gateway"), ("", "Service")})


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
        self.names, self.namespaces, self.kinds, self.refs = names, namespaces, kinds, refs
        defined: dict[tuple[str | None, str], list[int]] = {}
        in_namespace: dict[str | None, list[int]] = {}
        grants: dict[str | None, list[int]] = {}
        for i, (name, own, kind) in enumerate(zip(names, namespaces, kinds)):
            defined.setdefault((own, name), []).append(i)
            in_namespace.setdefault(own, []).append(i)
            if kind == _GRANT:
                grants.setdefault(own, []).append(i)
        self.defined, self.in_namespace, self.grants = defined, in_namespace, grants
        cluster_names = {name for name, own in zip(names, namespaces) if own is None}
        # Who reads each node: a name in a namespace, a namespace whole, a namespace's grants.
        self.naming: dict[tuple[str | None, str], list[int]] = {}
        self.reading_namespace: dict[str | None, list[int]] = {}
        self.reading_grants: dict[str | None, list[int]] = {}
        self.out: list[list[int]] = []
        for i in range(len(names)):
            self.out.append(self._reads(i, cluster_names))

    def _reads(self, i: int, cluster_names: set[str]) -> list[int]:
        """What object `i` reads directly; records it as a reader of each node on the way."""
        own, kind = self.namespaces[i], self.kinds[i]
        nodes: list[tuple[str | None, str]] = [(own, self.names[i])]
        wholes: list[str | None] = []
        across: list[str | None] = []
        for namespace, name, explicit, selector in self.refs[i]:
            if selector:
                if kind not in _SELECTORS_READ_NOTHING:
                    wholes.append(namespace)
                continue
            nodes.append((namespace, name))
            if not explicit and name in cluster_names:
                nodes.append((None, name))
            if name in self.in_namespace:  # a namespace's name: the namespace whole
                wholes.append(name)
            if explicit and namespace != own:
                across.append(namespace)
        found: list[int] = []
        for node in dict.fromkeys(nodes):
            self.naming.setdefault(node, []).append(i)
            found.extend(self.defined.get(node, ()))
        for namespace in dict.fromkeys(wholes):
            self.reading_namespace.setdefault(namespace, []).append(i)
            found.extend(self.in_namespace.get(namespace, ()))
        for namespace in dict.fromkeys(across):
            self.reading_grants.setdefault(namespace, []).append(i)
            found.extend(self.grants.get(namespace, ()))
        return found

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


def search(
    names: Sequence[str],
    namespaces: Sequence[str | None],
    kinds: Sequence[tuple[str, str]],
    refs: Sequence[Sequence[Reference]],
    origins: Sequence[int],
    removed: Sequence[ObjectKey],
) -> tuple[set[int], set[int]] | None:
    """The members and the analysed objects (the members among them) of a change of the objects
    at `origins` that removed `removed`, by place in the part graph's order; None where the module
    docstring says it declines. The caller adds the analysed objects' context
    (`components._Found.context`) and checks for classes joined, hosts and selectors across
    namespaces, which the graph knows."""
    if any(namespaces[i] is None for i in origins) or any(k.namespace is None for k in removed):
        return None
    graph = _Graph(names, namespaces, kinds, refs)
    existing = graph.defined
    origin_namespaces = {namespaces[i] for i in origins} | {k.namespace for k in removed}
    origin_names = {names[i] for i in origins} | {k.name for k in removed}
    seeds = set(origins)
    for i, own in enumerate(namespaces):
        if own in origin_namespaces:
            seeds.add(i)
            continue
        for namespace, name, explicit, _ in refs[i]:
            # A reference into a changed namespace, or one finding nothing that a hint may take
            # for a changed object's name.
            if (explicit and namespace in origin_namespaces) or (name in origin_names and (namespace, name) not in existing):
                seeds.add(i)
                break
    for key in removed:
        seeds.update(graph.naming.get((key.namespace, key.name), ()))
    # What the changed objects read, and every object reading any of it: siblings, whose findings
    # may note a changed object they do not read themselves.
    seeds |= graph.closure(graph.closure(origins), backward=True)
    members = graph.closure(seeds, backward=True)
    analysed = graph.closure(graph.closure(graph.closure(members), backward=True))
    return members, analysed
