"""What the topology works out once per build rather than once per reference, route or listener:
each test counts the work a build does on a project, so that it fails where the work comes back
per reference (docs/performance.md#the-topology-the-index-and-the-resolution)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from policylint.project import Project
from policylint.semantics.grants import GrantCheck, Reference, ReferenceGrants
from policylint.semantics.topology import Topology
from policylint.semantics.topology.references import References
from policylint.vocabulary import ReferenceStatus
from tests.lintutil import lint_paths, lint_text, select
from tests.manifests import first, gateway, gateway_class, reference_grant, route, service


def project_of(text: str) -> Project:
    return lint_text(text, selection=select("PL001")).project


class _Counted(tuple[Any, ...]):
    """The run's implementations, counting how often something goes through them."""

    passes = 0

    def __iter__(self) -> Iterator[Any]:
        _Counted.passes += 1
        return super().__iter__()


def _passes_over_implementations(project: Project) -> int:
    profiles = project.resolution.profiles
    kept = profiles.implementations
    profiles.implementations = _Counted(kept)
    _Counted.passes = 0
    try:
        Topology(project.resolution, project.admissions())
    finally:
        profiles.implementations = kept
    return _Counted.passes


def _routes(n: int) -> str:
    rules = "[{backendRefs: [{name: web, port: 80}, {name: api, port: 80}]}, {backendRefs: [{name: web, port: 80}]}]"
    return "".join(route(name=f"r{i}", rules=rules) for i in range(n))


def test_the_implementations_are_read_once_per_build_not_per_backend_reference() -> None:
    # Whether a backend reference delegates to routes is a question about its kind and the run's
    # implementations: asked of every reference of every route, it is answered from the kinds
    # they delegate to, gathered once.
    base = first(gateway_class()) + gateway() + service() + service("api")
    one = project_of(base + _routes(1))
    many = project_of(base + _routes(40))
    assert len(many.topology().refs_from(many.index.lookup("gateway.networking.k8s.io", "HTTPRoute", "app", "r7"))) == 3
    assert _passes_over_implementations(many) == _passes_over_implementations(one)


class _CountingGrants(ReferenceGrants):
    def __init__(self, grants: ReferenceGrants) -> None:
        self.__dict__.update(grants.__dict__)
        self.asked: list[Reference] = []

    def check(self, ref: Reference) -> GrantCheck:
        self.asked.append(ref)
        return super().check(ref)


def test_a_reference_within_its_namespace_asks_no_grant() -> None:
    # Most references stay in their namespace, which needs no ReferenceGrant: the edge a grant
    # would be asked about is not made for them.
    text = (
        first(gateway_class())
        + gateway()
        + service()
        + service("db", ns="data")
        + reference_grant(
            "data", "[{group: gateway.networking.k8s.io, kind: HTTPRoute, namespace: app}]", "[{group: '', kind: Service}]"
        )
        + route(rules="[{backendRefs: [{name: web, port: 80}, {name: db, namespace: data, port: 80}, {name: web, port: 80}]}]")
    )
    project = project_of(text)
    grants = _CountingGrants(project.resolution.grants())
    project.resolution._grants = grants
    topology = Topology(project.resolution, project.admissions())
    assert [(r.to_namespace, r.to_name) for r in grants.asked] == [("data", "db")]
    refs = topology.refs_from(project.index.lookup("gateway.networking.k8s.io", "HTTPRoute", "app", "r"))
    assert [(r.namespace, r.name, r.status) for r in refs] == [
        ("app", "web", ReferenceStatus.RESOLVED),
        ("data", "db", ReferenceStatus.RESOLVED),
        ("app", "web", ReferenceStatus.RESOLVED),
    ]
    assert [r.grant.permitted for r in refs if r.grant is not None] == [True, True, True]
    assert refs[1].grant is not None and refs[1].grant.grants


def test_a_services_ports_are_read_once_however_many_references_name_it() -> None:
    # Every backend reference with a port asks which port of its Service it names: the Service's
    # ports are read into a table once, and the first port of the number answers, as before.
    ports = "[{name: http, port: 80}, {name: admin, port: 9000}, {name: again, port: 80}]"
    routes = "".join(
        route(name=f"r{i}", rules="[{backendRefs: [{name: web, port: 80}, {name: web, port: 9000}, {name: web, port: 81}]}]")
        for i in range(12)
    )
    project = project_of(first(gateway_class()) + gateway() + service(ports=ports) + routes)
    web = project.index.lookup("", "Service", "app", "web")
    index = project.index
    asked: list[object] = []
    sections = index.sections

    def counted(obj: Any) -> Any:
        if obj is web:
            asked.append(obj)
        return sections(obj)

    index.sections = counted  # type: ignore[method-assign]
    topology = Topology(project.resolution, project.admissions())
    assert len(asked) == 1
    for i in range(12):
        refs = topology.refs_from(project.index.lookup("gateway.networking.k8s.io", "HTTPRoute", "app", f"r{i}"))
        found = [(r.port, r.port_section.name if r.port_section is not None else None, r.status) for r in refs]
        assert found == [
            (80, "http", ReferenceStatus.RESOLVED),
            (9000, "admin", ReferenceStatus.RESOLVED),
            (81, None, ReferenceStatus.RESOLVED),
        ]


def test_listeners_of_one_protocol_with_other_hostnames_are_not_compared(monkeypatch: pytest.MonkeyPatch) -> None:
    # A Gateway with a listener per hostname on one port: two listeners of one protocol (not TCP
    # or UDP) with different hostnames are always distinct, so only those that share a hostname, or
    # have another protocol, are compared; the conflicts are those comparing every pair finds.
    import policylint.semantics.topology.listeners as listeners

    block = "".join(f"  - {{name: h{i}, protocol: HTTPS, port: 443, hostname: h{i}.example.com}}\n" for i in range(24))
    block += "  - {name: dup-a, protocol: HTTPS, port: 443, hostname: dup.example.com}\n"
    block += "  - {name: dup-b, protocol: HTTPS, port: 443, hostname: dup.example.com}\n"
    block += "  - {name: plain, protocol: HTTP, port: 80}\n"
    block += "  - {name: raw, protocol: TCP, port: 8443}\n"
    block += "  - {name: raw-too, protocol: TCP, port: 8443}\n"
    project = project_of(first(gateway_class()) + gateway(block))
    compared: list[tuple[object, object]] = []
    conflict = listeners.port_conflict

    def counted(port: int, a: Any, b: Any, *rest: Any) -> str | None:
        compared.append((a, b))
        return conflict(port, a, b, *rest)

    monkeypatch.setattr(listeners, "port_conflict", counted)
    topology = Topology(project.resolution, project.admissions())
    gw = project.index.lookup("gateway.networking.k8s.io", "Gateway", "app", "gw")
    assert gw is not None
    found = {
        lst.name: (other.name, reason)
        for lst in topology.listeners(gw)
        if (conflicted := topology.listener_conflict(lst)) is not None
        for other, reason in [conflicted]
    }
    assert found == {
        "dup-a": ("dup-b", "both HTTPS on port 443 with hostname dup.example.com: HostnameConflict"),
        "dup-b": ("dup-a", "both HTTPS on port 443 with hostname dup.example.com: HostnameConflict"),
        "raw": ("raw-too", "both TCP on port 8443"),
        "raw-too": ("raw", "both TCP on port 8443"),
    }
    assert len(compared) == 4


def test_each_distinct_backend_reference_is_resolved_once_and_answers_as_every_one_resolved(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Routes of one namespace name the same few Services: the first reference that asks a question
    # (its referrer's kind and namespace, how it is resolved, what it says) is resolved, and the
    # others are made again from it with their own route, path and rule. A reference without a
    # port is not one with a port.
    rules = (
        "[{backendRefs: [{name: web, port: 80}, {name: web, port: 1}, {name: web},"
        " {name: db, namespace: data, port: 80}, {name: missing, port: 80}]}, {backendRefs: [{name: web, port: 80}]}]"
    )
    text = (
        first(gateway_class())
        + gateway()
        + service(ports="[{name: http, port: 80}, {name: one, port: 1}]")
        + service("db", ns="data")
        + reference_grant(
            "data", "[{group: gateway.networking.k8s.io, kind: HTTPRoute, namespace: app}]", "[{group: '', kind: Service}]"
        )
        + "".join(route(name=f"r{i}", rules=rules) for i in range(10))
        + "".join(route("[{name: gw, namespace: app}]", name=f"s{i}", ns="other", rules=rules) for i in range(3))
    )
    project = project_of(text)
    index = project.index
    looked_up: list[tuple[str | None, str]] = []
    lookup = index.lookup

    def counted(group: str, kind: str, namespace: str | None, name: str) -> Any:
        if (group, kind) == ("", "Service"):
            looked_up.append((namespace, name))
        return lookup(group, kind, namespace, name)

    index.lookup = counted  # type: ignore[method-assign]
    topology = Topology(project.resolution, project.admissions())
    # app: web three ways, db, missing; other: web three ways, missing (db is not granted there).
    assert sorted(looked_up) == sorted(
        [*[("app", "web")] * 3, ("data", "db"), ("app", "missing"), *[("other", "web")] * 3, ("other", "missing")]
    )

    def refs(topo: Topology, ns: str, name: str) -> list[Any]:
        return topo.refs_from(index.lookup("gateway.networking.k8s.io", "HTTPRoute", ns, name))

    r3 = refs(topology, "app", "r3")
    assert all(r.owner is index.lookup("gateway.networking.k8s.io", "HTTPRoute", "app", "r3") for r in r3)
    assert [(r.path, r.rule, r.namespace, r.name, r.port, r.has_port, r.status) for r in r3] == [
        ("spec.rules[0].backendRefs[0]", 0, "app", "web", 80, True, ReferenceStatus.RESOLVED),
        ("spec.rules[0].backendRefs[1]", 0, "app", "web", 1, True, ReferenceStatus.RESOLVED),
        ("spec.rules[0].backendRefs[2]", 0, "app", "web", None, False, ReferenceStatus.RESOLVED),
        ("spec.rules[0].backendRefs[3]", 0, "data", "db", 80, True, ReferenceStatus.RESOLVED),
        ("spec.rules[0].backendRefs[4]", 0, "app", "missing", 80, True, ReferenceStatus.NOT_FOUND),
        ("spec.rules[1].backendRefs[0]", 1, "app", "web", 80, True, ReferenceStatus.RESOLVED),
    ]
    assert [r.port_section.name if r.port_section else None for r in r3] == ["http", "one", None, "http", None, "http"]
    s1 = refs(topology, "other", "s1")
    assert [(r.namespace, r.name, r.status) for r in s1] == [
        ("other", "web", ReferenceStatus.NOT_FOUND),
        ("other", "web", ReferenceStatus.NOT_FOUND),
        ("other", "web", ReferenceStatus.NOT_FOUND),
        ("data", "db", ReferenceStatus.REF_NOT_PERMITTED),
        ("other", "missing", ReferenceStatus.NOT_FOUND),
        ("other", "web", ReferenceStatus.NOT_FOUND),
    ]

    # A build that resolves every reference gives the same references.
    monkeypatch.setattr(
        References,
        "_resolve_ref",
        lambda self, owner, path, raw, purpose, how, *, rule=None: self._resolve_new(owner, path, raw, purpose, how, rule),
    )
    index.lookup = lookup  # type: ignore[method-assign]
    every = Topology(project.resolution, project.admissions())
    for ns, names in (("app", [f"r{i}" for i in range(10)]), ("other", [f"s{i}" for i in range(3)])):
        for name in names:
            assert refs(every, ns, name) == refs(topology, ns, name)


def test_a_well_formed_objects_sections_ask_whether_it_is_malformed_once(monkeypatch: pytest.MonkeyPatch) -> None:
    # A Gateway's listeners, a route's rules and a Service's ports are sections: an unknown name
    # (PL010) is possible only in a malformed object, and whether it is one is asked once per
    # object, not once per entry (`Malformed.__bool__` is a call of its own).
    from policylint.k8s.fieldtypes import Malformed
    from policylint.k8s.index import ProjectIndex

    listeners = "".join(f"\n    - {{name: l{i}, port: {8000 + i}, protocol: HTTP}}" for i in range(12))
    text = (
        first(gateway_class())
        + "---\napiVersion: gateway.networking.k8s.io/v1\nkind: Gateway\nmetadata: {name: gw, namespace: app}\n"
        + f"spec:\n  gatewayClassName: eg\n  listeners:{listeners}\n"
        + "---\napiVersion: gateway.networking.k8s.io/v1\nkind: Gateway\nmetadata: {name: bad, namespace: app}\n"
        + "spec:\n  gatewayClassName: eg\n  listeners:\n    - {name: 5, port: 80, protocol: HTTP}\n    - {name: ok, port: 81, protocol: HTTP}\n"
    )
    project = project_of(text)
    fresh = ProjectIndex(objects=list(project.index.objects), kinds=project.index.kinds, options=project.index.options)
    good = fresh.lookup("gateway.networking.k8s.io", "Gateway", "app", "gw")
    bad = fresh.lookup("gateway.networking.k8s.io", "Gateway", "app", "bad")
    assert good is not None and bad is not None
    fresh.malformed(good), fresh.malformed(bad)  # worked out first, as the topology asks first
    asked: list[Malformed] = []
    truth = Malformed.__bool__

    def counted(self: Malformed) -> bool:
        asked.append(self)
        return truth(self)

    monkeypatch.setattr(Malformed, "__bool__", counted)
    sections = fresh.sections(good)
    assert [(s.name, s.position, s.path, s.malformed) for s in sections] == [
        (f"l{i}", i, f"spec.listeners[{i}]", False) for i in range(12)
    ]
    assert len(asked) == 1
    # A malformed one's entries are each judged: the listener whose name is a number is unknown.
    assert [(s.name, s.malformed) for s in fresh.sections(bad)] == [(None, True), ("ok", False)]


_PLAIN_RULES = (
    "[{backendRefs: [{name: web, port: 80}, {group: '', name: web, port: 80}, {kind: Service, name: api, port: 80},"
    " {group: '', kind: Service, name: api, port: 80}, {group: multicluster.x-k8s.io, kind: ServiceImport, name: web, port: 80}],"
    " filters: [{type: RequestMirror, requestMirror: {backendRef: {name: api, port: 80}}}]}]"
)


def test_a_service_named_as_the_gateway_api_writes_it_is_resolved_without_asking_how_parents_resolve_kinds(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # No group or the core one, no kind or Service: a Service, which no implementation of the
    # shipped profiles resolves by kind, reads as a host or delegates to, so how it is resolved is
    # the route's alone. Only the ServiceImport asks how the route's parents resolve its kind.
    from policylint.semantics.topology.backends import Backends

    text = first(gateway_class()) + gateway() + service() + service("api")
    text += "".join(route(name=f"r{i}", rules=_PLAIN_RULES) for i in range(6))
    project = project_of(text)
    asked: list[Any] = []
    resolving = Backends._backend_resolving

    def counted(self: Backends, parents: Any, raw: Any, purpose: str, mesh_only: bool) -> Any:
        asked.append(raw)
        return resolving(self, parents, raw, purpose, mesh_only)

    monkeypatch.setattr(Backends, "_backend_resolving", counted)
    topology = Topology(project.resolution, project.admissions())
    assert [raw["kind"] for raw in asked] == ["ServiceImport"] * 6
    for i in range(6):
        refs = topology.refs_from(project.index.lookup("gateway.networking.k8s.io", "HTTPRoute", "app", f"r{i}"))
        plain = [(r.path, r.purpose, r.group, r.kind, r.namespace, r.name, r.status) for r in refs if r.kind == "Service"]
        assert plain == [
            ("spec.rules[0].backendRefs[0]", "backend", "", "Service", "app", "web", ReferenceStatus.RESOLVED),
            ("spec.rules[0].backendRefs[1]", "backend", "", "Service", "app", "web", ReferenceStatus.RESOLVED),
            ("spec.rules[0].backendRefs[2]", "backend", "", "Service", "app", "api", ReferenceStatus.RESOLVED),
            ("spec.rules[0].backendRefs[3]", "backend", "", "Service", "app", "api", ReferenceStatus.RESOLVED),
            (
                "spec.rules[0].filters[0].requestMirror.backendRef",
                "mirror",
                "",
                "Service",
                "app",
                "api",
                ReferenceStatus.RESOLVED,
            ),
        ]
        assert [r.kind for r in refs] == ["Service"] * 4 + ["ServiceImport", "Service"]


@pytest.mark.parametrize("source", ["examples", "text"])
def test_every_service_reference_taken_straight_is_resolved_as_the_questions_it_skips_would_have_it(source: str) -> None:
    # The four questions a Service named as the Gateway API writes it no longer asks, asked of
    # every such reference of every route: each answers that nothing treats it in its own way, and
    # how it is resolved is the one it was given.
    from policylint.semantics.topology.backends import _BACKEND, _MESH_BACKEND

    if source == "examples":
        project = lint_paths([str(Path(__file__).resolve().parents[2] / "examples")], selection=select("PL001")).project
    else:
        mesh = route("[{group: '', kind: Service, name: web}]", name="mesh", rules=_PLAIN_RULES)
        project = project_of(first(gateway_class()) + gateway() + service() + route(rules=_PLAIN_RULES) + mesh)
    topology = project.topology()
    taken = 0
    for owner in topology.routes():
        mesh_only = topology._mesh_only(owner)

        def parents(owner: Any = owner) -> Any:
            return topology._parent_implementations(owner)

        for i, rule in enumerate(owner.spec.get("rules") or []):
            mirrors = [f.get("requestMirror", {}).get("backendRef") for f in rule.get("filters") or []]
            for raw in [*(rule.get("backendRefs") or []), *mirrors]:
                if not isinstance(raw, dict) or raw.get("kind", "Service") != "Service" or raw.get("group", "") != "":
                    continue
                taken += 1
                assert not topology._delegation(parents, raw)
                assert topology._host_backend(owner, parents, "spec.rules[0]", raw, "backend", i) is None
                for purpose in ("backend", "mirror", "ext-auth"):
                    expected = _MESH_BACKEND if mesh_only else _BACKEND
                    assert topology._backend_resolving(parents, raw, purpose, mesh_only) is expected
    # examples/: six in team-a's routes (one a mirror's), three in team-b's; the text: two routes of five.
    assert taken == (9 if source == "examples" else 10)
