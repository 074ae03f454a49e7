"""Where `check --fix` writes, and what it refuses to (policylint.autofix.write_target).

A read-only file or directory is refused with a PL008 finding, never made writable and never
written, also as root (these tests run as root, where permission bits stop no write: the mode
bits are what is checked). A symlinked manifest is fixed in its target, the link kept, when
the target lies inside the linted paths; otherwise it is refused. A write that fails is a
finding too, not a traceback. Every other file is still fixed, the report is still written,
and the exit code is that of the findings left.

Each manifest is a Service and a BackendTLSPolicy on it with a committed `status` stanza: one
PL110 finding (info) whose safe fix deletes the stanza.
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from policylint.cli import cli
from tests.manifests import BILLING_SERVICE

POLICY = """\
---
apiVersion: gateway.networking.k8s.io/v1
kind: BackendTLSPolicy
metadata:
  name: billing-tls
  namespace: {namespace}
spec:
  targetRefs:
  - group: ""
    kind: Service
    name: billing
  validation:
    hostname: billing.{namespace}.svc.cluster.local
    wellKnownCACertificates: System
status:
  ancestors: []
"""


def manifest(namespace: str) -> str:
    """Objects of their own namespace: manifests of different namespaces do not collide."""
    return BILLING_SERVICE.replace("namespace: app\n", f"namespace: {namespace}\n") + POLICY.format(namespace=namespace)


def fix(*args: str, cwd: Path | None = None) -> tuple[int, list[dict[str, Any]], str]:
    """`check --fix --format json ARGS`: the exit code, the report's findings, stderr."""
    old = os.getcwd()
    try:
        if cwd is not None:
            os.chdir(cwd)
        result = CliRunner().invoke(cli, ["check", "--no-cache", "--fix", "--format", "json", *args])
    finally:
        os.chdir(old)
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result.exit_code, json.loads(result.stdout)["findings"], result.stderr


def rules_on(findings: list[dict[str, Any]], name: str) -> list[str]:
    return sorted(f["rule"] for f in findings if Path(f["file"]).name == name)


def mode(path: Path) -> int:
    return stat.S_IMODE(path.lstat().st_mode)


@pytest.fixture
def restore_modes(tmp_path: Path) -> Any:
    """Make everything writable again after the test, so that tmp_path can be removed."""
    yield
    for dirpath, _dirs, _files in os.walk(tmp_path):
        os.chmod(dirpath, 0o755)


def test_a_read_only_file_is_refused_and_the_others_are_fixed(tmp_path: Path, restore_modes: Any) -> None:
    locked, open_ = tmp_path / "locked.yaml", tmp_path / "open.yaml"
    locked.write_text(manifest("locked"))
    open_.write_text(manifest("open"))
    locked.chmod(0o444)
    before = locked.read_bytes()

    code, findings, err = fix(str(tmp_path))
    assert locked.read_bytes() == before and mode(locked) == 0o444
    assert "status:" not in open_.read_text()
    assert rules_on(findings, "open.yaml") == []
    # The refusal, and the finding it left unfixed.
    assert rules_on(findings, "locked.yaml") == ["PL008", "PL110"]
    [refusal] = [f for f in findings if f["rule"] == "PL008"]
    assert (refusal["severity"], refusal["line"]) == ("warning", 1)
    assert "is read-only (mode 0444)" in refusal["message"]
    assert "1 file not written (PL008)" in err
    # Exit code: the unfixed PL110 is info and the refusal a warning.
    assert code == 0
    assert fix("--fail-on", "warning", str(tmp_path))[0] == 1
    assert locked.read_bytes() == before


def test_a_file_in_a_read_only_directory_is_refused(tmp_path: Path, restore_modes: Any) -> None:
    locked_dir, open_dir = tmp_path / "locked", tmp_path / "open"
    locked_dir.mkdir()
    open_dir.mkdir()
    (locked_dir / "m.yaml").write_text(manifest("locked"))
    (open_dir / "m.yaml").write_text(manifest("open"))
    locked_dir.chmod(0o555)
    before = (locked_dir / "m.yaml").read_bytes()

    _, findings, _ = fix(str(tmp_path))
    assert (locked_dir / "m.yaml").read_bytes() == before
    assert sorted(p.name for p in locked_dir.iterdir()) == ["m.yaml"]  # no temporary file either
    assert mode(locked_dir) == 0o555
    assert "status:" not in (open_dir / "m.yaml").read_text()
    [refusal] = [f for f in findings if f["rule"] == "PL008"]
    assert Path(refusal["file"]).parent.name == "locked"
    assert "read-only directory (mode 0555)" in refusal["message"]


def test_a_failed_write_is_a_finding_and_the_report_is_written(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # What a user without write permission on the directory meets (root cannot be refused).
    path = tmp_path / "m.yaml"
    path.write_text(manifest("p"))
    before = path.read_bytes()

    def denied(src: str, dst: str) -> None:
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(os, "replace", denied)
    code, findings, err = fix(str(path))
    assert path.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir()] == ["m.yaml"]
    assert [f["rule"] for f in findings] == ["PL008", "PL110"]
    assert "could not be written: Permission denied" in findings[0]["message"]
    assert "internal error" not in err and code == 0


def test_a_link_to_a_file_inside_the_linted_paths_is_fixed_in_its_target(tmp_path: Path) -> None:
    (tmp_path / "base").mkdir()
    target = tmp_path / "base" / "policy.yaml"
    target.write_text(manifest("p"))
    # Named so that the link's fix comes first (files are fixed in name order).
    link = tmp_path / "a-current.yaml"
    link.symlink_to(Path("base") / "policy.yaml")

    fix(str(link), str(target))  # both named: the target lies inside the roots
    assert link.is_symlink() and os.readlink(link) == os.path.join("base", "policy.yaml")
    assert "status:" not in target.read_text()

    target.write_text(manifest("p"))
    _, findings, _ = fix(".", cwd=tmp_path)  # the directory holding both
    assert link.is_symlink() and "status:" not in target.read_text()
    assert [f["rule"] for f in findings if f["rule"] in ("PL008", "PL110")] == []


@pytest.mark.parametrize("how", ["named", "walked"])
def test_a_link_to_a_file_outside_the_linted_paths_is_refused(tmp_path: Path, how: str) -> None:
    repo, outside = tmp_path / "repo", tmp_path / "outside"
    repo.mkdir()
    outside.mkdir()
    target = outside / "victim.yaml"
    target.write_text(manifest("p"))
    before = target.read_bytes()
    link = repo / "policy.yaml"
    link.symlink_to(target)

    # Named on the command line, the link is read (as `policylint $(git ls-files)` would name
    # it); found by walking, only with --follow-outside-links.
    args = [str(link)] if how == "named" else ["--follow-outside-links", str(repo)]
    _, findings, _ = fix(*args)
    assert target.read_bytes() == before
    assert link.is_symlink() and os.readlink(link) == str(target)
    [refusal] = [f for f in findings if f["rule"] == "PL008"]
    assert "is a symlink to a file outside the linted paths" in refusal["message"]
    assert rules_on(findings, "policy.yaml") == ["PL008", "PL110"]


def test_a_file_swapped_for_a_fifo_before_the_fix_is_not_waited_on(tmp_path: Path) -> None:
    """What was linted as a regular file may be a FIFO by the time `--fix` reads it again: opened
    blocking, the run would wait for a writer for ever; it is refused like any unreadable file."""
    import threading

    from policylint.autofix import FilePlan, apply_plan

    fifo = tmp_path / "swapped.yaml"
    os.mkfifo(fifo)
    plans: list[FilePlan] = []
    # A thread, so that the old behaviour (blocked in open(2) for ever) fails the test, not the suite.
    worker = threading.Thread(target=lambda: plans.append(apply_plan(FilePlan(str(fifo)))), daemon=True)
    worker.start()
    worker.join(timeout=60)
    assert not worker.is_alive(), "apply_plan waited for a writer on the FIFO"
    assert plans[0].original == plans[0].fixed == b""
