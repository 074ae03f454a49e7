"""The JSON report, schemaVersion 1 (design.md §3; schema in schemas/report.schema.json)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from policylint import DOCS_URL, __version__
from policylint.effective import CONFLICTED
from policylint.findings import Finding, Severity
from policylint.index import Policy, ProjectIndex, TargetResolution
from policylint.model import K8sObject, ObjectKey

if TYPE_CHECKING:
    from policylint.pipeline import LintResult


def help_uri(rule: str, name: str) -> str:
    return f"{DOCS_URL}/{rule}-{name}.md"


def _object_ref(key: ObjectKey, api_version: str) -> dict[str, Any]:
    return {"apiVersion": api_version, "kind": key.kind, "namespace": key.namespace, "name": key.name}


def finding_dict(f: Finding) -> dict[str, Any]:
    return {
        "rule": f.rule,
        "name": f.name,
        "severity": f.severity.label,
        "message": f.message,
        "file": f.file,
        "line": f.line,
        "column": f.column,
        "object": _object_ref(f.object, f.api_version) if f.object is not None else None,
        "path": f.path,
        "related": [{"message": r.message, "file": r.file, "line": r.line, "column": r.column} for r in f.related],
        "helpUri": help_uri(f.rule, f.name),
    }


def _target_dict(index: ProjectIndex, policy: Policy, res: TargetResolution) -> dict[str, Any]:
    ref = res.ref
    status = index.simulation().target_status(policy, res)
    accepted = res.status
    if status is not None and status.contexts and status.conflicted == status.contexts:
        accepted = CONFLICTED  # design.md §1.3: Accepted=False, reason Conflicted
    return {
        "ref": {
            "group": ref.group,
            "kind": ref.kind,
            "namespace": res.namespace if res.namespace is not None else ref.namespace,
            "name": ref.name,
            "sectionName": ref.section_name,
        },
        "path": ref.path,
        "accepted": accepted,
        "detail": res.detail,
        "message": res.message,
        # From the effective-policy simulation (policylint.effective): per target, over every
        # context through it.
        "enforcement": status.enforcement if status is not None and accepted != CONFLICTED else None,
        "beatenBy": sorted(status.beaten_by) if status is not None else [],
        "ancestors": sorted(str(k) for k in status.ancestors) if status is not None else [],
    }


def policy_dict(index: ProjectIndex, policy: Policy) -> dict[str, Any]:
    obj: K8sObject = policy.obj
    return {
        "object": _object_ref(obj.key, obj.api_version),
        "file": obj.doc.file,
        "line": obj.doc.line,
        "profile": policy.profile.name,
        "profileOrigin": policy.profile.origin,
        "class": policy.profile.policy_class,
        "targets": [_target_dict(index, policy, r) for r in index.targets(policy)],
        "affects": index.simulation().policy_affects(policy).counts(),
    }


def report(result: LintResult) -> dict[str, Any]:
    counts = {s.label: 0 for s in Severity}
    for f in result.findings:
        counts[f.severity.label] += 1
    policies = sorted(result.index.policies(), key=lambda p: (p.key.kind, p.key.namespace or "", p.key.name, p.key.group))
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
        "policies": [policy_dict(result.index, p) for p in policies],
    }


def render(result: LintResult) -> str:
    return json.dumps(report(result), indent=2, sort_keys=False) + "\n"
