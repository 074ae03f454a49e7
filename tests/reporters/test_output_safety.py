"""No input can forge, hide or blow up policylint's output, in any format.

Names, namespaces, label keys and values, section names, spec values and file names are chosen by
whoever wrote the manifests. Here they carry what attacks a terminal or a CI log: newlines and
carriage returns (a forged finding line, or a GitHub Actions workflow command `::error
file=...::`, which the runner reads at the start of any log line), ESC sequences (SGR colours,
OSC 8 hyperlinks, OSC 52 clipboard writes), BEL, the C1 controls CSI and NEL, DEL, the line and
paragraph separators U+2028/U+2029 and the bidi overrides and isolates (CVE-2021-42574), bytes that
are not UTF-8 in a file name, and strings of hundreds of thousands of characters.

Every output path is checked: `check` in every format of the reporter registry (stdout, and the
summary on stderr), `explain` text and JSON, `graph` Mermaid and DOT, and the CLI's error
messages. In text for people: no raw control character (only policylint's own colour codes), no
line a CI runner would read as a workflow command, one line per finding plus one per note, and
the original text recoverable with `textsafe.unescape`. In JSON: a document that parses, is valid
UTF-8 and holds the original values.

Nothing here is timed. Alias-amplified values are checked in a subprocess under a memory limit
and a generous timeout: written out whole they would need tens of gigabytes.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from xml.etree import ElementTree

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from policylint import textsafe
from policylint.cli import cli
from policylint.commands.explain import _jsonable
from policylint.commands.explain_text import _value_text
from policylint.findings import Finding, Issue, Related, Severity
from policylint.input.positions import PositionResolver
from policylint.pipeline import LintRequest, lint, load_project
from policylint.project import Project
from policylint.reporters import FORMATS, REPORTERS
from policylint.reporters.json import finding_dict
from policylint.reporters.text import format_finding
from policylint.rules.base import Rule
from policylint.rules.engine import run as run_engine
from policylint.textsafe import MAX_FIELD, MAX_MESSAGE, Budget, escape, json_dumps, json_object_pieces, unescape
from tests.lintutil import ROOT, assert_valid_report

# -- the hostile strings -----------------------------------------------------------------------

OSC8 = "\x1b]8;;https://evil.example/\x1b\\click\x1b]8;;\x1b\\"  # a hyperlink
OSC52 = "\x1b]52;c;b3duZWQ=\x07"  # writes "owned" to the clipboard
SGR = "\x1b[2J\x1b[31m"  # clears the screen, turns red
WORKFLOW = "\n::error file=x.yaml,line=1::owned"
SEPARATORS = "\u2028\u2029"
BIDI = "\u202e\u2066\u202a"
C1 = "\x9b31m\x85\x7f"

# Used in queries (`explain KIND/NS/NAME`): no '/', '#', space, and no whitespace at either end.
NS = f"ns{OSC52}\r{SEPARATORS}::error::owned{BIDI}x"
GW = f"gw\n::error::gw{SGR}x"
LISTENER = f"http{OSC8}\u2028x"
ROUTE = "rt\u202eevil\x07\n::warning::x"
SERVICE = "web"
POLICY = f"pol\n::error::pol{C1}x"
LABEL_KEY = f"team\n::error::k{OSC8}"
LABEL_VALUE = f"v{SGR}{BIDI}"
VALUE = f"value{WORKFLOW}{OSC52}{OSC8}{SGR}{SEPARATORS}{BIDI}{C1}\tend"
HUGE = "A" * 300_000
EVERYTHING = NS + GW + LISTENER + ROUTE + POLICY + LABEL_KEY + LABEL_VALUE + VALUE

FILE = f"evil\n::error file=f::owned{SGR}\u2028.yaml"
# Not UTF-8: Python names it with a lone surrogate (PEP 383), which no UTF-8 stream can encode.
BAD_BYTES_FILE = b"bad-\xff-name.yaml"

# Raw in text for people: nothing but the line end (and a tab would be tolerable, but none is let
# through either).
_RAW_UNSAFE = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069\ud800-\udfff]")
# policylint's own colours (policylint.reporters.text), the only escape sequences allowed.
_OWN_SGR = re.compile(r"\x1b\[(?:1;31|1;33|1;36|2|1|0)m")


def q(text: str) -> str:
    """A YAML double-quoted scalar for any text (JSON escapes are YAML escapes)."""
    return json.dumps(text)


def _manifests() -> str:
    return textwrap.dedent(
        f"""\
        apiVersion: gateway.networking.k8s.io/v1
        kind: GatewayClass
        metadata: {{name: eg}}
        spec: {{controllerName: example.com/gateway-controller}}
        ---
        apiVersion: gateway.networking.k8s.io/v1
        kind: Gateway
        metadata:
          name: {q(GW)}
          namespace: {q(NS)}
          labels: {{{q(LABEL_KEY)}: {q(LABEL_VALUE)}, huge: {q(HUGE)}}}
        spec:
          gatewayClassName: eg
          listeners:
          - {{name: {q(LISTENER)}, protocol: HTTP, port: 80, hostname: {q(VALUE)}}}
        ---
        apiVersion: gateway.networking.k8s.io/v1
        kind: HTTPRoute
        metadata: {{name: {q(ROUTE)}, namespace: {q(NS)}}}
        spec:
          parentRefs:
          - {{name: {q(GW)}, sectionName: {q(LISTENER)}}}
          - {{name: {q(GW)}, sectionName: {q("nope" + WORKFLOW + OSC52)}}}
          rules:
          - name: checkout
            backendRefs: [{{name: {SERVICE}, port: 80}}, {{name: {q("missing" + WORKFLOW + SGR)}, port: 80}}]
        ---
        apiVersion: v1
        kind: Service
        metadata: {{name: {SERVICE}, namespace: {q(NS)}}}
        spec: {{ports: [{{name: http, port: 80}}]}}
        ---
        apiVersion: gateway.envoyproxy.io/v1alpha1
        kind: BackendTrafficPolicy
        metadata: {{name: {q(POLICY)}, namespace: {q(NS)}}}
        spec:
          targetRefs:
          - {{group: gateway.networking.k8s.io, kind: HTTPRoute, name: {q(ROUTE)}}}
          - {{group: gateway.networking.k8s.io, kind: HTTPRoute, name: {q("gone" + WORKFLOW + BIDI)}}}
          # A free string in Envoy Gateway's CRD (no pattern, no enum): a value its schema refuses
          # (say requestTimeout, a duration) would make the policy Invalid, and explain shows no
          # effective value of an Invalid policy (docs/semantics.md#policies-the-api-server-rejects).
          telemetry: {{metrics: {{routeStatName: {q(VALUE)}}}}}
          retry: {{numRetries: 3, note: {q(HUGE)}, {q("key" + WORKFLOW)}: {q(VALUE)}}}
        ---
        apiVersion: gateway.networking.k8s.io/v1
        kind: BackendTLSPolicy
        metadata: {{name: {q("tls" + WORKFLOW + C1)}, namespace: {q(NS)}}}
        spec:
          targetRefs:
          - {{group: "", kind: Service, name: {SERVICE}, sectionName: {q("port" + SEPARATORS + OSC8)}}}
          validation: {{hostname: {q(VALUE)}, wellKnownCACertificates: System}}
        ---
        apiVersion: gateway.networking.k8s.io/v1
        kind: HTTPRoute
        metadata: {{name: {q("r" + HUGE)}, namespace: {q(NS)}}}
        spec:
          parentRefs: [{{name: {q("no-such-gateway" + HUGE)}}}]
        """
    )


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("hostile")
    (root / FILE).write_text(_manifests(), encoding="utf-8")
    # A document that does not parse (PL001), in a file whose name is not UTF-8.
    with open(os.path.join(os.fsencode(root), BAD_BYTES_FILE), "wb") as fh:
        fh.write(b"kind: [unclosed\n")
    return root


def invoke(*args: str) -> tuple[int, bytes, bytes]:
    result = CliRunner().invoke(cli, list(args))
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result.exit_code, result.stdout_bytes, result.stderr_bytes


def assert_safe_text(data: bytes, *, color: bool = False) -> str:
    """Text for people: valid UTF-8, no raw control or invisible reordering character, no line a CI
    runner would take for a workflow command."""
    text = data.decode("utf-8")  # raises on anything that is not UTF-8
    checked = _OWN_SGR.sub("", text) if color else text
    bad = _RAW_UNSAFE.search(checked)
    assert bad is None, f"raw {bad.group()!r} in output: ...{checked[max(bad.start() - 60, 0) : bad.end() + 20]!r}..."
    for line in text.split("\n"):
        assert not line.lstrip().startswith("::"), f"a workflow command: {line[:120]!r}"
    return text


def assert_no_surrogates(value: Any) -> None:
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            assert not re.search("[\ud800-\udfff]", item), f"lone surrogate in {item[:80]!r}"
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)


def _strings(value: Any) -> Iterator[str]:
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            yield item
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)


@pytest.fixture(scope="module")
def report(corpus: Path) -> dict[str, Any]:
    code, out, _ = invoke("check", "--no-cache", "--format", "json", str(corpus))
    assert code == 1
    document = json.loads(out.decode("utf-8"))
    assert_valid_report(document)
    return document


def _object_text(obj: dict[str, Any] | None) -> str:
    if obj is None:
        return ""
    where = f"{obj['namespace']}/{obj['name']}" if obj["namespace"] is not None else obj["name"]
    key = f"{obj['kind']} {where}"
    return f" [{textsafe.truncate(key, MAX_FIELD)}]"


# -- check, every format -------------------------------------------------------------------------


def test_the_corpus_is_hostile_where_it_matters(report: dict[str, Any]) -> None:
    # Guards the other tests against an input that lost its teeth: the findings really carry the
    # hostile names, values and file names, in messages, objects and notes.
    findings = report["findings"]
    assert any(f["object"] and f["object"]["namespace"] == NS for f in findings)
    assert any(GW in f["message"] for f in findings)
    assert any(LISTENER in r["message"] or GW in r["message"] for f in findings for r in f["related"])
    assert any(f["file"].endswith(FILE) for f in findings)
    # However the sources name it (a lone surrogate, or an escape of its own), it is reported.
    assert any(Path(f["file"]).name.startswith("bad-") and f["file"].endswith("-name.yaml") for f in findings)
    assert any(f["rule"] == "PL506" and repr(LABEL_KEY) in f["message"] for f in findings)
    assert any(len(f["object"]["name"]) > MAX_FIELD for f in findings if f["object"])
    assert not [f for f in findings if f["rule"] == "PL000"], "hostile input must not crash a rule"


@pytest.mark.parametrize("fmt", FORMATS)
def test_every_format_is_safe(corpus: Path, fmt: str) -> None:
    code, out, err = invoke("check", "--no-cache", "--format", fmt, str(corpus))
    assert code == 1
    assert_safe_text(err)  # the summary
    assert err.decode().count("\n") == 1
    syntax = REPORTERS[fmt].syntax
    if syntax == "json":
        text = out.decode("utf-8")
        document = json.loads(text)
        assert_no_surrogates(document)
        # Printed raw, the document must not reach the terminal either.
        assert _RAW_UNSAFE.search(text.replace("\n", "")) is None
    elif syntax == "xml":
        text = out.decode("utf-8")
        root = ElementTree.fromstring(out)  # well-formed, whatever the names
        assert root.tag == "testsuites"
        assert _RAW_UNSAFE.search(text.replace("\n", "").replace("\t", "")) is None
    elif fmt == "github":
        assert_safe_workflow_commands(out)
    else:
        assert_safe_text(out)


# The runner's workflow commands policylint writes, and the properties each may have.
_COMMAND = re.compile(r"::(error|warning|notice) ([^:]*)::(.*)")
_PROPERTIES = {"file", "line", "col", "endLine", "endColumn", "title"}


def assert_safe_workflow_commands(data: bytes) -> None:
    """Only policylint's own commands, each parsing into known properties whose values hold no
    separator, and data with no raw line break; every other line is safe text."""
    text = data.decode("utf-8")
    assert _RAW_UNSAFE.search(text.replace("\n", "")) is None
    plain = []
    for line in text.splitlines():
        if line.startswith(("::group::", "::endgroup::")):
            continue
        if line.startswith("::notice title=policylint::"):
            continue
        match = _COMMAND.fullmatch(line)
        if match is None:
            plain.append(line)
            continue
        for prop in match.group(2).split(","):
            key, sep, value = prop.partition("=")
            assert sep and key in _PROPERTIES, f"unexpected property {prop!r}"
            assert "::" not in value
        assert "\r" not in match.group(3)
    assert_safe_text("\n".join(plain).encode())


@pytest.mark.parametrize("color", ["never", "always"])
def test_text_has_one_line_per_finding_and_note_and_says_what_json_says(corpus: Path, report: dict[str, Any], color: str) -> None:
    code, out, _ = invoke("check", "--no-cache", "--format", "text", "--color", color, str(corpus))
    assert code == 1
    text = assert_safe_text(out, color=color == "always")
    lines = _OWN_SGR.sub("", text).splitlines()
    headlines = [line for line in lines if not line.startswith(("    note: ", "    hint: "))]
    notes = [line for line in lines if line.startswith("    note: ")]
    hints = [line for line in lines if line.startswith("    hint: ")]
    findings = report["findings"]
    assert len(headlines) == len(findings)
    assert [unescape(h) for h in hints] == [f"    hint: {f['hint']}" for f in findings if f["hint"]]
    assert len(notes) == sum(len(f["related"]) for f in findings)
    for line, f in zip(headlines, findings):
        # JSON holds the original; the text, escaped.
        original = unescape(line)
        assert (
            original
            == f"{f['file']}:{f['line']}:{f['column']}: {f['severity']} {f['rule']} {f['message']}{_object_text(f['object'])}"
        )
    expected_notes = [f"    note: {r['file']}:{r['line']}:{r['column']}: {r['message']}" for f in findings for r in f["related"]]
    assert [unescape(n) for n in notes] == expected_notes


def test_messages_are_bounded(report: dict[str, Any]) -> None:
    messages = [f["message"] for f in report["findings"]] + [r["message"] for f in report["findings"] for r in f["related"]]
    assert max(len(m) for m in messages) == MAX_MESSAGE  # the huge names and labels are cut...
    cut = [m for m in messages if len(m) == MAX_MESSAGE]
    assert all(m.endswith("…") for m in cut)  # ...and say so


def test_a_file_named_like_a_workflow_command_cannot_start_one(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "::error file=x::owned.yaml").write_text("kind: [unclosed\n", encoding="utf-8")
    # Relative to the current directory the name starts the line: its first colon is escaped.
    monkeypatch.chdir(tmp_path)
    code, out, _ = invoke("check", "--no-cache", "::error file=x::owned.yaml")
    assert code == 1
    text = assert_safe_text(out)
    assert text.startswith("\\x3a:error file=x::owned.yaml:1:")
    assert unescape(text).startswith("::error file=x::owned.yaml:1:")


def test_a_file_name_that_is_not_utf8_is_printable_in_every_format() -> None:
    # Python names undecodable bytes with lone surrogates (PEP 383), which no UTF-8 stream can
    # encode: the text escapes them, the JSON replaces them.
    finding = Finding("dir/bad-\udcff.yaml", 1, 1, "PL001", "yaml-syntax-error", Severity.ERROR, "m\udcfe")
    assert format_finding(finding) == "dir/bad-\\udcff.yaml:1:1: error PL001 m\\udcfe"
    text = textsafe.json_dumps(finding_dict(finding))
    assert json.loads(text.encode("utf-8"))["file"] == "dir/bad-\ufffd.yaml"


# -- PL000 next to every other finding, in every format --------------------------------------------


def _broken_simulation(self: Project) -> Any:
    raise RuntimeError("simulation failed\n::error::injected")


def test_a_crash_in_the_json_policy_section_is_a_finding_not_an_empty_report(
    corpus: Path, report: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    baseline = report["findings"]
    monkeypatch.setattr(Project, "simulation", _broken_simulation)
    code_json, out, _ = invoke("check", "--no-cache", "--format", "json", str(corpus))
    code_text, text_out, _ = invoke("check", "--no-cache", "--format", "text", str(corpus))
    assert code_json == code_text == 2  # README: an internal error is exit code 2, in every format
    broken = json.loads(out)
    assert_valid_report(broken)
    internal = [f for f in broken["findings"] if f["rule"] == "PL000"]
    crashed = {m.group(1) for f in internal if (m := re.match(r"rule (PL\d+) ", f["message"]))}
    assert crashed, "the rules that simulate fail"
    assert any(f["message"].startswith("JSON report: ") for f in internal), "the policy section fails too"
    # Every finding of every rule that did not crash is still there.
    kept = [f for f in baseline if f["rule"] not in crashed]
    assert [f for f in broken["findings"] if f["rule"] != "PL000"] == kept
    # The policies are all listed, their simulated fields empty.
    assert len(broken["policies"]) == len(report["policies"]) > 0
    assert all(p["affects"] is None for p in broken["policies"])
    assert all(t["enforcement"] is None and t["ancestors"] == [] for p in broken["policies"] for t in p["targets"])
    # The text says the same, PL000 included (whose message quotes the exception: escaped).
    text = assert_safe_text(text_out)
    headlines = [line for line in text.splitlines() if not line.startswith(("    note: ", "    hint: "))]
    rules = [re.search(r":\d+:\d+: (?:error|warning|info) (PL\d{3}) ", line).group(1) for line in headlines]  # type: ignore[union-attr]
    assert rules == [f["rule"] for f in broken["findings"] if not f["message"].startswith("JSON report: ")]
    assert "simulation failed\\n::error::injected" in text


def test_the_pipeline_computes_the_policy_section_only_when_asked(corpus: Path) -> None:
    assert lint(LintRequest(paths=[str(corpus)])).policy_reports is None
    asked = lint(LintRequest(paths=[str(corpus)], report_policies=True))
    assert asked.policy_reports is not None and len(asked.policy_reports) == 2


# -- bounded messages at the source --------------------------------------------------------------


class _Loud(Rule):
    """Reports a message and a note of ten million characters."""

    id = "PL901"
    name = "loud"
    severity = Severity.ERROR

    def check(self, project: Project) -> Iterator[Issue]:
        for obj in project.index.objects:
            big = "x" * 10_000_000
            yield self.issue(obj, "metadata.name", big, related=(Related(big, object=obj, path="metadata.name"),))


def test_the_engine_bounds_every_message_and_note(tmp_path: Path) -> None:
    (tmp_path / "a.yaml").write_text("apiVersion: v1\nkind: Service\nmetadata: {name: a, namespace: x}\n", encoding="utf-8")
    project = load_project(LintRequest(paths=[str(tmp_path)]))
    result = run_engine(project, [_Loud], PositionResolver(lambda f: None))
    (finding,) = result.findings
    assert len(finding.message) == MAX_MESSAGE and finding.message.endswith("x…")
    assert len(finding.related[0].message) == MAX_MESSAGE


def _amplifying_anchors(indent: str) -> str:
    """YAML anchors `s` (10^6 characters) to `l5` (10^5 references to `s`): 10^11 characters
    written out, 10^5 nodes expanded."""
    lines = ["s: &s " + "A" * 1_000_000, "l1: &l1 [" + ", ".join(["*s"] * 10) + "]"]
    lines += [f"l{i}: &l{i} [" + ", ".join([f"*l{i - 1}"] * 10) + "]" for i in range(2, 6)]
    return textwrap.indent("\n".join(lines), indent) + "\n"


# Runs the label rules on a Gateway whose selector value is replaced, after loading, by a value
# shared as YAML aliases can share it (whatever the loader's own limits): 10^5 references to one
# string of 10^6 characters. The rule quotes the value in its message; repr() of it whole would
# need 10^11 characters: a MemoryError under the limit below, that is a PL000.
_AMPLIFIED_SELECTOR = """\
import resource, sys
resource.setrlimit(resource.RLIMIT_AS, (3 << 30, 3 << 30))
from policylint.rules.engine import run
from policylint.pipeline import LintRequest, load_project
from policylint.input.positions import PositionResolver
from policylint.rules import REGISTRY

project = load_project(LintRequest(paths=[sys.argv[1]]))
(gateway,) = [o for o in project.index.objects if o.kind == "Gateway"]
value = "A" * 1_000_000
for _ in range(5):
    value = [value] * 10
gateway.data["spec"]["listeners"][0]["allowedRoutes"]["namespaces"]["selector"]["matchLabels"]["team"] = value
result = run(project, [r for r in REGISTRY if r.id.startswith("PL5")], PositionResolver(lambda f: None))
for f in result.findings:
    print(f.rule, len(f.message))
"""


def test_a_huge_shared_value_is_not_quoted_whole_in_a_message(tmp_path: Path) -> None:
    (tmp_path / "g.yaml").write_text(
        "apiVersion: gateway.networking.k8s.io/v1\nkind: Gateway\nmetadata: {name: g, namespace: app}\n"
        "spec:\n  gatewayClassName: eg\n  listeners:\n  - {name: http, protocol: HTTP, port: 80,"
        " allowedRoutes: {namespaces: {from: Selector, selector: {matchLabels: {team: x}}}}}\n",
        encoding="utf-8",
    )
    proc = subprocess.run(
        [sys.executable, "-c", _AMPLIFIED_SELECTOR, str(tmp_path / "g.yaml")],
        check=False,
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    rows = [(rule, int(size)) for rule, size in (line.split() for line in proc.stdout.splitlines())]
    assert ("PL000", 0) not in [(r, 0) for r, _ in rows], proc.stdout
    assert [r for r, _ in rows if r.startswith("PL5")], "the selector value is reported"
    assert all(size <= MAX_MESSAGE for _, size in rows)


# -- explain ---------------------------------------------------------------------------------------


def _explain_queries() -> list[str]:
    return [
        f"httproute/{NS}/{ROUTE}",
        f"gateway/{NS}/{GW}#{LISTENER}",
        f"backendtrafficpolicy/{NS}/{POLICY}",
        f"service/{NS}/{SERVICE}",
    ]


@pytest.mark.parametrize("query", _explain_queries(), ids=["route", "listener", "policy", "service"])
def test_explain_text_is_safe(corpus: Path, query: str) -> None:
    code, out, err = invoke("explain", query, str(corpus))
    assert code == 0, err
    text = assert_safe_text(out)
    assert_safe_text(err)
    # The names are there, escaped and recoverable.
    assert escape(NS) in text
    assert NS in unescape(text)


def test_explain_text_values_are_json_escaped_and_bounded(corpus: Path) -> None:
    code, out, _ = invoke("explain", f"httproute/{NS}/{ROUTE}", str(corpus))
    assert code == 0
    text = assert_safe_text(out)
    lines = text.splitlines()
    (stat_name,) = [line for line in lines if line.strip().startswith("telemetry.metrics.routeStatName:")]
    shown = stat_name.split(": ", 1)[1]
    # The standard library's JSON text of the value, with what JSON leaves raw escaped, cut to 100.
    assert shown == textsafe.truncate(json.dumps(VALUE, ensure_ascii=False).translate(_JSON_ESCAPES), 100, "...")
    (note,) = [line for line in lines if line.strip().startswith("retry.note:")]
    assert len(note.split(": ", 1)[1]) == 100  # 300,000 characters, shown as 100


@pytest.mark.parametrize("query", _explain_queries(), ids=["route", "listener", "policy", "service"])
def test_explain_json_is_valid_and_holds_the_originals(corpus: Path, query: str) -> None:
    code, out, _ = invoke("explain", "--format", "json", query, str(corpus))
    assert code == 0
    text = out.decode("utf-8")
    assert _RAW_UNSAFE.search(text.replace("\n", "")) is None
    document = json.loads(text)
    assert_no_surrogates(document)
    assert any(NS in s for s in _strings(document))  # the namespace as it was written


def test_explain_json_holds_values_whole(corpus: Path) -> None:
    code, out, _ = invoke("explain", "--format", "json", f"httproute/{NS}/{ROUTE}", str(corpus))
    assert code == 0
    document = json.loads(out)
    strings = set(_strings(document))
    assert VALUE in strings and HUGE in strings


def _amplified(levels: int = 6, width: int = 10) -> Any:
    value: Any = "B" * 1_000_000
    for _ in range(levels):
        value = [value] * width  # one list, referenced `width` times: 10^6 strings of 10^6 characters
    return value


def _deep(depth: int = 200_000) -> Any:
    root: list[Any] = []
    node = root
    for _ in range(depth):
        child: list[Any] = []
        node.append(child)
        node = child
    node.append("bottom")
    return root


def test_explain_renders_amplified_and_deep_values_bounded() -> None:
    # Independent of the loader's limits: the values are built here, shared and nested as YAML
    # aliases can make them. Written out whole, the first would be 10^12 characters, and the
    # second overflows any recursive encoder.
    for value in (_amplified(), _deep(), {"k": _deep()}):
        text = _value_text(value)
        assert len(text) <= 100
        budget = Budget(nodes=1_000, chars=10_000)
        copy = _jsonable(value, budget)
        assert len(json.dumps(copy)) < 50_000
    assert _value_text(_amplified()).startswith('[[[[[["BBBB')
    assert "nested deeper than" in json.dumps(_jsonable(_deep(), Budget()))


def test_explain_of_an_alias_amplified_value_finishes_bounded(tmp_path: Path) -> None:
    # The value of a policy the route gets: 10^5 references to a 10^6-character string, and lists
    # nested 3,000 deep through aliases. Whether the loader lets them through or not, explain
    # must finish with bounded output and no traceback.
    deep = [f"d1: &d1 {'[' * 200}x{']' * 200}"] + [f"d{i}: &d{i} {'[' * 200}*d{i - 1}{']' * 200}" for i in range(2, 16)]
    manifests = textwrap.dedent(
        """\
        apiVersion: gateway.networking.k8s.io/v1
        kind: GatewayClass
        metadata: {name: eg}
        spec: {controllerName: example.com/gateway-controller}
        ---
        apiVersion: gateway.networking.k8s.io/v1
        kind: Gateway
        metadata: {name: gw, namespace: app}
        spec: {gatewayClassName: eg, listeners: [{name: http, port: 80, protocol: HTTP}]}
        ---
        apiVersion: gateway.networking.k8s.io/v1
        kind: HTTPRoute
        metadata: {name: r, namespace: app}
        spec: {parentRefs: [{name: gw}], rules: [{backendRefs: [{name: web, port: 80}]}]}
        ---
        apiVersion: gateway.envoyproxy.io/v1alpha1
        kind: BackendTrafficPolicy
        metadata: {name: p, namespace: app}
        spec:
          targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: r}]
          retry:
        """
    )
    (tmp_path / "p.yaml").write_text(
        manifests + _amplifying_anchors("    ") + textwrap.indent("\n".join(deep), "    ") + "\n", encoding="utf-8"
    )
    script = textwrap.dedent(
        """\
        import resource, sys
        resource.setrlimit(resource.RLIMIT_AS, (3 << 30, 3 << 30))
        from policylint.entry import main
        sys.exit(main(sys.argv[1:]))
        """
    )
    for fmt in ("text", "json"):
        proc = subprocess.run(
            [sys.executable, "-c", script, "explain", "--format", fmt, "httproute/app/r", str(tmp_path / "p.yaml")],
            check=False,
            capture_output=True,
            timeout=120,
            cwd=ROOT,
        )
        assert proc.returncode == 0, proc.stderr[-2000:]
        assert len(proc.stdout) < 40_000_000  # 10^11 characters written out whole
        if fmt == "json":
            json.loads(proc.stdout)
        else:
            assert_safe_text(proc.stdout)


# -- graph -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("fmt", ["mermaid", "dot"])
def test_graph_is_safe(corpus: Path, fmt: str) -> None:
    code, out, _ = invoke("graph", "--format", fmt, str(corpus))
    assert code == 0
    text = assert_safe_text(out)
    assert max(len(line) for line in text.splitlines()) < 3 * MAX_FIELD + 1_000  # the huge names are cut
    if fmt == "mermaid":
        # Labels are quoted; inside, entity codes stand for what Mermaid would read (the quote,
        # `#`, `;`, `<`, `>`, `&`, `|` and the backtick). Decoded, then unescaped: the names.
        labels = [label for line in text.splitlines() for label in re.findall(r'"([^"]*)"', line)]
        assert not [label for label in labels if "`" in label]
        decoded = [re.sub(r"#(\d+);", lambda m: chr(int(m.group(1))), label) for label in labels]
        names = {unescape(part) for label in decoded for part in label.split("<br/>")}
        assert {GW, ROUTE, POLICY, f"namespace {NS}"} <= names
    else:
        # DOT labels are JSON-style strings: decoded, then unescaped, they give the names back.
        labels = re.findall(r'label="((?:[^"\\]|\\.)*)"', text)
        names = {unescape(part) for label in labels for part in json.loads(f'"{label}"').split("\n")}
        assert {GW, ROUTE, POLICY, f"namespace {NS}"} <= names


# -- CLI error messages ----------------------------------------------------------------------------

# No comma: `--select` splits on commas.
HOSTILE_ARG = f"x\n::error file=x.yaml::owned{OSC52}{OSC8}{SEPARATORS}{BIDI}{C1}y"


@pytest.mark.parametrize(
    "args",
    [
        ["check", "--no-cache", HOSTILE_ARG],  # a path that does not exist
        ["check", "--no-cache", "--select", HOSTILE_ARG, "."],  # an unknown rule code
        ["check", "--no-cache", "--external", f"a/b/c/{HOSTILE_ARG}", "."],
        ["check", "--format", HOSTILE_ARG, "."],  # click's own usage errors
        ["rules", HOSTILE_ARG],
        ["rule", HOSTILE_ARG],
        ["explain", f"gateway/{HOSTILE_ARG}/x", "CORPUS"],
        ["explain", f"{HOSTILE_ARG}/x", "CORPUS"],
        ["graph", "--focus", f"httproute/{NS}/nope{HOSTILE_ARG}", "CORPUS"],
    ],
    ids=["path", "select", "external", "choice", "extra-argument", "rule", "explain-namespace", "explain-kind", "graph-focus"],
)
def test_cli_errors_echo_input_escaped(corpus: Path, args: list[str]) -> None:
    code, out, err = invoke(*[str(corpus) if a == "CORPUS" else a for a in args])
    assert code == 2
    assert out == b""
    text = assert_safe_text(err)
    error_lines = [line for line in text.splitlines() if "rror:" in line]
    assert len(error_lines) == 1, text
    # The argument is in the message, escaped: recoverable as it was given (or as Python's repr).
    recovered = unescape(error_lines[0])
    assert HOSTILE_ARG in recovered or repr(HOSTILE_ARG)[1:-1] in recovered


# -- the helper itself -----------------------------------------------------------------------------

any_text = st.text(st.characters(codec=None, exclude_categories=()), max_size=40)


@given(any_text)
def test_escape_is_one_safe_line_and_reversible(text: str) -> None:
    escaped = escape(text)
    assert _RAW_UNSAFE.search(escaped) is None and "\n" not in escaped
    assert unescape(escaped) == text
    assert unescape(textsafe.defuse_line(escaped)) == text


@given(any_text, any_text)
def test_escaped_fields_cannot_merge_into_one_another(a: str, b: str) -> None:
    # A backslash in the input is escaped too: `a\n` typed in a name and a newline differ.
    if a != b:
        assert escape(a) != escape(b)


def test_escape_forms() -> None:
    assert escape("a\nb\rc\td\\e\x1bf\x07g\x7fh\x9bi\u2028j\u202ek\ud800") == (
        "a\\nb\\rc\\td\\\\e\\x1bf\\x07g\\x7fh\\x9bi\\u2028j\\u202ek\\ud800"
    )
    assert escape("ünïcödé ✓ 名前") == "ünïcödé ✓ 名前"  # printable text is untouched
    assert textsafe.defuse_line("  ::error::x") == "  \\x3a:error::x"
    assert textsafe.defuse_line("a ::error::x") == "a ::error::x"


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner, max_size=4),
    max_leaves=12,
)


@given(json_values)
def test_bounded_renderings_match_the_standard_ones_within_their_limit(value: Any) -> None:
    full = json.dumps(value, ensure_ascii=False)
    assert textsafe.json_text(value, 10_000) == full.translate(_JSON_ESCAPES)
    assert textsafe.json_text(value, 20) == textsafe.truncate(textsafe.json_text(value, 10_000), 20, "...")
    assert textsafe.short_repr(value, 10_000) == repr(value)
    assert textsafe.jsonable(value, Budget()) == json.loads(full)


_JSON_ESCAPES = {
    c: f"\\u{c:04x}" for c in [*range(0x7F, 0xA0), 0x61C, 0x200E, 0x200F, *range(0x2028, 0x202F), *range(0x2066, 0x206A)]
}


@given(
    st.recursive(
        st.text(st.characters(codec=None, exclude_categories=()), max_size=6),
        lambda i: st.lists(i, max_size=3) | st.dictionaries(st.text(max_size=3), i, max_size=3),
        max_leaves=8,
    )
)
def test_json_dumps_is_valid_utf8_json(value: Any) -> None:
    for ensure_ascii in (True, False):
        text = textsafe.json_dumps(value, ensure_ascii=ensure_ascii)
        text.encode("utf-8")  # no lone surrogate
        decoded = json.loads(text)
        assert_no_surrogates(decoded)
        assert _RAW_UNSAFE.search(text.replace("\n", "")) is None
        if not re.search("[\ud800-\udfff]", json.dumps(value, ensure_ascii=False)):
            assert decoded == value


_JSONISH = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4),
    max_leaves=20,
)


@given(_JSONISH)
def test_the_fast_json_writer_writes_what_the_standard_library_writes(value: Any) -> None:
    # Reports are written by orjson when installed (textsafe.json_dumps(fast=True)): the bytes
    # must be the standard library's, lone surrogates and integers beyond 64 bits included
    # (orjson refuses those, and the standard library writes them).
    assert textsafe.json_dumps(value, fast=True) == textsafe.json_dumps(value)
    assert textsafe.json_dumps({"a": [value, {"b": value}]}, fast=True) == textsafe.json_dumps({"a": [value, {"b": value}]})


def test_the_fast_json_writer_falls_back_on_what_orjson_refuses() -> None:
    for value in ({"file": "bad-\udcff.yaml"}, {"n": 2**70}, [{"k": "\ud800"}, -(2**64)]):
        assert textsafe.json_dumps(value, fast=True) == textsafe.json_dumps(value)


class _CountingPattern:
    """A compiled pattern that counts the texts it is asked to search."""

    def __init__(self, pattern: re.Pattern[str]) -> None:
        self.pattern = pattern
        self.searched = 0

    def search(self, text: str) -> re.Match[str] | None:
        self.searched += 1
        return self.pattern.search(text)

    def sub(self, repl: Any, text: str) -> str:
        return self.pattern.sub(repl, text)


def test_an_ascii_report_is_not_searched_for_what_needs_escaping(monkeypatch: pytest.MonkeyPatch) -> None:
    """A report that is ASCII without DEL (nearly every one) holds no lone surrogate, nothing
    `ensure_ascii` escapes and nothing a terminal acts on: it is written as encoded, with no regex
    search over its megabytes (they cost three times the encoding). DEL, the one ASCII character
    a terminal acts on, is still escaped, and so is the rest."""
    patterns = {name: _CountingPattern(getattr(textsafe, name)) for name in ("_SURROGATE", "_JSON_UNSAFE", "_NON_ASCII")}
    for name, counting in patterns.items():
        monkeypatch.setattr(textsafe, name, counting)
    report = {"findings": [{"message": "plain text", "line": 3}] * 50}
    for fast in (True, False):
        assert json.loads(json_dumps(report, fast=fast)) == report
    assert [p.searched for p in patterns.values()] == [0, 0, 0]
    assert json_dumps({"m": "a\x7fb"}, fast=True) == '{\n  "m": "a\\u007fb"\n}'
    assert json_dumps({"m": "caf\u00e9 \u202e"}, fast=True) == '{\n  "m": "caf\\u00e9 \\u202e"\n}'
    assert patterns["_SURROGATE"].searched == patterns["_JSON_UNSAFE"].searched == 2


_ANY_TEXT = st.text(st.characters(blacklist_categories=()), max_size=8)  # lone surrogates too
_JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**70), 2**70) | _ANY_TEXT,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_ANY_TEXT, inner, max_size=3),
    max_leaves=12,
)


@given(
    st.lists(st.tuples(_ANY_TEXT, st.booleans(), st.lists(_JSON_VALUES, max_size=3)), max_size=4, unique_by=lambda f: f[0]),
    st.booleans(),
)
@settings(max_examples=300, deadline=None)
def test_json_written_in_pieces_is_the_document_written_whole(
    fields: list[tuple[str, bool, list[Any]]], ascii_only: bool
) -> None:
    # Lone surrogates, controls, bidirectional marks and non-ASCII text in keys and values, empty
    # lists and maps, integers beyond 64 bits (the standard library's fallback): the pieces joined
    # are the bytes of one `json_dumps` of the whole.
    long = {key for key, is_long, _ in fields if is_long}
    whole = {key: items if is_long else (items[0] if items else {}) for key, is_long, items in fields}
    pieces = [(key, iter(value) if key in long else value) for key, value in whole.items()]
    joined = "".join(json_object_pieces(pieces, long=long, ensure_ascii=ascii_only, fast=True))
    assert joined == json_dumps(whole, indent=2, ensure_ascii=ascii_only, fast=True, newline=True)


@given(st.lists(_JSON_VALUES, max_size=9), st.integers(1, 4), st.booleans())
@settings(max_examples=200, deadline=None)
def test_json_pieces_in_batches_are_the_document_written_whole(items: list[Any], batch: int, ascii_only: bool) -> None:
    # Batches of one to four items, so that a list is cut into several and its last batch is short.
    import policylint.textsafe as textsafe

    original = textsafe.PIECE_ITEMS
    textsafe.PIECE_ITEMS = batch
    try:
        pieces = list(json_object_pieces([("a", 1), ("items", iter(items))], long={"items"}, ensure_ascii=ascii_only, fast=True))
    finally:
        textsafe.PIECE_ITEMS = original
    whole = {"a": 1, "items": items}
    assert "".join(pieces) == json_dumps(whole, indent=2, ensure_ascii=ascii_only, fast=True, newline=True)
    assert len(pieces) == 3 + -(-len(items) // batch)  # the first field, the batches, the closings


def test_json_report_dumps_its_findings_a_batch_at_a_time(monkeypatch: pytest.MonkeyPatch) -> None:
    """600 findings in the JSON report, one with an em dash: written by a dump per batch of
    `PIECE_ITEMS`, not one each (the tree before), but for the batch with the em dash, whose items
    are dumped and escaped one by one; the bytes are those of the report written whole."""
    import policylint.textsafe as textsafe

    findings = [{"rule": "PL201", "message": f"m{i}", "related": [{"line": i}]} for i in range(600)]
    findings[100]["message"] = "a \u2014 b"
    dumped: list[Any] = []
    original = textsafe._dumps

    def counted(document: Any, *args: Any) -> str:
        dumped.append(document)
        return original(document, *args)

    monkeypatch.setattr(textsafe, "_dumps", counted)
    text = "".join(json_object_pieces([("findings", iter(findings))], long={"findings"}, ensure_ascii=True, fast=True))
    monkeypatch.undo()
    batches = -(-600 // textsafe.PIECE_ITEMS)
    assert textsafe.PIECE_ITEMS >= 16
    assert len([d for d in dumped if isinstance(d, list)]) == batches
    assert len([d for d in dumped if isinstance(d, dict)]) == textsafe.PIECE_ITEMS  # the em dash's batch
    assert text == json_dumps({"findings": findings}, indent=2, ensure_ascii=True, fast=True, newline=True)
    assert "a \\u2014 b" in text
