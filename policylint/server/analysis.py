"""The server's one interface to the engine: a whole analysis of the workspace with the texts an
editor holds in place of the files on disk.

Everything the server answers reads an `Analysis`: its findings for diagnostics and code actions,
its project (every stage built) for hover, definition and references. It is built by running the
pipeline `check` runs, with the configuration `check` would find in the workspace, so that the
editor and CI agree. Today each analysis reads the whole workspace again (the parse cache makes
the unchanged files cheap); an incremental engine replaces `analyse` alone.
"""

from __future__ import annotations

import contextlib
import gc
import io
import os
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from policylint.findings import Finding
from policylint.values import frozen, record

if TYPE_CHECKING:
    from policylint.pipeline import LintRequest
    from policylint.project import Project

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

    def text(self, file: str) -> str | None:
        """The text `file` (a name as findings give it) was analysed as."""
        if file in self.overrides:
            return self.overrides[file]
        from policylint.input.load import MAX_FILE_BYTES
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
    from policylint.pipeline import LintRequest, build_stages, lint
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
    from policylint.stages import Stage

    try:
        result = lint(replace(request, sources=_sources(request, texts)))
    except (SourceError, ProfileError, RuleOptionError, BaselineError) as exc:
        return Analysis([], [], None, [], [Problem(_config_name(root), 1, str(exc))], texts, request.namespace)
    project = result.project
    # Hover reads the effective policy: the stages no selected rule read are built now, once,
    # without the cyclic collector, as the pipeline builds them.
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        failures = build_stages(project, (Stage.SIMULATION,))
    finally:
        if was_enabled:
            gc.enable()
    problems = [Problem(f.location.file, f.location.line, f.message) for f in failures if f.location is not None]
    return Analysis(
        result.findings,
        result.suppressed,
        project if not failures else None,
        result.files,
        problems,
        texts,
        request.namespace,
    )


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
