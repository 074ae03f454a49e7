"""PL3xx: `sectionName` in policy target references (GEP-2648 "Section Names", GEP-713).

"If a `sectionName` is specified, but does not exist on the targeted object, the
Policy must fail to attach" (GEP-2648). What a sectionName selects comes from
`policylint/k8s/kinds.yaml` (listener, route rule, Service port); which policy kinds have
the field comes from their profile. Sections are resolved once, by
`Project.resolve_target`, which the JSON report shares.
"""

from __future__ import annotations

from collections.abc import Iterable

from policylint.findings import Edit, Fix, Issue, Related, Severity
from policylint.input.positions import join
from policylint.k8s.index import Section
from policylint.k8s.names import did_you_mean
from policylint.k8s.objects import K8sObject
from policylint.profiles.policy import Policy, TargetRef
from policylint.project import Project
from policylint.rules.base import POLICY, PolicyRule, Rule
from policylint.rules.hints import hints_suffix
from policylint.rules.targetref import object_label, policy_resolutions, ref_resolutions
from policylint.vocabulary import Resolved

# Why a duplicate section name is a problem, per section type (docs/semantics.md#section-names).
_UNIQUENESS = {
    "listener": "listener names must be unique within a Gateway or ListenerSet (their CRDs reject duplicates)",
    "rule": "route rule names MUST be unique, though only the experimental-channel CRDs enforce it",
    "port": "Service port names must be unique (the API server rejects duplicates)",
}


def _sections_related(target: K8sObject, project: Project, noun: str) -> Related:
    spec = project.index.kinds.sections(target.group, target.kind)
    path = spec.path if spec is not None else "spec"
    return Related(f"{target.kind} {target.name} defines its {noun}s here", object=target, path=path)


class SectionNotFound(PolicyRule):
    """A targetRef `sectionName` names a listener, rule or port that the target does not have."""

    id = "PL301"
    name = "section-not-found"
    severity = Severity.ERROR
    subjects = frozenset({POLICY})
    # Unsafe: the policy starts applying to the section the fix names.
    fixable = "unsafe"

    def check_policy(self, project: Project, policy: Policy) -> Iterable[Issue]:
        for _, ref, res in policy_resolutions(project, policy):
            # SyntheticRuleName (an unnamed rule hit by `rule-<n>`) is PL304's; never both.
            if res.detail != Resolved.SECTION_NOT_FOUND or res.target is None or ref.section_name is None:
                continue
            target = res.target
            spec = project.index.kinds.sections(target.group, target.kind)
            noun = spec.type if spec is not None else "section"
            hints: list[str] = []
            related = [_sections_related(target, project, noun)]
            names = [s.name for s in project.index.sections(target) if s.name is not None]
            close = did_you_mean(ref.section_name, names)
            if close:
                hints.append(f"did you mean {close[0]}?")
            # The section may live on a sibling object with the same kind of sections (a ListenerSet's
            # listener while the ref names its Gateway; Gateway targets see only the Gateway's own).
            for other, section in project.derived(_SectionsByName).named(target.namespace, noun, ref.section_name):
                if other is target:
                    continue
                hints.append(f"{noun} {ref.section_name} is defined on {object_label(other, policy)}; target that object instead")
                related.append(
                    Related(f"{noun} {ref.section_name} is defined here", object=other, path=join(section.path, "name"))
                )
                break
            message = res.message + hints_suffix(hints)
            path = join(ref.path, "sectionName")
            fix = Fix(f"use sectionName {close[0]}", (Edit(path, value=close[0]),), safe=False) if len(close) == 1 else None
            yield self.issue(policy.obj, path, message, related=related, fix=fix)


class SectionOnKindWithoutSections(Rule):
    """A targetRef sets `sectionName` on a kind that has no named sections (GatewayClass, ReferenceGrant, ...)."""

    id = "PL302"
    name = "section-on-kind-without-sections"
    severity = Severity.ERROR
    subjects = frozenset({POLICY})

    def check(self, project: Project) -> Iterable[Issue]:
        for policy, ref, res in ref_resolutions(project):
            if ref.section_name is None or ref.kind is None or not policy.profile.targets.section_name:
                continue  # no sectionName, a malformed ref, or a field the reference type lacks (PL205)
            # Also when the target is missing (PL201 reports that): the kind alone decides.
            missing_but_known = res.detail == Resolved.OBJECT_NOT_FOUND and project.index.kind_has_no_sections(
                ref.group or "", ref.kind
            )
            if res.detail != Resolved.SECTION_NOT_SUPPORTED and not missing_but_known:
                continue
            message = (
                f"{ref.kind} has no named sections, so sectionName {ref.section_name} can never match and the policy"
                " does not attach (GEP-2648); sectionName selects a listener of a Gateway or ListenerSet, a rule of a"
                f" route or a port of a Service: remove it to target the whole {ref.kind}"
            )
            related = []
            if res.target is not None:
                related.append(Related(f"{ref.kind} {ref.name} is defined here", object=res.target, path="metadata.name"))
            yield self.issue(policy.obj, join(ref.path, "sectionName"), message, related=related)


class DuplicateSectionNames(Rule):
    """An object that policies target by sectionName defines the same section name twice."""

    id = "PL303"
    name = "duplicate-section-names"
    severity = Severity.ERROR

    def check(self, project: Project) -> Iterable[Issue]:
        # Targets addressed by sectionName, each with the refs that address it (insertion order is stable).
        targeted: dict[K8sObject, tuple[K8sObject, list[tuple[Policy, TargetRef]]]] = {}
        for policy, ref, res in ref_resolutions(project):
            if res.target is None or ref.section_name is None or not policy.profile.targets.section_name:
                continue
            if res.detail not in (Resolved.RESOLVED, Resolved.SECTION_NOT_FOUND, Resolved.SYNTHETIC_RULE_NAME):
                continue
            targeted.setdefault(res.target, (res.target, []))[1].append((policy, ref))
        for target, refs in targeted.values():
            spec = project.index.kinds.sections(target.group, target.kind)
            if spec is None:
                continue
            first: dict[str, Section] = {}
            for section in project.index.sections(target):
                if section.name is None:
                    continue
                if section.name not in first:
                    first[section.name] = section
                    continue
                yield self._issue(target, spec.type, section, first[section.name], refs)

    def _issue(
        self, target: K8sObject, noun: str, dup: Section, original: Section, refs: list[tuple[Policy, TargetRef]]
    ) -> Issue:
        hitting = [(p, r) for p, r in refs if r.section_name == dup.name]
        by = hitting or refs
        who = ", ".join(dict.fromkeys(str(p.key) for p, _ in by))
        if hitting:
            effect = f"sectionName {dup.name} from {who} is ambiguous"
        else:
            effect = f"{who} target{'s' if len(by) == 1 else ''} its {noun}s by sectionName, which needs unique names (GEP-713)"
        why = _UNIQUENESS.get(noun, "section names must be unique")
        message = (
            f"{noun} name {dup.name} is defined again on {target.kind} {target.name} ({dup.path}; first at"
            f" {original.path}): {effect}; {why}"
        )
        related = [Related(f"first {noun} named {dup.name}", object=target, path=join(original.path, "name"))]
        related.extend(Related(f"targeted by {p.key}", object=p.obj, path=join(r.path, "sectionName")) for p, r in by[:3])
        return self.issue(target, join(dup.path, "name"), message, related=related)


class UnnamedRuleTargetedBySyntheticName(Rule):
    """A sectionName `rule-<n>` points at an unnamed route rule: only policy-machinery/Kuadrant synthesize such names."""

    id = "PL304"
    name = "unnamed-rule-targeted-by-synthetic-name"
    severity = Severity.ERROR
    subjects = frozenset({POLICY})

    def check(self, project: Project) -> Iterable[Issue]:
        for policy, ref, res in ref_resolutions(project):
            if res.detail != Resolved.SYNTHETIC_RULE_NAME or res.target is None or res.section is None:
                continue
            target = res.target
            n = res.section.position + 1
            if policy.profile.targets.synthetic_rule_names:
                # kuadrant-operator PR #1879: since policy-machinery v0.8 real names take precedence
                # (docs/semantics.md#unnamed-route-rules).
                message = (
                    f"rule #{n} of {target.kind} {target.name} is unnamed; policy-machinery/Kuadrant synthesize"
                    f" `{ref.section_name}`, the Gateway API spec does not: name the rule"
                )
            else:
                message = (
                    f"rule #{n} of {target.kind} {target.name} is unnamed; `{ref.section_name}` is a synthetic name that"
                    f" only policy-machinery-based controllers derive, the Gateway API spec and {policy.profile.kind} do not:"
                    " name the rule"
                )
            severity = None
            if project.index.options.synthetic_rule_names:
                severity = Severity.WARNING
                message += " (a warning: synthetic rule names are enabled for this run)"
            related = [Related(f"rule #{n} has no name", object=target, path=res.section.path)]
            yield self.issue(policy.obj, join(ref.path, "sectionName"), message, related=related, severity=severity)


class _SectionsByName:
    """(namespace, section type, name) -> the objects defining such a section (PL301's hint that
    a sibling defines it), worked out per namespace and type when first asked: a policy naming a
    missing section asks about its target's namespace, and listing the sections of every object of
    the project for it was a twentieth of an editor's rules stage at 10,000 objects. The objects
    are sorted by namespace and type once: scanning all of them for each namespace asked about was
    quadratic in the namespaces (a tenth of a cold run on a repository of 200 tenants with typos)."""

    def __init__(self, project: Project) -> None:
        self._project = project
        self._by_place: dict[tuple[str | None, str], dict[str, list[tuple[K8sObject, Section]]]] = {}
        self._objects: dict[tuple[str | None, str], list[K8sObject]] | None = None

    def named(self, namespace: str | None, noun: str, name: str) -> list[tuple[K8sObject, Section]]:
        """The objects of `namespace` with a section of type `noun` named `name`, in index order."""
        found = self._by_place.get((namespace, noun))
        if found is None:
            found = self._by_place[(namespace, noun)] = {}
            index = self._project.index
            for obj in self._placed().get((namespace, noun), ()):
                for section in index.sections(obj):
                    if section.name is not None:
                        found.setdefault(section.name, []).append((obj, section))
        return found.get(name, [])

    def _placed(self) -> dict[tuple[str | None, str], list[K8sObject]]:
        """(namespace, section type) -> the objects of a kind with such sections, in index order."""
        if self._objects is None:
            index = self._project.index
            types: dict[tuple[str, str], str | None] = {}
            placed: dict[tuple[str | None, str], list[K8sObject]] = {}
            for obj in index.objects:
                gk = (obj.group, obj.kind)
                if gk in types:
                    noun = types[gk]
                else:
                    spec = index.kinds.sections(obj.group, obj.kind)
                    noun = types[gk] = None if spec is None else spec.type
                if noun is not None:
                    placed.setdefault((obj.namespace, noun), []).append(obj)
            self._objects = placed
        return self._objects


RULES: list[type[Rule]] = [
    SectionNotFound,
    SectionOnKindWithoutSections,
    DuplicateSectionNames,
    UnnamedRuleTargetedBySyntheticName,
]
