"""Git as an input: what a change touched, and the staged snapshot, read without touching the
working tree, the index or any ref.

Every call is a read-only git plumbing command (`rev-parse`, `diff --name-status`, `ls-files`,
`cat-file --batch`) run in the repository holding the working directory, with the environment
that could redirect it (GIT_DIR, GIT_INDEX_FILE, ...) left as the user set it: pre-commit runs
hooks with a temporary index in GIT_INDEX_FILE, and `--staged` must read that one.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Sequence
from typing import TYPE_CHECKING

from policylint.values import frozen

if TYPE_CHECKING:
    from policylint.input.sources import Source


class GitError(Exception):
    """A usage error: not a repository, a base that does not exist, a shallow clone, ..."""


@frozen
class Change:
    """One file the change touched: git's status letter (A, M, D, R, C, T), its path before the
    change (None when added) and after it (None when deleted), relative to the repository root."""

    status: str
    old: str | None
    new: str | None


def _git(args: Sequence[str], cwd: str, *, input_bytes: bytes | None = None) -> bytes:
    try:
        proc = subprocess.run(["git", *args], cwd=cwd, input=input_bytes, capture_output=True, check=False, timeout=300)
    except FileNotFoundError:
        raise GitError("git is not installed (or not on PATH)") from None
    except subprocess.TimeoutExpired:
        raise GitError(f"git {args[0]} did not finish in 300 s") from None
    if proc.returncode != 0:
        message = proc.stderr.decode("utf-8", "replace").strip().splitlines()
        raise GitError(message[-1] if message else f"git {args[0]} failed (exit code {proc.returncode})")
    return proc.stdout


def repository_root(cwd: str) -> str:
    try:
        out = _git(["rev-parse", "--show-toplevel"], cwd)
    except GitError:
        raise GitError("not a git repository (or any parent up to the filesystem root): --diff and --staged need one") from None
    return os.fsdecode(out.rstrip(b"\n"))


def _verify(rev: str, cwd: str) -> str | None:
    try:
        return _git(["rev-parse", "--verify", "--quiet", "--end-of-options", f"{rev}^{{commit}}"], cwd).decode().strip()
    except GitError:
        return None


def _is_shallow(cwd: str) -> bool:
    try:
        return _git(["rev-parse", "--is-shallow-repository"], cwd).strip() == b"true"
    except GitError:
        return False


def resolve_base(base: str | None, cwd: str) -> str:
    """The commit a change is measured from: `base`, else the merge-base with the upstream
    branch, else with the remote's default branch, else HEAD."""
    if base is not None:
        commit = _verify(base, cwd)
        if commit is not None:
            return commit
        if _is_shallow(cwd):
            raise GitError(
                f"base {base!r} is not in this shallow clone: fetch it (`git fetch --deepen=50`, or"
                " `fetch-depth: 0` in actions/checkout)"
            )
        raise GitError(f"base {base!r} is not a commit of this repository")
    for upstream in ("@{upstream}", "refs/remotes/origin/HEAD"):
        if _verify(upstream, cwd) is None:
            continue
        try:
            merge_base = _git(["merge-base", "HEAD", upstream], cwd).decode().strip()
        except GitError:
            if _is_shallow(cwd):
                raise GitError(
                    "the merge-base with the upstream branch is not in this shallow clone: fetch more"
                    " history (`git fetch --deepen=50`, or `fetch-depth: 0` in actions/checkout)"
                ) from None
            continue
        if merge_base:
            return merge_base
    head = _verify("HEAD", cwd)
    if head is None:
        raise GitError("the repository has no commit yet: there is no base to compare with")
    return head


def changes(base: str, cwd: str, *, staged: bool) -> list[Change]:
    """What changed from `base` to the index (`staged`) or to the working tree, renames
    detected; untracked files count as added when comparing with the working tree."""
    args = [
        "diff",
        "--name-status",
        "-z",
        "-M",
        "--no-color",
        "--no-ext-diff",
        "--relative=",
        *(["--cached"] if staged else []),
        base,
        "--",
    ]
    fields = _git(args, cwd).split(b"\0")
    out: list[Change] = []
    i = 0
    while i < len(fields) and fields[i]:
        status = fields[i].decode()[:1]
        if status in ("R", "C"):
            old, new = os.fsdecode(fields[i + 1]), os.fsdecode(fields[i + 2])
            out.append(Change(status, old if status == "R" else None, new))
            i += 3
            continue
        path = os.fsdecode(fields[i + 1])
        out.append(Change(status, None if status == "A" else path, None if status == "D" else path))
        i += 2
    if not staged:
        untracked = _git(["ls-files", "-z", "--others", "--exclude-standard"], cwd).split(b"\0")
        out.extend(Change("A", None, os.fsdecode(p)) for p in untracked if p)
    return out


def read_blobs(specs: Sequence[str], cwd: str) -> list[bytes | None]:
    """The contents of `REV:PATH` (or `:PATH` for the index) specs, None for a missing one, in
    one `git cat-file --batch` process."""
    if not specs:
        return []
    out = _git(["cat-file", "--batch"], cwd, input_bytes=b"".join(os.fsencode(s) + b"\n" for s in specs))
    blobs: list[bytes | None] = []
    pos = 0
    for _ in specs:
        end = out.index(b"\n", pos)
        header = out[pos:end].split(b" ")
        pos = end + 1
        if len(header) < 3 or header[-1] == b"missing" or header[1] != b"blob":
            blobs.append(None)
            continue
        size = int(header[2])
        blobs.append(out[pos : pos + size])
        pos += size + 1  # the content, then a newline
    return blobs


def tree_files(commit: str, root: str) -> list[str]:
    """The regular files of `commit`, relative to the repository root."""
    out = []
    for entry in _git(["ls-tree", "-r", "-z", "--full-tree", commit], root).split(b"\0"):
        meta, _, path = entry.partition(b"\t")
        if meta.split(b" ")[0] in (b"100644", b"100755"):
            out.append(os.fsdecode(path))
    return out


def staged_files(root: str) -> set[str]:
    """The regular files in the index, relative to the repository root (symlinks and submodules
    are not manifests)."""
    out = set()
    for entry in _git(["ls-files", "-z", "--stage"], root).split(b"\0"):
        if not entry:
            continue
        meta, _, path = entry.partition(b"\t")
        if meta.split(b" ")[0] in (b"100644", b"100755"):
            out.add(os.fsdecode(path))
    return out


def staged_snapshot(sources: Sequence[Source], root: str) -> list[Source]:
    """`sources` as the index holds them: each tracked file's staged content (unstaged edits
    do not leak in), files the index does not hold left out."""
    from dataclasses import replace

    index = staged_files(root)
    kept: list[tuple[Source, str]] = []
    for source in sources:
        if source.fs_path is None:
            continue
        relative = os.path.relpath(os.path.abspath(source.fs_path), root).replace(os.sep, "/")
        if relative in index:
            kept.append((source, relative))
    blobs = read_blobs([f":{relative}" for _, relative in kept], root)
    return [replace(source, content=blob, snapshot=True) for (source, _), blob in zip(kept, blobs) if blob is not None]
