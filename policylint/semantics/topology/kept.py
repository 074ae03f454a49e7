"""A route's backend references kept between the runs of one long-lived process, with what
deciding them read, and reused while every read gives the same answer.

A language server analyses, after each edit, the part of the workspace the edited file reaches
(policylint.semantics.components): on the generated corpus 2,200 of 10,000 objects for a tenant's
file of 100, since tenants reach their neighbours' Services. The part's topology was built from
nothing each time, and resolving its routes' backend references (`Backends._route_backends`,
about 3,000 per update) was the largest share of it (docs/performance.md#the-language-server).

What one route's backends are depends on the route, on what the run is (the code, the settings,
the CRDs and the cluster: `context`, the same key the per-object rule results are kept under,
policylint.incremental.rulecache) and on what the resolution read beyond them, which it records
while it runs (`References._note`): each object looked up (the answer, or that there was none),
what a producer makes, whether the run's kinds know a kind and say it is cluster-scoped (the
context holds the CRDs of the part only), whether the input holds a kind or manages it in a
namespace, the groups it knows (`--complete`), and the route's parents' implementations. Whether
the route is a mesh route is a function of its own parentRefs and the profiles: not a read. The
references a ReferenceGrant decides are checked again on every reuse: the check is both a read
(its answer must mean the same: the same grants' objects permitting, the same near misses) and
what records which grant entries were used, which PL404 (reference-grant-unused) reads. A route
whose resolution read what is not recorded (a delegation, which reads every route of the kind and
tells each child; the hosts a registry declares) is never kept.

The objects a long-lived process's runs build are the same instances while their files' bytes
are (policylint.incremental.resident), so a route is kept by its instance, a read's answer
compared by identity, and an edited file's routes, built anew, are resolved anew. A kept
reference is the one built before, its grant check this run's; every other field was decided by
the route and the reads. The table holds the routes of the last build only.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from policylint.values import frozen

if TYPE_CHECKING:
    from policylint.k8s.objects import K8sObject
    from policylint.semantics.grants import GrantCheck
    from policylint.semantics.topology.model import ObjectRef
    from policylint.semantics.topology.references import Read


@frozen(eq=False)
class Kept:
    """One route's backend references and the reads that decided them, in the order made."""

    refs: list[ObjectRef]
    reads: tuple[Read, ...]


class KeptRoutes:
    """The routes of the last topology built by this process, under the run's context."""

    def __init__(self) -> None:
        self._context: bytes | None = None
        self._routes: dict[K8sObject, Kept] = {}
        self._next: dict[K8sObject, Kept] = {}
        # What the last build did, for the tests and the benchmarks: routes reused, resolved (of
        # which `refused`: kept, but a read answered otherwise).
        self.reused = 0
        self.resolved = 0
        self.refused = 0

    def begin(self, context: bytes | None) -> KeptRoutes | None:
        """Start a build in `context` (None: nothing can be kept): what it may reuse, or None."""
        if context is None or context != self._context:
            self._routes = {}
        self._context = context
        self._next = {}
        self.reused = self.resolved = self.refused = 0
        return self if context is not None else None

    def get(self, route: K8sObject) -> Kept | None:
        return self._routes.get(route)

    def put(self, route: K8sObject, kept: Kept) -> None:
        self._next[route] = kept

    def finish(self) -> None:
        """The build is done: the next one may reuse its routes, and only those."""
        self._routes, self._next = self._next, {}


def grant_meaning(check: GrantCheck) -> tuple[object, ...]:
    """What a rule or a report reads of a grant check, with the grants by their objects (each run
    parses the grants anew; an object compares by identity)."""
    return (
        check.permitted,
        check.assumed,
        tuple(g.obj for g in check.grants),
        tuple((m.grant.obj, m.path, m.reason) for m in check.near_misses),
    )
