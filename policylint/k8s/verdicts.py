"""The admission verdict of an object and its reasons (`Admission`, `Rejection`), the schema keys
the schema walk and the CEL rules share, and the key a verdict is kept under between runs."""

from __future__ import annotations

import enum
import hashlib
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any

from policylint.identity import IdentityMap
from policylint.input.placeholders import whole_value
from policylint.input.verdictstore import by_name
from policylint.values import frozen

if TYPE_CHECKING:
    from policylint.input.verdictstore import KeptKey
    from policylint.k8s.admissions import Admissions
    from policylint.k8s.cel import Compiled, EvalError
    from policylint.k8s.objects import K8sObject

# The object's own fields schema validation leaves to others: metadata (ObjectMeta, which the
# CRDs do not describe), status (PL110; the status subresource validates it).
TOP_LEVEL_SKIPPED = frozenset({"apiVersion", "kind", "metadata", "status"})
VALIDATIONS = "x-kubernetes-validations"
PRESERVE = "x-kubernetes-preserve-unknown-fields"
EMBEDDED = "x-kubernetes-embedded-resource"


# Schema -> its root as `schemawalk.violations` walks it (`root_node`).
_ROOTS: IdentityMap[Mapping[str, Any], Mapping[str, Any]] = IdentityMap()


def root_node(schema: Mapping[str, Any]) -> Mapping[str, Any]:
    """The schema's root as the walk checks an object against it: the fields the API server sets
    or checks itself (apiVersion, kind, metadata, status) not required. Worked out once per schema,
    not once per object of its kind."""
    got = _ROOTS.get(schema)
    if got is None:
        if len(_ROOTS) > 10_000:
            _ROOTS.clear()  # CRDs read from many inputs in one process (tests): bounded
        required = [r for r in schema.get("required", ()) if r not in TOP_LEVEL_SKIPPED]
        got = _ROOTS[schema] = {**schema, "required": required}
    return got


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
        # Most verdicts refuse nothing: no generator is made for them.
        return bool(self.schema) or (bool(self.cel) and any(not r.undecided for r in self.cel))

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


def admission_record(
    schema: tuple[Rejection, ...],
    cel: tuple[Rejection, ...],
    source: str | None,
    given: bool,
    pruned: list[tuple[tuple[str | int, ...], str, list[str]]],
) -> Admission:
    """The verdict of an object whose checks found `schema`, `cel` and `pruned`: the one record
    of its source's verdicts that refuse and prune nothing where they did not (most objects'), where
    each object's made a record of its own, a tenth of the work of an object whose subtrees were
    all seen before. A verdict is read, never changed (`Admission` is frozen), nor told apart
    from an equal one by its identity."""
    if schema or cel or pruned:
        return Admission(schema, cel, source, given, tuple(pruned))
    got = _PLAIN.get((source, given))
    if got is None:
        if len(_PLAIN) > 1_000:
            _PLAIN.clear()  # sources are a few releases: bounded all the same
        got = _PLAIN[source, given] = Admission((), (), source, given)
    return got


# (source, given) -> the verdict that refuses and prunes nothing (`admission_record`).
_PLAIN: dict[tuple[str | None, bool], Admission] = {}


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


def kept_key(admissions: Admissions, obj: K8sObject, schema: Mapping[str, Any], mark: str = "") -> KeptKey | None:
    """The key of the object's verdict among those kept: its file's cache key (which names the
    bytes and the loader's version, and the entry the verdicts of the file's objects are kept in)
    and a digest of that, the object's place in the file and the schema's content. Nothing else
    decides the verdict: `index.malformed` reads the object alone. `mark` tells apart another kind
    of answer kept beside the verdicts (policylint.k8s.differences). None: nothing is kept (no
    cache, or a file read from stdin). The digest itself, not its hex: the store holds 3.3 keys
    per object to the end of the run (policylint.input.verdictstore)."""
    if admissions.kept is None:
        return None
    file_key = admissions.index.content_keys.get(obj.doc.file)
    if file_key is None:
        return None
    return _at(admissions.catalogue.fingerprint(schema), mark, file_key, obj.doc.line, obj.doc.column, obj.prefix)


def _at(fingerprint: bytes, mark: str, file_key: str, line: int, column: int, prefix: tuple[str | int, ...]) -> KeptKey:
    """`kept_key` of an object at `line`, `column` and `prefix` of the file content `file_key`."""
    h = hashlib.blake2b(fingerprint, digest_size=16)
    h.update(f"{mark}{file_key}|{line}|{column}|{prefix!r}".encode())
    return file_key, h.digest()


def earlier_keys(admissions: Admissions, obj: K8sObject, schema: Mapping[str, Any]) -> list[KeptKey]:
    """The keys (`kept_key`) the object's verdict was kept under by a whole run that read another
    content of its file, at each place of that content that held an object of the same own content
    (policylint.incremental.previous, whose index the per-object rules' results share). A whole
    run keeps verdicts by place only, so the first edit of a file since then found none of its
    objects' verdicts by their own content, and worked out each the part's stages asked for again.
    Asked only where `content_key` is (an object of a file new to the cache, in a run analysing a
    part) and missed. Nothing is believed: the key hashes the earlier content's key, the place and
    the schema, so an index naming a content the file never had finds verdicts of other objects
    under other keys, or none; an object of another own content is at no place; an earlier content
    the cache pruned holds no objects."""
    store = admissions.kept
    earlier = store.previous if store is not None else None
    if earlier is None:
        return []
    file = obj.doc.file
    content = earlier.key(file)
    if content is None or content == admissions.index.content_keys.get(file):
        return []
    places = earlier.places(file, content).get(earlier.own(obj.data), ())
    if not places:
        return []
    from policylint.input.positions import parse_path  # a `kind: List` item's place, `items[i]`

    fingerprint = admissions.catalogue.fingerprint(schema)
    return [_at(fingerprint, "", content, line, column, tuple(parse_path(path))) for line, column, path in places]


def content_key(admissions: Admissions, obj: K8sObject, schema: Mapping[str, Any]) -> KeptKey | None:
    """The key of the object's verdict by its own content, wherever it is and whatever else its
    file holds (policylint.input.verdictstore.by_name): a digest of the schema's content and of the
    object's data, which is all that decides the verdict (`kept_key`). Asked only for an object of a
    file new to the cache in a run that analyses a part (`VerdictStore.by_content`): an edit
    changes the file's content key, and so every one of its objects' `kept_key`, though it changed
    one object or none. `repr` tells apart what JSON would make one (the key 1 and the key "1", 1
    and 1.0, true and 1) and keeps the fields' order; a value whose repr is not the same in every
    process (a set) is a miss, never a wrong verdict. None: nothing is looked up."""
    store = admissions.kept
    if store is None or not store.by_content:
        return None
    file_key = admissions.index.content_keys.get(obj.doc.file)
    if file_key is None or not store.files.cache.wrote(file_key):
        return None
    h = hashlib.blake2b(admissions.catalogue.fingerprint(schema), digest_size=16)
    h.update(repr(obj.data).encode("utf-8", "surrogateescape"))
    return by_name(obj.doc.file), h.digest()
