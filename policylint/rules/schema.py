"""PL7xx: what the CRDs themselves say about the fields of an object.

Deprecated fields come from the CRDs' own descriptions (policylint.k8s.deprecations), the fields
an object may have from their schemas (policylint.k8s.schemas), both generated from the vendored
upstream CRDs. No rule here branches on a kind: the data names them.

Which schema decides (`_Catalogue`): a CRD in the input or given with `--crd`, which is what the
cluster serves; else the bundled schemas of the Gateway API channel and release the run names
(`--channel`, default standard; `--gateway-api-version`), with the vendor CRDs'. A version that
channel does not serve is PL705's, a field only its experimental channel has is PL706's.
"""

from __future__ import annotations

import weakref
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from dataclasses import field as dataclass_field
from typing import Any

from policylint.findings import Issue, Related, Severity
from policylint.input.positions import format_path, join
from policylint.k8s.deprecations import deprecations
from policylint.k8s.index import ProjectIndex
from policylint.k8s.objects import K8sObject
from policylint.project import Project
from policylint.rules.base import ANY, POLICY, Rule
from policylint.rules.hints import close_name
from policylint.semantics.topology import expand_pattern


class DeprecatedField(Rule):
    """A field its CRD marks deprecated is set: say what replaces it, as the controller's own warning does."""

    id = "PL701"
    name = "deprecated-field"
    severity = Severity.WARNING
    subjects = frozenset({POLICY})

    def check(self, project: Project) -> Iterable[Issue]:
        table = deprecations()
        for policy in project.resolution.policies():
            obj = policy.obj
            fields = table.get((obj.group, obj.kind, obj.version))
            if not fields:
                continue
            for field in fields:
                for path, _ in expand_pattern(obj.data, field.path):
                    instead = f": use {field.replacement} instead" if field.replacement else ""
                    message = (
                        f"{path} is deprecated in {obj.kind} {obj.version} (its CRD: {field.text!r}){instead};"
                        " the controller may stop reading it in a later release"
                    )
                    hint = f"Move the value to {field.replacement}." if field.replacement else None
                    yield self.issue(obj, path, message, hint=hint)


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
# The object's own fields the schema rules leave to others: metadata (ObjectMeta, which the
# CRDs do not describe), status (PL110).
_TOP_LEVEL_SKIPPED = frozenset({"apiVersion", "kind", "metadata", "status"})


class UnknownField(Rule):
    """A field its CRD does not define: the API server prunes it, and `kubectl apply` rejects the object."""

    id = "PL702"
    name = "unknown-field"
    severity = Severity.ERROR
    subjects = GATEWAY_API_KINDS | {POLICY}

    def check(self, project: Project) -> Iterable[Issue]:
        # A CRD in the input (or given with --crd) is the one the cluster serves: its schema
        # decides, and an unknown field is an error. Otherwise the bundled schemas of the chosen
        # channel stand in, and the finding is a warning naming the release they come from: a
        # newer release may have added the field (`_schemas_for`). A field the standard
        # channel lacks and the experimental one has is PL706's.
        for obj, source, found in _unknown_fields(project):
            for _, path, key_name, known, experimental in found:
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
                if source:
                    message += f"; if the cluster runs a newer release than {source}, lint with its CRDs (--crd)"
                yield self.issue(obj, at, message, hint=hint, severity=None if source is None else Severity.WARNING)


def _origin(project: Project, obj: K8sObject, source: str | None) -> str:
    """Where the schema of a finding comes from: a bundled release, or the object's CRD."""
    if source:
        return f"the {source} CRD"
    given = _catalogue(project).given_served.get((obj.group, obj.kind))
    return "its CRD given with --crd" if given is not None and given[1] is None else "its CRD in the input"


def _template(value: Any) -> bool:
    """An unquoted template action (`{{ .Values.x }}`), which YAML reads as a map with one
    `{...}` key and no value: PL004 reports the file, and it is no field of the object."""
    if type(value) is not dict or len(value) != 1:
        return False
    ((key, inner),) = value.items()
    return inner is None and isinstance(key, str) and key.startswith("{") and key.endswith("}")


# (path parts of the parent, its path, the unknown key, the keys the parent may have, whether the
# experimental channel's schema has the key: PL706's rather than PL702's).
_Unknown = tuple[tuple[str | int, ...], str, str, list[str], bool]


def _unknown_fields(project: Project) -> list[tuple[K8sObject, str | None, list[_Unknown]]]:
    """Each object with fields its schema does not define (`_schemas_for`), and those fields,
    leaving out those inside a policy's target references (PL205 names them, one finding per
    cause) and under a field of the wrong type (PL010's). Computed once for PL702 and PL706."""
    catalogue = _catalogue(project)
    if catalogue.unknown is None:
        catalogue.unknown = list(_find_unknown_fields(project, catalogue))
    return catalogue.unknown


def _find_unknown_fields(project: Project, catalogue: _Catalogue) -> Iterator[tuple[K8sObject, str | None, list[_Unknown]]]:
    targets = _target_fields(project)
    for obj, schema, source in _schemas_for(project):
        found = _unknown(obj.data, schema)
        if not found:
            continue
        malformed = project.index.malformed(obj)
        skipped = targets.get(id(obj), ())
        wider = catalogue.experimental_schema(obj, source)
        out: list[_Unknown] = []
        for parts, key_name, known in found:
            path = format_path(parts)
            if _under(path, skipped) or malformed.tainted(*parts):
                continue
            out.append((parts, path, key_name, known, wider is not None and _defines(wider, parts, key_name)))
        if out:
            yield obj, source, out


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


class ExperimentalField(Rule):
    """A field only the experimental channel's CRD defines, linted against the standard channel: the API server prunes it, and `kubectl apply` rejects the object."""

    id = "PL706"
    name = "experimental-field"
    severity = Severity.ERROR
    subjects = GATEWAY_API_KINDS | {POLICY}

    def check(self, project: Project) -> Iterable[Issue]:
        options = project.index.options
        for obj, _, found in _unknown_fields(project):
            for _, path, key_name, _, experimental in found:
                if not experimental:
                    continue  # PL702's
                at = join(path, key_name) if path else key_name
                where = f"in {path}" if path else "at the top level"
                message = (
                    f"{key_name!r} {where} of {obj.kind} {obj.version} is an experimental field: Gateway API"
                    f" {options.gateway_api_version}'s standard channel CRD does not define it, only the experimental"
                    " channel's does, so the API server prunes it and `kubectl apply` rejects the object (strict field"
                    " validation is its default)"
                )
                hint = (
                    "Remove it, or install the experimental channel's CRDs and lint with `--channel experimental`"
                    " (a newer release may have moved it to the standard channel: then lint with its CRDs, --crd)."
                )
                yield self.issue(obj, at, message, hint=hint)


_PRESERVE = "x-kubernetes-preserve-unknown-fields"
_EMBEDDED = "x-kubernetes-embedded-resource"


def _unknown(data: Mapping[str, Any], schema: Mapping[str, Any]) -> list[tuple[tuple[str | int, ...], str, list[str]]]:
    """(path of the parent, unknown key, the keys the parent may have) for every field the schema
    does not define, where it does not keep unknown fields (`x-kubernetes-preserve-unknown-fields`),
    in document order. One pass over the object's maps and lists; scalars are never visited."""
    out: list[tuple[tuple[str | int, ...], str, list[str]]] = []
    root = {k: v for k, v in data.items() if k not in _TOP_LEVEL_SKIPPED}
    stack: list[tuple[Any, Mapping[str, Any], tuple[str | int, ...]]] = [(root, schema, ())]
    while stack:
        value, node, path = stack.pop()
        if node.get(_PRESERVE) or node.get(_EMBEDDED):
            continue
        if type(value) is dict:
            if _template(value):
                continue  # an unrendered template action (PL004)
            properties = node.get("properties")
            additional = node.get("additionalProperties")
            if properties is None and additional is None:
                continue  # an object the schema does not describe further (any keys), or `anyOf` forms
            children = []
            for key, child in value.items():
                sub = properties.get(key) if properties is not None else None
                if sub is None:
                    if isinstance(additional, dict):
                        sub = additional
                    elif additional is True:
                        continue
                    else:
                        out.append((path, str(key), sorted(properties or ())))
                        continue
                if type(child) is dict or type(child) is list:
                    children.append((child, sub, (*path, key)))
            stack.extend(reversed(children))
        elif type(value) is list:
            items = node.get("items")
            if isinstance(items, dict):
                stack.extend(
                    (item, items, (*path, i))
                    for i, item in reversed(list(enumerate(value)))
                    if type(item) is dict or type(item) is list
                )
    return out


class SchemaViolation(Rule):
    """A value its CRD's schema rejects: wrong type, not one of the allowed values, out of bounds, or a required field missing."""

    id = "PL703"
    name = "schema-violation"
    severity = Severity.ERROR
    subjects = GATEWAY_API_KINDS | {POLICY}

    def check(self, project: Project) -> Iterable[Issue]:
        targets = _target_fields(project)
        catalogue = _catalogue(project)
        for obj, schema, source in _schemas_for(project):
            found = _violations(obj.data, schema)
            if not found:
                continue
            malformed = project.index.malformed(obj)
            # Target references: the PL1xx and PL2xx rules check them, field by field.
            skipped = targets.get(id(obj), ())
            # Linted against the standard channel: what the experimental channel's schema would
            # accept (an enum value it adds) is said, since the cluster may run that channel.
            wider = catalogue.experimental_schema(obj, source)
            accepted = None if wider is None else set(found) - set(_violations(obj.data, wider))
            for parts, problem in found:
                path = format_path(parts)
                if _under(path, skipped) or malformed.tainted(*parts):
                    continue  # theirs, or PL010's finding already
                origin = _origin(project, obj, source)
                message = f"{path or 'the object'} {problem} ({origin}): the API server rejects the object"
                if accepted and (parts, problem) in accepted:
                    message += (
                        "; the experimental channel's CRD accepts it: lint with --channel experimental if the cluster"
                        " runs that channel's CRDs"
                    )
                if source:
                    message += f"; if the cluster runs a newer release than {source}, lint with its CRDs (--crd)"
                yield self.issue(obj, path, message, severity=None if source is None else Severity.WARNING)


def _target_fields(project: Project) -> dict[int, tuple[str, ...]]:
    """id(policy object) -> the paths of its target fields (`spec.targetRefs`, ...)."""
    return {id(p.obj): tuple(f"spec.{field}" for field in p.profile.targets.fields) for p in project.resolution.policies()}


def _under(path: str, prefixes: Iterable[str]) -> bool:
    return any(path == p or path.startswith((p + ".", p + "[")) for p in prefixes)


def _schemas_for(project: Project) -> Iterator[tuple[K8sObject, Mapping[str, Any], str | None]]:
    """Each object with the schema that decides its fields, and the bundled release it comes from
    (None: a CRD in the input or given with --crd, which the cluster serves). Bundled schemas are
    those of the channel and Gateway API release the run names: an object whose version that
    channel does not serve has none here (PL705 reports it)."""
    catalogue = _catalogue(project)
    for obj in project.index.objects:
        if not isinstance(obj.data, dict):
            continue
        found = catalogue.schema(obj)
        if found is not None:
            yield obj, found[0], found[1]


@dataclass
class _Catalogue:
    """The schemas and served versions the schema rules read for one project (`_catalogue`)."""

    channel: str
    release: str  # the Gateway API release, `v1.6.1`
    # From the CRDs in the input and given with --crd: (group, kind, version) -> schema, and
    # (group, kind) -> the versions they serve and the CRD in the input (None: given with --crd).
    given: dict[tuple[str, str, str], Mapping[str, Any]] = dataclass_field(default_factory=dict)
    given_served: dict[tuple[str, str], tuple[list[str], K8sObject | None]] = dataclass_field(default_factory=dict)
    # The unknown fields of every object (`_unknown_fields`), once computed.
    unknown: list[tuple[K8sObject, str | None, list[_Unknown]]] | None = None

    def bundled(self, channel: str | None = None) -> Mapping[tuple[str, str, str], tuple[Mapping[str, Any], str]]:
        from policylint.k8s.schemas import schemas

        return schemas(channel or self.channel, self.release)

    def schema(self, obj: K8sObject) -> tuple[Mapping[str, Any], str | None] | None:
        key = (obj.group, obj.kind, obj.version)
        given = self.given.get(key)
        if given is not None:
            return given, None
        if key[:2] in self.given_served:
            return None  # its CRD decides, and does not serve the version (PL705)
        return self.bundled().get(key)

    def experimental_schema(self, obj: K8sObject, source: str | None) -> Mapping[str, Any] | None:
        """The experimental channel's schema of a Gateway API object linted against the standard
        channel's (None otherwise, or when both are the same)."""
        from policylint.k8s.schemas import gateway_api_groups

        if source is None or self.channel == "experimental" or obj.group not in gateway_api_groups(self.release):
            return None
        key = (obj.group, obj.kind, obj.version)
        wider, mine = self.bundled("experimental").get(key), self.bundled().get(key)
        if wider is None or mine is None or wider[0] is mine[0]:
            return None
        return wider[0]


_CACHED: list[tuple[weakref.ref[ProjectIndex], _Catalogue]] = []


def _catalogue(project: Project) -> _Catalogue:
    """Built once per project: the given CRDs' schemas are compacted once for every rule here."""
    index = project.index
    if _CACHED and _CACHED[0][0]() is index:
        return _CACHED[0][1]
    from policylint.k8s.schemas import crd_schemas, crd_served

    options = index.options
    catalogue = _Catalogue(options.channel, options.gateway_api_version)
    for crd, in_input in [*((c, True) for c in index.crds()), *((c, False) for c in options.context_crds)]:
        if not isinstance(crd.data, dict):
            continue
        catalogue.given.update(crd_schemas(crd.data))
        served = crd_served(crd.data)
        if served is not None:
            versions, _ = catalogue.given_served.setdefault(served[:2], ([], crd if in_input else None))
            versions.extend(v for v in served[2] if v not in versions)
    ref = weakref.ref(index)
    _CACHED[:] = [(ref, catalogue)]
    # The catalogue holds objects of the project: let them go with it.
    weakref.finalize(index, _forget, ref)
    return catalogue


def _forget(ref: weakref.ref[ProjectIndex]) -> None:
    if _CACHED and _CACHED[0][0] is ref:
        _CACHED.clear()


class ApiVersionNotServed(Rule):
    """An object's apiVersion is one its CRD does not serve (the chosen Gateway API channel and release, or its CRD in the input): `kubectl apply` fails with "no matches for kind"."""

    id = "PL705"
    name = "api-version-not-served"
    severity = Severity.ERROR
    subjects = frozenset({ANY})

    def check(self, project: Project) -> Iterable[Issue]:
        from policylint.k8s.schemas import gateway_api_groups, gateway_api_served

        catalogue = _catalogue(project)
        served = gateway_api_served(catalogue.release)
        groups = gateway_api_groups(catalogue.release)
        for obj in project.index.objects:
            group, kind, version = obj.group, obj.kind, obj.version
            given = catalogue.given_served.get((group, kind))
            if given is not None:
                versions, crd = given
                if version in versions:
                    continue
                where = "its CRD in the input" if crd is not None else "its CRD given with --crd"
                message = (
                    f"{kind} {obj.api_version} is not served by {where}, which serves {_versions(versions)}:"
                    ' `kubectl apply` fails with "no matches for kind"'
                )
                related = [Related("its CRD's versions", object=crd, path="spec.versions")] if crd is not None else []
                yield self.issue(obj, "apiVersion", message, hint=_use(group, versions), related=related)
            elif group in groups:
                yield from self._bundled(obj, catalogue, served)

    def _bundled(
        self, obj: K8sObject, catalogue: _Catalogue, served: Mapping[tuple[str, str], Mapping[str, tuple[str, ...]]]
    ) -> Iterator[Issue]:
        group, kind, version = obj.group, obj.kind, obj.version
        channel, release = catalogue.channel, catalogue.release
        other = "experimental" if channel == "standard" else "standard"
        by_channel = served.get((group, kind))
        fails = '`kubectl apply` fails with "no matches for kind"'
        if by_channel is None:
            known = sorted(k for g, k in served if g == group)
            guess = close_name(kind, known) or next((k for k in known if k.lower() == kind.lower()), None)
            message = (
                f"Gateway API {release} has no kind {kind!r} in {group} (in either channel): {fails}; if the cluster"
                " runs a newer release that adds it, lint with its CRDs (--crd)"
            )
            yield self.issue(obj, "kind", message, hint=f"Did you mean `{guess}`?" if guess else None)
            return
        mine, theirs = by_channel[channel], by_channel[other]
        if version in mine:
            return
        if not mine:
            message = f"{kind} is not a kind of Gateway API {release}'s {channel} channel, which has no CRD for it: {fails}"
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
            f" {_versions(mine)}: {fails}"
        )
        hint = _use(group, mine)
        if version in theirs:
            message += f"; the {other} channel's CRD serves it"
            hint = f"{hint[:-1]}, or lint with `--channel {other}` if the cluster runs the {other} channel's CRDs."
        yield self.issue(obj, "apiVersion", message, hint=hint)


def _versions(versions: Iterable[str]) -> str:
    listed = list(versions)
    return ", ".join(listed) if listed else "no version"


def _use(group: str, versions: list[str] | tuple[str, ...]) -> str:
    return f"Use {group}/{versions[0]}." if versions else "Serve the version in the CRD, or drop the object."


_TYPES: Mapping[str, tuple[type, ...]] = {
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
    "object": (dict,),
    "array": (list,),
}


def _kind_of(value: Any) -> str:
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int):
        return "an integer"
    if isinstance(value, float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, dict):
        return "a map"
    if isinstance(value, list):
        return "a list"
    return type(value).__name__


def _violations(data: Mapping[str, Any], schema: Mapping[str, Any]) -> list[tuple[tuple[str | int, ...], str]]:
    """(path, what is wrong) for every value the schema rejects: type, enum, string length,
    pattern and format, numeric bounds, item and property counts, and missing required fields.
    Patterns are matched with RE2, the engine of the API server's Go regexp, in linear time; a
    pattern RE2 does not compile, and a format Kubernetes does not validate, check nothing
    (policylint.k8s.strformats)."""
    out: list[tuple[tuple[str | int, ...], str]] = []
    root = {k: v for k, v in data.items() if k not in _TOP_LEVEL_SKIPPED}
    top_required = [r for r in schema.get("required", ()) if r not in _TOP_LEVEL_SKIPPED]
    stack: list[tuple[Any, Mapping[str, Any], tuple[str | int, ...]]] = [(root, {**schema, "required": top_required}, ())]
    while stack:
        value, node, path = stack.pop()
        if value is None or _template(value):
            continue  # a null is an unset field to the API server; a template action is PL004's
        if node.get("x-kubernetes-int-or-string"):
            if isinstance(value, bool) or not isinstance(value, (int, str)):
                out.append((path, f"is {_kind_of(value)}, where the schema takes an integer or a string"))
            continue
        wanted = node.get("type")
        types = _TYPES.get(wanted) if isinstance(wanted, str) else None
        if wanted == "integer" and isinstance(value, float) and value.is_integer():
            value = int(value)  # kubectl sends an integral float as an integer
        if (
            isinstance(wanted, str)
            and types is not None
            and (not isinstance(value, types) or (isinstance(value, bool) and wanted != "boolean"))
        ):
            out.append((path, f"is {_kind_of(value)}, where the schema takes {'an' if wanted[0] in 'aeio' else 'a'} {wanted}"))
            continue
        enum = node.get("enum")
        if isinstance(enum, list) and not isinstance(value, (dict, list)) and value not in enum:
            shown = ", ".join(repr(e) for e in enum[:12]) + (", ..." if len(enum) > 12 else "")
            out.append((path, f"is {value!r}, not one of the values the schema allows ({shown})"))
        if isinstance(value, str):
            _bound(out, path, len(value), node, "minLength", "maxLength", "characters long")
            _string(out, path, value, node)
        elif isinstance(value, (int, float)) and not isinstance(value, bool):
            _value_bound(out, path, value, node)
        elif isinstance(value, list):
            _bound(out, path, len(value), node, "minItems", "maxItems", "items")
            items = node.get("items")
            if isinstance(items, dict):
                stack.extend((item, items, (*path, i)) for i, item in reversed(list(enumerate(value))))
        elif isinstance(value, dict):
            _bound(out, path, len(value), node, "minProperties", "maxProperties", "fields")
            properties = node.get("properties") or {}
            for name in node.get("required", ()):
                # The API server sets a field's default before it validates: a default satisfies.
                if value.get(name) is None and "default" not in properties.get(name, {}):
                    out.append(((*path, name), "is required by the schema and missing"))
            if node.get(_PRESERVE) and node.get("properties") is None:
                continue
            additional = node.get("additionalProperties")
            children = []
            for key, child in value.items():
                sub = properties.get(key)
                if sub is None and isinstance(additional, dict):
                    sub = additional
                if sub is None:
                    continue
                if type(child) is str and sub.get("type") == "string" and "enum" not in sub:
                    # Most values: a string whose length, pattern and format are all there is to
                    # check, checked here.
                    least, most = sub.get("minLength"), sub.get("maxLength")
                    if (least is None or len(child) >= least) and (most is None or len(child) <= most):
                        if "pattern" in sub or "format" in sub:
                            _string(out, (*path, key), child, sub)
                        continue
                children.append((child, sub, (*path, key)))
            stack.extend(reversed(children))
    return out


def _bound(
    out: list[tuple[tuple[str | int, ...], str]],
    path: tuple[str | int, ...],
    n: int,
    node: Mapping[str, Any],
    low: str,
    high: str,
    unit: str,
) -> None:
    least, most = node.get(low), node.get(high)
    if isinstance(least, int) and n < least:
        out.append((path, f"is {n} {unit}, fewer than the schema's {low} of {least}"))
    if isinstance(most, int) and n > most:
        out.append((path, f"is {n} {unit}, more than the schema's {high} of {most}"))


def _shown(text: str, most: int = 80) -> str:
    return repr(text if len(text) <= most else text[:most] + "...")


def _string(
    out: list[tuple[tuple[str | int, ...], str]], path: tuple[str | int, ...], value: str, node: Mapping[str, Any]
) -> None:
    """The schema's `pattern` (Go regexp, searched) and `format` (kube-openapi strfmt)."""
    from policylint.k8s.strformats import format_ok, matches

    pattern, fmt = node.get("pattern"), node.get("format")
    if isinstance(pattern, str) and matches(pattern, value) is False:
        shown = pattern if len(pattern) <= 160 else pattern[:160] + "..."
        out.append((path, f"is {_shown(value)}, which does not match the schema's pattern `{shown}`"))
    if isinstance(fmt, str) and format_ok(fmt, value) is False:
        out.append((path, f"is {_shown(value)}, not a valid {fmt} (the schema's format)"))


def _value_bound(
    out: list[tuple[tuple[str | int, ...], str]], path: tuple[str | int, ...], value: float, node: Mapping[str, Any]
) -> None:
    least, most = node.get("minimum"), node.get("maximum")
    if isinstance(least, (int, float)) and (value < least or (node.get("exclusiveMinimum") is True and value == least)):
        out.append((path, f"is {value}, below the schema's minimum of {least}"))
    if isinstance(most, (int, float)) and (value > most or (node.get("exclusiveMaximum") is True and value == most)):
        out.append((path, f"is {value}, above the schema's maximum of {most}"))


RULES: list[type[Rule]] = [DeprecatedField, UnknownField, SchemaViolation, ApiVersionNotServed, ExperimentalField]
