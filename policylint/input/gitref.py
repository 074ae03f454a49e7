"""One file read from a git ref: the configuration or the baseline the gate trusts
(`--config-ref`, `--baseline-ref`; README "Security").

The ref comes from the workflow and the file from the repository's history, so both are
checked before anything is read: the ref must name a commit (`rev-parse --verify
--end-of-options REF^{commit}`; a ref starting with `-` is refused before git sees it, so it
cannot be taken for an option), the path must be a regular file blob in that commit's tree (a
symlink entry holds a path, not the file, and a submodule holds nothing), and the blob must be
under a size bound, checked from its header before its content is read. Every call is
read-only plumbing with NUL-separated output (`ls-tree -z`, `cat-file --batch`).
"""

from __future__ import annotations

import os

from policylint.input.git import GitError, _git

# A configuration file or a baseline far larger than any repository needs is refused unread.
MAX_BYTES = 64 * 1024 * 1024
_REGULAR = (b"100644", b"100755")
# The index, as `--staged` reads it: `:PATH` in git's own notation.
INDEX = ":"


def verify_ref(ref: str, root: str) -> str:
    """The commit `ref` names (GitError: a usage error, saying why)."""
    if not ref or ref.startswith("-"):
        raise GitError(f"ref {ref!r} is not a revision: a ref cannot be empty or start with '-'")
    try:
        out = _git(["rev-parse", "--verify", "--quiet", "--end-of-options", f"{ref}^{{commit}}"], root)
    except GitError:
        raise GitError(
            f"ref {ref!r} is not a commit of this repository (in CI, fetch it: `fetch-depth: 0` in actions/checkout)"
        ) from None
    return out.decode("ascii", "replace").strip()


def relative_to_root(path: str, root: str) -> str:
    """`path` (relative to the working directory) as a path in the repository's tree, with `/`
    (GitError when it lies outside the repository)."""
    relative = os.path.relpath(os.path.abspath(path), root)
    if relative == os.pardir or relative.startswith(os.pardir + os.sep) or os.path.isabs(relative):
        raise GitError(f"{path} is outside the git repository at {root}")
    return relative.replace(os.sep, "/")


def _mode(commit: str, path: str, root: str) -> bytes | None:
    """The tree entry's mode of `path` in `commit`, None when there is no such entry."""
    out = _git(["ls-tree", "-z", "--full-tree", commit, "--", path], root)
    for entry in out.split(b"\0"):
        meta, _, name = entry.partition(b"\t")
        if name == os.fsencode(path):
            return meta.split(b" ")[0]
    return None


def _staged_mode(path: str, root: str) -> bytes | None:
    out = _git(["ls-files", "-z", "--stage", "--", path], root)
    for entry in out.split(b"\0"):
        meta, _, name = entry.partition(b"\t")
        if name == os.fsencode(path):
            return meta.split(b" ")[0]
    return None


def read_file(commit: str, path: str, root: str, *, label: str | None = None) -> bytes | None:
    """The content of `path` (relative to the repository root) in `commit` (a verified commit,
    or INDEX for the staged snapshot); None when it has no such entry. GitError when the entry
    is not a regular file or is larger than MAX_BYTES."""
    where = f"{label or commit}:{path}"
    mode = _staged_mode(path, root) if commit == INDEX else _mode(commit, path, root)
    if mode is None:
        return None
    if mode not in _REGULAR:
        raise GitError(f"{where} is not a regular file (mode {mode.decode('ascii', 'replace')}): not read")
    request = os.fsencode(f":{path}" if commit == INDEX else f"{commit}:{path}") + b"\n"
    # The size first, from the object's header: a blob over the bound is never read.
    fields = _git(["cat-file", "--batch-check"], root, input_bytes=request).rstrip(b"\n").split(b" ")
    if len(fields) != 3 or fields[1] != b"blob" or not fields[2].isdigit():
        return None
    size = int(fields[2])
    if size > MAX_BYTES:
        raise GitError(f"{where}: {size:,} bytes is more than policylint reads from git ({MAX_BYTES:,})")
    _, _, rest = _git(["cat-file", "--batch"], root, input_bytes=request).partition(b"\n")
    return rest[:size]
