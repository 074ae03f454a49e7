"""How a code names rules, for every place a user writes one: `--select`, `--ignore`, the
configuration's `select`, `ignore` and `severity` (and theirs under `per-file`), `--fix-only`, and
`# policylint: disable=` comments and `policylint.io/ignore` annotations.

A code is a prefix of a rule's id, in any case (`PL2`, `pl201`), or of its name (`targetref-`,
`Targetref-`), or `ALL`, every rule (ruff's spelling; written in capitals, as no rule name is).
Surrounding blanks do not count, and an empty code names nothing. Where two codes name one rule the
longer wins (flake8), and `ALL` is shorter than any prefix: `--select ALL --ignore PL2` runs every
rule but the PL2xx ones.
"""

from __future__ import annotations

from collections.abc import Iterable

ALL = "ALL"


def prefix_length(code: str, rule_id: str, name: str) -> int:
    """How specifically `code` names the rule `rule_id` (`name`): the length of the prefix it is,
    0 for `ALL`, -1 when it does not name it."""
    c = code.strip()
    if c == ALL:
        return 0
    if c and (rule_id.upper().startswith(c.upper()) or name.startswith(c.lower())):
        return len(c)
    return -1


def matches(code: str, rule_id: str, name: str) -> bool:
    """Whether `code` names the rule `rule_id` (`name`)."""
    return prefix_length(code, rule_id, name) >= 0


def split_codes(values: Iterable[str]) -> tuple[str, ...]:
    """The codes of repeated, comma-separated values (`--select PL1,PL2 --select PL3`), blanks and
    empty items dropped."""
    return tuple(c.strip() for v in values for c in v.split(",") if c.strip())
