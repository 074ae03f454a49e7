"""GitLab Code Quality report: a JSON array GitLab shows in merge requests and pipelines.

Each finding is an object with `description`, `check_name`, `fingerprint`, `severity` and
`location.path` / `location.lines.begin` (GitLab Docs, "Code Quality", "Code Quality report
format"). GitLab deduplicates and compares merge-request and target-branch reports by
`fingerprint`: policylint's fingerprint does not move with lines, so a finding that only moved is
not reported as fixed and new. Suppressed findings are left out: the format has no way to say
they were accepted.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from policylint.findings import Finding, Severity
from policylint.textsafe import json_dumps

if TYPE_CHECKING:
    from policylint.reported import Reported
    from policylint.reporters import RenderOptions

# GitLab's severities are info, minor, major, critical and blocker. An error fails the gate
# (by default), so it is at least `major`; nothing policylint finds blocks by itself.
SEVERITIES = {Severity.ERROR: "major", Severity.WARNING: "minor", Severity.INFO: "info"}


def _body(f: Finding) -> str:
    """The issue's Markdown body, what GitLab shows when the finding is opened: how to fix it (the
    hint), what the rule checks (its summary, as in the rules/README.md table) and a link to its
    doc. PL000 is policylint's own failure: its body says so."""
    from policylint.reporters.json import help_uri
    from policylint.rules import BY_ID

    rule = BY_ID.get(f.rule)
    if rule is None:
        about = "policylint failed on part of the input; the message says where. Please report it."
    else:
        about = rule.summary()
    parts = [f.hint or "", about, f"[{f.rule} {f.name}]({help_uri(f.rule, f.name)})"]
    return "\n\n".join(p for p in parts if p)


def _issue(f: Finding, options: RenderOptions) -> dict[str, Any]:
    description = f"{f.rule} {f.message}"
    if f.object is not None:
        description += f" [{f.object}]"
    line, _, end_line, _ = f.region
    return {
        "type": "issue",
        "description": description,
        "check_name": f"{f.rule} {f.name}",
        "content": {"body": _body(f)},
        "categories": ["Bug Risk"],
        "fingerprint": f.fingerprint,
        "severity": SEVERITIES[f.severity],
        "location": {"path": options.repo_path(f.file), "lines": {"begin": line, "end": end_line}},
    }


def render(result: Reported, options: RenderOptions | None = None) -> str:
    from policylint.reporters import RenderOptions

    options = options or RenderOptions()
    return json_dumps([_issue(f, options) for f in result.findings], indent=2, ensure_ascii=True, fast=True, newline=True)
