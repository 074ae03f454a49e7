"""Entries written as they are encoded (policylint/input/jsonparts.py, `ParseCache.put` of parts),
and the admission verdicts' store that writes one (`VerdictStore`): the bytes are those a whole
`json.dumps` gives, checked like any entry's, the same for the same run, and writing them never
holds their whole text."""

from __future__ import annotations

import hashlib
import json
import os
import tracemalloc
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from policylint.input import jsonparts, verdictstore
from policylint.input.cache import ParseCache
from policylint.input.jsonparts import map_parts
from policylint.input.verdictstore import VerdictStore

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


# -- the admission verdicts' store --------------------------------------------------------------

PRUNED = [[["spec", "rules", 0], "name", ["backendRefs", "matches"]]]


def _key(n: int) -> bytes:
    return hashlib.blake2b(str(n).encode(), digest_size=16).digest()


def _written(cache: ParseCache) -> bytes:
    name = cache.named("admission verdicts", b"stamp")
    return _entry_file(cache, name).read_bytes()


def test_verdicts_are_held_by_their_digests_and_written_as_hex(tmp_path: Path) -> None:
    cache = ParseCache(tmp_path / "cache")
    store = VerdictStore(cache, b"stamp")
    keys = [_key(n) for n in range(5)]
    for i, key in enumerate(keys):
        store.add(key, PRUNED if i % 2 else [])
    store.save()
    expected = {"format": 1, "verdicts": {key.hex(): PRUNED if i % 2 else [] for i, key in enumerate(keys)}}
    # The layout every earlier version wrote: an entry they wrote reads back, and theirs ours.
    assert _written(cache)[24:] == json.dumps(expected, **COMPACT).encode()  # type: ignore[arg-type]
    read = VerdictStore(ParseCache(tmp_path / "cache"), b"stamp")
    assert [read.get(key) for key in keys] == [[], PRUNED, [], PRUNED, []]
    assert read.get(keys[0].hex()) is None  # type: ignore[arg-type]  # never the hex text


def test_the_same_verdicts_are_the_same_bytes(tmp_path: Path) -> None:
    written = []
    for run in ("a", "b"):
        cache = ParseCache(tmp_path / run)
        store = VerdictStore(cache, b"stamp")
        for n in range(3 * jsonparts.BATCH + 5):  # several batches
            store.add(_key(n), [] if n % 3 else PRUNED)
        store.save()
        written.append(_written(cache))
    assert written[0] == written[1]


def test_a_later_run_adds_after_what_was_kept(tmp_path: Path) -> None:
    """What a run read stays first, in its order; a kept value written anew keeps its place; the
    new ones follow, in the order they were added."""
    cache = ParseCache(tmp_path / "cache")
    first = VerdictStore(cache, b"stamp")
    for n in range(3):
        first.add(_key(n), [])
    first.save()
    later = VerdictStore(ParseCache(tmp_path / "cache"), b"stamp")
    later.add(_key(9), PRUNED)
    later.add(_key(1), PRUNED)  # refused as kept: written anew
    later.save()
    written = json.loads(_written(cache)[24:])["verdicts"]
    assert list(written.items()) == [
        (_key(0).hex(), []),
        (_key(1).hex(), PRUNED),
        (_key(2).hex(), []),
        (_key(9).hex(), PRUNED),
    ]


def test_keys_that_are_no_digest_are_not_taken(tmp_path: Path) -> None:
    """From the entry, a key that is not 32 hex digits; from another process, one that is not 16
    bytes: neither is held, nor written."""
    cache = ParseCache(tmp_path / "cache")
    name = cache.named("admission verdicts", b"stamp")
    good = _key(1).hex()
    entries = {good: [], good.upper(): [], good[:-1]: [], good + "0": [], "zz" * 16: []}
    cache.put(name, json.dumps({"format": 1, "verdicts": entries}).encode())
    store = VerdictStore(ParseCache(tmp_path / "cache"), b"stamp")
    assert store.get(_key(1)) == []
    assert store.get(bytes.fromhex(good.upper())) == []  # the same digest: one entry
    store.update({_key(2).hex(): [], _key(3)[:15]: [], _key(4) + b"\x00": [], _key(5): PRUNED})
    assert store.added() == {_key(5): PRUNED}
    store.save()
    assert list(json.loads(_written(cache)[24:])["verdicts"]) == [good, _key(5).hex()]


def test_writing_the_verdicts_never_holds_their_whole_text(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A run that fills the cache writes the verdicts where its memory peaks: the text is made a
    batch at a time, and the additions are not copied beside what was kept."""
    monkeypatch.setattr(jsonparts, "BATCH", 500)  # 500 of the 40,000 members at a time
    store = VerdictStore(ParseCache(tmp_path / "cache"), b"stamp")
    for n in range(40_000):
        store.add(_key(n), [])
    tracemalloc.start()
    try:
        store.save()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    size = len(_written(store._cache))
    assert size > 1_500_000
    assert peak < size / 4, (peak, size)


def test_past_its_limit_the_store_keeps_what_the_run_used(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(verdictstore, "_MAX_VERDICTS", 4)
    cache = ParseCache(tmp_path / "cache")
    first = VerdictStore(cache, b"stamp")
    for n in range(4):
        first.add(_key(n), [])
    first.save()
    later = VerdictStore(ParseCache(tmp_path / "cache"), b"stamp")
    assert later.get(_key(2)) == []
    later.add(_key(7), PRUNED)
    later.save()
    assert list(json.loads(_written(cache)[24:])["verdicts"]) == [_key(2).hex(), _key(7).hex()]
