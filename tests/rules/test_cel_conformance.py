"""policylint's CEL package against the cel-spec conformance tests (tests/data/cel-spec/, the
files covering what Kubernetes CEL uses; docs/cel.md): every case is run, the pass count may not
fall below its floor, and the failing cases are exactly those listed, each under its reason, in
tests/cel_conformance_known_failures.txt, so that a regression and a newly passing case both
show."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests import celspec

KNOWN = Path(__file__).resolve().parents[1] / "cel_conformance_known_failures.txt"
# Measured: the in-scope cases that pass today. Raise it with the known failures' list.
PASS_FLOOR = 1363
# Cases the runner leaves out: protobuf messages, enums, containers, type-check-only results
# (what a CRD rule never meets).
OUT_OF_SCOPE = 112


def known_failures() -> dict[str, str]:
    """case id -> the reason it fails."""
    known: dict[str, str] = {}
    reason = None
    for line in KNOWN.read_text(encoding="utf-8").splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        if line.startswith("[") and line.endswith("]"):
            reason = line[1:-1]
            continue
        assert reason is not None, f"{line!r} comes before any [reason]"
        assert line not in known, f"{line!r} is listed twice"
        known[line] = reason
    return known


def test_the_conformance_cases() -> None:
    passed, out_of_scope = 0, 0
    failed: dict[str, str] = {}
    ids: set[str] = set()
    for case in celspec.cases():
        ids.add(case.id)
        try:
            ok, what = celspec.run(case)
        except celspec.OutOfScope:
            out_of_scope += 1
            continue
        if ok:
            passed += 1
        else:
            failed[case.id] = what
    known = known_failures()
    assert not set(known) - ids, f"known failures that are no case: {sorted(set(known) - ids)}"
    regressions = {i: w for i, w in failed.items() if i not in known}
    assert not regressions, f"cases that fail and are not known to: {regressions}"
    fixed = sorted(set(known) - set(failed))
    assert not fixed, f"cases that pass now: remove them from {KNOWN.name} and raise PASS_FLOOR: {fixed}"
    assert passed >= PASS_FLOOR
    assert out_of_scope == OUT_OF_SCOPE


# -- the text format reader -----------------------------------------------------------------------


def test_the_reader_reads_the_text_format() -> None:
    text = r"""
    # a comment
    name: "x" description: 'two ' "parts"
    section {
      test: { name: "a" expr: "1" value: { int64_value: -3 } }
      test < name: "b" expr: 'b\'\303\277\x41\101\u00e9\n' eval_error {} >
      n: [1, 2.5, inf, -inf, 0x1F]
      obj { [type.googleapis.com/google.protobuf.Duration] { seconds: 123 nanos: 4 } }
      flag: true, e: SOME_ENUM;
    }
    """
    tree = celspec.read(text)
    assert tree["name"] == [b"x"]
    assert tree["description"] == [b"two parts"]
    section = tree["section"][0]
    first, second = section["test"]
    assert first == {"name": [b"a"], "expr": [b"1"], "value": [{"int64_value": [-3]}]}
    assert second["expr"] == [b"b'\xc3\xbfAA\xc3\xa9\n"]
    assert second["eval_error"] == [{}]
    assert section["n"] == [1, 2.5, float("inf"), float("-inf"), 31]
    assert section["obj"] == [{"[type.googleapis.com/google.protobuf.Duration]": [{"seconds": [123], "nanos": [4]}]}]
    assert section["flag"] == ["true"]
    assert section["e"] == ["SOME_ENUM"]


@pytest.mark.parametrize("text", ['name: "unterminated', "section { name: 1", "a: }", 'a: "\\q"'])
def test_the_reader_refuses_what_is_not_the_text_format(text: str) -> None:
    with pytest.raises(celspec.TextFormatError):
        celspec.read(text)


def test_a_case_without_a_result_expects_true_and_values_keep_their_types() -> None:
    case = celspec.Case("f/s/t", celspec.read('expr: "1 + 1 == 2"'))
    assert celspec.run(case) == (True, "ok")
    case = celspec.Case("f/s/t", celspec.read('expr: "1 + 1" value { double_value: 2 }'))
    assert celspec.run(case) == (False, "got 2, expected 2.0")
    case = celspec.Case(
        "f/s/t", celspec.read('expr: "x / 0" bindings { key: "x" value { value { int64_value: 1 } } } eval_error {}')
    )
    assert celspec.run(case) == (True, "error: division by zero")
