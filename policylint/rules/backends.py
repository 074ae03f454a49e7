"""PL4xx (part 3): references to backends, certificates and CA bundles (docs/semantics.md#backends,
docs/semantics.md#certificates).

Each rule reads the references the topology resolved (`Topology.refs_from`), as the controller
resolves them: a reference is reported where its controller cannot program it (not found, not
permitted, not the kind it takes, not a port of the Service), never where an object declared
external or a kind policylint does not model would satisfy it."""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from policylint.findings import Issue, Related, Severity
from policylint.input.positions import join
from policylint.k8s.external import external_hint
from policylint.k8s.fieldtypes import GATEWAY_GROUP
from policylint.k8s.objects import K8sObject
from policylint.project import Project
from policylint.rules.base import POLICY, ROUTES, Rule
from policylint.rules.hints import Names, NearMatches, frontend_scope, listeners_get, namespace_hint
from policylint.rules.refs import HOLDER_KINDS, at_field, has_field, holding, where
from policylint.rules.unprovable import unmanaged_kind, unprovable_absence
from policylint.semantics.selections import Selection, selections
from policylint.semantics.topology import CORE, ObjectRef, Topology
from policylint.stages import Stage
from policylint.vocabulary import ReferenceStatus

_PURPOSE = {
    "backend": "backendRef",
    "mirror": "requestMirror backendRef",
    "ext-auth": "externalAuth backendRef",
    "policy-backend": "backend reference",
}


# -- PL411, PL412: backends ------------------------------------------------------------------------

_BACKEND_PURPOSES = ("backend", "mirror", "ext-auth", "policy-backend")


def _backend_refs(project: Project) -> Iterator[ObjectRef]:
    """Every backend reference: route backendRefs, mirror and ext-auth filters, policy backends."""
    topology = project.topology()
    owners: list[K8sObject] = list(topology.routes())
    owners.extend(p.obj for p in project.resolution.policies() if p.profile.backend_refs)
    owners.extend(holding(project))
    for owner in owners:
        for ref in topology.refs_from(owner):
            if ref.purpose in _BACKEND_PURPOSES:
                yield ref


class BackendNotFound(Rule):
    """A backend reference (route backendRef, mirror, ext-auth, policy backend) names an object not in the input."""

    id = "PL411"
    name = "backend-not-found"
    severity = Severity.ERROR
    subjects = ROUTES | HOLDER_KINDS | {"Gateway", "ListenerSet", POLICY}
    reads = frozenset({Stage.TOPOLOGY})

    def check(self, project: Project) -> Iterable[Issue]:
        names = Names(project)
        for ref in _backend_refs(project):
            if ref.status == ReferenceStatus.NOT_FOUND:
                yield self._not_found(project, names, ref)
            elif ref.status == ReferenceStatus.INVALID_KIND:
                detail = ref.detail or "of a kind no controller serves as a backend"
                sep = "" if detail.startswith(",") else " "
                message = (
                    f"{_PURPOSE.get(ref.purpose, 'reference')} names {ref.kind} {ref.namespace}/{ref.name}{sep}{detail}:"
                    f" the {ref.owner.kind} gets ResolvedRefs=False, InvalidKind, and the requests meant for this backend"
                    " fail (Gateway API BackendObjectReference)"
                )
                yield self.issue(
                    ref.owner, join(ref.path, "kind"), message, hint="Reference a Service, or set the group of the kind meant."
                )
            elif ref.status == ReferenceStatus.OPAQUE and ref.detail:
                # A host of a service registry (Istio's Hostname kind) no object of the input
                # declares: the registry may still hold it.
                message = (
                    f"{_PURPOSE.get(ref.purpose, 'reference')} names host {ref.name} ({ref.kind}, group {ref.group}), and"
                    f" {ref.detail}: the controller looks it up in its service registry, which may hold it from outside"
                    " the input; if it does not, the route gets ResolvedRefs=False and the requests meant for it fail"
                )
                hint = f"Add the object that declares the host, or {external_hint(ref.kind, ref.namespace, ref.name)}."
                yield self.issue(ref.owner, at_field(ref.owner, ref.path, "name"), message, severity=Severity.WARNING, hint=hint)
            elif ref.status == ReferenceStatus.OPAQUE:
                # A kind policylint does not model (InferencePool, a vendor backend) may well
                # be served by the controller; never "Service not found" for it. Where a profile
                # says what makes the kind outside the repository (an InferencePool: the Inference
                # Extension's Helm chart), the finding names it, as for other such absences.
                made = unprovable_absence(project, ref)
                message = (
                    f"unresolved backend of a kind not modelled: {_PURPOSE.get(ref.purpose, 'reference')} names"
                    f" {ref.kind} {ref.namespace}/{ref.name} (group {ref.group or 'core'}), which is not in the input"
                    f"{made.why if made is not None else ''};"
                    f" policylint does not model {ref.kind}, so it cannot tell whether the controller resolves it"
                )
                hint = f"Add the object to the input, or {external_hint(ref.kind, ref.namespace, ref.name)}."
                yield self.issue(ref.owner, ref.path, message, severity=Severity.WARNING, hint=hint)

    def _not_found(self, project: Project, names: Names, ref: ObjectRef) -> Issue:
        matches = NearMatches()
        namespace_set = has_field(ref.owner, ref.path, "namespace")
        unset = (
            f"(a backend reference defaults to the namespace of the {ref.owner.kind}, {ref.namespace}; another namespace"
            " needs a ReferenceGrant there)"
        )
        for obj in names.named(ref.group, ref.kind, ref.name):
            if obj.namespace != ref.namespace:
                matches.add(namespace_hint(obj, namespace_set, unset), obj)
        names.add_typo(matches, ref.group, ref.kind, ref.namespace, ref.name)
        # Unprovable: a kind a cluster component makes under any name (profile producers), or,
        # without a near miss, a kind the input holds none of in that namespace (another team's
        # Services, an object another project makes): a warning until --complete.
        unprovable = unprovable_absence(project, ref)
        # A detail says how the controller looks the object up instead (Istio's ServiceImport as a
        # Service): the message says so, and that lookup decides.
        if unprovable is None and not matches and not ref.detail:
            unprovable = unmanaged_kind(project, ref.group, ref.kind, ref.namespace)
        matches.provable(ref.kind, ref.namespace, ref.name, unprovable=unprovable is not None)
        if ref.purpose == "policy-backend":
            effect = ref.effect or f"the {ref.owner.kind} cannot reach it"
        elif ref.purpose == "mirror":
            effect = "the route's status gets ResolvedRefs=False, BackendNotFound and the mirror has nowhere to send copies"
        elif ref.purpose == "ext-auth":
            effect = "the route's status gets ResolvedRefs=False, BackendNotFound and requests cannot be authorized"
        else:
            # docs/semantics.md#backends: an invalid backend stays in the weighted set; its share of
            # requests gets HTTP 500.
            effect = (
                "the route's status gets ResolvedRefs=False, BackendNotFound and the requests meant for it fail"
                " (HTTP 500 for HTTP routes)"
            )
        why = f" ({ref.detail})" if ref.detail else ""
        if unprovable is not None:
            why, effect = unprovable.why, f"if it does not exist, {effect}"
        message = (
            f"{_PURPOSE.get(ref.purpose, 'reference')} names {ref.kind} {ref.namespace}/{ref.name}, which is not in the"
            f" input{why}: {effect} (Gateway API BackendObjectReference){matches.suffix()}"
        )
        return self.issue(
            ref.owner,
            at_field(ref.owner, ref.path, "name"),
            message,
            related=matches.related,
            hint=matches.hint,
            severity=Severity.WARNING if unprovable is not None else None,
        )


class BackendPortInvalid(Rule):
    """A Service backend reference has no `port`, or a port the Service does not define."""

    id = "PL412"
    name = "backend-port-invalid"
    severity = Severity.ERROR
    covers_cel = frozenset({"Must have port for Service reference"})  # the CRDs' CEL rules for the same problem (PL704)
    subjects = ROUTES | HOLDER_KINDS | {POLICY}
    reads = frozenset({Stage.TOPOLOGY})

    def check(self, project: Project) -> Iterable[Issue]:
        topology = project.topology()
        for ref in _backend_refs(project):
            if (ref.group, ref.kind) != (CORE, "Service"):
                continue
            what = _PURPOSE.get(ref.purpose, "reference")
            if not ref.has_port:
                # The CEL rule on BackendObjectReference: the API server rejects the whole object.
                message = (
                    f"{what} to Service {ref.namespace}/{ref.name} has no port: the API server rejects the"
                    f' {ref.owner.kind} (CEL "Must have port for Service reference"; Gateway API BackendObjectReference);'
                    " set port to one of the Service's ports (its `port`, not `targetPort`)"
                )
                related = []
                if ref.target is not None:
                    related.append(self._ports_related(ref.target))
                yield self.issue(ref.owner, ref.path, message, related=related)
                continue
            if ref.status != ReferenceStatus.RESOLVED or ref.target is None or ref.port is None or ref.port_section is not None:
                continue
            service = ref.target
            ports = topology.service_ports(service)
            if not ports and service.spec.get("type") == "ExternalName":
                continue  # ExternalName Services need no ports; how the port is used is implementation-specific
            have = ", ".join(self._port_labels(service)) or "no ports"
            # What is certain: no Service port matches, so the backend cannot be reached on it. The
            # status a controller writes differs (most set ResolvedRefs=False; Istio does not compare
            # the port), so the message claims none.
            effect = f"the {ref.owner.kind} cannot reach this backend on that port"
            exposed = self._exposing(service, ref.port)
            if exposed is not None:
                message = (
                    f"{what} port {ref.port} is not a port of Service {where(service)} (have: {have}): {effect}"
                    f" (Gateway API BackendObjectReference); {ref.port} is the targetPort of Service port {exposed}"
                )
                hint = f"Use port: {exposed}."
            else:
                message = (
                    f"{what} port {ref.port} is not a port of Service {where(service)} (have: {have}): {effect}"
                    " (Gateway API BackendObjectReference)"
                )
                hint = "Use one of the Service's `port` values (not a `targetPort`)."
            yield self.issue(ref.owner, join(ref.path, "port"), message, related=[self._ports_related(service)], hint=hint)

    @staticmethod
    def _exposing(service: K8sObject, target_port: int) -> int | None:
        """The Service port whose numeric targetPort is `target_port` (the usual confusion)."""
        ports = service.spec.get("ports")
        for entry in ports if isinstance(ports, list) else ():
            if isinstance(entry, dict) and entry.get("targetPort") == target_port and isinstance(entry.get("port"), int):
                return int(entry["port"])
        return None

    @staticmethod
    def _ports_related(service: K8sObject) -> Related:
        path = "spec.ports" if "ports" in service.spec else "metadata.name"
        return Related(f"Service {where(service)} defines its ports here", object=service, path=path)

    @staticmethod
    def _port_labels(service: K8sObject) -> list[str]:
        out = []
        ports = service.spec.get("ports")
        for entry in ports if isinstance(ports, list) else ():
            if isinstance(entry, dict) and isinstance(entry.get("port"), int):
                name = entry.get("name")
                out.append(f"{entry['port']} ({name})" if isinstance(name, str) else str(entry["port"]))
        return out


_CERTIFICATE_PURPOSES = {
    "certificate": "listener certificateRef",
    "client-certificate": "client certificate reference",
    "ca-certificate": "CA certificate reference",
    "policy-certificate": "CA certificate reference",
    "policy-object": "object reference",
}


class CertificateRefInvalid(Rule):
    """A certificate, CA or other object reference names a missing object (where the input holds objects of that kind there), an unsupported kind, or a Secret or ConfigMap without the key its reader needs; or a label selector of a policy chooses no object."""

    id = "PL417"
    name = "certificate-ref-invalid"
    severity = Severity.ERROR
    subjects = HOLDER_KINDS | {"Gateway", "ListenerSet", POLICY}
    reads = frozenset({Stage.TOPOLOGY})

    def check(self, project: Project) -> Iterable[Issue]:
        topology = project.topology()
        owners: list[K8sObject] = [*topology.gateways(), *project.index.of_kind(GATEWAY_GROUP, "ListenerSet")]
        owners.extend(p.obj for p in project.resolution.policies() if p.profile.certificate_refs or p.profile.object_refs)
        owners.extend(holding(project))
        complete = project.index.options.complete
        for owner in owners:
            for ref in topology.refs_from(owner):
                what = _CERTIFICATE_PURPOSES.get(ref.purpose)
                if what is None:
                    continue
                # A frontend CA reference no HTTPS listener uses changes no status: said, as info.
                unused = ref.purpose == "ca-certificate" and not topology.frontend_listeners(ref)
                severity = Severity.INFO if unused else None
                if ref.status == ReferenceStatus.NOT_FOUND:
                    effect = _certificate_effect(topology, ref, invalid_kind=False)
                    producers = _producers_considered(project, ref)
                    if complete:
                        why = f"which is not in the input, and nothing in it makes it{producers} (declared complete: --complete)"
                        hint = f"Add the {ref.kind} or an object that makes it, fix the name, or {external_hint(ref.kind, ref.namespace or None, ref.name)}."
                    else:
                        # A repository cannot prove an absence: the Secret may be applied by
                        # another pipeline. A warning, until --complete says nothing else exists.
                        severity = severity or Severity.WARNING
                        why = (
                            f"which is not in the input although the input manages {ref.kind}s in namespace"
                            f" {ref.namespace}, and nothing in it makes it{producers}"
                        )
                        hint = (
                            f"Add the {ref.kind} or an object that makes it, fix the name, or"
                            f" {external_hint(ref.kind, ref.namespace or None, ref.name)}; with --complete (the input is"
                            " the whole cluster) its absence is an error."
                        )
                    message = f"{what} names {ref.label()}, {why}: {effect}"
                    yield self.issue(owner, at_field(owner, ref.path, "name"), message, hint=hint, severity=severity)
                elif ref.status == ReferenceStatus.MISSING_DATA:
                    message = f"{what} names {ref.label()}, which {ref.detail}: {_policy_refused(ref)}"
                    hint = f"Add the data the controller reads to {ref.label()}, or reference an object that holds it."
                    yield self.issue(owner, ref.path, message, hint=hint)
                elif ref.status == ReferenceStatus.INVALID_KIND:
                    unsupported = ref.detail or "a kind its policy kind does not support"
                    message = (
                        f"{what} names a {ref.kind} (group {ref.group or 'core'}), {unsupported}:"
                        f" {_certificate_effect(topology, ref, invalid_kind=True)}"
                    )
                    yield self.issue(owner, join(ref.path, "kind"), message, hint=_KIND_HINTS[ref.purpose], severity=severity)
        for selection in selections(project.index, project.resolution):
            if selection.chosen or (not selection.elsewhere and (selection.made or not (complete or selection.managed))):
                continue  # chosen; or one may be, made in the cluster or kept outside the input
            yield self._chooses_nothing(selection, complete=complete)

    def _chooses_nothing(self, selection: Selection, *, complete: bool) -> Issue:
        """A label selector of a policy (profile `selections`) that matches no object of its kind
        where the controller looks, though the input manages that kind there: a warning, since
        the objects may be applied from elsewhere, until --complete; an error when the input holds
        matching ones only in other namespaces."""
        spec, kind = selection.spec, selection.spec.kind
        namespaces = selection.namespaces
        if namespaces is None:
            scope = "in any namespace"
        elif namespaces:
            scope = f"in namespace {', '.join(namespaces)} (the {spec.home_kind} resource's)"
        else:
            scope = f"in the namespace of the {spec.home_kind} resource (none in the input)"
        owner = selection.owner
        message = (
            f"{owner.kind} {where(owner)} selects {kind}s with labels {selection.selector} {scope}, and the input holds none"
        )
        severity = None if complete else Severity.WARNING
        hint = (
            f"Add the {kind} with those labels {scope}, or fix the selector; with --complete (the input is the whole"
            " cluster) its absence is an error."
        )
        if selection.elsewhere:
            other = sorted({o.namespace or "" for o in selection.elsewhere})
            message += f": those in namespace {', '.join(other)} are not read unless `{spec.all_namespaces}` is true"
            severity, hint = None, f"Move the {kind}s {scope}, or set `{spec.all_namespaces}: true`."
        return self.issue(selection.owner, selection.path, f"{message}: {spec.effect}", hint=hint, severity=severity)


def _producers_considered(project: Project, ref: ObjectRef) -> str:
    """The producers of the reference's kind that were looked for, for the message."""
    considered = project.resolution.producers().considered(ref.group, ref.kind)
    if not considered:
        return ""
    # Who makes the object and from which kinds, grouped: each producer's fields in full made
    # the message outgrow the cap on a message's length (and the consequence after it was cut)
    # once several operators make Secrets; the fields are in docs/semantics.md.
    makers: dict[str, list[str]] = {}
    for producer in considered:
        asks = producer.source.kind if producer.source is not None else f"{producer.fixed_name} in every namespace"
        kinds = makers.setdefault(producer.by, [])
        if asks not in kinds:
            kinds.append(asks)
    groups = [f"{', '.join(kinds)} ({by})" for by, kinds in makers.items()]
    return f" (considered: {'; '.join(groups)})"


# What the controller writes when such a reference is invalid. A Gateway's own references: the
# Gateway API's reasons (apis/v1/gateway_types.go: ListenerReasonInvalidCertificateRef,
# GatewayReasonInvalidClientCertificateRef, ListenerReasonInvalidCACertificateRef and
# ...InvalidCACertificateKind, ListenerReasonNoValidCACertificate); a policy's: it is rejected.
def _certificate_effect(topology: Topology, ref: ObjectRef, *, invalid_kind: bool) -> str:
    purpose = ref.purpose
    if purpose == "certificate":
        return "the listener gets ResolvedRefs=False, InvalidCertificateRef, and has no valid certificate"
    if purpose == "client-certificate":
        return "the Gateway gets ResolvedRefs=False, InvalidClientCertificateRef: no client certificate is presented to backends"
    if purpose == "ca-certificate":
        reason = "InvalidCACertificateKind" if invalid_kind else "InvalidCACertificateRef"
        listeners = topology.frontend_listeners(ref)
        if not listeners:
            return f"{frontend_scope(ref)}, so no listener's status changes (it would get ResolvedRefs=False, {reason})"
        return (
            f"{listeners_get(ref.owner, listeners)} ResolvedRefs=False, {reason}"
            f" (and Accepted=False, NoValidCACertificate where none of {'its' if len(listeners) == 1 else 'their'} CA"
            " references is valid)"
        )
    return _policy_refused(ref)


def _policy_refused(ref: ObjectRef) -> str:
    """What the controller does with a policy whose reference is invalid, with the conditions it
    writes (profile `certificateRefs.refusedStatus`, `objectRefs[].refusedStatus`)."""
    if ref.effect:
        return ref.effect  # a holder's (policylint.profiles.holders): no policy to refuse
    return f"the policy is refused ({ref.refused_status or 'Accepted=False, Invalid'})"


_KIND_HINTS = {
    "certificate": "Reference a Secret of type kubernetes.io/tls.",
    "client-certificate": "Reference a Secret holding tls.crt and tls.key.",
    "ca-certificate": "Reference a ConfigMap with key ca.crt (the core kind).",
    "policy-certificate": "Reference a ConfigMap (the core kind) or a Secret.",
    "policy-object": "Reference a kind the field supports (the policy kind's API reference lists them).",
}


RULES: list[type[Rule]] = [BackendNotFound, BackendPortInvalid, CertificateRefInvalid]
