"""Report scope: which findings a run shows when it reads more than it reports on.

`--context PATH` adds load-only paths: everything is linted together, so that a policy in a
changed file resolves its target in an unchanged one, but only findings in scope are reported.
A finding is in scope when:

- it sits in a file of the report scope (the PATHs given, or standard input); or
- it is *about* one: one of its notes points into such a file (a policy in a context file whose
  sectionName the changed Gateway no longer has: PL301's note is at the Gateway's listeners), or
  its object references an object defined there (a context route whose parentRef names a changed
  Gateway that no longer admits it); or
- it is policylint's own failure (PL000): an internal error is never hidden.

With `--diff BASE` or `--staged` the report scope is the files the change touched (git), the
load scope the repository; an object the change deleted or renamed is in scope through what
references it: a policy in an untouched file whose target the change deleted gets its PL201.

The JSON report's `policies` section keeps the policies defined in report-scope files.
"""

from __future__ import annotations

import os
from collections.abc import Collection, Iterable, Sequence
from typing import TYPE_CHECKING, Any

from policylint.findings import INTERNAL_ERROR, Finding
from policylint.values import frozen

if TYPE_CHECKING:
    from policylint.input.cache import ParseCache
    from policylint.input.sources import Source
    from policylint.k8s.index import ProjectIndex
    from policylint.k8s.objects import ObjectKey
    from policylint.pipeline import LintRequest
    from policylint.project import Project


def within(path: str, roots: Sequence[str]) -> bool:
    """Whether the absolute `path` is one of the absolute `roots` or below one."""
    return any(path == root or path.startswith(root.rstrip(os.sep) + os.sep) for root in roots)


@frozen(slots=False)
class ChangeSet:
    """What a git change touched: the files it added or modified (absolute paths), and the
    objects that the files it modified, renamed or deleted held before it."""

    files: frozenset[str]
    before: frozenset[ObjectKey]


@frozen(slots=False)
class ReportScope:
    files: frozenset[str]  # display names of the files reported on
    # The objects a finding may be about: those defined in the files, and those the change removed.
    objects: frozenset[ObjectKey]
    # Object -> the objects it references (policy targets, route parents), resolved or not.
    references: dict[ObjectKey, frozenset[ObjectKey]]

    @classmethod
    def of(
        cls, request: LintRequest, sources: Sequence[Source], project: Project, loaded: ProjectIndex | None = None
    ) -> ReportScope | None:
        """The scope of a run with context paths or a change; None when everything read is reported.
        `loaded`: the index of every object read, when the project analysed holds only part of them
        (policylint.semantics.components)."""
        files = report_files(request, sources)
        if files is None:
            return None
        objects = {o.key for o in project.index.objects if o.doc.file in files}
        if request.change is not None:
            objects |= removed(request.change, project.index if loaded is None else loaded, files)
        return cls(files, frozenset(objects), references(project))

    def in_scope(self, finding: Finding) -> bool:
        if finding.rule == INTERNAL_ERROR or finding.file in self.files:
            return True
        if any(r.file in self.files for r in finding.related):
            return True
        return finding.object is not None and bool(self.references.get(finding.object, frozenset()) & self.objects)

    def findings(self, findings: Sequence[Finding]) -> list[Finding]:
        return [f for f in findings if self.in_scope(f)]

    def policy_reports(self, reports: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
        return [r for r in reports if r["file"] in self.files]


def report_files(request: LintRequest, sources: Sequence[Source]) -> frozenset[str] | None:
    """The display names of the files a run reports on; None when it reports on everything read."""
    from policylint.input.sources import STDIN

    change = request.change
    if change is not None:
        # Made absolute only when its last part may be a changed file's (a hook's change touches a
        # file or two of thousands, and `abspath` is most of the test); a last part that
        # `abspath` rewrites (``, `.`, `..`) is taken whatever it is.
        names = {os.path.basename(path) for path in change.files} | {"", os.curdir, os.pardir}
        return frozenset(
            s.display
            for s in sources
            if s.fs_path is not None and os.path.basename(s.fs_path) in names and os.path.abspath(s.fs_path) in change.files
        )
    if request.context_paths:
        roots = [os.path.abspath(p) for p in request.paths if p != STDIN]
        return frozenset(s.display for s in sources if s.fs_path is None or within(os.path.abspath(s.fs_path), roots))
    return None


def removed(change: ChangeSet, index: ProjectIndex, files: Iterable[str] = ()) -> frozenset[ObjectKey]:
    """The objects a change deleted or renamed away: there before it, not after. Asked of the
    index, of the change's `files` first (a scoped run's objects outside its part are not built
    for it)."""
    return frozenset(change.before - index.present(change.before, files))


def references(project: Project, only: Collection[ObjectKey] | None = None) -> dict[ObjectKey, frozenset[ObjectKey]]:
    """What each policy targets and each route names as a parent, resolved or not: the objects
    a finding on it may be about. `only`: of these objects alone (those with findings, kept for
    the report scope of a later change: policylint.incremental.equivalent)."""
    from policylint.k8s.lazy import LazyObject
    from policylint.k8s.objects import ObjectKey

    out: dict[ObjectKey, set[ObjectKey]] = {}
    resolution = project.resolution
    for policy in resolution.policies():
        if only is not None and policy.obj.key not in only:
            continue
        keys = out.setdefault(policy.obj.key, set())
        for res in resolution.targets(policy):
            if res.target is not None:
                keys.add(res.target.key)
            ref = res.ref
            if ref.kind and ref.name:
                namespace = res.namespace if res.namespace is not None else ref.namespace
                keys.add(ObjectKey(ref.group or "", ref.kind, namespace, ref.name))
    for obj in project.index.objects:
        if only is not None and obj.key not in only:
            continue
        if type(obj) is LazyObject and obj.unread and obj.kept_references == []:
            continue  # nothing in it names anything (policylint.k8s.lazy): not read for that
        spec = obj.data.get("spec") if isinstance(obj.data, dict) else None
        parents = spec.get("parentRefs") if isinstance(spec, dict) else None
        if not isinstance(parents, list):
            continue
        keys = out.setdefault(obj.key, set())
        for ref in parents:
            if isinstance(ref, dict) and isinstance(ref.get("name"), str):
                group = ref.get("group", "gateway.networking.k8s.io")
                kind = ref.get("kind", "Gateway")
                namespace = ref.get("namespace", obj.namespace)
                if isinstance(group, str) and isinstance(kind, str) and isinstance(namespace, str | None):
                    keys.add(ObjectKey(group, kind, namespace, ref["name"]))
    return {key: frozenset(value) for key, value in out.items()}


def keys_before(
    blobs: Sequence[tuple[str, bytes]], default_namespace: str, cache: ParseCache | None = None
) -> frozenset[ObjectKey]:
    """The objects that files held before a change, from their contents at the base: from the
    parse cache where an earlier run kept what those bytes load to (the run that checked the base
    did), else parsed."""
    from policylint.input.load import is_json_name, load_bytes
    from policylint.k8s.objects import KindRegistry, build_objects

    documents = []
    for file, data in blobs:
        # Only read: the base's contents are the change's side's no longer.
        result = cache.load(cache.key(data, json=is_json_name(file)), file) if cache is not None else None
        documents.extend((result if result is not None else load_bytes(data, file)).documents)
    return frozenset(o.key for o in build_objects(documents, KindRegistry.builtin(), default_namespace).objects)
