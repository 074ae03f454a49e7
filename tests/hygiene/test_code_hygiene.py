"""Rules of the code a reader relies on, checked over the package's syntax trees."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.package_trees import GROUP, PACKAGE
from tests.package_trees import modules as _modules

pytestmark = pytest.mark.xdist_group(GROUP)


def _package(module: str, path: Path) -> str:
    return module if path.name == "__init__.py" else module.rpartition(".")[0]


def test_no_private_name_is_imported_from_another_package() -> None:
    """A leading underscore says "only this package reads it": a helper another package needs is
    public (and documented as such), so that renaming a private one never breaks a distant caller."""
    found = []
    for module, path, tree in _modules():
        here = _package(module, path)
        for node in ast.walk(tree):
            if not (isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("policylint")):
                continue
            there = node.module if (PACKAGE.parent / node.module.replace(".", "/") / "__init__.py").exists() else None
            there = there or node.module.rpartition(".")[0]
            for alias in node.names:
                if alias.name.startswith("_") and not alias.name.startswith("__") and there != here:
                    found.append(f"{path.relative_to(PACKAGE.parent)}:{node.lineno}: {node.module}.{alias.name}")
    assert found == []


# Where `id()` stays a key, and why: memos on the admission hot path, whose keys are the maps and
# lists of the objects being checked (alive for the memo's whole life: the catalogue pins them) or schema nodes
# the catalogue holds for the run, inside composite keys; an `IdentityMap` there made the admission
# of 10k objects measurably slower (docs/performance.md).
ID_KEYS_KEPT = {
    "policylint/k8s/cel/program.py": "shape(): the memo of a value's shape (a token per map or list in the run's), whose maps and lists its owner pins (Catalogue.pinned)",
    "policylint/k8s/cel/convert.py": "to_cel(): the per-object memo of converted maps and lists",
    "policylint/k8s/schemawalk.py": "violations(): (schema node, value shape) memo keys",
    "policylint/k8s/celrules.py": "cel_failures(): (schema node, value shape) memo keys, and each node's plan (which holds the node)",
    "policylint/k8s/differences.py": "pairs of bundled schema nodes (held by the tables' entries) and memo keys as celrules'",
    "policylint/k8s/differential.py": "the pairs' differences at a position and the documents' maps and lists (held by the tables' entries), and memo keys as celrules'",
    "policylint/k8s/schemacode.py": "the generated checks bound to the bundled schema nodes they were written from (held by the table and kept beside their id), and memo keys as schemawalk's",
    "policylint/input/sharing.py": "the hash-consing key of a document's child map or list, held by its parent in the loader's table",
}


def _id_calls(tree: ast.Module) -> list[int]:
    return [
        node.lineno
        for node in ast.walk(tree)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "id"
    ]


def test_tables_are_keyed_by_objects_not_by_id() -> None:
    """`table[id(obj)]` stops answering for `obj` once another object takes its id, and says
    nothing of what the key is: a table is keyed by the object (`K8sObject`, `Facet`, `Listener`,
    `Grant` hash by identity), by a stable key, or by `policylint.identity` where identity is
    meant of an unhashable key."""
    found = []
    for _, path, tree in _modules():
        name = path.relative_to(PACKAGE.parent).as_posix()
        if name == "policylint/identity.py" or name in ID_KEYS_KEPT:
            continue
        found += [f"{name}:{line}" for line in _id_calls(tree)]
    assert found == []


def test_every_kept_id_key_is_still_there() -> None:
    by_name = {path.relative_to(PACKAGE.parent).as_posix(): tree for _, path, tree in _modules()}
    assert [name for name in ID_KEYS_KEPT if not _id_calls(by_name[name])] == []


def test_the_package_is_parsed_once_for_the_module() -> None:
    """The tests above, and the import graph's (tests/rules/test_rule_inputs.py), read the same
    trees: a second reading parses nothing again."""
    assert _modules() is _modules()
    assert len({path for _, path, _ in _modules()}) == len(list(PACKAGE.rglob("*.py")))
