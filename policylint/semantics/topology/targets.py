"""What makes a controller reject a policy (docs/semantics.md#policies-the-api-server-rejects):
on the whole (the API server refuses it, a backend it names cannot be programmed) or on one
target (a plain-HTTP port it covers in part, a target kind merged Gateways rule out, a field
the target's kind does not support)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from policylint.k8s.fieldtypes import GATEWAY_GROUP
from policylint.k8s.objects import K8sObject
from policylint.profiles.registry import PolicyProfile
from policylint.semantics.topology.listeners import Listeners
from policylint.semantics.topology.model import (
    Listener,
    TargetError,
)

if TYPE_CHECKING:
    from policylint.k8s.admissions import Admissions
    from policylint.k8s.index import Section
    from policylint.profiles.policy import Policy
    from policylint.semantics.resolution import Resolution, TargetResolution


def _proper_fields(policy: Policy) -> list[str]:
    """The fields of a policy's spec that configure something: not its targets, not what the
    profile says is about merging (`nonProperFields`, the strategy field)."""
    profile = policy.profile
    skip = {*profile.targets.fields, *profile.merge.non_proper_fields}
    if profile.merge.strategy_field:
        skip.add(profile.merge.strategy_field)
    return [k for k in policy.obj.spec if k not in skip]


def _listener_label(listener: Listener) -> str:
    owner = listener.owner
    return f"{owner.namespace}/{owner.name}/{listener.name}"


class PolicyTargets(Listeners):
    """Why a policy is rejected, on the whole or on one target."""

    def __init__(self, resolution: Resolution, admissions: Admissions) -> None:
        super().__init__(resolution, admissions)
        self._target_errors: dict[tuple[K8sObject, str, K8sObject], tuple[TargetError, ...]] = {}

    def _admission_errors(self, policy: K8sObject) -> tuple[str, ...]:
        """What the API server refuses in the policy (policylint.k8s.admission): a policy it refuses
        never reaches its controller, which is as if the controller rejected it (docs/semantics.md#policies-the-api-server-rejects).
        Unknown fields are pruned, not refused (PL702); a CEL rule not evaluated to the end decides nothing."""
        verdict = self.admissions.verdict(policy)
        if verdict is None or not verdict.rejected:
            return ()
        return tuple(f"rejected by the API server: {verdict.reason(r)}" for r in verdict.rejections())

    def _kept_admission_errors(self, policy: K8sObject) -> tuple[str, ...]:
        """`_admission_errors`, taken from the last build for the same instance: its verdict is a
        function of the object and the run's context, which the kept tables are kept under
        (policylint.semantics.topology.kept)."""
        if self._kept is None:
            return self._admission_errors(policy)
        kept = self._kept.refusals
        found = kept.get(policy)
        if found is None:
            found = self._admission_errors(policy)
            kept.resolved += 1
        else:
            kept.reused += 1
        kept.put(policy, found)
        return found

    def policy_errors(self, policy: K8sObject) -> tuple[str, ...]:
        """What in the policy's spec makes its controller reject it (Accepted=False, Invalid): what
        the API server refuses first (policylint.k8s.admission), then what the controller does."""
        return self.spec_errors.get(policy, ())

    def target_errors(self, policy: Policy, res: TargetResolution) -> tuple[TargetError, ...]:
        """What makes the controller reject the policy on this one target (Accepted=False, Invalid
        on that ancestor only): a plain-HTTP listener port it covers only in part
        (`sharedHttpPort`), a target kind that merged Gateways rule out (`mergedGateways`), or a
        field the controller does not support on that kind of target (`targetKindFields`)."""
        profile = policy.profile
        if not res.accepted or res.target is None or res.target.group != GATEWAY_GROUP:
            return ()
        if not profile.rejects_on_target:
            return ()
        # One entry per target of one reference: what the errors depend on (its kind, section and
        # listeners) is the target's, and a selector's reference resolves to several targets.
        key = (policy.obj, res.ref.path, res.target)
        found = self._target_errors.get(key)
        if found is None:
            found = self._target_errors[key] = (
                self._merged_kind_errors(profile, res.target)
                + (self._shared_port_errors(profile, res.target, res.section) if profile.shared_http_port else ())
                + self._kind_field_errors(policy, res.target)
            )
        return found

    def _kind_field_errors(self, policy: Policy, target: K8sObject) -> tuple[TargetError, ...]:
        """Spec fields the controller does not support on this kind of target (`targetKindFields`),
        in the policy's own spec or, when it merges onto its parent's (Envoy Gateway `mergeType`),
        in the spec the merge gives: the policy of the same kind on the closest parent of the route
        (a listener it attaches through, else its Gateway), as Envoy Gateway merges."""
        profile = policy.profile
        for spec in profile.target_kind_fields:
            if (target.group, target.kind) != (spec.kind.group, spec.kind.kind):
                continue
            allowed = set(spec.fields)
            extra = sorted(set(_proper_fields(policy)) - allowed)
            merged: set[str] = set()
            if profile.merge.custom == "envoy-merge-type" and isinstance(policy.obj.spec.get("mergeType"), str):
                for parent in self._closest_parent_policies(policy, target):
                    merged |= set(_proper_fields(parent)) - allowed
            where = f"{target.kind} {target.namespace}/{target.name}"
            if extra:
                return (TargetError("kind-fields", f"{spec.message} (it sets {', '.join(extra)} on {where})"),)
            if merged:
                what = ", ".join(sorted(merged))
                return (
                    TargetError(
                        "kind-fields", f"{spec.message} (merged with its parent's policy, the spec sets {what} on {where})"
                    ),
                )
        return ()

    def _closest_parent_policies(self, policy: Policy, route: K8sObject) -> list[Policy]:
        found: list[Policy] = []
        same_kind = [p for p in self.resolution.policies() if p.profile.gk == policy.profile.gk and p is not policy]
        for attachment in self.parents.get(route, []):
            gateway = attachment.parent
            if gateway is None:
                continue
            on_listener, on_gateway = [], []
            for other in same_kind:
                for res in self.resolution.targets(other):
                    if res.target is not gateway:
                        continue
                    if res.section is None:
                        on_gateway.append(other)
                    elif any(listener.section == res.section for listener in attachment.listeners):
                        on_listener.append(other)
            found.extend(on_listener or on_gateway)
        return found

    def _merged_kind_errors(self, profile: PolicyProfile, target: K8sObject) -> tuple[TargetError, ...]:
        spec = profile.merged_gateways
        if spec is None or spec.target_kind is None:
            return ()
        if target.kind == "Gateway":
            ref = self.class_refs.get(target)
            if ref is not None and ref.target is not None and self._merges(ref.target, profile):
                return (
                    TargetError(
                        "merged-gateways",
                        f"the Gateways of class {ref.target.name} are merged ({spec.parameters.kind} {spec.field}), so the"
                        f" controller reads the target as a {spec.target_kind} and finds none named {target.name}",
                    ),
                )
        elif target.kind == spec.target_kind and not self._merges(target, profile):
            return (
                TargetError(
                    "merged-gateways",
                    f"the Gateways of {spec.target_kind} {target.name} are not merged ({spec.parameters.kind} {spec.field}),"
                    " so the controller takes only a Gateway as the target",
                ),
            )
        return ()

    def _shared_port_errors(self, profile: PolicyProfile, target: K8sObject, section: Section | None) -> tuple[TargetError, ...]:
        if target.kind == "Gateway":
            gateway: K8sObject | None = target
            own = self.gateway_listeners(target)
        elif target.kind == "ListenerSet":
            attachment = self.listener_sets.get(target)
            gateway = attachment.gateway if attachment is not None and attachment.attached else None
            own = self.listeners(target)
        else:
            return ()
        if gateway is None:
            return ()
        covered = [listener for listener in own if section is None or listener.section == section]
        everyone = [listener for g in self.proxy_gateways(gateway, profile) for listener in self.gateway_listeners(g)]
        errors: list[TargetError] = []
        ports: set[int] = set()
        for listener in covered:
            if listener.protocol != "HTTP" or listener.port is None or listener.port in ports:
                continue
            if self.listener_conflict(listener) is not None:
                continue  # not accepted at all (PL416): no proxy listener serves it
            others = [
                m
                for m in everyone
                if m is not listener and m.protocol == "HTTP" and m.port == listener.port and self.listener_conflict(m) is None
            ]
            if section is None:
                # A whole-object policy covers its object's own listeners on the port as well.
                others = [m for m in others if m not in own]
            if others:
                ports.add(listener.port)
                names = ", ".join(_listener_label(m) for m in others)
                errors.append(
                    TargetError(
                        "shared-http-port",
                        f"plain-HTTP listener {_listener_label(listener)} shares port {listener.port} with {names},"
                        " which the policy does not cover: its controller serves them as one listener and rejects a"
                        " policy on only some of them",
                    )
                )
        return tuple(errors)
