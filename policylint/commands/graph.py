"""`policylint graph`: the topology with policies drawn where they attach (Mermaid and DOT).

The hierarchy is the one the effective-policy simulation walks (policylint.semantics.effective.simulation):
GatewayClass > Gateway > (ListenerSet) > listener > Route > (rule) > backend. Policies
are drawn as nodes with a dashed edge to each target, as GEP-713 draws its
examples. Each edge carries the policy's status on that target, and the node the mix over its
targets, as `explain POLICY` states them (policylint.commands.graph_status): a policy accepted on
one target and refused on another is neither Invalid nor Enforced. The references that do not
hold (a parentRef no listener admits, a backendRef refused) are drawn dashed, with their reason,
where the hierarchy of traffic leaves them out. A legend names the styles the picture uses.
Objects are grouped by namespace, the ownership boundary of Gateway API.

The graph is built once as plain data (`Graph`) and rendered by `mermaid()` or
`dot()`. Output is deterministic: nodes follow the hierarchy walk (objects in key
order), policies follow their keys, and nothing depends on input order.
"""

from __future__ import annotations

import json
import re
from collections import defaultdict, deque
from collections.abc import Iterable, Mapping
from dataclasses import field
from typing import TYPE_CHECKING, ClassVar

from policylint.commands.explain import Describer, Found, find_object, object_node, parse_query
from policylint.commands.graph_status import (
    TargetState,
    backend_reason,
    broken_listener_sets,
    broken_parents,
    policy_state,
    refused_backends,
    target_state,
)
from policylint.semantics.effective.facets import NodeKey
from policylint.textsafe import MAX_FIELD, escape, mermaid_label
from policylint.values import frozen, record
from policylint.vocabulary import Accepted, Resolved

if TYPE_CHECKING:
    from policylint.k8s.objects import K8sObject
    from policylint.profiles.policy import Policy
    from policylint.project import Project
    from policylint.semantics.resolution import TargetResolution

FORMATS = ("mermaid", "dot")

# Edge kinds: the hierarchy traffic follows, a policy's attachment to a target, and a reference
# of the hierarchy that does not hold (a parentRef not admitted, a backendRef refused).
HIERARCHY, POLICY, BROKEN = "hierarchy", "policy", "broken"


@record(slots=True)
class GNode:
    id: str
    shape: str  # gatewayclass | gateway | listenerset | listener | route | rule | backend | other | policy | missing
    lines: list[str]
    namespace: str | None
    css: str  # the style class


@frozen
class GEdge:
    src: str
    dst: str
    kind: str  # HIERARCHY | POLICY | BROKEN
    label: str | None = None
    css: str | None = None  # a policy edge: its target state's class (graph_status.TargetState)


@record
class Graph:
    nodes: dict[str, GNode] = field(default_factory=dict)
    edges: list[GEdge] = field(default_factory=list)
    _edge_set: set[GEdge] = field(default_factory=set)

    def add_node(self, node: GNode) -> None:
        self.nodes.setdefault(node.id, node)

    def add_edge(self, edge: GEdge) -> None:
        if edge.src != edge.dst and edge not in self._edge_set:
            self._edge_set.add(edge)
            self.edges.append(edge)


_SEP = "\x1f"  # joins the parts of internal node ids; no Kubernetes name or group contains it


_LEVEL = {"Gateway": "gateway", "ListenerSet": "listenerset"}


def _raw_id(
    level: str, group: str | None, kind: str | None, namespace: str | None, name: str | None, section: object = None
) -> str:
    parts = [level, group or "", kind or "", namespace or "", name or ""]
    if section is not None:
        parts.append(str(section))
    return _SEP.join(parts)


def _node_id(node: NodeKey) -> str:
    level, key, section = node
    return _raw_id(level, key.group, key.kind, key.namespace, key.name, section)


def _policy_id(policy: Policy) -> str:
    key = policy.key
    return _raw_id("policy", key.group, key.kind, key.namespace, key.name)


class _Builder:
    def __init__(self, project: Project, show_rules: bool) -> None:
        self.project = project
        self.sim = project.simulation()
        self.topology = project.topology()
        self.describe = Describer(project)
        self.show_rules = show_rules
        self.graph = Graph()
        self.parents: dict[str, set[str]] = defaultdict(set)  # hierarchy edges, reversed
        self.children: dict[str, list[str]] = defaultdict(list)
        self.policy_nodes: dict[str, list[str]] = {}  # policy node id -> drawn target ids

    # -- hierarchy -----------------------------------------------------------------------

    def drawn(self, node: NodeKey) -> NodeKey:
        """The node that represents `node` in the picture: ports fold into their Service and,
        unless rules are shown, rules into their route."""
        level, key, _ = node
        if level == "port":
            return ("backend", key, None)
        if level == "rule" and not self.show_rules:
            return ("route", key, None)
        return node

    def ensure(self, node: NodeKey) -> str:
        node = self.drawn(node)
        node_id = _node_id(node)
        if node_id in self.graph.nodes:
            return node_id
        level, key, section = node
        shape = level if level in ("gatewayclass", "gateway", "listenerset", "listener", "route", "rule", "backend") else "other"
        if level == "listener":
            lines = [f"listener {section}"]
            detail = self._listener_detail(node)
            if detail:
                lines.append(detail)
        elif level == "rule":
            text = self.describe.section_text(node) or ""
            lines = [text if text.startswith("rules[") else f"rule {text}"]
        else:
            lines = [key.kind, key.name]
        self.graph.add_node(GNode(node_id, shape, lines, key.namespace, shape))
        return node_id

    def _listener_detail(self, node: NodeKey) -> str:
        owner = self.project.index.get(node[1])
        if owner is None:
            return ""
        for listener in self.topology.listeners(owner):
            if listener.name == node[2]:
                parts = [p for p in (listener.protocol, f":{listener.port}" if listener.port is not None else None) if p]
                text = " ".join(parts)
                return f"{text} {listener.hostname}" if listener.hostname else text
        return ""

    def link(self, parent: NodeKey, child: NodeKey) -> None:
        src, dst = self.ensure(parent), self.ensure(child)
        if src == dst:
            return
        before = len(self.graph.edges)
        self.graph.add_edge(GEdge(src, dst, HIERARCHY))
        if len(self.graph.edges) > before:
            self.parents[dst].add(src)
            self.children[src].append(dst)

    def walk(self, node: NodeKey, seen: set[NodeKey]) -> None:
        if node in seen:
            return
        seen.add(node)
        self.ensure(node)
        for child in self.sim.children(node):
            self.link(node, child)
            self.walk(child, seen)

    def build_hierarchy(self) -> None:
        seen: set[NodeKey] = set()
        for gateway in self.topology.gateways():
            node: NodeKey = ("gateway", gateway.key, None)
            ref = self.topology.class_refs.get(gateway)
            if ref is not None and ref.target is not None:
                self.link(("gatewayclass", ref.target.key, None), node)
            self.walk(node, seen)
        # Routes attached to nothing in the input still carry policies: draw them too.
        for route in sorted(self.topology.routes(), key=lambda r: r.key):
            self.walk(("route", route.key, None), seen)

    # -- references that do not hold -------------------------------------------------------

    def missing(self, group: str, kind: str, namespace: str | None, name: str, section: str | None, why: str) -> str:
        """A node for an object a reference names that is not in the input."""
        missing_id = _raw_id("missing", group, kind, namespace, name, section)
        shown = f"{name}#{section}" if section else name
        self.graph.add_node(GNode(missing_id, "missing", [kind, shown, why], namespace, "missing"))
        return missing_id

    def build_broken(self) -> None:
        for broken in broken_parents(self.topology):
            route_id = self.ensure(("route", broken.route.key, None))
            reason = broken.reason
            if broken.listener is not None:
                src = self.ensure(("listener", broken.listener.owner.key, broken.listener.name))
            elif broken.parent is not None:
                src = self.ensure((_LEVEL.get(broken.parent.kind, "gateway"), broken.parent.key, None))
                section = broken.ref_label[4]
                if section:
                    # Drawn from the parent, not a listener: the label says which one the route named
                    # (as a policy edge names its sectionName).
                    reason = f"#{section}: {reason}"
            else:
                group, kind, namespace, name, section = broken.ref_label
                src = self.missing(group, kind, namespace, name, section, "not found")
            self.graph.add_edge(GEdge(src, route_id, BROKEN, reason))
        for att in broken_listener_sets(self.topology):
            if att.gateway is not None:
                src = self.ensure(("gateway", att.gateway.key, None))
                dst = self.ensure(("listenerset", att.listener_set.key, None))
                self.graph.add_edge(GEdge(src, dst, BROKEN, att.reason.label))
        for route in sorted(self.topology.routes(), key=lambda r: r.key):
            for ref in refused_backends(self.topology, route):
                src = self.ensure(self._rule_node(route, ref.rule))
                # A backend refused for want of a ReferenceGrant is no target of the reference, but
                # it is there: drawn as itself.
                backend = ref.target or self.project.index.lookup(ref.group, ref.kind, ref.namespace, ref.name)
                if backend is not None:
                    dst = self.ensure(("backend", backend.key, None))
                else:
                    dst = self.missing(ref.group, ref.kind, ref.namespace, ref.name, None, "not found")
                self.graph.add_edge(GEdge(src, dst, BROKEN, backend_reason(ref)))

    def _rule_node(self, route: K8sObject, position: int | None) -> NodeKey:
        for section in self.topology.rules(route):
            if section.position == position:
                return ("rule", route.key, section.name if section.name is not None else section.position)
        return ("route", route.key, None)

    # -- policies ------------------------------------------------------------------------

    def build_policies(self) -> None:
        for policy in sorted(
            self.project.resolution.policies(), key=lambda p: (p.key.kind, p.key.namespace or "", p.key.name, p.key.group)
        ):
            if self.project.index.get(policy.key) is not policy.obj:
                continue  # a duplicate definition (PL005): drawn once
            self.add_policy(policy)

    def add_policy(self, policy: Policy) -> None:
        key = policy.key
        policy_id = _policy_id(policy)
        states: list[TargetState] = []
        targets: list[str] = []
        for res in self.project.resolution.targets(policy):
            state = target_state(self.sim, policy, res)
            states.append(state)
            dst, where, detail = self._target(policy, res)
            if dst is not None:
                targets.append(dst)
                label = f"{where}: {state.text}" if where else state.text
                self.graph.add_edge(GEdge(policy_id, dst, POLICY, f"{label} ({detail})" if detail else label, state.css))
        summary = policy_state(states)
        self.graph.add_node(GNode(policy_id, "policy", [key.kind, key.name, summary.text], key.namespace, summary.css))
        self.policy_nodes[policy_id] = targets

    def _target(self, policy: Policy, res: TargetResolution) -> tuple[str | None, str, str]:
        """(drawn target id, what of it the reference names that the node does not show, the
        resolution step that refused it) of one target of a policy."""
        ref = res.ref
        node = self.sim.node_of(res)
        if node is not None:
            drawn = self.drawn(node)
            return self.ensure(node), f"#{self.describe.section_text(node)}" if drawn != node else "", ""
        section = f"#{ref.section_name}" if ref.section_name else ""
        if res.target is not None:
            # The object exists but the reference is not usable (section not found, no ReferenceGrant, ...).
            detail = res.detail.label if res.detail is not Resolved.RESOLVED else ""
            return self.ensure(object_node(self.project, res.target)), section, detail
        if ref.kind is None or ref.name is None:
            return None, "", ""
        namespace = res.namespace if res.namespace is not None else ref.namespace or policy.obj.namespace
        reason = (
            "external"
            if res.detail is Resolved.EXTERNAL
            else "not found"
            if res.status is Accepted.TARGET_NOT_FOUND
            else res.detail.label
        )
        return self.missing(ref.group or "", ref.kind, namespace, ref.name, ref.section_name, reason), "", ""


# -- focus -------------------------------------------------------------------------------------


def _reachable(start: Iterable[str], edges: Mapping[str, Iterable[str]], depth: int | None) -> dict[str, int]:
    out = dict.fromkeys(start, 0)
    queue = deque(out)
    while queue:
        current = queue.popleft()
        if depth is not None and out[current] >= depth:
            continue
        for nxt in edges.get(current, ()):
            if nxt not in out:
                out[nxt] = out[current] + 1
                queue.append(nxt)
    return out


def _restrict(
    builder: _Builder, keep_hierarchy: set[str], extra_policies: Iterable[str] = (), broken_from: set[str] | None = None
) -> Graph:
    """The part of the picture around `keep_hierarchy`, with the policies attached there and the
    references that do not hold of the objects in `broken_from` (default: all kept)."""
    graph = builder.graph
    keep = set(keep_hierarchy)
    policies = set(extra_policies)
    for policy_id, targets in builder.policy_nodes.items():
        if any(t in keep_hierarchy for t in targets):
            policies.add(policy_id)
    keep |= policies
    for edge in graph.edges:
        # A kept policy keeps its broken targets (missing objects): they are part of what it is.
        if edge.src in policies and graph.nodes[edge.dst].shape == "missing":
            keep.add(edge.dst)
        # An object in view keeps the other end of its references that do not hold: the route
        # its listener refused, the Gateway that refused it, the backend it may not reach. Not
        # those of a focused object's ancestors: a route a Gateway refused is not the focus's.
        near = keep_hierarchy if broken_from is None else broken_from
        if edge.kind == BROKEN and (edge.src in near or edge.dst in near):
            keep |= {edge.src, edge.dst}
    out = Graph()
    for node_id, node in graph.nodes.items():
        if node_id in keep:
            out.add_node(node)
    for edge in graph.edges:
        if edge.src in keep and edge.dst in keep:
            out.add_edge(edge)
    return out


def build_graph(
    project: Project,
    *,
    focus: str | None = None,
    depth: int | None = None,
    show_rules: bool = False,
    default_namespace: str = "default",
) -> Graph:
    """The picture to draw. Raises ExplainError when `focus` names nothing in the input."""
    found: Found | None = None
    if focus is not None:
        found = find_object(project, parse_query(focus), default_namespace)
        if found.node[0] == "rule":
            show_rules = True  # the focused rule must be a node of its own
    builder = _Builder(project, show_rules)
    builder.build_hierarchy()
    builder.build_broken()
    builder.build_policies()
    hierarchy = {n for n, node in builder.graph.nodes.items() if node.shape not in ("policy", "missing")}
    if found is None:
        if depth is None:
            return builder.graph
        roots = [n for n in hierarchy if not builder.parents.get(n)]
        return _restrict(builder, set(_reachable(roots, builder.children, depth)))
    policy = next((p for p in project.resolution.policies() if p.obj is found.obj), None)
    if policy is not None:
        policy_id = _policy_id(policy)
        start = [t for t in builder.policy_nodes.get(policy_id, []) if t in hierarchy]
        extra = [policy_id]
    else:
        start = [builder.ensure(found.node)]
        extra = []
    up = _reachable(start, builder.parents, depth)
    down = _reachable(start, builder.children, depth)
    return _restrict(builder, set(up) | set(down), extra, set(down))


# -- rendering ---------------------------------------------------------------------------------


def _groups(graph: Graph) -> list[tuple[str | None, list[GNode]]]:
    by_ns: dict[str | None, list[GNode]] = defaultdict(list)
    for node in graph.nodes.values():
        by_ns[node.namespace].append(node)
    ordered = sorted(by_ns, key=lambda ns: (ns is not None, ns or ""))
    return [(ns, by_ns[ns]) for ns in ordered]


_MAX_ID = 120


class _Ids:
    """Readable, valid, collision-free identifiers: letters, digits and `_` (Mermaid and DOT).

    Every id starts with a level word (`gateway_`, `pol_`, ...), never with `o` or `x`,
    which Mermaid would read as an arrow head right after a link."""

    _PREFIX: ClassVar[dict[str, str]] = {"policy": "pol", "missing": "missing", "ns": "ns", "legend": "legend"}

    def __init__(self) -> None:
        self._map: dict[str, str] = {}
        self._used: set[str] = set()

    def __call__(self, raw: str) -> str:
        found = self._map.get(raw)
        if found is not None:
            return found
        level, _group, kind, namespace, name, *section = [*raw.split(_SEP), "", "", "", ""][: max(5, raw.count(_SEP) + 1)]
        words = [self._PREFIX.get(level, level)]
        if level in ("policy", "missing"):
            words.append(kind)
        words += [namespace, name, *section]
        # Cut: a name of megabytes must not make every line that mentions it as long (ids stay
        # unique through the numbering below).
        base = re.sub(r"[^A-Za-z0-9]+", "_", "_".join(w for w in words if w)).strip("_")[:_MAX_ID]
        candidate, i = base, 2
        while candidate in self._used:
            candidate = f"{base}_{i}"
            i += 1
        self._used.add(candidate)
        self._map[raw] = candidate
        return candidate


_MERMAID_SHAPES = {
    "gatewayclass": ('[/"', '"/]'),
    "gateway": ('["', '"]'),
    "listenerset": ('["', '"]'),
    "listener": ('(["', '"])'),
    "route": ('("', '")'),
    "rule": ('("', '")'),
    "backend": ('[("', '")]'),
    "other": ('["', '"]'),
    "policy": ('{{"', '"}}'),
    "missing": ('["', '"]'),
    "legend": ('["', '"]'),
}

_MERMAID_CLASSES = (
    ("gatewayclass", "fill:#e8eaf6,stroke:#3949ab"),
    ("gateway", "fill:#e3f2fd,stroke:#1565c0"),
    ("listenerset", "fill:#e3f2fd,stroke:#1565c0"),
    ("listener", "fill:#e1f5fe,stroke:#0277bd"),
    ("route", "fill:#f3e5f5,stroke:#6a1b9a"),
    ("rule", "fill:#f3e5f5,stroke:#6a1b9a"),
    ("backend", "fill:#e8f5e9,stroke:#2e7d32"),
    ("other", "fill:#fafafa,stroke:#616161"),
    ("enforced", "fill:#fff8e1,stroke:#f9a825"),
    ("partial", "fill:#fff3e0,stroke:#ef6c00,stroke-width:2px"),
    ("overridden", "fill:#eeeeee,stroke:#9e9e9e,color:#616161,stroke-dasharray:5 3"),
    ("conflicted", "fill:#ffebee,stroke:#c62828,color:#b71c1c,stroke-width:3px"),
    ("mixed", "fill:#fff3e0,stroke:#c62828,stroke-width:2px,stroke-dasharray:5 3"),
    ("invalid", "fill:#ffebee,stroke:#c62828,color:#b71c1c,stroke-dasharray:5 3"),
    ("inert", "fill:#fafafa,stroke:#9e9e9e,color:#616161"),
    ("missing", "fill:#ffffff,stroke:#c62828,color:#b71c1c,stroke-dasharray:3 3"),
    ("legend", "fill:#ffffff,stroke:#bdbdbd,color:#424242"),
)

# The colour of an edge: a policy's by its state on that target, a broken reference red.
_EDGE_COLORS = {
    "enforced": "#f9a825",
    "partial": "#ef6c00",
    "overridden": "#9e9e9e",
    "conflicted": "#c62828",
    "invalid": "#c62828",
    "inert": "#9e9e9e",
    BROKEN: "#c62828",
}

# -- legend --------------------------------------------------------------------------------------

# What each style says, for the styles a picture uses (the hierarchy's nodes name their kind).
_LEGEND_NODES = (
    ("enforced", "policy Enforced on its targets"),
    ("partial", "policy PartiallyEnforced: some of its values lose"),
    ("overridden", "policy Overridden: every value loses"),
    ("conflicted", "policy Conflicted: it loses a conflict on every target"),
    ("mixed", "policy accepted on some of its targets only"),
    ("invalid", "policy refused on every target (Invalid, TargetNotFound)"),
    ("inert", "policy accepted, reaching no traffic"),
    ("missing", "named by a reference, not in the input"),
)
_LEGEND_EDGES = (
    (HIERARCHY, "solid arrow: attached, traffic flows"),
    (POLICY, "dashed arrow: a policy's target, with its status there"),
    (BROKEN, "dashed, crossed: a parentRef not admitted or a backendRef refused, with the reason"),
)


def _legend(graph: Graph) -> list[tuple[str, str, str]]:
    """(raw id, shape, text) of each legend entry the picture needs, in a fixed order."""
    classes = {n.css for n in graph.nodes.values()}
    kinds = {e.kind for e in graph.edges}
    out = [
        (_raw_id("legend", None, None, None, css), "policy" if css != "missing" else "missing", text)
        for css, text in _LEGEND_NODES
        if css in classes
    ]
    out += [
        (_raw_id("legend", None, None, None, f"edge {kind}"), "legend", text) for kind, text in _LEGEND_EDGES if kind in kinds
    ]
    return out


def _legend_css(raw: str) -> str:
    name = raw.split(_SEP)[4]
    return "legend" if name.startswith("edge ") else name


def mermaid(graph: Graph) -> str:
    """A `flowchart LR` that GitHub renders in a ```mermaid block."""
    ids = _Ids()
    lines = ["flowchart LR"]
    used: dict[str, list[str]] = defaultdict(list)
    for namespace, nodes in _groups(graph):
        indent = "  "
        if namespace is not None:
            lines.append(f'  subgraph {ids(_raw_id("ns", None, None, namespace, None))}["namespace {mermaid_label(namespace)}"]')
            indent = "    "
        for node in nodes:
            left, right = _MERMAID_SHAPES[node.shape]
            label = "<br/>".join(mermaid_label(line) for line in node.lines)
            lines.append(f"{indent}{ids(node.id)}{left}{label}{right}")
            used[node.css].append(ids(node.id))
        if namespace is not None:
            lines.append("  end")
    legend = _legend(graph)
    if legend:
        lines.append(f'  subgraph {ids(_raw_id("legend", None, None, None, None))}["legend"]')
        for raw, shape, text in legend:
            left, right = _MERMAID_SHAPES[shape]
            lines.append(f"    {ids(raw)}{left}{mermaid_label(text)}{right}")
            used[_legend_css(raw)].append(ids(raw))
        lines.append("  end")
    # Mermaid styles a link by its position among the links (`linkStyle`).
    styled: dict[str, list[str]] = defaultdict(list)
    for position, edge in enumerate(graph.edges):
        arrow = {HIERARCHY: "-->", POLICY: "-.->", BROKEN: "-.-x"}[edge.kind]
        label = f'|"{mermaid_label(edge.label)}"|' if edge.label else ""
        lines.append(f"  {ids(edge.src)} {arrow}{label} {ids(edge.dst)}")
        color = _EDGE_COLORS.get(edge.css or edge.kind)
        if color is not None:
            styled[color].append(str(position))
    for css, style in _MERMAID_CLASSES:
        if used.get(css):
            lines.append(f"  classDef {css} {style}")
    for css, _ in _MERMAID_CLASSES:
        if used.get(css):
            lines.append(f"  class {','.join(used[css])} {css}")
    for color, positions in sorted(styled.items(), key=lambda item: int(item[1][0])):
        lines.append(f"  linkStyle {','.join(positions)} stroke:{color},color:{color}")
    return "\n".join(lines) + "\n"


_DOT_SHAPES = {
    "gatewayclass": "parallelogram",
    "gateway": "box",
    "listenerset": "box",
    "listener": "box",
    "route": "box",
    "rule": "box",
    "backend": "cylinder",
    "other": "box",
    "policy": "hexagon",
    "missing": "box",
    "legend": "plaintext",
}

_DOT_STYLES = {
    "gatewayclass": 'style=filled, fillcolor="#e8eaf6", color="#3949ab"',
    "gateway": 'style=filled, fillcolor="#e3f2fd", color="#1565c0"',
    "listenerset": 'style=filled, fillcolor="#e3f2fd", color="#1565c0"',
    "listener": 'style="rounded,filled", fillcolor="#e1f5fe", color="#0277bd"',
    "route": 'style="rounded,filled", fillcolor="#f3e5f5", color="#6a1b9a"',
    "rule": 'style="rounded,filled", fillcolor="#f3e5f5", color="#6a1b9a"',
    "backend": 'style=filled, fillcolor="#e8f5e9", color="#2e7d32"',
    "other": 'style=filled, fillcolor="#fafafa", color="#616161"',
    "enforced": 'style=filled, fillcolor="#fff8e1", color="#f9a825"',
    "partial": 'style=filled, fillcolor="#fff3e0", color="#ef6c00", penwidth=2',
    "overridden": 'style="dashed,filled", fillcolor="#eeeeee", color="#9e9e9e", fontcolor="#616161"',
    "conflicted": 'style=filled, fillcolor="#ffebee", color="#c62828", fontcolor="#b71c1c", penwidth=3',
    "mixed": 'style="dashed,filled", fillcolor="#fff3e0", color="#c62828", penwidth=2',
    "invalid": 'style="dashed,filled", fillcolor="#ffebee", color="#c62828", fontcolor="#b71c1c"',
    "inert": 'style=filled, fillcolor="#fafafa", color="#9e9e9e", fontcolor="#616161"',
    "missing": 'style=dashed, color="#c62828", fontcolor="#b71c1c"',
    "legend": 'fontcolor="#424242"',
}


def _dot_string(text: str) -> str:
    # Controls become visible escapes first (policylint.textsafe); json.dumps then gives a
    # double-quoted string with `"` and `\` escaped, as DOT wants, so that no backslash from the
    # input can form a DOT escape (`\n`, `\l`, `\N`, ...).
    return json.dumps(escape(text, MAX_FIELD), ensure_ascii=False)


def _dot_edge(edge: GEdge) -> list[str]:
    color = _EDGE_COLORS.get(edge.css or edge.kind)
    attrs = {
        HIERARCHY: [],
        POLICY: ["style=dashed", "arrowhead=open", f'color="{color or "#757575"}"'],
        BROKEN: ["style=dashed", "arrowhead=tee", f'color="{color}"'],
    }[edge.kind]
    if edge.label:
        attrs.append(f"label={_dot_string(edge.label)}")
        if color is not None:
            attrs.append(f'fontcolor="{color}"')
    return attrs


def dot(graph: Graph) -> str:
    """A Graphviz digraph (`dot -Tsvg`)."""
    ids = _Ids()
    lines = [
        "digraph policylint {",
        "  rankdir=LR;",
        '  node [fontname="Helvetica", fontsize=10];',
        '  edge [fontname="Helvetica", fontsize=9];',
    ]
    for namespace, nodes in _groups(graph):
        indent = "  "
        if namespace is not None:
            lines.append(f"  subgraph cluster_{ids(_raw_id('ns', None, None, namespace, None))} {{")
            lines.append(f"    label={_dot_string('namespace ' + namespace)};")
            lines.append('    style=rounded; color="#bdbdbd";')
            indent = "    "
        for node in nodes:
            label = "\\n".join(_dot_string(line)[1:-1] for line in node.lines)
            lines.append(f'{indent}{ids(node.id)} [label="{label}", shape={_DOT_SHAPES[node.shape]}, {_DOT_STYLES[node.css]}];')
        if namespace is not None:
            lines.append("  }")
    legend = _legend(graph)
    if legend:
        lines.append(f"  subgraph cluster_{ids(_raw_id('legend', None, None, None, None))} {{")
        lines.append('    label="legend";')
        lines.append('    style=rounded; color="#bdbdbd";')
        for raw, shape, text in legend:
            lines.append(
                f"    {ids(raw)} [label={_dot_string(text)}, shape={_DOT_SHAPES[shape]}, {_DOT_STYLES[_legend_css(raw)]}];"
            )
        lines.append("  }")
    for edge in graph.edges:
        attrs = _dot_edge(edge)
        suffix = f" [{', '.join(attrs)}]" if attrs else ""
        lines.append(f"  {ids(edge.src)} -> {ids(edge.dst)}{suffix};")
    lines.append("}")
    return "\n".join(lines) + "\n"


def render(graph: Graph, fmt: str) -> str:
    return dot(graph) if fmt == "dot" else mermaid(graph)
