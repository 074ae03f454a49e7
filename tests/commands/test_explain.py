"""`policylint explain`: golden output, the JSON schema, GEP-713 Example 3, arguments and exit codes.

The input is tests/explain/input/ (the topology of GEP-713 Examples 2 and 3, Example 3's
ColorPolicies described by tests/explain/colorpolicy-profile.yaml, two conflicting
BackendTLSPolicies and two Envoy Gateway ClientTrafficPolicies). The expected output is in
tests/explain/golden/; after an intended change regenerate it with
`pytest tests/commands/test_explain.py --update-golden` and review the diff.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from policylint.cli import cli
from policylint.commands.explain import ExplainError, parse_query
from tests.lintutil import ROOT

INPUT = "tests/explain/input"
PROFILE = "tests/explain/colorpolicy-profile.yaml"
GOLDEN = ROOT / "tests" / "explain" / "golden"

# (golden name, object): a route (Example 3 outcome 4 and a None conflict), a backend reached
# in three contexts (outcomes 1-3), a listener section, and two policies.
CASES = [
    ("route-r4", "HTTPRoute/app/r4"),
    ("service-b1", "service/app/b1"),
    ("listener-g1-http", "Gateway/app/g1#http"),
    ("policy-p1", "colorpolicy/app/p1"),
    ("policy-b2-tls-new", "BackendTLSPolicy.gateway.networking.k8s.io/app/b2-tls-new"),
]


def explain(*args: str) -> Result:
    return CliRunner().invoke(cli, ["explain", *args])


def explain_input(target: str, *args: str) -> Result:
    return explain(target, INPUT, "--profile", PROFILE, *args)


def as_json(target: str, *args: str) -> dict[str, Any]:
    result = explain_input(target, "--format", "json", *args)
    assert result.exit_code == 0, result.stderr
    document: dict[str, Any] = json.loads(result.stdout)
    assert_valid(document)
    return document


_VALIDATOR: list[Any] = []


def assert_valid(document: dict[str, Any]) -> None:
    if not _VALIDATOR:
        from jsonschema import Draft202012Validator

        from policylint.resources import load_schema

        schema = load_schema("explain.schema.json")
        Draft202012Validator.check_schema(schema)
        _VALIDATOR.append(Draft202012Validator(schema))
    errors = sorted(_VALIDATOR[0].iter_errors(document), key=lambda e: list(e.absolute_path))
    assert not errors, "explain output does not match schemas/explain.schema.json:\n" + "\n".join(
        f"  at /{'/'.join(str(p) for p in e.absolute_path)}: {e.message}" for e in errors
    )


@pytest.fixture(autouse=True)
def _in_the_repository(monkeypatch: pytest.MonkeyPatch) -> None:
    # Relative paths in, relative paths out: the golden files hold no machine paths.
    monkeypatch.chdir(ROOT)


# -- golden ----------------------------------------------------------------------------------


@pytest.mark.parametrize("fmt", ["text", "json"])
@pytest.mark.parametrize(("name", "target"), CASES, ids=[c[0] for c in CASES])
def test_golden(name: str, target: str, fmt: str, update_golden: bool) -> None:
    result = explain_input(target, "--format", fmt)
    assert result.exit_code == 0, result.stderr
    assert result.stderr == ""
    if fmt == "json":
        assert_valid(json.loads(result.stdout))
    path = GOLDEN / f"{name}.{'txt' if fmt == 'text' else 'json'}"
    if update_golden:
        path.write_text(result.stdout, encoding="utf-8")
    assert result.stdout == path.read_text(encoding="utf-8"), (
        f"{path.name} is stale: run pytest {__file__} --update-golden and review"
    )


def test_golden_json_files_are_valid() -> None:
    files = sorted(GOLDEN.glob("*.json"))
    assert len(files) == len(CASES)
    for path in files:
        assert_valid(json.loads(path.read_text(encoding="utf-8")))


def test_the_schema_rejects_what_it_should() -> None:
    from jsonschema import Draft202012Validator

    from policylint.resources import load_schema

    validator = Draft202012Validator(load_schema("explain.schema.json"))
    good = as_json("HTTPRoute/app/r4")
    assert validator.is_valid(good)
    broken = json.loads(json.dumps(good))
    broken["policyKinds"][0]["results"][0]["values"][0]["source"]["extra"] = 1
    assert not validator.is_valid(broken)
    broken = json.loads(json.dumps(good))
    del broken["affectedBy"]
    assert not validator.is_valid(broken)
    broken = json.loads(json.dumps(good))
    broken["type"] = "policy"
    assert not validator.is_valid(broken)


def test_output_does_not_depend_on_input_order() -> None:
    forward = explain("service/app/b1", f"{INPUT}/topology.yaml", f"{INPUT}/policies.yaml", "--profile", PROFILE)
    backward = explain("service/app/b1", f"{INPUT}/policies.yaml", f"{INPUT}/topology.yaml", "--profile", PROFILE)
    assert forward.exit_code == backward.exit_code == 0
    assert forward.stdout == backward.stdout


# -- what it says: GEP-713 Example 3 ("Merged specs") ----------------------------------------


def _kind(document: dict[str, Any], kind: str) -> dict[str, Any]:
    return next(k for k in document["policyKinds"] if k["kind"] == kind)


def _provenance(result: dict[str, Any]) -> dict[str, str]:
    return {v["key"]: v["source"]["name"] for v in result["values"]}


def test_route_r4_gets_dark_from_p4_and_light_from_p3_over_p4() -> None:
    # Outcome 4: "g2 > r4 > b2 must be colored dark:olive,light:yellow (patch overrides specified
    # by p3 beats more specific policy p4, which still extends the spec with a specific value for dark".
    document = as_json("HTTPRoute/app/r4")
    colors = _kind(document, "ColorPolicy")
    assert colors["contextCount"] == 1
    (result,) = colors["results"]
    assert result["effective"] == {"colors": {"dark": "olive", "light": "yellow"}}
    assert _provenance(result) == {"colors.dark": "app/p4", "colors.light": "app/p3"}
    light = next(v for v in result["values"] if v["key"] == "colors.light")
    assert light["source"]["strategy"] == "Patch Overrides"
    assert light["source"]["node"]["label"] == "Gateway app/g2"
    assert light["source"]["field"] == "spec.overrides.colors.light"
    (loser,) = light["over"]
    assert (loser["name"], loser["value"], loser["strategy"]) == ("app/p4", "green", "Atomic Defaults")
    assert "override" in loser["reason"]
    assert [(e["name"], e["status"]) for e in result["affectedBy"]] == [("app/p3", "Enforced"), ("app/p4", "PartiallyEnforced")]
    assert result["shadowed"] == []
    # Outcome 6, seen from the route: b2 is affected by p3 and p4 (and by the older BackendTLSPolicy).
    assert [f"{p['kind']} {p['name']}" for p in document["affectedBy"]] == [
        "BackendTLSPolicy b2-tls",
        "ColorPolicy p3",
        "ColorPolicy p4",
    ]


def test_conflicted_policy_is_shadowed_with_the_winner_and_why() -> None:
    tls = _kind(as_json("HTTPRoute/app/r4"), "BackendTLSPolicy")
    (result,) = tls["results"]
    (shadowed,) = result["shadowed"]
    assert (shadowed["name"], shadowed["status"], shadowed["beatenBy"]) == ("app/b2-tls-new", "Conflicted", ["app/b2-tls"])
    assert "older: 2025-01-10T08:00:00Z < 2025-02-20T08:00:00Z" in shadowed["reason"]
    hostname = next(v for v in result["values"] if v["key"] == "validation.hostname")
    assert hostname["value"] == "b2.app.svc.cluster.local"
    assert [o["name"] for o in hostname["over"]] == ["app/b2-tls-new"]


def test_backend_b1_gets_three_specs_in_three_contexts() -> None:
    # Outcomes 1-3 and 5: b1 is reached through r1, r2 and r3, and affected by p1, p2 and p3.
    document = as_json("service/app/b1")
    colors = _kind(document, "ColorPolicy")
    assert colors["contextCount"] == 3
    by_route = {r["contexts"][0]["path"][3]["name"]: r for r in colors["results"]}
    assert by_route["r1"]["effective"] == {"colors": {"light": "blue"}}  # dark: UNDEFINED
    assert by_route["r2"]["effective"] == {"colors": {"dark": "brown", "light": "red"}}
    assert by_route["r3"]["effective"] == {"colors": {"light": "yellow"}}
    # Outcome 1: p1's atomic defaults are replaced whole by p2, so p1 is shadowed in that context.
    (shadowed,) = by_route["r1"]["shadowed"]
    assert (shadowed["name"], shadowed["status"], shadowed["beatenBy"]) == ("app/p1", "Overridden", ["app/p2"])
    assert {v["key"] for v in shadowed["values"]} == {"colors.dark", "colors.light"}
    names = [f"{p['kind']} {p['name']}" for p in document["affectedBy"]]
    assert [n for n in names if n.startswith("ColorPolicy")] == ["ColorPolicy p1", "ColorPolicy p2", "ColorPolicy p3"]


def test_listener_level_kind_is_shown_above_a_backend() -> None:
    # ClientTrafficPolicy is effective at the listener: b1's traffic passes g1's listener `http`.
    ctp = _kind(as_json("service/app/b1"), "ClientTrafficPolicy")
    (result,) = ctp["results"]
    (context,) = result["contexts"]
    assert context["containsObject"] is False
    assert context["label"] == "GatewayClass eg > Gateway app/g1 > #http"
    assert [e["name"] for e in result["shadowed"]] == ["app/g1-clients-all"]


def test_policy_p1_reaches_two_contexts_and_is_partially_enforced() -> None:
    # Outcome 7: "p1 must be reported as partially enforced, due to in some cases atomically beaten by p2".
    document = as_json("colorpolicy/app/p1")
    assert document["type"] == "policy"
    (target,) = document["policy"]["targets"]
    assert (target["accepted"], target["enforcement"], target["beatenBy"]) == ("Accepted", "PartiallyEnforced", ["app/p2"])
    assert target["contextCount"] == 2
    assert target["statusCounts"] == {"enforced": 1, "partiallyEnforced": 0, "overridden": 1, "conflicted": 0}
    assert [(c["status"], c["path"][3]["name"]) for c in target["contexts"]] == [("Overridden", "r1"), ("Enforced", "r2")]
    assert target["affects"]["contexts"] == 1
    assert document["policy"]["affects"]["contexts"] == 1


def test_policy_with_missing_target() -> None:
    document = as_json("colorpolicy/app/p5")
    (target,) = document["policy"]["targets"]
    assert (target["accepted"], target["detail"], target["node"], target["contexts"]) == (
        "TargetNotFound",
        "ObjectNotFound",
        None,
        [],
    )
    text = explain_input("colorpolicy/app/p5").stdout
    assert "target HTTPRoute app/r5 (spec.targetRefs[0]): TargetNotFound" in text


def test_limit_caps_the_listed_contexts_but_not_the_counts() -> None:
    document = as_json("colorpolicy/app/p1", "--limit", "1")
    (target,) = document["policy"]["targets"]
    assert (target["contextCount"], len(target["contexts"]), target["omitted"]) == (2, 1, 1)
    text = explain_input("colorpolicy/app/p1", "--limit", "1").stdout
    assert "    ... and 1 more\n" in text
    unlimited = as_json("gateway/app/g2", "--limit", "0")
    assert all(r["omitted"] == 0 for k in unlimited["policyKinds"] for r in k["results"])


def test_object_no_policy_reaches() -> None:
    result = explain_input("gatewayclass/eg")  # KIND/NAME for a cluster-scoped kind
    assert result.exit_code == 0, result.stderr
    assert result.stdout.startswith("GatewayClass eg  (tests/explain/input/topology.yaml:3)\n")


# -- naming the object ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "spelling",
    [
        "HTTPRoute/app/r4",
        "httproute/app/r4",
        "HTTPROUTE/app/r4",
        "HTTPRoute.gateway.networking.k8s.io/app/r4",
        "HTTPRoute app/r4",
    ],
)
def test_kind_spellings(spelling: str) -> None:
    assert as_json(spelling)["object"]["name"] == "r4"


def test_kind_slash_name_uses_the_namespace_option() -> None:
    assert as_json("httproute/r4", "--namespace", "app")["object"]["namespace"] == "app"
    result = explain_input("httproute/r4")
    assert result.exit_code == 2
    assert "no HTTPRoute/default/r4 in the input" in result.stderr


def test_sections() -> None:
    assert as_json("httproute/app/r4#colors")["node"]["label"] == "HTTPRoute app/r4#colors"
    assert as_json("httproute/app/r1#rules[0]")["node"]["label"] == "HTTPRoute app/r1#rules[0]"
    assert as_json("service/app/b2#https")["node"]["level"] == "port"


@pytest.mark.parametrize(
    ("target", "message"),
    [
        ("HTTPRoute/app/r44", "no HTTPRoute/app/r44 in the input; did you mean HTTPRoute/app/r4"),
        ("HTTPRoutes/app/r4", "no object of kind HTTPRoutes in the input; did you mean HTTPRoute"),
        ("HTTPRoute.example.com/app/r4", "no object of kind HTTPRoute.example.com in the input"),
        ("Gateway/app/g1#https", "Gateway app/g1 has no listener 'https' (its listeners: http); did you mean http?"),
        ("Service/app/b1#grpc", "Service app/b1 has no port 'grpc' (its ports: http)"),
        ("ColorPolicy/app/p1#x", "has no sections"),
        ("HTTPRoute", "is not KIND/NAMESPACE/NAME[#section] or KIND/NAME[#section]"),
        ("HTTPRoute/a/b/c", "is not KIND/NAMESPACE/NAME"),
        ("HTTPRoute/app/r4#", "nothing after '#'"),
    ],
)
def test_bad_objects_exit_2_with_a_message(target: str, message: str) -> None:
    result = explain_input(target)
    assert result.exit_code == 2
    assert result.stdout == ""
    assert message in result.stderr
    assert result.stderr.startswith("policylint: error: ")


def test_ambiguous_kind_asks_for_the_group(tmp_path: Path) -> None:
    widgets = "".join(
        f"---\napiVersion: {group}/v1\nkind: Widget\nmetadata:\n  name: w\n  namespace: app\n"
        for group in ("a.example.com", "b.example.com")
    )
    (tmp_path / "w.yaml").write_text(widgets)
    result = explain("widget/app/w", str(tmp_path))
    assert result.exit_code == 2
    assert "Widget is ambiguous: name the group, e.g. Widget.a.example.com/app/w or Widget.b.example.com/app/w" in result.stderr
    result = explain("widget.b.example.com/app/w", str(tmp_path), "--format", "json")
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout)["object"]["apiVersion"] == "b.example.com/v1"


def test_paths_default_to_the_current_directory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("topology.yaml", "policies.yaml"):
        (tmp_path / name).write_text((ROOT / INPUT / name).read_text())
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(cli, ["explain", "httproute/app/r4", "--profile", str(ROOT / PROFILE)])
    assert result.exit_code == 0, result.stderr
    assert 'colors.light: "yellow"' in result.stdout


def test_usage_errors_exit_2(tmp_path: Path) -> None:
    assert explain("httproute/app/r4", str(tmp_path / "missing")).exit_code == 2
    assert explain_input("httproute/app/r4", "--format", "yaml").exit_code == 2
    assert explain().exit_code == 2


def test_input_problems_are_noted_on_stderr(tmp_path: Path) -> None:
    (tmp_path / "m.yaml").write_text((ROOT / INPUT / "topology.yaml").read_text() + "---\nbroken: [\n")
    result = explain("httproute/app/r4", str(tmp_path))
    assert result.exit_code == 0
    assert "input problem" in result.stderr
    assert "policylint check" in result.stderr


def test_parse_query() -> None:
    q = parse_query("HTTPRoute.gateway.networking.k8s.io/ns/name#rule")
    assert (q.kind, q.group, q.namespace, q.name, q.section) == ("HTTPRoute", "gateway.networking.k8s.io", "ns", "name", "rule")
    q = parse_query("gatewayclass/eg")
    assert (q.kind, q.group, q.namespace, q.name, q.section) == ("gatewayclass", None, None, "eg", None)
    assert parse_query("Service.core/ns/web").group == ""  # the core group
    with pytest.raises(ExplainError):
        parse_query("a//b")


def test_the_readme_shows_real_output() -> None:
    """The README's `explain` example is the output of the command it shows, on examples/."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    marker = "$ policylint explain httproute/team-a/storefront#checkout examples/\n"
    assert marker in readme, "README section Explain lost its example"
    shown = readme.split(marker, 1)[1].split("```", 1)[0]
    result = explain("httproute/team-a/storefront#checkout", "examples/")
    assert result.exit_code == 0
    assert shown == result.stdout, "README Explain example is stale: paste the output of the command again"


def test_a_policy_the_api_server_refuses_applies_on_no_target() -> None:
    """examples/: RateLimitPolicy infra/https-client-limits, refused by Kuadrant's CRD (defaults and
    overrides together), targets a listener that carries traffic: the explanation says why it is
    Invalid and that it takes part in no context, not that no traffic passes there."""
    result = explain("ratelimitpolicy/infra/https-client-limits", "examples/")
    assert result.exit_code == 0
    assert "strategy: none (it applies on no target)" in result.stdout
    assert "target Gateway infra/shared-gw#https (spec.targetRef): Invalid\n" in result.stdout
    assert "rejected by the API server: spec: Overrides and explicit defaults are mutually exclusive" in result.stdout
    assert "an Invalid policy takes part in no context" in result.stdout
    assert "no traffic path" not in result.stdout


def test_the_entry_point_returns_the_exit_codes(capsys: pytest.CaptureFixture[str]) -> None:
    from policylint.entry import main

    assert main(["explain", "httproute/app/r4", INPUT, "--profile", PROFILE]) == 0
    assert capsys.readouterr().out.startswith("HTTPRoute app/r4  (")
    assert main(["explain", "httproute/app/nope", INPUT, "--profile", PROFILE]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert "no HTTPRoute/app/nope in the input" in captured.err
    assert main(["graph", INPUT, "--profile", PROFILE, "--focus", "nope/x"]) == 2


def test_order_sensitive_outcome_shows_the_alternative(tmp_path: Path) -> None:
    # No creationTimestamp, so only the name tie-break decides between a and b
    # (docs/semantics.md#missing-creation-timestamps).
    (tmp_path / "topology.yaml").write_text((ROOT / INPUT / "topology.yaml").read_text())
    policy = "---\napiVersion: example.com/v1\nkind: ColorPolicy\nmetadata: {{name: {name}, namespace: app}}\nspec:\n"
    policy += "  targetRefs: [{{group: gateway.networking.k8s.io, kind: Gateway, name: g1}}]\n  colors: {colors}\n"
    (tmp_path / "p.yaml").write_text(
        policy.format(name="a", colors="{light: red}") + policy.format(name="b", colors="{light: blue, dark: black}")
    )
    result = explain("httproute/app/r2", str(tmp_path), "--profile", PROFILE, "--format", "json")
    assert result.exit_code == 0, result.stderr
    document = json.loads(result.stdout)
    assert_valid(document)
    (colors,) = document["policyKinds"]
    (result_group,) = colors["results"]
    assert result_group["effective"] == {"colors": {"dark": "black", "light": "blue"}}
    (note,) = result_group["orderSensitive"]
    assert note == {
        "policies": ["app/a", "app/b"],
        "decidedBy": "name",
        "keys": ["colors.dark", "colors.light"],
        "alternative": {"colors": {"light": "red"}},
    }
    light = next(v for v in result_group["values"] if v["key"] == "colors.light")
    assert "tie-break: app/a sorts before app/b; no creationTimestamp" in light["over"][0]["reason"]
    text = explain("httproute/app/r2", str(tmp_path), "--profile", PROFILE).stdout
    assert "order-sensitive: app/a and app/b are ordered by name only" in text


CONTEXT_BASE = """\
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: eg}
spec: {controllerName: gateway.envoyproxy.io/gatewayclass-controller}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: eg, namespace: default}
spec:
  gatewayClassName: eg
  listeners:
  - {name: http, port: 80, protocol: HTTP}
"""

CONTEXT_POLICY = """\
apiVersion: gateway.envoyproxy.io/v1alpha1
kind: ClientTrafficPolicy
metadata: {name: timeouts, namespace: default}
spec:
  targetRefs:
  - {group: gateway.networking.k8s.io, kind: Gateway, name: eg}
  timeout: {http: {idleTimeout: 5s}}
"""


def test_explain_reads_context_paths_as_check_does(tmp_path: Path) -> None:
    # The policy's Gateway lives in a base the linted file is applied over (`--context`).
    (tmp_path / "base.yaml").write_text(CONTEXT_BASE, encoding="utf-8")
    (tmp_path / "policy.yaml").write_text(CONTEXT_POLICY, encoding="utf-8")
    args = ["clienttrafficpolicy/default/timeouts", str(tmp_path / "policy.yaml"), "--format", "json"]
    alone = json.loads(explain(*args).stdout)
    with_context = json.loads(explain(*args, "--context", str(tmp_path / "base.yaml")).stdout)
    assert alone["policy"]["affects"]["gateways"] == 0
    assert with_context["policy"]["affects"]["gateways"] == 1
    assert with_context["policy"]["affects"]["listeners"] == 1
