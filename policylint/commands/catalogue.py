"""`policylint rules`, `rule` and `profiles`: the catalogue of rules and policy kinds."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import click

from policylint.commands import EXIT_OK, EXIT_USAGE, error, warning


def run_rules(fmt: str = "text") -> int:
    """List the rule catalogue: a table (text), the rules/README.md table (markdown), or every
    rule's metadata and documentation for editors and CI tools (json)."""
    from policylint.rules import REGISTRY
    from policylint.rules.docs import catalogue_markdown

    if fmt == "markdown":
        click.echo(catalogue_markdown(), nl=False)
        return EXIT_OK
    if fmt == "json":
        from policylint import __version__
        from policylint.rules.docs import metadata
        from policylint.textsafe import json_dumps

        document = {
            "schemaVersion": 1,
            "tool": {"name": "policylint", "version": __version__},
            "rules": [metadata(r) for r in REGISTRY],
        }
        click.echo(json_dumps(document, indent=2, ensure_ascii=True))
        return EXIT_OK
    width = max(len(r.name) for r in REGISTRY)
    for rule in REGISTRY:
        # The fix column as ruff shows it: which findings `--fix` (or `--unsafe-fixes`) repairs.
        fix = {"safe": "fix", "unsafe": "fix*"}.get(rule.fixable or "", "")
        click.echo(f"{rule.id}  {rule.name:<{width}}  {rule.severity.label:<7}  {fix:<4}  {rule.summary()}")
    return EXIT_OK


def run_cel_coverage(fmt: str = "text", crd_paths: Sequence[str] = ()) -> int:
    """Per bundled CRD schema (group, kind, version, channel), or per served version of the CRDs
    under `crd_paths`: its CEL validation rules, how many PL704 evaluates, and why it does not
    evaluate the others; a total over the schemas."""
    from policylint.input.sources import SourceError
    from policylint.reading import read_crds
    from policylint.rules.cel import coverage

    given: list[tuple[str, Mapping[str, Any]]] | None = None
    if crd_paths:
        given = []
        try:
            for path in crd_paths:
                documents, problems = read_crds(path)
                for problem in problems:
                    warning(problem)
                given.extend((d.ref.file, d.data) for d in documents)
        except SourceError as exc:
            error(exc)
            return EXIT_USAGE
    rows = coverage(given)
    if not rows:
        error("the CRDs given serve no version with a schema")
        return EXIT_USAGE
    total = {"schemas": 0, "rules": 0, "evaluated": 0}
    skipped: dict[str, int] = {}
    for row in rows:
        if row["schemas"]:  # a schema two channels share counts once
            total["schemas"] += 1
            total["rules"] += row["rules"]
            total["evaluated"] += row["evaluated"]
            for reason, n in row["skipped"].items():
                skipped[reason] = skipped.get(reason, 0) + n
    if fmt == "json":
        from policylint import __version__
        from policylint.textsafe import json_dumps

        document = {
            "schemaVersion": 1,
            "tool": {"name": "policylint", "version": __version__},
            "crds": [{k: v for k, v in row.items() if k != "schemas"} for row in rows],
            "total": {**total, "skipped": dict(sorted(skipped.items()))},
        }
        click.echo(json_dumps(document, indent=2, ensure_ascii=True))
        return EXIT_OK

    def reasons(counts: dict[str, int]) -> str:
        return "; ".join(f"{n} {reason}" for reason, n in sorted(counts.items()))

    width = max(len(f"{r['group']}/{r['kind']} {r['version']} {r['channel']}") for r in rows)
    for row in rows:
        name = f"{row['group']}/{row['kind']} {row['version']} {row['channel']}"
        n_skipped = row["rules"] - row["evaluated"]
        line = f"{name:<{width}}  {row['rules']:>4} rules  {row['evaluated']:>4} evaluated  {n_skipped:>3} skipped"
        if row["skipped"]:
            line += f" ({reasons(row['skipped'])})"
        click.echo(f"{line}  [{row['source']}]")
    n_skipped = total["rules"] - total["evaluated"]
    which = "bundled" if given is None else "given"
    line = f"total: {total['rules']} rules in {total['schemas']} {which} schemas, {total['evaluated']} evaluated, {n_skipped} skipped"
    click.echo(line + (f" ({reasons(skipped)})" if skipped else ""))
    return EXIT_OK


def run_rule(code: str) -> int:
    """Print one rule's documentation, offline."""
    from policylint.resources import data_dir
    from policylint.rules import REGISTRY
    from policylint.rules.docs import doc_path
    from policylint.rules.engine import INTERNAL_ERROR, INTERNAL_ERROR_NAME

    wanted = code.strip()
    # PL000 is the engine's own finding, not a registered rule, but it is reported like one and
    # has its doc: a user who meets it asks about it the same way.
    if wanted.upper() == INTERNAL_ERROR or wanted.lower() == INTERNAL_ERROR_NAME:
        path = data_dir("rules") / f"{INTERNAL_ERROR}-{INTERNAL_ERROR_NAME}.md"
        click.echo(path.read_text(encoding="utf-8"), nl=False)
        return EXIT_OK
    for rule in REGISTRY:
        if rule.id.upper() == wanted.upper() or rule.name == wanted.lower():
            path = doc_path(rule)
            click.echo(path.read_text(encoding="utf-8"), nl=False)
            return EXIT_OK
    error(f"no rule {code!r} (see `policylint rules`)")
    return EXIT_USAGE


def run_profiles(profile_paths: Sequence[str] = ()) -> int:
    """List the policy kinds policylint knows and how it treats them."""
    from pathlib import Path

    from policylint.profiles.registry import ORIGIN_PROFILE, ProfileError, ProfileRegistry, builtin_profiles, load_profile_file
    from policylint.textsafe import defuse_line, escape

    try:
        user = [p for path in profile_paths for p in load_profile_file(Path(path), origin=ORIGIN_PROFILE)]
    except ProfileError as exc:
        error(exc)
        return EXIT_USAGE
    rows = []
    for p in ProfileRegistry([user, builtin_profiles()]):
        fields = ", ".join(p.targets.fields)
        kinds = ", ".join(dict.fromkeys(t.kind for t in p.targets.kinds)) or "any"
        # Escaped before measuring, so that the columns line up as printed; a --profile file's
        # strings are input too.
        cells = [escape(c) for c in (f"{p.group}/{p.kind}", p.policy_class, p.boilerplate, p.merge.default)]
        rows.append((cells, escape(f"[{fields}] -> {kinds}  ({p.project})")))
    # A header row names the columns (as `kubectl get` does), and is measured with them.
    rows.insert(0, (["KIND", "CLASS", "BOILERPLATE", "MERGE"], "[TARGET FIELDS] -> TARGET KINDS  (PROJECT)"))
    # Each column as wide as its widest cell, over built-in and --profile kinds alike.
    widths = [max((len(cells[i]) for cells, _ in rows), default=0) for i in range(4)]
    for cells, rest in rows:
        click.echo(defuse_line("  ".join(c.ljust(w) for c, w in zip(cells, widths)) + "  " + rest))
    return EXIT_OK
