"""The entry kept per file (policylint/input/keptfiles.py): a file's admission verdicts
(`VerdictStore`) and its per-object rules' results (`RuleResults`) are two parts of one entry,
written once at the end of a run and read once, when either part is first asked for. A part under
another stamp is not taken; a part no one asked for is written back as it was read; an entry
whose footer is not what policylint writes, or one in an earlier layout, is a miss."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from policylint.incremental import rulecache
from policylint.input.cache import ParseCache
from policylint.input.keptfiles import KeptFiles
from policylint.input.verdictstore import VerdictStore

COMPACT = {"separators": (",", ":")}
# Two files' content keys.
FILE = "f" * 40
OTHER = "e" * 40
# The parts' stamps, as hex: each store's format (3) and the stamp it was given.
VERDICTS = "0003" + b"stamp".hex()
RESULTS = "0003" + b"code".hex()
PRUNED = [[["spec", "rules", 0], "name", ["backendRefs", "matches"]]]
ROW = ("spec.size", "is 'big', not an integer", None, None)


def framed(*parts: tuple[str, str, bytes]) -> bytes:
    """An entry's payload in the documented layout, made by hand: each part's text, one after the
    other, then a line holding the footer with each part's name, stamp and length."""
    footer = {"format": 1, "parts": [[name, stamp, len(text)] for name, stamp, text in parts]}
    return b"".join(text for _, _, text in parts) + b"\n" + json.dumps(footer, **COMPACT).encode()  # type: ignore[arg-type]


def parts(payload: bytes) -> dict[str, tuple[str, Any]]:
    """The parts of an entry's payload by name: their stamps and their texts decoded."""
    body, newline, footer = payload.rpartition(b"\n")
    assert newline
    decoded = json.loads(footer)
    assert decoded["format"] == 1
    found: dict[str, tuple[str, Any]] = {}
    at = 0
    for name, stamp, size in decoded["parts"]:
        found[name] = (stamp, json.loads(body[at : at + size]))
        at += size
    assert at == len(body)
    return found


def _digest(n: int) -> bytes:
    return (n * 7919).to_bytes(16, "big")


class _Run:
    """The stores of one run over `cache`, as the pipeline opens them: both over one `KeptFiles`."""

    def __init__(self, cache: ParseCache, *, results: bool = True, code: bytes = b"code") -> None:
        self.files = KeptFiles(cache, cache.wrote)
        self.verdicts = VerdictStore(self.files, b"stamp")
        self.results = rulecache.RuleResults(self.files, code) if results else None

    def save(self) -> None:
        """As the pipeline ends a run (policylint.incremental.opened.keep_per_file)."""
        self.verdicts.save()
        if self.results is not None:
            self.results.save()
        self.files.save()


@pytest.fixture
def io(monkeypatch: pytest.MonkeyPatch) -> dict[str, list[str]]:
    """The entries opened for reading (`ParseCache.payload`) and written (`put`), by name."""
    seen: dict[str, list[str]] = {"read": [], "written": []}
    payload, put = ParseCache.payload, ParseCache.put

    def counted_payload(self: ParseCache, key: str) -> Any:
        seen["read"].append(key)
        return payload(self, key)

    def counted_put(self: ParseCache, key: str, data: Any) -> None:
        seen["written"].append(key)
        put(self, key, data)

    monkeypatch.setattr(ParseCache, "payload", counted_payload)
    monkeypatch.setattr(ParseCache, "put", counted_put)
    return seen


def _payload(cache: ParseCache, file: str = FILE) -> bytes:
    payload = cache.payload(KeptFiles(cache).entry(file))
    assert payload is not None
    return bytes(payload)


def _filled(tmp_path: Path) -> ParseCache:
    """A cache holding both files' verdicts and rule results (OTHER's under other keys: each key
    hashes its file)."""
    cache = ParseCache(tmp_path / "cache")
    run = _Run(cache)
    assert run.results is not None
    for file, n in ((FILE, 0), (OTHER, 10)):
        run.verdicts.add((file, _digest(n + 1)), [])
        run.verdicts.add((file, _digest(n + 2)), PRUNED)
        run.results.add(_digest(n + 3), "PL703", (ROW,), file)
        run.results.add(_digest(n + 3), "PL702", (), file)
    run.save()
    return ParseCache(tmp_path / "cache")


def _asked(cache: ParseCache) -> tuple[list[Any], list[Any]]:
    """What a later run finds of FILE's verdicts and rule results."""
    run = _Run(cache)
    assert run.results is not None
    verdicts = [run.verdicts.get((FILE, _digest(n))) for n in (1, 2)]
    results = [run.results.get(_digest(3), rule, FILE) for rule in ("PL703", "PL702")]
    return verdicts, results


FOUND = ([[], PRUNED], [(ROW,), ()])
NOTHING = ([None, None], [None, None])


def test_a_files_verdicts_and_rule_results_are_one_entry_written_once(tmp_path: Path, io: dict[str, list[str]]) -> None:
    """The layout, by hand: the results' text, the verdicts' text (by the parts' names), the
    footer. Each file's entry is written once, though both parts changed."""
    _filled(tmp_path)
    cache = ParseCache(tmp_path / "cache")
    entries = {KeptFiles(cache).entry(file) for file in (FILE, OTHER)}
    assert sorted(io["written"]) == sorted(entries)
    results = (
        b'{"' + _digest(3).hex().encode() + b'":{"PL703":[["spec.size","is \'big\', not an integer",null,null]],"PL702":[]}}'
    )
    verdicts = (
        b'{"'
        + _digest(1).hex().encode()
        + b'":[],"'
        + _digest(2).hex().encode()
        + b'":'
        + json.dumps(PRUNED, **COMPACT).encode()
        + b"}"
    )  # type: ignore[arg-type]
    assert _payload(cache) == framed(("results", RESULTS, results), ("verdicts", VERDICTS, verdicts))


def test_a_later_run_reads_a_files_entry_once_for_both_parts(tmp_path: Path, io: dict[str, list[str]]) -> None:
    cache = _filled(tmp_path)
    io["read"].clear()
    io["written"].clear()
    run = _Run(cache)
    assert run.results is not None
    assert io["read"] == []  # nothing read before it is asked for
    assert run.verdicts.get((FILE, _digest(2))) == PRUNED
    assert run.results.get(_digest(3), "PL703", FILE) == (ROW,)
    assert run.results.get(_digest(13), "PL702", OTHER) == ()
    assert run.verdicts.get((OTHER, _digest(11))) == []
    assert io["read"] == [run.files.entry(FILE), run.files.entry(OTHER)]
    run.save()
    assert io["written"] == []  # nothing added: nothing written


def test_a_file_new_to_the_cache_is_not_looked_for(tmp_path: Path, io: dict[str, list[str]]) -> None:
    """Its parse-cache entry was written by this run: nothing is kept beside it."""
    cache = _filled(tmp_path)
    cache.put(FILE, b"[[],[]]")
    io["read"].clear()
    run = _Run(cache)
    assert run.results is not None
    assert run.verdicts.get((FILE, _digest(1))) is None
    assert run.results.get(_digest(3), "PL703", FILE) is None
    assert run.verdicts.get((OTHER, _digest(11))) == []
    assert io["read"] == [run.files.entry(OTHER)]


def test_a_part_no_one_asked_for_is_written_back_as_it_was_read(tmp_path: Path) -> None:
    """A run whose per-object rules run in `--jobs` shares asks for no rule results: what it adds
    to a file's verdicts is written beside the results kept, byte for byte."""
    cache = _filled(tmp_path)
    before = parts(_payload(cache))
    run = _Run(cache, results=False)
    assert run.verdicts.get((FILE, _digest(1))) == []
    run.verdicts.add((FILE, _digest(9)), PRUNED)
    run.save()
    after = parts(_payload(cache))
    assert after["results"] == before["results"]
    assert after["verdicts"][1] == {**before["verdicts"][1], _digest(9).hex(): PRUNED}
    # And one whose verdicts part it never read (a verdict added, as a rule process sends them).
    other = _Run(ParseCache(tmp_path / "cache"), results=False)
    kept = parts(_payload(cache, OTHER))
    other.verdicts.update({OTHER: {_digest(9): []}})
    other.save()
    assert parts(_payload(cache, OTHER)) == {
        "results": kept["results"],
        "verdicts": (VERDICTS, {**kept["verdicts"][1], _digest(9).hex(): []}),
    }
    assert _asked(ParseCache(tmp_path / "cache")) == FOUND


def test_a_part_under_another_stamp_is_not_taken(tmp_path: Path) -> None:
    """Rule results another checkout's code kept are a miss; they stay until this code writes
    that part of the file, and the verdicts beside them are taken all the same."""
    cache = _filled(tmp_path)
    kept = parts(_payload(cache))["results"]
    other = _Run(cache, code=b"other code")
    assert other.results is not None
    assert other.results.get(_digest(3), "PL703", FILE) is None
    assert other.verdicts.get((FILE, _digest(2))) == PRUNED
    other.verdicts.add((FILE, _digest(9)), [])
    other.save()
    assert parts(_payload(cache))["results"] == kept
    other = _Run(ParseCache(tmp_path / "cache"), code=b"other code")
    assert other.results is not None
    other.results.add(_digest(3), "PL703", (), FILE)
    other.save()
    assert parts(_payload(cache))["results"] == ("0003" + b"other code".hex(), {_digest(3).hex(): {"PL703": []}})
    assert _asked(ParseCache(tmp_path / "cache"))[1] == [None, None]


def _damaged(payload: bytes) -> list[bytes]:
    """FILE's entry, damaged every way its footer can be."""
    body, _, footer = payload.rpartition(b"\n")
    rows = json.loads(footer)["parts"]
    (results, r_stamp, r_size), (verdicts, v_stamp, v_size) = rows

    def with_rows(*new: Any, form: Any = 1) -> bytes:
        return body + b"\n" + json.dumps({"format": form, "parts": list(new)}).encode()

    return [
        body,  # no footer
        body + b"\n",  # an empty one
        body + b"\nnot json",
        body + b"\n" + json.dumps(rows).encode(),  # not a map
        with_rows(*rows, form=2),  # another layout
        with_rows(*rows, form=True),
        body + b"\n" + json.dumps({"format": 1, "parts": {results: r_size}}).encode(),
        with_rows([results, r_stamp, r_size + 1], [verdicts, v_stamp, v_size]),  # lengths past the payload
        with_rows([results, r_stamp, r_size], [verdicts, v_stamp, v_size - 1]),  # short of it
        with_rows([results, r_stamp, r_size + v_size], [verdicts, v_stamp, 0]),
        with_rows([results, r_stamp, -1], [verdicts, v_stamp, v_size + r_size + 1]),
        with_rows([results, r_stamp, True], [verdicts, v_stamp, v_size + r_size - 1]),
        with_rows([results, r_stamp, float(r_size)], [verdicts, v_stamp, v_size]),
        with_rows([verdicts, r_stamp, r_size], [verdicts, v_stamp, v_size]),  # a part twice
        with_rows([results, r_stamp.upper(), r_size], [verdicts, v_stamp.upper(), v_size]),
        with_rows([results, 3, r_size], [verdicts, 3, v_size]),
        with_rows([results.upper(), r_stamp, r_size], [verdicts.upper(), v_stamp, v_size]),
        with_rows([results, r_stamp, r_size, 0], [verdicts, v_stamp, v_size, 0]),
        with_rows([results, r_stamp], [verdicts, v_stamp]),
        with_rows(results, verdicts),
        b"\n" + footer,  # the parts gone
        payload[1:],
        payload[:-1],
    ]


@pytest.mark.parametrize("way", range(23))
def test_a_damaged_entry_is_a_miss(tmp_path: Path, way: int) -> None:
    cache = _filled(tmp_path)
    forged = _damaged(_payload(cache))
    assert len(forged) == 23
    cache.put(KeptFiles(cache).entry(FILE), forged[way])
    assert _asked(ParseCache(tmp_path / "cache")) == NOTHING, forged[way]


def test_a_damaged_part_is_a_miss_of_that_part_alone(tmp_path: Path) -> None:
    cache = _filled(tmp_path)
    kept = parts(_payload(cache))
    results = b'{"' + _digest(3).hex().encode() + b'":{"PL703":[],"PL702":[]}'  # cut short
    verdicts = json.dumps(kept["verdicts"][1], **COMPACT).encode()  # type: ignore[arg-type]
    cache.put(KeptFiles(cache).entry(FILE), framed(("results", RESULTS, results), ("verdicts", VERDICTS, verdicts)))
    assert _asked(ParseCache(tmp_path / "cache")) == (FOUND[0], NOTHING[1])
    verdicts = json.dumps([kept["verdicts"][1]]).encode()  # a list, not a map
    results = json.dumps(kept["results"][1]).encode()
    cache.put(KeptFiles(cache).entry(FILE), framed(("results", RESULTS, results), ("verdicts", VERDICTS, verdicts)))
    assert _asked(ParseCache(tmp_path / "cache")) == (NOTHING[0], FOUND[1])


def test_an_entry_in_an_earlier_layout_is_a_miss(tmp_path: Path) -> None:
    """What an earlier version wrote per file, a map with a format and the verdicts or the
    objects, even under the entry's name, holds nothing this version takes; the run works them
    out again and writes the entry anew."""
    cache = _filled(tmp_path)
    kept = parts(_payload(cache))
    name = KeptFiles(cache).entry(FILE)
    for form in (2, 3):
        for member, part in (("verdicts", "verdicts"), ("objects", "results")):
            cache.put(name, json.dumps({"format": form, member: kept[part][1]}, **COMPACT).encode())  # type: ignore[arg-type]
            assert _asked(ParseCache(tmp_path / "cache")) == NOTHING, (form, member)
    run = _Run(ParseCache(tmp_path / "cache"))
    assert run.results is not None
    assert run.verdicts.get((FILE, _digest(1))) is None
    run.verdicts.add((FILE, _digest(1)), [])
    run.results.add(_digest(3), "PL702", (), FILE)
    run.save()
    assert _asked(ParseCache(tmp_path / "cache")) == ([[], None], [None, ()])
