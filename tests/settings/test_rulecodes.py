"""One rule-code matcher (policylint.rulecodes) for `--select`/`--ignore`, the configuration's
`select`, `ignore` and `severity`, `--fix-only` and suppression comments: its edge cases, and each
place that reads codes agreeing with it."""

from __future__ import annotations

import datetime
from pathlib import Path

import pytest
from click.testing import CliRunner

from policylint.autofix import fixable
from policylint.cli import cli
from policylint.config.overrides import severity_for
from policylint.rulecodes import ALL, matches, prefix_length, split_codes
from policylint.rules import REGISTRY
from policylint.rules.engine import Selection
from tests.autofix.test_autofix import STYLED
from tests.lintutil import lint_text

PL203 = next(r for r in REGISTRY if r.id == "PL203")  # targetref-group-invalid
PL201 = next(r for r in REGISTRY if r.id == "PL201")  # targetref-not-found


@pytest.mark.parametrize(
    ("code", "expected"),
    [
        ("PL203", 5),  # the id
        ("PL2", 3),  # a prefix of the id
        ("pl20", 4),  # ids in any case
        ("targetref-group-invalid", 23),  # the name
        ("targetref-", 10),  # a prefix of the name
        ("TargetRef-Group", 15),  # names in any case
        ("  PL2 ", 3),  # blanks around do not count
        (ALL, 0),  # every rule, less specific than any prefix
        ("PL201", -1),
        ("group-invalid", -1),  # a prefix, not a substring
        ("", -1),
        ("   ", -1),
        ("all", -1),  # ALL only in capitals, as ruff spells it
    ],
)
def test_how_specifically_a_code_names_a_rule(code: str, expected: int) -> None:
    assert prefix_length(code, PL203.id, PL203.name) == expected
    assert matches(code, PL203.id, PL203.name) is (expected >= 0)


def test_comma_lists_and_repeated_values_are_one_list() -> None:
    assert split_codes(["PL1,PL2", " targetref- , ", "ALL", ""]) == ("PL1", "PL2", "targetref-", "ALL")
    assert split_codes([]) == ()


def test_the_longest_code_wins_and_all_is_the_shortest() -> None:
    assert not Selection(select=(ALL,), ignore=("PL2",)).enabled(PL203)
    assert Selection(select=(ALL,), ignore=("PL2",)).enabled(next(r for r in REGISTRY if r.id == "PL110"))
    assert Selection(select=("PL203",), ignore=(ALL,)).enabled(PL203)
    assert not Selection(select=("PL203",), ignore=(ALL,)).enabled(PL201)
    assert not Selection(select=(ALL,), ignore=(ALL,)).enabled(PL203)  # a tie: ignore wins
    assert Selection(select=(ALL, "nope")).unknown_codes(REGISTRY) == ["nope"]
    assert severity_for(PL203, [("PL2", "warning"), (ALL, "info")]) == "warning"
    assert severity_for(PL201, [(ALL, "info"), ("PL203", "off")]) == "info"


def test_fix_only_names_rules_as_select_does() -> None:
    """`--fix-only` matched a name prefix only in lower case, and a blank-padded code not at all."""
    findings = lint_text(STYLED, "m.yaml").findings
    assert {f.rule for f in fixable(findings, unsafe=True, only=("PL203",))} == {"PL203"}
    for code in ("TargetRef-Group", " pl203 ", "targetref-group-"):
        assert {f.rule for f in fixable(findings, unsafe=True, only=(code,))} == {"PL203"}, code
    assert {f.rule for f in fixable(findings, unsafe=True, only=(ALL,))} == {f.rule for f in fixable(findings, unsafe=True)}


def test_a_comment_disables_every_rule_with_all() -> None:
    text = "# policylint: disable-file=ALL -- generated\r\n" + STYLED.removeprefix("\ufeff")
    result = lint_text(text, "m.yaml", today=datetime.date(2026, 6, 1))
    assert result.findings == []
    assert result.suppressed and all(f.suppression is not None for f in result.suppressed)


def test_the_configuration_takes_all(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / ".policylint.yaml").write_text("select: [ALL]\nignore: [PL1]\nseverity:\n  ALL: warning\n")
    (tmp_path / "m.yaml").write_bytes(STYLED.encode("utf-8"))
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(cli, ["check", "--no-cache", "--format", "json", "m.yaml"], catch_exceptions=False)
    assert result.exit_code == 0, result.output  # every finding a warning: below the default --fail-on error
    assert '"rule": "PL203"' in result.output and '"severity": "warning"' in result.output
    assert '"rule": "PL110"' not in result.output and '"severity": "error"' not in result.output
