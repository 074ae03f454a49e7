"""PL4xx (part 2): route and ListenerSet attachment, and policies on what carries no traffic
(docs/semantics.md#the-hierarchy to #route-attachment; backends are in `backends.py`, listeners in
`listeners.py`).

Every rule here reads the resolved hierarchy (`Project.topology()`), which
applies the API defaults and admission rules a controller applies: rules never
re-derive an attachment, they explain one. Objects declared external
(`--external`, docs/semantics.md#partial-repositories) are assumed to exist and
to admit what refers to them, so nothing here reports them. Implementation-specific
parent and backend kinds that policylint does not model are never "not found"
(docs/semantics.md#objects-policylint-does-not-model).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence

from policylint.findings import Issue, Related, Severity
from policylint.input.positions import join
from policylint.k8s.fieldtypes import GATEWAY_GROUP
from policylint.k8s.objects import K8sObject
from policylint.profiles.policy import Policy
from policylint.project import Project
from policylint.rules.base import POLICY, ROUTES, Rule
from policylint.rules.hints import Names, NearMatches, close_name, hints_suffix, namespace_hint
from policylint.rules.refs import at_field, field_value, has_field, label, where
from policylint.rules.unprovable import builtin_class_creator, unmanaged_kind
from policylint.semantics.listeners import LISTENER_PARENTS, unsupported_protocol
from policylint.semantics.namespace_admission import UnknownNamespace
from policylint.semantics.resolution import TargetResolution
from policylint.semantics.topology import CORE, Listener, ParentAttachment, ParentRef, Rejection, Topology
from policylint.stages import Stage
from policylint.vocabulary import Admission, Attachment, ReferenceStatus, Resolved, Traffic

# -- PL405 -----------------------------------------------------------------------------------


class GatewayClassNotFound(Rule):
    """A Gateway's `gatewayClassName` names a GatewayClass that is not in the input."""

    id = "PL405"
    name = "gateway-class-not-found"
    severity = Severity.ERROR
    subjects = frozenset({"Gateway"})
    reads = frozenset({Stage.TOPOLOGY})

    def check(self, project: Project) -> Iterable[Issue]:
        topology = project.topology()
        classes: list[K8sObject] | None = None
        for gateway in topology.gateways():
            ref = topology.class_refs.get(gateway)
            if ref is None or ref.status != ReferenceStatus.NOT_FOUND or ref.name is None:
                continue
            if classes is None:
                classes = list(project.index.of_kind(GATEWAY_GROUP, "GatewayClass"))
            matches = NearMatches()
            close = close_name(ref.name, (c.name for c in classes))
            if close is not None:
                matches.add(f"did you mean GatewayClass {close}?", next(c for c in classes if c.name == close))
            # No GatewayClass in the input at all: the repository does not manage classes (below).
            matches.provable("GatewayClass", None, ref.name, unprovable=not classes)
            creator = builtin_class_creator(project, ref.name)
            if creator is not None:
                implementation, declared = creator
                message = (
                    f"Gateway {where(gateway)} names GatewayClass {ref.name}, which is not in the input: {implementation.name}"
                    f" creates it when installed; if the cluster does not run {implementation.name}, no controller owns"
                    " the Gateway and nothing attached to it carries traffic (Gateway API: Gateway → GatewayClass)"
                )
                hint = (
                    f"Declare the implementation to make it provable: `implementations: [{declared}]` in the configuration,"
                    f" or --implementation {declared}."
                )
                yield self.issue(gateway, "spec.gatewayClassName", message, severity=Severity.WARNING, hint=hint)
                continue
            if not classes:
                # The input holds no GatewayClass at all: the repository does not manage classes (an
                # application repository), so the class most likely exists in the cluster.
                message = (
                    f"Gateway {where(gateway)} names GatewayClass {ref.name}, and the input holds no GatewayClass: if the"
                    " cluster has no such class, no controller owns the Gateway and nothing attached to it carries traffic"
                    " (Gateway API: Gateway → GatewayClass)"
                )
                yield self.issue(gateway, "spec.gatewayClassName", message, severity=Severity.WARNING, hint=matches.hint)
                continue
            message = (
                f"Gateway {where(gateway)} references a non-existent GatewayClass {ref.name}: no controller owns the"
                " Gateway, so it is never reconciled (status stays Accepted=Unknown, Pending) and nothing attached to it"
                f" carries traffic (Gateway API: Gateway → GatewayClass){matches.suffix()}"
            )
            yield self.issue(gateway, "spec.gatewayClassName", message, related=matches.related, hint=matches.hint)


# -- PL406–PL408: route parentRefs --------------------------------------------------------------


def _failing(topology: Topology, statuses: Sequence[Attachment]) -> Iterator[tuple[K8sObject, ParentAttachment]]:
    for route in topology.routes():
        for att in topology.parent_attachments(route):
            if att.status in statuses:
                yield route, att


class ParentRefNotFound(Rule):
    """A route parentRef names a Gateway, ListenerSet or Service that is not in the input."""

    id = "PL406"
    name = "parent-ref-not-found"
    severity = Severity.ERROR
    subjects = ROUTES
    reads = frozenset({Stage.TOPOLOGY})

    def check(self, project: Project) -> Iterable[Issue]:
        topology = project.topology()
        names = Names(project)
        for route, att in _failing(topology, (Attachment.PARENT_NOT_FOUND,)):
            ref = att.ref
            matches = self._near_matches(project, names, route, ref)
            # Without a near miss, a kind the input holds none of in that namespace is unprovable
            # (the platform's Gateways, applied from another repository): a warning until --complete.
            unprovable = None if matches else unmanaged_kind(project, ref.group, ref.kind, ref.namespace)
            matches.provable(ref.kind, ref.namespace, ref.name, unprovable=unprovable is not None)
            why, effect = "", f"the {route.kind} does not attach to it"
            if unprovable is not None:
                why, effect = unprovable.why, f"if it does not exist, {effect}"
            message = (
                f"parentRef names {ref.kind} {ref.namespace}/{ref.name}, which is not in the input{why}: {effect}"
                f" (Accepted=False), so it receives no traffic through it (Gateway API route attachment){matches.suffix()}"
            )
            yield self.issue(
                route,
                at_field(route, ref.path, "name"),
                message,
                related=matches.related,
                hint=matches.hint,
                severity=Severity.WARNING if unprovable is not None else None,
            )

    @staticmethod
    def _near_matches(project: Project, names: Names, route: K8sObject, ref: ParentRef) -> NearMatches:
        matches = NearMatches()
        namespace_set = has_field(route, ref.path, "namespace")
        # 1. The same parent in another namespace: parentRefs default to the route's namespace
        # (docs/semantics.md#parentref-defaults).
        unset = f"in the parentRef (without it the parentRef names the route's own namespace, {ref.namespace})"
        for obj in names.named(ref.group, ref.kind, ref.name):
            if obj.namespace != ref.namespace and obj.namespace is not None:
                matches.add(namespace_hint(obj, namespace_set, unset), obj)
        # 2. The same name as the other listener-bearing parent kind (kind defaults to Gateway).
        if (ref.group, ref.kind) in LISTENER_PARENTS:
            for group, kind in LISTENER_PARENTS:
                if kind == ref.kind:
                    continue
                other = project.index.lookup(group, kind, ref.namespace, ref.name)
                if other is not None:
                    matches.add(f"{kind} {where(other)} exists: did you mean kind: {kind}?", other)
        # 3. A similar name of the same kind in the same namespace (a typo).
        names.add_typo(matches, ref.group, ref.kind, ref.namespace, ref.name)
        return matches


def _listeners_related(parent: K8sObject) -> Related:
    return Related(f"{label(parent)} defines its listeners here", object=parent, path="spec.listeners")


class ParentRefNoMatchingListener(Rule):
    """A route parentRef's `sectionName` or `port` matches no listener of the Gateway or ListenerSet."""

    id = "PL407"
    name = "parent-ref-no-matching-listener"
    severity = Severity.ERROR
    subjects = ROUTES
    reads = frozenset({Stage.TOPOLOGY})

    def check(self, project: Project) -> Iterable[Issue]:
        topology = project.topology()
        for route, att in _failing(topology, (Attachment.NO_MATCHING_PARENT,)):
            parent, ref = att.parent, att.ref
            if parent is None:
                continue
            listeners = topology.listeners(parent)
            names = [lst.name for lst in listeners if lst.name is not None]
            have = ", ".join(f"{lst.name} ({lst.protocol} {lst.port})" for lst in listeners) or "no listeners"
            wanted = []
            if ref.section_name is not None:
                wanted.append(f"sectionName {ref.section_name}")
            if ref.port is not None:
                wanted.append(f"port {ref.port}")
            hints: list[str] = []
            related = [_listeners_related(parent)]
            if ref.section_name is not None and ref.section_name not in names:
                path = join(ref.path, "sectionName")
                close = close_name(ref.section_name, names)
                if close is not None:
                    hints.append(f"did you mean sectionName {close}?")
                elsewhere = self._defined_elsewhere(topology, route, parent, ref.section_name)
                if elsewhere is not None:
                    hints.append(elsewhere[0])
                    related.append(elsewhere[1])
            else:
                path = join(ref.path, "port") if ref.port is not None else ref.path
                named = [lst for lst in listeners if lst.name == ref.section_name]
                if named:
                    hints.append(f"listener {ref.section_name} listens on port {named[0].port}")
            message = (
                f"parentRef {', '.join(wanted)} selects no listener of {label(parent)} (have: {have}): the"
                f" {route.kind} is not attached to it (Accepted=False, NoMatchingParent; Gateway API route attachment){hints_suffix(hints)}"
            )
            yield self.issue(route, path, message, related=related)

    @staticmethod
    def _defined_elsewhere(topology: Topology, route: K8sObject, parent: K8sObject, name: str) -> tuple[str, Related] | None:
        """The listener on the other side of the Gateway/ListenerSet boundary, which a parentRef never crosses."""
        if parent.kind == "Gateway":
            # Gateway parents see only the Gateway's own listeners, never those of its
            # ListenerSets (docs/semantics.md#listener-admission, step 1): the listener may be on an
            # attached set.
            for listener_set in topology.listener_sets_of(parent):
                for lst in topology.listeners(listener_set):
                    if lst.name == name:
                        other_ns = listener_set.namespace != route.namespace
                        namespace = f", namespace: {listener_set.namespace}" if other_ns else ""
                        hint = (
                            f"listener {name} is defined on {label(listener_set)}, attached to this Gateway; a Gateway"
                            f" parentRef sees only the Gateway's own listeners: set kind: ListenerSet, name:"
                            f" {listener_set.name}{namespace}"
                        )
                        where_defined = join(lst.path, "name")
                        return hint, Related(f"listener {name} is defined here", object=listener_set, path=where_defined)
        elif parent.kind == "ListenerSet":
            # The reverse: the listener is the parent Gateway's own.
            ls_att = topology.listener_sets.get(parent)
            gateway = ls_att.gateway if ls_att is not None else None
            for lst in topology.listeners(gateway) if gateway is not None else ():
                if lst.name == name and gateway is not None:
                    hint = f"listener {name} is defined on the parent {label(gateway)}: set kind: Gateway, name: {gateway.name}"
                    return hint, Related(f"listener {name} is defined here", object=gateway, path=join(lst.path, "name"))
        return None


class RouteNotAdmitted(Rule):
    """No listener of a route's parent admits the route (allowedRoutes namespaces or kinds, or hostnames)."""

    id = "PL408"
    name = "route-not-admitted"
    severity = Severity.ERROR
    subjects = ROUTES
    reads = frozenset({Stage.TOPOLOGY})

    def check(self, project: Project) -> Iterable[Issue]:
        topology = project.topology()
        statuses = (
            Attachment.NOT_ALLOWED_BY_LISTENERS,
            Attachment.NO_MATCHING_LISTENER_HOSTNAME,
            Attachment.LISTENER_SET_NOT_ATTACHED,
        )
        for route, att in _failing(topology, statuses):
            parent = att.parent
            if parent is None:
                continue
            if att.status == Attachment.LISTENER_SET_NOT_ATTACHED:
                yield self._listener_set_not_attached(topology, route, att, parent)
                continue
            reasons: list[str] = []
            related: list[Related] = []
            for rejection in att.rejections:
                texts = []
                # Every check that fails: fixing one alone leaves the route rejected.
                for failed in (rejection, *rejection.also):
                    text, rel = self._explain(topology, route, failed)
                    texts.append(text)
                    related.extend(rel)
                reasons.append(f"listener {rejection.listener.name}: {'; and '.join(texts)}")
            hostnames_fail = any(f.check is Admission.HOSTNAME for r in att.rejections for f in (r, *r.also))
            if hostnames_fail and "hostnames" in route.spec:
                related.append(Related(f"{label(route)} sets its hostnames here", object=route, path="spec.hostnames"))
            reason = (
                "NoMatchingListenerHostname"
                if att.status == Attachment.NO_MATCHING_LISTENER_HOSTNAME
                else "NotAllowedByListeners"
            )
            if reason == "NotAllowedByListeners" and all(
                any(f.check is Admission.HOSTNAME for f in r.also) for r in att.rejections
            ):
                # Every listener also fails on hostnames: which reason a controller writes depends
                # on the order it checks them in (Istio checks hostnames first).
                reason += ", or NoMatchingListenerHostname where the controller checks hostnames first"
            elsewhere = ""
            if topology.is_attached(route):
                elsewhere = f" (it is attached through another parentRef, but not to {label(parent)})"
            message = (
                f"no listener of {label(parent)} admits {route.kind} {where(route)}{elsewhere}: {'; '.join(reasons)}"
                f" (Accepted=False, {reason}; Gateway API route attachment)"
            )
            yield self.issue(route, att.ref.path, message, related=related)

    def _listener_set_not_attached(self, topology: Topology, route: K8sObject, att: ParentAttachment, parent: K8sObject) -> Issue:
        ls_att = topology.listener_sets.get(parent)
        why = ls_att.message if ls_att is not None else "it is not attached to its Gateway"
        message = (
            f"parentRef names {label(parent)}, which is not attached to its Gateway ({why}): its listeners serve nothing,"
            f" so the {route.kind} receives no traffic through it (GEP-1713 ListenerSet, Gateway API route attachment); fix the"
            " ListenerSet's attachment (see PL409)"
        )
        related = [Related(f"{label(parent)} names its parent Gateway here", object=parent, path="spec.parentRef")]
        return self.issue(route, att.ref.path, message, related=related)

    def _explain(self, topology: Topology, route: K8sObject, rejection: Rejection) -> tuple[str, list[Related]]:
        """Why the listener rejected the route, and where to fix it: by the admission check the
        topology recorded as failing."""
        check = rejection.check
        if check.about_kind:
            return _kind_rejection(route, rejection.listener, check)
        if check is Admission.HOSTNAME:
            return _hostname_rejection(route, rejection.listener)
        return _namespace_rejection(topology, route, rejection)


def _kind_rejection(route: K8sObject, listener: Listener, check: Admission) -> tuple[str, list[Related]]:
    owner = listener.owner
    protocol_rel = Related(f"listener {listener.name} sets its protocol here", object=owner, path=join(listener.path, "protocol"))
    if check is Admission.KIND_NOT_CARRIED:
        # Listed, but the protocol cannot carry it: the listener's kinds are invalid.
        carried = ", ".join(listener.default_kinds() or ())
        text = (
            f"allowedRoutes.kinds lists {route.kind}, but a {listener.protocol} listener cannot carry it (it carries"
            f" {carried}; the listener gets ResolvedRefs=False, InvalidRouteKinds): attach the route to a listener"
            f" whose protocol carries {route.kind}"
        )
        return text, [protocol_rel]
    if check is Admission.KIND_NOT_LISTED:
        kinds = ", ".join(k for _, k in listener.allowed_kinds or ())
        text = f"allowedRoutes.kinds admits {kinds}, not {route.kind}: add {route.kind} to the list or use another listener"
        kinds_path = join(listener.path, "allowedRoutes", "kinds")
        return text, [Related(f"listener {listener.name} lists the route kinds it admits here", object=owner, path=kinds_path)]
    if not listener.malformed and unsupported_protocol(listener.protocol):
        # Refused for its protocol (PL421): it carries no kind at all.
        text = (
            f"listener protocol {listener.protocol} is unsupported (UnsupportedProtocol): it carries no route kind;"
            f" fix its protocol or attach the route to a listener whose protocol carries {route.kind}"
        )
        return text, [protocol_rel]
    defaults = ", ".join(listener.default_kinds() or ())
    text = (
        f"a {listener.protocol} listener carries {defaults}, not {route.kind}: attach the route to a listener"
        f" whose protocol carries {route.kind}"
    )
    return text, [protocol_rel]


def _hostname_rejection(route: K8sObject, listener: Listener) -> tuple[str, list[Related]]:
    raw_hostnames = route.spec.get("hostnames")
    hostnames = [h for h in raw_hostnames if isinstance(h, str)] if isinstance(raw_hostnames, list) else []
    text = (
        f"listener hostname {listener.hostname} does not intersect the route's hostnames {', '.join(hostnames)}:"
        " add a route hostname that the listener hostname covers, or attach to another listener"
    )
    return text, [
        Related(f"listener {listener.name} sets its hostname here", object=listener.owner, path=join(listener.path, "hostname"))
    ]


def _namespace_rejection(topology: Topology, route: K8sObject, rejection: Rejection) -> tuple[str, list[Related]]:
    listener, check = rejection.listener, rejection.check
    owner = listener.owner
    allowed_path = join(listener.path, "allowedRoutes")
    has_allowed = field_value(owner, allowed_path) is not None
    route_ns = route.namespace or ""
    ns_path = join(allowed_path, "namespaces") if has_field(owner, allowed_path, "namespaces") else allowed_path
    rel_path = ns_path if has_allowed else listener.path
    if has_allowed:
        rels = [Related(f"listener {listener.name} admits routes from these namespaces", object=owner, path=rel_path)]
    else:
        note = f"listener {listener.name} sets no allowedRoutes (namespaces from: Same by default)"
        rels = [Related(note, object=owner, path=rel_path)]
    if check is Admission.NAMESPACE and listener.allowed_from == "Same":
        default = "" if has_allowed and has_field(owner, join(allowed_path, "namespaces"), "from") else ", the default"
        text = (
            f"allowedRoutes admits routes only from the {owner.kind}'s namespace {owner.namespace} (from: Same{default}),"
            f" not from {route_ns}: set allowedRoutes.namespaces.from to All or Selector on the listener, or move the"
            f" route to namespace {owner.namespace}"
        )
    elif check is Admission.NAMESPACE and listener.allowed_selector is not None:
        labels, known = topology.resolution.namespace_labels(route_ns)
        shown = ", ".join(f"{k}={v}" for k, v in sorted(labels.items()))
        selector = listener.allowed_selector
        failing = selector.failing(labels)
        detail = str(selector)
        if len(failing) < len(selector.requirements):
            detail += f"; failing: {', '.join(str(r) for r in failing)}"
        unknown = "" if known else f"; Namespace {route_ns} is not in the input, so only its name label is known"
        text = (
            f"namespace {route_ns} (labels: {shown}{unknown}) does not match the allowedRoutes selector ({detail}):"
            " label the namespace or change the selector"
        )
        if known:
            namespace = topology.index.lookup(CORE, "Namespace", None, route_ns)
            if namespace is not None:
                path = "metadata.labels" if namespace.labels else "metadata.name"
                rels.append(Related(f"Namespace {route_ns} has these labels", object=namespace, path=path))
    else:
        text = rejection.message
    return text, rels


# -- PL409 ---------------------------------------------------------------------------------------


class ListenerSetNotAllowed(Rule):
    """A ListenerSet's parent Gateway is missing, or its `allowedListeners` does not admit the set."""

    id = "PL409"
    name = "listener-set-not-allowed"
    severity = Severity.ERROR
    subjects = frozenset({"ListenerSet"})
    reads = frozenset({Stage.TOPOLOGY})

    def check(self, project: Project) -> Iterable[Issue]:
        topology = project.topology()
        names = Names(project)
        for listener_set in project.index.of_kind(GATEWAY_GROUP, "ListenerSet"):
            att = topology.listener_sets.get(listener_set)
            if att is None:
                continue
            if att.status == Attachment.PARENT_NOT_FOUND:
                yield self._not_found(names, listener_set)
            elif att.status is Attachment.NOT_ALLOWED and att.gateway is not None:
                yield self._not_allowed(project, listener_set, att.gateway, att.message)

    def _not_allowed(self, project: Project, listener_set: K8sObject, gateway: K8sObject, detail: str) -> Issue:
        allowed = gateway.spec.get("allowedListeners")
        namespaces = allowed.get("namespaces") if isinstance(allowed, dict) else None
        allowed_from = namespaces.get("from") if isinstance(namespaces, dict) else None
        ls_ns = listener_set.namespace
        if allowed is None:
            note = f"Gateway {where(gateway)} has no allowedListeners (from: None)"
            related = [Related(note, object=gateway, path="metadata.name")]
        else:
            note = f"Gateway {where(gateway)} admits ListenerSets here"
            related = [Related(note, object=gateway, path="spec.allowedListeners")]
        if allowed_from == "Same":
            fix = (
                f"move the ListenerSet to namespace {gateway.namespace}, or set allowedListeners.namespaces.from to All"
                " or Selector"
            )
        elif allowed_from == "Selector":
            fix = f"label namespace {ls_ns} to match the selector, or change the selector"
            namespace = project.index.lookup(CORE, "Namespace", None, ls_ns or "")
            if namespace is not None:
                path = "metadata.labels" if namespace.labels else "metadata.name"
                related.append(Related(f"Namespace {ls_ns} has these labels", object=namespace, path=path))
        else:
            fix = (
                f"set allowedListeners.namespaces.from on Gateway {where(gateway)} to Same, All or Selector so that it"
                f" admits namespace {ls_ns}"
            )
        message = (
            f"ListenerSet {where(listener_set)} is not admitted by its parent: {detail}; the set is not attached"
            " (Accepted=False, NotAllowed), so its listeners serve nothing and routes attached to them receive no"
            f" traffic (GEP-1713 ListenerSet attachment): {fix}"
        )
        return self.issue(listener_set, "spec.parentRef", message, related=related)

    def _not_found(self, names: Names, listener_set: K8sObject) -> Issue:
        raw = listener_set.spec.get("parentRef")
        raw = raw if isinstance(raw, dict) else {}
        raw_group = raw.get("group")
        group = raw_group if isinstance(raw_group, str) else GATEWAY_GROUP
        raw_kind = raw.get("kind")
        kind = raw_kind if isinstance(raw_kind, str) and raw_kind else "Gateway"
        raw_namespace = raw.get("namespace")
        namespace = raw_namespace if isinstance(raw_namespace, str) and raw_namespace else None
        namespace = namespace or listener_set.namespace
        name = str(raw.get("name"))
        matches = NearMatches()
        for obj in names.named(group, kind, name):
            if obj.namespace != namespace:
                matches.add(f"{obj.kind} {where(obj)} exists: set namespace: {obj.namespace} in the parentRef", obj)
        names.add_typo(matches, group, kind, namespace, name)
        matches.provable(kind, namespace, name)
        message = (
            f"the parent {kind} {namespace}/{name} of ListenerSet {where(listener_set)} is not in the input: the set is"
            f" not attached, so its listeners serve nothing (GEP-1713 ListenerSet attachment){matches.suffix()}"
        )
        path = at_field(listener_set, "spec.parentRef", "name")
        return self.issue(listener_set, path, message, related=matches.related, hint=matches.hint)


# -- PL410 ---------------------------------------------------------------------------------------


class RouteWithoutParentRefs(Rule):
    """A route has no `parentRefs`, so it attaches to no Gateway and serves no traffic."""

    id = "PL410"
    name = "route-without-parent-refs"
    severity = Severity.WARNING
    subjects = ROUTES
    reads = frozenset({Stage.TOPOLOGY})

    def check(self, project: Project) -> Iterable[Issue]:
        topology = project.topology()
        for route in topology.routes():
            refs = route.spec.get("parentRefs")
            if refs is not None and refs != []:
                continue  # parentRefs given (a value of the wrong type is a schema error, not this rule's)
            if project.index.malformed(route).broken("spec", "parentRefs"):
                continue  # `spec` itself has the wrong type: PL010 reports it, and parentRefs cannot be read
            if route.spec.get("useDefaultGateways") == "All":
                # Experimental default Gateways (docs/semantics.md#routes-without-parents): the route
                # is claimed by every Gateway with defaultScope: All, which may live outside the input.
                continue
            if topology.delegated_from_parents(route) or topology.may_be_delegated(route):
                # A child of route delegation, at any depth: a route up the chain hands it traffic
                # (kgateway), and whether that one attaches is its own finding; or one whose
                # delegating parent may live outside the input.
                continue
            path = "spec.parentRefs" if "parentRefs" in route.spec else ("spec" if "spec" in route.data else "metadata.name")
            message = (
                f"{route.kind} {where(route)} has no parentRefs, so it attaches to no Gateway and serves no traffic"
                " (Gateway API: a route without parentRefs attaches nowhere): add a parentRef naming the Gateway or ListenerSet (or, for"
                " a mesh route, the Service) it belongs to"
            )
            yield self.issue(route, path, message)


# -- PL413 ---------------------------------------------------------------------------------------


class PolicyTargetCarriesNoTraffic(Rule):
    """A policy targets an object that carries no traffic (a detached route or ListenerSet)."""

    id = "PL413"
    name = "policy-target-carries-no-traffic"
    severity = Severity.WARNING
    subjects = frozenset({POLICY})
    reads = frozenset({Stage.TOPOLOGY})

    def check(self, project: Project) -> Iterable[Issue]:
        topology = project.topology()
        for policy in project.resolution.policies():
            for res in project.resolution.targets(policy):
                if res.detail == Resolved.NOT_BOUND and res.target is not None:
                    yield self._not_bound(policy, res.target, res)
                    continue
                if not res.accepted or res.target is None:
                    continue
                traffic, reason = (
                    topology.section_traffic(res.target, res.section) if res.section is not None else topology.traffic(res.target)
                )
                # A Gateway without its class is PL405's finding, on the Gateway: one finding per cause;
                # an attachment that rests on unknown Namespace labels is PL425's, at info.
                if traffic in (Traffic.CARRIES, Traffic.NO_GATEWAY_CLASS, Traffic.UNKNOWN):
                    continue
                target = res.target
                verb = "selects" if res.detail == Resolved.SELECTOR_MATCH else "targets"
                what = label(target)
                if traffic in (Traffic.LISTENER_CONFLICTED, Traffic.UNSUPPORTED_PROTOCOL) and res.section is not None:
                    what = f"listener {res.section.name} of {what}"
                message = (
                    f"{policy.profile.kind} {where(policy.obj)} {verb} {what}, which carries no traffic: {reason};"
                    " the policy has no effect until traffic can reach its target (GEP-713: a policy augments the"
                    " traffic through its target)"
                )
                related = [Related(f"{label(target)} is defined here", object=target, path="metadata.name")]
                yield self.issue(policy.obj, res.ref.path, message, related=related)

    def _not_bound(self, policy: Policy, target: K8sObject, res: TargetResolution) -> Issue:
        bound_by = policy.profile.targets.bound_by
        assert bound_by is not None  # what made the resolution NotBound
        message = (
            f"{policy.profile.kind} {where(policy.obj)} targets {label(target)}, which is {res.message}; the policy"
            f" takes effect on a {target.kind}'s traffic only through {bound_by.through}, so it has none"
        )
        related = [Related(f"{label(target)} is defined here", object=target, path="metadata.name")]
        return self.issue(policy.obj, res.ref.path, message, related=related)


class PolicyRejectedOnTarget(Rule):
    """The controller rejects a policy on one of its targets: plain-HTTP listeners sharing a port it covers only in part, a target kind that merged Gateways rule out, or a field it does not support on that kind of target."""

    id = "PL418"
    name = "policy-rejected-on-target"
    severity = Severity.ERROR
    subjects = frozenset({POLICY})
    reads = frozenset({Stage.TOPOLOGY})

    def check(self, project: Project) -> Iterable[Issue]:
        topology = project.topology()
        for policy in project.resolution.policies():
            profile = policy.profile
            if not profile.rejects_on_target:
                continue
            for res in project.resolution.targets(policy):
                for error in topology.target_errors(policy, res):
                    message = f"{profile.kind} {where(policy.obj)} is rejected on {res.ref.display()}: {error.message} (Accepted=False, Invalid)"
                    if error.reason == "kind-fields":
                        hint = "Keep to the fields the controller supports on this kind of target, or target another kind."
                        yield self.issue(policy.obj, res.ref.path, message, hint=hint)
                    elif error.reason == "shared-http-port":
                        hint = (
                            "Target the whole Gateway, which covers every listener of its own on the port, or give"
                            " this listener a port of its own."
                            if res.ref.section_name
                            else "Give the listeners of this Gateway ports that no other Gateway of its class uses,"
                            " since the class merges its Gateways' listeners."
                        )
                        yield self.issue(policy.obj, res.ref.path, message, hint=hint)
                    else:
                        merged = profile.merged_gateways
                        assert merged is not None and merged.target_kind is not None
                        hint = (
                            f"Target the {merged.target_kind} of the merged Gateways."
                            if res.ref.kind == "Gateway"
                            else "Target the Gateway: without the merge, the controller takes only Gateways."
                        )
                        yield self.issue(policy.obj, join(res.ref.path, "kind"), message, hint=hint)


# Routes or ListenerSets named in one PL425 message; the others are counted.
_UNDECIDED_SHOWN = 5


class NamespaceLabelsUnknown(Rule):
    """A listener's `allowedRoutes` (or a Gateway's `allowedListeners`) selects namespaces by label, and a route (or ListenerSet) comes from a namespace whose Namespace is not in the input: whether it is admitted cannot be decided."""

    id = "PL425"
    name = "namespace-labels-unknown"
    severity = Severity.INFO
    subjects = frozenset({"Gateway", "ListenerSet"})
    reads = frozenset({Stage.TOPOLOGY})

    def check(self, project: Project) -> Iterable[Issue]:
        topology = project.topology()
        # (owner, `namespaces` path, namespace) -> what comes from there: once per listener and namespace.
        found: dict[tuple[K8sObject, str, str], tuple[UnknownNamespace, dict[K8sObject, K8sObject]]] = {}
        for route in topology.routes():
            for att in topology.parent_attachments(route):
                for unknown in att.unknown:
                    if unknown.listener is None:
                        continue  # through a ListenerSet whose own admission is undecided: said for the ListenerSet
                    found.setdefault((unknown.owner, unknown.path, unknown.namespace), (unknown, {}))[1][route] = route
        for set_att in topology.listener_sets.values():
            if set_att.unknown is not None:
                unknown = set_att.unknown
                found.setdefault((unknown.owner, unknown.path, unknown.namespace), (unknown, {}))[1][set_att.listener_set] = (
                    set_att.listener_set
                )
        for unknown, objects in sorted(found.values(), key=lambda u: (u[0].owner.key, u[0].path, u[0].namespace)):
            yield self._issue(unknown, sorted(objects.values(), key=lambda o: o.key))

    def _issue(self, unknown: UnknownNamespace, objects: Sequence[K8sObject]) -> Issue:
        owner = unknown.owner
        shown = ", ".join(label(o) for o in objects[:_UNDECIDED_SHOWN])
        if len(objects) > _UNDECIDED_SHOWN:
            shown += f" and {len(objects) - _UNDECIDED_SHOWN} more"
        field = "allowedListeners" if unknown.listener is None else f"allowedRoutes of listener {unknown.listener}"
        message = (
            f"{field} of {label(owner)} selects namespaces by label ({unknown.selector}), and Namespace"
            f" {unknown.namespace} is not in the input, so whether it admits {shown} cannot be decided (only the"
            " name label is known); no finding rests on the attachment either way"
        )
        hint = (
            f"Add the Namespace manifest of {unknown.namespace}, with its labels, to the input or a --context path, or"
            " run with --complete if the input is the whole cluster."
        )
        return self.issue(owner, unknown.path, message, hint=hint)


RULES: list[type[Rule]] = [
    GatewayClassNotFound,
    ParentRefNotFound,
    ParentRefNoMatchingListener,
    RouteNotAdmitted,
    ListenerSetNotAllowed,
    RouteWithoutParentRefs,
    PolicyTargetCarriesNoTraffic,
    PolicyRejectedOnTarget,
    NamespaceLabelsUnknown,
]
