"""Builders for the manifests tests lint: the Gateway API documents many tests repeat.

Each builder returns one YAML document that starts with `---`; `first()` drops it for the first
document of a text. The documents are in the compact flow style the tests write by hand, so a test
still reads as its topology and its line numbers can be counted by hand: a builder's document has
one line per key it writes.

Values are YAML text. A value that ends with a newline is a block of lines under its key (list items
indented by two spaces, `"  - {name: http, protocol: HTTP, port: 80}\\n"`); any other value stays on
the key's line (flow style, `"[{name: http, protocol: HTTP, port: 80}]"`). `spec` arguments are
whole lines added to the document's `spec` mapping, each indented by two spaces and ending in a
newline.
"""

from __future__ import annotations

GATEWAY_API = "gateway.networking.k8s.io/v1"
POLICY_LABEL = "gateway.networking.k8s.io/policy"
# The one HTTP listener most Gateways in the tests have.
HTTP = "[{name: http, protocol: HTTP, port: 80}]"
# An HTTP and an HTTPS listener, as two block items.
HTTP_HTTPS = """\
  - {name: http, protocol: HTTP, port: 80}
  - {name: https, protocol: HTTPS, port: 443, tls: {certificateRefs: [{name: cert}]}}
"""
# A route's one rule, sending to Service web port 80.
TO_WEB = "[{backendRefs: [{name: web, port: 80}]}]"


def first(document: str) -> str:
    """The document without its leading `---`: the first document of a text."""
    return document.removeprefix("---\n")


def _field(key: str, value: str) -> str:
    """`key: value` in a top-level spec mapping; a value ending in a newline is a block below the key."""
    return f"  {key}:\n{value}" if value.endswith("\n") else f"  {key}: {value}\n"


def _head(api: str, kind: str, name: str, namespace: str | None = None, labels: str | None = None) -> str:
    """`---`, apiVersion, kind and flow-style metadata: the first four lines of every document here."""
    metadata = [f"name: {name}"]
    if namespace is not None:
        metadata.append(f"namespace: {namespace}")
    if labels is not None:
        metadata.append(f"labels: {labels}")
    return f"---\napiVersion: {api}\nkind: {kind}\nmetadata: {{{', '.join(metadata)}}}\n"


def gateway_class(name: str = "eg", controller: str = "example.com/gateway-controller") -> str:
    """A GatewayClass (5 lines)."""
    return _head(GATEWAY_API, "GatewayClass", name) + f"spec: {{controllerName: {controller}}}\n"


def gateway(listeners: str = HTTP, *, name: str = "gw", ns: str = "app", class_name: str = "eg", spec: str = "") -> str:
    """A Gateway of class `class_name`; `spec` lines come between `gatewayClassName` and `listeners`."""
    return (
        _head(GATEWAY_API, "Gateway", name, ns)
        + f"spec:\n  gatewayClassName: {class_name}\n{spec}"
        + _field("listeners", listeners)
    )


def selector_listener(selector: str) -> str:
    """An HTTP listener on port 80 admitting routes from the namespaces `selector` selects, as block
    items (7 lines when `selector` is flow style; a block selector is indented by ten spaces)."""
    selector_field = f"        selector:\n{selector}" if selector.endswith("\n") else f"        selector: {selector}\n"
    return (
        "  - name: http\n    protocol: HTTP\n    port: 80\n    allowedRoutes:\n      namespaces:\n        from: Selector\n"
        + selector_field
    )


def listener_set(
    *,
    name: str = "ls",
    ns: str = "app",
    parent: str = "{name: gw}",
    listeners: str = "[{name: extra, protocol: HTTP, port: 8080}]",
) -> str:
    """A ListenerSet (GEP-1713) whose `parentRef` is `parent`."""
    return _head(GATEWAY_API, "ListenerSet", name, ns) + "spec:\n" + _field("parentRef", parent) + _field("listeners", listeners)


def route(
    parent_refs: str | None = "[{name: gw}]",
    *,
    name: str = "r",
    ns: str = "app",
    kind: str = "HTTPRoute",
    labels: str | None = None,
    hostnames: str | None = None,
    spec: str = "",
    rules: str = TO_WEB,
) -> str:
    """A route: `parentRefs` (none when `parent_refs` is None), `hostnames`, the `spec` lines, `rules`."""
    parents = _field("parentRefs", parent_refs) if parent_refs is not None else ""
    hosts = _field("hostnames", hostnames) if hostnames is not None else ""
    return _head(GATEWAY_API, kind, name, ns, labels) + f"spec:\n{parents}{hosts}{spec}" + _field("rules", rules)


def service(name: str = "web", ns: str = "app", ports: str = "[{name: http, port: 80}]") -> str:
    """A Service: `spec: {ports: ...}` on one line, or `ports` as a block when it ends with a newline."""
    body = f"spec:\n{_field('ports', ports)}" if ports.endswith("\n") else f"spec: {{ports: {ports}}}\n"
    return _head("v1", "Service", name, ns) + body


def namespace(name: str, labels: str = "{}") -> str:
    """A Namespace with `labels` (4 lines)."""
    return _head("v1", "Namespace", name, labels=labels)


def reference_grant(namespace: str, from_: str, to: str, name: str = "rg") -> str:
    """A ReferenceGrant in `namespace`; `from_`/`to` are the YAML lists (7 lines when both are flow style)."""
    return (
        _head("gateway.networking.k8s.io/v1beta1", "ReferenceGrant", name, namespace)
        + "spec:\n"
        + _field("from", from_)
        + _field("to", to)
    )


def policy(
    kind: str,
    refs: str,
    *,
    api: str = "gateway.envoyproxy.io/v1alpha1",
    name: str = "p",
    ns: str | None = "app",
    field: str = "targetRefs",
    spec: str = "",
) -> str:
    """A policy whose target field `field` is `refs`, then the `spec` lines; cluster-scoped when `ns` is None."""
    return _head(api, kind, name, ns) + "spec:\n" + _field(field, refs) + spec


def _plural(kind: str) -> str:
    return (kind[:-1] + "ies" if kind.endswith("y") else kind + "s").lower()


def crd(
    kind: str,
    spec_schema: str,
    *,
    group: str = "example.com",
    labels: str = f"{{{POLICY_LABEL}: Direct}}",
    names: str | None = None,
    scope: str = "Namespaced",
) -> str:
    """A v1 CustomResourceDefinition with one served version, v1 (20 lines, then `spec_schema`).

    `spec_schema` is the rest of the schema of the resource's `spec` after `type: object`: lines
    indented by twelve spaces. `names` defaults to `{kind: <kind>, plural: <plural>}`.
    """
    plural = _plural(kind)
    names = names if names is not None else f"{{kind: {kind}, plural: {plural}}}"
    return f"""\
---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: {plural}.{group}
  labels: {labels}
spec:
  group: {group}
  names: {names}
  scope: {scope}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
{spec_schema}"""


def policy_crd(
    kind: str, group: str = "example.com", klass: str = "Direct", scope: str = "Namespaced", *, namespace: bool = True
) -> str:
    """A policy CRD document (leading `---`, 32 lines) labelled `gateway.networking.k8s.io/policy: <klass>`.

    Its `spec.targetRefs` items carry group, kind, name, sectionName and, when `namespace` is true,
    namespace: the fields a CRD-derived profile reads to decide whether a target may name another
    namespace (policylint.profiles.crd). Other spec fields are preserved.
    """
    ns_field = "\n                    namespace: {type: string}" if namespace else ""
    spec_schema = f"""\
            x-kubernetes-preserve-unknown-fields: true
            properties:
              targetRefs:
                type: array
                items:
                  type: object
                  properties:
                    group: {{type: string}}
                    kind: {{type: string}}
                    name: {{type: string}}
                    sectionName: {{type: string}}{ns_field}
"""
    return crd(kind, spec_schema, group=group, labels=f"{{{POLICY_LABEL}: {klass}}}", scope=scope)


# -- Acceptance scenario S15, shared by the topology scenarios and the handshake rules' tests ----
# (docs/semantics.md#acceptance-scenarios)

# HTTPRoute ns2/route-x sends to Service default/demo-svc, in another namespace. Lines: the class 1-4,
# the Gateway 5-11, the route 12-20 (its backendRef on line 20), the Service 21-25.
S15 = (
    first(gateway_class())
    + gateway(ns="ns2")
    + route(name="route-x", ns="ns2", rules="  - backendRefs:\n    - {name: demo-svc, namespace: default, port: 80}\n")
    + service("demo-svc", "default")
)


def s15_grant(namespace: str = "default", *, to_name: str | None = None, from_ns: str = "ns2", name: str = "rg") -> str:
    """The ReferenceGrant of S15 (permitting route-x, when in namespace default); `to_name` narrows it to one Service."""
    to_name_field = f", name: {to_name}" if to_name else ""
    return reference_grant(
        namespace,
        f"[{{group: gateway.networking.k8s.io, kind: HTTPRoute, namespace: {from_ns}}}]",
        f'[{{group: "", kind: Service{to_name_field}}}]',
        name,
    )


# A Service with one named port, for the suppression and baseline tests.
BILLING_SERVICE = """\
apiVersion: v1
kind: Service
metadata:
  name: billing
  namespace: app
spec:
  selector:
    app: billing
  ports:
  - name: https
    port: 443
"""
