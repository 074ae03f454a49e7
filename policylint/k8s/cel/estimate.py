"""What the API server estimates CEL validation rules cost before it accepts a CRD, and what it refuses.

A port of the static half of the API server's CEL cost model: the CRD's schema turned into CEL
declarations with size bounds (k8s.io/apiserver pkg/cel/common/schemas.go `SchemaDeclType` and
its `estimate*` helpers, pkg/cel/types.go, pkg/cel/limits.go), cel-go's cost estimator
(checker/cost.go, with the macro expansions of parser/macro.go) with the Kubernetes libraries'
call costs (k8s.io/apiserver pkg/cel/library/cost.go `EstimateCallCost`), and the limits the API
server applies to each version's schema (k8s.io/apiextensions-apiserver
pkg/apis/apiextensions/validation/validation.go and cel_validation.go, pkg/apiserver/schema/cel/
compilation.go):

- a rule's estimated cost is multiplied by its node's cardinality: the product of the
  `maxItems` and `maxProperties` of the lists and maps it is nested in (objects count once);
  where one of them is unbounded, instead the number of the node's smallest serialized values a
  3 MiB request holds (`maxCardinality`);
- a rule whose multiplied cost exceeds `STATIC_COST_LIMIT`, or a `messageExpression` whose own
  cost does (not multiplied), is refused;
- a version's schema whose rules (multiplied) and messageExpressions together exceed
  `STATIC_CRD_COST_LIMIT` is refused.

Where policylint cannot follow upstream exactly it estimates less, never more, so that a CRD a
cluster accepts is never reported: a rule with syntax this estimate does not read (the
optional syntax `.?`, `[?`, `{?` and two-variable comprehensions, nodes of their own in the
syntax tree) costs nothing here; an operator or function whose operand type
is not known from the schema (`dyn`) is charged its cheapest overload (cel-go charges the
dearest); conversions and functions not listed below cost one unit.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping
from typing import Any

from policylint.identity import IdentityMap, kept_by_content
from policylint.k8s.cel.decls import MAX_REQUEST_SIZE, Decl, _nonneg, decl_type
from policylint.k8s.cel.parser import Node, parse
from policylint.k8s.cel.values import CompileError, UInt

# validation.go
STATIC_COST_LIMIT = 10_000_000  # StaticEstimatedCostLimit: one rule or messageExpression
STATIC_CRD_COST_LIMIT = 100_000_000  # StaticEstimatedCRDCostLimit: one version's schema

U64 = (1 << 64) - 1  # costs and sizes saturate at math.MaxUint64, as cel-go's do
_TWO_TO_64 = math.ldexp(1.0, 64)
_STRING_TRAVERSAL = 0.1  # cel-go common.StringTraversalCostFactor
_REGEX_LENGTH = 0.25  # common.RegexStringLengthCostFactor
_MAX_NAME_FORMAT_REGEX = 128  # k8s.io/apiserver pkg/cel/limits.go MaxNameFormatRegexSize


def _add(x: int, y: int) -> int:
    return min(x + y, U64)


def _mul(x: int, y: int) -> int:
    return min(x * y, U64)


def _factor(x: int, f: float) -> int:
    """cel-go's multiplyByCostFactor: float64 arithmetic, rounded up, saturating."""
    xf = float(x)
    if xf > 0 and f > 0 and xf > U64 / f:
        return U64
    c = math.ceil(xf * f)
    return U64 if c >= _TWO_TO_64 else int(c)


# -- cel-go's estimator (checker/cost.go) over policylint's syntax tree ----------------------------

Size = tuple[int, int]  # SizeEstimate (min, max)
_UNKNOWN: Size = (0, U64)
_SCALAR_KINDS = frozenset({"bool", "double", "duration", "int", "timestamp", "uint"})
_NAMESPACES = frozenset({"cel", "format", "optional"})


class _Ty:
    """A checked type, as far as the estimate needs it: its kind and element type."""

    __slots__ = ("elem", "kind")

    def __init__(self, kind: str, elem: _Ty | None = None) -> None:
        self.kind = kind  # the Decl kinds, "null", "optional", "other"
        self.elem = elem


_DYN = _Ty("dyn")


def _ty(d: Decl | None) -> _Ty:
    if d is None:
        return _DYN
    elem = d.elem
    return _Ty(d.kind, _ty(elem) if elem is not None else None)


class _Entry:
    """entrySizeEstimate: the container kind and its keys' and values' sizes."""

    __slots__ = ("container", "key", "val")

    def __init__(self, container: str, key: Size, val: Size) -> None:
        self.container, self.key, self.val = container, key, val

    def union(self, other: _Entry | None) -> _Entry | None:
        if other is None:
            return None
        return _Entry(self.container, _union(self.key, other.key), _union(self.val, other.val))


def _union(a: Size, b: Size) -> Size:
    return (min(a[0], b[0]), max(a[1], b[1]))


class _E:
    """One expression's estimate: its cost (the maximum), its checked type, the size cel-go
    computed for it (`computedSizes`, literals), its field path and its entries' sizes."""

    __slots__ = ("cost", "entry", "local", "path", "size", "ty")

    def __init__(self, cost: int, ty: _Ty, path: list[str] | None = None) -> None:
        self.cost = cost
        self.ty = ty
        self.path = path
        self.size: Size | None = None
        self.entry: _Entry | None = None
        self.local: Size | None = None  # a local variable's own size (computeSize's last resort)


class _Var:
    __slots__ = ("entry", "path", "size", "ty")

    def __init__(self, path: list[str] | None, size: Size | None, entry: _Entry | None, ty: _Ty) -> None:
        self.path, self.size, self.entry, self.ty = path, size, entry, ty


class _Unsupported(Exception):
    pass


class Estimator:
    """cel-go's coster with the API server's size estimator (compilation.go `sizeEstimator`):
    a path's size is the MaxElements of the declaration it leads to from the rule's node."""

    def __init__(self, root: Decl) -> None:
        self.root = root
        self.scopes: dict[str, list[_Var]] = {}

    # sizes

    def estimate_size(self, path: list[str] | None) -> Size | None:
        if not path:
            return None
        node = self.root
        for name in path[1:]:  # the first element is the variable
            if name in ("@items", "@values"):
                if node.elem is None:
                    return None
                node = node.elem
            elif name == "@keys":
                if node.key is None:
                    return None
                node = node.key
            else:
                found = node.fields.get(name)
                if found is None:
                    return None
                node = found
        return (0, node.max_elements)

    def size(self, e: _E) -> Size | None:
        """computeSize: computed, then by path, then by type, then a local variable's."""
        if e.size is not None:
            return e.size
        by_path = self.estimate_size(e.path)
        if by_path is not None:
            return by_path
        if e.ty.kind in _SCALAR_KINDS:
            return (1, 1)
        return e.local

    def size_or_unknown(self, e: _E) -> Size:
        got = self.size(e)
        return _UNKNOWN if got is None else got

    def elem_size(self, target: _E) -> Size | None:
        """library/cost.go `listElementNode` then `sizeEstimate`: None when the target has no
        element type; the items' size by path, else unknown."""
        if target.ty.elem is None and target.ty.kind not in ("list", "map"):
            return None
        path = [*target.path, "@items"] if target.path is not None else None
        got = self.estimate_size(path)
        return _UNKNOWN if got is None else got

    # the walk

    def cost(self, node: Node) -> _E:
        kind = node[0]
        if kind == "lit":
            return self._literal(node[1])
        if kind == "ident":
            return self._ident(node[1])
        if kind == "select":
            operand = self.cost(node[1])
            extra = 1 if operand.ty.kind in ("map", "object") else 0
            path = (operand.path or []) + [node[2]]
            return _E(_add(operand.cost, extra), self._field_type(operand.ty, node[2], path), path)
        if kind == "has":
            operand = self.cost(node[1])  # presence tests cost nothing (PresenceTestHasCost(false))
            return _E(operand.cost, _Ty("bool"))
        if kind == "list":
            return self._list(node[1])
        if kind == "map":
            return self._map(node[1])
        if kind == "cond":
            c, a, b = self.cost(node[1]), self.cost(node[2]), self.cost(node[3])
            out = _E(_add(c.cost, max(a.cost, b.cost)), a.ty if a.ty.kind == b.ty.kind else _DYN)
            out.size = _union(self.size_or_unknown(a), self.size_or_unknown(b))
            out.entry = a.entry.union(b.entry) if a.entry is not None else None
            return out
        if kind in ("and", "or"):
            left, right = self.cost(node[1]), self.cost(node[2])
            return _E(_add(left.cost, right.cost), _Ty("bool"))
        if kind in ("not", "neg"):
            operand = self.cost(node[1])
            return _E(_add(operand.cost, 1), _Ty("bool") if kind == "not" else operand.ty)
        if kind == "index":
            return self._index(self.cost(node[1]), self.cost(node[2]))
        if kind == "binop":
            return self._binop(node[1], self.cost(node[2]), self.cost(node[3]))
        if kind == "comp":
            return self._comprehension(node)
        if kind == "call":
            return self._call(node)
        raise _Unsupported(kind)

    def _literal(self, value: Any) -> _E:
        t = type(value)
        if t is str:
            out = _E(0, _Ty("string"))
            out.size = (len(value), len(value))
        elif t is bytes:
            out = _E(0, _Ty("bytes"))
            out.size = (len(value), len(value))
        else:
            name = {bool: "bool", float: "double", type(None): "null", UInt: "uint"}.get(t, "int")
            out = _E(0, _Ty(name))
            out.size = (1, 1)
        return out

    def _ident(self, name: str) -> _E:
        stack = self.scopes.get(name)
        if stack:
            var = stack[-1]
            out = _E(1, var.ty, var.path)
            out.entry, out.local = var.entry, var.size
            return out
        ty = _ty(self.root) if name in ("self", "oldSelf") else _DYN
        return _E(1, ty, [name])

    def _field_type(self, ty: _Ty, name: str, path: list[str]) -> _Ty:
        if ty.kind == "object":
            d = self._decl_at(path)
            return _ty(d)
        if ty.kind == "map" and ty.elem is not None:
            return ty.elem
        return _DYN

    def _decl_at(self, path: list[str]) -> Decl | None:
        node: Decl | None = self.root
        for name in path[1:]:
            if node is None:
                return None
            if name in ("@items", "@values"):
                node = node.elem
            elif name == "@keys":
                node = node.key
            else:
                node = node.fields.get(name)
        return node

    def _list(self, items: list[Node]) -> _E:
        total, val = 10, ((0, 0) if not items else (U64, 0))  # ListCreateBaseCost
        kinds = set()
        for item in items:
            e = self.cost(item)
            total = _add(total, e.cost)
            val = _union(val, self.size_or_unknown(e))
            kinds.add(e.ty.kind)
        elem = _Ty(kinds.pop()) if len(kinds) == 1 else _DYN
        out = _E(total, _Ty("list", elem))
        out.size = (len(items), len(items))
        out.entry = _Entry("list", (1, 1), val)
        return out

    def _map(self, pairs: list[tuple[Node, Node]]) -> _E:
        total = 30  # MapCreateBaseCost
        key = val = (0, 0) if not pairs else (U64, 0)
        for k, v in pairs:
            ke, ve = self.cost(k), self.cost(v)
            total = _add(_add(total, ke.cost), ve.cost)
            key, val = _union(key, self.size_or_unknown(ke)), _union(val, self.size_or_unknown(ve))
        out = _E(total, _Ty("map", _DYN))
        out.size = (len(pairs), len(pairs))
        out.entry = _Entry("map", key, val)
        return out

    def _index(self, target: _E, key: _E) -> _E:
        # IndexList / IndexMap: a unit, the operands; the path goes on to the items or values.
        container = target.ty.kind
        out = _E(_add(_add(target.cost, key.cost), 1), target.ty.elem or _DYN)
        if container in ("list", "map"):
            out.path = (target.path or []) + ["@items" if container == "list" else "@values"]
            if target.entry is not None:
                out.size = target.entry.val
        return out

    def _binop(self, op: str, left: _E, right: _E) -> _E:
        args = _add(left.cost, right.cost)
        kinds = (left.ty.kind, right.ty.kind)
        if op in ("==", "!=") or (op in ("<", "<=", ">", ">=") and ("string" in kinds or "bytes" in kinds)):
            # Equals, NotEquals and the string and bytes orderings: a tenth per item of the shorter.
            smallest = min(self.size_or_unknown(left)[1], self.size_or_unknown(right)[1])
            return _E(_add(_factor(smallest, _STRING_TRAVERSAL), args), _Ty("bool"))
        if op in ("<", "<=", ">", ">="):
            return _E(_add(args, 1), _Ty("bool"))
        if op == "in":
            container = right.ty.kind
            if container == "list":  # InList: one per item
                return _E(_add(args, self.size_or_unknown(right)[1]), _Ty("bool"))
            return _E(_add(args, 1), _Ty("bool"))  # InMap (and dyn: its cheaper overload)
        if op == "+":
            kind = left.ty.kind if left.ty.kind != "dyn" else right.ty.kind
            if kind in ("string", "bytes", "list"):
                ls, rs = self.size_or_unknown(left), self.size_or_unknown(right)
                size = (_add(ls[0], rs[0]), _add(ls[1], rs[1]))
                out = _E(0, left.ty if left.ty.kind != "dyn" else right.ty)
                out.size = size
                if left.entry is not None:
                    out.entry = left.entry.union(right.entry)
                out.cost = _add(1 if kind == "list" else _factor(size[1], _STRING_TRAVERSAL), args)
                return out
        ty = left.ty if left.ty.kind != "dyn" else right.ty
        return _E(_add(args, 1), ty)

    def _push(self, name: str, var: _Var) -> None:
        self.scopes.setdefault(name, []).append(var)

    def _pop(self, name: str) -> None:
        self.scopes[name].pop()

    def _comprehension(self, node: Node) -> _E:
        """The macros as cel-go's parser expands them (parser/macro.go), costed as costComprehension
        costs the expansion: the range, the accumulator's initial value and the result once, the
        loop condition and step per item of the range's largest size."""
        _, macro, target, var, bodies = node
        rng = self.cost(target)
        count = self.size_or_unknown(rng)
        entry = rng.entry
        container = entry.container if entry is not None else rng.ty.kind
        if container == "list":
            size = entry.val if entry is not None else None
            suffix = "@items"
            elem_ty = rng.ty.elem or _DYN
        else:
            size = entry.key if entry is not None else None
            suffix = "@keys"
            elem_ty = _Ty("string") if rng.ty.kind in ("map", "object") else _DYN
        path = (rng.path or []) + [suffix]
        self._push(var, _Var(path, size, None, elem_ty))
        try:
            parts = [self.cost(b) for b in bodies]
        finally:
            self._pop(var)
        first = parts[0].cost
        if macro == "all":  # init true; cond @not_strictly_false(__result__): 2; step __result__ && p: 1 + p
            init, result, step = 0, 1, 3 + first
        elif macro == "exists":  # cond @not_strictly_false(!__result__): 3; step __result__ || p: 1 + p
            init, result, step = 0, 1, 4 + first
        elif macro == "exists_one":  # init 0; cond true; step p ? __result__ + 1 : __result__; result __result__ == 1
            init, result, step = 0, 2, 2 + first
        elif macro == "map" and len(parts) == 1:  # init []: 10; step __result__ + [f]: 12 + f
            init, result, step = 10, 1, 12 + first
        elif macro == "map":  # step p ? __result__ + [f] : __result__
            init, result, step = 10, 1, _add(first, _add(12, parts[1].cost))
        else:  # filter: step p ? __result__ + [x] : __result__: p + 13
            init, result, step = 10, 1, 13 + first
        total = _add(_add(_add(rng.cost, init), result), _mul(count[1], step))
        if macro in ("map", "filter"):
            if macro == "map":
                produced = parts[-1]
                val, ty = self.size_or_unknown(produced), produced.ty
            else:  # filter: the items kept are the iteration variable's
                local = _E(1, elem_ty, path)
                local.local = size
                val = self.size_or_unknown(local)
                ty = elem_ty
            out = _E(total, _Ty("list", ty))
            out.size = count
            out.entry = _Entry("list", (1, 1), _union((0, 0), val))
            return out
        out = _E(total, _Ty("bool"))
        out.size = (1, 1)
        return out

    def _call(self, node: Node) -> _E:
        _, name, target_node, arg_nodes = node
        if target_node is not None and target_node[0] == "ident" and target_node[1] in _NAMESPACES:
            if not self.scopes.get(target_node[1]):
                if target_node[1] == "cel" and name == "bind" and len(arg_nodes) == 3 and arg_nodes[0][0] == "ident":
                    return self._bind(arg_nodes[0][1], arg_nodes[1], arg_nodes[2])
                name, target_node = f"{target_node[1]}.{name}", None
        if name == "dyn" and target_node is None and len(arg_nodes) == 1:
            arg = self.cost(arg_nodes[0])
            out = _E(_add(arg.cost, 1), _DYN)
            out.size, out.entry = self.size(arg), arg.entry
            return out
        args = [self.cost(a) for a in arg_nodes]
        total = 0
        for a in args:
            total = _add(total, a.cost)
        target = self.cost(target_node) if target_node is not None else None
        if target is not None:
            total = _add(total, target.cost)
        # split's literal limit bounds its result (library/cost.go)
        limit = arg_nodes[1][1] if len(arg_nodes) > 1 and arg_nodes[1][0] == "lit" and type(arg_nodes[1][1]) is int else None
        fn, result, ty = self._function(name, target, args, limit if limit is None or limit >= 0 else U64)
        out = _E(_add(total, fn), ty)
        out.size = result
        return out

    def _bind(self, var: str, init_node: Node, body_node: Node) -> _E:
        init = self.cost(init_node)
        self._push(var, _Var(init.path, self.size(init), init.entry, init.ty))
        try:
            body = self.cost(body_node)
        finally:
            self._pop(var)
        out = _E(_add(_add(10, init.cost), body.cost), body.ty)  # the empty range list: 10
        out.size, out.entry = self.size(body), body.entry
        return out

    def _function(self, name: str, target: _E | None, args: list[_E], limit: int | None = None) -> tuple[int, Size | None, _Ty]:
        """The call's own cost, its result's size (None: none computed) and type: library/cost.go's
        EstimateCallCost first (lists, strings, formats), then cel-go's functionCost; one unit
        for the others."""
        for part in (self._list_call, self._string_call, self._format_call, self._celgo_call):
            found = part(name, target, args, limit)
            if found is not None:
                return found
        return 1, None, _CONSTANT_RESULTS.get(name, _DYN)

    def _list_call(self, name: str, target: _E | None, args: list[_E], limit: int | None) -> _Call | None:
        if name not in ("isSorted", "sum", "max", "min", "indexOf", "lastIndexOf", "includes") or target is None:
            return None
        sz = self.size_or_unknown
        if target.ty.kind != "list":
            return _factor(sz(target)[1], _STRING_TRAVERSAL), None, _INT
        elem = self.elem_size(target)
        element = 1
        if target.ty.elem is not None and target.ty.elem.kind in ("string", "bytes"):
            element = _add(element, _factor((elem or _UNKNOWN)[1], _STRING_TRAVERSAL))
        ty = _INT if name in ("indexOf", "lastIndexOf") else _BOOL if name == "isSorted" else target.ty.elem or _DYN
        return _mul(sz(target)[1], element), None, ty

    def _string_call(self, name: str, target: _E | None, args: list[_E], limit: int | None) -> _Call | None:
        sz = self.size_or_unknown
        if name in ("url", "jsonpatch.escapeKey") and len(args) == 1 and target is None:
            s = sz(args[0])
            return _factor(s[1], _STRING_TRAVERSAL), s, _Ty("other") if name == "url" else _STRING
        if target is None:
            return None
        if name in ("lowerAscii", "upperAscii", "substring", "trim"):
            s = sz(target)
            return _factor(s[1], _STRING_TRAVERSAL), s, _STRING
        if name == "replace" and len(args) >= 2:
            return self._replace(target, args)
        if name == "split":
            s = sz(target)
            most = s[1] if limit is None else limit
            return _factor(s[1], 2 * _STRING_TRAVERSAL), (0, most), _Ty("list", _STRING)
        if name == "join":
            return self._join(target, args)
        if name in ("find", "findAll") and args:
            s = sz(target)
            cost = _mul(_factor(_add(s[1], 1), _STRING_TRAVERSAL), _factor(sz(args[0])[1], _REGEX_LENGTH))
            return cost, (0, s[1]), _STRING if name == "find" else _Ty("list", _STRING)
        return None

    def _replace(self, target: _E, args: list[_E]) -> _Call:
        sz = self.size_or_unknown
        s, old, new = sz(target), sz(args[0]), sz(args[1])
        if old[0] == 0:
            count, retained = min(s[1] + 1, U64), s[1]
        elif new[1] <= old[0]:
            count, retained = 0, s[1]
        else:
            count, retained = math.ceil(s[1] / old[0]), 0
        return _factor(s[1], 2 * _STRING_TRAVERSAL), (0, _add(_mul(count, new[1]), retained)), _STRING

    def _join(self, target: _E, args: list[_E]) -> _Call:
        sz = self.size_or_unknown
        length = sz(target)
        elem = self.elem_size(target)
        total = (0, 0) if elem is None else (_mul(length[0], elem[0]), _mul(length[1], elem[1]))
        if args:
            sep = sz(args[0])
            total = (
                _add(total[0], _mul(sep[0], max(length[0] - 1, 0))),
                _add(total[1], _mul(sep[1], max(length[1] - 1, 0))),
            )
        return _factor(total[1], _STRING_TRAVERSAL), total, _STRING

    def _format_call(self, name: str, target: _E | None, args: list[_E], limit: int | None) -> _Call | None:
        if not args:
            return None
        sz = self.size_or_unknown
        if name in ("cidr", "isIP", "isCIDR", "quantity", "isQuantity", "semver", "isSemver"):
            return _factor(sz(args[0])[1], _STRING_TRAVERSAL), None, _BOOL if name.startswith("is") else _Ty("other")
        if name == "ip" and target is None:
            return _factor(sz(args[0])[1], _STRING_TRAVERSAL), None, _Ty("other")
        if name == "ip.isCanonical":
            return _factor(sz(args[0])[1], 2 * _STRING_TRAVERSAL), None, _BOOL
        if name == "validate" and target is not None:
            traversal = _factor(sz(args[0])[1], _STRING_TRAVERSAL)
            return _factor(traversal, _MAX_NAME_FORMAT_REGEX * _REGEX_LENGTH), None, _Ty("optional")
        return None

    def _celgo_call(self, name: str, target: _E | None, args: list[_E], limit: int | None) -> _Call | None:
        """cel-go's checker/cost.go functionCost."""
        if target is None or len(args) != 1:
            return None
        sz = self.size_or_unknown
        if name in ("startsWith", "endsWith"):
            return _factor(sz(args[0])[1], _STRING_TRAVERSAL), None, _BOOL
        if name == "matches":
            text = _factor(_add(sz(target)[1], 1), _STRING_TRAVERSAL)
            return _mul(text, _factor(sz(args[0])[1], _REGEX_LENGTH)), None, _BOOL
        if name == "contains":
            return _mul(_factor(sz(target)[1], _STRING_TRAVERSAL), _factor(sz(args[0])[1], _STRING_TRAVERSAL)), None, _BOOL
        return None


# A call's own cost, its result's size (None: none computed) and type (`_Estimator._function`).
_Call = tuple[int, Size | None, _Ty]
_STRING, _BOOL, _INT = _Ty("string"), _Ty("bool"), _Ty("int")
# The results of the calls that cost one unit: O(1).
_CONSTANT_RESULTS = {
    "size": _INT,
    "int": _INT,
    "double": _Ty("double"),
    "uint": _Ty("uint"),
    "string": _STRING,
    "bytes": _Ty("bytes"),
    "bool": _BOOL,
    "duration": _Ty("duration"),
    "timestamp": _Ty("timestamp"),
    "charAt": _STRING,
    "getScheme": _STRING,
    "getHost": _STRING,
    "getHostname": _STRING,
    "getPort": _STRING,
    "getEscapedPath": _STRING,
    "getQuery": _Ty("map", _Ty("list", _STRING)),
    "isURL": _BOOL,
    "hasValue": _BOOL,
    "matches": _BOOL,
}


def estimate(text: str, root: Decl) -> int:
    """The rule's (or messageExpression's) estimated maximum cost with `self` of the
    declaration `root`; 0 for an expression policylint cannot read (it estimates less, never
    more: see the module's docstring)."""
    if not text.strip():
        return 0
    try:
        tree = parse(text)
    except (CompileError, RecursionError):
        return 0
    try:
        return Estimator(root).cost(tree).cost
    except (_Unsupported, RecursionError):
        return 0


# -- the limits a CRD's schema must keep (validation.go, cel_validation.go) ----------------------------


def _max_cardinality(min_size: int) -> int:
    """compilation.go maxCardinality: how many values of the smallest size a request holds."""
    return MAX_REQUEST_SIZE // (min_size + 1)


def _extract_max_elements(s: Mapping[str, Any]) -> int | None:
    """cel_validation.go extractMaxElements: None for an unbounded list or map."""
    t = s.get("type")
    if t == "object":
        if "additionalProperties" in s and s["additionalProperties"] is not None:
            return _nonneg(s.get("maxProperties"))
        return 1
    if t == "array":
        return _nonneg(s.get("maxItems"))
    return 1


class Costly:
    """One cost the API server refuses: where (path parts from the version's openAPIV3Schema),
    and its message."""

    __slots__ = ("message", "parts")

    def __init__(self, parts: tuple[str | int, ...], message: str) -> None:
        self.parts = parts
        self.message = message


def cost_message(name: str, cost: int, limit: int) -> str:
    """validation.go getCostErrorMessage."""
    factor = float(cost) / float(limit)
    if factor > 100.0:
        said = "more than 100x"
    elif factor < 1.5:
        said = f"{factor:f}x"
    else:
        said = f"{factor:.1f}x"
    return (
        f"{name} exceeds budget by factor of {said} (try simplifying the rule, or adding maxItems, maxProperties,"
        " and maxLength where arrays, maps, and strings are declared)"
    )


_CACHE: IdentityMap[Mapping[str, Any], tuple[Costly, ...]] = IdentityMap()
# The same schema read again as other objects: a CRD given with `--crd` is read afresh by every
# run, and a process that runs many (the language server, a test suite) would otherwise estimate
# every rule of it again each time, the largest part of such a run's rules. Keyed by content.
_BY_CONTENT: dict[bytes, tuple[Costly, ...]] = {}


def refusals(schema: Mapping[str, Any]) -> tuple[Costly, ...]:
    """What the API server refuses in one version's openAPIV3Schema for its rules' estimated
    costs, in its order: each rule and messageExpression over the per-expression limit, then,
    when the total exceeds the per-schema limit, the (at most four) rules that contributed at
    least 1% of it and the schema. Worked out once per schema, and once per content in a process."""
    got = _CACHE.get(schema)
    if got is not None:
        return got
    got = kept_by_content(_BY_CONTENT, schema, _refusals)
    if len(_CACHE) > 10_000:
        _CACHE.clear()
    _CACHE[schema] = got
    return got


def _refusals(schema: Mapping[str, Any]) -> tuple[Costly, ...]:
    found: list[Costly] = []
    total = [0]
    expensive: list[tuple[int, int, tuple[str | int, ...]]] = []  # (cost, order, parts)
    for parts, node, cardinality in _walk(schema, (), 1, True):
        _node_costs(node, parts, cardinality, found, total, expensive)
    if total[0] > STATIC_CRD_COST_LIMIT:
        for _, _, parts in sorted(expensive, key=lambda e: (-e[0], e[1]))[:4]:
            found.append(
                Costly(parts, "contributed to estimated rule cost total exceeding cost limit for entire OpenAPIv3 schema")
            )
        name = "x-kubernetes-validations estimated rule cost total for entire OpenAPIv3 schema"
        found.append(Costly((), cost_message(name, total[0], STATIC_CRD_COST_LIMIT)))
    return tuple(found)


def _walk(
    s: Mapping[str, Any], parts: tuple[str | int, ...], cardinality: int | None, root: bool
) -> Iterator[tuple[tuple[str | int, ...], Mapping[str, Any], int | None]]:
    """The schema's nodes CEL rules may sit on (properties, additionalProperties, items; not
    inside allOf, anyOf, oneOf or not), depth first as the API server validates them, each with
    its cardinality (None: under an unbounded list or map)."""
    stack: list[tuple[Mapping[str, Any], tuple[str | int, ...], int | None, bool]] = [(s, parts, cardinality, root)]
    while stack:
        node, at, card, is_root = stack.pop()
        yield at, node if not is_root else {**node, "_root": True}, card
        factor = _extract_max_elements(node)
        child_card = None if card is None or factor is None else _mul(card, factor)
        children: list[tuple[Mapping[str, Any], tuple[str | int, ...], int | None, bool]] = []
        additional = node.get("additionalProperties")
        if isinstance(additional, dict):
            children.append((additional, (*at, "additionalProperties"), child_card, False))
        props = node.get("properties")
        if isinstance(props, dict):
            for name in sorted(props, key=str):
                child = props[name]
                if isinstance(child, dict):
                    children.append((child, (*at, "properties", name), child_card, False))
        items = node.get("items")
        if isinstance(items, dict):
            children.append((items, (*at, "items"), child_card, False))
        stack.extend(reversed(children))


def _node_costs(
    node: Mapping[str, Any],
    parts: tuple[str | int, ...],
    cardinality: int | None,
    found: list[Costly],
    total: list[int],
    expensive: list[tuple[int, int, tuple[str | int, ...]]],
) -> None:
    rules = node.get("x-kubernetes-validations")
    if not isinstance(rules, list) or not rules:
        return
    decl = decl_type(node, bool(node.get("_root") or node.get("x-kubernetes-embedded-resource")))
    if decl is None:
        return  # the API server cannot type the rules (its own error)
    fallback = _max_cardinality(decl.min_size)

    def observe(at: tuple[str | int, ...], cost: int) -> None:
        total[0] = _add(total[0], cost)
        if cost >= STATIC_CRD_COST_LIMIT // 100:
            expensive.append((cost, len(expensive), at))

    for i, validation in enumerate(rules):
        if not isinstance(validation, dict):
            continue
        at = (*parts, "x-kubernetes-validations", i)
        rule = validation.get("rule")
        base = estimate(rule, decl) if isinstance(rule, str) else 0
        cost = 0 if base == 0 else _mul(base, cardinality if cardinality is not None else fallback)
        if cost > STATIC_COST_LIMIT:
            found.append(Costly((*at, "rule"), cost_message("estimated rule cost", cost, STATIC_COST_LIMIT)))
        observe((*at, "rule"), cost)
        message = validation.get("messageExpression")
        if isinstance(message, str) and message:
            own = estimate(message, decl)
            if own > STATIC_COST_LIMIT:
                said = cost_message("estimated messageExpression cost", own, STATIC_COST_LIMIT)
                found.append(Costly((*at, "messageExpression"), said))
            observe((*at, "messageExpression"), own)
