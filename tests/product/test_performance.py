"""Shortcuts taken for speed give the answers the plain code gives."""

from __future__ import annotations

import difflib

import pytest
from hypothesis import given
from hypothesis import strategies as st

from policylint.input import positions
from policylint.input.positions import format_path, join, parse_path
from policylint.rules.targetref import _SimilarNames
from tests.lintutil import lint_text, only

parts = st.lists(st.one_of(st.integers(min_value=0, max_value=99), st.text(max_size=6)), max_size=4)


@given(base=parts, more=parts)
def test_join_appends_to_a_canonical_base_like_reformatting_does(base: list[str | int], more: list[str | int]) -> None:
    path = format_path(base)
    assert join(path, *more) == format_path([*parse_path(path), *more])


@given(base=st.text(alphabet='ab.[]0"\\', max_size=10), more=parts)
def test_join_of_any_base_string_is_unchanged(base: str, more: list[str | int]) -> None:
    assert join(base, *more) == format_path([*parse_path(base), *more])


@given(base=parts, more=parts)
def test_join_asked_again_gives_what_it_gave_first(base: list[str | int], more: list[str | int]) -> None:
    path = format_path(base)
    first = join(path, *more)
    assert join(path, *more) == first == format_path([*parse_path(path), *more])


class _CountingKey:
    """`positions._PLAIN_KEY` with its matches counted: each key part of a join worked out is one."""

    def __init__(self) -> None:
        self.matched: list[str] = []
        self._pattern = positions._PLAIN_KEY

    def match(self, text: str) -> object:
        self.matched.append(text)
        return self._pattern.match(text)


def test_a_join_asked_again_is_not_worked_out_again(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(positions, "_JOINED", {})
    monkeypatch.setattr(positions, "_CANONICAL", {"spec.rules": True})  # the base's own check apart
    counting = _CountingKey()
    monkeypatch.setattr(positions, "_PLAIN_KEY", counting)
    assert join("spec.rules", 3, "backendRefs") == "spec.rules[3].backendRefs"
    assert counting.matched == ["backendRefs"]
    assert join("spec.rules", 3, "backendRefs") == "spec.rules[3].backendRefs"
    assert join("spec.rules", 3, "matches") == "spec.rules[3].matches"
    assert counting.matched == ["backendRefs", "matches"]


def test_a_bool_part_is_written_as_it_always_was_after_its_equal_int(monkeypatch: pytest.MonkeyPatch) -> None:
    # `True == 1` and both hash alike, but a bool part is written `[True]`: the join kept for the
    # int is not the bool's, nor is the bool's kept for the int.
    monkeypatch.setattr(positions, "_JOINED", {})
    assert join("items", 1) == "items[1]"
    assert join("items", True) == "items[True]"
    assert join("items", True) == "items[True]"
    monkeypatch.setattr(positions, "_JOINED", {})
    assert join("items", True) == "items[True]"
    assert join("items", 1) == "items[1]"


def test_the_joins_kept_start_again_past_their_bound(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(positions, "_JOINED", {})
    for i in range(4096):
        join("spec.rules", i)
    assert len(positions._JOINED) == 4096
    assert join("spec.rules", 4096) == "spec.rules[4096]"
    assert len(positions._JOINED) == 1


def _services(count: int) -> str:
    return "".join(
        f"---\napiVersion: v1\nkind: Service\nmetadata: {{name: backend-{i:04d}, namespace: app}}\n"
        "spec: {ports: [{name: http, port: 80}]}\n"
        for i in range(count)
    )


POLICY = """\
---
apiVersion: gateway.networking.k8s.io/v1
kind: BackendTLSPolicy
metadata: {{name: tls-{n}, namespace: app}}
spec:
  targetRefs:
  - {{group: "", kind: Service, name: {target}}}
  validation: {{hostname: x.example.com, wellKnownCACertificates: System}}
"""


def _pl201_hint(count: int, target: str) -> str:
    result = lint_text(_services(count) + POLICY.format(n=0, target=target))
    (finding,) = only(result, "PL201")
    return finding.message


def test_typo_hint_in_a_small_namespace_compares_every_name() -> None:
    assert "did you mean Service 'backend-0042'" in _pl201_hint(50, "bakend-0042")
    assert "did you mean Service 'backend-0042'" in _pl201_hint(50, "xbackend-0042")  # even a slip in the first letter


def test_typo_hint_in_a_crowded_namespace_still_finds_one_letter_slips() -> None:
    count = _SimilarNames.FULL_SCAN + 100
    assert "did you mean Service 'backend-0042'" in _pl201_hint(count, "bakend-0042")
    assert "did you mean Service 'backend-0250'" in _pl201_hint(count, "backend-02500")


def test_bounded_candidates_agree_with_difflib_on_one_letter_slips() -> None:
    names = [f"route-{i:05d}-{suffix}" for i in range(400) for suffix in ("a", "bb")]
    for typo in ("route-00012-b", "route-0012-a", "rout-00399-bb", "route-00200-abb"):
        expected = difflib.get_close_matches(typo, names, n=1, cutoff=0.75)
        bucket = [n for n in names if n[:1] == typo[:1] and abs(len(n) - len(typo)) <= 2]
        assert difflib.get_close_matches(typo, bucket, n=1, cutoff=0.75) == expected, typo
