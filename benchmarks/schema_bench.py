"""Compare schema validators on the bundled CRD schemas (PL703's choice).

    python benchmarks/schema_bench.py [--objects 10000] [--repeat 3] [--json]

Offline. Validates the objects of a generated corpus (benchmarks/generate.py: Gateways,
HTTPRoutes, ReferenceGrants and Envoy Gateway / Kuadrant policies, a share of them with mistakes)
against the bundled schemas (policylint/k8s/crd_schemas.zip), with each validator that imports
here:

- policylint's own walker (`policylint.rules.schema`, PL703): every violation with its path, and
  the Kubernetes semantics of structural schemas (a default satisfies `required`, a null is an
  unset field, `x-kubernetes-int-or-string`, an integral float is an integer);
- `jsonschema` (pure Python, a dependency of policylint), `fastjsonschema` (generated Python
  code) and `jsonschema-rs` (Rust), on the same schemas translated to plain JSON Schema (the
  Kubernetes extensions spelled as JSON Schema where they can be: int-or-string as `anyOf`,
  `nullable` as a type list).

For each it prints objects per second (best of `--repeat`, schema compilation excluded and
reported apart) and how many objects it judges differently from policylint's walker (valid or
not), with the first few differences and why they differ. Only policylint's walker and
`jsonschema` are dependencies; install the others to measure them
(`pip install fastjsonschema jsonschema-rs`).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

Validator = Callable[[Mapping[str, Any]], bool]  # True: valid


DROPPED: set[str] = set()
FAST_WITHOUT_PATTERNS: set[tuple[str, str, str]] = set()


def _without_patterns(node: Any) -> Any:
    if isinstance(node, list):
        return [_without_patterns(n) for n in node]
    if not isinstance(node, dict):
        return node
    return {
        k: (_without_patterns(v) if k != "properties" else {p: _without_patterns(c) for p, c in v.items()})
        for k, v in node.items()
        if k != "pattern"
    }


def _python_compiles(pattern: str) -> bool:
    import re

    try:
        re.compile(pattern)
    except re.error:
        return False
    return True


def to_json_schema(node: Any) -> Any:
    """A compact structural schema as plain JSON Schema."""
    if isinstance(node, list):
        return [to_json_schema(n) for n in node]
    if not isinstance(node, dict):
        return node
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key.startswith("x-kubernetes-") or key in ("nullable", "default"):
            continue
        if key == "pattern" and not _python_compiles(value):
            DROPPED.add(value)  # RE2 syntax Python's engine rejects: left out for the JSON Schema libraries
            continue
        if key in ("properties",):
            out[key] = {k: to_json_schema(v) for k, v in value.items()}
        else:
            out[key] = to_json_schema(value)
    if node.get("x-kubernetes-int-or-string"):
        out.pop("type", None)
        out["anyOf"] = [{"type": "integer"}, {"type": "string"}]
    if node.get("nullable") and isinstance(out.get("type"), str):
        out["type"] = [out["type"], "null"]
    return out


def corpus(n: int) -> list[tuple[dict[str, Any], tuple[str, str, str]]]:
    import random

    from generate import MESSY_ERROR_RATE, objects

    rng = random.Random(1)
    out = []
    for obj in objects(n, seed=1, error_rate=MESSY_ERROR_RATE):
        if rng.random() < 0.25:
            _break(obj, rng)
        group, _, version = obj["apiVersion"].rpartition("/")
        out.append((obj, (group, obj["kind"], version)))
    return out


def _break(obj: dict[str, Any], rng: Any) -> None:
    """One mistake the API server rejects: a value of the wrong type, not in an enumeration, or
    a required field left out, where the object has such a field."""
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        return
    if obj["kind"] == "Gateway":
        listener = rng.choice(spec["listeners"])
        if rng.random() < 0.5:
            listener["port"] = str(listener["port"])
        else:
            listener["protocol"] = "HTTP2"
    elif obj["kind"] == "HTTPRoute":
        rule = rng.choice(spec["rules"])
        if rng.random() < 0.5:
            rule["matches"][0]["path"]["type"] = "Prefix"
        else:
            rule["backendRefs"][0]["weight"] = -1
    elif spec.get("targetRefs"):
        spec["targetRefs"][0].pop("kind", None)


def _version(distribution: str) -> str:
    from importlib.metadata import version

    return version(distribution)


def validators(
    schemas: Mapping[tuple[str, str, str], Mapping[str, Any]],
) -> dict[str, tuple[Callable[[tuple[str, str, str]], Validator], str]]:
    """name -> (compile one schema, version)."""
    from policylint.k8s import admission as own

    found: dict[str, tuple[Callable[[tuple[str, str, str]], Validator], str]] = {}

    def own_compile(key: tuple[str, str, str]) -> Validator:
        compact = schemas[key]
        return lambda data: not own.violations(data, compact)

    found["policylint (own walker)"] = (own_compile, "")
    try:
        import jsonschema

        def js_compile(key: tuple[str, str, str]) -> Validator:
            validator = jsonschema.Draft7Validator(to_json_schema(schemas[key]))
            return lambda data: next(iter(validator.iter_errors(data)), None) is None

        found["jsonschema"] = (js_compile, _version("jsonschema"))
    except ImportError:
        pass
    try:
        import fastjsonschema

        def fast_compile(key: tuple[str, str, str]) -> Validator:
            try:
                check = fastjsonschema.compile(to_json_schema(schemas[key]))
            except Exception:  # its rewriting of some patterns fails to compile: without patterns
                FAST_WITHOUT_PATTERNS.add(key)
                check = fastjsonschema.compile(_without_patterns(to_json_schema(schemas[key])))

            def valid(data: Mapping[str, Any]) -> bool:
                try:
                    check(data)
                except fastjsonschema.JsonSchemaException:
                    return False
                return True

            return valid

        found["fastjsonschema"] = (fast_compile, _version("fastjsonschema"))
    except ImportError:
        pass
    try:
        import jsonschema_rs

        def rs_compile(key: tuple[str, str, str]) -> Validator:
            validator = jsonschema_rs.Draft7Validator(to_json_schema(schemas[key]))
            return lambda data: bool(validator.is_valid(data))

        found["jsonschema-rs"] = (rs_compile, _version("jsonschema-rs"))
    except ImportError:
        pass
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--objects", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)

    from policylint.k8s.schemas import schemas as bundled

    schemas = {key: schema for key, (schema, _) in bundled("experimental").items()}
    objects = [(obj, key) for obj, key in corpus(args.objects) if key in schemas]
    # What PL703 validates: the object without metadata and status (the rule skips them).
    payloads = [({k: v for k, v in obj.items() if k not in ("metadata", "status")}, key) for obj, key in objects]
    reference: list[bool] | None = None
    rows = []
    for name, (compile_one, version) in validators(schemas).items():
        start = time.perf_counter()
        compiled = {key: compile_one(key) for key in sorted({key for _, key in payloads})}
        compile_s = time.perf_counter() - start
        best = float("inf")
        verdicts: list[bool] = []
        for _ in range(args.repeat):
            start = time.perf_counter()
            verdicts = [compiled[key](data) for data, key in payloads]
            best = min(best, time.perf_counter() - start)
        if reference is None:
            reference = verdicts
        differ = [i for i, (a, b) in enumerate(zip(reference, verdicts, strict=True)) if a != b]
        examples = [
            f"{objects[i][0]['kind']} {objects[i][0]['metadata'].get('name')}: policylint {'valid' if reference[i] else 'invalid'}"
            for i in differ[:3]
        ]
        rows.append(
            {
                "validator": name,
                "version": version,
                "objects": len(payloads),
                "objects_per_s": len(payloads) / best,
                "compile_s": compile_s,
                "invalid": verdicts.count(False),
                "differ": len(differ),
                "examples": examples,
            }
        )
    if args.json:
        print(json.dumps(rows, indent=2))
        return 0
    print(f"{len(payloads):,} objects of {len({k for _, k in payloads})} bundled kinds; best of {args.repeat}")
    print("| validator | objects/s | compiling the schemas | judged invalid | verdicts differing from policylint's |")
    print("|---|---:|---:|---:|---:|")
    for r in rows:
        label = f"{r['validator']} {r['version']}".strip()
        print(f"| {label} | {r['objects_per_s']:,.0f} | {r['compile_s']:.2f} s | {r['invalid']} | {r['differ']} |")
    if FAST_WITHOUT_PATTERNS:
        print(
            f"  fastjsonschema: {len(FAST_WITHOUT_PATTERNS)} kinds' schemas compiled without their patterns (its pattern rewriting fails)"
        )
    if DROPPED:
        print(f"  {len(DROPPED)} RE2 patterns Python's engine cannot compile left out of the JSON Schema libraries' schemas")
    for r in rows:
        for example in r["examples"]:
            print(f"  {r['validator']}: {example}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
