"""Policy kind profiles: vendor facts as data (docs/semantics.md#vendor-profiles).

A profile says, for one policy kind, where its targets are declared, which
kinds it may target and what `sectionName` means, whether it may cross
namespaces, which boilerplate style it follows (the original Policy Attachment
page's `default`/`override`, or GEP-713's `defaults`/`overrides` with a
strategy; docs/semantics.md#two-boilerplate-styles) and how instances merge. Rules read profiles; they never branch on
a vendor kind.

Profiles come, in order of precedence, from `--profile` files, the built-in
files in `policylint/profiles/builtin/`, CRDs found in the input or passed with `--crd`
(`policylint.profiles.crd`), and structural detection of unknown `*Policy` kinds
(docs/semantics.md#how-policy-kinds-are-known).
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from policylint.input.named import shown
from policylint.k8s.names import group_kind
from policylint.profiles import ProfileError as ProfileError  # where commands catch it
from policylint.profiles.selections import SelectionSpec, selection_spec
from policylint.resources import load_schema, load_yaml_data
from policylint.values import frozen

if TYPE_CHECKING:
    from policylint.profiles.implementations import Implementation
    from policylint.profiles.producers import Producer

DIRECT = "Direct"
INHERITED = "Inherited"
GEP713 = "gep713"
POLICY_ATTACHMENT = "policy-attachment"

ORIGIN_BUILTIN = "builtin"
ORIGIN_PROFILE = "profile"
ORIGIN_CRD = "crd"
ORIGIN_INFERRED = "inferred"

# Merge strategies of GEP-713 ("Merge strategies"); `custom` is implemented per profile.
STRATEGIES = ("none", "atomic-defaults", "patch-defaults", "atomic-overrides", "patch-overrides", "custom")


@frozen
class TargetKind:
    group: str
    kind: str

    def __str__(self) -> str:
        return group_kind(self.group, self.kind)


@frozen
class CreatedKind:
    """A target kind that a cluster component creates from another object rather than a user
    keeping it in git (GKE multi-cluster Services create a ServiceImport for each ServiceExport
    of the same name and namespace): a target of this kind not in the input exists when its
    source object is in the input."""

    kind: TargetKind
    source: TargetKind
    by: str  # who creates it, for messages


@frozen
class BoundBy:
    """Target kinds whose policies take effect only where another component serves the target,
    which a label on the target or on its Namespace says (Istio's waypoints: `istio.io/use-waypoint`)."""

    kinds: tuple[TargetKind, ...]
    label: str
    opt_out: str | None  # the label value that says "none" (Istio: `none`)
    through: str  # what serves it, for messages ("a waypoint")


# What Gateway API's policy target reference types require (`LocalPolicyTargetReference` and
# friends): a kind's own reference type may require less (`TargetSpec.ref_required`).
GATEWAY_API_REF_REQUIRED = ("group", "kind", "name")


@frozen
class TargetSpec:
    single: str | None = None  # field holding one reference (`targetRef`)
    list: str | None = None  # field holding a list of references (`targetRefs`)
    selectors: str | None = None  # field holding label-selector targets (`targetSelectors`)
    required: bool = True
    exclusive: bool = True  # single and list together is an error
    max_items: int | None = 16
    unique: bool = True  # the API server rejects duplicate entries (list-map)
    section_name: bool = True
    namespace: bool = False  # references may name another namespace
    kinds: tuple[TargetKind, ...] = ()
    kinds_enforced: bool = True  # CEL rejects other kinds (error) vs documented support only (warning)
    # Kinds beyond `kinds` that an implementation documents as targets (Envoy Gateway's Backend for
    # BackendTLSPolicy): with kinds not enforced, supported, so not reported by PL202.
    implementation_kinds: tuple[TargetKind, ...] = ()
    virtual_kinds: bool = False  # GEP-713 "Targeting External Services"
    synthetic_rule_names: bool = False  # unnamed route rules are targetable as rule-<n>
    # GEP-713 "Cross namespace references": a cross-namespace target needs a ReferenceGrant in
    # the target namespace (false only for kinds whose effects grant no extra access).
    cross_namespace_grant: bool = True
    # The controller attaches the policy only to a target in its own namespace, though the
    # reference type has a namespace field (GKE): another namespace is refused, grant or not.
    same_namespace_only: bool = False
    created_kinds: tuple[CreatedKind, ...] = ()
    # Who refuses a target kind not in `kinds` when the CRD does not (istiod's validating webhook):
    # with kinds not enforced by the CRD, such a target is still refused when the object is created.
    kinds_enforced_by: str | None = None
    # The one namespace a policy on a cluster-scoped target is honoured from (Istio's root
    # namespace): from another, the controller ignores it.
    cluster_targets_from: str | None = None
    bound_by: BoundBy | None = None
    selector_namespaces: bool = False  # selectors may match in other namespaces (`namespaces.from`)
    # The reference's own schema, where it is not Gateway API's (a kind's CRD says): which of
    # group, kind and name it requires (a missing group without a default is then the core
    # group, as the Group type reads ""), the defaults the API server sets, and the fields it
    # has beyond Gateway API's (GKE's `selector`).
    ref_required: tuple[str, ...] = GATEWAY_API_REF_REQUIRED
    ref_defaults: tuple[tuple[str, str], ...] = ()  # (field, the value the API server sets when absent)
    ref_extra_fields: tuple[str, ...] = ()

    @property
    def fields(self) -> tuple[str, ...]:
        return tuple(f for f in (self.single, self.list, self.selectors) if f)

    def created(self, group: str, kind: str) -> CreatedKind | None:
        return next((c for c in self.created_kinds if c.kind == TargetKind(group, kind)), None)

    def allows(self, group: str, kind: str) -> bool:
        return not self.kinds or TargetKind(group, kind) in self.kinds

    def documents(self, group: str, kind: str) -> bool:
        """Whether the kind is a target the spec or an implementation documents."""
        return self.allows(group, kind) or TargetKind(group, kind) in self.implementation_kinds


@frozen
class MergeSpec:
    default: str = "none"
    defaults: str | None = None  # field holding defaults (`defaults`, or policy-attachment style's `default`)
    overrides: str | None = None  # field holding overrides (`overrides` / `override`)
    strategy_field: str | None = None
    strategies: Mapping[str, str] = field(default_factory=dict)  # value -> atomic | patch | custom
    custom: str | None = None
    implicit_defaults: bool = False  # top-level spec proper acts as defaults (GEP-713, Kuadrant)
    non_proper_fields: tuple[str, ...] = ()  # spec fields that are neither targets nor spec proper
    # Two policies on one target (same object and section): "conflict" = oldest wins, the rest
    # Conflicted (strategy None; Envoy Gateway for every kind), "merge" = fold with the strategy,
    # "field" = a later policy setting a field an earlier one set is Conflicted (NGINX Gateway Fabric),
    # "all" = every policy applies, none conflicts (NGINX Gateway Fabric's SnippetsPolicy).
    same_target: str = "merge"
    rule_containers: tuple[str, ...] = ()  # kuadrant-rule-keyed: maps whose entries are merge units
    # A patch strategy: groups of top-level fields a more specific policy replaces together (it
    # sets one of them: the less specific policy's others go too).
    replace_together: tuple[frozenset[str], ...] = ()
    # Envoy Gateway `mergeType: StrategicMerge`: lists (paths in the spec) that merge item by item
    # instead of being replaced: by the key named (Kubernetes `patchMergeKey`), or appended (None).
    strategic_lists: Mapping[tuple[str, ...], str | None] = field(default_factory=dict)


@frozen
class DataSpec:
    """What the controller reads from a referenced Secret or ConfigMap: the first of `keys`
    present, otherwise `only-entry` (the single entry, when there is exactly one), `any-entry`
    (any entry at all) or `none`. Envoy Gateway reads a CA from key `ca.crt` or the only entry,
    a response body from `response.body` or any entry."""

    keys: tuple[str, ...]
    otherwise: str = "none"


@frozen
class TargetKindFields:
    """The spec fields the controller supports when the policy targets one kind, checked on the
    policy's own spec and, when it merges onto its parent's (Envoy Gateway `mergeType`), on the
    merged spec; `message` is the controller's when it rejects more (Envoy Gateway on a TCPRoute:
    "Only authorization is supported for TCP (routes/listeners).")."""

    kind: TargetKind
    fields: tuple[str, ...]
    message: str


@frozen
class MergedGatewaysSpec:
    """When the Gateways of a class share proxies: the GatewayClass parametersRef kind and its
    boolean spec field that merge them (Envoy Gateway: EnvoyProxy `mergeGateways`), and the kind
    a policy must then target instead of a Gateway (`target_kind`; EnvoyPatchPolicy: the
    GatewayClass), if any."""

    parameters: TargetKind
    field: str
    target_kind: str | None = None


@frozen
class ObjectRefSpec:
    paths: tuple[str, ...]
    kinds: tuple[TargetKind, ...]
    default_kind: str
    data: DataSpec | None = None
    # The controller matches the reference by kind alone, whatever group it gives (Envoy Gateway
    # with `kind: ClusterTrustBundle`): resolved in the group `kinds` lists for that kind.
    match_by_kind: bool = False
    # The group of a reference without a `group` field (None: the core group): a typed reference
    # whose field implies its kind and group (NGINX Gateway Fabric's `apPolicyRef`).
    default_group: str | None = None
    # The conditions the controller writes on the policy when such a reference is invalid
    # (empty: `Accepted=False, Invalid`, what most controllers write).
    refused_status: str = ""
    # The conditions it writes when such a reference into another namespace has no ReferenceGrant
    # (empty: `Accepted=False, Invalid`, as Envoy Gateway's validateSecretRef fails the policy).
    not_permitted_status: str = ""
    # The reference's own field that names the entry the controller reads (Envoy Gateway's
    # LocalObjectKeyReference `key`): that entry, with no fallback, in place of `data`.
    key_field: str | None = None


@frozen
class PolicyProfile:
    group: str
    kind: str
    plural: str
    versions: tuple[str, ...]
    scope: str
    policy_class: str
    boilerplate: str
    targets: TargetSpec
    merge: MergeSpec
    effective_target: str
    project: str
    origin: str = ORIGIN_BUILTIN
    source: str = ""
    # Path patterns of backend references inside the spec (`spec.extAuth.http.backendRefs[*]`):
    # cross-namespace ones need a ReferenceGrant from the policy kind (docs/semantics.md#referencegrant).
    backend_refs: tuple[str, ...] = ()
    # Path patterns of certificate and CA references in the spec (BackendTLSPolicy's
    # `spec.validation.caCertificateRefs[*]`) and the kinds they may name.
    certificate_refs: tuple[str, ...] = ()
    certificate_kinds: tuple[TargetKind, ...] = ()
    certificate_match_by_kind: bool = False  # as ObjectRefSpec.match_by_kind, for certificate_refs
    certificate_refused_status: str = ""  # as ObjectRefSpec.refused_status, for certificate_refs
    certificate_data: DataSpec | None = None  # as ObjectRefSpec.data, for certificate_refs
    # Conditions the controller writes per ancestor besides Accepted (Envoy Gateway: `Overridden`
    # when more specific policies take values, `Merged` on a route policy with mergeType): the
    # JSON report's `conditions` simulate them (policylint.policy_report).
    conditions: tuple[str, ...] = ()
    # Other object references in the spec whose target must exist for the controller to accept
    # the policy (a ConfigMap holding a response body or a JWKS, a Secret to pull an image):
    # (path patterns, the kinds they may name, the kind when the reference gives none).
    object_refs: tuple[ObjectRefSpec, ...] = ()
    # The controller serves every plain-HTTP listener of a port with one proxy listener, so a
    # policy covering only some of them is rejected there (Envoy Gateway's ClientTrafficPolicy).
    shared_http_port: bool = False
    merged_gateways: MergedGatewaysSpec | None = None
    target_kind_fields: tuple[TargetKindFields, ...] = ()
    # The controller records a policy on a route or a Gateway listener as taking that part of the
    # hierarchy from the policies above before it validates or translates it (Envoy Gateway's
    # `overrides.Add` in internal/gatewayapi): one it then rejects still leaves them Overridden
    # there, and no policy of the kind applies to it. A policy the API server refuses never gets
    # that far.
    invalid_claims_target: bool = False
    # Objects the spec chooses by label selector (Kuadrant's API key Secrets): `selections`.
    selections: tuple[SelectionSpec, ...] = ()

    @property
    def rejects_on_target(self) -> bool:
        """Whether its controller may reject a policy on one target alone (Topology.target_errors)."""
        return (
            self.shared_http_port
            or bool(self.target_kind_fields)
            or (self.merged_gateways is not None and self.merged_gateways.target_kind is not None)
        )

    @property
    def gk(self) -> tuple[str, str]:
        return (self.group, self.kind)

    @property
    def name(self) -> str:
        return f"{self.project}/{self.kind}"


def _data_spec(raw: Mapping[str, Any] | None) -> DataSpec | None:
    return DataSpec(tuple(raw.get("keys", ())), raw.get("otherwise", "none")) if raw else None


def object_ref_spec(entry: Mapping[str, Any]) -> ObjectRefSpec:
    """One entry of `objectRefs` (a policy's, or a holder's: policylint.profiles.holders)."""
    return ObjectRefSpec(
        tuple(entry.get("paths", ())),
        tuple(target_kind(k) for k in entry.get("kinds", ())),
        entry.get("defaultKind", "ConfigMap"),
        _data_spec(entry.get("data")),
        entry.get("matchByKind", False),
        entry.get("defaultGroup"),
        entry.get("refusedStatus", ""),
        entry.get("notPermittedStatus", ""),
        entry.get("keyField"),
    )


def target_kind(entry: Mapping[str, Any]) -> TargetKind:
    return TargetKind(entry.get("group", ""), entry["kind"])


def profile_from_dict(raw: Mapping[str, Any], *, project: str, origin: str, source: str) -> PolicyProfile:
    t = raw.get("targets", {})
    m = raw.get("merge", {})
    policy_class = raw.get("class", DIRECT)
    default_strategy = m.get("default", "none" if policy_class == DIRECT else "atomic-defaults")
    return PolicyProfile(
        group=raw["group"],
        kind=raw["kind"],
        plural=raw.get("plural", raw["kind"].lower() + "s"),
        versions=tuple(raw.get("versions", ())),
        scope=raw.get("scope", "Namespaced"),
        policy_class=policy_class,
        boilerplate=raw.get("boilerplate", GEP713),
        targets=TargetSpec(
            single=t.get("single"),
            list=t.get("list"),
            selectors=t.get("selectors"),
            required=t.get("required", True),
            exclusive=t.get("exclusive", True),
            max_items=t.get("maxItems", 16),
            unique=t.get("unique", True),
            section_name=t.get("sectionName", True),
            namespace=t.get("namespace", False),
            kinds=tuple(target_kind(k) for k in t.get("kinds", ())),
            kinds_enforced=t.get("kindsEnforced", True),
            implementation_kinds=tuple(target_kind(k) for k in t.get("implementationKinds", ())),
            virtual_kinds=t.get("virtualKinds", False),
            synthetic_rule_names=t.get("syntheticRuleNames", False),
            cross_namespace_grant=t.get("crossNamespaceGrant", True),
            same_namespace_only=t.get("sameNamespaceOnly", False),
            kinds_enforced_by=t.get("kindsEnforcedBy"),
            cluster_targets_from=t.get("clusterTargetsFrom"),
            bound_by=(
                BoundBy(
                    tuple(target_kind(k) for k in t["boundBy"]["kinds"]),
                    t["boundBy"]["label"],
                    t["boundBy"].get("optOut"),
                    t["boundBy"]["through"],
                )
                if t.get("boundBy")
                else None
            ),
            created_kinds=tuple(CreatedKind(target_kind(c), target_kind(c["from"]), c["by"]) for c in t.get("createdKinds", ())),
            selector_namespaces=t.get("selectorNamespaces", False),
            ref_required=tuple(t.get("refRequired", GATEWAY_API_REF_REQUIRED)),
            ref_defaults=tuple(sorted((t.get("refDefaults") or {}).items())),
            ref_extra_fields=tuple(t.get("refFields", ())),
        ),
        merge=MergeSpec(
            default=default_strategy,
            defaults=m.get("defaults"),
            overrides=m.get("overrides"),
            strategy_field=m.get("strategyField"),
            strategies=dict(m.get("strategies", {})),
            custom=m.get("custom"),
            implicit_defaults=m.get("implicitDefaults", False),
            non_proper_fields=tuple(m.get("nonProperFields", ())),
            same_target=m.get("sameTarget", "conflict" if default_strategy == "none" else "merge"),
            rule_containers=tuple(m.get("ruleContainers", ())),
            replace_together=tuple(frozenset(group) for group in m.get("replaceTogether", ())),
            strategic_lists={
                tuple(path.split(".")): (None if key == "append" else key)
                for path, key in m.get("strategicMergeLists", {}).items()
            },
        ),
        effective_target=raw.get("effectiveTarget", "route"),
        project=project,
        origin=origin,
        source=source,
        backend_refs=tuple(raw.get("backendRefs", ())),
        certificate_refs=tuple(raw.get("certificateRefs", {}).get("paths", ())),
        certificate_kinds=tuple(target_kind(k) for k in raw.get("certificateRefs", {}).get("kinds", ())),
        certificate_match_by_kind=raw.get("certificateRefs", {}).get("matchByKind", False),
        certificate_refused_status=raw.get("certificateRefs", {}).get("refusedStatus", ""),
        certificate_data=_data_spec(raw.get("certificateRefs", {}).get("data")),
        conditions=tuple(raw.get("conditions", ())),
        object_refs=tuple(object_ref_spec(entry) for entry in raw.get("objectRefs", ())),
        shared_http_port=raw.get("sharedHttpPort", False),
        merged_gateways=MergedGatewaysSpec(
            target_kind(raw["mergedGateways"]["parametersRef"]),
            raw["mergedGateways"]["field"],
            raw["mergedGateways"].get("targetKind"),
        )
        if "mergedGateways" in raw
        else None,
        target_kind_fields=tuple(
            TargetKindFields(target_kind(entry["kind"]), tuple(entry["fields"]), entry["message"])
            for entry in raw.get("targetKindFields", ())
        ),
        invalid_claims_target=raw.get("invalidClaimsTarget", False),
        selections=tuple(selection_spec(entry) for entry in raw.get("selections", ())),
    )


def validate_profile_document(raw: Any, where: str) -> None:
    # jsonschema ships no type information and the project does not depend on types-jsonschema.
    import jsonschema  # type: ignore[import-untyped]

    schema = load_schema("profile.schema.json")
    validator = jsonschema.Draft202012Validator(schema)
    errors = sorted(validator.iter_errors(raw), key=lambda e: list(e.absolute_path))
    if errors:
        err = errors[0]
        names = _schema_names()
        # A key the schema does not name is the file's own text: shown as `*`, like the values.
        path = "/".join(str(p) if isinstance(p, int) or p in names else "*" for p in err.absolute_path) or "(top level)"
        raise ProfileError(f"{where}: invalid profile at {path}: {_schema_problem(err)}")


def _schema_problem(err: Any) -> str:
    """What a schema error says, in words from the schema only.

    jsonschema's own message quotes the value (`'<the whole file>' is not of type 'object'`):
    a `--profile` or `profile:` naming a token file or `/etc/passwd` would print it to the CI
    log. The value is never shown; the key names and expected forms come from the schema."""
    keyword, expected = err.validator, err.validator_value
    if keyword == "type":
        return f"must be of type {' or '.join(expected) if isinstance(expected, list) else expected}"
    if keyword == "required":
        present = err.instance if isinstance(err.instance, dict) else {}
        missing = [name for name in expected if name not in present]
        return f"missing required key {', '.join(repr(m) for m in missing)}"
    if keyword == "additionalProperties":
        known = sorted(err.schema.get("properties", {}))
        return f"has a key the profile format does not define (keys: {', '.join(known)})"
    if keyword in ("enum", "const"):
        choices = expected if isinstance(expected, list) else [expected]
        return f"must be one of {', '.join(repr(c) for c in choices)}"[:500]
    if keyword in ("pattern", "format", "minLength", "maxLength", "minItems", "maxItems", "minimum", "maximum"):
        return f"does not meet {keyword} {expected!r}"[:500]
    if keyword == "anyOf" and all(set(branch) == {"required"} for branch in expected):
        keys = [key for branch in expected for key in branch["required"]]
        return f"needs one of the keys {', '.join(repr(k) for k in keys)}"
    return f"does not match the profile schema ({keyword})"


@functools.cache
def _schema_names() -> frozenset[str]:
    """Every property name the profile schema declares."""
    names: set[str] = set()
    stack: list[Any] = [load_schema("profile.schema.json")]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            properties = node.get("properties")
            if isinstance(properties, dict):
                names.update(properties)
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    return frozenset(names)


def _read_profile_file(path: Path) -> Any:
    """A shipped profile file's data (trusted: read as is)."""
    try:
        return load_yaml_data(path)
    except OSError as exc:
        raise ProfileError(f"{path}: cannot read profile: {exc.strerror}") from None
    except Exception as exc:  # a YAML error in a profile is a usage error, not a finding
        raise ProfileError(f"{path}: cannot parse profile: {exc}") from None


def read_user_profile(path: Path) -> Any:
    """A `--profile` or `profile:` file's data. It is named by configuration, so it is read as
    such files are (policylint.input.named: a regular file, not blocking, at most
    MAX_PROFILE_BYTES; a path from a repository's configuration was checked to stay inside it,
    policylint.config.effective) and parsed within the manifest loader's bounds (aliases,
    nodes, depth). Errors name the file and the problem, never its content."""
    from policylint.input.named import MAX_PROFILE_BYTES, NamedFileError, read_named

    try:
        data = read_named(str(path), what="profile", limit=MAX_PROFILE_BYTES)
    except NamedFileError as exc:
        raise ProfileError(str(exc)) from None
    return parse_user_profile(data, str(path))


def parse_user_profile(data: bytes, name: str) -> Any:
    """A user's profile file's data from its bytes (read from disk or from a git ref), named
    `name` in errors (`PATH`, or `REF:PATH`)."""
    from policylint.input.load import RESOURCE_LIMIT, UNDECODABLE_FILE, YAML_SYNTAX_ERROR, load_bytes

    result = load_bytes(data, name)
    for issue in result.issues:
        if issue.rule_id in (YAML_SYNTAX_ERROR, UNDECODABLE_FILE, RESOURCE_LIMIT):
            line = issue.location.line if issue.location is not None else 1
            raise ProfileError(f"{shown(name)}:{line}: cannot parse profile: {issue.message}")
    if len(result.documents) != 1:
        raise ProfileError(f"{shown(name)}: cannot parse profile: expected one YAML document, found {len(result.documents)}")
    return result.documents[0].data


def load_profile_file(path: Path, *, origin: str, validate: bool = True) -> list[PolicyProfile]:
    """The profiles of a user's profile file (`--profile`, `profile:`)."""
    return profiles_of(read_user_profile(path), path, origin, validate)


def profiles_of(raw: Any, path: Path, origin: str, validate: bool, shown_as: str | None = None) -> list[PolicyProfile]:
    """The policy profiles of a profile document `raw` read from `path` (named `shown_as` in
    messages: `REF:PATH` when read from a git ref)."""
    if validate:
        validate_profile_document(raw, shown(shown_as if shown_as is not None else str(path)))
    project = raw["project"]
    source = raw.get("source", str(path.name))
    return [profile_from_dict(p, project=project, origin=origin, source=source) for p in raw.get("policies", ())]


@functools.cache
def builtin_documents() -> tuple[tuple[Path, Any], ...]:
    """The shipped profile files, read once for both the profiles and the implementations they
    describe: from the data generated from them, when it was made from these very files
    (policylint.profiles.shipped; parsing the YAML was ~10 ms of every run), else parsed."""
    from policylint.profiles import shipped

    generated = shipped.documents()
    if generated is not None:
        return tuple(generated)
    return tuple((path, _read_profile_file(path)) for path in sorted(shipped.DIRECTORY.glob("*.yaml")))


@functools.cache
def builtin_profiles() -> tuple[PolicyProfile, ...]:
    out: list[PolicyProfile] = []
    for path, raw in builtin_documents():
        # Shipped profiles are validated by the test suite (tests/profiles/test_profiles.py); checking them
        # again on every run would import jsonschema, which costs more than linting a few files.
        out.extend(profiles_of(raw, path, ORIGIN_BUILTIN, validate=False))
    return tuple(out)


class ProfileRegistry:
    """Lookup of policy profiles by (group, kind); earlier sources win. `producers`: the objects
    cluster components make from others (`policylint.profiles.producers`)."""

    def __init__(
        self,
        layers: Iterable[Iterable[PolicyProfile]],
        implementations: Iterable[Implementation] = (),
        producers: Iterable[Producer] = (),
    ) -> None:
        self._by_gk: dict[tuple[str, str], PolicyProfile] = {}
        for layer in layers:
            for profile in layer:
                self._by_gk.setdefault(profile.gk, profile)
        self.implementations = tuple(implementations)
        self.producers = tuple(producers)

    def implementation_of(self, controller_name: str) -> Implementation | None:
        """The implementation whose GatewayClasses name this controller."""
        return next((i for i in self.implementations if controller_name in i.controller_names), None)

    def get(self, group: str, kind: str) -> PolicyProfile | None:
        return self._by_gk.get((group, kind))

    def __iter__(self) -> Iterator[PolicyProfile]:
        return iter(sorted(self._by_gk.values(), key=lambda p: (p.group, p.kind)))

    def __len__(self) -> int:
        return len(self._by_gk)

    def vendor_groups(self) -> frozenset[str]:
        """API groups of the projects policylint ships profiles for (Gateway API, Envoy Gateway,
        NGINX Gateway Fabric, Kuadrant): their CRDs are vendored, not edited by the user."""
        return frozenset(p.group for p in self if p.origin == ORIGIN_BUILTIN)

    def add(self, profile: PolicyProfile) -> None:
        self._by_gk.setdefault(profile.gk, profile)


def inferred_profile(group: str, kind: str, spec: Mapping[str, Any]) -> PolicyProfile:
    """Structural detection: an unknown `*Policy` kind with target fields, assumed Direct
    (docs/semantics.md#how-policy-kinds-are-known)."""
    return PolicyProfile(
        group=group,
        kind=kind,
        plural=kind.lower()[:-1] + "ies" if kind.endswith("y") else kind.lower() + "s",
        versions=(),
        scope="Namespaced",
        policy_class=DIRECT,
        boilerplate=GEP713,
        targets=TargetSpec(
            single="targetRef",
            list="targetRefs",
            selectors="targetSelectors",
            max_items=16,
            unique=False,
            section_name=True,
            namespace=True,
            kinds=(),
            kinds_enforced=False,
            virtual_kinds=True,
        ),
        merge=MergeSpec(default="none"),
        effective_target="route",
        project="inferred",
        origin=ORIGIN_INFERRED,
        source="structural detection",
    )


def looks_like_policy(kind: str, spec: Any) -> bool:
    return (
        kind.endswith("Policy")
        and isinstance(spec, dict)
        and any(f in spec for f in ("targetRef", "targetRefs", "targetSelectors"))
    )
