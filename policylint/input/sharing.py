"""Identical maps and lists of the documents as one object each for the run.

Manifests repeat whole subtrees: a Service's `ports`, a route's `parentRefs` and
`backendRefs`, a Gateway's `allowedRoutes`, the same labels on every object of a tenant.
On the shared corpus at 100,000 objects, seven maps and lists in ten have the content of one
read before, and the documents as Python data were the largest holder of the run's memory
(docs/performance.md, "Memory at 100,000 objects on the shared corpus"). The loader, the
parse cache's decoder and the results of `--jobs` workers hand every map and list they finish
to `shared_map` / `shared_list`, which return the first one of the same content; the copy is
dropped at once.

This is safe because nothing reads the documents to change them (a YAML alias already makes
one object appear at two places) and because what is keyed by a document node's identity
(the admission verdicts' fingerprints, CEL's conversions and shapes) depends on its content
alone: a shared node only answers those tables once for all its places.

The keys live in the loader's table (`Shared`, with the interned strings), which is dropped
when loading ends: bottom up, a container's key names its children by identity, and the table
keeps those children alive (each is held by its canonical parent) for as long as it can be
asked. A scalar is keyed with its type: `1`, `1.0` and `true` are different values, as are
`0.0` and `-0.0` (by their hex form), so no document changes by being shared.
"""

from __future__ import annotations

from typing import Any

from policylint.input.document import Shared


def _scalar(value: Any) -> Any:
    cls = value.__class__
    if cls is float:
        return (float, value.hex())
    return (cls, value)


def shared_map(table: Shared, out: dict[str, Any]) -> dict[str, Any]:
    """The map of `out`'s content first given to `table`: `out` itself if it is the first.
    Its values must be shared already (this walks one level)."""
    key: list[Any] = ["{"]
    append = key.append
    for k, v in out.items():
        append(k)
        cls = v.__class__
        # A child map or list is already the one of its content: its identity names it.
        append(v if cls is str else id(v) if cls is dict or cls is list else _scalar(v))
    packed = tuple(key)
    got = table.get(packed)
    if got is None:
        table[packed] = out
        return out
    return got  # type: ignore[no-any-return]


def shared_list(table: Shared, out: list[Any]) -> list[Any]:
    """As `shared_map`, for a list whose items are shared already."""
    key: list[Any] = ["["]
    append = key.append
    for v in out:
        cls = v.__class__
        append(v if cls is str else id(v) if cls is dict or cls is list else _scalar(v))
    packed = tuple(key)
    got = table.get(packed)
    if got is None:
        table[packed] = out
        return out
    return got  # type: ignore[no-any-return]


def shared_tree(table: Shared, value: Any) -> Any:
    """`value` with every map and list in it shared, bottom up: for data that arrives whole
    (the marshalled results of `--jobs` workers, lists the JSON decoder built)."""
    cls = value.__class__
    if cls is dict:
        for k, v in value.items():
            if v.__class__ is dict or v.__class__ is list:
                value[k] = shared_tree(table, v)  # a fresh copy this process alone holds yet
        return shared_map(table, value)
    if cls is list:
        for i, v in enumerate(value):
            if v.__class__ is dict or v.__class__ is list:
                value[i] = shared_tree(table, v)
        return shared_list(table, value)
    return value


def shared_decoded_list(table: Shared, value: list[Any]) -> list[Any]:
    """As `shared_tree`, for a list the JSON decoder built: its maps went through the decoder's
    hook (`policylint.input.cache.sharing_decoder`) and are shared already, its lists not."""
    for i, v in enumerate(value):
        if v.__class__ is list:
            value[i] = shared_decoded_list(table, v)
    return shared_list(table, value)
