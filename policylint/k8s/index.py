"""The project index: every object, policy and named section, with lookups.

Rules receive the whole index (our checks are cross-resource, like istio's
analyzers) and never read files. Everything here is computed once.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from policylint.findings import Issue
from policylint.input.positions import format_path, join
from policylint.k8s.external import ExternalObjects
from policylint.k8s.fieldtypes import Malformed, check_object
from policylint.k8s.objects import CLUSTER, K8sObject, KindInfo, KindRegistry, ObjectKey
from policylint.k8s.selectors import LabelSelector, SelectorError, parse_selector
from policylint.profiles.registry import PolicyProfile, ProfileRegistry, TargetKind, inferred_profile, looks_like_policy
from policylint.semantics.grants import GRANT_GK, GrantCheck, Reference, ReferenceGrants
from policylint.stages import Stage, StageNotBuilt

if TYPE_CHECKING:
    from policylint.semantics.effective.simulation import Simulation
    from policylint.semantics.topology import Topology

# Target resolution outcomes, in the status vocabulary of GEP-713 (docs/semantics.md#status-vocabulary).
ACCEPTED = "Accepted"
INVALID = "Invalid"
TARGET_NOT_FOUND = "TargetNotFound"

CRD_GK = ("apiextensions.k8s.io", "CustomResourceDefinition")
# Set by the API server on every Namespace (Kubernetes 1.22+), so selectors can match it.
NAMESPACE_NAME_LABEL = "kubernetes.io/metadata.name"

# Field validation of the policy target reference types (apis/v1/shared_types.go, policy_types.go;
# docs/semantics.md#target-references). The API server rejects a policy whose ref breaks these,
# so such a ref never reaches a controller: resolution reports it as InvalidRef.
GROUP_PATTERN = re.compile(r"^$|^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
KIND_PATTERN = re.compile(r"^[a-zA-Z]([-a-zA-Z0-9]*[a-zA-Z0-9])?$")
SECTION_NAME_PATTERN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
NAMESPACE_PATTERN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
REF_FIELDS = ("group", "kind", "name", "namespace", "sectionName")


@dataclass(frozen=True, slots=True)
class LintOptions:
    default_namespace: str = "default"
    # policy-machinery/Kuadrant synthesise `rule-<n>` for unnamed rules; the spec does not
    # (docs/semantics.md#unnamed-route-rules-decision).
    synthetic_rule_names: bool = False
    # Objects that live outside the input (`--external`; docs/semantics.md#partial-repositories).
    external: ExternalObjects = field(default_factory=ExternalObjects)


@dataclass(frozen=True, slots=True)
class TargetRef:
    path: str  # field path inside the object, e.g. spec.targetRefs[1]
    raw: Any
    group: str | None = None
    kind: str | None = None
    name: str | None = None
    namespace: str | None = None
    section_name: str | None = None
    errors: tuple[tuple[str, str], ...] = ()  # (path, message) of type problems

    @property
    def identity(self) -> tuple[Any, ...]:
        return (self.group, self.kind, self.namespace, self.name, self.section_name)

    def display(self) -> str:
        ns = f"{self.namespace}/" if self.namespace else ""
        section = f"#{self.section_name}" if self.section_name else ""
        return f"{self.kind} {ns}{self.name}{section}"


@dataclass(frozen=True, slots=True)
class RefProblem:
    """A target reference value the API server rejects (schema: required, pattern, length)."""

    field: str  # group | kind | name | namespace | sectionName
    path: str  # e.g. spec.targetRefs[0].group, or the ref itself when the field is missing
    message: str
    value: Any = None


def ref_problems(ref: TargetRef) -> list[RefProblem]:
    """Schema violations of the string fields of `ref` (type errors are in `ref.errors`).

    Missing fields are reported at the reference's own path; there is no key to point at.
    """
    typed = {p.rsplit(".", 1)[-1] for p, _ in ref.errors}
    out: list[RefProblem] = []

    def at(name: str) -> str:
        return join(ref.path, name)

    if ref.group is None and "group" not in typed:
        where = at("group") if _has_key(ref, "group") else ref.path
        out.append(RefProblem("group", where, "group is required (policy targetRefs have no default group)"))
    elif ref.group is not None and (len(ref.group) > 253 or not GROUP_PATTERN.match(ref.group)):
        message = f'group {ref.group!r} is not a lowercase DNS subdomain ("" is the core group)'
        out.append(RefProblem("group", at("group"), message, ref.group))
    if ref.kind is None and "kind" not in typed:
        out.append(RefProblem("kind", at("kind") if _has_key(ref, "kind") else ref.path, "kind is required"))
    elif ref.kind == "":
        out.append(RefProblem("kind", at("kind"), "kind must not be empty", ref.kind))
    elif ref.kind is not None and not (len(ref.kind) <= 63 and KIND_PATTERN.match(ref.kind)):
        out.append(
            RefProblem(
                "kind",
                at("kind"),
                f"kind {ref.kind!r} must be at most 63 letters, digits or '-', starting with a letter",
                ref.kind,
            )
        )
    if ref.name is None and "name" not in typed:
        out.append(RefProblem("name", at("name") if _has_key(ref, "name") else ref.path, "name is required"))
    elif ref.name == "":
        out.append(RefProblem("name", at("name"), "name must not be empty", ref.name))
    elif ref.name is not None and len(ref.name) > 253:
        out.append(RefProblem("name", at("name"), f"name is {len(ref.name)} characters long; at most 253 are allowed", ref.name))
    if ref.namespace is not None and not (len(ref.namespace) <= 63 and NAMESPACE_PATTERN.match(ref.namespace)):
        out.append(
            RefProblem(
                "namespace",
                at("namespace"),
                f"namespace {ref.namespace!r} is not a DNS-1123 label (lowercase letters, digits, '-', at most 63)",
                ref.namespace,
            )
        )
    if ref.section_name is not None and not (len(ref.section_name) <= 253 and SECTION_NAME_PATTERN.match(ref.section_name)):
        out.append(
            RefProblem(
                "sectionName",
                at("sectionName"),
                f"sectionName {ref.section_name!r} is not a DNS-1123 subdomain (lowercase letters, digits, '-', '.')",
                ref.section_name,
            )
        )
    return out


def _has_key(ref: TargetRef, key: str) -> bool:
    return isinstance(ref.raw, Mapping) and key in ref.raw


@dataclass(frozen=True, slots=True)
class Policy:
    obj: K8sObject
    profile: PolicyProfile
    refs: tuple[TargetRef, ...]
    shape_errors: tuple[tuple[str, str], ...] = ()  # (path, message): a targets field of the wrong type

    @property
    def key(self) -> ObjectKey:
        return self.obj.key


@dataclass(frozen=True, slots=True)
class Section:
    name: str | None
    position: int  # 0-based index in the list
    path: str  # e.g. spec.listeners[2]
    # The entry is not a mapping or its `name` has the wrong type (PL010): the name it was
    # meant to have is unknown, so a sectionName can neither match nor miss it.
    malformed: bool = False


@dataclass(frozen=True, slots=True)
class TargetResolution:
    ref: TargetRef
    status: str  # Accepted | Invalid | TargetNotFound
    detail: str  # Resolved, ObjectNotFound, SectionNotFound, KindNotAllowed, ...
    target: K8sObject | None = None
    section: Section | None = None
    message: str = ""
    namespace: str | None = None  # the namespace the target was looked up in
    grant: GrantCheck | None = None  # for a cross-namespace reference: the ReferenceGrant check
    selector: int | None = None  # index of the label selector that matched, for selector targets

    @property
    def accepted(self) -> bool:
        return self.status == ACCEPTED


@dataclass
class ProjectIndex:
    objects: Sequence[K8sObject]
    kinds: KindRegistry
    profiles: ProfileRegistry
    options: LintOptions = field(default_factory=LintOptions)
    input_issues: Sequence[Issue] = ()
    files: Sequence[str] = ()

    def __post_init__(self) -> None:
        self.objects = sorted(
            self.objects, key=lambda o: (o.key.group, o.key.kind, o.key.namespace or "", o.key.name, o.sort_key())
        )
        by_key: dict[ObjectKey, list[K8sObject]] = defaultdict(list)
        by_gk: dict[tuple[str, str], list[K8sObject]] = defaultdict(list)
        for obj in self.objects:
            by_key[obj.key].append(obj)
            by_gk[(obj.key.group, obj.key.kind)].append(obj)
        self._by_key = dict(by_key)
        self._by_gk = dict(by_gk)
        self._sections: dict[int, list[Section]] = {}
        self._policies: list[Policy] | None = None
        self._resolved: dict[tuple[int, str], TargetResolution] = {}
        self._groups: set[str] | None = None
        self._grants: ReferenceGrants | None = None
        self._topology: Topology | None = None
        self._simulation: Simulation | None = None
        self._selected: dict[int, list[TargetResolution]] = {}
        self._malformed: dict[int, Malformed] = {}

    # -- lookups -------------------------------------------------------------------------

    def get(self, key: ObjectKey) -> K8sObject | None:
        found = self._by_key.get(key)
        return found[0] if found else None

    def lookup(self, group: str, kind: str, namespace: str | None, name: str) -> K8sObject | None:
        return self.get(ObjectKey(group, kind, namespace, name))

    def of_kind(self, group: str, kind: str) -> Sequence[K8sObject]:
        return self._by_gk.get((group, kind), ())

    def has_kind(self, group: str, kind: str) -> bool:
        return (group, kind) in self._by_gk or self.kinds.get(group, kind) is not None

    def duplicate_groups(self) -> list[list[K8sObject]]:
        return [objs for objs in self._by_key.values() if len(objs) > 1]

    def crds(self) -> Sequence[K8sObject]:
        return self.of_kind(*CRD_GK)

    def grants(self) -> ReferenceGrants:
        if self._grants is None:
            self._grants = ReferenceGrants(self.of_kind(*GRANT_GK), self.options.external, malformed=self.malformed)
        return self._grants

    def malformed(self, obj: K8sObject) -> Malformed:
        """The fields of `obj` whose JSON type its schema rejects (PL010; `policylint.k8s.fieldtypes`)."""
        cached = self._malformed.get(id(obj))
        if cached is None:
            cached = self._malformed[id(obj)] = check_object(obj.group, obj.kind, obj.data)
        return cached

    def has_malformed(self, group: str, kind: str, namespace: str | None) -> bool:
        """Whether some object of the kind in the namespace has a malformed field (PL010): its
        references are partly unknown, so "nothing references X" cannot be concluded there."""
        return any(o.namespace == namespace and self.malformed(o) for o in self.of_kind(group, kind))

    # -- later stages --------------------------------------------------------------------
    # The pipeline builds the topology and the simulation after the index, in that order
    # (policylint.stages), and attaches them here so that readers of the index reach them.
    # The index itself never builds a later stage.

    def attach(self, *, topology: Topology | None = None, simulation: Simulation | None = None) -> None:
        if topology is not None:
            self._topology = topology
        if simulation is not None:
            self._simulation = simulation

    def topology(self) -> Topology:
        """The resolved traffic hierarchy (policylint.semantics.topology), if it was built."""
        if self._topology is None:
            raise StageNotBuilt(Stage.TOPOLOGY)
        return self._topology

    def simulation(self) -> Simulation:
        """Effective policy per context (policylint.semantics.effective), if it was built."""
        if self._simulation is None:
            raise StageNotBuilt(Stage.SIMULATION)
        return self._simulation

    def has_stage(self, stage: Stage) -> bool:
        return (self._topology if stage is Stage.TOPOLOGY else self._simulation) is not None

    # -- namespaces ------------------------------------------------------------------------

    def namespace_labels(self, namespace: str) -> tuple[dict[str, str], bool]:
        """Labels of a namespace and whether they are known (a Namespace object in the input)."""
        obj = self.lookup("", "Namespace", None, namespace)
        labels = {NAMESPACE_NAME_LABEL: namespace}
        if obj is None:
            return labels, False
        labels.update(obj.labels)
        return labels, True

    def namespace_selected(self, selector: LabelSelector, namespace: str) -> tuple[bool, str | None]:
        """Whether the namespace matches; the second value is an assumption made when its labels are unknown."""
        labels, known = self.namespace_labels(namespace)
        if selector.matches(labels):
            return True, None
        if known or any(r.key == NAMESPACE_NAME_LABEL for r in selector.failing(labels)):
            # The name label is set on every Namespace by the API server: a requirement on it that
            # fails is a certain mismatch, whatever the other (unknown) labels are.
            return False, None
        # The Namespace object is not in the input: its labels are unknown, so a controller may
        # well admit it. Assume it does, and say so (false-positive guard).
        return True, f"Namespace {namespace} is not in the input; assumed to match {selector}"

    def is_external(self, group: str, kind: str, namespace: str | None, name: str) -> bool:
        return self.options.external.match(group, kind, namespace, name) is not None

    # -- sections ------------------------------------------------------------------------

    def sections(self, obj: K8sObject) -> list[Section]:
        cached = self._sections.get(id(obj))
        if cached is not None:
            return cached
        spec = self.kinds.sections(obj.group, obj.kind)
        out: list[Section] = []
        if spec is not None:
            container: Any = obj.data
            parts = tuple(spec.path.split("."))
            for part in parts:
                container = container.get(part) if isinstance(container, dict) else None
            if isinstance(container, list):
                malformed = self.malformed(obj)
                for i, entry in enumerate(container):
                    name = entry.get("name") if isinstance(entry, dict) else None
                    unknown = bool(malformed) and malformed.broken(*parts, i, "name")
                    out.append(Section(name if isinstance(name, str) else None, i, join(spec.path, i), unknown))
        self._sections[id(obj)] = out
        return out

    def sections_malformed(self, obj: K8sObject) -> bool:
        """Whether some section name of `obj` is unknown: its list, or an entry's name, is malformed (PL010)."""
        malformed = self.malformed(obj)
        if not malformed:
            return False
        spec = self.kinds.sections(obj.group, obj.kind)
        if spec is None:
            return False
        return malformed.broken(*spec.path.split(".")) or any(s.malformed for s in self.sections(obj))

    # -- policies ------------------------------------------------------------------------

    def policies(self) -> list[Policy]:
        if self._policies is None:
            self._policies = self._build_policies()
        return self._policies

    def profile_for(self, obj: K8sObject) -> PolicyProfile | None:
        profile = self.profiles.get(obj.group, obj.kind)
        if profile is None and looks_like_policy(obj.kind, obj.data.get("spec")):
            profile = inferred_profile(obj.group, obj.kind, obj.spec)
            self.profiles.add(profile)
        return profile

    def _build_policies(self) -> list[Policy]:
        out: list[Policy] = []
        for obj in self.objects:
            if (obj.group, obj.kind) == CRD_GK:
                continue
            profile = self.profile_for(obj)
            if profile is None:
                continue
            refs, shape_errors = _target_refs(obj, profile)
            out.append(Policy(obj, profile, tuple(refs), tuple(shape_errors)))
        return out

    # -- target resolution ---------------------------------------------------------------

    def resolve_target(self, policy: Policy, ref: TargetRef) -> TargetResolution:
        # Several rules and the JSON report ask for the same resolution: compute it once.
        key = (id(policy.obj), ref.path)
        cached = self._resolved.get(key)
        if cached is None:
            cached = self._resolved[key] = self._resolve(policy, ref)
        return cached

    def _resolve(self, policy: Policy, ref: TargetRef) -> TargetResolution:
        profile = policy.profile
        problems = ref_problems(ref)
        if ref.errors or problems:
            # The API server rejects the whole policy (schema): nothing gets attached.
            reasons = "; ".join([m for _, m in ref.errors] + [p.message for p in problems])
            return TargetResolution(ref, INVALID, "InvalidRef", message=f"rejected by the API server: {reasons}")
        assert ref.group is not None and ref.kind is not None and ref.name is not None
        if not profile.targets.allows(ref.group, ref.kind) and profile.targets.kinds_enforced:
            allowed = ", ".join(str(k) for k in profile.targets.kinds)
            return TargetResolution(
                ref,
                INVALID,
                "KindNotAllowed",
                message=f"{profile.kind} cannot target {_gk(ref.group, ref.kind)}; allowed: {allowed}",
            )
        # A namespace or sectionName on a reference type that has no such field is pruned by the
        # API server (or the object is rejected under strict field validation): either way the
        # controller never sees it, so resolution ignores it and PL205 reports the field.
        section_name = ref.section_name if profile.targets.section_name else None
        ref_namespace = ref.namespace if profile.targets.namespace else None
        group = core_group_alias(profile, ref.group, ref.kind)
        cluster_target = self.kinds.is_cluster_scoped(group, ref.kind)
        namespace: str | None
        if cluster_target:
            namespace = None  # cluster-scoped kinds are found by name only
        elif ref_namespace:
            namespace = ref_namespace
        else:
            namespace = policy_namespace(policy)
        if namespace is None and not cluster_target:
            return TargetResolution(
                ref,
                TARGET_NOT_FOUND,
                "NamespaceRequired",
                message=f"a cluster-scoped policy must name the namespace of {ref.kind} {ref.name!r}",
            )
        grant: GrantCheck | None = None
        if ref_namespace and namespace is not None and policy.obj.namespace and namespace != policy.obj.namespace:
            # GEP-713 "Cross namespace references": a handshake in the target namespace, as
            # ReferenceGrant from the policy kind. Checked before existence, like controllers do
            # for routes, so status never reveals whether an un-granted target exists
            # (docs/semantics.md#referencegrant).
            if profile.targets.cross_namespace_grant:
                grant = self.grants().check(
                    Reference(policy.obj.group, policy.obj.kind, policy.obj.namespace, group, ref.kind, namespace, ref.name)
                )
                if not grant.permitted:
                    return TargetResolution(
                        ref,
                        INVALID,
                        "RefNotPermitted",
                        namespace=namespace,
                        grant=grant,
                        message=f"no ReferenceGrant in namespace {namespace} permits {profile.kind} from namespace"
                        f" {policy.obj.namespace} to target {ref.kind} {ref.name}",
                    )
        target = self.lookup(group, ref.kind, namespace, ref.name)
        if target is None:
            if self.is_external(group, ref.kind, namespace, ref.name):
                return TargetResolution(
                    ref, ACCEPTED, "External", namespace=namespace, grant=grant, message="declared external (--external)"
                )
            if profile.targets.virtual_kinds and self.is_virtual_kind(group, ref.kind):
                return TargetResolution(
                    ref, ACCEPTED, "VirtualKind", namespace=namespace, message="virtual kind (GEP-713): unresolvable by design"
                )
            where = f"in namespace {namespace}" if namespace is not None else "(cluster-scoped)"
            message = f"{ref.kind} {ref.name!r} not found {where}"
            return TargetResolution(ref, TARGET_NOT_FOUND, "ObjectNotFound", namespace=namespace, message=message)
        if section_name is None:
            return TargetResolution(ref, ACCEPTED, "Resolved", target=target, namespace=namespace, grant=grant)
        section_spec = self.kinds.sections(target.group, target.kind)
        if section_spec is None:
            if self.kind_has_no_sections(target.group, target.kind):
                return TargetResolution(
                    ref,
                    TARGET_NOT_FOUND,
                    "SectionNotSupported",
                    target=target,
                    namespace=namespace,
                    message=f"{target.kind} has no named sections; sectionName {section_name} cannot match",
                )
            # A kind known only from a CRD (or not at all): its sections are unknown, so claiming
            # TargetNotFound would be a guess. The object exists; the section is unchecked.
            return TargetResolution(
                ref,
                ACCEPTED,
                "SectionUnchecked",
                target=target,
                namespace=namespace,
                message=f"policylint does not know the sections of {target.kind}",
            )
        sections = self.sections(target)
        named = [s for s in sections if s.name == section_name]
        if named:
            return TargetResolution(ref, ACCEPTED, "Resolved", target=target, section=named[0], namespace=namespace, grant=grant)
        if self.sections_malformed(target):
            # The API server rejects the target (PL010 reports the field), and the section this
            # name looks for may be the malformed one: not reported as missing (one finding per
            # cause), and not simulated either, since where it would attach is unknown.
            noun = SECTION_NOUNS.get(section_spec.type, "section")
            return TargetResolution(
                ref,
                ACCEPTED,
                "SectionMalformed",
                namespace=namespace,
                grant=grant,
                message=f"the {noun}s of {target.kind} {target.name} are malformed (PL010); sectionName {section_name} is not checked",
            )
        # policy-machinery v0.8 (Kuadrant) names unnamed rules `rule-<n>`; real names take precedence
        # (kuadrant-operator PR #1879; docs/semantics.md#unnamed-route-rules).
        synthetic = synthetic_rule(sections, section_name) if section_spec.type == "rule" else None
        if synthetic is not None:
            status = ACCEPTED if self.options.synthetic_rule_names else TARGET_NOT_FOUND
            return TargetResolution(
                ref,
                status,
                "SyntheticRuleName",
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
            TARGET_NOT_FOUND,
            "SectionNotFound",
            target=target,
            namespace=namespace,
            message=section_not_found_message(section_spec.type, section_name, target, sections),
        )

    def kind_has_no_sections(self, group: str, kind: str) -> bool:
        """True when the kind is known (built-in table) and has nothing a sectionName can select.

        Kinds known only from a CRD in the input have unknown sections, not none.
        """
        return self.kinds.sections(group, kind) is None and KindRegistry.builtin().get(group, kind) is not None

    def known_groups(self) -> set[str]:
        """API groups the API server would know: core, built-in kinds, CRDs and objects in the input."""
        if self._groups is None:
            groups = {""} | {group for group, _kind in self._by_gk}
            groups |= {group for group, _kind in getattr(self.kinds, "_kinds", {})}
            self._groups = groups
        return self._groups

    def is_virtual_kind(self, group: str, kind: str) -> bool:
        """GEP-713 "Targeting virtual types": a kind "with a group unknown by the Kubernetes API server".

        A kind missing from a group the API server knows (`HTTPRoutes` in gateway.networking.k8s.io)
        is a typo, not a virtual kind.
        """
        return not self.has_kind(group, kind) and group not in self.known_groups()

    def resolutions(self, policy: Policy) -> list[TargetResolution]:
        return [self.resolve_target(policy, ref) for ref in policy.refs]

    def targets(self, policy: Policy) -> list[TargetResolution]:
        """Every target of a policy: its references, then the objects its label selectors match."""
        return [*self.resolutions(policy), *self.selector_targets(policy)]

    # -- label-selector targets (GEP-713 "Label selectors"; Envoy Gateway targetSelectors) --

    def selector_targets(self, policy: Policy) -> list[TargetResolution]:
        cached = self._selected.get(id(policy.obj))
        if cached is None:
            cached = self._selected[id(policy.obj)] = self._select(policy)
        return cached

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

    def _select(self, policy: Policy) -> list[TargetResolution]:
        out: list[TargetResolution] = []
        policy_ns = policy.obj.namespace
        for i, sel in enumerate(self.selectors(policy)):
            if sel.error is not None or sel.kind is None:
                continue
            for obj in self.of_kind(sel.group, sel.kind):
                if not sel.label_selector.matches(obj.labels):
                    continue
                ns = obj.namespace
                if ns != policy_ns and ns is not None:
                    if sel.namespaces_from == "Same":
                        continue
                    if sel.namespaces_from == "Selector":
                        ok, _assumed = self.namespace_selected(sel.namespace_selector or LabelSelector(), ns)
                        if not ok:
                            continue
                    elif sel.namespaces_from != "All":
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
                                INVALID,
                                "RefNotPermitted",
                                target=obj,
                                namespace=ns,
                                grant=grant,
                                selector=i,
                                message=f"selected {obj.kind} {ns}/{obj.name} is in another namespace and no ReferenceGrant"
                                f" there permits {policy.profile.kind} from namespace {policy_ns}",
                            )
                        )
                        continue
                out.append(TargetResolution(ref, ACCEPTED, "SelectorMatch", target=obj, namespace=ns, grant=grant, selector=i))
        return out


@dataclass(frozen=True, slots=True)
class TargetSelector:
    """One `targetSelectors` entry: group (default gateway.networking.k8s.io), kind, labels, namespaces."""

    path: str
    group: str
    kind: str | None
    label_selector: LabelSelector
    namespaces_from: str = "Same"
    namespace_selector: LabelSelector | None = None
    error: str | None = None


def parse_target_selector(raw: Any, path: str, namespaces_allowed: bool) -> TargetSelector:
    if not isinstance(raw, dict):
        return TargetSelector(path, "", None, LabelSelector(), error="a target selector must be a mapping")
    group = raw.get("group", "gateway.networking.k8s.io")
    kind = raw.get("kind")
    if not isinstance(group, str) or not isinstance(kind, str) or not kind:
        return TargetSelector(path, "", None, LabelSelector(), error="a target selector needs a kind (and a string group)")
    try:
        labels = parse_selector({k: raw.get(k) for k in ("matchLabels", "matchExpressions") if k in raw})
    except SelectorError as exc:
        return TargetSelector(path, group, kind, LabelSelector(), error=str(exc))
    namespaces = raw.get("namespaces") if namespaces_allowed else None
    if not isinstance(namespaces, dict):
        return TargetSelector(path, group, kind, labels)
    ns_from = namespaces.get("from", "Same")
    ns_selector = None
    if ns_from == "Selector":
        try:
            ns_selector = parse_selector(namespaces.get("selector"))
        except SelectorError as exc:
            return TargetSelector(path, group, kind, labels, error=f"namespaces.selector: {exc}")
    return TargetSelector(path, group, kind, labels, str(ns_from), ns_selector)


def synthetic_rule(sections: Sequence[Section], section_name: str) -> Section | None:
    """`rule-<n>` (1-based) naming an unnamed rule, as policy-machinery v0.8 does
    (docs/semantics.md#unnamed-route-rules)."""
    if not section_name.startswith("rule-") or not section_name[5:].isdigit():
        return None
    n = int(section_name[5:])
    if 1 <= n <= len(sections) and sections[n - 1].name is None:
        return sections[n - 1]
    return None


def core_group_alias(profile: PolicyProfile, group: str, kind: str) -> str:
    """The group to look a target up in. A profile that lists `{group: core, kind: X}` declares
    `core` an alias of the core group `""` for X, as NGINX Gateway Fabric's CEL ("TargetRefs Group
    must be core": '' or 'core') and controller do (docs/semantics.md#nginx-gateway-fabric)."""
    if group == "core" and TargetKind("core", kind) in profile.targets.kinds:
        return ""
    return group


def policy_namespace(policy: Policy) -> str | None:
    """The namespace a policy's targets resolve in by default; None for a cluster-scoped policy."""
    if policy.profile.scope == CLUSTER:
        return None
    return policy.obj.namespace


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


def _gk(group: str, kind: str) -> str:
    return str(TargetKind(group, kind))  # `gateway.networking.k8s.io/Gateway`, `core/Service`


def _target_refs(obj: K8sObject, profile: PolicyProfile) -> tuple[list[TargetRef], list[tuple[str, str]]]:
    spec = obj.spec
    refs: list[TargetRef] = []
    shape_errors: list[tuple[str, str]] = []
    single = profile.targets.single
    if single and single in spec and spec[single] is not None:
        value = spec[single]
        if isinstance(value, dict):
            refs.append(_parse_ref(value, join("spec", single)))
        else:
            shape_errors.append((join("spec", single), f"{single} must be a mapping, not {_type_name(value)}"))
    many = profile.targets.list
    if many and many in spec and spec[many] is not None:
        value = spec[many]
        if isinstance(value, list):
            for i, item in enumerate(value):
                if isinstance(item, dict):
                    refs.append(_parse_ref(item, join("spec", many, i)))
                else:
                    shape_errors.append((join("spec", many, i), f"each {many} entry must be a mapping, not {_type_name(item)}"))
        else:
            shape_errors.append((join("spec", many), f"{many} must be a list, not {_type_name(value)}"))
    return refs, shape_errors


def _type_name(value: Any) -> str:
    return {dict: "a mapping", list: "a list", str: "a string", bool: "a boolean", int: "a number", float: "a number"}.get(
        type(value), "null" if value is None else type(value).__name__
    )


def _parse_ref(raw: Mapping[str, Any], path: str) -> TargetRef:
    # The input boundary is policylint.k8s.validation.TargetReferenceModel (pydantic). Importing it
    # costs more than linting a few files, so well-typed references, nearly all, skip it: every
    # field absent, null or a string is exactly what the model accepts.
    values = [raw.get(f) for f in REF_FIELDS]
    if all(v is None or type(v) is str for v in values):
        group, kind, name, namespace, section_name = values
        return TargetRef(path, raw, group, kind, name, namespace, section_name)
    from policylint.k8s.validation import TargetReferenceModel, ValidationError

    try:
        model = TargetReferenceModel.model_validate(raw)
    except ValidationError as exc:
        errors = tuple(
            (
                join(path, *[p for p in err["loc"] if isinstance(p, (str, int))]),
                f"{'.'.join(str(p) for p in err['loc'])} must be a string",
            )
            for err in exc.errors()
        )
        good = {k: v for k, v in raw.items() if isinstance(v, str)}
        model = TargetReferenceModel.model_validate(good)
        return TargetRef(path, raw, model.group, model.kind, model.name, model.namespace, model.sectionName, errors)
    return TargetRef(path, raw, model.group, model.kind, model.name, model.namespace, model.sectionName)


def crd_kind_infos(crds: Iterable[K8sObject]) -> list[KindInfo]:
    """Kinds declared by CRDs in the input: their scope decides namespace defaulting."""
    out = []
    for crd in crds:
        spec = crd.spec
        names = spec.get("names")
        if not isinstance(names, dict):
            continue
        group, kind, scope = spec.get("group"), names.get("kind"), spec.get("scope")
        if isinstance(group, str) and isinstance(kind, str) and scope in ("Namespaced", CLUSTER):
            out.append(KindInfo(group, kind, scope))
    return out


__all__ = [
    "ACCEPTED",
    "INVALID",
    "TARGET_NOT_FOUND",
    "LintOptions",
    "Policy",
    "ProjectIndex",
    "Section",
    "TargetRef",
    "TargetResolution",
    "core_group_alias",
    "crd_kind_infos",
    "format_path",
    "policy_namespace",
    "ref_problems",
]
