"""Incremental analysis (policylint/incremental/): what a run keeps by content is what a run
without it would find.

- The gate's base side (`--staged`, `--diff`, the pre-commit hook) is read from what an earlier
  run of the gate found for the same files and settings, instead of being linted again: counted
  here by the pipeline runs a command makes.
- A kept entry that is not exactly what policylint writes is a miss, never believed.
- Differential: random edit sequences (objects added, removed and renamed, targetRefs changed,
  documents moved, files deleted and renamed, commits in between; or only values changed where
  they stand: paths, headers, a policy's settings, ports, a listener's hostname; or names and
  references changed: renames, a port or a rule a policy's sectionName names, grants, a policy's
  target and a route's parent moved to another Gateway; or a tenant's Namespace changed: an
  annotation, the label its listeners select, renamed, deleted, added) on repositories made by the benchmark
  generator, each run with a persistent cache and again without any cache: the exit code and the
  JSON report are byte-identical; the value and reference edits, past the size where the part a
  change reaches is searched, also to a run analysing the whole repository.
- `Workspace` (the language server's entry point): in-memory texts override the files, each
  update answers the files whose findings changed, and its findings are a cold run's over the
  same texts written to disk.
"""

from __future__ import annotations

import copy
import dataclasses
import json
import os
import random
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from benchmarks.generate import objects as tenants
from policylint import pipeline
from policylint.cli import cli
from policylint.incremental import memo, rulecache
from policylint.incremental.workspace import Workspace
from policylint.input.cache import ParseCache
from policylint.pipeline import LintRequest, lint
from policylint.semantics import components
from tests.gitrepo import git, init
from tests.lintutil import in_files
from tests.scope.test_change_gate import APP, lay_out


def test_every_request_field_is_said_to_shape_the_findings_or_not() -> None:
    """A new LintRequest field must be classified: a setting left out of the key would let a run
    with other settings reuse what this one found."""
    names = {f.name for f in dataclasses.fields(LintRequest)}
    assert memo.SHAPING.isdisjoint(memo.NOT_SHAPING)
    assert names == memo.SHAPING | memo.NOT_SHAPING


def test_settings_are_written_alike_whatever_the_set_order() -> None:
    a = LintRequest(paths=["."], rule_options={"PL608": {"max-affected": 3}, "PL201": {}})
    b = LintRequest(paths=["x"], rule_options={"PL201": {}, "PL608": {"max-affected": 3}}, jobs=2)
    assert memo.settings(a) == memo.settings(b)
    assert memo.settings(a) != memo.settings(dataclasses.replace(a, namespace="other"))
    assert memo.settings(a) != memo.settings(dataclasses.replace(a, rule_options={"PL608": {"max-affected": 4}}))


def test_settings_of_a_configuration_with_per_file_entries_are_written() -> None:
    """A `per-file` entry holds the matcher compiled from its pattern: the pattern is the key."""
    from pathspec import GitIgnoreSpec

    from policylint.config.overrides import Overrides, PerFile

    def per_file(pattern: str) -> PerFile:
        return PerFile(pattern, "/repo", GitIgnoreSpec.from_lines([pattern]), ignore=("PL301",))

    request = LintRequest(paths=["."], overrides=Overrides(per_file=(per_file("apps/"),)))
    assert memo.settings(request) is not None
    assert memo.settings(request) == memo.settings(
        dataclasses.replace(request, overrides=Overrides(per_file=(per_file("apps/"),)))
    )
    assert memo.settings(request) != memo.settings(
        dataclasses.replace(request, overrides=Overrides(per_file=(per_file("ops/"),)))
    )


# -- the gate's base side ----------------------------------------------------------------------


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "repo"
    init(root)
    lay_out(root)
    git(root, "add", ".")
    git(root, "commit", "-q", "-m", "base")
    monkeypatch.chdir(root)
    return root


@pytest.fixture
def runs(monkeypatch: pytest.MonkeyPatch, without_kept_results: None) -> list[LintRequest]:
    """The pipeline runs commands make, in order (every run analyses: what is counted is how the
    gate's base is found)."""
    made: list[LintRequest] = []
    real = pipeline._lint

    def counted(
        request: LintRequest,
        part: pipeline.Part | None = None,
        resident: Any = None,
        discovered: Any = None,
        content_keys: Any = None,
        exact: bool = False,
    ) -> pipeline.LintResult:
        made.append(request)
        return real(request, part, resident, discovered, content_keys, exact)

    monkeypatch.setattr(pipeline, "_lint", counted)
    return made


def check(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, ["check", "--format", "json", *args])
    assert result.exit_code in (0, 1), result.output
    return result.exit_code, result.stdout


def _text(*args: str) -> tuple[int, str]:
    """`check` in the text format, with what it says on standard error (its summary line)."""
    result = CliRunner().invoke(cli, ["check", *args])
    assert result.exit_code in (0, 1), result.output
    return result.exit_code, result.stdout + result.stderr


def _edit_route_port(root: Path, port: int) -> None:
    (root / "apps" / "team-x" / "app.yaml").write_text(APP.replace("port: 8080\n---", f"port: {port}\n---"))
    git(root, "add", ".")


def test_the_base_is_linted_once_then_read_back(repo: Path, tmp_path: Path, runs: list[LintRequest]) -> None:
    cache = str(tmp_path / "cache")
    _edit_route_port(repo, 9090)  # a backend port the Service does not have: introduced
    cold = check("--staged", "--no-cache")
    del runs[:]
    assert check("--staged", "--cache-dir", cache) == cold
    assert len(runs) == 2  # the staged files, then HEAD from git objects
    del runs[:]
    assert check("--staged", "--cache-dir", cache) == cold
    assert [r.sources for r in runs] == [None]  # HEAD's findings read back: only the staged files linted


def test_the_base_of_the_next_commit_is_what_this_run_checked(repo: Path, tmp_path: Path, runs: list[LintRequest]) -> None:
    cache = str(tmp_path / "cache")
    _edit_route_port(repo, 9090)
    check("--staged", "--cache-dir", cache)
    git(repo, "commit", "-q", "-m", "port")
    _edit_route_port(repo, 9091)  # still a port the Service lacks: pre-existing, not introduced
    cold = check("--staged", "--no-cache")
    reported = json.loads(cold[1])["findings"]
    assert reported and all(f["introduced"] is False for f in reported)
    del runs[:]
    assert check("--staged", "--cache-dir", cache) == cold
    assert [r.sources for r in runs] == [None]  # HEAD is what the previous run checked as staged


def test_other_settings_do_not_read_what_a_run_kept(repo: Path, tmp_path: Path, runs: list[LintRequest]) -> None:
    cache = str(tmp_path / "cache")
    _edit_route_port(repo, 9090)
    check("--staged", "--cache-dir", cache)
    del runs[:]
    check("--staged", "--cache-dir", cache, "--namespace", "elsewhere")
    assert len(runs) == 2
    del runs[:]
    check("--staged", "--cache-dir", cache, "--ignore", "PL301")
    assert len(runs) == 2


def _entries(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The entry keys `memo.Keys` gives (`memo.key`'s among them), in order."""
    keys: list[str] = []
    real = memo.Keys.key

    def recorded(self: memo.Keys, *args: Any, **kwargs: Any) -> str | None:
        found = real(self, *args, **kwargs)
        if found is not None:
            keys.append(found)
        return found

    monkeypatch.setattr(memo.Keys, "key", recorded)
    return keys


@pytest.mark.parametrize(
    "payload",
    [
        b"not json",
        b'{"format": 2, "fingerprints": []}',
        b'{"format": 1, "fingerprints": {"a": 1}}',
        b'{"format": 1, "fingerprints": ["ZZZZZZZZZZZZZZZZZZZZ"]}',
        b'{"format": 1, "fingerprints": [1234567890123456789]}',
        b"[1]",
        None,  # whole, but its checksum does not match
    ],
)
def test_an_entry_that_is_not_what_policylint_writes_is_a_miss(
    repo: Path, tmp_path: Path, runs: list[LintRequest], monkeypatch: pytest.MonkeyPatch, payload: bytes | None
) -> None:
    cache = tmp_path / "cache"
    _edit_route_port(repo, 9090)
    cold = check("--staged", "--no-cache")
    keys = _entries(monkeypatch)
    check("--staged", "--cache-dir", str(cache))
    # Every entry looked up: the staged files' whole run, the base's whole run and its part,
    # kept; what a staged side analysing a part would have kept for the base, not kept here.
    assert len(set(keys)) == 4
    assert sum((cache / "parse" / entry).is_file() for entry in set(keys)) == 3
    for entry in set(keys):
        if payload is None:
            path = cache / "parse" / entry
            if not path.is_file():
                continue
            blob = bytearray(path.read_bytes())
            blob[-2] ^= 1
            path.write_bytes(bytes(blob))
        else:
            ParseCache(cache).put(entry, payload)
    del runs[:]
    assert check("--staged", "--cache-dir", str(cache)) == cold
    assert len(runs) == 2  # the base linted again


def test_an_entry_that_is_a_symlink_is_a_miss(
    repo: Path, tmp_path: Path, runs: list[LintRequest], monkeypatch: pytest.MonkeyPatch
) -> None:
    cache = tmp_path / "cache"
    _edit_route_port(repo, 9090)
    cold = check("--staged", "--no-cache")
    keys = _entries(monkeypatch)
    check("--staged", "--cache-dir", str(cache))
    for i, name in enumerate(set(keys)):
        entry = cache / "parse" / name
        if not entry.is_file():
            continue  # looked up, never kept
        forged = tmp_path / f"forged-{i}"
        forged.write_bytes(entry.read_bytes())  # a valid entry, but not one the cache holds itself
        entry.unlink()
        entry.symlink_to(forged)
    del runs[:]
    assert check("--staged", "--cache-dir", str(cache)) == cold
    assert len(runs) == 2


# -- differential: random edit sequences ---------------------------------------------------------


def _write(root: Path, files: dict[str, list[dict[str, Any]]]) -> None:
    for existing in root.glob("*.yaml"):
        if existing.name not in files:
            existing.unlink()
    for name, docs in files.items():
        (root / name).write_text(yaml.safe_dump_all(docs, sort_keys=False), encoding="utf-8")


def _editor_workspace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, texts: dict[str, str]) -> tuple[Workspace, Path]:
    """A workspace over `texts` written in `tmp_path/editor` (the working directory now), with a
    cache beside it, and an empty `tmp_path/disk` for what the test writes apart."""
    editor, disk = tmp_path / "editor", tmp_path / "disk"
    editor.mkdir()
    disk.mkdir()
    for name, text in texts.items():
        (editor / name).write_text(text, encoding="utf-8")
    monkeypatch.chdir(editor)
    return Workspace(LintRequest(paths=["."], cache_dir=str(tmp_path / "cache"))), disk


def _committed(root: Path, files: dict[str, list[dict[str, Any]]]) -> None:
    """A git repository at `root` whose one commit holds `files`."""
    init(root)
    _write(root, files)
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "start")


def _corpus(seed: int, n: int, *, isolated: bool, shared: bool = False) -> dict[str, list[dict[str, Any]]]:
    rng = random.Random(seed)
    docs = list(tenants(n, seed, error_rate=0.3, isolated=isolated, shared=shared))
    return in_files(docs, rng)


def _policies(files: dict[str, list[dict[str, Any]]]) -> Iterator[dict[str, Any]]:
    for docs in files.values():
        for doc in docs:
            if isinstance(doc.get("spec"), dict) and doc["spec"].get("targetRefs"):
                yield doc


def _edit(files: dict[str, list[dict[str, Any]]], rng: random.Random, *, outside: bool = False, editor: bool = False) -> str:
    """One random edit of the repository, in place; what it did (`field`: an object's content
    changed where it stands, an unknown field added or removed). `outside`: edits that change a
    file that may lie outside the part too (its bytes alone, or its object count alone), which
    a scoped run reads from what earlier runs kept (policylint.incremental.shells). `editor`:
    edits whose findings land in other files than the edited one (an object moved to another
    namespace, a backend across namespaces, the ReferenceGrant allowing one), which an editor's
    part analysis must answer while the objects of the other files are the ones kept in memory
    (policylint.incremental.resident)."""
    names = sorted(files)
    kinds = ["rename", "target", "remove", "add", "move", "delete-file", "rename-file", "field"]
    kind = rng.choice([*kinds, "label", "unrelated"] if outside else kinds)
    if editor and rng.random() < 0.3:
        # Less often than the others: most of them join two tenants' parts, after which every
        # update analyses nearly everything, and whole.
        kind = rng.choice(["namespace", "cross", "grant", "ungrant"])
    name = rng.choice(names)
    docs = files[name]
    if kind in ("namespace", "cross", "grant", "ungrant"):
        _across(files, docs, kind, rng)
    elif kind == "rename" and docs:
        doc = rng.choice(docs)
        doc["metadata"]["name"] += rng.choice("xyz")
    elif kind == "target":
        policies = list(_policies(files))
        if policies:
            ref = rng.choice(rng.choice(policies)["spec"]["targetRefs"])
            others = [d["metadata"]["name"] for ds in files.values() for d in ds if d.get("kind") == ref.get("kind")]
            ref["name"] = rng.choice([*others, ref["name"] + "-typo"]) if others else ref["name"] + "-typo"
    elif kind == "remove" and docs:
        docs.pop(rng.randrange(len(docs)))
    elif kind == "add" and docs:
        copied = copy.deepcopy(rng.choice(docs))
        copied["metadata"]["name"] += "-copy"
        files[rng.choice(names)].append(copied)
    elif kind == "move" and docs:
        files[rng.choice(names)].append(docs.pop(rng.randrange(len(docs))))
    elif kind == "delete-file" and len(files) > 2:
        del files[name]
    elif kind in ("label", "field") and docs:
        _in_place(docs, kind, rng)
    elif kind == "unrelated":
        # A file's object count changes (the report's counts), nothing it holds is referenced.
        config = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": f"c-{rng.randrange(10**6)}", "namespace": "misc"}}
        docs.append(config)
    elif kind == "rename-file":
        files[f"r-{rng.randrange(10**6):06d}.yaml"] = files.pop(name)
    for key in [k for k, v in files.items() if not v]:
        del files[key]  # an empty document list would write a file holding `[]`
    return f"{kind} {name}"


def _in_place(docs: list[dict[str, Any]], kind: str, rng: random.Random) -> None:
    """An object of `docs` changed where it stands: `label`, a label (a file that may lie outside
    the part changes its bytes, not what anything references); `field`, a field its schema does
    not define added to a Gateway API object or removed (what the per-object rules found on it is
    not what was kept for it, policylint.incremental.rulecache)."""
    if kind == "label":
        rng.choice(docs)["metadata"].setdefault("labels", {})["edited"] = str(rng.randrange(10**6))
        return
    schemed = [d for d in docs if str(d.get("apiVersion", "")).startswith("gateway.networking.k8s.io/")]
    spec = rng.choice(schemed or docs).get("spec")
    if isinstance(spec, dict) and spec.pop("colour", None) is None:
        spec["colour"] = "blue"


# The value edits (`_value`): those whose effect stays below one Gateway (the Gateway's routes'
# matches, a policy's settings), and those that reach further (a Service's port, which the routes
# of several tenants name; a listener's hostname, which decides what attaches to its Gateway; a
# backend's port, found or not among its Service's).
VALUES = ("path", "header", "policy", "backend-port", "service-port", "listener")
# The edits a part search that follows what reads what, rather than every reference both ways,
# would have to follow beyond the changed object's Gateway (docs/performance.md, "The hook's first
# run after a one-value change where the change reaches everything: what a directed part would
# hold"): an object renamed (what named it finds nothing, near misses name it), a Service port's
# name, which a BackendTLSPolicy's sectionName names, a route rule's name, which a policy's
# sectionName names, a ReferenceGrant's namespaces and Services, and a policy's target or a
# route's parent moved to another tenant's Gateway.
REACHING = ("rename", "port-name", "rule-name", "grant", "retarget", "reparent")
# A tenant's Namespace changed, which the part search that follows what reads what takes
# (policylint/semantics/directed.py, "A Namespace changed"): an annotation (name and labels kept),
# the label the generator's HTTPS listeners select (`gateway-access`) taken away or given back, so
# that a selector no longer matches or matches again; the Namespace renamed, deleted, added
# (back) for a namespace in use without one, or moved to a file of its own (whose other objects
# are then in no changed namespace).
NAMESPACES = ("ns-annotation", "ns-label", "ns-rename", "ns-delete", "ns-add", "ns-move")


def _value(files: dict[str, list[dict[str, Any]]], rng: random.Random, kinds: tuple[str, ...] = VALUES) -> str:
    """One value changed where it stands, every name and reference left as it was (`VALUES`):
    what a team changes most (a path, a header match, a retry count, a port, a hostname); or, of
    `REACHING`, a name or a reference changed. What it did."""
    every = [d for name in sorted(files) for d in files[name]]
    kind = rng.choice(kinds)
    routes = [d for d in every if d.get("kind") == "HTTPRoute" and d["spec"].get("rules")]
    rules = [r for d in routes for r in d["spec"]["rules"]]
    if kind in REACHING or kind in NAMESPACES:
        _reaching(files, every, kind, rng)
    elif kind == "path" and rules:
        match = rng.choice(rng.choice(rules)["matches"])
        match["path"]["value"] = f"/{rng.choice(['v1', 'v2', 'api'])}{match['path']['value']}"
    elif kind == "header" and rules:
        match = rng.choice(rng.choice(rules)["matches"])
        match["headers"] = [{"type": "Exact", "name": "x-tenant", "value": str(rng.randrange(100))}]
    elif kind == "policy":
        policies = [d for d in _policies(files) if isinstance(d["spec"].get("retry"), dict)]
        policies += [d for d in every if d.get("kind") == "RateLimitPolicy" and isinstance(d["spec"].get("limits"), dict)]
        if policies:
            spec = rng.choice(policies)["spec"]
            if "retry" in spec:
                spec["retry"]["numRetries"] = rng.randint(1, 9)
            else:
                for limit in spec["limits"].values():
                    limit["rates"][0]["limit"] = rng.randint(1, 5000)
    elif kind == "backend-port" and rules:
        backend = rng.choice(rng.choice(rules)["backendRefs"])
        backend["port"] = rng.choice([8080, 8443, 9999])  # 9999: a port no Service has
    elif kind == "service-port":
        services = [d for d in every if d.get("kind") == "Service" and d["spec"].get("ports")]
        if services:
            port = rng.choice(rng.choice(services)["spec"]["ports"])
            port["port"] = rng.choice([8080, 8081, 9090])
    elif kind == "listener":
        gateways = [d for d in every if d.get("kind") == "Gateway" and d["spec"].get("listeners")]
        if gateways:
            listener = rng.choice(rng.choice(gateways)["spec"]["listeners"])
            if rng.random() < 0.5 and "hostname" in listener:
                listener["hostname"] = "moved." + listener["hostname"]
            else:
                listener["port"] = rng.choice([80, 443, 8443])
    return kind


def _reaching(files: dict[str, list[dict[str, Any]]], every: list[dict[str, Any]], kind: str, rng: random.Random) -> None:
    """One of `REACHING`, in place on the objects `every` lists, or of `NAMESPACES` in `files`."""
    if kind in NAMESPACES:
        _namespace(files, kind, rng)
        return
    of = {k: [d for d in every if d.get("kind") == k] for k in ("Service", "HTTPRoute", "Gateway", "ReferenceGrant")}
    targeted = [
        d for d in every if isinstance(d.get("spec"), dict) and (d["spec"].get("targetRefs") or d["spec"].get("targetRef"))
    ]
    spaces = sorted({d["metadata"]["namespace"] for d in every if d["metadata"].get("namespace")})
    if kind == "rename":
        named = of["Service"] + of["HTTPRoute"] + of["Gateway"] + targeted
        if named:
            rng.choice(named)["metadata"]["name"] += rng.choice("xyz")
    elif kind == "port-name" and of["Service"]:
        # A Service a BackendTLSPolicy names a port of (`https`), when there is one: that port
        # renamed away, or a port renamed to it.
        sections = {
            (d["metadata"].get("namespace"), r.get("name")): r["sectionName"]
            for d in targeted
            for r in d["spec"].get("targetRefs") or []
            if isinstance(r, dict) and r.get("kind") == "Service" and r.get("sectionName")
        }
        named = [d for d in of["Service"] if (d["metadata"].get("namespace"), d["metadata"]["name"]) in sections]
        service = rng.choice(named or of["Service"])
        section = sections.get((service["metadata"].get("namespace"), service["metadata"]["name"]), "https")
        port = rng.choice(service["spec"].get("ports") or [{}])
        port["name"] = section if port.get("name") != section else rng.choice(["tls", "http"])
    elif kind == "rule-name" and of["HTTPRoute"]:
        rule = rng.choice(rng.choice(of["HTTPRoute"])["spec"].get("rules") or [{}])
        rule["name"] = str(rule.get("name", "rule")) + "-renamed"
    elif kind == "grant" and of["ReferenceGrant"] and spaces:
        spec = rng.choice(of["ReferenceGrant"])["spec"]
        if rng.random() < 0.5 and spec.get("from"):
            rng.choice(spec["from"])["namespace"] = rng.choice(spaces)  # another tenant allowed, or none new
        elif len(spec.get("to", [])) > 1:
            spec["to"].pop(rng.randrange(len(spec["to"])))  # a Service no longer granted
        elif of["Service"]:
            spec.setdefault("to", []).append(
                {"group": "", "kind": "Service", "name": rng.choice(of["Service"])["metadata"]["name"]}
            )
    elif kind == "retarget" and of["Gateway"]:
        policies = [d for d in targeted if d["spec"].get("targetRefs") and d["spec"]["targetRefs"][0].get("kind") == "Gateway"]
        if policies:
            policy, gateway = rng.choice(policies), rng.choice(of["Gateway"])
            policy["spec"]["targetRefs"][0]["name"] = gateway["metadata"]["name"]
            if rng.random() < 0.5:
                # Moved with it into that Gateway's namespace, where the target resolves.
                policy["metadata"]["namespace"] = gateway["metadata"]["namespace"]
    elif kind == "reparent" and of["HTTPRoute"] and of["Gateway"]:
        gateway = rng.choice(of["Gateway"])
        parent = rng.choice(rng.choice(of["HTTPRoute"])["spec"]["parentRefs"])
        parent.update(name=gateway["metadata"]["name"], namespace=gateway["metadata"]["namespace"])
        parent.pop("sectionName", None)


def _namespace(files: dict[str, list[dict[str, Any]]], kind: str, rng: random.Random) -> None:
    """One of `NAMESPACES`, in place in `files`."""
    held = [(docs, d) for name in sorted(files) for docs in (files[name],) for d in docs if d.get("kind") == "Namespace"]
    if kind == "ns-add":
        declared = {d["metadata"]["name"] for _, d in held}
        used = sorted({d["metadata"]["namespace"] for ds in files.values() for d in ds if d["metadata"].get("namespace")})
        name = rng.choice([n for n in used if n not in declared] or [f"extra-{rng.randrange(10**6)}"])
        namespace = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}
        if rng.random() < 0.7:
            namespace["metadata"]["labels"] = {"gateway-access": "shared"}
        if rng.random() < 0.5:
            files[rng.choice(sorted(files))].insert(0, namespace)
        else:  # a file of its own: no other object of the file is in its namespace
            files[f"ns-{rng.randrange(10**6):06d}.yaml"] = [namespace]
        return
    if not held:
        return
    docs, namespace = rng.choice(held)
    meta = namespace["metadata"]
    if kind == "ns-annotation":
        meta.setdefault("annotations", {})["edited"] = str(rng.randrange(10**6))
    elif kind == "ns-label":
        labels = meta.setdefault("labels", {})
        if labels.get("gateway-access") == "shared":
            if rng.random() < 0.5:
                del labels["gateway-access"]
            else:
                labels["gateway-access"] = "private"
        else:
            labels["gateway-access"] = "shared"
    elif kind == "ns-rename":
        meta["name"] += rng.choice("xyz")
    elif kind == "ns-delete" and len(docs) > 1:
        docs.remove(namespace)
    elif kind == "ns-move" and len(docs) > 1:
        docs.remove(namespace)
        files[f"ns-{rng.randrange(10**6):06d}.yaml"] = [namespace]


def _across(files: dict[str, list[dict[str, Any]]], docs: list[dict[str, Any]], kind: str, rng: random.Random) -> None:
    """An edit reaching across namespaces: `namespace` moves an object of `docs` to another
    tenant's namespace, `cross` points a route's backend at another tenant's Service, `grant`
    adds to `docs` the ReferenceGrant allowing a route's namespace to reach a Service's, `ungrant`
    removes one such grant (from whichever file holds it: the routes it allowed are elsewhere)."""
    every = [d for ds in files.values() for d in ds]
    spaces = sorted({d["metadata"]["namespace"] for d in every if d["metadata"].get("namespace")})
    services = [d for d in every if d.get("kind") == "Service"]
    routes = [d for d in every if d.get("kind") == "HTTPRoute" and d["spec"].get("rules")]
    if kind == "namespace" and docs and spaces:
        rng.choice(docs)["metadata"]["namespace"] = rng.choice(spaces)
    elif kind == "cross" and services and routes:
        service = rng.choice(services)
        rule = rng.choice(rng.choice(routes)["spec"]["rules"])
        ref = {"name": service["metadata"]["name"], "namespace": service["metadata"].get("namespace", "default"), "port": 8080}
        rule["backendRefs"] = [ref]
    elif kind == "grant" and services and routes:
        service, route = rng.choice(services), rng.choice(routes)
        grant = {
            "apiVersion": "gateway.networking.k8s.io/v1beta1",
            "kind": "ReferenceGrant",
            "metadata": {"name": f"allow-{rng.randrange(10**6)}", "namespace": service["metadata"].get("namespace", "default")},
            "spec": {
                "from": [
                    {
                        "group": "gateway.networking.k8s.io",
                        "kind": "HTTPRoute",
                        "namespace": route["metadata"].get("namespace", "default"),
                    }
                ],
                "to": [{"group": "", "kind": "Service", "name": service["metadata"]["name"]}],
            },
        }
        docs.append(grant)
    elif kind == "ungrant":
        holders = [(ds, d) for ds in files.values() for d in ds if d.get("kind") == "ReferenceGrant"]
        if holders:
            held, grant = rng.choice(holders)
            held.remove(grant)


def _differential(root: Path, cache: Path, seed: int, steps: int, n: int, *, reach: str, values: tuple[str, ...] = ()) -> int:
    """The number of runs whose base was read back rather than linted. `reach`: the generator's
    tenants `isolated`, reaching their `neighbour`'s Service, or `shared`, reaching the Services of
    the tenants before them (the part one file reaches is then the whole repository). `values`:
    every edit is one of these kinds of `_value` (`VALUES`, `REACHING`)."""
    recalled = 0
    real = memo.recall

    def counted(*args: Any) -> frozenset[str] | None:
        nonlocal recalled
        found = real(*args)
        recalled += found is not None
        return found

    rng = random.Random(seed)
    files = _corpus(seed, n, isolated=reach == "isolated", shared=reach == "shared")
    _committed(root, files)
    os.chdir(root)
    done: list[str] = []
    for step in range(steps):
        done.extend(_value(files, rng, values) if values else _edit(files, rng, outside=True) for _ in range(rng.randint(1, 3)))
        _write(root, files)
        git(root, "add", "-A")
        mode = rng.choice([["--staged"], ["--staged"], ["--diff", "HEAD"]])
        # Every other step the text report and its summary, which counts the objects and policies
        # of every file read (a scoped run counts those outside its part from their shells,
        # policylint.k8s.roster), else the JSON report.
        run = _text if step % 2 else check
        cold = run(*mode, "--no-cache")
        if values and n >= components.MIN_OBJECTS:
            # A run without a cache searches the part a change reaches as the cached run does:
            # a part that left out what the change moves would be wrong in both alike. So the
            # value edits, which such a search would follow read by read, are held to the whole
            # repository analysed too, its findings restricted to the report scope.
            with pytest.MonkeyPatch.context() as patch:
                patch.setattr(components, "MIN_OBJECTS", sys.maxsize)
                assert run(*mode, "--no-cache") == cold, (seed, done)
        # Twice with the cache at times: the second run reads back what the first kept.
        for _ in range(rng.choice((1, 2))):
            with pytest.MonkeyPatch.context() as patch:
                patch.setattr(memo, "recall", counted)
                cached = run(*mode, "--cache-dir", str(cache))
            assert cached == cold, (seed, done)
        if rng.random() < 0.6:
            git(root, "commit", "-q", "--allow-empty", "-m", f"step {len(done)}")
    return recalled


def test_differential_fast(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert _differential(tmp_path / "repo", tmp_path / "cache", seed=0, steps=3, n=30, reach="neighbour") > 0


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(6))
def test_differential(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, seed: int) -> None:
    """Larger repositories (past the size where a scoped analysis starts), isolated tenants or
    tenants reaching into each other, longer sequences."""
    monkeypatch.chdir(tmp_path)
    reach = "isolated" if seed % 2 == 0 else "neighbour"
    assert _differential(tmp_path / "repo", tmp_path / "cache", seed=seed, steps=10, n=260, reach=reach) > 0


def test_differential_of_value_edits_fast(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Values changed where they stand (a path, a header, a policy's setting, a port, a listener's
    hostname), every name kept: the part each change reaches is analysed again, the rest read back,
    and the report is a run's without a cache."""
    monkeypatch.chdir(tmp_path)
    _differential(tmp_path / "repo", tmp_path / "cache", seed=1, steps=4, n=30, reach="shared", values=VALUES)


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(4))
def test_differential_of_value_edits(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, seed: int) -> None:
    """The same past the size where a scoped analysis starts, on tenants sharing Services across
    namespaces (every file reaches the whole repository, seeds 0 and 2: the changes that stay below
    one Gateway and those that reach several tenants' routes alike) and on tenants reaching their
    neighbour only."""
    monkeypatch.chdir(tmp_path)
    reach = "shared" if seed % 2 == 0 else "neighbour"
    assert _differential(tmp_path / "repo", tmp_path / "cache", seed=seed, steps=8, n=260, reach=reach, values=VALUES) > 0


def test_differential_of_reaching_edits_fast(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Names and references changed (`REACHING`: renames, a port or a rule a policy's sectionName
    names, grants, a policy's target and a route's parent moved to another Gateway), on tenants
    sharing Services: the report is a run's without a cache."""
    monkeypatch.chdir(tmp_path)
    _differential(tmp_path / "repo", tmp_path / "cache", seed=2, steps=3, n=100, reach="shared", values=REACHING)


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(4))
def test_differential_of_reaching_edits(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, seed: int) -> None:
    """The same past the size where a scoped analysis starts, the values of `VALUES` among them, on
    tenants sharing Services (seeds 0 and 2) and on tenants reaching their neighbour only: each
    kind of `REACHING` moves findings beyond the changed object's Gateway, where a part search
    that skipped what the change cannot reach would have to follow it."""
    monkeypatch.chdir(tmp_path)
    reach = "shared" if seed % 2 == 0 else "neighbour"
    kinds = VALUES + REACHING + REACHING  # the reaching kinds twice as often
    assert _differential(tmp_path / "repo", tmp_path / "cache", seed=10 + seed, steps=8, n=260, reach=reach, values=kinds) > 0


def test_differential_of_namespace_edits_fast(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A tenant's Namespace changed (`NAMESPACES`: an annotation, the label its Gateway's
    listeners select, renamed, deleted, added), with routes moved to other tenants' Gateways
    (`reparent`: what a label decides across namespaces), past the size where the part a change
    reaches is searched: the report is a run's analysing the whole repository, and a run's
    without a cache."""
    monkeypatch.chdir(tmp_path)
    kinds = (*NAMESPACES, *NAMESPACES, "reparent", "path")
    _differential(tmp_path / "repo", tmp_path / "cache", seed=3, steps=3, n=220, reach="neighbour", values=kinds)


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(4))
def test_differential_of_namespace_edits(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, seed: int) -> None:
    """The same, longer, on isolated tenants and tenants reaching their neighbour, with the value
    edits of `VALUES` among them."""
    monkeypatch.chdir(tmp_path)
    reach = "isolated" if seed % 2 == 0 else "neighbour"
    kinds = (*VALUES, *NAMESPACES, *NAMESPACES, "reparent")
    assert _differential(tmp_path / "repo", tmp_path / "cache", seed=20 + seed, steps=8, n=260, reach=reach, values=kinds) > 0


# -- Workspace -------------------------------------------------------------------------------------

POLICY_TYPO = """\
apiVersion: gateway.envoyproxy.io/v1alpha1
kind: BackendTrafficPolicy
metadata:
  name: shop-timeouts
  namespace: team-x
spec:
  targetRefs:
  - group: gateway.networking.k8s.io
    kind: HTTPRoute
    name: shopp
  timeout:
    http:
      requestTimeout: 10s
"""


@pytest.fixture
def tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "tree"
    root.mkdir()
    lay_out(root)
    monkeypatch.chdir(root)
    return root


def _snapshot(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_a_buffer_overrides_its_file_and_only_changed_files_are_answered(tree: Path, tmp_path: Path) -> None:
    on_disk = _snapshot(tree)
    workspace = Workspace(LintRequest(paths=["."], cache_dir=str(tmp_path / "cache")))
    assert workspace.result.findings == lint(LintRequest(paths=["."])).findings
    policies = "apps/team-x/policies.yaml"
    assert all(f.file != policies for f in workspace.result.findings)

    changes = workspace.update(str(tree / policies), POLICY_TYPO)
    assert list(changes.files) == [policies]
    assert [(f.rule, f.line, f.path) for f in changes.files[policies]] == [("PL201", 10, "spec.targetRefs[0].name")]

    again = workspace.update(str(tree / policies), POLICY_TYPO)
    assert dict(again.files) == {}  # nothing changed

    back = workspace.update(policies, None)  # dropped: the file on disk again
    assert dict(back.files) == {policies: ()}
    assert _snapshot(tree) == on_disk  # nothing written into the tree


def test_a_buffer_of_a_file_not_on_disk_is_linted(tree: Path, tmp_path: Path) -> None:
    workspace = Workspace(LintRequest(paths=["."], cache_dir=str(tmp_path / "cache")))
    new = "apps/team-x/new.yaml"
    changes = workspace.update(new, POLICY_TYPO.replace("shop-timeouts", "fresh"))
    assert [(f.rule, f.line) for f in changes.files[new]] == [("PL201", 10)]
    assert not (tree / new).exists()
    assert dict(workspace.update(new, None).files) == {new: ()}


def test_workspace_differential_fast(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _workspace_differential(tmp_path, monkeypatch, seed=7, steps=3, n=30)


def test_workspace_differential_of_parts_fast(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Small repositories are analysed whole (components.MIN_OBJECTS): not here, so that every
    update analyses the part the edited file reaches and merges it into the run before."""
    monkeypatch.setattr(components, "MIN_OBJECTS", 0)
    parts = _workspace_differential(tmp_path, monkeypatch, seed=2, steps=8, n=60, isolated=True)
    assert parts >= 3


def test_workspace_differential_of_objects_changed_in_place_fast(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A sequence whose edits change objects where they stand (`field`), with updates that reuse
    what the per-object rules found on the objects whose inputs did not change
    (policylint.incremental.rulecache): it fails when an object's key leaves out its file's content."""
    monkeypatch.setattr(components, "MIN_OBJECTS", 0)
    reuses = _counting_reuse(monkeypatch)
    _workspace_differential(tmp_path, monkeypatch, seed=3, steps=8, n=60, isolated=True)
    assert sum(r.reused for r in reuses) > 0


def _counting_reuse(monkeypatch: pytest.MonkeyPatch) -> list[rulecache.Reuse]:
    """Every reuse of the per-object rules' results the runs make from now on."""
    reuses: list[rulecache.Reuse] = []
    real = rulecache.start

    def counted(*args: Any, **kwargs: Any) -> rulecache.Reuse | None:
        found = real(*args, **kwargs)
        if found is not None:
            reuses.append(found)
        return found

    monkeypatch.setattr(rulecache, "start", counted)
    return reuses


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(3))
def test_workspace_differential(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, seed: int) -> None:
    _workspace_differential(tmp_path, monkeypatch, seed=seed, steps=8, n=120)


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(4))
def test_workspace_differential_of_parts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, seed: int) -> None:
    """Past the size where a part is analysed, tenants isolated or reaching into each other (then
    the part is most of the repository, and everything is analysed)."""
    isolated = seed % 2 == 0
    parts = _workspace_differential(tmp_path, monkeypatch, seed=seed, steps=10, n=260, isolated=isolated)
    assert parts > 0 or not isolated


def _cold(texts: dict[str, str], disk: Path, monkeypatch: pytest.MonkeyPatch) -> pipeline.LintResult:
    """A run without cache over `texts` written to `disk`."""
    for stale in disk.glob("*.yaml"):
        stale.unlink()
    for name, text in texts.items():
        (disk / name).write_text(text, encoding="utf-8")
    here = os.getcwd()
    monkeypatch.chdir(disk)
    try:
        return lint(LintRequest(paths=["."]))
    finally:
        monkeypatch.chdir(here)


@pytest.mark.slow
def test_edits_across_files_are_answered_from_parts_over_the_objects_kept_in_memory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An object moved to another file, renamed, moved to another namespace, a file's only object
    deleted, a ReferenceGrant added that changes a finding of another file: each update analyses
    a part, the objects of the files it did not read again are the ones the update before built
    (no shell decoded for them), and the findings are a cold run's over the same texts."""
    from policylint.incremental import shells

    monkeypatch.setattr(components, "MIN_OBJECTS", 0)
    files = _corpus(5, 240, isolated=True)
    texts = {name: yaml.safe_dump_all(docs, sort_keys=False) for name, docs in files.items()}
    workspace, disk = _editor_workspace(tmp_path, monkeypatch, texts)
    every = [(name, doc) for name, docs in files.items() for doc in docs]
    route_file, route = next((n, d) for n, d in every if d["kind"] == "HTTPRoute")
    service = next(d for _, d in every if d["kind"] == "Service" and d["metadata"]["namespace"] != route["metadata"]["namespace"])
    lonely = next(n for n, docs in files.items() if len(docs) == 1 and n != route_file)
    names = sorted(files)
    decoded: list[object] = []
    updates: list[str] = []
    real = shells._decoded
    monkeypatch.setattr(shells, "_decoded", lambda *args: decoded.append(args[1]) or real(*args))

    def edit(name: str, *, part: bool = True) -> pipeline.LintResult:
        texts[name] = yaml.safe_dump_all(files[name], sort_keys=False) if files.get(name) else ""
        before = workspace.result
        updates.append(name)
        decoded.clear()
        result = workspace.update(name, texts[name]).result
        assert workspace.last_was_part is part, name
        cold = _cold(texts, disk, monkeypatch)
        assert _rows(result.findings) == _rows(cold.findings), name
        assert _rows(result.suppressed) == _rows(cold.suppressed), name
        if part and before.members is not None and len(updates) >= 3:
            # Every file was taken from memory, the same objects, no shell read, but the edited
            # one (its new bytes have no shell yet) and the one edited the update before (loaded
            # then, its shell read now). (The first part run loads every file and keeps their
            # shells, the second builds the objects from them.)
            assert len(decoded) <= 2, decoded
            kept = {id(o) for o in before.index.objects}
            unchanged = [o for o in result.index.objects if o.doc.file not in (name, updates[-2])]
            assert unchanged and all(id(o) in kept for o in unchanged)
        return result

    # A backend across namespaces, not allowed yet: a finding on the route's file.
    rule = route["spec"]["rules"][0]
    rule["backendRefs"] = [{"name": service["metadata"]["name"], "namespace": service["metadata"]["namespace"], "port": 8080}]
    edit(route_file)
    edit(route_file)
    denied = [f for f in edit(route_file).findings if f.file == route_file and f.rule.startswith("PL4")]
    assert denied
    # The ReferenceGrant allowing it, added to another file: the route's finding goes.
    # Not a file holding the GatewayClass, which reaches everything: analysed whole.
    grant_file = next(n for n in names if n not in (route_file, lonely) and all(d["kind"] != "GatewayClass" for d in files[n]))
    files[grant_file].append(
        {
            "apiVersion": "gateway.networking.k8s.io/v1beta1",
            "kind": "ReferenceGrant",
            "metadata": {"name": "allow-route", "namespace": service["metadata"]["namespace"]},
            "spec": {
                "from": [
                    {"group": "gateway.networking.k8s.io", "kind": "HTTPRoute", "namespace": route["metadata"]["namespace"]}
                ],
                "to": [{"group": "", "kind": "Service", "name": service["metadata"]["name"]}],
            },
        }
    )
    allowed = edit(grant_file)
    assert not [f for f in allowed.findings if f.file == route_file and f.message == denied[0].message]
    # The route renamed, then moved to another namespace, then to another file.
    route["metadata"]["name"] += "-renamed"
    edit(route_file)
    route["metadata"]["namespace"] = service["metadata"]["namespace"]
    edit(route_file)
    files[route_file].remove(route)
    files[grant_file].append(route)
    edit(route_file)
    edit(grant_file)
    # A file's only object deleted: the file is empty.
    files[lonely].clear()
    edit(lonely)


WIDGET_CRD = """\
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
spec:
  group: example.com
  scope: {scope}
  names: {{kind: Widget, plural: widgets, singular: widget, listKind: WidgetList}}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema: {{type: object, x-kubernetes-preserve-unknown-fields: true}}
"""


def test_objects_kept_in_memory_are_built_again_when_a_crd_changes_their_kind_s_scope(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An object's namespace is its kind's scope's as much as its file's: the objects of a file
    kept between updates are not taken once a CRD made their kind cluster-scoped."""
    monkeypatch.setattr(components, "MIN_OBJECTS", 0)
    files = _corpus(2, 40, isolated=True)
    texts = {name: yaml.safe_dump_all(docs, sort_keys=False) for name, docs in files.items()}
    texts["crd.yaml"] = WIDGET_CRD.format(scope="Namespaced")
    texts["widgets.yaml"] = "apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: w\n"
    workspace, disk = _editor_workspace(tmp_path, monkeypatch, texts)
    edited = sorted(files)[-1]

    def keys(result: pipeline.LintResult) -> list[str]:
        return sorted(str(o.key) for o in result.index.objects)

    for n, (name, text) in enumerate(
        [
            (edited, "# 1\n"),  # a whole run
            (edited, "# 2\n"),  # a part: the objects the whole run loaded, kept in memory
            (edited, "# 3\n"),
            ("crd.yaml", WIDGET_CRD.format(scope="Cluster")),
            (edited, "# 4\n"),
        ]
    ):
        texts[name] = text if name == "crd.yaml" else texts[name] + text
        result = workspace.update(name, texts[name]).result
        cold = _cold(texts, disk, monkeypatch)
        assert keys(result) == keys(cold), n
        assert _rows(result.findings) == _rows(cold.findings), n
    widget = next(o for o in workspace.result.index.objects if o.kind == "Widget")
    assert widget.namespace is None


def test_the_field_types_of_objects_kept_in_memory_are_not_checked_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Which fields of an object have the wrong type (PL010, `ProjectIndex.malformed`) is a
    function of the object: an update checks the objects of the files it built anew, not every
    object of its part again (policylint.incremental.resident), and finds what a cold run finds."""
    from policylint.k8s import index as index_module

    monkeypatch.setattr(components, "MIN_OBJECTS", 0)
    files = _corpus(2, 200, isolated=True)
    texts = {name: yaml.safe_dump_all(docs, sort_keys=False) for name, docs in files.items()}
    # A tenant's file (the first holds the GatewayClass, which reaches everything), with a route
    # whose port is a string: PL010, on every update.
    edited, namespace = next(
        (name, d["metadata"]["namespace"])
        for name in sorted(files, reverse=True)
        for d in files[name]
        if "namespace" in d["metadata"]
    )
    texts[edited] += "---\n" + yaml.safe_dump(
        {
            "apiVersion": "gateway.networking.k8s.io/v1",
            "kind": "HTTPRoute",
            "metadata": {"name": "typed", "namespace": namespace},
            "spec": {"rules": [{"backendRefs": [{"name": "svc", "port": "eighty"}]}]},
        }
    )
    workspace, disk = _editor_workspace(tmp_path, monkeypatch, texts)
    checked: list[str] = []
    real = index_module.check_object

    def counted(group: str, kind: str, data: Any, *rest: Any) -> Any:
        checked.append(kind)
        return real(group, kind, data, *rest)

    monkeypatch.setattr(index_module, "check_object", counted)
    for n in range(4):
        checked.clear()
        texts[edited] += f"# {n}\n"
        result = workspace.update(edited, texts[edited]).result
        update = len(checked)
        cold = _cold(texts, disk, monkeypatch)
        assert _rows(result.findings) == _rows(cold.findings), n
        assert "PL010" in {f.rule for f in result.findings}
    # The last update built anew the edited file's objects (and, at most, those of the file the
    # update before edited, the same one): those alone are checked, of a part of many more.
    assert workspace.last_was_part and result.members is not None
    own = len(list(yaml.safe_load_all(texts[edited])))
    assert 0 < update <= own < len(result.members)


# Texts an editor holds while the user types: half a document, YAML that does not parse.
_HALF_TYPED = ("apiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\nmetadata:\n  name: [", "spec:\n  - :\n\t")


def _workspace_differential(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, *, seed: int, steps: int, n: int, isolated: bool = False
) -> int:
    """Random buffers over a generated repository: the workspace's findings (active and
    suppressed) are a cold run's over the same texts written to disk (under the same names),
    after every update. The number of updates that analysed a part only."""
    rng = random.Random(seed)
    files = _corpus(seed, n, isolated=isolated)
    texts = {name: yaml.safe_dump_all(docs, sort_keys=False) for name, docs in files.items()}
    workspace, disk = _editor_workspace(tmp_path, monkeypatch, texts)
    parts = 0
    for _ in range(steps):
        before = copy.deepcopy(files)
        _edit(files, rng, editor=True)
        changed = {
            name: yaml.safe_dump_all(files[name], sort_keys=False) if name in files else ""
            for name in sorted(set(before) | set(files))
            if before.get(name) != files.get(name)
        }
        if changed and rng.random() < 0.3:  # typed half-way first, then finished
            name = rng.choice(sorted(changed))
            changed = {name: rng.choice(_HALF_TYPED), **changed}
        for name, text in changed.items():
            texts[name] = text  # deleted in the editor: an empty buffer, an empty file
            workspace.update(name, text)
            parts += workspace.last_was_part
            for stale in disk.glob("*.yaml"):
                stale.unlink()
            for written, content in texts.items():
                (disk / written).write_text(content, encoding="utf-8")
            monkeypatch.chdir(disk)
            cold = lint(LintRequest(paths=["."]))
            monkeypatch.chdir(tmp_path / "editor")
            assert _rows(workspace.result.findings) == _rows(cold.findings), (seed, name)
            assert _rows(workspace.result.suppressed) == _rows(cold.suppressed), (seed, name)
    return parts


def _rows(findings: list[Any]) -> str:
    return json.dumps([dataclasses.astuple(f) for f in findings], default=str)


def test_the_base_is_analysed_in_the_part_the_findings_reported_can_depend_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Tenants that cannot see each other: the base's analysis covers the changed tenant, not the
    repository, and finds for it what a whole run finds."""
    # Small repositories are analysed whole (components.MIN_OBJECTS): not this one.
    monkeypatch.setattr(components, "MIN_OBJECTS", 0)
    root = tmp_path / "repo"
    files = _corpus(11, 130, isolated=True)
    _committed(root, files)
    monkeypatch.chdir(root)
    policy = next(d for d in _policies(files) if d["metadata"]["namespace"] == "tenant-00001")
    policy["spec"]["targetRefs"][0]["name"] += "-typo"  # a finding the change introduces
    _write(root, files)
    git(root, "add", "-A")
    cold = check("--staged", "--no-cache")
    assert any(f["introduced"] for f in json.loads(cold[1])["findings"])
    analysed: list[tuple[bool, int, int]] = []  # (the base's run, objects analysed, objects read)
    real = pipeline._analysed

    def recorded(
        request: LintRequest, sources: Any, loaded: Any, part: Any = None, resident: Any = None, exact: bool = False
    ) -> Any:
        project, members = real(request, sources, loaded, part, resident, exact)
        analysed.append((request.sources is not None, len(project.index.objects), len(loaded.index.objects)))
        return project, members

    monkeypatch.setattr(pipeline, "_analysed", recorded)
    assert check("--staged", "--cache-dir", str(tmp_path / "cache")) == cold
    base = [(n, total) for is_base, n, total in analysed if is_base]
    assert len(base) == 1 and base[0][1] == 130 and base[0][0] < 65


MIXED = """\
apiVersion: gateway.envoyproxy.io/v1alpha1
kind: BackendTrafficPolicy
metadata:
  name: timeouts
  namespace: team-a
spec:
  targetRefs:
  - group: gateway.networking.k8s.io
    kind: HTTPRoute
    # policylint: disable-next-line=PL201 -- the route lands next week
    name: ghost
  timeout:
    http:
      requestTimeout: 10s
---
apiVersion: v1
kind: Service
metadata:
  name: other
  namespace: team-b
spec:
  ports:
  - port: 80
"""
GHOST = """\
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata:
  name: ghost
  namespace: team-a
spec:
  rules:
  - backendRefs:
    - name: ghost
      port: 80
"""


def test_a_comment_in_a_file_the_part_covers_in_half_is_judged_on_all_its_findings(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The edit makes the suppressed finding go: the comment in the other file is now unused
    (PL901), though that file's other object lies outside the part the edit reaches."""
    monkeypatch.setattr(components, "MIN_OBJECTS", 0)
    monkeypatch.setattr(components, "MAX_SHARE", 1.0)
    root = tmp_path / "tree"
    root.mkdir()
    (root / "mixed.yaml").write_text(MIXED)
    (root / "route.yaml").write_text(GHOST.replace("name: ghost\n  namespace", "name: later\n  namespace"))
    monkeypatch.chdir(root)
    workspace = Workspace(LintRequest(paths=["."], cache_dir=str(tmp_path / "cache")))
    assert not [f for f in workspace.result.findings if f.file == "mixed.yaml"]
    workspace.update("route.yaml", GHOST)
    (root / "route.yaml").write_text(GHOST)
    cold = lint(LintRequest(paths=["."]))
    assert ("mixed.yaml", "PL901", 10) in [(f.file, f.rule, f.line) for f in cold.findings]
    assert _rows(workspace.result.findings) == _rows(cold.findings)


def test_a_file_changed_on_disk_unannounced_is_not_answered_from_the_run_before(
    tree: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An edit of one buffer after another file changed on disk (a checkout, a formatter) that
    the editor did not report: that file's findings are found again."""
    monkeypatch.setattr(components, "MIN_OBJECTS", 0)
    monkeypatch.setattr(components, "MAX_SHARE", 1.0)
    elsewhere = tree / "elsewhere.yaml"  # another tenant's, out of the edit's reach
    elsewhere.write_text(APP.split("---\n")[1].replace("team-x", "team-z"))  # a Service
    workspace = Workspace(LintRequest(paths=["."], cache_dir=str(tmp_path / "cache")))
    assert all(f.file != "elsewhere.yaml" for f in workspace.result.findings)
    elsewhere.write_text(POLICY_TYPO.replace("team-x", "team-z"))
    changes = workspace.update("apps/team-x/app.yaml", APP + "\n")
    assert [f.rule for f in changes.files["elsewhere.yaml"]] == ["PL201"]
    assert _rows(workspace.result.findings) == _rows(lint(LintRequest(paths=["."])).findings)


def test_the_next_commits_base_is_read_from_the_part_the_staged_side_analysed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, runs: list[LintRequest]
) -> None:
    """Tenants that cannot see each other: the staged side analyses the changed tenant only, and
    keeps what it found there; after the commit, the next run's base (that commit) is read back
    from it instead of being analysed."""
    monkeypatch.setattr(components, "MIN_OBJECTS", 0)
    root = tmp_path / "repo"
    files = _corpus(11, 130, isolated=True)
    _committed(root, files)
    monkeypatch.chdir(root)
    cache = str(tmp_path / "cache")
    policy = next(d for d in _policies(files) if d["metadata"]["namespace"] == "tenant-00001")
    policy["spec"]["targetRefs"][0]["name"] += "-typo"
    _write(root, files)
    git(root, "add", "-A")
    check("--staged", "--cache-dir", cache)
    git(root, "commit", "-q", "-m", "typo")
    policy["spec"]["targetRefs"][0]["name"] += "-again"  # still not found: pre-existing
    _write(root, files)
    git(root, "add", "-A")
    cold = check("--staged", "--no-cache")
    assert json.loads(cold[1])["findings"]
    del runs[:]
    assert check("--staged", "--cache-dir", cache) == cold
    assert [r.sources for r in runs] == [None]  # only the staged side analysed
