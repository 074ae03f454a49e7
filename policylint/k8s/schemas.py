"""Field schemas of the Gateway API and policy CRDs, for the schema rules (PL702).

`crd_schemas.json.gz` holds, per group, kind, served version and channel, the parts of each
CRD's OpenAPI schema that validation reads (types, properties, items, required fields,
enumerations, patterns, bounds, and the Kubernetes extensions that keep unknown fields or allow
an int-or-string): descriptions are dropped. It is generated from the vendored upstream CRDs
(tests/data/crds/, Apache License 2.0, provenance in tests/data/crds/SOURCES.md) by

    python -m policylint.k8s.schemas tests/data/crds

and tests/test_schemas.py checks that the committed file is what the generator writes. Gateway
API's CRDs come in two channels (`standard/`, `experimental/`); a vendor's CRDs have one, which
counts as both.
"""

from __future__ import annotations

import functools
import gzip
import json
import sys
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

DATA = Path(__file__).with_name("crd_schemas.json.gz")
CHANNELS = ("standard", "experimental")

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
def schemas(channel: str) -> Mapping[tuple[str, str, str], tuple[Mapping[str, Any], str]]:
    """(group, kind, version) -> (the schema of the object, its `openAPIV3Schema` compacted; the
    upstream release it comes from, `envoy-gateway v1.9.0`)."""
    raw = json.loads(gzip.decompress(DATA.read_bytes()).decode("utf-8"))
    return {
        (e["group"], e["kind"], e["version"]): (e["schema"], " ".join(e["source"].split("/")[:2]))
        for e in raw["kinds"]
        if channel in e["channels"]
    }


def crd_schemas(crd: Mapping[str, Any]) -> dict[tuple[str, str, str], Mapping[str, Any]]:
    """The schemas of a CustomResourceDefinition's served versions, compacted; {} when it has none
    that can be read (a malformed CRD is other rules' finding)."""
    spec = crd.get("spec")
    if not isinstance(spec, dict):
        return {}
    group, names = spec.get("group"), spec.get("names")
    kind = names.get("kind") if isinstance(names, dict) else None
    versions = spec.get("versions")
    if not isinstance(group, str) or not isinstance(kind, str) or not isinstance(versions, list):
        return {}
    out: dict[tuple[str, str, str], Mapping[str, Any]] = {}
    for version in versions:
        if not isinstance(version, dict) or not isinstance(version.get("name"), str) or version.get("served") is False:
            continue
        schema = version.get("schema")
        root = schema.get("openAPIV3Schema") if isinstance(schema, dict) else None
        if isinstance(root, dict):
            out[(group, kind, version["name"])] = compact(root)
    return out


# -- generation (development only) ------------------------------------------------------------


def compact(schema: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {k: schema[k] for k in _KEEP if k in schema}
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

    for file in sorted(root.rglob("*.yaml")):
        rel = file.relative_to(root).as_posix()
        for doc in yaml.safe_load_all(file.read_text(encoding="utf-8")):
            if not isinstance(doc, dict) or doc.get("kind") != "CustomResourceDefinition":
                continue
            spec = doc["spec"]
            for version in spec["versions"]:
                if version.get("served", True):
                    yield rel, (spec["group"], spec["names"]["kind"], version["name"]), version


def generate(root: Path) -> dict[str, Any]:
    found: dict[tuple[str, str, str], dict[str, Any]] = {}  # (group, kind, version) -> channel -> entry
    for rel, key, version in served_versions(root):
        parts = rel.split("/")
        channels = [parts[2]] if len(parts) > 3 and parts[2] in CHANNELS else list(CHANNELS)
        schema = compact(version["schema"]["openAPIV3Schema"])
        for channel in channels:
            found.setdefault(key, {})[channel] = {"source": rel, "schema": schema}
    kinds = []
    for key in sorted(found):
        by_channel = found[key]
        # One entry per distinct schema, naming the channels that serve it.
        distinct: list[tuple[dict[str, Any], list[str]]] = []
        for channel in CHANNELS:
            if channel not in by_channel:
                continue
            entry = by_channel[channel]
            same = next((d for d in distinct if d[0]["schema"] == entry["schema"]), None)
            if same is None:
                distinct.append((entry, [channel]))
            else:
                same[1].append(channel)
        for entry, channels in distinct:
            kinds.append(
                {
                    "group": key[0],
                    "kind": key[1],
                    "version": key[2],
                    "channels": channels,
                    "source": entry["source"],
                    "schema": entry["schema"],
                }
            )
    return {
        "about": (
            "Generated by `python -m policylint.k8s.schemas tests/data/crds` from the vendored upstream CRDs"
            " (Apache License 2.0; provenance in tests/data/crds/SOURCES.md). Do not edit."
        ),
        "kinds": kinds,
    }


def render(data: Mapping[str, Any]) -> bytes:
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"), sort_keys=False)
    # mtime 0: the same input gives the same bytes (the test compares the decompressed text).
    return gzip.compress(text.encode("utf-8"), mtime=0)


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) != 1:
        print("usage: python -m policylint.k8s.schemas CRD_DIRECTORY", file=sys.stderr)
        return 2
    DATA.write_bytes(render(generate(Path(args[0]))))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
