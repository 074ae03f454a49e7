"""Finding the input files: paths, directories (recursively) and stdin.

Only regular files are ever read. A linted tree is whatever a repository
holds, and git stores symlinks: a link named `*.yaml` may point to a FIFO, a
device (`/dev/zero`, `/dev/stdin`), our own standard output
(`/proc/self/fd/1`), or out of the repository (`/`, `/usr`, a home
directory). Reading any of those hangs, floods or leaks, so each is an entry
with a `problem` instead (rule PL008 unreadable-file, at line 1, column 1),
and so is a directory that cannot be listed: a gate that skipped it silently
would pass files it never saw.

The roots are the paths named on the command line. A symlink found while
walking is followed only when its real path is inside a root's real path
(`--follow-outside-links` lifts that), and only to a directory or a regular
file, never to anything else, whatever the option. Directories are entered
once each (st_dev, st_ino), so loops end. `policylint.input.load.read_bytes` checks
again on the open descriptor (fstat), since the tree may change in between.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Sequence
from dataclasses import field, replace

from policylint.input import nonmanifest
from policylint.input.ignore import GITIGNORE, Matcher, NameMatcher, WalkFilter, ignored, read_gitignore
from policylint.input.named import describe_mode
from policylint.input.tracked import Tracked
from policylint.values import frozen, record

MANIFEST_SUFFIXES = (".yaml", ".yml", ".json")
STDIN = "-"

OUTSIDE_LINK = "symlink points outside the linted paths"
OUTSIDE_LINK_HINT = "not followed (--follow-outside-links to allow)"
# A link target is shown in messages up to this many characters (it is the link's own text,
# chosen by whoever committed it).
_MAX_TARGET = 200


class SourceError(Exception):
    """A path given on the command line matches nothing (exit code 2)."""


@frozen
class Source:
    """One input entry.

    `content` is set only for stdin, which cannot be read twice, and a file's staged version.
    `blob`: the object id of a file's staged version not read yet (`--staged`,
    policylint.input.staged): its bytes are that blob's, read when asked for
    (policylint.input.reader `read_bytes`), so that a run answered from what earlier runs kept
    reads none of the files it did not change. `problem` says why the entry
    must not be read (a FIFO, a device, a link out of the roots, a directory that cannot be
    listed): it is reported as PL008 and never opened. `identity` is the (st_dev, st_ino) a
    symlink resolved to when it was found: the file opened later must be that one, so that a link
    changed in between cannot lead out of the roots. `nofollow`: the entry was not a symlink when
    found, so it is opened without following one (O_NOFOLLOW).
    """

    display: str
    fs_path: str | None = None
    content: bytes | None = None
    # `content` is a file's staged version (git index), not standard input: cacheable.
    snapshot: bool = False
    problem: str | None = None
    identity: tuple[int, int] | None = None
    nofollow: bool = False
    blob: str | None = None


def display_name(path: str) -> str:
    """The name shown for `path`: valid text whatever the file system gave.

    POSIX file names are bytes; Python decodes the ones that are not UTF-8 with lone surrogates
    (PEP 383, surrogateescape), which no UTF-8 output can hold. Each undecodable byte is shown as
    `\\xNN` instead, the way Python's `backslashreplace` shows bytes; the real path (kept in
    `Source.fs_path`) still opens the file.
    """
    if os.sep != "/":
        path = path.replace(os.sep, "/")
    if not _has_surrogates(path):
        return path
    raw = os.fsencode(path)
    return raw.decode("utf-8", errors="backslashreplace")


def _has_surrogates(text: str) -> bool:
    # Most paths are ASCII, which `isascii` tells in C; only the others are looked through.
    return not text.isascii() and any("\ud800" <= ch <= "\udfff" for ch in text)


def _is_hidden(name: str) -> bool:
    return name.startswith(".") and name not in (".", "..")


def _is_manifest_name(name: str) -> bool:
    return name.lower().endswith(MANIFEST_SUFFIXES)


def _link_text(path: str) -> str:
    """The target a symlink names, as shown in messages (its own text, not resolved)."""
    try:
        target = os.readlink(path)
    except OSError:
        return "?"
    shown = display_name(target)
    return shown if len(shown) <= _MAX_TARGET else shown[: _MAX_TARGET - 1] + "…"


def _not_regular(mode: int, link: str | None = None) -> str:
    if link is None:
        return f"not a regular file: {describe_mode(mode)}; not read"
    return f"not a regular file: a symlink to {describe_mode(mode)} ({link}); not followed"


def _outside(what: str, link: str) -> str:
    return f"{OUTSIDE_LINK}: {link} ({what}); {OUTSIDE_LINK_HINT}"


class _Roots:
    """The real paths of the named paths, to tell whether a link leads out of them."""

    def __init__(self, paths: Sequence[str], follow_outside_links: bool) -> None:
        self.follow_outside_links = follow_outside_links
        self._paths = paths
        self._prefixes: list[tuple[str, str]] | None = None

    def allow(self, real_path: str) -> bool:
        if self.follow_outside_links:
            return True
        if self._prefixes is None:
            # Computed at the first link: most trees have none, and `policylint $(git ls-files)`
            # names thousands of paths, each a realpath() of a few system calls.
            self._prefixes = []
            for path in self._paths:
                real = os.path.normcase(os.path.realpath(path))
                self._prefixes.append((real, real if real.endswith(os.sep) else real + os.sep))
        real = os.path.normcase(real_path)
        return any(real == root or real.startswith(prefix) for root, prefix in self._prefixes)


@frozen
class Skipped:
    """A file (or a Helm chart's `templates/` directory) that is not a manifest and was not read
    (policylint.input.nonmanifest): `category` is KUSTOMIZE, KUSTOMIZE_PATCH, HELM or TOOL."""

    display: str
    category: str


@record(slots=True)
class Discovery:
    """The sources to read, and what was recognised as not a manifest and skipped."""

    sources: list[Source]
    skipped: list[Skipped] = field(default_factory=list)
    # Warnings for the user, e.g. git could not say which ignored files are tracked.
    notes: list[str] = field(default_factory=list)
    # Each source read from a path, by its display name: the absolute, normalised path it was
    # found under (`os.path.abspath` of its `fs_path`), which discovery works out to tell files
    # apart. A `--staged` run places every file in the index by it (policylint.request), where
    # asking `abspath` again cost a call per file. Not part of what was found: not compared.
    absolute: dict[str, str] = field(default_factory=dict, compare=False)


@frozen
class _Dir:
    """A directory to list, with the `.gitignore` matchers that apply in it (shallowest first)."""

    path: str
    gitignores: tuple[Matcher, ...]


def _walk(
    root: str,
    roots: _Roots,
    walk: WalkFilter,
    exclude: Matcher | NameMatcher | None,
    skipped: list[Skipped],
    helm_templates: bool,
    tracked: Callable[[str, bool], bool] | None = None,
) -> list[Source]:
    """Sources below the directory `root`, in no particular order.

    Hidden directories (.git, .venv, ...) and hidden files are skipped, like ansible-lint and
    yamllint do. Regular files with a manifest suffix are sources; so are, with a problem, special
    files with such a suffix, symlinks with such a suffix that lead nowhere, to a special file or
    out of the roots, symlinks to directories out of the roots, and directories that cannot be
    listed. A directory reached a second time through a symlink (a loop, or two links to one
    place) is not entered again.

    Entries matched by `exclude` or by a `.gitignore` (policylint.input.ignore) are left out
    unseen, except what `tracked` says git tracks (policylint.input.tracked): a `.gitignore`
    pattern does not apply to it; files that are not manifests (policylint.input.nonmanifest) go
    to `skipped`.
    """
    return _Walker(roots, walk, exclude, skipped, helm_templates, tracked).run(root)


class _Here:
    """What holds in one directory being listed: the `.gitignore` matchers that apply in it,
    whether anything filters its entries (and its absolute path to match them against), whether
    it is a chart's own directory, and the subdirectories to enter."""

    __slots__ = ("absolute", "filtering", "gitignores", "in_chart", "named", "subdirs")

    def __init__(self, gitignores: tuple[Matcher, ...], filtering: bool, absolute: str, in_chart: bool, named: str) -> None:
        self.gitignores = gitignores
        self.filtering = filtering
        self.absolute = absolute
        self.in_chart = in_chart
        # The directory's normalised path, as the start of its entries' (`_below`).
        self.named = named
        self.subdirs: list[str] = []


def _below(directory: str, name: str) -> str:
    """`os.path.normpath(os.path.join(directory, name))` for a normalised `directory` and the name
    of one of its entries (no separator, neither `.` nor `..`): the walk names every file it finds
    so, and normpath's own parse of the whole path was a third of a repository walk's time."""
    if directory == os.curdir:
        return name
    return directory + name if directory.endswith(os.sep) else directory + os.sep + name


class _Walker:
    """`_walk`: a stack of directories to list, those listed (by device and inode, so that none
    is entered twice), and the sources found."""

    def __init__(
        self,
        roots: _Roots,
        walk: WalkFilter,
        exclude: Matcher | NameMatcher | None,
        skipped: list[Skipped],
        helm_templates: bool,
        tracked: Callable[[str, bool], bool] | None,
    ) -> None:
        self.roots = roots
        self.walk = walk
        self.exclude = exclude
        self.skipped = skipped
        self.helm_templates = helm_templates
        self.tracked = tracked
        self.seen: set[tuple[int, int]] = set()
        self.out: list[Source] = []

    def problem(self, path: str, message: str) -> None:
        name = display_name(os.path.normpath(path))
        self.out.append(Source(display=name, fs_path=path, problem=message))

    def run(self, root: str) -> list[Source]:
        stack = [_Dir(root, tuple(self.walk.parent_matchers(root)))]
        while stack:
            current = stack.pop()
            entries = self._listing(current.path)
            if entries is None:
                continue
            here = self._here(current, entries)
            for entry in entries:
                self._entry(entry, here)
            stack.extend(_Dir(path, here.gitignores) for path in reversed(here.subdirs))
        return self.out

    def _listing(self, directory: str) -> list[os.DirEntry[str]] | None:
        """The entries of a directory not listed before, by name; None: nothing to list."""
        try:
            st = os.stat(directory)
        except FileNotFoundError:
            return None  # removed while we walk: no longer part of the input
        except OSError as exc:
            self.problem(directory, f"cannot read directory: {exc.strerror or type(exc).__name__}; its files are not linted")
            return None
        ident = (st.st_dev, st.st_ino)
        if ident in self.seen:
            return None
        self.seen.add(ident)
        try:
            with os.scandir(directory) as listing:
                return sorted(listing, key=lambda e: e.name)
        except FileNotFoundError:
            return None
        except OSError as exc:
            # A gate that skipped what it cannot list would pass files it never saw.
            self.problem(directory, f"cannot read directory: {exc.strerror or type(exc).__name__}; its files are not linted")
            return None

    def _here(self, current: _Dir, entries: list[os.DirEntry[str]]) -> _Here:
        directory = current.path
        gitignores = current.gitignores
        names = {entry.name for entry in entries}
        if self.walk.respect_gitignore and GITIGNORE in names:
            local = read_gitignore(os.path.join(directory, GITIGNORE))
            if local is not None:
                gitignores = (*gitignores, local)
        filtering = self.exclude is not None or bool(gitignores)
        absolute = os.path.abspath(directory) if filtering else ""
        # A chart's own directory: its Chart.yaml and values files are not manifests.
        return _Here(gitignores, filtering, absolute, nonmanifest.CHART_FILE in names, os.path.normpath(directory))

    def _ignored(self, here: _Here, name: str, is_dir: bool) -> bool:
        return here.filtering and ignored(_below(here.absolute, name), is_dir, self.exclude, here.gitignores, self.tracked)

    def _entry(self, entry: os.DirEntry[str], here: _Here) -> None:
        """One entry of a listed directory: a directory to enter, a source, a file that is not a
        manifest, a problem, or nothing."""
        name = entry.name
        if _is_hidden(name):
            return
        manifest = _is_manifest_name(name)
        try:
            # d_type from the directory listing: no system call on most file systems.
            is_link = entry.is_symlink()
            if not is_link and entry.is_dir(follow_symlinks=False):
                self._subdirectory(entry, here)
                return
            if not is_link and entry.is_file(follow_symlinks=False):
                if (manifest or name in nonmanifest.KUSTOMIZE_FILES) and not self._ignored(here, name, False):
                    self._file(entry, here, manifest)
                return
            if not is_link:
                if manifest:  # a FIFO, socket or device named like a manifest
                    self.problem(entry.path, _not_regular(entry.stat(follow_symlinks=False).st_mode))
                return
        except OSError as exc:
            if manifest:
                self.problem(entry.path, f"cannot read file: {exc.strerror or type(exc).__name__}")
            return
        if self._ignored(here, name, False):
            return  # git matches a symlink by its own name, whatever it points to
        _link(entry.path, manifest, self.roots, here.subdirs, self.out, self.problem)

    def _subdirectory(self, entry: os.DirEntry[str], here: _Here) -> None:
        if self._ignored(here, entry.name, True):
            return
        if here.in_chart and entry.name == nonmanifest.CHART_TEMPLATES and not self.helm_templates:
            self.skipped.append(Skipped(display_name(os.path.normpath(entry.path)) + "/", nonmanifest.HELM))
            return
        here.subdirs.append(entry.path)

    def _file(self, entry: os.DirEntry[str], here: _Here, manifest: bool) -> None:
        category = nonmanifest.classify_name(entry.name, in_chart=here.in_chart)
        if category is not None:
            self.skipped.append(Skipped(display_name(os.path.normpath(entry.path)), category))
        elif manifest:
            self.out.append(Source(display=display_name(_below(here.named, entry.name)), fs_path=entry.path, nofollow=True))


def _link(
    path: str,
    manifest: bool,
    roots: _Roots,
    subdirs: list[str],
    out: list[Source],
    problem: Callable[[str, str], None],
) -> None:
    """A symlink found while walking: a directory to enter, a file to read, or a problem."""
    try:
        target = os.stat(path)
    except OSError as exc:
        # Dangling, a loop, or a target we may not look at: only a manifest name is worth a finding.
        if manifest:
            problem(path, f"cannot read file: {exc.strerror or type(exc).__name__}")
        return
    mode = target.st_mode
    if stat.S_ISDIR(mode):
        if roots.allow(os.path.realpath(path)):
            subdirs.append(path)
        else:
            problem(path, _outside("a directory", _link_text(path)))
        return
    if not manifest:
        return
    if not stat.S_ISREG(mode):
        # Never followed, even with --follow-outside-links: opening a FIFO or /dev/stdin blocks,
        # /dev/zero never ends, and /proc/self/fd/1 is our own output.
        problem(path, _not_regular(mode, _link_text(path)))
    elif not roots.allow(os.path.realpath(path)):
        problem(path, _outside("a file", _link_text(path)))
    else:
        out.append(Source(display=display_name(os.path.normpath(path)), fs_path=path, identity=(target.st_dev, target.st_ino)))


def _stand_in(sources: dict[str, Source], stdin_filename: str) -> None:
    """Standard input named after a file that the paths also find stands for that file: the
    stream is what the file would hold (`kubectl kustomize ... | policylint - --stdin-filename
    overlays/prod/all.yaml --context overlays/`), so the file on disk is not read, and the
    stream's findings are reported under the file's own name, not as `NAME (2)` beside it."""
    wanted = os.path.abspath(os.path.normpath(stdin_filename))
    for key, source in sources.items():
        if key != STDIN and source.fs_path is not None and os.path.abspath(key) == wanted:
            del sources[key]
            sources[STDIN] = replace(sources[STDIN], display=display_name(source.fs_path))
            return


def discover(
    paths: Sequence[str],
    *,
    stdin_filename: str | None = None,
    read_stdin: Callable[[], bytes] | None = None,
    follow_outside_links: bool = False,
    walk: WalkFilter | None = None,
    helm_templates: bool = False,
) -> list[Source]:
    """Expand command-line paths into a sorted, de-duplicated list of sources (`discover_all`
    without what was skipped)."""
    return discover_all(
        paths,
        stdin_filename=stdin_filename,
        read_stdin=read_stdin,
        follow_outside_links=follow_outside_links,
        walk=walk,
        helm_templates=helm_templates,
    ).sources


class _Sources:
    """The sources found so far, by path, each under a display name of its own."""

    def __init__(self) -> None:
        self.sources: dict[str, Source] = {}
        self.displays: dict[str, str] = {}  # display name -> the path that has it
        # `os.path.abspath` asks the working directory of every relative path: asked once here.
        self._cwd = os.getcwd()

    def add(self, source: Source) -> None:
        # `policylint .` and `policylint a.yaml` must name (and de-duplicate) a file alike: the
        # key is the normalised path, never the display name, which two different byte names
        # can share (`x\xff.yaml` spelled out, and one with the raw byte 0xff). Absolute, so that
        # `team-x/a.yaml` and `../apps/team-x/a.yaml` (a context of `..` from a subdirectory) are
        # one file, named as the first root that reaches it names it.
        path = source.fs_path
        key = (
            os.path.normpath(path if os.path.isabs(path) else os.path.join(self._cwd, path))
            if path is not None
            else source.display
        )
        if key in self.sources:
            return
        owner = self.displays.setdefault(source.display, key)
        if owner != key:
            n = 2
            while f"{source.display} ({n})" in self.displays:
                n += 1
            source = replace(source, display=f"{source.display} ({n})")
            self.displays[source.display] = key
        self.sources[key] = source


def _stat_root(raw: str, path: str, name: str) -> os.stat_result | Source:
    """What a path named on the command line is; a symlink named explicitly that leads nowhere
    (or loops) is an unreadable source (PL008), anything else that cannot be read a usage error."""
    try:
        return os.stat(path)
    except FileNotFoundError:
        if os.path.islink(path):
            # A dangling symlink named explicitly: report it as unreadable, not as usage error.
            return Source(display=name, fs_path=path, problem="cannot read file: No such file or directory")
        raise SourceError(f"path does not exist: {raw}") from None
    except OSError as exc:
        if os.path.islink(path):  # a symlink loop named explicitly
            return Source(display=name, fs_path=path, problem=f"cannot read file: {exc.strerror or type(exc).__name__}")
        raise SourceError(f"cannot access {raw}: {exc.strerror}") from None


def _skip_patches(sources: dict[str, Source], skipped: list[Skipped], named: Sequence[str]) -> None:
    """Take out of `sources` the files a kustomization names as patches
    (policylint.input.kustomize_patches), and say them skipped."""
    from policylint.input import kustomize_patches

    kustomizations = {os.path.abspath(s.display) for s in skipped if s.category == nonmanifest.KUSTOMIZE}
    kustomizations |= kustomize_patches.kustomizations_near(named)
    if not kustomizations:
        return
    patches = kustomize_patches.patch_files(kustomizations)
    for key in [k for k, source in sources.items() if source.fs_path is not None and k in patches]:
        skipped.append(Skipped(sources.pop(key).display, nonmanifest.KUSTOMIZE_PATCH))


def discover_all(
    paths: Sequence[str],
    *,
    stdin_filename: str | None = None,
    read_stdin: Callable[[], bytes] | None = None,
    follow_outside_links: bool = False,
    walk: WalkFilter | None = None,
    helm_templates: bool = False,
) -> Discovery:
    """Expand command-line paths into a sorted, de-duplicated list of sources.

    A path named explicitly is a root: it is read (or walked) even when it is a symlink, but
    only to a regular file or a directory; a FIFO, a socket or a device named explicitly is a
    PL008 entry too (standard input is `-`).

    `walk` (default: `.gitignore` files respected, nothing else excluded) applies to what is
    found inside directories only: a file named explicitly is always read, as with ruff and
    git, unless it is recognised as not a manifest (policylint.input.nonmanifest), which
    `pre-commit` passes along with every other `*.yaml` file.
    """
    walk = walk if walk is not None else WalkFilter()
    exclude = walk.exclude_matcher()
    tracked = Tracked() if walk.respect_gitignore else None
    skipped: list[Skipped] = []
    roots = _Roots([p for p in paths if p != STDIN], follow_outside_links)
    notes: list[str] = []
    found_sources = _Sources()
    sources, add = found_sources.sources, found_sources.add
    named: list[str] = []  # the files named on the command line
    # Each directory walked, by its normalised path, and whether its walk skipped files.
    walked: dict[str, tuple[list[Source], bool]] = {}

    for raw in paths:
        if raw == STDIN:
            data = read_stdin() if read_stdin else b""
            name = stdin_filename or "<stdin>"
            sources[STDIN] = Source(display=name, content=data)
            found_sources.displays.setdefault(name, STDIN)
            continue
        path = os.path.normpath(raw)
        name = display_name(path)
        st = _stat_root(raw, path, name)
        if isinstance(st, Source):
            add(st)
            continue
        if stat.S_ISDIR(st.st_mode):
            before = len(skipped)
            # A directory named twice (a change's gate names the repository as PATH and as
            # context, `.` both) is walked once: a second walk finds the same entries, which
            # `add` and the skipped files' de-duplication would drop.
            again = walked.get(path)
            if again is None:
                found = _walk(path, roots, walk, exclude, skipped, helm_templates, tracked.covers if tracked else None)
                walked[path] = (found, len(skipped) > before)
            else:
                found, skips = again
                before -= skips  # as the walk again adds its skipped files (de-duplicated below)
            if not found and len(skipped) == before:
                # As ruff's "No Python files found": a directory with nothing to lint is said, not
                # a usage error, so a repository without manifests yet passes
                # (README "Exit codes"). A path that does not exist still is one: the typo a CI
                # gate must catch.
                notes.append(f"no manifests found under {display_name(path)} (no *.yaml, *.yml or *.json files)")
            if again is None:
                # Added once: the first naming added every source of the walk, each under the key
                # of its path, where `add` would find each again and drop it.
                for source in found:
                    add(source)
        elif stat.S_ISREG(st.st_mode):
            category = nonmanifest.classify_path(path, helm_templates=helm_templates)
            if category is not None:
                skipped.append(Skipped(name, category))
                continue
            named.append(path)
            add(Source(display=name, fs_path=path, identity=(st.st_dev, st.st_ino)))
        else:
            # `/dev/stdin`, a FIFO, or bash's `<(kustomize build ...)` (a pipe under /dev/fd):
            # opening one blocks until a writer comes, so standard input has its own spelling.
            link = _link_text(path) if os.path.islink(path) else None
            message = _not_regular(st.st_mode, link)
            if stat.S_ISFIFO(st.st_mode) or stat.S_ISCHR(st.st_mode):
                message += " (to read standard input, name it `-`)"
            add(Source(display=name, fs_path=path, problem=message))
    if STDIN in sources and stdin_filename:
        _stand_in(sources, stdin_filename)
    _skip_patches(sources, skipped, named)
    unique = {(s.display, s.category): s for s in skipped}
    return Discovery(
        sorted(sources.values(), key=lambda source: source.display),
        sorted(unique.values(), key=lambda s: s.display),
        [*(tracked.notes if tracked is not None else []), *notes],
        {source.display: key for key, source in sources.items() if source.fs_path is not None},
    )
