"""Rules of the code a reader relies on, checked over the package's syntax trees."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "policylint"


def _modules() -> list[tuple[str, Path, ast.Module]]:
    out = []
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        out.append((name, path, ast.parse(path.read_text(encoding="utf-8"))))
    return out


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
