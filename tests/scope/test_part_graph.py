"""The sets the part search joins objects into, kept between runs and updated for the files that
changed (policylint/semantics/partgraph.py), are those joined from nothing, after every edit of
random edit sequences: objects deleted, renamed (splitting a set), pointed at another tenant's
Service (joining two), moved between files, files deleted and added, a grant, a label selector or a
host of a service registry appearing (the facts every edge reads), a Gateway's class changed, a
GatewayClass given parameters, and values changed that the graph does not read. Where a graph
proves no class joins its Gateways without joining the sets (`classes_apart`, which the directed
part takes), the sets joined from nothing join none.

As a language server runs them (policylint.incremental.resident), the objects of a file whose
text did not change are the same objects as the step before; the others are built anew.
"""

from __future__ import annotations

import copy
import random
from pathlib import Path
from typing import Any

import pytest
import yaml

from benchmarks.generate import objects as tenants
from policylint.k8s.objects import K8sObject, ObjectKey
from policylint.pipeline import LintRequest, _project
from policylint.semantics import components, partgraph
from policylint.semantics.partgraph import PartGraph

GW = "gateway.networking.k8s.io"
HOSTS = {("networking.istio.io", "ServiceEntry"): "hosts"}


def _load(
    root: Path, before: dict[str, tuple[str, list[K8sObject]]]
) -> tuple[list[K8sObject], dict[str, tuple[str, list[K8sObject]]]]:
    """The objects of the files under `root`, those of a file whose text is the same as in
    `before` being the same objects; and what to pass as `before` next."""
    loaded = _project(LintRequest(paths=[str(root)]))[0].index.objects
    by_file: dict[str, list[K8sObject]] = {}
    for obj in loaded:
        by_file.setdefault(obj.doc.file, []).append(obj)
    now: dict[str, tuple[str, list[K8sObject]]] = {}
    for file, found in by_file.items():
        text = Path(file).read_text(encoding="utf-8")
        kept = before.get(file)
        now[file] = (text, kept[1] if kept is not None and kept[0] == text else found)
    objects = [obj for found in by_file.values() for obj in now[found[0].doc.file][1]]
    # Input order: by file, as the loader gives it.
    return sorted(objects, key=lambda o: o.doc.file), now


def _partition(graph: PartGraph) -> set[frozenset[int]]:
    sets, _ = graph.sets()
    out: dict[int, set[int]] = {}
    for i, label in enumerate(sets):
        out.setdefault(label, set()).add(i)
    return {frozenset(s) for s in out.values()}


def _parts(objects: list[K8sObject], graph: PartGraph | None, origins: list[str], removed: list[ObjectKey]) -> list[Any]:
    out = []
    for origin in origins:
        found = components.scope(objects, [origin], removed, hosts=HOSTS, min_objects=0, max_share=1.0, kept=graph)
        out.append(None if found is None else (sorted(found.members, key=str), [o.key for o in found.objects]))
    return out


Repo = dict[Path, list[dict[str, Any]]]  # each file's documents, as written


def _write(repo: Repo, path: Path, docs: list[dict[str, Any]]) -> None:
    repo[path] = docs
    path.write_text(yaml.dump_all(docs, Dumper=yaml.CSafeDumper, sort_keys=False), encoding="utf-8")


def _edit(repo: Repo, root: Path, rng: random.Random, step: int) -> list[ObjectKey]:
    """One random edit of the repository under `root`; the keys of the objects it deleted."""
    edit = _Edit(repo, root, rng, step)
    kind = rng.choice([name for name in dir(_Edit) if not name.startswith("_")])
    getattr(edit, kind)()
    if edit.path in repo:
        _write(repo, edit.path, edit.docs)
    return edit.removed


class _Edit:
    """The kinds of edit, one method each, on a random file's documents (`docs`)."""

    def __init__(self, repo: Repo, root: Path, rng: random.Random, step: int) -> None:
        self.repo, self.root, self.rng, self.step = repo, root, rng, step
        self.files = sorted(repo)
        self.path = rng.choice(self.files)
        self.docs = copy.deepcopy(repo[self.path])
        self.everything = [d for f in self.files for d in repo[f]]
        self.namespaces = sorted({d["metadata"]["namespace"] for d in self.everything if d["metadata"].get("namespace")})
        self.removed: list[ObjectKey] = []

    def delete(self) -> None:
        if self.docs:
            self.removed.append(_key(self.docs.pop(self.rng.randrange(len(self.docs)))))

    def rename(self) -> None:
        docs = [d for d in self.docs if d["kind"] != "Namespace"]
        if docs:
            doc = self.rng.choice(docs)
            self.removed.append(_key(doc))
            doc["metadata"]["name"] += "-x"

    def join(self) -> None:
        """A route's backend in another tenant's namespace: two sets become one."""
        routes = [d for d in self.docs if d["kind"] == "HTTPRoute" and d["spec"].get("rules")]
        services = [d for d in self.everything if d["kind"] == "Service"]
        if routes and services:
            target = self.rng.choice(services)
            ref = {"name": target["metadata"]["name"], "namespace": target["metadata"].get("namespace"), "port": 8080}
            self.rng.choice(routes)["spec"]["rules"][0]["backendRefs"] = [ref]

    def move(self) -> None:
        if self.docs and len(self.files) > 1:
            doc = self.docs.pop(self.rng.randrange(len(self.docs)))
            other = self.rng.choice([f for f in self.files if f != self.path])
            _write(self.repo, other, [*self.repo[other], doc])

    def drop_file(self) -> None:
        if len(self.files) > 2:
            self.removed.extend(_key(d) for d in self.docs)
            self.path.unlink()
            del self.repo[self.path]

    def add_file(self) -> None:
        extra = copy.deepcopy(self.rng.sample(self.everything, k=min(3, len(self.everything))))
        for doc in extra:
            doc["metadata"]["name"] = f"{doc['metadata']['name']}-copy{self.step}"
        _write(self.repo, self.root / f"added-{self.step}.yaml", extra)

    def grant(self) -> None:
        spec = {
            "from": [{"group": GW, "kind": "HTTPRoute", "namespace": self.rng.choice(self.namespaces)}],
            "to": [{"group": "", "kind": "Service"}],
        }
        self._add(f"{GW}/v1beta1", "ReferenceGrant", spec)

    def selector(self) -> None:
        spec = {"targetSelectors": [{"group": GW, "kind": "HTTPRoute", "matchLabels": {"app": "x"}}]}
        self._add("gateway.envoyproxy.io/v1alpha1", "BackendTrafficPolicy", spec)

    def host(self) -> None:
        """A service registry's host named as a Service is: whoever names it joins the entry."""
        services = [d for d in self.everything if d["kind"] == "Service"]
        host = self.rng.choice(services)["metadata"]["name"] if services else "example.com"
        self._add("networking.istio.io/v1", "ServiceEntry", {"hosts": [host]})

    def gateway_class(self) -> None:
        gateways = [d for d in self.docs if d["kind"] == "Gateway"]
        if gateways:
            self.rng.choice(gateways)["spec"]["gatewayClassName"] = self.rng.choice(["envoy", "other", f"class-{self.step}"])

    def parameters(self) -> None:
        for doc in self.docs:
            if doc["kind"] == "GatewayClass":
                doc["spec"]["parametersRef"] = {
                    "group": "gateway.envoyproxy.io",
                    "kind": "EnvoyProxy",
                    "name": "proxy",
                    "namespace": "infra",
                }

    def value(self) -> None:
        """A value the graph does not read: other objects of the same shape."""
        if self.docs:
            self.rng.choice(self.docs)["metadata"].setdefault("annotations", {})["edited"] = str(self.step)

    def _add(self, api_version: str, kind: str, spec: dict[str, Any]) -> None:
        if self.namespaces:
            metadata = {"name": f"{kind.lower()}-{self.step}", "namespace": self.rng.choice(self.namespaces)}
            self.docs.append({"apiVersion": api_version, "kind": kind, "metadata": metadata, "spec": spec})


def _key(doc: dict[str, Any]) -> ObjectKey:
    group = doc["apiVersion"].rpartition("/")[0]
    return ObjectKey(group, doc["kind"], doc["metadata"].get("namespace"), doc["metadata"]["name"])


def _repository(root: Path, seed: int) -> Repo:
    rng = random.Random(seed)
    docs = list(tenants(rng.randint(250, 450), seed, error_rate=0.3, isolated=seed % 2 == 0))
    rng.shuffle(docs)
    repo: Repo = {}
    i = 0
    while i < len(docs):
        n = rng.randint(1, 8)
        _write(repo, root / f"f{i:04d}.yaml", docs[i : i + n])
        i += n
    return repo


def test_kept_sets_are_those_joined_from_nothing_after_every_edit(tmp_path: Path) -> None:
    """One isolated and one chained repository (`make test`); more below, marked slow."""
    for seed in (0, 1):
        _sequence(tmp_path / f"seed-{seed}", seed, 10)


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(2, 8))
def test_kept_sets_are_those_joined_from_nothing_after_longer_sequences(tmp_path: Path, seed: int) -> None:
    _sequence(tmp_path, seed, 16)


def _sequence(root: Path, seed: int, steps: int) -> None:
    root.mkdir(exist_ok=True)
    repo = _repository(root, seed)
    rng = random.Random(seed)
    graph = PartGraph()
    before: dict[str, tuple[str, list[K8sObject]]] = {}
    for step in range(steps):
        removed = _edit(repo, root, rng, step) if step else []
        objects, before = _load(root, before)
        graph.update(objects, HOSTS)
        cold = PartGraph()
        cold.update(objects, HOSTS)
        assert _partition(graph) == _partition(cold), f"seed {seed}, step {step}"
        # What the directed part takes without joining the sets: no class joins its Gateways.
        fresh = PartGraph()
        fresh.update(objects, HOSTS)
        if fresh.classes_apart():
            assert cold.sets()[1] == {}, f"seed {seed}, step {step}"
        files = sorted({o.doc.file for o in objects})
        origins = rng.sample(files, k=min(3, len(files)))
        assert _parts(objects, graph, origins, removed) == _parts(objects, None, origins, removed), f"seed {seed}, step {step}"


def test_an_edit_relabels_only_the_sets_it_reaches(tmp_path: Path) -> None:
    """A value the graph does not read changes no set; a reference changed in one isolated tenant
    leaves every other tenant's set as it was (its label too: it was not joined again)."""
    repo = _repository(tmp_path, 0)  # isolated tenants
    graph = PartGraph()
    objects, before = _load(tmp_path, {})
    graph.update(objects, HOSTS)
    labels = graph.sets()[0]
    path = next(f for f in sorted(repo) if any(d["kind"] == "HTTPRoute" and d["spec"].get("rules") for d in repo[f]))
    docs = copy.deepcopy(repo[path])
    docs[0].setdefault("metadata", {}).setdefault("annotations", {})["edited"] = "yes"
    _write(repo, path, docs)
    objects, before = _load(tmp_path, before)
    graph.update(objects, HOSTS)
    assert graph.sets()[0] == labels
    # A route of the file pointed at a Service nothing else names: its tenant's set splits or
    # changes; every set holding no object of the file keeps its label.
    edited = {i for i, o in enumerate(objects) if o.doc.file == str(path)}
    touched = {labels[i] for i in edited}
    routes = [d for d in docs if d["kind"] == "HTTPRoute" and d["spec"].get("rules")]
    routes[0]["spec"]["rules"][0]["backendRefs"] = [{"name": "nowhere", "port": 80}]
    _write(repo, path, docs)
    objects, before = _load(tmp_path, before)
    graph.update(objects, HOSTS)
    after = graph.sets()[0]
    kept = [i for i, label in enumerate(labels) if label not in touched]
    assert len(kept) > len(objects) / 2
    assert all(after[i] == labels[i] for i in kept)
    assert any(after[i] != labels[i] for i in edited)


_BRIDGE = """\
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: r, namespace: t}
spec:
  parentRefs: [{name: gw}]
  rules: [{backendRefs: [{name: svc, port: 80}]}]
"""
_ENDS = """\
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw, namespace: t}
spec:
  gatewayClassName: eg
  listeners: [{name: http, port: 80, protocol: HTTP}]
---
apiVersion: v1
kind: Service
metadata: {name: svc, namespace: t}
spec: {ports: [{port: 80}]}
"""


def test_a_set_splits_when_the_file_joining_it_is_deleted(tmp_path: Path) -> None:
    """The route alone joins the Gateway and the Service: deleting its file leaves two sets, though
    no file that changed holds either of them."""
    (tmp_path / "ends.yaml").write_text(_ENDS, encoding="utf-8")
    (tmp_path / "route.yaml").write_text(_BRIDGE, encoding="utf-8")
    graph = PartGraph()
    objects, before = _load(tmp_path, {})
    graph.update(objects, HOSTS)
    assert len(_partition(graph)) == 1
    (tmp_path / "route.yaml").unlink()
    objects, before = _load(tmp_path, before)
    graph.update(objects, HOSTS)
    assert sorted(o.name for o in objects) == ["gw", "svc"]
    assert _partition(graph) == {frozenset({0}), frozenset({1})}
    # And join again when it comes back.
    (tmp_path / "route.yaml").write_text(_BRIDGE, encoding="utf-8")
    objects, before = _load(tmp_path, before)
    graph.update(objects, HOSTS)
    assert len(_partition(graph)) == 1


def test_a_search_from_nothing_reads_each_files_objects_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each file's edges are worked out once (not asked again per object), and the search reads
    each object's kind and name from the graph, not from the objects' properties again: a
    search from nothing over every object of a repository runs on each new commit."""
    _repository(tmp_path, 1)
    objects, _ = _load(tmp_path, {})
    connected: list[int] = []
    real = partgraph._File.connect

    def connect(self: partgraph._File, facts: Any) -> None:
        connected.append(len(self.objects))
        real(self, facts)

    kinds: list[str] = []
    real_kind = K8sObject.kind

    def kind(self: K8sObject) -> str:
        kinds.append(self.name)
        return real_kind.fget(self)  # type: ignore[no-any-return,misc]

    monkeypatch.setattr(partgraph._File, "connect", connect)
    monkeypatch.setattr(K8sObject, "kind", property(kind))
    graph = PartGraph()
    found = components.scope(objects, [objects[0].doc.file], min_objects=0, max_share=1.0, kept=graph)
    assert found is not None and found.objects
    graph.sets()  # joined if the search did not (the directed part does not read them)
    files = {o.doc.file for o in objects}
    assert len(connected) == len(files)
    assert len(kinds) <= 2 * len(objects)  # the graph's own reading of them (`_File`)


def test_the_part_holds_the_first_object_of_each_kind_in_the_index_order(tmp_path: Path) -> None:
    """The part's context holds one object of each kind (whether the kind is in the input at all):
    the first in the project index's order, by key, whatever order the files and objects come in,
    so that a search over a roster's files (policylint.k8s.roster, in input order) keeps what the
    search over the index's sorted objects kept. Given in input order, the tree before kept the
    first object it met."""
    service = "apiVersion: v1\nkind: Service\nmetadata: {{name: {name}, namespace: {namespace}}}\n"
    (tmp_path / "a.yaml").write_text(service.format(name="zz", namespace="b-ns"), encoding="utf-8")
    (tmp_path / "b.yaml").write_text(service.format(name="aa", namespace="a-ns"), encoding="utf-8")
    route = f"apiVersion: {GW}/v1\nkind: HTTPRoute\nmetadata: {{name: r, namespace: c}}\nspec: {{}}\n"
    (tmp_path / "c.yaml").write_text(route, encoding="utf-8")
    objects, _ = _load(tmp_path, {})
    assert [o.name for o in objects] == ["zz", "aa", "r"]
    for given in (objects, objects[::-1]):
        found = components.scope(given, [str(tmp_path / "c.yaml")], min_objects=0, max_share=1.0)
        assert found is not None
        assert sorted(o.name for o in found.objects) == ["aa", "r"]
        assert {k.name for k in found.members} == {"r"}
