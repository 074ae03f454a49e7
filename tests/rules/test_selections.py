"""Objects a policy chooses by label selector (profile `selections`, policylint/semantics/selections.py;
docs/semantics.md#kuadrant): Kuadrant's API key authentication reads the Secrets its `selector`
matches, in the Kuadrant CR's namespace unless `allNamespaces` is true ("the API key Secrets must be
created in the Kuadrant CR namespace and not in the AuthPolicy namespace": doc/overviews/auth.md,
"Known limitations", Kuadrant/kuadrant-operator v1.5.2; the API key Secrets of
doc/user-guides/auth/auth-for-app-devs-and-platform-engineers.md carry `app: toystore`). PL417
reports a selector that chooses nothing as it reports a Secret missing by name
(docs/semantics.md#secrets-and-configmaps): a warning where the input manages Secrets there, nothing
where it holds none, an error with --complete.
"""

from __future__ import annotations

from policylint.findings import Severity
from tests.lintutil import lint_text, only

KUADRANT = """\
apiVersion: kuadrant.io/v1beta1
kind: Kuadrant
metadata: {name: kuadrant, namespace: kuadrant-system}
---
apiVersion: kuadrant.io/v1
kind: AuthPolicy
metadata: {name: authn, namespace: apps}
spec:
  targetRef: {group: gateway.networking.k8s.io, kind: HTTPRoute, name: web}
  defaults:
    strategy: merge
    rules:
      authentication:
        api-key-authn:
          apiKey:
%s            selector:
              matchLabels: {app: toystore}
          credentials:
            authorizationHeader: {prefix: APIKEY}
"""

SECRET = """\
---
apiVersion: v1
kind: Secret
metadata:
  name: api-key-regular-user
  namespace: %s
  labels: {authorino.kuadrant.io/managed-by: authorino, app: toystore}
stringData: {api_key: iamaregularuser}
"""

OTHER_SECRET = """\
---
apiVersion: v1
kind: Secret
metadata: {name: tls, namespace: %s}
stringData: {tls.crt: x}
"""

AT = "spec.defaults.rules.authentication.api-key-authn.apiKey.selector"


def test_api_keys_in_the_kuadrant_namespace_are_chosen() -> None:
    assert only(lint_text(KUADRANT % "" + SECRET % "kuadrant-system"), "PL417") == []


def test_a_selector_that_chooses_no_secret_is_a_warning_where_the_input_manages_secrets() -> None:
    # Before: the selector was not read.
    managed = KUADRANT % "" + OTHER_SECRET % "kuadrant-system"
    (warning,) = only(lint_text(managed), "PL417")
    assert (warning.path, warning.line, warning.severity) == (AT, 16, Severity.WARNING)
    assert "AuthPolicy apps/authn selects Secrets with labels app in (toystore) in namespace kuadrant-system" in warning.message
    assert warning.message.endswith(
        "Authorino accepts no API key for this authentication, and requests that need it are refused (401)"
    )
    (error,) = only(lint_text(managed, complete=True), "PL417")
    assert error.severity is Severity.ERROR


def test_a_selector_is_not_checked_where_the_input_holds_no_secret_until_it_is_complete() -> None:
    # Secrets are rarely kept in git: as for a Secret named by a reference, nothing is said where
    # the input holds none in the namespace Authorino reads, unless --complete.
    assert only(lint_text(KUADRANT % "" + OTHER_SECRET % "apps"), "PL417") == []
    (error,) = only(lint_text(KUADRANT % "", complete=True), "PL417")
    assert (error.path, error.severity) == (AT, Severity.ERROR)


def test_api_keys_in_the_policy_s_namespace_are_read_only_with_all_namespaces() -> None:
    (finding,) = only(lint_text(KUADRANT % "" + SECRET % "apps"), "PL417")
    assert (finding.path, finding.severity) == (AT, Severity.ERROR)
    assert "those in namespace apps are not read unless `allNamespaces` is true" in finding.message
    everywhere = KUADRANT % "            allNamespaces: true\n" + SECRET % "apps"
    assert only(lint_text(everywhere), "PL417") == []


def test_without_the_kuadrant_resource_any_namespace_may_hold_the_keys() -> None:
    # ... and the input cannot show it manages Secrets there: checked with --complete only.
    text = (KUADRANT % "").split("---\n", 1)[1]
    assert only(lint_text(text + SECRET % "apps"), "PL417") == []
    assert only(lint_text(text + OTHER_SECRET % "apps"), "PL417") == []
    (error,) = only(lint_text(text + OTHER_SECRET % "apps", complete=True), "PL417")
    assert "in the namespace of the Kuadrant resource (none in the input)" in error.message
