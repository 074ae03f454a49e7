"""Every reference the engine resolved, as the editor navigates them.

Nothing here decides what a reference names: a policy's target is the resolution's
(`Resolution.targets`), a route's parent the topology's (`parent_attachments`), a backend,
certificate or CA reference the topology's `ObjectRef`, so that the editor jumps where the linter
and `explain` say the reference goes. ReferenceGrant entries and a Gateway's class name, which no
stage keeps as an edge, are looked up by key in the index, as the grant and class checks do.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator

from policylint.input.positions import PathPart, PositionResolver, join, parse_path
from policylint.k8s.fieldtypes import GATEWAY_GROUP
from policylint.k8s.index import Section
from policylint.k8s.objects import K8sObject
from policylint.project import Project
from policylint.server.documents import Cursor, has_prefix
from policylint.stages import Stage
from policylint.values import frozen

GRANT_GROUP = GATEWAY_GROUP


@frozen(eq=False)
class Reference:
    """One reference: from `owner` at `path`, naming `target` (None: not in the workspace) and,
    when the reference names one, its `section` (a listener, rule or port). `role` says what kind
    of reference it is, `status` what the engine decided, `message` why."""

    owner: K8sObject
    path: str
    role: str
    label: str
    status: str
    target: K8sObject | None = None
    section: Section | None = None
    message: str = ""

    @property
    def parts(self) -> tuple[PathPart, ...]:
        return (*self.owner.prefix, *parse_path(self.path))


@frozen
class Place:
    """A 1-based span in a file, as the engine gives positions."""

    file: str
    line: int
    column: int
    end_line: int
    end_column: int


class Navigator:
    """The references of one analysis, with lookups by owner and by target."""

    def __init__(self, project: Project, resolver: PositionResolver) -> None:
        self.project = project
        self.resolver = resolver
        self.references: list[Reference] = list(_references(project))
        self._from: dict[K8sObject, list[Reference]] = defaultdict(list)
        self._to: dict[K8sObject, list[Reference]] = defaultdict(list)
        for ref in self.references:
            self._from[ref.owner].append(ref)
            if ref.target is not None:
                self._to[ref.target].append(ref)
        self._by_document: dict[tuple[str, int], list[K8sObject]] = defaultdict(list)
        for obj in project.index.objects:
            self._by_document[(obj.doc.file, obj.doc.line)].append(obj)

    # -- what is under the cursor -------------------------------------------------------------

    def object_at(self, file: str, cursor: Cursor) -> K8sObject | None:
        """The object the cursor is in (an item of a `kind: List` when it is in one)."""
        candidates = [o for o in self._by_document.get((file, cursor.document_line), []) if has_prefix(cursor.path, o.prefix)]
        return max(candidates, key=lambda o: len(o.prefix), default=None)

    def reference_at(self, obj: K8sObject, cursor: Cursor) -> Reference | None:
        """The reference whose fields hold the cursor (the innermost, for a reference inside another)."""
        held = [r for r in self._from.get(obj, []) if has_prefix(cursor.path, r.parts)]
        return max(held, key=lambda r: len(r.parts), default=None)

    def section_at(self, obj: K8sObject, cursor: Cursor) -> Section | None:
        """The listener, rule or port the cursor is in, when `obj` has named sections."""
        inner = cursor.path[len(obj.prefix) :]
        for section in self.project.index.sections(obj):
            if has_prefix(inner, parse_path(section.path)):
                return section
        return None

    # -- where things are ---------------------------------------------------------------------

    def place(self, obj: K8sObject, path: str = "") -> Place:
        parts = [*obj.prefix, *parse_path(path)] if path else [*obj.prefix, "metadata", "name"]
        line, column, end_line, end_column = self.resolver.span(obj.doc, parts)
        return Place(obj.doc.file, line, column, end_line, end_column)

    def definition(self, ref: Reference) -> Place | None:
        if ref.target is None:
            return None
        if ref.section is not None:
            return self.place(ref.target, ref.section.path)
        return self.place(ref.target)

    def references_to(self, obj: K8sObject, section: Section | None = None) -> list[Reference]:
        """The references naming `obj` (naming its `section` only, when one is given), in file order."""
        found = [
            r for r in self._to.get(obj, []) if section is None or (r.section is not None and r.section.path == section.path)
        ]
        return sorted(found, key=lambda r: (r.owner.doc.file, r.owner.doc.line, r.path))

    def objects_in(self, file: str) -> list[K8sObject]:
        found = [o for o in self.project.index.objects if o.doc.file == file]
        return sorted(found, key=lambda o: (o.doc.line, o.prefix))


def _references(project: Project) -> Iterator[Reference]:
    resolution = project.resolution
    for policy in resolution.policies():
        for res in resolution.targets(policy):
            ref = res.ref
            yield Reference(
                policy.obj,
                ref.path,
                "targetRef",
                ref.display(),
                res.status.label,
                res.target,
                res.section,
                res.message,
            )
    if not project.has_stage(Stage.TOPOLOGY):
        return
    topology = project.topology()
    index = project.index
    for obj in index.objects:
        for att in topology.parent_attachments(obj):
            pref = att.ref
            section = _named_section(project, att.parent, pref.section_name)
            label = f"{pref.kind} {pref.namespace}/{pref.name}" + (f"#{pref.section_name}" if pref.section_name else "")
            yield Reference(obj, pref.path, "parentRef", label, att.status.label, att.parent, section, att.message)
        for oref in topology.refs_from(obj):
            yield Reference(
                obj,
                oref.path,
                f"{oref.purpose}Ref" if not oref.purpose.endswith("certificate") else "certificateRef",
                oref.label() + (f":{oref.port}" if oref.port is not None else ""),
                oref.status.label,
                oref.target,
                oref.port_section,
                oref.detail,
            )
        if obj.group == GATEWAY_GROUP and obj.kind == "Gateway":
            yield from _class_reference(project, obj)
        if obj.group == GRANT_GROUP and obj.kind == "ReferenceGrant":
            yield from _grant_references(project, obj)


def _named_section(project: Project, parent: K8sObject | None, name: str | None) -> Section | None:
    if parent is None or name is None:
        return None
    return next((s for s in project.index.sections(parent) if s.name == name), None)


def _class_reference(project: Project, gateway: K8sObject) -> Iterator[Reference]:
    ref = project.topology().class_refs.get(gateway)
    if ref is None or ref.name is None:
        return
    yield Reference(
        gateway, "spec.gatewayClassName", "gatewayClassName", f"GatewayClass {ref.name}", ref.status.label, ref.target
    )


def _grant_references(project: Project, grant: K8sObject) -> Iterator[Reference]:
    """A grant's `from` entries name namespaces, its `to` entries objects of its own namespace
    (all of a kind when `name` is not given: no one object to go to)."""
    spec = grant.data.get("spec")
    if not isinstance(spec, dict):
        return
    index = project.index
    for field, entries in (("from", spec.get("from")), ("to", spec.get("to"))):
        if not isinstance(entries, list):
            continue
        for position, entry in enumerate(entries):
            if not isinstance(entry, dict):
                continue
            group, kind = entry.get("group"), entry.get("kind")
            if not isinstance(group, str) or not isinstance(kind, str):
                continue
            path = join("spec", field, position)
            if field == "from":
                namespace = entry.get("namespace")
                if not isinstance(namespace, str):
                    continue
                target = index.lookup("", "Namespace", None, namespace)
                label = f"{kind} in namespace {namespace}"
                yield Reference(grant, path, "grantFrom", label, "Resolved" if target else "NotInWorkspace", target)
            else:
                name = entry.get("name")
                if not isinstance(name, str) or not name:
                    continue
                target = index.lookup(group, kind, grant.namespace, name)
                label = f"{kind} {grant.namespace}/{name}"
                yield Reference(grant, path, "grantTo", label, "Resolved" if target else "NotFound", target)
