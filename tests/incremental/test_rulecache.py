"""What the per-object rules found, reused per object (policylint/incremental/rulecache.py): the
findings of every update are a cold run's over the same texts, whether what a kept result read
changed in the object's own file or in another one, and some scenarios are run once more with the
reuse made wrong on purpose to show that they tell."""

from __future__ import annotations

import json
import sys
import tracemalloc
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from policylint import pipeline
from policylint.findings import Issue, Severity
from policylint.incremental import rulecache
from policylint.incremental.workspace import Workspace
from policylint.input import jsonparts
from policylint.input.cache import ParseCache
from policylint.input.keptfiles import KeptFiles
from policylint.k8s.objects import K8sObject
from policylint.pipeline import LintRequest, LintResult
from policylint.project import Project
from policylint.rules import REGISTRY
from policylint.rules.base import ObjectRule
from policylint.semantics import components
from tests.incremental.test_incremental import _cold, _corpus, _rows
from tests.input.test_keptfiles import framed, parts

WIDGET_CRD = """\
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
spec:
  group: example.com
  scope: Namespaced
  names: {{kind: Widget, plural: widgets, singular: widget, listKind: WidgetList}}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              size: {{type: {size}}}
"""

WIDGETS = """\
apiVersion: example.com/v1
kind: Widget
metadata: {name: w1, namespace: shop}
spec: {size: big}
---
apiVersion: example.com/v1
kind: Widget
metadata: {name: w2, namespace: shop}
spec: {size: 3}
"""


class Session:
    """A workspace over `texts` whose updates are each compared with a cold run of the same texts;
    `reused` counts the objects whose results were kept ones, per update."""

    def __init__(self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, texts: dict[str, str]) -> None:
        monkeypatch.setattr(components, "MIN_OBJECTS", 0)  # small repositories analysed in parts too
        self.monkeypatch = monkeypatch
        self.texts = dict(texts)
        self.editor, self.disk = tmp_path / "editor", tmp_path / "disk"
        self.editor.mkdir()
        self.disk.mkdir()
        for name, text in texts.items():
            (self.editor / name).write_text(text, encoding="utf-8")
        self.reuses: list[rulecache.Reuse] = []
        real = rulecache.start

        def counted(*args: Any, **kwargs: Any) -> rulecache.Reuse | None:
            found = real(*args, **kwargs)
            if found is not None:
                self.reuses.append(found)
            return found

        monkeypatch.setattr(rulecache, "start", counted)
        monkeypatch.chdir(self.editor)
        self.workspace = Workspace(LintRequest(paths=["."], cache_dir=str(tmp_path / "cache")))
        self.first = self.workspace.result

    @property
    def reused(self) -> int:
        return self.reuses[-1].reused

    def update(self, name: str, text: str) -> tuple[LintResult, LintResult]:
        """The workspace's result after `name` holds `text`, and a cold run's."""
        self.texts[name] = text
        result = self.workspace.update(name, text).result
        cold = _cold(self.texts, self.disk, self.monkeypatch)
        self.monkeypatch.chdir(self.editor)
        return result, cold

    def agrees(self, name: str, text: str) -> bool:
        result, cold = self.update(name, text)
        return _rows(result.findings) == _rows(cold.findings) and _rows(result.suppressed) == _rows(cold.suppressed)


def _tenants(seed: int, n: int) -> dict[str, str]:
    return {name: yaml.safe_dump_all(docs, sort_keys=False) for name, docs in _corpus(seed, n, isolated=True).items()}


def _of(result: LintResult, rule: str, file: str) -> list[str]:
    return [f"{f.line}:{f.message}" for f in result.findings if f.rule == rule and f.file == file]


def test_an_update_reuses_what_the_per_object_rules_found_on_unchanged_objects(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    texts = _tenants(3, 60)
    texts["crd.yaml"] = WIDGET_CRD.format(size="integer")
    texts["widgets.yaml"] = WIDGETS
    session = Session(tmp_path, monkeypatch, texts)
    edited = "m-000.yaml"
    for n in range(3):
        result, cold = session.update(edited, session.texts[edited] + f"# edit {n}\n")
        assert _rows(result.findings) == _rows(cold.findings), n
        assert session.reused > 0, n
    # A kept finding: the widget's, in a file the edits never touched, still where it is.
    kept = _of(result, "PL703", "widgets.yaml")
    assert kept == _of(cold, "PL703", "widgets.yaml")
    assert len(kept) == 1
    # Lines added above the widget move its finding: positions come from the file as it is now.
    moved, cold = session.update("widgets.yaml", "# a comment\n# another\n" + WIDGETS)
    assert _of(moved, "PL703", "widgets.yaml") == _of(cold, "PL703", "widgets.yaml")
    assert int(_of(moved, "PL703", "widgets.yaml")[0].split(":")[0]) == int(kept[0].split(":")[0]) + 2
    # Edited again: its objects, unchanged, are found by their own content, their file's being new.
    again, cold = session.update("widgets.yaml", "# a comment\n" + WIDGETS)
    assert _of(again, "PL703", "widgets.yaml") == _of(cold, "PL703", "widgets.yaml")
    assert session.reused > 0


def test_only_a_long_lived_process_holds_what_its_next_run_reads(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The rows per rule and file and each object's key by instance are read by a language
    server's next run only (`RuleResults.held`): a run of the command, filling the cache or
    reading it, holds none of them to the end of its rules stage, and finds the same."""
    texts = _tenants(3, 60)
    texts["crd.yaml"] = WIDGET_CRD.format(size="integer")
    texts["widgets.yaml"] = WIDGETS
    session = Session(tmp_path, monkeypatch, texts)
    editor = session.reuses[-1]
    assert editor._results.held
    assert len(editor._results.instances) >= 60  # every object, the widgets too
    assert len(editor._results._rows) >= len(texts)  # a row per file at least, for each rule
    for run in ("filling", "warm"):
        result = pipeline.lint(LintRequest(paths=["."], cache_dir=str(tmp_path / "one-shot")))
        assert _rows(result.findings) == _rows(session.first.findings), run
        reuse = session.reuses[-1]
        assert reuse is not editor and not reuse._results.held, run
        assert reuse._results.instances == {} and reuse._known == {}, run
        assert reuse._results._rows == {}, run
        assert all(stamp is None for _, _, stamp in reuse._files()), run
    assert reuse.reused > 100  # the warm run read what the filling one wrote


def test_a_run_with_a_cache_reads_what_an_earlier_process_found(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    session = Session(tmp_path, monkeypatch, {"crd.yaml": WIDGET_CRD.format(size="integer"), "widgets.yaml": WIDGETS})
    assert session.reused == 0  # nothing kept yet: written at the end of the run
    again = pipeline.lint(LintRequest(paths=["."], cache_dir=str(tmp_path / "cache")))
    assert session.reused >= 2  # both widgets, for every per-object rule that checks them
    assert _rows(again.findings) == _rows(session.first.findings)
    assert [f.rule for f in again.findings if f.file == "widgets.yaml"] == ["PL703"]


def test_a_crd_changed_in_another_file_is_not_answered_from_the_results_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The widget's file is unchanged; the CRD beside it decides whether its size is right."""
    assert _crd_edits(tmp_path, monkeypatch)


def test_the_crd_scenario_tells_when_the_context_is_left_out(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(rulecache, "context", lambda request, project: b"the same for every run")
    assert not _crd_edits(tmp_path, monkeypatch)


def _crd_edits(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> bool:
    texts = _tenants(4, 30)
    texts["crd.yaml"] = WIDGET_CRD.format(size="integer")
    texts["widgets.yaml"] = WIDGETS
    session = Session(tmp_path, monkeypatch, texts)
    assert len(_of(session.first, "PL703", "widgets.yaml")) == 1
    agreed = session.agrees("crd.yaml", WIDGET_CRD.format(size="string"))  # now w2's 3 is wrong, w1's fine
    agreed &= session.agrees("crd.yaml", "# moved down\n" + WIDGET_CRD.format(size="string"))
    return agreed & session.agrees("crd.yaml", WIDGET_CRD.format(size="integer"))


# A per-object rule that reads another object through a project-wide lookup not marked object-local:
# whether a Service named `backend` exists anywhere.
def _services(project: Project) -> frozenset[str]:
    return frozenset(o.name for o in project.index.objects if o.kind == "Service")


class _Probe(ObjectRule):
    """A route with no Service named backend anywhere (a test's rule)."""

    id = "PL998"
    name = "test-probe"
    severity = Severity.WARNING

    def check_object(self, project: Project, obj: K8sObject) -> Iterable[Issue]:
        if obj.kind == "HTTPRoute" and "backend" not in project.derived(_services):
            yield self.issue(obj, "metadata.name", "no Service named backend")


def _probe_edits(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> bool:
    monkeypatch.setattr(pipeline, "REGISTRY", (*REGISTRY, _Probe))
    route = "apiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\nmetadata: {name: r, namespace: shop}\nspec: {}\n"
    service = "apiVersion: v1\nkind: Service\nmetadata: {{name: {name}, namespace: shop}}\nspec: {{ports: [{{port: 80}}]}}\n"
    session = Session(tmp_path, monkeypatch, {"route.yaml": route, "service.yaml": service.format(name="backend")})
    assert not _of(session.first, "PL998", "route.yaml")
    result, cold = session.update("service.yaml", service.format(name="other"))
    assert _of(cold, "PL998", "route.yaml")
    return _rows(result.findings) == _rows(cold.findings)


def test_a_result_that_read_another_object_is_found_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert _probe_edits(tmp_path, monkeypatch)


def test_the_probe_scenario_tells_when_what_a_check_read_is_not_watched(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(rulecache, "is_object_local", lambda compute: True)
    assert not _probe_edits(tmp_path, monkeypatch)


APP = """\
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw, namespace: infra}
spec:
  gatewayClassName: example
  listeners:
  - {name: http, protocol: HTTP, port: 80, allowedRoutes: {namespaces: {from: All}}}
"""

ROUTE = """\
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: shop, namespace: shop}
spec:
  parentRefs: [{name: gw, namespace: infra}]
  rules:
  - backendRefs: [{name: api, namespace: backends, port: 80}]
"""

SERVICE = """\
apiVersion: v1
kind: Service
metadata: {name: api, namespace: backends}
spec: {ports: [{port: 80}]}
"""

GRANT = """\
apiVersion: gateway.networking.k8s.io/v1beta1
kind: ReferenceGrant
metadata: {name: shop, namespace: backends}
spec:
  from: [{group: gateway.networking.k8s.io, kind: HTTPRoute, namespace: shop}]
  to: [{group: "", kind: Service}]
"""


def test_what_another_file_changes_under_an_unchanged_route_is_found(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The route's file never changes: its parent renamed and its grant removed in other files
    change its findings (rules over the whole part, run again), as a cold run finds them."""
    texts = {"app.yaml": APP, "route.yaml": ROUTE, "service.yaml": SERVICE, "grant.yaml": GRANT}
    session = Session(tmp_path, monkeypatch, texts)
    before = {f.rule for f in session.first.findings if f.file == "route.yaml"}
    renamed, cold = session.update("app.yaml", APP.replace("name: gw,", "name: edge,"))
    assert _rows(renamed.findings) == _rows(cold.findings)
    assert {f.rule for f in renamed.findings if f.file == "route.yaml"} - before  # parent not found now
    session.update("app.yaml", APP)
    ungranted, cold = session.update("grant.yaml", "")
    assert _rows(ungranted.findings) == _rows(cold.findings)
    assert {f.rule for f in ungranted.findings if f.file == "route.yaml"} - before  # the backend not allowed


def _forged(objects: dict[str, Any]) -> Iterator[Any]:
    """Results parts shaped otherwise than `RuleResults.save` writes them, from a real one."""
    key, by_rule = next((k, v) for k, v in objects.items() if v)
    rule = next(iter(by_rule))
    yield {"format": 2, "objects": objects}  # the layout before
    yield {key: {rule: [["spec", 5, None, None]]}}  # a message that is no text
    yield {key: {rule: [["spec", "forged", 7, None]]}}  # no such severity
    yield {key: {rule: [["spec", "forged", None]]}}  # a row too short
    yield {key: {"PL70": [], rule: "[]"}}
    yield {key.upper(): by_rule}
    yield [objects]


@pytest.mark.parametrize("forge", range(7))
def test_an_entry_that_is_not_what_policylint_writes_is_a_miss(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, forge: int
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "crd.yaml").write_text(WIDGET_CRD.format(size="integer"), encoding="utf-8")
    (tmp_path / "widgets.yaml").write_text(WIDGETS, encoding="utf-8")
    cache_dir = tmp_path.parent / f"{tmp_path.name}-cache"
    request = LintRequest(paths=["."], cache_dir=str(cache_dir))
    first = pipeline.lint(request)
    cache = ParseCache(str(cache_dir))
    name = KeptFiles(cache).entry(cache.key((tmp_path / "widgets.yaml").read_bytes()))
    payload = cache.payload(name)
    assert payload is not None
    kept = parts(bytes(payload))
    stamp, objects = kept["results"]
    forged = list(_forged(objects))[forge]
    others = [(part, *kept[part]) for part in kept if part != "results"]
    cache.put(
        name, framed(("results", stamp, json.dumps(forged).encode()), *[(p, s, json.dumps(v).encode()) for p, s, v in others])
    )
    again = pipeline.lint(request)
    assert _rows(again.findings) == _rows(first.findings)
    assert not [f for f in again.findings if "forged" in f.message]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["crd.yaml", "widgets.yaml"]  # nothing written in the tree


def test_past_its_bound_a_files_entry_keeps_the_objects_used_and_a_run_holds_the_newest_others(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file's entry keeps what it held and what was added, unless that is past `MIN_KEPT` and
    four times the objects of it this run used or added: then only those (the same bytes under
    other settings pile up). Another file's entry is not written. What the process holds after
    is bounded by `limit`, as a long-lived process's is."""
    monkeypatch.setattr(rulecache, "MIN_KEPT", 4)
    cache = ParseCache(str(tmp_path / "cache"))
    keys = [n.to_bytes(16, "big") for n in range(10)]
    newest = (10).to_bytes(16, "big")
    other = "e" * 40
    first = _results(cache)
    for key in keys:
        first.add(key, "PL703", (("spec", "found", None, None),), F)
    first.add(newest, "PL703", (), other)
    first.save()
    other_bytes = _entry(cache, other)
    later = _results(cache)
    assert later.get(keys[1], "PL703", F) == (("spec", "found", None, None),)  # used by this run
    later.add(newest, "PL702", (), F)  # and one added
    later.save(limit=6)
    assert _entry(cache, other) == other_bytes
    kept = _results(cache)
    found = [k for k in [*keys, newest] if kept.get(k, "PL703", F) is not None or kept.get(k, "PL702", F) is not None]
    assert found == [keys[1], newest]  # 11 objects, past max(4, 4 * 2)
    # Within the bound, nothing is dropped.
    kept.add(keys[2], "PL702", (), F)
    kept.save()
    again = _results(cache)
    assert [k for k in [*keys, newest] if again.get(k, "PL702", F) is not None or again.get(k, "PL703", F) is not None] == [
        keys[1],
        keys[2],
        newest,
    ]


def test_a_long_lived_process_holds_the_objects_used_and_the_newest_others() -> None:
    """A language server never writes the results (`trim`, not `save`): what it holds is bounded
    all the same, each edit adding the edited file's objects under new keys."""
    held = rulecache.RuleResults()
    keys = [n.to_bytes(16, "big") for n in range(10)]
    for key in keys:
        held.add(key, "PL703", (), F)
    held.trim(limit=100)  # under the limit: all held, and the next run starts with none used
    assert all(held.get(k, "PL703", F) == () for k in keys)
    held.trim(limit=100)
    assert held.get(keys[2], "PL703", F) == ()
    held.trim(limit=6)
    assert [k for k in keys if held.get(k, "PL703", F) is not None] == [keys[2], keys[7], keys[8], keys[9]]


def test_an_update_works_out_the_keys_of_the_edited_files_objects_only(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The objects of the files an edit left alone are the same instances from one update to the
    next (policylint.incremental.resident): their keys are the ones the last update worked out,
    and only the edited file's objects, built anew, are hashed."""
    session = Session(tmp_path, monkeypatch, _tenants(3, 60))
    edited = "m-000.yaml"
    hashed: list[str] = []
    real = rulecache.Reuse._hash

    def counted(self: rulecache.Reuse, parts: tuple[object, ...]) -> str:
        if parts[0] == "at":
            hashed.append(str(parts[1]))
        return real(self, parts)

    monkeypatch.setattr(rulecache.Reuse, "_hash", counted)
    objects = sum(1 for doc in yaml.safe_load_all(session.texts[edited]) if doc)
    for n in range(3):
        hashed.clear()
        result, cold = session.update(edited, session.texts[edited] + f"# edit {n}\n")
        assert _rows(result.findings) == _rows(cold.findings), n
    assert session.reused > objects  # the part reaches beyond the edited file
    assert len(hashed) == objects


def test_an_update_reads_no_unchanged_file_for_its_findings_positions(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The positions of findings in files whose bytes an update left alone are the ones the last
    update resolved (`positions.KeptSpans`); the edited file's are read from it as it is now."""
    from policylint.input.positions import PositionResolver

    texts = _tenants(3, 60)
    texts["crd.yaml"] = WIDGET_CRD.format(size="integer")
    texts["widgets.yaml"] = WIDGETS
    session = Session(tmp_path, monkeypatch, texts)
    passed: list[str] = []
    real = PositionResolver._pass

    def counted(self: PositionResolver, file: str, documents: Any) -> None:
        passed.append(file)
        real(self, file, documents)

    def update(name: str, text: str) -> list[str]:
        """The files the workspace's update read for positions; its findings agree with a cold run's."""
        passed.clear()
        with monkeypatch.context() as patched:
            patched.setattr(PositionResolver, "_pass", counted)
            result = session.workspace.update(name, text).result
        session.texts[name] = text
        cold = _cold(session.texts, session.disk, monkeypatch)
        monkeypatch.chdir(session.editor)
        assert _rows(result.findings) == _rows(cold.findings)
        assert _of(result, "PL703", "widgets.yaml") == _of(cold, "PL703", "widgets.yaml") != []
        return list(passed)

    crd = WIDGET_CRD.format(size="integer")
    # The whole analysis before the first update resolved them: its spans are handed on too.
    assert update("crd.yaml", crd + "# edit\n") == []
    assert update("crd.yaml", crd + "# edit again\n") == []
    # The widgets' own file, with lines added above them: read again, each time it changes, and
    # nothing else once its part was seen.
    assert "widgets.yaml" in update("widgets.yaml", "# a comment\n" + WIDGETS)
    assert update("widgets.yaml", "# a comment\n# another\n" + WIDGETS) == ["widgets.yaml"]
    assert update("crd.yaml", crd + "# and again\n") == []
    # A line added inside the widget's document, above its finding: the document starts where it
    # did, the finding's field a line lower (the kept spans are of the file's bytes, not its lines).
    inside = "# a comment\n# another\n" + WIDGETS.replace("spec: {size: big}", "# note\nspec: {size: big}")
    assert update("widgets.yaml", inside) == ["widgets.yaml"]


def test_an_update_asks_for_the_kept_rows_of_the_edited_files_objects_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The objects of a file that are the last update's, with the same target fields, are
    answered together, per rule and file (`RuleResults.file_rows`); only the edited file's, built
    anew, are looked up one by one."""
    session = Session(tmp_path, monkeypatch, _tenants(3, 60))
    edited = "m-000.yaml"
    asked: list[str] = []
    real = rulecache.Reuse._key

    def counted(self: rulecache.Reuse, obj: K8sObject) -> str | None:
        asked.append(obj.doc.file)
        return real(self, obj)

    monkeypatch.setattr(rulecache.Reuse, "_key", counted)
    for n in range(3):
        asked.clear()
        result, cold = session.update(edited, session.texts[edited] + f"# edit {n}\n")
        assert _rows(result.findings) == _rows(cold.findings), n
    assert session.reused > 100  # the part reaches well beyond the edited file's objects
    assert set(asked) == {edited}


# -- the entry: what a run fills is held compactly and written as it is encoded --------------------

RULES = ("PL702", "PL703", "PL704", "PL705", "PL706", "PL707", "PL426")
FOUND: tuple[rulecache.Row, ...] = (("spec.size", "is 'big', not an integer", None, None), ("spec", "café", 1, "a hint"))


def _digest(n: int) -> bytes:
    return (n * 7919).to_bytes(16, "big")


# A file's content key: the entry the results of its objects' keys are kept in.
F = "f" * 40


# The results part's stamp: the format (3) and the code's hash, here "stamp".
STAMP = "0003" + b"stamp".hex()


def _results(cache: ParseCache) -> rulecache.RuleResults:
    """Results kept in `cache` under the code's hash "stamp", alone in their entries (no verdicts)."""
    return rulecache.RuleResults(KeptFiles(cache), b"stamp")


def _entry(cache: ParseCache, where: str = F) -> bytes:
    return (Path(cache.directory) / "parse" / KeptFiles(cache).entry(where)).read_bytes()


def _objects(cache: ParseCache, where: str = F) -> Any:
    stamp, objects = parts(_entry(cache, where)[24:])["results"]
    assert stamp == STAMP
    return objects


def test_results_read_back_from_the_layout_earlier_versions_wrote(tmp_path: Path) -> None:
    """Keys held as digests are written as hex; an object's rules in the order they were added, a
    rule added again keeping its place with its new rows; the bytes `json.dumps` writes (a part
    written whole reads back, and the other way round)."""
    cache = ParseCache(str(tmp_path / "cache"))
    results = _results(cache)
    results.add(_digest(1), "PL703", FOUND, F)
    results.add(_digest(1), "PL702", (), F)
    results.add(_digest(2), "PL702", (), F)
    results.add(_digest(1), "PL703", FOUND[:1], F)  # again: its place kept
    results.save()
    expected = {
        _digest(1).hex(): {"PL703": [list(FOUND[0])], "PL702": []},
        _digest(2).hex(): {"PL702": []},
    }
    text = json.dumps(expected, separators=(",", ":"), ensure_ascii=True).encode()
    assert _entry(cache)[24:] == framed(("results", STAMP, text))
    read = _results(ParseCache(str(tmp_path / "cache")))
    assert read.get(_digest(1), "PL703", F) == FOUND[:1]
    assert read.get(_digest(1), "PL702", F) == read.get(_digest(2), "PL702", F) == ()
    assert read.get(_digest(2), "PL703", F) is None
    assert read.get(_digest(1).hex(), "PL703", F) is None  # type: ignore[arg-type]  # never the hex text


def test_the_same_results_are_the_same_bytes(tmp_path: Path) -> None:
    written = []
    for run in ("a", "b"):
        cache = ParseCache(str(tmp_path / run))
        results = _results(cache)
        for n in range(3 * jsonparts.BATCH + 5):  # several batches of the writer
            for rule in RULES:
                results.add(_digest(n), rule, FOUND if n % 100 == 0 and rule == "PL703" else (), F)
        results.save()
        written.append(_entry(cache))
    assert written[0] == written[1]


def test_one_rules_damaged_rows_leave_the_others_of_the_object(tmp_path: Path) -> None:
    cache = ParseCache(str(tmp_path / "cache"))
    key = _digest(3)
    objects = {key.hex(): {"PL702": [list(FOUND[0])], "PL703": [["spec", "x", 9, None]], "PL704": "[]"}}
    cache.put(KeptFiles(cache).entry(F), framed(("results", STAMP, json.dumps(objects).encode())))
    results = _results(ParseCache(str(tmp_path / "cache")))
    assert results.get(key, "PL703", F) is None  # no such severity: a miss, the rule runs
    assert results.get(key, "PL704", F) is None
    assert results.get(key, "PL702", F) == FOUND[:1]
    results.add(key, "PL703", (), F)
    results.save()
    assert _objects(cache) == {key.hex(): {"PL702": [list(FOUND[0])], "PL703": []}}


def test_objects_no_rule_found_anything_on_hold_no_results_of_their_own() -> None:
    """Most objects: every rule found nothing. Their results are one tuple for the run, so that
    what an object adds is its place in two tables (at 20k objects, a map of its own each was
    270 bytes more)."""
    results = rulecache.RuleResults()
    keys = [_digest(n) for n in range(20_000)]
    tracemalloc.start()
    try:
        for key in keys:
            for rule in RULES:
                results.add(key, rule, (), F)
        held, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert all(results.get(key, rule, F) == () for key in keys[:10] for rule in RULES)
    assert held / len(keys) < 200, held / len(keys)


def test_writing_the_results_never_holds_their_whole_text(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(jsonparts, "BATCH", 100)  # 100 of the 10,000 objects at a time
    cache = ParseCache(str(tmp_path / "cache"))
    results = _results(cache)
    for n in range(10_000):
        for rule in RULES:
            results.add(_digest(n), rule, (), F)
    tracemalloc.start()
    try:
        results.save()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    size = len(_entry(cache))
    assert size > 1_000_000
    assert peak < size / 4, (peak, size)


def test_the_entry_is_read_when_first_asked_for(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A run whose per-object rules all run in `--jobs` shares never asks (the engine reuses
    results only where a rule runs whole): no entry is read, nor held by the processes forked
    after they were opened. A file's entry is read when an object of it is first asked about."""
    cache = ParseCache(str(tmp_path / "cache"))
    first = _results(cache)
    first.add(_digest(1), "PL703", FOUND, F)
    first.save()
    reads: list[str] = []
    real = ParseCache.payload

    def counted(self: ParseCache, key: str) -> memoryview | None:
        reads.append(key)
        return real(self, key)

    monkeypatch.setattr(ParseCache, "payload", counted)
    later_cache = ParseCache(str(tmp_path / "cache"))
    later = _results(later_cache)
    later.save()
    later.trim(10)
    assert reads == []
    assert later.get(_digest(1), "PL703", F) == FOUND
    assert later.get(_digest(2), "PL703", F) is None
    assert reads == [later.entry(F)]
    assert later.get(_digest(3), "PL703", "e" * 40) is None  # another file's entry: read, holding nothing
    assert reads == [later.entry(F), later.entry("e" * 40)]


# Forking is forced below in a process that may hold other threads: Python 3.12+ warns of it.
@pytest.mark.filterwarnings("ignore:This process .* is multi-threaded:DeprecationWarning")
def test_a_run_whose_rules_run_in_shares_does_not_decode_the_results(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The entry kept per file may be read for its verdicts; its results part is held as it was
    read, never decoded (policylint.input.keptfiles)."""
    from policylint.rules import workers

    monkeypatch.setattr(workers, "MIN_OBJECTS", 0)
    # The rules run in shares only in a process with no other thread; the test runner's process
    # may hold threads other tests left (a language server's analysis thread), which would make
    # the run one process and the test about nothing.
    monkeypatch.setattr(workers, "can_fork", lambda: sys.platform.startswith("linux"))
    monkeypatch.chdir(tmp_path)
    (tmp_path / "crd.yaml").write_text(WIDGET_CRD.format(size="integer"), encoding="utf-8")
    (tmp_path / "widgets.yaml").write_text(WIDGETS, encoding="utf-8")
    cache_dir = str(tmp_path.parent / f"{tmp_path.name}-cache")
    first = pipeline.lint(LintRequest(paths=["."], cache_dir=cache_dir))  # one job: fills it
    reads: list[bytes | None] = []
    real = rulecache._decode
    monkeypatch.setattr(rulecache, "_decode", lambda text: reads.append(text) or real(text))
    shared = pipeline.lint(LintRequest(paths=["."], cache_dir=cache_dir, jobs=2))
    assert _rows(shared.findings) == _rows(first.findings)
    assert reads == []
    again = pipeline.lint(LintRequest(paths=["."], cache_dir=cache_dir))
    assert _rows(again.findings) == _rows(first.findings)
    assert len(reads) == 2  # the results part of each file's entry


def test_a_run_of_the_command_takes_a_files_kept_rows_together(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A run that is not a long-lived process's looks each object's kept rows up once, and takes a
    file's rows for a rule together when every object of the file has them (`Reuse._kept_together`):
    one lookup per object, not one per object and rule (the tree before asked `RuleResults.get` of
    every object for each of the seven per-object rules). A rule one object of a file has no rows
    of is asked object by object in that file alone, and runs on that object: the findings are the
    filling run's."""
    monkeypatch.chdir(tmp_path)
    texts = {**_tenants(3, 60), "crd.yaml": WIDGET_CRD.format(size="integer"), "widgets.yaml": WIDGETS}
    for name, text in texts.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    cache_dir = tmp_path.parent / f"{tmp_path.name}-cache"
    request = LintRequest(paths=["."], cache_dir=str(cache_dir))
    first = pipeline.lint(request)
    asked: list[tuple[str, str]] = []  # (rule, file) of each object looked up one by one
    real_get = rulecache.RuleResults.get

    def get(self: rulecache.RuleResults, key: bytes, rule_id: str, where: str) -> Any:
        asked.append((rule_id, where))
        return real_get(self, key, rule_id, where)

    ran: list[tuple[str, str]] = []  # (rule, object name) of each check the reuse let run
    real_kept = rulecache._kept_rows

    def kept_rows(found: list[Issue], obj: K8sObject, rule_id: str) -> tuple[rulecache.Row, ...] | None:
        ran.append((rule_id, obj.key.name))
        return real_kept(found, obj, rule_id)

    monkeypatch.setattr(rulecache.RuleResults, "get", get)
    monkeypatch.setattr(rulecache, "_kept_rows", kept_rows)
    reuses: list[rulecache.Reuse] = []
    real_start = rulecache.start

    def start(*args: Any, **kwargs: Any) -> rulecache.Reuse | None:
        found = real_start(*args, **kwargs)
        if found is not None:
            reuses.append(found)
        return found

    monkeypatch.setattr(rulecache, "start", start)
    warm = pipeline.lint(request)
    assert _rows(warm.findings) == _rows(first.findings)
    assert asked == [] and ran == []
    objects = len(first.index.objects)
    assert reuses[-1].reused == objects * len(RULES)  # every object, for each rule, taken from the entry

    # One rule's rows of the second widget dropped from its file's entry: that rule alone asked
    # of the file's two objects one by one, and run on that widget.
    cache = ParseCache(str(cache_dir))
    name = KeptFiles(cache).entry(cache.key(WIDGETS.encode()))
    payload = cache.payload(name)
    assert payload is not None
    kept = parts(bytes(payload))
    stamp, rows = kept["results"]
    w2 = next(obj for obj in first.index.objects if obj.key.name == "w2")
    dropped = next(key for key, by_rule in rows.items() if "PL703" in by_rule and by_rule["PL703"] == [])
    del rows[dropped]["PL703"]
    others = [(part, *kept[part]) for part in kept if part != "results"]
    cache.put(
        name, framed(("results", stamp, json.dumps(rows).encode()), *[(p, s, json.dumps(v).encode()) for p, s, v in others])
    )
    again = pipeline.lint(request)
    assert _rows(again.findings) == _rows(first.findings)
    assert ran == [("PL703", w2.key.name)]
    assert sorted(asked) == [("PL703", cache.key(WIDGETS.encode()))] * 2
