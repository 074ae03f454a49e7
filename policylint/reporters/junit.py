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
    from junit_xml import TestCase

    from policylint.k8s.objects import ObjectKey
    from policylint.pipeline import LintResult
    from policylint.reporters import RenderOptions
    from policylint.rules.base import Rule

# Above this many test cases the document is written without indentation: pretty-printing goes
# through xml.dom.minidom, many times slower than the report itself on a large repository.
PRETTY_MAX_CASES = 5_000

_Case = tuple[str, str]  # (classname, rule id)


def _body(f: Finding, options: RenderOptions) -> str:
    from policylint.reporters.json import help_uri

    lines = [f"{escape(options.repo_path(f.file))}:{f.line}:{f.column}: {f.severity.label} {f.rule} {escape(f.message)}"]
    lines += [f"note: {escape(options.repo_path(r.file))}:{r.line}:{r.column}: {escape(r.message)}" for r in f.related]
    if f.hint:
        lines.append(f"hint: {escape(f.hint)}")
    if f.rule != "PL000":
        lines.append(f"docs: {help_uri(f.rule, f.name)}")
    return "\n".join(lines)


def _classname(key: ObjectKey | None, path: str) -> str:
    return escape(str(key)) if key is not None else escape(path)


def render(result: LintResult, options: RenderOptions | None = None) -> str:
    from junit_xml import TestCase, TestSuite, to_xml_report_string

    from policylint.reporters import RenderOptions

    options = options or RenderOptions()
    policies = {p.obj.key for p in result.project.resolution.policies()}
    names: dict[str, str] = {r.id: r.name for r in result.rules}
    # file -> (classname, rule id) -> test case, in a stable order: objects by position, rules by id.
    suites: dict[str, dict[_Case, TestCase]] = defaultdict(dict)
    lines: dict[tuple[str, _Case], int] = {}

    def case(path: str, key: _Case, line: int, rule_name: str) -> TestCase:
        cases = suites[path]
        if key not in cases:
            cases[key] = TestCase(
                f"{key[1]} {rule_name}", classname=key[0], file=escape(path), line=line, allow_multiple_subelements=True
            )
            lines[(path, key)] = line
        return cases[key]

    rules: tuple[type[Rule], ...] = tuple(sorted(result.rules, key=lambda r: r.id))
    for file in result.files:
        path = options.repo_path(file)
        suites[path]  # every file is a suite, even with nothing in it
        for rule in rules:
            if rule.reports_on(None, policy=False):
                case(path, (_classname(None, path), rule.id), 1, rule.name)
    for obj in result.index.objects:
        path = options.repo_path(obj.doc.file)
        policy = obj.key in policies
        for rule in rules:
            if rule.reports_on(obj.kind, policy=policy):
                case(path, (_classname(obj.key, path), rule.id), obj.doc.line, rule.name)
    for f in result.findings:
        path = options.repo_path(f.file)
        tc = case(path, (_classname(f.object, path), f.rule), f.line, names.get(f.rule, f.name))
        tc.add_failure_info(
            message=f"{f.severity.label}: {escape(f.message)}", output=_body(f, options), failure_type=f.severity.label
        )
    for f in result.suppressed:
        path = options.repo_path(f.file)
        tc = case(path, (_classname(f.object, path), f.rule), f.line, names.get(f.rule, f.name))
        how = f.suppression.kind.value if f.suppression is not None else "suppressed"
        reason = f": {escape(f.suppression.reason)}" if f.suppression is not None and f.suppression.reason else ""
        tc.add_skipped_info(message=f"suppressed ({how}){reason}", output=_body(f, options))

    test_suites = []
    total = 0
    for path in sorted(suites):
        cases = suites[path]
        ordered = sorted(cases, key=lambda k: (lines[(path, k)], k))
        total += len(ordered)
        test_suites.append(TestSuite(f"policylint {escape(path)}", [cases[k] for k in ordered], file=escape(path)))
    return str(to_xml_report_string(test_suites, prettyprint=total <= PRETTY_MAX_CASES, encoding="utf-8"))
