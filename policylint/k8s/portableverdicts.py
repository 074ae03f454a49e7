"""Admission verdicts written as plain values, for another process of the same run.

With `--jobs`, the child forked once the index is built runs the rules that read it alone while
the main process builds the admissions and the topology; the topology asks for every policy's
verdict (a policy the API server refuses never reaches its controller), a tenth to a third of its
time at 10,000 objects, and on most repositories the child is done with its rules before the
topology is built (docs/performance.md, "The policies' admission verdicts handed back"). So the
child works those verdicts out first and writes them here (`write`, marshalled), and the main
process takes them as its own when the topology first asks for a verdict (`read`,
`Admissions.adopt`); the child forked after the topology inherits them as it inherits every
verdict worked out before it.

Only a verdict that refuses nothing is written: all it holds is plain values (the schema's
source, whether it was given with --crd, the pruned fields), the form verdicts kept between runs
have (policylint.k8s.admission). A refusal carries compiled CEL rules and values, and is worked out
by the reader, as is every verdict of an object not written. A verdict is a function of the object
and the catalogue, which both processes build alike from the same index (forked from one).
"""

from __future__ import annotations

import marshal
from typing import TYPE_CHECKING

from policylint.k8s.admissions import Admissions
from policylint.k8s.verdicts import Admission

if TYPE_CHECKING:
    from collections.abc import Iterable

    from policylint.input.verdictstore import VerdictStore
    from policylint.k8s.index import ProjectIndex
    from policylint.k8s.objects import K8sObject

# One object's verdict: its place in the index, the schema's source, given with --crd, the pruned
# fields ((parts, key, the keys the parent may have), as the schema walk makes them), and the CEL
# cost spent on it (None: none recorded, a verdict kept between runs).
Entry = tuple[int, str | None, bool, tuple[tuple[tuple[str | int, ...], str, list[str]], ...], int | None]


def write(index: ProjectIndex, kept: VerdictStore | None, objects: Iterable[K8sObject]) -> bytes:
    """The verdicts of `objects` that refuse nothing, worked out here with an admission stage of
    this process's own (`kept`: the verdicts kept between runs, which this process's additions go
    back to the main process with its results, as every child's do)."""
    admissions = Admissions(index, kept)
    catalogue = admissions.catalogue
    places = {obj: place for place, obj in enumerate(index.objects)}  # by identity: a K8sObject hashes so
    entries: list[Entry] = []
    for obj in objects:
        place = places.get(obj)
        if place is None or index.objects[place] is not obj:
            continue  # an object outside the index: no place both processes share
        verdict = admissions.verdict(obj)
        if verdict is None or verdict.schema or verdict.cel:
            continue
        found = catalogue.schema(obj)
        assert found is not None  # a verdict is made only with a schema
        spent = catalogue.cel_spent.get((obj, catalogue.schema_numbers(found[0])))
        entries.append((place, verdict.source, verdict.given, verdict.pruned, spent))
    return marshal.dumps(entries)


def read(admissions: Admissions, data: bytes) -> int:
    """Take what `write` wrote in another process of this run as this process's verdicts
    (`Admissions.adopt`), and how many; an entry that is not what `write` writes, or whose object's
    schema here is not the one it names, is not taken (worked out here when asked for)."""
    try:
        entries = marshal.loads(data)
    except (EOFError, ValueError, TypeError):
        return 0
    if not isinstance(entries, list):
        return 0
    objects = admissions.index.objects
    catalogue = admissions.catalogue
    taken = 0
    for entry in entries:
        if not _well_formed(entry) or not 0 <= entry[0] < len(objects):
            continue
        place, source, given, pruned, spent = entry
        obj = objects[place]
        found = catalogue.schema(obj) if isinstance(obj.data, dict) else None
        if found is None or found[1] != source:
            continue
        if admissions.adopt(obj, Admission((), (), source, given, pruned), found[0], spent):
            taken += 1
    return taken


def _well_formed(entry: object) -> bool:
    """Whether `entry` has exactly the shape `write` writes."""
    if type(entry) is not tuple or len(entry) != 5:
        return False
    place, source, given, pruned, spent = entry
    return (
        type(place) is int
        and (source is None or type(source) is str)
        and type(given) is bool
        and (spent is None or type(spent) is int)
        and type(pruned) is tuple
        and all(
            type(field) is tuple
            and len(field) == 3
            and type(field[0]) is tuple
            and all(type(p) is str or type(p) is int for p in field[0])
            and type(field[1]) is str
            and type(field[2]) is list
            and all(type(k) is str for k in field[2])
            for field in pruned
        )
    )
