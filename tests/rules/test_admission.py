"""The admission verdict (policylint/k8s/admission.py): what the API server refuses in an object,
computed once per object by the admission stage (k8s/admissions.py), read by PL703 and PL704 and by the topology, which makes a
policy the API server refuses Invalid in the simulation (docs/semantics.md#policies-the-api-server-rejects).

Every expected value is read off the Envoy Gateway v1.9.0 BackendTrafficPolicy CRD (bundled,
tests/data/crds): `loadBalancer.type` is an enum (ConsistentHash, LeastRequest, Random, RoundRobin,
BackendUtilization, DynamicModule), and a CEL rule on `loadBalancer` says "If LoadBalancer type is
consistentHash, consistentHash field needs to be set."
"""

from __future__ import annotations

from typing import Any

from policylint.k8s.admission import Check
from tests.lintutil import lint_text, select

TOPOLOGY = """\
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: eg}
spec: {controllerName: gateway.envoyproxy.io/gatewayclass-controller}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: edge, namespace: apps}
spec:
  gatewayClassName: eg
  listeners:
  - {name: http, protocol: HTTP, port: 80}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: web, namespace: apps}
spec:
  parentRefs: [{name: edge}]
  rules:
  - backendRefs: [{name: web, port: 80}]
---
apiVersion: v1
kind: Service
metadata: {name: web, namespace: apps}
spec:
  ports: [{port: 80}]
"""


def btp(name: str, body: str, kind: str = "HTTPRoute", target: str = "web") -> str:
    return f"""\
---
apiVersion: gateway.envoyproxy.io/v1alpha1
kind: BackendTrafficPolicy
metadata: {{name: {name}, namespace: apps}}
spec:
  targetRefs: [{{group: gateway.networking.k8s.io, kind: {kind}, name: {target}}}]
{body}"""


SCHEMA_BAD = "  loadBalancer: {type: Sticky}\n"
CEL_BAD = "  loadBalancer: {type: ConsistentHash}\n"
VALID = "  loadBalancer: {type: RoundRobin}\n"
ENUM = "('ConsistentHash', 'LeastRequest', 'Random', 'RoundRobin', 'BackendUtilization', 'DynamicModule')"


def targets(result: Any, name: str) -> list[dict[str, Any]]:
    (entry,) = [p for p in result.policy_reports if p["object"]["name"] == name]
    return list(entry["targets"])


def test_the_verdict_is_typed_and_names_the_schema_that_decided() -> None:
    result = lint_text(TOPOLOGY + btp("a", SCHEMA_BAD) + btp("b", CEL_BAD) + btp("c", VALID))
    admissions = result.project.admissions()
    objects = result.project.index.objects
    verdicts = {o.name: admissions.verdict(o) for o in objects if o.kind == "BackendTrafficPolicy"}
    a, b, c = verdicts["a"], verdicts["b"], verdicts["c"]
    assert a is not None and b is not None and c is not None
    ((schema,),) = [a.schema]
    assert (schema.check, schema.path, schema.reason) == (Check.SCHEMA, "spec.loadBalancer.type", "FieldValueNotSupported")
    assert schema.message == f"is 'Sticky', not one of the values the schema allows {ENUM}"
    assert (a.source, a.cel, a.rejected) == ("envoy-gateway v1.9.0", (), True)
    ((cel,),) = [b.cel]
    assert (cel.check, cel.path, cel.reason, b.schema) == (Check.CEL, "spec.loadBalancer", "FieldValueInvalid", ())
    assert cel.message == "If LoadBalancer type is consistentHash, consistentHash field needs to be set."
    assert not c.rejected and list(c.rejections()) == []
    # Built once: the same verdict object every time it is asked for.
    assert admissions.verdict(next(o for o in objects if o.name == "a")) is a


def test_a_policy_the_api_server_rejects_is_invalid_and_takes_no_part() -> None:
    # Alone, a-schema and b-cel would win the route (the oldest, here by name, wins; EG: "another
    # BackendTrafficPolicy has already attached to it") and z-valid would be Conflicted. Refused
    # by the API server, they never exist: z-valid is Enforced and conflicts with nothing.
    result = lint_text(TOPOLOGY + btp("a-schema", SCHEMA_BAD) + btp("b-cel", CEL_BAD) + btp("z-valid", VALID))
    (a,) = targets(result, "a-schema")
    assert (a["accepted"], a["enforcement"]) == ("Invalid", None)
    assert a["message"] == (
        f"rejected by the API server: spec.loadBalancer.type is 'Sticky', not one of the values the schema allows {ENUM}"
        " (the envoy-gateway v1.9.0 CRD)"
    )
    (b,) = targets(result, "b-cel")
    assert (b["accepted"], b["enforcement"]) == ("Invalid", None)
    assert b["message"] == (
        "rejected by the API server: spec.loadBalancer: If LoadBalancer type is consistentHash, consistentHash field needs"
        " to be set. (a CEL rule of the envoy-gateway v1.9.0 CRD)"
    )
    (z,) = targets(result, "z-valid")
    assert (z["accepted"], z["enforcement"], z["beatenBy"]) == ("Accepted", "Enforced", [])
    rules = sorted((f.rule, f.object.name) for f in result.findings)
    # The schema rules still report each (warnings: a bundled schema), and no conflict is reported.
    assert rules == [("PL703", "a-schema"), ("PL704", "b-cel")]


def test_an_invalid_route_policy_does_not_override_the_gateways() -> None:
    valid_gateway = btp("gw", VALID, kind="Gateway", target="edge")
    result = lint_text(TOPOLOGY + valid_gateway + btp("route", CEL_BAD))
    (gw,) = targets(result, "gw")
    assert (gw["accepted"], gw["enforcement"], gw["beatenBy"]) == ("Accepted", "Enforced", [])
    (route,) = targets(result, "route")
    assert route["accepted"] == "Invalid"
    # The same route policy, valid, overrides the Gateway's on the route's only context.
    result = lint_text(TOPOLOGY + valid_gateway + btp("route", VALID))
    (gw,) = targets(result, "gw")
    assert (gw["enforcement"], gw["beatenBy"]) == ("Overridden", ["apps/route"])


def test_pruned_and_deprecated_fields_do_not_make_a_policy_invalid() -> None:
    # An unknown field is pruned by the API server, not refused (PL702): the policy is stored
    # without it, and its controller accepts it.
    result = lint_text(TOPOLOGY + btp("p", VALID + "  loadBalancr: {type: Random}\n"))
    assert [f.rule for f in result.findings] == ["PL702"]
    (p,) = targets(result, "p")
    assert (p["accepted"], p["enforcement"]) == ("Accepted", "Enforced")


# -- PL609: the merged spec ----------------------------------------------------------------------

# The BackendTrafficPolicy CRD's CEL rule on spec: "!has(self.requestBuffer) || !has(self.httpUpgrade) ||
# self.httpUpgrade.size() == 0", message "requestBuffer cannot be used together with httpUpgrade".
UPGRADES = "  httpUpgrade:\n  - type: websocket\n"
BUFFER = "  requestBuffer:\n    limit: 4Mi\n"


def test_a_merge_that_makes_a_spec_the_crd_refuses_is_reported_on_both_policies() -> None:
    gateway = btp("gw", UPGRADES, kind="Gateway", target="edge")
    # Envoy Gateway's mergeType merges the route policy onto the Gateway's: both fields at once.
    result = lint_text(TOPOLOGY + gateway + btp("route", "  mergeType: StrategicMerge\n" + BUFFER))
    got = sorted((f.rule, f.object.name, f.path) for f in result.findings)
    assert got == [("PL609", "gw", "spec.httpUpgrade"), ("PL609", "route", "spec.requestBuffer")]
    message = next(f.message for f in result.findings if f.object.name == "route")
    assert message.startswith(
        "BackendTrafficPolicy apps/route merges with apps/gw into an effective spec the envoy-gateway v1.9.0 CRD refuses:"
        " spec: requestBuffer cannot be used together with httpUpgrade (a CEL rule) (1 context, e.g. "
    )
    # Without mergeType the route policy replaces the Gateway's: nothing is merged.
    result = lint_text(TOPOLOGY + gateway + btp("route", BUFFER))
    assert [f.rule for f in result.findings] == ["PL602"]  # the Gateway's policy is overridden, whole


def test_what_a_policy_has_alone_is_not_the_merges() -> None:
    # One policy with both fields: PL704's finding, and Invalid (it takes part in no merge).
    result = lint_text(TOPOLOGY + btp("both", UPGRADES + BUFFER) + btp("route", "  mergeType: StrategicMerge\n" + VALID))
    assert sorted((f.rule, f.object.name) for f in result.findings) == [("PL704", "both")]


# -- PL704 leaves to PL412, PL415 and PL416 what they report -------------------------------------


def test_a_problem_a_semantic_rule_reports_is_not_reported_again_by_pl704() -> None:
    # Gateway API's CEL rules: on BackendObjectReference "Must have port for Service reference"
    # (PL412); on listeners "tls must not be specified for protocols ['HTTP', 'TCP', 'UDP']"
    # (PL415) and "Combination of port, protocol and hostname must be unique for each listener" (PL416).
    text = TOPOLOGY.replace("backendRefs: [{name: web, port: 80}]", "backendRefs: [{name: web}]").replace(
        "  - {name: http, protocol: HTTP, port: 80}\n",
        "  - {name: http, protocol: HTTP, port: 80}\n  - {name: again, protocol: HTTP, port: 80}\n"
        "  - name: plain\n    protocol: HTTP\n    port: 8080\n    tls: {mode: Terminate, certificateRefs: [{name: c}]}\n",
    )
    result = lint_text(text)
    rules = sorted({f.rule for f in result.findings})
    assert {"PL412", "PL415", "PL416"} <= set(rules)
    assert [f.message for f in result.findings if f.rule == "PL704"] == []
    # Selected alone, PL704 still runs the rules that cover a CEL rule, and stays silent: the
    # problem is theirs whether or not they are selected (one problem, one rule).
    alone = lint_text(text, selection=select("PL704"))
    assert [f.rule for f in alone.findings] == []


def test_a_subtree_objects_share_is_walked_once_per_run_and_no_content_is_read_to_key_it(monkeypatch: Any) -> None:
    # Two routes whose rules are the same: the loader makes them one object
    # (policylint.input.sharing), so that object names its content, and both walks of both routes
    # key their memos by it. Its shape is a token of the object (policylint.k8s.shapes): no map's
    # or list's content is read to work its shape out (before, every new map and list of the run
    # was, a tenth of the verdicts' time on the shared corpus).
    from policylint.k8s import schemawalk
    from policylint.k8s.admissions import Admissions
    from policylint.k8s.cel import program

    rules = "  rules:\n  - matches: [{path: {type: PathPrefix, value: /a}}]\n    backendRefs: [{name: web, port: 80}]\n"
    text = "".join(
        f"---\napiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\nmetadata: {{name: {name}, namespace: apps}}\n"
        f"spec:\n  parentRefs: [{{name: {name}-gw}}]\n{rules}"
        for name in ("one", "two")
    )
    result = lint_text(text, selection=select("PL001"))
    one, two = (o for o in result.index.objects if o.kind == "HTTPRoute")
    shared = one.data["spec"]["rules"][0]
    assert shared is two.data["spec"]["rules"][0]

    def never(value: Any, shapes: Any) -> Any:
        raise AssertionError("a map's or list's content read to shape it")

    monkeypatch.setattr(program, "_map_parts", never)
    monkeypatch.setattr(program, "_list_parts", never)
    visited: list[Any] = []
    original = schemawalk._Walk._visit

    def counting(self: Any, value: Any, node: Any, path: Any) -> None:
        visited.append(value)
        original(self, value, node, path)

    monkeypatch.setattr(schemawalk._Walk, "_visit", counting)
    # A bundled schema's values are visited by its kind's generated functions
    # (policylint.k8s.schemacode): each value `descend` calls one for is visited too.
    import importlib

    from policylint.k8s import schemacode

    routes = importlib.import_module("policylint.k8s.schemachecks._gateway_networking_k8s_io_httproute")

    def called(function: Any) -> Any:
        def visit(value: Any, node: Any, path: Any, walk: Any) -> None:
            visited.append(value)
            function(value, node, path, walk)

        return visit

    def counting_descend(walk: Any, path: Any, pushed: list[Any]) -> None:
        schemacode.descend(walk, path, [(value, called(function), node, key) for value, function, node, key in pushed])

    monkeypatch.setattr(routes, "_descend", counting_descend)
    admissions = Admissions(result.index)
    verdicts = [admissions.verdict(one), admissions.verdict(two)]
    assert [v is not None and not v.rejected for v in verdicts] == [True, True]
    # The second route's walk takes the first's answer for the rule they share.
    assert sum(1 for value in visited if value is shared) == 1


def test_keyed_by_the_objects_or_by_their_content_the_verdicts_are_the_same() -> None:
    # The run's memo of shapes names a map or list by the object (policylint.k8s.shapes); a plain
    # memo works its content out. Over every object of the examples and of a directory where
    # objects refuse what others with the same structure take (a value an enum or a CEL rule
    # refuses, a field too many), both give every object the same schema and CEL refusals and
    # pruned fields, each object's walks sharing one memo with the others' as in a run.
    from policylint.k8s.admission import cel_failures, violations
    from policylint.k8s.admissions import Admissions
    from policylint.k8s.shapes import SharedShapes
    from tests.lintutil import ROOT

    bad = TOPOLOGY + btp("one", SCHEMA_BAD) + btp("two", CEL_BAD) + btp("three", "  loadBalancer: {type: RoundRobin}\n")
    bad += btp("four", "  loadBalancer: {type: RoundRobin, extra: 1}\n") + btp("five", SCHEMA_BAD)
    results = [lint_text(bad, selection=select("PL001")).index]
    from policylint.pipeline import LintRequest, _project

    results.append(_project(LintRequest(paths=[str(ROOT / "examples")]))[0].index)
    compared = refused = 0
    for index in results:
        catalogue = Admissions(index).catalogue
        answers = []
        for memo in (SharedShapes(), {}):
            seen: dict[Any, Any] = {}
            cel: dict[Any, Any] = {}
            found = []
            for obj in index.objects:
                schema = catalogue.schema(obj) if isinstance(obj.data, dict) else None
                if schema is None:
                    continue
                pruned: list[Any] = []
                problems = violations(obj.data, schema[0], seen, memo, pruned)
                failures = [(r.path, r.message) for r in cel_failures(obj.data, schema[0], index.malformed(obj), cel, memo)]
                found.append((obj.key, problems, failures, pruned))
            answers.append(found)
        assert answers[0] == answers[1]
        compared += len(answers[0])
        refused += sum(1 for _, problems, failures, _ in answers[0] if problems or failures)
    assert refused >= 3 and compared > refused


def test_a_verdict_imports_nothing_per_object_or_per_value(monkeypatch: Any) -> None:
    # The walks import the CEL evaluator and the string formats lazily, so that a run whose
    # verdicts are all kept never loads them; they did so with an import statement per walk and
    # per string checked, a sixth of the verdicts' time on the benchmark's corpora. Now what a
    # run imports while it works verdicts out is per kind (its schemas), the same for two routes
    # as for six: neither the schema walk of a route's strings (patterns, formats), nor its CEL
    # rules, nor the other plausible schemas' walk (release unknown) imports per object.
    import builtins

    from policylint.k8s.admissions import Admissions
    from policylint.k8s.dissent import dissent

    route = (
        "---\napiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\nmetadata: {{name: {name}, namespace: apps}}\n"
        "spec:\n  parentRefs: [{{name: edge, sectionName: http}}]\n  hostnames: [{name}.example.com]\n"
        "  rules:\n  - matches: [{{path: {{type: PathPrefix, value: /{name}}}}}]\n"
        "    backendRefs: [{{name: {name}, port: 80}}]\n"
    )

    def imports(names: list[str]) -> list[str]:
        text = TOPOLOGY + btp("lb", "  loadBalancer: {type: RoundRobin}\n") + "".join(route.format(name=n) for n in names)
        result = lint_text(text, selection=select("PL001"))
        objects = list(result.index.objects)
        warm = Admissions(result.index)  # loads what is imported lazily, once per process
        for obj in objects:
            dissent(warm, obj)
        imported: list[str] = []
        original = builtins.__import__

        def counting(name: str, *args: Any, **kwargs: Any) -> Any:
            imported.append(name)
            return original(name, *args, **kwargs)

        admissions = Admissions(result.index)
        with monkeypatch.context() as patched:
            patched.setattr(builtins, "__import__", counting)
            verdicts = [admissions.verdict(o) for o in objects]
            for obj in objects:
                dissent(admissions, obj)
        assert sum(1 for v in verdicts if v is not None and not v.rejected) == 4 + len(names)
        return sorted(imported)

    # Before, the CEL package and its cost limits per walk of an object and policylint.k8s.strformats
    # per string with a pattern or a format: 32 more imports for the four more routes.
    assert imports(["one", "two"]) == imports(["one", "two", "three", "four", "five", "six"])


def test_what_an_object_asks_of_the_other_plausible_schemas_is_found_by_its_api_version(monkeypatch: Any) -> None:
    # Every object the first plausible schema admits asks the plan of its kind (the other
    # schemas and their differences: policylint.k8s.dissent), once per object; the plan is
    # looked up by the object's apiVersion and kind, so that the group and version are split out
    # of the apiVersion once per kind and version, not twice per object (most of the lookup).
    from policylint.k8s.admissions import Admissions
    from policylint.k8s.dissent import dissent

    route = (
        "---\napiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\nmetadata: {{name: r{n}, namespace: apps}}\n"
        "spec:\n  parentRefs: [{{name: edge}}]\n  rules:\n  - backendRefs: [{{name: web, port: {n}}}]\n"
    )
    text = TOPOLOGY + "".join(route.format(n=n) for n in range(1, 9))
    result = lint_text(text, selection=select("PL001"))
    admissions = Admissions(result.index)
    routes = [o for o in result.index.objects if o.kind == "HTTPRoute"]
    assert all(v is not None and not v.rejected for v in (admissions.verdict(o) for o in routes))
    split = _count_api_version_splits(monkeypatch)
    assert [dissent(admissions, o) for o in routes] == [None] * 9
    # The first route's plan is made (its key splits the apiVersion; the schema's lookup finds the
    # kind's answer by the apiVersion and kind the route writes, `Catalogue.schema`); the other
    # routes find it. Before, the version was split for every route's lookup: 10; then 2.
    assert len(split) == 1, split


class _Read(dict[str, Any]):
    """A schema node that counts how often the walk reads its keywords."""

    reads = 0

    def get(self, key: str, default: Any = None) -> Any:
        _Read.reads += 1
        return super().get(key, default)

    def __contains__(self, key: object) -> bool:
        _Read.reads += 1
        return super().__contains__(key)


def _listeners_schema() -> dict[str, Any]:
    """A fresh schema (its nodes never walked before) of a list of maps, each node counting reads:
    a name with a length bound, a port with bounds, a protocol from an enum, an int-or-string and
    a field with a default that satisfies `required`."""
    fields = {
        "name": _Read({"type": "string", "maxLength": 3, "pattern": "^[a-z0-9]+$"}),
        "port": _Read({"type": "integer", "minimum": 1, "maximum": 65535}),
        "protocol": _Read({"type": "string", "enum": ["HTTP", "HTTPS"]}),
        "weight": _Read({"x-kubernetes-int-or-string": True}),
        "mode": _Read({"type": "string", "default": "Terminate"}),
    }
    item = _Read({"type": "object", "required": ["name", "mode"], "properties": fields})
    listeners = _Read({"type": "array", "items": item})
    return {"type": "object", "properties": {"spec": _Read({"type": "object", "properties": {"listeners": listeners}})}}


def test_a_schema_nodes_keywords_are_read_once_per_node_not_once_per_value() -> None:
    """The structural walk reads what a schema node says (its type, enum, bounds, required and
    named fields, markers) once per node (`schemawalk._plan`), not again for every value under it:
    a Gateway's listeners, each its own content, are new values under the same few nodes. What it
    refuses is unchanged, value by value: a name too long or off its pattern, a port out of
    bounds, a protocol outside the enum, a boolean where an int-or-string goes, a missing
    required field without a default (the one with a default is not reported)."""
    from policylint.k8s.schemawalk import violations

    def walked(count: int) -> tuple[int, list[Any]]:
        schema = _listeners_schema()
        listeners: list[dict[str, Any]] = [
            {"name": f"l{i}", "port": 80 + i, "protocol": "HTTP", "weight": i} for i in range(count)
        ]
        listeners[-1] = {"name": "toolong", "port": 0, "protocol": "TCP", "weight": True}
        listeners[0] = {"port": 70000, "protocol": "HTTPS", "weight": "50%", "name": "A"}
        _Read.reads = 0
        found = violations({"spec": {"listeners": listeners}}, schema)
        return _Read.reads, sorted((".".join(map(str, path)), reason) for path, _, reason in found)

    def expected(last: int) -> list[tuple[str, str]]:
        return sorted(
            [
                ("spec.listeners.0.name", "FieldValueInvalid"),  # "A": off the pattern
                ("spec.listeners.0.port", "FieldValueInvalid"),  # 70000: above the maximum
                (f"spec.listeners.{last}.name", "FieldValueTooLong"),  # "toolong": 7 characters
                (f"spec.listeners.{last}.port", "FieldValueInvalid"),  # 0: below the minimum
                (f"spec.listeners.{last}.protocol", "FieldValueNotSupported"),  # "TCP"
                (f"spec.listeners.{last}.weight", "FieldValueTypeInvalid"),  # a boolean
            ]
        )

    few_reads, few = walked(3)
    many_reads, many = walked(60)
    assert few == expected(2)
    assert many == expected(59)
    assert many_reads == few_reads, (few_reads, many_reads)


def _scalars_schema() -> dict[str, Any]:
    """A map whose fields are integers and lists of plain strings and integers, as a Gateway's
    listeners' ports and a route's hostnames are, beside fields whose integers are visited (an
    enum, an int-or-string)."""
    hostname = {"type": "string", "maxLength": 12, "pattern": "^[a-z.*]+$"}
    port = {"type": "integer", "minimum": 1, "maximum": 65535}
    fields = {
        "port": port,
        "count": {"type": "integer"},
        "above": {"type": "integer", "minimum": 0, "exclusiveMinimum": True},
        "level": {"type": "integer", "enum": [1, 2]},
        "weight": {"x-kubernetes-int-or-string": True},
        "hostnames": {"type": "array", "items": hostname},
        "ports": {"type": "array", "items": port},
        "any": {"type": "array", "items": {"type": "string"}},
    }
    return {"type": "object", "properties": {"spec": {"type": "object", "properties": fields}}}


def test_integers_and_plain_list_items_that_pass_are_not_visited() -> None:
    """The structural walk judges an integer under a node that checks only its bounds, and a list
    item that is a string or integer its node checks only plainly (length, pattern, format,
    bounds), where it stands, and visits only those that fail (`schemawalk.passes`): a Gateway's
    60 listener ports and a route's hostnames cost no visit each. What is refused is found as
    before, worked out by hand: port 0 below the minimum, 70000 above the maximum, `above` 0 at
    its exclusive minimum, a level outside its enum, a hostname off its pattern, one too long, a
    boolean where a port goes."""
    from policylint.k8s import schemawalk

    visited: list[Any] = []
    original = schemawalk._Walk._visit

    def counting(self: Any, value: Any, node: Any, path: Any) -> None:
        visited.append(value)
        original(self, value, node, path)

    spec = {
        "port": 443,
        "count": -5,
        "above": 1,
        # 60 hostnames of two letters and ".example", ten characters each, within the pattern.
        "hostnames": [f"{chr(97 + i % 10)}{chr(97 + i // 10)}.example" for i in range(60)] + ["UPPER", "toolong.example.com"],
        "ports": [*range(1, 61), 0, 70000, True],
        "any": ["x"] * 3,
    }
    bad = {"port": 0, "above": 0, "level": 3, "weight": 7}
    try:
        schemawalk._Walk._visit = counting  # type: ignore[method-assign]
        good = schemawalk.violations({"spec": spec}, _scalars_schema())
        found = schemawalk.violations({"spec": {**spec, **bad}}, _scalars_schema())
    finally:
        schemawalk._Walk._visit = original  # type: ignore[method-assign]
    expected = [
        ("spec.hostnames.60", "FieldValueInvalid"),  # "UPPER": off the pattern
        # "toolong.example.com": 19 characters, at most 12 (letters and dots: within the pattern).
        ("spec.hostnames.61", "FieldValueTooLong"),
        ("spec.ports.60", "FieldValueInvalid"),  # 0: below the minimum of 1
        ("spec.ports.61", "FieldValueInvalid"),  # 70000: above the maximum
        ("spec.ports.62", "FieldValueTypeInvalid"),  # a boolean
    ]
    assert sorted((".".join(map(str, p)), r) for p, _, r in good) == sorted(expected)
    assert sorted((".".join(map(str, p)), r) for p, _, r in found) == sorted(
        [
            *expected,
            ("spec.port", "FieldValueInvalid"),  # 0: below the minimum
            ("spec.above", "FieldValueInvalid"),  # 0: the exclusive minimum
            ("spec.level", "FieldValueNotSupported"),  # 3: not 1 or 2
        ]
    )
    scalars = [v for v in visited if type(v) is not dict and type(v) is not list]
    # Visited: the failing items and fields above, and the integers whose node checks more than
    # bounds (level's enum, weight's int-or-string); no passing port, count or hostname.
    assert sorted(map(repr, scalars)) == sorted(map(repr, ["UPPER", "toolong.example.com", 0, 70000, True] * 2 + [0, 0, 3, 7])), (
        scalars
    )


def test_judging_integers_and_list_items_where_they_stand_refuses_what_visiting_them_does() -> None:
    """Differential: on random values of `_scalars_schema` (integers in and out of bounds,
    integral floats, booleans, nulls, strings, template placeholders, under fields and as list
    items), the walk that judges plain integers and list items where they stand reports the same
    violations, in the same order, as the walk that visits every one of them."""
    import random

    from policylint.k8s import schemawalk

    rng = random.Random(38)
    pool: list[Any] = [0, 1, 80, 65535, 65536, -1, 80.0, 1.5, True, None, "80", "a.b", "UP", "{{ .Values.x }}"]
    pool += ["PLACEHOLDER_X", "x" * 20, {"a": 1}, [1]]

    def value() -> dict[str, Any]:
        spec: dict[str, Any] = {}
        for name in ("port", "count", "above", "level", "weight", "hostnames", "ports", "any"):
            if rng.random() < 0.8:
                lists = name in ("hostnames", "ports", "any")
                spec[name] = [rng.choice(pool) for _ in range(rng.randrange(6))] if lists else rng.choice(pool)
        return {"spec": spec}

    def visiting_all(data: dict[str, Any]) -> list[Any]:
        saved = schemawalk._integer_bounds, schemawalk.passes
        schemawalk._integer_bounds = lambda sub: schemawalk.NOT_QUICK  # type: ignore[assignment]
        schemawalk.passes = lambda item, checks, numbers: False  # type: ignore[assignment]
        try:
            return schemawalk.violations(data, _scalars_schema())
        finally:
            schemawalk._integer_bounds, schemawalk.passes = saved

    differing = 0
    for _ in range(400):
        data = value()
        quick = schemawalk.violations(data, _scalars_schema())
        assert quick == visiting_all(data), data
        differing += bool(quick)
    assert differing > 100  # most values are refused somewhere: the comparison is not of empty lists


def _routes(count: int) -> str:
    route = (
        "---\napiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\nmetadata: {{name: r{n}, namespace: apps}}\n"
        "spec:\n  parentRefs: [{{name: edge, sectionName: s{n}}}]\n  rules:\n  - backendRefs: [{{name: web, port: {n}}}]\n"
    )
    return TOPOLOGY + "".join(route.format(n=n) for n in range(1, count + 1))


def test_the_schema_of_an_object_is_found_by_its_api_version_and_kind(monkeypatch: Any) -> None:
    # Every object asks which schema decides it (`Catalogue.schema`); the answer is the kind's
    # and version's, looked up by the apiVersion and kind the object writes, so that the version
    # is split out of the apiVersion once per kind and apiVersion, not once per object.
    from policylint.k8s.admissions import Admissions

    result = lint_text(_routes(8), selection=select("PL001"))
    admissions = Admissions(result.index)
    routes = [o for o in result.index.objects if o.kind == "HTTPRoute"]
    split = _count_api_version_splits(monkeypatch)
    verdicts = [admissions.verdict(o) for o in routes]
    assert all(v is not None and not v.rejected for v in verdicts)
    # The first route's version, to find its schema; the eight others find the answer by what
    # they write. Before, every route's lookup split it: 9.
    assert split == ["gateway.networking.k8s.io/v1"]
    # The same schema as the kind's and version's, and none for a version no schema serves.
    (schema,) = {id(admissions.catalogue.schema(o)) for o in routes}
    assert schema == id(admissions.catalogue.decided["gateway.networking.k8s.io", "HTTPRoute", "v1"])
    text = "---\napiVersion: gateway.networking.k8s.io/v9\nkind: HTTPRoute\nmetadata: {name: x, namespace: apps}\nspec: {}\n"
    (other,) = lint_text(text, selection=select("PL001")).index.objects
    assert admissions.catalogue.schema(other) is None


def _held_ids(values: list[Any]) -> set[int]:
    """The ids of every map and list in `values`."""
    found: set[int] = set()
    stack = list(values)
    while stack:
        value = stack.pop()
        if type(value) is dict:
            found.add(id(value))
            stack.extend(value.values())
        elif type(value) is list:
            found.add(id(value))
            stack.extend(value)
    return found


def test_the_walks_key_the_runs_maps_and_lists_by_the_object_while_it_is_held(monkeypatch: Any) -> None:
    # In the run's memo of shapes a map or list is its own shape, one token per object
    # (policylint.k8s.shapes); both walks key a subtree by the object's id instead, without
    # looking the token up or making one (a lookup per map or list, per walk). An id is the
    # object's only while the object lives: the catalogue holds the data of the objects it
    # walked (`pinned`), and when it lets them go it empties the memo tables too, so that no key
    # ever names an object no longer held.
    from policylint.k8s import admission
    from policylint.k8s.admissions import Admissions

    result = lint_text(_routes(7), selection=select("PL001"))
    routes = [o for o in result.index.objects if o.kind == "HTTPRoute"]
    admissions = Admissions(result.index)
    catalogue = admissions.catalogue
    first = routes[0]
    assert admissions.verdict(first) is not None
    spec = first.data["spec"]
    node = catalogue.schema(first)[0]["properties"]["spec"]  # type: ignore[index]
    parent_refs = node["properties"]["parentRefs"]
    assert (id(parent_refs), id(spec["parentRefs"])) in catalogue.schema_results
    # The route's parentRefs carry CEL rules below: their subtree's cost is kept by the same id.
    assert (id(parent_refs), "/", (id(spec["parentRefs"]),)) in catalogue.cel_results
    # The schema walk of a route makes no token at all (before, one per map and list it keyed:
    # the spec's parentRefs, their item, the rules, the rule, its backendRefs and their item).
    from policylint.k8s.admission import violations
    from policylint.k8s.shapes import SharedShapes

    shapes = SharedShapes()
    assert violations(routes[1].data, catalogue.schema(routes[1])[0], {}, shapes, []) == []  # type: ignore[index]
    assert len(shapes) == 0

    monkeypatch.setattr(admission, "PINNED_LIMIT", 2)
    for route in routes[1:]:
        admissions.verdict(route)
        held = _held_ids(catalogue.pinned)
        assert len(catalogue.pinned) <= 3
        keys = [k[1] for k in catalogue.schema_results if type(k[1]) is int]
        keys += [k[2][0] for k in catalogue.cel_results if k[1] == "/" and type(k[2][0]) is int]
        assert keys and set(keys) <= held, "a memo key names a map or list the catalogue no longer holds"


def test_an_objects_cel_rejections_and_cost_are_the_walks(monkeypatch: Any) -> None:
    # The verdict takes the CEL walk's rejections and cost in one call (`cel_rejections`), not
    # through the generator `cel_failures` gives every other reader: the same rejections in the
    # same order and the same cost, on objects whose rules pass, fail and run out of schema.
    from policylint.k8s.admissions import Admissions
    from policylint.k8s.celrules import cel_failures, cel_rejections
    from policylint.pipeline import LintRequest, _project
    from tests.lintutil import ROOT

    bad = TOPOLOGY + btp("one", CEL_BAD) + btp("two", SCHEMA_BAD) + btp("three", VALID) + btp("four", CEL_BAD)
    indexes = [lint_text(bad, selection=select("PL001")).index]
    indexes.append(_project(LintRequest(paths=[str(ROOT / "examples")]))[0].index)
    compared = failing = 0
    for index in indexes:
        catalogue = Admissions(index).catalogue
        for obj in index.objects:
            found = catalogue.schema(obj) if isinstance(obj.data, dict) else None
            if found is None:
                continue
            spent: list[int] = []
            walked = list(cel_failures(obj.data, found[0], index.malformed(obj), {}, {}, spent))
            rejections, cost = cel_rejections(obj.data, found[0], index.malformed(obj), {}, {})
            assert [(r.path, r.message, r.undecided) for r in rejections] == [(r.path, r.message, r.undecided) for r in walked]
            assert cost == spent[0]
            compared += 1
            failing += bool(walked)
    assert failing >= 2 and compared > failing


def _count_api_version_splits(monkeypatch: Any) -> list[str]:
    """The apiVersions split from now on (`objects.split_api_version`), in the order asked."""
    from policylint.k8s import objects

    split: list[str] = []
    original = objects.split_api_version

    def counting(api_version: str) -> tuple[str, str]:
        split.append(api_version)
        return original(api_version)

    monkeypatch.setattr(objects, "split_api_version", counting)
    return split


def test_strings_without_a_pattern_and_well_formed_objects_cost_no_call_of_their_own(monkeypatch: Any) -> None:
    """The structural walk judges a string whose node checks only its length in its map's loop,
    calling `_plain_string_checked` only for a pattern or a format to match; the CEL walk asks
    which fields are malformed (`Malformed.broken`) only of an object that has any. What is
    refused is unchanged, worked out by hand: `toolong` is 7 characters where 3 at most go, `X`
    is off the pattern, and a rule on a field PL010 reports as malformed is not run."""
    from policylint.k8s import celrules, schemawalk
    from policylint.k8s.fieldtypes import FieldProblem, Malformed

    checked: list[str] = []
    original = schemawalk._plain_string_checked

    def counting(out: Any, path: Any, key: Any, child: str, checks: Any) -> bool:
        checked.append(child)
        return original(out, path, key, child, checks)

    monkeypatch.setattr(schemawalk, "_plain_string_checked", counting)
    item = {
        "type": "object",
        "properties": {"name": {"type": "string", "maxLength": 3}, "host": {"type": "string", "pattern": "^[a-z]+$"}},
    }
    schema = {
        "type": "object",
        "properties": {"spec": {"type": "object", "properties": {"items": {"type": "array", "items": item}}}},
    }
    items = [{"name": "ab", "host": "x"} for _ in range(20)] + [{"name": "toolong", "host": "X"}]
    found = schemawalk.violations({"spec": {"items": items}}, schema)
    assert sorted((".".join(map(str, p)), r) for p, _, r in found) == [
        ("spec.items.20.host", "FieldValueInvalid"),
        ("spec.items.20.name", "FieldValueTooLong"),
    ]
    assert checked == ["x"] * 20 + ["X"]  # the hosts alone: each name's length was judged in the loop

    asked: list[Any] = []
    broken = Malformed.broken

    def asking(self: Malformed, *path: Any) -> bool:
        asked.append(path)
        return broken(self, *path)

    monkeypatch.setattr(Malformed, "broken", asking)
    ruled = {
        "type": "object",
        "properties": {
            "spec": {
                "type": "object",
                "properties": {"n": {"type": "integer"}},
                "x-kubernetes-validations": [{"rule": "self.n < 3", "message": "n"}],
            }
        },
    }
    data = {"spec": {"n": 5}}
    refused = [r.message for r in celrules.cel_failures(data, ruled, Malformed(), {})]
    assert (refused, asked) == (["n"], [])
    wrong = Malformed(problems=(FieldProblem(("spec",), "OBJECT", "x"),))
    assert [r.message for r in celrules.cel_failures(data, ruled, wrong, {})] == []
    assert asked == [("spec",)]


def test_a_node_with_rules_gives_its_rejections_without_a_generator_and_a_subtree_ends_without_a_call(
    monkeypatch: Any,
) -> None:
    """The CEL walk takes each node's rejections as a list, an empty tuple where its rules pass,
    not from a generator per node; the structural walk keeps the answer of a subtree where nothing
    was found in its loop, calling `_end` only for one that holds a violation or a pruned field.
    What is refused and kept is unchanged, worked out by hand: the second item's `n` is 5 where the
    rule wants less than 3, and its `x` is no field of the schema."""
    import types

    from policylint.k8s import celrules, schemawalk
    from policylint.k8s.fieldtypes import Malformed

    given: list[Any] = []
    node = celrules._CelRun._node

    def recording(self: Any, raw: Any, at: Any, parts: Any) -> Any:
        found = node(self, raw, at, parts)
        given.append(found)
        return found

    monkeypatch.setattr(celrules._CelRun, "_node", recording)
    ended: list[Any] = []
    end = schemawalk._Walk._end

    def ending(self: Any, mark: Any) -> None:
        ended.append(mark)
        end(self, mark)

    monkeypatch.setattr(schemawalk._Walk, "_end", ending)
    item = {
        "type": "object",
        "properties": {"n": {"type": "integer"}},
        "x-kubernetes-validations": [{"rule": "self.n < 3", "message": "n is 3 or more"}],
    }
    schema = {
        "type": "object",
        "properties": {"spec": {"type": "object", "properties": {"items": {"type": "array", "items": item}}}},
    }
    data = {"spec": {"items": [{"n": 1}, {"n": 5, "x": 1}]}}
    refused = [(r.path, r.message) for r in celrules.cel_failures(data, schema, Malformed(), {}, {})]
    assert refused == [("spec.items[1]", "n is 3 or more")]
    assert not any(isinstance(found, types.GeneratorType) for found in given)
    assert [len(found) for found in given] == [0, 1]  # the first item passes: an empty tuple
    seen: dict[Any, Any] = {}
    pruned: list[Any] = []
    assert schemawalk.violations(data, schema, seen, {}, pruned) == []
    assert [(p, name) for p, name, _ in pruned] == [(("spec", "items", 1), "x")]
    # Four subtrees (`spec`, the list, two items; the root is no subtree): the first item found
    # nothing and was kept at once; the second item holds the pruned `x`, and so do the list and
    # `spec` above it: each ends with `_end`, which keeps it with what was found, relative to it.
    assert len(ended) == 3
    assert [v if v is schemawalk._NOTHING else v[1] for v in seen.values()] == [
        schemawalk._NOTHING,
        (((), "x", ["n"]),),
        (((1,), "x", ["n"]),),
        ((("items", 1), "x", ["n"]),),
    ]
