"""A language server's whole analysis hands what it built to the first part run after it
(policylint.incremental.handover, policylint.incremental.resident): that update takes
the whole analysis's objects of every unchanged file, the part search's sets and the stages'
kept results instead of loading every file, building it again from its shell and joining every
object anew; and finds what a run from nothing finds."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from policylint import pipeline
from policylint.incremental import handover, shells
from policylint.incremental.resident import Held
from policylint.incremental.workspace import Workspace
from policylint.semantics import components, partgraph
from tests.incremental.test_incremental import _cold, _corpus, _editor_workspace, _rows


def _workspace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, extra: dict[str, str]) -> tuple[Workspace, Path, dict[str, str]]:
    """A workspace of generated tenants (each in a namespace of its own) and `extra`, whole
    analysed; the disk directory for cold runs; the texts."""
    monkeypatch.setattr(components, "MIN_OBJECTS", 0)  # small workspaces analysed in parts too
    files = _corpus(3, 60, isolated=True)
    texts = {name: yaml.safe_dump_all(docs, sort_keys=False) for name, docs in files.items()}
    texts.update(extra)
    workspace, disk = _editor_workspace(tmp_path, monkeypatch, texts)
    assert not workspace.result.internal_error
    return workspace, disk, texts


# A route of its own namespace, its Gateway and its Service in files of their own; the Service's
# file also holds a duplicate key (the loader's problem, PL002) and a document that is no object
# (a problem of building objects, PL003). Every object of it is in the route's part, so its
# findings about no object are the part's to find.
_ROUTE = """\
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata:
  name: shop
  namespace: shop
spec:
  parentRefs:
  - name: edge
  rules:
  - backendRefs:
    - name: cart
      port: 80
"""
_GATEWAY = """\
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata:
  name: edge
  namespace: shop
spec:
  gatewayClassName: missing
  listeners:
  - name: http
    protocol: HTTP
    port: 80
"""
_SERVICE = """\
apiVersion: v1
kind: Service
metadata:
  name: cart
  namespace: shop
  labels: {app: cart}
  labels: {app: basket}
spec:
  ports:
  - port: 80
---
- a list, not an object
"""
_SHOP = {"shop-route.yaml": _ROUTE, "shop-gateway.yaml": _GATEWAY, "shop-service.yaml": _SERVICE}


def _first_update(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Workspace, pipeline.LintResult, pipeline.LintResult]:
    """The first update after the whole analysis, a comment added to the route's file, and a
    cold run of the same texts."""
    workspace, disk, texts = _workspace(tmp_path, monkeypatch, _SHOP)
    texts["shop-route.yaml"] += "# edited\n"
    result = workspace.update("shop-route.yaml", texts["shop-route.yaml"]).result
    assert workspace.last_was_part and result.members is not None
    return workspace, result, _cold(texts, disk, monkeypatch)


def _rules(result: pipeline.LintResult, file: str) -> set[str]:
    return {f.rule for f in result.findings if f.file == file}


def test_the_first_update_finds_the_problems_of_the_files_it_takes_from_the_whole_analysis(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _, result, cold = _first_update(tmp_path, monkeypatch)
    assert {"PL002", "PL003"} <= _rules(cold, "shop-service.yaml")
    assert _rows(result.findings) == _rows(cold.findings)
    assert _rows(result.suppressed) == _rows(cold.suppressed)


def test_it_fails_when_the_files_problems_are_not_handed_over(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    real = handover.held_loaded

    def forgetful(*args: Any) -> dict[str, Held]:
        held = real(*args)
        return {
            file: Held(h.key, None, h.objects, [], [], h.kept, h.default_namespace, h.scopes, h.documents)
            for file, h in held.items()
        }

    monkeypatch.setattr(handover, "held_loaded", forgetful)
    _, result, cold = _first_update(tmp_path, monkeypatch)
    assert {"PL002", "PL003"} & _rules(cold, "shop-service.yaml") - _rules(result, "shop-service.yaml")


def test_the_first_update_takes_the_whole_analysis_s_objects_sets_and_stages(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """It loads the edited file alone, builds no file from its shell, joins only the edited file's
    objects into the part search's sets, and reuses the topology's results of what it left alone:
    the objects of every other file are the whole analysis's instances."""
    workspace, disk, texts = _workspace(tmp_path, monkeypatch, _SHOP)
    whole = {(o.doc.file, o.key): o for o in workspace.result.index.objects}
    loaded: list[str] = []
    built: list[str] = []
    joined: list[int] = []
    load, build, entry = pipeline._load, shells._build, partgraph._File

    def counted_load(sources: Any, *args: Any, **kwargs: Any) -> Any:
        loaded.extend(s.display for s in sources)
        return load(sources, *args, **kwargs)

    def counted_build(shell: shells.Shell, *args: Any) -> shells.Held:
        built.append(shell.file)
        return build(shell, *args)

    class Counted(entry):  # type: ignore[valid-type, misc]
        def __init__(self, objects: Any, hosts: Any) -> None:
            joined.append(len(objects))
            super().__init__(objects, hosts)

    monkeypatch.setattr(pipeline, "_load", counted_load)
    monkeypatch.setattr(shells, "_build", counted_build)
    monkeypatch.setattr(partgraph, "_File", Counted)
    texts["shop-route.yaml"] += "# edited\n"
    result = workspace.update("shop-route.yaml", texts["shop-route.yaml"]).result
    assert workspace.last_was_part and result.members is not None
    assert loaded == ["shop-route.yaml"]
    assert built == []
    assert joined == [1]  # the route's file, of one object
    others = [o for o in result.index.objects if o.doc.file != "shop-route.yaml"]
    assert others and all(whole[(o.doc.file, o.key)] is o for o in others)
    topology = workspace._resident.topology
    assert topology.listeners.reused > 0  # the Gateway's, as the whole analysis resolved them
    assert _rows(result.findings) == _rows(_cold(texts, disk, monkeypatch).findings)


def test_updates_hold_their_new_verdicts_in_memory_and_a_whole_analysis_writes_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Writing the admission verdicts after every edit rewrote the whole entry for the edited
    file's few new ones; a whole analysis writes what it worked out, for the next process."""
    from policylint.input.verdictstore import VerdictStore

    saved: list[int] = []
    real = VerdictStore.save

    def counted(self: VerdictStore) -> None:
        saved.append(len(self.added()))
        real(self)

    monkeypatch.setattr(VerdictStore, "save", counted)
    workspace, disk, texts = _workspace(tmp_path, monkeypatch, _SHOP)
    assert len(saved) == 1 and saved[0] > 0
    for n in range(2):
        texts["shop-route.yaml"] = _ROUTE.replace("port: 80", f"port: {81 + n}") + "# edited\n"
        result = workspace.update("shop-route.yaml", texts["shop-route.yaml"]).result
        assert workspace.last_was_part
        assert _rows(result.findings) == _rows(_cold(texts, disk, monkeypatch).findings)
    assert len(saved) == 1
