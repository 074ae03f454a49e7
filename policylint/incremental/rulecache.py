"""What the per-object rules found on each object, reused while nothing they read changed.

After a one-file change, a language server's update and the pre-commit hook analyse the part of
the repository the change reaches (policylint.semantics.components): about 2,500 of 10,000
objects on the generated corpus, of which the change touched a hundred. Every rule ran again
over all of them, and the schema family (PL702, PL703, PL705-PL707, whose verdicts across the
releases a cluster may run are asked of every object) was most of the rules' time
(docs/performance.md#reusing-what-the-rules-found-per-object).

The per-object rules (`ObjectRule`: PL702-PL707, PL426) are reused here. What one finds on an
object depends on the object (its bytes and place in its file), its admission verdict (the object
and the schema the catalogue picks), things that are the same for every object of the run, and,
for some objects, more: PL704 reads what the topology's rules report on the object once one of
its CEL rules fails. Each check of an object runs over a view of the project (`_View`) that notes
whether it read anything but the object, its verdict and the run's context (a later stage, the
resolution, a project-wide lookup not marked `object_local`); if it did, its findings on that
object are not kept, and the rule runs again on it next time. Otherwise they are kept under a key
that hashes

- the run's context (`context`): the code (every file of this package), the request's settings
  that shape findings (`memo.settings`: rules, their options, cluster, profiles, CRD and profile
  files), the cluster the run works out (declared or inferred from the input, with where it was
  inferred from, which messages quote), and every CRD the run reads (they decide schemas, served
  versions and which kinds are namespaced);
- the object: its file's name and parse-cache key (its bytes under the loader's stamp), its place
  in the file, and, for a policy, the target fields of its profile (PL702 and PL703 leave them to
  the target rules), which a CRD or profile decides and the context holds, but a kind guessed from
  the shape decides per object. When that misses (the object's file changed: an edit touches one
  object of a file of a hundred), the object's own content (`_content_key`) is tried too.

The rules over the whole project and the policy rules (`PolicyRule`, which read what a policy's
references resolve to) run again over the whole part: what they find on an object depends on
other objects (a route's parent, a grant, a policy's competitors), and the stages are built for
the part at once, with no record of which objects each answer read. A long-lived process reuses
their issues while the part holds the same objects as its last run
(policylint.incremental.unchanged), and, for a rule that declares its unit, each unit's while the
unit and every answer it read are the same objects (policylint.incremental.units).

In a long-lived process, the objects of the files an update left alone are the last run's
instances: their keys are taken from the last run (`RuleResults.instances`) rather than hashed,
and a file's objects are answered together, per rule, while they are the last run's with the same
target fields (`RuleResults.file_rows`), so that an update looks objects up one by one in the
edited file only.

An issue is kept only when it is about the object checked and nothing else (no note on another
object, no fix, which names objects too): the object of a reused issue is the one this run
built, so its position is read from the file as it is now. Otherwise that object's result for
that rule is computed on every run.

A language server holds one `RuleResults` in memory (policylint.incremental.resident) across
edits, bounded after each (`RuleResults.trim`); any run with a cache reads them from it, a part of
the entry kept per file (policylint.input.keptfiles, beside the file's admission verdicts) named
by the file's content key (or, for the results kept by an object's own content, its name) under
the code's hash, each read when an object of the file is first asked about, and writes the
entries it added to at the end, under the parse cache's trust rules (outside the checkout, behind
a checksum, each key and row checked on reading: anything else is a miss, and the rule runs). A
file's entry is pruned with its parse-cache entry (`ParseCache.keep_beside`).
A run over a part asks about its members only: the engine drops what is found on the context.
The differential tests (tests/incremental/test_incremental.py, tests/editor/test_server_parts.py)
compare each update with a cold run of the same texts.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Container, Iterable, Iterator, Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from policylint.findings import Issue, Severity
from policylint.incremental import previous
from policylint.input.jsonparts import map_parts, read_map
from policylint.project import is_object_local
from policylint.stages import Stage

if TYPE_CHECKING:
    from policylint.incremental.previous import Previous
    from policylint.incremental.unchanged import KeptWhole, Whole
    from policylint.input.keptfiles import KeptFiles
    from policylint.k8s.admissions import Admissions
    from policylint.k8s.objects import K8sObject, ObjectKey
    from policylint.pipeline import LintRequest
    from policylint.project import Project
    from policylint.rules.base import ObjectRule, Rule
    from policylint.semantics.effective.simulation import Simulation
    from policylint.semantics.resolution import Resolution
    from policylint.semantics.topology import Topology

T = TypeVar("T")

# Bump when the layout or meaning of what is kept changes. 1: one entry for every object; 2: one
# per file; 3: a part of the entry kept per file (policylint.input.keptfiles).
FORMAT = 3
# Its part of the entry kept per file.
PART = "results"
# Objects a process holds at most, whatever the repository (`Reuse.finish`); past it it holds the
# ones its last run used and the newest others.
MAX_OBJECTS = 200_000
# An entry keeps at least this many objects (`RuleResults.save`).
MIN_KEPT = 4096
_KEY = re.compile(r"[0-9a-f]{32}\Z")
_SEVERITIES = frozenset(s.value for s in Severity)

# One issue as kept: field path, message, severity (None: the rule's), hint.
Row = tuple[str, str, int | None, str | None]
# A file's objects as kept together: how many, and the rows of those with issues, by place in
# the index's order of the file's objects.
FileRows = tuple[int, tuple[tuple[int, tuple[Row, ...]], ...]]
# An object's results: (rule id, its rows) for each rule kept, in the order they were added.
Results = tuple[tuple[str, tuple[Row, ...]], ...]


def reusable(rule: type[Rule]) -> bool:
    """Whether what `rule` finds on an object may be kept: a per-object rule (`ObjectRule`), whose
    check of an object is watched (`_View`) for anything it reads beyond the object."""
    from policylint.rules.base import ObjectRule

    return issubclass(rule, ObjectRule)


class _View:
    """The project as one check of one object reads it: `beyond` says whether the check read
    anything but the object, its admission verdict and the run's context, namely a later stage,
    the resolution (what a policy's references name) or a lookup not marked `object_local`; then
    its findings are not kept. The index is read through as it is: the lookups a per-object rule
    makes of it are about its object (`malformed`, `placeholders`)."""

    def __init__(self, project: Project) -> None:
        self._project = project
        self.index = project.index
        self.kept_verdicts = project.kept_verdicts
        self.beyond = False

    @property
    def resolution(self) -> Resolution:
        self.beyond = True
        return self._project.resolution

    def admissions(self) -> Admissions:
        return self._project.admissions()

    def topology(self) -> Topology:
        self.beyond = True
        return self._project.topology()

    def simulation(self) -> Simulation:
        self.beyond = True
        return self._project.simulation()

    def derived(self, compute: Callable[[Project], T]) -> T:
        if not is_object_local(compute):
            self.beyond = True
        return self._project.derived(compute)

    def has_stage(self, stage: Stage) -> bool:
        return self._project.has_stage(stage)

    def __getattr__(self, name: str) -> Any:
        self.beyond = True  # something this view does not know to be the object's alone
        return getattr(self._project, name)


class RuleResults:
    """The kept results: object key -> each rule's rows. Kept in the cache a part of the entry kept
    per file (`entry`, policylint.input.keptfiles): the keys of an object by its place (`Reuse._key`) in the entry of its file's
    content, those by its own content (`Reuse._content_key`) in the entry of its file's name
    (`by_name`), so that a file changed since finds what its unchanged objects were. A file's
    entry is read the first time an object of it is asked for, so a run that analyses a part reads
    the entries of its part's files; it is written by `save` when a run added to it, so a one-file
    change writes that file's. One entry for every object (0.57-1.3 MB on the generated corpora)
    was read whole by every run, and written whole again by one that added to it. An entry is
    decoded whole but each object's rows are checked only when a run asks for them. A run whose
    per-object rules all run in `--jobs` shares asks for none and reads no entry.

    What a run fills is held to the end of its rules stage, where its memory peaks, for 100,000
    objects at a time (docs/performance.md, "Memory at 100,000 objects on the shared corpus"): a
    key is its 16-byte digest (written as hex), and an object's results one tuple of (rule id,
    rows) pairs, not a map of its own; the tuples of an object no rule found anything on (most)
    are one object each for the run (`_shape`), and a pair of a rule that found nothing too."""

    def __init__(self, store: KeptFiles | None = None, stamp: bytes = b"", *, held: bool = False) -> None:
        """`store`: the entries kept per file, whose results part these are (None: held in memory
        only); `stamp`: the code's hash, so that a part other code wrote is not taken."""
        self._store = store
        if store is not None:
            store.own(PART, FORMAT.to_bytes(2, "big") + stamp, self._text)
        # Whether a long-lived process holds these results for its next run (a `Resident`). Only
        # then are `instances` and the rows per rule and file kept: nothing else reads them, and a
        # one-shot run held them to the end of its rules stage, its peak (docs/performance.md,
        # "The filling run under 1 GiB").
        self.held = held
        # Each object's results, in the order they were first read or added: a map as read from
        # an entry, not checked yet (`_checked`), else `Results`, checked or added.
        self._results: dict[bytes, Results | dict[str, Any]] = {}
        # The keys of each file's entry (by `where`: a content key, or `by_name`), as read and
        # added, in that order; the entries read, and those a run added to since it last wrote.
        self._files: dict[str, list[bytes]] = {}
        self._dirty: set[str] = set()
        self._used: set[bytes] = set()
        self._shared: dict[Any, Any] = {}  # `_shape`'s table
        # The keys the last run worked out, by object instance, with what decided them
        # (`Reuse._key`): a long-lived process's next run builds the same instances for the files
        # whose bytes are unchanged (policylint.incremental.resident), whose keys are then looked
        # up rather than hashed again (a twentieth of an editor's rules stage at 10,000 objects).
        self.instances: dict[K8sObject, tuple[bytes, str, tuple[str, ...] | None, bytes]] = {}
        # Per rule and file, the rows of the file's objects as one run found them (`Reuse._by_file`),
        # in memory only: each object's rows are kept by its key as well, which is what is written.
        self._rows: dict[tuple[str, str], tuple[tuple[object, ...], FileRows]] = {}
        self._previous: Previous | None = None

    def entry(self, where: str) -> str:
        """The cache entry of the file `where` (its content key, or `by_name` of its name)."""
        assert self._store is not None
        return self._store.entry(where)

    def previous(self) -> Previous | None:
        """The content each file had when a whole run last read it (None: no cache)."""
        if self._previous is None and self._store is not None:
            self._previous = previous.Previous(self._store.cache)
        return self._previous

    def share_previous(self, index: Previous) -> None:
        """Read the earlier contents through `index`, which the admission verdicts read too
        (policylint.input.verdictstore `VerdictStore.previous`)."""
        self._previous = index

    @property
    def adding(self) -> bool:
        """Whether a run added results since they were last written."""
        return bool(self._dirty)

    def record(self, keys: Mapping[str, str]) -> None:
        """Name the content key of each of a whole run's files (`previous.record`)."""
        if self._store is not None:
            previous.record(self._store.cache, keys)

    def get(self, key: bytes, rule_id: str, where: str) -> tuple[Row, ...] | None:
        """What `rule_id` found on the object of `key`, kept in the entry of the file `where`."""
        self._load(where)
        for rule, rows in self._checked(key):
            if rule == rule_id:
                self._used.add(key)
                return rows
        return None

    def found(self, key: bytes, where: str) -> Results:
        """Every rule's rows kept for the object of `key` in the entry of the file `where`, checked
        (none: nothing kept). Not marked used: `use` does that for the rules a run takes."""
        self._load(where)
        return self._checked(key)

    def use(self, keys: Iterable[bytes]) -> None:
        """The objects of `keys` had what a rule found on them taken (`get` marks its own)."""
        self._used.update(keys)

    def file_rows(self, rule_id: str, file: str, stamp: tuple[object, ...]) -> FileRows | None:
        """What `rule_id` found on the objects of `file` when they were the same (`stamp`: the
        run's context, the file's content key, its objects and their target fields)."""
        found = self._rows.get((rule_id, file))
        return found[1] if found is not None and found[0] == stamp else None

    def put_file_rows(self, rule_id: str, file: str, stamp: tuple[object, ...], rows: FileRows) -> None:
        if self.held:
            self._rows[(rule_id, file)] = (stamp, rows)

    def add(self, key: bytes, rule_id: str, rows: tuple[Row, ...], where: str) -> None:
        self._load(where)
        if key not in self._results:
            self._files[where].append(key)
        before = self._checked(key)
        at = next((i for i, (rule, _) in enumerate(before) if rule == rule_id), len(before))
        self._results[key] = self._shape((*before[:at], (rule_id, rows), *before[at + 1 :]))
        self._dirty.add(where)
        self._used.add(key)

    def _load(self, where: str) -> None:
        """Read the file's entry, the first time it is asked for."""
        if where in self._files:
            return
        keys = self._files[where] = []
        if self._store is None:
            return
        results = self._results
        # Nothing of a file new to the cache: a run that fills it would otherwise look for
        # thousands of entries in vain (docs/performance.md, "Kept per file"; `KeptFiles`).
        for key, by_rule in _decode(self._store.take(where, PART)).items():
            if key not in results:  # what this process holds is newer
                results[key] = by_rule
                keys.append(key)

    def _checked(self, key: bytes) -> Results:
        """The object's results; as read, the rows of each rule that are what `save` writes, all
        checked at once (a run asks for every rule's) and held so."""
        found = self._results.get(key, ())
        if type(found) is tuple:
            return found
        pairs = []
        for rule, value in cast("dict[str, Any]", found).items():
            # Most rules found nothing on most objects: an empty list is what `_rows` would make ().
            rows = () if value == [] else _rows(value)
            if rows is not None:
                pairs.append((rule, rows))
        checked = self._results[key] = self._shape(tuple(pairs))
        return checked

    def _shape(self, results: Results) -> Results:
        """`results`, or the one tuple of its content when no rule found anything (then it repeats
        on most objects, where a tuple each was 80 bytes, and a map each 270 at 20k objects)."""
        if any(rows for _, rows in results):
            return results
        return cast("Results", self._shared.setdefault(results, results))

    def retain_files(self, files: set[str]) -> None:
        """Hold the rows of `files` only (the last run's): a file deleted or renamed is let go."""
        self._rows = {where: kept for where, kept in self._rows.items() if where[1] in files}

    def save(self, limit: int = MAX_OBJECTS) -> None:
        """Write the entry of each file a run added to since it last wrote, with the file's other
        parts (`KeptFiles.save`: its admission verdicts, which the run saved before), then hold at
        most `limit` objects as `trim` does. An entry keeps what it held and what was added, unless
        that is past four times (and `MIN_KEPT`) the objects of it this process used: then only
        those, as the same file's objects under other settings or its older contents pile up."""
        if self._store is not None:
            used = self._used
            for where in self._dirty:
                keys = self._files[where]
                if len(keys) > MIN_KEPT and len(keys) > 4 * sum(key in used for key in keys):
                    self._files[where] = [key for key in keys if key in used]
                self._store.changed(where)
            self._store.save()
        self._dirty = set()
        self._hold(limit)

    def _text(self, where: str) -> Iterator[bytes] | None:
        """The file's part, encoded as it is written (policylint.input.jsonparts): it is written
        where the run's memory peaks, and a whole run's results are tens of MB at 100k objects."""
        keys = self._files.get(where)
        if not keys:
            return None
        results = self._results
        objects = (
            (key.hex(), dict(value) if type(value) is tuple else value)
            for key in keys
            if key in results
            for value in (results[key],)
        )
        return map_parts("", objects, "")

    def trim(self, limit: int) -> None:
        """Bound what a long-lived process holds, which is never written (`save` would): past
        `limit` objects, keep those the last run used and the newest others up to half of it.
        Each edit adds the objects of the edited file as typed, under new keys."""
        self._dirty = set()
        self._hold(limit)

    def _hold(self, limit: int) -> None:
        """Past `limit` objects, hold those the last run used and the newest others up to half of
        it; one let go is worked out again when asked for."""
        if len(self._results) > limit:
            others = [k for k in self._results if k not in self._used]
            keep = self._used | set(others[max(0, len(others) - limit // 2) :])
            self._results = {k: v for k, v in self._results.items() if k in keep}
            self._files = {where: [k for k in keys if k in keep] for where, keys in self._files.items()}
        self._used = set()


def by_name(file: str) -> str:
    """Where the results kept by an object's own content are: its file's name (the content
    keys hash it), whatever the file's content, so that a changed file finds its unchanged
    objects' results."""
    return "name:" + file


def _decode(text: bytes | None) -> dict[bytes, Any]:
    """The part's objects, each a map of rule ids to rows as `save` writes them, not checked yet
    (`_rows` checks them when asked for); nothing when the part is not what `save` writes."""
    objects = read_map(text)
    return {bytes.fromhex(key): by_rule for key, by_rule in objects.items() if _KEY.match(key) and type(by_rule) is dict}


def _rows(value: Any) -> tuple[Row, ...] | None:
    # Lists as read from the entry; tuples where `save` put this process's own rows.
    if type(value) is not list and type(value) is not tuple:
        return None
    rows: list[Row] = []
    for row in value:
        if (type(row) is not list and type(row) is not tuple) or len(row) != 4:
            return None
        path, message, severity, hint = row
        if (
            type(path) is not str
            or type(message) is not str
            or not (severity is None or (type(severity) is int and severity in _SEVERITIES))
            or not (hint is None or type(hint) is str)
        ):
            return None
        rows.append((path, message, severity, hint))
    return tuple(rows)


def context(request: LintRequest, project: Project) -> bytes | None:
    """What, besides an object, decides what a reusable rule finds on it in this run (the module's
    docstring lists it); None: something cannot be written reliably, and nothing is reused."""
    from policylint.incremental import memo

    shaping = memo.settings(request)
    if shaping is None:
        return None
    index = project.index
    h = hashlib.blake2b(digest_size=16)
    h.update(FORMAT.to_bytes(2, "big") + memo.code_stamp() + shaping)
    # A frozen dataclass of strings and tuples: its repr is the same in every process.
    h.update(repr(index.cluster()).encode("utf-8", "surrogateescape"))
    for crd in [*index.crds(), *index.options.context_crds]:
        content = index.content_keys.get(crd.doc.file)
        if content is None:  # a CRD given with --crd, or read from standard input: its content
            content = json.dumps(crd.data, sort_keys=True, separators=(",", ":"), default=repr)
        h.update(json.dumps([crd.doc.file, content, *crd.sort_key()[1:]], default=repr).encode("utf-8", "surrogateescape"))
    return h.digest()


def start(
    request: LintRequest,
    project: Project,
    results: RuleResults | None,
    *,
    members: Container[ObjectKey] | None = None,
    whole: KeptWhole | None = None,
) -> Reuse | None:
    """The reuse of `results` by the run of `request` over `project`; None: nothing is reused
    (no cache, or a setting that cannot be written reliably). `members`: the run analyses a part
    after a change, whose findings on these objects only are kept (the engine drops the others',
    policylint.rules.engine `run`): the per-object rules are asked about these only, so the
    entries of the files holding nothing but the part's context are not read, and an object of a
    changed file is looked up by its own content too (`Reuse.check`); a whole run, whose objects'
    files are mostly all new to the cache or all unchanged, does not spend that on every object. `whole`: what a long-lived process's last run
    found with the rules over the whole project (policylint.incremental.unchanged)."""
    if results is None:
        return None
    run = context(request, project)
    if run is None:
        return None
    reuse = Reuse(results, run, project, by_content=members is not None, members=members)
    if whole is not None:
        reuse.whole = whole.begin(project, run, reuse.target_fields)
        reuse.kept_whole = whole
    return reuse


def open_results(store: KeptFiles | None, *, held: bool = False) -> RuleResults | None:
    """The results kept in the entries of `store` (None: no cache), under the code's hash.
    `held`: by a long-lived process for its next runs (`RuleResults.held`)."""
    if store is None:
        return None
    from policylint.incremental import memo

    return RuleResults(store, memo.code_stamp(), held=held)


class Reuse:
    """The kept results as one run reads and adds to them: `check` is a reusable rule's issues on
    one object, kept ones where the key matches."""

    def __init__(
        self,
        results: RuleResults,
        run: bytes,
        project: Project,
        *,
        by_content: bool = True,
        members: Container[ObjectKey] | None = None,
    ) -> None:
        self._results = results
        self._members = members
        self._by_content = by_content
        self._run = run
        self._project = project
        self._keys: dict[K8sObject, bytes | None] = {}  # object (hashed by identity) -> its key
        self._contents: dict[K8sObject, bytes | None] = {}  # object -> `_content_key`, once for every rule
        self._digests: dict[K8sObject, str] = {}  # object -> its data's digest (`previous.digest`)
        self._known: dict[K8sObject, tuple[bytes, str, tuple[str, ...] | None, bytes]] = {}
        self._targets: dict[K8sObject, tuple[str, ...]] | None = None
        self._groups: list[tuple[str, list[K8sObject], tuple[object, ...] | None]] | None = None
        # Per file, the rules whose rows every object of it has kept (`_kept_together`).
        self._together: dict[str, tuple[list[bytes], dict[str, FileRows]]] = {}
        self.reused = 0  # objects whose issues were kept ones (the tests count them)
        # The whole-project rules' issues of a long-lived process's last run, when it keeps them.
        self.whole: Whole | None = None
        self.kept_whole: KeptWhole | None = None

    @staticmethod
    def covers(rule: type[Rule]) -> bool:
        return reusable(rule)

    def finish(self, repository: int, *, write: bool) -> None:
        """Keep what this run added, for a repository of `repository` objects (the kept results
        of a few versions of each of its objects at most): written to the cache (`write`,
        `RuleResults.save`), or held in memory only (`RuleResults.trim`). The keys of this run's
        objects replace the last run's (`RuleResults.instances`): only this run's objects are held
        (none when no process holds the results for a next run: `_known` is empty then)."""
        self._results.instances = self._known
        if self.kept_whole is not None:
            self.kept_whole.finish()
        if self._groups is not None:
            self._results.retain_files({file for file, _, _ in self._groups})
        limit = min(MAX_OBJECTS, max(20_000, 4 * repository))
        if write:
            if self._members is None and self._results.adding:
                # A whole run keeps its objects by place only: a later run that meets one of
                # these files changed finds its unchanged objects' results through this content.
                # A run that added nothing found every object kept by place already, each file's
                # content named by the whole run that added it or kept by content by a part run.
                self._results.record(self._project.index.content_keys)
            self._results.save(limit)
        else:
            self._results.trim(limit)

    def check(self, rule: ObjectRule, obj: K8sObject) -> Iterator[Issue]:
        """The rule's issues on `obj`: kept ones where its key matches, else the rule's own."""
        return self.checks(rule, (obj,))

    def checks(self, rule: ObjectRule, objects: Iterable[K8sObject] | None = None) -> Iterator[Issue]:
        """`check` of each of `objects` in turn (None: every object of the project, file by file,
        `_by_file`). Most objects' rows are kept in an update (it asks every per-object rule of
        2,200 objects at 10,000), so finding them costs two lookups and no generator per object."""
        if objects is None:
            yield from self._by_file(rule)
            return
        for obj in objects:
            found, _ = self._one(rule, obj)
            yield from found

    def _by_file(self, rule: ObjectRule) -> Iterator[Issue]:
        """Every object's issues, the objects of a file that are those of the last run, with the
        same target fields, answered together (`RuleResults.file_rows`): an update of a part
        of 2,200 objects in 24 files asks 24 times per rule, not 2,200. Their order is the files'
        (the engine sorts every finding after)."""
        results = self._results
        rule_id = rule.id
        for file, objects, stamp in self._files():
            if stamp is not None:
                kept = results.file_rows(rule_id, file, stamp)
            else:
                together = self._together.get(file)
                if together is None:
                    together = self._together[file] = self._kept_together(objects)
                kept = together[1].get(rule_id)
                if kept is not None:
                    results.use(together[0])
            if kept is not None and kept[0] == len(objects):
                self.reused += len(objects)
                for at, rows in kept[1]:
                    obj = objects[at]
                    for path, message, severity, hint in rows:
                        yield Issue(
                            rule_id, message, obj, path, severity=None if severity is None else Severity(severity), hint=hint
                        )
                continue
            whole: list[tuple[int, tuple[Row, ...]]] | None = [] if stamp is not None else None
            for at, obj in enumerate(objects):
                found, own = self._one(rule, obj)
                yield from found
                if whole is not None:
                    if own is None:
                        whole = None  # an object whose issues are not kept: the file's are not
                    elif own:
                        whole.append((at, own))
            if whole is not None and stamp is not None:
                results.put_file_rows(rule_id, file, stamp, (len(objects), tuple(whole)))

    def _kept_together(self, objects: list[K8sObject]) -> tuple[list[bytes], dict[str, FileRows]]:
        """The rules every one of `objects` (a file's, in index order) has rows kept for by its
        place, each with those rows as `file_rows` gives them, and the objects' keys; nothing when
        an object has no key (its file has no content key). Worked out once per file for the run
        (a hook's first run on a repository whose part is everything looked 70,000 rows up one by
        one at 10,000 objects: 7 rules each); a rule some object has no rows of is asked object by
        object (`_one`), which looks that object up by its own content and runs the rule."""
        keys: list[bytes] = []
        common: set[str] | None = None
        found: list[Results] = []
        for obj in objects:
            key = self._keys[obj] if obj in self._keys else self._key(obj)
            if key is None:
                return keys, {}
            # `_key` found its file's content key: the entry its objects' keys are kept in.
            results = self._results.found(key, self._project.index.content_keys[obj.doc.file])
            rules = {rule for rule, _ in results}
            common = rules if common is None else common & rules
            if not common:
                return keys, {}
            keys.append(key)
            found.append(results)
        together: dict[str, FileRows] = {}
        for rule_id in common or ():
            rows = tuple((at, rows) for at, results in enumerate(found) for rule, rows in results if rule == rule_id and rows)
            together[rule_id] = (len(objects), rows)
        return keys, together

    def _files(self) -> list[tuple[str, list[K8sObject], tuple[object, ...] | None]]:
        """The project's objects by file (its members only, in a part), in index order within
        each, with what their keys hash besides their places (None: the file has no content key,
        or no process holds the results for a next run; the file is asked object by object)."""
        if self._groups is None:
            by_file: dict[str, list[K8sObject]] = {}
            members = self._members
            for obj in self._project.index.objects:
                # A context object's findings are dropped: 292 objects of the clean corpus's
                # hook part, in the 76 files its members are not in.
                if members is None or obj.key in members:
                    by_file.setdefault(obj.doc.file, []).append(obj)
            content_keys = self._project.index.content_keys
            targets = self._target_fields()
            groups: list[tuple[str, list[K8sObject], tuple[object, ...] | None]] = []
            for file, objects in by_file.items():
                content = content_keys.get(file)
                stamp = None
                # Only a long-lived process's next run compares it (`RuleResults.file_rows`): a
                # tuple as long as twice the file's objects, held to the end of the run.
                if content is not None and self._results.held:
                    # The objects themselves (compared by identity): a long-lived process's runs
                    # build the same instances of a file whose bytes are unchanged
                    # (policylint.incremental.resident), so the same ones hold the same data in
                    # the same places; any other run's are new, and miss.
                    stamp = (self._run, content, *objects, *[targets.get(obj) for obj in objects])
                groups.append((file, objects, stamp))
            self._groups = groups
        return self._groups

    def _one(self, rule: ObjectRule, obj: K8sObject) -> tuple[list[Issue], tuple[Row, ...] | None]:
        """The rule's issues on `obj`, and the rows they were kept as (None: not kept)."""
        key = self._keys[obj] if obj in self._keys else self._key(obj)
        if key is None:
            return list(rule.check_object(self._project, obj)), None
        # `_key` found its file's content key: the entry its objects' keys are kept in.
        where = self._project.index.content_keys[obj.doc.file]
        rows = self._results.get(key, rule.id, where)
        again = None
        if rows is None:
            # The file changed (an editor's edit touches one object of it) or the object is new
            # here: its own content may still be one seen before.
            again = self._content_key(obj) if self._by_content else None
            rows = self._results.get(again, rule.id, by_name(obj.doc.file)) if again is not None else None
            if rows is None and again is not None:
                # Edited for the first time since a whole run kept its objects by place only:
                # what its earlier content's object of the same own content was found to have.
                rows = self._before(rule.id, obj)
                if rows is not None:
                    self._results.add(again, rule.id, rows, by_name(obj.doc.file))
            if rows is not None:
                self._results.add(key, rule.id, rows, where)
        if rows is not None:
            self.reused += 1
            issues = [
                Issue(rule.id, message, obj, path, severity=None if severity is None else Severity(severity), hint=hint)
                for path, message, severity, hint in rows
            ]
            return issues, rows
        view = _View(self._project)
        found = list(rule.check_object(cast("Project", view), obj))
        kept = _kept_rows(found, obj, rule.id) if not view.beyond else None
        if kept is not None:
            self._results.add(key, rule.id, kept, where)
            if again is not None:
                self._results.add(again, rule.id, kept, by_name(obj.doc.file))
        return found, kept

    def _key(self, obj: K8sObject) -> bytes | None:
        """The object by its file's content and its place in it: no need to read the object."""
        if obj in self._keys:
            return self._keys[obj]
        content = self._project.index.content_keys.get(obj.doc.file)
        key = None
        if content is not None:
            targets = self._target_fields().get(obj)
            # The same instance as in the last run: the same file, place and data. What else
            # decides its key is compared (the run's context, its file's content key, the target
            # fields its policy's profile reads), so that a key is never taken where it would
            # be worked out otherwise.
            last = self._results.instances.get(obj)
            if last is not None and last[0] == self._run and last[1] == content and last[2] == targets:
                key = last[3]
            else:
                # The file's name too: a message may quote where the object is.
                key = self._hash(("at", *obj.sort_key(), content, targets))
            if self._results.held:  # read by that process's next run only
                self._known[obj] = (self._run, content, targets, key)
        self._keys[obj] = key
        return key

    def _content_key(self, obj: K8sObject) -> bytes | None:
        """The object by its own content wherever it is in its file (None: no content key for
        its file, whose content is then not known to be the same as anything's)."""
        if obj in self._contents:
            return self._contents[obj]
        self._contents[obj] = key = self._content_of(obj)
        return key

    def _content_of(self, obj: K8sObject) -> bytes | None:
        if self._project.index.content_keys.get(obj.doc.file) is None:
            return None
        return self._hash(("content", obj.doc.file, self._digest(obj), self._target_fields().get(obj)))

    def _digest(self, obj: K8sObject) -> str:
        found = self._digests.get(obj)
        if found is None:
            found = self._digests[obj] = previous.digest(obj.data)
        return found

    def _before(self, rule_id: str, obj: K8sObject) -> tuple[Row, ...] | None:
        """What `rule_id` found on an object of the earlier content of `obj`'s file that a whole run
        read (policylint.incremental.previous) with the same own content, kept by its place there."""
        earlier = self._results.previous()
        file = obj.doc.file
        content = earlier.key(file) if earlier is not None else None
        if earlier is None or content is None or content == self._project.index.content_keys.get(file):
            return None
        targets = self._target_fields().get(obj)
        for line, column, path in earlier.places(file, content).get(self._digest(obj), ()):
            # The key `_key` worked out for the object at that place of the earlier content.
            rows = self._results.get(self._hash(("at", file, line, column, path, content, targets)), rule_id, content)
            if rows is not None:
                return rows
        return None

    def _hash(self, parts: tuple[object, ...]) -> bytes:
        # The repr of strings, numbers, None and tuples of them tells any two apart, and is
        # cheaper than JSON: it is worked out for every object of the part. The digest, not its
        # hex: it is held for every object to the end of the run (`RuleResults`).
        h = hashlib.blake2b(self._run, digest_size=16)
        h.update(repr(parts).encode("utf-8", "surrogateescape"))
        return h.digest()

    def target_fields(self, obj: K8sObject) -> tuple[str, ...] | None:
        """The target fields of `obj`'s policy profile (None: not a policy)."""
        return self._target_fields().get(obj)

    def _target_fields(self) -> dict[K8sObject, tuple[str, ...]]:
        if self._targets is None:
            self._targets = {p.obj: p.profile.targets.fields for p in self._project.resolution.policies()}
        return self._targets


def _kept_rows(found: list[Issue], obj: K8sObject, rule_id: str) -> tuple[Row, ...] | None:
    """The issues as rows, when each is about `obj` alone (else None: not kept)."""
    rows: list[Row] = []
    for issue in found:
        if (
            issue.object is not obj
            or issue.rule_id != rule_id
            or issue.related
            or issue.fix is not None
            or issue.location is not None
            or issue.document is not None
        ):
            return None
        rows.append((issue.path, issue.message, None if issue.severity is None else int(issue.severity), issue.hint))
    return tuple(rows)
