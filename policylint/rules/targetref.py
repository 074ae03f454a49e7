"""PL2xx: policy target references (GEP-713 "The targetRefs stanza", docs/semantics.md#target-references).

Every rule here reads the policy's profile for what its reference type allows
(kinds, namespace, sectionName, virtual kinds) and `Project.resolve_target`
for what the reference resolves to; none of them knows a vendor kind. One root
cause gets one finding: a reference the API server rejects (PL203, PL205) is
`InvalidRef` for resolution, so PL201/PL202/PL3xx stay quiet about it.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Callable, Collection, Iterable, Iterator, Sequence

from policylint.findings import Edit, Fix, Issue, Severity
from policylint.input.positions import join
from policylint.k8s.names import DNS1123_SUBDOMAIN, did_you_mean, ns_name
from policylint.k8s.objects import K8sObject
from policylint.profiles.policy import GROUP_PATTERN, REF_FIELDS, Policy, TargetRef, policy_namespace, ref_problems
from policylint.profiles.registry import TargetKind, TargetSpec
from policylint.project import Project, across_rules
from policylint.rules.base import POLICY, PerPolicy, PolicyRule, Rule
from policylint.rules.hints import NearMatches
from policylint.rules.unprovable import unmanaged_kind
from policylint.semantics.resolution import TargetResolution
from policylint.textsafe import short_repr
from policylint.vocabulary import Resolved

# Names of custom resources, Services, Secrets and the other kinds policies target are at least
# DNS-1123 subdomains (docs/semantics.md#object-names): a reference outside that can never resolve.
# `gateway.networking.k8s.io/v1`: an apiVersion pasted into `group` (the GEP-713 examples do it).
_GROUP_VERSION = re.compile(r"^(.+)/v[0-9]+((alpha|beta)[0-9]+)?$")
# Reference fields that only some reference types have (NamespacedPolicyTargetReference,
# LocalPolicyTargetReferenceWithSectionName), by the profile switch that says so.
_OPTIONAL_FIELDS: dict[str, Callable[[TargetSpec], bool]] = {
    "namespace": lambda t: t.namespace,
    "sectionName": lambda t: t.section_name,
}


def gk(group: str, kind: str) -> str:
    """`gateway.networking.k8s.io/Gateway`, `core/Service`: the form profiles and `policylint profiles` use."""
    return str(TargetKind(group, kind))


def is_valid_ref(ref: TargetRef, targets: TargetSpec) -> bool:
    """The API server stores the policy: no type errors and no schema violations in this ref."""
    return not ref.errors and not ref_problems(ref, targets.ref_required)


def field_path(ref: TargetRef, name: str) -> str:
    """The path of `name` in the ref when the key is there, else the ref itself (nothing to point at)."""
    return join(ref.path, name) if isinstance(ref.raw, dict) and name in ref.raw else ref.path


def object_label(obj: K8sObject, policy: Policy) -> str:
    """`Gateway gw` in the policy's own namespace, `Gateway other/gw` elsewhere, `GatewayClass eg` for cluster scope."""
    if obj.namespace is None or obj.namespace == policy.obj.namespace:
        return f"{obj.kind} {obj.name}"
    return f"{obj.kind} {obj.namespace}/{obj.name}"


def ref_resolutions(project: Project) -> Sequence[tuple[Policy, TargetRef, TargetResolution]]:
    """Every target reference of every policy with its resolution, in index order."""
    return project.derived(_ref_resolutions)


@across_rules
def _ref_resolutions(project: Project) -> tuple[tuple[Policy, TargetRef, TargetResolution], ...]:
    """`ref_resolutions`, listed once for the rules over the whole project that read it (PL204,
    PL206, PL302, PL303, PL304): each went through every policy's references through two
    generators and looked each resolution up again, a third of what PL303 cost."""
    resolve = project.resolution.resolve_target
    return tuple((policy, ref, resolve(policy, ref)) for policy in project.resolution.policies() for ref in policy.refs)


def policy_resolutions(project: Project, policy: Policy) -> Iterator[tuple[Policy, TargetRef, TargetResolution]]:
    """Every target reference of `policy` with its resolution."""
    for ref in policy.refs:
        yield policy, ref, project.resolution.resolve_target(policy, ref)


def allowed_kinds_text(kinds: Sequence[TargetKind]) -> str:
    # dict.fromkeys: "" and "core" both read core/Service (NGINX Gateway Fabric, Istio accept either).
    return ", ".join(dict.fromkeys(gk(k.group, k.kind) for k in kinds))


def groups_for_kind(project: Project, policy: Policy, kind: str) -> list[str]:
    """Groups in which `kind` exists: the profile's allowed kinds first, then the kinds table and the input."""
    groups = [k.group for k in policy.profile.targets.kinds if k.kind == kind]
    if not groups:
        groups = sorted({g for g in project.index.known_groups() if project.index.has_kind(g, kind)})
    return list(dict.fromkeys(groups))


def _describe(value: object) -> str:
    if isinstance(value, bool):
        return f"the boolean {str(value).lower()}"
    if isinstance(value, (int, float)):
        return f"the number {value}"
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    return short_repr(value)


def yaml_group(group: str) -> str:
    return '""' if group == "" else group


class _SimilarNames:
    """Object names per (group, kind, namespace), indexed once per run, for PL201's typo hint.

    Scanning every object of the kind for each not-found reference costs findings × objects,
    which made 100k-object runs super-linear. A place (kind and namespace) usually holds few
    names, all compared; one holding more than `FULL_SCAN` (thousands of Services in one
    namespace) is narrowed to names of nearly the same length sharing the first character,
    which keeps the one-letter slips the hint is for and bounds the cost per finding.
    """

    FULL_SCAN = 200
    _LENGTH_SLACK = 2

    def __init__(self, project: Project) -> None:
        self._project = project
        self._places: dict[tuple[str, str], dict[str | None, dict[str, K8sObject]]] = {}
        self._buckets: dict[tuple[str, str, str | None], dict[tuple[str, int], list[str]]] = {}
        # The near match per missing name and the names it is compared with. Repositories that
        # repeat one application per namespace repeat its slips with the same names around
        # them; on the messy benchmark corpora two questions in three had been asked before.
        self._answers: dict[tuple[str, frozenset[str]], list[str]] = {}
        self._sets: dict[tuple[str, str, str | None], frozenset[str]] = {}

    def _similar(self, name: str, candidates: Collection[str]) -> list[str]:
        """`did_you_mean(name, candidates)`, which depends on the candidates as a set (it sorts them)."""
        question = (name, candidates if isinstance(candidates, frozenset) else frozenset(candidates))
        answer = self._answers.get(question)
        if answer is None:
            answer = self._answers[question] = did_you_mean(name, candidates)
        return answer

    def closest(self, group: str, kind: str, namespace: str | None, name: str) -> K8sObject | None:
        places = self._places.get((group, kind))
        if places is None:
            places = {}
            for obj in self._project.index.of_kind(group, kind):
                places.setdefault(obj.namespace, {})[obj.name] = obj  # the last one wins, as before
            self._places[(group, kind)] = places
        names = places.get(namespace)
        if not names:
            return None
        candidates: Collection[str]
        if len(names) <= self.FULL_SCAN:
            # Every name of the place, as the set a question is kept by: made once per place, not
            # once per missing name asked about there (2,174 questions on the benchmarks' shared corpus).
            candidates = self._sets.get((group, kind, namespace)) or self._sets.setdefault(
                (group, kind, namespace), frozenset(names)
            )
        else:
            buckets = self._buckets.get((group, kind, namespace))
            if buckets is None:
                buckets = {}
                for candidate in names:
                    buckets.setdefault((candidate[:1], len(candidate)), []).append(candidate)
                self._buckets[(group, kind, namespace)] = buckets
            size = len(name)
            candidates = [
                c for n in range(size - self._LENGTH_SLACK, size + self._LENGTH_SLACK + 1) for c in buckets.get((name[:1], n), ())
            ]
        close = self._similar(name, candidates)
        return names[close[0]] if close else None


def _pruned_other_namespace(policy: Policy, ref: TargetRef) -> bool:
    """A `namespace` naming another namespace on a reference type without that field."""
    raw = ref.raw
    return (
        isinstance(raw, dict)
        and not policy.profile.targets.namespace
        and isinstance(raw.get("namespace"), str)
        and raw["namespace"] != policy.obj.namespace
    )


def _objects_by_name(project: Project) -> dict[str, list[K8sObject]]:
    """Name -> the objects of that name, in index order (PL201's hints)."""
    by_name: dict[str, list[K8sObject]] = defaultdict(list)
    for obj in project.index.objects:
        by_name[obj.name].append(obj)
    return by_name


class TargetRefNotFound(PolicyRule):
    """A policy targetRef names an object that is not in the input."""

    id = "PL201"
    name = "targetref-not-found"
    severity = Severity.ERROR
    subjects = frozenset({POLICY})
    fixable = "unsafe"

    def check_policy(self, project: Project, policy: Policy) -> Iterable[Issue]:
        for _, ref, res in policy_resolutions(project, policy):
            if res.detail != Resolved.OBJECT_NOT_FOUND:
                continue
            if _pruned_other_namespace(policy, ref):
                continue  # the cause is the pruned cross-namespace field: PL401 reports it, once
            # Built once per project, only when something is missing.
            matches = self._near_matches(project, policy, ref, res, project.derived(_objects_by_name))
            assert ref.name is not None
            if not DNS1123_SUBDOMAIN.match(ref.name):
                matches.note(
                    f"{ref.name!r} is not a valid object name (lowercase DNS-1123 subdomain), so no such object can exist"
                )
            # Repositories often hold one team's slice of a cluster (docs/semantics.md#partial-repositories):
            # without a near miss, a kind the input holds none of in that namespace is unprovable.
            assert ref.group is not None and ref.kind is not None
            # A kind a controller creates from another object (GKE's ServiceImport from a
            # ServiceExport) keeps the resolution's message, which names the object to add.
            created = policy.profile.targets.created(ref.group, ref.kind)
            unprovable = None if matches or created else unmanaged_kind(project, ref.group, ref.kind, res.namespace)
            matches.provable(ref.kind, res.namespace, ref.name, unprovable=unprovable is not None)
            message = res.message + matches.suffix()
            if unprovable is not None:
                message = (
                    f"targetRef names {ref.kind} {ns_name(res.namespace, ref.name)}, which is not in the input{unprovable.why}: if it does not"
                    " exist, the policy does not apply to it (TargetNotFound)"
                )
            # On `name`, whatever the near matches say is wrong: see refs.at_field.
            yield self.issue(
                policy.obj,
                field_path(ref, "name"),
                message,
                related=matches.related,
                hint=matches.hint,
                fix=matches.fix,
                severity=Severity.WARNING if unprovable is not None else None,
            )

    def _near_matches(
        self,
        project: Project,
        policy: Policy,
        ref: TargetRef,
        res: TargetResolution,
        by_name: dict[str, list[K8sObject]],
    ) -> NearMatches:
        assert ref.group is not None and ref.kind is not None and ref.name is not None
        targets = policy.profile.targets
        matches = NearMatches()
        same_name = by_name.get(ref.name, [])
        # 1. Same name and place, other kind or group: a wrong `group`, or a kind with the wrong case,
        #    or another kind the profile allows (the Gateway named like the route that is missing).
        for obj in same_name:
            if obj.namespace not in (res.namespace, None) or (obj.group, obj.kind) == (ref.group, ref.kind):
                continue  # another namespace (case 2), or the very kind looked for
            if obj.kind.lower() == ref.kind.lower():
                matches.add(
                    f"did you mean {gk(obj.group, obj.kind)} {obj.name!r} (group: {yaml_group(obj.group)}, kind: {obj.kind})?",
                    obj,
                )
            elif targets.kinds and targets.allows(obj.group, obj.kind):
                matches.add(f"did you mean {obj.kind} {obj.name!r}?", obj)
        # 2. The same object in another namespace.
        for obj in same_name:
            if (obj.group, obj.kind) == (ref.group, ref.kind) and obj.namespace != res.namespace and obj.namespace is not None:
                if targets.namespace and not targets.same_namespace_only:
                    matches.add(
                        f"{obj.kind} {obj.namespace}/{obj.name} exists: set namespace: {obj.namespace} in the targetRef", obj
                    )
                else:
                    matches.add(
                        f"{obj.kind} {obj.namespace}/{obj.name} exists, but {policy.profile.kind} targets resolve only in the"
                        f" policy's own namespace: move the policy to namespace {obj.namespace}",
                        obj,
                    )
        # 3. A similar name of the same kind in the same place (a typo).
        if not matches:
            similar = project.derived(_SimilarNames).closest(ref.group, ref.kind, res.namespace, ref.name)
            if similar is not None:
                matches.add(f"did you mean {ref.kind} {similar.name!r}?", similar)
                # Unsafe: the policy starts applying to that object.
                matches.fix = Fix(f"target {similar.name}", (Edit(join(ref.path, "name"), value=similar.name),), safe=False)
        return matches


class TargetKindNotAllowed(PerPolicy):
    """A targetRef names a kind (or group) that the policy kind does not accept."""

    id = "PL202"
    name = "target-kind-not-allowed"
    severity = Severity.ERROR
    subjects = frozenset({POLICY})

    def check_unit(self, project: Project, policy: Policy) -> Iterable[Issue]:
        targets = policy.profile.targets
        if not targets.kinds:
            return  # the profile lists no kinds: anything goes (inferred or unrestricted kinds)
        for ref in policy.refs:
            if not is_valid_ref(ref, policy.profile.targets) or ref.group is None or ref.kind is None:
                continue  # PL203 / PL205; or a reference its kind lets name no kind
            if targets.allows(ref.group, ref.kind):
                continue
            if not targets.kinds_enforced and targets.documents(ref.group, ref.kind):
                continue  # an implementation documents it as a target (profile data)
            yield self._issue(policy, ref)

    def _issue(self, policy: Policy, ref: TargetRef) -> Issue:
        assert ref.group is not None and ref.kind is not None
        profile = policy.profile
        targets = profile.targets
        allowed = allowed_kinds_text(targets.kinds)
        if targets.kinds_enforced:
            # The CRD's CEL (or enum) rejects the policy: it never reaches a controller.
            severity = Severity.ERROR
            verdict = f"{profile.kind} cannot target {{what}}: the CRD's validation rejects it; allowed: {allowed}"
        elif targets.kinds_enforced_by:
            # Not the CRD but an admission webhook the implementation installs refuses it.
            severity = Severity.ERROR
            verdict = (
                f"{profile.kind} cannot target {{what}}: {targets.kinds_enforced_by} rejects the object when it is"
                f" created; allowed: {allowed}"
            )
        else:
            # Documented support only: the API server stores it, the controller may ignore the target.
            severity = Severity.WARNING
            verdict = (
                f"{profile.kind} documents {allowed} as targets, not {{what}}: the API server accepts it, but the"
                " controller may ignore this target"
            )
        same_kind = [k for k in targets.kinds if k.kind == ref.kind]
        other_case = [k for k in targets.kinds if k.kind.lower() == ref.kind.lower() and k.kind != ref.kind]
        if same_kind:
            # The kind is right, the group is not its group (`group: ""` with Gateway).
            groups = " or ".join(yaml_group(k.group) for k in same_kind)
            core = " (the empty group is the core group)" if ref.group == "" else ""
            what = f"{ref.kind} in group {yaml_group(ref.group)}{core}"
            message = f"{verdict.format(what=what)}; use group: {groups}"
            return self.issue(policy.obj, field_path(ref, "group"), message, severity=severity)
        message = verdict.format(what=gk(ref.group, ref.kind))
        if other_case:
            message += f"; kinds are case-sensitive: did you mean kind: {other_case[0].kind}?"
        return self.issue(policy.obj, field_path(ref, "kind"), message, severity=severity)


def _fixed_group(group: str | None) -> str | None:
    """The group meant, when a slip has one right answer: a version appended
    (`gateway.networking.k8s.io/v1`), or capitals."""
    if group is None:
        return None
    versioned = _GROUP_VERSION.match(group)
    if versioned and GROUP_PATTERN.match(versioned.group(1).lower()):
        return versioned.group(1).lower()
    if group != group.lower() and GROUP_PATTERN.match(group.lower()):
        return group.lower()
    return None


class TargetRefGroupInvalid(PerPolicy):
    """A targetRef `group` is missing or malformed (a version in it, uppercase, not a DNS subdomain)."""

    id = "PL203"
    name = "targetref-group-invalid"
    severity = Severity.ERROR
    subjects = frozenset({POLICY})
    fixable = "safe"

    def check_unit(self, project: Project, policy: Policy) -> Iterable[Issue]:
        for ref in policy.refs:
            for problem in ref_problems(ref, policy.profile.targets.ref_required):
                if problem.field == "group":
                    fixed = _fixed_group(ref.group)
                    if fixed is None and ref.group is None and ref.kind:
                        # No group, and one group has that kind: the only value the author can mean.
                        groups = groups_for_kind(project, policy, ref.kind)
                        fixed = groups[0] if len(groups) == 1 else None
                    fix = (
                        Fix(f"use group {yaml_group(fixed)}", (Edit(join(ref.path, "group"), value=fixed),))
                        if fixed is not None
                        else None
                    )
                    yield self.issue(policy.obj, problem.path, self._message(project, policy, ref), fix=fix)

    def _message(self, project: Project, policy: Policy, ref: TargetRef) -> str:
        group = ref.group
        if group is None:
            # docs/semantics.md#target-references: unlike parentRefs, policy targetRefs have no defaults.
            base = (
                "targetRef has no group: policy target references have no default group (unlike parentRefs),"
                ' so the API server rejects the policy ("Required value")'
            )
            return base + self._suggest(project, policy, ref.kind, prefix="; add ")
        versioned = _GROUP_VERSION.match(group)
        if versioned and GROUP_PATTERN.match(versioned.group(1).lower()):
            fixed = versioned.group(1).lower()
            return (
                f"group {group!r} contains an API version; a group never does (the GEP-713 examples make the same slip):"
                f" use group: {fixed}"
            )
        if group != group.lower() and GROUP_PATTERN.match(group.lower()):
            return f"group {group!r} must be lowercase: use group: {group.lower()}"
        return f'group {group!r} is not a valid API group (a lowercase DNS subdomain, or "" for the core group)' + self._suggest(
            project, policy, ref.kind, prefix="; "
        )

    @staticmethod
    def _suggest(project: Project, policy: Policy, kind: str | None, *, prefix: str) -> str:
        if not kind:
            return ""
        groups = groups_for_kind(project, policy, kind)
        if len(groups) == 1:
            return f"{prefix}group: {yaml_group(groups[0])} for {kind}"
        if groups:
            return f"{prefix}one of group: {', '.join(yaml_group(g) for g in groups)} for {kind}"
        return ""


class NamespacedPolicyClusterTarget(Rule):
    """A namespaced policy targets a cluster-scoped kind, or a cluster-scoped policy a namespaced one without a namespace."""

    id = "PL204"
    name = "namespaced-policy-cluster-target"
    severity = Severity.WARNING
    subjects = frozenset({POLICY})

    def check(self, project: Project) -> Iterable[Issue]:
        for policy, ref, res in ref_resolutions(project):
            if res.detail in (Resolved.INVALID_REF, Resolved.KIND_NOT_ALLOWED, Resolved.UNNAMED):
                continue  # PL202 / PL203 / PL205 already explain why nothing attaches; or no object named
            assert ref.group is not None and ref.kind is not None and ref.name is not None
            profile = policy.profile
            policy_ns = policy_namespace(policy)
            if policy_ns is not None and (ref.group, ref.kind) == ("", "Namespace"):
                # A namespaced policy on its own Namespace reaches that namespace only: what the
                # kinds that take Namespace targets do (GKE: "Must be the same namespace in which
                # the policy is defined"; Linkerd's admission webhook: "cannot target another
                # namespace"). Another namespace is what they refuse.
                if ref.name != policy_ns:
                    message = (
                        f"namespaced {profile.kind} {policy_ns}/{policy.obj.name} targets Namespace {ref.name!r}, not its own"
                        f" namespace {policy_ns}: the kinds that take Namespace targets apply a policy to its own namespace"
                        " only, and refuse or ignore another"
                    )
                    yield self.issue(policy.obj, field_path(ref, "name"), message)
            elif policy_ns is not None and project.index.kinds.is_cluster_scoped(ref.group, ref.kind):
                documented = any(k.kind == ref.kind and k.group == ref.group for k in profile.targets.kinds)
                root = profile.targets.cluster_targets_from
                if root is not None and documented:
                    # The controller itself keeps cluster-wide policies to one namespace (Istio's root
                    # namespace): the scope question is answered; from elsewhere it ignores them.
                    if policy_ns != root:
                        message = (
                            f"namespaced {profile.kind} {policy_ns}/{policy.obj.name} targets cluster-scoped {ref.kind}"
                            f" {ref.name!r} from namespace {policy_ns}: its controller honours a policy on a"
                            f" cluster-scoped target only from namespace {root}, and ignores this one"
                        )
                        yield self.issue(policy.obj, field_path(ref, "kind"), message)
                    continue
                # Earlier revisions of GEP-713, "Attaching Policy to GatewayClass":
                # policy lives in the scope of its target, so that only who can write at that scope can change it.
                message = (
                    f"namespaced {profile.kind} {policy_ns}/{policy.obj.name} targets cluster-scoped {ref.kind} {ref.name!r}:"
                    " a policy attached to a cluster-scoped resource must be cluster scoped (policy-attachment,"
                    f' "Attaching Policy to GatewayClass"), otherwise whoever can write {profile.kind} in namespace'
                    f" {policy_ns} changes behaviour for the whole cluster"
                )
                if documented:
                    message += f"; {profile.kind} documents {ref.kind} as a target, so its controller attaches it"
                    yield self.issue(policy.obj, field_path(ref, "kind"), message, severity=Severity.INFO)
                else:
                    message += "; some tools (gwctl) silently never attach it"
                    yield self.issue(policy.obj, field_path(ref, "kind"), message)
            elif res.detail == Resolved.NAMESPACE_REQUIRED:
                if profile.targets.namespace:
                    fix = "set namespace in the targetRef"
                else:
                    fix = (
                        f"its target reference type has no namespace field, so {profile.kind} can never resolve"
                        " a namespaced target"
                    )
                message = (
                    f"cluster-scoped {profile.kind} {policy.obj.name} targets namespaced {ref.kind} {ref.name!r} without a"
                    f" namespace: the target cannot be found; {fix}"
                )
                yield self.issue(policy.obj, field_path(ref, "namespace"), message, severity=Severity.ERROR)


class TargetRefFieldInvalid(PerPolicy):
    """A targetRef field breaks the upstream reference type: pattern, length, type, or a field the type lacks."""

    id = "PL205"
    name = "targetref-field-invalid"
    severity = Severity.ERROR
    subjects = frozenset({POLICY})

    def check_unit(self, project: Project, policy: Policy) -> Iterable[Issue]:
        for path, message in policy.shape_errors:
            yield self.issue(policy.obj, path, f"{message}; the API server rejects the policy")
        for ref in policy.refs:
            yield from self._check_ref(policy, ref)

    def _check_ref(self, policy: Policy, ref: TargetRef) -> Iterator[Issue]:
        profile = policy.profile
        for path, message in ref.errors:
            key = path.rsplit(".", 1)[-1]
            value = ref.raw.get(key) if isinstance(ref.raw, dict) else None
            got = f", not {_describe(value)}" if value is not None else ""
            quote = " (quote it in YAML)" if isinstance(value, (int, float, bool)) else ""
            yield self.issue(policy.obj, path, f"{message}{got}{quote}; the API server rejects the policy")
        for problem in ref_problems(ref, profile.targets.ref_required):
            if problem.field != "group":  # PL203
                yield self.issue(policy.obj, problem.path, f"{problem.message}; the API server rejects the policy")
        if not isinstance(ref.raw, dict):
            return
        pruned = "the API server prunes it (or rejects the policy under strict field validation)"
        own_namespace = policy_namespace(policy)
        # A namespace other than the policy's own is a cross-namespace reference the kind forbids:
        # PL401 reports that cause (one finding per cause); PL205 keeps the harmless same-namespace one.
        if (
            "namespace" in ref.raw
            and not profile.targets.namespace
            and not (own_namespace and ref.namespace and ref.namespace != own_namespace)
        ):
            where = own_namespace or "(none: the policy is cluster-scoped)"
            yield self.issue(
                policy.obj,
                join(ref.path, "namespace"),
                f"{profile.kind} target references have no namespace field: {pruned}, and the target is looked up in"
                f" the policy's own namespace {where}",
            )
        if "sectionName" in ref.raw and not profile.targets.section_name:
            yield self.issue(
                policy.obj,
                join(ref.path, "sectionName"),
                f"{profile.kind} target references have no sectionName field: {pruned}, and the policy applies to the"
                f" whole {ref.kind or 'target'}",
            )
        known = (*REF_FIELDS, *profile.targets.ref_extra_fields)
        for key in ref.raw:
            if key in known:
                continue
            close = did_you_mean(str(key), known, cutoff=0.6)
            hint = f" (did you mean {close[0]}?)" if close else ""
            fields = ", ".join(f for f in known if f not in _OPTIONAL_FIELDS or _OPTIONAL_FIELDS[f](profile.targets))
            yield self.issue(
                policy.obj,
                join(ref.path, str(key)),
                f"unknown field {key!r} in a policy target reference{hint}: it has only {fields}; {pruned}",
            )


class VirtualTargetKind(Rule):
    """A targetRef names a virtual kind (GEP-713): not a Kubernetes resource, so it cannot be checked."""

    id = "PL206"
    name = "virtual-target-kind"
    severity = Severity.INFO
    subjects = frozenset({POLICY})

    def check(self, project: Project) -> Iterable[Issue]:
        for policy, ref, res in ref_resolutions(project):
            if res.detail != Resolved.VIRTUAL_KIND:
                continue
            assert ref.group is not None and ref.kind is not None
            message = (
                f"{gk(ref.group, ref.kind)} is not a kind known to policylint and no such object is in the input;"
                f' {policy.profile.kind} allows virtual kinds (GEP-713 "Targeting virtual types": a group the API server'
                f" does not know), so {ref.kind} {ref.name!r} is unresolvable by design and not checked"
            )
            yield self.issue(policy.obj, field_path(ref, "kind"), message)


RULES: list[type[Rule]] = [
    TargetRefNotFound,
    TargetKindNotAllowed,
    TargetRefGroupInvalid,
    NamespacedPolicyClusterTarget,
    TargetRefFieldInvalid,
    VirtualTargetKind,
]
