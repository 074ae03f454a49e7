"""Rules that only compare the strings they read for equality (`equality_literals`): their result
is kept by the strings' equality pattern, not by the strings themselves.

The uniqueness rules of parentRefs and listeners read every item's names and compare them with
each other and with a few literals. Every tenant's names differ, so a key holding the names is new
for every route and Gateway; the rule's result only depends on which of them are equal to which
(and to the literals), and `[a, b, a]` has the pattern `[0, 1, 0]` whatever `a` and `b` are. That
holds exactly when nothing else reads the strings: no function, no ordering, no size, nothing
returned; CEL's `==` of two strings costs one unit whatever they hold
(policylint.k8s.cel.cost), so the cost does not depend on them either.
"""

from __future__ import annotations

from typing import Any


def equality_literals(tree: Any) -> tuple[str, ...] | None:
    """The string literals the rule compares what it reads of `self` with, sorted, when every value
    it reads whole (`x.name`, not `x.name.size()`) is only compared for equality (`==`, `!=`, `in`
    a list of literals) with another such value or a literal; None when some value it reads is
    used otherwise (passed to a function, ordered, returned, iterated with two variables)."""
    literals: set[str] = set()
    if not _equality_only(tree, frozenset({"self"}), literals):
        return None
    return tuple(sorted(literals))


def _rooted(node: Any, env: frozenset[str]) -> bool:
    """Whether `node` is a path from a variable of `env` (`x`, `x.a`, `x[0].b`)."""
    while type(node) is tuple and node:
        head = node[0]
        if head == "select" or (head == "index" and node[2][0] == "lit" and type(node[2][1]) is int):
            node = node[1]
        elif head == "ident":
            return node[1] in env
        else:
            return False
    return False


def _compared(side: Any, env: frozenset[str], literals: set[str]) -> bool:
    """Whether one side of an equality is a path or a literal (recorded when a string)."""
    if type(side) is tuple and side and side[0] == "lit":
        if type(side[1]) is str:
            literals.add(side[1])
        return True
    return _rooted(side, env)


def _equality_only(node: Any, env: frozenset[str], literals: set[str]) -> bool:
    if type(node) is list:
        return all(_equality_only(child, env, literals) for child in node)
    if type(node) is not tuple or not node or type(node[0]) is not str:
        return True
    if _rooted(node, env):
        return False  # read whole where no equality is the only use
    head = node[0]
    if head in ("comp", "comp2"):
        return _comprehension(node, env, literals)
    if head == "binop" and node[1] in ("==", "!=", "in"):
        decided = _comparison(node, env, literals)
        if decided is not None:
            return decided
    elif head == "has" and _rooted(node[1], env):
        return True
    elif head == "call" and node[1] == "size":
        _, _, receiver, args = node
        arg = receiver if receiver is not None and not args else (args[0] if receiver is None and len(args) == 1 else None)
        if arg is not None and _rooted(arg, env):
            return True  # a size is read exactly (`projection.project`), never as a pattern
    return all(_equality_only(child, env, literals) for child in node[1:])


def _comparison(node: Any, env: frozenset[str], literals: set[str]) -> bool | None:
    """`==`, `!=` and `in` with a path on a side: whether it compares only for equality with
    another path or literals; None when no side is a path (its operands are looked at as any)."""
    op, left, right = node[1], node[2], node[3]
    if op == "in":
        if not _rooted(left, env):
            return None
        if right[0] != "list" or not all(m[0] == "lit" for m in right[1]):
            return False
        literals.update(m[1] for m in right[1] if type(m[1]) is str)
        return True
    if _rooted(left, env) or _rooted(right, env):
        return _compared(left, env, literals) and _compared(right, env, literals)
    return None


def _comprehension(node: Any, env: frozenset[str], literals: set[str]) -> bool:
    """A macro: a one-variable one over a path binds its variable to the path's items; one over
    anything else, and its variable, shadow what they name. A two-variable one over a path reads
    its keys or indexes as values: not equality only."""
    if node[0] == "comp":
        _, _, operand, var, bodies = node
        if _rooted(operand, env):
            inner = env | {var}
        elif _equality_only(operand, env, literals):
            inner = env - {var}
        else:
            return False
    else:
        _, _, operand, first, second, bodies = node
        if _rooted(operand, env) or not _equality_only(operand, env, literals):
            return False
        inner = env - {first, second}
    return all(_equality_only(body, inner, literals) for body in bodies)
