"""Two-variable comprehensions (cel-go's ext.TwoVarComprehensions): `all(k, v, p)`, `exists(k, v, p)`, `existsOne(k, v, p)`,
`transformList(k, v, [filter,] e)`, `transformMap(k, v, [filter,] e)` and
`transformMapEntry(k, v, [filter,] e)`, over a list (index and item) or a map (key and value).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from policylint.k8s.cel.comprehensions import not_a_range, restore
from policylint.k8s.cel.values import (
    _BAD,
    _NONE,
    Activation,
    BadValue,
    CostExceeded,
    Eval,
    EvalError,
    TooLarge,
    _first,
    _overload,
    type_name,
)

# A macro's iteration, as ITERATION counts the one-variable macros': the loop condition and step,
# and the list or map built (as map() builds one).
ITERATION = {
    "all": 3,
    "exists": 3,
    "existsOne": 3,
    "exists_one": 3,
    "transformList": 12,
    "transformMap": 12,
    "transformMapEntry": 12,
}

# One iteration's start: its cost charged, the variables bound to a pair (raises past the limit,
# or BadValue on an item of the wrong type).
Step = Callable[[Activation, Any, Any], None]
# A macro's loop over its range's pairs.
Run = Callable[[Activation, list[tuple[Any, Any]]], Any]


def _pairs(value: Any, macro: str) -> list[tuple[Any, Any]]:
    if type(value) is list:
        return list(enumerate(value))
    if type(value) is dict:
        return list(value.items())
    raise not_a_range(value, macro)


def two_variable(macro: str, operand: Eval, first: str, second: str, bodies: list[Eval], each: int) -> Eval:
    """The macro's loop, each iteration charged `each` before it runs, as the one-variable
    macros' (`comprehensions`)."""

    def step(a: Activation, k: Any, v: Any) -> None:
        a.cost += each
        if a.cost > a.limit:
            raise a.over()
        a.vars[first] = k
        a.vars[second] = v
        if v is _BAD:
            raise BadValue("an item has a type its schema rejects")

    run = _RUNS[macro](macro, step, bodies)

    def loop(a: Activation) -> Any:
        pairs = _pairs(operand(a), macro)
        saved = (a.vars.get(first, _NONE), a.vars.get(second, _NONE))
        try:
            return run(a, pairs)
        finally:
            restore(a.vars, first, saved[0])
            restore(a.vars, second, saved[1])

    return loop


def _quantifier(macro: str, step: Step, bodies: list[Eval]) -> Run:
    """`all` and `exists`, whose errors (an item's wrong type among them) are absorbed when
    another item decides, as the one-variable macros'."""
    body = bodies[0]
    stop = macro == "exists"
    operator = "_||_" if stop else "_&&_"

    def run(a: Activation, pairs: list[tuple[Any, Any]]) -> Any:
        error: EvalError | None = None
        for k, v in pairs:
            try:
                step(a, k, v)
                x = body(a)
            except (CostExceeded, TooLarge):
                raise
            except EvalError as exc:
                error = exc if error is None else _first(error, exc)  # absorbed if another item decides
                continue
            if x is stop:
                return stop
            if type(x) is not bool:
                error = error or _overload(operator, x)
        if error is not None:
            raise error
        return not stop

    return run


def _exists_one(macro: str, step: Step, bodies: list[Eval]) -> Run:
    body = bodies[0]

    def run(a: Activation, pairs: list[tuple[Any, Any]]) -> Any:
        count = 0
        for k, v in pairs:
            step(a, k, v)
            x = body(a)
            if x is True:
                count += 1
            elif x is not False:
                raise _overload(macro, x)
        return count == 1

    return run


def _keeps(keep: Eval, a: Activation, macro: str) -> bool:
    """Whether a transform's filter keeps the pair bound in `a`."""
    x = keep(a)
    if x is True or x is False:
        return x
    raise _overload(macro, x)


def _transform_list(macro: str, step: Step, bodies: list[Eval]) -> Run:
    body = bodies[-1]
    keep = bodies[0] if len(bodies) == 2 else None

    def run(a: Activation, pairs: list[tuple[Any, Any]]) -> Any:
        items: list[Any] = []
        for k, v in pairs:
            step(a, k, v)
            if keep is None or _keeps(keep, a, macro):
                items.append(body(a))
        return items

    return run


def _transform_map(macro: str, step: Step, bodies: list[Eval]) -> Run:
    body = bodies[-1]
    keep = bodies[0] if len(bodies) == 2 else None

    def run(a: Activation, pairs: list[tuple[Any, Any]]) -> Any:
        entries: dict[Any, Any] = {}
        for k, v in pairs:
            step(a, k, v)
            if keep is None or _keeps(keep, a, macro):
                entries[k] = body(a)
        return entries

    return run


def _transform_map_entry(macro: str, step: Step, bodies: list[Eval]) -> Run:
    """Each step yields a map of one entry; the entries make the map, no key twice."""
    body = bodies[-1]
    keep = bodies[0] if len(bodies) == 2 else None

    def run(a: Activation, pairs: list[tuple[Any, Any]]) -> Any:
        entries: dict[Any, Any] = {}
        for k, v in pairs:
            step(a, k, v)
            if keep is not None and not _keeps(keep, a, macro):
                continue
            got = body(a)
            if type(got) is not dict or len(got) != 1:
                raise EvalError(f"transformMapEntry() macro: the expression must yield a map of one entry, not {type_name(got)}")
            ((key, value),) = got.items()
            if key in entries:
                raise EvalError(f"insert failed: key {key} already exists")
            entries[key] = value
        return entries

    return run


_RUNS: dict[str, Callable[[str, Step, list[Eval]], Run]] = {
    "all": _quantifier,
    "exists": _quantifier,
    "existsOne": _exists_one,
    "exists_one": _exists_one,
    "transformList": _transform_list,
    "transformMap": _transform_map,
    "transformMapEntry": _transform_map_entry,
}
