"""A CEL rule's result kept by the part of a value it reads (policylint.k8s.cel.projection): what
a rule reads of `self`, and that values agreeing on that part get the same outcome."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from policylint.k8s import admission, cel
from policylint.k8s.cel.projection import Need, need_of
from policylint.k8s.fieldtypes import Malformed
from tests.examples import examples

NAMES_UNIQUE = "self.all(l1, !has(l1.name) || self.exists_one(l2, has(l2.name) && l1.name == l2.name))"
MATCH_COUNT = "(self.size() > 0 ? self[0].matches.size() : 0) + (self.size() > 1 ? self[1].matches.size() : 0) <= 2"


def _shown(need: Need | None) -> Any:
    """A need as plain data: "whole", or (size, {field: ...}, items)."""
    if need is None or need.whole:
        return "whole"
    return (need.size, {k: _shown(v) for k, v in need.fields.items()}, None if need.items is None else _shown(need.items))


@pytest.mark.parametrize(
    ("rule", "expected"),
    [
        # The items' names, and (has()) whether they have one.
        (NAMES_UNIQUE, (False, {}, (False, {"name": "whole"}, None))),
        # The list's size and each item's matches' size: not the matches themselves.
        (MATCH_COUNT, (True, {}, (False, {"matches": (True, {}, None)}, None))),
        # A field tested with has() only, another read whole below a field.
        ("!has(self.a) || self.b.c == 1", (False, {"a": (False, {}, None), "b": (False, {"c": "whole"}, None)}, None)),
        # `self` compared, passed to a function or iterated in two variables: read whole; a
        # macro's items returned whole.
        ("self == self", "whole"),
        ("size(self.a) > 0 && self.all(k, v, v > 0)", "whole"),
        ("self.map(x, x).size() > 0", (False, {}, "whole")),
        # A reserved word's escape reads the field of that word (in an object its schema
        # converts); another escaped name reads the converted value by a name its YAML key does
        # not have.
        ("self.a.__namespace__ == ''", (False, {"a": (False, {"namespace": "whole"}, None)}, None)),
        ("self.a.b__dash__c == ''", (False, {"a": "whole"}, None)),
        # A comprehension's variable shadows nothing of `self` it does not read.
        ("self.l.all(self, self.x > 0)", (False, {"l": (False, {}, (False, {"x": "whole"}, None))}, None)),
        # An index that is not a literal reads the list whole.
        ("self.l[self.i] == 1", (False, {"l": "whole", "i": "whole"}, None)),
    ],
)
def test_what_a_rule_reads_of_self(rule: str, expected: Any) -> None:
    assert _shown(need_of(cel.parse(rule))) == expected


def _item_schema() -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {
            "name": {"type": "string"},
            "backend": {"type": "string", "nullable": True},
            "matches": {"type": "array", "items": {"type": "object", "properties": {"path": {"type": "string"}}}},
            "weight": {"type": "integer", "default": 1},
        },
    }


def _schema(rule: str) -> dict[str, Any]:
    rules = {"type": "array", "items": _item_schema(), "x-kubernetes-validations": [{"rule": rule, "message": "no"}]}
    return {"type": "object", "properties": {"spec": {"type": "object", "properties": {"rules": rules}}}}


def test_a_rule_is_evaluated_once_for_values_that_differ_only_where_it_does_not_read(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    evaluated: list[str] = []
    original = cel.evaluate_within

    def counting(rule: cel.Compiled, value: Any, limit: int) -> Any:
        evaluated.append(rule.text)
        return original(rule, value, limit)

    monkeypatch.setattr(cel, "evaluate_within", counting)
    results: dict[Any, Any] = {}
    for rule in (NAMES_UNIQUE, MATCH_COUNT):
        schema = _schema(rule)
        for tenant in ("a", "b", "c"):
            # Three routes whose rules have the same names and match counts, and their own backends
            # and paths: one evaluation of each rule. Before, one per route.
            data = {
                "spec": {
                    "rules": [
                        {"name": "read", "backend": f"{tenant}-svc", "matches": [{"path": f"/{tenant}/read"}]},
                        {"name": "write", "backend": f"{tenant}-svc", "matches": [{"path": f"/{tenant}/write"}]},
                    ]
                }
            }
            assert list(admission.cel_failures(data, schema, Malformed(), results)) == []
    assert evaluated == [NAMES_UNIQUE, MATCH_COUNT]
    # What the rule reads differs: evaluated again, and refused where it should be.
    data = {"spec": {"rules": [{"name": "read", "matches": [{}, {}]}, {"name": "read", "matches": [{}]}]}}
    for rule in (NAMES_UNIQUE, MATCH_COUNT):
        found = list(admission.cel_failures(data, _schema(rule), Malformed(), results))
        assert [(r.path, r.message) for r in found] == [("spec.rules", "no")]
    assert evaluated == [NAMES_UNIQUE, MATCH_COUNT, NAMES_UNIQUE, MATCH_COUNT]


# Values built to collide on what the rules read and differ elsewhere: few names, few lengths,
# nulls, absent fields, values of the wrong type, integers next to floats and booleans.
_SCALAR = st.sampled_from(["a", "b", "", 1, 1.0, True, 0, -0.0, None])
_MATCH = st.one_of(st.none(), st.fixed_dictionaries({}, optional={"path": st.sampled_from(["a", "b"])}), _SCALAR)
_DICT = st.fixed_dictionaries(
    {},
    optional={
        "name": _SCALAR,
        "backend": _SCALAR,
        "matches": st.one_of(st.lists(_MATCH, max_size=3), st.lists(st.just({}), max_size=3), _SCALAR, st.just({"x": 1})),
        "weight": _SCALAR,
        "other": _SCALAR,
    },
)
# Mostly maps, as list items are; sometimes null, a scalar or a list where a map belongs.
_ITEM = st.one_of(_DICT, _DICT, _DICT, st.none(), _SCALAR, st.lists(_SCALAR, max_size=2))
_VALUE = st.one_of(st.lists(_ITEM, max_size=3), st.lists(_ITEM, max_size=3), _ITEM)

RULES = [
    NAMES_UNIQUE,
    MATCH_COUNT,
    "self.all(r, has(r.weight) && r.weight >= 1)",
    "self.exists(r, has(r.matches) && r.matches.exists(m, has(m.path) && m.path == 'a'))",
    "self.filter(r, has(r.backend)).size() <= 1",
    "size(self) < 3 || self[2].name != 'b'",
    "self.all(x, self.exists_one(y, x.name == y.name))",
    "self.map(r, r.name).size() == self.size()",
    "self.all(r, !has(r.matches) || r.matches.all(m, m == null || has(m.path)))",
    "self.all(r, !has(r.matches) || r.matches.size() <= 1)",
    "self.all(r, !has(r.backend))",
]


# Values every example holds, which differ from each other only in what some rule reads: a null
# next to an absent field, a list of matches of each size, repeated and distinct names.
_POOL: list[Any] = [
    [{"matches": [{}, {}]}],
    [{"matches": []}],
    [{"matches": [{}]}],
    [{"backend": None}],
    [{}],
    [{"name": "a"}, {"name": "a"}],
    [{"name": "a"}, {"name": "b"}],
    [{"weight": None}],
    [{"weight": 0}],
    [{"name": "a", "matches": [{}, {}, {}]}, {"name": "b"}],
    [{"name": "a", "matches": [{}]}, {"name": "b", "matches": [{}, {}]}],
]


@examples(100, 300)
@given(st.sampled_from(RULES), st.lists(_VALUE, min_size=20, max_size=60))
def test_values_with_the_same_key_have_the_same_outcome(rule: str, values: list[Any]) -> None:
    compiled = cel.compile_rule(rule)
    node = {"type": "array", "items": _item_schema()}
    outcomes: dict[Any, Any] = {}
    for raw in [*_POOL, *values]:
        key = cel.result_key(compiled, raw, {})
        converted = cel.to_cel(raw, node, {})
        if converted is cel.BAD:
            continue  # the API server does not run the rules on a value of the wrong type
        passed, error, cost = cel.evaluate_within(compiled, converted, 1_000_000)
        outcome = (passed, type(error), None if error is None else error.message, cost)
        if key is not None:
            assert outcomes.setdefault(key, outcome) == outcome, (rule, raw)


# -- keys by the strings' equality pattern (policylint.k8s.cel.patterns) ------------------------

PARENTS_UNIQUE = (
    "self.all(p1, self.exists_one(p2, p1.name == p2.name && (((!has(p1.__namespace__) || p1.__namespace__ == '')"
    " && (!has(p2.__namespace__) || p2.__namespace__ == '')) || (has(p1.__namespace__) && has(p2.__namespace__)"
    " && p1.__namespace__ == p2.__namespace__))))"
)


@pytest.mark.parametrize(
    ("rule", "expected"),
    [
        # Compared with each other and with literals only: the literals, sorted.
        (PARENTS_UNIQUE, ("",)),
        ("self.all(l, l.protocol in ['TCP', 'UDP'] ? (!has(l.hostname) || l.hostname == '') : true)", ("", "TCP", "UDP")),
        ("self.all(x, self.exists_one(y, x.name == y.name))", ()),
        # A size is read exactly (a string measured is keyed as it is), and so are numbers: still
        # equality only.
        ("self.size() <= 2 && self.all(x, x.port != 80)", ()),
        ("self.all(x, x.name.size() < 3)", ()),
        # Read otherwise: ordered, passed to a function, measured, returned, indexed by a value,
        # in a list that is not of literals, iterated with two variables.
        ("self.all(x, x.name < 'b')", None),
        ("self.all(x, x.name.startsWith('a'))", None),
        ("self.map(x, x.name).size() == 2", None),
        ("self.all(x, x.name in [x.kind])", None),
        ("self.all(i, x, x.name == 'a')", None),
        ("self[0].name == self.map(x, x.name)[0]", None),
    ],
)
def test_which_rules_only_compare_for_equality(rule: str, expected: Any) -> None:
    from policylint.k8s.cel.patterns import equality_literals

    assert equality_literals(cel.parse(rule)) == expected


def _ref_schema() -> dict[str, Any]:
    """Items whose strings convert to themselves (name, namespace), and others that do not: an
    enum (a value not in it is refused), a duration ("1h" equals "60m"), int-or-string."""
    return {
        "type": "object",
        "properties": {
            "name": {"type": "string"},
            "namespace": {"type": "string"},
            "kind": {"type": "string", "enum": ["a", "b", ""]},
            "timeout": {"type": "string", "format": "duration"},
            "port": {"x-kubernetes-int-or-string": True},
            "tags": {"type": "array", "items": {"type": "string"}},
            "labels": {"type": "object", "additionalProperties": {"type": "string"}},
        },
    }


PATTERN_RULES = [
    PARENTS_UNIQUE,
    "self.all(p1, self.all(p2, p1.name == p2.name ? p1.kind == p2.kind : true))",
    "self.all(x, x.kind == x.name)",
    "self.exists(x, self.exists(y, x.timeout == y.timeout && x.name != y.name))",
    "self.all(x, x.name in ['a', 'b'] || x.port == x.name)",
    "self.all(x, self.exists_one(y, x.tags == y.tags))",
    "self.exists_one(x, has(x.name) && x.name == 'a')",
    "self.all(x, !has(x.namespace) || x.namespace != x.name)",
    "self.all(x, !has(x.name) || x.name.size() < 2 || x.name == 'a')",
    "self.all(x, self.exists_one(y, x.name == y.name))",
    # A map's size: the count of the keys conversion keeps (not the nulls).
    "self.all(x, !has(x.labels) || size(x.labels) == 1)",
]
_STRING = st.sampled_from(["a", "b", "c", "", "1h", "60m", "80", "abc"])
_REF_SCALAR = st.one_of(_STRING, _STRING, st.sampled_from([80, 1, 1.0, True, None]))
_REF = st.fixed_dictionaries(
    {},
    optional={
        "name": _REF_SCALAR,
        "namespace": _REF_SCALAR,
        "kind": _REF_SCALAR,
        "timeout": _REF_SCALAR,
        "port": _REF_SCALAR,
        "tags": st.one_of(st.lists(_STRING, max_size=2), _REF_SCALAR),
        "labels": st.one_of(st.dictionaries(_STRING, st.one_of(_STRING, st.none()), max_size=3), _REF_SCALAR),
    },
)
_REFS = st.lists(st.one_of(_REF, _REF, _REF, st.none(), _REF_SCALAR), max_size=4)
# Values every example holds, in pairs with one equality pattern and different outcomes where
# the pattern alone would not decide: a value outside the enum, equal durations spelled apart,
# a string's size.
_REF_POOL: list[Any] = [
    [{"kind": "c", "name": "c"}],
    [{"kind": "a", "name": "a"}],
    [{"timeout": "1h", "name": "a"}, {"timeout": "60m", "name": "b"}],
    [{"timeout": "1h", "name": "a"}, {"timeout": "2h", "name": "b"}],
    [{"name": "abc"}],
    [{"name": "b"}],
    [{"name": "a", "namespace": "b"}, {"name": "a"}],
    [{"name": "a", "namespace": ""}, {"name": "a"}],
    [{"labels": {"a": None}}],
    [{"labels": {"a": "x"}}],
    [{"labels": {"a": "x", "b": None}}],
]


@examples(100, 300)
@given(st.sampled_from(PATTERN_RULES), st.lists(_REFS, min_size=20, max_size=60))
def test_values_with_the_same_equality_pattern_have_the_same_outcome(rule: str, values: list[Any]) -> None:
    compiled = cel.compile_rule(rule)
    node = {"type": "array", "items": _ref_schema()}
    outcomes: dict[Any, Any] = {}
    for raw in [*_REF_POOL, *values]:
        key = cel.result_key(compiled, raw, {}, node)
        converted = cel.to_cel(raw, node, {})
        if converted is cel.BAD:
            continue
        passed, error, cost = cel.evaluate_within(compiled, converted, 1_000_000)
        outcome = (passed, type(error), None if error is None else error.message, cost)
        if key is not None:
            assert outcomes.setdefault(key, outcome) == outcome, (rule, raw)


def test_a_uniqueness_rule_is_evaluated_once_for_every_tenant_whose_names_repeat_alike(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    evaluated: list[str] = []
    original = cel.evaluate_within

    def counting(rule: cel.Compiled, value: Any, limit: int) -> Any:
        evaluated.append(rule.text)
        return original(rule, value, limit)

    monkeypatch.setattr(cel, "evaluate_within", counting)
    refs = {"type": "array", "items": _ref_schema(), "x-kubernetes-validations": [{"rule": PARENTS_UNIQUE, "message": "dup"}]}
    schema = {"type": "object", "properties": {"spec": {"type": "object", "properties": {"parentRefs": refs}}}}
    results: dict[Any, Any] = {}

    def refused(names: list[tuple[str, str]]) -> list[str]:
        data = {"spec": {"parentRefs": [{"name": n, "namespace": ns} for n, ns in names]}}
        return [r.message for r in admission.cel_failures(data, schema, Malformed(), results)]

    # Every tenant's Gateway and namespace have names of their own, in the same pattern: one
    # evaluation. Before, one per tenant.
    for tenant in ("a", "b", "c"):
        assert refused([(f"{tenant}-gw", tenant), (f"{tenant}-gw", "infra")]) == []
    assert evaluated == [PARENTS_UNIQUE]
    # The same names in another pattern: evaluated, and refused.
    assert refused([("d-gw", "d"), ("d-gw", "d")]) == ["dup"]
    assert evaluated == [PARENTS_UNIQUE, PARENTS_UNIQUE]


def test_an_escaped_name_reads_its_field_only_where_the_schema_escapes_keys() -> None:
    rule = cel.compile_rule("!has(self.__namespace__) || self.__namespace__ == 'a'")
    # An object's `namespace` is `__namespace__` to CEL: keyed by the YAML key `namespace`.
    fields = {"type": "object", "properties": {"namespace": {"type": "string"}}}
    assert cel.result_key(rule, {"namespace": "b", "other": 1}, {}, fields) == cel.result_key(
        rule, {"namespace": "b"}, {}, fields
    )
    assert cel.result_key(rule, {"namespace": "b"}, {}, fields) != cel.result_key(rule, {"namespace": "a"}, {}, fields)
    # A map's keys are not escaped: `__namespace__` is a key of its own, and the outcomes differ.
    keys = {"type": "object", "additionalProperties": {"type": "string"}}
    refused, admitted = {"__namespace__": "b"}, {"__namespace__": "a"}
    assert cel.evaluate(rule, cel.to_cel(refused, keys)) != cel.evaluate(rule, cel.to_cel(admitted, keys))
    assert cel.result_key(rule, refused, {}, keys) != cel.result_key(rule, admitted, {}, keys)


# -- the rules of one node keyed together (policylint.k8s.cel.program.rules_key) ----------------


def _node_of(rules: list[str], items: dict[str, Any]) -> dict[str, Any]:
    return {"type": "array", "items": items, "x-kubernetes-validations": [{"rule": r, "message": "no"} for r in rules]}


def _outcomes(node: dict[str, Any], raw: Any) -> Any:
    converted = cel.to_cel(raw, node, {})
    if converted is cel.BAD:
        return None  # the API server does not run the rules on a value of the wrong type
    found = []
    for _, compiled in cel.node_rules(node):
        passed, error, cost = cel.evaluate_within(compiled, converted, 1_000_000)
        found.append((passed, type(error), None if error is None else error.message, cost))
    return tuple(found)


# Rules a node holds together: plain ones, or only ones that compare for equality (their literals
# numbered together), or both (then strings are keyed as they are).
_TOGETHER = st.one_of(
    st.tuples(st.lists(st.sampled_from(RULES), min_size=2, max_size=4, unique=True), st.just("items")),
    st.tuples(st.lists(st.sampled_from(PATTERN_RULES), min_size=2, max_size=4, unique=True), st.just("refs")),
    st.tuples(
        st.lists(
            st.sampled_from([*PATTERN_RULES, "self.all(x, !has(x.name) || x.name.startsWith('a'))"]),
            min_size=2,
            max_size=3,
            unique=True,
        ),
        st.just("refs"),
    ),
)


@examples(100, 300)
@given(st.data())
def test_values_with_the_same_key_together_have_the_same_outcome_for_every_rule(data: st.DataObject) -> None:
    rules, items = data.draw(_TOGETHER)
    node = _node_of(rules, _item_schema() if items == "items" else _ref_schema())
    pool = _POOL if items == "items" else _REF_POOL
    values = data.draw(st.lists(_VALUE if items == "items" else _REFS, min_size=20, max_size=60))
    outcomes: dict[Any, Any] = {}
    for raw in [*pool, *values]:
        key = cel.rules_key(cel.node_rules(node), raw, {}, node)
        if key is not None:
            # Evaluated once: the rules' outcomes on each value were worked out twice, the first
            # time only to be put in a key's place that was taken.
            outcome = _outcomes(node, raw)
            assert outcomes.setdefault(key, outcome) == outcome, (rules, raw)


def test_the_rules_of_a_node_are_keyed_once_for_values_that_differ_only_where_none_reads(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A route's rules: two rules read the filters of each rule and of each backend; the backends'
    # names, which every route has its own, neither reads.
    rules = [
        "self.all(r, !has(r.filters) || r.filters.size() <= 1)",
        "self.all(r, !has(r.backendRefs) || r.backendRefs.all(b, !has(b.filters)))",
    ]
    backend = {
        "type": "object",
        "properties": {"name": {"type": "string"}, "filters": {"type": "array", "items": {"type": "string"}}},
    }
    item = {
        "type": "object",
        "properties": {
            "filters": {"type": "array", "items": {"type": "string"}},
            "backendRefs": {"type": "array", "items": backend},
        },
    }
    schema = {"type": "object", "properties": {"spec": {"type": "object", "properties": {"rules": _node_of(rules, item)}}}}
    keyed: list[str] = []
    original = cel.result_key

    def counting(compiled: cel.Compiled, *args: Any) -> Any:
        keyed.append(compiled.text)
        return original(compiled, *args)

    monkeypatch.setattr(cel, "result_key", counting)
    results: dict[Any, Any] = {}

    def refused(name: str, filters: list[str] | None = None) -> list[str]:
        backend = {"name": name} if filters is None else {"name": name, "filters": filters}
        data = {"spec": {"rules": [{"backendRefs": [backend]}]}}
        return [r.message for r in admission.cel_failures(data, schema, Malformed(), results, {})]

    assert refused("a") == []
    assert keyed == rules  # each rule keyed on the first route
    # The next routes differ from it only in their backends' names: no rule is keyed or run again.
    assert refused("b") == []
    assert refused("c") == []
    assert keyed == rules
    # A backend with filters is read: each rule is keyed again, and the second refuses it.
    assert refused("d", ["x"]) == ["no"]
    assert keyed == [*rules, *rules]


def test_a_list_of_maps_is_keyed_without_a_call_per_item_or_string(monkeypatch: pytest.MonkeyPatch) -> None:
    # A Gateway's listeners or a route's parentRefs under rules that compare names for equality:
    # each item is a map whose strings are numbered in the pattern. `project` is called once for
    # the list; the items and their strings are projected in its loop and `_project_map`'s, where
    # before each item and each of its strings cost a call of its own (1 + 3 + 3 × 2 = 10 here).
    from policylint.k8s.cel import projection

    node = _node_of([PARENTS_UNIQUE, "self.all(x, !has(x.namespace) || x.namespace != x.name)"], _ref_schema())
    rules = cel.node_rules(node)
    calls: list[Any] = []
    original = projection.project

    def counting(value: Any, *args: Any) -> Any:
        calls.append(value)
        return original(value, *args)

    monkeypatch.setattr(projection, "project", counting)
    refs = [{"name": "gw", "namespace": "a"}, {"name": "gw", "namespace": "b"}, {"name": "other", "namespace": "a"}]
    key = cel.rules_key(rules, refs, {}, node)
    assert key is not None
    assert calls == []  # the list's own call is `rules_key`'s, not counted here; none below it
    # Keys stay equality patterns: the same pattern in other names is one key, another is not.
    alike = [{"name": "x", "namespace": "p"}, {"name": "x", "namespace": "q"}, {"name": "y", "namespace": "p"}]
    other = [{"name": "x", "namespace": "p"}, {"name": "y", "namespace": "q"}, {"name": "y", "namespace": "p"}]
    assert cel.rules_key(rules, alike, {}, node) == key
    assert cel.rules_key(rules, other, {}, node) != key
    assert calls == []


# -- what the rules read, worked out once per node (policylint.k8s.cel.projection.projector) -----

# Rules that read the values' parts in each way `project` keys them: fields read whole, numbered
# as an equality pattern or not, tested with has(), sizes of lists and maps, items, nested maps,
# escaped names, a list read whole through an index.
_PROJECTED_RULES = [*RULES, *PATTERN_RULES, "self.all(x, !has(x.__namespace__) || x.__namespace__ == 'a')", "self[0] == self[1]"]


@examples(100, 300)
@given(
    st.lists(st.sampled_from(_PROJECTED_RULES), min_size=1, max_size=3, unique=True),
    st.sampled_from(["items", "refs", None]),
    st.booleans(),
    st.lists(st.one_of(_VALUE, _REFS), min_size=10, max_size=30),
)
def test_a_projector_keys_every_value_as_project_does(
    rules: list[str], items: str | None, numbered: bool, values: list[Any]
) -> None:
    """The projector made once for a need, a node and whether strings are numbered gives, for any
    value (maps and lists of every sort, scalars of every type, nulls), the key `project` gives:
    the memo tables keyed by either hold the same entries."""
    from policylint.k8s.cel.convert import _info
    from policylint.k8s.cel.projection import merged, project, projector

    needs = [cel.compile_rule(r).need for r in rules]
    if any(n is None for n in needs):
        return
    need = merged([n for n in needs if n is not None])
    node = None if items is None else _node_of(rules, _item_schema() if items == "items" else _ref_schema())
    info = None if node is None else _info(node)
    keyed = projector(need, cel.shape, numbered, info)
    literals = {"a": 0, "": 1}
    for raw in [*_POOL, *_REF_POOL, *values]:
        shapes_a: dict[int, Any] = {}
        shapes_b: dict[int, Any] = {}
        expected = project(raw, need, shapes_a, cel.shape, dict(literals) if numbered else None, info)
        assert keyed(raw, shapes_b, dict(literals) if numbered else None) == expected, (rules, raw)


def test_a_nodes_rules_are_keyed_by_a_projector_made_once(monkeypatch: pytest.MonkeyPatch) -> None:
    # A Gateway's listeners under two rules: the projector of what they read together is made on
    # the first value and serves every later one; `project` itself is not called for any.
    from policylint.k8s.cel import program, projection

    node = _node_of([PARENTS_UNIQUE, "self.all(x, !has(x.namespace) || x.namespace != x.name)"], _ref_schema())
    rules = cel.node_rules(node)
    made: list[Any] = []
    original = projection.projector

    def counting(*args: Any) -> Any:
        made.append(args[0])
        return original(*args)

    monkeypatch.setattr(program, "projector", counting)
    monkeypatch.setattr(projection, "project", lambda *args: pytest.fail("project called"))
    for tenant in ("a", "b", "c"):
        refs = [{"name": f"{tenant}-gw", "namespace": tenant, "port": 80}, {"name": f"{tenant}-gw", "namespace": "x"}]
        assert cel.rules_key(rules, refs, {}, node) is not None
    assert len(made) == 1
    # The same pattern in other names is one key, another is not (worked out by hand: name 0 name
    # 0 in both, namespaces 1 and 2 against 1 and 1).
    alike = cel.rules_key(rules, [{"name": "p", "namespace": "q", "port": 80}, {"name": "p", "namespace": "r"}], {}, node)
    other = cel.rules_key(rules, [{"name": "p", "namespace": "q", "port": 80}, {"name": "p", "namespace": "q"}], {}, node)
    assert alike == cel.rules_key(
        rules, [{"name": "a-gw", "namespace": "a", "port": 80}, {"name": "a-gw", "namespace": "x"}], {}, node
    )
    assert alike != other
