"""The server's one interface to the engine: a whole analysis of the workspace with the texts an
editor holds in place of the files on disk.

Everything the server answers reads an `Analysis`: its findings for diagnostics and code actions,
its project (every stage built) for hover, definition and references. It is built by running the
pipeline `check` runs, with the configuration `check` would find in the workspace, so that the
editor and CI agree.

`analyse` reads the whole workspace (`check --watch`, tests). The server keeps a `Live`: the
first analysis is whole, each later one analyses only the part of the workspace the edited
files can reach (policylint.incremental.workspace) and keeps every other file's findings; the
stages a navigation request reads are built for the whole project only when such a request
comes (`build_for_navigation`), so that diagnostics never wait for them.
"""

from __future__ import annotations

import contextlib
import io
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from policylint.findings import Finding
from policylint.values import frozen, record

if TYPE_CHECKING:
    from policylint.incremental.workspace import Workspace
    from policylint.pipeline import LintRequest, LintResult
    from policylint.project import Project
    from policylint.server.layers import Layer, Layers

# The suffixes of a file an editor has open that discovery did not list (not saved yet): the ones
# a directory walk reads (policylint.input.sources).
MANIFEST_SUFFIXES = (".yaml", ".yml", ".json")


@frozen
class Problem:
    """Something that kept the workspace from being analysed as configured (the configuration
    file does not validate, a `crd:` path gives no CRD): shown on `file` at `line`."""

    file: str
    line: int
    message: str


@record
class Analysis:
    """One analysis of the workspace. `texts` holds what each file was analysed as (the open
    documents' texts, the others read from disk when first asked for)."""

    findings: list[Finding]
    suppressed: list[Finding]
    project: Project | None
    files: list[str]
    problems: list[Problem]
    overrides: dict[str, str]
    namespace: str = "default"
    # What navigation reads (policylint.server.layers): the last whole analysis and the parts
    # analysed since; None: `project` alone, its stages built when asked for.
    navigation: Layers | None = None

    def text(self, file: str) -> str | None:
        """The text `file` (a name as findings give it) was analysed as."""
        return _text(self.overrides, file)

    def layers(self) -> Layers | None:
        """What navigation reads, for an analysis with a project."""
        if self.navigation is None and self.project is not None:
            from policylint.server.layers import Layer, Layers

            self.navigation = Layers([Layer(self.project, self.text)])
        return self.navigation


def _text(overrides: Mapping[str, str], file: str) -> str | None:
    """The editor's text of `file`, else what the file holds."""
    if file in overrides:
        return overrides[file]
    from policylint.input.bounds import MAX_FILE_BYTES
    from policylint.input.named import NamedFileError, read_named

    try:
        return read_named(file, what="manifest", limit=MAX_FILE_BYTES).decode("utf-8", errors="replace")
    except (NamedFileError, OSError):
        return None


def analyse(root: str, overrides: Mapping[str, str], paths: Sequence[str] = ()) -> Analysis:
    """The workspace at `root` (the working directory: names are relative to it, as `check`
    prints them) analysed with `overrides` (a file name relative to `root` -> the text an editor
    holds) in place of the files on disk; `paths` instead of the configuration's `paths` when
    given (`check --watch PATHS`). Never raises for bad input: a configuration or usage
    error is a `Problem`, and the analysis then has no project."""
    from policylint.input.sources import SourceError
    from policylint.pipeline import LintRequest, lint
    from policylint.profiles.registry import ProfileError
    from policylint.rules.base import RuleOptionError
    from policylint.suppressions.baseline import BaselineError

    texts = dict(overrides)
    said = io.StringIO()
    with contextlib.redirect_stderr(said):  # the usage errors `check` would print
        request = _request(root)
    if isinstance(request, LintRequest) and paths:
        request = replace(request, paths=tuple(paths))
    if isinstance(request, Problem):
        return Analysis([], [], None, [], [request], texts)
    if request is None:
        return Analysis([], [], None, [], [Problem(_config_name(root), 1, said.getvalue().strip())], texts)

    try:
        result = lint(replace(request, sources=_sources(request, texts)))
    except (SourceError, ProfileError, RuleOptionError, BaselineError) as exc:
        return Analysis([], [], None, [], [Problem(_config_name(root), 1, str(exc))], texts, request.namespace)
    project = result.project
    problems = build_for_navigation(project)
    return Analysis(
        result.findings,
        result.suppressed,
        project if not problems else None,
        result.files,
        problems,
        texts,
        request.namespace,
    )


def build_for_navigation(project: Project) -> list[Problem]:
    """Build every stage of `project` (hover reads the effective policy, which no selected rule
    may have read), once, without the cyclic collector, as the pipeline builds them; what kept a
    stage from being built."""
    from policylint.server.layers import build_stages

    failures = build_stages(project)
    return [Problem(f.location.file, f.location.line, f.message) for f in failures if f.location is not None]


# More files changed at once than this (a branch switched, a formatter run over the tree): one
# whole analysis costs less than a part per file.
MAX_PARTS = 3


class Live:
    """The workspace at `root` (the working directory) analysed across edits: each `analyse`
    is told the texts the editor holds now and the files changed on disk since the last one, and
    analyses only what those changes reach (policylint.incremental.workspace). Anything it
    cannot follow (the configuration changed, too many files at once, changes on disk it was not
    told of) is a whole analysis, as `analyse` makes. Its analyses' projects hold every object
    read, with only the stages the rules of the last part read built: `build_for_navigation`
    builds the rest when a request needs them."""

    def __init__(self, root: str) -> None:
        self.root = root
        self._workspace: Workspace | None = None
        self._settings: object = None
        self._texts: dict[str, str] = {}
        self._layers: list[Layer] = []  # what navigation reads: policylint.server.layers
        # How many analyses were whole so far: each replaced most of what the server keeps
        # (policylint.server.collector).
        self.whole_analyses = 0

    def analyse(self, overrides: Mapping[str, str], changed_on_disk: Iterable[str] | None = ()) -> Analysis:
        """The workspace with `overrides` (a file name relative to `root` -> the editor's text);
        `changed_on_disk`: names of files whose content on disk changed since the last call,
        None when not known (then everything is analysed). Never raises for bad input."""
        from policylint.incremental.workspace import Workspace
        from policylint.input.sources import SourceError
        from policylint.profiles.registry import ProfileError
        from policylint.rules.base import RuleOptionError
        from policylint.suppressions.baseline import BaselineError

        texts = dict(overrides)
        found = self._request()
        if isinstance(found, Problem):
            self._workspace = None
            return Analysis([], [], None, [], [found], texts)
        request, settings = found
        workspace = self._workspace
        read = frozenset(workspace.result.files) if workspace is not None else frozenset()
        edited: set[str] = set()
        released: set[str] = set()
        for n in set(texts) | set(self._texts):
            if texts.get(n) == self._texts.get(n) or not (n.endswith(MANIFEST_SUFFIXES) or n in read):
                continue  # unchanged, or a file no run reads (a README open beside the manifests)
            if (n in texts) != (n in self._texts) and _as_on_disk(n, texts.get(n, self._texts.get(n))):
                # Opened, or closed: the one text is the file's, which stood for the other.
                if n in self._texts:
                    released.add(n)
                continue
            edited.add(n)
        changed = None if changed_on_disk is None else sorted(edited | set(changed_on_disk))
        try:
            if workspace is None or settings is None or settings != self._settings or changed is None or len(changed) > MAX_PARTS:
                workspace = Workspace(request, {os.path.abspath(n): t for n, t in texts.items()})
                result = workspace.result
                self._layers = []
                self.whole_analyses += 1
            else:
                for name in released:
                    workspace.release(name)
                result = workspace.result
                for name in changed:
                    result = workspace.update(name, texts.get(name)).result
                    self._layer(result, texts, workspace.last_edited if workspace.last_was_part else None)
                    if not workspace.last_was_part:
                        self.whole_analyses += 1
        except (SourceError, ProfileError, RuleOptionError, BaselineError) as exc:
            self._workspace = None
            return Analysis([], [], None, [], [Problem(_config_name(self.root), 1, str(exc))], texts, request.namespace)
        except BaseException:
            self._workspace = None  # left between two states: the next analysis starts again
            raise
        from policylint.server.layers import Layers

        self._workspace, self._settings, self._texts = workspace, settings, texts
        if not self._layers:
            self._layer(result, texts, None)
        return Analysis(
            result.findings,
            result.suppressed,
            result.project,
            result.files,
            [],
            texts,
            request.namespace,
            Layers(self._layers),
        )

    def _layer(self, result: LintResult, texts: Mapping[str, str], edited: str | None) -> None:
        """Put what an analysis read on the navigation stack: the part it analysed after an edit
        of `edited`, or (None, or the stack full) the whole workspace at the bottom of a new one."""
        from policylint.server.layers import MAX_LAYERS, Layer

        frozen = dict(texts)

        def text(file: str) -> str | None:
            return _text(frozen, file)

        if edited is None or result.analysed is None or result.members is None:
            self._layers = [Layer(result.project, text)]
            return
        members, files = result.members, frozenset({edited})
        layer = Layer(result.analysed, text, members, files)
        # A layer the new one covers (the same file edited again, the same part) answers for
        # nothing any more: dropped, so that typing in one file keeps one part's stages.
        kept = [old for old in self._layers if old.members is None or not (old.members <= members and old.edited <= files)]
        self._layers = [*kept, layer] if len(kept) <= MAX_LAYERS else [Layer(result.project, text)]

    def _request(self) -> tuple[LintRequest, object] | Problem:
        """The request `check` makes in the root, and what decides whether the last analysis's
        findings still hold for it (None: nothing reliable, then nothing is kept)."""
        from policylint.incremental import memo

        said = io.StringIO()
        with contextlib.redirect_stderr(said):
            request = _request(self.root)
        if isinstance(request, Problem):
            return request
        if request is None:
            return Problem(_config_name(self.root), 1, said.getvalue().strip())
        shaping = memo.settings(request)
        # The settings that shape the findings, the paths read and the cache: another value of
        # any of them and the analysis before says nothing of this one.
        key = None if shaping is None else (shaping, tuple(request.paths), request.cache_dir, repr(request.walk))
        return request, key


def _as_on_disk(name: str, text: str | None) -> bool:
    """Whether `text` is what the file `name` holds on disk: a document opened, or closed unedited
    (or saved, then closed), changes nothing the analysis read."""
    if text is None:
        return False
    try:
        with open(name, "rb") as fh:
            return fh.read() == text.encode("utf-8", "surrogatepass")
    except OSError:
        return False


def _config_name(root: str) -> str:
    from policylint.config import find_config

    found = find_config(root)
    return os.path.relpath(found, root) if found is not None else "."


def _request(root: str) -> LintRequest | Problem | None:
    """The request `check` makes in `root` with no flags: the configuration file found there
    (confined to its repository, as `check` reads a discovered one), or the defaults. None after
    a usage error printed on stderr."""
    from policylint.commands.check import cache_directory, parse_options
    from policylint.commands.cluster import parse_gateway_api
    from policylint.config import find_config
    from policylint.pipeline import LintRequest

    found = find_config(root)
    if found is None:
        return LintRequest(paths=(".",), cache_dir=cache_directory(True, None))
    from policylint.config.effective import CLUSTER_KEYS, build, run_settings
    from policylint.config.load import ConfigError, load

    path = os.path.relpath(found, root)
    try:
        effective = build(load(path, confine=True), {})
    except ConfigError as exc:
        first = exc.problems[0] if exc.problems else None
        return Problem(path, first.line if first is not None else 1, str(exc))
    values = effective.values
    settings = run_settings(effective)
    parsed = parse_options(values["select"], values["ignore"], values["fail-on"], values["external"], settings.overrides)
    declared = parse_gateway_api(
        values["channel"],
        values["gateway-api-version"],
        values["implementations"],
        {key: effective.sources[key] for key in CLUSTER_KEYS},
    )
    if parsed is None or declared is None:
        return None
    selection, _threshold, external, overrides = parsed
    return LintRequest(
        paths=tuple(values["paths"]) or (".",),
        namespace=values["namespace"],
        crd_paths=tuple(values["crd"]),
        profile_paths=tuple(values["profile"]),
        declared=declared,
        selection=selection,
        synthetic_rule_names=values["synthetic-rule-names"],
        external=external,
        cache_dir=cache_directory(values["cache"], values["cache-dir"]),
        follow_outside_links=values["follow-outside-links"],
        complete=values["complete"],
        baseline=values["baseline"],
        require_suppression_reason=values["require-suppression-reason"],
        walk=settings.walk,
        helm_templates=values["helm-templates"],
        overrides=overrides if overrides else None,
        rule_options=settings.rule_options,
    )


def _sources(request: LintRequest, texts: Mapping[str, str]) -> list[Source]:
    """The files `check` would read, each open one as the editor holds it; an open manifest
    not on disk yet (or not found by the walk because it is new) is added."""
    from policylint.input.sources import Source, discover_all

    found = discover_all(
        list(request.paths),
        follow_outside_links=request.follow_outside_links,
        walk=request.walk,
        helm_templates=request.helm_templates,
    )
    sources: list[Source] = []
    seen: set[str] = set()
    for source in found.sources:
        name = _name(source.fs_path) if source.fs_path is not None else source.display
        seen.add(name)
        if name in texts and source.problem is None:
            # `snapshot`: content standing for a file, cacheable by its bytes like any file.
            sources.append(replace(source, content=texts[name].encode("utf-8"), snapshot=True))
        else:
            sources.append(source)
    for name in sorted(set(texts) - seen):
        if name.endswith(MANIFEST_SUFFIXES) and not name.startswith("../") and _within(request.paths, name):
            sources.append(Source(display=name, content=texts[name].encode("utf-8"), snapshot=True))
    return sources


def _name(path: str) -> str:
    return os.path.relpath(os.path.abspath(path)).replace(os.sep, "/")


def _within(paths: Sequence[str], name: str) -> bool:
    for path in paths:
        base = _name(path)
        if base == "." or name == base or name.startswith(base.rstrip("/") + "/"):
            return True
    return False


if TYPE_CHECKING:
    from policylint.input.sources import Source
