"""What a long-lived process's run hands to the next one besides what its stages keep as they are
built (policylint.incremental.resident): the objects of each file, the part search's sets, the
field types and policies of its objects, the positions it resolved.

A language server's first analysis is whole; each edit after it analyses a part
(policylint.incremental.workspace). The first part run took nothing of that analysis: every file
loaded again through the parse cache (its shell was not written yet), the part search's sets joined
from nothing, and every stage worked out anew for objects that were all new instances, which no
kept result is keyed by; the second built every file from the shells the first wrote, new
instances again. Those two updates took 1.4-1.6 s and 0.6-0.7 s of CPU at 10,000 objects, where
a later one takes 0.25-0.35 s (docs/performance.md#the-language-server). A whole run given a `Resident`
now keeps what it loaded of each file as a part run keeps what it built from a shell
(`held_loaded`), with the part search's sets of its objects (`keep`): its objects, whose stages'
results it kept too, are the ones the next run takes. tests/incremental/test_whole_handover.py
counts what that run loads, builds and joins, and compares it with a run from nothing.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from policylint.incremental.resident import Held
from policylint.input import load
from policylint.k8s.objects import BuildResult, K8sObject, KindRegistry, build_objects
from policylint.k8s.roster import Roster
from policylint.semantics.partgraph import files_of

if TYPE_CHECKING:
    from policylint.findings import Issue
    from policylint.incremental.resident import Resident
    from policylint.input.kept import Kept
    from policylint.input.load import Document
    from policylint.input.sources import Source
    from policylint.project import Project
    from policylint.semantics.resolution import Resolution


def hosts(resolution: Resolution) -> dict[tuple[str, str], str]:
    """The kinds whose objects declare hosts of a service registry, and their field listing them."""
    return {
        (source.kind.group, source.kind.kind): source.hosts
        for implementation in resolution.profiles.implementations
        for source in implementation.host_sources
    }


def keep(resident: Resident, project: Project, loaded: Project, *, whole: bool) -> None:
    """What the next run of the process takes of this one's, besides what its stages kept as they
    were built. A `whole` run gives the part run after it the sets the part search joins the
    objects into (policylint.semantics.partgraph) too, besides its objects
    (`held_loaded`): so the first edit's search joins only what the edited file reaches, as
    every later one does."""
    if whole:
        from policylint.semantics.components import MIN_OBJECTS

        objects = project.index.objects
        if len(objects) >= MIN_OBJECTS:  # fewer: no part is ever analysed
            resident.graph.update(_as_held(objects, loaded.index.content_keys, resident), hosts(project.resolution))
    resident.index = loaded.index  # the next run's index orders its objects from this one's
    resident.malformed = project.index.malformed_known()
    resident.policies = project.resolution.built_policies()
    resident.spans.retain(loaded.index.content_keys)


def _as_held(objects: Sequence[K8sObject], keys: Mapping[str, str], resident: Resident) -> Roster:
    """The objects file by file, each file's as the list the resident holds it in (input order):
    the next part run reads the same list (`Session.combine`), which the part search's sets then
    take as unchanged without comparing its objects one by one (policylint.semantics.partgraph)."""
    files: list[tuple[str, Sequence[K8sObject]]] = []
    for name, found in files_of(objects):
        held = resident.get(name, keys.get(name, ""))
        same = held is not None and len(held.objects) == len(found) and set(held.objects) == set(found)
        files.append((name, held.objects if held is not None and same else found))
    return Roster(files)


def held_loaded(
    sources: Sequence[Source],
    keys: Mapping[str, str],
    documents: Sequence[Document],
    loader_issues: Sequence[Issue],
    built: BuildResult,
    texts: Mapping[str, str | Kept],
    default_namespace: str,
) -> dict[str, Held]:
    """What a whole run loaded and built of each file a scoped run would take from its shell, as
    that run would hold it (`Session.combine`): a language server's first analysis is whole, and
    its first part run then takes these objects, the very instances whose stages the whole
    analysis worked out and kept, instead of building every file again from its shell
    (policylint.incremental.shells). `sources` leaves out the files holding a CRD, which every run
    loads."""
    wanted = {s.display: keys[s.display] for s in sources if s.display in keys and shelled(s)}
    docs: dict[str, list[Document]] = {}
    for d in documents:
        if d.ref.file in wanted:
            docs.setdefault(d.ref.file, []).append(d)
    issues: dict[str, list[Issue]] = {}
    for issue in loader_issues:
        where = issue.location
        if where is not None and where.file in wanted:
            issues.setdefault(where.file, []).append(issue)
    problems: dict[str, list[Issue]] = {}
    for issue in built.issues:
        ref = issue.document
        if ref is not None and ref.file in wanted:
            problems.setdefault(ref.file, []).append(issue)
    objects: dict[str, list[K8sObject]] = {}
    for obj in built.objects:
        if obj.doc.file in wanted:
            objects.setdefault(obj.doc.file, []).append(obj)
    content = {s.display: s.content for s in sources}
    held: dict[str, Held] = {}
    for file, key in wanted.items():
        found = objects.get(file, [])
        # What the file was parsed from, for positions: its bytes as the loader kept them, or an
        # editor's buffer, whose text the loader kept instead.
        parsed = texts.get(file)
        kept = (parsed if not isinstance(parsed, str) else content[file]) if file in docs else None
        if file in docs and kept is None:
            continue  # loaded by the next run
        scopes = {(o.key.group, o.key.kind): o.key.namespace is None for o in found}
        held[file] = Held(
            key, None, found, issues.get(file, []), problems.get(file, []), kept, default_namespace, scopes, docs.get(file, [])
        )
    return held


def rebuilt(held: Held, kinds: KindRegistry, default_namespace: str) -> Held:
    """`held`'s objects built again from its documents, for a run whose kinds or default
    namespace differ from the run that loaded them."""
    built = build_objects(held.documents, kinds, default_namespace)
    scopes = {(o.key.group, o.key.kind): o.key.namespace is None for o in built.objects}
    return Held(held.key, None, built.objects, held.issues, built.issues, held.kept, default_namespace, scopes, held.documents)


def shelled(source: Source) -> bool:
    """Whether a scoped run takes the file from its shell, or what it held, rather than loading it:
    never standard input, nor a file named `*.json` (whose data may not be objects at all)."""
    return not (source.content is not None and not source.snapshot) and not load.is_json_name(source.display)
