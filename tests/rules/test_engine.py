"""The engine: rule selection, a failing rule becomes PL000, findings are resolved, deduplicated and sorted."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from policylint import pipeline, rules
from policylint.cli import cli
from policylint.findings import Issue, Location, Severity
from policylint.input.positions import PositionResolver
from policylint.pipeline import LintRequest, lint
from policylint.project import Project
from policylint.rules import REGISTRY, engine
from policylint.rules.base import Rule
from policylint.rules.engine import INTERNAL_ERROR, Selection
from tests.lintutil import assert_valid_report, lint_paths

# -- selection ----------------------------------------------------------------------------------


def _enabled(selection: Selection) -> list[str]:
    return [r.id for r in REGISTRY if selection.enabled(r) and r.id < "PL100"]


ALL_INPUT = ["PL001", "PL002", "PL003", "PL004", "PL005", "PL006", "PL007", "PL008", "PL009", "PL010"]


@pytest.mark.parametrize(
    ("select", "ignore", "expected"),
    [
        ((), (), ALL_INPUT),
        (("PL0",), ("PL002",), [r for r in ALL_INPUT if r != "PL002"]),
        (("PL002",), ("PL0",), ["PL002"]),  # the longer prefix wins
        (("PL00",), ("PL0",), [r for r in ALL_INPUT if r != "PL010"]),  # PL010 matches only the ignore
        (("PL0",), ("PL0",), []),  # a tie goes to ignore
        ((), ("PL00",), ["PL010"]),
        (("pl001", "Pl009"), (), ["PL001", "PL009"]),  # ids are case-insensitive
        (("duplicate-",), (), ["PL002", "PL005"]),
        (("duplicate-object",), (), ["PL005"]),
        (("yaml",), (), ["PL001"]),  # name prefix
        (("PL0",), ("duplicate-mapping",), [r for r in ALL_INPUT if r != "PL002"]),
        (("PL1",), (), []),
    ],
)
def test_selection_longest_prefix_wins(select: tuple[str, ...], ignore: tuple[str, ...], expected: list[str]) -> None:
    assert _enabled(Selection(select, ignore)) == expected


def test_selection_by_name_prefix() -> None:
    assert _enabled(Selection(("du",))) == ["PL002", "PL005"]
    assert _enabled(Selection((), ("du",))) == [r for r in ALL_INPUT if r not in ("PL002", "PL005")]


def test_unknown_codes() -> None:
    assert Selection(("PL0", "PLX", "nosuchrule"), ("PL999",)).unknown_codes(REGISTRY) == ["PLX", "nosuchrule", "PL999"]
    assert Selection(("PL0",), ("yaml",)).unknown_codes(REGISTRY) == []
    assert Selection((INTERNAL_ERROR,)).unknown_codes(REGISTRY) == [INTERNAL_ERROR]  # PL000 is not a rule


# -- rules that fail ----------------------------------------------------------------------------------


class Exploding(Rule):
    """Raises before yielding anything."""

    id = "PL990"
    name = "exploding"
    severity = Severity.ERROR

    def check(self, project: Project) -> Iterator[Issue]:
        raise KeyError("boom")


class HalfExploding(Rule):
    """Yields one finding, then raises."""

    id = "PL991"
    name = "half-exploding"
    severity = Severity.WARNING

    def check(self, project: Project) -> Iterator[Issue]:
        obj = project.index.objects[0]
        yield self.issue(obj, "metadata.name", "first finding")
        raise ZeroDivisionError("late")


class Unlocatable(Rule):
    """Yields an issue the engine cannot resolve to a position."""

    id = "PL992"
    name = "unlocatable"
    severity = Severity.ERROR

    def check(self, project: Project) -> Iterator[Issue]:
        yield Issue(rule_id=self.id, message="no real object", object="not an object")  # type: ignore[arg-type]


class Unpathable(Rule):
    """Yields an issue on a real object whose path is no path: the batch of positions cannot
    answer it, and resolving it alone fails in the rule's guard."""

    id = "PL995"
    name = "unpathable"
    severity = Severity.ERROR

    def check(self, project: Project) -> Iterator[Issue]:
        obj = project.index.objects[0]
        yield self.issue(obj, "metadata.name", "a finding with a position")
        yield Issue(rule_id=self.id, message="no path", object=obj, path=5)  # type: ignore[arg-type]


class BrokenInit(Rule):
    """Cannot even be constructed."""

    id = "PL993"
    name = "broken-init"
    severity = Severity.ERROR

    def __init__(self) -> None:
        raise RuntimeError("constructor")


class Warner(Rule):
    """A well-behaved rule: one warning per Service."""

    id = "PL994"
    name = "warner"
    severity = Severity.WARNING

    def check(self, project: Project) -> Iterator[Issue]:
        for obj in project.index.objects:
            if obj.kind == "Service":
                yield self.issue(obj, "kind", f"warning about {obj.name}")


def use_rules(monkeypatch: pytest.MonkeyPatch, *extra: type[Rule]) -> None:
    """Put test rules into the registry the pipeline and the CLI read."""
    registry = tuple(sorted([*REGISTRY, *extra], key=lambda r: r.id))
    monkeypatch.setattr(pipeline, "REGISTRY", registry)
    monkeypatch.setattr(rules, "REGISTRY", registry)
    monkeypatch.setattr(rules, "BY_ID", {r.id: r for r in registry})


INPUT = """\
apiVersion: v1
kind: Service
metadata:
  name: web
  namespace: app
  labels: {tier: 1}
spec:
  ports:
  - port: 80
"""


@pytest.fixture
def manifests(tmp_path: Path) -> Path:
    (tmp_path / "a.yaml").write_text(INPUT)
    (tmp_path / "b.yaml").write_text("a: [\n")
    return tmp_path


def test_a_rule_that_raises_becomes_pl000_and_other_findings_are_kept(monkeypatch: pytest.MonkeyPatch, manifests: Path) -> None:
    use_rules(monkeypatch, Exploding, Warner)
    result = lint_paths([manifests])
    assert result.internal_error
    got = [(Path(f.file).name, f.line, f.column, f.rule, f.name, f.severity) for f in result.findings]
    assert got == [
        ("a.yaml", 1, 1, "PL000", "internal-error", Severity.ERROR),
        ("a.yaml", 2, 1, "PL994", "warner", Severity.WARNING),
        ("a.yaml", 6, 12, "PL009", "malformed-metadata", Severity.ERROR),
        ("b.yaml", 1, 5, "PL001", "yaml-syntax-error", Severity.ERROR),
    ]
    message = result.findings[0].message
    assert message.startswith("rule PL990 (exploding) failed: KeyError: 'boom' [test_engine.py:")
    assert message.endswith("please report this")


@pytest.mark.parametrize("broken", [HalfExploding, Unlocatable, Unpathable, BrokenInit], ids=lambda r: r.name)
def test_every_kind_of_rule_failure_is_contained(monkeypatch: pytest.MonkeyPatch, manifests: Path, broken: type[Rule]) -> None:
    use_rules(monkeypatch, broken, Warner)
    result = lint_paths([manifests])
    assert result.internal_error
    rules_seen = [f.rule for f in result.findings]
    assert rules_seen.count(INTERNAL_ERROR) == 1
    assert broken.id not in rules_seen  # a failing rule's partial output is not trusted
    assert {"PL994", "PL009", "PL001"} <= set(rules_seen)
    (internal,) = [f for f in result.findings if f.rule == INTERNAL_ERROR]
    assert f"rule {broken.id} ({broken.name}) failed" in internal.message


def test_two_failing_rules_give_two_internal_errors(monkeypatch: pytest.MonkeyPatch, manifests: Path) -> None:
    use_rules(monkeypatch, Exploding, BrokenInit)
    result = lint_paths([manifests])
    internal = [f.message.split(" failed")[0] for f in result.findings if f.rule == INTERNAL_ERROR]
    assert internal == ["rule PL990 (exploding)", "rule PL993 (broken-init)"]


def test_a_deselected_failing_rule_does_not_run(monkeypatch: pytest.MonkeyPatch, manifests: Path) -> None:
    use_rules(monkeypatch, Exploding)
    result = lint_paths([manifests], selection=Selection((), ("exploding",)))
    assert not result.internal_error
    assert INTERNAL_ERROR not in [f.rule for f in result.findings]


@pytest.mark.parametrize("fmt", ["text", "json"])
@pytest.mark.parametrize("extra", [[], ["--exit-zero"], ["--fail-on", "info"]])
def test_cli_exits_2_on_internal_error_and_still_reports(
    monkeypatch: pytest.MonkeyPatch, manifests: Path, fmt: str, extra: list[str]
) -> None:
    use_rules(monkeypatch, Exploding, Warner)
    result = CliRunner().invoke(cli, ["--format", fmt, *extra, str(manifests)])
    assert result.exit_code == 2, result.output
    if fmt == "json":
        report = json.loads(result.stdout)
        assert_valid_report(report)
        assert [f["rule"] for f in report["findings"]] == ["PL000", "PL994", "PL009", "PL001"]
        assert report["findings"][0]["name"] == "internal-error"
        assert report["findings"][0]["helpUri"].endswith("/PL000-internal-error.md")
    else:
        assert "error PL000 rule PL990 (exploding) failed" in result.stdout
        assert "warning PL994 warning about web" in result.stdout


# -- resolution, deduplication, order -----------------------------------------------------------------


class Repeater(Rule):
    """Yields the same finding twice and findings out of order."""

    id = "PL995"
    name = "repeater"
    severity = Severity.INFO

    def check(self, project: Project) -> Iterator[Issue]:
        for obj in sorted(project.index.objects, key=lambda o: o.name, reverse=True):
            yield self.issue(obj, "spec.ports[0].port", "same")
            yield self.issue(obj, "spec.ports[0].port", "same")
            yield self.issue(obj, "metadata", "earlier line", severity=Severity.ERROR)
        yield Issue(rule_id=self.id, message="fixed location", location=Location("zzz.yaml", 3, 4))


def test_findings_are_resolved_deduplicated_and_sorted(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    use_rules(monkeypatch, Repeater)
    (tmp_path / "a.yaml").write_text(INPUT.replace("web", "a1") + "---\n" + INPUT.replace("web", "a2"))
    result = lint_paths([tmp_path / "a.yaml"], selection=Selection(("PL995",)))
    got = [(f.file.rsplit("/", 1)[-1], f.line, f.column, f.message, f.severity.label) for f in result.findings]
    assert got == [
        ("a.yaml", 3, 1, "earlier line", "error"),  # a per-issue severity overrides the rule's
        ("a.yaml", 9, 5, "same", "info"),  # the key `port` of ports[0]
        ("a.yaml", 13, 1, "earlier line", "error"),
        ("a.yaml", 19, 5, "same", "info"),
        ("zzz.yaml", 3, 4, "fixed location", "info"),
    ]


def test_rule_order_does_not_change_the_findings(manifests: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    forward = lint(LintRequest(paths=[str(manifests)]))
    monkeypatch.setattr(pipeline, "REGISTRY", tuple(reversed(REGISTRY)))
    backward = lint(LintRequest(paths=[str(manifests)]))
    assert backward.findings == forward.findings


def test_engine_run_directly(manifests: Path) -> None:
    result = lint_paths([manifests])
    again = engine.run(result.project, [Exploding, *result.rules], PositionResolver(lambda f: Path(f).read_text()))
    assert again.internal_error
    assert [f for f in again.findings if f.rule != INTERNAL_ERROR] == result.findings
