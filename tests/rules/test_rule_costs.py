"""What the rules work out once rather than per rule, per pair or per value (docs/performance.md,
"The rules' own time"): each saving counted on the function it no longer calls as often, and
its answers checked against what the work it replaces answers.

- PL601, PL602 and PL603 look each policy target's status up once between them (`_Statuses`);
- PL609 walks no merged spec of a stack of one policy's facets;
- PL424 compares a listener's hostname only with those it may overlap on its port, and finds
  the listener a comparison of every pair finds first;
- PL426 (and PL703, through `forbidden_header_values`) and PL506 write out the path of a value
  only for a finding;
- the near match of a hint (`did_you_mean`) is difflib's, and the ratio of a candidate that
  cannot beat the best so far is not worked out;
- each path the findings sit on is parsed once, for its position and to tell whether it holds a placeholder;
- PL705 and PL707 ask the catalogue once per apiVersion and kind;
- a finding's fingerprint is written without `json.dumps` and `dataclasses.replace` per finding,
  as the finding is made: only a repeat is made again, to number it;
- a fix's edits are copied only for an object inside a `kind: List`, whose paths change;
- PL703 and PL704 read the other plausible schemas' answers where the admission stage keeps them;
- PL701 expands a deprecated field's pattern only on a policy that has the keys before its wildcard.
"""

from __future__ import annotations

import dataclasses
import difflib
import hashlib
import json
import random
import re
import string
from pathlib import Path
from typing import Any, cast

import pytest
import yaml

from policylint.findings import Finding, ResolvedRelated, Severity
from policylint.input import positions
from policylint.k8s import names
from policylint.k8s.objects import ObjectKey
from policylint.pipeline import LintRequest, lint
from policylint.rules import effective_policy, engine, filters, labels, listeners
from policylint.rules.engine import Selection
from policylint.semantics.effective.simulation import Simulation
from policylint.semantics.topology import Listener
from tests.lintutil import lint_paths, lint_text
from tests.manifests import gateway, gateway_class, policy, route

RULES = Path(__file__).resolve().parent


def _counting(monkeypatch: pytest.MonkeyPatch, owner: Any, name: str) -> list[object]:
    """Count the calls of `owner.name` (a function of a module or a method of a class)."""
    calls: list[object] = []
    original = getattr(owner, name)

    def counted(*args: Any, **kwargs: Any) -> Any:
        calls.append(args)
        return original(*args, **kwargs)

    monkeypatch.setattr(owner, name, counted)
    return calls


@pytest.mark.parametrize("fixture", ["PL601-policy-conflicted", "PL602-policy-overridden", "PL603-policy-partially-enforced"])
def test_effective_rules_look_each_target_status_up_once(monkeypatch: pytest.MonkeyPatch, fixture: str) -> None:
    """Each rule of the three went through every policy's targets and looked each status up: three
    lookups a target. Between them now one, and each finds what it finds alone."""
    path = RULES / fixture / "bad.yaml"
    trio = ("PL601", "PL602", "PL603")
    alone = {rule: lint_paths([path], selection=Selection(select=(rule,))).findings for rule in trio}
    calls = _counting(monkeypatch, Simulation, "target_status")
    together = lint(LintRequest(paths=[str(path)], selection=Selection(select=trio)))  # no policies' report
    targets = sum(len(together.project.resolution.targets(p)) for p in together.project.resolution.policies())
    assert targets > 1
    assert len(calls) == targets
    found = [(f.rule, str(f.object), f.path, f.message) for f in together.findings]
    assert found
    expected = sorted(
        ((f.rule, str(f.object), f.path, f.message) for rule in trio for f in alone[rule]),
        key=lambda f: found.index(f) if f in found else -1,
    )
    assert found == expected


def test_invalid_effective_spec_walks_no_stack_of_one_policy(monkeypatch: pytest.MonkeyPatch) -> None:
    """PL609's example with a second route below the Gateway, which only the Gateway's policy
    reaches: of the two stacks, that one merged nothing and its tree is not walked for the
    policies that contributed to it; the merged one still has its finding."""
    bad = (RULES / "PL609-invalid-effective-spec" / "bad.yaml").read_text(encoding="utf-8")
    other = route("[{name: edge}]", name="other", ns="apps")
    walked = _counting(monkeypatch, effective_policy, "_leaf_sources")
    result = lint_text(bad + other, selection=Selection(select=("PL609",)))
    stacks = sorted(
        (g for g in result.project.simulation().stack_groups() if g.result.tree is not None),
        key=lambda g: len({f.policy.obj for f in g.stack}),
    )
    assert [len({f.policy.obj for f in g.stack}) for g in stacks] == [1, 2]
    single, merged = stacks
    assert any(node is merged.result.tree for node, _ in walked)
    assert not any(node is single.result.tree for node, _ in walked)
    assert [(f.rule, str(f.object)) for f in result.findings] == [
        ("PL609", "BackendTrafficPolicy apps/gateway-upgrades"),
        ("PL609", "BackendTrafficPolicy apps/route-buffer"),
    ]


class _Stub:
    """What the overlap search reads of a listener: its port and hostname."""

    def __init__(self, name: str, port: int, hostname: str | None) -> None:
        self.name, self.port, self.hostname = name, port, hostname


def _listener(name: str, port: int, hostname: str | None) -> Listener:
    return cast(Listener, _Stub(name, port, hostname))


def _naive_overlaps(found: list[Listener]) -> list[tuple[str, str]]:
    """The first other listener each one overlaps on its port: every pair compared, in order."""
    out = []
    for listener in found:
        for other in found:
            if (
                other is not listener
                and other.port == listener.port
                and listeners.hostnames_overlap(listener.hostname, other.hostname)
            ):
                out.append((listener.name, other.name))
                break
    return out


def test_tls_overlap_finds_the_first_overlapping_listener_as_every_pair_does() -> None:
    """Random listeners on few ports, with hostnames from a small pool (plain names, wildcards
    over them and over each other, none): the first overlapping listener of each is the one a
    comparison of every pair finds."""
    pool = [None, "", "a.example.com", "b.example.com", "x.a.example.com", "*.example.com", "*.a.example.com", "*.com", "*"]
    rng = random.Random(424)
    for _ in range(400):
        found = [_listener(f"l{i}", rng.choice((443, 8443)), rng.choice(pool)) for i in range(rng.randint(1, 12))]
        assert [(a.name, b.name) for a, b in listeners._first_overlaps(found)] == _naive_overlaps(found)


def test_tls_overlap_compares_plain_names_by_lookup(monkeypatch: pytest.MonkeyPatch) -> None:
    """Forty HTTPS listeners with distinct plain names on one port, a wildcard and a name under
    it: a plain name is compared with the wildcard alone, the wildcard with each name once (every
    pair was compared: 42 × 41 comparisons), and the overlapping two found."""
    tls = "tls: {certificateRefs: [{name: c}]}"
    https = "".join(f"  - {{name: l{i}, port: 443, protocol: HTTPS, hostname: h{i}.example.com, {tls}}}\n" for i in range(40))
    https += f"  - {{name: any, port: 443, protocol: HTTPS, hostname: '*.w.example.com', {tls}}}\n"
    https += f"  - {{name: one, port: 443, protocol: HTTPS, hostname: a.w.example.com, {tls}}}\n"
    calls = _counting(monkeypatch, listeners, "hostnames_overlap")
    result = lint_text(gateway_class() + gateway(https), selection=Selection(select=("PL424",)))
    assert [(f.rule, f.path) for f in result.findings] == [
        ("PL424", "spec.listeners[40].hostname"),
        ("PL424", "spec.listeners[41].hostname"),
    ]
    assert len(calls) == 41 + 41


def test_header_values_write_out_only_a_wrong_one(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every header value a route's filters set is looked at (by PL426, and by PL703 through
    `forbidden_header_values`); only the one HTTP forbids has its path written out."""
    headers = ", ".join(f"{{name: h{i}, value: ok}}" for i in range(20))
    modifier = f'{{set: [{headers}], add: [{{name: x, value: "a\\nb"}}]}}'
    rules = f"  - filters:\n    - {{type: RequestHeaderModifier, requestHeaderModifier: {modifier}}}\n    backendRefs: [{{name: web, port: 80}}]\n"
    text = gateway_class() + gateway() + route(rules=rules)
    written = _counting(monkeypatch, filters, "format_path")
    result = lint_text(text, selection=Selection(select=("PL426",)))
    assert [(f.rule, f.path) for f in result.findings] == [
        ("PL426", "spec.rules[0].filters[0].requestHeaderModifier.add[0].value")
    ]
    assert len(written) == 1
    obj = next(o for o in result.project.index.objects if o.kind == "HTTPRoute")
    del written[:]
    assert filters.forbidden_header_values(obj) == frozenset({"spec.rules[0].filters[0].requestHeaderModifier.add[0].value"})
    assert len(written) == 1


def test_label_selectors_join_a_path_only_for_a_finding(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every listener's `allowedRoutes` selector is checked (PL506); a path is joined only for the
    one with a problem, and it is the path joined before. The ten listeners' selectors of one
    content are one map (the loader's sharing): it is measured and written out once, not ten
    times, and the other selector once."""
    monkeypatch.setattr(labels, "_LAST_SELECTOR", [])
    measured: list[int] = []
    small = labels._small

    def counted(value: Any, budget: list[int]) -> bool:
        if budget[0] == labels._KEY_BUDGET:  # a whole selector, not a value inside one
            measured.append(1)
        return small(value, budget)

    monkeypatch.setattr(labels, "_small", counted)
    selector = "allowedRoutes: {namespaces: {from: Selector, selector: {matchLabels: {team: %s}}}}"
    good = "".join(f"  - {{name: l{i}, port: {80 + i}, protocol: HTTP, {selector % 'a'}}}\n" for i in range(10))
    bad = f"  - {{name: bad, port: 99, protocol: HTTP, {selector % '-a-'}}}\n"
    joined = _counting(monkeypatch, labels, "join")
    result = lint_text(gateway_class() + gateway(good + bad), selection=Selection(select=("PL506",)))
    assert [(f.rule, f.path) for f in result.findings] == [
        ("PL506", "spec.listeners[10].allowedRoutes.namespaces.selector.matchLabels.team")
    ]
    assert len(joined) == 1
    assert len(measured) == 2


def _words(rng: random.Random, n: int) -> list[str]:
    letters = "ab-" + rng.choice(string.ascii_lowercase)
    return ["".join(rng.choice(letters) for _ in range(rng.randint(0, 8))) for _ in range(n)]


def test_did_you_mean_answers_as_difflib() -> None:
    """On random short words over few letters (many ties, empty words, every cutoff the callers
    use), the one closest candidate is `difflib.get_close_matches`'s; more than one is its too."""
    rng = random.Random(201)
    for _ in range(3000):
        word = _words(rng, 1)[0]
        candidates = _words(rng, rng.randint(0, 12))
        cutoff = rng.choice((0.0, 0.5, 0.6, 0.75, 1.0))
        n = rng.choice((1, 1, 3))
        expected = difflib.get_close_matches(word, sorted(set(candidates)), n=n, cutoff=cutoff)
        assert names.did_you_mean(word, candidates, n=n, cutoff=cutoff) == expected, (word, candidates, cutoff)
    with pytest.raises(ValueError):
        names.did_you_mean("a", ["a"], cutoff=1.5)


def test_did_you_mean_skips_the_ratio_of_a_candidate_that_cannot_win(monkeypatch: pytest.MonkeyPatch) -> None:
    """`checkout-v2` is within the cutoff of `checkout-v1x`, but the letters it shares with it
    bound its ratio under `checkout-v1`'s, found first: its ratio is not worked out. Asked again,
    the pair's ratio is the one kept."""
    monkeypatch.setattr(names, "_RATIOS", {})
    ratios = _counting(monkeypatch, difflib.SequenceMatcher, "ratio")
    assert names.did_you_mean("checkout-v1x", ["checkout-v2", "checkout-v1"]) == ["checkout-v1"]
    assert len(ratios) == 1
    assert names.did_you_mean("checkout-v1x", ["checkout-v1", "checkout-v2", "other"]) == ["checkout-v1"]
    assert len(ratios) == 1


def test_engine_parses_each_path_of_the_findings_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """Twelve policies, each with a target that is missing and one whose name is a placeholder: the
    thirteen findings sit on one path, parsed once, and the placeholder's is still dropped (PL004's)."""
    monkeypatch.setattr(positions, "_PARTS", {})
    parsed = _counting(monkeypatch, positions, "parse_path")
    ref = "[{group: gateway.networking.k8s.io, kind: Gateway, name: %s}]"
    text = "".join(policy("BackendTrafficPolicy", ref % f"gw-{i}", name=f"p{i}") for i in range(12))
    text += policy("BackendTrafficPolicy", ref % "'${GATEWAY}'", name="templated")
    result = lint_text(text, selection=Selection(select=("PL201",)))
    assert [(f.rule, f.path) for f in result.findings] == [("PL201", "spec.targetRefs[0].name")] * 12
    # Each distinct path once, for the placeholder check and the positions alike (the positions
    # also ask for the finding's ancestors).
    assert parsed.count(("spec.targetRefs[0].name",)) == 1
    assert len(parsed) == len(set(parsed))


@pytest.mark.parametrize(
    ("fixture", "rule", "asked"),
    [
        ("PL705-api-version-not-served", "PL705", "project"),
        ("PL707-deprecated-api-version", "PL707", "deprecation_of"),
    ],
)
def test_served_and_deprecated_versions_asked_once_per_api_version_and_kind(
    monkeypatch: pytest.MonkeyPatch, fixture: str, rule: str, asked: str
) -> None:
    """The rule's example twice over, the copy in another namespace: the catalogue is asked about
    each apiVersion and kind once (it was asked for every object), and each copy has the findings
    of the object it copies, on itself."""
    from policylint.k8s.admission import Catalogue

    case = RULES / fixture
    options = yaml.safe_load((case / "options.yaml").read_text(encoding="utf-8"))
    text = (case / "bad.yaml").read_text(encoding="utf-8")
    calls = _counting(monkeypatch, Catalogue, asked)
    once = lint_text(text, selection=Selection(select=(rule,)), **dict(options))
    asked_once = len(calls)
    del calls[:]
    twice = lint_text(
        text + "\n---\n" + text.replace("namespace: apps", "namespace: copy"),
        selection=Selection(select=(rule,)),
        **dict(options),
    )
    assert asked_once > 0
    assert len(calls) == asked_once
    found = [(f.rule, f.object.kind, f.object.name, f.path, f.message) for f in once.findings if f.object is not None]
    copied = [
        (f.rule, f.object.kind, f.object.name, f.path, f.message)
        for f in twice.findings
        if f.object is not None and f.object.namespace == "copy"
    ]
    assert found and [f for f in found if f[1] != "CustomResourceDefinition"] == copied


def _definition(f: Finding, occurrence: int = 0) -> str:
    """The fingerprint as `engine.fingerprint`'s docstring defines it, written with `json.dumps`."""
    if f.object is not None:
        key = f.object
        parts: list[object] = [f.rule, key.group, key.kind, key.namespace, key.name, "", f.path, ""]
    else:
        parts = [f.rule, None, None, None, None, f.file, f.path, re.sub(r"\b(line|column) [0-9]+", r"\1 _", f.message)]
    text = json.dumps([*parts, occurrence], ensure_ascii=True, separators=(",", ":"))
    return hashlib.blake2b(text.encode("ascii"), digest_size=16).hexdigest()


def test_fingerprints_are_the_defined_digest_written_without_dumping(monkeypatch: pytest.MonkeyPatch) -> None:
    """Random rules, keys, files, paths and messages (quotes, backslashes, control characters,
    non-ASCII, a lone surrogate, `line 3`), on objects and on files: each fingerprint is the
    digest of the JSON array the definition names, with no `json.dumps` per finding, and each
    finding is the one it was but for its fingerprint."""
    rng = random.Random(38)
    alphabet = 'ab"\\/\n\t\x00\x7fé€😀\ud800 :line3'

    def text() -> str:
        return "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 12)))

    findings = []
    for i in range(300):
        on_object = rng.random() < 0.6
        key = ObjectKey(text(), text(), rng.choice((None, text())), text()) if on_object else None
        message = text() + (f" line {i} column 2" if rng.random() < 0.5 else "")
        related = (ResolvedRelated(text(), text(), 1, 2),)
        findings.append(
            Finding(
                text() or "f",
                i,
                1,
                rng.choice(("PL201", "PL002")),
                "n",
                Severity.ERROR,
                message,
                key,
                "v1",
                text(),
                related,
                text(),
                "",
                None,
                i,
                3,
                None,
            )
        )
    findings += findings[:40]  # the same again: occurrences 1
    dumped = _counting(monkeypatch, json, "dumps")
    out = engine.with_fingerprints(findings)
    assert dumped == []
    monkeypatch.undo()
    seen: dict[str, int] = {}
    for before, after in zip(findings, out):
        base = _definition(before)
        occurrence = seen.get(base, 0)
        seen[base] = occurrence + 1
        assert after.fingerprint == _definition(before, occurrence)
        assert after == dataclasses.replace(before, fingerprint=after.fingerprint)
    assert max(seen.values()) == 2


def test_each_finding_is_made_once_with_its_fingerprint(monkeypatch: pytest.MonkeyPatch) -> None:
    """Twelve policies with a missing target each: the engine makes twelve findings, each with its
    fingerprint as defined (the tree before made each again to set it)."""
    Finding("f", 1, 1, "PL201", "n", Severity.ERROR, "m")  # its `__init__` compiled, as on first use
    made = _counting(monkeypatch, Finding, "__init__")
    ref = "[{group: gateway.networking.k8s.io, kind: Gateway, name: %s}]"
    text = "".join(policy("BackendTrafficPolicy", ref % f"gw-{i}", name=f"p{i}") for i in range(12))
    result = lint_text(text, selection=Selection(select=("PL201",)))
    assert [f.rule for f in result.findings] == ["PL201"] * 12
    assert len(made) == 12
    assert [f.fingerprint for f in result.findings] == [_definition(f) for f in result.findings]


def test_with_fingerprints_numbers_a_repeat_and_keeps_a_base_it_is_given() -> None:
    """A finding that carries its base fingerprint is kept as it is; a repeat of it is made again
    with its occurrence, and one without a fingerprint gets its own."""
    key = ObjectKey("gateway.networking.k8s.io", "Gateway", "app", "gw")
    bare = Finding("a.yaml", 3, 1, "PL201", "n", Severity.ERROR, "m", key, "v1", "spec.x")
    stamped = dataclasses.replace(bare, fingerprint=_definition(bare))
    other = Finding("a.yaml", 1, 1, "PL002", "n", Severity.ERROR, "line 1", None, "", "")
    out = engine.with_fingerprints([stamped, stamped, other])
    assert out[0] is stamped
    assert [f.fingerprint for f in out] == [_definition(bare), _definition(bare, 1), _definition(other)]
    assert out[1] == dataclasses.replace(bare, fingerprint=_definition(bare, 1))


def test_a_fix_copies_its_edits_only_inside_a_list(monkeypatch: pytest.MonkeyPatch) -> None:
    """PL110's fix on a policy of its own document and on one inside a `kind: List`: the first
    takes the fix's edits as they are, the second's are copied with the document's path."""
    copied = _counting(monkeypatch, engine, "replace")
    stale = "status: {ancestors: []}\n"
    plain = policy("BackendTrafficPolicy", "[{group: gateway.networking.k8s.io, kind: Gateway, name: gw}]") + stale
    listed = yaml.safe_load(plain)
    listed["metadata"]["name"] = "q"
    text = plain + "---\n" + yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": [listed]})
    result = lint_text(text, selection=Selection(select=("PL110",)))
    fixes = [(f.object.name if f.object else "", f.fix) for f in result.findings]
    assert [(name, [e.path for e in fix.edits]) for name, fix in fixes if fix is not None] == [
        ("p", ["status"]),
        ("q", ["items[0].status"]),
    ]
    assert len(copied) == 1


def test_schema_and_cel_rules_read_the_admission_stages_dissents(monkeypatch: pytest.MonkeyPatch) -> None:
    """PL703 and PL704 over both rules' examples: each object's answer from the other plausible
    schemas is worked out once, and kept by the admission stage alone; the rules build no table
    of their own to hold it again (the tree before built one per rule)."""
    from policylint.k8s import dissent
    from policylint.project import Project

    text = "\n---\n".join(
        (RULES / fixture / "bad.yaml").read_text(encoding="utf-8")
        for fixture in ("PL703-schema-violation", "PL704-cel-violation")
    )
    built = _counting(monkeypatch, Project, "derived")
    worked_out = _counting(monkeypatch, dissent, "_dissent")
    result = lint_text(text, selection=Selection(select=("PL703", "PL704")))
    assert {f.rule for f in result.findings} == {"PL703", "PL704"}
    assert len(worked_out) == len({id(obj) for _, obj in worked_out})
    lookups = {compute.__module__ for _, compute in built}
    assert "policylint.rules.releases" not in lookups


def test_deprecated_fields_expanded_only_where_their_keys_are() -> None:
    """The keys a deprecated field's pattern names before its first wildcard."""
    from policylint.rules import schema

    assert schema._named_prefix("spec.compression") == ("spec", "compression")
    assert schema._named_prefix("spec.jwt.providers[*].remoteJWKS.backendRef") == ("spec", "jwt", "providers")
    assert schema._named_prefix("spec.rules.authentication.*.apiKey") == ("spec", "rules", "authentication")


def test_deprecated_field_patterns_expanded_only_on_a_policy_that_has_their_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    """A BackendTrafficPolicy with none of its kind's five deprecated fields and a SecurityPolicy
    whose second JWT provider sets a deprecated `remoteJWKS.backendRef`: the patterns are expanded
    only where the keys before their wildcard are (the JWT providers' two), and the one field is
    found in the second item (the tree before expanded all fourteen patterns)."""
    from policylint.rules import schema

    expanded = _counting(monkeypatch, schema, "expand_pattern")
    target = "[{group: gateway.networking.k8s.io, kind: Gateway, name: gw}]"
    providers = (
        "  jwt:\n    providers:\n    - name: a\n      remoteJWKS: {uri: 'https://a.example/jwks'}\n"
        "    - name: b\n      remoteJWKS:\n        uri: https://b.example/jwks\n        backendRef: {name: jwks, port: 443}\n"
    )
    text = policy("BackendTrafficPolicy", target, name="plain") + "---\n"
    text += policy("SecurityPolicy", target, name="jwt", spec=providers)
    result = lint_text(text, selection=Selection(select=("PL701",)))
    assert [(f.object.name if f.object else "", f.path) for f in result.findings] == [
        ("jwt", "spec.jwt.providers[1].remoteJWKS.backendRef")
    ]
    assert sorted(pattern for _, pattern in expanded) == [
        "spec.jwt.providers[*].remoteJWKS.backendRef",
        "spec.jwt.providers[*].remoteJWKS.backendSettings.loadBalancer.consistentHash.header",
    ]
