"""The Kubernetes CEL libraries (k8s.io/apiserver pkg/cel/library) as far as implemented: lists.go
(`isSorted`, `sum`, `min`, `max`), regex.go (`find`, `findAll`), ip.go (`isIP`), urls.go, format.go
(`format.named`, `format.dns1123Label()`, ... and `validate`, which returns an optional value).
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Callable
from typing import Any

from policylint.k8s import urls
from policylint.k8s.cel.operators import _add
from policylint.k8s.cel.stdlib import _str_args
from policylint.k8s.cel.values import _NONE, _NUMBERS, Duration, EvalError, NamedFormat, Optional, _compare, _overload


def _is_sorted(items: Any) -> bool:
    if type(items) is not list:
        raise _overload("isSorted", items)
    return all(_compare("isSorted", items[i], items[i + 1]) in (-1, 0) for i in range(len(items) - 1))


def _sum(items: Any) -> Any:
    if type(items) is not list:
        raise _overload("sum", items)
    if not items:
        return 0
    total = items[0]
    for x in items[1:]:
        total = _add(total, x)
    if type(total) not in _NUMBERS and type(total) is not Duration:
        raise _overload("sum", items)
    return total


def _extreme(name: str, sign: int) -> Callable[[Any], Any]:
    def pick(items: Any) -> Any:
        if type(items) is not list:
            raise _overload(name, items)
        if not items:
            raise EvalError(f"{name}(list) called on an empty list")
        best = items[0]
        for x in items[1:]:
            if _compare(name, x, best) == sign:
                best = x
        return best

    return pick


def _parse_ip(s: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    """k8s.io/apiserver pkg/cel/library/ip.go parseIPAddr: Go's netip.ParseAddr, without zones
    and without IPv4-mapped IPv6 addresses."""
    try:
        addr = ipaddress.ip_address(s)
    except ValueError:
        return None
    if isinstance(addr, ipaddress.IPv6Address) and (addr.scope_id is not None or addr.ipv4_mapped is not None):
        return None
    return addr


def _is_ip(s: Any) -> bool:
    _str_args("isIP", s)
    return _parse_ip(s) is not None


def _url(s: Any) -> urls.URL:
    """k8s.io/apiserver pkg/cel/library/urls.go `url()`."""
    _str_args("url", s)
    try:
        return urls.parse_for_cel(s)
    except ValueError as exc:
        raise EvalError(f"URL parse error during conversion from string: parse {_go_quote(s)}: {exc}") from None


def _is_url(s: Any) -> bool:
    _str_args("isURL", s)
    return urls.is_url(s)


_GO_ESCAPES = {
    "\a": "\\a",
    "\b": "\\b",
    "\f": "\\f",
    "\n": "\\n",
    "\r": "\\r",
    "\t": "\\t",
    "\v": "\\v",
    "\\": "\\\\",
    '"': '\\"',
}


def _go_quote(s: str) -> str:
    """Go's strconv.Quote, as `%q` prints the URL in net/url's errors."""
    out = []
    for c in s:
        if c in _GO_ESCAPES:
            out.append(_GO_ESCAPES[c])
        elif c.isprintable():
            out.append(c)
        else:
            out.append(f"\\x{ord(c):02x}" if ord(c) < 0x80 else f"\\u{ord(c):04x}" if ord(c) < 0x10000 else f"\\U{ord(c):08x}")
    return '"' + "".join(out) + '"'


def _url_getter(name: str, read: Callable[[urls.URL], Any]) -> Callable[[Any], Any]:
    def get(u: Any) -> Any:
        if type(u) is not urls.URL:
            raise _overload(name, u)
        return read(u)

    return get


# Go's time.ParseDuration, which CEL's duration() uses: a sequence of decimal numbers with units.


# Kubernetes formats (k8s.io/apiserver pkg/cel/library/format.go ConstantFormats), their
# validation from k8s.io/apimachinery pkg/util/validation; the messages are that package's.
_DNS1123_LABEL = re.compile(r"[a-z0-9](?:[-a-z0-9]*[a-z0-9])?\Z")
_DNS1123_SUBDOMAIN = re.compile(r"[a-z0-9](?:[-a-z0-9]*[a-z0-9])?(?:\.[a-z0-9](?:[-a-z0-9]*[a-z0-9])?)*\Z")
_DNS1035_LABEL = re.compile(r"[a-z](?:[-a-z0-9]*[a-z0-9])?\Z")
_LABEL_VALUE = re.compile(r"(?:(?:[A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?\Z")
_QUALIFIED_NAME = re.compile(r"(?:[A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]\Z")


def _length_and_pattern(most: int, pattern: re.Pattern[str], message: str) -> Callable[[str], list[str]]:
    """A validator as apimachinery writes them: a length bound, then a pattern, each its own error."""

    def validate(s: str) -> list[str]:
        errors = []
        if len(s) > most:
            errors.append(f"must be no more than {most} characters")
        if not pattern.match(s):
            errors.append(message)
        return errors

    return validate


_dns1123_label = _length_and_pattern(
    63,
    _DNS1123_LABEL,
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and"
    " end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is"
    " '[a-z0-9]([-a-z0-9]*[a-z0-9])?')",
)
_dns1123_subdomain = _length_and_pattern(
    253,
    _DNS1123_SUBDOMAIN,
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must"
    " start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is"
    " '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
)
_dns1035_label = _length_and_pattern(
    63,
    _DNS1035_LABEL,
    "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic"
    " character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for"
    " validation is '[a-z]([-a-z0-9]*[a-z0-9])?')",
)
_label_value = _length_and_pattern(
    63,
    _LABEL_VALUE,
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must"
    " start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used"
    " for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')",
)


def _qualified_name(s: str) -> list[str]:
    prefix, slash, name = s.rpartition("/")
    errors = []
    if slash and not prefix:
        errors.append("prefix part must be non-empty")
    elif slash:
        errors.extend("prefix part " + e for e in _dns1123_subdomain(prefix))
    if not name:
        errors.append("name part must be non-empty")
    elif len(name) > 63:
        errors.append("name part must be no more than 63 characters")
    if name and not _QUALIFIED_NAME.match(name):
        errors.append(
            "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an"
            " alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is"
            " '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
        )
    return errors


_FORMATS: dict[str, Callable[[str], list[str]]] = {
    "dns1123Label": _dns1123_label,
    "dns1123Subdomain": _dns1123_subdomain,
    "dns1035Label": _dns1035_label,
    "labelValue": _label_value,
    "qualifiedName": _qualified_name,
}


def _format_factory(name: str) -> Callable[[], NamedFormat]:
    fmt = NamedFormat(name, _FORMATS[name])
    return lambda: fmt


def _format_named(name: Any) -> Optional:
    if type(name) is not str:
        raise _overload("format.named", name)
    fn = _FORMATS.get(name)
    return Optional(NamedFormat(name, fn) if fn is not None else _NONE)


def _validate(fmt: Any, s: Any) -> Optional:
    if type(fmt) is not NamedFormat or type(s) is not str:
        raise _overload("validate", fmt, s)
    errors = fmt.validate(s)
    return Optional(errors if errors else _NONE)
