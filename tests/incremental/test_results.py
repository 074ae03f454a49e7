"""A run's result kept by every input it depends on (policylint.incremental.results): a run whose
inputs are all an earlier run's reads that run's result back without analysing, and prints what a
run without a cache prints; a change to any input (each one listed here) analyses again; an entry
that is not what policylint writes is a miss.

Runs are counted at `pipeline._lint`: a run read back makes none.
"""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from policylint import pipeline
from policylint.cli import cli
from policylint.incremental import memo, results
from policylint.input.cache import ParseCache
from policylint.pipeline import LintRequest
from tests.gitrepo import commit, git, init
from tests.scope.test_change_gate import lay_out

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
UNRELATED = """\
apiVersion: v1
kind: Service
metadata:
  name: billing
  namespace: team-y
spec:
  ports:
  - port: 8080
"""


def test_every_request_field_is_keyed_or_said_not_to_be() -> None:
    """A new LintRequest field must be classified: one left out of the key would let a run with
    another value read this run's result."""
    names = {f.name for f in dataclasses.fields(LintRequest)}
    keyed = memo.SHAPING | results.REPORTING
    assert not (memo.SHAPING & results.REPORTING) and not (keyed & results.NOT_KEYED)
    assert names == keyed | results.NOT_KEYED


@pytest.fixture
def runs(monkeypatch: pytest.MonkeyPatch) -> list[LintRequest]:
    """The analyses commands make, in order."""
    made: list[LintRequest] = []
    real = pipeline._lint

    def counted(request: LintRequest, *args: Any) -> pipeline.LintResult:
        made.append(request)
        return real(request, *args)

    monkeypatch.setattr(pipeline, "_lint", counted)
    return made


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = init(tmp_path / "repo")
    lay_out(root)
    (root / "apps" / "team-y").mkdir()
    (root / "apps" / "team-y" / "billing.yaml").write_text(UNRELATED)
    commit(root)
    monkeypatch.chdir(root)
    return root


def check(*args: str, fmt: str = "json") -> tuple[int, str]:
    result = CliRunner().invoke(cli, ["check", "--format", fmt, *args])
    assert result.exit_code in (0, 1), result.output
    return result.exit_code, result.stdout


def _stage_port(root: Path, port: int) -> None:
    """The route's backend port changed and staged: PL-findings the Service's ports decide."""
    app = root / "apps" / "team-x" / "app.yaml"
    app.write_text(app.read_text().replace("port: 8080\n---", f"port: {port}\n---"))
    git(root, "add", "-A")


HOOK = ("--staged", "--gate-base", "HEAD")
CONTEXT = ("apps/team-x/app.yaml", "--context", ".")


def test_the_hook_run_again_reads_its_result_back(repo: Path, tmp_path: Path, runs: list[LintRequest]) -> None:
    cache = str(tmp_path / "cache")
    _stage_port(repo, 9090)
    cold = check(*HOOK, "--no-cache")
    assert json.loads(cold[1])["findings"], "the change has findings to classify"
    assert check(*HOOK, "--cache-dir", cache) == cold
    assert runs  # analysed, and kept
    del runs[:]
    assert check(*HOOK, "--cache-dir", cache) == cold
    assert runs == []  # read back: nothing analysed, not even the base
    # Another format reads the same entry: what is kept is the result, not a rendering.
    text = check(*HOOK, "--cache-dir", cache, fmt="text")
    assert runs == []
    assert text == check(*HOOK, "--no-cache", fmt="text")


@pytest.mark.parametrize("fmt", ["text", "json", "github", "gitlab", "markdown"])
def test_each_format_prints_from_a_result_read_back_what_a_run_prints(
    fmt: str, tmp_path: Path, runs: list[LintRequest], monkeypatch: pytest.MonkeyPatch
) -> None:
    """examples/ has findings with notes, hints, fixes and suppressions, and policies."""
    monkeypatch.setenv("GITHUB_ACTIONS", "")
    cache = str(tmp_path / "cache")
    cold = check("--no-cache", str(EXAMPLES), fmt=fmt)
    check("--cache-dir", cache, str(EXAMPLES), fmt="json")  # the entry, with the policies section
    del runs[:]
    assert check("--cache-dir", cache, str(EXAMPLES), fmt=fmt) == cold
    assert runs == []


def test_a_format_needing_what_no_entry_holds_analyses(tmp_path: Path, runs: list[LintRequest]) -> None:
    """JUnit lists every object, SARIF each finding's attachment chain: not in an entry."""
    cache = str(tmp_path / "cache")
    check("--cache-dir", cache, str(EXAMPLES))
    for fmt in ("junit", "sarif"):
        del runs[:]
        check("--cache-dir", cache, str(EXAMPLES), fmt=fmt)
        assert len(runs) == 1


def test_a_run_reporting_the_policies_does_not_read_an_entry_without_them(tmp_path: Path, runs: list[LintRequest]) -> None:
    cache = str(tmp_path / "cache")
    check("--cache-dir", cache, str(EXAMPLES), fmt="text")  # no policies section worked out
    del runs[:]
    assert check("--cache-dir", cache, str(EXAMPLES)) == check("--no-cache", str(EXAMPLES))
    assert len(runs) == 2  # the run with the cache analysed (and kept the section)
    del runs[:]
    check("--cache-dir", cache, str(EXAMPLES))
    check("--cache-dir", cache, str(EXAMPLES), fmt="text")
    assert runs == []


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new))


# Each input of a run, changed after a run kept its result: (the run's arguments before, the
# change made to the repository, the arguments after).
Change = Callable[[Path], None]


def _nothing(root: Path) -> None:
    pass


def _suppression(root: Path) -> None:
    app = root / "apps" / "team-x" / "app.yaml"
    app.write_text("# policylint: disable-file=PL406 -- the Service is created by the operator\n" + app.read_text())
    git(root, "add", "-A")


def _outside_the_part(root: Path) -> None:
    """A file of another tenant, read for context, which the linted file's objects do not reach."""
    _edit(root / "apps" / "team-y" / "billing.yaml", "port: 8080", "port: 0")


def _baseline(root: Path) -> None:
    baseline = root / "baseline.json"
    document = json.loads(baseline.read_text())
    document["entries"] = document["entries"][:-1]
    baseline.write_text(json.dumps(document))


def _configuration(root: Path) -> None:
    (root / ".policylint.yaml").write_text("severity:\n  PL407: info\n")


def _moved_base(root: Path) -> None:
    """The branch measured from moved to another commit, the change's files the same."""
    git(root, "branch", "-f", "base", "other")


def _code(root: Path) -> None:
    memo._code[:] = [b"another release"]


CHANGES: dict[str, tuple[tuple[str, ...], Change, tuple[str, ...]]] = {
    "nothing (the control: the same run reads back)": (HOOK, _nothing, HOOK),
    "a settings value": (HOOK, _nothing, (*HOOK, "--namespace", "elsewhere")),
    "--select": (HOOK, _nothing, (*HOOK, "--select", "PL4")),
    "the release declared": (HOOK, _nothing, (*HOOK, "--gateway-api-version", "v1.2.0")),
    "--show-suppressed": (HOOK, _nothing, (*HOOK, "--show-suppressed")),
    "a suppression comment": (HOOK, _suppression, HOOK),
    "a file outside the part": (CONTEXT, _outside_the_part, CONTEXT),
    "a baseline file": ((*HOOK, "--baseline", "baseline.json"), _baseline, (*HOOK, "--baseline", "baseline.json")),
    "the configuration": (HOOK, _configuration, HOOK),
    "the PATHs": (HOOK, _nothing, (*HOOK, "apps")),
    "the base commit": (("--diff", "base"), _moved_base, ("--diff", "base")),
    "policylint's code": (HOOK, _code, HOOK),
}


@pytest.fixture
def restored_code_stamp() -> Any:
    kept = list(memo._code)
    yield
    memo._code[:] = kept


@pytest.mark.parametrize("name", CHANGES)
def test_a_change_to_any_input_analyses_again(
    name: str, repo: Path, tmp_path: Path, runs: list[LintRequest], restored_code_stamp: None
) -> None:
    before, change, after = CHANGES[name]
    cache = str(tmp_path / "cache")
    git(repo, "branch", "base")
    _edit(repo / "apps" / "team-x" / "app.yaml", "port: 8080\n---", "port: 9292\n---")
    commit(repo, "other")  # the other base of "the base commit": the port already wrong
    git(repo, "branch", "other")
    git(repo, "reset", "-q", "--hard", "base")
    # Two findings pre-existing at HEAD (legacy.yaml), recorded, and one the change introduces.
    check("--write-baseline", "--baseline", "baseline.json", "--no-cache", ".")
    _stage_port(repo, 9191)
    check(*before, "--cache-dir", cache)
    change(repo)
    del runs[:]
    found = check(*after, "--cache-dir", cache)
    if name.startswith("nothing"):
        assert runs == []
        return
    assert runs, "read back a result another input gave"
    assert found == check(*after, "--no-cache")


def _damaged(change: Callable[[dict[str, Any]], object]) -> Callable[[dict[str, Any]], dict[str, Any]]:
    def made(entry: dict[str, Any]) -> dict[str, Any]:
        change(entry)
        return entry

    return made


DAMAGED: dict[str, Callable[[dict[str, Any]], Any]] = {
    "another format": _damaged(lambda e: e.update(format=2)),
    "a finding of another shape": _damaged(lambda e: e["findings"][0].pop()),
    "a severity by name": _damaged(lambda e: e["findings"][0].__setitem__(5, "error")),
    "an active finding suppressed": _damaged(lambda e: e["findings"][0].__setitem__(13, ["inline", ""])),
    "a suppressed finding without how": _damaged(lambda e: e["suppressed"][0].__setitem__(13, None)),
    "a count that is no number": _damaged(lambda e: e.update(objects="36")),
    "policies that are no list": _damaged(lambda e: e.update(policies={})),
    "a field missing": _damaged(lambda e: e.pop("files")),
    "not an object": lambda e: [e],
}


@pytest.mark.parametrize("name", [*DAMAGED, "not JSON"])
def test_an_entry_that_is_not_what_policylint_writes_is_a_miss(
    name: str, tmp_path: Path, runs: list[LintRequest], monkeypatch: pytest.MonkeyPatch
) -> None:
    examples = tmp_path / "examples"
    shutil.copytree(EXAMPLES, examples)
    policy = examples / "infra" / "backend-traffic-policy.yaml"
    policy.write_text("# policylint: disable-file=PL603 -- enforced in part on purpose\n" + policy.read_text())
    cache = str(tmp_path / "cache")
    opened: list[results.Results] = []
    real = results.open_results

    def recorded(*args: Any, **kwargs: Any) -> results.Results | None:
        found = real(*args, **kwargs)
        assert found is not None
        opened.append(found)
        return found

    monkeypatch.setattr(results, "open_results", recorded)
    cold = check("--no-cache", str(examples))
    assert check("--cache-dir", cache, str(examples)) == cold
    kept = ParseCache(cache)
    entry = opened[-1].entry
    payload = kept.payload(entry)
    assert payload is not None
    document = json.loads(bytes(payload))
    assert document["findings"] and document["suppressed"], "examples/ has both"
    forged = b"not json" if name == "not JSON" else json.dumps(DAMAGED[name](document)).encode()
    kept.put(entry, forged)
    del runs[:]
    assert check("--cache-dir", cache, str(examples)) == cold
    assert len(runs) == 1
    # The run kept its result again, which the next run reads.
    del runs[:]
    assert check("--cache-dir", cache, str(examples)) == cold
    assert runs == []


def test_a_result_past_the_bound_is_not_kept(tmp_path: Path, runs: list[LintRequest], monkeypatch: pytest.MonkeyPatch) -> None:
    cache = str(tmp_path / "cache")
    check("--cache-dir", cache, str(EXAMPLES))
    del runs[:]
    check("--cache-dir", cache, str(EXAMPLES))
    assert runs == []
    monkeypatch.setattr(results, "MAX_BYTES", 1000)  # examples/'s entry is tens of KB
    other = str(tmp_path / "other")
    check("--cache-dir", other, str(EXAMPLES))
    del runs[:]
    check("--cache-dir", other, str(EXAMPLES))
    assert len(runs) == 1


def test_an_entry_is_encoded_a_row_at_a_time_and_given_up_once_past_the_bound(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What is written is the entry's JSON, the bytes one `json.dumps` gives; a result too large
    to keep is given up as soon as its rows pass the bound, not once they are all encoded (at
    100,000 objects they are tens of MB at the end of the run, where its peak memory is), and
    leaves no entry and no file begun."""
    result = pipeline.lint(LintRequest(paths=[str(EXAMPLES)]))
    assert len(result.findings) > 10
    cache = ParseCache(tmp_path / "cache")
    results.put_bounded(cache, "a" * 40, results._pieces(results._encoded(result)))
    whole = cache.payload("a" * 40)
    assert whole is not None
    written = json.loads(bytes(whole))
    assert bytes(whole) == json.dumps(written, ensure_ascii=True, separators=(",", ":")).encode("ascii")
    assert written["format"] == results.FORMAT and len(written["findings"]) == len(result.findings)
    kept = results._decoded(written)
    assert kept is not None and [f.fingerprint for f in kept.findings] == [f.fingerprint for f in result.findings]
    # Written in parts of at most `_PART` characters and a row: the same bytes.
    monkeypatch.setattr(results, "_PART", 100)
    results.put_bounded(cache, "b" * 40, results._pieces(results._encoded(result)))
    assert cache.payload("b" * 40) == whole

    rows: list[object] = []
    real = results._finding_row

    def counted(finding: Any) -> list[Any]:
        rows.append(finding)
        return real(finding)

    monkeypatch.setattr(results, "_finding_row", counted)
    monkeypatch.setattr(results, "MAX_BYTES", len(whole) // 4)
    results.put_bounded(cache, "c" * 40, results._pieces(results._encoded(result)))
    assert 0 < len(rows) < len(result.findings) // 2
    assert cache.payload("c" * 40) is None
    assert sorted(os.listdir(tmp_path / "cache" / "parse")) == ["a" * 40, "b" * 40]


def test_an_entry_is_never_held_whole_while_it_is_written(tmp_path: Path) -> None:
    """Writing a result's entry holds its text a part at a time: the most it allocates beside the
    findings is a small fraction of the entry (tracemalloc), kept or given up past the bound (it
    held every piece up to the bound, then their join and its encoding: three times the entry)."""
    import tracemalloc

    result = pipeline.lint(LintRequest(paths=[str(EXAMPLES)]))
    findings = list(result.findings) * 300  # an entry of a few MB
    big = dataclasses.replace(result, findings=findings)
    cache = ParseCache(tmp_path / "cache")
    size = len("".join(results._pieces(results._encoded(big))))
    assert size > 2_000_000
    tracemalloc.start()
    try:
        results.put_bounded(cache, "a" * 40, results._pieces(results._encoded(big)))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    payload = cache.payload("a" * 40)
    assert payload is not None and len(payload) == size
    assert peak < size // 8, (peak, size)


def test_the_key_holds_no_bytes_of_a_file_the_run_reads_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The content keys worked out for the entry's key are kept for the run only where it reads
    the very same bytes object again (a snapshot's): a file on disk is read again as other bytes,
    and its entry, held by identity, would only hold its bytes to the end of the run."""
    from policylint.input import cache as cache_module
    from policylint.input.sources import Source
    from policylint.request import discover

    made: list[cache_module.ContentKeys] = []

    class Recorded(cache_module.ContentKeys):
        def __init__(self) -> None:
            super().__init__()
            made.append(self)

    monkeypatch.setattr(cache_module, "ContentKeys", Recorded)
    check("--cache-dir", str(tmp_path / "cache"), str(EXAMPLES))
    assert len(made) == 1
    assert len(made[0]._keys) == 0  # every file of examples/ read from disk, then again by the run

    # A snapshot's bytes are what the run reads: their keys are kept for it, worked out once.
    request = LintRequest(paths=[str(EXAMPLES)], cache_dir=str(tmp_path / "cache"))
    found, sources = discover(request)
    assert len(sources) > 5
    snapshots = [Source(s.display, content=Path(s.fs_path or "").read_bytes(), snapshot=True) for s in sources]
    keys = cache_module.ContentKeys()
    assert results.open_results(request, (found, snapshots), [], keys) is not None
    assert len(keys._keys) == len(snapshots)
    assert all(s.content in keys._keys for s in snapshots)
