"""A commit's manifests as sources, read from git objects without checking anything out: the base
side of `policylint diff` and of `check --diff` / `--staged` (policylint.commands.change)."""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from policylint.input.ignore import WalkFilter
    from policylint.input.sources import Source


def commit_sources(
    commit: str, root: str, paths: Sequence[str], walk: WalkFilter | None, helm_templates: bool, *, located: bool = False
) -> list[Source]:
    """The manifest files of `commit` under `paths`, read from git objects, each named as the
    working-tree discovery would name it (relative to the working directory). `located`: each
    also says where it lies in the working tree (`fs_path`), as a staged file does, for the side
    of a change whose files are matched by path (policylint.report_scope); never opened there."""
    from policylint.input import git, nonmanifest
    from policylint.input.sources import MANIFEST_SUFFIXES, Source, display_name

    # Each root, and the start of every path under it.
    roots = [(r, r.rstrip(os.sep) + os.sep) for r in map(os.path.abspath, paths)]
    exclude = walk.exclude_matcher() if walk is not None else None
    chosen: list[tuple[str, str, str]] = []  # (display name, absolute path, blob id)
    directories: dict[str, tuple[bool, bool]] = {}  # what classifying found of each directory
    here = os.path.join(os.getcwd(), "")
    # `os.path.join(root, path)` for a path git lists (relative, never empty), joined as its
    # answer without its call per file.
    top = os.path.join(root, "")
    # Whether `top + path` is normalised for every path git lists in normal form (no empty, `.` or
    # `..` component: `_plain`), so that the path's directory and name are its last `/`'s sides
    # and the rest of it under the working directory is relpath's answer.
    plain_top = os.sep == "/" and os.path.normpath(top) + os.sep == top
    # Whether the whole tree lies under a root (the gate's base side names the repository's
    # top): then no path is asked which root it lies under.
    everywhere = any(top.startswith(under) for _, under in roots)
    for path, blob in git.tree_files(commit, root):
        if not path.endswith(MANIFEST_SUFFIXES):
            continue
        absolute = top + path
        if not (everywhere or any(absolute == r or absolute.startswith(under) for r, under in roots)):
            continue
        plain = plain_top and _plain(path)
        if plain:
            directory, _, name = absolute.rpartition("/")
            category = nonmanifest.classify_in(directory, name, helm_templates=helm_templates, directories=directories)
        else:
            category = nonmanifest.classify_path(absolute, helm_templates=helm_templates, directories=directories)
        if category is not None:
            continue
        if exclude is not None and _excluded(exclude, absolute, root):
            continue
        # Named as the walk names a file on disk (valid text for any bytes git holds), so that
        # both sides of a change name, and fingerprint, a file alike: relative to the working
        # directory, the rest of the path where it lies under it (`relpath`'s answer, which
        # compares every component of both paths: a few milliseconds per thousand files).
        under_here = absolute.startswith(here) and (plain or os.path.normpath(absolute) == absolute)
        relative = absolute[len(here) :] if under_here else None
        chosen.append((display_name(relative or os.path.relpath(absolute)), absolute, blob))
    blobs = git.read_blobs([blob for _, _, blob in chosen], root)
    return [
        Source(display=display, fs_path=absolute if located else None, content=blob, snapshot=True)
        for (display, absolute, _), blob in zip(chosen, blobs)
        if blob is not None
    ]


def _plain(path: str) -> bool:
    """Whether a relative, `/`-separated path has no empty, `.` or `..` component (and so is its
    own `normpath`), told conservatively: a component starting with a dot takes the long way."""
    return not path.startswith(".") and "/." not in path and "//" not in path and not path.endswith("/")


def _excluded(matcher: Any, absolute: str, root: str) -> bool:
    directory = os.path.dirname(absolute)
    while directory.startswith(root) and directory != root:
        if matcher.decide(directory, True):
            return True
        directory = os.path.dirname(directory)
    return bool(matcher.decide(absolute, False))
