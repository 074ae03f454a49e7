"""What the effective-policy engine folds and what it finds (docs/effective-policy.md).

A policy is cut into *facets*, the strategies it declares (`policy_facets`); a context is a
path of nodes down the hierarchy (`Context`, `node_label`); a fold gives a `FoldResult`, and
each policy's standing on each target is a `TargetStatus` (Enforced, PartiallyEnforced,
Overridden, Conflicted)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import field
from datetime import datetime
from typing import TYPE_CHECKING, Any, TypeVar

from policylint.k8s.names import ns_name
from policylint.k8s.objects import ObjectKey
from policylint.profiles.registry import POLICY_ATTACHMENT, PolicyProfile
from policylint.semantics.effective.merge import (
    Tagged,
    tag,
)
from policylint.values import frozen, record
from policylint.vocabulary import Atomicity, Enforcement, Level, Role

if TYPE_CHECKING:
    from policylint.profiles.policy import Policy


# Hierarchy levels, least specific first. `namespace` is gwctl's optional level: present only
# when some policy targets a Namespace (docs/semantics.md#the-namespace-level). `port` refines a backend by a Service port.
# Node keys carry the plain word (hot path: hashed on every step of every context).
LEVELS = tuple(level.value for level in Level)
RANK = {level: i for i, level in enumerate(LEVELS)}

# How `explain` names a block's strategy (docs/semantics.md#merge-strategies).
_ATOMICITY_LABELS = {
    Atomicity.ATOMIC: "Atomic",
    Atomicity.PATCH: "Patch",
    Atomicity.RULES: "Rule-keyed",
    Atomicity.PRIORITY: "Priority-ordered",
}

_ROUTE_KINDS = ("HTTPRoute", "GRPCRoute", "TLSRoute", "TCPRoute", "UDPRoute")

# A node of the hierarchy: (level, object key, section) — section is a listener name, a rule
# position or a Service port name. Keys, not objects: stable and hashable.
NodeKey = tuple[str, ObjectKey, Any]
T = TypeVar("T")


def node_label(node: NodeKey) -> str:
    level, key, section = node
    where = ns_name(key.namespace, key.name)
    if level == "listener":
        return f"{where}#{section}"
    if level == "rule":
        # Named rules by name; an unnamed one by its field path position.
        return f"{where}#rules[{section}]" if isinstance(section, int) else f"{where}#{section}"
    if level == "port":
        return f"{where}#{section}"
    return where


@frozen(eq=False)
class Facet:
    """One strategy-bearing block of a policy attached to one node (usually one per policy)."""

    policy: Policy
    node: NodeKey
    role: Role
    atomicity: Atomicity
    tree: Tagged
    path: str  # the block's field path, e.g. spec.overrides
    merge_onto_parent: bool = False  # Envoy Gateway spec.mergeType on a route policy
    order: int = 0  # position among the policy's facets

    @property
    def rank(self) -> int:
        return RANK[self.node[0]]

    @property
    def name(self) -> str:
        key = self.policy.key
        return ns_name(key.namespace, key.name)

    def strategy_label(self) -> str:
        if self.role is Role.NONE:
            return "None"
        atom = _ATOMICITY_LABELS[self.atomicity]
        return f"{atom} {'Overrides' if self.role is Role.OVERRIDE else 'Defaults'}"


@record(slots=True)
class FoldResult:
    tree: Tagged | None
    status: dict[Facet, Enforcement]  # facet -> its enforcement in this context
    beaten_by: dict[Facet, set[str]]  # facet -> names of policies that beat it
    conflicts: dict[Facet, tuple[Facet, str]]  # loser -> (winner, why)
    order_sensitive: list[OrderSensitivity] = field(default_factory=list)
    erased: dict[Facet, int] = field(default_factory=dict)  # empty atomic override -> units it erased
    # Envoy Gateway `mergeType`: route policy facet -> names of the policies whose spec it merged
    # onto; and the facets that lost values only to such merges (the controller keeps them
    # Accepted, without an Overridden condition: it reports a merge, not an override).
    merged_with: dict[Facet, set[str]] = field(default_factory=dict)
    merged_only: frozenset[Facet] = frozenset()  # one per distinct stack, mostly empty: shared then
    # Envoy Gateway `mergeType` on a rule policy: route policy facet -> the rule policy that
    # merged onto the listener's or Gateway's policy instead, so that the route's does not apply.
    skipped: dict[Facet, Facet] = field(default_factory=dict)


@frozen
class OrderSensitivity:
    policies: tuple[str, ...]  # the same-level policies whose order decides
    decided_by: str  # "creationTimestamp" | "name"
    keys: tuple[str, ...]  # effective keys that differ
    alternative: Any  # the effective spec with the order flipped


@frozen
class Context:
    profile: PolicyProfile
    path: tuple[NodeKey, ...]
    stack: tuple[Facet, ...]
    result: FoldResult


@record(slots=True)
class TargetStatus:
    """Aggregated over every context through one (policy, target node).

    One per (policy, target) — 100k at 100k objects — so the collections are immutable and
    shared while empty (`_grow`), rather than three sets and a list each."""

    contexts: int = 0
    enforced: int = 0
    partial: int = 0
    overridden: int = 0
    conflicted: int = 0
    beaten_by: frozenset[str] = frozenset()
    ancestors: frozenset[ObjectKey] = frozenset()
    conflict: tuple[Facet, str] | None = None
    # Contexts where the policy lost values only to route policies merged onto it (mergeType),
    # and the policies it merged onto itself (as a route policy with mergeType).
    merged_away: int = 0
    merged_with: frozenset[str] = frozenset()
    overridden_in: tuple[tuple[NodeKey, ...], ...] = ()  # a few example contexts

    @property
    def enforcement(self) -> Enforcement | None:
        if self.contexts == 0 or self.conflicted == self.contexts:
            return None
        live = self.contexts - self.conflicted
        if self.enforced == live:
            return Enforcement.ENFORCED
        if self.overridden == live:
            return Enforcement.OVERRIDDEN
        return Enforcement.PARTIALLY_ENFORCED


@record(slots=True)
class Affects:
    """A policy's blast radius: the contexts where it contributes, and how many distinct routes,
    rules, listeners and Gateways they pass (counts: at 100k objects the sets behind them would be
    kept for every policy), with the backends themselves."""

    contexts: int = 0
    routes: int = 0
    rules: int = 0
    listeners: int = 0
    gateways: int = 0
    backends: set[NodeKey] = field(default_factory=set)

    def counts(self) -> dict[str, int]:
        return {
            "contexts": self.contexts,
            "routes": self.routes,
            "rules": self.rules,
            "listeners": self.listeners,
            "gateways": self.gateways,
            "backends": len(self.backends),
        }


# -- facets ----------------------------------------------------------------------------


def _timestamp(policy: Policy) -> datetime | None:
    return policy.obj.creation_timestamp


def _strategy_of(profile: PolicyProfile, block: Mapping[str, Any] | None, spec: Mapping[str, Any]) -> str | None:
    merge = profile.merge
    if not merge.strategy_field:
        return None
    for holder in (block, spec):
        if isinstance(holder, Mapping):
            value = holder.get(merge.strategy_field)
            if isinstance(value, str):
                return merge.strategies.get(value)
    return None


def _default_atomicity(profile: PolicyProfile) -> Atomicity:
    strategy = profile.merge.default
    if strategy.startswith("patch"):
        return Atomicity.PATCH
    if strategy == "custom":
        if profile.merge.custom == "envoy-patch-priority":
            return Atomicity.PRIORITY
        if profile.merge.custom == "kuadrant-rule-keyed":
            return Atomicity.RULES
    return Atomicity.ATOMIC


def _atomicity(kind: str | None, profile: PolicyProfile) -> Atomicity:
    if kind is None:
        return _default_atomicity(profile)
    if kind == "custom":
        return Atomicity.RULES if profile.merge.custom == "kuadrant-rule-keyed" else _default_atomicity(profile)
    return Atomicity(kind)  # atomic | patch


def _attachment_hierarchy(profile: PolicyProfile) -> bool:
    """Whether a kind's `default`/`override` blocks are the original policy-attachment hierarchy
    (patches, by precedence). A Direct kind's `default` is what it sets on its one target: a
    second policy on that target conflicts (GKE: "only one GCPBackendPolicy can attach to a
    Service")."""
    return profile.boilerplate == POLICY_ATTACHMENT and profile.merge.default != "none"


def policy_facets(policy: Policy, node: NodeKey) -> list[Facet]:
    """The strategy blocks of a policy, per its profile's boilerplate style."""
    profile = policy.profile
    merge = profile.merge
    spec = policy.obj.spec
    skip = {*profile.targets.fields, *merge.non_proper_fields}
    if merge.strategy_field:
        skip.add(merge.strategy_field)
    blocks = [b for b in (merge.overrides, merge.defaults) if b]
    proper = {k: v for k, v in spec.items() if k not in skip and k not in blocks}
    facets: list[Facet] = []
    merge_onto_parent = merge.custom == "envoy-merge-type" and isinstance(spec.get("mergeType"), str)

    def add(role: Role, atomicity: Atomicity, content: Any, path: str) -> None:
        facets.append(Facet(policy, node, role, atomicity, tag(content, None), path, merge_onto_parent, len(facets)))

    if profile.boilerplate == POLICY_ATTACHMENT:
        hierarchical = _attachment_hierarchy(profile)
        for role, name in ((Role.OVERRIDE, merge.overrides), (Role.DEFAULT, merge.defaults)):
            if name and isinstance(spec.get(name), dict):
                if hierarchical:
                    add(role, Atomicity.PATCH, spec[name], f"spec.{name}")
                else:
                    add(Role.NONE, Atomicity.ATOMIC, spec[name], f"spec.{name}")
        return _retag(facets)
    if merge.default == "none":
        add(Role.NONE, Atomicity.ATOMIC, proper, "spec")
        return _retag(facets)
    for role, name in ((Role.OVERRIDE, merge.overrides), (Role.DEFAULT, merge.defaults)):
        if name and isinstance(spec.get(name), dict):
            block = spec[name]
            content = {k: v for k, v in block.items() if k != merge.strategy_field}
            add(role, _atomicity(_strategy_of(profile, block, {}), profile), content, f"spec.{name}")
    if proper or not facets:
        # GEP-713: top-level spec proper are implicit defaults (or, with a default strategy of
        # overrides, implicit overrides).
        role = Role.OVERRIDE if merge.default.endswith("overrides") else Role.DEFAULT
        add(role, _atomicity(_strategy_of(profile, None, spec), profile), proper, "spec")
    return _retag(facets)


# The levels a rejected policy can still take from the policies above (`invalidClaimsTarget`):
# Envoy Gateway records a route, a Gateway listener or a ListenerSet as overriding its parents'
# scope before it validates the policy on it (overrides.Add in internal/gatewayapi).
_CLAIMED = frozenset({"listenerset", "listener", "route", "rule"})


def _claim(policy: Policy, node: NodeKey) -> Facet:
    """What a policy its controller rejects leaves on a target it still takes: nothing, in place
    of everything above (an atomic block without values, at the policy's own level)."""
    facet = Facet(policy, node, Role.DEFAULT, Atomicity.ATOMIC, tag({}, None), "spec", False, 0)
    return _retag([facet])[0]


def _retag(facets: list[Facet]) -> list[Facet]:
    # The tree was tagged before the facet existed; point every value at its facet.
    for facet in facets:
        _set_source(facet.tree, facet)
    return facets


def _set_source(node: Tagged, source: Facet) -> None:
    node.source = source
    if node.children is not None:
        for child in node.children.values():
            _set_source(child, source)
