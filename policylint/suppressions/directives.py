"""The text of one suppression: `CODES [until=YYYY-MM-DD] [-- reason]`.

Written after `# policylint: disable=` (or `disable-next-line=`, `disable-file=`) in a comment,
or as the whole value of the `policylint.io/ignore` annotation. The grammar is in
docs/suppressions.md.
"""

from __future__ import annotations

import datetime
import re

from policylint.values import frozen

# Directive names, as written after `policylint:`.
DISABLE = "disable"
DISABLE_NEXT_LINE = "disable-next-line"
DISABLE_FILE = "disable-file"
DIRECTIVES = (DISABLE, DISABLE_NEXT_LINE, DISABLE_FILE)

_CODE = r"[A-Za-z0-9][A-Za-z0-9_-]*"
# Codes, then optionally `until=DATE`, then optionally ` -- reason`. A code may contain `-`
# (rule names are kebab-case), so the reason separator needs whitespace before it.
_BODY = re.compile(
    rf"(?P<codes>{_CODE}(?:[ \t]*,[ \t]*{_CODE})*)"
    r"(?:[ \t]+until=(?P<until>\S*))?"
    r"[ \t]*(?:(?<=[ \t])--(?P<reason>.*)|(?P<rest>.*))$",
    re.S,
)
_DIRECTIVE = re.compile(r"[ \t]*(?P<name>[A-Za-z-]+)[ \t]*=[ \t]*(?P<body>.*)$", re.S)
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
# `until=...` as a word of its own in the reason (the value, if any, is checked as a date).
_UNTIL_IN_REASON = re.compile(r"(?<!\S)until=(\S*)(?!\S)")


@frozen
class Spec:
    """What a suppression says: the codes it names, until when, and why."""

    codes: tuple[str, ...]
    until: datetime.date | None = None
    reason: str = ""


class DirectiveError(ValueError):
    """The text cannot be read as a suppression (PL905 says what is wrong)."""


def parse_spec(text: str) -> Spec:
    """`PL301,PL602 until=2026-06-30 -- reason` -> Spec. Raises DirectiveError."""
    match = _BODY.match(text.strip())
    if match is None:
        raise DirectiveError(f"expected rule codes (e.g. PL301,targetref-not-found), got {text.strip()[:60]!r}")
    if match.group("rest"):
        raise DirectiveError(
            f"unexpected {match.group('rest').strip()[:60]!r} after the codes: write `until=YYYY-MM-DD` and the reason after ` -- `"
        )
    codes = tuple(c.strip() for c in match.group("codes").split(","))
    until: datetime.date | None = None
    raw_until = match.group("until")
    reason = match.group("reason") or ""
    # `-- reason until=DATE` is read as written before the reason: left in the reason, the date
    # was prose, and an expired suppression kept hiding its finding.
    in_reason = _UNTIL_IN_REASON.findall(reason)
    if in_reason:
        if raw_until is not None or len(in_reason) > 1:
            raise DirectiveError("until= is given more than once: write one `until=YYYY-MM-DD`, before ` -- `")
        raw_until = in_reason[0]
        reason = _UNTIL_IN_REASON.sub(" ", reason)
    if raw_until is not None:
        try:
            if not _DATE.fullmatch(raw_until):
                raise ValueError
            until = datetime.date.fromisoformat(raw_until)
        except ValueError:
            raise DirectiveError(f"until={raw_until[:40]!r} is not a date written YYYY-MM-DD") from None
    return Spec(codes, until, " ".join(reason.split()) if in_reason else reason.strip())


def parse_comment(text: str) -> tuple[str, Spec]:
    """The comment text after `policylint:` -> (directive, spec). Raises DirectiveError."""
    match = _DIRECTIVE.match(text)
    if match is None:
        word = text.strip().split(" ", 1)[0]
        if word in DIRECTIVES:
            raise DirectiveError(f"expected `=` and the rule codes after {word!r}, e.g. `{word}=PL201 -- reason`")
        raise DirectiveError("expected `disable=`, `disable-next-line=` or `disable-file=` after `policylint:`")
    name = match.group("name")
    if name not in DIRECTIVES:
        raise DirectiveError(f"unknown directive {name!r} (expected disable, disable-next-line or disable-file)")
    return name, parse_spec(match.group("body"))
