"""What a topology resolved, kept between the runs of one long-lived process with what deciding
it read, and reused while every read gives the same answer.

A language server analyses, after each edit, the part of the workspace the edited file reaches
(policylint.semantics.components): on the generated corpus 2,200 of 10,000 objects for a tenant's
file of 100, since tenants reach their neighbours' Services. The part's topology was built from
nothing each time (docs/performance.md#the-language-server). What is kept, each in its `Table`:

* `backends`: a route's backend references (`Backends._route_backends`, about 3,000 per update);
* `attachments`: a route's attachment to each of its parents (`Attachments._attach_route`);
* `listeners`: the listeners a Gateway or ListenerSet declares, a function of the object alone;
* `certificates`: a Gateway's or ListenerSet's certificate and CA references;
* `policies`: a policy's backend, certificate and object references;
* `conflicts`: which listeners of a Gateway and its ListenerSets are Conflicted;
* `refusals`: what the API server refuses in a policy (`PolicyTargets._admission_errors`), a
  function of the policy and the context alone (its admission verdict, which the per-object rule
  results are kept by too): asking the admission stage for it cost an update 15 ms at 10,000
  objects, the verdict worked out again from its kept entry for every policy of the part;
* `routes_on`, `sets_of`: the routes attached to each parent and the ListenerSets attached to each
  Gateway, handed on as the same list while it holds the same entries, so that what reads the
  topology after it (the simulation's kept walks, policylint.semantics.effective.walks) can tell
  an unchanged parent by identity.

What a result depends on is its object, what the run is (the code, the settings, the CRDs and the
cluster: `context`, the same key the per-object rule results are kept under,
policylint.incremental.rulecache) and what resolving it read beyond them, which it records while
it runs (`References._note`): each object looked up (the answer, or that there was none: a
Gateway added where a route's parentRef named nothing changes its attachment), what a producer
makes, whether the run's kinds know a kind and say it is cluster-scoped (the context holds the
CRDs of the part only), whether the input holds a kind or manages it in a namespace, the groups
it knows, a route's parents' implementations, the listeners of a parent (the same list while the
parent is the same object), a ListenerSet's attachment, the verdict of a listener's namespace
selector on a route's namespace (the Namespace's labels). Whether a route is a mesh route is a
function of its own parentRefs and the profiles: not a read. The references a ReferenceGrant
decides are checked again on every reuse: the check is both a read (its answer must mean the
same: the same grants' objects permitting, the same near misses) and what records which grant
entries were used, which PL404 (reference-grant-unused) reads. A result whose resolution read
what is not recorded (a delegation, which reads every route of the kind and tells each child; the
hosts a registry declares) is never kept.

Which routes attach to a listener (its attached-route count) is not kept as such: each run
gathers it from every route's attachments, kept or not, so a route added in another file counts.

The objects a long-lived process's runs build are the same instances while their files' bytes
are (policylint.incremental.resident), so a result is kept by its object's instance, a read's
answer compared by identity, and an edited file's objects, built anew, are resolved anew. A kept
result is handed on as the same object (a reference whose grant check is this run's is a copy);
each table holds the results of the last build only.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Generic, TypeVar

from policylint.values import frozen

if TYPE_CHECKING:
    from policylint.k8s.objects import K8sObject
    from policylint.semantics.topology.model import Listener, ObjectRef, ParentAttachment
    from policylint.semantics.topology.references import Read

T = TypeVar("T")
V = TypeVar("V")


@frozen(eq=False)
class Recorded(Generic[T]):
    """One result and the reads that decided it, in the order made."""

    value: T
    reads: tuple[Read, ...]


@frozen(eq=False)
class Conflicts:
    """Which listeners of a Gateway and its ListenerSets are Conflicted, and what decided it: each
    owner in precedence order with its listeners (compared by identity) and the implementation's
    port sharing."""

    owners: tuple[tuple[K8sObject, list[Listener]], ...]
    sharing: object
    found: tuple[tuple[Listener, tuple[Listener, str]], ...]


class Table(Generic[V]):
    """One kind of result of the last build, by object, and what the build now running adds."""

    def __init__(self) -> None:
        self._last: dict[K8sObject, V] = {}
        self._next: dict[K8sObject, V] = {}
        # What the build did, for the tests and the benchmarks: results reused, worked out (of
        # which `refused`: kept, but a read answered otherwise).
        self.reused = 0
        self.resolved = 0
        self.refused = 0

    def begin(self, keep: bool) -> None:
        if not keep:
            self._last = {}
        self._next = {}
        self.reused = self.resolved = self.refused = 0

    def get(self, obj: K8sObject) -> V | None:
        return self._last.get(obj)

    def put(self, obj: K8sObject, value: V) -> None:
        self._next[obj] = value

    def finish(self) -> None:
        self._last, self._next = self._next, {}


class KeptTopology:
    """The results of the last topology built by this process, under the run's context."""

    def __init__(self) -> None:
        self._context: bytes | None = None
        self.backends: Table[Recorded[list[ObjectRef]]] = Table()
        self.certificates: Table[Recorded[list[ObjectRef]]] = Table()
        self.policies: Table[Recorded[list[ObjectRef]]] = Table()
        self.attachments: Table[Recorded[list[ParentAttachment]]] = Table()
        self.listeners: Table[list[Listener]] = Table()
        self.conflicts: Table[Conflicts] = Table()
        self.refusals: Table[tuple[str, ...]] = Table()
        self.routes_on: Table[list[tuple[K8sObject, ParentAttachment]]] = Table()
        self.sets_of: Table[list[K8sObject]] = Table()

    def _tables(self) -> tuple[Table[object], ...]:
        return (
            self.backends,  # type: ignore[return-value]
            self.certificates,
            self.policies,
            self.attachments,
            self.listeners,
            self.conflicts,
            self.refusals,
            self.routes_on,
            self.sets_of,
        )

    def begin(self, context: bytes | None) -> KeptTopology | None:
        """Start a build in `context` (None: nothing can be kept): what it may reuse, or None."""
        keep = context is not None and context == self._context
        for table in self._tables():
            table.begin(keep)
        self._context = context
        return self if context is not None else None

    def finish(self) -> None:
        """The build is done: the next one may reuse its results, and only those."""
        for table in self._tables():
            table.finish()


def same_entries(before: Sequence[object] | None, now: Sequence[object]) -> bool:
    """Whether two lists hold the same objects (a pair's by identity), in the same order."""
    if before is None or len(before) != len(now):
        return False
    for a, b in zip(before, now, strict=True):
        if isinstance(a, tuple) and isinstance(b, tuple):
            if len(a) != len(b) or any(x is not y for x, y in zip(a, b, strict=True)):
                return False
        elif a is not b:
            return False
    return True


def hand_on(table: Table[list[V]], lists: dict[K8sObject, list[V]]) -> None:
    """Each list of `lists` replaced by the one the last build kept for its object when they hold
    the same entries, so that an unchanged one is the same object as before; each kept for the next."""
    for obj, now in lists.items():
        before = table.get(obj)
        if before is not None and before is not now and same_entries(before, now):
            lists[obj] = now = before
        table.put(obj, now)
