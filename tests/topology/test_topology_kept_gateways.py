"""What a language server's topology keeps of each Gateway, route and policy between edits
(policylint.semantics.topology.kept: the routes' attachments, the listeners, certificate
references and conflicts of each Gateway, the policies' references, the routes on each parent) is
what a build from nothing finds, and what did not change is handed on as the same objects.

Differential: random edits of a generated workspace, each analysed as the editor's update
analyses it (a part over the objects kept in memory). After each, the part's topology is compared
with one built from nothing over the same project (every route's attachments, every listener and
whether it is Conflicted, the routes on each parent and the ListenerSets on each Gateway, every
object's references and whether traffic reaches it), `explain` of every policy, Gateway, route and
Service of the part over both (each with a simulation from nothing), and the update's findings
with a run from nothing over the same texts. The edits are those whose effect reaches Gateways and
routes in other files: a Gateway renamed (the routes naming it find nothing) or added under the
name a route names, a listener's hostname, port or allowedRoutes changed, a Namespace's labels
changed (the listeners' namespace selectors), a route of another tenant attached to a Gateway (its
listeners' attached routes), a Secret a certificate reference names added or deleted, a Gateway
moved to a class of another implementation, and the backend edits of test_topology_kept.
"""

from __future__ import annotations

import copy
import dataclasses
import enum
import json
import random
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from policylint.commands.explain import Found, explain_policy, explain_target, object_node
from policylint.incremental.workspace import Workspace
from policylint.k8s.fieldtypes import GATEWAY_GROUP
from policylint.k8s.objects import K8sObject
from policylint.pipeline import LintRequest, LintResult, lint
from policylint.project import Project
from policylint.semantics import components
from policylint.semantics.effective.simulation import Simulation
from policylint.semantics.resolution import Resolution
from policylint.semantics.topology import Listener, Topology, hierarchy, references
from policylint.semantics.topology.kept import Table
from policylint.semantics.topology.listeners import Listeners
from policylint.semantics.topology.targets import PolicyTargets
from policylint.stages import Stage
from tests.topology.test_topology_kept import _corpus, _every, _refs
from tests.topology.test_topology_kept import _edit as _backend_edit

Files = dict[str, list[dict[str, Any]]]


class Differs(AssertionError):
    """What an update found is not what a build or a run from nothing finds."""


def _same(warm: object, cold: object, why: tuple[object, ...]) -> None:
    if warm != cold:
        raise Differs(why)


EDITS = ("rename", "name", "listener", "label", "foreign", "secret", "class", "backends", "refuse")


def _gateways(files: Files) -> list[tuple[str, dict[str, Any]]]:
    return [(n, g) for n, g in _every(files, "Gateway") if isinstance(g.get("spec"), dict) and g["spec"].get("listeners")]


def _rename(files: Files, rng: random.Random) -> str | None:
    """A Gateway renamed in its file: the routes naming it, in other files, find nothing."""
    gateways = _gateways(files)
    if not gateways:
        return None
    name, gateway = rng.choice(gateways)
    gateway["metadata"]["name"] += "-renamed"
    return name


def _name(files: Files, rng: random.Random) -> str | None:
    """A Gateway added, in a file of its own choosing, under the name a route names and no
    Gateway has: the route, kept, found nothing there before."""
    have = {(g["metadata"].get("namespace"), g["metadata"]["name"]) for _, g in _every(files, "Gateway")}
    wanted = sorted(
        {
            (ref.get("namespace", r["metadata"]["namespace"]), ref["name"])
            for _, r in _every(files, "HTTPRoute")
            for ref in r["spec"].get("parentRefs", [])
            if isinstance(ref, dict) and isinstance(ref.get("name"), str)
        }
        - have
    )
    gateways = _gateways(files)
    if not wanted or not gateways:
        return None
    namespace, missing = rng.choice(wanted)
    added = copy.deepcopy(rng.choice(gateways)[1])
    added["metadata"] = {"name": missing, "namespace": namespace}
    name = rng.choice(sorted(files))
    files[name].append(added)
    return name


def _listener(files: Files, rng: random.Random) -> str | None:
    """One listener of a Gateway changed where it stands: the routes attached to it, in other
    files, are admitted otherwise."""
    gateways = _gateways(files)
    if not gateways:
        return None
    name, gateway = rng.choice(gateways)
    listener = rng.choice(gateway["spec"]["listeners"])
    change = rng.choice(["hostname", "all", "same", "port"])
    if change == "hostname":
        listener["hostname"] = rng.choice(["*.example.com", "other.example.org"])
    elif change == "all":
        listener["allowedRoutes"] = {"namespaces": {"from": "All"}}
    elif change == "same":
        listener.pop("allowedRoutes", None)
    else:
        listener["port"] = 8443 if listener.get("port") != 8443 else 443
    return name


def _label(files: Files, rng: random.Random) -> str | None:
    """A Namespace's label the listeners' selectors match, set or taken away."""
    namespaces = [(n, d) for n, d in _every(files, "Namespace") if d["metadata"].get("labels")]
    if not namespaces:
        return None
    name, namespace = rng.choice(namespaces)
    labels = namespace["metadata"]["labels"]
    labels["gateway-access"] = "private" if labels.get("gateway-access") == "shared" else "shared"
    return name


def _foreign(files: Files, rng: random.Random) -> str | None:
    """A route of one tenant attached to a listener of another's Gateway, written in a file
    neither holds: the Gateway, unchanged, has one more route attached."""
    routes, gateways = _every(files, "HTTPRoute"), _gateways(files)
    if not routes or not gateways:
        return None
    route = copy.deepcopy(rng.choice(routes)[1])
    _, gateway = rng.choice(gateways)
    listener = rng.choice(gateway["spec"]["listeners"])
    route["metadata"]["name"] = f"foreign-{rng.randrange(10**6)}"
    route["spec"]["parentRefs"] = [
        {"name": gateway["metadata"]["name"], "namespace": gateway["metadata"]["namespace"], "sectionName": listener["name"]}
    ]
    if listener.get("hostname"):
        route["spec"]["hostnames"] = [listener["hostname"]]
    name = rng.choice(sorted(files))
    files[name].append(route)
    return name


def _secret(files: Files, rng: random.Random) -> str | None:
    """A Secret added in a Gateway's namespace (one its certificate references name, or another),
    or one deleted: whether the input manages Secrets in the namespace decides what a missing one
    is."""
    secrets = _every(files, "Secret")
    if secrets and rng.random() < 0.4:
        name, secret = rng.choice(secrets)
        files[name].remove(secret)
        return name
    gateways = _gateways(files)
    if not gateways:
        return None
    _, gateway = rng.choice(gateways)
    refs = [ref for lst in gateway["spec"]["listeners"] for ref in lst.get("tls", {}).get("certificateRefs", [])]
    if not refs:
        return None
    secret = {
        "apiVersion": "v1",
        "kind": "Secret",
        # One it names, or another: then only whether the namespace's Secrets are managed changes.
        "metadata": {
            "name": rng.choice([rng.choice(refs)["name"], f"other-{rng.randrange(10**6)}"]),
            "namespace": gateway["metadata"]["namespace"],
        },
        "type": "kubernetes.io/tls",
        "data": {"tls.crt": "Y2VydA==", "tls.key": "a2V5"},
    }
    name = rng.choice(sorted(files))
    files[name].append(secret)
    return name


def _class(files: Files, rng: random.Random) -> str | None:
    gateways = _gateways(files)
    if not gateways:
        return None
    name, gateway = rng.choice(gateways)
    gateway["spec"]["gatewayClassName"] = "istio" if gateway["spec"]["gatewayClassName"] == "envoy" else "envoy"
    return name


def _refuse(files: Files, rng: random.Random) -> str | None:
    """A BackendTLSPolicy's hostname made one the API server refuses (its pattern), or made valid
    again: the policy, a new instance under the same name, is rejected or accepted by the API
    server, which is what its controller sees (`Topology.policy_errors`)."""
    policies = _every(files, "BackendTLSPolicy")
    if not policies:
        return None
    name, policy = rng.choice(policies)
    validation = policy["spec"]["validation"]
    hostname = validation["hostname"]
    validation["hostname"] = hostname.replace("Bad_", "") if hostname.startswith("Bad_") else f"Bad_{hostname}"
    return name


EDITORS: dict[str, Callable[[Files, random.Random], str | None]] = {
    "rename": _rename,
    "name": _name,
    "listener": _listener,
    "label": _label,
    "foreign": _foreign,
    "secret": _secret,
    "class": _class,
    "backends": _backend_edit,
    "refuse": _refuse,
}


def _plain(value: Any) -> Any:
    """A value of the topology as plain data: objects by their keys, listeners by their owner and
    name (a build from nothing makes its own), values field by field."""
    if isinstance(value, K8sObject):
        return ("object", str(value.key))
    if isinstance(value, Listener):
        return ("listener", str(value.owner.key), value.name, value.section.position)
    if isinstance(value, enum.Enum):
        return value.name
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return (type(value).__name__, *(_plain(getattr(value, f.name)) for f in dataclasses.fields(value)))
    if isinstance(value, (list, tuple)):
        return tuple(_plain(v) for v in value)
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    return repr(value)


def _meaning(topology: Topology) -> dict[str, Any]:
    """What the topology found, as plain data to compare."""
    owners = [*topology.gateways(), *topology.index.of_kind(GATEWAY_GROUP, "ListenerSet")]
    listeners = [lst for owner in owners for lst in topology.listeners(owner)]
    return {
        "refs": sorted(repr(_plain(k)) + repr(v) for k, v in _refs(topology).items()),
        "parents": {str(r.key): _plain(topology.parent_attachments(r)) for r in topology.routes()},
        "listeners": {str(o.key): _plain(topology.listeners(o)) for o in owners},
        "conflicts": {repr(_plain(lst)): _plain(topology.listener_conflict(lst)) for lst in listeners},
        "routes_of": {str(o.key): _plain(topology.routes_of(o)) for o in owners},
        "sets_of": {str(g.key): _plain(topology.listener_sets_of(g)) for g in topology.gateways()},
        "traffic": {str(o.key): _plain(topology.traffic(o)) for o in topology.index.objects},
        "policy_errors": {str(p.key): topology.policy_errors(p.obj) for p in topology.resolution.policies()},
    }


def _explained(project: Project) -> str:
    """`explain` of every policy, and of every Gateway, route and Service, of the project."""
    out: dict[str, Any] = {}
    for policy in project.resolution.policies():
        out[f"policy {policy.key}"] = explain_policy(project, Found(policy.obj, None, object_node(project, policy.obj)), policy)
    for obj in project.index.objects:
        if obj.kind in ("Gateway", "HTTPRoute", "Service"):
            out[f"target {obj.key}"] = explain_target(project, Found(obj, None, object_node(project, obj)))
    return json.dumps(out, sort_keys=True, default=str)


def _findings(result: LintResult) -> list[tuple[object, ...]]:
    return sorted((f.rule, f.file, f.line, f.column, f.message) for f in result.findings)


def _cold(root: Path, files: Files, monkeypatch: pytest.MonkeyPatch, written: dict[str, str]) -> LintResult:
    """A run from nothing (no cache) over the texts the workspace holds. A file is written again
    only where its documents differ from those `written` last wrote there (as JSON, which tells key
    order and types apart as the YAML written does): PyYAML's emitter, in Python, over every file
    at every step was about half the differential's time."""
    for name, docs in files.items():
        dumped = json.dumps(docs)
        if written.get(name) != dumped:
            (root / name).write_text(yaml.safe_dump_all(docs, sort_keys=False), encoding="utf-8")
            written[name] = dumped
    monkeypatch.chdir(root)
    return lint(LintRequest(paths=["."]))


def _differential(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, *, seed: int, steps: int, n: int, edits: tuple[str, ...] = EDITS
) -> dict[str, list[int]]:
    """The updates analysed as parts, each compared with a build from nothing (`Differs` when
    they differ); per table, the results reused and refused over the updates."""
    monkeypatch.setattr(components, "MIN_OBJECTS", 0)
    rng = random.Random(seed)
    files = _corpus(seed, n)
    root = tmp_path / "ws"
    disk = tmp_path / "disk"
    root.mkdir(parents=True)
    disk.mkdir()
    for name, docs in files.items():
        (root / name).write_text(yaml.safe_dump_all(docs, sort_keys=False), encoding="utf-8")
    monkeypatch.chdir(root)
    workspace = Workspace(LintRequest(paths=["."], cache_dir=str(tmp_path / "cache")))
    kept = workspace._resident.topology
    totals = {table: [0, 0] for table in ("attachments", "listeners", "certificates", "policies", "refusals")}
    parts = 0
    done: list[str] = []
    written: dict[str, str] = {}  # what `disk` holds
    for _ in range(steps):
        before = copy.deepcopy(files)
        what = rng.choice(edits)
        edited = EDITORS[what](files, rng)
        if edited is None or files == before:
            continue
        done.append(what)
        monkeypatch.chdir(root)
        workspace.update(edited, yaml.safe_dump_all(files[edited], sort_keys=False))
        analysed = workspace.result.analysed
        _same(_findings(workspace.result), _findings(_cold(disk, files, monkeypatch, written)), (seed, done))
        if not workspace.last_was_part or analysed is None or not analysed.has_stage(Stage.TOPOLOGY):
            continue
        parts += 1
        for table, counts in totals.items():
            found: Table[Any] = getattr(kept, table)
            counts[0] += found.reused
            counts[1] += found.refused
        fresh = Project(analysed.index, Resolution(analysed.index, analysed.resolution.profiles))
        rebuilt = Topology(fresh.resolution, analysed.admissions())
        _same(_meaning(analysed.topology()), _meaning(rebuilt), (seed, done))
        if analysed.has_stage(Stage.SIMULATION):
            fresh.attach(admissions=analysed.admissions(), topology=rebuilt, simulation=Simulation(rebuilt))
            _same(_explained(analysed), _explained(fresh), (seed, done))
    totals["parts"] = [parts, 0]
    return totals


def _kept_and_refused(totals: dict[str, list[int]]) -> None:
    """Every table reused something, and some kept attachment was refused for a read."""
    assert totals["parts"][0] > 0
    for table, (reused, _) in totals.items():
        assert table == "parts" or reused > 0, (table, totals)
    assert totals["attachments"][1] > 0, totals


def test_gateways_kept_between_edits_are_what_a_build_from_nothing_finds_fast(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _kept_and_refused(_differential(tmp_path, monkeypatch, seed=7, steps=14, n=220))


def test_the_run_from_nothing_reads_the_texts_the_workspace_holds(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The files `_cold` does not write again are as it would have written them: after every
    step, each file of the directory it runs over is the YAML of the documents the workspace was
    given, and after the first step (every file) it wrote at most the one file edited."""
    real = _cold
    wrote: list[int] = []

    def checked(root: Path, files: Files, patch: pytest.MonkeyPatch, written: dict[str, str]) -> LintResult:
        before = dict(written)
        result = real(root, files, patch, written)
        for name, docs in files.items():
            assert (root / name).read_text(encoding="utf-8") == yaml.safe_dump_all(docs, sort_keys=False), name
        wrote.append(sum(written[name] != before.get(name) for name in written))
        return result

    monkeypatch.setattr(sys.modules[__name__], "_cold", checked)
    _differential(tmp_path, monkeypatch, seed=7, steps=4, n=120)
    assert len(wrote) > 1 and wrote[0] > 1, wrote
    assert all(count <= 1 for count in wrote[1:]), wrote


@pytest.mark.slow
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_gateways_kept_between_edits_are_what_a_build_from_nothing_finds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, seed: int
) -> None:
    _kept_and_refused(_differential(tmp_path, monkeypatch, seed=seed, steps=25, n=360))


def _forgetting(monkeypatch: pytest.MonkeyPatch, leaves_out: Callable[[tuple[object, ...]], bool]) -> None:
    """Reads recorded without those `leaves_out` picks: what they would have caught goes unseen."""
    note = references.References._note

    def forgetful(self: references.References, *read: object) -> None:
        if not leaves_out(read):
            note(self, *read)

    monkeypatch.setattr(references.References, "_note", forgetful)


def _gateway_lookup(read: tuple[object, ...]) -> bool:
    return read[0] == "lookup" and read[1] == (GATEWAY_GROUP, "Gateway")


def _stale_routes_on(monkeypatch: pytest.MonkeyPatch) -> None:
    """The routes on each parent taken from the last build whenever it had some: a route attached
    in another file goes uncounted."""

    def stale(table: Table[list[Any]], lists: dict[K8sObject, list[Any]]) -> None:
        for obj, now in lists.items():
            before = table.get(obj)
            lists[obj] = before if before is not None else now
            table.put(obj, lists[obj])

    monkeypatch.setattr(hierarchy, "hand_on", stale)


def _listeners_by_name(monkeypatch: pytest.MonkeyPatch) -> None:
    """A Gateway's listeners kept by its key, not its instance: an edited Gateway keeps its old ones."""
    known: dict[object, list[Listener]] = {}

    def by_name(self: Listeners, owner: K8sObject) -> list[Listener]:
        found = known.get(owner.key) if self._kept is not None else None  # a build from nothing keeps nothing
        if found is None:
            found = known[owner.key] = self._parse_listeners(owner)
        return found

    monkeypatch.setattr(Listeners, "_kept_listeners", by_name)


def _refusals_by_name(monkeypatch: pytest.MonkeyPatch) -> None:
    """What the API server refuses in a policy kept by its key, not its instance: an edited policy
    keeps what it was refused before."""
    known: dict[object, tuple[str, ...]] = {}

    def by_name(self: PolicyTargets, policy: K8sObject) -> tuple[str, ...]:
        found = known.get(policy.key) if self._kept is not None else None  # a build from nothing keeps nothing
        if found is None:
            found = known[policy.key] = self._admission_errors(policy)
        return found

    monkeypatch.setattr(PolicyTargets, "_kept_admission_errors", by_name)


# Each breakage of what is kept (the reads recorded, the results handed on), and the edits that expose it.
BREAKAGES: dict[str, tuple[Callable[[pytest.MonkeyPatch], None], tuple[str, ...]]] = {
    "a parent looked up": (lambda m: _forgetting(m, _gateway_lookup), ("rename", "name")),
    "listeners kept by their owner's name": (_listeners_by_name, ("listener",)),
    "a namespace selector's verdict": (lambda m: _forgetting(m, lambda r: r[0] == "selector"), ("label",)),
    "whether the input manages a kind": (lambda m: _forgetting(m, lambda r: r[0] == "manages"), ("secret",)),
    "the routes on a parent gathered again": (_stale_routes_on, ("foreign",)),
    "what the API server refuses kept by the policy's name": (_refusals_by_name, ("refuse",)),
}


@pytest.mark.slow
@pytest.mark.parametrize("breakage", sorted(BREAKAGES))
def test_the_differential_fails_for_each_breakage_of_what_is_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, breakage: str
) -> None:
    breaking, edits = BREAKAGES[breakage]
    breaking(monkeypatch)
    with pytest.raises(Differs):
        for seed in range(3):
            _differential(tmp_path / str(seed), monkeypatch, seed=seed, steps=10, n=220, edits=edits)


@pytest.fixture
def workspace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Workspace, Files]]:
    monkeypatch.setattr(components, "MIN_OBJECTS", 0)
    files = _corpus(11, 220)
    root = tmp_path / "ws"
    root.mkdir()
    for name, docs in files.items():
        (root / name).write_text(yaml.safe_dump_all(docs, sort_keys=False), encoding="utf-8")
    monkeypatch.chdir(root)
    yield Workspace(LintRequest(paths=["."], cache_dir=str(tmp_path / "cache"))), files


def test_what_an_edit_leaves_unchanged_is_handed_on_as_the_same_objects(workspace: tuple[Workspace, Files]) -> None:
    """After an edit of one file, every route, Gateway and policy of the other files has the same
    attachments, listeners, routes attached and references as before, as objects: what reads the
    topology after it can tell them unchanged by identity."""
    ws, files = workspace
    # A file of policies only: what the routes and Gateways read is in other files.
    edited = next(n for n in sorted(files) if all(d["kind"].endswith("Policy") for d in files[n]))
    text = yaml.safe_dump_all(files[edited], sort_keys=False)
    assert ws.result.findings  # the whole workspace analysed first, as an editor opens it
    # The first part run builds the other files' objects from their shells; the next takes them.
    ws.update(edited, text + "# zero\n")
    ws.update(edited, text + "# one\n")
    first = ws.result.analysed
    assert first is not None and first.has_stage(Stage.TOPOLOGY)
    before = first.topology()
    ws.update(edited, text + "# two\n")
    second = ws.result.analysed
    assert second is not None and second is not first
    after = second.topology()
    assert after is not before
    routes = list(after.routes())
    gateways = list(after.gateways())
    assert routes and gateways
    for route in routes:
        assert after.parent_attachments(route) is before.parent_attachments(route), route.key
        if all(ref.kind == "Service" for ref in after.refs_from(route)):
            # (A ServiceImport's may read what a host registry declares, which is never kept.)
            assert after.refs_from(route) is before.refs_from(route), route.key
    for gateway in gateways:
        assert after.listeners(gateway) is before.listeners(gateway), gateway.key
        if after.routes_of(gateway):
            assert after.routes_of(gateway) is before.routes_of(gateway), gateway.key
        # Its certificate references (a list of its own each build, with its parameters').
        assert len(after.refs_from(gateway)) == len(before.refs_from(gateway)) > 0
        assert all(a is b for a, b in zip(after.refs_from(gateway), before.refs_from(gateway), strict=True))
    # The references of the policies of the other files whose kinds have any (BackendTLSPolicy's
    # CA certificates, resolved to none here: the same list all the same).
    policies = [p.obj for p in second.resolution.policies() if p.obj.doc.file != edited and p.obj in after.references]
    assert policies
    assert all(after.refs_from(p) is before.refs_from(p) for p in policies)
