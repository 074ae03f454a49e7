"""Hypothesis strategies for fuzzing policylint (tests/hostile/test_fuzz.py, fuzz/).

Two families:

- `yamlish_text()` / `yamlish_bytes()`: text built from YAML's special
  characters, the loader's edge cases and Kubernetes-looking fragments, for the
  loader and the whole pipeline;
- `manifests()`: structured random manifests, a small world of Namespaces,
  GatewayClasses, Gateways, ListenerSets, routes, Services, ReferenceGrants and
  policies of several kinds whose names come from small pools, so that
  references often resolve and often dangle. Any field may be missing or hold a
  value of the wrong type, and any value anywhere may be replaced by one.

Generated text never contains template markers (`{{`) or characters YAML
forbids: those are reported once per file, at their first occurrence, so the
finding legitimately moves when documents are shuffled.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import yaml
from hypothesis import strategies as st

ABSENT: Any = type("Absent", (), {"__repr__": lambda self: "ABSENT"})()

GW = "gateway.networking.k8s.io"
NAMES = ["gw", "web", "api"]
NAMESPACES = ["app", "infra"]
SECTIONS = ["http", "https", "api", "grpc", "http", "rule-1", "rule-2", "Bad_Name", ""]
PORTS = [80, 443, 8080, 80, 443, 0, 70000]
PROTOCOLS = ["HTTP", "HTTPS", "TLS", "TCP", "UDP", "example.com/custom"]
HOSTNAMES = ["example.com", "*.example.com", "a.example.com", "*.other.org", ""]
GROUPS = [GW, "", "core", "gateway.envoyproxy.io", "kuadrant.io", "example.com", "Bad Group"]
KINDS = ["Gateway", "HTTPRoute", "GRPCRoute", "Service", "ListenerSet", "TCPRoute", "Namespace", "Secret", "GatewayClass", "Nope"]
LABEL_KEYS = ["team", "env", "app", "kubernetes.io/metadata.name", "gateway.networking.k8s.io/policy"]
LABEL_VALUES = ["web", "prod", "app", "infra", "Direct", "Inherited"]
FROM = ["Same", "All", "Selector", "None", "Bogus"]
OPERATORS = ["In", "NotIn", "Exists", "DoesNotExist", "Bogus"]

# `--external` patterns a run may be given (ExternalObjects.parse).
EXTERNAL_PATTERNS = ["GatewayClass/*", "Gateway/infra/*", "ReferenceGrant/infra/*", "Service/*/*", "Namespace/*"]

# Wrong-typed values: scalars where maps belong, maps and lists where scalars belong.
SAFE_TEXT = st.text(alphabet="abc-./:*& 0", max_size=6)
JUNK = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-3, max_value=70_000),
    st.floats(allow_nan=True, allow_infinity=True),
    SAFE_TEXT,
    st.lists(st.integers(min_value=0, max_value=9), max_size=2),
    st.dictionaries(st.sampled_from(["a", "name", "kind"]), st.integers(min_value=0, max_value=9), max_size=2),
    st.lists(st.dictionaries(st.sampled_from(["name", "x"]), SAFE_TEXT, max_size=1), max_size=2),
)


@st.composite
def slot(draw: st.DrawFn, strategy: st.SearchStrategy[Any], ok: int, absent: int, junk: int) -> Any:
    """A proper value, or missing (ABSENT), or a value of the wrong type, with these odds. Shrinks to proper."""
    r = draw(st.integers(min_value=0, max_value=ok + absent + junk - 1))
    if r < ok:
        return draw(strategy)
    if r < ok + absent:
        return ABSENT
    return draw(JUNK)


def req(strategy: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """A field that is usually there: names, kinds, the lists that matter."""
    return slot(strategy, ok=16, absent=1, junk=1)


def opt(strategy: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """An optional field: often missing."""
    return slot(strategy, ok=5, absent=6, junk=1)


def pick(values: Sequence[Any]) -> st.SearchStrategy[Any]:
    return st.sampled_from(list(values))


def small_list(strategy: st.SearchStrategy[Any], max_size: int = 3) -> st.SearchStrategy[list[Any]]:
    return st.lists(strategy, max_size=max_size)


@st.composite
def mapping(draw: st.DrawFn, **fields: st.SearchStrategy[Any]) -> dict[str, Any]:
    """A mapping of these fields (`req`/`opt` slots); fields drawn as ABSENT are left out."""
    out: dict[str, Any] = {}
    for key, strategy in fields.items():
        value = draw(strategy)
        if value is not ABSENT:
            out[key] = value
    return out


labels = st.dictionaries(pick(LABEL_KEYS), pick(LABEL_VALUES), max_size=2)


def selector() -> st.SearchStrategy[dict[str, Any]]:
    expression = mapping(key=req(pick(LABEL_KEYS)), operator=req(pick(OPERATORS)), values=opt(small_list(pick(LABEL_VALUES), 2)))
    return mapping(matchLabels=opt(labels), matchExpressions=opt(small_list(expression, 2)))


def namespaces_from() -> st.SearchStrategy[dict[str, Any]]:
    return mapping(**{"from": req(pick(FROM)), "selector": opt(selector())})


# (group, kind) pairs as they are meant, then everything else: most references are plausible.
TARGET_GKS = [(GW, "Gateway"), (GW, "HTTPRoute"), (GW, "GRPCRoute"), ("", "Service"), (GW, "ListenerSet"), (GW, "TCPRoute")]


@st.composite
def group_kind(draw: st.DrawFn) -> tuple[Any, Any]:
    if draw(st.integers(min_value=0, max_value=4)) < 4:
        return draw(pick(TARGET_GKS))
    return draw(pick(GROUPS)), draw(pick(KINDS))


def target_ref() -> st.SearchStrategy[dict[str, Any]]:
    fields = mapping(
        name=req(pick(NAMES)), sectionName=opt(pick(SECTIONS)), namespace=slot(pick(NAMESPACES), ok=1, absent=8, junk=1)
    )
    return st.tuples(group_kind(), req(st.just(0)), req(st.just(0)), fields).map(
        lambda t: {
            **({} if t[1] is ABSENT else {"group": t[0][0] if t[1] == 0 else t[1]}),
            **({} if t[2] is ABSENT else {"kind": t[0][1] if t[2] == 0 else t[2]}),
            **t[3],
        }
    )


def parent_ref() -> st.SearchStrategy[dict[str, Any]]:
    return mapping(
        group=slot(pick([GW, "", "example.com"]), ok=1, absent=6, junk=1),
        kind=slot(pick(["Gateway", "ListenerSet", "Service", "Nope"]), ok=2, absent=5, junk=1),
        name=req(pick(NAMES)),
        namespace=opt(pick(NAMESPACES)),
        sectionName=opt(pick(SECTIONS)),
        port=opt(pick(PORTS)),
    )


def backend_ref() -> st.SearchStrategy[dict[str, Any]]:
    return mapping(
        group=slot(pick(["", "example.com", GW]), ok=1, absent=6, junk=1),
        kind=slot(pick(["Service", "Nope", "Gateway"]), ok=1, absent=6, junk=1),
        name=req(pick(NAMES)),
        namespace=opt(pick(NAMESPACES)),
        port=req(pick(PORTS)),
    )


def secret_ref(kind: str = "Secret") -> st.SearchStrategy[dict[str, Any]]:
    return mapping(group=opt(st.just("")), kind=opt(pick([kind, "Nope"])), name=req(pick(NAMES)), namespace=opt(pick(NAMESPACES)))


# Equal timestamps on purpose: "oldest wins" must break ties by name, not by input order (GEP-713).
TIMESTAMPS = ["2024-01-01T00:00:00Z", "2024-01-01T00:00:00Z", "2023-06-01T12:00:00Z", "not-a-date"]


def metadata(cluster: bool = False) -> st.SearchStrategy[dict[str, Any]]:
    if cluster:
        return mapping(name=req(pick(NAMES + NAMESPACES)), labels=opt(labels))
    return mapping(
        name=req(pick(NAMES)),
        namespace=slot(pick(NAMESPACES), ok=8, absent=2, junk=1),
        labels=opt(labels),
        creationTimestamp=slot(pick(TIMESTAMPS), ok=1, absent=4, junk=0),
    )


def obj(api_version: str, kind: str, spec: st.SearchStrategy[Any] | None, cluster: bool = False) -> st.SearchStrategy[Any]:
    fields: dict[str, st.SearchStrategy[Any]] = {"metadata": req(metadata(cluster))}
    if spec is not None:
        fields["spec"] = req(spec)
    return mapping(**fields).map(lambda b: {"apiVersion": api_version, "kind": kind, **b})


def listener() -> st.SearchStrategy[dict[str, Any]]:
    return mapping(
        name=req(pick(SECTIONS)),
        port=req(pick(PORTS)),
        protocol=req(pick(PROTOCOLS)),
        hostname=opt(pick(HOSTNAMES)),
        allowedRoutes=opt(
            mapping(
                namespaces=opt(namespaces_from()),
                kinds=opt(small_list(mapping(group=opt(pick(GROUPS)), kind=req(pick(KINDS))), 2)),
            )
        ),
        tls=opt(mapping(mode=opt(pick(["Terminate", "Passthrough"])), certificateRefs=opt(small_list(secret_ref(), 2)))),
    )


def gateway_spec() -> st.SearchStrategy[dict[str, Any]]:
    return mapping(
        gatewayClassName=req(pick(["eg", "missing", ""])),
        listeners=req(small_list(listener())),
        allowedListeners=opt(mapping(namespaces=opt(namespaces_from()))),
        tls=opt(
            mapping(
                backend=opt(mapping(clientCertificateRef=req(secret_ref()))),
                frontend=opt(
                    mapping(
                        default=req(
                            mapping(validation=req(mapping(caCertificateRefs=req(small_list(secret_ref("ConfigMap"), 2)))))
                        )
                    )
                ),
            )
        ),
    )


def route_rule() -> st.SearchStrategy[dict[str, Any]]:
    mirror = mapping(type=req(st.just("RequestMirror")), requestMirror=req(mapping(backendRef=req(backend_ref()))))
    ext_auth = mapping(type=req(st.just("ExternalAuth")), externalAuth=req(mapping(backendRef=req(backend_ref()))))
    backend = st.tuples(backend_ref(), mapping(filters=opt(small_list(mirror, 1)))).map(lambda t: {**t[0], **t[1]})
    return mapping(
        name=opt(pick(SECTIONS)), backendRefs=req(small_list(backend)), filters=opt(small_list(st.one_of(mirror, ext_auth), 2))
    )


def route_spec() -> st.SearchStrategy[dict[str, Any]]:
    return mapping(
        parentRefs=req(small_list(parent_ref())),
        hostnames=opt(small_list(pick(HOSTNAMES), 2)),
        rules=req(small_list(route_rule())),
    )


def targets(single: bool = True, selectors: bool = False) -> dict[str, st.SearchStrategy[Any]]:
    """targetRefs usually; targetRef and targetSelectors sometimes (and sometimes both: exclusivity rules)."""
    fields: dict[str, st.SearchStrategy[Any]] = {"targetRefs": slot(small_list(target_ref()), ok=8, absent=2, junk=1)}
    if single:
        fields["targetRef"] = opt(target_ref())
    if selectors:
        target_selector = st.tuples(
            selector(), mapping(group=opt(pick(GROUPS)), kind=req(pick(KINDS)), namespaces=opt(namespaces_from()))
        ).map(lambda t: {**t[0], **t[1]})
        fields["targetSelectors"] = opt(small_list(target_selector, 2))
    return fields


limits = st.dictionaries(
    pick(["global", "per-user"]),
    mapping(rates=req(small_list(mapping(limit=req(st.integers(0, 100)), window=req(pick(["1s", "1m"]))), 1))),
    max_size=1,
)

EG = "gateway.envoyproxy.io/v1alpha1"
POLICIES: list[st.SearchStrategy[Any]] = [
    obj(
        f"{GW}/v1",
        "BackendTLSPolicy",
        mapping(
            **targets(single=False),
            validation=opt(mapping(hostname=req(pick(HOSTNAMES)), wellKnownCACertificates=opt(st.just("System")))),
        ),
    ),
    obj(
        EG,
        "ClientTrafficPolicy",
        mapping(**targets(selectors=True), timeout=opt(mapping(http=req(mapping(requestReceivedTimeout=req(st.just("5s"))))))),
    ),
    obj(EG, "BackendTrafficPolicy", mapping(**targets(selectors=True), mergeType=opt(pick(["StrategicMerge", "JSONMerge"])))),
    obj(
        EG,
        "SecurityPolicy",
        mapping(
            **targets(selectors=True), extAuth=opt(mapping(http=req(mapping(backendRefs=req(small_list(backend_ref(), 2))))))
        ),
    ),
    obj(
        "kuadrant.io/v1",
        "RateLimitPolicy",
        mapping(
            **targets(),
            limits=opt(limits),
            defaults=opt(mapping(limits=req(limits), strategy=opt(pick(["atomic", "merge"])))),
            overrides=opt(mapping(limits=req(limits))),
        ),
    ),
    obj(
        "kuadrant.io/v1",
        "AuthPolicy",
        mapping(**targets(), rules=opt(st.builds(dict)), defaults=opt(mapping(rules=req(st.builds(dict))))),
    ),
    obj(
        "example.com/v1", "RetryPolicy", mapping(**targets(selectors=True), default=opt(mapping(attempts=req(st.integers(0, 5)))))
    ),
]

# A CRD for the unknown policy kind: profiles derived from CRDs are part of the pipeline too.
RETRY_POLICY_CRD = {
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "metadata": {"name": "retrypolicies.example.com", "labels": {"gateway.networking.k8s.io/policy": "Direct"}},
    "spec": {
        "group": "example.com",
        "names": {"kind": "RetryPolicy", "plural": "retrypolicies"},
        "scope": "Namespaced",
        "versions": [
            {
                "name": "v1",
                "served": True,
                "storage": True,
                "schema": {
                    "openAPIV3Schema": {
                        "type": "object",
                        "properties": {
                            "spec": {
                                "type": "object",
                                "properties": {
                                    "targetRefs": {
                                        "type": "array",
                                        "maxItems": 2,
                                        "items": {
                                            "type": "object",
                                            "required": ["group", "kind", "name"],
                                            "properties": {
                                                k: {"type": "string"} for k in ("group", "kind", "name", "sectionName")
                                            },
                                        },
                                    }
                                },
                            }
                        },
                    }
                },
            }
        ],
    },
}


def grant_from() -> st.SearchStrategy[dict[str, Any]]:
    # Referrers: routes and Gateways (a Service never refers), or a policy.
    policies = [(GW, "BackendTLSPolicy"), ("gateway.envoyproxy.io", "ClientTrafficPolicy")]
    return st.tuples(group_kind(), pick(policies), mapping(namespace=req(pick(NAMESPACES)))).map(
        lambda t: {
            "group": (t[1] if t[0][1] == "Service" else t[0])[0],
            "kind": (t[1] if t[0][1] == "Service" else t[0])[1],
            **t[2],
        }
    )


def grant_to() -> st.SearchStrategy[dict[str, Any]]:
    return st.tuples(group_kind(), mapping(name=opt(pick(NAMES)))).map(lambda t: {"group": t[0][0], "kind": t[0][1], **t[1]})


def _copy(value: Any) -> Any:
    # Fresh containers: a value reachable twice would be dumped with YAML anchors and aliases.
    if isinstance(value, dict):
        return {k: _copy(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_copy(v) for v in value]
    return value


KUBE_OBJECTS: list[st.SearchStrategy[Any]] = [
    obj("v1", "Namespace", None, cluster=True),
    obj(
        f"{GW}/v1",
        "GatewayClass",
        mapping(controllerName=req(st.just("gateway.envoyproxy.io/gatewayclass-controller"))),
        cluster=True,
    ),
    obj(f"{GW}/v1", "Gateway", gateway_spec()),
    obj(f"{GW}/v1", "ListenerSet", mapping(parentRef=req(parent_ref()), listeners=req(small_list(listener(), 2)))),
    obj(f"{GW}/v1", "HTTPRoute", route_spec()),
    obj(f"{GW}/v1", "GRPCRoute", route_spec()),
    obj(f"{GW}/v1alpha2", "TCPRoute", route_spec()),
    obj("v1", "Service", mapping(ports=req(small_list(mapping(name=opt(pick(SECTIONS)), port=req(pick(PORTS))), 2)))),
    obj(
        f"{GW}/v1beta1",
        "ReferenceGrant",
        mapping(**{"from": req(small_list(grant_from(), 2)), "to": req(small_list(grant_to(), 2))}),
    ),
    *POLICIES,
    st.builds(lambda: _copy(RETRY_POLICY_CRD)),
]


def paths_of(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [prefix]
    if isinstance(value, dict):
        for k, v in value.items():
            out.extend(paths_of(v, (*prefix, k)))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            out.extend(paths_of(v, (*prefix, i)))
    return out


def replaced(value: Any, path: tuple[Any, ...], new: Any) -> Any:
    if not path:
        return new
    head, rest = path[0], path[1:]
    if isinstance(value, dict):
        return {k: (replaced(v, rest, new) if k == head else v) for k, v in value.items()}
    return [(replaced(v, rest, new) if i == head else v) for i, v in enumerate(value)]


@st.composite
def corrupted(draw: st.DrawFn, strategy: st.SearchStrategy[Any]) -> Any:
    """A value from `strategy`, with one node anywhere (even the root) replaced by a wrong-typed one, sometimes."""
    value = draw(strategy)
    if draw(st.integers(min_value=0, max_value=5)) != 5:
        return value
    path = draw(pick(paths_of(value)))
    return replaced(value, path, draw(JUNK))


# What policies target, more often than the rest: references then resolve more often.
WEIGHTED = [*KUBE_OBJECTS, *[KUBE_OBJECTS[i] for i in (2, 2, 4, 4, 7, 7, 0)]]


def kube_object() -> st.SearchStrategy[Any]:
    return corrupted(st.one_of(WEIGHTED))


@st.composite
def scenario(draw: st.DrawFn) -> list[Any]:
    """A coherent core, so that routes attach and policies meet on the same targets: a GatewayClass,
    a Gateway with HTTP and HTTPS listeners, a Service, an HTTPRoute with named rules attached to
    the Gateway, and policies with defaults and overrides at the Gateway, listener, route and rule
    levels. The effective-policy simulation (PL6xx) only has work to do on such input."""
    ns = draw(pick(NAMESPACES))

    def meta(name: str) -> dict[str, Any]:
        out: dict[str, Any] = {"name": name, "namespace": ns}
        stamp = draw(slot(pick(TIMESTAMPS[:3]), ok=1, absent=1, junk=0))
        if stamp is not ABSENT:
            out["creationTimestamp"] = stamp
        return out

    rules = draw(st.lists(pick(["api", "web", "admin"]), min_size=1, max_size=3, unique=True))
    docs: list[Any] = [
        {
            "apiVersion": f"{GW}/v1",
            "kind": "GatewayClass",
            "metadata": {"name": "eg"},
            "spec": {"controllerName": "gateway.envoyproxy.io/gatewayclass-controller"},
        },
        {
            "apiVersion": f"{GW}/v1",
            "kind": "Gateway",
            "metadata": meta("gw"),
            "spec": {
                "gatewayClassName": "eg",
                "listeners": [
                    {
                        "name": "http",
                        "port": 80,
                        "protocol": "HTTP",
                        "allowedRoutes": {"namespaces": {"from": draw(pick(["Same", "All"]))}},
                    },
                    {
                        "name": "https",
                        "port": 443,
                        "protocol": "HTTPS",
                        "hostname": "*.example.com",
                        "tls": {"certificateRefs": [{"name": "cert"}]},
                    },
                ],
            },
        },
        {"apiVersion": "v1", "kind": "Service", "metadata": meta("web"), "spec": {"ports": [{"name": "http", "port": 80}]}},
    ]
    parent: dict[str, Any] = {"name": "gw"}
    section = draw(pick(["http", "https", None]))
    if section is not None:
        parent["sectionName"] = section
    docs.append(
        {
            "apiVersion": f"{GW}/v1",
            "kind": "HTTPRoute",
            "metadata": meta("api"),
            "spec": {
                "parentRefs": [parent],
                "hostnames": ["a.example.com"],
                "rules": [{"name": r, "backendRefs": [{"name": "web", "port": 80}]} for r in rules],
            },
        }
    )
    targets = [("Gateway", "gw", None), ("Gateway", "gw", "http"), ("Gateway", "gw", "https"), ("HTTPRoute", "api", None)]
    targets += [("HTTPRoute", "api", r) for r in rules]
    kinds = [
        ("kuadrant.io/v1", "RateLimitPolicy"),
        ("gateway.envoyproxy.io/v1alpha1", "BackendTrafficPolicy"),
        ("gateway.envoyproxy.io/v1alpha1", "ClientTrafficPolicy"),
        ("example.com/v1", "RetryPolicy"),
    ]
    for i in range(draw(st.integers(min_value=1, max_value=4))):
        api_version, kind = draw(pick(kinds))
        target_kind, target_name, target_section = draw(pick(targets))
        ref: dict[str, Any] = {"group": GW, "kind": target_kind, "name": target_name}
        if target_section is not None:
            ref["sectionName"] = target_section
        spec: dict[str, Any] = {"targetRefs": [ref]}
        block = {
            "limits": {draw(pick(["global", "per-user"])): {"rates": [{"limit": draw(st.integers(1, 100)), "window": "1s"}]}}
        }
        if draw(st.booleans()):
            block["strategy"] = draw(pick(["atomic", "merge"]))
        where = draw(pick(["defaults", "overrides", "top", "default"]))
        if where == "top":
            spec.update(block)
        else:
            spec[where] = block
        docs.append({"apiVersion": api_version, "kind": kind, "metadata": meta(f"p{i}"), "spec": spec})
    return docs


@st.composite
def document(draw: st.DrawFn) -> Any:
    """Mostly one object; sometimes a `kind: List` of objects, an empty document, or a scalar."""
    r = draw(st.integers(min_value=0, max_value=19))
    if r < 17:
        return draw(kube_object())
    if r == 17:
        return {"apiVersion": "v1", "kind": "List", "items": draw(st.lists(kube_object(), max_size=3))}
    if r == 18:
        return None
    return draw(JUNK)


def dump(doc: Any) -> str:
    return yaml.dump(doc, Dumper=getattr(yaml, "CSafeDumper", yaml.SafeDumper), sort_keys=False, allow_unicode=True)


@dataclass(frozen=True)
class Manifests:
    """Documents (already serialised) and the file each belongs to."""

    docs: tuple[str, ...]
    files: tuple[int, ...]  # files[i]: index of the file holding docs[i]
    file_count: int

    def file_texts(self, order: Sequence[int] | None = None) -> list[str]:
        """Each file's text: its documents in `order` (default: as generated), each after a `---`."""
        texts = [""] * self.file_count
        for i in order if order is not None else range(len(self.docs)):
            texts[self.files[i]] += "---\n" + self.docs[i]
        return texts


@st.composite
def manifests(draw: st.DrawFn, max_docs: int = 12, max_files: int = 3, unique: bool = False) -> Manifests:
    """A multi-file set of manifests. `unique` drops objects whose key repeats (see `object_key`)."""
    raw = draw(st.lists(document(), min_size=2, max_size=max_docs))
    link(draw, raw)
    if draw(st.booleans()):
        core = [draw(corrupted(st.just(d))) if draw(st.integers(0, 4)) == 0 else d for d in draw(scenario())]
        raw = core + raw
    if unique:
        raw = dedupe(raw)
    file_count = draw(st.integers(min_value=1, max_value=max_files))
    files = draw(st.lists(st.integers(min_value=0, max_value=file_count - 1), min_size=len(raw), max_size=len(raw)))
    return Manifests(tuple(dump(d) for d in raw), tuple(files), file_count)


SECTION_LISTS = {
    "Gateway": "listeners",
    "ListenerSet": "listeners",
    "HTTPRoute": "rules",
    "GRPCRoute": "rules",
    "TCPRoute": "rules",
    "Service": "ports",
}
POLICY_KINDS = {
    "BackendTLSPolicy",
    "ClientTrafficPolicy",
    "BackendTrafficPolicy",
    "SecurityPolicy",
    "RateLimitPolicy",
    "AuthPolicy",
    "RetryPolicy",
}


def _objects(documents: list[Any]) -> list[dict[str, Any]]:
    out = []
    for doc in documents:
        items = doc.get("items") if isinstance(doc, dict) and doc.get("kind") == "List" else [doc]
        for item in items if isinstance(items, list) else ():
            if object_key(item) is not None:
                out.append(item)
    return out


def _refs(o: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """(role, ref mapping) of the references an object makes, as generated."""
    spec = o.get("spec")
    if not isinstance(spec, dict):
        return []
    out: list[tuple[str, dict[str, Any]]] = []

    def each(role: str, value: Any) -> None:
        for v in value if isinstance(value, list) else [value]:
            if isinstance(v, dict):
                out.append((role, v))

    if o["kind"] in POLICY_KINDS:
        each("target", spec.get("targetRef"))
        each("target", spec.get("targetRefs"))
    if o["kind"] == "ListenerSet":
        each("parent", spec.get("parentRef"))
    each("parent", spec.get("parentRefs"))
    for rule in spec.get("rules") if isinstance(spec.get("rules"), list) else ():
        if isinstance(rule, dict):
            each("backend", rule.get("backendRefs"))
    return out


def _namespace(o: dict[str, Any]) -> str:
    ns = o["metadata"].get("namespace")
    return ns if isinstance(ns, str) and ns else "default"


def link(draw: st.DrawFn, documents: list[Any]) -> None:
    """Point some references at objects that exist (same namespace, an existing sectionName):
    independent random names alone would almost never meet. The rest keep dangling."""
    objects = _objects(documents)
    wanted = {"target": None, "parent": ("Gateway", "ListenerSet"), "backend": ("Service",)}
    for o in objects:
        for role, ref in _refs(o):
            kinds = wanted[role]
            candidates = [
                t for t in objects if t is not o and (kinds is None or t["kind"] in kinds) and t["kind"] not in POLICY_KINDS
            ]
            if role == "target" and draw(st.integers(min_value=0, max_value=3)) > 0:
                # Policies target objects in their own namespace (a targetRef has no namespace).
                candidates = [t for t in candidates if _namespace(t) == _namespace(o)]
            if not candidates or not draw(st.booleans()):
                continue
            target = draw(pick(range(len(candidates))).map(lambda i, c=candidates: c[i]))
            ref["name"] = target["metadata"]["name"]
            group = target["apiVersion"].rpartition("/")[0]
            default = ("", "Service") if role == "backend" else (GW, "Gateway")
            if role != "target" and (group, target["kind"]) == default and draw(st.booleans()):
                ref.pop("group", None)
                ref.pop("kind", None)
            else:
                ref["group"], ref["kind"] = group, target["kind"]
            ns = target["metadata"].get("namespace")
            if role != "target" and isinstance(ns, str) and ns != o["metadata"].get("namespace"):
                ref["namespace"] = ns
            else:
                ref.pop("namespace", None)
            spec = target.get("spec")
            sections = spec.get(SECTION_LISTS.get(target["kind"], "")) if isinstance(spec, dict) else None
            entries = sections if isinstance(sections, list) else []
            names = [e["name"] for e in entries if isinstance(e, dict) and isinstance(e.get("name"), str)]
            if names and role != "backend" and draw(st.booleans()):
                ref["sectionName"] = draw(pick(names))
            elif "sectionName" in ref and draw(st.booleans()):
                del ref["sectionName"]


CLUSTER_KINDS = {"Namespace", "GatewayClass", "CustomResourceDefinition"}


def object_key(data: Any) -> tuple[Any, ...] | None:
    """The key policylint would give this object (model.ObjectKey), or None when it is no object.

    Conservative: any doubt (a namespace that is not a string) maps to the default namespace,
    as the model's salvage of bad metadata does.
    """
    if not isinstance(data, dict):
        return None
    api_version, kind, meta = data.get("apiVersion"), data.get("kind"), data.get("metadata")
    if not isinstance(api_version, str) or not isinstance(kind, str) or not isinstance(meta, dict):
        return None
    name = meta.get("name")
    if not isinstance(name, str) or not name:
        return None
    namespace = meta.get("namespace")
    ns = None if kind in CLUSTER_KINDS else (namespace if isinstance(namespace, str) and namespace else "default")
    return (api_version.rpartition("/")[0], kind, ns, name)


def dedupe(documents: list[Any]) -> list[Any]:
    """Drop objects whose key was seen before: which of two different duplicates comes first is
    order-dependent by nature (PL005 names the later one), so shuffle tests avoid them."""
    seen: set[tuple[Any, ...]] = set()

    def fresh(data: Any) -> bool:
        key = object_key(data)
        if key is None:
            return True
        if key in seen:
            return False
        seen.add(key)
        return True

    out = []
    for doc in documents:
        if isinstance(doc, dict) and doc.get("kind") == "List" and isinstance(doc.get("items"), list):
            out.append({**doc, "items": [item for item in doc["items"] if fresh(item)]})
        elif fresh(doc):
            out.append(doc)
    return out


# -- text ---------------------------------------------------------------------------------------------

TOKENS = [
    *"abc: -[]{},'\"&*!|>#?%@`\n\t\r\\0123456789.~",
    "---\n",
    "...\n",
    "<<: ",
    "&a ",
    "*a",
    "!!int ",
    "!!bool ",
    "!!float ",
    "!!str ",
    "!!binary ",
    "!!map ",
    "!!seq ",
    "%YAML 1.1\n",
    "%TAG ! tag:x,2000:\n",
    "? ",
    "\ufeff",
    "\x85",
    "\u2028",
    "\x00",
    "\x1b",
    "é",
    "😀",
    "{{ x }}",
    "apiVersion: v1\n",
    "apiVersion: gateway.networking.k8s.io/v1\n",
    "kind: Service\n",
    "kind: Gateway\n",
    "kind: HTTPRoute\n",
    "kind: BackendTLSPolicy\n",
    "metadata:\n  name: x\n",
    "  namespace: app\n",
    "  labels: {a: 1}\n",
    "spec:\n",
    "  targetRefs:\n  - ",
    "kind: List\nitems:\n- ",
    "  ",
    "    ",
]


def yamlish_text(max_tokens: int = 40) -> st.SearchStrategy[str]:
    return st.lists(st.one_of(pick(TOKENS), st.text(max_size=3)), max_size=max_tokens).map("".join)


def yamlish_bytes() -> st.SearchStrategy[bytes]:
    encodings: list[Callable[[str], bytes]] = [
        lambda t: t.encode("utf-8", "surrogatepass"),
        lambda t: b"\xef\xbb\xbf" + t.encode("utf-8", "surrogatepass"),
        lambda t: "\ufeff".encode("utf-16-le") + t.encode("utf-16-le", "surrogatepass"),
        lambda t: t.encode("utf-16-be", "surrogatepass"),
    ]
    encoded = st.tuples(yamlish_text(), pick(encodings)).map(lambda te: te[1](te[0]))
    return st.one_of(st.binary(max_size=300), encoded, st.tuples(encoded, st.binary(max_size=8)).map(lambda p: p[0] + p[1]))
