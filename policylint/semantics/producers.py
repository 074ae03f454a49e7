"""Which objects the input makes in the cluster through its producers (profile `producers`).

A reference to a Secret, a ConfigMap or a policy target that is not in the input may name an
object a cluster component makes from one that is: the Secret of a cert-manager Certificate, the
HTTPRoute of an Envoy AI Gateway AIGatewayRoute (docs/semantics.md#objects-made-in-the-cluster).
Each made kind is worked out once, on its first lookup, from the objects of its producers'
source kinds only.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from policylint.k8s.index import ProjectIndex
from policylint.k8s.objects import K8sObject
from policylint.k8s.selectors import LabelSelector, SelectorError, parse_selector
from policylint.profiles.producers import EVERY_NAMESPACE, Producer, read_field
from policylint.profiles.registry import TargetKind
from policylint.values import frozen


@frozen
class Made:
    """An object a producer makes: who (`producer`), from which object of the input (`source`,
    None for one the cluster makes with no object asking)."""

    producer: Producer
    source: K8sObject | None

    def describe(self) -> str:
        if self.source is None:
            return f"made in every namespace by {self.producer.by}"
        return f"made by {self.producer.by} from {self.source.key}"


@frozen
class _Everywhere:
    """A name made in every namespace, or in those a selector matches (`selector` None: all)."""

    made: Made
    selector: LabelSelector | None


class _Table:
    def __init__(self) -> None:
        self.exact: dict[tuple[str, str], Made] = {}  # (namespace, name)
        self.everywhere: dict[str, list[_Everywhere]] = {}  # name
        self.namespaces: set[str] = set()  # namespaces where an object of the input makes one


class Producers:
    """Lookups of made objects over one input."""

    def __init__(self, index: ProjectIndex, producers: Sequence[Producer]) -> None:
        self.index = index
        self.producers = producers
        self._tables: dict[TargetKind, _Table] = {}

    def considered(self, group: str, kind: str) -> list[Producer]:
        """The producers that make objects of this kind, in the order the profiles list them."""
        wanted = TargetKind(group, kind)
        return [p for p in self.producers if p.makes == wanted]

    def unprovable(self, group: str, kind: str) -> list[Producer]:
        """The producers that make objects of this kind under names the input cannot show
        (profile `anyName`: a multicluster controller's ServiceImports): a missing one may exist."""
        return [p for p in self.considered(group, kind) if p.source is None and p.any_name]

    def made(self, group: str, kind: str, namespace: str | None, name: str) -> Made | None:
        """What makes this object in the cluster, or None."""
        table = self._table(TargetKind(group, kind))
        found = table.exact.get((namespace or "", name))
        if found is not None:
            return found
        for entry in table.everywhere.get(name, ()):
            if entry.selector is None or self._namespace_matches(namespace or "", entry.selector):
                return entry.made
        return None

    def makes_in(self, group: str, kind: str, namespace: str) -> bool:
        """Whether an object of the input makes objects of this kind in this namespace: evidence,
        like an object of the kind there, that the repository manages that kind there."""
        return namespace in self._table(TargetKind(group, kind)).namespaces

    def _namespace_matches(self, namespace: str, selector: LabelSelector) -> bool:
        obj = self.index.lookup("", "Namespace", None, namespace)
        if obj is None:
            # Its labels are unknown: the namespace may match, unless the input is the cluster.
            return not self.index.options.complete
        return selector.matches(obj.labels)

    def _table(self, kind: TargetKind) -> _Table:
        table = self._tables.get(kind)
        if table is not None:
            return table
        table = self._tables[kind] = _Table()
        for producer in self.considered(kind.group, kind.kind):
            if producer.source is None:
                if producer.fixed_name:
                    table.everywhere.setdefault(producer.fixed_name, []).append(_Everywhere(Made(producer, None), None))
                continue
            source_objects = sorted(
                self.index.of_kind(producer.source.group, producer.source.kind), key=lambda o: (o.namespace or "", o.name)
            )
            for obj in source_objects:
                if all(c.holds(obj.data) for c in producer.when):
                    _add(table, producer, obj)
        return table


def _add(table: _Table, producer: Producer, obj: K8sObject) -> None:
    made = Made(producer, obj)
    namespace = obj.namespace or ""
    if producer.namespace_selectors:
        _add_selected(table, producer, obj, made)
        return
    if producer.namespaces == EVERY_NAMESPACE:
        selector: LabelSelector | None = None
        if producer.namespace_selector is not None:
            raw = read_field(obj.data, producer.namespace_selector)
            try:
                selector = parse_selector(raw) if raw else None
            except SelectorError:
                return  # the API server refuses the source: it makes nothing
        for name in _names(producer, obj):
            table.everywhere.setdefault(name, []).append(_Everywhere(made, selector))
        return
    names = _refs(producer, obj) if producer.refs is not None else [(namespace, n) for n in _names(producer, obj)]
    for where, name in names:
        table.exact.setdefault((where, name), made)
        table.namespaces.add(where)


def _add_selected(table: _Table, producer: Producer, obj: K8sObject, made: Made) -> None:
    """A source that makes its object in the namespaces any of several label selectors matches,
    and in those a list names (ClusterExternalSecret): none set, no namespace."""
    from policylint.semantics.topology import expand_pattern

    selectors: list[LabelSelector] = []
    for path in producer.namespace_selectors:
        for _, raw in expand_pattern(obj.data, path):
            if not isinstance(raw, dict):
                continue  # absent (null): selects nothing
            try:
                selectors.append(parse_selector(raw))
            except SelectorError:
                return  # the API server refuses the source: it makes nothing
    listed = read_field(obj.data, producer.namespace_names) if producer.namespace_names else None
    named = [n for n in listed if isinstance(n, str) and n] if isinstance(listed, list) else []
    for name in _names(producer, obj):
        for selector in selectors:
            table.everywhere.setdefault(name, []).append(_Everywhere(made, selector))
        for namespace in named:
            # A name is decided without the Namespace: the API server labels every Namespace with
            # its name (kubernetes.io/metadata.name), which is what the controller selects by.
            table.exact.setdefault((namespace, name), made)
            table.namespaces.add(namespace)


def _names(producer: Producer, obj: K8sObject) -> list[str]:
    if producer.fixed_name is not None:
        return [producer.fixed_name]
    for field in producer.name_fields:
        value = read_field(obj.data, field)
        if isinstance(value, str) and value:
            return [value]
    return [] if producer.name_fields else [obj.name]


def _refs(producer: Producer, obj: K8sObject) -> list[tuple[str, str]]:
    """The (namespace, name) of each object the source names in the references the producer reads."""
    from policylint.semantics.topology import expand_pattern

    spec = producer.refs
    assert spec is not None
    namespace = obj.namespace or ""
    out: list[tuple[str, str]] = []
    for _, item in expand_pattern(obj.data, spec.items):
        if not isinstance(item, dict) or not all(c.holds(item) for c in spec.where):
            continue
        for _, ref in expand_pattern(item, spec.refs):
            target = _ref_target(ref, producer.makes, namespace, same_namespace=spec.same_namespace)
            if target is not None:
                out.append(target)
    return out


def _ref_target(ref: Any, makes: TargetKind, namespace: str, *, same_namespace: bool) -> tuple[str, str] | None:
    if not isinstance(ref, Mapping):
        return None
    name, group, kind, where = ref.get("name"), ref.get("group"), ref.get("kind"), ref.get("namespace")
    if not isinstance(name, str) or not name:
        return None
    # An absent group or kind is the field's default, the kind made (a listener certificateRef
    # defaults to the core Secret); cert-manager also takes the group spelt "core".
    if group not in (None, "", makes.group) and not (makes.group == "" and group == "core"):
        return None
    if kind not in (None, "", makes.kind):
        return None
    if where not in (None, "") and where != namespace:
        if same_namespace:
            return None
        return (str(where), name)
    return (namespace, name)
