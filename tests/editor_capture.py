"""`make editor-capture`: the picture of README "In your editor", made from the real server.

Starts `policylint server` over stdio as an editor does (the LSP client of pytest-lsp, on pygls),
on a copy of `examples/`: opens the policy file with the misspelled target, waits for the
diagnostics of the whole workspace, asks for a hover on that `targetRef` and on the shared
Gateway's name, and draws what came back as an editor's frame (`tests/editor_frame.py`) into
`docs/images/editor.svg`. `tests/editor/test_editor_capture.py` draws it again and fails when the
committed picture is not what the server says today:

    python -m tests.editor_capture                # write docs/images/editor.svg
    python -m tests.editor_capture --check        # exit 1 when it is stale

The workspace is a copy so that nothing around `examples/` in this repository (a configuration
file above it, git's view of it) changes what the server finds; the server's parse cache goes to
a temporary directory, so the user's is neither read nor written.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import NamedTuple
from urllib.parse import unquote, urlparse

import pytest_lsp
from lsprotocol import types
from pytest_lsp import LanguageClient, make_test_lsp_client

from tests.editor_frame import Capture, Diagnostic, Pane, markdown_runs, render

REPOSITORY = Path(__file__).resolve().parent.parent
EXAMPLES = REPOSITORY / "examples"
OUTPUT = REPOSITORY / "docs" / "images" / "editor.svg"
TITLE = "examples — policylint server"


class Shot(NamedTuple):
    """A pane to draw: `file` from line `first` to `last`, hovered on the value after `anchor`."""

    file: str
    first: int
    last: int
    anchor: str  # the first line holding it is hovered, on the character after it


SHOTS = (
    Shot("team-a/envoy-policies.yaml", 30, 49, "      name: storfront"),
    Shot("infra/gateway.yaml", 1, 13, "  name: shared-gw"),
)


class CaptureError(Exception):
    """The examples no longer hold what the picture shows (an anchor line is gone)."""


def _position(text: str, shot: Shot) -> tuple[int, int]:
    for number, line in enumerate(text.splitlines()):
        if line.startswith(shot.anchor):
            # On the value's first character: what a reader points at.
            return number, len(shot.anchor) - len(shot.anchor.split(":")[-1].lstrip(" "))
    raise CaptureError(f"no line of examples/{shot.file} starts with {shot.anchor!r}: update SHOTS in {Path(__file__).name}")


def _diagnostic(root: Path, uri: str, found: types.Diagnostic) -> Diagnostic:
    return Diagnostic(
        file=Path(unquote(urlparse(uri).path)).relative_to(root).as_posix(),
        line=found.range.start.line,
        character=found.range.start.character,
        end_line=found.range.end.line,
        end_character=found.range.end.character,
        severity=int(found.severity or types.DiagnosticSeverity.Error),
        code=str(found.code),
        source=found.source or "",
        message=found.message,
    )


async def _hover(client: LanguageClient, uri: str, at: tuple[int, int]) -> str:
    found = await client.text_document_hover_async(
        types.HoverParams(text_document=types.TextDocumentIdentifier(uri=uri), position=types.Position(*at))
    )
    if found is None:
        return ""
    contents = found.contents
    return contents.value if isinstance(contents, types.MarkupContent) else str(contents)


async def _session(root: Path, cache: Path) -> Capture:
    client = make_test_lsp_client()
    env = {**os.environ, "POLICYLINT_CACHE_DIR": str(cache)}
    await client.start_io(sys.executable, "-m", "policylint", "server", env=env, cwd=str(root))
    try:
        await client.initialize_session(
            types.InitializeParams(
                capabilities=pytest_lsp.client_capabilities("visual-studio-code"),
                workspace_folders=[types.WorkspaceFolder(uri=root.as_uri(), name=root.name)],
            )
        )
        texts = {shot.file: (root / shot.file).read_text(encoding="utf-8") for shot in SHOTS}
        for shot in SHOTS:
            client.text_document_did_open(
                types.DidOpenTextDocumentParams(
                    text_document=types.TextDocumentItem(
                        uri=(root / shot.file).as_uri(), language_id="yaml", version=1, text=texts[shot.file]
                    )
                )
            )
        # A request is answered after the analysis of the texts sent before it is published.
        await client.text_document_document_symbol_async(
            types.DocumentSymbolParams(text_document=types.TextDocumentIdentifier(uri=(root / SHOTS[0].file).as_uri()))
        )
        problems = sorted(
            (_diagnostic(root, uri, found) for uri, published in client.diagnostics.items() for found in published),
            key=lambda d: (d.file, d.line, d.character, d.code, d.message),
        )
        panes = []
        for shot in SHOTS:
            at = _position(texts[shot.file], shot)
            hover = await _hover(client, (root / shot.file).as_uri(), at)
            mine = tuple(problem for problem in problems if problem.file == shot.file)
            panes.append(Pane(shot.file, texts[shot.file], shot.first, shot.last, at, hover, mine))
        await client.shutdown_session()
    finally:
        await client.stop()  # type: ignore[no-untyped-call]
    return Capture(TITLE, _description(panes, problems), tuple(panes), tuple(problems))


def _description(panes: Sequence[Pane], problems: Sequence[Diagnostic]) -> str:
    """The picture in words, for screen readers: what is hovered and what the server answered."""
    said = [f"policylint server in an editor on the examples directory: {len(problems)} problems in the workspace."]
    for pane in panes:
        line, character = pane.hover_at
        first = next((text for text in pane.hover.splitlines() if text.strip()), "nothing")
        first = "".join(run.text for run in markdown_runs(first))
        said.append(f"{pane.file}, hover at line {line + 1}, column {character + 1}: {first}.")
    return " ".join(said)


def capture() -> str:
    """The picture, drawn from a session with the server on a copy of `examples/`."""
    with tempfile.TemporaryDirectory(prefix="policylint-capture-") as scratch:
        root = Path(scratch) / "examples"
        shutil.copytree(EXAMPLES, root)
        return render(asyncio.run(_session(root.resolve(), Path(scratch) / "cache")))


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.editor_capture", description=__doc__.splitlines()[0])
    parser.add_argument("output", nargs="?", type=Path, default=OUTPUT)
    parser.add_argument("--check", action="store_true", help="exit 1 when OUTPUT is not what the server gives now")
    args = parser.parse_args(argv)
    try:
        picture = capture()
    except CaptureError as error:
        print(f"editor capture: {error}", file=sys.stderr)
        return 2
    output: Path = args.output
    current = output.read_text(encoding="utf-8") if output.is_file() else None
    if args.check:
        if current != picture:
            print(f"{output} is stale: run `make editor-capture`", file=sys.stderr)
            return 1
        return 0
    if current != picture:
        output.parent.mkdir(parents=True, exist_ok=True)
        output.write_text(picture, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
