"""The objects of unchanged files, kept in memory between the runs of one process: a
long-lived one (a language server), or the two sides of a change (`check --staged`, `--diff`).

A scoped run builds the objects of the files outside its part from their shells
(policylint.incremental.shells): one entry decoded and checked per file, then a `LazyObject` per
row, whose data is decoded again the first time the part reads it. A language server runs one
such analysis per edit over the same files, of which one changed: decoding 100 shells, building
10,000 objects and decoding the files the part reaches again each time was a third of an edit's
analysis at 10,000 objects (docs/performance.md#the-language-server), and reading the admission
verdicts kept in the cache (one entry of every verdict) another tenth. A `Resident` keeps, per file
name and parse-cache key (the file's bytes under the loader's stamp), what the run built of it
from its shell, so that the next run over the same bytes takes the same objects (their data
already decoded where the part read it) and reads nothing but the file's bytes, to hash them.
A whole run given one (a language server's first analysis) keeps what it loaded of each file the
same way (policylint.incremental.handover), with the part search's sets of its objects and what its stages
kept: the first part run after it is then an update like any other, not one that loads every
file, builds it again from its shell and works every stage out anew for objects that are all new
instances (1.4 s of CPU at 10,000 objects, docs/performance.md#the-language-server).

Objects are immutable, so handing the same ones to another run changes nothing it finds; what
they depend on besides the bytes is checked before they are taken: the run's default namespace and,
for each kind in the file, whether the run's kinds say it is namespaced (CRDs and profiles decide
that, and with it each object's namespace). The sets the part search joined the objects into are
kept too (`graph`, policylint.semantics.partgraph), so that an edit's search joins again only
what the edited file's objects reach; what the simulation's walk below each Gateway
found (`walks`, policylint.semantics.effective.walks), played back where it would read the same;
what the last topology resolved (the routes' attachments and backend references, the
listeners, certificate references and conflicts of each Gateway, the policies' references), with
what each result read
(`topology`, policylint.semantics.topology.kept); what each policy's target references resolved
to, with what each resolution read (`resolution`, policylint.semantics.keptresolution); which of the objects' fields have the wrong type
(`malformed`, a function of the object alone); and the policies built of the objects (`policies`,
a function of the object and its kind's profile), so that the simulation's facets and folds of
them are kept too (policylint.semantics.effective.folds). The differential tests
(tests/incremental/test_incremental.py, tests/editor/test_server_parts.py,
tests/incremental/test_kept_walks.py, tests/incremental/test_kept_folds.py,
tests/topology/test_topology_kept.py, tests/topology/test_topology_kept_gateways.py) compare every
update with a cold run of the same texts.

The gate of a change runs twice in one process: its side of the change, then the base's part
(policylint.commands.change), whose files are, but for those the change touched, the same bytes.
One `Resident` (`writes=True`) handed from the first run to the second gives the base side the
objects, the decoded data, the verdicts, the rule results, the part search's sets and the
parse-cache keys of the bytes the change's side built and read: the base's differences are an edit of the sets (tests/incremental/test_change_handoff.py
counts what the base side reads and joins).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING

from policylint.incremental.unchanged import KeptWhole
from policylint.input.cache import ContentKeys
from policylint.input.positions import KeptSpans
from policylint.semantics.effective.walks import KeptWalks
from policylint.semantics.keptresolution import KeptResolution
from policylint.semantics.partgraph import PartGraph
from policylint.semantics.topology.kept import KeptTopology
from policylint.values import frozen

if TYPE_CHECKING:
    from policylint.findings import Issue
    from policylint.incremental.rulecache import RuleResults
    from policylint.incremental.shells import Shell
    from policylint.input.cache import ParseCache
    from policylint.input.kept import Kept
    from policylint.input.keptfiles import KeptFiles
    from policylint.input.load import Document
    from policylint.input.verdictstore import VerdictStore
    from policylint.k8s.fieldtypes import Malformed
    from policylint.k8s.index import ProjectIndex
    from policylint.k8s.objects import K8sObject, KindRegistry
    from policylint.profiles.policy import Policy


@frozen(eq=False)
class Held:
    """What a run built of one file from its shell (`shells._build`), or loaded from its bytes in
    a whole run (`handover.held_loaded`), and what the objects depend on besides the file's bytes."""

    key: str  # the file's parse-cache key
    shell: Shell | None  # None: loaded, built again from `documents` when they no longer hold
    objects: Sequence[K8sObject]  # from a shell: built one by one as they are read (`shells.Slots`)
    issues: list[Issue]  # the loader's
    built: list[Issue]  # the problems of building the objects
    kept: Kept | None  # what the file was parsed from, for positions; None: no document
    default_namespace: str
    scopes: Mapping[tuple[str, str], bool]  # (group, kind) of each object -> cluster-scoped
    documents: Sequence[Document] = ()  # what a loaded file's objects were built from

    def holds_for(self, kinds: KindRegistry, default_namespace: str) -> bool:
        """Whether these objects are the ones the run with `kinds` builds from the shell."""
        return default_namespace == self.default_namespace and all(
            kinds.is_cluster_scoped(group, kind) is scoped for (group, kind), scoped in self.scopes.items()
        )


class Resident:
    """The files of the last run that were built from their shells, by name and parse-cache key.
    Each run replaces the whole table with its own files (`keep`), so that a file's earlier
    contents are not held after it changed.

    `writes`: each run writes what it added to the rule results and the admission verdicts to the
    cache, as a run without a `Resident` does (a command, which ends after its runs); a long-lived
    process holds what its part runs add, since writing each entry after every edit would cost it
    more than reading it costs the next process, and writes what its whole runs worked out."""

    def __init__(self, *, writes: bool = False, keys: ContentKeys | None = None) -> None:
        """`keys`: those a command worked out before it knew it would analyse (its result kept)."""
        self.writes = writes
        self._held: dict[str, tuple[str, Held]] = {}
        self._verdicts: tuple[str, bytes, VerdictStore] | None = None
        self._files: tuple[str, KeptFiles] | None = None
        self.graph = PartGraph()
        # The simulation's walk below each Gateway (policylint.semantics.effective.walks).
        self.walks = KeptWalks()
        # What the last topology built resolved, kept with what it read.
        self.topology = KeptTopology()
        # What the policies' target references resolved to in the last run, with what it read.
        self.resolution = KeptResolution()
        # The last run's index of every object it read: the next orders its objects from it
        # (policylint.k8s.ordering), the same instances but for the edited file's.
        self.index: ProjectIndex | None = None
        # What the last run's index found of its objects' field types (`ProjectIndex.malformed`).
        self.malformed: dict[K8sObject, Malformed] = {}
        # The policies the last run built, by object: the next takes those of the same instances
        # (`Resolution.adopt_policies`), whose facets and folds the walks keep (`walks.folds`).
        self.policies: dict[K8sObject, Policy] = {}
        # The positions the last runs resolved, per file while its bytes are unchanged.
        self.spans = KeptSpans()
        # The whole-project rules' issues of the last run, reused while its objects are the same.
        self.whole = KeptWhole()
        self._rules: tuple[str, RuleResults] | None = None
        # The parse-cache key of each file's bytes the last run read, by the bytes object itself:
        # the base side of a change reads the very bytes objects of its unchanged files (a
        # command's git snapshot reads each blob once), whose keys the change's side worked out.
        self.keys = keys if keys is not None else ContentKeys()

    def verdicts(self, cache: ParseCache, stamp: bytes) -> VerdictStore:
        """The admission verdicts kept in `cache` under `stamp`, each file's entry read from it
        once per process: the store holds what it read and what each run added and saved
        (policylint.input.verdictstore.VerdictStore), which is what reading it again would give, but
        for what another process saved meanwhile (a miss, never a wrong verdict)."""
        kept = self._verdicts
        if kept is None or kept[0] != cache.directory or kept[1] != stamp:
            from policylint.input.verdictstore import VerdictStore

            kept = self._verdicts = (cache.directory, stamp, VerdictStore(self._kept_files(cache), stamp))
        return kept[2]

    def rule_results(self, files: KeptFiles) -> RuleResults:
        """What the per-object rules found (policylint.incremental.rulecache), read from the
        entries kept per file once per process and added to by each run, as the verdicts are."""
        directory = files.cache.directory
        kept = self._rules
        if kept is None or kept[0] != directory:
            from policylint.incremental.rulecache import open_results

            found = open_results(self._kept_files(files.cache), held=True)
            assert found is not None
            kept = self._rules = (directory, found)
        return kept[1]

    def _kept_files(self, cache: ParseCache) -> KeptFiles:
        """The entries kept per file in `cache`'s directory, one for the verdicts and the rule
        results of every run of this process (both are parts of a file's entry). Nothing is
        looked for of the files the first run found new to the cache."""
        kept = self._files
        if kept is None or kept[0] != cache.directory:
            from policylint.input.keptfiles import KeptFiles

            kept = self._files = (cache.directory, KeptFiles(cache, cache.wrote))
        return kept[1]

    def content_key(self, cache: ParseCache, data: bytes, *, json: bool = False) -> str:
        """`cache.key(data, json=json)`, worked out once for the same bytes object."""
        return self.keys.key(cache, data, json=json)

    def keep_keys(self, data: Iterable[bytes]) -> None:
        """Hold the keys of these bytes alone (a run's files), so that a long-lived process
        holds no bytes of files it no longer reads."""
        self.keys.keep(data)

    def get(self, file: str, key: str) -> Held | None:
        found = self._held.get(file)
        return found[1] if found is not None and found[0] == key else None

    def keep(self, held: Mapping[str, Held]) -> None:
        self._held = {file: (h.key, h) for file, h in held.items()}
