"""The evaluator: a syntax tree compiled once to Python closures over an `Activation`
(`_Compiler`), with field selection, indexing, the logical operators' error absorption, calls
(`functions.FUNCTIONS`), the macros (`all`, `exists`, `exists_one`, `map`, `filter`, their
loops in `comprehensions`, the two-variable ones of `twovar`, `optMap` and `optFlatMap`) and the
optional syntax (`optionals`),
each charging cel-go's runtime cost as it runs (`cost`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

# Modules by their full names: `from policylint.k8s.cel import ...` would name the package, whose
# __init__ imports this module (tests/rules/test_rule_inputs.py checks the import graph has no cycle).
import policylint.k8s.cel.comprehensions as comprehensions
import policylint.k8s.cel.optionals as optionals
import policylint.k8s.cel.twovar as twovar
from policylint.k8s.cel.cost import BINOP_PRICES, ITERATION, PRICES, weight
from policylint.k8s.cel.functions import FUNCTIONS
from policylint.k8s.cel.operators import _BINOPS
from policylint.k8s.cel.parser import Node
from policylint.k8s.cel.uniqueness import _uniqueness, _uniqueness_terms
from policylint.k8s.cel.values import (
    _BAD,
    _NONE,
    TYPE_DENOTATIONS,
    Activation,
    BadValue,
    CompileError,
    Duration,
    Eval,
    EvalError,
    Optional,
    TooLarge,
    Type,
    UInt,
    _first,
    _int,
    _map_get,
    _overload,
    equals,
    type_name,
)


def _select(value: Any, field: str) -> Any:
    if type(value) is dict:
        got = value.get(field, _NONE)
        if got is _NONE:
            raise EvalError(f"no such key: {field}")
        if got is _BAD:
            raise BadValue(f"the value of {field} has a type its schema rejects")
        return got
    if type(value) is Optional:
        return optionals.select(value, field)  # `optional.of(m).f` is `m.?f`
    if value is _BAD:
        raise BadValue("a value has a type its schema rejects")
    raise EvalError(f"type '{type_name(value)}' does not support field selection")


def _has(value: Any, field: str) -> bool:
    if type(value) is dict:
        return field in value
    if type(value) is Optional:
        return optionals.has(value, field)
    if value is _BAD:
        raise BadValue("a value has a type its schema rejects")
    raise EvalError(f"invalid type for field selection: {type_name(value)}")


def _index(value: Any, key: Any) -> Any:
    t = type(value)
    if t is Optional:
        return optionals.index(value, key)  # `optional.of(l)[i]` is `l[?i]`
    if t is list:
        if type(key) in (int, UInt) or (type(key) is float and key.is_integer()):
            i = int(key)
            if 0 <= i < len(value):
                got = value[i]
                if got is _BAD:
                    raise BadValue("a list item has a type its schema rejects")
                return got
            raise EvalError(f"index out of bounds: {i}")
        raise _overload("_[_]", value, key)
    if t is dict:
        got = _map_get(value, key)
        if got is _NONE:
            raise EvalError(f"no such key: {key}")
        if got is _BAD:
            raise BadValue("a map value has a type its schema rejects")
        return got
    if value is _BAD:
        raise BadValue("a value has a type its schema rejects")
    raise _overload("_[_]", value, key)


class _Compiler:
    def __init__(self, variables: frozenset[str]) -> None:
        self.scope = set(variables)

    def compile(self, node: Node) -> Eval:
        kind = node[0]
        method: Callable[[Node], Eval] = getattr(self, "c_" + kind)
        return method(node)

    def c_lit(self, node: Node) -> Eval:
        value = node[1]
        return lambda a: value

    def c_ident(self, node: Node) -> Eval:
        name = node[1]
        if name not in self.scope:
            if name in TYPE_DENOTATIONS:  # `int`, `list`: a type value, where no variable has the name
                denoted = Type(name)
                return lambda a: denoted
            raise CompileError(f"undeclared reference to '{name}'")

        def ident(a: Activation) -> Any:
            value = a.vars[name]
            if value is _BAD:
                raise BadValue("the value has a type its schema rejects")
            return value

        return ident

    def c_select(self, node: Node) -> Eval:
        qualified = _qualified(node)
        if qualified is not None and qualified.split(".")[0] not in self.scope:
            if qualified in TYPE_DENOTATIONS:  # google.protobuf.Duration
                denoted = Type(qualified)
                return lambda a: denoted
            raise CompileError(f"undeclared reference to '{qualified}'")
        operand, field = self.compile(node[1]), node[2]
        if node[1][0] == "ident":
            name = node[1][1]

            def select_name(a: Activation) -> Any:  # `self.x`, `l.x`: the common case, one call
                value = a.vars[name]
                if type(value) is dict:
                    got = value.get(field, _NONE)
                    if got is not _NONE and got is not _BAD:
                        return got
                return _select(operand(a), field)

            return select_name

        def select(a: Activation) -> Any:
            value = operand(a)
            if type(value) is dict:
                got = value.get(field, _NONE)
                if got is not _NONE and got is not _BAD:
                    return got
            return _select(value, field)  # the error, or a map's BAD value

        return select

    def c_has(self, node: Node) -> Eval:
        operand, field = self.compile(node[1]), node[2]
        if node[1][0] == "ident":
            name = node[1][1]

            def has_name(a: Activation) -> bool:
                value = a.vars[name]
                if type(value) is dict:
                    return field in value
                return _has(operand(a), field)

            return has_name

        def has(a: Activation) -> bool:
            value = operand(a)
            if type(value) is dict:
                return field in value
            return _has(value, field)

        return has

    def c_index(self, node: Node) -> Eval:
        operand, key = self.compile(node[1]), self.compile(node[2])
        return lambda a: _index(operand(a), key(a))

    def c_list(self, node: Node) -> Eval:
        items = [self.compile(n) for n in node[1]]
        return lambda a: [f(a) for f in items]

    def c_optlist(self, node: Node) -> Eval:
        items = [(self.compile(n), i in node[2]) for i, n in enumerate(node[1])]

        def build(a: Activation) -> list[Any]:
            out = []
            for f, optional in items:
                v = f(a)
                if optional:
                    v = optionals.entry(v)
                    if v is _NONE:
                        continue
                out.append(v)
            return out

        return build

    def c_optselect(self, node: Node) -> Eval:
        operand, field = self.compile(node[1]), node[2]
        return lambda a: optionals.select(operand(a), field)

    def c_optindex(self, node: Node) -> Eval:
        operand, key = self.compile(node[1]), self.compile(node[2])
        return lambda a: optionals.index(operand(a), key(a))

    def c_map(self, node: Node) -> Eval:
        return self._map(node, ())

    def c_optmaplit(self, node: Node) -> Eval:
        return self._map(node, node[2])

    def _map(self, node: Node, optional: tuple[int, ...]) -> Eval:
        pairs = [(self.compile(k), self.compile(v), i in optional) for i, (k, v) in enumerate(node[1])]

        def build(a: Activation) -> dict[Any, Any]:
            out: dict[Any, Any] = {}
            for kf, vf, is_optional in pairs:
                key = kf(a)
                if type(key) not in (str, int, UInt, bool):
                    raise EvalError(f"unsupported key type: {type_name(key)}")
                if _map_get(out, key) is not _NONE:
                    raise EvalError(f"Failed with repeated key: {key}")
                if key in out:
                    # true and 1 (false and 0): two keys of a CEL map, one of a Python dict;
                    # rather than lose an entry, the verdict is left undecided
                    raise TooLarge(
                        "a map with both a bool and a number as keys (true and 1, false and 0), which policylint cannot hold apart"
                    )
                v = vf(a)
                if is_optional:
                    v = optionals.entry(v)
                    if v is _NONE:
                        continue
                out[key] = v
            return out

        return build

    def c_cond(self, node: Node) -> Eval:
        cond, yes, no = (self.compile(n) for n in node[1:])

        def conditional(a: Activation) -> Any:
            c = cond(a)
            if c is True:
                return yes(a)
            if c is False:
                return no(a)
            raise _overload("_?_:_", c)

        return conditional

    def c_and(self, node: Node) -> Eval:
        return self._logical(node, False, "_&&_")

    def c_or(self, node: Node) -> Eval:
        return self._logical(node, True, "_||_")

    def _logical(self, node: Node, absorbing: bool, name: str) -> Eval:
        """`&&` (absorbing false) and `||` (absorbing true): one side's absorbing value decides,
        whatever the other side is, an error included; CEL's logical operators are commutative
        over errors (false && error is false)."""
        left, right = self.compile(node[1]), self.compile(node[2])
        identity = not absorbing
        decided: bool = absorbing  # what an absorbing side returns (compared as `absorbing`)

        def logical(a: Activation) -> bool:
            try:
                x = left(a)
            except EvalError as exc:
                try:
                    y = right(a)
                except EvalError as other:
                    raise _first(exc, other) from None
                if y is absorbing:
                    return decided
                raise exc if type(y) is bool else _overload(name, y) from None
            if x is absorbing:
                return decided
            if x is not identity:
                y = right(a)
                if y is absorbing:
                    return decided
                raise _overload(name, x, y)
            y = right(a)
            if type(y) is not bool:
                raise _overload(name, x, y)
            return y

        return logical

    def c_not(self, node: Node) -> Eval:
        operand = self.compile(node[1])

        def not_(a: Activation) -> bool:
            x = operand(a)
            if type(x) is not bool:
                raise _overload("!_", x)
            return not x

        return not_

    def c_neg(self, node: Node) -> Eval:
        operand = self.compile(node[1])

        def neg(a: Activation) -> Any:
            x = operand(a)
            if type(x) is int:
                return _int(-x)
            if type(x) is float:
                return -x
            if type(x) is Duration:
                return Duration(_int(-x.ns))
            raise _overload("-_", x)

        return neg

    def c_binop(self, node: Node) -> Eval:
        op, left_node, right_node = node[1], node[2], node[3]
        left, right = self.compile(left_node), self.compile(right_node)
        # The common shapes, without the general dispatch: a value compared with a string or
        # integer literal, and membership in a list of string literals.
        if op in ("==", "!=") and right_node[0] == "lit" and type(right_node[1]) in (str, int):
            literal, kind, negate = right_node[1], type(right_node[1]), op == "!="
            if kind is int:
                return lambda a: equals(left(a), literal) is not negate

            def compare_literal(a: Activation) -> bool:
                value = left(a)
                return (type(value) is kind and value == literal) is not negate

            return compare_literal
        if (
            op == "in"
            and right_node[0] == "list"
            and right_node[1]
            and all(n[0] == "lit" and type(n[1]) is str for n in right_node[1])
        ):
            members = frozenset(n[1] for n in right_node[1])

            def member(a: Activation) -> bool:
                value = left(a)
                return type(value) is str and value in members

            return member
        fn = _BINOPS[op]
        price = BINOP_PRICES.get(op)
        if price is not None:

            def priced(a: Activation) -> Any:
                x, y = left(a), right(a)
                a.cost += price(x, y) - 1  # the operator's own unit is in the fixed part
                if a.cost > a.limit:
                    raise a.over()
                return fn(x, y)

            return priced
        return lambda a: fn(left(a), right(a))

    def c_comp(self, node: Node) -> Eval:
        macro, var = node[1], node[3]
        operand = self.compile(node[2])
        if var in self.scope:
            raise CompileError(f"{macro}() macro: variable {var!r} shadows another")
        self.scope.add(var)
        try:
            bodies = [self.compile(n) for n in node[4]]
        finally:
            self.scope.discard(var)
        each = ITERATION[macro] + sum(weight(n) for n in node[4])
        loop = comprehensions.comprehension(macro, operand, var, bodies, each)
        if macro == "all":
            terms = _uniqueness_terms(node)
            if terms is not None:
                inner = node[4][0]
                return _uniqueness(operand, terms, loop, each, ITERATION["exists_one"] + weight(inner[4][0]))
        return loop

    def c_comp2(self, node: Node) -> Eval:
        macro, first, second = node[1], node[3], node[4]
        operand = self.compile(node[2])
        if first == second:
            raise CompileError(f"{macro}() macro: the two variables must differ")
        for var in (first, second):
            if var in self.scope:
                raise CompileError(f"{macro}() macro: variable {var!r} shadows another")
        self.scope.update((first, second))
        try:
            bodies = [self.compile(n) for n in node[5]]
        finally:
            self.scope.difference_update((first, second))
        each = twovar.ITERATION[macro] + len(bodies) - 1 + sum(weight(n) for n in node[5])
        return twovar.two_variable(macro, operand, first, second, bodies, each)

    def c_call(self, node: Node) -> Eval:
        name, target, arg_nodes = node[1], node[2], node[3]
        if target is not None:
            qualified = _qualified(target)
            if qualified is not None and qualified.split(".")[0] not in self.scope and f"{qualified}.{name}" in FUNCTIONS:
                # `format.dns1123Label()`, `optional.none()`: a namespaced global function.
                name, target = f"{qualified}.{name}", None
        if name in ("optMap", "optFlatMap") and target is not None and len(arg_nodes) == 2 and arg_nodes[0][0] == "ident":
            return self._optional_macro(name, self.compile(target), arg_nodes[0][1], arg_nodes[1])
        # The receiver and the arguments first: an unsupported function inside names itself.
        args = [self.compile(n) for n in arg_nodes]
        receiver = self.compile(target) if target is not None else None
        spec = FUNCTIONS.get(name)
        if spec is None:
            raise CompileError(f"undeclared reference to '{name}'", unsupported=name)
        fn, member, arities = spec
        if receiver is not None:
            if member is False:
                raise CompileError(f"{name}() is a global function, not a method", unsupported=name)
            args.insert(0, receiver)
        elif member is True:
            raise CompileError(f"{name}() is a method, not a global function", unsupported=name)
        if len(args) not in arities:
            raise CompileError(f"found no matching overload for '{name}' with {len(args)} arguments", unsupported=name)
        price = PRICES.get(name)
        if price is not None:

            def priced(a: Activation) -> Any:
                values = [f(a) for f in args]
                a.cost += price(*values) - 1  # the call's own unit is in the fixed part
                if a.cost > a.limit:
                    raise a.over()
                return fn(*values)

            return priced
        if len(args) == 0:
            return lambda a: fn()
        if len(args) == 1:
            (f0,) = args
            return lambda a: fn(f0(a))
        if len(args) == 2:
            f0, f1 = args
            return lambda a: fn(f0(a), f1(a))
        return lambda a: fn(*(f(a) for f in args))

    def _optional_macro(self, macro: str, operand: Eval, var: str, body_node: Node) -> Eval:
        """`o.optMap(x, body)`: none stays none, else `optional.of(body)` with `x` the value;
        `o.optFlatMap(x, body)`: the same with `body` an optional itself (cel-go's macros).
        Kept a call node in the syntax tree, so that the cost estimate reads it as before."""
        if var in self.scope:
            raise CompileError(f"{macro}() macro: variable {var!r} shadows another")
        self.scope.add(var)
        try:
            body = self.compile(body_node)
        finally:
            self.scope.discard(var)

        def run(a: Activation) -> Any:
            o = operand(a)
            if type(o) is not Optional:
                raise _overload(macro, o)
            if o.value is _NONE:
                return o
            saved = a.vars.get(var, _NONE)
            a.vars[var] = o.value
            try:
                result = body(a)
            finally:
                comprehensions.restore(a.vars, var, saved)
            if macro == "optMap":
                return Optional(result)
            if type(result) is not Optional:
                raise _overload(macro, o, result)
            return result

        return run


def _qualified(node: Node) -> str | None:
    """`a.b.c` for a chain of field selections on a name, else None."""
    parts: list[str] = []
    while node[0] == "select":
        parts.append(node[2])
        node = node[1]
    if node[0] != "ident":
        return None
    parts.append(node[1])
    return ".".join(reversed(parts))
