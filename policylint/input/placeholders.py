"""Where a document holds placeholders that a tool substitutes before applying it (PL004).

Test harnesses and deployment tools write values that are never the value applied:

- in a Kubernetes name (a `name`, `namespace`, `gatewayClassName` or `sectionName`), `${VAR}`
  (envsubst, Flux), `$(VAR)` (Kustomize vars), `{VAR}` and `{{VAR}}` (scripts, test suites) and
  `<name>` (documentation): no name may hold `$`, `{`, `(` or `<` (`in_name`);
- anywhere, a whole value `{UPPER_SNAKE}`: Gateway API's conformance suite writes
  `gatewayClassName: "{GATEWAY_CLASS_NAME}"` and `controllerName: "{GATEWAY_CONTROLLER_NAME}"`,
  and Envoy Gateway's e2e files write it unquoted, which YAML reads as a flow mapping of one key
  with no value (`{GATEWAY_CLASS_NAME: null}`);
- anywhere, a whole value `PLACEHOLDER_UPPER_SNAKE`: the suite's `PLACEHOLDER_USABLE_ADDRS`
  addresses.

The conformance Applier substitutes each of these before applying
(conformance/utils/kubernetes/apply.go in kubernetes-sigs/gateway-api v1.6.1). Each field found
here is PL004's: `ProjectIndex.placeholders` records them once per object, and no other rule
reports on such a field or inside it (policylint.rules.engine), nor does the type check (PL010).
"""

from __future__ import annotations

import re
from typing import Any, Literal

Braces = Literal["all", "single", "none"]
PathParts = tuple[str | int, ...]

# Keys whose string values are Kubernetes names wherever they appear (metadata, the name and
# namespace of every reference, and the Gateway API's own name fields).
NAME_KEYS = ("name", "namespace", "gatewayClassName", "sectionName")
_NODES = 100_000  # a walk bounded like every other pass over a document
# An environment-variable-like name: what harnesses write between braces and after PLACEHOLDER_.
_UPPER_SNAKE = re.compile(r"[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)*")
_HARNESS = re.compile(r"PLACEHOLDER_[A-Z0-9]+(?:_[A-Z0-9]+)*")


def in_name(value: str, *, braces: Braces = "all") -> str | None:
    """The placeholder in a name-like value, or None (str methods only: linear). `braces`: which
    brace placeholders count (none in a document that is no Kubernetes object, `{VAR}` only in
    a kind that uses `{{ }}` as its own syntax)."""
    for opening, closing in (("${", "}"), ("$(", ")")):
        start = value.find(opening)
        if start >= 0:
            end = value.find(closing, start + 2)
            return value[start : end + 1] if end > start else value[start:]
    start = value.find("{")
    if start >= 0:
        double = value.startswith("{{", start)
        if braces == "all" or (braces == "single" and not double):
            closing = "}}" if double else "}"
            end = value.find(closing, start + len(closing))
            return value[start : end + len(closing)] if end > start else value[start:]
    start = value.find("<")
    if start >= 0:
        end = value.find(">", start + 1)
        if end > start + 1:
            return value[start : end + 1]
    return None


def whole_value(value: Any, *, braces: Braces) -> str | None:
    """The placeholder a whole value is, as written, wherever it stands: `{UPPER_SNAKE}` (a
    string, or the flow mapping YAML makes of it unquoted) and `PLACEHOLDER_UPPER_SNAKE`."""
    if braces == "none":
        return None
    if isinstance(value, str):
        if value.startswith("{") and value.endswith("}") and _UPPER_SNAKE.fullmatch(value, 1, len(value) - 1):
            return value
        return value if _HARNESS.fullmatch(value) else None
    if isinstance(value, dict) and len(value) == 1:
        ((key, inner),) = value.items()
        if inner is None and isinstance(key, str) and _UPPER_SNAKE.fullmatch(key):
            return "{" + key + "}"
    return None


def fields(data: Any, *, braces: Braces, first: bool = False) -> list[tuple[PathParts, str]]:
    """The placeholder fields of a document, in document order: (path, placeholder as written).
    `first`: stop at the first."""
    if not _may_hold(data):
        return []
    out: list[tuple[PathParts, str]] = []
    stack: list[tuple[PathParts, Any, bool]] = [((), data, False)]
    seen = 0
    while stack and seen < _NODES:
        path, node, is_name = stack.pop()
        seen += 1
        found = whole_value(node, braces=braces) if path else None
        if found is None and is_name and isinstance(node, str):
            found = in_name(node, braces=braces)
        if found is not None:
            out.append((path, found))
            if first:
                break
            continue
        # Children are pushed last first, so that the walk meets fields in document order.
        if isinstance(node, dict):
            for key, value in reversed(list(node.items())):
                if isinstance(value, (dict, list, str)):
                    stack.append(((*path, key), value, key in NAME_KEYS))
        elif isinstance(node, list):
            for i in range(len(node) - 1, -1, -1):
                if isinstance(node[i], (dict, list, str)):
                    stack.append(((*path, i), node[i], False))
    return out


def _may_hold(data: Any) -> bool:
    """False when no value of `data` can be a placeholder, so that `fields` finds none. Every
    placeholder holds `$` (`${`, `$(`), `{` or `<` in a string, is a string `PLACEHOLDER_...`, or
    is a one-key mapping whose value is null (`{VAR}` unquoted); these are looked for without
    the paths `fields` builds for every node, which cost most of its walk (the engine asks for
    every object a finding sits on; almost none holds a placeholder). True when one may, or
    past the walk's bound, where `fields` decides within its own."""
    if type(data) is not dict and type(data) is not list:
        return True  # nothing to walk, or not what a loader makes: `fields` decides
    stack: list[Any] = [data]
    seen = 0
    while stack:
        node = stack.pop()
        values = node.values() if type(node) is dict else node
        seen += len(values) + 1
        if seen > _NODES:
            return True
        if type(node) is dict and len(node) == 1 and next(iter(values)) is None:
            return True
        for value in values:
            kind = type(value)
            if kind is str:
                if "$" in value or "{" in value or "<" in value or "PLACEHOLDER_" in value:
                    return True
            elif kind is dict or kind is list:
                stack.append(value)
            elif isinstance(value, (dict, list, str)):  # a subclass: as `fields` takes it
                return True
    return False


def along(data: Any, path: PathParts, *, braces: Braces) -> bool:
    """Whether a field on `path` (a prefix of it, or `path` itself) holds a placeholder as `fields`
    tells one: the nodes along the path alone are read, not the whole document. A rule's finding
    is dropped when it sits on or inside such a field, and walking every object a finding sits on
    cost a messy repository 4% of its run. `fields` stops after `_NODES` nodes, so a True here is
    only a candidate, which the caller confirms with `fields`; a False is final, since `fields`
    finds no field that is not on some path."""
    node = data
    for part in path:
        if isinstance(node, dict):
            if part not in node:
                return False
            is_name = part in NAME_KEYS
            node = node[part]
        elif isinstance(node, list) and type(part) is int and 0 <= part < len(node):
            is_name = False
            node = node[part]
        else:
            return False
        # `fields` walks into dicts, lists and strings only, in that order of checks.
        if not isinstance(node, (dict, list, str)):
            return False
        if whole_value(node, braces=braces) is not None:
            return True
        if is_name and isinstance(node, str) and in_name(node, braces=braces) is not None:
            return True
    return False
