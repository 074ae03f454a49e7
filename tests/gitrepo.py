"""Temporary git repositories for the tests, made one way: every test's repository commits with
an author of its own, no signing and a fixed date, whatever the machine's git configuration says,
so that commits, their hashes and the gate's comparisons are the same on every machine."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Mapping
from pathlib import Path

DATE = "2026-01-01T00:00:00Z"


def git(repo: Path, *args: str) -> str:
    """Run git in `repo` and return what it wrote; a failure fails the test."""
    env = {**os.environ, "GIT_AUTHOR_DATE": DATE, "GIT_COMMITTER_DATE": DATE}
    return subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True, text=True, env=env).stdout


def init(root: Path, *, branch: str = "main") -> Path:
    """A new repository at `root` (made if missing) on `branch`, configured to commit."""
    root.mkdir(parents=True, exist_ok=True)
    git(root, "init", "-q", "-b", branch)
    git(root, "config", "user.email", "dev@example.com")
    git(root, "config", "user.name", "dev")
    git(root, "config", "commit.gpgsign", "false")
    return root


def commit(root: Path, message: str = "base") -> None:
    """Stage everything in the work tree and commit it."""
    git(root, "add", ".")
    git(root, "commit", "-q", "-m", message)


def repository(root: Path, files: Mapping[str, str], message: str = "base") -> Path:
    """A new repository at `root` whose first commit holds `files` (path -> text)."""
    init(root)
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    commit(root, message)
    return root
