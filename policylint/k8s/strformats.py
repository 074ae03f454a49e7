"""The string checks of a CRD schema the API server makes: `pattern` and `format` (PL703).

`pattern` is a Go regular expression (RE2 syntax), which the API server applies with Go's
`regexp` package as a search: the value matches when some part of it does. It is compiled here
with RE2 itself (google-re2), once per pattern: Python's `re` reads some patterns differently
(`$` also matches before a final newline) and can backtrack for minutes on a value crafted
against a pattern, where RE2 runs in linear time. A pattern RE2 does not compile (Go's regexp
and RE2 differ in a few corners) is counted in `uncompiled()` and checks nothing.

`format` follows kube-openapi's `strfmt` registry, which validates CRD values
(k8s.io/kube-openapi/pkg/validation/strfmt): a format name is compared with its dashes removed
(`date-time` is `datetime`), and one the registry does not know (`int32`, `int64`, a vendor's
own) is ignored, as the API server ignores it. Implemented: `datetime`, `date`, `byte`, `ipv4`,
`ipv6`, `cidr`, `hostname`, `uuid`, `uuid3`, `uuid4`, `uuid5` and `password` (anything); the
registry's other formats (`uri`, `email`, `mac`, `duration`, `isbn`, ...), which no bundled
schema uses, are not checked.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Callable
from typing import Any

import re2

# Errors go to the exception, not to standard error (RE2 logs them by default).
_OPTIONS = re2.Options()
_OPTIONS.log_errors = False
_OPTIONS.never_capture = True  # matched or not is all that is asked

_COMPILED: dict[str, Any] = {}  # pattern -> compiled RE2, or None: it does not compile
# Far more distinct patterns than any set of CRDs has; past it, a pattern is compiled per use.
_MAX_CACHED = 4096


def _compiled(pattern: str) -> Any:
    if pattern in _COMPILED:
        return _COMPILED[pattern]
    try:
        compiled = re2.compile(pattern, options=_OPTIONS)
    except (re2.error, TypeError, ValueError, UnicodeError):
        compiled = None
    if len(_COMPILED) < _MAX_CACHED:
        _COMPILED[pattern] = compiled
    return compiled


def uncompiled() -> list[str]:
    """The patterns met so far that RE2 does not compile, and that were therefore not checked."""
    return sorted(p for p, c in _COMPILED.items() if c is None)


def _utf8(value: str) -> bytes:
    """The UTF-8 bytes of the string Go would hold: a lone surrogate (JSON `"\\ud800"`) becomes
    U+FFFD, as Go's JSON decoder makes it. RE2 searches the bytes: given a `str`, its Python
    wrapper encodes it and maps each match's offsets back to characters, which took more than
    half of a search that only asks whether there is a match."""
    try:
        return value.encode("utf-8")
    except UnicodeEncodeError:
        return value.encode("utf-16", "surrogatepass").decode("utf-16", "replace").encode("utf-8")


# (pattern, value) -> the answer: names, kinds and groups recur across a repository's objects.
_ANSWERS: dict[tuple[str, str], bool | None] = {}
_MAX_ANSWERS = 1 << 16
_MAX_REMEMBERED_VALUE = 256  # characters; longer values are matched each time


def matches(pattern: str, value: str) -> bool | None:
    """Whether `value` matches the schema `pattern` as the API server matches it (Go's
    `regexp.MatchString`: a search); None when the pattern does not compile."""
    key = (pattern, value)
    if key in _ANSWERS:
        return _ANSWERS[key]
    compiled = _compiled(pattern)
    answer = None if compiled is None else compiled.search(_utf8(value)) is not None
    if len(value) <= _MAX_REMEMBERED_VALUE:
        if len(_ANSWERS) >= _MAX_ANSWERS:
            _ANSWERS.clear()
        _ANSWERS[key] = answer
    return answer


def _search(pattern: str, value: str) -> bool:
    return matches(pattern, value) is True


# -- formats (kube-openapi strfmt) ---------------------------------------------------------------

# strfmt's DateTimePattern, applied to the part after the date (lowercased).
_TIME = r"^([0-9]{2}):([0-9]{2}):([0-9]{2})(.[0-9]+)?(z|([+-][0-9]{2}:[0-9]{2}))$"
# govalidator's Base64 (standard alphabet, padded; the empty string does not match).
_BASE64 = r"^(?:[A-Za-z0-9+\/]{4})*(?:[A-Za-z0-9+\/]{2}==|[A-Za-z0-9+\/]{3}=|[A-Za-z0-9+\/]{4})$"
# strfmt's HostnamePattern.
_HOSTNAME = (
    r"^([a-zA-Z0-9\p{S}\p{L}]((-?[a-zA-Z0-9\p{S}\p{L}]{0,62})?)|([a-zA-Z0-9\p{S}\p{L}](([a-zA-Z0-9-\p{S}\p{L}]{0,61}"
    r"[a-zA-Z0-9\p{S}\p{L}])?)(\.)){1,}([a-zA-Z\p{L}]){2,63})$"
)
_UUID = {
    "uuid": r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$",
    "uuid3": r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?3[0-9a-f]{3}-?[0-9a-f]{4}-?[0-9a-f]{12}$",
    "uuid4": r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?4[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}$",
    "uuid5": r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?5[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}$",
}
_DIGITS = frozenset("0123456789")


def _days_in(month: int, year: int) -> int:
    if month == 2:
        return 29 if year % 4 == 0 and (year % 100 != 0 or year % 400 == 0) else 28
    return 30 if month in (4, 6, 9, 11) else 31


def is_date(value: str) -> bool:
    """strfmt's IsDate: Go's `time.Parse("2006-01-02", value)`. The year is four characters
    (digits, or a sign and three digits), month and day two digits each, the day within its month."""
    if len(value) != 10 or value[4] != "-" or value[7] != "-":
        return False
    year, month, day = value[:4], value[5:7], value[8:]
    if not set(month + day) <= _DIGITS:
        return False
    if not (set(year) <= _DIGITS or (year[0] in "+-" and set(year[1:]) <= _DIGITS)):
        return False
    m, d, y = int(month), int(day), int(year)
    return 1 <= m <= 12 and 1 <= d <= _days_in(m, y)


def is_date_time(value: str) -> bool:
    """strfmt's IsDateTime: the lowercased value split at each `t`, a date before the first and a
    time (hours up to 23, minutes and seconds up to 59, a fraction, `z` or an offset) after it."""
    if len(value) < 4:
        return False
    parts = value.lower().split("t")
    if len(parts) < 2 or not is_date(parts[0]):
        return False
    compiled = _compiled(_TIME)
    found = compiled.search(_utf8(parts[1])) if compiled is not None else None
    if found is None:
        return False
    # Compared as strings, as strfmt compares them: two digits each.
    hours, minutes, seconds = parts[1][0:2], parts[1][3:5], parts[1][6:8]
    return hours <= "23" and minutes <= "59" and seconds <= "59"


def _ipv4_sloppy(value: str) -> bool:
    # k8s.io/utils/net ParseIPSloppy: Go's dotted quad before Go 1.17, leading zeros allowed
    # (a field is decimal whatever its zeros).
    fields = value.split(".")
    return len(fields) == 4 and all(f and set(f) <= _DIGITS and int(f) <= 255 for f in fields)


def _ipv6(value: str) -> bool:
    # Go's net.ParseIP for an address with colons: no zone (`%eth0`), no brackets.
    if "%" in value or not value.isascii():
        return False
    try:
        ipaddress.IPv6Address(value)
    except ValueError:
        return False
    return True


def is_ipv4(value: str) -> bool:
    """strfmt's isIPv4: ParseIPSloppy accepts it and it has a dot (an IPv6 address with an
    embedded IPv4 one, `::ffff:10.0.0.1`, counts)."""
    return "." in value and (_ipv4_sloppy(value) or _ipv6(value))


def is_ipv6(value: str) -> bool:
    """govalidator's IsIPv6: Go's net.ParseIP accepts it and it has a colon."""
    return ":" in value and _ipv6(value)


def is_cidr(value: str) -> bool:
    """strfmt's isCIDR: ParseCIDRSloppy, an address (IPv4 with leading zeros allowed) and a
    decimal prefix length up to the address's bits."""
    address, slash, prefix = value.partition("/")
    if not slash or not prefix or not set(prefix) <= _DIGITS:
        return False
    if _ipv4_sloppy(address):
        bits = 32
    elif ":" in address and _ipv6(address):
        bits = 128
    else:
        return False
    return int(prefix) <= bits


def is_hostname(value: str) -> bool:
    """strfmt's IsHostname: its pattern, at most 255 bytes, no label over 63 bytes."""
    if not _search(_HOSTNAME, value):
        return False
    encoded = _utf8(value)
    return len(encoded) <= 255 and all(len(label) <= 63 for label in encoded.split(b"."))


def is_base64(value: str) -> bool:
    """govalidator's IsBase64 (the `byte` format)."""
    return _search(_BASE64, value)


def _searcher(pattern: str) -> Callable[[str], bool]:
    return lambda value: _search(pattern, value)


_FORMATS: dict[str, Callable[[str], bool]] = {
    "datetime": is_date_time,
    "date": is_date,
    "byte": is_base64,
    "ipv4": is_ipv4,
    "ipv6": is_ipv6,
    "cidr": is_cidr,
    "hostname": is_hostname,
    "password": lambda _: True,
    **{name: _searcher(pattern) for name, pattern in _UUID.items()},
}


def format_ok(name: str, value: str) -> bool | None:
    """Whether `value` is valid in the schema format `name`; None for a format not checked
    (unknown to Kubernetes, which ignores it, or not implemented here)."""
    check = _FORMATS.get(name.replace("-", ""))
    return None if check is None else check(value)
