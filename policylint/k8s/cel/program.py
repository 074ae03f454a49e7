"""A rule compiled once and run: `compile_rule` (cached by text; transition rules and what this
package does not support are marked `skip`), `evaluate_within` under a cost limit, the message the
API server gives when a validation fails (`message_of`), and the memo keys that let inputs equal
for a rule share its verdict (`result_key`, `shape`, `node_rules`).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping
from typing import Any

from policylint.k8s.cel.convert import _info
from policylint.k8s.cel.cost import PER_CALL_LIMIT, weight
from policylint.k8s.cel.evaluator import _Compiler
from policylint.k8s.cel.keycode import written_projector
from policylint.k8s.cel.parser import Node, parse
from policylint.k8s.cel.patterns import equality_literals
from policylint.k8s.cel.projection import NO_KEY, Need, Projector, merged, need_of, project, projector, reads_schema
from policylint.k8s.cel.values import _NONE, Activation, CompileError, CostExceeded, Eval, EvalError, TooLarge, type_name
from policylint.k8s.shapes import SharedShapes


class Compiled:
    """A rule compiled once: `evaluate(value)` -> True, False, or raises EvalError. `skip` says
    why it is never evaluated (a transition rule, an unsupported function, a compile error)."""

    __slots__ = ("base", "error", "key_fields", "literals", "need", "program", "schema_keyed", "self_fields", "skip", "text")

    def __init__(
        self,
        text: str,
        program: Eval | None,
        skip: str | None,
        error: str | None,
        self_fields: frozenset[str] | None = None,
    ) -> None:
        self.text = text
        self.program = program
        self.skip = skip  # None: evaluated; "transition", "unsupported", "compile"
        self.error = error  # what is unsupported, or the compile error
        # The fields of `self` the rule reads (`self.a`, `has(self.b)`); None when it reads
        # `self` as a whole (`self.all(...)`, `size(self)`).
        self.self_fields = self_fields
        # What the result depends on, for caching it (`result_key`): each field the rule reads
        # with whether it only tests its presence (`has(self.f)` and nothing else); None when
        # the rule reads `self` whole.
        self.key_fields: tuple[tuple[str, bool], ...] | None = None
        # What it reads of `self`, to the items and fields below (`projection.need_of`): its result
        # is kept by that part of a value (`result_key`); None when it reads `self` whole.
        self.need: Need | None = None
        # The numbers of the string literals of a rule that only compares what it reads for
        # equality (`patterns.equality_literals`): its result is kept by the strings' equality
        # pattern; None for other rules.
        self.literals: dict[str, int] | None = None
        # Whether its key reads the schema node: an equality pattern, a field read by its escape, a map's size.
        self.schema_keyed = False
        self.base = 0  # the fixed part of its cost (`weight`)

    def evaluate(self, value: Any, limit: int = PER_CALL_LIMIT) -> Any:
        return self.run(value, limit)[0]

    def run(self, value: Any, limit: int = PER_CALL_LIMIT) -> tuple[Any, int]:
        """The result and the cost it took; raises EvalError (CostExceeded past `limit`)."""
        assert self.program is not None
        a = Activation({"self": value}, limit)
        a.cost = self.base
        try:
            if a.cost > a.limit:
                raise a.over()
            return self.program(a), a.cost
        except EvalError as exc:
            exc.cost = min(a.cost, a.limit + 1)
            raise
        except RecursionError:
            error = TooLarge("the rule nests too deeply to evaluate")
            error.cost = min(a.cost, a.limit + 1)
            raise error from None


def _mentions(node: Any, name: str) -> bool:
    if type(node) is tuple:
        if node[:2] == ("ident", name):
            return True
        return any(_mentions(child, name) for child in node[1:])
    if type(node) is list:
        return any(_mentions(child, name) for child in node)
    return False


@functools.lru_cache(maxsize=4096)
def compile_rule(text: str) -> Compiled:
    """Compile a rule once (cached by its text)."""
    try:
        tree = parse(text)
    except CompileError as exc:
        kind = "unsupported" if exc.unsupported else "compile"
        return Compiled(text, None, kind, exc.unsupported or exc.message)
    except RecursionError:
        return Compiled(text, None, "compile", "expression too deeply nested")
    # An identifier is a word of the text: a rule whose text has no `oldSelf` names none, and its
    # tree is not walked for it (a tenth of compiling a run's rules, every rule of every schema).
    if "oldSelf" in text and _mentions(tree, "oldSelf"):
        return Compiled(text, None, "transition", "oldSelf")
    try:
        program = _Compiler(frozenset({"self"})).compile(tree)
    except CompileError as exc:
        kind = "unsupported" if exc.unsupported else "compile"
        return Compiled(text, None, kind, exc.unsupported or exc.message)
    except RecursionError:
        return Compiled(text, None, "compile", "expression too deeply nested")
    fields, tested = _self_fields(tree)
    compiled = Compiled(text, program, None, None, fields)
    compiled.base = weight(tree)
    compiled.need = need_of(tree)
    if compiled.need is not None:
        literals = equality_literals(tree)
        if literals is not None:
            compiled.literals = {text: i for i, text in enumerate(literals)}
        compiled.schema_keyed = literals is not None or reads_schema(compiled.need)
    if fields is not None:
        compiled.key_fields = tuple((f, f in tested) for f in sorted(fields))
    return compiled


_SCALARS = (str, int, float, bool)
_PROJECTED: Any = object()  # the first part of a key made by `project`: never equal to the others


def result_key(
    compiled: Compiled, value: Any, shapes: dict[int, Any] | None = None, node: Mapping[str, Any] | None = None
) -> tuple[Any, ...] | None:
    """A key that determines the rule's result on `value` (a YAML value, before conversion, under
    one schema node), or None when it cannot be had: the values of the fields the rule reads
    (scalars with their types: `1`, `1.0` and `true` differ; maps and lists by their `shape`,
    when `shapes` is given, one per object), the presence of those it only tests; the whole
    value's shape when the rule reads `self` whole. The schema node decides the rest (defaults,
    types), so a cache keyed by the node and this key returns what evaluating again would.
    With `shapes`, a rule that reads parts of `self` (the items' names of a list, the size of a
    field) is keyed by those parts alone (`projection.project`); with the schema `node` besides,
    a rule that only compares the strings it reads for equality is keyed by their equality
    pattern (`patterns`), and fields read by their escape (`__namespace__`) by their YAML key."""
    need = compiled.need
    if need is not None and shapes is not None:
        info = _info(node) if node is not None and compiled.schema_keyed else None
        literals = compiled.literals
        strings = dict(literals) if literals is not None and info is not None else None
        got = project(value, need, shapes, shape, strings, info)
        return None if got is NO_KEY else (_PROJECTED, got)
    fields = compiled.key_fields
    if fields is None:
        t = type(value)
        if t in _SCALARS:
            return (t, value)
        if shapes is None:
            return None
        whole = shape(value, shapes)
        return None if whole is None else (whole,)
    if type(value) is not dict:
        return None
    key: list[Any] = []
    for name, presence in fields:
        got = value.get(name)
        if presence:
            key.append(got is not None)
        elif got is None or type(got) in _SCALARS:
            key.append((type(got), got))
        elif shapes is not None:
            part = shape(got, shapes)
            if part is None:
                return None
            key.append(part)
        else:
            return None
    return tuple(key)


_TOGETHER: Any = object()  # the first part of a key made by `rules_key`


def rules_key(
    rules: tuple[tuple[Mapping[str, Any], Compiled], ...], value: Any, shapes: dict[int, Any], node: Mapping[str, Any]
) -> Any:
    """A key that determines the result of every rule of a schema node on `value` (a YAML value
    under `node`), or None where it cannot be had or would tell no more than the value's shape:
    the part of the value that the rules read together (`projection.merged`), by its equality
    pattern where every rule only compares what it reads for equality (the literals of all of
    them numbered first). Two values with one key have the same key under each rule
    (`result_key`), so the rules' outcomes on one stand for the other: a route's rule that differs
    from the others only in its backends' names is one key for the rules that read its filters."""
    # The node's plan looked up here, `_together` called only for its first value.
    got = _TOGETHERS.get(id(node))
    plan = got[1] if got is not None and got[0] is node else _together(node, rules)
    if plan is None:
        return None
    keyed, literals = plan
    got = keyed(value, shapes, None if literals is None else dict(literals))
    return None if got is NO_KEY else (_TOGETHER, got)


# id of a schema node -> (the node, held so that its id stays its own; `project` of what its rules
# read together, with the node's conversion info, made once per node: `projection.projector`; and
# their literals' numbers when every rule only compares for equality), or (the node, None): no key
# (`rules_key`). A dict by id, looked up without a call: every new value under the node asks.
_TOGETHERS: dict[int, tuple[Mapping[str, Any], tuple[Projector, dict[str, int] | None] | None]] = {}


def _together(
    node: Mapping[str, Any], rules: tuple[tuple[Mapping[str, Any], Compiled], ...]
) -> tuple[Projector, dict[str, int] | None] | None:
    got = _TOGETHERS.get(id(node))
    if got is not None and got[0] is node:
        return got[1]
    plan: tuple[Projector, dict[str, int] | None] | None = None
    read = read_together(rules)
    if read is not None:
        need, literals = read
        # A bundled schema's node has its projector written out as code ahead of the run
        # (policylint.k8s.cel.keycode), where it was written for this need; any other node's is
        # made here.
        keyed = written_projector(node, need, literals is not None)
        if keyed is None:
            keyed = projector(need, shape, literals is not None, _info(node))
        plan = (keyed, literals)
    if len(_TOGETHERS) > 100_000:
        _TOGETHERS.clear()  # CRDs read from many inputs in one process (tests): bounded
    _TOGETHERS[id(node)] = (node, plan)
    return plan


def read_together(rules: tuple[tuple[Mapping[str, Any], Compiled], ...]) -> tuple[Need, dict[str, int] | None] | None:
    """What a node's rules read together (`projection.merged`), and their literals' numbers when
    every rule only compares for equality; None where the rules have no key together (one rule's
    own key is the same part; a rule that reads `self` whole leaves only the shape)."""
    needs = [compiled.need for _, compiled in rules if compiled.need is not None]
    if not (len(needs) == len(rules) > 1):
        return None
    literals: dict[str, int] | None = {}
    for _, compiled in rules:
        if compiled.literals is None or literals is None:
            literals = None
            continue
        for text in compiled.literals:
            literals.setdefault(text, len(literals))
    return merged(needs), literals


# Shapes of YAML maps and lists (`shape`): the same object for the same content, in the same
# order, with the same scalar types. Never reused for another content (the table is bounded by
# emptying it, which only costs cache misses).
_SHAPES: dict[tuple[Any, ...], object] = {}


def shape(value: Any, shapes: dict[int, Any]) -> Any:
    """A hashable stand-in for a YAML value, equal for two values exactly when they hold the same
    keys, items and scalars (of the same types) in the same order: a map or a list gets an
    object of its own (`shapes`, id of a map or list -> its shape, is a memo whose maps and lists
    its owner keeps alive: one object's, or the run's, `Catalogue.shapes`),
    a string is itself, another scalar `(type, value)`; None for a value that has no such
    stand-in (a key that is not a string, a scalar of another type). In the run's memo
    (`SharedShapes`, over documents whose maps and lists are one object per content) a map or list
    is its own stand-in, a token of the object: equal for the same object only, which there is
    the same content."""
    t = type(value)
    if t is str:
        return value
    if t is not dict and t is not list:
        return _scalar_shape(value)
    got = shapes.get(id(value), _NONE)
    if got is not _NONE:
        return got
    if type(shapes) is SharedShapes:
        # The run's documents hold one map or list per content: the object names it.
        got = shapes[id(value)] = object()
        return got
    parts = _map_parts(value, shapes) if t is dict else _list_parts(value, shapes)
    if parts is None:
        shapes[id(value)] = None
        return None
    whole = tuple(parts)
    got = _SHAPES.get(whole)
    if got is None:
        if len(_SHAPES) > 100_000:
            _SHAPES.clear()
        got = _SHAPES[whole] = object()
    shapes[id(value)] = got
    return got


# Two functions with the same loop body on purpose: one loop over both (keys checked per item, or
# the keys checked apart and zipped back) made the admission of 10k objects 9-15% slower.


def _map_parts(value: dict[Any, Any], shapes: dict[int, Any]) -> list[Any] | None:
    """What a map's shape is made of (`shape`): its type, then each key and its value's shape;
    None when a key is not a string or a value has no shape."""
    parts: list[Any] = [dict]
    append = parts.append
    for k, v in value.items():
        tv = type(v)
        if tv is str:
            inner = v
        elif tv is dict or tv is list:
            inner = shape(v, shapes)
        elif tv is int or tv is bool or v is None:
            inner = (tv, v)
        else:
            inner = _scalar_shape(v)
        if inner is None or type(k) is not str:
            return None
        append(k)
        append(inner)
    return parts


def _list_parts(value: list[Any], shapes: dict[int, Any]) -> list[Any] | None:
    """What a list's shape is made of (`shape`): its type, then each item's shape; None when an
    item has no shape."""
    parts: list[Any] = [list]
    append = parts.append
    for v in value:
        tv = type(v)
        if tv is str:
            inner = v
        elif tv is dict or tv is list:
            inner = shape(v, shapes)
        elif tv is int or tv is bool or v is None:
            inner = (tv, v)
        else:
            inner = _scalar_shape(v)
        if inner is None:
            return None
        append(inner)
    return parts


def _scalar_shape(value: Any) -> Any:
    t = type(value)
    if t is int or t is bool or value is None or t is str:
        return (t, value)
    if t is float:
        return (t, value, math.copysign(1.0, value))  # 0.0 and -0.0 are equal floats
    return None


_VALIDATIONS = "x-kubernetes-validations"
# id of a schema node -> (the node, held so that its id stays its own; its rules): a dict by id,
# looked up without a call, as every value with rules of its own asks.
_NODE_RULES: dict[int, tuple[Mapping[str, Any], tuple[tuple[Mapping[str, Any], Compiled], ...]]] = {}


def node_rules(node: Mapping[str, Any]) -> tuple[tuple[Mapping[str, Any], Compiled], ...]:
    """The `x-kubernetes-validations` of a schema node that are evaluated, compiled, in order:
    (the validation, its compiled rule). Worked out once per node (by its identity)."""
    got = _NODE_RULES.get(id(node))
    if got is not None and got[0] is node:
        return got[1]
    found = []
    for validation in node.get(_VALIDATIONS) or ():
        rule = validation.get("rule") if isinstance(validation, Mapping) else None
        if isinstance(rule, str):
            compiled = compile_rule(rule)
            if compiled.program is not None:
                found.append((validation, compiled))
    if len(_NODE_RULES) > 100_000:
        _NODE_RULES.clear()  # CRDs read from many inputs in one process (tests): bounded
    rules = tuple(found)
    _NODE_RULES[id(node)] = (node, rules)
    return rules


def _visit_self(node: Any, fields: set[str], selected: set[str]) -> bool:
    """Collect the fields of `self` read under `node`; True when it reads `self` whole. A module
    function, not a closure: a closure that calls itself is a reference cycle, which the command
    (it runs with the cyclic collector off) would keep until exit."""
    if type(node) is list:
        return _visit_all(node, fields, selected)
    if type(node) is not tuple or not node or type(node[0]) is not str:
        return False
    if node[0] in ("select", "has") and node[1] == ("ident", "self"):
        fields.add(node[2])
        if node[0] == "select":
            selected.add(node[2])
        return False
    if node == ("ident", "self"):
        return True
    return _visit_all(node[1:], fields, selected)


def _visit_all(nodes: Any, fields: set[str], selected: set[str]) -> bool:
    whole = False
    for child in nodes:  # every child, also after one reads `self` whole: all fields are collected
        whole = _visit_self(child, fields, selected) or whole
    return whole


def _self_fields(tree: Node) -> tuple[frozenset[str] | None, frozenset[str]]:
    """(the fields of `self` the rule reads, None when it reads `self` whole; those it reads only
    through `has()`)."""
    fields: set[str] = set()
    selected: set[str] = set()
    whole = _visit_self(tree, fields, selected)
    if whole or any(not f.isidentifier() or "__" in f for f in fields):
        return None, frozenset()  # escaped names (`__namespace__`): read the converted value
    return frozenset(fields), frozenset(fields - selected)


def evaluate(rule: Compiled, value: Any) -> tuple[bool, EvalError | None]:
    """(passed, the error that failed it if any). BadValue and CostExceeded come back as the error."""
    passed, error, _ = evaluate_within(rule, value, PER_CALL_LIMIT)
    return passed, error


def evaluate_within(rule: Compiled, value: Any, limit: int) -> tuple[bool, EvalError | None, int]:
    """`evaluate` with a cost limit (at most `PER_CALL_LIMIT`), and the cost it took (past the
    limit when it raised CostExceeded; a failed evaluation costs what it ran, as in cel-go)."""
    try:
        result, cost = rule.run(value, limit)
    except EvalError as exc:
        return False, exc, exc.cost
    if result is True:
        return True, None, cost
    if result is False:
        return False, None, cost
    return False, EvalError(f"the rule evaluated to {type_name(result)}, not a bool"), cost


def message_of(validation: Mapping[str, Any], value: Any, limit: int = PER_CALL_LIMIT) -> tuple[str, int, str | None]:
    """What the API server says when a validation fails: its messageExpression's string, else
    its message, else `failed rule: <rule>` (k8s.io/apiextensions-apiserver pkg/apiserver/schema/cel
    validation.go); with the cost of the messageExpression, and the API server's error when it
    ran past `limit` (which stops the object's validation there)."""
    expression = validation.get("messageExpression")
    cost = 0
    if isinstance(expression, str):
        compiled = compile_rule(expression)
        if compiled.program is not None:
            try:
                result, cost = compiled.run(value, limit)
            except CostExceeded as exc:
                if exc.per_call:
                    return (
                        "",
                        limit + 1,
                        (
                            f"no further validation rules will be run due to call cost exceeds limit for messageExpression: {expression!r}"
                        ),
                    )
                return (
                    "",
                    limit + 1,
                    (
                        "messageExpression evaluation failed due to running out of cost budget, no further validation rules will be run"
                    ),
                )
            except EvalError as exc:
                result, cost = None, exc.cost
            if type(result) is str and result.strip() and "\n" not in result and len(result) <= 5000:
                return result, cost, None
    message = validation.get("message")
    if isinstance(message, str) and message.strip():
        return message, cost, None
    return f"failed rule: {validation.get('rule')}", cost, None
