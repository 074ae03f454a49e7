"""Every function the evaluator knows, by name: the standard definitions, timestamps, the
strings extension with its formatting, optional values and the Kubernetes libraries, with how
each is called and its arities. (The macros, `has()`, `optMap` and `optFlatMap` are syntax: the
parser and the evaluator's.)
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from policylint.k8s import urls
from policylint.k8s.cel.formatting import format_string, quote
from policylint.k8s.cel.kubernetes import (
    _FORMATS,
    _extreme,
    _format_factory,
    _format_named,
    _is_ip,
    _is_sorted,
    _is_url,
    _sum,
    _url,
    _url_getter,
    _validate,
)
from policylint.k8s.cel.optionals import FUNCTIONS as OPTIONAL_FUNCTIONS
from policylint.k8s.cel.stdlib import (
    _contains,
    _duration,
    _dyn,
    _ends,
    _find,
    _find_all,
    _matches,
    _size,
    _starts,
    _to_bool,
    _to_bytes,
    _to_double,
    _to_int,
    _to_string,
    _to_uint,
)
from policylint.k8s.cel.strings import (
    _char_at,
    _index_of,
    _join,
    _last_index_of,
    _lower_ascii,
    _replace,
    _split,
    _substring,
    _trim,
    _upper_ascii,
)
from policylint.k8s.cel.times import TIME_FUNCTIONS
from policylint.k8s.cel.values import Type, type_name

# name -> (implementation, True: a method / False: a global function / None: both, arities
# counting the receiver). The standard definitions (cel-spec langdef.md, with `times`), cel-go's
# string extensions (ext/strings.go, with `formatting`), its optional types (`optionals`) and the
# Kubernetes libraries (k8s.io/apiserver pkg/cel/library:
# lists.go, regex.go, ip.go isIP, format.go, urls.go) as far as implemented here; other Kubernetes
# functions (ip(), cidr(), quantity(), authorizer, semver) are not, and a rule calling one is
# reported as unsupported by `policylint rules --cel-coverage`.
FUNCTIONS: dict[str, tuple[Callable[..., Any], bool | None, tuple[int, ...]]] = {
    "size": (_size, None, (1,)),
    "contains": (_contains, True, (2,)),
    "startsWith": (_starts, True, (2,)),
    "endsWith": (_ends, True, (2,)),
    "matches": (_matches, None, (2,)),
    "int": (_to_int, False, (1,)),
    "uint": (_to_uint, False, (1,)),
    "double": (_to_double, False, (1,)),
    "string": (_to_string, False, (1,)),
    "bool": (_to_bool, False, (1,)),
    "bytes": (_to_bytes, False, (1,)),
    "dyn": (_dyn, False, (1,)),
    "duration": (_duration, False, (1,)),
    # cel-go ext strings
    "charAt": (_char_at, True, (2,)),
    "indexOf": (_index_of, True, (2, 3)),
    "lastIndexOf": (_last_index_of, True, (2, 3)),
    "lowerAscii": (_lower_ascii, True, (1,)),
    "upperAscii": (_upper_ascii, True, (1,)),
    "replace": (_replace, True, (3, 4)),
    "split": (_split, True, (2, 3)),
    "substring": (_substring, True, (2, 3)),
    "trim": (_trim, True, (1,)),
    "join": (_join, True, (1, 2)),
    "format": (format_string, True, (2,)),
    "strings.quote": (quote, False, (1,)),
    # cel-spec: the type of a value
    "type": (lambda x: Type(type_name(x)), False, (1,)),
    # Kubernetes: lists.go, regex.go, ip.go, format.go, urls.go
    "isSorted": (_is_sorted, True, (1,)),
    "sum": (_sum, True, (1,)),
    "min": (_extreme("min", -1), True, (1,)),
    "max": (_extreme("max", 1), True, (1,)),
    "find": (_find, True, (2,)),
    "findAll": (_find_all, True, (2, 3)),
    "isIP": (_is_ip, False, (1,)),
    "url": (_url, False, (1,)),
    "isURL": (_is_url, False, (1,)),
    "getScheme": (_url_getter("getScheme", lambda u: u.scheme), True, (1,)),
    "getHost": (_url_getter("getHost", lambda u: u.host), True, (1,)),
    "getHostname": (_url_getter("getHostname", urls.URL.hostname), True, (1,)),
    "getPort": (_url_getter("getPort", urls.URL.port), True, (1,)),
    "getEscapedPath": (_url_getter("getEscapedPath", urls.URL.escaped_path), True, (1,)),
    "getQuery": (_url_getter("getQuery", urls.URL.query), True, (1,)),
    "format.named": (_format_named, False, (1,)),
    "validate": (_validate, True, (2,)),
}
FUNCTIONS.update(TIME_FUNCTIONS)
FUNCTIONS.update(OPTIONAL_FUNCTIONS)  # cel-go optional types (`validate` returns one)
FUNCTIONS.update({f"format.{name}": (_format_factory(name), False, (0,)) for name in _FORMATS})
