"""The CEL lexer and parser: rule text to a tuple syntax tree (`Node`), the whole CEL grammar
(cel-spec syntax.md), with cel-go's nesting limit (`MAX_DEPTH`) so that neither this parser nor
the evaluator can overflow the Python stack.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from policylint.k8s.cel.values import _INT_MAX, _INT_MIN, _UINT_MAX, MAX_DEPTH, CompileError, UInt

# -- lexer ----------------------------------------------------------------------------------------

_TOKEN = re.compile(
    r"""
    (?P<ws>[\t\n\f\r ]+|//[^\n]*)
  | (?P<float>(?:[0-9]+\.[0-9]+(?:[eE][+-]?[0-9]+)?|[0-9]+[eE][+-]?[0-9]+|\.[0-9]+(?:[eE][+-]?[0-9]+)?))
  | (?P<hex>0[xX][0-9a-fA-F]+[uU]?)
  | (?P<int>[0-9]+[uU]?)
  | (?P<string>[rRbB]{0,2}(?:\"\"\"|'''|"|'))
  | (?P<ident>[A-Za-z_][A-Za-z0-9_]*)
  | (?P<quoted>`[A-Za-z0-9_./ -]+`)
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
    """(kind, value, offset) tokens; kinds: int, uint, float, string, bytes, ident, quoted, op,
    end."""
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
        elif kind == "quoted":  # a backquoted field name (cel-spec syntax.md): only after a dot
            out.append(("quoted", value[1:-1], pos))
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
    end = text.find(quote, body)
    if end >= 0 and (raw or "\\" not in text[body:end]) and (len(quote) == 3 or "\n" not in text[body:end]):
        # Most literals (the schemas' patterns, raw; names and kinds) hold no escape and end at the
        # first quote like theirs: taken whole, where each character was a turn of `_scanned`'s
        # loop, which reads any other, its errors included, as it did them all.
        piece = text[body:end]
        if is_bytes:
            out.append(("bytes", piece.encode("utf-8", "surrogatepass"), start))
        else:
            out.append(("string", piece, start))
        return end + len(quote)
    return _scanned(text, start, body, quote, raw, is_bytes, out)


def _scanned(text: str, start: int, body: int, quote: str, raw: bool, is_bytes: bool, out: list[tuple[str, Any, int]]) -> int:
    """A string literal read character by character, its escapes decoded (`_string`)."""
    # A bytes literal's text is its UTF-8 encoding, its octal and hex escapes single bytes
    # (cel-spec syntax.md): b'ÿ' is b'\\303\\277', b'\\377' one byte.
    chars: list[str] = []
    octets = bytearray()
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
            if is_bytes:
                octets.append(ord(piece))  # bytes admit no \\u escapes: every piece is one byte
            else:
                chars.append(piece)
            continue
        if is_bytes:
            octets += c.encode("utf-8", "surrogatepass")
        else:
            chars.append(c)
        pos += 1
    if is_bytes:
        out.append(("bytes", bytes(octets), start))
    else:
        out.append(("string", "".join(chars), start))
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
# ("comp", macro, operand, var, args) ("comp2", macro, operand, var, var, args); the optional syntax: ("optselect", operand, field)
# ("optindex", operand, key) ("optlist", items, optional indexes) ("optmaplit", pairs, optional
# indexes)

Node = tuple[Any, ...]
_MACROS = frozenset({"all", "exists", "exists_one", "map", "filter"})
# cel-go's two-variable comprehensions: (macro, the arities their bodies may have)
_TWO_VARIABLE = {
    "all": (1,),
    "exists": (1,),
    "existsOne": (1,),
    "exists_one": (1,),
    "transformList": (1, 2),
    "transformMap": (1, 2),
    "transformMapEntry": (1, 2),
}


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
            if self.at(".?"):
                self.take()
                kind, name, offset = self.take()
                if kind not in ("ident", "quoted"):
                    raise CompileError(f"Syntax error: expected a field name at offset {offset}")
                node = ("optselect", node, name)
            elif self.at("[?"):
                self.take()
                key = self.expr()
                self.expect("]")
                node = ("optindex", node, key)
            elif self.at("."):
                self.take()
                kind, name, offset = self.take()
                if kind not in ("ident", "quoted"):
                    raise CompileError(f"Syntax error: expected a field name at offset {offset}")
                if self.at("(") and kind == "ident":
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
        if (
            target is not None
            and name in _TWO_VARIABLE
            and len(args) >= 3
            and args[0][0] == args[1][0] == "ident"
            and len(args) - 2 in _TWO_VARIABLE[name]
        ):
            # ("comp2", macro, operand, first variable, second variable, bodies)
            return ("comp2", name, target, args[0][1], args[1][1], args[2:])
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
            return self._name(value, offset)
        if kind == "quoted":
            raise CompileError(f"Syntax error: a backquoted name is a field name, after a dot (offset {offset})")
        opening = _OPENINGS.get(value) if kind == "op" else None
        if opening is not None:
            return opening(self, value, offset)
        shown = "end of input" if kind == "end" else repr(value)
        raise CompileError(f"Syntax error: unexpected {shown} at offset {offset}")

    def _name(self, value: str, offset: int) -> Node:
        """A literal named by a word, a call of a global function, or a variable."""
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

    def _leading_dot(self, value: str, offset: int) -> Node:
        raise CompileError("leading-dot names are not supported", unsupported="leading-dot names")

    def _parenthesised(self, value: str, offset: int) -> Node:
        node = self.expr()
        self.expect(")")
        return node

    def _list(self, value: str, offset: int) -> Node:
        # `[?` opens a list whose first item is optional (the lexer reads it as one token)
        self.nest()
        items: list[Node] = []
        optional: list[int] = []
        first = value == "[?"
        while not self.at("]"):
            if first or self.at("?"):
                if not first:
                    self.take()
                optional.append(len(items))
            first = False
            items.append(self.expr())
            if not self.at(","):
                break
            self.take()
        if first:  # `[?]`
            raise CompileError(f"Syntax error: unexpected ']' at offset {offset + 2}")
        self.expect("]")
        self.depth -= 1
        # Nodes: ("optlist", items, indexes of the optional items) only where there are any,
        # so that every other list keeps its node (and what the cost estimate reads)
        return ("optlist", items, tuple(optional)) if optional else ("list", items)

    def _map(self, value: str, offset: int) -> Node:
        self.nest()
        pairs: list[tuple[Node, Node]] = []
        optional_keys: list[int] = []
        while not self.at("}"):
            if self.at("?"):
                self.take()
                optional_keys.append(len(pairs))
            key = self.expr()
            self.expect(":")
            pairs.append((key, self.expr()))
            if not self.at(","):
                break
            self.take()
        self.expect("}")
        self.depth -= 1
        return ("optmaplit", pairs, tuple(optional_keys)) if optional_keys else ("map", pairs)


# The operators that may open an operand (`_Parser.primary`), each with what reads the rest of it.
_OPENINGS: dict[str, Callable[[_Parser, str, int], Node]] = {
    ".": _Parser._leading_dot,
    "(": _Parser._parenthesised,
    "[": _Parser._list,
    "[?": _Parser._list,
    "{": _Parser._map,
}


def _literal_int(value: int) -> int:
    if value < _INT_MIN or value > _INT_MAX:
        raise CompileError(f"invalid int literal: {value}")
    return value


def parse(text: str) -> Node:
    return _Parser(text).parse()
