"""Field schemas of the Gateway API and policy CRDs, for the schema rules (PL702).

`crd_schemas.zip` holds, per group, kind, served version, release and channel, the parts of each
CRD's OpenAPI schema that validation reads (types, properties, items, required fields,
enumerations, patterns, bounds, and the Kubernetes extensions that keep unknown fields or allow
an int-or-string): descriptions are dropped. It is generated from the vendored upstream CRDs
(tests/data/crds/, Apache License 2.0, provenance in tests/data/crds/SOURCES.md) by

    python -m policylint.k8s.schemas tests/data/crds

and tests/profiles/test_schemas.py checks that the committed file is what the generator writes (the
schemas' structural checks written out as code are generated from it in turn: `make schemachecks`,
policylint.k8s.schemacodegen). Gateway
API's CRDs come in two channels (`standard/`, `experimental/`) and several releases
(`gateway-api/<release>/<channel>/`); a vendor's CRDs have one channel, which counts as both, and
come in the releases of its supported window (`<project>/<release>/`, `vendor_releases`). The archive holds an index (`index.json`), naming each
distinct schema by a hash of its content, and one table of the schemas' nodes (`nodes.json`), each
distinct map and list once: a run reads the index, and the table once it looks a schema up.
"""

from __future__ import annotations

import functools
import json
import os
import sys
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import zipfile

DATA = Path(__file__).with_name("crd_schemas.zip")
INDEX = "index.json"
CHANNELS = ("standard", "experimental")
# The channel `kubectl apply -f .../standard-install.yaml` installs: the one the schema rules read
# for an object when the run knows no channel and the standard channel serves its version.
DEFAULT_CHANNEL = "standard"
# The Gateway API releases whose CRDs are bundled (tests/data/crds/gateway-api/<release>/), oldest
# first: the newest patch of every minor release from v1.0 (a patch release changes no field, only
# fixes a CEL rule or a description, and is what an upgrade within the minor lands on).
# tests/profiles/test_channels.py checks this list against the data. The newest stands in for an unknown one.
GATEWAY_API_VERSIONS = ("v1.0.0", "v1.1.1", "v1.2.1", "v1.3.0", "v1.4.1", "v1.5.1", "v1.6.1")
DEFAULT_GATEWAY_API_VERSION = GATEWAY_API_VERSIONS[-1]
# The upstream project directory of Gateway API's own CRDs (the first part of an entry's source).
_GATEWAY_API = "gateway-api"
# The schemas' value validations that combine other schemas (structural schemas allow them beside
# the structure, without types of their own), and the key `compact` sets on a node that has any.
COMBINATORS = ("allOf", "anyOf", "oneOf", "not")
COMBINED = "x-policylint-combined"

# The schema keywords validation reads; everything else (descriptions, defaults, titles) goes.
_KEEP = (
    "type",
    "default",
    "required",
    "enum",
    "pattern",
    "format",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "minLength",
    "maxLength",
    "minItems",
    "maxItems",
    "minProperties",
    "maxProperties",
    "nullable",
    "x-kubernetes-preserve-unknown-fields",
    "x-kubernetes-int-or-string",
    "x-kubernetes-embedded-resource",
    "x-kubernetes-list-type",
    "x-kubernetes-list-map-keys",
)


@functools.cache
def _archive() -> zipfile.ZipFile:
    # Imported here: every command reads this module's release names (policylint.settings), and
    # zipfile with what it imports (shutil, bz2, lzma, struct) is a few milliseconds of a run that
    # reads no schema (the hook answering a comment, or run again).
    import zipfile

    return zipfile.ZipFile(DATA)


# A process forked while the archive is open shares its file, and with it one file offset: a read
# between the other process's seek and its read gets the wrong bytes ("Bad CRC-32", a rule's
# PL000). A forked child (the rule processes of `--jobs`, policylint.rules.workers) opens its own.
if hasattr(os, "register_at_fork"):  # not on Windows, which forks no child
    os.register_at_fork(after_in_child=_archive.cache_clear)


@functools.cache
def _entries() -> tuple[Mapping[str, Any], ...]:
    """The index of the data: one entry per (group, kind, version, release) and distinct schema,
    naming the schema by the hash of its content; the schemas themselves load when read."""
    raw = json.loads(_archive().read(INDEX).decode("utf-8"))
    return tuple(raw["kinds"])


@functools.cache
def _schema(digest: str) -> Mapping[str, Any]:
    """One bundled schema: a node of the archive's table (`_table`), so that a schema shared by
    several releases and channels is one object, which the admission memo tables (keyed by node
    identity) then share too, and so is every node two schemas hold alike."""
    built, roots = _table()
    found: Mapping[str, Any] = built[roots[digest]]
    return found


@functools.cache
def _table() -> tuple[list[Any], Mapping[str, int]]:
    """Every node of the bundled schemas, built once from the archive's table (`NODES`): each
    distinct map and list is stored there once, its children written as references to nodes
    before it, and built here in that order, so that a node names its children's objects.

    Releases and channels repeat most of a kind's schema: with their nodes shared, the admission
    memo tables (keyed by node identity, policylint.k8s.admission) answer for a subtree once
    whichever release asks. When the cluster is not known, an object one schema refuses is
    checked against every other plausible one; without sharing, each would walk it again (a
    megabyte of list items, five times over). The table is a seventh of the schemas written out
    one by one, and building it needs no key per node: a run that asks for the other plausible
    schemas read and hash-consed each of them, node by node, for a fifth of its validation."""
    blob = _archive().read(NODES)
    raw = json.loads(blob.decode("utf-8"))
    built: list[Any] = []
    for node in raw["nodes"]:
        # Every map or list inside a stored node is a reference (`_REF`); a scalar is itself.
        if type(node) is dict:
            built.append({k: built[v[_REF]] if type(v) is dict else v for k, v in node.items()})
        else:
            built.append([built[v[_REF]] if type(v) is dict else v for v in node])
    BUILT.append((built, blob))
    return built, raw["roots"]


# The table once built, with the archive member it was built from: the schemas' checks written
# out as code (policylint.k8s.schemacode) are bound to it, and only where it is the one they were
# generated from.
BUILT: list[tuple[list[Any], bytes]] = []
_DIGEST: list[tuple[bytes, str]] = []  # the last table's member and its sha256, once worked out


def built_digest() -> str:
    """The sha256 of the archive member the last table was built from (`BUILT`): what the code
    and data written ahead of the run are bound by (policylint.k8s.schemacode,
    policylint.k8s.cel.keycode, policylint.k8s.differences), worked out once per table for all three."""
    blob = BUILT[-1][1]
    if not _DIGEST or _DIGEST[0][0] is not blob:
        import hashlib

        _DIGEST[:] = [(blob, hashlib.sha256(blob).hexdigest())]
    return _DIGEST[0][1]


# The archive's table of nodes, and the key of a reference to a node there (`_table`).
NODES = "nodes.json"
_REF = "@"


def _nodes_table(stored: Mapping[str, Any]) -> dict[str, Any]:
    """The table `_table` reads: every distinct map and list of the `stored` schemas (digest ->
    schema) once, children before their parents, each child map or list written as `{"@": its
    index}`; and the index of each schema's root. Two nodes are one where their content is, with
    the scalars' types (JSON's 1 and true, 1 and 1.0 are different values in a schema)."""
    index: dict[tuple[Any, ...], int] = {}
    nodes: list[Any] = []

    def add(node: Any) -> Any:
        if isinstance(node, dict):
            written: Any = {k: add(v) for k, v in node.items()}
            key: tuple[Any, ...] = ("{", *((k, *_part(v)) for k, v in written.items()))
        elif isinstance(node, list):
            written = [add(v) for v in node]
            key = ("[", *(_part(v) for v in written))
        else:
            return node
        at = index.get(key)
        if at is None:
            at = index[key] = len(nodes)
            nodes.append(written)
        return {_REF: at}

    roots = {digest: add(schema)[_REF] for digest, schema in stored.items()}
    return {"nodes": nodes, "roots": roots}


def _part(value: Any) -> tuple[Any, ...]:
    # A child map or list is a reference to the one node of its content; a scalar is itself, with
    # its type.
    if isinstance(value, dict):
        return ("@", value[_REF])
    return (type(value).__name__, value)


def _release(entry: Mapping[str, Any]) -> tuple[str, str]:
    """(upstream project, release) of an entry: `("gateway-api", "v1.6.1")`."""
    project, release = str(entry["source"]).split("/")[:2]
    return project, release


def _in_release(entry: Mapping[str, Any], gateway_api_version: str, vendors: Mapping[str, str] | None = None) -> bool:
    """Gateway API's own entry only for the release asked for; a vendor's only for the release
    `vendors` names for its project, else for its newest bundled one."""
    project, release = _release(entry)
    if project == _GATEWAY_API:
        return release == gateway_api_version
    chosen = (vendors or {}).get(project)
    return release == (chosen if chosen is not None else vendor_releases()[project][-1])


@functools.cache
def vendor_releases() -> Mapping[str, tuple[str, ...]]:
    """The vendors' bundled releases: upstream project (`envoy-gateway`) -> its releases, oldest
    first (tests/data/crds/<project>/<release>/; SOURCES.md says which and why)."""
    found: dict[str, set[str]] = {}
    for entry in _entries():
        project, release = _release(entry)
        if project != _GATEWAY_API:
            found.setdefault(project, set()).add(release)
    return {project: tuple(sorted(releases, key=release_key)) for project, releases in sorted(found.items())}


@functools.cache
def vendor_projects() -> Mapping[tuple[str, str], str]:
    """(group, kind) of every bundled vendor kind -> its upstream project (`envoy-gateway`)."""
    return {(e["group"], e["kind"]): _release(e)[0] for e in _entries() if _release(e)[0] != _GATEWAY_API}


def releases_of_crd(crd: Mapping[str, Any]) -> tuple[str, tuple[str, ...]] | None:
    """(the bundled vendor project of a CustomResourceDefinition's kind, the bundled releases of it
    whose schemas of every version the CRD serves are the CRD's own, oldest first); None when the
    kind is no bundled vendor's."""
    served = crd_served(crd)
    project = vendor_projects().get(served[:2]) if served is not None else None
    if served is None or project is None:
        return None
    digests = {key: _digest(schema) for key, schema in crd_schemas(crd).items()}
    matching = []
    for release in vendor_releases()[project]:
        entries = {
            (e["group"], e["kind"], e["version"]): e["schema"]
            for e in _entries()
            if _release(e) == (project, release) and (e["group"], e["kind"]) == served[:2]
        }
        if digests and entries == digests:
            matching.append(release)
    return project, tuple(matching)


def newest_release_dirs(root: Path) -> frozenset[str]:
    """`<project>/<release>` of the newest release of every project vendored under `root` (the
    generators' and the profile tests' input besides the schema rules': older releases are there
    for the schema rules only)."""
    newest: dict[str, str] = {}
    for project in sorted(p for p in root.iterdir() if p.is_dir()):
        releases = [r.name for r in project.iterdir() if r.is_dir()]
        if releases:
            newest[project.name] = max(releases, key=release_key)
    return frozenset(f"{project}/{release}" for project, release in newest.items())


def bundled_entries(
    gateway_api_version: str | None = DEFAULT_GATEWAY_API_VERSION,
) -> list[dict[str, Any]]:
    """The entries of the data with their schemas read (each: group, kind, version, channels,
    source, schema), for one Gateway API release and the vendors' newest (None: every release
    of every project)."""
    return [
        {**e, "schema": _schema(e["schema"])}
        for e in _entries()
        if gateway_api_version is None or _in_release(e, gateway_api_version)
    ]


class BundledSchemas(Mapping[tuple[str, str, str], tuple[Mapping[str, Any], str]]):
    """(group, kind, version) -> (schema, the release it comes from): a schema is read from the
    data only when looked up, so that a run reads the schemas of the kinds and releases it
    checks and no others."""

    def __init__(self, keys: Mapping[tuple[str, str, str], tuple[str, str]]) -> None:
        self._keys = keys

    def __getitem__(self, key: tuple[str, str, str]) -> tuple[Mapping[str, Any], str]:
        digest, source = self._keys[key]
        return _schema(digest), source

    def __contains__(self, key: object) -> bool:
        return key in self._keys

    def __iter__(self) -> Iterator[tuple[str, str, str]]:
        return iter(self._keys)

    def __len__(self) -> int:
        return len(self._keys)


@functools.cache
def schemas(
    channel: str, gateway_api_version: str = DEFAULT_GATEWAY_API_VERSION, vendors: tuple[tuple[str, str], ...] = ()
) -> BundledSchemas:
    """(group, kind, version) -> (the schema of the object, its `openAPIV3Schema` compacted; the
    upstream release it comes from, `envoy-gateway v1.9.0`), for the kinds the `channel` of
    Gateway API `gateway_api_version` serves and the vendor CRDs' (one channel, counted as both)
    of the release `vendors` names for their project ((project, release) pairs), else of its
    newest bundled one."""
    chosen = dict(vendors)
    return BundledSchemas(
        {
            (e["group"], e["kind"], e["version"]): (e["schema"], " ".join(_release(e)))
            for e in _entries()
            if channel in e["channels"] and _in_release(e, gateway_api_version, chosen)
        }
    )


@functools.cache
def deprecated_versions(
    channel: str, gateway_api_version: str = DEFAULT_GATEWAY_API_VERSION, vendors: tuple[tuple[str, str], ...] = ()
) -> Mapping[tuple[str, str, str], tuple[str, str]]:
    """(group, kind, version) -> (the warning the API server sends on every request that uses
    it, the upstream release): the versions a bundled CRD serves and marks `deprecated`."""
    chosen = dict(vendors)
    return {
        (e["group"], e["kind"], e["version"]): (e["deprecated"], " ".join(_release(e)))
        for e in _entries()
        if "deprecated" in e and channel in e["channels"] and _in_release(e, gateway_api_version, chosen)
    }


def version_deprecation(group: str, kind: str, version: Mapping[str, Any]) -> str | None:
    """The warning the API server sends for a CRD version marked `deprecated: true`: its
    `deprecationWarning`, else apiextensions-apiserver's default ("<group>/<version> <Kind> is
    deprecated"); None for a version not deprecated."""
    if version.get("deprecated") is not True:
        return None
    warning = version.get("deprecationWarning")
    return warning if isinstance(warning, str) and warning else f"{group}/{version.get('name')} {kind} is deprecated"


def crd_deprecated(crd: Mapping[str, Any]) -> dict[tuple[str, str, str], str]:
    """The deprecated versions a CustomResourceDefinition serves, and their warnings ({} when it
    cannot be read)."""
    parts = _crd_parts(crd)
    if parts is None:
        return {}
    group, kind, versions = parts
    out = {}
    for version in versions:
        if isinstance(version, dict) and isinstance(version.get("name"), str) and version.get("served") is not False:
            warning = version_deprecation(group, kind, version)
            if warning is not None:
                out[(group, kind, version["name"])] = warning
    return out


@functools.cache
def gateway_api_served(
    gateway_api_version: str = DEFAULT_GATEWAY_API_VERSION,
) -> Mapping[tuple[str, str], Mapping[str, tuple[str, ...]]]:
    """Gateway API's own kinds in a release: (group, kind) -> channel -> the versions its CRD
    serves there, sorted (none: the channel has no such CRD). Versions a CRD lists with
    `served: false` are not served (the generator keeps served versions only)."""
    out: dict[tuple[str, str], dict[str, list[str]]] = {}
    for e in _entries():
        project, release = _release(e)
        if project != _GATEWAY_API or release != gateway_api_version:
            continue
        by_channel = out.setdefault((e["group"], e["kind"]), {c: [] for c in CHANNELS})
        for channel in e["channels"]:
            if e["version"] not in by_channel[channel]:
                by_channel[channel].append(e["version"])
    return {gk: {c: tuple(v) for c, v in by_channel.items()} for gk, by_channel in out.items()}


@functools.cache
def vendor_served() -> Mapping[tuple[str, str], Mapping[str, tuple[str, ...]]]:
    """A vendor's bundled kinds: (group, kind) -> bundled release of its project -> the versions
    its CRD serves there, sorted (a release with no CRD for the kind is absent). Versions a CRD
    lists with `served: false` are not served (the generator keeps served versions only)."""
    out: dict[tuple[str, str], dict[str, list[str]]] = {}
    for e in _entries():
        project, release = _release(e)
        if project == _GATEWAY_API:
            continue
        versions = out.setdefault((e["group"], e["kind"]), {}).setdefault(release, [])
        if e["version"] not in versions:
            versions.append(e["version"])
    return {gk: {r: tuple(sorted(v)) for r, v in by_release.items()} for gk, by_release in out.items()}


@functools.cache
def gateway_api_groups(gateway_api_version: str = DEFAULT_GATEWAY_API_VERSION) -> frozenset[str]:
    """The API groups whose kinds Gateway API defines (`gateway.networking.k8s.io`, `...x-k8s.io`)."""
    return frozenset(group for group, _ in gateway_api_served(gateway_api_version))


def bundled_gateway_api_versions() -> tuple[str, ...]:
    """The Gateway API releases the data holds, as the generator found them (sorted)."""
    found = {release for project, release in map(_release, _entries()) if project == _GATEWAY_API}
    return tuple(sorted(found, key=release_key))


def release_key(release: str) -> tuple[int, ...]:
    """A release as numbers, to sort by (`v1.10.0` after `v1.9.0`, `version-2.20` after
    `version-2.18`, `1.30.3`): the dot-separated parts after any prefix of letters and dashes;
    what is not a number counts 0."""
    return tuple(int(part) if part.isdigit() else 0 for part in release.lstrip("abcdefghijklmnopqrstuvwxyz-").split("."))


# The compacted schemas of the CRDs read so far, by content: a CRD read again as another object (a
# `--crd` file every run reads afresh, in a process that runs many: the language server, a test
# suite) is not compacted again, by either of a run's two readers (the admission catalogue, the
# cluster's vendor releases). The maps are shared between runs as the bundled schemas are: read,
# never changed.
_COMPACTED: dict[bytes, dict[tuple[str, str, str], Mapping[str, Any]]] = {}


def crd_schemas(crd: Mapping[str, Any]) -> dict[tuple[str, str, str], Mapping[str, Any]]:
    """The schemas of a CustomResourceDefinition's served versions, compacted; {} when it has none
    that can be read (a malformed CRD is other rules' finding)."""
    from policylint.identity import kept_by_content

    kept: dict[tuple[str, str, str], Mapping[str, Any]] = kept_by_content(_COMPACTED, crd, _crd_schemas)
    return dict(kept)  # each caller's own map of the shared schemas


def _crd_schemas(crd: Mapping[str, Any]) -> dict[tuple[str, str, str], Mapping[str, Any]]:
    parts = _crd_parts(crd)
    if parts is None:
        return {}
    group, kind, versions = parts
    out: dict[tuple[str, str, str], Mapping[str, Any]] = {}
    for version in versions:
        if not isinstance(version, dict) or not isinstance(version.get("name"), str) or version.get("served") is False:
            continue
        schema = version.get("schema")
        root = schema.get("openAPIV3Schema") if isinstance(schema, dict) else None
        if isinstance(root, dict):
            out[(group, kind, version["name"])] = compact(root)
    return out


def _crd_parts(crd: Mapping[str, Any]) -> tuple[str, str, list[Any]] | None:
    """(group, kind, versions) of a CustomResourceDefinition; None when it cannot be read."""
    spec = crd.get("spec")
    if not isinstance(spec, dict):
        return None
    group, names, versions = spec.get("group"), spec.get("names"), spec.get("versions")
    kind = names.get("kind") if isinstance(names, dict) else None
    if not isinstance(group, str) or not isinstance(kind, str) or not isinstance(versions, list):
        return None
    return group, kind, versions


def crd_served(crd: Mapping[str, Any]) -> tuple[str, str, tuple[str, ...]] | None:
    """(group, kind, the names of the versions it serves) of a CustomResourceDefinition; None
    when it cannot be read (a malformed CRD is other rules' finding). A version without
    `served` counts as served, as the generator counts it."""
    parts = _crd_parts(crd)
    if parts is None:
        return None
    group, kind, versions = parts
    served = tuple(
        v["name"] for v in versions if isinstance(v, dict) and isinstance(v.get("name"), str) and v.get("served") is not False
    )
    return group, kind, served


# -- generation (development only) ------------------------------------------------------------


def compact(schema: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {k: schema[k] for k in _KEEP if k in schema}
    if "required" in out:
        # A CRD in the input may say anything here (`required: null`, as JSON null is to the API
        # server no list at all); the walks read a list of names.
        required = out.pop("required")
        if isinstance(required, list):
            out["required"] = [name for name in required if isinstance(name, str)]
    properties = schema.get("properties")
    if isinstance(properties, dict):
        out["properties"] = {name: compact(child) for name, child in sorted(properties.items()) if isinstance(child, dict)}
    items = schema.get("items")
    if isinstance(items, dict):
        out["items"] = compact(items)
    additional = schema.get("additionalProperties")
    if isinstance(additional, dict):
        out["additionalProperties"] = compact(additional)
    elif isinstance(additional, bool):
        out["additionalProperties"] = additional
    for key in ("anyOf", "oneOf", "allOf"):
        if isinstance(schema.get(key), list):
            out[key] = [compact(s) for s in schema[key] if isinstance(s, dict)]
    if isinstance(schema.get("not"), dict):
        out["not"] = compact(schema["not"])
    if any(key in out for key in COMBINATORS):
        # One key for the walk to look up on every value, instead of four.
        out[COMBINED] = True
    validations = schema.get("x-kubernetes-validations")
    if isinstance(validations, list):
        # Kept for evaluating the CEL rules: the rule and what the API server says when it fails.
        out["x-kubernetes-validations"] = [
            {k: v[k] for k in ("rule", "message", "messageExpression", "fieldPath", "reason") if k in v}
            for v in validations
            if isinstance(v, dict)
        ]
    return out


def served_versions(root: Path) -> Iterator[tuple[str, tuple[str, str, str], Mapping[str, Any]]]:
    """(file under `root`, (group, kind, version), the version's entry) for every served version of
    every vendored CRD, files in sorted order (the generators' input)."""
    import yaml

    # libyaml where PyYAML has it: the vendored CRDs are 20 MB, which the pure-Python parser takes
    # minutes over; both build the same data with the same safe constructors.
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    for file in sorted(root.rglob("*.yaml")):
        rel = file.relative_to(root).as_posix()
        for doc in yaml.load_all(file.read_text(encoding="utf-8"), Loader=loader):
            if not isinstance(doc, dict) or doc.get("kind") != "CustomResourceDefinition":
                continue
            spec = doc["spec"]
            for version in spec["versions"]:
                if version.get("served", True):
                    yield rel, (spec["group"], spec["names"]["kind"], version["name"]), version


def generate(root: Path) -> dict[str, Any]:
    """The data: an index of (group, kind, version, release, channels) entries, each naming its
    schema by a hash of its content, and the distinct schemas by hash. Gateway API's schemas
    repeat across releases and channels (most kinds change in a few of them): each is stored
    once."""
    # (group, kind, version, project/release) -> channel -> entry
    found: dict[tuple[str, str, str, str], dict[str, dict[str, Any]]] = {}
    for rel, (group, kind, name), version in served_versions(root):
        parts = rel.split("/")
        channels = [parts[2]] if len(parts) > 3 and parts[2] in CHANNELS else list(CHANNELS)
        schema = compact(version["schema"]["openAPIV3Schema"])
        warning = version_deprecation(group, kind, version)
        for channel in channels:
            entry: dict[str, Any] = {"source": rel, "schema": schema}
            if warning is not None:
                entry["deprecated"] = warning
            found.setdefault((group, kind, name, "/".join(parts[:2])), {})[channel] = entry
    kinds = []
    stored: dict[str, dict[str, Any]] = {}
    for key in sorted(found, key=lambda k: (k[0], k[1], k[2], k[3].split("/")[0], release_key(k[3].split("/")[1]))):
        by_channel = found[key]
        # One entry per distinct schema, naming the channels that serve it.
        distinct: list[tuple[dict[str, Any], list[str]]] = []
        for channel in CHANNELS:
            if channel not in by_channel:
                continue
            entry = by_channel[channel]
            same = next(
                (d for d in distinct if d[0]["schema"] == entry["schema"] and d[0].get("deprecated") == entry.get("deprecated")),
                None,
            )
            if same is None:
                distinct.append((entry, [channel]))
            else:
                same[1].append(channel)
        for entry, channels in distinct:
            digest = _digest(entry["schema"])
            stored[digest] = entry["schema"]
            kinds.append(
                {
                    "group": key[0],
                    "kind": key[1],
                    "version": key[2],
                    "channels": channels,
                    "source": entry["source"],
                    **({"deprecated": entry["deprecated"]} if "deprecated" in entry else {}),
                    "schema": digest,
                }
            )
    index = {
        "about": (
            "Generated by `python -m policylint.k8s.schemas tests/data/crds` from the vendored upstream CRDs"
            " (Apache License 2.0; provenance in tests/data/crds/SOURCES.md). Do not edit."
        ),
        "kinds": kinds,
    }
    return {"index": index, "schemas": {digest: stored[digest] for digest in sorted(stored)}}


def _digest(schema: Mapping[str, Any]) -> str:
    """The name a schema is stored under: a hash of its content."""
    import hashlib

    text = json.dumps(schema, ensure_ascii=False, separators=(",", ":"), sort_keys=True)
    return hashlib.blake2b(text.encode("utf-8"), digest_size=12).hexdigest()


def members(data: Mapping[str, Any]) -> dict[str, bytes]:
    """The files of the archive: the index, and the table of the distinct schemas' nodes."""

    def dump(value: Any) -> bytes:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"), sort_keys=False).encode("utf-8")

    out = {INDEX: dump(data["index"])}
    out[NODES] = dump(_nodes_table(data["schemas"]))
    return out


def read_members(blob: bytes) -> dict[str, bytes]:
    """The files of an archive as `render` wrote it (the test compares these, not the deflated bytes,
    which a different zlib may write differently)."""
    import io
    import zipfile

    with zipfile.ZipFile(io.BytesIO(blob)) as archive:
        return {name: archive.read(name) for name in archive.namelist()}


def render(data: Mapping[str, Any]) -> bytes:
    """A zip archive: each member is deflated on its own, so that a run that looks no schema up
    reads the index alone. Fixed timestamps and order: the same input gives the same bytes."""
    import io
    import zipfile

    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, content in members(data).items():
            info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            archive.writestr(info, content, compresslevel=9)
    return buffer.getvalue()


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) != 1:
        print("usage: python -m policylint.k8s.schemas CRD_DIRECTORY", file=sys.stderr)
        return 2
    DATA.write_bytes(render(generate(Path(args[0]))))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
