"""A report's paths relative to the repository root worked out once per file
(docs/performance.md "Positions read once per document shape"): SARIF names a file at every
finding and note, and took each path apart and joined it again."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from policylint import reporters
from policylint.reporters import RenderOptions


def _worked_out(cwd: str, root: str, file: str) -> str:
    """What `repo_path` answers, worked out in full."""
    absolute = os.path.normpath(os.path.join(cwd, file))
    relative = os.path.relpath(absolute, root) if os.path.isabs(root) else absolute
    if relative == os.pardir or relative.startswith(os.pardir + os.sep):
        relative = absolute
    return relative.replace(os.sep, "/")


FILES = ["a.yaml", "dir/b.yaml", "./dir/../c.yaml", "/elsewhere/d.yaml", "../up.yaml", "dir/b.yaml", "a.yaml"]


@pytest.mark.parametrize("root", ["", "/repo", "/repo/sub", "/other"])
def test_a_file_s_path_is_worked_out_once_and_the_same(root: str, monkeypatch: pytest.MonkeyPatch) -> None:
    reporters._repo_path.cache_clear()
    taken: list[str] = []
    relpath = os.path.relpath

    def counting(path: str, start: str | None = None) -> str:
        taken.append(path)
        return relpath(path, start)

    monkeypatch.setattr(os.path, "relpath", counting)
    options = RenderOptions(cwd="/repo", root=root)
    for _ in range(3):
        assert [options.repo_path(f) for f in FILES] == [_worked_out("/repo", root or "/repo", f) for f in FILES]
    # Each distinct file once (the tree before: every call); the reference above every time.
    assert len(taken) == len(set(FILES)) + 3 * len(FILES)


def test_a_relative_working_directory_is_read_against_the_process_s(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    reporters._repo_path.cache_clear()
    (tmp_path / "one").mkdir()
    (tmp_path / "two").mkdir()
    options = RenderOptions(cwd="one", root=str(tmp_path / "one"))
    monkeypatch.chdir(tmp_path)
    assert options.repo_path("x.yaml") == "x.yaml"
    monkeypatch.chdir(tmp_path / "two")  # `one` is now another directory: not an answer kept
    assert options.repo_path("x.yaml") == _worked_out("one", str(tmp_path / "one"), "x.yaml") == "one/x.yaml"
