"""What a run with a cache opens of what is kept per file between runs (docs/performance.md,
"Kept per file"): the admission verdicts' store and the per-object rules' results, two parts of
one entry per file (policylint.input.keptfiles), kept from pruning while the file's parse-cache
entry is, and not looked for of a file new to the cache."""

from __future__ import annotations

from typing import TYPE_CHECKING

from policylint.incremental.previous import Previous
from policylint.input.cache import ParseCache
from policylint.input.keptfiles import KeptFiles
from policylint.input.verdictstore import VerdictStore

if TYPE_CHECKING:
    from policylint.incremental.resident import Resident
    from policylint.incremental.rulecache import Reuse, RuleResults
    from policylint.input.positions import KeptSpans
    from policylint.k8s.objects import ObjectKey
    from policylint.pipeline import LintRequest
    from policylint.project import Project


def kept_per_file(cache: ParseCache, resident: Resident | None, *, by_content: bool = False) -> VerdictStore:
    """The admission verdicts kept in `cache`, with what is kept per file (the verdicts, the rules'
    results) kept from pruning while the file's entry is. `by_content`: the run analyses a part,
    whose edited files' objects' verdicts are looked up by their own content too
    (`VerdictStore.by_content`)."""
    from policylint.k8s.admission import code_stamp

    stamp = code_stamp()
    if resident is not None:
        verdicts = resident.verdicts(cache, stamp)
    else:
        # The files new to the run's cache (whose entries it wrote) have nothing kept beside them.
        verdicts = VerdictStore(KeptFiles(cache, cache.wrote), stamp)
    verdicts.by_content = by_content  # a long-lived process's store: this run's
    # Read afresh by each run (a long-lived process's whole run writes it anew), lazily: a run that
    # finds every verdict and result kept reads nothing of it.
    verdicts.previous = Previous(cache) if by_content else None
    cache.keep_beside(verdicts.files.entry)
    return verdicts


def analysed_whole(project: Project) -> None:
    """The run analyses every object though it asked for a part (a part that reaches the whole
    repository): its per-object rules look their results up by place only, so an edited file's
    objects are checked again, and PL703 asks each other plausible schema of them, which is a walk
    of the object whole where its verdict was kept rather than worked out (the differential walk
    needs what the verdict's CEL rules cost, policylint.k8s.differential). So their verdicts are
    not looked for through the file's earlier content either: found there, each other schema's
    answer would cost more than the verdict saves."""
    if project.kept_verdicts is not None:
        project.kept_verdicts.previous = None


def rule_reuse(
    request: LintRequest, project: Project, resident: Resident | None, members: frozenset[ObjectKey] | None
) -> Reuse | None:
    """What the per-object rules found in earlier runs, for this run to reuse and add to
    (policylint.incremental.rulecache): a long-lived process's, else the cache's. `members`: the
    objects of a part whose findings are kept."""
    kept = project.kept_verdicts  # None: the run has no cache
    if request.cache_dir is None or kept is None:
        return None
    from policylint.incremental import rulecache

    # The same entries as the verdicts': each file's is read once, and written once.
    results: RuleResults | None
    results = resident.rule_results(kept.files) if resident is not None else rulecache.open_results(kept.files)
    if results is not None and kept.previous is not None:
        results.share_previous(kept.previous)  # one index, each earlier content read once
    return rulecache.start(request, project, results, members=members, whole=resident.whole if resident is not None else None)


def kept_spans(project: Project, resident: Resident | None) -> KeptSpans | None:
    """The spans of findings answered by earlier runs, per file content (None: no cache): a
    long-lived process's in memory, else the cache's, a part of the entry kept per file
    (policylint.incremental.spans), so that a run reads again only the files whose bytes changed
    to place their findings."""
    if resident is not None:
        return resident.spans
    kept = project.kept_verdicts  # None: the run has no cache
    if kept is None:
        return None
    from policylint.incremental import memo
    from policylint.incremental.spans import CachedSpans

    return CachedSpans(kept.files, memo.code_stamp())


def keep_per_file(project: Project, reuse: Reuse | None, repository: int, *, write: bool, spans: KeptSpans | None = None) -> None:
    """Keep what the run added per file, for later runs (`write`: in the cache; else a long-lived
    process holds it, `Reuse.finish`). A file's entry holds its verdicts, its rule results and its
    findings' spans, written once (policylint.input.keptfiles): by the rule results' save, which
    bounds what the process holds after it, else here."""
    from policylint.incremental.spans import CachedSpans

    if write and isinstance(spans, CachedSpans):
        spans.finish()  # before either save below writes the entries
    kept = project.kept_verdicts
    if kept is not None and write:
        kept.save()
    if reuse is not None:
        reuse.finish(repository, write=write)
    if kept is not None and write:
        kept.files.save()
