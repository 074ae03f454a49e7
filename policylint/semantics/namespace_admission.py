"""Whether a listener (`allowedRoutes.namespaces`) or a Gateway (`allowedListeners.namespaces`)
admits what comes from a namespace: a three-valued verdict.

`from: Selector` is decided by the labels of the Namespace object. When that Namespace is not in
the input its labels are unknown (only the name label the API server sets is known), so the
verdict is neither admitted nor refused but *unknown*, with the reason kept
(`UnknownNamespace`): the attachment built on it is `NamespaceLabelsUnknown`, and no finding
rests on it either way — no "not attached" error, and no conflict, effective policy or grant
that needs the route or ListenerSet attached (docs/semantics.md#namespaces-not-in-the-input).
"""

from __future__ import annotations

import enum
from typing import TYPE_CHECKING

from policylint.input.positions import join
from policylint.k8s.names import ns_name
from policylint.values import frozen
from policylint.vocabulary import NamespaceMatch

if TYPE_CHECKING:
    from policylint.k8s.objects import K8sObject
    from policylint.k8s.selectors import LabelSelector
    from policylint.semantics.resolution import Resolution


class Verdict(enum.Enum):
    ADMITTED = "Admitted"
    REFUSED = "Refused"
    UNKNOWN = "Unknown"


@frozen
class UnknownNamespace:
    """Why a namespace selector could not be decided: `owner`'s selector at `path` meets
    Namespace `namespace`, which is not in the input."""

    owner: K8sObject  # the Gateway or ListenerSet whose selector it is
    path: str  # the `namespaces` field holding `from: Selector`
    namespace: str
    selector: LabelSelector
    subject: str  # what comes from the namespace: "routes" or "ListenerSets"
    listener: str | None = None  # the listener's name, for routes

    def message(self) -> str:
        return (
            f"namespace {self.namespace} is not in the input, so whether it matches {self.selector}"
            " cannot be decided (its labels are unknown)"
        )


def listener_namespaces_path(listener_path: str) -> str:
    return join(join(listener_path, "allowedRoutes"), "namespaces")


ALLOWED_LISTENERS_PATH = "spec.allowedListeners.namespaces"


def selector_verdict(
    resolution: Resolution,
    owner: K8sObject,
    path: str,
    selector: LabelSelector,
    namespace: str,
    subject: str,
    listener: str | None = None,
) -> tuple[Verdict, UnknownNamespace | None]:
    """The verdict of `selector` on `namespace`, with the reason when it is unknown."""
    match = resolution.namespace_selected(selector, namespace)
    if match is NamespaceMatch.MATCHES:
        return Verdict.ADMITTED, None
    if match is NamespaceMatch.NO_MATCH:
        return Verdict.REFUSED, None
    return Verdict.UNKNOWN, UnknownNamespace(owner, path, namespace, selector, subject, listener)


def where(obj: K8sObject) -> str:
    return ns_name(obj.namespace, obj.name)
