"""A shortcut for the pairwise-uniqueness rules CRDs spell as
`self.all(x, self.exists_one(y, ...))`: a hash of each item's key instead of comparing every pair,
charged as the rule written out would be.
"""

from __future__ import annotations

from typing import Any

from policylint.k8s.cel.parser import Node
from policylint.k8s.cel.values import _BAD, Activation, Eval, EvalError, UInt, equals

# -- uniqueness rules in linear time ---------------------------------------------------------------
#
# `self.all(x, self.exists_one(y, x.a == y.a && ...))`, the CRDs' way of saying "the items are
# unique by these fields", is quadratic as written: a Gateway with 64 listeners evaluates the
# body 4,096 times. When the body is a conjunction of the comparisons below, each item's result
# depends on a key of its own (the compared fields), so one pass counting the keys answers:
# `exists_one` holds for an item iff its key occurs once. The shortcut answers only where that is
# exactly what the closures would answer: every item a map whose compared fields are absent or
# hold a plain scalar (no error can arise, every comparison is a bool). Otherwise the rule runs
# as written (`loop`). The cost is charged as the closures would charge it (every comparison of
# plain scalars costs one unit, counted in the static weights), so the limits stop the same
# evaluations with the same error at the same cost.

_ABSENT = object()  # a key's part for a field an item does not have
_EMPTY = object()  # ... for a field that is absent or holds the rule's "empty" literal
_UNCLEAN = object()  # an item the shortcut does not answer for


# A term of the key: (kind, field, literal), kind "eq", "opt" or "empty".
_Term = tuple[str, str, Any]
# What an accessor reads: (variable, field).
_Access = tuple[str, str]


def _uniqueness_terms(node: Node) -> tuple[_Term, ...] | None:
    """The key of `self.all(x, self.exists_one(y, BODY))` when BODY is a conjunction of
    `x.f == y.f` ("eq"), `has(x.f) && has(y.f) ? x.f == y.f : !has(x.f) && !has(y.f)` ("opt"),
    and `((!has(x.f) || x.f == L) && (!has(y.f) || y.f == L)) || (has(x.f) && has(y.f) &&
    x.f == y.f)` ("empty", a string or integer literal L), in either variable order: (kind,
    field, L) per term; None for any other rule."""
    _, _, operand, x, bodies = node
    if len(bodies) != 1:
        return None
    inner = bodies[0]
    if inner[0] != "comp" or inner[1] != "exists_one" or inner[2] != operand or len(inner[4]) != 1:
        return None
    y = inner[3]
    walk = operand
    while walk[0] == "select":
        walk = walk[1]
    if walk[0] != "ident" or walk[1] in (x, y):
        return None  # the range must be a plain name or field chain (pure, the same each time)
    pair = frozenset((x, y))
    terms: list[_Term] = []
    for n in _conjuncts(inner[4][0]):
        found = _eq_term(n, pair) or _opt_term(n, pair) or _empty_term(n, pair)
        if found is None:
            return None
        terms.append(found)
    return tuple(terms)


def _conjuncts(node: Node) -> list[Node]:
    """The operands of a chain of `&&`, left to right."""
    out: list[Node] = []
    stack = [node]
    while stack:
        n = stack.pop()
        if n[0] == "and":
            stack.extend((n[2], n[1]))
        else:
            out.append(n)
    return out


def _sel(n: Node, pair: frozenset[str]) -> _Access | None:
    """`v.f` on one of the two variables."""
    if n[0] == "select" and n[1][0] == "ident" and n[1][1] in pair:
        return n[1][1], n[2]
    return None


def _has(n: Node, pair: frozenset[str]) -> _Access | None:
    """`has(v.f)` on one of the two variables."""
    if n[0] == "has" and n[1][0] == "ident" and n[1][1] in pair:
        return n[1][1], n[2]
    return None


def _not_has(n: Node, pair: frozenset[str]) -> _Access | None:
    return _has(n[1], pair) if n[0] == "not" else None


def _both(a: _Access | None, b: _Access | None) -> str | None:
    """The field two accessors read, one on each variable."""
    if a is None or b is None or a[1] != b[1] or a[0] == b[0]:
        return None
    return a[1]


def _eq(n: Node, pair: frozenset[str]) -> str | None:
    """`x.f == y.f`: f."""
    if n[0] == "binop" and n[1] == "==":
        return _both(_sel(n[2], pair), _sel(n[3], pair))
    return None


def _empty(n: Node, pair: frozenset[str]) -> tuple[_Access, Any] | None:
    """`!has(v.f) || v.f == L`: ((v, f), L)."""
    if n[0] != "or" or n[2][0] != "binop" or n[2][1] != "==" or n[2][3][0] != "lit":
        return None
    literal = n[2][3][1]
    absent, read = _not_has(n[1], pair), _sel(n[2][2], pair)
    if absent is None or absent != read or type(literal) not in (str, int):
        return None
    return absent, literal


def _eq_term(n: Node, pair: frozenset[str]) -> _Term | None:
    field = _eq(n, pair)
    return ("eq", field, None) if field is not None else None


def _opt_term(n: Node, pair: frozenset[str]) -> _Term | None:
    """`has(x.f) && has(y.f) ? x.f == y.f : !has(x.f) && !has(y.f)`."""
    if n[0] != "cond" or n[1][0] != "and" or n[3][0] != "and":
        return None
    field = _both(_has(n[1][1], pair), _has(n[1][2], pair))
    if field is not None and _eq(n[2], pair) == field and _both(_not_has(n[3][1], pair), _not_has(n[3][2], pair)) == field:
        return ("opt", field, None)
    return None


def _empty_term(n: Node, pair: frozenset[str]) -> _Term | None:
    """`((!has(x.f) || x.f == L) && (!has(y.f) || y.f == L)) || (has(x.f) && has(y.f) && x.f == y.f)`."""
    if n[0] != "or" or n[1][0] != "and" or n[2][0] != "and" or n[2][1][0] != "and":
        return None
    left, right = _empty(n[1][1], pair), _empty(n[1][2], pair)
    if left is None or right is None or left[1] != right[1] or type(left[1]) is not type(right[1]):
        return None
    field = _both(left[0], right[0])
    if field is not None and _both(_has(n[2][1][1], pair), _has(n[2][1][2], pair)) == field and _eq(n[2][2], pair) == field:
        return ("empty", field, left[1])
    return None


def _plain_key(value: Any) -> Any:
    """A value equal (CEL's `==`) to exactly the values whose key is equal, for the scalars the
    shortcut handles (numbers across int, uint and double; bools apart from numbers); _UNCLEAN
    for others."""
    t = type(value)
    if t is str or value is None:
        return value
    if t is int or t is UInt:
        # beyond 2**53 an int equals a double it differs from (CEL compares them as doubles), so
        # equality is no longer transitive and no key answers for it: the rule runs as written
        return value if -(1 << 53) <= value <= 1 << 53 else _UNCLEAN
    if t is float:
        return _UNCLEAN if value != value else value  # NaN equals nothing, itself included
    if t is bool:
        return (bool, value)
    return _UNCLEAN


def _key_of(item: dict[Any, Any], terms: tuple[_Term, ...]) -> Any:
    """The item's key: one part per term; _UNCLEAN when the shortcut does not answer for it."""
    parts = []
    for kind, field, literal in terms:
        value = item.get(field, _ABSENT)
        if value is _BAD:
            return _UNCLEAN
        if value is _ABSENT:
            if kind == "eq":
                return _UNCLEAN  # `x.f` fails: the closures decide what that means
            parts.append(_EMPTY if kind == "empty" else _ABSENT)
            continue
        if kind == "empty" and equals(value, literal):
            parts.append(_EMPTY)
            continue
        part = _plain_key(value)
        if part is _UNCLEAN:
            return _UNCLEAN
        parts.append(part)
    return tuple(parts)


def _keys(items: Any, terms: tuple[_Term, ...]) -> list[Any] | None:
    """The key of each item; None when the shortcut does not answer for the range."""
    if type(items) is not list:
        return None
    keys = []
    for item in items:
        if type(item) is not dict:
            return None
        key = _key_of(item, terms)
        if key is _UNCLEAN:
            return None
        keys.append(key)
    return keys


def _verdict(keys: list[Any]) -> tuple[int, bool]:
    """(the items the outer all() evaluates: up to the first false, the rule's result)."""
    counts: dict[Any, int] = {}
    for key in keys:
        counts[key] = counts.get(key, 0) + 1
    for i, key in enumerate(keys):
        if counts[key] != 1:
            return i + 1, False
    return len(keys), True


def _charge(a: Activation, reached: int, n: int, outer: int, inner: int) -> None:
    """The cost as the closures charge it: each of the `reached` iterations of all() costs
    `outer`, then its exists_one() `inner` per item of `n`; the first charge past the limit
    stops (raised)."""
    per = outer + n * inner
    room = a.limit - a.cost
    done = room // per  # the iterations that fit whole
    if done >= reached:
        a.cost += reached * per
        return
    a.cost += done * per + outer
    room -= done * per + outer
    if room >= 0:
        a.cost += (room // inner + 1) * inner  # the inner charge that passes the limit
    raise a.over()


def _uniqueness(operand: Eval, terms: tuple[_Term, ...], loop: Eval, outer: int, inner: int) -> Eval:
    def unique(a: Activation) -> Any:
        try:
            items = operand(a)
        except EvalError:
            return loop(a)
        keys = _keys(items, terms)
        if keys is None:
            return loop(a)
        reached, result = _verdict(keys)
        _charge(a, reached, len(keys), outer, inner)
        return result

    return unique
