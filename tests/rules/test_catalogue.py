"""The rule catalogue is complete and consistent: ids, names, docs, fixtures, runnable examples."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from policylint.rules import REGISTRY
from policylint.rules.docs import REQUIRED_HEADINGS, catalogue_markdown, doc_path, parse_doc
from policylint.rules.engine import INTERNAL_ERROR, INTERNAL_ERROR_NAME
from tests.lintutil import fixture_dirs, lint_text

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "rules"
FIXTURES = ROOT / "tests" / "rules"

# Rules about bytes on disk rather than YAML text: their Bad example cannot live in a
# markdown code block, so the doc describes it and the fixture directory proves it.
# PL906 (a stale baseline entry) needs a baseline file next to the manifests.
NOT_TEXT_REPRESENTABLE = {"PL006", "PL008", "PL906"}

# Rules that only run with an option: the doc's Bad and Good examples are linted with the
# option the doc's "Options" section names (LintRequest keyword arguments).
# The channel whose bundled CRDs serve the deprecated versions PL707 reports.
DOC_OPTIONS: dict[str, dict[str, object]] = {"PL608": {"max_affected": 5}, "PL707": {"channel": "experimental"}}


def test_ids_and_names_are_unique_and_well_formed() -> None:
    ids = [r.id for r in REGISTRY]
    names = [r.name for r in REGISTRY]
    assert len(ids) == len(set(ids))
    assert len(names) == len(set(names))
    for rule in REGISTRY:
        assert re.fullmatch(r"PL\d{3}", rule.id), rule
        assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", rule.name), rule
        assert rule.summary() and rule.summary() != rule.name, f"{rule.id} needs a docstring summary"
    assert INTERNAL_ERROR not in ids


def test_every_doc_belongs_to_a_rule_and_every_rule_has_a_doc() -> None:
    expected = {f"{r.id}-{r.name}.md" for r in REGISTRY} | {f"{INTERNAL_ERROR}-{INTERNAL_ERROR_NAME}.md"}
    present = {p.name for p in DOCS.glob("PL*.md")}
    assert sorted(expected - present) == [], "rules without a doc"
    assert sorted(present - expected) == [], "orphaned docs"


def test_every_rule_has_a_fixture_directory_and_none_is_orphaned() -> None:
    expected = {f"{r.id}-{r.name}" for r in REGISTRY}
    present = {p.name for p in fixture_dirs(FIXTURES)}
    assert sorted(expected - present) == [], "rules without fixtures"
    assert sorted(present - expected) == [], "orphaned fixture directories"
    for name in expected:
        assert (FIXTURES / name / "expected.yaml").is_file(), name
        assert (FIXTURES / name / "good.yaml").is_file(), name


@pytest.mark.parametrize("rule", REGISTRY, ids=[r.id for r in REGISTRY])
def test_doc_has_required_headings(rule: type) -> None:
    doc = parse_doc(doc_path(rule).read_text(encoding="utf-8"))
    assert doc.title.startswith(f"{rule.id} {rule.name}"), doc.title
    for heading in REQUIRED_HEADINGS:
        assert heading in doc.sections and doc.sections[heading].strip(), f"{rule.id}: missing '## {heading}'"


@pytest.mark.parametrize("rule", REGISTRY, ids=[r.id for r in REGISTRY])
def test_doc_bad_example_triggers_and_good_example_does_not(rule: type) -> None:
    doc = parse_doc(doc_path(rule).read_text(encoding="utf-8"))
    bad, good = doc.yaml_block("Bad"), doc.yaml_block("Good")
    assert good is not None, f"{rule.id}: the Good section needs a ```yaml block"
    if rule.id in NOT_TEXT_REPRESENTABLE:
        assert bad is None and doc.sections["Bad"].strip()
    else:
        assert bad is not None, f"{rule.id}: the Bad section needs a ```yaml block"
        triggered = [
            f for f in lint_text(bad, f"{rule.id}-bad.yaml", **DOC_OPTIONS.get(rule.id, {})).findings if f.rule == rule.id
        ]
        assert triggered, f"{rule.id}: the doc's Bad example does not trigger the rule"
    findings = lint_text(good, f"{rule.id}-good.yaml", **DOC_OPTIONS.get(rule.id, {})).findings
    assert [(f.rule, f.line, f.message) for f in findings] == [], f"{rule.id}: the doc's Good example is not clean"


def test_internal_error_doc_exists() -> None:
    text = (DOCS / f"{INTERNAL_ERROR}-{INTERNAL_ERROR_NAME}.md").read_text(encoding="utf-8")
    doc = parse_doc(text)
    assert "What it checks" in doc.sections and "Why it matters" in doc.sections


def test_rules_readme_is_current() -> None:
    assert (DOCS / "README.md").read_text(encoding="utf-8") == catalogue_markdown(), (
        "rules/README.md is stale: run `policylint rules --format markdown > rules/README.md`"
    )
