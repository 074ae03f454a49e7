"""Gateway and GatewayClass rules about their own configuration rather than their listeners or
routes: the parameters they name, and how the Gateway validates client certificates.
(Route attachment is in `attachment.py`, references in `backends.py`, listeners in `listeners.py`.)
"""

from __future__ import annotations

from collections.abc import Iterable

from policylint.findings import Issue, Severity
from policylint.input.positions import join
from policylint.k8s.external import external_hint
from policylint.k8s.fieldtypes import GATEWAY_GROUP
from policylint.k8s.names import ns_name
from policylint.k8s.objects import K8sObject
from policylint.profiles.implementations import ParametersSpec
from policylint.project import Project
from policylint.rules.base import Rule
from policylint.semantics.parameters import OWNER_KINDS
from policylint.semantics.parameters import PURPOSE as PARAMETERS
from policylint.semantics.topology import ObjectRef, Topology
from policylint.stages import Stage
from policylint.vocabulary import ReferenceStatus


def _effect(owner: K8sObject, spec: ParametersSpec | None = None) -> str:
    # What the Gateway API requires of the controller (gatewayclass_types.go, gateway_types.go:
    # "SHOULD be rejected with the `Accepted` status condition set to `False` and an
    # `InvalidParameters` reason"), unless the implementation's profile says what it does instead.
    if owner.kind == "Gateway" and spec is not None and spec.refusal:
        return spec.refusal
    if owner.kind == "GatewayClass":
        return "the GatewayClass gets Accepted=False, InvalidParameters, and its controller programs none of its Gateways"
    return "the Gateway gets Accepted=False, InvalidParameters, and is not programmed"


def _label(owner: K8sObject) -> str:
    return f"{owner.kind} {ns_name(owner.namespace, owner.name)}"


class ParametersRefInvalid(Rule):
    """A GatewayClass `parametersRef` or Gateway `infrastructure.parametersRef` names a kind its controller does not take, a group nothing serves, or an object not in the input where the input manages that kind."""

    id = "PL422"
    name = "parameters-ref-invalid"
    severity = Severity.ERROR
    subjects = frozenset(OWNER_KINDS)
    reads = frozenset({Stage.TOPOLOGY})

    def check(self, project: Project) -> Iterable[Issue]:
        topology = project.topology()
        complete = project.index.options.complete
        for kind in OWNER_KINDS:
            for owner in project.index.of_kind(GATEWAY_GROUP, kind):
                for ref in topology.refs_from(owner):
                    if ref.purpose != PARAMETERS:
                        continue
                    if ref.status == ReferenceStatus.INVALID_KIND:
                        implementation = topology.parameters_implementation(owner)
                        spec = implementation.parameters if implementation is not None else None
                        group = ref.group or "core"
                        if implementation is not None and spec is not None and ref.detail.startswith("a kind "):
                            # A kind of a served group the implementation does not take: the kind is at fault.
                            hint = f"Name a {spec.describe()}, the kind {implementation.name} reads its parameters from."
                            path = join(ref.path, "kind")
                        else:
                            hint = (
                                "Name the parameters kind your implementation documents (Envoy Gateway: gateway.envoyproxy.io"
                                " EnvoyProxy), or add the CRD that serves this group to the input or with --crd."
                            )
                            path = join(ref.path, "group")
                        severity = None
                        effect = _effect(owner, spec)
                        if owner.kind == "GatewayClass" and spec is not None and spec.class_ignored:
                            # The class stays accepted: its Gateways run, without these parameters.
                            severity = Severity.WARNING
                            effect = (
                                "the GatewayClass stays Accepted=True with reason InvalidParameters, and its controller"
                                " ignores the reference: its Gateways run without these parameters"
                            )
                        message = f"{_label(owner)} names its parameters in {ref.kind} {ref.name!r} of group {group}, {ref.detail}: {effect}"
                        yield self.issue(owner, path, message, hint=hint, severity=severity)
                    elif ref.status == ReferenceStatus.NOT_FOUND:
                        yield self._not_found(topology, owner, ref, complete=complete)
                    elif ref.status == ReferenceStatus.OPAQUE:
                        yield self._unprovable(owner, ref)

    def _unprovable(self, owner: K8sObject, ref: ObjectRef) -> Issue:
        # The CRD of an implementation's parameters kind is installed in the cluster with the
        # controller, not kept in the repository; whether the controller takes the kind is the
        # controller's to say (semantics/parameters.py, `unserved`). As for a backend kind not
        # modelled (PL411): a warning saying how to make it provable.
        group = ref.group or "core"
        message = (
            f"{_label(owner)} names its parameters in {ref.kind} {ref.name!r} of group {group}, {ref.detail}: if the"
            f" cluster serves no such kind, or its controller does not take it, {_effect(owner)}"
        )
        hint = (
            f"Add the CRD that serves group {group} to the input or with --crd, so that the reference can be checked;"
            " with --complete (the input is the whole cluster, CRDs included) a group nothing serves is an error."
        )
        return self.issue(owner, join(ref.path, "group"), message, hint=hint, severity=Severity.WARNING)

    def _not_found(self, topology: Topology, owner: K8sObject, ref: ObjectRef, *, complete: bool) -> Issue:
        where = ref.namespace or None
        if complete:
            why = "which is not in the input (declared complete: --complete)"
            hint = f"Add the {ref.kind}, fix the name, or {external_hint(ref.kind, where, ref.name)}."
            severity = None
        else:
            # As for certificates (PL417): a repository cannot prove an absence, so a warning
            # until --complete says nothing else exists.
            scope = f" in namespace {ref.namespace}" if ref.namespace else ""
            why = f"which is not in the input although the input holds other {ref.kind} objects{scope}"
            hint = (
                f"Add the {ref.kind}, fix the name, or {external_hint(ref.kind, where, ref.name)}; with --complete"
                " (the input is the whole cluster) its absence is an error."
            )
            severity = Severity.WARNING
        implementation = topology.parameters_implementation(owner)
        spec = implementation.parameters if implementation is not None else None
        message = f"{_label(owner)} names its parameters in {ref.label()}, {why}: {_effect(owner, spec)}"
        return self.issue(owner, join(ref.path, "name"), message, hint=hint, severity=severity)


_INSECURE = "AllowInsecureFallback"


class FrontendValidationInsecure(Rule):
    """A Gateway's client certificate validation (`spec.tls.frontend`) has mode `AllowInsecureFallback`: clients without a valid certificate are admitted."""

    id = "PL423"
    name = "frontend-validation-insecure"
    severity = Severity.WARNING
    subjects = frozenset({"Gateway"})

    def check(self, project: Project) -> Iterable[Issue]:
        for gateway in project.index.of_kind(GATEWAY_GROUP, "Gateway"):
            tls = gateway.spec.get("tls")
            frontend = tls.get("frontend") if isinstance(tls, dict) else None
            if not isinstance(frontend, dict):
                continue
            # (path of the validation block, the block, what it covers): the default, then each
            # per-port override (GatewayTLSConfig; a perPort entry replaces the default on its port).
            places: list[tuple[str, object, str]] = []
            default = frontend.get("default")
            if isinstance(default, dict):
                places.append(("spec.tls.frontend.default.validation", default.get("validation"), "its HTTPS listeners"))
            per_port = frontend.get("perPort")
            for i, entry in enumerate(per_port if isinstance(per_port, list) else []):
                tls_entry = entry.get("tls") if isinstance(entry, dict) else None
                if isinstance(tls_entry, dict):
                    path = join("spec.tls.frontend.perPort", i, "tls", "validation")
                    places.append((path, tls_entry.get("validation"), f"its HTTPS listeners on port {entry.get('port')}"))
            for path, validation, covered in places:
                if not isinstance(validation, dict) or validation.get("mode") != _INSECURE:
                    continue
                message = (
                    f"Gateway {ns_name(gateway.namespace, gateway.name)} validates client certificates on {covered} with mode"
                    f" {_INSECURE}: a client that presents no certificate, or one that fails validation, is admitted"
                    " all the same, and the Gateway gets InsecureFrontendValidationMode=True, ConfigurationChanged"
                    " (Gateway API FrontendValidationModeType)"
                )
                hint = (
                    "Remove the mode (AllowValidOnly is the default) once clients present valid certificates; meanwhile"
                    " authorize clients in the backends, and suppress this finding with the reason."
                )
                yield self.issue(gateway, join(path, "mode"), message, hint=hint)


RULES: list[type[Rule]] = [ParametersRefInvalid, FrontendValidationInsecure]
