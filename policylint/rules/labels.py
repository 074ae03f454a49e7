"""PL5xx: label conventions.

The `gateway.networking.k8s.io/policy` label on a policy CRD is how tools (gwctl,
kubectl plugins, policylint itself) discover policy kinds and their class
(GEP-2648 "Standard label on CRD objects"; docs/semantics.md#label-conventions). Labels,
annotations and label selectors must also be syntactically valid, or the API
server rejects the object (apimachinery validation, "Syntax and character set").

The CRD helpers below read `spec.versions[].schema.openAPIV3Schema` defensively
(any field may have the wrong type; nothing raises) and take the allowed target
kinds from `policylint.profiles.crd.crd_facts`, so label rules and profiles agree.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping
from typing import TYPE_CHECKING, Any

from policylint.findings import Edit, Fix, Issue, Related, Severity
from policylint.identity import IdentityMap
from policylint.input.positions import join
from policylint.k8s.names import DNS1123_SUBDOMAIN
from policylint.k8s.objects import K8sObject
from policylint.profiles.crd import crd_facts
from policylint.project import Project
from policylint.rules.base import Rule, UnitRule
from policylint.textsafe import short_repr
from policylint.values import frozen

if TYPE_CHECKING:
    from policylint.profiles.policy import Policy

POLICY_LABEL = "gateway.networking.k8s.io/policy"
# The original Policy Attachment page ("Kubectl Plugin") asked for this label; GEP-713 dropped it.
LEGACY_POLICY_LABEL = "gateway.networking.k8s.io/policy-attachment"
POLICY_LABEL_VALUES = ("direct", "inherited", "true")  # compared case-insensitively, as gwctl does

TARGET_FIELDS = ("targetRef", "targetRefs", "targetSelectors")
# Both boilerplate styles: GEP-713 `defaults`/`overrides` and the policy-attachment style's
# `default`/`override` (docs/semantics.md#two-boilerplate-styles).
MERGE_FIELDS = ("defaults", "overrides", "default", "override")

# Levels of the Gateway API hierarchy (GEP-713 "Hierarchy of target kinds"). GEP-2648: a Direct
# policy "can only be attached at exactly one layer in the hierarchy". A kind not listed here is
# counted as a layer of its own.
TARGET_LAYERS = {
    "GatewayClass": "gatewayclass",
    "Gateway": "gateway",
    "ListenerSet": "gateway",
    "HTTPRoute": "route",
    "GRPCRoute": "route",
    "TCPRoute": "route",
    "TLSRoute": "route",
    "UDPRoute": "route",
    "Service": "backend",
    "ServiceImport": "backend",
    "XBackend": "backend",
}

# Kubernetes label syntax (k8s.io/apimachinery/pkg/util/validation: IsQualifiedName, IsValidLabelValue).
_NAME = re.compile(r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$")
NAME_MAX = 63
PREFIX_MAX = 253
SELECTOR_OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist")


# -- CRD inspection ----------------------------------------------------------------------


@frozen
class CrdShape:
    """What the label rules need to know about a CRD, read defensively."""

    kind: str | None
    plural: str | None
    # spec field name -> path of its schema in the first version that declares it
    spec_fields: Mapping[str, str]
    # target kinds the schema allows (CEL rules and enums on the target fields)
    target_kinds: tuple[str, ...]

    @property
    def has_target_fields(self) -> bool:
        return any(f in self.spec_fields for f in TARGET_FIELDS)

    @property
    def merge_fields(self) -> list[str]:
        return [f for f in MERGE_FIELDS if f in self.spec_fields]

    @property
    def target_layers(self) -> list[str]:
        layers: list[str] = []
        for kind in self.target_kinds:
            layer = TARGET_LAYERS.get(kind, kind)
            if layer not in layers:
                layers.append(layer)
        return layers


def _get(node: Any, *keys: str) -> Any:
    for key in keys:
        node = node.get(key) if isinstance(node, dict) else None
    return node


def crd_shape(crd: K8sObject) -> CrdShape:
    """Kind, plural, spec fields (every version, with the path of each) and allowed target kinds."""
    names = _get(crd.data, "spec", "names")
    kind = _get(names, "kind")
    plural = _get(names, "plural")
    fields: dict[str, str] = {}
    versions = _get(crd.data, "spec", "versions")
    for i, version in enumerate(versions if isinstance(versions, list) else []):
        props = _get(version, "schema", "openAPIV3Schema", "properties", "spec", "properties")
        if not isinstance(props, dict):
            continue
        base = join("spec.versions", i, "schema", "openAPIV3Schema", "properties", "spec", "properties")
        for name in props:
            if isinstance(name, str):
                fields.setdefault(name, join(base, name))
    # The kinds the API server enforces (enums and CEL on the target fields), as profiles read them.
    kinds = crd_facts(crd.data).allowed_kinds or ()
    return CrdShape(kind if isinstance(kind, str) else None, plural if isinstance(plural, str) else None, fields, tuple(kinds))


def is_policy_crd(crd: K8sObject, shape: CrdShape | None = None) -> bool:
    """A CRD that declares a policy kind: labelled as one, or a `*Policy` kind with target fields."""
    if POLICY_LABEL in crd.labels or LEGACY_POLICY_LABEL in crd.labels:
        return True
    shape = shape or crd_shape(crd)
    return bool(shape.kind and shape.kind.endswith("Policy") and shape.has_target_fields)


def label_path(key: str) -> str:
    return join("metadata.labels", key)


# -- label syntax ------------------------------------------------------------------------


def qualified_name_problem(key: str) -> str | None:
    """Why `key` is not a Kubernetes qualified name (`[prefix/]name`), or None when it is."""
    parts = key.split("/")
    if len(parts) > 2:
        return "it has more than one '/'"
    if len(parts) == 2:
        prefix, name = parts
        if not prefix:
            return "the prefix before '/' is empty"
        if len(prefix) > PREFIX_MAX:
            return f"the prefix is {len(prefix)} characters long (at most {PREFIX_MAX})"
        if not DNS1123_SUBDOMAIN.match(prefix):
            return f"the prefix {prefix!r} is not a DNS-1123 subdomain (lowercase letters, digits, '-', '.')"
    else:
        name = parts[0]
    if not name:
        return "the name part is empty"
    if len(name) > NAME_MAX:
        return f"the name part is {len(name)} characters long (at most {NAME_MAX})"
    if not _NAME.match(name):
        return f"the name part {name!r} {_name_syntax(name)}"
    return None


def _name_syntax(text: str) -> str:
    """Why `text` does not match `([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]`."""
    bad = next((c for c in text if not (c.isascii() and (c.isalnum() or c in "-_."))), None)
    if bad is not None:
        return f"contains {bad!r} (only letters, digits, '-', '_' and '.' are allowed)"
    return "must start and end with a letter or digit"


def label_value_problem(value: str) -> str | None:
    """Why `value` is not a valid label value, or None when it is (empty is valid)."""
    if value == "":
        return None
    if len(value) > NAME_MAX:
        return f"it is {len(value)} characters long (at most {NAME_MAX})"
    if not _NAME.match(value):
        return f"it {_name_syntax(value)}"
    return None


# -- rules -------------------------------------------------------------------------------


def _policy_crds(project: Project) -> Iterator[tuple[K8sObject, CrdShape]]:
    for crd in editable_crds(project):
        shape = crd_shape(crd)
        if is_policy_crd(crd, shape):
            yield crd, shape


def editable_crds(project: Project) -> Iterator[K8sObject]:
    """The CRDs in the input their owners can change: not those of a project policylint ships a
    profile for (a vendored Envoy Gateway or NGINX Gateway Fabric CRD is fixed upstream, so advice
    to edit it is noise). The labels and names rules read only these."""
    vendors = project.resolution.profiles.vendor_groups()
    for crd in project.index.crds():
        group = crd.spec.get("group")
        # A vendor's group or a subdomain of it (extensions.kuadrant.io is Kuadrant's).
        if not (isinstance(group, str) and any(group == v or group.endswith("." + v) for v in vendors)):
            yield crd


def _crd_label(project: Project) -> Iterator[tuple[K8sObject, CrdShape, str]]:
    """Policy CRDs that carry the policy label, with its value."""
    for crd, shape in _policy_crds(project):
        value = crd.labels.get(POLICY_LABEL)
        if value is not None:
            yield crd, shape, value


def _advice(shape: CrdShape) -> str:
    """The label to add, and why; `direct` only as a guess when nothing in the schema says inherited."""
    if shape.merge_fields:
        return f"`{POLICY_LABEL}: inherited` (its schema has {' and '.join(shape.merge_fields)})"
    if len(shape.target_layers) > 1:
        return f"`{POLICY_LABEL}: inherited` (it can target {', '.join(shape.target_kinds)})"
    return f"`{POLICY_LABEL}: direct` if it only affects the object it targets, `inherited` otherwise"


class PolicyCrdMissingLabel(Rule):
    """A policy CRD (a `*Policy` kind with target fields) has no `gateway.networking.k8s.io/policy` label."""

    id = "PL501"
    name = "policy-crd-missing-label"
    severity = Severity.WARNING
    subjects = frozenset({"CustomResourceDefinition"})
    fixable = "unsafe"

    def check(self, project: Project) -> Iterable[Issue]:
        for crd in editable_crds(project):
            shape = crd_shape(crd)
            if not (shape.kind and shape.kind.endswith("Policy") and shape.has_target_fields):
                continue
            if POLICY_LABEL in crd.labels:
                continue
            legacy = f" (it has the obsolete {LEGACY_POLICY_LABEL} label instead)" if LEGACY_POLICY_LABEL in crd.labels else ""
            has_labels = isinstance(_get(crd.data, "metadata", "labels"), dict)
            # Only a class the schema shows is fixed; `direct` would be a guess (unsafe either way:
            # tools start treating the kind as that class).
            inherited = bool(shape.merge_fields) or len(shape.target_layers) > 1
            fix = Fix(f"add {POLICY_LABEL}: inherited", (Edit(label_path(POLICY_LABEL), value="inherited"),), safe=False)
            yield self.issue(
                crd,
                "metadata.labels" if has_labels else "metadata",
                f"the CRD of policy kind {shape.kind} has no {POLICY_LABEL} label{legacy}, so tools cannot discover"
                f" it (GEP-2648); add {_advice(shape)}",
                fix=fix if inherited else None,
            )


class PolicyLabelInvalidValue(Rule):
    """The `gateway.networking.k8s.io/policy` label on a CRD is not `direct`, `inherited` or `true`."""

    id = "PL502"
    name = "policy-label-invalid-value"
    severity = Severity.ERROR
    subjects = frozenset({"CustomResourceDefinition"})

    def check(self, project: Project) -> Iterable[Issue]:
        for crd, shape, value in _crd_label(project):
            if value.strip().lower() in POLICY_LABEL_VALUES:
                continue
            yield self.issue(
                crd,
                label_path(POLICY_LABEL),
                f"{POLICY_LABEL} is {value!r}; tools only understand `direct` or `inherited` (any case),"
                f" so label-based discovery (gwctl, kubectl plugins) misses {shape.kind or 'this kind'}; use {_advice(shape)}",
            )


class LegacyPolicyLabel(Rule):
    """A policy CRD uses a legacy label: `policy: true`, or the obsolete `policy-attachment` label."""

    id = "PL503"
    name = "legacy-policy-label"
    severity = Severity.INFO
    subjects = frozenset({"CustomResourceDefinition"})
    # Removing the obsolete label beside the current one is safe; naming the class is not.
    fixable = "safe"

    def check(self, project: Project) -> Iterable[Issue]:
        for crd, shape in _policy_crds(project):
            value = crd.labels.get(POLICY_LABEL)
            inherited = bool(shape.merge_fields) or len(shape.target_layers) > 1
            if value is not None and value.strip().lower() == "true":
                fix = Fix(f"use {POLICY_LABEL}: inherited", (Edit(label_path(POLICY_LABEL), value="inherited"),), safe=False)
                yield self.issue(
                    crd,
                    label_path(POLICY_LABEL),
                    f"{POLICY_LABEL}: {value!r} marks {shape.kind or 'the kind'} as a policy without saying its class;"
                    f" GEP-2648 asks for `direct` or `inherited`: use {_advice(shape)}",
                    fix=fix if inherited else None,
                )
            if LEGACY_POLICY_LABEL in crd.labels:
                replacement = "remove it" if value is not None else f"replace it with {_advice(shape)}"
                remove = Edit(label_path(LEGACY_POLICY_LABEL), delete=True)
                if value is not None:
                    legacy_fix: Fix | None = Fix(f"delete {LEGACY_POLICY_LABEL}", (remove,))
                elif inherited and len(crd.labels) > 1:
                    add = Edit(label_path(POLICY_LABEL), value="inherited")
                    legacy_fix = Fix(f"replace {LEGACY_POLICY_LABEL} with {POLICY_LABEL}: inherited", (remove, add), safe=False)
                else:
                    legacy_fix = None
                yield self.issue(
                    crd,
                    label_path(LEGACY_POLICY_LABEL),
                    f"{LEGACY_POLICY_LABEL} comes from the early policy-attachment guide and was removed from GEP-713;"
                    f" no current tool reads it: {replacement}",
                    fix=legacy_fix,
                )


class DirectLabelOnInheritedShape(Rule):
    """A CRD labelled Direct can target several hierarchy levels or has defaults/overrides fields."""

    id = "PL504"
    name = "direct-label-on-inherited-shape"
    severity = Severity.WARNING
    subjects = frozenset({"CustomResourceDefinition"})

    def check(self, project: Project) -> Iterable[Issue]:
        for crd, shape, value in _crd_label(project):
            if value.strip().lower() != "direct":
                continue
            reasons: list[str] = []
            related: list[Related] = []
            layers = shape.target_layers
            if len(layers) > 1:
                reasons.append(f"its schema allows targets at {len(layers)} levels ({', '.join(shape.target_kinds)})")
            for field in shape.merge_fields:
                related.append(Related(f"{field} declared here", object=crd, path=shape.spec_fields[field]))
            if shape.merge_fields:
                reasons.append(f"it has {' and '.join(shape.merge_fields)} fields")
            if not reasons:
                continue
            yield self.issue(
                crd,
                label_path(POLICY_LABEL),
                f"{shape.kind or 'the kind'} is labelled {value!r} but {'; '.join(reasons)}: a Direct policy attaches at"
                " exactly one level and has no defaulting (GEP-2648); label it `inherited`, or narrow the schema",
                related=related,
            )


class ControllerWrittenLabel(UnitRule[K8sObject]):
    """A `*PolicyAffected` label or annotation, which controllers write, is committed in a manifest."""

    id = "PL505"
    name = "controller-written-label"
    severity = Severity.WARNING
    fixable = "safe"

    def units(self, project: Project) -> Iterable[K8sObject]:
        return project.index.objects

    def check_unit(self, project: Project, unit: K8sObject) -> Iterable[Issue]:
        for where, mapping in (("metadata.labels", unit.labels), ("metadata.annotations", unit.annotations)):
            for key in mapping:
                if key.rsplit("/", 1)[-1].endswith("PolicyAffected"):
                    yield self.issue(
                        unit,
                        join(where, key),
                        f"{key} is written by the policy controller to mark objects a policy affects (GEP-713"
                        ' "Target object status"); committed by hand it is stale or wrong as soon as policies'
                        " change: remove it from the manifest",
                        fix=Fix(f"delete {key}", (Edit(join(where, key), delete=True),)),
                    )


# (label key, value) -> what is wrong with each, for `InvalidLabelSyntax._metadata`; emptied past
# the limit, which only costs checking a label again.
_CHECKED: dict[tuple[str, str], tuple[str | None, str | None]] = {}
_CHECKED_LIMIT = 10_000
# An object's labels map -> its labels that have a problem, with the problems (key, value, what
# is wrong with the key, with the value), in the map's order. The loader makes maps of the same
# content one object (policylint.input.sharing): on the benchmark corpora 10,000 objects hold
# 1,145 label maps, so each map's labels are gone through once, not once per object that holds
# it. Keyed by identity, which holds while the loaded data is never changed; emptied past the
# limit, which only costs going through a map again.
LabelProblems = tuple[tuple[str, str, str | None, str | None], ...]
_LABEL_MAPS: IdentityMap[Mapping[str, str], LabelProblems] = IdentityMap()


def label_problems(labels: Mapping[str, str]) -> LabelProblems:
    """The labels of a map that have a problem, with what is wrong with the key and with the value
    (None: nothing), in the map's order; each distinct (key, value) checked once (`_CHECKED`)."""
    checked = _CHECKED
    if len(checked) > _CHECKED_LIMIT:
        checked.clear()
    out = []
    for key, value in labels.items():
        problems = checked.get((key, value))
        if problems is None:
            problems = checked[(key, value)] = (qualified_name_problem(key), label_value_problem(value))
        if problems[0] or problems[1]:
            out.append((key, value, problems[0], problems[1]))
    return tuple(out)


class InvalidLabelSyntax(UnitRule["K8sObject | Policy"]):
    """A label, annotation key or label selector is not valid Kubernetes syntax."""

    id = "PL506"
    name = "invalid-label-syntax"
    severity = Severity.ERROR

    def units(self, project: Project) -> Iterator[K8sObject | Policy]:
        # Every object (its metadata, and a Gateway's or ListenerSet's listeners' selectors), then
        # every policy (its target selectors, as its profile names them).
        yield from project.index.objects
        yield from project.resolution.policies()

    def check_unit(self, project: Project, unit: K8sObject | Policy) -> Iterable[Issue]:
        if isinstance(unit, K8sObject):
            yield from self._metadata(unit)
            if unit.group == "gateway.networking.k8s.io" and unit.kind in ("Gateway", "ListenerSet"):
                yield from self._listener_selectors(unit)
            return
        policy = unit
        field = policy.profile.targets.selectors
        if not field:
            return
        selectors = policy.obj.spec.get(field)
        for i, entry in enumerate(selectors if isinstance(selectors, list) else []):
            if not isinstance(entry, dict):
                continue
            # A target selector is a label selector inlined with group/kind (Envoy Gateway).
            yield from self._selector(policy.obj, entry, "spec", field, i)
            ns_selector = _get(entry, "namespaces", "selector")
            if isinstance(ns_selector, dict):
                yield from self._selector(policy.obj, ns_selector, "spec", field, i, "namespaces", "selector")
        # GEP-713 "Label selectors": a target reference may carry `selector` instead of a name.
        for ref in policy.refs:
            selector = ref.raw.get("selector") if isinstance(ref.raw, dict) else None
            if isinstance(selector, dict):
                yield from self._selector(policy.obj, selector, ref.path, "selector")

    def _metadata(self, obj: K8sObject) -> Iterator[Issue]:
        # Every object's keys and values, most of them the same few (`app`, `tenant`): each
        # distinct one is checked once (`_CHECKED`), and a path is made only for a finding.
        found = _LABEL_MAPS.get(obj.labels)
        if found is None:
            if len(_LABEL_MAPS) > _CHECKED_LIMIT:
                _LABEL_MAPS.clear()
            found = _LABEL_MAPS[obj.labels] = label_problems(obj.labels)
        for key, value, key_problem, value_problem in found:
            path = label_path(key)
            if key_problem:
                yield self.issue(obj, path, f"label key {key!r} is invalid: {key_problem}")
            if value_problem:
                yield self.issue(obj, path, f"the value {value!r} of label {key!r} is invalid: {value_problem}")
        for key in obj.annotations:
            # The API server validates annotation keys lowercased (apimachinery ValidateAnnotations).
            problem = qualified_name_problem(key.lower())
            if problem:
                yield self.issue(obj, join("metadata.annotations", key), f"annotation key {key!r} is invalid: {problem}")

    def _listener_selectors(self, obj: K8sObject) -> Iterator[Issue]:
        allowed = _get(obj.data, "spec", "allowedListeners", "namespaces", "selector")
        if isinstance(allowed, dict):
            yield from self._selector(obj, allowed, "spec.allowedListeners.namespaces.selector")
        listeners = _get(obj.data, "spec", "listeners")
        for i, listener in enumerate(listeners if isinstance(listeners, list) else []):
            selector = _get(listener, "allowedRoutes", "namespaces", "selector")
            if isinstance(selector, dict):
                yield from self._selector(obj, selector, "spec.listeners", i, "allowedRoutes", "namespaces", "selector")

    def _selector(self, obj: K8sObject, selector: Mapping[str, Any], base: str, *at: str | int) -> Iterator[Issue]:
        """metav1.LabelSelector validation (apimachinery ValidateLabelSelector) of the selector at
        `base` and `at`, joined only for a finding: every listener of every Gateway may have a
        selector, and almost none has a problem. The problems of a selector are a function of its
        content, and the same few selectors repeat across every listener of every Gateway: each
        distinct one is checked once (`_SELECTORS`). The loader makes maps of the same content one
        object (policylint.input.sharing), so that the selector of the listener before is most
        often this very one: its problems are taken without measuring and writing out the
        selector again (`_LAST_SELECTOR`)."""
        last = _LAST_SELECTOR
        if last and last[0] is selector:
            problems: tuple[Problem, ...] = last[1]
        else:
            problems = self._problems(selector)
            _LAST_SELECTOR[:] = [selector, problems]
        for parts, message in problems:
            yield self.issue(obj, join(base, *at, *parts), message)

    @staticmethod
    def _problems(selector: Mapping[str, Any]) -> tuple[Problem, ...]:
        checked = _SELECTORS
        if len(checked) > _CHECKED_LIMIT:
            checked.clear()
        if _small(selector, [_KEY_BUDGET]):
            # `repr` tells apart what equality would not (the key 1 and "1", True and 1).
            content = repr(selector)
            problems = checked.get(content)
            if problems is None:
                problems = checked[content] = tuple(_selector_problems(selector))
        else:
            # A value YAML aliases may share many times over: its repr, as a key, could take more
            # memory than there is; checked where it stands, as every value was before the memo.
            problems = tuple(_selector_problems(selector))
        return problems


Problem = tuple[tuple[str | int, ...], str]  # (path under the selector, message)

# Selector (its repr) -> its problems, for `InvalidLabelSyntax._selector`; emptied past the limit.
_SELECTORS: dict[str, tuple[Problem, ...]] = {}
# The selector checked last and its problems, for `InvalidLabelSyntax._selector`: compared by
# identity, which holds while the loaded data is never changed.
_LAST_SELECTOR: list[Any] = []
# What a selector kept by its repr may hold: strings' characters and values, in all.
_KEY_BUDGET = 4096


def _small(value: Any, budget: list[int]) -> bool:
    """Whether `value` holds at most `budget[0]` characters and values in all, counted as its
    repr would write them out (a list shared ten times counted ten times), stopping as soon as
    it is over."""
    budget[0] -= 1
    if isinstance(value, str):
        budget[0] -= len(value)
    elif isinstance(value, dict):
        for key, item in value.items():
            if budget[0] < 0 or not _small(key, budget) or not _small(item, budget):
                return False
    elif isinstance(value, list):
        for item in value:
            if budget[0] < 0 or not _small(item, budget):
                return False
    return budget[0] >= 0


def _selector_problems(selector: Mapping[str, Any]) -> Iterator[Problem]:
    match_labels = selector.get("matchLabels")
    if isinstance(match_labels, dict):
        for key, value in match_labels.items():
            at: tuple[str | int, ...] = ("matchLabels", str(key))
            if not isinstance(key, str):
                continue
            problem = qualified_name_problem(key)
            if problem:
                yield at, f"matchLabels key {key!r} is invalid: {problem}"
            if not isinstance(value, str):
                yield at, f"matchLabels value of {key!r} must be a string, not {short_repr(value)} (quote it in YAML)"
                continue
            problem = label_value_problem(value)
            if problem:
                yield at, f"matchLabels value {value!r} of {key!r} is invalid: {problem}"
    expressions = selector.get("matchExpressions")
    for j, expr in enumerate(expressions if isinstance(expressions, list) else []):
        if isinstance(expr, dict):
            for parts, message in _requirement_problems(expr):
                yield ("matchExpressions", j, *parts), message


def _requirement_problems(expr: Mapping[str, Any]) -> Iterator[Problem]:
    key, operator, values = expr.get("key"), expr.get("operator"), expr.get("values")
    if isinstance(key, str):
        problem = qualified_name_problem(key)
        if problem:
            yield ("key",), f"matchExpressions key {key!r} is invalid: {problem}"
    if operator is None:
        yield (), f"matchExpressions entry has no operator; use one of {', '.join(SELECTOR_OPERATORS)}"
        return
    if operator not in SELECTOR_OPERATORS:
        hint = next((op for op in SELECTOR_OPERATORS if isinstance(operator, str) and op.lower() == operator.lower()), None)
        fix = f"write {hint!r} (operators are case-sensitive)" if hint else f"use one of {', '.join(SELECTOR_OPERATORS)}"
        yield ("operator",), f"matchExpressions operator {short_repr(operator)} is invalid: {fix}"
        return
    if values is not None and not isinstance(values, list):
        yield ("values",), f"`values` must be a list of strings, not {short_repr(values)}"
        return
    listed = values if isinstance(values, list) else []
    if operator in ("In", "NotIn") and not listed:
        yield ("values",) if "values" in expr else (), f"operator {operator} needs at least one value in `values`"
    if operator in ("Exists", "DoesNotExist") and listed:
        yield ("values",), f"operator {operator} takes no `values`; remove them"
        return
    for k, value in enumerate(listed):
        if not isinstance(value, str):
            yield ("values", k), f"selector value {short_repr(value)} must be a string (quote it in YAML)"
            continue
        problem = label_value_problem(value)
        if problem:
            yield ("values", k), f"selector value {value!r} is invalid: {problem}"


RULES: list[type[Rule]] = [
    PolicyCrdMissingLabel,
    PolicyLabelInvalidValue,
    LegacyPolicyLabel,
    DirectLabelOnInheritedShape,
    ControllerWrittenLabel,
    InvalidLabelSyntax,
]
