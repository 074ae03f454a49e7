"""Reference resolution: what each policy's target references and selectors name.

The first semantic stage (policylint.stages), built from the index. For each reference it
answers as the API server and a controller would, in this order (docs/semantics.md#target-references):
schema validation (InvalidRef), the profile's allowed kinds (KindNotAllowed), namespace defaulting,
the ReferenceGrant handshake for a cross-namespace reference (checked before existence, so status
never reveals whether an un-granted target exists), existence (or `--external`, or a virtual kind),
then the sectionName. Each answer is a `TargetResolution` with a typed status and detail
(policylint.vocabulary) that rules, explain and the reports read instead of re-deriving it.

Everything is computed lazily, once per policy and reference.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from policylint.input.positions import join
from policylint.k8s.fieldtypes import GATEWAY_GROUP
from policylint.k8s.index import CRD_GK, UNKNOWN_POSITION, ProjectIndex, Section
from policylint.k8s.names import group_kind
from policylint.k8s.objects import CLUSTER_NAMESPACES, K8sObject, ObjectKey
from policylint.k8s.selectors import LabelSelector
from policylint.profiles.implementations import Implementation, implementation_name
from policylint.profiles.policy import (
    Policy,
    TargetRef,
    TargetSelector,
    build_policy,
    core_group_alias,
    parse_target_selector,
    policy_namespace,
    ref_problems,
)
from policylint.profiles.registry import PolicyProfile, ProfileRegistry, TargetKind, inferred_profile, looks_like_policy
from policylint.semantics.grants import GRANT_GK, GrantCheck, Reference, ReferenceGrants, grant_meaning
from policylint.semantics.producers import Producers
from policylint.values import frozen
from policylint.vocabulary import Accepted, NamespaceMatch, Resolved

if TYPE_CHECKING:
    from policylint.k8s.objects import SectionSpec
    from policylint.semantics.keptresolution import KeptResolution, Read

# Set by the API server on every Namespace (Kubernetes 1.22+), so selectors can match it.
NAMESPACE_NAME_LABEL = "kubernetes.io/metadata.name"


@frozen
class TargetResolution:
    ref: TargetRef
    status: Accepted
    detail: Resolved  # which step decided
    target: K8sObject | None = None
    section: Section | None = None
    message: str = ""
    namespace: str | None = None  # the namespace the target was looked up in
    grant: GrantCheck | None = None  # for a cross-namespace reference: the ReferenceGrant check
    selector: int | None = None  # index of the label selector that matched, for selector targets

    @property
    def accepted(self) -> bool:
        return self.status == Accepted.ACCEPTED


@frozen
class UndecidedMatch:
    """An object a target selector's labels match in a namespace whose `namespaces.selector`
    match is unknown (`NamespaceMatch.UNKNOWN`): it may or may not be a target, so it is none,
    and no finding rests on it (PL420 says so)."""

    selector: int  # index of the target selector
    target: K8sObject
    namespace: str


def synthetic_rule(sections: Sequence[Section], section_name: str) -> Section | None:
    """`rule-<n>` (1-based) naming an unnamed rule, as policy-machinery v0.8 does
    (docs/semantics.md#unnamed-route-rules)."""
    if not section_name.startswith("rule-") or not section_name[5:].isdigit():
        return None
    n = int(section_name[5:])
    if 1 <= n <= len(sections) and sections[n - 1].name is None:
        return sections[n - 1]
    return None


SECTION_NOUNS = {"listener": "listener", "rule": "rule", "port": "port"}


def section_not_found_message(section_type: str, section_name: str, target: K8sObject, sections: Sequence[Section]) -> str:
    """`listener ftp not found on Gateway gw; have: http, https` (the wording of acceptance
    scenario S12, docs/semantics.md#acceptance-scenarios)."""
    noun = SECTION_NOUNS.get(section_type, "section")
    names = [s.name for s in sections if s.name is not None]
    unnamed = [s.position + 1 for s in sections if s.name is None]
    have = ", ".join(dict.fromkeys(names)) if names else f"no named {noun}s"
    if unnamed:
        have += f" ({noun} #{', #'.join(str(n) for n in unnamed)} unnamed)"
    return f"{noun} {section_name} not found on {target.kind} {target.name}; have: {have}"


@frozen
class _Place:
    """Where a reference's target is looked up."""

    group: str
    namespace: str | None  # None: a cluster-scoped kind
    ref_namespace: str | None  # the namespace the reference names, if its type has the field
    section_name: str | None  # the sectionName, if its type has the field


class Resolution:
    """The policies of the project and what their references resolve to."""

    def __init__(self, index: ProjectIndex, profiles: ProfileRegistry) -> None:
        self.index = index
        self.profiles = profiles
        self._policies: list[Policy] | None = None
        self._adopted: Mapping[K8sObject, Policy] = {}
        self._profiles_seen: dict[tuple[str, str], tuple[PolicyProfile, PolicyProfile, bool]] = {}
        self._resolved: dict[tuple[K8sObject, str], TargetResolution] = {}
        self._selected: dict[K8sObject, list[TargetResolution]] = {}
        self._targets: dict[K8sObject, list[TargetResolution]] = {}  # policy object -> `targets`
        self._undecided: dict[K8sObject, list[UndecidedMatch]] = {}
        self._grants: ReferenceGrants | None = None
        self._builtin: dict[str, str] | None = None
        self._class_implementations: list[Implementation | None] | None = None
        self._producers: Producers | None = None
        # What the last run of a long-lived process resolved (policylint.semantics.keptresolution),
        # and what working out one resolution reads while it is recorded (`recorded`).
        self._kept: KeptResolution | None = None
        self._reads: list[Read] | None = None

    def producers(self) -> Producers:
        """The objects the input makes in the cluster through its producers (profile `producers`)."""
        if self._producers is None:
            self._producers = Producers(self.index, self.profiles.producers)
        return self._producers

    def class_implementations(self) -> list[Implementation | None]:
        """The implementation of each GatewayClass in the input, by its controllerName; None for
        one policylint does not know (worked out once: the topology asks per delegating route)."""
        if self._class_implementations is None:
            out: list[Implementation | None] = []
            for gateway_class in self.index.of_kind(GATEWAY_GROUP, "GatewayClass"):
                controller = gateway_class.spec.get("controllerName")
                out.append(self.profiles.implementation_of(controller) if isinstance(controller, str) and controller else None)
            self._class_implementations = out
        return self._class_implementations

    def builtin_classes(self) -> dict[str, str]:
        """Class name -> controllerName, for the classes an implementation serves without a
        GatewayClass object in the input (profile `implementations[].builtinGatewayClasses`): of
        the implementations the platform installs (`installed`), of those declared or inferred
        from CRDs (`Cluster.implementations`), and of those the input shows to be running, by a
        GatewayClass of theirs or an object of one of their API groups (`evidenceGroups`: Istio's
        AuthorizationPolicy). Decided once, for the policies' targets
        and for the Gateways' classes alike."""
        if self._builtin is None:
            running = {i.name for i in self.class_implementations() if i is not None}
            # Declared (`implementations`, `--implementation`) or inferred from the CRDs of the input
            # (policylint.k8s.cluster), by the name the declaration writes (`istio`).
            declared = {k.value.partition("@")[0] for k in self.index.cluster().implementations if k.value}
            groups = self.index.input_groups()
            self._builtin = {
                name: controller
                for implementation in self.profiles.implementations
                if implementation.name in running
                or implementation_name(implementation.name) in declared
                or implementation.classes_installed
                or not groups.isdisjoint(implementation.evidence_groups)
                for name, controller in implementation.builtin_classes
            }
        return self._builtin

    def grants(self) -> ReferenceGrants:
        if self._grants is None:
            self._grants = ReferenceGrants(
                self.index.of_kind(*GRANT_GK), self.index.options.external, malformed=self.index.malformed
            )
        return self._grants

    def namespace_labels(self, namespace: str) -> tuple[dict[str, str], bool]:
        """Labels of a namespace and whether they are known: a Namespace object in the input, or
        `--complete` (the input is the whole cluster, so a Namespace it lacks carries no label
        but the name label the API server sets)."""
        obj = self.index.lookup("", "Namespace", None, namespace)
        self._note("namespace", namespace, obj)
        labels = {NAMESPACE_NAME_LABEL: namespace}
        if obj is None:
            return labels, self.index.options.complete
        labels.update(obj.labels)
        return labels, True

    def namespace_selected(self, selector: LabelSelector, namespace: str) -> NamespaceMatch:
        """Whether the namespace's labels match `selector`; UNKNOWN when the Namespace is not in
        the input and its name label alone does not decide."""
        labels, known = self.namespace_labels(namespace)
        if selector.matches(labels):
            return NamespaceMatch.MATCHES
        if known or any(r.key == NAMESPACE_NAME_LABEL for r in selector.failing(labels)):
            # The name label is set on every Namespace by the API server: a requirement on it that
            # fails is a certain mismatch, whatever the other (unknown) labels are.
            return NamespaceMatch.NO_MATCH
        # The Namespace object is not in the input: its labels are unknown, so the controller may
        # or may not find a match. Neither answer may carry a finding.
        return NamespaceMatch.UNKNOWN

    def policies(self) -> list[Policy]:
        if self._policies is None:
            self._policies = self._build_policies()
        return self._policies

    def adopt_policies(self, kept: Mapping[K8sObject, Policy], resolutions: KeptResolution | None = None) -> None:
        """Take the policies an earlier run of this process built of the same object instances
        (`built_policies`; the objects of unchanged files are kept, policylint.incremental.resident)
        instead of building them again, where the kind's profile is the same: a policy is a
        function of its object and its profile. Policies are compared by identity downstream,
        so what is kept of them between runs (their facets and folds,
        policylint.semantics.effective.folds) serves only a run that has the same instances.
        `resolutions`: what the last run resolved of those policies' target references, taken
        where what it read answers the same, and where this run's resolutions are kept
        (policylint.semantics.keptresolution)."""
        self._adopted = kept
        self._kept = resolutions

    def _same_profile(self, kept: PolicyProfile, profile: PolicyProfile) -> bool:
        """Whether a kept policy's profile is this run's: the same object (the shipped profiles are
        read once per process), or equal (an inferred or CRD-derived profile is made again per run;
        compared once per kind, not once per policy)."""
        if kept is profile:
            return True
        seen = self._profiles_seen.get(profile.gk)
        if seen is None or seen[0] is not kept or seen[1] is not profile:
            seen = self._profiles_seen[profile.gk] = (kept, profile, kept == profile)
        return seen[2]

    def built_policies(self) -> dict[K8sObject, Policy]:
        """The policies this resolution built, by object (none if it built none)."""
        return {p.obj: p for p in self._policies} if self._policies is not None else {}

    def policy_objects(self) -> list[K8sObject]:
        """The objects `policies` holds, without building them (a report's count of the policies
        read, when only part of them was analysed: policylint.semantics.components)."""
        if self._policies is not None:
            return [p.obj for p in self._policies]
        # Kind by kind (the index holds each kind's objects together, in its order): a kind with a
        # profile is all policies, one without is asked of each object only where its name may be a
        # policy's. The text report's count reads every object of the repository in a scoped run.
        out: list[K8sObject] = []
        for group, kind in self.index.kinds_in_input():
            if (group, kind) == CRD_GK:
                continue
            objects = self.index.of_kind(group, kind)
            if self.profiles.get(group, kind) is not None:
                out.extend(objects)
            elif kind.endswith("Policy"):
                out.extend(o for o in objects if self.profile_for(o) is not None)
        return out

    def policy_count(self) -> int:
        """How many objects `policies` holds (`len(policy_objects())`), counted kind by kind: a
        scoped run builds no object outside its part for it (policylint.k8s.roster) but those of
        a kind without a profile whose name may be a policy's, which their shape decides."""
        if self._policies is not None:
            return len(self._policies)
        count = 0
        for (group, kind), n in self.index.kind_counts().items():
            if (group, kind) == CRD_GK:
                continue
            if self.profiles.get(group, kind) is not None:
                count += n
            elif kind.endswith("Policy"):
                count += sum(1 for o in self.index.of_kind(group, kind) if self.profile_for(o) is not None)
        return count

    def profile_for(self, obj: K8sObject) -> PolicyProfile | None:
        profile = self.profiles.get(obj.group, obj.kind)
        # The kind first: an object outside a scoped run's part is not read for its spec
        # (policylint.k8s.lazy) unless its kind may be a policy's.
        if profile is None and obj.kind.endswith("Policy") and looks_like_policy(obj.kind, obj.data.get("spec")):
            profile = inferred_profile(obj.group, obj.kind, obj.spec)
            self.profiles.add(profile)
        return profile

    def _build_policies(self) -> list[Policy]:
        out: list[Policy] = []
        for obj in self.index.objects:
            if (obj.group, obj.kind) == CRD_GK:
                continue
            profile = self.profile_for(obj)
            if profile is None:
                continue
            kept = self._adopted.get(obj)
            out.append(kept if kept is not None and self._same_profile(kept.profile, profile) else build_policy(obj, profile))
        return out

    def resolve_target(self, policy: Policy, ref: TargetRef) -> TargetResolution:
        # Several rules and the JSON report ask for the same resolution: compute it once.
        key = (policy.obj, ref.path)
        cached = self._resolved.get(key)
        if cached is None:
            kept = self._kept
            cached = self._resolved[key] = self._resolve(policy, ref) if kept is None else kept.resolve(self, policy, ref)
        return cached

    def adopt(self, policy: Policy, ref: TargetRef, resolution: TargetResolution) -> None:
        """Take `resolution` as `resolve_target`'s answer for the reference, unless one is made:
        another process of the run worked it out from the same index (policylint.semantics.portable)."""
        self._resolved.setdefault((policy.obj, ref.path), resolution)

    def recorded(self, policy: Policy, ref: TargetRef) -> tuple[TargetResolution, tuple[Read, ...]]:
        """The resolution of `ref` with what working it out read beyond the policy and the run's
        context (policylint.semantics.keptresolution lists the reads)."""
        # One resolution at a time: a read made while working out another would be kept for neither.
        assert self._reads is None
        reads: list[Read] = []
        self._reads = reads
        try:
            value = self._resolve(policy, ref)
        finally:
            self._reads = None
        return value, tuple(reads)

    def _note(self, *read: object) -> None:
        """Record one read (its kind, what was asked, the answer) while reads are recorded."""
        if self._reads is not None:
            self._reads.append(read)

    def _lookup(self, group: str, kind: str, namespace: str | None, name: str) -> K8sObject | None:
        key = ObjectKey(group, kind, namespace, name)
        found = self.index.get(key)
        self._note("lookup", key, found)
        return found

    def _cluster_scoped(self, group: str, kind: str) -> bool:
        scoped = self.index.kinds.is_cluster_scoped(group, kind)
        self._note("scoped", group, kind, scoped)
        return scoped

    def _section_spec(self, group: str, kind: str) -> SectionSpec | None:
        spec = self.index.kinds.sections(group, kind)
        self._note("sections", group, kind, spec)
        return spec

    def _grant(self, reference: Reference) -> GrantCheck:
        check = self.grants().check(reference)
        if self._reads is not None:
            self._reads.append(("grant", reference, grant_meaning(check)))
        return check

    def _resolve(self, policy: Policy, ref: TargetRef) -> TargetResolution:
        """The steps of docs/semantics.md#target-references, in order; the first that decides wins."""
        refused = self._admissible(policy, ref)
        if refused is not None:
            return refused
        place = self._place(policy, ref)
        if isinstance(place, TargetResolution):
            return place
        grant = self._handshake(policy, ref, place)
        if isinstance(grant, TargetResolution):
            return grant
        assert ref.kind is not None and ref.name is not None  # checked by _admissible
        target = self._lookup(place.group, ref.kind, place.namespace, ref.name)
        if target is None:
            return self._missing(policy, ref, place, grant)
        unbound = self._unbound(policy, target)
        if unbound is not None:
            return TargetResolution(
                ref, Accepted.INVALID, Resolved.NOT_BOUND, target=target, namespace=place.namespace, grant=grant, message=unbound
            )
        if place.section_name is None:
            return TargetResolution(
                ref, Accepted.ACCEPTED, Resolved.RESOLVED, target=target, namespace=place.namespace, grant=grant
            )
        return self._section(ref, target, place, grant)

    def _unbound(self, policy: Policy, target: K8sObject) -> str | None:
        """Why a found target takes no policy of this kind: its kind takes one only through a
        component a label binds it to (profile `boundBy`), and neither the target nor its
        Namespace carries that label, or the label opts out. A Namespace not in the input may
        carry it: nothing is said then."""
        bound_by = policy.profile.targets.bound_by
        if bound_by is None or TargetKind(target.group, target.kind) not in bound_by.kinds:
            return None
        label = bound_by.label
        value = target.labels.get(label)
        holder = "it"
        if value is None and target.namespace is not None:
            labels, known = self.namespace_labels(target.namespace)
            if not known:
                return None  # its labels are unknown
            value = labels.get(label)
            holder = "its Namespace"
        if value is None:
            return f"not bound to {bound_by.through}: neither it nor its Namespace carries the label {label}"
        if value == bound_by.opt_out:
            return f"not bound to {bound_by.through}: {holder} opts out ({label}: {value})"
        return None

    def _admissible(self, policy: Policy, ref: TargetRef) -> TargetResolution | None:
        """What the API server (schema) and the profile (target kinds) refuse outright."""
        profile = policy.profile
        problems = ref_problems(ref, profile.targets.ref_required)
        if ref.errors or problems:
            # The API server rejects the whole policy (schema): nothing gets attached.
            reasons = "; ".join([m for _, m in ref.errors] + [p.message for p in problems])
            return TargetResolution(ref, Accepted.INVALID, Resolved.INVALID_REF, message=f"rejected by the API server: {reasons}")
        if ref.group is None or ref.kind is None or ref.name is None:
            # Only where the kind's own reference schema leaves the field out (no problem above).
            extra = [f for f in profile.targets.ref_extra_fields if isinstance(ref.raw, Mapping) and f in ref.raw]
            how = f"by its {', '.join(extra)}" if extra else "by fields policylint does not know"
            return TargetResolution(
                ref,
                Accepted.ACCEPTED,
                Resolved.UNNAMED,
                message=f"names no object: it selects {how}, which policylint does not resolve",
            )
        if not profile.targets.allows(ref.group, ref.kind) and profile.targets.kinds_enforced:
            allowed = ", ".join(str(k) for k in profile.targets.kinds)
            return TargetResolution(
                ref,
                Accepted.INVALID,
                Resolved.KIND_NOT_ALLOWED,
                message=f"{profile.kind} cannot target {group_kind(ref.group, ref.kind)}; allowed: {allowed}",
            )
        return None

    def _place(self, policy: Policy, ref: TargetRef) -> _Place | TargetResolution:
        """Where to look the target up: its group and namespace, with the API defaults applied."""
        profile = policy.profile
        assert ref.group is not None and ref.kind is not None
        # A namespace or sectionName on a reference type that has no such field is pruned by the
        # API server (or the object is rejected under strict field validation): either way the
        # controller never sees it, so resolution ignores it and PL205 reports the field.
        section_name = ref.section_name if profile.targets.section_name else None
        ref_namespace = ref.namespace if profile.targets.namespace else None
        group = core_group_alias(profile, ref.group, ref.kind)
        if self._cluster_scoped(group, ref.kind):
            return _Place(group, None, ref_namespace, section_name)  # cluster-scoped kinds are found by name only
        namespace = ref_namespace or policy_namespace(policy)
        if namespace is None:
            return TargetResolution(
                ref,
                Accepted.TARGET_NOT_FOUND,
                Resolved.NAMESPACE_REQUIRED,
                message=f"a cluster-scoped policy must name the namespace of {ref.kind} {ref.name!r}",
            )
        return _Place(group, namespace, ref_namespace, section_name)

    def _handshake(self, policy: Policy, ref: TargetRef, place: _Place) -> GrantCheck | TargetResolution | None:
        """GEP-713 "Cross namespace references": a handshake in the target namespace, as a
        ReferenceGrant from the policy kind. Checked before existence, like controllers do for
        routes, so status never reveals whether an un-granted target exists (docs/semantics.md#referencegrant)."""
        profile, obj, namespace = policy.profile, policy.obj, place.namespace
        if not (place.ref_namespace and namespace is not None and obj.namespace and namespace != obj.namespace):
            return None
        if profile.targets.same_namespace_only:
            # No handshake can help: the controller refuses the reference itself.
            assert ref.kind is not None and ref.name is not None
            return TargetResolution(
                ref,
                Accepted.INVALID,
                Resolved.REF_NOT_PERMITTED,
                namespace=namespace,
                message=f"{profile.kind} applies only to a target in its own namespace {obj.namespace}, not to"
                f" {ref.kind} {namespace}/{ref.name}",
            )
        if not profile.targets.cross_namespace_grant:
            return None
        assert ref.kind is not None and ref.name is not None
        grant = self._grant(Reference(obj.group, obj.kind, obj.namespace, place.group, ref.kind, namespace, ref.name))
        if grant.permitted:
            return grant
        return TargetResolution(
            ref,
            Accepted.INVALID,
            Resolved.REF_NOT_PERMITTED,
            namespace=namespace,
            grant=grant,
            message=f"no ReferenceGrant in namespace {namespace} permits {profile.kind} from namespace"
            f" {obj.namespace} to target {ref.kind} {ref.name}",
        )

    def _missing(self, policy: Policy, ref: TargetRef, place: _Place, grant: GrantCheck | None) -> TargetResolution:
        """A target not in the input: declared external, a virtual kind, or not found."""
        assert ref.kind is not None and ref.name is not None
        namespace = place.namespace
        if self.index.is_external(place.group, ref.kind, namespace, ref.name):
            return TargetResolution(
                ref,
                Accepted.ACCEPTED,
                Resolved.EXTERNAL,
                namespace=namespace,
                grant=grant,
                message="declared external (--external)",
            )
        controller = None
        if (place.group, ref.kind) == (GATEWAY_GROUP, "GatewayClass"):
            controller = self.builtin_classes().get(ref.name)
            self._note("builtin", ref.name, controller)
        if controller is not None:
            message = f"a class its implementation serves without a GatewayClass object in the input ({controller})"
            return TargetResolution(ref, Accepted.ACCEPTED, Resolved.IMPLIED, namespace=namespace, grant=grant, message=message)
        if place.group == "" and ref.kind == "Namespace":
            if ref.name == policy_namespace(policy):
                message = "the namespace the policy lives in, so it exists"
                return TargetResolution(
                    ref, Accepted.ACCEPTED, Resolved.IMPLIED, namespace=namespace, grant=grant, message=message
                )
            if ref.name in CLUSTER_NAMESPACES:
                message = "a namespace every Kubernetes cluster has"
                return TargetResolution(
                    ref, Accepted.ACCEPTED, Resolved.IMPLIED, namespace=namespace, grant=grant, message=message
                )
        created = policy.profile.targets.created(place.group, ref.kind)
        if created is not None:
            source = created.source
            if self._lookup(source.group, source.kind, namespace, ref.name) is not None:
                message = f"created in the cluster by {created.by} from {source.kind} {namespace}/{ref.name}"
                return TargetResolution(
                    ref, Accepted.ACCEPTED, Resolved.IMPLIED, namespace=namespace, grant=grant, message=message
                )
            where = f"in namespace {namespace}" if namespace is not None else "(cluster-scoped)"
            message = (
                f"{ref.kind} {ref.name!r} not found {where}: {created.by} create one for a {source.kind} of the same"
                " name and namespace, and there is none in the input either"
            )
            return TargetResolution(
                ref, Accepted.TARGET_NOT_FOUND, Resolved.OBJECT_NOT_FOUND, namespace=namespace, message=message
            )
        made = self.producers().made(place.group, ref.kind, namespace, ref.name)
        self._note("made", place.group, ref.kind, namespace, ref.name, made.describe() if made is not None else None)
        if made is not None:
            message = f"not in the input, {made.describe()}"
            return TargetResolution(ref, Accepted.ACCEPTED, Resolved.IMPLIED, namespace=namespace, grant=grant, message=message)
        virtual = policy.profile.targets.virtual_kinds and self.is_virtual_kind(place.group, ref.kind)
        if policy.profile.targets.virtual_kinds:
            self._note("virtual", place.group, ref.kind, virtual)
        if virtual:
            return TargetResolution(
                ref,
                Accepted.ACCEPTED,
                Resolved.VIRTUAL_KIND,
                namespace=namespace,
                message="virtual kind (GEP-713): unresolvable by design",
            )
        where = f"in namespace {namespace}" if namespace is not None else "(cluster-scoped)"
        message = f"{ref.kind} {ref.name!r} not found {where}"
        return TargetResolution(ref, Accepted.TARGET_NOT_FOUND, Resolved.OBJECT_NOT_FOUND, namespace=namespace, message=message)

    def _section(self, ref: TargetRef, target: K8sObject, place: _Place, grant: GrantCheck | None) -> TargetResolution:
        """The sectionName of a reference whose target exists (GEP-2648; docs/semantics.md#section-names)."""
        section_name, namespace = place.section_name, place.namespace
        assert section_name is not None
        # The target is the lookup's answer: with it the same instance and its kind's sections the
        # same, so are its sections and whether any is malformed (functions of the object).
        section_spec = self._section_spec(target.group, target.kind)
        if section_spec is None:
            if self.index.kind_has_no_sections(target.group, target.kind):
                return TargetResolution(
                    ref,
                    Accepted.TARGET_NOT_FOUND,
                    Resolved.SECTION_NOT_SUPPORTED,
                    target=target,
                    namespace=namespace,
                    message=f"{target.kind} has no named sections; sectionName {section_name} cannot match",
                )
            # A kind known only from a CRD (or not at all): its sections are unknown, so claiming
            # TargetNotFound would be a guess. The object exists; the section is unchecked.
            # The section is kept (position unknown), so that policies on different sections of
            # one such object are on different targets, as for the kinds policylint knows.
            return TargetResolution(
                ref,
                Accepted.ACCEPTED,
                Resolved.SECTION_UNCHECKED,
                target=target,
                section=Section(section_name, UNKNOWN_POSITION, "", indexed=False),
                namespace=namespace,
                message=f"policylint does not know the sections of {target.kind}",
            )
        sections = self.index.sections(target)
        named = [s for s in sections if s.name == section_name]
        if named:
            return TargetResolution(
                ref, Accepted.ACCEPTED, Resolved.RESOLVED, target=target, section=named[0], namespace=namespace, grant=grant
            )
        if self.index.sections_malformed(target):
            # The API server rejects the target (PL010 reports the field), and the section this
            # name looks for may be the malformed one: not reported as missing (one finding per
            # cause), and not simulated either, since where it would attach is unknown.
            noun = SECTION_NOUNS.get(section_spec.type, "section")
            return TargetResolution(
                ref,
                Accepted.ACCEPTED,
                Resolved.SECTION_MALFORMED,
                namespace=namespace,
                grant=grant,
                message=f"the {noun}s of {target.kind} {target.name} are malformed (PL010); sectionName {section_name} is not checked",
            )
        # policy-machinery v0.8 (Kuadrant) names unnamed rules `rule-<n>`; real names take precedence
        # (kuadrant-operator PR #1879; docs/semantics.md#unnamed-route-rules).
        synthetic = synthetic_rule(sections, section_name) if section_spec.type == "rule" else None
        if synthetic is not None:
            status = Accepted.ACCEPTED if self.index.options.synthetic_rule_names else Accepted.TARGET_NOT_FOUND
            return TargetResolution(
                ref,
                status,
                Resolved.SYNTHETIC_RULE_NAME,
                target=target,
                section=synthetic,
                namespace=namespace,
                message=(
                    f"rule #{synthetic.position + 1} of {target.kind} {target.name} is unnamed;"
                    f" only synthetic rule names match {section_name}"
                ),
            )
        return TargetResolution(
            ref,
            Accepted.TARGET_NOT_FOUND,
            Resolved.SECTION_NOT_FOUND,
            target=target,
            namespace=namespace,
            message=section_not_found_message(section_spec.type, section_name, target, sections),
        )

    def is_virtual_kind(self, group: str, kind: str) -> bool:
        """GEP-713 "Targeting virtual types": a kind "with a group unknown by the Kubernetes API server".

        A kind missing from a group the API server knows (`HTTPRoutes` in gateway.networking.k8s.io)
        is a typo, not a virtual kind.
        """
        return not self.index.has_kind(group, kind) and group not in self.index.known_groups()

    def resolutions(self, policy: Policy) -> list[TargetResolution]:
        return [self.resolve_target(policy, ref) for ref in policy.refs]

    def targets(self, policy: Policy) -> list[TargetResolution]:
        """Every target of a policy: its references, then the objects its label selectors match.
        Made once per policy and handed out as the same list (callers only read it): the
        topology, the simulation, a dozen rules and the report each ask for every policy's."""
        found = self._targets.get(policy.obj)
        if found is None:
            found = self._targets[policy.obj] = [*self.resolutions(policy), *self.selector_targets(policy)]
        return found

    def selector_targets(self, policy: Policy) -> list[TargetResolution]:
        """The objects the policy's label selectors select: matched by labels, in a namespace
        the selector certainly takes."""
        cached = self._selected.get(policy.obj)
        if cached is None:
            cached, self._undecided[policy.obj] = self._select(policy)
            self._selected[policy.obj] = cached
        return cached

    def undecided_targets(self, policy: Policy) -> list[UndecidedMatch]:
        """The objects the policy's label selectors match by labels in a namespace whose
        `namespaces.selector` match cannot be decided (a Namespace not in the input)."""
        self.selector_targets(policy)
        return self._undecided[policy.obj]

    def selectors(self, policy: Policy) -> list[TargetSelector]:
        field_name = policy.profile.targets.selectors
        raw = policy.obj.spec.get(field_name) if field_name else None
        if not isinstance(raw, list):
            return []
        out = []
        for i, entry in enumerate(raw):
            out.append(
                parse_target_selector(entry, join("spec", field_name or "", i), policy.profile.targets.selector_namespaces)
            )
        return out

    def selector_namespace(self, sel: TargetSelector, own: str | None, namespace: str) -> NamespaceMatch:
        """Whether a target selector's `namespaces` takes objects of `namespace`: `Same` (the
        default) the policy's own, `All` any, `Selector` those whose Namespace labels match, the
        policy's own included: Envoy Gateway decides `Selector` by the labels alone
        (internal/gatewayapi/helpers.go `targetSelectorNamespacesMatch`), as Gateway API decides
        `allowedRoutes` from `Selector`. A Namespace not in the input whose name label does not
        decide is UNKNOWN (`namespace_selected`)."""
        if sel.namespaces_from == "Selector":
            return self.namespace_selected(sel.namespace_selector or LabelSelector(), namespace)
        taken = sel.namespaces_from == "All" or namespace == own
        return NamespaceMatch.MATCHES if taken else NamespaceMatch.NO_MATCH

    def _select(self, policy: Policy) -> tuple[list[TargetResolution], list[UndecidedMatch]]:
        out: list[TargetResolution] = []
        undecided: list[UndecidedMatch] = []
        policy_ns = policy.obj.namespace
        for i, sel in enumerate(self.selectors(policy)):
            if sel.error is not None or sel.kind is None:
                continue
            for obj in self.index.of_kind(sel.group, sel.kind):
                if not sel.label_selector.matches(obj.labels):
                    continue
                ns = obj.namespace
                if ns is not None:
                    match = self.selector_namespace(sel, policy_ns, ns)
                    if match is NamespaceMatch.UNKNOWN:
                        undecided.append(UndecidedMatch(i, obj, ns))
                        continue
                    if match is NamespaceMatch.NO_MATCH:
                        continue
                ref = TargetRef(sel.path, None, obj.group, obj.kind, obj.name, ns, None)
                grant = None
                if ns is not None and policy_ns is not None and ns != policy_ns:
                    grant = self.grants().check(
                        Reference(policy.obj.group, policy.obj.kind, policy_ns, obj.group, obj.kind, ns, obj.name)
                    )
                    if not grant.permitted:
                        out.append(
                            TargetResolution(
                                ref,
                                Accepted.INVALID,
                                Resolved.REF_NOT_PERMITTED,
                                target=obj,
                                namespace=ns,
                                grant=grant,
                                selector=i,
                                message=f"selected {obj.kind} {ns}/{obj.name} is in another namespace and no ReferenceGrant"
                                f" there permits {policy.profile.kind} from namespace {policy_ns}",
                            )
                        )
                        continue
                out.append(
                    TargetResolution(
                        ref,
                        Accepted.ACCEPTED,
                        Resolved.SELECTOR_MATCH,
                        target=obj,
                        namespace=ns,
                        grant=grant,
                        selector=i,
                    )
                )
        return out, undecided
