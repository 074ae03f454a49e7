"""The schema rules' data and decisions: the bundled field schemas are what the vendored upstream
CRDs say (policylint.k8s.schemas), a CRD in the input takes their place (PL702), and a valid
example of every bundled kind and version, taken from its upstream project
(tests/data/valid-per-kind/), passes PL702-PL706."""

from __future__ import annotations

import datetime
import os
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
import yaml

from policylint.k8s import schemas
from tests.lintutil import ROOT, lint_paths, lint_text, only

# Gateway API v1.6.1, config/crd/standard/gateway.networking.k8s.io_httproutes.yaml: the fields of
# a backendRef.
BACKEND_REF_FIELDS = ["filters", "group", "kind", "name", "namespace", "port", "weight"]


def test_the_committed_schemas_are_what_the_generator_writes() -> None:
    generated = schemas.members(schemas.generate(ROOT / "tests" / "data" / "crds"))
    assert schemas.read_members(schemas.DATA.read_bytes()) == generated, "run `python -m policylint.k8s.schemas tests/data/crds`"


def test_every_bundled_schema_is_read_from_the_table_of_nodes_as_stored() -> None:
    """Each schema the index names, built from the archive's one table of nodes, is the schema its
    digest was made from (the digest hashes the schema's JSON, each scalar written as its type
    writes it: 1, 1.0 and true apart); and a map or list two schemas hold alike is one object."""
    digests = sorted({entry["schema"] for entry in schemas._entries()})
    read = {digest: schemas._schema(digest) for digest in digests}
    assert [schemas._digest(schema) for schema in read.values()] == digests
    by_content: dict[str, list[int]] = {}
    stack: list[Any] = list(read.values())
    while stack:
        node = stack.pop()
        if isinstance(node, (dict, list)):
            ids = by_content.setdefault(schemas._digest({"": node}), [])
            if id(node) not in ids:
                ids.append(id(node))
                stack.extend(node.values() if isinstance(node, dict) else node)
    assert [ids for ids in by_content.values() if len(ids) > 1] == []
    # HTTPRoute's `parentRefs` item of v1.6.1 is also its status's ancestor reference, and v1.5.1's.
    key = ("gateway.networking.k8s.io", "HTTPRoute", "v1")
    newest, older = schemas.schemas("standard", "v1.6.1")[key][0], schemas.schemas("standard", "v1.5.1")[key][0]
    item = newest["properties"]["spec"]["properties"]["parentRefs"]["items"]
    assert item is newest["properties"]["status"]["properties"]["parents"]["items"]["properties"]["parentRef"]
    assert item is older["properties"]["spec"]["properties"]["parentRefs"]["items"]


def test_the_table_of_nodes_holds_each_content_once_with_its_scalars_types() -> None:
    """`_nodes_table`, worked out by hand: two equal bounds are one node, a bound of 1.0 is another
    (an integer node's minimum written as a float), children come before their parents and are
    written as references, and each schema names its root."""
    one = {"type": "integer", "minimum": 1}
    table = schemas._nodes_table(
        {
            "a": {"properties": {"x": one, "y": dict(one)}},
            "b": {"properties": {"x": {"type": "integer", "minimum": 1.0}}, "required": ["x"]},
        }
    )
    assert table == {
        "nodes": [
            {"type": "integer", "minimum": 1},
            {"x": {"@": 0}, "y": {"@": 0}},
            {"properties": {"@": 1}},
            {"type": "integer", "minimum": 1.0},
            {"x": {"@": 3}},
            ["x"],
            {"properties": {"@": 4}, "required": {"@": 5}},
        ],
        "roots": {"a": 2, "b": 6},
    }
    assert type(table["nodes"][3]["minimum"]) is float


_READS = """\
import zipfile
from policylint.k8s import schemas

reads = []
original = zipfile.ZipFile.read
zipfile.ZipFile.read = lambda self, name, pwd=None: reads.append(name) or original(self, name, pwd)
for digest in sorted({entry["schema"] for entry in schemas._entries()}):
    schemas._schema(digest)
print(" ".join(reads))
"""


def test_every_bundled_schema_is_built_from_one_read_of_the_archive() -> None:
    """A run that asks for the other plausible schemas read and hash-consed each of them, one
    archive member and one key per node each (a fifth of its validation, docs/performance.md);
    now all of them come from the index and one table. Run in a fresh interpreter, where nothing
    has been read yet."""
    proc = subprocess.run([sys.executable, "-c", _READS], capture_output=True, text=True, timeout=120, cwd=ROOT, check=False)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == [schemas.INDEX, schemas.NODES]


def test_channels_and_versions() -> None:
    standard, experimental = schemas.schemas("standard"), schemas.schemas("experimental")
    route = ("gateway.networking.k8s.io", "HTTPRoute", "v1")
    backend = standard[route][0]["properties"]["spec"]["properties"]["rules"]["items"]["properties"]["backendRefs"]["items"]
    assert sorted(backend["properties"]) == BACKEND_REF_FIELDS
    assert standard[route][1] == "gateway-api v1.6.1"
    # TCPRoute v1alpha2 is served by the experimental channel only; vendor CRDs count as both.
    assert ("gateway.networking.k8s.io", "TCPRoute", "v1alpha2") in experimental
    assert ("gateway.networking.k8s.io", "TCPRoute", "v1alpha2") not in standard
    btp = ("gateway.envoyproxy.io", "BackendTrafficPolicy", "v1alpha1")
    assert btp in standard and btp in experimental and standard[btp][1] == "envoy-gateway v1.9.0"


POLICY = """\
apiVersion: gateway.envoyproxy.io/v1alpha1
kind: BackendTrafficPolicy
metadata: {name: p, namespace: apps, labels: {anything: goes}}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: web, Typo: x}]
  retries: {numRetries: 3}
status: {ancestors: []}
"""


def test_bundled_vendor_schemas_give_findings_that_name_their_release() -> None:
    result = lint_text(POLICY)
    (finding,) = only(result, "PL702")  # not inside targetRefs (PL205's), not metadata or status
    # No bundled release of Envoy Gateway defines `spec.retries`: an error whatever release the
    # cluster runs among them (docs/semantics.md#the-cluster-model), naming the release that
    # decided and what to do about a newer one.
    assert finding.path == "spec.retries" and finding.severity.label == "error"
    assert "(the envoy-gateway v1.9.0 CRD)" in finding.message
    assert "no bundled release of envoy-gateway (v1.6.7 to v1.9.0) accepts it" in finding.message
    assert "if the cluster runs a release newer than envoy-gateway v1.9.0, lint with its CRDs (--crd)" in finding.message
    assert "PL205" in [f.rule for f in result.findings if f.path.startswith("spec.targetRefs[0]")]


def test_a_crd_in_the_input_decides_and_its_findings_are_errors() -> None:
    crd = """\
---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: backendtrafficpolicies.gateway.envoyproxy.io}
spec:
  group: gateway.envoyproxy.io
  names: {kind: BackendTrafficPolicy, plural: backendtrafficpolicies}
  scope: Namespaced
  versions:
  - name: v1alpha1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              targetRefs: {type: array, items: {type: object, x-kubernetes-preserve-unknown-fields: true}}
              retries: {type: object, properties: {numRetries: {type: integer}}}
              extra: {type: object, x-kubernetes-preserve-unknown-fields: true}
              settings: {type: object, additionalProperties: {type: object, properties: {on: {type: boolean}}}}
"""
    # A newer CRD that has `retries`: no finding there; its own schema decides everywhere else.
    text = POLICY.replace(
        "retries: {numRetries: 3}",
        "retries: {numRetries: 3, backoff: 1}\n  extra: {free: form}\n  settings: {a: {on: true, off: false}}",
    )
    findings = only(lint_text(text + crd), "PL702")
    assert [(f.path, f.severity.label) for f in findings] == [
        ("spec.retries.backoff", "error"),
        ("spec.settings.a.off", "error"),
    ]
    assert "(its CRD in the input)" in findings[0].message


def test_a_crd_read_again_is_compacted_once_per_content(monkeypatch: pytest.MonkeyPatch) -> None:
    # A CRD given with --crd is read afresh by every run, and a run asks for its schemas twice (the
    # admission catalogue, the cluster's vendor releases): another object of the same content is
    # answered from the first's compaction, counted, and content equal in Python but of another
    # type is other content.
    compacted: list[object] = []
    original = schemas._crd_schemas
    monkeypatch.setattr(schemas, "_crd_schemas", lambda crd: compacted.append(crd) or original(crd))
    monkeypatch.setattr(schemas, "_COMPACTED", {})

    def crd(max_length: object) -> dict[str, Any]:
        name = {"type": "string", "maxLength": max_length, "description": "dropped by the compaction"}
        root = {"type": "object", "properties": {"spec": {"type": "object", "properties": {"name": name}}}}
        versions = [{"name": "v1", "served": True, "schema": {"openAPIV3Schema": root}}]
        return {"spec": {"group": "example.com", "names": {"kind": "Widget"}, "versions": versions}}

    key = ("example.com", "Widget", "v1")
    first = schemas.crd_schemas(crd(8))
    assert first == {
        key: {
            "type": "object",
            "properties": {"spec": {"type": "object", "properties": {"name": {"type": "string", "maxLength": 8}}}},
        }
    }
    again = schemas.crd_schemas(crd(8))
    assert again == first and again is not first  # each caller's own map of the shared schemas
    assert len(compacted) == 1
    # `8.0` == `8` in Python, but it is another value to the schema rules (no integer): compacted again.
    other = schemas.crd_schemas(crd(8.0))
    assert type(other[key]["properties"]["spec"]["properties"]["name"]["maxLength"]) is float
    assert len(compacted) == 2
    # What marshal cannot write is compacted every time.
    dated = crd(8)
    dated["metadata"] = {"creationTimestamp": datetime.datetime(2024, 1, 2, 3, 4, 5)}
    assert schemas.crd_schemas(dated) == first and schemas.crd_schemas(dated) == first
    assert len(compacted) == 4


def test_a_crd_whose_required_is_not_a_list_of_names_validates_without_it() -> None:
    # Found by tests/hostile/test_fuzz.py: `required: null` in a CRD of the input failed the topology and
    # the schema rules with a TypeError (PL000). JSON null is no list to the API server either.
    crd = """\
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: retrypolicies.example.com}
spec:
  group: example.com
  names: {kind: RetryPolicy, plural: retrypolicies}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            required: [attempts, 7]
            properties:
              attempts: {type: integer}
              targetRefs:
                type: array
                items: {type: object, required: null, properties: {name: {type: string}}}
---
apiVersion: example.com/v1
kind: RetryPolicy
metadata: {name: r, namespace: app}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: gw}]
"""
    result = lint_text(crd)
    assert not result.internal_error
    # The names that are names still count; `7` and `null` are not read.
    # Reported where the field is missing from: the `spec:` line of the RetryPolicy.
    assert [(f.path, f.line) for f in only(result, "PL703")] == [("spec.attempts", 28)]


def test_schema_violations_respect_defaults_nulls_templates_and_int_or_string() -> None:
    # Gateway API v1.6.1 HTTPRoute: `path.type` has default PathPrefix, so a path match without it
    # is complete; `value` of a header match is required. A `null` is an unset field; an unquoted
    # template action is PL004's.
    text = """\
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: web, namespace: apps}
spec:
  rules:
  - matches:
    - path: {value: /}
      headers: [{name: x-a}]
    timeouts: {request: null}
    backendRefs: [{name: web, port: 80, weight: {{ .Values.weight }}}]
"""
    findings = only(lint_text(text), "PL703")
    assert [(f.path, f.message.split(" (")[0]) for f in findings] == [
        (
            "spec.rules[0].matches[0].headers[0].value",
            "spec.rules[0].matches[0].headers[0].value is required by the schema and missing",
        ),
    ]


def test_duplicate_items_of_sets_and_map_keyed_lists_and_null_items() -> None:
    # Gateway API v1.6.1 HTTPRoute: header matches are a list-map keyed by name, the header names a
    # requestHeaderModifier removes a list-set; the API server refuses a second item with a key or
    # value already there ("Duplicate value"). gateway-api's own hack/invalid-examples
    # (duplicate-header-match.yaml, invalid-filter-duplicate-header.yaml) expect exactly that.
    route = """\
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: web, namespace: apps}
spec:
  rules:
  - matches:
    - headers:
      - {name: x-a, value: "1"}
      - {name: x-b, value: "2"}
      - {name: x-a, value: "3"}
    filters:
    - type: RequestHeaderModifier
      requestHeaderModifier:
        remove: [x-c, x-d, x-c]
"""
    findings = only(lint_text(route), "PL703")
    assert [(f.path, f.line, f.message.split(" (the")[0]) for f in findings] == [
        (
            "spec.rules[0].matches[0].headers[2]",
            10,
            "spec.rules[0].matches[0].headers[2] duplicates item [0]: the list is a map keyed by name"
            " (x-kubernetes-list-type: map), so each key may appear once",
        ),
        (
            "spec.rules[0].filters[0].requestHeaderModifier.remove[2]",
            14,
            "spec.rules[0].filters[0].requestHeaderModifier.remove[2] duplicates item [0]: the list is a set"
            " (x-kubernetes-list-type: set), so each value may appear once",
        ),
    ]
    assert only(lint_text(route.replace('x-a, value: "3"', 'x-e, value: "3"').replace("x-c]", "x-e]")), "PL703") == []
    # The Gateway's listeners are a list-map keyed by name too, and its CEL rule "Listener name must
    # be unique within the Gateway" says so in the CRD's words: one finding, PL704's.
    gateway = """\
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw, namespace: apps}
spec:
  gatewayClassName: eg
  listeners:
  - {name: http, protocol: HTTP, port: 80}
  - {name: http, protocol: HTTP, port: 8080}
"""
    result = lint_text(gateway)
    assert [(f.rule, f.path) for f in result.findings if f.rule.startswith("PL70")] == [("PL704", "spec.listeners")]
    # A null list item is a value of the wrong type, not an unset field (Istio's CRD validation case
    # reqauth-invalid.yaml `no-issuer`: "spec.jwtRules[0] in body must be of type object").
    nulls = """\
apiVersion: security.istio.io/v1
kind: RequestAuthentication
metadata: {name: jwt, namespace: apps}
spec:
  jwtRules:
  - null
"""
    (finding,) = only(lint_text(nulls), "PL703")
    assert (finding.path, finding.line) == ("spec.jwtRules[0]", 6)
    assert finding.message.startswith("spec.jwtRules[0] is null, where the schema takes an object")


# -- a valid object of every bundled kind ------------------------------------------------------------

# One file per upstream project, every object taken from that project's own examples, docs, GEPs or
# e2e/conformance manifests, with a comment naming the file and any change (tests/data/valid-per-kind/).
VALID_PER_KIND = ROOT / "tests" / "data" / "valid-per-kind"
SCHEMA_RULES = ("PL702", "PL703", "PL704", "PL705", "PL706")


def _documents() -> list[dict[str, Any]]:
    docs: list[dict[str, Any]] = []
    for path in sorted(VALID_PER_KIND.glob("*.yaml")):
        docs += [d for d in yaml.safe_load_all(path.read_text(encoding="utf-8")) if isinstance(d, dict)]
    return docs


def _gkv(doc: Mapping[str, Any]) -> tuple[str, str, str]:
    group, _, version = str(doc["apiVersion"]).rpartition("/")
    return group, str(doc["kind"]), version


def test_every_bundled_kind_and_version_has_a_valid_example() -> None:
    # Computed from the data, so a kind or version the schemas gain fails here until it has one.
    bundled = set(schemas.schemas("experimental")) | set(schemas.schemas("standard"))
    # Gateway API v1.6.1 (24), Envoy Gateway (5), Kuadrant (9), NGF (7), Linkerd (2), GKE (4), Istio (5)
    assert len(bundled) == 54
    examples = {_gkv(d) for d in _documents()}
    assert sorted(bundled - examples) == []
    # Each file holds its project's kinds (the `source` of their schema entries).
    by_file = {
        path.stem: {_gkv(d) for d in yaml.safe_load_all(path.read_text(encoding="utf-8")) if d}
        for path in VALID_PER_KIND.glob("*.yaml")
    }
    for gkv, (_, source) in schemas.schemas("experimental").items():
        assert gkv in by_file[source.split(" ")[0]], (gkv, source)


# The valid examples are examples of the bundled schemas of each vendor's newest release: a kind a
# vendor added there (Kuadrant's ThreatPolicy in v1.5) is a PL705 warning naming it otherwise.
NEWEST = [f"{project}@{releases[-1]}" for project, releases in schemas.vendor_releases().items()]


def _schema_findings(channel: str) -> list[tuple[str, str, str, str]]:
    result = lint_paths([VALID_PER_KIND], channel=channel, implementations=NEWEST)
    return [(f.rule, str(f.object), f.path, Path(f.file).name) for f in result.findings if f.rule in SCHEMA_RULES]


def test_the_valid_examples_pass_the_schema_rules_of_the_experimental_channel() -> None:
    assert _schema_findings("experimental") == []


def test_the_standard_channel_refuses_only_the_experimental_kinds_versions_and_fields() -> None:
    # Gateway API v1.6.1's standard CRDs serve TLSRoute, TCPRoute, UDPRoute and BackendTLSPolicy in
    # v1 only and have no XBackend, XBackendTrafficPolicy or XMesh CRD (PL705); its standard
    # HTTPRoute has no `retry` in a rule (PL706). Read from config/crd/{standard,experimental}/.
    gw = "gateway-api.yaml"
    assert _schema_findings("standard") == [
        ("PL705", "TLSRoute default/example-route", "apiVersion", gw),  # v1alpha2
        ("PL705", "TLSRoute default/example-route-v1alpha3", "apiVersion", gw),
        ("PL705", "TCPRoute default/tcp-app-2", "apiVersion", gw),  # v1alpha2
        ("PL705", "UDPRoute gateway-conformance-infra/udp-coredns", "apiVersion", gw),  # v1alpha2
        ("PL705", "BackendTLSPolicy default/tls-upstream-auth", "apiVersion", gw),  # v1alpha3
        ("PL705", "XBackend ai-apps/openai-api", "kind", gw),
        ("PL705", "XBackendTrafficPolicy default/traffic-policy-example", "kind", gw),
        ("PL705", "XMesh one-mesh-to-mesh-them-all", "kind", gw),
        ("PL706", "HTTPRoute gateway-conformance-infra/retries", "spec.rules[0].retry", gw),
        ("PL706", "HTTPRoute gateway-conformance-infra/retries", "spec.rules[1].retry", gw),
    ]
    # The PL705 objects are exactly the examples of the versions only the experimental channel serves.
    experimental_only = set(schemas.schemas("experimental")) - set(schemas.schemas("standard"))
    assert len(experimental_only) == 8
    found = lint_paths([VALID_PER_KIND], channel="standard", implementations=NEWEST).findings
    refused = sorted(f.object.name for f in found if f.rule == "PL705")
    assert refused == sorted(d["metadata"]["name"] for d in _documents() if _gkv(d) in experimental_only)


def test_every_valid_example_is_checked_against_its_schema(tmp_path: Path) -> None:
    # The clean runs above mean something only if every object goes through the schema walk: an
    # unknown field planted in each one's spec is PL702's on every object of a bundled kind.
    docs = [d for d in _documents() if _gkv(d) in schemas.schemas("experimental")]
    for d in docs:
        d["spec"]["notAField"] = 1
    (tmp_path / "planted.yaml").write_text(yaml.safe_dump_all(docs), encoding="utf-8")
    result = lint_paths([tmp_path], channel="experimental")
    found = sorted((f.object.kind, f.object.name, f.path) for f in result.findings if f.rule == "PL702")
    assert found == sorted((d["kind"], d["metadata"]["name"], "spec.notAField") for d in docs)


ISTIO_CASES = ROOT / "tests" / "data" / "oracles" / "istio-crd-validation"


def _cel_rules(kind_file: str) -> dict[str, str]:
    """The CEL rules of a vendored Istio CRD: message -> rule."""
    text = (ROOT / "tests" / "data" / "crds" / "istio" / "1.30.3" / kind_file).read_text(encoding="utf-8")
    out: dict[str, str] = {}

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            for rule in node.get("x-kubernetes-validations") or ():
                out[rule["message"]] = " ".join(rule["rule"].split())
            for child in node.values():
                walk(child)
        elif isinstance(node, list):
            for child in node:
                walk(child)

    walk(yaml.safe_load(text))
    return out


def test_istio_crd_validation_cases() -> None:
    # Istio's own cases (tests/data/oracles/istio-crd-validation/README.md): an API server's CRD
    # validation accepts every `-valid` document and refuses every `-invalid` one (`_err` says
    # why; Istio's test compares only whether both refuse).
    # Before: the CEL rules on strings never ran (a namespace in a target reference, a label
    # value's wildcard, a duration's bound), nor url() and isURL() (unsupported), a null list
    # item passed as an unset field, and a map-keyed list took the same key twice: 9 of the 36
    # refusals were missed.
    cel_rules: dict[str, str] = {}
    for kind_file in (
        "security.istio.io_authorizationpolicies.yaml",
        "security.istio.io_requestauthentications.yaml",
        "extensions.istio.io_wasmplugins.yaml",
    ):
        cel_rules.update(_cel_rules(kind_file))
    checked = refused = by_message = 0
    for path in sorted(ISTIO_CASES.glob("*.yaml")):
        for document in yaml.safe_load_all(path.read_text(encoding="utf-8")):
            if not document:
                continue
            want = document.pop("_err", None)
            result = lint_text(yaml.safe_dump(document, sort_keys=False), filename=path.name)
            (obj,) = result.project.index.objects
            verdict = result.project.admissions().verdict(obj)
            assert verdict is not None, (path.name, obj.name)
            messages = [r.message for r in (*verdict.schema, *verdict.cel)]
            checked += 1
            if path.stem.endswith("-valid"):
                assert want is None and messages == [], (path.name, obj.name, messages)
                continue
            assert messages, (path.name, obj.name, want)
            refused += 1
            rules = [rule for message, rule in cel_rules.items() if want in message]
            if rules:
                # A CEL rule's message (or its start) is the cause: that rule refuses the object,
                # with its message, or with the error its evaluation ends in (the API server's
                # "<error> evaluating rule: <rule>": `url()` of a string with a control character).
                assert any(want in m or any(m.endswith(f"evaluating rule: {r}") for r in rules) for m in messages), (
                    path.name,
                    obj.name,
                    want,
                    messages,
                )
                by_message += 1
    assert (checked, refused, by_message) == (43, 36, 13)


_FORKED = """\
import os, sys
from policylint.k8s import schemas

parent = schemas._archive()
fd = parent.fp.fileno()
os.lseek(fd, 0, os.SEEK_SET)
read, write = os.pipe()
pid = os.fork()
if pid == 0:
    own = schemas._archive()
    os.lseek(own.fp.fileno(), 1234, os.SEEK_SET)  # where a read of its own would leave the file
    os.write(write, b"1" if own is not parent and own.read(schemas.INDEX) else b"0")
    os._exit(0)
os.waitpid(pid, 0)
print(os.read(read, 1).decode(), os.lseek(fd, 0, os.SEEK_CUR), len(parent.read(schemas.INDEX)) > 0)
"""


@pytest.mark.skipif(not hasattr(os, "fork"), reason="forks a child, as the rule processes of --jobs are")
def test_a_forked_child_reads_the_schemas_through_a_file_of_its_own() -> None:
    """The rule processes of `--jobs` are forked once the archive is open: sharing its file, they
    shared one offset with this process, and a read between another's seek and its read got the
    wrong bytes (a PL000 "Bad CRC-32" in PL703). The child opens the archive again: its reads leave
    this process's file where it was. Run in a fresh interpreter (a test runner may run threads)."""
    proc = subprocess.run([sys.executable, "-c", _FORKED], capture_output=True, text=True, timeout=120, cwd=ROOT, check=False)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["1", "0", "True"]
