"""The structural schema's verdict on an object, as the API server validates it: types, enums,
bounds, patterns, formats, required fields, list types and the combinators (`violations`)."""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from typing import Any

from policylint.input.positions import format_path
from policylint.k8s.listchecks import LIST_TYPE, duplicates
from policylint.k8s.schemacode import NOTHING as _NOTHING
from policylint.k8s.schemacode import UNSHAPED as _UNSHAPED
from policylint.k8s.schemacode import descend, interpreted, root_function
from policylint.k8s.schemas import COMBINED
from policylint.k8s.shapes import SharedShapes
from policylint.k8s.verdicts import EMBEDDED, PRESERVE, TOP_LEVEL_SKIPPED, root_node, template

_END: Any = object()  # on the walk's stack: the subtree above is done
# A schema node the walk does not enter: a stand-in for a node whose checks were made already
# (policylint.k8s.differences walks only where two schemas differ). Its parent still reads it.
CHECKED = "x-policylint-checked"

# (path, what is wrong, the API server's field error type)
_Violation = tuple[tuple[str | int, ...], str, str]
Pruned = tuple[tuple[str | int, ...], str, list[str]]
_TYPE = "FieldValueTypeInvalid"
_INVALID = "FieldValueInvalid"
_TOO_MANY = {"maxLength": "FieldValueTooLong", "maxItems": "FieldValueTooMany", "maxProperties": "FieldValueTooMany"}

_TYPES: Mapping[str, tuple[type, ...]] = {
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
    "object": (dict,),
    "array": (list,),
}


def _kind_of(value: Any) -> str:
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int):
        return "an integer"
    if isinstance(value, float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, dict):
        return "a map"
    if isinstance(value, list):
        return "a list"
    return type(value).__name__


def violations(
    data: Mapping[str, Any],
    schema: Mapping[str, Any],
    seen: dict[tuple[int, Any], tuple[tuple[_Violation, ...], tuple[Pruned, ...]]] | None = None,
    shapes: dict[int, Any] | None = None,
    pruned: list[Pruned] | None = None,
) -> list[_Violation]:
    """(path, what is wrong) for every value the schema rejects: type, enum, string length,
    pattern and format, numeric bounds, item and property counts, and missing required fields.
    Patterns are matched with RE2, the engine of the API server's Go regexp, in linear time; a
    pattern RE2 does not compile, and a format Kubernetes does not validate, check nothing
    (policylint.k8s.strformats).

    `seen` ((id(schema node), the value's `cel.shape`) -> what is wrong under it, paths relative
    to it) lets a map or list whose content was checked under the same schema node before take
    that answer (repositories repeat their routes' rules, matches and filters); `shapes` is a memo
    of `cel.shape` whose maps and lists stay alive while it is used (the object's, or the run's:
    `Catalogue.shapes`). `pruned` receives the fields the schema does not define (see
    `Admission.pruned`), found by the same walk."""
    root = {k: v for k, v in data.items() if k not in TOP_LEVEL_SKIPPED}
    out: list[_Violation] = []
    unknown: list[Pruned] = pruned if pruned is not None else []
    budget = _Budget(root)
    walk = _Walk(out, unknown, seen, {} if shapes is None else shapes, budget)
    code = root_function(schema, code_helpers)
    if code is None:
        walk.run(root, root_node(schema), ())
    elif not (len(root) == 1 and template(root)):
        # A bundled schema: its checks written out as code (policylint.k8s.schemacode), the
        # walk's visits without reading the nodes' keywords per value.
        code(root, None, (), walk)
    return out


@functools.cache
def _string_checks() -> tuple[Callable[[str, str], bool | None], Callable[[str, str], bool | None]]:
    """`strformats.format_ok` and `matches`, imported once, on the first string checked (RE2 and
    the formats' modules are not imported by a run that checks none): most of the values a walk
    checks are strings, and an import statement per string cost more than its check."""
    from policylint.k8s.strformats import format_ok, matches

    return format_ok, matches


@functools.cache
def code_helpers() -> dict[str, Any]:
    """What the generated checks (policylint.k8s.schemachecks) call of the walk, by the names they
    call it by: a module's `bind` sets them, where an import statement per helper module in each
    generated module cost more than one `dict.update` (docs/performance.md, "Validation's own
    time: the generated checks' modules bound by one update"). Made here, the first time a module
    is bound, and handed to policylint.k8s.schemacode, which this module imports."""
    format_ok, matches = _string_checks()
    return {
        "_descend": descend,
        "_interp": interpreted,
        "_duplicates": duplicates,
        "_FIELDS": FIELDS,
        "_ITEMS": ITEMS,
        "_bound": bound,
        "_string": check_string,
        "_null_items": null_items,
        "_format_ok": format_ok,
        "_matches": matches,
        "_NQ": NOT_QUICK,
        "_passes": passes,
        "_string_checks_of": string_checks_of,
    }


@functools.cache
def _shape_function() -> Callable[[Any, dict[int, Any]], Any]:
    """`cel.shape`, imported once, on the first walk: a run whose verdicts are all kept between
    runs never imports the CEL evaluator, and a walk per object no longer imports it again."""
    from policylint.k8s.cel import shape

    return shape


def violations_below(value: Any, node: Mapping[str, Any]) -> list[_Violation]:
    """What a schema node refuses in a value below an object's root, paths relative to it, with no
    memo (policylint.k8s.differences checks single nodes whose children are `CHECKED`)."""
    out: list[_Violation] = []
    _Walk(out, [], None, {}, _Budget(value)).run(value, node, ())
    return out


class _Budget:
    """What the schemas' allOf, anyOf, oneOf and not may still visit in one object. Each
    alternative walks the value again and alternatives nest, so a CRD could ask for exponential
    work: the alternatives of an object visit at most a few times its own values (worked out on
    the first alternative, so objects without any pay nothing), and nest at most `DEPTH` deep.
    Past either, an alternative counts as matched: no finding rests on a check not made."""

    BASE = 1_000
    PER_VALUE = 16
    DEPTH = 16
    __slots__ = ("depth", "left", "root", "started")

    def __init__(self, root: Any) -> None:
        self.root = root
        self.started = False
        self.left = 0
        self.depth = 0

    def start(self) -> None:
        if not self.started:
            self.started = True
            self.left = self.BASE + self.PER_VALUE * _count_values(self.root)
            self.root = None

    @property
    def exhausted(self) -> bool:
        return self.left < 0


def _count_values(root: Any, most: int = 10_000_000) -> int:
    count, stack = 0, [root]
    while stack and count < most:
        value = stack.pop()
        count += 1
        if type(value) is dict:
            stack.extend(value.values())
        elif type(value) is list:
            stack.extend(value)
    return count


class _Walk:
    """`violations`' walk of one value under one schema node, into `out` and `unknown`: a stack of
    (value, schema node, path), where an `_END` entry closes a subtree whose answer `seen` keeps,
    or a stretch under a node that keeps unknown fields. With `counted` (an alternative of allOf,
    anyOf, oneOf or not), each value visited spends the budget."""

    __slots__ = ("budget", "counted", "out", "quiet", "seen", "shape", "shapes", "stack", "unknown")

    def __init__(
        self,
        out: list[_Violation],
        unknown: list[Pruned],
        seen: dict[tuple[int, Any], tuple[tuple[_Violation, ...], tuple[Pruned, ...]]] | None,
        shapes: dict[int, Any],
        budget: _Budget,
        *,
        counted: bool = False,
    ) -> None:
        self.out = out
        self.unknown = unknown
        self.seen = seen
        self.shapes = shapes
        self.budget = budget
        self.counted = counted
        self.shape = _shape_function()
        self.quiet = 0  # > 0: under a node that keeps unknown fields (or an embedded resource)
        self.stack: list[tuple[Any, Any, Any]] = []

    def run(self, start: Any, schema: Mapping[str, Any], at: tuple[str | int, ...]) -> bool:
        """Walk `start` under `schema` at path `at`; False when the budget ran out before the walk was done.
        A map or list walked under the same node before takes that answer (`seen`), else its answer
        is kept when its subtree is done (`_end`): inline, not a call per map or list."""
        self.stack.append((start, schema, at))
        return self.drain()

    def drain(self) -> bool:
        """Walk what is on the stack (`run`); False when the budget ran out first."""
        stack = self.stack
        budget, counted, seen, shapes, shape = self.budget, self.counted, self.seen, self.shapes, self.shape
        out, unknown = self.out, self.unknown
        # In the run's memo of shapes (policylint.k8s.shapes) a map's or list's shape is a token of
        # the object: its id tells the same apart without a lookup while the catalogue holds it
        # (`Catalogue.pinned`, emptied with the memo tables: `admission._run_shapes`).
        by_id = type(shapes) is SharedShapes
        while stack:
            value, node, path = stack.pop()
            if counted:
                budget.left -= 1
                if budget.left < 0:
                    return False
            if value is _END:
                if node is not None and node[1] == len(out) and node[3] == len(unknown) and budget.left >= 0:
                    seen[node[0]] = _NOTHING  # type: ignore[index]  # most subtrees find nothing: one answer for all
                else:
                    self._end(node)
                continue
            t = type(value)
            if value is None or (((t is dict and len(value) == 1) or t is str) and template(value)):
                continue  # a null is an unset field to the API server; a template action or placeholder is PL004's
            if seen is not None and path and (t is dict or t is list):
                if by_id:
                    whole = id(value)
                else:
                    whole = shapes.get(id(value), _UNSHAPED)
                    if whole is _UNSHAPED:
                        whole = shape(value, shapes)
                if whole is not None:
                    key = (id(node), whole)
                    got = seen.get(key)
                    if got is not None:
                        if got is not _NOTHING:
                            out.extend(((*path, *p), m, r) for p, m, r in got[0])
                            unknown.extend(((*path, *p), k, known) for p, k, known in got[1])
                        continue
                    stack.append((_END, (key, len(out), len(path), len(unknown)), None))
            self._visit(value, node, path)
        return True

    def _end(self, mark: Any) -> None:
        """A subtree under which something was found is done (`run` keeps one where nothing was):
        keep what for the same content under the same node (`seen`); or leave the stretch under a
        node that keeps unknown fields."""
        if mark is None:
            self.quiet -= 1
            return
        if self.budget.left < 0:
            return  # alternatives left unchecked under it: no answer to give other objects
        key, start, depth, first = mark
        self.seen[key] = (  # type: ignore[index]
            tuple((p[depth:], m, r) for p, m, r in self.out[start:]),
            tuple((p[depth:], k, known) for p, k, known in self.unknown[first:]),
        )

    def _visit(self, value: Any, node: Mapping[str, Any], path: tuple[str | int, ...]) -> None:
        """One value under its schema node: its type, then what the schema says of a value of that type."""
        out = self.out
        got = _PLANS.get(id(node))
        plan = got[1] if got is not None and got[0] is node else _plan(node)
        if plan.quiet:
            self.quiet += 1
            self.stack.append((_END, None, None))
        if plan.int_or_string:
            if isinstance(value, bool) or not isinstance(value, (int, str)):
                out.append((path, f"is {_kind_of(value)}, where the schema takes an integer or a string", _TYPE))
            elif plan.combined:  # a quantity's patterns (allOf), which apply to its strings
                _combined(out, path, value, node, self.shapes, self.budget)
            return
        wanted, types = plan.wanted, plan.types
        if wanted == "integer" and isinstance(value, float) and value.is_integer():
            value = int(value)  # kubectl sends an integral float as an integer
        if types is not None and not (isinstance(value, types) and (not isinstance(value, bool) or wanted == "boolean")):
            _wrong_type(out, path, value, wanted)
            return
        if plan.combined:
            _combined(out, path, value, node, self.shapes, self.budget)
        if isinstance(value, list):
            self._list(value, node, path, plan)
        elif isinstance(value, dict):
            self._map(value, node, path, plan)
        else:
            _scalar(out, path, value, node, plan)

    def _list(self, value: list[Any], node: Mapping[str, Any], path: tuple[str | int, ...], plan: _Plan) -> None:
        out = self.out
        if plan.item_bounds is not None:
            bound(out, path, len(value), plan.item_bounds, ITEMS)
        items = plan.items
        if items is not None:
            if None in value:
                null_items(out, path, value, items)
            if plan.items_entered:
                # Items that pass their plain checks (a route's hostnames) are not pushed; an
                # alternative's walk spends its budget per value visited, and visits them all.
                checks, numbers = (None, NOT_QUICK) if self.counted else plan.item_checks
                if checks is not None or numbers is not NOT_QUICK:
                    # Only a string or an integer can pass without a visit (`passes`): most items
                    # are maps (a route's rules, references), asked nothing more.
                    pushed = [
                        (v, items, (*path, i))
                        for i, v in enumerate(value)
                        if not ((type(v) is str or type(v) is int) and passes(v, checks, numbers))
                    ]
                else:
                    pushed = [(v, items, (*path, i)) for i, v in enumerate(value)]
                self.stack.extend(reversed(pushed))
        if plan.list_type and len(value) > 1:  # one item repeats nothing
            duplicates(out, path, value, node, items if isinstance(items, dict) else {})

    def _map(self, value: dict[Any, Any], node: Mapping[str, Any], path: tuple[str | int, ...], plan: _Plan) -> None:
        out = self.out
        if plan.field_bounds is not None:
            bound(out, path, len(value), plan.field_bounds, FIELDS)
        for name in plan.required:
            if value.get(name) is None:
                out.append(((*path, name), "is required by the schema and missing", "FieldValueRequired"))
        if plan.kept_whole:
            return
        fields, other = plan.fields, plan.other
        # An alternative's walk spends its budget per value visited: there every integer is visited.
        quick = not self.counted
        children = []
        for key, child in value.items():
            entry = fields.get(key, other)
            if entry is None:
                if not self.quiet and plan.prunes:
                    self.unknown.append((path, str(key), sorted(plan.properties)))
                continue
            sub, checks, numbers = entry
            if checks is _SKIPPED:
                continue
            if type(child) is str:
                if checks is not None:  # its length judged here: most pass, with no pattern or format
                    least, most, pattern, fmt, _ = checks
                    if (least is None or len(child) >= least) and (most is None or len(child) <= most):
                        if pattern is not None or fmt is not None:
                            _plain_string_checked(out, path, key, child, checks)
                        continue
            elif type(child) is int and numbers is not NOT_QUICK and quick and (numbers is None or _in_bounds(child, numbers)):
                continue  # an integer within its bounds (a listener's port): nothing to report
            children.append((child, sub, (*path, key)))
        self.stack.extend(reversed(children))


def _scalar(out: list[_Violation], path: tuple[str | int, ...], value: Any, node: Mapping[str, Any], plan: _Plan) -> None:
    """What the schema says of a value that is no map or list: its enum, a string's length,
    pattern and format, a number's bounds."""
    enum = plan.enum
    if enum is not None and value not in enum:
        shown = ", ".join(repr(e) for e in enum[:12]) + (", ..." if len(enum) > 12 else "")
        out.append((path, f"is {value!r}, not one of the values the schema allows ({shown})", "FieldValueNotSupported"))
    if isinstance(value, str):
        if plan.lengths is not None:
            bound(out, path, len(value), plan.lengths, _LENGTH)
        if plan.textual:
            check_string(out, path, value, node)
    elif isinstance(value, (int, float)) and not isinstance(value, bool) and plan.numbers is not None:
        _value_bound(out, path, value, plan.numbers)


def _wrong_type(out: list[_Violation], path: tuple[str | int, ...], value: Any, wanted: Any) -> bool:
    """Whether the value is not of the schema's type (reported into `out`)."""
    types = _TYPES.get(wanted) if isinstance(wanted, str) else None
    if types is None or (isinstance(value, types) and (not isinstance(value, bool) or wanted == "boolean")):
        return False
    article = "an" if wanted[0] in "aeio" else "a"
    out.append((path, f"is {_kind_of(value)}, where the schema takes {article} {wanted}", _TYPE))
    return True


_SKIPPED: Any = object()  # a field's schema the walk does not enter (`CHECKED`), in a `_Plan`


class _Plan:
    """What `_Walk._visit` and `_Walk._map` read of a schema node, worked out once per node
    (`_plan`) rather than once per value under it: which of its keywords are there and, per field
    of an object node, its schema with how a string there is checked. Most values a run walks are
    new content under a few nodes (each Gateway's listeners, each route's rules and references),
    whose keywords each value read again."""

    __slots__ = (
        "combined",
        "enum",
        "field_bounds",
        "fields",
        "int_or_string",
        "item_bounds",
        "item_checks",
        "items",
        "items_entered",
        "kept_whole",
        "lengths",
        "list_type",
        "numbers",
        "other",
        "properties",
        "prunes",
        "quiet",
        "required",
        "textual",
        "types",
        "wanted",
    )

    def __init__(self, node: Mapping[str, Any]) -> None:
        # The keywords `_visit` reads: a check whose keywords the node lacks is not called.
        self.quiet = bool(node.get(PRESERVE) or node.get(EMBEDDED))
        self.int_or_string = bool(node.get("x-kubernetes-int-or-string"))
        self.combined = bool(node.get(COMBINED))
        wanted = self.wanted = node.get("type")
        self.types = _TYPES.get(wanted) if isinstance(wanted, str) else None
        enum = node.get("enum")
        self.enum = enum if isinstance(enum, list) else None
        self.lengths = _pair(node, "minLength", "maxLength")
        self.textual = "pattern" in node or "format" in node
        self.numbers: tuple[Any, Any, bool, bool] | None = None
        if "minimum" in node or "maximum" in node:
            self.numbers = (
                node.get("minimum"),
                node.get("maximum"),
                node.get("exclusiveMinimum") is True,
                node.get("exclusiveMaximum") is True,
            )
        # What `_list` reads.
        self.item_bounds = _pair(node, "minItems", "maxItems")
        items = node.get("items")
        self.items = items if isinstance(items, dict) else None
        self.items_entered = self.items is not None and CHECKED not in self.items
        # How an item that is a plain string or integer is judged without a visit (`passes`).
        entered = self.items if self.items_entered else None
        self.item_checks = (None, NOT_QUICK) if entered is None else (string_checks_of(entered), _integer_bounds(entered))
        self.list_type = LIST_TYPE in node
        # What `_map` reads.
        properties = node.get("properties") or {}
        self.properties = properties
        self.field_bounds = _pair(node, "minProperties", "maxProperties")
        # The API server sets a field's default before it validates: a default satisfies.
        self.required = tuple(name for name in node.get("required", ()) if "default" not in properties.get(name, {}))
        self.kept_whole = bool(node.get(PRESERVE)) and node.get("properties") is None
        additional = node.get("additionalProperties")
        # A field the node does not name goes to additionalProperties' schema, else is pruned.
        self.other = _field_plan(additional) if isinstance(additional, dict) else None
        self.prunes = additional is not True and (additional is not None or node.get("properties") is not None)
        self.fields: dict[Any, Any] = {key: _field_plan(sub) for key, sub in properties.items()}
        if self.other is not None:
            # `properties.get(key)` None (a field set to null in the schema) falls to additionalProperties.
            self.fields = {key: entry if entry[0] is not None else self.other for key, entry in self.fields.items()}
        else:
            self.fields = {key: entry for key, entry in self.fields.items() if entry[0] is not None}


def _pair(node: Mapping[str, Any], low: str, high: str) -> tuple[Any, Any] | None:
    """A node's lower and upper bound of a count, None when it has neither."""
    return (node.get(low), node.get(high)) if low in node or high in node else None


def _field_plan(sub: Any) -> tuple[Any, Any, Any]:
    """(a field's schema, how a string there is checked in its map's loop: its minLength,
    maxLength, pattern and format, where those are all there is to check (`_plain_string_checked`);
    None: the walk visits the value; `_SKIPPED`: the walk does not enter it; and an integer's
    bounds where they are all there is to check (`_integer_bounds`))."""
    if sub is None:
        return None, None, NOT_QUICK
    if CHECKED in sub:
        return sub, _SKIPPED, NOT_QUICK
    return sub, string_checks_of(sub), _integer_bounds(sub)


def string_checks_of(sub: Mapping[str, Any]) -> tuple[Any, ...] | None:
    """A string's minLength, maxLength, pattern, format and node, where that is all it checks."""
    if sub.get("type") != "string" or "enum" in sub or COMBINED in sub:
        return None
    return (sub.get("minLength"), sub.get("maxLength"), sub.get("pattern"), sub.get("format"), sub)


NOT_QUICK: Any = object()  # an integer there is visited (`_integer_bounds`)
_VISITED_INTEGER = ("enum", COMBINED, PRESERVE, EMBEDDED, "x-kubernetes-int-or-string")


def _integer_bounds(sub: Mapping[str, Any]) -> Any:
    """All `_Walk._visit` checks of an integer (`type(value) is int`) under an integer node that
    has none of `_VISITED_INTEGER` (more checks, or others): its bounds, as `_Plan.numbers` (None:
    none); an integer within them is not pushed. `NOT_QUICK`: any other node."""
    if sub.get("type") != "integer" or any(k in sub for k in _VISITED_INTEGER):
        return NOT_QUICK
    if "minimum" in sub or "maximum" in sub:
        return (sub.get("minimum"), sub.get("maximum"), sub.get("exclusiveMinimum") is True, sub.get("exclusiveMaximum") is True)
    return None


def _in_bounds(value: int, numbers: tuple[Any, Any, bool, bool]) -> bool:
    """Whether `_value_bound` finds nothing wrong with the number."""
    least, most, above, below = numbers
    low = isinstance(least, (int, float)) and (value < least or (above and value == least))
    return not low and not (isinstance(most, (int, float)) and (value > most or (below and value == most)))


def passes(item: Any, checks: tuple[Any, ...] | None, numbers: Any) -> bool:
    """Whether `_Walk._visit` would report nothing of a list item, by its node's plain checks."""
    if type(item) is int:
        return numbers is not NOT_QUICK and (numbers is None or _in_bounds(item, numbers))
    if type(item) is not str or checks is None:
        return False
    least, most, pattern, fmt, _ = checks
    if (least is not None and len(item) < least) or (most is not None and len(item) > most):
        return False
    if pattern is None and fmt is None:
        return True
    format_ok, matches = _string_checks()
    passed = not isinstance(pattern, str) or matches(pattern, item) is not False
    return passed and (not isinstance(fmt, str) or format_ok(fmt, item) is not False)


# id of a schema node -> (the node, its `_Plan`): the node is held, so its id stays its own.
_PLANS: dict[int, tuple[Mapping[str, Any], _Plan]] = {}


def _plan(node: Mapping[str, Any]) -> _Plan:
    if len(_PLANS) > 100_000:
        _PLANS.clear()  # CRDs read from many inputs in one process (tests): bounded
    plan = _Plan(node)
    _PLANS[id(node)] = (node, plan)
    return plan


def _plain_string_checked(
    out: list[_Violation], path: tuple[str | int, ...], key: Any, child: str, checks: tuple[Any, ...]
) -> bool:
    """Most values: a string whose length, pattern and format are all there is to check, checked
    here rather than pushed on the walk's stack (its path, `path` and `key`, made only for a
    violation), against its field's `_field_plan`. False: the walk visits it."""
    least, most, pattern, fmt, sub = checks
    if (least is None or len(child) >= least) and (most is None or len(child) <= most):
        if pattern is not None or fmt is not None:
            format_ok, matches = _string_checks()
            if (isinstance(pattern, str) and matches(pattern, child) is False) or (
                isinstance(fmt, str) and format_ok(fmt, child) is False
            ):
                check_string(out, (*path, key), child, sub)
        return True
    return False


def null_items(out: list[_Violation], path: tuple[str | int, ...], value: list[Any], items: Mapping[str, Any]) -> None:
    """A null list item is not an unset field, as a null field is: the API server refuses it as
    a value of the wrong type, unless the item schema is nullable."""
    wanted = items.get("type")
    if items.get("nullable") or not isinstance(wanted, str) or wanted not in _TYPES:
        return
    for i, item in enumerate(value):
        if item is None:
            what = f"{'an' if wanted[0] in 'aeio' else 'a'} {wanted}"
            out.append(((*path, i), f"is null, where the schema takes {what}", _TYPE))


def _combined(
    out: list[_Violation],
    path: tuple[str | int, ...],
    value: Any,
    node: Mapping[str, Any],
    shapes: dict[int, Any],
    budget: _Budget,
) -> None:
    """The schema's allOf, anyOf, oneOf and not over a value, as kube-openapi's validator applies
    them (k8s.io/kube-openapi/pkg/validation/validate/schema_props.go): every allOf alternative,
    at least one anyOf alternative, exactly one oneOf alternative, and not the `not` schema. The
    API server defaults an object before it validates it, so the alternatives see the value with
    the defaults of the schema's own properties (a Gateway address without `type` is an
    IPAddress to its oneOf)."""
    if budget.depth >= budget.DEPTH:
        return  # alternatives nested deeper than any real schema's: not checked
    budget.start()
    value = _defaulted(value, node, budget)
    if budget.exhausted:
        return  # the budget ran out setting the defaults: nothing is checked

    def alternative(sub: Any) -> list[_Violation] | None:
        """What the alternative refuses in the value; None: not known (the budget ran out)."""
        if not isinstance(sub, dict):
            return []
        found: list[_Violation] = []
        budget.depth += 1
        try:
            done = _Walk(found, [], None, shapes, budget, counted=True).run(value, sub, path)
        finally:
            budget.depth -= 1
        return found if done else None

    start = len(out)
    for sub in node.get("allOf") or ():
        for violation in alternative(sub) or ():
            if violation not in out[start:]:  # `allOf: [{enum: [...]}, {enum: [...]}]`, as generators write
                out.append(violation)
    any_of = node.get("anyOf")
    if any_of:
        _any_of(out, path, any_of, alternative)
    one_of = node.get("oneOf")
    if one_of:
        _one_of(out, path, [alternative(sub) for sub in one_of])
    forbidden = node.get("not")
    if isinstance(forbidden, dict) and alternative(forbidden) == []:
        if isinstance(value, (dict, list)):
            out.append((path, "matches what the schema's `not` excludes", _INVALID))
        else:
            shown = _shown(value) if isinstance(value, str) else repr(value)
            out.append((path, f"is {shown}, which the schema's `not` excludes", _INVALID))


def _any_of(
    out: list[_Violation], path: tuple[str | int, ...], any_of: list[Any], alternative: Callable[[Any], list[_Violation] | None]
) -> None:
    """At least one anyOf alternative matches; they are tried in turn until one does."""
    refused: list[list[_Violation]] = []
    for sub in any_of:
        found = alternative(sub)
        if not found:
            return
        refused.append(found)
    out.append((path, f"matches none of the schema's anyOf alternatives [{_alternatives(path, refused)}]", _INVALID))


def _one_of(out: list[_Violation], path: tuple[str | int, ...], results: list[list[_Violation] | None]) -> None:
    """Exactly one oneOf alternative matches, when every one was decided within the budget."""
    if any(r is None for r in results):
        return
    matched = sum(1 for r in results if not r)
    if matched == 0:
        what = f"matches none of the schema's oneOf alternatives [{_alternatives(path, results)}]"  # type: ignore[arg-type]
        out.append((path, what, _INVALID))
    elif matched > 1:
        what = f"matches {matched} of the schema's oneOf alternatives, where exactly one must match"
        out.append((path, what, _INVALID))


def _alternatives(path: tuple[str | int, ...], refused: list[list[_Violation]]) -> str:
    """What each alternative refused, first violation each, relative to `path`."""
    parts = []
    for n, found in enumerate(refused[:4], 1):
        where, problem, _ = found[0]
        rel = format_path(where[len(path) :]).lstrip(".")
        text = f"{rel} {problem}" if rel else problem
        # Alternatives nest, and so would their texts: each is cut, so a message stays short.
        parts.append(f"{n}: {text if len(text) <= 240 else text[:237] + '...'}")
    return "; ".join(parts) + ("; ..." if len(refused) > 4 else "")


def _defaulted(value: Any, node: Mapping[str, Any], budget: _Budget) -> Any:
    """The value with the defaults of the schema's properties set where it has none, through its
    maps and lists, as the API server defaults an object before validating it. A copy where
    anything was set; the object itself is never changed. Each map and list spends the budget."""
    if isinstance(value, (dict, list)):
        budget.left -= 1
        if budget.exhausted:
            return value
    if isinstance(value, dict):
        properties = node.get("properties")
        additional = node.get("additionalProperties")
        out: dict[str, Any] | None = None
        if isinstance(properties, dict):
            for name, sub in properties.items():
                if value.get(name) is None and "default" in sub:
                    out = dict(value) if out is None else out
                    out[name] = sub["default"]
        for key, child in value.items():
            sub = properties.get(key) if isinstance(properties, dict) else None
            if sub is None and isinstance(additional, dict):
                sub = additional
            if isinstance(sub, dict) and isinstance(child, (dict, list)):
                new = _defaulted(child, sub, budget)
                if new is not child:
                    out = dict(value) if out is None else out
                    out[key] = new
        return value if out is None else out
    if isinstance(value, list):
        items = node.get("items")
        if isinstance(items, dict):
            new_items = [_defaulted(item, items, budget) for item in value]
            if any(a is not b for a, b in zip(new_items, value)):
                return new_items
    return value


# The keywords bounding a count (`bound`), and what is counted.
_LENGTH = ("minLength", "maxLength", "characters long")
ITEMS = ("minItems", "maxItems", "items")
FIELDS = ("minProperties", "maxProperties", "fields")


def bound(
    out: list[_Violation], path: tuple[str | int, ...], n: int, bounds: tuple[Any, Any], words: tuple[str, str, str]
) -> None:
    """A count against the node's lower and upper bound (`_Plan`), `words` naming them."""
    least, most = bounds
    low, high, unit = words
    if isinstance(least, int) and n < least:
        out.append((path, f"is {n} {unit}, fewer than the schema's {low} of {least}", _INVALID))
    if isinstance(most, int) and n > most:
        out.append((path, f"is {n} {unit}, more than the schema's {high} of {most}", _TOO_MANY.get(high, _INVALID)))


def _shown(text: str, most: int = 80) -> str:
    return repr(text if len(text) <= most else text[:most] + "...")


def check_string(out: list[_Violation], path: tuple[str | int, ...], value: str, node: Mapping[str, Any]) -> None:
    """The schema's `pattern` (Go regexp, searched) and `format` (kube-openapi strfmt)."""
    format_ok, matches = _string_checks()
    pattern, fmt = node.get("pattern"), node.get("format")
    if isinstance(pattern, str) and matches(pattern, value) is False:
        shown = pattern if len(pattern) <= 160 else pattern[:160] + "..."
        found = _placeholder_cause(value, lambda v: matches(pattern, v) is not False)
        what = f"which does not match the schema's pattern `{shown}`"
        if found is not None:
            out.append((path, f"{_unrendered_problem(found, value)}, {what}", _INVALID))
        else:
            out.append((path, f"is {_shown(value)}, {what}", _INVALID))
    if isinstance(fmt, str) and format_ok(fmt, value) is False:
        found = _placeholder_cause(value, lambda v: format_ok(fmt, v) is not False)
        if found is not None:
            out.append((path, f"{_unrendered_problem(found, value)}, not a valid {fmt} (the schema's format)", _INVALID))
        else:
            out.append((path, f"is {_shown(value)}, not a valid {fmt} (the schema's format)", _INVALID))


# How a schema rejection caused by a template or variable placeholder begins (PL703 then says to
# render or substitute first, not to lint with newer CRDs).
UNRENDERED = "holds the unrendered placeholder"
# Stand-ins for a placeholder's rendered value: a name, and a number.
_STAND_INS = ("x", "0")


def _unrendered_problem(found: str, value: str) -> str:
    return f"{UNRENDERED} {_shown(found)}" + ("" if found == value else f" (is {_shown(value)})")


def _placeholder_cause(value: str, accepts: Callable[[str], bool]) -> str | None:
    """The first placeholder in a string a check refuses (`{{ }}`, `${VAR}`, `$(VAR)`,
    `<name>`), when it is what the check refuses: with every placeholder replaced by a
    stand-in, the value passes. Only on the path of a refusal, so it costs nothing otherwise."""
    from policylint.input.load import unrendered

    found = unrendered(value)
    if not found:
        return None
    for stand_in in _STAND_INS:
        rendered = value
        for text in found:
            rendered = rendered.replace(text, stand_in)
        if accepts(rendered):
            return found[0]
    return None


def _value_bound(out: list[_Violation], path: tuple[str | int, ...], value: float, numbers: tuple[Any, Any, bool, bool]) -> None:
    """A number against the node's minimum and maximum, each exclusive or not (`_Plan.numbers`)."""
    least, most, above, below = numbers
    if isinstance(least, (int, float)) and (value < least or (above and value == least)):
        out.append((path, f"is {value}, below the schema's minimum of {least}", _INVALID))
    if isinstance(most, (int, float)) and (value > most or (below and value == most)):
        out.append((path, f"is {value}, above the schema's maximum of {most}", _INVALID))
