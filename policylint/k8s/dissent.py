"""The plausible schemas that refuse an object the first one admits (docs/semantics.md#the-cluster-model).

When the run does not know the release (and channel) the cluster runs, an object's verdict is that
of the first plausible schema (policylint.k8s.admission: the newest release, the standard channel).
An object that schema admits may still be refused by another the cluster may run: Gateway API's
experimental channel checks header values against RFC 7230 from v1.5 on, the standard channel
never does; a vendor's older release may hold a rule its newest dropped. Such an object is stored
by some clusters and refused by others, so its schema findings are warnings naming both sides.

The other plausible schemas are asked only whether they admit the object, each walking only the
positions of the object where it differs from the first (the releases' schemas share their
unchanged subtrees, `policylint.k8s.schemas`; policylint.k8s.differences says why that is exact),
the answer kept between runs with the verdicts of the first, so that a cached run walks only what
some schema refuses; the refusal of the first that does not is computed in full; the rules ask once per object
(policylint.rules.releases `Dissents`). The verdict of the first plausible
schema stays the object's (`Admissions.verdict`): the simulation never treats as refused an
object that the first plausible cluster stores.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from policylint.identity import IdentityMap
from policylint.k8s.admission import _admit, validate
from policylint.k8s.differences import admits as differential
from policylint.k8s.differences import kept_key
from policylint.k8s.verdicts import Admission
from policylint.values import frozen

if TYPE_CHECKING:
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
    verdict refuses the object, or every plausible schema admits it)."""
    verdict = admissions.verdict(obj)
    if verdict is None or verdict.rejected or verdict.source is None or not isinstance(obj.data, dict):
        return None
    catalogue = admissions.catalogue
    key = (obj.group, obj.kind, obj.version)
    if catalogue.decided_for(key):
        return None
    first = catalogue.schema(obj)
    if first is None:
        return None
    answers: IdentityMap[Mapping[str, Any], bool] = IdentityMap()  # one per distinct schema
    answers[first[0]] = True
    shapes: dict[int, Any] = {}  # the object's maps and lists by content, for every pair (`cel.shape`)
    refusing: list[tuple[str, str, tuple[Mapping[str, Any], str]]] = []
    accepting: list[Pair] = []
    for release, channel, found in catalogue.plausible(key):
        if found is None:
            continue  # not served there: PL705's
        schema = found[0]
        if schema not in answers:
            answers[schema] = _admits(admissions, obj, catalogue, first[0], found, shapes)
        if answers[schema]:
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


def _admits(
    admissions: Admissions,
    obj: K8sObject,
    catalogue: Catalogue,
    first: Mapping[str, Any],
    found: tuple[Mapping[str, Any], str],
    shapes: dict[int, Any],
) -> bool:
    """Whether the schema admits the object whole, which the first plausible schema admits: from
    the answers kept between runs (the parse cache's `VerdictStore`: a schema that admitted the
    object last run is not walked again), else by walking only where the two schemas differ
    (policylint.k8s.differences), else by walking it whole (`_admit`, which keeps its verdict)."""
    number = catalogue.schema_numbers(found[0])
    known = catalogue.admitted.get((obj, number))
    if known is not None:
        return known
    kept = kept_key(admissions, obj, found[0])
    if kept is not None and admissions.kept.get(kept) is True:  # type: ignore[union-attr]
        known = True
    elif differential(admissions, obj, first, found[0], shapes):
        known = True
        if kept is not None:
            admissions.kept.add(kept, True)  # type: ignore[union-attr]
    else:
        known = not _admit(admissions, obj, found).rejected
    catalogue.admitted[obj, number] = known
    return known
