"""PL704: the CEL rules of the CRDs (`x-kubernetes-validations`), evaluated offline.

The schemas are the ones PL702 and PL703 read (`_schemas_for`: a CRD in the input decides, else
the bundled release); the rules are evaluated by policylint.k8s.cel, compiled once per rule text
and only for the schema nodes an object actually has.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from policylint.findings import Issue, Severity
from policylint.input.positions import format_path
from policylint.k8s.cel import EvalError
from policylint.k8s.objects import K8sObject
from policylint.project import Project
from policylint.rules.base import POLICY, Rule
from policylint.rules.schema import GATEWAY_API_KINDS, _schemas_for, _template, _under

_VALIDATIONS = "x-kubernetes-validations"
_UNSET: Any = object()
_TOP_LEVEL_SKIPPED = frozenset({"apiVersion", "kind", "metadata", "status"})
# The policy rules that check, without the cluster, what the CRDs' CEL rules on target references
# and merge strategies check too: where one of them reports a field a failing CEL rule reads,
# that finding is the one to fix, and PL704 says nothing more (see `_covered`).
_STATIC_POLICY_RULES = ("PL101", "PL102", "PL103", "PL104", "PL105", "PL106", "PL107", "PL108", "PL202", "PL203", "PL205")


class CelViolation(Rule):
    """A value its CRD's CEL validation rules (`x-kubernetes-validations`) reject: the API server refuses the object with the rule's message."""

    id = "PL704"
    name = "cel-violation"
    severity = Severity.ERROR
    subjects = GATEWAY_API_KINDS | {POLICY}

    def check(self, project: Project) -> Iterable[Issue]:
        from policylint.k8s import cel

        others: dict[int, list[str]] | None = None
        # (schema node, rule, result key) -> outcome: a rule's result on values that agree in
        # what it reads is computed once (`cel.result_key`); most nodes of a repository repeat.
        cache: dict[tuple[int, str, tuple[Any, ...]], tuple[bool, EvalError | None] | None] = {}
        for obj, schema, source in _schemas_for(project):
            if not _subtree_has_rules(schema):
                continue
            malformed = project.index.malformed(obj)
            memo: dict[int, Any] = {}
            for parts, raw, node in _nodes(obj.data, schema):
                if malformed.broken(*parts):
                    continue  # the value or a parent has the wrong type: PL010's finding
                value: Any = _UNSET
                path: str | None = None
                for validation in node[_VALIDATIONS]:
                    rule = validation.get("rule")
                    if not isinstance(rule, str):
                        continue
                    compiled = cel.compile_rule(rule)
                    if compiled.program is None:
                        continue  # transition rules, unsupported functions: `policylint rules --cel-coverage`
                    key = cel.result_key(compiled, raw) if parts else None
                    slot = (id(node), rule, key) if key is not None else None
                    outcome = cache.get(slot, _UNSET) if slot is not None else _UNSET
                    if outcome is _UNSET:
                        if value is _UNSET:
                            value = _root_value(obj.data, node, memo) if not parts else cel.to_cel(raw, node, memo)
                        # None: the node's value has the wrong type for its schema (PL703's
                        # finding; the API server does not run the rules then).
                        outcome = None if value is cel.BAD else cel.evaluate(compiled, value)
                        if slot is not None:
                            cache[slot] = outcome
                    if outcome is None:
                        break
                    passed, error = outcome
                    if passed or isinstance(error, cel.BadValue):
                        continue  # a value PL703 reports, read by the rule
                    if value is _UNSET:
                        value = _root_value(obj.data, node, memo) if not parts else cel.to_cel(raw, node, memo)
                    if error is not None and error.message.startswith("no such key: "):
                        if error.message[len("no such key: ") :] in memo.get(cel.MISSING, ()):
                            continue  # a required field is missing: PL703 reports it
                    if others is None:
                        others = _reported_by_others(project)
                    if path is None:
                        path = format_path(parts)
                    if _covered(others.get(id(obj), ()), path, compiled, value):
                        continue
                    yield self._finding(obj, path, validation, compiled, value, error, source)

    def _finding(
        self,
        obj: K8sObject,
        path: str,
        validation: Mapping[str, Any],
        compiled: Any,
        value: Any,
        error: EvalError | None,
        source: str | None,
    ) -> Issue:
        from policylint.k8s import cel

        at = _field_path(path, validation.get("fieldPath"))
        origin = f"the {source} CRD" if source else "its CRD in the input"
        where = at or "the object"
        reason = validation.get("reason")
        because = f" ({reason})" if isinstance(reason, str) and reason else ""
        severity: Severity | None = None if source is None else Severity.WARNING
        if isinstance(error, cel.CostExceeded):
            message = (
                f"{where}: the CEL rule `{compiled.text}` of {origin} was not evaluated to the end: {error.message}"
                " (policylint's offline budget; the API server has its own cost limit)"
            )
            return self.issue(obj, at, message, severity=Severity.WARNING)
        if error is not None:
            # What the API server says when a rule fails to evaluate (no such key, no such overload).
            said = f"{error.message} evaluating rule: {compiled.text}"
        else:
            said = cel.message_of(validation, value)
        message = f"{where}: {said}{because} (a CEL rule of {origin}): the API server rejects the object"
        if source:
            message += f"; if the cluster runs a newer release than {source}, lint with its CRDs (--crd)"
        hint = None if error is not None or said.startswith("failed rule:") else f"The rule: `{compiled.text}`"
        return self.issue(obj, at, message, severity=severity, hint=hint)


_SUBTREE: dict[int, tuple[Mapping[str, Any], bool]] = {}


def _subtree_has_rules(node: Mapping[str, Any]) -> bool:
    """Whether a schema node or anything under it has CEL rules (cached; the entry keeps the node
    alive, so its id is never reused for another)."""
    got = _SUBTREE.get(id(node))
    if got is not None and got[0] is node:
        return got[1]
    found = bool(node.get(_VALIDATIONS))
    if not found:
        children: list[Any] = [*(node.get("properties") or {}).values(), node.get("items"), node.get("additionalProperties")]
        found = any(isinstance(c, dict) and _subtree_has_rules(c) for c in children)
    if len(_SUBTREE) > 100_000:
        _SUBTREE.clear()  # CRDs read from many inputs in one process (tests): keep the cache bounded
    _SUBTREE[id(node)] = (node, found)
    return found


def _nodes(data: Mapping[str, Any], schema: Mapping[str, Any]) -> Iterator[tuple[tuple[str | int, ...], Any, Mapping[str, Any]]]:
    """(path, value, schema node) for every node of the object with CEL rules, parents first, in
    document order; metadata, status and unrendered template values are left out."""
    stack: list[tuple[Any, Mapping[str, Any], tuple[str | int, ...]]] = [(data, schema, ())]
    while stack:
        value, node, path = stack.pop()
        if value is None or _template(value):
            continue
        if node.get(_VALIDATIONS):
            yield path, value, node
        children: list[tuple[Any, Mapping[str, Any], tuple[str | int, ...]]] = []
        if type(value) is dict:
            properties = node.get("properties") or {}
            additional = node.get("additionalProperties")
            for key, child in value.items():
                if not path and key in _TOP_LEVEL_SKIPPED:
                    continue
                sub = properties.get(key)
                if sub is None and isinstance(additional, dict):
                    sub = additional
                if sub is not None and (type(child) is dict or type(child) is list) and _subtree_has_rules(sub):
                    children.append((child, sub, (*path, key)))
        elif type(value) is list:
            items = node.get("items")
            if isinstance(items, dict) and _subtree_has_rules(items):
                children.extend((item, items, (*path, i)) for i, item in enumerate(value))
        stack.extend(reversed(children))


def _root_value(data: Mapping[str, Any], schema: Mapping[str, Any], memo: dict[int, Any]) -> Any:
    """The object as rules on the schema's root see it: without status, with apiVersion, kind
    and of metadata only name and generateName (what the API server lets root rules read)."""
    from policylint.k8s import cel

    body = {k: v for k, v in data.items() if k not in _TOP_LEVEL_SKIPPED}
    value = cel.to_cel(
        body,
        {**schema, "properties": {k: v for k, v in (schema.get("properties") or {}).items() if k not in _TOP_LEVEL_SKIPPED}},
        memo,
    )
    if type(value) is dict:
        for key in ("apiVersion", "kind"):
            if isinstance(data.get(key), str):
                value[key] = data[key]
        metadata = data.get("metadata")
        if isinstance(metadata, dict):
            value["metadata"] = {k: metadata[k] for k in ("name", "generateName") if isinstance(metadata.get(k), str)}
    return value


def _field_path(path: str, field_path: Any) -> str:
    """The node's path extended by a validation's `fieldPath` (`.spec.foo`, `['a.b']`), relative
    to the node; the node's own path when it has none or it cannot be read."""
    if not isinstance(field_path, str) or not field_path:
        return path
    parts: list[str | int] = []
    i, n = 0, len(field_path)
    while i < n:
        if field_path[i] == ".":
            j = i + 1
            while j < n and field_path[j] not in ".[":
                j += 1
            if j == i + 1:
                return path
            parts.append(field_path[i + 1 : j])
            i = j
        elif field_path.startswith("['", i):
            j = field_path.find("']", i + 2)
            if j < 0:
                return path
            parts.append(field_path[i + 2 : j])
            i = j + 2
        elif field_path[i] == "[":
            j = field_path.find("]", i + 1)
            if j < 0 or not field_path[i + 1 : j].isdigit():
                return path
            parts.append(int(field_path[i + 1 : j]))
            i = j + 1
        else:
            return path
    extra = format_path(tuple(parts))
    if not path:
        return extra
    return path + (extra if extra.startswith("[") else "." + extra)


def _reported_by_others(project: Project) -> dict[int, list[str]]:
    """id(object) -> the paths the static policy rules report on it."""
    from policylint.rules.boilerplate import RULES as BOILERPLATE
    from policylint.rules.targetref import RULES as TARGETREF

    out: dict[int, list[str]] = {}
    for rule in (*BOILERPLATE, *TARGETREF):
        if rule.id not in _STATIC_POLICY_RULES:
            continue
        for issue in rule().check(project):
            if issue.object is not None:
                out.setdefault(id(issue.object), []).append(issue.path)
    return out


def _covered(paths: Iterable[str], path: str, compiled: Any, value: Any) -> bool:
    """Whether a finding of a static policy rule (PL1xx, PL2xx) already names what this failing
    CEL rule at `path` reads: a finding at the node itself, or under it in a field the rule reads
    (`self.targetRefs`, `self.defaults`; anything when the rule reads `self` whole)."""
    fields = compiled.self_fields
    for other in paths:
        if other == path:
            return True
        if not _under(other, (path,)) and path:
            continue
        rest = other[len(path) :].lstrip(".") if path else other
        if fields is None:
            return True
        head = rest.split(".", 1)[0].split("[", 1)[0]
        if head in fields or _escaped_in(head, fields):
            return True
    return False


def _escaped_in(name: str, fields: frozenset[str]) -> bool:
    from policylint.k8s.cel import escape

    return escape(name) in fields


RULES: list[type[Rule]] = [CelViolation]


# -- coverage: which of the bundled CRDs' rules PL704 evaluates (`policylint rules --cel-coverage`) --


def _rules_in(node: Mapping[str, Any], where: str, out: list[tuple[str, str]]) -> None:
    """(rule text, where it sits: "" for a node PL704 walks, else why it does not) for every CEL
    rule of a schema, in schema order."""
    for validation in node.get(_VALIDATIONS) or ():
        if isinstance(validation, dict):
            out.append((str(validation.get("rule", "")), where))
    for key, child in (node.get("properties") or {}).items():
        if isinstance(child, dict):
            inner = where
            if not where and node.get("_root") and key in ("status", "metadata"):
                inner = f"on {key} (not linted)"
            _rules_in(child, inner, out)
    for key in ("items", "additionalProperties"):
        child = node.get(key)
        if isinstance(child, dict):
            _rules_in(child, where, out)
    for key in ("anyOf", "oneOf", "allOf"):
        for child in node.get(key) or ():
            if isinstance(child, dict):
                _rules_in(child, where or f"inside {key} (not a structural node)", out)


def skip_reason(rule: str) -> str | None:
    """Why PL704 does not evaluate a rule (None: it does)."""
    from policylint.k8s import cel

    compiled = cel.compile_rule(rule)
    if compiled.skip == "transition":
        return "transition rule (oldSelf)"
    if compiled.skip == "unsupported":
        return f"unsupported: {compiled.error}"
    if compiled.skip == "compile":
        return "does not compile"
    return None


def coverage() -> list[dict[str, Any]]:
    """Per bundled CRD schema and channel: its rules, how many PL704 evaluates, and why the
    others are not (reason -> count). Rows in the data's order, one per channel."""
    import gzip
    import json

    from policylint.k8s.schemas import DATA

    raw = json.loads(gzip.decompress(DATA.read_bytes()).decode("utf-8"))
    rows = []
    for entry in raw["kinds"]:
        found: list[tuple[str, str]] = []
        _rules_in({**entry["schema"], "_root": True}, "", found)
        skipped: dict[str, int] = {}
        for rule, where in found:
            reason = where or skip_reason(rule)
            if reason:
                skipped[reason] = skipped.get(reason, 0) + 1
        for channel in entry["channels"]:
            rows.append(
                {
                    "group": entry["group"],
                    "kind": entry["kind"],
                    "version": entry["version"],
                    "channel": channel,
                    "source": " ".join(entry["source"].split("/")[:2]),
                    "rules": len(found),
                    "evaluated": len(found) - sum(skipped.values()),
                    "skipped": dict(sorted(skipped.items())),
                    "schemas": 1 if channel == entry["channels"][0] else 0,  # counts each bundled schema once
                }
            )
    return rows
