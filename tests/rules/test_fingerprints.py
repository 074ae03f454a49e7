"""Structured findings: `hint` and a stable `fingerprint` (policylint.rules.engine.fingerprint)."""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from policylint.findings import Finding, Issue, Severity
from policylint.k8s.objects import ObjectKey
from policylint.pipeline import LintResult
from policylint.project import Project
from policylint.reporters import RenderOptions
from policylint.reporters import json as json_reporter
from policylint.reporters import text as text_reporter
from policylint.rules.base import Rule
from policylint.rules.engine import Selection, fingerprint
from tests.lintutil import ROOT, assert_valid_report, lint_paths
from tests.rules.test_engine import use_rules

EXAMPLES = ROOT / "examples"


def _key(f: Finding) -> tuple[str, str, str, str]:
    """What identifies a finding across runs, apart from its position."""
    where = str(f.object) if f.object is not None else Path(f.file).name
    return (f.rule, where, f.path, re.sub(r"\bline [0-9]+", "line _", f.message))


def _fingerprints(result: LintResult) -> dict[tuple[str, str, str, str], str]:
    out = {_key(f): f.fingerprint for f in result.findings}
    assert len(out) == len(result.findings), "findings the test cannot tell apart"
    return out


@pytest.fixture
def examples(tmp_path: Path) -> Path:
    copy = tmp_path / "examples"
    shutil.copytree(EXAMPLES, copy)
    return copy


def _yaml_files(root: Path) -> list[Path]:
    return sorted(root.rglob("*.yaml"))


def test_every_finding_has_a_hex_fingerprint(examples: Path) -> None:
    result = lint_paths([examples])
    assert result.findings
    assert all(re.fullmatch(r"[0-9a-f]{32}", f.fingerprint) for f in result.findings)
    assert len({f.fingerprint for f in result.findings}) == len(result.findings)


def test_fingerprint_survives_shifted_lines(examples: Path) -> None:
    original = lint_paths([examples])
    before = _fingerprints(original)
    for path in _yaml_files(examples):
        text = path.read_text()
        # Blank lines and comments above the first object and above every later one.
        shifted = "# a comment\n\n\n" + text.replace("\n---\n", "\n---\n# moved down\n\n")
        path.write_text(shifted)
    after = lint_paths([examples])
    assert {(f.rule, f.line) for f in after.findings} != {(f.rule, f.line) for f in original.findings}  # moved
    assert _fingerprints(after) == before


def test_fingerprint_independent_of_file_order(examples: Path) -> None:
    files = _yaml_files(examples)
    forward = lint_paths(files)
    backward = lint_paths(list(reversed(files)))
    assert [f.fingerprint for f in backward.findings] == [f.fingerprint for f in forward.findings]
    assert _fingerprints(forward) == _fingerprints(lint_paths([examples]))


def test_fingerprint_independent_of_other_files_and_findings(examples: Path) -> None:
    everything = _fingerprints(lint_paths([examples]))
    for dropped in _yaml_files(examples):
        rest = [p for p in _yaml_files(examples) if p != dropped]
        subset = _fingerprints(lint_paths(rest))
        # Removing a file can add or remove findings elsewhere; the ones both runs report agree.
        common = subset.keys() & everything.keys()
        assert common
        assert {k: subset[k] for k in common} == {k: everything[k] for k in common}


def test_fingerprint_differs_by_rule_object_and_path() -> None:
    base = Finding("a.yaml", 1, 1, "PL201", "x", Severity.ERROR, "m", path="spec.targetRefs[0]")
    obj = ObjectKey("gateway.networking.k8s.io", "HTTPRoute", "team-a", "web")
    on_obj = Finding("a.yaml", 5, 3, "PL201", "x", Severity.ERROR, "m", object=obj, path="spec.targetRefs[0]")
    variants = [
        on_obj,
        Finding("b.yaml", 9, 9, "PL202", "x", Severity.ERROR, "other", object=obj, path="spec.targetRefs[0]"),
        Finding("a.yaml", 5, 3, "PL201", "x", Severity.ERROR, "m", object=obj._replace(name="web2"), path="spec.targetRefs[0]"),
        Finding("a.yaml", 5, 3, "PL201", "x", Severity.ERROR, "m", object=obj._replace(namespace="b"), path="spec.targetRefs[0]"),
        Finding(
            "a.yaml", 5, 3, "PL201", "x", Severity.ERROR, "m", object=obj._replace(kind="GRPCRoute"), path="spec.targetRefs[0]"
        ),
        Finding("a.yaml", 5, 3, "PL201", "x", Severity.ERROR, "m", object=obj._replace(group="g"), path="spec.targetRefs[0]"),
        Finding("a.yaml", 5, 3, "PL201", "x", Severity.ERROR, "m", object=obj, path="spec.targetRefs[1]"),
        base,
        Finding("b.yaml", 1, 1, "PL201", "x", Severity.ERROR, "m", path="spec.targetRefs[0]"),
        Finding("a.yaml", 1, 1, "PL201", "x", Severity.ERROR, "n", path="spec.targetRefs[0]"),
    ]
    prints = [fingerprint(f) for f in variants]
    assert len(set(prints)) == len(prints)
    # Not line, column, file or message of a finding on an object; not the line in a file-level message.
    assert fingerprint(on_obj) == fingerprint(
        Finding("z.yaml", 50, 7, "PL201", "y", Severity.INFO, "reworded", object=obj, path="spec.targetRefs[0]")
    )
    at = Finding("a.yaml", 3, 1, "PL002", "x", Severity.ERROR, "duplicate key 'a' (first defined on line 2)")
    assert fingerprint(at) == fingerprint(
        Finding("a.yaml", 9, 1, "PL002", "x", Severity.ERROR, "duplicate key 'a' (first defined on line 8)")
    )
    assert fingerprint(on_obj, 1) != fingerprint(on_obj)


SERVICES = """\
apiVersion: v1
kind: Service
metadata:
  name: {name}
  namespace: default
spec:
  ports:
  - port: 80
"""


class Twice(Rule):
    """Reports the same rule, object and path twice, with a hint."""

    id = "PL996"
    name = "twice"
    severity = Severity.WARNING

    def check(self, project: Project) -> Iterator[Issue]:
        for obj in project.index.objects:
            if obj.kind == "Service":
                yield self.issue(obj, "spec.ports[0].port", f"first about {obj.name}", hint="use port 8080")
                yield self.issue(obj, "spec.ports[0].port", f"second about {obj.name}\nforged: line")


def _lint_services(tmp_path: Path, *names: str, padding: str = "") -> LintResult:
    path = tmp_path / "services.yaml"
    path.write_text("---\n".join(padding + SERVICES.format(name=n) for n in names))
    return lint_paths([path], selection=Selection(("PL996",)))


def test_same_rule_object_and_path_are_numbered_in_order(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    use_rules(monkeypatch, Twice)
    result = _lint_services(tmp_path, "web")
    first, second = result.findings
    assert first.fingerprint != second.fingerprint
    assert first.fingerprint == fingerprint(first)
    assert second.fingerprint == fingerprint(second, 1)
    # Another object before it and lines above it change neither.
    again = _lint_services(tmp_path, "api", "web", padding="# comment\n\n")
    assert [f.fingerprint for f in again.findings if f.object == first.object] == [first.fingerprint, second.fingerprint]


def test_hint_in_json_and_text(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    use_rules(monkeypatch, Twice)
    result = _lint_services(tmp_path, "web")
    first, second = result.findings
    assert (first.hint, second.hint) == ("use port 8080", None)

    report = json.loads(json_reporter.render(result))
    assert_valid_report(report)
    assert [(f["hint"], f["fingerprint"]) for f in report["findings"]] == [
        ("use port 8080", first.fingerprint),
        (None, second.fingerprint),
    ]

    lines = text_reporter.render(result).splitlines()
    assert lines[1] == "    hint: use port 8080"
    assert lines[2].endswith("second about web\\nforged: line [Service default/web]")
    assert len(lines) == 3  # no hint line without a hint
    assert "hint: use port 8080" in text_reporter.render(result, RenderOptions(color=True))


def test_hint_is_escaped_and_bounded(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    class Hostile(Rule):
        """A hint with control characters and no end."""

        id = "PL997"
        name = "hostile"
        severity = Severity.INFO

        def check(self, project: Project) -> Iterator[Issue]:
            yield self.issue(project.index.objects[0], "kind", "m", hint="\x1b[31mred\n::error ::forged" + "x" * 5000)

    use_rules(monkeypatch, Hostile)
    path = tmp_path / "s.yaml"
    path.write_text(SERVICES.format(name="web"))
    result = lint_paths([path], selection=Selection(("PL997",)))
    (finding,) = result.findings
    assert finding.hint is not None and len(finding.hint) <= 1_000
    text = text_reporter.render(result)
    assert "\x1b" not in text and "\n::error" not in text
    assert text.splitlines()[1].startswith("    hint: \\x1b[31mred\\n::error ::forged")


def test_pl411_opaque_backend_moves_its_advice_into_the_hint() -> None:
    from tests.lintutil import lint_text, only
    from tests.rules.test_attachment import SHARED, route

    text = SHARED + route("[{name: shared, namespace: infra}]", backend="{group: example.com, kind: Pool, name: p}")
    (finding,) = only(lint_text(text), "PL411")
    assert finding.message.endswith("so it cannot tell whether the controller resolves it")
    assert finding.hint is not None
    assert finding.hint.startswith("Add the object to the input, or if it is defined outside this repository")
    assert "--external Pool/" in finding.hint
