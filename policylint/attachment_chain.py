"""Attachment chains: for a finding on a policy, the places that decide where it attaches.

A policy reaches what it governs through a chain that usually spans files: the policy, its
targetRef, the target object, the listener or section the reference names, and, across
namespaces, the ReferenceGrant that permits it (GEP-713 "Policy Attachment"; GEP-709
"Cross Namespace References from Routes" for the handshake). SARIF shows such a chain as a
`codeFlow` a reviewer can step through; this report stage computes it from what resolution
decided, with positions, so the reporter only renders it.

Computed by the pipeline after the rules, only when an output shows it (Reporter.chains).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from policylint.findings import Finding
from policylint.input.positions import PositionResolver
from policylint.k8s.objects import K8sObject, ObjectKey
from policylint.profiles.policy import Policy
from policylint.project import Project
from policylint.semantics.resolution import TargetResolution
from policylint.values import frozen
from policylint.vocabulary import Accepted

# A policy with many targets (a selector matching hundreds of routes) gets the chains of the
# first ones: enough to follow, not a document that grows with the cluster.
MAX_CHAINS = 10


@frozen
class Step:
    """One place of a chain: what it is and where (1-based; the end column is exclusive)."""

    message: str
    file: str
    line: int
    column: int
    end_line: int
    end_column: int


Chain = tuple[Step, ...]


def _step(resolver: PositionResolver, obj: K8sObject, path: str, message: str) -> Step:
    return Step(message, obj.doc.file, *resolver.span(obj.doc, obj.doc_path(path)))


def _named(obj: K8sObject) -> str:
    return f"{obj.kind} {obj.key.namespace}/{obj.name}" if obj.key.namespace else f"{obj.kind} {obj.name}"


def chain(policy: Policy, res: TargetResolution, resolver: PositionResolver) -> Chain:
    """policy → targetRef → target → section → grant, as far as resolution got."""
    obj = policy.obj
    ref = res.ref
    steps = [
        _step(resolver, obj, "metadata.name", f"policy {_named(obj)}"),
        _step(
            resolver, obj, ref.path, f"targets {ref.display()}: {res.status.value}" + (f" ({res.message})" if res.message else "")
        ),
    ]
    target = res.target
    if target is None:
        return tuple(steps)
    steps.append(_step(resolver, target, "metadata.name", f"target {_named(target)}"))
    if res.section is not None:
        steps.append(_step(resolver, target, res.section.path, f"section {res.section.name or res.section.path}"))
    if res.grant is not None and res.status is not Accepted.TARGET_NOT_FOUND:
        for grant in res.grant.grants[:1]:
            # The `from` entry that names the policy's namespace is what permits the reference.
            entry = next((s.path for s in grant.sources if s.namespace == obj.key.namespace), "spec")
            steps.append(_step(resolver, grant.obj, entry, f"permitted by {_named(grant.obj)}"))
    return tuple(steps)


def _chosen(policy: Policy, resolutions: Sequence[TargetResolution], path: str) -> list[TargetResolution]:
    """The targets a finding is about: the one whose targetRef its path lies in, else all."""
    for res in resolutions:
        ref_path = res.ref.path
        if path == ref_path or path.startswith((ref_path + ".", ref_path + "[")):
            return [res]
    return list(resolutions[:MAX_CHAINS])


def compute(project: Project, findings: Iterable[Finding], resolver: PositionResolver) -> dict[str, tuple[Chain, ...]]:
    """The chains of each finding on a policy, by fingerprint."""
    resolution = project.resolution
    policies: dict[ObjectKey, Policy] = {p.obj.key: p for p in resolution.policies()}
    out: dict[str, tuple[Chain, ...]] = {}
    for finding in findings:
        policy = policies.get(finding.object) if finding.object is not None else None
        if policy is None or not finding.fingerprint:
            continue
        resolutions = resolution.targets(policy)
        chains = tuple(chain(policy, res, resolver) for res in _chosen(policy, resolutions, finding.path))
        if chains:
            out[finding.fingerprint] = chains
    return out
