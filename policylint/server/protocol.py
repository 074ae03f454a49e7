"""The language server: pygls wiring, the analysis thread and how edits are coalesced.

Edits arrive on the event loop. An edit while no analysis runs starts one at once, with no wait:
a fixed delay would put the diagnostics of every single edit (a paste, a quick fix, a rename)
that much later. Analyses run one at a time in a worker thread (the loop keeps answering); one
whose texts were edited again while it ran is stale: its diagnostics, whose positions are those
of texts the editor no longer shows, are not published. Edits during an analysis mean the user
is typing, so the next analysis is debounced: it starts once `TYPING_PAUSE` seconds have
passed since the last change, and analyses the texts as they are then (the latest win, every edit of
the burst in one analysis). Files changed on disk count as edits here: they come in bursts too
(a checkout, a formatter saving every file). Without that pause a burst of keys a tenth of a second apart would
start an analysis on every key that found the last one done, each stale before it ends. So a
lone edit is analysed at once, and a burst costs its first key's analysis and one more after
the pause. Diagnostics carry the version of the open document they were computed for (LSP
`PublishDiagnosticsParams.version`).
Requests (hover, definition, ...) wait for the analysis of the texts they are asked about, so an
answer never describes a text the user has since changed.

Each analysis after the first covers only what the edited files reach
(policylint.server.analysis.Live); the stages navigation reads are built for the whole workspace
after the diagnostics are published, in the same thread: when a request needs them, or after
`PREPARE_AFTER` seconds without an edit (a user who stopped typing may hover next), so that
typing never waits for them. The garbage the updates left is collected then too
(policylint.server.collector), never during an analysis.
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Awaitable, Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from urllib.parse import unquote, urlparse

from lsprotocol import types
from pygls.lsp.server import LanguageServer

from policylint import __version__
from policylint.findings import Finding, Severity
from policylint.k8s.objects import K8sObject
from policylint.reporters.json import help_uri
from policylint.server.analysis import Analysis, Live, Problem
from policylint.server.collector import Collector
from policylint.server.documents import Cursor, Lines, Spot, cursor_at
from policylint.server.features import FEATURES, position
from policylint.server.layers import Layers
from policylint.server.navigation import Place
from policylint.values import frozen

# Seconds of quiet after the diagnostics are published before what navigation reads is built
# unasked and the garbage of the updates collected: neither can be stopped, and an edit arriving
# during either waits for it.
PREPARE_AFTER = 1.0

# Seconds without an edit after which the analysis that follows a stale one starts (the module
# docstring): keys come 60-200 ms apart while typing.
TYPING_PAUSE = 0.25
SEVERITIES = {
    Severity.ERROR: types.DiagnosticSeverity.Error,
    Severity.WARNING: types.DiagnosticSeverity.Warning,
    Severity.INFO: types.DiagnosticSeverity.Information,
}
# Findings about something to remove rather than fix: editors fade it (LSP DiagnosticTag).
DEPRECATED = frozenset({"PL701", "PL707"})  # deprecated-field, deprecated-api-version
UNNECESSARY = frozenset({"PL901"})  # unused-suppression


class Snapshot:
    """An analysis and what the requests read from it, built in the worker thread."""

    def __init__(self, analysis: Analysis, generation: int, versions: dict[str, int] | None = None) -> None:
        self.analysis = analysis
        self.generation = generation
        # The version of each open document analysed (by file name), as the client numbered it.
        self.versions = versions or {}
        self.navigator: Layers | None = None
        self.prepared = analysis.project is None  # nothing to navigate in
        self._lines: dict[str, Lines] = {}

    def prepare(self) -> None:
        """Build what navigation reads (every stage, the reference table), once: only when a
        request needs it, so that diagnostics after an edit never wait for it. After an edit
        that is the part it reached (policylint.server.layers)."""
        if self.prepared:
            return
        self.prepared = True
        layers = self.analysis.layers()
        assert layers is not None
        if layers.prepare():
            self.navigator = layers
        # Else a stage failed: the run's PL000 says so, navigation has nothing to offer.

    def lines(self, file: str) -> Lines:
        if file not in self._lines:
            self._lines[file] = Lines(self.analysis.text(file) or "")
        return self._lines[file]


@frozen(eq=False)
class At:
    """What a request's position is on: the file's name, the object and the cursor in it."""

    name: str
    nav: Layers
    obj: K8sObject
    cursor: Cursor


class PolicylintServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__("policylint", __version__)
        self.root = os.getcwd()
        self.generation = 0  # bumped by every edit
        self.snapshot: Snapshot | None = None
        # What each file's diagnostics the client holds were made of (`publish`).
        self.shown: dict[str, tuple[object, ...]] = {}
        # The files changed on disk since the last publication (None: not known), whose texts,
        # which the diagnostics' positions are counted in, may differ from those shown.
        self.moved: set[str] | None = set()
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="policylint-analysis")
        # The task analysing until the texts it analysed are the latest (`_analyse_latest`).
        self._runner: asyncio.Task[None] | None = None
        self._preparing: asyncio.Task[None] | None = None
        self._done = asyncio.Event()
        self.live: Live | None = None
        self.collector = Collector()
        # Files changed on disk since the last analysis began (None: unknown, analyse everything).
        self.on_disk: set[str] | None = None
        self.typing_pause = TYPING_PAUSE
        # What the pause reads the time with and waits with (tests move both by hand).
        self._now: Callable[[], float] = time.monotonic
        self._sleep: Callable[[float], Awaitable[None]] = asyncio.sleep
        # When `schedule` was last called (an edit, or files changed on disk), by `_now`.
        self._last_change = 0.0

    # -- files and URIs -----------------------------------------------------------------------

    def name_of(self, uri: str) -> str | None:
        """The name findings give the file at `uri` (relative to the root), None outside a file."""
        parsed = urlparse(uri)
        if parsed.scheme != "file":
            return None
        path = unquote(parsed.path)
        if os.name == "nt" and path.startswith("/"):
            path = path[1:]
        return os.path.relpath(path, self.root).replace(os.sep, "/")

    def uri_of(self, name: str) -> str:
        return Path(os.path.normpath(os.path.join(self.root, name))).as_uri()

    def overrides(self) -> tuple[dict[str, str], dict[str, int]]:
        """The open documents' texts and versions, by file name."""
        texts: dict[str, str] = {}
        versions: dict[str, int] = {}
        for uri, document in self.workspace.text_documents.items():
            name = self.name_of(uri)
            if name is not None:
                texts[name] = document.source
                if document.version is not None:
                    versions[name] = document.version
        return texts, versions

    # -- analysis -----------------------------------------------------------------------------

    def schedule(self, on_disk: Sequence[str] | None = ()) -> None:
        """Analyse the texts as they are now: at once when no analysis runs, else as soon as the
        one running is done (every edit made meanwhile in that one next analysis); `on_disk`: the
        files changed on disk (None: not known)."""
        if on_disk is None or self.on_disk is None:
            self.on_disk = None
        else:
            self.on_disk.update(on_disk)
        self.generation += 1
        self._last_change = self._now()
        self._done.clear()
        if self._preparing is not None and not self._preparing.done():
            self._preparing.cancel()  # a build already running in the thread finishes, unawaited
        if self._runner is None or self._runner.done():
            self._runner = asyncio.ensure_future(self._analyse_latest())

    async def _analyse_latest(self) -> None:
        """Analyse, again while the texts changed during the analysis, then publish the last."""
        loop = asyncio.get_running_loop()
        while True:
            generation, (texts, versions) = self.generation, self.overrides()
            on_disk, self.on_disk = self.on_disk, set()
            if on_disk is None or self.moved is None:
                self.moved = None
            else:
                self.moved.update(on_disk)
            snapshot = await loop.run_in_executor(self._executor, self._run, texts, generation, on_disk)
            snapshot.versions = versions
            if generation == self.generation:
                break
            # Stale: an edit came while it ran, and nothing awaits this one but the next, once the
            # typing pauses.
            await self._pause()
        self.snapshot = snapshot
        self.publish(snapshot)
        self._done.set()
        self._preparing = asyncio.ensure_future(self._prepare_after(snapshot, PREPARE_AFTER))

    async def _pause(self) -> None:
        """Until nothing has changed for `typing_pause` seconds, counted from the last change, an
        edit or files changed on disk (which may have come while the stale analysis still ran),
        not from now."""
        while True:
            quiet = self._now() - self._last_change
            if quiet >= self.typing_pause:
                return
            await self._sleep(self.typing_pause - quiet)

    async def _prepare_after(self, snapshot: Snapshot, delay: float) -> None:
        """Once nothing was edited for `delay` seconds: what navigation reads built, then the
        garbage of the updates collected (policylint.server.collector). An edit meanwhile
        cancels what has not started."""
        await asyncio.sleep(delay)
        loop = asyncio.get_running_loop()
        if snapshot is self.snapshot and not snapshot.prepared:
            await loop.run_in_executor(self._executor, snapshot.prepare)
        if snapshot is self.snapshot and self.live is not None:
            await loop.run_in_executor(self._executor, self.collector.idle, self.live)

    def _run(self, texts: dict[str, str], generation: int, on_disk: set[str] | None) -> Snapshot:
        if self.live is None or self.live.root != self.root:
            self.live = Live(self.root)
        try:
            analysis = self.live.analyse(texts, on_disk)
        except Exception as exc:  # a bug must not take the server down: said on the workspace
            analysis = Analysis(
                [], [], None, [], [Problem(".", 1, f"analysis failed: {type(exc).__name__}: {exc}; please report this")], texts
            )
        return Snapshot(analysis, generation)

    async def current(self) -> Snapshot | None:
        """The analysis of the texts as they are now (waiting for it when one is due)."""
        if self._runner is not None and not self._done.is_set():
            await self._done.wait()
        return self.snapshot

    async def navigable(self) -> Snapshot | None:
        """`current`, with what navigation reads built (in the analysis thread: the loop keeps
        answering meanwhile)."""
        snapshot = await self.current()
        if snapshot is not None and not snapshot.prepared:
            await asyncio.get_running_loop().run_in_executor(self._executor, snapshot.prepare)
        return snapshot

    # -- diagnostics --------------------------------------------------------------------------

    def publish(self, snapshot: Snapshot) -> None:
        """Send the diagnostics of every file whose diagnostics differ from those the client
        holds: its findings or problems, its document's version or its text changed (an update
        changes a few files' findings of a hundred; making and sending them all again cost a
        seventh of the time from an edit to its diagnostics at 10,000 objects), and an empty list
        for each file that has none left."""
        analysis = snapshot.analysis
        findings: dict[str, list[Finding]] = {}
        for finding in analysis.findings:
            findings.setdefault(finding.file, []).append(finding)
        problems: dict[str, list[Problem]] = {}
        for problem in analysis.problems:
            problems.setdefault(problem.file, []).append(problem)
        versions = snapshot.versions
        moved, self.moved = self.moved, set()
        files = set(findings) | set(problems)
        for file in sorted(set(self.shown) - files):
            self.text_document_publish_diagnostics(
                types.PublishDiagnosticsParams(uri=self.uri_of(file), diagnostics=[], version=versions.get(file))
            )
        shown: dict[str, tuple[object, ...]] = {}
        for file in sorted(files):
            made = shown[file] = (
                tuple(findings.get(file, ())),
                tuple(problems.get(file, ())),
                versions.get(file),
                analysis.overrides.get(file),
            )
            if moved is not None and file not in moved and self.shown.get(file) == made:
                continue
            diagnostics = [self.diagnostic(snapshot, f) for f in findings.get(file, ())]
            diagnostics.extend(_problem_diagnostic(snapshot, p) for p in problems.get(file, ()))
            self.text_document_publish_diagnostics(
                types.PublishDiagnosticsParams(uri=self.uri_of(file), diagnostics=diagnostics, version=versions.get(file))
            )
        self.shown = shown

    def diagnostic(self, snapshot: Snapshot, f: Finding) -> types.Diagnostic:
        lines = snapshot.lines(f.file)
        start = lines.to_lsp(f.line, f.column)
        if f.end_line and (f.end_line, f.end_column) > (f.line, f.column):
            end = lines.to_lsp(f.end_line, f.end_column)
        else:
            end = lines.end_of(f.line)
            if (end.line, end.character) < (start.line, start.character):
                end = start
        tags = [types.DiagnosticTag.Deprecated] if f.rule in DEPRECATED else []
        if f.rule in UNNECESSARY:
            tags.append(types.DiagnosticTag.Unnecessary)
        related = [
            types.DiagnosticRelatedInformation(
                location=types.Location(uri=self.uri_of(r.file), range=_point(snapshot.lines(r.file).to_lsp(r.line, r.column))),
                message=r.message,
            )
            for r in f.related
        ]
        message = f.message + (f"\n{f.hint}" if f.hint else "")
        return types.Diagnostic(
            range=types.Range(start=position(start), end=position(end)),
            message=message,
            severity=SEVERITIES.get(f.severity, types.DiagnosticSeverity.Warning),
            code=f.rule,
            code_description=types.CodeDescription(href=help_uri(f.rule, f.name)),
            source="policylint",
            related_information=related or None,
            tags=tags or None,
            data={"fingerprint": f.fingerprint},
        )

    # -- requests -----------------------------------------------------------------------------

    def cursor(self, snapshot: Snapshot, uri: str, position: types.Position) -> At | None:
        nav = snapshot.navigator
        name = self.name_of(uri)
        if nav is None or name is None:
            return None
        text = snapshot.analysis.text(name)
        if text is None:
            return None
        line, column = snapshot.lines(name).from_lsp(position.line, position.character)
        cursor = cursor_at(text, line, column)
        if cursor is None:
            return None
        obj = nav.object_at(name, cursor)
        if obj is None:
            return None
        return At(name, nav, obj, cursor)

    def location(self, snapshot: Snapshot, place: Place) -> types.Location:
        lines = snapshot.lines(place.file)
        return types.Location(
            uri=self.uri_of(place.file),
            range=types.Range(
                start=position(lines.to_lsp(place.line, place.column)),
                end=position(lines.to_lsp(place.end_line, place.end_column)),
            ),
        )


def _point(spot: Spot) -> types.Range:
    return types.Range(start=position(spot), end=position(spot))


def _problem_diagnostic(snapshot: Snapshot, problem: Problem) -> types.Diagnostic:
    lines = snapshot.lines(problem.file)
    return types.Diagnostic(
        range=types.Range(start=position(Spot(max(problem.line - 1, 0), 0)), end=position(lines.end_of(problem.line))),
        message=problem.message,
        severity=types.DiagnosticSeverity.Error,
        source="policylint",
    )


def create_server() -> PolicylintServer:
    """A server with a handler registered for each LSP feature policylint answers
    (policylint.server.features)."""
    server = PolicylintServer()
    for feature in FEATURES:
        server.feature(feature.method, feature.options)(feature.handler)
    return server


def serve() -> None:
    """Serve on standard input and output until the client exits."""
    create_server().start_io()
