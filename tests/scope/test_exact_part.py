"""The gate's base side asks for the findings of the objects and files a change's findings are
about (`lint(part=..., exact=True)`): those are the part's members, not what a change of them could
move besides (policylint.semantics.directed `searched`). What the members are on hand-made tenants,
and that their findings are a whole run's on generated repositories of tenants sharing Services."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from policylint import pipeline
from policylint.k8s.objects import ObjectKey
from policylint.pipeline import LintRequest
from policylint.semantics import components
from tests.incremental.test_incremental import _corpus, _write
from tests.scope.test_directed import GW, _chain


def _scoped(root: Path, origin: list[str], removed: list[ObjectKey], *, exact: bool) -> tuple[set[str], set[str]]:
    """The names of the members and of the analysed objects of the part (thresholds off)."""
    loaded = pipeline._project(LintRequest(paths=[str(root)]))[0]
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(components, "MIN_OBJECTS", 0)
        patch.setattr(components, "MAX_SHARE", 1.0)
        search = components.scope_exact if exact else components.scope
        part = search(loaded.index.objects, [str(root / o) for o in origin], removed)
    assert part is not None
    return {k.name for k in part.members}, {o.name for o in part.objects}


def test_the_objects_asked_for_are_the_members_and_what_their_findings_read_is_analysed(tmp_path: Path) -> None:
    """Tenant 6's route r6 asked for: it alone is a member (a change of it makes members of its
    namespace's objects, the routes naming into it, the readers of what it reads and their
    policies). What its findings read is analysed as for any members: its Gateway, the Services of
    tenants 5 and 4 and their grants, every route reaching those Services and what those read."""
    _chain(tmp_path, n=16)
    route = ObjectKey(GW, "HTTPRoute", "t6", "r6")
    members, analysed = _scoped(tmp_path, [], [route], exact=True)
    assert members == {"r6"}
    assert {"gw6", "svc6", "svc5", "svc4", "allow5", "allow4", "r5", "r4", "r7", "r8"} <= analysed
    assert not {name for k in range(11, 16) for name in (f"r{k}", f"gw{k}", f"svc{k}", f"p{k}")} & analysed
    changed, _ = _scoped(tmp_path, [], [route], exact=False)
    assert {"r6", "r7", "r8", "p6", "p7", "p8", "svc6"} <= changed
    # A file asked for: its objects are the members.
    members, _ = _scoped(tmp_path, ["t03.yaml"], [], exact=True)
    assert members == {"gw3", "r3", "svc3", "allow3", "p3"}
    # A key of two kinds' objects in one namespace: only the kind asked for.
    assert _scoped(tmp_path, [], [ObjectKey("", "Service", "t6", "r6")], exact=True)[0] == set()


@pytest.mark.parametrize(("seed", "shared"), [(3, False), (8, True), (21, False)])
def test_the_members_findings_are_a_whole_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, seed: int, shared: bool) -> None:
    """Objects with findings and objects without, and the files of findings on no object, asked
    for at random, on tenants reaching their neighbours' Services or sharing them (`shared`): the
    findings about them are the whole run's, fingerprint for fingerprint, and the members are
    those objects and the files' objects."""
    monkeypatch.setattr(components, "MIN_OBJECTS", 0)
    monkeypatch.setattr(components, "MAX_SHARE", 1.0)
    root = tmp_path / "repo"
    root.mkdir()
    _write(root, _corpus(seed, 400, isolated=False, shared=shared))
    request = LintRequest(paths=[str(root)])
    whole = pipeline.lint(request)
    assert whole.findings
    rng = random.Random(seed)
    found = sorted({f.object for f in whole.findings if f.object is not None}, key=str)
    every = sorted({o.key for o in whole.index.objects}, key=str)
    files = sorted({f.file for f in whole.findings if f.object is None})
    for _ in range(4):
        objects = frozenset(rng.sample(found, min(3, len(found))) + rng.sample(every, 2))
        named = frozenset(rng.sample(files, min(1, len(files))))
        part = pipeline.lint(request, part=(named, objects), exact=True)
        assert part.members is not None and part.analysed is not None

        def about(result: pipeline.LintResult) -> list[str]:
            return sorted(
                f.fingerprint
                for f in result.findings
                if f.object in objects or (f.object is None and f.file in named)  # noqa: B023
            )

        assert about(part) == about(whole)
        # Where the directed search declines, the sets' members hold them and more.
        assert objects <= part.members
