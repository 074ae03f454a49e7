"""Which files a directory walk leaves out: `exclude` patterns and `.gitignore` files.

Both use gitignore syntax (https://git-scm.com/docs/gitignore), matched with the `pathspec`
library rather than by hand: negation (`!keep.yaml`), anchoring (`/top.yaml` versus `top.yaml`
at any depth), directory-only patterns (`build/`), `**` and the rule that a file inside an
excluded directory cannot be re-included are each easy to get subtly wrong, and `pathspec`'s
`GitIgnoreSpec` follows git's own behaviour for them.

A `.gitignore` file applies to the paths below its directory; a deeper one wins over a
shallower one, and within one file the last matching pattern wins, as in git. The files that
count are the ones in the walked directories and in their parents up to the repository root
(the nearest directory holding `.git`), plus that repository's `.git/info/exclude`. Outside a
repository the parents count up to `stop` (the configuration file's directory) only: a
`.gitignore` in a home directory must not decide what a copied tree contains. A global
excludes file (`core.excludesFile`) is not read: what CI sees must not depend on one user's
settings.

`pathspec` is imported only when there is a pattern to match: a walk over a tree without a
`.gitignore` file and without `exclude` costs one `stat` per parent directory.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from policylint.values import frozen

if TYPE_CHECKING:
    from pathspec import GitIgnoreSpec

GITIGNORE = ".gitignore"
# Left out of directory walks unless configuration replaces `exclude`: directories that hold
# other projects' files, never this repository's manifests (hidden directories are always left
# out, policylint.input.sources). Matched by name, without pathspec, while they are the only
# patterns.
DEFAULT_EXCLUDE = ("node_modules/", "__pycache__/", "venv/")
_DEFAULT_NAMES = frozenset(p.rstrip("/") for p in DEFAULT_EXCLUDE)
# Bytes of one `.gitignore` file; a larger one is not applied (its patterns are lost, which can
# only lint more, never less).
_MAX_IGNORE_BYTES = 1024 * 1024


class PatternError(ValueError):
    """An `exclude` pattern that is not valid gitignore syntax (a usage error)."""


def compile_patterns(patterns: Sequence[str]) -> GitIgnoreSpec:
    """`patterns` as one gitignore matcher, or PatternError naming the first bad one."""
    from pathspec import GitIgnoreSpec

    for pattern in patterns:
        try:
            GitIgnoreSpec.from_lines([pattern])
        except Exception as exc:  # pathspec raises several types for a bad pattern
            raise PatternError(f"invalid pattern {pattern!r}: {exc}") from None
    return GitIgnoreSpec.from_lines(list(patterns))


@frozen
class Matcher:
    """A gitignore matcher and the directory its patterns are relative to."""

    base: str  # normalised, absolute
    spec: GitIgnoreSpec

    def decide(self, path: str, is_dir: bool) -> bool | None:
        """True: ignored; False: re-included by a `!` pattern; None: no pattern matches.
        `path` is absolute and normalised (string operations only: this runs for every file)."""
        prefix = self.base if self.base.endswith(os.sep) else self.base + os.sep
        if not path.startswith(prefix):
            return None
        rel = path[len(prefix) :]
        if os.sep != "/":
            rel = rel.replace(os.sep, "/")
        if is_dir:
            rel += "/"
        return self.spec.check_file(rel).include


@frozen
class NameMatcher:
    """Directories left out by name at any depth: the default `exclude` without pathspec."""

    names: frozenset[str]

    def decide(self, path: str, is_dir: bool) -> bool | None:
        return True if is_dir and os.path.basename(path) in self.names else None


def read_gitignore(path: str) -> Matcher | None:
    """The matcher of one `.gitignore` (or `info/exclude`) file, None when it has no pattern or
    cannot be read (an unreadable ignore file must not stop the lint: it only lints more).

    The repository under review writes these files, so they are read as every file it names is
    (policylint.input.named): a regular file only, opened without blocking (a FIFO named
    `.gitignore` once hung the run), at most `_MAX_IGNORE_BYTES`. A symbolic link is not read,
    as git itself does not follow one in the work tree (git 2.32 and later)."""
    from policylint.input.named import NamedFileError, read_named

    if os.path.islink(path):
        return None
    try:
        data = read_named(path, what="ignore file", limit=_MAX_IGNORE_BYTES)
    except NamedFileError:
        return None
    lines = data.decode("utf-8", errors="replace").splitlines()
    if not any(line.strip() and not line.startswith("#") for line in lines):
        return None
    from pathspec import GitIgnoreSpec

    try:
        spec = GitIgnoreSpec.from_lines(lines)
    except Exception:
        # git itself skips a pattern it cannot read; one bad line must not drop the others.
        good = []
        for line in lines:
            try:
                GitIgnoreSpec.from_lines([line])
            except Exception:
                continue
            good.append(line)
        spec = GitIgnoreSpec.from_lines(good)
    base = os.path.dirname(os.path.abspath(path))
    if os.path.basename(base) == "info" and os.path.basename(os.path.dirname(base)) == ".git":
        base = os.path.dirname(os.path.dirname(base))  # .git/info/exclude is relative to the work tree
    return Matcher(base, spec)


def repository_root(start: str) -> str | None:
    """The nearest directory at or above `start` that holds `.git` (a directory, or the file a
    worktree or submodule has), or None."""
    directory = os.path.abspath(start)
    while True:
        if os.path.exists(os.path.join(directory, ".git")):
            return directory
        parent = os.path.dirname(directory)
        if parent == directory:
            return None
        directory = parent


@frozen
class WalkFilter:
    """What a directory walk leaves out (policylint.input.sources).

    `exclude` patterns are relative to `base` (the configuration file's directory, else the
    working directory); `respect_gitignore` reads `.gitignore` files as described above, with
    `stop` (the configuration file's directory) bounding the parents read outside a repository.
    """

    exclude: tuple[str, ...] = DEFAULT_EXCLUDE
    base: str = "."
    respect_gitignore: bool = True
    stop: str | None = None

    def exclude_matcher(self) -> Matcher | NameMatcher | None:
        if not self.exclude:
            return None
        if tuple(self.exclude) == DEFAULT_EXCLUDE:
            return NameMatcher(_DEFAULT_NAMES)
        return Matcher(os.path.abspath(self.base), compile_patterns(self.exclude))

    def parent_matchers(self, root: str) -> list[Matcher]:
        """The ignore files that apply to the walk of `root` from above it, shallowest first."""
        if not self.respect_gitignore:
            return []
        root = os.path.abspath(root)
        top = repository_root(root)
        if top is None and self.stop is not None:
            stop = os.path.abspath(self.stop)
            if root == stop or root.startswith(stop.rstrip(os.sep) + os.sep):
                top = stop
        if top is None:
            return []
        directories = []
        directory = os.path.dirname(root)
        while directory.startswith(top) and len(directory) >= len(top):
            directories.append(directory)
            parent = os.path.dirname(directory)
            if parent == directory:
                break
            directory = parent
        matchers = []
        exclude_file = os.path.join(top, ".git", "info", "exclude")
        if os.path.isfile(exclude_file):
            found = read_gitignore(exclude_file)
            if found is not None:
                matchers.append(found)
        for directory in reversed(directories):
            candidate = os.path.join(directory, GITIGNORE)
            if os.path.isfile(candidate):
                found = read_gitignore(candidate)
                if found is not None:
                    matchers.append(found)
        return matchers


def ignored(
    path: str,
    is_dir: bool,
    exclude: Matcher | NameMatcher | None,
    gitignores: Sequence[Matcher],
    tracked: Callable[[str, bool], bool] | None = None,
) -> bool:
    """Whether the walk leaves `path` (absolute, normalised) out: an `exclude` pattern matches it,
    or the deepest `.gitignore` with a matching pattern ignores it (`gitignores` shallowest first)
    and `tracked` (policylint.input.tracked) does not say git tracks it: as in git, ignore files
    apply to untracked files only."""
    if exclude is not None and exclude.decide(path, is_dir):
        return True
    for matcher in reversed(gitignores):
        decision = matcher.decide(path, is_dir)
        if decision is not None:
            return decision and not (tracked is not None and tracked(path, is_dir))
    return False
