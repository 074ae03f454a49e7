"""Rules declare their options (name, type, default), and configuration sets them per rule."""

from __future__ import annotations

import re

import pytest

from policylint.pipeline import LintRequest, lint
from policylint.rules import REGISTRY
from policylint.rules.base import RuleOptionError
from policylint.rules.effective_policy import BlastRadiusExceeded
from tests.lintutil import ROOT

BAD = ROOT / "tests" / "rules" / "PL608-blast-radius-exceeded" / "bad.yaml"


def test_declared_options_are_well_formed() -> None:
    for rule in REGISTRY:
        for option in rule.options:
            assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", option.name), (rule.id, option.name)
            assert option.check(option.default) == option.default
            assert option.help
        # A rule with no configuration runs with its defaults.
        assert dict(rule().config) == {o.name: o.default for o in rule.options}


def test_pl608_threshold_is_the_rules_option() -> None:
    by_option = lint(LintRequest(paths=[str(BAD)], rule_options={"PL608": {"max-affected": 5}}, cache_dir=None))
    by_shortcut = lint(LintRequest(paths=[str(BAD)], max_affected=5, cache_dir=None))
    off = lint(LintRequest(paths=[str(BAD)], cache_dir=None))
    pl608 = [(f.line, f.message) for f in by_option.findings if f.rule == "PL608"]
    assert pl608 and pl608 == [(f.line, f.message) for f in by_shortcut.findings if f.rule == "PL608"]
    assert [f for f in off.findings if f.rule == "PL608"] == []
    # The rule names its option, not a command-line flag.
    assert all("--max-affected" not in message and "max-affected 5" in message for _, message in pl608)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"PL608": {"max-afected": 5}}, "PL608 has no option 'max-afected' (options: max-affected)"),
        ({"PL608": {"max-affected": "5"}}, "option max-affected takes int, not str"),
        ({"PL608": {"max-affected": True}}, "option max-affected takes int, not bool"),
        ({"PL608": {"max-affected": -1}}, "option max-affected must be at least 0, not -1"),
        ({"PL201": {"anything": 1}}, "PL201 has no option 'anything' (options: none)"),
        ({"PL999": {}}, "options for PL999, which is not a rule"),
    ],
)
def test_bad_options_are_usage_errors_before_any_work(options: dict[str, dict[str, object]], message: str) -> None:
    with pytest.raises(RuleOptionError, match=re.escape(message)):
        lint(LintRequest(paths=[str(ROOT / "does-not-exist")], rule_options=options, cache_dir=None))


def test_options_are_per_instance() -> None:
    assert BlastRadiusExceeded({"max-affected": 3}).option("max-affected") == 3
    assert BlastRadiusExceeded().option("max-affected") is None
