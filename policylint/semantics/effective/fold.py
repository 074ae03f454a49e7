"""Folding one stack of policy facets, least specific first (GEP-713 "Abstract process for
calculating Effective metaresources"; docs/effective-policy.md): `order_stack` orders it, `fold`
merges it pairwise under the established policy's strategy, locking what an override puts in
force, and `_outcome` says for each policy whether it won, lost or conflicted."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from collections.abc import Set as AbstractSet
from typing import TYPE_CHECKING, Any, NamedTuple

from policylint.profiles.registry import PolicyProfile
from policylint.semantics.effective.facets import (
    Facet,
    FoldResult,
    NodeKey,
    OrderSensitivity,
    _attachment_hierarchy,
    _default_atomicity,
    _timestamp,
)
from policylint.semantics.effective.merge import (
    Tagged,
    default_containers,
    leaves,
    merge_patch,
    merge_rules,
    set_path,
    unit_paths,
    untag,
)
from policylint.vocabulary import Atomicity, Enforcement, Role

if TYPE_CHECKING:
    pass


# -- ordering --------------------------------------------------------------------------


def _same_level_order(group: list[Facet]) -> tuple[list[Facet], str]:
    """Established first: older creationTimestamp, then {namespace}/{name} (GEP-713 conflict rules)."""
    policies = {f.policy.obj for f in group}
    stamps = [_timestamp(f.policy) for f in group]
    if len(policies) > 1 and all(s is not None for s in stamps):
        distinct = len(set(stamps)) == len(policies)
        ordered = sorted(group, key=lambda f: (_timestamp(f.policy), f.name, f.order))
        return ordered, "creationTimestamp" if distinct else "name"
    return sorted(group, key=lambda f: (f.name, f.order)), "name"


def order_stack(facets: Iterable[Facet]) -> tuple[list[Facet], list[tuple[int, int, str]]]:
    """Least specific first. Returns the stack and its same-level groups (start, end, decided_by)."""
    by_rank: dict[int, list[Facet]] = defaultdict(list)
    for facet in facets:
        by_rank[facet.rank].append(facet)
    stack: list[Facet] = []
    groups: list[tuple[int, int, str]] = []
    for rank in sorted(by_rank):
        group, decided_by = _same_level_order(by_rank[rank])
        if len({f.policy.obj for f in group}) > 1:
            groups.append((len(stack), len(stack) + len(group), decided_by))
        stack.extend(group)
    return stack, groups


# -- folding ---------------------------------------------------------------------------


def _sources(tree: Tagged | None) -> set[Facet]:
    out: set[Facet] = set()
    for _, leaf in leaves(tree):
        if leaf.source is not None:
            out.add(leaf.source)
        out.update(s for s in leaf.co_sources if s is not None)
    return out


def fold(stack: Sequence[Facet], profile: PolicyProfile, offered: Offered | None = None) -> FoldResult:
    """Reduce a stack (least specific first) to one spec, recording who beat whom.

    GEP-713's abstract process: the established side's strategy decides each step, and the
    challenger's strategy is the merged spec's strategy for the next one. Values an override put
    in force are *locked* for the rest of the fold (an atomic override locks everything):
    overrides "enforce policy from the top down" (the original Policy Attachment page), so
    nothing more specific may undo them, while the other values still follow the defaults
    rule (the more specific wins).

    `offered`: each facet's leaf paths, worked out once for every stack that holds the facet (a
    Gateway's policy is in hundreds), by the caller that folds them (`folds.KeptFolds`).
    """
    if _attachment_hierarchy(profile):
        return _fold_precedence(stack, offered)
    if profile.merge.same_target == "all":
        # Every policy applies, none beats another (NGINX Gateway Fabric's SnippetsPolicy: all are
        # included, in name order). The effective spec shown is their merge in that order.
        merged: Tagged | None = None
        for facet in sorted(stack, key=lambda f: f.name):
            merged = merge_patch(merged, facet.tree)
        return FoldResult(merged, dict.fromkeys(stack, Enforcement.ENFORCED), {}, {})
    if _default_atomicity(profile) is Atomicity.PRIORITY:
        return _fold_priority(stack)
    return _Fold(stack, profile, offered).run()


class _Tally:
    """Who beat whom as a fold went, besides what the folded spec shows (`_outcome` reads it)."""

    def __init__(self, stack: Sequence[Facet], offered: Offered | None = None) -> None:
        self.offered: Offered = offered if offered is not None else {}
        self.by_id = {f: f for f in stack}
        self.discarded: dict[Facet, set[Facet]] = defaultdict(set)  # facet -> facets that discarded it atomically
        self.conflicts: dict[Facet, tuple[Facet, str]] = {}
        self.merged_with: dict[Facet, set[str]] = {}
        self.erased: dict[Facet, int] = {}
        self.skipped: dict[Facet, Facet] = {}


class _Fold:
    """One fold of a stack under GEP-713's abstract process (`fold`): the spec so far, the facet
    it belongs to (`owner`), what is locked, the strategy deciding the next step, and the tally."""

    def __init__(self, stack: Sequence[Facet], profile: PolicyProfile, offered: Offered | None = None) -> None:
        self.stack = stack
        self.profile = profile
        self.containers = [tuple(c.split(".")) for c in profile.merge.rule_containers] or None
        self.conflict_same_target = profile.merge.same_target == "conflict"
        # sameTarget "field" (NGINX Gateway Fabric): on one target, a later policy that sets a field an
        # earlier one set is Conflicted; policies setting different fields all apply, merged.
        self.field_conflict = profile.merge.same_target == "field"
        self.claimed: dict[NodeKey, dict[tuple[str, ...], Facet]] = defaultdict(dict)
        self.tally = _Tally(stack, offered)
        first = stack[0]
        self.acc: Tagged | None = first.tree
        self.owner = first  # the facet whose target the accumulated spec currently belongs to
        self.role, self.atom = first.role, first.atomicity
        self.locked: Locks = _locks_of(first, None)
        if self.field_conflict:
            self.claimed[first.node].update((path, first) for path, _ in leaves(first.tree))
        # The fold as it stood before the first route or rule policy (None: none came yet; a state
        # with no spec: the stack starts at the route): what a rule policy with mergeType merges onto.
        self.above_route: _FoldState | None = (
            _FoldState(None, None, frozenset(), self.role, self.atom) if first.node[0] in _ROUTE_LEVELS else None
        )

    def run(self) -> FoldResult:
        for c in self.stack[1:]:
            if self.above_route is None and c.node[0] in _ROUTE_LEVELS:
                self.above_route = _FoldState(self.acc, self.owner, self.locked, self.role, self.atom)
            if c.merge_onto_parent and c.node[0] == "rule" and self.owner.node[0] == "route" and self.above_route is not None:
                if self._skip_route_policy(c, self.above_route):
                    continue
            if self._same_target(c):
                continue
            if self.locked is ALL:
                self._discard(c)
                continue
            self._merge(c)
            self._establish(c)
        return _outcome(self.stack, self.acc, self.tally)

    def _establish(self, c: Facet) -> None:
        """`c` owns the spec now: its strategy decides the next step."""
        self.owner = c
        self.locked = _locks_of(c, self.locked)
        self.role, self.atom = c.role, c.atomicity

    def _skip_route_policy(self, c: Facet, above_route: _FoldState) -> bool:
        """Fold a rule policy with mergeType onto the fold above the route; True when that leaves
        nothing more to do with it (it applies alone)."""
        # Envoy Gateway merges a rule policy with mergeType onto the closest policy of the
        # route's listener or Gateway, never onto the route's own: it translates rule policies
        # first, and a route policy then skips every route rule a more specific policy has
        # set (applyTrafficFeatureToRoute, translateBackendTrafficPolicyForRouteWithMerge in
        # internal/gatewayapi/backendtrafficpolicy.go). The route policy's values are shadowed here.
        for src in _sources(self.acc) - _sources(above_route.acc) or {self.owner}:
            self.tally.skipped[src] = c
        if above_route.owner is None:
            # Nothing above the route: the rule policy applies alone.
            self.acc, self.owner, self.locked = c.tree, c, _locks_of(c, None)
            self.role, self.atom = c.role, c.atomicity
            return True
        self.acc, self.owner, self.locked, self.role, self.atom = (
            above_route.acc,
            above_route.owner,
            above_route.locked,
            above_route.role,
            above_route.atom,
        )
        return False

    def _same_target(self, c: Facet) -> bool:
        """Settle `c` against a policy on its own target when the profile says how (Conflicted, or
        merged field by field); True when that settles it."""
        owner = self.owner
        if self.field_conflict:
            taken = self.claimed[c.node]
            clash = next(
                ((path, taken[held]) for path, _ in leaves(c.tree) for held in taken if _overlaps(path, frozenset({held}))),
                None,
            )
            if clash is not None and clash[1].policy is not c.policy:
                path, holder = clash
                self.tally.conflicts[c] = (holder, f"{_why(holder, c)}; both set {'.'.join(path)}")
                return True
            taken.update((path, c) for path, _ in leaves(c.tree))
            if c.node == owner.node:
                # Different fields on one target: merged, none replacing another.
                self.acc = merge_patch(self.acc, _strip(c.tree, self.locked, None))
                self._establish(c)
                return True
        elif c.policy is not owner.policy and c.node == owner.node and (self.role is Role.NONE or self.conflict_same_target):
            self.tally.conflicts[c] = (owner, _why(owner, c))
            return True
        return False

    def _discard(self, c: Facet) -> None:
        """An atomic override above: the established spec wins whole (GEP-713 Atomic Overrides)."""
        acc, owner, tally = self.acc, self.owner, self.tally
        units = _erased_units(acc, c.tree) if acc is not None and not _has_values(acc) else 0
        if units:
            for src in _sources(acc) or {owner}:
                tally.erased[src] = tally.erased.get(src, 0) + units
        for src in _sources(acc) or {owner}:
            tally.discarded[c].add(src)

    def _merge(self, c: Facet) -> None:
        """Merge `c` into the spec under the established strategy."""
        acc, role, atom, merge, tally = self.acc, self.role, self.atom, self.profile.merge, self.tally
        containers = self.containers
        unit_containers = (containers or default_containers(acc, c.tree)) if atom is Atomicity.RULES else None
        incoming = _strip(c.tree, self.locked, unit_containers)
        if role is Role.NONE or atom is Atomicity.ATOMIC:
            if c.merge_onto_parent and role is not Role.NONE:
                by_id = tally.by_id
                parents = {by_id[s].name for s in _sources(acc) if s in by_id and by_id[s].policy is not c.policy}
                if parents:
                    tally.merged_with[c] = parents
                # Envoy Gateway mergeType: the route policy merges onto its parent's, item by item
                # for the lists a strategic merge patch merges.
                strategic = c.policy.obj.spec.get("mergeType") == "StrategicMerge"
                acc = merge_patch(acc, incoming, merge.strategic_lists if strategic else {})
            else:
                kept_locked = _subtree(acc, self.locked)
                for src in _sources(acc) - _sources(kept_locked):
                    tally.discarded[src].add(c)
                acc = merge_patch(incoming, kept_locked) if kept_locked is not None else incoming
        elif atom is Atomicity.PATCH:
            if merge.replace_together and acc is not None and acc.children is not None:
                acc, replaced = _replace_together(acc, incoming, merge.replace_together)
                for src in replaced:
                    tally.discarded[src].add(c)
            acc = merge_patch(acc, incoming)
        else:
            acc = merge_rules(acc, incoming, containers)
        self.acc = acc


# Each facet's leaf paths (`_outcome`): what it offers, by the facet (which hashes by identity).
Offered = dict[Facet, frozenset[tuple[str, ...]]]


class _All:
    """Every value is locked (an atomic override is in force)."""


_ROUTE_LEVELS = frozenset({"route", "rule"})


class _FoldState(NamedTuple):
    """Where a fold stands: the spec so far, the facet it belongs to, the locked values, and the
    strategy that decides the next step."""

    acc: Tagged | None
    owner: Facet | None
    locked: Locks
    role: Role
    atom: Atomicity


ALL = _All()
Locks = _All | frozenset[tuple[str, ...]]


def _locks_of(facet: Facet, locked: Locks | None) -> Locks:
    base: frozenset[tuple[str, ...]] = locked if isinstance(locked, frozenset) else frozenset()
    if locked is ALL:
        return ALL
    if facet.role is not Role.OVERRIDE:
        return base
    if facet.atomicity is Atomicity.ATOMIC:
        return ALL
    return base | {path for path, _ in leaves(facet.tree)}


def _overlaps(path: tuple[str, ...], locked: frozenset[tuple[str, ...]]) -> bool:
    return any(path[: len(lock)] == lock or lock[: len(path)] == path for lock in locked)


def _rebuild(items: Iterable[tuple[tuple[str, ...], Tagged]], source: Any) -> Tagged:
    root = Tagged(None, source, {})
    for path, leaf in items:
        if not path:
            return leaf
        set_path(root, path, leaf)
    return root


def _replace_together(acc: Tagged, incoming: Tagged, groups: Sequence[frozenset[str]]) -> tuple[Tagged, set[Facet]]:
    """`acc` without the fields of every group (profile `replaceTogether`) `incoming` sets one of,
    and the sources of what went: those fields are replaced together, never merged."""
    assert acc.children is not None
    sets = set(incoming.children or ())
    gone = {name for group in groups if group & sets for name in group if name in acc.children}
    if not gone:
        return acc, set()
    replaced = {src for name in gone for src in _sources(acc.children[name])}
    return Tagged(acc.value, acc.source, {k: v for k, v in acc.children.items() if k not in gone}, acc.co_sources), replaced


def _strip(tree: Tagged, locked: Locks, containers: Sequence[tuple[str, ...]] | None) -> Tagged:
    """`tree` without the values a lock protects (whole rules for a rule-keyed merge)."""
    if not locked:
        return tree
    assert isinstance(locked, frozenset)
    if containers is not None:
        units = list(unit_paths(tree, containers))
        return _rebuild(((p, u) for p, u in units if not _overlaps(p, locked)), tree.source)
    return _rebuild(((p, leaf) for p, leaf in leaves(tree) if not _overlaps(p, locked)), tree.source)


def _subtree(tree: Tagged | None, locked: Locks) -> Tagged | None:
    """The locked values of `tree`."""
    if tree is None or not locked or locked is ALL:
        return None
    assert isinstance(locked, frozenset)
    kept = [(p, leaf) for p, leaf in leaves(tree) if _overlaps(p, locked)]
    return _rebuild(kept, tree.source) if kept else None


def _erased_units(empty: Tagged, below: Tagged) -> int:
    """How many entries (rules, limits, fields) of `below` an override without values wipes out."""
    count = 0
    for path, _leaf in leaves(empty):
        node: Tagged | None = below
        for part in path:
            node = node.children.get(part) if node is not None and node.children is not None else None
        if node is not None:
            count += len(node.children) if node.children is not None else 1
    return count


def _has_values(tree: Tagged) -> bool:
    return any(leaf.children is None for _, leaf in leaves(tree))


def _why(winner: Facet, loser: Facet) -> str:
    tw, tl = _timestamp(winner.policy), _timestamp(loser.policy)
    if tw is not None and tl is not None and tw != tl:
        return f"older: {tw.isoformat().replace('+00:00', 'Z')} < {tl.isoformat().replace('+00:00', 'Z')}"
    missing = "equal creationTimestamps" if tw is not None and tl is not None else "no creationTimestamp"
    return f"tie-break: {winner.name} sorts before {loser.name}; {missing}"


def _fold_precedence(stack: Sequence[Facet], offered: Offered | None = None) -> FoldResult:
    """Earlier revisions of GEP-713, "Hierarchy": "A override > B override > C override > C default > B default >
    A default", field by field; identical fields at one level resolve oldest first."""
    overrides = [f for f in stack if f.role is Role.OVERRIDE]  # stack is least specific first
    defaults: list[Facet] = []
    for rank in sorted({f.rank for f in stack if f.role is not Role.OVERRIDE}, reverse=True):
        defaults.extend(f for f in stack if f.role is not Role.OVERRIDE and f.rank == rank)
    precedence = overrides + defaults  # highest first
    acc: Tagged | None = None
    for facet in reversed(precedence):
        acc = merge_patch(acc, facet.tree)
    return _outcome(stack, acc, _Tally(stack, offered))


def _fold_priority(stack: Sequence[Facet]) -> FoldResult:
    """Envoy Gateway EnvoyPatchPolicy: every policy applies, in ascending spec.priority."""

    def priority(f: Facet) -> int:
        value = f.policy.obj.spec.get("priority")
        return value if isinstance(value, int) and not isinstance(value, bool) else 0

    ordered = sorted(stack, key=lambda f: (priority(f), f.rank, f.name))
    tree = Tagged(None, None, {"patches": Tagged([untag(f.tree) for f in ordered], None)})
    status = dict.fromkeys(stack, Enforcement.ENFORCED)
    return FoldResult(tree, status, {}, {})


def _outcome(stack: Sequence[Facet], acc: Tagged | None, tally: _Tally) -> FoldResult:
    kept: dict[Facet, set[tuple[str, ...]]] = defaultdict(set)
    result_at: dict[tuple[str, ...], Facet] = {}
    for path, leaf in leaves(acc):
        if leaf.source is not None:
            kept[leaf.source].add(path)
            result_at[path] = leaf.source
        for co in leaf.co_sources:  # a list merged item by item keeps every contributor's items
            if co is not None:
                kept[co].add(path)
    status: dict[Facet, Enforcement] = {}
    beaten: dict[Facet, set[str]] = {}
    merged_only: set[Facet] = set()
    conflicts, skipped, by_id = tally.conflicts, tally.skipped, tally.by_id
    for facet in stack:
        fid = facet
        if fid in conflicts:
            status[fid] = Enforcement.CONFLICTED
            beaten[fid] = {conflicts[fid][0].name}
            continue
        offered = tally.offered.get(fid)
        if offered is None:
            offered = tally.offered[fid] = frozenset(p for p, _ in leaves(facet.tree))
        mine = kept.get(fid, set())
        status[fid] = (
            Enforcement.ENFORCED if offered <= mine else Enforcement.OVERRIDDEN if not mine else Enforcement.PARTIALLY_ENFORCED
        )
        if status[fid] == Enforcement.ENFORCED:
            continue
        if fid in skipped:
            # Not beaten value by value: the rule policy's merge left this one out whole.
            beaten[fid] = {skipped[fid].name}
            continue
        winners = _winners(fid, offered - mine, result_at, tally.discarded)
        others = {w for w in winners if w in by_id and by_id[w].policy is not facet.policy}
        if winners and not others:
            # Beaten only by another block of the same policy (a PL107 two-strategy policy):
            # the policy itself is in force; PL107 reports the shape.
            status[fid] = Enforcement.ENFORCED
            continue
        beaten[fid] = {by_id[w].name for w in others}
        if all(by_id[w].merge_onto_parent for w in others):
            merged_only.add(fid)
    return FoldResult(
        acc,
        status,
        beaten,
        conflicts,
        erased=tally.erased,
        merged_with=tally.merged_with,
        merged_only=frozenset(merged_only),
        skipped=skipped,
    )


def _winners(
    fid: Facet,
    lost: AbstractSet[tuple[str, ...]],
    result_at: Mapping[tuple[str, ...], Facet],
    discarded: Mapping[Facet, set[Facet]],
) -> set[Facet]:
    """The facets that beat facet `fid`: those that discarded it, and those whose values stand at,
    above or below the paths it `lost`."""
    winners: set[Facet] = set(discarded.get(fid, ()))
    for path in lost:
        for other, src in result_at.items():
            if src != fid and (other[: len(path)] == path or path[: len(other)] == other):
                winners.add(src)
    return winners


# -- order sensitivity ------------------------------------------------------------------


def order_sensitivity(
    stack: Sequence[Facet],
    groups: Sequence[tuple[int, int, str]],
    profile: PolicyProfile,
    result: FoldResult,
    offered: Offered | None = None,
) -> list[OrderSensitivity]:
    """A verdict that flips with creation order (docs/semantics.md#missing-creation-timestamps).

    Each same-level group is reversed (a policy's own facets keep their order) and the fold
    repeated; differing keys are reported."""
    out: list[OrderSensitivity] = []
    base = untag(result.tree)
    for start, end, decided_by in groups:
        group = list(stack[start:end])
        if result.conflicts and all(f in result.conflicts or any(w is f for w, _ in result.conflicts.values()) for f in group):
            continue  # a None conflict: its own finding says who won and why
        names = list(dict.fromkeys(f.name for f in group))
        reordered = [f for n in reversed(names) for f in group if f.name == n]
        alt_stack = [*stack[:start], *reordered, *stack[end:]]
        alt = fold(alt_stack, profile, offered)
        alternative = untag(alt.tree)
        if alternative != base:
            out.append(OrderSensitivity(tuple(names), decided_by, tuple(_differing_keys(base, alternative)), alternative))
    return out


def _differing_keys(a: Any, b: Any, prefix: str = "") -> list[str]:
    if isinstance(a, dict) and isinstance(b, dict):
        out: list[str] = []
        for key in sorted(set(a) | set(b), key=str):
            out.extend(_differing_keys(a.get(key), b.get(key), f"{prefix}.{key}" if prefix else str(key)))
        return out
    return [] if a == b else [prefix or "(whole spec)"]
