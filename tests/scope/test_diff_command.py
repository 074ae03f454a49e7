"""`policylint diff BASE [HEAD]`: what a change does, from git objects (policylint/commands/diff.py).

Real temporary git repositories holding the bundled example repository (examples/): the parable
(deleting a Gateway-wide policy lists every context whose effective policy it was providing,
with before and after and who provided it), a change that introduces one finding and fixes
another, two commits compared without the working tree, the gates, the JSON schema
(schemas/diff.schema.json), and a working tree, index and refs left byte for byte as they were.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from jsonschema import Draft202012Validator
from referencing import Registry, Resource

from policylint.cli import cli
from policylint.resources import load_schema
from tests.gitrepo import commit, git, init
from tests.lintutil import ROOT
from tests.scope.test_git_diff import state

POLICY = "infra/backend-traffic-policy.yaml"  # BackendTrafficPolicy infra/shared-gw-backends, on the whole Gateway


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "repo"
    shutil.copytree(ROOT / "examples", root)
    init(root)
    commit(root)
    monkeypatch.chdir(root)
    return root


def diff(*args: str) -> tuple[int, dict[str, Any]]:
    result = CliRunner().invoke(cli, ["diff", *args, "--format", "json"])
    assert result.stdout, result.stderr
    report = json.loads(result.stdout)
    validator().validate(report)
    return result.exit_code, report


def validator() -> Draft202012Validator:
    report, schema = load_schema("report.schema.json"), load_schema("diff.schema.json")
    registry = Registry().with_resource(report["$id"], Resource.from_contents(report))
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema, registry=registry)


def test_the_parable_deleting_a_gateway_wide_policy(repo: Path) -> None:
    (repo / POLICY).unlink()
    before = state(repo)
    code, report = diff("HEAD")
    assert code == 0  # fixes two findings, introduces none
    assert report["base"] == "HEAD" and report["head"] == "working tree"
    assert [f["rule"] for f in report["findings"]["fixed"]] == ["PL603", "PL110"]
    assert report["findings"]["introduced"] == []
    (policy,) = report["policies"]
    assert (policy["policy"], policy["change"], policy["statusAfter"], policy["affectsAfter"]) == (
        "BackendTrafficPolicy infra/shared-gw-backends",
        "deleted",
        None,
        None,
    )
    assert policy["affectsBefore"]["contexts"] == 5
    # Every context the policy was providing for loses it: the five rules it was not beaten on
    # (PL603 says 3 of its 8 contexts belong to route-level policies).
    changes = report["effective"]["changes"]
    assert report["effective"]["total"] == len(changes) == 5
    for change in changes:
        assert change["kind"] == "envoy-gateway/BackendTrafficPolicy"
        assert change["context"].startswith("envoy > infra/shared-gw > infra/shared-gw#")
        assert change["before"]["retry"]["numRetries"] == 2 and change["after"] is None
        assert change["providedBefore"] == ["BackendTrafficPolicy infra/shared-gw-backends"]
        assert change["providedAfter"] == []
    assert state(repo) == before


def test_a_change_that_introduces_a_finding_fails_the_gate(repo: Path) -> None:
    gateway = repo / "infra" / "gateway.yaml"
    gateway.write_text(gateway.read_text().replace("name: grpc\n", "name: grpc-v2\n", 1))
    code, report = diff("HEAD")
    assert code == 1
    introduced = [(f["rule"], f["file"]) for f in report["findings"]["introduced"]]
    # The GRPCRoute whose parentRef names the old listener, and the policy on it, which now
    # carries no traffic.
    assert introduced == [("PL407", "team-a/routes.yaml"), ("PL413", "team-a/timeout-policy.yaml")]
    changed = {p["policy"]: p["change"] for p in report["policies"]}
    assert all(change == "status" for change in changed.values())  # no policy file changed
    code, _ = diff("HEAD", "--fail-on", "error")
    assert code == 1


def test_two_commits_without_the_working_tree(repo: Path) -> None:
    (repo / POLICY).unlink()
    git(repo, "commit", "-q", "-am", "delete the Gateway-wide policy")
    (repo / "infra" / "gateway.yaml").write_text("not: [yaml\n")  # uncommitted: must not be read
    code, report = diff("HEAD~1", "HEAD")
    assert code == 0
    assert report["head"] == "HEAD"
    assert report["effective"]["total"] == 5
    assert not any(f["rule"] == "PL001" for f in report["findings"]["introduced"])


def test_blast_radius_gate(repo: Path) -> None:
    (repo / POLICY).unlink()
    assert diff("HEAD", "--max-affected", "5")[0] == 0
    assert diff("HEAD", "--max-affected", "4")[0] == 1


def test_text_and_markdown(repo: Path) -> None:
    (repo / POLICY).unlink()
    text = CliRunner().invoke(cli, ["diff", "HEAD"]).stdout
    assert text.startswith("policylint diff HEAD..working tree\n\nfindings: 0 introduced, 2 fixed, 16 unchanged\n")
    assert "  deleted: BackendTrafficPolicy infra/shared-gw-backends\n" in text
    assert "effective policy: 5 contexts changed" in text
    markdown = CliRunner().invoke(cli, ["diff", "HEAD", "--format", "markdown"]).stdout
    assert markdown.startswith("## policylint diff `HEAD`..`working tree`")
    assert "| BackendTrafficPolicy infra/shared-gw-backends | deleted |" in markdown


def test_an_unknown_base_is_a_usage_error(repo: Path) -> None:
    result = CliRunner().invoke(cli, ["diff", "nope"])
    assert result.exit_code == 2
    assert "base 'nope' is not a commit of this repository" in result.stderr


def test_the_configuration_file_applies_to_diff_as_to_check(repo: Path) -> None:
    # The same change as above introduces PL407 (error) and PL413 (warning). With a
    # configuration (BASE's) that ignores PL407 and makes PL413 info, the change introduces one
    # info finding and passes the gate; `--isolated` ignores the file again.
    (repo / ".policylint.yaml").write_text("ignore: [PL407]\nseverity:\n  PL413: info\n", encoding="utf-8")
    git(repo, "add", ".policylint.yaml")
    git(repo, "commit", "-q", "-m", "configuration")
    gateway = repo / "infra" / "gateway.yaml"
    gateway.write_text(gateway.read_text().replace("name: grpc\n", "name: grpc-v2\n", 1))
    code, report = diff("HEAD")
    assert code == 0
    assert [(f["rule"], f["severity"]) for f in report["findings"]["introduced"]] == [("PL413", "info")]
    code, report = diff("HEAD", "--fail-on", "info")  # a flag still beats the file
    assert code == 1
    code, report = diff("HEAD", "--isolated")
    assert code == 1 and [f["rule"] for f in report["findings"]["introduced"]] == ["PL407", "PL413"]


def test_the_change_cannot_apply_its_own_configuration(repo: Path) -> None:
    # The same configuration left uncommitted is the change's own: BASE (which has none)
    # judges, and the file's relaxations are what the change adds to the gate.
    gateway = repo / "infra" / "gateway.yaml"
    gateway.write_text(gateway.read_text().replace("name: grpc\n", "name: grpc-v2\n", 1))
    (repo / ".policylint.yaml").write_text("ignore: [PL407]\nseverity:\n  PL413: info\n", encoding="utf-8")
    code, report = diff("HEAD")
    assert code == 1
    assert [f["rule"] for f in report["findings"]["introduced"]] == ["PL407", "PL413"]
    assert report["gate"]["configuration"] is None and report["gate"]["loosened"] is True
    assert [c["line"] for c in report["gate"]["changes"]] == [1, 3]


def test_counts_of_one_are_singular_in_text_and_markdown() -> None:
    # One context, route, rule, listener, Gateway and backend, as a report with one of each says.
    from policylint.commands.diff import _markdown, _text

    one = {"contexts": 1, "routes": 1, "rules": 1, "listeners": 1, "gateways": 1, "backends": 1}
    two = {"contexts": 2, "routes": 2, "rules": 2, "listeners": 2, "gateways": 2, "backends": 2}
    change = {
        "kind": "timeout",
        "context": "l1>r1#1",
        "before": "1s",
        "after": None,
        "providedBefore": ["p"],
        "providedAfter": [],
    }
    report = {
        "base": "HEAD",
        "head": "working tree",
        "findings": {"introduced": [], "fixed": [], "unchanged": 0},
        "policies": [
            {
                "policy": "BackendTrafficPolicy app/p",
                "change": "changed",
                "statusBefore": [],
                "statusAfter": [],
                "affectsBefore": one,
                "affectsAfter": two,
            },
        ],
        "effective": {"total": 1, "changes": [change]},
    }
    text = _text(report)
    assert (
        "    blast radius: 1 context (1 route, 1 rule, 1 listener, 1 Gateway, 1 backend)"
        " -> 2 contexts (2 routes, 2 rules, 2 listeners, 2 Gateways, 2 backends)\n" in text
    )
    assert "effective policy: 1 context changed\n" in text
    markdown = _markdown(report)
    assert "| 1 context (1 route, 1 rule, 1 listener, 1 Gateway, 1 backend) → 2 contexts (" in markdown
    assert "<summary>Effective policy: 1 context changed</summary>" in markdown


def test_the_readme_sample_is_real_output(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """README "Diff": the example repository in a repository of its own, its Gateway-wide
    BackendTrafficPolicy deleted; every line shown is the real output's (a line ending in " …"
    is cut short there, a line "…" stands for lines left out)."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    command = "$ policylint diff HEAD --path examples\n"
    block = readme[readme.index(command) + len(command) :]
    block = block[: block.index("\n```")]
    root = tmp_path / "project"
    shutil.copytree(ROOT / "examples", root / "examples")
    init(root)
    commit(root)
    git(root, "rm", "-q", "examples/infra/backend-traffic-policy.yaml")
    monkeypatch.chdir(root)
    result = CliRunner().invoke(cli, ["diff", "HEAD", "--path", "examples"])
    assert result.exit_code == 0, result.output
    real = result.stdout.splitlines()
    position = 0
    for line in block.splitlines():
        if line.strip() == "…":
            continue
        prefix = line[: -len(" …")] if line.endswith(" …") else None
        while position < len(real) and not (real[position] == line or (prefix is not None and real[position].startswith(prefix))):
            position += 1
        assert position < len(real), f"not in the output, in this order: {line!r}\n" + "\n".join(real)
        position += 1
