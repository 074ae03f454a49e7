"""`--staged` reads the index, not the working tree: a file staged and then removed (or not yet
written back) in the working tree is still part of the commit, so it is linted from its blob.

The directory walk (policylint.input.sources) finds what is on disk; `staged_snapshot` replaces
each found file's content with its staged blob. What the walk cannot find, the index entries
under a walked directory that are missing from the disk, is added here, filtered as the walk
filters: manifest names only, no hidden component, what `exclude` leaves out and what is
recognised as not a manifest (policylint.input.nonmanifest) left out.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

from policylint.input import nonmanifest
from policylint.input.git import read_blobs, staged_files
from policylint.input.ignore import Matcher, NameMatcher, WalkFilter
from policylint.input.sources import MANIFEST_SUFFIXES, Source, display_name


def removed_from_worktree(
    sources: Sequence[Source], roots: Sequence[str], top: str, walk: WalkFilter | None, *, helm_templates: bool = False
) -> list[Source]:
    """The staged files under the directories in `roots` that the walk did not find because the
    working tree no longer has them, with their staged content."""
    directories = [os.path.abspath(r) for r in roots if os.path.isdir(r)]
    if not directories:
        return []
    found = {os.path.abspath(s.fs_path) for s in sources if s.fs_path is not None}
    exclude = (walk or WalkFilter()).exclude_matcher()
    wanted: list[tuple[str, str]] = []
    for relative, blob in sorted(staged_files(top).items()):
        path = os.path.join(top, *relative.split("/"))
        if path in found or os.path.lexists(path) or not relative.lower().endswith(MANIFEST_SUFFIXES):
            continue
        root = next((d for d in directories if path.startswith(d.rstrip(os.sep) + os.sep)), None)
        if root is None:
            continue
        inside = os.path.relpath(path, root).split(os.sep)
        if any(part.startswith(".") for part in inside):
            continue
        if exclude is not None and _excluded(exclude, root, inside):
            continue
        if nonmanifest.classify_path(path, helm_templates=helm_templates) is not None:
            continue
        wanted.append((path, blob))
    blobs = read_blobs([blob for _, blob in wanted], top)
    return [
        Source(display=display_name(os.path.normpath(os.path.relpath(path))), fs_path=path, content=content, snapshot=True)
        for (path, _), content in zip(wanted, blobs)
        if content is not None
    ]


def _excluded(exclude: Matcher | NameMatcher, root: str, parts: list[str]) -> bool:
    """Whether `exclude` leaves out the file or a directory on its way from `root`, as the walk would."""
    current = root
    for i, part in enumerate(parts):
        current = os.path.join(current, part)
        if exclude.decide(current, i < len(parts) - 1) is True:
            return True
    return False
