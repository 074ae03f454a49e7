"""The files of a lint request with the texts an editor holds over them (policylint.incremental).

A language server keeps one `Workspace` per root. Each edit, save or close is an `update`: the
buffer's text stands for the file until it is dropped again (`text=None`: the file on disk is
read again, or nothing if it is gone), and the answer is what changed in the findings, file by
file: the files whose findings are not what they were, each with all of its findings now, which
is what an editor publishes (LSP `textDocument/publishDiagnostics` replaces a file's list).

Every run reads the files through the parse cache of the request, keyed by content, so an
unchanged buffer or file is never parsed again; the findings are those `policylint check` gives
for the same texts (tests/test_incremental.py).
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping, Sequence

from policylint.findings import Finding
from policylint.input.sources import MANIFEST_SUFFIXES, Source, discover_all, display_name
from policylint.pipeline import LintRequest, LintResult, lint
from policylint.values import frozen


@frozen(slots=False)
class Changes:
    """What an update changed: each file whose findings differ from before, with all its findings
    now (an empty tuple: it has none left), in file order."""

    files: Mapping[str, tuple[Finding, ...]]
    result: LintResult  # the whole run, for what else a client shows (counts, notes)


class Workspace:
    """The request's files, with in-memory texts overriding what disk holds.

    `request` is the run's configuration as `check` builds it (paths, context, rules, cache);
    its `sources` must be unset (they are what the workspace decides). Paths given to `update`
    are file paths as the editor names them, absolute or relative to the working directory.
    """

    def __init__(self, request: LintRequest) -> None:
        if request.sources is not None:
            raise ValueError("a workspace finds its files itself: the request must not name sources")
        self.request = request
        self._texts: dict[str, str] = {}  # absolute path -> the editor's text
        self._by_file: dict[str, tuple[Finding, ...]] = {}
        self._result: LintResult | None = None

    @property
    def result(self) -> LintResult:
        """The findings of the files as they stand now (a run on first use)."""
        if self._result is None:
            self._run()
        assert self._result is not None
        return self._result

    def update(self, path: str, text: str | None) -> Changes:
        """`path` now holds `text` (None: what is on disk); the files whose findings changed."""
        key = os.path.abspath(path)
        if text is None:
            self._texts.pop(key, None)
        else:
            self._texts[key] = text
        before = dict(self._by_file) if self._result is not None else None
        self._run()
        assert self._result is not None
        if before is None:
            changed = dict(self._by_file)
        else:
            names = sorted(set(before) | set(self._by_file))
            changed = {n: self._by_file.get(n, ()) for n in names if before.get(n, ()) != self._by_file.get(n, ())}
        return Changes(changed, self._result)

    def _sources(self) -> list[Source]:
        request = self.request
        found = discover_all(
            [*request.paths, *request.context_paths],
            follow_outside_links=request.follow_outside_links,
            walk=request.walk,
            helm_templates=request.helm_templates,
        ).sources
        pending = dict(self._texts)
        sources: list[Source] = []
        for source in found:
            text = pending.pop(os.path.abspath(source.fs_path), None) if source.fs_path is not None else None
            # A buffer stands for its file under the file's name; `snapshot`: content that is
            # not standard input, so the parse cache keeps it by content like a file's.
            sources.append(source if text is None else Source(display=source.display, content=_bytes(text), snapshot=True))
        # Buffers of manifests that are not on disk (yet) and lie under the request's paths.
        roots = [os.path.abspath(p) for p in [*request.paths, *request.context_paths]]
        for path, text in pending.items():
            if path.endswith(MANIFEST_SUFFIXES) and _under(path, roots):
                sources.append(Source(display=display_name(os.path.relpath(path)), content=_bytes(text), snapshot=True))
        sources.sort(key=lambda s: s.display)  # the order discovery gives: findings depend on it
        return sources

    def _run(self) -> None:
        result = lint(dataclasses.replace(self.request, sources=self._sources()))
        by_file: dict[str, list[Finding]] = {}
        for finding in result.findings:
            by_file.setdefault(finding.file, []).append(finding)
        self._by_file = {name: tuple(found) for name, found in by_file.items()}
        self._result = result


def _bytes(text: str) -> bytes:
    # An editor's text is Unicode; a lone surrogate (which UTF-8 cannot hold) is kept as the
    # bytes Python would write for it, so that the loader reports the file's encoding as wrong.
    return text.encode("utf-8", "surrogatepass")


def _under(path: str, roots: Sequence[str]) -> bool:
    return any(path == root or path.startswith(root.rstrip(os.sep) + os.sep) for root in roots)
