"""`policylint explain` and `graph`: load the project with every stage built, then query it."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, TypedDict

import click

from policylint.commands import EXIT_OK, EXIT_USAGE, error

if TYPE_CHECKING:
    from typing_extensions import Unpack

    from policylint.input.ignore import WalkFilter
    from policylint.project import Project


class QueryLoad(TypedDict, total=False):
    """The loading options `explain` and `graph` share with `check` (`_query_options`)."""

    crd_paths: Sequence[str]
    profile_paths: Sequence[str]
    namespace: str
    synthetic_rule_names: bool
    external: Sequence[str]
    follow_outside_links: bool
    walk: WalkFilter | None  # from the configuration file (policylint.config)


def load_project_for_query(
    paths: Sequence[str],
    *,
    crd_paths: Sequence[str] = (),
    profile_paths: Sequence[str] = (),
    namespace: str = "default",
    synthetic_rule_names: bool = False,
    external: Sequence[str] = (),
    follow_outside_links: bool = False,
    walk: WalkFilter | None = None,
) -> Project | int:
    """The project `explain` and `graph` query (no rules run), or EXIT_USAGE after saying why."""
    from policylint.input.sources import SourceError
    from policylint.k8s.external import ExternalObjects, ExternalPatternError
    from policylint.pipeline import LintRequest, load_project
    from policylint.profiles.registry import ProfileError

    try:
        external_objects = ExternalObjects.parse(external)
        project = load_project(
            LintRequest(
                paths=paths,
                read_stdin=lambda: sys.stdin.buffer.read(),
                namespace=namespace,
                crd_paths=crd_paths,
                profile_paths=profile_paths,
                synthetic_rule_names=synthetic_rule_names,
                external=external_objects,
                follow_outside_links=follow_outside_links,
                walk=walk,
            )
        )
    except (ExternalPatternError, SourceError, ProfileError) as exc:
        error(exc)
        return EXIT_USAGE
    if project.index.input_issues:
        # Unparsable or malformed documents are findings of `check`; here they are only missing.
        from policylint.k8s.names import plural

        n = len(project.index.input_issues)
        click.echo(f"policylint: note: {plural(n, 'input problem')} skipped; `policylint check` lists them", err=True)
    return project


def run_explain(
    target: str,
    paths: Sequence[str] = (".",),
    *,
    fmt: str = "text",
    limit: int = 20,
    **load: Unpack[QueryLoad],
) -> int:
    """Explain the effective policy of one object, or what one policy reaches (README "Explain")."""
    from policylint.commands.explain import ExplainError, explain, render_json, render_text

    project = load_project_for_query(paths or (".",), **load)
    if isinstance(project, int):
        return project
    try:
        doc = explain(project, target, default_namespace=str(load.get("namespace", "default")), limit=limit)
    except ExplainError as exc:
        error(exc)
        return EXIT_USAGE
    click.echo(render_json(doc) if fmt == "json" else render_text(doc), nl=False)
    return EXIT_OK


def run_graph(
    paths: Sequence[str] = (".",),
    *,
    fmt: str = "mermaid",
    focus: str | None = None,
    depth: int | None = None,
    rules: bool = False,
    **load: Unpack[QueryLoad],
) -> int:
    """Draw the topology with its policies, in Mermaid or DOT."""
    from policylint.commands.explain import ExplainError
    from policylint.commands.graph import build_graph, render

    project = load_project_for_query(paths or (".",), **load)
    if isinstance(project, int):
        return project
    try:
        graph = build_graph(
            project, focus=focus, depth=depth, show_rules=rules, default_namespace=str(load.get("namespace", "default"))
        )
    except ExplainError as exc:
        error(exc)
        return EXIT_USAGE
    click.echo(render(graph, fmt), nl=False)
    return EXIT_OK
