"""The JSON report, schemaVersion 1 (README "JSON report"; schema in schemas/report.schema.json)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from policylint import DOCS_URL, __version__
from policylint.findings import Finding, Severity
from policylint.policy_report import object_ref
from policylint.textsafe import json_dumps

if TYPE_CHECKING:
    from policylint.pipeline import LintResult
    from policylint.reporters import RenderOptions


def help_uri(rule: str, name: str) -> str:
    return f"{DOCS_URL}/{rule}-{name}.md"


def finding_dict(f: Finding) -> dict[str, Any]:
    return {
        "rule": f.rule,
        "name": f.name,
        "severity": f.severity.label,
        "message": f.message,
        "file": f.file,
        "line": f.line,
        "column": f.column,
        "object": object_ref(f.object, f.api_version) if f.object is not None else None,
        "path": f.path,
        "related": [{"message": r.message, "file": r.file, "line": r.line, "column": r.column} for r in f.related],
        "helpUri": help_uri(f.rule, f.name),
        "hint": f.hint,
        "fingerprint": f.fingerprint,
        "fix": {"description": f.fix.description, "applicability": "safe" if f.fix.safe else "unsafe"} if f.fix else None,
    }


def report(result: LintResult) -> dict[str, Any]:
    counts = {s.label: 0 for s in Severity}
    for f in result.findings:
        counts[f.severity.label] += 1
    # Computed by the pipeline, under its guard, for every output that shows it (Reporter.policies).
    if result.policy_reports is None:
        raise ValueError("the JSON report needs the policies section: lint with LintRequest(report_policies=True)")
    policies = result.policy_reports
    return {
        "schemaVersion": 1,
        "tool": {"name": "policylint", "version": __version__},
        "summary": {
            "files": len(result.files),
            "objects": len(result.index.objects),
            "policies": len(policies),
            "findings": {"error": counts["error"], "warning": counts["warning"], "info": counts["info"]},
        },
        "findings": [finding_dict(f) for f in result.findings],
        "policies": policies,
    }


def render(result: LintResult, options: RenderOptions | None = None) -> str:
    # ASCII output, with lone surrogates (undecodable file names) replaced: valid UTF-8 JSON.
    return json_dumps(report(result), indent=2, ensure_ascii=True, fast=True, newline=True)
