"""Two-variable comprehensions (cel-go's ext.TwoVarComprehensions): `all(k, v, p)`, `exists(k, v, p)`, `existsOne(k, v, p)`,
`transformList(k, v, [filter,] e)`, `transformMap(k, v, [filter,] e)` and
`transformMapEntry(k, v, [filter,] e)`, over a list (index and item) or a map (key and value).
"""

from __future__ import annotations

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


def _pairs(value: Any, macro: str) -> list[tuple[Any, Any]]:
    if type(value) is list:
        return list(enumerate(value))
    if type(value) is dict:
        return list(value.items())
    if value is _BAD:
        raise BadValue("a value has a type its schema rejects")
    raise EvalError(f"{macro}() macro: expression does not evaluate to a list or a map: {type_name(value)}")


def two_variable(macro: str, operand: Eval, first: str, second: str, bodies: list[Eval], each: int) -> Eval:
    """The macro's loop, each iteration charged `each` before it runs, as `_comprehension`'s."""

    def loop(a: Activation) -> Any:
        pairs = _pairs(operand(a), macro)
        saved = (a.vars.get(first, _NONE), a.vars.get(second, _NONE))
        try:
            return run(a, pairs)
        finally:
            for name, old in zip((first, second), saved, strict=True):
                if old is _NONE:
                    a.vars.pop(name, None)
                else:
                    a.vars[name] = old

    def step(a: Activation, k: Any, v: Any) -> None:
        a.cost += each
        if a.cost > a.limit:
            raise a.over()
        a.vars[first] = k
        a.vars[second] = v
        if v is _BAD:
            raise BadValue("an item has a type its schema rejects")

    body = bodies[-1]
    keep = bodies[0] if len(bodies) == 2 else None

    if macro in ("all", "exists"):
        stop = macro == "exists"

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
                    error = error or _overload("_&&_" if not stop else "_||_", x)
            if error is not None:
                raise error
            return not stop

    elif macro in ("existsOne", "exists_one"):

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

    else:

        def run(a: Activation, pairs: list[tuple[Any, Any]]) -> Any:
            items: list[Any] = []
            entries: dict[Any, Any] = {}
            for k, v in pairs:
                step(a, k, v)
                if keep is not None:
                    x = keep(a)
                    if x is False:
                        continue
                    if x is not True:
                        raise _overload(macro, x)
                got = body(a)
                if macro == "transformList":
                    items.append(got)
                elif macro == "transformMap":
                    entries[k] = got
                else:  # transformMapEntry: each step yields a map of one entry
                    if type(got) is not dict or len(got) != 1:
                        raise EvalError(
                            f"transformMapEntry() macro: the expression must yield a map of one entry, not {type_name(got)}"
                        )
                    ((key, value),) = got.items()
                    if key in entries:
                        raise EvalError(f"insert failed: key {key} already exists")
                    entries[key] = value
            return items if macro == "transformList" else entries

    return loop
