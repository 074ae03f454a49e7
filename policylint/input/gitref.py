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

from policylint.input.git import GitError, _asked, _git, in_snapshot, index_listing, read_blobs
from policylint.values import frozen

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
    if "/" in path:
        out = _git(["ls-tree", "-z", "--full-tree", commit, "--", path], root)
    else:
        # An entry of the top tree, where configuration discovery asks for several names: the
        # tree's listing answers them all, and within a command's snapshot it is asked once.
        out = _asked(["ls-tree", "-z", "--full-tree", commit], root)
    return _entry_mode(out, path)


def _staged_mode(path: str, root: str) -> bytes | None:
    # Within a command's snapshot the whole index's listing, which `--staged` reads anyway.
    out = index_listing(root) if in_snapshot() else _git(["ls-files", "-z", "--stage", "--", path], root)
    return _entry_mode(out, path)


def _entry_mode(listing: bytes, path: str) -> bytes | None:
    """The mode of the first entry named `path` in a NUL-separated `MODE ...\\tNAME` listing."""
    wanted = os.fsencode(path)
    for entry in listing.split(b"\0"):
        meta, _, name = entry.partition(b"\t")
        if name == wanted:
            return meta.split(b" ")[0]
    return None


def read_file(commit: str, path: str, root: str, *, label: str | None = None, limit: int = MAX_BYTES) -> bytes | None:
    """The content of `path` (relative to the repository root) in `commit` (a verified commit,
    or INDEX for the staged snapshot); None when it has no such entry. GitError when the entry
    is not a regular file or is larger than `limit`."""
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
    if size > limit:
        raise GitError(f"{where}: {size:,} bytes is more than policylint reads from git ({limit:,})")
    _, _, rest = _git(["cat-file", "--batch"], root, input_bytes=request).partition(b"\n")
    return rest[:size]


_TREE = b"040000"


@frozen
class TreeRef:
    """A commit whose files a configuration read from it names (`profile:`, `crd:`) are read
    from too: `label` is how messages name it (`REF`, so a file is `REF:PATH`), `root` the
    repository's top."""

    commit: str
    label: str
    root: str

    def tree_path(self, path: str) -> str:
        """`path` (relative to the working directory) as a path in the commit's tree (GitError
        when it lies outside the repository)."""
        return relative_to_root(path, self.root)

    def name(self, tree_path: str) -> str:
        return f"{self.label}:{tree_path}"


@frozen
class TreeFile:
    """A file under a path at a commit (or the index): its content, or why it was not read."""

    path: str  # in the tree, with `/`
    data: bytes | None
    problem: str | None = None


def _entries(commit: str, path: str, root: str) -> list[tuple[str, bytes, str]]:
    """(tree path, mode, object id) of `path` in `commit` (or INDEX) and, when it is a directory,
    of every entry under it, recursively; none when there is no such path. Names are compared as
    git's bytes: no name can be taken for another or shift another's entry."""
    wanted = os.fsencode(path)
    if commit == INDEX:
        out = []
        prefix = wanted + b"/"
        for entry in _git(["ls-files", "-z", "--stage"], root).split(b"\0"):
            meta, _, name = entry.partition(b"\t")
            fields = meta.split(b" ")
            if len(fields) == 3 and fields[2] == b"0" and (name == wanted or name.startswith(prefix)):
                out.append((os.fsdecode(name), fields[0], fields[1].decode("ascii")))
        return out
    for entry in _git(["ls-tree", "-z", "--full-tree", commit, "--", path], root).split(b"\0"):
        meta, _, name = entry.partition(b"\t")
        fields = meta.split(b" ")
        if name != wanted or len(fields) != 3:
            continue
        if fields[0] != _TREE:
            return [(path, fields[0], fields[2].decode("ascii"))]
        listing = _git(["ls-tree", "-r", "-z", "--full-tree", "--end-of-options", fields[2].decode("ascii")], root)
        out = []
        for item in listing.split(b"\0"):
            item_meta, _, item_name = item.partition(b"\t")
            item_fields = item_meta.split(b" ")
            if len(item_fields) == 3:
                out.append((f"{path}/{os.fsdecode(item_name)}", item_fields[0], item_fields[2].decode("ascii")))
        return out
    return []


def read_tree(
    commit: str, path: str, root: str, *, limit: int, suffixes: tuple[str, ...] = (), label: str | None = None
) -> list[TreeFile] | None:
    """The files `path` names in `commit` (a verified commit, or INDEX): the file itself, or every
    file under the directory whose name ends with one of `suffixes`, in tree order. Only a regular
    file blob of at most `limit` bytes is read (its size is checked from the object's header
    first); a symlink, a submodule or a larger blob is a TreeFile with its `problem`. None when
    there is no such path."""
    entries = _entries(commit, path, root)
    if not entries:
        return None
    if not (len(entries) == 1 and entries[0][0] == path):
        entries = [e for e in entries if e[0].endswith(suffixes)]
    out: list[TreeFile] = []
    readable: list[tuple[str, str]] = []
    for name, mode, oid in entries:
        if mode not in _REGULAR:
            out.append(TreeFile(name, None, f"not a regular file (mode {mode.decode('ascii', 'replace')}): not read"))
        else:
            readable.append((name, oid))
    sizes = _sizes([oid for _, oid in readable], root)
    wanted = [(name, oid) for (name, oid), size in zip(readable, sizes) if size is not None and size <= limit]
    for (name, _), size in zip(readable, sizes):
        if size is None:
            out.append(TreeFile(name, None, "not a blob: not read"))
        elif size > limit:
            out.append(TreeFile(name, None, f"{size:,} bytes is more than policylint reads for it ({limit:,}): not read"))
    blobs = read_blobs([oid for _, oid in wanted], root)
    out += [
        TreeFile(name, blob) if blob is not None else TreeFile(name, None, "not a blob: not read")
        for (name, _), blob in zip(wanted, blobs)
    ]
    return sorted(out, key=lambda f: os.fsencode(f.path))


def _sizes(object_ids: list[str], root: str) -> list[int | None]:
    """Each object's size from its header (None: not a blob), in one `cat-file --batch-check`."""
    if not object_ids:
        return []
    out = _git(["cat-file", "--batch-check"], root, input_bytes=b"".join(os.fsencode(o) + b"\n" for o in object_ids))
    sizes: list[int | None] = []
    for line in out.split(b"\n")[: len(object_ids)]:
        fields = line.split(b" ")
        sizes.append(int(fields[2]) if len(fields) == 3 and fields[1] == b"blob" and fields[2].isdigit() else None)
    return sizes
