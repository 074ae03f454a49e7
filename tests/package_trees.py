"""The package's modules and their syntax trees, parsed once per process for every test that reads
them: the code hygiene rules (tests/hygiene/test_code_hygiene.py) and the import graph
(tests/rules/test_rule_inputs.py). Those tests share one worker (`xdist_group("package-trees")`),
so that the package is parsed once per suite, where each parsed it on a worker of its own (about
1.5 s of CPU each time)."""

from __future__ import annotations

import ast
import functools
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "policylint"
GROUP = "package-trees"


@functools.cache  # the trees are read, never changed
def modules() -> tuple[tuple[str, Path, ast.Module], ...]:
    """(dotted name, path, syntax tree) of every module of the package, in path order."""
    out = []
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        out.append((name, path, ast.parse(path.read_text(encoding="utf-8"))))
    return tuple(out)
