"""The language server collects its garbage once the user paused, freezing what each whole
analysis built (policylint.server.collector): the cycles an update leaves are freed, a pause's
collection visits none of the whole analysis's objects, and a whole analysis again lets the last
one's state go."""

from __future__ import annotations

import asyncio
import gc
import weakref
from collections.abc import Iterator

import pytest

from policylint.server import protocol
from policylint.server.analysis import Live
from policylint.server.collector import Collector
from tests.editor.test_server_schedule import Editor, _turns


class Node:
    """An object in a reference cycle, as the stages' objects are."""

    def __init__(self) -> None:
        self.me = self


@pytest.fixture(autouse=True)
def off() -> Iterator[None]:
    """The collector off, as the server runs (policylint.entry): only the collections the test
    makes free anything. Nothing the test froze stays frozen for the tests after it."""
    was_enabled = gc.isenabled()
    gc.disable()
    yield
    gc.unfreeze()
    if was_enabled:
        gc.enable()


def _cycle() -> weakref.ref[Node]:
    """A reference cycle nothing else holds, and a weak reference to it."""
    return weakref.ref(Node())


def _live(whole_analyses: int = 1) -> Live:
    """The server's analyses, `whole_analyses` of them whole so far."""
    live = Live(".")
    live.whole_analyses = whole_analyses
    return live


def test_a_pause_frees_the_cycles_the_updates_left_and_visits_no_frozen_object() -> None:
    collector = Collector()
    live = _live()
    kept = Node()  # what the whole analysis built and the server keeps
    collector.idle(live)
    assert gc.get_freeze_count() > 0
    dropped = _cycle()  # an update's part, replaced by the next
    assert dropped() is not None
    collector.idle(live)
    assert dropped() is None
    # Frozen objects are in no generation: a collection does not visit them.
    assert not any(o is kept for o in gc.get_objects())


@pytest.mark.parametrize("again", ["the same analyses", "analyses of another root"])
def test_a_whole_analysis_again_lets_the_last_one_s_state_go(again: str) -> None:
    collector = Collector()
    live = _live()
    held = [Node()]
    first = weakref.ref(held[0])
    collector.idle(live)  # frozen with the first whole analysis
    held.clear()  # the second whole analysis replaced it
    collector.idle(live)
    assert first() is not None  # frozen: no pause's collection visits it
    if again == "the same analyses":
        live.whole_analyses += 1
    else:
        live = _live()  # as many whole analyses, of a new `Live`
    collector.idle(live)
    assert first() is None


def _idle_calls(editor: Editor) -> list[Live]:
    return [args[0] for fn, args, _ in editor.executor.calls if getattr(fn, "__name__", "") == "idle"]


@pytest.mark.asyncio
async def test_the_server_collects_once_nothing_was_edited_for_a_while(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(protocol, "PREPARE_AFTER", 0.0)
    editor = Editor()
    live = editor.server.live = _live()
    editor.type("v2")
    await _turns()
    editor.executor.finish(0)
    await _turns()
    await asyncio.sleep(0.01)  # the pause (PREPARE_AFTER, none here)
    await _turns()
    # The analysis had no project, so nothing to build for navigation: the collection comes next.
    assert _idle_calls(editor) == [live]


@pytest.mark.asyncio
async def test_an_edit_before_the_pause_ends_collects_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(protocol, "PREPARE_AFTER", 3600.0)
    editor = Editor()
    editor.server.live = _live()
    editor.type("v2")
    await _turns()
    editor.executor.finish(0)
    await _turns()
    editor.type("v3")  # within the pause: the collection waits for the next one
    await _turns()
    assert _idle_calls(editor) == []
    assert len(editor.executor.calls) == 2  # the analysis of v3 alone
