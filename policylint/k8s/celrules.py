"""The CEL validation rules of a schema (`x-kubernetes-validations`) applied to an object, node by
node, within the API server's cost budget (`cel_failures`)."""

from __future__ import annotations

import functools
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any

from policylint.input.positions import format_path
from policylint.k8s.shapes import SharedShapes
from policylint.k8s.verdicts import TOP_LEVEL_SKIPPED, VALIDATIONS, CelFailure, Check, Rejection, template

if TYPE_CHECKING:
    from policylint.k8s.cel import Compiled, EvalError
    from policylint.k8s.fieldtypes import Malformed

_UNSET: Any = object()
# What a `RuleOutcomes._outcome` caller passes for a value not worked out yet.
UNSET = _UNSET


def cel_failures(
    data: Mapping[str, Any],
    schema: Mapping[str, Any],
    malformed: Malformed,
    results: dict[tuple[int, str, tuple[Any, ...]], Any],
    shapes: dict[int, Any] | None = None,
    spent: list[int] | None = None,
) -> Iterator[Rejection]:
    """The CEL rules of the schema that refuse the object, node by node (parents first, in
    document order), each rule compiled once per text and run only on the nodes the object has.
    A rule is not run on a value of the wrong type (the schema refuses it first), nor counted
    when it fails only for a required field that is missing (a schema rejection already).

    The rules of one object share the API server's runtime cost budget (`RUNTIME_BUDGET`;
    k8s.io/apiextensions-apiserver pkg/apiserver/schema/cel/validation.go): each evaluation is
    cancelled past `PER_CALL_LIMIT`, and its cost, known from a result seen before or
    worked out, is charged to the object; a cancelled evaluation or a spent budget is a
    rejection naming the rule, and no further rule is run, as the API server does. `spent`
    receives what the object's rules cost in all, once they are all run (policylint.k8s.differences
    reads it)."""
    if not subtree_has_rules(schema):
        if spent is not None:
            spent.append(0)
        return
    run = _CelRun(data, schema, malformed, results, {} if shapes is None else shapes)
    yield from run.run()
    if spent is not None:
        spent.append(run.spent)


def cel_rejections(
    data: Mapping[str, Any],
    schema: Mapping[str, Any],
    malformed: Malformed,
    results: dict[tuple[int, str, tuple[Any, ...]], Any],
    shapes: dict[int, Any],
) -> tuple[tuple[Rejection, ...], int]:
    """`cel_failures`' rejections, all of them, and what the object's rules cost in all: what the
    admission verdict of every object asks (`admission._admit`), without a generator around the
    walk's."""
    if not subtree_has_rules(schema):
        return (), 0
    run = _CelRun(data, schema, malformed, results, shapes)
    return tuple(run.run()), run.spent


@functools.cache
def evaluator() -> tuple[Any, int, int]:
    """The CEL package, the per-call cost limit and the runtime budget of an object's rules,
    imported on the first walk that runs rules, not with the module (a run whose verdicts are all
    kept never needs the CEL evaluator), and once, not once per object."""
    from policylint.k8s import cel
    from policylint.k8s.cel.cost import PER_CALL_LIMIT, RUNTIME_BUDGET

    return cel, PER_CALL_LIMIT, RUNTIME_BUDGET


class RuleOutcomes:
    """A rule's outcome on a node's value, kept by what the rule reads of it: what a walk that
    evaluates CEL rules needs, `_CelRun` here and the walk of the other plausible schemas
    (policylint.k8s.differential), which shares its memo tables. A subclass holds `cel`, `data`,
    `memo`, `per_call`, `results` and `shapes`."""

    __slots__ = ()
    cel: Any
    data: Mapping[str, Any]
    memo: dict[int, Any]
    per_call: int
    results: dict[Any, Any]
    shapes: dict[int, Any]

    def _value(self, raw: Any, node: Mapping[str, Any], parts: tuple[Any, ...]) -> Any:
        """The node's value as its rules read it (`cel.BAD`: of the wrong type for its schema)."""
        return root_value(self.data, node, self.memo) if not parts else self.cel.to_cel(raw, node, self.memo)

    def _outcome(
        self, compiled: Compiled, raw: Any, node: Mapping[str, Any], parts: tuple[Any, ...], value: Any
    ) -> tuple[Any, Any]:
        """A rule's outcome on the node's value, from a result seen before on the same content or
        evaluated now (None: the value has the wrong type for its schema, a schema rejection; the
        API server does not run the rules then); and the value, if it was worked out (`value`:
        the value if already worked out, else `UNSET`)."""
        cel = self.cel
        key = cel.result_key(compiled, raw, self.shapes, node) if parts else None
        slot = (id(node), compiled.text, key) if key is not None else None
        outcome = self.results.get(slot, _UNSET) if slot is not None else _UNSET
        if outcome is _UNSET:
            if value is _UNSET:
                value = self._value(raw, node, parts)
            outcome = None if value is cel.BAD else cel.evaluate_within(compiled, value, self.per_call)
            if slot is not None:
                self.results[slot] = outcome
        return outcome, value


class _CelRun(RuleOutcomes):
    """`cel_failures`' walk of one object: the nodes whose schema has rules below it, parents
    first, in document order (a stack of (value, schema node, path parts), where an `_END` entry
    closes a subtree), with what the object's rules have spent of its runtime cost budget.

    A subtree whose content was seen under the same schema node with nothing refused in it (no
    rule failed, none left out for a malformed field) is skipped: (id(schema node), "/", (its
    shape,)) -> what its rules cost. `open_` holds the subtrees being walked, each with whether
    something under it was refused or left out so far, and the cost spent when it was entered."""

    __slots__ = ("budget", "cel", "data", "done", "malformed", "memo", "open_", "per_call", "results", "shapes", "spent", "stack")

    def __init__(
        self,
        data: Mapping[str, Any],
        schema: Mapping[str, Any],
        malformed: Malformed,
        results: dict[tuple[int, str, tuple[Any, ...]], Any],
        shapes: dict[int, Any],
    ) -> None:
        self.cel, self.per_call, self.budget = evaluator()
        self.data = data
        self.malformed = malformed
        self.results: dict[Any, Any] = results
        self.shapes = shapes  # maps and lists by content (`cel.shape`): the run's memo (`Catalogue.shapes`)
        self.memo: dict[int, Any] = {}
        self.stack: list[Any] = [(data, schema, ())]
        self.open_: list[list[Any]] = []
        self.spent = 0  # of the object's runtime cost budget
        self.done = False  # "no further validation rules will be run"

    def run(self) -> Iterator[Rejection]:
        """The walk. Each value is one turn of this loop, with what used to be a call each inlined
        (most of an object's values are a subtree seen before, or a map with no rule of its own):
        whether a subtree whose content was seen under the same node with nothing refused answers,
        if the budget covers it (else the subtree is walked, and its cost kept when nothing under
        it is refused), and the children whose schema has rules below it."""
        stack, open_, results, shapes, budget = self.stack, self.open_, self.results, self.shapes, self.budget
        shape = self.cel.shape
        # A map's or list's key among the subtrees: its id in the run's memo of shapes, as in
        # `schemawalk._Walk.run` (the objects are held, and the memo tables emptied with them).
        by_id = type(shapes) is SharedShapes
        while stack and not self.done:
            raw, node, parts = stack.pop()
            if raw is _END:
                slot, dirty, entered = open_.pop()
                if not dirty:
                    results[slot] = self.spent - entered
                continue
            if raw is None or (((type(raw) is dict and len(raw) == 1) or type(raw) is str) and template(raw)):
                continue  # a null is an unset field; a template action or placeholder is PL004's
            if parts:
                if by_id and (type(raw) is dict or type(raw) is list):
                    whole = id(raw)
                else:
                    # Looked up before `shape` is called (a live scalar never has the id of a map
                    # or list the memo holds alive).
                    whole = shapes.get(id(raw), _UNSET)
                    if whole is _UNSET:
                        whole = shape(raw, shapes)
                if whole is not None:
                    subtree = (id(node), "/", (whole,))
                    cost = results.get(subtree)
                    if cost is not None and self.spent + cost <= budget:
                        self.spent += cost
                        continue
                    open_.append([subtree, False, self.spent])
                    stack.append((_END, None, None))
            plan = _PLANS.get(id(node))
            if plan is None or plan[0] is not node:
                plan = _plan(node)
            _, kids, extra, each, own, scalars = plan  # scalars: some map value has rules of its own
            if type(raw) is dict:
                if kids is not None:
                    stack.extend(reversed(_children(raw, parts, kids, extra, scalars)))
            elif type(raw) is list and each is not None:
                # A list comprehension reversed in place: no generator run item by item.
                pushed = [(item, each, (*parts, i)) for i, item in enumerate(raw)]
                pushed.reverse()
                stack.extend(pushed)
            if own:
                yield from self._node(raw, node, parts)  # most often an empty tuple

    def _dirty(self) -> None:
        """Something under every subtree being walked was refused or left out: keep no answer for them."""
        for frame in self.open_:
            frame[1] = True

    def _node(self, raw: Any, node: Mapping[str, Any], parts: tuple[Any, ...]) -> list[Rejection] | tuple[()]:
        """The node's own rules on its value, in order: their rejections (most nodes have none: a
        list made only for a rejection, and no generator per node, which `run` delegated to for
        every node with rules of its own)."""
        if self.malformed.problems and self.malformed.broken(*parts):  # most objects have none
            self._dirty()
            return ()  # the value or a parent has the wrong type: PL010's finding
        # Transition rules and unsupported functions are left out: `policylint rules --cel-coverage`.
        cel = self.cel
        rules = cel.node_rules(node)
        # The outcomes of all the node's rules on a value seen before that they cannot tell from
        # this one, if any; else the slots to keep this value's outcomes under. First a value of
        # the same content (repositories repeat their routes' rules, matches and filters), then
        # one that agrees with it in what the rules read together (`cel.rules_key`: a route's rule
        # that differs from others only in its backends' names), one key for all the node's rules
        # where each rule's own would be worked out one by one. Here, not in a method of its own:
        # every node with rules of every new value asks.
        known: tuple[Any, ...] | None = None
        slots: tuple[Any, ...] = ()
        if parts and rules:
            shapes = self.shapes
            whole = shapes.get(id(raw), _UNSET)
            if whole is _UNSET:
                whole = cel.shape(raw, shapes)
            if whole is not None:
                results = self.results
                node_slot = (id(node), "", (whole,))
                known = results.get(node_slot)
                if known is None:
                    together = cel.rules_key(rules, raw, shapes, node)
                    if together is None:
                        slots = (node_slot,)
                    else:
                        together_slot = (id(node), "+", (together,))
                        known = results.get(together_slot)
                        if known is None:
                            slots = (node_slot, together_slot)
                        else:
                            results[node_slot] = known
        if known is not None:
            # Most values' outcomes are known, and every rule passed on them: `_rules` would only
            # add up their costs, each within the budget if the last one is (none is negative),
            # so the sum is taken once per distinct outcomes, not rule by rule.
            total = _PASSING.get(known)
            if total is None:
                total = _passing(known, len(rules))
            if total >= 0 and self.spent + total <= self.budget:
                self.spent += total
                return ()
        return self._rules(raw, node, parts, rules, known, slots)

    def _rules(
        self,
        raw: Any,
        node: Mapping[str, Any],
        parts: tuple[Any, ...],
        rules: tuple[Any, ...],
        known: tuple[Any, ...] | None,
        slots: tuple[Any, ...],
    ) -> list[Rejection] | tuple[()]:
        """`_node`'s rules one by one, from their `known` outcomes or evaluated (and kept under
        `slots`): what each costs, until one refuses the value past the budget or stops the
        object's rules."""
        cel = self.cel
        value: Any = _UNSET
        path: str | None = None
        seen: list[Any] = []
        found: list[Rejection] | tuple[()] = ()
        for i, (validation, compiled) in enumerate(rules):
            if known is not None:
                outcome = known[i]
            else:
                outcome, value = self._outcome(compiled, raw, node, parts, value)
                seen.append(outcome)
            if outcome is None:
                break
            passed, error, cost = outcome
            self.spent += cost
            # Most outcomes pass within the budget: the reasons to stop are looked at only when
            # the budget is spent or the rule's evaluation was cancelled.
            stop = (
                _out_of_budget(compiled, validation, error, self.spent)
                if self.spent > self.budget or isinstance(error, cel.CostExceeded)
                else None
            )
            if stop is not None:
                self._dirty()
                if value is _UNSET:
                    value = self._value(raw, node, parts)
                path = format_path(parts) if path is None else path
                failure = CelFailure(validation, compiled, value, error, path)
                self.done = True
                return [*found, Rejection(Check.CEL, parts, path, stop, "FieldValueInvalid", failure)]
            if passed or isinstance(error, cel.BadValue):
                continue  # a value the schema refuses, read by the rule
            if value is _UNSET:
                value = self._value(raw, node, parts)
            self._dirty()
            if error is not None and error.message.startswith("no such key: "):
                if error.message[len("no such key: ") :] in self.memo.get(cel.MISSING, ()):
                    continue  # a required field is missing: a schema rejection
            if path is None:
                path = format_path(parts)
            found = [*found, *self._refused(validation, compiled, value, error, parts, path)]
            if self.done:
                return found
        if known is None:
            for slot in slots:
                self.results[slot] = tuple(seen)
        return found

    def _refused(
        self,
        validation: Mapping[str, Any],
        compiled: Compiled,
        value: Any,
        error: EvalError | None,
        parts: tuple[Any, ...],
        path: str,
    ) -> Iterator[Rejection]:
        """The rejection of a rule that failed, in the API server's words; a message expression
        that runs out of the budget stops the object's rules."""
        at = field_path(path, validation.get("fieldPath"))
        failure = CelFailure(validation, compiled, value, error, path)
        given_reason = validation.get("reason")
        reason = given_reason if isinstance(given_reason, str) and given_reason else "FieldValueInvalid"
        if isinstance(error, self.cel.TooLarge):
            said = f"the CEL rule `{compiled.text}` was not evaluated to the end: {error.message}"
            yield Rejection(Check.CEL, parts, at, said, reason, failure, undecided=True)
            return
        if error is not None:
            # What the API server says when a rule fails to evaluate (no such key, no such overload).
            said = f"{error.message} evaluating rule: {compiled.text}"
        else:
            said, cost, stopped = self.cel.message_of(validation, value)
            self.spent += cost
            if stopped is None and self.spent > self.budget:
                stopped = (
                    "messageExpression evaluation failed due to running out of cost budget,"
                    " no further validation rules will be run"
                )
            if stopped is not None:
                yield Rejection(Check.CEL, parts, at, stopped, "FieldValueInvalid", failure)
                self.done = True
                return
        yield Rejection(Check.CEL, parts, at, said, reason, failure)


# A node's rules' outcomes (`_CelRun._node`) where every rule passed -> what they cost together
# (`_passing`): a few dozen distinct tuples a run, most nodes' outcomes one of them.
_PASSING: dict[tuple[Any, ...], int] = {}


def _passing(outcomes: tuple[Any, ...], count: int) -> int:
    """What the `count` rules of a node cost together when `outcomes` holds an outcome for each
    and every one passed with no error (and no cost below zero): `_CelRun._node` then adds the sum
    alone; -1 otherwise, where its loop reads them rule by rule."""
    if len(outcomes) != count:
        return -1
    total = 0
    for outcome in outcomes:
        if outcome is None or outcome[0] is not True or outcome[1] is not None or outcome[2] < 0:
            return -1  # not kept: a failure's outcome holds its error, which the run lets go of
        total += outcome[2]
    if len(_PASSING) > 10_000:
        _PASSING.clear()  # bounded: outcomes are few, but every run of a process adds its own
    _PASSING[outcomes] = total
    return total


def _children(raw: dict[Any, Any], parts: tuple[Any, ...], kids: dict[Any, Any], extra: Any, scalars: bool) -> list[Any]:
    """A map's children whose schema has rules below it (a scalar's: rules of its own), as stack
    entries, in document order; the object's own fields schema validation leaves to others are not."""
    children: list[Any] = []
    for key, child in raw.items():
        if not parts and key in TOP_LEVEL_SKIPPED:
            continue
        collection = type(child) is dict or type(child) is list
        if not collection and (not scalars or child is None):
            continue
        sub = kids.get(key, _UNSET)
        if sub is _UNSET:
            sub = extra
        if sub is not None and (collection or sub.get(VALIDATIONS)):
            children.append((child, sub, (*parts, key)))
    return children


def _out_of_budget(compiled: Compiled, validation: Mapping[str, Any], error: EvalError | None, spent: int) -> str | None:
    """What the API server says when a rule's evaluation was cancelled at the per-call limit or
    the object's budget is spent with it (validation.go), naming the rule; None otherwise."""
    from policylint.k8s import cel
    from policylint.k8s.cel.cost import RUNTIME_BUDGET

    message = validation.get("message")
    named = message.strip() if isinstance(message, str) and message.strip() else compiled.text.strip()
    if isinstance(error, cel.CostExceeded):
        return f"'{error.message}': no further validation rules will be run due to call cost exceeds limit for rule: {named}"
    if spent > RUNTIME_BUDGET:
        return (
            "validation failed due to running out of cost budget, no further validation rules will be run"
            f" (the budget ran out at the rule: {named})"
        )
    return None


# id of a schema node -> whether anything under it has CEL rules (`subtree_has_rules`).
_SUBTREE: dict[int, tuple[Mapping[str, Any], bool]] = {}  # id -> (the node, held: its id stays its own; the answer)
# id of a schema node -> (the node, its properties' schemas where rules are below them (else
# None; None for all: no property or additional property leads to a rule), its
# additionalProperties' schema where rules are below, its items' schema where rules are below,
# whether it has rules, whether a property's or additionalProperties' schema has rules of its own,
# for scalar values). The plan holds the node, so its id stays its own; looked up by the walk
# itself (`_CelRun.run`), once per value, without a call.
_PLANS: dict[int, tuple[Mapping[str, Any], dict[Any, Any] | None, Any, Any, bool, bool]] = {}


def _plan(node: Mapping[str, Any]) -> tuple[Mapping[str, Any], dict[Any, Any] | None, Any, Any, bool, bool]:
    """What `cel_failures` walks under a schema node, worked out once per node."""
    got = _PLANS.get(id(node))
    if got is not None and got[0] is node:
        return got
    properties = node.get("properties") or {}
    additional = node.get("additionalProperties")
    kids: dict[Any, Any] | None = {k: sub if subtree_has_rules(sub) else None for k, sub in properties.items()}
    extra = additional if isinstance(additional, dict) and subtree_has_rules(additional) else None
    if extra is None and not any(v is not None for v in kids.values()):  # type: ignore[union-attr]
        kids = None
    items = node.get("items")
    each = items if isinstance(items, dict) and subtree_has_rules(items) else None
    # Scalar values with rules of their own (`duration(self) > duration('0s')`, a string's
    # `self.size() == 0`): the walk looks at a map's scalars only where these say so.
    scalars = any(isinstance(sub, dict) and sub.get(VALIDATIONS) for sub in properties.values()) or bool(
        extra is not None and extra.get(VALIDATIONS)
    )
    plan = (node, kids, extra, each, bool(node.get(VALIDATIONS)), scalars)
    if len(_PLANS) > 100_000:
        _PLANS.clear()  # CRDs read from many inputs in one process (tests): keep the cache bounded
    _PLANS[id(node)] = plan
    return plan


_END: Any = object()  # on the walk's stack: the subtree above is done


def subtree_has_rules(node: Mapping[str, Any]) -> bool:
    """Whether a schema node or anything under it has CEL rules (cached by the node's identity)."""
    got = _SUBTREE.get(id(node))
    if got is not None and got[0] is node:
        return got[1]
    found = bool(node.get(VALIDATIONS))
    if not found:
        children: list[Any] = [*(node.get("properties") or {}).values(), node.get("items"), node.get("additionalProperties")]
        found = any(isinstance(c, dict) and subtree_has_rules(c) for c in children)
    if len(_SUBTREE) > 100_000:
        _SUBTREE.clear()  # CRDs read from many inputs in one process (tests): keep the cache bounded
    _SUBTREE[id(node)] = (node, found)
    return found


def cel_nodes(
    data: Mapping[str, Any], schema: Mapping[str, Any]
) -> Iterator[tuple[tuple[str | int, ...], Any, Mapping[str, Any]]]:
    """(path, value, schema node) for every node of the object with CEL rules, parents first, in
    document order; metadata, status and unrendered template values are left out."""
    stack: list[tuple[Any, Mapping[str, Any], tuple[str | int, ...]]] = [(data, schema, ())]
    while stack:
        value, node, path = stack.pop()
        if value is None or template(value):
            continue
        if node.get(VALIDATIONS):
            yield path, value, node
        children: list[tuple[Any, Mapping[str, Any], tuple[str | int, ...]]] = []
        if type(value) is dict:
            properties = node.get("properties") or {}
            additional = node.get("additionalProperties")
            for key, child in value.items():
                if not path and key in TOP_LEVEL_SKIPPED:
                    continue
                sub = properties.get(key)
                if sub is None and isinstance(additional, dict):
                    sub = additional
                if sub is not None and (
                    ((type(child) is dict or type(child) is list) and subtree_has_rules(sub)) or sub.get(VALIDATIONS)
                ):
                    children.append((child, sub, (*path, key)))
        elif type(value) is list:
            items = node.get("items")
            if isinstance(items, dict) and subtree_has_rules(items):
                children.extend((item, items, (*path, i)) for i, item in enumerate(value))
        stack.extend(reversed(children))


def root_value(data: Mapping[str, Any], schema: Mapping[str, Any], memo: dict[int, Any]) -> Any:
    """The object as rules on the schema's root see it: without status, with apiVersion, kind
    and of metadata only name and generateName (what the API server lets root rules read)."""
    from policylint.k8s import cel

    body = {k: v for k, v in data.items() if k not in TOP_LEVEL_SKIPPED}
    value = cel.to_cel(
        body,
        {**schema, "properties": {k: v for k, v in (schema.get("properties") or {}).items() if k not in TOP_LEVEL_SKIPPED}},
        memo,
    )
    if type(value) is dict:
        for key in ("apiVersion", "kind"):
            if isinstance(data.get(key), str):
                value[key] = data[key]
        metadata = data.get("metadata")
        if isinstance(metadata, dict):
            value["metadata"] = {k: metadata[k] for k in ("name", "generateName") if isinstance(metadata.get(k), str)}
    return value


def field_path(path: str, field_path: Any) -> str:
    """The node's path extended by a validation's `fieldPath` (`.spec.foo`, `['a.b']`), relative
    to the node; the node's own path when it has none or it cannot be read."""
    if not isinstance(field_path, str) or not field_path:
        return path
    parts: list[str | int] = []
    i, n = 0, len(field_path)
    while i < n:
        if field_path[i] == ".":
            j = i + 1
            while j < n and field_path[j] not in ".[":
                j += 1
            if j == i + 1:
                return path
            parts.append(field_path[i + 1 : j])
            i = j
        elif field_path.startswith("['", i):
            j = field_path.find("']", i + 2)
            if j < 0:
                return path
            parts.append(field_path[i + 2 : j])
            i = j + 2
        elif field_path[i] == "[":
            j = field_path.find("]", i + 1)
            if j < 0 or not field_path[i + 1 : j].isdigit():
                return path
            parts.append(int(field_path[i + 1 : j]))
            i = j + 1
        else:
            return path
    extra = format_path(tuple(parts))
    if not path:
        return extra
    return path + (extra if extra.startswith("[") else "." + extra)
