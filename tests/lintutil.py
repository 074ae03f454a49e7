"""Shared helpers for tests: lint text or paths in-process."""

from __future__ import annotations

import random
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from policylint.pipeline import LintRequest, LintResult, build_stages, lint
from policylint.policy_report import policy_reports
from policylint.rules.engine import Selection
from policylint.stages import Stage

ROOT = Path(__file__).resolve().parent.parent


def lint_paths(paths: Sequence[str | Path], **options: Any) -> LintResult:
    return _inspectable(lint(LintRequest(paths=[str(p) for p in paths], **declared(options))))


def declared(options: dict[str, Any]) -> dict[str, Any]:
    """`channel=`, `gateway_api_version=` and `implementations=` as the command line declares them
    (policylint.k8s.cluster.Declared)."""
    from policylint.k8s.cluster import Declared

    channel = options.pop("channel", None)
    version = options.pop("gateway_api_version", None)
    implementations = tuple(options.pop("implementations", ()))
    if channel is not None or version is not None or implementations:
        options["declared"] = Declared(version, "the test", channel, "the test", implementations, "the test")
    return options


def lint_text(text: str | bytes, filename: str = "input.yaml", **options: Any) -> LintResult:
    data = text.encode("utf-8") if isinstance(text, str) else text
    return _inspectable(lint(LintRequest(paths=["-"], stdin_filename=filename, read_stdin=lambda: data, **declared(options))))


def _inspectable(result: LintResult) -> LintResult:
    """Tests inspect the topology and the simulation whatever rules they selected: build the
    stages the selection did not need, after the rules ran (the findings are unchanged).
    tests/rules/test_rule_inputs.py checks what a run builds by itself."""
    build_stages(result.project, {Stage.SIMULATION})
    if result.policy_reports is None:  # what `--format json` asks the pipeline for
        result.policy_reports = policy_reports(result.project)[0]
    return result


def only(result: LintResult, rule: str) -> list[Any]:
    return [f for f in result.findings if f.rule == rule]


def select(*codes: str) -> Selection:
    return Selection(select=codes)


def describe(findings: Sequence[Any]) -> list[dict[str, Any]]:
    """The fields fixture expectations pin: rule, object, path, line (and column for input rules)."""
    out = []
    for f in findings:
        entry: dict[str, Any] = {"rule": f.rule, "object": str(f.object) if f.object else None, "path": f.path, "line": f.line}
        out.append(entry)
    return out


_REPORT_VALIDATOR: list[Any] = []  # built once: checking the schema itself is not free


def _report_validator() -> Any:
    if not _REPORT_VALIDATOR:
        from jsonschema import Draft202012Validator

        from policylint.resources import load_schema

        schema = load_schema("report.schema.json")
        Draft202012Validator.check_schema(schema)
        _REPORT_VALIDATOR.append(Draft202012Validator(schema))
    return _REPORT_VALIDATOR[0]


def assert_valid_report(report: dict[str, Any]) -> None:
    """Fail unless `report` is a valid JSON report (schemas/report.schema.json, Draft 2020-12)."""
    errors = sorted(_report_validator().iter_errors(report), key=lambda e: list(e.absolute_path))
    assert not errors, "report does not match schemas/report.schema.json:\n" + "\n".join(
        f"  at /{'/'.join(str(p) for p in e.absolute_path)}: {e.message}" for e in errors
    )


def fixture_dirs(root: Path) -> list[Path]:
    """The fixture directories under `root` (a rule's or a profile's), in name order. The fixtures
    share their directory with the stage's test modules: Python's bytecode cache is not one."""
    return sorted(p for p in root.iterdir() if p.is_dir() and p.name != "__pycache__")


def in_files(docs: list[dict[str, Any]], rng: random.Random) -> dict[str, list[dict[str, Any]]]:
    """`docs` laid out as a repository's files are: one to five documents a file, in order, the
    files named `m-000.yaml`, `m-001.yaml`, ... (the random edit sequences' corpora)."""
    files: dict[str, list[dict[str, Any]]] = {}
    while docs:
        take = rng.randint(1, 5)
        files[f"m-{len(files):03d}.yaml"] = docs[:take]
        docs = docs[take:]
    return files
