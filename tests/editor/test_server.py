"""`policylint server` end to end: a real LSP client (pytest-lsp) drives the server over stdio.

The workspace is three files: a Gateway, an HTTPRoute with its Service, and a policy targeting
the route. Expected ranges are counted by hand in the texts below (LSP lines and columns from 0).
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient

GATEWAY = """\
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata:
  name: envoy
spec:
  controllerName: gateway.envoyproxy.io/gatewayclass-controller
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata:
  name: gw
  namespace: app
spec:
  gatewayClassName: envoy
  listeners:
    - name: http
      protocol: HTTP
      port: 80
"""
ROUTE = """\
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata:
  name: web
  namespace: app
spec:
  parentRefs:
    - name: gw
      sectionName: http
  rules:
    - backendRefs:
        - name: web
          port: 8080
---
apiVersion: v1
kind: Service
metadata:
  name: web
  namespace: app
spec:
  ports:
    - name: http
      port: 8080
"""
POLICY = """\
apiVersion: gateway.envoyproxy.io/v1alpha1
kind: BackendTrafficPolicy
metadata:
  name: retries
  namespace: app
spec:
  targetRefs:
    - group: gateway.networking.k8s.io
      kind: HTTPRoute
      name: web
  retry:
    numRetries: 3
"""
STATUS = "status:\n  ancestors: []\n"
PUBLISHED: list[types.PublishDiagnosticsParams] = []


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("workspace")
    (root / "gateway.yaml").write_text(GATEWAY)
    (root / "route.yaml").write_text(ROUTE)
    (root / "policy.yaml").write_text(POLICY)
    return root


@pytest_lsp.fixture(
    config=ClientServerConfig(server_command=[sys.executable, "-m", "policylint", "server"]),
    scope="module",
)
async def client(lsp_client: LanguageClient, workspace: Path):  # type: ignore[no-untyped-def]
    # Every publication in order, besides the last per file that pytest-lsp keeps.
    features = lsp_client.protocol.fm.features
    keep = features[types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS]

    def record(params: types.PublishDiagnosticsParams) -> None:
        PUBLISHED.append(params)
        keep(params)

    features[types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS] = record
    await lsp_client.initialize_session(
        types.InitializeParams(
            capabilities=pytest_lsp.client_capabilities("visual-studio-code"),
            workspace_folders=[types.WorkspaceFolder(uri=workspace.as_uri(), name="ws")],
        )
    )
    yield
    await lsp_client.shutdown_session()


def _uri(workspace: Path, name: str) -> str:
    return (workspace / name).resolve().as_uri()


async def _open(client: LanguageClient, workspace: Path, name: str, text: str, version: int = 1) -> None:
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(uri=_uri(workspace, name), language_id="yaml", version=version, text=text)
        )
    )


async def _change(client: LanguageClient, workspace: Path, name: str, text: str, version: int) -> None:
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=_uri(workspace, name), version=version),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)],
        )
    )


async def _settled(client: LanguageClient, workspace: Path) -> None:
    """Wait until the analysis of the texts sent so far is published: a request waits for it."""
    await client.text_document_document_symbol_async(
        types.DocumentSymbolParams(text_document=types.TextDocumentIdentifier(uri=_uri(workspace, "route.yaml")))
    )


def _diagnostics(client: LanguageClient, workspace: Path, name: str) -> list[types.Diagnostic]:
    return list(client.diagnostics.get(_uri(workspace, name), []))


@pytest.mark.asyncio(loop_scope="module")
async def test_a_rename_in_one_file_breaks_the_policy_in_another(client: LanguageClient, workspace: Path) -> None:
    await _open(client, workspace, "route.yaml", ROUTE)
    await _settled(client, workspace)
    assert _diagnostics(client, workspace, "policy.yaml") == []
    await _change(client, workspace, "route.yaml", ROUTE.replace("name: web\n", "name: webx\n", 1), 2)
    await _settled(client, workspace)
    found = _diagnostics(client, workspace, "policy.yaml")
    assert [d.code for d in found] == ["PL201"]
    diagnostic = found[0]
    # `      name: web`, line 10 of the policy: the reference's name, the field at fault.
    assert diagnostic.range.start == types.Position(line=9, character=6)
    assert diagnostic.severity == types.DiagnosticSeverity.Error
    assert diagnostic.code_description is not None and diagnostic.code_description.href.endswith("PL201-targetref-not-found.md")
    # Back as it was: the diagnostic goes.
    await _change(client, workspace, "route.yaml", ROUTE, 3)
    await _settled(client, workspace)
    assert _diagnostics(client, workspace, "policy.yaml") == []


@pytest.mark.asyncio(loop_scope="module")
async def test_hover_on_a_gateway_says_what_applies_and_on_a_target_ref_what_it_names(
    client: LanguageClient, workspace: Path
) -> None:
    await _open(client, workspace, "policy.yaml", POLICY)
    await _settled(client, workspace)
    hover = await client.text_document_hover_async(
        types.HoverParams(
            text_document=types.TextDocumentIdentifier(uri=_uri(workspace, "route.yaml")),
            position=types.Position(line=3, character=9),
        )
    )
    assert hover is not None and isinstance(hover.contents, types.MarkupContent)
    text = hover.contents.value
    assert text.startswith("**`HTTPRoute app/web`**")
    assert "Affected by: `BackendTrafficPolicy app/retries`" in text
    assert "`retry.numRetries`: `3`" in text
    on_ref = await client.text_document_hover_async(
        types.HoverParams(
            text_document=types.TextDocumentIdentifier(uri=_uri(workspace, "policy.yaml")),
            position=types.Position(line=9, character=12),
        )
    )
    assert on_ref is not None and isinstance(on_ref.contents, types.MarkupContent)
    assert on_ref.contents.value.startswith("**targetRef** `HTTPRoute web`: **Accepted**")
    assert "Defined in `route.yaml:4`" in on_ref.contents.value


@pytest.mark.asyncio(loop_scope="module")
async def test_definition_and_references(client: LanguageClient, workspace: Path) -> None:
    # `sectionName: http` in the route goes to the Gateway's listener `- name: http` (line 16).
    found = await client.text_document_definition_async(
        types.DefinitionParams(
            text_document=types.TextDocumentIdentifier(uri=_uri(workspace, "route.yaml")),
            position=types.Position(line=8, character=20),
        )
    )
    assert isinstance(found, list) and len(found) == 1
    assert found[0].uri == _uri(workspace, "gateway.yaml")
    assert found[0].range.start == types.Position(line=15, character=6)
    # The backendRef's port goes to the Service's port entry (line 22 of route.yaml).
    found = await client.text_document_definition_async(
        types.DefinitionParams(
            text_document=types.TextDocumentIdentifier(uri=_uri(workspace, "route.yaml")),
            position=types.Position(line=12, character=16),
        )
    )
    assert isinstance(found, list) and found[0].uri == _uri(workspace, "route.yaml")
    assert found[0].range.start == types.Position(line=21, character=6)
    # From the route: the policy targeting it (its targetRef) is a reference.
    refs = await client.text_document_references_async(
        types.ReferenceParams(
            text_document=types.TextDocumentIdentifier(uri=_uri(workspace, "route.yaml")),
            position=types.Position(line=3, character=9),
            context=types.ReferenceContext(include_declaration=False),
        )
    )
    assert refs is not None
    assert [(r.uri, r.range.start.line) for r in refs] == [
        (_uri(workspace, "policy.yaml"), 7)
    ]  # `    - group: ...`, the reference's item


@pytest.mark.asyncio(loop_scope="module")
async def test_a_quick_fix_applied_makes_the_diagnostic_go(client: LanguageClient, workspace: Path) -> None:
    # Opened here, whichever tests ran before in this server (pytest-xdist may give this one a
    # server of its own): an editor opening a document again replaces its text.
    await _open(client, workspace, "policy.yaml", POLICY, 10)
    await _change(client, workspace, "policy.yaml", POLICY + STATUS, 11)
    await _settled(client, workspace)
    found = _diagnostics(client, workspace, "policy.yaml")
    assert [(d.code, d.range.start.line) for d in found] == [("PL110", 12)]
    actions = await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=_uri(workspace, "policy.yaml")),
            range=found[0].range,
            context=types.CodeActionContext(diagnostics=found),
        )
    )
    assert actions is not None
    titles = [a.title for a in actions if isinstance(a, types.CodeAction)]
    assert titles == ["Fix PL110: delete the status stanza", "Suppress PL110 (status-in-manifest) on this line, with a reason"]
    fix = actions[0]
    assert isinstance(fix, types.CodeAction) and fix.is_preferred and fix.edit is not None and fix.edit.changes is not None
    edits = fix.edit.changes[_uri(workspace, "policy.yaml")]
    fixed = _apply(POLICY + STATUS, edits)
    assert fixed == POLICY
    await _change(client, workspace, "policy.yaml", fixed, 12)
    await _settled(client, workspace)
    assert _diagnostics(client, workspace, "policy.yaml") == []


@pytest.mark.asyncio(loop_scope="module")
async def test_a_burst_of_changes_leaves_the_last_text_s_diagnostics(client: LanguageClient, workspace: Path) -> None:
    await _open(client, workspace, "policy.yaml", POLICY, 20)
    await _settled(client, workspace)
    uri = _uri(workspace, "policy.yaml")
    PUBLISHED.clear()
    # Sent as fast as the client writes them: the server is analysing the first while the others
    # arrive, so that at least the last is analysed after it.
    for version in range(21, 26):
        await _change(client, workspace, "policy.yaml", POLICY + STATUS if version % 2 else POLICY, version)
    await _settled(client, workspace)
    found = _diagnostics(client, workspace, "policy.yaml")
    assert [(d.code, d.range.start.line) for d in found] == [("PL110", 12)]  # version 25's status stanza
    versions = [p.version for p in PUBLISHED if p.uri == uri]
    # Each publication names the version it describes; none older than one published before it.
    assert versions and versions[-1] == 25 and versions == sorted(versions)
    # One change: analysed and published for its version.
    PUBLISHED.clear()
    await _change(client, workspace, "policy.yaml", POLICY, 26)
    await _settled(client, workspace)
    assert [(p.uri, p.version, p.diagnostics) for p in PUBLISHED if p.uri == uri] == [(uri, 26, ())]


@pytest.mark.slow  # a 10 MB text through the whole pipeline
@pytest.mark.every_python
@pytest.mark.asyncio(loop_scope="module")
async def test_bad_input_gives_diagnostics_not_a_crashed_server(client: LanguageClient, workspace: Path) -> None:
    await _open(client, workspace, "broken.yaml", "apiVersion: v1\nkind: [Service\n")
    await _settled(client, workspace)
    assert [d.code for d in _diagnostics(client, workspace, "broken.yaml")] == ["PL001"]
    await _change(client, workspace, "broken.yaml", "apiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRou", 2)
    await _settled(client, workspace)
    assert _diagnostics(client, workspace, "broken.yaml") != []
    # 10 MB in one unterminated string: a syntax error at the end of the file.
    big = 'apiVersion: v1\nkind: Service\nmetadata:\n  name: "' + "x" * 10_000_000 + "\n"
    await _change(client, workspace, "broken.yaml", big, 3)
    await _settled(client, workspace)
    assert [d.code for d in _diagnostics(client, workspace, "broken.yaml")] == ["PL001"]
    # Still answering.
    hover = await client.text_document_hover_async(
        types.HoverParams(
            text_document=types.TextDocumentIdentifier(uri=_uri(workspace, "broken.yaml")),
            position=types.Position(line=0, character=0),
        )
    )
    assert hover is None
    client.text_document_did_close(
        types.DidCloseTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=_uri(workspace, "broken.yaml")))
    )
    await _settled(client, workspace)
    assert _diagnostics(client, workspace, "broken.yaml") == []


def _apply(text: str, edits: list[types.TextEdit]) -> str:
    lines = text.splitlines(keepends=True)
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line))
    for edit in sorted(edits, key=lambda e: (e.range.start.line, e.range.start.character), reverse=True):
        start = offsets[edit.range.start.line] + edit.range.start.character
        end = offsets[edit.range.end.line] + edit.range.end.character
        text = text[:start] + edit.new_text + text[end:]
    return text
