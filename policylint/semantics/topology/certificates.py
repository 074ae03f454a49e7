"""Gateway and ListenerSet › Secrets and CA ConfigMaps, and a policy's certificate and object
references (docs/semantics.md#certificates): each judged by kind, by ReferenceGrant and by the
entries its reader needs."""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from policylint.input.positions import join
from policylint.k8s.objects import K8sObject
from policylint.profiles.registry import DataSpec, ObjectRefSpec, PolicyProfile, TargetKind
from policylint.semantics.topology.listeners import Listeners
from policylint.semantics.topology.model import (
    CORE,
    Listener,
    ObjectRef,
    _dict,
    _list,
    _ref_malformed,
    expand_pattern,
)
from policylint.semantics.topology.references import Resolving
from policylint.vocabulary import ReferenceStatus

if TYPE_CHECKING:
    from policylint.k8s.admissions import Admissions
    from policylint.semantics.resolution import Resolution


# The core kinds a Gateway's certificate references may name (Gateway API, apis/v1/gateway_types.go):
# listener certificateRefs and the backend client certificate "can reference standard Kubernetes
# resources, i.e. Secret, or implementation-specific custom resources"; a frontend CA reference is
# a ConfigMap (Core support, key ca.crt) or, as implementations document, a Secret.
_CORE_CERTIFICATE_KINDS: Mapping[str, tuple[str, ...]] = {
    "certificate": ("Secret",),
    "client-certificate": ("Secret",),
    "ca-certificate": ("ConfigMap", "Secret"),
}


# The Gateway's certificate references that may name "implementation-specific custom resources"
# (above): judged by group where they name one outside the core group.
_CUSTOM_CERTIFICATE_PURPOSES = frozenset({"certificate", "client-certificate"})


def _constant(value: str, _kind: str) -> str:
    return value


# How a Gateway's certificate and CA references are resolved, by the kind one names by default:
# made once, since `Resolving` is compared by identity (`References._resolve_ref`).
_CERTIFICATE = {kind: Resolving(kind, check_existence=False) for kind in ("Secret", "ConfigMap")}


# The kinds whose entries a DataSpec describes (a ClusterTrustBundle holds its bundle in spec).
_DATA_KINDS = frozenset({(CORE, "Secret"), (CORE, "ConfigMap")})


def _checked(ref: ObjectRef, kinds: Sequence[TargetKind] | None, data: DataSpec | None, refused: str) -> ObjectRef:
    """A policy's certificate or object reference as its profile judges it: InvalidKind for a
    kind not in `kinds` (None: any kind), MissingData for a Secret or ConfigMap without what
    `data` says its controller reads; `refused`: the conditions the controller then writes."""
    if refused:
        ref = dataclasses.replace(ref, refused_status=refused)
    if kinds is not None and TargetKind(ref.group, ref.kind) not in kinds:
        return dataclasses.replace(ref, status=ReferenceStatus.INVALID_KIND, target=None)
    if (
        data is not None
        and ref.status == ReferenceStatus.RESOLVED
        and ref.target is not None
        and (ref.group, ref.kind) in _DATA_KINDS
    ):
        lacking = _lacks_data(ref.target, data)
        if lacking:
            return dataclasses.replace(ref, status=ReferenceStatus.MISSING_DATA, detail=lacking)
    return ref


def _lacks_data(obj: K8sObject, spec: DataSpec) -> str:
    """What a Secret or ConfigMap lacks of what its reader needs (`spec`), or "" when it has it.
    A Secret's `stringData` is written into `data` by the API server, so both count."""
    entries: set[str] = set()
    for field_name in ("data", "stringData", "binaryData"):
        value = obj.data.get(field_name)
        if isinstance(value, dict):
            entries.update(str(k) for k in value)
    if any(key in entries for key in spec.keys):
        return ""
    if spec.otherwise == "any-entry" and entries:
        return ""
    if spec.otherwise == "only-entry" and len(entries) == 1:
        return ""
    keys = f"no key {spec.keys[0]}" if len(spec.keys) == 1 else f"none of the keys {', '.join(spec.keys)}"
    if spec.otherwise == "only-entry" and entries:
        return f"has {keys} and more than one entry"
    return f"has {keys}" + (" and no entry at all" if spec.otherwise != "none" and not entries else "")


class Certificates(Listeners):
    """The certificate and CA references of Gateways, ListenerSets and policies."""

    def __init__(self, resolution: Resolution, admissions: Admissions) -> None:
        super().__init__(resolution, admissions)
        # Gateway -> its HTTPS listeners by port, those on an unknown port, and those the
        # frontend `default` applies to (`frontend_listeners`).
        self._frontend: dict[K8sObject, tuple[dict[int, list[Listener]], list[Listener], list[Listener]]] = {}

    def _kept_certificate_refs(self, owner: K8sObject) -> list[ObjectRef]:
        """`_certificate_refs`, reused from the last build while every read it made answers the
        same, else resolved with its reads recorded."""
        if self._kept is None:
            return self._certificate_refs(owner)
        return self._recorded(self._kept.certificates, owner, self._certificate_refs, self._refs_hold)

    def _certificate_refs(self, owner: K8sObject) -> list[ObjectRef]:
        out: list[ObjectRef] = []
        malformed = self.index.malformed(owner)

        def add(path: str, raw: Any, purpose: str, default_kind: str, tls_port: int | None = None) -> None:
            if _ref_malformed(malformed, path):
                return  # rejected with its owner (PL010)
            if isinstance(raw, dict):
                ref = self._resolve_ref(owner, path, raw, purpose, _CERTIFICATE[default_kind])
                if ref is None:
                    return
                if tls_port is not None:
                    ref = dataclasses.replace(ref, tls_port=tls_port)
                core = _CORE_CERTIFICATE_KINDS[purpose]
                if ref.group == CORE and ref.kind not in core:
                    # A core kind holds a certificate in the kinds the field names and no other: the
                    # rest of the core group is no "implementation-specific custom resource".
                    detail = f"a core kind the field does not take (it takes {' or '.join(core)})"
                    ref = dataclasses.replace(ref, status=ReferenceStatus.INVALID_KIND, target=None, detail=detail)
                elif purpose in _CUSTOM_CERTIFICATE_PURPOSES and ref.group != CORE and not self._knows_group(ref.group):
                    # A group no CRD, built-in kind, profile or object in the input belongs to: no
                    # controller resolves it, with or without --complete (conformance test
                    # GatewayInvalidTLSConfiguration, `gateway-certificate-unsupported-group`:
                    # InvalidCertificateRef; GatewayInvalidTLSBackendConfiguration for the client
                    # certificate: InvalidClientCertificateRef).
                    detail = "a group no CRD, built-in kind, profile or object in the input belongs to"
                    ref = dataclasses.replace(ref, status=ReferenceStatus.INVALID_KIND, target=None, detail=detail)
                out.append(ref)

        for i, listener in enumerate(_list(owner.spec.get("listeners"))):
            for j, cert in enumerate(_list(_dict(_dict(listener).get("tls")).get("certificateRefs"))):
                add(join("spec.listeners", i, "tls", "certificateRefs", j), cert, "certificate", "Secret")
        tls = _dict(owner.spec.get("tls"))
        add(
            "spec.tls.backend.clientCertificateRef",
            _dict(tls.get("backend")).get("clientCertificateRef"),
            "client-certificate",
            "Secret",
        )
        frontend = _dict(tls.get("frontend"))
        for j, ca in enumerate(_list(_dict(_dict(frontend.get("default")).get("validation")).get("caCertificateRefs"))):
            add(join("spec.tls.frontend.default.validation.caCertificateRefs", j), ca, "ca-certificate", "ConfigMap")
        for p, per_port in enumerate(_list(frontend.get("perPort"))):
            refs = _list(_dict(_dict(_dict(per_port).get("tls")).get("validation")).get("caCertificateRefs"))
            port = _dict(per_port).get("port")
            for j, ca in enumerate(refs):
                add(
                    join("spec.tls.frontend.perPort", p, "tls", "validation", "caCertificateRefs", j),
                    ca,
                    "ca-certificate",
                    "ConfigMap",
                    # A port of the wrong type rejects the Gateway (PL010, PL703): the entry then
                    # counts as the default, which applies to more listeners, not fewer.
                    port if type(port) is int else None,
                )
        return out

    def frontend_listeners(self, ref: ObjectRef) -> Sequence[Listener]:
        """The listeners a Gateway's frontend CA reference applies to (Gateway API
        `FrontendTLSConfig`): the listeners handling HTTPS traffic on the port of its `perPort`
        entry, or, for the `default` configuration, on a port no `perPort` entry names; the
        Gateway's own and those of its ListenerSets. A listener whose protocol or port is unknown
        (PL010) counts. Empty: the reference changes no listener's status (an HTTP-only port,
        every HTTPS port configured per port). Worked out once per Gateway."""
        gateway = ref.owner
        found = self._frontend.get(gateway)
        if found is None:
            per_port = _list(_dict(_dict(gateway.spec.get("tls")).get("frontend")).get("perPort"))
            named = {port for entry in per_port if type(port := _dict(entry).get("port")) is int}
            by_port: dict[int, list[Listener]] = {}
            unknown: list[Listener] = []  # on every port
            default: list[Listener] = []
            for owner in (gateway, *self.listener_sets_of(gateway)):
                for listener in self.listeners(owner):
                    if listener.protocol != "HTTPS" and not listener.malformed:
                        continue
                    port = listener.port
                    if port is None or listener.unknown_port:
                        unknown.append(listener)
                        default.append(listener)
                        continue
                    by_port.setdefault(port, []).append(listener)
                    if port not in named:
                        default.append(listener)
            found = self._frontend[gateway] = (by_port, unknown, default)
        by_port, unknown, default = found
        if ref.tls_port is None:
            return default
        return [*by_port.get(ref.tls_port, ()), *unknown] if unknown else by_port.get(ref.tls_port, [])

    def _policy_certificates(self, obj: K8sObject, profile: PolicyProfile) -> list[ObjectRef]:
        out: list[ObjectRef] = []
        by_kind = (
            functools.partial(self._group_for_kind, profile.certificate_kinds) if profile.certificate_match_by_kind else None
        )
        for pattern in profile.certificate_refs:
            for path, raw in expand_pattern(obj.data, pattern):
                if not isinstance(raw, dict):
                    continue
                how = Resolving("ConfigMap", check_existence=False, group_for_kind=by_kind)
                ref = self._resolve_ref(obj, path, raw, "policy-certificate", how)
                if ref is not None:
                    kinds = profile.certificate_kinds
                    out.append(_checked(ref, kinds, profile.certificate_data, profile.certificate_refused_status))
        out.extend(self._object_refs(obj, profile.object_refs))
        return out

    def _object_refs(self, obj: K8sObject, specs: Sequence[ObjectRefSpec]) -> list[ObjectRef]:
        """The references an object's spec holds that its profile declares (`objectRefs`, a
        policy's or a holder's), resolved as certificate references are."""
        out: list[ObjectRef] = []
        for spec in specs:
            for pattern in spec.paths:
                for path, raw in expand_pattern(obj.data, pattern):
                    if not isinstance(raw, dict):
                        continue
                    group_for_kind: Callable[[str], str | None] | None = None
                    if spec.match_by_kind:
                        group_for_kind = functools.partial(self._group_for_kind, spec.kinds)
                    elif spec.default_group is not None and "group" not in raw:
                        group_for_kind = functools.partial(_constant, spec.default_group)
                    how = Resolving(spec.default_kind, check_existence=False, group_for_kind=group_for_kind)
                    ref = self._resolve_ref(obj, path, raw, "policy-object", how)
                    if ref is not None:
                        if spec.not_permitted_status:
                            ref = dataclasses.replace(ref, not_permitted_status=spec.not_permitted_status)
                        data = spec.data
                        if spec.key_field is not None and isinstance(key := raw.get(spec.key_field), str) and key:
                            data = DataSpec((key,))  # the entry the reference names, no fallback
                        out.append(_checked(ref, spec.kinds or None, data, spec.refused_status))
        return out
