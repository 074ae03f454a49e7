"""The files of a lint request with the texts an editor holds over them (policylint.incremental).

A language server keeps one `Workspace` per root. Each edit, save or close is an `update`: the
buffer's text stands for the file until it is dropped again (`text=None`: the file on disk is
read again, or nothing if it is gone), and the answer is what changed in the findings, file by
file: the files whose findings are not what they were, each with all of its findings now, which
is what an editor publishes (LSP `textDocument/publishDiagnostics` replaces a file's list).

The first run analyses everything, and keeps what it built for the updates that follow
(policylint.incremental.resident). An update then analyses only the part of the workspace the
edited file's objects can reach, before and after the edit (`lint(part=...)`,
policylint.semantics.components): every other file's findings are the previous run's, which the
edit cannot change (policylint.incremental.merge says how the two are put together, and when
they cannot be, and everything is run again). Every run reads the files through the parse cache
of the request, keyed by content, so an unchanged buffer or file is never parsed again; the
findings are those `policylint check` gives for the same texts (tests/incremental/test_incremental.py
compares them over random edit sequences).
"""

from __future__ import annotations

import dataclasses
import gc
import os
from collections.abc import Mapping, Sequence

from policylint.findings import Finding
from policylint.incremental.merge import merge, mergeable
from policylint.incremental.resident import Resident
from policylint.input.sources import MANIFEST_SUFFIXES, Source, discover_all, display_name
from policylint.k8s.objects import ObjectKey
from policylint.pipeline import LintRequest, LintResult, lint
from policylint.suppressions import MARKER_BYTES
from policylint.values import frozen


@frozen(slots=False)
class Changes:
    """What an update changed: each file whose findings differ from before, with all its findings
    now (an empty tuple: it has none left), in file order."""

    files: Mapping[str, tuple[Finding, ...]]
    # The run, for what else a client shows (counts, notes), its findings those of every file.
    # After an update that analysed a part, its project holds every object read with only the
    # part's stages built, and `members` names the objects the part analysed.
    result: LintResult


class Workspace:
    """The request's files, with in-memory texts overriding what disk holds.

    `request` is the run's configuration as `check` builds it (paths, context, rules, cache);
    its `sources` must be unset (they are what the workspace decides). Paths given to `update`
    are file paths as the editor names them, absolute or relative to the working directory.
    """

    def __init__(self, request: LintRequest, texts: Mapping[str, str] | None = None) -> None:
        """`texts`: the editor's texts to start with, by absolute path."""
        if request.sources is not None:
            raise ValueError("a workspace finds its files itself: the request must not name sources")
        self.request = request
        self._texts: dict[str, str] = dict(texts or {})  # absolute path -> the editor's text
        self._by_file: dict[str, tuple[Finding, ...]] = {}
        self._result: LintResult | None = None
        self._names: dict[str, str] = {}  # absolute path -> the file's name in findings
        self._keys: dict[str, list[ObjectKey]] = {}  # file name -> the keys of its objects
        self._sources_now: dict[str, Source] = {}  # the last run's sources, by name
        # The objects of the files the last part run built from their shells: the next takes
        # those whose bytes are the same instead of reading their shells again.
        self._resident = Resident()
        self.last_was_part = False  # whether the last run analysed a part only
        self.last_edited: str | None = None  # the name of the file whose edit that part follows

    @property
    def result(self) -> LintResult:
        """The findings of the files as they stand now (a run on first use)."""
        if self._result is None:
            self._run()
        assert self._result is not None
        return self._result

    def update(self, path: str, text: str | None) -> Changes:
        """`path` now holds `text` (None: what is on disk); the files whose findings changed."""
        # The run's own work is done without the cyclic collector (policylint.pipeline.lint); so is
        # what surrounds it here (the sources listed, the findings merged), whose allocations
        # would otherwise start collections that walk every object of the project kept: a tenth
        # of an update at 10,000 objects.
        was_enabled = gc.isenabled()
        gc.disable()
        try:
            return self._update(path, text)
        finally:
            if was_enabled:
                gc.enable()

    def _update(self, path: str, text: str | None) -> Changes:
        key = os.path.abspath(path)
        if text is None:
            self._texts.pop(key, None)
        else:
            self._texts[key] = text
        before = dict(self._by_file) if self._result is not None else None
        if before is None:
            self._run()
        else:
            self._run_part(key)
        assert self._result is not None
        if before is None:
            changed = dict(self._by_file)
        else:
            names = sorted(set(before) | set(self._by_file))
            changed = {n: self._by_file.get(n, ()) for n in names if before.get(n, ()) != self._by_file.get(n, ())}
        return Changes(changed, self._result)

    def release(self, path: str) -> None:
        """The editor no longer holds `path`, whose file holds the text it held: nothing to
        analyse again, but a later change of the file on disk is read."""
        self._texts.pop(os.path.abspath(path), None)

    def _sources(self) -> list[Source]:
        request = self.request
        found = discover_all(
            [*request.paths, *request.context_paths],
            follow_outside_links=request.follow_outside_links,
            walk=request.walk,
            helm_templates=request.helm_templates,
        ).sources
        pending = dict(self._texts)
        sources: list[Source] = []
        for source in found:
            text = pending.pop(os.path.abspath(source.fs_path), None) if source.fs_path is not None else None
            if source.problem is not None:
                text = None  # what keeps the file from being read (a link outside) stands
            # A buffer stands for its file under the file's name; `snapshot`: content that is
            # not standard input, so the parse cache keeps it by content like a file's.
            sources.append(source if text is None else Source(display=source.display, content=_bytes(text), snapshot=True))
            if source.fs_path is not None:
                self._names[os.path.abspath(source.fs_path)] = source.display
        # Buffers of manifests that are not on disk (yet) and lie under the request's paths.
        roots = [os.path.abspath(p) for p in [*request.paths, *request.context_paths]]
        for path, text in pending.items():
            if path.endswith(MANIFEST_SUFFIXES) and _under(path, roots):
                name = display_name(os.path.relpath(path))
                sources.append(Source(display=name, content=_bytes(text), snapshot=True))
                self._names[path] = name
        sources.sort(key=lambda s: s.display)  # the order discovery gives: findings depend on it
        return sources

    def _run(self) -> None:
        sources = self._sources()
        self._sources_now = {s.display: s for s in sources}
        self._take(lint(dataclasses.replace(self.request, sources=sources), resident=self._resident))
        self.last_was_part = False

    def _run_part(self, path: str) -> None:
        """Analyse what the edit of `path` can reach; everything when that cannot be merged."""
        if not mergeable(self.request) or self.request.cache_dir is None or self._result is None:
            self._run()
            return
        previous = self._result
        sources = self._sources()
        name = self._names.get(path, display_name(os.path.relpath(path)))
        removed = frozenset(self._keys.get(name, ()))
        result = lint(
            dataclasses.replace(self.request, sources=sources), part=(frozenset({name}), removed), resident=self._resident
        )
        self._sources_now = {s.display: s for s in sources}
        if result.members is None:  # the part was everything: a whole run
            self._take(result)
            self.last_was_part = False
            return
        if not result.index.content_keys or _contents(result, name) != _contents(previous, name):
            # Another file changed on disk since the run before (a checkout, a formatter) and
            # nobody said so: its findings are not the previous run's. The parse cache's keys
            # tell; with no cache in use, nothing does, and everything is analysed.
            self._run()
            return
        keys = _keys_by_file(result)

        def merged(before: Sequence[Finding], part: Sequence[Finding]) -> list[Finding] | None:
            assert result.members is not None
            return merge(
                before,
                part,
                members=result.members,
                removed=removed,
                edited=name,
                objects_by_file=keys,
                has_comments=self._has_comments,
            )

        active = merged(previous.findings, result.findings) if not result.internal_error else None
        suppressed = merged(previous.suppressed, result.suppressed) if active is not None else None
        if active is None or suppressed is None:
            self._run()
            return
        self._take(dataclasses.replace(result, findings=active, suppressed=suppressed), keys)
        self.last_was_part, self.last_edited = True, name

    def _has_comments(self, file: str) -> bool:
        """Whether the file named `file` holds a `policylint:` comment, as this run read it."""
        source = self._sources_now.get(file)
        if source is None:
            return False
        if source.content is not None:
            return MARKER_BYTES in source.content
        if source.fs_path is not None:
            try:
                with open(source.fs_path, "rb") as fh:
                    return MARKER_BYTES in fh.read()
            except OSError:
                return True  # unknown: not merged
        return False

    def _take(self, result: LintResult, keys: dict[str, list[ObjectKey]] | None = None) -> None:
        by_file: dict[str, list[Finding]] = {}
        for finding in result.findings:
            by_file.setdefault(finding.file, []).append(finding)
        self._by_file = {name: tuple(found) for name, found in by_file.items()}
        self._keys = keys if keys is not None else _keys_by_file(result)
        self._result = result


def _contents(result: LintResult, but: str) -> dict[str, str | None]:
    """Every file the run read, but `but`, with its content's key (None: not read)."""
    keys = result.index.content_keys
    return {f: keys.get(f) for f in result.index.files if f != but}


def _keys_by_file(result: LintResult) -> dict[str, list[ObjectKey]]:
    roster = result.index.roster
    if roster is not None:
        # File by file, the objects outside the part not built for it (policylint.k8s.roster).
        return {file: list(roster.keys_of(f)) for f, (file, _) in enumerate(roster.files)}
    out: dict[str, list[ObjectKey]] = {}
    for obj in result.index.objects:
        out.setdefault(obj.doc.file, []).append(obj.key)
    return out


def _bytes(text: str) -> bytes:
    # An editor's text is Unicode; a lone surrogate (which UTF-8 cannot hold) is kept as the
    # bytes Python would write for it, so that the loader reports the file's encoding as wrong.
    return text.encode("utf-8", "surrogatepass")


def _under(path: str, roots: Sequence[str]) -> bool:
    return any(path == root or path.startswith(root.rstrip(os.sep) + os.sep) for root in roots)
