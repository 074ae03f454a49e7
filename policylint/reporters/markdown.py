"""A Markdown summary: for $GITHUB_STEP_SUMMARY and pull-request comments (GitHub Flavored
Markdown).

Totals; the findings grouped by file, each linked to its line (at $GITHUB_SHA in a workflow);
a table of the policies with their simulated status and blast radius; and, collapsed, a Mermaid
graph of what the findings touch (GitHub renders ```mermaid blocks). GitHub accepts at most
1 MiB of step summary per step and 65,536 characters per comment: the document stays under
`MAX_BYTES`, each section cut at a row with "… N more" rather than mid-table.

Every field from the input is escaped twice: by policylint.textsafe (no control character, no
line break) and then as Markdown (punctuation backslash-escaped, `<` `>` `&` as entities), so a
name can neither format the page nor inject HTML, links or images.
"""

from __future__ import annotations

import html
import re
from collections import defaultdict
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from policylint import HOMEPAGE, __version__
from policylint.findings import Finding, Severity
from policylint.k8s.names import plural
from policylint.textsafe import MAX_FIELD, escape, mermaid_label

if TYPE_CHECKING:
    from policylint.gate import GateReport
    from policylint.reported import Reported
    from policylint.reporters import RenderOptions

# Under GitHub's 1 MiB step summary limit, with room for what follows a cut section.
MAX_BYTES = 1_000_000
# The graph stays readable (and renderable: Mermaid refuses very large diagrams).
MAX_GRAPH_EDGES = 100
ICONS = {Severity.ERROR: ":x:", Severity.WARNING: ":warning:", Severity.INFO: ":information_source:"}
# What can start Markdown inside a paragraph or a table cell: escapes, code spans, emphasis,
# links and images (both need `[`), table cells, strikethrough. Line-start syntax (headings,
# lists, quotes) cannot occur: every cell and paragraph starts with policylint's own text.
_MARKDOWN_PUNCTUATION = re.compile(r"([\\`*_\[\]|~])")
_HTML = {"<": "&lt;", ">": "&gt;", "&": "&amp;"}


def md(text: str, limit: int | None = MAX_FIELD) -> str:
    """Input text as literal Markdown inside a paragraph or a table cell."""
    escaped = _MARKDOWN_PUNCTUATION.sub(r"\\\1", escape(text, limit))
    return "".join(_HTML.get(ch, ch) for ch in escaped)


def _link(options: RenderOptions, file: str, line: int) -> str:
    target = quote(options.repo_path(file).encode("utf-8", "surrogateescape"), safe="/")
    return f"{options.link_base}{target}#L{line}"


class _Budget:
    """Bytes left in the document."""

    def __init__(self, total: int) -> None:
        self.left = total

    @staticmethod
    def cost(lines: list[str]) -> int:
        return sum(len(line.encode("utf-8", "surrogatepass")) + 1 for line in lines)

    def take(self, *lines: str) -> bool:
        """Take all of `lines`, or none of them when they do not fit."""
        size = self.cost(list(lines))
        if size > self.left:
            return False
        self.left -= size
        return True


def _totals(result: Reported) -> str:
    counts = dict.fromkeys(Severity, 0)
    for f in result.findings:
        counts[f.severity] += 1
    found = ", ".join(
        f"{ICONS[s]} {plural(counts[s], s.label, 'info' if s is Severity.INFO else None)}"
        for s in (Severity.ERROR, Severity.WARNING, Severity.INFO)
    )
    policies = len(result.policy_reports) if result.policy_reports is not None else 0
    text = f"{found} in {plural(len(result.files), 'file')} ({plural(result.object_count(), 'object')}, {plural(policies, 'policy')})"
    if result.suppressed:
        text += f"; {len(result.suppressed)} suppressed or baselined"
    change = result.change_counts()
    if change is not None:
        text += f"; against {md(result.base or 'the base')}: {change[0]} introduced, {change[1]} pre-existing"
    return text + "."


def _gate(result: Reported) -> list[str]:
    return gate_section(result.gate)


def gate_section(gate: GateReport | None) -> list[str]:
    """What the configuration turned off or down, and what the change did to the configuration
    and the baseline (policylint.gate), each with its file and line (`check` and `diff`)."""
    if not gate:
        return []
    out: list[str] = []
    if gate.relaxations:
        out += ["**Configuration turns off or down:**", ""]
        out += [f"- {md(r.message)}" for r in gate.relaxations[:50]]
        if len(gate.relaxations) > 50:
            out.append(f"- … {len(gate.relaxations) - 50} more (see the JSON report)")
        out.append("")
    if gate.changes:
        verdict = ":x: **The change loosens the gate**" if gate.loosened else "The change does not loosen the gate"
        out += [f"{verdict} (against {md(gate.base or '')}):", ""]
        out += [f"- {':x: ' if c.loosens else ''}{md(c.file)}:{c.line}: {md(c.message)}" for c in gate.changes[:50]]
        if len(gate.changes) > 50:
            out.append(f"- … {len(gate.changes) - 50} more (see the JSON report)")
        out.append("")
    return out


def _finding_rows(result: Reported, findings: list[Finding], options: RenderOptions) -> list[str]:
    from policylint.reporters.json import help_uri

    rows = []
    for f in findings:
        rule = f"[{f.rule}]({help_uri(f.rule, f.name)})" if f.rule != "PL000" else f.rule
        message = md(f.message)
        if f.hint:
            message += f"<br>*hint:* {md(f.hint)}"
        if result.introduced_by_change(f) is False:
            message += f"<br>*pre-existing:* at {md(result.base or 'the base')} too"
        obj = md(str(f.object)) if f.object is not None else ""
        rows.append(f"| {ICONS[f.severity]} | [{f.line}]({_link(options, f.file, f.line)}) | {rule} | {message} | {obj} |")
    return rows


# Room kept for the line that says how many findings were left out.
_MORE_LINE = 200


def _findings(result: Reported, options: RenderOptions, budget: _Budget) -> list[str]:
    if not result.findings:
        return ["No findings."]
    by_file: dict[str, list[Finding]] = defaultdict(list)
    for f in result.findings:
        by_file[f.file].append(f)
    out: list[str] = []
    left = len(result.findings)
    budget.left -= _MORE_LINE
    close = ["", "</details>", ""]
    for file, findings in by_file.items():
        head = [
            "<details open>",
            # Inside an HTML block Markdown escapes are not read: entities only.
            f"<summary><code>{html.escape(escape(options.repo_path(file)))}</code>: {plural(len(findings), 'finding')}</summary>",
            "",
            "| | line | rule | message | object |",
            "|---|---|---|---|---|",
        ]
        rows = _finding_rows(result, findings, options)
        # A file's table opens only with room for its first row and its closing lines.
        if not budget.take(*head, rows[0], *close):
            break
        out += [*head, rows[0]]
        left -= 1
        full = False
        for row in rows[1:]:
            if not budget.take(row):
                full = True
                break
            out.append(row)
            left -= 1
        out += close
        if full:
            break
    budget.left += _MORE_LINE
    if left:
        out.append(f"… {plural(left, 'more finding')} (see the full report)")
        budget.take(out[-1])
    return out


def _policy_row(entry: dict[str, Any]) -> str:
    obj = entry["object"]
    name = f"{obj['kind']} {obj['namespace']}/{obj['name']}" if obj["namespace"] else f"{obj['kind']} {obj['name']}"
    targets = entry["targets"]
    shown = targets[:3]
    target_text = "<br>".join(
        md(f"{t['ref']['kind']} {t['ref']['name']}" + (f"#{t['ref']['sectionName']}" if t["ref"]["sectionName"] else ""))
        for t in shown
    )
    if len(targets) > len(shown):
        target_text += f"<br>… {len(targets) - len(shown)} more"
    status = "<br>".join(md(t["accepted"] + (f" ({t['detail']})" if t["accepted"] != "Accepted" else "")) for t in shown)
    enforcement = "<br>".join(md(t["enforcement"] or "–") for t in shown)
    affects = entry.get("affects") or {}
    radius = (
        f"{plural(affects.get('contexts', 0), 'context')}: {plural(affects.get('routes', 0), 'route')}, {plural(affects.get('backends', 0), 'backend')}"
        if affects
        else "–"
    )
    return f"| {md(name)} | {target_text} | {status} | {enforcement} | {radius} |"


def _policies(result: Reported, budget: _Budget) -> list[str]:
    reports = result.policy_reports or []
    if not reports:
        return ["No policies."]
    out = ["| policy | targets | status | enforcement | blast radius |", "|---|---|---|---|---|"]
    budget.left -= _MORE_LINE
    if not budget.take(*out):
        return ["The policies are in the JSON report."]
    for i, entry in enumerate(reports):
        row = _policy_row(entry)
        if not budget.take(row):
            out.append(f"\n… {plural(len(reports) - i, 'more policy', 'more policies')} (see the JSON report)")
            break
        out.append(row)
    budget.left += _MORE_LINE
    return out


def _graph(result: Reported) -> list[str]:
    """Policies with findings and their targets; other objects with findings on their own."""
    touched = {str(f.object) for f in result.findings if f.object is not None}
    if not touched:
        return []
    ids: dict[str, str] = {}
    nodes: list[str] = []
    edges: list[str] = []

    def node(label: str, css: str) -> str:
        if label not in ids:
            ids[label] = f"n{len(ids)}"
            nodes.append(f'  {ids[label]}["{mermaid_label(label)}"]:::{css}')
        return ids[label]

    worst: dict[str, Severity] = {}
    for f in result.findings:
        if f.object is not None:
            key = str(f.object)
            worst[key] = max(worst.get(key, Severity.INFO), f.severity)
    for entry in result.policy_reports or []:
        obj = entry["object"]
        label = f"{obj['kind']} {obj['namespace']}/{obj['name']}" if obj["namespace"] else f"{obj['kind']} {obj['name']}"
        if label not in touched:
            continue
        src = node(label, worst[label].label)
        for t in entry["targets"]:
            if len(edges) >= MAX_GRAPH_EDGES:
                break
            ref = t["ref"]
            target = f"{ref['kind']} {ref['namespace']}/{ref['name']}" if ref["namespace"] else f"{ref['kind']} {ref['name']}"
            dst = node(target, worst[target].label if target in worst else "target")
            text = t["accepted"] + (f" #{ref['sectionName']}" if ref["sectionName"] else "")
            edges.append(f'  {src} -.->|"{mermaid_label(text)}"| {dst}')
    for label in sorted(touched):
        if len(ids) >= MAX_GRAPH_EDGES:
            break
        node(label, worst[label].label)
    return [
        "<details><summary>Graph of what the findings touch</summary>",
        "",
        "```mermaid",
        "flowchart LR",
        *nodes,
        *edges,
        "  classDef error fill:#ffebee,stroke:#c62828,color:#b71c1c",
        "  classDef warning fill:#fff8e1,stroke:#f9a825,color:#6d4c00",
        "  classDef info fill:#e1f5fe,stroke:#0277bd,color:#01579b",
        "  classDef target fill:#fafafa,stroke:#616161,color:#212121",
        "```",
        "",
        "</details>",
    ]


def render(result: Reported, options: RenderOptions | None = None) -> str:
    from policylint.reporters import RenderOptions

    options = options or RenderOptions()
    graph = _graph(result)
    footer = ["", f"<sub>[policylint]({HOMEPAGE}) {__version__}</sub>"]
    head = ["## policylint", "", _totals(result), "", *_gate(result), "### Findings", ""]
    middle = ["", "### Policies", ""]
    budget = _Budget(MAX_BYTES - _Budget.cost([*head, *middle, "", *graph, *footer]))
    lines = [*head, *_findings(result, options, budget), *middle, *_policies(result, budget), ""]
    return "\n".join([*lines, *graph, *footer]) + "\n"
