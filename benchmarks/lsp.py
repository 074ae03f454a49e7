"""The language server's interactive budget: `policylint server` over stdio on a generated corpus.

    python benchmarks/lsp.py [--objects 10000] [--edits 10] [--requests 30] [--edit comment|value]
                             [--burst KEYS [--interval MS]] [--in-process]

Measures, as an editor sees them (a JSON-RPC client on the server's stdin and stdout):

- the first analysis of the workspace (initialize → the answer to a request, which waits for it);
- diagnostics after an edit: a didChange of one open file (`--edit comment`: a comment line
  appended, no object's data changed; `--edit value`: a rate limit's value changed, as typing
  in a field does) → the answer to a code action request
  sent right after it (the server answers once the analysis of the edited text is published; a
  code action reads the findings only); with `--burst KEYS`, each edit is typed as KEYS changes
  `--interval` ms apart (a character each, the last one the edit), timed from the last;
- the first hover after an edit: request → response, with what navigation reads built for the
  edited workspace;
- hover and definition on an open file once analysed: request → response.

Prints p50 and p95 of each, in milliseconds. `--in-process` measures instead the CPU time of the
first analysis and of each update as the server makes them (`Live`, and what navigation reads
built after each, as the hover that follows an edit has it), in this process with the collector
off as the server runs: what the machine's load moves least, and each update apart (the first
after the whole analysis is the one that differed, docs/performance.md#the-language-server). The first analysis is of the whole workspace, each
after an edit of the part the edit reaches (policylint.server.analysis.Live); the parse cache
(a fresh directory per run, warm after the first analysis) spares the unchanged files' parsing
(docs/performance.md#the-language-server).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from generate import write_corpus


class Client:
    def __init__(self, root: Path, cache: str) -> None:
        env = dict(os.environ, POLICYLINT_CACHE_DIR=cache)
        self.process = subprocess.Popen(
            [sys.executable, "-m", "policylint", "server"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            cwd=root,
            env=env,
        )
        self.next_id = 0

    def send(self, message: dict[str, Any]) -> None:
        assert self.process.stdin is not None
        body = json.dumps({"jsonrpc": "2.0", **message}).encode()
        self.process.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.process.stdin.flush()

    def receive(self) -> dict[str, Any]:
        assert self.process.stdout is not None
        length = 0
        while True:
            line = self.process.stdout.readline()
            if line in (b"\r\n", b""):
                break
            if line.lower().startswith(b"content-length:"):
                length = int(line.split(b":")[1])
        return json.loads(self.process.stdout.read(length))  # type: ignore[no-any-return]

    def request(self, method: str, params: dict[str, Any]) -> Any:
        self.next_id += 1
        wanted = self.next_id
        self.send({"id": wanted, "method": method, "params": params})
        while True:
            message = self.receive()
            if message.get("id") == wanted and "method" not in message:
                return message.get("result")

    def close(self) -> None:
        self.request("shutdown", {})
        self.send({"method": "exit"})
        self.process.wait(timeout=30)


def _ms(values: list[float]) -> str:
    ordered = sorted(values)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return f"p50 {statistics.median(ordered) * 1000:7.0f} ms  p95 {p95 * 1000:7.0f} ms  (n={len(ordered)})"


def _edit_value(text: str, n: int) -> str:
    """`text` with its first rate limit set to another value each edit: one object's data changed,
    nothing it references."""
    edited, count = re.subn(r"(?m)^(\s+- limit: )\d+$", lambda m: f"{m.group(1)}{1000 + n}", text, count=1)
    if not count:
        raise SystemExit("the edited file has no rate limit to change: choose another with --file")
    return edited


def _typing(text: str, edited: str, keys: int) -> list[str]:
    """The texts an editor sends while `text` is typed into `edited` in `keys` changes: the part
    that differs written a character more each time, the last change the whole edit."""
    start = _common(text, edited)
    end = _common(text[start:][::-1], edited[start:][::-1])
    typed = edited[start : len(edited) - end]
    return [edited[:start] + typed[: max(0, len(typed) - k)] + edited[len(edited) - end :] for k in range(keys - 1, -1, -1)]


def _common(a: str, b: str) -> int:
    """The length of the prefix `a` and `b` share."""
    n = 0
    while n < min(len(a), len(b)) and a[n] == b[n]:
        n += 1
    return n


def _type(client: Client, uri: str, texts: list[str], version: int, interval: float) -> tuple[int, float]:
    """Send `texts` as changes `interval` seconds apart; the last version and when it was sent."""
    began = time.perf_counter()
    for k, typed in enumerate(texts):
        if k:
            time.sleep(interval)
        version += 1
        began = time.perf_counter()
        client.send(
            {
                "method": "textDocument/didChange",
                "params": {"textDocument": {"uri": uri, "version": version}, "contentChanges": [{"text": typed}]},
            }
        )
    return version, began


def _edited(text: str, n: int, edit: str) -> str:
    """The edited file's text after the n-th edit."""
    return text + f"# edit {n}\n" if edit == "comment" else _edit_value(text, n)


def _in_process(root: Path, opened: Path, edits: int, edit: str) -> tuple[float, list[float]]:
    """The CPU seconds of the first analysis and of each update, as the server makes them."""
    import gc

    from policylint.server.analysis import Live
    from policylint.server.protocol import Snapshot

    name = opened.relative_to(root).as_posix()
    text = opened.read_text()
    here, was_enabled = os.getcwd(), gc.isenabled()
    os.chdir(root)
    gc.disable()  # as `policylint server` runs (policylint.entry)
    try:
        live = Live(str(root))
        began = time.process_time()
        Snapshot(live.analyse({name: text}, ()), 0).prepare()
        first = time.process_time() - began
        updates: list[float] = []
        for n in range(edits):
            began = time.process_time()
            analysis = live.analyse({name: _edited(text, n, edit)}, ())
            updates.append(time.process_time() - began)
            Snapshot(analysis, n + 1).prepare()
    finally:
        os.chdir(here)
        if was_enabled:
            gc.enable()
    return first, updates


def _report_in_process(args: argparse.Namespace, root: Path, files: list[Path], cache: str) -> None:
    opened = files[len(files) // 2 if args.file is None else args.file]
    os.environ["POLICYLINT_CACHE_DIR"] = cache
    first, updates = _in_process(root, opened, args.edits, args.edit)
    print(f"objects: {args.objects}, files: {len(files)}, edited: {opened.name} ({args.edit}), in this process")
    print(f"first analysis, CPU:       {first * 1000:7.0f} ms")
    print(f"each update, CPU:          {', '.join(f'{u * 1000:.0f}' for u in updates)} ms")
    print(f"an update, CPU:            {_ms(updates)}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--objects", type=int, default=10_000)
    parser.add_argument("--edits", type=int, default=10)
    parser.add_argument("--requests", type=int, default=30)
    parser.add_argument(
        "--file",
        type=int,
        default=None,
        help="which generated file to open and edit (default: the middle one, a tenant's; the first holds the"
        " GatewayClass, whose edits reach the whole workspace)",
    )
    parser.add_argument(
        "--edit",
        choices=("comment", "value"),
        default="comment",
        help="what each edit does: append a comment line (the objects' data unchanged), or change a value of the"
        " first object that has a rate limit (its data changed, as typing in a field does)",
    )
    parser.add_argument(
        "--burst",
        type=int,
        default=1,
        help="send each edit as this many changes, a character more each, as typing does (default: 1, the edit at once)",
    )
    parser.add_argument("--interval", type=float, default=80.0, help="milliseconds between the changes of a burst")
    parser.add_argument(
        "--in-process",
        action="store_true",
        help="the CPU time of the first analysis and of each update, in this process, instead of the server's answers",
    )
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch) / "corpus"
        files = write_corpus(args.objects, root)
        cache = str(Path(scratch) / "cache")
        if args.in_process:
            _report_in_process(args, root, files, cache)
            return 0
        client = Client(root, cache)
        started = time.perf_counter()
        client.request("initialize", {"capabilities": {}, "rootUri": root.as_uri(), "processId": os.getpid()})
        client.send({"method": "initialized", "params": {}})
        opened = files[len(files) // 2 if args.file is None else args.file]
        uri = opened.resolve().as_uri()
        text = opened.read_text()
        client.send(
            {
                "method": "textDocument/didOpen",
                "params": {"textDocument": {"uri": uri, "languageId": "yaml", "version": 1, "text": text}},
            }
        )
        symbols = {"textDocument": {"uri": uri}}
        client.request("textDocument/documentSymbol", symbols)
        first = time.perf_counter() - started
        edits: list[float] = []
        navigated: list[float] = []
        lines = text.splitlines()
        names = [i for i, line in enumerate(lines) if line == "metadata:"]
        action = {
            "textDocument": {"uri": uri},
            "range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}},
            "context": {"diagnostics": []},
        }
        version = 1
        for n in range(args.edits):
            edited = _edited(text, n, args.edit)
            version, began = _type(client, uri, _typing(text, edited, args.burst), version, args.interval / 1000)
            client.request("textDocument/codeAction", action)
            edits.append(time.perf_counter() - began)
            began = time.perf_counter()
            position = {"line": names[n % len(names)] + 1, "character": 4}
            client.request("textDocument/hover", {"textDocument": {"uri": uri}, "position": position})
            navigated.append(time.perf_counter() - began)
        refs = [i for i, line in enumerate(lines) if re.match(r"\s+sectionName: ", line)]
        hovers: list[float] = []
        definitions: list[float] = []
        for k in range(args.requests):
            line = names[k % len(names)] + 1
            began = time.perf_counter()
            client.request("textDocument/hover", {"textDocument": {"uri": uri}, "position": {"line": line, "character": 4}})
            hovers.append(time.perf_counter() - began)
            line = refs[k % len(refs)]
            began = time.perf_counter()
            client.request(
                "textDocument/definition",
                {"textDocument": {"uri": uri}, "position": {"line": line, "character": len(lines[line]) - 1}},
            )
            definitions.append(time.perf_counter() - began)
        client.close()
    burst = f", typed as {args.burst} changes {args.interval:g} ms apart" if args.burst > 1 else ""
    print(f"objects: {args.objects}, files: {len(files)}, edited: {opened.name} ({args.edit}{burst})")
    print(f"first analysis:            {first * 1000:7.0f} ms")
    print(f"diagnostics after an edit: {_ms(edits)}")
    print(f"first hover after an edit: {_ms(navigated)}")
    print(f"hover:                     {_ms(hovers)}")
    print(f"definition:                {_ms(definitions)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
