"""The policies' target resolutions kept between an editor's updates
(policylint.semantics.keptresolution): over random sequences of edits that change what a kept
resolution read without touching the policy's file (a ReferenceGrant deleted and added again in
another file, a listener renamed, a Namespace's labels changed, a target renamed, the only object
of a kind's group added and removed, the object that shows an implementation runs deleted, the
Certificate whose Secret a policy targets deleted), every
update's resolutions are what a resolution from nothing over the same objects gives, and its
findings a cold run's. Leaving any of those reads out of the comparison fails it."""

from __future__ import annotations

import copy
import dataclasses
import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from policylint.project import Project
from policylint.semantics import components, keptresolution
from policylint.semantics.grants import grant_meaning
from policylint.semantics.keptresolution import KeptResolution
from policylint.semantics.resolution import Resolution, TargetResolution
from tests.incremental.test_incremental import _editor_workspace, _rows
from tests.incremental.test_kept_folds import _cold

Doc = dict[str, Any]


def _meta(name: str, namespace: str | None = None, **labels: str) -> Doc:
    meta: Doc = {"name": name}
    if namespace is not None:
        meta["namespace"] = namespace
    if labels:
        meta["labels"] = labels
    return meta


def _workspace_files() -> dict[str, list[Doc]]:
    """Policies whose resolutions read each kind of read, each policy in a file of its own, so
    that editing another file keeps it the same instance."""
    gw = "gateway.networking.k8s.io"
    gateway = {
        "apiVersion": f"{gw}/v1",
        "kind": "Gateway",
        "metadata": _meta("gw", "team-a"),
        "spec": {
            "gatewayClassName": "eg",
            "listeners": [{"name": "http", "port": 80, "protocol": "HTTP"}, {"name": "web", "port": 8080, "protocol": "HTTP"}],
        },
    }
    route = {
        "apiVersion": f"{gw}/v1",
        "kind": "HTTPRoute",
        "metadata": _meta("web", "team-a"),
        "spec": {"parentRefs": [{"name": "gw"}], "rules": [{"backendRefs": [{"name": "web", "port": 80}]}]},
    }

    def service(name: str, namespace: str) -> Doc:
        return {"apiVersion": "v1", "kind": "Service", "metadata": _meta(name, namespace), "spec": {"ports": [{"port": 80}]}}

    def acme(name: str, target: Doc) -> Doc:
        # An unknown policy kind: its inferred profile lets a reference name a namespace (checked
        # against the ReferenceGrants), a section, and a virtual kind.
        return {
            "apiVersion": "example.com/v1",
            "kind": "AcmePolicy",
            "metadata": _meta(name, "team-a"),
            "spec": {"targetRef": target},
        }

    return {
        "namespaces.yaml": [
            {"apiVersion": "v1", "kind": "Namespace", "metadata": _meta("team-a", **{"istio.io/use-waypoint": "wp"})},
            {"apiVersion": "v1", "kind": "Namespace", "metadata": _meta("team-b")},
        ],
        "infra.yaml": [
            {
                "apiVersion": f"{gw}/v1",
                "kind": "GatewayClass",
                "metadata": _meta("eg"),
                "spec": {"controllerName": "gateway.envoyproxy.io/gatewayclass-controller"},
            },
            gateway,
        ],
        "apps.yaml": [route, service("web", "team-a")],
        "api.yaml": [service("api", "team-b")],
        "grants.yaml": [_grant(), {"apiVersion": "v1", "kind": "ConfigMap", "metadata": _meta("keep", "team-b")}],
        "things.yaml": [{"apiVersion": "v1", "kind": "ConfigMap", "metadata": _meta("keep", "team-a")}],
        "mesh.yaml": [
            {
                "apiVersion": "security.istio.io/v1",
                "kind": "AuthorizationPolicy",
                "metadata": _meta("authz", "team-a"),
                "spec": {"targetRefs": [{"group": "", "kind": "Service", "name": "web"}], "action": "DENY", "rules": [{}]},
            }
        ],
        "btp.yaml": [
            {
                "apiVersion": "gateway.envoyproxy.io/v1alpha1",
                "kind": "BackendTrafficPolicy",
                "metadata": _meta("btp", "team-a"),
                "spec": {
                    "targetRefs": [{"group": gw, "kind": "Gateway", "name": "gw", "sectionName": "http"}],
                    "timeout": {"http": {"requestTimeout": "5s"}},
                },
            }
        ],
        "cross.yaml": [acme("cross", {"group": "", "kind": "Service", "name": "api", "namespace": "team-b"})],
        "class.yaml": [acme("class", {"group": gw, "kind": "GatewayClass", "name": "nginx"})],
        "nginx.yaml": [_nginx()],
        "made.yaml": [acme("made", {"group": "", "kind": "Secret", "name": "tls"})],
        "certificates.yaml": [_certificate()],
        "virtual.yaml": [acme("virtual", {"group": "things.example.org", "kind": "Thing", "name": "one"})],
    }


def _certificate() -> Doc:
    return {
        "apiVersion": "cert-manager.io/v1",
        "kind": "Certificate",
        "metadata": _meta("tls", "team-a"),
        "spec": {"secretName": "tls", "dnsNames": ["a.example.com"], "issuerRef": {"name": "ca"}},
    }


def _nginx() -> Doc:
    return {"apiVersion": "gateway.nginx.org/v1alpha2", "kind": "NginxProxy", "metadata": _meta("proxy", "team-a"), "spec": {}}


def _grant() -> Doc:
    return {
        "apiVersion": "gateway.networking.k8s.io/v1beta1",
        "kind": "ReferenceGrant",
        "metadata": _meta("allow-acme", "team-b"),
        "spec": {
            "from": [{"group": "example.com", "kind": "AcmePolicy", "namespace": "team-a"}],
            "to": [{"group": "", "kind": "Service"}],
        },
    }


def _edit(files: dict[str, list[Doc]], rng: random.Random) -> str:
    """One edit of a file other than the policies', in place; what it did."""
    kind = rng.choice(["grant", "listener", "label", "rename", "thing", "nginx", "certificate", "policy", "comment"])
    if kind == "grant":
        docs = files["grants.yaml"]
        if docs[0]["kind"] == "ReferenceGrant":
            docs.pop(0)
        else:
            docs.insert(0, _grant())
    elif kind == "listener":
        listener = files["infra.yaml"][1]["spec"]["listeners"][0]
        listener["name"] = "http" if listener["name"] != "http" else "plain"
    elif kind == "label":
        labels = files["namespaces.yaml"][0]["metadata"].setdefault("labels", {})
        labels["istio.io/use-waypoint"] = rng.choice(["wp", "none", "other"])
        if rng.random() < 0.3:
            labels.clear()
    elif kind == "rename":
        service = files["api.yaml"][0]["metadata"]
        service["name"] = "api" if service["name"] != "api" else "api2"
    elif kind == "thing":
        # The only object of the target's group: its kind is no longer a virtual one.
        docs = files["things.yaml"]
        thing = {"apiVersion": "things.example.org/v1", "kind": "Thing", "metadata": _meta("other", "team-a")}
        if docs[-1]["kind"] == "Thing":
            docs.pop()
        else:
            docs.append(thing)
    elif kind == "nginx":
        # An object of NGINX Gateway Fabric's group shows it runs, and with it the class it serves
        # without a GatewayClass object.
        files["nginx.yaml"] = [] if files["nginx.yaml"] else [_nginx()]
    elif kind == "certificate":
        # What makes the Secret a policy targets, which the input does not hold.
        files["certificates.yaml"] = [] if files["certificates.yaml"] else [_certificate()]
    elif kind == "policy":
        spec = files["btp.yaml"][0]["spec"]
        spec["timeout"] = {"http": {"requestTimeout": f"{rng.randrange(1, 99)}s"}}
    return kind


def _text(docs: list[Doc] | None) -> str:
    return yaml.safe_dump_all(docs, sort_keys=False) if docs else ""


def _normal(res: TargetResolution) -> tuple[object, ...]:
    """A resolution as rules read it, its grant check by what it means (each run parses the
    grants anew)."""
    return (dataclasses.replace(res, grant=None), grant_meaning(res.grant) if res.grant is not None else None)


def _resolved(project: Project) -> dict[str, list[tuple[object, ...]]]:
    """Every policy's targets, by policy."""
    resolution = project.resolution
    return {str(p.key): [_normal(r) for r in resolution.targets(p)] for p in resolution.policies()}


def _from_nothing(project: Project) -> dict[str, list[tuple[object, ...]]]:
    fresh = Resolution(project.index, project.resolution.profiles)
    return {str(p.key): [_normal(r) for r in fresh.targets(p)] for p in fresh.policies()}


def _differential(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, *, seed: int, steps: int) -> dict[str, int]:
    """Compare every update's resolutions with a resolution from nothing and its findings with a
    cold run's; how many resolutions the updates handed on, worked out, and refused."""
    monkeypatch.setattr(components, "MIN_OBJECTS", 0)
    counts = {"reused": 0, "resolved": 0, "refused": 0}
    begin = KeptResolution.begin

    def counted(self: KeptResolution, context: bytes | None) -> KeptResolution | None:
        counts["reused"] += self.reused
        counts["resolved"] += self.resolved
        counts["refused"] += self.refused
        return begin(self, context)

    monkeypatch.setattr(KeptResolution, "begin", counted)
    rng = random.Random(seed)
    files = _workspace_files()
    texts = {name: _text(docs) for name, docs in files.items()}
    workspace, disk = _editor_workspace(tmp_path, monkeypatch, texts)
    texts["btp.yaml"] += "# opened\n"
    workspace.update("btp.yaml", texts["btp.yaml"])  # the first update analyses everything
    done: list[str] = []
    for _ in range(steps):
        before = copy.deepcopy(files)
        done.append(_edit(files, rng))
        changed = {
            name: _text(files.get(name)) for name in sorted(set(before) | set(files)) if before.get(name) != files.get(name)
        }
        if not changed:  # a comment: the policies' own file, its objects unchanged
            changed = {"btp.yaml": texts["btp.yaml"] + f"# {len(done)}\n"}
        for name, text in changed.items():
            texts[name] = text
            result = workspace.update(name, text).result
            # The part's project; a part that was everything is the run's.
            analysed = result.analysed if result.analysed is not None else result.project
            assert _resolved(analysed) == _from_nothing(analysed), (seed, done)
            assert _rows(result.findings) == _rows(_cold(texts, disk, monkeypatch, tmp_path / "editor")), (seed, done)
    workspace.update("btp.yaml", texts["btp.yaml"] + "# again\n")  # counts the last update
    return counts


@pytest.mark.parametrize("seed", [0, 1])
def test_kept_resolutions_give_what_a_resolution_from_nothing_gives(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, seed: int
) -> None:
    counts = _differential(tmp_path, monkeypatch, seed=seed, steps=24)
    # Handed on where nothing read changed, worked out again where a read answered otherwise.
    assert counts["reused"] > 0 and counts["refused"] > 0, counts


@pytest.fixture(params=["lookup", "namespace", "grant", "builtin", "virtual", "made"])
def blind(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """The replay of a kept resolution told that every read of one kind answers as recorded."""
    left_out = request.param
    answers = keptresolution._answers_alike

    def answers_alike(resolution: Resolution, read: keptresolution.Read) -> bool:
        return read[0] == left_out or answers(resolution, read)

    monkeypatch.setattr(keptresolution, "_answers_alike", answers_alike)
    if left_out == "grant":
        replay = KeptResolution._replay

        def ignoring_grants(self: KeptResolution, resolution: Resolution, kept: keptresolution.Kept) -> Any:
            reads = tuple(r for r in kept.reads if r[0] != "grant")
            return replay(self, resolution, dataclasses.replace(kept, reads=reads))

        monkeypatch.setattr(KeptResolution, "_replay", ignoring_grants)
    yield left_out


def test_the_differential_fails_when_a_read_is_left_out(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, blind: str) -> None:
    with pytest.raises(AssertionError):
        for seed in range(2):
            (tmp_path / str(seed)).mkdir()
            _differential(tmp_path / str(seed), monkeypatch, seed=seed, steps=24)
