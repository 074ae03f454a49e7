"""The objects a policy chooses by label selector (profile `selections`,
policylint/profiles/selections.py): Kuadrant's API key authentication reads the Secrets its
`selector` matches, in the namespace of the `Kuadrant` custom resource unless `allNamespaces` is
true (docs/semantics.md#kuadrant). Rule PL417 reports a selection that chooses nothing in the
input as it reports a Secret missing by name (docs/semantics.md#secrets-and-configmaps): a
repository cannot prove that none exists, so a warning where the input manages Secrets there,
nothing where it holds none, and an error with --complete.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from typing import TYPE_CHECKING

from policylint.input.positions import join
from policylint.k8s.objects import K8sObject
from policylint.k8s.selectors import LabelSelector, SelectorError, parse_selector
from policylint.profiles.selections import SelectionSpec
from policylint.semantics.topology import expand_pattern
from policylint.values import frozen

if TYPE_CHECKING:
    from policylint.k8s.index import ProjectIndex
    from policylint.semantics.resolution import Resolution


@frozen
class Selection:
    """One label selector of a policy, and what it chooses in the input."""

    owner: K8sObject
    path: str  # the selector's own field
    spec: SelectionSpec
    selector: LabelSelector
    # The namespaces it chooses in: None, every one (`allNamespaces`); else those of the home
    # kind's objects in the input (empty: none is, and the namespace is not known).
    namespaces: tuple[str, ...] | None
    chosen: tuple[K8sObject, ...]  # the objects of the kind it matches there
    elsewhere: tuple[K8sObject, ...]  # those it would match in other namespaces
    # Whether the input manages the kind where it is read: holds one there (docs/semantics.md#secrets-and-configmaps).
    managed: bool
    # Whether an object of the input makes objects of the kind there (profile `producers`), whose
    # labels it does not show: one may be chosen.
    made: bool


def selections(index: ProjectIndex, resolution: Resolution) -> Iterator[Selection]:
    """Every selection of every policy whose profile declares some, in input order."""
    for policy in resolution.policies():
        for spec in policy.profile.selections:
            for found in _of(index, policy.obj, spec):
                scope = found.namespaces
                producers = resolution.producers()
                if scope:
                    made = any(producers.makes_in(spec.group, spec.kind, ns) for ns in scope)
                else:
                    made = any(producers.makes_in(spec.group, spec.kind, o.namespace or "") for o in index.objects)
                yield dataclasses.replace(found, made=made)


def _of(index: ProjectIndex, obj: K8sObject, spec: SelectionSpec) -> Iterator[Selection]:
    homes = tuple(sorted({o.namespace for o in index.of_kind(spec.home_group, spec.home_kind) if o.namespace}))
    candidates = index.of_kind(spec.group, spec.kind)
    for pattern in spec.paths:
        for path, holder in expand_pattern(obj.data, pattern):
            if not isinstance(holder, dict) or spec.selector not in holder:
                continue
            try:
                selector = parse_selector(holder[spec.selector])
            except SelectorError:
                continue  # the schema's to refuse (PL703)
            if not selector.requirements:
                continue  # an empty selector chooses every object of the kind
            matching = [o for o in candidates if selector.matches(o.labels)]
            namespaces: tuple[str, ...] | None = None if holder.get(spec.all_namespaces) is True else homes
            chosen = [o for o in matching if namespaces is None or not namespaces or o.namespace in namespaces]
            elsewhere = [o for o in matching if o not in chosen]
            # Where the home namespace is not known, the input cannot show it manages the kind there.
            managed = any(namespaces is None or o.namespace in namespaces for o in candidates)
            yield Selection(
                obj, join(path, spec.selector), spec, selector, namespaces, tuple(chosen), tuple(elsewhere), managed, False
            )
