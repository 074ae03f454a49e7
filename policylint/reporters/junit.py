"""JUnit XML, written with the junit-xml package: the report Jenkins, GitLab and Azure Pipelines
chart over time.

One `testsuite` per file; in it one `testcase` per object and rule that ran and can report on
that object (Rule.reports_on), passing or not, so that a dashboard shows what was fixed as well
as what is new; file-level rules (YAML syntax, unreadable files) have one test case per file.
A finding is a `failure` whose `type` is its severity, with the location, message, notes, hint
and the rule's documentation in its body; a suppressed or baselined finding is `skipped` with how
it was suppressed. Every field from the input is escaped (policylint.textsafe): the document is
read by people, and no file name can put a character XML forbids into it.
"""

from __future__ import annotations

from collections import defaultdict
from typing import TYPE_CHECKING

from policylint.findings import Finding
from policylint.textsafe import escape

if TYPE_CHECKING:
    from junit_xml import TestCase, TestSuite

    from policylint.pipeline import LintResult
    from policylint.reporters import RenderOptions
    from policylint.rules.base import Rule

# Above this many test cases the document is written without indentation: pretty-printing goes
# through xml.dom.minidom, many times slower than the report itself on a large repository.
PRETTY_MAX_CASES = 5_000

_Case = tuple[str, str]  # (classname, rule id)


def _body(f: Finding, options: RenderOptions) -> str:
    from policylint.reporters.json import help_uri

    lines = [f"{_xml_text(options.repo_path(f.file))}:{f.line}:{f.column}: {f.severity.label} {f.rule} {_xml_text(f.message)}"]
    lines += [f"note: {_xml_text(options.repo_path(r.file))}:{r.line}:{r.column}: {_xml_text(r.message)}" for r in f.related]
    if f.hint:
        lines.append(f"hint: {_xml_text(f.hint)}")
    if f.rule != "PL000":
        lines.append(f"docs: {help_uri(f.rule, f.name)}")
    return "\n".join(lines)


def render(result: LintResult, options: RenderOptions | None = None) -> str:
    from junit_xml import TestCase, TestSuite

    from policylint.reporters import RenderOptions

    options = options or RenderOptions()
    policies = {p.obj.key for p in result.project.resolution.policies()}
    names: dict[str, str] = {r.id: r.name for r in result.rules}
    # file -> (classname, rule id) -> test case, in a stable order: objects by position, rules by id.
    suites: dict[str, dict[_Case, TestCase]] = defaultdict(dict)
    lines: dict[tuple[str, _Case], int] = {}
    paths: dict[str, tuple[str, str]] = {}  # file -> (repository path, escaped)

    def where(file: str) -> tuple[str, str]:
        if file not in paths:
            path = options.repo_path(file)
            paths[file] = (path, _xml_text(path))
        return paths[file]

    def case(file: str, classname: str, rule_id: str, line: int, rule_name: str) -> TestCase:
        path, shown = where(file)
        cases = suites[path]
        key = (classname, rule_id)
        if key not in cases:
            cases[key] = TestCase(
                f"{rule_id} {rule_name}", classname=classname, file=shown, line=line, allow_multiple_subelements=True
            )
            lines[(path, key)] = line
        return cases[key]

    rules: tuple[type[Rule], ...] = tuple(sorted(result.rules, key=lambda r: r.id))
    file_rules = [r for r in rules if r.reports_on(None, policy=False)]
    for file in result.files:
        path, shown = where(file)
        suites[path]  # every file is a suite, even with nothing in it
        for rule in file_rules:
            case(file, shown, rule.id, 1, rule.name)
    for obj in result.index.objects:
        classname = _xml_text(str(obj.key))
        policy = obj.key in policies
        for rule in rules:
            if rule.reports_on(obj.kind, policy=policy):
                case(obj.doc.file, classname, rule.id, obj.doc.line, rule.name)
    for f in result.findings:
        classname = _xml_text(str(f.object)) if f.object is not None else where(f.file)[1]
        tc = case(f.file, classname, f.rule, f.line, names.get(f.rule, f.name))
        tc.add_failure_info(
            message=f"{f.severity.label}: {_xml_text(f.message)}", output=_body(f, options), failure_type=f.severity.label
        )
    for f in result.suppressed:
        classname = _xml_text(str(f.object)) if f.object is not None else where(f.file)[1]
        tc = case(f.file, classname, f.rule, f.line, names.get(f.rule, f.name))
        how = f.suppression.kind.value if f.suppression is not None else "suppressed"
        reason = f": {_xml_text(f.suppression.reason)}" if f.suppression is not None and f.suppression.reason else ""
        tc.add_skipped_info(message=f"suppressed ({how}){reason}", output=_body(f, options))

    shown_paths = dict(paths.values())
    test_suites = []
    for path in sorted(suites):
        cases = suites[path]
        ordered = sorted(cases, key=lambda k: (lines[(path, k)], k))
        shown = shown_paths[path]
        test_suites.append(TestSuite(f"policylint {shown}", [cases[k] for k in ordered], file=shown))
    return _document(test_suites)


def _xml_text(text: str) -> str:
    """Input text for the document: escaped (policylint.textsafe), and without the two
    characters XML 1.0 forbids that escaping keeps (U+FFFE, U+FFFF)."""
    escaped = escape(text)
    if "\ufffe" in escaped or "\uffff" in escaped:
        escaped = escaped.replace("\ufffe", "\\ufffe").replace("\uffff", "\\uffff")
    return escaped


def _document(test_suites: list[TestSuite]) -> str:
    """junit-xml's `to_xml_report_string`, less its final pass that deletes characters XML
    forbids from the whole document (every text here is `_xml_text` already, and that pass is
    a third of the time on a large repository), indented while the report is small."""
    from xml.etree import ElementTree

    root = ElementTree.Element("testsuites")
    totals = dict.fromkeys(("disabled", "errors", "failures", "tests"), 0)
    time = 0.0
    cases = 0
    for suite in test_suites:
        element = suite.build_xml_doc()
        for key in totals:
            totals[key] += int(element.get(key, 0))
        time += float(element.get("time", 0))
        cases += len(suite.test_cases)
        root.append(element)
    for key, value in totals.items():
        root.set(key, str(value))
    root.set("time", str(time))
    if cases <= PRETTY_MAX_CASES:
        # ElementTree, not minidom: minidom's escaping changed in Python 3.13 (`"` in text), and
        # the same report must be the same bytes on every supported Python.
        ElementTree.indent(root, space="\t")
    text = ElementTree.tostring(root, encoding="unicode")
    return f'<?xml version="1.0" encoding="utf-8"?>\n{text}\n'
