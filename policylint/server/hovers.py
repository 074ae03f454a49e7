"""Hover text: `explain`'s document condensed to Markdown, and what a reference resolves to.

The document is `policylint.commands.explain`'s (the one `policylint explain --format json`
prints), so the editor says what the command says; this module only chooses what fits in a hover:
the policies that affect the object, and per policy kind the effective values of the first group
of contexts with the policy, node and strategy each came from. Every string from the input is
shown in a code span, so a name cannot inject Markdown (a link, an image) into the editor.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from policylint.k8s.names import ns_name, plural
from policylint.server.navigation import Navigator, Place, Reference

if TYPE_CHECKING:
    from policylint.server.layers import Layers
from policylint.textsafe import escape, json_text

# Values longer than this are cut in a hover (`explain` shows them whole).
VALUE_MAX = 80
# Contexts and values listed per policy kind; the counts are always complete.
LISTED = 5


def code(text: str) -> str:
    """`text` as a Markdown code span, whatever backticks it holds (CommonMark §6.1 "Code spans")."""
    text = escape(text).replace("\n", " ")
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") or not text else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def _value(value: Any) -> str:
    return code(json_text(value, VALUE_MAX))


def _object_label(obj: Mapping[str, Any]) -> str:
    section = f"#{obj['section']}" if obj.get("section") else ""
    return f"{obj['kind']} {ns_name(obj['namespace'], obj['name'])}{section}"


def _policy_name(ref: Mapping[str, Any]) -> str:
    return f"{ref['kind']} {ns_name(ref['namespace'], ref['name'])}"


def _at(entry: Mapping[str, Any]) -> str:
    strategy = entry.get("strategy") or " + ".join(entry.get("strategies", []))
    return f"{strategy} at {code(entry['node']['label'])}"


def explanation(doc: Mapping[str, Any]) -> str:
    """The Markdown of an `explain` document."""
    obj = doc["object"]
    lines = [f"**{code(_object_label(obj))}**", ""]
    if doc["type"] == "policy":
        _policy(doc["policy"], lines)
    else:
        _target(doc, lines)
    return "\n".join(lines).rstrip() + "\n"


def _target(doc: Mapping[str, Any], lines: list[str]) -> None:
    affected = [code(_policy_name(r)) for r in doc["affectedBy"]]
    lines.append("Affected by: " + (", ".join(affected) if affected else "no policy"))
    if not doc["policyKinds"]:
        lines.append("")
        lines.append("No policy of any kind reaches it in any context.")
    for kind in doc["policyKinds"]:
        lines.append("")
        lines.append(
            f"**{escape(kind['kind'])}** ({escape(kind['class'])}, effective at {escape(kind['effectiveTarget'])}):"
            f" {plural(kind['contextCount'], 'context')}"
        )
        results: Sequence[Mapping[str, Any]] = kind["results"]
        for number, result in enumerate(results[:1]):
            del number
            _result(result, lines)
        if len(results) > 1:
            lines.append(f"- …and {plural(len(results) - 1, 'other group')} of contexts with other values (`policylint explain`)")


def _result(result: Mapping[str, Any], lines: list[str]) -> None:
    contexts = [code(c["label"]) for c in result["contexts"][:LISTED]]
    more = result["contextCount"] - len(contexts)
    lines.append("- through " + ", ".join(contexts) + (f" and {more} more" if more > 0 else ""))
    values: Sequence[Mapping[str, Any]] = result["values"]
    if not values:
        lines.append("- effective: nothing (no setting applies)")
    for value in values[:LISTED]:
        source = value["source"]
        origin = (
            "combined from every policy in the stack"
            if source is None
            else f"from {code(source['name'])} ({_at(source)}, {code(source['field'])})"
        )
        lines.append(f"- {code(value['key'])}: {_value(value['value'])} {origin}")
        for other in value["over"]:
            lines.append(f"  - over {code(other['name'])} {_value(other['value'])}: {escape(other['reason'])}")
    if len(values) > LISTED:
        lines.append(f"- …and {plural(len(values) - LISTED, 'more value')}")
    for entry in result["shadowed"]:
        lines.append(f"- shadowed: {code(entry['name'])} {escape(entry['status'])}: {escape(entry['reason'])}")


def _policy(policy: Mapping[str, Any], lines: list[str]) -> None:
    strategies = ", ".join(policy["strategies"]) or "none"
    lines.append(
        f"Profile {code(policy['profile'])} ({escape(policy['class'])}, effective at {escape(policy['effectiveTarget'])});"
        f" strategy: {escape(strategies)}"
    )
    affects = policy["affects"]
    order = ("contexts", "gateways", "listeners", "routes", "rules", "backends")
    lines.append("")
    lines.append("Affects: " + ", ".join(plural(affects[k], k[:-1]) for k in order))
    for target in policy["targets"]:
        ref = target["ref"]
        name = ref["name"] if ref["name"] is not None else "(no name)"
        section = f"#{ref['sectionName']}" if ref["sectionName"] else ""
        label = f"{ref['kind']} {ns_name(ref['namespace'], name)}{section}"
        state = target["accepted"] + (f", {target['enforcement']}" if target["enforcement"] else "")
        lines.append(
            f"- target {code(label)}: **{escape(state)}**" + (f" — {escape(target['message'])}" if target["message"] else "")
        )
        if target["beatenBy"]:
            lines.append(f"  - beaten by {', '.join(code(b) for b in target['beatenBy'])}")
        if target["note"]:
            lines.append(f"  - {escape(target['note'])}")


def reference(nav: Navigator | Layers, ref: Reference) -> str:
    """What a reference names and what the engine decided about it."""
    lines = [f"**{escape(ref.role)}** {code(ref.label)}: **{escape(ref.status)}**"]
    if ref.message:
        lines.append("")
        lines.append(escape(ref.message))
    place = nav.definition(ref)
    if ref.target is not None and place is not None:
        lines.append("")
        lines.append(f"Defined in {code(_where(place))}")
    elif ref.target is None:
        lines.append("")
        lines.append("Not in the workspace.")
    return "\n".join(lines) + "\n"


def _where(place: Place) -> str:
    return f"{place.file}:{place.line}"
