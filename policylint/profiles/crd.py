"""Deriving policy profiles from CustomResourceDefinitions.

How CRDs rank against profiles and structural detection: docs/semantics.md#how-policy-kinds-are-known.

A CRD found in the input (or passed with `--crd`) describes a policy kind the
built-in profiles may not know. `crd_facts` reads what the CRD itself states:

* names, scope and served versions (`spec.names`, `spec.scope`, `spec.versions`);
* the discovery label `gateway.networking.k8s.io/policy` (GEP-2648/2649;
  values compared case-insensitively, `true` meaning "some policy", as gwctl
  does — docs/semantics.md#label-conventions);
* the target fields under `openAPIV3Schema.properties.spec.properties`
  (`targetRef`, `targetRefs`, `targetSelectors`), their `maxItems`, list
  markers, and whether a reference carries `sectionName` / `namespace`
  (the shapes of apis/v1/policy_types.go, docs/semantics.md#target-references);
* the target kinds and groups the API server enforces, from `enum`s and from
  the usual shapes of `x-kubernetes-validations` CEL rules (docs/semantics.md#vendor-profiles);
* the boilerplate fields: `defaults`/`overrides` with a `strategy` enum
  (GEP-713) or `default`/`override` (the original Policy Attachment page,
  docs/semantics.md#policy-boilerplate).

`profiles_from_crds` turns those facts into `PolicyProfile`s of origin
`crd`. A CRD is user input: every fact is read defensively, a value of the
wrong type drops that fact, and nothing here raises.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

from policylint.identity import kept_by_content
from policylint.k8s.fieldtypes import GATEWAY_GROUP
from policylint.k8s.objects import K8sObject
from policylint.profiles.policy import REF_FIELDS as _REF_FIELDS
from policylint.profiles.registry import (
    DIRECT,
    GATEWAY_API_REF_REQUIRED,
    GEP713,
    INHERITED,
    ORIGIN_CRD,
    POLICY_ATTACHMENT,
    MergeSpec,
    PolicyProfile,
    TargetKind,
    TargetSpec,
)
from policylint.values import frozen

POLICY_LABEL = "gateway.networking.k8s.io/policy"
# GEP-2648/2649 values; `true` is accepted by gwctl as "a policy of unknown class"
# (docs/semantics.md#label-conventions).
LABEL_CLASSES = {"direct": DIRECT, "inherited": INHERITED, "true": None}

SINGLE_FIELD = "targetRef"
LIST_FIELD = "targetRefs"
SELECTORS_FIELD = "targetSelectors"
TARGET_FIELDS = (SINGLE_FIELD, LIST_FIELD, SELECTORS_FIELD)

# CEL expressions longer or deeper than this are not kind restrictions worth parsing;
# the bound keeps a hostile CRD from costing time or recursion depth.
_MAX_CEL_LENGTH = 4096
_MAX_CEL_DEPTH = 24

# Where a kind sits in the hierarchy GatewayClass > Gateway > listener > route > rule > backend
# (GEP-713 "Hierarchy of target kinds"; docs/semantics.md#the-hierarchy), used to guess the
# effective target of a CRD-derived kind.
_LEVELS = ("gatewayclass", "gateway", "listener", "route", "rule", "backend")
_KIND_LEVEL = {
    "GatewayClass": "gatewayclass",
    "Gateway": "gateway",
    "ListenerSet": "gateway",
    "HTTPRoute": "route",
    "GRPCRoute": "route",
    "TLSRoute": "route",
    "TCPRoute": "route",
    "UDPRoute": "route",
    "Service": "backend",
    "ServiceImport": "backend",
    "XBackend": "backend",
}
# The group a bare kind name belongs to, for a CRD whose CEL restricts kinds but not groups.
_KIND_GROUP = {
    **dict.fromkeys(
        ("GatewayClass", "Gateway", "ListenerSet", "HTTPRoute", "GRPCRoute", "TLSRoute", "TCPRoute", "UDPRoute"), GATEWAY_GROUP
    ),
    "Service": "",
    "ServiceImport": "multicluster.x-k8s.io",
    "XBackend": "gateway.networking.x-k8s.io",
}


@frozen
class CrdFacts:
    """What one CRD says about a (possibly) policy kind. `None` / empty: the CRD does not say."""

    name: str | None = None  # metadata.name
    group: str | None = None
    kind: str | None = None
    plural: str | None = None
    scope: str | None = None
    served_versions: tuple[str, ...] = ()
    schema_version: str | None = None  # the version whose schema the facts below come from
    label: str | None = None  # raw value of the gateway.networking.k8s.io/policy label
    single_field: str | None = None
    list_field: str | None = None
    selectors_field: str | None = None
    required: bool = False  # a target field is required (schema `required` or CEL)
    exclusive: bool = True  # single and list cannot both be set (vacuous with fewer than two)
    max_items: int | None = None  # maxItems of the list field
    unique: bool = False  # the API server rejects duplicate list entries
    section_name: bool = False
    namespace: bool = False
    allowed_kinds: tuple[str, ...] | None = None  # None: no enum / CEL restricts kinds
    allowed_groups: tuple[str, ...] | None = None
    has_defaults: bool = False
    has_overrides: bool = False
    has_default: bool = False
    has_override: bool = False
    strategy_values: tuple[str, ...] = ()
    strategy_default: str | None = None
    spec_fields: tuple[str, ...] = ()
    # The target reference's own schema: which of group, kind and name it requires, and its
    # fields beyond Gateway API's (docs/semantics.md#target-references-of-other-shapes).
    ref_required: tuple[str, ...] = GATEWAY_API_REF_REQUIRED
    ref_defaults: tuple[tuple[str, str], ...] = ()
    ref_extra_fields: tuple[str, ...] = ()

    @property
    def label_class(self) -> str | None:
        """Direct / Inherited from the label, None when absent, `true` or unrecognised."""
        return LABEL_CLASSES.get(self.label.strip().lower()) if self.label is not None else None

    @property
    def labelled_policy(self) -> bool:
        return self.label is not None and self.label.strip().lower() in LABEL_CLASSES

    @property
    def target_fields(self) -> tuple[str, ...]:
        return tuple(f for f in (self.single_field, self.list_field, self.selectors_field) if f)

    @property
    def is_policy(self) -> bool:
        """The label says so, or the GEP-713 structure does (kind `*Policy` with a target field)."""
        if not self.group or not self.kind:
            return False
        structural = self.kind.endswith("Policy") and bool(self.target_fields)
        return self.labelled_policy or structural

    @property
    def kinds_restricted(self) -> bool:
        return self.allowed_kinds is not None

    @property
    def target_kinds(self) -> tuple[TargetKind, ...]:
        """Allowed (group, kind) pairs: CEL/enum kinds crossed with CEL/enum groups.

        Without a group restriction a kind gets its well-known group; a kind we cannot
        place is left out (and the profile then does not enforce kinds)."""
        if self.allowed_kinds is None:
            return ()
        out: list[TargetKind] = []
        for kind in self.allowed_kinds:
            if self.allowed_groups is not None:
                out.extend(TargetKind(g, kind) for g in self.allowed_groups)
            elif kind in _KIND_GROUP:
                out.append(TargetKind(_KIND_GROUP[kind], kind))
        return tuple(dict.fromkeys(out))

    @property
    def policy_class(self) -> str:
        """The label's class; unlabelled (or `true`) kinds with defaults/overrides blocks are
        Inherited, others Direct (docs/semantics.md#crds-without-a-class-label)."""
        declared = self.label_class
        if declared is not None:
            return declared
        if self.has_defaults or self.has_overrides or self.has_default or self.has_override:
            return INHERITED
        return DIRECT

    @property
    def boilerplate(self) -> str:
        # The original Policy Attachment page: `default` and/or `override`; otherwise GEP-713 shapes.
        return POLICY_ATTACHMENT if (self.has_default or self.has_override) else GEP713


# -- defensive accessors ----------------------------------------------------------------


def _map(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _strings(value: Any) -> tuple[str, ...]:
    return tuple(v for v in _list(value) if isinstance(v, str))


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _rules(schema: Mapping[str, Any]) -> list[str]:
    """The CEL `rule` strings of a schema node's x-kubernetes-validations."""
    out = []
    for entry in _list(schema.get("x-kubernetes-validations")):
        rule = _str(_map(entry).get("rule"))
        if rule is not None and len(rule) <= _MAX_CEL_LENGTH:
            out.append(rule)
    return out


# -- version and schema selection ------------------------------------------------------


def _served_versions(spec: Mapping[str, Any]) -> tuple[str, ...]:
    out = []
    for v in _list(spec.get("versions")):
        entry = _map(v)
        name = _str(entry.get("name"))
        if name and entry.get("served") is True:
            out.append(name)
    return tuple(out)


def _spec_schema(spec: Mapping[str, Any]) -> tuple[str | None, Mapping[str, Any]]:
    """The `spec` property schema of the served storage version, else the first served one,
    else the storage version; apiextensions v1beta1 CRDs keep one schema in `spec.validation`."""
    entries = [_map(v) for v in _list(spec.get("versions"))]

    def schema_of(entry: Mapping[str, Any]) -> Mapping[str, Any]:
        return _map(_map(_map(_map(entry.get("schema")).get("openAPIV3Schema")).get("properties")).get("spec"))

    preferences = (
        [e for e in entries if e.get("served") is True and e.get("storage") is True],
        [e for e in entries if e.get("served") is True],
        [e for e in entries if e.get("storage") is True],
    )
    for candidates in preferences:
        for entry in candidates:
            schema = schema_of(entry)
            if schema:
                return _str(entry.get("name")), schema
    legacy = _map(_map(_map(_map(spec.get("validation")).get("openAPIV3Schema")).get("properties")).get("spec"))
    return _str(spec.get("version")), legacy


# -- CEL: the few shapes vendors use to restrict target kinds and groups ----------------------

_QUANTIFIER = re.compile(r"^([A-Za-z_][\w.]*)\.(all|exists)\(\s*([A-Za-z_]\w*)\s*,(.*)\)$", re.S)
_COMPARE_EQ = re.compile(r"^([A-Za-z_][\w.]*)\.(kind|group)\s*==\s*(?:'([^']*)'|\"([^\"]*)\")$", re.S)
_COMPARE_EQ_REV = re.compile(r"^(?:'([^']*)'|\"([^\"]*)\")\s*==\s*([A-Za-z_][\w.]*)\.(kind|group)$", re.S)
_COMPARE_IN = re.compile(r"^([A-Za-z_][\w.]*)\.(kind|group)\s+in\s+\[(.*)\]$", re.S)
_LITERAL = re.compile(r"^\s*(?:'([^']*)'|\"([^\"]*)\")\s*$")
_HAS = re.compile(r"^has\(\s*([A-Za-z_][\w.]*)\s*\)$")
_POSITIVE_SIZE = re.compile(r"^(?:([A-Za-z_][\w.]*)\.size\(\)|size\(\s*([A-Za-z_][\w.]*)\s*\))\s*(?:>\s*0|>=\s*1|!=\s*0)$")

# Role of a name inside a rule: a single reference, or the list of references of a field.
_REF = "ref"
_LIST = "list"


@frozen
class _Restriction:
    attr: str  # kind | group
    values: frozenset[str]
    field: str  # the target field it constrains


def _top_level(expr: str, start: int = 0) -> Iterator[tuple[int, int]]:
    """(index, bracket depth before it) of every character outside quotes, from `start`;
    brackets raise the depth after them, closing brackets lower it before them."""
    depth = 0
    quote: str | None = None
    i = start
    while i < len(expr):
        c = expr[i]
        if quote:
            if c == "\\":
                i += 1  # skip the escaped character
            elif c == quote:
                quote = None
        elif c in "'\"":
            quote = c
        elif c in ")]":
            depth -= 1
            yield i, depth
        else:
            yield i, depth
            if c in "([":
                depth += 1
        i += 1


def _balanced_end(expr: str, start: int) -> int:
    """Index of the bracket closing the one at `start`, or -1 (quotes respected)."""
    for i, depth in _top_level(expr, start):
        if depth == 0 and expr[i] in ")]" and i > start:
            return i
    return -1


def _strip(expr: str) -> str:
    """`expr` without surrounding whitespace and parentheses around all of it: `( (a) )` is `a`.

    One scan pairs every bracket, then each layer comes off in constant time: a scan per
    layer was quadratic (4,000 nested parentheses took ten seconds).
    """
    expr = expr.strip()
    if not expr.startswith("("):
        return expr
    closing: dict[int, int] = {}
    opened: list[int] = []
    for i, _ in _top_level(expr):
        if expr[i] in "([":
            opened.append(i)
        elif expr[i] in ")]" and opened:
            closing[opened.pop()] = i
    lo, hi = 0, len(expr) - 1
    while lo < hi and expr[lo] == "(" and closing.get(lo) == hi:
        lo, hi = lo + 1, hi - 1
        while lo <= hi and expr[lo].isspace():
            lo += 1
        while hi >= lo and expr[hi].isspace():
            hi -= 1
    return expr[lo : hi + 1]


def _split_top(expr: str, op: str) -> list[str]:
    """Split on `op` where it is outside brackets and quotes."""
    parts: list[str] = []
    last = 0
    skip_to = 0
    for i, depth in _top_level(expr):
        if i >= skip_to and depth == 0 and expr[i] not in "()[]" and expr.startswith(op, i):
            parts.append(expr[last:i])
            last = skip_to = i + len(op)
    parts.append(expr[last:])
    return parts


def _ternary(expr: str) -> tuple[str, str, str] | None:
    cond_rest = _split_top(expr, "?")
    if len(cond_rest) != 2:
        return None
    branches = _split_top(cond_rest[1], ":")
    if len(branches) != 2:
        return None
    return cond_rest[0].strip(), branches[0].strip(), branches[1].strip()


def _parse_restriction(expr: str, env: Mapping[str, tuple[str, str]], depth: int = 0) -> list[_Restriction] | None:
    """A restriction of target kinds or groups, or None when `expr` is anything else.

    Understood (each possibly parenthesised, the comparisons on `kind` or `group`):
      `<ref>.kind == 'X'`, `<ref>.kind in ['X', 'Y']`, `a || b` of those, `a && b` (the
      conjuncts among them);
      `<list>.all(v, ...)` and `<list>.exists(v, ...)` over them (NGF's
      ObservabilityPolicy/UpstreamSettingsPolicy use `exists`: the controller
      then rejects the other entries — docs/semantics.md#nginx-gateway-fabric);
      `has(...) ? <restriction> : true` (Envoy Gateway's spec-level rules,
      docs/semantics.md#envoy-gateway).
    `env` maps names to (role, target field). Anything negated, conditional on other
    fields (Envoy Gateway's mergeType rule) or comparing two entries is not a restriction.
    """
    if depth > _MAX_CEL_DEPTH:
        return None
    expr = _strip(expr)
    if not expr:
        return None
    ternary = _ternary(expr)
    if ternary is not None:
        cond, then, otherwise = ternary
        if _HAS.match(_strip(cond)) and otherwise == "true":
            return _parse_restriction(then, env, depth + 1)
        return None
    disjuncts = _split_top(expr, "||")
    if len(disjuncts) > 1:
        out: list[_Restriction] = []
        for d in disjuncts:
            sub = _parse_restriction(d, env, depth + 1)
            if sub is None:
                return None
            out.extend(sub)
        attrs = {r.attr for r in out}
        fields = {r.field for r in out}
        if len(attrs) != 1 or len(fields) != 1:
            return None
        return [_Restriction(attrs.pop(), frozenset().union(*(r.values for r in out)), fields.pop())]
    conjuncts = _split_top(expr, "&&")
    if len(conjuncts) > 1:
        # `a && b` holds only where each holds: every conjunct that restricts the kind or the
        # group is enforced (GKE's `x.kind == 'Service' && x.group == ''`); the others restrict
        # something else and are left out.
        parts = [_parse_restriction(c, env, depth + 1) for c in conjuncts]
        found = [r for part in parts if part is not None for r in part]
        return found or None
    quant = _QUANTIFIER.match(expr)
    if quant and _balanced_end(expr, quant.end(2)) == len(expr) - 1:
        collection, _, var, body = quant.groups()
        role = env.get(collection)
        if role is None or role[0] != _LIST:
            return None
        return _parse_restriction(body, {**env, var: (_REF, role[1])}, depth + 1)
    return _comparison(expr, env)


def _comparison(expr: str, env: Mapping[str, tuple[str, str]]) -> list[_Restriction] | None:
    values: frozenset[str]
    m = _COMPARE_EQ.match(expr)
    if m:
        path, attr = m.group(1), m.group(2)
        values = frozenset([m.group(3) if m.group(3) is not None else m.group(4)])
    elif (m := _COMPARE_EQ_REV.match(expr)) is not None:
        path, attr = m.group(3), m.group(4)
        values = frozenset([m.group(1) if m.group(1) is not None else m.group(2)])
    elif (m := _COMPARE_IN.match(expr)) is not None:
        path, attr = m.group(1), m.group(2)
        items = _split_top(m.group(3), ",")
        literals = [_LITERAL.match(i) for i in items]
        if not items or any(lit is None for lit in literals):
            return None
        values = frozenset(lit.group(1) if lit.group(1) is not None else lit.group(2) for lit in literals if lit)
    else:
        return None
    role = env.get(path)
    if role is None or role[0] != _REF:
        return None
    return [_Restriction(attr, values, role[1])]


def _has_atoms(disjunct: str) -> tuple[set[str], set[str]]:
    """Fields asserted present / absent by a conjunction of `has(self.f)`, `!has(self.f)`, `self.f.size() > 0`."""
    positive: set[str] = set()
    negative: set[str] = set()
    for atom in _split_top(_strip(disjunct), "&&"):
        atom = _strip(atom)
        negated = atom.startswith("!")
        inner = _strip(atom[1:]) if negated else atom
        m = _HAS.match(inner)
        size = None if negated else _POSITIVE_SIZE.match(inner)
        path = m.group(1) if m else (size.group(1) or size.group(2) if size else None)
        if path and path.startswith("self.") and path.count(".") == 1:
            (negative if negated else positive).add(path[5:])
    return positive, negative


def _required_by_cel(rule: str, fields: tuple[str, ...]) -> bool:
    """Envoy Gateway's "either targetRef or targetRefs must be used"
    (docs/semantics.md#envoy-gateway): every alternative of the rule asserts some target field."""
    disjuncts = _split_top(_strip(rule), "||")
    return all(_has_atoms(d)[0] & set(fields) for d in disjuncts)


def _at_most_one(expr: str) -> str | None:
    """The left side of `<left> <= 1`, `<left> < 2` or `<left> == 1`; None otherwise."""
    for op, bound in (("<=", "1"), ("<", "2"), ("==", "1")):
        if expr.endswith(bound):
            head = expr[: -len(bound)].rstrip()
            if head.endswith(op):
                return head[: -len(op)]
    return None


def _counted(expr: str) -> set[str]:
    """The fields a sum `(has(self.a) ? 1 : 0) + (has(self.b) ? 1 : 0) + ...` counts (Istio's
    "only one of targetRefs or selector can be set"); empty when `expr` is anything else."""
    fields: set[str] = set()
    for term in _split_top(_strip(expr), "+"):
        ternary = _ternary(_strip(term))
        if ternary is None or (ternary[1], ternary[2]) != ("1", "0"):
            return set()
        m = _HAS.match(_strip(ternary[0]))
        if m is None or not m.group(1).startswith("self.") or m.group(1).count(".") != 1:
            return set()
        fields.add(m.group(1)[5:])
    return fields


def _exclusive_by_cel(rule: str, single: str, many: str) -> bool:
    """`(has(s) && !has(l)) || (!has(s) && has(l)) || ...`, `!(has(s) && has(l))`, or a count of
    the fields set that is at most one."""
    expr = _strip(rule)
    counted = _at_most_one(expr)
    if counted is not None and {single, many} <= _counted(counted):
        return True
    if expr.startswith("!"):
        inner = _strip(expr[1:])
        positive, negative = _has_atoms(inner)
        if {single, many} <= positive and not negative:
            return True
    pairs = [_has_atoms(d) for d in _split_top(expr, "||")]
    one = any(single in p and many in n for p, n in pairs)
    other = any(many in p and single in n for p, n in pairs)
    return one and other


# -- facts -------------------------------------------------------------------------------


def _ref_item_schema(field_schema: Mapping[str, Any], is_list: bool) -> Mapping[str, Any]:
    return _map(field_schema.get("items")) if is_list else field_schema


_FACTS: dict[bytes, CrdFacts] = {}  # by content: a `--crd` file each run reads afresh is read once


def crd_facts(crd_data: Mapping[str, Any]) -> CrdFacts:
    """Facts about the kind a CRD defines; never raises, whatever the shape of `crd_data`. Kept by
    content for the process: a CRD read again as another object is not read for them again."""
    return kept_by_content(_FACTS, crd_data, _crd_facts)


def _crd_facts(crd_data: Mapping[str, Any]) -> CrdFacts:
    data = _map(crd_data)
    metadata = _map(data.get("metadata"))
    spec = _map(data.get("spec"))
    names = _map(spec.get("names"))
    labels = _map(metadata.get("labels"))
    scope = _str(spec.get("scope"))
    schema_version, spec_schema = _spec_schema(spec)
    props = _map(spec_schema.get("properties"))

    def field(name: str) -> Mapping[str, Any] | None:
        value = props.get(name)
        return value if isinstance(value, Mapping) else None

    def block(name: str) -> Mapping[str, Any] | None:
        """A boilerplate block (`defaults`, `override`...): a map of spec fields. A list of that
        name is something else (Linkerd's per-client rate-limit `overrides`)."""
        value = field(name)
        return value if value is not None and value.get("type", "object") == "object" else None

    single_schema, list_schema, selectors_schema = (field(f) for f in TARGET_FIELDS)
    single = SINGLE_FIELD if single_schema is not None else None
    many = LIST_FIELD if list_schema is not None else None
    selectors = SELECTORS_FIELD if selectors_schema is not None else None
    target_fields = tuple(f for f in (single, many, selectors) if f)

    ref_items: list[tuple[str, Mapping[str, Any]]] = []
    if single_schema is not None:
        ref_items.append((SINGLE_FIELD, _ref_item_schema(single_schema, False)))
    if list_schema is not None:
        ref_items.append((LIST_FIELD, _ref_item_schema(list_schema, True)))
    ref_props = [_map(item.get("properties")) for _, item in ref_items]

    # Required: in the schema's `required`, or demanded by a spec-level CEL rule.
    spec_rules = _rules(spec_schema)
    required = bool(set(_strings(spec_schema.get("required"))) & set(target_fields)) or any(
        _required_by_cel(r, target_fields) for r in spec_rules
    )
    exclusive = not (single and many) or any(_exclusive_by_cel(r, SINGLE_FIELD, LIST_FIELD) for r in spec_rules)

    max_items, unique = _list_facts(list_schema)
    restrictions = _restrictions(ref_items, spec_rules, single_schema, list_schema)
    strategy_values, strategy_default = _strategy(block("defaults"), block("overrides"), spec_schema)
    ref_required, ref_defaults, ref_extra = _ref_shape(ref_props, [item for _, item in ref_items])

    label = labels.get(POLICY_LABEL)
    return CrdFacts(
        name=_str(metadata.get("name")),
        group=_str(spec.get("group")),
        kind=_str(names.get("kind")),
        plural=_str(names.get("plural")),
        scope=scope if scope in ("Namespaced", "Cluster") else None,
        served_versions=_served_versions(spec),
        schema_version=schema_version,
        label=label if isinstance(label, str) else None,
        single_field=single,
        list_field=many,
        selectors_field=selectors,
        required=required,
        exclusive=exclusive,
        max_items=max_items if max_items is not None and max_items >= 1 else None,
        unique=unique,
        section_name=any("sectionName" in p for p in ref_props),
        namespace=any("namespace" in p for p in ref_props),
        allowed_kinds=_allowed(restrictions, "kind"),
        allowed_groups=_allowed(restrictions, "group"),
        has_defaults=block("defaults") is not None,
        has_overrides=block("overrides") is not None,
        has_default=block("default") is not None,
        has_override=block("override") is not None,
        strategy_values=strategy_values,
        strategy_default=strategy_default,
        spec_fields=tuple(k for k in props if isinstance(k, str)),
        ref_required=ref_required,
        ref_defaults=ref_defaults,
        ref_extra_fields=ref_extra,
    )


def _ref_shape(
    ref_props: Sequence[Mapping[str, Any]], items: Sequence[Mapping[str, Any]]
) -> tuple[tuple[str, ...], tuple[tuple[str, str], ...], tuple[str, ...]]:
    """(which of group, kind and name the reference schema requires, the defaults the API server
    sets for them, its other fields), from the first reference schema that lists its fields;
    Gateway API's shape when none does."""
    for props, item in zip(ref_props, items):
        if not props:
            continue
        defaults = tuple(
            (f, sub["default"])
            for f in GATEWAY_API_REF_REQUIRED
            if isinstance(sub := props.get(f), Mapping) and isinstance(sub.get("default"), str)
        )
        # A field with a default is never missing: the API server sets it first.
        required = tuple(f for f in GATEWAY_API_REF_REQUIRED if f in _strings(item.get("required")) and f not in dict(defaults))
        extra = tuple(sorted(k for k in props if isinstance(k, str) and k not in _REF_FIELDS))
        return required, defaults, extra
    return GATEWAY_API_REF_REQUIRED, (), ()


def _list_facts(list_schema: Mapping[str, Any] | None) -> tuple[int | None, bool]:
    """(maxItems, whether duplicate entries are rejected) of the targetRefs list."""
    if list_schema is None:
        return None, False
    # listType=map|set makes the API server reject duplicate keys; an `exists_one`
    # CEL rule over the list does the same (BackendTLSPolicy, NGF policies).
    unique = list_schema.get("x-kubernetes-list-type") in ("map", "set") or any("exists_one(" in r for r in _rules(list_schema))
    return _int(list_schema.get("maxItems")), unique


def _restrictions(
    ref_items: Sequence[tuple[str, Mapping[str, Any]]],
    spec_rules: Sequence[str],
    single_schema: Mapping[str, Any] | None,
    list_schema: Mapping[str, Any] | None,
) -> list[_Restriction]:
    """Kind and group restrictions: enums on the reference fields, CEL on the field, its items or spec."""
    restrictions: list[_Restriction] = []
    for fname, item in ref_items:
        item_props = _map(item.get("properties"))
        for attr in ("kind", "group"):
            enum = _strings(_map(item_props.get(attr)).get("enum"))
            if enum:
                restrictions.append(_Restriction(attr, frozenset(enum), fname))
    env_spec: dict[str, tuple[str, str]] = {}
    if single_schema is not None:
        env_spec["self." + SINGLE_FIELD] = (_REF, SINGLE_FIELD)
    if list_schema is not None:
        env_spec["self." + LIST_FIELD] = (_LIST, LIST_FIELD)
    cel_sources: list[tuple[str, dict[str, tuple[str, str]]]] = [(r, env_spec) for r in spec_rules]
    if single_schema is not None:
        cel_sources += [(r, {"self": (_REF, SINGLE_FIELD)}) for r in _rules(single_schema)]
    if list_schema is not None:
        cel_sources += [(r, {"self": (_LIST, LIST_FIELD)}) for r in _rules(list_schema)]
        cel_sources += [(r, {"self": (_REF, LIST_FIELD)}) for r in _rules(_map(list_schema.get("items")))]
    for rule, env in cel_sources:
        if env:
            restrictions.extend(_parse_restriction(rule, env) or ())
    return restrictions


def _allowed(restrictions: Sequence[_Restriction], attr: str) -> tuple[str, ...] | None:
    """What the restrictions allow for `attr`: several rules on one field all hold
    (intersection); separate fields each allow theirs (union). None: unrestricted."""
    per_field: dict[str, frozenset[str]] = {}
    for r in restrictions:
        if r.attr == attr:
            per_field[r.field] = per_field[r.field] & r.values if r.field in per_field else r.values
    if not per_field:
        return None
    return tuple(sorted(frozenset().union(*per_field.values())))


def _strategy(*holders: Mapping[str, Any] | None) -> tuple[tuple[str, ...], str | None]:
    """The merge `strategy` enum and default of the first schema (defaults, overrides, spec) that has one."""
    values: tuple[str, ...] = ()
    default: str | None = None
    for holder in holders:
        strategy = _map(_map(_map(holder).get("properties")).get("strategy"))
        if strategy and not values:
            values, default = _strings(strategy.get("enum")), _str(strategy.get("default"))
    return values, default


# -- profiles ----------------------------------------------------------------------------


def _effective_target(kinds: Iterable[TargetKind], section_name: bool) -> str:
    """The most specific level among the target kinds; a sectionName narrows a Gateway to a
    listener and a route to a rule (GEP-2648). Unknown kinds: `route`, as structural detection."""
    levels = {_KIND_LEVEL[k.kind] for k in kinds if k.kind in _KIND_LEVEL}
    if not levels:
        return "route"
    level = max(levels, key=_LEVELS.index)
    if section_name and level in ("gateway", "route"):
        level = {"gateway": "listener", "route": "rule"}[level]
    return level


def _strategy_kind(value: str) -> str:
    low = value.lower()
    if "atomic" in low:
        return "atomic"
    if "patch" in low:
        return "patch"
    return "custom"  # e.g. Kuadrant's rule-keyed `merge`: only a profile can say what it means


def _merge_spec(facts: CrdFacts, policy_class: str) -> MergeSpec:
    """Boilerplate field names come from the CRD whatever the class (the PL1xx rules read them);
    the default strategy from the class and the strategy enum."""
    if facts.boilerplate == POLICY_ATTACHMENT:
        # The original Policy Attachment page ("Hierarchy"): defaults apply bottom-up and
        # overrides top-down per field (the "includeQueryString" example), i.e. field-wise patches.
        return MergeSpec(
            default="none" if policy_class == DIRECT else "patch-defaults",
            defaults="default" if facts.has_default else None,
            overrides="override" if facts.has_override else None,
        )
    strategies = {v: _strategy_kind(v) for v in facts.strategy_values}
    if policy_class == DIRECT:
        default = "none"  # GEP-713: None is the strategy of Direct kinds
    elif facts.strategy_default is not None and strategies.get(facts.strategy_default) == "patch":
        default = "patch-defaults"
    elif facts.strategy_default is not None and strategies.get(facts.strategy_default) == "custom":
        default = "custom"
    else:
        default = "atomic-defaults"  # GEP-713 "Merge strategies": inherited kinds without a strategy
    return MergeSpec(
        default=default,
        defaults="defaults" if facts.has_defaults else None,
        overrides="overrides" if facts.has_overrides else None,
        strategy_field="strategy" if strategies else None,
        strategies=strategies,
        # GEP-713: next to a defaults/overrides block, top-level spec proper is implicit defaults.
        implicit_defaults=facts.has_defaults or facts.has_overrides,
    )


def profile_from_facts(facts: CrdFacts, source: str = "") -> PolicyProfile | None:
    if not facts.is_policy or facts.group is None or facts.kind is None:
        return None
    policy_class = facts.policy_class
    kinds = facts.target_kinds
    # Enforce only when every CEL-allowed kind could be placed in a group.
    enforced = bool(kinds) and {k.kind for k in kinds} == set(facts.allowed_kinds or ())
    fields = facts.target_fields
    plural = facts.plural or facts.kind.lower()
    return PolicyProfile(
        group=facts.group,
        kind=facts.kind,
        plural=plural,
        versions=facts.served_versions,
        scope=facts.scope or "Namespaced",
        policy_class=policy_class,
        boilerplate=facts.boilerplate,
        targets=TargetSpec(
            single=facts.single_field,
            list=facts.list_field,
            selectors=facts.selectors_field,
            # A labelled kind without recognisable target fields still declares targets somewhere.
            required=facts.required if fields else False,
            exclusive=facts.exclusive,
            max_items=facts.max_items,
            unique=facts.unique,
            section_name=facts.section_name,
            namespace=facts.namespace,
            kinds=kinds if enforced else (),
            kinds_enforced=enforced,
            # GEP-713 "Targeting virtual types": without a CEL restriction a kind the API
            # server does not know may be a virtual kind, not an error (docs/semantics.md#virtual-kinds).
            virtual_kinds=not enforced,
            ref_required=facts.ref_required,
            ref_defaults=facts.ref_defaults,
            ref_extra_fields=facts.ref_extra_fields,
        ),
        merge=_merge_spec(facts, policy_class),
        effective_target=_effective_target(kinds, facts.section_name),
        project=facts.group,
        origin=ORIGIN_CRD,
        source=source,
    )


def profiles_from_crds(crds: Iterable[K8sObject]) -> list[PolicyProfile]:
    """A profile for every policy CRD (label or GEP-713 structure); others are skipped."""
    out: list[PolicyProfile] = []
    seen: set[tuple[str, str]] = set()
    for crd in crds:
        facts = crd_facts(crd.data)
        where = f"{crd.doc.file}:{crd.doc.line}"
        profile = profile_from_facts(facts, source=f"CustomResourceDefinition {facts.name or crd.name} ({where})")
        if profile is not None and profile.gk not in seen:
            seen.add(profile.gk)
            out.append(profile)
    return out


__all__ = ["POLICY_LABEL", "CrdFacts", "crd_facts", "profile_from_facts", "profiles_from_crds"]
