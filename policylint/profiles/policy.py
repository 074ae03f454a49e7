"""Policies as their profile reads them: target references and selectors, parsed and typed.

A policy is an object whose kind has a profile (policylint.profiles.registry). Parsing reads
only the object and its profile; resolving what the references name is the next stage's work
(policylint.semantics.resolution).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Collection, Mapping
from typing import Any

from policylint.input.positions import join
from policylint.k8s.names import DNS1123_LABEL, DNS1123_SUBDOMAIN, GROUP, KIND
from policylint.k8s.objects import CLUSTER, K8sObject, ObjectKey
from policylint.k8s.selectors import LabelSelector, SelectorError, parse_selector
from policylint.profiles.registry import GATEWAY_API_REF_REQUIRED, PolicyProfile, TargetKind
from policylint.values import frozen

# Field validation of the policy target reference types (apis/v1/shared_types.go, policy_types.go;
# docs/semantics.md#target-references). The API server rejects a policy whose ref breaks these,
# so such a ref never reaches a controller: resolution reports it as InvalidRef.
GROUP_PATTERN = GROUP
KIND_PATTERN = KIND
SECTION_NAME_PATTERN = DNS1123_SUBDOMAIN
NAMESPACE_PATTERN = DNS1123_LABEL
REF_FIELDS = ("group", "kind", "name", "namespace", "sectionName")

# Each pattern's verdict per text: a run asks `ref_problems` of every policy's references several
# times (the resolution and the target reference rules), and they name few distinct groups,
# kinds and namespaces (`gateway.networking.k8s.io`, `HTTPRoute`): a match of the group's pattern
# costs about 25 times a lookup. Bounded, as the other memos of texts are.
_VERDICTS: dict[tuple[str, str], bool] = {}
_PATTERNS = {
    "group": GROUP_PATTERN,
    "kind": KIND_PATTERN,
    "namespace": NAMESPACE_PATTERN,
    "sectionName": SECTION_NAME_PATTERN,
}


def _matches(which: str, text: str) -> bool:
    """Whether the pattern `which` names ("group", "kind", "namespace", "sectionName") matches
    `text`, worked out once per distinct text while the table stays small."""
    key = (which, text)
    verdict = _VERDICTS.get(key)
    if verdict is None:
        if len(_VERDICTS) >= 4096:
            _VERDICTS.clear()
        pattern = _PATTERNS[which]
        verdict = _VERDICTS[key] = pattern.match(text) is not None
    return verdict


@frozen
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
        # A reference its kind's schema lets name no object (it selects instead).
        name = self.name if self.name is not None else "(no name)"
        return f"{self.kind} {ns}{name}{section}"


@frozen
class RefProblem:
    """A target reference value the API server rejects (schema: required, pattern, length)."""

    field: str  # group | kind | name | namespace | sectionName
    path: str  # e.g. spec.targetRefs[0].group, or the ref itself when the field is missing
    message: str
    value: Any = None


def ref_problems(ref: TargetRef, required: Collection[str] = GATEWAY_API_REF_REQUIRED) -> list[RefProblem]:
    """Schema violations of the string fields of `ref` (type errors are in `ref.errors`), with
    `required` the fields its kind's schema requires (`TargetSpec.ref_required`).

    Missing fields are reported at the reference's own path; there is no key to point at.
    """
    typed = {p.rsplit(".", 1)[-1] for p, _ in ref.errors}
    out: list[RefProblem] = []

    def at(name: str) -> str:
        return join(ref.path, name)

    if ref.group is None and "group" not in typed and "group" in required:
        where = at("group") if _has_key(ref, "group") else ref.path
        out.append(RefProblem("group", where, "group is required (policy targetRefs have no default group)"))
    elif ref.group is not None and (len(ref.group) > 253 or not _matches("group", ref.group)):
        message = f'group {ref.group!r} is not a lowercase DNS subdomain ("" is the core group)'
        out.append(RefProblem("group", at("group"), message, ref.group))
    if ref.kind is None and "kind" not in typed and "kind" in required:
        out.append(RefProblem("kind", at("kind") if _has_key(ref, "kind") else ref.path, "kind is required"))
    elif ref.kind == "":
        out.append(RefProblem("kind", at("kind"), "kind must not be empty", ref.kind))
    elif ref.kind is not None and not (len(ref.kind) <= 63 and _matches("kind", ref.kind)):
        out.append(
            RefProblem(
                "kind",
                at("kind"),
                f"kind {ref.kind!r} must be at most 63 letters, digits or '-', starting with a letter",
                ref.kind,
            )
        )
    if ref.name is None and "name" not in typed and "name" in required:
        out.append(RefProblem("name", at("name") if _has_key(ref, "name") else ref.path, "name is required"))
    elif ref.name == "":
        out.append(RefProblem("name", at("name"), "name must not be empty", ref.name))
    elif ref.name is not None and len(ref.name) > 253:
        out.append(RefProblem("name", at("name"), f"name is {len(ref.name)} characters long; at most 253 are allowed", ref.name))
    if ref.namespace is not None and not (len(ref.namespace) <= 63 and _matches("namespace", ref.namespace)):
        out.append(
            RefProblem(
                "namespace",
                at("namespace"),
                f"namespace {ref.namespace!r} is not a DNS-1123 label (lowercase letters, digits, '-', at most 63)",
                ref.namespace,
            )
        )
    if ref.section_name is not None and not (len(ref.section_name) <= 253 and _matches("sectionName", ref.section_name)):
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


@frozen
class Policy:
    obj: K8sObject
    profile: PolicyProfile
    refs: tuple[TargetRef, ...]
    shape_errors: tuple[tuple[str, str], ...] = ()  # (path, message): a targets field of the wrong type

    @property
    def key(self) -> ObjectKey:
        return self.obj.key


@frozen
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


def _target_refs(obj: K8sObject, profile: PolicyProfile) -> tuple[list[TargetRef], list[tuple[str, str]]]:
    spec = obj.spec
    refs: list[TargetRef] = []
    shape_errors: list[tuple[str, str]] = []
    single = profile.targets.single
    # What an absent field reads as: the schema's default, which the API server sets; else, for a
    # group the schema does not require, the core group, as Gateway API's Group type reads ""
    # (Linkerd: "When empty, the Kubernetes core API group is inferred").
    targets = profile.targets
    absent = dict(targets.ref_defaults)
    if "group" not in targets.ref_required:
        absent.setdefault("group", "")
    if single and single in spec and spec[single] is not None:
        value = spec[single]
        if isinstance(value, dict):
            refs.append(_parse_ref(value, join("spec", single), absent))
        else:
            shape_errors.append((join("spec", single), f"{single} must be a mapping, not {_type_name(value)}"))
    many = profile.targets.list
    if many and many in spec and spec[many] is not None:
        value = spec[many]
        if isinstance(value, list):
            for i, item in enumerate(value):
                if isinstance(item, dict):
                    refs.append(_parse_ref(item, join("spec", many, i), absent))
                else:
                    shape_errors.append((join("spec", many, i), f"each {many} entry must be a mapping, not {_type_name(item)}"))
        else:
            shape_errors.append((join("spec", many), f"{many} must be a list, not {_type_name(value)}"))
    return refs, shape_errors


def _type_name(value: Any) -> str:
    return {dict: "a mapping", list: "a list", str: "a string", bool: "a boolean", int: "a number", float: "a number"}.get(
        type(value), "null" if value is None else type(value).__name__
    )


def _parse_ref(raw: Mapping[str, Any], path: str, absent: Mapping[str, str] | None = None) -> TargetRef:
    """`absent`: what an absent (or null) group or kind reads as."""
    ref = _parse_ref_fields(raw, path)
    if absent:
        if "group" in absent and raw.get("group") is None:
            ref = dataclasses.replace(ref, group=absent["group"])
        if "kind" in absent and raw.get("kind") is None:
            ref = dataclasses.replace(ref, kind=absent["kind"])
    return ref


def _parse_ref_fields(raw: Mapping[str, Any], path: str) -> TargetRef:
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


def build_policy(obj: K8sObject, profile: PolicyProfile) -> Policy:
    refs, shape_errors = _target_refs(obj, profile)
    return Policy(obj, profile, tuple(refs), tuple(shape_errors))
