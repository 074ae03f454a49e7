"""What a run with a cache opens of what is kept per file between runs (docs/performance.md,
"Kept per file"): the admission verdicts' store and the per-object rules' results, each file's kept
from pruning while the file's parse-cache entry is, and no rule results looked for of a file new to
the cache."""

from __future__ import annotations

from typing import TYPE_CHECKING

from policylint.input.cache import ParseCache, open_cache
from policylint.input.verdictstore import VerdictStore

if TYPE_CHECKING:
    from policylint.incremental.resident import Resident
    from policylint.incremental.rulecache import Reuse, RuleResults
    from policylint.k8s.objects import ObjectKey
    from policylint.pipeline import LintRequest
    from policylint.project import Project


def kept_per_file(cache: ParseCache, resident: Resident | None, *, by_content: bool = False) -> VerdictStore:
    """The admission verdicts kept in `cache`, with what is kept per file (the verdicts, the rules'
    results) kept from pruning while the file's entry is. `by_content`: the run analyses a part,
    whose edited files' objects' verdicts are looked up by their own content too
    (`VerdictStore.by_content`)."""
    from policylint.incremental.rulecache import keep_beside
    from policylint.k8s.admission import code_stamp

    stamp = code_stamp()
    verdicts = resident.verdicts(cache, stamp) if resident is not None else VerdictStore(cache, stamp)
    verdicts.by_content = by_content  # a long-lived process's store: this run's
    cache.keep_beside(verdicts.entry)
    keep_beside(cache)
    return verdicts


def rule_reuse(
    request: LintRequest, project: Project, resident: Resident | None, members: frozenset[ObjectKey] | None
) -> Reuse | None:
    """What the per-object rules found in earlier runs, for this run to reuse and add to
    (policylint.incremental.rulecache): a long-lived process's, else the cache's. `members`: the
    objects of a part whose findings are kept."""
    if request.cache_dir is None:
        return None
    from policylint.incremental import rulecache

    cache, _ = open_cache(request.cache_dir, [*request.paths, *request.crd_paths])
    if cache is None:
        return None
    results: RuleResults | None
    if resident is not None:
        results = resident.rule_results(cache)
    else:
        # The files new to the run's cache (whose entries it wrote) have nothing kept beside them.
        kept = project.kept_verdicts
        results = rulecache.open_results(cache, kept.cache.wrote if kept is not None else None)
    return rulecache.start(request, project, results, members=members, whole=resident.whole if resident is not None else None)
