"""PL4xx (part 1): cross-namespace handshakes — ReferenceGrant (docs/semantics.md#referencegrant).

A reference into another namespace is only honoured when the referenced
namespace accepts it: a ReferenceGrant there whose `from` is exactly the
referrer's {group, kind, namespace} and whose `to` matches the target's
{group, kind, name?}. Routes, Gateways and ListenerSets use it for backends and
certificates (docs/semantics.md#backends, #certificates); GEP-713 "Cross
namespace references" demands the same handshake (or client-side-only effects)
from policies that target another namespace, and Envoy Gateway applies it to
`targetSelectors` matches and to the backends in a policy's spec
(docs/semantics.md#envoy-gateway).

Every edge is resolved once, by `Project.resolve_target` /
`selector_targets` (policy targets) and `Topology.refs_from` (everything else);
`ReferenceGrants.check` records which grant entries authorised something and
which grants almost did (`GrantCheck.near_misses`). The rules here only read
those results, so the JSON report and the findings always agree.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable, Mapping, Sequence

from policylint.findings import Edit, Fix, Issue, Related, Severity
from policylint.input.positions import join
from policylint.k8s.fieldtypes import GATEWAY_GROUP
from policylint.k8s.index import ProjectIndex
from policylint.k8s.names import ns_name
from policylint.k8s.objects import K8sObject
from policylint.k8s.selectors import LabelSelector, Requirement
from policylint.profiles.policy import Policy, TargetSelector, core_group_alias, policy_namespace
from policylint.project import Project, across_rules
from policylint.rules.base import POLICY, ROUTES, Rule
from policylint.rules.hints import NearMatches, frontend_scope, listeners_get, sentence
from policylint.rules.refs import HOLDER_KINDS
from policylint.semantics.grants import Grant, GrantCheck, Reference, ReferenceGrants
from policylint.semantics.listeners import LISTENER_PARENTS
from policylint.semantics.resolution import TargetResolution, UndecidedMatch
from policylint.semantics.topology import ROUTE_KINDS, ObjectRef, Topology
from policylint.stages import Stage
from policylint.values import frozen
from policylint.vocabulary import NamespaceMatch, ReferenceStatus, Resolved

_MAX_RELATED = 5

# What a controller does with a reference it may not follow, by ObjectRef.purpose
# (docs/semantics.md#backends, #certificates).
_REFUSED = {
    "backend": (
        "the route gets ResolvedRefs=False (reason RefNotPermitted) and the share of traffic meant for this backend"
        " fails (HTTP 500 for HTTP routes, rejected connections for TLS/TCP/UDP routes)"
    ),
    "mirror": "the route gets ResolvedRefs=False (reason RefNotPermitted) and nothing is mirrored to it",
    "ext-auth": "the route gets ResolvedRefs=False (reason RefNotPermitted) and requests cannot be authorised through it",
    "certificate": "the listener gets ResolvedRefs=False (reason RefNotPermitted) and cannot serve this certificate",
    "client-certificate": "the Gateway cannot present this client certificate to backends (RefNotPermitted)",
    "ca-certificate": "ResolvedRefs=False (reason RefNotPermitted) and cannot validate client certificates with this CA bundle",
}
# The references a policy's spec holds (profile `backendRefs`, `certificateRefs`, `objectRefs`).
_POLICY_PURPOSES = frozenset({"policy-backend", "policy-certificate", "policy-object"})
_NOUN = {
    "backend": "backend",
    "mirror": "mirror backend",
    "ext-auth": "external-auth backend",
    "policy-backend": "backend",
    "certificate": "certificate",
    "client-certificate": "client certificate",
    "ca-certificate": "CA certificate",
}


def field_name(path: str) -> str:
    """`targetSelectors[0]` for `spec.targetSelectors[0]`: how a user names the field in a message."""
    return path.removeprefix("spec.")


def where(obj: K8sObject) -> str:
    """`ns/name`, or `name` for a cluster-scoped object."""
    return ns_name(obj.namespace, obj.name)


def near_miss_related(check: GrantCheck | None) -> list[Related]:
    """The grants that almost permit a reference, at the field that does not match."""
    if check is None:
        return []
    return [Related(miss.reason, object=miss.grant.obj, path=miss.path) for miss in check.near_misses]


@frozen
class CheckedReference:
    """A cross-namespace reference in the input and its ReferenceGrant check."""

    owner: K8sObject
    path: str  # where the reference is written (a backendRef, a targetRef, a target selector)
    reference: Reference
    check: GrantCheck

    def label(self) -> str:
        return f"{self.reference.to_kind} {self.reference.to_namespace}/{self.reference.to_name}"


def checked_references(project: Project) -> list[CheckedReference]:
    """Every cross-namespace reference with its grant check that `misplaced_grants` reads (no
    grant permits it, and one would if it lived in the referent's namespace), in index order:
    the others, most of them on a repository whose tenants reach each other, were each made a
    `CheckedReference` with its `Reference` for `misplaced_grants` to pass over.

    Building the topology and every policy's targets is also what records which grant
    entries authorise something (`ReferenceGrants.used`): call this before reading it,
    whichever rules are selected.
    """
    out: list[CheckedReference] = []
    topology = project.topology()
    for obj in project.index.objects:
        for ref in topology.refs_from(obj):
            owner_ns = obj.namespace or ""
            if ref.grant is None or ref.namespace == owner_ns or not _misplaced_candidate(ref.grant):
                continue
            out.append(CheckedReference(obj, ref.path, ref.grant_reference(), ref.grant))
    for policy in project.resolution.policies():
        own = policy.obj.namespace
        for res in project.resolution.targets(policy):
            target = res.ref
            if res.grant is None or not own or not res.namespace or res.namespace == own:
                continue
            if not _misplaced_candidate(res.grant):
                continue
            if target.group is None or target.kind is None or target.name is None:
                continue
            group = core_group_alias(policy.profile, target.group, target.kind)
            reference = Reference(policy.obj.group, policy.obj.kind, own, group, target.kind, res.namespace, target.name)
            out.append(CheckedReference(policy.obj, target.path, reference, res.grant))
    return out


@across_rules
def _misplaced(project: Project) -> dict[Grant, tuple[Grant, list[CheckedReference]]]:
    """`misplaced_grants` of every checked reference, worked out once for PL403 and PL404 (through
    `project.derived`, kept from one to the other): checking every cross-namespace reference again
    cost an editor's update 3-4 ms at 10,000 objects."""
    return misplaced_grants(checked_references(project))


def misplaced_grants(refs: Iterable[CheckedReference]) -> dict[Grant, tuple[Grant, list[CheckedReference]]]:
    """Grants that would permit a failing reference if they lived in the target's namespace."""
    out: dict[Grant, tuple[Grant, list[CheckedReference]]] = {}
    for checked in refs:
        if not _misplaced_candidate(checked.check):
            continue
        for miss in checked.check.near_misses:
            if miss.path == _GRANT_NAMESPACE:
                out.setdefault(miss.grant, (miss.grant, []))[1].append(checked)
    return out


# The field of a near miss that misses only by where its grant lives.
_GRANT_NAMESPACE = "metadata.namespace"


def _misplaced_candidate(check: GrantCheck) -> bool:
    """Whether a reference with this check is one `misplaced_grants` counts: no grant permits it,
    and one would from the referent's namespace."""
    return not check.permitted and any(miss.path == _GRANT_NAMESPACE for miss in check.near_misses)


def is_used(grants: ReferenceGrants, grant: Grant) -> bool:
    """Some from x to combination of the grant authorised a reference (after `checked_references`)."""
    return any((grant, f.path, t.path) in grants.used for f in grant.sources for t in grant.targets)


def may_permit(grant: Grant, ref: Reference) -> bool:
    """Whether `grant` would authorise `ref` (its namespace, a from entry and a to entry match),
    without recording a use: for a reference that may not be made."""
    if grant.namespace != ref.to_namespace:
        return False
    return any(
        (f.group, f.kind, f.namespace) == (ref.from_group, ref.from_kind, ref.from_namespace) for f in grant.sources
    ) and any((t.group, t.kind) == (ref.to_group, ref.to_kind) and t.name in (None, ref.to_name) for t in grant.targets)


def self_namespace_only(grant: Grant) -> bool:
    """Every `from` entry names the grant's own namespace: the grant can authorise nothing."""
    return bool(grant.sources) and all(f.namespace == grant.namespace for f in grant.sources)


class CrossNamespaceTargetNotPermitted(Rule):
    """A policy targets an object in another namespace without a ReferenceGrant there, or its kind cannot cross namespaces."""

    id = "PL401"
    name = "cross-namespace-target-not-permitted"
    severity = Severity.ERROR
    fixable = "unsafe"
    subjects = frozenset({POLICY})
    reads = frozenset({Stage.TOPOLOGY})

    def check(self, project: Project) -> Iterable[Issue]:
        for policy in project.resolution.policies():
            for ref in policy.refs:
                res = project.resolution.resolve_target(policy, ref)
                if res.detail == Resolved.REF_NOT_PERMITTED and policy.profile.targets.same_namespace_only:
                    if not _refused_by_its_crd(project, policy, join(ref.path, "namespace")):
                        yield self._own_namespace_only(policy, res)
                elif res.detail == Resolved.REF_NOT_PERMITTED:
                    yield self._not_permitted(policy, res, project.index)
                elif forbidden_namespace(policy, ref.raw, ref.namespace):
                    yield self._forbidden(policy, res)
            for res in project.resolution.selector_targets(policy):
                if res.detail == Resolved.REF_NOT_PERMITTED:
                    yield self._selector_not_permitted(policy, res)

    def _not_permitted(self, policy: Policy, res: TargetResolution, index: ProjectIndex) -> Issue:
        ref = res.ref
        assert ref.group is not None and ref.kind is not None and ref.name is not None and res.namespace is not None
        obj = policy.obj
        reference = Reference(
            obj.group,
            obj.kind,
            obj.namespace or "",
            core_group_alias(policy.profile, ref.group, ref.kind),
            ref.kind,
            res.namespace,
            ref.name,
        )
        message = (
            f"{obj.kind} {where(obj)} is not permitted to reference {ref.kind} {res.namespace}/{ref.name}: the target is in"
            f" another namespace and no ReferenceGrant in namespace {res.namespace} accepts {obj.kind} from namespace"
            f' {obj.namespace}, so the policy does not attach (GEP-713 "Cross namespace references": the target\'s'
            f" namespace must accept the policy through a handshake)"
        )
        fix = grant_fix(
            reference, index.lookup(reference.to_group, reference.to_kind, reference.to_namespace, reference.to_name), res.grant
        )
        return self.issue(
            obj, ref.path, message, related=near_miss_related(res.grant), hint=sentence(reference.grant_hint()), fix=fix
        )

    def _own_namespace_only(self, policy: Policy, res: TargetResolution) -> Issue:
        ref = res.ref
        obj = policy.obj
        message = (
            f"{obj.kind} {where(obj)} cannot target {ref.kind} {res.namespace}/{ref.name}: its controller attaches"
            f" {obj.kind} only to a target in the policy's own namespace, and no ReferenceGrant changes that, so the"
            " policy does not attach"
        )
        hint = f"Create the policy in namespace {res.namespace}, or remove namespace: {ref.namespace} from the reference."
        return self.issue(obj, join(ref.path, "namespace"), message, hint=hint)

    def _forbidden(self, policy: Policy, res: TargetResolution) -> Issue:
        ref = res.ref
        obj = policy.obj
        profile = policy.profile
        own = policy_namespace(policy)
        message = (
            f"{obj.kind} {where(obj)} cannot reference another namespace: {profile.kind} target references have no"
            f" namespace field, so the API server prunes namespace: {ref.namespace} (or rejects the policy under strict"
            f" field validation) and looks the target up in the policy's own namespace {own}"
        )
        if res.accepted and res.target is not None:
            message += f", where it resolves to {res.target.kind} {where(res.target)}: probably not the object meant"
        elif res.detail == Resolved.OBJECT_NOT_FOUND:
            message += f", where there is no {ref.kind} {ref.name}"
        message += f' (GEP-713 "Cross namespace references"); create the policy in namespace {ref.namespace}'
        targets = profile.targets
        if targets.selectors and targets.selector_namespaces:
            message += (
                f", or select the target with {targets.selectors} (namespaces.from: All or Selector) and a ReferenceGrant in"
                f" namespace {ref.namespace}"
            )
        return self.issue(obj, join(ref.path, "namespace"), message)

    def _selector_not_permitted(self, policy: Policy, res: TargetResolution) -> Issue:
        target = res.target
        assert target is not None and res.namespace is not None
        obj = policy.obj
        reference = Reference(obj.group, obj.kind, obj.namespace or "", target.group, target.kind, res.namespace, target.name)
        message = (
            f"{obj.kind} {where(obj)} is not permitted to reference {target.kind} {where(target)}, which {field_name(res.ref.path)}"
            f" matches in another namespace: no ReferenceGrant in namespace {res.namespace} accepts {obj.kind} from namespace"
            f" {obj.namespace}, and the controller silently ignores such a match, so the policy does not apply to it"
            f' (GEP-713 "Cross namespace references")'
        )
        hint = sentence(f"{reference.grant_hint()}, or narrow the selector")
        related = [Related(f"{target.kind} {where(target)} matches the selector", object=target, path=_labels_path(target))]
        related += near_miss_related(res.grant)
        return self.issue(obj, res.ref.path, message, related=related, severity=Severity.WARNING, hint=hint)


def _refused_by_its_crd(project: Project, policy: Policy, path: str) -> bool:
    """Whether the policy's CRD itself refuses the field at `path` (Istio's CEL "cross namespace
    referencing is not currently supported"): PL703/PL704 report it, with the CRD's words."""
    verdict = project.admissions().verdict(policy.obj)
    return verdict is not None and any(r.path == path for r in (*verdict.schema, *verdict.cel))


def forbidden_namespace(policy: Policy, raw: object, namespace: str | None) -> bool:
    """A `namespace` other than the policy's own on a reference type that has no namespace field.

    PL205 reports the field when it names the policy's own namespace (harmless); this is the
    cross-namespace case, so PL205 leaves it to PL401.
    """
    own = policy_namespace(policy)
    return (
        not policy.profile.targets.namespace
        and isinstance(raw, dict)
        and "namespace" in raw
        and bool(own)
        and bool(namespace)
        and namespace != own
    )


class CrossNamespaceReferenceNotPermitted(Rule):
    """A backend, certificate or CA reference points into another namespace without a ReferenceGrant there."""

    id = "PL402"
    name = "cross-namespace-reference-not-permitted"
    severity = Severity.ERROR
    fixable = "unsafe"
    subjects = ROUTES | HOLDER_KINDS | {"Gateway", "ListenerSet", POLICY}
    reads = frozenset({Stage.TOPOLOGY})

    def check(self, project: Project) -> Iterable[Issue]:
        topology = project.topology()
        for obj in project.index.objects:
            for ref in topology.refs_from(obj):
                if ref.status == ReferenceStatus.REF_NOT_PERMITTED:
                    yield self._issue(obj, ref, project.index, topology)

    def _issue(self, owner: K8sObject, ref: ObjectRef, index: ProjectIndex, topology: Topology) -> Issue:
        owner_ns = owner.namespace or ""
        reference = ref.grant_reference()
        noun = _NOUN.get(ref.purpose, "reference")
        consequence = _REFUSED.get(ref.purpose, "the controller refuses this reference (RefNotPermitted)")
        severity = None
        if ref.purpose in _POLICY_PURPOSES:
            # A policy's own reference: its controller fails the policy, under the conditions its
            # profile names (Envoy Gateway: Accepted=False, Invalid, "ref to Secret ns/name not
            # permitted by any ReferenceGrant"; translator test securitypolicy-with-oidc-invalid-secretref).
            consequence = ref.effect or f"the policy is refused ({ref.not_permitted_status or 'Accepted=False, Invalid'})"
        elif ref.purpose == "ca-certificate":
            listeners = topology.frontend_listeners(ref)
            if listeners:
                consequence = f"{listeners_get(owner, listeners)} {consequence}"
            else:
                # No listener uses this configuration: no status changes, said as info.
                consequence = f"{frontend_scope(ref)}, and no listener's status changes"
                severity = Severity.INFO
        message = (
            f"{owner.kind} {where(owner)} is not permitted to reference {ref.label()}: the {noun} is in another namespace"
            f" and no ReferenceGrant in namespace {ref.namespace} permits it for {owner.kind} from namespace {owner_ns}"
            f" (Gateway API ReferenceGrant), so {consequence}"
        )
        near = ref.grant.near_misses if ref.grant is not None else ()
        message += f"; {near[0].reason}" if near else ""
        # Looked up by the group the reference resolved to, which the grant may not name (`grant_group`).
        fix = grant_fix(reference, index.lookup(ref.group, ref.kind, ref.namespace, ref.name), ref.grant)
        return self.issue(
            owner,
            ref.path,
            message,
            related=near_miss_related(ref.grant),
            hint=sentence(reference.grant_hint()),
            fix=fix,
            severity=severity,
        )


def grant_fix(reference: Reference, referent: K8sObject | None, check: GrantCheck | None = None) -> Fix | None:
    """The edit that permits `reference`: a `from` entry added to the ReferenceGrant the finding's
    note names when that grant already lets others reach the object (`extensible_grant`), else a
    ReferenceGrant narrowed to the one object, appended to the referent's file. Unsafe either way:
    the referent's namespace starts trusting another namespace, which is its owners' decision
    (Gateway API ReferenceGrant: the handshake exists so that they make it)."""
    if referent is None:
        return None  # nothing to grant access to yet: the missing object is the problem
    source = {"group": reference.from_group, "kind": reference.from_kind, "namespace": reference.from_namespace}
    grant = extensible_grant(reference, check)
    if grant is not None:
        # A second grant beside the one that almost permits it would leave two places to review
        # and to revoke for one trust relation.
        return Fix(
            f"add {reference.from_kind} from namespace {reference.from_namespace} to ReferenceGrant"
            f" {grant.namespace}/{grant.obj.name}",
            (Edit("spec.from", value=source, extend=True, within=grant.obj),),
            safe=False,
        )
    document = {
        "apiVersion": "gateway.networking.k8s.io/v1beta1",
        "kind": "ReferenceGrant",
        "metadata": {
            "name": f"allow-{reference.from_kind.lower()}-from-{reference.from_namespace}",
            "namespace": reference.to_namespace,
        },
        "spec": {
            "from": [source],
            "to": [{"group": reference.to_group, "kind": reference.to_kind, "name": reference.to_name}],
        },
    }
    return Fix(
        f"add a ReferenceGrant in namespace {reference.to_namespace}",
        (Edit("", value=document, append_to=referent),),
        safe=False,
    )


def extensible_grant(reference: Reference, check: GrantCheck | None) -> Grant | None:
    """The first grant of the check's near misses (the one the finding's note names first) that
    lives in the referent's namespace and whose `to` already admits the referent, so that one more
    `from` entry permits the reference. A grant whose `to` names another object is left alone: a
    `from` added there would not permit this reference, and a `to` added there would open the new
    object to every namespace the grant already trusts."""
    for miss in check.near_misses if check is not None else ():
        grant = miss.grant
        if grant.namespace != reference.to_namespace or grant.malformed or not isinstance(grant.obj.spec.get("from"), list):
            continue
        if any(
            (t.group, t.kind) == (reference.to_group, reference.to_kind) and t.name in (None, reference.to_name)
            for t in grant.targets
        ):
            return grant
    return None


class ReferenceGrantInWrongNamespace(Rule):
    """A ReferenceGrant sits in the referrer's namespace, or a `from` entry names the grant's own namespace."""

    id = "PL403"
    name = "reference-grant-in-wrong-namespace"
    severity = Severity.WARNING
    subjects = frozenset({"ReferenceGrant"})
    reads = frozenset({Stage.TOPOLOGY})

    def check(self, project: Project) -> Iterable[Issue]:
        misplaced = project.derived(_misplaced)
        grants = project.resolution.grants()
        for grant in grants.grants:
            found = misplaced.get(grant)
            if found is not None:
                yield self._misplaced(grant, found[1], used=is_used(grants, grant))
                continue
            for i, source in enumerate(grant.sources):
                if source.namespace == grant.namespace:
                    yield self._self_namespace(grant, i)

    def _misplaced(self, grant: Grant, refs: Sequence[CheckedReference], *, used: bool) -> Issue:
        obj = grant.obj
        namespaces = sorted({c.reference.to_namespace for c in refs})
        kinds = ", ".join(sorted({c.owner.kind for c in refs}))
        place = f"namespace {namespaces[0]}" if len(namespaces) == 1 else f"each of the namespaces {', '.join(namespaces)}"
        message = (
            f"ReferenceGrant {where(obj)} is in namespace {grant.namespace}, the namespace of the referring {kinds}, but a grant"
            f" must live in the namespace of the referenced objects, {' and '.join(namespaces)} (Gateway API ReferenceGrant):"
            f" here it {'permits other references, but not these' if used else 'permits nothing'}"
        )
        if any(f.namespace == grant.namespace for f in grant.sources):
            message += ", and a from entry naming its own namespace never authorises anything"
        if used:
            message += f"; create a grant with the same from and to entries in {place}"
        else:
            message += f"; move it to {place}"
        related = [
            Related(f"{c.owner.kind} {where(c.owner)} references {c.label()} here", object=c.owner, path=c.path)
            for c in refs[:_MAX_RELATED]
        ]
        return self.issue(obj, "metadata.namespace", message, related=related)

    def _self_namespace(self, grant: Grant, i: int) -> Issue:
        obj = grant.obj
        source = grant.sources[i]
        message = (
            f"{field_name(source.path)} of ReferenceGrant {where(obj)} names the grant's own namespace {grant.namespace}: references"
            " within one namespace never need a grant (Gateway API ReferenceGrant), so this entry authorises nothing;"
            " a grant lives in the namespace of the referenced objects and its from entries name the referrers'"
            f" namespaces — if {source.kind} objects in namespace {grant.namespace} must reference objects in another"
            " namespace, create the grant in that namespace with this from entry"
        )
        return self.issue(obj, join(source.path, "namespace"), message)


class ReferenceGrantUnused(Rule):
    """A ReferenceGrant authorises no reference in the input."""

    id = "PL404"
    name = "reference-grant-unused"
    severity = Severity.INFO
    subjects = frozenset({"ReferenceGrant"})
    reads = frozenset({Stage.TOPOLOGY})

    def check(self, project: Project) -> Iterable[Issue]:
        # Every reference checked first: fills grants.used.
        misplaced = project.derived(_misplaced)
        grants = project.resolution.grants()
        checked = self._checked_referrers(project)
        undecided: list[Reference] | None = None  # worked out on the first grant that needs it
        for grant in grants.grants:
            if is_used(grants, grant):
                continue
            if grant in misplaced or self_namespace_only(grant):
                continue  # PL403 says why it permits nothing
            if grant.malformed or any(project.index.has_malformed(f.group, f.kind, f.namespace) for f in grant.sources):
                # PL010 reports the field that makes the API server reject the grant, or a referrer
                # it is meant for, whose references are then unknown: one finding per cause.
                continue
            if any((f.group, f.kind) not in checked for f in grant.sources):
                continue  # references from that kind are not modelled: it may well be used
            if undecided is None:
                undecided = self._undecided_references(project)
            if any(may_permit(grant, ref) for ref in undecided):
                continue  # a reference that may or may not be made (PL420): no finding rests on it
            yield self._issue(grant)

    @staticmethod
    def _undecided_references(project: Project) -> list[Reference]:
        """The references policies may make into other namespaces: their selectors' matches in a
        namespace whose selector match is unknown (NamespaceMatch.UNKNOWN), neither targets nor not."""
        out: list[Reference] = []
        for policy in project.resolution.policies():
            own = policy.obj.namespace or ""
            for u in project.resolution.undecided_targets(policy):
                if u.namespace != own:
                    gk = policy.profile.gk
                    out.append(Reference(gk[0], gk[1], own, u.target.group, u.target.kind, u.namespace, u.target.name))
        return out

    @staticmethod
    def _checked_referrers(project: Project) -> set[tuple[str, str]]:
        """Kinds whose references into other namespaces policylint resolves: grants from them are judged."""
        kinds = set(LISTENER_PARENTS)
        kinds |= {(GATEWAY_GROUP, k) for k in ROUTE_KINDS}
        kinds |= {p.gk for p in project.resolution.profiles}
        kinds |= {p.profile.gk for p in project.resolution.policies()}
        return kinds

    def _issue(self, grant: Grant) -> Issue:
        obj = grant.obj
        if not grant.sources or not grant.targets:
            missing = "from" if not grant.sources else "to"
            message = (
                f"ReferenceGrant {where(obj)} has no complete {missing} entry (from needs group, kind and namespace; to"
                " needs group and kind), so it authorises nothing; the API server rejects such a grant"
            )
            return self.issue(obj, join("spec", missing) if missing in obj.spec else "spec", message)
        referrers = " or ".join(f"{f.kind} in namespace {f.namespace}" for f in grant.sources)
        targets = " or ".join(f"{t.kind} {t.name}" if t.name else f"any {t.kind}" for t in grant.targets)
        message = (
            f"ReferenceGrant {where(obj)} authorises no reference in the input: no {referrers} references {targets} in"
            f" namespace {grant.namespace}; referrers outside this repository may still rely on it — if none do, remove it,"
            " since a stale grant silently admits references created later (Gateway API ReferenceGrant)"
        )
        return self.issue(obj, "metadata.name", message)


class TargetSelectorMatchesNothing(Rule):
    """A policy's label selector (targetSelectors) matches no object, so it adds no target."""

    id = "PL414"
    name = "target-selector-matches-nothing"
    severity = Severity.WARNING
    subjects = frozenset({POLICY})
    reads = frozenset({Stage.TOPOLOGY})

    def check(self, project: Project) -> Iterable[Issue]:
        topology: Topology | None = None
        for policy in project.resolution.policies():
            selectors = project.resolution.selectors(policy)
            if not selectors:
                continue
            # A selector whose matches are undecided may select something: PL420 says so, not this.
            matched = {res.selector for res in project.resolution.selector_targets(policy)}
            matched |= {u.selector for u in project.resolution.undecided_targets(policy)}
            for i, sel in enumerate(selectors):
                if sel.error is not None or sel.kind is None or i in matched:
                    continue
                if topology is None:
                    topology = project.topology()
                yield self._issue(project, topology, policy, sel)

    def _issue(self, project: Project, topology: Topology, policy: Policy, sel: TargetSelector) -> Issue:
        assert sel.kind is not None
        obj = policy.obj
        own = obj.namespace
        scope = _scope(sel, own)
        candidates = [o for o in project.index.of_kind(sel.group, sel.kind) if _eligible(topology, sel, own, o.namespace)]
        labels = ", ".join(_requirement(r) for r in sel.label_selector.requirements)
        if not candidates:
            reason = f"there is no {sel.kind} in {scope} in the input"
        else:
            reason = f"no {sel.kind} in {scope} has labels {labels}"
        message = f'{field_name(sel.path)} of {obj.kind} {where(obj)} matches no {sel.kind}: {reason}, so it adds no target (GEP-713 "Label selectors")'
        matches = self._near_matches(project, topology, policy, sel, sel.kind, candidates)
        targets = policy.profile.targets
        if targets.kinds and not targets.allows(sel.group, sel.kind):
            allowed = ", ".join(str(k) for k in targets.kinds)
            matches.note(f"{policy.profile.kind} does not accept {sel.kind} targets at all (allowed: {allowed})")
        severity = None
        if _external_may_match(project, sel, own):
            severity = Severity.INFO
            matches.note(f"{sel.kind} objects declared external (--external) may match")
        return self.issue(obj, sel.path, message + matches.suffix(), related=matches.related, severity=severity)

    @staticmethod
    def _near_matches(
        project: Project,
        topology: Topology,
        policy: Policy,
        sel: TargetSelector,
        kind: str,
        candidates: Sequence[K8sObject],
    ) -> NearMatches:
        """`kind` is `sel.kind`, which the caller has checked is set."""
        matches = NearMatches()
        # An object whose labels miss by one requirement: a typo in a value or a key.
        for cand in candidates:
            failing = sel.label_selector.failing(cand.labels)
            if len(failing) == 1 and not matches.full:
                matches.add(
                    f"{cand.kind} {where(cand)} has {_actual(failing[0], cand.labels)}, the selector wants {_requirement(failing[0])}",
                    cand,
                    note=f"{cand.kind} {where(cand)} almost matches",
                    path=_labels_path(cand),
                )
        # Matching objects in namespaces the selector does not consider.
        own = policy.obj.namespace
        for cand in project.index.of_kind(sel.group, kind):
            if matches.full or not sel.label_selector.matches(cand.labels):
                continue
            if _eligible(topology, sel, own, cand.namespace):
                continue
            grant = "" if cand.namespace == own else f" and add a ReferenceGrant in namespace {cand.namespace}"
            if sel.namespaces_from == "Selector":
                fix = f"its Namespace's labels do not match {sel.namespace_selector or LabelSelector()}: label it or widen namespaces.selector{grant}"
            elif policy.profile.targets.selector_namespaces:
                fix = f"set namespaces.from: All or Selector{grant}"
            else:
                fix = f"{policy.profile.kind} selectors match only in the policy's own namespace"
            matches.add(
                f"{cand.kind} {where(cand)} has the labels but is in namespace {cand.namespace}; {fix}",
                cand,
                note=f"{cand.kind} {where(cand)} matches the labels",
                path=_labels_path(cand),
            )
        return matches


def _scope(sel: TargetSelector, own: str | None) -> str:
    if sel.namespaces_from == "All":
        return "any namespace"
    if sel.namespaces_from == "Selector":
        return f"namespaces matching {sel.namespace_selector or LabelSelector()}"
    return f"namespace {own}"


def _eligible(topology: Topology, sel: TargetSelector, own: str | None, namespace: str | None) -> bool:
    """The namespaces `Project.selector_targets` considers (Envoy Gateway `namespaces.from`,
    docs/semantics.md#label-selectors)."""
    # UNKNOWN counts as considered: "in a namespace the selector does not take" would rest on
    # labels the input does not show.
    return namespace is None or topology.resolution.selector_namespace(sel, own, namespace) is not NamespaceMatch.NO_MATCH


def _requirement(req: Requirement) -> str:
    """`app=web` for a matchLabels entry, the selector syntax otherwise (`tier in (a, b)`, `!canary`)."""
    if req.operator == "In" and len(req.values) == 1:
        return f"{req.key}={req.values[0]}"
    return str(req)


def _actual(req: Requirement, labels: Mapping[str, str]) -> str:
    if req.key in labels:
        return f"{req.key}={labels[req.key]}"
    return f"no {req.key} label"


def _labels_path(obj: K8sObject) -> str:
    return "metadata.labels" if obj.labels else "metadata"


def _external_may_match(project: Project, sel: TargetSelector, own: str | None) -> bool:
    assert sel.kind is not None
    external = project.index.options.external
    if own and external.covers_namespace(sel.group, sel.kind, own):
        return True
    if sel.namespaces_from == "Same":
        return False
    return any(
        fnmatch.fnmatchcase(sel.kind.lower(), p.kind) and (p.group is None or fnmatch.fnmatchcase(sel.group, p.group))
        for p in external.patterns
    )


# Objects named in one PL420 message; the others are counted.
_UNDECIDED_SHOWN = 5


class TargetSelectorNamespaceUnknown(Rule):
    """A target selector's `namespaces.selector` meets Namespaces that are not in the input: whether it selects the objects there cannot be decided."""

    id = "PL420"
    name = "target-selector-namespace-unknown"
    severity = Severity.INFO
    subjects = frozenset({POLICY})

    def check(self, project: Project) -> Iterable[Issue]:
        resolution = project.resolution
        for policy in resolution.policies():
            undecided = resolution.undecided_targets(policy)
            if not undecided:
                continue
            selectors = resolution.selectors(policy)
            for i in sorted({u.selector for u in undecided}):
                sel = selectors[i]
                matches = sorted(
                    (u for u in undecided if u.selector == i), key=lambda u: (u.namespace, u.target.kind, u.target.name)
                )
                yield self._issue(policy, sel, matches)

    def _issue(self, policy: Policy, sel: TargetSelector, matches: Sequence[UndecidedMatch]) -> Issue:
        obj = policy.obj
        namespaces = sorted({u.namespace for u in matches})
        shown = ", ".join(f"{u.target.kind} {where(u.target)}" for u in matches[:_UNDECIDED_SHOWN])
        if len(matches) > _UNDECIDED_SHOWN:
            shown += f" and {len(matches) - _UNDECIDED_SHOWN} more"
        plural = "s" if len(namespaces) > 1 else ""
        message = (
            f"{field_name(sel.path)} of {obj.kind} {where(obj)} matches the labels of {shown}, but whether"
            f" namespaces.selector ({sel.namespace_selector or LabelSelector()}) takes Namespace{plural}"
            f" {', '.join(namespaces)} cannot be decided: {'they are' if plural else 'it is'} not in the input, so"
            " only the name label is known; these matches are left out, and no finding rests on them"
        )
        hint = (
            f"Add the Namespace manifest{plural} ({', '.join(namespaces)}) to the input or a --context path, or run with"
            " --complete if the input is the whole cluster."
        )
        return self.issue(obj, join(sel.path, "namespaces"), message, hint=hint)


RULES: list[type[Rule]] = [
    CrossNamespaceTargetNotPermitted,
    CrossNamespaceReferenceNotPermitted,
    ReferenceGrantInWrongNamespace,
    ReferenceGrantUnused,
    TargetSelectorMatchesNothing,
    TargetSelectorNamespaceUnknown,
]
