"""`policylint graph`: golden Mermaid and DOT, their syntax, styling by status, --focus and --depth.

The inputs are the one of tests/commands/test_explain.py (tests/explain/input/) and tests/graph/input/
(a policy accepted on one of its two targets, a parentRef no listener admits, one whose Gateway
is not there, a backendRef with no ReferenceGrant). The expected output is in
tests/graph/golden/; regenerate with `pytest tests/commands/test_graph.py --update-golden` and review.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from policylint.cli import cli
from policylint.commands.graph import Graph, mermaid
from policylint.commands.graph_status import TargetState, policy_state
from policylint.vocabulary import Accepted, Enforcement
from tests.lintutil import ROOT

INPUT = "tests/explain/input"
PROFILE = "tests/explain/colorpolicy-profile.yaml"
STATUS = "tests/graph/input"
GOLDEN = ROOT / "tests" / "graph" / "golden"

CASES = [
    ("full.mmd", ()),
    ("full.dot", ("--format", "dot")),
    ("rules.mmd", ("--rules",)),
    ("focus-r4.mmd", ("--focus", "httproute/app/r4")),
    ("focus-p1.dot", ("--focus", "colorpolicy/app/p1", "--format", "dot")),
    ("focus-g1-depth1.mmd", ("--focus", "gateway/app/g1", "--depth", "1")),
    ("depth1.mmd", ("--depth", "1")),
    # Mixed status, broken and denied references, and the legend for them.
    ("status.mmd", ("--input", STATUS)),
    ("status.dot", ("--input", STATUS, "--format", "dot")),
    ("status-rules.mmd", ("--input", STATUS, "--rules")),
    ("status-focus-web.dot", ("--input", STATUS, "--focus", "httproute/shop/web", "--format", "dot")),
]


def graph(*args: str) -> Result:
    if args[:1] == ("--input",):
        return CliRunner().invoke(cli, ["graph", args[1], *args[2:]])
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
_MERMAID_EDGE = re.compile(rf"^  ({_ID}) (-->|-\.->|-\.-x)(\|{_LABEL}\|)? ({_ID})$")
_MERMAID_SUBGRAPH = re.compile(rf"^  subgraph {_ID}\[{_LABEL}\]$")
_MERMAID_CLASSDEF = re.compile(r"^  classDef [a-z]+ [a-z-]+:[^ ,]+(,[a-z-]+:[^,]+)*$")
_MERMAID_CLASS = re.compile(rf"^  class {_ID}(,{_ID})* ([a-z]+)$")
_MERMAID_LINKSTYLE = re.compile(r"^  linkStyle (\d+(?:,\d+)*) stroke:#[0-9a-f]{6},color:#[0-9a-f]{6}$")


def assert_valid_mermaid(text: str) -> None:
    """The subset of Mermaid flowchart syntax `graph` writes, checked line by line: GitHub renders
    it (ids are letters, digits and `_`; every label is quoted; entity codes for `"#<>&;|`)."""
    lines = text.splitlines()
    assert lines[0] == "flowchart LR"
    declared: set[str] = set()
    defined: set[str] = set()
    depth = 0
    links = 0
    styled: list[int] = []
    for line in lines[1:]:
        if node := _MERMAID_NODE.match(line):
            assert node.group(1) not in declared, f"node declared twice: {line}"
            declared.add(node.group(1))
            label = node.group(2)
            assert not re.search(r"[<>&|#;]", re.sub(r"#\d+;|<br/>", "", label)), f"unescaped character in {line}"
        elif edge := _MERMAID_EDGE.match(line):
            assert edge.group(1) in declared and edge.group(4) in declared, f"edge between undeclared nodes: {line}"
            links += 1
        elif link_style := _MERMAID_LINKSTYLE.match(line):
            styled += [int(n) for n in link_style.group(1).split(",")]
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
    # linkStyle counts the links from 0 in the order they are written; each is styled once.
    assert len(styled) == len(set(styled)) and all(0 <= n < links for n in styled)


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
    g.add_edge(GEdge("b", "a", "policy", '#sec "q"'))
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
    assert '  pol_RateLimitPolicy_infra_https_client_limits -.->|"Invalid"| listener_infra_shared_gw_https\n' in text


def test_policies_attach_to_their_targets_with_dashed_edges() -> None:
    text = graph().stdout
    assert '  pol_ColorPolicy_app_p3 -.->|"Accepted, Enforced"| gateway_app_g2\n' in text
    assert '  pol_ClientTrafficPolicy_app_g1_clients -.->|"Accepted, Enforced"| listener_app_g1_http\n' in text
    # A port section is not a node: the edge to its Service says which port.
    assert '  pol_BackendTLSPolicy_app_b2_tls -.->|"#35;https: Accepted, Enforced"| backend_app_b2\n' in text
    assert '  pol_BackendTLSPolicy_app_b2_tls_new -.->|"#35;https: Conflicted"| backend_app_b2\n' in text
    assert '  pol_ColorPolicy_app_p5 -.->|"TargetNotFound"| missing_HTTPRoute_app_r5\n' in text
    dot = graph("--format", "dot").stdout
    assert (
        '  pol_ColorPolicy_app_p3 -> gateway_app_g2 [style=dashed, arrowhead=open, color="#f9a825", label="Accepted, Enforced"'
        in dot
    )


def _explained(path: str, query: str, *extra: str) -> list[str]:
    """Each target of a policy as `explain --format json` states it: "Accepted, Enforced"."""
    result = CliRunner().invoke(cli, ["explain", query, path, *extra, "--format", "json"])
    assert result.exit_code == 0, result.stderr
    targets = json.loads(result.stdout)["policy"]["targets"]
    return [t["accepted"] + (f", {t['enforcement']}" if t["enforcement"] else "") for t in targets]


def _edge_labels(text: str, policy_id: str) -> list[str]:
    return [re.sub(r"^#35;\S+: | \(\w+\)$", "", m) for m in re.findall(rf'^  {policy_id} -\.->\|"([^"]*)"\|', text, re.M)]


@pytest.mark.parametrize(
    ("path", "query", "policy_id"),
    [
        (INPUT, "colorpolicy/app/p1", "pol_ColorPolicy_app_p1"),
        (INPUT, "backendtlspolicy/app/b2-tls-new", "pol_BackendTLSPolicy_app_b2_tls_new"),
        (INPUT, "clienttrafficpolicy/app/g1-clients-all", "pol_ClientTrafficPolicy_app_g1_clients_all"),
        (INPUT, "colorpolicy/app/p5", "pol_ColorPolicy_app_p5"),
        (STATUS, "backendtrafficpolicy/shop/shop-retries", "pol_BackendTrafficPolicy_shop_shop_retries"),
        (STATUS, "clienttrafficpolicy/infra/edge-timeouts", "pol_ClientTrafficPolicy_infra_edge_timeouts"),
    ],
)
def test_each_edge_states_what_explain_states_for_its_target(path: str, query: str, policy_id: str) -> None:
    extra = ("--profile", PROFILE) if path == INPUT else ()
    text = CliRunner().invoke(cli, ["graph", path, *extra]).stdout
    assert _edge_labels(text, policy_id) == _explained(path, query, *extra)


def test_a_policy_accepted_on_some_targets_shows_the_mix() -> None:
    """shop-retries: HTTPRoute web Accepted and Enforced, its rule `checkout` not found. Neither
    Invalid (red) nor Enforced: "1 of 2 targets accepted", and each edge its own status."""
    text = graph("--input", STATUS).stdout
    classes = _classes(text)
    assert classes["pol_BackendTrafficPolicy_shop_shop_retries"] == "mixed"
    assert '{{"BackendTrafficPolicy<br/>shop-retries<br/>1 of 2 targets accepted"}}' in text
    assert '  pol_BackendTrafficPolicy_shop_shop_retries -.->|"Accepted, Enforced"| route_shop_web\n' in text
    assert (
        '  pol_BackendTrafficPolicy_shop_shop_retries -.->|"#35;checkout: TargetNotFound (SectionNotFound)"| route_shop_web\n'
    ) in text
    assert classes["pol_ClientTrafficPolicy_infra_edge_timeouts"] == "mixed"
    assert '  pol_ClientTrafficPolicy_infra_edge_timeouts -.->|"TargetNotFound"| missing_Gateway_infra_gone\n' in text
    dot = graph("--input", STATUS, "--format", "dot").stdout
    assert 'label="BackendTrafficPolicy\\nshop-retries\\n1 of 2 targets accepted", shape=hexagon, style="dashed,filled"' in dot


def _state(accepted: Accepted, enforcement: Enforcement | None, css: str) -> TargetState:
    return TargetState(accepted, enforcement, css)


@pytest.mark.parametrize(
    ("states", "css", "text"),
    [
        ([], "invalid", "no target"),
        ([_state(Accepted.ACCEPTED, Enforcement.ENFORCED, "enforced")] * 2, "enforced", "Enforced"),
        (
            [
                _state(Accepted.ACCEPTED, Enforcement.ENFORCED, "enforced"),
                _state(Accepted.ACCEPTED, Enforcement.OVERRIDDEN, "overridden"),
            ],
            "partial",
            "PartiallyEnforced",
        ),
        (
            [_state(Accepted.ACCEPTED, Enforcement.OVERRIDDEN, "overridden"), _state(Accepted.ACCEPTED, None, "inert")],
            "overridden",
            "Overridden",
        ),
        ([_state(Accepted.ACCEPTED, None, "inert")], "inert", "reaches no traffic"),
        (
            [_state(Accepted.ACCEPTED, Enforcement.ENFORCED, "enforced"), _state(Accepted.CONFLICTED, None, "conflicted")],
            "mixed",
            "1 of 2 targets accepted",
        ),
        ([_state(Accepted.CONFLICTED, None, "conflicted")] * 2, "conflicted", "Conflicted"),
        (
            [_state(Accepted.INVALID, None, "invalid"), _state(Accepted.TARGET_NOT_FOUND, None, "invalid")],
            "invalid",
            "Invalid, TargetNotFound",
        ),
    ],
)
def test_a_policy_node_from_its_targets(states: list[TargetState], css: str, text: str) -> None:
    state = policy_state(states)
    assert (state.css, state.text) == (css, text)


def test_broken_parent_refs_and_denied_backend_refs_are_drawn_with_their_reason() -> None:
    text = graph("--input", STATUS).stdout
    # Listener `internal` admits routes of namespace infra only: the check that failed.
    assert '  listener_infra_edge_internal -.-x|"NotAllowedByListeners: Namespace"| route_shop_admin\n' in text
    # A parent not in the input is drawn as missing.
    assert '  missing_Gateway_infra_legacy -.-x|"ParentNotFound"| route_shop_old\n' in text
    assert '    missing_Gateway_infra_legacy["Gateway<br/>legacy<br/>not found"]\n' in text
    # The Service exists; the reference to it is refused: drawn as itself, not as missing.
    assert '  route_shop_web -.-x|"RefNotPermitted: no ReferenceGrant"| backend_billing_ledger\n' in text
    assert "missing_Service" not in text
    # Traffic does not flow along them: they are no hierarchy edges.
    assert "  route_shop_web --> backend_billing_ledger\n" not in text
    assert "  listener_infra_edge_internal --> route_shop_admin\n" not in text
    # With --rules the backendRef starts at its rule.
    rules = graph("--input", STATUS, "--rules").stdout
    assert '  rule_shop_web_main -.-x|"RefNotPermitted: no ReferenceGrant"| backend_billing_ledger\n' in rules
    dot = graph("--input", STATUS, "--format", "dot").stdout
    assert (
        '  listener_infra_edge_internal -> route_shop_admin [style=dashed, arrowhead=tee, color="#c62828",'
        ' label="NotAllowedByListeners: Namespace", fontcolor="#c62828"];\n'
    ) in dot


SECTION_NOT_FOUND = """\
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: eg}
spec: {controllerName: gateway.envoyproxy.io/gatewayclass-controller}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: edge, namespace: infra}
spec:
  gatewayClassName: eg
  listeners:
  - {name: http, protocol: HTTP, port: 80, allowedRoutes: {namespaces: {from: All}}}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: web, namespace: shop}
spec:
  parentRefs:
  - {name: edge, namespace: infra, sectionName: https}
"""


def test_a_broken_parent_ref_drawn_from_its_parent_names_its_section(tmp_path: Path) -> None:
    # No listener `https`: the edge starts at the Gateway, so its label says which section the
    # route named (before: "NoMatchingParent" alone).
    (tmp_path / "in.yaml").write_text(SECTION_NOT_FOUND)
    text = CliRunner().invoke(cli, ["graph", str(tmp_path / "in.yaml")]).stdout
    assert '  gateway_infra_edge -.-x|"#35;https: NoMatchingParent"| route_shop_web\n' in text
    dot = CliRunner().invoke(cli, ["graph", str(tmp_path / "in.yaml"), "--format", "dot"]).stdout
    assert 'label="#https: NoMatchingParent"' in dot


def test_focus_keeps_the_references_that_do_not_hold() -> None:
    declared = set(re.findall(rf"^\s+({_ID})[\[\(\{{]", graph("--input", STATUS, "--focus", "httproute/shop/web").stdout, re.M))
    assert "backend_billing_ledger" in declared  # the backend it may not reach
    assert "route_shop_admin" not in declared  # refused by its Gateway's other listener: not web's
    declared = set(re.findall(rf"^\s+({_ID})[\[\(\{{]", graph("--input", STATUS, "--focus", "gateway/infra/edge").stdout, re.M))
    assert "route_shop_admin" in declared  # the route its listener refused
    assert "route_shop_old" not in declared  # refused by another Gateway


def _legend(text: str) -> list[str]:
    block = text.split('  subgraph legend["legend"]\n', 1)[1].split("  end\n", 1)[0]
    return [re.sub(r"^\s+legend_(\w+).*$", r"\1", line) for line in block.splitlines()]


def test_the_legend_names_the_styles_the_picture_uses() -> None:
    assert _legend(graph("--input", STATUS).stdout) == ["mixed", "missing", "edge_hierarchy", "edge_policy", "edge_broken"]
    assert _legend(graph().stdout) == [
        "enforced",
        "partial",
        "overridden",
        "conflicted",
        "invalid",
        "missing",
        "edge_hierarchy",
        "edge_policy",
    ]
    text = graph("--input", STATUS).stdout
    assert '    legend_mixed{{"policy accepted on some of its targets only"}}\n' in text
    assert (
        "  class pol_ClientTrafficPolicy_infra_edge_timeouts,pol_BackendTrafficPolicy_shop_shop_retries,legend_mixed mixed\n"
        in text
    )
    dot = graph("--input", STATUS, "--format", "dot").stdout
    assert "  subgraph cluster_legend {\n" in dot
    assert (
        '    legend_edge_broken [label="dashed, crossed: a parentRef not admitted or a backendRef refused, with the reason"'
        in dot
    )


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


def test_graph_reads_context_paths_as_check_does(tmp_path: Path) -> None:
    from tests.commands.test_explain import CONTEXT_BASE, CONTEXT_POLICY

    (tmp_path / "base.yaml").write_text(CONTEXT_BASE, encoding="utf-8")
    (tmp_path / "policy.yaml").write_text(CONTEXT_POLICY, encoding="utf-8")
    alone = CliRunner().invoke(cli, ["graph", str(tmp_path / "policy.yaml")])
    with_context = CliRunner().invoke(cli, ["graph", str(tmp_path / "policy.yaml"), "--context", str(tmp_path / "base.yaml")])
    assert with_context.exit_code == 0, with_context.stderr
    assert "gateway_default_eg" not in alone.stdout
    assert '-.->|"Accepted, Enforced"| gateway_default_eg' in with_context.stdout
