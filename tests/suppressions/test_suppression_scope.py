"""A suppression applies to the document that carries it (docs/suppressions.md).

An object defined twice (PL005) has one key and two documents: the annotation, a comment or
a `disable-file=` of one definition must not hide what is found on the other, in another
file, another document of the same file or another item of the same `kind: List`. And the
duplicate finding itself needs both definitions to agree before it is hidden.

Each policy here names a Service that does not exist (PL201 on `spec.targetRefs[0].name`): one
definition names `ledger`, the other `other`, so the findings tell the definitions apart.
"""

from __future__ import annotations

import datetime
from pathlib import Path
from typing import Any

from policylint.findings import Finding
from policylint.pipeline import LintResult
from tests.lintutil import lint_paths, lint_text

REASON = " -- the Service is deployed by the payments repository"


def policy(service: str, ignore: str = "", indent: str = "") -> str:
    annotations = f'\n  annotations:\n    policylint.io/ignore: "{ignore}{REASON}"' if ignore else ""
    text = f"""\
apiVersion: gateway.networking.k8s.io/v1
kind: BackendTLSPolicy
metadata:
  name: ledger-tls
  namespace: app{annotations}
spec:
  targetRefs:
  - group: ""
    kind: Service
    name: {service}
  validation:
    hostname: "ledger.app.svc.cluster.local"
    wellKnownCACertificates: System
"""
    return "".join(indent + line if line else line for line in text.splitlines(keepends=True))


def options() -> dict[str, Any]:
    return {"today": datetime.date(2026, 6, 1)}


def found(findings: list[Finding]) -> list[tuple[str, str, int]]:
    return [(Path(f.file).name, f.rule, f.line) for f in findings]


def two_files(tmp_path: Path, first: str, later: str) -> LintResult:
    (tmp_path / "a.yaml").write_text(first)
    (tmp_path / "b.yaml").write_text(later)
    return lint_paths([tmp_path / "a.yaml", tmp_path / "b.yaml"], **options())


def test_an_annotation_hides_nothing_on_the_other_definition_in_another_file(tmp_path: Path) -> None:
    result = two_files(tmp_path, policy("ledger", ignore="PL201"), policy("other"))
    # a.yaml's own PL201 (line 10) is hidden; b.yaml's (line 8: no annotations there) is not,
    # and neither is the duplicate, which sits on b.yaml's metadata.name.
    assert found(result.suppressed) == [("a.yaml", "PL201", 12)]
    assert found(result.findings) == [("b.yaml", "PL005", 4), ("b.yaml", "PL201", 10)]


def test_an_annotation_on_the_later_definition_hides_its_own_findings_only(tmp_path: Path) -> None:
    result = two_files(tmp_path, policy("ledger"), policy("other", ignore="PL201"))
    assert found(result.suppressed) == [("b.yaml", "PL201", 12)]
    assert found(result.findings) == [("a.yaml", "PL201", 10), ("b.yaml", "PL005", 4)]


def test_definitions_in_one_file_are_told_apart_by_their_document() -> None:
    text = policy("ledger") + "---\n" + policy("other", ignore="PL201")
    result = lint_text(text, "apps.yaml", **options())
    # The second document starts on line 15; its annotation hides its PL201 (line 24) only.
    assert found(result.suppressed) == [("apps.yaml", "PL201", 26)]
    assert found(result.findings) == [("apps.yaml", "PL201", 10), ("apps.yaml", "PL005", 18)]


def test_members_of_one_list_are_told_apart_by_their_item() -> None:
    text = (
        "apiVersion: v1\nkind: List\nitems:\n"
        + policy("ledger", ignore="PL201", indent="  ").replace("  apiVersion", "- apiVersion", 1)
        + policy("other", indent="  ").replace("  apiVersion", "- apiVersion", 1)
    )
    result = lint_text(text, "list.yaml", **options())
    # Items start on lines 4 and 19; the first item's PL201 is on line 13, the second's on 26.
    assert found(result.suppressed) == [("list.yaml", "PL201", 15)]
    assert found(result.findings) == [("list.yaml", "PL005", 22), ("list.yaml", "PL201", 28)]


def test_the_duplicate_is_not_hidden_by_either_definition_alone(tmp_path: Path) -> None:
    for first, later, alone in ((True, False, "a.yaml"), (False, True, "b.yaml")):
        result = two_files(
            tmp_path,
            policy("ledger", ignore="PL005" if first else ""),
            policy("ledger", ignore="PL005" if later else ""),
        )
        assert result.suppressed == []
        [duplicate] = [f for f in result.findings if f.rule == "PL005"]
        assert Path(duplicate.file).name == "b.yaml"
        [unused] = [f for f in result.findings if f.rule == "PL901"]
        assert Path(unused.file).name == alone
        other = "the later definition, at " if first else "the first definition, at "
        assert other in unused.message and "hidden only when" in unused.message


def test_the_duplicate_is_hidden_when_both_definitions_suppress_it(tmp_path: Path) -> None:
    result = two_files(tmp_path, policy("ledger", ignore="PL005,PL201"), policy("ledger", ignore="PL005,PL201"))
    assert found(result.findings) == []
    assert found(result.suppressed) == [("a.yaml", "PL201", 12), ("b.yaml", "PL005", 4), ("b.yaml", "PL201", 12)]


def test_a_comment_on_the_first_definition_counts_as_its_consent() -> None:
    first = policy("ledger").replace("  name: ledger-tls\n", f"  name: ledger-tls  # policylint: disable=PL005{REASON}\n", 1)
    later = policy("ledger").replace("  name: ledger-tls\n", f"  name: ledger-tls  # policylint: disable=PL005{REASON}\n", 1)
    both = lint_text(first + "---\n" + later, "apps.yaml", **options())
    assert [f.rule for f in both.suppressed] == ["PL005"]
    assert [f.rule for f in both.findings] == ["PL201", "PL201"]
    alone = lint_text(policy("ledger") + "---\n" + later, "apps.yaml", **options())
    assert [f.rule for f in alone.findings] == ["PL201", "PL005", "PL901", "PL201"]


def test_disable_next_line_above_a_document_marker_does_not_reach_that_document() -> None:
    # The second document's root starts on its `---` line (line 6): the comment above that
    # line belongs to the first document and must not hide the second's findings.
    config_map = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\n"
    text = config_map + f"# policylint: disable-next-line=PL003{REASON}\n--- {{a: 1}}\n"
    result = lint_text(text, "settings.yaml", **options())
    assert [(f.rule, f.line) for f in result.findings] == [("PL901", 5), ("PL003", 6)]
    assert result.suppressed == []
    # Written after the `---`, the comment is the second document's own, and applies.
    inside = config_map + f"--- # policylint: disable-next-line=PL003{REASON}\n{{a: 1}}\n"
    result = lint_text(inside, "settings.yaml", **options())
    assert result.findings == []
    assert [(f.rule, f.line) for f in result.suppressed] == [("PL003", 6)]
