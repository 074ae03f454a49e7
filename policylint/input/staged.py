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
from collections.abc import Mapping, Sequence

from policylint.input import nonmanifest
from policylint.input.git import read_blobs, staged_files
from policylint.input.ignore import Matcher, NameMatcher, WalkFilter
from policylint.input.reader import known_bytes
from policylint.input.sources import MANIFEST_SUFFIXES, Source, display_name


def removed_from_worktree(
    sources: Sequence[Source],
    roots: Sequence[str],
    top: str,
    walk: WalkFilter | None,
    *,
    helm_templates: bool = False,
    index: Mapping[str, str] | None = None,
    named: Sequence[str | None] | None = None,
) -> list[Source]:
    """The staged files under the directories in `roots` that the walk did not find because the
    working tree no longer has them, with their staged content. `index`: `staged_files(top)`,
    when the caller has it; `named`: `in_index(sources, top)`, when the caller has it."""
    directories = [os.path.abspath(r) for r in roots if os.path.isdir(r)]
    if not directories:
        return []
    # The files found, by their name in the index: an index entry found is passed over by its
    # name, where joining every entry to the top to compare absolute paths cost a call per file.
    found = set(in_index(sources, top) if named is None else named)
    exclude = (walk or WalkFilter()).exclude_matcher()
    wanted: list[tuple[str, str]] = []
    for relative, blob in sorted((staged_files(top) if index is None else index).items()):
        if relative in found:
            continue
        path = os.path.join(top, *relative.split("/"))
        if os.path.lexists(path) or not relative.lower().endswith(MANIFEST_SUFFIXES):
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


def in_index(sources: Sequence[Source], top: str, absolute: Mapping[str, str] | None = None) -> list[str | None]:
    """Each source's name in the index of the repository whose top is `top` (its path relative to
    the top, `/`-separated; None for one read from no path). `absolute`: the absolute, normalised
    path of a source by its display name, as discovery found it (`Discovery.absolute`), else
    `os.path.abspath` of its `fs_path`."""
    top = os.path.abspath(top)
    known = absolute or {}
    out: list[str | None] = []
    for source in sources:
        if source.fs_path is None:
            out.append(None)
            continue
        path = known.get(source.display)
        if path is None:
            path = os.path.abspath(source.fs_path)
        relative = _relative(path, top)
        out.append(relative if os.sep == "/" else relative.replace(os.sep, "/"))
    return out


def staged_snapshot(
    sources: Sequence[Source],
    root: str,
    index: Mapping[str, str] | None = None,
    *,
    lazy: bool = False,
    named: Sequence[str | None] | None = None,
) -> list[Source]:
    """`sources` as the index holds them: each tracked file's staged content (unstaged edits
    do not leak in), files the index does not hold left out. `index`: `staged_files(root)`, when
    the caller has it (the index of a large repository is parsed once per run, not per question).
    `lazy`: each file's staged blob named (`Source.blob`), not read: a run answered from what
    earlier runs kept by the files' content keys (policylint.incremental.blobkeys) reads none of
    them, and `materialize` reads them for a run that analyses."""
    index = staged_files(root) if index is None else index
    kept: list[tuple[Source, str]] = []
    for source, relative in zip(sources, in_index(sources, root) if named is None else named):
        blob = index.get(relative) if relative is not None else None
        if blob is not None:
            kept.append((source, blob))
    if lazy:
        return [_with_blob(source, blob) if source.content is None else source for source, blob in kept]
    return [s for s in _read(kept, root) if s is not None]


def materialize(sources: Sequence[Source]) -> list[Source]:
    """`sources` with the staged blobs `staged_snapshot(lazy=True)` named read (one `cat-file`
    for those not on disk as staged), as `staged_snapshot` gives them."""
    if not any(s.blob is not None and s.content is None for s in sources):
        return list(sources)
    pending = [s for s in sources if s.blob is not None and s.content is None]
    read = iter(_read([(s, s.blob) for s in pending], os.getcwd()))
    out: list[Source] = []
    for source in sources:
        done = source if source.blob is None or source.content is not None else next(read)
        if done is not None:  # a blob git no longer has: left out, as `staged_snapshot` leaves it
            out.append(done)
    return out


def _read(kept: Sequence[tuple[Source, str | None]], root: str) -> list[Source | None]:
    """Each source with its staged blob's bytes (None where git has no such blob)."""
    on_disk = [_as_on_disk(source, blob) for source, blob in kept]
    blobs = iter(read_blobs([blob for (_, blob), data in zip(kept, on_disk) if data is None and blob is not None], root))
    contents = [data if data is not None else next(blobs) for data in on_disk]
    return [_with_content(source, content) if content is not None else None for (source, _), content in zip(kept, contents)]


def _with_content(source: Source, content: bytes) -> Source:
    """`replace(source, content=content, snapshot=True, blob=None)`, made by naming each field:
    half of `replace`'s time, which looks the fields up per call, 3 ms of a hook run's 3,319 files
    (tests/input/test_staged.py holds it to every field `Source` has)."""
    return Source(
        display=source.display,
        fs_path=source.fs_path,
        content=content,
        snapshot=True,
        problem=source.problem,
        identity=source.identity,
        nofollow=source.nofollow,
        blob=None,
    )


def _relative(path: str, top: str) -> str:
    """`os.path.relpath(path, top)` for two absolute, normalised paths: the rest of `path` when it
    lies under `top` (every file of a repository's walk, and relpath's component-by-component
    search cost a run a few milliseconds per thousand files), else relpath's answer."""
    prefix = top if top.endswith(os.sep) else top + os.sep
    return path[len(prefix) :] if path.startswith(prefix) and len(path) > len(prefix) else os.path.relpath(path, top)


def _with_blob(source: Source, blob: str) -> Source:
    """`replace(source, snapshot=True, blob=blob)`, made by naming each field as `_with_content`
    is (a call per staged file of every `--staged` run)."""
    return Source(
        display=source.display,
        fs_path=source.fs_path,
        content=source.content,
        snapshot=True,
        problem=source.problem,
        identity=source.identity,
        nofollow=source.nofollow,
        blob=blob,
    )


def _as_on_disk(source: Source, object_id: str | None) -> bytes | None:
    """The file's bytes when they are the staged blob `object_id` (policylint.input.reader
    `on_disk`: the file as on disk, whatever `source.blob` says), or those the command's snapshot
    read of it already; else None."""
    return None if object_id is None else known_bytes(source, object_id)
