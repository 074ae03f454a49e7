"""What the API server would reject in an object: its admission verdict, before any controller.

The API server validates a custom object against its CRD's structural schema (types, enums,
bounds, patterns, formats, required fields) and then runs the CRD's CEL validation rules
(`x-kubernetes-validations`); an object that fails either is refused, whole. This module
computes that verdict offline, typed and with its reasons, once per object (the admission stage,
policylint.k8s.admissions, asks for it and keeps it), so that the schema rules (PL703, PL704)
report it and the topology reads it: a policy the API server refuses never reaches its
controller (`Topology.policy_errors`).

Which schema decides (`Catalogue`): a CRD in the input or given with `--crd`, which is what the
cluster serves; else the bundled schemas of the Gateway API channel and release the run names
(`--channel`, default standard; `--gateway-api-version`), with the vendor CRDs'. Unknown fields
are not rejections: the API server prunes them (PL702's; `kubectl apply` refuses them only by
its client-side default of strict field validation).
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable, Mapping
from dataclasses import field as dataclass_field
from typing import TYPE_CHECKING, Any

from policylint.identity import IdentityMap, IdentitySet, Numbering
from policylint.input.positions import format_path
from policylint.k8s.celrules import cel_failures, cel_nodes, cel_rejections, field_path, root_value, subtree_has_rules
from policylint.k8s.cluster import Cluster
from policylint.k8s.listchecks import DUPLICATE, LIST_TYPE
from policylint.k8s.schemas import DEFAULT_CHANNEL, DEFAULT_GATEWAY_API_VERSION
from policylint.k8s.schemawalk import UNRENDERED, Pruned, violations
from policylint.k8s.shapes import SharedShapes
from policylint.k8s.verdicts import (
    EMBEDDED,
    PRESERVE,
    TOP_LEVEL_SKIPPED,
    VALIDATIONS,
    Admission,
    CelFailure,
    Check,
    PrunedField,
    Rejection,
    admission_record,
    content_key,
    earlier_keys,
    kept_key,
    template,
)
from policylint.values import record

# The admission stage's public face: what callers import from here, wherever it is defined.
__all__ = [
    "DUPLICATE",
    "EMBEDDED",
    "LIST_TYPE",
    "PRESERVE",
    "TOP_LEVEL_SKIPPED",
    "UNRENDERED",
    "VALIDATIONS",
    "Admission",
    "Catalogue",
    "CelFailure",
    "Check",
    "PrunedField",
    "Rejection",
    "admit",
    "admits",
    "build_catalogue",
    "cel_failures",
    "cel_nodes",
    "code_stamp",
    "field_path",
    "root_value",
    "subtree_has_rules",
    "template",
    "validate",
    "violations",
]

if TYPE_CHECKING:
    from policylint.k8s.admissions import Admissions
    from policylint.k8s.index import ProjectIndex
    from policylint.k8s.objects import K8sObject

_UNDECIDED: Any = object()  # not in `Catalogue.decided` yet
MEMO_LIMIT = 50_000  # entries of each memo table of a catalogue (`admit`)
SHAPES_LIMIT = 200_000  # maps and lists the catalogue's shapes hold (`_run_shapes`): ~20 MiB
# Objects the catalogue holds the data of (`_run_shapes`): the walks no longer shape every map
# and list they key, so the shapes alone no longer bound it; about where they did (four to six
# maps and lists shaped per object on the benchmark's corpora).
PINNED_LIMIT = 40_000


# -- which schema decides ------------------------------------------------------------------------


@record
class Catalogue:
    """The schemas and served versions that decide for one project (`build_catalogue`)."""

    cluster: Cluster  # what the cluster runs, declared or inferred (policylint.k8s.cluster)
    # From the CRDs in the input and given with --crd: (group, kind, version) -> schema, and
    # (group, kind) -> the versions they serve and the CRD in the input (None: given with --crd).
    given: dict[tuple[str, str, str], Mapping[str, Any]] = dataclass_field(default_factory=dict)
    given_served: dict[tuple[str, str], tuple[list[str], K8sObject | None]] = dataclass_field(default_factory=dict)
    # (group, kind, version) -> the warning of a deprecated version they serve.
    given_deprecated: dict[tuple[str, str, str], str] = dataclass_field(default_factory=dict)
    # (id(schema node), `cel.shape` of a value) -> its schema violations and pruned fields, paths
    # relative to it (`violations`): the content of a map or list checked once per schema node.
    # For the objects' own maps and lists, whose shape is a token of the object (`shapes`), the
    # object's id stands for it: the catalogue holds the object while the key is here.
    schema_results: dict[tuple[int, Any], Any] = dataclass_field(default_factory=dict)
    # (id(schema node), rule, result key) -> outcome: a CEL rule's result on values that agree in
    # what it reads is computed once (`cel.result_key`); most nodes of a repository repeat.
    # A node's rules together: (id(schema node), "", (the value's `cel.shape`,)) -> their outcomes;
    # a subtree with nothing refused: (id(schema node), "/", (its shape,)) -> what its rules cost
    # (`cel_failures`; a map's or list's id for its shape, as in `schema_results`).
    cel_results: dict[tuple[int, str, tuple[Any, ...]], Any] = dataclass_field(default_factory=dict)
    # The run's maps and lists (`cel.shape`, id of a map or list -> its shape), for both walks of
    # every object and the other plausible schemas' walk: the loader makes the maps and lists of
    # one content one object (policylint.input.sharing), so a map's or list's shape is a token of
    # the object, made without reading its content (policylint.k8s.shapes), and a subtree that
    # objects repeat is one key for all of them. `pinned` holds the data of the objects whose maps
    # and lists are keys there, so that no key's id is taken by another object while it is one
    # (`_run_shapes`).
    shapes: dict[int, Any] = dataclass_field(default_factory=SharedShapes)
    pinned: list[Any] = dataclass_field(default_factory=list)
    # Schema -> a hash of its content (`fingerprint`).
    fingerprints: IdentityMap[Mapping[str, Any], bytes] = dataclass_field(default_factory=IdentityMap)
    # A number per schema, by identity, for the keys of `admitted`.
    schema_numbers: Numbering[Mapping[str, Any]] = dataclass_field(default_factory=Numbering)
    # (object, its schema's number) -> whether the schema admits the object whole (`admits`), also as
    # `admit` finds while it asks the other plausible schemas: each finding of a refused object
    # asks it of every plausible schema (policylint.rules.releases), and a walk of a large object
    # per finding would make hostile input quadratic.
    admitted: dict[tuple[K8sObject, int], bool] = dataclass_field(default_factory=dict)
    # (object, its schema's number) -> what the schema's CEL rules cost on the object, as the walk
    # found it (`_admit`): how much of the runtime budget another plausible schema may spend where
    # it differs (policylint.k8s.differences). None: the verdict was kept between runs.
    cel_spent: dict[tuple[K8sObject, int], int] = dataclass_field(default_factory=dict)
    # (group, kind, version) -> the schema that decides it (`schema`): every object of a kind
    # asks, and for a kind no schema decides (Services, Namespaces) the answer is found only by
    # asking every plausible release and channel, a list per object otherwise.
    decided: dict[tuple[str, str, str], tuple[Mapping[str, Any], str | None] | None] = dataclass_field(default_factory=dict)
    # (apiVersion, kind) as the object writes them -> the same answer as `decided` (`schema`).
    by_api_version: dict[tuple[str, str], tuple[Mapping[str, Any], str | None] | None] = dataclass_field(default_factory=dict)
    # (group, kind, version) -> its plausible (release, channel, schema) (`plausible`): every object
    # the first plausible schema admits asks (policylint.k8s.dissent), and the answer is the kind's.
    plausibles: dict[tuple[str, str, str], list[tuple[str, str, tuple[Mapping[str, Any], str] | None]]] = dataclass_field(
        default_factory=dict
    )

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
        # Every object asks: looked up by its apiVersion and kind as written, which name its group
        # and version (`objects.split_api_version`), without splitting the apiVersion again.
        written = self.by_api_version.get((obj.api_version, obj.kind), _UNDECIDED)
        if written is not _UNDECIDED:
            return written  # type: ignore[no-any-return]
        key = (obj.group, obj.kind, obj.version)
        found = self.decided.get(key, _UNDECIDED)
        if found is _UNDECIDED:
            found = self.decided[key] = self._schema_of(key)
        self.by_api_version[obj.api_version, obj.kind] = found
        return found  # type: ignore[no-any-return]

    def _schema_of(self, key: tuple[str, str, str]) -> tuple[Mapping[str, Any], str | None] | None:
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
        run's channel (a vendor's CRDs are the same in both). Worked out once per kind."""
        found = self.plausibles.get(key)
        if found is None:
            found = self.plausibles[key] = self._plausible(key)
        return found

    def _plausible(self, key: tuple[str, str, str]) -> list[tuple[str, str, tuple[Mapping[str, Any], str] | None]]:
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
    """The catalogue of a project (the admission stage builds it once, `Admissions.catalogue`):
    the given CRDs' schemas are compacted once for every reader."""
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


def admit(admissions: Admissions, obj: K8sObject) -> Admission | None:
    """The admission verdict of one object (None: no schema decides it, or it is no map).
    `Admissions.verdict` keeps it.

    When the run does not know the cluster's release and channel and the first plausible schema
    refuses the object, the others are asked too: if one admits it, the first one's verdict stands
    (its findings are warnings naming those that admit it, policylint.rules.releases); if none
    does, the object fails on every cluster the run considers, and the verdict is that of the
    schema it fails least (fewest refusals, then fewest pruned fields): an experimental field's
    own mistake rather than the standard channel's not knowing the field."""
    if not isinstance(obj.data, dict):
        return None
    catalogue = admissions.catalogue
    found = catalogue.schema(obj)
    if found is None:
        return None
    verdict = _admit(admissions, obj, found)
    rejected = verdict.rejected
    catalogue.admitted[obj, catalogue.schema_numbers(found[0])] = not rejected
    if not rejected:
        return verdict
    key_ = (obj.group, obj.kind, obj.version)
    if catalogue.decided_for(key_) or verdict.source is None:
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
        alternative = _admit(admissions, obj, other)
        catalogue.admitted[obj, catalogue.schema_numbers(other[0])] = not alternative.rejected
        if not alternative.rejected:
            return verdict
        candidates.append((key(alternative, release, channel), alternative))
    return min(candidates, key=lambda c: c[0])[1]


def admits(admissions: Admissions, obj: K8sObject, schema: Mapping[str, Any]) -> bool:
    """Whether `schema` admits the object whole: no schema violation, no CEL rule refusing it."""
    if not isinstance(obj.data, dict):
        return False
    catalogue = admissions.catalogue
    known = catalogue.admitted.get((obj, catalogue.schema_numbers(schema)))
    if known is not None:
        return known
    answer = not violations(obj.data, schema, catalogue.schema_results) and all(
        r.undecided for r in cel_failures(obj.data, schema, admissions.index.malformed(obj), catalogue.cel_results)
    )
    catalogue.admitted[obj, catalogue.schema_numbers(schema)] = answer
    return answer


def _admit(admissions: Admissions, obj: K8sObject, found: tuple[Mapping[str, Any], str | None]) -> Admission:
    schema, source = found
    catalogue, store = admissions.catalogue, admissions.kept
    given = source is None and catalogue.given_with_option(obj)
    kept = kept_key(admissions, obj, schema) if store is not None else None
    again = None
    if kept is not None:
        assert store is not None  # a key is made only with a store
        pruned_kept = _pruned_from_json(store.get(kept))
        if pruned_kept is None:
            # Not kept by its place: its file was edited (or is new). By its own content, an
            # object the edit left alone has the verdict it had.
            again = content_key(admissions, obj, schema)
            value = store.get(again) if again is not None else None
            pruned_kept = _pruned_from_json(value)
            if pruned_kept is None and again is not None:
                # The file's first edit since a whole run, which kept verdicts by place only: the
                # verdict of its earlier content's object of the same own content.
                for earlier in earlier_keys(admissions, obj, schema):
                    value = store.get(earlier)
                    pruned_kept = _pruned_from_json(value)
                    if pruned_kept is not None:
                        store.add(again, value)  # by its own content: the file's next edit
                        break
            if pruned_kept is not None:
                store.add(kept, value)  # by its place too: the next run finds it there
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
    data = obj.data
    shapes = _run_shapes(catalogue, data)
    pruned: list[Pruned] = []
    found_wrong = violations(data, schema, catalogue.schema_results, shapes, pruned)
    problems = (
        tuple(Rejection(Check.SCHEMA, parts, format_path(parts), problem, reason) for parts, problem, reason in found_wrong)
        if found_wrong
        else ()
    )
    failures, spent = cel_rejections(data, schema, admissions.index.malformed(obj), catalogue.cel_results, shapes)
    catalogue.cel_spent[obj, catalogue.schema_numbers(schema)] = spent
    if kept is not None and not problems and not failures:
        assert store is not None
        value = [[list(parts), key, known] for parts, key, known in pruned]
        store.add(kept, value)
        if again is not None:
            store.add(again, value)
    return admission_record(problems, failures, source, given, pruned)


def _run_shapes(catalogue: Catalogue, data: Any) -> dict[int, Any]:
    """The catalogue's memo of shapes, ready for the walks of `data`: `data` is pinned for as long
    as the memo's keys may name its maps and lists. Past `SHAPES_LIMIT` the memo starts again
    (a later repeat is shaped again), so that it holds a bounded part of a large repository."""
    if len(catalogue.shapes) > SHAPES_LIMIT or len(catalogue.pinned) > PINNED_LIMIT:
        catalogue.shapes.clear()
        catalogue.pinned.clear()
        # The walks key a subtree by its map's or list's id (`schemawalk._Walk.run`,
        # `celrules._CelRun.run`): an id is the object's only while the object is held.
        catalogue.schema_results.clear()
        catalogue.cel_results.clear()
    catalogue.pinned.append(data)
    return catalogue.shapes


# -- verdicts kept between runs ------------------------------------------------------------------
#
# Only verdicts that refuse nothing are kept (policylint.input.verdictstore.VerdictStore): all they hold
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
    from policylint.k8s import celrules, differences, differential, schemawalk, verdicts

    # The modules' files, found without importing them: a run whose verdicts are all kept never
    # needs the CEL evaluator, a tenth of a warm run's imports. `differential` keeps answers too.
    files: list[str | None] = [
        __file__,
        verdicts.__file__,
        schemawalk.__file__,
        celrules.__file__,
        differences.__file__,
        differential.__file__,
    ]
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
