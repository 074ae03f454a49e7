"""Kubernetes names as the API server validates them, and as policylint writes them in messages.

Patterns from k8s.io/apimachinery/pkg/util/validation (IsDNS1123Label, IsDNS1123Subdomain) and
the Gateway API's own type validations (apis/v1/shared_types.go: Group, Kind, SectionName).
"""

from __future__ import annotations

import difflib
import re
from collections import Counter
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from policylint.k8s.objects import ObjectKey

_LABEL = r"[a-z0-9]([-a-z0-9]*[a-z0-9])?"
# RFC 1123 label: lowercase letters, digits and '-', at most 63 (the length is checked apart).
DNS1123_LABEL = re.compile(rf"^{_LABEL}$")
# RFC 1123 subdomain: labels joined by '.', at most 253.
DNS1123_SUBDOMAIN = re.compile(rf"^{_LABEL}(\.{_LABEL})*$")
# Gateway API Group: a subdomain, or "" for the core group.
GROUP = re.compile(rf"^$|^{_LABEL}(\.{_LABEL})*$")
# Gateway API Kind: a letter, then letters, digits or '-' (at most 63).
KIND = re.compile(r"^[a-zA-Z]([-a-zA-Z0-9]*[a-zA-Z0-9])?$")


def ns_name(namespace: str | None, name: str) -> str:
    """`namespace/name`, or `name` for a cluster-scoped object."""
    return f"{namespace}/{name}" if namespace else name


def group_kind(group: str, kind: str) -> str:
    """`gateway.networking.k8s.io/Gateway`, `core/Service`: how the Gateway API docs write a kind."""
    return f"{group}/{kind}" if group else f"core/{kind}"


def did_you_mean(word: str, candidates: Iterable[str], *, n: int = 1, cutoff: float = 0.75) -> list[str]:
    """The closest candidates to a misspelt `word`, best first (deterministic: candidates are sorted):
    `difflib.get_close_matches` over the sorted candidates. For the one closest (`n` = 1, what
    every finding's hint asks), `_closest` gives its answer with less work."""
    possibilities = sorted(set(candidates))
    if n == 1 and 0.0 <= cutoff <= 1.0:
        return _closest(word, possibilities, cutoff)
    return difflib.get_close_matches(word, possibilities, n=n, cutoff=cutoff)


def _closest(word: str, possibilities: list[str], cutoff: float) -> list[str]:
    """`difflib.get_close_matches(word, possibilities, n=1, cutoff=cutoff)`: the candidate of the
    highest `SequenceMatcher.ratio` at or over the cutoff, the last (largest) of those that tie,
    as `heapq.nlargest` picks among (ratio, candidate) pairs. Each candidate's two upper bounds of
    its ratio (`real_quick_ratio`, from the lengths; `quick_ratio`, from the letters in common)
    are compared with the best ratio so far, not only the cutoff: a candidate that cannot reach it
    cannot win, and its ratio, the costly part, is not worked out. A repository's hints ask about
    the same few names over and over (on the benchmarks' shared corpus, 976 questions about 237
    names among 56), so the letters of a name (`_LETTERS`) and the ratio of a pair (`_RATIOS`)
    are kept."""
    size = len(word)
    letters: dict[str, int] | None = None
    best: str | None = None
    floor = cutoff  # what a candidate's ratio must reach to win: at or over the best so far
    for candidate in possibilities:
        total = len(candidate) + size
        if (2.0 * min(len(candidate), size) / total if total else 1.0) < floor:
            continue
        if letters is None:
            letters = dict(_letters(word))
        shared = 0
        for letter, count in _letters(candidate):
            mine = letters.get(letter, 0)
            shared += count if count < mine else mine
        if (2.0 * shared / total if total else 1.0) < floor:
            continue
        ratio = _RATIOS.get((word, candidate))
        if ratio is None:
            if len(_RATIOS) >= _KEPT:
                _RATIOS.clear()
            ratio = _RATIOS[(word, candidate)] = difflib.SequenceMatcher(None, candidate, word).ratio()
        if ratio >= floor:
            best, floor = candidate, ratio
    return [best] if best is not None else []


# A name's letters and how often each occurs, and the ratio of (word, candidate) pairs: pure
# functions of the strings, emptied past `_KEPT` entries, which only costs working them out again.
_LETTERS: dict[str, tuple[tuple[str, int], ...]] = {}
_RATIOS: dict[tuple[str, str], float] = {}
_KEPT = 16_384


def _letters(name: str) -> tuple[tuple[str, int], ...]:
    found = _LETTERS.get(name)
    if found is None:
        if len(_LETTERS) >= _KEPT:
            _LETTERS.clear()
        found = _LETTERS[name] = tuple(Counter(name).items())
    return found


def plural(n: int, word: str, many: str | None = None) -> str:
    """`1 route`, `2 routes`, `2 policies`; `many` where neither is right (`2 info`)."""
    if n == 1:
        return f"1 {word}"
    if many is None:
        consonant_y = word.endswith("y") and word[-2:-1] not in ("a", "e", "i", "o", "u")
        many = word[:-1] + "ies" if consonant_y else word + "s"
    return f"{n} {many}"


def object_ref(key: ObjectKey, api_version: str) -> dict[str, Any]:
    """An object as the JSON report and the policies section name it."""
    return {"apiVersion": api_version, "kind": key.kind, "namespace": key.namespace, "name": key.name}
