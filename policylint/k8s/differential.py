"""Whether another plausible schema admits an object the first one admits, in one walk of the
object for all the other plausible schemas, only where each differs from the first
(policylint.k8s.differences works the differences out and says why checking only there is exact;
policylint.k8s.dissent asks).

The walk takes these shortcuts, none of which changes an answer:

* All the pairs of an object are walked at once (`admits_all`): a stack entry holds what every
  pair holds at the value's position (`_Pairs`, one object per distinct tuple of differences), and
  each pair keeps its own refusal and cost, so each pair's answer is the one a walk of that pair
  alone gives. Where pairs hold the same `Difference` at a position (their other schemas share
  the node and all below it), its checks and rules are made once and their cost counted for each.
* A subtree whose content was seen with the same differences of all the pairs, nothing refused
  below it by any of them, takes what each pair's rules cost there (its shape, `cel.shape`, says
  the content is the same; a subtree where no difference has rules costs nothing).
* The walk judges a map or list by the checks the pairs make at its position, each on what it
  reads there (the own checks on `_read`, the CEL rules on what they read, `cel.rules_key`), and
  by each field or item that leads to a difference below, each by its content alone (below a map
  where no pair checks anything itself and no pair has a difference under the fields it does not
  name, only the fields with a difference below: `_Pairs.narrowed`): so a map or list is also
  kept by that (`_content`), nothing refused below it, and takes what each pair's rules cost
  there. Gateways' listeners differ in name, hostname and port, routes' rules in their backends'
  names, policies' `spec`s in their targets' names, which no release checks otherwise and no rule
  reads: the listeners of one protocol and TLS settings, the routes of one structure and the
  policies of one shape are walked once.
* The other schema's own checks at a position (`Difference.local`, whose children are stubs the
  schema walk does not enter) are kept by what the walk reads of the value there (`_read`): a
  scalar itself; a map's fields and which are null; a list's nulls, or all of it where the node
  has a list type. Two values with one such key are refused alike.

So the answer is "admitted" only when the full walk's is; anything else (a violation, a failing or
undecided rule, a cost that might exceed the budget, a node with alternatives, the first's cost
unknown) is answered by walking the other schema whole. The answer is also kept between runs
(`kept_key`), beside the full verdicts (policylint.k8s.admission).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from policylint.k8s.celrules import UNSET, RuleOutcomes, evaluator
from policylint.k8s.differences import Difference, converts_alike, difference
from policylint.k8s.listchecks import LIST_TYPE
from policylint.k8s.schemas import COMBINED
from policylint.k8s.schemawalk import violations, violations_below
from policylint.k8s.verdicts import TOP_LEVEL_SKIPPED, template
from policylint.k8s.verdicts import kept_key as verdict_key

if TYPE_CHECKING:
    from policylint.input.verdictstore import KeptKey
    from policylint.k8s.admissions import Admissions
    from policylint.k8s.objects import K8sObject

_UNSET: Any = UNSET  # `RuleOutcomes._outcome` tells a value not worked out by this one


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
    roots: list[Difference | None] | None = None,
) -> list[bool | None]:
    """`admits` for each of `others`, in one walk of the object: each value is visited once for
    all the pairs whose differences it reaches, and a position where several pairs hold the same
    `Difference` (their other schemas share the node: releases that did not change it) is
    answered once for all of them. `roots`: each other's `difference` from the first, if known."""
    if roots is None:
        roots = [difference(first, other) for other in others]
    return admits_from(admissions, obj, admissions.catalogue.schema_numbers(first), _pairs(tuple(roots)), len(others), shapes)


def admits_from(
    admissions: Admissions, obj: K8sObject, number: int, top: _Pairs | None, count: int, shapes: dict[int, Any]
) -> list[bool | None]:
    """`admits_all` of `count` other schemas whose differences from the first (its number in
    `Catalogue.schema_numbers`, `number`) are `top` at the object's root (`_pairs` of their
    `difference`s: None where none differs), which `dissent` works out once per kind, not once
    per object."""
    data = obj.data
    if not isinstance(data, dict):
        return [None] * count
    spent = admissions.catalogue.cel_spent.get((obj, number))
    if spent is None:
        return [None] * count  # the first's verdict was kept between runs: its rules' cost is not known
    if top is None:
        return [True] * count
    contents = admissions.contents
    if len(contents) > CONTENTS_LIMIT:
        contents.clear()  # bounded as the catalogue's memo tables are: a later repeat is keyed again
    costs = _at_once(data, top, count, admissions.catalogue.cel_results, shapes, contents)
    if costs is not None:
        budget = _evaluator()[2]
        return [None if spent + cost > budget else True for cost in costs]
    walk = _Differential(admissions, obj, shapes)
    walk.walk(data, top, count)
    budget = walk.budget
    return [None if dead or spent + cost > budget else True for dead, cost in zip(walk.dead, walk.costs)]


def _at_once(
    data: dict[Any, Any], top: _Pairs, count: int, results: dict[Any, Any], shapes: dict[int, Any], contents: dict[Any, Any]
) -> list[int] | None:
    """What each pair's rules cost in the object, as the walk (`_Differential.walk`) adds it up,
    where the root is checked by no pair and every field of it that reaches a difference is a
    map or list whose key (`_content`) the run's memo holds (`_Differential._kept`): most objects,
    whose `spec` repeats what decides the walk in an object before them. None where that is not
    so: the walk goes through it. The walk's own set-up per object (the evaluator, the object's
    malformed fields, the stack) was most of what an object answered at its `spec` cost."""
    if top.checking or len(data) == 1:
        return None  # checks at the root, or a one-field map the walk may skip as a template
    costs = [0] * count
    names, fields, extra = top.names, top.fields, top.extra
    cel = _evaluator()[0]
    for key, child in data.items():
        if key in TOP_LEVEL_SKIPPED:
            continue
        below = (fields[key] if key in fields else top.field(key)) if key in names else extra
        if below is None or child is None:
            continue  # nothing to check below it (`_reaches`)
        kind = type(child)
        if kind is not dict and kind is not list:
            return None  # a scalar the pairs may check: the walk checks it
        if kind is dict and len(child) == 1 and template(child):
            continue  # the walk skips an unrendered value
        got = results.get(_slot(_content(child, below, cel, shapes, contents), below))
        if got is None:
            return None
        for i, cost in enumerate(got):
            costs[i] += cost
    return costs


def _evaluator() -> tuple[Any, int, int]:
    """`celrules.evaluator`, imported on the first object asked, not with the module."""
    global _EVALUATOR
    if _EVALUATOR is None:
        _EVALUATOR = evaluator()
    return _EVALUATOR


_EVALUATOR: tuple[Any, int, int] | None = None


_END: Any = object()  # on the walk's stack: the subtree above is done

# Entries of the run's memo of `_content` keys (`Admissions.contents`) before it starts again, as
# the catalogue's memo tables (`admission.MEMO_LIMIT`): about 11 MiB, the maps and lists below
# the differences of a 10k-object run, whose keys share their parts with the catalogue's entries.
CONTENTS_LIMIT = 8_000


class _Pairs:
    """What every pair of an object holds at one position: the tuple of their differences there
    (None: nothing left for that pair below), one object per distinct tuple (`_pairs`), with the
    distinct differences among them and the pairs holding each, and the tuples below it worked out
    once per field name: the walk asks each of its positions once for all the pairs, where a
    field's tuple per pair would be built again at every value."""

    __slots__ = ("checking", "costly", "distinct", "extra", "fields", "heres", "items", "names", "narrow")

    def __init__(self, heres: tuple[Difference | None, ...]) -> None:
        self.heres = heres
        groups: dict[int, tuple[Difference, list[int]]] = {}
        for i, here in enumerate(heres):
            if here is not None:
                groups.setdefault(id(here), (here, []))[1].append(i)
        self.distinct = tuple((here, tuple(pairs)) for here, pairs in groups.values())
        # The differences with checks of their own here; the others only lead below.
        self.checking = tuple((h, pairs) for h, pairs in self.distinct if h.local is not None or h.rules or h.combined)
        # Whether some CEL rule is evaluated here or below: else the pairs' subtree costs nothing.
        self.costly = any(_costly(h) for h in heres if h is not None)
        self.names = frozenset(name for here in heres if here is not None for name in here.properties)
        self.fields: dict[str, _Pairs | None] = {}
        self.extra: _Pairs | None = _pairs(tuple(None if h is None else h.extra for h in heres))
        self.items: _Pairs | None = _pairs(tuple(None if h is None else h.items for h in heres))
        self.narrow: Any = _UNSET  # `narrowed`, worked out on first use

    def narrowed(self) -> frozenset[str] | None:
        """The fields of a map here that decide the walk's answer below it, where that is less
        than the map's whole content: with no checks of its own here (`checking` empty: no other
        schema checks the map itself, evaluates a CEL rule on it or has alternatives here) and no
        difference under fields it does not name (`extra` None), the walk enters only the fields
        with a difference below (`field`) and judges each by its content alone. None elsewhere."""
        if self.narrow is _UNSET:
            reaching = None
            if not self.checking and self.extra is None:
                reaching = frozenset(name for name in self.names if self.field(name) is not None)
            self.narrow = reaching
        return self.narrow  # type: ignore[no-any-return]

    def field(self, key: Any) -> _Pairs | None:
        """The pairs' differences at a field of a map here (`Difference.properties`, else `extra`)."""
        if type(key) is not str or key not in self.names:
            return self.extra
        if key in self.fields:
            return self.fields[key]
        got = self.fields[key] = _pairs(tuple(None if h is None else h.properties.get(key, h.extra) for h in self.heres))
        return got


_COSTLY: dict[int, tuple[Difference, bool]] = {}


def _costly(here: Difference | None) -> bool:
    """Whether a difference or one below it evaluates CEL rules (`Difference.rules`), once per
    difference."""
    if here is None:
        return False
    got = _COSTLY.get(id(here))
    if got is not None and got[0] is here:
        return got[1]
    found = here.rules or any(_costly(h) for h in (*here.properties.values(), here.extra, here.items))
    _COSTLY[id(here)] = (here, found)
    return found


def _reaches(value: Any, here: _Pairs) -> bool:
    """Whether a value has anything to check at a position: not a null (an unset field, which the
    walks skip), and a map or a list, or a scalar where some pair checks it (`_Pairs.checking`)."""
    if value is None:
        return False
    kind = type(value)
    return kind is dict or kind is list or bool(here.checking)


# (id of each pair's difference, or of None) -> its `_Pairs` with the differences: one object per
# distinct tuple, whose identity keys the walk's memo of subtrees (the differences live for the
# process, `_DIFFERENCES`, so the ids stay theirs).
_PAIRS_OF: dict[tuple[int, ...], _Pairs] = {}


def _pairs(heres: tuple[Difference | None, ...]) -> _Pairs | None:
    if not any(heres):
        return None
    key = tuple(map(id, heres))  # None's id is no difference's: it stands for "nothing here"
    got = _PAIRS_OF.get(key)
    if got is None:
        got = _PAIRS_OF[key] = _Pairs(heres)
    return got


class _Differential(RuleOutcomes):
    """The positions of an object's value that reach a difference of any of its pairs
    (`Difference`), walked once for all of them (`_Pairs`), with each other schema's checks made
    and CEL rules evaluated at each of its differing positions, as `celrules.cel_failures`
    evaluates them (with the same memo tables), and what they cost per pair.

    A map or list whose content was seen with the same differences of all the pairs (one
    `_Pairs`) and nothing refused below it by any pair is not walked again: (id(pairs), "!~",
    what decides its walk (`_content`)), or (id(pairs), "!=", (its shape,)) where its whole
    content decides, -> what its rules cost there per pair, in the catalogue's `cel_results`.
    Repositories repeat their routes' rules and filters, so most objects' differing subtrees are
    answered by one lookup."""

    __slots__ = (
        "budget",
        "cel",
        "checked",
        "contents",
        "costs",
        "data",
        "dead",
        "deaths",
        "keep",
        "malformed",
        "memo",
        "per_call",
        "read",
        "results",
        "shapes",
        "spent",
    )

    def __init__(self, admissions: Admissions, obj: K8sObject, shapes: dict[int, Any]) -> None:
        self.cel, self.per_call, self.budget = evaluator()
        self.data = obj.data
        self.malformed = admissions.index.malformed(obj)
        # An object with a value of the wrong type skips the rules there (as the full walk does):
        # what its subtrees cost is not what the same content costs elsewhere, so it is not kept.
        self.keep = not self.malformed.problems
        self.results: dict[Any, Any] = admissions.catalogue.cel_results
        self.checked: dict[Any, Any] = admissions.catalogue.schema_results
        self.contents = admissions.contents
        self.shapes = shapes
        self.memo: dict[int, Any] = {}
        self.spent = 0  # what the rules of the position being checked spent
        self.dead: list[bool] = []
        self.deaths = 0  # how many pairs are dead
        self.costs: list[int] = []
        # The map or list `_kept` keyed last, with its pairs and its key (`_content`), which holds
        # what each difference's rules there read together (`_checks_read`): `_rules` takes that
        # part from it, where the same projection of the same value was made again.
        self.read: tuple[Any, Any, Any] | None = None

    def run(self, data: Mapping[str, Any], roots: list[Difference | None]) -> None:
        """Walk the value along the positions that reach some pair's difference (`roots`, one per
        pair), making each pair's checks there: `dead[i]` when something there is refused by the
        i-th other schema or it has alternatives (not shown here), `costs[i]` what its rules
        spent. A stack entry holds the pairs' differences at the value's position (`_Pairs`)."""
        top = _pairs(tuple(roots))
        if top is None:
            self.dead, self.deaths, self.costs = [False] * len(roots), 0, [0] * len(roots)
            return
        self.walk(data, top, len(roots))

    def walk(self, data: Mapping[str, Any], top: _Pairs, pairs: int) -> None:
        """`run` from the pairs' differences at the root, `top`, of `pairs` pairs."""
        self.dead = [False] * pairs
        self.deaths = 0
        self.costs = [0] * pairs
        stack: list[tuple[Any, Any, Any]] = [(data, top, ())]
        while stack:
            value, here, parts = stack.pop()
            if value is _END:
                self._done(*here)
                continue
            kind = type(value)
            if ((kind is dict and len(value) == 1) or kind is str) and template(value):
                continue  # the walks skip an unrendered value, and all below it
            if parts and (kind is dict or kind is list) and self._kept(value, here, stack):
                continue
            if not self._position(value, here, parts):
                if self.deaths == pairs:
                    return  # every pair refused (or left to the full walk): nothing more to learn
                continue
            if kind is dict:
                names, fields = here.names, here.fields
                for key, child in value.items():
                    if not parts and key in TOP_LEVEL_SKIPPED:
                        continue
                    below = (fields[key] if key in fields else here.field(key)) if key in names else here.extra
                    if below is not None and _reaches(child, below):
                        stack.append((child, below, (*parts, key)))
            elif kind is list:
                items = here.items
                if items is not None:
                    stack.extend((item, items, (*parts, i)) for i, item in enumerate(value) if _reaches(item, items))

    def _kept(self, value: Any, here: _Pairs, stack: list[Any]) -> bool:
        """Whether a map or list whose content was seen with the same differences of all the pairs,
        nothing refused below it, takes what each pair's rules cost there (added); if not, an
        `_END` entry keeps what they cost when its subtree is done (nothing, without a rule below:
        `_Pairs.costly`). The key is what decides the walk below it (`_content`): one entry for
        all the maps and lists that agree on it, in place of one per content."""
        read = _content(value, here, self.cel, self.shapes, self.contents)
        self.read = (value, here, read)
        slot = _slot(read, here)
        if slot is None:
            return False
        got = self.results.get(slot)
        if got is not None:
            costs = self.costs
            for i, cost in enumerate(got):
                costs[i] += cost
            return True
        stack.append((_END, (slot, tuple(self.costs) if here.costly else None), None))
        return False

    def _done(self, slot: Any, before: tuple[int, ...] | None) -> None:
        """A subtree `_kept` did not answer is walked: unless something was refused, its memo
        entry keeps what each pair's rules cost in it (nothing, without a rule below)."""
        if self.keep and not self.deaths:
            self.results[slot] = () if before is None else tuple(a - b for a, b in zip(self.costs, before))

    def _position(self, value: Any, here: _Pairs, parts: tuple[str | int, ...]) -> bool:
        """Each distinct difference's checks at one position, once for all the pairs holding it,
        their cost added to each; a refusal (or alternatives) makes those pairs dead. Whether a
        pair is left alive to walk below."""
        dead, costs = self.dead, self.costs
        for at, (found, holders) in enumerate(here.checking):
            if self.deaths and all(dead[i] for i in holders):
                continue
            if not found.combined:
                self.spent = 0
                if self._accepted(value, found, parts, self._together(value, here, at) if found.rules else _UNSET):
                    for i in holders:
                        costs[i] += self.spent
                    continue
            for i in holders:
                if not dead[i]:
                    dead[i] = True
                    self.deaths += 1
        return not self.deaths or any(not dead[i] for _, holders in here.distinct for i in holders)

    def _together(self, value: Any, here: _Pairs, at: int) -> Any:
        """What the rules of the `at`-th difference checking at the value's position (`_Pairs.checking`)
        read together, as `_checks_read` put it in the value's key when `_kept` keyed it (`cel.rules_key`
        of a node's several rules, the same call on the same value); `_UNSET` where the key does not
        hold it (a root, a key by the whole content, a node with one rule or none)."""
        read = self.read
        if read is None or read[0] is not value or read[1] is not here:
            return _UNSET
        key = read[2]
        if type(key) is not tuple or not key or (key[0] is not _MAP and key[0] is not _LIST):
            return _UNSET
        found = here.checking[at][0]
        node = found.node
        if not found.rules or node is None or len(self.cel.node_rules(node)) < 2:
            return _UNSET
        return key[1][2 * at + 1]

    def _accepted(self, value: Any, here: Difference, parts: tuple[str | int, ...], together: Any = _UNSET) -> bool:
        """Whether the other schema's checks and CEL rules at this position refuse nothing
        (`together`: what its rules read together, if known: `_together`)."""
        if here.local is not None and not self._checked(value, here.local, parts):
            return False
        node = here.node
        return (
            not here.rules
            or node is None
            or self.malformed.broken(*parts)
            or self._rules(value, node, here.same, parts, together)
        )

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

    def _rules(
        self,
        raw: Any,
        node: Mapping[str, Any],
        same: Mapping[str, Any] | None,
        parts: tuple[str | int, ...],
        together: Any = _UNSET,
    ) -> bool:
        """Whether every rule of the node passes on the value, adding what they cost: as
        `celrules._CelRun._node` runs them (the outcomes of all the node's rules kept by the
        value's content, each rule's by what it reads; a value of the wrong type ends the node's
        rules), sharing its memo entries."""
        cel = self.cel
        rules = cel.node_rules(node)
        whole = cel.shape(raw, self.shapes) if parts else None
        node_slot = (id(node), "", (whole,)) if whole is not None else None
        known = self.results.get(node_slot) if node_slot is not None else None
        together_slot = None
        if known is None and node_slot is not None:
            # A value that agrees with one seen before in what the node's rules read together
            # (`cel.rules_key`, as the first's walk keys them: `celrules._CelRun._node`): a
            # policy's `spec` is its own, with its targets' names, which its rules do not read.
            if together is _UNSET:
                together = cel.rules_key(rules, raw, self.shapes, node)
            if together is not None:
                together_slot = (id(node), "+", (together,))
                known = self.results.get(together_slot)
                if known is not None:
                    self.results[node_slot] = known
        shared: dict[str, Any] = {}
        if known is None and same is not None and whole is not None:
            first = self.results.get((id(same), "", (whole,)))
            if first is not None and converts_alike(raw, same, node, self.shapes, self.results):
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
            self.results[node_slot] = outcomes = tuple(seen)
            if together_slot is not None:
                self.results[together_slot] = outcomes
        return True


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


def _slot(read: Any, here: _Pairs) -> Any:
    """The memo entry of a map or list at a position whose key is `read` (`_content`; None: it
    has none): (id(pairs), "!~", that key), or (id(pairs), "!=", (its shape,)) where its whole
    content decides."""
    if read is None:
        return None
    if type(read) is tuple and read and (read[0] is _MAP or read[0] is _LIST):
        return (id(here), "!~", read)
    return (id(here), "!=", (read,))  # the whole content: a shape


def _content(value: Any, here: _Pairs | None, cel: Any, shapes: dict[int, Any], memo: dict[Any, Any] | None = None) -> Any:
    """`_content_of` a value, kept in `memo` (the run's, `Admissions.contents`, when given) by the
    pairs' differences at its position and the map or list itself: the loader makes the maps and
    lists of one content one object for the run (policylint.input.sharing), so the routes that
    share their rules' list, or the policies their `spec`, have its key worked out once per run,
    where each object went through it again. The key is a function of the content and the
    position alone, and the documents' values are never changed, so a value kept is keyed as it
    would be worked out again."""
    kind = type(value)
    if here is None or (kind is not dict and kind is not list):
        return cel.shape(value, shapes)
    if memo is None:
        return _content_of(value, here, cel, shapes, memo)
    slot = (id(here), id(value))
    got = memo.get(slot)
    if got is not None and got[0] is value:
        return got[1]
    found = _content_of(value, here, cel, shapes, memo)
    memo[slot] = (value, found)  # the entry holds the value: its id stays its own
    return found


def _content_of(value: Any, here: _Pairs, cel: Any, shapes: dict[int, Any], memo: dict[Any, Any] | None) -> Any:
    """What decides the walk's answer on a value at a position where the pairs' differences are
    `here`, as a hashable key (None: some content has no shape). The walk judges a map or list by
    the checks the pairs make at its position and by each field or item below that leads to a
    difference, each by its content alone: so the key of a map is what those checks read of it
    (`_checks_read`) with each field that leads to a difference (only those `_Pairs.narrowed`
    gives, where no pair checks the map itself) and what decides it, and the key of a list what
    the checks read with what decides each item, a tuple marked apart from any `cel.shape` (a
    string, a `(type, value)` pair or a token); a scalar's, or a value whose checks' reads have
    no key, is its content's shape. A Gateway's listeners differ in name, hostname and port, a
    route's rules in their backends' names and a policy's `spec` in its targets' names, which no
    release checks otherwise and no rule reads: keyed by this, the listeners of one protocol and
    TLS settings, the routes of one structure (rules, matches, filters, backends per rule) and
    the policies of one shape are walked once, where their whole content, a new one per object,
    made each a walk of its own. Two values with one key are walked alike: the same checks on
    what they read alike, the same fields and items with keys alike, down to content that is the
    same."""
    kind = type(value)
    checks: Any = _checks_read(value, here, cel, shapes) if here.checking else ()
    if checks is None:
        return cel.shape(value, shapes)
    if kind is list:
        items = here.items
        parts: list[Any] = [_LIST, checks]
        if items is not None:
            for item in value:
                inner = type(item)
                found = _content(item, items, cel, shapes, memo) if inner is dict or inner is list else cel.shape(item, shapes)
                if found is None:
                    return None
                parts.append(found)
        return tuple(parts)
    if len(value) == 1 and template(value):
        return cel.shape(value, shapes)  # the walk skips it, as its content says
    reaching = None
    if not checks:
        reaching = here.narrow
        if reaching is _UNSET:
            reaching = here.narrowed()
    key: list[Any] = [_MAP, checks]
    fields = here.fields
    for name, child in value.items():
        if reaching is not None and name not in reaching:
            continue
        below = fields[name] if name in fields else here.field(name)
        if below is None:
            continue
        inner = type(child)
        found = _content(child, below, cel, shapes, memo) if inner is dict or inner is list else cel.shape(child, shapes)
        if found is None:
            return None
        key.append(name)
        key.append(found)
    return tuple(key)


def _checks_read(value: Any, here: _Pairs, cel: Any, shapes: dict[int, Any]) -> Any:
    """What the checks of each distinct difference at a position read of a map or list there, as
    a hashable key (None: not had, or a difference with alternatives, which the walk leaves to the
    full one): for each, what its own checks read (`_read`: two values with one such key are
    refused alike) and what its node's CEL rules read (`cel.result_key` of a node's only rule,
    `cel.rules_key` of several: two values with one such key have the same outcomes, costs
    included, as the rules' memo tables take it)."""
    key: list[Any] = []
    for found, _ in here.checking:
        if found.combined:
            return None
        read: Any = _NOTHING
        if found.local is not None:
            read = _read(value, found.local, cel.shape, shapes)
            if read is None:
                return None
        rules: Any = _NOTHING
        node = found.node
        if found.rules and node is not None:
            compiled = cel.node_rules(node)
            if len(compiled) == 1:
                rules = cel.result_key(compiled[0][1], value, shapes, node)
            elif compiled:
                rules = cel.rules_key(compiled, value, shapes, node)
            if rules is None:
                return None
        key.append(read)
        key.append(rules)
    return tuple(key)


_NOTHING: Any = object()  # in `_checks_read`'s key: nothing of that kind is checked there


# The marks of `_content`'s keys of maps and lists: no `cel.shape` is a tuple that starts with one.
_MAP: Any = object()
_LIST: Any = object()


def kept_key(admissions: Admissions, obj: K8sObject, schema: Mapping[str, Any]) -> KeptKey | None:
    """The key under which the answer that `schema` admits the object is kept between runs (None:
    nothing is kept): the full verdict's key (policylint.k8s.admission) with a mark of its own,
    since the differential walk shows admission without the pruned fields a verdict holds."""
    return verdict_key(admissions, obj, schema, mark="admits|")
