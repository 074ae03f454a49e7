"""The part a change reaches by what reads what (policylint/semantics/directed.py) on the shapes
the benchmark generator's tenants do not hold: Secrets and CA ConfigMaps, in a tenant's namespace
and in a shared one, read by Gateway listeners' `tls.certificateRefs`, BackendTLSPolicies'
`caCertificateRefs` and Envoy Gateway policies' object references (a ClientTrafficPolicy's client
CA, a SecurityPolicy's basic-auth users), permitted across namespaces or not by ReferenceGrants
(Gateway API: a certificate reference to another namespace without a ReferenceGrant is
`ResolvedRefs=False`, `RefNotPermitted`; one to a Secret that does not exist,
`InvalidCertificateRef`); the Secrets cert-manager makes (a Certificate's `secretName`, a Gateway
annotated with an issuer); objects of one name and different kinds in one namespace.

- Differential: random sequences of edits reaching through those (a Secret renamed, removed or
  its data changed, a certificate reference's name or namespace changed, a grant for Secrets
  dropped, added or moved, a ConfigMap renamed, a listener's TLS mode or hostname changed, an
  object of another kind given a name already taken), past the size where the part is searched:
  each step's report is that of the whole repository analysed, restricted to the report scope,
  and that of a run with a persistent cache.
- By hand, the pre-commit hook's two cases a part search could miss: a Secret's file changed alone
  (a certificate rotated, its key dropped), a ReferenceGrant's file deleted.
"""

from __future__ import annotations

import json
import os
import random
import sys
from pathlib import Path
from typing import Any

import pytest

from benchmarks.generate import objects as tenants
from policylint.semantics import components, directed
from tests.gitrepo import git, repository
from tests.incremental.test_incremental import _committed, _text, _write, check
from tests.lintutil import in_files

GW = "gateway.networking.k8s.io"
EG = "gateway.envoyproxy.io/v1alpha1"
# The shared namespace holding the platform's certificates, CA bundles and the grants to them, and
# the share of Gateways whose listeners read its certificates: every object reading one Secret is
# analysed with a change reaching it (policylint.semantics.directed), so were they all to read it,
# every change would reach past the share where a part is analysed and the whole would be.
CERTS = "platform-certs"
SHARED_CERTS = 0.2


def _secret(name: str, namespace: str, data: dict[str, str] | None = None) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": name, "namespace": namespace},
        "type": "kubernetes.io/tls",
        "data": {"tls.crt": "Y2VydA==", "tls.key": "a2V5"} if data is None else data,
    }


def _config_map(name: str, namespace: str, *keys: str) -> dict[str, Any]:
    data = dict.fromkeys(keys or ("ca.crt",), "Y2E=")
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": namespace}, "data": data}


def _grant(name: str, namespace: str, from_kind: str, from_namespaces: list[str], to: dict[str, str]) -> dict[str, Any]:
    group = GW if from_kind == "Gateway" else "gateway.envoyproxy.io"
    return {
        "apiVersion": f"{GW}/v1beta1",
        "kind": "ReferenceGrant",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"from": [{"group": group, "kind": from_kind, "namespace": ns} for ns in from_namespaces], "to": [to]},
    }


def _gateway_certificates(gateway: dict[str, Any], rng: random.Random, extra: list[dict[str, Any]]) -> None:
    """Each TLS listener's certificate: on a Gateway of `SHARED_CERTS`, the shared one in `CERTS`
    (granted to some namespaces) or the other shared one (granted to none); or its namespace's
    Secret, there, its key missing, made by a cert-manager Certificate, or missing where the input
    manages Secrets."""
    ns = gateway["metadata"]["namespace"]
    shared = rng.random() < SHARED_CERTS
    if rng.random() < 0.3:
        gateway["metadata"].setdefault("annotations", {})["cert-manager.io/cluster-issuer"] = "letsencrypt"
    extra.append(_secret(gateway["metadata"]["name"], ns))  # one name, two kinds: the Gateway's, a Secret's
    for listener in gateway["spec"]["listeners"]:
        if "tls" not in listener:
            continue
        ref = listener["tls"]["certificateRefs"][0]
        draw = rng.random()
        if shared and draw < 0.25:
            ref.update(name="wildcard", namespace=CERTS)
        elif shared and draw < 0.35:
            ref.update(name="internal", namespace=CERTS)  # no grant: RefNotPermitted
        elif draw < 0.7:
            extra.append(_secret(ref["name"], ns))
        elif draw < 0.8:
            extra.append(_secret(ref["name"], ns, {"tls.crt": "Y2VydA=="}))  # its key missing
        elif draw < 0.9:
            issuer = {"name": "letsencrypt", "kind": "ClusterIssuer"}
            spec = {"secretName": ref["name"], "dnsNames": [listener["hostname"]], "issuerRef": issuer}
            meta = {"name": f"{ref['name']}-cert", "namespace": ns}
            extra.append({"apiVersion": "cert-manager.io/v1", "kind": "Certificate", "metadata": meta, "spec": spec})


def _ca_references(doc: dict[str, Any], rng: random.Random, extra: list[dict[str, Any]]) -> None:
    """A BackendTLSPolicy's CA ConfigMap (there, without an entry a controller reads, a Secret of
    its name instead, or missing), a ClientTrafficPolicy's client CA (the shared ConfigMap, granted
    to some namespaces, or a Secret of its namespace), a Service's name taken by a ConfigMap."""
    ns, spec = doc["metadata"]["namespace"], doc["spec"]
    draw = rng.random()
    if doc["kind"] == "BackendTLSPolicy" and draw < 0.7:
        name = f"ca-{spec['targetRefs'][0]['name']}"
        spec["validation"].pop("wellKnownCACertificates")
        spec["validation"]["caCertificateRefs"] = [{"group": "", "kind": "ConfigMap", "name": name}]
        if draw < 0.4:
            extra.append(_config_map(name, ns))
        elif draw < 0.5:
            extra.append(_config_map(name, ns, "bundle.pem", "chain.pem"))  # two entries, neither read
        elif draw < 0.6:
            extra.append(_secret(name, ns))  # one name, another kind than the reference takes
    elif doc["kind"] == "ClientTrafficPolicy" and isinstance(spec.get("tls"), dict):
        if draw < 0.5:
            ca = {"group": "", "kind": "ConfigMap", "name": "platform-ca", "namespace": CERTS}
        else:
            ca = {"group": "", "kind": "Secret", "name": "client-ca"}
            if draw < 0.8:
                extra.append(_secret("client-ca", ns, {"ca.crt": "Y2E="}))
        spec["tls"]["clientValidation"] = {"caCertificateRefs": [ca]}
    elif doc["kind"] == "Service" and draw < 0.15:
        extra.append(_config_map(doc["metadata"]["name"], ns, "settings"))  # one name, two kinds


def _basic_auth(gateway: dict[str, Any], rng: random.Random, extra: list[dict[str, Any]]) -> None:
    """A SecurityPolicy on the Gateway reading its users from a Secret: there, without the entry
    Envoy Gateway reads (`.htpasswd`), or missing."""
    ns = gateway["metadata"]["namespace"]
    spec = {"targetRefs": [{"group": GW, "kind": "Gateway", "name": gateway["metadata"]["name"]}]}
    spec["basicAuth"] = {"users": {"name": "htpasswd"}}
    extra.append({"apiVersion": EG, "kind": "SecurityPolicy", "metadata": {"name": "basic-auth", "namespace": ns}, "spec": spec})
    draw = rng.random()
    if draw < 0.7:
        extra.append(_secret("htpasswd", ns, {".htpasswd" if draw < 0.5 else "users": "dTpw"}))


def corpus(seed: int, n: int, reach: str = "shared") -> dict[str, list[dict[str, Any]]]:
    """The generator's tenants (`reach`: sharing Services, `shared`; reaching their neighbour's,
    `neighbour`; or `isolated`), with Secrets and CA ConfigMaps read by
    listeners (`_gateway_certificates`), policies (`_ca_references`, `_basic_auth`) and a shared
    namespace `CERTS` with its grants; some names taken twice in a namespace by different kinds."""
    rng = random.Random(seed)
    docs = list(tenants(n, seed, error_rate=0.3, isolated=reach == "isolated", shared=reach == "shared"))
    spaces = sorted({d["metadata"]["namespace"] for d in docs if d["metadata"].get("namespace")})
    extra: list[dict[str, Any]] = [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": CERTS}},
        _secret("wildcard", CERTS),
        _secret("internal", CERTS),
        _config_map("platform-ca", CERTS),
        _grant("gateways-to-wildcard", CERTS, "Gateway", spaces[::2], {"group": "", "kind": "Secret", "name": "wildcard"}),
        _grant("clients-to-ca", CERTS, "ClientTrafficPolicy", spaces[1::2], {"group": "", "kind": "ConfigMap"}),
    ]
    for doc in docs:
        if doc["kind"] == "Gateway":
            _gateway_certificates(doc, rng, extra)
            if doc["metadata"]["namespace"] in spaces[::3]:
                _basic_auth(doc, rng, extra)
        elif doc["metadata"].get("namespace"):
            _ca_references(doc, rng, extra)
    # The extra objects spread among the tenants' files, not in files of their own.
    mixed = list(docs)
    for doc in extra:
        mixed.insert(rng.randrange(len(mixed) + 1), doc)
    return in_files(mixed, rng)


class _Repo:
    """The objects of a repository's files by kind, for one edit."""

    def __init__(self, files: dict[str, list[dict[str, Any]]], rng: random.Random) -> None:
        self.files, self.rng = files, rng
        self.every = [d for name in sorted(files) for d in files[name]]
        self.of: dict[str, list[dict[str, Any]]] = {}
        for d in self.every:
            self.of.setdefault(d["kind"], []).append(d)
        self.spaces = sorted({d["metadata"]["namespace"] for d in self.every if d["metadata"].get("namespace")})
        self.listeners = [lst for g in self.of.get("Gateway", []) for lst in g["spec"]["listeners"] if "tls" in lst]
        self.secrets = self.of.get("Secret", [])
        self.grants = [
            g for g in self.of.get("ReferenceGrant", []) if any(t.get("kind") in ("Secret", "ConfigMap") for t in g["spec"]["to"])
        ]

    def remove(self, doc: dict[str, Any]) -> None:
        for docs in self.files.values():
            if doc in docs:
                docs.remove(doc)

    def add(self, doc: dict[str, Any]) -> None:
        self.files[self.rng.choice(sorted(self.files))].append(doc)


def _secret_edit(repo: _Repo, kind: str) -> None:
    rng, secrets = repo.rng, repo.secrets
    if kind == "secret-rename":
        rng.choice(secrets)["metadata"]["name"] += rng.choice("xyz")
    elif kind == "secret-remove":
        repo.remove(rng.choice(secrets))
    else:
        # A certificate rotated (its key changed), or an entry its reader needs renamed away and back.
        data = rng.choice(secrets)["data"]
        if "tls.key" in data:
            data["tls.key"] = "cm90YXRlZA==" if data["tls.key"] != "cm90YXRlZA==" else "a2V5"
        elif ".htpasswd" in data:
            data["users"] = data.pop(".htpasswd")
        elif "users" in data:
            data[".htpasswd"] = data.pop("users")
        else:
            data["tls.key"] = "a2V5"


def _config_map_edit(repo: _Repo, kind: str) -> None:
    config = repo.rng.choice(repo.of["ConfigMap"])
    if kind == "configmap-rename":
        config["metadata"]["name"] += repo.rng.choice("xyz")
    elif "ca.crt" in config["data"]:
        config["data"] = {"bundle.pem": "Y2E=", "chain.pem": "Y2E="}
    else:
        config["data"] = {"ca.crt": "Y2E="}


def _listener_edit(repo: _Repo, kind: str) -> None:
    rng = repo.rng
    listener = rng.choice(repo.listeners)
    ref = listener["tls"]["certificateRefs"][0]
    if kind == "cert-name":
        ref["name"] = rng.choice([*(s["metadata"]["name"] for s in repo.secrets), "wildcard", "missing"])
    elif kind == "cert-namespace" and "namespace" in ref and rng.random() < 0.5:
        del ref["namespace"]
    elif kind == "cert-namespace":
        ref["namespace"] = rng.choice([CERTS, *repo.spaces])
    elif kind == "tls-mode":
        listener["tls"]["mode"] = "Passthrough" if listener["tls"].get("mode") == "Terminate" else "Terminate"
    else:
        listener["hostname"] = "moved." + listener["hostname"]


def _grant_edit(repo: _Repo, kind: str) -> None:
    rng = repo.rng
    if kind == "grant-add":
        secret, gateway = rng.choice(repo.secrets), rng.choice(repo.of["Gateway"])
        to = {"group": "", "kind": "Secret", "name": secret["metadata"]["name"]}
        allowed = [gateway["metadata"]["namespace"]]
        repo.add(_grant(f"allow-{rng.randrange(10**6)}", secret["metadata"]["namespace"], "Gateway", allowed, to))
        return
    grant = rng.choice(repo.grants)
    froms = grant["spec"]["from"]
    if kind == "grant-drop" and len(froms) > 1 and rng.random() < 0.7:
        froms.pop(rng.randrange(len(froms)))
    elif kind == "grant-drop":
        repo.remove(grant)
    elif rng.random() < 0.5:
        rng.choice(froms)["namespace"] = rng.choice(repo.spaces)
    else:
        grant["metadata"]["namespace"] = rng.choice(repo.spaces)  # no longer where the Secrets are


def _same_name(repo: _Repo, kind: str) -> None:
    """An object given the name of another object of its namespace of another kind, or one of
    another kind added under that name."""
    rng = repo.rng
    taken = rng.choice(repo.every)
    name, ns = taken["metadata"]["name"], taken["metadata"].get("namespace")
    others = [d for d in repo.every if d["metadata"].get("namespace") == ns and d["kind"] != taken["kind"]]
    if not ns or not others:
        return
    if rng.random() < 0.5:
        rng.choice(others)["metadata"]["name"] = name
    else:
        repo.add(_secret(name, ns) if taken["kind"] != "Secret" else _config_map(name, ns))


def _issuer(repo: _Repo, kind: str) -> None:
    """A Gateway's cert-manager issuer annotation added or removed: the Secrets its listeners name
    made by cert-manager, or no longer."""
    annotations = repo.rng.choice(repo.of["Gateway"])["metadata"].setdefault("annotations", {})
    if annotations.pop("cert-manager.io/cluster-issuer", None) is None:
        annotations["cert-manager.io/cluster-issuer"] = "letsencrypt"


# Each edit, what it needs of the repository, and what makes it.
EDITS: dict[str, tuple[str, Any]] = {
    "secret-rename": ("Secret", _secret_edit),
    "secret-remove": ("Secret", _secret_edit),
    "secret-data": ("Secret", _secret_edit),
    "cert-name": ("listeners", _listener_edit),
    "cert-namespace": ("listeners", _listener_edit),
    "tls-mode": ("listeners", _listener_edit),
    "hostname": ("listeners", _listener_edit),
    "grant-drop": ("grants", _grant_edit),
    "grant-add": ("Secret", _grant_edit),
    "grant-move": ("grants", _grant_edit),
    "configmap-rename": ("ConfigMap", _config_map_edit),
    "configmap-data": ("ConfigMap", _config_map_edit),
    "same-name": ("Gateway", _same_name),
    "issuer": ("Gateway", _issuer),
}


def edit(files: dict[str, list[dict[str, Any]]], rng: random.Random, kind: str) -> str:
    """One edit of `EDITS`, in place; what it did."""
    repo = _Repo(files, rng)
    needs, make = EDITS[kind]
    have = {"listeners": repo.listeners, "grants": repo.grants}.get(needs, repo.of.get(needs))
    if have and repo.of.get("Gateway"):
        make(repo, kind)
    for key in [k for k, v in files.items() if not v]:
        del files[key]
    return kind


def differential(root: Path, cache: Path, seed: int, steps: int, n: int, reach: str = "shared") -> int:
    """The number of runs in which the directed part was searched (not declined); each step's
    report held to the whole repository analysed and to a run with a persistent cache. The part
    is analysed however much of the repository it holds (`MAX_SHARE`): on these corpora a change
    reaching a shared Secret, or a name hinted at in every namespace, often reaches past the share
    where the whole is analysed instead, and a comparison of the whole with itself proves
    nothing."""
    searched = 0
    real = directed.search

    def counted(*args: Any, **kwargs: Any) -> Any:
        nonlocal searched
        found = real(*args, **kwargs)
        searched += found is not None
        return found

    real_exact = directed.search_exact

    def counted_exact(*args: Any, **kwargs: Any) -> Any:
        nonlocal searched
        found = real_exact(*args, **kwargs)  # the base side's part (components.scope_exact)
        searched += found is not None
        return found

    rng = random.Random(seed)
    files = corpus(seed, n, reach)
    _committed(root, files)
    os.chdir(root)
    done: list[str] = []
    for step in range(steps):
        done.extend(edit(files, rng, rng.choice(sorted(EDITS))) for _ in range(rng.randint(1, 3)))
        _write(root, files)
        git(root, "add", "-A")
        mode = rng.choice([["--staged"], ["--staged"], ["--diff", "HEAD"]])
        run = _text if step % 2 else check
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(directed, "search", counted)
            patch.setattr(directed, "search_exact", counted_exact)
            patch.setattr(components, "MAX_SHARE", 1.0)
            cold = run(*mode, "--no-cache")
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(components, "MIN_OBJECTS", sys.maxsize)
            assert run(*mode, "--no-cache") == cold, (seed, done)
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(components, "MAX_SHARE", 1.0)
            assert run(*mode, "--cache-dir", str(cache)) == cold, (seed, done)
        if rng.random() < 0.6:
            git(root, "commit", "-q", "--allow-empty", "-m", f"step {len(done)}")
    return searched


def test_the_corpus_holds_the_shapes() -> None:
    """What the differential leans on is in its corpus: certificate references in the namespace
    and across it, granted and not, Secrets present, absent and made, CA ConfigMaps, Envoy
    Gateway policies reading Secrets and ConfigMaps, names taken by two kinds."""
    docs = [d for ds in corpus(0, 600).values() for d in ds]
    kinds = {d["kind"] for d in docs}
    assert {"Secret", "ConfigMap", "Certificate", "SecurityPolicy", "ReferenceGrant", "BackendTLSPolicy"} <= kinds
    refs = [
        lst["tls"]["certificateRefs"][0] for d in docs if d["kind"] == "Gateway" for lst in d["spec"]["listeners"] if "tls" in lst
    ]
    assert {r.get("namespace") for r in refs} >= {None, CERTS}
    assert {r["name"] for r in refs if r.get("namespace") == CERTS} == {"wildcard", "internal"}
    assert any("caCertificateRefs" in d["spec"]["validation"] for d in docs if d["kind"] == "BackendTLSPolicy")
    keys = [(d["metadata"].get("namespace"), d["metadata"]["name"]) for d in docs]
    assert len(keys) > len(set(keys))  # some name taken twice in a namespace (by two kinds)


def test_differential_of_secret_edits_fast(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(components, "MIN_OBJECTS", 100)  # the directed part searched on a small corpus
    assert differential(tmp_path / "repo", tmp_path / "cache", seed=3, steps=4, n=180) > 0


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(6))
def test_differential_of_secret_edits(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, seed: int) -> None:
    """Larger repositories, past the size where the part is searched, longer sequences; tenants
    sharing Services, reaching their neighbour's, or isolated (joined only through `CERTS`)."""
    monkeypatch.chdir(tmp_path)
    reach = ("shared", "neighbour", "isolated")[seed % 3]
    assert differential(tmp_path / "repo", tmp_path / "cache", seed=seed, steps=10, n=400, reach=reach) >= 10


# -- by hand: the pre-commit hook's first run ------------------------------------------------------

CERTS_FILE = """\
apiVersion: v1
kind: Secret
metadata:
  name: wildcard
  namespace: platform-certs
type: kubernetes.io/tls
data:
  tls.crt: Y2VydA==
  tls.key: a2V5
---
apiVersion: v1
kind: Secret
metadata:
  name: client-ca
  namespace: platform-certs
data:
  ca.crt: Y2E=
"""

GRANTS_FILE = """\
apiVersion: gateway.networking.k8s.io/v1beta1
kind: ReferenceGrant
metadata:
  name: team-a-to-secrets
  namespace: platform-certs
spec:
  from:
  - group: gateway.networking.k8s.io
    kind: Gateway
    namespace: team-a
  - group: gateway.envoyproxy.io
    kind: ClientTrafficPolicy
    namespace: team-a
  to:
  - group: ""
    kind: Secret
"""

CLASS_FILE = """\
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata:
  name: envoy
spec:
  controllerName: gateway.envoyproxy.io/gatewayclass-controller
"""

# A team's Gateway serving the shared certificate, and the client CA its ClientTrafficPolicy
# validates clients with, both in the shared namespace.
TEAM_FILE = """\
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata:
  name: gw
  namespace: team-{t}
spec:
  gatewayClassName: envoy
  listeners:
  - name: https
    protocol: HTTPS
    port: 443
    hostname: {t}.example.com
    tls:
      mode: Terminate
      certificateRefs:
      - kind: Secret
        name: wildcard
        namespace: platform-certs
---
apiVersion: gateway.envoyproxy.io/v1alpha1
kind: ClientTrafficPolicy
metadata:
  name: mtls
  namespace: team-{t}
spec:
  targetRefs:
  - group: gateway.networking.k8s.io
    kind: Gateway
    name: gw
  tls:
    clientValidation:
      caCertificateRefs:
      - kind: Secret
        name: client-ca
        namespace: platform-certs
"""


@pytest.fixture
def platform(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Two teams' Gateways and ClientTrafficPolicies reading the Secrets of a shared namespace,
    whose one ReferenceGrant permits team-a's only, committed; the part searched by what reads what
    however small the repository."""
    root = tmp_path / "repo"
    files = {"certs.yaml": CERTS_FILE, "grants.yaml": GRANTS_FILE, "class.yaml": CLASS_FILE}
    files |= {f"team-{t}.yaml": TEAM_FILE.format(t=t) for t in "ab"}
    repository(root, files)
    monkeypatch.chdir(root)
    monkeypatch.setattr(components, "MIN_OBJECTS", 0)
    return root


def _hook(monkeypatch: pytest.MonkeyPatch) -> tuple[list[dict[str, Any]], set[str]]:
    """The hook's run (`check --staged --gate-base HEAD`)'s findings, after asserting its report
    is the whole repository's analysed; the members of the change's directed part, as `Kind
    namespace/name`."""
    searched: list[set[str]] = []
    real = directed.search

    def recorded(names: Any, namespaces: Any, kinds: Any, refs: Any, origins: Any, removed: Any, kept: Any = None) -> Any:
        found = real(names, namespaces, kinds, refs, origins, removed, kept)
        assert found is not None
        searched.append({f"{kinds[i][1]} {namespaces[i]}/{names[i]}" for i in found[0]})
        return found

    args = ("--staged", "--gate-base", "HEAD", "--no-cache")
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(directed, "search", recorded)
        hook = check(*args)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(components, "MIN_OBJECTS", sys.maxsize)
        assert check(*args) == hook
    return json.loads(hook[1])["findings"], searched[0]  # the change's side, searched first


def _rows(findings: list[dict[str, Any]]) -> list[tuple[str, str, str, bool]]:
    return sorted(
        (f["rule"], f["object"]["kind"], f"{f['object']['namespace']}/{f['object']['name']}", f["introduced"]) for f in findings
    )


def test_a_secret_rotated_alone_analyses_what_reads_it(platform: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The certificate's key rotated and the client CA's `ca.crt` renamed away, in the Secrets' file
    alone: the Gateways and policies of both teams read them (across namespaces) and are analysed.
    team-a's ClientTrafficPolicy, permitted, now reads a Secret with two entries and no `ca.crt`,
    which Envoy Gateway refuses ("has none of the expected keys [ca.crt] and more than one entry"):
    PL417, introduced. team-b's references stay not permitted (PL402, in files the change did not
    touch, with notes at the grant: out of the report scope); the rotated key changes nothing."""
    rotated = CERTS_FILE.replace("tls.key: a2V5", "tls.key: cm90YXRlZA==").replace(
        "  ca.crt: Y2E=\n", "  ca.pem: Y2E=\n  other.pem: Y2E=\n"
    )
    (platform / "certs.yaml").write_text(rotated)
    git(platform, "add", "-A")
    findings, members = _hook(monkeypatch)
    assert {
        "Gateway team-a/gw",
        "Gateway team-b/gw",
        "ClientTrafficPolicy team-a/mtls",
        "ClientTrafficPolicy team-b/mtls",
    } <= members
    assert _rows(findings) == [("PL417", "ClientTrafficPolicy", "team-a/mtls", True)]


def test_a_reference_grant_deleted_reports_what_it_permitted(platform: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The grant's file deleted: team-a's listener certificate and client CA, in another namespace,
    are no longer permitted (Gateway API: ResolvedRefs=False, RefNotPermitted; Envoy Gateway
    refuses the policy): both PL402, introduced, though team-a's file did not change. team-b's,
    refused before and after, are pre-existing and in an untouched file: not reported."""
    git(platform, "rm", "-q", "grants.yaml")
    findings, members = _hook(monkeypatch)
    assert {"Gateway team-a/gw", "ClientTrafficPolicy team-a/mtls"} <= members
    assert _rows(findings) == [
        ("PL402", "ClientTrafficPolicy", "team-a/mtls", True),
        ("PL402", "Gateway", "team-a/gw", True),
    ]


ISSUING_FILE = """\
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata:
  name: issuing
  namespace: team-a
spec:
  gatewayClassName: envoy
  listeners:
  - name: https
    protocol: HTTPS
    port: 443
    hostname: a.example.com
    tls:
      mode: Terminate
      certificateRefs:
      - kind: Secret
        name: made-cert
---
apiVersion: v1
kind: Secret
metadata:
  name: other
  namespace: team-a
data:
  tls.crt: Y2VydA==
  tls.key: a2V5
"""

CERTIFICATE_FILE = """\
apiVersion: cert-manager.io/v1
kind: Certificate
metadata:
  name: made
  namespace: team-a
spec:
  secretName: made-cert
  dnsNames: [a.example.com]
  issuerRef:
    name: letsencrypt
    kind: ClusterIssuer
"""

TEAM_B_GRANT_FILE = """\
apiVersion: gateway.networking.k8s.io/v1beta1
kind: ReferenceGrant
metadata:
  name: to-team-b
  namespace: team-a
spec:
  from:
  - group: gateway.networking.k8s.io
    kind: Gateway
    namespace: team-b
  to:
  - group: ""
    kind: Secret
"""

TEAM_B_FILE = """\
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata:
  name: gw
  namespace: team-b
spec:
  gatewayClassName: envoy
  listeners:
  - name: https
    protocol: HTTPS
    port: 443
    hostname: b.example.com
    tls:
      mode: Terminate
      certificateRefs:
      - kind: Secret
        name: made-cert
        namespace: team-a
"""


def test_a_certificate_making_another_secret_reports_the_listeners_that_read_the_first(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """cert-manager writes a Certificate's Secret under `spec.secretName`: the Secret team-a's and
    (granted) team-b's listeners read is made, none is in the input. The Certificate's file alone
    changes its secretName: nothing names the Certificate, yet both Gateways read what it made, and
    team-a's namespace holds a Secret (the input manages Secrets there), so both listeners' Secret is
    now missing (Gateway API: ResolvedRefs=False, InvalidCertificateRef): PL417 on both, introduced,
    though neither Gateway's file changed."""
    root = tmp_path / "repo"
    files = {"class.yaml": CLASS_FILE, "team-a.yaml": ISSUING_FILE, "cert.yaml": CERTIFICATE_FILE}
    files |= {"grant.yaml": TEAM_B_GRANT_FILE, "team-b.yaml": TEAM_B_FILE}
    repository(root, files)
    monkeypatch.chdir(root)
    monkeypatch.setattr(components, "MIN_OBJECTS", 0)
    assert json.loads(check("--no-cache", ".")[1])["findings"] == []  # the Secret made: both listeners served
    (root / "cert.yaml").write_text(CERTIFICATE_FILE.replace("secretName: made-cert", "secretName: made-cert-2"))
    git(root, "add", "-A")
    findings, members = _hook(monkeypatch)
    assert {"Gateway team-a/issuing", "Gateway team-b/gw"} <= members
    assert _rows(findings) == [("PL417", "Gateway", "team-a/issuing", True), ("PL417", "Gateway", "team-b/gw", True)]
