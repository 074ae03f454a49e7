"""Kinds other than policies whose references a controller follows (profile files' `holders`):
Envoy Gateway's HTTPRouteFilter names the ConfigMap of a direct response's body and the Secret of
an injected credential, its EnvoyProxy the backends its telemetry is sent to
(docs/semantics.md#envoy-gateway).

A holder's references are declared as a policy's are (`objectRefs`, `backendRefs`): the topology
resolves them the same way (existence where the input manages the kind, ReferenceGrants across
namespaces, the entry the controller reads), and PL411, PL417 and PL402 report them. What differs
is what a broken reference does, which is not a policy refused: `effect` says it in words.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any

from policylint.profiles.registry import ObjectRefSpec, builtin_documents, object_ref_spec
from policylint.values import frozen


@frozen
class Holder:
    """A kind whose objects hold references its controller follows."""

    group: str
    kind: str
    object_refs: tuple[ObjectRefSpec, ...]
    backend_refs: tuple[str, ...]  # paths of backend references, `[*]` for every list item
    effect: str  # what the controller does when one of them is invalid, in words
    docs: str
    # A backend reference into another namespace needs a ReferenceGrant (Envoy Gateway's
    # EnvoyProxy telemetry backends do not: processBackendRefsForTelemetry checks none).
    backend_grants: bool = True


def holder_of(raw: Mapping[str, Any]) -> Holder:
    return Holder(
        raw["group"],
        raw["kind"],
        tuple(object_ref_spec(entry) for entry in raw.get("objectRefs", ())),
        tuple(raw.get("backendRefs", ())),
        raw["effect"],
        raw["docs"],
        raw.get("backendGrants", True),
    )


@functools.cache
def builtin_holders() -> tuple[Holder, ...]:
    """The holders the shipped profile files describe (`holders`)."""
    return tuple(holder_of(raw) for _, document in builtin_documents() for raw in document.get("holders", ()))
