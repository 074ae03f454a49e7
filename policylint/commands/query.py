"""`policylint explain` and `graph`: load the project with every stage built, then query it."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

import click

from policylint.commands import EXIT_OK, EXIT_USAGE, error
from policylint.values import frozen

if TYPE_CHECKING:
    from policylint.input.ignore import WalkFilter
    from policylint.project import Project
    from policylint.settings import Settings


@frozen(slots=False)
class Query:
    """What `explain` and `graph` run with: their settings (the paths default to `.`), and the
    walk filter the configuration file's exclusions make (policylint.config)."""

    settings: Settings
    walk: WalkFilter | None = None


def load_project_for_query(query: Query) -> Project | int:
    """The project `explain` and `graph` query (no rules run), or EXIT_USAGE after saying why."""
    from policylint.input.sources import SourceError
    from policylint.k8s.external import ExternalObjects, ExternalPatternError
    from policylint.pipeline import LintRequest, load_project
    from policylint.profiles.registry import ProfileError

    settings = query.settings
    try:
        external_objects = ExternalObjects.parse(settings.external)
        project = load_project(
            LintRequest(
                paths=settings.paths or (".",),
                context_paths=settings.context_paths,
                read_stdin=lambda: sys.stdin.buffer.read(),
                namespace=settings.namespace,
                crd_paths=settings.crd_paths,
                profile_paths=settings.profile_paths,
                synthetic_rule_names=settings.synthetic_rule_names,
                external=external_objects,
                follow_outside_links=settings.follow_outside_links,
                walk=query.walk,
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


def run_explain(target: str, query: Query) -> int:
    """Explain the effective policy of one object, or what one policy reaches (README "Explain")."""
    from policylint.commands.explain import ExplainError, explain
    from policylint.commands.explain_text import render_json, render_text

    project = load_project_for_query(query)
    if isinstance(project, int):
        return project
    settings = query.settings
    try:
        doc = explain(project, target, default_namespace=settings.namespace, limit=settings.limit)
    except ExplainError as exc:
        error(exc)
        return EXIT_USAGE
    click.echo(render_json(doc) if settings.fmt == "json" else render_text(doc), nl=False)
    return EXIT_OK


def run_graph(query: Query) -> int:
    """Draw the topology with its policies, in Mermaid or DOT."""
    from policylint.commands.explain import ExplainError
    from policylint.commands.graph import build_graph, render

    project = load_project_for_query(query)
    if isinstance(project, int):
        return project
    settings = query.settings
    try:
        graph = build_graph(
            project,
            focus=settings.focus,
            depth=settings.depth,
            show_rules=settings.draw_rules,
            default_namespace=settings.namespace,
        )
    except ExplainError as exc:
        error(exc)
        return EXIT_USAGE
    click.echo(render(graph, settings.fmt), nl=False)
    return EXIT_OK
