"""Properties of the effective-policy simulation (hypothesis; bounded, a few seconds).

1. Order independence (every acceptance scenario must hold for any shuffle of the input
   documents, docs/semantics.md#acceptance-scenarios; README "Usage": output in a deterministic
   order, whatever the order of the inputs): the JSON report's
   policies[] and findings are the same for any order of the documents in a file and of the
   files on the command line.
2. Merging a spec with itself changes nothing: RFC 7386 `merge_patch(x, x) == x` (for specs
   without `null`, which is a deletion marker rather than a value), `merge_rules(x, x) == x`,
   and folding a policy with an identical copy on the same target gives the policy's spec,
   whatever the strategy.
3. Atomic and Patch agree when every spec holds one scalar: with a single field there is
   nothing to mix, so GEP-713's atomicity levels must give the same value in every context.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from policylint.profiles.registry import profile_from_dict
from policylint.reporters.json import report as json_report  # unpatched: conftest validates the others
from policylint.semantics.effective.fold import fold
from policylint.semantics.effective.merge import merge_patch, merge_rules, tag, untag
from tests.simulation.test_merge import RULE_KEYED, make_facet
from tests.simulation.test_scenarios_effective import EFFECTIVE, effective_values, run

# Each example lints a few times, so the suite runs a small budget; POLICYLINT_FUZZ_EXAMPLES
# (as for tests/hostile/test_fuzz.py) runs more.
SETTINGS = settings(
    max_examples=int(os.environ.get("POLICYLINT_FUZZ_EXAMPLES") or 25),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)

# GEP-713 Examples 2/3 topology: g1 > r1 > b1, g1 > r2 > b1, g2 > r3 > b1, g2 > r4 > b2; the
# ColorPolicy profile of Example 3 (defaults/overrides, strategy atomic|patch, backend level).
TOPOLOGY = (EFFECTIVE / "s03-gep713-example-3" / "input.yaml").read_text().split("\n---\n")
TOPOLOGY = [doc for doc in TOPOLOGY if "kind: ColorPolicy" not in doc]
PROFILE = EFFECTIVE / "s03-gep713-example-3" / "profile.yaml"
TARGETS = {
    "g1": "Gateway",
    "g2": "Gateway",
    "r1": "HTTPRoute",
    "r2": "HTTPRoute",
    "r3": "HTTPRoute",
    "r4": "HTTPRoute",
}
STAMPS = [None, "2024-01-01T00:00:00Z", "2024-01-01T00:00:01Z"]


@st.composite
def policy_specs(draw: st.DrawFn, *, scalar: bool = False) -> dict[str, Any]:
    """One ColorPolicy: a target, a block (plain spec, defaults or overrides), maybe a strategy,
    colours, maybe a creationTimestamp (equal timestamps and none at all are both likely)."""
    colors = (
        {"color": draw(st.sampled_from(["red", "blue", "green"]))}
        if scalar
        else {
            "colors": draw(
                st.dictionaries(st.sampled_from(["dark", "light"]), st.sampled_from(["red", "blue", "green"]), min_size=1)
            )
        }
    )
    return {
        "target": draw(st.sampled_from(sorted(TARGETS))),
        "block": draw(st.sampled_from(["plain", "defaults", "overrides"])),
        "strategy": draw(st.sampled_from([None, "atomic", "patch"])),
        "values": colors,
        "stamp": draw(st.sampled_from(STAMPS)),
    }


def render(index: int, p: dict[str, Any], strategy: str | None = None) -> str:
    """The policy as a YAML document (JSON is YAML); `strategy` replaces the drawn one."""
    strategy = strategy if strategy is not None else p["strategy"]
    body = dict(p["values"])
    if strategy is not None:
        body["strategy"] = strategy
    metadata = {"name": f"p{index}", "namespace": "app"}
    if p["stamp"]:
        metadata["creationTimestamp"] = p["stamp"]
    spec: dict[str, Any] = {
        "targetRefs": [{"group": "gateway.networking.k8s.io", "kind": TARGETS[p["target"]], "name": p["target"]}]
    }
    spec.update(body if p["block"] == "plain" else {p["block"]: body})
    return json.dumps({"apiVersion": "example.com/v1", "kind": "ColorPolicy", "metadata": metadata, "spec": spec}) + "\n"


def normalized(result: Any) -> dict[str, Any]:
    """The report without positions (they move when documents move within a file)."""
    doc = json_report(result)
    findings = []
    for f in doc["findings"]:
        f = {k: v for k, v in f.items() if k not in ("file", "line", "column")}
        f["related"] = [{k: v for k, v in r.items() if k not in ("file", "line", "column")} for r in f["related"]]
        findings.append(f)
    policies = [{k: v for k, v in p.items() if k not in ("file", "line")} for p in doc["policies"]]
    return {"findings": sorted(findings, key=lambda f: json.dumps(f, sort_keys=True)), "policies": policies}


# -- 1. order independence ---------------------------------------------------------------------


@SETTINGS
@given(st.lists(policy_specs(), min_size=1, max_size=5), st.randoms(use_true_random=False))
def test_report_is_independent_of_document_and_file_order(policies: list[dict[str, Any]], rnd: Any) -> None:
    docs = TOPOLOGY + [render(i, p) for i, p in enumerate(policies)]
    shuffled = list(docs)
    rnd.shuffle(shuffled)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        # One file: the documents in two orders.
        (root / "a").mkdir()
        (root / "b").mkdir()
        (root / "a" / "all.yaml").write_text("\n---\n".join(docs))
        (root / "b" / "all.yaml").write_text("\n---\n".join(shuffled))
        one = normalized(run([root / "a" / "all.yaml"], [PROFILE]).result)
        assert normalized(run([root / "b" / "all.yaml"], [PROFILE]).result) == one
        # One file per document, named by the document: the same report, positions included,
        # whatever order the files are given in.
        paths = []
        for i, doc in enumerate(docs):
            paths.append(root / f"doc-{i:02d}.yaml")
            paths[-1].write_text(doc)
        order = list(paths)
        rnd.shuffle(order)
        first = json_report(run(paths, [PROFILE]).result)
        assert json_report(run(order, [PROFILE]).result) == first
        assert normalized(run(order, [PROFILE]).result) == one


# -- 2. merging with itself --------------------------------------------------------------------

JSON_SCALARS = st.one_of(st.booleans(), st.integers(-5, 5), st.sampled_from(["a", "b", ""]))
NULL_FREE_JSON = st.recursive(
    JSON_SCALARS,
    lambda children: st.one_of(
        st.lists(children, max_size=3), st.dictionaries(st.sampled_from(["k", "l", "m"]), children, max_size=3)
    ),
    max_leaves=12,
)
SPECS = st.dictionaries(st.sampled_from(["rules", "limits", "color", "when"]), NULL_FREE_JSON, max_size=4)


@settings(max_examples=200, deadline=None)
@given(NULL_FREE_JSON)
def test_merge_patch_with_itself_is_identity(x: Any) -> None:
    assert untag(merge_patch(tag(x, "E"), tag(x, "C"))) == x


@settings(max_examples=200, deadline=None)
@given(SPECS)
def test_merge_rules_with_itself_is_identity(x: dict[str, Any]) -> None:
    assert untag(merge_rules(tag(x, "L"), tag(x, "W"))) == x
    assert untag(merge_rules(tag(x, "L"), tag(x, "W"), [("rules",)])) == x


SEED_STYLE = profile_from_dict(
    {
        "group": "example.com",
        "kind": "ColorPolicy",
        "versions": ["v1"],
        "class": "Inherited",
        "boilerplate": "policy-attachment",
        "targets": {"single": "targetRef"},
        "merge": {"defaults": "default", "overrides": "override"},
        "effectiveTarget": "route",
    },
    project="test",
    origin="profile",
    source="tests/simulation/test_effective_properties.py",
)
NONE_STRATEGY = profile_from_dict(
    {
        "group": "example.com",
        "kind": "ColorPolicy",
        "versions": ["v1"],
        "class": "Direct",
        "boilerplate": "gep713",
        "targets": {"list": "targetRefs"},
        "merge": {"default": "none"},
        "effectiveTarget": "route",
    },
    project="test",
    origin="profile",
    source="tests/simulation/test_effective_properties.py",
)
STRATEGIES = [
    (RULE_KEYED, "none", "atomic"),
    (RULE_KEYED, "default", "atomic"),
    (RULE_KEYED, "default", "patch"),
    (RULE_KEYED, "default", "rules"),
    (RULE_KEYED, "override", "atomic"),
    (RULE_KEYED, "override", "patch"),
    (RULE_KEYED, "override", "rules"),
    (SEED_STYLE, "default", "patch"),
    (SEED_STYLE, "override", "patch"),
    (NONE_STRATEGY, "none", "atomic"),
]


@settings(max_examples=150, deadline=None)
@given(st.sampled_from(STRATEGIES), SPECS.filter(bool), st.sampled_from(["gateway", "route"]))
def test_fold_with_an_identical_copy_on_the_same_target(strategy: Any, spec: dict[str, Any], level: str) -> None:
    """p and p' (another name, the same spec, the same node): the effective spec is p's."""
    profile, role, atomicity = strategy
    p = make_facet("p", level, role, atomicity, spec, target="t")
    copy = make_facet("p-copy", level, role, atomicity, spec, target="t")
    assert untag(fold([p, copy], profile).tree) == spec


# -- 3. Atomic and Patch agree on one scalar ---------------------------------------------------


@SETTINGS
@given(
    st.lists(policy_specs(scalar=True), min_size=1, max_size=6),
    st.lists(st.sampled_from(["atomic", "patch"]), min_size=6, max_size=6),
)
def test_atomic_and_patch_agree_when_every_spec_is_one_scalar(policies: list[dict[str, Any]], mix: list[str]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        atomic = root / "atomic.yaml"
        mixed = root / "mixed.yaml"
        atomic.write_text("\n---\n".join(TOPOLOGY + [render(i, p, "atomic") for i, p in enumerate(policies)]))
        mixed.write_text("\n---\n".join(TOPOLOGY + [render(i, p, mix[i]) for i, p in enumerate(policies)]))
        levels = ("gateway", "route", "backend")
        expected = effective_values(run([atomic], [PROFILE]), "ColorPolicy", levels)
        assert effective_values(run([mixed], [PROFILE]), "ColorPolicy", levels) == expected
