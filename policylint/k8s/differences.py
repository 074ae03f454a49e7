"""Where another plausible schema may refuse an object the first one admits: the positions to
walk to prove it admitted (policylint.k8s.differential walks them; policylint.k8s.dissent asks;
docs/semantics.md#the-cluster-model).

The bundled releases' schemas share every unchanged subtree as one object
(`policylint.k8s.schemas._table`). For a pair of schemas of one kind (the first plausible one,
the other one) a `Difference` is worked out once per pair of nodes: the positions (field,
additional field, list item, from the root down) where the other schema checks a value more or
otherwise (`Difference.local`: its node with each child a stub the walk does not enter), holds CEL
rules whose outcome on the value the first's do not settle (`Difference.rules`), or where either
has alternatives.

The differential walk is asked only of objects the first schema admits whole: no schema violation
anywhere, no CEL rule refusing it, its rules' cost within the budget. Why an object that reaches
no difference is admitted by the other schema too, and why, when it does, checking only those
positions is enough to prove it admitted:

* The schema walk (policylint.k8s.schemawalk) judges a value at a position by that position's
  node and the value alone, except for three things a node reads of its children (a child's
  `default` for `required`, the items' `type` and `nullable` for null items, the items'
  properties' `default` for the keys of a map list), which `_signature` compares and the stubs
  keep; not its CEL rules, nor which fields it names (a field it does not name is pruned, never
  refused, and a named one is checked at its own position). Two nodes with one signature refuse
  the same values there, and a node whose signature is the first's but for checks it does not
  make, an enumeration it widens or required fields it drops (`_within`) refuses none the first
  takes there. Then there is the budget of allOf/anyOf/oneOf/not, shared by the whole object
  (`_Budget`): an alternative past it counts as matched, so whether one at a shared position is
  checked depends on what alternatives elsewhere spent. Hence an object whose value reaches a
  node with alternatives in either schema is walked whole (`Difference.combined`); otherwise no
  budget is spent anywhere, and where the other's checks are the first's (or fewer) they find
  nothing, since the first's found nothing.
* A CEL rule reads its node's value converted under that node (`cel.to_cel`), which the node's
  subtree alone decides: a rule of a shared node has the same outcome and cost in both. A node
  with a difference below it is itself a difference (sharing is bottom up). Where the other
  node's rules are each one of the first node's, and all that each reads of the value
  (`projection.Need`) converts alike under both nodes (`_rules_alike`: the nodes convert
  otherwise only where `_unlike` says, and no rule reads there), each has on every value the
  outcome and cost the first's rule of the same text has: it passed, and what it costs is counted
  in the first's total, which then bounds the other's. Every other rule whose converted value a
  difference can change is on a differing position and is evaluated again, with the other
  schema's node (or, where the value converts alike under both nodes and the rule is the first's
  too, takes the outcome the first's walk kept: `converts_alike`). Only the object's runtime cost
  budget couples the rules: the other schema's total is at most the first's
  (`Catalogue.cel_spent`, at most the budget, since the first admits the object), less what the
  first spent at the differing positions, plus what the other spends there; the differential
  walk admits only when the first's total plus the other's spend at differing positions stays
  within the budget.

So the differential answer is "admitted" only when the full walk's is; anything else (a violation,
a failing or undecided rule, a cost that might exceed the budget, a node with alternatives, the
first's cost unknown) is answered by walking the other schema whole. The converse does not hold
(where the other checks less, it may admit what the first refuses), and is never asked.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from policylint.identity import IdentityMap
from policylint.k8s.schemas import BUILT, COMBINED, built_digest
from policylint.k8s.schemawalk import CHECKED
from policylint.k8s.verdicts import VALIDATIONS
from policylint.values import record

if TYPE_CHECKING:
    pass

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


# The schemas' nodes are dicts (policylint.k8s.schemas builds the bundled ones so, and a CRD's
# `compact`): a node is told from None or a scalar below by `isinstance(_, dict)`, where a check
# against the `Mapping` ABC was a fifth of working a kind's differences out (docs/performance.md).
_PAIRS: dict[tuple[int, int], tuple[Mapping[str, Any], Mapping[str, Any], Difference | None]] = {}


def difference(first: Mapping[str, Any], other: Mapping[str, Any]) -> Difference | None:
    """The difference of two root schemas of one kind (None: nothing to look at, the first's
    verdict is the other's), read from the bundled pairs' data where both are bundled roots
    (`_written`), else worked out; once per process (bundled schemas live for the process; the
    entry holds both, so their ids stay theirs)."""
    key = (id(first), id(other))
    got = _PAIRS.get(key)
    if got is None:
        found = _written(first, other)
        got = _PAIRS[key] = (first, other, _difference(first, other) if found is _UNSET else found)
    return got[2]


# The differences of every pair of bundled roots of one kind, written ahead from the bundled
# table (policylint.k8s.differencesgen): working them out compiled the other releases' CEL rules
# (`_rules_alike`) and compared their nodes, for a tenth of what a run spent on the other
# plausible schemas' answers (docs/performance.md).
DATA = Path(__file__).with_name("schema_differences.json")

# Once the table is built: [None] where the data was not written from it, else [(the table's
# nodes, (first root, other root) -> its row or None, the rows, the rows made so far, id of each
# root the pairs name -> its number)].
_WRITTEN: list[Any] = []


def _written(first: Mapping[str, Any], other: Mapping[str, Any]) -> Any:
    """The difference of two bundled roots as the data says (None: none), or `_UNSET` where it
    does not say: a schema that is not a bundled root (a CRD's), a pair it does not hold, or data
    written from another table than the one built, which is never believed."""
    if not _WRITTEN:
        if not BUILT:
            return _UNSET  # no bundled schema read yet: neither is one
        _WRITTEN.append(_read_data(BUILT[-1][0], built_digest()))
    data = _WRITTEN[0]
    if data is None:
        return _UNSET
    built, pairs, _, _, roots = data
    a, b = roots.get(id(first)), roots.get(id(other))
    if a is None or b is None or built[a] is not first or built[b] is not other:
        return _UNSET
    row = pairs.get((a, b), _UNSET)
    return row if row is None or row is _UNSET else _made(data, row)


def _read_data(built: list[Any], digest: str) -> Any:
    """The data bound to the built table, or None where its digest is another table's (or it
    cannot be read): every pair is then worked out."""
    import json

    try:
        raw = json.loads(DATA.read_bytes())
        if raw["table"] != digest:
            return None
        pairs = {(a, b): row for a, b, row in raw["pairs"]}
        roots = {id(built[n]): n for pair in pairs for n in pair}
        return (built, pairs, raw["differences"], [None] * len(raw["differences"]), roots)
    except (OSError, ValueError, KeyError, TypeError, IndexError):
        return None


def _made(data: Any, at: int) -> Difference:
    """The `Difference` of row `at`, made once, its rows below first: the one `_differ` gives for
    its pair of nodes (the fields either node names that have nothing below are None, as there),
    and kept as `_difference` keeps it, so that a pair worked out later shares it."""
    built, _, rows, made, _ = data
    got = made[at]
    if got is not None:
        return got  # type: ignore[no-any-return]
    first_at, other_at, local, rules, same, combined, below, extra, items = rows[at]
    first = None if first_at is None else built[first_at]
    other = None if other_at is None else built[other_at]
    key = (id(first), id(other))
    kept = _DIFFERENCES.get(key)
    if kept is not None and kept[0] is first and kept[1] is other and kept[2] is not None:
        made[at] = kept[2]
        return kept[2]
    properties: dict[str, Difference | None] = {}
    if below:
        names = sorted({*((first or {}).get("properties") or {}), *((other or {}).get("properties") or {})})
        properties = {name: _made(data, below[name]) if name in below else None for name in names}
    found = Difference(
        other,
        _local(other) if local and other is not None else None,
        bool(rules),
        None if same is None else built[same],
        bool(combined),
        properties,
        None if extra is None else _made(data, extra),
        None if items is None else _made(data, items),
    )
    made[at] = found
    _DIFFERENCES[key] = (first, other, found)
    return found


def _route(node: Any, key: str) -> Any:
    """The schema of field `key` under `node` (None: it defines none)."""
    if not isinstance(node, dict):
        return None
    found = (node.get("properties") or {}).get(key)
    if found is None:
        extra = node.get("additionalProperties")
        found = extra if isinstance(extra, dict) else None
    return found


def _child(node: Any, name: str) -> Any:
    if not isinstance(node, dict):
        return None
    found = node.get(name)
    return found if isinstance(found, dict) else None


_ALTERNATIVES: IdentityMap[Mapping[str, Any], bool] = IdentityMap()


def _has_alternatives(node: Any) -> bool:
    """Whether a node or one below it has allOf, anyOf, oneOf or not (`schemas.COMBINED`)."""
    if not isinstance(node, dict):
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
    local = _local(other) if differs and (first is None or not _within(first, other)) else None
    rules = differs and bool(other.get(VALIDATIONS)) and not _rules_alike(first, other)
    same = first if rules and first is not None and first.get(VALIDATIONS) else None
    combined = COMBINED in (first or {}) or COMBINED in (other or {})
    if local is None and not rules and not combined and extra is None and items is None and not any(properties.values()):
        return None  # nothing here or below to look at: the nodes differ only in what is not read
    return Difference(other, local, rules, same, combined, properties if any(properties.values()) else {}, extra, items)


def _rules_alike(first: Any, other: Mapping[str, Any]) -> bool:
    """Whether the other node's CEL rules have, on every value, the outcome and cost that the
    first's rules of the same text have (so nothing is to be evaluated here): each is one of the
    first's, and what it reads of the value (`projection.Need`) converts alike under both nodes
    (`_unlike`, `_read_alike`): a route rule's rules read its matches and filters' types, where
    the releases differ in fields beside them (`sessionPersistence`, `retry`)."""
    if not isinstance(first, dict) or not first.get(VALIDATIONS):
        return False
    from policylint.k8s import cel

    theirs = {compiled.text for _, compiled in cel.node_rules(first)}
    unlike = _unlike(first, other)
    return all(compiled.text in theirs and _read_alike(compiled.need, unlike) for _, compiled in cel.node_rules(other))


def _read_alike(need: Any, unlike: Any) -> bool:
    """Whether all that a rule reading `need` of a value observes converts alike under two nodes
    that convert otherwise only where `unlike` says (`_unlike`). False may be wrong, never True:
    a whole read, an escaped field name, an enumeration, a map's size or a comprehension over a
    map where fields convert otherwise, and a field one node prunes, are all False."""
    if unlike is None:
        return True
    if need is None or unlike is _PRESENT or need.whole or need.escaped:
        return False
    fields, extra, items, enums = unlike
    if enums is not None or (need.size and (fields or extra is not None)):
        return False  # a scalar refused by one enumeration; a map's size counts what one prunes
    for name, sub in need.fields.items():
        below = fields.get(name, extra)
        if below is not None and not _read_alike(sub, below):
            return False
    if need.items is not None:
        if fields or extra is not None:
            return False  # a comprehension over a map reads its keys, which one may prune
        return _read_alike(need.items, items)
    return True


_CONVERSIONS: dict[Any, int] = {}  # what conversion reads at a node, by content -> its number
_CONVERTED: IdentityMap[Mapping[str, Any], int] = IdentityMap()  # node -> its number


def _converts(node: Any) -> int:
    """A number for what `cel.to_cel` reads at a node to convert any value there, besides what it
    reads of the children it descends into, of the enumeration (`_unlike` compares it with the
    value) and of which fields it names (`_unlike` compares the fields the value has): its own
    keywords but the checks of values and `required` (which only notes a missing field, a schema
    rejection), whether it names fields at all, and the defaults it sets (with how they convert).
    Cached by identity."""
    if not isinstance(node, dict):
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
        if not isinstance(properties, dict)
        else tuple(sorted((k, repr(v["default"]), _converts(v)) for k, v in properties.items() if "default" in v)),
        "{}" if isinstance(extra, dict) else repr(extra),
        "{}" if isinstance(items, dict) else repr(items),
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
    if not isinstance(first, dict) or not isinstance(other, dict) or _converts(first) != _converts(other):
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


def converts_alike(
    value: Any,
    first: Mapping[str, Any],
    other: Mapping[str, Any],
    shapes: dict[int, Any] | None = None,
    kept: dict[Any, Any] | None = None,
) -> bool:
    """Whether `cel.to_cel` converts the value to the same CEL value under both nodes: they read
    the same at every position the value reaches (`_converts`), route each of its fields to a
    node in both or in neither, and take or refuse each scalar in both enumerations alike
    (`_unlike`). False may be wrong (a field routed to additionalProperties that conversion
    prunes), never True. With `shapes` (the run's memo of `cel.shape`) and `kept` (the
    catalogue's `cel_results`), the answer for a map or list already shaped is kept by what is
    compared there and the value's content, (id(what `_unlike` compares), "~", (its shape,)):
    the routes' matches and filters below a rule repeat where the rules do not."""
    return _alike(value, _unlike(first, other), shapes if kept is not None else None, kept)


def _alike(value: Any, unlike: Any, shapes: dict[int, Any] | None, kept: dict[Any, Any] | None) -> bool:
    if unlike is None:
        return True
    if unlike is _PRESENT:
        return False
    kind = type(value)
    slot = None
    if shapes is not None and (kind is dict or kind is list):
        whole = shapes.get(id(value))  # looked up only: a value no walk shaped is compared, not kept
        if whole is not None:
            slot = (id(unlike), "~", (whole,))
            got = kept.get(slot)  # type: ignore[union-attr]
            if got is not None:
                return got  # type: ignore[no-any-return]
    fields, extra, items, enums = unlike
    if enums is not None and not _enumerated_alike(value, *enums):
        found = False
    elif kind is dict:
        found = all(
            _alike(child, fields.get(key, extra) if type(key) is str else None, shapes, kept) for key, child in value.items()
        )
    elif kind is list and items is not None:
        found = all(_alike(item, items, shapes, kept) for item in value)
    else:
        found = True
    if slot is not None:
        kept[slot] = found  # type: ignore[index]
    return found


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
    keywords but its CEL rules (`celrules`' part), its fields' defaults (a default satisfies
    `required`), whether it has additional fields, its items' type, nullability and fields'
    defaults (`schemawalk._Walk._visit`). Not which fields it names: a field it does not name is
    pruned, never refused, and each named field's value is checked at a position of its own. Two
    nodes with one signature refuse the same values there."""
    own = {k: v for k, v in node.items() if k not in _CHILDREN and k != VALIDATIONS}
    properties = node.get("properties")
    extra = node.get("additionalProperties")
    items = node.get("items")
    return (
        own,
        {k: v["default"] for k, v in properties.items() if "default" in v} if isinstance(properties, dict) else repr(properties),
        extra if not isinstance(extra, dict) else "{}",
        _stub(items) if isinstance(items, dict) else items,
    )


# Keywords whose absence from a node checks less there: a node without them refuses no value one
# with them takes (`enum` with more values and `required` with fewer fields too, `_within`).
_LOOSER_WITHOUT = (_CHECKS - {VALIDATIONS}) | {"format", "enum", "required"}


def _within(first: Mapping[str, Any], other: Mapping[str, Any]) -> bool:
    """Whether the other node refuses, at its position, only values the first refuses there
    (`_signature`): the same signature but for checks the other does not make, an enumeration
    the other widens, or required fields it drops (an older release's list without a list type,
    a newer one's filter types). The first admits the object, so its checks there found nothing,
    nor do the other's."""
    mine, theirs = _signature(first), _signature(other)
    if mine[1:] != theirs[1:]:
        return False
    own, looser = mine[0], theirs[0]
    for key, value in looser.items():
        have = own.get(key, _UNSET)
        if have == value:
            continue
        if key == "enum" and isinstance(have, list) and isinstance(value, list) and all(v in value for v in have):
            continue
        if key == "required" and isinstance(have, list) and isinstance(value, list) and all(v in have for v in value):
            continue
        return False
    return all(key in looser or key in _LOOSER_WITHOUT for key in own)


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
    if isinstance(properties, dict):
        out["properties"] = {name: _stub(sub) for name, sub in properties.items()}
    elif "properties" in node:
        out["properties"] = properties
    for name in ("additionalProperties", "items"):
        if name in node:
            sub = node[name]
            out[name] = _stub(sub) if isinstance(sub, dict) else sub
    return out
