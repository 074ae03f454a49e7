"""Conformance with a real controller: policylint's simulated status against the status Envoy
Gateway wrote, case by case (tests/data/oracles/envoy-gateway/README.md).

Each case is linted (its manifests with the objects EG's test harness adds), and every record
EG's output holds is compared with what policylint says of the same object at the same ancestor:

- a policy record with the verdict read from the JSON report's `policies` section (each target's
  `accepted`, `detail` and `enforcement`, at the targets that reach the record's ancestor);
  a policy EG accepts must also have no error finding, since a gate would fail on it;
- a route-parent or Gateway-listener record with the verdict of the error findings on the route or
  Gateway (none: accepted).

Only records EG's output decides offline count (`decidable_offline`), less the few whose input a
cluster cannot hold as written (`NOT_IN_A_CLUSTER`, each with its reason, printed). Agreement is reported per
verdict (recall: of EG's records with that verdict, how many policylint gives the same), over all
records, and per case (the mean of each case's agreement, so that the few cases with hundreds of
records do not drown the others). tests/fidelity/test_conformance.py asserts floors under these numbers;
`make conformance` prints them with every disagreement.

Run: `python -m tests.oracle [-v] [CASE...]`.
"""

from __future__ import annotations

import json
import sys
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from policylint.k8s.cluster import Declared
from policylint.pipeline import LintRequest, LintResult, lint
from policylint.rules.engine import Selection

ORACLE = Path(__file__).resolve().parent / "data" / "oracles" / "envoy-gateway" / "cases"
CRDS = ORACLE.parent / "crds"
ACCEPTED_FAMILY = ("accepted", "partially-overridden", "overridden")
# When targets reaching one ancestor disagree, the one EG would report (a rejection wins).
_PRIORITY = ("conflicted", "invalid", "ref-not-permitted", "section-not-found", "target-not-found", "other")

# Error findings on a route or Gateway, as the status EG writes on its parent or listener.
_ROUTE_RULES = {
    "PL402": "ref-not-permitted",
    "PL407": "section-not-found",
    "PL406": "other",
    "PL408": "other",
    "PL409": "other",
    "PL411": "invalid",
    "PL412": "invalid",
    "PL417": "invalid",
    "PL010": "invalid",
}


# EG's translator tests decode YAML straight into Go structs: no API server validates the input,
# Go's JSON decoding matches field names case-insensitively, and nothing stops two objects with one
# name. A record whose verdict rests on such input says nothing about a cluster, where the input
# is rejected or reads differently; it is left out of the figures and listed with its reason.
NOT_IN_A_CLUSTER: dict[tuple[str, str], str] = {
    ("sds", "BackendTLSPolicy/default/policy-btls"): (
        "spec.targetRefs[0] has no group, which the BackendTLSPolicy CRD requires: the API server rejects the object"
    ),
    ("tcproute-with-backendtlspolicy", "BackendTLSPolicy/default/policy-btls-for-service-1"): (
        "spec.targetRefs[0] has no group, which the BackendTLSPolicy CRD requires: the API server rejects the object"
    ),
    **{
        ("backendtrafficpolicy-with-retries", policy): (
            "its retry.perRetry spells `backOff` as `backoff`: the test's decoder matches field names "
            "case-insensitively, the API server prunes the field and `kubectl apply` rejects the object"
        )
        for policy in ("BackendTrafficPolicy/default/policy-for-route-1", "BackendTrafficPolicy/envoy-gateway/policy-for-gateway")
    },
    ("backendtrafficpolicy-dns-lookup-family", "BackendTrafficPolicy/default/backend-traffic-policy"): (
        "defined twice with different content: a cluster holds one object per name, the one applied last"
    ),
    ("backendtrafficpolicy-dns-lookup-family", "SecurityPolicy/envoy-gateway/policy-for-gateway-1"): (
        "its ext-auth backendRef spells the key `Kind`: the test's decoder reads it as `kind` (Backend), the API"
        " server as an unknown field, leaving the default kind Service"
    ),
    ("securitypolicy-with-extauth-invalid-no-serviceimport", "SecurityPolicy/default/policy-for-gateway-1"): (
        "its ext-auth backendRef spells every key capitalised (`Name`, `Kind`, ...): the test's decoder reads them, the"
        " API server finds no `name`, which the CRD requires, and rejects the object"
    ),
    ("securitypolicy-with-extauth-invalid-no-serviceimport-port", "SecurityPolicy/default/policy-for-gateway-1"): (
        "its ext-auth backendRef spells every key capitalised (`Name`, `Kind`, ...): the test's decoder reads them, the"
        " API server finds no `name`, which the CRD requires, and rejects the object"
    ),
    ("envoyextensionpolicy-status-conditions", "HTTPRoute/another-namespace/not-same-namespace-httproute"): (
        "its namespace has no Namespace object in the input, so EG's translator admits it nowhere; a cluster cannot"
        " hold an object in a namespace that does not exist"
    ),
    # Inputs the API server refuses (policylint.k8s.admission; each checked by hand against the Envoy
    # Gateway CRD): policylint simulates such a policy as Invalid, as it would be in a cluster (never stored).
    # PL703 and PL704 report each too.
    ("backendtrafficpolicy-status-fault-injection", "BackendTrafficPolicy/default/policy-for-route"): (
        "its faultInjection.delay.fixedDelay is '5.4s', which the Envoy Gateway CRD's duration pattern "
        "`^([0-9]{1,5}(h|m|s|ms)){1,4}$` does not match (no fractions): the API server rejects the object"
    ),
    ("backendtrafficpolicy-status-fault-injection", "BackendTrafficPolicy/default/policy-for-grpcroute"): (
        "its faultInjection.delay.fixedDelay is '5.4s', which the Envoy Gateway CRD's duration pattern "
        "`^([0-9]{1,5}(h|m|s|ms)){1,4}$` does not match (no fractions): the API server rejects the object"
    ),
    ("backendtrafficpolicy-status-fault-injection", "BackendTrafficPolicy/envoy-gateway/policy-for-gateway"): (
        "its faultInjection.abort.httpStatus is 14, below the Envoy Gateway CRD's minimum of 200: the API "
        "server rejects the object"
    ),
    ("clienttrafficpolicy-mtls-cert-bundle", "ClientTrafficPolicy/default/target-gateway-1"): (
        "its xForwardedClientCert sets certDetailsToAdd with a mode the Envoy Gateway CRD's CEL rule refuses "
        '("certDetailsToAdd can only be set when mode is AppendForward or SanitizeSet"): the API server '
        "rejects the object"
    ),
    ("clienttrafficpolicy-mtls-cert-bundle-both-valid", "ClientTrafficPolicy/default/target-gateway-1"): (
        "its xForwardedClientCert sets certDetailsToAdd with a mode the Envoy Gateway CRD's CEL rule refuses "
        '("certDetailsToAdd can only be set when mode is AppendForward or SanitizeSet"): the API server '
        "rejects the object"
    ),
    ("clienttrafficpolicy-mtls-clustertrustbundle", "ClientTrafficPolicy/envoy-gateway/target-gateway-1"): (
        "its xForwardedClientCert sets certDetailsToAdd with a mode the Envoy Gateway CRD's CEL rule refuses "
        '("certDetailsToAdd can only be set when mode is AppendForward or SanitizeSet"): the API server '
        "rejects the object"
    ),
    ("clienttrafficpolicy-mtls-clustertrustbundle", "ClientTrafficPolicy/envoy-gateway/target-gateway-2"): (
        "its xForwardedClientCert sets certDetailsToAdd with a mode the Envoy Gateway CRD's CEL rule refuses "
        '("certDetailsToAdd can only be set when mode is AppendForward or SanitizeSet"): the API server '
        "rejects the object"
    ),
    ("clienttrafficpolicy-mtls-forward-client-cert", "ClientTrafficPolicy/envoy-gateway/target-gateway-2"): (
        "its xForwardedClientCert sets certDetailsToAdd with a mode the Envoy Gateway CRD's CEL rule refuses "
        '("certDetailsToAdd can only be set when mode is AppendForward or SanitizeSet"): the API server '
        "rejects the object"
    ),
    ("clienttrafficpolicy-mtls-forward-client-cert-custom-data", "ClientTrafficPolicy/envoy-gateway/target-gateway-1"): (
        "its xForwardedClientCert sets certDetailsToAdd with a mode the Envoy Gateway CRD's CEL rule refuses "
        '("certDetailsToAdd can only be set when mode is AppendForward or SanitizeSet"): the API server '
        "rejects the object"
    ),
    ("clienttrafficpolicy-mtls-forward-client-cert-custom-data", "ClientTrafficPolicy/envoy-gateway/target-gateway-2"): (
        "its xForwardedClientCert sets certDetailsToAdd with a mode the Envoy Gateway CRD's CEL rule refuses "
        '("certDetailsToAdd can only be set when mode is AppendForward or SanitizeSet"): the API server '
        "rejects the object"
    ),
    ("envoyextensionpolicy-shadowmode", "EnvoyExtensionPolicy/default/policy-for-http-route"): (
        "its ext-proc backendRef spells its keys capitalised (`Name`, `Port`, ...): the test's decoder reads "
        "them, the API server finds no `name`, which the Envoy Gateway CRD requires (nor the port its CEL "
        "rule requires of a Service reference), and rejects the object"
    ),
    ("envoyextensionpolicy-with-extproc-with-mixed-backendrefs", "EnvoyExtensionPolicy/default/policy-ip-uds-mix"): (
        "its ext-proc backendRef spells its keys capitalised (`Name`, `Port`, ...): the test's decoder reads "
        "them, the API server finds no `name`, which the Envoy Gateway CRD requires (nor the port its CEL "
        "rule requires of a Service reference), and rejects the object"
    ),
    ("envoyextensionpolicy-with-extproc-with-multiple-backendrefs", "EnvoyExtensionPolicy/default/policy-for-http-route"): (
        "its ext-proc backendRef spells its keys capitalised (`Name`, `Port`, ...): the test's decoder reads "
        "them, the API server finds no `name`, which the Envoy Gateway CRD requires (nor the port its CEL "
        "rule requires of a Service reference), and rejects the object"
    ),
    ("envoyextensionpolicy-with-extproc-with-retries", "EnvoyExtensionPolicy/default/policy-for-http-route"): (
        "its ext-proc backendRef spells its keys capitalised (`Name`, `Port`, ...): the test's decoder reads "
        "them, the API server finds no `name`, which the Envoy Gateway CRD requires (nor the port its CEL "
        "rule requires of a Service reference), and rejects the object"
    ),
    ("envoyextensionpolicy-with-extproc-with-traffic-features", "EnvoyExtensionPolicy/default/policy-for-http-route"): (
        "its ext-proc backendRef spells its keys capitalised (`Name`, `Port`, ...): the test's decoder reads "
        "them, the API server finds no `name`, which the Envoy Gateway CRD requires (nor the port its CEL "
        "rule requires of a Service reference), and rejects the object"
    ),
    ("envoyproxy-priority-backend", "EnvoyExtensionPolicy/default/policy-for-http-route"): (
        "its ext-proc backendRef spells its keys capitalised (`Name`, `Port`, ...): the test's decoder reads "
        "them, the API server finds no `name`, which the Envoy Gateway CRD requires (nor the port its CEL "
        "rule requires of a Service reference), and rejects the object"
    ),
    ("securitypolicy-with-extauth", "SecurityPolicy/default/policy-for-gateway-1"): (
        "its ext-auth backendRef spells its keys capitalised (`Name`, `Port`, ...): the test's decoder reads "
        "them, the API server finds no `name`, which the Envoy Gateway CRD requires (nor the port its CEL "
        "rule requires of a Service reference), and rejects the object"
    ),
    ("securitypolicy-with-extauth-backendref", "SecurityPolicy/default/policy-for-gateway-1"): (
        "its ext-auth backendRef spells its keys capitalised (`Name`, `Port`, ...): the test's decoder reads "
        "them, the API server finds no `name`, which the Envoy Gateway CRD requires (nor the port its CEL "
        "rule requires of a Service reference), and rejects the object"
    ),
    ("securitypolicy-with-extauth-path-override", "SecurityPolicy/default/policy-for-gateway-1"): (
        "its ext-auth backendRef spells its keys capitalised (`Name`, `Port`, ...): the test's decoder reads "
        "them, the API server finds no `name`, which the Envoy Gateway CRD requires (nor the port its CEL "
        "rule requires of a Service reference), and rejects the object"
    ),
    ("securitypolicy-with-extauth-serviceimport-retry", "SecurityPolicy/default/policy-for-http-route-1"): (
        "its extAuth.grpc.backendSettings.retry.perRetry.backOff.baseInterval is '0.2s', which the Envoy "
        "Gateway CRD's duration pattern `^([0-9]{1,5}(h|m|s|ms)){1,4}$` does not match (no fractions): the "
        "API server rejects the object"
    ),
    ("securitypolicy-with-extauth-serviceimport-retry", "SecurityPolicy/default/policy-for-gateway-1"): (
        "its ext-auth backendRef spells its keys capitalised (`Name`, `Port`, ...): the test's decoder reads "
        "them, the API server finds no `name`, which the Envoy Gateway CRD requires (nor the port its CEL "
        "rule requires of a Service reference), and rejects the object"
    ),
    ("securitypolicy-with-extauth-with-backendtlspolicy", "SecurityPolicy/default/policy-for-gateway"): (
        "its ext-auth backendRef spells its keys capitalised (`Name`, `Port`, ...): the test's decoder reads "
        "them, the API server finds no `name`, which the Envoy Gateway CRD requires (nor the port its CEL "
        "rule requires of a Service reference), and rejects the object"
    ),
    ("clienttrafficpolicy-connection-limit-error", "ClientTrafficPolicy/envoy-gateway/target-gateway-1"): (
        "EG has it overridden on listener http-1 by target-gateway-1-section-http-1, whose"
        " connection.connectionLimit.closeDelay '10mib' the Envoy Gateway CRD's duration pattern does not match: the API"
        " server rejects that policy, so in a cluster nothing overrides this one"
    ),
    ("clienttrafficpolicy-headers-add-if-absent", "ClientTrafficPolicy/envoy-gateway/target-gateway-1"): (
        "its headers.earlyRequestHeaders.addIfAbsent and lateResponseHeaders.addIfAbsent each name a header"
        " twice (the test's 'duplicate-should-be-ignored'), and both lists are maps keyed by name in the Envoy"
        " Gateway CRD (x-kubernetes-list-type: map): the API server rejects the object (Duplicate value)"
    ),
    ("clienttrafficpolicy-buffer-limit-with-format-error", "ClientTrafficPolicy/envoy-gateway/target-gateway-1"): (
        "EG has it overridden on listener http-1 by target-gateway-1-section-http-1, whose"
        " connection.bufferLimit '500m' the second pattern of the Envoy Gateway CRD's allOf"
        " (^[1-9]+[0-9]*([EPTGMK]i|[EPTGMk])?$) does not match: the API server rejects that policy, so in a"
        " cluster nothing overrides this one"
    ),
    ("securitypolicy-with-merge-needs-fieldowner", "SecurityPolicy/default/policy-for-route"): (
        "its contextExtensions' valueRefs spell their keys capitalised (`Group`, `Kind`, `Name`): the test's "
        "decoder reads them, the API server finds none of the three, which the Envoy Gateway CRD requires, "
        "and rejects the object"
    ),
    ("securitypolicy-with-merge-needs-fieldowner", "SecurityPolicy/envoy-gateway/policy-for-gateway"): (
        "its contextExtensions' valueRefs spell their keys capitalised (`Group`, `Kind`, `Name`): the test's "
        "decoder reads them, the API server finds none of the three, which the Envoy Gateway CRD requires, "
        "and rejects the object"
    ),
}


@dataclass(frozen=True)
class Comparison:
    case: str
    record: dict[str, Any]
    expected: str
    got: str
    why: str = ""  # what policylint based its verdict on, for the disagreement listing

    @property
    def agrees(self) -> bool:
        return self.expected == self.got


@dataclass
class Summary:
    comparisons: list[Comparison] = field(default_factory=list)
    excluded: list[tuple[str, dict[str, Any], str]] = field(default_factory=list)  # (case, record, reason)

    def by_verdict(self) -> dict[str, tuple[int, int]]:
        """EG verdict -> (records policylint agrees on, records)."""
        counts: dict[str, list[int]] = defaultdict(lambda: [0, 0])
        for c in self.comparisons:
            counts[c.expected][1] += 1
            counts[c.expected][0] += c.agrees
        return {v: (a, n) for v, (a, n) in sorted(counts.items())}

    def recall(self, verdict: str) -> float:
        agreed, total = self.by_verdict().get(verdict, (0, 0))
        return agreed / total if total else 1.0

    def record_agreement(self) -> float:
        return sum(c.agrees for c in self.comparisons) / len(self.comparisons) if self.comparisons else 1.0

    def case_agreement(self) -> float:
        per_case: dict[str, list[bool]] = defaultdict(list)
        for c in self.comparisons:
            per_case[c.case].append(c.agrees)
        return sum(sum(v) / len(v) for v in per_case.values()) / len(per_case) if per_case else 1.0

    def cases(self) -> int:
        return len({c.case for c in self.comparisons})


def _key(kind: str, namespace: str | None, name: str) -> str:
    return f"{kind}/{namespace or ''}/{name}"


def _ref_id(ref: dict[str, Any], with_section: bool = True) -> str:
    key = _key(ref["kind"], ref["namespace"], ref["name"])
    return f"{key}:{ref['sectionName']}" if with_section and ref.get("sectionName") else key


def _ancestor_id(text: str) -> str:
    """`Gateway ns/name` (the JSON report's ancestors) as `Gateway/ns/name`."""
    kind, _, rest = text.partition(" ")
    namespace, _, name = rest.rpartition("/")
    return _key(kind, namespace, name)


def _writes_overridden() -> frozenset[str]:
    """Profiles whose controller writes an Overridden condition: for them the simulated
    conditions decide overridden or not (a mergeType merge is not an override)."""
    from policylint.profiles.registry import builtin_profiles

    return frozenset(p.name for p in builtin_profiles() if "Overridden" in p.conditions)


WRITES_OVERRIDDEN = _writes_overridden()


def target_verdict(target: dict[str, Any], profile: str = "") -> str:
    accepted, detail, enforcement = target["accepted"], target["detail"], target["enforcement"]
    if profile in WRITES_OVERRIDDEN and accepted == "Accepted":
        overridden = any(c["type"] == "Overridden" and c["status"] == "True" for c in target.get("conditions", []))
        if not overridden:
            return "accepted"
        return "overridden" if enforcement == "Overridden" else "partially-overridden"
    if accepted == "TargetNotFound":
        return "section-not-found" if detail == "SectionNotFound" else "target-not-found"
    if accepted == "Invalid":
        return "ref-not-permitted" if detail == "RefNotPermitted" else "invalid"
    if accepted == "Conflicted":
        return "conflicted"
    if enforcement == "Overridden":
        return "overridden"
    if enforcement == "PartiallyEnforced":
        return "partially-overridden"
    return "accepted"


def _combine(verdicts: Sequence[str]) -> str:
    live = [v for v in verdicts if v in ACCEPTED_FAMILY]
    if live:
        if all(v == "overridden" for v in live):
            return "overridden"
        return "partially-overridden" if any(v != "accepted" for v in live) else "accepted"
    return min(verdicts, key=_PRIORITY.index)


# Ancestors the JSON report names (`ancestors`: the Gateways a target's traffic passes). EG also
# names a ListenerSet (compared through its parent Gateway) and, for a BackendTLSPolicy on the
# backend of an ext-auth or ext-proc service, the policy or EnvoyProxy that references it, which
# policylint does not model: there the targets' own verdicts are compared.
GATEWAY_ANCESTORS = ("Gateway", "ListenerSet")


def policy_verdict(entry: dict[str, Any] | None, record: dict[str, Any], parents: dict[str, str]) -> tuple[str, str]:
    """policylint's verdict for a policy record, and what it was read from. `parents` maps each
    ListenerSet (`ListenerSet/ns/name`) to its parent Gateway."""
    if entry is None:
        return "missing", "no policy entry in the JSON report"
    targets = entry["targets"]
    ancestor = record["ancestor"]
    if ancestor and ancestor.split("/", 1)[0] not in GATEWAY_ANCESTORS:
        relevant = targets
        if not relevant:
            return "other", "no target"
        verdicts = [target_verdict(t, entry["profile"]) for t in relevant]
        return _combine(verdicts), "; ".join(f"{_ref_id(t['ref'])}: {v}" for t, v in zip(relevant, verdicts))
    if not ancestor:  # a synthetic record: no status, decided by the targets named
        wanted = set(record.get("targets") or [])
        relevant = [t for t in targets if _ref_id(t["ref"]) in wanted or _ref_id(t["ref"], False) in wanted] or targets
        if relevant and all(target_verdict(t, entry["profile"]) in ACCEPTED_FAMILY and not t["ancestors"] for t in relevant):
            return "other", "accepted targets that reach no Gateway"
    else:
        named = ancestor.split(":", 1)[0]
        gateway = parents.get(named, named)
        # A Gateway or ListenerSet target is its own ancestor in EG's status: where the policy
        # targets the record's ancestor itself, that target's verdict is the one EG wrote.
        relevant = [t for t in targets if _ref_id(t["ref"], False) == named]
        if not relevant:
            relevant = [
                t
                for t in targets
                if gateway in {_ancestor_id(a) for a in t["ancestors"]} or _ref_id(t["ref"], False) in (named, gateway)
            ]
        if not relevant:  # rejected targets reach no ancestor in the report: EG still writes one
            relevant = [t for t in targets if target_verdict(t, entry["profile"]) not in ACCEPTED_FAMILY]
    if not relevant:
        return "other", "no target reaches this ancestor"
    verdicts = [target_verdict(t, entry["profile"]) for t in relevant]
    why = "; ".join(f"{_ref_id(t['ref'])}: {v}" for t, v in zip(relevant, verdicts))
    return _combine(verdicts), why


def _errors_by_object(result: LintResult) -> dict[str, list[Any]]:
    out: dict[str, list[Any]] = defaultdict(list)
    for f in result.findings:
        if f.object is not None and f.severity.label == "error":
            out[_key(f.object.kind, f.object.namespace, f.object.name)].append(f)
    return out


def lint_case(directory: Path, cache_dir: str | None = None) -> LintResult:
    paths = [str(directory / "manifests.yaml")]
    if (directory / "harness.yaml").exists():
        paths.append(str(directory / "harness.yaml"))
    # EG's translator test input is the whole world the controller sees: nothing exists outside it.
    # Envoy Gateway installs Gateway API's experimental channel CRDs (the default of its CRD Helm
    # chart: `crds.gatewayAPI.channel: experimental`, gateway.envoyproxy.io/docs/install/gateway-crds-helm-api).
    # The translator decodes the input into Go structs whatever its apiVersion says, and many
    # cases keep the version of the release they were written for (BackendTLSPolicy v1alpha2,
    # which no v1.6.1 CRD serves): whether a cluster serves the version (PL705) is no verdict EG
    # writes, so it is not asked.
    return lint(
        LintRequest(
            paths=paths,
            report_policies=True,
            complete=True,
            # Envoy Gateway's own cases: the newest bundled release, and the experimental channel its installer ships.
            declared=Declared("v1.6.1", "the oracle", "experimental", "the oracle"),
            # The cases come from a commit of Envoy Gateway's main branch, newer than every bundled
            # release: its own policy CRDs (crds/, the same commit) describe the cluster they assume.
            crd_paths=(str(CRDS),),
            selection=Selection(ignore=("PL705",)),
            # Every case reads the same CRDs: with a parse cache, the first case parses them and
            # works out their rules' costs and verdicts, the others read them back.
            cache_dir=cache_dir,
        )
    )


def decidable_records(directory: Path) -> tuple[list[dict[str, Any]], list[tuple[dict[str, Any], str]]]:
    """The case's decidable records, and those left out because a cluster cannot hold their input."""
    expected = json.loads((directory / "expected.json").read_text(encoding="utf-8"))
    records, excluded = [], []
    for r in expected["records"]:
        if not r["decidable_offline"]:
            continue
        reason = NOT_IN_A_CLUSTER.get((directory.name, _key(r["kind"], r["namespace"], r["name"])))
        if reason is None:
            records.append(r)
        else:
            excluded.append((r, reason))
    return records, excluded


def compare_case(directory: Path, cache_dir: str | None = None) -> list[Comparison]:
    records, _ = decidable_records(directory)
    if not records:
        return []
    result = lint_case(directory, cache_dir)
    assert result.policy_reports is not None
    entries = {_key(p["object"]["kind"], p["object"]["namespace"], p["object"]["name"]): p for p in result.policy_reports}
    errors = _errors_by_object(result)
    parents = {}
    for obj in result.index.objects:
        if obj.kind == "ListenerSet" and isinstance(obj.data.get("spec"), dict):
            ref = obj.data["spec"].get("parentRef")
            if isinstance(ref, dict) and isinstance(ref.get("name"), str):
                parents[_key("ListenerSet", obj.namespace, obj.name)] = _key(
                    "Gateway", ref.get("namespace") or obj.namespace, ref["name"]
                )
    out = []
    for record in records:
        key = _key(record["kind"], record["namespace"], record["name"])
        if record["record"] == "policy":
            got, why = policy_verdict(entries.get(key), record, parents)
            if got in ACCEPTED_FAMILY and errors.get(key):
                got, why = "error-finding", "; ".join(f"{f.rule} {f.message}" for f in errors[key])
        else:
            found = sorted({_ROUTE_RULES[f.rule] for f in errors.get(key, []) if f.rule in _ROUTE_RULES}, key=_PRIORITY.index)
            got = found[0] if found else "accepted"
            why = "; ".join(f"{f.rule} {f.message}" for f in errors.get(key, [])) or "no error finding"
        out.append(Comparison(directory.name, record, record["verdict"], got, why))
    return out


def run(cases: Iterable[str] = (), cache_dir: str | None = None) -> Summary:
    names = list(cases) or sorted(p.name for p in ORACLE.iterdir() if p.is_dir())
    summary = Summary()
    for name in names:
        summary.comparisons.extend(compare_case(ORACLE / name, cache_dir))
        summary.excluded.extend((name, record, reason) for record, reason in decidable_records(ORACLE / name)[1])
    return summary


def report(summary: Summary, verbose: bool = False) -> str:
    lines = [f"Envoy Gateway oracle: {len(summary.comparisons)} decidable records in {summary.cases()} cases", ""]
    lines.append(f"{'EG verdict':<22} {'agree':>6} {'of':>5} {'recall':>7}")
    for verdict, (agreed, total) in summary.by_verdict().items():
        lines.append(f"{verdict:<22} {agreed:>6} {total:>5} {agreed / total:>7.1%}")
    lines += [
        "",
        f"agreement over records: {summary.record_agreement():.1%}",
        f"agreement per case (mean): {summary.case_agreement():.1%}",
    ]
    if summary.excluded:
        lines += ["", f"left out, input a cluster cannot hold as written: {len(summary.excluded)} records"]
        if verbose:
            lines += [f"  {case}: {r['kind']} {r['namespace']}/{r['name']}: {why}" for case, r, why in summary.excluded]
    misses = Counter((c.expected, c.got) for c in summary.comparisons if not c.agrees)
    if misses:
        lines += ["", "disagreements (EG -> policylint):"]
        lines += [f"  {expected} -> {got}: {n}" for (expected, got), n in misses.most_common()]
    if verbose:
        for c in summary.comparisons:
            if not c.agrees:
                r = c.record
                lines.append(
                    f"{c.case}: {r['record']} {r['kind']} {r['namespace']}/{r['name']} at {r['ancestor'] or '-'}:"
                    f" EG {c.expected} ({r['raw_reason']}: {r['raw_message'][:160]}); policylint {c.got} ({c.why[:200]})"
                )
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    verbose = "-v" in args
    summary = run([a for a in args if a != "-v"])
    print(report(summary, verbose))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
