"""Objects built from documents (`k8s/objects.py`, `build_objects`): what an apiVersion and a kind
decide of an object (the tool whose configuration file it is, its group, its scope) is worked out
once per type and registry (`KindRegistry.type_of`), and a document whose apiVersion and kind are two non-empty strings skips
the explanation of why it is not an object (docs/performance.md, "`--jobs 2`: the objects built
with fewer calls before the first fork").

Each document built alone (a call of its own, with a registry that has worked out nothing before
it) is the oracle: the
documents built together give the same objects, in the same order, with the same issues, whatever
the mix of types, scopes, configuration files and malformed identities.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from policylint.input.document import Document, DocumentRef
from policylint.k8s import objects
from policylint.k8s.objects import CLUSTER, BuildResult, K8sObject, KindInfo, KindRegistry, build_objects
from tests.examples import examples

# The registry the command starts from, and one where a CRD of the input makes a namespaced kind
# cluster-scoped and a kind no table knows namespaced: the same type, told apart by the registry.
BUILTIN = KindRegistry.builtin()
WITH_CRDS = BUILTIN.with_kinds(
    [KindInfo("gateway.networking.k8s.io", "HTTPRoute", CLUSTER), KindInfo("example.com", "Widget", "Namespaced")]
)

_API_VERSIONS = [
    "gateway.networking.k8s.io/v1",
    "v1",
    "example.com/v1",
    "kustomize.config.k8s.io/v1beta1",  # a tool's configuration, whatever its kind
    "gateway.envoyproxy.io/v1alpha1",  # one kind of it a tool's (EnvoyGateway), the others objects
    "",
    None,
    3,
    ["v1"],
]
_KINDS = ["HTTPRoute", "Namespace", "Service", "Widget", "EnvoyGateway", "Kustomization", "List", "", None, True]
_METADATA = st.one_of(
    st.none(),
    st.just("not a mapping"),
    st.fixed_dictionaries(
        {},
        optional={
            "name": st.sampled_from(["a", "b", "", 7]),
            "namespace": st.sampled_from(["ns", "", None, 1]),
            "labels": st.sampled_from([{"app": "x"}, {"app": 1}, {}, "l"]),
            "creationTimestamp": st.sampled_from(["2024-01-02T03:04:05Z", "yesterday", 5]),
        },
    ),
)


def _fresh(registry: KindRegistry) -> KindRegistry:
    """A registry of the same kinds that has worked out no type yet."""
    return registry.with_kinds(())


def _document(data: Any, at: int) -> Document:
    return Document(DocumentRef("f.yaml", 0, 0, at, at + 1, 1), data)


@st.composite
def _documents(draw: st.DrawFn) -> list[Document]:
    out = []
    for at in range(draw(st.integers(min_value=0, max_value=12))):
        data: dict[str, Any] = {}
        api_version = draw(st.sampled_from(_API_VERSIONS))
        kind = draw(st.sampled_from(_KINDS))
        if api_version is not None or draw(st.booleans()):
            data["apiVersion"] = api_version
        if kind is not None or draw(st.booleans()):
            data["kind"] = kind
        metadata = draw(_METADATA)
        if metadata is not None:
            data["metadata"] = metadata
        if kind == "List" and draw(st.booleans()):
            data["items"] = [dict(data, kind="Service")] if draw(st.booleans()) else "not a list"
        out.append(_document(data if draw(st.integers(0, 9)) else draw(st.sampled_from([None, [], "text"])), at))
    return out


def _seen(result: BuildResult) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]:
    built = [
        (o.key, o.api_version, o.doc, o.prefix, dict(o.labels), dict(o.annotations), o.creation_timestamp) for o in result.objects
    ]
    return built, [(i.rule_id, i.message, i.document, i.path) for i in result.issues]


@examples(300, 3000)
@given(documents=_documents(), registry=st.sampled_from([BUILTIN, WITH_CRDS]), namespace=st.sampled_from(["default", "team"]))
def test_documents_built_together_are_built_as_each_alone(
    documents: list[Document], registry: KindRegistry, namespace: str
) -> None:
    # Each alone, with a registry of its own that has answered nothing yet.
    alone = [build_objects([document], _fresh(registry), namespace) for document in documents]
    together = build_objects(documents, registry, namespace)
    assert _seen(together) == (
        [built for result in alone for built in _seen(result)[0]],
        [issue for result in alone for issue in _seen(result)[1]],
    )


def test_a_types_configuration_tool_and_scope_are_worked_out_once_per_registry(monkeypatch: pytest.MonkeyPatch) -> None:
    asked: list[tuple[str, str]] = []
    tool = objects.configuration_tool

    def counted(api_version: str, kind: str) -> str | None:
        asked.append((api_version, kind))
        return tool(api_version, kind)

    monkeypatch.setattr(objects, "configuration_tool", counted)
    types = [
        ("gateway.networking.k8s.io/v1", "HTTPRoute"),
        ("v1", "Namespace"),
        ("kustomize.config.k8s.io/v1beta1", "Kustomization"),
    ]
    documents = [
        _document({"apiVersion": api_version, "kind": kind, "metadata": {"name": f"n{at}", "namespace": "ns"}}, at)
        for at, (api_version, kind) in enumerate(types * 40)
    ]
    registry = _fresh(WITH_CRDS)
    result = build_objects(documents, registry)
    # One question per type: 120 documents asked it 120 times.
    assert sorted(asked) == sorted(types)
    assert len(result.objects) == 80
    assert {o.key.namespace for o in result.objects if o.kind == "HTTPRoute"} == {None}  # the CRD's scope
    assert {o.key.namespace for o in result.objects if o.kind == "Namespace"} == {None}
    assert len(result.issues) == 40 and all(i.rule_id == objects.NOT_AN_OBJECT for i in result.issues)
    # The same registry answers again without asking; another one (the input's CRDs, or none)
    # decides for itself.
    build_objects(documents, registry)
    assert len(asked) == 3
    other = _fresh(BUILTIN)
    assert build_objects(documents[:1], other).objects[0].key.namespace == "ns"
    assert len(asked) == 4


def test_a_registry_holds_at_most_types_held_types(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(objects, "TYPES_HELD", 2)
    registry = _fresh(WITH_CRDS)
    pairs = [("v1", "Service"), ("v1", "Namespace"), ("gateway.networking.k8s.io/v1", "HTTPRoute"), ("example.com/v1", "Widget")]
    for api_version, kind in pairs * 2:
        assert registry.type_of(api_version, kind) == _fresh(WITH_CRDS).type_of(api_version, kind)
        assert len(registry._types) <= 2
    assert registry.type_of("gateway.networking.k8s.io/v1", "HTTPRoute") == (None, "gateway.networking.k8s.io", True)
    assert registry.type_of("kustomize.config.k8s.io/v1beta1", "Kustomization").tool == "Kustomize"


@pytest.mark.parametrize(
    ("api_version", "kind"),
    [(None, "Service"), ("v1", None), ("", "Service"), ("v1", ""), (3, "Service"), ("v1", ["x"]), (None, None)],
)
def test_an_identity_that_names_no_type_is_explained_as_before(api_version: Any, kind: Any) -> None:
    data = {"apiVersion": api_version, "kind": kind, "metadata": {"name": "a"}}
    result = build_objects([_document(data, 0)], BUILTIN)
    assert result.objects == []
    assert [i.message for i in result.issues] == [objects._not_an_object("", api_version, kind)]


def test_an_objects_sort_key_writes_its_list_place_and_nothing_for_a_document_of_its_own() -> None:
    listed = {"apiVersion": "v1", "kind": "List", "items": [{"apiVersion": "v1", "kind": "Service", "metadata": {"name": "a"}}]}
    alone = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "b"}}
    built = build_objects([_document(listed, 0), _document(alone, 1)], BUILTIN).objects
    assert [o.sort_key() for o in built] == [("f.yaml", 1, 1, "items[0]"), ("f.yaml", 2, 1, "")]
    assert all(isinstance(o, K8sObject) for o in built)
