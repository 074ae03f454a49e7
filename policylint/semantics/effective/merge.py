"""Merge strategies over specs that remember where each value came from.

GEP-713 "Merge strategies": a strategy is a function of two specs, the
*established* one (E, attached higher, or older at the same level) and the
*challenger* (C). Atomic Defaults returns C, Atomic Overrides returns E, Patch
Defaults applies C over E and Patch Overrides applies E over C as an RFC 7386
JSON merge patch (maps merge, lists and scalars replace, `null` deletes).
Custom strategies come from profiles: a rule-keyed merge (Kuadrant's `merge`,
where each named rule is an atomic unit, policy-machinery's "merge" strategy).

Values are kept as a tagged tree: every leaf (and map) carries the policy
facet that supplied it, which is what `explain` prints as provenance.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any


class Tagged:
    """A value with its source. Maps keep tagged children; lists and scalars are leaves (RFC 7386).
    A list merged item by item (Envoy Gateway's StrategicMerge) has every contributor in
    `co_sources` besides the one in `source`."""

    __slots__ = ("children", "co_sources", "source", "value")

    def __init__(
        self, value: Any, source: Any, children: dict[str, Tagged] | None = None, co_sources: tuple[Any, ...] = ()
    ) -> None:
        self.value = value
        self.source = source
        self.children = children
        self.co_sources = co_sources

    @property
    def is_map(self) -> bool:
        return self.children is not None


def tag(value: Any, source: Any) -> Tagged:
    if isinstance(value, dict):
        return Tagged(None, source, {str(k): tag(v, source) for k, v in value.items()})
    return Tagged(value, source)


def untag(node: Tagged | None) -> Any:
    if node is None:
        return None
    if node.children is not None:
        return {k: untag(v) for k, v in node.children.items()}
    return node.value


def merge_patch(
    target: Tagged | None,
    patch: Tagged,
    lists: Mapping[tuple[str, ...], str | None] | None = None,
    path: tuple[str, ...] = (),
) -> Tagged:
    """RFC 7386 MergePatch(target, patch): the patch wins per scalar; `null` removes a key.
    `lists` (a merge onto a parent policy's spec, Envoy Gateway's `mergeType`): the lists that
    merge item by item instead (a Kubernetes strategic merge patch, as `StrategicMerge` applies
    it), by item key or appended (None); a value both set is kept with both as its sources."""
    if patch.children is None:
        if lists is not None and target is not None and target.children is None and target.value == patch.value:
            # A merge onto the parent's spec (`lists` given) that sets what the parent set: both
            # are in force, neither replaced the other.
            return Tagged(target.value, target.source, None, (*target.co_sources, patch.source, *patch.co_sources))
        if lists and path in lists and target is not None and target.children is None:
            if isinstance(target.value, list) and isinstance(patch.value, list) and target.value:
                merged = _merge_list(target.value, patch.value, lists[path])
                return Tagged(merged, patch.source, None, (target.source, *target.co_sources, *patch.co_sources))
        return patch
    base = dict(target.children) if target is not None and target.children is not None else {}
    for key, value in patch.children.items():
        if value.children is None and value.value is None:
            base.pop(key, None)
        else:
            base[key] = merge_patch(base.get(key), value, lists, (*path, key))
    source = target.source if target is not None and target.children is not None else patch.source
    return Tagged(None, source, base)


def _merge_list(original: list[Any], patch: list[Any], key: str | None) -> list[Any]:
    """A strategic merge of two lists: appended, or items with the same `key` value merged (the
    patch's fields over the original's), new ones appended, in order."""
    if key is None:
        return [*original, *patch]
    out = list(original)
    for item in patch:
        match = (
            next((i for i, o in enumerate(out) if isinstance(o, dict) and o.get(key) == item.get(key)), None)
            if isinstance(item, dict) and key in item
            else None
        )
        if match is None:
            out.append(item)
        else:
            out[match] = _merge_maps(out[match], item)
    return out


def _merge_maps(original: dict[str, Any], patch: dict[str, Any]) -> dict[str, Any]:
    out = dict(original)
    for k, v in patch.items():
        out[k] = _merge_maps(out[k], v) if isinstance(v, dict) and isinstance(out.get(k), dict) else v
    return out


def unit_paths(node: Tagged, containers: Sequence[tuple[str, ...]]) -> Iterator[tuple[tuple[str, ...], Tagged]]:
    """The atomic units of a rule-keyed spec: each entry of a container map, and every other top-level field."""
    if node.children is None:
        return
    covered = {c[0] for c in containers}
    for key, child in node.children.items():
        if key not in covered:
            yield (key,), child
    for container in containers:
        cur: Tagged | None = node
        for part in container:
            cur = cur.children.get(part) if cur is not None and cur.children is not None else None
        if cur is None:
            continue
        if cur.children is None:
            yield container, cur
            continue
        for key, child in cur.children.items():
            yield (*container, key), child


def default_containers(*specs: Tagged | None) -> list[tuple[str, ...]]:
    """Without a profile list, every top-level map of the specs holds named rules (`limits`, `rules`)."""
    out: dict[tuple[str, ...], None] = {}
    for spec in specs:
        if spec is not None and spec.children is not None:
            for key, child in spec.children.items():
                if child.children is not None:
                    out[(key,)] = None
    return list(out)


def merge_rules(loser: Tagged | None, winner: Tagged, containers: Sequence[tuple[str, ...]] | None = None) -> Tagged:
    """Rule-keyed merge: the winner's units replace the loser's units with the same key; the loser's
    other units stay (policy-machinery "merge" strategy; acceptance scenario S05,
    docs/semantics.md#acceptance-scenarios)."""
    if containers is None:
        containers = default_containers(loser, winner)
    result = Tagged(None, winner.source, {})
    for source_tree in (loser, winner):
        if source_tree is None:
            continue
        for path, unit in unit_paths(source_tree, containers):
            set_path(result, path, unit)
    # A container set to an empty map has no units, but it is a value someone set (as in
    # `leaves`): keep it, or merging a spec with itself would drop it.
    for container in containers:
        if _lookup(result, container) is None:
            empty = next(
                (n for n in (_lookup(winner, container), _lookup(loser, container)) if n is not None and n.children == {}), None
            )
            if empty is not None:
                set_path(result, container, Tagged(None, empty.source, {}))
    return result


def _lookup(root: Tagged | None, path: Sequence[str]) -> Tagged | None:
    cur = root
    for part in path:
        cur = cur.children.get(part) if cur is not None and cur.children is not None else None
    return cur


def set_path(root: Tagged, path: tuple[str, ...], value: Tagged) -> None:
    """Put `value` at `path` under the map `root`, creating the maps on the way."""
    cur = root
    for part in path[:-1]:
        assert cur.children is not None
        nxt = cur.children.get(part)
        if nxt is None or nxt.children is None:
            nxt = Tagged(None, value.source, {})
            cur.children[part] = nxt
        cur = nxt
    assert cur.children is not None
    cur.children[path[-1]] = value


def leaves(node: Tagged | None, prefix: tuple[str, ...] = ()) -> list[tuple[tuple[str, ...], Tagged]]:
    """Every leaf with its key path, depth first in key order; an empty map is a leaf too (it is a
    value someone set). A list, appended to by one recursion: every fold reads its spec's leaves,
    and nested generators passed each leaf up through every level above it."""
    found: list[tuple[tuple[str, ...], Tagged]] = []
    if node is not None:
        _leaves(node, prefix, found)
    return found


def _leaves(node: Tagged, prefix: tuple[str, ...], found: list[tuple[tuple[str, ...], Tagged]]) -> None:
    children = node.children
    if not children:  # a scalar, a list or an empty map
        found.append((prefix, node))
        return
    for key, child in children.items():
        if child.children:
            _leaves(child, (*prefix, key), found)
        else:
            found.append(((*prefix, key), child))


def format_key(path: tuple[str, ...]) -> str:
    return ".".join(path) if path else "(whole spec)"
