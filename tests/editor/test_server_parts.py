"""The language server's parts without a client: positions, what a cursor is on, the analysis with
unsaved texts, navigation, hover Markdown and code actions (tests/editor/test_server.py drives them
end to end)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from policylint.input.positions import PositionResolver
from policylint.server import actions, hovers
from policylint.server.analysis import analyse
from policylint.server.documents import Lines, Spot, cursor_at
from policylint.server.navigation import Navigator
from tests.editor.test_server import GATEWAY, POLICY, ROUTE, STATUS


@pytest.fixture
def workspace(tmp_path: Path) -> Iterator[Path]:
    (tmp_path / "gateway.yaml").write_text(GATEWAY)
    (tmp_path / "route.yaml").write_text(ROUTE)
    (tmp_path / "policy.yaml").write_text(POLICY)
    before = os.getcwd()
    os.chdir(tmp_path)
    try:
        yield tmp_path
    finally:
        os.chdir(before)


def test_columns_are_utf16_code_units_in_lsp() -> None:
    lines = Lines("name: \U0001f600x\n")
    # `name: ` is six characters: the emoji is character column 7 (1-based), `x` column 8, after
    # an emoji that takes two UTF-16 units.
    assert lines.to_lsp(1, 7) == Spot(0, 6)
    assert lines.to_lsp(1, 8) == Spot(0, 8)
    assert lines.from_lsp(0, 8) == (0, 7)


def test_the_cursor_names_the_document_and_the_field() -> None:
    # On `sectionName: http` of the route (line 9, 0-based 8): the parentRef's sectionName.
    cursor = cursor_at(ROUTE, 8, 20)
    assert cursor is not None
    assert cursor.document_line == 1
    assert cursor.path == ("spec", "parentRefs", 0, "sectionName")
    # In the Service, the second document (it starts on line 15).
    cursor = cursor_at(ROUTE, 17, 8)
    assert cursor is not None and cursor.document_line == 15 and cursor.path == ("metadata", "name")


def test_a_half_typed_document_is_not_navigable_and_does_not_raise() -> None:
    assert cursor_at("kind: [Service\nmetadata:\n", 1, 2) is None


def test_unsaved_text_overrides_the_file_and_a_new_file_is_read(workspace: Path) -> None:
    renamed = ROUTE.replace("name: web\n", "name: webx\n", 1)
    analysis = analyse(str(workspace), {"route.yaml": renamed})
    assert [(f.rule, f.file, f.line) for f in analysis.findings] == [("PL201", "policy.yaml", 10)]
    # A file not saved yet, open in the editor: analysed with the others.
    analysis = analyse(str(workspace), {"new.yaml": POLICY.replace("name: retries", "name: again")})
    assert "new.yaml" in analysis.files
    assert (workspace / "route.yaml").read_text() == ROUTE  # nothing written


def test_a_configuration_that_does_not_validate_is_a_problem_on_it(workspace: Path) -> None:
    (workspace / ".policylint.yaml").write_text("select: [PL2]\nnot-a-key: 1\n")
    analysis = analyse(str(workspace), {})
    assert analysis.project is None
    assert [(p.file, p.line) for p in analysis.problems] == [(".policylint.yaml", 2)]
    assert "not-a-key" in analysis.problems[0].message


def test_navigation_follows_what_the_engine_resolved(workspace: Path) -> None:
    analysis = analyse(str(workspace), {})
    assert analysis.project is not None
    nav = Navigator(analysis.project, PositionResolver(analysis.text))
    roles = sorted((r.owner.kind, r.path, r.role, r.status) for r in nav.references)
    assert roles == [
        ("BackendTrafficPolicy", "spec.targetRefs[0]", "targetRef", "Accepted"),
        ("Gateway", "spec.gatewayClassName", "gatewayClassName", "Resolved"),
        ("HTTPRoute", "spec.parentRefs[0]", "parentRef", "Accepted"),
        ("HTTPRoute", "spec.rules[0].backendRefs[0]", "backendRef", "Resolved"),
    ]
    cursor = cursor_at(ROUTE, 8, 20)
    assert cursor is not None
    route = nav.object_at("route.yaml", cursor)
    assert route is not None and route.name == "web"
    ref = nav.reference_at(route, cursor)
    assert ref is not None
    place = nav.definition(ref)
    assert place is not None and (place.file, place.line, place.column) == ("gateway.yaml", 16, 7)
    # The Gateway's references: the route's parentRef.
    gateway = analysis.project.index.lookup("gateway.networking.k8s.io", "Gateway", "app", "gw")
    assert gateway is not None
    assert [(r.owner.name, r.path) for r in nav.references_to(gateway)] == [("web", "spec.parentRefs[0]")]


def test_hover_markdown_keeps_input_out_of_the_markup() -> None:
    assert hovers.code("a`b") == "``a`b``"
    assert hovers.code("[x](http://e)") == "`[x](http://e)`"
    doc = {
        "object": {"kind": "Gateway", "namespace": "app", "name": "gw", "section": None},
        "type": "target",
        "affectedBy": [],
        "policyKinds": [],
    }
    assert (
        hovers.explanation(doc)
        == "**`Gateway app/gw`**\n\nAffected by: no policy\n\nNo policy of any kind reaches it in any context.\n"
    )


def test_a_fix_is_the_smallest_edit_and_a_suppression_leaves_the_reason_to_write(workspace: Path) -> None:
    text = POLICY + STATUS
    analysis = analyse(str(workspace), {"policy.yaml": text})
    (finding,) = analysis.findings
    action = actions.fix_action(finding, text)
    assert action is not None and action.preferred
    (edit,) = action.edits
    # The two status lines, 13 and 14 (0-based 12 and 13), deleted.
    assert (edit.start, edit.end, edit.text) == (Spot(12, 0), Spot(14, 0), "")
    suppress = actions.suppress_action(finding, text)
    assert suppress is not None and not suppress.preferred
    (edit,) = suppress.edits
    assert (edit.start, edit.text) == (Spot(12, 7), "  # policylint: disable=PL110 -- ")


def test_a_line_with_a_comment_is_suppressed_from_the_line_above(workspace: Path) -> None:
    text = POLICY + "status:  # written by the controller\n  ancestors: []\n"
    analysis = analyse(str(workspace), {"policy.yaml": text})
    (finding,) = analysis.findings
    suppress = actions.suppress_action(finding, text)
    assert suppress is not None
    (edit,) = suppress.edits
    assert (edit.start, edit.end, edit.text) == (Spot(12, 0), Spot(12, 0), "# policylint: disable-next-line=PL110 -- \n")


def test_the_server_without_its_extra_says_how_to_install_it(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import sys

    from policylint.commands.server import run_server

    monkeypatch.delitem(sys.modules, "policylint.server.protocol", raising=False)
    monkeypatch.setitem(sys.modules, "pygls.lsp.server", None)  # what an install without pygls gives
    assert run_server() == 2
    assert "pip install 'policylint[server]'" in capsys.readouterr().err


def test_uris_sent_back_are_the_clients_through_a_symlinked_root(tmp_path: Path) -> None:
    from policylint.server.protocol import PolicylintServer

    (tmp_path / "real").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "real")
    server = PolicylintServer()
    server.root = str(tmp_path / "link")
    uri = (tmp_path / "link" / "team" / "route.yaml").as_uri()
    assert server.name_of(uri) == "team/route.yaml"
    assert server.uri_of("team/route.yaml") == uri


def test_a_live_analysis_follows_edits_and_files_changed_on_disk(workspace: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The server's analyses after the first cover what an edit reaches (small workspaces are
    analysed whole: not here); each is what a whole analysis of the same texts finds."""
    from policylint.semantics import components
    from policylint.server.analysis import Live, build_for_navigation

    monkeypatch.setattr(components, "MIN_OBJECTS", 0)
    monkeypatch.setattr(components, "MAX_SHARE", 1.0)
    monkeypatch.setenv("POLICYLINT_CACHE_DIR", str(workspace.parent / "cache"))
    live = Live(str(workspace))
    assert live.analyse({}, None).findings == []
    renamed = ROUTE.replace("name: web\n", "name: webx\n", 1)
    analysis = live.analyse({"route.yaml": renamed})
    assert [(f.rule, f.file, f.line) for f in analysis.findings] == [("PL201", "policy.yaml", 10)]
    assert analysis.findings == analyse(str(workspace), {"route.yaml": renamed}).findings
    # Navigation reads the whole workspace as edited, its stages built when asked for.
    assert analysis.project is not None and build_for_navigation(analysis.project) == []
    nav = Navigator(analysis.project, PositionResolver(analysis.text))
    assert nav.project.index.lookup("gateway.networking.k8s.io", "HTTPRoute", "app", "webx") is not None
    # Saved, then closed: the file on disk stands for the text, nothing changes.
    (workspace / "route.yaml").write_text(renamed)
    assert live.analyse({}).findings == analysis.findings
    # Renamed back on disk, as the editor's file watcher reports it.
    (workspace / "route.yaml").write_text(ROUTE)
    assert live.analyse({}, ["route.yaml"]).findings == []
    # Edited, saved, closed, then changed on disk with no word from the editor: the next edit
    # finds the file's content changed, not the text the editor held.
    typed = ROUTE + "# typing\n"
    assert live.analyse({"route.yaml": typed}).findings == []
    (workspace / "route.yaml").write_text(typed)
    assert live.analyse({}).findings == []
    (workspace / "route.yaml").write_text(renamed)
    edited = {"policy.yaml": POLICY + "# edited\n"}
    assert [(f.rule, f.file) for f in live.analyse(edited).findings] == [("PL201", "policy.yaml")]
    # A file no run reads, open beside the manifests, is no edit of the workspace.
    analysis = live.analyse({**edited, "notes.txt": "apiVersion: v1\n"})
    assert [(f.rule, f.file) for f in analysis.findings] == [("PL201", "policy.yaml")]


def test_navigation_is_built_only_when_asked_for(workspace: Path) -> None:
    """Diagnostics are published from the analysis alone; what navigation reads (every stage,
    the reference table) is built by `prepare`, once."""
    from policylint.server.analysis import Live
    from policylint.server.protocol import Snapshot

    analysis = Live(str(workspace)).analyse({"route.yaml": ROUTE}, None)
    snapshot = Snapshot(analysis, 1)
    assert not snapshot.prepared and snapshot.navigator is None
    snapshot.prepare()
    assert snapshot.prepared and snapshot.navigator is not None
    navigator = snapshot.navigator
    snapshot.prepare()
    assert snapshot.navigator is navigator
    assert [o.name for o in navigator.objects_in("route.yaml")] == ["web", "web"]


def _navigation(nav: Any, fresh: Navigator, texts: dict[str, str], files: list[str]) -> list[Any]:
    """What `nav` answers at every object and every reference `fresh` finds in `files`: the
    object under the cursor, its hover, the references to it, and at each reference what it
    names and where that is defined."""
    from policylint.commands.explain import explain_object

    out: list[Any] = []
    for file in files:
        text = texts[file]
        for obj in fresh.objects_in(file):
            place = fresh.place(obj)
            cursor = cursor_at(text, place.line - 1, place.column - 1)
            assert cursor is not None
            found = nav.object_at(file, cursor)
            if found is None:
                out.append((file, place.line, None))
                continue
            project = nav.project_of(found) if hasattr(nav, "project_of") else nav.project
            hover = hovers.explanation(explain_object(project, found, nav.section_at(found, cursor)))
            to = [(str(r.owner.key), r.path, r.status) for r in nav.references_to(found)]
            out.append((file, place.line, str(found.key), hover, to))
        for ref in fresh.references:
            if ref.owner.doc.file != file:
                continue
            place = fresh.place(ref.owner, ref.path)
            cursor = cursor_at(text, place.line - 1, place.column - 1)
            assert cursor is not None
            owner = nav.object_at(file, cursor)
            at = nav.reference_at(owner, cursor) if owner is not None else None
            if at is None:
                out.append((file, place.line, ref.path, None))
                continue
            target = str(at.target.key) if at.target is not None else None
            out.append(
                (file, place.line, at.path, at.role, at.label, at.status, target, nav.definition(at), hovers.reference(nav, at))
            )
    return out


def test_navigation_after_edits_is_a_whole_analysis_s_answer(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Random edits through the live analysis (each analysed in the part it reaches): hover,
    definition and references answered from the layers of parts (policylint.server.layers) are
    those of a whole analysis of the same texts, at every object and reference of the files
    edited and of others."""
    import random

    import yaml

    from benchmarks.generate import objects as tenants
    from policylint.semantics import components
    from policylint.server.analysis import Live
    from policylint.server.layers import Layers

    monkeypatch.setattr(components, "MIN_OBJECTS", 0)
    monkeypatch.setattr(components, "MAX_SHARE", 1.0)
    monkeypatch.setenv("POLICYLINT_CACHE_DIR", str(tmp_path / "cache"))
    root = tmp_path / "ws"
    root.mkdir()
    monkeypatch.chdir(root)
    docs = list(tenants(120, 5, error_rate=0.3, isolated=False))
    texts = {f"t-{i // 6:02d}.yaml": yaml.safe_dump_all(docs[i : i + 6], sort_keys=False) for i in range(0, len(docs), 6)}
    for name, text in texts.items():
        (root / name).write_text(text)
    rng = random.Random(7)
    live = Live(str(root))
    live.analyse({}, None)
    open_texts: dict[str, str] = {}
    parts = 0
    for step in range(6):
        name = rng.choice(sorted(texts))
        text = open_texts.get(name, texts[name])
        edit = rng.choice(["rename", "target", "comment"])
        if edit == "rename":
            text = text.replace("name: ", "name: x", 1 + rng.randrange(3))
        elif edit == "target":
            text = text.replace("kind: HTTPRoute\n    name: ", "kind: HTTPRoute\n    name: y", 1)
        else:
            text += "# edited\n"
        open_texts[name] = text
        analysis = live.analyse(dict(open_texts))
        layers = analysis.layers()
        assert isinstance(layers, Layers) and layers.prepare()
        parts += len(layers.layers) > 1
        whole = analyse(str(root), dict(open_texts))
        assert whole.project is not None
        fresh = Navigator(whole.project, PositionResolver(whole.text))
        now = {**texts, **open_texts}
        files = sorted({name, *rng.sample(sorted(texts), 3)})
        assert _navigation(layers, fresh, now, files) == _navigation(fresh, fresh, now, files), (step, edit, name)
    assert parts > 0  # the edits were answered from parts, not only from whole analyses
    # Typing in one file: each edit's part covers the one before, whose layer is dropped.
    name = sorted(texts)[5]
    depth = []
    for n in range(3):
        open_texts[name] = open_texts.get(name, texts[name]) + f"# typed {n}\n"
        layers = live.analyse(dict(open_texts)).layers()
        assert layers is not None
        depth.append(len(layers.layers))
    assert depth[1] == depth[2] and depth[0] >= depth[1]


def test_a_live_analysis_reuses_what_the_per_object_rules_found_and_agrees_with_a_whole_one(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Edits through the live analysis, each analysed in its part, with the per-object rules'
    results on unchanged objects kept in memory between them (policylint.incremental.rulecache):
    an edit of a value of the widget, of its CRD in another file, of the route beside them, each
    answered as a whole analysis of the same texts answers it."""
    from policylint.incremental import rulecache
    from policylint.semantics import components
    from policylint.server.analysis import Live
    from tests.incremental.test_rulecache import WIDGET_CRD, WIDGETS

    monkeypatch.setattr(components, "MIN_OBJECTS", 0)
    monkeypatch.setattr(components, "MAX_SHARE", 1.0)
    monkeypatch.setenv("POLICYLINT_CACHE_DIR", str(workspace.parent / "cache"))
    (workspace / "crd.yaml").write_text(WIDGET_CRD.format(size="integer"))
    (workspace / "widgets.yaml").write_text(WIDGETS)
    reused: list[int] = []
    real = rulecache.Reuse.checks

    def checks(self: rulecache.Reuse, *args: Any) -> Iterator[Any]:
        before = self.reused
        yield from real(self, *args)
        reused.append(self.reused - before)

    monkeypatch.setattr(rulecache.Reuse, "checks", checks)
    live = Live(str(workspace))
    assert [(f.rule, f.file) for f in live.analyse({}, None).findings] == [("PL703", "widgets.yaml")]
    texts: dict[str, str] = {}
    for name, text in [
        ("route.yaml", ROUTE + "# typing\n"),
        ("widgets.yaml", WIDGETS.replace("size: big", "size: 4")),  # right now: the finding goes
        ("crd.yaml", WIDGET_CRD.format(size="string")),  # w2's size is wrong now, in a file unchanged
        ("route.yaml", ROUTE + "# typing more\n"),
        ("widgets.yaml", WIDGETS),
    ]:
        texts[name] = text
        reused.clear()
        found = live.analyse(dict(texts)).findings
        assert found == analyse(str(workspace), dict(texts)).findings, name
    assert [(f.rule, f.file, f.line) for f in found] == [("PL703", "widgets.yaml", 9)]
    assert sum(reused) > 0  # the route's edit: the widgets' results were the ones kept


def test_only_the_diagnostics_that_changed_are_sent_again(workspace: Path) -> None:
    """A file's diagnostics are sent again when its findings, its document's version or its text
    changed (an open document's, or a file's on disk), and an empty list once it has none."""
    from policylint.server.analysis import Live
    from policylint.server.protocol import PolicylintServer, Snapshot

    server = PolicylintServer()
    server.root = str(workspace)
    sent: list[tuple[str, int, int | None]] = []

    def send(params: Any) -> None:
        sent.append((params.uri.rsplit("/", 1)[1], len(params.diagnostics), params.version))

    server.text_document_publish_diagnostics = send  # type: ignore[method-assign]
    route = ROUTE.replace("sectionName: http", "sectionName: nope")  # no such listener
    policy = POLICY.replace("name: web", "name: webx")  # no such route
    (workspace / "policy.yaml").write_text(policy)
    live = Live(str(workspace))

    def publish(texts: dict[str, str], version: int, on_disk: tuple[str, ...] = ()) -> list[tuple[str, int, int | None]]:
        sent.clear()
        assert server.moved is not None
        server.moved.update(on_disk)  # as the server gathers them until it publishes
        server.publish(Snapshot(live.analyse(texts, on_disk), 0, dict.fromkeys(texts, version)))
        return sorted(sent)

    first = publish({"route.yaml": route}, 1)
    assert sorted(name for name, _, _ in first) == ["policy.yaml", "route.yaml"]
    assert all(count for _, count, _ in first)
    assert publish({"route.yaml": route}, 1) == []
    # A comment at the end of the open route: its version (and text) changed, no finding did.
    route += "# a comment\n"
    assert [(name, version) for name, _, version in publish({"route.yaml": route}, 2)] == [("route.yaml", 2)]
    # The policy file changed on disk, a comment too: its text may place its findings otherwise.
    (workspace / "policy.yaml").write_text(policy + "# a comment\n")
    assert [name for name, _, _ in publish({"route.yaml": route}, 2, ("policy.yaml",))] == ["policy.yaml"]
    # Every finding of the policy file gone with it: an empty list, once.
    (workspace / "policy.yaml").unlink()
    assert ("policy.yaml", 0, None) in publish({"route.yaml": route}, 2, ("policy.yaml",))
    assert publish({"route.yaml": route}, 2) == []
