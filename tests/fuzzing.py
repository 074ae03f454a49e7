"""Hypothesis strategies for fuzzing policylint (tests/test_fuzz.py, fuzz/).

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
NAMES = ["gw", "web", "api", "edge", "eg", "a"]
NAMESPACES = ["app", "infra"]
SECTIONS = ["http", "https", "api", "grpc", "rule-1", "rule-2", "Bad_Name", ""]
PORTS = [80, 443, 8080, 0, 70000]
PROTOCOLS = ["HTTP", "HTTPS", "TLS", "TCP", "UDP", "example.com/custom"]
HOSTNAMES = ["example.com", "*.example.com", "a.example.com", "*.other.org", ""]
GROUPS = [GW, "", "core", "gateway.envoyproxy.io", "kuadrant.io", "example.com", "Bad Group"]
KINDS = ["Gateway", "HTTPRoute", "GRPCRoute", "Service", "ListenerSet", "TCPRoute", "Namespace", "Secret", "GatewayClass", "Nope"]
LABEL_KEYS = ["team", "env", "app", "kubernetes.io/metadata.name", "gateway.networking.k8s.io/policy"]
LABEL_VALUES = ["web", "prod", "app", "infra", "Direct", "Inherited"]
FROM = ["Same", "All", "Selector", "None", "Bogus"]
OPERATORS = ["In", "NotIn", "Exists", "DoesNotExist", "Bogus"]

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
def slot(draw: st.DrawFn, strategy: st.SearchStrategy[Any], ok: int = 6, absent: int = 2, junk: int = 1) -> Any:
    """Usually a proper value, sometimes missing (ABSENT), sometimes of the wrong type. Shrinks to proper."""
    r = draw(st.integers(min_value=0, max_value=ok + absent + junk - 1))
    if r < ok:
        return draw(strategy)
    if r < ok + absent:
        return ABSENT
    return draw(JUNK)


def pick(values: Sequence[Any]) -> st.SearchStrategy[Any]:
    return st.sampled_from(list(values))


def small_list(strategy: st.SearchStrategy[Any], max_size: int = 3) -> st.SearchStrategy[list[Any]]:
    return st.lists(strategy, max_size=max_size)


@st.composite
def mapping(draw: st.DrawFn, **fields: st.SearchStrategy[Any]) -> dict[str, Any]:
    """A mapping with these fields, each a slot: missing, proper or junk."""
    out: dict[str, Any] = {}
    for key, strategy in fields.items():
        value = draw(slot(strategy))
        if value is not ABSENT:
            out[key] = value
    return out


labels = st.dictionaries(pick(LABEL_KEYS), pick(LABEL_VALUES), max_size=2)


def selector() -> st.SearchStrategy[dict[str, Any]]:
    expression = mapping(key=pick(LABEL_KEYS), operator=pick(OPERATORS), values=small_list(pick(LABEL_VALUES), 2))
    return mapping(matchLabels=labels, matchExpressions=small_list(expression, 2))


def object_ref() -> st.SearchStrategy[dict[str, Any]]:
    """backendRef, certificateRef, parentRef, targetRef: every reference shares these fields."""
    return mapping(
        group=pick(GROUPS),
        kind=pick(KINDS),
        name=pick(NAMES),
        namespace=pick(NAMESPACES),
        sectionName=pick(SECTIONS),
        port=pick(PORTS),
    )


def metadata(cluster: bool = False) -> st.SearchStrategy[dict[str, Any]]:
    if cluster:
        return mapping(name=pick(NAMES + NAMESPACES), labels=labels)
    return mapping(name=pick(NAMES), namespace=pick(NAMESPACES), labels=labels)


def obj(api_version: str, kind: str, spec: st.SearchStrategy[Any] | None, cluster: bool = False) -> st.SearchStrategy[Any]:
    fields: dict[str, st.SearchStrategy[Any]] = {"metadata": metadata(cluster)}
    if spec is not None:
        fields["spec"] = spec
    body = mapping(**fields)
    return body.map(lambda b: {"apiVersion": api_version, "kind": kind, **b})


def listener() -> st.SearchStrategy[dict[str, Any]]:
    return mapping(
        name=pick(SECTIONS),
        port=pick(PORTS),
        protocol=pick(PROTOCOLS),
        hostname=pick(HOSTNAMES),
        allowedRoutes=mapping(
            namespaces=mapping(**{"from": pick(FROM), "selector": selector()}),
            kinds=small_list(mapping(group=pick(GROUPS), kind=pick(KINDS)), 2),
        ),
        tls=mapping(mode=pick(["Terminate", "Passthrough"]), certificateRefs=small_list(object_ref(), 2)),
    )


def gateway_spec() -> st.SearchStrategy[dict[str, Any]]:
    return mapping(
        gatewayClassName=pick(["eg", "missing", ""]),
        listeners=small_list(listener()),
        allowedListeners=mapping(namespaces=mapping(**{"from": pick(FROM), "selector": selector()})),
        tls=mapping(
            backend=mapping(clientCertificateRef=object_ref()),
            frontend=mapping(default=mapping(validation=mapping(caCertificateRefs=small_list(object_ref(), 2)))),
        ),
    )


def route_rule() -> st.SearchStrategy[dict[str, Any]]:
    mirror = mapping(type=st.just("RequestMirror"), requestMirror=mapping(backendRef=object_ref()))
    ext_auth = mapping(type=st.just("ExternalAuth"), externalAuth=mapping(backendRef=object_ref()))
    backend = object_ref().flatmap(lambda ref: mapping(filters=small_list(mirror, 1)).map(lambda f: {**ref, **f}))
    return mapping(name=pick(SECTIONS), backendRefs=small_list(backend), filters=small_list(st.one_of(mirror, ext_auth), 2))


def route_spec() -> st.SearchStrategy[dict[str, Any]]:
    return mapping(parentRefs=small_list(object_ref()), hostnames=small_list(pick(HOSTNAMES), 2), rules=small_list(route_rule()))


def targets(single: bool = True, selectors: bool = False) -> dict[str, st.SearchStrategy[Any]]:
    fields: dict[str, st.SearchStrategy[Any]] = {"targetRefs": small_list(object_ref())}
    if single:
        fields["targetRef"] = object_ref()
    if selectors:
        target_selector = selector().flatmap(
            lambda sel: mapping(
                group=pick(GROUPS), kind=pick(KINDS), namespaces=mapping(**{"from": pick(FROM), "selector": selector()})
            ).map(lambda extra: {**sel, **extra})
        )
        fields["targetSelectors"] = small_list(target_selector, 2)
    return fields


limits = st.dictionaries(pick(["global", "per-user"]), mapping(rates=small_list(mapping(limit=st.integers(0, 100), window=pick(["1s", "1m"])), 1)), max_size=1)

POLICIES: list[st.SearchStrategy[Any]] = [
    obj(f"{GW}/v1", "BackendTLSPolicy", mapping(**targets(single=False), validation=mapping(hostname=pick(HOSTNAMES), wellKnownCACertificates=st.just("System")))),
    obj("gateway.envoyproxy.io/v1alpha1", "ClientTrafficPolicy", mapping(**targets(selectors=True), timeout=mapping(http=mapping(requestReceivedTimeout=st.just("5s"))))),
    obj("gateway.envoyproxy.io/v1alpha1", "BackendTrafficPolicy", mapping(**targets(selectors=True), mergeType=pick(["StrategicMerge", "JSONMerge"]))),
    obj("gateway.envoyproxy.io/v1alpha1", "SecurityPolicy", mapping(**targets(selectors=True), extAuth=mapping(http=mapping(backendRefs=small_list(object_ref(), 2))))),
    obj("kuadrant.io/v1", "RateLimitPolicy", mapping(**targets(), limits=limits, defaults=mapping(limits=limits, strategy=pick(["atomic", "merge"])), overrides=mapping(limits=limits))),
    obj("kuadrant.io/v1", "AuthPolicy", mapping(**targets(), rules=st.just({}), defaults=mapping(rules=st.just({})))),
    obj("example.com/v1", "RetryPolicy", mapping(**targets(selectors=True), default=mapping(attempts=st.integers(0, 5)))),
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
                                            "properties": {k: {"type": "string"} for k in ("group", "kind", "name", "sectionName")},
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


def _copy(value: Any) -> Any:
    # Fresh containers: a value reachable twice would be dumped with YAML anchors and aliases.
    if isinstance(value, dict):
        return {k: _copy(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_copy(v) for v in value]
    return value


KUBE_OBJECTS: list[st.SearchStrategy[Any]] = [
    obj("v1", "Namespace", None, cluster=True),
    obj(f"{GW}/v1", "GatewayClass", mapping(controllerName=st.just("gateway.envoyproxy.io/gatewayclass-controller")), cluster=True),
    obj(f"{GW}/v1", "Gateway", gateway_spec()),
    obj(f"{GW}/v1", "ListenerSet", mapping(parentRef=object_ref(), listeners=small_list(listener(), 2))),
    obj(f"{GW}/v1", "HTTPRoute", route_spec()),
    obj(f"{GW}/v1", "GRPCRoute", route_spec()),
    obj(f"{GW}/v1alpha2", "TCPRoute", route_spec()),
    obj("v1", "Service", mapping(ports=small_list(mapping(name=pick(SECTIONS), port=pick(PORTS)), 2))),
    obj(f"{GW}/v1beta1", "ReferenceGrant", mapping(**{
        "from": small_list(mapping(group=pick(GROUPS), kind=pick(KINDS + ["BackendTLSPolicy", "ClientTrafficPolicy"]), namespace=pick(NAMESPACES)), 2),
        "to": small_list(mapping(group=pick(GROUPS), kind=pick(KINDS), name=pick(NAMES)), 2),
    })),
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
    if draw(st.integers(min_value=0, max_value=3)) != 3:
        return value
    path = draw(pick(paths_of(value)))
    return replaced(value, path, draw(JUNK))


def kube_object() -> st.SearchStrategy[Any]:
    return corrupted(st.one_of(KUBE_OBJECTS))


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
    raw = draw(st.lists(document(), min_size=1, max_size=max_docs))
    if unique:
        raw = dedupe(raw)
    file_count = draw(st.integers(min_value=1, max_value=max_files))
    files = draw(st.lists(st.integers(min_value=0, max_value=file_count - 1), min_size=len(raw), max_size=len(raw)))
    return Manifests(tuple(dump(d) for d in raw), tuple(files), file_count)


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
    "---\n", "...\n", "<<: ", "&a ", "*a", "!!int ", "!!bool ", "!!float ", "!!str ", "!!binary ", "!!map ", "!!seq ",
    "%YAML 1.1\n", "%TAG ! tag:x,2000:\n", "? ", "\ufeff", "\x85", "\u2028", "\x00", "\x1b", "é", "😀", "{{ x }}",
    "apiVersion: v1\n", "apiVersion: gateway.networking.k8s.io/v1\n", "kind: Service\n", "kind: Gateway\n",
    "kind: HTTPRoute\n", "kind: BackendTLSPolicy\n", "metadata:\n  name: x\n", "  namespace: app\n",
    "  labels: {a: 1}\n", "spec:\n", "  targetRefs:\n  - ", "kind: List\nitems:\n- ", "  ", "    ",
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
