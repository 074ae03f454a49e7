"""The facets and folds of one run, kept for the next run of the same process.

A fold is a function of its stack's facets and the kind's profile, and a facet of its policy and
the node it is attached to (policylint.semantics.effective.facets, fold). Nothing else: no
topology, no index. So a long-lived process (a language server) whose next run hands the
simulation the same `Policy` instances for the objects of unchanged files
(`Resolution.adopt_policies`; the objects themselves are the same instances,
policylint.incremental.resident) can hand it the same facets for them, and a stack made of the
same facets, in the same order, folds to what it folded to before. Of the stacks an edit's part
holds (718 at 10,000 objects), only those holding a policy of the edited file, or a policy newly
attached, are folded again (docs/performance.md#the-language-server).

Everything is kept by identity, never by value: a facet is the run's answer for (the policy
instance, the node, whether the policy only claims the node, which attachment of that policy to
that node it is), and a stack is a tuple of facets, which hash by identity. A policy built again
(its file changed, its profile changed) has other facets, so every stack holding it misses. The
rules compare policies, facets and fold results by identity, which is why the kept ones must be
the run's own: they are, since the run's policies are the kept ones.

Each run keeps what it used (`begin` starts a generation; what the run before kept and this run
did not ask for is dropped at the next `begin`), so the table holds one part's stacks, not every
stack the process ever folded.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from policylint.k8s.objects import K8sObject
from policylint.profiles.registry import PolicyProfile
from policylint.semantics.effective.facets import Facet, FoldResult, NodeKey, OrderSensitivity, _claim, policy_facets
from policylint.semantics.effective.fold import Offered, fold, order_sensitivity, order_stack
from policylint.semantics.effective.states import CONTRIBUTES, target_states
from policylint.values import frozen
from policylint.vocabulary import Enforcement

if TYPE_CHECKING:
    from policylint.profiles.policy import Policy

# (policy object, node, claim only, which attachment of the policy to the node): one call of
# `facets` in a run.
FacetsAt = tuple[K8sObject, NodeKey, bool, int]
# Each (policy object, target node) of a folded stack, with its facets there and its status.
States = tuple[tuple[tuple[K8sObject, NodeKey], tuple[list[Facet], Enforcement]], ...]


@frozen(eq=False)
class Ordered:
    """A raw stack (the facets attached along a path, top first) as the fold takes it: each
    policy once, at its most specific node, least specific first."""

    stack: tuple[Facet, ...]
    groups: tuple[tuple[int, int, str], ...]  # the same-level groups (`order_stack`)


@frozen(eq=False)
class Folded:
    """One ordered stack folded, with what the simulation reads of it for every context holding
    it: the result, which orders of same-level policies would change it, each policy's status on
    each of its targets, and the policies whose values are in force (`CONTRIBUTES`)."""

    result: FoldResult
    sensitive: list[OrderSensitivity]
    states: States
    contributing: tuple[K8sObject, ...]


class KeptFolds:
    """Facets, stack orders and folds by the identity of what they were made from."""

    def __init__(self) -> None:
        self._facets: dict[FacetsAt, tuple[Policy, list[Facet]]] = {}
        self._orders: dict[tuple[Facet, ...], Ordered] = {}
        self._folds: dict[tuple[Facet, ...], Folded] = {}
        self._old_facets: dict[FacetsAt, tuple[Policy, list[Facet]]] = {}
        self._old_orders: dict[tuple[Facet, ...], Ordered] = {}
        self._old_folds: dict[tuple[Facet, ...], Folded] = {}
        self._seen: dict[tuple[K8sObject, NodeKey, bool], int] = {}
        self._offered: Offered = {}  # each facet's leaf paths, for every fold of the run that holds it
        self.reused = 0  # stacks of this run whose fold was kept (tests and measures read them)
        self.fresh = 0  # and folded now

    def begin(self) -> None:
        """A new run: what the last one used is what this one may take."""
        self._old_facets, self._facets = self._facets, {}
        self._old_orders, self._orders = self._orders, {}
        self._old_folds, self._folds = self._folds, {}
        self._seen = {}
        self._offered = {}
        self.reused = self.fresh = 0

    def facets(self, policy: Policy, node: NodeKey, *, claim: bool = False) -> list[Facet]:
        """The policy's facets on `node` (its claim only, with `claim`): the last run's when it
        made them of this very policy instance, else new ones. A policy naming one node twice has
        two sets, as a run from nothing makes (facets are told apart by identity)."""
        seen = (policy.obj, node, claim)
        n = self._seen.get(seen, 0)
        self._seen[seen] = n + 1
        at = (policy.obj, node, claim, n)
        found = self._facets.get(at) or self._old_facets.get(at)
        if found is None or found[0] is not policy:
            found = (policy, [_claim(policy, node)] if claim else policy_facets(policy, node))
        self._facets[at] = found
        return found[1]

    def ordered(self, raw: tuple[Facet, ...]) -> Ordered:
        found = self._orders.get(raw) or self._old_orders.get(raw)
        if found is None:
            found = _ordered(raw)
        self._orders[raw] = found
        return found

    def folded(self, ordered: Ordered, profile: PolicyProfile) -> Folded:
        """The stack folded: kept, or folded now. One `Folded` per distinct stack in a run, so
        that contexts with the same stack have the same result (PL605 counts distinct results by
        identity)."""
        stack = ordered.stack
        found = self._folds.get(stack)
        if found is not None:
            return found
        found = self._old_folds.get(stack)
        if found is None:
            self.fresh += 1
            found = _fold(stack, ordered.groups, profile, self._offered)
        else:
            self.reused += 1
        self._folds[stack] = found
        return found


def _ordered(raw: tuple[Facet, ...]) -> Ordered:
    # A path's facets come top first, so their ranks never decrease. Where each is of another
    # policy than the others and deeper than the one before (nearly every stack: a Gateway's
    # policy and a route's), the raw stack is the order the fold takes, with no same-level group.
    rank, policies = -1, set()
    for facet in raw:
        if facet.rank <= rank or facet.policy.obj in policies:
            break
        rank = facet.rank
        policies.add(facet.policy.obj)
    else:
        return Ordered(raw, ())
    # A policy attached at two nodes of one path counts once, at the more specific node.
    best: dict[K8sObject, int] = {}
    for facet in raw:
        pid = facet.policy.obj
        best[pid] = max(best.get(pid, -1), facet.rank)
    stack, groups = order_stack(f for f in raw if f.rank == best[f.policy.obj])
    return Ordered(tuple(stack), tuple(groups))


def _fold(stack: tuple[Facet, ...], groups: Sequence[tuple[int, int, str]], profile: PolicyProfile, offered: Offered) -> Folded:
    result = fold(stack, profile, offered)
    sensitive = order_sensitivity(stack, list(groups), profile, result, offered) if groups else []
    states = tuple(target_states(stack, result))
    contributing = tuple(dict.fromkeys(pid for (pid, _), (_, state) in states if state in CONTRIBUTES))
    return Folded(result, sensitive, states, contributing)
