"""The findings of a whole run after an edit, from the run before it and an analysis of the part
the edit can reach (policylint.incremental.workspace).

`lint(part=...)` analyses the objects an edited file's objects can reach, before and after the
edit (policylint.semantics.components), and computes the findings of those objects (its
members) as a whole run would. Every other object is out of the edit's reach: its findings are
the previous run's. So the findings now are the previous run's less those about a member or an
object the edit removed, plus the part's about its members. Findings about no object (input
problems, comments) are per file: a file whose objects are all members, or the edited file,
takes the part's; any other keeps its own.

Where that rule does not hold, `merge` says so (None) and the caller runs everything:

- a file holding members and other objects, and a `policylint:` comment: whether the comment is
  used depends on the findings of all the file's objects, the part computed only some;
- a file at or past the engine's cap of findings per file (PL007 counts them all);
- a run that failed inside (PL000), which is never taken for a whole run's.

A baseline's stale entries depend on every finding of the run: requests with a baseline are
never merged (`mergeable`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING

from policylint.findings import Finding
from policylint.rules.engine import MAX_FINDINGS_PER_FILE, RESOURCE_LIMIT

if TYPE_CHECKING:
    from policylint.k8s.objects import ObjectKey
    from policylint.pipeline import LintRequest


def mergeable(request: LintRequest) -> bool:
    """Whether a part's findings can stand in a whole run of `request`: no report scope (every
    finding read is reported), no baseline, no report sections computed over the whole run."""
    return (
        request.change is None
        and not request.context_paths
        and request.baseline is None
        and request.baseline_entries is None
        and request.write_baseline is None
        and not request.report_policies
        and not request.report_chains
    )


def merge(
    before: Sequence[Finding],
    part: Sequence[Finding],
    *,
    members: frozenset[ObjectKey],
    removed: Iterable[ObjectKey],
    edited: str,
    objects_by_file: Mapping[str, Sequence[ObjectKey]],
    has_comments: Callable[[str], bool],
) -> list[Finding] | None:
    """The findings of a whole run now (`before`: the previous whole run's, `part`: the part
    run's, of one kind: active or suppressed); None when they cannot be told from these (the
    module docstring). `removed`: the keys the edited file held before the edit;
    `objects_by_file`: the keys of every object read now, by file; `has_comments`: whether a
    file holds a `policylint:` comment."""
    gone = members | frozenset(removed)
    # The files whose findings about no object the part computed whole.
    whole_files = {edited}
    for file, keys in objects_by_file.items():
        inside = [k in members for k in keys]
        if all(inside) and keys:
            whole_files.add(file)
        elif any(inside) and has_comments(file):
            return None
    kept = [f for f in before if not (f.object in gone if f.object is not None else f.file in whole_files)]
    new = [f for f in part if (f.object in members if f.object is not None else f.file in whole_files)]
    out = kept + new
    if any(f.rule == RESOURCE_LIMIT for f in out):
        return None
    counts: dict[str, int] = {}
    for f in out:
        counts[f.file] = counts.get(f.file, 0) + 1
    if any(n >= MAX_FINDINGS_PER_FILE for n in counts.values()):
        return None
    out.sort(key=Finding.sort_key)
    return out
