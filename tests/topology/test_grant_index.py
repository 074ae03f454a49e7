"""ReferenceGrant checks through the grant index (policylint.semantics.grants): the same answers
as a scan of every grant, and a cost per reference that does not grow with the grants of the
target namespace (docs/performance.md, "Grant-heavy repositories")."""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from typing import Any

import pytest

from policylint.input.load import DocumentRef
from policylint.k8s.fieldtypes import WELL_FORMED, FieldProblem, Malformed
from policylint.k8s.objects import K8sObject, ObjectKey
from policylint.semantics.grants import (
    GRANT_GK,
    Grant,
    GrantCheck,
    NearMiss,
    Reference,
    ReferenceGrants,
    _from_mismatch,
    _near_miss,
)
from tests.lintutil import lint_text

GW = "gateway.networking.k8s.io"
BROKEN = Malformed("test", (FieldProblem(("spec", "from"), "array", "x"),))


def _grant(namespace: str, name: str, sources: list[Any], targets: list[Any]) -> K8sObject:
    data = {"metadata": {"name": name, "namespace": namespace}, "spec": {"from": sources, "to": targets}}
    return K8sObject(
        ObjectKey(GRANT_GK[0], GRANT_GK[1], namespace, name), f"{GW}/v1beta1", data, DocumentRef("g.yaml", 0, 0, 0, 1, 1)
    )


def _scan(grants: ReferenceGrants, ref: Reference, used: set[tuple[int, str, str]]) -> GrantCheck:
    """What a check answered before the index: every grant of the target namespace for the
    permission, every grant of the input for the near misses (the first three kept)."""
    if not ref.cross_namespace:
        return GrantCheck(True)
    in_ns = [g for g in grants.grants if g.namespace == ref.to_namespace]
    permitting: list[Grant] = []
    for grant in in_ns:
        hit = False
        for f in grant.sources:
            if (f.group, f.kind, f.namespace) != (ref.from_group, ref.from_kind, ref.from_namespace):
                continue
            for t in grant.targets:
                if (t.group, t.kind) == (ref.to_group, ref.to_kind) and (t.name is None or t.name == ref.to_name):
                    used.add((grant, f.path, t.path))
                    hit = True
        if hit:
            permitting.append(grant)
    if permitting:
        return GrantCheck(True, tuple(permitting))
    if any(g.malformed for g in in_ns):
        return GrantCheck(True, assumed=True)
    misses = [m for m in (_near_miss(g, ref) for g in grants.grants) if m is not None]
    return GrantCheck(False, near_misses=tuple(misses[:3]))


def _malformed(broken: set[int]) -> Callable[[K8sObject], Malformed]:
    return lambda obj: BROKEN if id(obj) in broken else WELL_FORMED


def _summary(check: GrantCheck) -> tuple[Any, ...]:
    def miss(m: NearMiss) -> tuple[int, str, str]:
        return id(m.grant), m.path, m.reason

    return check.permitted, check.assumed, [id(g) for g in check.grants], [miss(m) for m in check.near_misses]


def test_the_index_answers_as_a_scan_of_every_grant() -> None:
    rng = random.Random(7)
    namespaces = ["a", "b", "c", "d"]
    groups = ["", GW, "example.com"]
    kinds = ["Service", "HTTPRoute", "Secret", "Gateway"]
    names = ["x", "y", "z"]

    def source() -> Any:
        entry = {"group": rng.choice(groups), "kind": rng.choice(kinds), "namespace": rng.choice(namespaces)}
        if rng.random() < 0.1:
            del entry[rng.choice(list(entry))]  # incomplete: not an entry
        return entry

    def target() -> Any:
        entry: dict[str, Any] = {"group": rng.choice(groups), "kind": rng.choice(kinds)}
        if rng.random() < 0.6:
            entry["name"] = rng.choice([*names, ""])
        return entry

    for _ in range(60):
        objects = [
            _grant(
                rng.choice(namespaces),
                f"g{i}",
                [source() for _ in range(rng.randint(0, 3))],
                [target() for _ in range(rng.randint(0, 3))],
            )
            for i in range(rng.randint(0, 25))
        ]
        broken = {id(o) for o in objects if rng.random() < 0.05}
        grants = ReferenceGrants(objects, malformed=_malformed(broken))
        used: set[tuple[Grant, str, str]] = set()
        for _ in range(40):
            ref = Reference(
                rng.choice(groups),
                rng.choice(kinds),
                rng.choice(namespaces),
                rng.choice(groups),
                rng.choice(kinds),
                rng.choice(namespaces),
                rng.choice(names),
            )
            assert _summary(grants.check(ref)) == _summary(_scan(grants, ref, used)), ref
        assert grants.used == used


def _platform(tenants: int) -> tuple[ReferenceGrants, list[Reference]]:
    """One grant per tenant in a shared namespace; one tenant in ten names another Service, so
    its reference fails and its near misses are searched for."""
    objects = [
        _grant(
            "shared",
            f"from-t{k}",
            [{"group": GW, "kind": "HTTPRoute", "namespace": f"t{k}"}],
            [{"group": "", "kind": "Service", "name": f"svc-{k % 7 if k % 10 else 'other'}"}],
        )
        for k in range(tenants)
    ]
    refs = [Reference(GW, "HTTPRoute", f"t{k}", "", "Service", "shared", f"svc-{k % 7}") for k in range(tenants)]
    return ReferenceGrants(objects), refs


def test_the_grants_a_check_looks_at_do_not_grow_with_the_grants_of_the_namespace() -> None:
    for tenants in (200, 2000):
        grants, refs = _platform(tenants)
        checks = [grants.check(ref) for ref in refs]
        assert sum(not c.permitted for c in checks) == tenants // 10
        # The failing ones still name the grants that almost permit them: their own, by name,
        # then others of the namespace naming the kind.
        failing = next(c for c in checks if not c.permitted)
        assert [m.grant.obj.name for m in failing.near_misses] == ["from-t0", "from-t1", "from-t2"]
        assert failing.near_misses[0].reason == "ReferenceGrant shared/from-t0 permits only Service svc-other, not svc-0"
        assert failing.near_misses[1].reason == "ReferenceGrant shared/from-t1 " + _from_mismatch(
            grants.grants[1].sources, refs[0]
        )
        # Per reference: one entry for a permitted one, three candidates for a refused one, whatever
        # the number of grants beside them (a scan looked at every grant of the namespace).
        refused = tenants // 10
        assert grants.examined == (tenants - refused) * 1 + refused * 3


def test_whether_a_namespace_holds_a_malformed_referrer_is_one_pass_per_kind(monkeypatch: pytest.MonkeyPatch) -> None:
    routes = "".join(
        f"---\napiVersion: {GW}/v1\nkind: HTTPRoute\nmetadata: {{name: r, namespace: t{k}}}\nspec:\n"
        + ("  parentRefs: wrong\n" if k % 5 == 0 else "  parentRefs: [{name: gw}]\n")
        for k in range(40)
    )
    index = lint_text(routes).index
    asked: list[tuple[str, str]] = []
    of_kind = index.of_kind

    def counted(group: str, kind: str) -> Sequence[K8sObject]:
        asked.append((group, kind))
        return of_kind(group, kind)

    monkeypatch.setattr(index, "of_kind", counted)
    answers = [index.has_malformed(GW, "HTTPRoute", f"t{k}") for k in range(40)]
    assert answers == [k % 5 == 0 for k in range(40)]
    assert not index.has_malformed(GW, "HTTPRoute", "elsewhere")
    assert not index.has_malformed(GW, "GRPCRoute", "t0")
    # The routes are read once, for the first question; before, every question read them all.
    assert asked == [(GW, "HTTPRoute"), (GW, "GRPCRoute")]
