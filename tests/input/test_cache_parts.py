"""Entries written as they are encoded (policylint/input/jsonparts.py, `ParseCache.put` of parts),
and the admission verdicts' store that writes a part of one (`VerdictStore`, a part of the entry
kept per file, policylint/input/keptfiles.py): the bytes are those a whole `json.dumps` gives,
checked like any entry's, the same for the same run, and writing them never holds their whole
text."""

from __future__ import annotations

import hashlib
import itertools
import json
import os
import tempfile
import tracemalloc
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from policylint.input import cache as cache_module
from policylint.input import entryfile, jsonparts, verdictstore
from policylint.input.cache import ParseCache
from policylint.input.jsonparts import map_parts
from policylint.input.keptfiles import KeptFiles
from policylint.input.verdictstore import VerdictStore
from tests.input.test_keptfiles import framed, parts

COMPACT = {"separators": (",", ":")}


def _entry_file(cache: ParseCache, key: str) -> Path:
    return Path(cache.directory) / "parse" / key


@pytest.mark.parametrize("count", [0, 1, 2, 3, 4, 7])
def test_a_map_in_parts_is_the_bytes_json_dumps_writes(count: int) -> None:
    """Batches of 3: empty, one short batch, one exact batch, a batch and one more, and so on.
    Non-ASCII text, a lone surrogate, non-finite floats and tuples are written as `json.dumps`
    writes them."""
    values: list[Any] = [[], "café", "\ud800", float("nan"), float("-inf"), ("a", 1, None, True), {"x": [1.5]}]
    members = {f"k{i}": values[i % len(values)] for i in range(count)}
    expected = json.dumps({"format": 1, "objects": members}, **COMPACT).encode("ascii")  # type: ignore[arg-type]
    parts = list(map_parts('{"format":1,"objects":', members.items(), "}", batch=3))
    assert b"".join(parts) == expected
    # The members are in batches: head, one part per 3 members, tail.
    assert len(parts) == 2 + -(-count // 3)


def test_what_json_cannot_hold_is_a_value_error() -> None:
    with pytest.raises(ValueError, match="cannot encode"):
        b"".join(map_parts("", [("a", {1, 2})], ""))


def test_an_entry_written_in_parts_is_the_entry_written_whole(tmp_path: Path) -> None:
    """Same file, same checksum: the digest is filled in after the payload it covers."""
    cache = ParseCache(tmp_path / "cache")
    payload = b'{"format":1,"verdicts":{"ab":[]}}'
    cache.put("a" * 40, payload)
    cache.put("b" * 40, iter([payload[:5], payload[5:20], b"", payload[20:]]))
    whole, parts = _entry_file(cache, "a" * 40).read_bytes(), _entry_file(cache, "b" * 40).read_bytes()
    assert parts == whole
    assert parts[8:24] == hashlib.blake2b(payload, digest_size=16).digest()
    assert cache.payload("b" * 40) == payload
    # Damaged anywhere, it is a miss.
    for at in (0, 10, len(parts) - 1):
        damaged = bytearray(parts)
        damaged[at] ^= 1
        _entry_file(cache, "b" * 40).write_bytes(bytes(damaged))
        assert cache.payload("b" * 40) is None, at


def test_a_payload_that_fails_midway_leaves_nothing(tmp_path: Path) -> None:
    """The error is the caller's; no entry and no temporary file are left, and an entry already
    there under the key is kept as it was."""
    cache = ParseCache(tmp_path / "cache")
    cache.put("c" * 40, b"[1]")

    def failing() -> Iterator[bytes]:
        yield b"[2"
        raise ValueError("cannot encode a cache entry")

    with pytest.raises(ValueError):
        cache.put("c" * 40, failing())
    assert sorted(os.listdir(Path(cache.directory) / "parse")) == ["c" * 40]
    assert cache.payload("c" * 40) == b"[1]"


def test_an_entry_past_what_is_held_is_written_as_it_comes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Parts up to `_HELD_BYTES` are written at once behind their checksum; past it, as they come,
    the checksum filled in last: the same file either way."""
    cache = ParseCache(tmp_path / "cache")
    payload = b'{"format":1,"verdicts":{"ab":[],"cd":[1,2,3]}}'
    cache.put("a" * 40, iter([payload[:7], payload[7:]]))
    monkeypatch.setattr(entryfile, "_HELD_BYTES", 8)
    cache.put("b" * 40, iter([payload[:5], payload[5:20], b"", payload[20:30], payload[30:]]))
    assert _entry_file(cache, "b" * 40).read_bytes() == _entry_file(cache, "a" * 40).read_bytes()
    assert cache.payload("b" * 40) == payload


def test_a_temporary_name_taken_is_skipped_and_what_holds_it_is_left_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`put` names its temporary files from the process and a counter, created only where no file
    is (O_EXCL): a file left there and a link planted there are skipped, neither written through
    nor removed; with every name it tries taken it falls back to tempfile's random ones."""
    cache = ParseCache(tmp_path / "cache")
    cache.put("a" * 40, b"[0]")
    entries = Path(cache.directory) / "parse"
    monkeypatch.setattr(entryfile, "_TEMP_NUMBERS", itertools.count())
    squatter, link = entries / entryfile._temp_name(0), entries / entryfile._temp_name(1)
    assert cache_module._TEMP_NAME.match(squatter.name) and squatter.name != link.name
    squatter.write_bytes(b"left by a run that died")
    target = tmp_path / "target"
    link.symlink_to(target)

    def no_mkstemp(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("tempfile.mkstemp used")

    monkeypatch.setattr(tempfile, "mkstemp", no_mkstemp)  # imported by the fallback when it runs
    cache.put("b" * 40, b"[1]")
    assert cache.payload("b" * 40) == b"[1]"
    assert squatter.read_bytes() == b"left by a run that died"
    assert link.is_symlink() and not target.exists()
    assert sorted(os.listdir(entries)) == sorted(["a" * 40, "b" * 40, squatter.name, link.name])
    # Every name it tries taken: tempfile's.
    monkeypatch.undo()
    monkeypatch.setattr(entryfile, "_TEMP_NUMBERS", itertools.count())
    monkeypatch.setattr(entryfile, "_TEMP_TRIES", 2)
    cache.put("c" * 40, b"[2]")
    assert cache.payload("c" * 40) == b"[2]"
    assert squatter.read_bytes() == b"left by a run that died" and not target.exists()
    assert sorted(os.listdir(entries)) == sorted(["a" * 40, "b" * 40, "c" * 40, squatter.name, link.name])


# -- the admission verdicts' store --------------------------------------------------------------

PRUNED = [[["spec", "rules", 0], "name", ["backendRefs", "matches"]]]
# Two files' content keys (`ParseCache.key`): each file's verdicts are an entry of their own.
FILE = "f" * 40
OTHER = "e" * 40


def _key(n: int, file: str = FILE) -> tuple[str, bytes]:
    return file, hashlib.blake2b(str(n).encode(), digest_size=16).digest()


# The verdicts part's stamp: the store's format (3) and the stamp it was given.
STAMP = "0003" + b"stamp".hex()


def _store(cache: ParseCache, stamp: bytes = b"stamp") -> VerdictStore:
    return VerdictStore(KeptFiles(cache), stamp)


def _save(store: VerdictStore) -> None:
    """What the pipeline does at the end of a run: the verdicts saved into each file's entry, then
    the entries written (with the rule results, when there are)."""
    store.save()
    store.files.save()


def _written(store: VerdictStore, file: str = FILE) -> bytes:
    return _entry_file(store.files.cache, store.entry(file)).read_bytes()


def _verdicts(store: VerdictStore, file: str = FILE) -> dict[str, Any]:
    stamp, verdicts = parts(_written(store, file)[24:])["verdicts"]
    assert stamp == STAMP
    return verdicts  # type: ignore[no-any-return]


def test_verdicts_are_held_by_their_digests_and_written_as_hex_one_entry_per_file(tmp_path: Path) -> None:
    cache = ParseCache(tmp_path / "cache")
    store = _store(cache)
    keys = [_key(n) for n in range(5)]
    for i, key in enumerate(keys):
        store.add(key, PRUNED if i % 2 else [])
    store.add(_key(7, OTHER), PRUNED)
    _save(store)
    expected = {key[1].hex(): PRUNED if i % 2 else [] for i, key in enumerate(keys)}
    text = json.dumps(expected, **COMPACT).encode()  # type: ignore[arg-type]
    assert _written(store)[24:] == framed(("verdicts", STAMP, text))
    assert _verdicts(store, OTHER) == {_key(7)[1].hex(): PRUNED}
    # Named by the file's content key: another file's entry is another name; verdicts another
    # code kept there are not taken.
    assert store.entry(FILE) != store.entry(OTHER)
    assert _store(ParseCache(tmp_path / "cache"), b"other code").get(keys[1]) is None
    read = _store(ParseCache(tmp_path / "cache"))
    assert [read.get(key) for key in keys] == [[], PRUNED, [], PRUNED, []]
    assert read.get((FILE, keys[0][1].hex())) is None  # type: ignore[arg-type]  # never the hex text
    # A digest is looked up in its own file's entry only.
    assert read.get((OTHER, keys[1][1])) is None
    assert read.get(_key(7, OTHER)) == PRUNED


def test_a_run_reads_the_entries_of_the_files_it_asks_about_and_writes_those_it_added_to(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A scoped run judges the objects of its part's files: the other files' entries are not
    read, and a one-file change writes one file's entry, leaving the others' bytes alone."""
    cache = ParseCache(tmp_path / "cache")
    first = _store(cache)
    files = [f"{n:040x}" for n in range(1, 6)]
    for file in files:
        for n in range(3):
            first.add(_key(n, file), [])
    _save(first)
    before = {file: _written(first, file) for file in files}
    read: list[str] = []
    later_cache = ParseCache(tmp_path / "cache")
    real = later_cache.payload

    def payload(key: str) -> Any:
        read.append(key)
        return real(key)

    monkeypatch.setattr(later_cache, "payload", payload)
    later = _store(later_cache)
    assert read == []  # nothing read before it is asked for
    assert later.get(_key(1, files[2])) == [] and later.get(_key(2, files[2])) == []
    assert read == [later.entry(files[2])]  # once per file
    later.add(_key(9, files[2]), PRUNED)
    later.add(_key(0, files[2]), [])  # as kept: not written again for it
    later.add(_key(0, files[4]), [])  # as kept, though not asked for before: compared when saved
    _save(later)
    assert read == [later.entry(files[2]), later.entry(files[4])]
    for file in files:
        if file != files[2]:
            assert _written(later, file) == before[file], file
    assert list(_verdicts(later, files[2])) == [_key(n)[1].hex() for n in (0, 1, 2, 9)]


def test_the_same_verdicts_are_the_same_bytes(tmp_path: Path) -> None:
    written = []
    for run in ("a", "b"):
        cache = ParseCache(tmp_path / run)
        store = _store(cache)
        for n in range(3 * jsonparts.BATCH + 5):  # several batches, two files
            store.add(_key(n, FILE if n % 2 else OTHER), [] if n % 3 else PRUNED)
        _save(store)
        written.append((_written(store), _written(store, OTHER)))
    assert written[0] == written[1]


def test_a_later_run_adds_after_what_was_kept(tmp_path: Path) -> None:
    """What a run read stays first, in its order; a kept value written anew keeps its place; the
    new ones follow, in the order they were added."""
    cache = ParseCache(tmp_path / "cache")
    first = _store(cache)
    for n in range(3):
        first.add(_key(n), [])
    _save(first)
    later = _store(ParseCache(tmp_path / "cache"))
    later.add(_key(9), PRUNED)
    later.add(_key(1), PRUNED)  # refused as kept: written anew
    _save(later)
    assert list(_verdicts(later).items()) == [
        (_key(0)[1].hex(), []),
        (_key(1)[1].hex(), PRUNED),
        (_key(2)[1].hex(), []),
        (_key(9)[1].hex(), PRUNED),
    ]


def test_keys_that_are_no_digest_are_not_taken(tmp_path: Path) -> None:
    """From the entry, a key that is not 32 hex digits; from another process, a file key that is
    not 40 hex digits or a digest that is not 16 bytes: neither is held, nor written."""
    cache = ParseCache(tmp_path / "cache")
    store = _store(cache)
    good = _key(1)[1].hex()
    entries = {good: [], good.upper(): [], good[:-1]: [], good + "0": [], "zz" * 16: []}
    cache.put(store.entry(FILE), framed(("verdicts", STAMP, json.dumps(entries).encode())))
    store = _store(ParseCache(tmp_path / "cache"))
    assert store.get(_key(1)) == []
    assert store.get((FILE, bytes.fromhex(good.upper()))) == []  # the same digest: one entry
    digest = _key(5)[1]
    store.update(
        {
            FILE: {_key(2)[1].hex(): [], _key(3)[1][:15]: [], _key(4)[1] + b"\x00": [], digest: PRUNED},
            FILE.upper(): {digest: []},
            FILE[:-1]: {digest: []},
            b"f" * 40: {digest: []},
            OTHER: [digest],
        }
    )
    assert store.added() == {FILE: {digest: PRUNED}}
    _save(store)
    assert list(_verdicts(store)) == [good, digest.hex()]
    assert not _entry_file(cache, store.entry(OTHER)).exists()


def test_writing_the_verdicts_never_holds_their_whole_text(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A run that fills the cache writes the verdicts where its memory peaks: the text is made a
    batch at a time, and the additions are not copied beside what was kept."""
    monkeypatch.setattr(jsonparts, "BATCH", 500)  # 500 of the 40,000 members at a time
    store = _store(ParseCache(tmp_path / "cache"))
    for n in range(40_000):
        store.add(_key(n), [])
    tracemalloc.start()
    try:
        _save(store)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    size = len(_written(store))
    assert size > 1_500_000
    assert peak < size / 4, (peak, size)


def test_past_its_limit_a_files_entry_keeps_what_the_run_used(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The same bytes judged under many schemas over time (CRDs, releases) would pile up under one
    content key: past the bound (at least `_MIN_KEPT`, four times what the run used or added), a
    file's entry keeps what the run used and added. Another file's entry is left as it was."""
    monkeypatch.setattr(verdictstore, "_MIN_KEPT", 4)
    cache = ParseCache(tmp_path / "cache")
    first = _store(cache)
    for n in range(8):
        first.add(_key(n), [])
        first.add(_key(n, OTHER), [])
    _save(first)
    later = _store(ParseCache(tmp_path / "cache"))
    assert later.get(_key(2)) == []
    later.add(_key(20), PRUNED)
    _save(later)
    assert list(_verdicts(later)) == [_key(2)[1].hex(), _key(20)[1].hex()]  # 9 > max(4, 4 * 2)
    assert len(_verdicts(later, OTHER)) == 8
    # Within the bound, nothing is dropped.
    again = _store(ParseCache(tmp_path / "cache"))
    again.add(_key(21), [])
    _save(again)
    assert list(_verdicts(again)) == [_key(n)[1].hex() for n in (2, 20, 21)]


def test_a_files_verdicts_are_pruned_with_its_entry(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A run that analyses a part reads the verdicts of its part's files only: the others' are
    still its files', kept from pruning while their parse-cache entries are, and pruned like any
    entry once their files' are not the run's."""
    from policylint.input import cache as cache_module

    monkeypatch.setattr(cache_module, "_MAX_ENTRIES", 4)
    directory = tmp_path / "cache"
    cache = ParseCache(directory)
    store = _store(cache)
    files = [cache.key(f"file {n}".encode()) for n in range(12)]
    for file in files:
        cache.put(file, b"[[],[]]")
        store.add(_key(0, file), [])
    _save(store)
    for path in (directory / "parse").iterdir():
        os.utime(path, (1, 1))  # every entry old
    later = ParseCache(directory)
    later.keep_beside(KeptFiles(later).entry)
    for file in files[:3]:
        assert later.payload(file) is not None  # the run's files, whose verdicts it did not read
    later.put("a" * 40, b"[]")  # a run that wrote prunes
    later.prune()
    left = {path.name for path in (directory / "parse").iterdir()}
    assert {store.entry(file) for file in files[:3]} | set(files[:3]) <= left
    others = {store.entry(file) for file in files[3:]}
    assert len(others & left) < len(others) / 2
