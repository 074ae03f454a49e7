"""What the API server would reject in an object: its admission verdict, before any controller.

The API server validates a custom object against its CRD's structural schema (types, enums,
bounds, patterns, formats, required fields) and then runs the CRD's CEL validation rules
(`x-kubernetes-validations`); an object that fails either is refused, whole. This module
computes that verdict offline, once per object (`ProjectIndex.admission`), typed and with its
reasons, so that the schema rules (PL703, PL704) report it and the topology reads it: a policy
the API server refuses never reaches its controller (`Topology.policy_errors`).

Which schema decides (`Catalogue`): a CRD in the input or given with `--crd`, which is what the
cluster serves; else the bundled schemas of the Gateway API channel and release the run names
(`--channel`, default standard; `--gateway-api-version`), with the vendor CRDs'. Unknown fields
are not rejections: the API server prunes them (PL702's; `kubectl apply` refuses them only by
its client-side default of strict field validation).
"""

from __future__ import annotations

import enum
import hashlib
import json
import os
from collections.abc import Callable, Iterator, Mapping
from dataclasses import field as dataclass_field
from typing import TYPE_CHECKING, Any

from policylint.identity import IdentityMap, IdentitySet, Numbering
from policylint.input.placeholders import whole_value
from policylint.input.positions import format_path
from policylint.k8s.cluster import Cluster
from policylint.k8s.schemas import COMBINED, DEFAULT_CHANNEL, DEFAULT_GATEWAY_API_VERSION
from policylint.values import frozen, record

if TYPE_CHECKING:
    from policylint.k8s.cel import Compiled, EvalError
    from policylint.k8s.fieldtypes import Malformed
    from policylint.k8s.index import ProjectIndex
    from policylint.k8s.objects import K8sObject

# The object's own fields schema validation leaves to others: metadata (ObjectMeta, which the
# CRDs do not describe), status (PL110; the status subresource validates it).
TOP_LEVEL_SKIPPED = frozenset({"apiVersion", "kind", "metadata", "status"})
VALIDATIONS = "x-kubernetes-validations"
PRESERVE = "x-kubernetes-preserve-unknown-fields"
EMBEDDED = "x-kubernetes-embedded-resource"
_UNSET: Any = object()
MEMO_LIMIT = 50_000  # entries of each memo table of a catalogue (`admit`)


class Check(enum.Enum):
    """Which of the API server's validations refuses a value."""

    SCHEMA = "schema"  # the structural OpenAPI schema (PL703)
    CEL = "cel"  # a CEL validation rule, `x-kubernetes-validations` (PL704)


@frozen
class CelFailure:
    """What a failing CEL rule read and said, for the finding that reports it."""

    validation: Mapping[str, Any]  # the `x-kubernetes-validations` entry
    compiled: Compiled
    value: Any  # the node's value as the rule saw it (policylint.k8s.cel.to_cel)
    error: EvalError | None  # None: the rule evaluated to false; else why it did not evaluate
    node_path: str  # the path of the schema node the rule sits on (`path` adds its fieldPath)


@frozen
class Rejection:
    """One reason the API server refuses an object."""

    check: Check
    parts: tuple[str | int, ...]  # where, as path parts (a CEL rule: its node's)
    path: str  # where, as reported (a CEL rule: its node's path extended by its fieldPath)
    message: str  # the schema's complaint ("is 'x', not one of ..."), or what the CEL rule says
    reason: str  # the API server's field error type: FieldValueInvalid, FieldValueRequired, ...
    cel: CelFailure | None = None
    # The rule ran out of policylint's offline evaluation budget: whether the API server refuses
    # the object is not known (PL704 warns; the simulation does not count it).
    undecided: bool = False


@frozen
class Admission:
    """The admission verdict of one object: what its schema and its CEL rules refuse, in document
    order, and which schema decided."""

    schema: tuple[Rejection, ...]
    cel: tuple[Rejection, ...]
    # The bundled release whose CRD decided (`gateway-api v1.6.1`, `envoy-gateway v1.9.0`), or
    # None: the object's CRD in the input or given with --crd (`given`), which the cluster serves.
    source: str | None
    given: bool = False  # decided by a CRD given with --crd
    # The fields the schema does not define, which the API server prunes (not a rejection; PL702's
    # and PL706's): (path parts of the parent, the key, the keys the parent may have), in document
    # order, where the schema does not keep unknown fields (`x-kubernetes-preserve-unknown-fields`).
    pruned: tuple[tuple[tuple[str | int, ...], str, list[str]], ...] = ()

    @property
    def rejected(self) -> bool:
        """Whether the API server refuses the object (a rule not evaluated to the end does not count)."""
        return bool(self.schema) or any(not r.undecided for r in self.cel)

    def rejections(self) -> Iterator[Rejection]:
        yield from self.schema
        yield from (r for r in self.cel if not r.undecided)

    def origin(self) -> str:
        """Where the schema that decided comes from, in words."""
        if self.source:
            return f"the {self.source} CRD"
        return "its CRD given with --crd" if self.given else "its CRD in the input"

    def reason(self, rejection: Rejection) -> str:
        """One rejection in words, for a status message: "spec.x is ... (the ... CRD)"."""
        if rejection.check is Check.SCHEMA:
            return f"{rejection.path or 'the object'} {rejection.message} ({self.origin()})"
        return f"{rejection.path or 'the object'}: {rejection.message} (a CEL rule of {self.origin()})"


def template(value: Any) -> bool:
    """An unquoted template action (`{{ .Values.x }}`), which YAML reads as a map with one
    `{...}` key and no value, or a test harness's placeholder (`{GATEWAY_CLASS_NAME}` quoted or
    not, `PLACEHOLDER_USABLE_ADDRS`: policylint.input.placeholders): PL004 reports the file, and
    it is no value of the object the API server receives, so no check reads it."""
    if type(value) is str:
        return (value[:1] == "{" or value[:12] == "PLACEHOLDER_") and whole_value(value, braces="all") is not None
    if type(value) is not dict or len(value) != 1:
        return False
    ((key, inner),) = value.items()
    if inner is not None or not isinstance(key, str):
        return False
    return (key.startswith("{") and key.endswith("}")) or whole_value(value, braces="all") is not None


# An unknown field: (path parts of the parent, its path, the unknown key, the keys the parent may
# have, whether the experimental channel's schema has the key: PL706's rather than PL702's).
PrunedField = tuple[tuple[str | int, ...], str, str, list[str], bool]


# -- which schema decides ------------------------------------------------------------------------


@record
class Catalogue:
    """The schemas and served versions that decide for one project (`catalogue`)."""

    cluster: Cluster  # what the cluster runs, declared or inferred (policylint.k8s.cluster)
    # From the CRDs in the input and given with --crd: (group, kind, version) -> schema, and
    # (group, kind) -> the versions they serve and the CRD in the input (None: given with --crd).
    given: dict[tuple[str, str, str], Mapping[str, Any]] = dataclass_field(default_factory=dict)
    given_served: dict[tuple[str, str], tuple[list[str], K8sObject | None]] = dataclass_field(default_factory=dict)
    # (group, kind, version) -> the warning of a deprecated version they serve.
    given_deprecated: dict[tuple[str, str, str], str] = dataclass_field(default_factory=dict)
    # The unknown fields of every object (which the API server prunes), once computed for PL702
    # and PL706 (policylint.rules.schema): per share of the objects (`Rule.share`; None: all).
    unknown: dict[tuple[int, int] | None, list[tuple[K8sObject, str | None, list[PrunedField]]]] = dataclass_field(
        default_factory=dict
    )
    # (id(schema node), `cel.shape` of a value) -> its schema violations and pruned fields, paths
    # relative to it (`violations`): the content of a map or list checked once per schema node.
    schema_results: dict[tuple[int, Any], Any] = dataclass_field(default_factory=dict)
    # (id(schema node), rule, result key) -> outcome: a CEL rule's result on values that agree in
    # what it reads is computed once (`cel.result_key`); most nodes of a repository repeat.
    # A node's rules together: (id(schema node), "", (the value's `cel.shape`,)) -> their outcomes;
    # a subtree with nothing refused: (id(schema node), "/", (its shape,)) -> True (`cel_failures`).
    cel_results: dict[tuple[int, str, tuple[Any, ...]], Any] = dataclass_field(default_factory=dict)
    # Schema -> a hash of its content (`fingerprint`).
    fingerprints: IdentityMap[Mapping[str, Any], bytes] = dataclass_field(default_factory=IdentityMap)
    # A number per schema, by identity, for the keys of `admitted`.
    schema_numbers: Numbering[Mapping[str, Any]] = dataclass_field(default_factory=Numbering)
    # (object, its schema's number) -> whether the schema admits the object whole (`admits`), also as
    # `admit` finds while it asks the other plausible schemas: each finding of a refused object
    # asks it of every plausible schema (policylint.rules.releases), and a walk of a large object
    # per finding would make hostile input quadratic.
    admitted: dict[tuple[K8sObject, int], bool] = dataclass_field(default_factory=dict)

    def fingerprint(self, schema: Mapping[str, Any]) -> bytes:
        """A hash of the schema's content, worked out once per schema and run: which schema decided
        a verdict kept between runs (`admit`)."""
        found = self.fingerprints.get(schema)
        if found is None:
            text = json.dumps(schema, sort_keys=True, separators=(",", ":"), default=repr)
            found = self.fingerprints[schema] = hashlib.blake2b(text.encode(), digest_size=16).digest()
        return found

    @property
    def channel(self) -> str:
        """The channel whose schemas decide first: the cluster's, else the standard one."""
        return self.cluster.channel.value or DEFAULT_CHANNEL

    @property
    def release(self) -> str:
        """The Gateway API release whose schemas decide first: the cluster's, else the newest."""
        return self.cluster.release.value or DEFAULT_GATEWAY_API_VERSION

    def bundled(
        self, channel: str | None = None, release: str | None = None, vendors: tuple[tuple[str, str], ...] | None = None
    ) -> Mapping[tuple[str, str, str], tuple[Mapping[str, Any], str]]:
        """The bundled schemas of a Gateway API channel and release (the cluster's by default), with
        the vendors' of the releases `vendors` names, else of the cluster's (the newest bundled
        where it is not known)."""
        from policylint.k8s.schemas import schemas

        return schemas(
            channel or self.channel, release or self.release, self.cluster.vendor_choice if vendors is None else vendors
        )

    def project(self, key: tuple[str, str, str]) -> str | None:
        """The vendor whose bundled CRD defines the kind (`envoy-gateway`); None: Gateway API's own
        kind, or one nothing bundled defines."""
        from policylint.k8s.schemas import vendor_projects

        return vendor_projects().get(key[:2])

    def decided_for(self, key: tuple[str, str, str]) -> bool:
        """Whether the release (and channel) whose bundled schema decides the kind is known: the
        vendor's release for a vendor's kind, Gateway API's release and channel for the others."""
        project = self.project(key)
        if project is not None:
            return self.cluster.vendor_release(project).value is not None
        return self.cluster.decided

    def schema(self, obj: K8sObject) -> tuple[Mapping[str, Any], str | None] | None:
        """The schema that decides the object's fields, and the bundled release it comes from
        (None: a CRD in the input or given with --crd, which the cluster serves). Bundled schemas
        are those of the cluster's channel and release; where the run does not know them, of the
        newest release and the standard channel that serve the object's version, else of the
        first plausible pair that does (`plausible`). An object whose version no plausible pair
        serves has none (PL705 reports it)."""
        key = (obj.group, obj.kind, obj.version)
        given = self.given.get(key)
        if given is not None:
            return given, None
        if key[:2] in self.given_served:
            return None  # its CRD decides, and does not serve the version (PL705)
        found = self.bundled().get(key)
        if found is not None or self.decided_for(key):
            return found
        return next((s for _, _, s in self.plausible(key) if s is not None), None)

    def plausible(self, key: tuple[str, str, str]) -> list[tuple[str, str, tuple[Mapping[str, Any], str] | None]]:
        """(release, channel, the bundled schema of `key` there or None: not served) for every
        Gateway API release and channel the cluster may run (`Cluster.releases`, `channels`),
        newest release first, the standard channel first. A vendor's kind: for every bundled
        release of the vendor the cluster may run (the known one, else all, newest first), in the
        run's channel (a vendor's CRDs are the same in both)."""
        project = self.project(key)
        if project is not None:
            from policylint.k8s.schemas import vendor_releases

            known = self.cluster.vendor_release(project).value
            others = tuple((name, release) for name, release in self.cluster.vendor_choice if name != project)
            return [
                (release, self.channel, self.bundled(vendors=(*others, (project, release))).get(key))
                for release in ((known,) if known is not None else reversed(vendor_releases()[project]))
            ]
        return [
            (release, channel, self.bundled(channel, release).get(key))
            for release in self.cluster.releases()
            for channel in self.cluster.channels()
        ]

    def accepting(self, key: tuple[str, str, str], accepts: Callable[[Mapping[str, Any]], bool]) -> list[tuple[str, str]]:
        """The plausible (release, channel) pairs whose schema of `key` `accepts` (asked once per
        distinct schema): empty when every one refuses, or does not serve the version."""
        verdicts: IdentityMap[Mapping[str, Any], bool] = IdentityMap()  # one per distinct schema
        out = []
        for release, channel, found in self.plausible(key):
            if found is None:
                continue
            schema = found[0]
            if schema not in verdicts:
                verdicts[schema] = accepts(schema)
            if verdicts[schema]:
                out.append((release, channel))
        return out

    def deprecation(self, obj: K8sObject) -> tuple[str, str | None] | None:
        """The warning the API server sends when the object's version is a deprecated one its
        CRD serves, and the bundled release it comes from (None: a given CRD); None when the
        version is not deprecated (or not served: PL705)."""
        return self.deprecation_of(obj.group, obj.kind, obj.version)

    def deprecation_of(self, group: str, kind: str, version: str) -> tuple[str, str | None] | None:
        from policylint.k8s.schemas import deprecated_versions

        if (group, kind) in self.given_served:
            warning = self.given_deprecated.get((group, kind, version))
            return None if warning is None else (warning, None)
        return deprecated_versions(self.channel, self.release, self.cluster.vendor_choice).get((group, kind, version))

    def given_with_option(self, obj: K8sObject) -> bool:
        """Whether the object's CRD was given with --crd (not in the input)."""
        given = self.given_served.get((obj.group, obj.kind))
        return given is not None and given[1] is None

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


def build_catalogue(index: ProjectIndex) -> Catalogue:
    """The catalogue of a project (`ProjectIndex.catalogue` builds it once): the given CRDs'
    schemas are compacted once for every reader."""
    from policylint.k8s.schemas import crd_deprecated, crd_schemas, crd_served

    options = index.options
    catalogue = Catalogue(index.cluster())
    for crd, in_input in [*((c, True) for c in index.crds()), *((c, False) for c in options.context_crds)]:
        if not isinstance(crd.data, dict):
            continue
        catalogue.given.update(crd_schemas(crd.data))
        catalogue.given_deprecated.update(crd_deprecated(crd.data))
        served = crd_served(crd.data)
        if served is not None:
            versions, _ = catalogue.given_served.setdefault(served[:2], ([], crd if in_input else None))
            versions.extend(v for v in served[2] if v not in versions)
    return catalogue


# -- the verdict ---------------------------------------------------------------------------------


def admit(index: ProjectIndex, obj: K8sObject) -> Admission | None:
    """The admission verdict of one object (None: no schema decides it, or it is no map).
    `ProjectIndex.admission` caches it.

    When the run does not know the cluster's release and channel and the first plausible schema
    refuses the object, the others are asked too: if one admits it, the first one's verdict stands
    (its findings are warnings naming those that admit it, policylint.rules.releases); if none
    does, the object fails on every cluster the run considers, and the verdict is that of the
    schema it fails least (fewest refusals, then fewest pruned fields): an experimental field's
    own mistake rather than the standard channel's not knowing the field."""
    if not isinstance(obj.data, dict):
        return None
    catalogue = index.catalogue()
    found = catalogue.schema(obj)
    if found is None:
        return None
    verdict = _admit(index, obj, catalogue, found)
    catalogue.admitted[obj, catalogue.schema_numbers(found[0])] = not verdict.rejected
    key_ = (obj.group, obj.kind, obj.version)
    if not verdict.rejected or catalogue.decided_for(key_) or verdict.source is None:
        return verdict
    # Ties go to the newer release, and within one to the experimental channel: it knows every
    # field the standard one does, so its complaint is the more specific.
    plausible = catalogue.plausible(key_)
    releases = tuple(dict.fromkeys(release for release, _, _ in plausible))

    def key(v: Admission, release: str, channel: str) -> tuple[int, int, int, int]:
        rank = releases.index(release) if release in releases else len(releases)
        return len(list(v.rejections())), len(v.pruned), rank, 0 if channel == "experimental" else 1

    first = releases[0] if catalogue.project(key_) is not None else catalogue.release
    candidates = [(key(verdict, first, catalogue.channel), verdict)]
    seen = IdentitySet([found[0]])
    for release, channel, other in plausible:
        if other is None or other[0] in seen:
            continue
        seen.add(other[0])
        alternative = _admit(index, obj, catalogue, other)
        catalogue.admitted[obj, catalogue.schema_numbers(other[0])] = not alternative.rejected
        if not alternative.rejected:
            return verdict
        candidates.append((key(alternative, release, channel), alternative))
    return min(candidates, key=lambda c: c[0])[1]


def admits(index: ProjectIndex, obj: K8sObject, schema: Mapping[str, Any]) -> bool:
    """Whether `schema` admits the object whole: no schema violation, no CEL rule refusing it."""
    if not isinstance(obj.data, dict):
        return False
    catalogue = index.catalogue()
    known = catalogue.admitted.get((obj, catalogue.schema_numbers(schema)))
    if known is not None:
        return known
    answer = not violations(obj.data, schema, catalogue.schema_results) and all(
        r.undecided for r in cel_failures(obj.data, schema, index.malformed(obj), catalogue.cel_results)
    )
    catalogue.admitted[obj, catalogue.schema_numbers(schema)] = answer
    return answer


def _admit(index: ProjectIndex, obj: K8sObject, catalogue: Catalogue, found: tuple[Mapping[str, Any], str | None]) -> Admission:
    schema, source = found
    given = source is None and catalogue.given_with_option(obj)
    kept = _kept_key(index, obj, catalogue, schema)
    if kept is not None:
        pruned_kept = _pruned_from_json(index.verdicts.get(kept))  # type: ignore[union-attr]
        if pruned_kept is not None:
            return Admission((), (), source, given, pruned_kept)
    # The memo tables only save work where content repeats; past a bound they are emptied (a
    # later repeat is computed again), so that they hold at most a few tens of MiB however
    # large the repository (their keys hold the content of every distinct subtree: 150 MiB of
    # a 100k-object run otherwise).
    if len(catalogue.schema_results) > MEMO_LIMIT:
        catalogue.schema_results.clear()
    if len(catalogue.cel_results) > MEMO_LIMIT:
        catalogue.cel_results.clear()
    shapes: dict[int, Any] = {}  # the object's maps and lists by content, for both walks (`cel.shape`)
    pruned: list[_Pruned] = []
    problems = tuple(
        Rejection(Check.SCHEMA, parts, format_path(parts), problem, reason)
        for parts, problem, reason in violations(obj.data, schema, catalogue.schema_results, shapes, pruned)
    )
    failures = tuple(cel_failures(obj.data, schema, index.malformed(obj), catalogue.cel_results, shapes))
    if kept is not None and not problems and not failures:
        index.verdicts.add(kept, [[list(parts), key, known] for parts, key, known in pruned])  # type: ignore[union-attr]
    return Admission(problems, failures, source, given, tuple(pruned))


# -- verdicts kept between runs ------------------------------------------------------------------
#
# Only verdicts that refuse nothing are kept (policylint.input.cache.VerdictStore): all they hold
# is the object's pruned fields, and they are most objects. A refusal carries CEL values and
# compiled rules, and is computed again; so is a CEL rule that ran out of budget (undecided).


def code_stamp() -> bytes:
    """What decides a verdict besides the object and its schema: the code that works it out (a
    development checkout changes it without changing policylint's version, which the cache's own
    stamp holds) and the version of RE2, which matches the schemas' patterns."""
    import importlib.util

    import re2

    from policylint.input import placeholders
    from policylint.input.cache import hash_sources

    # The modules' files, found without importing them: a run whose verdicts are all kept never
    # needs the CEL evaluator, a tenth of a warm run's imports.
    files: list[str | None] = [__file__]
    for name in ("policylint.k8s.cel", "policylint.k8s.fieldtypes", "policylint.k8s.strformats"):
        spec = importlib.util.find_spec(name)
        origin = spec.origin if spec is not None else None
        if origin is not None and os.path.basename(origin) == "__init__.py":
            # A package (the CEL evaluator): every module of it decides verdicts.
            folder = os.path.dirname(origin)
            files.extend(os.path.join(folder, f) for f in sorted(os.listdir(folder)) if f.endswith(".py"))
        else:
            files.append(origin)
    h = hashlib.blake2b(digest_size=16)
    # placeholders: which values no check reads (`template`).
    hash_sources(h, (*files, placeholders.__file__))
    # google-re2 has no version attribute; its compiled module's size and time name the build.
    try:
        built = os.stat(re2._re2.__file__)
        h.update(f"{built.st_size}:{built.st_mtime_ns}".encode())
    except (AttributeError, OSError, TypeError):
        h.update(b"?")
    return h.digest()


def _kept_key(index: ProjectIndex, obj: K8sObject, catalogue: Catalogue, schema: Mapping[str, Any]) -> str | None:
    """The key of the object's verdict among those kept: the object's content (its file's cache
    key, which names the bytes and the loader's version, and its place in the file) and the
    schema's. Nothing else decides the verdict: `index.malformed` reads the object alone.
    None: nothing is kept (no cache, or a file read from stdin)."""
    if index.verdicts is None:
        return None
    file_key = index.content_keys.get(obj.doc.file)
    if file_key is None:
        return None
    h = hashlib.blake2b(catalogue.fingerprint(schema), digest_size=16)
    h.update(f"{file_key}|{obj.doc.line}|{obj.doc.column}|{obj.prefix!r}".encode())
    return h.hexdigest()


def _pruned_from_json(value: Any) -> tuple[tuple[tuple[str | int, ...], str, list[str]], ...] | None:
    """The pruned fields a kept verdict holds, if it has exactly the shape `admit` writes."""
    if type(value) is not list:
        return None
    out = []
    for entry in value:
        if type(entry) is not list or len(entry) != 3:
            return None
        parts, key, known = entry
        if (
            type(parts) is not list
            or not all(type(p) is str or type(p) is int for p in parts)
            or type(key) is not str
            or type(known) is not list
            or not all(type(k) is str for k in known)
        ):
            return None
        out.append((tuple(parts), key, known))
    return tuple(out)


def validate(
    data: Mapping[str, Any], schema: Mapping[str, Any], results: dict[Any, Any] | None = None
) -> tuple[list[Rejection], list[Rejection]]:
    """What the schema and its CEL rules refuse in a value that is no object of the input (a
    merged effective spec): (schema rejections, CEL rejections), as `admit` finds them. The
    value is taken as the object's root: pass `{"spec": ...}` with the kind's root schema."""
    from policylint.k8s.fieldtypes import Malformed

    problems = [Rejection(Check.SCHEMA, p, format_path(p), m, r) for p, m, r in violations(data, schema)]
    failures = list(cel_failures(data, schema, Malformed(), {} if results is None else results))
    return problems, failures


# -- the structural schema -----------------------------------------------------------------------

# (path, what is wrong, the API server's field error type)
_Violation = tuple[tuple[str | int, ...], str, str]
_Pruned = tuple[tuple[str | int, ...], str, list[str]]
_TYPE = "FieldValueTypeInvalid"
_INVALID = "FieldValueInvalid"
_TOO_MANY = {"maxLength": "FieldValueTooLong", "maxItems": "FieldValueTooMany", "maxProperties": "FieldValueTooMany"}

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


def violations(
    data: Mapping[str, Any],
    schema: Mapping[str, Any],
    seen: dict[tuple[int, Any], tuple[tuple[_Violation, ...], tuple[_Pruned, ...]]] | None = None,
    shapes: dict[int, Any] | None = None,
    pruned: list[_Pruned] | None = None,
) -> list[_Violation]:
    """(path, what is wrong) for every value the schema rejects: type, enum, string length,
    pattern and format, numeric bounds, item and property counts, and missing required fields.
    Patterns are matched with RE2, the engine of the API server's Go regexp, in linear time; a
    pattern RE2 does not compile, and a format Kubernetes does not validate, check nothing
    (policylint.k8s.strformats).

    `seen` ((id(schema node), the value's `cel.shape`) -> what is wrong under it, paths relative
    to it) lets a map or list whose content was checked under the same schema node before take
    that answer (repositories repeat their routes' rules, matches and filters); `shapes` is the
    object's memo of `cel.shape`. `pruned` receives the fields the schema does not define (see
    `Admission.pruned`), found by the same walk."""
    root = {k: v for k, v in data.items() if k not in TOP_LEVEL_SKIPPED}
    top_required = [r for r in schema.get("required", ()) if r not in TOP_LEVEL_SKIPPED]
    out: list[_Violation] = []
    unknown: list[_Pruned] = pruned if pruned is not None else []
    budget = _Budget(root)
    _walk(out, unknown, root, {**schema, "required": top_required}, (), seen, {} if shapes is None else shapes, budget)
    return out


class _Budget:
    """What the schemas' allOf, anyOf, oneOf and not may still visit in one object. Each
    alternative walks the value again and alternatives nest, so a CRD could ask for exponential
    work: the alternatives of an object visit at most a few times its own values (worked out on
    the first alternative, so objects without any pay nothing), and nest at most `DEPTH` deep.
    Past either, an alternative counts as matched: no finding rests on a check not made."""

    BASE = 1_000
    PER_VALUE = 16
    DEPTH = 16
    __slots__ = ("depth", "left", "root", "started")

    def __init__(self, root: Any) -> None:
        self.root = root
        self.started = False
        self.left = 0
        self.depth = 0

    def start(self) -> None:
        if not self.started:
            self.started = True
            self.left = self.BASE + self.PER_VALUE * _count_values(self.root)
            self.root = None

    @property
    def exhausted(self) -> bool:
        return self.left < 0


def _count_values(root: Any, most: int = 10_000_000) -> int:
    count, stack = 0, [root]
    while stack and count < most:
        value = stack.pop()
        count += 1
        if type(value) is dict:
            stack.extend(value.values())
        elif type(value) is list:
            stack.extend(value)
    return count


def _walk(
    out: list[_Violation],
    unknown: list[_Pruned],
    start: Any,
    schema: Mapping[str, Any],
    at: tuple[str | int, ...],
    seen: dict[tuple[int, Any], tuple[tuple[_Violation, ...], tuple[_Pruned, ...]]] | None,
    shapes: dict[int, Any],
    budget: _Budget,
    counted: bool = False,
) -> bool:
    """`violations`' walk of one value under one schema node, into `out` and `unknown`. With
    `counted` (an alternative of allOf, anyOf, oneOf or not), each value visited spends the
    budget; False when it ran out before the walk was done."""
    from policylint.k8s.cel import shape

    quiet = 0  # > 0: under a node that keeps unknown fields (or an embedded resource)
    stack: list[tuple[Any, Any, Any]] = [(start, schema, at)]
    while stack:
        value, node, path = stack.pop()
        if counted:
            budget.left -= 1
            if budget.exhausted:
                return False
        if value is _END:
            if node is None:
                quiet -= 1
                continue
            if budget.exhausted:
                continue  # alternatives left unchecked under it: no answer to give other objects
            key, start, depth, first = node
            seen[key] = (  # type: ignore[index]
                tuple((p[depth:], m, r) for p, m, r in out[start:]),
                tuple((p[depth:], k, known) for p, k, known in unknown[first:]),
            )
            continue
        if value is None or (((type(value) is dict and len(value) == 1) or type(value) is str) and template(value)):
            continue  # a null is an unset field to the API server; a template action or placeholder is PL004's
        if seen is not None and path and (type(value) is dict or type(value) is list):
            whole = shape(value, shapes)
            if whole is not None:
                key = (id(node), whole)
                got = seen.get(key)
                if got is not None:
                    out.extend(((*path, *p), m, r) for p, m, r in got[0])
                    unknown.extend(((*path, *p), k, known) for p, k, known in got[1])
                    continue
                stack.append((_END, (key, len(out), len(path), len(unknown)), None))
        if node.get(PRESERVE) or node.get(EMBEDDED):
            quiet += 1
            stack.append((_END, None, None))
        if node.get("x-kubernetes-int-or-string"):
            if isinstance(value, bool) or not isinstance(value, (int, str)):
                out.append((path, f"is {_kind_of(value)}, where the schema takes an integer or a string", _TYPE))
            elif node.get(COMBINED):  # a quantity's patterns (allOf), which apply to its strings
                _combined(out, path, value, node, shapes, budget)
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
            out.append(
                (path, f"is {_kind_of(value)}, where the schema takes {'an' if wanted[0] in 'aeio' else 'a'} {wanted}", _TYPE)
            )
            continue
        if node.get(COMBINED):
            _combined(out, path, value, node, shapes, budget)
        enum = node.get("enum")
        if isinstance(enum, list) and not isinstance(value, (dict, list)) and value not in enum:
            shown = ", ".join(repr(e) for e in enum[:12]) + (", ..." if len(enum) > 12 else "")
            out.append((path, f"is {value!r}, not one of the values the schema allows ({shown})", "FieldValueNotSupported"))
        if isinstance(value, str):
            _bound(out, path, len(value), node, "minLength", "maxLength", "characters long")
            _string(out, path, value, node)
        elif isinstance(value, (int, float)) and not isinstance(value, bool):
            _value_bound(out, path, value, node)
        elif isinstance(value, list):
            _bound(out, path, len(value), node, "minItems", "maxItems", "items")
            items = node.get("items")
            if isinstance(items, dict):
                if None in value:
                    _null_items(out, path, value, items)
                stack.extend((item, items, (*path, i)) for i, item in reversed(list(enumerate(value))))
            if LIST_TYPE in node:
                _duplicates(out, path, value, node, items if isinstance(items, dict) else {})
        elif isinstance(value, dict):
            _bound(out, path, len(value), node, "minProperties", "maxProperties", "fields")
            properties = node.get("properties") or {}
            for name in node.get("required", ()):
                # The API server sets a field's default before it validates: a default satisfies.
                if value.get(name) is None and "default" not in properties.get(name, {}):
                    out.append(((*path, name), "is required by the schema and missing", "FieldValueRequired"))
            if node.get(PRESERVE) and node.get("properties") is None:
                continue
            additional = node.get("additionalProperties")
            children = []
            for key, child in value.items():
                sub = properties.get(key)
                if sub is None and isinstance(additional, dict):
                    sub = additional
                if sub is None:
                    if not quiet and additional is not True and (additional is not None or node.get("properties") is not None):
                        unknown.append((path, str(key), sorted(properties)))
                    continue
                if type(child) is str and sub.get("type") == "string" and "enum" not in sub and COMBINED not in sub:
                    # Most values: a string whose length, pattern and format are all there is to
                    # check, checked here.
                    least, most = sub.get("minLength"), sub.get("maxLength")
                    if (least is None or len(child) >= least) and (most is None or len(child) <= most):
                        if "pattern" in sub or "format" in sub:
                            _string(out, (*path, key), child, sub)
                        continue
                children.append((child, sub, (*path, key)))
            stack.extend(reversed(children))
    return True


LIST_TYPE = "x-kubernetes-list-type"
DUPLICATE = "FieldValueDuplicate"  # the API server's field error type for a duplicate list item


def _null_items(out: list[_Violation], path: tuple[str | int, ...], value: list[Any], items: Mapping[str, Any]) -> None:
    """A null list item is not an unset field, as a null field is: the API server refuses it as
    a value of the wrong type, unless the item schema is nullable."""
    wanted = items.get("type")
    if items.get("nullable") or not isinstance(wanted, str) or wanted not in _TYPES:
        return
    for i, item in enumerate(value):
        if item is None:
            what = f"{'an' if wanted[0] in 'aeio' else 'a'} {wanted}"
            out.append(((*path, i), f"is null, where the schema takes {what}", _TYPE))


def _duplicates(
    out: list[_Violation], path: tuple[str | int, ...], value: list[Any], node: Mapping[str, Any], items: Mapping[str, Any]
) -> None:
    """Items a `set` list holds twice, or a `map` list holds under the same keys (the API server's
    "Duplicate value"; Kubernetes' "Merge strategy" of structural schemas), each value or key
    once, at its first repeat (a list of thousands of one value is one mistake). The keys of a map
    list read an item's value or, where it has none, the key's default, as the API server
    defaults an item before it validates."""
    list_type = node.get(LIST_TYPE)
    if list_type == "set":
        keys: list[str] = []
        noun = "the list is a set (x-kubernetes-list-type: set), so each value may appear once"
    elif list_type == "map":
        keys = [k for k in node.get("x-kubernetes-list-map-keys") or () if isinstance(k, str)]
        if not keys:
            return
        noun = (
            f"the list is a map keyed by {', '.join(keys)} (x-kubernetes-list-type: map), so each"
            f" {'key' if len(keys) == 1 else 'combination of keys'} may appear once"
        )
    else:
        return
    properties = items.get("properties") or {}
    first: dict[Any, int] = {}
    said: set[Any] = set()
    for i, item in enumerate(value):
        if list_type == "set":
            if item is None:
                continue
            key: Any = _identity(item)
        else:
            if type(item) is not dict:
                continue  # the wrong type: a type violation already
            key = tuple(_identity(item.get(k, (properties.get(k) or {}).get("default"))) for k in keys)
        j = first.setdefault(key, i)
        if j != i and key not in said:
            said.add(key)
            out.append(((*path, i), f"duplicates item [{j}]: {noun}", DUPLICATE))


def _identity(value: Any) -> Any:
    """A hashable value equal for two YAML values exactly when they are equal as JSON values of
    the same types (`1` is not `"1"`, nor `true`)."""
    if type(value) in (str, int, float, bool) or value is None:
        return (type(value), value)
    try:
        return (type(value), json.dumps(value, sort_keys=True, default=str))
    except (RecursionError, ValueError):
        return object()  # too deep to compare (the loader's bounds refuse most such input): unequal


def _combined(
    out: list[_Violation],
    path: tuple[str | int, ...],
    value: Any,
    node: Mapping[str, Any],
    shapes: dict[int, Any],
    budget: _Budget,
) -> None:
    """The schema's allOf, anyOf, oneOf and not over a value, as kube-openapi's validator applies
    them (k8s.io/kube-openapi/pkg/validation/validate/schema_props.go): every allOf alternative,
    at least one anyOf alternative, exactly one oneOf alternative, and not the `not` schema. The
    API server defaults an object before it validates it, so the alternatives see the value with
    the defaults of the schema's own properties (a Gateway address without `type` is an
    IPAddress to its oneOf)."""
    if budget.depth >= budget.DEPTH:
        return  # alternatives nested deeper than any real schema's: not checked
    budget.start()
    value = _defaulted(value, node, budget)
    if budget.exhausted:
        return  # the budget ran out setting the defaults: nothing is checked

    def alternative(sub: Any) -> list[_Violation] | None:
        """What the alternative refuses in the value; None: not known (the budget ran out)."""
        if not isinstance(sub, dict):
            return []
        found: list[_Violation] = []
        budget.depth += 1
        try:
            done = _walk(found, [], value, sub, path, None, shapes, budget, counted=True)
        finally:
            budget.depth -= 1
        return found if done else None

    start = len(out)
    for sub in node.get("allOf") or ():
        for violation in alternative(sub) or ():
            if violation not in out[start:]:  # `allOf: [{enum: [...]}, {enum: [...]}]`, as generators write
                out.append(violation)
    any_of = node.get("anyOf")
    if any_of:
        refused: list[list[_Violation]] = []
        for sub in any_of:
            found = alternative(sub)
            if not found:
                break
            refused.append(found)
        else:
            out.append((path, f"matches none of the schema's anyOf alternatives [{_alternatives(path, refused)}]", _INVALID))
    one_of = node.get("oneOf")
    if one_of:
        results = [alternative(sub) for sub in one_of]
        if all(r is not None for r in results):
            matched = sum(1 for r in results if not r)
            if matched == 0:
                what = f"matches none of the schema's oneOf alternatives [{_alternatives(path, results)}]"  # type: ignore[arg-type]
                out.append((path, what, _INVALID))
            elif matched > 1:
                what = f"matches {matched} of the schema's oneOf alternatives, where exactly one must match"
                out.append((path, what, _INVALID))
    forbidden = node.get("not")
    if isinstance(forbidden, dict) and alternative(forbidden) == []:
        if isinstance(value, (dict, list)):
            out.append((path, "matches what the schema's `not` excludes", _INVALID))
        else:
            shown = _shown(value) if isinstance(value, str) else repr(value)
            out.append((path, f"is {shown}, which the schema's `not` excludes", _INVALID))


def _alternatives(path: tuple[str | int, ...], refused: list[list[_Violation]]) -> str:
    """What each alternative refused, first violation each, relative to `path`."""
    parts = []
    for n, found in enumerate(refused[:4], 1):
        where, problem, _ = found[0]
        rel = format_path(where[len(path) :]).lstrip(".")
        text = f"{rel} {problem}" if rel else problem
        # Alternatives nest, and so would their texts: each is cut, so a message stays short.
        parts.append(f"{n}: {text if len(text) <= 240 else text[:237] + '...'}")
    return "; ".join(parts) + ("; ..." if len(refused) > 4 else "")


def _defaulted(value: Any, node: Mapping[str, Any], budget: _Budget) -> Any:
    """The value with the defaults of the schema's properties set where it has none, through its
    maps and lists, as the API server defaults an object before validating it. A copy where
    anything was set; the object itself is never changed. Each map and list spends the budget."""
    if isinstance(value, (dict, list)):
        budget.left -= 1
        if budget.exhausted:
            return value
    if isinstance(value, dict):
        properties = node.get("properties")
        additional = node.get("additionalProperties")
        out: dict[str, Any] | None = None
        if isinstance(properties, dict):
            for name, sub in properties.items():
                if value.get(name) is None and "default" in sub:
                    out = dict(value) if out is None else out
                    out[name] = sub["default"]
        for key, child in value.items():
            sub = properties.get(key) if isinstance(properties, dict) else None
            if sub is None and isinstance(additional, dict):
                sub = additional
            if isinstance(sub, dict) and isinstance(child, (dict, list)):
                new = _defaulted(child, sub, budget)
                if new is not child:
                    out = dict(value) if out is None else out
                    out[key] = new
        return value if out is None else out
    if isinstance(value, list):
        items = node.get("items")
        if isinstance(items, dict):
            new_items = [_defaulted(item, items, budget) for item in value]
            if any(a is not b for a, b in zip(new_items, value)):
                return new_items
    return value


def _bound(
    out: list[_Violation],
    path: tuple[str | int, ...],
    n: int,
    node: Mapping[str, Any],
    low: str,
    high: str,
    unit: str,
) -> None:
    least, most = node.get(low), node.get(high)
    if isinstance(least, int) and n < least:
        out.append((path, f"is {n} {unit}, fewer than the schema's {low} of {least}", _INVALID))
    if isinstance(most, int) and n > most:
        out.append((path, f"is {n} {unit}, more than the schema's {high} of {most}", _TOO_MANY.get(high, _INVALID)))


def _shown(text: str, most: int = 80) -> str:
    return repr(text if len(text) <= most else text[:most] + "...")


def _string(out: list[_Violation], path: tuple[str | int, ...], value: str, node: Mapping[str, Any]) -> None:
    """The schema's `pattern` (Go regexp, searched) and `format` (kube-openapi strfmt)."""
    from policylint.k8s.strformats import format_ok, matches

    pattern, fmt = node.get("pattern"), node.get("format")
    if isinstance(pattern, str) and matches(pattern, value) is False:
        shown = pattern if len(pattern) <= 160 else pattern[:160] + "..."
        found = _placeholder_cause(value, lambda v: matches(pattern, v) is not False)
        what = f"which does not match the schema's pattern `{shown}`"
        if found is not None:
            out.append((path, f"{_unrendered_problem(found, value)}, {what}", _INVALID))
        else:
            out.append((path, f"is {_shown(value)}, {what}", _INVALID))
    if isinstance(fmt, str) and format_ok(fmt, value) is False:
        found = _placeholder_cause(value, lambda v: format_ok(fmt, v) is not False)
        if found is not None:
            out.append((path, f"{_unrendered_problem(found, value)}, not a valid {fmt} (the schema's format)", _INVALID))
        else:
            out.append((path, f"is {_shown(value)}, not a valid {fmt} (the schema's format)", _INVALID))


# How a schema rejection caused by a template or variable placeholder begins (PL703 then says to
# render or substitute first, not to lint with newer CRDs).
UNRENDERED = "holds the unrendered placeholder"
# Stand-ins for a placeholder's rendered value: a name, and a number.
_STAND_INS = ("x", "0")


def _unrendered_problem(found: str, value: str) -> str:
    return f"{UNRENDERED} {_shown(found)}" + ("" if found == value else f" (is {_shown(value)})")


def _placeholder_cause(value: str, accepts: Callable[[str], bool]) -> str | None:
    """The first placeholder in a string a check refuses (`{{ }}`, `${VAR}`, `$(VAR)`,
    `<name>`), when it is what the check refuses: with every placeholder replaced by a
    stand-in, the value passes. Only on the path of a refusal, so it costs nothing otherwise."""
    from policylint.input.load import unrendered

    found = unrendered(value)
    if not found:
        return None
    for stand_in in _STAND_INS:
        rendered = value
        for text in found:
            rendered = rendered.replace(text, stand_in)
        if accepts(rendered):
            return found[0]
    return None


def _value_bound(out: list[_Violation], path: tuple[str | int, ...], value: float, node: Mapping[str, Any]) -> None:
    least, most = node.get("minimum"), node.get("maximum")
    if isinstance(least, (int, float)) and (value < least or (node.get("exclusiveMinimum") is True and value == least)):
        out.append((path, f"is {value}, below the schema's minimum of {least}", _INVALID))
    if isinstance(most, (int, float)) and (value > most or (node.get("exclusiveMaximum") is True and value == most)):
        out.append((path, f"is {value}, above the schema's maximum of {most}", _INVALID))


# -- CEL validation rules ------------------------------------------------------------------------


def cel_failures(
    data: Mapping[str, Any],
    schema: Mapping[str, Any],
    malformed: Malformed,
    results: dict[tuple[int, str, tuple[Any, ...]], Any],
    shapes: dict[int, Any] | None = None,
) -> Iterator[Rejection]:
    """The CEL rules of the schema that refuse the object, node by node (parents first, in
    document order), each rule compiled once per text and run only on the nodes the object has.
    A rule is not run on a value of the wrong type (the schema refuses it first), nor counted
    when it fails only for a required field that is missing (a schema rejection already).

    The rules of one object share the API server's runtime cost budget (`RUNTIME_BUDGET`;
    k8s.io/apiextensions-apiserver pkg/apiserver/schema/cel/validation.go): each evaluation is
    cancelled past `PER_CALL_LIMIT`, and its cost, known from a result seen before or
    worked out, is charged to the object; a cancelled evaluation or a spent budget is a
    rejection naming the rule, and no further rule is run, as the API server does."""
    from policylint.k8s import cel
    from policylint.k8s.cel.cost import PER_CALL_LIMIT, RUNTIME_BUDGET

    if not subtree_has_rules(schema):
        return
    memo: dict[int, Any] = {}
    if shapes is None:
        shapes = {}  # the object's maps and lists, by content (`cel.shape`)
    # The walk of `cel_nodes`, which also skips a subtree whose content was seen under the same
    # schema node with nothing refused in it (no rule failed, none left out for a malformed
    # field): (id(schema node), "/", (its shape,)) -> what its rules cost. `open_` holds the
    # subtrees being walked, each with whether something under it was refused or left out so
    # far, and the cost spent when it was entered.
    stack: list[Any] = [(data, schema, ())]
    open_: list[list[Any]] = []
    spent = 0  # of the object's runtime cost budget
    while stack:
        raw, node, parts = stack.pop()
        if raw is _END:
            slot, dirty, entered = open_.pop()
            if not dirty:
                results[slot] = spent - entered
            continue
        if raw is None or template(raw):
            continue
        if parts:
            whole = cel.shape(raw, shapes)
            if whole is not None:
                subtree = (id(node), "/", (whole,))
                cost = results.get(subtree)
                if cost is not None and spent + cost <= RUNTIME_BUDGET:
                    spent += cost
                    continue  # nothing under it is refused, and the budget covers it
                open_.append([subtree, False, spent])
                stack.append((_END, None, None))
        _, kids, extra, each, own, scalars = _plan(node)  # scalars: some map value has rules of its own
        if type(raw) is dict:
            if kids is not None:
                children: list[Any] = []
                for key, child in raw.items():
                    if (type(child) is dict or type(child) is list) and (parts or key not in TOP_LEVEL_SKIPPED):
                        sub = kids.get(key, _UNSET)
                        if sub is _UNSET:
                            sub = extra
                        if sub is not None:
                            children.append((child, sub, (*parts, key)))
                    elif scalars and child is not None and (parts or key not in TOP_LEVEL_SKIPPED):
                        sub = kids.get(key, _UNSET)
                        if sub is _UNSET:
                            sub = extra
                        if sub is not None and sub.get(VALIDATIONS):
                            children.append((child, sub, (*parts, key)))
                stack.extend(reversed(children))
        elif type(raw) is list and each is not None:
            stack.extend((item, each, (*parts, i)) for i, item in reversed(list(enumerate(raw))))
        if not own:
            continue
        if malformed.broken(*parts):
            for frame in open_:
                frame[1] = True
            continue  # the value or a parent has the wrong type: PL010's finding
        value: Any = _UNSET
        path: str | None = None
        # Transition rules and unsupported functions are left out: `policylint rules --cel-coverage`.
        rules = cel.node_rules(node)
        # The outcomes of all the node's rules on a value of the same content, when one was seen
        # (repositories repeat their routes' rules, matches and filters): nothing to evaluate.
        whole = cel.shape(raw, shapes) if parts and rules else None
        node_slot = (id(node), "", (whole,)) if whole is not None else None
        known = results.get(node_slot) if node_slot is not None else None
        seen: list[Any] = []
        for i, (validation, compiled) in enumerate(rules):
            if known is not None:
                outcome = known[i]
            else:
                key = cel.result_key(compiled, raw, shapes) if parts else None
                slot = (id(node), compiled.text, key) if key is not None else None
                outcome = results.get(slot, _UNSET) if slot is not None else _UNSET
                if outcome is _UNSET:
                    if value is _UNSET:
                        value = root_value(data, node, memo) if not parts else cel.to_cel(raw, node, memo)
                    # None: the node's value has the wrong type for its schema (a schema rejection;
                    # the API server does not run the rules then).
                    outcome = None if value is cel.BAD else cel.evaluate_within(compiled, value, PER_CALL_LIMIT)
                    if slot is not None:
                        results[slot] = outcome
                seen.append(outcome)
            if outcome is None:
                break
            passed, error, cost = outcome
            spent += cost
            stop = _out_of_budget(compiled, validation, error, spent)
            if stop is not None:
                for frame in open_:
                    frame[1] = True
                if value is _UNSET:
                    value = root_value(data, node, memo) if not parts else cel.to_cel(raw, node, memo)
                path = format_path(parts) if path is None else path
                failure = CelFailure(validation, compiled, value, error, path)
                yield Rejection(Check.CEL, parts, path, stop, "FieldValueInvalid", failure)
                return  # "no further validation rules will be run"
            if passed or isinstance(error, cel.BadValue):
                continue  # a value the schema refuses, read by the rule
            if value is _UNSET:
                value = root_value(data, node, memo) if not parts else cel.to_cel(raw, node, memo)
            for frame in open_:
                frame[1] = True
            if error is not None and error.message.startswith("no such key: "):
                if error.message[len("no such key: ") :] in memo.get(cel.MISSING, ()):
                    continue  # a required field is missing: a schema rejection
            if path is None:
                path = format_path(parts)
            at = field_path(path, validation.get("fieldPath"))
            failure = CelFailure(validation, compiled, value, error, path)
            given_reason = validation.get("reason")
            reason = given_reason if isinstance(given_reason, str) and given_reason else "FieldValueInvalid"
            if isinstance(error, cel.TooLarge):
                said = f"the CEL rule `{compiled.text}` was not evaluated to the end: {error.message}"
                yield Rejection(Check.CEL, parts, at, said, reason, failure, undecided=True)
                continue
            if error is not None:
                # What the API server says when a rule fails to evaluate (no such key, no such overload).
                said = f"{error.message} evaluating rule: {compiled.text}"
            else:
                said, cost, stopped = cel.message_of(validation, value)
                spent += cost
                if stopped is None and spent > RUNTIME_BUDGET:
                    stopped = (
                        "messageExpression evaluation failed due to running out of cost budget,"
                        " no further validation rules will be run"
                    )
                if stopped is not None:
                    yield Rejection(Check.CEL, parts, at, stopped, "FieldValueInvalid", failure)
                    return
            yield Rejection(Check.CEL, parts, at, said, reason, failure)
        if known is None and node_slot is not None:
            results[node_slot] = tuple(seen)


def _out_of_budget(compiled: Compiled, validation: Mapping[str, Any], error: EvalError | None, spent: int) -> str | None:
    """What the API server says when a rule's evaluation was cancelled at the per-call limit or
    the object's budget is spent with it (validation.go), naming the rule; None otherwise."""
    from policylint.k8s import cel
    from policylint.k8s.cel.cost import RUNTIME_BUDGET

    message = validation.get("message")
    named = message.strip() if isinstance(message, str) and message.strip() else compiled.text.strip()
    if isinstance(error, cel.CostExceeded):
        return f"'{error.message}': no further validation rules will be run due to call cost exceeds limit for rule: {named}"
    if spent > RUNTIME_BUDGET:
        return (
            "validation failed due to running out of cost budget, no further validation rules will be run"
            f" (the budget ran out at the rule: {named})"
        )
    return None


# Schema node -> whether anything under it has CEL rules (`subtree_has_rules`).
_SUBTREE: IdentityMap[Mapping[str, Any], bool] = IdentityMap()
# Schema node -> (the node, its properties' schemas where rules are below them (else None;
# None for all: no property or additional property leads to a rule), its additionalProperties'
# schema where rules are below, its items' schema where rules are below, whether it has rules,
# whether a property's or additionalProperties' schema has rules of its own, for scalar values).
_PLANS: IdentityMap[Mapping[str, Any], tuple[Mapping[str, Any], dict[Any, Any] | None, Any, Any, bool, bool]] = IdentityMap()


def _plan(node: Mapping[str, Any]) -> tuple[Mapping[str, Any], dict[Any, Any] | None, Any, Any, bool, bool]:
    """What `cel_failures` walks under a schema node, worked out once per node."""
    got = _PLANS.get(node)
    if got is not None:
        return got
    properties = node.get("properties") or {}
    additional = node.get("additionalProperties")
    kids: dict[Any, Any] | None = {k: sub if subtree_has_rules(sub) else None for k, sub in properties.items()}
    extra = additional if isinstance(additional, dict) and subtree_has_rules(additional) else None
    if extra is None and not any(v is not None for v in kids.values()):  # type: ignore[union-attr]
        kids = None
    items = node.get("items")
    each = items if isinstance(items, dict) and subtree_has_rules(items) else None
    # Scalar values with rules of their own (`duration(self) > duration('0s')`, a string's
    # `self.size() == 0`): the walk looks at a map's scalars only where these say so.
    scalars = any(isinstance(sub, dict) and sub.get(VALIDATIONS) for sub in properties.values()) or bool(
        extra is not None and extra.get(VALIDATIONS)
    )
    plan = (node, kids, extra, each, bool(node.get(VALIDATIONS)), scalars)
    if len(_PLANS) > 100_000:
        _PLANS.clear()  # CRDs read from many inputs in one process (tests): keep the cache bounded
    _PLANS[node] = plan
    return plan


_END: Any = object()  # on the walk's stack: the subtree above is done


def subtree_has_rules(node: Mapping[str, Any]) -> bool:
    """Whether a schema node or anything under it has CEL rules (cached by the node's identity)."""
    got = _SUBTREE.get(node)
    if got is not None:
        return got
    found = bool(node.get(VALIDATIONS))
    if not found:
        children: list[Any] = [*(node.get("properties") or {}).values(), node.get("items"), node.get("additionalProperties")]
        found = any(isinstance(c, dict) and subtree_has_rules(c) for c in children)
    if len(_SUBTREE) > 100_000:
        _SUBTREE.clear()  # CRDs read from many inputs in one process (tests): keep the cache bounded
    _SUBTREE[node] = found
    return found


def cel_nodes(
    data: Mapping[str, Any], schema: Mapping[str, Any]
) -> Iterator[tuple[tuple[str | int, ...], Any, Mapping[str, Any]]]:
    """(path, value, schema node) for every node of the object with CEL rules, parents first, in
    document order; metadata, status and unrendered template values are left out."""
    stack: list[tuple[Any, Mapping[str, Any], tuple[str | int, ...]]] = [(data, schema, ())]
    while stack:
        value, node, path = stack.pop()
        if value is None or template(value):
            continue
        if node.get(VALIDATIONS):
            yield path, value, node
        children: list[tuple[Any, Mapping[str, Any], tuple[str | int, ...]]] = []
        if type(value) is dict:
            properties = node.get("properties") or {}
            additional = node.get("additionalProperties")
            for key, child in value.items():
                if not path and key in TOP_LEVEL_SKIPPED:
                    continue
                sub = properties.get(key)
                if sub is None and isinstance(additional, dict):
                    sub = additional
                if sub is not None and (
                    ((type(child) is dict or type(child) is list) and subtree_has_rules(sub)) or sub.get(VALIDATIONS)
                ):
                    children.append((child, sub, (*path, key)))
        elif type(value) is list:
            items = node.get("items")
            if isinstance(items, dict) and subtree_has_rules(items):
                children.extend((item, items, (*path, i)) for i, item in enumerate(value))
        stack.extend(reversed(children))


def root_value(data: Mapping[str, Any], schema: Mapping[str, Any], memo: dict[int, Any]) -> Any:
    """The object as rules on the schema's root see it: without status, with apiVersion, kind
    and of metadata only name and generateName (what the API server lets root rules read)."""
    from policylint.k8s import cel

    body = {k: v for k, v in data.items() if k not in TOP_LEVEL_SKIPPED}
    value = cel.to_cel(
        body,
        {**schema, "properties": {k: v for k, v in (schema.get("properties") or {}).items() if k not in TOP_LEVEL_SKIPPED}},
        memo,
    )
    if type(value) is dict:
        for key in ("apiVersion", "kind"):
            if isinstance(data.get(key), str):
                value[key] = data[key]
        metadata = data.get("metadata")
        if isinstance(metadata, dict):
            value["metadata"] = {k: metadata[k] for k in ("name", "generateName") if isinstance(metadata.get(k), str)}
    return value


def field_path(path: str, field_path: Any) -> str:
    """The node's path extended by a validation's `fieldPath` (`.spec.foo`, `['a.b']`), relative
    to the node; the node's own path when it has none or it cannot be read."""
    if not isinstance(field_path, str) or not field_path:
        return path
    parts: list[str | int] = []
    i, n = 0, len(field_path)
    while i < n:
        if field_path[i] == ".":
            j = i + 1
            while j < n and field_path[j] not in ".[":
                j += 1
            if j == i + 1:
                return path
            parts.append(field_path[i + 1 : j])
            i = j
        elif field_path.startswith("['", i):
            j = field_path.find("']", i + 2)
            if j < 0:
                return path
            parts.append(field_path[i + 2 : j])
            i = j + 2
        elif field_path[i] == "[":
            j = field_path.find("]", i + 1)
            if j < 0 or not field_path[i + 1 : j].isdigit():
                return path
            parts.append(int(field_path[i + 1 : j]))
            i = j + 1
        else:
            return path
    extra = format_path(tuple(parts))
    if not path:
        return extra
    return path + (extra if extra.startswith("[") else "." + extra)
