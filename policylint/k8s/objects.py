"""The object model: Kubernetes objects keyed by (group, kind, namespace, name).

Pydantic guards the input boundary (object metadata, `policylint.k8s.validation`):
it is lenient toward unknown fields, because newer API versions add fields and
must not crash us (Gateway API API Design Guide, "Gracefully Handling Future
API Versions"), and strict about types the API server would reject (a label value
that is a number). Well-typed metadata is recognised without it (`_metadata`).
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping
from dataclasses import field
from datetime import datetime
from pathlib import Path
from typing import Any, NamedTuple

from policylint.findings import Issue
from policylint.input.load import Document, DocumentRef
from policylint.input.positions import PathPart, format_path, join
from policylint.k8s.fieldtypes import describe_value
from policylint.k8s.timestamps import parse_timestamp
from policylint.resources import load_yaml_data
from policylint.values import frozen, record

NOT_AN_OBJECT = "PL003"
MALFORMED_METADATA = "PL009"

CLUSTER = "Cluster"
# The namespaces the API server creates in every cluster (kube-apiserver's system namespaces and
# `default`): a reference to one names something that exists, in the input or not.
CLUSTER_NAMESPACES = frozenset({"default", "kube-system", "kube-public", "kube-node-lease"})


class ObjectKey(NamedTuple):
    # A NamedTuple rather than a dataclass: keys are hashed millions of times (index lookups,
    # effective-policy contexts) and a tuple hashes in C.
    group: str
    kind: str
    namespace: str | None
    name: str

    def __str__(self) -> str:
        # The `Kind ns/name` form of istio analyzers: stable across edits to the file.
        if self.namespace is None:
            return f"{self.kind} {self.name}"
        return f"{self.kind} {self.namespace}/{self.name}"


def split_api_version(api_version: str) -> tuple[str, str]:
    """`gateway.networking.k8s.io/v1` -> (group, version); `v1` -> ("", "v1")."""
    group, sep, version = api_version.rpartition("/")
    return (group, version) if sep else ("", api_version)


@frozen
class Metadata:
    """`metadata` as far as policylint needs it (validated by `policylint.k8s.validation.ObjectMeta`)."""

    name: str | None = None
    generateName: str | None = None
    namespace: str | None = None
    labels: dict[str, str] | None = None
    annotations: dict[str, str] | None = None
    creationTimestamp: datetime | None = None


def _string_map(value: Any) -> bool:
    # A loop rather than `all` over a generator: run for every object's labels and annotations
    # before the first fork of `--jobs`, where nothing else runs (docs/performance.md, "`--jobs 2`:
    # the objects built with fewer calls before the first fork").
    if type(value) is not dict:
        return False
    for k, v in value.items():  # noqa: SIM110 - a loop, not `all` over a generator: see above
        if type(k) is not str or type(v) is not str:
            return False
    return True


def _metadata(raw: dict[str, Any]) -> Metadata | None:
    """Well-typed metadata without pydantic (importing it costs more than linting a few files).

    Accepts only what ObjectMeta accepts, so None (anything unusual) falls back to
    pydantic, whose errors explain the problem: the outcome is the same either way.
    """
    name, generate_name, namespace = raw.get("name"), raw.get("generateName"), raw.get("namespace")
    for value in (name, generate_name, namespace):
        if value is not None and type(value) is not str:
            return None
    labels, annotations = raw.get("labels"), raw.get("annotations")
    for value in (labels, annotations):
        if value is not None and not _string_map(value):
            return None
    timestamp = raw.get("creationTimestamp")
    if timestamp is not None:
        if type(timestamp) is not str:
            return None
        try:
            timestamp = parse_timestamp(timestamp)
        except ValueError:
            return None
    return Metadata(
        name,
        generate_name,
        namespace,
        # The document's own maps, checked above, not copies: nothing changes them, and a copy
        # for every object cost 17 MiB at 100k objects.
        labels,
        annotations,
        timestamp,
    )


def _validate_metadata(raw: dict[str, Any]) -> tuple[Metadata, list[Any]]:
    """Metadata through pydantic: the value, and pydantic's errors (then what is valid is salvaged)."""
    from policylint.k8s.validation import ObjectMeta, ValidationError

    try:
        m = ObjectMeta.model_validate(raw)
    except ValidationError as exc:
        return _salvage_meta(raw), exc.errors()
    return Metadata(m.name, m.generateName, m.namespace, m.labels, m.annotations, m.creationTimestamp), []


@frozen
class SectionSpec:
    type: str  # listener | rule | port
    path: str  # the list holding named entries, e.g. spec.listeners
    optional: bool = False  # entries may be unnamed (route rules, single-port Services)


@frozen
class KindInfo:
    group: str
    kind: str
    scope: str
    sections: SectionSpec | None = None


class TypeFacts(NamedTuple):
    """What an object's apiVersion and kind decide of it, the same for every object of the type."""

    tool: str | None  # the tool whose configuration file it is (`configuration_tool`); None: an object
    group: str
    cluster_scoped: bool


# The (apiVersion, kind) pairs a registry holds what they decide of (`KindRegistry.type_of`): a
# run's inputs name a few dozen; a language server's registry lives on, and a workspace of
# made-up types would otherwise grow it for ever.
TYPES_HELD = 4096


class KindRegistry:
    """Scope and sections of known kinds: built-in data, plus CRDs found in the input."""

    def __init__(self, kinds: Iterable[KindInfo]) -> None:
        self._kinds: dict[tuple[str, str], KindInfo] = {(k.group, k.kind): k for k in kinds}
        # What each apiVersion and kind decide of an object (`type_of`), by the pair: a run's
        # objects are a few types many times over.
        self._types: dict[tuple[str, str], TypeFacts] = {}

    @classmethod
    @functools.cache
    def builtin(cls) -> KindRegistry:
        raw = load_yaml_data(Path(__file__).with_name("kinds.yaml"))
        kinds = []
        for entry in raw["kinds"]:
            sec = entry.get("sections")
            sections = SectionSpec(sec["type"], sec["path"], bool(sec.get("optional", False))) if sec else None
            kinds.append(KindInfo(entry["group"], entry["kind"], entry["scope"], sections))
        return cls(kinds)

    def with_kinds(self, extra: Iterable[KindInfo]) -> KindRegistry:
        merged = dict(self._kinds)
        for info in extra:
            known = merged.get((info.group, info.kind))
            # A CRD in the input decides scope; the built-in table keeps its section knowledge.
            merged[(info.group, info.kind)] = KindInfo(
                info.group, info.kind, info.scope, info.sections or (known.sections if known else None)
            )
        return KindRegistry(merged.values())

    def get(self, group: str, kind: str) -> KindInfo | None:
        return self._kinds.get((group, kind))

    def type_of(self, api_version: str, kind: str) -> TypeFacts:
        """What an object's apiVersion and kind decide of it (`TypeFacts`), worked out once per pair
        while at most `TYPES_HELD` are held: `build_objects` asks it of every document, before the
        first fork of `--jobs` (docs/performance.md, "`--jobs 2`: the objects built with fewer
        calls before the first fork")."""
        known = self._types.get((api_version, kind))
        if known is None:
            if len(self._types) >= TYPES_HELD:
                self._types.clear()
            group = split_api_version(api_version)[0]
            known = self._types[(api_version, kind)] = TypeFacts(
                configuration_tool(api_version, kind), group, self.is_cluster_scoped(group, kind)
            )
        return known

    def groups(self) -> frozenset[str]:
        return frozenset(group for group, _ in self._kinds)

    def scope(self, group: str, kind: str) -> str | None:
        info = self._kinds.get((group, kind))
        return info.scope if info else None

    def is_cluster_scoped(self, group: str, kind: str) -> bool:
        return self.scope(group, kind) == CLUSTER

    def sections(self, group: str, kind: str) -> SectionSpec | None:
        info = self._kinds.get((group, kind))
        return info.sections if info else None


# Labels or annotations an object does not have: one empty map for all of them, read-only
# through its type (a mapping proxy would be, but cannot be copied or pickled).
NO_LABELS: Mapping[str, str] = {}


@frozen(eq=False)
class K8sObject:
    """One Kubernetes object from the input. `prefix` locates it inside a `kind: List`."""

    key: ObjectKey
    api_version: str
    data: Mapping[str, Any]
    doc: DocumentRef
    prefix: tuple[PathPart, ...] = ()
    labels: Mapping[str, str] = field(default_factory=lambda: NO_LABELS)
    annotations: Mapping[str, str] = field(default_factory=lambda: NO_LABELS)
    creation_timestamp: datetime | None = None

    @property
    def kind(self) -> str:
        return self.key.kind

    @property
    def group(self) -> str:
        return self.key.group

    @property
    def name(self) -> str:
        return self.key.name

    @property
    def namespace(self) -> str | None:
        return self.key.namespace

    @property
    def version(self) -> str:
        return split_api_version(self.api_version)[1]

    @property
    def spec(self) -> Mapping[str, Any]:
        spec = self.data.get("spec")
        return spec if isinstance(spec, dict) else {}

    def doc_path(self, path: str) -> str:
        """The field path inside the document (adds `items[i]` for List members)."""
        if not self.prefix:
            return path
        return join(format_path(self.prefix), *_parts(path))

    def sort_key(self) -> tuple[str, int, int, str]:
        # Nearly every object is a document of its own: its prefix, empty, formats as "".
        doc = self.doc
        return (doc.file, doc.line, doc.column, format_path(self.prefix) if self.prefix else "")


def _parts(path: str) -> list[PathPart]:
    from policylint.input.positions import parse_path

    return parse_path(path)


def _error_path(loc: tuple[Any, ...]) -> str:
    return format_path(["metadata", *(p if isinstance(p, int) else str(p) for p in loc)])


def _explain(err: Any) -> str:
    value = err.get("input")
    if err["type"] == "string_type":
        if type(value) in (int, float, bool):
            # The usual slip: an unquoted number or boolean where Kubernetes wants text.
            return f"must be a string, not {type(value).__name__} {value!r} (quote it in YAML)"
        return f"must be a string, not {describe_value(value)}"
    if err["type"] == "dict_type":
        return f"must be a mapping, not {describe_value(value)}"
    return str(err["msg"]).replace("Value error, ", "")


@functools.cache
def configuration_kinds() -> tuple[Mapping[str, str], Mapping[tuple[str, str], str]]:
    """Configuration files of tools that look like objects but no API server serves
    (`configuration.yaml`): by API group, and by (group, kind) -> the tool that reads them."""
    raw = load_yaml_data(Path(__file__).with_name("configuration.yaml"))
    groups: dict[str, str] = {}
    kinds: dict[tuple[str, str], str] = {}
    for entry in raw["configuration"]:
        if "kind" in entry:
            kinds[(entry["group"], entry["kind"])] = entry["tool"]
        else:
            groups[entry["group"]] = entry["tool"]
    return groups, kinds


def configuration_tool(api_version: str, kind: str) -> str | None:
    """The tool whose configuration a document of this apiVersion and kind is, or None."""
    group = split_api_version(api_version)[0]
    groups, kinds = configuration_kinds()
    return kinds.get((group, kind)) or groups.get(group)


def _not_an_object(where: str, api_version: Any, kind: Any) -> str | None:
    """Why `apiVersion` and `kind` do not name a type (missing, empty, not a string), or None.

    Reported at the document, like every PL003: what is ignored is the whole document.
    """
    missing = [name for name, value in (("apiVersion", api_version), ("kind", kind)) if value is None]
    wrong: list[str] = []
    for name, value in (("apiVersion", api_version), ("kind", kind)):
        if value is not None and type(value) is not str:
            wrong.append(f"{name} must be a string, not {describe_value(value)}")
        elif value == "":
            wrong.append(f"{name} is empty")
    if not wrong:
        return f"document{where} has no {' and no '.join(missing)}: not a Kubernetes object; ignored" if missing else None
    reasons = [f"it has no {' and no '.join(missing)}"] if missing else []
    return f"document{where} is not a Kubernetes object: {'; '.join(reasons + wrong)}; ignored"


def _typed(where: str, api_version: Any, kind: Any, kinds: KindRegistry) -> TypeFacts | str:
    """What the document's type decides of it (`KindRegistry.type_of`), or why its apiVersion and
    kind name no type (`_not_an_object`): two non-empty strings always name one."""
    if type(api_version) is not str or type(kind) is not str or not api_version or not kind:
        identity = _not_an_object(where, api_version, kind)
        if identity is not None:
            return identity
    return kinds.type_of(api_version, kind)


@record(slots=True)
class BuildResult:
    objects: list[K8sObject]
    issues: list[Issue]


def build_objects(
    documents: Iterable[Document],
    kinds: KindRegistry,
    default_namespace: str = "default",
) -> BuildResult:
    """Turn loaded documents into objects; `kind: List` items become objects of their own."""
    objects: list[K8sObject] = []
    issues: list[Issue] = []
    for doc in documents:
        data = doc.data
        if isinstance(data, dict) and isinstance(data.get("items"), list) and str(data.get("kind", "")).endswith("List"):
            for i, item in enumerate(data["items"]):
                _build_one(item, doc.ref, ("items", i), kinds, default_namespace, objects, issues)
            continue
        _build_one(data, doc.ref, (), kinds, default_namespace, objects, issues)
    return BuildResult(objects, issues)


def _build_one(
    data: Any,
    ref: DocumentRef,
    prefix: tuple[PathPart, ...],
    kinds: KindRegistry,
    default_namespace: str,
    objects: list[K8sObject],
    issues: list[Issue],
) -> None:
    def problem(rule: str, message: str, path: str = "") -> Issue:
        doc_path = join(format_path(prefix), *_parts(path)) if (path or prefix) else ""
        return Issue(rule_id=rule, message=message, document=ref, path=doc_path)

    where = f" (List item {prefix[1]})" if prefix else ""
    if data is None and not prefix:
        return  # an empty document (`---` at the end of a file, comments only): kubectl skips it too
    if not isinstance(data, dict):
        kind_of = "a list" if isinstance(data, list) else "a scalar value"
        issues.append(problem(NOT_AN_OBJECT, f"document{where} is {kind_of}, not a Kubernetes object; ignored"))
        return
    api_version, kind = data.get("apiVersion"), data.get("kind")
    typed = _typed(where, api_version, kind, kinds)
    if isinstance(typed, str):
        issues.append(problem(NOT_AN_OBJECT, typed))
        return
    assert isinstance(api_version, str) and isinstance(kind, str)
    tool, group, cluster_scoped = typed
    if tool is not None:
        message = f"{api_version} {kind} is a file read by {tool}, which no API server serves: not a Kubernetes object; ignored"
        issues.append(problem(NOT_AN_OBJECT, message))
        return
    if kind == "List" and data.get("items") is not None and not prefix:
        # `build_objects` unpacks a List whose items are a list; anything else cannot be applied.
        items = describe_value(data["items"])
        issues.append(
            problem(NOT_AN_OBJECT, f"{kind} items must be a list, not {items}: nothing in it is applied; ignored", "items")
        )
        return
    raw_meta = data.get("metadata")
    meta_ok = True
    if raw_meta is None:
        meta = Metadata()
    elif not isinstance(raw_meta, dict):
        issues.append(problem(MALFORMED_METADATA, f"metadata must be a mapping, not {describe_value(raw_meta)}", "metadata"))
        meta = Metadata()
        meta_ok = False
    else:
        checked = _metadata(raw_meta)
        if checked is None:
            checked, errors = _validate_metadata(raw_meta)
            for err in errors:
                meta_ok = False
                where = _error_path(err["loc"])
                issues.append(problem(MALFORMED_METADATA, f"{where}: {_explain(err)}", where))
        meta = checked
    name = meta.name or meta.generateName
    if not name:
        if meta_ok:
            issues.append(problem(MALFORMED_METADATA, f"{kind} has no metadata.name; ignored", "metadata"))
        return
    if cluster_scoped:
        namespace = None
    else:
        namespace = meta.namespace or default_namespace
    objects.append(
        K8sObject(
            key=ObjectKey(group, kind, namespace, name),
            api_version=api_version,
            data=data,
            doc=ref,
            prefix=prefix,
            labels=meta.labels or NO_LABELS,
            annotations=meta.annotations or NO_LABELS,
            creation_timestamp=meta.creationTimestamp,
        )
    )


def _salvage_meta(raw: dict[str, Any]) -> Metadata:
    """Keep what is valid of a metadata block that failed validation, so the object is still indexed."""

    def text(value: Any) -> str | None:
        return value if isinstance(value, str) else None

    def string_map(value: Any) -> dict[str, str] | None:
        if not isinstance(value, dict):
            return None
        return {k: v for k, v in value.items() if isinstance(k, str) and isinstance(v, str)}

    timestamp = None
    if isinstance(raw.get("creationTimestamp"), str):
        try:
            timestamp = parse_timestamp(raw["creationTimestamp"])
        except ValueError:
            timestamp = None
    return Metadata(
        name=text(raw.get("name")),
        generateName=text(raw.get("generateName")),
        namespace=text(raw.get("namespace")),
        labels=string_map(raw.get("labels")),
        annotations=string_map(raw.get("annotations")),
        creationTimestamp=timestamp,
    )
