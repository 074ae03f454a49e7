"""What CEL rules cost at runtime, as the API server counts it: the limits (`PER_CALL_LIMIT`,
`RUNTIME_BUDGET`) and the weights and prices policylint.k8s.cel's evaluator charges (PL704).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

Node = tuple[Any, ...]  # policylint.k8s.cel's syntax tree

# The API server's limits on what CEL rules may cost at runtime (k8s.io/apiserver
# pkg/apis/cel/config.go): one evaluation is cancelled beyond PerCallLimit cost units ("operation
# cancelled: actual cost limit exceeded"), and the evaluations of one object share
# RuntimeCELCostBudget (k8s.io/apiextensions-apiserver pkg/apiserver/schema/cel/validation.go).
# A cost unit is cel-go's (interpreter/runtimecost.go): one per variable, field selection and
# function call, and for what grows with the input a tenth of a unit per character or item
# traversed. At a fraction of a microsecond per unit here, the per-object budget bounds the time a
# hostile CRD and object can take to about a second, and a rule over a list far longer than its
# schema allows (PL703's finding) stops as the API server would stop it.
PER_CALL_LIMIT = 1_000_000
RUNTIME_BUDGET = 10_000_000

# -- runtime cost -----------------------------------------------------------------------------------------
#
# What an evaluation is charged, in cel-go's runtime cost units (interpreter/runtimecost.go and
# the Kubernetes library's k8s.io/apiserver pkg/cel/library/cost.go). The fixed part, one unit per
# variable, field selection, index, operator and function call, ten per list literal and thirty
# per map literal, is counted once per rule from its syntax (`weight`: every node, as if no
# branch were skipped) and charged as the evaluation starts; an iteration of a macro is charged
# its body's fixed part plus the fold's own nodes (`ITERATION`: the loop condition, the result
# variable, the list a map() or filter() builds). What grows with the input is charged where it
# runs, before it runs (`PRICES`, `BINOP_PRICES`): a tenth of a unit per character or item
# traversed (StringTraversalCostFactor), a quarter per character of a regular expression
# (RegexStringLengthCostFactor) times the string's tenth for `matches`, `find` and `findAll`.
# Where this differs from cel-go: comparing two strings costs one unit whatever their length
# (cel-go: a tenth per character of the shorter; Python compares lengths first and then bytes,
# so the time stays bounded); comparing lists and maps, `in` and a list's indexOf cost two units
# per value they hold at any depth, reading and comparing it (cel-go: a tenth per item, or one
# per item for `in`), the work equality does here; split() costs a unit per piece besides its
# traversal. Both keep the time a unit takes here near a tenth of a microsecond.

ITERATION = {"all": 3, "exists": 3, "exists_one": 3, "filter": 13, "map": 12}


def weight(node: Node) -> int:
    """The fixed cost of an expression's nodes, without its macros' iterations (charged as they run)."""
    kind = node[0]
    if kind == "lit":
        return 0
    if kind == "ident":
        return 1
    if kind in ("select", "has"):
        return 1 + weight(node[1])
    if kind == "list":
        return 10 + sum(weight(n) for n in node[1])
    if kind == "map":
        return 30 + sum(weight(k) + weight(v) for k, v in node[1])
    if kind == "comp" or kind == "comp2":
        return 1 + weight(node[2])  # the operand, and reading the result
    # The optional syntax: `x.?f` and `x[?k]` are calls in cel-go, the literals a list's and a
    # map's creation.
    if kind == "optselect":
        return 1 + weight(node[1])
    if kind == "optindex":
        return 1 + weight(node[1]) + weight(node[2])
    if kind == "optlist":
        return 10 + sum(weight(n) for n in node[1])
    if kind == "optmaplit":
        return 30 + sum(weight(k) + weight(v) for k, v in node[1])
    if kind == "call":
        target = node[2]
        return 1 + (weight(target) if target is not None else 0) + sum(weight(n) for n in node[3])
    # index, cond, and, or, not, neg, binop: their operands, and one for the operator (a
    # conditional, `&&` and `||` cost nothing themselves in cel-go; one more is harmless)
    children = node[2:] if kind == "binop" else node[1:]
    return 1 + sum(weight(n) for n in children)


def _size_of(x: Any) -> int:
    """cel-go's actualSize: the length of a string, bytes, list or map; 1 for anything else."""
    t = type(x)
    return len(x) if t is str or t is bytes or t is list or t is dict else 1


def _tenth(n: int) -> int:
    """A traversal of `n` characters or items: ceil(n * StringTraversalCostFactor)."""
    return (n + 9) // 10


_CAP = 1 << 20  # counting further than a call may cost is wasted time


def _values_in(x: Any, most: int = 1 << 30) -> int:
    """The values a list or map holds at any depth, counted up to a little past `most`."""
    count, stack = 0, [x]
    while stack and count <= most:
        v = stack.pop()
        count += 1
        if type(v) is list:
            stack.extend(v)
        elif type(v) is dict:
            stack.extend(v.values())
            count += len(v)
    return count


def _regex_price(s: Any, pattern: Any, *_: Any) -> int:
    return _tenth(1 + _size_of(s)) * ((_size_of(pattern) + 3) // 4)


def _first_price(x: Any, *_: Any) -> int:
    return _tenth(_size_of(x))


def _traversal_price(x: Any, *_: Any) -> int:
    return _tenth(_size_of(x))


def _search_price(x: Any, *_: Any) -> int:
    """indexOf and lastIndexOf: a string traversed, or a list's values compared one by one."""
    return 2 * _values_in(x, _CAP) if type(x) is list else _tenth(_size_of(x))


def _add_price(x: Any, y: Any) -> int:
    return _tenth(_size_of(x) + _size_of(y))


def _equal_price(x: Any, y: Any) -> int:
    if (type(x) is list or type(x) is dict) and (type(y) is list or type(y) is dict):
        return 2 * _values_in(x, _CAP)  # each value read and compared: CEL equality is deep
    return 1


def _split_price(s: Any, sep: Any, *_: Any) -> int:
    """The string traversed and built again (library/cost.go), and a unit per piece: a list of a
    million one-character strings takes far longer to build than the traversal's tenth."""
    if type(s) is not str or type(sep) is not str:
        return 1
    return _tenth(2 * len(s)) + (len(s) if sep == "" else s.count(sep) + 1)


def _join_price(items: Any, sep: Any = "") -> int:
    if type(items) is not list or type(sep) is not str:
        return 1
    n = sum(len(x) if type(x) is str else 1 for x in items) + len(sep) * max(len(items) - 1, 0)
    return _tenth(2 * n)  # the result's size, traversed and built (library/cost.go)


def _format_price(template: Any, args: Any) -> int:
    """format(): the template traversed, a unit per value the arguments hold at any depth (`%s`
    writes lists and maps whole), and a tenth per digit a `%.N` clause asks for, so that a rule
    formatting much in a loop reaches the limit as its time grows."""
    if type(template) is not str:
        return 1
    price = _tenth(len(template)) + _values_in(args, _CAP)
    pos = template.find("%.")
    while pos >= 0:
        end = pos + 2
        while end < len(template) and template[end] in "0123456789":
            end += 1
        digits = template[pos + 2 : end]
        if digits:
            # past 7 digits format() stops undecided (TooLarge) before any work: nothing to charge
            price += _tenth(int(digits)) if len(digits) <= 7 else 0
        pos = template.find("%.", end)
    return price


# The functions whose cost grows with their arguments: name -> the price of one call.
PRICES: dict[str, Callable[..., int]] = {
    "matches": _regex_price,
    "find": _regex_price,
    "findAll": _regex_price,
    "contains": lambda s, sub: _tenth(_size_of(s)) * _tenth(_size_of(sub)),
    "startsWith": lambda s, prefix: _tenth(_size_of(prefix)),
    "endsWith": lambda s, suffix: _tenth(_size_of(suffix)),
    "lowerAscii": _first_price,
    "upperAscii": _first_price,
    "substring": _first_price,
    "trim": _first_price,
    "charAt": _first_price,
    "url": _first_price,
    "isURL": _first_price,
    "isIP": _first_price,
    "replace": lambda s, *_: _tenth(2 * _size_of(s)),
    "split": _split_price,
    "join": _join_price,
    "indexOf": _search_price,
    "lastIndexOf": _search_price,
    "isSorted": _traversal_price,
    "sum": _traversal_price,
    "min": _traversal_price,
    "max": _traversal_price,
    "validate": lambda fmt, x: _first_price(x),
    "strings.quote": _first_price,
    "format": _format_price,
}
BINOP_PRICES: dict[str, Callable[[Any, Any], int]] = {
    "+": _add_price,
    "==": _equal_price,
    "!=": _equal_price,
    "in": lambda x, y: 2 * _values_in(y, _CAP) if type(y) is list else 1,
}
