"""The handlers of the LSP features the server answers, one function each, and `FEATURES`, the
table `create_server` registers them from (policylint.server.protocol).

Notifications (open, change, save, close, files changed on disk) only schedule an analysis;
requests wait for the analysis of the texts they are asked about (`navigable`, `current`) and
answer from it.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote, urlparse

from lsprotocol import types

from policylint.findings import Finding
from policylint.server import actions, hovers
from policylint.values import frozen

if TYPE_CHECKING:
    from policylint.k8s.objects import K8sObject
    from policylint.server.documents import Lines, Spot
    from policylint.server.layers import Layers
    from policylint.server.protocol import PolicylintServer, Snapshot


@frozen
class Feature:
    """One LSP method, the function answering it and the options the server announces for it."""

    method: str
    handler: Callable[..., Any]
    options: Any = None


def initialize(ls: PolicylintServer, params: types.InitializeParams) -> None:
    folders: Sequence[types.WorkspaceFolder] = params.workspace_folders or []
    root = folders[0].uri if folders else params.root_uri
    if root is not None and urlparse(root).scheme == "file":
        path = unquote(urlparse(root).path)
        if os.path.isdir(path):
            # Names relative to the workspace, configuration found from it: what `check` run in
            # the workspace's root gives.
            os.chdir(path)
            # As the client names it (not resolved): URIs sent back must be the ones it holds,
            # through a symlinked directory too (/tmp on macOS).
            ls.root = os.path.abspath(path)


def initialized(ls: PolicylintServer, params: types.InitializedParams) -> None:
    ls.schedule(on_disk=None)


def edited(ls: PolicylintServer, params: object) -> None:
    """A document opened, changed, saved or closed (then the file on disk stands again for the
    text the editor held): analysed at once, or after the analysis running (policylint.server.protocol)."""
    ls.schedule()


def did_change_files(ls: PolicylintServer, params: types.DidChangeWatchedFilesParams) -> None:
    names = [ls.name_of(change.uri) for change in params.changes]
    ls.schedule(on_disk=None if None in names else [n for n in names if n is not None])


async def hover(ls: PolicylintServer, params: types.HoverParams) -> types.Hover | None:
    snapshot = await ls.navigable()
    found = ls.cursor(snapshot, params.text_document.uri, params.position) if snapshot is not None else None
    if found is None:
        return None
    nav, obj, cursor = found.nav, found.obj, found.cursor
    ref = nav.reference_at(obj, cursor)
    if ref is not None:
        text = hovers.reference(nav, ref)
    else:
        from policylint.commands.explain import ExplainError, explain_object

        try:
            text = hovers.explanation(explain_object(nav.project_of(obj), obj, nav.section_at(obj, cursor)))
        except (ExplainError, AssertionError):
            return None
    return types.Hover(contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value=text))


async def definition(ls: PolicylintServer, params: types.DefinitionParams) -> list[types.Location] | None:
    snapshot = await ls.navigable()
    found = ls.cursor(snapshot, params.text_document.uri, params.position) if snapshot is not None else None
    if found is None or snapshot is None:
        return None
    nav, obj, cursor = found.nav, found.obj, found.cursor
    ref = nav.reference_at(obj, cursor)
    place = nav.definition(ref) if ref is not None else None
    return [ls.location(snapshot, place)] if place is not None else None


async def references(ls: PolicylintServer, params: types.ReferenceParams) -> list[types.Location] | None:
    snapshot = await ls.navigable()
    found = ls.cursor(snapshot, params.text_document.uri, params.position) if snapshot is not None else None
    if found is None or snapshot is None:
        return None
    nav, obj, cursor = found.nav, found.obj, found.cursor
    refs = nav.references_to(obj, nav.section_at(obj, cursor))
    out = [ls.location(snapshot, nav.place(r.owner, r.path)) for r in refs]
    if params.context.include_declaration:
        out.insert(0, ls.location(snapshot, nav.place(obj)))
    return out


async def symbols(ls: PolicylintServer, params: types.DocumentSymbolParams) -> list[types.DocumentSymbol] | None:
    snapshot = await ls.navigable()
    name = ls.name_of(params.text_document.uri)
    if snapshot is None or snapshot.navigator is None or name is None:
        return None
    nav = snapshot.navigator
    lines = snapshot.lines(name)
    return [_symbol(nav, lines, obj) for obj in nav.objects_in(name)]


def _symbol(nav: Layers, lines: Lines, obj: K8sObject) -> types.DocumentSymbol:
    """An object as an outline entry, its named sections (listeners, rules) as its children."""
    children = []
    for section in nav.project_of(obj).index.sections(obj):
        place = nav.place(obj, section.path)
        rng = types.Range(start=position(lines.to_lsp(place.line, place.column)), end=position(lines.end_of(place.line)))
        label = section.name if section.name is not None else f"rules[{section.position}]"
        children.append(types.DocumentSymbol(name=label, kind=types.SymbolKind.Field, range=rng, selection_range=rng))
    place = nav.place(obj)
    top = lines.to_lsp(obj.doc.line, obj.doc.column)
    selection = types.Range(start=position(lines.to_lsp(place.line, place.column)), end=position(lines.end_of(place.line)))
    last = max([c.range.end for c in children] + [selection.end], key=lambda p: (p.line, p.character))
    where = f"{obj.namespace}/{obj.name}" if obj.namespace else obj.name
    return types.DocumentSymbol(
        name=f"{obj.kind} {where}",
        detail=obj.api_version,
        kind=types.SymbolKind.Class,
        range=types.Range(start=position(top), end=last),
        selection_range=selection,
        children=children or None,
    )


async def code_action(ls: PolicylintServer, params: types.CodeActionParams) -> list[types.CodeAction] | None:
    snapshot = await ls.current()
    name = ls.name_of(params.text_document.uri)
    if snapshot is None or name is None:
        return None
    start, end = params.range.start.line, params.range.end.line
    out: list[types.CodeAction] = []
    for finding in snapshot.analysis.findings:
        if finding.file == name and _overlaps(finding, start, end):
            out.extend(_actions(ls, snapshot, name, finding))
    return out


def _actions(ls: PolicylintServer, snapshot: Snapshot, name: str, finding: Finding) -> list[types.CodeAction]:
    """The quick fixes of a finding on the file `name`: its fix, if it has one, and a comment
    suppressing it."""
    diagnostic = ls.diagnostic(snapshot, finding)
    fix_text = snapshot.analysis.text(finding.fix.file) if finding.fix is not None else None
    out = []
    for action in (
        actions.fix_action(finding, fix_text) if fix_text is not None else None,
        actions.suppress_action(finding, snapshot.analysis.text(name) or ""),
    ):
        if action is None:
            continue
        changes: dict[str, list[types.TextEdit]] = {}
        for edit in action.edits:
            changes.setdefault(ls.uri_of(edit.file), []).append(
                types.TextEdit(range=types.Range(start=position(edit.start), end=position(edit.end)), new_text=edit.text)
            )
        out.append(
            types.CodeAction(
                title=action.title,
                kind=types.CodeActionKind.QuickFix,
                diagnostics=[diagnostic],
                is_preferred=action.preferred or None,
                edit=types.WorkspaceEdit(changes=changes),
            )
        )
    return out


def position(spot: Spot) -> types.Position:
    """A place in a document as LSP gives it."""
    return types.Position(line=spot.line, character=spot.character)


def _overlaps(f: Finding, start: int, end: int) -> bool:
    """Whether the finding's lines (0-based) meet start..end."""
    last = max(f.end_line, f.line) - 1
    return f.line - 1 <= end and last >= start


# What the server registers: every method it answers, in the order of the LSP specification's
# lifecycle (initialize, document synchronisation, then the language features).
FEATURES = (
    Feature(types.INITIALIZE, initialize),
    Feature(types.INITIALIZED, initialized),
    Feature(types.TEXT_DOCUMENT_DID_OPEN, edited),
    Feature(types.TEXT_DOCUMENT_DID_CHANGE, edited),
    Feature(types.TEXT_DOCUMENT_DID_SAVE, edited),
    Feature(types.TEXT_DOCUMENT_DID_CLOSE, edited),
    Feature(types.WORKSPACE_DID_CHANGE_WATCHED_FILES, did_change_files),
    Feature(types.TEXT_DOCUMENT_HOVER, hover),
    Feature(types.TEXT_DOCUMENT_DEFINITION, definition),
    Feature(types.TEXT_DOCUMENT_REFERENCES, references),
    Feature(types.TEXT_DOCUMENT_DOCUMENT_SYMBOL, symbols),
    Feature(
        types.TEXT_DOCUMENT_CODE_ACTION,
        code_action,
        types.CodeActionOptions(code_action_kinds=[types.CodeActionKind.QuickFix]),
    ),
)
