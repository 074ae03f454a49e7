"""Rule family module (being written)."""

from __future__ import annotations

from policylint.rules.base import Rule

RULES: list[type[Rule]] = []
