"""The differences of the bundled schemas' pairs written ahead (policylint/k8s/schema_differences.json,
`k8s/differencesgen.py`) and read by a run (`k8s/differences.py`): the committed file is what the
generator writes; every pair it holds reads back as the `Difference` worked out, node for node;
asking a pair it holds works nothing out and compiles no rule; data written from another table,
damaged or cut short is never believed, and every pair is then worked out as before.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from policylint.k8s import differences, differencesgen, schemas

GATEWAY_API = "gateway.networking.k8s.io"


def _fresh(monkeypatch: pytest.MonkeyPatch, written: list[Any] | None = None) -> None:
    """The process's tables of differences empty, as in a process that asked for none yet
    (`written`: what `_written` reads, [None] for data not believed; [] to read it again)."""
    monkeypatch.setattr(differences, "_PAIRS", {})
    monkeypatch.setattr(differences, "_DIFFERENCES", {})
    monkeypatch.setattr(differences, "_WRITTEN", [] if written is None else written)


def _alike(read: Any, worked: Any, seen: dict[tuple[int, int], bool]) -> bool:
    """Whether two differences hold the same nodes (by identity), checks and flags, with the same
    fields in the same order, down to every difference below."""
    if read is None or worked is None:
        return read is worked
    key = (id(read), id(worked))
    if key in seen:
        return True
    seen[key] = True
    return (
        read.node is worked.node
        and read.same is worked.same
        and read.local == worked.local
        and read.rules == worked.rules
        and read.combined == worked.combined
        and list(read.properties) == list(worked.properties)
        and all(_alike(read.properties[name], worked.properties[name], seen) for name in read.properties)
        and _alike(read.extra, worked.extra, seen)
        and _alike(read.items, worked.items, seen)
    )


def _pairs() -> list[tuple[int, int]]:
    raw = json.loads(differences.DATA.read_text(encoding="utf-8"))
    return [(first, other) for first, other, _ in raw["pairs"]]


def test_the_committed_data_is_what_the_generator_writes(monkeypatch: pytest.MonkeyPatch) -> None:
    _fresh(monkeypatch, [None])
    assert differences.DATA.read_text(encoding="utf-8") == differencesgen.generate(), (
        "stale: run `make differences` (python -m policylint.k8s.differencesgen)"
    )


def test_every_pair_the_data_holds_reads_back_as_the_difference_worked_out(monkeypatch: pytest.MonkeyPatch) -> None:
    built, _ = schemas._table()
    pairs = _pairs()
    assert len(pairs) > 500  # every ordered pair of distinct roots of one (group, kind, version)
    _fresh(monkeypatch)
    read = [differences.difference(built[a], built[b]) for a, b in pairs]
    assert differences._WRITTEN[0] is not None  # read from the data, not worked out
    _fresh(monkeypatch, [None])
    worked = [differences.difference(built[a], built[b]) for a, b in pairs]
    seen: dict[tuple[int, int], bool] = {}
    assert all(_alike(r, w, seen) for r, w in zip(read, worked))
    assert sum(1 for r in read if r is not None) > 400 and len(seen) > 2_000
    # Rows that pairs share are one object, as the pairs of nodes worked out are.
    assert len({id(d) for d, _ in seen}) == len({id(d) for _, d in seen})


def test_asking_a_pair_the_data_holds_works_nothing_out(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every release and channel of HTTPRoute against the newest standard one: no pair of nodes
    compared, no CEL rule's reads compared (which compiled the other releases' rules), and the
    experimental channel's rule that rule names are unique still found."""
    key = (GATEWAY_API, "HTTPRoute", "v1")
    first = schemas.schemas("standard", "v1.6.1")[key][0]
    others = [
        found[0]
        for release in schemas.GATEWAY_API_VERSIONS
        for channel in schemas.CHANNELS
        if (found := schemas.schemas(channel, release).get(key)) is not None and found[0] is not first
    ]
    _fresh(monkeypatch)
    asked: list[str] = []
    for name in ("_differ", "_rules_alike", "_within"):
        original = getattr(differences, name)

        def counted(*args: Any, _name: str = name, _original: Any = original) -> Any:
            asked.append(_name)
            return _original(*args)

        monkeypatch.setattr(differences, name, counted)
    found = [differences.difference(first, other) for other in others]
    assert len(others) >= 10 and asked == []
    experimental = found[-1]
    assert experimental is not None
    rules = experimental.properties["spec"].properties["rules"]  # type: ignore[union-attr]
    assert rules is not None and rules.rules


@pytest.mark.parametrize(
    "forged",
    [
        pytest.param(lambda raw: {**raw, "table": "0" * 64}, id="another-table"),
        pytest.param(lambda raw: {k: v for k, v in raw.items() if k != "pairs"}, id="no-pairs"),
        pytest.param(lambda raw: {**raw, "pairs": [[1, 2]]}, id="a-pair-cut-short"),
        pytest.param(None, id="damaged"),
    ],
)
def test_data_not_written_from_the_table_built_is_never_believed(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, forged: Any
) -> None:
    built, _ = schemas._table()
    raw = json.loads(differences.DATA.read_text(encoding="utf-8"))
    target = tmp_path / "schema_differences.json"
    if forged is None:
        target.write_text(differences.DATA.read_text(encoding="utf-8")[:5_000], encoding="utf-8")
    else:
        # Every row says "nothing below": believed, the pairs would admit what the first admits.
        bad = forged(raw)
        bad["differences"] = [[None, None, 0, 0, None, 0, {}, None, None] for _ in raw["differences"]]
        target.write_text(json.dumps(bad), encoding="utf-8")
    monkeypatch.setattr(differences, "DATA", target)
    pairs = _pairs_of(raw)
    _fresh(monkeypatch)
    read = [differences.difference(built[a], built[b]) for a, b in pairs]
    assert differences._WRITTEN == [None]
    _fresh(monkeypatch, [None])
    worked = [differences.difference(built[a], built[b]) for a, b in pairs]
    seen: dict[tuple[int, int], bool] = {}
    assert all(_alike(r, w, seen) for r, w in zip(read, worked))


def _pairs_of(raw: Any) -> list[tuple[int, int]]:
    return [(first, other) for first, other, row in raw["pairs"] if row is not None][:40]


def test_a_schema_that_is_not_a_bundled_root_is_worked_out(monkeypatch: pytest.MonkeyPatch) -> None:
    """A CRD of the input (or a bundled node that is not a pair's root): the data holds nothing
    for it, and its difference is worked out."""
    key = (GATEWAY_API, "HTTPRoute", "v1")
    first = schemas.schemas("standard", "v1.6.1")[key][0]
    other = schemas.schemas("experimental", "v1.6.1")[key][0]
    copied = json.loads(json.dumps(other))  # the same content, not the bundled node
    _fresh(monkeypatch)
    asked: list[Any] = []
    original = differences._differ

    def counted(*args: Any) -> Any:
        asked.append(args)
        return original(*args)

    monkeypatch.setattr(differences, "_differ", counted)
    found = differences.difference(first, copied)
    assert asked and found is not None and found.node is copied
