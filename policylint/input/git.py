"""Git as an input: what a change touched, and the staged snapshot, read without touching the
working tree, the index or any ref.

Every call is a read-only git plumbing command (`rev-parse`, `diff --raw`, `ls-tree`,
`ls-files`, `cat-file --batch`) run in the repository holding the working directory, with the
environment that could redirect it (GIT_DIR, GIT_INDEX_FILE, ...) left as the user set it:
pre-commit runs hooks with a temporary index in GIT_INDEX_FILE, and `--staged` must read that one.

File names come from the repository under review, so they are hostile: one may hold a newline,
a quote or any other byte but NUL. Every listing is therefore read NUL-separated (`-z`, which
also keeps core.quotePath's quoting out of the names) and kept as the bytes git gave, decoded
with `os.fsdecode` only; and no name is ever written into a line-oriented request: `cat-file
--batch` is asked for object ids (hex digits), which the listings give with each name. A revision
given by the user must not read as an option: one starting with `-` is refused, and the ones
passed on go after `--end-of-options`.

A command asks git the same questions several times (the repository's top, HEAD's commit, the
index's listing, for the change, the staged files, the gate's configuration and baseline) and
reads the same blobs on both sides of a change (an unchanged file is one blob at the base and in
the index). Within `snapshot()`, which a command's run enters once, each such read-only query is
asked once and a blob is read once by its object id: a pre-commit hook started twenty git
processes, and read every file's blob twice (docs/performance.md, "The hook's own costs").
Outside it every call asks git again, as a long-lived process must.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING

from policylint.values import frozen

if TYPE_CHECKING:
    pass


class GitError(Exception):
    """A usage error: not a repository, a base that does not exist, a shallow clone, ..."""


_HEX = frozenset(b"0123456789abcdef")


def _is_object_id(text: bytes) -> bool:
    """An object id as git prints it: SHA-1 or SHA-256, lowercase hex."""
    return len(text) in (40, 64) and _HEX.issuperset(text)


def _all_object_ids(object_ids: Sequence[str]) -> bool:
    """Whether every one of `object_ids` is `_is_object_id`, told in a few calls over all of them
    (a run asks for every staged file's blob and every base file's, 1 µs each told one by one);
    False: told one by one, to name the one that is not."""
    joined = "".join(object_ids)
    return set(map(len, object_ids)) <= {40, 64} and joined.isascii() and not joined.encode("ascii").translate(None, _HEX_DIGITS)


_HEX_DIGITS = b"0123456789abcdef"

# The modes of the entries that can be manifests: regular files, executable or not (symlinks and
# submodules are not).
_FILE_MODES = (b"100644", b"100755")
_FILE_MODE_NAMES = ("100644", "100755")


@frozen
class Change:
    """One file the change touched: git's status letter (A, M, D, R, C, T, U), its path before
    the change (None when added) and after it (None when deleted), relative to the repository
    root, and the object id of its content before the change (None when there was none)."""

    status: str
    old: str | None
    new: str | None
    old_blob: str | None = None


class _Snapshot:
    """The answers of one command's read-only queries (`snapshot`)."""

    def __init__(self) -> None:
        self.answers: dict[tuple[str, tuple[str, ...]], bytes] = {}
        # A blob's content is a function of its object id: kept for the command's other reads.
        self.blobs: dict[bytes, bytes | None] = {}


_SNAPSHOT: _Snapshot | None = None


@contextlib.contextmanager
def snapshot() -> Iterator[None]:
    """Within it, `_asked` queries are asked of git once and blobs read once (the module
    docstring): for one command's run, whose answers must not change under it anyway (the
    change, its base and the gate's files are read from one state of the repository)."""
    global _SNAPSHOT
    outer = _SNAPSHOT
    if outer is None:
        _SNAPSHOT = _Snapshot()
    try:
        yield
    finally:
        _SNAPSHOT = outer


def in_snapshot() -> bool:
    """Whether a command's `snapshot` is open: what it already asked costs nothing more."""
    return _SNAPSHOT is not None


def _asked(args: Sequence[str], cwd: str) -> bytes:
    """`_git` for a read-only query, answered once per `snapshot` (a failure is not kept: it
    raises again when asked again)."""
    held = _SNAPSHOT
    if held is None:
        return _git(args, cwd)
    key = (os.path.abspath(cwd), tuple(args))
    answer = held.answers.get(key)
    if answer is None:
        answer = held.answers[key] = _git(args, cwd)
    return answer


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


_TOP = ("rev-parse", "--show-toplevel")
# `_verify("HEAD", ...)`'s question.
_HEAD = ("rev-parse", "--verify", "--quiet", "--end-of-options", "HEAD^{commit}")


def _top_and_head(cwd: str) -> None:
    """Within a command's `snapshot`, the repository's top and HEAD's commit asked of one git
    process, and kept as the answers of both questions: every command that asks for the top in a
    snapshot (`--diff`, `--staged`, the gate) asks for HEAD next, and each git process is a fork
    and a wait. Where the two cannot be told from one answer (no commit yet, not a repository, an
    answer not of that shape), nothing is kept: each question is asked apart, as outside one."""
    held = _SNAPSHOT
    where = os.path.abspath(cwd)
    if held is None or (where, _TOP) in held.answers:
        return
    try:
        out = _git([*_TOP, *_HEAD[1:]], cwd)
    except GitError:
        return
    # The top, a newline, the commit and a newline: the top may itself hold a newline, the
    # commit never does.
    top, newline, head = out[:-1].rpartition(b"\n")
    if not (out.endswith(b"\n") and newline and _is_object_id(head)):
        return
    held.answers[(where, _TOP)] = top + b"\n"
    for place in {where, os.path.abspath(os.fsdecode(top))}:
        held.answers.setdefault((place, _HEAD), head + b"\n")


def repository_root(cwd: str) -> str:
    _top_and_head(cwd)
    try:
        out = _asked(list(_TOP), cwd)
    except GitError:
        raise GitError("not a git repository (or any parent up to the filesystem root): --diff and --staged need one") from None
    # Exactly the one newline git adds: a directory name may itself end with one.
    return os.fsdecode(out[:-1] if out.endswith(b"\n") else out)


def check_revision(rev: str, what: str = "revision") -> None:
    """GitError (a usage error) for a revision that would read as an option: git names no
    revision with a leading `-`, so one that has it is a mistake or an attack, never a ref."""
    if rev.startswith("-"):
        raise GitError(f"{what} {rev!r} starts with '-': a git revision never does (an option given as a value?)")


def _verify(rev: str, cwd: str) -> str | None:
    try:
        return _asked(["rev-parse", "--verify", "--quiet", "--end-of-options", f"{rev}^{{commit}}"], cwd).decode().strip()
    except GitError:
        return None


def _is_shallow(cwd: str) -> bool:
    try:
        return _git(["rev-parse", "--is-shallow-repository"], cwd).strip() == b"true"
    except GitError:
        return False


def resolve_base(base: str | None, cwd: str, *, what: str = "base") -> str:
    """The commit a change is measured from: `base`, else the one `default_base` finds. `what`
    names `base` in errors."""
    if base is None:
        return default_base(cwd)[0]
    check_revision(base, what)
    commit = _verify(base, cwd)
    if commit is not None:
        return commit
    if _is_shallow(cwd):
        raise GitError(
            f"{what} {base!r} is not in this shallow clone: fetch it ({_fetch_command(base, cwd)}, or `fetch-depth: 0` in actions/checkout)"
        )
    raise GitError(f"{what} {base!r} is not a commit of this repository")


def default_base(cwd: str) -> tuple[str, str]:
    """The base of `--diff` without a value, and how to say it: the merge-base of HEAD with the
    upstream branch, else with the remote's default branch (origin/HEAD). GitError when there is
    neither: comparing with HEAD instead would pass a pre-push hook on a branch with no upstream
    whatever its commits hold, since HEAD has no change against itself."""
    for upstream in ("@{upstream}", "refs/remotes/origin/HEAD"):
        if _verify(upstream, cwd) is None:
            continue
        name = _short_name(upstream, cwd)
        try:
            merge_base = _git(["merge-base", "HEAD", upstream], cwd).decode().strip()
        except GitError:
            if _is_shallow(cwd):
                remote, _, branch = name.partition("/")
                # --deepen counts from every shallow boundary (HEAD's and the upstream's alike),
                # so repeating it eventually brings in the commit both histories share.
                fetch = f"`git fetch --deepen=50 {remote} {branch}`" if branch else "`git fetch --deepen=50`"
                raise GitError(
                    f"the merge-base of HEAD and {name} is not in this shallow clone: fetch more history"
                    f" ({fetch}, again until it is found; or `fetch-depth: 0` in actions/checkout)"
                ) from None
            continue
        if merge_base:
            return merge_base, f"the merge-base of HEAD and {name} ({merge_base[:12]})"
    if _verify("HEAD", cwd) is None:
        raise GitError("the repository has no commit yet: there is no base to compare with")
    how = "name it: --diff BASE (e.g. --diff origin/main), or set the branch's upstream (`git branch --set-upstream-to origin/main`)"
    if _is_shallow(cwd):
        how += f"; in a shallow single-branch clone, fetch it first ({_fetch_command('origin/main', cwd)})"
    raise GitError(f"no base to compare with: the branch has no upstream and there is no origin/HEAD; {how}")


def _short_name(ref: str, cwd: str) -> str:
    try:
        # `ref` is one of resolve_base's own constants, never the user's: no --end-of-options,
        # which --abbrev-ref would print back.
        return _git(["rev-parse", "--abbrev-ref", ref], cwd).decode().strip() or ref
    except GitError:
        return ref


def _fetch_command(base: str, cwd: str) -> str:
    """The git command that brings `base` into a shallow, single-branch clone. `git fetch
    --deepen` does not: it deepens the branches already fetched, and a single-branch clone
    (actions/checkout, `git clone --depth`) fetches no other; an explicit refspec does, whatever
    the remote's configured one."""
    try:
        remotes = set(_git(["remote"], cwd).decode("utf-8", "replace").split())
    except GitError:
        remotes = set()
    remote, _, branch = base.partition("/")
    if branch and (remote in remotes or (not remotes and remote == "origin")):
        return f"`git fetch {remote} {branch}:refs/remotes/{remote}/{branch} --depth=50`"
    if _is_object_id(base.encode()):
        return f"`git fetch origin {base} --depth=50`"
    return f"`git fetch origin {base}:refs/heads/{base} --depth=50`"


def has_commit(cwd: str) -> bool:
    """Whether HEAD names a commit (not before a repository's first commit)."""
    return _verify("HEAD", cwd) is not None


def head_or_empty_tree(cwd: str) -> str:
    """What a commit is made on: HEAD's commit, or before a repository's first commit the empty
    tree (its id in the repository's own hash algorithm), so that everything staged is the change."""
    head = _verify("HEAD", cwd)
    if head is not None:
        return head
    return _git(["hash-object", "-t", "tree", "--stdin"], cwd, input_bytes=b"").decode("ascii").strip()


def changes(base: str, cwd: str, *, staged: bool, head: str | None = None) -> list[Change]:
    """What changed from `base` (a commit or tree id) to the index (`staged`), to commit `head`, or
    to the working tree, renames detected; untracked files count as added when comparing with the
    working tree."""
    args = [
        "diff",
        "--raw",
        "-z",
        "-M",
        "--no-color",
        "--no-ext-diff",
        "--no-textconv",
        "--no-abbrev",
        "--relative=",
        *(["--cached"] if staged and head is None else []),
        "--end-of-options",
        base,
        *([head] if head is not None else []),
        "--",
    ]
    out = _parse_raw(_git(args, cwd))
    if not staged and head is None:
        untracked = _git(["ls-files", "-z", "--others", "--exclude-standard"], cwd).split(b"\0")
        out.extend(Change("A", None, os.fsdecode(p)) for p in untracked if p)
    return out


def _parse_raw(data: bytes) -> list[Change]:
    """`git diff --raw -z` output: per change `:MODE MODE OLD NEW STATUS\\0PATH\\0`, with a second
    path for a rename or copy. The fields are NUL-separated, so a name is whatever lies between
    two NULs, newlines and all."""
    fields = data.split(b"\0")
    out: list[Change] = []
    i = 0
    while i < len(fields) and fields[i]:
        meta = fields[i].split(b" ")
        if len(meta) < 5 or not meta[0].startswith(b":"):
            raise GitError("git diff printed something that is not a change")
        status = meta[4].decode("ascii", "replace")[:1]
        old_blob = meta[2].decode("ascii") if _is_object_id(meta[2]) and meta[2].strip(b"0") else None
        old_blob = old_blob if meta[0][1:] in _FILE_MODES else None
        if status in ("R", "C"):
            old, new = os.fsdecode(fields[i + 1]), os.fsdecode(fields[i + 2])
            out.append(Change(status, old if status == "R" else None, new, old_blob if status == "R" else None))
            i += 3
            continue
        path = os.fsdecode(fields[i + 1])
        out.append(
            Change(status, None if status == "A" else path, None if status == "D" else path, None if status == "A" else old_blob)
        )
        i += 2
    return out


def read_blobs(object_ids: Sequence[str], cwd: str) -> list[bytes | None]:
    """The contents of the blobs `object_ids` (as the listings below give them), None for a
    missing one or one that is not a blob, in one `git cat-file --batch` process.

    The requests are object ids, never `REV:PATH`: a path is a line there, and a name holding a
    newline would ask for another object and shift every later answer onto the wrong file."""
    if not object_ids:
        return []
    if _all_object_ids(object_ids):
        request = [oid.encode("ascii") for oid in object_ids]
    else:
        request = [os.fsencode(oid) for oid in object_ids]
        for oid in request:
            if not _is_object_id(oid):
                raise ValueError(f"not an object id: {oid!r}")
    held = _SNAPSHOT
    if held is None:
        return _read_blobs(request, cwd)
    wanted = list(dict.fromkeys(oid for oid in request if oid not in held.blobs))
    held.blobs.update(zip(wanted, _read_blobs(wanted, cwd)))
    return [held.blobs[oid] for oid in request]


def _read_blobs(request: Sequence[bytes], cwd: str) -> list[bytes | None]:
    if not request:
        return []
    out = _git(["cat-file", "--batch"], cwd, input_bytes=b"".join(oid + b"\n" for oid in request))
    blobs: list[bytes | None] = []
    pos = 0
    for oid in request:
        end = out.index(b"\n", pos)
        header = out[pos:end].split(b" ")
        pos = end + 1
        if len(header) != 3 or header[0] != oid:
            if len(header) == 2 and header[0] == oid and header[1] == b"missing":
                blobs.append(None)
                continue
            raise GitError("git cat-file answered out of order")
        size = int(header[2])
        blobs.append(out[pos : pos + size] if header[1] == b"blob" else None)
        pos += size + 1  # the content, then a newline
    return blobs


def tree_files(commit: str, root: str) -> list[tuple[str, str]]:
    """The regular files of `commit` (a commit or tree id), relative to the repository root, each with
    its blob's object id.

    Within a command's `snapshot`, the listing of the commit's top tree is kept too, as `git
    ls-tree -z --full-tree COMMIT` prints it: `-t` lists every tree before what it holds, so the
    entries named without a `/` are the top tree's, in its order. The gate asks for that listing
    at the base (policylint.input.gitref: the configuration's names), which was one more git
    process for every run that lists the base's files."""
    listing = _git(["ls-tree", "-r", "-t", "-z", "--full-tree", "--end-of-options", commit], root)
    if _FS_UTF8:
        out, top = _tree_entries(listing.decode("utf-8", "surrogateescape"))
    else:
        out, top = _tree_entries_apart(listing)
    if _SNAPSHOT is not None:
        _SNAPSHOT.answers.setdefault((os.path.abspath(root), ("ls-tree", "-z", "--full-tree", commit)), top)
    return out


# Whether `os.fsdecode` is UTF-8 with surrogateescape (every POSIX system in a UTF-8 locale, and
# Python's UTF-8 mode): then a listing decoded whole is each name decoded alone, since the bytes
# that separate its fields (NUL, tab, space) are ASCII, which no UTF-8 sequence holds, and the
# names need no call each.
_FS_UTF8 = os.name == "posix" and sys.getfilesystemencoding() == "utf-8" and sys.getfilesystemencodeerrors() == "surrogateescape"


def _tree_entries(listing: str) -> tuple[list[tuple[str, str]], bytes]:
    """`tree_files`' files and the top tree's listing, of `ls-tree -r -t -z` decoded whole."""
    out = []
    top: list[str] = []
    for entry in listing.split("\0"):
        meta, _, path = entry.partition("\t")
        if entry and "/" not in path:
            top.append(entry + "\0")
        fields = meta.split(" ")
        if len(fields) == 3 and fields[0] in _FILE_MODE_NAMES and fields[1] == "blob":
            out.append((path, fields[2]))
    # The decoding undone: surrogateescape gives back the very bytes git printed.
    return out, "".join(top).encode("utf-8", "surrogateescape")


def _tree_entries_apart(listing: bytes) -> tuple[list[tuple[str, str]], bytes]:
    """`_tree_entries` for a file system encoding that is not UTF-8: each name decoded alone."""
    out = []
    top: list[bytes] = []
    for entry in listing.split(b"\0"):
        meta, _, path = entry.partition(b"\t")
        if entry and b"/" not in path:
            top.append(entry + b"\0")
        fields = meta.split(b" ")
        if len(fields) == 3 and fields[0] in _FILE_MODES and fields[1] == b"blob":
            out.append((os.fsdecode(path), fields[2].decode("ascii")))
    return out, b"".join(top)


def staged_files(root: str) -> dict[str, str]:
    """The regular files in the index, relative to the repository root, each with its staged
    blob's object id (symlinks and submodules are not manifests; a file with a merge conflict
    has no staged content yet)."""
    out = {}
    for entry in index_listing(root).split(b"\0"):
        if not entry:
            continue
        meta, _, path = entry.partition(b"\t")
        fields = meta.split(b" ")
        if len(fields) == 3 and fields[0] in _FILE_MODES and fields[2] == b"0":
            out[os.fsdecode(path)] = fields[1].decode("ascii")
    return out


def index_listing(root: str) -> bytes:
    """`git ls-files -z --stage` of the whole index: `MODE OBJECT STAGE\\tPATH` per entry."""
    return _asked(["ls-files", "-z", "--stage"], root)


def tracked_names(top: str) -> list[bytes]:
    """The paths git tracks (the index's entries) in the repository whose top is `top`, relative
    to it, as git's bytes."""
    return [name for name in _git(["ls-files", "-z", "--cached"], top).split(b"\0") if name]


def known_blob(object_id: str) -> bytes | None:
    """The content of blob `object_id` when the command's `snapshot` read it already, else None."""
    return _SNAPSHOT.blobs.get(os.fsencode(object_id)) if _SNAPSHOT is not None else None


def remember_blob(object_id: str, data: bytes) -> None:
    """Within a command's `snapshot`, `data` is the content of blob `object_id` (read from a file
    that hashes to it): the command's other reads of that blob take it from here."""
    if _SNAPSHOT is not None:
        _SNAPSHOT.blobs[os.fsencode(object_id)] = data
