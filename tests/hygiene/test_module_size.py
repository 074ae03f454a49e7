"""Code a newcomer can change safely: modules of a size a person can hold, and functions whose
complexity ruff checks (CONTRIBUTING "Module size and complexity").

A module over `LIMIT` lines fails here unless `OVER_LIMIT` lists it with why; a function over the
complexity and argument-count thresholds of pyproject.toml fails `ruff check` unless its file is
listed under `[tool.ruff.lint.per-file-ignores]`. Both lists only shrink: an entry that is no
longer needed fails here too, so that splitting a module or a function removes its exception.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "policylint"
LIMIT = 800

# Modules over the limit, each with why it still is. Remove a line when its module is split.
OVER_LIMIT = {}

COMPLEXITY_RULES = ("C901", "PLR0912", "PLR0913", "PLR0915")


def _lines(path: Path) -> int:
    return path.read_bytes().count(b"\n")


def _ruff_config() -> dict[str, object]:
    lint = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["ruff"]["lint"]
    assert isinstance(lint, dict)
    return lint


# Code no one edits by hand: written by its generator, held to it by a test; the size that
# matters there is the generator's (policylint/k8s/schemacodegen.py, policylint/k8s/cel/keycodegen.py,
# under the limit).
GENERATED = ("policylint/k8s/schemachecks/", "policylint/k8s/celkeys/")


def _written_by_hand(path: Path) -> bool:
    return not path.relative_to(ROOT).as_posix().startswith(GENERATED)


def test_no_module_is_over_the_limit_unless_listed() -> None:
    over = {
        path.relative_to(ROOT).as_posix(): _lines(path)
        for path in sorted(PACKAGE.rglob("*.py"))
        if _lines(path) > LIMIT and _written_by_hand(path)
    }
    unlisted = {path: lines for path, lines in over.items() if path not in OVER_LIMIT}
    assert unlisted == {}, f"modules over {LIMIT} lines: split them along their concepts (or list one with why)"


def test_every_module_listed_is_still_over_the_limit() -> None:
    for path, reason in OVER_LIMIT.items():
        assert reason.strip(), f"{path}: say why it is over the limit"
        assert (ROOT / path).is_file(), f"{path} is gone: remove it from OVER_LIMIT"
        assert _lines(ROOT / path) > LIMIT, f"{path} is within {LIMIT} lines now: remove it from OVER_LIMIT"


def test_the_complexity_rules_are_on_with_their_thresholds() -> None:
    lint = _ruff_config()
    select = lint["select"]
    assert isinstance(select, list)
    assert set(COMPLEXITY_RULES) <= set(select)
    assert "max-complexity" in lint["mccabe"]  # type: ignore[operator]
    pylint = lint["pylint"]
    assert isinstance(pylint, dict)
    assert {"max-args", "max-branches", "max-statements"} <= set(pylint)


def test_every_complexity_exception_is_still_needed() -> None:
    """Each file listed as an exception to a complexity rule still breaks that rule: ruff run with
    the project's thresholds and without the exceptions finds it there."""
    lint = _ruff_config()
    ignores = lint["per-file-ignores"]
    assert isinstance(ignores, dict)
    listed = {(path, code) for path, codes in ignores.items() for code in codes if code in COMPLEXITY_RULES and "*" not in path}
    assert listed, "no exception is listed: then this test has nothing to check"
    pylint = lint["pylint"]
    mccabe = lint["mccabe"]
    assert isinstance(pylint, dict) and isinstance(mccabe, dict)
    settings = [
        f"lint.mccabe.max-complexity={mccabe['max-complexity']}",
        f"lint.pylint.max-args={pylint['max-args']}",
        f"lint.pylint.max-branches={pylint['max-branches']}",
        f"lint.pylint.max-statements={pylint['max-statements']}",
    ]
    command = [sys.executable, "-m", "ruff", "check", "--isolated", "--select", ",".join(COMPLEXITY_RULES)]
    for setting in settings:
        command += ["--config", setting]
    files = sorted({path for path, _ in listed})
    done = subprocess.run(
        [*command, "--output-format", "json", "--exit-zero", *files], cwd=ROOT, capture_output=True, text=True, check=True
    )
    found = {(Path(d["filename"]).resolve().relative_to(ROOT).as_posix(), d["code"]) for d in json.loads(done.stdout)}
    assert sorted(listed - found) == [], "these exceptions are no longer needed: remove them from pyproject.toml"


def test_no_private_name_is_imported_from_another_package() -> None:
    """A name with a leading underscore is its module's own: a module of another package that needs
    it imports it under a public name, so that renaming or removing a private helper breaks
    nothing outside its package."""
    import ast

    crossing = []
    for path in sorted(PACKAGE.rglob("*.py")):
        module = ".".join(path.relative_to(ROOT).with_suffix("").parts)
        package = module if path.name == "__init__.py" else module.rpartition(".")[0]
        package = package.removesuffix(".__init__")
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.ImportFrom) or not node.module or not node.module.startswith("policylint"):
                continue
            source = (ROOT / node.module.replace(".", "/")).is_dir()
            source_package = node.module if source else node.module.rpartition(".")[0]
            for alias in node.names:
                private = alias.name.startswith("_") and not alias.name.startswith("__")
                if private and source_package != package:
                    crossing.append(f"{path.relative_to(ROOT)}:{node.lineno}: {alias.name} from {node.module}")
    assert crossing == []


def test_what_the_limit_leaves_out_as_generated_says_so() -> None:
    generated = [path for path in sorted(PACKAGE.rglob("*.py")) if not _written_by_hand(path)]
    assert generated, "GENERATED names a directory that holds no module"
    for path in generated:
        assert path.read_text(encoding="utf-8").startswith('"""GENERATED by'), f"{path}: not generated"
