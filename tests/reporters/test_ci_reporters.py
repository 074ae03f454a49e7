"""The CI formats: SARIF, JUnit, GitHub annotations, GitLab Code Quality, Markdown; several
outputs in one run; `--format auto`; exit codes that never depend on the format.

One canonical project, tests/reporters/ci/ (a finding of each severity, a note in another file,
an attachment chain across files, a suppressed finding), is rendered in every format and compared
with tests/reporters/ci-golden/. After an intended change to the output, regenerate with
`pytest tests/reporters/test_ci_reporters.py --update-golden` and review the diff: each golden was checked
by hand against the format's documentation named in its test.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any
from xml.etree import ElementTree

import jsonschema
import pytest
from click.testing import CliRunner
from hypothesis import given
from hypothesis import strategies as st

from benchmarks.generate import write_corpus
from policylint import HOMEPAGE, __version__, attachment_chain
from policylint.cli import cli
from policylint.findings import Finding, Severity
from policylint.input.positions import PositionResolver
from policylint.reporters import FORMATS, REPORTERS, RenderOptions
from policylint.reporters import github as github_reporter
from policylint.reporters import junit as junit_reporter
from policylint.reporters import markdown as markdown_reporter
from policylint.rules import REGISTRY
from policylint.textsafe import unescape
from tests.lintutil import ROOT, lint_paths

# Every JSON report these tests render is checked against the report schema (tests/conftest.py).
pytestmark = pytest.mark.usefixtures("validate_json_reports")

INPUT = "tests/reporters/ci"
GOLDEN = ROOT / "tests" / "reporters" / "ci-golden"
SARIF_SCHEMA = ROOT / "tests" / "data" / "sarif" / "sarif-schema-2.1.0.json"
GOLDEN_FILES = {
    "text": "report.txt",
    "json": "report.json",
    "sarif": "report.sarif",
    "junit": "report.junit.xml",
    "github": "report.github.txt",
    "gitlab": "report.gitlab.json",
    "markdown": "report.md",
}
SUMMARY = "2 errors, 1 warning, 1 info in 3 files (8 objects, 2 policies); 1 suppressed, 0 baselined\n"


@pytest.fixture(autouse=True)
def _in_the_repository(monkeypatch: pytest.MonkeyPatch) -> None:
    # Relative paths in, repository-relative paths out: no machine path in a golden file.
    monkeypatch.chdir(ROOT)


def run(*args: str, env: dict[str, str] | None = None) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, ["check", "--no-cache", *args], env=env)
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result.exit_code, result.stdout, result.stderr


def rendered(fmt: str) -> str:
    code, out, err = run("--format", fmt, "--color", "never", INPUT)
    assert (code, err) == (1, SUMMARY)
    return out


def test_every_format_has_a_golden_file() -> None:
    assert set(GOLDEN_FILES) == set(FORMATS)


@pytest.mark.parametrize("fmt", sorted(GOLDEN_FILES))
def test_golden(fmt: str, update_golden: bool) -> None:
    out = rendered(fmt)
    path = GOLDEN / GOLDEN_FILES[fmt]
    if update_golden:
        path.parent.mkdir(exist_ok=True)
        path.write_text(out, encoding="utf-8")
    assert out == path.read_text(encoding="utf-8"), f"{path.name} is stale: run pytest {__file__} --update-golden and review"


# -- SARIF 2.1.0 and GitHub code scanning ------------------------------------------------------------


def sarif_of(text: str) -> dict[str, Any]:
    document = json.loads(text)
    schema = json.loads(SARIF_SCHEMA.read_text(encoding="utf-8"))
    jsonschema.Draft4Validator(schema).validate(document)
    return document


@pytest.fixture(scope="module")
def sarif() -> dict[str, Any]:
    return sarif_of((GOLDEN / GOLDEN_FILES["sarif"]).read_text(encoding="utf-8"))


def test_sarif_golden_is_valid_and_has_one_run(sarif: dict[str, Any]) -> None:
    assert sarif["version"] == "2.1.0"
    assert len(sarif["runs"]) == 1
    run_ = sarif["runs"][0]
    assert run_["columnKind"] == "unicodeCodePoints"  # policylint counts code points, not UTF-16 units
    assert run_["invocations"] == [{"executionSuccessful": True}]


def test_sarif_driver_describes_every_rule_reported(sarif: dict[str, Any]) -> None:
    # GitHub Docs, "SARIF support for code scanning": name, semanticVersion, rules with
    # shortDescription, fullDescription, help (markdown shown), helpUri, defaultConfiguration, tags.
    driver = sarif["runs"][0]["tool"]["driver"]
    assert (driver["name"], driver["semanticVersion"], driver["informationUri"]) == ("policylint", __version__, HOMEPAGE)
    results = sarif["runs"][0]["results"]
    assert [r["id"] for r in driver["rules"]] == sorted({r["ruleId"] for r in results}) == ["PL110", "PL301", "PL410", "PL412"]
    by_id = {r.id: r for r in REGISTRY}
    for entry in driver["rules"]:
        rule = by_id[entry["id"]]
        assert entry["name"] == rule.name
        assert entry["shortDescription"]["text"] == rule.summary()
        assert entry["fullDescription"]["text"] and "`" not in entry["fullDescription"]["text"]
        assert entry["help"]["markdown"].startswith(f"# {rule.id} {rule.name}\n")
        assert "## Why it matters" in entry["help"]["markdown"]
        assert entry["help"]["text"] and "```" not in entry["help"]["text"]
        assert entry["helpUri"] == f"{HOMEPAGE}/blob/v{__version__}/rules/{rule.id}-{rule.name}.md"
        assert (
            entry["defaultConfiguration"]["level"]
            == {"error": "error", "warning": "warning", "info": "note"}[rule.severity.label]
        )
        assert entry["properties"]["tags"][:2] == ["policylint", "gateway-api"]
    for result in results:
        assert driver["rules"][result["ruleIndex"]]["id"] == result["ruleId"]


def _result(sarif: dict[str, Any], rule: str, suppressed: bool = False) -> dict[str, Any]:
    found = [r for r in sarif["runs"][0]["results"] if r["ruleId"] == rule and ("suppressions" in r) == suppressed]
    assert len(found) == 1
    return found[0]


def test_sarif_result_locations_are_repository_relative_regions(sarif: dict[str, Any]) -> None:
    result = _result(sarif, "PL301")
    assert result["level"] == "error"
    (location,) = result["locations"]
    physical = location["physicalLocation"]
    assert physical["artifactLocation"] == {"uri": "tests/reporters/ci/policies.yaml", "uriBaseId": "%SRCROOT%"}
    # `    sectionName: chekout` on line 11: the key and its value, end column exclusive.
    assert physical["region"] == {"startLine": 11, "startColumn": 5, "endLine": 11, "endColumn": 25}
    line = (ROOT / INPUT / "policies.yaml").read_text(encoding="utf-8").splitlines()[10]
    assert line[4:24] == "sectionName: chekout"
    assert location["logicalLocations"] == [
        {"name": "checkout-retries", "fullyQualifiedName": "BackendTrafficPolicy app/checkout-retries", "kind": "object"}
    ]


def test_sarif_fingerprints_and_related_locations(sarif: dict[str, Any]) -> None:
    json_report = json.loads((GOLDEN / GOLDEN_FILES["json"]).read_text(encoding="utf-8"))
    fingerprints = {f["rule"]: f["fingerprint"] for f in json_report["findings"]}
    result = _result(sarif, "PL301")
    assert result["partialFingerprints"] == {"policylintFingerprint/v1": fingerprints["PL301"]}
    (related,) = result["relatedLocations"]
    assert related["id"] == 1
    assert related["physicalLocation"]["artifactLocation"]["uri"] == "tests/reporters/ci/routes.yaml"
    assert related["physicalLocation"]["region"]["startLine"] == 11
    # The message links to it (SARIF 2.1.0 §3.11.6 "Messages with embedded links").
    assert f"[{related['message']['text']}](1)" in result["message"]["text"]
    assert "Hint" not in result["message"]["text"]  # PL301 has none; PL412 has one
    pl412 = _result(sarif, "PL412")
    hint = next(f["hint"] for f in json_report["findings"] if f["rule"] == "PL412")
    assert pl412["message"]["text"] == (
        "backendRef port 8081 is not a port of Service app/shop (have: 8080): the HTTPRoute cannot reach this backend on"
        " that port (Gateway API BackendObjectReference) (see [Service app/shop defines its ports here](1))"
        f"\nHint: {hint}"
    )
    assert pl412["properties"] == {"fieldPath": "spec.rules[0].backendRefs[0].port", "hint": hint}
    assert "codeFlows" not in pl412  # a route, not a policy


def test_sarif_code_flow_walks_the_attachment_chain_across_files(sarif: dict[str, Any]) -> None:
    (flow,) = _result(sarif, "PL301")["codeFlows"]
    (thread,) = flow["threadFlows"]
    steps = [
        (
            s["location"]["physicalLocation"]["artifactLocation"]["uri"].rsplit("/", 1)[-1],
            s["location"]["physicalLocation"]["region"]["startLine"],
            s["location"]["message"]["text"],
        )
        for s in thread["locations"]
    ]
    assert steps == [
        ("policies.yaml", 4, "policy BackendTrafficPolicy app/checkout-retries"),
        (
            "policies.yaml",
            8,
            "targets HTTPRoute shop#chekout: TargetNotFound (rule chekout not found on HTTPRoute shop; have: checkout)",
        ),
        ("routes.yaml", 4, "target HTTPRoute app/shop"),
    ]
    assert [s["executionOrder"] for s in thread["locations"]] == [1, 2, 3]


def test_sarif_suppressed_findings_close_their_alerts(sarif: dict[str, Any]) -> None:
    result = _result(sarif, "PL410", suppressed=True)
    assert result["suppressions"] == [{"kind": "inSource", "status": "accepted", "justification": "attached in the next release"}]
    assert result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "tests/reporters/ci/routes.yaml"


def test_sarif_of_a_clean_run_has_empty_results(tmp_path: Path) -> None:
    (tmp_path / "ok.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ok\n  namespace: a\n")
    code, out, _ = run("--format", "sarif", str(tmp_path))
    assert code == 0
    document = sarif_of(out)
    assert document["runs"][0]["results"] == []
    assert document["runs"][0]["tool"]["driver"]["rules"] == []


def test_sarif_baselined_findings_are_external_suppressions(tmp_path: Path) -> None:
    baseline = tmp_path / "baseline.json"
    code, _, _ = run("--format", "text", "--baseline", str(baseline), "--write-baseline", INPUT)
    assert code == 0  # everything recorded is hidden
    code, out, _ = run("--format", "sarif", "--baseline", str(baseline), INPUT)
    assert code == 0
    results = sarif_of(out)["runs"][0]["results"]
    kinds = sorted(r["suppressions"][0]["kind"] for r in results)
    assert kinds == ["external", "external", "external", "external", "inSource"]


def test_sarif_uris_of_odd_file_names_are_percent_encoded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / "a b#c%.yaml").write_text("kind: [\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    code, out, _ = run("--format", "sarif", ".")
    assert code == 1
    (result,) = sarif_of(out)["runs"][0]["results"]
    assert result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "a%20b%23c%25.yaml"


# -- JUnit XML -------------------------------------------------------------------------------------


def test_junit_has_a_suite_per_file_and_a_case_per_object_and_rule() -> None:
    root = ElementTree.fromstring((GOLDEN / GOLDEN_FILES["junit"]).read_text(encoding="utf-8").encode("utf-8"))
    suites = root.findall("testsuite")
    assert [s.get("file") for s in suites] == [f"{INPUT}/{name}" for name in ("gateway.yaml", "policies.yaml", "routes.yaml")]
    cases = [c for s in suites for c in s.findall("testcase")]
    assert int(root.get("tests", "0")) == len(cases)
    # Passes are listed: every object has a case for each rule that can report on it.
    route_cases = {c.get("name") for c in cases if c.get("classname") == "HTTPRoute app/shop"}
    assert {"PL406 parent-ref-not-found", "PL410 route-without-parent-refs", "PL411 backend-not-found"} <= route_cases
    failures = [(c.get("classname"), c.get("name"), f.get("type")) for c in cases for f in c.findall("failure")]
    # --fail-on error (the default): the two errors fail, as they fail the run (exit code 1).
    assert failures == [
        ("BackendTrafficPolicy app/checkout-retries", "PL301 section-not-found", "error"),
        ("HTTPRoute app/shop", "PL412 backend-port-invalid", "error"),
    ]
    assert root.get("failures") == "2"
    # The info and the warning pass, their findings in the test's system-out.
    below = {(c.get("classname"), c.get("name")): c.findtext("system-out") for c in cases if c.find("system-out") is not None}
    assert sorted(below) == [
        ("ClientTrafficPolicy infra/edge-timeouts", "PL110 status-in-manifest"),
        ("HTTPRoute app/admin", "PL410 route-without-parent-refs"),
    ]
    assert below[("HTTPRoute app/admin", "PL410 route-without-parent-refs")].splitlines()[0] == (
        f"{INPUT}/policies.yaml:36:1: warning PL410 HTTPRoute app/admin has no parentRefs, so it attaches to no Gateway"
        " and serves no traffic (Gateway API: a route without parentRefs attaches nowhere): add a parentRef naming the"
        " Gateway or ListenerSet (or, for a mesh route, the Service) it belongs to"
    )
    body = next(f.text for c in cases for f in c.findall("failure") if "PL412" in (c.get("name") or ""))
    assert body is not None
    assert body.splitlines() == [
        f"{INPUT}/routes.yaml:15:7: error PL412 backendRef port 8081 is not a port of Service app/shop (have: 8080): the"
        " HTTPRoute cannot reach this backend on that port (Gateway API BackendObjectReference)",
        f"note: {INPUT}/routes.yaml:23:3: Service app/shop defines its ports here",
        "hint: Use one of the Service's `port` values (not a `targetPort`).",
        f"docs: {HOMEPAGE}/blob/v{__version__}/rules/PL412-backend-port-invalid.md",
    ]
    skipped = [(c.get("classname"), s.get("message")) for c in cases for s in c.findall("skipped")]
    assert skipped == [("HTTPRoute app/shop-v2", "suppressed (comment): attached in the next release")]


# -- GitLab Code Quality ---------------------------------------------------------------------------


def test_gitlab_code_quality_fields() -> None:
    # GitLab Docs, "Code Quality": description, check_name, fingerprint, severity
    # (info|minor|major|critical|blocker), location.path, location.lines.begin.
    issues = json.loads((GOLDEN / GOLDEN_FILES["gitlab"]).read_text(encoding="utf-8"))
    report = json.loads((GOLDEN / GOLDEN_FILES["json"]).read_text(encoding="utf-8"))
    assert len(issues) == len(report["findings"]) == 4  # the suppressed one is left out
    for issue, finding in zip(issues, report["findings"]):
        assert issue["check_name"] == f"{finding['rule']} {finding['name']}"
        assert issue["description"].startswith(f"{finding['rule']} {finding['message']}")
        assert issue["fingerprint"] == finding["fingerprint"]
        assert issue["severity"] == {"error": "major", "warning": "minor", "info": "info"}[finding["severity"]]
        assert issue["location"]["path"] == finding["file"]
        assert issue["location"]["lines"]["begin"] == finding["line"]
    assert len({i["fingerprint"] for i in issues}) == len(issues)


# -- GitHub workflow commands ----------------------------------------------------------------------


def test_github_annotations_of_the_golden() -> None:
    lines = (GOLDEN / GOLDEN_FILES["github"]).read_text(encoding="utf-8").splitlines()
    assert lines[0] == (
        "::error file=tests/reporters/ci/policies.yaml,line=11,col=5,endLine=11,endColumn=24,"
        "title=PL301 section-not-found::rule chekout not found on HTTPRoute shop; have: checkout; did you mean checkout?"
        " [BackendTrafficPolicy app/checkout-retries]%0Anote: tests/reporters/ci/routes.yaml:11:3:"
        " HTTPRoute shop defines its rules here"
    )
    # `      port: 8081` on line 15: columns 7 to 16 inclusive, as GitHub counts them.
    assert lines[3].startswith("::error file=tests/reporters/ci/routes.yaml,line=15,col=7,endLine=15,endColumn=16,title=PL412")
    assert lines[3].endswith("%0Ahint: Use one of the Service's `port` values (not a `targetPort`).")
    # Report order (file, line), all under GitHub's caps; then the totals.
    assert [line.split(" ", 1)[0] for line in lines] == ["::error", "::notice", "::warning", "::error", "::notice"]
    assert lines[-1] == "::notice title=policylint::2 errors, 1 warning, 1 info in 3 files, 1 suppressed."


@given(st.text())
def test_workflow_command_data_round_trips(text: str) -> None:
    # actions/toolkit packages/core/src/command.ts: escapeData and escapeProperty.
    data = github_reporter.escape_data(text)
    assert "\n" not in data and "\r" not in data
    assert github_reporter.unescape_data(data) == text
    prop = github_reporter.escape_property(text)
    assert not {":", ",", "\n", "\r"} & set(prop)
    assert github_reporter.unescape_data(prop) == text


def _finding(i: int, severity: Severity) -> Finding:
    return Finding(
        f"f{i}.yaml", i + 1, 1, "PL410", "route-without-parent-refs", severity, f"message {i}", fingerprint=f"{i:032x}"
    )


class _Result:
    """The fields of a `Reported` the GitHub and Markdown reporters read."""

    def __init__(self, findings: Iterable[Finding], files: int = 1) -> None:
        self.findings = list(findings)
        self.suppressed: list[Finding] = []
        self.files = [f"f{i}.yaml" for i in range(files)]
        self.policy_reports: list[dict[str, Any]] = []
        self.gate = None

    def object_count(self) -> int:
        return 0

    def introduced_by_change(self, finding: Finding) -> bool | None:
        return None  # no change measured

    def change_counts(self) -> tuple[int, int] | None:
        return None


def test_github_annotates_ten_per_severity_and_lists_the_rest() -> None:
    findings = [_finding(i, Severity.ERROR) for i in range(12)] + [_finding(100 + i, Severity.INFO) for i in range(12)]
    options = RenderOptions(outputs=(("sarif", "out/policylint.sarif"), ("junit", "out/junit.xml")))
    text = github_reporter.render(_Result(findings, files=24), options)  # type: ignore[arg-type]
    lines = text.splitlines()
    assert sum(line.startswith("::error ") for line in lines) == 10
    # Nine info notices: the closing totals notice is the step's tenth.
    assert sum(line.startswith("::notice file=") for line in lines) == 9
    group = lines.index("::group::policylint: 5 more findings (GitHub annotates 10 per severity)")
    assert lines[group + 1 : group + 6] == [
        "f10.yaml:11:1: error PL410 message 10",
        "f11.yaml:12:1: error PL410 message 11",
        "f109.yaml:110:1: info PL410 message 109",
        "f110.yaml:111:1: info PL410 message 110",
        "f111.yaml:112:1: info PL410 message 111",
    ]
    assert lines[group + 6] == "::endgroup::"
    assert lines[-1] == (
        "::notice title=policylint::12 errors, 0 warnings, 12 info in 24 files; 19 annotated, the others are listed"
        " in the log; full report: out/policylint.sarif (sarif), out/junit.xml (junit)."
    )


def test_github_escapes_what_the_input_controls() -> None:
    f = Finding("a,b:c%.yaml", 1, 1, "PL001", "yaml-syntax-error", Severity.ERROR, "bad\n::error::forged 100%")
    line = github_reporter.annotation(f, RenderOptions(cwd="/r", root="/r"))
    assert line.count("\n") == 0
    props, data = line[len("::error ") :].split("::", 1)
    assert props.split(",")[0] == "file=a%2Cb%3Ac%25.yaml"
    # textsafe first (the newline becomes a visible `\n`), then the runner's escaping of `%`.
    assert unescape(github_reporter.unescape_data(data)) == "bad\n::error::forged 100%"


# -- Markdown --------------------------------------------------------------------------------------


def test_markdown_golden_sections() -> None:
    text = (GOLDEN / GOLDEN_FILES["markdown"]).read_text(encoding="utf-8")
    assert text.startswith("## policylint\n\n:x: 2 errors, :warning: 1 warning, :information_source: 1 info in 3 files")
    assert "| :x: | [11](tests/reporters/ci/policies.yaml#L11) | [PL301](" in text
    assert "| BackendTrafficPolicy app/checkout-retries | HTTPRoute shop#chekout | TargetNotFound (SectionNotFound) |" in text
    assert "```mermaid\nflowchart LR\n" in text
    assert "<details><summary>Graph of what the findings touch</summary>" in text


def test_markdown_links_point_at_the_commit_in_a_workflow() -> None:
    env = {"GITHUB_SERVER_URL": "https://github.com", "GITHUB_REPOSITORY": "o/r", "GITHUB_SHA": "0" * 40}
    code, out, _ = run("--format", "markdown", INPUT, env=env)
    assert code == 1
    assert f"[11](https://github.com/o/r/blob/{'0' * 40}/tests/reporters/ci/policies.yaml#L11)" in out


def test_markdown_escapes_input_text() -> None:
    assert markdown_reporter.md("a|b *c* [x](y) <img> `z`") == "a\\|b \\*c\\* \\[x\\](y) &lt;img&gt; \\`z\\`"


def test_markdown_stays_under_its_cap_with_thousands_of_findings() -> None:
    findings = [_finding(i, Severity.WARNING) for i in range(20_000)]
    text = markdown_reporter.render(_Result(findings, files=20_000))  # type: ignore[arg-type]
    size = len(text.encode("utf-8"))
    assert markdown_reporter.MAX_BYTES - 20_000 < size <= markdown_reporter.MAX_BYTES
    shown = text.count("| :warning: |")
    assert 1_000 < shown < 20_000
    assert f"\n… {20_000 - shown} more findings (see the full report)\n" in text
    assert text.endswith(f"<sub>[policylint]({HOMEPAGE}) {__version__}</sub>\n")


# -- outputs, auto, exit codes ---------------------------------------------------------------------


def test_outputs_write_each_format_to_its_file(tmp_path: Path) -> None:
    outputs = [f"{fmt}={tmp_path / 'reports' / GOLDEN_FILES[fmt]}" for fmt in FORMATS]
    code, out, err = run("--format", "text", "--color", "never", *(a for o in outputs for a in ("--output", o)), INPUT)
    assert (code, err) == (1, SUMMARY)
    assert out == (GOLDEN / GOLDEN_FILES["text"]).read_text(encoding="utf-8")
    for fmt in FORMATS:
        written = (tmp_path / "reports" / GOLDEN_FILES[fmt]).read_text(encoding="utf-8")
        expected = (GOLDEN / GOLDEN_FILES[fmt]).read_text(encoding="utf-8")
        if fmt == "github":  # the notice says where the full report is
            expected = expected.rsplit("\n", 2)[0] + "\n"
            assert written.startswith(expected)
            assert f"full report: {tmp_path / 'reports' / 'report.txt'} (text)" in written
        else:
            assert written == expected, fmt
    assert sorted(p.name for p in (tmp_path / "reports").iterdir()) == sorted(GOLDEN_FILES.values())  # no temporary file left


def test_an_output_that_cannot_be_written_is_exit_2(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("")
    code, _, err = run("--format", "text", "--output", f"sarif={tmp_path / 'file' / 'x.sarif'}", INPUT)
    assert code == 2
    assert "policylint: error: cannot write the sarif report to" in err


@pytest.mark.parametrize("value", ["sarif", "sarif=", "=x.sarif", "auto=x", "xml=x.xml"])
def test_a_malformed_output_is_a_usage_error(value: str) -> None:
    code, out, err = run("--output", value, INPUT)
    assert (code, out) == (2, "")
    assert "expected FORMAT=PATH" in err


def test_an_output_to_standard_output_is_a_usage_error_and_writes_no_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    source = str(Path(INPUT).resolve())
    monkeypatch.chdir(tmp_path)
    code, out, err = run("--format", "text", "--output", "sarif=-", source)
    assert (code, out) == (2, "")
    assert "standard output holds the --format report" in err
    assert list(tmp_path.iterdir()) == []
    code, _, _ = run("--format", "text", "--output", "sarif=./-", source)
    assert code in (0, 1) and (tmp_path / "-").is_file()


def test_outputs_from_the_configuration_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    project = tmp_path / "repo"
    (project / ".git").mkdir(parents=True)
    (project / "m.yaml").write_text("kind: [\n")
    (project / ".policylint.yaml").write_text("paths: [m.yaml]\noutput: [sarif=out/policylint.sarif]\nformat: text\n")
    monkeypatch.chdir(project)
    code, out, _ = run()
    assert code == 1 and out.startswith("m.yaml:1:")
    results = sarif_of((project / "out" / "policylint.sarif").read_text())["runs"][0]["results"]
    assert [r["ruleId"] for r in results] == ["PL001"]


def test_format_auto(monkeypatch: pytest.MonkeyPatch) -> None:
    code, out, _ = run(INPUT)
    assert code == 1 and out == (GOLDEN / GOLDEN_FILES["text"]).read_text(encoding="utf-8")
    code, out, _ = run(INPUT, env={"GITHUB_ACTIONS": "true"})
    assert code == 1 and out.startswith("::error file=tests/reporters/ci/policies.yaml,line=11,")
    code, out, _ = run(INPUT, env={"FORCE_COLOR": "1"})
    assert "\033[1;31merror\033[0m" in out
    code, out, _ = run(INPUT, env={"FORCE_COLOR": "1", "NO_COLOR": "1"})
    assert "\033[" not in out


def _scenario(tmp_path: Path, name: str) -> Path:
    directory = tmp_path / name
    directory.mkdir()
    service = "apiVersion: v1\nkind: Service\nmetadata:\n  name: s\n  namespace: a\nspec:\n  ports:\n  - port: 80\n"
    route = "apiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\nmetadata:\n  name: r\n  namespace: a\nspec: {}\n"
    text = {"clean": service, "warning": route, "error": "kind: [\n", "internal": route}[name]
    (directory / "m.yaml").write_text(text)
    return directory


@pytest.mark.parametrize(("scenario", "expected"), [("clean", 0), ("warning", 0), ("error", 1), ("internal", 2)])
def test_the_exit_code_is_the_same_in_every_format_and_with_any_outputs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, scenario: str, expected: int
) -> None:
    if scenario == "internal":
        rule = next(r for r in REGISTRY if r.id == "PL410")

        def explode(self: object, project: object) -> Any:
            raise RuntimeError("a bug")

        monkeypatch.setattr(rule, "check", explode)
    directory = _scenario(tmp_path, scenario)
    outputs = [a for fmt in FORMATS for a in ("--output", f"{fmt}={tmp_path / 'out' / fmt}")]
    codes = set()
    for fmt in [*FORMATS, "auto"]:
        for extra in ([], outputs):
            code, _, _ = run("--format", fmt, *extra, str(directory))
            codes.add(code)
        code, _, _ = run("--format", fmt, "--fail-on", "warning", str(directory))
        assert code == {"clean": 0, "warning": 1, "error": 1, "internal": 2}[scenario]
    assert codes == {expected}


def test_every_reporter_module_is_listed() -> None:
    modules = {p.stem for p in (ROOT / "policylint" / "reporters").glob("*.py")} - {"__init__"}
    assert modules == {r.module.rsplit(".", 1)[-1] for r in REPORTERS.values()}


# -- rules --format json ---------------------------------------------------------------------------


def test_rules_json_describes_every_rule() -> None:
    result = CliRunner().invoke(cli, ["rules", "--format", "json"])
    assert result.exit_code == 0
    document = json.loads(result.stdout)
    assert document["tool"] == {"name": "policylint", "version": __version__}
    assert [r["id"] for r in document["rules"]] == [r.id for r in REGISTRY]
    pl608 = next(r for r in document["rules"] if r["id"] == "PL608")
    assert pl608["severity"] == "warning" and pl608["family"] == "effective-policy"
    assert pl608["options"] == [
        {
            "name": "max-affected",
            "type": "int",
            "default": pl608["options"][0]["default"],
            "help": pl608["options"][0]["help"],
            "minimum": 0,
        }
    ]
    assert pl608["reads"] == ["simulation"]
    assert all(r["family"] != "other" for r in document["rules"])
    assert all(r["markdown"].startswith(f"# {r['id']} {r['name']}") for r in document["rules"])


def test_no_machine_path_in_a_golden_file() -> None:
    for name in GOLDEN_FILES.values():
        text = (GOLDEN / name).read_text(encoding="utf-8")
        assert str(ROOT) not in text and os.path.expanduser("~") not in text


# -- attachment chains -----------------------------------------------------------------------------


def test_a_cross_namespace_chain_ends_at_the_grant_that_permits_it() -> None:
    # The PL401 fixture's good case: ColorPolicy shop/edge-color targets Gateway infra/edge,
    # permitted by ReferenceGrant infra/colors (GEP-713 with GEP-709's handshake).
    fixture = "tests/rules/PL401-cross-namespace-target-not-permitted/good.yaml"
    result = lint_paths([fixture])
    policy = next(p for p in result.project.resolution.policies() if p.obj.name == "edge-color")
    resolver = PositionResolver(lambda file: Path(file).read_text(encoding="utf-8"))
    finding = Finding(fixture, 1, 1, "PL603", "x", Severity.INFO, "m", object=policy.obj.key, fingerprint="f" * 32)
    (chain,) = attachment_chain.compute(result.project, [finding], resolver)["f" * 32]
    lines = (ROOT / fixture).read_text(encoding="utf-8").splitlines()
    assert [(step.message, lines[step.line - 1].strip()) for step in chain] == [
        ("policy ColorPolicy shop/edge-color", "name: edge-color"),
        ("targets Gateway infra/edge: Accepted", "- group: gateway.networking.k8s.io"),
        ("target Gateway infra/edge", "name: edge"),
        ("permitted by ReferenceGrant infra/colors", "- group: example.com"),
    ]


def test_a_selector_policy_gets_a_chain_per_object_it_matches() -> None:
    fixture = "tests/rules/PL401-cross-namespace-target-not-permitted/good.yaml"
    result = lint_paths([fixture])
    policy = next(p for p in result.project.resolution.policies() if p.obj.name == "shop-retries")
    resolver = PositionResolver(lambda file: Path(file).read_text(encoding="utf-8"))
    on_policy = Finding(fixture, 1, 1, "PL603", "x", Severity.INFO, "m", object=policy.obj.key, fingerprint="a" * 32)
    chains = attachment_chain.compute(result.project, [on_policy], resolver)["a" * 32]
    # A selector policy: one chain per matched route (both `team: shop` routes, across namespaces).
    assert sorted(chain[2].message for chain in chains) == ["target HTTPRoute infra/status", "target HTTPRoute shop/store"]


def junit_of(*args: str) -> tuple[int, ElementTree.Element]:
    code, out, _ = run("--format", "junit", *args)
    return code, ElementTree.fromstring(out.encode("utf-8"))


def _failures(root: ElementTree.Element) -> list[tuple[str | None, str | None]]:
    return [(c.get("name"), f.get("type")) for c in root.iter("testcase") for f in c.findall("failure")]


@pytest.mark.parametrize(
    ("fail_on", "code", "failing"),
    [
        ("error", 1, ["PL301 error", "PL412 error"]),
        ("warning", 1, ["PL301 error", "PL410 warning", "PL412 error"]),
        ("info", 1, ["PL301 error", "PL110 info", "PL410 warning", "PL412 error"]),
    ],
)
def test_junit_fails_what_fails_the_gate(fail_on: str, code: int, failing: list[str]) -> None:
    got_code, root = junit_of("--fail-on", fail_on, INPUT)
    assert got_code == code
    assert [f"{name.split()[0]} {kind}" for name, kind in _failures(root) if name and kind] == failing
    assert int(root.get("failures", "0")) == len(failing)
    # Whatever does not fail is still there, in the passing test's system-out.
    assert len([c for c in root.iter("testcase") if c.find("system-out") is not None]) == 4 - len(failing)


def test_junit_with_exit_zero_still_fails_at_fail_on() -> None:
    # --exit-zero keeps the job green; the report still says what the gate would fail.
    code, root = junit_of("--exit-zero", INPUT)
    assert code == 0
    assert int(root.get("failures", "0")) == 2


SCOPED_JUNIT = [
    # A changed policies file: its own objects' cases; below --fail-on in system-out.
    ("report.scoped-policies.junit.xml", ("tests/reporters/ci/policies.yaml", "--context", INPUT)),
    # A changed routes file: PL301 in a context file is reported (its note is in routes.yaml), as its
    # one test case; no case for the context files' passes.
    ("report.scoped-routes.junit.xml", ("tests/reporters/ci/routes.yaml", "--context", INPUT)),
]


@pytest.mark.parametrize(("name", "args"), SCOPED_JUNIT, ids=[n for n, _ in SCOPED_JUNIT])
def test_junit_golden_in_a_scoped_run(name: str, args: tuple[str, ...], update_golden: bool) -> None:
    code, out, _ = run("--format", "junit", *args)
    assert code == 1
    path = GOLDEN / name
    if update_golden:
        path.write_text(out, encoding="utf-8")
    assert out == path.read_text(encoding="utf-8"), f"{path.name} is stale: run pytest {__file__} --update-golden and review"


def test_junit_in_a_scoped_run_has_cases_for_reported_files_only() -> None:
    _, whole = junit_of(INPUT)
    _, scoped = junit_of("tests/reporters/ci/routes.yaml", "--context", INPUT)
    suites = {s.get("file"): s for s in scoped.findall("testsuite")}
    assert sorted(suites) == [f"{INPUT}/policies.yaml", f"{INPUT}/routes.yaml"]
    # The context file's suite holds only the reported finding's case.
    assert [(c.get("classname"), c.get("name")) for c in suites[f"{INPUT}/policies.yaml"]] == [
        ("BackendTrafficPolicy app/checkout-retries", "PL301 section-not-found")
    ]
    # The reported file's suite is the one a whole run writes for it.
    whole_routes = next(s for s in whole.findall("testsuite") if s.get("file") == f"{INPUT}/routes.yaml")
    assert ElementTree.tostring(suites[f"{INPUT}/routes.yaml"]) == ElementTree.tostring(whole_routes)
    assert int(scoped.get("tests", "0")) == 1 + int(whole_routes.get("tests", "0"))
    assert _failures(scoped) == [("PL301 section-not-found", "error"), ("PL412 backend-port-invalid", "error")]


def test_junit_text_never_holds_a_character_xml_forbids() -> None:
    assert junit_reporter._xml_text("a\uffffb\ufffe\x00") == "a\\uffffb\\ufffe\\x00"


def test_a_large_junit_report_is_what_elementtree_writes_for_its_tree(tmp_path: Path) -> None:
    # Passing test cases are written directly (junit.py `_document`), the rest by junit-xml and
    # ElementTree: together they must be the bytes ElementTree writes for the whole tree.
    write_corpus(300, tmp_path / "corpus", per_file=50, error_rate=0.5)
    code, out, _ = run("--format", "junit", str(tmp_path / "corpus"))
    assert code == 1
    declaration, _, body = out.partition("\n")
    assert declaration == '<?xml version="1.0" encoding="utf-8"?>'
    root = ElementTree.fromstring(out.encode("utf-8"))
    ElementTree.indent(root, space="\t")
    assert ElementTree.tostring(root, encoding="unicode") + "\n" == body
    cases = root.findall("testsuite/testcase")
    assert len(cases) > 5_000 and any(c.find("failure") is not None for c in cases)
    assert int(root.get("tests", "0")) == len(cases)
    assert int(root.get("failures", "0")) == sum(1 for c in cases if c.find("failure") is not None)


def test_gitlab_body_gives_the_hint_the_rule_summary_and_its_doc() -> None:
    from policylint.reporters import gitlab

    with_hint = Finding("a.yaml", 3, 5, "PL201", "targetref-not-found", Severity.ERROR, "HTTPRoute 'x' not found", hint="Fix it.")
    assert gitlab._body(with_hint) == (
        "Fix it.\n\nA policy targetRef names an object that is not in the input.\n\n"
        f"[PL201 targetref-not-found](https://github.com/policylint/policylint/blob/v{__version__}/rules/PL201-targetref-not-found.md)"
    )
    # PL000 is no rule of the catalogue: its body says what it is rather than being empty.
    crash = Finding("a.yaml", 1, 1, "PL000", "internal-error", Severity.ERROR, "rule PL201 failed")
    assert gitlab._body(crash).startswith("policylint failed on part of the input")
