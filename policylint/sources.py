"""Finding the input files: paths, directories (recursively) and stdin."""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

MANIFEST_SUFFIXES = (".yaml", ".yml", ".json")
STDIN = "-"


class SourceError(Exception):
    """A path given on the command line matches nothing (exit code 2)."""


@dataclass(frozen=True, slots=True)
class Source:
    """One input file. `content` is set only for stdin, which cannot be read twice."""

    display: str
    fs_path: str | None = None
    content: bytes | None = None


def _display(path: str) -> str:
    return path.replace(os.sep, "/") if os.sep != "/" else path


def _is_hidden(name: str) -> bool:
    return name.startswith(".") and name not in (".", "..")


def _walk(root: str) -> Iterable[str]:
    """Yield manifest files below `root`, sorted, following directory symlinks once.

    Hidden directories (.git, .venv, ...) and hidden files are skipped, like
    ansible-lint and yamllint do. A directory reached a second time through a
    symlink (a loop, or two links to one place) is not entered again.
    """
    seen: set[tuple[int, int]] = set()
    stack = [root]
    out: list[str] = []
    while stack:
        directory = stack.pop()
        try:
            st = os.stat(directory)
        except OSError:
            continue
        ident = (st.st_dev, st.st_ino)
        if ident in seen:
            continue
        seen.add(ident)
        try:
            entries = sorted(os.scandir(directory), key=lambda e: e.name)
        except OSError:
            # Unreadable directory: its files are reported as unreadable when named directly;
            # a directory we cannot list yields nothing, like `find` would.
            continue
        subdirs: list[str] = []
        for entry in entries:
            if _is_hidden(entry.name):
                continue
            try:
                is_dir = entry.is_dir(follow_symlinks=True)
            except OSError:
                is_dir = False
            if is_dir:
                subdirs.append(entry.path)
            elif entry.name.lower().endswith(MANIFEST_SUFFIXES):
                out.append(entry.path)
        stack.extend(reversed(subdirs))
    return sorted(out)


def discover(
    paths: Sequence[str],
    *,
    stdin_filename: str | None = None,
    read_stdin: Callable[[], bytes] | None = None,
) -> list[Source]:
    """Expand command-line paths into a sorted, de-duplicated list of sources."""
    sources: dict[str, Source] = {}
    for raw in paths:
        if raw == STDIN:
            data = read_stdin() if read_stdin else b""
            name = stdin_filename or "<stdin>"
            sources[name] = Source(display=name, content=data)
            continue
        path = os.path.normpath(raw)
        try:
            st = os.stat(path)
        except FileNotFoundError:
            if os.path.islink(path):
                # A dangling symlink named explicitly: report it as unreadable, not as usage error.
                sources[_display(path)] = Source(display=_display(path), fs_path=path)
                continue
            raise SourceError(f"path does not exist: {raw}") from None
        except OSError as exc:
            raise SourceError(f"cannot access {raw}: {exc.strerror}") from None
        if stat.S_ISDIR(st.st_mode):
            found = _walk(path)
            if not found:
                raise SourceError(f"no *.yaml, *.yml or *.json files found under {raw}")
            for f in found:
                # `policylint .` and `policylint a.yaml` must name (and de-duplicate) a file alike.
                name = _display(os.path.normpath(f))
                sources[name] = Source(display=name, fs_path=f)
        else:
            sources[_display(path)] = Source(display=_display(path), fs_path=path)
    return [sources[k] for k in sorted(sources)]

