"""The bundled schemas' CEL rules' keys written out as code (policylint/k8s/celkeys/, generated
by policylint.k8s.cel.keycodegen, found by policylint.k8s.cel.keycode): the committed package is
what the generator writes, every function keys every value as the projector made in the process
does (the key, and the strings numbered in the same order), a bundled node's rules are keyed by
its function, and a node of another table, a schema that is not bundled and a function written
for another need are keyed by the projector."""

from __future__ import annotations

import copy
import random
from typing import Any

import pytest

from policylint.identity import IdentityMap
from policylint.k8s import schemas
from policylint.k8s.cel import keycode, keycodegen, program
from policylint.k8s.cel.convert import _info
from policylint.k8s.cel.projection import Need, projector
from policylint.k8s.celkeys import MODULES


def test_the_committed_package_is_what_the_generator_writes() -> None:
    """`python -m policylint.k8s.cel.keycodegen` writes it (make schemachecks): regenerate after
    the bundled schemas, the CEL rules' reading or the projector change."""
    files = keycodegen.generate()
    there = {p.name: p.read_text(encoding="utf-8") for p in keycodegen.TARGET.glob("*.py")}
    assert sorted(there) == sorted(files)
    assert [name for name in files if there[name] != files[name]] == []
    assert keycodegen.main(["--check"]) == 0


_SCALARS: tuple[Any, ...] = ("a", "b", "HTTP", "", 0, 7, True, False, 1.5, -0.0, None)


def _value(need: Need | None, rng: random.Random, depth: int = 0) -> Any:
    """A value that reads like one under `need` most of the time (its fields, its items), and
    anything else the rest: another type, a field absent or null, strings that repeat."""
    roll = rng.random()
    if need is None or depth > 6 or roll < 0.12:
        return rng.choice(_SCALARS)
    if roll < 0.2:
        return [rng.choice(_SCALARS) for _ in range(rng.randrange(3))]
    if need.items is not None and (not need.fields or roll < 0.6):
        return [_value(need.items, rng, depth + 1) for _ in range(rng.randrange(4))]
    if need.fields or roll < 0.5:
        out: dict[Any, Any] = {}
        for name, sub in need.fields.items():
            if rng.random() < 0.85:
                out[name] = None if rng.random() < 0.08 else _value(sub, rng, depth + 1)
        if rng.random() < 0.2:
            out["other"] = rng.choice(_SCALARS)
        return out
    return {"k": rng.choice(_SCALARS)} if roll < 0.8 else [rng.choice(_SCALARS)]


def test_every_written_function_keys_every_value_as_the_projector_does() -> None:
    nodes = keycodegen.keyed_nodes()
    assert len(nodes) == len(MODULES) > 100
    built, _ = schemas.BUILT[-1]
    rng = random.Random(38)
    for number, (need, numbered, info) in sorted(nodes.items()):
        written = keycode.written_projector(built[number], need, numbered)
        assert written is not None, number
        made = projector(need, program.shape, numbered, info)
        for _ in range(60):
            value = _value(need, rng)
            shapes: dict[int, Any] = {}
            first = {"x": 0, "HTTP": 1} if numbered else None
            second = copy.copy(first)
            assert written(value, shapes, first) == made(value, {}, second), (number, value)
            assert first == second  # the same strings numbered, in the same order


def _route_parent_refs() -> Any:
    """The newest bundled HTTPRoute's `spec.parentRefs` node, whose rules are keyed together."""
    root, _ = schemas.schemas(schemas.DEFAULT_CHANNEL)[("gateway.networking.k8s.io", "HTTPRoute", "v1")]
    return root["properties"]["spec"]["properties"]["parentRefs"]


def test_a_bundled_nodes_rules_are_keyed_by_its_written_function() -> None:
    node = _route_parent_refs()
    built, _ = schemas.BUILT[-1]
    number = next(i for i, n in enumerate(built) if n is node)
    module, _ = MODULES[number]
    from importlib import import_module

    keyed = program._together(node, program.node_rules(node))
    assert keyed is not None
    assert keyed[0] is import_module(f"policylint.k8s.celkeys.{module}").KEYS[number]
    refs = [{"name": "gw", "sectionName": "https"}, {"name": "gw", "namespace": "infra"}]
    key = program.rules_key(program.node_rules(node), refs, {}, node)
    need, literals = program.read_together(program.node_rules(node)) or (None, None)
    assert need is not None
    made = projector(need, program.shape, literals is not None, _info(node))
    assert key == (program._TOGETHER, made(refs, {}, None if literals is None else dict(literals)))


@pytest.fixture
def unbound(monkeypatch: pytest.MonkeyPatch) -> None:
    """The package bound afresh by the next `written_projector`."""
    monkeypatch.setattr(keycode, "_BOUND", [])
    monkeypatch.setattr(keycode, "_NODES", IdentityMap())


def test_a_function_written_for_another_need_is_not_taken(unbound: None, monkeypatch: pytest.MonkeyPatch) -> None:
    node = _route_parent_refs()
    need, literals = program.read_together(program.node_rules(node)) or (None, None)
    assert need is not None
    assert keycode.written_projector(node, need, literals is not None) is not None
    assert keycode.written_projector(node, need, literals is None) is None  # strings numbered or not
    other = copy.deepcopy(need)
    assert other.items is not None
    other.items.field("port").whole = False
    assert keycode.written_projector(node, other, literals is not None) is None
    # An entry that says it was written for another need than its node's rules read now.
    built, _ = schemas.BUILT[-1]
    number = next(i for i, n in enumerate(built) if n is node)
    forged = {**MODULES, number: (MODULES[number][0], "(000{}[])")}
    monkeypatch.setattr("policylint.k8s.celkeys.MODULES", forged)
    monkeypatch.setattr(keycode, "_BOUND", [])
    monkeypatch.setattr(keycode, "_NODES", IdentityMap())
    assert keycode.written_projector(node, need, literals is not None) is None


def test_a_table_other_than_the_one_written_from_binds_no_function(unbound: None, monkeypatch: pytest.MonkeyPatch) -> None:
    node = _route_parent_refs()
    need, literals = program.read_together(program.node_rules(node)) or (None, None)
    assert need is not None
    monkeypatch.setattr("policylint.k8s.celkeys.TABLE", "0" * 64)
    assert keycode.written_projector(node, need, literals is not None) is None


def test_a_schema_that_is_not_bundled_keeps_the_projector(unbound: None) -> None:
    """A CRD of the input with the bundled node's content: another object, keyed as before."""
    node = copy.deepcopy(_route_parent_refs())
    rules = program.node_rules(node)
    need, literals = program.read_together(rules) or (None, None)
    assert need is not None
    assert keycode.written_projector(node, need, literals is not None) is None
    keyed = program._together(node, rules)
    assert keyed is not None
    assert keyed[0].__module__ == "policylint.k8s.cel.projection"
