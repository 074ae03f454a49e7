"""The hostile-input corpus, and a runner that lints one case in a subprocess and measures it.

The corpus is every hostile file of tests/hostile/test_hostile_inputs.py (its `CASES`,
the 100,000-deep documents and a file over the size limit) plus the classes of
the hostile-input review: template markers that make a regex backtrack, alias
amplification inside the alias bound (bytes, non-scalar keys, depth), millions
of documents and nodes, integers of every YAML form too long to print, a byte
order mark at a later document, invalid merge sources, non-string keys and
kinds, malformed core objects, one registry host declared by thousands of
ServiceEntries and named by thousands of routes, control characters in names and file names,
special files (FIFO, links to devices, to our own stdout, out of the root), an
unreadable directory, and a parse cache planted inside the linted repository.

Each case is a directory holding its hostile file(s) and one known-good file,
`good.yaml`: a Service and a BackendTLSPolicy targeting it. The policy is
listed in the JSON report with its target resolved only if the Service was
indexed too, so "the other file is still linted" is visible in the report.

`run_case` runs `python -m policylint check DIR` in its own session with
standard input open but never written (a read of /dev/stdin blocks, as it
would in CI), standard output a pipe, a timeout, an address-space ceiling
(a safety net only), through a small launcher that reaps it with `os.wait4`
for its wall time and peak RSS, the `ru_maxrss` of the largest of the command
and its reaped workers. `problems` checks what must hold whatever the budget:
no traceback, exit 0 or 1, a schema-valid report, the good file clean and
linted, every finding located inside the case, nothing written into the
linted tree or changed outside it. `unmet` checks the findings each case is
expected to produce.

Used by fuzz/hostile.py (`make hostile`: the acceptance budgets, 2 s and
300 MB per case, and a table) and tests/hostile/test_hostile_budget.py (generous
budgets, in the test suite). See fuzz/README.md.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import signal
import stat
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from policylint.input import bounds
from policylint.input.parallel import PARALLEL_MIN_BYTES
from tests.gitrepo import git, init
from tests.hostile.test_hostile_inputs import CASES, DEEP_EXPECTED, DEEP_FILES, GOOD, Case

ROOT = Path(__file__).resolve().parent.parent

GOOD_FILE = "good.yaml"
LARGE_BYTES = PARALLEL_MIN_BYTES  # from here `--jobs` parses in worker processes
# The Service of tests/hostile/test_hostile_inputs.py plus a policy targeting it: the report lists the
# policy, and its target is Accepted only when the Service was indexed as well.
GOOD_TEXT = (
    GOOD
    + """\
---
apiVersion: gateway.networking.k8s.io/v1
kind: BackendTLSPolicy
metadata:
  name: neighbour-tls
  namespace: app
spec:
  targetRefs:
  - group: ""
    kind: Service
    name: neighbour
  validation:
    hostname: neighbour.app.svc.cluster.local
    wellKnownCACertificates: System
"""
)
GOOD_POLICY = "app/neighbour-tls"
# Marks a `diff` report read as a `check` report (_diff_view).
DIFF_VIEW = "diff-view"

# A run that exceeds this address space fails with MemoryError instead of exhausting the
# machine; budgets are judged on the measured peak RSS, far below it.
ADDRESS_SPACE_CEILING = 4 * 1024**3
# Output kept for parsing: a report bigger than this is itself a failure (it is counted, not kept).
STDOUT_KEPT = 64 * 1024 * 1024
STDERR_KEPT = 256 * 1024
# What a crashed interpreter leaves on stderr.
CRASH_MARKERS = ("Traceback (most recent call last)", "Fatal Python error", "Exception ignored", "MemoryError")
# Characters no human-readable output may carry raw: C0 controls but the line feed, DEL, C1
# controls, the Unicode line and paragraph separators and the bidi overrides and isolates.
UNSAFE_CHARACTERS = frozenset(
    [chr(c) for c in range(0x20) if c != 0x0A]
    + [chr(0x7F)]
    + [chr(c) for c in range(0x80, 0xA0)]
    + ["\u2028", "\u2029"]
    + [chr(c) for c in range(0x202A, 0x202F)]
    + [chr(c) for c in range(0x2066, 0x206A)]
)


# -- cases -------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Expect:
    """A finding a case must produce: on `file` (relative to the case), whose rule id starts with
    `rule` ("" for any rule but PL000), at `line`, with `severity`, whose message contains `message`
    (case-insensitive); None leaves a field free."""

    file: str
    rule: str = ""
    line: int | None = None
    severity: str | None = None
    message: str | None = None

    def describe(self) -> str:
        parts = [self.rule or "a finding", f"on {self.file!r}"]
        if self.line is not None:
            parts.append(f"line {self.line}")
        if self.severity is not None:
            parts.append(f"severity {self.severity}")
        if self.message is not None:
            parts.append(f"message containing {self.message!r}")
        return " ".join(parts)


# Writes a case's hostile files into its directory; the second argument is a directory of its own
# outside the linted root (targets of symlinks that leave the root, victims of cache pruning).
Builder = Callable[[Path, Path], None]


@dataclass(frozen=True)
class HostileCase:
    id: str
    origin: str  # "suite": tests/hostile/test_hostile_inputs.py; "review": a class of the hostile-input review
    build: Builder
    expect: tuple[Expect, ...] = ()
    # Hostile files that must have no finding at all (valid input the loader used to lose).
    clean: tuple[str, ...] = ()
    # Policies ("namespace/name") that must be in the report with every target Accepted.
    accepted: tuple[str, ...] = ()
    # Paths (relative to the case) no finding may name: what lies behind a link out of the root.
    absent: tuple[str, ...] = ()
    # Also rendered as text and checked for injected lines and raw control characters.
    text: bool = False
    # Run from inside the case directory with `.`, as CI runs in its checkout, with the default
    # cache too: a cache planted in the repository must not be used.
    inside: bool = False
    # Directories (relative to the case) that cannot be listed; as root, where permission bits do
    # not stop reads, listing them is refused by a wrapper around os.scandir and os.listdir.
    unreadable: tuple[str, ...] = ()
    # Big enough for `--jobs` to parse in worker processes (PARALLEL_MIN_BYTES): also run with
    # `--jobs 2`. Checked against the files once built.
    large: bool = False
    # A git case (its builder makes a repository): the command run in place of `check DIR`, from
    # inside the case directory, e.g. ("check", "--staged", ".") or ("diff", "base", "HEAD"); the
    # run's options go right after the command's name. A `diff` run is checked on the findings
    # it introduces and the policies it adds (their status after).
    argv: tuple[str, ...] = ()
    # The exit code the case must end with, when not 0 or 1: 2 for a configuration the run
    # refuses or a usage error (then no report is expected, and the good file is not linted).
    exit_code: int | None = None
    # Text standard error must hold, and texts it must not (a secret from outside the case).
    stderr: str | None = None
    stderr_absent: tuple[str, ...] = ()
    # Texts the report's `gate.relaxations` messages must contain: what the case's configuration
    # turned off, said with its file and line (README "Security").
    gate: tuple[str, ...] = ()


def _files(files: Mapping[str, bytes | Callable[[], bytes]]) -> Builder:
    """Writes `files`; big contents are given as functions, run only when the corpus is built."""

    def build(directory: Path, outside: Path) -> None:
        for name, data in files.items():
            (directory / name).write_bytes(data if isinstance(data, bytes) else data())

    return build


def _line_of(text: str, needle: str, occurrence: int = 1) -> int:
    """1-based number of the line holding the `occurrence`-th `needle`: expected lines are
    computed from the input, never read back from output."""
    seen = 0
    for number, line in enumerate(text.split("\n"), 1):
        if needle in line:
            seen += 1
            if seen == occurrence:
                return number
    raise ValueError(f"{needle!r} occurs fewer than {occurrence} times")


def _suite_case(case: Case) -> HostileCase:
    if case.rules:
        # tests/hostile/test_hostile_inputs.py pins the line of its first rule only.
        expect = tuple(Expect(case.name, rule, case.line if i == 0 else None) for i, rule in enumerate(case.rules))
    else:
        # Policy-shape problems: any policy rule, at the pinned line.
        expect = (Expect(case.name, "", case.line),)
    return HostileCase(case.id, "suite", _files({case.name: case.data}), expect)


def _suite_cases() -> list[HostileCase]:
    out = [_suite_case(case) for case in CASES]
    for name, text in DEEP_FILES.items():
        expect = tuple(Expect(name, rule, line) for rule, line in DEEP_EXPECTED[name])
        out.append(HostileCase(f"deep-100k-{Path(name).stem}", "suite", _files({name: text.encode()}), expect))
    # Over the size cap: the suite lowers the cap in-process; a subprocess meets the real one, and
    # its memory must stay within the budget however big the file.
    out.append(
        HostileCase(
            "file-over-the-size-limit", "suite", _files({"huge.yaml": _huge}), (Expect("huge.yaml", "PL007", 1),), large=True
        )
    )
    return out


def _huge() -> bytes:
    padding = b"# padding padding padding padding padding padding padding padding padding padding\n"
    head = GOOD.replace("neighbour", "huge").encode()
    return head + padding * ((bounds.MAX_FILE_BYTES - len(head)) // len(padding) + 1)


# Template markers: the pattern `\{\{-?\s*.*?\s*-?\}\}` once backtracked cubically over blanks
# after `{{` (2,000 took 15 s) and quadratically over a line of `{`.
_SPACES_2000 = 'a: "{{' + " " * 2000 + "\n"
# A ConfigMap (a core kind: markers in its values count, PL004), its kind after the values so
# that the marker's line is the second.
_CONFIG_MAP = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: t, namespace: t}\n"
_SPACES_3000_THEN_MARKER = 'a: "{{' + " " * 3000 + '"\nb: "{{ .Values.name }}"\n' + _CONFIG_MAP
_BRACES_64K = "{{" * 32 * 1024 + "\n"
_BRACES_64K_QUOTED_THEN_MARKER = 'a: "' + "{{" * 32 * 1024 + '"\nb: "{{ .Values.name }}"\n' + _CONFIG_MAP


def _policy_of(name: str, spec_lines: str) -> str:
    """A policy of a kind policylint infers from its name (`*Policy`), targeting Service `amp`
    (defined next to it), so that rules and the effective-policy simulation walk its spec."""
    return (
        "apiVersion: v1\nkind: Service\nmetadata: {name: amp, namespace: app}\nspec: {ports: [{name: http, port: 80}]}\n"
        "---\napiVersion: platform.example.com/v1\nkind: RetryPolicy\n"
        f"metadata: {{name: {name}, namespace: app}}\n"
        'spec:\n  targetRefs: [{group: "", kind: Service, name: amp}]\n  default:\n' + spec_lines
    )


def _alias_bytes() -> str:
    # 10,000 aliases of one 256 KiB string: 2.5 GiB of text once expanded, 10,002 nodes.
    return _policy_of("bytes", '    blob: &s "' + "x" * 256 * 1024 + '"\n    copies: [' + ", ".join(["*s"] * 10_000) + "]\n")


def _alias_key() -> str:
    # A 128 MiB value (2,000 aliases of a 64 KiB string) used as five distinct mapping keys.
    lines = '    base: &s "' + "y" * 64 * 1024 + '"\n    big: &b [' + ", ".join(["*s"] * 2000) + "]\n"
    lines += "".join(f"    ? [*b, {i}]\n    : x\n" for i in range(5))
    return _policy_of("key", lines)


def _alias_depth(links: int) -> str:
    # Each anchor nests 200 levels and holds the previous one: `links` * 200 levels once
    # expanded, 200 in the text.
    lines = "    a0: &a0 " + "[" * 200 + "]" * 200 + "\n"
    for i in range(1, links):
        lines += f"    a{i}: &a{i} " + "[" * 199 + f"*a{i - 1}" + "]" * 199 + "\n"
    return _policy_of(f"depth-{links}", lines)


_NUMBERS = """\
apiVersion: v1
kind: Service
metadata:
  name: numbers
  namespace: app
spec:
  ports:
  - name: http
    port: {v}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata:
  name: numbers
  namespace: app
spec:
  gatewayClassName: numbers
  listeners:
  - name: http
    protocol: HTTP
    port: {v}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata:
  name: numbers
  namespace: app
spec:
  parentRefs:
  - name: numbers
    port: {u}
  rules:
  - backendRefs:
    - name: numbers
      port: {u}
      weight: {w}
"""
# Line numbers of the four ports in _NUMBERS. The route's ports (`u`) differ from the Service's
# and the listener's (`v`), so that rules name them in messages ("no port ...").
_PORT_LINES = (9, 21, 31, 35)

# YAML 1.1 integer forms (PyYAML's resolver) whose values need far more than 4,300 decimal digits,
# CPython's limit for int-to-str conversion (docs.python.org/3/library/stdtypes.html#int-max-str-digits).
_HUGE_INTEGERS = {
    "hex": "0x" + "f" * 5000,
    "hex-signed": "-0x" + "f" * 5000,
    "octal": "0" + "7" * 6000,
    "binary": "0b" + "1" * 20_000,
    "sexagesimal": "1" + ":59" * 5000,
    "decimal-underscores": "1" + "_000" * 2000,
}


def _numbers(value: str, weight: str = "1") -> bytes:
    # A trailing 0 keeps every form valid (a digit, or a `:0` sexagesimal place) and changes it.
    other = value + (":0" if ":" in value else "0")
    return _NUMBERS.format(v=value, u=other, w=weight).encode()


_BOM_SECOND_DOCUMENT = """\
apiVersion: gateway.networking.k8s.io/v1
kind: BackendTLSPolicy
metadata:
  name: bom-tls
  namespace: app
spec:
  targetRefs:
  - group: ""
    kind: Service
    name: bom-target
  validation:
    hostname: bom-target.app.svc.cluster.local
    wellKnownCACertificates: System
---
\ufeffapiVersion: v1
kind: Service
metadata:
  name: bom-target
  namespace: app
spec:
  ports:
  - name: https
    port: 443
"""

_MERGES = "".join(
    f'---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: merge-{i}\n  namespace: app\ndata:\n  <<: {source}\n  a: "1"\n'
    for i, source in enumerate(["5", "[1, x]", '"str"'])
)

_NON_STRING_KEYS = """\
apiVersion: v1
kind: ConfigMap
metadata: {name: block-keys, namespace: app}
data:
  ? [a]
  : x
  ? {a: 1}
  : y
  plain: z
---
apiVersion: v1
kind: ConfigMap
metadata: {name: flow-keys, namespace: app}
data: {[1, 2]: x}
"""

_ROUTE_HEAD = "apiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\nmetadata: {name: route, namespace: app}\nspec:\n"

_PARENT_REFS_MAPPING = _ROUTE_HEAD + "  parentRefs: {name: gw}\n  rules: [{matches: [{path: {value: /}}]}]\n"
_RULES_NUMBER = _ROUTE_HEAD + "  parentRefs: [{name: gw}]\n  rules: 5\n"
_LISTENER_PORT_WORD = (
    "apiVersion: gateway.networking.k8s.io/v1\nkind: Gateway\nmetadata: {name: gw, namespace: app}\nspec:\n"
    '  gatewayClassName: eg\n  listeners:\n  - name: http\n    protocol: HTTP\n    port: "eighty"\n'
)


def _host_entries(n: int = 6000) -> bytes:
    """`n` ServiceEntries declaring one host, each to its own namespace only."""
    return "---\n".join(
        "apiVersion: networking.istio.io/v1\nkind: ServiceEntry\n"
        f"metadata: {{name: se{i}, namespace: mesh}}\nspec: {{hosts: [h.example], exportTo: ['.']}}\n"
        for i in range(n)
    ).encode()


def _host_routes(n: int = 6000) -> bytes:
    """`n` routes in namespaces of their own naming that host as an Istio Hostname backend: a
    lookup per route over every ServiceEntry would cost n x n."""
    return "---\n".join(
        "apiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\n"
        f"metadata: {{name: r, namespace: ns{i}}}\nspec:\n"
        "  rules: [{backendRefs: [{group: networking.istio.io, kind: Hostname, name: h.example, port: 80}]}]\n"
        for i in range(n)
    ).encode()


def _nested_alternatives(levels: int = 40) -> bytes:
    """A CRD whose items' schema is two anyOf alternatives, each two more, `levels` deep, none of
    which any value satisfies: walked alternative by alternative, 2 ** levels walks per item."""
    node = '{required: ["never"]}'
    for _ in range(levels):
        node = f"{{anyOf: [{node}, {node}]}}" if len(node) < 4000 else node
    return (
        "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: bombs.example.com}\n"
        "spec:\n  group: example.com\n  names: {kind: Bomb, plural: bombs}\n  scope: Namespaced\n  versions:\n"
        "  - name: v1\n    served: true\n    storage: true\n    schema:\n      openAPIV3Schema:\n        type: object\n"
        "        properties:\n          spec:\n            type: object\n            properties:\n"
        "              count: {type: integer}\n"
        f"              items: {{type: array, items: {{type: object, x-kubernetes-preserve-unknown-fields: true, {node[1:-1]}}}}}\n"
    ).encode()


def _nested_alternatives_objects(n: int = 100) -> bytes:
    items = ", ".join("{a: 1}" for _ in range(200))
    return "---\n".join(
        f"apiVersion: example.com/v1\nkind: Bomb\nmetadata: {{name: b{i}, namespace: app}}\nspec:\n  count: many\n  items: [{items}]\n"
        for i in range(n)
    ).encode()


def _duplicates_and_urls(n: int = 20) -> bytes:
    """Lists the schema keeps unique (a set, a map keyed by name) with many items, mostly the same,
    and URLs the CEL rules parse, long and full of escapes: each check is linear in its value."""
    removed = ", ".join(f"x-{i % 7}" for i in range(20_000))
    headers = ", ".join(f"{{name: h{i % 5}, value: v}}" for i in range(20_000))
    route = (
        "apiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\nmetadata: {name: r, namespace: app}\nspec:\n"
        f"  rules:\n  - matches: [{{headers: [{headers}]}}]\n"
        f"    filters: [{{type: RequestHeaderModifier, requestHeaderModifier: {{remove: [{removed}]}}}}]\n"
    )
    uri = "https://h/" + "%41%zz" * 4_000
    jwt = "".join(
        f"---\napiVersion: security.istio.io/v1\nkind: RequestAuthentication\nmetadata: {{name: j{i}, namespace: app}}\n"
        f'spec:\n  jwtRules: [{{issuer: i, jwksUri: "{uri}{i}"}}]\n'
        for i in range(n)
    )
    return (route + jwt).encode()


# YAML double-quoted escapes: \n, \r, \e (ESC), \a (BEL), \u202e (right-to-left override).
# A newline followed by `::error` would be a GitHub Actions workflow command; OSC 8 is a terminal
# hyperlink, OSC 52 writes the clipboard, `ESC [ 2 K` erases the line.
_INJECTION = """\
apiVersion: gateway.networking.k8s.io/v1
kind: BackendTLSPolicy
metadata:
  name: "evil\\n::error file=good.yaml,line=1::forged finding"
  namespace: "app\\e]8;;https://example.com/\\aclick\\e]8;;\\a"
spec:
  targetRefs:
  - group: ""
    kind: Service
    name: "svc\\r\\e[2K\\e]52;c;cHduZWQ=\\a\\u202eevil"
  validation:
    hostname: svc.example.com
    wellKnownCACertificates: System
"""
# No `/` in a file name: the OSC 8 link has no URL, it only opens and closes.
_INJECTION_FILE_NAME = "evil\n::error file=good.yaml::forged\x1b]8;;\x07link\x1b]8;;\x07\r\u202e.yaml"


def _fifo(directory: Path, outside: Path) -> None:
    os.mkfifo(directory / "pipe.yaml")


def _symlink(name: str, target: str) -> Builder:
    def build(directory: Path, outside: Path) -> None:
        os.symlink(target, directory / name)

    return build


def _link_out_of_the_root(directory: Path, outside: Path) -> None:
    elsewhere = outside / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "elsewhere.yaml").write_text("a: [1, 2\n")  # a finding, were it read
    (elsewhere / "service.yaml").write_text(GOOD.replace("neighbour", "elsewhere"))
    os.symlink(elsewhere, directory / "linked")


def _unreadable_directory(directory: Path, outside: Path) -> None:
    secret = directory / "secret"
    secret.mkdir()
    (secret / "inside.yaml").write_text("a: [1, 2\n")
    secret.chmod(0)


# `b: c` after `spec:` is the suite's "two-colons" syntax error, here on line 4.
_FORGED_BAD = b"apiVersion: v1\nkind: Service\nmetadata: {name: forged, namespace: app}\nspec: b: c\n"


def _planted_cache(directory: Path, staging: Path, entries_for: Iterable[bytes]) -> None:
    """A cache directory as an attacker commits it: made by policylint itself (tag files and all),
    holding an entry that says each of `entries_for` parses to nothing, in whatever entry format
    the installed policylint writes."""
    from policylint.input import cache
    from policylint.input.load import FileResult

    parse_cache = cache.ParseCache(staging)
    for data in entries_for:
        parse_cache.put(parse_cache.key(data), cache.dumps(cache.pack(FileResult([], []))))
    if not staging.is_dir():
        raise RuntimeError("the installed policylint wrote no cache entry to plant")
    shutil.copytree(staging, directory / ".policylint_cache", symlinks=True)


def _forged_cache_entry(directory: Path, outside: Path) -> None:
    (directory / ".git").mkdir()  # a git work tree, as a CI checkout is
    (directory / "bad.yaml").write_bytes(_FORGED_BAD)
    _planted_cache(directory, outside / "staging", [_FORGED_BAD])


VICTIM_FILES = 5000  # more than the cache keeps (4,096), so that pruning would delete some


def _cache_entries_symlink(directory: Path, outside: Path) -> None:
    (directory / ".git").mkdir()
    (directory / "bad.yaml").write_bytes(_FORGED_BAD)
    _planted_cache(directory, outside / "staging", [b"kind: Placeholder\n"])
    entries = directory / ".policylint_cache" / "parse"
    if entries.exists():
        shutil.rmtree(entries)
    victim = outside / "victim"
    victim.mkdir()
    for i in range(VICTIM_FILES):
        # Named like cache entries (40 hex digits), old: the first that pruning would pick.
        path = victim / hashlib.blake2b(str(i).encode(), digest_size=20).hexdigest()
        path.write_bytes(b"someone else's file\n")
        os.utime(path, (1_000_000_000, 1_000_000_000))
    (victim / "notes.txt").write_text("someone else's file\n")
    os.symlink(victim, entries)


def _review_cases() -> list[HostileCase]:
    cases = [
        # Template markers (PL004). An unterminated quote is a syntax error; 64 KiB of `{` nest
        # 32,768 flow mappings, which the depth guard refuses.
        HostileCase(
            "template-open-quote-2000-spaces",
            "review",
            _files({"t.yaml": _SPACES_2000.encode()}),
            (Expect("t.yaml", "PL001", 1),),
        ),
        HostileCase(
            "template-3000-spaces-then-marker",
            "review",
            _files({"t.yaml": _SPACES_3000_THEN_MARKER.encode()}),
            (Expect("t.yaml", "PL004", 2),),
        ),
        HostileCase(
            "template-64k-open-braces", "review", _files({"t.yaml": _BRACES_64K.encode()}), (Expect("t.yaml", "PL007", 1),)
        ),
        HostileCase(
            "template-64k-quoted-braces-then-marker",
            "review",
            _files({"t.yaml": _BRACES_64K_QUOTED_THEN_MARKER.encode()}),
            (Expect("t.yaml", "PL004", 2),),
        ),
        # Alias amplification inside the node bound (PL007: expanded bytes and depth are bounded
        # like nodes). The policy is the second document, from line 5.
        HostileCase(
            "alias-bytes-amplification",
            "review",
            _files({"a.yaml": lambda: _alias_bytes().encode()}),
            (Expect("a.yaml", "PL007"),),
        ),
        HostileCase(
            "alias-non-scalar-keys", "review", _files({"a.yaml": lambda: _alias_key().encode()}), (Expect("a.yaml", "PL007"),)
        ),
        HostileCase("alias-depth-400", "review", _files({"a.yaml": _alias_depth(2).encode()}), (Expect("a.yaml", "PL007"),)),
        HostileCase("alias-depth-2000", "review", _files({"a.yaml": _alias_depth(10).encode()}), (Expect("a.yaml", "PL007"),)),
        # Volume (PL007: documents and nodes per file are bounded).
        HostileCase(
            "two-million-empty-documents",
            "review",
            _files({"docs.yaml": lambda: b"---\n{}\n" * 2_000_000}),
            (Expect("docs.yaml", "PL007"),),
            large=True,
        ),
        HostileCase(
            "flow-list-8mb",
            "review",
            _files({"list.yaml": lambda: b"a: [" + b"1," * 4_000_000 + b"1]\n"}),
            (Expect("list.yaml", "PL007", 1),),
            large=True,
        ),
    ]
    # Integers too long to print, in otherwise valid objects that rules format (PL001, as the
    # suite's 10,000-digit decimal is): at every port.
    for form, value in _HUGE_INTEGERS.items():
        cases.append(
            HostileCase(
                f"integer-{form}",
                "review",
                _files({"n.yaml": _numbers(value)}),
                tuple(Expect("n.yaml", "PL001", line) for line in _PORT_LINES),
            )
        )
    # `0o17` is YAML 1.2; YAML 1.1, which Kubernetes' decoder and PyYAML resolve, reads it as a
    # string: a port of the wrong type, which the API server rejects (an input rule, PL0xx, error).
    cases.append(
        HostileCase(
            "integer-octal-yaml-1.2",
            "review",
            _files({"n.yaml": _numbers("0o" + "7" * 6000)}),
            tuple(Expect("n.yaml", "PL0", line, "error") for line in _PORT_LINES[:2]),
        )
    )
    # Floats out of range and of absurd precision: no expectation but robustness.
    floats = b"---\n".join(
        _numbers(value, weight).replace(b"numbers", name.encode())
        for name, value, weight in [
            ("big", "1e999999", ".nan"),
            ("inf", ".inf", "-.inf"),
            ("long", "0." + "3" * 5000, "1" + "0" * 400 + ".5"),
        ]
    )
    cases.append(HostileCase("float-forms", "review", _files({"n.yaml": floats})))
    cases += [
        # YAML 1.2 allows a byte order mark at the start of any document: the Service after it
        # must be read, so that the policy's target resolves and the file has no finding.
        HostileCase(
            "bom-at-the-second-document",
            "review",
            _files({"bom.yaml": _BOM_SECOND_DOCUMENT.encode()}),
            clean=("bom.yaml",),
            accepted=("app/bom-tls",),
        ),
        HostileCase(
            "merge-key-not-a-mapping",
            "review",
            _files({"m.yaml": _MERGES.encode()}),
            tuple(Expect("m.yaml", "PL001", _line_of(_MERGES, "<<:", i)) for i in (1, 2, 3)),
        ),
        HostileCase(
            "non-string-keys",
            "review",
            _files({"k.yaml": _NON_STRING_KEYS.encode()}),
            tuple(Expect("k.yaml", "PL0", _line_of(_NON_STRING_KEYS, needle)) for needle in ("? [a]", "? {a: 1}", "{[1, 2]: x}")),
        ),
        HostileCase(
            "kind-is-a-number",
            "review",
            _files({"k.yaml": b"apiVersion: v1\nkind: 12\nmetadata: {name: kind-number, namespace: app}\n"}),
            (Expect("k.yaml", "PL003", message="string"),),
        ),
        HostileCase(
            "apiversion-is-a-number",
            "review",
            _files({"k.yaml": b"apiVersion: 1\nkind: Service\nmetadata: {name: api-number, namespace: app}\n"}),
            (Expect("k.yaml", "PL003", message="string"),),
        ),
        # Malformed core objects: the API server's schema validation rejects them, an input rule
        # (PL0xx) reports an error at the field.
        HostileCase(
            "parentrefs-is-a-mapping",
            "review",
            _files({"r.yaml": _PARENT_REFS_MAPPING.encode()}),
            (Expect("r.yaml", "PL0", _line_of(_PARENT_REFS_MAPPING, "parentRefs"), "error"),),
        ),
        HostileCase(
            "route-rules-is-a-number",
            "review",
            _files({"r.yaml": _RULES_NUMBER.encode()}),
            (Expect("r.yaml", "PL0", _line_of(_RULES_NUMBER, "rules: 5"), "error"),),
        ),
        HostileCase(
            "listener-port-is-a-word",
            "review",
            _files({"g.yaml": _LISTENER_PORT_WORD.encode()}),
            (Expect("g.yaml", "PL0", _line_of(_LISTENER_PORT_WORD, "eighty"), "error"),),
        ),
        # Registry hosts (Istio's Hostname backends): each host answered once, not per route.
        HostileCase(
            "hostname-backends-one-host-many-entries",
            "review",
            _files({"h.yaml": _host_entries, "r.yaml": _host_routes}),
            (Expect("r.yaml", "PL411", 5, "warning", "no ServiceEntry of the input declares host h.example"),),
            large=True,
        ),
        # Schema alternatives (allOf, anyOf, oneOf, not) that nest: each walks the value again, so
        # a CRD can ask for exponential work; a budget per object and a depth bound stop it.
        HostileCase(
            "crd-nested-schema-alternatives",
            "review",
            _files({"crd.yaml": _nested_alternatives, "b.yaml": _nested_alternatives_objects}),
            (Expect("b.yaml", "PL703", 5, "error", "spec.count is a string, where the schema takes an integer"),),
        ),
        # Duplicates in sets and map-keyed lists, and URLs for the CEL URL library, at size.
        HostileCase(
            "schema-duplicates-and-urls",
            "review",
            _files({"d.yaml": _duplicates_and_urls}),
            (Expect("d.yaml", "PL703", 6, None, "duplicates item [0]"),),
        ),
        # Output injection: the policy's target does not exist (PL201), and its name, namespace and
        # target name, or the file name, carry control sequences into every output.
        HostileCase(
            "control-characters-in-names",
            "review",
            _files({"i.yaml": _INJECTION.encode()}),
            (Expect("i.yaml", "PL201"),),
            text=True,
        ),
        HostileCase(
            "control-characters-in-file-name",
            "review",
            _files({_INJECTION_FILE_NAME: b"a: [1, 2\n"}),
            (Expect(_INJECTION_FILE_NAME, "PL001", 1),),
            text=True,
        ),
        # Special files: only regular files are read (PL008 for anything else).
        HostileCase("fifo", "review", _fifo, (Expect("pipe.yaml", "PL008", 1),)),
        HostileCase("symlink-to-dev-zero", "review", _symlink("zero.yaml", "/dev/zero"), (Expect("zero.yaml", "PL008", 1),)),
        HostileCase("symlink-to-dev-stdin", "review", _symlink("stdin.yaml", "/dev/stdin"), (Expect("stdin.yaml", "PL008", 1),)),
        HostileCase(
            "symlink-to-own-stdout", "review", _symlink("stdout.yaml", "/proc/self/fd/1"), (Expect("stdout.yaml", "PL008", 1),)
        ),
        HostileCase(
            "symlink-to-directory-outside", "review", _link_out_of_the_root, (Expect("linked", "PL008", 1),), absent=("linked",)
        ),
        HostileCase(
            "unreadable-subdirectory",
            "review",
            _unreadable_directory,
            (Expect("secret", "PL008", 1),),
            absent=("secret",),
            unreadable=("secret",),
        ),
        # A parse cache committed to the repository being linted: its entry says the broken file
        # parses to nothing; its entries directory links to someone else's files.
        HostileCase("forged-cache-entry", "review", _forged_cache_entry, (Expect("bad.yaml", "PL001", 4),), inside=True),
        HostileCase("cache-entries-symlink", "review", _cache_entries_symlink, (Expect("bad.yaml", "PL001", 4),), inside=True),
    ]
    return cases


# -- configuration-and-git: git ------------------------------------------------------------------
# File names, refs and ignore files of the repository under review against the git plumbing
# (policylint/input/git.py, policylint/input/tracked.py): names holding a newline or control
# characters in `diff BASE HEAD`, `check --staged` and `check --diff`, refs starting with `-`,
# and tracked files a `.gitignore` matches.

_GIT_CLEAN = b"apiVersion: gateway.networking.k8s.io/v1\nkind: GatewayClass\nmetadata:\n  name: eg\nspec:\n  controllerName: example.com/gw\n"
_GIT_BROKEN = b"apiVersion: v1\nkind: [\n"  # PL001 on line 2
# Control characters, a quote, a bidi override and a leading dash: each name is its own file.
_GIT_NAMES = ("tab\there.yaml", "cr\rhere.yaml", "esc\x1b[2Khere.yaml", 'q"uote.yaml', "bidi\u202eevil.yaml", "-dash.yaml")


def _repository(base: Mapping[str, bytes], head: Mapping[str, bytes], then: str) -> Builder:
    """A repository whose first commit (tagged `base`) holds `base`; `head` (with the good file)
    is then written over it and committed (`then` "commit"), staged ("stage") or left in the
    working tree ("none")."""

    def build(directory: Path, outside: Path) -> None:
        init(directory)
        for name, data in base.items():
            (directory / name).write_bytes(data)
        git(directory, "add", "-A")
        git(directory, "commit", "-q", "--allow-empty", "-m", "base")
        git(directory, "tag", "base")
        for name, data in {**head, GOOD_FILE: GOOD_TEXT.encode()}.items():
            (directory / name).write_bytes(data)
        if then != "none":
            git(directory, "add", "-A")
        if then == "commit":
            git(directory, "commit", "-q", "-m", "change")

    return build


# -- configuration and git ----------------------------------------------------------------------------
#
# What a repository's configuration names is hostile input too (README "Security", "What it reads").
# These cases run inside the case directory (`inside`), where the configuration is found. A
# configuration that would read, write or create something outside the repository, or that is
# itself too costly to read, is refused: exit 2 with a message, before any file is linted.

# A secret-like file outside the repository: no message may quote it.
_SECRET = "ghp_" + "0123456789abcdefghij" * 2
_REFUSED = "only the command line may name a path outside the repository"


def _secret(outside: Path) -> Path:
    path = outside / "token"
    path.write_text(_SECRET + "\n")
    return path


def _config(text: str | Callable[[Path, Path], str], name: str = ".policylint.yaml") -> Builder:
    """Writes the configuration `text` (or what `text(directory, outside)` returns)."""

    def build(directory: Path, outside: Path) -> None:
        (directory / name).write_text(text if isinstance(text, str) else text(directory, outside))

    return build


def _ignored_but_tracked(directory: Path, outside: Path) -> None:
    """Broken manifests force-added behind a `.gitignore` that matches them, good.yaml staged."""
    init(directory)
    (directory / ".gitignore").write_text("bad.yaml\nhidden/\n")
    git(directory, "add", ".gitignore")
    git(directory, "commit", "-q", "-m", "base")  # `--staged` compares with HEAD
    (directory / "hidden").mkdir()
    (directory / "bad.yaml").write_bytes(_GIT_BROKEN)
    (directory / "hidden" / "bad.yaml").write_bytes(_GIT_BROKEN)
    (directory / GOOD_FILE).write_text(GOOD_TEXT)
    git(directory, "add", "-f", "bad.yaml", "hidden/bad.yaml", GOOD_FILE)


def _git_cases() -> list[HostileCase]:
    # Each newline name, as a `REV:PATH` request line, asked for zz.yaml's clean base version,
    # which was then read as the broken zz.yaml.
    newline = "y\nbase:zz.yaml"
    clean_base = {"zz.yaml": _GIT_CLEAN}
    injected = {"zz.yaml": _GIT_BROKEN, newline: _GIT_CLEAN}
    names = dict.fromkeys(_GIT_NAMES, _GIT_BROKEN)
    name_expects = tuple(Expect(name, "PL001", 2) for name in _GIT_NAMES)
    zz = Expect("zz.yaml", "PL001", 2)
    dash = "starts with '-'"
    return [
        HostileCase(
            "git-newline-name-diff",
            "configuration-and-git",
            _repository(clean_base, injected, "commit"),
            (zz,),
            argv=("diff", "base", "HEAD"),
        ),
        HostileCase(
            "git-newline-name-staged",
            "configuration-and-git",
            _repository(clean_base, injected, "stage"),
            (zz,),
            argv=("check", "--staged", "."),
        ),
        HostileCase(
            "git-newline-name-check-diff",
            "configuration-and-git",
            _repository({**clean_base, newline: _GIT_CLEAN}, {"zz.yaml": _GIT_BROKEN, newline: _GIT_BROKEN}, "commit"),
            (zz, Expect(newline, "PL001", 2)),
            argv=("check", "--diff=base", "."),
        ),
        HostileCase(
            "git-control-names-diff",
            "configuration-and-git",
            _repository({}, names, "commit"),
            name_expects,
            argv=("diff", "base", "HEAD"),
        ),
        HostileCase(
            "git-control-names-staged",
            "configuration-and-git",
            _repository({}, names, "stage"),
            name_expects,
            argv=("check", "--staged", "."),
        ),
        HostileCase(
            "git-ref-dash-diff-value",
            "configuration-and-git",
            _repository(clean_base, {"zz.yaml": _GIT_BROKEN}, "none"),
            argv=("check", "--diff=--exit-zero", "."),
            exit_code=2,
            stderr=f"--diff: '--exit-zero' {dash}",
        ),
        HostileCase(
            "git-ref-dash-diff-output",
            "configuration-and-git",
            _repository(clean_base, {"zz.yaml": _GIT_BROKEN}, "none"),
            argv=("check", "--diff=--output=json=report.json", "."),
            exit_code=2,
            stderr=dash,
        ),
        HostileCase(
            "git-ref-dash-diff-base",
            "configuration-and-git",
            _repository(clean_base, {"zz.yaml": _GIT_BROKEN}, "commit"),
            argv=("diff", "--", "--output=x", "HEAD"),
            exit_code=2,
            stderr=f"base '--output=x' {dash}",
        ),
        HostileCase(
            "git-ref-dash-diff-head",
            "configuration-and-git",
            _repository(clean_base, {"zz.yaml": _GIT_BROKEN}, "commit"),
            argv=("diff", "--", "base", "-x"),
            exit_code=2,
            stderr=f"head '-x' {dash}",
        ),
        HostileCase(
            "git-ignored-tracked-files",
            "configuration-and-git",
            _ignored_but_tracked,
            (Expect("bad.yaml", "PL001", 2), Expect("hidden/bad.yaml", "PL001", 2)),
            argv=("check", "."),
        ),
        HostileCase(
            "git-ignored-tracked-files-staged",
            "configuration-and-git",
            _ignored_but_tracked,
            (Expect("bad.yaml", "PL001", 2), Expect("hidden/bad.yaml", "PL001", 2)),
            argv=("check", "--staged", "."),
        ),
        # A `.gitignore` that is a FIFO once hung the run (opened blocking, waiting for a writer);
        # one that is a symlink is not followed, as git does not follow it in the work tree.
        HostileCase(
            "git-ignore-file-fifo",
            "configuration-and-git",
            _ignore_file(lambda d, o: os.mkfifo(d / ".gitignore")),
            (Expect("bad.yaml", "PL001", 2),),
            argv=("check", "."),
        ),
        HostileCase(
            "git-ignore-file-symlink-out",
            "configuration-and-git",
            _ignore_file(lambda d, o: ((o / "patterns").write_text("bad.yaml\n"), os.symlink(o / "patterns", d / ".gitignore"))),
            (Expect("bad.yaml", "PL001", 2),),
            argv=("check", "."),
        ),
    ]


def _ignore_file(make: Builder) -> Builder:
    """A repository whose `.gitignore` `make` writes, with an untracked broken bad.yaml."""

    def build(directory: Path, outside: Path) -> None:
        init(directory)
        (directory / "bad.yaml").write_bytes(_GIT_BROKEN)
        make(directory, outside)

    return build


def _then(*builders: Builder) -> Builder:
    def build(directory: Path, outside: Path) -> None:
        for builder in builders:
            builder(directory, outside)

    return build


def _config_alias_bomb() -> str:
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    lines += [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 10)}]" for i in range(1, 9)]
    return "\n".join([*lines, "paths: *a8", ""])


def _config_case(case_id: str, build: Builder, stderr: str) -> HostileCase:
    return HostileCase(f"config-{case_id}", "review", build, inside=True, exit_code=2, stderr=stderr, stderr_absent=(_SECRET,))


def _relative_to_case(target: Path, directory: Path) -> str:
    return os.path.relpath(target, directory)


def _configuration_cases() -> list[HostileCase]:
    def fifo(name: str) -> Builder:
        return lambda directory, outside: os.mkfifo(directory / name)

    def link_to_secret(name: str) -> Builder:
        return lambda directory, outside: os.symlink(_secret(outside), directory / name)

    def victim(directory: Path, outside: Path) -> None:
        (outside / "victim.json").write_text("someone else's file\n")
        (outside / "empty").mkdir()

    return [
        _config_case("alias-bomb", _config(_config_alias_bomb()), "YAML aliases expand this file"),
        _config_case(
            "deep-pyproject",
            _config("[tool.policylint]\npaths = " + "[" * 5000 + "]" * 5000 + "\n", "pyproject.toml"),
            "nested too deeply",
        ),
        _config_case("profile-dev-zero", _config("profile: [/dev/zero]\n"), _REFUSED),
        _config_case("baseline-dev-zero", _config("baseline: /dev/zero\n"), _REFUSED),
        _config_case("profile-fifo", _then(fifo("profile-pipe"), _config("profile: [profile-pipe]\n")), "a FIFO"),
        _config_case("baseline-fifo", _then(fifo("baseline-pipe"), _config("baseline: baseline-pipe\n")), "a FIFO"),
        _config_case("baseline-own-stdout", _config("baseline: /proc/self/fd/1\n"), _REFUSED),
        _config_case(
            "profile-link-to-own-stdout",
            _then(_symlink("stdout-link", "/proc/self/fd/1"), _config("profile: [stdout-link]\n")),
            _REFUSED,
        ),
        _config_case(
            "profile-secret-absolute", _config(lambda directory, outside: f"profile: ['{_secret(outside)}']\n"), _REFUSED
        ),
        _config_case("profile-symlink-out", _then(link_to_secret("token-link"), _config("profile: [token-link]\n")), "symlink"),
        _config_case("baseline-symlink-out", _then(link_to_secret("token-link"), _config("baseline: token-link\n")), "symlink"),
        _config_case(
            "output-parent",
            _then(
                victim,
                _config(lambda d, o: f"output: ['json={_relative_to_case(o / 'victim.json', d)}']\n"),
            ),
            _REFUSED,
        ),
        _config_case(
            "output-through-symlinked-dir",
            _then(victim, lambda d, o: os.symlink(o, d / "reports"), _config("output: ['json=reports/victim.json']\n")),
            "symlink",
        ),
        _config_case(
            "cache-dir-outside",
            _then(victim, _config(lambda d, o: f"cache-dir: {_relative_to_case(o / 'empty', d)}\n")),
            _REFUSED,
        ),
        _config_case("file-symlink-out", link_to_secret(".policylint.yaml"), "leads through a symlink out"),
    ]


# -- configuration and git: suppressions --------------------------------------------------------------


def _ledger_policy(service: str, ignore: str = "") -> bytes:
    """A BackendTLSPolicy app/ledger-tls whose target Service `service` does not exist (PL201 at
    the reference's `name` on line 10, or 12 with the annotation; metadata.name on line 4)."""
    annotations = f'\n  annotations:\n    policylint.io/ignore: "{ignore} -- reviewed"' if ignore else ""
    return (
        "apiVersion: gateway.networking.k8s.io/v1\nkind: BackendTLSPolicy\nmetadata:\n  name: ledger-tls\n"
        f'  namespace: app{annotations}\nspec:\n  targetRefs:\n  - group: ""\n    kind: Service\n    name: {service}\n'
        '  validation:\n    hostname: "ledger.app.svc.cluster.local"\n    wellKnownCACertificates: System\n'
    ).encode()


def _suppression_scope_cases() -> list[HostileCase]:
    """A suppression applies to the document that carries it: a copy of an object with an ignore
    annotation hides neither the findings on the other copy nor the duplicate (PL005) itself."""
    return [
        # The copy added later replaces the reviewed one and tries to silence the warning.
        HostileCase(
            "duplicate-object-annotated-copy",
            "configuration-and-git",
            _files({"a.yaml": _ledger_policy("ledger"), "b.yaml": _ledger_policy("other", "PL005,PL2")}),
            (Expect("b.yaml", "PL005", 4, "error"), Expect("a.yaml", "PL201", 10, "error")),
        ),
        # The first copy carries the annotation: it hides nothing on the later one.
        HostileCase(
            "duplicate-object-annotated-original",
            "configuration-and-git",
            _files({"a.yaml": _ledger_policy("ledger", "PL005,PL2"), "b.yaml": _ledger_policy("other")}),
            (Expect("b.yaml", "PL005", 4, "error"), Expect("b.yaml", "PL201", 10, "error")),
        ),
    ]


# -- configuration and git: the gate ----------------------------------------------------------------
# The configurations that each switch the gate off: the summary must say so, with file and line.
_GATE_SWITCHES = {
    "severity-off": ("severity: {PL: off}", "rules off by .policylint.yaml:2"),
    "ignore-all": ("ignore: [PL]", "rules ignored by .policylint.yaml:2"),
    "select-one": ("select: [PL003]", "rules not selected by .policylint.yaml:2"),
    "external-everything": ('external: ["*"]', "references to * not checked by .policylint.yaml:2"),
    "per-file-ignore-all": ('per-file: {"*": {ignore: [PL]}}', "rules ignored in files matching '*' by .policylint.yaml:2"),
}


def _gate_cases() -> list[HostileCase]:
    """The repository's own configuration turning the gate off: allowed, never silent."""
    return [
        HostileCase(
            f"gate-{name}",
            "configuration-and-git",
            _files({".policylint.yaml": f"# the change under review\n{setting}\n".encode()}),
            inside=True,
            gate=(said,),
        )
        for name, (setting, said) in _GATE_SWITCHES.items()
    ]


# -- configuration and git: CRDs with costly CEL -----------------------


# A CRD in the repository is the attacker's too: its CEL rules run on the objects of its kind.
# Nothing in its schema bounds them (no maxItems, no maxLength), and each rule, run on an object
# built to make it costly, stops at the API server's per-call cost limit (PL704 names the rule)
# instead of running for minutes; the CRD itself is one the API server refuses for its rules'
# estimated cost (PL708). Each Bomb selects
# one rule (`which`): the first cancelled rule ends an object's validation.
_COSTLY_RULES = {
    # 3,000 x 3,000 regex matches over a 1 MB string: ran past 300 s.
    "quadratic": "self.items.all(x, self.items.all(y, self.s.matches('^a*$')))",
    "cubic": "self.items.all(a, self.items.all(b, self.items.all(c, a.size() + b.size() + c.size() > 0)))",
    "concatenation": "self.items.all(x, (self.s + self.s + self.s + self.s + self.s + self.s).size() > 0)",
    "split-join": "self.items.all(x, self.s.split('').join(self.s).size() > 0)",
    "replace": "self.items.all(x, self.s.replace('a', self.s, 3).size() > 0)",
    "deep-equality": "self.items.all(x, self.nested == self.nested)",
}
# A rule that fails, whose message is built at quadratic cost.
_COSTLY_MESSAGE = "self.items.map(x, self.items.map(y, self.s).join(',')).join(',')"


def _costly_crd() -> bytes:
    lines = [f"- rule: {json.dumps(f'self.which != {key!r} || ({rule})')}" for key, rule in _COSTLY_RULES.items()]
    lines += ["- rule: \"self.which != 'message'\"", f"  messageExpression: {json.dumps(_COSTLY_MESSAGE)}"]
    return (
        "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: bombs.cost.example.com}\n"
        "spec:\n  group: cost.example.com\n  scope: Namespaced\n"
        "  names: {plural: bombs, singular: bomb, kind: Bomb, listKind: BombList}\n"
        "  versions:\n  - name: v1\n    served: true\n    storage: true\n    schema:\n      openAPIV3Schema:\n"
        "        type: object\n        properties:\n          spec:\n            type: object\n"
        "            properties:\n"
        "              which: {type: string}\n"
        "              items: {type: array, items: {type: string}}\n"
        "              s: {type: string}\n"
        "              nested: {type: array, items: {type: array, items: {type: array, items: {type: integer}}}}\n"
        "            x-kubernetes-validations:\n" + "".join(f"            {line}\n" for line in lines)
    ).encode()


def _costly_object(which: str) -> Callable[[], bytes]:
    # The 1 MB string for the quadratic rule; 100 KB is as costly to the others.
    size = 1_000_000 if which == "quadratic" else 100_000

    def build() -> bytes:
        items = ", ".join(f"i{i}" for i in range(3_000))
        row = "[" + ", ".join(["1"] * 100) + "]"
        nested = "[" + ", ".join(["[" + ", ".join([row] * 10) + "]"] * 10) + "]"
        return (
            f"apiVersion: cost.example.com/v1\nkind: Bomb\nmetadata: {{name: {which}, namespace: app}}\n"
            f"spec:\n  which: {which}\n  items: [{items}]\n  nested: {nested}\n  s: {'a' * size}\n"
        ).encode()

    return build


def _cel_cost_cases() -> list[HostileCase]:
    which = [*_COSTLY_RULES, "message"]
    files: dict[str, bytes | Callable[[], bytes]] = {"crd.yaml": _costly_crd()}
    files.update({f"{key}.yaml": _costly_object(key) for key in which})
    return [
        HostileCase(
            "crd-with-costly-cel-rules",
            "configuration-and-git",
            _files(files),
            (
                *(Expect(f"{key}.yaml", "PL704", message="call cost exceeds limit for") for key in which),
                # The API server would refuse the CRD itself: nothing bounds what its rules read.
                Expect("crd.yaml", "PL708", severity="error", message="estimated rule cost exceeds budget"),
                Expect("crd.yaml", "PL708", severity="error", message="estimated messageExpression cost exceeds budget"),
                Expect("crd.yaml", "PL708", severity="error", message="cost total for entire OpenAPIv3 schema"),
            ),
            large=True,
        ),
    ]


def all_cases() -> list[HostileCase]:
    cases = (
        _suite_cases()
        + _review_cases()
        + _git_cases()
        + _configuration_cases()
        + _suppression_scope_cases()
        + _gate_cases()
        + _cel_cost_cases()
    )
    ids = [c.id for c in cases]
    assert len(ids) == len(set(ids)), "case ids must be unique"
    return cases


# -- building ----------------------------------------------------------------------------------------


@dataclass
class BuiltCase:
    case: HostileCase
    directory: Path
    outside: Path
    error: str | None = None  # why the case could not be built
    hostile_bytes: int = 0


def build_corpus(root: Path, cases: Iterable[HostileCase]) -> list[BuiltCase]:
    """One directory per case under `root/cases`, each with its own directory under `root/outside`."""
    built = []
    for index, case in enumerate(cases):
        directory = root / "cases" / f"{index:03d}-{case.id}"
        outside = root / "outside" / f"{index:03d}-{case.id}"
        directory.mkdir(parents=True)
        outside.mkdir(parents=True)
        item = BuiltCase(case, directory, outside)
        try:
            case.build(directory, outside)
        except Exception as exc:  # reported as a failure of this case; the others still run
            item.error = f"could not build the case: {type(exc).__name__}: {exc}"
        (directory / GOOD_FILE).write_text(GOOD_TEXT)
        item.hostile_bytes = sum(
            st.st_size for st in (p.lstat() for p in directory.iterdir() if p.name != GOOD_FILE) if stat.S_ISREG(st.st_mode)
        )
        if item.error is None and case.large != (item.hostile_bytes >= LARGE_BYTES):
            item.error = f"the case's `large` flag is wrong: {item.hostile_bytes:,} bytes of hostile files"
        built.append(item)
    return built


def release_corpus(built: Iterable[BuiltCase]) -> None:
    """Give unreadable directories their permissions back, so that the corpus can be deleted."""
    for item in built:
        for name in item.case.unreadable:
            path = item.directory / name
            if path.is_dir() and not path.is_symlink():
                path.chmod(0o700)


def snapshot(directory: Path) -> dict[str, tuple[int, int, int]]:
    """Every entry below `directory` (links not followed, unlistable directories skipped):
    relative path -> (mode, size, mtime)."""
    out: dict[str, tuple[int, int, int]] = {}
    for dirpath, dirnames, filenames in os.walk(directory):
        for name in dirnames + filenames:
            path = os.path.join(dirpath, name)
            try:
                st = os.lstat(path)
            except OSError:
                continue
            out[os.path.relpath(path, directory)] = (st.st_mode, st.st_size, st.st_mtime_ns)
    return out


def _diff(before: Mapping[str, tuple[int, int, int]], after: Mapping[str, tuple[int, int, int]]) -> str | None:
    added = sorted(set(after) - set(before))
    removed = sorted(set(before) - set(after))
    changed = sorted(k for k in set(before) & set(after) if before[k] != after[k])
    if not (added or removed or changed):
        return None
    parts = []
    for label, names in (("added", added), ("removed", removed), ("changed", changed)):
        if names:
            parts.append(f"{len(names)} {label} ({', '.join(repr(n) for n in names[:3])}{', ...' if len(names) > 3 else ''})")
    return "; ".join(parts)


# -- running -----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Mode:
    name: str
    args: tuple[str, ...]
    text: bool = False  # --format text (the injection checks) instead of json
    cache: bool = False  # the default cache, in this run's own cache home


NO_CACHE = Mode("no-cache", ("--no-cache",))
JOBS_2 = Mode("jobs-2", ("--no-cache", "--jobs", "2"))
CACHE_COLD = Mode("cache-cold", (), cache=True)
CACHE_WARM = Mode("cache-warm", (), cache=True)  # run after CACHE_COLD with the same cache home
TEXT = Mode("text", ("--no-cache", "--color", "never"), text=True)


def modes_for(case: HostileCase, *, cache: bool) -> list[Mode]:
    """The runs a case gets: always without cache; `--jobs 2` when it is big enough for workers;
    with the default cache (cold, then warm) when `cache` or when the case plants one; as text
    when it carries control characters."""
    modes = [NO_CACHE]
    if case.large:
        modes.append(JOBS_2)
    if cache or case.inside:
        modes += [CACHE_COLD, CACHE_WARM]
    if case.text:
        modes.append(TEXT)
    return modes


@dataclass
class Run:
    case: str
    mode: str
    exit_code: int | None  # None: killed at the timeout
    seconds: float
    cpu_seconds: float | None  # None when killed
    peak_rss: int  # bytes: the largest ru_maxrss of the process and its reaped children
    stdout_bytes: int
    stdout: bytes
    stderr: str
    display_root: str  # how the case directory is named in the report
    cwd: Path
    leftover_processes: bool = False
    killed: bool = False  # still running at the timeout
    changes: list[str] = field(default_factory=list)  # what the run changed in and around the case
    report: dict[str, Any] | None = None
    report_error: str | None = None

    @property
    def timed_out(self) -> bool:
        return self.killed

    @property
    def crashed(self) -> bool:
        return any(marker in self.stderr for marker in CRASH_MARKERS)

    def digest(self) -> str | None:
        if self.report is None:
            return None
        return hashlib.sha256(json.dumps(self.report, sort_keys=True).encode()).hexdigest()


# Run instead of `-m policylint` for unreadable directories as root: listing them is refused the way
# the kernel refuses it to other users. Nothing else changes.
_DENY_LISTING = """\
import os, runpy, sys

_denied = {os.path.realpath(p) for p in os.environ["HOSTILE_DENY_DIRS"].split(os.pathsep)}
_scandir, _listdir = os.scandir, os.listdir


def _check(path):
    try:
        if isinstance(path, int):
            path = os.readlink(f"/proc/self/fd/{path}")
        real = os.path.realpath(os.fsdecode(os.fspath(path)))
    except (OSError, TypeError, ValueError):
        return
    if real in _denied:
        raise PermissionError(13, "Permission denied", path)


# `*args`: Python 3.10's pathlib keeps `os.scandir` as a class attribute of its accessor, where a
# Python function (unlike the built-in) binds as a method and gets the accessor first.
def scandir(*args):
    path = args[-1] if args else "."
    _check(path)
    return _scandir(path)


def listdir(*args):
    path = args[-1] if args else "."
    _check(path)
    return _listdir(path)


os.scandir, os.listdir = scandir, listdir
sys.argv[0] = "policylint"
runpy.run_module("policylint", run_name="__main__", alter_sys=True)
"""


class _Drain(threading.Thread):
    """Reads a pipe to its end, keeping at most `keep` bytes and counting the rest."""

    def __init__(self, stream: Any, keep: int) -> None:
        super().__init__(daemon=True)
        self.stream = stream
        self.keep = keep
        self.chunks: list[bytes] = []
        self.kept = 0
        self.total = 0

    def run(self) -> None:
        while True:
            chunk = self.stream.read1(1024 * 1024)
            if not chunk:
                break
            self.total += len(chunk)
            if self.kept < self.keep:
                part = chunk[: self.keep - self.kept]
                self.chunks.append(part)
                self.kept += len(part)

    def data(self) -> bytes:
        return b"".join(self.chunks)


# The measured command is started by this small launcher, not by the test process: on Linux the
# ru_maxrss of a process includes the memory of the process it was forked from, up to its exec,
# so a command forked from a big test runner would report the runner's size. The launcher (a
# bare interpreter, a few MB) sets the address-space ceiling, spawns the command, waits for it
# and writes its wait status, its ru_maxrss (the largest of the command and its reaped worker
# processes), its wall time and its CPU time (user + system, workers included) to the file named
# first. CPU time barely moves with the machine's load, wall time does: the two tell a loaded
# machine from slow code.
_LAUNCHER = """\
import os, resource, sys, time

report, ceiling, argv = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
try:
    resource.setrlimit(resource.RLIMIT_AS, (ceiling, ceiling))
except (ValueError, OSError):
    pass
start = time.monotonic()
pid = os.posix_spawn(argv[0], argv, os.environ)
_, status, usage = os.wait4(pid, 0)
seconds = time.monotonic() - start
with open(report + ".tmp", "w") as fh:
    fh.write(f"{status} {usage.ru_maxrss} {seconds!r} {usage.ru_utime + usage.ru_stime!r}")
os.replace(report + ".tmp", report)
"""


def _kill_group(pgid: int) -> None:
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _group_peak_rss(pgid: int) -> int:
    """Largest VmHWM (bytes) of the live processes of a process group (Linux; 0 elsewhere): what a
    run killed at the timeout had used so far."""
    peak = 0
    try:
        pids = [name for name in os.listdir("/proc") if name.isdigit()]
    except OSError:
        return 0
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat", "rb") as fh:
                fields = fh.read().rsplit(b")", 1)[1].split()
            if int(fields[2]) != pgid:  # the fields after `(comm)`: state, ppid, pgrp, ...
                continue
            with open(f"/proc/{pid}/status", "rb") as fh:
                for line in fh:
                    if line.startswith(b"VmHWM:"):
                        peak = max(peak, int(line.split()[1]) * 1024)
        except (OSError, ValueError, IndexError):
            continue
    return peak


def run_case(item: BuiltCase, mode: Mode, scratch: Path, *, timeout: float, environ: Mapping[str, str] | None = None) -> Run:
    """Lint `item` once in a subprocess. `scratch` holds the run's home, cache home and working
    directory; runs that share it (CACHE_COLD then CACHE_WARM) share the cache. `environ`: the
    environment to start from, for a caller in another thread than pytest's: pytest sets and
    deletes PYTEST_CURRENT_TEST in `os.environ` as tests start and end, and going through it
    meanwhile raises KeyError."""
    home, cache_home, cwd = scratch / "home", scratch / "cache", scratch / "cwd"
    for path in (home, cache_home, cwd):
        path.mkdir(parents=True, exist_ok=True)
    source = os.environ if environ is None else environ
    env = {k: v for k, v in source.items() if not k.startswith("POLICYLINT_")}
    # Nothing reaches the real home or cache; the checkout is importable without an install.
    env.update(NO_COLOR="1", HOME=str(home), XDG_CACHE_HOME=str(cache_home))
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), source.get("PYTHONPATH", "")) if p)
    if item.case.inside or item.case.argv:
        cwd, target = item.directory, "."
    else:
        target = str(item.directory)
    command = [sys.executable, "-m", "policylint"]
    if item.case.unreadable and os.geteuid() == 0:
        command = [sys.executable, "-c", _DENY_LISTING]
        env["HOSTILE_DENY_DIRS"] = os.pathsep.join(str(item.directory / d) for d in item.case.unreadable)
    name, *rest = item.case.argv or ("check", target)
    # `diff` has neither --no-cache nor --jobs; its cache is the run's own cache home.
    command += [name, "--format", "text" if mode.text else "json", *(mode.args if name == "check" else ()), *rest]
    measured = scratch / f"{mode.name}.rusage"
    if measured.exists():
        measured.unlink()

    tree, around = snapshot(item.directory), snapshot(item.outside)
    start = time.monotonic()
    # -I -S: the launcher neither reads the environment nor imports site; the command does both.
    proc = subprocess.Popen(
        [sys.executable, "-I", "-S", "-c", _LAUNCHER, str(measured), str(ADDRESS_SPACE_CEILING), *command],
        cwd=cwd,
        env=env,
        stdin=subprocess.PIPE,  # open and never written: a read of standard input blocks
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,  # one process group for the launcher, the command and its workers
    )
    out = _Drain(proc.stdout, STDOUT_KEPT)
    err = _Drain(proc.stderr, STDERR_KEPT)
    out.start()
    err.start()
    killed, killed_peak = False, 0
    try:
        proc.wait(timeout)
    except subprocess.TimeoutExpired:
        killed, killed_peak = True, _group_peak_rss(proc.pid)
        _kill_group(proc.pid)
        proc.wait()
    wall = time.monotonic() - start
    # Processes of the session still holding the pipes (workers left behind) are killed by the
    # session's process group id, which stays theirs while they live.
    out.join(2)
    err.join(2)
    leftover = out.is_alive() or err.is_alive()
    if leftover:
        _kill_group(proc.pid)
        out.join()
        err.join()
    for stream in (proc.stdin, proc.stdout, proc.stderr):
        if stream is not None:
            stream.close()

    exit_code: int | None = None
    seconds, peak, cpu = wall, killed_peak, None
    try:
        status, maxrss, elapsed, used = measured.read_text().split()
    except (OSError, ValueError):
        pass  # killed at the timeout (or the launcher failed): no measurement
    else:
        exit_code = os.waitstatus_to_exitcode(int(status))
        seconds, cpu = float(elapsed), float(used)
        # ru_maxrss is in KiB on Linux, in bytes on macOS.
        peak = int(maxrss) if sys.platform == "darwin" else int(maxrss) * 1024
    run = Run(
        case=item.case.id,
        mode=mode.name,
        exit_code=exit_code,
        seconds=seconds,
        cpu_seconds=cpu,
        peak_rss=peak,
        stdout_bytes=out.total,
        stdout=out.data(),
        stderr=err.data().decode("utf-8", errors="replace"),
        display_root=target,
        cwd=cwd,
        leftover_processes=leftover,
        killed=killed,
    )
    change = _diff(tree, snapshot(item.directory))
    if change:
        run.changes.append(f"the linted tree changed: {change}")
    change = _diff(around, snapshot(item.outside))
    if change:
        run.changes.append(f"files outside the linted tree changed: {change}")
    if not mode.text and exit_code is not None and item.case.exit_code in (None, 0, 1):
        if out.total > out.kept:
            run.report_error = f"report of {out.total:,} bytes not parsed"
        else:
            try:
                run.report = json.loads(run.stdout)
            except ValueError as exc:
                run.report_error = f"stdout is not a JSON document: {exc}"
            else:
                if name == "diff":
                    run.report, run.report_error = _diff_view(run.report)
    return run


def _diff_view(report: dict[str, Any]) -> tuple[dict[str, Any] | None, str | None]:
    """A `diff` report (schemas/diff.schema.json) as the checks read a `check` report: the
    findings the change introduces, and the policies it adds or changes with their status after."""
    from tests.scope.test_diff_command import validator

    errors = [e.message for e in validator().iter_errors(report)]
    if errors:
        return None, f"the diff report does not match schemas/diff.schema.json: {errors[0][:200]}"
    policies = []
    for change in report["policies"]:
        namespace, _, name = change["policy"].partition(" ")[2].rpartition("/")
        targets = [{"accepted": t["accepted"]} for t in change["statusAfter"] or ()]
        policies.append({"object": {"namespace": namespace, "name": name}, "targets": targets})
    return {DIFF_VIEW: True, "findings": report["findings"]["introduced"], "policies": policies}, None


# -- checking ----------------------------------------------------------------------------------------


def _relative(item: BuiltCase, run: Run, file: str) -> str:
    """A reported file name relative to the case directory ('..' when outside it)."""
    return os.path.relpath(os.path.normpath(os.path.join(run.cwd, file)), item.directory)


def _line_count(path: Path) -> int | None:
    try:
        st = path.lstat()
    except OSError:
        return None
    if not stat.S_ISREG(st.st_mode):
        return None
    data = path.read_bytes()
    return max(1, data.count(b"\n") + (0 if data.endswith(b"\n") else 1))


def over_budget(run: Run, *, seconds: float, rss: int) -> list[str]:
    problems = []
    if run.timed_out:
        problems.append(f"killed after {run.seconds:.1f} s")
    elif run.seconds > seconds:
        problems.append(f"took {run.seconds:.2f} s (budget {seconds:g} s)")
    if run.peak_rss > rss:
        problems.append(f"peak RSS {run.peak_rss / 1e6:.0f} MB (budget {rss / 1e6:.0f} MB)")
    return problems


def problems(item: BuiltCase, run: Run) -> list[str]:
    """What must hold for every case whatever the budget: a clean exit, a report, the good file
    linted, located findings, nothing written into the tree or changed outside it."""
    out: list[str] = []
    if item.error:
        out.append(item.error)
    if run.exit_code is None and not run.killed:
        out.append(f"the launcher measured nothing: {run.stderr[-300:]!r}")
    if item.case.exit_code == 2 and run.stdout_bytes:
        out.append(f"a refused run wrote a report ({run.stdout_bytes:,} bytes)")
    allowed = (0, 1) if item.case.exit_code is None else (item.case.exit_code,)
    if run.exit_code is not None and run.exit_code not in allowed:
        first = next((line for line in run.stderr.splitlines() if line.strip()), "")
        out.append(f"exit code {run.exit_code}" + (f": {first[:200]}" if first else ""))
    out += _stderr_problems(item.case, run)
    if run.crashed:
        marker = next(m for m in CRASH_MARKERS if m in run.stderr)
        out.append(f"{marker!r} on stderr: ...{run.stderr[-300:]!r}")
    if run.leftover_processes:
        out.append("processes outlived the command")
    out += run.changes
    if run.timed_out or item.case.exit_code not in (None, 0, 1):
        return out  # a refused run writes no report
    if run.report_error:
        out.append(run.report_error)
    if run.report is not None:
        out += _report_problems(item, run, run.report)
    return out


def _stderr_problems(case: HostileCase, run: Run) -> list[str]:
    out = []
    if case.stderr is not None and not run.timed_out and case.stderr not in run.stderr:
        out.append(f"expected {case.stderr!r} on stderr; got {run.stderr[-300:]!r}")
    for text in case.stderr_absent:
        if text in run.stderr or text.encode() in run.stdout:
            out.append(f"{text[:40]!r} from outside the case was printed")
    return out


def _report_problems(item: BuiltCase, run: Run, report: dict[str, Any]) -> list[str]:
    from tests.lintutil import assert_valid_report

    out: list[str] = []
    try:
        if not report.get(DIFF_VIEW):  # a `diff` report was checked against its schema already
            assert_valid_report(report)
    except AssertionError as exc:
        out.append(str(exc)[:300])
    try:
        out += _finding_problems(item, run, report)
    except (KeyError, TypeError, AttributeError) as exc:  # a shape the schema check has named already
        out.append(f"the report cannot be read: {type(exc).__name__}: {exc}")
    return out


def _finding_problems(item: BuiltCase, run: Run, report: dict[str, Any]) -> list[str]:
    out: list[str] = []
    lines: dict[str, int | None] = {}
    # Problems of one kind are counted and shown once: 20 rules failing alike are one problem.
    kinds: dict[str, list[str]] = {}
    for finding in report["findings"]:
        rule = finding["rule"]
        if rule == "PL000":
            kinds.setdefault("internal errors (PL000)", []).append(finding["message"])
        for where in [finding, *finding.get("related", [])]:
            rel = _relative(item, run, where["file"])
            if rel.startswith(".."):
                kinds.setdefault("findings naming a file outside the case", []).append(f"{rule} {where['file']!r}")
            if where["line"] < 1 or where["column"] < 1:
                kinds.setdefault("unlocated findings", []).append(f"{rule} {where['file']!r}:{where['line']}:{where['column']}")
            if rel not in lines:
                lines[rel] = _line_count(item.directory / rel)
            limit = lines[rel]
            if limit is not None and where["line"] > limit:
                kinds.setdefault("findings past the end of their file", []).append(
                    f"{rule} at line {where['line']} of {rel!r} ({limit} lines)"
                )
        if _relative(item, run, finding["file"]) == GOOD_FILE:
            kinds.setdefault("findings on the good file", []).append(f"{rule} {finding['message']}")
    for kind, examples in kinds.items():
        out.append(f"{len(examples)} {kind}, e.g. {examples[0][:200]}")
    policy = _policy(report, GOOD_POLICY)
    if policy is None:
        out.append(f"the good file was not linted: policy {GOOD_POLICY} is not in the report")
    elif not _all_accepted(policy):
        out.append(f"the good file was not linted: policy {GOOD_POLICY}'s target did not resolve")
    return out


def _policy(report: Mapping[str, Any], key: str) -> dict[str, Any] | None:
    namespace, name = key.split("/")
    for policy in report.get("policies", []):
        if policy["object"].get("namespace") == namespace and policy["object"].get("name") == name:
            return policy  # type: ignore[no-any-return]
    return None


def _all_accepted(policy: Mapping[str, Any]) -> bool:
    return bool(policy["targets"]) and all(t["accepted"] == "Accepted" for t in policy["targets"])


def unmet(item: BuiltCase, run: Run) -> list[str]:
    """The case's expectations (rules at lines, clean files, resolved policies, files not read)
    that the run's report does not meet."""
    case = item.case
    if run.report is None:
        return ["no report"] if case.expect or case.clean or case.accepted else []
    findings = [(f, _relative(item, run, f["file"])) for f in run.report["findings"]]
    out: list[str] = []
    for expect in case.expect:
        if not any(_meets(f, rel, expect) for f, rel in findings):
            mine = sorted({(f["rule"], f["line"]) for f, rel in findings if rel == expect.file})
            out.append(f"expected {expect.describe()}; got {mine[:8] if mine else 'no finding on it'}")
    for name in case.clean:
        mine = sorted({(f["rule"], f["line"]) for f, rel in findings if rel == name})
        if mine:
            out.append(f"expected no finding on {name!r}; got {mine[:8]}")
    for key in case.accepted:
        policy = _policy(run.report, key)
        if policy is None or not _all_accepted(policy):
            out.append(f"expected policy {key} with every target Accepted")
    for name in case.absent:
        named = sorted({rel for _, rel in findings if rel.startswith(name + os.sep)})
        if named:
            out.append(f"files below {name!r} were read: {named[:3]}")
    said = [r["message"] for r in run.report.get("gate", {}).get("relaxations", [])]
    for text in case.gate:
        if not any(text in message for message in said):
            out.append(f"expected the report to say {text!r}; it says {said[:3]}")
    return out


def _meets(finding: Mapping[str, Any], rel: str, expect: Expect) -> bool:
    return (
        rel == expect.file
        and finding["rule"] != "PL000"
        and finding["rule"].startswith(expect.rule)
        and (expect.line is None or finding["line"] == expect.line)
        and (expect.severity is None or finding["severity"] == expect.severity)
        and (expect.message is None or expect.message.lower() in finding["message"].lower())
    )


def differences(reference: Run, other: Run) -> list[str]:
    """Parsing in workers or from the cache gives the same report as parsing here (README, `--jobs`
    and `--cache-dir`)."""
    if reference.report is None or other.report is None or reference.digest() == other.digest():
        return []
    mine, theirs = other.report, reference.report
    where = next((k for k in sorted(set(mine) | set(theirs)) if mine.get(k) != theirs.get(k)), "?")
    detail = ""
    if where == "findings":
        a, b = mine["findings"], theirs["findings"]
        extra = [f"{f['rule']} {f['file']}:{f['line']} {f['message'][:80]!r}" for f in a if f not in b]
        lost = [f"{f['rule']} {f['file']}:{f['line']} {f['message'][:80]!r}" for f in b if f not in a]
        detail = f": {len(a)} findings against {len(b)}; only here {extra[:2]}; only there {lost[:2]}"
    return [f"the report differs from the {reference.mode} run's in {where!r}{detail}"]


def text_problems(item: BuiltCase, run: Run) -> list[str]:
    """Text output must keep one finding per line, each starting with the case's path (or a note),
    and carry no raw control character: nothing a name or file name holds can forge a line, a
    GitHub Actions workflow command (`::error ...`) or a terminal escape."""
    out: list[str] = []
    try:
        stdout = run.stdout.decode("utf-8")
    except UnicodeDecodeError as exc:
        out.append(f"stdout is not UTF-8: {exc}")
        stdout = run.stdout.decode("utf-8", errors="replace")
    prefix = run.display_root.rstrip("/") + "/"
    for line in stdout.splitlines():
        if line.startswith(prefix + GOOD_FILE + ":"):
            out.append(f"the good file has a finding: {line[:120]!r}")
        elif line.startswith("::"):
            out.append(f"a line starts with '::': {line[:80]!r}")
        elif not (line.startswith((prefix, "    note:", "    hint:"))):
            out.append(f"a line that is neither a finding, a note nor a hint: {line[:80]!r}")
    for name, text in (("stdout", stdout), ("stderr", run.stderr)):
        raw = sorted({f"U+{ord(c):04X}" for c in text if c in UNSAFE_CHARACTERS})
        if raw:
            out.append(f"raw control characters on {name}: {', '.join(raw)}")
    return out
