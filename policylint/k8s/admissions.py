"""The admission stage: what the API server would refuse in each object of a project, and the
catalogue of schemas that decides it (policylint.k8s.admission works both out).

The pipeline builds it after the index, which holds the objects and what the cluster runs, and
before the topology, which reads its verdicts (a policy the API server refuses never reaches its
controller); only when a selected rule or a stage after it reads it (policylint.stages). The
catalogue is built with the stage; each verdict is worked out the first time it is asked for, once
per object and process: a run reads the verdicts of the objects its rules and stages look at, each
share of `--jobs` works out those of its own objects (policylint.rules.workers), and a warm run
takes from the verdicts kept between runs (`kept`) every one that refuses nothing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from policylint.k8s import admission
from policylint.k8s.lazy import LazyObject

if TYPE_CHECKING:
    from collections.abc import Callable

    from policylint.input.verdictstore import VerdictStore
    from policylint.k8s.admission import Admission
    from policylint.k8s.dissent import Dissent
    from policylint.k8s.index import ProjectIndex
    from policylint.k8s.objects import K8sObject


class Admissions:
    """The admission verdicts of one project's objects. Build with `Admissions(index, kept)`."""

    def __init__(self, index: ProjectIndex, kept: VerdictStore | None = None) -> None:
        self.index = index
        # The verdicts kept between runs by the content they were worked out from, read and added
        # to here (None: no cache). The pipeline opened it before reading the files and saves it
        # once the rules are done.
        self.kept = kept
        self.catalogue = admission.build_catalogue(index)
        self._verdicts: dict[K8sObject, Admission | None] = {}
        # The plausible schemas that refuse an object its verdict admits (policylint.k8s.dissent),
        # worked out once per object and process: PL703 and PL704 both read them, each rule's own
        # lookups are freed when it is done, and a refusal is walked whole.
        self.dissents: dict[K8sObject, Dissent | None] = {}
        # (apiVersion, kind) -> what each of its objects asks of the other plausible schemas
        # (policylint.k8s.dissent `_plan`), worked out once per kind and version.
        self.plans: dict[tuple[str, str], Any] = {}
        # (the pairs' differences at a position, a map or list of the documents) -> what decides
        # the differential walk there (policylint.k8s.differential `_content`), for the run.
        self.contents: dict[Any, Any] = {}
        # Verdicts another process of the run works out for this one, taken when the first verdict
        # is asked for (`expect`).
        self._expected: Callable[[Admissions], object] | None = None

    def expect(self, take: Callable[[Admissions], object]) -> None:
        """Call `take` once, when the first verdict is asked for: with `--jobs`, the child forked
        once the index is built works out the policies' verdicts while this process builds up to
        the topology's first question (policylint.k8s.portableverdicts), and `take` adopts them,
        waiting for them if need be."""
        self._expected = take

    def adopt(self, obj: K8sObject, verdict: Admission, schema: Any, spent: int | None) -> bool:
        """Take `verdict`, which refuses nothing, worked out from `schema` (the catalogue's for the
        object) in another process of this run, as this process's, with what working it out here
        would have recorded besides (`admission.admit`): that the schema admits the object, and the
        CEL cost it spent (None: none recorded); False if a verdict is held for it already."""
        if obj in self._verdicts:
            return False
        self._verdicts[obj] = verdict
        number = self.catalogue.schema_numbers(schema)
        self.catalogue.admitted[obj, number] = True
        if spent is not None:
            self.catalogue.cel_spent[obj, number] = spent
        return True

    def verdict(self, obj: K8sObject) -> Admission | None:
        """What the API server would refuse in the object: its schema and CEL rule violations,
        worked out once (policylint.k8s.admission; None: no schema decides it)."""
        if self._expected is not None:
            take, self._expected = self._expected, None
            take(self)
        # Asked by every rule and stage that reads a verdict, most often of an object answered
        # before: one lookup.
        found = self._verdicts.get(obj, _UNASKED)
        if found is not _UNASKED:
            return found  # type: ignore[no-any-return]
        if type(obj) is LazyObject and obj.unread and self.catalogue.schema(obj) is None:
            # What `admit` says of a mapping no schema decides, without reading an object a
            # scoped run built from its file's shell (policylint.k8s.lazy).
            self._verdicts[obj] = None
            return None
        found = self._verdicts[obj] = admission.admit(self, obj)
        return found


_UNASKED: Any = object()  # no verdict held for the object yet (`Admissions.verdict`)

__all__ = ["Admissions"]
