"""The Gateway API vocabulary policylint decides in: every verdict a stage hands to the next.

Each term is an enum whose value is the word Gateway API, GEP-713 or policylint's own docs use
(docs/semantics.md#status-vocabulary), so that rules, `explain` and the reports compare and print
the decision the stage made instead of re-deriving it. Members are compared as members and
rendered explicitly, by `label`, at the output boundary (reporters, `explain`, the graph, the
JSON report), which prints the same word the JSON report has always carried.
"""

from __future__ import annotations

import enum


class Term(enum.Enum):
    """A word of the vocabulary, rendered only where output is made, by `label` (the word itself).

    A term is not a string: comparing one with a string literal is a type error mypy reports
    (strict equality) instead of a comparison that silently never holds once a word changes, and
    turning one into text (`str()`, an f-string, `format`) raises, so that no output prints
    `Role.NONE` where the word was meant. `repr()` keeps Enum's `<Role.NONE: 'none'>`, for
    debugging."""

    _value_: str

    @property
    def label(self) -> str:
        """The word, as the reports, `explain`, the graph and the JSON report print it."""
        return self._value_

    def __str__(self) -> str:
        raise TypeError(f"{self!r} is rendered with .label, not str()")

    def __format__(self, spec: str) -> str:
        raise TypeError(f"{self!r} is rendered with .label, not formatted")


# -- reference resolution (policylint.semantics.resolution) -----------------------------------


class Accepted(Term):
    """A target reference's status, in the condition vocabulary of GEP-713: `Accepted` or the
    reason of `Accepted=False`."""

    ACCEPTED = "Accepted"
    INVALID = "Invalid"  # the API server or the controller rejects the reference itself
    TARGET_NOT_FOUND = "TargetNotFound"
    # Every context through the target is a conflict the policy loses (decided by the effective-
    # policy simulation, not by resolution: docs/effective-policy.md#status).
    CONFLICTED = "Conflicted"


class Resolved(Term):
    """Which resolution step decided, in the order the steps run (docs/semantics.md#target-references)."""

    INVALID_REF = "InvalidRef"  # schema: required field, pattern, length, type
    KIND_NOT_ALLOWED = "KindNotAllowed"  # not among the profile's target kinds
    NAMESPACE_REQUIRED = "NamespaceRequired"  # a cluster-scoped policy names no namespace
    REF_NOT_PERMITTED = "RefNotPermitted"  # cross-namespace, no ReferenceGrant
    EXTERNAL = "External"  # not in the input, declared with --external
    # A Namespace not in the input that exists anyway: the policy's own, or one every cluster has.
    IMPLIED = "Implied"
    VIRTUAL_KIND = "VirtualKind"  # GEP-713 "Targeting virtual types"
    OBJECT_NOT_FOUND = "ObjectNotFound"
    RESOLVED = "Resolved"
    SECTION_NOT_SUPPORTED = "SectionNotSupported"  # the kind has no named sections
    SECTION_UNCHECKED = "SectionUnchecked"  # the kind's sections are unknown (CRD-only kind)
    SECTION_MALFORMED = "SectionMalformed"  # the target's sections have a malformed field (PL010)
    SYNTHETIC_RULE_NAME = "SyntheticRuleName"  # `rule-<n>` naming an unnamed rule
    SECTION_NOT_FOUND = "SectionNotFound"
    SELECTOR_MATCH = "SelectorMatch"  # selected by a label selector, not named
    # Found, but of a kind that takes the policy only through a component the target is not bound
    # to (Istio: a Service no waypoint serves; its status says AncestorNotBound).
    NOT_BOUND = "NotBound"
    # Names no object, as its kind's reference schema allows (GKE: a `selector` of Pods instead of
    # a name): not resolved, not an error.
    UNNAMED = "Unnamed"


class NamespaceMatch(Term):
    """Whether a Namespace's labels match a label selector (`namespaces.from: Selector`):
    `Unknown` when the Namespace is not in the input, so that only its name label is known
    (docs/semantics.md#namespaces-not-in-the-input)."""

    MATCHES = "Matches"
    NO_MATCH = "NoMatch"
    UNKNOWN = "Unknown"


# -- topology (policylint.semantics.topology) --------------------------------------------------


class Attachment(Term):
    """A route parentRef's outcome: the route status reasons of the Gateway API where one exists
    (docs/semantics.md#listener-admission), and policylint's own otherwise."""

    ACCEPTED = "Accepted"
    EXTERNAL = "External"  # the parent is declared external: assumed to admit the route
    PARENT_NOT_FOUND = "ParentNotFound"
    NO_MATCHING_PARENT = "NoMatchingParent"
    NOT_ALLOWED_BY_LISTENERS = "NotAllowedByListeners"
    NO_MATCHING_LISTENER_HOSTNAME = "NoMatchingListenerHostname"
    LISTENER_SET_NOT_ATTACHED = "ListenerSetNotAttached"
    MESH = "Mesh"  # a Service parent (GAMMA): no listeners involved
    UNKNOWN_PARENT_KIND = "UnknownParentKind"  # an implementation-specific parent kind: not modelled
    INVALID_REF = "InvalidRef"
    NOT_ALLOWED = "NotAllowed"  # a ListenerSet its Gateway's allowedListeners does not admit
    # Depends on a field of the wrong type (PL010): the API server rejects the object, so the
    # outcome is unknown; assumed fine (attached, resolved) so that no other rule repeats the cause.
    MALFORMED = "Malformed"
    # Admitted or not by a `namespaces.from: Selector` over a Namespace that is not in the input
    # (its labels unknown): neither attached nor refused, so no finding rests on either
    # (policylint.semantics.namespace_admission).
    NAMESPACE_LABELS_UNKNOWN = "NamespaceLabelsUnknown"


class Admission(Term):
    """Which listener admission check rejected a route (docs/semantics.md#listener-admission, step 3)."""

    KIND_NOT_LISTED = "KindNotListed"  # allowedRoutes.kinds does not list the route's kind
    KIND_NOT_CARRIED = "KindNotCarried"  # listed, but the listener's protocol cannot carry it (InvalidRouteKinds)
    PROTOCOL_KIND = "ProtocolKind"  # no allowedRoutes.kinds, and the protocol's defaults exclude the kind
    NAMESPACE = "Namespace"  # allowedRoutes.namespaces (Same, Selector) excludes the route's namespace
    NAMESPACE_SELECTOR_INVALID = "NamespaceSelectorInvalid"  # from: Selector without a valid selector
    NAMESPACE_FROM_UNKNOWN = "NamespaceFromUnknown"  # from: a value the API does not define
    HOSTNAME = "Hostname"  # no intersection of listener and route hostnames

    @property
    def about_kind(self) -> bool:
        return self in (Admission.KIND_NOT_LISTED, Admission.KIND_NOT_CARRIED, Admission.PROTOCOL_KIND)


class Traffic(Term):
    """Whether traffic can reach an object at all, and if not, the cause."""

    CARRIES = "Carries"
    NO_PARENT_REFS = "NoParentRefs"  # a route with no parentRefs
    NOT_ATTACHED = "NotAttached"  # a route no listener admits
    LISTENER_SET_NOT_ATTACHED = "ListenerSetNotAttached"
    NO_GATEWAY_CLASS = "NoGatewayClass"  # a Gateway whose GatewayClass is not in the input (PL405's cause)
    LISTENER_CONFLICTED = "ListenerConflicted"  # a listener not distinct from another (PL416's cause)
    UNSUPPORTED_PROTOCOL = "UnsupportedProtocol"  # a listener whose protocol no controller accepts (PL421's cause)
    # A Gateway whose parametersRef, or its class's, names a group nothing serves (PL422's cause).
    INVALID_PARAMETERS = "InvalidParameters"
    # A route or ListenerSet whose attachment rests on Namespace labels not in the input: whether
    # traffic reaches it is unknown, so no finding says it does or does not.
    UNKNOWN = "Unknown"


class ReferenceStatus(Term):
    """A reference from one object to another (backend, certificate, policy backend)."""

    RESOLVED = "Resolved"
    NOT_FOUND = "NotFound"
    REF_NOT_PERMITTED = "RefNotPermitted"
    EXTERNAL = "External"
    OPAQUE = "Opaque"  # a kind policylint does not model, not in the input
    UNCHECKED = "Unchecked"  # existence is not checked (Secrets and ConfigMaps rarely live in git)
    PRODUCED = "Produced"  # not in the input, made in the cluster from an object that is (profile `producers`)
    INVALID_REF = "InvalidRef"  # e.g. an empty gatewayClassName
    INVALID_KIND = "InvalidKind"  # a backend of the core group that is not a Service
    MISSING_DATA = "MissingData"  # the Secret or ConfigMap exists without the key its reader needs
    MALFORMED = "Malformed"


# -- effective policy (policylint.semantics.effective) -----------------------------------------


class Enforcement(Term):
    """What a policy's values do in a context (GEP-713 status, docs/effective-policy.md#status)."""

    ENFORCED = "Enforced"
    PARTIALLY_ENFORCED = "PartiallyEnforced"
    OVERRIDDEN = "Overridden"
    CONFLICTED = "Conflicted"


class Role(Term):
    """What a block of policy spec is to the hierarchy (GEP-713 "Merge strategies")."""

    NONE = "none"  # Direct policy, or strategy None: no merging across levels
    DEFAULT = "default"
    OVERRIDE = "override"


class Atomicity(Term):
    """How a default or override block merges with what it meets."""

    ATOMIC = "atomic"  # replaces the whole spec
    PATCH = "patch"  # merges key by key
    RULES = "rules"  # merges by rule name (Kuadrant `rules`)
    PRIORITY = "priority"  # ordered by priority, not replaced


class Level(Term):
    """The levels of the hierarchy, from the top (docs/semantics.md#the-hierarchy)."""

    GATEWAYCLASS = "gatewayclass"
    NAMESPACE = "namespace"
    GATEWAY = "gateway"
    LISTENERSET = "listenerset"
    LISTENER = "listener"
    ROUTE = "route"
    RULE = "rule"
    BACKEND = "backend"
    PORT = "port"
