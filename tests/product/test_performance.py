"""Shortcuts taken for speed give the answers the plain code gives."""

from __future__ import annotations

import difflib

from hypothesis import given
from hypothesis import strategies as st

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
