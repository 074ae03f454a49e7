"""How the parse cache (policylint.input.cache) writes an entry's file: a temporary file of its
own, the magic number, the payload's checksum and the payload, renamed into place by the cache."""

from __future__ import annotations

import hashlib
import itertools
import os
from collections.abc import Iterable

TEMP_PREFIX = ".tmp-"
# The checksum's size (BLAKE2b), after the magic number.
DIGEST = 16
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
# How the cache makes its temporary files (`open_temp`): created here or not at all, never through a
# link (as tempfile.mkstemp opens them; os.open's descriptors are not inherited by child processes).
_TEMP_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | getattr(os, "O_BINARY", 0)
_TEMP_NUMBERS = itertools.count()
_TEMP_TRIES = 100
_BASE36 = "0123456789abcdefghijklmnopqrstuvwxyz"
# What `write_entry` holds before writing: a file's entries at once (a few KB each), the parts of
# larger ones as they come (an entry of a file of thousands of objects is MBs: held whole, it
# would add to the run's peak, tests/input/test_cache_parts.py).
_HELD_BYTES = 64 * 1024


def _temp_name(number: int) -> str:
    """`.tmp-` and 8 characters of the alphabet pruning knows (policylint.input.cache `_TEMP_NAME`): this process's id (3 base-36 digits) and
    `number` (5), so that the names of one process do not collide with each other's."""
    digits = []
    value = (os.getpid() % 36**3) * 36**5 + number % 36**5
    for _ in range(8):
        value, digit = divmod(value, 36)
        digits.append(_BASE36[digit])
    return TEMP_PREFIX + "".join(reversed(digits))


def open_temp(directory: str) -> tuple[int, str] | None:
    """A new temporary file in `directory`, opened for writing, and its path; None when none can be
    made. A name from the process id and a counter, created with O_EXCL (a name taken, by another
    process or one that died, is skipped; so is a link: O_EXCL does not follow one), as
    `tempfile.mkstemp` creates its random ones: its names and checks cost more than the open and
    the rename together, 0.1 s of a run that fills the cache of 3,000 files (docs/performance.md,
    "Kept per file")."""
    for _ in range(_TEMP_TRIES):
        path = os.path.join(directory, _temp_name(next(_TEMP_NUMBERS)))
        try:
            return os.open(path, _TEMP_FLAGS, 0o600), path
        except FileExistsError:
            continue
        except OSError:
            return None
    import tempfile  # the fallback alone: its import is a few milliseconds of every run's start

    try:
        return tempfile.mkstemp(prefix=TEMP_PREFIX, dir=directory)
    except OSError:
        return None


def write_entry(fd: int, payload: bytes | Iterable[bytes], magic: bytes) -> None:
    """The magic number, the payload's checksum and the payload, written to `fd`. Up to
    `_HELD_BYTES` of parts are held and written at once, behind their checksum (most entries: one
    file's); past it the parts are written as they come and the checksum's place is filled in last
    (no reader sees the file before its rename)."""
    h = hashlib.blake2b(digest_size=DIGEST)
    parts = iter((payload,) if isinstance(payload, bytes) else payload)
    held: list[bytes] = []
    size = 0
    for part in parts:
        h.update(part)
        held.append(part)
        size += len(part)
        if size > _HELD_BYTES:
            break
    else:
        _write_all(fd, b"".join((magic, h.digest(), *held)))
        return
    _write_all(fd, magic + bytes(DIGEST))
    for part in held:
        _write_all(fd, part)
    del held
    for part in parts:
        h.update(part)
        _write_all(fd, part)
    os.lseek(fd, len(magic), os.SEEK_SET)
    _write_all(fd, h.digest())


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]
