"""The JSON report, schemaVersion 1 (README "JSON report"; schema in schemas/report.schema.json)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING, Any, TypeVar

from policylint import DOCS_URL, __version__
from policylint.findings import Finding, Issue, Location, Severity
from policylint.k8s.objects import K8sObject, ObjectKey
from policylint.profiles.policy import Policy
from policylint.project import Project
from policylint.rules.engine import INTERNAL_ERROR
from policylint.semantics.resolution import TargetResolution
from policylint.textsafe import json_dumps
from policylint.vocabulary import Accepted

if TYPE_CHECKING:
    from policylint.pipeline import LintResult


_T = TypeVar("_T")


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
        "hint": f.hint,
        "fingerprint": f.fingerprint,
    }


def _target_base(res: TargetResolution) -> dict[str, Any]:
    """What the index resolved for one targetRef; the simulation's fields start empty."""
    ref = res.ref
    return {
        "ref": {
            "group": ref.group,
            "kind": ref.kind,
            "namespace": res.namespace if res.namespace is not None else ref.namespace,
            "name": ref.name,
            "sectionName": ref.section_name,
        },
        "path": ref.path,
        "accepted": res.status,
        "detail": res.detail,
        "message": res.message,
        "enforcement": None,
        "beatenBy": [],
        "ancestors": [],
    }


def _simulated(project: Project, policy: Policy, res: TargetResolution, entry: dict[str, Any]) -> None:
    """The fields the effective-policy simulation (policylint.semantics.effective.simulation) adds to a target: per
    target, over every context through it."""
    status = project.simulation().target_status(policy, res)
    if status is None:
        return
    accepted = res.status
    if status.contexts and status.conflicted == status.contexts:
        accepted = Accepted.CONFLICTED  # Accepted=False, reason Conflicted (docs/effective-policy.md)
    entry["accepted"] = accepted
    entry["enforcement"] = status.enforcement if accepted != Accepted.CONFLICTED else None
    entry["beatenBy"] = sorted(status.beaten_by)
    entry["ancestors"] = sorted(str(k) for k in status.ancestors)


@dataclass(slots=True)
class _Failures:
    """Exceptions raised while computing the policy section, grouped by what failed and where,
    so that one broken step shared by every policy gives one PL000, not one per policy."""

    groups: dict[tuple[str, str, str], list[Policy]] = field(default_factory=dict)
    first: dict[tuple[str, str, str], BaseException] = field(default_factory=dict)

    def guard(self, step: str, policy: Policy, compute: Callable[[], _T]) -> _T | None:
        try:
            return compute()
        except Exception as exc:  # a bug must not cost the report: the field stays empty, PL000 says why
            import traceback  # only on failure

            frames = traceback.extract_tb(exc.__traceback__)
            where = f"{frames[-1].filename.rsplit('/', 1)[-1]}:{frames[-1].lineno}" if frames else "?"
            key = (step, f"{type(exc).__name__}: {exc}", where)
            self.groups.setdefault(key, []).append(policy)
            self.first.setdefault(key, exc)
            return None

    def issues(self) -> list[Issue]:
        out = []
        for (step, error, where), policies in self.groups.items():
            obj = policies[0].obj
            more = f" (and {len(policies) - 1} more)" if len(policies) > 1 else ""
            out.append(
                Issue(
                    rule_id=INTERNAL_ERROR,
                    message=f"JSON report: {step} of policy {obj.key}{more} failed: {error} [{where}]; please report this",
                    location=Location(obj.doc.file, obj.doc.line, 1),
                )
            )
        return out


def _policy_entry(project: Project, policy: Policy, failures: _Failures) -> dict[str, Any] | None:
    obj: K8sObject = policy.obj

    def base() -> dict[str, Any]:
        return {
            "object": _object_ref(obj.key, obj.api_version),
            "file": obj.doc.file,
            "line": obj.doc.line,
            "profile": policy.profile.name,
            "profileOrigin": policy.profile.origin,
            "class": policy.profile.policy_class,
            "targets": [],
            "affects": None,
        }

    entry = failures.guard("listing", policy, base)
    if entry is None:
        return None
    resolved = failures.guard(
        "resolving the targets", policy, lambda: [(r, _target_base(r)) for r in project.resolution.targets(policy)]
    )
    for res, target in resolved or []:
        failures.guard("simulating the targets", policy, partial(_simulated, project, policy, res, target))
        entry["targets"].append(target)
    entry["affects"] = failures.guard(
        "computing the blast radius", policy, lambda: project.simulation().policy_affects(policy).counts()
    )
    return entry


def policy_reports(project: Project) -> tuple[list[dict[str, Any]], list[Issue]]:
    """The `policies` section, every step guarded like a rule (policylint.rules.engine): a step that
    raises leaves its fields empty (`targets: []`, `affects: null`, a target's simulated fields
    null) and becomes a PL000 issue. Computed before rendering, so rendering cannot fail on input."""
    failures = _Failures()
    entries: list[dict[str, Any]] = []
    try:
        policies = sorted(
            project.resolution.policies(), key=lambda p: (p.key.kind, p.key.namespace or "", p.key.name, p.key.group)
        )
    except Exception as exc:  # without the list there is nothing to report on
        first = project.index.files[0] if project.index.files else "<input>"
        error = f"{type(exc).__name__}: {exc}"
        return [], [
            Issue(
                INTERNAL_ERROR,
                f"JSON report: listing the policies failed: {error}; please report this",
                location=Location(first, 1, 1),
            )
        ]
    for policy in policies:
        entry = _policy_entry(project, policy, failures)
        if entry is not None:
            entries.append(entry)
    return entries, failures.issues()


def report(result: LintResult) -> dict[str, Any]:
    counts = {s.label: 0 for s in Severity}
    for f in result.findings:
        counts[f.severity.label] += 1
    # The pipeline computes the section under its guard when asked (`--format json`); a result
    # built without it gets the same guarded computation here, its failures left out.
    policies = result.policy_reports if result.policy_reports is not None else policy_reports(result.project)[0]
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


def render(result: LintResult, *, color: bool = False) -> str:
    # ASCII output, with lone surrogates (undecodable file names) replaced: valid UTF-8 JSON.
    return json_dumps(report(result), indent=2, ensure_ascii=True) + "\n"
