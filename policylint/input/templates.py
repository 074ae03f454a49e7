"""Unrendered templates and placeholders in a file (PL004): `{{ }}` markers outside the kinds that
use them as their own syntax, and placeholders where a Kubernetes name or a value is expected
(policylint.input.placeholders)."""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterator
from typing import Any

from policylint.findings import Issue
from policylint.input import placeholders
from policylint.input.convert import COLLECTION_KEY_MESSAGE
from policylint.input.document import TEMPLATE_MARKERS, YAML_SYNTAX_ERROR, located_issue
from policylint.input.placeholders import Braces
from policylint.input.reader import NON_SPACE, line_col


def _template_marker(text: str) -> tuple[int, int, str] | None:
    """The first template action in `text` (`_template_markers`), or None."""
    return next(_template_markers(text), None)


def _template_markers(text: str) -> Iterator[tuple[int, int, str]]:
    """Each template action `{{ ... }}` (Go templates as Helm uses them, Jinja), in text order:
    `{{`, an optional `-`, whitespace, the action on one line, whitespace, an optional `-`,
    `}}`; the whitespace next to the braces may span lines.

    Found with str methods, looking at each character a bounded number of times: the regular
    expression this replaces (`\\{\\{-?\\s*.*?\\s*-?\\}\\}`) backtracked quadratically, and `{{`
    followed by 2,000 spaces took 15 s.
    """
    pos = text.find("{{")
    last_close = text.rfind("}}")
    while 0 <= pos < last_close:
        i = pos + 2
        if text.startswith("-", i):
            i += 1
        first = NON_SPACE.search(text, i)
        if first is None:
            return
        i = first.start()  # where the action starts
        eol = text.find("\n", i)
        if eol < 0:
            eol = len(text)
        close = text.find("}}", i, eol)
        if close >= 0:
            end = close + 2
        else:
            after = NON_SPACE.search(text, eol)
            j = after.start() if after is not None else len(text)
            if text.startswith("}}", j):
                end = j + 2
            elif text.startswith("-}}", j):
                end = j + 3
            else:
                # Every `{{` up to the end of this line fails the same way, but for the last one
                # when only whitespace follows it: its action would start on a later line.
                last = text.rfind("{{", pos + 1, eol)
                if last >= 0:
                    rest = last + 3 if text.startswith("-", last + 2) else last + 2
                    if NON_SPACE.search(text, rest, eol) is None:
                        pos = last
                        continue
                pos = text.find("{{", eol)
                continue
        line, col = line_col(text, pos)
        yield line, col, text[pos:end][:60]
        pos = text.find("{{", end)


# API groups whose objects may hold template markers as values of their own: Argo Workflows
# (`{{inputs.parameters.x}}`) and the like. Every other group is decided by
# `_markers_are_own_syntax`.
def _markers_are_own_syntax(data: Any) -> bool:
    """Whether a document that parsed is an object of a kind that uses `{{ }}` as its own syntax,
    so that a marker in one of its string values is not an unrendered template (PL004).

    Kept for Gateway API, policy and core kinds (rules/PL004-unrendered-template.md): the core
    group and the built-in groups (no dot: `apps`, `batch`, `policy`), every `*k8s.io` group
    (Gateway API, `networking.k8s.io`), and every kind named `...Policy`, which is how GEP-713
    policy kinds are named; not for a mapping with neither `apiVersion` nor `kind`, which is no
    object of any kind. Decided from the document alone, so that the parse cache can keep it.
    """
    if not isinstance(data, dict):
        return False
    if "apiVersion" not in data and "kind" not in data:
        # No Kubernetes object at all (PL003 ignores it): a Grafana dashboard's `{{code}}` legend,
        # a configuration file's own placeholders. A manifest whose apiVersion or kind a template
        # writes keeps the key (`kind: "{{ .Values.kind }}"`), or breaks the YAML (unquoted).
        return True
    api_version, kind = data.get("apiVersion"), data.get("kind")
    if not isinstance(api_version, str) or not isinstance(kind, str) or not api_version or not kind:
        return False
    group = api_version.rpartition("/")[0]
    if "." not in group or group.endswith("k8s.io"):
        return False
    return not kind.endswith("Policy")


def template_issue(text: str, file: str, spans: list[tuple[int, int, Any]], issues: list[Issue]) -> Issue | None:
    """The PL004 issue of a file: at its first template marker that is not the own syntax of the
    object it sits in (`_markers_are_own_syntax`), or None. A marker outside every parsed
    document, or on a line where YAML read it as a mapping key (`{{ x }}` unquoted), breaks the
    YAML structure and always counts."""
    broken_lines = {
        issue.location.line
        for issue in issues
        if issue.location is not None and issue.rule_id == YAML_SYNTAX_ERROR and issue.message.startswith(COLLECTION_KEY_MESSAGE)
    }
    starts = [span[0] for span in spans]
    for line, col, snippet in _template_markers(text):
        at = bisect.bisect_right(starts, line) - 1
        inside = at >= 0 and spans[at][0] <= line <= spans[at][1]
        if inside and line not in broken_lines and _markers_are_own_syntax(spans[at][2]):
            continue
        return located_issue(
            TEMPLATE_MARKERS,
            file,
            line,
            col,
            f"unrendered template marker {snippet!r}: render the chart or template first (helm template, kustomize build)",
        )
    return None


# Whether a text may hold a brace placeholder (`{VAR}`, `{{VAR}}`): an identifier between braces.
# A YAML or JSON flow mapping has a `:` or a space inside its braces, so this rarely keeps the
# document spans of a file that holds none. Linear: one character class, no nesting.
BRACED = re.compile(r"\{[A-Za-z_][A-Za-z0-9_.\-]*\}")


# Openers and closers of the placeholders `unrendered` finds: template actions and variables.
_PLACEHOLDER_PAIRS = (("{{", "}}"), ("${", "}"), ("$(", ")"))
_MAX_PLACEHOLDERS = 16  # per value: a bound on the work, far more than a real value holds


def unrendered(value: str) -> list[str]:
    """The placeholders a value holds, in order: `{{ ... }}` (Helm, gomplate, Jinja), `${VAR}`
    (envsubst, Flux), `$(VAR)` (Kustomize vars) and `<name>` (documentation). Each is ordinary
    text in some values, so callers decide whether it matters where it stands. Linear: str
    methods only, and at most `_MAX_PLACEHOLDERS`."""
    found: list[tuple[int, str]] = []
    for opening, closing in _PLACEHOLDER_PAIRS:
        start = value.find(opening)
        while start >= 0 and len(found) < _MAX_PLACEHOLDERS:
            end = value.find(closing, start + len(opening))
            if end < 0:
                break
            found.append((start, value[start : end + len(closing)]))
            start = value.find(opening, end + len(closing))
    start = value.find("<")
    while start >= 0 and len(found) < _MAX_PLACEHOLDERS:
        end = value.find(">", start + 1)
        if end < 0:
            break
        start = value.rfind("<", start, end)  # the innermost: `a<b, <c>` holds `<c>`
        if end > start + 1:
            found.append((start, value[start : end + 1]))
        start = value.find("<", end + 1)
    out: list[str] = []
    reached = 0
    for at, text in sorted(found):
        if at >= reached:  # not inside the one before (`{{ ${x} }}`)
            out.append(text)
            reached = at + len(text)
    return out


def placeholder_issue(text: str, file: str, spans: list[tuple[int, int, Any]]) -> Issue | None:
    """The PL004 issue of a file without `{{ }}` markers: at the first placeholder where a
    Kubernetes name is expected (`metadata.name`, a reference's `name` or `namespace`), or None."""
    for first_line, last_line, data in spans:
        first = _first_placeholder(data, braces=_brace_forms(data))
        if first is None:
            continue
        found, where = first
        line, col = first_line, 1
        lines = text.split("\n")
        for number in range(first_line, min(last_line, len(lines)) + 1):
            at = lines[number - 1].find(found)
            if at >= 0:
                line, col = number, at + 1
                break
        return located_issue(
            TEMPLATE_MARKERS,
            file,
            line,
            col,
            f"unrendered placeholder {found!r} where {where} is expected: substitute it first"
            " (envsubst, kustomize replacements, your deployment tool's variables)",
        )
    return None


def _brace_forms(data: Any) -> Braces:
    """Which brace placeholders count in a document's names: none in a document that is no
    Kubernetes object (an OpenAPI file's `name: "{id}"` is its own), `{VAR}` but not `{{VAR}}` in
    an object whose kind uses `{{ }}` as its own syntax (`_markers_are_own_syntax`), both elsewhere."""
    if not isinstance(data, dict) or "apiVersion" not in data or "kind" not in data:
        return "none"
    return "single" if _markers_are_own_syntax(data) else "all"


def _first_placeholder(data: Any, *, braces: Braces) -> tuple[str, str] | None:
    """The first placeholder of a document, and what its field expects ("a Kubernetes name", "a value")."""
    found = placeholders.fields(data, braces=braces, first=True)
    if not found:
        return None
    path, text = found[0]
    return text, "a Kubernetes name" if path and path[-1] in placeholders.NAME_KEYS else "a value"


def placeholder_fields(data: Any) -> list[tuple[placeholders.PathParts, str]]:
    """The fields of a parsed document that hold a placeholder PL004 reports
    (policylint.input.placeholders), in document order."""
    return placeholders.fields(data, braces=_brace_forms(data))


def placeholder_along(data: Any, path: placeholders.PathParts) -> bool:
    """Whether `path` of a parsed document may be, or lie inside, a field `placeholder_fields`
    gives: False is final, True is confirmed with `placeholder_fields` (`placeholders.along`)."""
    return placeholders.along(data, path, braces=_brace_forms(data))


def without_template_keys(issues: list[Issue], text: str) -> list[Issue]:
    """One finding per cause: YAML reads `{{ .Values.x }}` as a mapping whose key is a mapping,
    so a line holding a template marker (PL004) would also get PL001 for that key."""
    lines = text.splitlines()
    out = []
    for issue in issues:
        loc = issue.location
        if (
            issue.rule_id == YAML_SYNTAX_ERROR
            and issue.message.startswith(COLLECTION_KEY_MESSAGE)
            and loc is not None
            and 0 < loc.line <= len(lines)
            and "{{" in lines[loc.line - 1]
        ):
            continue
        out.append(issue)
    return out
