"""PL6xx: effective policy and conflicts (GEP-713 "Conflicting specs, Inheritance, Merge strategies,
and Effective metaresources"; docs/effective-policy.md).

Every rule reads the simulation (`Project.simulation()`, policylint.semantics.effective.simulation): the
contexts, the fold of each policy stack, and per (policy, target) status. None of them
computes merges itself, and none knows a vendor kind: strategies come from profiles.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import field
from typing import Any

from policylint.findings import Issue, Related, Severity
from policylint.identity import IdentityMap, IdentitySet
from policylint.k8s.admission import Catalogue, validate
from policylint.k8s.names import ns_name
from policylint.k8s.objects import K8sObject
from policylint.profiles.policy import Policy
from policylint.project import Project, across_rules
from policylint.rules.base import POLICY, PolicyRule, Rule, RuleOption
from policylint.semantics.effective.facets import RANK, Facet, FoldResult, NodeKey, TargetStatus, node_label
from policylint.semantics.effective.merge import Tagged, leaves, untag
from policylint.semantics.effective.simulation import Simulation, path_label
from policylint.semantics.resolution import TargetResolution
from policylint.stages import Stage
from policylint.textsafe import json_text, truncate
from policylint.values import record
from policylint.vocabulary import Enforcement, Role

_MAX_SHOWN = 3


def _targets(project: Project) -> Iterator[tuple[Policy, TargetResolution, TargetStatus]]:
    """Every target status of every policy."""
    for policy in project.resolution.policies():
        for res, status in _policy_targets(project, policy):
            yield policy, res, status


@across_rules
class _Statuses:
    """Each policy's targets with their status in the simulation, worked out once for the rules
    that read them (PL601, PL602, PL603): each rule went through every policy's targets and looked
    each status up again, which cost the three together about as much as their own work."""

    def __init__(self, project: Project) -> None:
        self._project = project
        self._all: dict[K8sObject, tuple[tuple[TargetResolution, TargetStatus | None], ...]] = {}
        self._live: dict[K8sObject, tuple[tuple[TargetResolution, TargetStatus], ...]] = {}

    def of(self, policy: Policy) -> tuple[tuple[TargetResolution, TargetStatus | None], ...]:
        """Every target of `policy` (`Resolution.targets`) with its status (None: no context)."""
        found = self._all.get(policy.obj)
        if found is None:
            sim = self._project.simulation()
            found = self._all[policy.obj] = tuple(
                (res, sim.target_status(policy, res)) for res in self._project.resolution.targets(policy)
            )
        return found

    def live(self, policy: Policy) -> tuple[tuple[TargetResolution, TargetStatus], ...]:
        """The target statuses of `policy` that some context reads, each once."""
        found = self._live.get(policy.obj)
        if found is None:
            # Two references to one target share its status: once per status, which compares by value.
            seen: IdentitySet[TargetStatus] = IdentitySet()
            live: list[tuple[TargetResolution, TargetStatus]] = []
            for res, status in self.of(policy):
                if status is None or status.contexts == 0 or status in seen:
                    continue
                seen.add(status)
                live.append((res, status))
            found = self._live[policy.obj] = tuple(live)
        return found


def _policy_targets(project: Project, policy: Policy) -> tuple[tuple[TargetResolution, TargetStatus], ...]:
    """Every target status of `policy` that some context reads."""
    return project.derived(_Statuses).live(policy)


def _conflicts(project: Project) -> Iterator[tuple[Policy, TargetResolution, tuple[Facet, str], str]]:
    """Each target a policy loses to a conflict: the winner and why, and in how many of the
    target's contexts ("" when in all of them, or when no traffic passes the target and the
    conflict is decided when the policies attach)."""
    sim = project.simulation()
    statuses = project.derived(_Statuses)
    for policy in project.resolution.policies():
        seen: IdentitySet[TargetStatus] = IdentitySet()
        for res, status in statuses.of(policy):
            if status is not None and status.contexts:
                if status in seen or not status.conflicted or status.conflict is None:
                    continue
                seen.add(status)
                scope = "" if status.conflicted == status.contexts else f" in {status.conflicted} of {status.contexts} contexts"
                yield policy, res, status.conflict, scope
            elif res.accepted:
                conflict = sim.conflict_at_target(policy, res)
                if conflict is not None:
                    yield policy, res, conflict, ""


def _label(policy: Policy) -> str:
    key = policy.key
    return f"{key.kind} {key.namespace}/{key.name}" if key.namespace else f"{key.kind} {key.name}"


def _count(n: int, plural: str, singular: str | None = None) -> str:
    """`3 contexts`, `1 context`."""
    return f"{n} {plural if n != 1 else singular or plural[:-1]}"


def _winners(names: Iterable[str]) -> str:
    """The policies that beat another, by name."""
    return ", ".join(sorted(names)) or "other policies"


def _target_label(res: TargetResolution) -> str:
    ref = res.ref
    ns = f"{res.namespace}/" if res.namespace else ""
    section = f"#{ref.section_name}" if ref.section_name else ""
    return f"{ref.kind} {ns}{ref.name}{section}"


def _policy_related(project: Project, names: Iterable[str], kind: str, message: str) -> list[Related]:
    """Related locations for policies named `{namespace}/{name}` (or `name`) of one kind."""
    out = []
    for name in sorted(names)[:_MAX_SHOWN]:
        ns, _, short = name.rpartition("/")
        for policy in project.resolution.policies():
            if policy.key.kind == kind and policy.key.name == short and (policy.key.namespace or "") == ns:
                out.append(Related(message.format(name=name), object=policy.obj, path="metadata.name"))
                break
    return out


def _render(value: Any, limit: int = 300) -> str:
    # Bounded as it is written (policylint.textsafe): a spec built from YAML aliases can be far
    # larger written out than in memory, and a message only needs to show what differs.
    return json_text(value, limit, sort_keys=True) if value is not None else "nothing"


class PolicyConflicted(Rule):
    """Two policies of a kind without merging (strategy None) target the same object and section; all but the oldest are rejected."""

    id = "PL601"
    name = "policy-conflicted"
    severity = Severity.ERROR
    subjects = frozenset({POLICY})
    reads = frozenset({Stage.SIMULATION})

    def check(self, project: Project) -> Iterable[Issue]:
        for policy, res, conflict, scope in _conflicts(project):
            winner, why = conflict
            target = _target_label(res)
            merges = (
                "merges policies on one target only where they set different fields"
                if policy.profile.merge.same_target == "field"
                else "does not merge policies on one target"
            )
            message = (
                f"{_label(policy)} is Conflicted on {target}{scope}: {res.ref.name} already claimed by {winner.name} ({why});"
                f" {policy.profile.kind} {merges}, so this one is rejected (Accepted=False)"
            )
            if why.startswith("tie-break"):
                message += "; the winner would change with creation order (creationTimestamp is set by the API server)"
            related = [Related(f"the policy that wins: {winner.name}", object=winner.policy.obj, path="metadata.name")]
            yield self.issue(policy.obj, res.ref.path, message, related=related)


class PolicyOverridden(Rule):
    """A policy is overridden in every context it reaches: it has no effect at all."""

    id = "PL602"
    name = "policy-overridden"
    severity = Severity.WARNING
    subjects = frozenset({POLICY})
    reads = frozenset({Stage.SIMULATION})

    def check(self, project: Project) -> Iterable[Issue]:
        by_policy: dict[K8sObject, list[tuple[TargetResolution, TargetStatus]]] = {}
        policies: dict[K8sObject, Policy] = {}
        for policy, res, status in _targets(project):
            by_policy.setdefault(policy.obj, []).append((res, status))
            policies[policy.obj] = policy
        for pid, entries in by_policy.items():
            live = [(r, s) for r, s in entries if s.enforcement is not None]
            if not live or any(s.enforcement != Enforcement.OVERRIDDEN for _, s in live):
                continue
            policy = policies[pid]
            winners = sorted(set().union(*(s.beaten_by for _, s in live)))
            contexts = sum(s.contexts - s.conflicted for _, s in live)
            example = path_label(live[0][1].overridden_in[0]) if live[0][1].overridden_in else ""
            related = _policy_related(project, winners, policy.key.kind, "overridden by {name}")
            if _beaten_only_by_more_specific_defaults(project, policy, winners):
                # Defaults that every current route overrides still apply to a route added later that
                # sets nothing (a deny-by-default policy, a low default rate limit): a guard rail,
                # not dead configuration (GEP-713 "Defaults").
                message = (
                    f"{_label(policy)} sets defaults that {_winners(winners)} override in every context it reaches today"
                    f" ({_count(contexts, 'contexts')}, e.g. {example}): it is a guard rail for routes added later"
                    " that set nothing, and has no effect until then"
                )
                yield self.issue(policy.obj, live[0][0].ref.path, message, related=related, severity=Severity.INFO)
                continue
            message = (
                f"{_label(policy)} is overridden in every context it reaches ({_count(contexts, 'contexts')}, e.g. {example})"
                f" by {_winners(winners)}: it has no effect"
            )
            hint = "Remove it, or change the policies that beat it."
            yield self.issue(policy.obj, live[0][0].ref.path, message, related=related, hint=hint)


def _beaten_only_by_more_specific_defaults(project: Project, policy: Policy, winners: Iterable[str]) -> bool:
    """Whether the policy offers only defaults and every policy that beats it does too: then the
    more specific defaults win (GEP-713), and the policy's still apply where none is set. Beaten by
    an override, it is dead: a route added later gets the override too."""
    facets = project.simulation().facets
    mine = facets.get(policy.obj, [])
    if not mine or any(f.role is not Role.DEFAULT for f in mine):
        return False
    names = set(winners)
    others = [
        f
        for p in project.resolution.policies()
        if p.key.kind == policy.key.kind and p.key.group == policy.key.group and ns_name(p.key.namespace, p.key.name) in names
        for f in facets.get(p.obj, [])
    ]
    return bool(others) and all(f.role is Role.DEFAULT for f in others)


class PolicyPartiallyEnforced(PolicyRule):
    """A policy is beaten in some contexts (or for some fields) by other policies of its kind."""

    id = "PL603"
    name = "policy-partially-enforced"
    severity = Severity.INFO
    subjects = frozenset({POLICY})
    reads = frozenset({Stage.SIMULATION})

    def check_policy(self, project: Project, policy: Policy) -> Iterable[Issue]:
        for res, status in _policy_targets(project, policy):
            if status.enforcement != Enforcement.PARTIALLY_ENFORCED:
                continue
            beaten = status.overridden + status.partial
            where = "; ".join(path_label(p) for p in status.overridden_in[:_MAX_SHOWN])
            message = (
                f"{_label(policy)} is PartiallyEnforced on {_target_label(res)}: beaten in {beaten} of"
                f" {status.contexts - status.conflicted} contexts by {_winners(status.beaten_by)}"
                f" (e.g. {where})"
            )
            yield self.issue(policy.obj, res.ref.path, message)


class OrderSensitiveOutcome(Rule):
    """The effective policy depends on which of two same-level policies was created first."""

    id = "PL604"
    name = "order-sensitive-outcome"
    severity = Severity.WARNING
    subjects = frozenset({POLICY})
    reads = frozenset({Stage.SIMULATION})

    def check(self, project: Project) -> Iterable[Issue]:
        sim = project.simulation()
        for (*_names, _kind), (context, item) in sorted(sim.order_sensitive.items(), key=lambda kv: kv[0]):
            established = next(f for f in context.stack if f.name == item.policies[0])
            policy = established.policy
            decided = (
                "their creationTimestamps (set by the API server when each is created, so a manifest value does not survive)"
                if item.decided_by == "creationTimestamp"
                else "{namespace}/{name} order, because creationTimestamps are missing or equal"
            )
            message = (
                f"order-sensitive outcome in context {path_label(context.path)}: {', '.join(item.policies)} sit at the same level"
                f" and the established one is decided by {decided}; strategy taken from established {established.name}"
                f" ({established.strategy_label()}); effective spec {_render(untag(context.result.tree))},"
                f" but {_render(item.alternative)} if {item.policies[-1]} were created first (they differ at"
                f" {', '.join(item.keys)}); merge them into one policy, or attach them at different levels, so the order"
                " does not matter"
            )
            related = _policy_related(project, item.policies[1:], policy.key.kind, "same-level policy {name}")
            yield self.issue(policy.obj, "metadata.name", message, related=related)


class ContextDependentEffectivePolicy(Rule):
    """One object gets different effective policies depending on the path traffic takes to it."""

    id = "PL605"
    name = "context-dependent-effective-policy"
    severity = Severity.INFO
    subjects = frozenset({POLICY})
    reads = frozenset({Stage.SIMULATION})

    def check(self, project: Project) -> Iterable[Issue]:
        sim = project.simulation()
        # One finding per object and kind, naming the first of its sections that diverges.
        reported: set[tuple[tuple[str, str], object]] = set()
        for (gk, node), results in sorted(sim.object_results.items(), key=lambda kv: (kv[0][0], _node_key(kv[0][1]))):
            if len(results) < 2 or (gk, node[1]) in reported:
                continue
            distinct: dict[str, list[tuple[NodeKey, ...]]] = {}
            for result, path in results.values():
                # A long prefix identifies a spec well enough to group by, and stays bounded.
                distinct.setdefault(_render(untag(result.tree), 100_000), []).append(path)
            if len(distinct) < 2:
                continue
            obj = project.index.get(node[1])
            if obj is None:
                continue
            reported.add((gk, node[1]))
            shown = "; ".join(
                f"{path_label(paths[0])}: {truncate(spec, 300, '...')}" for spec, paths in sorted(distinct.items())[:_MAX_SHOWN]
            )
            more = f" (and {len(distinct) - _MAX_SHOWN} more)" if len(distinct) > _MAX_SHOWN else ""
            message = (
                f"{obj.kind} {node[1].namespace + '/' if node[1].namespace else ''}{obj.name} gets {len(distinct)} different"
                f" effective {gk[1]} specs depending on the path traffic takes (GEP-713 contexts): {shown}{more};"
                " if that is not intended, make the policies along those paths agree"
            )
            yield self.issue(obj, "metadata.name", message)


def _node_key(node: NodeKey) -> tuple[str, str, str]:
    return (node[0], str(node[1]), str(node[2]))


class OverrideWithNothingBelow(Rule):
    """An override targets the most specific level of its kind, where nothing can be below it to override."""

    id = "PL606"
    name = "override-with-nothing-below"
    severity = Severity.INFO
    subjects = frozenset({POLICY})
    reads = frozenset({Stage.SIMULATION})

    def check(self, project: Project) -> Iterable[Issue]:
        sim = project.simulation()
        for policy in project.resolution.policies():
            overrides = [f for f in sim.facets.get(policy.obj, []) if f.role is Role.OVERRIDE]
            if not overrides:
                continue
            # Only a target at the kind's effective level (a leaf: acceptance scenario S10's "override
            # on a leaf with no descendants"). Higher up, an override with nothing below yet is a guard
            # rail for policies added later, which is what overrides are for (the original Policy
            # Attachment page: overrides let admins "enforce policy from the top down").
            leaf = RANK.get(policy.profile.effective_target, RANK["route"])
            reached = [
                f
                for f in overrides
                if sim.status.get((policy.obj, f.node)) is not None and (f.rank >= leaf or f.node[0] in ("rule", "port"))
            ]
            if not reached or any(f in sim.override_challenged for f in reached):
                continue
            facet = reached[0]
            message = (
                f"{_label(policy)} declares overrides ({facet.path}) on {node_label(facet.node)}, the most specific level"
                f" {policy.key.kind} reaches ({policy.profile.effective_target}): no policy can sit below it, so there is"
                " nothing to override and the values act as plain settings; declare them as defaults"
            )
            yield self.issue(policy.obj, facet.path, message)


class EmptyAtomicOverride(Rule):
    """An atomic override without values wipes out every more specific policy below it."""

    id = "PL607"
    name = "empty-atomic-override"
    severity = Severity.WARNING
    subjects = frozenset({POLICY})
    reads = frozenset({Stage.SIMULATION})

    def check(self, project: Project) -> Iterable[Issue]:
        sim = project.simulation()
        for facet, units, contexts in sorted(sim.erasures.values(), key=lambda e: (str(e[0].policy.key), e[0].path)):
            policy = facet.policy
            message = (
                f"{facet.name} erases {_count(units, 'entries', 'entry')} in {_count(contexts, 'contexts')}:"
                f" its {facet.strategy_label()} has no values, and the established"
                " side wins whole (GEP-713 Atomic Overrides), so every entry of the more specific policies below is"
                " replaced by nothing; give the override its values or remove it"
            )
            yield self.issue(policy.obj, facet.path, message)


class BlastRadiusExceeded(Rule):
    """A policy affects more contexts than the rule's max-affected option allows."""

    id = "PL608"
    name = "blast-radius-exceeded"
    severity = Severity.WARNING
    subjects = frozenset({POLICY})
    reads = frozenset({Stage.SIMULATION})
    options = (
        RuleOption(
            "max-affected",
            int,
            None,
            "report policies whose values reach more than this many contexts (unset: the rule is off)",
            minimum=0,
            fewer="higher",
        ),
    )

    def counts_blast_radii(self) -> bool:
        return isinstance(self.option("max-affected"), int)

    def check(self, project: Project) -> Iterable[Issue]:
        limit = self.option("max-affected")
        if not isinstance(limit, int):
            return
        sim: Simulation = project.simulation()
        for policy in project.resolution.policies():
            counts = sim.policy_affects(policy).counts()
            if counts["contexts"] <= limit:
                continue
            detail = ", ".join(_count(v, k) for k, v in counts.items() if k != "contexts" and v)
            message = (
                f"{_label(policy)} affects {_count(counts['contexts'], 'contexts')} ({detail}), more than max-affected {limit}:"
                " a change to it reaches all of them"
            )
            yield self.issue(policy.obj, "metadata.name", message)


# Keep the status names importable for rule docs and tests.
__all__ = ["RULES", "Facet"]


class InvalidEffectiveSpec(Rule):
    """Policies merge into an effective spec their CRD's schema or CEL rules refuse (two fields that exclude each other, a list too long), although each policy alone is valid."""

    id = "PL609"
    name = "invalid-effective-spec"
    severity = Severity.WARNING
    subjects = frozenset({POLICY})
    reads = frozenset({Stage.SIMULATION})

    def check(self, project: Project) -> Iterable[Issue]:
        sim = project.simulation()
        catalogue = project.admissions().catalogue
        results: dict[Any, Any] = {}  # CEL results shared by every validation of the run
        # Fold result (shared by every context of a stack) -> what the merge broke.
        checked: IdentityMap[FoldResult, list[tuple[str, str, str, list[Facet]]]] = IdentityMap()
        # (policy, what is refused) -> the finding's parts: contexts, an example, the others merged.
        found: dict[tuple[K8sObject, str, str], _Merged] = {}
        for group in sim.stack_groups():
            result = group.result
            if result.tree is None:
                continue
            broken = checked.get(result)
            if broken is None:
                broken = checked[result] = self._broken(group.stack, result.tree, catalogue, results)
            for path, problem, origin, involved in broken:
                policies = {f.policy.obj: f for f in involved}
                for facet in involved:
                    entry = found.get((facet.policy.obj, path, problem))
                    if entry is None:
                        entry = found[(facet.policy.obj, path, problem)] = _Merged(facet, origin, group.examples[0])
                    entry.contexts += group.count
                    entry.others |= {f.name for pid, f in policies.items() if pid != facet.policy.obj}
        for (_, path, problem), entry in sorted(found.items(), key=lambda kv: (str(kv[1].facet.policy.key), kv[0][1:])):
            facet = entry.facet
            others = ", ".join(sorted(entry.others))
            message = (
                f"{_label(facet.policy)} merges with {others} into an effective spec {entry.origin} refuses:"
                f" {path}{problem} ({_count(entry.contexts, 'contexts')}, e.g. {path_label(entry.example)}); no one"
                " object could hold that spec, and each policy alone is valid, so what the controller makes of it is"
                " not what either author wrote"
            )
            related = _policy_related(project, entry.others, facet.policy.key.kind, "merged with this policy")
            hint = "Set the fields that exclude each other at one level only, or give the more specific policy no mergeType."
            yield self.issue(facet.policy.obj, entry.at(path), message, related=related, hint=hint)

    @staticmethod
    def _broken(
        stack: Iterable[Facet], tree: Tagged, catalogue: Catalogue, results: dict[Any, Any]
    ) -> list[tuple[str, str, str, list[Facet]]]:
        """What the schema refuses in the merged spec and in no contributing facet alone: (path,
        problem, which schema, the facets whose values are under the path)."""
        facets = list(stack)
        # Every value of the tree comes from a facet of the stack: a stack of one policy's facets
        # merged nothing, and its tree is not walked.
        if len({f.policy.obj for f in facets}) < 2:
            return []
        contributing: dict[Facet, Facet] = {}
        _leaf_sources(tree, contributing)
        if len({f.policy.obj for f in contributing.values()}) < 2:
            return []  # nothing merged: each policy's own rejections are PL703's and PL704's
        where = facets[-1]
        found = catalogue.schema(where.policy.obj)
        if found is None or any(f.path != where.path for f in contributing.values()):
            return []
        schema, source = found
        prefix = tuple(where.path.split("."))

        def nest(value: Any) -> Any:
            for part in reversed(prefix):
                value = {part: value}
            return value

        def refused(value: Any) -> set[tuple[str, str]]:
            problems, failures = validate(nest(value), schema, results)
            out = {(r.path, f" {r.message}") for r in problems}
            out |= {(r.path, f": {r.message} (a CEL rule)") for r in failures if not r.undecided}
            return out

        alone: set[tuple[str, str]] = set()
        for facet in contributing.values():
            alone |= refused(untag(facet.tree))
        origin = f"the {source} CRD" if source else "its CRD"
        out = []
        for path, problem in sorted(refused(untag(tree)) - alone):
            rel = tuple(path.split(".")[len(prefix) :]) if path != where.path else ()
            rel = tuple(p.split("[", 1)[0] for p in rel)
            involved = {
                leaf.source: leaf.source
                for key, leaf in leaves(tree)
                if isinstance(leaf.source, Facet) and (key[: len(rel)] == rel or rel[: len(key)] == key)
            }
            out.append((path, problem, origin, sorted(involved.values(), key=lambda f: (f.rank, f.name))))
        return out


def _leaf_sources(node: Tagged, out: dict[Facet, Facet]) -> None:
    """The facets the leaves of `node` come from, in leaf order (`merge.leaves` without the key
    path it builds for every leaf, which PL609 does not read here)."""
    children = node.children
    if children:
        for child in children.values():
            _leaf_sources(child, out)
    elif isinstance(node.source, Facet):
        out.setdefault(node.source, node.source)


@record
class _Merged:
    facet: Facet
    origin: str
    example: tuple[NodeKey, ...]
    contexts: int = 0
    others: set[str] = field(default_factory=set)

    def at(self, path: str) -> str:
        """The policy's own field nearest the refused path: its first value under it, else the path."""
        prefix = self.facet.path
        rest = path[len(prefix) :].lstrip(".") if path.startswith(prefix) else ""
        rel = tuple(p.split("[", 1)[0] for p in rest.split(".")) if rest else ()
        for key, _ in leaves(self.facet.tree):
            if key[: len(rel)] == rel or rel[: len(key)] == key:
                return ".".join((prefix, *key[: max(len(rel), 1)]))
        return prefix


RULES: list[type[Rule]] = [
    PolicyConflicted,
    PolicyOverridden,
    PolicyPartiallyEnforced,
    OrderSensitiveOutcome,
    ContextDependentEffectivePolicy,
    OverrideWithNothingBelow,
    EmptyAtomicOverride,
    BlastRadiusExceeded,
    InvalidEffectiveSpec,
]
