"""A list's checks the API server makes of its items as a whole: a `set` list's values and a
`map` list's keys each held once (`x-kubernetes-list-type`). Shared by the schema walk
(policylint.k8s.schemawalk) and the checks generated from the bundled schemas
(policylint.k8s.schemachecks), which both report a repeat the same way."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

# A violation as the walk reports it: the value's path, the message, the API server's error type.
_Violation = tuple[tuple[str | int, ...], str, str]

LIST_TYPE = "x-kubernetes-list-type"
DUPLICATE = "FieldValueDuplicate"  # the API server's field error type for a duplicate list item


def duplicates(
    out: list[_Violation], path: tuple[str | int, ...], value: list[Any], node: Mapping[str, Any], items: Mapping[str, Any]
) -> None:
    """Items a `set` list holds twice, or a `map` list holds under the same keys (the API server's
    "Duplicate value"; Kubernetes' "Merge strategy" of structural schemas), each value or key
    once, at its first repeat (a list of thousands of one value is one mistake). The keys of a map
    list read an item's value or, where it has none, the key's default, as the API server
    defaults an item before it validates."""
    list_type = node.get(LIST_TYPE)
    if list_type == "set":
        keys: list[str] = []
        noun = "the list is a set (x-kubernetes-list-type: set), so each value may appear once"
    elif list_type == "map":
        keys = [k for k in node.get("x-kubernetes-list-map-keys") or () if isinstance(k, str)]
        if not keys:
            return
        noun = (
            f"the list is a map keyed by {', '.join(keys)} (x-kubernetes-list-type: map), so each"
            f" {'key' if len(keys) == 1 else 'combination of keys'} may appear once"
        )
    else:
        return
    properties = items.get("properties") or {}
    first: dict[Any, int] = {}
    said: set[Any] = set()
    for i, item in enumerate(value):
        if list_type == "set":
            if item is None:
                continue
            key: Any = _identity(item)
        else:
            if type(item) is not dict:
                continue  # the wrong type: a type violation already
            key = tuple(_identity(item.get(k, (properties.get(k) or {}).get("default"))) for k in keys)
        j = first.setdefault(key, i)
        if j != i and key not in said:
            said.add(key)
            out.append(((*path, i), f"duplicates item [{j}]: {noun}", DUPLICATE))


def _identity(value: Any) -> Any:
    """A hashable value equal for two YAML values exactly when they are equal as JSON values of
    the same types (`1` is not `"1"`, nor `true`)."""
    if type(value) in (str, int, float, bool) or value is None:
        return (type(value), value)
    try:
        return (type(value), json.dumps(value, sort_keys=True, default=str))
    except (RecursionError, ValueError):
        return object()  # too deep to compare (the loader's bounds refuse most such input): unequal
