"""The spans of findings kept per file content between runs (policylint.incremental.spans): a run
with a cache reads again, to place its findings, only the files whose bytes changed since a run
placed theirs; a file whose content changed (lines added above its findings) is placed anew; a
part that is not what policylint writes is a miss. The report is a run's without a cache, byte
for byte."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from policylint.incremental import memo, spans
from policylint.input.cache import ParseCache
from policylint.input.keptfiles import KeptFiles
from policylint.input.positions import PositionResolver
from tests.incremental.test_incremental import _corpus, _write, check


@pytest.fixture
def placed(monkeypatch: pytest.MonkeyPatch, without_kept_results: None) -> Iterator[list[str]]:
    """The files a run reads again to place findings (`PositionResolver._pass`), by runs that
    analyse every time."""
    seen: list[str] = []
    real = PositionResolver._pass

    def counted(self: PositionResolver, file: str, documents: Any) -> None:
        seen.append(file)
        real(self, file, documents)

    monkeypatch.setattr(PositionResolver, "_pass", counted)
    yield seen


def _repository(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, str]:
    """A corpus of several files with findings, the working directory in it, and the cache's
    directory beside it."""
    root = tmp_path / "repo"
    root.mkdir()
    _write(root, _corpus(5, 120, isolated=False))
    monkeypatch.chdir(root)
    return root, str(tmp_path / "cache")


def test_a_run_places_again_only_the_findings_of_the_files_whose_bytes_changed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, placed: list[str]
) -> None:
    root, cache_dir = _repository(tmp_path, monkeypatch)
    first = check("--cache-dir", cache_dir, ".")
    assert first == check("--no-cache", ".")
    with_findings = set(placed)
    assert len(with_findings) > 3  # the corpus has findings in several files
    # Lines added above every finding of one file: its content, and so every span of it, moves.
    moved = sorted(with_findings)[1]
    path = root / moved
    path.write_text("# one\n# two\n" + path.read_text(encoding="utf-8"), encoding="utf-8")
    placed.clear()
    again = check("--cache-dir", cache_dir, ".")
    # Read again: the changed file alone; every other file's spans are those the first run kept.
    assert [Path(p).name for p in placed] == [Path(moved).name]
    assert again == check("--no-cache", ".")
    assert again != first  # the moved file's findings are two lines further down
    placed.clear()
    assert check("--cache-dir", cache_dir, ".") == again
    assert placed == []  # the moved file's new spans were kept by the run before


def test_a_part_that_is_not_what_policylint_writes_is_a_miss(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, placed: list[str]
) -> None:
    root, cache_dir = _repository(tmp_path, monkeypatch)
    check("--cache-dir", cache_dir, ".")
    forged = sorted(Path(p).name for p in placed)[0]
    cold = check("--no-cache", ".")
    cache = ParseCache(cache_dir)
    key = cache.key((root / forged).read_bytes())
    for text in (b"[[1,[],[1,1,1,1]]]", b'[[1,["spec"],[1,1,1]]]', b'[[1,["spec"],[1,true,1,1]]]', b"{", b'{"a":1}'):
        files = KeptFiles(cache)
        files.own(spans.PART, spans.FORMAT.to_bytes(2, "big") + memo.code_stamp(), lambda where, t=text: iter((t,)))
        files.changed(key)
        files.save()
        placed.clear()
        assert check("--cache-dir", cache_dir, ".") == cold
        assert [Path(p).name for p in placed] == [forged]  # worked out again, then kept anew


def test_decode_reads_what_a_table_writes_and_nothing_else() -> None:
    class Store:
        """One entry's part, as `KeptFiles` hands it over."""

        def __init__(self) -> None:
            self.parts: dict[str, bytes] = {}
            self.owner: Any = None
            self.marked: list[str] = []

        def own(self, part: str, stamp: bytes, text: Any) -> None:
            self.owner = text

        def take(self, where: str, part: str) -> bytes | None:
            return self.parts.get(where)

        def changed(self, where: str) -> None:
            self.marked.append(where)

    store = Store()
    kept = spans.CachedSpans(store, b"")  # type: ignore[arg-type]
    table = kept.of("a.yaml", "k1")
    # A key and an index at the same place of two paths, written in the order they were answered.
    table[(3, ("spec", 0, "name"))] = (5, 7, 5, 12)
    table[(1, ("spec", "0"))] = (2, 3, 2, 4)
    kept.finish()
    assert store.marked == ["k1"]
    written = b"".join(store.owner("k1"))
    assert json.loads(written) == [[3, ["spec", 0, "name"], [5, 7, 5, 12]], [1, ["spec", "0"], [2, 3, 2, 4]]]
    # Read back, "0" and 0 stay apart.
    assert spans.decode(written) == {(1, ("spec", "0")): (2, 3, 2, 4), (3, ("spec", 0, "name")): (5, 7, 5, 12)}
    store.parts["k2"] = written
    again = spans.CachedSpans(store, b"")  # type: ignore[arg-type]
    assert again.of("b.yaml", "k2") == spans.decode(written)  # the name does not decide a span
    again.finish()
    assert store.marked == ["k1"]  # nothing added: not written again
    for bad in (b"", b"[", b"null", b"[[1,[1.0],[1,1,1,1]]]", b'[[-1,["a"],[1,1,1,1]]]', b'[[1,["a"],[1,1,1,false]]]'):
        assert spans.decode(bad) == {}
    assert spans.decode(b'[[1,["a"],[1,1,1,1]],[2,["b"]]]') == {}  # one bad row: the whole part a miss
