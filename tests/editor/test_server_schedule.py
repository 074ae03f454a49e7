"""When the server analyses: at once after an edit, and the edits made while an analysis runs
coalesced into one next analysis of the latest texts, started once the typing pauses, whose
diagnostics alone are published.

The analysis thread is replaced by an executor the test completes by hand, and the pause's timer
by one the test ends by hand, so that which analysis runs when is decided by the test, never by a
clock.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any

import pytest

from policylint.server.analysis import Analysis
from policylint.server.protocol import PolicylintServer, Snapshot


class Manual:
    """An executor that runs nothing until told: `finish(i)` runs the i-th submitted call."""

    def __init__(self) -> None:
        self.calls: list[tuple[Callable[..., Any], tuple[Any, ...], Future[Any]]] = []

    def submit(self, fn: Callable[..., Any], /, *args: Any) -> Future[Any]:
        future: Future[Any] = Future()
        self.calls.append((fn, args, future))
        return future

    def finish(self, i: int) -> None:
        fn, args, future = self.calls[i]
        future.set_result(fn(*args))

    def shutdown(self, wait: bool = True, **kwargs: Any) -> None:
        pass


class Editor:
    """A server whose open documents, analyses and publications the test holds."""

    def __init__(self) -> None:
        self.server = PolicylintServer()
        self.executor = Manual()
        self.server._executor = self.executor  # type: ignore[assignment]
        self.texts = {"a.yaml": "v1"}
        self.version = 1
        self.published: list[Snapshot] = []
        self.analysed: list[dict[str, str]] = []
        self.server.overrides = lambda: (dict(self.texts), {"a.yaml": self.version})  # type: ignore[method-assign]
        self.server._run = self._run  # type: ignore[method-assign]
        self.server.publish = self.published.append  # type: ignore[method-assign]
        # The pause's clock and waits: each wait's seconds, ended by `pass_time`.
        self.now = 0.0
        self.pauses: list[tuple[float, asyncio.Future[None]]] = []
        self.server.typing_pause = 0.25  # binary fractions: the test's sums are exact
        self.server._now = lambda: self.now
        self.server._sleep = self._sleep

    def _sleep(self, seconds: float) -> asyncio.Future[None]:
        waited: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self.pauses.append((seconds, waited))
        return waited

    def pass_time(self, seconds: float | None = None) -> None:
        """`seconds` go by (all the latest wait asked for, by default), and that wait ends."""
        asked, waited = self.pauses[-1]
        self.now += asked if seconds is None else seconds
        waited.set_result(None)

    def _run(self, texts: dict[str, str], generation: int, on_disk: set[str] | None) -> Snapshot:
        self.analysed.append(texts)
        return Snapshot(Analysis([], [], None, [], [], texts), generation)

    def type(self, text: str) -> None:
        self.version += 1
        self.texts["a.yaml"] = text
        self.server.schedule()


async def _turns(n: int = 20) -> None:
    """Let the event loop run its ready callbacks: no timer is waited for."""
    for _ in range(n):
        await asyncio.sleep(0)


@pytest.mark.asyncio
async def test_an_edit_is_analysed_at_once_and_published_with_its_version() -> None:
    editor = Editor()
    editor.type("v2")
    await _turns()
    # Submitted without any delay having passed: no debounce before the analysis.
    assert [args[0] for _, args, _ in editor.executor.calls] == [{"a.yaml": "v2"}]
    assert editor.published == []
    editor.executor.finish(0)
    snapshot = await editor.server.current()
    assert snapshot is not None and snapshot.analysis.overrides == {"a.yaml": "v2"}
    assert [s.analysis.overrides for s in editor.published] == [{"a.yaml": "v2"}]
    assert editor.published[0].versions == {"a.yaml": 2}


@pytest.mark.asyncio
async def test_edits_during_an_analysis_make_one_next_analysis_of_the_latest_text() -> None:
    editor = Editor()
    editor.type("v2")
    await _turns()
    for text in ("v3", "v4", "v5"):
        editor.type(text)
        await _turns()
    # Nothing more runs while the first analysis does: the thread analyses one thing at a time.
    assert len(editor.executor.calls) == 1
    waiting = asyncio.ensure_future(editor.server.current())
    editor.executor.finish(0)
    await _turns()
    # The analysis of v2 is stale: not published; the next waits for the typing to pause.
    assert editor.published == []
    assert not waiting.done()
    assert len(editor.executor.calls) == 1 and len(editor.pauses) == 1
    editor.pass_time()
    await _turns()
    # No edit came during the pause: the next analysis is of the latest text only.
    assert [args[0] for _, args, _ in editor.executor.calls] == [{"a.yaml": "v2"}, {"a.yaml": "v5"}]
    editor.executor.finish(1)
    snapshot = await waiting
    assert snapshot is not None and snapshot.analysis.overrides == {"a.yaml": "v5"}
    assert [(s.analysis.overrides, s.versions) for s in editor.published] == [({"a.yaml": "v5"}, {"a.yaml": 5})]
    assert editor.analysed == [{"a.yaml": "v2"}, {"a.yaml": "v5"}]
    # Quiet again: the next edit is analysed at once.
    editor.type("v6")
    await _turns()
    assert len(editor.executor.calls) == 3 and editor.executor.calls[2][1][0] == {"a.yaml": "v6"}
    editor.executor.finish(2)
    await _turns()
    assert [s.versions for s in editor.published] == [{"a.yaml": 5}, {"a.yaml": 6}]


@pytest.mark.asyncio
async def test_files_changed_on_disk_during_an_analysis_are_told_to_the_next() -> None:
    editor = Editor()
    editor.server.on_disk = set()
    editor.type("v2")
    await _turns()
    editor.server.schedule(on_disk=["b.yaml"])
    editor.server.schedule(on_disk=["c.yaml"])
    editor.executor.finish(0)
    await _turns()
    editor.pass_time()
    await _turns()
    # The first analysis was told of nothing changed on disk; the next of both files.
    assert [args[2] for _, args, _ in editor.executor.calls] == [set(), {"b.yaml", "c.yaml"}]
    editor.server.schedule(on_disk=None)  # a change the watcher could not name
    await _turns()
    editor.executor.finish(1)
    await _turns()
    editor.pass_time()
    await _turns()
    assert editor.executor.calls[2][1][2] is None
    editor.executor.finish(2)
    await _turns()


@pytest.mark.asyncio
async def test_while_typing_goes_on_the_next_analysis_waits_for_a_pause_after_the_last_key() -> None:
    editor = Editor()
    editor.type("v2")
    await _turns()
    editor.type("v3")  # at 0 s
    await _turns()
    editor.executor.finish(0)  # stale: v3 came while it ran
    await _turns()
    pause = editor.server.typing_pause
    assert [seconds for seconds, _ in editor.pauses] == [pause]
    editor.pass_time(0.125)  # the wait ends early (an event loop's timer may): 0.125 s of quiet
    await _turns()
    editor.type("v4")  # a key at 0.125 s: the pause counts from it
    await _turns()
    assert [seconds for seconds, _ in editor.pauses] == [pause, pause - 0.125]
    editor.pass_time()
    await _turns()
    assert [seconds for seconds, _ in editor.pauses][2:] == [0.125]
    assert len(editor.executor.calls) == 1  # no analysis while the keys keep coming
    editor.pass_time()
    await _turns()
    # A pause went by since the last key: one analysis, of the last text.
    assert [args[0] for _, args, _ in editor.executor.calls] == [{"a.yaml": "v2"}, {"a.yaml": "v4"}]
    editor.executor.finish(1)
    await _turns()
    assert [s.analysis.overrides for s in editor.published] == [{"a.yaml": "v4"}]


@pytest.mark.asyncio
async def test_a_key_during_the_stale_analysis_counts_toward_the_pause() -> None:
    editor = Editor()
    editor.type("v2")
    await _turns()
    editor.type("v3")  # at 0 s, while v2's analysis runs
    await _turns()
    editor.now = 0.125  # the stale analysis ends 0.125 s after the last key
    editor.executor.finish(0)
    await _turns()
    # Only what is left of the pause is waited for.
    assert [seconds for seconds, _ in editor.pauses] == [editor.server.typing_pause - 0.125]
    editor.pass_time()
    await _turns()
    assert [args[0] for _, args, _ in editor.executor.calls] == [{"a.yaml": "v2"}, {"a.yaml": "v3"}]


@pytest.mark.asyncio
async def test_files_changed_on_disk_count_toward_the_pause_as_edits_do() -> None:
    """A checkout or a formatter changes files in bursts, as typing does: a change on disk while
    the stale analysis runs restarts the pause from it."""
    editor = Editor()
    editor.type("v2")
    await _turns()
    editor.type("v3")  # at 0 s, while v2's analysis runs
    await _turns()
    editor.now = 0.125
    editor.server.schedule(on_disk=["b.yaml"])  # at 0.125 s
    await _turns()
    editor.now = 0.25  # the stale analysis ends 0.125 s after the change on disk
    editor.executor.finish(0)
    await _turns()
    assert [seconds for seconds, _ in editor.pauses] == [editor.server.typing_pause - 0.125]
    editor.pass_time()
    await _turns()
    assert editor.executor.calls[1][1][0] == {"a.yaml": "v3"}
    assert editor.executor.calls[1][1][2] == {"b.yaml"}
