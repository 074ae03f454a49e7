"""What a rule reads of `self` (`need_of`), and the part of a value that decides its result
(`project`): the key a rule's result is kept under (`result_key`).

A rule on a list often reads a little of each item: `self.all(l1, !has(l1.name) ||
self.exists_one(l2, ...l1.name == l2.name))` reads the items' names, the HTTPRoute rule counting
matches reads `self[i].matches.size()`. Keyed by the whole list, its result is worked out again
for every route (each route's rules differ somewhere); keyed by what it reads, once per distinct
list of names or of match counts. The part kept is exact: two values with the same projection
convert (under the same schema node) to CEL values that agree on everything the rule can observe,
so the rule gives the same result, error and cost on both.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from policylint.k8s.cel.convert import CEL_RESERVED

if TYPE_CHECKING:
    from policylint.k8s.cel.convert import _Info
    from policylint.k8s.cel.parser import Node


class Need:
    """What a rule reads of one value: all of it (`whole`), its size, some of its fields (each
    with what is read of it; an empty `Need` for a field only tested with `has()`), or its items
    (a comprehension's variable, or an index)."""

    __slots__ = ("escaped", "fields", "items", "size", "whole")

    def __init__(self) -> None:
        self.whole = False
        self.size = False
        self.fields: dict[str, Need] = {}
        self.items: Need | None = None
        # Fields read by their escape (`__namespace__`), which names the YAML key `namespace` only
        # in an object its schema converts (`project` reads the value whole elsewhere).
        self.escaped = False

    def field(self, name: str) -> Need:
        # A reserved word's escape (`__namespace__`) is that word's YAML key; another escaped
        # name, or one CEL cannot spell, reads the converted value by a name the YAML key does not
        # have: the value is read whole instead.
        if name.startswith("__") and name.endswith("__") and name[2:-2] in CEL_RESERVED:
            name = name[2:-2]
            self.escaped = True
        elif not name.isidentifier() or "__" in name:
            self.whole = True
            return Need()
        got = self.fields.get(name)
        if got is None:
            got = self.fields[name] = Need()
        return got

    def each(self) -> Need:
        if self.items is None:
            self.items = Need()
        return self.items


def merged(needs: list[Need]) -> Need:
    """What several rules read of `self` together: a key of this need determines the key of each
    (`project` reads no less of a value under it), so that values that agree on it agree on every
    rule's result (`program.rules_key`)."""
    out = Need()
    for need in needs:
        out.whole = out.whole or need.whole
        out.size = out.size or need.size
        out.escaped = out.escaped or need.escaped
        for name, sub in need.fields.items():
            got = out.fields.get(name)
            out.fields[name] = sub if got is None else merged([got, sub])
        if need.items is not None:
            out.items = need.items if out.items is None else merged([out.items, need.items])
    return out


def need_of(tree: Node) -> Need | None:
    """What the rule reads of `self`; None when it reads `self` whole (or no part of it can be
    told apart)."""
    root = Need()
    _visit(tree, {"self": root})
    return None if root.whole else root


def reads_schema(need: Need) -> bool:
    """Whether the key of what the rule reads depends on the schema node (`project` then needs
    it): a field read by its escape, or a size, which is a map's count of its kept keys."""
    return (
        need.escaped
        or need.size
        or any(reads_schema(sub) for sub in need.fields.values())
        or (need.items is not None and reads_schema(need.items))
    )


def _visit(node: Any, env: dict[str, Need]) -> None:
    """Record in `env`'s needs how `node` reads the variables bound to them. A path (`x.a[0].b`)
    in any place not named below is read whole: compared, passed to a function, returned."""
    if type(node) is list:
        for child in node:
            _visit(child, env)
        return
    if type(node) is not tuple or not node or type(node[0]) is not str:
        return
    head = node[0]
    target = _resolve(node, env)
    if target is not None:
        target.whole = True
        return
    if head == "has":
        on = _resolve(node[1], env)
        if on is not None:
            on.field(node[2])
            return
    elif head == "call" and node[1] == "size":
        _, _, receiver, args = node
        arg = receiver if receiver is not None and not args else (args[0] if receiver is None and len(args) == 1 else None)
        on = _resolve(arg, env) if arg is not None else None
        if on is not None:
            on.size = True
            return
    elif head == "comp":
        _, _, operand, var, bodies = node
        ranged = _resolve(operand, env)
        if ranged is not None:
            inner = {**env, var: ranged.each()}
        else:
            _visit(operand, env)
            inner = {k: v for k, v in env.items() if k != var}
        for body in bodies:
            _visit(body, inner)
        return
    elif head == "comp2":
        _, _, operand, first, second, bodies = node
        _visit(operand, env)  # its index or key and its value: read whole
        inner = {k: v for k, v in env.items() if k not in (first, second)}
        for body in bodies:
            _visit(body, inner)
        return
    for child in node[1:]:
        _visit(child, env)


def _resolve(node: Any, env: dict[str, Need]) -> Need | None:
    """The need of a path rooted in a variable of `env` (`x`, `x.a`, `x[0].b`), made as it is
    walked; None when `node` is no such path."""
    steps: list[str | None] = []  # a field's name, or None for an item
    while type(node) is tuple and node:
        head = node[0]
        if head == "select":
            steps.append(node[2])
            node = node[1]
        elif head == "index" and node[2][0] == "lit" and type(node[2][1]) is int:
            steps.append(None)
            node = node[1]
        elif head == "ident":
            break
        else:
            return None
    else:
        return None
    need = env.get(node[1])
    if need is None:
        return None
    for step in reversed(steps):
        if need.whole:
            return need
        need = need.each() if step is None else need.field(step)
    return need


NO_KEY: Any = object()  # no key: some part has no stand-in (`shape` found none)
_ABSENT: Any = object()  # a field the value does not have
_MAP: Any = object()
_LIST: Any = object()


def project(
    value: Any,
    need: Need,
    shapes: dict[int, Any],
    shape: Callable[[Any, dict[int, Any]], Any],
    strings: dict[str, int] | None = None,
    info: _Info | None = None,
) -> Any:
    """The part of a YAML value (before conversion) that `need` reads, as a hashable key; `NO_KEY`
    when there is none. What decides the converted value besides (the schema node: defaults,
    types, nullability) is the same for every value keyed at one node. `shape` is
    `program.shape` (the stand-in of a value read whole), `shapes` the object's memo of it;
    `info` the schema node's (without it, a map whose fields are read by their escape is read whole).

    With `strings` (a rule that only compares what it reads for equality,
    policylint.k8s.cel.patterns; the numbers of its literals), a string read whole stands for its
    number among the strings seen so far, in order (`[a, b, a]` is `[0, 1, 0]`), with the string
    itself where its schema node (`info`, followed down with the need) converts it to something
    other than the string: an enum, a duration, int-or-string."""
    if need.whole:
        if strings is not None and type(value) is str and not need.size and not need.fields and need.items is None:
            number = strings.setdefault(value, len(strings))
            return number if info is not None and info.string else (_EQUAL, number, value)
        got = shape(value, shapes)
        return NO_KEY if got is None else got
    t = type(value)
    if t is dict:
        return _project_map(value, need, shapes, shape, strings, info)
    if t is list:
        if need.fields:
            got = shape(value, shapes)
            return NO_KEY if got is None else got
        each = need.items
        if each is None:
            return (_LIST, len(value)) if need.size else _LIST
        items: list[Any] = [_LIST]
        inner = info.items if info is not None else None
        # Most lists read item by item hold maps (listeners, references, a route's rules): their
        # items go to `_project_map` without `project`'s own call and tests.
        maps = not each.whole
        for item in value:
            if item is not None:
                if maps and type(item) is dict:
                    item = _project_map(item, each, shapes, shape, strings, inner)
                else:
                    item = project(item, each, shapes, shape, strings, inner)
                if item is NO_KEY:
                    return NO_KEY
            items.append(item)
        return tuple(items)
    if not need.size and not need.fields and need.items is None:
        return t  # a scalar nothing reads but its presence
    got = shape(value, shapes)
    return NO_KEY if got is None else got


# A string's number in an equality pattern, with the string where its node converts it to
# something else; a string its node takes as it is stands for its bare number, which no other
# part of a key is (a scalar's shape is the string itself or a tuple, a map's or list's a token or
# a tuple): a number per string costs no tuple to make, hash and compare in every key.
_EQUAL: Any = object()


def _project_map(
    value: dict[Any, Any],
    need: Need,
    shapes: dict[int, Any],
    shape: Callable[[Any, dict[int, Any]], Any],
    strings: dict[str, int] | None,
    info: _Info | None,
) -> Any:
    """`project` of a map."""
    if need.size and info is not None and info.kind == "map" and need.items is None and not need.fields:
        # A map of additionalProperties keeps every key whose value is not null (or may be):
        # its size is that count, whatever the keys and values.
        nullable = info.additional is not None and info.additional.nullable
        return (_MAP, sum(1 for v in value.values() if v is not None or nullable))
    if need.size or need.items is not None or (need.escaped and (info is None or not info.kind.startswith("object"))):
        # A map's size and its keys depend on what conversion prunes: read whole.
        got = shape(value, shapes)
        return NO_KEY if got is None else got
    parts: list[Any] = [_MAP]
    fields = None if info is None else info.fields
    for name, sub in need.fields.items():
        got = value.get(name, _ABSENT)
        if got is not _ABSENT and got is not None:
            below = None if fields is None else fields.get(name)
            if strings is not None and type(got) is str and sub.whole and not sub.size and not sub.fields and sub.items is None:
                # `project`'s first case, without a call: most fields the equality rules read are
                # strings (names, sections, protocols), each its number in the pattern.
                number = strings.setdefault(got, len(strings))
                got = number if below is not None and below.string else (_EQUAL, number, got)
            else:
                got = project(got, sub, shapes, shape, strings, below)
                if got is NO_KEY:
                    return NO_KEY
        parts.append(got)  # absent, null or the part read: has() tells the first two apart
    return tuple(parts)


# `project` with its need, its schema node's info and whether strings are numbered fixed: what
# `program.rules_key` asks of every new value under a node (each Gateway's listeners, each route's
# parentRefs, each policy's `spec`), worked out once per node. Called (value, shapes, strings).
Projector = Callable[[Any, "dict[int, Any]", "dict[str, int] | None"], Any]


def projector(need: Need, shape: Callable[[Any, dict[int, Any]], Any], numbered: bool, info: _Info | None) -> Projector:
    """A function that gives `project(value, need, shapes, shape, strings, info)` for every value,
    where `strings` is a dict exactly when `numbered`: the same key, made with what `project` asks
    of `need` and `info` at each step (which fields a map's key reads, which of them are strings
    numbered in the pattern, each one's schema node) decided here once rather than again for every
    value, so that keying a new list of maps is a loop per map over its fields' plan."""
    if need.whole:
        if numbered and not need.size and not need.fields and need.items is None:
            return _numbered_leaf(shape, info is not None and info.string)
        return _whole(shape)
    as_map = _map_projector(need, shape, numbered, info)
    as_list = _list_projector(need, shape, numbered, info)
    if not need.size and not need.fields and need.items is None:

        def scalar(value: Any, shapes: dict[int, Any]) -> Any:
            return type(value)  # a scalar nothing reads but its presence

    else:
        scalar = _whole(shape)

    def project_(value: Any, shapes: dict[int, Any], strings: dict[str, int] | None) -> Any:
        t = type(value)
        if t is dict:
            return as_map(value, shapes, strings)
        if t is list:
            return as_list(value, shapes, strings)
        return scalar(value, shapes)

    return project_


def _whole(shape: Callable[[Any, dict[int, Any]], Any]) -> Callable[..., Any]:
    """A value read whole: its shape."""

    def whole(value: Any, shapes: dict[int, Any], strings: Any = None) -> Any:
        got = shape(value, shapes)
        return NO_KEY if got is None else got

    return whole


def _numbered_leaf(shape: Callable[[Any, dict[int, Any]], Any], string: bool) -> Projector:
    """A value read whole and only compared for equality: a string its number in the pattern
    (with the string where its node converts it to something else), anything else its shape."""

    def leaf(value: Any, shapes: dict[int, Any], strings: dict[str, int] | None) -> Any:
        if type(value) is str:
            assert strings is not None
            number = strings.setdefault(value, len(strings))
            return number if string else (_EQUAL, number, value)
        got = shape(value, shapes)
        return NO_KEY if got is None else got

    return leaf


def _map_projector(need: Need, shape: Callable[[Any, dict[int, Any]], Any], numbered: bool, info: _Info | None) -> Projector:
    """`_project_map` with its need and info fixed."""
    keyed_whole = _map_whole(need, shape, info)
    if keyed_whole is not None:
        return keyed_whole
    steps = _field_steps(need, shape, numbered, None if info is None else info.fields)

    def project_map(value: dict[Any, Any], shapes: dict[int, Any], strings: dict[str, int] | None) -> Any:
        parts: list[Any] = [_MAP]
        append = parts.append
        for name, how, string, sub, inner, listed in steps:
            got = value.get(name, _ABSENT)
            if got is not _ABSENT and got is not None:
                t = type(got)
                if how == _BELOW:
                    # A map or a list straight to its projector, without `sub`'s call to choose.
                    got = (
                        inner(got, shapes, strings)
                        if t is dict
                        else listed(got, shapes, strings)
                        if t is list
                        else sub(got, shapes, strings)
                    )
                    if got is NO_KEY:
                        return NO_KEY
                elif how == _COUNTED:
                    # A field read only for its size: a list's is its length, as `_list_projector`
                    # keys it, without a call (a map's depends on its node, a string's is read whole).
                    got = (
                        (_LIST, len(got))
                        if t is list
                        else inner(got, shapes, strings)
                        if t is dict
                        else sub(got, shapes, strings)
                    )
                    if got is NO_KEY:
                        return NO_KEY
                elif how == _PRESENT:
                    # `project` of a value nothing reads but its presence: a map with no field
                    # read, a list with no item read, a scalar's type.
                    got = _BARE_MAP if t is dict else _LIST if t is list else t
                elif t is str:  # most fields read: names, sections, protocols
                    if how == _NUMBERED:
                        assert strings is not None  # numbered only where strings are
                        number = strings.setdefault(got, len(strings))
                        got = number if string else (_EQUAL, number, got)
                elif t is int or t is bool:
                    got = (t, got)
                else:
                    got = sub(got, shapes, strings)
                    if got is NO_KEY:
                        return NO_KEY
            append(got)  # absent, null or the part read: has() tells the first two apart
        return tuple(parts)

    return project_map


def _map_whole(need: Need, shape: Callable[[Any, dict[int, Any]], Any], info: _Info | None) -> Projector | None:
    """`_project_map`'s first two cases, a map read for its size or whole; None: by its fields."""
    if need.size and info is not None and info.kind == "map" and need.items is None and not need.fields:
        nullable = info.additional is not None and info.additional.nullable

        def size(value: dict[Any, Any], shapes: dict[int, Any], strings: dict[str, int] | None) -> Any:
            return (_MAP, sum(1 for v in value.values() if v is not None or nullable))

        return size
    if need.size or need.items is not None or (need.escaped and (info is None or not info.kind.startswith("object"))):
        return _whole(shape)
    return None


def _field_steps(
    need: Need, shape: Callable[[Any, dict[int, Any]], Any], numbered: bool, fields: dict[str, _Info] | None
) -> tuple[tuple[str, int, bool, Projector, Projector, Projector], ...]:
    """Per field `_map_projector` reads: its name; how it is keyed without a call where it can be
    (`_BELOW`: a map by the map projector of what is read of it, anything else by its projector;
    `_SHAPED`: read whole, a string, an integer or a boolean its shape, which `shape` gives as the
    string itself or (type, value); `_NUMBERED`: the same, a string its number in the pattern, as
    `project`'s first case; `_PRESENT`: only tested with has(), its kind); whether its node takes
    a string as it is; its projector; for `_BELOW` and `_COUNTED` (a field read only for its size),
    the projector of a map there; and for `_BELOW`, of a list there."""
    plan: list[tuple[str, int, bool, Projector, Projector, Projector]] = []
    for name, sub in need.fields.items():
        below = None if fields is None else fields.get(name)
        how = _BELOW
        if sub.whole:
            how = _NUMBERED if numbered and not sub.size and not sub.fields and sub.items is None else _SHAPED
        elif not sub.size and not sub.fields and sub.items is None and not sub.escaped:
            how = _PRESENT
        elif sub.size and not sub.fields and sub.items is None:
            how = _COUNTED
        keyed = projector(sub, shape, numbered, below)
        inner = _map_projector(sub, shape, numbered, below) if how in (_BELOW, _COUNTED) else keyed
        listed = _list_projector(sub, shape, numbered, below) if how == _BELOW else keyed
        plan.append((name, how, below is not None and below.string, keyed, inner, listed))
    return tuple(plan)


# How `_map_projector` keys a field's string, integer or boolean (see there).
_BELOW, _SHAPED, _NUMBERED, _PRESENT, _COUNTED = 0, 1, 2, 3, 4
_BARE_MAP = (_MAP,)  # a map no field of which is read


def _list_projector(need: Need, shape: Callable[[Any, dict[int, Any]], Any], numbered: bool, info: _Info | None) -> Projector:
    """`project` of a list, with its need and info fixed."""
    if need.fields:
        return _whole(shape)
    each = need.items
    if each is None:
        counted = need.size

        def bare(value: list[Any], shapes: dict[int, Any], strings: dict[str, int] | None) -> Any:
            return (_LIST, len(value)) if counted else _LIST

        return bare
    inner = info.items if info is not None else None
    item = projector(each, shape, numbered, inner)
    # Most lists read item by item hold maps (listeners, references, a route's rules): their
    # items go to the map's projector straight, as `project` sends them to `_project_map`.
    as_map = None if each.whole else _map_projector(each, shape, numbered, inner)

    def project_list(value: list[Any], shapes: dict[int, Any], strings: dict[str, int] | None) -> Any:
        items: list[Any] = [_LIST]
        append = items.append
        for got in value:
            if got is not None:
                got = as_map(got, shapes, strings) if as_map is not None and type(got) is dict else item(got, shapes, strings)
                if got is NO_KEY:
                    return NO_KEY
            append(got)
        return tuple(items)

    return project_list


def describe(need: Need) -> str:
    """`need` written out, its fields in their order (the order of a map's key's parts): what a
    projector written ahead of the run (policylint.k8s.celkeys) was written for, told apart from
    what the rules of its node read now."""
    fields = ",".join(f"{name!r}:{describe(sub)}" for name, sub in need.fields.items())
    items = "" if need.items is None else describe(need.items)
    return f"({int(need.whole)}{int(need.size)}{int(need.escaped)}{{{fields}}}[{items}])"


# The parts of a key the generated projectors write as the ones here do (policylint.k8s.celkeys):
# no key, a map's and a list's tokens, a numbered string's mark, an absent field, a map no field of
# which is read.
KEY_PARTS = (NO_KEY, _MAP, _LIST, _EQUAL, _ABSENT, _BARE_MAP)
