"""What the rules go through once rather than once per object or per rule (docs/performance.md,
"The rules' lookups shared"), each counted on the function that does the work, the findings
checked against what each rule finds alone or against the label checks themselves:

- PL506 goes through the labels of a map once, whatever the number of objects that hold it (the
  loader makes maps of one content one object);
- the rules over every policy's target references (PL204, PL206, PL302, PL303, PL304) read one
  list of the references with their resolutions, made once for all of them;
- PL403 and PL404 list only the cross-namespace references a misplaced grant would permit;
- PL201's near matches make the set of a place's names once, whatever the number of names asked
  about there.
"""

from __future__ import annotations

import random
import string
from pathlib import Path
from typing import Any

import pytest

from policylint import project
from policylint.k8s.names import did_you_mean
from policylint.pipeline import LintRequest, lint
from policylint.rules import handshakes, labels, targetref
from policylint.rules.engine import Selection
from tests.lintutil import lint_paths, lint_text
from tests.manifests import S15, gateway, gateway_class, route, s15_grant, service

RULES = Path(__file__).resolve().parent


def _counting(monkeypatch: pytest.MonkeyPatch, owner: Any, name: str) -> list[object]:
    """Count the calls of `owner.name` (a function of a module); a lookup for `Project.derived`
    kept across rules stays so."""
    calls: list[object] = []
    original = getattr(owner, name)

    def counted(*args: Any, **kwargs: Any) -> Any:
        calls.append(args)
        return original(*args, **kwargs)

    if original in project._ACROSS_RULES:
        monkeypatch.setattr(project, "_ACROSS_RULES", {*project._ACROSS_RULES, counted})
    monkeypatch.setattr(owner, name, counted)
    return calls


def _labelled(name: str, labels_text: str) -> str:
    """A Service in namespace app with `metadata.labels`, a flow mapping."""
    return f"---\napiVersion: v1\nkind: Service\nmetadata: {{name: {name}, namespace: app, labels: {labels_text}}}\nspec: {{}}\n"


def test_label_maps_of_one_content_are_gone_through_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """Six Services hold one label map with a bad key and a bad value, three another with no
    problem: two maps gone through, and each of the six gets both findings, the key's first, as
    when every object's labels were gone through."""
    monkeypatch.setattr(labels, "_LABEL_MAPS", labels.IdentityMap())
    gone_through = _counting(monkeypatch, labels, "label_problems")
    bad = "{app: web, -bad: x, tier: -no-}"
    good = "{app: web, tier: front}"
    text = "".join(_labelled(f"bad{i}", bad) for i in range(6)) + "".join(_labelled(f"good{i}", good) for i in range(3))
    result = lint_text(text, selection=Selection(select=("PL506",)))
    assert len(gone_through) == 2
    # Worked out by hand: `-bad` does not start with an alphanumeric character, and `-no-`
    # neither starts nor ends with one; both are on the label's own path (a key that is not a
    # plain name written in brackets).
    assert [(str(f.object), f.path, f.message.split(":")[0]) for f in result.findings] == [
        x
        for i in range(6)
        for x in (
            (f"Service app/bad{i}", 'metadata.labels["-bad"]', "label key '-bad' is invalid"),
            (f"Service app/bad{i}", "metadata.labels.tier", "the value '-no-' of label 'tier' is invalid"),
        )
    ]


def test_label_problems_are_those_of_each_label(monkeypatch: pytest.MonkeyPatch) -> None:
    """On random label maps, some shared by several objects: each object's findings are what the
    checks of each of its labels say, in the map's order."""
    rng = random.Random(7)
    letters = "ab-." + rng.choice(string.ascii_lowercase)

    def word() -> str:
        return "".join(rng.choice(letters) for _ in range(rng.randint(1, 6)))

    maps = [{word(): word() for _ in range(rng.randint(0, 4))} for _ in range(12)]
    chosen = [rng.choice(maps) for _ in range(40)]
    text = "".join(_labelled(f"s{i}", "{" + ", ".join(f"'{k}': '{v}'" for k, v in m.items()) + "}") for i, m in enumerate(chosen))
    monkeypatch.setattr(labels, "_LABEL_MAPS", labels.IdentityMap())
    result = lint_text(text, selection=Selection(select=("PL506",)))
    expected = []
    for i, m in enumerate(chosen):
        for key, value in m.items():
            key_problem, value_problem = labels.qualified_name_problem(key), labels.label_value_problem(value)
            if key_problem:
                expected.append((f"Service app/s{i}", f"label key {key!r} is invalid: {key_problem}"))
            if value_problem:
                expected.append((f"Service app/s{i}", f"the value {value!r} of label {key!r} is invalid: {value_problem}"))
    assert expected
    found = [(str(f.object), f.message) for f in result.findings]
    # The engine sorts findings by position; each object's own are in the map's order.
    assert sorted(found) == sorted(expected)
    for i in range(len(chosen)):
        assert [m for o, m in found if o == f"Service app/s{i}"] == [m for o, m in expected if o == f"Service app/s{i}"]


_REFERENCE_RULES = ("PL204", "PL206", "PL302", "PL303", "PL304")


@pytest.mark.parametrize("fixture", _REFERENCE_RULES)
def test_rules_over_target_references_share_one_list(monkeypatch: pytest.MonkeyPatch, fixture: str) -> None:
    """The five rules that go through every policy's references with their resolutions list them
    once between them, and each finds, with the others, what it finds alone."""
    (path,) = (str(p) for p in RULES.glob(f"{fixture}-*/bad.yaml"))
    alone = {rule: lint_paths([path], selection=Selection(select=(rule,))).findings for rule in _REFERENCE_RULES}
    listed = _counting(monkeypatch, targetref, "_ref_resolutions")
    together = lint(LintRequest(paths=[path], selection=Selection(select=_REFERENCE_RULES)))
    assert len(listed) == 1
    found = sorted((f.rule, str(f.object), f.path, f.message) for f in together.findings)
    assert fixture in {f[0] for f in found}
    assert found == sorted((f.rule, str(f.object), f.path, f.message) for rule in _REFERENCE_RULES for f in alone[rule])


def test_the_shared_list_is_every_reference_with_its_resolution() -> None:
    """The list holds every policy's references in index order, each with the resolution the
    resolution stage gives it."""
    paths = sorted(str(p) for rule in _REFERENCE_RULES for p in RULES.glob(f"{rule}-*/bad.yaml"))
    built = lint_paths(paths).project
    listed = targetref.ref_resolutions(built)
    expected = [(p, r) for p in built.resolution.policies() for r in p.refs]
    assert len(expected) > len(_REFERENCE_RULES)
    assert [(p, r) for p, r, _ in listed] == expected
    assert all(res is built.resolution.resolve_target(p, r) for p, r, res in listed)


def test_only_references_a_misplaced_grant_would_permit_are_listed(monkeypatch: pytest.MonkeyPatch) -> None:
    """Of two cross-namespace references, one permitted by its grant and one that a grant in the
    referrer's namespace would permit from the referent's, PL403 lists only the second with its
    `Reference`, and finds the misplaced grant as before."""
    permitted = (
        service("svc3", "ns3")
        + route(name="route-y", ns="ns2", rules="  - backendRefs:\n    - {name: svc3, namespace: ns3, port: 80}\n")
        + s15_grant("ns3", name="rg3")
    )
    text = S15 + permitted + s15_grant("ns2")
    made = _counting(monkeypatch, handshakes, "CheckedReference")
    result = lint_text(text, selection=Selection(select=("PL403",)))
    topology = result.project.topology()
    crossing = [ref for obj in result.project.index.objects for ref in topology.refs_from(obj) if ref.namespace != obj.namespace]
    assert len(crossing) == 2
    assert len(made) == 1
    assert [(f.rule, str(f.object)) for f in result.findings] == [("PL403", "ReferenceGrant ns2/rg")]


def test_near_matches_make_a_place_s_names_one_set() -> None:
    """Questions about three missing names among one namespace's routes make the set of its
    names once, and each answer is `did_you_mean`'s over those names."""
    routes = ("storefront", "checkout", "catalog")
    text = gateway_class() + gateway() + "".join(route(name=name) for name in routes)
    similar = targetref._SimilarNames(lint_text(text).project)
    asked = {"storfront": "storefront", "chekout": "checkout", "zzz": None}
    for name, expected in asked.items():
        found = similar.closest("gateway.networking.k8s.io", "HTTPRoute", "app", name)
        assert (found.name if found is not None else None) == expected
        assert (did_you_mean(name, routes) or [None])[0] == expected
    assert list(similar._sets.values()) == [frozenset(routes)]
