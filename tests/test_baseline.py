"""The baseline (`--write-baseline`, `--baseline`; docs/suppressions.md#baseline).

Entries match findings by fingerprint: rule, object identity and field path
(policylint.rules.engine.fingerprint), so line numbers, file names and document order do not
matter, and another field of the same object is another finding.
"""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner, Result

from policylint.cli import cli
from policylint.findings import SuppressionKind
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
        ("PL201", "BackendTLSPolicy app/billing-tls", "spec.targetRefs[0]", "manifests/apps.yaml"),
        ("PL201", "BackendTLSPolicy app/ledger-tls", "spec.targetRefs[0]", "manifests/apps.yaml"),
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
    assert [(f.rule, f.path) for f in result.findings] == [("PL201", "spec.targetRefs[1]")]
    assert [(f.rule, f.path) for f in result.suppressed] == [("PL201", "spec.targetRefs[0]")]


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
