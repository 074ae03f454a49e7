"""Whether another plausible schema admits an object the first one admits, walking only where the
two schemas differ (policylint.k8s.dissent asks; docs/semantics.md#the-cluster-model).

The bundled releases' schemas share every unchanged subtree as one object
(`policylint.k8s.schemas._interned`). For a pair of schemas of one kind (the first plausible one,
the other one) a `Difference` is worked out once per pair of nodes: the positions (field,
additional field, list item, from the root down) where the other schema checks a value otherwise
(`Difference.local`: its node with each child a stub the walk does not enter), holds CEL rules on
a node that is not the first's (`Difference.rules`), or where either has alternatives.

Why an object that reaches no difference is admitted by the other schema exactly when it is by the
first, and why, when it does, checking only those positions is enough to prove it admitted:

* The schema walk (policylint.k8s.schemawalk) judges a value at a position by that position's
  node and the value alone, except for three things a node reads of its children (a child's
  `default` for `required`, the items' `type` and `nullable` for null items, the items'
  properties' `default` for the keys of a map list), which `_signature` compares and the stubs
  keep: two nodes with one signature refuse the same values there. Then there is the budget of
  allOf/anyOf/oneOf/not, shared by the whole object (`_Budget`): an alternative past it counts as
  matched, so whether one at a shared position is checked depends on what alternatives elsewhere
  spent. Hence an object whose value reaches a node with alternatives in either schema is walked
  whole (`Difference.combined`); otherwise no budget is spent anywhere, and at a shared position
  the other schema makes the very checks the first made, which found nothing.
* A CEL rule reads its node's value converted under that node (`cel.to_cel`), which the node's
  subtree alone decides: a rule of a shared node has the same outcome and cost in both. A node
  with a difference below it is itself a difference (sharing is bottom up), so every rule whose
  converted value a difference can change is on a differing position and is evaluated again, with
  the other schema's node (or, where the value converts alike under both nodes and the rule is
  the first's too, takes the outcome the first's walk kept: `converts_alike`). Only the object's runtime cost budget couples the rules: the other
  schema's total is the first's (`Catalogue.cel_spent`, at most the budget, since the first
  admits the object), less what the first spent at differing positions, plus what the other
  spends there; the differential walk admits only when the first's total plus the other's spend at
  differing positions stays within the budget.

The walk itself takes three shortcuts, none of which changes an answer:

* All the pairs of an object are walked at once (`admits_all`): a stack entry holds each pair's
  difference at the value's position, and each pair keeps its own refusal and cost, so each
  pair's answer is the one a walk of that pair alone gives. Where pairs hold the same
  `Difference` at a position (their other schemas share the node and all below it), its checks
  and rules are made once and their cost counted for each.
* A subtree whose content was seen at the same difference with nothing refused below it takes
  what its rules cost there (its shape, `cel.shape`, says the content is the same).
* The other schema's own checks at a position (`Difference.local`, whose children are stubs the
  schema walk does not enter) are kept by what the walk reads of the value there (`_read`): a
  scalar itself; a map's fields and which are null; a list's nulls, or all of it where the node
  has a list type. Two values with one such key are refused alike.

So the differential answer is "admitted" only when the full walk's is; anything else (a violation,
a failing or undecided rule, a cost that might exceed the budget, a node with alternatives, the
first's cost unknown) is answered by walking the other schema whole, as before. The answer is
also kept between runs (`kept_key`), beside the full verdicts (policylint.k8s.admission).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from policylint.identity import IdentityMap
from policylint.k8s.schemas import COMBINED
from policylint.k8s.schemawalk import CHECKED, LIST_TYPE, violations, violations_below
from policylint.k8s.verdicts import TOP_LEVEL_SKIPPED, VALIDATIONS, template
from policylint.k8s.verdicts import kept_key as verdict_key
from policylint.values import record

if TYPE_CHECKING:
    from policylint.k8s.admissions import Admissions
    from policylint.k8s.objects import K8sObject

_CHILDREN = ("properties", "items", "additionalProperties")
_UNSET: Any = object()


@record
class Difference:
    """One position of a pair of schemas where something is to be looked at: the other schema
    checks the value there otherwise than the first (`local`), its CEL rules may read it otherwise
    (`rules`), a node with alternatives is there (`combined`), or such a position is below."""

    node: Mapping[str, Any] | None  # the other schema's node here (None: it defines no field here)
    local: Mapping[str, Any] | None  # the other's node with its children as stubs, where its own checks differ
    rules: bool  # the nodes differ and the other's has CEL rules: they are evaluated again here
    # The first's node where it has rules too (None otherwise): where it converts the value as the
    # other does (`converts_alike`), the outcome of a rule it shares, kept by the first's walk, is
    # the other's.
    same: Mapping[str, Any] | None
    combined: bool  # either node has allOf, anyOf, oneOf or not: the object is walked whole
    properties: dict[str, Difference | None]  # the fields either node names -> what is below
    extra: Difference | None  # any other field (the additionalProperties of both)
    items: Difference | None  # a list's items


_PAIRS: dict[tuple[int, int], tuple[Mapping[str, Any], Mapping[str, Any], Difference | None]] = {}


def difference(first: Mapping[str, Any], other: Mapping[str, Any]) -> Difference | None:
    """The difference of two root schemas of one kind (None: nothing to look at, the first's
    verdict is the other's), worked out once per process (bundled schemas live for the process;
    the entry holds both, so their ids stay theirs)."""
    key = (id(first), id(other))
    got = _PAIRS.get(key)
    if got is None:
        got = _PAIRS[key] = (first, other, _difference(first, other))
    return got[2]


def _route(node: Any, key: str) -> Any:
    """The schema of field `key` under `node` (None: it defines none)."""
    if not isinstance(node, Mapping):
        return None
    found = (node.get("properties") or {}).get(key)
    if found is None:
        extra = node.get("additionalProperties")
        found = extra if isinstance(extra, Mapping) else None
    return found


def _child(node: Any, name: str) -> Any:
    if not isinstance(node, Mapping):
        return None
    found = node.get(name)
    return found if isinstance(found, Mapping) else None


_ALTERNATIVES: IdentityMap[Mapping[str, Any], bool] = IdentityMap()


def _has_alternatives(node: Any) -> bool:
    """Whether a node or one below it has allOf, anyOf, oneOf or not (`schemas.COMBINED`)."""
    if not isinstance(node, Mapping):
        return False
    got = _ALTERNATIVES.get(node)
    if got is not None:
        return got
    found = COMBINED in node or any(
        _has_alternatives(sub)
        for sub in (*(node.get("properties") or {}).values(), node.get("items"), node.get("additionalProperties"))
    )
    _ALTERNATIVES[node] = found
    return found


# (id(first node), id(other node)) -> (both, their difference): one object per pair of nodes,
# whichever pair of schemas holds them, so that what is kept by a difference's identity (the
# walk's memo entries, `_Differential`) serves every pair of releases that shares it.
_DIFFERENCES: dict[tuple[int, int], tuple[Any, Any, Difference | None]] = {}


def _difference(first: Any, other: Any) -> Difference | None:
    key = (id(first), id(other))
    got = _DIFFERENCES.get(key)
    if got is not None and got[0] is first and got[1] is other:
        return got[2]
    found = _DIFFERENCES[key] = (first, other, _differ(first, other))
    return found[2]


def _differ(first: Any, other: Any) -> Difference | None:
    if (first is other or other is None) and not _has_alternatives(first) and not _has_alternatives(other):
        # The same node (or none in the other schema, which then checks nothing here), and no
        # alternatives: the first schema's verdict here is the other's.
        return None
    differs = first is not other and other is not None
    names = sorted({*((first or {}).get("properties") or {}), *((other or {}).get("properties") or {})})
    properties = {name: _difference(_route(first, name), _route(other, name)) for name in names}
    extra = _difference(_child(first, "additionalProperties"), _child(other, "additionalProperties"))
    items = _difference(_child(first, "items"), _child(other, "items"))
    local = _local(other) if differs and (first is None or _signature(first) != _signature(other)) else None
    rules = differs and bool(other.get(VALIDATIONS))
    same = first if rules and first is not None and first.get(VALIDATIONS) else None
    combined = COMBINED in (first or {}) or COMBINED in (other or {})
    if local is None and not rules and not combined and extra is None and items is None and not any(properties.values()):
        return None  # nothing here or below to look at: the nodes differ only in what is not read
    return Difference(other, local, rules, same, combined, properties if any(properties.values()) else {}, extra, items)


_CONVERSIONS: dict[Any, int] = {}  # what conversion reads at a node, by content -> its number
_CONVERTED: IdentityMap[Mapping[str, Any], int] = IdentityMap()  # node -> its number


def _converts(node: Any) -> int:
    """A number for what `cel.to_cel` reads at a node to convert any value there, besides what it
    reads of the children it descends into, of the enumeration (`_unlike` compares it with the
    value) and of which fields it names (`_unlike` compares the fields the value has): its own
    keywords but the checks of values and `required` (which only notes a missing field, a schema
    rejection), whether it names fields at all, and the defaults it sets (with how they convert).
    Cached by identity."""
    if not isinstance(node, Mapping):
        return _CONVERSIONS.setdefault(("", repr(node)), len(_CONVERSIONS))
    got = _CONVERTED.get(node)
    if got is not None:
        return got
    properties = node.get("properties")
    extra = node.get("additionalProperties")
    items = node.get("items")
    key = (
        repr(sorted((k, v) for k, v in node.items() if k not in _CHILDREN and k not in _CHECKS and k not in _VALUE_READ)),
        repr(properties)
        if not isinstance(properties, Mapping)
        else tuple(sorted((k, repr(v["default"]), _converts(v)) for k, v in properties.items() if "default" in v)),
        "{}" if isinstance(extra, Mapping) else repr(extra),
        "{}" if isinstance(items, Mapping) else repr(items),
    )
    number = _CONVERSIONS.setdefault(key, len(_CONVERSIONS))
    _CONVERTED[node] = number
    return number


_VALUE_READ = frozenset({"enum", "required"})
_PRESENT: Any = object()  # a field routed to a node in one schema only: converted otherwise if present
_ALIKE: dict[tuple[int, int], tuple[Any, Any, Any]] = {}


def _unlike(first: Any, other: Any) -> Any:
    """Where two nodes may convert a value otherwise (`_converts`), worked out once per pair: None
    (nowhere: every value converts alike), `_PRESENT` (everywhere), or (fields, additional
    fields, items, the two enumerations where they differ), each field None, `_PRESENT` or the
    same below."""
    if first is other:
        return None
    key = (id(first), id(other))
    got = _ALIKE.get(key)
    if got is not None and got[0] is first and got[1] is other:
        return got[2]
    if not isinstance(first, Mapping) or not isinstance(other, Mapping) or _converts(first) != _converts(other):
        found: Any = _PRESENT
    else:
        names = {*(first.get("properties") or {}), *(other.get("properties") or {})}
        fields = {}
        for name in names:
            a, b = _route(first, name), _route(other, name)
            below = _PRESENT if (a is None) != (b is None) else _unlike(a, b)
            if below is not None:
                fields[name] = below
        a, b = _child(first, "additionalProperties"), _child(other, "additionalProperties")
        extra = _PRESENT if (a is None) != (b is None) else _unlike(a, b)
        a, b = _child(first, "items"), _child(other, "items")
        items = _PRESENT if (a is None) != (b is None) else _unlike(a, b)
        enums = (first.get("enum"), other.get("enum")) if first.get("enum") != other.get("enum") else None
        found = None if not fields and extra is None and items is None and enums is None else (fields, extra, items, enums)
    _ALIKE[key] = (first, other, found)
    return found


def converts_alike(value: Any, first: Mapping[str, Any], other: Mapping[str, Any]) -> bool:
    """Whether `cel.to_cel` converts the value to the same CEL value under both nodes: they read
    the same at every position the value reaches (`_converts`), route each of its fields to a
    node in both or in neither, and take or refuse each scalar in both enumerations alike
    (`_unlike`). False may be wrong (a field routed to additionalProperties that conversion
    prunes), never True."""
    stack = [(value, _unlike(first, other))]
    while stack:
        value, unlike = stack.pop()
        if unlike is None:
            continue
        if unlike is _PRESENT:
            return False
        fields, extra, items, enums = unlike
        if enums is not None and not _enumerated_alike(value, *enums):
            return False
        if type(value) is dict:
            for key, child in value.items():
                below = fields.get(key, extra) if type(key) is str else None
                if below is not None:
                    stack.append((child, below))
        elif type(value) is list and items is not None:
            stack.extend((item, items) for item in value)
    return True


def _enumerated_alike(value: Any, first: Any, other: Any) -> bool:
    """Whether two enumerations both take the value or both refuse it, as conversion reads them
    (`cel.convert._enumerated`: a scalar outside a list enumeration is refused)."""
    if type(value) not in (str, int, float, bool):
        return True  # a null, a map or a list: not compared with the enumeration
    return (isinstance(first, list) and value not in first) == (isinstance(other, list) and value not in other)


# The keywords that check a value without changing what it converts to (besides the CEL rules,
# which `Difference.same` compares apart).
_CHECKS = frozenset(
    {
        "pattern",
        "minLength",
        "maxLength",
        "minItems",
        "maxItems",
        "minProperties",
        "maxProperties",
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "x-kubernetes-list-type",
        "x-kubernetes-list-map-keys",
        VALIDATIONS,
    }
)


def _signature(node: Mapping[str, Any]) -> Any:
    """What the schema walk reads at a node to check the value there, besides the value: its own
    keywords, its fields' names and defaults, whether it has additional fields, its items' type,
    nullability and fields' defaults (`schemawalk._Walk._visit`). Two nodes with one signature
    refuse the same values there."""
    own = {k: v for k, v in node.items() if k not in _CHILDREN}
    properties = node.get("properties")
    extra = node.get("additionalProperties")
    items = node.get("items")
    return (
        own,
        None if properties is None else {k: (v.get("default", _UNSET), "default" in v) for k, v in properties.items()},
        extra if not isinstance(extra, Mapping) else "{}",
        _stub(items) if isinstance(items, Mapping) else items,
    )


def _stub(node: Mapping[str, Any]) -> Mapping[str, Any]:
    """A child as its parent's checks read it (its default, its type and nullability for null list
    items, its fields' defaults for a map list's keys), which the walk does not enter (`CHECKED`)."""
    stub: dict[str, Any] = {CHECKED: True}
    for name in ("default", "type", "nullable", "x-kubernetes-int-or-string"):
        if name in node:
            stub[name] = node[name]
    defaults = {k: {"default": v["default"]} for k, v in (node.get("properties") or {}).items() if "default" in v}
    if defaults:
        stub["properties"] = defaults
    return stub


def _local(node: Mapping[str, Any]) -> Mapping[str, Any]:
    """The node with each child a stub: the schema walk checks the value at this position alone
    (its children have positions of their own)."""
    out: dict[str, Any] = {k: v for k, v in node.items() if k not in _CHILDREN}
    properties = node.get("properties")
    if isinstance(properties, Mapping):
        out["properties"] = {name: _stub(sub) for name, sub in properties.items()}
    elif "properties" in node:
        out["properties"] = properties
    for name in ("additionalProperties", "items"):
        if name in node:
            sub = node[name]
            out[name] = _stub(sub) if isinstance(sub, Mapping) else sub
    return out


# -- the answer ----------------------------------------------------------------------------------


def admits(
    admissions: Admissions, obj: K8sObject, first: Mapping[str, Any], other: Mapping[str, Any], shapes: dict[int, Any]
) -> bool | None:
    """True: `other` admits the object, which `first` admits (its verdict is known and admits);
    None: not shown without walking `other` whole (the caller does). `shapes` is a memo of
    `cel.shape` whose maps and lists stay alive while it is used (the object's, or the run's:
    `Catalogue.shapes`, where the subtrees objects share, one object each since the loader makes
    them so, are shaped once per run)."""
    return admits_all(admissions, obj, first, [other], shapes)[0]


def admits_all(
    admissions: Admissions,
    obj: K8sObject,
    first: Mapping[str, Any],
    others: list[Mapping[str, Any]],
    shapes: dict[int, Any],
) -> list[bool | None]:
    """`admits` for each of `others`, in one walk of the object: each value is visited once for
    all the pairs whose differences it reaches, and a position where several pairs hold the same
    `Difference` (their other schemas share the node: releases that did not change it) is
    answered once for all of them."""
    data = obj.data
    if not isinstance(data, dict):
        return [None] * len(others)
    catalogue = admissions.catalogue
    spent = catalogue.cel_spent.get((obj, catalogue.schema_numbers(first)))
    if spent is None:
        return [None] * len(others)  # the first's verdict was kept between runs: its rules' cost is not known
    roots = [difference(first, other) for other in others]
    if not any(roots):
        return [True] * len(others)
    from policylint.k8s.cel.cost import RUNTIME_BUDGET

    walk = _Differential(admissions, obj, shapes)
    walk.run(data, roots)
    return [None if dead or spent + cost > RUNTIME_BUDGET else True for dead, cost in zip(walk.dead, walk.costs)]


_END: Any = object()  # on the walk's stack: the subtree above is done


class _Differential:
    """The positions of an object's value that reach a difference of any of its pairs
    (`Difference`), walked once for all of them, with each other schema's checks made and CEL
    rules evaluated at each of its differing positions, as `celrules.cel_failures` evaluates them
    (with the same memo tables), and what they cost per pair.

    A map or list whose content was seen at the same `Difference` with nothing refused below it
    is not walked again: (id(difference), "!=", (its shape,)) -> what its rules cost there, in
    the catalogue's `cel_results`. Repositories repeat their routes' rules and filters, so most
    objects' differing subtrees are answered by one lookup."""

    __slots__ = (
        "cel",
        "checked",
        "costs",
        "data",
        "dead",
        "keep",
        "malformed",
        "memo",
        "per_call",
        "results",
        "shapes",
        "spent",
    )

    def __init__(self, admissions: Admissions, obj: K8sObject, shapes: dict[int, Any]) -> None:
        from policylint.k8s import cel
        from policylint.k8s.cel.cost import PER_CALL_LIMIT

        self.cel = cel
        self.per_call = PER_CALL_LIMIT
        self.data = obj.data
        self.malformed = admissions.index.malformed(obj)
        # An object with a value of the wrong type skips the rules there (as the full walk does):
        # what its subtrees cost is not what the same content costs elsewhere, so it is not kept.
        self.keep = not self.malformed.problems
        self.results: dict[Any, Any] = admissions.catalogue.cel_results
        self.checked: dict[Any, Any] = admissions.catalogue.schema_results
        self.shapes = shapes
        self.memo: dict[int, Any] = {}
        self.spent = 0  # what the rules of the position being checked spent
        self.dead: list[bool] = []
        self.costs: list[int] = []

    def run(self, data: Mapping[str, Any], roots: list[Difference | None]) -> None:
        """Walk the value along the positions that reach some pair's difference (`roots`, one per
        pair), making each pair's checks there: `dead[i]` when something there is refused by the
        i-th other schema or it has alternatives (not shown here), `costs[i]` what its rules
        spent. A stack entry holds, per pair, the difference at the value's position (None:
        nothing left for that pair below)."""
        pairs = len(roots)
        self.dead = dead = [False] * pairs
        self.costs = costs = [0] * pairs
        stack: list[tuple[Any, Any, Any]] = [(data, tuple(roots), ())]
        shape, shapes, results = self.cel.shape, self.shapes, self.results
        while stack:
            value, heres, parts = stack.pop()
            if value is _END:
                i, slot, before = heres
                if self.keep and not dead[i]:
                    results[slot] = costs[i] - before
                continue
            if value is None or template(value):
                continue  # the walks skip a null and an unrendered value, and all below it
            collection = type(value) is dict or type(value) is list
            whole = shape(value, shapes) if parts and collection else None
            live = self._position(value, heres, parts, whole, stack)
            if not any(live):
                continue
            if type(value) is dict:
                for key, child in value.items():
                    if not parts and key in TOP_LEVEL_SKIPPED:
                        continue
                    below = tuple(None if h is None else h.properties.get(key, h.extra) for h in live)
                    if any(below):
                        stack.append((child, below, (*parts, key)))
            elif type(value) is list:
                items = tuple(None if h is None else h.items for h in live)
                if any(items):
                    stack.extend((item, items, (*parts, i)) for i, item in enumerate(value))

    def _position(
        self, value: Any, heres: tuple[Difference | None, ...], parts: tuple[str | int, ...], whole: Any, stack: list[Any]
    ) -> list[Difference | None]:
        """Each pair's checks at one position: the differences to walk below it, per pair (None: the
        pair is done here, its subtree's cost taken from the memo, or refused). A subtree whose
        content was seen at the same difference with nothing refused below it takes what its rules
        cost there, (id(difference), "!=", (its shape,)), in the catalogue's `cel_results`; else
        an `_END` entry keeps it when its subtree is done."""
        dead, costs, results = self.dead, self.costs, self.results
        live: list[Difference | None] = []
        done: dict[int, Any] = {}  # id(difference) -> what it spent here (None: refused), once per difference
        for i, here in enumerate(heres):
            if here is None or dead[i]:
                live.append(None)
                continue
            if here.combined:
                dead[i] = True
                live.append(None)
                continue
            if whole is not None:
                slot = (id(here), "!=", (whole,))
                cost = results.get(slot)
                if cost is not None:
                    costs[i] += cost
                    live.append(None)
                    continue
                stack.append((_END, (i, slot, costs[i]), None))
            got = done.get(id(here), _UNSET)
            if got is _UNSET:
                self.spent = 0
                got = done[id(here)] = self.spent if self._accepted(value, here, parts) else None
            if got is None:
                dead[i] = True
                live.append(None)
                continue
            costs[i] += got
            live.append(here)
        return live

    def _accepted(self, value: Any, here: Difference, parts: tuple[str | int, ...]) -> bool:
        """Whether the other schema's checks and CEL rules at this position refuse nothing."""
        if here.local is not None and not self._checked(value, here.local, parts):
            return False
        node = here.node
        return not here.rules or node is None or self.malformed.broken(*parts) or self._rules(value, node, here.same, parts)

    def _checked(self, value: Any, local: Mapping[str, Any], parts: tuple[str | int, ...]) -> bool:
        """Whether the other schema's checks at this position (`Difference.local`) refuse nothing
        in the value; kept by what they read of it (`_read`), (id(local), ("!=", that)) -> True,
        in the catalogue's `schema_results`."""
        if not parts:
            return not violations(value, local)
        read = _read(value, local, self.cel.shape, self.shapes)
        slot = (id(local), ("!=", read)) if read is not None else None
        if slot is not None and slot in self.checked:
            return True
        if violations_below(value, local):
            return False
        if slot is not None:
            self.checked[slot] = True
        return True

    def _rules(self, raw: Any, node: Mapping[str, Any], same: Mapping[str, Any] | None, parts: tuple[str | int, ...]) -> bool:
        """Whether every rule of the node passes on the value, adding what they cost: as
        `celrules._CelRun._node` runs them (the outcomes of all the node's rules kept by the
        value's content, each rule's by what it reads; a value of the wrong type ends the node's
        rules), sharing its memo entries."""
        cel = self.cel
        rules = cel.node_rules(node)
        whole = cel.shape(raw, self.shapes) if parts else None
        node_slot = (id(node), "", (whole,)) if whole is not None else None
        known = self.results.get(node_slot) if node_slot is not None else None
        shared: dict[str, Any] = {}
        if known is None and same is not None and whole is not None:
            first = self.results.get((id(same), "", (whole,)))
            if first is not None and converts_alike(raw, same, node):
                # The same rule on the same value: the outcome the first's walk kept.
                shared = {compiled.text: outcome for (_, compiled), outcome in zip(cel.node_rules(same), first)}
        seen: list[Any] = []
        value: Any = _UNSET
        for i, (_, compiled) in enumerate(rules):
            if known is not None:
                outcome = known[i] if i < len(known) else None
            else:
                outcome = shared.get(compiled.text, _UNSET)
                if outcome is _UNSET:
                    outcome, value = self._outcome(compiled, raw, node, parts, value)
                seen.append(outcome)
            if outcome is None:
                break  # a value the schema refuses: no rule runs on it (the schema walk's finding)
            passed, error, cost = outcome
            self.spent += cost
            if not passed and not isinstance(error, cel.BadValue):
                return False
        if known is None and node_slot is not None:
            self.results[node_slot] = tuple(seen)
        return True

    def _outcome(
        self, compiled: Any, raw: Any, node: Mapping[str, Any], parts: tuple[str | int, ...], value: Any
    ) -> tuple[Any, Any]:
        """A rule's outcome on the node's value (`celrules._CelRun._outcome`), and the value if it
        was worked out."""
        from policylint.k8s.celrules import root_value

        cel = self.cel
        key = cel.result_key(compiled, raw, self.shapes, node) if parts else None
        slot = (id(node), compiled.text, key) if key is not None else None
        outcome = self.results.get(slot, _UNSET) if slot is not None else _UNSET
        if outcome is _UNSET:
            if value is _UNSET:
                value = cel.to_cel(raw, node, self.memo) if parts else root_value(self.data, node, self.memo)
            outcome = None if value is cel.BAD else cel.evaluate_within(compiled, value, self.per_call)
            if slot is not None:
                self.results[slot] = outcome
        return outcome, value


def _read(value: Any, local: Mapping[str, Any], shape: Any, shapes: dict[int, Any]) -> Any:
    """What the schema walk reads of a value to check it under a node whose children are stubs it
    does not enter (`_local`), as a hashable key (None: none): a scalar's type and value; a map's
    fields in order, each with whether it is null (its length, the required fields present, which
    fields are unknown: `schemawalk._Walk._map`); a list's nulls (its length, the null items:
    `_Walk._list`), or its whole content where the node has a list type (`_duplicates` compares
    the items) or alternatives. Most of an object's differing positions are maps and lists whose
    content is its own (a route's rules with their backends' names), while what their own checks
    read repeats: keyed by the whole content, the check was never taken from the memo."""
    kind = type(value)
    if COMBINED in local:  # the alternatives read the whole value (the walk never gets here with them)
        whole = shape(value, shapes) if kind is dict or kind is list else None
        return None if whole is None else ("*", whole)
    if kind is str or kind is int or kind is float or kind is bool:
        return (kind, value)
    if kind is dict:
        return ("{}", tuple((key, child is None) for key, child in value.items()))
    if kind is list:
        if LIST_TYPE in local:
            whole = shape(value, shapes)
            return None if whole is None else ("[]", whole)
        return ("[]", tuple(item is None for item in value))
    return None


def kept_key(admissions: Admissions, obj: K8sObject, schema: Mapping[str, Any]) -> str | None:
    """The key under which the answer that `schema` admits the object is kept between runs (None:
    nothing is kept): the full verdict's key (policylint.k8s.admission) with a mark of its own,
    since the differential walk shows admission without the pruned fields a verdict holds."""
    return verdict_key(admissions, obj, schema, mark="admits|")
