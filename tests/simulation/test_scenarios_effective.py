"""Acceptance scenarios S01–S11 and S19 on the effective-policy simulation.

The acceptance scenarios are numbered S01–S20; docs/semantics.md#acceptance-scenarios lists
them all with the public source each one comes from. This module owns these, one directory
each under tests/effective/ (the header of each `expected*.yaml` states the scenario and
works its expected outcome out by hand):

- S01 two Direct policies on one Service: the older wins, the other is Conflicted; without
  timestamps `{namespace}/{name}` decides and the finding says so (GEP-713 example 1);
- S02, S03 GEP-713 examples 2 and 3: atomic and patch defaults and overrides across
  Gateways and routes, with one backend getting different values per context;
- S04 GEP-713's abstract DAG: one object reached by two paths, two effective policies;
- S05 policy-machinery's twelve rule-keyed merge cases, end to end;
- S06, S07 a Gateway, two routes and their rules, merged atomically and by rule, then
  field by field (RFC 7386);
- S08 two same-level policies: the older one's strategy decides (kuadrant-operator #1052);
- S09 two same-level policies, each with override and default blocks (gwctl's
  `TestMergePoliciesOfSimilarKind`), as a GEP-713-style and as a policy-attachment-style kind;
- S10 a Gateway and a route policy in the policy-attachment style, merged field by field
  (gwctl's `TestMergePoliciesOfDifferentHierarchy`);
- S11 cluster-scoped policies on a GatewayClass and a Namespace (gwctl's Namespace level);
- S19 an empty atomic override that erases every policy below it.

Every expected value was worked out by hand from the spec text the file cites (GEP-713
"Conflicting specs, Inheritance, Merge strategies, and Effective metaresources", the
original Gateway API Policy Attachment page's "Hierarchy", docs/effective-policy.md),
never copied from output. The format of an expectation file is described in
tests/effective/README.md.

Every variant is checked twice: as written, and with the documents of every input file in
reverse order (every expected result must hold for any order of the input documents;
tests/simulation/test_effective_properties.py shuffles at random).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from policylint.findings import Severity
from policylint.pipeline import LintResult
from policylint.reporters import json as json_reporter
from policylint.rules.engine import INTERNAL_ERROR
from policylint.semantics.effective.facets import Context, NodeKey
from policylint.semantics.effective.merge import leaves, untag
from policylint.semantics.effective.simulation import Simulation
from policylint.vocabulary import Enforcement
from tests.lintutil import lint_paths

EFFECTIVE = Path(__file__).resolve().parents[1] / "effective"

# Levels shown in a context label unless an expectation says otherwise: GEP-713's examples
# write contexts as Gateway > Route > Backend ("g1 > r1 > b1").
DEFAULT_LEVELS = ("gateway", "route", "backend")


# -- running a scenario --------------------------------------------------------------------


@dataclass
class Run:
    result: LintResult
    sim: Simulation
    contexts: list[Context]  # every context of the run
    report: dict[str, Any]


def run(inputs: Sequence[Path], profiles: Sequence[Path] = (), **options: Any) -> Run:
    result = lint_paths(list(inputs), profile_paths=[str(p) for p in profiles], **options)
    assert not [f for f in result.findings if f.rule == INTERNAL_ERROR], "a rule raised"
    sim = result.project.simulation()
    return Run(result, sim, sim.contexts(lambda _path: True), json_reporter.report(result))


def node_name(run_: Run, node: NodeKey) -> str:
    """`name`, or `name#section` for a listener, a rule (its name, else rule<n>) or a port."""
    level, key, section = node
    if level == "rule":
        # A rule node carries the rule's name, or its position when it has none.
        return f"{key.name}#{section}" if isinstance(section, str) else f"{key.name}#rule{section + 1}"
    if level in ("listener", "port"):
        return f"{key.name}#{section}"
    return key.name


def context_label(run_: Run, path: Iterable[NodeKey], levels: Sequence[str] = DEFAULT_LEVELS) -> str:
    return ">".join(node_name(run_, n) for n in path if n[0] in levels)


def contexts_of(run_: Run, kind: str, levels: Sequence[str] = DEFAULT_LEVELS) -> dict[str, Context]:
    """Contexts of one policy kind by label; a label must name exactly one context."""
    out: dict[str, Context] = {}
    for context in run_.contexts:
        if context.profile.kind != kind:
            continue
        label = context_label(run_, context.path, levels)
        assert label not in out, f"two {kind} contexts are labelled {label!r}: show more levels"
        out[label] = context
    return out


def effective_values(run_: Run, kind: str, levels: Sequence[str] = DEFAULT_LEVELS) -> dict[str, Any]:
    return {label: untag(c.result.tree) for label, c in contexts_of(run_, kind, levels).items()}


def provenance(context: Context) -> dict[str, str]:
    """Every leaf of the effective spec: dotted key path -> `ns/name role` of the block that set it."""
    out = {}
    for path, leaf in leaves(context.result.tree):
        facet = leaf.source
        out[".".join(path)] = f"{facet.name} {facet.role.label}" if facet is not None else "?"
    return out


def policy_entry(run_: Run, key: str) -> dict[str, Any]:
    """The JSON report's policies[] entry of the policy `Kind ns/name` (or `Kind name`)."""
    for entry in run_.report["policies"]:
        obj = entry["object"]
        label = f"{obj['kind']} {obj['namespace']}/{obj['name']}" if obj["namespace"] else f"{obj['kind']} {obj['name']}"
        if label == key:
            return entry
    raise AssertionError(f"no policy {key} in the report")


def affected_by(run_: Run, obj: str) -> set[str]:
    """`Kind ns/name` of the policies that contribute to the effective spec (Enforced or
    PartiallyEnforced) in some context through `obj` (GEP-713 examples: "Status of Backend b1
    should be reported as affected by ...")."""
    out: set[str] = set()
    for context in run_.contexts:
        if not any(str(n[1]) == obj for n in context.path):
            continue
        for facet in context.stack:
            if context.result.status[facet] in (Enforcement.ENFORCED, Enforcement.PARTIALLY_ENFORCED):
                out.add(str(facet.policy.key))
    return out


def engine_backends_affected_by(run_: Run, backend: str) -> set[str]:
    """The same question asked of the engine's own aggregate (Simulation.policy_affects)."""
    out = set()
    for policy in run_.result.project.resolution.policies():
        if any(str(n[1]) == backend for n in run_.result.project.simulation().policy_affects(policy).backends):
            out.add(str(policy.key))
    return out


def checked_findings(run_: Run) -> list[Any]:
    """The findings an expectation must list in full: every PL6xx, and every warning or error."""
    return [f for f in run_.result.findings if f.rule.startswith("PL6") or f.severity >= Severity.WARNING]


# -- expectations ------------------------------------------------------------------------


def expectation_files() -> list[Path]:
    return sorted(EFFECTIVE.glob("*/expected*.yaml"))


def load_expectation(path: Path) -> dict[str, Any]:
    data = yaml.safe_load(path.read_text())
    assert isinstance(data, dict) and data.get("inputs"), f"{path}: needs `inputs`"
    return data


def check(run_: Run, exp: dict[str, Any], where: str) -> None:
    levels = tuple(exp.get("levels", DEFAULT_LEVELS))
    for kind, expected in (exp.get("contexts") or {}).items():
        assert effective_values(run_, kind, levels) == expected, f"{where}: effective {kind} per context"
    for kind, by_context in (exp.get("provenance") or {}).items():
        contexts = contexts_of(run_, kind, levels)
        for label, expected in by_context.items():
            assert provenance(contexts[label]) == expected, f"{where}: provenance of {kind} in {label}"
    for key, expected in (exp.get("policies") or {}).items():
        entry = policy_entry(run_, key)
        wanted = expected if isinstance(expected, list) else [expected]
        assert len(entry["targets"]) == len(wanted), f"{where}: {key} has {len(entry['targets'])} targets"
        for target, want in zip(entry["targets"], wanted):
            got = {k: target[k] for k in want if k != "affects"}
            assert got == {k: v for k, v in want.items() if k != "affects"}, f"{where}: status of {key}"
        if isinstance(expected, dict) and "affects" in expected:
            assert entry["affects"] == expected["affects"], f"{where}: affects of {key}"
    for obj, expected in (exp.get("affected") or {}).items():
        assert affected_by(run_, obj) == set(expected), f"{where}: policies affecting {obj}"
        if obj.startswith("Service "):
            assert engine_backends_affected_by(run_, obj) == set(expected), f"{where}: policy_affects() for {obj}"
    if "findings" in exp:
        got = Counter((f.rule, str(f.object)) for f in checked_findings(run_))
        want = Counter((f["rule"], f["object"]) for f in exp["findings"])
        assert got == want, f"{where}: findings\n" + "\n".join(
            f"  {f.rule} {f.object}: {f.message}" for f in run_.result.findings
        )
        for item in exp["findings"]:
            matches = [f for f in checked_findings(run_) if f.rule == item["rule"] and str(f.object) == item["object"]]
            for fragment in item.get("contains", ()):
                assert any(fragment in f.message for f in matches), (
                    f"{where}: {item['rule']} on {item['object']} lacks {fragment!r}: " + " | ".join(f.message for f in matches)
                )
            if "path" in item:
                assert item["path"] in {f.path for f in matches}, f"{where}: {item['rule']} path"


def reversed_copy(src: Path, dst_dir: Path) -> Path:
    docs = src.read_text().split("\n---\n")
    dst = dst_dir / src.name
    dst.write_text("\n---\n".join(reversed(docs)) + "\n")
    return dst


@pytest.mark.parametrize("path", expectation_files(), ids=lambda p: f"{p.parent.name}/{p.stem}")
@pytest.mark.parametrize("order", ["as-written", "reversed"])
def test_scenario(path: Path, order: str, tmp_path: Path) -> None:
    exp = load_expectation(path)
    inputs = [(path.parent / name).resolve() for name in exp["inputs"]]
    profiles = [(path.parent / name).resolve() for name in exp.get("profiles", ())]
    if order == "reversed":
        copies = []
        for i, src in enumerate(inputs):
            (tmp_path / str(i)).mkdir()
            copies.append(reversed_copy(src, tmp_path / str(i)))
        inputs = copies[::-1]
    check(run(inputs, profiles, **exp.get("options", {})), exp, f"{path.parent.name}/{path.name} ({order})")


def test_every_scenario_has_an_expectation() -> None:
    """S01–S11 and S19: the scenarios this suite owns (see the module docstring), one directory each."""
    dirs = {p.parent.name.split("-")[0] for p in expectation_files()}
    assert {f"s{n:02d}" for n in (*range(1, 12), 19)} <= dirs


# -- checks the expectation format cannot express ----------------------------------------------


def scenario(name: str, variant: str = "expected") -> tuple[Run, dict[str, Any]]:
    path = EFFECTIVE / name / f"{variant}.yaml"
    exp = load_expectation(path)
    inputs = [path.parent / n for n in exp["inputs"]]
    profiles = [path.parent / n for n in exp.get("profiles", ())]
    return run(inputs, profiles, **exp.get("options", {})), exp


def messages(run_: Run, rule: str) -> list[str]:
    return [f.message for f in run_.result.findings if f.rule == rule]


def test_s01_conflict_names_the_winner_and_the_timestamps() -> None:
    """S01: "b1 already claimed by app/p1 (older: T < T+1)"."""
    run_, _ = scenario("s01-direct-none")
    (message,) = messages(run_, "PL601")
    assert "on Service app/b1" in message
    assert "b1 already claimed by app/p1 (older: 2024-01-01T00:00:00Z < 2024-01-01T00:00:01Z)" in message


def test_s01_tie_is_broken_by_name_and_says_so() -> None:
    """S01 tie variant: no timestamps, `app/p1 < app/p2`, so p1 wins, and the finding says that
    the verdict rests on the tie-break (docs/semantics.md#missing-creation-timestamps)."""
    run_, _ = scenario("s01-direct-none", "expected-tie")
    (message,) = messages(run_, "PL601")
    assert "already claimed by app/p1 (tie-break: app/p1 sorts before app/p2; no creationTimestamp)" in message
    assert "would change with creation order" in message


def test_s08_both_orders_flip_the_outcome() -> None:
    """S08: the same two policies give opposite statuses when only the creation order changes."""
    first, _ = scenario("s08-established-strategy", "expected-case1")
    second, _ = scenario("s08-established-strategy", "expected-case2")
    values = [effective_values(r, "RateLimitPolicy", ("gateway", "route", "rule")) for r in (first, second)]
    assert values[0]["gw>r>r#rule1"] != values[1]["gw>r>r#rule1"]
    (m1,) = messages(first, "PL604")
    (m2,) = messages(second, "PL604")
    # The alternative each finding shows is the other case's effective spec.
    assert '{"limits": {"gateway_limit"' in m1.split(" but ", 1)[1]
    assert '{"limits": {"route_limit"' in m2.split(" but ", 1)[1]


def test_s09_alternative_outcome_is_the_other_creation_order() -> None:
    """S09: the order-sensitive finding shows what hc-2 first would give (oldest-first again)."""
    run_, _ = scenario("s09-same-level", "expected-policy-attachment")
    (message,) = messages(run_, "PL604")
    assert '{"key1": "f", "key2": "i", "key3": "b", "key4": "j", "key5": "c"} if default/hc-2 were created first' in message


def test_s10_different_kinds_do_not_share_contexts() -> None:
    """S10 variant: a ColorPolicy and a ShadePolicy on the same targets fold separately."""
    run_, _ = scenario("s10-hierarchy-field-merge", "expected-kinds")
    for context in run_.contexts:
        assert {f.policy.key.kind for f in context.stack} == {context.profile.kind}


def test_s19_erasure_is_a_warning_on_the_override_block() -> None:
    run_, _ = scenario("s19-empty-atomic-override")
    (finding,) = [f for f in run_.result.findings if f.rule == "PL607"]
    assert finding.severity == Severity.WARNING
    assert finding.path == "spec.overrides"


def test_conflicted_policy_has_no_enforcement() -> None:
    """A Conflicted policy is Accepted=False; it has no enforcement state
    (docs/semantics.md#status-vocabulary)."""
    run_, _ = scenario("s01-direct-none")
    (target,) = policy_entry(run_, "ColorPolicy app/p2")["targets"]
    assert target["accepted"] == "Conflicted" and target["enforcement"] is None
