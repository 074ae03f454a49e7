"""The deprecated fields PL701 reports are what the vendored upstream CRDs say (policylint.k8s.deprecations)."""

from __future__ import annotations

from policylint.k8s import deprecations
from tests.lintutil import ROOT


def test_the_committed_table_is_what_the_generator_writes() -> None:
    generated = deprecations.render(deprecations.generate(ROOT / "tests" / "data" / "crds"))
    assert deprecations.DATA.read_text(encoding="utf-8") == generated, (
        "run `python -m policylint.k8s.deprecations tests/data/crds`"
    )


def test_each_deprecation_quotes_its_crd_and_names_a_sibling_replacement() -> None:
    table = deprecations.deprecations()
    btp = {d.path: d for d in table[("gateway.envoyproxy.io", "BackendTrafficPolicy", "v1alpha1")]}
    # Envoy Gateway v1.9.0 api/v1alpha1/backendtrafficpolicy_types.go: "Deprecated: Use Compressor instead."
    assert btp["spec.compression"].text == "Deprecated: Use Compressor instead."
    assert btp["spec.compression"].replacement == "spec.compressor"
    assert btp["spec.targetRef"].replacement == "spec.targetRefs"
    # "Deprecated: Use Global and/or Local fields directly instead.": two fields, neither alone
    # replaces `type` (a policy with `local` set only drops `type`): no replacement named.
    assert btp["spec.rateLimit.type"].text == "Deprecated: Use Global and/or Local fields directly instead."
    assert btp["spec.rateLimit.type"].replacement is None
    sp = {d.path: d for d in table[("gateway.envoyproxy.io", "SecurityPolicy", "v1alpha1")]}
    assert sp["spec.jwt.providers[*].remoteJWKS.backendRef"].replacement == "spec.jwt.providers[*].remoteJWKS.backendRefs"
    for fields in table.values():
        for field in fields:
            assert field.text.startswith("Deprecated:")
            assert field.replacement is None or field.replacement.rsplit(".", 1)[0] == field.path.rsplit(".", 1)[0]
