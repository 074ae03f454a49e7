"""`policylint explain`: what one object effectively gets, and why (GEP-713 "The discoverability problem").

The parable in GEP-713 asks three questions an object owner cannot
answer from the object itself: *that* a policy affects it, *which* policies
do, and *what settings* they apply. For a target object (a Gateway, listener,
route, rule, Service, ...) this module answers them per context through the
object (policylint.semantics.effective.simulation), with the provenance of every effective value:
which policy set it, at which node of the hierarchy, by which merge strategy,
and which other policies offered a value for the same field and lost, and why.
For a policy object it answers the parable's last question: what the policy
reaches (per target: status, blast radius, contexts).

The explanation is built once as a JSON-shaped document (schemas/explain.schema.json);
the text rendering (policylint.commands.explain_text) is derived from that document, so both
formats say the same thing.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from policylint import __version__
from policylint.input.positions import format_path, join
from policylint.k8s.names import did_you_mean, ns_name
from policylint.k8s.objects import K8sObject, ObjectKey
from policylint.policy_report import target_ref
from policylint.semantics.effective.facets import RANK, Context, Facet, NodeKey, TargetStatus
from policylint.semantics.effective.fold import order_sensitivity, order_stack
from policylint.semantics.effective.merge import Tagged, leaves
from policylint.semantics.effective.simulation import Simulation
from policylint.semantics.effective.states import combined_status
from policylint.semantics.effective.verdicts import Lost, WhyLost, WhyWon, Won, why_lost, why_won
from policylint.textsafe import Budget, jsonable
from policylint.values import frozen
from policylint.vocabulary import Accepted, Enforcement, Traffic

if TYPE_CHECKING:
    from policylint.k8s.index import Section
    from policylint.profiles.policy import Policy
    from policylint.project import Project
    from policylint.semantics.resolution import TargetResolution

SCHEMA_VERSION = 1
DEFAULT_LIMIT = 20  # contexts listed per result group or per target; counts are always complete

_UNNAMED_RULE = re.compile(r"^rules\[(\d+)\]$")


class ExplainError(Exception):
    """The object cannot be explained: bad argument, or not in the input (exit code 2)."""


# -- which object ----------------------------------------------------------------------------


@frozen
class ObjectQuery:
    """`KIND/NAMESPACE/NAME[#section]` or `KIND/NAME[#section]`; KIND is `Kind` or `Kind.group`."""

    kind: str
    group: str | None
    namespace: str | None
    name: str
    section: str | None


def parse_query(text: str) -> ObjectQuery:
    raw = text.strip()
    # `Kind ns/name`, the form findings print, is accepted too.
    if " " in raw:
        head, _, tail = raw.partition(" ")
        raw = f"{head}/{tail.strip()}"
    section: str | None = None
    if "#" in raw:
        raw, _, section = raw.partition("#")
        if not section:
            raise ExplainError(f"{text!r}: nothing after '#' (expected a listener, rule or port name)")
    parts = raw.split("/")
    if len(parts) not in (2, 3) or not all(parts):
        raise ExplainError(f"{text!r} is not KIND/NAMESPACE/NAME[#section] or KIND/NAME[#section]")
    kind, dot, group = parts[0].partition(".")
    if dot and group in ("", "core"):
        group = ""  # `Service.core`: the core API group, whose name is empty
        return ObjectQuery(kind, group, parts[1] if len(parts) == 3 else None, parts[-1], section)
    return ObjectQuery(kind, group or None, parts[1] if len(parts) == 3 else None, parts[-1], section)


@frozen
class Found:
    obj: K8sObject
    section: Section | None
    node: NodeKey


def find_object(project: Project, query: ObjectQuery, default_namespace: str = "default") -> Found:
    kinds = sorted({(o.key.group, o.key.kind) for o in project.index.objects})
    matching = [(g, k) for g, k in kinds if k.lower() == query.kind.lower() and (query.group is None or g == query.group)]
    if not matching:
        known = sorted({k for _, k in kinds})
        close = did_you_mean(query.kind, known, n=3, cutoff=0.6)
        what = f"{query.kind}.{query.group}" if query.group else query.kind
        raise ExplainError(f"no object of kind {what} in the input" + _did_you_mean(close))
    found: list[K8sObject] = []
    wanted: list[str] = []
    for group, kind in matching:
        namespace = query.namespace
        if namespace is None and not _cluster_scoped(project, group, kind):
            namespace = default_namespace  # kubectl's reading of KIND/NAME for a namespaced kind
        wanted.append(_spec_text(kind, namespace, query.name))
        obj = project.index.lookup(group, kind, namespace, query.name)
        if obj is not None:
            found.append(obj)
    if len(found) > 1:
        options = [f"{o.kind}.{o.group or 'core'}/{_where(o.key)}" for o in found]
        raise ExplainError(f"{found[0].kind} is ambiguous: name the group, e.g. {' or '.join(options)}")
    if not found:
        candidates = sorted(
            _spec_text(o.kind, o.namespace, o.name) for o in project.index.objects if (o.group, o.kind) in matching
        )
        close = did_you_mean(wanted[0], candidates, n=3, cutoff=0.6)
        raise ExplainError(f"no {wanted[0]} in the input" + _did_you_mean(close))
    obj = found[0]
    section = _find_section(project, obj, query.section) if query.section is not None else None
    return Found(obj, section, object_node(project, obj, section))


def _cluster_scoped(project: Project, group: str, kind: str) -> bool:
    if project.index.kinds.scope(group, kind) is not None:
        return project.index.kinds.is_cluster_scoped(group, kind)
    return all(o.namespace is None for o in project.index.of_kind(group, kind))


def _spec_text(kind: str, namespace: str | None, name: str) -> str:
    return f"{kind}/{namespace}/{name}" if namespace else f"{kind}/{name}"


def _did_you_mean(options: Sequence[str]) -> str:
    return f"; did you mean {', '.join(options)}?" if options else ""


def _find_section(project: Project, obj: K8sObject, wanted: str) -> Section:
    sections = project.index.sections(obj)
    spec = project.index.kinds.sections(obj.group, obj.kind)
    if spec is None:
        raise ExplainError(f"{obj.key} has no sections: drop '#{wanted}'")
    for section in sections:
        if section.name == wanted:
            return section
    unnamed = _UNNAMED_RULE.match(wanted)
    if unnamed is not None:
        position = int(unnamed.group(1))
        for section in sections:
            if section.position == position and section.name is None:
                return section
    names = [_section_text(s) for s in sections]
    close = did_you_mean(wanted, names, n=3, cutoff=0.5)
    listed = ", ".join(names) if names else "none"
    raise ExplainError(f"{obj.key} has no {spec.type} {wanted!r} (its {spec.type}s: {listed})" + _did_you_mean(close))


def _section_text(section: Section) -> str:
    return section.name if section.name is not None else f"rules[{section.position}]"


def object_node(project: Project, obj: K8sObject, section: Section | None = None) -> NodeKey:
    """The hierarchy node of an object or of one of its sections, as the simulation names it.

    Asked of Simulation.node_of itself (with the resolution a policy targeting the object would
    get), so that explain and graph always agree with the engine on what a node is."""
    from policylint.profiles.policy import TargetRef
    from policylint.semantics.resolution import TargetResolution
    from policylint.vocabulary import Accepted, Resolved

    ref = TargetRef("", None, obj.group, obj.kind, obj.name, obj.namespace, section.name if section else None)
    node = project.simulation().node_of(TargetResolution(ref, Accepted.ACCEPTED, Resolved.RESOLVED, target=obj, section=section))
    assert node is not None  # an accepted resolution with a target always has a node
    return node


# -- describing nodes, paths and policies ------------------------------------------------------


def _where(key: ObjectKey) -> str:
    return ns_name(key.namespace, key.name)


class Describer:
    """Turns NodeKeys and facets into JSON-ready dicts with stable, readable labels."""

    def __init__(self, project: Project) -> None:
        self.project = project
        self._rule_names: dict[ObjectKey, list[str | None]] = {}
        # What the values of one document may copy, all values together (policylint.textsafe).
        self.budget = Budget(nodes=500_000, chars=8_000_000)

    def section_text(self, node: NodeKey) -> str | None:
        level, key, section = node
        if section is None:
            return None
        if level == "rule" and isinstance(section, int):
            # An unnamed rule is known by its position; show it as its field path.
            names = self._rule_names.get(key)
            if names is None:
                obj = self.project.index.get(key)
                names = [s.name for s in self.project.index.sections(obj)] if obj is not None else []
                self._rule_names[key] = names
            if section < len(names) and names[section] is not None:
                return names[section]
            return f"rules[{section}]"
        return str(section)

    def node(self, node: NodeKey) -> dict[str, Any]:
        level, key, _ = node
        section = self.section_text(node)
        label = f"{key.kind} {_where(key)}" + (f"#{section}" if section is not None else "")
        return {
            "level": level,
            "group": key.group,
            "kind": key.kind,
            "namespace": key.namespace,
            "name": key.name,
            "section": section,
            "label": label,
        }

    def path_label(self, path: Sequence[NodeKey]) -> str:
        # A section follows its object in the path: show it as `#name` only.
        parts: list[str] = []
        for i, node in enumerate(path):
            section = self.section_text(node)
            if section is not None and i > 0 and path[i - 1][1] == node[1]:
                parts.append(f"#{section}")
            else:
                parts.append(self.node(node)["label"])
        return " > ".join(parts)

    def context(self, path: Sequence[NodeKey], contains_object: bool) -> dict[str, Any]:
        return {"label": self.path_label(path), "containsObject": contains_object, "path": [self.node(n) for n in path]}

    @staticmethod
    def policy_ref(policy: Policy) -> dict[str, Any]:
        key = policy.key
        return {"group": key.group, "kind": key.kind, "namespace": key.namespace, "name": key.name}

    def facet(self, facet: Facet, key: tuple[str, ...] | None = None) -> dict[str, Any]:
        return {
            "policy": self.policy_ref(facet.policy),
            "name": facet.name,
            "node": self.node(facet.node),
            "role": facet.role.label,
            "strategy": facet.strategy_label(),
            "field": join(facet.path, *key) if key else facet.path,
        }


def _key_text(key: tuple[str, ...]) -> str:
    return format_path(list(key)) if key else "(whole spec)"


# One value's share of the document's budget (Describer.budget): far more than any real spec.
_VALUE_NODES = 50_000
_VALUE_CHARS = 1_000_000


def _unwrap(node: Any) -> Any:
    # A tagged tree's node is its mapping of (tagged) children, or its value.
    if isinstance(node, Tagged):
        return node.children if node.children is not None else node.value
    return node


def _jsonable(value: Any, budget: Budget, *, canonical: bool = False) -> Any:
    """A JSON-ready copy of a value or tagged tree: YAML timestamps and other non-JSON scalars
    become strings. Copied iteratively within the document's budget: an alias-amplified value
    (one node shared a million times, or nested thousands deep) is cut with a marker that says
    so, instead of being written out whole. `canonical` sorts map keys: the order in which
    merging inserted keys means nothing (RFC 7386), and sorting keeps the output stable however
    the engine folds."""
    # Each value gets its own share, so one huge value cannot starve the others of a prefix.
    share = Budget(min(_VALUE_NODES, budget.nodes), min(_VALUE_CHARS, budget.chars), budget.max_depth)
    nodes, chars = share.nodes, share.chars
    out = jsonable(value, share, sort_keys=canonical, unwrap=_unwrap)
    budget.nodes -= nodes - share.nodes
    budget.chars -= chars - share.chars
    return out


# -- provenance --------------------------------------------------------------------------------


def _overlaps(a: tuple[str, ...], b: tuple[str, ...]) -> bool:
    return a[: len(b)] == b or b[: len(a)] == a


def _offered(tree: Tagged, key: tuple[str, ...]) -> tuple[tuple[str, ...], Tagged | None]:
    """What a facet offers for `key`: its (tagged) value there, or the shorter key it set instead."""
    node: Tagged | None = tree
    for i, part in enumerate(key):
        if node is None or node.children is None or not node.children:
            return key[:i], node
        node = node.children.get(part)
        if node is None:
            return key[:i], None
    return key, node


def won_text(why: WhyWon) -> str:
    """A verdict of the fold (policylint.semantics.effective.verdicts) in words."""
    established, winner = why.established, why.winner
    if why.reason is Won.CONFLICT:
        return f"conflict, strategy None: {why.conflict}"
    if why.reason is Won.ESTABLISHED:
        return f"same level: {established.name} is established ({why.order}); under its {established.strategy_label()}, {winner.name}'s value stands"
    return {
        Won.OVERRIDE_TOP_DOWN: "the less specific override wins (overrides are enforced from the top down)",
        Won.OVERRIDE_HOLDS: "an override holds against more specific policies",
        Won.OVERRIDE_BEATS_DEFAULT: "an override beats a default",
        Won.MORE_SPECIFIC_APPLIES: "the more specific policy applies (strategy None: no merging across levels)",
        Won.MORE_SPECIFIC_WINS: f"the more specific policy wins over {established.strategy_label()}",
        Won.MERGED: f"merged by {established.strategy_label()} of {established.name}",
        Won.MERGED_PAST_ROUTE: (
            f"{established.name} targets this rule with mergeType and merges onto {winner.name}, not onto the route's policy"
        ),
    }[why.reason]


def lost_text(why: WhyLost, loser: Facet) -> str:
    if why.reason is Lost.ATOMIC_OVERRIDE_ABOVE:
        assert why.owner is not None
        who = "the policy's own" if why.owner.policy is loser.policy else f"the {why.owner.name}"
        return f"{who} Atomic Overrides ({why.owner.path}) replace the whole spec below them"
    names = ", ".join(w.name for w in why.winners)
    return {
        Lost.REMOVED: "removed while merging (a null in a patch deletes a field)",
        Lost.STRATEGY_NONE: f"strategy None: {names} applies instead",
        Lost.ATOMIC_DEFAULTS: f"Atomic Defaults: {names} replaced this spec whole",
        Lost.OVERRIDDEN: f"overridden by {names}",
        Lost.REPLACED: f"every value it sets is replaced by {names}",
        Lost.SKIPPED_BY_RULE_MERGE: (
            f"{names} targets this rule with mergeType: it merges onto the policy of the route's listener or Gateway,"
            " and the route's policy does not apply to the rule"
        ),
    }[why.reason]


def _value_entries(ctx: Context, describe: Describer) -> list[dict[str, Any]]:
    result, stack = ctx.result, ctx.stack
    offered = {f: [p for p, _ in leaves(f.tree)] for f in stack}
    out = []
    for key, leaf in sorted(leaves(result.tree), key=lambda item: item[0]):
        source = leaf.source if isinstance(leaf.source, Facet) else None
        merged_from = [co for co in leaf.co_sources if isinstance(co, Facet)]
        over = []
        if source is not None:
            for other in stack:
                if other.policy is source.policy or not any(_overlaps(key, p) for p in offered[other]):
                    continue
                if any(other is co for co in merged_from):
                    continue  # its items are in the value (a list merged item by item)
                their_key, their_value = _offered(other.tree, key)
                entry = describe.facet(other, their_key)
                entry["key"] = _key_text(their_key)
                entry["value"] = _jsonable(their_value, describe.budget)
                entry["reason"] = won_text(why_won(ctx, source, other))
                over.append(entry)
        entry = {
            "key": _key_text(key),
            "value": _jsonable(leaf, describe.budget),
            "source": describe.facet(source, key) if source is not None else None,
            "over": over,
        }
        if merged_from:
            entry["mergedWith"] = [describe.facet(co, key) for co in merged_from]
        out.append(entry)
    return out


def _policy_entries(ctx: Context, describe: Describer) -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[dict[str, Any]]]:
    """(policies that affect the context, policies shadowed entirely, values set but not applied)."""
    result, stack = ctx.result, ctx.stack
    by_policy: dict[K8sObject, list[Facet]] = {}
    for facet in stack:
        by_policy.setdefault(facet.policy.obj, []).append(facet)
    by_name: dict[str, list[Facet]] = defaultdict(list)
    for facet in stack:
        by_name[facet.name].append(facet)
    result_keys = [k for k, _ in leaves(result.tree)]
    affecting: list[dict[str, Any]] = []
    shadowed: list[dict[str, Any]] = []
    not_applied: list[dict[str, Any]] = []
    for facets in by_policy.values():
        first = facets[0]
        status = combined_status([result.status[f] for f in facets])
        beaten = sorted({n for f in facets for n in result.beaten_by.get(f, ())})
        entry: dict[str, Any] = {
            "policy": describe.policy_ref(first.policy),
            "name": first.name,
            "node": describe.node(first.node),
            "strategies": [f.strategy_label() for f in facets],
            "status": status.label,
            "beatenBy": beaten,
            "reason": None,
        }
        if status in (Enforcement.ENFORCED, Enforcement.PARTIALLY_ENFORCED):
            affecting.append(entry)
        else:
            conflict = next((result.conflicts[f] for f in facets if f in result.conflicts), None)
            if status == Enforcement.CONFLICTED and conflict is not None:
                entry["reason"] = f"conflicts with {conflict[0].name} on the same target, strategy None: {conflict[1]}"
            else:
                entry["reason"] = lost_text(why_lost(ctx, facets[0], [w for n in beaten for w in by_name.get(n, ())]), facets[0])
            entry["values"] = [
                {"key": _key_text(k), "value": _jsonable(leaf, describe.budget)} for f in facets for k, leaf in leaves(f.tree)
            ]
            shadowed.append(entry)
            continue
        for facet in facets:
            if result.status[facet] not in (Enforcement.PARTIALLY_ENFORCED, Enforcement.OVERRIDDEN):
                continue
            winners = [w for n in sorted(result.beaten_by.get(facet, ())) for w in by_name.get(n, ())]
            for key, leaf in leaves(facet.tree):
                if any(_overlaps(key, k) for k in result_keys):
                    continue  # shown under that value, as "over"
                not_applied.append(
                    {
                        "key": _key_text(key),
                        "value": _jsonable(leaf, describe.budget),
                        "source": describe.facet(facet, key),
                        "beatenBy": sorted({w.name for w in winners}),
                        "reason": lost_text(why_lost(ctx, facet, winners), facet),
                    }
                )
    return affecting, shadowed, not_applied


def _order_notes(ctx: Context, describe: Describer) -> list[dict[str, Any]]:
    _, groups = order_stack(ctx.stack)
    if not groups:
        return []
    out = []
    for item in order_sensitivity(ctx.stack, groups, ctx.profile, ctx.result):
        out.append(
            {
                "policies": list(item.policies),
                "decidedBy": item.decided_by,
                "keys": list(item.keys),
                "alternative": _jsonable(item.alternative, describe.budget, canonical=True),
            }
        )
    return out


# -- explaining a target object --------------------------------------------------------------


def _reach_predicate(sim: Simulation, target: NodeKey) -> Callable[[NodeKey], bool]:
    """Whether the object lies below a node in the hierarchy (so that node's contexts carry its traffic)."""
    whole = target[2] is None
    memo: dict[NodeKey, bool] = {}

    def is_target(node: NodeKey) -> bool:
        return node[1] == target[1] if whole else node == target

    def reaches(node: NodeKey) -> bool:
        cached = memo.get(node)
        if cached is not None:
            return cached
        memo[node] = False  # the hierarchy is a DAG; this guards against a malformed input anyway
        if is_target(node):
            memo[node] = True
            return True
        if RANK[node[0]] >= RANK[target[0]]:
            return False
        answer = any(reaches(child) for child in sim.children(node))
        memo[node] = answer
        return answer

    return reaches


def _contains(path: Sequence[NodeKey], target: NodeKey) -> bool:
    if target[2] is None:
        return any(n[1] == target[1] for n in path)
    return target in path


def _path_sort(path: Sequence[NodeKey]) -> tuple[Any, ...]:
    return tuple((RANK[n[0]], n[1], str(n[2])) for n in path)


def _object_dict(obj: K8sObject, section: Section | None) -> dict[str, Any]:
    return {
        "apiVersion": obj.api_version,
        "group": obj.group,
        "kind": obj.kind,
        "namespace": obj.namespace,
        "name": obj.name,
        "section": _section_text(section) if section is not None else None,
        "file": obj.doc.file,
        "line": obj.doc.line,
    }


def _capped(items: Sequence[Any], limit: int) -> tuple[list[Any], int]:
    if limit <= 0 or len(items) <= limit:
        return list(items), 0
    return list(items[:limit]), len(items) - limit


def explain_target(project: Project, found: Found, limit: int = DEFAULT_LIMIT) -> dict[str, Any]:
    describe = Describer(project)
    sim = project.simulation()
    reaches = _reach_predicate(sim, found.node)
    target = found.node
    by_kind: dict[tuple[str, str], list[Context]] = defaultdict(list)
    for ctx in sim.contexts(lambda path: _contains(path, target) or reaches(path[-1])):
        by_kind[ctx.profile.gk].append(ctx)
    kinds = []
    affected_by: dict[tuple[str, str, str, str], dict[str, Any]] = {}
    for gk in sorted(by_kind):
        contexts = sorted(by_kind[gk], key=lambda c: _path_sort(c.path))
        profile = contexts[0].profile
        groups: dict[tuple[Facet, ...], list[Context]] = {}
        for ctx in contexts:
            groups.setdefault(tuple(ctx.stack), []).append(ctx)
        results = []
        for members in groups.values():
            ctx = members[0]
            shown, omitted = _capped(members, limit)
            affecting, shadowed, not_applied = _policy_entries(ctx, describe)
            for entry in affecting:
                ref = entry["policy"]
                affected_by[(ref["kind"], ref["namespace"] or "", ref["name"], ref["group"])] = ref
            results.append(
                {
                    "contextCount": len(members),
                    "contexts": [describe.context(c.path, _contains(c.path, target)) for c in shown],
                    "omitted": omitted,
                    "effective": _jsonable(ctx.result.tree, describe.budget, canonical=True),
                    "values": _value_entries(ctx, describe),
                    "affectedBy": affecting,
                    "shadowed": shadowed,
                    "notApplied": not_applied,
                    "orderSensitive": _order_notes(ctx, describe),
                }
            )
        kinds.append(
            {
                "group": profile.group,
                "kind": profile.kind,
                "profile": profile.name,
                "class": profile.policy_class,
                "effectiveTarget": profile.effective_target,
                "contextCount": len(contexts),
                "results": results,
            }
        )
    return {
        "schemaVersion": SCHEMA_VERSION,
        "tool": {"name": "policylint", "version": __version__},
        "object": _object_dict(found.obj, found.section),
        "type": "target",
        "node": describe.node(found.node),
        "affectedBy": [affected_by[k] for k in sorted(affected_by)],
        "policyKinds": kinds,
    }


# -- explaining a policy ---------------------------------------------------------------------


def _tally(sim: Simulation, path: Sequence[NodeKey], into: dict[str, set[Any]]) -> None:
    for node in path:
        level = node[0]
        if level == "route":
            into["routes"].add(node[1])
        elif level == "rule":
            into["rules"].add(node)
            into["routes"].add(node[1])
        elif level == "listener":
            into["listeners"].add(node)
        elif level == "gateway":
            into["gateways"].add(node[1])
    into["backends"] |= sim.backends_below(path[-1])


def explain_policy(project: Project, found: Found, policy: Policy, limit: int = DEFAULT_LIMIT) -> dict[str, Any]:
    describe = Describer(project)
    base = project.simulation()
    resolutions = project.resolution.targets(policy)
    nodes = {base.node_of(res) for res in resolutions} - {None}
    per_node: dict[NodeKey, list[tuple[Context, Enforcement, list[str]]]] = defaultdict(list)
    for ctx in sorted(base.contexts(lambda path: any(n in nodes for n in path)), key=lambda c: _path_sort(c.path)):
        mine: dict[NodeKey, list[Facet]] = defaultdict(list)
        for facet in ctx.stack:
            if facet.policy is policy:
                mine[facet.node].append(facet)
        for facet_node, facets in mine.items():
            status = combined_status([ctx.result.status[f] for f in facets])
            beaten = sorted({n for f in facets for n in ctx.result.beaten_by.get(f, ())})
            per_node[facet_node].append((ctx, status, beaten))
    targets = []
    seen_nodes: set[NodeKey] = set()
    for res in resolutions:
        node = base.node_of(res)
        first = node is not None and node not in seen_nodes
        if node is not None:
            seen_nodes.add(node)
        # The counts and the enforcement are the simulation's (the JSON report shows the same);
        # the contexts are listed, and their reach tallied, here.
        through = base.target_status(policy, res) if first else None
        items = per_node.get(node, []) if first and node is not None else []
        targets.append(_policy_target(describe, policy, res, node, through, items, limit))
    profile = policy.profile
    strategies = list(dict.fromkeys(f.strategy_label() for f in base.facets.get(policy.obj, [])))
    return {
        "schemaVersion": SCHEMA_VERSION,
        "tool": {"name": "policylint", "version": __version__},
        "object": _object_dict(found.obj, found.section),
        "type": "policy",
        "policy": {
            "profile": profile.name,
            "profileOrigin": profile.origin,
            "class": profile.policy_class,
            "effectiveTarget": profile.effective_target,
            "strategies": strategies,
            "affects": base.policy_affects(policy).counts(),
            "targets": targets,
        },
    }


def _undecided(base: Simulation, res: TargetResolution) -> str | None:
    """Why traffic may or may not reach a target whose attachment rests on Namespace labels not
    in the input (docs/semantics.md#namespaces-not-in-the-input), or None."""
    if res.target is None:
        return None
    traffic, why = base.topology.traffic(res.target)
    return why if traffic is Traffic.UNKNOWN else None


def _no_context(base: Simulation, policy: Policy, res: TargetResolution, node: NodeKey, accepted: Accepted) -> str:
    """Why no context of the policy's kind goes through a target it resolves to."""
    effective = policy.profile.effective_target
    if accepted is Accepted.INVALID:
        # Rejected (by the API server or the controller): it applies nowhere, whatever the traffic.
        return "an Invalid policy takes part in no context"
    if RANK[node[0]] > RANK.get(effective, RANK["route"]):
        return f"the target lies below the kind's effective target ({effective}): no context of this kind ends there"
    why = _undecided(base, res)
    if why is not None:
        return f"no context reaches this target: {why}"
    return "no context reaches this target: no traffic path through it in the input"


def _policy_target(
    describe: Describer,
    policy: Policy,
    res: TargetResolution,
    node: NodeKey | None,
    status: TargetStatus | None,
    items: Sequence[tuple[Context, Enforcement, list[str]]],
    limit: int,
) -> dict[str, Any]:
    """One target of a policy, for `explain POLICY`: its resolution, its status over the contexts
    through it, what it reaches, and the first `limit` of those contexts."""
    base = describe.project.simulation()
    ref = res.ref
    status = status or TargetStatus()
    reach: dict[str, set[Any]] = {k: set() for k in ("routes", "rules", "listeners", "gateways", "backends")}
    for ctx, state, _beaten in items:
        if state in (Enforcement.ENFORCED, Enforcement.PARTIALLY_ENFORCED):
            _tally(base, ctx.path, reach)
    accepted, message = base.accepted(policy, res)
    note = _no_context(base, policy, res, node, accepted) if node is not None and not items else None
    shown, omitted = _capped(items, limit)
    return {
        "ref": target_ref(res),
        "path": ref.path,
        "detail": res.detail.label,
        "message": message,
        "node": describe.node(node) if node is not None else None,
        "accepted": accepted.label,
        "enforcement": status.enforcement.label if accepted is Accepted.ACCEPTED and status.enforcement is not None else None,
        "beatenBy": sorted(status.beaten_by),
        "ancestors": sorted(str(k) for k in status.ancestors),
        "note": note,
        "contextCount": status.contexts,
        "statusCounts": {
            "enforced": status.enforced,
            "partiallyEnforced": status.partial,
            "overridden": status.overridden,
            "conflicted": status.conflicted,
        },
        "affects": {"contexts": status.enforced + status.partial, **{k: len(v) for k, v in reach.items()}},
        "contexts": [
            {**describe.context(ctx.path, True), "status": state.label, "beatenBy": beaten} for ctx, state, beaten in shown
        ],
        "omitted": omitted,
    }


def explain(project: Project, query: str, *, default_namespace: str = "default", limit: int = DEFAULT_LIMIT) -> dict[str, Any]:
    """The explanation document for `query` (schemas/explain.schema.json). Raises ExplainError."""
    return explain_found(project, find_object(project, parse_query(query), default_namespace), limit)


def explain_object(
    project: Project, obj: K8sObject, section: Section | None = None, limit: int = DEFAULT_LIMIT
) -> dict[str, Any]:
    """The explanation document of an object already found (the language server's hover).
    Raises ExplainError."""
    return explain_found(project, Found(obj, section, object_node(project, obj, section)), limit)


def explain_found(project: Project, found: Found, limit: int = DEFAULT_LIMIT) -> dict[str, Any]:
    """A policy's reach, or the effective policy of any other object."""
    policy = next((p for p in project.resolution.policies() if p.obj is found.obj), None)
    if policy is not None:
        if found.section is not None:
            raise ExplainError(
                f"{found.obj.key} is a policy: sections name parts of targets, drop '#{_section_text(found.section)}'"
            )
        return explain_policy(project, found, policy, limit)
    return explain_target(project, found, limit)
