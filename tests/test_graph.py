"""`policylint graph`: golden Mermaid and DOT, their syntax, styling by status, --focus and --depth.

The input is the one of tests/test_explain.py (tests/explain/input/). The expected output is in
tests/graph/golden/; regenerate with `pytest tests/test_graph.py --update-golden` and review.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from policylint.cli import cli
from policylint.commands.graph import Graph, mermaid
from tests.lintutil import ROOT

INPUT = "tests/explain/input"
PROFILE = "tests/explain/colorpolicy-profile.yaml"
GOLDEN = ROOT / "tests" / "graph" / "golden"

CASES = [
    ("full.mmd", ()),
    ("full.dot", ("--format", "dot")),
    ("rules.mmd", ("--rules",)),
    ("focus-r4.mmd", ("--focus", "httproute/app/r4")),
    ("focus-p1.dot", ("--focus", "colorpolicy/app/p1", "--format", "dot")),
    ("focus-g1-depth1.mmd", ("--focus", "gateway/app/g1", "--depth", "1")),
    ("depth1.mmd", ("--depth", "1")),
]


def graph(*args: str) -> Result:
    return CliRunner().invoke(cli, ["graph", INPUT, "--profile", PROFILE, *args])


@pytest.fixture(autouse=True)
def _in_the_repository(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)


@pytest.mark.parametrize(("name", "args"), CASES, ids=[c[0] for c in CASES])
def test_golden(name: str, args: tuple[str, ...], update_golden: bool) -> None:
    result = graph(*args)
    assert result.exit_code == 0, result.stderr
    assert result.stderr == ""
    if name.endswith(".mmd"):
        assert_valid_mermaid(result.stdout)
    else:
        assert_valid_dot(result.stdout)
    path = GOLDEN / name
    if update_golden:
        path.write_text(result.stdout, encoding="utf-8")
    assert result.stdout == path.read_text(encoding="utf-8"), (
        f"{path.name} is stale: run pytest {__file__} --update-golden and review"
    )


# -- syntax ----------------------------------------------------------------------------------

_ID = r"[A-Za-z][A-Za-z0-9_]*"
_LABEL = r'"[^"]*"'
_MERMAID_NODE = re.compile(
    rf"^\s+({_ID})(\[/{_LABEL}/\]|\[\({_LABEL}\)\]|\(\[{_LABEL}\]\)|\[{_LABEL}\]|\({_LABEL}\)|\{{\{{{_LABEL}\}}\}})$"
)
_MERMAID_EDGE = re.compile(rf"^  ({_ID}) (-->|-\.->)(\|{_LABEL}\|)? ({_ID})$")
_MERMAID_SUBGRAPH = re.compile(rf"^  subgraph {_ID}\[{_LABEL}\]$")
_MERMAID_CLASSDEF = re.compile(r"^  classDef [a-z]+ [a-z-]+:[^ ,]+(,[a-z-]+:[^,]+)*$")
_MERMAID_CLASS = re.compile(rf"^  class {_ID}(,{_ID})* ([a-z]+)$")


def assert_valid_mermaid(text: str) -> None:
    """The subset of Mermaid flowchart syntax `graph` writes, checked line by line: GitHub renders
    it (ids are letters, digits and `_`; every label is quoted; entity codes for `"#<>&;|`)."""
    lines = text.splitlines()
    assert lines[0] == "flowchart LR"
    declared: set[str] = set()
    defined: set[str] = set()
    depth = 0
    for line in lines[1:]:
        if node := _MERMAID_NODE.match(line):
            assert node.group(1) not in declared, f"node declared twice: {line}"
            declared.add(node.group(1))
            label = node.group(2)
            assert not re.search(r"[<>&|#;]", re.sub(r"#\d+;|<br/>", "", label)), f"unescaped character in {line}"
        elif edge := _MERMAID_EDGE.match(line):
            assert edge.group(1) in declared and edge.group(4) in declared, f"edge between undeclared nodes: {line}"
        elif _MERMAID_SUBGRAPH.match(line):
            depth += 1
        elif line == "  end":
            depth -= 1
            assert depth >= 0
        elif _MERMAID_CLASSDEF.match(line):
            defined.add(line.split()[1])
        elif cls := _MERMAID_CLASS.match(line):
            assert cls.group(2) in defined, f"class without classDef: {line}"
            assert all(i in declared for i in line.split()[1].split(","))
        else:
            raise AssertionError(f"not valid graph output: {line!r}")
    assert depth == 0


def assert_valid_dot(text: str) -> None:
    lines = text.splitlines()
    assert lines[0] == "digraph policylint {" and lines[-1] == "}"
    assert text.count("{") == text.count("}")
    declared = set(re.findall(rf"^\s+({_ID}) \[label=", text, re.M))
    for src, dst in re.findall(rf"^  ({_ID}) -> ({_ID})", text, re.M):
        assert src in declared and dst in declared


def test_labels_are_escaped() -> None:
    from policylint.commands.graph import GEdge, GNode

    g = Graph()
    g.add_node(GNode("a", "gateway", ['say "hi" <b> & #1; |x|'], None, "gateway"))
    g.add_node(GNode("b", "policy", ["p"], "ns", "enforced"))
    g.add_edge(GEdge("b", "a", True, '#sec "q"'))
    text = mermaid(g)
    assert_valid_mermaid(text)
    assert "#34;hi#34;" in text and "#60;b#62;" in text and "#35;sec #34;q#34;" in text


# -- what it draws -------------------------------------------------------------------------------


def _classes(text: str) -> dict[str, str]:
    out = {}
    for line in text.splitlines():
        if m := _MERMAID_CLASS.match(line):
            for node_id in line.split()[1].split(","):
                out[node_id] = m.group(2)
    return out


def test_policies_are_styled_by_status() -> None:
    classes = _classes(graph().stdout)
    assert classes["pol_ColorPolicy_app_p3"] == "enforced"
    assert classes["pol_ColorPolicy_app_p1"] == "partial"
    assert classes["pol_ColorPolicy_app_p4"] == "partial"
    assert classes["pol_ClientTrafficPolicy_app_g1_clients_all"] == "overridden"
    assert classes["pol_BackendTLSPolicy_app_b2_tls_new"] == "conflicted"
    assert classes["pol_ColorPolicy_app_p5"] == "invalid"
    assert classes["missing_HTTPRoute_app_r5"] == "missing"


def test_a_policy_the_api_server_refuses_is_drawn_invalid() -> None:
    """examples/infra/kuadrant-ratelimit.yaml: https-client-limits declares defaults and overrides,
    which Kuadrant's CRD refuses. Its target (listener https) exists and carries traffic, but the
    policy applies nowhere: Invalid (docs/semantics.md#policies-the-api-server-rejects), not a
    policy that reaches no traffic."""
    text = CliRunner().invoke(cli, ["graph", "examples/"]).stdout
    assert _classes(text)["pol_RateLimitPolicy_infra_https_client_limits"] == "invalid"
    assert '{{"RateLimitPolicy<br/>https-client-limits<br/>Invalid"}}' in text
    assert "  pol_RateLimitPolicy_infra_https_client_limits -.-> listener_infra_shared_gw_https\n" in text


def test_policies_attach_to_their_targets_with_dashed_edges() -> None:
    text = graph().stdout
    assert "  pol_ColorPolicy_app_p3 -.-> gateway_app_g2\n" in text
    assert "  pol_ClientTrafficPolicy_app_g1_clients -.-> listener_app_g1_http\n" in text
    # A port section is not a node: the edge to its Service says which port.
    assert '  pol_BackendTLSPolicy_app_b2_tls -.->|"#35;https"| backend_app_b2\n' in text
    assert "  pol_ColorPolicy_app_p5 -.-> missing_HTTPRoute_app_r5\n" in text
    dot = graph("--format", "dot").stdout
    assert "  pol_ColorPolicy_app_p3 -> gateway_app_g2 [style=dashed" in dot


def test_rules_flag_draws_rule_nodes() -> None:
    text = graph("--rules").stdout
    assert '    rule_app_r4_colors("rule colors")\n' in text
    assert "  route_app_r4 --> rule_app_r4_colors\n" in text
    assert "  rule_app_r4_colors --> backend_app_b2\n" in text
    assert "rule_" not in graph().stdout


def test_focus_keeps_ancestors_descendants_and_their_policies() -> None:
    text = graph("--focus", "httproute/app/r4").stdout
    declared = set(re.findall(rf"^\s+({_ID})[\[\(\{{]", text, re.M))
    assert {"gatewayclass_eg", "gateway_app_g2", "listener_app_g2_http", "route_app_r4", "backend_app_b2"} <= declared
    assert {"pol_ColorPolicy_app_p3", "pol_ColorPolicy_app_p4", "pol_BackendTLSPolicy_app_b2_tls"} <= declared
    # Not in r4's neighbourhood: siblings, the other Gateway, their policies.
    assert not declared & {"route_app_r3", "gateway_app_g1", "backend_app_b1", "pol_ColorPolicy_app_p1", "pol_ColorPolicy_app_p2"}


def test_focus_on_a_rule_shows_rules() -> None:
    text = graph("--focus", "httproute/app/r4#colors").stdout
    assert "rule_app_r4_colors" in text


def test_depth_limits_the_hierarchy() -> None:
    text = graph("--focus", "gateway/app/g1", "--depth", "1").stdout
    declared = set(re.findall(rf"^\s+({_ID})[\[\(\{{]", text, re.M))
    assert {"gatewayclass_eg", "gateway_app_g1", "listener_app_g1_http"} <= declared
    assert "route_app_r1" not in declared
    roots = graph("--depth", "0").stdout
    assert "gateway_app_g1" not in roots and "gatewayclass_eg" in roots


def test_unknown_focus_exits_2() -> None:
    result = graph("--focus", "httproute/app/r9")
    assert result.exit_code == 2
    assert result.stdout == ""
    assert "no HTTPRoute/app/r9 in the input; did you mean" in result.stderr


def test_output_does_not_depend_on_input_order() -> None:
    forward = CliRunner().invoke(cli, ["graph", f"{INPUT}/topology.yaml", f"{INPUT}/policies.yaml", "--profile", PROFILE])
    backward = CliRunner().invoke(cli, ["graph", f"{INPUT}/policies.yaml", f"{INPUT}/topology.yaml", "--profile", PROFILE])
    assert forward.exit_code == backward.exit_code == 0
    assert forward.stdout == backward.stdout


def test_bundled_example_draws(tmp_path: Path) -> None:
    for fmt, check in (("mermaid", assert_valid_mermaid), ("dot", assert_valid_dot)):
        result = CliRunner().invoke(cli, ["graph", "examples/", "--format", fmt])
        assert result.exit_code == 0, result.stderr
        check(result.stdout)


def test_the_readme_shows_real_output() -> None:
    """The README's Mermaid example is the output of the command it names, on examples/."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    marker = "(`policylint graph examples/ --focus httproute/team-a/storefront`):\n\n```mermaid\n"
    assert marker in readme, "README section Graph lost its example"
    shown = readme.split(marker, 1)[1].split("```", 1)[0]
    result = CliRunner().invoke(cli, ["graph", "examples/", "--focus", "httproute/team-a/storefront"])
    assert result.exit_code == 0
    assert shown == result.stdout, "README Graph example is stale: paste the output of the command again"
    assert_valid_mermaid(shown)
