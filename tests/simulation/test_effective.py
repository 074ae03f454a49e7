"""The effective-policy simulation (policylint/semantics/effective/simulation.py).

First the three GEP-713 "End-to-end examples", outcome by outcome, as GEP-713 numbers them
(data in tests/effective/: Example 1 in gep713-example-1/, Examples 2 and 3 are acceptance
scenarios S02 and S03, docs/semantics.md#acceptance-scenarios). Then the decisions of the module docstring and docs/effective-policy.md that the
examples do not reach, each on a small topology written here.

Status names are GEP-713's (docs/semantics.md#status-vocabulary): "enforced" -> Enforced, "partially enforced" ->
PartiallyEnforced, "NOT enforced, due to conflict" -> Accepted=False reason Conflicted,
"NOT enforced, due to being overridden" -> Overridden.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from benchmarks.generate import write_corpus
from policylint.findings import Severity
from policylint.k8s.objects import ObjectKey
from policylint.semantics.effective.facets import NodeKey, TargetStatus, node_label
from policylint.semantics.effective.merge import untag
from policylint.semantics.effective.simulation import Simulation, path_label
from policylint.vocabulary import Enforcement
from tests.lintutil import ROOT, lint_paths, lint_text, only
from tests.simulation.test_scenarios_effective import (
    Run,
    affected_by,
    context_label,
    contexts_of,
    effective_values,
    engine_backends_affected_by,
    policy_entry,
    provenance,
    run,
    scenario,
)

GW = "gateway.networking.k8s.io"


def status(run_: Run, policy: str) -> dict[str, Any]:
    (target,) = policy_entry(run_, policy)["targets"]
    return target


def affected(run_: Run, obj: str) -> set[str]:
    """Both readings must agree: contributing policies per context, and policy_affects()."""
    by_context = affected_by(run_, obj)
    assert engine_backends_affected_by(run_, obj) == by_context
    return by_context


# ---------------------------------------------------------------------------------------------
# GEP-713 End-to-end examples
# ---------------------------------------------------------------------------------------------


def test_gep713_example_1_direct_policy() -> None:
    run_, _ = scenario("gep713-example-1")
    # 1. All traffic directed to Backend b1 must be colored red.
    assert effective_values(run_, "ColorPolicy") == {"g1>r1>b1": {"color": "red"}}
    # 2. Status of Backend b1 should be reported as affected by the ColorPolicy p1.
    assert affected(run_, "Service app/b1") == {"ColorPolicy app/p1"}
    # 3. Status of Backend b2 should NOT be reported as affected by any policy.
    assert affected(run_, "Service app/b2") == set()
    # 4. Status of ColorPolicy p1 must be reported as enforced.
    assert status(run_, "ColorPolicy app/p1")["accepted"] == "Accepted"
    assert status(run_, "ColorPolicy app/p1")["enforcement"] == Enforcement.ENFORCED.label
    # 5. Status of ColorPolicy p2 must be reported as NOT enforced, due to conflict with p1.
    p2 = status(run_, "ColorPolicy app/p2")
    assert (p2["accepted"], p2["enforcement"], p2["beatenBy"]) == (Enforcement.CONFLICTED.label, None, ["app/p1"])
    (finding,) = [f for f in run_.result.findings if f.rule == "PL601"]
    assert str(finding.object) == "ColorPolicy app/p2"
    assert "already claimed by app/p1" in finding.message
    assert [f.rule for f in run_.result.findings] == ["PL601"]


def test_gep713_example_2_defaults_and_overrides() -> None:
    run_, _ = scenario("s02-gep713-example-2")
    values = effective_values(run_, "ColorPolicy")
    # 1. g1 > r1 > b1 blue (more specific p2 spec beats less specific defaults at p1).
    assert values["g1>r1>b1"] == {"color": "blue"}
    # 2. g1 > r2 > b1 red (implicit defaults specified at p1 not replaced by any other policy).
    assert values["g1>r2>b1"] == {"color": "red"}
    # 3. g2 > r3 > b1 yellow (overrides specified at p3 not replaced by any other policy).
    assert values["g2>r3>b1"] == {"color": "yellow"}
    # 4. g2 > r4 > b2 yellow (overrides specified at p3 beats more specific policy p4).
    assert values["g2>r4>b2"] == {"color": "yellow"}
    assert len(values) == 4
    # 5. b1 affected by p1, p2 and p3.  6. b2 affected by p3.
    assert affected(run_, "Service app/b1") == {"ColorPolicy app/p1", "ColorPolicy app/p2", "ColorPolicy app/p3"}
    assert affected(run_, "Service app/b2") == {"ColorPolicy app/p3"}
    # 7. p1 partially enforced, due to in some cases beaten by p2.
    assert (status(run_, "ColorPolicy app/p1")["enforcement"], status(run_, "ColorPolicy app/p1")["beatenBy"]) == (
        Enforcement.PARTIALLY_ENFORCED.label,
        ["app/p2"],
    )
    # 8. p2 enforced.  9. p3 enforced.
    assert status(run_, "ColorPolicy app/p2")["enforcement"] == Enforcement.ENFORCED.label
    assert status(run_, "ColorPolicy app/p3")["enforcement"] == Enforcement.ENFORCED.label
    # 10. p4 NOT enforced, due to being overridden by p3.
    assert (status(run_, "ColorPolicy app/p4")["enforcement"], status(run_, "ColorPolicy app/p4")["beatenBy"]) == (
        Enforcement.OVERRIDDEN.label,
        ["app/p3"],
    )
    # Blast radius of p3: g2>r3>b1 and g2>r4>b2.
    assert policy_entry(run_, "ColorPolicy app/p3")["affects"] == {
        "contexts": 2, "routes": 2, "rules": 2, "listeners": 1, "gateways": 1, "backends": 2,
    }  # fmt: skip


def test_gep713_example_3_merged_specs() -> None:
    run_, _ = scenario("s03-gep713-example-3")
    values = effective_values(run_, "ColorPolicy")
    # 1. g1 > r1 > b1: dark UNDEFINED, light blue (p2 beats p1's atomic defaults).
    assert values["g1>r1>b1"] == {"colors": {"light": "blue"}}
    # 2. g1 > r2 > b1: dark brown, light red.
    assert values["g1>r2>b1"] == {"colors": {"dark": "brown", "light": "red"}}
    # 3. g2 > r3 > b1: dark UNDEFINED, light yellow.
    assert values["g2>r3>b1"] == {"colors": {"light": "yellow"}}
    # 4. g2 > r4 > b2: dark olive, light yellow (p3's patch overrides beat p4, which still
    #    extends the spec with dark).
    assert values["g2>r4>b2"] == {"colors": {"dark": "olive", "light": "yellow"}}
    assert provenance(contexts_of(run_, "ColorPolicy")["g2>r4>b2"]) == {
        "colors.dark": "app/p4 default",
        "colors.light": "app/p3 override",
    }
    # 5. b1 affected by p1, p2 and p3.  6. b2 affected by p3 and p4.
    assert affected(run_, "Service app/b1") == {"ColorPolicy app/p1", "ColorPolicy app/p2", "ColorPolicy app/p3"}
    assert affected(run_, "Service app/b2") == {"ColorPolicy app/p3", "ColorPolicy app/p4"}
    # 7. p1 partially enforced.  8. p2 enforced.  9. p3 enforced.
    # 10. p4 partially enforced, due to being partially overridden by p3.
    assert {p: status(run_, f"ColorPolicy app/{p}")["enforcement"] for p in ("p1", "p2", "p3", "p4")} == {
        "p1": Enforcement.PARTIALLY_ENFORCED.label,
        "p2": Enforcement.ENFORCED.label,
        "p3": Enforcement.ENFORCED.label,
        "p4": Enforcement.PARTIALLY_ENFORCED.label,
    }
    assert status(run_, "ColorPolicy app/p4")["beatenBy"] == ["app/p3"]


# ---------------------------------------------------------------------------------------------
# Decisions and mechanics, on small topologies
# ---------------------------------------------------------------------------------------------

CLASS = """\
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: eg}
spec: {controllerName: example.com/gateway-controller}
"""


def gateway(name: str, *listeners: str) -> str:
    items = ", ".join(f"{{name: {n}, protocol: HTTP, port: {80 + i}}}" for i, n in enumerate(listeners or ("http",)))
    return f"""\
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {{name: {name}, namespace: app}}
spec:
  gatewayClassName: eg
  listeners: [{items}]
"""


def route(name: str, parent: str | None, *rules: tuple[str | None, str]) -> str:
    parents = f"\n  parentRefs: [{{name: {parent}}}]" if parent else ""
    body = "".join(
        f"\n  - {{{f'name: {rule}, ' if rule else ''}backendRefs: [{{name: {backend}, port: 80}}]}}" for rule, backend in rules
    )
    return f"""\
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {{name: {name}, namespace: app}}
spec:{parents}
  rules:{body}
"""


def service(name: str) -> str:
    return f"""\
---
apiVersion: v1
kind: Service
metadata: {{name: {name}, namespace: app}}
spec: {{ports: [{{port: 80}}]}}
"""


def color(name: str, targets: str, spec: str, stamp: str | None = None) -> str:
    meta = f"{{name: {name}, namespace: app{f', creationTimestamp: {stamp!r}' if stamp else ''}}}"
    return f"""\
---
apiVersion: example.com/v1
kind: ColorPolicy
metadata: {meta}
spec:
  targetRefs: [{targets}]
  {spec}
"""


def profile(tmp_path: Path, *, klass: str, effective: str, default: str, kinds: str) -> Path:
    path = tmp_path / "profile.yaml"
    path.write_text(
        f"""\
project: test-effective
policies:
  - group: example.com
    kind: ColorPolicy
    versions: [v1]
    class: {klass}
    boilerplate: gep713
    targets:
      list: targetRefs
      sectionName: true
      kinds: [{kinds}]
    merge:
      default: {default}
      defaults: defaults
      overrides: overrides
      strategyField: strategy
      strategies: {{atomic: atomic, patch: patch}}
      implicitDefaults: true
    effectiveTarget: {effective}
"""
    )
    return path


GW_ROUTE_KINDS = f"{{group: {GW}, kind: Gateway}}, {{group: {GW}, kind: HTTPRoute}}"


def lint_here(tmp_path: Path, text: str, prof: Path) -> Run:
    manifest = tmp_path / "input.yaml"
    manifest.write_text(text)
    return run([manifest], [prof])


def test_override_keeps_dictating_two_levels_down(tmp_path: Path) -> None:
    """Decision 1 of docs/effective-policy.md#decisions, "Overridden values are locked"
    (the original Policy Attachment page: overrides "enforce policy from the top down"). An
    atomic override on the Gateway holds against the route's defaults AND the rule's, two levels
    below; read literally, GEP-713's diagram would hand the last step to the route's Atomic
    Defaults and let the rule policy win."""
    prof = profile(tmp_path, klass="Inherited", effective="rule", default="atomic-defaults", kinds=GW_ROUTE_KINDS)
    text = (
        CLASS
        + gateway("g")
        + route("r", "g", ("one", "svc"), ("two", "svc"))
        + service("svc")
        + color("o", f"{{group: {GW}, kind: Gateway, name: g}}", "overrides: {color: yellow}")
        + color("d", f"{{group: {GW}, kind: HTTPRoute, name: r}}", "color: blue")
        + color("e", f"{{group: {GW}, kind: HTTPRoute, name: r, sectionName: one}}", "color: green")
    )
    run_ = lint_here(tmp_path, text, prof)
    assert effective_values(run_, "ColorPolicy", ("route", "rule")) == {
        "r>r#one": {"color": "yellow"},
        "r>r#two": {"color": "yellow"},
    }
    assert status(run_, "ColorPolicy app/o")["enforcement"] == Enforcement.ENFORCED.label
    assert status(run_, "ColorPolicy app/d")["enforcement"] == Enforcement.OVERRIDDEN.label
    assert status(run_, "ColorPolicy app/e")["enforcement"] == Enforcement.OVERRIDDEN.label
    assert status(run_, "ColorPolicy app/e")["beatenBy"] == ["app/o"]


def test_section_policy_beats_the_whole_object_policy_without_conflict(tmp_path: Path) -> None:
    """GEP-2648 "Section Names": the section policy has its entire spec applied to that section,
    the whole-object policy to all other sections — for a Direct kind too: no Conflicted."""
    prof = profile(tmp_path, klass="Direct", effective="listener", default="none", kinds=f"{{group: {GW}, kind: Gateway}}")
    text = (
        CLASS
        + gateway("g", "http", "admin")
        + color("whole", f"{{group: {GW}, kind: Gateway, name: g}}", "color: red")
        + color("section", f"{{group: {GW}, kind: Gateway, name: g, sectionName: admin}}", "color: blue")
    )
    run_ = lint_here(tmp_path, text, prof)
    assert effective_values(run_, "ColorPolicy", ("listener",)) == {"g#http": {"color": "red"}, "g#admin": {"color": "blue"}}
    assert status(run_, "ColorPolicy app/section")["enforcement"] == Enforcement.ENFORCED.label
    whole = status(run_, "ColorPolicy app/whole")
    assert (whole["accepted"], whole["enforcement"], whole["beatenBy"]) == (
        "Accepted",
        Enforcement.PARTIALLY_ENFORCED.label,
        ["app/section"],
    )
    assert not [f for f in run_.result.findings if f.rule == "PL601"]


def test_same_section_none_conflict_oldest_wins(tmp_path: Path) -> None:
    """GEP-713 None: the oldest wins even when its name sorts later."""
    prof = profile(tmp_path, klass="Direct", effective="listener", default="none", kinds=f"{{group: {GW}, kind: Gateway}}")
    target = f"{{group: {GW}, kind: Gateway, name: g, sectionName: http}}"
    text = (
        CLASS
        + gateway("g")
        + color("a-newer", target, "color: red", "2024-05-01T00:00:01Z")
        + color("z-older", target, "color: blue", "2024-05-01T00:00:00Z")
    )
    run_ = lint_here(tmp_path, text, prof)
    assert effective_values(run_, "ColorPolicy", ("listener",)) == {"g#http": {"color": "blue"}}
    assert status(run_, "ColorPolicy app/a-newer")["accepted"] == Enforcement.CONFLICTED.label
    assert status(run_, "ColorPolicy app/z-older")["enforcement"] == Enforcement.ENFORCED.label


def test_policy_on_two_nodes_of_one_path_counts_once_at_the_more_specific(tmp_path: Path) -> None:
    """Decision: "A policy attached at two nodes of one path counts once, at the more specific
    node" — it does not beat itself, and a more specific policy of another name still wins."""
    prof = profile(tmp_path, klass="Inherited", effective="route", default="patch-defaults", kinds=GW_ROUTE_KINDS)
    text = (
        CLASS
        + gateway("g")
        + route("r1", "g", (None, "svc"))
        + route("r2", "g", (None, "svc"))
        + service("svc")
        + color("both", f"{{group: {GW}, kind: Gateway, name: g}}, {{group: {GW}, kind: HTTPRoute, name: r1}}", "color: red")
    )
    run_ = lint_here(tmp_path, text, prof)
    contexts = contexts_of(run_, "ColorPolicy", ("gateway", "route"))
    assert {label: [f.node[0] for f in c.stack] for label, c in contexts.items()} == {"g>r1": ["route"], "g>r2": ["gateway"]}
    targets = policy_entry(run_, "ColorPolicy app/both")["targets"]
    assert [t["enforcement"] for t in targets] == [Enforcement.ENFORCED.label, Enforcement.ENFORCED.label]
    assert policy_entry(run_, "ColorPolicy app/both")["affects"]["contexts"] == 2


def test_service_no_route_uses_gets_its_own_context(tmp_path: Path) -> None:
    """docs/effective-policy.md: a targeted object no Gateway reaches gets contexts of its own
    when traffic can reach it at all (a Service no route in the repository uses)."""
    prof = profile(tmp_path, klass="Direct", effective="backend", default="none", kinds="{group: '', kind: Service}")
    text = CLASS + gateway("g") + service("lonely") + color("p", "{group: '', kind: Service, name: lonely}", "color: red")
    run_ = lint_here(tmp_path, text, prof)
    assert [path_label(c.path) for c in run_.contexts] == ["app/lonely"]
    assert status(run_, "ColorPolicy app/p")["enforcement"] == Enforcement.ENFORCED.label


def test_route_attached_to_nothing_has_no_context(tmp_path: Path) -> None:
    prof = profile(tmp_path, klass="Inherited", effective="route", default="atomic-defaults", kinds=GW_ROUTE_KINDS)
    text = CLASS + gateway("g") + route("orphan", None, (None, "svc")) + service("svc")
    text += color("p", f"{{group: {GW}, kind: HTTPRoute, name: orphan}}", "color: red")
    run_ = lint_here(tmp_path, text, prof)
    assert run_.contexts == []
    assert status(run_, "ColorPolicy app/p")["enforcement"] is None


def test_two_block_policy_counts_each_context_once() -> None:
    """A policy with an override and a default block has two facets in one context; its status
    there combines them, and the context counts once (S09: one context, gw > r)."""
    run_, _ = scenario("s09-same-level", "expected-policy-attachment")
    sim = run_.result.project.simulation()
    for policy in run_.result.project.resolution.policies():
        (res,) = run_.result.project.resolution.targets(policy)
        entry = sim.target_status(policy, res)
        assert entry is not None and entry.contexts == 1
    hc2 = next(p for p in run_.result.project.resolution.policies() if p.key.name == "hc-2")
    entry = sim.target_status(hc2, run_.result.project.resolution.targets(hc2)[0])
    assert entry is not None and (entry.overridden, entry.enforcement) == (1, Enforcement.OVERRIDDEN)


def test_simulation_lists_the_contexts_asked_for() -> None:
    run_, _ = scenario("s02-gep713-example-2")
    assert len(run_.contexts) == 4
    only_b2 = run_.result.project.simulation().contexts(lambda path: path[-1][1].name == "b2")
    assert [context_label(run_, c.path) for c in only_b2] == ["g2>r4>b2"]


# -- pure helpers ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("counts", "expected"),
    [
        ({}, None),  # reaches no context
        ({"contexts": 2, "conflicted": 2}, None),  # Conflicted everywhere: Accepted=False
        ({"contexts": 3, "enforced": 3}, Enforcement.ENFORCED),
        ({"contexts": 3, "overridden": 3}, Enforcement.OVERRIDDEN),
        ({"contexts": 3, "enforced": 2, "overridden": 1}, Enforcement.PARTIALLY_ENFORCED),
        ({"contexts": 2, "partial": 2}, Enforcement.PARTIALLY_ENFORCED),
        ({"contexts": 3, "conflicted": 1, "enforced": 2}, Enforcement.ENFORCED),  # live contexts only
        ({"contexts": 3, "conflicted": 2, "overridden": 1}, Enforcement.OVERRIDDEN),
    ],
)
def test_target_status_enforcement(counts: dict[str, int], expected: str | None) -> None:
    assert TargetStatus(**counts).enforcement == expected


def test_node_labels() -> None:
    route_key = ObjectKey(GW, "HTTPRoute", "app", "r1")
    assert node_label(("rule", route_key, "rule-1")) == "app/r1#rule-1"  # a named rule by its name
    assert node_label(("rule", route_key, 0)) == "app/r1#rules[0]"  # an unnamed one by position
    assert node_label(("listener", ObjectKey(GW, "Gateway", "app", "g1"), "http")) == "app/g1#http"
    assert node_label(("gatewayclass", ObjectKey(GW, "GatewayClass", None, "eg"), None)) == "eg"
    assert node_label(("port", ObjectKey("", "Service", "app", "b1"), "grpc")) == "app/b1#grpc"
    assert path_label([("gateway", ObjectKey(GW, "Gateway", "app", "g1"), None), ("route", route_key, None)]) == "app/g1 > app/r1"


def test_route_on_two_listeners_is_two_contexts(tmp_path: Path) -> None:
    """A route attached to two listeners is in two contexts (docs/effective-policy.md
    "Contexts"): its policy's blast radius counts both, on one route and one Gateway."""
    prof = profile(tmp_path, klass="Inherited", effective="route", default="atomic-defaults", kinds=GW_ROUTE_KINDS)
    text = CLASS + gateway("g", "http", "alt") + route("r", "g", (None, "svc")) + service("svc")
    text += color("p", f"{{group: {GW}, kind: HTTPRoute, name: r}}", "color: red")
    run_ = lint_here(tmp_path, text, prof)
    assert effective_values(run_, "ColorPolicy", ("listener", "route")) == {
        "g#http>r": {"color": "red"},
        "g#alt>r": {"color": "red"},
    }
    assert policy_entry(run_, "ColorPolicy app/p")["affects"] == {
        "contexts": 2, "routes": 1, "rules": 0, "listeners": 2, "gateways": 1, "backends": 1,
    }  # fmt: skip


def test_empty_atomic_override_counts_every_context(tmp_path: Path) -> None:
    """S19 on two routes: the empty override erases the 2 entries of each route policy in each
    of the 2 contexts -> "erases 4 entries in 2 contexts"."""
    prof = profile(tmp_path, klass="Inherited", effective="route", default="atomic-defaults", kinds=GW_ROUTE_KINDS)
    text = CLASS + gateway("g") + route("r1", "g", (None, "svc")) + route("r2", "g", (None, "svc")) + service("svc")
    text += color("wipe", f"{{group: {GW}, kind: Gateway, name: g}}", "overrides: {strategy: atomic, limits: {}}")
    for name in ("r1", "r2"):
        text += color(f"keep-{name}", f"{{group: {GW}, kind: HTTPRoute, name: {name}}}", "limits: {a: 1, b: 2}")
    run_ = lint_here(tmp_path, text, prof)
    assert effective_values(run_, "ColorPolicy", ("route",)) == {"r1": {"limits": {}}, "r2": {"limits": {}}}
    (finding,) = [f for f in run_.result.findings if f.rule == "PL607"]
    assert "app/wipe erases 4 entries in 2 contexts" in finding.message


# Istio's AuthorizationPolicy (security.istio.io) with `targetRefs` to a Gateway, as Istio's API
# reference describes it (istio.io/latest/docs/reference/config/security/authorization-policy/):
# several policies on one workload are all evaluated (CUSTOM, then DENY, then ALLOW): additive,
# not a Gateway API policy that conflicts (the built-in profile says so: docs/semantics.md#istio).
# Under a kind with no profile and no CRD, policylint can only guess.
ISTIO_AUTHZ = """\
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: istio-waypoint}
spec: {controllerName: istio.io/mesh-controller}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: waypoint, namespace: default}
spec:
  gatewayClassName: istio-waypoint
  listeners:
  - {name: http, port: 80, protocol: HTTP}
---
apiVersion: security.istio.io/v1
kind: AuthorizationPolicy
metadata: {name: productpage-viewer, namespace: default}
spec:
  targetRefs:
  - {kind: Gateway, group: gateway.networking.k8s.io, name: waypoint}
  action: ALLOW
  rules:
  - from:
    - source:
        principals: ["cluster.local/ns/default/sa/bookinfo-gateway-istio"]
---
apiVersion: security.istio.io/v1
kind: AuthorizationPolicy
metadata: {name: deny-delete, namespace: default}
spec:
  targetRefs:
  - {kind: Gateway, group: gateway.networking.k8s.io, name: waypoint}
  action: DENY
  rules:
  - to:
    - operation:
        methods: ["DELETE"]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: productpage, namespace: default}
spec:
  parentRefs: [{name: waypoint}]
  rules:
  - backendRefs: [{name: productpage, port: 9080}]
---
apiVersion: v1
kind: Service
metadata: {name: productpage, namespace: default}
spec:
  ports: [{port: 9080, name: http}]
"""


def test_a_guessed_policy_kind_never_fails_a_run() -> None:
    # Before: PL601 error (the guessed "strategy None, one per target" made them conflict), exit 1.
    # After: the same finding at info level; PL111 says the kind was guessed.
    guessed = ISTIO_AUTHZ.replace("security.istio.io/v1\nkind: AuthorizationPolicy", "mesh.example.com/v1\nkind: AccessPolicy")
    result = lint_text(guessed)
    assert {f.rule for f in result.findings} == {"PL601", "PL111"}
    assert {f.severity for f in result.findings} == {Severity.INFO}
    # Istio's own kind has a profile: both policies apply, nothing to report.
    assert lint_text(ISTIO_AUTHZ).findings == []


def test_a_described_kind_keeps_its_severities() -> None:
    # The same shape under a kind a profile describes (Envoy Gateway's SecurityPolicy, which does
    # not merge on one target) still conflicts with an error.
    text = ISTIO_AUTHZ.replace(
        "security.istio.io/v1\nkind: AuthorizationPolicy", "gateway.envoyproxy.io/v1alpha1\nkind: SecurityPolicy"
    )
    errors = [f for f in lint_text(text).findings if f.severity is Severity.ERROR]
    assert [f.rule for f in errors if f.rule.startswith("PL6")] == ["PL601"]
    # The Istio-shaped spec is no SecurityPolicy's: fields every bundled Envoy Gateway release prunes.
    assert {f.rule for f in errors} == {"PL601", "PL702"}


# Envoy Gateway translator test data securitypolicy-with-extauth-invalid-no-service.in.yaml
# (envoyproxy/gateway, internal/gatewayapi/testdata): an ext-auth backend Service that does not
# exist; EG writes Accepted=False, Invalid, "ExtAuth: service default/http-backend not found.".
# Here it is the older of two SecurityPolicies on one route.
SPEC_ERROR = """\
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: eg}
spec: {controllerName: gateway.envoyproxy.io/gatewayclass-controller}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw, namespace: default}
spec:
  gatewayClassName: eg
  listeners: [{name: http, protocol: HTTP, port: 80}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: httproute-1, namespace: default}
spec:
  parentRefs: [{name: gw}]
  rules: [{backendRefs: [{name: web, port: 80}]}]
---
apiVersion: v1
kind: Service
metadata: {name: web, namespace: default}
spec: {ports: [{port: 80}]}
---
apiVersion: gateway.envoyproxy.io/v1alpha1
kind: SecurityPolicy
metadata: {name: policy-for-httproute-1, namespace: default, creationTimestamp: "2024-01-01T00:00:00Z"}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: httproute-1}]
  extAuth:
    http:
      backendRefs: [{name: http-backend, namespace: default, port: 80}]
---
apiVersion: gateway.envoyproxy.io/v1alpha1
kind: SecurityPolicy
metadata: {name: cors, namespace: default, creationTimestamp: "2024-02-01T00:00:00Z"}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: httproute-1}]
  cors: {allowOrigins: ["https://example.com"]}
"""


def test_a_policy_whose_spec_its_controller_rejects_is_invalid_and_applies_nowhere() -> None:
    # policy-for-httproute-1 is Invalid with the reason (EG's translator test
    # securitypolicy-with-extauth-invalid-no-service: "ExtAuth: service default/http-backend not
    # found"), and applies nowhere. It still holds the route: Envoy Gateway marks a route as
    # taken by a SecurityPolicy when it resolves the target, before it validates or translates
    # the policy (resolveSecurityPolicyRouteTargetRef sets `route.attached` in
    # internal/gatewayapi/securitypolicy.go), so the newer cors policy is Conflicted ("Unable to
    # target HTTPRoute httproute-1, another SecurityPolicy has already attached to it") and the
    # route gets no SecurityPolicy at all. Profile key `invalidClaimsTarget`.
    result = lint_text(SPEC_ERROR)
    by_name = {p["object"]["name"]: p["targets"][0] for p in result.policy_reports or []}
    invalid = by_name["policy-for-httproute-1"]
    assert invalid["accepted"] == "Invalid" and invalid["enforcement"] is None
    assert invalid["message"] == "spec.extAuth.http.backendRefs[0]: Service default/http-backend not found"
    assert (by_name["cors"]["accepted"], by_name["cors"]["enforcement"]) == ("Conflicted", None)
    (conflict,) = only(result, "PL601")
    assert conflict.object is not None and conflict.object.name == "cors"
    assert "already claimed by default/policy-for-httproute-1" in conflict.message
    assert len(only(result, "PL411")) == 1


# nginx/nginx-gateway-fabric examples/upstream-settings-policy/: 1m-zone-size.yaml (zoneSize on
# tea and coffee) and upstream-keepalives.yaml (keepAlive on coffee). NGF's upstreamsettings
# validator `conflicts()` conflicts two policies only when both set the same field, so both apply.
NGF_UPSTREAM_SETTINGS = """\
apiVersion: v1
kind: Service
metadata: {name: coffee, namespace: default}
spec: {ports: [{port: 80, name: http}]}
---
apiVersion: v1
kind: Service
metadata: {name: tea, namespace: default}
spec: {ports: [{port: 80, name: http}]}
---
apiVersion: gateway.nginx.org/v1alpha1
kind: UpstreamSettingsPolicy
metadata: {name: 1m-zone-size, namespace: default, creationTimestamp: "2025-01-01T00:00:00Z"}
spec:
  targetRefs:
    - {group: core, kind: Service, name: tea}
    - {group: core, kind: Service, name: coffee}
  zoneSize: 1m
---
apiVersion: gateway.nginx.org/v1alpha1
kind: UpstreamSettingsPolicy
metadata: {name: upstream-keepalives, namespace: default, creationTimestamp: "2025-02-01T00:00:00Z"}
spec:
  targetRefs:
    - {group: core, kind: Service, name: coffee}
  keepAlive:
    connections: 32
"""


def _accepted_by_target(result: Any) -> dict[tuple[str, str], str]:
    return {(p["object"]["name"], t["ref"]["name"]): t["accepted"] for p in result.policy_reports for t in p["targets"]}


def test_ngf_policies_setting_different_fields_on_one_service_all_apply() -> None:
    # Before: upstream-keepalives Conflicted on coffee (PL601 error). After: both accepted.
    result = lint_text(NGF_UPSTREAM_SETTINGS)
    assert only(result, "PL601") == []
    assert set(_accepted_by_target(result).values()) == {"Accepted"}


def test_ngf_a_later_policy_setting_the_same_field_is_conflicted_and_the_oldest_kept() -> None:
    clash = NGF_UPSTREAM_SETTINGS + (
        "---\napiVersion: gateway.nginx.org/v1alpha1\nkind: UpstreamSettingsPolicy\n"
        'metadata: {name: 2m-zone-size, namespace: default, creationTimestamp: "2025-03-01T00:00:00Z"}\n'
        "spec:\n  targetRefs: [{group: core, kind: Service, name: coffee}]\n  zoneSize: 2m\n"
    )
    result = lint_text(clash)
    accepted = _accepted_by_target(result)
    assert accepted[("1m-zone-size", "coffee")] == "Accepted"
    assert accepted[("2m-zone-size", "coffee")] == "Conflicted"
    assert accepted[("upstream-keepalives", "coffee")] == "Accepted"
    (finding,) = only(result, "PL601")
    assert "2m-zone-size" in finding.message and "both set zoneSize" in finding.message
    # The kind merges policies that set different fields (upstream-keepalives applies): said so.
    assert "UpstreamSettingsPolicy merges policies on one target only where they set different fields" in finding.message


# Kuadrant's guide "Secure, protect, and connect APIs with Kuadrant" (docs.kuadrant.io): the
# platform engineer puts a deny-by-default AuthPolicy on the Gateway (`defaults`), and each
# application adds its own AuthPolicy on its HTTPRoute.
KUADRANT_DENY_BY_DEFAULT = """\
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: istio}
spec: {controllerName: istio.io/gateway-controller}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: external, namespace: gateway-system}
spec:
  gatewayClassName: istio
  listeners: [{name: api, protocol: HTTP, port: 80, allowedRoutes: {namespaces: {from: All}}}]
---
apiVersion: kuadrant.io/v1
kind: AuthPolicy
metadata: {name: gw-auth, namespace: gateway-system}
spec:
  targetRef: {group: gateway.networking.k8s.io, kind: Gateway, name: external}
  defaults:
    rules:
      authorization:
        deny-all:
          opa:
            rego: "allow = false"
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: toystore, namespace: toystore}
spec:
  parentRefs: [{name: external, namespace: gateway-system}]
  rules: [{backendRefs: [{name: toystore, port: 80}]}]
---
apiVersion: v1
kind: Service
metadata: {name: toystore, namespace: toystore}
spec: {ports: [{port: 80}]}
---
apiVersion: kuadrant.io/v1
kind: AuthPolicy
metadata: {name: toystore, namespace: toystore}
spec:
  targetRef: {group: gateway.networking.k8s.io, kind: HTTPRoute, name: toystore}
  rules:
    authentication:
      api-key-users:
        apiKey:
          selector: {matchLabels: {app: toystore}}
    authorization:
      allow-all:
        opa:
          rego: "allow = true"
"""


def test_a_default_every_route_overrides_today_is_a_guard_rail_not_dead() -> None:
    # Before: PL602 warning "it has no effect; remove it". After: info, a guard rail for routes
    # added later. A default beaten by an override stays a warning (tests/effective/s02).
    (finding,) = only(lint_text(KUADRANT_DENY_BY_DEFAULT), "PL602")
    assert finding.severity is Severity.INFO
    assert "guard rail for routes added later" in finding.message and "remove" not in finding.message


# Envoy Gateway translator test data backendtlspolicy-invalid-ca.in.yaml: a CA ConfigMap that does
# not exist where the namespace's ConfigMaps are in the input, and a CA reference of an unsupported
# kind; EG writes Accepted=False, Invalid for both policies.
BTLS_INVALID_CA = """\
apiVersion: v1
kind: Service
metadata: {name: http-backend, namespace: backends}
spec: {ports: [{name: https, port: 443}]}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: ca-cmap, namespace: backends}
---
apiVersion: gateway.networking.k8s.io/v1
kind: BackendTLSPolicy
metadata: {name: policy-btls, namespace: backends}
spec:
  targetRefs: [{group: "", kind: Service, name: http-backend, sectionName: https}]
  validation:
    caCertificateRefs: [{group: "", kind: ConfigMap, name: no-ca-cmap}]
    hostname: example.com
---
apiVersion: gateway.networking.k8s.io/v1
kind: BackendTLSPolicy
metadata: {name: policy-invalid-kind, namespace: backends}
spec:
  targetRefs: [{group: "", kind: Service, name: http-backend}]
  validation:
    caCertificateRefs: [{group: "", kind: Pod, name: ca-cmap}]
    hostname: example.com
"""


def test_backend_tls_policies_with_unusable_ca_references_are_invalid() -> None:
    # Before: both Accepted, no finding. After: both Invalid, with the reason; PL417 on each.
    result = lint_text(BTLS_INVALID_CA)
    by_name = {p["object"]["name"]: p["targets"][0] for p in result.policy_reports or []}
    assert by_name["policy-btls"]["accepted"] == "Invalid"
    assert by_name["policy-btls"]["message"] == "spec.validation.caCertificateRefs[0]: ConfigMap backends/no-ca-cmap not found"
    assert by_name["policy-invalid-kind"]["accepted"] == "Invalid"
    assert "Pod (group core) is not a kind this reference supports" in by_name["policy-invalid-kind"]["message"]
    assert len(only(result, "PL417")) == 2


# nginx/nginx-gateway-fabric internal/controller/nginx/config/policies/snippetspolicy/validator.go:
# `Conflicts` returns false: "SnippetsPolicies are merged by lexicographic order, so they don't
# inherently conflict".
NGF_SNIPPETS = """\
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: nginx}
spec: {controllerName: gateway.nginx.org/nginx-gateway-controller}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gateway, namespace: default}
spec:
  gatewayClassName: nginx
  listeners: [{name: http, protocol: HTTP, port: 80}]
---
apiVersion: gateway.nginx.org/v1alpha1
kind: SnippetsPolicy
metadata: {name: a-log-format, namespace: default, creationTimestamp: "2025-01-01T00:00:00Z"}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: gateway}]
  snippets: [{context: http, value: "log_format custom '$remote_addr';"}]
---
apiVersion: gateway.nginx.org/v1alpha1
kind: SnippetsPolicy
metadata: {name: b-limit-req, namespace: default, creationTimestamp: "2025-02-01T00:00:00Z"}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: gateway}]
  snippets: [{context: http, value: "limit_req_zone $binary_remote_addr zone=one:10m rate=1r/s;"}]
"""


def test_ngf_snippets_policies_never_conflict() -> None:
    # Before: b-limit-req Conflicted (PL601 error). After: both accepted and enforced.
    result = lint_text(NGF_SNIPPETS)
    assert only(result, "PL601") == [] and only(result, "PL602") == []
    states = {
        p["object"]["name"]: (p["targets"][0]["accepted"], p["targets"][0]["enforcement"]) for p in result.policy_reports or []
    }
    assert states == {"a-log-format": ("Accepted", "Enforced"), "b-limit-req": ("Accepted", "Enforced")}


# -- conflicts on a target no traffic passes ----------------------------------------------------------

_LISTENERSET_NO_ROUTES = """\
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata:
  name: eg
spec:
  controllerName: gateway.envoyproxy.io/gatewayclass-controller
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata:
  name: gw
  namespace: envoy-gateway
spec:
  gatewayClassName: eg
  allowedListeners:
    namespaces:
      from: Same
  listeners:
  - name: http
    protocol: HTTP
    port: 80
---
apiVersion: gateway.networking.k8s.io/v1
kind: ListenerSet
metadata:
  name: ext-listeners
  namespace: envoy-gateway
spec:
  parentRef:
    name: gw
  listeners:
  - name: ext-http
    protocol: HTTP
    port: 8080
---
apiVersion: gateway.envoyproxy.io/v1alpha1
kind: EnvoyExtensionPolicy
metadata:
  name: first
  namespace: envoy-gateway
  creationTimestamp: "2026-01-01T00:00:00Z"
spec:
  targetRefs:
  - group: gateway.networking.k8s.io
    kind: ListenerSet
    name: ext-listeners
  lua:
  - type: Inline
    inline: "function envoy_on_request(h) end"
---
apiVersion: gateway.envoyproxy.io/v1alpha1
kind: EnvoyExtensionPolicy
metadata:
  name: second
  namespace: envoy-gateway
  creationTimestamp: "2026-01-02T00:00:00Z"
spec:
  targetRefs:
  - group: gateway.networking.k8s.io
    kind: ListenerSet
    name: ext-listeners
  lua:
  - type: Inline
    inline: "function envoy_on_request(h) end"
"""


def test_a_conflict_on_a_target_without_traffic_is_decided_when_the_policies_attach() -> None:
    # Envoy Gateway's translator test envoyextensionpolicy-listenerset-invalid: two
    # EnvoyExtensionPolicies on one ListenerSet that no route uses yet; EG writes
    # Accepted=False, Conflicted ("another EnvoyExtensionPolicy has already attached to it") on
    # the later one and accepts the older.
    result = lint_text(_LISTENERSET_NO_ROUTES, report_policies=True)
    (finding,) = only(result, "PL601")
    assert str(finding.object) == "EnvoyExtensionPolicy envoy-gateway/second"
    assert "already claimed by envoy-gateway/first (older: 2026-01-01T00:00:00Z < 2026-01-02T00:00:00Z)" in finding.message
    assert result.policy_reports is not None
    verdicts = {p["object"]["name"]: [t["accepted"] for t in p["targets"]] for p in result.policy_reports}
    assert verdicts == {"first": ["Accepted"], "second": ["Conflicted"]}


# -- controller conditions: Envoy Gateway's mergeType ------------------------------------------------


def test_a_merge_is_reported_as_the_controller_reports_it() -> None:
    # Envoy Gateway's translator test backendtrafficpolicy-strategic-merge-global-ratelimit
    # (vendored in tests/data/oracles/envoy-gateway/): a route policy with mergeType:
    # StrategicMerge onto a Gateway policy. EG writes Merged ("Merged with policy
    # envoy-gateway/policy-for-gateway1") on the route policy and leaves the Gateway policy
    # Accepted with no Overridden condition, though the route's values win where both set one:
    # the value-level `enforcement` still says so.
    case = (
        ROOT / "tests" / "data" / "oracles" / "envoy-gateway" / "cases" / "backendtrafficpolicy-strategic-merge-global-ratelimit"
    )
    result = lint_paths([case / "manifests.yaml", case / "harness.yaml"], report_policies=True)
    assert result.policy_reports is not None
    conditions = {
        p["object"]["name"]: [(c["type"], c["status"], c["message"]) for c in p["targets"][0]["conditions"]]
        for p in result.policy_reports
    }
    assert conditions == {
        "policy-for-route": [
            ("Accepted", "True", ""),
            ("Merged", "True", "merged with policy envoy-gateway/policy-for-gateway1"),
        ],
        "policy-for-gateway1": [("Accepted", "True", "")],
    }
    enforcement = {p["object"]["name"]: p["targets"][0]["enforcement"] for p in result.policy_reports}
    assert enforcement == {"policy-for-route": "Enforced", "policy-for-gateway1": "PartiallyEnforced"}


def test_an_override_is_reported_as_the_controller_reports_it() -> None:
    # backendtrafficpolicy-section-name-override: a route policy without mergeType takes part of
    # the Gateway policy's ground; EG writes Overridden on the Gateway policy.
    case = ROOT / "tests" / "data" / "oracles" / "envoy-gateway" / "cases" / "backendtrafficpolicy-section-name-override"
    result = lint_paths([case / "manifests.yaml", case / "harness.yaml"], report_policies=True)
    assert result.policy_reports is not None
    gateway_policy = next(p for p in result.policy_reports if p["object"]["name"] == "policy-for-gateway-1")
    types = [c["type"] for c in gateway_policy["targets"][0]["conditions"]]
    assert types == ["Accepted", "Overridden"]


# Envoy Gateway's translator tests clienttrafficpolicy-invalid-settings (a CA Secret with
# tls.crt, tls.key and invalid-ca.crt: "ref secret [tls-secret-1] has none of the expected keys
# [ca.crt] and more than one entry") and clienttrafficpolicy-mtls-clustertrustbundle (a
# ClusterTrustBundle named by kind alone, accepted). EG reads the CA from key ca.crt, else from
# the only entry (validateAndGetDataAtKeyInRef, getFirstMatchOrFirstFromData).
CA_DATA = """\
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gateway-1, namespace: default}
spec:
  gatewayClassName: eg
  listeners: [{name: http, protocol: HTTP, port: 80}]
---
apiVersion: v1
kind: Secret
metadata: {name: tls-secret-1, namespace: default}
type: kubernetes.io/tls
data: {invalid-ca.crt: Y2E=, tls.key: a2V5, tls.crt: Y2VydA==}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: only-entry, namespace: default}
data: {bundle.pem: ca}
---
apiVersion: certificates.k8s.io/v1beta1
kind: ClusterTrustBundle
metadata: {name: ca-cluster-trust-bundle}
spec: {trustBundle: ca}
---
apiVersion: gateway.envoyproxy.io/v1alpha1
kind: ClientTrafficPolicy
metadata: {name: %(name)s, namespace: default}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: gateway-1}]
  tls:
    clientValidation:
      caCertificateRefs: [%(ref)s]
"""


@pytest.mark.parametrize(
    ("ref", "accepted", "message"),
    [
        (
            "{name: tls-secret-1}",
            "Invalid",
            "spec.tls.clientValidation.caCertificateRefs[0]: Secret default/tls-secret-1 has no key ca.crt and more than one entry",
        ),
        ("{kind: ConfigMap, name: only-entry}", "Accepted", None),
        ("{kind: ClusterTrustBundle, name: ca-cluster-trust-bundle}", "Accepted", None),
        (
            "{kind: ClusterTrustBundle, group: '', name: tls-ctb-1, namespace: default}",
            "Invalid",
            "spec.tls.clientValidation.caCertificateRefs[0]: ClusterTrustBundle tls-ctb-1 not found",
        ),
    ],
)
def test_a_ca_reference_without_the_entry_the_controller_reads_is_invalid(ref: str, accepted: str, message: str | None) -> None:
    # Before: every one Accepted (only whether the object exists was checked, and a
    # ClusterTrustBundle was a kind policylint did not model). After: as Envoy Gateway writes.
    result = lint_text(CA_DATA % {"name": "mtls", "ref": ref}, complete=True)
    target = (result.policy_reports or [])[0]["targets"][0]
    assert target["accepted"] == accepted
    if message is not None:
        assert target["message"] == message
        # A missing object is reported on the name that is wrong; missing data on the reference.
        field = ".name" if message.endswith("not found") else ""
        assert [f.path for f in only(result, "PL417")] == [f"spec.tls.clientValidation.caCertificateRefs[0]{field}"]
    else:
        assert only(result, "PL417") == []


def test_a_response_body_configmap_with_no_entry_at_all_is_invalid() -> None:
    # Envoy Gateway's translator test backendtrafficpolicy-with-response-override-invalid-valueref:
    # an empty ConfigMap gives "can't find the key response.body in the referenced configmap";
    # one with any other entry is read (the fallback to the first key).
    text = """\
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gateway-1, namespace: default}
spec:
  gatewayClassName: eg
  listeners: [{name: http, protocol: HTTP, port: 80}]
---
apiVersion: v1
kind: ConfigMap
metadata: {name: response-override-config, namespace: default}
data: %s
---
apiVersion: gateway.envoyproxy.io/v1alpha1
kind: BackendTrafficPolicy
metadata: {name: policy-for-gateway, namespace: default}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: gateway-1}]
  responseOverride:
  - match: {statusCodes: [{type: Value, value: 404}]}
    response:
      contentType: text/plain
      body:
        type: ValueRef
        valueRef: {group: "", kind: ConfigMap, name: response-override-config}
"""
    empty = (lint_text(text % "{}").policy_reports or [])[0]["targets"][0]
    assert empty["accepted"] == "Invalid"
    assert empty["message"].endswith("ConfigMap default/response-override-config has no key response.body and no entry at all")
    other = (lint_text(text % "{page.html: oops}").policy_reports or [])[0]["targets"][0]
    assert other["accepted"] == "Accepted"


# Envoy Gateway's translator tests merge-with-isolated-policies-2 (a ClientTrafficPolicy on
# listener http of gateway-2, whose listener http-2 has the same port 81) and conflicting-policies
# (two Gateways of a class whose EnvoyProxy sets mergeGateways, both with a plain-HTTP listener on
# port 80; a policy on one Gateway). EG: "ClientTrafficPolicy is being applied to multiple http
# (non https) listeners (...) on the same port, which is not allowed".
SHARED_PORT = """\
apiVersion: gateway.envoyproxy.io/v1alpha1
kind: EnvoyProxy
metadata: {name: merged, namespace: envoy-gateway-system}
spec: {mergeGateways: %(merge)s}
---
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: eg}
spec:
  controllerName: gateway.envoyproxy.io/gatewayclass-controller
  parametersRef: {group: gateway.envoyproxy.io, kind: EnvoyProxy, name: merged, namespace: envoy-gateway-system}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gateway-1, namespace: default}
spec:
  gatewayClassName: eg
  listeners: [{name: http, protocol: HTTP, port: 80, hostname: "*.example.com"}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gateway-2, namespace: default}
spec:
  gatewayClassName: eg
  listeners:
  - {name: http, protocol: HTTP, port: 80, hostname: qccbahgo.qccbahgo}
  - {name: http-2, protocol: HTTP, port: 81, hostname: bar.example.com}
  - {name: http-3, protocol: HTTP, port: 81, hostname: foo.example.com}
  - {name: https, protocol: HTTPS, port: 443, tls: {certificateRefs: [{name: cert}]}}
---
apiVersion: gateway.envoyproxy.io/v1alpha1
kind: ClientTrafficPolicy
metadata: {name: %(name)s, namespace: default}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: gateway-2%(section)s}]
  timeout: {http: {requestReceivedTimeout: 5s}}
"""


@pytest.mark.parametrize(
    ("merge", "section", "accepted", "others"),
    [
        ("false", ", sectionName: http-2", "Invalid", "default/gateway-2/http-3"),  # one Gateway, one port
        ("false", ", sectionName: http", "Accepted", None),  # port 80 is its own in gateway-2
        ("true", ", sectionName: http", "Invalid", "default/gateway-1/http"),  # merged: gateway-1 shares port 80
        ("false", "", "Accepted", None),  # the whole Gateway covers its own listeners
        ("true", "", "Invalid", "default/gateway-1/http"),
        ("true", ", sectionName: https", "Accepted", None),  # HTTPS has a filter chain of its own
    ],
)
def test_a_policy_on_some_of_the_plain_http_listeners_of_a_port_is_invalid(
    merge: str, section: str, accepted: str, others: str | None
) -> None:
    # Before: Accepted in every row. After: as Envoy Gateway writes, with PL418 on the targetRef.
    result = lint_text(SHARED_PORT % {"merge": merge, "section": section, "name": "timeouts"})
    target = (result.policy_reports or [])[0]["targets"][0]
    assert target["accepted"] == accepted
    findings = only(result, "PL418")
    if others is None:
        assert findings == []
    else:
        assert f"shares port {80 if 'gateway-1' in others else 81} with {others}," in target["message"]
        assert [(f.path, f.severity) for f in findings] == [("spec.targetRefs[0]", Severity.ERROR)]


@pytest.mark.parametrize(
    ("merge", "kind", "name", "accepted"),
    [
        ("true", "Gateway", "gateway-1", "Invalid"),
        ("true", "GatewayClass", "eg", "Accepted"),
        ("false", "Gateway", "gateway-1", "Accepted"),
        ("false", "GatewayClass", "eg", "Invalid"),
    ],
)
def test_an_envoy_patch_policy_targets_the_class_of_merged_gateways(merge: str, kind: str, name: str, accepted: str) -> None:
    # Envoy Gateway's translator tests envoypatchpolicy-invalid-target-kind-merge-gateways (a
    # Gateway target with mergeGateways: Invalid, "not found or not accepted (MergeGateways=true)")
    # and envoypatchpolicy-valid-merge-gateways (the GatewayClass target: Accepted).
    # Before: Accepted in every row. After: as EG writes, with PL418 on the targetRef's kind.
    text = SHARED_PORT.split("---\napiVersion: gateway.envoyproxy.io/v1alpha1\nkind: ClientTrafficPolicy")[0] % {
        "merge": merge
    } + (
        "---\napiVersion: gateway.envoyproxy.io/v1alpha1\nkind: EnvoyPatchPolicy\n"
        "metadata: {name: patch, namespace: default}\n"
        f"spec: {{targetRef: {{group: gateway.networking.k8s.io, kind: {kind}, name: {name}}}, type: JSONPatch, jsonPatches: []}}\n"
    )
    result = lint_text(text)
    target = (result.policy_reports or [])[0]["targets"][0]
    assert target["accepted"] == accepted
    assert [f.path for f in only(result, "PL418")] == (["spec.targetRef.kind"] if accepted == "Invalid" else [])


LISTENERSET_NO_ROUTES = """\
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: composite-gateway, namespace: envoy-gateway}
spec:
  gatewayClassName: eg
  allowedListeners: {namespaces: {from: Same}}
  listeners: [{name: core-http, protocol: HTTP, port: 80}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: ListenerSet
metadata: {name: ext-listeners, namespace: envoy-gateway}
spec:
  parentRef: {name: composite-gateway}
  listeners:
  - {name: ext-http-1, protocol: HTTP, port: 8081}
  - {name: ext-http-2, protocol: HTTP, port: 8082}
"""


def _targets(result: Any) -> dict[tuple[str, str], dict[str, Any]]:
    return {(p["object"]["name"], t["ref"]["kind"]): t for p in result.policy_reports for t in p["targets"]}


def test_a_listenerset_policy_every_listener_of_which_a_section_policy_takes_is_overridden() -> None:
    # Envoy Gateway's translator test envoyextensionpolicy-listenerset-invalid: no route yet, a
    # ListenerSet-wide policy and a section policy on its only listener; EG writes Overridden
    # ("... for these listenerset listeners: [envoy-gateway/ext-listeners/ext-http]").
    # Before: Accepted with no enforcement and no Overridden. After: Overridden when every
    # listener is taken, PartiallyEnforced when some are, decided when the policies attach.
    def policy(name: str, section: str = "") -> str:
        ref = f"{{group: gateway.networking.k8s.io, kind: ListenerSet, name: ext-listeners{section}}}"
        return (
            f"---\napiVersion: gateway.envoyproxy.io/v1alpha1\nkind: EnvoyExtensionPolicy\n"
            f"metadata: {{name: {name}, namespace: envoy-gateway}}\nspec:\n  targetRefs: [{ref}]\n"
            "  lua: [{type: Inline, inline: 'function envoy_on_request(r) end'}]\n"
        )

    one = lint_text(LISTENERSET_NO_ROUTES + policy("wide") + policy("section", ", sectionName: ext-http-1"))
    wide = _targets(one)[("wide", "ListenerSet")]
    assert (wide["enforcement"], wide["beatenBy"]) == ("PartiallyEnforced", ["envoy-gateway/section"])
    assert [c["type"] for c in wide["conditions"]] == ["Accepted", "Overridden"]
    both = lint_text(
        LISTENERSET_NO_ROUTES
        + policy("wide")
        + policy("section", ", sectionName: ext-http-1")
        + policy("section-2", ", sectionName: ext-http-2")
    )
    assert _targets(both)[("wide", "ListenerSet")]["enforcement"] == "Overridden"
    alone = _targets(lint_text(LISTENERSET_NO_ROUTES + policy("wide")))[("wide", "ListenerSet")]
    assert (alone["enforcement"], [c["type"] for c in alone["conditions"]]) == (None, ["Accepted"])


def test_a_policy_on_a_gateway_and_its_listenerset_is_overridden_at_the_gateway_by_itself() -> None:
    # Envoy Gateway's translator test clienttrafficpolicy-listenerset-mixed-targetrefs: one
    # ClientTrafficPolicy targets the ListenerSet and its Gateway; EG writes Overridden at the
    # Gateway ("... overriding these sections [ext-http-1 ext-http-2]"), Accepted at the
    # ListenerSet. Its values are in force everywhere (policylint's enforcement stays Enforced).
    text = LISTENERSET_NO_ROUTES + (
        "---\napiVersion: gateway.envoyproxy.io/v1alpha1\nkind: ClientTrafficPolicy\n"
        "metadata: {name: ctp-mixed, namespace: envoy-gateway}\nspec:\n  targetRefs:\n"
        "  - {group: gateway.networking.k8s.io, kind: ListenerSet, name: ext-listeners}\n"
        "  - {group: gateway.networking.k8s.io, kind: Gateway, name: composite-gateway}\n"
        "  tcpKeepalive: {probes: 5}\n"
    )
    targets = _targets(lint_text(text))
    gateway, listener_set = targets[("ctp-mixed", "Gateway")], targets[("ctp-mixed", "ListenerSet")]
    assert gateway["enforcement"] == "Enforced"
    assert [c["type"] for c in gateway["conditions"]] == ["Accepted", "Overridden"]
    assert [c["type"] for c in listener_set["conditions"]] == ["Accepted"]


# Envoy Gateway's e2e test RateLimitGlobalMergeTest
# (test/e2e/testdata/ratelimit-global-shared-and-unshared-header-match.yaml), reduced to one rule
# each: a route policy with mergeType StrategicMerge on a Gateway with a rate-limit policy. EG
# merges the rate-limit rules by generated name (<policy-ns>/<policy-name>/rule/<index>), so both
# policies' rules apply; with JSONMerge the route policy's list replaces the Gateway's.
RATE_LIMIT_MERGE = """\
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: eg}
spec: {controllerName: gateway.envoyproxy.io/gatewayclass-controller}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: eg-rate-limit, namespace: gateway-conformance-infra}
spec:
  gatewayClassName: eg
  listeners: [{name: http, protocol: HTTP, port: 80, allowedRoutes: {namespaces: {from: Same}}}]
---
apiVersion: v1
kind: Service
metadata: {name: infra-backend-v1, namespace: gateway-conformance-infra}
spec: {ports: [{port: 8080}]}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: header-ratelimit-1, namespace: gateway-conformance-infra}
spec:
  parentRefs: [{name: eg-rate-limit}]
  rules: [{backendRefs: [{name: infra-backend-v1, port: 8080}]}]
---
apiVersion: gateway.envoyproxy.io/v1alpha1
kind: BackendTrafficPolicy
metadata: {name: ratelimit-headers-route-policy, namespace: gateway-conformance-infra}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: header-ratelimit-1}]
  mergeType: StrategicMerge
  rateLimit:
    type: Global
    global:
      rules:
      - clientSelectors: [{headers: [{name: x-user-id, value: one}]}]
        limit: {requests: 3, unit: Hour}
        shared: true
---
apiVersion: gateway.envoyproxy.io/v1alpha1
kind: BackendTrafficPolicy
metadata: {name: ratelimit-headers-gateway-policy, namespace: gateway-conformance-infra}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: eg-rate-limit}]
  rateLimit:
    type: Global
    global:
      rules:
      - limit: {requests: 100, unit: Hour}
        shared: true
"""


@pytest.mark.parametrize("merge_type", ["StrategicMerge", "JSONMerge"])
def test_strategic_merge_keeps_the_rate_limit_rules_of_both_policies(merge_type: str) -> None:
    # Before: RFC 7386 for both, the route's rules replaced the Gateway's and the Gateway policy
    # was PartiallyEnforced (PL603). After: as Envoy Gateway merges them.
    result = lint_text(RATE_LIMIT_MERGE.replace("StrategicMerge", merge_type))
    (context,) = result.project.simulation().contexts(lambda path: path[-1][0] == "rule")
    rules = untag(context.result.tree)["rateLimit"]["global"]["rules"]
    gateway_rule = {"limit": {"requests": 100, "unit": "Hour"}, "shared": True}
    route_rule = {
        "clientSelectors": [{"headers": [{"name": "x-user-id", "value": "one"}]}],
        "limit": {"requests": 3, "unit": "Hour"},
        "shared": True,
    }
    targets = _targets(result)
    gateway = targets[("ratelimit-headers-gateway-policy", "Gateway")]
    if merge_type == "StrategicMerge":
        assert rules == [gateway_rule, route_rule]
        assert gateway["enforcement"] == "Enforced" and only(result, "PL603") == []
    else:
        assert rules == [route_rule]
        assert gateway["enforcement"] == "PartiallyEnforced"
    # The Gateway policy reports a merge, not an override (its controller writes no Overridden).
    assert [c["type"] for c in gateway["conditions"]] == ["Accepted"]


# envoyproxy/gateway internal/gatewayapi/testdata/securitypolicy-with-merge-tcp-invalid.in.yaml,
# reduced: a Gateway-level SecurityPolicy (basicAuth) on a TCP listener, and a TCPRoute policy with
# `mergeType: StrategicMerge` (authorization only).
MERGE_TCP = """\
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: eg}
spec: {controllerName: gateway.envoyproxy.io/gatewayclass-controller}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gateway-1, namespace: envoy-gateway}
spec:
  gatewayClassName: eg
  listeners: [{name: tcp, protocol: TCP, port: 9000, allowedRoutes: {namespaces: {from: All}}}]
---
apiVersion: gateway.networking.k8s.io/v1alpha2
kind: TCPRoute
metadata: {name: tcproute-1, namespace: default}
spec:
  parentRefs: [{namespace: envoy-gateway, name: gateway-1, sectionName: tcp}]
  rules: [{backendRefs: [{name: tcp-service-1, port: 8080}]}]
---
apiVersion: v1
kind: Service
metadata: {name: tcp-service-1, namespace: default}
spec: {ports: [{name: tcp, port: 8080, protocol: TCP}]}
---
apiVersion: gateway.envoyproxy.io/v1alpha1
kind: SecurityPolicy
metadata: {name: policy-for-gateway, namespace: envoy-gateway}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: gateway-1, sectionName: tcp}]
  basicAuth: {users: {name: users-secret}}
---
apiVersion: gateway.envoyproxy.io/v1alpha1
kind: SecurityPolicy
metadata: {name: policy-for-route, namespace: default}
spec:
  mergeType: StrategicMerge
  targetRefs: [{group: gateway.networking.k8s.io, kind: TCPRoute, name: tcproute-1}]
  authorization:
    defaultAction: Deny
    rules: [{action: Allow, principal: {clientCIDRs: [10.0.0.0/8]}}]
"""


def test_a_merge_the_controller_rejects_still_overrides_the_parent() -> None:
    # Envoy Gateway's status for that test (.out.yaml): the route policy is Invalid, "Only
    # authorization is supported for TCP (routes/listeners)." — merged onto the Gateway policy,
    # the spec has basicAuth, which EG does not support for TCP (validateSecurityPolicyForTCP;
    # profile `targetKindFields`) — and the Gateway policy is Accepted and Overridden "by other
    # securityPolicies for these routes: [default/tcproute-1]": EG takes the route for the route
    # policy before it merges and translates it (overrides.Add in processSecurityPolicyForRoute).
    # Before: the route policy Accepted and merged, the Gateway policy Accepted (Merged).
    result = lint_text(MERGE_TCP, channel="experimental")
    by_name = {p["object"]["name"]: p["targets"][0] for p in result.policy_reports or []}
    route = by_name["policy-for-route"]
    assert route["accepted"] == "Invalid"
    assert route["message"] == (
        "Only authorization is supported for TCP (routes/listeners). (merged with its parent's policy, the spec sets"
        " basicAuth on TCPRoute default/tcproute-1)"
    )
    gateway = by_name["policy-for-gateway"]
    assert (gateway["accepted"], gateway["enforcement"]) == ("Accepted", "Overridden")
    (overridden,) = only(result, "PL602")
    assert overridden.object is not None and overridden.object.name == "policy-for-gateway"
    # Alone (no merge), the route policy's own spec is what EG supports on a TCPRoute.
    alone = lint_text(MERGE_TCP.replace("  mergeType: StrategicMerge\n", ""), channel="experimental")
    assert {p["object"]["name"]: p["targets"][0]["accepted"] for p in alone.policy_reports or []} == {
        "policy-for-gateway": "Accepted",
        "policy-for-route": "Accepted",
    }


def test_a_field_the_controller_does_not_support_on_a_tcp_route_is_invalid_there() -> None:
    # validateSecurityPolicyForTCP in Envoy Gateway's securitypolicy.go, on the policy alone.
    text = MERGE_TCP.replace("  mergeType: StrategicMerge\n", "").replace(
        "  authorization:\n", "  basicAuth: {users: {name: users-secret}}\n  authorization:\n"
    )
    result = lint_text(text, channel="experimental")
    by_name = {p["object"]["name"]: p["targets"][0] for p in result.policy_reports or []}
    assert by_name["policy-for-route"]["accepted"] == "Invalid"
    (finding,) = [f for f in only(result, "PL418") if f.object is not None and f.object.name == "policy-for-route"]
    assert "Only authorization is supported for TCP (routes/listeners)." in finding.message


# -- the blast radius, tallied during the walk, against the contexts themselves ---------------

_BLAST_INPUTS = [
    *sorted(p for p in (Path(__file__).resolve().parents[1] / "effective").iterdir() if p.is_dir()),
    ROOT / "examples",
]


def _blast_from_contexts(sim: Simulation, policy: Any) -> dict[str, int]:
    """policy_affects(policy).counts() by brute force: every context where one of its facets is
    Enforced or PartiallyEnforced, and the distinct nodes of their paths."""
    contexts = 0
    routes: set[ObjectKey] = set()
    rules: set[NodeKey] = set()
    listeners: set[NodeKey] = set()
    gateways: set[ObjectKey] = set()
    backends: set[NodeKey] = set()
    for context in sim.contexts(lambda _: True):
        if not any(
            f.policy is policy and context.result.status[f] in (Enforcement.ENFORCED, Enforcement.PARTIALLY_ENFORCED)
            for f in context.stack
        ):
            continue
        contexts += 1
        for node in context.path:
            if node[0] in ("route", "rule"):
                routes.add(node[1])
            if node[0] == "rule":
                rules.add(node)
            elif node[0] == "listener":
                listeners.add(node)
            elif node[0] == "gateway":
                gateways.add(node[1])
        backends |= sim.backends_below(context.path[-1])
    return {
        "contexts": contexts,
        "routes": len(routes),
        "rules": len(rules),
        "listeners": len(listeners),
        "gateways": len(gateways),
        "backends": len(backends),
    }


@pytest.mark.parametrize("where", ["scenarios", "generated"])
def test_the_blast_radius_is_what_the_contexts_give(where: str, tmp_path: Path) -> None:
    """The walk tallies each policy's reach as it goes and keeps counts (docs/performance.md,
    "Memory"); the contexts `explain` walks must give the same numbers, policy by policy."""
    if where == "generated":
        # Gateways, ListenerSets, route and rule policies, ports, misspelled references.
        write_corpus(400, tmp_path, per_file=0, error_rate=0.3)
        inputs = [tmp_path]
    else:
        inputs = _BLAST_INPUTS
    checked = 0
    for path in inputs:
        result = lint_paths([path])
        sim = result.project.simulation()
        for policy in result.project.resolution.policies():
            assert sim.policy_affects(policy).counts() == _blast_from_contexts(sim, policy), f"{path.name}: {policy.key}"
            checked += 1
    assert checked > 20


# NGINX Gateway Fabric's WAFPolicy, as its examples/waf-policy pair them: a Gateway policy fetching
# its bundle over HTTP and a route policy fetching another from NIM. NGF writes each policy whole
# into an include file (internal/controller/nginx/config/policies/waf/generator.go), the
# Gateway's in the server block and the route's in the location, so the route's
# `app_protect_policy_file` replaces the Gateway's, and a directive it does not write (the
# security logs) is inherited from the server block, as nginx inherits directives.
WAF_PAIR = """\
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gateway, namespace: default}
spec:
  gatewayClassName: nginx
  listeners: [{name: http, port: 80, protocol: HTTP}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: customers, namespace: default}
spec:
  parentRefs: [{name: gateway}]
---
apiVersion: gateway.nginx.org/v1alpha1
kind: WAFPolicy
metadata: {name: gateway-base-protection, namespace: default}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: gateway}]
  type: HTTP
  policySource:
    httpSource: {url: "http://bundle-server.default.svc.cluster.local/attack-signatures-blocking.tgz"}
  securityLogs:
  - logSource: {defaultProfile: log_blocked}
    destination: {type: stderr}
---
apiVersion: gateway.nginx.org/v1alpha1
kind: WAFPolicy
metadata: {name: route-protection, namespace: default}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: customers}]
  type: NIM
  policySource:
    nimSource: {url: "https://apigw.nim.svc.cluster.local", policyName: ngfDataguard}
"""


def test_a_route_waf_policy_replaces_the_gateways_bundle_and_inherits_its_logs() -> None:
    # Before: the two specs merged field by field into `type: NIM` with both an httpSource and a
    # nimSource, a spec the CRD refuses (PL609 on both policies). After: the route's bundle
    # fields replace the Gateway's together (profile `replaceTogether`); the logs are inherited.
    from policylint.k8s.external import ExternalObjects

    result = lint_text(WAF_PAIR, external=ExternalObjects.parse(["GatewayClass/nginx"]))
    assert only(result, "PL609") == []
    (context,) = result.project.simulation().contexts(lambda path: path[-1][1].kind == "HTTPRoute")
    assert untag(context.result.tree) == {
        "type": "NIM",
        "policySource": {"nimSource": {"url": "https://apigw.nim.svc.cluster.local", "policyName": "ngfDataguard"}},
        "securityLogs": [{"logSource": {"defaultProfile": "log_blocked"}, "destination": {"type": "stderr"}}],
    }


def test_each_rule_reaches_its_own_backends_and_a_route_references_are_read_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A rule's contexts end at its own backends only. The route's references are read in one
    pass, not once per rule (which was quadratic in a route's rules)."""
    from policylint.semantics.topology import Topology

    reads: list[str] = []
    simulating: list[bool] = []
    real, build = Topology.refs_from, Simulation.__init__

    def refs_from(self: Topology, obj: Any) -> Any:
        if obj.kind == "HTTPRoute" and simulating:
            reads.append(obj.name)
        return real(self, obj)

    def simulate(self: Simulation, *args: Any) -> None:
        simulating.append(True)
        try:
            build(self, *args)
        finally:
            simulating.clear()

    monkeypatch.setattr(Topology, "refs_from", refs_from)
    monkeypatch.setattr(Simulation, "__init__", simulate)
    text = (
        gateway("gw")
        + route("r", "gw", ("a", "svc-a"), ("b", "svc-b"), (None, "svc-c"))
        + "".join(service(s) for s in ("svc-a", "svc-b", "svc-c"))
        + color("p", f"{{group: {GW}, kind: Gateway, name: gw}}", "defaults: {color: red}")
    )
    prof = profile(tmp_path, klass="Inherited", effective="backend", default="atomic-defaults", kinds=GW_ROUTE_KINDS)
    run_ = lint_here(tmp_path, text, prof)
    labels = sorted(context_label(run_, c.path, ("rule", "backend", "port")) for c in run_.contexts)
    assert labels == ["r#a>svc-a", "r#b>svc-b", "r#rule3>svc-c"]
    assert reads.count("r") == 1, reads
