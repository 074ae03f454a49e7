"""URLs as the Kubernetes CEL URL library reads them (`url()`, `isURL()` and the URL's getters).

k8s.io/apiserver pkg/cel/library/urls.go parses with Go's `url.ParseRequestURI`: an absolute URI
or an absolute path, no fragment. This is a port of that parser (Go's src/net/url/url.go:
`parse` with viaRequest, `getScheme`, `parseAuthority`, `parseHost`, `unescape`,
`shouldEscape`, `validUserinfo`, `EscapedPath`, `Hostname`, `Port`, `ParseQuery`), so that a
CRD's rule such as Istio's `url(self).getScheme() in ["http", "https"]` refuses what the API
server refuses. A malformed URL raises ValueError with Go's message.
"""

from __future__ import annotations

import re
from urllib.parse import unquote

from policylint.values import frozen

# What `shouldEscape` leaves alone in a path (besides letters and digits).
_PATH_OK = frozenset("-_.~$&+,/:;=@")
# `validEncoded` for a path: these may stand unescaped besides what `shouldEscape` keeps.
_PATH_ENCODED_OK = frozenset("!$&'()*+,;=:@[]%")
_USERINFO_OK = frozenset("-._:~!$&'()*+,;=%@")


@frozen
class URL:
    """The parts of a parsed URL the CEL getters read."""

    scheme: str
    host: str
    path: str  # unescaped
    raw_path: str  # as written, when it is a valid encoding of `path`
    raw_query: str

    def hostname(self) -> str:
        """Go's URL.Hostname: the host without its port, and an IPv6 literal without brackets."""
        host, _ = _split_host_port(self.host)
        return host

    def port(self) -> str:
        _, port = _split_host_port(self.host)
        return port

    def escaped_path(self) -> str:
        """Go's URL.EscapedPath: the path as written when that is a valid encoding of it."""
        if self.raw_path and _valid_encoded(self.raw_path) and _unescape(self.raw_path, "path") == self.path:
            return self.raw_path
        return _escape_path(self.path)

    def query(self) -> dict[str, list[str]]:
        """Go's URL.Query (`ParseQuery`, errors ignored): key -> its values, in order."""
        out: dict[str, list[str]] = {}
        for part in self.raw_query.split("&"):
            if not part or ";" in part:
                continue  # Go refuses ';' separators and skips the pair
            key, _, value = part.partition("=")
            try:
                key, value = _unescape(key, "query"), _unescape(value, "query")
            except ValueError:
                continue
            out.setdefault(key, []).append(value)
        return out


def parse_request_uri(raw: str) -> URL:
    """Go's url.ParseRequestURI."""
    return _parse(raw, via_request=True)


def parse_for_cel(raw: str) -> URL:
    """What the library's `url()` returns: the text checked with ParseRequestURI, then read with
    url.Parse, which cuts a `#fragment` off first (urls.go: "ParseRequestURI incorrectly parses
    URLs that contain a fragment part")."""
    parse_request_uri(raw)
    return _parse(raw.partition("#")[0], via_request=False)


def _parse(raw: str, *, via_request: bool) -> URL:
    if any(ord(c) < 0x20 or ord(c) == 0x7F for c in raw):
        raise ValueError("net/url: invalid control character in URL")
    if raw == "" and via_request:
        raise ValueError("empty url")
    if raw == "*":
        return URL("", "", "*", "", "")
    scheme, rest = _scheme(raw)
    scheme = scheme.lower()
    if rest.endswith("?") and rest.count("?") == 1:
        rest, query = rest[:-1], ""
    else:
        rest, _, query = rest.partition("?")
    if not rest.startswith("/"):
        if scheme:
            return URL(scheme, "", "", "", query)  # opaque: a rootless path per RFC 3986
        if via_request:
            raise ValueError("invalid URI for request")
    host = ""
    if (scheme or (not via_request and not rest.startswith("///"))) and rest.startswith("//"):
        authority, slash, tail = rest[2:].partition("/")
        rest = slash + tail
        host = _authority(authority)
    path = _unescape(rest, "path")
    return URL(scheme, host, path, rest if _escape_path(path) != rest else "", query)


def is_url(raw: str) -> bool:
    try:
        parse_request_uri(raw)
    except ValueError:
        return False
    return True


def _scheme(raw: str) -> tuple[str, str]:
    for i, c in enumerate(raw):
        if "a" <= c <= "z" or "A" <= c <= "Z":
            continue
        if "0" <= c <= "9" or c in "+-.":
            if i == 0:
                return "", raw
            continue
        if c == ":":
            if i == 0:
                raise ValueError("missing protocol scheme")
            return raw[:i], raw[i + 1 :]
        return "", raw  # a character no scheme has: there is none
    return "", raw


def _authority(authority: str) -> str:
    at = authority.rfind("@")
    host = _host(authority[at + 1 :] if at >= 0 else authority)
    if at >= 0:
        userinfo = authority[:at]
        if not all(c.isascii() and (c.isalnum() or c in _USERINFO_OK) for c in userinfo):
            raise ValueError("net/url: invalid userinfo")
        user, _, password = userinfo.partition(":")
        _unescape(user, "userinfo")
        _unescape(password, "userinfo")
    return host


def _host(host: str) -> str:
    if host.startswith("["):
        close = host.rfind("]")
        if close < 0:
            raise ValueError("missing ']' in host")
        port = host[close + 1 :]
        if not _valid_optional_port(port):
            raise ValueError(f"invalid port {port!r} after host")
    else:
        colon = host.rfind(":")
        if colon >= 0 and not _valid_optional_port(host[colon:]):
            raise ValueError(f"invalid port {host[colon:]!r} after host")
    return _unescape(host, "host")


def _valid_optional_port(port: str) -> bool:
    return port == "" or (port[0] == ":" and all("0" <= c <= "9" for c in port[1:]))


def _split_host_port(host: str) -> tuple[str, str]:
    colon = host.rfind(":")
    if colon >= 0 and _valid_optional_port(host[colon:]) and (not host.startswith("[") or host.rfind("]") < colon):
        name, port = host[:colon], host[colon + 1 :]
    else:
        name, port = host, ""
    if name.startswith("[") and name.endswith("]"):
        name = name[1:-1]
    return name, port


# A '%' not followed by two hex digits (Go's EscapeError), and the characters a host may hold
# unescaped besides letters and digits (`shouldEscape` in host mode); non-ASCII is left to IDNA.
_BAD_ESCAPE = re.compile(r"%(?![0-9A-Fa-f]{2})")
_HOST_ESCAPE = re.compile(r"%([0-9A-Fa-f]{2})")
# Written as the ASCII characters refused, not as the complement of those allowed and of
# \x80-\U0010ffff, which compiled the same set in 4 ms of every process that imports the CEL values.
_BAD_HOST_CHAR = re.compile(r"[\x00-\x20#/?@\\^`{|}\x7f]")


def _unescape(s: str, mode: str) -> str:
    """Go's unescape: %XX escapes decoded (and '+' a space in a query), malformed ones refused;
    in a host, a character that would need escaping is refused, and only non-ASCII bytes and %25
    may be escaped."""
    bad = _BAD_ESCAPE.search(s)
    if bad is not None:
        raise ValueError(f"invalid URL escape {s[bad.start() : bad.start() + 3]!r}")
    if mode == "host":
        char = _BAD_HOST_CHAR.search(s)
        if char is not None:
            raise ValueError(f"invalid character {char.group()!r} in host name")
        for m in _HOST_ESCAPE.finditer(s):
            if int(m.group(1), 16) < 0x80 and m.group(1) != "25":
                raise ValueError(f"invalid URL escape {m.group()!r}")
    if mode == "query":
        s = s.replace("+", " ")
    return unquote(s, errors="replace") if "%" in s else s


def _should_escape_in_path(c: str) -> bool:
    return not ((c.isascii() and c.isalnum()) or c in _PATH_OK)


def _escape_path(path: str) -> str:
    return "".join("".join(f"%{b:02X}" for b in c.encode("utf-8")) if _should_escape_in_path(c) else c for c in path)


def _valid_encoded(s: str) -> bool:
    return all(c in _PATH_ENCODED_OK or not _should_escape_in_path(c) for c in s)
