"""One parametrized test over tests/rules/<ID>-<name>/ (sqlfluff's YAML cases, istio's test grid).

`bad.yaml` must produce exactly the findings of that rule listed in
`expected.yaml` (rule, object as `Kind ns/name`, field path, line, and column and severity
when given); `good.yaml` must produce no finding at all. `options.yaml`, when
present, holds LintRequest options (e.g. `synthetic_rule_names: true`; `baseline` names a file
of the case directory). `links.txt`, when present, lists symlinks (`NAME -> TARGET`): the case is
linted from a copy of its directory with those links made in it (`materialise`), since the tree
(and so the sdist) holds no symlink.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.lintutil import describe, fixture_dirs, lint_paths

FIXTURES = Path(__file__).resolve().parents[1] / "rules"
CASES = fixture_dirs(FIXTURES) if FIXTURES.is_dir() else []


def _options(case: Path) -> dict[str, Any]:
    path = case / "options.yaml"
    options: dict[str, Any] = yaml.safe_load(path.read_text()) or {} if path.exists() else {}
    if "baseline" in options:  # a baseline file of the case (PL906), named relative to it
        options["baseline"] = str(case / options["baseline"])
    return options


def materialise(case: Path, tmp_path: Path) -> Path:
    """The case directory itself, or a copy of it with the symlinks its links.txt lists."""
    links = case / "links.txt"
    if not links.exists():
        return case
    copy = tmp_path / case.name
    shutil.copytree(case, copy)
    for line in links.read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            name, target = (part.strip() for part in line.split("->"))
            os.symlink(target, copy / name)
    return copy


def _bad_inputs(case: Path) -> list[Path]:
    # Usually bad.yaml; a rule about files themselves may use other names (bad.json, bad-*.yaml).
    return sorted(p for p in case.iterdir() if p.name.startswith("bad") and p.name != "bad.md")


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_bad_fixture_triggers_exactly_expected(case: Path, tmp_path: Path) -> None:
    rule_id = case.name.split("-", 1)[0]
    case = materialise(case, tmp_path)
    expected = yaml.safe_load((case / "expected.yaml").read_text())
    assert expected, "expected.yaml must list at least one finding"
    result = lint_paths(_bad_inputs(case), **_options(case))
    got = describe([f for f in result.findings if f.rule == rule_id])
    want = []
    for e in expected:
        want.append({"rule": e["rule"], "object": e.get("object"), "path": e.get("path", ""), "line": e["line"]})
    assert got == want
    # A severity, where given, is pinned too (a rule whose severity depends on the input).
    severities = [e.get("severity") for e in expected]
    got_severities = [f.severity.label for f in result.findings if f.rule == rule_id]
    assert got_severities == [s if s is not None else g for s, g in zip(severities, got_severities)]
    columns = [e.get("column") for e in expected]
    if any(c is not None for c in columns):
        got_cols = [f.column for f in result.findings if f.rule == rule_id]
        assert got_cols == [c if c is not None else g for c, g in zip(columns, got_cols)]


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_good_fixture_is_clean(case: Path, tmp_path: Path) -> None:
    case = materialise(case, tmp_path)
    result = lint_paths([case / "good.yaml"], **_options(case))
    assert [(f.rule, f.line, f.message) for f in result.findings] == []


def test_the_tree_holds_no_symlink() -> None:
    # A symlink in the tree goes into the sdist, and one to an absolute path makes building the
    # wheel from it fail (tarfile's data filter); links a fixture needs are listed in its links.txt.
    root = Path(__file__).resolve().parents[2]
    links = [
        p
        for d in ("tests", "examples", "rules", "schemas", "policylint", "docs")
        for p in (root / d).rglob("*")
        if p.is_symlink()
    ]
    assert links == []
