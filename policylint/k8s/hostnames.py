"""Listener ↔ route hostname intersection (docs/semantics.md#hostname-intersection).

`*.example.com` matches names with one or more extra labels (`a.example.com`,
`a.b.example.com`) but not `example.com` itself. A route attaches to a
listener only if at least one of its hostnames intersects the listener's.
"""

from __future__ import annotations

from collections.abc import Sequence


def _wildcard_matches(pattern: str, name: str) -> bool:
    """`*.example.com` against a name (exact or itself a wildcard with a longer suffix)."""
    suffix = pattern[1:]  # `.example.com`
    if name.startswith("*"):
        name = name[1:]
        return name.endswith(suffix) and len(name) > len(suffix)
    return name.endswith(suffix) and len(name) > len(suffix)


def intersect(listener: str | None, route: str) -> str | None:
    """The effective hostname of route hostname `route` on a listener with `listener`, or None."""
    if not listener:
        return route
    if route == listener:
        return route
    if listener.startswith("*") and not route.startswith("*"):
        return route if _wildcard_matches(listener, route) else None
    if route.startswith("*") and not listener.startswith("*"):
        return listener if _wildcard_matches(route, listener) else None
    if route.startswith("*") and listener.startswith("*"):
        # Both wildcards: the more specific one, if one contains the other.
        if _wildcard_matches(listener, route):
            return route
        if _wildcard_matches(route, listener):
            return listener
    return None


def effective_hostnames(listener: str | None, route: Sequence[str]) -> list[str] | None:
    """Hostnames a route serves on a listener: `[]` means "everything", None means no intersection."""
    if not route:
        return [listener] if listener else []
    out = [h for h in (intersect(listener, r) for r in route) if h is not None]
    return out or None
