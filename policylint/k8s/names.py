"""Kubernetes names as the API server validates them, and as policylint writes them in messages.

Patterns from k8s.io/apimachinery/pkg/util/validation (IsDNS1123Label, IsDNS1123Subdomain) and
the Gateway API's own type validations (apis/v1/shared_types.go: Group, Kind, SectionName).
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable

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
    """The closest candidates to a misspelt `word`, best first (deterministic: candidates are sorted)."""
    return difflib.get_close_matches(word, sorted(set(candidates)), n=n, cutoff=cutoff)


def plural(n: int, word: str, many: str | None = None) -> str:
    """`1 route`, `2 routes`, `2 policies`; `many` where neither is right (`2 info`)."""
    if n == 1:
        return f"1 {word}"
    if many is None:
        consonant_y = word.endswith("y") and word[-2:-1] not in ("a", "e", "i", "o", "u")
        many = word[:-1] + "ies" if consonant_y else word + "s"
    return f"{n} {many}"
