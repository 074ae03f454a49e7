"""Objects a policy chooses by label selector rather than by name (profile `selections`):
Kuadrant's API key authentication reads every Secret its `selector` matches
(docs/semantics.md#kuadrant).

Where the chosen objects must be is part of the data: in any namespace when the policy's
`allNamespaces` field is true, else in the namespace of the object that runs the controller (the
`Kuadrant` custom resource, whose namespace Authorino watches).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from policylint.values import frozen


@frozen
class SelectionSpec:
    """Where a policy kind's spec chooses objects by labels, and how (`selections`)."""

    paths: tuple[str, ...]  # path patterns of the maps holding the selector (`*`: every map value)
    group: str  # what the selector chooses: group and kind
    kind: str
    selector: str  # the field of that map holding the LabelSelector
    all_namespaces: str  # the boolean field that widens the choice to every namespace
    home_group: str  # the kind whose objects' namespace the choice is made in otherwise
    home_kind: str
    effect: str  # what the controller does when nothing is chosen, in words


def selection_spec(raw: Mapping[str, Any]) -> SelectionSpec:
    return SelectionSpec(
        tuple(raw["paths"]),
        raw["kind"]["group"],
        raw["kind"]["kind"],
        raw["selector"],
        raw["allNamespaces"],
        raw["home"]["group"],
        raw["home"]["kind"],
        raw["effect"],
    )
