"""The API server's static cost estimate of CRD validation rules (policylint.k8s.cel_estimate, PL708).

`UPSTREAM` is k8s.io/apiextensions-apiserver's own table (pkg/apiserver/schema/cel/
compilation_test.go, TestCostEstimation): each rule's estimated cost on a schema without
bounds and with them, as cel-go's estimator and the API server's size estimator work it out.
"""

from __future__ import annotations

import datetime
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from policylint import identity
from policylint.k8s import cel_estimate as ce
from policylint.k8s.cel import estimate
from policylint.k8s.schemas import bundled_entries
from tests.lintutil import lint_text

Schema = dict[str, Any]
Builder = Callable[[int | None], Schema]


def _type(t: str) -> Schema:
    if t in ("duration", "date", "date-time"):
        return {"type": "string", "format": t}
    if t == "int-or-string":
        return {"x-kubernetes-int-or-string": True}
    return {"type": t}


def _bound(key: str, most: int | None) -> Schema:
    return {} if most is None else {key: most}


def _array(item: Schema) -> Builder:
    return lambda most: {"type": "array", "items": item, **_bound("maxItems", most)}


def _map(value: Schema) -> Builder:
    return lambda most: {"type": "object", "additionalProperties": value, **_bound("maxProperties", most)}


def _string(fmt: str | None = None) -> Builder:
    return lambda most: {"type": "string", **({"format": fmt} if fmt else {}), **_bound("maxLength", most)}


_OBJECT = {
    "type": "object",
    "properties": {"required": {"type": "string"}, "optional": {"type": "string"}},
    "required": ["required"],
}


def _strings(most: int | None) -> Schema:
    return {"type": "array", "items": {"type": "string", **_bound("maxLength", most)}, **_bound("maxItems", most)}


def _replace(most: int | None) -> Schema:
    return {
        "type": "object",
        "properties": {
            "str": {"type": "string", **_bound("maxLength", most)},
            "before": {"type": "string", "maxLength": 2},
            "after": {"type": "string", "maxLength": 4},
        },
    }


def _split(most: int | None) -> Schema:
    text = {"type": "string", **_bound("maxLength", most)}
    return {"type": "object", "properties": {"str": text, "separator": text}}


def _enum(most: int | None) -> Schema:
    return {"type": "string", "enum": ["A", "B", "C", "LongValue"], **_bound("maxLength", most)}


def _int_or_string(most: int | None) -> Schema:
    return {"x-kubernetes-int-or-string": True, **_bound("maxLength", most)}


# (name, schema, rule, cost without bounds (None: past the limit), the bound set, cost with it)
UPSTREAM: list[tuple[str, Builder, str, int | None, int, int]] = [
    ("number array with all", _array(_type("number")), "self.all(x, true)", 4718591, 10, 32),
    ("string array with all", _array(_type("string")), "self.all(x, true)", 3145727, 20, 62),
    ("boolean array with all", _array(_type("boolean")), "self.all(x, true)", 1887437, 5, 17),
    ("array of number arrays with all", _array(_array(_type("number"))(None)), "self.all(x, true)", 3145727, 100, 302),
    ("array of objects with all", _array(_OBJECT), "self.all(x, true)", 555128, 50, 152),
    ("map of numbers with all", _map(_type("number")), "self.all(x, true)", 1348169, 10, 32),
    ("map of strings with all", _map(_type("string")), "self.all(x, true)", 1179647, 3, 11),
    ("map of booleans with all", _map(_type("boolean")), "self.all(x, true)", 943718, 100, 302),
    ("string with contains", _string(), "self.contains('test')", 314574, 10, 5),
    ("string with startsWith", _string(), "self.startsWith('test')", 2, 15, 2),
    ("concat string", _string(), 'size(self + "hello") > size("hello")', 314578, 4, 7),
    ("index of array with numbers", _array(_type("number")), "self[1] == 0.0", 2, 5000, 2),
    ("index of array with strings", _array(_type("string")), "self[1] == self[1]", 314577, 8, 314577),
    ("O(n^2) loop with numbers", _array(_type("number")), "self.all(x, self.all(y, true))", None, 10, 352),
    ("O(n^3) loop with numbers", _array(_type("number")), "self.all(x, self.all(y, self.all(z, true)))", None, 10, 3552),
    ("regex matches simple", _string(), 'self.matches("x")', 314574, 50, 22),
    ("regex matches empty string", _string(), '"".matches("(((((((((())))))))))[0-9]")', 7, 10, 7),
    ("regex matches empty regex", _string(), 'self.matches("")', 1, 100, 1),
    ("set array maxLength to zero", _array(_type("number")), "self[3] == 0.0", 2, 0, 2),
    ("set map maxLength to zero", _map(_type("number")), 'self["x"] == 0.0', 2, 0, 2),
    ("set string maxLength to zero", _string(), 'self == "x"', 2, 0, 1),
    ("set bytes maxLength to zero", _string("byte"), 'self == b"x"', 2, 0, 1),
    ("maxItems above the estimate", _array(_type("number")), "self.all(x, x == 0.0)", 6291454, 3 * 1024 * 2048, 25165826),
    ("int-or-string array with all", _array(_type("int-or-string")), "self.all(x, true)", 4718591, 10, 32),
    ("index of array with int-or-strings", _array(_type("int-or-string")), "self[0] == 5", 3, 10, 3),
    ("index of array with booleans", _array(_type("boolean")), "self[0] == false", 2, 25, 2),
    ("index of array of objects", _array(_OBJECT), "self[0] == null", 2, 422, 2),
    ("index of array of number arrays", _array(_array(_type("number"))(None)), "self[0][0] == -1.0", 3, 51, 3),
    ("array of number maps with all", _array(_map(_type("number"))(None)), "self.all(x, x.y == 25.2)", 6291452, 12, 74),
    ("index of array of number maps", _array(_map(_type("number"))(None)), "self[0].x > 2.0", 4, 3000, 4),
    ("duration array with all", _array(_type("duration")), "self.all(x, true)", 2359295, 5, 17),
    ("date array with all", _array(_type("date")), "self.all(x, true)", 725936, 15, 47),
    ("date-time array with all", _array(_type("date-time")), "self.all(x, true)", 428963, 25, 77),
    ("map of int-or-strings with all", _map(_type("int-or-string")), "self.all(x, true)", 1348169, 15, 47),
    ("map of objects with all", _map(_OBJECT), "self.all(x, true)", 428963, 20, 62),
    ("map of number maps with all", _map(_map(_type("number"))(None)), "self.all(x, true)", 1179647, 10, 32),
    ("map of number arrays with all", _map(_array(_type("number"))(None)), "self.all(x, true)", 1179647, 25, 77),
    ("map of durations with all", _map(_type("duration")), "self.all(x, true)", 1048577, 5, 17),
    ("map of dates with all", _map(_type("date")), "self.all(x, true)", 524288, 10, 32),
    ("map of date-times with all", _map(_type("date-time")), "self.all(x, true)", 349526, 25, 77),
    ("regex find", _string(), "self.find('[0-9]+') == ''", 629147, 10, 11),
    ("join", _strings, "self.join(' ') == 'aa bb'", 329853068905, 10, 43),
    ("isSorted", _strings, "self.isSorted() == true", 329854432052, 10, 52),
    ("replace", _replace, "self.str.replace(self.before, self.after) == 'does not matter'", 629154, 4, 12),
    ("split", _split, "self.str.split(self.separator) == []", 629160, 10, 22),
    ("lowerAscii", _string(), "self.lowerAscii() == 'lower!'", 314575, 10, 6),
    ("size calls", _map(_type("integer")), "oldSelf.size() == self.size()", 5, 10, 5),
    ("timestamp comparison", _map(_type("date-time")), 'self["a"] == self["b"]', 8, 7, 8),
    ("duration comparison", _map(_type("duration")), 'self["c"] == self["d"]', 8, 42, 8),
    ("enum: its longest value", _enum, "self.contains('A')", 2, 1000, 401),
    ("int-or-string with a quantity rule", _int_or_string, "isQuantity(self)", 314574, 20, 9),
]


@pytest.mark.parametrize("case", UPSTREAM, ids=[c[0] for c in UPSTREAM])
def test_the_api_servers_own_estimates(case: tuple[str, Builder, str, int | None, int, int]) -> None:
    _, build, rule, unbounded, most, bounded = case
    for schema, want in ((build(None), unbounded), (build(most), bounded)):
        decl = ce.decl_type(schema, False)
        assert decl is not None
        got = ce.estimate(rule, decl)
        if want is None:
            assert got > ce.STATIC_COST_LIMIT
        else:
            assert got == want


def _spec(items: Schema, text: Schema) -> Schema:
    return {"type": "object", "properties": {"items": {"type": "array", **items}, "s": {"type": "string", **text}}}


def test_hand_worked_costs() -> None:
    decl = ce.decl_type(_spec({"maxItems": 10, "items": {"type": "string", "maxLength": 64}}, {"maxLength": 64}), False)
    assert decl is not None
    # `self` 1, `.s` on an object 1; the literal 0; `==` a tenth per character of the shorter
    # side, rounded up: min(64 x 4 bytes, 3) x 0.1 -> 1.
    assert ce.estimate("self.s == 'abc'", decl) == 3
    # `self.s` 2; `matches`: ceil((256 + 1) x 0.1) = 26 times ceil(8 x 0.25) = 2 -> 52.
    assert ce.estimate("self.s.matches('^[a-z]+$')", decl) == 54
    # all(): the range 2, the accumulator's `true` 0 and result 1, and per item (10) the loop
    # condition @not_strictly_false(__result__) 2, `__result__ && p` 1, and p: `x` 1 and
    # startsWith ceil(1 x 0.1) = 1 -> 2 + 0 + 1 + 10 x (2 + 1 + 2) = 53.
    assert ce.estimate("self.items.all(x, x.startsWith('a'))", decl) == 53
    # exists_one(): per item the step `p ? __result__ + 1 : __result__` 2 + p, where p is `x` 1 and
    # `== 'a'` ceil(min(256, 1) x 0.1) = 1; the result `__result__ == 1` 2 -> 2 + 0 + 2 + 10 x 4 = 44.
    assert ce.estimate("self.items.exists_one(x, x == 'a')", decl) == 44
    # map(): the accumulator `[]` 10, per item `__result__ + [f]` 12 + f, here f = `x + 'a'`:
    # 1 + ceil((256 + 1) x 0.1) = 27; its result has 10 items of 257 bytes at most, so all() over
    # it costs 1 + 0 + 1 + 10 x (3 + 1 + 1 + 1) (`y.size() < 5`: y 1, size 1, `<` 1): 62.
    # 2 + 10 + 1 + 10 x (12 + 27) = 403; 403 + 61 = 464.
    assert ce.estimate("self.items.map(x, x + 'a').all(y, y.size() < 5)", decl) == 464


# The rule: every item against every item, a regular expression over a string.
QUADRATIC = "self.items.all(x, self.items.all(y, self.s.matches('^a*$')))"


def test_the_quadratic_rule_unbounded_is_refused_and_bounded_is_accepted() -> None:
    unbounded = ce.decl_type(_spec({"items": {"type": "string"}}, {}), False)
    assert unbounded is not None
    # 1,048,575 items ((3 MiB - 2) / 3, the smallest being `"",`), strings of 3 MiB - 2 bytes.
    assert ce.estimate(QUADRATIC, unbounded) > 100 * ce.STATIC_COST_LIMIT
    bounded = ce.decl_type(_spec({"maxItems": 10, "items": {"type": "string", "maxLength": 64}}, {"maxLength": 64}), False)
    assert bounded is not None
    # matches: 2 + ceil(257 x 0.1) x ceil(4 x 0.25) = 28; inner all 2 + 1 + 10 x (3 + 28) = 313;
    # outer 2 + 1 + 10 x (3 + 313) = 3,163.
    assert ce.estimate(QUADRATIC, bounded) == 3163


def _crd(spec: Schema) -> Schema:
    return {"type": "object", "properties": {"spec": spec}}


def _at(found: tuple[ce.Costly, ...]) -> list[tuple[tuple[str | int, ...], str]]:
    return [(c.parts, c.message.split(" exceeds")[0]) for c in found]


def test_a_rule_is_multiplied_by_the_lists_it_sits_in() -> None:
    # `self.s.matches(...)` on an item of strings bounded to 64: 2 + 26 x 2 = 54 per item. Under
    # lists of 1,000 and 1,000 items (1,000,000 items) it is 54,000,000: past the limit.
    item = {
        "type": "object",
        "properties": {"s": {"type": "string", "maxLength": 64}},
        "x-kubernetes-validations": [{"rule": "self.s.matches('^[a-z]+$')"}],
    }
    inner = {"type": "array", "maxItems": 1000, "items": item}
    outer = {"type": "array", "maxItems": 1000, "items": {"type": "object", "properties": {"inner": inner}}}
    rule = ("properties", "spec", "properties", "outer", "items", "properties", "inner", "items", "x-kubernetes-validations", 0)
    assert _at(ce.refusals(_crd({"type": "object", "properties": {"outer": outer}}))) == [
        ((*rule, "rule"), "estimated rule cost")
    ]
    # 100 x 100 items: 540,000, accepted.
    inner["maxItems"] = outer["maxItems"] = 100
    assert ce.refusals(_crd({"type": "object", "properties": {"outer": dict(outer)}})) == ()
    # Under an unbounded list, not the product: the number of the item's smallest values a
    # request holds, 3 MiB / (2 + 1) = 1,048,576, times 54: refused.
    del outer["maxItems"]
    assert len(ce.refusals(_crd({"type": "object", "properties": {"outer": dict(outer)}}))) == 1


def test_a_schema_read_again_is_estimated_once_per_content(monkeypatch: pytest.MonkeyPatch) -> None:
    # A CRD given with --crd is read afresh by every run: another object of the same content is
    # answered from the first's estimate, counted; content equal in Python but of another type is
    # other content. The schema of the test above, its lists bounded to 100 items: 540,000, accepted.
    estimated: list[object] = []
    original = estimate._refusals
    monkeypatch.setattr(estimate, "_refusals", lambda schema: estimated.append(schema) or original(schema))
    monkeypatch.setattr(estimate, "_BY_CONTENT", {})

    def schema(max_items: object) -> Schema:
        item = {
            "type": "object",
            "properties": {"s": {"type": "string", "maxLength": 64}},
            "x-kubernetes-validations": [{"rule": "self.s.matches('^[a-z]+$')"}],
        }
        inner = {"type": "array", "maxItems": max_items, "items": item}
        outer = {"type": "array", "maxItems": 100, "items": {"type": "object", "properties": {"inner": inner}}}
        return _crd({"type": "object", "properties": {"outer": outer}})

    first, again = schema(100), schema(100)
    assert ce.refusals(first) == () and ce.refusals(again) == ()
    assert estimated == [first]
    # `100.0` == `100` in Python, but the API server reads no integer there: the inner list is
    # unbounded, 1,048,576 x 100 x 54 per request, refused. Estimated on its own.
    assert len(ce.refusals(schema(100.0))) == 1
    assert len(estimated) == 2
    # A value marshal cannot write is estimated every time, never keyed by what it can write.
    dated = schema(100)
    dated["description"] = datetime.date(2024, 1, 2)
    assert identity.content_key(dated) is None
    assert ce.refusals(dated) == () and len(estimated) == 3
    # Once per object still: the same object again is not even keyed.
    monkeypatch.setattr(identity, "content_key", lambda schema: pytest.fail("keyed again"))
    assert ce.refusals(dated) == () and ce.refusals(first) == ()
    assert len(estimated) == 3


def test_the_schema_total_and_a_message_expression() -> None:
    # Twelve rules over a list of 1,000 strings, each within the per-rule limit.
    rules = [{"rule": "self.all(x, x.matches('^[a-z]+$'))"} for _ in range(12)]
    strings = {"type": "array", "maxItems": 1000, "items": {"type": "string", "maxLength": 4000}}
    # all(): the range 1 (`self`), the result 1, and per item 3 + `x` 1 + matches: ceil((4,000 x 4
    # + 1) x 0.1) = 1,601 times ceil(8 x 0.25) = 2 -> 1 + 1 + 1,000 x 3,206 = 3,206,002 each.
    spec = {"type": "object", "properties": {"a": {**strings, "x-kubernetes-validations": rules}}}
    found = ce.refusals(_crd(spec))
    # 12 x 3,206,002 = 38,472,024: within both limits.
    assert found == ()
    strings["items"] = {"type": "string", "maxLength": 12000}  # 9,606,002 each: 115,272,024 in all
    spec = {"type": "object", "properties": {"a": {**strings, "x-kubernetes-validations": rules}}}
    found = ce.refusals(_crd(spec))
    assert [c.message for c in found[:4]] == [
        "contributed to estimated rule cost total exceeding cost limit for entire OpenAPIv3 schema"
    ] * 4
    assert found[4].parts == ()
    assert found[4].message.startswith(
        "x-kubernetes-validations estimated rule cost total for entire OpenAPIv3 schema exceeds budget by factor of 1.152720x"
    )
    # A messageExpression is held to the limit by itself, never multiplied.
    costly = {"rule": "true", "messageExpression": "self.map(x, self.map(y, x).join(',')).join(',')"}
    spec = {"type": "object", "properties": {"a": {**strings, "x-kubernetes-validations": [costly]}}}
    found = ce.refusals(_crd(spec))
    assert _at(found)[0] == (
        ("properties", "spec", "properties", "a", "x-kubernetes-validations", 0, "messageExpression"),
        "estimated messageExpression cost",
    )
    assert all(c.parts[-1:] != ("rule",) for c in found)


def test_the_factor_is_worded_as_the_api_server_words_it() -> None:
    assert "factor of 1.200000x" in ce.cost_message("estimated rule cost", 12_000_000, ce.STATIC_COST_LIMIT)
    assert "factor of 2.5x" in ce.cost_message("estimated rule cost", 25_000_000, ce.STATIC_COST_LIMIT)
    assert "factor of more than 100x" in ce.cost_message("estimated rule cost", 10**10, ce.STATIC_COST_LIMIT)


def test_every_bundled_crd_is_within_both_limits() -> None:
    # Every release's: each is a CRD some cluster serves.
    entries = bundled_entries(None)
    assert entries
    refused = {(e["group"], e["kind"], e["version"]): _at(ce.refusals(e["schema"])) for e in entries}
    assert {k: v for k, v in refused.items() if v} == {}


def test_a_crd_given_with_the_crd_option_is_checked(tmp_path: Any) -> None:
    from tests.lintutil import lint_paths

    bad = (Path(__file__).resolve().parents[1] / "rules" / "PL708-cel-cost-exceeded" / "bad.yaml").read_text()
    crd = tmp_path / "crd.yaml"
    crd.write_text(bad)
    gateway = tmp_path / "in" / "gateway.yaml"
    gateway.parent.mkdir()
    gateway.write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x, namespace: default}\n")
    result = lint_paths([gateway], crd_paths=[str(crd)])
    assert sorted({f.rule for f in result.findings if f.rule == "PL708"}) == ["PL708"]
    assert lint_text(bad, "crd.yaml").findings
