"""Which files git tracks, asked only when a `.gitignore` pattern would leave one out of a walk.

Git applies `.gitignore` to untracked files only: a file added with `git add -f`, or before the
pattern was written, stays tracked and ships with every commit. A walk that left such a file
out would let one line of `.gitignore` in a pull request hide a broken manifest from the gate.
So when a pattern from a `.gitignore` file (or `.git/info/exclude`) would leave an entry out,
the walk (policylint.input.sources) asks here whether git tracks it, or, for a directory, a
file below it, and keeps it if so. `exclude` patterns are not affected: they are settings.

Git is asked once per repository (`git ls-files -z`: NUL-separated names, kept as the bytes
git gave, so no name can split into two), and only when a pattern matches something: a walk
that ignores nothing never starts it. When git cannot answer (not installed, a repository it
refuses to read), nothing in that repository can be shown untracked, so its `.gitignore`
patterns are not applied there, with a note: the walk lints more, never less.
"""

from __future__ import annotations

import os

from policylint.input.ignore import repository_root


class _Listing:
    """The tracked files of one repository and the directories holding them, relative to its
    top (`/`-separated, as git names them)."""

    def __init__(self, names: list[bytes]) -> None:
        self.files: set[str] = set()
        self.dirs: set[str] = set()
        for raw in names:
            name = os.fsdecode(raw)
            self.files.add(name)
            self.dirs.add(name)  # a submodule is an index entry and a directory on disk
            slash = name.rfind("/")
            while slash > 0:
                parent = name[:slash]
                if parent in self.dirs:
                    break
                self.dirs.add(parent)
                slash = name.rfind("/", 0, slash)


class Tracked:
    """Whether git tracks a path the walk's `.gitignore` patterns would leave out. One per
    discovery: a repository's listing is read at its first ignored entry and kept."""

    def __init__(self) -> None:
        # A walked directory -> its real path and its repository's top (None: no repository);
        # asked once per directory, however many of its entries are ignored.
        self._dirs: dict[str, tuple[str, str | None]] = {}
        self._listings: dict[str, _Listing | None] = {}  # top -> listing, or None: git failed
        self.notes: list[str] = []

    def covers(self, path: str, is_dir: bool) -> bool:
        """True when `path` (absolute, normalised) must be walked although a `.gitignore`
        pattern ignores it: git tracks it (a directory: a file below it), or git cannot say."""
        parent, name = os.path.split(path)
        known = self._dirs.get(parent)
        if known is None:
            # Git names what it tracks by its path in the work tree, and the walk may have come
            # in through a symlinked directory; the entry keeps its own name (git tracks a
            # symlink as a symlink).
            real = os.path.realpath(parent)
            top = repository_root(real)
            known = self._dirs[parent] = (real, top if top is not None and _is_repository(top) else None)
        directory, top = known
        if top is None:
            return False  # outside a repository nothing is tracked
        listing = self._listing(top)
        if listing is None:
            return True
        relative = os.path.relpath(os.path.join(directory, name), top)
        if os.sep != "/":
            relative = relative.replace(os.sep, "/")
        return relative in (listing.dirs if is_dir else listing.files)

    def _listing(self, top: str) -> _Listing | None:
        if top in self._listings:
            return self._listings[top]
        from policylint.input.git import GitError, tracked_names

        try:
            listing: _Listing | None = _Listing(tracked_names(top))
        except GitError as exc:
            listing = None
            self.notes.append(f"cannot ask git which files are tracked in {top} ({exc}): its .gitignore patterns are not applied")
        self._listings[top] = listing
        return listing


def _is_repository(top: str) -> bool:
    """Whether git takes `top/.git` for a repository: a file (a worktree's or a submodule's
    pointer) or a directory with a HEAD, as git's own discovery requires. An empty `.git`
    directory tracks nothing; asking git there would only fail."""
    dot_git = os.path.join(top, ".git")
    return os.path.isfile(dot_git) or os.path.isfile(os.path.join(dot_git, "HEAD"))
