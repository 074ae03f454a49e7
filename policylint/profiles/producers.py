"""Producers: objects a cluster component makes from another object, as profile data.

Repositories keep the object that asks for a Secret, a ConfigMap or a route, not the object
itself: cert-manager writes the Secret a Certificate names, External Secrets the one an
ExternalSecret names, the Sealed Secrets controller the one a SealedSecret seals, trust-manager a
ConfigMap per namespace for a Bundle, the kube-controller-manager `kube-root-ca.crt` in every
namespace, Envoy AI Gateway an HTTPRoute per AIGatewayRoute. A profile file's `producers` says
which kind makes which object, and where its name and namespace come from
(schemas/profile.schema.json; docs/semantics.md#objects-made-in-the-cluster). Rules never branch
on these kinds: `policylint.semantics.producers` reads the input through this data.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from policylint.input.named import shown
from policylint.profiles.registry import (
    PolicyProfile,
    TargetKind,
    builtin_documents,
    parse_user_profile,
    profiles_of,
    read_user_profile,
    validate_profile_document,
)
from policylint.values import frozen

# Where a produced object lives.
SOURCE_NAMESPACE = "source"  # the source object's own namespace
EVERY_NAMESPACE = "every"  # every namespace of the cluster


@frozen
class Condition:
    """A test on the source object (or, for `refs`, on the list item holding the references).

    `annotations`: the object has one of these annotations. Otherwise `field` (a dotted path) is
    read, with `default` standing for an absent value: `present` says whether it must be set (not
    null, not empty), `in_` lists the values that pass, `not_in` those that fail."""

    field: str = ""
    annotations: tuple[str, ...] = ()
    present: bool | None = None
    in_: tuple[Any, ...] | None = None
    not_in: tuple[Any, ...] = ()
    default: Any = None

    def holds(self, obj: Mapping[str, Any]) -> bool:
        if self.annotations:
            metadata = obj.get("metadata")
            annotations = metadata.get("annotations") if isinstance(metadata, dict) else None
            return isinstance(annotations, dict) and any(a in annotations for a in self.annotations)
        value = read_field(obj, self.field)
        if value is None or value == "":
            value = self.default
        if self.present is not None and (value is not None and value != "") != self.present:
            return False
        if self.in_ is not None and value not in self.in_:
            return False
        return value not in self.not_in


@frozen
class RefSpec:
    """The objects a source names in a list of references (cert-manager's gateway-shim: a
    Certificate, so a Secret, for each listener `certificateRefs` entry): `refs` under each of
    `items` for which every `where` condition holds. A reference of another group or kind than
    the one made is skipped, and so is one into another namespace when `same_namespace`."""

    items: str
    refs: str
    where: tuple[Condition, ...] = ()
    same_namespace: bool = False


@frozen
class Producer:
    by: str  # who makes the object, for messages ("cert-manager")
    makes: TargetKind
    source: TargetKind | None = None  # None: the cluster itself makes it, with no object asking
    name_fields: tuple[str, ...] = ()  # the first one set names the object; none: the source's name
    fixed_name: str | None = None
    # With no source: the cluster makes objects of the kind under names the input cannot show
    # (ServiceImports, from other clusters' ServiceExports): a missing one is unprovable.
    any_name: bool = False
    refs: RefSpec | None = None
    when: tuple[Condition, ...] = ()
    namespaces: str = SOURCE_NAMESPACE
    namespace_selector: str | None = None  # a field holding a label selector of namespaces
    # Fields each holding a label selector (`[*]`: each item of a list), ORed, and a field holding
    # a list of namespace names: the namespaces they select together; none set, none
    # (ClusterExternalSecret's namespaceSelector, namespaceSelectors and namespaces).
    namespace_selectors: tuple[str, ...] = ()
    namespace_names: str | None = None
    docs: str = ""
    project: str = ""

    def describe(self) -> str:
        """How the producer makes its object, for messages: what asks for it, and who makes it."""
        if self.source is None and self.any_name:
            return f"any {self.makes.kind} made by {self.by}"
        if self.source is None:
            return f"{self.fixed_name} in every namespace ({self.by})"
        if self.refs is not None:
            asks = f"{self.source.kind} {self.refs.refs.split('[')[0].rsplit('.', 1)[-1]}"
            if self.when and self.when[0].annotations:
                asks += f" with annotation {' or '.join(self.when[0].annotations)}"
        elif self.name_fields:
            asks = f"{self.source.kind} {self.name_fields[0]}"
        else:
            asks = self.source.kind
        return f"{asks} ({self.by})"


def read_field(obj: Any, path: str) -> Any:
    """The value at a dotted path (`spec.target.name`), or None."""
    value = obj
    for part in path.split("."):
        if not isinstance(value, dict):
            return None
        value = value.get(part)
    return value


def _condition(raw: Mapping[str, Any]) -> Condition:
    return Condition(
        field=raw.get("field", ""),
        annotations=tuple(raw.get("annotations", ())),
        present=raw.get("present"),
        in_=tuple(raw["in"]) if "in" in raw else None,
        not_in=tuple(raw.get("notIn", ())),
        default=raw.get("default"),
    )


def _kind(raw: Mapping[str, Any]) -> TargetKind:
    return TargetKind(raw.get("group", ""), raw["kind"])


def producers_of(document: Mapping[str, Any]) -> list[Producer]:
    """The producers a profile file describes (`producers`), validated by the profile schema."""
    out: list[Producer] = []
    for raw in document.get("producers", ()):
        refs = raw.get("refs")
        namespaces = raw.get("namespaces", SOURCE_NAMESPACE)
        selector = None
        selectors: tuple[str, ...] = ()
        names = None
        if isinstance(namespaces, dict):
            selector = namespaces.get("selector")
            selectors = tuple(namespaces.get("selectors", ()))
            names = namespaces.get("names")
            namespaces = EVERY_NAMESPACE
        out.append(
            Producer(
                by=raw["by"],
                makes=_kind(raw["makes"]),
                source=_kind(raw["from"]) if "from" in raw else None,
                name_fields=tuple(raw.get("name", ())),
                fixed_name=raw.get("fixedName"),
                any_name=bool(raw.get("anyName", False)),
                refs=RefSpec(
                    refs["items"],
                    refs["refs"],
                    tuple(_condition(c) for c in refs.get("where", ())),
                    bool(refs.get("sameNamespace", False)),
                )
                if refs
                else None,
                when=tuple(_condition(c) for c in raw.get("when", ())),
                namespaces=namespaces,
                namespace_selector=selector,
                namespace_selectors=selectors,
                namespace_names=names,
                docs=raw.get("docs", ""),
                project=str(document.get("project", "")),
            )
        )
    return out


def all_producers(documents: Iterable[Mapping[str, Any]]) -> tuple[Producer, ...]:
    return tuple(p for document in documents for p in producers_of(document))


@functools.cache
def builtin_producers() -> tuple[Producer, ...]:
    """The objects cluster components make from others, as the shipped profile files say."""
    return all_producers(document for _, document in builtin_documents())


def load_profile_document(path: Path, *, origin: str) -> tuple[list[PolicyProfile], list[Producer]]:
    """A user's profile file (`--profile`, `profile:`): its policy profiles and its producers."""
    return _document(read_user_profile(path), path, str(path), origin)


def load_profile_document_bytes(data: bytes, name: str, path: str, *, origin: str) -> tuple[list[PolicyProfile], list[Producer]]:
    """A user's profile file `path` given as bytes, named `name` in messages (`REF:PATH` when
    read from a git ref: policylint.input.gitref)."""
    return _document(parse_user_profile(data, name), Path(path), name, origin)


def _document(raw: Any, path: Path, name: str, origin: str) -> tuple[list[PolicyProfile], list[Producer]]:
    validate_profile_document(raw, shown(name))
    return profiles_of(raw, path, origin, validate=False), producers_of(raw)
