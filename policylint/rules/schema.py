"""PL7xx: what the CRDs themselves say about the fields of an object.

Deprecated fields come from the CRDs' own descriptions (policylint.k8s.deprecations), the fields
an object may have from their schemas (policylint.k8s.schemas), both generated from the vendored
upstream CRDs. No rule here branches on a kind: the data names them.

Which schema decides (policylint.k8s.admission, `Catalogue`): a CRD in the input or given with `--crd`, which is what the
cluster serves; else the bundled schemas of the Gateway API channel and release the run names
(`--channel`, default standard; `--gateway-api-version`), with the vendor CRDs'. A version that
channel does not serve is PL705's, a field only its experimental channel has is PL706's.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import TYPE_CHECKING, Any

from policylint.findings import Issue, Related, Severity
from policylint.input.positions import format_path, join
from policylint.k8s.admission import (
    DUPLICATE,
    UNRENDERED,
    Catalogue,
    PrunedField,
    admits,
)
from policylint.k8s.admissions import Admissions
from policylint.k8s.cluster import HOW_TO_DECLARE, how_to_declare_vendor
from policylint.k8s.deprecations import deprecations
from policylint.k8s.dissent import dissent as dissent_of
from policylint.k8s.objects import K8sObject
from policylint.project import Project, object_local
from policylint.rules.base import ANY, POLICY, ObjectRule, PerPolicy, Rule
from policylint.rules.filters import forbidden_header_values
from policylint.rules.hints import close_name
from policylint.rules.keyed import ByApiVersion
from policylint.rules.releases import accepted_by, disputed, dissent_origin, judged, unserved
from policylint.semantics.topology import expand_pattern
from policylint.stages import Stage

if TYPE_CHECKING:
    from policylint.profiles.policy import Policy


class DeprecatedField(PerPolicy):
    """A field its CRD marks deprecated is set: say what replaces it, as the controller's own warning does."""

    id = "PL701"
    name = "deprecated-field"
    severity = Severity.WARNING
    subjects = frozenset({POLICY})

    def check_unit(self, project: Project, policy: Policy) -> Iterable[Issue]:
        table = deprecations()
        obj = policy.obj
        fields = table.get((obj.group, obj.kind, obj.version))
        if not fields:
            return
        for field in fields:
            if not _reaches(obj.data, _named_prefix(field.path)):
                continue  # nearly every policy: none of its kind's deprecated fields is set
            for path, _ in expand_pattern(obj.data, field.path):
                instead = f": use {field.replacement} instead" if field.replacement else ""
                message = (
                    f"{path} is deprecated in {obj.kind} {obj.version} (its CRD: {field.text!r}){instead};"
                    " the controller may stop reading it in a later release"
                )
                hint = f"Move the value to {field.replacement}." if field.replacement else None
                yield self.issue(obj, path, message, hint=hint)


@functools.cache
def _named_prefix(pattern: str) -> tuple[str, ...]:
    """The keys a profile path pattern (`expand_pattern`) names before its first wildcard
    (`spec.jwt.providers[*].remoteJWKS` -> spec, jwt, providers), split once per pattern."""
    keys: list[str] = []
    for segment in pattern.split("."):
        if segment == "*":
            break
        if segment.endswith("[*]"):
            keys.append(segment[:-3])
            break
        keys.append(segment)
    return tuple(keys)


def _reaches(data: Any, keys: tuple[str, ...]) -> bool:
    """Whether `data` has a value at `keys`, each a key of a mapping: where it has none,
    `expand_pattern` finds no value of a pattern that starts with them, and is not asked."""
    node = data
    for key in keys:
        if not isinstance(node, dict) or key not in node:
            return False
        node = node[key]
    return True


# Kinds whose CRDs are vendored besides the policies' (tests/data/crds/SOURCES.md).
GATEWAY_API_KINDS = frozenset(
    {
        "GatewayClass",
        "Gateway",
        "ListenerSet",
        "HTTPRoute",
        "GRPCRoute",
        "TLSRoute",
        "TCPRoute",
        "UDPRoute",
        "ReferenceGrant",
        "XBackend",
        "XMesh",
    }
)


class UnknownField(ObjectRule):
    """A field its CRD does not define: the API server prunes it, and `kubectl apply` rejects the object."""

    id = "PL702"
    name = "unknown-field"
    severity = Severity.ERROR
    reads = frozenset({Stage.ADMISSION})
    subjects = GATEWAY_API_KINDS | {POLICY}

    def check_object(self, project: Project, obj: K8sObject) -> Iterable[Issue]:
        # A CRD in the input (or given with --crd) is the one the cluster serves: its schema
        # decides, and an unknown field is an error. Otherwise the bundled schemas of the chosen
        # channel stand in, and the finding is a warning naming the release they come from: a
        # newer release may have added the field (`Catalogue.schema`). A field the standard
        # channel lacks and the experimental one has is PL706's.
        source, found = _unknown_fields(project, obj)
        for parts, path, key_name, known, experimental in found:
            if experimental:
                continue  # PL706's
            at = join(path, key_name) if path else key_name
            guess = next((k for k in known if k.lower() == key_name.lower()), None) or close_name(key_name, known)
            hint = f"Did you mean `{guess}`?" if guess else "Remove it, or check its spelling and place against the CRD."
            where = f"in {path}" if path else "at the top level"
            origin = _origin(project, obj, source)
            message = (
                f"{key_name!r} is not a field {where} of {obj.kind} {obj.version} ({origin}): the API server"
                " prunes it, and `kubectl apply` rejects the object (strict field validation is its default)"
            )
            severity, said = judged(project, obj, source, _defining(parts, key_name))
            yield self.issue(obj, at, message + said, hint=hint, severity=severity)


def _origin(project: Project, obj: K8sObject, source: str | None) -> str:
    """Where the schema of a finding comes from: a bundled release, or the object's CRD."""
    if source:
        return f"the {source} CRD"
    given = project.admissions().catalogue.given_served.get((obj.group, obj.kind))
    return "its CRD given with --crd" if given is not None and given[1] is None else "its CRD in the input"


_Unknown = PrunedField


def _unknown_fields(project: Project, obj: K8sObject) -> tuple[str | None, list[_Unknown]]:
    """The source of the object's schema and the fields it does not define (`Catalogue.schema`),
    leaving out those inside a policy's target references (PL205 names them, one finding per
    cause) and under a field of the wrong type (PL010's). PL702 and PL706 each ask for it: the
    walk that finds them is the verdict's, computed once (`Admission.pruned`), and what is left
    here is a filter over the few fields found, cheaper than a table to keep it in."""
    verdict = project.admissions().verdict(obj)
    if verdict is None or not verdict.pruned:
        return None, []
    source = verdict.source
    malformed = project.index.malformed(obj)
    skipped = project.derived(_target_fields).get(obj, ())
    wider = project.admissions().catalogue.experimental_schema(obj, source)
    out: list[_Unknown] = []
    for parts, key_name, known in verdict.pruned:
        path = format_path(parts)
        if _under(path, skipped) or malformed.tainted(*parts):
            continue
        out.append((parts, path, key_name, known, wider is not None and _defines(wider, parts, key_name)))
    return source, out


def _defines(schema: Mapping[str, Any], parts: tuple[str | int, ...], key: str) -> bool:
    """Whether `schema` has a property `key` in the object at `parts` (from the object's root)."""
    node: Any = schema
    for part in parts:
        if not isinstance(node, dict):
            return False
        if isinstance(part, int):
            node = node.get("items")
        else:
            properties = node.get("properties") or {}
            node = properties.get(part, node.get("additionalProperties"))
    properties = node.get("properties") if isinstance(node, dict) else None
    return isinstance(properties, dict) and key in properties


class ExperimentalField(ObjectRule):
    """A field only the experimental channel's CRD defines, linted against the standard channel: the API server prunes it, and `kubectl apply` rejects the object."""

    id = "PL706"
    name = "experimental-field"
    severity = Severity.ERROR
    reads = frozenset({Stage.ADMISSION})
    subjects = GATEWAY_API_KINDS | {POLICY}

    def check_object(self, project: Project, obj: K8sObject) -> Iterable[Issue]:
        source, found = _unknown_fields(project, obj)
        for parts, path, key_name, _, experimental in found:
            if not experimental:
                continue  # PL702's
            at = join(path, key_name) if path else key_name
            where = f"in {path}" if path else "at the top level"
            message = (
                f"{key_name!r} {where} of {obj.kind} {obj.version} is an experimental field: Gateway API"
                f" {project.admissions().catalogue.release}'s standard channel CRD does not define it, only the experimental"
                " channel's does, so the API server prunes it and `kubectl apply` rejects the object (strict field"
                " validation is its default)"
            )
            hint = (
                "Remove it, or install the experimental channel's CRDs and declare `channel: experimental`"
                " (--channel experimental)."
            )
            severity, said = judged(project, obj, source, _defining(parts, key_name))
            yield self.issue(obj, at, message + said, hint=hint, severity=severity)


class SchemaViolation(ObjectRule):
    """A value its CRD's schema rejects: wrong type, not one of the allowed values, out of bounds, or a required field missing."""

    id = "PL703"
    name = "schema-violation"
    severity = Severity.ERROR
    reads = frozenset({Stage.ADMISSION})
    subjects = GATEWAY_API_KINDS | {POLICY}

    def check_object(self, project: Project, obj: K8sObject) -> Iterable[Issue]:
        # The verdict is the admission stage's (policylint.k8s.admissions); this rule says which
        # of its schema rejections are its own to report.
        admissions = project.admissions()
        verdict = admissions.verdict(obj)
        # Admitted by the first plausible schema: another the cluster may run may refuse it.
        dissent = dissent_of(admissions, obj) if verdict is not None and not verdict.rejected else None
        if dissent is not None:
            verdict = dissent.verdict
        if verdict is None or not verdict.schema:
            return
        source = verdict.source
        malformed = project.index.malformed(obj)
        # Target references: the PL1xx and PL2xx rules check them, field by field.
        skipped = project.derived(_target_fields).get(obj, ())
        # Lists whose own CEL rules refuse them (Gateway API's "Listener name must be
        # unique"): a duplicate item in them is that rule's finding (PL704), in the CRD's words.
        refused_lists = {r.cel.node_path for r in verdict.cel if r.cel is not None}
        # Header values HTTP forbids: PL426 reports them on every cluster, this pattern or not.
        skipped = (*skipped, *forbidden_header_values(obj))
        for rejection in verdict.schema:
            parts, problem, path = rejection.parts, rejection.message, rejection.path
            if _under(path, skipped) or malformed.tainted(*parts):
                continue  # theirs, or PL010's finding already
            if rejection.reason == DUPLICATE and format_path(parts[:-1]) in refused_lists:
                continue
            message = f"{path or 'the object'} {problem} ({dissent_origin(dissent, verdict)}): {_REJECTS[dissent is None]}"
            if problem.startswith(UNRENDERED):
                # Neither the channel nor a newer release changes that: the value is not rendered.
                yield self.issue(
                    obj, path, message + " as written", severity=None if source is None else Severity.WARNING, hint=_RENDER
                )
                continue
            severity: Severity | None
            if dissent is not None:
                severity, said = disputed(project, obj, dissent)
            else:
                severity, said = judged(project, obj, source, _admitting(admissions, obj), "the object")
            yield self.issue(obj, path, message + said, severity=severity)


# Who rejects the object: the API server, or, for a schema other than the first plausible one
# (policylint.k8s.dissent), the API server of a cluster that runs it.
_REJECTS = {True: "the API server rejects the object", False: "a cluster that runs it rejects the object"}

_RENDER = (
    "Substitute the placeholder first (envsubst, kustomize replacements, your deployment tool's variables; helm template"
    " for a chart) and lint the output, e.g. `envsubst < app.yaml | policylint - --stdin-filename app.yaml`."
)


def _defining(parts: tuple[str | int, ...], key: str) -> Callable[[Mapping[str, Any]], bool]:
    """Whether a schema defines the field `key` in the object at `parts` (PL702, PL706)."""
    return lambda schema: _defines(schema, parts, key)


def _admitting(admissions: Admissions, obj: K8sObject) -> Callable[[Mapping[str, Any]], bool]:
    """Whether a schema admits the object whole (PL703, PL704: the API server refuses the object)."""
    return lambda schema: admits(admissions, obj, schema)


# Object-local: a policy's profile is its kind's (CRDs and profiles, the run's) or guessed from its
# own shape, and policylint.incremental.rulecache keys an object's results by its target fields.
@object_local
def _target_fields(project: Project) -> dict[K8sObject, tuple[str, ...]]:
    """Policy object -> the paths of its target fields (`spec.targetRefs`, ...)."""
    return {p.obj: tuple(f"spec.{field}" for field in p.profile.targets.fields) for p in project.resolution.policies()}


def _under(path: str, prefixes: Iterable[str]) -> bool:
    return any(path == p or path.startswith((p + ".", p + "[")) for p in prefixes)


class ApiVersionNotServed(ObjectRule):
    """An object's apiVersion is one its CRD does not serve (the chosen Gateway API channel and release, or its CRD in the input): `kubectl apply` fails with "no matches for kind"."""

    id = "PL705"
    name = "api-version-not-served"
    severity = Severity.ERROR
    reads = frozenset({Stage.ADMISSION})
    subjects = frozenset({ANY})

    def check_object(self, project: Project, obj: K8sObject) -> Iterable[Issue]:
        return project.derived(ByApiVersion).issues(self.id, obj, lambda o: self._served(project, o))

    def _served(self, project: Project, obj: K8sObject) -> Iterator[Issue]:
        catalogue = project.admissions().catalogue
        served, groups = project.derived(_bundled)
        group, kind, version = obj.group, obj.kind, obj.version
        given = catalogue.given_served.get((group, kind))
        if given is not None:
            versions, crd = given
            if version in versions:
                return
            where = "its CRD in the input" if crd is not None else "its CRD given with --crd"
            message = (
                f"{kind} {obj.api_version} is not served by {where}, which serves {_versions(versions)}:"
                ' `kubectl apply` fails with "no matches for kind"'
            )
            related = [Related("its CRD's versions", object=crd, path="spec.versions")] if crd is not None else []
            yield self.issue(obj, "apiVersion", message, hint=_use(group, versions), related=related)
        elif group in groups:
            yield from self._bundled(obj, catalogue, served)
        else:
            project_of = catalogue.project((group, kind, version))
            if project_of is not None:
                yield from _vendor_unserved(self, obj, catalogue, project_of)

    def _bundled(
        self, obj: K8sObject, catalogue: Catalogue, served: Mapping[tuple[str, str], Mapping[str, tuple[str, ...]]]
    ) -> Iterator[Issue]:
        group, kind, version = obj.group, obj.kind, obj.version
        channel, release = catalogue.channel, catalogue.release
        other = "experimental" if channel == "standard" else "standard"
        by_channel = served.get((group, kind))
        fails = '`kubectl apply` fails with "no matches for kind"'
        if by_channel is not None and version in by_channel[channel]:
            return
        if not catalogue.cluster.decided:
            # The cluster may run another release or channel: say which serve the version.
            serving = [(r, c) for r, c, found in catalogue.plausible((group, kind, version)) if found is not None]
            if serving:
                message = (
                    f"{kind} {obj.api_version} is served only by {accepted_by(serving)}: {fails} on a cluster that"
                    f" runs another; if the cluster runs one of them, {HOW_TO_DECLARE}"
                )
                yield self.issue(obj, "apiVersion", message, severity=Severity.WARNING)
                return
        said = unserved(catalogue.cluster)
        if by_channel is None:
            known = sorted(k for g, k in served if g == group)
            guess = close_name(kind, known) or next((k for k in known if k.lower() == kind.lower()), None)
            message = (
                f"Gateway API {release} has no kind {kind!r} in {group} (in either channel): {fails}{said}; if the"
                " cluster runs a newer release that adds it, lint with its CRDs (--crd)"
            )
            yield self.issue(obj, "kind", message, hint=f"Did you mean `{guess}`?" if guess else None)
            return
        mine, theirs = by_channel[channel], by_channel[other]
        if version in mine:
            return
        if not mine:
            message = f"{kind} is not a kind of Gateway API {release}'s {channel} channel, which has no CRD for it: {fails}{said}"
            if version in theirs:
                message += f"; the {other} channel's CRD serves {obj.api_version}"
                hint = f"Lint with `--channel {other}` if the cluster runs the {other} channel's CRDs."
            else:
                message += f"; the {other} channel's CRD serves {_versions(theirs)}"
                hint = f"{_use(group, theirs)[:-1]}, and lint with `--channel {other}` if the cluster runs its CRDs."
            yield self.issue(obj, "kind", message, hint=hint)
            return
        message = (
            f"{kind} {obj.api_version} is not served by Gateway API {release}'s {channel} channel CRD, which serves"
            f" {_versions(mine)}: {fails}{said}"
        )
        hint = _use(group, mine)
        if version in theirs:
            message += f"; the {other} channel's CRD serves it"
            hint = f"{hint[:-1]}, or lint with `--channel {other}` if the cluster runs the {other} channel's CRDs."
        yield self.issue(obj, "apiVersion", message, hint=hint)


@object_local  # the run's release
def _bundled(project: Project) -> tuple[Mapping[tuple[str, str], Mapping[str, tuple[str, ...]]], frozenset[str]]:
    """The versions each Gateway API kind of the run's release serves, by channel, and its groups
    (PL705, PL707): looked up once per project, not once per object."""
    from policylint.k8s.schemas import gateway_api_groups, gateway_api_served  # the bundle: read only when needed

    release = project.admissions().catalogue.release
    return gateway_api_served(release), gateway_api_groups(release)


def _vendor_unserved(rule: Rule, obj: K8sObject, catalogue: Catalogue, project: str) -> Iterator[Issue]:
    """PL705 for a vendor's kind: its apiVersion against the versions the vendor's CRD serves in
    the releases the cluster may run (the declared or inferred one, else every bundled one;
    docs/semantics.md#the-cluster-model). An error when none of them serves it, else a warning
    naming those that do and how to declare the one the cluster runs."""
    from policylint.k8s.schemas import vendor_releases, vendor_served

    group, kind, version = obj.group, obj.kind, obj.version
    served = vendor_served().get((group, kind), {})
    known = catalogue.cluster.vendor_release(project)
    releases = (known.value,) if known.value is not None else vendor_releases()[project]
    serving = [r for r in releases if version in served.get(r, ())]
    if len(serving) == len(releases):
        return
    fails = '`kubectl apply` fails with "no matches for kind"'
    if serving:
        them = "it" if len(serving) == 1 else "one of them"
        message = (
            f"{kind} {obj.api_version} is served only by {project} {', '.join(serving)}: {fails} on a cluster that runs"
            f" another; if the cluster runs {them}, {how_to_declare_vendor(project)}"
        )
        yield rule.issue(obj, "apiVersion", message, severity=Severity.WARNING)
        return
    versions = sorted({v for r in releases for v in served.get(r, ())})
    bundled = vendor_releases()[project]
    if known.value is not None:
        where = f"{project} {known.value}, which the cluster runs ({known.source})"
    else:
        span = bundled[0] if len(bundled) == 1 else f"{bundled[0]} to {bundled[-1]}"
        where = f"any bundled release of {project} ({span})"
    newer = (
        ""
        if known.value is not None
        else f"; if the cluster runs a release newer than {project} {bundled[-1]}, lint with its CRDs (--crd)"
    )
    if not versions:
        message = f"{kind} is not a kind of {where}: {fails}{newer}"
        yield rule.issue(obj, "kind", message, hint=f"Declare the {project} release that has {kind}, or drop the object.")
        return
    message = f"{kind} {obj.api_version} is not served by {where}, which serves {_versions(versions)}: {fails}{newer}"
    yield rule.issue(obj, "apiVersion", message, hint=_use(group, versions))


def _versions(versions: Iterable[str]) -> str:
    listed = list(versions)
    return ", ".join(listed) if listed else "no version"


def _use(group: str, versions: list[str] | tuple[str, ...]) -> str:
    return f"Use {group}/{versions[0]}." if versions else "Serve the version in the CRD, or drop the object."


class DeprecatedApiVersion(ObjectRule):
    """An object's apiVersion is one its CRD serves but marks deprecated: the API server warns on every request, and a later release stops serving it."""

    id = "PL707"
    name = "deprecated-api-version"
    severity = Severity.WARNING
    reads = frozenset({Stage.ADMISSION})
    subjects = frozenset({ANY})

    def check_object(self, project: Project, obj: K8sObject) -> Iterable[Issue]:
        return project.derived(ByApiVersion).issues(self.id, obj, lambda o: self._deprecated(project, o))

    def _deprecated(self, project: Project, obj: K8sObject) -> Iterator[Issue]:
        catalogue = project.admissions().catalogue
        found = catalogue.deprecation(obj)
        if found is None:
            return
        warning, source = found
        key = (obj.group, obj.kind)
        if source is not None:
            origin = f"the {source} CRD"
            served = list(project.derived(_bundled)[0].get(key, {}).get(catalogue.channel, ()))
        else:
            origin = "its CRD given with --crd" if catalogue.given_with_option(obj) else "its CRD in the input"
            served = list(catalogue.given_served[key][0])
        others = [v for v in served if v != obj.version and catalogue.deprecation_of(obj.group, obj.kind, v) is None]
        message = (
            f"{obj.kind} {obj.api_version} is deprecated ({origin}): the API server answers every request that uses it"
            f" with the warning {warning!r}, and a later release stops serving it"
        )
        yield self.issue(obj, "apiVersion", message, hint=_use(obj.group, others) if others else None)


RULES: list[type[Rule]] = [
    DeprecatedField,
    UnknownField,
    SchemaViolation,
    ApiVersionNotServed,
    ExperimentalField,
    DeprecatedApiVersion,
]
