"""Inline suppressions and the `policylint.io/ignore` annotation (docs/suppressions.md).

Every case lints a Service plus a BackendTLSPolicy whose single target reference names a
Service that does not exist: one PL201 finding at `spec.targetRefs[0].name`, the misspelled
`name:` (line 22 of MANIFEST), two lines below the reference's first line (`- group: ""`,
line 20).
"""

from __future__ import annotations

import datetime
from typing import Any

import pytest
from click.testing import CliRunner

from policylint.cli import cli
from policylint.findings import SuppressionKind
from policylint.pipeline import LintResult
from policylint.suppressions.directives import DirectiveError, parse_comment, parse_spec
from tests.lintutil import lint_text, select
from tests.manifests import BILLING_SERVICE as SERVICE

POLICY = """\
apiVersion: gateway.networking.k8s.io/v1
kind: BackendTLSPolicy
metadata:
  name: ledger-tls
  namespace: app{annotations}
spec:{spec_comment}
  targetRefs:{refs_comment}
  - group: ""{item_comment}
    kind: Service{kind_comment}
    name: ledger{name_comment}
  validation:{validation_comment}
    hostname: "ledger.app.svc.cluster.local"
    wellKnownCACertificates: System
"""

SLOTS = ("annotations", "spec_comment", "refs_comment", "item_comment", "kind_comment", "name_comment", "validation_comment")
REASON = " -- the ledger Service is deployed by the payments repository"


def manifest(**slots: str) -> str:
    values = dict.fromkeys(SLOTS, "")
    values.update(slots)
    return SERVICE + "---\n" + POLICY.format(**values)


def lint(text: str, **options: Any) -> LintResult:
    options.setdefault("today", datetime.date(2026, 6, 1))
    return lint_text(text, "apps.yaml", **options)


def rules_of(result: LintResult) -> list[tuple[str, int]]:
    return [(f.rule, f.line) for f in result.findings]


def test_the_unsuppressed_manifest_has_one_finding_where_the_docstring_says() -> None:
    result = lint(manifest())
    assert rules_of(result) == [("PL201", 22)]
    assert result.findings[0].path == "spec.targetRefs[0].name"
    assert result.suppressed == []


@pytest.mark.parametrize(
    "slot",
    [
        "name_comment",  # the finding's own line: the misspelled name
        "item_comment",  # the first line of the list item enclosing the finding's node
        "refs_comment",  # `targetRefs:`, a key enclosing the finding's node
        "spec_comment",  # `spec:`, the outermost enclosing key
    ],
)
def test_disable_applies_from_the_finding_through_its_node_and_on_enclosing_keys(slot: str) -> None:
    result = lint(manifest(**{slot: f"  # policylint: disable=PL201{REASON}"}))
    assert rules_of(result) == []
    [hidden] = result.suppressed
    assert (hidden.rule, hidden.line) == ("PL201", 22)
    assert hidden.suppression is not None
    assert hidden.suppression.kind is SuppressionKind.COMMENT
    assert hidden.suppression.reason == "the ledger Service is deployed by the payments repository"
    assert hidden.fingerprint  # suppressed findings keep their identity (SARIF, baselines)


@pytest.mark.parametrize(("slot", "line"), [("validation_comment", 23), ("kind_comment", 21)])
def test_a_comment_on_a_sibling_key_does_not_apply_and_is_unused(slot: str, line: int) -> None:
    # `validation:` neither encloses spec.targetRefs[0].name nor lies within it; nor does `kind:`,
    # the reference's field beside the one at fault.
    result = lint(manifest(**{slot: f"  # policylint: disable=PL201{REASON}"}))
    assert sorted(rules_of(result)) == [("PL201", 22), ("PL901", line)]
    assert result.suppressed == []


def test_a_comment_on_metadata_does_not_reach_into_spec() -> None:
    text = manifest().replace("  name: ledger-tls\n", f"  name: ledger-tls  # policylint: disable=PL201{REASON}\n")
    assert rules_of(lint(text)) == [("PL901", 16), ("PL201", 22)]


def test_disable_next_line_applies_to_the_line_below() -> None:
    text = manifest().replace('  - group: ""\n', f'  # policylint: disable-next-line=PL201{REASON}\n  - group: ""\n')
    result = lint(text)
    assert rules_of(result) == []
    assert [(f.rule, f.line) for f in result.suppressed] == [("PL201", 23)]


def test_disable_next_line_two_lines_above_does_not_apply() -> None:
    text = manifest().replace("  targetRefs:\n", f"  # policylint: disable-next-line=PL201{REASON}\n\n  targetRefs:\n")
    assert rules_of(lint(text)) == [("PL901", 19), ("PL201", 24)]


def test_disable_file_at_the_top_of_the_file_covers_every_document() -> None:
    text = (
        f"# policylint: disable-file=PL201{REASON}\n"
        + manifest()
        + "---\n"
        + POLICY.format(**dict.fromkeys(SLOTS, "")).replace("ledger-tls", "other-tls")
    )
    result = lint(text)
    assert rules_of(result) == []
    assert sorted(str(f.object) for f in result.suppressed) == [
        "BackendTLSPolicy app/ledger-tls",
        "BackendTLSPolicy app/other-tls",
    ]


def test_disable_file_at_the_top_of_a_document_covers_that_document_only() -> None:
    second = POLICY.format(**dict.fromkeys(SLOTS, "")).replace("ledger-tls", "other-tls")
    text = manifest() + f"---\n# policylint: disable-file=PL201{REASON}\n" + second
    result = lint(text)
    assert [str(f.object) for f in result.findings] == ["BackendTLSPolicy app/ledger-tls"]
    assert [str(f.object) for f in result.suppressed] == ["BackendTLSPolicy app/other-tls"]


def test_disable_file_after_the_first_key_is_malformed_and_hides_nothing() -> None:
    result = lint(manifest(spec_comment=f"  # policylint: disable-file=PL201{REASON}"))
    assert rules_of(result) == [("PL905", 18), ("PL201", 22)]
    assert "before the first key" in result.findings[0].message


@pytest.mark.parametrize("code", ["PL201", "pl201", "PL2", "targetref-not-found", "targetref"])
def test_codes_are_ids_or_names_or_their_prefixes_as_for_select(code: str) -> None:
    assert rules_of(lint(manifest(name_comment=f"  # policylint: disable={code}{REASON}"))) == []


def test_a_hash_inside_a_quoted_string_is_not_a_comment() -> None:
    # YAML 1.2 §6.6 "Comments": a comment starts at a `#` outside scalars. This one is the name's value.
    text = manifest().replace("    name: ledger\n", f'    name: "ledger # policylint: disable=PL201{REASON}"\n')
    result = lint(text)
    assert [f.rule for f in result.findings] == ["PL201"]
    assert "policylint: disable" in result.findings[0].message  # it is the name the rule read
    assert result.suppressed == []


def test_a_hash_inside_a_block_scalar_is_not_a_comment() -> None:
    # Inside the reference's node: as a comment it would hide the finding.
    text = manifest().replace("    name: ledger\n", f"    name: ledger\n    note: |\n      # policylint: disable=PL201{REASON}\n")
    result = lint(text, selection=select("PL201", "PL9"))
    assert [f.rule for f in result.findings] == ["PL201"]


def test_a_hash_glued_to_a_plain_scalar_is_part_of_it() -> None:
    # `ledger#policylint:` is one plain scalar (a comment needs a space before its `#`).
    text = manifest().replace("    name: ledger\n", f"    name: ledger#policylint:disable=PL201{REASON}\n")
    assert [f.rule for f in lint(text).findings] == ["PL201"]


def test_comments_past_a_syntax_error_are_not_read() -> None:
    # The quote never closes: the rest of the document is (invalid) string, not comments.
    text = 'apiVersion: v1\nkind: ConfigMap  # policylint: disable=PL2 -- x\ndata:\n  a: "open # policylint: disable=PL3 -- y\n'
    result = lint(text)
    assert [(f.rule, f.line) for f in result.findings if f.rule.startswith("PL9")] == [("PL901", 2)]


def test_the_annotation_suppresses_its_codes_on_every_finding_of_the_object() -> None:
    annotations = f'\n  annotations:\n    policylint.io/ignore: "PL201,PL301{REASON}"'
    result = lint(manifest(annotations=annotations), selection=select("PL201", "PL9"))
    assert rules_of(result) == []  # PL301 did not run: not judged unused
    [hidden] = result.suppressed
    assert hidden.suppression is not None and hidden.suppression.kind is SuppressionKind.ANNOTATION


def test_an_annotation_code_that_hides_nothing_is_reported_on_the_annotation() -> None:
    annotations = f'\n  annotations:\n    policylint.io/ignore: "PL201,PL301{REASON}"'
    result = lint(manifest(annotations=annotations))
    [unused] = result.findings
    assert (unused.rule, unused.line, unused.path) == ("PL901", 19, 'metadata.annotations["policylint.io/ignore"]')
    assert str(unused.object) == "BackendTLSPolicy app/ledger-tls"
    assert "PL301" in unused.message


def test_a_malformed_annotation_is_reported_and_hides_nothing() -> None:
    annotations = '\n  annotations:\n    policylint.io/ignore: "PL201 because it is external"'
    result = lint(manifest(annotations=annotations))
    assert [f.rule for f in result.findings] == ["PL905", "PL201"]


def test_until_is_inclusive_then_the_suppression_expires() -> None:
    text = manifest(name_comment=f"  # policylint: disable=PL201 until=2026-06-30{REASON}")
    assert rules_of(lint(text, today=datetime.date(2026, 6, 30))) == []
    expired = lint(text, today=datetime.date(2026, 7, 1))
    assert rules_of(expired) == [("PL201", 22), ("PL904", 22)]
    assert "2026-06-30" in expired.findings[1].message
    assert expired.suppressed == []


def test_until_after_the_reason_is_read_as_the_expiry_date() -> None:
    # Written after ` -- `, until= used to be part of the reason: the suppression never expired.
    text = manifest(name_comment="  # policylint: disable=PL201 -- deployed by payments until=2026-06-30")
    kept = lint(text, today=datetime.date(2026, 6, 30))
    assert rules_of(kept) == []
    assert [f.suppression.reason if f.suppression else None for f in kept.suppressed] == ["deployed by payments"]
    expired = lint(text, today=datetime.date(2026, 7, 1))
    assert rules_of(expired) == [("PL201", 22), ("PL904", 22)]
    # Given twice, before and after the reason, it is a malformed suppression that hides nothing.
    twice = lint(manifest(name_comment="  # policylint: disable=PL201 until=2026-06-30 -- why until=2027-01-01"))
    assert rules_of(twice) == [("PL201", 22), ("PL905", 22)]
    assert "until= is given more than once" in twice.findings[1].message


def test_a_missing_reason_is_reported_and_the_suppression_still_applies() -> None:
    result = lint(manifest(name_comment="  # policylint: disable=PL201"))
    assert rules_of(result) == [("PL903", 22)]
    assert [f.rule for f in result.suppressed] == ["PL201"]
    assert rules_of(lint(manifest(name_comment="  # policylint: disable=PL201"), require_suppression_reason=False)) == []


def test_an_unknown_code_is_reported_and_the_known_ones_still_apply() -> None:
    result = lint(manifest(name_comment=f"  # policylint: disable=PL2O1,PL201{REASON}"))
    assert rules_of(result) == [("PL902", 22)]
    assert "'PL2O1'" in result.findings[0].message
    assert [f.rule for f in result.suppressed] == ["PL201"]


def test_each_unused_code_is_reported_but_only_when_its_rule_ran() -> None:
    text = manifest(name_comment=f"  # policylint: disable=PL201,PL301{REASON}")
    result = lint(text)
    assert rules_of(result) == [("PL901", 22)]
    assert "PL301" in result.findings[0].message
    assert rules_of(lint(text, selection=select("PL2", "PL9"))) == []


def test_suppression_findings_follow_select_and_ignore() -> None:
    text = manifest(validation_comment=f"  # policylint: disable=PL201{REASON}")
    from policylint.rules.engine import Selection

    assert rules_of(lint(text, selection=Selection(ignore=("PL901",)))) == [("PL201", 22)]


def test_no_suppression_hides_a_finding_about_suppressions() -> None:
    # The PL901 on line 23 sits inside a file-wide disable of PL9: it is still reported.
    text = f"# policylint: disable-file=PL9{REASON}\n" + manifest(validation_comment=f"  # policylint: disable=PL201{REASON}")
    assert rules_of(lint(text)) == [("PL201", 23), ("PL901", 24)]


@pytest.mark.parametrize("fmt", ["text", "json"])
def test_exit_codes_do_not_change_with_suppressions(tmp_path: Any, fmt: str) -> None:
    """A run whose only error is suppressed exits as a clean run; one with another error still
    fails, suppressions or not."""
    clean = tmp_path / "clean.yaml"
    clean.write_text(manifest().replace("name: ledger\n", "name: billing\n"))
    suppressed = tmp_path / "suppressed.yaml"
    suppressed.write_text(manifest(name_comment=f"  # policylint: disable=PL201{REASON}"))
    failing = tmp_path / "failing.yaml"
    failing.write_text(manifest())

    def code(*paths: Any) -> int:
        return CliRunner().invoke(cli, ["check", "--no-cache", "--format", fmt, *map(str, paths)]).exit_code

    assert code(clean) == code(suppressed) == 0
    assert code(failing) == code(failing, suppressed) == 1


def test_the_summary_counts_suppressed_findings_and_show_suppressed_lists_them(tmp_path: Any) -> None:
    path = tmp_path / "apps.yaml"
    path.write_text(manifest(name_comment=f"  # policylint: disable=PL201{REASON}"))
    quiet = CliRunner().invoke(cli, ["check", "--no-cache", str(path)])
    assert quiet.stdout == ""
    assert quiet.stderr.strip().endswith("; 1 suppressed, 0 baselined")
    shown = CliRunner().invoke(cli, ["check", "--no-cache", "--show-suppressed", str(path)])
    assert shown.exit_code == 0
    lines = shown.stdout.splitlines()
    assert lines[0].startswith(f"{path}:22:5: error PL201 ")
    assert lines[-1] == "    suppressed: comment -- the ledger Service is deployed by the payments repository"


def test_grammar() -> None:
    assert parse_comment(" disable=PL201, targetref-not-found until=2026-01-02 -- why -- really") == (
        "disable",
        parse_spec("PL201,targetref-not-found until=2026-01-02 -- why -- really"),
    )
    spec = parse_spec("PL201, targetref-not-found until=2026-01-02 -- why -- really")
    assert spec.codes == ("PL201", "targetref-not-found")
    assert spec.until == datetime.date(2026, 1, 2)
    assert spec.reason == "why -- really"
    assert parse_spec("PL201 --").reason == ""
    after = parse_spec("PL201 -- why until=2026-01-02")
    assert (after.until, after.reason) == (datetime.date(2026, 1, 2), "why")
    for bad in ["", "PL201 because", "PL201 until=2026-1-2", "PL201 until=2026-02-30 -- x", "PL201 until=tomorrow"]:
        with pytest.raises(DirectiveError):
            parse_spec(bad)
    for bad in [" disable", " enable=PL201", " disable PL201 -- x", "disable-line=PL201"]:
        with pytest.raises(DirectiveError):
            parse_comment(bad)


def test_comments_per_file_are_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    from policylint.suppressions import comments

    monkeypatch.setattr(comments, "MAX_COMMENTS", 2)
    text = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n" + "# policylint: disable=PL1 -- x\n" * 5
    result = lint(text)
    # Two read (each unused), then one PL905 where reading stopped; nothing after it.
    assert rules_of(result) == [("PL901", 5), ("PL901", 6), ("PL905", 7)]
    assert "at most 2 per file" in result.findings[-1].message


def test_the_structure_walk_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    from policylint.suppressions import comments

    monkeypatch.setattr(comments, "MAX_EVENTS", 40)
    # The first document (about 30 events) is read; the budget runs out in the second.
    first = manifest(name_comment=f"  # policylint: disable=PL201{REASON}")
    text = first + "---\n" + "apiVersion: v1\nkind: ConfigMap  # policylint: disable=PL3 -- x\nmetadata:\n  name: b\n"
    result = lint(text)
    assert [f.rule for f in result.suppressed] == ["PL201"]
    assert rules_of(result) == [("PL905", 28)]  # the ConfigMap's kind line
    assert "more than 40 YAML nodes" in result.findings[0].message


def test_a_failing_suppression_step_is_an_internal_error_that_keeps_every_finding(monkeypatch: pytest.MonkeyPatch) -> None:
    from policylint.suppressions import apply

    def broken(*args: object, **kwargs: object) -> None:
        raise KeyError("boom")

    monkeypatch.setattr(apply, "apply", broken)
    result = lint(manifest(name_comment=f"  # policylint: disable=PL201{REASON}"))
    assert result.internal_error
    assert [f.rule for f in result.findings] == ["PL000", "PL201"]  # nothing hidden, the failure said
    assert "applying suppressions failed: KeyError" in result.findings[0].message


def test_an_annotation_expires_and_names_unknown_codes_like_a_comment() -> None:
    annotations = '\n  annotations:\n    policylint.io/ignore: "PL201,PL2O1 until=2026-05-31 -- moved in May"'
    result = lint(manifest(annotations=annotations))
    # Expired (today is 2026-06-01 in these tests): the finding is back, and the unknown code
    # is not judged (the whole annotation is out of force).
    assert [(f.rule, f.path) for f in result.findings] == [
        ("PL904", 'metadata.annotations["policylint.io/ignore"]'),
        ("PL201", "spec.targetRefs[0].name"),
    ]
    current = lint(manifest(annotations=annotations.replace("2026-05-31", "2026-06-01")))
    assert [f.rule for f in current.findings] == ["PL902"]
    assert [f.rule for f in current.suppressed] == ["PL201"]


def test_disable_next_line_above_an_enclosing_key_covers_its_value() -> None:
    text = manifest().replace("spec:\n  targetRefs:", f"# policylint: disable-next-line=PL201{REASON}\nspec:\n  targetRefs:")
    result = lint(text)
    assert rules_of(result) == []
    assert [(f.rule, f.line) for f in result.suppressed] == [("PL201", 23)]
