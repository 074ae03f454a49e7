"""Everything one input can make the loader do is bounded, and reported where it happens.

The loader's limits (module constants of policylint.input.load, listed in
rules/PL007-input-resource-limit.md): documents per file, documents skipped per file,
nodes per document and per file, what YAML aliases add (nodes, characters, depth),
integers within int64, keys that are collections shown as bounded text; and the
engine's findings per file. Each limit is checked here twice: in-process with the
limit made small (exact lines and columns, the other documents still loaded), and
for the hostile files of the security review at full size, in a subprocess that
must finish within a generous time and within 300 MB of peak memory.
"""

from __future__ import annotations

import json
import os
import random
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml
from yaml.nodes import SequenceNode

from policylint.findings import Severity
from policylint.input import bounds, cache, convert, load, prescan, templates
from policylint.input.bounds import INT_MAX, INT_MIN, MAX_DEPTH
from policylint.input.load import parse_text
from policylint.input.positions import PositionResolver
from policylint.rules import engine
from tests.hostile.test_hostile_inputs import GOOD
from tests.lintutil import ROOT, lint_paths, lint_text, only


def _issues(result: load.FileResult) -> list[tuple[str, int, int]]:
    return [(i.rule_id, i.location.line, i.location.column) for i in result.issues if i.location is not None]


def _names(result: load.FileResult) -> list[str]:
    return [d.data["metadata"]["name"] for d in result.documents if isinstance(d.data, dict) and "metadata" in d.data]


def _good(name: str) -> str:
    return GOOD.replace("neighbour", name)


# -- template markers: a scanner instead of a backtracking regex ------------------------------------

_OLD_TEMPLATE = re.compile(r"\{\{-?\s*.*?\s*-?\}\}")


def test_the_template_scanner_finds_what_the_old_pattern_found() -> None:
    # On short strings the old pattern is cheap, so the two can be compared on many of them:
    # same start, same text, for every mix of braces, dashes, spaces and line breaks.
    rng = random.Random(7)
    alphabet = ["{{", "}}", "{", "}", "-", " ", "\n", "x", "\t", "\u2028", "\r"]
    found = 0
    for _ in range(20_000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 14)))
        match = _OLD_TEMPLATE.search(text)
        expected = None
        if match is not None:
            line = text.count("\n", 0, match.start()) + 1
            column = match.start() - (text.rfind("\n", 0, match.start()) + 1) + 1
            expected = (line, column, match.group(0)[:60])
            found += 1
        assert templates._template_marker(text) == expected, repr(text)
    assert found > 1000  # the comparison covered both outcomes


@pytest.mark.parametrize(
    ("text", "where"),
    [
        ("a: '{{ .Values.a }}'\n", (1, 5)),
        ("a: |\n  {{-\n    .Values.a\n  -}}\n", (2, 3)),  # whitespace next to the braces spans lines
        ("a: '{{ x {{'\nb: '{{\n  y }}'\n", (2, 5)),  # the first `{{` never closes on its line
        ("a: '{{ x'\nb: 'y }}'\n", None),  # an action does not span lines
        ('a: "{{' + " " * 5000 + '"\n', None),  # the issue's input: no `}}` at all
    ],
)
def test_template_markers_where_they_are(text: str, where: tuple[int, int] | None) -> None:
    # In a ConfigMap (markers in a core kind's values count; a document with neither apiVersion
    # nor kind is no object, and its markers do not), its kind after the values.
    text += "apiVersion: v1\nkind: ConfigMap\n"
    markers = [
        (i.location.line, i.location.column) for i in parse_text(text, "f.yaml").issues if i.rule_id == "PL004" and i.location
    ]
    assert markers == ([where] if where else [])


# -- integers: every form, bounded to int64 --------------------------------------------------------------

_IN_RANGE = [
    ("0", 0),
    ("42", 42),
    ("-42", -42),
    ("+42", 42),
    ("1_000", 1000),
    ("0x1F", 31),
    ("-0x10", -16),
    ("0b1010", 10),
    ("017", 15),  # YAML 1.1 octal
    ("190:20:30", 190 * 3600 + 20 * 60 + 30),  # sexagesimal
    ("9223372036854775807", 2**63 - 1),
    ("-9223372036854775808", -(2**63)),
    ("0x7fffffffffffffff", 2**63 - 1),
    ("0x" + "0" * 5000 + "1", 1),  # leading zeros are not digits that count
    ("0b" + "1" * 63, 2**63 - 1),
]


@pytest.mark.parametrize(("text", "value"), _IN_RANGE, ids=[t[:24] for t, _ in _IN_RANGE])
def test_integers_within_int64_are_read_in_every_form(text: str, value: int) -> None:
    result = parse_text(f"v: {text}\n", "f.yaml")
    assert result.issues == []
    assert result.documents[0].data["v"] == value
    assert yaml.safe_load(f"v: {text}\n")["v"] == value  # as PyYAML itself reads it


_OUT_OF_RANGE = [
    "9223372036854775808",
    "-9223372036854775809",
    "0x8000000000000000",
    "0x" + "f" * 5000,  # the issue: 20 rules crashed formatting it
    "0b1" + "0" * 64,
    "0" + "7" * 30,
    "1:" * 20_000 + "1",
    "1_" * 5000 + "1",
    "9" * 10_000,
    "-0x" + "1" * 17,
]


@pytest.mark.parametrize("text", _OUT_OF_RANGE, ids=[t[:24] for t in _OUT_OF_RANGE])
def test_integers_beyond_int64_are_kept_as_text_and_reported(text: str) -> None:
    result = parse_text(f"a: 1\nv: {text}\n", "f.yaml")
    assert result.documents[0].data["v"] == text
    (issue,) = result.issues
    assert (issue.rule_id, issue.location and (issue.location.line, issue.location.column)) == ("PL001", (2, 4))
    assert "does not fit in 64 bits" in issue.message and len(issue.message) < 200


def test_explicit_int_forms() -> None:
    result = parse_text("a: !!int 0o17\nb: !!int forty\nc: !!int 0x\n", "f.yaml")
    assert result.documents[0].data == {"a": 15, "b": "forty", "c": "0x"}
    assert [(i.location.line if i.location else 0, "not a valid int" in i.message) for i in result.issues] == [
        (2, True),
        (3, True),
    ]


def test_no_integer_outgrows_64_bits_whatever_its_form() -> None:
    """Random integer texts in every form and length: each is an int64 or text plus a PL001."""
    rng = random.Random(13)
    forms = [
        lambda d: d,
        lambda d: "0x" + "".join(rng.choice("0123456789abcdef") for _ in d),
        lambda d: "0b" + "".join(rng.choice("01") for _ in d),
        lambda d: "0" + "".join(rng.choice("01234567") for _ in d),
        lambda d: "!!int 0o" + "".join(rng.choice("01234567") for _ in d),
        lambda d: "1" + "".join(f":{rng.randint(0, 59)}" for _ in d[: max(1, len(d) // 2)]),
        lambda d: "_".join(d),
    ]
    for _ in range(2000):
        digits = "".join(rng.choice("123456789") for _ in range(rng.randint(1, 45)))
        text = rng.choice(["", "-", "+"]) + rng.choice(forms)(digits)
        if text[0] in "+-" and text[1:].startswith("!!"):
            text = text[1:]
        result = parse_text(f"v: {text}\n", "f.yaml")
        (doc,) = result.documents
        value = doc.data["v"]
        if isinstance(value, int):
            assert INT_MIN <= value <= INT_MAX, text
            assert str(value) and f"{value:,}"  # never too many digits to print
        else:
            assert isinstance(value, str) and [i.rule_id for i in result.issues] == ["PL001"], text


@pytest.mark.parametrize("text", [".inf", "-.inf", ".nan", ".NaN", "1.0e+999999", "-1.5e+400"])
def test_floats_json_cannot_hold_are_kept_as_text_and_reported(text: str) -> None:
    result = parse_text(f"v: {text}\n", "f.yaml")
    assert result.documents[0].data["v"] == text
    (issue,) = result.issues
    assert issue.rule_id == "PL001" and "not a finite number" in issue.message


def test_finite_floats_of_any_length_are_read() -> None:
    result = parse_text("a: 1.5\nb: 1." + "1" * 100_000 + "\nc: 1.0e+10\n", "f.yaml")
    assert result.issues == []
    assert result.documents[0].data == {"a": 1.5, "b": pytest.approx(1.1111111111111112), "c": 1e10}


def test_huge_ports_are_findings_not_rule_failures() -> None:
    huge = "0x" + "f" * 5000
    text = (
        "apiVersion: v1\nkind: Service\nmetadata:\n  name: web\n  namespace: app\nspec:\n  ports:\n"
        f"  - name: http\n    port: {huge}\n"
        "---\napiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\nmetadata:\n  name: r\n  namespace: app\n"
        f"spec:\n  rules:\n  - backendRefs:\n    - name: web\n      port: {huge}\n"
    )
    result = lint_text(text)
    assert not result.internal_error
    assert [f.rule for f in result.findings if f.rule == "PL000"] == []
    assert [(f.line, f.column) for f in only(result, "PL001")] == [(9, 11), (20, 13)]
    assert all(len(f.message) < 2000 for f in result.findings)


# -- keys that are collections ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "key", "where"),
    [
        ("{[1, 2]: x}\n", "[1, 2]", (1, 2)),
        ("{a: 0, {b: 1}: y}\n", "{b: 1}", (1, 8)),
        ("? [a, b]\n: c\n", "[a, b]", (1, 3)),
        ('? {a: [1, {b: "x:y"}], c: [d e]}\n: z\n', '{a: [1, {b: "x:y"}], c: ["d e"]}', (1, 3)),
    ],
)
def test_a_collection_key_is_reported_and_shown_as_flow_text(text: str, key: str, where: tuple[int, int]) -> None:
    result = parse_text(text, "f.yaml")
    assert key in result.documents[0].data
    (issue,) = list(result.issues)
    assert (issue.rule_id, issue.location and (issue.location.line, issue.location.column)) == ("PL001", where)
    assert "mapping key must be a string" in issue.message and repr(key) in issue.message


def test_a_long_collection_key_is_cut() -> None:
    result = parse_text("? [" + "abcd, " * 1000 + "e]\n: x\n", "f.yaml")
    (key,) = result.documents[0].data
    assert len(key) == bounds.MAX_KEY_TEXT and key.startswith("[abcd, abcd") and key.endswith("...")
    assert len(result.issues[0].message) < 300


def test_flow_text_stops_at_its_limit_even_on_a_node_that_contains_itself() -> None:
    node = SequenceNode("tag:yaml.org,2002:seq", [])
    node.value.append(node)
    assert convert.flow_text(node, 20) == "[[[[[[[[[[[[[[[[[..."


def test_a_key_built_from_an_alias_bomb_is_never_expanded_to_text() -> None:
    # Within the alias budgets (so the document is read): a key whose full text would be
    # 300 x 300 x 1,000 characters.
    text = "a: &a [" + ", ".join(['"' + "x" * 10 + '"'] * 300) + "]\nb: &b [" + ", ".join(["*a"] * 300) + "]\n? *b\n: 1\n"
    result = parse_text(text, "f.yaml")
    keys = [k for k in result.documents[0].data if k not in ("a", "b")]
    assert len(keys) == 1 and len(keys[0]) == bounds.MAX_KEY_TEXT
    assert [i.rule_id for i in result.issues] == ["PL001"]


# -- merge keys ----------------------------------------------------------------------------------------------


def test_merge_sources_that_are_not_mappings_are_reported() -> None:
    text = 'base: &b {x: 1}\na:\n  <<: 5\n  y: 2\nb:\n  <<: [*b, 1, x]\nc:\n  <<: "str"\nd:\n  <<: *b\n'
    result = parse_text(text, "f.yaml")
    data = result.documents[0].data
    assert (data["a"], data["b"], data["c"], data["d"]) == ({"y": 2}, {"x": 1}, {}, {"x": 1})
    assert _issues(result) == [("PL001", 3, 7), ("PL001", 6, 12), ("PL001", 6, 15), ("PL001", 8, 7)]
    assert all("merge key `<<` needs a mapping or a list of mappings" in i.message for i in result.issues)


# -- a byte order mark at the start of a later document ------------------------------------------------


@pytest.mark.parametrize("newline", ["\n", "\r\n"])
def test_a_byte_order_mark_may_start_any_document(newline: str) -> None:
    text = (_good("first") + "---\n\ufeff" + _good("second") + "\ufeff---\n" + _good("third")).replace("\n", newline)
    result = parse_text(text, "f.yaml")
    assert result.issues == []
    assert _names(result) == ["first", "second", "third"]
    second = result.documents[1].ref
    assert (second.line, second.column) == (13, 1)  # the mark is not a column
    resolver = PositionResolver(lambda _: text)
    assert resolver.resolve(second, "kind") == (14, 1)
    assert resolver.resolve(second, "spec.ports[0].port") == (23, 5)
    assert resolver.resolve(result.documents[2].ref, "metadata.name") == (28, 3)


def test_a_byte_order_mark_inside_a_document_is_still_an_error() -> None:
    assert _issues(parse_text("a: 1\n\ufeffb: 2\n", "f.yaml")) == [("PL001", 2, 2)]


def test_a_document_after_a_byte_order_mark_is_linted(tmp_path: Path) -> None:
    (tmp_path / "two.yaml").write_bytes(("---\n" + _good("a") + "---\n\ufeff" + _good("b")).encode())
    result = lint_paths([tmp_path])
    assert result.findings == []
    assert sorted(str(o.key) for o in result.index.objects) == ["Service app/a", "Service app/b"]


# -- aliases: characters, depth, per file ------------------------------------------------------------------


def _amplified(copies: int, length: int = 100_000) -> str:
    return "a: &a " + "x" * length + "\nb: [" + ", ".join(["*a"] * copies) + "]\n"


def test_aliases_that_multiply_text_are_refused_and_only_their_document_is_skipped() -> None:
    # 100 copies of 100,000 characters: 10 MB of text from a 100 KB document.
    text = _good("before") + "---\n" + _amplified(100) + "---\n" + _good("after")
    result = parse_text(text, "f.yaml")
    assert _names(result) == ["before", "after"]
    (issue,) = result.issues
    assert (issue.rule_id, issue.location and issue.location.line) == ("PL007", 13)
    assert "characters of text" in issue.message and "alias" in issue.message


def test_aliases_within_the_character_budget_are_shared_not_copied() -> None:
    result = parse_text(_amplified(50), "f.yaml")  # 5 MB
    assert result.issues == []
    copies = result.documents[0].data["b"]
    assert len(copies) == 50 and all(c is copies[0] for c in copies)


def test_the_alias_budgets_are_the_files() -> None:
    # Each document alone is within the budget; together they are not: the second is skipped.
    text = _amplified(50) + "---\n" + _amplified(50) + "---\n" + _good("after")
    result = parse_text(text, "f.yaml")
    assert [i.rule_id for i in result.issues] == ["PL007"]
    assert len(result.documents) == 2 and _names(result) == ["after"]


def _alias_depth(inner: int, outer: int) -> str:
    # The root mapping is level 1, `b`'s sequences levels 2..outer+1, then the aliased anchor's.
    return "a: &a " + "[" * inner + "]" * inner + "\nb: " + "[" * outer + "*a" + "]" * outer + "\n"


def test_depth_counts_what_aliases_nest() -> None:
    assert parse_text(_alias_depth(200, MAX_DEPTH - 201), "f.yaml").issues == []  # 256 levels
    result = parse_text(_alias_depth(200, MAX_DEPTH - 200), "f.yaml")  # 257 levels
    assert result.documents == []
    (issue,) = result.issues
    assert issue.rule_id == "PL007" and "once YAML aliases are expanded" in issue.message


def test_depth_through_a_chain_of_aliases() -> None:
    # Each anchor nests the previous one 100 levels deeper: written depth 101, expanded 1,000+.
    lines = ["a0: &a0 " + "[" * 100 + "]" * 100]
    for i in range(1, 10):
        lines.append(f"a{i}: &a{i} " + "[" * 100 + f"*a{i - 1}" + "]" * 100)
    result = parse_text("\n".join(lines) + "\n", "f.yaml")
    assert [i.rule_id for i in result.issues] == ["PL007"] and result.documents == []


# -- documents, nodes, skipped documents -------------------------------------------------------------------


def _services(count: int) -> str:
    return "".join("---\n" + _good(f"s{i}") for i in range(count))


def test_documents_past_the_limit_are_not_read(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(bounds, "MAX_DOCUMENTS", 5)
    result = parse_text(_services(7), "f.yaml")
    assert _names(result) == ["s0", "s1", "s2", "s3", "s4"]
    (issue,) = result.issues
    # Document 6 starts at line 12 * 5 + 1 (its `---`); its root node on the next line.
    assert (issue.rule_id, issue.location and issue.location.line) == ("PL007", 62)
    assert "more than 5 documents" in issue.message


def test_a_document_with_too_many_nodes_is_skipped_before_it_is_composed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(bounds, "MAX_DOCUMENT_NODES", 50)
    composed: list[int] = []
    real_loader = load.LOADER

    class Spy(real_loader):  # type: ignore[valid-type,misc]
        def get_node(self) -> object:
            node = super().get_node()
            composed.append(node.start_mark.line if node is not None else -1)
            return node

    monkeypatch.setattr(load, "LOADER", Spy)
    text = _good("before") + "---\nitems: [" + "1, " * 60 + "1]\n---\n" + _good("after")
    result = parse_text(text, "f.yaml")
    assert _names(result) == ["before", "after"]
    # Node 51 of the second document: the mapping, `items`, the sequence, then the 48th `1`.
    assert _issues(result) == [("PL007", 13, len("items: [") + 3 * 47 + 1)]
    assert "more than 50 YAML nodes in one document" in result.issues[0].message
    assert 12 not in composed  # the big document (0-based line 12) was never composed


def test_the_node_bound_holds_for_any_text() -> None:
    """`_node_bound` decides whether a document must be counted: it must never be below the
    node count, for any text (random soup of YAML's indicators, and real manifests)."""
    rng = random.Random(5)
    tokens = [
        *"abc: -[]{},'\"&*!|>#?%@`\n\t\r.",
        "---\n",
        "...\n",
        "? ",
        "- ",
        ": ",
        "&a ",
        "*a",
        "x\r",
        "\u2028",
        "{a, b}",
        "[a: b]",
    ]
    texts = ["".join(rng.choice(tokens) for _ in range(rng.randint(0, 80))) for _ in range(5000)]
    texts += [p.read_text() for p in sorted((ROOT / "examples").rglob("*.yaml"))]
    for text in texts:
        loader = load.LOADER(text)
        counts: list[int] = []
        try:
            while True:
                event = loader.get_event()
                if event is None or isinstance(event, yaml.StreamEndEvent):
                    break
                if isinstance(event, yaml.DocumentStartEvent):
                    counts.append(0)
                elif isinstance(event, (yaml.ScalarEvent, yaml.MappingStartEvent, yaml.SequenceStartEvent)):
                    counts[-1] += 1
        except yaml.YAMLError:
            pass
        finally:
            loader.dispose()
        assert sum(counts) <= prescan.node_bound(text, 0, len(text)), repr(text)


def test_a_file_with_too_many_nodes_stops_at_a_document_boundary(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(bounds, "MAX_FILE_NODES", 60)  # GOOD has 24 nodes
    result = parse_text(_services(4), "f.yaml")
    assert _names(result) == ["s0", "s1", "s2"]
    assert _issues(result) == [("PL007", 38, 1)]
    assert "more than 60 YAML nodes in one file" in result.issues[0].message


def test_skipping_broken_documents_stops_after_the_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(bounds, "MAX_SKIPPED_DOCUMENTS", 3)
    text = "---\n" + _good("first") + "---\n]\n" * 5 + "---\n" + _good("last")
    result = parse_text(text, "f.yaml")
    assert _names(result) == ["first"]
    assert _issues(result) == [("PL001", 14, 1), ("PL001", 16, 1), ("PL001", 18, 1), ("PL007", 19, 1)]


def test_skipping_resumes_where_the_previous_chunk_stopped() -> None:
    # Many broken documents between good ones: each good one is read, with its own lines.
    text = "".join(_good(f"s{i}") + "---\na: [\n---\n" for i in range(50)) + _good("end")
    result = parse_text(text, "f.yaml")
    assert _names(result) == [f"s{i}" for i in range(50)] + ["end"]
    assert [d.ref.line for d in result.documents] == [14 * i + 1 for i in range(51)]
    assert {i.rule_id for i in result.issues} == {"PL001"} and len(result.issues) == 50


def test_every_limit_is_in_the_cache_key(monkeypatch: pytest.MonkeyPatch) -> None:
    before = cache._stamp()
    for name in (
        "MAX_DOCUMENTS",
        "MAX_SKIPPED_DOCUMENTS",
        "MAX_DOCUMENT_NODES",
        "MAX_FILE_NODES",
        "MAX_EXPANDED_CHARS",
        "MAX_KEY_TEXT",
    ):
        with monkeypatch.context() as m:
            m.setattr(bounds, name, getattr(bounds, name) + 1)
            assert cache._stamp() != before, name
    assert cache._stamp() == before


# -- findings per file ---------------------------------------------------------------------------------------


def test_findings_past_the_limit_are_summed_up_in_one_finding(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(engine, "MAX_FINDINGS_PER_FILE", 10)
    (tmp_path / "many.yaml").write_text("---\n{}\n" * 15)  # 15 PL003 (info), at lines 2, 4, ..., 30
    (tmp_path / "few.yaml").write_text("---\n{}\n" * 3)
    result = lint_paths([tmp_path])
    many = [f for f in result.findings if f.file.endswith("many.yaml")]
    assert [f.rule for f in many] == ["PL003"] * 10 + ["PL007"]
    summary = many[-1]
    assert (summary.line, summary.column, summary.severity) == (22, 1, Severity.INFO)
    assert summary.message == "5 more findings in this file not shown (at most 10 per file)"
    assert [f.rule for f in result.findings if f.file.endswith("few.yaml")] == ["PL003"] * 3


def test_the_summary_finding_is_as_severe_as_the_worst_hidden_one(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(engine, "MAX_FINDINGS_PER_FILE", 2)
    result = lint_text("---\n{}\n" * 3 + "---\na: [\n")  # the hidden ones: a PL003 and a PL001 (error)
    assert [(f.rule, f.severity) for f in result.findings][-1] == ("PL007", Severity.ERROR)


# -- the hostile files of the security review, at full size, through the command line --------------------

BUDGET_SECONDS = 60.0  # generous for a loaded CI machine; the cases take about a second each
BUDGET_RSS_MB = 300

# `policylint` as `python -m policylint` runs it, writing its peak resident set (KiB) to
# $PEAK_FILE at exit, read from /proc where there is one.
_MEASURED = """\
import atexit, os, runpy, sys


def _peak():
    try:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    with open(os.environ["PEAK_FILE"], "w") as out:
                        out.write(line.split()[1])
    except OSError:
        pass


atexit.register(_peak)
sys.argv[0] = "policylint"
runpy.run_module("policylint", run_name="__main__", alter_sys=True)
"""


def _hostile_files() -> dict[str, tuple[str, str]]:
    """name -> (file text, rule that must report it)."""
    service = (
        "apiVersion: v1\nkind: Service\nmetadata:\n  name: web\n  namespace: app\nspec:\n  ports:\n  - name: http\n    port: {}\n"
    )
    return {
        "template-2000-spaces": ('a: "{{' + " " * 2000 + '"\n', "PL003"),
        "template-64k-braces": ("a: '" + "{{" * 32_768 + "'\n", "PL003"),
        "alias-text-amplified": ("a: &a " + "x" * 100_000 + "\nb: [" + ", ".join(["*a"] * 3000) + "]\n", "PL007"),
        "alias-collection-key": (
            "a: &a [" + ", ".join(['"' + "x" * 1000 + '"'] * 300) + "]\nb: &b [" + ", ".join(["*a"] * 300) + "]\n? *b\n: 1\n",
            "PL007",
        ),
        "alias-depth": (_alias_depth(200, 200), "PL007"),
        "two-million-documents": ("---\n{}\n" * 2_000_000, "PL007"),
        "eight-mb-flow-list": ("[" + "1," * 4_000_000 + "1]\n", "PL007"),
        "hex-port-5000-digits": (service.format("0x" + "f" * 5000), "PL001"),
        "sexagesimal-port": (service.format("1:" * 20_000 + "1"), "PL001"),
        "100k-broken-documents": ("---\n]\n" * 100_000, "PL007"),
    }


@pytest.mark.parametrize("name", list(_hostile_files()))
def test_hostile_file_within_time_and_memory(name: str, tmp_path: Path) -> None:
    text, rule = _hostile_files()[name]
    (tmp_path / "hostile.yaml").write_text(text)
    (tmp_path / "good.yaml").write_text(GOOD)
    out = tmp_path.parent / f"{name}.out"
    err = tmp_path.parent / f"{name}.err"
    peak_file = tmp_path.parent / f"{name}.peak"
    env = {**os.environ, "PYTHONPATH": str(ROOT), "NO_COLOR": "1", "PEAK_FILE": str(peak_file)}
    with open(out, "wb") as stdout, open(err, "wb") as stderr:
        proc = subprocess.Popen(
            [sys.executable, "-c", _MEASURED, "check", "--format", "json", "--no-cache", str(tmp_path)],
            stdin=subprocess.DEVNULL,
            stdout=stdout,
            stderr=stderr,
            env=env,
            cwd=ROOT,
        )
        deadline = time.monotonic() + BUDGET_SECONDS
        while True:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            if time.monotonic() > deadline:
                proc.kill()
                os.wait4(proc.pid, 0)
                pytest.fail(f"{name}: still running after {BUDGET_SECONDS:.0f} s")
            time.sleep(0.05)
    proc.returncode = os.waitstatus_to_exitcode(status)  # reaped here, not by Popen
    # The command's own high-water mark (VmHWM of its memory after exec). `ru_maxrss` would also
    # count the copy of this test process the child was forked from, which on Python 3.10 (fork,
    # not vfork) is as large as the test run has grown.
    if sys.platform.startswith("linux"):
        assert peak_file.exists(), "the command did not report its peak memory"
    peak_mb = int(peak_file.read_text()) / 1024 if peak_file.exists() else usage.ru_maxrss / 1024  # KiB
    errors = err.read_text()
    assert proc.returncode in (0, 1), errors[-2000:]
    assert "Traceback" not in errors
    assert peak_mb < BUDGET_RSS_MB, f"{name}: {peak_mb:.0f} MB"
    report = json.loads(out.read_text())
    findings = report["findings"]
    assert (proc.returncode == 1) == any(f["severity"] == "error" for f in findings)
    assert not any(f["rule"] == "PL000" for f in findings)
    assert all(f["line"] >= 1 and f["column"] >= 1 for f in findings)
    assert [f for f in findings if f["file"].endswith("good.yaml")] == []
    assert any(f["rule"] == rule and f["file"].endswith("hostile.yaml") for f in findings), [f["rule"] for f in findings][:20]
    assert len(findings) <= engine.MAX_FINDINGS_PER_FILE + 2
    assert report["summary"]["objects"] >= 1  # the neighbour
