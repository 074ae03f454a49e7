"""One parametrized test over tests/rules/<ID>-<name>/ (sqlfluff's YAML cases, istio's test grid).

`bad.yaml` must produce exactly the findings of that rule listed in
`expected.yaml` (rule, object as `Kind ns/name`, field path, line, and column
when given); `good.yaml` must produce no finding at all. `options.yaml`, when
present, holds LintRequest options (e.g. `synthetic_rule_names: true`; `baseline` names a file
of the case directory).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.lintutil import describe, lint_paths

FIXTURES = Path(__file__).parent / "rules"
CASES = sorted(p for p in FIXTURES.iterdir() if p.is_dir()) if FIXTURES.is_dir() else []


def _options(case: Path) -> dict[str, Any]:
    path = case / "options.yaml"
    options: dict[str, Any] = yaml.safe_load(path.read_text()) or {} if path.exists() else {}
    if "baseline" in options:  # a baseline file of the case (PL906), named relative to it
        options["baseline"] = str(case / options["baseline"])
    return options


def _bad_inputs(case: Path) -> list[Path]:
    # Usually bad.yaml; a rule about files themselves may use other names (bad.json, bad-*.yaml).
    return sorted(p for p in case.iterdir() if p.name.startswith("bad") and p.name != "bad.md")


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_bad_fixture_triggers_exactly_expected(case: Path) -> None:
    rule_id = case.name.split("-", 1)[0]
    expected = yaml.safe_load((case / "expected.yaml").read_text())
    assert expected, "expected.yaml must list at least one finding"
    result = lint_paths(_bad_inputs(case), **_options(case))
    got = describe([f for f in result.findings if f.rule == rule_id])
    want = []
    for e in expected:
        want.append({"rule": e["rule"], "object": e.get("object"), "path": e.get("path", ""), "line": e["line"]})
    assert got == want
    columns = [e.get("column") for e in expected]
    if any(c is not None for c in columns):
        got_cols = [f.column for f in result.findings if f.rule == rule_id]
        assert got_cols == [c if c is not None else g for c, g in zip(columns, got_cols)]


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_good_fixture_is_clean(case: Path) -> None:
    result = lint_paths([case / "good.yaml"], **_options(case))
    assert [(f.rule, f.line, f.message) for f in result.findings] == []
