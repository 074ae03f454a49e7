"""PL1xx: policy boilerplate — the fields every policy object carries.

What a kind's boilerplate looks like is profile data (policylint.profiles.registry): its
target fields and their limits, and one of two styles
(docs/semantics.md#two-boilerplate-styles):

- `policy-attachment`, from the original Gateway API Policy Attachment page
  ("Policy Boilerplate"): `spec.targetRef` plus `spec.default` and/or
  `spec.override`, at least one of which MUST be present; both may be;
- `gep713`: target fields, the spec proper at the top level, and optionally a
  `defaults` or `overrides` block with a `strategy` — one merge strategy per
  object (GEP-713 "Merge strategies").

No rule here branches on a policy kind.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from policylint.findings import Edit, Fix, Issue, Related, Severity
from policylint.input.positions import join
from policylint.k8s.objects import split_api_version
from policylint.profiles.policy import Policy
from policylint.profiles.registry import ORIGIN_INFERRED, POLICY_ATTACHMENT, PolicyProfile
from policylint.project import Project
from policylint.rules.base import POLICY, PerPolicy, Rule
from policylint.rules.labels import POLICY_LABEL, crd_shape, editable_crds, is_policy_crd
from policylint.textsafe import short_repr


def _is_set(value: Any) -> bool:
    """A field counts as set unless it is null or an empty list: neither names anything."""
    return value is not None and value != []


def _spec(policy: Policy) -> Mapping[str, Any] | None:
    spec = policy.obj.data.get("spec")
    return spec if isinstance(spec, dict) else None


def _field_list(names: Iterable[str], conj: str = "or") -> str:
    items = [f"spec.{n}" for n in names]
    if len(items) <= 1:
        return items[0] if items else "a target field"  # a CRD-derived profile may know no field name
    return ", ".join(items[:-1]) + f" {conj} " + items[-1]


def _type_name(value: Any) -> str:
    if isinstance(value, bool):
        return "a boolean"
    return {list: "a list", str: "a string", int: "a number", float: "a number"}.get(type(value), type(value).__name__)


def _described(profile: PolicyProfile) -> str:
    return f"{profile.project} {profile.kind}" if profile.origin != ORIGIN_INFERRED else profile.kind


# The target fields policy kinds use (GEP-713, GEP-2648): one a kind does not use may be an older
# version's.
_TARGET_FIELD_NAMES = ("targetRef", "targetRefs", "targetSelectors")


class PolicyWithoutTarget(PerPolicy):
    """A policy sets none of its kind's target fields (targetRef, targetRefs, targetSelectors)."""

    id = "PL101"
    name = "policy-without-target"
    severity = Severity.ERROR
    subjects = frozenset({POLICY})

    def check_unit(self, project: Project, policy: Policy) -> Iterable[Issue]:
        targets = policy.profile.targets
        spec = _spec(policy)
        if spec is None or not targets.required or not targets.fields:
            return  # no spec at all is PL105
        if any(_is_set(spec.get(f)) for f in targets.fields):
            return
        present = [f for f in targets.fields if f in spec]
        # Point at an empty `targetRefs: []` when there is one; otherwise at spec.
        path = join("spec", present[0]) if present else "spec"
        if present:
            detail = f"{_field_list(present, 'and')} {'is' if len(present) == 1 else 'are'} empty"
        else:
            detail = f"it has no {_field_list(targets.fields)}"
        limit = f" (1..{targets.max_items} entries)" if targets.list and targets.max_items else ""
        message = f"{policy.obj.kind} attaches to nothing: {detail}"
        # An API version the kind no longer serves, with its older target field (BackendTLSPolicy
        # v1alpha2 had `targetRef`; v1 has `targetRefs`): say so, rather than only "no target".
        version = split_api_version(policy.obj.api_version)[1]
        old_fields = [f for f in _TARGET_FIELD_NAMES if f in spec and f not in targets.fields]
        if policy.profile.versions and version not in policy.profile.versions and old_fields:
            message += (
                f"; {policy.obj.api_version} is not a version the {policy.obj.kind} CRD serves"
                f" ({', '.join(policy.profile.versions)}), whose target field is {_field_list(targets.fields)},"
                f" not spec.{old_fields[0]}"
            )
            path = join("spec", old_fields[0])
        yield self.issue(
            policy.obj,
            path,
            message,
            hint=f"Set {_field_list(targets.fields)}{limit} to name the object it applies to.",
        )


class TargetRefAndTargetRefsBothSet(PerPolicy):
    """A policy sets both the single `targetRef` and the `targetRefs` list of its kind."""

    id = "PL102"
    name = "targetref-and-targetrefs-both-set"
    severity = Severity.ERROR
    subjects = frozenset({POLICY})

    def check_unit(self, project: Project, policy: Policy) -> Iterable[Issue]:
        targets = policy.profile.targets
        spec = _spec(policy)
        if spec is None or not targets.exclusive or not targets.single or not targets.list:
            return
        if _is_set(spec.get(targets.single)) and _is_set(spec.get(targets.list)):
            yield self.issue(
                policy.obj,
                join("spec", targets.single),
                f"{policy.obj.kind} sets both spec.{targets.single} and spec.{targets.list}, which the kind does not allow;"
                f" move the reference into spec.{targets.list} (the form GEP-713 recommends) and delete"
                f" spec.{targets.single}",
                related=[Related(f"spec.{targets.list} is set here", object=policy.obj, path=join("spec", targets.list))],
            )


class TooManyTargetRefs(PerPolicy):
    """A policy's target list has more entries than its kind allows (16 for the upstream types)."""

    id = "PL103"
    name = "too-many-targetrefs"
    severity = Severity.ERROR
    subjects = frozenset({POLICY})

    def check_unit(self, project: Project, policy: Policy) -> Iterable[Issue]:
        targets = policy.profile.targets
        spec = _spec(policy)
        if spec is None or not targets.list or not targets.max_items:
            return
        value = spec.get(targets.list)
        if isinstance(value, list) and len(value) > targets.max_items:
            yield self.issue(
                policy.obj,
                join("spec", targets.list, targets.max_items),  # the first entry past the limit
                f"spec.{targets.list} has {len(value)} entries but {policy.obj.kind} allows at most"
                f" {targets.max_items} (maxItems), so the API server rejects it; split it into several policies",
            )


class DuplicateTargetRef(PerPolicy):
    """Two entries of a policy's target list name the same object and section."""

    id = "PL104"
    name = "duplicate-targetref"
    severity = Severity.ERROR  # a warning for kinds whose CRD does not reject duplicates
    subjects = frozenset({POLICY})
    fixable = "safe"

    def check_unit(self, project: Project, policy: Policy) -> Iterable[Issue]:
        targets = policy.profile.targets
        if not targets.list:
            return
        prefix = join("spec", targets.list) + "["
        seen: dict[tuple[Any, ...], Any] = {}
        for ref in policy.refs:
            if not ref.path.startswith(prefix) or not ref.kind or not ref.name:
                continue
            # A missing namespace means the policy's own (GEP-713 NamespacedPolicyTargetReference).
            key = (ref.group, ref.kind, ref.namespace or policy.obj.namespace, ref.name, ref.section_name)
            first = seen.setdefault(key, ref)
            if first is ref:
                continue
            if targets.unique:
                consequence = "the API server rejects the policy (targets must be unique)"
                severity = None
            else:
                consequence = "the repeated entry has no effect"
                severity = Severity.WARNING
            yield self.issue(
                policy.obj,
                ref.path,
                f"{ref.path} repeats {first.path} ({ref.display()}): {consequence}; remove it",
                related=[Related("first entry for the same target", object=policy.obj, path=first.path)],
                severity=severity,
                fix=Fix(f"delete the repeated entry {ref.path}", (Edit(ref.path, delete=True),)),
            )


class PolicySpecMissing(PerPolicy):
    """A policy object has no `spec`, or its `spec` is not a mapping."""

    id = "PL105"
    name = "policy-spec-missing"
    severity = Severity.ERROR
    subjects = frozenset({POLICY})

    def check_unit(self, project: Project, policy: Policy) -> Iterable[Issue]:
        data = policy.obj.data
        if "spec" not in data:
            if not policy.profile.targets.required:
                # A kind that may target nothing reads a missing spec as an empty one (Istio's
                # AuthorizationPolicy without spec is its "allow-nothing" policy).
                return
            yield self.issue(
                policy.obj,
                "",
                f"{policy.obj.kind} has no spec, so it targets nothing and configures nothing; add a spec"
                f" with {_field_list(policy.profile.targets.fields)}",
            )
        elif not isinstance(data["spec"], dict):
            what = "empty" if data["spec"] is None else f"{_type_name(data['spec'])}, not a mapping"
            yield self.issue(
                policy.obj,
                "spec",
                f"spec of {policy.obj.kind} is {what}; it must be a mapping with {_field_list(policy.profile.targets.fields)}",
            )


class PolicyWithoutDefaultOrOverride(PerPolicy):
    """A policy in the original policy-attachment style has neither `spec.default` nor `spec.override`."""

    id = "PL106"
    name = "policy-without-default-or-override"
    severity = Severity.ERROR
    subjects = frozenset({POLICY})

    def check_unit(self, project: Project, policy: Policy) -> Iterable[Issue]:
        profile = policy.profile
        spec = _spec(policy)
        blocks = [f for f in (profile.merge.defaults, profile.merge.overrides) if f]
        if spec is None or profile.boilerplate != POLICY_ATTACHMENT or not blocks:
            return
        # An empty block configures nothing: it does not satisfy "at least one MUST be present".
        if any(spec.get(f) not in (None, {}, []) for f in blocks):
            return
        stray = [k for k in spec if k not in (*profile.targets.fields, *blocks, *profile.merge.non_proper_fields)]
        hint = f"; the top-level {', '.join(map(str, stray))} is not read: move it under spec.{blocks[0]}" if stray else ""
        empty = [f"spec.{b}" for b in blocks if spec.get(b) is not None]
        note = f" ({' and '.join(empty)} {'is' if len(empty) == 1 else 'are'} empty)" if empty else ""
        yield self.issue(
            policy.obj,
            "spec",
            (
                f"{policy.obj.kind} sets neither {' nor '.join(f'spec.{b}' for b in blocks)}{note}: the"
                f" policy-attachment boilerplate requires at least one of them{hint}"
                if len(blocks) > 1
                else f"{policy.obj.kind} sets no spec.{blocks[0]}{note}: the policy-attachment boilerplate requires"
                f" it, and the policy configures nothing{hint}"
            ),
        )


class MultipleMergeStrategies(PerPolicy):
    """A GEP-713 style policy declares more than one merge strategy (defaults, overrides, implicit defaults)."""

    id = "PL107"
    name = "multiple-merge-strategies"
    severity = Severity.ERROR
    subjects = frozenset({POLICY})

    def check_unit(self, project: Project, policy: Policy) -> Iterable[Issue]:
        profile = policy.profile
        merge = profile.merge
        spec = _spec(policy)
        # The policy-attachment style legitimately carries default and override together
        # (docs/semantics.md#two-boilerplate-styles).
        if spec is None or profile.boilerplate == POLICY_ATTACHMENT:
            return
        declared: list[tuple[str, str]] = []  # (description, path)
        if merge.implicit_defaults:
            skip = {*profile.targets.fields, merge.defaults, merge.overrides, merge.strategy_field, *merge.non_proper_fields}
            proper = [k for k in spec if k not in skip and spec[k] is not None]
            if proper:
                declared.append((f"implicit defaults (top-level {', '.join(map(str, proper))})", join("spec", str(proper[0]))))
        for block in (merge.defaults, merge.overrides):
            if block and spec.get(block) is not None:
                declared.append((f"spec.{block}", join("spec", block)))
        if len(declared) < 2:
            return
        # Report at the last explicit block: the one to remove or fold into the other.
        _, path = declared[-1]
        names = [d for d, _ in declared]
        listed = " and ".join(names) if len(names) == 2 else ", ".join(names[:-1]) + " and " + names[-1]
        yield self.issue(
            policy.obj,
            path,
            f"{policy.obj.kind} declares {len(declared)} merge strategies, {listed}; GEP-713: an instance MUST NOT"
            " declare more than one. Keep one: split it into separate policies, one strategy each",
            related=[Related(f"{d} declared here", object=policy.obj, path=p) for d, p in declared[:-1]],
        )


class UnknownMergeStrategy(PerPolicy):
    """A policy's `strategy` value is not one of the strategies its kind supports."""

    id = "PL108"
    name = "unknown-merge-strategy"
    severity = Severity.ERROR
    subjects = frozenset({POLICY})

    def check_unit(self, project: Project, policy: Policy) -> Iterable[Issue]:
        merge = policy.profile.merge
        spec = _spec(policy)
        if spec is None or not merge.strategy_field or not merge.strategies:
            return
        field = merge.strategy_field
        places: list[tuple[str, Any]] = []
        if field in spec:
            places.append((join("spec", field), spec[field]))
        for block in (merge.defaults, merge.overrides):
            inner = spec.get(block) if block else None
            if block and isinstance(inner, dict) and field in inner:
                places.append((join("spec", block, field), inner[field]))
        allowed = list(merge.strategies)
        for path, value in places:
            # A mapping or list here is unhashable: compare only strings against the known names.
            if value is None or (isinstance(value, str) and value in merge.strategies):
                continue
            near = next((s for s in allowed if isinstance(value, str) and s.lower() == value.strip().lower()), None)
            fix = f"write {near!r} (values are case-sensitive)" if near else f"use one of {', '.join(allowed)}"
            yield self.issue(
                policy.obj,
                path,
                f"{field} {short_repr(value)} is not a merge strategy of {_described(policy.profile)}: {fix}",
            )


class PolicyCrdNaming(Rule):
    """A policy CRD's kind does not end in `Policy`, or its plural does not end in `policies`."""

    id = "PL109"
    name = "policy-crd-naming"
    severity = Severity.WARNING
    subjects = frozenset({"CustomResourceDefinition"})

    def check(self, project: Project) -> Iterable[Issue]:
        for crd in editable_crds(project):
            shape = crd_shape(crd)
            if not is_policy_crd(crd, shape) or not shape.kind:
                continue
            why = f"labelled {POLICY_LABEL}" if POLICY_LABEL in crd.labels else "a policy kind"
            if not shape.kind.endswith("Policy"):
                yield self.issue(
                    crd,
                    "spec.names.kind",
                    f"kind {shape.kind} is {why} but does not end in Policy; GEP-2648: policy kinds SHOULD use the"
                    f" Policy suffix (e.g. {shape.kind}Policy) so users recognise them",
                )
            if shape.plural is not None and not shape.plural.endswith("policies"):
                suggestion = shape.kind.lower()[:-1] + "ies" if shape.kind.endswith("Policy") else None
                hint = f" (e.g. {suggestion})" if suggestion else ""
                yield self.issue(
                    crd,
                    "spec.names.plural",
                    f"plural {shape.plural!r} of policy kind {shape.kind} does not end in 'policies'; GEP-2648: the"
                    f" resource name SHOULD end in policies{hint}",
                )


class StatusInManifest(PerPolicy):
    """A policy manifest carries a `status` stanza, which only controllers write."""

    id = "PL110"
    name = "status-in-manifest"
    severity = Severity.INFO
    subjects = frozenset({POLICY})
    fixable = "safe"

    def check_unit(self, project: Project, policy: Policy) -> Iterable[Issue]:
        status = policy.obj.data.get("status")
        # `status: {}` (kubectl --dry-run -o yaml) is harmless; anything else was copied from a cluster.
        if status in (None, {}, []):
            return
        yield self.issue(
            policy.obj,
            "status",
            f'{policy.obj.kind} has a status stanza: status is written by the controller (GEP-713 "Metaresource status")'
            " and ignored on apply, so the committed one is stale and misleads readers; delete it",
            fix=Fix("delete the status stanza", (Edit("status", delete=True),)),
        )


class PolicyKindInferred(Rule):
    """A policy kind is known only by its shape (`*Policy` with target fields): no profile, no CRD."""

    id = "PL111"
    name = "policy-kind-inferred"
    severity = Severity.INFO
    subjects = frozenset({POLICY})

    def check(self, project: Project) -> Iterable[Issue]:
        # Once per kind, at its first object by name (index order, then input order for duplicates):
        # the assumption concerns the kind, and where it is reported must not depend on the order
        # of files and documents (CONTRIBUTING.md "Reliability": the same input gives the same answer).
        by_kind: dict[tuple[str, str], list[Policy]] = {}
        for policy in project.resolution.policies():
            if policy.profile.origin == ORIGIN_INFERRED:
                by_kind.setdefault(policy.profile.gk, []).append(policy)
        for (group, kind), policies in by_kind.items():
            first = policies[0]
            every = f" (all {len(policies)} {kind} objects)" if len(policies) > 1 else ""
            yield self.issue(
                first.obj,
                "kind",
                f"{kind} ({group or 'core'}) has no profile and no CRD in the input, so policylint guessed from its"
                f" shape: it is treated as a Direct policy with merge strategy None{every}; pass its CRD with --crd or"
                " describe it with --profile",
            )


RULES: list[type[Rule]] = [
    PolicyWithoutTarget,
    TargetRefAndTargetRefsBothSet,
    TooManyTargetRefs,
    DuplicateTargetRef,
    PolicySpecMissing,
    PolicyWithoutDefaultOrOverride,
    MultipleMergeStrategies,
    UnknownMergeStrategy,
    PolicyCrdNaming,
    StatusInManifest,
    PolicyKindInferred,
]
