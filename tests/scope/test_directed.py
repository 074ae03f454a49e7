"""The part found by what reads what (policylint/semantics/directed.py): on hand-made tenants that
send traffic to each other's Services, what a change's part holds, what it leaves out, and where
the search declines and the part is what references join in either direction. Whether the
findings are a run's over everything is tests/incremental/test_incremental.py's differential
(value and reaching edits, held to the whole repository analysed) and
tests/scope/test_scoped_analysis.py's property. Where no class can join its Gateways, the
directed part is found without joining the sets (`PartGraph.classes_apart`): checked here against
the sets, and by tests/scope/test_part_graph.py's random edits."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from policylint.k8s.objects import ObjectKey
from policylint.pipeline import LintRequest
from policylint.semantics import components, directed, partgraph
from policylint.semantics.namerefs import Reference
from policylint.semantics.partgraph import PartGraph

GW = "gateway.networking.k8s.io"


def _tenant(k: int, reaches: list[int]) -> list[dict[str, Any]]:
    """Tenant `k`: its Gateway, a route on it sending traffic to its own Service and to
    those of the tenants `reaches`, its Service, a grant letting the next two tenants' routes
    reach it, and a policy on its route."""
    ns = f"t{k}"
    backends = [{"name": f"svc{k}", "port": 80}] + [{"name": f"svc{j}", "namespace": f"t{j}", "port": 80} for j in reaches]
    return [
        {
            "apiVersion": f"{GW}/v1",
            "kind": "Gateway",
            "metadata": {"name": f"gw{k}", "namespace": ns},
            "spec": {"gatewayClassName": "eg", "listeners": [{"name": "http", "port": 80, "protocol": "HTTP"}]},
        },
        {
            "apiVersion": f"{GW}/v1",
            "kind": "HTTPRoute",
            "metadata": {"name": f"r{k}", "namespace": ns},
            "spec": {"parentRefs": [{"name": f"gw{k}"}], "rules": [{"backendRefs": backends}]},
        },
        {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": {"name": f"svc{k}", "namespace": ns},
            "spec": {"ports": [{"port": 80}]},
        },
        {
            "apiVersion": f"{GW}/v1beta1",
            "kind": "ReferenceGrant",
            "metadata": {"name": f"allow{k}", "namespace": ns},
            "spec": {
                "from": [{"group": GW, "kind": "HTTPRoute", "namespace": f"t{j}"} for j in (k + 1, k + 2)],
                "to": [{"group": "", "kind": "Service"}],
            },
        },
        {
            "apiVersion": "gateway.envoyproxy.io/v1alpha1",
            "kind": "BackendTrafficPolicy",
            "metadata": {"name": f"p{k}", "namespace": ns},
            "spec": {
                "targetRefs": [{"group": GW, "kind": "HTTPRoute", "name": f"r{k}"}],
                "timeout": {"tcp": {"connectTimeout": "5s"}},
            },
        },
    ]


def _chain(
    root: Path, n: int = 12, extra: list[dict[str, Any]] | None = None, *, reaching: bool = True, held: bool = False
) -> None:
    """`n` tenants, each reaching the two before it (`reaching`; else none), one file per tenant
    (`t{k}.yaml`), their Namespaces in a file of their own, or each in its tenant's file
    (`held`, first, as the benchmark's tenants are written)."""
    root.mkdir(exist_ok=True)
    namespaces = [{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": f"t{k}"}} for k in range(n)]
    (root / "namespaces.yaml").write_text(yaml.safe_dump_all([] if held else namespaces), encoding="utf-8")
    for k in range(n):
        docs = ([namespaces[k]] if held else []) + _tenant(k, [j for j in (k - 1, k - 2) if j >= 0 and reaching])
        (root / f"t{k:02d}.yaml").write_text(yaml.safe_dump_all(docs), encoding="utf-8")
    (root / "class.yaml").write_text(
        yaml.safe_dump(
            {"apiVersion": f"{GW}/v1", "kind": "GatewayClass", "metadata": {"name": "eg"}, "spec": {"controllerName": "x"}}
        ),
        encoding="utf-8",
    )
    if extra:
        (root / "extra.yaml").write_text(yaml.safe_dump_all(extra), encoding="utf-8")


def _part(root: Path, origin: str) -> tuple[set[str], set[str]] | None:
    """The names of the members and of the analysed objects of `origin`'s part (thresholds off)."""
    from policylint.pipeline import _project

    loaded = _project(LintRequest(paths=[str(root)]))[0]
    part = components.scope(loaded.index.objects, [str(root / origin)], min_objects=0, max_share=1.0)
    if part is None:
        return None
    return {k.name for k in part.members}, {o.name for o in part.objects}


def test_a_route_changed_reaches_the_tenants_that_read_what_it_reads(tmp_path: Path) -> None:
    """A change of tenant 6's file (its route r6 reaches the Services of 5 and 4; r7 and r8 reach
    its own). Members: its objects; the routes naming into its namespace (r7, r8); what its objects
    read (gw6, svc5, svc4, the grants of t5 and t4) and every object reading those (r5 and r4
    reach svc4 as r6 does: a tally counts them all; r7 reads t5's grant); every object reading a
    member (the policies on those routes). Analysed besides: what the members read (their
    Gateways, the Services of t2–t8) and every route reaching those Services (r9 and r10 reach
    svc8, r2 and r3 reach svc2), with what those read, and the namespaces all of those live in or
    name, whole (t0–t10). Tenants 11–15 are out; every reference joins all sixteen tenants into
    one set, which the part search analysed whole."""
    _chain(tmp_path, n=16)
    found = _part(tmp_path, "t06.yaml")
    assert found is not None
    members, analysed = found
    assert members == {
        *("gw6", "r6", "svc6", "allow6", "p6"),
        *("r7", "r8", "p7", "p8"),  # naming into t6, and the policies on them
        *("svc5", "svc4", "allow5", "allow4"),  # what r6 reads
        *("r5", "p5", "r4", "p4"),  # reading svc4 (and svc5) as r6 does, and the policies on them
    }
    assert {"r9", "r10", "gw9", "gw10", "gw7", "gw8", "gw5", "gw4", "r2", "r3"} <= analysed
    assert {"r1", "gw1", "p1", "r0", "gw10", "p10", "allow10"} <= analysed
    assert not {name for k in range(11, 16) for name in (f"r{k}", f"gw{k}", f"svc{k}", f"p{k}", f"allow{k}")} & analysed
    # The part the references join in either direction: everything.
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(components, "DIRECTED", False)
        whole = _part(tmp_path, "t06.yaml")
    assert whole is not None and {"r1", "r15"} <= whole[0]


@pytest.mark.parametrize(
    ("extra", "why"),
    [
        # A policy on the class: every Gateway of it reads it (classes joined to their Gateways).
        (
            [
                {
                    "apiVersion": "gateway.envoyproxy.io/v1alpha1",
                    "kind": "ClientTrafficPolicy",
                    "metadata": {"name": "class-wide", "namespace": "t0"},
                    "spec": {"targetRefs": [{"group": GW, "kind": "GatewayClass", "name": "eg"}]},
                }
            ],
            "class",
        ),
        # A target selector across namespaces: it may read any object.
        (
            [
                {
                    "apiVersion": "gateway.envoyproxy.io/v1alpha1",
                    "kind": "BackendTrafficPolicy",
                    "metadata": {"name": "everywhere", "namespace": "t0"},
                    "spec": {
                        "targetSelectors": [{"kind": "HTTPRoute", "namespaces": {"from": "All"}, "matchLabels": {"a": "b"}}]
                    },
                }
            ],
            "everywhere",
        ),
    ],
)
def test_joins_without_a_direction_fall_back_to_the_part_references_join(
    tmp_path: Path, extra: list[dict[str, Any]], why: str
) -> None:
    _chain(tmp_path, extra=extra)
    found = _part(tmp_path, "t06.yaml")
    # The part search's own answer: one set of every tenant, or everything (None).
    assert found is None or {"r1", "r11"} <= found[0], why


def test_a_namespace_changed_takes_every_object_of_its_namespace(tmp_path: Path) -> None:
    """A file of every tenant's Namespace: each namespace's objects are members, as a change of an
    object of each namespace makes them."""
    _chain(tmp_path)
    found = _part(tmp_path, "namespaces.yaml")
    assert found is not None and {"r1", "r11"} <= found[0]


def test_a_tenant_file_holding_its_namespace_takes_the_directed_part(tmp_path: Path) -> None:
    """Tenant 6's file holds its Namespace, as the benchmark's and real repositories' tenant files
    do: the members are those of the first test's change (the tenant's objects, the routes naming
    into t6 and their policies, what r6 reads and what reads that) with the Namespace itself, and
    a policy of t12 naming Namespace t6 as its target (Linkerd's AuthorizationPolicy takes a
    Namespace; its finding is about its reference to t6); tenants 11–15 are left out besides. The
    tree before declined on the Namespace and took the sets' part: every tenant."""
    naming = {
        "apiVersion": "policy.linkerd.io/v1alpha1",
        "kind": "AuthorizationPolicy",
        "metadata": {"name": "on-t6", "namespace": "t12"},
        "spec": {"targetRef": {"group": "", "kind": "Namespace", "name": "t6"}, "requiredAuthenticationRefs": []},
    }
    _chain(tmp_path, n=16, extra=[naming], held=True)
    found = _part(tmp_path, "t06.yaml")
    assert found is not None
    members, analysed = found
    assert members == {
        *("t6", "gw6", "r6", "svc6", "allow6", "p6"),
        *("r7", "r8", "p7", "p8"),
        *("svc5", "svc4", "allow5", "allow4"),
        *("r5", "p5", "r4", "p4"),
        "on-t6",
    }
    assert not {name for k in range(13, 16) for name in (f"r{k}", f"gw{k}", f"svc{k}", f"p{k}", f"allow{k}")} & analysed
    # Every Namespace is context, whichever part: what the members' findings read of their labels.
    assert {f"t{k}" for k in range(16)} <= analysed


def test_a_namespace_removed_falls_back_to_the_part_references_join(tmp_path: Path) -> None:
    """A Namespace deleted (or renamed) is not taken: its objects lose their labels and what named
    it finds nothing, which the sets answer."""
    from policylint.pipeline import _project

    _chain(tmp_path, n=16, held=True)
    objects = _project(LintRequest(paths=[str(tmp_path)]))[0].index.objects
    gone = [ObjectKey("", "Namespace", None, "t6")]
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(directed, "_Graph", None)  # never built: the search declines before its index
        part = components.scope(objects, [str(tmp_path / "t06.yaml")], gone, min_objects=0, max_share=1.0)
    assert part is not None and {"r1", "r15"} <= {k.name for k in part.members}


def test_a_label_selector_target_reads_its_namespace_whole(tmp_path: Path) -> None:
    """A policy in t2 choosing routes by label reads every object of t2, so reads r2, which reads
    svc0: a change of tenant 0's file takes it as a member (r2 names into t0, the policy reads
    r2). A change of tenant 11's file reaches t7–t11 alone, and leaves it out."""
    selecting = {
        "apiVersion": "gateway.envoyproxy.io/v1alpha1",
        "kind": "BackendTrafficPolicy",
        "metadata": {"name": "by-label", "namespace": "t2"},
        "spec": {"targetSelectors": [{"group": GW, "kind": "HTTPRoute", "matchLabels": {"a": "b"}}]},
    }
    _chain(tmp_path, extra=[selecting])
    found = _part(tmp_path, "t00.yaml")
    assert found is not None and "by-label" in found[0]
    found = _part(tmp_path, "t11.yaml")
    assert found is not None and "by-label" not in found[1] and "r11" in found[0]


def _graph(root: Path) -> PartGraph:
    from policylint.pipeline import _project

    graph = PartGraph()
    graph.update(_project(LintRequest(paths=[str(root)]))[0].index.objects, {})
    return graph


def test_the_directed_part_joins_no_set_where_no_class_can_join_its_gateways(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The sets are read only where the directed search declines: on tenants whose one class is
    named by their Gateways alone, `classes_apart` proves no class joins its Gateways, so a change's
    directed part joins no set (no file's edges worked out; every file's on the tree before), and
    is the part found when the sets are joined to tell it."""
    _chain(tmp_path, n=16)
    graph = _graph(tmp_path)
    assert graph.classes_apart()
    assert graph.sets()[1] == {}  # what it proves
    connected: list[int] = []
    real = partgraph._File.connect

    def connect(self: partgraph._File, facts: Any) -> None:
        connected.append(len(self.objects))
        real(self, facts)

    monkeypatch.setattr(partgraph._File, "connect", connect)
    found = _part(tmp_path, "t06.yaml")
    assert found is not None and connected == []
    monkeypatch.setattr(PartGraph, "classes_apart", lambda self: False)
    assert _part(tmp_path, "t06.yaml") == found
    assert len(connected) == 18  # every file's edges: the sets joined to tell the classes apart


_CLASS = {"apiVersion": f"{GW}/v1", "kind": "GatewayClass", "metadata": {"name": "eg"}, "spec": {"controllerName": "y"}}


@pytest.mark.parametrize(
    "extra",
    [
        # A policy on the class: the class's set holds it (the sets join the class's Gateways).
        [
            {
                "apiVersion": "gateway.envoyproxy.io/v1alpha1",
                "kind": "ClientTrafficPolicy",
                "metadata": {"name": "class-wide", "namespace": "t0"},
                "spec": {"targetRefs": [{"group": GW, "kind": "GatewayClass", "name": "eg"}]},
            }
        ],
        # Another class of the name (PL005): its set holds another object.
        [_CLASS],
        # A Namespace of the class's name: the same node, a name in no namespace.
        [{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "eg"}}],
        # A reference to the name in a namespace: it may be read as the class (a name in no
        # namespace), so it is not proven apart, whether or not the sets join.
        [
            {
                "apiVersion": "v1",
                "kind": "Service",
                "metadata": {"name": "s", "namespace": "t0"},
                "spec": {"ports": [{"port": 80}], "x": {"name": "eg"}},
            }
        ],
    ],
)
def test_a_class_its_name_can_join_is_not_proven_apart(tmp_path: Path, extra: list[dict[str, Any]]) -> None:
    _chain(tmp_path, extra=extra)
    assert not _graph(tmp_path).classes_apart()


def test_a_class_with_parameters_is_not_proven_apart(tmp_path: Path) -> None:
    """A class's parameters can merge its Gateways into one proxy: the sets join them."""
    _chain(tmp_path)
    (tmp_path / "class.yaml").write_text(
        yaml.safe_dump({**_CLASS, "spec": {"controllerName": "x", "parametersRef": {"group": "g", "kind": "K", "name": "p"}}}),
        encoding="utf-8",
    )
    graph = _graph(tmp_path)
    assert not graph.classes_apart()
    assert graph.sets()[1] != {}


def test_a_search_after_the_sets_were_joined_takes_their_part_where_it_is_small(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The change's base side searches after its staged side, in one process: where the staged side
    joined the sets (its change removed a Namespace, which the directed search declines), a part of
    the sets of at most `SETS_FIRST` of the objects is taken without the directed search's index
    of every object's references (built on the tree before), and holds the objects the directed
    part holds: tenant 6's five, on 60 tenants reaching no other."""
    _chain(tmp_path, n=60, reaching=False)
    from policylint.pipeline import _project

    objects = _project(LintRequest(paths=[str(tmp_path)]))[0].index.objects
    built: list[int] = []
    real = directed._Graph.__init__

    def count(self: directed._Graph, *args: Any) -> None:
        built.append(1)
        real(self, *args)

    monkeypatch.setattr(directed._Graph, "__init__", count)
    graph = PartGraph()
    gone = [ObjectKey("", "Namespace", None, "t60")]
    staged = components.scope(objects, [str(tmp_path / "namespaces.yaml")], gone, min_objects=0, max_share=1.0, kept=graph)
    assert staged is not None and graph.joined and built == []
    base = components.scope(objects, [str(tmp_path / "t06.yaml")], min_objects=0, max_share=1.0, kept=graph)
    assert base is not None and built == []
    alone = components.scope(objects, [str(tmp_path / "t06.yaml")], min_objects=0, max_share=1.0)
    assert alone is not None and built == [1]
    assert {k.name for k in base.members} == {k.name for k in alone.members} == {"gw6", "r6", "svc6", "allow6", "p6"}


def _index(graph: directed._Graph) -> tuple[Any, ...]:
    """What a search reads of an index: what each object reads, and the readers of each node as
    sets (their order is no search's)."""

    def readers(table: dict[Any, list[int]]) -> dict[Any, set[int]]:
        return {node: set(found) for node, found in table.items() if found}

    return (
        [sorted(out) for out in graph.out],
        readers(graph.naming),
        readers(graph.reading_namespace),
        readers(graph.reading_grants),
    )


def test_an_index_patched_for_other_references_is_the_index_built_from_nothing(tmp_path: Path) -> None:
    """The change's other side patches the index of the search before (`Kept.index`): the objects
    whose references changed (a route sent to other tenants' Services, across namespaces or not,
    a policy retargeted, a route's references all dropped) read again, the rest kept. Each step's
    index reads as one built from nothing over the same references; an object renamed builds
    it again."""
    _chain(tmp_path, n=16)
    graph = _graph(tmp_path)
    names, namespaces, kinds, refs = graph.names(), graph.namespaces(), graph.kinds(), graph.refs()
    kept = directed.Kept()
    first = kept.index(names, namespaces, kinds, refs)
    assert _index(first) == _index(directed._Graph(names, namespaces, kinds, refs))
    r6, p9 = names.index("r6"), names.index("p9")
    edits = [
        {r6: [Reference("t6", "gw6", False), Reference("t12", "svc12", True), Reference("t6", "svc6", False)]},
        {r6: [Reference("t6", "gw6", False), Reference("t3", "svc3", True)], p9: [Reference("t9", "r8", False)]},
        {r6: [], p9: [Reference("t9", "t2", False), Reference("t9", "", False, True)]},
        {},
    ]
    for edit in edits:
        # Every other object's references equal lists, not the same ones: read as unchanged.
        now = [edit[i] if i in edit else list(r) for i, r in enumerate(refs)]
        patched = kept.index(list(names), list(namespaces), list(kinds), now)
        assert patched is first  # patched, not built again
        assert _index(patched) == _index(directed._Graph(names, namespaces, kinds, now)), edit
    renamed = [*names[:r6], "r6x", *names[r6 + 1 :]]
    assert kept.index(renamed, namespaces, kinds, refs) is not first
