"""Another plausible schema's answer worked out only where it differs from the first
(policylint.k8s.differences) against walking it whole.

The values are random objects built from the bundled schemas of several kinds (the fields of the
first plausible schema and of the others, enumerations, bounds crossed now and then, duplicate
list items, wrong types), linted with the cluster's release unknown. For every object the first
plausible schema admits and every other plausible schema, the differential answer is "admitted"
only when the full walk admits it, and the answer `dissent` takes is the full walk's; a pair of
schemas with nothing to look at (`difference` None) admits exactly what the first admits.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
import yaml

from policylint.k8s import admission, differences, differential, dissent, schemas, schemawalk
from policylint.k8s.cel import shape as cel_shape
from policylint.k8s.objects import K8sObject
from tests.lintutil import lint_text, select
from tests.profiles.test_cluster import CORS_ROUTE

VALID = Path(__file__).resolve().parents[1] / "data" / "valid-per-kind"

GATEWAY_API = "gateway.networking.k8s.io"
KINDS = [
    (GATEWAY_API, "HTTPRoute", "v1"),
    (GATEWAY_API, "Gateway", "v1"),
    (GATEWAY_API, "GRPCRoute", "v1"),
    (GATEWAY_API, "BackendTLSPolicy", "v1"),
    (GATEWAY_API, "ReferenceGrant", "v1beta1"),
    ("gateway.envoyproxy.io", "BackendTrafficPolicy", "v1alpha1"),
    ("gateway.envoyproxy.io", "ClientTrafficPolicy", "v1alpha1"),
    ("kuadrant.io", "RateLimitPolicy", "v1"),
]
STRINGS = ["a", "web", "x.example.com", "/", "/api", "Prefix", "Exact", "80", "10s", "1h", "", "b" * 70, "X-Header", "a b", "%"]


def _value(node: Any, rng: random.Random, depth: int) -> Any:
    """A value for the schema node: mostly one it admits, sometimes not."""
    if not isinstance(node, Mapping) or depth > 7:
        return rng.choice(STRINGS)
    if rng.random() < 0.03:
        return rng.choice([1, "x", [], {}, True, None])  # the wrong type, or an unset field
    enum = node.get("enum")
    if isinstance(enum, list) and enum:
        return rng.choice(enum) if rng.random() < 0.95 else "Unknown"
    if node.get("x-kubernetes-int-or-string"):
        return rng.choice([80, "80", "50%", "1Mi"])
    kind = node.get("type")
    if kind == "object" or "properties" in node:
        return _map(node, rng, depth)
    if kind == "array":
        items = node.get("items")
        out = [_value(items, rng, depth + 1) for _ in range(rng.choice([0, 1, 1, 2, 3]))]
        if out and rng.random() < 0.3:
            out.append(out[0])  # a duplicate, for list types
        return out
    if kind == "integer":
        return rng.choice([0, 1, 2, 80, 200, 302, 8080, 65536, -1])
    if kind == "number":
        return rng.choice([0.5, 1, 100])
    if kind == "boolean":
        return rng.choice([True, False])
    return rng.choice(STRINGS)


def _map(node: Mapping[str, Any], rng: random.Random, depth: int) -> dict[str, Any]:
    properties = node.get("properties") or {}
    required = set(node.get("required") or ())
    out: dict[str, Any] = {}
    for name, sub in properties.items():
        if name in required or rng.random() < 0.5:
            out[name] = _value(sub, rng, depth + 1)
    extra = node.get("additionalProperties")
    if isinstance(extra, Mapping):
        for i in range(rng.choice([0, 1, 2])):
            out[f"k{i}"] = _value(extra, rng, depth + 1)
    if rng.random() < 0.02:
        out["unknownField"] = "x"
    return out


def _mutated(value: Any, node: Any, rng: random.Random, depth: int = 0) -> Any:
    """A valid upstream value changed here and there after another release's schema: an enum
    value it has, a field it has, a list item repeated or dropped."""
    if not isinstance(node, Mapping) or depth > 8:
        return value
    enum = node.get("enum")
    if isinstance(enum, list) and enum and rng.random() < 0.3:
        return rng.choice(enum)
    if type(value) is dict:
        out = {k: _mutated(v, _route(node, k), rng, depth + 1) for k, v in value.items()}
        properties = node.get("properties") or {}
        if properties and rng.random() < 0.2:
            name = rng.choice(sorted(properties))
            out[name] = _value(properties[name], rng, depth + 1)
        return out
    if type(value) is list:
        out_list = [_mutated(v, node.get("items"), rng, depth + 1) for v in value]
        if out_list and rng.random() < 0.2:
            out_list.append(out_list[-1])
        elif rng.random() < 0.1:
            out_list = []
        return out_list
    return value


def _route(node: Mapping[str, Any], key: str) -> Any:
    found = (node.get("properties") or {}).get(key)
    return found if found is not None else node.get("additionalProperties")


def _schema_of(key: tuple[str, str, str], rng: random.Random) -> Mapping[str, Any] | None:
    """The schema of a random bundled release (and channel) that serves the kind's version."""
    group, kind, _ = key
    project = schemas.vendor_projects().get((group, kind))
    if project is None:
        served = [s for r in schemas.GATEWAY_API_VERSIONS for c in schemas.CHANNELS if (s := schemas.schemas(c, r).get(key))]
    else:
        served = [
            s for r in schemas.vendor_releases()[project] if (s := schemas.schemas("standard", vendors=((project, r),)).get(key))
        ]
    return rng.choice(served)[0] if served else None


def _upstream(seed: int, rounds: int) -> str:
    """The valid upstream example of every bundled kind, mutated `rounds` times each."""
    rng = random.Random(seed)
    documents = []
    for path in sorted(VALID.glob("*.yaml")):
        for doc in yaml.safe_load_all(path.read_text()):
            if not isinstance(doc, dict) or not isinstance(doc.get("spec"), dict):
                continue
            group, _, version = str(doc.get("apiVersion")).rpartition("/")
            schema = _schema_of((group, str(doc.get("kind")), version), rng)
            if schema is None:
                continue
            for n in range(rounds):
                spec = _mutated(doc["spec"], schema["properties"]["spec"], rng)
                name = f"{doc.get('kind', '').lower()}-{len(documents)}-{n}"
                documents.append({**doc, "metadata": {"name": name, "namespace": "app"}, "spec": spec})
    return yaml.safe_dump_all(documents, sort_keys=False)


def _objects(seed: int, count: int) -> str:
    """YAML documents of random objects of every kind, built from the schema of a random
    plausible release and channel (so that fields only some have appear too)."""
    rng = random.Random(seed)
    documents = []
    for n in range(count):
        group, kind, version = key = KINDS[n % len(KINDS)]
        schema = _schema_of(key, rng)
        assert schema is not None
        spec = _value(schema["properties"]["spec"], rng, 1)
        documents.append(
            {"apiVersion": f"{group}/{version}", "kind": kind, "metadata": {"name": f"o{n}", "namespace": "app"}, "spec": spec}
        )
    return yaml.safe_dump_all(documents, sort_keys=False)


def _plan(catalogue: admission.Catalogue, first: Mapping[str, Any], others: list[Any]) -> Any:
    """The plan `dissent` makes of a kind, asking only `others` of it."""
    return dissent.plan_of(catalogue, tuple(("", "", f, i) for i, f in enumerate(others)), first, others)


def _judged(text: str) -> tuple[int, int, int, int, int]:
    """For every admitted object and other plausible schema: the differential answer, asked of the
    pair alone and of all the object's pairs in one walk, against the full walk. (answers
    compared, shown by the differential walk of the pair, shown by the walk of all the pairs,
    refused by the other, costs compared where the other's rules cost more than the first's)."""
    result = lint_text(text, selection=select("PL703", "PL704"))
    admissions = result.project.admissions()
    catalogue = admissions.catalogue
    compared = shown = joined = refused = costlier = 0
    objects: list[K8sObject] = [o for o in result.project.index.objects if catalogue.schema(o) is not None]
    assert objects
    for obj in objects:
        verdict = admissions.verdict(obj)
        first = catalogue.schema(obj)
        if verdict is None or verdict.rejected or first is None:
            continue
        shapes: dict[int, Any] = {}
        others = [
            f for _, _, f in catalogue.plausible((obj.group, obj.kind, obj.version)) if f is not None and f[0] is not first[0]
        ]
        # All the pairs in one walk, as `dissent` asks them, against each pair walked alone.
        together = differential.admits_all(admissions, obj, first[0], [f[0] for f in others], {})
        walk = differential._Differential(admissions, obj, {})
        walk.run(obj.data, [differences.difference(first[0], f[0]) for f in others])
        for j, (found, joint) in enumerate(zip(others, together)):
            full = not admission._admit(admissions, obj, found).rejected
            if full and not walk.dead[j]:
                # What the other's rules spend where it differs, counted per pair in the joint walk:
                # part of its total, and with the first's total at least its total.
                total = catalogue.cel_spent[obj, catalogue.schema_numbers(found[0])]
                mine = catalogue.cel_spent[obj, catalogue.schema_numbers(first[0])]
                assert walk.costs[j] <= total <= mine + walk.costs[j], (obj.name, found[1])
                costlier += total > mine
            answer = differential.admits(admissions, obj, first[0], found[0], shapes)
            assert answer in (None, True) and joint in (None, True)
            assert answer is None or full, (obj.name, found[1])
            assert joint is answer, (obj.name, found[1])  # each pair's answer, whatever else is walked with it
            catalogue.admitted.pop((obj, catalogue.schema_numbers(found[0])), None)
            assert dissent._answers(admissions, obj, catalogue, _plan(catalogue, first[0], [found]))[0] is full
            compared += 1
            shown += answer is True
            joined += joint is True
            refused += not full
        for found in others:
            catalogue.admitted.pop((obj, catalogue.schema_numbers(found[0])), None)
        answers = dissent._answers(admissions, obj, catalogue, _plan(catalogue, first[0], others))
        assert all(answers[i] is not admission._admit(admissions, obj, f).rejected for i, f in enumerate(others))
    return compared, shown, joined, refused, costlier


def test_the_differential_answer_is_the_full_walks() -> None:
    compared, shown, joined, refused, costlier = 0, 0, 0, 0, 0
    for text in [*(_objects(seed, 160) for seed in range(2)), *(_upstream(seed, 4) for seed in range(2))]:
        c, s, j, r, k = _judged(text)
        compared, shown, joined, refused, costlier = compared + c, shown + s, joined + j, refused + r, costlier + k
    # The values reach both answers: admitted by the differential walk, and refused by another
    # schema (which the differential walk must leave to the full one).
    assert compared > 500
    assert shown > compared // 3
    assert joined > compared // 3
    assert costlier > 10
    assert refused > 5


def _reaches(value: Any, here: differences.Difference | None, root: bool = True) -> bool:
    """Whether the value has a value at a position where the other schema checks otherwise,
    has other CEL rules, or has alternatives."""
    if here is None or value is None:
        return False
    if here.local is not None or here.rules or here.combined:
        return True
    if type(value) is dict:
        return any(
            _reaches(v, here.properties.get(k, here.extra), False)
            for k, v in value.items()
            if not (root and k in ("apiVersion", "kind", "metadata", "status"))
        )
    if type(value) is list:
        return any(_reaches(v, here.items, False) for v in value)
    return False


def test_an_object_the_first_admits_that_reaches_no_difference_is_admitted_by_the_other() -> None:
    """The claim the differential walk rests on, over every pair of bundled schemas of the kind:
    where the value reaches no position at which the other schema checks more or otherwise, has
    rules the first's do not answer for or has alternatives, the other admits what the first
    admits. Not the converse: where the other checks less (an older release's list without a list
    type or a minimum of items, a newer one's wider enumeration: `_within`; fewer CEL rules:
    `_rules_alike`), it may admit what the first refuses, which the walk is never asked."""
    result = lint_text(_upstream(11, 3) + "---\n" + _objects(12, 120))
    admissions = result.project.admissions()
    catalogue = admissions.catalogue
    alike = admitted = looser = 0
    for obj in result.project.index.objects:
        first = catalogue.schema(obj)
        if first is None or first[1] is None or not isinstance(obj.data, dict):
            continue
        verdict = admission._admit(admissions, obj, first)
        for _, _, found in catalogue.plausible((obj.group, obj.kind, obj.version)):
            if found is None or found[0] is first[0] or _reaches(obj.data, differences.difference(first[0], found[0])):
                continue
            alike += 1
            refused = admission._admit(admissions, obj, found).rejected
            if not verdict.rejected:
                admitted += 1
                assert not refused, (obj.name, found[1])
            looser += verdict.rejected and not refused
    assert alike > 100 and 0 < admitted < alike
    assert looser > 0  # the other checking less where the first refuses: the converse does not hold


def test_working_a_kinds_differences_out_asks_the_mapping_abc_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    """The schemas' nodes are dicts: `differences` tells a node from None or a scalar by
    `isinstance(_, dict)`, where each `isinstance(_, Mapping)` went through the ABC's check in
    Python (thousands for the kinds of a 1,000-object corpus, a fifth of their differences'
    time). Every release and channel of HTTPRoute against the newest standard one, worked out
    afresh, asks it nothing, and the experimental channel's rule that rule names are unique is
    still found."""
    import abc
    import sys

    key = (GATEWAY_API, "HTTPRoute", "v1")
    first = schemas.schemas("standard", "v1.6.1")[key][0]
    others = [
        found[0]
        for release in schemas.GATEWAY_API_VERSIONS
        for channel in schemas.CHANNELS
        if (found := schemas.schemas(channel, release).get(key)) is not None
    ]
    monkeypatch.setattr(differences, "_PAIRS", {})
    monkeypatch.setattr(differences, "_DIFFERENCES", {})
    monkeypatch.setattr(differences, "_WRITTEN", [None])  # worked out, not read from the bundled pairs' data
    asked: list[Any] = []
    original = abc.ABCMeta.__instancecheck__

    def counted(cls: Any, instance: Any) -> bool:
        # Asked by `differences` itself (compiling the rules of a release's nodes asks it too).
        if cls is Mapping and sys._getframe(1).f_code.co_filename == differences.__file__:
            asked.append(instance)
        return original(cls, instance)

    monkeypatch.setattr(abc.ABCMeta, "__instancecheck__", counted)
    found = [differences.difference(first, other) for other in others]
    monkeypatch.undo()
    assert len(others) == 14 and asked == []
    experimental = found[-1]
    assert experimental is not None
    rules = experimental.properties["spec"].properties["rules"]  # type: ignore[union-attr]
    assert rules is not None and rules.rules


def test_a_pair_of_releases_holding_the_same_nodes_has_nothing_to_look_at() -> None:
    key = (GATEWAY_API, "HTTPRoute", "v1")
    first = schemas.schemas("standard", "v1.6.1")[key][0]
    same = schemas.schemas("standard", "v1.5.1")[key][0]
    other = schemas.schemas("experimental", "v1.6.1")[key][0]
    assert differences.difference(first, same) is None
    found = differences.difference(first, other)
    assert found is not None
    rules = found.properties["spec"].properties["rules"]  # type: ignore[union-attr]
    assert rules is not None and rules.rules  # the experimental channel's rule that rule names are unique


def test_values_that_convert_alike_under_two_nodes_are_the_same_cel_value() -> None:
    """`converts_alike` says True only where `cel.to_cel` gives the same value under both nodes
    (the first's rule outcomes are then the other's), over every node of the objects' specs that
    two plausible schemas hold differently."""
    from policylint.k8s import cel

    result = lint_text(_upstream(21, 3) + "---\n" + _objects(22, 120), selection=select("PL703"))
    catalogue = result.project.admissions().catalogue
    alike = unlike = 0
    for obj in result.project.index.objects:
        first = catalogue.schema(obj)
        if first is None or first[1] is None or not isinstance(obj.data, dict) or not isinstance(obj.data.get("spec"), dict):
            continue
        spec = obj.data["spec"]
        for _, _, found in catalogue.plausible((obj.group, obj.kind, obj.version)):
            if found is None or found[0] is first[0]:
                continue
            one, two = first[0]["properties"]["spec"], found[0]["properties"]["spec"]
            if differences.converts_alike(spec, one, two):
                alike += 1
                assert cel.to_cel(spec, one) == cel.to_cel(spec, two), obj.name
            else:
                unlike += 1
    assert alike > 100 and unlike > 10


def _locals(here: differences.Difference | None, node: Any, out: list[tuple[Mapping[str, Any], Any]]) -> None:
    """Every (`Difference.local`, the other schema's node there) below a difference."""
    if here is None:
        return
    if here.local is not None:
        out.append((here.local, node))
    for name, below in here.properties.items():
        _locals(below, _route(node, name) if isinstance(node, Mapping) else None, out)
    if isinstance(node, Mapping):
        _locals(here.extra, node.get("additionalProperties"), out)
        _locals(here.items, node.get("items"), out)


def _variants(value: Any, rng: random.Random) -> list[Any]:
    """The value and the same value changed where a node's own checks read it and where they do
    not: a field set to null or dropped, a list item null or repeated, a child's content changed."""
    out = [value]
    if type(value) is dict and value:
        name = rng.choice(sorted(value, key=str))
        out += [{**value, name: None}, {k: v for k, v in value.items() if k != name}, {**value, name: rng.choice(STRINGS)}]
    elif type(value) is list and value:
        out += [[*value, value[0]], [None, *value], [rng.choice(STRINGS), *value[1:]]]
    return out


def test_a_positions_own_checks_are_kept_by_what_they_read() -> None:
    """The other schema's checks at a differing position are taken from the memo by what they read
    of the value (`_read`): over every differing position of every pair of bundled schemas of the
    kinds and random values there, two values with one key are refused alike, and the key tells
    apart values the checks refuse and admit."""
    rng = random.Random(31)
    shared = refused = 0
    for key in KINDS:
        served = _served(key)
        first = served[-1]
        for other in served:
            positions: list[tuple[Mapping[str, Any], Any]] = []
            _locals(differences.difference(first, other), other, positions)
            for local, node in positions:
                seen: dict[Any, tuple[bool, Any]] = {}
                for _ in range(12):
                    for value in _variants(_value(node, rng, 3), rng):
                        if value is None:
                            continue
                        read = differential._read(value, local, cel_shape, {})
                        answer = bool(schemawalk.violations_below(value, local))
                        refused += answer
                        if read is None:
                            continue
                        got = seen.setdefault(read, (answer, value))
                        assert got[0] == answer, (key, local, got[1], value)
                        shared += got[1] != value
    assert shared > 1000 and refused > 100


def test_an_objects_dissent_is_worked_out_once_though_two_rules_read_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """PL703 and PL704 both ask which plausible schemas refuse an object, each with lookups of its
    own that are freed when it is done: the refusal (a walk of the whole object) is made once."""
    route = CORS_ROUTE
    walks: list[Mapping[str, Any]] = []
    validate = dissent.validate

    def counted(data: Any, schema: Mapping[str, Any], results: Any) -> Any:
        walks.append(schema)
        return validate(data, schema, results)

    monkeypatch.setattr(dissent, "validate", counted)
    findings = lint_text(route, selection=select("PL703", "PL704")).findings
    # The older releases' standard channel refuses the CORS filter (tests/profiles/test_cluster.py).
    assert [(f.rule, f.line) for f in findings] == [("PL703", 8)]
    assert len(walks) == 1


def _served(key: tuple[str, str, str]) -> list[Mapping[str, Any]]:
    """Every bundled schema of the kind, oldest release first (the newest is the first plausible)."""
    group, kind, _ = key
    project = schemas.vendor_projects().get((group, kind))
    if project is None:
        found = [s for r in schemas.GATEWAY_API_VERSIONS for c in schemas.CHANNELS if (s := schemas.schemas(c, r).get(key))]
    else:
        releases = schemas.vendor_releases()[project]
        found = [s for r in releases if (s := schemas.schemas("standard", vendors=((project, r),)).get(key))]
    return [s[0] for s in found]


def _node_pairs(first: Any, other: Any, depth: int = 0) -> Any:
    """Every pair of distinct nodes the two schemas hold at one position, from the root down."""
    if not isinstance(first, Mapping) or not isinstance(other, Mapping) or first is other or depth > 14:
        return
    yield first, other
    names = {*(first.get("properties") or {}), *(other.get("properties") or {})}
    for name in sorted(names):
        yield from _node_pairs(_route(first, name), _route(other, name), depth + 1)
    for child in ("items", "additionalProperties"):
        yield from _node_pairs(first.get(child), other.get(child), depth + 1)


NASTY = ["a\x01b", " lead", "trail ", "a\nb", "UPPER", "x" * 300, "-1", "*.example.com", "ünï"]


def test_a_node_within_the_first_refuses_nothing_the_first_takes_there() -> None:
    """Where the other node's own checks are the first's but for checks it does not make, a wider
    enumeration or fewer required fields (`_within`: its position needs no check of its own), the
    other refuses no value there that the first takes: over every pair of nodes of every pair of
    bundled schemas of the kinds, and random values built from both nodes."""
    rng = random.Random(41)
    within = checked = 0
    for key in KINDS:
        served = _served(key)
        first = served[-1]
        for other in served:
            for a, b in _node_pairs(first, other):
                if not differences._within(a, b):
                    continue
                within += 1
                mine, theirs = differences._local(a), differences._local(b)
                for _ in range(8):
                    for value in (_value(a, rng, 5), _value(b, rng, 5), rng.choice(NASTY)):
                        if value is None or schemawalk.violations_below(value, mine):
                            continue
                        checked += 1
                        assert not schemawalk.violations_below(value, theirs), (key, value)
    assert within > 50 and checked > 2000


def test_rules_the_first_answers_for_have_its_outcome_and_cost_on_every_value() -> None:
    """Where the other node's CEL rules are each one of the first's, and what each reads converts
    alike under both nodes (`_rules_alike`: nothing to evaluate there), each has the outcome and
    cost of the first's rule of the same text: over every pair of nodes with rules of every pair
    of bundled schemas of the kinds, and random values built from both nodes."""
    from policylint.k8s import cel

    rng = random.Random(43)
    alike = evaluated = 0
    for key in KINDS:
        served = _served(key)
        first = served[-1]
        for other in served:
            for a, b in _node_pairs(first, other):
                if not b.get("x-kubernetes-validations") or not differences._rules_alike(a, b):
                    continue
                alike += 1
                theirs = {compiled.text: compiled for _, compiled in cel.node_rules(b)}
                mine = {compiled.text: compiled for _, compiled in cel.node_rules(a)}
                for _ in range(10):
                    for value in (*_variants(_value(a, rng, 3), rng), _value(b, rng, 3)):
                        if value is None:
                            continue
                        one, two = cel.to_cel(value, a), cel.to_cel(value, b)
                        if one is cel.BAD or two is cel.BAD:
                            assert one is two  # the value's own type: refused alike
                            continue
                        for text, compiled in theirs.items():
                            got = cel.evaluate_within(compiled, two, 1_000_000)
                            want = cel.evaluate_within(mine[text], one, 1_000_000)
                            assert (got[0], type(got[1]), got[2]) == (want[0], type(want[1]), want[2]), (key, text, value)
                            evaluated += 1
    assert alike > 5 and evaluated > 500


def test_rules_reading_where_the_nodes_convert_otherwise_are_evaluated_again() -> None:
    """`_rules_alike` answers for the other's rules only where nothing they read converts
    otherwise: a field whose enumerations differ (a value one refuses converts to an error there),
    a map's size where one node names a field the other prunes; not a field the rules do not read."""
    from policylint.k8s import cel

    rule = {"x-kubernetes-validations": [{"rule": "self.mode == 'A' || self.mode == 'B'"}]}
    wide = {"type": "object", "properties": {"mode": {"type": "string", "enum": ["A", "B"]}, "n": {"type": "string"}}, **rule}
    narrow = {**wide, "properties": {**wide["properties"], "mode": {"type": "string", "enum": ["A"]}}}
    assert not differences._rules_alike(wide, narrow)
    ((_, compiled),) = cel.node_rules(narrow)
    value = {"mode": "B"}
    assert cel.evaluate_within(compiled, cel.to_cel(value, wide), 1000)[0]
    assert not cel.evaluate_within(compiled, cel.to_cel(value, narrow), 1000)[0]
    # The same enumerations, and a field only the other names, which the rule does not read.
    more = {**wide, "properties": {**wide["properties"], "extra": {"type": "string"}}}
    assert differences._rules_alike(wide, more)
    sized = {"x-kubernetes-validations": [{"rule": "self.size() <= 2"}]}
    assert not differences._rules_alike({**wide, **sized}, {**more, **sized})
    assert not cel.evaluate_within(
        cel.compile_rule("self.size() <= 2"), cel.to_cel({"mode": "A", "n": "x", "extra": "y"}, more), 1000
    )[0]


def _reshaped(value: Any, rng: random.Random) -> Any:
    """The value with fields dropped, set to null or added under a name no schema has, here and
    there: what a map's own checks read (which fields it has, which are null) changes."""
    if type(value) is list:
        return [_reshaped(v, rng) for v in value]
    if type(value) is not dict:
        return value
    out = {k: _reshaped(v, rng) for k, v in value.items()}
    if out and rng.random() < 0.15:
        del out[rng.choice(sorted(out))]
    if out and rng.random() < 0.1:
        out[rng.choice(sorted(out))] = None
    if rng.random() < 0.1:
        out["unnamed"] = rng.choice(STRINGS)
    return out


class _Served(dict[Any, Any]):
    """A memo table that counts the walks below a map it answered by the fields that decide them
    (`_narrow_key`'s entries)."""

    narrowed = 0

    def get(self, key: Any, default: Any = None) -> Any:
        found = super().get(key, default)
        if found is not default and type(key) is tuple and len(key) == 3 and key[1] == "!~":
            self.narrowed += 1
        return found


def _walked(admissions: Any, obj: K8sObject, data: Any, roots: list[Any], memo: tuple[dict[Any, Any], dict[Any, Any]]) -> Any:
    """Each pair's answer from the differential walk of `data` with the memo tables `memo` (what
    rules spent, which checks passed): (refused, cost) per pair, the costs only where none refused
    (after a refusal the walk stops where it is)."""
    walk = differential._Differential(admissions, obj, {})
    walk.results, walk.checked = memo
    walk.run(data, roots)
    return tuple(walk.dead), None if any(walk.dead) else tuple(walk.costs)


def test_a_maps_walk_is_kept_by_what_decides_it() -> None:
    """Below a map where no pair's difference has CEL rules, alternatives or a field it does not
    name, the walk is kept by what the other schemas' own checks read of the map and the content
    of the fields some pair walks into (`_Pairs.narrowed`, `_narrow_key`): over random objects
    and mutated upstream examples, each mutated again several times (fields dropped, set to null
    or added too), every variant's answer per
    pair (refused, cost) with the memo tables the object's walk filled is its answer with empty
    ones, and the memo answers variants whose content differs from the object's."""
    rng = random.Random(47)
    text = _objects(5, 160) + "---\n" + _upstream(6, 2)
    result = lint_text(text, selection=select("PL703", "PL704"))
    admissions = result.project.admissions()
    catalogue = admissions.catalogue
    compared = served = 0
    for obj in result.project.index.objects:
        first = catalogue.schema(obj)
        verdict = admissions.verdict(obj)
        if first is None or verdict is None or verdict.rejected or not isinstance(obj.data.get("spec"), dict):
            continue
        others = [
            f[0] for _, _, f in catalogue.plausible((obj.group, obj.kind, obj.version)) if f is not None and f[0] is not first[0]
        ]
        roots = [differences.difference(first[0], other) for other in others]
        if not any(roots):
            continue
        table = _Served()
        memo: tuple[dict[Any, Any], dict[Any, Any]] = (table, {})
        _walked(admissions, obj, obj.data, roots, memo)
        for _ in range(8):
            variant = {**obj.data, "spec": _mutated(obj.data["spec"], first[0]["properties"]["spec"], rng)}
            if rng.random() < 0.5:
                variant["spec"] = _reshaped(variant["spec"], rng)
            before = table.narrowed
            kept = _walked(admissions, obj, variant, roots, memo)
            assert kept == _walked(admissions, obj, variant, roots, ({}, {})), (obj.name, variant)
            compared += 1
            served += variant != obj.data and table.narrowed > before
    assert compared > 500 and served > 50, (compared, served)


def test_a_map_whose_other_fields_reach_a_difference_is_kept_by_its_whole_content() -> None:
    """Where the other schema checks the fields a map does not name (`additionalProperties`), the
    content of every such field decides the walk below it, not only the fields it names: a value
    that another refuses there is not answered by the memo of one it admits. Where nothing beyond
    the named fields differs, the fields with nothing below are left out of the key, and the
    content of the others is in it."""
    from policylint.k8s import cel

    result = lint_text(_objects(1, 8), selection=select("PL703", "PL704"))
    admissions = result.project.admissions()
    obj = result.project.index.objects[0]
    text = {"type": "string"}

    def schema(extra: Mapping[str, Any], named: Mapping[str, Any]) -> dict[str, Any]:
        labels = {"type": "object", "properties": {"p": text, "q": named}, "additionalProperties": extra}
        return {"type": "object", "properties": {"spec": {"type": "object", "properties": {"labels": labels}}}}

    first = schema(text, text)
    other = schema({"type": "string", "maxLength": 1}, text)
    roots = [differences.difference(first, other)]
    below = differential._pairs(tuple(roots))
    assert below is not None
    spec = below.field("spec")
    assert spec is not None and spec.narrowed() == frozenset({"labels"})
    labels = spec.field("labels")
    assert labels is not None and labels.extra is not None and labels.narrowed() is None
    memo: tuple[dict[Any, Any], dict[Any, Any]] = ({}, {})
    admitted = {"spec": {"labels": {"p": "x", "r": "y"}}}
    refused = {"spec": {"labels": {"p": "x", "r": "yy"}}}
    assert _walked(admissions, obj, admitted, roots, memo) == ((False,), (0,))
    assert _walked(admissions, obj, refused, roots, memo) == ((True,), None)
    # Only the named field `q` differs: `p` and the other fields are not part of the key.
    other = schema(text, {"type": "string", "maxLength": 1})
    roots = [differences.difference(first, other)]
    labels = differential._pairs(tuple(roots)).field("spec").field("labels")  # type: ignore[union-attr]
    assert labels is not None and labels.narrowed() == frozenset({"q"})
    assert differential._content({"p": "x", "q": "y", "r": "z"}, labels, cel, {}) == (differential._MAP, (), "q", "y")
    table = _Served()
    memo = (table, {})
    assert _walked(admissions, obj, {"spec": {"labels": {"p": "x", "q": "y"}}}, roots, memo) == ((False,), (0,))
    # Another `p` takes the memo's answer; another `q`, which the other schema refuses, does not.
    assert _walked(admissions, obj, {"spec": {"labels": {"p": "z", "q": "y"}}}, roots, memo) == ((False,), (0,))
    assert table.narrowed == 1
    assert _walked(admissions, obj, {"spec": {"labels": {"p": "x", "q": "yy"}}}, roots, memo) == ((True,), None)


def test_a_list_no_pair_checks_itself_is_kept_by_what_decides_each_item() -> None:
    """Where no pair checks a list itself, the walk judges each item by its content alone, so what
    decides each item is the list's key (`_content`), not its whole content: lists of maps that
    differ only in fields no pair reaches are one key, and so are the maps holding them. Where a
    pair checks the list itself (a bound on its items), what that check reads of it (its length,
    its null items: `_read`) is in the key too."""
    from policylint.k8s import cel

    result = lint_text(_objects(1, 8), selection=select("PL703", "PL704"))
    admissions = result.project.admissions()
    obj = result.project.index.objects[0]
    text = {"type": "string"}

    def schema(q: Mapping[str, Any], bound: Mapping[str, Any]) -> dict[str, Any]:
        item = {"type": "object", "properties": {"name": text, "q": q}}
        rules = {"type": "array", "items": item, **bound}
        return {"type": "object", "properties": {"spec": {"type": "object", "properties": {"rules": rules}}}}

    first = schema(text, {})
    roots = [differences.difference(first, schema({"type": "string", "maxLength": 1}, {}))]
    rules = differential._pairs(tuple(roots)).field("spec").field("rules")  # type: ignore[union-attr]
    assert rules is not None and not rules.checking and rules.items is not None
    ab = [{"name": "a", "q": "y"}, {"name": "b", "q": "y"}]
    cd = [{"name": "c", "q": "y"}, {"name": "d", "q": "y"}]
    # By hand: each item's key is its field `q` alone, the list's the tuple of its items' keys.
    assert differential._content(ab, rules, cel, {}) == differential._content(cd, rules, cel, {})
    assert differential._content(ab, rules, cel, {}) != differential._content(ab[:1], rules, cel, {})
    assert differential._content(ab, rules, cel, {}) != differential._content([ab[0], {"q": "z"}], rules, cel, {})
    table = _Served()
    memo: tuple[dict[Any, Any], dict[Any, Any]] = (table, {})
    assert _walked(admissions, obj, {"spec": {"rules": ab}}, roots, memo) == ((False,), (0,))
    assert table.narrowed == 1  # the second item, by the first's key
    # Other names: the `spec` is answered by the memo at once, nothing below it asked.
    assert _walked(admissions, obj, {"spec": {"rules": cd}}, roots, memo) == ((False,), (0,))
    assert table.narrowed == 2
    # A `q` the other schema refuses is not answered by the memo.
    assert _walked(admissions, obj, {"spec": {"rules": [*cd, {"name": "e", "q": "yy"}]}}, roots, memo) == ((True,), None)
    # The other schema bounds the list's items: its length is in the key, the names still not.
    roots = [differences.difference(first, schema({"type": "string", "maxLength": 1}, {"maxItems": 2}))]
    rules = differential._pairs(tuple(roots)).field("spec").field("rules")  # type: ignore[union-attr]
    assert rules is not None and rules.checking
    assert differential._content(ab, rules, cel, {}) == differential._content(cd, rules, cel, {})
    longer = [*cd, {"name": "e", "q": "y"}]
    assert differential._content(ab, rules, cel, {}) != differential._content(longer, rules, cel, {})
    memo = (_Served(), {})
    assert _walked(admissions, obj, {"spec": {"rules": ab}}, roots, memo) == ((False,), (0,))
    assert _walked(admissions, obj, {"spec": {"rules": longer}}, roots, memo) == ((True,), None)


_ROUTE = """\
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {{name: r{i}, namespace: app}}
spec:
  parentRefs: [{{name: gw}}]
  rules:
  - matches: [{{path: {{type: PathPrefix, value: /api}}}}]
    backendRefs: [{{name: api{i}, port: 80}}]
  - backendRefs: [{{name: web{i}, port: 8080}}]
"""

_POLICY = """\
apiVersion: gateway.envoyproxy.io/v1alpha1
kind: ClientTrafficPolicy
metadata: {{name: p{i}, namespace: app}}
spec:
  targetRefs: [{{group: gateway.networking.k8s.io, kind: Gateway, name: gw{i}}}]
  timeout: {{http: {{requestReceivedTimeout: 10s}}}}
"""


def _counted(monkeypatch: pytest.MonkeyPatch, method: str, text: str) -> int:
    """How many times the differential walk calls its `method` over a lint of `text` (PL703)."""
    calls = [0]
    original = getattr(differential._Differential, method)

    def counted(self: Any, *args: Any) -> Any:
        calls[0] += 1
        return original(self, *args)

    with monkeypatch.context() as patch:
        patch.setattr(differential._Differential, method, counted)
        lint_text(text, selection=select("PL703"))
    return calls[0]


def test_routes_that_differ_in_their_backends_names_are_walked_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """Routes of one structure whose backends' names differ (no release checks a name otherwise,
    no rule reads one): each route after the first is one key with the first's at its `spec`
    (`_content`: what the checks of its `rules`, which differ between releases, read of the
    list, and each rule's matches and backends by what decides each), so it is answered by the
    run's memo without a walk (`differential._at_once`), where each was walked down to its rules'
    backends, and then at its root."""
    one = _counted(monkeypatch, "_position", _ROUTE.format(i=0))
    ten = _counted(monkeypatch, "_position", "---\n".join(_ROUTE.format(i=i) for i in range(10)))
    assert one > 3  # the first route is walked below its rules
    assert ten == one


_SHARED_RULES = """\
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {{name: r{i}, namespace: app}}
spec:
  parentRefs: [{{name: gw{i}}}]
  rules:
  - matches: [{{path: {{type: PathPrefix, value: /api}}}}]
    backendRefs: [{{name: api, port: 80}}]
  - backendRefs: [{{name: web, port: 8080}}]
"""


def test_a_map_or_list_objects_share_is_keyed_once_per_run(monkeypatch: pytest.MonkeyPatch) -> None:
    """The loader makes a map or list of one content one object for the run, so what decides the
    walk on it (`_content`) is kept by its shape for the run (`Admissions.contents`): ten routes
    with their own `spec` and `parentRefs` (their parents differ) and one `rules` list work out
    the key of each `spec` and `parentRefs` (a list the older releases check themselves), and
    that of the `rules` list and of what is below it once, where each route worked the list out
    again."""
    calls = [0]
    original = differential._content_of

    def counted(*args: Any) -> Any:
        calls[0] += 1
        return original(*args)

    counts = []
    for text in (_SHARED_RULES.format(i=0), "---\n".join(_SHARED_RULES.format(i=i) for i in range(10))):
        calls[0] = 0
        with monkeypatch.context() as patch:
            patch.setattr(differential, "_content_of", counted)
            lint_text(text, selection=select("PL703"))
        counts.append(calls[0])
    one, ten = counts
    # By hand, for one route: its `spec`, its `parentRefs` list, the `rules` list, its two rules,
    # each rule's `backendRefs` list and its one item, the first rule's `matches` list and its item.
    assert one == 11
    assert ten == one + 9 * 2  # each later route's `spec` and `parentRefs` alone


def test_an_object_the_memo_answers_at_its_root_has_the_walks_answer() -> None:
    """An object whose root no pair checks and whose every field reaching a difference is a map
    or list the run's memo holds is answered without a walk (`differential._at_once`): over
    random objects and mutated upstream examples, each linted twice (the second copy's `spec` the
    first's), every such answer is each pair's cost from a walk with empty memo tables, which
    refuses nothing; the second copies are answered so."""
    text = _objects(11, 160) + "---\n" + _upstream(12, 2)
    docs = list(yaml.safe_load_all(text))
    copies = [{**d, "metadata": {**d["metadata"], "name": d["metadata"]["name"] + "-again"}} for d in docs]
    result = lint_text(yaml.safe_dump_all([*docs, *copies], sort_keys=False), selection=select("PL703", "PL704"))
    admissions = result.project.admissions()
    catalogue = admissions.catalogue
    answered = again = 0
    for obj in result.project.index.objects:
        first = catalogue.schema(obj)
        verdict = admissions.verdict(obj)
        if first is None or verdict is None or verdict.rejected or not isinstance(obj.data, dict):
            continue
        others = [
            f[0] for _, _, f in catalogue.plausible((obj.group, obj.kind, obj.version)) if f is not None and f[0] is not first[0]
        ]
        roots = [differences.difference(first[0], other) for other in others]
        top = differential._pairs(tuple(roots))
        if top is None:
            continue
        costs = differential._at_once(obj.data, top, len(roots), catalogue.cel_results, catalogue.shapes, admissions.contents)
        if costs is None:
            continue
        dead, walked = _walked(admissions, obj, obj.data, roots, ({}, {}))
        assert not any(dead) and tuple(costs) == walked, obj.name
        answered += 1
        again += obj.name.endswith("-again")
    assert answered > 100 and again > 40, (answered, again)


def test_policies_that_differ_in_their_targets_names_evaluate_no_rule_again(monkeypatch: pytest.MonkeyPatch) -> None:
    """Envoy Gateway's releases differ in the rules of a policy's `spec`, which each policy holds
    with its own targets' names; the rules read the targets' kinds, not their names, so the
    outcomes of all the rules of a `spec` node are kept by what they read together
    (`cel.rules_key`), and the `spec` by that and what decides its fields (`_content`): the
    policies after the first evaluate no rule, and ask for none."""
    policies = "---\n".join(_POLICY.format(i=i) for i in range(10))
    assert _counted(monkeypatch, "_outcome", policies) == _counted(monkeypatch, "_outcome", _POLICY.format(i=0))
    one = _counted(monkeypatch, "_rules", _POLICY.format(i=0))
    assert one > 0  # the first policy's rules are asked for
    assert _counted(monkeypatch, "_rules", policies) == one


_GATEWAY = """\
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {{name: gw{i}, namespace: app}}
spec:
  gatewayClassName: eg
  listeners:
  - {{name: http-{i}, protocol: HTTP, port: 80, hostname: "a{i}.example.com"}}
  - {{name: https-{i}, protocol: HTTPS, port: 443, hostname: "a{i}.example.com", tls: {{certificateRefs: [{{name: c{i}}}]}}}}
"""


@pytest.mark.parametrize("template", [_POLICY, _GATEWAY])
def test_what_a_walked_nodes_rules_read_together_is_projected_once(monkeypatch: pytest.MonkeyPatch, template: str) -> None:
    """A position some other schema checks with several CEL rules is keyed by what they read
    together (`cel.rules_key`, in `_checks_read`) before the walk asks for their outcomes, which
    are kept by the same projection: the walk takes it from the key (`_Differential._together`),
    where it projected the same value under the same node again (a Gateway's listeners, which
    v1.0.0's rules read with their names, hostnames and ports, new in each Gateway)."""
    from policylint.k8s.celrules import evaluator

    cel = evaluator()[0]
    original = cel.rules_key
    asked: list[tuple[int, int]] = []

    def counted(rules: Any, value: Any, shapes: Any, node: Any) -> Any:
        asked.append((id(node), id(value)))
        return original(rules, value, shapes, node)

    with monkeypatch.context() as patch:
        patch.setattr(cel, "rules_key", counted)
        result = lint_text("---\n".join(template.format(i=i) for i in range(3)), selection=select("PL703"))
    assert result.project.admissions().dissents  # the other schemas were asked
    assert asked and len(asked) == len(set(asked))
