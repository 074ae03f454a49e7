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

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from policylint.values import frozen

if TYPE_CHECKING:
    from policylint.rules.base import Rule

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


@frozen
class Selection:
    """`--select` / `--ignore` by rule code (policylint.rulecodes); the longest matching prefix wins (flake8)."""

    select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()

    @staticmethod
    def best(codes: Sequence[str], rule: type[Rule]) -> int:
        """The longest of `codes` that names `rule` (`rulecodes.prefix_length`), -1 when none does."""
        return max((prefix_length(code, rule.id, rule.name) for code in codes), default=-1)

    def enabled(self, rule: type[Rule]) -> bool:
        selected = self.best(self.select, rule) if self.select else 0
        ignored = self.best(self.ignore, rule)
        if selected < 0:
            return False
        return ignored < 0 or selected > ignored

    def unknown_codes(self, rules: Sequence[type[Rule]]) -> list[str]:
        out = []
        for code in (*self.select, *self.ignore):
            c = code.strip()
            if c and not any(matches(c, r.id, r.name) for r in rules):
                out.append(c)
        return out


class RuleOptionError(ValueError):
    """An option a rule does not declare, or a value of the wrong type (a usage error). Here, out of
    the rules' package, so that a command can catch it without importing every rule."""
