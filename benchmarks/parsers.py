"""The parser's floor: YAML parsers faster than libyaml, and whether their data is policylint's.

    python benchmarks/parsers.py [--objects 10000] [--repeat 3] [--seed 1] [--no-timing] [--no-check] [--no-command]

Offline. Measures every parser that is importable (none is a dependency of policylint; install
them by hand into a throwaway environment: `pip install ryaml yaml-rs py-yaml12 rapidyaml`):

- timing, best of `--repeat` interleaved rounds over the texts of the clean benchmark corpus
  (`generate.py OBJECTS`, files already read and decoded): PyYAML's C `load_all` and
  `compose_all`, policylint's loader (`parse_text`), each fast parser to Python data
  (rapidyaml: its parse alone, and its tree walked into Python data by Python code, scalars
  left unresolved), and the fast-path prototype
  below (fast parser, certification, PyYAML for what is not certified);
- `policylint check --no-cache --jobs 1` on the same corpus (fresh process, best of `--repeat`);
- the differential check: every YAML/JSON file under tests/ and both benchmark corpora (clean,
  and messy: `--per-file 0 --error-rate 0.3`), each parser's data against policylint's loader
  (types compared strictly: `True` is not `1`), the files that differ sorted by why;
- the fast-path prototype's verdicts on the same files: a file it certifies must give exactly
  policylint's documents, document positions and no input finding;
- a table of single plain scalars (`k: <scalar>`), the resolution of each by each parser
  against policylint's YAML 1.1 resolution, and whether the certification lets a wrong one through.

The prototype (`fast_parse`) takes a file only when a cheap scan of its text and a walk over the
fast parser's data show that nothing policylint's loader reports or resolves can differ:
no tag, anchor, alias, directive, `...`, merge key, template marker or `<`, no control
character or byte order mark, no number written with a leading zero or `_` where a plain scalar
can start (YAML 1.1 octal, yaml_rs's extra integer forms), size and
nesting far below the PL007 limits (policylint's own cheap bounds), every key a string, every
string that YAML 1.1 would read otherwise if it were plain written nowhere a plain value can
stand (so it was quoted), no float, every
integer within int64, and the parser's document count equal to the count of `---` lines.
Files with a duplicate key or a syntax error make the fast parser raise, and go to PyYAML.
"""

from __future__ import annotations

import argparse
import importlib
import math
import multiprocessing
import os
import re
import resource
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import yaml
from generate import write_corpus

from policylint.input import load
from policylint.input.load import decode, parse_text

ROOT = Path(__file__).resolve().parent.parent


# --- The parsers: text -> list of documents (empty documents as None) ------------------------------


def _pyyaml(text: str) -> list[Any]:
    return list(yaml.load_all(text, Loader=yaml.CSafeLoader))


def _yaml_rs(text: str) -> list[Any]:
    import yaml_rs

    data = yaml_rs.loads(text, parse_datetime=False)
    # yaml_rs returns a stream of one document as that document, of several as a list: the two
    # are told apart with the count of `---` lines (`_stream_shape`), as the fast path would.
    return data if _stream_shape(text)[0] > 1 else [data]


def _ryaml(text: str) -> list[Any]:
    import ryaml

    return list(ryaml.loads_all(text))


def _yaml12(text: str) -> list[Any]:
    import yaml12

    return list(yaml12.parse_yaml(text, multi=True))


def _ryml_parse(text: str) -> Any:
    import ryml

    return ryml.parse_in_arena(text.encode("utf-8"))


def _ryml_walk(text: str) -> list[Any]:
    """rapidyaml's tree to Python data, node by node through its SWIG binding; scalars are left as
    their text (no resolution at all: a lower bound on what a YAML 1.1 converter would cost)."""
    import ryml

    tree = ryml.parse_in_arena(text.encode("utf-8"))

    def convert(node: int) -> Any:
        if tree.is_map(node):
            out: dict[str, Any] = {}
            child = tree.first_child(node)
            while child != ryml.NONE:
                out[bytes(tree.key(child)).decode()] = convert(child)
                child = tree.next_sibling(child)
            return out
        if tree.is_seq(node):
            items = []
            child = tree.first_child(node)
            while child != ryml.NONE:
                items.append(convert(child))
                child = tree.next_sibling(child)
            return items
        return bytes(tree.val(node)).decode()

    documents = []
    child = tree.first_child(tree.root_id())
    while child != ryml.NONE:
        documents.append(convert(child))
        child = tree.next_sibling(child)
    return documents


# name, module, call for data (None: timing only), call for timing
PARSERS: list[tuple[str, str, Callable[[str], list[Any]] | None, Callable[[str], Any]]] = [
    ("yaml_rs.loads", "yaml_rs", _yaml_rs, _yaml_rs),
    ("ryaml.loads_all", "ryaml", _ryaml, _ryaml),
    ("yaml12.parse_yaml", "yaml12", _yaml12, _yaml12),
    ("rapidyaml parse_in_arena (tree only)", "ryml", None, _ryml_parse),
    ("rapidyaml tree walked into Python data (unresolved)", "ryml", None, _ryml_walk),
]


def available() -> list[tuple[str, str, Callable[[str], list[Any]] | None, Callable[[str], Any]]]:
    out = []
    for entry in PARSERS:
        try:
            importlib.import_module(entry[1])
        except ImportError:
            continue
        out.append(entry)
    return out


def version(module: str) -> str:
    from importlib.metadata import PackageNotFoundError, packages_distributions
    from importlib.metadata import version as dist_version

    for dist in packages_distributions().get(module, []):
        try:
            return f"{dist} {dist_version(dist)}"
        except PackageNotFoundError:
            pass
    return module


# --- The fast-path prototype ---------------------------------------------------------------------

_RESOLVER = yaml.resolver.Resolver()
_STR = "tag:yaml.org,2002:str"
# First characters of the plain scalars PyYAML's YAML 1.1 resolver may read as something else
# than a string (its implicit resolvers are keyed by first character).
_RESOLVABLE_FIRST = frozenset(k for k in _RESOLVER.yaml_implicit_resolvers if k)
# All of them in one pattern: one C call per string instead of PyYAML's resolve().
_IMPLICIT = re.compile(
    "|".join(sorted({f"(?:{regexp.pattern})" for pairs in _RESOLVER.yaml_implicit_resolvers.values() for _, regexp in pairs})),
    re.X,
)
_DOC_START = re.compile(r"^---(?=[ \t\r\n]|$)", re.M)
_DOC_END = re.compile(r"^\.\.\.(?=[ \t\r\n]|$)", re.M)
_DIRECTIVE = re.compile(r"^%", re.M)
# A number with a leading zero (`0777`, `-012`, `0o17`, `08`, `0_1`): YAML 1.1 octal or a string,
# YAML 1.2 decimal or octal; and the forms yaml_rs reads as integers beyond YAML 1.2 where YAML 1.1
# reads a string (`0X1F`, `0B101`, `_1`: found by the scalar sweep below). Anywhere in the text,
# not only where a plain scalar starts (after a space, a line break, `[`, `{`, `,` or `:`, or at the
# start): a hit in a quoted string or a comment only costs the fast path.
_LEADING_ZERO = re.compile(r"(?:^|[\s\[{,:])[-+]?(?:0[0-9_oOxXbB]|_+[0-9])", re.M)
_FORBIDDEN = ("!", "&", "{{", "${", "$(", "<", "\ufeff")


def _stream_shape(text: str) -> tuple[int, list[tuple[int, int] | None]]:
    """Documents of a stream without `...` or directives, and where each one's root node starts
    (1-based line and column; None for an empty document), from the `---` lines alone.

    A `---` at the start of a line is always a document marker (YAML forbids it inside a
    scalar), content before the first one is a document of its own, each `---` starts one.
    """
    starts = [m.start() for m in _DOC_START.finditer(text)]
    bounds: list[tuple[int, int]] = []
    if not starts or (text[: starts[0]].strip() and _content(text, 0, starts[0]) is not None):
        bounds.append((0, starts[0] if starts else len(text)))
    for i, at in enumerate(starts):
        bounds.append((at + 3, starts[i + 1] if i + 1 < len(starts) else len(text)))
    roots: list[tuple[int, int] | None] = []
    line, counted = 1, 0  # lines counted up to offset `counted`: one pass over the text
    for a, b in bounds:
        root = _content(text, a, b)
        if root is None:
            roots.append(None)
            continue
        line += text.count("\n", counted, root)
        counted = root
        roots.append((line, root - (text.rfind("\n", 0, root) + 1) + 1))
    return len(bounds), roots


def _content(text: str, start: int, end: int) -> int | None:
    """Offset of the first character of `text[start:end]` that is neither blank nor comment."""
    i = start
    while i < end:
        c = text[i]
        if c in " \t\r\n":
            i += 1
        elif c == "#":
            nl = text.find("\n", i, end)
            if nl < 0:
                return None
            i = nl + 1
        else:
            return i
    return None


def _line_col(text: str, index: int) -> tuple[int, int]:
    return text.count("\n", 0, index) + 1, index - (text.rfind("\n", 0, index) + 1) + 1


def _text_refusal(text: str) -> str | None:
    """Why the text alone rules a file out of the fast path (C-speed scans), or None."""
    for s in _FORBIDDEN:
        if s in text:
            return f"text holds {s!r}"
    if load._NON_PRINTABLE.search(text):
        return "control character"
    if ("\n..." in text or "\n%" in text or text.startswith(("...", "%"))) and (_DOC_END.search(text) or _DIRECTIVE.search(text)):
        return "`...` or directive"
    if _LEADING_ZERO.search(text):
        return "number with a leading zero or `_`"
    if load.might_nest_deeper_than_limit(text) or load._might_hold_more_nodes_than_limit(text):
        return "near a PL007 limit"
    return None


def _data_refusal(documents: list[Any], text: str) -> str | None:
    """Why the fast parser's data rules a file out (one walk over every node), or None."""
    nodes = 0
    stack = list(documents)
    match = _IMPLICIT.match
    suspects: set[str] = set()
    while stack:
        node = stack.pop()
        nodes += 1
        cls = node.__class__
        if cls is str:
            if node and node[0] in _RESOLVABLE_FIRST and match(node):
                suspects.add(node)
        elif cls is dict:
            for key in node:
                if key.__class__ is not str:
                    return "key that is not a string"
                if key == "<<":
                    return "merge key"
            stack.extend(node.values())
            nodes += len(node)
        elif cls is list:
            stack.extend(node)
        elif cls is int:
            if not load.INT_MIN <= node <= load.INT_MAX:
                return "integer beyond int64"
        elif cls is bool or node is None:
            pass
        else:
            return f"{cls.__name__} value"
    if nodes > load.MAX_FILE_NODES:
        return "near a PL007 limit"
    for suspect in suspects:
        # A string YAML 1.1 would read as something else (`'0'`, `"yes"`, `"1.2"`) is the same
        # in both only if it was quoted: refused if it is also written where a plain value can
        # be (after a space, a line break, `[`, `{`, `,` or `:`, and before the end of the line,
        # a comment, `,`, `]` or `}`). A plain scalar whose value has no space is written whole
        # on one line; one with a space could span lines, and is refused.
        if any(c.isspace() for c in suspect) or _written_plain(text, suspect):
            return "string that YAML 1.1 reads otherwise, written plain"
    return None


def _written_plain(text: str, value: str) -> bool:
    at = text.find(value)
    while at >= 0:
        end = at + len(value)
        if at == 0 or text[at - 1] in " \t\r\n[{,:":
            while end < len(text) and text[end] in " \t\r":
                end += 1
            if end == len(text) or text[end] in "\n#,]}":
                return True
        at = text.find(value, at + 1)
    return False


def fast_parse(text: str, file: str, parse: Callable[[str], list[Any]]) -> tuple[load.FileResult, str | None]:
    """policylint's `parse_text`, through `parse` when the file can be certified; the reason
    it was not (None: the fast path took it)."""
    reason = _text_refusal(text)
    if reason is None:
        try:
            documents = parse(text)
        except Exception as exc:
            reason = f"parser refuses: {_error_kind(exc)}"
        else:
            count, roots = _stream_shape(text)
            if len(documents) != count or count > load.MAX_DOCUMENTS:
                reason = "document count differs from the `---` lines"
            else:
                reason = _data_refusal(documents, text)
    if reason is not None:
        return parse_text(text, file), reason
    result = load.FileResult([], [])
    for index, (data, root) in enumerate(zip(documents, roots)):
        if root is None:
            continue
        ref = load.DocumentRef(file, 0, 0, index, root[0], root[1])
        result.documents.append(load.Document(ref, data))
    return result, None


def _error_kind(exc: Exception) -> str:
    message = str(exc).lower()
    if "duplicate" in message:
        return "duplicate key"
    if "recursion" in message or "repetition" in message or "limit" in message:
        return "limit"
    return "syntax or other error"


# --- Strict comparison and categories -----------------------------------------------------------


def same(a: Any, b: Any) -> bool:
    if a.__class__ is not b.__class__:
        return False
    if isinstance(a, dict):
        return list(a) == list(b) and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, float) and math.isnan(a):
        return math.isnan(b)
    return bool(a == b)


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 24 else text[:21] + "..."


def first_difference(ours: Any, theirs: Any) -> str:
    """Why two documents differ, as a category (its example in parentheses)."""
    stack = [(ours, theirs)]
    while stack:
        a, b = stack.pop()
        if isinstance(a, dict) and isinstance(b, dict):
            if list(a) != list(b):
                odd = [k for k in b if k.__class__ is not str]
                if odd:
                    return f"key resolved as {type(odd[0]).__name__}, not a string ({_shown(odd[0])})"
                if "<<" in b:
                    return "merge key `<<` kept as a key"
                if len(b) < len(a):
                    return "keys lost (collisions?)"
                return f"keys differ ({_shown(sorted(set(a) ^ set(b))[:2])})"
            stack.extend((a[k], b[k]) for k in reversed(list(a)))
        elif isinstance(a, list) and isinstance(b, list):
            if len(a) != len(b):
                return "list length"
            stack.extend(reversed(list(zip(a, b))))
        elif not same(a, b):
            return f"scalar: policylint {type(a).__name__}, parser {type(b).__name__} ({_shown(a)} / {_shown(b)})"
    return "identical"


def _category(ref: load.FileResult, outcome: tuple[str, Any]) -> tuple[str, str]:
    """Why a parser's outcome on a file is not policylint's loader's: a category and an example."""
    kind, value = outcome
    rules = ", ".join(sorted({i.rule_id for i in ref.issues})) or "nothing"
    if kind == "crash":
        return f"parser crashed or ran out of memory or time; policylint reports {rules}", str(value)
    if kind == "error":
        return f"parser refuses ({value}); policylint reports {rules}", ""
    ours = [d.data for d in ref.documents]
    theirs = [d for d in value if d is not None]
    if ref.issues:
        agrees = "data identical" if same(ours, theirs) else "data differs"
        return f"parser accepts, policylint reports {rules} ({agrees})", ""
    if len(ours) != len(theirs):
        return "document count", f"{len(ours)} / {len(theirs)}"
    for a, b in zip(ours, theirs):
        why = first_difference(a, b)
        if why != "identical":
            category, _, example = why.partition(" (")
            return category, example.rstrip(")")
    return "identical", ""


def _run_guarded(parse: Callable[[str], list[Any]], text: str, timeout: float = 60.0) -> tuple[str, Any]:
    """`parse(text)` in a forked child with 4 GiB of address space and a timeout: alias bombs and
    deep nesting crash or exhaust some parsers."""
    reader, writer = multiprocessing.Pipe(duplex=False)

    def child() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (4 << 30, 4 << 30))
        writer.send(_outcome(parse, text))

    process = multiprocessing.get_context("fork").Process(target=child)
    process.start()
    got = reader.recv() if reader.poll(timeout) else ("crash", "timeout")
    process.kill()
    process.join()
    if got[0] == "crash" or process.exitcode not in (0, -9):
        return got if got[0] == "crash" else ("crash", f"exit {process.exitcode}")
    return got  # type: ignore[no-any-return]


def _outcome(parse: Callable[[str], list[Any]], text: str) -> tuple[str, Any]:
    try:
        return "data", parse(text)
    except RecursionError:
        return "error", "recursion"
    except Exception as exc:
        return "error", _error_kind(exc)


# --- Files --------------------------------------------------------------------------------------


def yaml_files(root: Path) -> Iterator[Path]:
    for path in sorted(root.rglob("*")):
        if path.suffix in (".yaml", ".yml", ".json") and path.is_file() and not path.is_symlink():
            yield path


def read_texts(paths: list[Path]) -> list[tuple[str, str]]:
    out = []
    for path in paths:
        text, _problem = decode(path.read_bytes(), str(path))
        if text is not None:
            out.append((str(path), text))
    return out


# --- Measurements -------------------------------------------------------------------------------


def timing(texts: list[tuple[str, str]], repeat: int) -> list[tuple[str, float]]:
    runs: list[tuple[str, Callable[[str, str], Any]]] = [
        ("PyYAML C load_all", lambda f, t: _pyyaml(t)),
        ("PyYAML C compose_all", lambda f, t: list(yaml.compose_all(t, Loader=yaml.CSafeLoader))),
        ("policylint parse_text (the loader)", lambda f, t: parse_text(t, f)),
    ]
    for name, _, data_call, time_call in available():
        runs.append((name, lambda f, t, c=time_call: c(t)))
        if data_call is not None:
            runs.append((f"fast path: {name} + certify + PyYAML fallback", lambda f, t, c=data_call: fast_parse(t, f, c)))
            runs.append((f"  of which {name} + certify alone", lambda f, t, c=data_call: _certify_only(t, c)))
    best = {name: math.inf for name, _ in runs}
    import gc

    for _ in range(repeat):
        for name, call in runs:
            gc.collect()
            gc.disable()
            start = time.perf_counter()
            for file, text in texts:
                call(file, text)
            best[name] = min(best[name], time.perf_counter() - start)
            gc.enable()
    return [(name, best[name]) for name, _ in runs]


def _certify_only(text: str, parse: Callable[[str], list[Any]]) -> None:
    if _text_refusal(text) is None:
        documents = parse(text)
        _stream_shape(text)
        _data_refusal(documents, text)


def command(corpus: Path, repeat: int) -> float:
    script = Path(sys.executable).parent / "policylint"
    cmd = [str(script)] if script.exists() else [sys.executable, "-m", "policylint"]
    best = math.inf
    for _ in range(repeat):
        start = time.perf_counter()
        subprocess.run(
            [*cmd, "check", "--no-cache", "--jobs", "1", "--format", "json", str(corpus)], capture_output=True, check=False
        )
        best = min(best, time.perf_counter() - start)
    return best


def differential(groups: dict[str, list[tuple[str, str]]]) -> str:
    parsers = [(name, call) for name, _, call, _ in available() if call is not None]
    lines = []
    for group, texts in groups.items():
        lines.append(f"\n### {group}: {len(texts)} files\n")
        verdicts: dict[str, Counter[str]] = {name: Counter() for name, _ in parsers}
        fast: dict[str, Counter[str]] = {name: Counter() for name, _ in parsers}
        examples: dict[tuple[str, str], str] = {}
        for file, text in texts:
            ref = parse_text(text, file)
            risky = any(i.rule_id == "PL007" for i in ref.issues) or len(text) > 2_000_000
            for name, call in parsers:
                outcome = _run_guarded(call, text) if risky else _outcome(call, text)
                category, example = _category(ref, outcome)
                verdicts[name][category] += 1
                examples.setdefault((name, category), f"{Path(file).name}: {example}" if example else Path(file).name)
                if risky:
                    fast[name]["not tried (PL007 file)"] += 1
                    continue
                result, reason = fast_parse(text, file, call)
                if reason is not None:
                    fast[name][f"PyYAML: {reason}"] += 1
                    continue
                exact = (
                    not ref.issues
                    and len(result.documents) == len(ref.documents)
                    and all(same(a.data, b.data) and a.ref == b.ref for a, b in zip(result.documents, ref.documents, strict=True))
                )
                verdict = "fast path, identical to the loader" if exact else "FAST PATH, DIFFERS FROM THE LOADER"
                fast[name][verdict] += 1
                examples.setdefault((name, verdict), Path(file).name if exact else file)
        for name, _ in parsers:
            counts = verdicts[name]
            lines.append(f"{name}: identical data on {counts['identical']} of {len(texts)} files")
            lines.extend(
                f"    {n:5d}  {why}  [e.g. {examples[name, why]}]" for why, n in counts.most_common() if why != "identical"
            )
            lines.append(f"  fast path ({name}):")
            lines.extend(
                f"    {n:5d}  {why}" + (f"  [{examples[name, why]}]" if (name, why) in examples else "")
                for why, n in fast[name].most_common()
            )
    return "\n".join(lines)


# Plain scalars on which YAML 1.1 and 1.2 resolvers may disagree, and their neighbours.
SCALARS = [
    "yes",
    "Yes",
    "YES",
    "no",
    "No",
    "NO",
    "on",
    "On",
    "ON",
    "off",
    "Off",
    "OFF",
    "y",
    "Y",
    "n",
    "N",
    "true",
    "True",
    "TRUE",
    "false",
    "False",
    "FALSE",
    "tRUE",
    "null",
    "Null",
    "NULL",
    "~",
    "nULL",
    "0",
    "00",
    "01",
    "07",
    "08",
    "09",
    "010",
    "0777",
    "-0",
    "+0",
    "-012",
    "+012",
    "0o17",
    "0O17",
    "0o8",
    "0x1F",
    "0X1F",
    "0x1f",
    "-0x1F",
    "+0x1F",
    "0b101",
    "0B101",
    "-0b101",
    "1_000",
    "1__0",
    "_1",
    "1_",
    "0_1",
    "1:30",
    "-1:30",
    "1:30:00",
    "190:20:30.15",
    "12",
    "-12",
    "+12",
    "123456789012345678901234",
    "9223372036854775807",
    "9223372036854775808",
    "-9223372036854775808",
    "-9223372036854775809",
    "1e3",
    "1E3",
    "1e+3",
    "1.0e3",
    "1.0e+3",
    "1.e+3",
    ".5",
    "-.5",
    "+.5",
    "5.",
    "1.0",
    "1_0.5",
    ".inf",
    "-.inf",
    "+.inf",
    ".Inf",
    ".INF",
    ".nan",
    ".NaN",
    ".NAN",
    "inf",
    "nan",
    "2001-12-14",
    "2001-12-14t21:59:43.10-05:00",
    "2001-12-14",
    "21:59:43.10",
    "2002-12-14",
    "2001-1-1",
    "=",
    "<<",
    "<<a",
    "a<<",
    "0s",
    "10s",
    "1h",
    "1.2.3",
    "10.0.0.1",
    "1e",
    "0x",
    "0o",
    "0b",
    "+-",
    "-",
    ".",
    "..",
    "1e3e",
    "0.1.2",
]


def scalar_table() -> str:
    parsers = [(name, call) for name, _, call, _ in available() if call is not None]
    rows = []
    leaks: list[str] = []
    for scalar in SCALARS:
        text = f"k: {scalar}\n"
        ref = parse_text(text, "k.yaml")
        ours = ref.documents[0].data["k"] if ref.documents and not ref.issues else "<finding>"
        cells = []
        for name, call in parsers:
            kind, value = _outcome(call, text)
            theirs = value[0].get("k", "<no key>") if kind == "data" and value and isinstance(value[0], dict) else f"<{value}>"
            agree = kind == "data" and ours != "<finding>" and same(ours, theirs)
            cells.append(("" if agree else "≠ ") + repr(theirs))
            _result, reason = fast_parse(text, "k.yaml", call)
            if reason is None and not agree:
                leaks.append(f"{name} on {scalar!r}")
        rows.append(f"| `{scalar}` | {ours!r} | " + " | ".join(cells) + " |")
    header = "| plain scalar | policylint (YAML 1.1) | " + " | ".join(n for n, _ in parsers) + " |"
    rule = "|---|---|" + "---|" * len(parsers)
    verdict = "certified yet wrong: " + ", ".join(leaks) if leaks else "the certification lets no wrong resolution through"
    return "\n".join([header, rule, *rows, "", verdict])


def scalar_sweep() -> str:
    """Every plain scalar of 1 to 3 characters over the characters numbers, booleans and nulls
    are made of: for each parser, how many resolve otherwise than YAML 1.1, and how many of those
    the certification would let through (each one is a bug in it)."""
    import itertools

    alphabet = "0178_+-.xXoObBeE:nNyY~"
    scalars = ["".join(p) for n in (1, 2, 3) for p in itertools.product(alphabet, repeat=n)]
    scalars += [s + t for s in ("1_0", "0x_", "0b_", "0o_", "1e+", "1.0e", "+0", "-_") for t in ("", "0", "1", "_1", "f", "8")]
    lines = [f"{len(scalars)} scalars"]
    for name, _, call, _ in available():
        if call is None:
            continue
        differ, leaked = 0, []
        for scalar in scalars:
            text = f"k: {scalar}\n"
            ref = parse_text(text, "k.yaml")
            kind, value = _outcome(call, text)
            agree = (
                kind == "data"
                and not ref.issues
                and len(ref.documents) == 1
                and len(value) == 1
                and same(ref.documents[0].data, value[0])
            )
            if agree:
                continue
            differ += 1
            if fast_parse(text, "k.yaml", call)[1] is None:
                leaked.append(scalar)
        lines.append(
            f"{name}: {differ} resolve or parse otherwise than policylint; certified among them: {len(leaked)} {leaked[:10]}"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--objects", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--no-timing", action="store_true")
    parser.add_argument("--no-check", action="store_true", help="skip the differential check and the scalar table")
    parser.add_argument("--no-command", action="store_true", help="skip `policylint check` through the command")
    args = parser.parse_args(argv)

    print(f"Python {sys.version.split()[0]}, PyYAML {yaml.__version__} (libyaml: {yaml.__with_libyaml__}), {os.cpu_count()} CPUs")
    modules = dict.fromkeys(module for _, module, _, _ in available())
    print("parsers: " + (", ".join(version(module) for module in modules) or "none but PyYAML"))
    with tempfile.TemporaryDirectory() as tmp:
        clean, messy = Path(tmp, "clean"), Path(tmp, "messy")
        write_corpus(args.objects, clean, seed=args.seed)
        write_corpus(args.objects, messy, seed=args.seed, per_file=0, error_rate=0.3)
        clean_texts = read_texts(list(yaml_files(clean)))
        if not args.no_timing:
            size = sum(len(t.encode()) for _, t in clean_texts) / 1e6
            print(
                f"\n## Timing: clean corpus, {args.objects} objects, {len(clean_texts)} files, {size:.1f} MB, best of {args.repeat}\n"
            )
            rows = timing(clean_texts, args.repeat)
            base = dict(rows)["policylint parse_text (the loader)"]
            for name, seconds in rows:
                print(f"{seconds:7.3f} s  {seconds / base:5.2f}x loader  {name}")
            if not args.no_command:
                took = command(clean, args.repeat)
                print(f"{took:7.3f} s  policylint check --no-cache --jobs 1 (fresh process, JSON report)")
        if not args.no_check:
            groups = {
                "tests/": read_texts(list(yaml_files(ROOT / "tests"))),
                f"clean corpus ({args.objects} objects)": clean_texts,
                f"messy corpus ({args.objects} objects, --per-file 0 --error-rate 0.3)": read_texts(list(yaml_files(messy))),
            }
            print("\n## Differential check against policylint's loader")
            print(differential(groups))
            print("\n## Single plain scalars (`k: <scalar>`)\n")
            print(scalar_table())
            print("\n## Sweep of short plain scalars\n")
            print(scalar_sweep())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
