"""`policylint explain`'s outputs: the explanation document (policylint.commands.explain) as text,
and as JSON."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from policylint.k8s.names import ns_name, plural
from policylint.textsafe import MAX_FIELD, defuse_lines, escape, json_dumps, json_text
from policylint.vocabulary import Accepted

# Text output shortens longer values; JSON holds them whole within a generous budget per
# document (policylint.textsafe.Budget), past which a marker string says what was left out.
_TEXT_VALUE_MAX = 100


def _value_text(value: Any) -> str:
    # Written only up to the limit, never whole (an alias-amplified value would not fit in memory);
    # its strings are JSON-escaped, so a value cannot break the line or reach the terminal.
    return json_text(value, _TEXT_VALUE_MAX)


def _values_text(values: Sequence[Mapping[str, Any]]) -> str:
    """`key: value, ...` up to the text limit, stopping at the first value past it."""
    parts: list[str] = []
    size = 0
    for v in values:
        part = f"{v['key']}: {_value_text(v['value'])}"
        size += len(part) + (2 if parts else 0)
        parts.append(part)
        if size > _TEXT_VALUE_MAX:
            break
    text = ", ".join(parts)
    return text if len(text) <= _TEXT_VALUE_MAX else text[: _TEXT_VALUE_MAX - 3] + "..."


# Values are rendered by `_value_text`, which escapes them as JSON; every other string of the
# document (names, labels, keys, messages, file names) comes from the input as it was written.
_VALUE_FIELDS = frozenset({"value", "alternative", "effective"})


def _escaped_fields(doc: Mapping[str, Any]) -> Any:
    """A copy of the document whose strings, values aside, are escaped (policylint.textsafe):
    one pass, so that no field the text shows can be missed. Iterative: the document's depth is
    fixed by its schema, but nothing here should depend on that."""
    root: list[Any] = [None]
    stack: list[tuple[Any, Any, Any]] = [(doc, root, 0)]
    while stack:
        node, dest, slot = stack.pop()
        if isinstance(node, str):
            dest[slot] = escape(node, MAX_FIELD)
        elif isinstance(node, Mapping):
            out: dict[str, Any] = {}
            dest[slot] = out
            for key, value in node.items():
                if key in _VALUE_FIELDS:
                    out[key] = value
                else:
                    out[key] = None
                    stack.append((value, out, key))
        elif isinstance(node, list):
            seq: list[Any] = [None] * len(node)
            dest[slot] = seq
            stack.extend((value, seq, i) for i, value in enumerate(node))
        else:
            dest[slot] = node
    return root[0]


def _at(entry: Mapping[str, Any]) -> str:
    """`Patch Overrides at Gateway app/g2`."""
    strategy = entry.get("strategy") or " + ".join(entry.get("strategies", []))
    if strategy == "None":
        strategy = "strategy None"
    return f"{strategy} at {entry['node']['label']}"


def _object_label(obj: Mapping[str, Any]) -> str:
    where = ns_name(obj["namespace"], obj["name"])
    section = f"#{obj['section']}" if obj.get("section") else ""
    return f"{obj['kind']} {where}{section}"


def _policy_name(ref: Mapping[str, Any]) -> str:
    return f"{ref['kind']} {ref['namespace']}/{ref['name']}" if ref["namespace"] else f"{ref['kind']} {ref['name']}"


def render_text(doc: Mapping[str, Any]) -> str:
    """The text of an explanation: every field from the input escaped, one line per item, and no
    line that a CI runner would read as a workflow command (policylint.textsafe)."""
    doc = _escaped_fields(doc)
    obj = doc["object"]
    lines = [f"{_object_label(obj)}  ({obj['file']}:{obj['line']})"]
    if doc["type"] == "policy":
        _render_policy(doc["policy"], lines)
    else:
        _render_target(doc, lines)
    return defuse_lines("\n".join(lines) + "\n")


def _render_target(doc: Mapping[str, Any], lines: list[str]) -> None:
    affected = [_policy_name(r) for r in doc["affectedBy"]]
    lines.append("affected by: " + (", ".join(affected) if affected else "no policy"))
    if not doc["policyKinds"]:
        lines.append("no policy of any kind reaches this object in any context")
    for kind in doc["policyKinds"]:
        lines.append("")
        header = f"{kind['kind']} ({kind['group']}, {kind['class']}, effective at {kind['effectiveTarget']})"
        lines.append(f"{header}: {plural(kind['contextCount'], 'context')}")
        for result in kind["results"]:
            _render_result(result, lines)


def _render_result(result: Mapping[str, Any], lines: list[str]) -> None:
    count = result["contextCount"]
    lines.append(f"  {plural(count, 'context')}:" if count > 1 else "  context:")
    for ctx in result["contexts"]:
        note = "" if ctx["containsObject"] else "  (above the object: its traffic passes here)"
        lines.append(f"    {ctx['label']}{note}")
    if result["omitted"]:
        lines.append(f"    ... and {result['omitted']} more")
    lines.append("    effective:" if result["values"] else "    effective: (empty: no setting applies)")
    for value in result["values"]:
        lines.append(f"      {value['key']}: {_value_text(value['value'])}")
        source = value["source"]
        if source is None:
            lines.append("        <- combined from every policy in the stack")
            continue
        lines.append(f"        <- {source['name']} ({_at(source)}, {source['field']})")
        for other in value.get("mergedWith", ()):
            lines.append(f"           merged with the items of {other['name']} ({_at(other)}, {other['field']})")
        for other in value["over"]:
            shown = (
                f"{other['key']}: {_value_text(other['value'])}" if other["key"] != value["key"] else _value_text(other["value"])
            )
            lines.append(f"           over {other['name']} {shown} ({_at(other)}): {other['reason']}")
    for entry in result["notApplied"]:
        lines.append(
            f"    not applied: {entry['key']}: {_value_text(entry['value'])} from {entry['source']['name']}: {entry['reason']}"
        )
    if result["affectedBy"]:
        lines.append("    affected by:")
        for entry in result["affectedBy"]:
            beaten = f", beaten by {', '.join(entry['beatenBy'])}" if entry["beatenBy"] else ""
            lines.append(f"      {entry['name']}  {entry['status']}  ({_at(entry)}{beaten})")
    if result["shadowed"]:
        lines.append("    shadowed entirely:")
        for entry in result["shadowed"]:
            lines.append(f"      {entry['name']}  {entry['status']}  ({_at(entry)}): {entry['reason']}")
            values = _values_text(entry["values"])
            if values:
                lines.append(f"        its values: {values}")
    for note in result["orderSensitive"]:
        keys = ", ".join(note["keys"])
        lines.append(
            f"    order-sensitive: {' and '.join(note['policies'])} are ordered by {note['decidedBy']} only;"
            f" the other order would give {_value_text(note['alternative'])} (differs in {keys})"
        )


def _render_policy(policy: Mapping[str, Any], lines: list[str]) -> None:
    strategies = ", ".join(policy["strategies"]) or "none (it applies on no target)"
    lines.append(
        f"profile {policy['profile']} ({policy['class']}, effective at {policy['effectiveTarget']}); strategy: {strategies}"
    )
    lines.append("affects: " + _affects_text(policy["affects"]))
    for target in policy["targets"]:
        ref = target["ref"]
        name = ref["name"] if ref["name"] is not None else "(no name)"  # a reference that selects instead
        where = f"{ref['namespace']}/{name}" if ref["namespace"] else name
        section = f"#{ref['sectionName']}" if ref["sectionName"] else ""
        lines.append("")
        state = target["accepted"] + (f", {target['enforcement']}" if target["enforcement"] else "")
        lines.append(f"target {ref['kind']} {where}{section} ({target['path']}): {state}")
        if target["accepted"] not in (Accepted.ACCEPTED.label, Accepted.CONFLICTED.label) or (
            target["detail"] not in ("Resolved", "SelectorMatch")
        ):
            detail = f"{target['detail']}: {target['message']}" if target["message"] else target["detail"]
            lines.append(f"  {detail}")
        if target["beatenBy"]:
            lines.append(f"  beaten by: {', '.join(target['beatenBy'])}")
        if target["ancestors"]:
            lines.append(f"  ancestors: {', '.join(target['ancestors'])}")
        counts = target["statusCounts"]
        if target["contextCount"]:
            lines.append(
                f"  {plural(target['contextCount'], 'context')}: {counts['enforced']} enforced,"
                f" {counts['partiallyEnforced']} partially enforced, {counts['overridden']} overridden,"
                f" {counts['conflicted']} conflicted"
            )
            lines.append("  affects: " + _affects_text(target["affects"]))
        if target["note"]:
            lines.append(f"  {target['note']}")
        width = max((len(c["status"]) for c in target["contexts"]), default=0)
        for ctx in target["contexts"]:
            beaten = f"  (by {', '.join(ctx['beatenBy'])})" if ctx["beatenBy"] else ""
            lines.append(f"    {ctx['status']:<{width}}  {ctx['label']}{beaten}")
        if target["omitted"]:
            lines.append(f"    ... and {target['omitted']} more")


def _affects_text(affects: Mapping[str, int]) -> str:
    order = ("contexts", "gateways", "listeners", "routes", "rules", "backends")
    return ", ".join(plural(affects[k], k[:-1]) for k in order)


def render_json(doc: Mapping[str, Any]) -> str:
    # UTF-8 as before; lone surrogates replaced and the characters a terminal acts on escaped.
    return json_dumps(doc, indent=2, ensure_ascii=False) + "\n"
