"""JUnit XML, written with the junit-xml package: the report Jenkins, GitLab and Azure Pipelines
chart over time.

One `testsuite` per reported file; in it one `testcase` per object and rule that ran and can
report on that object (Rule.reports_on), passing or not, so that a dashboard shows what was fixed
as well as what is new; file-level rules (YAML syntax, unreadable files) have one test case per
file. A run with a report scope (`--diff`, `--staged`, `--context`) reports on some of the files
it reads: only those get test cases, and a file read for context gets a suite only for a finding
reported in it (one about a reported file, policylint.report_scope).

A finding that fails the run (at or above `--fail-on`; in a run that measured a change, under the
introduced gate, only one the change introduces) is a `failure` whose `type` is its severity, with
the location, message, notes, hint and the rule's documentation in its body: the failures a CI
system counts are what fails the gate. Any other finding (below `--fail-on`, or pre-existing:
its body then ends `pre-existing: at HEAD too`) leaves its test case passing and is written, with
the same body, in the case's `system-out`, which Jenkins, GitLab and Azure Pipelines show with the
test. A suppressed or baselined finding is `skipped` with how it was suppressed. Every field
from the input is escaped (policylint.textsafe): the document is read by people, and no file
name can put a character XML forbids into it.
"""

from __future__ import annotations

import bisect
from collections import defaultdict
from typing import TYPE_CHECKING

from policylint.findings import Finding
from policylint.textsafe import escape

if TYPE_CHECKING:
    from junit_xml import TestCase, TestSuite

    from policylint.pipeline import LintResult
    from policylint.reporters import RenderOptions
    from policylint.rules.base import Rule

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
    from policylint.reporters import RenderOptions

    options = options or RenderOptions()
    policies = {o.key for o in result.project.resolution.policy_objects()}
    names: dict[str, str] = {r.id: r.name for r in result.rules}
    suites = _Suites(options)
    rules: tuple[type[Rule], ...] = tuple(sorted(result.rules, key=lambda r: r.id))
    file_rules = [r.id for r in rules if r.reports_on(None, policy=False)]
    reported = set(result.files)  # with a report scope, the files in it (policylint.report_scope)
    for file in result.files:
        path, shown = suites.where(file)
        suites.suites[path]  # every file is a suite, even with nothing in it
        suites.add_group(path, 1, shown, file_rules)
    by_kind: dict[tuple[str, bool], list[str]] = {}
    for obj in result.index.objects:
        if obj.doc.file not in reported:
            continue  # read for context only: its passes are not this run's to report
        policy = obj.key in policies
        applicable = by_kind.get((obj.kind, policy))
        if applicable is None:
            applicable = by_kind[(obj.kind, policy)] = [r.id for r in rules if r.reports_on(obj.kind, policy=policy)]
        suites.add_group(suites.where(obj.doc.file)[0], obj.doc.line, _xml_text(str(obj.key)), applicable)
    for f in result.findings:
        tc = suites.with_content(f, names.get(f.rule, f.name))
        body = _body(f, options)
        if result.introduced_by_change(f) is False:
            body += f"\npre-existing: at {_xml_text(result.base or 'the base')} too"
        if options.fails(result, f):
            tc.add_failure_info(message=f"{f.severity.label}: {_xml_text(f.message)}", output=body, failure_type=f.severity.label)
        else:
            # What does not fail the run (below `--fail-on`, or pre-existing under the introduced
            # gate) is shown with the test, which still passes, as the run does.
            tc.stdout = f"{tc.stdout}\n\n{body}" if tc.stdout else body
    for f in result.suppressed:
        tc = suites.with_content(f, names.get(f.rule, f.name))
        how = f.suppression.kind.value if f.suppression is not None else "suppressed"
        reason = f": {_xml_text(f.suppression.reason)}" if f.suppression is not None and f.suppression.reason else ""
        tc.add_skipped_info(message=f"suppressed ({how}){reason}", output=_body(f, options))

    shown_paths = dict(suites.paths.values())
    ordered = [(shown_paths[path], path, sorted(suites.suites[path].items())) for path in sorted(suites.suites)]
    return _document(ordered, suites.content, names)


class _Suites:
    """The test suites of a report, one per file, as they are built.

    `suites`: file -> (line, classname) -> the rule ids of its test cases: objects by position,
    rules by id. A group per object (and per file for the file-level rules), so that the hundreds
    of thousands of passing cases of a large repository cost a string each, nothing more.
    `first`: (file, classname) -> the group its object's cases are in; `placed`: (file,
    classname, rule id) -> the group of a case only a finding made; `content`: the test cases
    findings give content to."""

    def __init__(self, options: RenderOptions) -> None:
        self.options = options
        self.suites: dict[str, dict[tuple[int, str], list[str]]] = defaultdict(dict)
        self.first: dict[tuple[str, str], tuple[int, str]] = {}
        self.placed: dict[tuple[str, str, str], tuple[int, str]] = {}
        self.content: dict[tuple[str, str, str], TestCase] = {}
        self.paths: dict[str, tuple[str, str]] = {}  # file -> (repository path, escaped)

    def where(self, file: str) -> tuple[str, str]:
        if file not in self.paths:
            path = self.options.repo_path(file)
            self.paths[file] = (path, _xml_text(path))
        return self.paths[file]

    def _group_of(self, path: str, classname: str, rule_id: str) -> tuple[int, str] | None:
        group = self.first.get((path, classname))
        if group is not None and rule_id in self.suites[path][group]:
            return group
        return self.placed.get((path, classname, rule_id))

    def with_content(self, f: Finding, rule_name: str) -> TestCase:
        """The test case of a finding's rule on its object (or file), made if no group has it."""
        from junit_xml import TestCase

        path, shown = self.where(f.file)
        classname = _xml_text(str(f.object)) if f.object is not None else shown
        key = (path, classname, f.rule)
        group = self._group_of(path, classname, f.rule)
        if group is None:
            group = self.placed[key] = (f.line, classname)
            bisect.insort(self.suites[path].setdefault(group, []), f.rule)
        tc = self.content.get(key)
        if tc is None:
            tc = self.content[key] = TestCase(
                f"{f.rule} {rule_name}", classname=classname, file=shown, line=group[0], allow_multiple_subelements=True
            )
        return tc

    def add_group(self, path: str, line: int, classname: str, rule_ids: list[str]) -> None:
        group = self.first.get((path, classname))
        if group is None:  # the usual case: a new object, all its cases at once
            group = self.first[(path, classname)] = (line, classname)
            self.suites[path][group] = list(rule_ids)
            return
        cases = self.suites[path][group]  # the same object again (PL005): a case is where it was first met
        for rule_id in rule_ids:
            if rule_id not in cases:
                bisect.insort(cases, rule_id)


_Groups = list[tuple[tuple[int, str], list[str]]]


def _document(
    suites: list[tuple[str, str, _Groups]], content: dict[tuple[str, str, str], TestCase], names: dict[str, str]
) -> str:
    """The document, written once, in one pass (linear in the test cases).

    The JUnit elements of a test case with a failure or a skip (and their escaping) come from the
    junit-xml package; a passing test case is one element with four attributes, written here
    directly: building and serialising an element for each of the hundreds of thousands of them
    a large repository has took most of a run. The output is the bytes ElementTree writes for the
    whole tree indented with tabs (`ElementTree.indent`): tests/reporters/test_ci_reporters.py compares them.
    ElementTree, not minidom: minidom's escaping changed in Python 3.13, and the same report must
    be the same bytes on every supported Python."""
    from junit_xml import TestSuite

    parts: list[str] = []
    total_failures = total_tests = 0
    rule_names = {rule_id: _attr(f"{rule_id} {name}") for rule_id, name in names.items()}
    for shown, path, groups in suites:
        filled = [tc for (_, classname), rule_ids in groups for r in rule_ids if (tc := content.get((path, classname, r)))]
        failures = sum(1 for tc in filled if tc.is_failure())
        skipped = sum(1 for tc in filled if tc.is_skipped())
        tests = sum(len(rule_ids) for _, rule_ids in groups)
        total_failures += failures
        total_tests += tests
        file = _attr(shown)
        head = (
            f'\t<testsuite disabled="0" errors="0" failures="{failures}" name="{_attr(f"policylint {shown}")}"'
            f' skipped="{skipped}" tests="{tests}" time="0" file="{file}"'
        )
        if not groups:
            parts.append(head + " />\n")
            continue
        parts.append(head + ">\n")
        rendered = iter(_rendered_cases(TestSuite("", filled)) if filled else ())
        for (line, classname), rule_ids in groups:
            prefix = '\t\t<testcase name="'
            rest = f'" classname="{_attr(classname)}" file="{file}" line="{line}" />\n'
            for rule_id in rule_ids:
                if (path, classname, rule_id) in content:
                    parts.append(next(rendered))
                else:
                    parts.append(prefix + (rule_names.get(rule_id) or _attr(f"{rule_id} ")) + rest)
        parts.append("\t</testsuite>\n")
    head = (
        '<?xml version="1.0" encoding="utf-8"?>\n'
        f'<testsuites disabled="0" errors="0" failures="{total_failures}" tests="{total_tests}" time="0.0"'
    )
    if not suites:
        return head + " />\n"
    return head + ">\n" + "".join(parts) + "</testsuites>\n"


def _rendered_cases(suite: TestSuite) -> list[str]:
    """Each test case of a junit-xml suite, as ElementTree writes it indented two levels deep."""
    from xml.etree import ElementTree

    element = suite.build_xml_doc()
    out = []
    for child in element:
        ElementTree.indent(child, space="\t", level=2)
        child.tail = None
        out.append("\t\t" + ElementTree.tostring(child, encoding="unicode") + "\n")
    return out


# ElementTree's escaping of attribute values (xml.etree.ElementTree._escape_attrib), the same on
# every supported Python.
_ATTR_ESCAPES = (("&", "&amp;"), ("<", "&lt;"), (">", "&gt;"), ('"', "&quot;"), ("\r", "&#13;"), ("\n", "&#10;"), ("\t", "&#09;"))


def _attr(value: str) -> str:
    for char, escaped in _ATTR_ESCAPES:
        if char in value:
            value = value.replace(char, escaped)
    return value


def _xml_text(text: str) -> str:
    """Input text for the document: escaped (policylint.textsafe), and without the two
    characters XML 1.0 forbids that escaping keeps (U+FFFE, U+FFFF)."""
    escaped = escape(text)
    if "\ufffe" in escaped or "\uffff" in escaped:
        escaped = escaped.replace("\ufffe", "\\ufffe").replace("\uffff", "\\uffff")
    return escaped
