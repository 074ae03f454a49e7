"""Reading a file that configuration or a flag names: a profile, a baseline, the configuration
file itself (README "Security").

Manifests found by walking are checked by policylint.input.sources and read by
policylint.input.load.read_bytes; the files named here get the same treatment through one
function, `read_named`: only a regular file is read (checked on the path, then on the open
descriptor), it is opened non-blocking and without a controlling terminal, so that a FIFO,
`/proc/self/fd/1` or a device never blocks a run, and at most its kind's bound of bytes is read,
so that `/dev/zero` or a huge file costs nothing. A path written in a repository's
configuration must also resolve inside that repository (`outside_root`): the repository is
hostile input in CI, and a `profile:` or `baseline:` leading to `/etc/passwd` or a CI token
would be read and, in an error message, printed to a public log. Only the command line may name
a file elsewhere.

Errors (`NamedFileError`) name the file and the problem and never quote what the file holds.
"""

from __future__ import annotations

import os
import stat

from policylint.textsafe import escape

# Bytes read from each kind of named file, at most; a larger file is refused unread. Each is
# far above any real file of its kind (a repository's configuration is a few KB, the largest
# shipped profile file 40 KB, a baseline of 100,000 findings some 30 MB) and keeps a hostile one
# from costing memory. CRDs are manifests and are read by the manifest loader, within its bound
# (policylint.input.bounds.MAX_FILE_BYTES).
MAX_CONFIG_BYTES = 1024 * 1024
MAX_PROFILE_BYTES = 4 * 1024 * 1024
MAX_BASELINE_BYTES = 64 * 1024 * 1024

# Opening never blocks and never takes a terminal: O_NONBLOCK makes opening a FIFO (one swapped
# in after a check) return at once instead of waiting for a writer, O_NOCTTY keeps a terminal
# device from becoming our controlling terminal (open(2)). Regular files ignore both.
OPEN_FLAGS = (
    os.O_RDONLY
    | getattr(os, "O_NONBLOCK", 0)
    | getattr(os, "O_NOCTTY", 0)
    | getattr(os, "O_CLOEXEC", 0)
    | getattr(os, "O_BINARY", 0)  # Windows: no newline translation
)
O_NOFOLLOW: int = getattr(os, "O_NOFOLLOW", 0)

# A path is shown in messages up to this many characters (it may come from the input).
_MAX_SHOWN = 300


class NamedFileError(Exception):
    """A named file that is not read (a usage error): `problem` says why, `str()` names the file
    too ("profile x.yaml: not a regular file: a FIFO; not read")."""

    def __init__(self, what: str, path: str, problem: str) -> None:
        self.what = what
        self.path = path
        self.problem = problem
        super().__init__(f"{what} {shown(path)}: {problem}")


def shown(path: str) -> str:
    """`path` as messages show it: escaped, cut to a few hundred characters."""
    return escape(os.fsdecode(path), _MAX_SHOWN)


def describe_mode(mode: int) -> str:
    """What a non-regular file is, for messages: `a FIFO`, `a character device`, ..."""
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISLNK(mode):
        return "a symlink"
    return "a special file"


def read_capped(fd: int, size_hint: int, cap: int) -> bytes:
    """At most `cap` + 1 bytes of `fd` (one more than allowed says "too large").

    Reads are sized by fstat's st_size, not by the cap: `read(cap)` on a buffered file allocates
    the whole cap for every file, however small. The loop goes on to the end of the file, so a
    file that grew since fstat is still read (up to the cap).
    """
    left = cap + 1
    chunks: list[bytes] = []
    step = max(size_hint + 1, 64 * 1024)
    while left > 0:
        chunk = os.read(fd, min(left, step))
        if not chunk:
            break
        chunks.append(chunk)
        left -= len(chunk)
    return chunks[0] if len(chunks) == 1 else b"".join(chunks)


def repository_root(path: str) -> str:
    """The repository a configuration file at `path` belongs to: the nearest directory at or
    above its own holding `.git` (as configuration discovery stops there), else its directory.
    Absolute, symlinks resolved."""
    start = os.path.dirname(os.path.abspath(path))
    directory = start
    while True:
        if os.path.lexists(os.path.join(directory, ".git")):
            return os.path.realpath(directory)
        parent = os.path.dirname(directory)
        if parent == directory:
            return os.path.realpath(start)
        directory = parent


def outside_root(path: str, root: str) -> str | None:
    """Why `path` does not stay inside the directory `root` once every symlink in it is
    resolved (it is `..`, absolute elsewhere, or goes through a link that leads out), or None."""
    real = os.path.normcase(os.path.realpath(path))
    base = os.path.normcase(os.path.realpath(root))
    if real == base or real.startswith(base if base.endswith(os.sep) else base + os.sep):
        return None
    if os.path.islink(path) or real != os.path.normcase(os.path.abspath(path)):
        return f"it leads through a symlink out of the repository ({shown(root)})"
    return f"it is outside the repository ({shown(root)})"


def read_named(path: str, *, what: str, limit: int, root: str | None = None) -> bytes:
    """The bytes of the regular file `path`, which configuration or a flag names as `what`
    ("profile", "baseline", "configuration file"), at most `limit` of them.

    `root`: the path came from a repository's configuration and must resolve inside `root`
    (None: from the command line, anywhere). The file opened must be the one checked: its
    (st_dev, st_ino) is compared on the open descriptor. Raises NamedFileError.
    """
    shown_path = path

    def refuse(problem: str) -> NamedFileError:
        return NamedFileError(what, shown_path, problem)

    flags = OPEN_FLAGS
    if root is not None:
        reason = outside_root(path, root)
        if reason is not None:
            raise refuse(f"not read: {reason}; only the command line may name a file outside it")
        # What was checked is the resolved path: open that one, and refuse a link put there since.
        path = os.path.realpath(path)
        flags |= O_NOFOLLOW
    try:
        st = os.stat(path)
    except FileNotFoundError:
        raise refuse("it does not exist") from None
    except OSError as exc:
        raise refuse(f"cannot be read: {exc.strerror or type(exc).__name__}") from None
    if not stat.S_ISREG(st.st_mode):
        raise refuse(f"not a regular file: {describe_mode(st.st_mode)}; not read")
    if st.st_size > limit:
        raise refuse(f"{st.st_size:,} bytes is more than a {what} can be ({limit:,}); not read")
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        raise refuse(f"cannot be read: {exc.strerror or type(exc).__name__}") from None
    try:
        opened = os.fstat(fd)
        if not stat.S_ISREG(opened.st_mode):
            raise refuse(f"not a regular file: {describe_mode(opened.st_mode)}; not read")
        if (opened.st_dev, opened.st_ino) != (st.st_dev, st.st_ino):
            raise refuse("it was replaced while policylint read it; not read")
        data = read_capped(fd, opened.st_size, limit)
    except OSError as exc:
        raise refuse(f"cannot be read: {exc.strerror or type(exc).__name__}") from None
    finally:
        os.close(fd)
    if len(data) > limit:
        raise refuse(f"more than {limit:,} bytes, more than a {what} can be; not read")
    return data
