"""Hints for references that resolve to nothing, shared by the PL2xx and PL4xx rules (`Names`
finds the objects of a kind by name and namespace for them).

A missing target, parent or backend is most often a slip: the right name in another namespace or
of another kind, or a typo. A rule collects a few such guesses, each with a related location on the
object it names, in the message (they are specific to the finding); the finding's hint says, the
same way for every rule (`provable_hint`), how to make the reference provable: declare the object
external (`--external`), lint with the repository that holds it (`--context`), and, where the
absence is unprovable, say the input is the whole cluster (`--complete`;
docs/semantics.md#partial-repositories).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from policylint.findings import Fix, Related
from policylint.k8s.names import did_you_mean
from policylint.k8s.objects import K8sObject
from policylint.rules.refs import where
from policylint.semantics.topology import Listener, ObjectRef

if TYPE_CHECKING:
    from policylint.project import Project

# Past a few guesses, a list of them stops helping.
MAX_HINTS = 3


def close_name(name: str, candidates: Iterable[str]) -> str | None:
    """The candidate most like `name` (a typo), if one is close enough."""
    close = did_you_mean(name, candidates)
    return close[0] if close else None


def sentence(clause: str) -> str:
    """A hint is one sentence: `add a ReferenceGrant ...` -> `Add a ReferenceGrant ....`"""
    return clause[:1].upper() + clause[1:] + ("" if clause.endswith(".") else ".")


def provable_hint(kind: str, namespace: str | None, name: str, *, unprovable: bool = False) -> str:
    """How to make a reference to a missing object provable. `unprovable`: the absence is a
    warning until `--complete` says the input is the whole cluster, so that is one way too."""
    pattern = f"{kind}/{namespace}/{name}" if namespace is not None else f"{kind}/{name}"
    if unprovable:
        return (
            f"To make it provable: declare it with --external {pattern}, lint with the repository that holds it"
            " (--context PATH), or pass --complete if the input is the whole cluster."
        )
    return (
        f"If it is defined outside this repository, declare it with --external {pattern}, or lint with the"
        " repository that holds it (--context PATH)."
    )


def hints_suffix(hints: Sequence[str]) -> str:
    """`; hint; hint`: hints appended to a finding's message."""
    return "".join(f"; {h}" for h in hints)


class NearMatches:
    """The hints for one missing reference, and the related locations of the objects they name."""

    def __init__(self) -> None:
        self.hints: list[str] = []
        self.related: list[Related] = []
        # The finding's hint: how to make the reference provable (`provable`).
        self.hint: str | None = None
        # The edit, when one guess is the obvious answer (a typo of one existing name).
        self.fix: Fix | None = None

    def __bool__(self) -> bool:
        return bool(self.hints)

    @property
    def full(self) -> bool:
        """MAX_HINTS objects are named already: `add` keeps no more."""
        return len(self.related) >= MAX_HINTS

    def add(self, hint: str, obj: K8sObject, *, note: str | None = None, path: str = "metadata.name") -> None:
        """A guess naming `obj`, with a related location (`did you mean this <kind>?` on its name by default)."""
        # An object defined again in another file (PL005) is one guess, not one per definition.
        if not self.full and hint not in self.hints:
            self.hints.append(hint)
            self.related.append(Related(note or f"did you mean this {obj.kind}?", object=obj, path=path))

    def note(self, hint: str) -> None:
        """A hint that names no object."""
        self.hints.append(hint)

    def provable(self, kind: str, namespace: str | None, name: str, *, unprovable: bool = False) -> None:
        """The finding's hint, guesses or not: the object may be defined elsewhere (`provable_hint`)."""
        self.hint = provable_hint(kind, namespace, name, unprovable=unprovable)

    def suffix(self) -> str:
        return hints_suffix(self.hints)


# -- a Gateway's frontend CA references (PL402, PL417) ------------------------------------------


def frontend_scope(ref: ObjectRef) -> str:
    """Why a frontend CA reference applies to no listener (`Topology.frontend_listeners` is empty):
    Gateway API FrontendTLSConfig applies to listeners handling HTTPS traffic on matching ports."""
    if ref.tls_port is not None:
        return f"no listener handles HTTPS traffic on port {ref.tls_port}, the port of this perPort entry"
    return "the default configuration applies to no listener: none handles HTTPS traffic on a port without a perPort entry"


def listeners_get(gateway: K8sObject, listeners: Sequence[Listener]) -> str:
    """`listener https gets`, `listeners a, b and ListenerSet ns/set#c get`: the Gateway's own
    by name, as the subject of what they get."""
    names = [str(x.name) if x.owner is gateway else x.label() for x in listeners[:5]]
    more = f" and {len(listeners) - 5} more" if len(listeners) > 5 else ""
    one = len(listeners) == 1
    return f"listener{'' if one else 's'} {', '.join(names)}{more} get{'s' if one else ''}"


def namespace_hint(obj: K8sObject, namespace_set: bool, unset: str) -> str:
    """The hint for the object found in another namespace: a wrong `namespace`, or a missing one
    (`unset` says where to set it and what it defaults to)."""
    if namespace_set:
        return f"{obj.kind} {where(obj)} exists: did you mean namespace: {obj.namespace}?"
    return f"{obj.kind} {where(obj)} exists: set namespace: {obj.namespace} {unset}"


class Names:
    """Objects of one kind by name and by namespace, indexed on first use: hints for a missing
    reference cost one dictionary lookup, not a scan of the kind, however many are missing."""

    def __init__(self, project: Project) -> None:
        self._project = project
        self._by_name: dict[tuple[str, str], dict[str, list[K8sObject]]] = {}
        self._by_namespace: dict[tuple[str, str], dict[str | None, dict[str, K8sObject]]] = {}

    def _build(self, group: str, kind: str) -> None:
        by_name: dict[str, list[K8sObject]] = {}
        by_namespace: dict[str | None, dict[str, K8sObject]] = {}
        for obj in self._project.index.of_kind(group, kind):
            by_name.setdefault(obj.name, []).append(obj)
            by_namespace.setdefault(obj.namespace, {}).setdefault(obj.name, obj)
        self._by_name[(group, kind)] = by_name
        self._by_namespace[(group, kind)] = by_namespace

    def named(self, group: str, kind: str, name: str) -> list[K8sObject]:
        """Every object of the kind with this name, in any namespace."""
        if (group, kind) not in self._by_name:
            self._build(group, kind)
        return self._by_name[(group, kind)].get(name, [])

    def in_namespace(self, group: str, kind: str, namespace: str | None) -> dict[str, K8sObject]:
        if (group, kind) not in self._by_namespace:
            self._build(group, kind)
        return self._by_namespace[(group, kind)].get(namespace, {})

    def add_typo(self, matches: NearMatches, group: str, kind: str, namespace: str | None, name: str) -> None:
        """Without a better guess, the object of the kind in the namespace with a similar name (a typo)."""
        if matches:
            return
        candidates = self.in_namespace(group, kind, namespace)
        close = close_name(name, candidates)
        if close is not None:
            matches.add(f"did you mean {kind} {close}?", candidates[close])
