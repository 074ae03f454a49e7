"""What the rules over the whole project found, reused while every object they read is the same.

A rule over the whole project (a `Rule` that is not per object) reads what it likes of the
project: its objects, the index's lookups, the resolution, the topology and the simulation, all of
which the pipeline builds from the objects and the run's context. The per-object results
(policylint.incremental.rulecache) are kept per object because a per-object rule's finding on an
object depends on that object alone; what a whole-project rule finds on an object may depend on
any other object of the part, and validating a finer record of its reads (asking the topology or
the simulation the same questions again and comparing the answers) costs about what running it
does: these rules are loops over answers the stages worked out already
(docs/performance.md#the-language-server).

What is kept here is the coarsest grain: every whole-project rule's issues of the last run of a
long-lived process, reused when the project the run analyses holds the same objects, in the same
order, as the last one did: the same instances (a long-lived process's runs build the same
instances of the files whose bytes are unchanged, policylint.incremental.resident), or, for the
objects built anew (those of the edited file), the same file, place, data (by `repr`, which tells
apart the key 1 from "1" and keeps field order) and target fields; the same files, with the same
problems the loader found in them (a syntax error, a document that is no object: PL0xx, and PL010,
which leaves a value the loader reported to it, read them); and the same run context (code,
settings, cluster, CRDs: `rulecache.context`). Every input of the rules is then
the same, so is what they find: an edit that changed no object's data or place (a comment typed at
the end of a file or on a line of its own after the last object, a blank line there, a file saved
again) is answered without running them. Any other edit runs them, each rule that declares its
unit only for the units whose answers are not the same objects (policylint.incremental.units).

A kept issue names last run's objects: it is rebuilt on this run's object in the same place of the
index, and so are its notes. A rule one of whose issues has a fixed location or document (an input
problem), or a fix naming another object, is not kept: it runs every time.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from policylint.incremental.units import KeptUnits
from policylint.stages import Stage

if TYPE_CHECKING:
    from policylint.findings import Issue
    from policylint.k8s.objects import K8sObject
    from policylint.project import Project
    from policylint.rules.base import UnitRule


class KeptWhole:
    """The whole-project rules' issues of the last run (in memory, per process), with the objects
    and the context they were found in."""

    def __init__(self) -> None:
        self._objects: list[K8sObject] = []
        self._stamp: tuple[object, ...] | None = None
        self._targets: list[tuple[str, ...] | None] = []
        self._issues: dict[str, list[Issue]] = {}
        self._next: dict[str, list[Issue]] = {}
        # This run's objects, context and target fields: the last run's once it is done (`finish`).
        self._contents: dict[str, str] = {}  # file -> content key, as the last run read them
        self._pending: tuple[list[K8sObject], tuple[object, ...], list[tuple[str, ...] | None], dict[str, str]] | None = None
        # What the last run did, for the tests: rules answered from what was kept, rules run.
        self.reused = 0
        self.ran = 0
        # Per unit, for the rules that declare one, when the objects are not all the same.
        self.units = KeptUnits()

    def begin(self, project: Project, run: bytes, targets: Callable[[K8sObject], tuple[str, ...] | None]) -> Whole:
        """This run's view: the kept issues, if the project holds what the last run's did."""
        objects = list(project.index.objects)
        index = project.index
        # The loader's issues too, which some rules read (PL010 leaves a value the loader reported
        # to it): a file's problems (a syntax error, a document that is no object) are not objects.
        problems = tuple(
            (i.rule_id, i.message, i.object, i.path, i.location, i.document, i.related, i.severity, i.hint)
            for i in index.input_issues
        )
        stamp = (run, tuple(index.files), problems)
        mine = [targets(obj) for obj in objects]
        contents = dict(index.content_keys)
        same = stamp == self._stamp
        mapping = _same(self._objects, objects, self._targets, mine, self._contents, contents) if same else None
        kept = self._issues if mapping is not None else {}
        self._pending, self._next = (objects, stamp, mine, contents), {}
        self.reused = self.ran = 0
        self.units.begin((run, tuple(stage for stage in Stage if project.has_stage(stage))))
        return Whole(self, kept, mapping or {})

    def finish(self) -> None:
        """The run is done: the next may reuse what it kept, and only that. A run that stopped
        before this leaves what the run before it kept, with the objects it was found on."""
        if self._pending is not None:
            (self._objects, self._stamp, self._targets, self._contents), self._pending = self._pending, None
            self._issues, self._next = self._next, {}
            self.units.finish()


class Whole:
    """One run's reuse of the whole-project rules' issues (`KeptWhole.begin`)."""

    def __init__(self, kept: KeptWhole, issues: dict[str, list[Issue]], mapping: dict[K8sObject, K8sObject]) -> None:
        self._kept = kept
        self._issues = issues
        self._mapping = mapping  # last run's object -> this run's, where they are not the same

    def units(self, rule: UnitRule[Any], project: Project) -> list[Issue]:
        """The issues of a rule that declares its unit, unit by unit (policylint.incremental.units)."""
        return self._kept.units.issues(rule, project)

    def issues(self, rule_id: str, run: Callable[[], Iterable[Issue]]) -> list[Issue]:
        """The rule's issues: the kept ones on this run's objects, or `run`'s (then kept)."""
        found = self._issues.get(rule_id)
        if found is not None:
            self._kept.reused += 1
            moved = [_moved(issue, self._mapping) for issue in found] if self._mapping else found
            self._kept._next[rule_id] = moved
            self._kept.units.carry(rule_id)
            return moved
        self._kept.ran += 1
        issues = list(run())
        if all(_keepable(issue) for issue in issues):
            self._kept._next[rule_id] = issues
        return issues


def _same(
    before: list[K8sObject],
    now: list[K8sObject],
    targets_before: list[tuple[str, ...] | None],
    targets_now: list[tuple[str, ...] | None],
    contents_before: dict[str, str],
    contents_now: dict[str, str],
) -> dict[K8sObject, K8sObject] | None:
    """Last run's object -> this run's for those that are other instances, when every object is
    the same (see the module's docstring); None when one is not. An object of a file whose content
    key is the last run's is the same where it stands: its data is not read (the objects of files
    outside the part are decoded only where the part reads them, policylint.k8s.lazy)."""
    if len(before) != len(now) or targets_before != targets_now:
        return None
    mapping: dict[K8sObject, K8sObject] = {}
    for old, new in zip(before, now):
        if old is new:
            continue
        if old.sort_key() != new.sort_key():
            return None
        content = contents_now.get(new.doc.file)
        if (content is None or content != contents_before.get(new.doc.file)) and repr(old.data) != repr(new.data):
            return None
        mapping[old] = new
    return mapping


def _keepable(issue: Issue) -> bool:
    """Whether the issue can be rebuilt on another run's objects: it names objects only (no fixed
    location or document, whose lines may have moved), and its fix edits its own object."""
    if issue.location is not None or issue.document is not None or any(r.location is not None for r in issue.related):
        return False
    return issue.fix is None or all(e.within is None and e.append_to is None for e in issue.fix.edits)


def _moved(issue: Issue, mapping: dict[K8sObject, K8sObject]) -> Issue:
    obj = issue.object
    related = issue.related
    if any(r.object in mapping for r in related if r.object is not None):
        related = tuple(
            replace(r, object=mapping[r.object]) if r.object is not None and r.object in mapping else r for r in related
        )
    if (obj is None or obj not in mapping) and related is issue.related:
        return issue
    return replace(issue, object=mapping.get(obj, obj) if obj is not None else None, related=related)
