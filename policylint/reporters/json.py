"""The JSON report, schemaVersion 1 (README "JSON report"; schema in schemas/report.schema.json)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from policylint import DOCS_URL, __version__
from policylint.findings import Finding, Severity
from policylint.k8s.names import object_ref
from policylint.textsafe import json_object_pieces

if TYPE_CHECKING:
    from policylint.reported import Reported
    from policylint.reporters import RenderOptions


def help_uri(rule: str, name: str) -> str:
    return f"{DOCS_URL}/{rule}-{name}.md"


# Each severity's word, looked up per finding rather than worked out from the enum's name.
_LABELS = {severity: severity.label for severity in Severity}


def finding_dict(f: Finding) -> dict[str, Any]:
    return {
        "rule": f.rule,
        "name": f.name,
        "severity": _LABELS[f.severity],
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


def _with_change(result: Reported, f: Finding) -> dict[str, Any]:
    out = finding_dict(f)
    introduced = result.introduced_by_change(f)
    if introduced is not None:
        out["introduced"] = introduced
    return out


def _fields(result: Reported) -> list[tuple[str, Any]]:
    """The report's top-level fields, in order; the findings as a generator of their objects."""
    counts = {s.label: 0 for s in Severity}
    for f in result.findings:
        counts[f.severity.label] += 1
    # Computed by the pipeline, under its guard, for every output that shows it (Reporter.policies).
    if result.policy_reports is None:
        raise ValueError("the JSON report needs the policies section: lint with LintRequest(report_policies=True)")
    policies = result.policy_reports
    summary: dict[str, Any] = {
        "files": len(result.files),
        "objects": result.object_count(),
        "policies": len(policies),
        "findings": {"error": counts["error"], "warning": counts["warning"], "info": counts["info"]},
    }
    change = result.change_counts()
    if change is not None:
        # `--diff` / `--staged` (policylint.commands.change): what the change is measured from and
        # how many findings it introduces; each finding says which it is.
        summary["change"] = {"base": result.base, "introduced": change[0], "preExisting": change[1]}
    fields: list[tuple[str, Any]] = [
        ("schemaVersion", 1),
        ("tool", {"name": "policylint", "version": __version__}),
        ("summary", summary),
        ("findings", (_with_change(result, f) for f in result.findings)),
        ("policies", policies),
    ]
    # Only when there is something to say (policylint.gate): a run without a configuration that
    # relaxes anything, and without a base to compare with, writes the report it always wrote.
    if result.gate:
        fields.append(("gate", result.gate.as_dict()))
    return fields


# Written an item at a time (`pieces`): the fields that grow with the repository.
_LONG = frozenset({"findings", "policies"})


def report(result: Reported) -> dict[str, Any]:
    return {key: list(value) if key in _LONG else value for key, value in _fields(result)}


def pieces(result: Reported, options: RenderOptions | None = None) -> Iterator[str]:
    """The report in pieces, a batch of findings or policies each (`textsafe.PIECE_ITEMS`;
    `renderer` joins them, the command writes them as they come): 77 MB of JSON at 100k objects is
    never held whole."""
    # ASCII output, with lone surrogates (undecodable file names) replaced: valid UTF-8 JSON.
    return json_object_pieces(_fields(result), long=_LONG, ensure_ascii=True, fast=True)


def render(result: Reported, options: RenderOptions | None = None) -> str:
    return "".join(pieces(result, options))
