"""The cel-spec conformance tests (tests/data/cel-spec/, google/cel-spec tests/simple/testdata) run
against policylint's CEL package: a reader for their protobuf text format and a runner.

The files are `cel.expr.conformance.test.SimpleTestFile` messages in protobuf text format. The
reader needs no protobuf package: it reads the text format's grammar (fields, nested messages,
lists, `[type.url]` Any expansions, C-style string escapes, adjacent strings concatenated) into
`Message`s, dictionaries from a field's name to its values in order, without the schema; the
runner knows the few fields of simple.proto and value.proto it reads.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from policylint.k8s import cel
from policylint.k8s.cel import cost, evaluator

DATA = Path(__file__).parent / "data" / "cel-spec"

Message = dict[str, list[Any]]

# -- the text format ------------------------------------------------------------------------------

_TOKEN = re.compile(
    r"""
    (?P<skip>[ \t\r\n]+|\#[^\n]*)
  | (?P<string>"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*')
  | (?P<word>[A-Za-z0-9_.+\-/]+)
  | (?P<punct>[{}\[\]:,;<>])
    """,
    re.VERBOSE,
)
_SIMPLE_ESCAPES = {
    "n": b"\n",
    "t": b"\t",
    "r": b"\r",
    "a": b"\a",
    "b": b"\b",
    "f": b"\f",
    "v": b"\v",
    "\\": b"\\",
    "'": b"'",
    '"': b'"',
    "?": b"?",
}
_ESCAPE = re.compile(r"\\([0-7]{1,3}|x[0-9a-fA-F]{1,2}|u[0-9a-fA-F]{4}|U[0-9a-fA-F]{8}|.)", re.DOTALL)


class TextFormatError(ValueError):
    pass


def unquote(literal: str) -> bytes:
    """A text-format string literal's bytes: octal and hex escapes are bytes, \\u and \\U escapes
    code points written as UTF-8, the rest of the text UTF-8."""
    body = literal[1:-1]
    out = bytearray()
    pos = 0
    for m in _ESCAPE.finditer(body):
        out += body[pos : m.start()].encode()
        e = m.group(1)
        if e[0] in "01234567":
            out.append(int(e, 8) & 0xFF)
        elif e[0] == "x" and len(e) > 1:
            out.append(int(e[1:], 16))
        elif e[0] in "uU" and len(e) > 1:
            out += chr(int(e[1:], 16)).encode()
        elif e in _SIMPLE_ESCAPES:
            out += _SIMPLE_ESCAPES[e]
        else:
            raise TextFormatError(f"unknown escape \\{e} in {literal}")
        pos = m.end()
    out += body[pos:].encode()
    return bytes(out)


def _tokens(text: str) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    pos = 0
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if m is None:
            raise TextFormatError(f"unexpected {text[pos : pos + 20]!r} at offset {pos}")
        pos = m.end()
        kind = m.lastgroup or ""
        if kind != "skip":
            out.append((kind, m.group()))
    return out


class _Reader:
    def __init__(self, text: str) -> None:
        self.tokens = _tokens(text)
        self.pos = 0

    def peek(self) -> str | None:
        return self.tokens[self.pos][1] if self.pos < len(self.tokens) else None

    def take(self, expected: str | None = None) -> tuple[str, str]:
        if self.pos >= len(self.tokens):
            raise TextFormatError("unexpected end of input")
        token = self.tokens[self.pos]
        if expected is not None and token[1] != expected:
            raise TextFormatError(f"expected {expected!r}, got {token[1]!r}")
        self.pos += 1
        return token

    def message(self, close: str | None) -> Message:
        fields: Message = {}
        while self.peek() != close:
            if self.peek() is None:
                raise TextFormatError(f"expected {close!r} before the end of input")
            if self.peek() == "[":  # an Any's expansion or an extension: [type.googleapis.com/...]
                self.take("[")
                name = "[" + self.take()[1] + "]"
                self.take("]")
            else:
                kind, name = self.take()
                if kind != "word":
                    raise TextFormatError(f"expected a field name, got {name!r}")
            if self.peek() == ":":
                self.take(":")
            fields.setdefault(name, []).extend(self.values())
            if self.peek() in (",", ";"):
                self.take()
        return fields

    def values(self) -> list[Any]:
        if self.peek() == "[":
            self.take("[")
            items: list[Any] = []
            while self.peek() != "]":
                items.extend(self.values())
                if self.peek() == ",":
                    self.take(",")
            self.take("]")
            return items
        return [self.value()]

    def value(self) -> Any:
        opener = self.peek()
        if opener in ("{", "<"):
            self.take()
            body = self.message("}" if opener == "{" else ">")
            self.take()
            return body
        kind, text = self.take()
        if kind == "string":
            data = unquote(text)
            while self.pos < len(self.tokens) and self.tokens[self.pos][0] == "string":
                data += unquote(self.take()[1])
            return data
        if kind != "word":
            raise TextFormatError(f"expected a value, got {text!r}")
        return _scalar(text)


def _scalar(text: str) -> Any:
    """A number, or the word itself (an enum value, `true`, `false`, `inf`, `nan`)."""
    lowered = text.lower()
    if lowered in ("inf", "+inf", "infinity", "-inf", "-infinity", "nan"):
        return float(lowered.replace("infinity", "inf"))
    if re.fullmatch(r"[-+]?(?:0[xX][0-9a-fA-F]+|[0-9]+)", text):
        return int(text, 0) if not re.fullmatch(r"[-+]?0[0-9]+", text) else int(text, 8)
    if re.fullmatch(r"[-+]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][-+]?[0-9]+)?[fF]?", text):
        return float(text.rstrip("fF"))
    return text


def read(text: str) -> Message:
    """A whole text-format message."""
    reader = _Reader(text)
    return reader.message(None)


# -- the tests ------------------------------------------------------------------------------------


class OutOfScope(Exception):
    """A case that needs what CRD rules never see: protobuf messages, enums, containers."""


@dataclass(frozen=True)
class Case:
    id: str  # file/section/test
    message: Message


def cases(files: Iterator[Path] | None = None) -> Iterator[Case]:
    for path in sorted(files or DATA.glob("*.textproto")):
        tree = read(path.read_text(encoding="utf-8"))
        for section in tree.get("section", []):
            for test in section.get("test", []):
                yield Case(f"{path.stem}/{_text(section['name'][0])}/{_text(test['name'][0])}", test)


def _text(data: bytes) -> str:
    return data.decode("utf-8")


def _one(message: Message, name: str) -> Any:
    return message[name][0] if name in message else None


_DURATION = "[type.googleapis.com/google.protobuf.Duration]"
_TIMESTAMP = "[type.googleapis.com/google.protobuf.Timestamp]"


def to_value(v: Message) -> Any:
    """A cel.expr.Value as the CEL package's value model."""
    if "null_value" in v:
        return None
    if "bool_value" in v:
        return _one(v, "bool_value") == "true"
    if "int64_value" in v:
        return int(_one(v, "int64_value"))
    if "uint64_value" in v:
        return cel.UInt(_one(v, "uint64_value"))
    if "double_value" in v:
        return float(_one(v, "double_value"))
    if "string_value" in v:
        return _text(_one(v, "string_value"))
    if "bytes_value" in v:
        return bytes(_one(v, "bytes_value"))
    if "list_value" in v:
        return [to_value(item) for item in _one(v, "list_value").get("values", [])]
    if "map_value" in v:
        out: dict[Any, Any] = {}
        for entry in _one(v, "map_value").get("entries", []):
            out[to_value(entry["key"][0])] = to_value(entry["value"][0])
        return out
    if "object_value" in v:
        obj = _one(v, "object_value")
        if _DURATION in obj:
            d = obj[_DURATION][0]
            return cel.Duration(int(_one(d, "seconds") or 0) * 10**9 + int(_one(d, "nanos") or 0))
        raise OutOfScope(f"a protobuf message: {sorted(obj)}")
    if "type_value" in v:
        return cel.Type(_text(_one(v, "type_value")))
    raise OutOfScope(f"a value kind this runner does not read: {sorted(v)}")


def same(got: Any, expected: Any) -> bool:
    """CEL values equal and of one type all the way down (1 is not 1u nor 1.0 here); NaN is
    itself."""
    if type(got) is not type(expected):
        return False
    if type(got) is float:
        return (math.isnan(got) and math.isnan(expected)) or got == expected
    if type(got) is list:
        return len(got) == len(expected) and all(same(a, b) for a, b in zip(got, expected, strict=True))
    if type(got) is dict:
        return len(got) == len(expected) and all(k in expected and same(v, expected[k]) for k, v in got.items())
    return bool(got == expected)


# What the runner cannot hand to the evaluator, or CRD rules never meet: protobuf messages and
# their wrappers, enums, and a declared container.
# google.protobuf.Duration and Timestamp are CEL's own types: the cases that name them run.
_PROTO = re.compile(r"TestAllTypes|google\.protobuf\.(?!Duration\b|Timestamp\b)|proto[23]\.|\bAny\b|GlobalEnum|TestRequired")


def run(case: Case) -> tuple[bool, str]:
    """(passed, what happened); raises OutOfScope for a case the runner does not run."""
    test = case.message
    expr = _text(_one(test, "expr"))
    if "container" in test or _PROTO.search(expr):
        raise OutOfScope("a protobuf message, an enum or a container")
    if _one(test, "check_only") == "true":
        raise OutOfScope("a type-check result only")
    variables = {}
    for binding in test.get("bindings", []):
        variables[_text(_one(binding, "key"))] = to_value(_one(_one(binding, "value"), "value"))
    if "value" in test:
        expected: Any = to_value(_one(test, "value"))
    elif "eval_error" in test or "any_eval_errors" in test:
        expected = "error"
    elif "typed_result" in test:
        expected = to_value(_one(_one(test, "typed_result"), "result"))
    elif "unknown" in test or "any_unknowns" in test:
        raise OutOfScope("unknowns (partial evaluation)")
    else:
        expected = True  # simple.proto: no result matcher means the expression is true
    try:
        tree = cel.parse(expr)
        program = evaluator._Compiler(frozenset(variables)).compile(tree)
        activation = cel.Activation(dict(variables), cost.PER_CALL_LIMIT)
        activation.limit = 1 << 62  # the conformance tests are not about cost
        got = program(activation)
    except cel.CompileError as exc:
        return False, f"compile error: {exc.message}"
    except cel.EvalError as exc:
        return expected == "error", f"error: {exc.message}"
    except RecursionError:
        return False, "recursion"
    if expected == "error":
        return False, f"no error: got {got!r}"
    if same(got, expected):
        return True, "ok"
    return False, f"got {got!r}, expected {expected!r}"
