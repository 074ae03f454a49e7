"""The plausible schemas that refuse an object the first one admits (docs/semantics.md#the-cluster-model).

When the run does not know the release (and channel) the cluster runs, an object's verdict is that
of the first plausible schema (policylint.k8s.admission: the newest release, the standard channel).
An object that schema admits may still be refused by another the cluster may run: Gateway API's
experimental channel checks header values against RFC 7230 from v1.5 on, the standard channel
never does; a vendor's older release may hold a rule its newest dropped. Such an object is stored
by some clusters and refused by others, so its schema findings are warnings naming both sides.

The other plausible schemas are asked only whether they admit the object, in one walk of the
object for all of them, each checking only the positions where it differs from the first (the
releases' schemas share their unchanged subtrees, `policylint.k8s.schemas`;
policylint.k8s.differences says why that is exact; policylint.k8s.differential walks),
the answer kept between runs with the verdicts of the first, so that a cached run walks only what
some schema refuses; the refusal of the first that does not is computed in full; PL703 and PL704 ask `dissent`,
which works each object's answer out once (`Admissions.dissents`). The verdict of the first plausible
schema stays the object's (`Admissions.verdict`): the simulation never treats as refused an
object that the first plausible cluster stores.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from policylint.k8s.admission import _admit, _run_shapes, validate
from policylint.k8s.differences import Difference, difference
from policylint.k8s.differential import _pairs, admits_from, kept_key
from policylint.k8s.verdicts import Admission
from policylint.values import frozen

if TYPE_CHECKING:
    from policylint.input.verdictstore import KeptKey
    from policylint.k8s.admission import Catalogue
    from policylint.k8s.admissions import Admissions
    from policylint.k8s.objects import K8sObject

Pair = tuple[str, str]  # (release, channel)


@frozen
class Dissent:
    """An object the first plausible schema admits and some other plausible schemas refuse."""

    verdict: Admission  # the refusal of the first refusing pair (newest release, standard channel first)
    channel: str  # that pair's channel
    refusing: tuple[Pair, ...]  # the plausible pairs whose schema refuses the object
    accepting: tuple[Pair, ...]  # the plausible pairs whose schema admits it (the first among them)


def dissent(admissions: Admissions, obj: K8sObject) -> Dissent | None:
    """The plausible schemas that refuse the object its verdict admits (None: the release the kind
    is judged by is known, a CRD of the input or given with --crd decides, no schema decides, the
    verdict refuses the object, or every plausible schema admits it), worked out once per object
    (`Admissions.dissents`)."""
    if obj in admissions.dissents:
        return admissions.dissents[obj]
    found = admissions.dissents[obj] = _dissent(admissions, obj)
    return found


@frozen
class _Plan:
    """What every object of one kind asks (`_plan`): its plausible pairs that serve it, each with
    the index of its schema among `others` (-1: the first plausible schema), the first, the
    distinct other schemas with their numbers (`Catalogue.schema_numbers`), and the difference of
    each from the first (policylint.k8s.differences); and what the differential walk starts from
    when it asks them all, the first's number and the differences at the root together
    (`differential._pairs`), which every object would otherwise look up again. Made by `plan_of`."""

    served: tuple[tuple[str, str, tuple[Mapping[str, Any], str], int], ...]
    first: Mapping[str, Any]
    others: tuple[tuple[tuple[Mapping[str, Any], str], int], ...]
    roots: list[Difference | None]
    number: int
    top: Any
    numbers: tuple[int, ...]  # the numbers of `others`, in order


def plan_of(
    catalogue: Catalogue,
    served: tuple[tuple[str, str, tuple[Mapping[str, Any], str], int], ...],
    first: Mapping[str, Any],
    others: Sequence[tuple[Mapping[str, Any], str]],
) -> _Plan:
    """The `_Plan` of `served` pairs whose distinct other schemas are `others`, in order: what it
    holds besides them worked out from them, here alone."""
    roots = [difference(first, found[0]) for found in others]
    numbered = tuple((found, catalogue.schema_numbers(found[0])) for found in others)
    numbers = tuple(number for _, number in numbered)
    return _Plan(served, first, numbered, roots, catalogue.schema_numbers(first), _pairs(tuple(roots)), numbers)


def _plan(admissions: Admissions, obj: K8sObject) -> _Plan | None:
    """The `_Plan` of the object's kind (None: nothing to ask, the release it is judged by is
    known, a CRD of the input or given with --crd decides, or no schema does), worked out once
    per kind and run (`Admissions.plans`): each of its objects would otherwise list, number and
    compare the same schemas again."""
    plans = admissions.plans
    # By apiVersion and kind, which name the group and version: asked for every object, where
    # splitting the apiVersion into them was most of the lookup.
    found = plans.get((obj.api_version, obj.kind), _UNPLANNED)
    if found is not _UNPLANNED:
        return found  # type: ignore[no-any-return]
    key = (obj.group, obj.kind, obj.version)
    plans[obj.api_version, obj.kind] = plan = _make_plan(admissions, obj, key)
    return plan


_UNPLANNED: Any = object()


def _make_plan(admissions: Admissions, obj: K8sObject, key: tuple[str, str, str]) -> _Plan | None:
    """The `_Plan` of the object's (group, kind, version), `key`."""
    catalogue = admissions.catalogue
    found_first = None if catalogue.decided_for(key) else catalogue.schema(obj)
    if found_first is None:
        return None
    first = found_first[0]
    served = []
    others: list[tuple[Mapping[str, Any], str]] = []
    for release, channel, found in catalogue.plausible(key):
        if found is None:
            continue  # a pair that does not serve the kind is PL705's
        index = -1 if found[0] is first else next((i for i, o in enumerate(others) if o[0] is found[0]), len(others))
        if index == len(others):
            others.append(found)
        served.append((release, channel, found, index))
    return plan_of(catalogue, tuple(served), first, others)


def _dissent(admissions: Admissions, obj: K8sObject) -> Dissent | None:
    verdict = admissions.verdict(obj)
    if verdict is None or verdict.rejected or verdict.source is None or not isinstance(obj.data, dict):
        return None
    plan = _plan(admissions, obj)
    if plan is None:
        return None
    catalogue = admissions.catalogue
    answers = _answers(admissions, obj, catalogue, plan)
    if all(answers):
        return None  # every other schema admits it (most objects): no pair of the plan refuses
    refusing: list[tuple[str, str, tuple[Mapping[str, Any], str]]] = []
    accepting: list[Pair] = []
    for release, channel, found, index in plan.served:
        if index < 0 or answers[index]:
            accepting.append((release, channel))
        else:
            refusing.append((release, channel, found))
    if not refusing:
        return None
    _, channel, (schema, source) = refusing[0]
    problems, failures = validate(obj.data, schema, catalogue.cel_results)
    refusal = Admission(tuple(problems), tuple(failures), source)
    if not refusal.rejected:
        return None  # only rules past the offline budget: not known to refuse
    return Dissent(refusal, channel, tuple((r, c) for r, c, _ in refusing), tuple(accepting))


def _answers(admissions: Admissions, obj: K8sObject, catalogue: Catalogue, plan: _Plan) -> list[bool]:
    """Whether each other schema of the plan (`_Plan.others`, in order) admits the object whole,
    which the first plausible schema admits: from the answers of this run (`Catalogue.admitted`)
    or kept between runs (the parse cache's `VerdictStore`: a schema that admitted the object last
    run is not walked again), else by walking the object once for all the rest, only where each
    may refuse what the first admits (policylint.k8s.differential), else by walking it whole
    (`_admit`, which keeps its verdict)."""
    admitted, store = catalogue.admitted, admissions.kept
    numbers = plan.numbers
    known_here = [admitted.get((obj, number)) for number in numbers]
    keys: list[KeptKey | None] | None = None
    if store is not None:
        keys = [None] * len(known_here)
        for i, known in enumerate(known_here):
            if known is None:
                kept = keys[i] = kept_key(admissions, obj, plan.others[i][0][0])
                if kept is not None and store.get(kept) is True:
                    known_here[i] = admitted[obj, numbers[i]] = True
    if None not in known_here:
        return [bool(known) for known in known_here]
    asked = [i for i, known in enumerate(known_here) if known is None]
    top = plan.top if len(asked) == len(numbers) else _pairs(tuple(plan.roots[i] for i in asked))
    # The run's memo of shapes (the object pinned in it): the subtrees objects share are shaped once.
    shown = admits_from(admissions, obj, plan.number, top, len(asked), _run_shapes(catalogue, obj.data))
    # A placeholder where asked, until the walk's answer replaces it.
    answers = [bool(known) for known in known_here]
    for i, admitted_here in zip(asked, shown):
        if admitted_here:
            kept = None if keys is None else keys[i]
            if kept is not None and store is not None:
                store.add(kept, True)
            known = True
        else:
            known = not _admit(admissions, obj, plan.others[i][0]).rejected
        admitted[obj, numbers[i]] = answers[i] = known
    return answers
