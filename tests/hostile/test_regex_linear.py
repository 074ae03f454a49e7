"""Every regular expression policylint applies to input runs in linear time.

A backtracking regex engine (Python's `re`) can take quadratic or exponential time on
a pattern with overlapping quantifiers: the loader's old template-marker pattern
`\\{\\{-?\\s*.*?\\s*-?\\}\\}` took 15 s on a 2 KB line (`{{` and 2,000 spaces), and
88 s on 64 KB of `{{`. So:

- `test_every_pattern_has_adversarial_inputs` finds every pattern in the package
  (module-level `re.compile` results, and every other `re.*` call, by reading each
  module's source) and fails when one has no entry in `PATTERNS` below: a new
  pattern must come with inputs chosen to make it backtrack. `fnmatch` calls (their
  shell patterns become regexes) and the hand-written scanners that replaced
  regexes (`FUNCTIONS`) are listed the same way.
- `test_adversarial_inputs_run_in_linear_time` runs every entry on its inputs of
  about 300,000 characters, plus one generic input per character of the
  pattern's source (that character 100,000 times, then one that breaks the
  match), in a subprocess. Nothing is timed against a tight budget: an input of n
  characters costs about n steps to a linear matcher (milliseconds) and about n²/2
  to a quadratic one: 5 * 10^9 to 4.5 * 10^10 steps, where `re` backtracks some
  2 * 10^7 steps a second (the old pattern: 88 s for 64 KB of `{{`), so minutes
  to an hour. Each case gets `CASE_SECONDS` of the subprocess's CPU time, a hundred
  times more than linear work needs and ten to a hundred times less than quadratic
  work would take, so a slow machine cannot make the test flaky, and a super-linear
  pattern cannot pass. CPU time, not the clock's: on a machine running many other
  processes a case's wall time stretches with the load (20 s went by at a load of
  17 on two CPUs with nothing wrong), its CPU time does not. The kernel ends a case
  past its budget (`ITIMER_PROF`), even inside the regex engine's C code.
- `test_the_harness_catches_a_quadratic_pattern` checks that the harness does fail
  (with the case's name) on the old template-marker pattern, stopped by its CPU budget.

PyYAML's implicit resolvers (`RESOLVER_INPUTS`), which match every plain scalar of
the input, are run the same way.
"""

from __future__ import annotations

import ast
import fnmatch
import importlib
import os
import pkgutil
import queue
import re
import signal
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType

import pytest

import policylint
from tests.lintutil import ROOT

N = 300_000
GENERIC_N = 100_000
CASE_SECONDS = 20.0  # of the subprocess's CPU time, per case
# A line the subprocess prints that does not come within this many seconds of the clock stops it:
# not the budget (a case past its CPU time ends on its own), only a guard against a subprocess
# that waits instead of working, far above what a case's budget takes on a busy machine.
CLOCK_SECONDS = 900.0
_RE_FUNCTIONS = {"compile", "search", "match", "fullmatch", "sub", "subn", "split", "findall", "finditer"}


@dataclass(frozen=True)
class Adversarial:
    """How the code applies a pattern (`ops`) and inputs meant to make it backtrack."""

    ops: tuple[str, ...]
    inputs: Callable[[int], list[str]]
    generic: bool = field(default=True)  # also the one-character inputs built from the pattern


def _dns(n: int) -> list[str]:
    # RFC 1123 names: runs of the overlapping classes `[-a-z0-9]*[a-z0-9]`, then a character
    # that makes the match fail at the very end.
    return [
        "a" * n + "-",
        "a-" * (n // 2) + "_",
        ("a" * 60 + ".") * (n // 61) + "-",
        "a" + "-" * n,
        "a." * (n // 2) + ".",
        ("a-a." * (n // 4)) + "A",
    ]


_BOUNDARY = Adversarial(
    ("search", "finditer"),
    lambda n: ["-" * n, "--\n" * (n // 3), "...x\n" * (n // 5), "---" * (n // 3), "\n" * n],
)

# Key: "module.NAME" for a module-level compiled pattern, "module:<pattern source>" for a
# literal pattern passed to a `re` function inside code, "module:function" for a pattern the
# function builds (its value comes from FACTORIES).
PATTERNS: dict[str, Adversarial] = {
    # Kubernetes timestamps (metadata.creationTimestamp), matched whole.
    "policylint.k8s.timestamps._RFC3339": Adversarial(
        ("fullmatch",),
        lambda n: [
            "2024-01-02T03:04:05." + "1" * n,
            "2024-01-02T03:04:05." + "1" * n + "Z",
            "2024-01-02T03:04:05" + "+" * n,
            "1" * n,
            "2024-01-02T03:04:05.123456789" + "0" * n,
        ],
    ),
    # The CEL rules of CRDs (PL704, policylint.k8s.cel): the lexer over a rule's text, Go
    # durations, property-name escaping, and the Kubernetes formats `format.*().validate()` checks.
    "policylint.k8s.cel.parser._TOKEN": Adversarial(
        ("match",),
        lambda n: [
            "1" * n + "x",
            "1." + "1" * n + "e",
            "1" + "e" * n,
            "0x" + "f" * n + "g",
            "//" + " " * n,
            " " * n + "#",
            "a" * n + "$",
            "r" * n + "'",
            "b" * n + '"',
            "`" + "a" * n,
            "`" + "a-" * (n // 2) + "$",
        ],
    ),
    "policylint.k8s.cel.stdlib._DURATION_PART": Adversarial(
        ("match",), lambda n: ["1" * n + "x", "1." + "1" * n + "x", "." * n + "s", "1" * n + "." + "1" * n + "y", "m" * n]
    ),
    "policylint.k8s.cel.convert._ESCAPE_PIECE": Adversarial(
        ("sub",), lambda n: ["_" * n, "a-" * (n // 2), "$" * n, "._/" * (n // 3)]
    ),
    # CEL timestamps: RFC 3339 text for timestamp(), a time zone's offset for the accessors.
    "policylint.k8s.cel.times._RFC3339": Adversarial(
        ("match",),
        lambda n: [
            "2009-02-13T23:31:30." + "1" * n + "x",
            "2009-02-13T23:31:30." + "1" * n,
            "1" * n + "-",
            "2009-02-13T23:31:30Z" + "Z" * n,
        ],
    ),
    "policylint.k8s.cel.times._OFFSET": Adversarial(("match",), lambda n: ["+" * n, "0" * n + ":", "02:00" + "0" * n]),
    # URLs for the CEL URL library (policylint.k8s.urls): escapes checked, a host's characters.
    "policylint.input.templates.BRACED": Adversarial(
        ("search",), lambda n: ["{" + "a" * n, "{a" * (n // 2), "{" * n, "{a." * (n // 3) + "{"]
    ),
    "policylint.k8s.urls._BAD_ESCAPE": Adversarial(("search",), lambda n: ["%" * n, "%4" * (n // 2), "%41" * (n // 3) + "%g"]),
    "policylint.k8s.urls._HOST_ESCAPE": Adversarial(("finditer",), lambda n: ["%" * n, "%4" * (n // 2), "%41" * (n // 3)]),
    "policylint.k8s.urls._BAD_HOST_CHAR": Adversarial(("search",), lambda n: ["a" * n + " ", "é" * n, "[" * n + "{"]),
    # A route filter's header value (policylint.rules.filters, PL426): any text of the input.
    "policylint.rules.filters._FORBIDDEN": Adversarial(("search",), lambda n: ["a" * n, "\t " * (n // 2) + "\n", "é" * n]),
    "policylint.k8s.cel.kubernetes._DNS1123_LABEL": Adversarial(("match",), _dns),
    "policylint.k8s.cel.kubernetes._DNS1123_SUBDOMAIN": Adversarial(("match",), _dns),
    "policylint.k8s.cel.kubernetes._DNS1035_LABEL": Adversarial(("match",), _dns),
    "policylint.k8s.cel.kubernetes._LABEL_VALUE": Adversarial(
        ("match",), lambda n: ["a" * n + "-", "a-" * (n // 2) + "-", "a." * (n // 2) + "_", "a" + "_" * n + "!"]
    ),
    "policylint.k8s.cel.kubernetes._QUALIFIED_NAME": Adversarial(
        ("match",), lambda n: ["a" * n + "-", "a-" * (n // 2) + "-", "a." * (n // 2) + "_", "a" + "_" * n + "!"]
    ),
    # Finding messages, when fingerprinting file-level findings.
    "policylint.rules.engine._POSITION_IN_MESSAGE": Adversarial(
        ("sub",),
        lambda n: ["line " * (n // 5), "line" + " " * n + "1", "column 1" * (n // 8) + "x", "line " + "9" * n + "x"],
    ),
    # CEL rules of CRDs (x-kubernetes-validations), matched whole.
    "policylint.profiles.crd._QUANTIFIER": Adversarial(
        ("match",),
        lambda n: [
            "a" + ".a" * (n // 2),
            "a.all(" + " " * n,
            "a.all(x" + " " * n + ")",
            "a.all(x," + "(" * n,
            "a" + ".all(x," * (n // 7),
            "a" + "." * n + "all(x,y",
        ],
    ),
    "policylint.profiles.crd._COMPARE_EQ": Adversarial(
        ("match",),
        lambda n: [
            "a" + ".kind" * (n // 5) + "==x",
            "a.kind" + " " * n + "==",
            "a.kind == '" + "x" * n,
            'a.kind == "' + "x" * n,
            "a" + "." * n,
            "a.kind ==" + " " * n + "x",
        ],
    ),
    "policylint.profiles.crd._COMPARE_EQ_REV": Adversarial(
        ("match",),
        lambda n: [
            "'" + "x" * n,
            "'x'" + " " * n + "==",
            "'x' == a" + ".a" * (n // 2) + ".kin",
            "'x' == a" + ".kind" * (n // 5) + "x",
        ],
    ),
    "policylint.profiles.crd._COMPARE_IN": Adversarial(
        ("match",),
        lambda n: [
            "a.kind in [" + "x" * n,
            "a.kind in [" + "]" * n + "x",
            "a.kind" + " " * n + "in",
            "a.kind in" + " " * n,
            "a" + ".kind" * (n // 5),
        ],
    ),
    "policylint.profiles.crd._LITERAL": Adversarial(
        ("match",), lambda n: [" " * n + "'", "'" + "x" * n, "'x'" + " " * n + "x", " " * n + "'x'" + " " * n + "y"]
    ),
    "policylint.profiles.crd._HAS": Adversarial(
        ("match",), lambda n: ["has(" + "a." * (n // 2), "has(" + " " * n + "a" + " " * n]
    ),
    "policylint.profiles.crd._POSITIVE_SIZE": Adversarial(
        ("match",),
        lambda n: [
            "a" + "." * n + "size(",
            "size(" + " " * n + "a" + " " * n,
            "a.size()" + " " * n + ">" + " " * n + "1",
            "a" + ".size" * (n // 5) + "()x",
            "a.size()" + " " * n,
        ],
    ),
    # Names, groups, kinds, namespaces, section names, label keys and values: any length.
    "policylint.rules.targetref._GROUP_VERSION": Adversarial(
        ("match", "search"),
        lambda n: [
            "/v1" * (n // 3) + "x",
            "a/v" + "1" * n + "x",
            "a/v1alpha" + "1" * n + "x",
            "/" * n,
            "a" * n,
            "/valpha" * (n // 7),
        ],
    ),
    "policylint.rules.labels._NAME": Adversarial(
        ("match", "search"), lambda n: ["a" + "-" * n, "a" * n + "-", "a." * (n // 2), "a_" * (n // 2) + "!"]
    ),
    "policylint.k8s.names.GROUP": Adversarial(("match", "search"), _dns),
    "policylint.k8s.names.DNS1123_SUBDOMAIN": Adversarial(("match", "search"), _dns),
    "policylint.k8s.names.DNS1123_LABEL": Adversarial(("match", "search"), _dns),
    "policylint.k8s.names.KIND": Adversarial(
        ("match", "search"), lambda n: ["A" + "-" * n, "A" * n + "-", "A-" * (n // 2) + "!"]
    ),
    # `explain KIND/NS/NAME#rules[N]`: a command-line argument.
    "policylint.commands.explain._UNNAMED_RULE": Adversarial(
        ("match",), lambda n: ["rules[" + "1" * n, "rules[" + "1" * n + "]x"]
    ),
    # The kept findings of a whole run (policylint.incremental.memo): a cache file, never believed.
    "policylint.incremental.memo._FINGERPRINT": Adversarial(("match",), lambda n: ["0" * n, "0" * n + "x", "f" * 64 + "0" * n]),
    # The same list as a whole analysis's entry keeps it (policylint.incremental.wholeentry).
    "policylint.incremental.memo._LISTED": Adversarial(
        ("fullmatch",), lambda n: ['["' + "0" * n, "[" + '"0123456789abcdef",' * (n // 19) + "x", '["' + "0" * 16 + '","' * n]
    ),
    # What the per-object rules found (policylint.incremental.rulecache): a cache file, never believed.
    "policylint.incremental.rulecache._KEY": Adversarial(("match",), lambda n: ["0" * n + "g", "a" * n]),
    # The content each file had when a whole run read it (policylint.incremental.previous): a
    # cache file, never believed.
    "policylint.incremental.previous._CONTENT": Adversarial(("match",), lambda n: ["0" * n + "g", "a" * n]),
    # Test harnesses' placeholders (policylint.input.placeholders): values from the input.
    "policylint.input.placeholders._UPPER_SNAKE": Adversarial(
        ("fullmatch",), lambda n: ["A" * n + "a", "A_" * (n // 2) + "_", "A0_" * (n // 3) + "-"]
    ),
    "policylint.input.placeholders._HARNESS": Adversarial(
        ("fullmatch",), lambda n: ["PLACEHOLDER_" + "A" * n + "a", "PLACEHOLDER_" + "A_" * (n // 2) + "_"]
    ),
    # The language server's code actions and hovers: rule ids, lines and strings of the input.
    "policylint.server.actions.UNSUPPRESSIBLE": Adversarial(("match",), lambda n: ["PL" + "9" * n, "P" * n]),
    "policylint.server.actions._COMMENT": Adversarial(("search",), lambda n: [" " * n, "\t " * (n // 2) + "x", "a" * n]),
    "policylint.server.hovers:`+": Adversarial(("findall",), lambda n: ["`" * n, "`a" * (n // 2), "a" * n]),
    # Suppression comments and the baseline file (policylint.suppressions): text from the input.
    "policylint.suppressions.baseline._FINGERPRINT": Adversarial(
        ("finditer",),
        lambda n: ['"fingerprint"' + " " * n, '"fingerprint":' + " " * n + '"' + "a" * n, '"fingerprint" :' * (n // 16)],
    ),
    "policylint.suppressions.comments._DOCUMENT_BOUNDARY": Adversarial(
        ("finditer",), lambda n: ["---" * (n // 3), "-" * n + "\n", "---\n" * (n // 4), "..." * (n // 3)]
    ),
    "policylint.suppressions.comments._LINE_BREAK": Adversarial(("finditer",), lambda n: ["\r" * n, "\r\n" * (n // 2), "a" * n]),
    "policylint.suppressions.directives._BODY": Adversarial(
        ("match",),
        lambda n: [
            "a," * (n // 2) + "!",
            "a" + " " * n + "x",
            "a" + " \t" * (n // 2) + "--",
            "a" + " " * n + "until=" + "x" * n,
            "a-" * (n // 2) + " -" * (n // 4),
            "a" + " ," * (n // 2),
        ],
    ),
    "policylint.suppressions.directives._DIRECTIVE": Adversarial(
        ("match",), lambda n: ["a" * n + " " * n, "-" * n + "x", " " * n + "a", "a" + " " * n + "=" + " " * n]
    ),
    # `until=` written after the reason's `--`, found anywhere in it.
    "policylint.suppressions.directives._UNTIL_IN_REASON": Adversarial(
        ("findall",),
        lambda n: [
            "until=" * (n // 6),
            "a" * n + "until=",
            " until=" + "x" * n + "y",
            "until" * (n // 5) + "=",
            " " * n + "until",
        ],
    ),
    "policylint.suppressions.directives._DATE": Adversarial(("fullmatch",), lambda n: ["1" * n, "1234-12-" + "1" * n]),
    # File names in the cache directory.
    "policylint.input.cache._ENTRY_NAME": Adversarial(("match", "search"), lambda n: ["0" * n + "g", "a" * n]),
    "policylint.input.verdictstore._VERDICT_KEY": Adversarial(("match",), lambda n: ["0" * n + "g", "a" * n]),
    # The footer of the entry kept per file: a part's name and stamp (policylint.input.keptfiles).
    "policylint.input.keptfiles._PART": Adversarial(("match",), lambda n: ["a" * n + "A", "a" * n]),
    "policylint.input.keptfiles._STAMP": Adversarial(("match",), lambda n: ["0" * n + "g", "a" * n]),
    # A file's content key a `--jobs` rule process sends back with its verdicts.
    "policylint.input.verdictstore._FILE_KEY": Adversarial(("match",), lambda n: ["0" * n + "g", "a" * n]),
    "policylint.input.cache._TEMP_NAME": Adversarial(("match", "search"), lambda n: [".tmp-" + "a" * n, ".tmp-" * (n // 5)]),
    "policylint.input.cache._RULE_ID": Adversarial(("match", "search"), lambda n: ["PL0" + "1" * n, "PL0" * (n // 3)]),
    # The loader, over whole files.
    "policylint.input.load._NON_PRINTABLE": Adversarial(
        ("search", "finditer", "sub"), lambda n: ["\x00" * n, "a" * n, "\x00a" * (n // 2)]
    ),
    "policylint.input.reader.NON_SPACE": Adversarial(("search",), lambda n: [" " * n, "\u2028" * n, " \n" * (n // 2)]),
    "policylint.input.prescan.DOC_BOUNDARY": _BOUNDARY,
    # Output escaping (every message and name printed).
    "policylint.textsafe.UNSAFE": Adversarial(
        ("search", "sub", "finditer"), lambda n: ["\\" * n, "\x00" * n, "a" * n, "\u2028" * n]
    ),
    "policylint.textsafe._ESCAPE_SEQUENCE": Adversarial(
        ("search", "finditer", "sub"),
        lambda n: ["\\" * n, "\\x" * (n // 2), "\\u123" * (n // 5), "\\x1" * (n // 3), "\\\\" * (n // 2) + "\\"],
    ),
    "policylint.textsafe._JSON_UNSAFE": Adversarial(("search", "sub"), lambda n: ["\x7f" * n, "a" * n]),
    "policylint.textsafe._SURROGATE": Adversarial(("search", "sub"), lambda n: ["\ud800" * n, "a" * n]),
    "policylint.textsafe._NON_ASCII": Adversarial(("search", "sub"), lambda n: ["\u00e9" * n, "a" * n]),
    # Field paths (keys of any length and content) and positions.
    "policylint.input.positions._PLAIN_KEY": Adversarial(
        ("match",), lambda n: ["a" * n + "!", "$" * n + ".", "a-" * (n // 2) + " "]
    ),
    # parse_path matches at one offset and stops at the first failure (see FUNCTIONS), so
    # `search` (a scan from every offset) is not how it is used.
    "policylint.input.positions._TOKEN": Adversarial(
        ("match",),
        lambda n: ['["' + "x" * n, '["' + '\\"' * (n // 2), "[" + "1" * n, "." * n, "a" * n + "[", '["' + "\\" * n],
        generic=False,
    ),
    "policylint.input.positions._LINE_BREAK": Adversarial(
        ("search", "finditer"), lambda n: ["\r\n" * (n // 2), "\r" * n, "\r" * n + "\n", "a" * n]
    ),
    "policylint.input.positions._OTHER_BREAKS": Adversarial(("search", "finditer"), lambda n: ["\n" * n, "\r" * n]),
    "policylint.input.positions._DOCUMENT_BOUNDARY": _BOUNDARY,
    # A document's shape: a line whose plain value ends it, the value set aside.
    "policylint.input.blockshapes._VALUE_LINE": Adversarial(
        ("fullmatch",),
        lambda n: [
            " " * n + "a",
            "- " * (n // 2) + "a",
            "a" * n + ": " + "b " * (n // 2) + "#",
            "- a: " + "b " * (n // 2) + ":",
            "a: " + "b" * n + " " * n + "!",
            "a:" * n,
        ],
    ),
    # The names the generated checks give their functions and tables, read back by the generator.
    "policylint.k8s.schemacodegen._NUMBERED": Adversarial(
        ("finditer",), lambda n: ["v" * n + "1" * n + "v", "v1" * (n // 2), "a" * n, "1" * n + "a"]
    ),
    # The globs of files that are not manifests, over a walked file's name.
    "policylint.input.nonmanifest._TOOL_FILE": Adversarial(
        ("match",),
        lambda n: ["docker-compose" + "." * n, "docker-compose" + "a" * n + ".ym", "tsconfig" + ".json" * (n // 5) + "x"],
    ),
    "policylint.input.nonmanifest._CHART_VALUES_FILE": Adversarial(
        ("match",), lambda n: ["values" + "." * n, "values" + ".yaml" * (n // 5) + "x", "values" + "a" * n]
    ),
    # The block reader's line checks, over a document's text or one line.
    "policylint.input.blockpaths._NOTEWORTHY": Adversarial(("search", "finditer"), lambda n: ["a: b\n" * (n // 5), "'" * n]),
    "policylint.input.blockpaths._NOTEWORTHY_ASCII": Adversarial(
        ("search", "finditer"), lambda n: ["a: b\n" * (n // 5), "'" * n]
    ),
    "policylint.input.blockpaths._ODD_LINE": Adversarial(
        ("search", "match"),
        lambda n: [
            "\n" + " " * n,
            "\n" + "- " * (n // 2) + "x",
            ("\n" + "- " * 50 + "x") * (n // 101),
            "\n" + "-" + " " * n + "x",
        ],
    ),
    "policylint.input.blockpaths._UNSAFE": Adversarial(("search",), lambda n: ["a" * n, "\t" * n]),
    "policylint.input.blockpaths._OTHER_BREAKS": Adversarial(("search",), lambda n: ["é" * n, "\n" * n, "\u2027" * n]),
    "policylint.input.blockpaths._BLOCK_HEADER": Adversarial(
        ("match",), lambda n: ["|" + " " * n + "x", "| #" + "a" * n + "\n", ">-" + " " * n + "#" + " " * n + "\n"]
    ),
    # Rule documentation (shipped, but linear all the same).
    # Rule docs as plain text (SARIF help.text, `rules --format json`).
    "policylint.rules.docs._FENCE_LINE": Adversarial(("sub",), lambda n: ["```" * (n // 3), "`" * n, "```" + "x" * n]),
    "policylint.rules.docs._LINK": Adversarial(
        ("sub",), lambda n: ["[" * n, "[a](" * (n // 4), "[" + "a" * n + "](", "[](" + "x" * n, "](" * (n // 2)]
    ),
    # Escaping input text for SARIF messages with links and for Markdown.
    "policylint.reporters.sarif._LINK_SYNTAX": Adversarial(("sub",), lambda n: ["[" * n, "\\" * n, "a" * n]),
    "policylint.reporters.markdown._MARKDOWN_PUNCTUATION": Adversarial(("sub",), lambda n: ["|" * n, "`*_" * (n // 3), "a" * n]),
    # The style of a file a fix appends a document to.
    "policylint.autofix._INDENTED_SEQUENCE": Adversarial(
        ("search",),
        lambda n: [" " * n, "a:" * (n // 2), " " * n + "a" + ":" * n + "\n", ("a:\n" * (n // 3)), "a" * n + ": \t" * n],
    ),
    "policylint.rules.docs._HEADING": Adversarial(
        ("finditer",),
        lambda n: [
            "## " + " " * n + "x",
            "## " + "a " * (n // 2),
            ("## " + " " * 1000 + "\n") * (n // 1004),
            "##" + "#" * n,
            "## a" + " \t" * (n // 2) + "x",
        ],
    ),
    # Mermaid and DOT node ids made from object names.
    "policylint.commands.graph:[^A-Za-z0-9]+": Adversarial(("sub",), lambda n: ["-" * n, "a-" * (n // 2)]),
}

# Patterns built at run time: how to build the one the code uses.
FACTORIES: dict[str, Callable[[], re.Pattern[str]]] = {}


def _call(dotted: str) -> Callable[[str], object]:
    module, _, name = dotted.rpartition(".")
    return getattr(importlib.import_module(module), name)  # type: ignore[no-any-return]


# Hand-written scanners over input text (some replaced a regex), and fnmatch, whose shell
# patterns (`--external`, profiles) are translated to regexes matched against object names.
FUNCTIONS: dict[str, tuple[Callable[[str], object], Callable[[int], list[str]]]] = {
    "policylint.input.templates._template_marker": (
        lambda text: _call("policylint.input.templates._template_marker")(text),
        lambda n: [
            'a: "{{' + " " * n + '"\n',
            "{{" * (n // 2),
            "{{-" + " \n" * (n // 2) + "x",
            "{{ x\n" * (n // 5),
            "{{" + "-" * n,
            "{{" + "\n" * n + "x",
            ("{{" + " " * 100 + "\n") * (n // 103),
            "{{ x {{\n" * (n // 8) + "}}",
            "{{ x\n" + " " * n + "y }}",
        ],
    ),
    # Every marker of a file, not only the first (PL004 skips those in kinds that use them).
    "policylint.input.templates._template_markers": (
        lambda text: list(_call("policylint.input.templates._template_markers")(text)),
        lambda n: [
            "{{ x }}" * (n // 7),
            "{{" * (n // 2) + "}}",
            "{{ x\n" * (n // 5) + "}}",
            ("{{ a }} {{" + " " * 50 + "\n") * (n // 62),
        ],
    ),
    # The next `---` or `...` line of a file from a document's start (positions), by `str.find`.
    "policylint.input.positions._boundary": (
        lambda text: _call("policylint.input.positions._boundary")(text, 0),
        lambda n: [
            "\n...x" * (n // 5),
            "\n---x" * (n // 5),
            "\n----" * (n // 5),
            "\n-" * (n // 2),
            ("\n...x" * 3 + "\n---x") * (n // 20),
        ],
    ),
    "policylint.input.load._json_not_a_manifest": (
        lambda text: _call("policylint.input.load._has_json_key")(text, "apiVersion"),
        lambda n: ['"apiVersion" ' * (n // 13), '"apiVersion"' + " " * n, '"apiVersion"\n' * (n // 13) + ":"],
    ),
    "policylint.input.load._strip_document_boms": (
        lambda text: _call("policylint.input.load._strip_document_boms")(text),
        lambda n: [
            "\n\ufeff" * (n // 2),
            "---\n\ufeff" * (n // 5),
            "\r\ufeff" * (n // 2),
            "a" * n + "\n\ufeff" * 1000,
            "\ufeff" * n,
        ],
    ),
    "policylint.input.load.printable": (
        lambda text: _call("policylint.input.load.printable")(text),
        lambda n: ["\x00" * n, "\x00\n\ufeff" * (n // 3)],
    ),
    "policylint.input.convert._int": (
        lambda text: _try(_call("policylint.input.convert._int"), text),
        lambda n: [
            "1:" * (n // 2) + "1",
            "0x" + "0" * n + "1",
            "1_" * (n // 2) + "1",
            "0" * n + "8",
            "0b" + "1" * n,
            "-0o" + "7" * n,
        ],
    ),
    "policylint.profiles.crd._strip": (
        lambda text: _call("policylint.profiles.crd._strip")(text),
        lambda n: ["(" * (n // 2) + "x" + ")" * (n // 2), "(" * n, "( " * (n // 2) + ")" * (n // 2), "('" * (n // 2)],
    ),
    "policylint.input.positions.parse_path": (
        lambda text: _call("policylint.input.positions.parse_path")(text),
        lambda n: ['["' + "x" * n, "a." * (n // 2), "[1]" * (n // 3), 'a["\\"' * (n // 5), "[" + "9" * n + "]"],
    ),
    # CRD `pattern`s and `format`s applied to input values (PL703, policylint.k8s.strformats): RE2,
    # linear in the value whatever the pattern, including the textbook catastrophic ones.
    "policylint.k8s.strformats.matches": (
        lambda text: [
            _call("policylint.k8s.strformats.matches")(p, text)
            for p in ("^(a+)+$", "^(a|aa)+$", "^(a*)*b$", "(x+x+)+y", "^(\\w+\\s?)*$")
        ],
        lambda n: ["a" * n + "!", "a" * n, "x" * n, "a " * (n // 2) + "!"],
    ),
    "policylint.k8s.strformats.format_ok": (
        lambda text: [
            _call("policylint.k8s.strformats.format_ok")(f, text)
            for f in ("date-time", "byte", "hostname", "uuid", "cidr", "ipv6")
        ],
        lambda n: [
            "2024-01-02T" + "1" * n,
            "A" * n + "!",
            "a-" * (n // 2),
            ":" * n,
            "1." * (n // 2) + "/" + "1" * n,
            "2024-01-02t" * (n // 11),
            "a." * (n // 2),
        ],
    ),
    "fnmatch": (
        lambda text: [fnmatch.fnmatchcase(text, p) for p in ("*a*a*a*a*a*a*b", "*?*?*?*?x", "*a*b*a*b*c", "[a-z]*[0-9]*a")],
        lambda n: ["a" * n, "ab" * (n // 2), "a1" * (n // 2)],
    ),
}


def _resolver_patterns() -> dict[str, re.Pattern[str]]:
    """PyYAML's implicit resolvers: the regexes that decide, for every plain scalar of the input,
    whether it is a bool, null, an int, a float or a timestamp (`yaml.resolver`; libyaml parses,
    but the resolving is PyYAML's Python code). Not policylint's, but applied to its input."""
    load = importlib.import_module("policylint.input.load")
    out: dict[str, re.Pattern[str]] = {}
    for resolvers in load.LOADER.yaml_implicit_resolvers.values():
        for tag, pattern in resolvers:
            out[f"yaml.resolver {tag.rsplit(':', 1)[-1]}"] = pattern
    return out


# Numbers and dates with long runs where the resolvers' quantifiers meet.
RESOLVER_INPUTS: Callable[[int], list[str]] = lambda n: [  # noqa: E731
    "1:" * (n // 2) + "x",
    "1:" * (n // 2) + "." + "0" * n + "x",
    "0b" + "1_" * (n // 2) + "2",
    "0x" + "f_" * (n // 2) + "g",
    "1" + "_" * n + ".",
    "." + "0" * n + "e",
    "-" + "1" * n + ":",
    "1.0e+" + "1" * n + "x",
    "2001-12-14" + " " * n + "1:00:00" + " " * n + "x",
    "2001-12-14t1:00:00." + "0" * n + "x",
    "2001-12-14 1:00:00" + " " * n + "+",
]


def _try(function: Callable[[str], object], text: str) -> object:
    try:
        return function(text)
    except ValueError as exc:  # refusing the input is a fine answer; taking forever is not
        return exc


# -- discovery ---------------------------------------------------------------------------------------


def _modules() -> Iterator[ModuleType]:
    yield policylint
    for info in pkgutil.walk_packages(policylint.__path__, "policylint."):
        if info.name != "policylint.__main__":  # importing it runs the command line
            yield importlib.import_module(info.name)


def _function_name(tree: ast.AST, target: ast.AST) -> str:
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and target in ast.walk(node):
            return node.name
    return "<module>"


def discovered() -> dict[str, re.Pattern[str] | None]:
    """Every pattern in the package: key (as in PATTERNS) -> the compiled pattern (None: built at run time)."""
    found: dict[str, re.Pattern[str] | None] = {}
    for module in _modules():
        if module.__file__ is None:
            continue
        tree = ast.parse(Path(module.__file__).read_text(encoding="utf-8"))
        top_level = {}
        for node in tree.body:
            if isinstance(node, (ast.Assign, ast.AnnAssign)) and isinstance(node.value, ast.Call):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                for target in targets:
                    if isinstance(target, ast.Name):
                        top_level[id(node.value)] = target.id
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call):
                continue
            func = node.func
            if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
                if func.value.id == "fnmatch":
                    found["fnmatch"] = None
                    continue
                if func.value.id != "re" or func.attr not in _RE_FUNCTIONS:
                    continue
            else:
                continue
            if id(node) in top_level:
                value = getattr(module, top_level[id(node)])
                assert isinstance(value, re.Pattern), (module.__name__, top_level[id(node)])
                found[f"{module.__name__}.{top_level[id(node)]}"] = value
            elif node.args and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str):
                found[f"{module.__name__}:{node.args[0].value}"] = re.compile(node.args[0].value)
            else:
                found[f"{module.__name__}:{_function_name(tree, node)}"] = None
    return found


def test_every_pattern_has_adversarial_inputs() -> None:
    found = discovered()
    regexes = {k for k in found if k != "fnmatch"}
    missing = sorted(regexes - set(PATTERNS))
    assert not missing, f"patterns without adversarial inputs in tests/hostile/test_regex_linear.py PATTERNS: {missing}"
    stale = sorted(set(PATTERNS) - regexes)
    assert not stale, f"PATTERNS lists patterns the package no longer has: {stale}"
    built = sorted(k for k in regexes if found[k] is None)
    assert sorted(FACTORIES) == built, "patterns built at run time need a FACTORIES entry"
    if "fnmatch" in found:
        assert "fnmatch" in FUNCTIONS
    # The discovery itself works: it sees patterns of each kind.
    assert "policylint.input.prescan.DOC_BOUNDARY" in found and "policylint.commands.graph:[^A-Za-z0-9]+" in found


# -- the run -----------------------------------------------------------------------------------------


_OPS: dict[str, Callable[[re.Pattern[str], str], object]] = {
    "search": lambda p, s: p.search(s),
    "match": lambda p, s: p.match(s),
    "fullmatch": lambda p, s: p.fullmatch(s),
    "finditer": lambda p, s: sum(1 for _ in p.finditer(s)),
    "findall": lambda p, s: len(p.findall(s)),
    "sub": lambda p, s: p.sub("_", s),
}


def _generic_inputs(pattern: re.Pattern[str], n: int) -> list[str]:
    """Each character of the pattern's source (and a few common ones) repeated, then a
    character no pattern here expects last, so every match attempt runs to the end and fails."""
    chars = sorted(set(pattern.pattern) | set("a0 \n-."))
    return [c * n + "\x01" for c in chars]


def cases(names: list[str] | None = None) -> Iterator[tuple[str, Callable[[], object]]]:
    """(name, thunk) for every case; `names` filters by key."""
    patterns = {k: v for k, v in discovered().items() if k != "fnmatch"}
    for key, spec in PATTERNS.items():
        if names is not None and key not in names:
            continue
        pattern = FACTORIES[key]() if key in FACTORIES else patterns[key]
        assert pattern is not None
        inputs = [(f"#{i}", text) for i, text in enumerate(spec.inputs(N))]
        if spec.generic:
            inputs += [(f"generic {text[0]!r}", text) for text in _generic_inputs(pattern, GENERIC_N)]
        for label, text in inputs:
            for op in spec.ops:
                yield f"{key} {op} {label}", lambda op=op, pattern=pattern, text=text: _OPS[op](pattern, text)
    for key, (function, make) in FUNCTIONS.items():
        if names is not None and key not in names:
            continue
        for i, text in enumerate(make(N)):
            yield f"{key} #{i}", lambda function=function, text=text: function(text)
    for key, pattern in _resolver_patterns().items():
        if names is not None and key not in names:
            continue
        texts = RESOLVER_INPUTS(N) + _generic_inputs(pattern, GENERIC_N)
        for i, text in enumerate(texts):
            yield f"{key} #{i}", lambda pattern=pattern, text=text: pattern.match(text)


def run_cases(names: list[str] | None = None, seconds: float = CASE_SECONDS) -> None:
    """The subprocess: announce each case, run it within `seconds` of CPU time, say it is done."""
    for name, thunk in cases(names):
        run_case(name, thunk, seconds)
    print("ALL DONE", flush=True)


def run_case(name: str, thunk: Callable[[], object], seconds: float) -> None:
    """In the subprocess: announce the case and run it; past `seconds` of this process's CPU
    time, the kernel ends the process (SIGPROF, whose default action is to terminate), wherever
    it is, the regex engine's C code included."""
    print("BEGIN", name, flush=True)
    signal.setitimer(signal.ITIMER_PROF, seconds)
    thunk()
    signal.setitimer(signal.ITIMER_PROF, 0)
    print("END", name, flush=True)


@dataclass(frozen=True)
class Harness:
    finished: bool
    last: str  # the case running when it stopped
    stderr: str
    out_of_cpu: bool  # ended by its CPU budget (run_case)


def run_harness(code: str, clock_seconds: float = CLOCK_SECONDS) -> Harness:
    """Run `code` in a subprocess, whose cases keep to their CPU time themselves (`run_case`).

    A line the subprocess prints that does not come within `clock_seconds` of the one before
    stops it: a guard against a subprocess that hangs, not the budget.
    """
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen(
        [sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=ROOT
    )
    assert proc.stdout is not None and proc.stderr is not None
    lines: queue.Queue[str | None] = queue.Queue()

    def read() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.put(line.rstrip("\n"))
        lines.put(None)

    threading.Thread(target=read, daemon=True).start()
    current = "(starting)"
    try:
        while True:
            try:
                line = lines.get(timeout=clock_seconds)
            except queue.Empty:
                return Harness(False, current, "", False)
            if line is None:
                proc.wait(timeout=60)
                finished = current == "ALL DONE" and proc.returncode == 0
                return Harness(finished, current, proc.stderr.read(), proc.returncode == -signal.SIGPROF)
            current = line.removeprefix("BEGIN ") if line.startswith("BEGIN ") else line
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


@pytest.mark.slow  # every pattern against adversarial inputs
@pytest.mark.every_python  # Python's own `re`
def test_adversarial_inputs_run_in_linear_time() -> None:
    ran = run_harness("from tests.hostile.test_regex_linear import run_cases; run_cases()")
    why = f"took more than {CASE_SECONDS:.0f} s of CPU time" if ran.out_of_cpu else "did not finish"
    assert ran.finished, f"{why}: {ran.last}\n{ran.stderr[-3000:]}"


def test_the_harness_catches_a_quadratic_pattern() -> None:
    # The loader's old template-marker pattern on the input, 300,000 characters
    # long: hours of backtracking. The case's CPU budget must stop it, and the harness name it.
    code = (
        "import re\n"
        "from tests.hostile.test_regex_linear import run_case\n"
        "p = re.compile(r'\\{\\{-?\\s*.*?\\s*-?\\}\\}')\n"
        "run_case('old template marker', lambda: p.search('a: \"{{' + ' ' * 300_000), 3.0)\n"
        "print('ALL DONE', flush=True)\n"
    )
    ran = run_harness(code)
    assert not ran.finished
    assert ran.out_of_cpu
    assert ran.last == "old template marker"


def test_a_case_within_its_budget_finishes() -> None:
    # The other side of the budget: linear work well within it ends the case, not the process.
    code = (
        "import re\n"
        "from tests.hostile.test_regex_linear import run_case\n"
        "p = re.compile(r'\\{\\{-?\\s*.*?\\s*-?\\}\\}')\n"
        "run_case('linear', lambda: p.search('a: \"{{' + ' ' * 300 + '}}'), 3.0)\n"
        "print('ALL DONE', flush=True)\n"
    )
    ran = run_harness(code)
    assert ran.finished and not ran.out_of_cpu and ran.last == "ALL DONE"
