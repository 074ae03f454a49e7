"""Field paths resolve to exact 1-based line and column, whatever the file looks like.

Positions are not stored while loading: `PositionResolver` reads a document's
lines again when a finding needs it (`blockpaths`, for plain block style) or
composes it again. These tests pin the column too, for every layout the loader
accepts: block and flow style, multi-document files, files that recover from a
syntax error, `kind: List` members, CRLF, BOM, UTF-16 and JSON (with tabs). The
block reader is checked against libyaml's marks on every path of every document
of the tests and examples, and of random block documents.
"""

from __future__ import annotations

import codecs
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from policylint.input import blockpaths, positions
from policylint.input.load import Document, load_source, parse_text, printable
from policylint.input.positions import PositionResolver, format_path, join, parse_path
from policylint.input.sources import Source
from policylint.k8s.objects import KindRegistry, build_objects
from tests.examples import examples
from tests.lintutil import ROOT, lint_paths, lint_text, only


def _docs(text: str, file: str = "f.yaml") -> tuple[list[Document], PositionResolver]:
    result = parse_text(text, file)
    return result.documents, PositionResolver(lambda name: text if name == file else None)


def _at(text: str, path: str, doc: int = 0) -> tuple[int, int]:
    documents, resolver = _docs(text)
    return resolver.resolve(documents[doc].ref, path)


# -- path syntax ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("parts", "text"),
    [
        (["spec", "targetRefs", 1, "sectionName"], "spec.targetRefs[1].sectionName"),
        (["metadata", "labels", "a.b/c"], 'metadata.labels["a.b/c"]'),
        (["metadata", "annotations", 'say "hi"'], 'metadata.annotations["say \\"hi\\""]'),
        (["data", "with]bracket"], 'data["with]bracket"]'),
        (["data", "two words"], 'data["two words"]'),
        (["data", "café"], 'data["caf\\u00e9"]'),
        (["items", 0, "spec"], "items[0].spec"),
        ([0, "a"], "[0].a"),
        (["x-kubernetes-validations"], "x-kubernetes-validations"),
    ],
)
def test_format_and_parse_round_trip(parts: list[str | int], text: str) -> None:
    assert format_path(parts) == text
    assert parse_path(text) == parts


def test_join_quotes_keys_with_dots() -> None:
    assert join("metadata.labels", "a.b/c") == 'metadata.labels["a.b/c"]'
    assert join("spec.targetRefs", 2, "name") == "spec.targetRefs[2].name"
    assert join("", "spec") == "spec"


def test_malformed_path_resolves_as_far_as_it_parses() -> None:
    assert parse_path("spec.targetRefs[x].name") == ["spec", "targetRefs"]


# -- block and flow style --------------------------------------------------------------------

BLOCK = """\
apiVersion: gateway.networking.k8s.io/v1
kind: BackendTLSPolicy
metadata:
  name: tls
  namespace: app
  labels:
    "a.b/c": x
    team: web
spec:
  targetRefs:
  - group: ""
    kind: Service
    name: one
  -   group: ""
      kind: Service
      name: two
      sectionName: https
"""


@pytest.mark.parametrize(
    ("path", "where"),
    [
        ("", (1, 1)),
        ("kind", (2, 1)),
        ("metadata.name", (4, 3)),
        ('metadata.labels["a.b/c"]', (7, 5)),
        ("metadata.labels.team", (8, 5)),
        ("spec.targetRefs", (10, 3)),
        ("spec.targetRefs[0]", (11, 5)),
        ("spec.targetRefs[0].name", (13, 5)),
        ("spec.targetRefs[1]", (14, 7)),
        ("spec.targetRefs[1].sectionName", (17, 7)),
    ],
)
def test_block_style(path: str, where: tuple[int, int]) -> None:
    assert _at(BLOCK, path) == where


FLOW = """\
{apiVersion: v1, kind: Service,
 metadata: {name: web, "labels": {"a.b/c": "x", k: v}},
 spec: {ports: [{port: 80}, {name: https, port: 443}]}}
"""


@pytest.mark.parametrize(
    ("path", "where"),
    [
        ("kind", (1, 18)),
        ("metadata.name", (2, 13)),
        ('metadata.labels["a.b/c"]', (2, 35)),
        ("metadata.labels.k", (2, 49)),
        ("spec.ports[0]", (3, 17)),
        ("spec.ports[1].name", (3, 30)),
        ("spec.ports[1].port", (3, 43)),
    ],
)
def test_flow_style(path: str, where: tuple[int, int]) -> None:
    assert _at(FLOW, path) == where


def test_missing_field_falls_back_to_the_deepest_existing_key() -> None:
    assert _at(BLOCK, "spec.targetRefs[0].sectionName") == (11, 5)  # the list item
    assert _at(BLOCK, "spec.targetRefs[7].name") == (10, 3)  # the list's key
    assert _at(BLOCK, "metadata.name.deeper") == (4, 3)  # a scalar has no children


def test_duplicate_key_resolves_to_the_value_that_wins() -> None:
    text = "a: 1\nb:\n  c: 1\nb:\n  c: 2\n"
    assert _at(text, "b.c") == (5, 3)


def test_keys_that_yaml_reads_as_numbers_or_booleans_are_strings() -> None:
    text = "data:\n  80: http\n  true: yes\n"
    assert _at(text, 'data["80"]') == (2, 3)
    assert _at(text, "data.true") == (3, 3)


def test_columns_count_characters_not_bytes() -> None:
    text = 'metadata: {annotations: {"héllo→😀": x, k: v}}\n'
    assert _at(text, "metadata.annotations.k") == (1, 40)  # the emoji is one column


# -- several documents, and recovery after syntax errors ------------------------------------

MULTI = """\
# leading comment
apiVersion: v1
kind: Service
metadata:
  name: a
---
apiVersion: v1
kind: Service
metadata:
  name: b
  labels: {x: y}
...
---
apiVersion: v1
kind: Service
metadata: {name: c}
"""


def test_multi_document_positions() -> None:
    documents, resolver = _docs(MULTI)
    assert [d.data["metadata"]["name"] for d in documents] == ["a", "b", "c"]
    assert [(d.ref.line, d.ref.column) for d in documents] == [(2, 1), (7, 1), (14, 1)]
    assert resolver.resolve(documents[0].ref, "metadata.name") == (5, 3)
    assert resolver.resolve(documents[1].ref, "metadata.labels.x") == (11, 12)
    assert resolver.resolve(documents[2].ref, "metadata.name") == (16, 12)


BROKEN_FIRST = """\
apiVersion: v1
kind: Service
metadata:
  name: [broken
---
apiVersion: v1
kind: Service
metadata:
  name: after
  labels:
    team: web
---
bad: "unterminated
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: last
"""


def test_positions_after_a_syntax_error_are_absolute() -> None:
    result = parse_text(BROKEN_FIRST, "f.yaml")
    assert [(i.rule_id, i.location.line) for i in result.issues if i.location] == [("PL001", 5), ("PL001", 14)]
    documents, resolver = _docs(BROKEN_FIRST)
    names = [d.data["metadata"]["name"] for d in documents]
    assert names == ["after", "last"]
    after, last = documents
    assert after.ref.chunk_start > 0 and last.ref.chunk_start > after.ref.chunk_start
    assert resolver.resolve(after.ref, "metadata.labels.team") == (11, 5)
    assert resolver.resolve(last.ref, "metadata.name") == (18, 3)


def test_resolver_composes_each_chunk_once() -> None:
    calls: list[str] = []
    documents, _ = _docs(MULTI)
    resolver = PositionResolver(lambda name: calls.append(name) or MULTI)  # type: ignore[func-returns-value]
    for _ in range(3):
        for doc in documents:
            resolver.resolve(doc.ref, "metadata.name")
    assert calls == ["f.yaml"]


def test_resolver_without_text_falls_back_to_the_document_start() -> None:
    documents, _ = _docs(MULTI)
    resolver = PositionResolver(lambda name: None)
    assert resolver.resolve(documents[1].ref, "metadata.labels.x") == (7, 1)


# -- kind: List --------------------------------------------------------------------------------

LIST = """\
apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: Service
  metadata:
    name: zero
- apiVersion: gateway.networking.k8s.io/v1
  kind: BackendTLSPolicy
  metadata:
    name: one
    namespace: app
  spec:
    targetRefs:
    - group: ""
      kind: Service
      name: zero
      sectionName: https
"""


def test_list_members_are_objects_with_a_prefix() -> None:
    documents, resolver = _docs(LIST)
    built = build_objects(documents, KindRegistry.builtin())
    assert [(str(o.key), o.prefix) for o in built.objects] == [
        ("Service default/zero", ("items", 0)),
        ("BackendTLSPolicy app/one", ("items", 1)),
    ]
    policy = built.objects[1]
    assert policy.doc_path("spec.targetRefs[0].sectionName") == "items[1].spec.targetRefs[0].sectionName"
    assert resolver.resolve(policy.doc, policy.doc_path("spec.targetRefs[0].sectionName")) == (18, 7)
    assert resolver.resolve(policy.doc, policy.doc_path("")) == (8, 3)
    assert resolver.resolve(built.objects[0].doc, built.objects[0].doc_path("metadata.name")) == (7, 5)


def test_list_member_finding_is_located_inside_the_list() -> None:
    text = LIST.replace("    name: zero\n", "    name: zero\n    labels: {tier: 1}\n", 1)
    findings = only(lint_text(text, "list.yaml"), "PL009")
    assert [(f.path, f.line, f.column) for f in findings] == [("items[0].metadata.labels.tier", 8, 14)]


# -- line endings and encodings ---------------------------------------------------------------

SERVICE_WITH_BAD_LABEL = "apiVersion: v1\nkind: Service\nmetadata:\n  name: web\n  labels:\n    team: web\n    tier: 1\n"


def _pl009(data: bytes, tmp_path: Path, name: str = "f.yaml") -> list[tuple[int, int]]:
    path = tmp_path / name
    path.write_bytes(data)
    result = lint_paths([path])
    assert [f.rule for f in result.findings] == ["PL009"], result.findings
    assert [str(o.key) for o in result.index.objects] == ["Service default/web"]
    return [(f.line, f.column) for f in result.findings]


@pytest.mark.parametrize(
    ("label", "encode"),
    [
        ("lf", lambda t: t.encode()),
        ("crlf", lambda t: t.replace("\n", "\r\n").encode()),
        ("utf8-bom", lambda t: codecs.BOM_UTF8 + t.encode()),
        ("utf8-bom-crlf", lambda t: codecs.BOM_UTF8 + t.replace("\n", "\r\n").encode()),
        ("utf16-le-bom", lambda t: codecs.BOM_UTF16_LE + t.encode("utf-16-le")),
        ("utf16-be-bom-crlf", lambda t: codecs.BOM_UTF16_BE + t.replace("\n", "\r\n").encode("utf-16-be")),
        ("utf32-le-bom", lambda t: codecs.BOM_UTF32_LE + t.encode("utf-32-le")),
    ],
)
def test_encodings_and_line_endings_keep_exact_positions(label: str, encode: Callable[[str], bytes], tmp_path: Path) -> None:
    assert _pl009(encode(SERVICE_WITH_BAD_LABEL), tmp_path) == [(7, 5)], label


def test_stdin_positions_use_the_text_already_read() -> None:
    data = codecs.BOM_UTF8 + SERVICE_WITH_BAD_LABEL.replace("\n", "\r\n").encode()
    findings = lint_text(data, "piped.yaml").findings
    assert [(f.file, f.rule, f.line, f.column) for f in findings] == [("piped.yaml", "PL009", 7, 5)]


JSON_WITH_TABS = (
    '{\n\t"apiVersion": "v1",\n\t"kind": "Service",\n\t"metadata": {\n\t\t"name": "web",\n'
    '\t\t"labels": {"team": "web", "tier": 1}\n\t}\n}\n'
)


def test_json_file_with_tab_indentation(tmp_path: Path) -> None:
    assert _pl009(JSON_WITH_TABS.encode(), tmp_path, "svc.json") == [(6, 29)]  # a tab is one column


def test_json_document_positions() -> None:
    text = '{"apiVersion": "v1", "kind": "List", "items": [\n  {"a": 1},\n  {"metadata": {"name": "x"}}\n]}\n'
    assert _at(text, "items[1].metadata.name") == (3, 17)


def test_crlf_positions_in_parse_text_match_lf() -> None:
    crlf = MULTI.replace("\n", "\r\n")
    lf_docs, lf_res = _docs(MULTI)
    crlf_docs, crlf_res = _docs(crlf)
    for lf, cr in zip(lf_docs, crlf_docs):
        assert (lf.ref.line, lf.ref.column) == (cr.ref.line, cr.ref.column)
        assert lf_res.resolve(lf.ref, "metadata.name") == crlf_res.resolve(cr.ref, "metadata.name")


def test_load_source_strips_the_bom_before_parsing() -> None:
    result = load_source(Source("x.yaml", content=codecs.BOM_UTF8 + b"a: 1\n"))
    assert result.issues == []
    assert result.documents[0].data == {"a": 1}
    assert (result.documents[0].ref.line, result.documents[0].ref.column) == (1, 1)


def test_positions_agree_with_pyyaml_marks_for_every_key() -> None:
    """Cross-check: every mapping key of a realistic document, against libyaml's own marks."""
    text = BLOCK + "---\n" + FLOW + "---\n" + LIST
    documents, resolver = _docs(text)
    nodes = list(yaml.compose_all(text, Loader=yaml.CSafeLoader))
    checked = 0
    for doc, root in zip(documents, nodes):
        stack: list[tuple[yaml.Node, list[str | int]]] = [(root, [])]
        while stack:
            node, parts = stack.pop()
            if isinstance(node, yaml.MappingNode):
                for k, v in node.value:
                    path = [*parts, k.value]
                    assert resolver.resolve(doc.ref, format_path(path)) == (k.start_mark.line + 1, k.start_mark.column + 1)
                    checked += 1
                    stack.append((v, path))
            elif isinstance(node, yaml.SequenceNode):
                for i, item in enumerate(node.value):
                    path = [*parts, i]
                    assert resolver.resolve(doc.ref, format_path(path)) == (item.start_mark.line + 1, item.start_mark.column + 1)
                    checked += 1
                    stack.append((item, path))
    assert checked > 40


# -- spans (SARIF regions, GitHub annotations) -----------------------------------------------------

SPAN_TEXT = """\
apiVersion: v1
kind: Service
metadata:
  name: web   # a comment is not part of the span
  labels: {tier: "1"}
spec:
  ports:
  - name: http
    port: 80
  - 8080
  description: |
    two
    lines
"""


@pytest.mark.parametrize(
    ("path", "span", "text"),
    [
        # A key and its scalar value on one line: both, end column exclusive.
        ("metadata.name", (4, 3, 4, 12), "name: web"),
        ("metadata.labels.tier", (5, 12, 5, 21), 'tier: "1"'),
        ("spec.ports[0].port", (9, 5, 9, 13), "port: 80"),
        # A scalar item of a list: the item.
        ("spec.ports[1]", (10, 5, 10, 9), "8080"),
        # A key whose value is a collection or spans lines: the key.
        ("spec.ports", (7, 3, 7, 8), "ports"),
        ("spec.description", (11, 3, 11, 14), "description"),
        # A mapping item of a list: the rest of its first line.
        ("spec.ports[0]", (8, 5, 8, 15), "name: http"),
        # A path that stops short: the rest of the deepest line reached.
        ("spec.nothing", (6, 1, 6, 6), "spec:"),
        # The document itself: its start.
        ("", (1, 1, 1, 1), ""),
    ],
)
def test_spans_cover_what_the_path_names(path: str, span: tuple[int, int, int, int], text: str) -> None:
    documents, resolver = _docs(SPAN_TEXT)
    got = resolver.span(documents[0].ref, path)
    assert got == span
    line, column, end_line, end_column = got
    assert line == end_line
    assert SPAN_TEXT.splitlines()[line - 1][column - 1 : end_column - 1] == text
    assert resolver.resolve(documents[0].ref, path) == (line, column)


def test_findings_carry_their_span() -> None:
    result = lint_text(
        "apiVersion: gateway.networking.k8s.io/v1\nkind: Gateway\nmetadata:\n  name: g\n  namespace: n\nspec:\n  gatewayClassName: missing\n  listeners: []\n"
    )
    (finding,) = only(result, "PL405")
    assert finding.region == (7, 3, 7, 28)


def test_positions_cost_one_pass_per_file_and_one_compose_per_document_with_findings(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # Many findings and notes in one document, one in another, none in a third, and notes in a
    # second file: each file with findings or notes is composed in one pass, which composes each
    # document with findings once, whatever the number of locations asked in it, and each file
    # is read once.
    from policylint.input import positions

    targets = "\n".join(f"  - {{group: gateway.networking.k8s.io, kind: HTTPRoute, name: missing-{i}}}" for i in range(12))
    sections = "\n".join(
        f"  - {{group: gateway.networking.k8s.io, kind: Gateway, name: edge, sectionName: nope-{i}}}" for i in range(8)
    )
    (tmp_path / "policies.yaml").write_text(
        "apiVersion: gateway.envoyproxy.io/v1alpha1\nkind: BackendTrafficPolicy\n"
        f"metadata: {{name: many, namespace: apps}}\nspec:\n  targetRefs:\n{targets}\n"
        "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: quiet, namespace: apps}\n"
        "---\napiVersion: gateway.envoyproxy.io/v1alpha1\nkind: BackendTrafficPolicy\n"
        "metadata: {name: one, namespace: apps}\nspec:\n  targetRefs:\n"
        "  - {group: gateway.networking.k8s.io, kind: HTTPRoute, name: missing}\n"
        "---\napiVersion: gateway.envoyproxy.io/v1alpha1\nkind: ClientTrafficPolicy\n"
        f"metadata: {{name: listeners, namespace: apps}}\nspec:\n  targetRefs:\n{sections}\n",
        encoding="utf-8",
    )
    (tmp_path / "gateway.yaml").write_text(
        "apiVersion: gateway.networking.k8s.io/v1\nkind: Gateway\nmetadata: {name: edge, namespace: apps}\n"
        "spec:\n  gatewayClassName: eg\n  listeners:\n  - {name: http, protocol: HTTP, port: 80}\n"
        "---\napiVersion: gateway.networking.k8s.io/v1\nkind: GatewayClass\nmetadata: {name: eg}\n"
        "spec: {controllerName: gateway.envoyproxy.io/gatewayclass-controller}\n",
        encoding="utf-8",
    )
    composed: list[int] = []
    scanned: list[int] = []
    reads: list[str] = []
    resolvers: list[PositionResolver] = []
    real_get_node = positions.MarkLoader.get_node
    real_init = PositionResolver.__init__

    def counting_get_node(self: positions.MarkLoader) -> yaml.Node | None:
        composed.append(1)
        return real_get_node(self)

    def counting_init(self: PositionResolver, read_text: Callable[[str], str | None], *kept: Any) -> None:
        def read(file: str) -> str | None:
            reads.append(file)
            return read_text(file)

        real_init(self, read, *kept)
        resolvers.append(self)

    real_locate = positions.locate

    def counting_locate(text: str, paths: list[tuple[str | int, ...]]) -> object:
        answers = real_locate(text, paths)
        if answers is not None:
            scanned.append(1)
        return answers

    monkeypatch.setattr(positions.MarkLoader, "get_node", counting_get_node)
    monkeypatch.setattr(positions, "locate", counting_locate)
    monkeypatch.setattr(PositionResolver, "__init__", counting_init)
    result = lint_paths([tmp_path / "policies.yaml", tmp_path / "gateway.yaml"])
    assert len(only(result, "PL201")) == 13
    pl301 = only(result, "PL301")
    assert len(pl301) == 8
    assert {(r.file.rsplit("/", 1)[-1], r.line) for f in pl301 for r in f.related} == {("gateway.yaml", 6)}
    (resolver,) = resolvers
    assert sorted((name.rsplit("/", 1)[-1], n) for name, n in resolver.passes.items()) == [
        ("gateway.yaml", 1),
        ("policies.yaml", 1),
    ]
    # Three policies and one Gateway, not the ConfigMap or the GatewayClass, each once: read from
    # its lines where the paths stay in block style (the Gateway's listener), composed where one
    # goes into a flow mapping (PL201's `name` and PL301's `sectionName` of a `{...}` item).
    assert (len(scanned), len(composed)) == (1, 3)
    assert sorted(name.rsplit("/", 1)[-1] for name in reads) == ["gateway.yaml", "policies.yaml"]


def _key_paths(data: object, parts: tuple[str | int, ...] = ()) -> list[tuple[str | int, ...]]:
    """Every key and item path of a document's data, with paths that go past it."""
    out: list[tuple[str | int, ...]] = [(*parts, "absent")] if parts else []
    if isinstance(data, dict):
        for key, value in data.items():
            out.append((*parts, str(key)))
            out.extend(_key_paths(value, (*parts, str(key))))
    elif isinstance(data, list):
        for i, value in enumerate(data):
            out.append((*parts, i))
            out.extend(_key_paths(value, (*parts, i)))
        out.append((*parts, len(data)))
    return out


@pytest.mark.parametrize(
    "text",
    [
        MULTI,
        BROKEN_FIRST,
        BLOCK + "---\n" + FLOW + "---\n" + LIST,
        MULTI.replace("\n", "\r\n"),
        "--- {kind: A, metadata: {name: a}}\n--- {kind: B, metadata: {name: b}}\n---\nkind: C\nmetadata:\n  name: c\n",
        "kind: A\nmetadata:\n  name: a\n...\n---\n# between\n\nkind: B\nspec:\n  x: [1, 2]\n...\n",
        "---\n---\nkind: A\nspec: {a: 1}\n---\n\n---\nkind: B\nspec:\n  - a\n  - b: c\n    d: e\n",
        "kind: A\nlast: no newline",
    ],
    ids=[
        "multi",
        "syntax-error",
        "block-flow-list",
        "crlf",
        "roots-on-marker-lines",
        "document-ends",
        "empty-documents",
        "no-final-newline",
    ],
)
def test_one_pass_answers_what_each_document_composed_alone_answers(text: str) -> None:
    """`prefetch` composes the documents asked about one after the other in one pass: every path
    of every document, or of every other one, gets the span composing the document alone gives."""
    documents, alone = _docs(text)
    assert documents
    documents = [d for d in documents if d.data is not None]
    for step in (1, 2):
        asked = documents[::step]
        requests = [(d.ref, parts) for d in asked for parts in _key_paths(d.data)]
        assert requests
        _, batch = _docs(text)
        batch.prefetch(requests)
        assert batch.passes == {"f.yaml": 1}
        spans = [batch.span(ref, parts) for ref, parts in requests]
        assert batch.passes == {"f.yaml": 1}  # every answer came from the pass
        assert spans == [alone.span(ref, parts) for ref, parts in requests]


# -- block style read from the lines (`policylint.input.blockpaths`) -----------------------------

Answer = tuple[int, int, int | None]


def _node_paths(node: yaml.Node, parts: tuple[str | int, ...] = (), flow: bool = True) -> list[tuple[str | int, ...]]:
    """Every key and item path of a composed document, with paths that go past it; with
    `flow` False, none into a flow collection."""
    out: list[tuple[str | int, ...]] = [(*parts, "absent"), (*parts, 0)] if parts else []
    if not flow and getattr(node, "flow_style", False):
        return []
    if isinstance(node, yaml.MappingNode):
        for key, value in node.value:
            if isinstance(key, yaml.ScalarNode):
                out.append((*parts, key.value))
                out.extend(_node_paths(value, (*parts, key.value), flow))
    elif isinstance(node, yaml.SequenceNode):
        for i, value in enumerate(node.value):
            out.append((*parts, i))
            out.extend(_node_paths(value, (*parts, i), flow))
        out.append((*parts, len(node.value)))
    return out


def _composed(text: str) -> yaml.Node | None:
    loader = positions.MarkLoader(text)
    try:
        return loader.get_node() if loader.check_node() else None
    finally:
        loader.dispose()


def _libyaml_answers(node: yaml.Node, paths: list[tuple[str | int, ...]]) -> list[Answer]:
    """What composing gives each path: (line, column) of its mark, and the end column of its
    span when the span ends on that line (`positions._walk`)."""
    out: list[Answer] = []
    for parts in paths:
        mark, end = positions._walk(node, parts)
        out.append((mark.line, mark.column, end.column if end is not None and end.line == mark.line else None))
    return out


def _agrees(text: str, flow: bool = True) -> bool | None:
    """Whether the block reader answers every path of the document in `text` (with `flow`
    False, but those into flow collections) as libyaml's marks do; None when it declines (or
    libyaml refuses the text)."""
    try:
        node = _composed(text)
    except yaml.YAMLError:
        return None
    if node is None:
        return None
    paths = _node_paths(node, flow=flow)
    got = blockpaths.locate(text, paths)
    if got is None:
        return None
    assert got == _libyaml_answers(node, paths), text
    return True


@pytest.mark.slow  # every YAML document of the repository
def test_block_reader_agrees_with_libyaml_on_every_document_of_the_tests_and_examples() -> None:
    # Every document of every YAML file here, cut as `PositionResolver` cuts it (from its root's
    # line to the next `---`): the reader takes most and answers every path of those exactly.
    taken = declined = 0
    files = sorted({*ROOT.glob("tests/**/*.yaml"), *ROOT.glob("tests/**/*.yml"), *ROOT.glob("examples/**/*.yaml")})
    for path in files:
        try:
            raw = path.read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            continue
        text = printable(raw)[0]
        starts = positions._line_starts(text)
        for document in parse_text(raw, str(path)).documents:
            if document.data is None or not 0 < document.ref.line <= len(starts):
                continue
            piece = positions._document_text(text, starts[document.ref.line - 1])
            if _agrees(piece if piece.endswith("\n") else piece + "\n"):
                taken += 1
            else:
                declined += 1
    assert taken > 3_000
    assert taken > 5 * declined


_KEYS = st.sampled_from(
    ["a", "name", "kind", "x y", "it's", "1", "true", "null", "a:b", "k#", "é", "-d", "app.kubernetes.io/name", ""]
)
_SCALARS = st.one_of(
    _KEYS,
    st.none(),
    st.booleans(),
    st.integers(min_value=-5, max_value=70_000),
    st.text(alphabet="ab :#-'\"*&!|>[]{}\n\té", max_size=12),
    st.sampled_from(["long " * 20, "0777", "yes", "- x", "? y", "a: b", "#c", "x #c"]),
)
_VALUES = st.recursive(
    _SCALARS,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(_KEYS, inner, max_size=4)),
    max_leaves=24,
)


@st.composite
def _block_documents(draw: st.DrawFn) -> str:
    """A mapping dumped in block style by PyYAML (plain, quoted and folded scalars, indentless
    lists), with comments and blank lines put between lines and after values, and lists
    indented or not."""
    data = draw(st.dictionaries(_KEYS, _VALUES, min_size=1, max_size=5))
    text = yaml.safe_dump(
        data,
        default_flow_style=draw(st.sampled_from([False, False, None])),
        indent=draw(st.sampled_from([2, 3, 4])),
        width=draw(st.sampled_from([16, 80, 4096])),
        allow_unicode=draw(st.booleans()),
        default_style=draw(st.sampled_from([None, None, None, "'", '"'])),
        sort_keys=False,
    )
    if draw(st.booleans()):
        text = text.replace("\n- ", "\n  - ")
    lines = text.split("\n")
    for _ in range(draw(st.integers(min_value=0, max_value=4))):
        at = draw(st.integers(min_value=1, max_value=len(lines) - 1))
        if draw(st.booleans()):
            lines.insert(
                at, " " * draw(st.integers(min_value=0, max_value=6)) + draw(st.sampled_from(["# c", "", "#- a: 'b", "   "]))
            )
        elif lines[at - 1].strip() and not lines[at - 1].rstrip().endswith(("|", ">", "|-", ">-", "|+", ">+")):
            lines[at - 1] += "  # note"
    return "\n".join(lines)


@examples(100, 400)
@given(_block_documents(), st.booleans())
def test_block_reader_agrees_with_libyaml_on_random_block_documents(text: str, flow: bool) -> None:
    _agrees(text, flow)


@pytest.mark.parametrize(
    "text",
    [
        # An empty value is marked where its `:` ends (`key:` spans to there).
        "a: 1\nspec:\nb:   # c\n",
        # Lists at their key's indentation, or deeper; a compact mapping as an item.
        "a:\n- x\n- k: 1\n  j: 2\nb: 1\n",
        "a:\n    -   k: 1\n        j: [1, 2]\n    - 'q'\n",
        # Duplicate keys: the last one is the data's.
        "a: 1\nb: 2\na: 3\n",
        # Quoted keys; a value quoted, with a comment; `#` inside a plain scalar.
        "'it''s': 1\n\"app.io/n\": 'x # y'  # z\nc: a#b #c\n",
        # A plain scalar that goes on over the next lines, and one that a comment ends.
        "a: one\n  two\nb: three\n  # c\nc: 1\n",
        # A block scalar whose content looks like keys, quotes and flow.
        "a: |\n  b: 'unclosed\n  - [\n  # x\nb: >-\n\n   text\nc: 1\n",
        # Flow collections that close on their line.
        "a: []\nb: {}\nc: [x, {y: z}]\n",
        # Comments at any indentation, blank lines.
        "a:\n# c\n  b:\n\n      # d\n    c: 1\n",
    ],
)
def test_block_reader_takes_these_and_agrees_with_libyaml(text: str) -> None:
    assert _agrees(text, flow=False)


@pytest.mark.parametrize(
    "text",
    [
        "a: 'one\n  two'\nb: 1\n",  # a quoted scalar over two lines
        "a: [1,\n  2]\nb: 1\n",  # a flow collection over two lines
        "a: &x 1\nb: *x\n",  # an anchor, an alias
        "a: !!str 1\n",  # a tag
        "? a\n: 1\n",  # a complex key
        "a:\n- - 1\n",  # a nested compact list
        "a: |2\n   x\n",  # a block scalar with an explicit indentation
        "a:\n  text on its own line\n",  # a scalar starting on a later line
        "a:\n-\n- 1\n",  # an empty item
        "a:\tb\n",  # a tab
        '"a\\x41": 1\n',  # an escape in a double-quoted key
        "--- [a, b]\n",  # a root on a document marker's line
    ],
)
def test_block_reader_declines_what_a_line_does_not_tell(text: str) -> None:
    node = _composed(text)
    assert node is not None
    assert blockpaths.locate(text, _node_paths(node)) is None


def test_block_reader_declines_a_path_into_a_flow_collection() -> None:
    text = "a: {b: 1}\nc: [x]\n"
    assert blockpaths.locate(text, [("a",), ("c",)]) == [(0, 0, 1), (1, 0, 1)]
    assert blockpaths.locate(text, [("a", "b")]) is None
    assert blockpaths.locate(text, [("c", 0)]) is None


def test_the_resolver_keeps_a_few_files_texts_and_reads_one_it_let_go_again() -> None:
    names = [f"f{i:02d}.yaml" for i in range(20)]
    documents = {name: parse_text(MULTI, name).documents for name in names}
    calls: list[str] = []

    def read(name: str) -> str:
        calls.append(name)
        return MULTI

    resolver = PositionResolver(read)
    resolver.prefetch((doc.ref, "metadata.name") for name in names for doc in documents[name])
    assert calls == names  # one read per file for the whole batch
    # What is held afterwards is a few files' texts, not every file's: a repository's texts at
    # once were the peak of a large run.
    assert len(resolver._files) <= 8
    expected = [resolver.resolve(doc.ref, "metadata.name") for doc in documents["f00.yaml"]]
    # A request outside the batch, in a file let go: read again, the same answer as one text alone.
    for doc, position in zip(documents["f00.yaml"], expected, strict=True):
        assert resolver.resolve(doc.ref, "metadata.labels") == _docs(MULTI, "f00.yaml")[1].resolve(doc.ref, "metadata.labels")
        assert position == _docs(MULTI, "f00.yaml")[1].resolve(doc.ref, "metadata.name")
    assert calls == [*names, "f00.yaml"]
