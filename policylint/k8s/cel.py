"""Offline evaluation of the CEL rules of CRD schemas (`x-kubernetes-validations`), for PL704.

The API server compiles each rule of a schema node with cel-go and the Kubernetes CEL libraries,
binds `self` to the node's value (converted by the node's schema: k8s.io/apiserver
pkg/cel/common/valuesunstructured.go) and rejects the object when a rule evaluates to false or
fails. This module does the same with a small CEL implementation of its own: a parser for the
whole CEL grammar and an evaluator compiled to Python closures, with the standard functions, the
string extensions and the Kubernetes library functions the bundled CRDs' rules use (see
`FUNCTIONS`). Why not a library: benchmarks/cel.py and docs/performance.md — the one CEL package
that installs on every Python policylint supports (cel-python) is about a hundred times slower,
which the ~265,000 rule evaluations of the 10,000-object benchmark cannot afford.

What differs from the API server, on purpose or for lack of the information offline:

- no static type checking: a rule that cel-go would refuse at CRD creation (a type error) fails
  here only when the bad branch is evaluated;
- a rule that mentions `oldSelf` is a transition rule: it needs the object's previous version,
  which does not exist offline; it is never evaluated (`Compiled.skip`);
- cost: cel-go's runtime cost units are charged as the API server charges them where they grow
  with the input (string and list operations by size, `matches` by length times pattern, every
  comprehension iteration), and as a fixed count of the expression's nodes otherwise
  (`weight`); an evaluation stops at its limit (`CostExceeded`), see `PER_CALL_LIMIT`;
- `date`, `date-time` and `byte` formatted strings stay strings (only `duration` becomes a
  duration); list-type `set`/`map` equality is plain list equality.
"""

from __future__ import annotations

import functools
import ipaddress
import math
import re
from collections.abc import Callable, Mapping
from typing import Any

from policylint.k8s import urls
from policylint.k8s.cel_cost import BINOP_PRICES, ITERATION, PER_CALL_LIMIT, PRICES, weight

# -- errors ---------------------------------------------------------------------------------------


class CompileError(Exception):
    """A rule that cannot be compiled: a syntax error, or what this implementation does not
    support (`unsupported` names the function or syntax)."""

    def __init__(self, message: str, unsupported: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.unsupported = unsupported


class EvalError(Exception):
    """An evaluation error (cel-go's `types.Err`): no such key, no such overload, overflow, ..."""

    cost = 0  # what the evaluation had cost when it failed (`Compiled.run`)

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class BadValue(EvalError):
    """The rule read a value whose type its schema rejects: PL703 reports it, not the rule."""


class CostExceeded(EvalError):
    """The evaluation reached its cost limit (`Activation.limit`): the API server cancels it and
    refuses the object. `per_call` says which limit: the one of every evaluation
    (`PER_CALL_LIMIT`), else what was left of the object's budget (`RUNTIME_BUDGET`)."""

    def __init__(self, message: str, per_call: bool = True) -> None:
        super().__init__(message)
        self.per_call = per_call


class TooLarge(EvalError):
    """The rule built a value longer than `MAX_LENGTH` or nested too deeply for policylint to
    evaluate: an offline bound, not the API server's, so the verdict is left undecided."""


# Strings, bytes and lists built during an evaluation (`+`, `split`, `join`, `map`) beyond this
# length stop it too (memory; the cost limits would allow a few such values).
MAX_LENGTH = 1 << 22
# Parentheses, brackets and operators nested deeper than this are a compile error (cel-go's
# parser has the same kind of limit), so neither the parser nor the evaluator can overflow the
# Python stack.
MAX_DEPTH = 64

# -- values ---------------------------------------------------------------------------------------


class UInt(int):
    """A CEL `uint` (a Python int marked as unsigned)."""

    __slots__ = ()


class Duration:
    """A CEL `google.protobuf.Duration`, in nanoseconds."""

    __slots__ = ("ns",)

    def __init__(self, ns: int) -> None:
        self.ns = ns

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Duration) and other.ns == self.ns

    def __hash__(self) -> int:
        return hash(self.ns)

    def __repr__(self) -> str:
        return f"duration({self.ns}ns)"


class Optional:
    """A CEL optional value (`optional.none()`, `optional.of(x)`); `value` is `_NONE` for none."""

    __slots__ = ("value",)

    def __init__(self, value: Any) -> None:
        self.value = value


_NONE = object()


class NamedFormat:
    """A Kubernetes CEL format (`format.dns1123Label()`): validate(s) -> ?list<string>."""

    __slots__ = ("name", "validate")

    def __init__(self, name: str, validate: Callable[[str], list[str]]) -> None:
        self.name = name
        self.validate = validate


_INT_MIN, _INT_MAX = -(1 << 63), (1 << 63) - 1
_UINT_MAX = (1 << 64) - 1


def type_name(value: Any) -> str:
    t = type(value)
    if t is bool:
        return "bool"
    if t is int:
        return "int"
    if t is UInt:
        return "uint"
    if t is float:
        return "double"
    if t is str:
        return "string"
    if t is bytes:
        return "bytes"
    if value is None:
        return "null_type"
    if t is list:
        return "list"
    if t is dict:
        return "map"
    if t is Duration:
        return "google.protobuf.Duration"
    if t is Optional:
        return "optional_type"
    if t is NamedFormat:
        return "kubernetes.NamedFormat"
    if t is urls.URL:
        return "kubernetes.URL"
    return t.__name__


def _overload(name: str, *args: Any) -> EvalError:
    return EvalError(f"no such overload: {name}({', '.join(type_name(a) for a in args)})")


def _int(value: int) -> int:
    if value < _INT_MIN or value > _INT_MAX:
        raise EvalError("integer overflow")
    return value


def _uint(value: int) -> UInt:
    if value < 0 or value > _UINT_MAX:
        raise EvalError("unsigned integer overflow")
    return UInt(value)


_NUMBERS = (int, UInt, float)


def equals(a: Any, b: Any) -> bool:
    """CEL's heterogeneous equality: values of different types are unequal, except numbers,
    which compare by value (`1 == 1.0`, `1u == 1`)."""
    ta, tb = type(a), type(b)
    if ta is not tb:
        return ta in _NUMBERS and tb in _NUMBERS and a == b
    if ta is list:
        return len(a) == len(b) and all(equals(x, y) for x, y in zip(a, b))
    if ta is dict:
        if len(a) != len(b):
            return False
        for k, v in a.items():
            other = _map_get(b, k)
            if other is _NONE or not equals(v, other):
                return False
        return True
    if ta is Optional:
        if a.value is _NONE or b.value is _NONE:
            return a.value is b.value
        return equals(a.value, b.value)
    if ta is NamedFormat:
        return bool(a.name == b.name)
    return bool(a == b)


def _map_get(m: dict[Any, Any], key: Any) -> Any:
    """A map's value for a key, numbers matching across int, uint and double; _NONE if absent."""
    tk = type(key)
    if tk is bool:
        for k, v in m.items():
            if type(k) is bool and k == key:
                return v
        return _NONE
    if tk in _NUMBERS:
        for k, v in m.items():
            if type(k) in _NUMBERS and k == key:
                return v
        return _NONE
    return m.get(key, _NONE) if tk is str else _NONE


def _compare(op: str, a: Any, b: Any) -> int:
    """-1, 0 or 1 for a `<` comparison; numbers compare across types, others need one type."""
    ta, tb = type(a), type(b)
    if ta in _NUMBERS and tb in _NUMBERS:
        if (isinstance(a, float) and math.isnan(a)) or (isinstance(b, float) and math.isnan(b)):
            return 2  # nothing is ordered with NaN
        return int((a > b) - (a < b))
    if ta is tb and ta in (str, bytes, bool):
        return int((a > b) - (a < b))
    if ta is tb is Duration:
        return int((a.ns > b.ns) - (a.ns < b.ns))
    raise _overload(op, a, b)


# -- lexer ----------------------------------------------------------------------------------------

_TOKEN = re.compile(
    r"""
    (?P<ws>[\t\n\f\r ]+|//[^\n]*)
  | (?P<float>(?:[0-9]+\.[0-9]+(?:[eE][+-]?[0-9]+)?|[0-9]+[eE][+-]?[0-9]+|\.[0-9]+(?:[eE][+-]?[0-9]+)?))
  | (?P<hex>0[xX][0-9a-fA-F]+[uU]?)
  | (?P<int>[0-9]+[uU]?)
  | (?P<string>[rRbB]{0,2}(?:\"\"\"|'''|"|'))
  | (?P<ident>[A-Za-z_][A-Za-z0-9_]*)
  | (?P<op>\|\||&&|==|!=|<=|>=|\.\?|\[\?|[-+*/%!<>?:.,\[\](){}])
    """,
    re.VERBOSE,
)
_ESCAPES = {
    "a": "\a",
    "b": "\b",
    "f": "\f",
    "n": "\n",
    "r": "\r",
    "t": "\t",
    "v": "\v",
    "\\": "\\",
    "'": "'",
    '"': '"',
    "`": "`",
    "?": "?",
}
_RESERVED = frozenset(
    {
        "as",
        "break",
        "const",
        "continue",
        "else",
        "for",
        "function",
        "if",
        "import",
        "let",
        "loop",
        "package",
        "namespace",
        "return",
        "var",
        "void",
        "while",
    }
)


def _lex(text: str) -> list[tuple[str, Any, int]]:
    """(kind, value, offset) tokens; kinds: int, uint, float, string, bytes, ident, op, end."""
    out: list[tuple[str, Any, int]] = []
    pos, n = 0, len(text)
    while pos < n:
        m = _TOKEN.match(text, pos)
        if m is None:
            raise CompileError(f"Syntax error: token recognition error at: {text[pos]!r} (offset {pos})")
        kind = m.lastgroup
        value = m.group()
        if kind == "ws":
            pos = m.end()
            continue
        if kind == "string":
            pos = _string(text, pos, m.end(), value, out)
            continue
        if kind in ("int", "hex"):
            unsigned = value[-1] in "uU"
            digits = value[:-1] if unsigned else value
            number = int(digits, 16 if kind == "hex" else 10)
            if unsigned:
                if number > _UINT_MAX:
                    raise CompileError(f"invalid uint literal: {value}")
                out.append(("uint", UInt(number), pos))
            else:
                out.append(("int", number, pos))  # range checked by the parser (a leading '-')
        elif kind == "float":
            out.append(("float", float(value), pos))
        elif kind == "ident":
            out.append(("ident", value, pos))
        else:
            out.append(("op", value, pos))
        pos = m.end()
    out.append(("end", None, n))
    return out


def _string(text: str, start: int, body: int, opener: str, out: list[tuple[str, Any, int]]) -> int:
    prefix = opener.rstrip("\"'").lower()
    if len(set(prefix)) != len(prefix):
        raise CompileError(f"Syntax error: bad string prefix at offset {start}")
    quote = opener[len(prefix) :]
    raw, is_bytes = "r" in prefix, "b" in prefix
    chars: list[str] = []
    pos, n = body, len(text)
    while True:
        if pos >= n:
            raise CompileError(f"Syntax error: unterminated string at offset {start}")
        if text.startswith(quote, pos):
            pos += len(quote)
            break
        c = text[pos]
        if c == "\n" and len(quote) == 1:
            raise CompileError(f"Syntax error: newline in a string at offset {pos}")
        if c == "\\" and not raw:
            pos, piece = _escape(text, pos, is_bytes)
            chars.append(piece)
            continue
        chars.append(c)
        pos += 1
    value = "".join(chars)
    if is_bytes:
        try:
            out.append(("bytes", value.encode("latin-1" if not raw else "utf-8"), start))
        except UnicodeEncodeError:
            out.append(("bytes", value.encode("utf-8"), start))
    else:
        out.append(("string", value, start))
    return pos


def _escape(text: str, pos: int, is_bytes: bool) -> tuple[int, str]:
    c = text[pos + 1 : pos + 2]
    if c in _ESCAPES:
        return pos + 2, _ESCAPES[c]
    width = {"x": 2, "X": 2, "u": 4, "U": 8}.get(c)
    if width is not None and not (is_bytes and c in "uU"):
        digits = text[pos + 2 : pos + 2 + width]
        if len(digits) == width and all(d in "0123456789abcdefABCDEF" for d in digits):
            code = int(digits, 16)
            if code > 0x10FFFF or 0xD800 <= code <= 0xDFFF:
                raise CompileError(f"Syntax error: invalid unicode escape at offset {pos}")
            return pos + 2 + width, chr(code)
    digits = text[pos + 1 : pos + 4]
    if len(digits) == 3 and all(d in "01234567" for d in digits) and digits[0] in "0123":
        return pos + 4, chr(int(digits, 8))
    raise CompileError(f"Syntax error: invalid escape sequence at offset {pos}")


# -- parser: CEL's grammar (github.com/google/cel-spec doc/langdef.md) to a tuple AST -------------
#
# Nodes: ("lit", v) ("ident", name) ("select", operand, field) ("has", operand, field)
# ("index", operand, key) ("call", name, target | None, args) ("list", items) ("map", pairs)
# ("cond", c, a, b) ("and", a, b) ("or", a, b) ("not", a) ("neg", a) ("binop", op, a, b)
# ("comp", macro, operand, var, args)

Node = tuple[Any, ...]
_MACROS = frozenset({"all", "exists", "exists_one", "map", "filter"})


class _Parser:
    def __init__(self, text: str) -> None:
        self.tokens = _lex(text)
        self.i = 0
        self.depth = 0

    def peek(self) -> tuple[str, Any, int]:
        return self.tokens[self.i]

    def take(self) -> tuple[str, Any, int]:
        token = self.tokens[self.i]
        self.i += 1
        return token

    def at(self, op: str) -> bool:
        kind, value, _ = self.tokens[self.i]
        return kind == "op" and value == op

    def expect(self, op: str) -> None:
        kind, value, offset = self.take()
        if kind != "op" or value != op:
            shown = "end of input" if kind == "end" else repr(value)
            raise CompileError(f"Syntax error: expected {op!r}, found {shown} at offset {offset}")

    def parse(self) -> Node:
        node = self.expr()
        kind, value, offset = self.peek()
        if kind != "end":
            raise CompileError(f"Syntax error: unexpected {value!r} at offset {offset}")
        return node

    def nest(self) -> None:
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise CompileError(f"expression nested deeper than {MAX_DEPTH} levels")

    def expr(self) -> Node:
        self.nest()
        cond = self.or_()
        if self.at("?"):
            self.take()
            yes = self.or_()
            self.expect(":")
            no = self.expr()
            cond = ("cond", cond, yes, no)
        self.depth -= 1
        return cond

    def or_(self) -> Node:
        node = self.and_()
        while self.at("||"):
            self.take()
            node = ("or", node, self.and_())
        return node

    def and_(self) -> Node:
        node = self.relation()
        while self.at("&&"):
            self.take()
            node = ("and", node, self.relation())
        return node

    def relation(self) -> Node:
        node = self.addition()
        while True:
            kind, value, _ = self.peek()
            if (kind == "op" and value in ("<", "<=", ">", ">=", "==", "!=")) or (kind == "ident" and value == "in"):
                self.take()
                node = ("binop", value, node, self.addition())
            else:
                return node

    def addition(self) -> Node:
        node = self.multiplication()
        while self.at("+") or self.at("-"):
            op = self.take()[1]
            node = ("binop", op, node, self.multiplication())
        return node

    def multiplication(self) -> Node:
        node = self.unary()
        while self.at("*") or self.at("/") or self.at("%"):
            op = self.take()[1]
            node = ("binop", op, node, self.unary())
        return node

    def unary(self) -> Node:
        if self.at("!"):
            self.take()
            self.nest()
            node = ("not", self.unary())
            self.depth -= 1
            return node
        if self.at("-"):
            self.take()
            kind, value, _ = self.peek()
            if kind == "int" and not self._member_follows():
                self.take()
                return ("lit", _literal_int(-value))
            if kind == "float" and not self._member_follows():
                self.take()
                return ("lit", -value)
            self.nest()
            node = ("neg", self.unary())
            self.depth -= 1
            return node
        return self.member()

    def _member_follows(self) -> bool:
        kind, value, _ = self.tokens[self.i + 1]
        return kind == "op" and value in (".", "[", ".?", "[?")

    def member(self) -> Node:
        node = self.primary()
        while True:
            if self.at(".?") or self.at("[?"):
                raise CompileError("optional field selection (`.?`, `[?`) is not supported", unsupported="optional syntax")
            if self.at("."):
                self.take()
                kind, name, offset = self.take()
                if kind != "ident":
                    raise CompileError(f"Syntax error: expected a field name at offset {offset}")
                if self.at("("):
                    node = self.call(name, node)
                else:
                    node = ("select", node, name)
            elif self.at("["):
                self.take()
                key = self.expr()
                self.expect("]")
                node = ("index", node, key)
            else:
                return node

    def args(self, close: str) -> list[Node]:
        items: list[Node] = []
        while not self.at(close):
            items.append(self.expr())
            if not self.at(","):
                break
            self.take()
        self.expect(close)
        return items

    def call(self, name: str, target: Node | None) -> Node:
        self.expect("(")
        args = self.args(")")
        if target is None and name == "has":
            if len(args) != 1 or args[0][0] != "select":
                raise CompileError("invalid argument to has() macro")
            return ("has", args[0][1], args[0][2])
        if target is not None and name in _MACROS:
            if not args or args[0][0] != "ident":
                raise CompileError(f"{name}() macro: the first argument must be a simple name")
            count = len(args) - 1
            if not (count == 1 or (name == "map" and count == 2)):
                raise CompileError(
                    f"{name}() macro with {len(args)} arguments is not supported", unsupported=f"{name}/{len(args)}"
                )
            return ("comp", name, target, args[0][1], args[1:])
        return ("call", name, target, args)

    def primary(self) -> Node:
        kind, value, offset = self.take()
        if kind in ("int", "uint", "float", "string", "bytes"):
            return ("lit", _literal_int(value) if kind == "int" else value)
        if kind == "ident":
            if value in ("true", "false"):
                return ("lit", value == "true")
            if value == "null":
                return ("lit", None)
            if value in _RESERVED or value == "in":
                raise CompileError(f"Syntax error: reserved identifier {value!r} at offset {offset}")
            if self.at("("):
                return self.call(value, None)
            if self.at("{"):
                raise CompileError("message construction is not supported", unsupported="message construction")
            return ("ident", value)
        if kind == "op" and value == ".":
            raise CompileError("leading-dot names are not supported", unsupported="leading-dot names")
        if kind == "op" and value == "(":
            node = self.expr()
            self.expect(")")
            return node
        if kind == "op" and value == "[":
            self.nest()
            items = self.args("]")
            self.depth -= 1
            return ("list", items)
        if kind == "op" and value == "{":
            self.nest()
            pairs: list[tuple[Node, Node]] = []
            while not self.at("}"):
                key = self.expr()
                self.expect(":")
                pairs.append((key, self.expr()))
                if not self.at(","):
                    break
                self.take()
            self.expect("}")
            self.depth -= 1
            return ("map", pairs)
        shown = "end of input" if kind == "end" else repr(value)
        raise CompileError(f"Syntax error: unexpected {shown} at offset {offset}")


def _literal_int(value: int) -> int:
    if value < _INT_MIN or value > _INT_MAX:
        raise CompileError(f"invalid int literal: {value}")
    return value


def parse(text: str) -> Node:
    return _Parser(text).parse()


# -- the evaluator: the AST compiled to closures over an activation -------------------------------


class Activation:
    """The variables of one evaluation, the cost it has run up and the cost it may reach."""

    __slots__ = ("cost", "limit", "per_call", "vars")

    def __init__(self, variables: dict[str, Any], limit: int = PER_CALL_LIMIT) -> None:
        self.vars = variables
        self.cost = 0
        self.limit = limit if limit < PER_CALL_LIMIT else PER_CALL_LIMIT
        self.per_call = limit >= PER_CALL_LIMIT  # which limit `limit` is, for the error

    def over(self) -> CostExceeded:
        """The error of an evaluation whose cost passed its limit."""
        if self.per_call:
            return CostExceeded("operation cancelled: actual cost limit exceeded")
        return CostExceeded("validation failed due to running out of cost budget", per_call=False)


Eval = Callable[[Activation], Any]


def _select(value: Any, field: str) -> Any:
    if type(value) is dict:
        got = value.get(field, _NONE)
        if got is _NONE:
            raise EvalError(f"no such key: {field}")
        if got is _BAD:
            raise BadValue(f"the value of {field} has a type its schema rejects")
        return got
    if value is _BAD:
        raise BadValue("a value has a type its schema rejects")
    raise EvalError(f"type '{type_name(value)}' does not support field selection")


def _has(value: Any, field: str) -> bool:
    if type(value) is dict:
        return field in value
    if value is _BAD:
        raise BadValue("a value has a type its schema rejects")
    raise EvalError(f"invalid type for field selection: {type_name(value)}")


def _index(value: Any, key: Any) -> Any:
    t = type(value)
    if t is list:
        if type(key) in (int, UInt) or (type(key) is float and key.is_integer()):
            i = int(key)
            if 0 <= i < len(value):
                got = value[i]
                if got is _BAD:
                    raise BadValue("a list item has a type its schema rejects")
                return got
            raise EvalError(f"index out of bounds: {i}")
        raise _overload("_[_]", value, key)
    if t is dict:
        got = _map_get(value, key)
        if got is _NONE:
            raise EvalError(f"no such key: {key}")
        if got is _BAD:
            raise BadValue("a map value has a type its schema rejects")
        return got
    if value is _BAD:
        raise BadValue("a value has a type its schema rejects")
    raise _overload("_[_]", value, key)


def _check_length(a: Any, b: Any) -> None:
    if len(a) + len(b) > MAX_LENGTH:
        raise TooLarge(f"a value built by the rule is longer than {MAX_LENGTH}")


def _add(a: Any, b: Any) -> Any:
    ta, tb = type(a), type(b)
    if ta is tb:
        if ta is int:
            return _int(a + b)
        if ta is float:
            return a + b
        if ta is UInt:
            return _uint(a + b)
        if ta in (str, bytes, list):
            _check_length(a, b)  # before building it
            return a + b
        if ta is Duration:
            return Duration(_int(a.ns + b.ns))
    raise _overload("_+_", a, b)


def _sub(a: Any, b: Any) -> Any:
    ta, tb = type(a), type(b)
    if ta is tb:
        if ta is int:
            return _int(a - b)
        if ta is float:
            return a - b
        if ta is UInt:
            return _uint(a - b)
        if ta is Duration:
            return Duration(_int(a.ns - b.ns))
    raise _overload("_-_", a, b)


def _mul(a: Any, b: Any) -> Any:
    ta, tb = type(a), type(b)
    if ta is tb:
        if ta is int:
            return _int(a * b)
        if ta is float:
            return a * b
        if ta is UInt:
            return _uint(a * b)
    raise _overload("_*_", a, b)


def _div(a: Any, b: Any) -> Any:
    ta, tb = type(a), type(b)
    if ta is tb:
        if ta is float:
            if b == 0:
                return math.copysign(math.inf, a) * math.copysign(1.0, b) if a != 0 and not math.isnan(a) else math.nan
            return a / b
        if ta in (int, UInt):
            if b == 0:
                raise EvalError("division by zero")
            q = abs(a) // abs(b)  # Go truncates toward zero
            q = q if (a >= 0) == (b >= 0) else -q
            return _uint(q) if ta is UInt else _int(q)
    raise _overload("_/_", a, b)


def _mod(a: Any, b: Any) -> Any:
    ta, tb = type(a), type(b)
    if ta is tb and ta in (int, UInt):
        if b == 0:
            raise EvalError("modulus by zero")
        r = abs(a) % abs(b)  # Go: the sign of the dividend
        r = -r if a < 0 else r
        return UInt(r) if ta is UInt else r
    raise _overload("_%_", a, b)


def _in(a: Any, b: Any) -> bool:
    if type(b) is list:
        return any(equals(a, x) for x in b)
    if type(b) is dict:
        return _map_get(b, a) is not _NONE
    raise _overload("@in", a, b)


_BINOPS: dict[str, Callable[[Any, Any], Any]] = {
    "+": _add,
    "-": _sub,
    "*": _mul,
    "/": _div,
    "%": _mod,
    "==": equals,
    "!=": lambda a, b: not equals(a, b),
    "<": lambda a, b: _compare("_<_", a, b) == -1,
    "<=": lambda a, b: _compare("_<=_", a, b) in (-1, 0),
    ">": lambda a, b: _compare("_>_", a, b) == 1,
    ">=": lambda a, b: _compare("_>=_", a, b) in (0, 1),
    "in": _in,
}


class _Compiler:
    def __init__(self, variables: frozenset[str]) -> None:
        self.scope = set(variables)

    def compile(self, node: Node) -> Eval:
        kind = node[0]
        method: Callable[[Node], Eval] = getattr(self, "c_" + kind)
        return method(node)

    def c_lit(self, node: Node) -> Eval:
        value = node[1]
        return lambda a: value

    def c_ident(self, node: Node) -> Eval:
        name = node[1]
        if name not in self.scope:
            raise CompileError(f"undeclared reference to '{name}'")

        def ident(a: Activation) -> Any:
            value = a.vars[name]
            if value is _BAD:
                raise BadValue("the value has a type its schema rejects")
            return value

        return ident

    def c_select(self, node: Node) -> Eval:
        qualified = _qualified(node)
        if qualified is not None and qualified.split(".")[0] not in self.scope:
            raise CompileError(f"undeclared reference to '{qualified}'")
        operand, field = self.compile(node[1]), node[2]
        if node[1][0] == "ident":
            name = node[1][1]

            def select_name(a: Activation) -> Any:  # `self.x`, `l.x`: the common case, one call
                value = a.vars[name]
                if type(value) is dict:
                    got = value.get(field, _NONE)
                    if got is not _NONE and got is not _BAD:
                        return got
                return _select(operand(a), field)

            return select_name

        def select(a: Activation) -> Any:
            value = operand(a)
            if type(value) is dict:
                got = value.get(field, _NONE)
                if got is not _NONE and got is not _BAD:
                    return got
            return _select(value, field)  # the error, or a map's BAD value

        return select

    def c_has(self, node: Node) -> Eval:
        operand, field = self.compile(node[1]), node[2]
        if node[1][0] == "ident":
            name = node[1][1]

            def has_name(a: Activation) -> bool:
                value = a.vars[name]
                if type(value) is dict:
                    return field in value
                return _has(operand(a), field)

            return has_name

        def has(a: Activation) -> bool:
            value = operand(a)
            if type(value) is dict:
                return field in value
            return _has(value, field)

        return has

    def c_index(self, node: Node) -> Eval:
        operand, key = self.compile(node[1]), self.compile(node[2])
        return lambda a: _index(operand(a), key(a))

    def c_list(self, node: Node) -> Eval:
        items = [self.compile(n) for n in node[1]]
        return lambda a: [f(a) for f in items]

    def c_map(self, node: Node) -> Eval:
        pairs = [(self.compile(k), self.compile(v)) for k, v in node[1]]

        def build(a: Activation) -> dict[Any, Any]:
            out: dict[Any, Any] = {}
            for kf, vf in pairs:
                key = kf(a)
                if type(key) not in (str, int, UInt, bool):
                    raise EvalError(f"unsupported key type: {type_name(key)}")
                if _map_get(out, key) is not _NONE:
                    raise EvalError(f"Failed with repeated key: {key}")
                out[key] = vf(a)
            return out

        return build

    def c_cond(self, node: Node) -> Eval:
        cond, yes, no = (self.compile(n) for n in node[1:])

        def conditional(a: Activation) -> Any:
            c = cond(a)
            if c is True:
                return yes(a)
            if c is False:
                return no(a)
            raise _overload("_?_:_", c)

        return conditional

    def c_and(self, node: Node) -> Eval:
        left, right = self.compile(node[1]), self.compile(node[2])

        def and_(a: Activation) -> bool:
            # CEL's logical operators are commutative over errors: false && error is false.
            try:
                x = left(a)
            except EvalError as exc:
                try:
                    y = right(a)
                except EvalError as other:
                    raise _first(exc, other) from None
                if y is False:
                    return False
                raise exc if type(y) is bool else _overload("_&&_", y) from None
            if x is False:
                return False
            if x is not True:
                y = right(a)
                if y is False:
                    return False
                raise _overload("_&&_", x, y)
            y = right(a)
            if type(y) is not bool:
                raise _overload("_&&_", x, y)
            return y

        return and_

    def c_or(self, node: Node) -> Eval:
        left, right = self.compile(node[1]), self.compile(node[2])

        def or_(a: Activation) -> bool:
            try:
                x = left(a)
            except EvalError as exc:
                try:
                    y = right(a)
                except EvalError as other:
                    raise _first(exc, other) from None
                if y is True:
                    return True
                raise exc if type(y) is bool else _overload("_||_", y) from None
            if x is True:
                return True
            if x is not False:
                y = right(a)
                if y is True:
                    return True
                raise _overload("_||_", x, y)
            y = right(a)
            if type(y) is not bool:
                raise _overload("_||_", x, y)
            return y

        return or_

    def c_not(self, node: Node) -> Eval:
        operand = self.compile(node[1])

        def not_(a: Activation) -> bool:
            x = operand(a)
            if type(x) is not bool:
                raise _overload("!_", x)
            return not x

        return not_

    def c_neg(self, node: Node) -> Eval:
        operand = self.compile(node[1])

        def neg(a: Activation) -> Any:
            x = operand(a)
            if type(x) is int:
                return _int(-x)
            if type(x) is float:
                return -x
            if type(x) is Duration:
                return Duration(_int(-x.ns))
            raise _overload("-_", x)

        return neg

    def c_binop(self, node: Node) -> Eval:
        op, left_node, right_node = node[1], node[2], node[3]
        left, right = self.compile(left_node), self.compile(right_node)
        # The common shapes, without the general dispatch: a value compared with a string or
        # integer literal, and membership in a list of string literals.
        if op in ("==", "!=") and right_node[0] == "lit" and type(right_node[1]) in (str, int):
            literal, kind, negate = right_node[1], type(right_node[1]), op == "!="
            if kind is int:
                return lambda a: equals(left(a), literal) is not negate

            def compare_literal(a: Activation) -> bool:
                value = left(a)
                return (type(value) is kind and value == literal) is not negate

            return compare_literal
        if (
            op == "in"
            and right_node[0] == "list"
            and right_node[1]
            and all(n[0] == "lit" and type(n[1]) is str for n in right_node[1])
        ):
            members = frozenset(n[1] for n in right_node[1])

            def member(a: Activation) -> bool:
                value = left(a)
                return type(value) is str and value in members

            return member
        fn = _BINOPS[op]
        price = BINOP_PRICES.get(op)
        if price is not None:

            def priced(a: Activation) -> Any:
                x, y = left(a), right(a)
                a.cost += price(x, y) - 1  # the operator's own unit is in the fixed part
                if a.cost > a.limit:
                    raise a.over()
                return fn(x, y)

            return priced
        return lambda a: fn(left(a), right(a))

    def c_comp(self, node: Node) -> Eval:
        macro, var = node[1], node[3]
        operand = self.compile(node[2])
        if var in self.scope:
            raise CompileError(f"{macro}() macro: variable {var!r} shadows another")
        self.scope.add(var)
        try:
            bodies = [self.compile(n) for n in node[4]]
        finally:
            self.scope.discard(var)
        each = ITERATION[macro] + sum(weight(n) for n in node[4])
        loop = _comprehension(macro, operand, var, bodies, each)
        if macro == "all":
            terms = _uniqueness_terms(node)
            if terms is not None:
                inner = node[4][0]
                return _uniqueness(operand, terms, loop, each, ITERATION["exists_one"] + weight(inner[4][0]))
        return loop

    def c_call(self, node: Node) -> Eval:
        name, target, arg_nodes = node[1], node[2], node[3]
        if target is not None:
            qualified = _qualified(target)
            if qualified is not None and qualified.split(".")[0] not in self.scope and f"{qualified}.{name}" in FUNCTIONS:
                # `format.dns1123Label()`, `optional.none()`: a namespaced global function.
                name, target = f"{qualified}.{name}", None
        # The receiver and the arguments first: an unsupported function inside names itself.
        args = [self.compile(n) for n in arg_nodes]
        receiver = self.compile(target) if target is not None else None
        spec = FUNCTIONS.get(name)
        if spec is None:
            raise CompileError(f"undeclared reference to '{name}'", unsupported=name)
        fn, member, arities = spec
        if receiver is not None:
            if member is False:
                raise CompileError(f"{name}() is a global function, not a method", unsupported=name)
            args.insert(0, receiver)
        elif member is True:
            raise CompileError(f"{name}() is a method, not a global function", unsupported=name)
        if len(args) not in arities:
            raise CompileError(f"found no matching overload for '{name}' with {len(args)} arguments", unsupported=name)
        price = PRICES.get(name)
        if price is not None:

            def priced(a: Activation) -> Any:
                values = [f(a) for f in args]
                a.cost += price(*values) - 1  # the call's own unit is in the fixed part
                if a.cost > a.limit:
                    raise a.over()
                return fn(*values)

            return priced
        if len(args) == 0:
            return lambda a: fn()
        if len(args) == 1:
            (f0,) = args
            return lambda a: fn(f0(a))
        if len(args) == 2:
            f0, f1 = args
            return lambda a: fn(f0(a), f1(a))
        return lambda a: fn(*(f(a) for f in args))


def _first(left: EvalError, right: EvalError) -> EvalError:
    """The error of a logical operator whose two sides failed: the left one, as cel-go reports,
    unless the right one read a value of the wrong type (which is PL703's to report)."""
    return right if isinstance(right, BadValue) and not isinstance(left, BadValue) else left


def _qualified(node: Node) -> str | None:
    """`a.b.c` for a chain of field selections on a name, else None."""
    parts: list[str] = []
    while node[0] == "select":
        parts.append(node[2])
        node = node[1]
    if node[0] != "ident":
        return None
    parts.append(node[1])
    return ".".join(reversed(parts))


def _items(value: Any, macro: str) -> list[Any]:
    if type(value) is list:
        return value
    if type(value) is dict:
        return list(value)  # a map's comprehension ranges over its keys
    if value is _BAD:
        raise BadValue("a value has a type its schema rejects")
    raise EvalError(f"{macro}() macro: expression does not evaluate to a list or a map: {type_name(value)}")


def _comprehension(macro: str, operand: Eval, var: str, bodies: list[Eval], each: int) -> Eval:
    """A macro's loop; each iteration costs `each` (cel-go's fold: the loop condition and step
    and the body's nodes, `ITERATION` and `weight`), charged before the iteration runs."""
    body = bodies[0]

    def loop(a: Activation) -> Any:
        items = _items(operand(a), macro)
        saved = a.vars.get(var, _NONE)
        try:
            return run(a, items)
        finally:
            if saved is _NONE:
                a.vars.pop(var, None)
            else:
                a.vars[var] = saved

    if macro in ("all", "exists"):
        stop = macro == "exists"  # the value that decides: all() stops at false, exists() at true

        def run(a: Activation, items: list[Any]) -> Any:
            variables = a.vars
            error: EvalError | None = None
            for item in items:
                a.cost += each
                if a.cost > a.limit:
                    raise a.over()
                variables[var] = item
                try:
                    x = body(a)
                except (CostExceeded, TooLarge):
                    raise
                except EvalError as exc:
                    error = exc if error is None else _first(error, exc)  # absorbed if another item decides
                    continue
                if x is stop:
                    return stop
                if type(x) is not bool:
                    error = error or _overload("_&&_" if not stop else "_||_", x)
            if error is not None:
                raise error
            return not stop

    elif macro == "exists_one":

        def run(a: Activation, items: list[Any]) -> Any:
            variables = a.vars
            count = 0
            for item in items:
                a.cost += each
                if a.cost > a.limit:
                    raise a.over()
                variables[var] = item
                x = body(a)
                if x is True:
                    count += 1
                elif x is not False:
                    raise _overload("exists_one", x)
            return count == 1

    elif macro == "filter":

        def run(a: Activation, items: list[Any]) -> Any:
            variables = a.vars
            out = []
            for item in items:
                a.cost += each
                if a.cost > a.limit:
                    raise a.over()
                variables[var] = item
                x = body(a)
                if x is True:
                    out.append(item)
                elif x is not False:
                    raise _overload("filter", x)
            return out

    else:  # map, with an optional filter first
        transform = bodies[-1]
        keep = bodies[0] if len(bodies) == 2 else None

        def run(a: Activation, items: list[Any]) -> Any:
            variables = a.vars
            out = []
            for item in items:
                a.cost += each
                if a.cost > a.limit:
                    raise a.over()
                variables[var] = item
                if keep is not None:
                    x = keep(a)
                    if x is False:
                        continue
                    if x is not True:
                        raise _overload("map", x)
                out.append(transform(a))
            return out

    return loop


# -- uniqueness rules in linear time ---------------------------------------------------------------
#
# `self.all(x, self.exists_one(y, x.a == y.a && ...))`, the CRDs' way of saying "the items are
# unique by these fields", is quadratic as written: a Gateway with 64 listeners evaluates the
# body 4,096 times. When the body is a conjunction of the comparisons below, each item's result
# depends on a key of its own (the compared fields), so one pass counting the keys answers:
# `exists_one` holds for an item iff its key occurs once. The shortcut answers only where that is
# exactly what the closures would answer: every item a map whose compared fields are absent or
# hold a plain scalar (no error can arise, every comparison is a bool). Otherwise the rule runs
# as written (`loop`). The cost is charged as the closures would charge it (every comparison of
# plain scalars costs one unit, counted in the static weights), so the limits stop the same
# evaluations with the same error at the same cost.

_ABSENT = object()  # a key's part for a field an item does not have
_EMPTY = object()  # ... for a field that is absent or holds the rule's "empty" literal
_UNCLEAN = object()  # an item the shortcut does not answer for


def _uniqueness_terms(node: Node) -> tuple[tuple[str, str, Any], ...] | None:
    """The key of `self.all(x, self.exists_one(y, BODY))` when BODY is a conjunction of
    `x.f == y.f` ("eq"), `has(x.f) && has(y.f) ? x.f == y.f : !has(x.f) && !has(y.f)` ("opt"),
    and `((!has(x.f) || x.f == L) && (!has(y.f) || y.f == L)) || (has(x.f) && has(y.f) &&
    x.f == y.f)` ("empty", a string or integer literal L), in either variable order: (kind,
    field, L) per term; None for any other rule."""
    _, _, operand, x, bodies = node
    if len(bodies) != 1:
        return None
    inner = bodies[0]
    if inner[0] != "comp" or inner[1] != "exists_one" or inner[2] != operand or len(inner[4]) != 1:
        return None
    y = inner[3]
    walk = operand
    while walk[0] == "select":
        walk = walk[1]
    if walk[0] != "ident" or walk[1] in (x, y):
        return None  # the range must be a plain name or field chain (pure, the same each time)
    pair = {x, y}

    def sel(n: Node) -> tuple[str, str] | None:
        if n[0] == "select" and n[1][0] == "ident" and n[1][1] in pair:
            return n[1][1], n[2]
        return None

    def has(n: Node) -> tuple[str, str] | None:
        if n[0] == "has" and n[1][0] == "ident" and n[1][1] in pair:
            return n[1][1], n[2]
        return None

    def both(a: tuple[str, str] | None, b: tuple[str, str] | None) -> str | None:
        """The field two accessors read, one on each variable."""
        if a is None or b is None or a[1] != b[1] or a[0] == b[0]:
            return None
        return a[1]

    def eq(n: Node) -> str | None:
        if n[0] == "binop" and n[1] == "==":
            return both(sel(n[2]), sel(n[3]))
        return None

    def not_has(n: Node) -> tuple[str, str] | None:
        return has(n[1]) if n[0] == "not" else None

    def empty(n: Node) -> tuple[tuple[str, str], Any] | None:
        """`!has(v.f) || v.f == L`: ((v, f), L)."""
        if n[0] != "or" or n[2][0] != "binop" or n[2][1] != "==" or n[2][3][0] != "lit":
            return None
        literal = n[2][3][1]
        absent, read = not_has(n[1]), sel(n[2][2])
        if absent is None or absent != read or type(literal) not in (str, int):
            return None
        return absent, literal

    def term(n: Node) -> tuple[str, str, Any] | None:
        field = eq(n)
        if field is not None:
            return ("eq", field, None)
        if n[0] == "cond" and n[1][0] == "and" and n[3][0] == "and":
            field = both(has(n[1][1]), has(n[1][2]))
            if field is not None and eq(n[2]) == field and both(not_has(n[3][1]), not_has(n[3][2])) == field:
                return ("opt", field, None)
        if n[0] == "or" and n[1][0] == "and" and n[2][0] == "and" and n[2][1][0] == "and":
            left, right = empty(n[1][1]), empty(n[1][2])
            if left is None or right is None or left[1] != right[1] or type(left[1]) is not type(right[1]):
                return None
            field = both(left[0], right[0])
            if field is not None and both(has(n[2][1][1]), has(n[2][1][2])) == field and eq(n[2][2]) == field:
                return ("empty", field, left[1])
        return None

    terms: list[tuple[str, str, Any]] = []
    stack = [inner[4][0]]
    while stack:
        n = stack.pop()
        if n[0] == "and":
            stack.extend((n[2], n[1]))
            continue
        found = term(n)
        if found is None:
            return None
        terms.append(found)
    return tuple(terms)


def _plain_key(value: Any) -> Any:
    """A value equal (CEL's `==`) to exactly the values whose key is equal, for the scalars the
    shortcut handles (numbers across int, uint and double; bools apart from numbers); _UNCLEAN
    for others."""
    t = type(value)
    if t is str or t is int or t is UInt or value is None:
        return value
    if t is float:
        return _UNCLEAN if value != value else value  # NaN equals nothing, itself included
    if t is bool:
        return (bool, value)
    return _UNCLEAN


def _uniqueness(operand: Eval, terms: tuple[tuple[str, str, Any], ...], loop: Eval, outer: int, inner: int) -> Eval:
    def key_of(item: dict[Any, Any]) -> Any:
        parts = []
        for kind, field, literal in terms:
            value = item.get(field, _ABSENT)
            if value is _BAD:
                return _UNCLEAN
            if value is _ABSENT:
                if kind == "eq":
                    return _UNCLEAN  # `x.f` fails: the closures decide what that means
                parts.append(_EMPTY if kind == "empty" else _ABSENT)
                continue
            if kind == "empty" and equals(value, literal):
                parts.append(_EMPTY)
                continue
            part = _plain_key(value)
            if part is _UNCLEAN:
                return _UNCLEAN
            parts.append(part)
        return tuple(parts)

    def unique(a: Activation) -> Any:
        try:
            items = operand(a)
        except EvalError:
            return loop(a)
        if type(items) is not list:
            return loop(a)
        keys = []
        for item in items:
            if type(item) is not dict:
                return loop(a)
            key = key_of(item)
            if key is _UNCLEAN:
                return loop(a)
            keys.append(key)
        counts: dict[Any, int] = {}
        for key in keys:
            counts[key] = counts.get(key, 0) + 1
        n = reached = len(keys)  # the items the outer all() evaluates: up to the first false
        result = True
        for i, key in enumerate(keys):
            if counts[key] != 1:
                reached, result = i + 1, False
                break
        # The cost as the closures charge it: each of the `reached` iterations of all() costs
        # `outer`, then its exists_one() `inner` per item; the first charge past the limit stops.
        per = outer + n * inner
        room = a.limit - a.cost
        done = room // per  # the iterations that fit whole
        if done >= reached:
            a.cost += reached * per
            return result
        a.cost += done * per + outer
        room -= done * per + outer
        if room >= 0:
            a.cost += (room // inner + 1) * inner  # the inner charge that passes the limit
        raise a.over()

    return unique


# -- functions ------------------------------------------------------------------------------------


def _size(x: Any) -> int:
    if type(x) in (str, bytes, list, dict):
        return len(x)
    raise _overload("size", x)


def _str_args(name: str, *args: Any) -> None:
    if any(type(a) is not str for a in args):
        raise _overload(name, *args)


def _contains(s: Any, sub: Any) -> bool:
    _str_args("contains", s, sub)
    return sub in s


def _starts(s: Any, prefix: Any) -> bool:
    _str_args("startsWith", s, prefix)
    return bool(s.startswith(prefix))


def _ends(s: Any, suffix: Any) -> bool:
    _str_args("endsWith", s, suffix)
    return bool(s.endswith(suffix))


@functools.lru_cache(maxsize=512)
def _regex(pattern: str) -> Any:
    """`matches()` and the Kubernetes regex functions use RE2, as cel-go does (Go's regexp):
    the same syntax, and linear time whatever pattern a CRD in the input brings (google-re2,
    a dependency of policylint's schema rules)."""
    import importlib

    re2: Any = importlib.import_module("re2")
    options = re2.Options()
    options.max_mem = 8 << 20  # a bound on the compiled program, as Go's regexp has
    options.log_errors = False  # RE2 would print parse errors to stderr itself
    try:
        return re2.compile(pattern, options)
    except re2.error as exc:
        detail = exc.args[0] if exc.args else exc
        if isinstance(detail, bytes):
            detail = detail.decode("utf-8", "replace")
        raise EvalError(f"invalid regular expression {pattern!r}: {detail}") from None


def _matches(s: Any, pattern: Any) -> bool:
    _str_args("matches", s, pattern)
    return _regex(pattern).search(s) is not None


def _find(s: Any, pattern: Any) -> str:
    _str_args("find", s, pattern)
    m = _regex(pattern).search(s)
    return m.group(0) if m is not None else ""


def _find_all(s: Any, pattern: Any, limit: Any = -1) -> list[str]:
    _str_args("findAll", s, pattern)
    if type(limit) is not int:
        raise _overload("findAll", s, pattern, limit)
    out = [m.group(0) for m in _regex(pattern).finditer(s)]
    return out if limit < 0 else out[:limit]


def _lower_ascii(s: Any) -> str:
    _str_args("lowerAscii", s)
    return str(s.translate(_LOWER))


def _upper_ascii(s: Any) -> str:
    _str_args("upperAscii", s)
    return str(s.translate(_UPPER))


_LOWER = {c: c + 32 for c in range(ord("A"), ord("Z") + 1)}
_UPPER = {c: c - 32 for c in range(ord("a"), ord("z") + 1)}


def _char_at(s: Any, i: Any) -> str:
    if type(s) is not str or type(i) is not int:
        raise _overload("charAt", s, i)
    if i < 0 or i > len(s):
        raise EvalError(f"index out of range: {i}")
    return s[i : i + 1]


def _index_of(s: Any, sub: Any, start: Any = 0) -> int:
    if type(s) is list:
        return _list_index_of(s, sub)
    if type(s) is not str or type(sub) is not str or type(start) is not int:
        raise _overload("indexOf", s, sub)
    if start < 0 or start > len(s):
        raise EvalError(f"index out of range: {start}")
    return s.find(sub, start)


def _last_index_of(s: Any, sub: Any, end: Any = None) -> int:
    if type(s) is list:
        for i in range(len(s) - 1, -1, -1):
            if equals(s[i], sub):
                return i
        return -1
    if type(s) is not str or type(sub) is not str or (end is not None and type(end) is not int):
        raise _overload("lastIndexOf", s, sub)
    if end is None:
        return s.rfind(sub)
    if end < 0 or end > len(s):
        raise EvalError(f"index out of range: {end}")
    return s.rfind(sub, 0, end + len(sub))


def _list_index_of(items: list[Any], value: Any) -> int:
    for i, item in enumerate(items):
        if equals(item, value):
            return i
    return -1


def _replace(s: Any, old: Any, new: Any, limit: Any = -1) -> str:
    if type(s) is not str or type(old) is not str or type(new) is not str or type(limit) is not int:
        raise _overload("replace", s, old, new)
    # The result's length first: `s.replace('', s)` would build len(s) squared characters.
    found = len(s) + 1 if old == "" else s.count(old)
    if limit >= 0:
        found = min(found, limit)
    if len(s) + found * (len(new) - len(old)) > MAX_LENGTH:
        raise TooLarge(f"a value built by the rule is longer than {MAX_LENGTH}")
    return str(s.replace(old, new, limit))


def _split(s: Any, sep: Any, limit: Any = -1) -> list[str]:
    if type(s) is not str or type(sep) is not str or type(limit) is not int:
        raise _overload("split", s, sep)
    if limit == 0:
        return []
    if sep == "":
        chars = list(s)
        return chars if limit < 0 or limit >= len(chars) else [*chars[: limit - 1], "".join(chars[limit - 1 :])]
    return s.split(sep, -1 if limit < 0 else limit - 1)


def _substring(s: Any, start: Any, end: Any = None) -> str:
    if type(s) is not str or type(start) is not int or (end is not None and type(end) is not int):
        raise _overload("substring", s, start)
    stop = len(s) if end is None else end
    if start < 0 or start > len(s) or stop > len(s) or stop < start:
        raise EvalError(f"index out of range: {start}" if start < 0 or start > len(s) else f"index out of range: {stop}")
    return s[start:stop]


_CEL_SPACE = (
    "\t\n\v\f\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000"
)


def _trim(s: Any) -> str:
    _str_args("trim", s)
    return str(s.strip(_CEL_SPACE))


def _join(items: Any, sep: Any = "") -> str:
    if type(items) is not list or type(sep) is not str or any(type(x) is not str for x in items):
        raise _overload("join", items, sep)
    if sum(len(x) for x in items) + len(sep) * max(len(items) - 1, 0) > MAX_LENGTH:
        raise TooLarge(f"a value built by the rule is longer than {MAX_LENGTH}")
    return str(sep.join(items))


def _is_sorted(items: Any) -> bool:
    if type(items) is not list:
        raise _overload("isSorted", items)
    return all(_compare("isSorted", items[i], items[i + 1]) in (-1, 0) for i in range(len(items) - 1))


def _sum(items: Any) -> Any:
    if type(items) is not list:
        raise _overload("sum", items)
    if not items:
        return 0
    total = items[0]
    for x in items[1:]:
        total = _add(total, x)
    if type(total) not in _NUMBERS and type(total) is not Duration:
        raise _overload("sum", items)
    return total


def _extreme(name: str, sign: int) -> Callable[[Any], Any]:
    def pick(items: Any) -> Any:
        if type(items) is not list:
            raise _overload(name, items)
        if not items:
            raise EvalError(f"{name}(list) called on an empty list")
        best = items[0]
        for x in items[1:]:
            if _compare(name, x, best) == sign:
                best = x
        return best

    return pick


def _parse_ip(s: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    """k8s.io/apiserver pkg/cel/library/ip.go parseIPAddr: Go's netip.ParseAddr, without zones
    and without IPv4-mapped IPv6 addresses."""
    try:
        addr = ipaddress.ip_address(s)
    except ValueError:
        return None
    if isinstance(addr, ipaddress.IPv6Address) and (addr.scope_id is not None or addr.ipv4_mapped is not None):
        return None
    return addr


def _is_ip(s: Any) -> bool:
    _str_args("isIP", s)
    return _parse_ip(s) is not None


def _url(s: Any) -> urls.URL:
    """k8s.io/apiserver pkg/cel/library/urls.go `url()`."""
    _str_args("url", s)
    try:
        return urls.parse_for_cel(s)
    except ValueError as exc:
        raise EvalError(f"URL parse error during conversion from string: parse {_go_quote(s)}: {exc}") from None


def _is_url(s: Any) -> bool:
    _str_args("isURL", s)
    return urls.is_url(s)


_GO_ESCAPES = {
    "\a": "\\a",
    "\b": "\\b",
    "\f": "\\f",
    "\n": "\\n",
    "\r": "\\r",
    "\t": "\\t",
    "\v": "\\v",
    "\\": "\\\\",
    '"': '\\"',
}


def _go_quote(s: str) -> str:
    """Go's strconv.Quote, as `%q` prints the URL in net/url's errors."""
    out = []
    for c in s:
        if c in _GO_ESCAPES:
            out.append(_GO_ESCAPES[c])
        elif c.isprintable():
            out.append(c)
        else:
            out.append(f"\\x{ord(c):02x}" if ord(c) < 0x80 else f"\\u{ord(c):04x}" if ord(c) < 0x10000 else f"\\U{ord(c):08x}")
    return '"' + "".join(out) + '"'


def _url_getter(name: str, read: Callable[[urls.URL], Any]) -> Callable[[Any], Any]:
    def get(u: Any) -> Any:
        if type(u) is not urls.URL:
            raise _overload(name, u)
        return read(u)

    return get


# Go's time.ParseDuration, which CEL's duration() uses: a sequence of decimal numbers with units.
_DURATION_PART = re.compile(r"([0-9]*(?:\.[0-9]*)?)(ns|us|µs|μs|ms|s|m|h)")
_UNIT_NS = {"ns": 1, "us": 1_000, "µs": 1_000, "μs": 1_000, "ms": 1_000_000, "s": 10**9, "m": 60 * 10**9, "h": 3600 * 10**9}


def parse_duration(text: str) -> Duration:
    s = text
    sign = 1
    if s[:1] in "+-" and s:
        sign = -1 if s[0] == "-" else 1
        s = s[1:]
    if s == "0":
        return Duration(0)
    if not s:
        raise EvalError(f"invalid duration {text!r}")
    total = 0
    pos = 0
    while pos < len(s):
        m = _DURATION_PART.match(s, pos)
        if m is None or m.group(1) in ("", "."):
            raise EvalError(f"invalid duration {text!r}")
        number, unit = m.group(1), m.group(2)
        whole, _, frac = number.partition(".")
        scale = _UNIT_NS[unit]
        total += int(whole or "0") * scale
        if frac:
            total += int(frac) * scale // 10 ** len(frac)
        pos = m.end()
    total *= sign
    # CEL durations span about ±10,000 years (google.protobuf.Duration's range).
    if abs(total) > 315_576_000_000 * 10**9:
        raise EvalError(f"invalid duration {text!r}: out of range")
    return Duration(total)


def _duration(x: Any) -> Duration:
    if type(x) is Duration:
        return x
    if type(x) is str:
        return parse_duration(x)
    raise _overload("duration", x)


def _to_int(x: Any) -> int:
    t = type(x)
    if t is int:
        return x  # type: ignore[no-any-return]
    if t is UInt:
        return _int(int(x))
    if t is float:
        if math.isnan(x) or math.isinf(x) or not (_INT_MIN <= x < 2.0**63):
            raise EvalError("double out of range for int")
        return int(x)
    if t is str:
        try:
            return _int(int(x, 10))
        except ValueError:
            raise EvalError(f"cannot convert {x!r} to int") from None
    if t is Duration:
        return x.ns // 10**9 if x.ns >= 0 else -((-x.ns) // 10**9)  # type: ignore[no-any-return]
    raise _overload("int", x)


def _to_uint(x: Any) -> UInt:
    t = type(x)
    if t in (int, UInt):
        return _uint(int(x))
    if t is float:
        if math.isnan(x) or not (0 <= x < 2.0**64):
            raise EvalError("double out of range for uint")
        return UInt(int(x))
    if t is str:
        try:
            return _uint(int(x, 10))
        except ValueError:
            raise EvalError(f"cannot convert {x!r} to uint") from None
    raise _overload("uint", x)


def _to_double(x: Any) -> float:
    t = type(x)
    if t in (int, UInt, float):
        return float(x)
    if t is str:
        try:
            return float(x)
        except ValueError:
            raise EvalError(f"cannot convert {x!r} to double") from None
    raise _overload("double", x)


def _format_double(x: float) -> str:
    if math.isnan(x):
        return "NaN"
    if math.isinf(x):
        return "+Inf" if x > 0 else "-Inf"
    return repr(x) if not x.is_integer() or abs(x) >= 1e21 else str(int(x))


def _to_string(x: Any) -> str:
    t = type(x)
    if t is str:
        return x  # type: ignore[no-any-return]
    if t is bool:
        return "true" if x else "false"
    if t in (int, UInt):
        return str(int(x))
    if t is float:
        return _format_double(x)
    if t is bytes:
        try:
            return x.decode("utf-8")  # type: ignore[no-any-return]
        except UnicodeDecodeError:
            raise EvalError("invalid UTF-8 in bytes, cannot convert to string") from None
    if t is Duration:
        seconds = x.ns / 10**9
        return (str(int(seconds)) if seconds.is_integer() else repr(seconds)) + "s"
    raise _overload("string", x)


def _to_bool(x: Any) -> bool:
    if type(x) is bool:
        return bool(x)
    if type(x) is str:
        if x in ("1", "t", "T", "true", "TRUE", "True"):
            return True
        if x in ("0", "f", "F", "false", "FALSE", "False"):
            return False
        raise EvalError(f"type conversion error from 'string' to 'bool': {x!r}")
    raise _overload("bool", x)


def _to_bytes(x: Any) -> bytes:
    if type(x) is bytes:
        return bytes(x)
    if type(x) is str:
        return x.encode("utf-8")
    raise _overload("bytes", x)


def _dyn(x: Any) -> Any:
    return x


# Kubernetes formats (k8s.io/apiserver pkg/cel/library/format.go ConstantFormats), their
# validation from k8s.io/apimachinery pkg/util/validation; the messages are that package's.
_DNS1123_LABEL = re.compile(r"[a-z0-9](?:[-a-z0-9]*[a-z0-9])?\Z")
_DNS1123_SUBDOMAIN = re.compile(r"[a-z0-9](?:[-a-z0-9]*[a-z0-9])?(?:\.[a-z0-9](?:[-a-z0-9]*[a-z0-9])?)*\Z")
_DNS1035_LABEL = re.compile(r"[a-z](?:[-a-z0-9]*[a-z0-9])?\Z")
_LABEL_VALUE = re.compile(r"(?:(?:[A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?\Z")
_QUALIFIED_NAME = re.compile(r"(?:[A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]\Z")


def _length_and_pattern(most: int, pattern: re.Pattern[str], message: str) -> Callable[[str], list[str]]:
    """A validator as apimachinery writes them: a length bound, then a pattern, each its own error."""

    def validate(s: str) -> list[str]:
        errors = []
        if len(s) > most:
            errors.append(f"must be no more than {most} characters")
        if not pattern.match(s):
            errors.append(message)
        return errors

    return validate


_dns1123_label = _length_and_pattern(
    63,
    _DNS1123_LABEL,
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and"
    " end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is"
    " '[a-z0-9]([-a-z0-9]*[a-z0-9])?')",
)
_dns1123_subdomain = _length_and_pattern(
    253,
    _DNS1123_SUBDOMAIN,
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must"
    " start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is"
    " '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
)
_dns1035_label = _length_and_pattern(
    63,
    _DNS1035_LABEL,
    "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic"
    " character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for"
    " validation is '[a-z]([-a-z0-9]*[a-z0-9])?')",
)
_label_value = _length_and_pattern(
    63,
    _LABEL_VALUE,
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must"
    " start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used"
    " for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')",
)


def _qualified_name(s: str) -> list[str]:
    prefix, slash, name = s.rpartition("/")
    errors = []
    if slash and not prefix:
        errors.append("prefix part must be non-empty")
    elif slash:
        errors.extend("prefix part " + e for e in _dns1123_subdomain(prefix))
    if not name:
        errors.append("name part must be non-empty")
    elif len(name) > 63:
        errors.append("name part must be no more than 63 characters")
    if name and not _QUALIFIED_NAME.match(name):
        errors.append(
            "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an"
            " alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is"
            " '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
        )
    return errors


_FORMATS: dict[str, Callable[[str], list[str]]] = {
    "dns1123Label": _dns1123_label,
    "dns1123Subdomain": _dns1123_subdomain,
    "dns1035Label": _dns1035_label,
    "labelValue": _label_value,
    "qualifiedName": _qualified_name,
}


def _format_factory(name: str) -> Callable[[], NamedFormat]:
    fmt = NamedFormat(name, _FORMATS[name])
    return lambda: fmt


def _format_named(name: Any) -> Optional:
    if type(name) is not str:
        raise _overload("format.named", name)
    fn = _FORMATS.get(name)
    return Optional(NamedFormat(name, fn) if fn is not None else _NONE)


def _validate(fmt: Any, s: Any) -> Optional:
    if type(fmt) is not NamedFormat or type(s) is not str:
        raise _overload("validate", fmt, s)
    errors = fmt.validate(s)
    return Optional(errors if errors else _NONE)


def _has_value(o: Any) -> bool:
    if type(o) is not Optional:
        raise _overload("hasValue", o)
    return o.value is not _NONE


def _value(o: Any) -> Any:
    if type(o) is not Optional:
        raise _overload("value", o)
    if o.value is _NONE:
        raise EvalError("optional.none() dereference")
    return o.value


def _or_value(o: Any, default: Any) -> Any:
    if type(o) is not Optional:
        raise _overload("orValue", o, default)
    return default if o.value is _NONE else o.value


# name -> (implementation, True: a method / False: a global function / None: both, arities
# counting the receiver). The standard definitions (cel-spec langdef.md), cel-go's string
# extensions (ext/strings.go) and the Kubernetes libraries (k8s.io/apiserver pkg/cel/library:
# lists.go, regex.go, ip.go isIP, format.go, urls.go) as far as implemented here; other Kubernetes
# functions (ip(), cidr(), quantity(), authorizer, semver) are not, and a rule calling one is
# reported as unsupported by `policylint rules --cel-coverage`.
FUNCTIONS: dict[str, tuple[Callable[..., Any], bool | None, tuple[int, ...]]] = {
    "size": (_size, None, (1,)),
    "contains": (_contains, True, (2,)),
    "startsWith": (_starts, True, (2,)),
    "endsWith": (_ends, True, (2,)),
    "matches": (_matches, None, (2,)),
    "int": (_to_int, False, (1,)),
    "uint": (_to_uint, False, (1,)),
    "double": (_to_double, False, (1,)),
    "string": (_to_string, False, (1,)),
    "bool": (_to_bool, False, (1,)),
    "bytes": (_to_bytes, False, (1,)),
    "dyn": (_dyn, False, (1,)),
    "duration": (_duration, False, (1,)),
    # cel-go ext strings
    "charAt": (_char_at, True, (2,)),
    "indexOf": (_index_of, True, (2, 3)),
    "lastIndexOf": (_last_index_of, True, (2, 3)),
    "lowerAscii": (_lower_ascii, True, (1,)),
    "upperAscii": (_upper_ascii, True, (1,)),
    "replace": (_replace, True, (3, 4)),
    "split": (_split, True, (2, 3)),
    "substring": (_substring, True, (2, 3)),
    "trim": (_trim, True, (1,)),
    "join": (_join, True, (1, 2)),
    # Kubernetes: lists.go, regex.go, ip.go, format.go, urls.go
    "isSorted": (_is_sorted, True, (1,)),
    "sum": (_sum, True, (1,)),
    "min": (_extreme("min", -1), True, (1,)),
    "max": (_extreme("max", 1), True, (1,)),
    "find": (_find, True, (2,)),
    "findAll": (_find_all, True, (2, 3)),
    "isIP": (_is_ip, False, (1,)),
    "url": (_url, False, (1,)),
    "isURL": (_is_url, False, (1,)),
    "getScheme": (_url_getter("getScheme", lambda u: u.scheme), True, (1,)),
    "getHost": (_url_getter("getHost", lambda u: u.host), True, (1,)),
    "getHostname": (_url_getter("getHostname", urls.URL.hostname), True, (1,)),
    "getPort": (_url_getter("getPort", urls.URL.port), True, (1,)),
    "getEscapedPath": (_url_getter("getEscapedPath", urls.URL.escaped_path), True, (1,)),
    "getQuery": (_url_getter("getQuery", urls.URL.query), True, (1,)),
    "format.named": (_format_named, False, (1,)),
    "validate": (_validate, True, (2,)),
    # cel-go optional types (the values `validate` returns)
    "optional.none": (lambda: Optional(_NONE), False, (0,)),
    "optional.of": (lambda x: Optional(x), False, (1,)),
    "hasValue": (_has_value, True, (1,)),
    "value": (_value, True, (1,)),
    "orValue": (_or_value, True, (2,)),
}
FUNCTIONS.update({f"format.{name}": (_format_factory(name), False, (0,)) for name in _FORMATS})


# -- compiled rules -------------------------------------------------------------------------------


class Compiled:
    """A rule compiled once: `evaluate(value)` -> True, False, or raises EvalError. `skip` says
    why it is never evaluated (a transition rule, an unsupported function, a compile error)."""

    __slots__ = ("base", "error", "key_fields", "program", "self_fields", "skip", "text")

    def __init__(
        self,
        text: str,
        program: Eval | None,
        skip: str | None,
        error: str | None,
        self_fields: frozenset[str] | None = None,
    ) -> None:
        self.text = text
        self.program = program
        self.skip = skip  # None: evaluated; "transition", "unsupported", "compile"
        self.error = error  # what is unsupported, or the compile error
        # The fields of `self` the rule reads (`self.a`, `has(self.b)`); None when it reads
        # `self` as a whole (`self.all(...)`, `size(self)`).
        self.self_fields = self_fields
        # What the result depends on, for caching it (`result_key`): each field the rule reads
        # with whether it only tests its presence (`has(self.f)` and nothing else); None when
        # the rule reads `self` whole.
        self.key_fields: tuple[tuple[str, bool], ...] | None = None
        self.base = 0  # the fixed part of its cost (`weight`)

    def evaluate(self, value: Any, limit: int = PER_CALL_LIMIT) -> Any:
        return self.run(value, limit)[0]

    def run(self, value: Any, limit: int = PER_CALL_LIMIT) -> tuple[Any, int]:
        """The result and the cost it took; raises EvalError (CostExceeded past `limit`)."""
        assert self.program is not None
        a = Activation({"self": value}, limit)
        a.cost = self.base
        try:
            if a.cost > a.limit:
                raise a.over()
            return self.program(a), a.cost
        except EvalError as exc:
            exc.cost = min(a.cost, a.limit + 1)
            raise
        except RecursionError:
            error = TooLarge("the rule nests too deeply to evaluate")
            error.cost = min(a.cost, a.limit + 1)
            raise error from None


def _mentions(node: Any, name: str) -> bool:
    if type(node) is tuple:
        if node[:2] == ("ident", name):
            return True
        return any(_mentions(child, name) for child in node[1:])
    if type(node) is list:
        return any(_mentions(child, name) for child in node)
    return False


@functools.lru_cache(maxsize=4096)
def compile_rule(text: str) -> Compiled:
    """Compile a rule once (cached by its text)."""
    try:
        tree = parse(text)
    except CompileError as exc:
        kind = "unsupported" if exc.unsupported else "compile"
        return Compiled(text, None, kind, exc.unsupported or exc.message)
    except RecursionError:
        return Compiled(text, None, "compile", "expression too deeply nested")
    if _mentions(tree, "oldSelf"):
        return Compiled(text, None, "transition", "oldSelf")
    try:
        program = _Compiler(frozenset({"self"})).compile(tree)
    except CompileError as exc:
        kind = "unsupported" if exc.unsupported else "compile"
        return Compiled(text, None, kind, exc.unsupported or exc.message)
    except RecursionError:
        return Compiled(text, None, "compile", "expression too deeply nested")
    fields, tested = _self_fields(tree)
    compiled = Compiled(text, program, None, None, fields)
    compiled.base = weight(tree)
    if fields is not None:
        compiled.key_fields = tuple((f, f in tested) for f in sorted(fields))
    return compiled


_SCALARS = (str, int, float, bool)


def result_key(compiled: Compiled, value: Any, shapes: dict[int, Any] | None = None) -> tuple[Any, ...] | None:
    """A key that determines the rule's result on `value` (a YAML value, before conversion, under
    one schema node), or None when it cannot be had: the values of the fields the rule reads
    (scalars with their types: `1`, `1.0` and `true` differ; maps and lists by their `shape`,
    when `shapes` is given, one per object), the presence of those it only tests; the whole
    value's shape when the rule reads `self` whole. The schema node decides the rest (defaults,
    types), so a cache keyed by the node and this key returns what evaluating again would."""
    fields = compiled.key_fields
    if fields is None:
        t = type(value)
        if t in _SCALARS:
            return (t, value)
        if shapes is None:
            return None
        whole = shape(value, shapes)
        return None if whole is None else (whole,)
    if type(value) is not dict:
        return None
    key: list[Any] = []
    for name, presence in fields:
        got = value.get(name)
        if presence:
            key.append(got is not None)
        elif got is None or type(got) in _SCALARS:
            key.append((type(got), got))
        elif shapes is not None:
            part = shape(got, shapes)
            if part is None:
                return None
            key.append(part)
        else:
            return None
    return tuple(key)


# Shapes of YAML maps and lists (`shape`): the same object for the same content, in the same
# order, with the same scalar types. Never reused for another content (the table is bounded by
# emptying it, which only costs cache misses).
_SHAPES: dict[tuple[Any, ...], object] = {}


def shape(value: Any, shapes: dict[int, Any]) -> Any:
    """A hashable stand-in for a YAML value, equal for two values exactly when they hold the same
    keys, items and scalars (of the same types) in the same order: a map or a list gets an
    object of its own (`shapes`, id of a map or list -> its shape, is the memo of one object),
    a string is itself, another scalar `(type, value)`; None for a value that has no such
    stand-in (a key that is not a string, a scalar of another type)."""
    t = type(value)
    if t is str:
        return value
    if t is not dict and t is not list:
        return _scalar_shape(value)
    got = shapes.get(id(value), _NONE)
    if got is not _NONE:
        return got
    parts: list[Any] = [t]
    append = parts.append
    # Two loops with the same body on purpose: one loop over both (keys checked per item, or
    # the keys checked apart and zipped back) made the admission of 10k objects 9-15% slower.
    if t is dict:
        for k, v in value.items():
            tv = type(v)
            if tv is str:
                inner = v
            elif tv is dict or tv is list:
                inner = shape(v, shapes)
            elif tv is int or tv is bool or v is None:
                inner = (tv, v)
            else:
                inner = _scalar_shape(v)
            if inner is None or type(k) is not str:
                shapes[id(value)] = None
                return None
            append(k)
            append(inner)
    else:
        for v in value:
            tv = type(v)
            if tv is str:
                inner = v
            elif tv is dict or tv is list:
                inner = shape(v, shapes)
            elif tv is int or tv is bool or v is None:
                inner = (tv, v)
            else:
                inner = _scalar_shape(v)
            if inner is None:
                shapes[id(value)] = None
                return None
            append(inner)
    whole = tuple(parts)
    got = _SHAPES.get(whole)
    if got is None:
        if len(_SHAPES) > 100_000:
            _SHAPES.clear()
        got = _SHAPES[whole] = object()
    shapes[id(value)] = got
    return got


def _scalar_shape(value: Any) -> Any:
    t = type(value)
    if t is int or t is bool or value is None or t is str:
        return (t, value)
    if t is float:
        return (t, value, math.copysign(1.0, value))  # 0.0 and -0.0 are equal floats
    return None


_VALIDATIONS = "x-kubernetes-validations"
_NODE_RULES: dict[int, tuple[Mapping[str, Any], tuple[tuple[Mapping[str, Any], Compiled], ...]]] = {}


def node_rules(node: Mapping[str, Any]) -> tuple[tuple[Mapping[str, Any], Compiled], ...]:
    """The `x-kubernetes-validations` of a schema node that are evaluated, compiled, in order:
    (the validation, its compiled rule). Worked out once per node (the entry keeps the node
    alive, so its id is never another's)."""
    got = _NODE_RULES.get(id(node))
    if got is not None and got[0] is node:
        return got[1]
    found = []
    for validation in node.get(_VALIDATIONS) or ():
        rule = validation.get("rule") if isinstance(validation, Mapping) else None
        if isinstance(rule, str):
            compiled = compile_rule(rule)
            if compiled.program is not None:
                found.append((validation, compiled))
    if len(_NODE_RULES) > 100_000:
        _NODE_RULES.clear()  # CRDs read from many inputs in one process (tests): bounded
    rules = tuple(found)
    _NODE_RULES[id(node)] = (node, rules)
    return rules


def _visit_self(node: Any, fields: set[str], selected: set[str]) -> bool:
    """Collect the fields of `self` read under `node`; True when it reads `self` whole. A module
    function, not a closure: a closure that calls itself is a reference cycle, which the command
    (it runs with the cyclic collector off) would keep until exit."""
    if type(node) is list:
        return _visit_all(node, fields, selected)
    if type(node) is not tuple or not node or type(node[0]) is not str:
        return False
    if node[0] in ("select", "has") and node[1] == ("ident", "self"):
        fields.add(node[2])
        if node[0] == "select":
            selected.add(node[2])
        return False
    if node == ("ident", "self"):
        return True
    return _visit_all(node[1:], fields, selected)


def _visit_all(nodes: Any, fields: set[str], selected: set[str]) -> bool:
    whole = False
    for child in nodes:  # every child, also after one reads `self` whole: all fields are collected
        whole = _visit_self(child, fields, selected) or whole
    return whole


def _self_fields(tree: Node) -> tuple[frozenset[str] | None, frozenset[str]]:
    """(the fields of `self` the rule reads, None when it reads `self` whole; those it reads only
    through `has()`)."""
    fields: set[str] = set()
    selected: set[str] = set()
    whole = _visit_self(tree, fields, selected)
    if whole or any(not f.isidentifier() or "__" in f for f in fields):
        return None, frozenset()  # escaped names (`__namespace__`): read the converted value
    return frozenset(fields), frozenset(fields - selected)


# -- values from YAML, the way the API server converts them ---------------------------------------

# A value whose type its schema rejects (PL703's finding): reading it is an error that is not
# the rule's to report.
_BAD: Any = type("_Bad", (), {"__repr__": lambda self: "<a value of the wrong type>"})()
BAD = _BAD

# k8s.io/apiserver pkg/cel/escaping.go: property names CEL cannot spell are escaped.
_CEL_RESERVED = frozenset({"true", "false", "null", "in", *_RESERVED})
_ESCAPE_PIECE = re.compile(r"__|[-./]|[^a-zA-Z0-9-./_]")


def escape(name: str) -> str | None:
    """The name a property has in CEL (`namespace` -> `__namespace__`, `a-b` -> `a__dash__b`);
    None when it has none (it is not accessible)."""
    if not name or name[0].isdigit():
        return None
    if name in _CEL_RESERVED:
        return f"__{name}__"
    ok = True

    def piece(m: re.Match[str]) -> str:
        nonlocal ok
        s = m.group()
        if s == "__":
            return "__underscores__"
        if s in _PIECES:
            return _PIECES[s]
        ok = False
        return ""

    out = _ESCAPE_PIECE.sub(piece, name)
    return out if ok else None


_PIECES = {".": "__dot__", "-": "__dash__", "/": "__slash__"}


@functools.lru_cache(maxsize=4096)
def _escaped(name: str) -> str | None:
    return escape(name) if not name.isidentifier() or "__" in name or name in _CEL_RESERVED else name


# The memo's entry for the names of required fields found missing (the set of CEL names).
MISSING = -1


def to_cel(value: Any, schema: Mapping[str, Any], memo: dict[int, Any] | None = None) -> Any:
    """`value` (from YAML) as the API server hands it to CEL under `schema`, after its defaulting:
    nulls of non-nullable fields dropped, defaults set, unknown fields pruned, property names
    escaped, integers of `number` fields as doubles, `duration` strings as durations. A value of
    the wrong type (or not one of its `enum`) becomes `BAD`. `memo` (id of a YAML map or list ->
    its CEL value) lets nested schema nodes reuse what their ancestor converted, and collects
    the missing required fields (`MISSING`)."""
    return _to(_info(schema), value, memo)


def _to(info: _Info, value: Any, memo: dict[int, Any] | None) -> Any:
    t = type(value)
    if memo is not None and (t is dict or t is list):
        got = memo.get(id(value))
        if got is not None and got[0] is info.node:
            return got[1]
        out = _convert(info, value, memo)
        memo[id(value)] = (info.node, out)
        return out
    return _convert(info, value, memo)


class _Info:
    """What conversion reads of a schema node, worked out once per node (its children's too)."""

    __slots__ = (
        "additional",
        "defaults",
        "enum",
        "items",
        "kind",
        "node",
        "nullable",
        "properties",
        "required",
        "string",
    )

    def __init__(self, node: Mapping[str, Any]) -> None:
        self.node = node  # keeps the node alive while its id is a key of _INFO
        self.nullable = bool(node.get("nullable"))
        wanted = node.get("type")
        properties = node.get("properties")
        additional = node.get("additionalProperties")
        if node.get("x-kubernetes-int-or-string"):
            kind = "int-or-string"
        elif wanted == "object" or (wanted is None and (properties is not None or additional is not None)):
            if properties is not None or node.get("x-kubernetes-embedded-resource"):
                kind = "object"
            elif isinstance(additional, dict):
                kind = "map"
            else:
                kind = "preserve" if node.get("x-kubernetes-preserve-unknown-fields") else "empty"
        elif wanted == "string" and node.get("format") == "duration":
            kind = "duration"
        elif isinstance(wanted, str):
            kind = wanted
        else:
            kind = "any"
        self.kind = kind
        props = properties if isinstance(properties, dict) else {}
        # name -> (its CEL name or None, its schema's info)
        self.properties = {k: (_escaped(k) if isinstance(k, str) else None, _info(sub)) for k, sub in props.items()}
        # (name, its CEL name, its schema's info, its default converted once when a scalar, else _NONE)
        self.defaults: list[tuple[Any, str | None, _Info, Any]] = []
        for k, sub in props.items():
            if "default" in sub:
                default = sub["default"]
                once = _convert(_info(sub), default, None) if type(default) not in (dict, list) else _NONE
                self.defaults.append((k, _escaped(k), _info(sub), once))
        self.required = [
            (k, _escaped(k)) for k in node.get("required", ()) if isinstance(k, str) and "default" not in props.get(k, {})
        ]
        self.additional = _info(additional) if isinstance(additional, dict) else None
        items = node.get("items")
        self.items = _info(items) if isinstance(items, dict) else None
        enum = node.get("enum")
        self.enum = enum if isinstance(enum, list) else None
        # A string without an enum: a `str` value is its own CEL value (most values).
        self.string = kind == "string" and self.enum is None
        if kind == "object" and node.get("x-kubernetes-preserve-unknown-fields"):
            self.kind = "object+preserve"


_INFO: dict[int, _Info] = {}


def _info(schema: Mapping[str, Any]) -> _Info:
    got = _INFO.get(id(schema))
    if got is not None and got.node is schema:
        return got
    if len(_INFO) > 100_000:
        _INFO.clear()  # schemas of CRDs read from many inputs in one process (tests): bounded
    info = _INFO[id(schema)] = _Info(schema)
    return info


def _convert(info: _Info, value: Any, memo: dict[int, Any] | None) -> Any:
    if value is None:
        return None if info.nullable else _BAD
    kind = info.kind
    t = type(value)
    if kind == "object" or kind == "object+preserve":
        if t is not dict:
            return _BAD
        properties = info.properties
        out: dict[Any, Any] = {}
        for k, v in value.items():
            entry = properties.get(k)
            if entry is None:
                if kind == "object+preserve" and type(k) is str:
                    name = _escaped(k)
                    if name is not None:
                        out[name] = _plain(v)
                continue  # pruned by the API server (PL702's finding)
            name, sub = entry
            if name is None:
                continue
            tv = type(v)
            if tv is str and sub.string:
                out[name] = v
            elif v is None:
                if sub.nullable:  # else a null is an unset field
                    out[name] = None
            elif memo is not None and (tv is dict or tv is list):
                got = memo.get(id(v))
                if got is not None and got[0] is sub.node:
                    out[name] = got[1]
                else:
                    converted = out[name] = _convert(sub, v, memo)
                    memo[id(v)] = (sub.node, converted)
            else:
                out[name] = _convert(sub, v, memo)
        for k, name, sub, once in info.defaults:
            if name is not None and name not in out and value.get(k) is None:
                out[name] = once if once is not _NONE else _convert(sub, sub.node["default"], None)
        if memo is not None:
            for k, name in info.required:
                if value.get(k) is None:
                    memo.setdefault(MISSING, set()).add(name)  # PL703's finding
        return out
    if kind == "map":
        if t is not dict:
            return _BAD
        additional = info.additional
        assert additional is not None
        nullable = additional.nullable
        return {k: _to(additional, v, memo) for k, v in value.items() if v is not None or nullable}
    if kind == "preserve":
        return _plain(value) if t is dict else _BAD
    if kind == "empty":
        return {} if t is dict else _BAD
    if kind == "array":
        if t is not list:
            return _BAD
        items = info.items
        if items is None:
            return _plain(value)
        if items.string:
            return [v if type(v) is str else _to(items, v, memo) for v in value]
        return [_to(items, v, memo) for v in value]
    if kind == "int-or-string":
        if t is int or t is str:
            return value
        if t is float and value.is_integer():
            return int(value)
        return _BAD
    if info.enum is not None and t in (str, int, float, bool) and value not in info.enum:
        return _BAD  # PL703's finding (the API server does not run the rules then)
    if kind == "string":
        return value if t is str else _BAD
    if kind == "duration":
        if t is not str:
            return _BAD
        try:
            return parse_duration(value)
        except EvalError:
            return _BAD
    if kind == "integer":
        if t is int:
            return value
        if t is float and value.is_integer():
            return int(value)  # kubectl sends an integral float as an integer
        return _BAD
    if kind == "number":
        return float(value) if (t is int or t is float) else _BAD
    if kind == "boolean":
        return value if t is bool else _BAD
    return _plain(value)


def _plain(value: Any) -> Any:
    """A value without a schema (`x-kubernetes-preserve-unknown-fields`): as it is."""
    t = type(value)
    if t is dict:
        return {k: _plain(v) for k, v in value.items() if v is not None}
    if t is list:
        return [_plain(v) for v in value]
    if t in (str, int, float, bool) or value is None:
        return value
    return str(value)  # timestamps and other YAML scalars PyYAML types: strings to the API server


def evaluate(rule: Compiled, value: Any) -> tuple[bool, EvalError | None]:
    """(passed, the error that failed it if any). BadValue and CostExceeded come back as the error."""
    passed, error, _ = evaluate_within(rule, value, PER_CALL_LIMIT)
    return passed, error


def evaluate_within(rule: Compiled, value: Any, limit: int) -> tuple[bool, EvalError | None, int]:
    """`evaluate` with a cost limit (at most `PER_CALL_LIMIT`), and the cost it took (past the
    limit when it raised CostExceeded; a failed evaluation costs what it ran, as in cel-go)."""
    try:
        result, cost = rule.run(value, limit)
    except EvalError as exc:
        return False, exc, exc.cost
    if result is True:
        return True, None, cost
    if result is False:
        return False, None, cost
    return False, EvalError(f"the rule evaluated to {type_name(result)}, not a bool"), cost


def message_of(validation: Mapping[str, Any], value: Any, limit: int = PER_CALL_LIMIT) -> tuple[str, int, str | None]:
    """What the API server says when a validation fails: its messageExpression's string, else
    its message, else `failed rule: <rule>` (k8s.io/apiextensions-apiserver pkg/apiserver/schema/cel
    validation.go); with the cost of the messageExpression, and the API server's error when it
    ran past `limit` (which stops the object's validation there)."""
    expression = validation.get("messageExpression")
    cost = 0
    if isinstance(expression, str):
        compiled = compile_rule(expression)
        if compiled.program is not None:
            try:
                result, cost = compiled.run(value, limit)
            except CostExceeded as exc:
                if exc.per_call:
                    return (
                        "",
                        limit + 1,
                        (
                            f"no further validation rules will be run due to call cost exceeds limit for messageExpression: {expression!r}"
                        ),
                    )
                return (
                    "",
                    limit + 1,
                    (
                        "messageExpression evaluation failed due to running out of cost budget, no further validation rules will be run"
                    ),
                )
            except EvalError as exc:
                result, cost = None, exc.cost
            if type(result) is str and result.strip() and "\n" not in result and len(result) <= 5000:
                return result, cost, None
    message = validation.get("message")
    if isinstance(message, str) and message.strip():
        return message, cost, None
    return f"failed rule: {validation.get('rule')}", cost, None
