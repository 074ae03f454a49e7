"""The policies section every report shows: for each policy, its targets as resolution decided
them, its status over the contexts the simulation walked, and its blast radius.

The pipeline computes it after the rules, only when a requested output shows it (Reporter.policies),
every step guarded like a rule (policylint.rules.engine): a step that raises leaves its fields
empty and becomes a PL000 issue. Reporters then only render it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import field
from functools import partial
from typing import Any, TypeVar

from policylint.findings import INTERNAL_ERROR, Issue, Location
from policylint.k8s.names import ns_name, object_ref
from policylint.k8s.objects import K8sObject
from policylint.profiles.policy import Policy
from policylint.project import Project
from policylint.semantics.effective.facets import TargetStatus
from policylint.semantics.resolution import TargetResolution
from policylint.values import record
from policylint.vocabulary import Accepted, Enforcement

_T = TypeVar("_T")


def target_ref(res: TargetResolution) -> dict[str, Any]:
    """A target reference as the reports write it, with the namespace it was looked up in."""
    ref = res.ref
    return {
        "group": ref.group,
        "kind": ref.kind,
        "namespace": res.namespace if res.namespace is not None else ref.namespace,
        "name": ref.name,
        "sectionName": ref.section_name,
    }


def _target_base(res: TargetResolution) -> dict[str, Any]:
    """What resolution decided for one targetRef; the simulation's fields start empty."""
    ref = res.ref
    return {
        "ref": target_ref(res),
        "path": ref.path,
        # The section is the JSON report's shape: terms are rendered here, once, as their words.
        "accepted": res.status.label,
        "detail": res.detail.label,
        "message": res.message,
        "enforcement": None,
        "beatenBy": [],
        "ancestors": [],
        "conditions": [_condition("Accepted", res.status is Accepted.ACCEPTED, res.status.label, res.message)],
    }


def _condition(kind: str, true: bool, reason: str, message: str = "") -> dict[str, Any]:
    return {"type": kind, "status": "True" if true else "False", "reason": reason, "message": message}


def _simulated(project: Project, policy: Policy, res: TargetResolution, entry: dict[str, Any]) -> None:
    """The fields the effective-policy simulation (policylint.semantics.effective.simulation) adds to a target: per
    target, over every context through it."""
    simulation = project.simulation()
    accepted, message = simulation.accepted(policy, res)
    entry["accepted"] = accepted.label
    entry["message"] = message
    entry["conditions"] = [_condition("Accepted", accepted is Accepted.ACCEPTED, accepted.label, message)]
    status = simulation.target_status(policy, res)
    at_target = simulation.override_at_target(policy, res) if accepted is Accepted.ACCEPTED else None
    if at_target is not None and at_target[1]:
        # No traffic through the target yet, but more specific policies already take some or all
        # of its listeners: decided when the policies attach, as the controller does.
        units, taken, winners = at_target
        entry["enforcement"] = (Enforcement.OVERRIDDEN if taken == units else Enforcement.PARTIALLY_ENFORCED).label
        entry["beatenBy"] = sorted(winners)
        if "Overridden" in policy.profile.conditions:
            entry["conditions"].append(
                _condition("Overridden", True, "Overridden", "overridden by " + ", ".join(sorted(winners)))
            )
        return
    if status is None:
        return
    entry["enforcement"] = status.enforcement.label if accepted is Accepted.ACCEPTED and status.enforcement is not None else None
    entry["beatenBy"] = sorted(status.beaten_by)
    entry["ancestors"] = sorted(str(k) for k in status.ancestors)
    displaced = simulation.displaced_by_itself(policy, res) if "Overridden" in policy.profile.conditions else 0
    entry["conditions"].extend(_controller_conditions(policy, status, accepted, displaced))


def _controller_conditions(policy: Policy, status: TargetStatus, accepted: Accepted, displaced: int = 0) -> list[dict[str, Any]]:
    """The conditions the policy's controller writes besides Accepted (profile `conditions`),
    as the simulation decides them: `Overridden` when more specific policies take values in
    some context — not when all they did was merge onto it (mergeType: the controller reports a
    merge) — and `Merged` on a route policy merged onto its parent's."""
    out: list[dict[str, Any]] = []
    written = policy.profile.conditions
    if accepted is not Accepted.ACCEPTED:
        return out
    if "Overridden" in written and status.overridden + status.partial + displaced > status.merged_away:
        # The controller counts its own more specific attachment too: a policy on a Gateway and
        # on a ListenerSet of it is Overridden at the Gateway for the ListenerSet's listeners
        # (Envoy Gateway's translator test clienttrafficpolicy-listenerset-mixed-targetrefs).
        names = (
            sorted(status.beaten_by)
            if status.beaten_by
            else ([ns_name(policy.obj.namespace, policy.obj.name)] if displaced else [])
        )
        message = "overridden by " + ", ".join(names) if names else ""
        out.append(_condition("Overridden", True, "Overridden", message))
    if "Merged" in written and status.merged_with:
        out.append(_condition("Merged", True, "Merged", "merged with policy " + ", ".join(sorted(status.merged_with))))
    return out


@record(slots=True)
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
            "object": object_ref(obj.key, obj.api_version),
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
