"""Reporters: golden output for one canonical input, the JSON schema, and colour.

The canonical input is tests/reporters/input/; the expected output is in
tests/reporters/golden/. After an intended change to the output, regenerate
with `pytest tests/reporters/test_reporters.py --update-golden` and review the diff.

The run selects the input family only (`--select PL0`), so that the golden
files change when the reporters or the input rules change, not whenever a
rule family elsewhere gains a rule. The `policies` section is independent of
the selection and shows what the index resolved.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any, cast

import pytest
from click.testing import CliRunner

from policylint.cli import cli
from policylint.commands import use_color as _use_color
from policylint.findings import Finding, ResolvedRelated, Severity, SuppressionKind
from policylint.k8s.objects import ObjectKey
from policylint.reporters import FORMATS
from policylint.reporters.json import help_uri
from policylint.reporters.text import format_finding
from tests.lintutil import ROOT, assert_valid_report

INPUT = "tests/reporters/input"
GOLDEN = ROOT / "tests" / "reporters" / "golden"
ARGS = ["--select", "PL0", INPUT]

# Every JSON report these tests render is checked against the report schema (tests/conftest.py).
pytestmark = pytest.mark.usefixtures("validate_json_reports")


def _run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, [*args, *ARGS])
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture(autouse=True)
def _in_the_repository(monkeypatch: pytest.MonkeyPatch) -> None:
    # Relative paths in, relative paths out: the golden files hold no machine paths.
    monkeypatch.chdir(ROOT)


@pytest.mark.parametrize(("fmt", "golden"), [("text", "report.txt"), ("json", "report.json")])
def test_golden(fmt: str, golden: str, update_golden: bool) -> None:
    # `--color always` with JSON: machine formats are never coloured.
    code, out, err = _run("--format", fmt, "--color", "always" if fmt == "json" else "never")
    assert code == 1
    assert err == "4 errors, 0 warnings, 0 info in 2 files (4 objects, 2 policies)\n"
    path = GOLDEN / golden
    if update_golden:
        path.write_text(out, encoding="utf-8")
    assert out == path.read_text(encoding="utf-8"), f"{path.name} is stale: run pytest {__file__} --update-golden and review"


def test_golden_json_is_valid_and_says_what_the_text_says() -> None:
    report = json.loads((GOLDEN / "report.json").read_text(encoding="utf-8"))
    assert_valid_report(report)
    text = (GOLDEN / "report.txt").read_text(encoding="utf-8").splitlines()
    headlines = [line for line in text if not line.startswith("    note: ")]
    assert len(headlines) == len(report["findings"])
    for line, f in zip(headlines, report["findings"]):
        assert line.startswith(f"{f['file']}:{f['line']}:{f['column']}: {f['severity']} {f['rule']} {f['message']}")
        assert f["helpUri"] == help_uri(f["rule"], f["name"])
    notes = [line for line in text if line.startswith("    note: ")]
    assert notes == [
        f"    note: {r['file']}:{r['line']}:{r['column']}: {r['message']}" for f in report["findings"] for r in f["related"]
    ]
    assert all(not os.path.isabs(f["file"]) for f in report["findings"])
    assert report["summary"] == {"files": 2, "objects": 4, "policies": 2, "findings": {"error": 4, "warning": 0, "info": 0}}
    assert [(p["object"]["name"], [t["accepted"] for t in p["targets"]]) for p in report["policies"]] == [
        ("billing-tls", ["Accepted"]),
        ("ledger-tls", ["TargetNotFound"]),
    ]


def test_every_format_renders_an_empty_run(tmp_path: Path) -> None:
    (tmp_path / "ok.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ok\n")
    for fmt in FORMATS:
        result = CliRunner().invoke(cli, ["--format", fmt, str(tmp_path)])
        assert result.exit_code == 0
        if fmt == "json":
            report = json.loads(result.stdout)
            assert_valid_report(report)
            assert report["findings"] == [] and report["summary"]["objects"] == 1
        elif fmt == "text":
            assert result.stdout == ""
        else:  # a document that says there is nothing: tests/reporters/test_ci_reporters.py
            assert result.stdout


# -- the text format -------------------------------------------------------------------------------

FINDING = Finding(
    file="a.yaml",
    line=3,
    column=5,
    rule="PL201",
    name="targetref-not-found",
    severity=Severity.WARNING,
    message="Service 'x' not found",
    object=ObjectKey("gateway.networking.k8s.io", "BackendTLSPolicy", "app", "tls"),
    api_version="gateway.networking.k8s.io/v1",
    path="spec.targetRefs[0]",
    related=(ResolvedRelated("the namespace", "b.yaml", 1, 1),),
)


def test_the_json_reports_rendered_here_are_checked_against_the_schema() -> None:
    from policylint.reporters import json as json_reporter

    # Both ways the reporter writes a report are the checking ones of tests/conftest.py here.
    assert json_reporter.report.__module__ == json_reporter.pieces.__module__ == "tests.conftest"


def test_text_line_format() -> None:
    assert format_finding(FINDING).splitlines() == [
        "a.yaml:3:5: warning PL201 Service 'x' not found [BackendTLSPolicy app/tls]",
        "    note: b.yaml:1:1: the namespace",
    ]
    bare = Finding("c.yaml", 1, 1, "PL001", "yaml-syntax-error", Severity.ERROR, "broken")
    assert format_finding(bare) == "c.yaml:1:1: error PL001 broken"
    cluster = Finding("c.yaml", 2, 3, "PL999", "x", Severity.INFO, "m", object=ObjectKey("", "Namespace", None, "app"))
    assert format_finding(cluster) == "c.yaml:2:3: info PL999 m [Namespace app]"


def test_text_colour_codes() -> None:
    coloured = format_finding(FINDING, color=True)
    assert "\x1b[1;33mwarning\x1b[0m" in coloured
    assert "\x1b[1ma.yaml:3:5:\x1b[0m" in coloured
    assert "[BackendTLSPolicy app/tls]" in coloured
    plain = coloured
    for code in ("\x1b[1;33m", "\x1b[1m", "\x1b[2m", "\x1b[0m"):
        plain = plain.replace(code, "")
    assert plain == format_finding(FINDING)
    bare = Finding("c.yaml", 1, 1, "PL001", "yaml-syntax-error", Severity.ERROR, "broken")
    assert format_finding(bare, color=True).endswith("broken")  # no empty styled span at the end


class _Stream:
    def __init__(self, tty: bool) -> None:
        self._tty = tty

    def isatty(self) -> bool:
        return self._tty


@pytest.mark.parametrize(
    ("choice", "tty", "no_color", "expected"),
    [
        ("auto", False, None, False),
        ("auto", True, None, True),
        ("auto", True, "1", False),
        ("auto", True, "", True),  # NO_COLOR only counts when non-empty (no-color.org)
        ("never", True, None, False),
        ("always", False, None, True),
        ("always", False, "1", True),  # an explicit flag beats the environment
    ],
)
def test_use_color(monkeypatch: pytest.MonkeyPatch, choice: str, tty: bool, no_color: str | None, expected: bool) -> None:
    if no_color is None:
        monkeypatch.delenv("NO_COLOR", raising=False)
    else:
        monkeypatch.setenv("NO_COLOR", no_color)
    assert _use_color(choice, _Stream(tty)) is expected


def _run_on_a_terminal(*args: str, no_color: bool) -> str:
    """Run policylint with stdout on a pseudo-terminal, as in an interactive shell."""
    env = {k: v for k, v in os.environ.items() if k != "NO_COLOR"}
    env["PYTHONPATH"] = str(ROOT)
    if no_color:
        env["NO_COLOR"] = "1"
    master, slave = os.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "policylint", *args], stdout=slave, stderr=subprocess.DEVNULL, cwd=ROOT, env=env
    )
    os.close(slave)
    chunks = []
    while True:
        try:
            data = os.read(master, 65536)
        except OSError:  # EIO: the child closed the terminal
            break
        if not data:
            break
        chunks.append(data)
    os.close(master)
    assert proc.wait(timeout=300) == 1
    return b"".join(chunks).decode("utf-8")


def test_colour_on_a_terminal_unless_no_color() -> None:
    on_tty = _run_on_a_terminal(*ARGS, no_color=False)
    assert "\x1b[1;31merror\x1b[0m" in on_tty
    without = _run_on_a_terminal(*ARGS, no_color=True)
    assert "\x1b[" not in without
    assert "error PL005" in without
    forced = _run_on_a_terminal("--color", "always", *ARGS, no_color=True)
    assert "\x1b[1;31merror\x1b[0m" in forced
    json_on_tty = _run_on_a_terminal("--format", "json", *ARGS, no_color=False)
    assert "\x1b[" not in json_on_tty


class _Findings:
    """The parts of a run's result the text reporter reads (`policylint.reported.Reported`)."""

    def __init__(self, findings: list[Finding], suppressed: list[Finding], show_suppressed: bool) -> None:
        self.findings, self.suppressed, self.show_suppressed = findings, suppressed, show_suppressed

    def introduced_by_change(self, finding: Finding) -> bool | None:
        return None


def test_the_text_report_is_written_in_pieces_of_whole_findings_that_join_to_the_report() -> None:
    from dataclasses import replace

    from policylint.findings import Suppression
    from policylint.reporters import streamer
    from policylint.reporters import text as text_reporter

    many = [replace(FINDING, line=n) for n in range(1, 2 * text_reporter.PIECE_LINES + 2)]
    hidden = [replace(FINDING, line=7, suppression=Suppression(SuppressionKind.COMMENT, "known"))]
    result = _Findings(many, hidden, show_suppressed=True)
    # What the report is, written out by hand: each finding's lines, then each suppressed one with
    # how it was hidden, every line ended by a break.
    lines = [format_finding(f) for f in many] + [format_finding(hidden[0]) + "\n    suppressed: comment -- known"]
    whole = "\n".join(lines) + "\n"
    got = list(streamer("text")(cast(Any, result)))
    # Three pieces of at most PIECE_LINES findings, each ending where a finding does.
    assert [piece.count("warning PL201") for piece in got] == [1000, 1000, 2]
    assert all(piece.endswith("\n") for piece in got)
    assert "".join(got) == whole == text_reporter.render(cast(Any, result))
    assert text_reporter.render(cast(Any, _Findings([], hidden, show_suppressed=False))) == ""
