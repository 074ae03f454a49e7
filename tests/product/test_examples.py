"""The bundled example repository (examples/) is the demo input: it must show every rule family.

The planted mistakes are listed in a table in examples/README.md; this test
reads that table, so the README and the behaviour cannot drift apart.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from policylint.findings import Finding, Severity
from policylint.pipeline import LintResult
from policylint.profiles.registry import ORIGIN_PROFILE, load_profile_file
from policylint.resources import load_schema
from tests.lintutil import ROOT, lint_paths

EXAMPLES = ROOT / "examples"
README = EXAMPLES / "README.md"
PROFILE_EXAMPLE = ROOT / "docs" / "timeoutpolicy-profile.yaml"
FAMILIES = ("PL0", "PL1", "PL2", "PL3", "PL4", "PL5", "PL6")
NO_OBJECT = "—"


@dataclass(frozen=True)
class Planted:
    rule: str
    file: str  # relative to examples/
    object: str  # `Kind ns/name`, or NO_OBJECT for findings about the file itself

    def __str__(self) -> str:
        return f"{self.rule} {self.file} {self.object}"


def planted_mistakes() -> list[Planted]:
    """Rows of the table under `## Planted mistakes`: | rule | file | object | mistake |."""
    text = README.read_text(encoding="utf-8")
    section = text.split("## Planted mistakes", 1)[1]
    rows = []
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) < 3 or not re.fullmatch(r"PL\d{3}", cells[0]):
            continue  # prose, header or separator
        rows.append(Planted(cells[0], cells[1], cells[2]))
    return rows


PLANTED = planted_mistakes()


def relative(finding: Finding) -> str:
    return Path(finding.file).resolve().relative_to(EXAMPLES).as_posix()


@pytest.fixture(scope="module")
def result() -> LintResult:
    return lint_paths([EXAMPLES])


def test_readme_lists_planted_mistakes() -> None:
    assert len(PLANTED) >= 10
    assert {p.rule[:3] for p in PLANTED} >= set(FAMILIES)
    for p in PLANTED:
        assert (EXAMPLES / p.file).is_file(), f"{p}: no such file"


def test_every_mistake_comment_is_in_the_table() -> None:
    # Each planted mistake is marked `# MISTAKE:` in its file; a marked file missing from
    # the table would be a mistake nobody checks.
    marked = {
        path.relative_to(EXAMPLES).as_posix()
        for path in EXAMPLES.rglob("*.yaml")
        if "# MISTAKE:" in path.read_text(encoding="utf-8")
    }
    assert marked == {p.file for p in PLANTED}


def test_no_internal_error(result: LintResult) -> None:
    assert not result.internal_error
    assert [f.message for f in result.findings if f.rule == "PL000"] == []


@pytest.mark.parametrize("family", FAMILIES)
def test_every_family_reports_with_a_position(result: LintResult, family: str) -> None:
    found = [f for f in result.findings if f.rule.startswith(family)]
    assert found, f"no {family}xx finding on examples/"
    for f in found:
        assert (EXAMPLES / relative(f)).is_file()
        assert f.line >= 1 and f.column >= 1, f


@pytest.mark.parametrize("planted", PLANTED, ids=str)
def test_planted_mistake_is_reported(result: LintResult, planted: Planted) -> None:
    def matches(f: Finding) -> bool:
        if f.rule != planted.rule or relative(f) != planted.file:
            return False
        return planted.object == NO_OBJECT or str(f.object) == planted.object

    reported = [f for f in result.findings if matches(f)]
    same_file = [f"{f.rule} {f.object} {f.message}" for f in result.findings if relative(f) == planted.file]
    assert reported, f"{planted} not reported; findings in that file: {same_file}"


def test_no_errors_outside_planted_files(result: LintResult) -> None:
    # The rest of the example repository is meant to be correct: a false positive shows here.
    planted_files = {p.file for p in PLANTED}
    stray = [
        f"{relative(f)}:{f.line}:{f.column} {f.rule} {f.message}"
        for f in result.findings
        if f.severity >= Severity.ERROR and relative(f) not in planted_files
    ]
    assert stray == []


def test_demo_command_exits_1_with_a_valid_json_report() -> None:
    """What `make demo` runs, through the real command line, with the JSON reporter."""
    import jsonschema

    proc = subprocess.run(
        [sys.executable, "-m", "policylint", "--format", "json", "examples/"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 1, proc.stderr
    report = json.loads(proc.stdout)
    jsonschema.Draft202012Validator(load_schema("report.schema.json")).validate(report)
    assert report["summary"]["findings"]["error"] >= 1
    assert all(f["file"].startswith("examples/") for f in report["findings"])
    # The summary goes to stderr, never into the machine-readable document.
    assert "error" in proc.stderr


def test_profile_example_describes_the_in_house_kind() -> None:
    (profile,) = load_profile_file(PROFILE_EXAMPLE, origin=ORIGIN_PROFILE)
    assert (profile.group, profile.kind) == ("platform.example.com", "TimeoutPolicy")
    result = lint_paths([EXAMPLES], profile_paths=[str(PROFILE_EXAMPLE)])
    policies = {str(p.key): p for p in result.project.resolution.policies()}
    assert policies["TimeoutPolicy team-a/inventory-deadlines"].profile.origin == ORIGIN_PROFILE
