"""The one-variable comprehensions' loops (`all`, `exists`, `exists_one`, `filter`, `map`), one
per macro, and what the two-variable ones (`twovar`) share with them: a macro's variables bound
for its loop and restored after, and the error of a range that is not a list or a map.

Each iteration costs `each` (cel-go's fold: the loop condition and step and the body's nodes,
`cost.ITERATION` and `cost.weight`), charged before the iteration runs.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

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

# A macro's loop over its range's items, given the activation with the variables saved.
Run = Callable[[Activation, Any], Any]


def restore(variables: dict[str, Any], name: str, saved: Any) -> None:
    """Put back what a macro's variable hid (`saved`, _NONE when it hid nothing)."""
    if saved is _NONE:
        variables.pop(name, None)
    else:
        variables[name] = saved


def not_a_range(value: Any, macro: str) -> EvalError:
    """The error of a macro over a value that is not a list or a map."""
    if value is _BAD:
        return BadValue("a value has a type its schema rejects")
    return EvalError(f"{macro}() macro: expression does not evaluate to a list or a map: {type_name(value)}")


def _items(value: Any, macro: str) -> list[Any]:
    if type(value) is list:
        return value
    if type(value) is dict:
        return list(value)  # a map's comprehension ranges over its keys
    raise not_a_range(value, macro)


def comprehension(macro: str, operand: Eval, var: str, bodies: list[Eval], each: int) -> Eval:
    """A one-variable macro's loop, with `var` bound to each item in turn."""
    run = _RUNS[macro](macro, var, bodies, each)

    def loop(a: Activation) -> Any:
        items = _items(operand(a), macro)
        saved = a.vars.get(var, _NONE)
        try:
            return run(a, items)
        finally:
            restore(a.vars, var, saved)

    return loop


def _quantifier(macro: str, var: str, bodies: list[Eval], each: int) -> Run:
    """`all` and `exists`: the first item that decides answers, and an item's error is absorbed
    if another decides (cel-go's logical operators)."""
    body = bodies[0]
    stop = macro == "exists"  # the value that decides: all() stops at false, exists() at true
    operator = "_||_" if stop else "_&&_"

    def run(a: Activation, items: list[Any]) -> Any:
        variables = a.vars
        error: EvalError | None = None
        for item in items:
            a.cost += each
            if a.cost > a.limit:
                raise a.over()
            variables[var] = item
            try:
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


def _exists_one(macro: str, var: str, bodies: list[Eval], each: int) -> Run:
    body = bodies[0]

    def run(a: Activation, items: list[Any]) -> Any:
        variables = a.vars
        count = 0
        for item in items:
            a.cost += each
            if a.cost > a.limit:
                raise a.over()
            variables[var] = item
            x = body(a)
            if x is True:
                count += 1
            elif x is not False:
                raise _overload("exists_one", x)
        return count == 1

    return run


def _filter(macro: str, var: str, bodies: list[Eval], each: int) -> Run:
    body = bodies[0]

    def run(a: Activation, items: list[Any]) -> Any:
        variables = a.vars
        out = []
        for item in items:
            a.cost += each
            if a.cost > a.limit:
                raise a.over()
            variables[var] = item
            x = body(a)
            if x is True:
                out.append(item)
            elif x is not False:
                raise _overload("filter", x)
        return out

    return run


def _map(macro: str, var: str, bodies: list[Eval], each: int) -> Run:
    """`map(x, e)` and `map(x, filter, e)`."""
    transform = bodies[-1]
    keep = bodies[0] if len(bodies) == 2 else None

    def run(a: Activation, items: list[Any]) -> Any:
        variables = a.vars
        out = []
        for item in items:
            a.cost += each
            if a.cost > a.limit:
                raise a.over()
            variables[var] = item
            if keep is not None:
                x = keep(a)
                if x is False:
                    continue
                if x is not True:
                    raise _overload("map", x)
            out.append(transform(a))
        return out

    return run


_RUNS: dict[str, Callable[[str, str, list[Eval], int], Run]] = {
    "all": _quantifier,
    "exists": _quantifier,
    "exists_one": _exists_one,
    "filter": _filter,
    "map": _map,
}
