"""No input may crash or hang policylint (CONTRIBUTING.md "Reliability").

Every hostile file is linted next to a good one. Each must yield located
findings (file, line >= 1, column >= 1), never a traceback, and the good file
must still be linted: its objects are in the index and it has no finding.

Nothing here is timed. Work is bounded structurally instead: the alias bombs
expand to 10^12 nodes and more, so a loader that expanded them would never
finish, and the 100,000-deep documents crash libyaml's recursive composer
unless the depth guard stops them first (checked in a subprocess, so that a
regression fails one test instead of killing the test run).

Two systematic sweeps close the file: every field of a small scene of policies
and their targets replaced by values of the wrong type, and a fixed-seed soup
of YAML's special characters. Neither may make a rule fail (PL000).
"""

from __future__ import annotations

import codecs
import json
import os
import subprocess
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml._yaml as yaml_c
from click.testing import CliRunner

from policylint.cli import cli
from policylint.input import bounds, load
from policylint.input.bounds import MAX_DEPTH
from policylint.input.load import parse_text
from policylint.input.sources import Source
from policylint.reporters import json as json_reporter
from policylint.reporters import text as text_reporter
from tests.examples import count
from tests.lintutil import ROOT, assert_valid_report, lint_paths
from tests.manifests import gateway, route, service

GOOD = """\
apiVersion: v1
kind: Service
metadata:
  name: neighbour
  namespace: app
spec:
  selector:
    app: neighbour
  ports:
  - name: http
    port: 80
"""


def _bomb(levels: int, width: int = 10, style: str = "flow") -> str:
    """Billion laughs: `levels` anchors of `width` aliases each, width**levels leaves when expanded."""
    lines = ['l0: &l0 "lol"']
    for i in range(1, levels + 1):
        if style == "flow":
            lines.append(f"l{i}: &l{i} [" + ", ".join([f"*l{i - 1}"] * width) + "]")
        else:
            lines.append(f"l{i}: &l{i}\n" + "".join(f"  - *l{i - 1}\n" for _ in range(width)).rstrip("\n"))
    return "\n".join(lines) + "\n"


def _nest_flow(depth: int) -> str:
    return "deep: " + "[" * depth + "]" * depth + "\n"


def _nest_flow_maps(depth: int) -> str:
    return "deep: " + "{a: " * depth + "x" + "}" * depth + "\n"


def _nest_block(depth: int) -> str:
    return "deep:\n" + "- " * depth + "x\n"


def _nest_block_keys(depth: int) -> str:
    return "? " * depth + "x\n"


# What a BackendTLSPolicy needs besides its targets (the CRD requires `validation`): the cases
# below make only their targets hostile.
_VALIDATION = "  validation: {hostname: x.example.com, wellKnownCACertificates: System}\n"


def _policy(spec: str, metadata: str = "  name: tls\n  namespace: app\n") -> str:
    return f"apiVersion: gateway.networking.k8s.io/v1\nkind: BackendTLSPolicy\nmetadata:\n{metadata}spec:\n{spec}"


@dataclass(frozen=True)
class Case:
    id: str
    data: bytes
    rules: tuple[str, ...]  # rules that must report the hostile file (others may too)
    line: int | None = None  # line of the first finding of rules[0], when pinned
    name: str = "hostile.yaml"


def _utf8(text: str) -> bytes:
    return text.encode("utf-8")


CASES = [
    # broken YAML of many kinds
    Case("unclosed-flow-sequence", _utf8("a: [1, 2\nb: 3\n"), ("PL001",), 2),
    # An error at the end of the input is shown at the end of the last line, not past it.
    Case("unclosed-flow-mapping", _utf8("a: {x: 1\n"), ("PL001",), 1),
    Case("unterminated-double-quote", _utf8('a: "abc\nb: 2\n'), ("PL001",), 2),
    Case("unterminated-single-quote", _utf8("a: 'abc\n\n\n"), ("PL001",), 1),
    Case("bad-indentation", _utf8("a:\n  b: 1\n c: 2\n"), ("PL001",), 3),
    Case("mapping-in-sequence", _utf8("- a\nb: c\n"), ("PL001",), 2),
    Case("two-colons", _utf8("a: b: c\n"), ("PL001",), 1),
    Case("reserved-indicator", _utf8("a: @x\n"), ("PL001",), 1),
    Case("undefined-alias", _utf8("a: *nope\n"), ("PL001",), 1),
    Case("bad-escape", _utf8('a: "\\q"\n'), ("PL001",), 1),
    Case("unknown-directive-version", _utf8("%YAML 2.0\n---\na: 1\n"), ("PL001",), 1),
    Case("stray-closing-bracket", _utf8("a: [1]]\n"), ("PL001",), 1),
    Case("block-scalar-bad-indent", _utf8("a: |\n  x\n y: 1\n"), ("PL001",), 3),
    Case("only-a-document-end", _utf8("...\n"), ("PL001",), 1),
    Case("invalid-explicit-int", _utf8("a: !!int forty-two\n"), ("PL001",), 1),
    Case("invalid-explicit-bool", _utf8("a: !!bool maybe\n"), ("PL001",), 1),
    Case("invalid-explicit-float", _utf8("a: !!float x\n"), ("PL001",), 1),
    Case("number-with-10000-digits", _utf8("a: " + "9" * 10_000 + "\n"), ("PL001",), 1),
    Case("control-character", b"a: 1\nb: \x1b[31mred\x1b[0m\n", ("PL001",), 2),
    Case("nul-after-the-binary-sniff", b"a: 1\n" + b"#" * 9000 + b"\nb: \x00\n", ("PL001",), 3),
    Case("noncharacter", _utf8("a: \ufffe\n"), ("PL001",), 1),
    # Broken JSON that is meant as an object keeps its syntax error; broken JSON that is not
    # (no "apiVersion" and "kind" keys) is one PL003 "not a manifest" (README "Configuration").
    Case("json-missing-comma", _utf8('{"apiVersion": "v1", "kind": "Service"\n "b": 2}\n'), ("PL001",), 2, "hostile.json"),
    Case("json-trailing-garbage", _utf8('{"apiVersion": "v1", "kind": "Service"}\n}\n'), ("PL001",), 2, "hostile.json"),
    Case("json-not-a-manifest", _utf8('{"a": 1\n "b": 2}\n'), ("PL003",), 2, "hostile.json"),
    # duplicate keys and tabs
    Case("duplicate-keys", _utf8("apiVersion: v1\nkind: Service\nmetadata:\n  name: x\n  name: y\n"), ("PL002",), 5),
    Case("tab-indentation", _utf8("apiVersion: v1\nkind: Service\nmetadata:\n\tname: x\n"), ("PL001",), 4),
    # aliases
    Case("alias-bomb-10e12-flow", _utf8(_bomb(12)), ("PL007",), 1),
    Case("alias-bomb-10e12-block", _utf8(_bomb(12, style="block")), ("PL007",), 1),
    Case("alias-bomb-2e200", _utf8(_bomb(200, width=2)), ("PL007",), 1),
    Case("alias-bomb-in-mapping-values", _utf8(_bomb(12).replace("[", "{").replace("]", "}").replace("*l", "k: *l")), ("PL007",)),
    Case("recursive-alias-sequence", _utf8("a: &a [*a]\n"), ("PL007",), 1),
    Case("recursive-alias-mapping", _utf8("a: &a {self: *a}\n"), ("PL007",), 1),
    Case("recursive-alias-indirect", _utf8("a: &a\n  b: &b\n    c: *a\n"), ("PL007",), 1),
    Case("recursive-merge-key", _utf8("a: &a\n  <<: *a\n  x: 1\n"), ("PL007",), 1),
    # nesting
    Case("nesting-10000-flow-sequences", _utf8(_nest_flow(10_000)), ("PL007",), 1),
    Case("nesting-10000-flow-mappings", _utf8(_nest_flow_maps(10_000)), ("PL007",), 1),
    Case("nesting-10000-block-sequences", _utf8(_nest_block(10_000)), ("PL007",), 2),
    Case("nesting-10000-complex-keys", _utf8(_nest_block_keys(10_000)), ("PL007",), 1),
    Case("nesting-just-over-the-limit", _utf8(_nest_flow(MAX_DEPTH)), ("PL007",), 1),
    # bytes that are not UTF-8 text
    Case("binary-png", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)), ("PL006",), 1),
    Case("binary-gzip", b"\x1f\x8b\x08\x00" + bytes(64), ("PL006",), 1),
    Case("random-bytes", bytes((i * 97 + 13) % 256 for i in range(4096)), ("PL006",), 1),
    Case("latin-1", b"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: caf\xe9\n", ("PL006",), 4),
    Case("utf-8-surrogate", b"a: \xed\xa0\x80\n", ("PL006",), 1),
    Case("utf-16-le-without-bom", "apiVersion: v1\nkind: Service\n".encode("utf-16-le"), ("PL006",), 1),
    Case("utf-16-be-without-bom", "apiVersion: v1\nkind: Service\n".encode("utf-16-be"), ("PL006",), 1),
    Case("utf-16-bom-odd-length", codecs.BOM_UTF16_LE + "a: 1\n".encode("utf-16-le") + b"\x00", ("PL006",), 1),
    Case("utf-32-bom-garbage", codecs.BOM_UTF32_LE + b"\xff\xff\xff\xff", ("PL006",), 1),
    # templates
    Case(
        "helm-template",
        _utf8(
            "apiVersion: v1\nkind: Service\nmetadata:\n  name: {{ .Values.name }}\n  labels:\n"
            '    {{- include "chart.labels" . | nindent 4 }}\nspec:\n  ports:\n  - port: {{ .Values.port }}\n'
        ),
        ("PL004", "PL001"),
        4,
    ),
    Case(
        "helm-control-structures",
        _utf8("{{- if .Values.enabled }}\napiVersion: v1\nkind: Service\nmetadata:\n  name: x\n{{- end }}\n"),
        ("PL004",),
        1,
    ),
    Case("jinja-template", _utf8("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: '{{ name }}'\n"), ("PL004",), 4),
    # scalars where maps belong, at every level of a policy
    Case("document-is-a-scalar", _utf8("5\n"), ("PL003",), 1),
    Case("document-is-a-list", _utf8("- apiVersion: v1\n  kind: Service\n"), ("PL003",), 1),
    Case("kind-is-a-mapping", _utf8("apiVersion: v1\nkind: {a: 1}\nmetadata: {name: x}\n"), ("PL003",), 1),
    Case("metadata-is-a-list", _utf8(_policy("  targetRefs: []\n", "").replace("metadata:\n", "metadata: []\n")), ("PL009",), 3),
    Case("metadata-is-a-string", _utf8("apiVersion: v1\nkind: Service\nmetadata: web\n"), ("PL009",), 3),
    Case("name-is-a-list", _utf8("apiVersion: v1\nkind: Service\nmetadata:\n  name: [a]\n"), ("PL009",), 4),
    Case(
        "labels-is-a-string",
        _utf8(_policy("  targetRefs: []\n", '  name: tls\n  namespace: app\n  labels: "x"\n')),
        ("PL009",),
        6,
    ),
    Case(
        "label-value-is-a-mapping",
        _utf8("apiVersion: v1\nkind: Service\nmetadata:\n  name: x\n  labels: {a: {b: c}}\n"),
        ("PL009",),
        5,
    ),
    Case("spec-is-a-number", _utf8(_policy("  5\n").replace("spec:\n  5\n", "spec: 5\n")), (), 6),
    Case("spec-is-a-list", _utf8(_policy("- targetRefs: []\n")), (), 6),
    Case("targetRefs-is-a-string", _utf8(_policy('  targetRefs: "x"\n' + _VALIDATION)), (), 7),
    Case("targetRefs-item-is-a-number", _utf8(_policy("  targetRefs: [5]\n" + _VALIDATION)), (), 7),
    Case("targetRefs-item-is-a-list", _utf8(_policy("  targetRefs: [[group, kind, name]]\n" + _VALIDATION)), (), 7),
    Case(
        "targetRefs-fields-are-mappings",
        _utf8(_policy("  targetRefs:\n  - {group: {}, kind: [], name: 5, sectionName: null}\n" + _VALIDATION)),
        (),
        8,
    ),
    Case("targetRef-is-a-list", _utf8(_policy("  targetRef: [a]\n")), (), 6),
    Case("list-items-is-a-string", _utf8("apiVersion: v1\nkind: List\nitems: nope\n"), ("PL003",), 3),
    Case("list-items-are-scalars", _utf8("apiVersion: v1\nkind: List\nitems: [1, null, x]\n"), ("PL003",), 3),
]


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_hostile_file_yields_located_findings_and_the_neighbour_is_linted(case: Case, tmp_path: Path) -> None:
    hostile = tmp_path / case.name
    hostile.write_bytes(case.data)
    (tmp_path / "good.yaml").write_text(GOOD)

    result = lint_paths([tmp_path])

    assert result.files == sorted([str(hostile), str(tmp_path / "good.yaml")])
    for f in result.findings:
        assert f.file in result.files, f
        assert f.line >= 1 and f.column >= 1, f
        assert f.rule != "PL000", f.message
    mine = [f for f in result.findings if f.file == str(hostile)]
    assert mine, "a hostile file must be reported"
    for rule in case.rules:
        assert any(f.rule == rule for f in mine), (rule, [(f.rule, f.line, f.message) for f in mine])
    if case.line is not None:
        first = next(f for f in mine if not case.rules or f.rule == case.rules[0])
        assert first.line == case.line, (first.rule, first.line, first.message)
    if not case.rules:
        # Policy-shape problems belong to the policy rule families (PL1xx, PL2xx): which rule
        # reports them is theirs to decide; here it matters that one does, at the pinned line.
        assert all(f.object is not None and f.line >= 6 for f in mine), mine
    lines = max(1, case.data.count(b"\n") + (0 if case.data.endswith(b"\n") else 1))
    assert all(f.line <= lines for f in mine), [(f.rule, f.line) for f in mine]

    # The good neighbour is still linted.
    assert [f for f in result.findings if f.file.endswith("good.yaml")] == []
    assert any(str(o.key) == "Service app/neighbour" for o in result.index.objects)

    # Both reporters render the run (the JSON report is schema-checked by conftest).
    assert_valid_report(json_reporter.report(result))
    text = text_reporter.render(result)
    assert all(line.startswith((str(tmp_path), "    note:", "    hint:")) for line in text.splitlines())


def test_all_hostile_files_in_one_run_through_the_cli(tmp_path: Path) -> None:
    for i, case in enumerate(CASES):
        suffix = Path(case.name).suffix
        (tmp_path / f"{i:03d}-{case.id}{suffix}").write_bytes(case.data)
    (tmp_path / "zzz-good.yaml").write_text(GOOD)
    result = CliRunner().invoke(cli, ["--format", "json", str(tmp_path)])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    assert result.exit_code == 1, result.stderr
    assert "Traceback" not in result.output
    report = json.loads(result.stdout)
    assert_valid_report(report)
    assert report["summary"]["files"] == len(CASES) + 1
    assert not any(f["rule"] == "PL000" for f in report["findings"])
    reported = {Path(f["file"]).name for f in report["findings"]}
    assert {f"{i:03d}-{c.id}{Path(c.name).suffix}" for i, c in enumerate(CASES) if c.rules} <= reported
    assert "zzz-good.yaml" not in reported


# -- alias bombs are refused without being expanded -------------------------------------------------


@pytest.mark.parametrize("levels", [12, 40, 1000])
def test_alias_bomb_size_is_computed_not_expanded(levels: int) -> None:
    # 10^1000 nodes: anything that expanded it, even lazily, would never finish.
    result = parse_text(_bomb(levels), "bomb.yaml")
    assert result.documents == []
    assert [(i.rule_id, i.location.line if i.location else 0) for i in result.issues] == [("PL007", 1)]
    assert "alias" in result.issues[0].message


def test_moderate_aliases_are_expanded() -> None:
    result = parse_text(_bomb(4), "ok.yaml")  # 10^4 leaves
    assert result.issues == []
    (doc,) = result.documents
    assert len(doc.data["l4"]) == 10 and doc.data["l4"][0][0][0] == ["lol"] * 10


def test_a_big_document_without_aliases_is_not_mistaken_for_a_bomb(monkeypatch: pytest.MonkeyPatch) -> None:
    # `&` and `*` in strings switch the loader to its careful alias-aware mode; a `kind: List`
    # dump bigger than the alias budget written out in full is still fine.
    monkeypatch.setattr(bounds, "MAX_EXPANDED_NODES", 1000)
    items = "".join(
        f"- apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: c{i}\n  data:\n    host: '*.example.com'\n    q: 'a&b'\n"
        for i in range(300)
    )
    result = parse_text("apiVersion: v1\nkind: List\nitems:\n" + items, "list.yaml")
    assert result.issues == []
    assert len(result.documents[0].data["items"]) == 300


def test_aliases_within_the_budget_are_fine_but_over_it_are_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(bounds, "MAX_EXPANDED_NODES", 1000)
    assert parse_text(_bomb(2), "a.yaml").issues == []  # aliases add ~110 nodes
    assert [i.rule_id for i in parse_text(_bomb(3), "b.yaml").issues] == ["PL007"]  # ~1,100


def test_bomb_in_one_document_does_not_cost_the_others() -> None:
    text = GOOD + "---\n" + _bomb(12) + "---\n" + GOOD.replace("neighbour", "second")
    result = parse_text(text, "f.yaml")
    assert [d.data["metadata"]["name"] for d in result.documents] == ["neighbour", "second"]
    assert [(i.rule_id, i.location.line if i.location else 0) for i in result.issues] == [("PL007", 13)]


# -- nesting: the depth guard ---------------------------------------------------------------------------


def test_nesting_at_the_limit_is_accepted() -> None:
    # The root mapping is level 1, so MAX_DEPTH - 1 brackets reach exactly the limit.
    result = parse_text(_nest_flow(MAX_DEPTH - 1), "f.yaml")
    assert result.issues == []
    assert len(result.documents) == 1


def test_nesting_one_over_the_limit_is_refused_at_the_offending_node() -> None:
    result = parse_text(_nest_flow(MAX_DEPTH), "f.yaml")
    assert result.documents == []
    (issue,) = result.issues
    assert issue.rule_id == "PL007" and issue.location is not None
    assert (issue.location.line, issue.location.column) == (1, len("deep: ") + MAX_DEPTH)


def test_a_deep_document_skips_only_itself() -> None:
    text = GOOD + "---\n" + _nest_flow(10_000) + "---\n" + GOOD.replace("neighbour", "after")
    result = parse_text(text, "f.yaml")
    assert [d.data["metadata"]["name"] for d in result.documents] == ["neighbour", "after"]
    assert [(i.rule_id, i.location.line if i.location else 0) for i in result.issues] == [("PL007", 13)]


DEEP = 100_000

DEEP_FILES = {
    "flow-sequences.yaml": _nest_flow(DEEP),
    "flow-mappings.yaml": _nest_flow_maps(DEEP),
    "block-sequences.yaml": _nest_block(DEEP),
    "block-complex-keys.yaml": _nest_block_keys(DEEP),
    # After a syntax error parsing resumes at the next `---`: the guard must run again there.
    "after-syntax-error.yaml": "a: [\n---\n" + _nest_flow(DEEP),
    # A finding in the first document needs its position: the resolver must not compose
    # the deep document that follows it in the same chunk.
    "after-a-finding.yaml": GOOD.replace("neighbour", "first").replace(
        "  namespace: app\n", "  namespace: app\n  labels: {tier: 1}\n"
    )
    + "---\n"
    + _nest_block(DEEP),
}
DEEP_EXPECTED = {
    "after-a-finding.yaml": [("PL009", 6), ("PL007", 15)],
    "after-syntax-error.yaml": [("PL001", 2), ("PL007", 3)],
    "block-complex-keys.yaml": [("PL007", 1)],
    "block-sequences.yaml": [("PL007", 2)],
    "flow-mappings.yaml": [("PL007", 1)],
    "flow-sequences.yaml": [("PL007", 1)],
}


def _run(args: list[str], **kwargs: object) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "NO_COLOR": "1", "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=600,
        **kwargs,  # type: ignore[call-overload]
    )


def test_100k_deep_documents_are_refused_without_crashing(tmp_path: Path) -> None:
    for name, text in DEEP_FILES.items():
        (tmp_path / name).write_text(text)
    (tmp_path / "good.yaml").write_text(GOOD)
    proc = _run(["-m", "policylint", "--format", "json", str(tmp_path)])
    assert proc.returncode == 1, proc.stderr[-2000:]
    report = json.loads(proc.stdout)
    assert_valid_report(report)
    got: dict[str, list[tuple[str, int]]] = {}
    for f in report["findings"]:
        got.setdefault(Path(f["file"]).name, []).append((f["rule"], f["line"]))
    assert got == DEEP_EXPECTED
    assert report["summary"]["objects"] == 2  # neighbour from good.yaml, first from after-a-finding.yaml


_COMPOSE_IN_A_SMALL_STACK = textwrap.dedent(
    """
    import sys, threading
    from policylint.input import load

    guarded = sys.argv[1] == "guarded"
    if not guarded:
        load.might_nest_deeper_than_limit = lambda text: False
    text = "deep: " + "[" * 100_000 + "]" * 100_000 + "\\n"
    out = []
    threading.stack_size(4 * 1024 * 1024)  # the same limit whatever `ulimit -s` says
    worker = threading.Thread(target=lambda: out.append(load.parse_text(text, "deep.yaml")))
    worker.start()
    worker.join()
    print("survived", [i.rule_id for i in out[0].issues])
    """
)


def test_the_depth_guard_is_what_prevents_the_crash() -> None:
    guarded = _run(["-c", _COMPOSE_IN_A_SMALL_STACK, "guarded"])
    assert guarded.returncode == 0, guarded.stderr[-2000:]
    assert guarded.stdout.strip() == "survived ['PL007']"
    unguarded = _run(["-c", _COMPOSE_IN_A_SMALL_STACK, "unguarded"])
    if yaml_c.get_version() >= (0, 2, 6):
        # libyaml 0.2.6 (PyYAML 6.0.4 wheels) refuses nesting past its own limit while scanning:
        # without the guard the document is still refused, by the parser, as the same PL007.
        assert unguarded.returncode == 0, unguarded.stderr[-2000:]
        assert unguarded.stdout.strip() == "survived ['PL007']"
    else:
        # Older libyaml: its recursive composer overflows the C stack and the process dies.
        assert unguarded.returncode != 0
        assert "survived" not in unguarded.stdout


def test_the_parsers_own_depth_limit_is_a_resource_limit_finding() -> None:
    # What libyaml 0.2.6 says when it refuses nesting itself (PyYAML 6.0.4 wheels), reported as
    # the resource limit it is; with an older libyaml policylint's own scan says it first.
    result = parse_text("a: 1\n---\ndeep: " + "[" * 5_000 + "\n---\nb: 2\n", "f.yaml")
    (issue,) = result.issues
    assert issue.rule_id == "PL007" and issue.location is not None and issue.location.line == 3
    assert "nesting deeper than" in issue.message and issue.message.endswith("document skipped")
    assert [d.data for d in result.documents] == [{"a": 1}, {"b": 2}]


# -- size limit ---------------------------------------------------------------------------------------------


def test_file_over_the_size_limit_is_refused_and_the_neighbour_is_linted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(bounds, "MAX_FILE_BYTES", 4096)
    (tmp_path / "huge.yaml").write_text(GOOD.replace("neighbour", "huge") + "# padding padding padding\n" * 1000)
    (tmp_path / "good.yaml").write_text(GOOD)
    opened: list[int] = []
    real_read_bytes = load.read_bytes

    def spy(source: Source) -> tuple[bytes | None, object]:
        data, problem = real_read_bytes(source)
        opened.append(len(data or b""))
        return data, problem

    monkeypatch.setattr(load, "read_bytes", spy)
    result = lint_paths([tmp_path])
    assert [(Path(f.file).name, f.rule, f.line, f.column) for f in result.findings] == [("huge.yaml", "PL007", 1, 1)]
    assert [str(o.key) for o in result.index.objects] == ["Service app/neighbour"]
    assert max(opened) <= 4096 + 1  # never more than the limit is read


def test_oversized_stdin_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(bounds, "MAX_FILE_BYTES", 100)
    result = lint_paths(["-"], stdin_filename="big.yaml", read_stdin=lambda: GOOD.encode())
    assert [(f.file, f.rule) for f in result.findings] == [("big.yaml", "PL007")]


# -- valid but unusual encodings keep working -----------------------------------------------------------


@pytest.mark.parametrize(
    "data",
    [
        codecs.BOM_UTF8 + GOOD.replace("neighbour", "x").replace("\n", "\r\n").encode(),
        codecs.BOM_UTF16_LE + GOOD.replace("neighbour", "x").encode("utf-16-le"),
        codecs.BOM_UTF16_BE + GOOD.replace("neighbour", "x").replace("\n", "\r\n").encode("utf-16-be"),
        GOOD.replace("neighbour", "x").replace("\n", "\r").encode(),  # classic Mac line ends
    ],
    ids=["utf8-bom-crlf", "utf16-le-bom", "utf16-be-bom-crlf", "cr-only"],
)
def test_unusual_but_valid_encodings_are_linted(data: bytes, tmp_path: Path) -> None:
    (tmp_path / "odd.yaml").write_bytes(data)
    (tmp_path / "good.yaml").write_text(GOOD)
    result = lint_paths([tmp_path])
    assert result.findings == []
    assert sorted(str(o.key) for o in result.index.objects) == ["Service app/neighbour", "Service app/x"]


def test_inputs_are_never_written(tmp_path: Path) -> None:
    for case in CASES[:20]:
        (tmp_path / f"{case.id}.yaml").write_bytes(case.data)
    before = {p.name: (p.read_bytes(), p.stat().st_mtime_ns) for p in tmp_path.iterdir()}
    lint_paths([tmp_path])
    assert {p.name: (p.read_bytes(), p.stat().st_mtime_ns) for p in tmp_path.iterdir()} == before


# -- every field of a policy and its targets, with a value of the wrong type ---------------------------

SCENE = (
    """\
apiVersion: gateway.networking.k8s.io/v1
kind: BackendTLSPolicy
metadata:
  name: tls
  namespace: app
  labels: {team: web}
spec:
  targetRefs:
  - {group: "", kind: Service, name: web, sectionName: https}
  validation: {hostname: web.app.svc.cluster.local, wellKnownCACertificates: System}
---
apiVersion: gateway.envoyproxy.io/v1alpha1
kind: ClientTrafficPolicy
metadata: {name: edge, namespace: app}
spec:
  targetRef: {group: gateway.networking.k8s.io, kind: Gateway, name: gw, sectionName: http}
  timeout: {http: {requestReceivedTimeout: 5s}}
---
apiVersion: kuadrant.io/v1
kind: RateLimitPolicy
metadata: {name: limits, namespace: app}
spec:
  targetRef: {group: gateway.networking.k8s.io, kind: HTTPRoute, name: route, sectionName: api}
  defaults:
    limits:
      global: {rates: [{limit: 10, window: 1s}]}
---
apiVersion: platform.example.com/v1
kind: RetryPolicy
metadata: {name: retries, namespace: app}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: route}]
  default: {attempts: 3}
"""
    + service(ports="[{name: https, port: 443}]")
    + gateway("[{name: http, port: 80, protocol: HTTP}]")
    + route("[{name: gw, sectionName: http}]", name="route", rules="[{name: api, backendRefs: [{name: web, port: 443}]}]")
)

WRONG_VALUES: list[object] = [5, "x", [], {}, None, [5], [[1]], {"a": {"b": 1}}]


def _paths(value: object, prefix: tuple[object, ...] = ()) -> list[tuple[object, ...]]:
    out = [prefix] if prefix else []
    if isinstance(value, dict):
        for k, v in value.items():
            out.extend(_paths(v, (*prefix, k)))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            out.extend(_paths(v, (*prefix, i)))
    return out


def _replaced(value: object, path: tuple[object, ...], new: object) -> object:
    if not path:
        return new
    head, rest = path[0], path[1:]
    if isinstance(value, dict):
        return {k: (_replaced(v, rest, new) if k == head else v) for k, v in value.items()}
    assert isinstance(value, list)
    return [(_replaced(v, rest, new) if i == head else v) for i, v in enumerate(value)]


def _mutations() -> list[tuple[str, list[object]]]:
    import yaml

    documents = list(yaml.safe_load_all(SCENE))
    out = []
    for index, doc in enumerate(documents):
        for path in _paths(doc):
            for new in WRONG_VALUES:
                mutated = [_replaced(d, path, new) if i == index else d for i, d in enumerate(documents)]
                out.append((f"{doc['kind']}.{'.'.join(map(str, path))}={new!r}", mutated))
    return out


def _dumped(documents: list[object]) -> str:
    """The documents as PyYAML's `safe_dump_all` writes them, by libyaml's emitter: the same
    bytes (test_the_variants_are_what_pyyaml_writes) in a fifth of the time, which was a quarter
    of the sweep's."""
    import yaml

    return yaml.dump_all(documents, Dumper=getattr(yaml, "CSafeDumper", yaml.SafeDumper), sort_keys=False)


def _variants() -> list[tuple[str, str]]:
    return [(label, _dumped(mutated)) for label, mutated in _mutations()]


def test_the_variants_are_what_pyyaml_writes() -> None:
    """Every wrong value in every document, each written by PyYAML's own emitter: what libyaml's
    writes for the sweep below."""
    import yaml

    mutations = _mutations()
    seen: set[str] = set()
    for label, mutated in mutations:
        kind_and_value = label.split(".", 1)[0] + label.rsplit("=", 1)[1]
        if kind_and_value in seen:
            continue
        seen.add(kind_and_value)
        assert _dumped(mutated) == yaml.safe_dump_all(mutated, sort_keys=False), label
    assert len(seen) == len({label.split(".", 1)[0] for label, _ in mutations}) * len(WRONG_VALUES)


def test_every_field_of_a_policy_and_its_targets_can_have_the_wrong_type() -> None:
    """Scalars where maps belong and maps where scalars belong, at every level: findings, never a failure."""
    variants = _variants()
    assert len(variants) > 500
    failures = []
    for label, text in variants:
        result = lint_paths(["-"], stdin_filename="scene.yaml", read_stdin=lambda text=text: text.encode())
        internal = [f.message for f in result.findings if f.rule == "PL000"]
        unlocated = [f for f in result.findings if f.line < 1 or f.column < 1 or f.file != "scene.yaml"]
        if internal or unlocated:
            failures.append(f"{label}: {internal or unlocated}")
    assert failures == [], f"{len(failures)} of {len(variants)} variants failed, e.g.:\n" + "\n".join(failures[:10])


TOKENS = [
    *"abc: -[]{},'\"&*!|>#?%@`\n\t\r\\0123456789.~",
    "---\n",
    "...\n",
    "<<: ",
    "&a ",
    "*a",
    "!!int ",
    "!!bool ",
    "!!float ",
    "!!str ",
    "!!binary ",
    "{{ x }}",
    "\ufeff",
    "\x85",
    "\u2028",
    "\x00",
    "\x1b",
    "é",
    "😀",
    "apiVersion: v1\n",
    "kind: Service\n",
    "metadata:\n  name: x\n",
    "  labels: {a: 1}\n",
    "kind: List\nitems:\n- ",
]


def test_token_soup_never_fails() -> None:
    """A fixed-seed fuzz over YAML's special characters and the loader's own edge cases: the
    first 1,000 texts in `make test`, all 3,000 in `make test-all` (tests/examples.py)."""
    import random

    rng = random.Random(20250713)
    for _ in range(count(1000, 3000)):
        text = "".join(rng.choice(TOKENS) for _ in range(rng.randint(0, 60)))
        result = lint_paths(["-"], stdin_filename="soup.yaml", read_stdin=lambda text=text: text.encode())
        assert not result.internal_error, repr(text)
        assert all(f.line >= 1 and f.column >= 1 for f in result.findings), repr(text)
        assert_valid_report(json_reporter.report(result))
