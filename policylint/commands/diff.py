"""`policylint diff BASE [HEAD]`: what a change does, built from git objects.

Both states are read straight from git (BASE, and HEAD or the working tree), never checked out:
the working tree, the index and every ref stay as they were. Each state is linted whole, and
the report says:

- which findings the change **introduces**, **fixes** or leaves **unchanged**, matched by
  fingerprint (rule, object, field path: not lines), so a finding that only moved is unchanged;
- for every **policy** the change adds, modifies or deletes, and every other policy whose status
  it changes (overridden, conflicted, no longer attached), its status and blast radius before
  and after;
- every **effective-policy** change: per policy kind and context (the path from GatewayClass to
  backend), the effective spec before and after and the policies that provide it.

The gate: exit 1 when the change introduces a finding at or above `--fail-on`, or when a
changed, added or deleted policy's blast radius (contexts) exceeds `--max-affected`.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import field, replace
from typing import TYPE_CHECKING, Any

import click

from policylint.commands import EXIT_FINDINGS, EXIT_OK, EXIT_USAGE, error, errors
from policylint.settings import Settings, from_keys
from policylint.values import record

if TYPE_CHECKING:
    from policylint.commands.check import Configured
    from policylint.gate import GateReport
    from policylint.pipeline import LintResult

# Effective-policy changes listed in full; a change larger than that is counted, not listed.
MAX_CONTEXT_CHANGES = 2_000


@record
class State:
    """One side of the change: its name (a commit, or `working tree`) and its lint result."""

    name: str
    result: LintResult
    objects: dict[Any, Any] = field(default_factory=dict)  # ObjectKey -> data


def _policy_key(entry: Mapping[str, Any]) -> str:
    obj = entry["object"]
    return f"{obj['kind']} {obj['namespace']}/{obj['name']}" if obj["namespace"] else f"{obj['kind']} {obj['name']}"


def _status(entry: Mapping[str, Any] | None) -> list[dict[str, Any]] | None:
    if entry is None:
        return None
    return [
        {
            "ref": t["ref"],
            "accepted": t["accepted"],
            "detail": t["detail"],
            "enforcement": t["enforcement"],
        }
        for t in entry["targets"]
    ]


def _policies(before: State, after: State) -> list[dict[str, Any]]:
    """Policies the change adds, modifies or deletes, and those whose status it changes."""
    assert before.result.policy_reports is not None and after.result.policy_reports is not None
    old = {_policy_key(p): p for p in before.result.policy_reports}
    new = {_policy_key(p): p for p in after.result.policy_reports}
    data_old = {str(k): v for k, v in before.objects.items()}
    data_new = {str(k): v for k, v in after.objects.items()}
    out = []
    for key in sorted(old.keys() | new.keys()):
        a, b = old.get(key), new.get(key)
        if a is None:
            change = "added"
        elif b is None:
            change = "deleted"
        elif data_old.get(key) != data_new.get(key):
            change = "modified"
        elif _status(a) != _status(b):
            change = "status"  # the policy did not change; something it depends on did
        else:
            continue
        out.append(
            {
                "policy": key,
                "change": change,
                "statusBefore": _status(a),
                "statusAfter": _status(b),
                "affectsBefore": a.get("affects") if a is not None else None,
                "affectsAfter": b.get("affects") if b is not None else None,
            }
        )
    return out


def _provenance(node: Any) -> list[str]:
    names: set[str] = set()
    stack = [node]
    while stack:
        current = stack.pop()
        if current is None:
            continue
        if current.children is not None:
            stack.extend(current.children.values())
            continue
        policy = getattr(current.source, "policy", None)
        if policy is not None:
            names.add(str(policy.obj.key))
    return sorted(names)


def _effective(state: State) -> dict[tuple[str, str], tuple[Any, list[str]]]:
    from policylint.semantics.effective.merge import untag
    from policylint.semantics.effective.simulation import path_label
    from policylint.stages import Stage

    project = state.result.project
    if not project.has_stage(Stage.SIMULATION):
        return {}
    out = {}
    for context in project.simulation().contexts(lambda path: True):
        tree = context.result.tree
        out[(context.profile.name, path_label(context.path))] = (untag(tree), _provenance(tree))
    return out


def _effective_changes(before: State, after: State) -> tuple[list[dict[str, Any]], int]:
    old, new = _effective(before), _effective(after)
    changes = []
    for key in sorted(old.keys() | new.keys()):
        a, b = old.get(key), new.get(key)
        if a is not None and b is not None and a[0] == b[0]:
            continue
        if a is None and b is not None and b[0] is None:
            continue
        if b is None and a is not None and a[0] is None:
            continue
        changes.append(
            {
                "kind": key[0],
                "context": key[1],
                "before": a[0] if a is not None else None,
                "after": b[0] if b is not None else None,
                "providedBefore": a[1] if a is not None else [],
                "providedAfter": b[1] if b is not None else [],
            }
        )
    return changes[:MAX_CONTEXT_CHANGES], len(changes)


def compare(before: State, after: State, gate: GateReport | None = None) -> dict[str, Any]:
    """The diff report (schemas/diff.schema.json); `gate` (policylint.gate) when it has
    something to say."""
    from policylint import __version__
    from policylint.commands.change import compare_findings
    from policylint.reporters.json import finding_dict

    # The comparison `check --diff` and `--staged` gate on too (policylint.commands.change).
    findings = compare_findings(before.result.findings, after.result.findings)
    changes, total = _effective_changes(before, after)
    report: dict[str, Any] = {
        "schemaVersion": 1,
        "tool": {"name": "policylint", "version": __version__},
        "base": before.name,
        "head": after.name,
        "findings": {
            "introduced": [finding_dict(f) for f in findings.introduced],
            "fixed": [finding_dict(f) for f in findings.fixed],
            "unchanged": len(findings.unchanged),
        },
        "policies": _policies(before, after),
        "effective": {"changes": changes, "total": total},
    }
    if gate:
        report["gate"] = gate.as_dict()
    return report


# The configuration keys `diff` reads besides its own flags' (policylint.config), and their keywords.
# The configuration keys `diff` applies (BASE's file): what decides the findings and the gate,
# not how `check` prints or caches.
_DIFF_KEYS = (
    "fail-on",
    "crd",
    "channel",
    "gateway-api-version",
    "implementations",
    "profile",
    "namespace",
    "external",
    "synthetic-rule-names",
    "complete",
    "helm-templates",
    "select",
    "ignore",
    "baseline",
)


def run_configured_diff(
    base: str,
    head: str | None,
    settings: Settings,
    *,
    given: Mapping[str, Any],
    config: str | None,
    isolated: bool,
    root: str,
) -> int:
    """`diff` with the configuration file applied, as `check` applies it: its rule selection,
    severities, per-file settings, rule options, exclusions and loading options, under the flags
    actually given (`given`); its `paths` when none are given, else the repository root.

    The configuration (and the baseline it names) is the one BASE holds, or `--config-ref`'s: the
    side of the comparison the change cannot edit, as `semgrep ci` takes its baseline from the
    baseline commit. What HEAD (or the working tree) changes in them is the report's `gate`
    section, and a change that loosens them fails the run (policylint.commands.trust)."""
    from policylint.commands.check import Configured
    from policylint.commands.trust import Trust, config_at
    from policylint.config import find_config
    from policylint.config.load import ConfigError
    from policylint.input import git
    from policylint.input.gitref import TreeRef, verify_ref

    config_ref = settings.config_ref
    found = None if isolated or config else find_config()
    # The change's own file, as `check` would find it: what the gate section compares with.
    local = config if config is not None and not isolated else (os.path.relpath(found) if found is not None else None)
    trust = Trust(None, None, frozenset(), local_path=local, isolated=isolated)
    loaded = None
    if not isolated:
        ref = config_ref if config_ref is not None else base
        try:
            git_root = git.repository_root(os.getcwd())
            commit = verify_ref(ref, git_root) if config_ref is not None else git.resolve_base(base, git_root)
            loaded = config_at(commit, ref, config, git_root)
        except git.GitError as exc:
            error(exc)
            return EXIT_USAGE
        except ConfigError as exc:
            errors(exc)
            return EXIT_USAGE
        label = f"{ref}:{os.path.relpath(loaded.path)}" if loaded is not None else None
        trust = replace(trust, config_ref=ref, label=label, tree=TreeRef(commit, ref, git_root))
    if loaded is None:
        return run_diff(base, head, settings.replace(paths=settings.paths or (root,)), Configured(trust=trust))
    from policylint.config.effective import CLI_KEYWORDS, CLUSTER_KEYS, COMMAND_LINE, DEFAULT, build, run_settings

    names = {CLI_KEYWORDS[key] for key in _DIFF_KEYS if key in CLI_KEYWORDS}
    try:
        # Paths the file names stay inside its repository (config.effective): a ConfigError.
        effective = build(loaded, {k: v for k, v in given.items() if k in names}, trust.label, from_tree=trust.tree is not None)
    except ConfigError as exc:
        errors(exc)
        return EXIT_USAGE
    from_file = frozenset(k for k, source in effective.sources.items() if source not in (DEFAULT, COMMAND_LINE))
    trust = replace(trust, config=loaded, from_file=from_file)
    values = effective.values
    applied = run_settings(effective)
    crds_at, profiles_at = trust.files_at(effective.sources)
    settings = from_keys({key: values[key] for key in _DIFF_KEYS}, settings)
    configured = Configured(
        trust=trust,
        walk=applied.walk,
        overrides=applied.overrides,
        rule_options=applied.rule_options,
        cluster_sources={key: effective.sources[key] for key in CLUSTER_KEYS},
        # BASE's configuration names files as BASE holds them: both sides are judged by those.
        crds_at=crds_at,
        profiles_at=profiles_at,
    )
    return run_diff(base, head, settings.replace(paths=settings.paths or tuple(values["paths"]) or (root,)), configured)


def run_diff(base: str, head: str | None, settings: Settings, configured: Configured | None = None) -> int:
    """Lint BASE and HEAD (None: the working tree) over `settings.paths`, print the report in
    `settings.fmt`, and return the exit code. `configured.trust` says which configuration was
    applied (policylint.commands.trust): with one, the report's `gate` section says what the
    change does to it and to the baseline, and a change that loosens them is exit 1."""
    from policylint.commands.check import Configured, parse_options
    from policylint.commands.cluster import parse_gateway_api
    from policylint.commands.trust import gate_report
    from policylint.findings import Severity
    from policylint.input import git
    from policylint.input.commit import commit_sources
    from policylint.input.sources import SourceError
    from policylint.k8s.external import ExternalObjects, ExternalPatternError
    from policylint.pipeline import LintRequest, lint
    from policylint.profiles.registry import ProfileError
    from policylint.suppressions.baseline import BaselineError

    configured = configured if configured is not None else Configured()
    paths, walk, trust = settings.paths, configured.walk, configured.trust
    parsed = parse_options(settings.select, settings.ignore, settings.fail_on, settings.external, configured.overrides)
    declared = parse_gateway_api(
        settings.channel, settings.gateway_api_version, settings.implementations, configured.cluster_sources
    )
    if parsed is None or declared is None:
        return EXIT_USAGE
    selection, _, _, overrides = parsed
    try:
        threshold = Severity.parse(settings.fail_on)
        external_objects = ExternalObjects.parse(settings.external)
        root = git.repository_root(os.getcwd())
        for path in paths:
            if os.path.relpath(os.path.abspath(path), root).startswith(os.pardir):
                raise git.GitError(f"{path} is outside the git repository at {root}")
        base_commit = git.resolve_base(base, root)
        head_commit = git.resolve_base(head, root, what="head") if head is not None else None
    except (ValueError, ExternalPatternError, git.GitError) as exc:
        error(exc)
        return EXIT_USAGE

    def state(commit: str | None, name: str) -> State:
        sources = commit_sources(commit, root, paths, walk, settings.helm_templates) if commit is not None else None
        request = LintRequest(
            paths=paths,
            sources=sources,
            report_policies=True,
            namespace=settings.namespace,
            crd_paths=settings.crd_paths,
            crds_at=configured.crds_at,
            declared=declared,
            profile_paths=settings.profile_paths,
            profiles_at=configured.profiles_at,
            external=external_objects,
            walk=walk,
            helm_templates=settings.helm_templates,
            cache_dir=_cache(),
            selection=selection,
            synthetic_rule_names=settings.synthetic_rule_names,
            complete=settings.complete,
            overrides=overrides,
            rule_options=dict(configured.rule_options or {}),
        )
        result = lint(request)
        return State(name, result, {o.key: o.data for o in result.index.objects})

    try:
        before = state(base_commit, base)
        after = state(head_commit, head if head is not None else "working tree")
        gate = (
            gate_report(trust, baseline=settings.baseline, baseline_entries=None, diff_base=base, staged=False, head=head)
            if trust is not None
            else None
        )
    except (SourceError, ProfileError, BaselineError, git.GitError) as exc:
        error(exc)
        return EXIT_USAGE
    report = compare(before, after, gate)
    click.echo(render(report, settings.fmt, gate), nl=False)
    introduced = [f for f in report["findings"]["introduced"] if Severity.parse(f["severity"]) >= threshold]
    max_affected = settings.max_affected
    too_wide = [
        p
        for p in report["policies"]
        if max_affected is not None
        and p["change"] != "status"
        and max((p["affectsBefore"] or {}).get("contexts", 0), (p["affectsAfter"] or {}).get("contexts", 0)) > max_affected
    ]
    if before.result.internal_error or after.result.internal_error:
        return EXIT_USAGE
    if settings.exit_zero:
        return EXIT_OK
    loosened = gate is not None and gate.loosened  # whatever --fail-on, as `check --diff`
    return EXIT_FINDINGS if introduced or too_wide or loosened else EXIT_OK


def _cache() -> str | None:
    from policylint.input.cache import ENV_DIR, default_directory

    return os.environ.get(ENV_DIR) or default_directory()


def render(report: Mapping[str, Any], fmt: str, gate: GateReport | None = None) -> str:
    """The report in `fmt`; the gate section in the words `check` uses (policylint.gate)."""
    if fmt == "json":
        from policylint.textsafe import json_dumps

        return json_dumps(report, indent=2, ensure_ascii=True) + "\n"
    if fmt == "markdown":
        return _markdown(report, gate)
    return _text(report, gate)


def _finding_line(f: Mapping[str, Any]) -> str:
    obj = (
        f" [{f['object']['kind']} {f['object']['namespace'] + '/' if f['object']['namespace'] else ''}{f['object']['name']}]"
        if f["object"]
        else ""
    )
    return f"{f['file']}:{f['line']}:{f['column']}: {f['severity']} {f['rule']} {f['message']}{obj}"


def _affects(a: Mapping[str, Any] | None) -> str:
    if not a:
        return "nothing"
    from policylint.k8s.names import plural

    parts = [plural(a[key], word) for key, word in (("routes", "route"), ("rules", "rule"), ("listeners", "listener"))]
    parts += [plural(a["gateways"], "Gateway"), plural(a["backends"], "backend")]
    return f"{plural(a['contexts'], 'context')} ({', '.join(parts)})"


def _status_text(status: Sequence[Mapping[str, Any]] | None) -> str:
    if status is None:
        return "absent"
    if not status:
        return "no targets"
    parts = []
    for t in status:
        ref = t["ref"]
        name = f"{ref['kind']} {ref['name']}" + (f"#{ref['sectionName']}" if ref["sectionName"] else "")
        verdict = t["accepted"] if t["accepted"] != "Accepted" else (t["enforcement"] or "Accepted")
        parts.append(f"{name}: {verdict}")
    return ", ".join(parts)


def _value(value: Any) -> str:
    from policylint.textsafe import json_text

    return json_text(value, 300, sort_keys=True) if value is not None else "(none)"


def _text(report: Mapping[str, Any], gate: GateReport | None = None) -> str:
    from policylint.k8s.names import plural
    from policylint.textsafe import defuse_line, escape

    findings = report["findings"]
    lines = [f"policylint diff {escape(report['base'])}..{escape(report['head'])}", ""]
    lines.append(
        f"findings: {len(findings['introduced'])} introduced, {len(findings['fixed'])} fixed, {findings['unchanged']} unchanged"
    )
    lines += [defuse_line("  + " + escape(_finding_line(f))) for f in findings["introduced"]]
    lines += [defuse_line("  - " + escape(_finding_line(f))) for f in findings["fixed"]]
    lines += ["", f"policies: {plural(len(report['policies']), 'change')}"]
    for p in report["policies"]:
        lines.append(f"  {p['change']}: {escape(p['policy'])}")
        lines.append(f"    status:      {escape(_status_text(p['statusBefore']))} -> {escape(_status_text(p['statusAfter']))}")
        lines.append(f"    blast radius: {_affects(p['affectsBefore'])} -> {_affects(p['affectsAfter'])}")
    effective = report["effective"]
    lines += ["", f"effective policy: {plural(effective['total'], 'context')} changed"]
    for c in effective["changes"]:
        lines.append(f"  {escape(c['kind'])} at {escape(c['context'])}")
        lines.append(f"    before: {escape(_value(c['before']))}  [{escape(', '.join(c['providedBefore'])) or '-'}]")
        lines.append(f"    after:  {escape(_value(c['after']))}  [{escape(', '.join(c['providedAfter'])) or '-'}]")
    if effective["total"] > len(effective["changes"]):
        lines.append(f"  … {effective['total'] - len(effective['changes'])} more (see --format json)")
    gate_lines = gate.summary_lines() if gate is not None else []
    if gate_lines:
        lines += ["", *(defuse_line(escape(line)) for line in gate_lines)]
    return "\n".join(lines) + "\n"


def _markdown(report: Mapping[str, Any], gate: GateReport | None = None) -> str:
    from policylint.k8s.names import plural
    from policylint.reporters.markdown import MAX_BYTES, gate_section, md

    findings = report["findings"]
    out = [
        f"## policylint diff `{md(report['base'])}`..`{md(report['head'])}`",
        "",
        f"**Findings:** {len(findings['introduced'])} introduced, {len(findings['fixed'])} fixed, {findings['unchanged']} unchanged",
        "",
        *gate_section(gate),
    ]
    rows = [f"| :new: | {md(_finding_line(f))} |" for f in findings["introduced"]]
    rows += [f"| :white_check_mark: | {md(_finding_line(f))} |" for f in findings["fixed"]]
    if rows:
        out += ["| | finding |", "|---|---|", *rows, ""]
    if report["policies"]:
        out += [
            "### Policies",
            "",
            "| policy | change | status before → after | blast radius before → after |",
            "|---|---|---|---|",
        ]
        out += [
            f"| {md(p['policy'])} | {p['change']} | {md(_status_text(p['statusBefore']))} → {md(_status_text(p['statusAfter']))}"
            f" | {md(_affects(p['affectsBefore']))} → {md(_affects(p['affectsAfter']))} |"
            for p in report["policies"]
        ]
        out.append("")
    effective = report["effective"]
    if effective["total"]:
        out += [f"<details><summary>Effective policy: {plural(effective['total'], 'context')} changed</summary>", ""]
        out += ["| kind | context | before | after |", "|---|---|---|---|"]
        out += [
            f"| {md(c['kind'])} | {md(c['context'])} | {md(_value(c['before']))} | {md(_value(c['after']))} |"
            for c in effective["changes"]
        ]
        out += ["", "</details>", ""]
    text = "\n".join(out) + "\n"
    if len(text.encode("utf-8")) > MAX_BYTES:
        cut = text.encode("utf-8")[: MAX_BYTES - 200].decode("utf-8", "ignore")
        text = cut[: cut.rfind("\n") + 1] + "\n… more (see `policylint diff --format json`)\n"
    return text
