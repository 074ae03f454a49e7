"""Scoped analysis (policylint/semantics/components.py): a run whose report scope is narrower
than what it reads (`--context`, `--diff`, `--staged`, the pre-commit hook) analyses only the part
of the project the scope can reach, and reports exactly what a run over everything reports,
restricted to the scope.

The property is checked on random repositories: the benchmark generator's tenants (Gateway,
listeners, routes, Services, ReferenceGrants and policies at every level, some references
misspelled), isolated or reaching into each other, then mutated the ways that stress the
dependency model — objects deleted (dangling targets, parents and backends, near-miss hints),
renamed by one letter, duplicated into another file, cross-namespace backends with and without a
grant, a policy on the GatewayClass (which reaches every Gateway of it), label-selector targets —
and split into files of one to five documents. A random file set is the report scope, with or
without a change that deleted objects (`--diff`).
"""

from __future__ import annotations

import copy
import dataclasses
import random
from pathlib import Path
from typing import Any

import pytest
import yaml

from benchmarks.generate import objects as tenants
from policylint.pipeline import LintRequest, lint
from policylint.report_scope import ChangeSet
from policylint.reporters.text import summary
from policylint.semantics import components

GW = "gateway.networking.k8s.io"
SEEDS = range(16)


def _key(obj: dict[str, Any]) -> tuple[str, str, str | None, str]:
    group = obj["apiVersion"].rpartition("/")[0]
    return group, obj["kind"], obj["metadata"].get("namespace"), obj["metadata"]["name"]


def _mutate(docs: list[dict[str, Any]], rng: random.Random) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(the repository, the objects a change deleted from it)."""
    docs = copy.deepcopy(docs)
    namespaces = sorted({d["metadata"]["namespace"] for d in docs if d["metadata"].get("namespace")})
    # Cross-namespace backends, some allowed by a grant, some not.
    routes = [d for d in docs if d["kind"] == "HTTPRoute"]
    for route in rng.sample(routes, k=min(2, len(routes))):
        other = rng.choice(namespaces)
        route["spec"]["rules"][0]["backendRefs"] = [{"name": "cart-0", "namespace": other, "port": 8080}]
    # Grants for every Service of their namespace (no `to` name): only the namespace ties them to
    # the references they allow.
    for grant in (d for d in docs if d["kind"] == "ReferenceGrant"):
        if rng.random() < 0.5:
            for entry in grant["spec"]["to"]:
                entry.pop("name", None)
    # A policy on the class: it reaches every Gateway of it.
    if rng.random() < 0.15:
        docs.append(
            {
                "apiVersion": "gateway.envoyproxy.io/v1alpha1",
                "kind": "ClientTrafficPolicy",
                "metadata": {"name": "class-wide", "namespace": rng.choice(namespaces)},
                "spec": {"targetRefs": [{"group": GW, "kind": "GatewayClass", "name": "envoy"}], "tls": {"minVersion": "1.3"}},
            }
        )
    # A policy on a Namespace (a kind policylint knows only by its shape): it reaches all of it.
    if rng.random() < 0.3:
        docs.append(
            {
                "apiVersion": "policies.example.com/v1",
                "kind": "TimeoutPolicy",
                "metadata": {"name": "namespace-wide", "namespace": rng.choice(namespaces)},
                "spec": {
                    "targetRefs": [{"group": "", "kind": "Namespace", "name": rng.choice(namespaces)}],
                    "default": {"timeout": "3s"},
                },
            }
        )
    # Label-selector targets.
    if rng.random() < 0.5:
        docs.append(
            {
                "apiVersion": "gateway.envoyproxy.io/v1alpha1",
                "kind": "BackendTrafficPolicy",
                "metadata": {"name": "by-label", "namespace": rng.choice(namespaces)},
                "spec": {
                    "targetSelectors": [
                        {"group": GW, "kind": "HTTPRoute", "matchLabels": {"app.kubernetes.io/managed-by": "helm"}}
                    ],
                    "timeout": {"http": {"requestTimeout": "5s"}},
                },
            }
        )
    # One-letter renames (near-miss hints) and duplicates.
    for doc in rng.sample(docs, k=min(4, len(docs))):
        if doc["kind"] not in ("Namespace", "GatewayClass"):
            doc["metadata"]["name"] = doc["metadata"]["name"][:-1] + "x"
    for doc in rng.sample(docs, k=min(2, len(docs))):
        if doc["kind"] not in ("Namespace", "GatewayClass"):
            docs.append(copy.deepcopy(doc))
    # Deleted: some by the change (their keys are the change's "before"), some long ago.
    deletable = [d for d in docs if d["kind"] not in ("Namespace", "GatewayClass")]
    gone = rng.sample(deletable, k=min(6, len(deletable)))
    changed = gone[: len(gone) // 2]
    ids = {id(d) for d in gone}
    return [d for d in docs if id(d) not in ids], changed


# libyaml's emitter writes these documents as PyYAML's own emitter does, byte for byte
# (test_the_files_are_what_pyyaml_writes), in about a quarter of its time: writing the random
# repositories with PyYAML's was about a third of the property's time.
DUMPER = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


def _write(docs: list[dict[str, Any]], root: Path, rng: random.Random) -> list[Path]:
    rng.shuffle(docs)  # the order of documents and files must not matter
    files: list[Path] = []
    i = 0
    while i < len(docs):
        n = rng.randint(1, 5)
        path = root / f"f{len(files):04d}.yaml"
        path.write_text(yaml.dump_all(docs[i : i + n], Dumper=DUMPER, sort_keys=False), encoding="utf-8")
        files.append(path)
        i += n
    return files


def _run(request: LintRequest) -> tuple[list[dict[str, Any]], list[str], list[str], str]:
    result = lint(request)
    # The text summary counts every object and policy read, which a scoped run with a cache
    # answers without building the objects outside its part (policylint.k8s.roster).
    return [dataclasses.asdict(f) for f in result.findings], result.files, result.context_files, summary(result)


@pytest.fixture
def scope_everything(monkeypatch: pytest.MonkeyPatch) -> None:
    # Small repositories: scope them even when the part is most of them, so that the property is
    # exercised on every example rather than falling back to the whole analysis.
    monkeypatch.setattr(components, "MIN_OBJECTS", 0)
    monkeypatch.setattr(components, "MAX_SHARE", 1.0)


@pytest.mark.usefixtures("scope_everything")
@pytest.mark.parametrize(
    ("seeds", "sizes"),
    [
        # A few smaller examples in `make test`; the sixteen larger ones in the whole suite, four
        # to a test, so that the suite's workers share them: as one test they took a worker for
        # the last minutes of the run alone.
        pytest.param(range(6), (250, 500), id="fast"),
        *(pytest.param(SEEDS[k : k + 4], (600, 1200), id=f"full-{k}", marks=pytest.mark.slow) for k in range(0, len(SEEDS), 4)),
    ],
)
def test_scoped_run_equals_full_run_restricted_to_the_scope(tmp_path: Path, seeds: range, sizes: tuple[int, int]) -> None:
    """On every random example, the scoped run finds what the full run finds in the scope. One
    test over several of them, so that the check of what they add up to (most examples scoped to
    a part, with findings in scope) sees each one whichever process runs the suite (pytest-xdist).
    Each group of four holds three isolated examples and one of chained tenants (`seed % 4`), and
    the check holds for each group: for the sixteen together too."""
    parts = []
    for seed in seeds:
        parts.append(_scoped_equals_full(seed, tmp_path / f"seed-{seed}", sizes))
    # The comparison means something only where the scoped run analysed a part and the scope had
    # findings: most of the random examples must.
    assert sum(share < 0.9 and found > 0 for share, found in parts) >= len(parts) // 2, str(sorted(parts))


def _scoped_equals_full(seed: int, root: Path, sizes: tuple[int, int]) -> tuple[float, int]:
    """Asserts the equality on example `seed`; (share of the objects analysed, findings in scope)."""
    root.mkdir()
    rng = random.Random(seed)
    isolated = seed % 4 != 3  # mostly parts that do not see each other; some chained tenants
    docs = list(tenants(rng.randint(*sizes), seed, error_rate=0.3, isolated=isolated))
    docs, deleted = _mutate(docs, rng)
    files = _write(docs, root, rng)
    scope = rng.sample(files, k=rng.randint(1, 3))
    if seed % 3 == 0:
        change = ChangeSet(frozenset(str(p.resolve()) for p in scope), frozenset(_obj_key(d) for d in deleted))
        base = LintRequest(paths=[str(root)], change=change)
    else:
        base = LintRequest(paths=[str(p) for p in scope], context_paths=[str(root)])
    full = _run(dataclasses.replace(base, scoped_analysis=False))
    scoped = _run(base)
    assert scoped == full, f"seed {seed}"
    # With a cache, twice: the second run builds the files it does not load from their shells.
    cached = dataclasses.replace(base, cache_dir=str(root.parent / f"cache-{seed}"))
    assert _run(cached) == full, f"seed {seed}, cache filled"
    assert _run(cached) == full, f"seed {seed}, from the shells"
    return _share(base), len(full[0])


def test_the_files_are_what_pyyaml_writes(tmp_path: Path) -> None:
    """The property's repositories are written by libyaml's emitter (`DUMPER`): on the first
    example, every file holds the bytes PyYAML's own emitter writes for its documents."""
    rng = random.Random(0)
    docs, _ = _mutate(list(tenants(rng.randint(250, 500), 0, error_rate=0.3, isolated=True)), rng)
    files = _write(docs, tmp_path, rng)  # shuffles `docs` into the order written
    assert len(files) > 50
    start = 0
    for path in files:
        text = path.read_text(encoding="utf-8")
        count = len(list(yaml.safe_load_all(text)))
        assert text == yaml.safe_dump_all(docs[start : start + count], sort_keys=False), path.name
        start += count
    assert start == len(docs)


def _share(request: LintRequest) -> float:
    """The share of the objects read that a run analysed."""
    from policylint.pipeline import _analysed, _project

    loaded, sources, *_ = _project(request)
    project = _analysed(request, sources, loaded)[0]
    return len(project.index.objects) / len(loaded.index.objects)


def _obj_key(doc: dict[str, Any]) -> Any:
    from policylint.k8s.objects import ObjectKey

    group, kind, namespace, name = _key(doc)
    return ObjectKey(group, kind, namespace, name)


def test_the_examples_are_scoped_not_analysed_whole(tmp_path: Path) -> None:
    """The property above would hold trivially if every run fell back to the whole analysis: on
    isolated tenants a one-file scope analyses a small part."""
    rng = random.Random(7)
    docs = list(tenants(2000, 7, isolated=True))
    files = _write(docs, tmp_path, rng)
    from policylint.pipeline import _analysed, _project

    request = LintRequest(paths=[str(files[len(files) // 2])], context_paths=[str(tmp_path)])
    loaded, sources, *_ = _project(request)
    project, members = _analysed(request, sources, loaded)
    assert members is not None
    assert len(project.index.objects) < len(loaded.index.objects) / 4
    # Chained tenants (each reaches its neighbour's Service) are one set of what references join
    # in either direction: that part is the whole, analysed whole.
    chained = tmp_path / "chained"
    chained.mkdir()
    files = _write(list(tenants(2000, 7, isolated=False)), chained, rng)
    request = LintRequest(paths=[str(files[len(files) // 2])], context_paths=[str(chained)])
    loaded, sources, *_ = _project(request)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(components, "DIRECTED", False)
        assert _analysed(request, sources, loaded)[1] is None
    # What reads what (policylint.semantics.directed) reaches a few of them.
    project, members = _analysed(request, sources, loaded)
    assert members is not None
    assert len(project.index.objects) < len(loaded.index.objects) / 4


def test_a_cluster_scoped_seed_analyses_everything(tmp_path: Path) -> None:
    """A changed GatewayClass reaches every Gateway of it, by no name: the whole is analysed."""
    docs = list(tenants(600, 3, isolated=True))
    (tmp_path / "class.yaml").write_text(yaml.safe_dump(docs[0]), encoding="utf-8")
    (tmp_path / "rest.yaml").write_text(yaml.safe_dump_all(docs[1:]), encoding="utf-8")
    from policylint.pipeline import _analysed, _project

    request = LintRequest(paths=[str(tmp_path / "class.yaml")], context_paths=[str(tmp_path)])
    loaded, sources, *_ = _project(request)
    assert _analysed(request, sources, loaded)[1] is None


def _part(tmp_path: Path, text: str, origin: str, hosts: dict[tuple[str, str], str] | None = None) -> set[tuple[str | None, str]]:
    """The (namespace, name) of the members of the part `origin`'s file reaches (thresholds off)."""
    from policylint.pipeline import _project

    for i, doc in enumerate(text.split("---\n")):
        (tmp_path / f"{i:02d}.yaml").write_text(doc, encoding="utf-8")
    loaded = _project(LintRequest(paths=[str(tmp_path)]))[0]
    part = components.scope(loaded.index.objects, [str(tmp_path / origin)], hosts=hosts, min_objects=0, max_share=1.0)
    assert part is not None
    return {(k.namespace, k.name) for k in part.members}


_SHARED_GATEWAY = """\
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: r1, namespace: t1}
spec:
  parentRefs: [{name: gw, namespace: infra}]
  rules: [{backendRefs: [{name: svc, port: 80}]}]
---
apiVersion: v1
kind: Service
metadata: {name: svc, namespace: t1}
spec: {ports: [{port: 80}]}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw, namespace: infra}
spec:
  gatewayClassName: eg
  listeners: [{name: http, port: 80, protocol: HTTP}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: r2, namespace: t2}
spec:
  parentRefs: [{name: gw, namespace: infra}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: r3, namespace: t3}
spec:
  rules: [{backendRefs: [{name: lonely, port: 80}]}]
---
apiVersion: v1
kind: Service
metadata: {name: lonely, namespace: t3}
spec: {ports: [{port: 80}]}
"""


def test_the_part_is_what_references_connect_in_either_direction(tmp_path: Path) -> None:
    """r1 (the scope) reaches the Gateway it names in another namespace, and through it the other
    route attached there; the tenant that names neither stays out. r1 is read before the Gateway,
    so the Gateway's name is first met as r1's reference."""
    assert _part(tmp_path, _SHARED_GATEWAY, "00.yaml") == {("t1", "r1"), ("t1", "svc"), ("infra", "gw"), ("t2", "r2")}
    # From the other end: the second route reaches the first through the Gateway.
    assert ("t1", "r1") in _part(tmp_path, _SHARED_GATEWAY, "03.yaml")
    assert _part(tmp_path, _SHARED_GATEWAY, "05.yaml") == {("t3", "r3"), ("t3", "lonely")}


# An Istio route's `Hostname` backend names a host a ServiceEntry declares, in any namespace its
# exportTo reaches (docs/semantics.md#backends). The first ServiceEntry (in input order, and by
# namespace) is another one: a scoped run keeps one object of each kind as context, which must not
# be what finds the host.
_HOSTNAME_EGRESS = """\
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: r1, namespace: t1}
spec:
  rules: [{backendRefs: [{group: networking.istio.io, kind: Hostname, name: google.com, port: 80}]}]
---
apiVersion: networking.istio.io/v1
kind: ServiceEntry
metadata: {name: other, namespace: a-other}
spec: {hosts: [example.org]}
---
apiVersion: networking.istio.io/v1
kind: ServiceEntry
metadata: {name: egress, namespace: z-egress}
spec: {hosts: [google.com]}
"""


def test_a_hostname_backend_reaches_the_object_declaring_the_host(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    hosts = {("networking.istio.io", "ServiceEntry"): "hosts"}
    assert _part(tmp_path, _HOSTNAME_EGRESS, "00.yaml", hosts) == {("t1", "r1"), ("z-egress", "egress")}
    assert _part(tmp_path, _HOSTNAME_EGRESS, "02.yaml", hosts) == {("t1", "r1"), ("z-egress", "egress")}
    assert _part(tmp_path, _HOSTNAME_EGRESS, "00.yaml") == {("t1", "r1")}
    # Through the pipeline, which takes the hosts from the profiles: the scoped run finds the
    # host as the full run does (else PL411: no ServiceEntry of the input declares it).
    monkeypatch.setattr(components, "MIN_OBJECTS", 0)
    monkeypatch.setattr(components, "MAX_SHARE", 1.0)
    scoped = lint(LintRequest(paths=[str(tmp_path / "00.yaml")], context_paths=[str(tmp_path)]))
    assert scoped.findings and [f.rule for f in scoped.findings if f.rule == "PL411"] == []


def test_references_are_named_once_each(tmp_path: Path) -> None:
    """The same backend in three rules is one reference; a namespace given is explicit."""
    from policylint.pipeline import _project

    (tmp_path / "route.yaml").write_text(
        """\
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: r, namespace: t}
spec:
  parentRefs: [{name: gw, namespace: infra}]
  rules:
  - backendRefs: [{name: svc, port: 80}]
  - backendRefs: [{name: svc, port: 80}]
    matches: [{headers: [{name: x-not-a-reference, value: v}]}]
  - backendRefs: [{name: svc, port: 8080}]
""",
        encoding="utf-8",
    )
    (route,) = _project(LintRequest(paths=[str(tmp_path)]))[0].index.objects
    assert sorted(components.references(route)) == [
        components.Reference("infra", "gw", True),
        components.Reference("t", "svc", False),
    ]
