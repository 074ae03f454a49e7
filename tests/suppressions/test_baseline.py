"""The baseline (`--write-baseline`, `--baseline`; docs/suppressions.md#baseline).

Entries match findings by fingerprint: rule, object identity and field path
(policylint.rules.engine.fingerprint), so line numbers and document order do not matter, and
another field of the same object is another finding. An entry hides a finding in its own file
first, and one in another file only when the object is defined once (it moved): a copy of a
baselined object in another file is new, whichever file sorts first.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from policylint.cli import cli
from policylint.findings import Finding, SuppressionKind
from policylint.pipeline import LintResult
from policylint.suppressions.baseline import Entry, read
from tests.lintutil import lint_paths
from tests.manifests import BILLING_SERVICE as SERVICE

# Two PL201 findings: billing-tls names `biling` (a typo) and ledger-tls names `ledger`, which
# lives in another repository.
POLICY = """\
apiVersion: gateway.networking.k8s.io/v1
kind: BackendTLSPolicy
metadata:
  name: {name}-tls
  namespace: app
spec:
  targetRefs:
  - group: ""
    kind: Service
    name: {target}
  validation:
    hostname: {name}.app.svc.cluster.local
    wellKnownCACertificates: System
"""

BILLING = POLICY.format(name="billing", target="biling")
LEDGER = POLICY.format(name="ledger", target="ledger")


def documents(*docs: str) -> str:
    return "---\n".join(docs)


def check(tmp_path: Path, *args: str) -> Result:
    # Relative paths, as a user types them in the repository's root.
    import os

    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        return CliRunner().invoke(cli, ["check", "--no-cache", *args])
    finally:
        os.chdir(cwd)


def baseline_run(tmp_path: Path) -> LintResult:
    return lint_paths([tmp_path / "manifests"], baseline=str(tmp_path / ".policylint-baseline.json"))


def setup(tmp_path: Path, text: str) -> Path:
    (tmp_path / "manifests").mkdir(exist_ok=True)
    path = tmp_path / "manifests" / "apps.yaml"
    path.write_text(text)
    return path


def test_write_baseline_records_every_finding_and_hides_them(tmp_path: Path) -> None:
    setup(tmp_path, documents(SERVICE, BILLING, LEDGER))
    before = check(tmp_path, "manifests")
    assert before.exit_code == 1
    written = check(tmp_path, "--write-baseline", "manifests")
    assert written.exit_code == 0
    assert "wrote 2 baseline entries to .policylint-baseline.json" in written.stderr
    assert written.stderr.strip().endswith("; 0 suppressed, 2 baselined")
    assert written.stdout == ""

    text = (tmp_path / ".policylint-baseline.json").read_text()
    lines = text.splitlines()
    assert lines[0] == '{"tool": "policylint", "version": 1, "entries": ['
    assert lines[-1] == "]}"
    entries = [json.loads(line.rstrip(",")) for line in lines[1:-1]]  # one entry per line
    assert [(e["rule"], e["object"], e["path"], e["file"]) for e in entries] == [
        ("PL201", "BackendTLSPolicy app/billing-tls", "spec.targetRefs[0].name", "manifests/apps.yaml"),
        ("PL201", "BackendTLSPolicy app/ledger-tls", "spec.targetRefs[0].name", "manifests/apps.yaml"),
    ]
    assert entries[0]["message"].startswith("Service 'biling' not found")
    assert all(len(e["fingerprint"]) == 32 for e in entries)

    again = check(tmp_path, "--baseline", ".policylint-baseline.json", "manifests")
    assert again.exit_code == 0
    assert again.stderr.strip().endswith("; 0 suppressed, 2 baselined")
    # Writing twice gives the same bytes: nothing depends on the run.
    check(tmp_path, "--write-baseline", "manifests")
    assert (tmp_path / ".policylint-baseline.json").read_text() == text


def test_write_baseline_with_a_file_and_the_suppressed_listing(tmp_path: Path) -> None:
    setup(tmp_path, documents(SERVICE, BILLING))
    assert check(tmp_path, "--write-baseline", "--baseline", "base.json", "manifests").exit_code == 0
    shown = check(tmp_path, "--baseline", "base.json", "--show-suppressed", "manifests")
    assert shown.exit_code == 0
    assert shown.stdout.splitlines()[-1] == "    suppressed: baseline"


def _baselined_then(tmp_path: Path, before: str, after: str) -> LintResult:
    setup(tmp_path, before)
    assert check(tmp_path, "--write-baseline", "manifests").exit_code == 0
    setup(tmp_path, after)
    return baseline_run(tmp_path)


def test_an_edit_above_a_finding_keeps_it_hidden(tmp_path: Path) -> None:
    edited = "# owned by the payments team\n\n" + documents(
        SERVICE.replace("    port: 443\n", "    port: 443\n  - name: http\n    port: 80\n"), BILLING, LEDGER
    )
    result = _baselined_then(tmp_path, documents(SERVICE, BILLING, LEDGER), edited)
    assert result.findings == []
    assert [f.suppression.kind for f in result.suppressed if f.suppression] == [SuppressionKind.BASELINE] * 2
    assert result.suppressed[0].line > 20  # it did move


def test_a_reordered_file_keeps_them_hidden(tmp_path: Path) -> None:
    result = _baselined_then(tmp_path, documents(SERVICE, BILLING, LEDGER), documents(LEDGER, SERVICE, BILLING))
    assert result.findings == []
    assert len(result.suppressed) == 2


def test_an_object_moved_to_another_file_stays_hidden(tmp_path: Path) -> None:
    setup(tmp_path, documents(SERVICE, BILLING, LEDGER))
    assert check(tmp_path, "--write-baseline", "manifests").exit_code == 0
    setup(tmp_path, documents(SERVICE, BILLING))
    (tmp_path / "manifests" / "ledger.yaml").write_text(LEDGER)
    result = baseline_run(tmp_path)
    assert [(f.rule, f.file) for f in result.findings] == []  # no PL906 either: both entries match
    assert sorted(Path(f.file).name for f in result.suppressed) == ["apps.yaml", "ledger.yaml"]


def test_a_new_finding_on_another_field_of_the_same_object_is_not_hidden(tmp_path: Path) -> None:
    second_ref = '    name: ledger\n  - group: ""\n    kind: Service\n    name: ledgr\n'
    result = _baselined_then(
        tmp_path, documents(SERVICE, LEDGER), documents(SERVICE, LEDGER.replace("    name: ledger\n", second_ref))
    )
    assert [(f.rule, f.path) for f in result.findings] == [("PL201", "spec.targetRefs[1].name")]
    assert [(f.rule, f.path) for f in result.suppressed] == [("PL201", "spec.targetRefs[0].name")]


def test_a_fixed_finding_leaves_a_stale_entry_that_write_baseline_drops(tmp_path: Path) -> None:
    result = _baselined_then(
        tmp_path, documents(SERVICE, BILLING, LEDGER), documents(SERVICE, BILLING.replace("biling", "billing"), LEDGER)
    )
    [stale] = result.findings
    assert (stale.rule, stale.severity.label, stale.line, stale.column) == ("PL906", "info", 2, 1)
    assert stale.file == str(tmp_path / ".policylint-baseline.json")
    assert "BackendTLSPolicy app/billing-tls" in stale.message
    assert len(result.suppressed) == 1
    # Info: the run passes at the default --fail-on error, and fails at --fail-on info.
    assert check(tmp_path, "--baseline", ".policylint-baseline.json", "manifests").exit_code == 0
    assert check(tmp_path, "--baseline", ".policylint-baseline.json", "--fail-on", "info", "manifests").exit_code == 1
    assert check(tmp_path, "--write-baseline", "manifests").exit_code == 0
    assert len(read(str(tmp_path / ".policylint-baseline.json"))) == 1
    assert baseline_run(tmp_path).findings == []


def test_stale_entries_are_judged_only_where_their_rule_ran_over_their_file(tmp_path: Path) -> None:
    setup(tmp_path, documents(SERVICE, BILLING))
    (tmp_path / "manifests" / "other.yaml").write_text(LEDGER)
    assert check(tmp_path, "--write-baseline", "manifests").exit_code == 0
    # Only apps.yaml linted (as pre-commit passes changed files): the ledger entry is not stale.
    only_apps = check(tmp_path, "--baseline", ".policylint-baseline.json", "manifests/apps.yaml")
    assert (only_apps.exit_code, only_apps.stdout) == (0, "")
    # PL201 not run: neither entry can be judged.
    narrow = check(tmp_path, "--baseline", ".policylint-baseline.json", "--select", "PL3,PL9", "manifests")
    assert (narrow.exit_code, narrow.stdout) == (0, "")


def test_identical_fingerprints_need_as_many_entries(tmp_path: Path) -> None:
    """Count-aware matching: an entry hides one finding, whatever the fingerprints say."""
    setup(tmp_path, documents(SERVICE, BILLING, LEDGER))
    result = lint_paths([tmp_path / "manifests"])
    fingerprint = result.findings[0].fingerprint
    line = json.dumps({"fingerprint": fingerprint, "rule": "PL201", "file": "manifests/apps.yaml"})
    (tmp_path / ".policylint-baseline.json").write_text(f'{{"version": 1, "entries": [{line}, {line}]}}')
    hidden = baseline_run(tmp_path)
    assert [f.fingerprint for f in hidden.suppressed] == [fingerprint]
    # The unused copy (the baseline file sorts first), and the other PL201.
    assert [f.rule for f in hidden.findings] == ["PL906", "PL201"]


def test_a_bad_baseline_is_a_usage_error_naming_the_file(tmp_path: Path) -> None:
    setup(tmp_path, SERVICE)
    cases = {
        "missing.json": None,
        "broken.json": "{not json",
        "list.json": "[]",
        "version.json": '{"version": 2, "entries": []}',
        "entry.json": '{"version": 1, "entries": [{"rule": "PL201"}]}',
    }
    for name, text in cases.items():
        if text is not None:
            (tmp_path / name).write_text(text)
        result = check(tmp_path, "--baseline", name, "manifests")
        assert result.exit_code == 2, name
        assert result.stderr.startswith(f"policylint: error: baseline {name}"), result.stderr
        assert "Traceback" not in result.stderr


def test_entries_sort_without_line_numbers() -> None:
    a = Entry("f1", "PL201", file="a.yaml", object="HTTPRoute app/b", path="spec")
    b = Entry("f2", "PL201", file="a.yaml", object="HTTPRoute app/a", path="spec")
    assert sorted([a, b], key=Entry.sort_key) == [b, a]


def test_findings_about_suppressions_are_never_recorded(tmp_path: Path) -> None:
    unused = SERVICE.replace("  name: billing\n", "  name: billing  # policylint: disable=PL301 -- kept\n", 1)
    setup(tmp_path, documents(unused, BILLING))
    written = check(tmp_path, "--write-baseline", "manifests")
    assert written.exit_code == 0  # PL901 is a warning
    assert [e.rule for e in read(str(tmp_path / ".policylint-baseline.json"))] == ["PL201"]
    assert written.stdout.startswith("manifests/apps.yaml:4:18: warning PL901 ")


# The billing policy again, changed elsewhere than its finding: a copy is an error (PL005), not
# an identical repetition, and its PL201 has the original's fingerprint.
BILLING_COPY = BILLING.replace("wellKnownCACertificates: System", "wellKnownCACertificates: System\n  options: {}")


def _copied(tmp_path: Path, copy_name: str) -> LintResult:
    """The billing policy baselined in apps.yaml, then a copy of it added in `copy_name`."""
    setup(tmp_path, documents(SERVICE, BILLING))
    assert check(tmp_path, "--write-baseline", "manifests").exit_code == 0
    (tmp_path / "manifests" / copy_name).write_text(BILLING_COPY)
    return baseline_run(tmp_path)


def _where(findings: list[Finding]) -> list[tuple[str, str]]:
    return sorted((f.rule, Path(f.file).name) for f in findings)


def test_a_copy_in_a_file_sorting_first_does_not_take_the_originals_entry(tmp_path: Path) -> None:
    result = _copied(tmp_path, "0-copy.yaml")
    # The copy's finding is new, and so is the duplicate (on the later definition, the original).
    assert _where(result.findings) == [("PL005", "apps.yaml"), ("PL201", "0-copy.yaml")]
    assert _where(result.suppressed) == [("PL201", "apps.yaml")]


def test_a_copy_in_a_file_sorting_last_does_not_take_the_originals_entry(tmp_path: Path) -> None:
    result = _copied(tmp_path, "z-copy.yaml")
    assert _where(result.findings) == [("PL005", "z-copy.yaml"), ("PL201", "z-copy.yaml")]
    assert _where(result.suppressed) == [("PL201", "apps.yaml")]


def test_an_object_moved_to_a_file_sorting_first_stays_hidden(tmp_path: Path) -> None:
    setup(tmp_path, documents(SERVICE, BILLING, LEDGER))
    assert check(tmp_path, "--write-baseline", "manifests").exit_code == 0
    setup(tmp_path, documents(SERVICE, LEDGER))
    (tmp_path / "manifests" / "0-billing.yaml").write_text(BILLING)
    result = baseline_run(tmp_path)
    assert result.findings == []  # no PL906 either: the entry is used
    assert _where(result.suppressed) == [("PL201", "0-billing.yaml"), ("PL201", "apps.yaml")]


def test_a_moved_object_and_a_copy_of_it_are_both_new(tmp_path: Path) -> None:
    """Defined twice, and in neither file its entry names: which one is the original cannot
    be told, so the entry hides neither (and is stale, its file being linted)."""
    setup(tmp_path, documents(SERVICE, BILLING))
    assert check(tmp_path, "--write-baseline", "manifests").exit_code == 0
    setup(tmp_path, SERVICE)
    (tmp_path / "manifests" / "billing.yaml").write_text(BILLING)
    (tmp_path / "manifests" / "copy.yaml").write_text(BILLING_COPY)
    result = baseline_run(tmp_path)
    assert _where(result.findings) == [
        ("PL005", "copy.yaml"),
        ("PL201", "billing.yaml"),
        ("PL201", "copy.yaml"),
        ("PL906", ".policylint-baseline.json"),
    ]
    assert result.suppressed == []


def test_each_definition_of_a_recorded_duplicate_keeps_its_own_entries(tmp_path: Path) -> None:
    setup(tmp_path, documents(SERVICE, BILLING))
    (tmp_path / "manifests" / "z-copy.yaml").write_text(BILLING_COPY)
    assert check(tmp_path, "--write-baseline", "manifests").exit_code == 0
    entries = read(str(tmp_path / ".policylint-baseline.json"))
    assert [(e.rule, e.file) for e in entries] == [
        ("PL201", "manifests/apps.yaml"),
        ("PL005", "manifests/z-copy.yaml"),
        ("PL201", "manifests/z-copy.yaml"),
    ]
    result = baseline_run(tmp_path)
    assert result.findings == []
    assert _where(result.suppressed) == [("PL005", "z-copy.yaml"), ("PL201", "apps.yaml"), ("PL201", "z-copy.yaml")]
    # A third definition, in a file sorting first, is new: its PL201, and the PL005 it causes
    # on apps.yaml (now a later definition), which no entry of apps.yaml records.
    (tmp_path / "manifests" / "0-copy.yaml").write_text(BILLING_COPY.replace("options: {}", "options: {a: b}"))
    third = baseline_run(tmp_path)
    assert _where(third.findings) == [("PL005", "apps.yaml"), ("PL201", "0-copy.yaml")]


def test_entries_without_a_file_hide_the_finding_of_an_object_defined_once(tmp_path: Path) -> None:
    """Entries written by hand, or by tools that keep only the fingerprint and the rule."""
    setup(tmp_path, documents(SERVICE, BILLING, LEDGER))
    fingerprints = [f.fingerprint for f in lint_paths([tmp_path / "manifests"]).findings]
    lines = ", ".join(json.dumps({"fingerprint": fp, "rule": "PL201"}) for fp in fingerprints)
    (tmp_path / ".policylint-baseline.json").write_text(f'{{"version": 1, "entries": [{lines}]}}')
    assert baseline_run(tmp_path).findings == []
    # Which definition such an entry was recorded for cannot be told: with a copy, both are new.
    (tmp_path / "manifests" / "copy.yaml").write_text(BILLING_COPY)
    result = baseline_run(tmp_path)
    assert _where(result.findings) == [("PL005", "copy.yaml"), ("PL201", "apps.yaml"), ("PL201", "copy.yaml")]
    assert _where(result.suppressed) == [("PL201", "apps.yaml")]  # the ledger policy's


def test_a_copy_whose_own_finding_is_suppressed_does_not_unhide_the_original(tmp_path: Path) -> None:
    """The copy sorting first still takes occurrence 0 of the fingerprint, though an annotation
    hides its finding: the original's finding, with another fingerprint, stays hidden."""
    annotated = BILLING_COPY.replace(
        "  namespace: app\n", "  namespace: app\n  annotations:\n    policylint.io/ignore: PL201,PL005 -- a test copy\n", 1
    )
    result = _copied(tmp_path, "0-copy.yaml").findings
    assert ("PL201", "apps.yaml") not in _where(result)
    (tmp_path / "manifests" / "0-copy.yaml").write_text(annotated)
    result_annotated = baseline_run(tmp_path)
    assert _where(result_annotated.findings) == [("PL005", "apps.yaml"), ("PL901", "0-copy.yaml")]
    assert sorted((f.rule, Path(f.file).name, f.suppression.kind.name) for f in result_annotated.suppressed if f.suppression) == [
        ("PL201", "0-copy.yaml", "ANNOTATION"),
        ("PL201", "apps.yaml", "BASELINE"),
    ]


def test_a_copy_is_new_in_a_run_over_the_changed_file_with_the_repository_as_context(tmp_path: Path) -> None:
    """As pre-commit runs: the original, in an unchanged file, is read and counted."""
    _copied(tmp_path, "0-copy.yaml")
    result = check(tmp_path, "--baseline", ".policylint-baseline.json", "--context", "manifests", "manifests/0-copy.yaml")
    assert result.exit_code == 1
    reported = sorted(line.split(" ")[2] + " " + line.split(":")[0] for line in result.stdout.splitlines() if " PL" in line)
    assert reported == ["PL005 manifests/apps.yaml", "PL201 manifests/0-copy.yaml"]


# -- baselines written before a rule's findings moved (policylint.suppressions.fingerprint_versions)

# Each directory holds a rule's fixture and the baseline the code before "Locations: ... PL201,
# PL406, PL409, PL411, PL417 on name" wrote for it with `--write-baseline`; `examples.json` is
# that code's baseline of examples/. The counts are the findings each fixture's expected.yaml
# places on a reference's `name` (the others did not move).
PREVIOUS = Path(__file__).resolve().parents[1] / "data" / "baselines-before-name-locations"
MOVED_ON_NAME = {"PL201": (3, 3), "PL406": (4, 4), "PL409": (1, 4), "PL411": (5, 6), "PL417": (2, 4)}


def _previous(tmp_path: Path, rule: str) -> Path:
    shutil.copytree(PREVIOUS / rule, tmp_path / rule)
    return tmp_path / rule


def _migrated(count: int) -> str:
    entries = "1 baseline entry" if count == 1 else f"{count} baseline entries"
    return f"policylint: info: baseline: {entries} matched by a finding's fingerprint from before its rule moved it to another field; run --write-baseline to update them"


@pytest.mark.parametrize("rule", sorted(MOVED_ON_NAME))
def test_a_baseline_written_before_the_findings_moved_to_name_still_hides_them(tmp_path: Path, rule: str) -> None:
    root = _previous(tmp_path, rule)
    moved, entries = MOVED_ON_NAME[rule]
    result = check(root, "--baseline", "baseline.json", "manifests.yaml")
    assert result.exit_code == 0, result.output
    assert result.stdout == ""  # no finding back, and no entry stale (PL906)
    assert result.stderr.splitlines()[0] == _migrated(moved)  # said once
    assert result.stderr.strip().endswith(f"; 0 suppressed, {entries} baselined")


def test_write_baseline_rewrites_the_previous_entries_in_the_current_form(tmp_path: Path) -> None:
    root = _previous(tmp_path, "PL201")
    old = read(str(root / "baseline.json"))
    assert [e.path for e in old] == ["spec.targetRefs[0]"] * 3
    assert check(root, "--baseline", "baseline.json", "--write-baseline", "manifests.yaml").exit_code == 0
    new = read(str(root / "baseline.json"))
    assert [(e.object, e.path) for e in new] == [
        ("BackendTLSPolicy app/billing-tls", "spec.targetRefs[0].name"),
        ("BackendTLSPolicy app/ledger-tls", "spec.targetRefs[0].name"),
        ("ClientTrafficPolicy app/edge-timeouts", "spec.targetRefs[0].name"),
    ]
    assert not {e.fingerprint for e in old} & {e.fingerprint for e in new}
    again = check(root, "--baseline", "baseline.json", "manifests.yaml")
    assert again.exit_code == 0 and again.stdout == ""
    assert "matched by a finding's fingerprint from before" not in again.stderr  # nothing left to update


def test_an_entry_in_both_forms_keeps_the_current_one_and_the_previous_one_is_stale(tmp_path: Path) -> None:
    root = _previous(tmp_path, "PL201")
    previous = (root / "baseline.json").read_text().splitlines()[1:-1]
    assert check(root, "--baseline", "baseline.json", "--write-baseline", "manifests.yaml").exit_code == 0
    current = (root / "baseline.json").read_text().splitlines()[1:-1]
    both = [line.rstrip(",") for line in (*current, *previous)]
    (root / "baseline.json").write_text('{"tool": "policylint", "version": 1, "entries": [\n' + ",\n".join(both) + "\n]}\n")
    result = check(root, "--baseline", "baseline.json", "manifests.yaml")
    assert result.exit_code == 0
    assert [line.split(" ", 3)[2] for line in result.stdout.splitlines() if not line.startswith(" ")] == ["PL906"] * 3
    assert "spec.targetRefs[0] (manifests.yaml) matches no finding" in result.stdout
    assert "matched by a finding's fingerprint from before" not in result.stderr


def test_the_examples_baseline_from_before_the_move_hides_what_it_recorded(tmp_path: Path) -> None:
    root = tmp_path / "examples"
    shutil.copytree(Path(__file__).resolve().parents[2] / "examples", root)
    shutil.copy(PREVIOUS / "examples.json", root / "baseline.json")
    assert len(read(str(root / "baseline.json"))) == 18
    result = check(root, "--baseline", "baseline.json", "--show-suppressed", ".")
    assert result.exit_code == 0, result.output
    # Its PL201 (spec.targetRefs[0]) and PL417 (spec.listeners[2].tls.certificateRefs[0]) entries.
    assert _migrated(2) in result.stderr.splitlines()
    assert result.stderr.strip().endswith("; 0 suppressed, 18 baselined")
    shown = [line for line in result.stdout.splitlines() if " PL201 " in line or " PL417 " in line or " PL906 " in line]
    assert [line.split(":")[0:2] for line in shown] == [["infra/gateway.yaml", "46"], ["team-a/envoy-policies.yaml", "40"]]


def test_previous_paths_undo_each_move_of_the_rule_only() -> None:
    from policylint.suppressions.fingerprint_versions import previous_paths

    assert previous_paths("PL201", "spec.targetRefs[0].name") == ["spec.targetRefs[0]"]
    assert previous_paths("PL409", "spec.parentRef.name") == ["spec.parentRef"]
    assert previous_paths("PL409", "spec.parentRef") == []  # no name written: it never moved
    assert previous_paths("PL417", "spec.validation.caCertificateRefs[1].kind") == []
    assert previous_paths("PL301", "spec.targetRefs[0].name") == []  # PL301 never moved
