"""The baseline's part of the suppression step: which findings its entries hide, each entry at
most one finding, and which entries hide nothing (PL906).

An entry is recorded for one definition of its object: the one in its file. It hides a finding
with the same rule, object and path in that file first. Only a finding that no entry of its own
file hides may take an entry of another file (or one that names no file), and only if its object
is defined once now: the object moved. Of an object defined twice, a copy added in another file
takes none of the original's entries: its findings are new, the original's stay hidden, whichever
file sorts first.

Findings of one rule on one field of one object are told apart in their fingerprints by an
occurrence counter, counted across files in the engine's order: a copy in a file sorting first
takes the original's fingerprint (occurrence 0), and the original gets occurrence 1. So such
findings are matched as a group, against the entries of any of their occurrences. A finding
without an object has its file in its fingerprint and is matched by it alone.

An entry written before its rule's findings moved to another field is read as it would be written
now first (policylint.suppressions.fingerprint_versions), so that it matches as any.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace

from policylint.findings import Finding, Suppression, SuppressionKind
from policylint.identity import IdentitySet
from policylint.k8s.objects import K8sObject, ObjectKey
from policylint.rules import suppressions as rules
from policylint.rules.engine import INTERNAL_ERROR, fingerprint
from policylint.suppressions import baseline as baseline_io
from policylint.suppressions import fingerprint_versions
from policylint.suppressions.baseline import Entry
from policylint.values import record

SUPPRESSION_RULES = frozenset(r.id for r in rules.RULES)

# Findings of one rule, object and path: matched together (see the module's docstring).
Identity = tuple[str, ObjectKey, str]


def recordable(f: Finding) -> bool:
    """Whether a baseline may hide `f`: not the run's own failure, not a finding about suppressions."""
    return f.rule != INTERNAL_ERROR and f.rule not in SUPPRESSION_RULES


@record
class Baselined:
    """What the baseline does to the active findings."""

    still: list[Finding]  # the findings it leaves active
    hidden: list[Finding]  # those it hides, marked so
    migrated: int  # entries that hid one only by its fingerprint before its rule's findings moved
    stale: list[Finding]  # PL906: the entries that hid nothing, where that is known


def apply_baseline(
    active: list[Finding],
    entries: Sequence[Entry],
    baseline_file: str,
    linted: Iterable[str],
    objects: Sequence[K8sObject],
    ran: frozenset[str],
) -> Baselined:
    """Hide the findings of `active` the baseline `entries` (of `baseline_file`) record; `linted`
    the files the run read, `ran` the ids of the rules that ran (an entry of another file or rule
    is not known to be stale)."""
    entries, rewritten = fingerprint_versions.migrate(entries, (f for f in active if recordable(f)))
    table = _Entries(entries, os.path.abspath(os.path.dirname(baseline_file) or "."))
    loose: list[Finding] = []
    groups: dict[Identity, list[Finding]] = {}
    for f in active:
        if recordable(f):
            if f.object is None:
                loose.append(f)
            else:
                groups.setdefault((f.rule, f.object, f.path), []).append(f)
    for f in loose:
        table.take_fingerprint(f)
    elsewhere = [(f, by_file) for identity, group in groups.items() for f, by_file in table.take_in_own_file(identity, group)]
    if elsewhere:
        table.take_moved(elsewhere, objects)
    still: list[Finding] = []
    hidden: list[Finding] = []
    for f in active:
        if f in table.matched:
            hidden.append(replace(f, suppression=Suppression(SuppressionKind.BASELINE)))
        else:
            still.append(f)
    stale = table.stale(baseline_file, linted, ran) if rules.StaleBaselineEntry.id in ran else []
    return Baselined(still, hidden, sum(1 for i in rewritten if table.used[i]), stale)


class _Entries:
    """The baseline's entries, looked up by fingerprint, and which of them hid a finding."""

    def __init__(self, entries: Sequence[Entry], base: str) -> None:
        self.entries = entries
        self.base = base  # the baseline's directory: entries' files are relative to it
        self.by_fingerprint: dict[str, list[int]] = {}  # indices into `entries`, in baseline order
        self.recorded: Counter[tuple[str, str, str]] = Counter()  # entries by rule, object and path as written
        self.unnamed: Counter[str] = Counter()  # entries naming no object, by rule
        for i, e in enumerate(entries):
            self.by_fingerprint.setdefault(e.fingerprint, []).append(i)
            self.recorded[(e.rule, e.object, e.path)] += 1
            if not e.object:
                self.unnamed[e.rule] += 1
        self.used = [False] * len(entries)
        self.matched: IdentitySet[Finding] = IdentitySet()  # the findings hidden (equal ones apart)
        self._located: dict[str, str] = {}  # entry file -> absolute path ("" for none)
        self._absolute: dict[str, str] = {}  # finding file -> absolute path

    def _take(self, indices: list[int], f: Finding) -> None:
        self.used[indices.pop()] = True
        self.matched.add(f)

    def take_fingerprint(self, f: Finding) -> None:
        """A finding without an object: its fingerprint alone (it holds its file) matches it."""
        indices = self.by_fingerprint.get(f.fingerprint)
        if indices:
            self._take(indices, f)

    def _candidates(self, identity: Identity, group: list[Finding]) -> list[int]:
        """The entries that may hide a finding of the group: those of its fingerprint, or of any
        occurrence of its rule, object and path."""
        first = group[0]
        count = self.recorded[(identity[0], str(identity[1]), identity[2])]  # as an entry writes them
        if len(group) == 1 and count <= 1:
            found = self.by_fingerprint.get(first.fingerprint)
            if found is not None:
                return found
            if count == 0 and not self.unnamed[identity[0]]:
                return []  # a new finding: no entry names its object (the common case)
        # The occurrences this run numbered may not be the baseline's: a copy of the object
        # counts, even one whose own finding a suppression hides.
        return [i for fp in _occurrences(first, len(group) + count, self.by_fingerprint) for i in self.by_fingerprint[fp]]

    def _by_file(self, candidates: list[int]) -> dict[str, list[int]]:
        by_file: dict[str, list[int]] = {}
        for i in candidates:
            file = self.entries[i].file
            where = self._located.get(file)
            if where is None:
                where = self._located[file] = baseline_io.absolute(file, self.base) if file else ""
            by_file.setdefault(where, []).append(i)
        return by_file

    def take_in_own_file(self, identity: Identity, group: list[Finding]) -> list[tuple[Finding, dict[str, list[int]]]]:
        """Hide each finding of the group with an entry of its own file; the others, with the
        group's entries by file, for `take_moved`."""
        candidates = self._candidates(identity, group)
        if not candidates:
            return []
        by_file = self._by_file(candidates)
        elsewhere = []
        for f in group:
            where = self._absolute.get(f.file)
            if where is None:
                where = self._absolute[f.file] = os.path.normpath(os.path.abspath(f.file))
            own = by_file.get(where)
            if own:
                self._take(own, f)
            else:
                elsewhere.append((f, by_file))
        return elsewhere

    def take_moved(self, elsewhere: list[tuple[Finding, dict[str, list[int]]]], objects: Sequence[K8sObject]) -> None:
        """Hide a finding no entry of its own file hid with one of another file, if its object is
        defined once: it moved."""
        keys = {f.object for f, _ in elsewhere}
        definitions = Counter(o.key for o in objects if o.key in keys)
        for f, by_file in elsewhere:
            assert f.object is not None
            if definitions[f.object] > 1:
                continue
            indices = next((indices for indices in by_file.values() if indices), None)
            if indices is not None:
                self._take(indices, f)

    def stale(self, baseline_file: str, linted: Iterable[str], ran: frozenset[str]) -> list[Finding]:
        """PL906 for each entry that hid nothing, when its rule ran over its file (a run over a few
        files, or `--select PL2`, says nothing about the others)."""
        read = frozenset(os.path.normpath(os.path.abspath(f)) for f in linted)
        rule = rules.StaleBaselineEntry
        in_scope: dict[str, bool] = {}  # by entry file
        out = []
        for e, hid in zip(self.entries, self.used, strict=True):
            if hid:
                continue
            if e.file not in in_scope:
                in_scope[e.file] = baseline_io.absolute(e.file, self.base) in read
            if e.rule not in ran or not in_scope[e.file]:
                continue
            what = " ".join(p for p in (e.object, e.path) if p)
            out.append(
                Finding(
                    baseline_file,
                    e.line,
                    1,
                    rule.id,
                    rule.name,
                    rule.severity,
                    f"baseline entry {e.rule} {what or e.file} ({e.file}) matches no finding: fixed, or the object was renamed",
                    hint="Run with --write-baseline to drop stale entries.",
                )
            )
        return out


def _occurrences(f: Finding, at_least: int, by_fingerprint: Mapping[str, object]) -> list[str]:
    """The fingerprints of `f`'s rule, object and path that the baseline records: occurrences
    0 to `at_least` - 1, and on while the baseline has the next one."""
    found = []
    occurrence = 0
    while True:
        fp = fingerprint(f, occurrence)
        if fp in by_fingerprint:
            found.append(fp)
        elif occurrence >= at_least:
            return found
        occurrence += 1
