"""ReferenceGrant matching (docs/semantics.md#referencegrant; GEP-713 "Cross namespace references").

A reference from S (group gS, kind kS, namespace nsS) to T (gT, kT, name nT,
namespace nsT) is permitted iff nsS == nsT, or a ReferenceGrant in nsT lists
`from: {gS, kS, nsS}` and `to: {gT, kT, name unset or nT}`. Comparisons are
exact and case-sensitive; entries are ORed; grants are additive. The referrer's
GK is the *object's* (an HTTPRoute's mirror backend needs `from: HTTPRoute`),
and the target's GK is taken after defaulting.

When no grant matches, the grants that *almost* match are kept with the reason
they do not (wrong namespace, `to.name`, group or kind), for the finding's
`related[]` locations.
"""

from __future__ import annotations

import heapq
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from policylint.input.positions import join
from policylint.k8s.external import ExternalObjects
from policylint.k8s.fieldtypes import WELL_FORMED, Malformed
from policylint.k8s.names import group_kind
from policylint.k8s.objects import K8sObject
from policylint.values import frozen

GRANT_GK = ("gateway.networking.k8s.io", "ReferenceGrant")


@frozen
class GrantFrom:
    group: str
    kind: str
    namespace: str
    path: str


@frozen
class GrantTo:
    group: str
    kind: str
    name: str | None
    path: str


@frozen(eq=False)
class Grant:
    obj: K8sObject
    sources: tuple[GrantFrom, ...]
    targets: tuple[GrantTo, ...]
    # `from` or `to` (or an entry) has the wrong type (PL010): the API server rejects the grant,
    # and what it was meant to permit is unknown.
    malformed: bool = False

    @property
    def namespace(self) -> str:
        return self.obj.namespace or ""


@frozen
class Reference:
    """One cross-object edge a grant may have to authorise."""

    from_group: str
    from_kind: str
    from_namespace: str
    to_group: str
    to_kind: str
    to_namespace: str
    to_name: str

    @property
    def cross_namespace(self) -> bool:
        return self.from_namespace != self.to_namespace

    def describe(self) -> str:
        return (
            f"{self.from_kind} in namespace {self.from_namespace} is not permitted to reference"
            f" {self.to_kind} {self.to_namespace}/{self.to_name}"
        )

    def grant_hint(self) -> str:
        group = '""' if self.to_group == "" else self.to_group
        from_group = '""' if self.from_group == "" else self.from_group
        return (
            f"add a ReferenceGrant in namespace {self.to_namespace} with from: {{group: {from_group}, kind: {self.from_kind},"
            f" namespace: {self.from_namespace}}} and to: {{group: {group}, kind: {self.to_kind}}}"
        )


@frozen
class NearMiss:
    grant: Grant
    path: str  # where in the grant the mismatch is
    reason: str


@frozen
class GrantCheck:
    permitted: bool
    grants: tuple[Grant, ...] = ()  # grants that permit it
    assumed: bool = False  # no grant in the input, but grants in that namespace are declared external
    near_misses: tuple[NearMiss, ...] = ()


SAME_NAMESPACE = GrantCheck(True)
# A reference no grant is needed for across namespaces: a mesh route's backend (GEP-1294
# "Namespace boundaries": routes whose parents are Services reach backendRefs in any namespace).
NOT_NEEDED = GrantCheck(True)


def grant_meaning(check: GrantCheck) -> tuple[object, ...]:
    """What a rule or a report reads of a grant check, with the grants by their objects (each run
    parses the grants anew; an object compares by identity): what a result kept between the runs
    of one process (policylint.semantics.topology.kept, policylint.semantics.keptresolution)
    compares of a check made again."""
    return (
        check.permitted,
        check.assumed,
        tuple(g.obj for g in check.grants),
        tuple((m.grant.obj, m.path, m.reason) for m in check.near_misses),
    )


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def parse_grant(obj: K8sObject, malformed: Malformed = WELL_FORMED) -> Grant:
    spec = obj.spec
    sources: list[GrantFrom] = []
    targets: list[GrantTo] = []
    for i, entry in enumerate(spec.get("from") or () if isinstance(spec.get("from"), list) else ()):
        if isinstance(entry, dict):
            group, kind, ns = _text(entry.get("group")), _text(entry.get("kind")), _text(entry.get("namespace"))
            if group is not None and kind and ns:
                sources.append(GrantFrom(group, kind, ns, join("spec.from", i)))
    for i, entry in enumerate(spec.get("to") or () if isinstance(spec.get("to"), list) else ()):
        if isinstance(entry, dict):
            group, kind, name = _text(entry.get("group")), _text(entry.get("kind")), _text(entry.get("name"))
            if group is not None and kind:
                targets.append(GrantTo(group, kind, name or None, join("spec.to", i)))
    return Grant(obj, tuple(sources), tuple(targets), malformed=malformed.tainted("spec"))


# A grant's `from` entry, as the index keys it: (group, kind, namespace).
_FromKey = tuple[str, str, str]


class ReferenceGrants:
    """Every ReferenceGrant in the input, by namespace, with a record of which entries were used.

    A check costs what the grants that could answer it cost, not what every grant of the target
    namespace does: on a platform where each tenant files its grant in one shared namespace, a
    scan per reference made the analysis quadratic in the tenants. The entries are indexed by
    everything a match compares exactly (the grant's namespace, `from` group, kind and namespace,
    `to` group, kind and name), and the near misses by what each kind of near miss shares with
    the reference, each index in input order so that the grants found are the ones a scan of the
    input would find first.
    """

    def __init__(
        self,
        objects: Iterable[K8sObject],
        external: ExternalObjects = ExternalObjects(),  # noqa: B008  (frozen: safe to share)
        malformed: Callable[[K8sObject], Malformed] = lambda _obj: WELL_FORMED,
    ) -> None:
        self.grants: list[Grant] = [parse_grant(o, malformed(o)) for o in objects]
        # (namespace, from key, to group, to kind, to name or None) -> (grant order, grant, from, to).
        self._entries: dict[tuple[str, _FromKey, str, str, str | None], list[tuple[int, Grant, GrantFrom, GrantTo]]] = (
            defaultdict(list)
        )
        # Grant order numbers, for the near misses: grants of a namespace with a `to` of a group
        # and kind (and some `from`); with a `from` of a referrer (and some `to`); with both.
        self._to_kind: dict[tuple[str, str, str], list[int]] = defaultdict(list)
        self._from_referrer: dict[tuple[str, _FromKey], list[int]] = defaultdict(list)
        self._from_to_kind: dict[tuple[str, _FromKey, str, str], list[int]] = defaultdict(list)
        self._malformed_in: set[str] = set()
        for order, grant in enumerate(self.grants):
            ns = grant.namespace
            if grant.malformed:
                self._malformed_in.add(ns)
            for f in grant.sources:
                for t in grant.targets:
                    self._entries[(ns, (f.group, f.kind, f.namespace), t.group, t.kind, t.name)].append((order, grant, f, t))
            referrers = dict.fromkeys((f.group, f.kind, f.namespace) for f in grant.sources)
            kinds = dict.fromkeys((t.group, t.kind) for t in grant.targets)
            for group, kind in kinds if grant.sources else ():
                self._to_kind[(ns, group, kind)].append(order)
            for referrer in referrers if grant.targets else ():
                self._from_referrer[(ns, referrer)].append(order)
                for group, kind in kinds:
                    self._from_to_kind[(ns, referrer, group, kind)].append(order)
        self._external = external
        self._cache: dict[Reference, GrantCheck] = {}
        # (grant id, from index, to index) of entries that authorised a reference.
        self.used: set[tuple[Grant, str, str]] = set()
        # Grant entries and candidate grants looked at by the checks so far: what the indexes bound
        # (tests/topology/test_handshakes.py counts it against the number of grants).
        self.examined = 0

    def check(self, ref: Reference) -> GrantCheck:
        if not ref.cross_namespace:
            return SAME_NAMESPACE
        cached = self._cache.get(ref)
        if cached is None:
            cached = self._cache[ref] = self._check(ref)
        return cached

    def _check(self, ref: Reference) -> GrantCheck:
        referrer = (ref.from_group, ref.from_kind, ref.from_namespace)
        any_name = self._entries.get((ref.to_namespace, referrer, ref.to_group, ref.to_kind, None), ())
        named = self._entries.get((ref.to_namespace, referrer, ref.to_group, ref.to_kind, ref.to_name), ())
        permitting: dict[int, Grant] = {}
        for order, grant, f, t in (*any_name, *named):
            self.examined += 1
            self.used.add((grant, f.path, t.path))
            permitting.setdefault(order, grant)
        if permitting:
            # In input order, each grant once (one may permit by name and by kind).
            return GrantCheck(True, tuple(permitting[order] for order in sorted(permitting)))
        if self._external.covers_namespace(*GRANT_GK, ref.to_namespace):
            return GrantCheck(True, assumed=True)
        if ref.to_namespace in self._malformed_in:
            # A malformed grant there (PL010) may be the one meant to permit this: assume it does,
            # so the reference is not reported as well (one finding per cause).
            return GrantCheck(True, assumed=True)
        return GrantCheck(False, near_misses=tuple(self._near_misses(ref)))

    def _near_misses(self, ref: Reference) -> list[NearMiss]:
        """The first three grants, in input order, that almost permit the reference: a grant in
        the referrer's namespace that would permit it there, or a grant of the target's namespace
        whose `to` names the kind (but not the name, or not for this referrer) or whose `from`
        names the referrer (but not this kind)."""
        referrer = (ref.from_group, ref.from_kind, ref.from_namespace)
        candidates = heapq.merge(
            self._from_to_kind.get((ref.from_namespace, referrer, ref.to_group, ref.to_kind), ()),
            self._to_kind.get((ref.to_namespace, ref.to_group, ref.to_kind), ()),
            self._from_referrer.get((ref.to_namespace, referrer), ()),
        )
        out: list[NearMiss] = []
        last = -1
        for order in candidates:
            if order == last:
                continue
            last = order
            self.examined += 1
            miss = _near_miss(self.grants[order], ref)
            if miss is not None:
                out.append(miss)
                if len(out) == 3:
                    break
        return out


def _near_miss(grant: Grant, ref: Reference) -> NearMiss | None:
    """Why `grant` almost permits `ref`, or None when it is not close."""
    sources_ok = [
        f for f in grant.sources if (f.group, f.kind, f.namespace) == (ref.from_group, ref.from_kind, ref.from_namespace)
    ]
    targets_gk = [t for t in grant.targets if (t.group, t.kind) == (ref.to_group, ref.to_kind)]
    if grant.namespace != ref.to_namespace:
        # The grant belongs in the namespace of the referenced object, not of the referrer.
        if sources_ok and targets_gk and grant.namespace == ref.from_namespace:
            return NearMiss(
                grant,
                "metadata.namespace",
                f"ReferenceGrant {grant.namespace}/{grant.obj.name} would permit this, but it is in namespace"
                f" {grant.namespace}: a grant must live in the namespace of the referenced object ({ref.to_namespace})",
            )
        return None
    if sources_ok and targets_gk:
        names = ", ".join(sorted({t.name for t in targets_gk if t.name}))
        return NearMiss(
            grant,
            targets_gk[0].path,
            f"ReferenceGrant {grant.namespace}/{grant.obj.name} permits only {ref.to_kind} {names}, not {ref.to_name}",
        )
    if targets_gk and grant.sources:
        return NearMiss(
            grant,
            grant.sources[0].path,
            f"ReferenceGrant {grant.namespace}/{grant.obj.name} {_from_mismatch(grant.sources, ref)}",
        )
    if sources_ok and grant.targets:
        kinds = ", ".join(sorted({group_kind(t.group, t.kind) for t in grant.targets}))
        return NearMiss(
            grant,
            grant.targets[0].path,
            f"ReferenceGrant {grant.namespace}/{grant.obj.name} permits references to {kinds},"
            f" not {ref.to_group or 'core'}/{ref.to_kind}",
        )
    return None


def _from_mismatch(sources: Sequence[GrantFrom], ref: Reference) -> str:
    """Why no `from` entry matches: the closest entry and its differing fields."""

    def differences(f: GrantFrom) -> list[str]:
        out = []
        if f.group != ref.from_group:
            shown = '""' if f.group == "" else f.group
            wanted = '""' if ref.from_group == "" else ref.from_group
            out.append(f"group {shown} (the referrer's group is {wanted})")
        if f.kind != ref.from_kind:
            out.append(f"kind {f.kind} (the referrer is a {ref.from_kind})")
        if f.namespace != ref.from_namespace:
            out.append(f"namespace {f.namespace} (the referrer is in {ref.from_namespace})")
        return out

    best = min(sources, key=lambda f: len(differences(f)))
    return "allows a referrer with " + " and ".join(differences(best))
