"""A run builds no reference cycles.

The lint runs with the cyclic collector off, and so does the whole command (policylint.entry):
memory held in a cycle is only taken back when the process exits. A closure that calls itself,
or an exception kept in a local of a frame its traceback holds, is such a cycle; once per object
they added up to 40 MiB at 100k objects (docs/performance.md, "Memory").
"""

from __future__ import annotations

import gc
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from policylint.pipeline import LintRequest, LintResult, lint
from policylint.reporters import renderer

REPO = Path(__file__).resolve().parents[2]
INPUTS = [
    REPO / "examples",  # every vendor's policies, a YAML syntax error, unresolved references
    REPO / "tests" / "data" / "realistic-repo",
    REPO / "tests" / "data" / "valid-per-kind",  # every bundled kind: the CEL rules and schemas
]


@pytest.fixture
def collector_off() -> Iterator[None]:
    was_enabled = gc.isenabled()
    gc.collect()
    gc.disable()
    try:
        yield
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        if was_enabled:
            gc.enable()


def _describe(obj: object) -> str:
    code = getattr(obj, "__code__", None) or getattr(obj, "f_code", None) or getattr(obj, "gi_code", None)
    where = f" {Path(code.co_filename).name}:{code.co_firstlineno} {code.co_name}" if code is not None else ""
    return type(obj).__name__ + where


@pytest.mark.parametrize("path", INPUTS, ids=lambda p: p.name)
def test_a_lint_and_its_reports_leave_no_cyclic_garbage(path: Path, collector_off: None) -> None:
    """Collected while the result is alive: what the run keeps to the end (the index, topology,
    simulation) is reachable and may hold cycles; what it dropped on the way must not."""

    def run() -> LintResult:
        result = lint(LintRequest(paths=[str(path)], report_policies=True))
        for name in ("json", "sarif", "text"):
            renderer(name)(result)
        result.project.simulation().contexts(lambda _: True)  # what `explain` walks
        return result

    # The first run imports what it needs lazily; classes made at import are cyclic by nature.
    run()
    gc.collect()
    result = run()
    gc.set_debug(gc.DEBUG_SAVEALL)
    gc.collect()
    kinds = Counter(_describe(obj) for obj in gc.garbage)
    assert result.findings is not None
    assert not kinds, kinds.most_common(10)


def test_a_large_run_keeps_the_files_deflated_and_reports_the_same(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from policylint.input import kept
    from policylint.input.parallel import load_files
    from policylint.input.sources import discover

    (tmp_path / "routes.yaml").write_text(
        "apiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\nmetadata: {name: r, namespace: a}\n"
        "spec:\n  parentRefs:\n  - name: missing  # policylint: disable=PL406 -- kept deflated, still read\n"
        "---\napiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\nmetadata: {name: s, namespace: a}\n"
        "spec:\n  parentRefs:\n  - name: missing-too\n",
        encoding="utf-8",
    )
    inputs = [str(tmp_path), str(REPO / "examples")]

    def report() -> tuple[str, int]:
        result = lint(LintRequest(paths=inputs, report_policies=True))
        return renderer("json")(result), len(result.suppressed)

    plain = report()
    monkeypatch.setattr(kept, "DEFLATE_FROM", 0)  # every file past the first byte kept deflated
    sources = discover(inputs)
    held = [result.data for _, result in load_files(sources)]
    assert held and all(isinstance(h, kept.Deflated) for h in held if h is not None)
    assert report() == plain
    # The comment was found in the deflated file, and hid its finding.
    assert plain[1] == 1


def test_a_run_parsing_in_workers_leaves_no_cyclic_garbage(
    collector_off: None, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The files the `--jobs` workers parse are taken as this process's own map by map
    (policylint.input.parallel, `_Received`): a cycle made per file there held the run's table of
    texts and strings and the worker's numbered maps and lists to the end of the run (47 MiB at
    20,000 objects of the shared corpus, docs/performance.md)."""
    from policylint.input import parallel

    monkeypatch.setattr(parallel, "PARALLEL_MIN_BYTES", 0)  # the workers start for examples/ too
    started = tmp_path / "worker-started"
    if parallel.start_method() == parallel.FORK_METHOD:
        # A forked worker takes batches from a queue as it is free (policylint.input.forked), and
        # this process could take all of examples/'s few files before it starts: a file a batch,
        # and this process's first file waits until the worker has begun one, which it marks (the
        # patch is inherited by the fork). A pool hands its spawned worker the first batches.
        monkeypatch.setattr(parallel, "BATCH_BYTES", 1)
        worker_parse, parse = parallel._worker_parse, parallel._parse

        def marking(*args: Any) -> bytes:
            started.touch()
            return worker_parse(*args)

        def waiting(*args: Any, **kwargs: Any) -> Any:
            deadline = time.monotonic() + 60.0
            while not started.exists() and time.monotonic() < deadline:
                time.sleep(0.005)
            return parse(*args, **kwargs)

        monkeypatch.setattr(parallel, "_worker_parse", marking)
        monkeypatch.setattr(parallel, "_parse", waiting)
    taken: list[int] = []
    real = parallel._Received.own

    def own(self: parallel._Received, payload: object) -> object:
        taken.append(1)
        return real(self, payload)

    monkeypatch.setattr(parallel._Received, "own", own)

    def run() -> LintResult:
        return lint(LintRequest(paths=[str(REPO / "examples")], jobs=2))

    run()
    gc.collect()
    del taken[:]
    started.unlink(missing_ok=True)
    result = run()
    gc.set_debug(gc.DEBUG_SAVEALL)
    gc.collect()
    kinds = Counter(_describe(obj) for obj in gc.garbage)
    assert taken, "no file was parsed by a worker"
    assert result.findings
    assert not kinds, kinds.most_common(10)
