"""A source's bytes, read within the file size bound, and their text."""

from __future__ import annotations

import codecs
import errno
import hashlib
import os
import re
import stat

from policylint.findings import Issue
from policylint.input import bounds
from policylint.input.document import UNDECODABLE_FILE, UNREADABLE_FILE, located_issue
from policylint.input.named import O_NOFOLLOW, OPEN_FLAGS, describe_mode, read_capped
from policylint.input.sources import Source

NON_SPACE = re.compile(r"\S")  # whitespace as str.isspace() sees it

# Opened as every file named by configuration is (policylint.input.named): never blocking,
# never taking a terminal.
_OPEN_FLAGS = OPEN_FLAGS
_O_NOFOLLOW = O_NOFOLLOW


def read_bytes(source: Source) -> tuple[bytes | None, Issue | None]:
    """The bytes of one source, at most bounds.MAX_FILE_BYTES + 1 of them, or its PL008 issue.

    Only a regular file is read: the entry was checked when it was found (policylint.input.sources),
    and the open descriptor is checked again (fstat) before any read, since the tree may have
    changed in between.
    """
    if source.content is not None:
        return source.content, None
    if source.blob is not None:
        data = staged_bytes(source)
        if data is None:
            return None, located_issue(UNREADABLE_FILE, source.display, 1, 1, "cannot read file: its staged content is missing")
        return data, None
    return _read_file(source)


def _read_file(source: Source) -> tuple[bytes | None, Issue | None]:
    """`read_bytes` of a file on disk."""

    def unreadable(message: str) -> tuple[None, Issue]:
        return None, located_issue(UNREADABLE_FILE, source.display, 1, 1, message)

    if source.problem is not None:
        return unreadable(source.problem)
    assert source.fs_path is not None
    try:
        fd = os.open(source.fs_path, _OPEN_FLAGS | (_O_NOFOLLOW if source.nofollow else 0))
    except OSError as exc:
        if source.nofollow and exc.errno == errno.ELOOP:
            return unreadable("cannot read file: it was replaced by a symlink while policylint ran; not followed")
        return unreadable(f"cannot read file: {exc.strerror or type(exc).__name__}")
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            return unreadable(f"not a regular file: {describe_mode(st.st_mode)}; not read")
        if source.identity is not None and (st.st_dev, st.st_ino) != source.identity:
            # The symlink now leads to another file than the one checked against the roots.
            return unreadable("cannot read file: its symlink changed while policylint ran; not followed")
        return read_capped(fd, st.st_size, bounds.MAX_FILE_BYTES), None
    except OSError as exc:
        return unreadable(f"cannot read file: {exc.strerror or type(exc).__name__}")
    finally:
        os.close(fd)


def staged_bytes(source: Source) -> bytes | None:
    """The bytes of `source.blob`, the file's staged version (None: missing from the repository):
    within a command's git snapshot, those it read already; else the file's when they hash to
    it, as git names a blob (no unstaged edit, no filter between the two), which reading the file
    and hashing it costs a fraction of what `cat-file` does to inflate and pipe it; else git's."""
    from policylint.input import git

    assert source.blob is not None
    data = known_bytes(source, source.blob)
    return data if data is not None else git.read_blobs([source.blob], os.getcwd())[0]


def known_bytes(source: Source, object_id: str) -> bytes | None:
    """The bytes of the blob `object_id` without asking git: those the command's snapshot read of
    it already, else the file's when they are the blob's (`on_disk`); else None."""
    from policylint.input import git

    held = git.known_blob(object_id)
    return held if held is not None else on_disk(source, object_id)


def on_disk(source: Source, object_id: str) -> bytes | None:
    """The file's bytes when they are the blob `object_id`, else None. Read as every input file
    is (a regular file, never blocking, within the size bound: a file past it is the blob's only
    if git reads it). Within a command's snapshot the bytes are the blob's for its other reads
    (the other side of the change) too."""
    from policylint.input import git

    algorithm = _BLOB_HASHES.get(len(object_id))  # the repository's object format
    if algorithm is None or source.content is not None:
        return None
    data = _read_sized(source)
    if data is None:
        return None
    digest = algorithm(b"blob %d\0" % len(data))
    digest.update(data)
    if digest.hexdigest() != object_id:
        return None
    git.remember_blob(object_id, data)
    return data


# A blob's id names the hash of `blob <size>\0` and its bytes; its length, the repository's
# object format (SHA-1 or SHA-256).
_BLOB_HASHES = {40: hashlib.sha1, 64: hashlib.sha256}


def _read_sized(source: Source) -> bytes | None:
    """The file's bytes as `_read_file` reads them, in one read of the size fstat gives, else
    None: a file that cannot be read as an input file, past the size bound, or grown since its
    fstat. Each is then read from git (`on_disk`'s caller), and bytes read short are not the
    blob's (they are checked against its id): `read_capped`'s read to the end of the file cost
    one more system call per file, 3,319 of them in a hook run (docs/performance.md)."""
    if source.problem is not None or source.fs_path is None:
        return None
    try:
        fd = os.open(source.fs_path, _OPEN_FLAGS | (_O_NOFOLLOW if source.nofollow else 0))
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_size > bounds.MAX_FILE_BYTES:
            return None
        if source.identity is not None and (st.st_dev, st.st_ino) != source.identity:
            return None  # the symlink now leads to another file than the one checked against the roots
        data = os.read(fd, st.st_size + 1)
        return data if len(data) <= st.st_size else None
    except OSError:
        return None
    finally:
        os.close(fd)


def line_col(text: str, index: int) -> tuple[int, int]:
    line = text.count("\n", 0, index) + 1
    start = text.rfind("\n", 0, index) + 1
    return line, index - start + 1


def decode(data: bytes, file: str) -> tuple[str | None, Issue | None]:
    """Bytes to text: UTF-8 (BOM stripped), or UTF-16/32 announced by a BOM, as YAML 1.2 allows."""
    for bom, codec in (
        (codecs.BOM_UTF32_LE, "utf-32"),
        (codecs.BOM_UTF32_BE, "utf-32"),
        (codecs.BOM_UTF8, "utf-8-sig"),
        (codecs.BOM_UTF16_LE, "utf-16"),
        (codecs.BOM_UTF16_BE, "utf-16"),
    ):
        if data.startswith(bom):
            try:
                return data.decode(codec), None
            except UnicodeDecodeError as exc:
                return None, located_issue(
                    UNDECODABLE_FILE,
                    file,
                    1,
                    1,
                    f"file starts with a {codec.upper()} byte order mark but is not valid {codec.upper()} ({exc.reason})",
                )
    if b"\x00" in data[:8192]:
        hint = " (UTF-16 without a byte order mark?)" if data[1:2] == b"\x00" or data[:1] == b"\x00" else ""
        return None, located_issue(UNDECODABLE_FILE, file, 1, 1, f"binary file, not YAML or JSON{hint}")
    try:
        return data.decode("utf-8"), None
    except UnicodeDecodeError as exc:
        good = data[: exc.start].decode("utf-8", errors="replace")
        line, col = line_col(good, len(good))
        return None, located_issue(
            UNDECODABLE_FILE, file, line, col, f"not valid UTF-8: byte 0x{data[exc.start]:02x} at offset {exc.start}"
        )
