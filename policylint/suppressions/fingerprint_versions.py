"""The fingerprints a rule's findings had before their location moved, so that an older baseline
still hides them.

A finding's fingerprint holds its field path (policylint.rules.engine.fingerprint). When a
rule's findings move to another field, every fingerprint a baseline recorded for that rule
changes, and the findings the baseline hid would come back as new. `MOVES` is the table of such
changes, one row per rule and move: the baseline step (policylint.suppressions.apply) gives an
entry that no finding claims by its fingerprint a second chance, against the fingerprint each
finding of that rule would have had before the move (`previous_paths`), and counts the entries
matched so, since `--write-baseline` records them as they are now.

The next location change adds a row here, newest first, and nothing else.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from policylint.rules.engine import fingerprint
from policylint.values import frozen

if TYPE_CHECKING:
    from policylint.findings import Finding
    from policylint.k8s.objects import ObjectKey
    from policylint.suppressions.baseline import Entry


@frozen
class Move:
    """A rule's findings moved from a reference onto one of its fields (`field`) when that field
    is written: before, the path was the reference's (`spec.targetRefs[0]`), now it is the field's
    (`spec.targetRefs[0].name`)."""

    rule: str
    field: str
    change: str  # what moved them, for people reading the table

    def previous(self, path: str) -> str | None:
        """The path a finding now at `path` had before the move; None: the move did not touch it
        (the field is not written, so the finding stayed on the reference)."""
        suffix = "." + self.field
        return path[: -len(suffix)] if path.endswith(suffix) else None


_ON_NAME = "a finding about what a reference names sits on the reference's name, not on the reference"

MOVES: tuple[Move, ...] = (
    Move("PL201", "name", _ON_NAME),
    Move("PL406", "name", _ON_NAME),
    Move("PL409", "name", _ON_NAME),
    Move("PL411", "name", _ON_NAME),
    Move("PL417", "name", _ON_NAME),
)


def _by_rule(moves: tuple[Move, ...]) -> Mapping[str, tuple[Move, ...]]:
    out: dict[str, tuple[Move, ...]] = {}
    for move in moves:
        out[move.rule] = (*out.get(move.rule, ()), move)
    return out


_BY_RULE = _by_rule(MOVES)


def moved(rule: str) -> bool:
    """Whether findings of `rule` ever changed location (most rules never did: nothing to try)."""
    return rule in _BY_RULE


def previous_paths(rule: str, path: str) -> list[str]:
    """The paths a finding of `rule` now at `path` had before each move, newest first: each
    move is undone on what the later ones left, as the older code wrote it."""
    out: list[str] = []
    current = path
    for move in _BY_RULE.get(rule, ()):
        before = move.previous(current)
        if before is not None:
            out.append(before)
            current = before
    return out


def migrate(entries: Sequence[Entry], findings: Iterable[Finding]) -> tuple[list[Entry], frozenset[int]]:
    """`entries` with each one recorded under a previous fingerprint of one of `findings` written
    as it would be now (fingerprint and path), and the indices of those rewritten.

    Only an entry no finding claims as it is is rewritten: a baseline that records a finding in
    both forms keeps the current entry, and the previous one is left to be reported stale.
    Findings of one rule on one field of one object are numbered by an occurrence counter in
    their fingerprints, counted the same way before the move: occurrence n of the previous form
    becomes occurrence n of the current one."""
    known = {e.fingerprint for e in entries}
    groups: dict[tuple[str, ObjectKey, str], tuple[Finding, int]] = {}
    for f in findings:
        if f.object is not None and moved(f.rule):
            identity = (f.rule, f.object, f.path)
            first, count = groups.get(identity, (f, 0))
            groups[identity] = (first, count + 1)
    current: dict[str, tuple[str, str]] = {}  # previous fingerprint -> current one, and path
    for first, count in groups.values():
        for path in previous_paths(first.rule, first.path):
            before = replace(first, path=path)
            occurrence = 0
            while True:
                old = fingerprint(before, occurrence)
                if old in known:
                    current.setdefault(old, (fingerprint(first, occurrence), first.path))
                elif occurrence >= count:
                    break
                occurrence += 1
    if not current:
        return list(entries), frozenset()
    out: list[Entry] = []
    rewritten: set[int] = set()
    for i, e in enumerate(entries):
        now = current.get(e.fingerprint)
        if now is not None and now[0] not in known:
            out.append(replace(e, fingerprint=now[0], path=now[1]))
            rewritten.add(i)
        else:
            out.append(e)
    return out, frozenset(rewritten)
