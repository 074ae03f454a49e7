"""A collection converted once per text for the run (docs/performance.md "Collections taken again
by their text"): the same text at the same column gives the value converted before, without
walking its nodes, counted; what it reports is reported at every place; the tag directives and
aliases that give one text two values keep it apart; the data, findings and node bound are those
of the conversion that takes nothing again, on every YAML file of the repository and on random
documents that repeat their parts at other columns and in other styles."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from policylint.input import bounds, convert
from policylint.input.convert import Converter
from policylint.input.document import Shared
from policylint.input.load import parse_text

ROOT = Path(__file__).resolve().parents[2]

SERVICES = """\
kind: Service
metadata: {name: a}
spec:
  ports:
  - name: http
    port: 80
  - name: https
    port: 443
---
kind: Service
metadata: {name: b}
spec:
  ports:
  - name: http
    port: 80
  - name: https
    port: 443
"""


def _counting(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The maps converted pair by pair: one count per call of `Converter._mapping`."""
    calls: list[int] = []
    original = Converter._mapping

    def counting(self: Converter, node: Any) -> dict[str, Any]:
        calls.append(len(node.value))
        return original(self, node)

    monkeypatch.setattr(Converter, "_mapping", counting)
    return calls


def _typed(value: Any) -> Any:
    """`value` with each scalar's type written beside it: `True` is not `1`, nor `1.0`."""
    if isinstance(value, dict):
        return {k: _typed(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_typed(v) for v in value]
    return [type(value).__name__, value]


def _parsed(texts: list[str]) -> str:
    """Every document and finding of `texts`, parsed in turn with one table for the run."""
    strings: Shared = {}
    out = []
    for i, text in enumerate(texts):
        result = parse_text(text, f"f{i}.yaml", strings)
        out.append(
            {
                "documents": [[d.ref.line, d.ref.column, _typed(d.data)] for d in result.documents],
                "issues": [[x.rule_id, x.location and (x.location.line, x.location.column), x.message] for x in result.issues],
            }
        )
    return json.dumps(out, sort_keys=True, default=repr)


def _both(texts: list[str]) -> tuple[str, str]:
    """`texts` parsed as the loader does, and with no collection taken again."""
    taken = _parsed(texts)
    with pytest.MonkeyPatch.context() as m:
        m.setattr(convert, "SPAN_MAX", -1)
        walked = _parsed(texts)
    return taken, walked


def test_a_collection_written_again_is_converted_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """The second Service's `spec` is the first one's text at the same column: its map and the
    two ports' maps are not walked again. The first Service converts its root, `metadata`,
    `spec` and the two ports (5 maps), the second only its root and `metadata` (2)."""
    calls = _counting(monkeypatch)
    result = parse_text(SERVICES, "f.yaml")
    assert len(calls) == 7
    first, second = (d.data for d in result.documents)
    ports = [{"name": "http", "port": 80}, {"name": "https", "port": 443}]
    assert first == {"kind": "Service", "metadata": {"name": "a"}, "spec": {"ports": ports}}
    assert second == {"kind": "Service", "metadata": {"name": "b"}, "spec": {"ports": ports}}
    assert second["spec"] is first["spec"]
    calls.clear()
    with monkeypatch.context() as m:
        m.setattr(convert, "SPAN_MAX", -1)
        parse_text(SERVICES, "f.yaml")
    assert len(calls) == 10


def test_the_run_takes_a_collection_another_file_wrote() -> None:
    """The table is the run's: the second file's `spec` is the first file's object."""
    strings: Shared = {}
    first = parse_text("spec: {ports: [80, 443]}\n", "a.yaml", strings).documents[0].data
    second = parse_text("kind: x\nspec: {ports: [80, 443]}\n", "b.yaml", strings).documents[0].data
    assert second == {"kind": "x", "spec": {"ports": [80, 443]}}
    assert second["spec"] is first["spec"]


def test_what_a_collection_reports_is_reported_at_every_place(monkeypatch: pytest.MonkeyPatch) -> None:
    """A duplicate key and a number JSON cannot hold, in a map written twice: each found at both
    places, lines 2, 3, 6 and 7."""
    text = "a:\n  x: 1\n  x: .inf\n---\nb:\n  x: 1\n  x: .inf\n"
    result = parse_text(text, "f.yaml")
    found = sorted((i.rule_id, i.location.line) for i in result.issues if i.location is not None)
    assert found == [("PL001", 3), ("PL001", 7), ("PL002", 3), ("PL002", 7)]
    taken, walked = _both([text])
    assert taken == walked


def test_a_tag_directive_gives_one_text_two_values() -> None:
    """`!e!int` is `!!int` under the first document's `%TAG` and a tag of its own under the
    second's: the same text `{port: !e!int "8"}` is 8, then "8" (an unknown tag keeps the text)."""
    text = (
        '%TAG !e! tag:yaml.org,2002:\n---\na: {port: !e!int "8"}\n'
        '...\n%TAG !e! tag:example.com,2000:\n---\nb: {port: !e!int "8"}\n'
    )
    data = [d.data for d in parse_text(text, "f.yaml").documents]
    assert data == [{"a": {"port": 8}}, {"b": {"port": "8"}}]


def test_an_alias_gives_one_text_two_values() -> None:
    """`{ref: *b}` is whatever the anchor `b` was last: a map holding 1, then 2."""
    text = "a: &b {p: 1}\nx: {ref: *b}\n---\na: &b {p: 2}\nx: {ref: *b}\n"
    data = [d.data for d in parse_text(text, "f.yaml").documents]
    assert data == [{"a": {"p": 1}, "x": {"ref": {"p": 1}}}, {"a": {"p": 2}, "x": {"ref": {"p": 2}}}]


def test_a_collection_longer_than_the_bound_is_walked(monkeypatch: pytest.MonkeyPatch) -> None:
    """A map whose text is longer than `SPAN_MAX` is converted at each place: its one pair (1 map
    each time), below roots that differ (2 maps)."""
    value = "v" * convert.SPAN_MAX
    text = f"a:\n  k: {value}\n---\nb:\n  k: {value}\n"
    calls = _counting(monkeypatch)
    data = [d.data for d in parse_text(text, "f.yaml").documents]
    assert data == [{"a": {"k": value}}, {"b": {"k": value}}]
    assert calls == [1, 1, 1, 1]


@pytest.mark.parametrize("limit", range(0, 40, 3))
def test_the_file_node_bound_counts_collections_taken_again(limit: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """A collection taken again adds the nodes it added the first time: the bound on a file's
    nodes stops at the document where walking every node stops."""
    monkeypatch.setattr(bounds, "MAX_FILE_NODES", limit)
    text = SERVICES + "---\n" + SERVICES
    taken, walked = _both([text])
    assert taken == walked
    if limit < 20:
        assert "PL007" in taken


def _texts(*folders: str) -> list[str]:
    files = sorted(p for d in folders for p in (ROOT / d).rglob("*.y*ml") if p.is_file())
    return [path.read_text(encoding="utf-8", errors="replace") for path in files]


def test_the_examples_parse_as_walked() -> None:
    """The example repository's files, one run reading them in turn (collections taken from
    other files too): the documents, their types and the findings are those of a conversion
    that walks every node."""
    texts = _texts("examples")
    assert len(texts) > 10
    taken, walked = _both(texts)
    assert taken == walked


@pytest.mark.slow  # every YAML file of the tests: about two minutes
def test_every_yaml_file_of_the_tests_parses_as_walked() -> None:
    """The same over every YAML file of the tests and the examples (syntax errors, duplicate
    keys, alias bombs, templates, CRDs)."""
    texts = _texts("tests", "examples")
    assert len(texts) > 200
    taken, walked = _both(texts)
    assert taken == walked


_SCALARS = st.sampled_from(["80", "'80'", "true", "yes", "x", '"x"', "~", "0777", "1.5", "a b", ".inf", "<<"])
_KEYS = st.sampled_from(["a", "b", "c", "<<", "port"])
_VALUES = st.recursive(
    _SCALARS,
    lambda children: st.lists(children, min_size=1, max_size=3) | st.dictionaries(_KEYS, children, min_size=1, max_size=3),
    max_leaves=8,
)


def _block(value: Any, indent: int, flow: bool) -> str:
    """`value` as YAML text at `indent`, scalars as written in `_SCALARS` (YAML's own forms)."""
    if isinstance(value, str):
        return value
    if flow:
        if isinstance(value, list):
            return "[" + ", ".join(_block(v, indent, True) for v in value) + "]"
        return "{" + ", ".join(f"{k}: {_block(v, indent, True)}" for k, v in value.items()) + "}"
    pad = " " * indent
    lines = []
    items = [("- ", v) for v in value] if isinstance(value, list) else [(f"{k}: ", v) for k, v in value.items()]
    for lead, v in items:
        if isinstance(v, str) or not v:
            lines.append(f"{pad}{lead}{_block(v, indent + 2, flow)}")
        else:
            lines.append(f"{pad}{lead.rstrip()}\n{_block(v, indent + 2, flow)}")
    return "\n".join(lines)


@settings(max_examples=150, deadline=None)
@given(
    parts=st.lists(_VALUES, min_size=1, max_size=3),
    placing=st.lists(st.tuples(st.integers(0, 2), st.integers(0, 2), st.booleans()), min_size=2, max_size=8),
)
def test_random_documents_that_repeat_their_parts_parse_as_walked(parts: list[Any], placing: list[tuple[int, int, bool]]) -> None:
    """Documents made of a few parts written again and again, at other depths and in block or
    flow style, with duplicate keys, merge keys, numbers JSON cannot hold and quoted numbers
    among them: the same documents and findings as a conversion that walks every node."""
    documents = []
    for part, depth, flow in placing:
        value = parts[part % len(parts)]
        body = _block({"k": value}, 0, flow) if isinstance(value, str) else _block(value, 0, flow)
        for level in range(depth):
            body = f"n{level}:\n" + "\n".join("  " + line for line in body.splitlines())
        documents.append(body)
    text = "\n---\n".join(documents) + "\n"
    taken, walked = _both([text, text])
    assert taken == walked
