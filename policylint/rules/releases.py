"""How sure a schema finding is: the severity policy of the schema rules (PL702-PL706) over the
Gateway API releases and channels the cluster may run (docs/semantics.md#the-cluster-model).

A violation of the bundled schemas is an error when the cluster's release and channel are known
(declared or inferred, policylint.k8s.cluster) and they refuse it. When either is unknown, it is
an error if every bundled release of the plausible channels refuses it, and otherwise a warning
naming the releases and channels that accept it and how to declare the cluster. A vendor's kind is
judged the same way over the vendor's bundled releases: an error when the vendor's release is
declared or inferred and refuses it, or when every bundled release of the vendor does; otherwise a
warning naming the releases that accept it and how to declare the one the cluster runs. A CRD in
the input or given with --crd is what the cluster serves: what it refuses is an error.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sized
from typing import Any

from policylint.findings import Severity
from policylint.k8s.cluster import HOW_TO_DECLARE, Cluster, how_to_declare_vendor
from policylint.k8s.dissent import Dissent
from policylint.k8s.objects import K8sObject
from policylint.k8s.schemas import GATEWAY_API_VERSIONS, release_key, vendor_releases
from policylint.k8s.verdicts import Admission
from policylint.project import Project


def judged(
    project: Project,
    obj: K8sObject,
    source: str | None,
    accepts: Callable[[Mapping[str, Any]], bool],
    what: str = "it",
) -> tuple[Severity | None, str]:
    """The severity of a finding that the schema from `source` makes (None: the rule's own, an
    error) and the words to end its message with; `accepts` says whether another bundled schema
    of the object's kind and version accepts `what` this one refuses (the field, or the object)."""
    if source is None:
        return None, ""
    catalogue = project.admissions().catalogue
    cluster = catalogue.cluster
    key = (obj.group, obj.kind, obj.version)
    vendor = catalogue.project(key)
    if vendor is not None:
        return _vendor_judged(catalogue.cluster, vendor, catalogue.accepting(key, accepts), what)
    if cluster.decided:
        return None, f"; the cluster runs {_runs(cluster)}"
    accepting = catalogue.accepting(key, accepts)
    if not accepting:
        return None, f"; no bundled release of {_plausible(cluster)} accepts {what}"
    return Severity.WARNING, f"; {accepted_by(accepting)} accept {what}: if the cluster runs it, {HOW_TO_DECLARE}"


def disputed(project: Project, obj: K8sObject, found: Dissent) -> tuple[Severity, str]:
    """The severity and closing words of a finding that a plausible schema other than the first
    makes (policylint.k8s.dissent): a warning naming the releases that refuse the object and those that
    accept it, and how to declare the cluster."""
    catalogue = project.admissions().catalogue
    vendor = catalogue.project((obj.group, obj.kind, obj.version))
    if vendor is not None:
        refusing = sorted({r for r, _ in found.refusing}, key=release_key)
        accepting = sorted({r for r, _ in found.accepting}, key=release_key)
        return (
            Severity.WARNING,
            f"; {vendor} {', '.join(refusing)} {_verb(refusing, 'refuses', 'refuse')} the object and"
            f" {', '.join(accepting)} {_verb(accepting, 'accepts', 'accept')} it: if the cluster runs"
            f" {'it' if len(refusing) == 1 else 'one of them'}, {how_to_declare_vendor(vendor)}",
        )
    return (
        Severity.WARNING,
        f"; {accepted_by(list(found.refusing))} {_verb(found.refusing, 'refuses', 'refuse')} the object and"
        f" {accepted_by(list(found.accepting))[len('Gateway API ') :]} {_verb(found.accepting, 'accepts', 'accept')} it:"
        f" if the cluster runs one that refuses it, {HOW_TO_DECLARE}",
    )


def dissent_origin(found: Dissent | None, verdict: Admission) -> str:
    """Where the schema of a finding comes from, in words: a dissenting schema of Gateway API
    names its channel, which the first plausible one need not share."""
    origin = verdict.origin()
    if found is None or not (verdict.source or "").startswith("gateway-api "):
        return origin
    return f"{origin}, {found.channel} channel"


def _verb(items: Sized, one: str, many: str) -> str:
    return one if len(items) == 1 else many


def _vendor_judged(cluster: Cluster, vendor: str, accepting: list[tuple[str, str]], what: str) -> tuple[Severity | None, str]:
    known = cluster.vendor_release(vendor)
    if known.value is not None:
        return None, f"; the cluster runs {vendor} {known.value} ({known.source})"
    bundled = vendor_releases()[vendor]
    newer = f"; if the cluster runs a release newer than {vendor} {bundled[-1]}, lint with its CRDs (--crd)"
    if not accepting:
        span = bundled[0] if len(bundled) == 1 else f"{bundled[0]} to {bundled[-1]}"
        return None, f"; no bundled release of {vendor} ({span}) accepts {what}{newer}"
    releases = sorted({release for release, _ in accepting}, key=release_key)
    return (
        Severity.WARNING,
        f"; {vendor} {', '.join(releases)} {'accepts' if len(releases) == 1 else 'accept'} {what}: if the cluster runs"
        f" {'it' if len(releases) == 1 else 'one of them'}, {how_to_declare_vendor(vendor)}",
    )


def unserved(cluster: Cluster) -> str:
    """The words that end a finding about a version no bundled schema the cluster may run serves
    (PL705)."""
    if cluster.decided:
        return f"; the cluster runs {_runs(cluster)}"
    return f"; no bundled release of {_plausible(cluster)} serves it"


def _runs(cluster: Cluster) -> str:
    return (
        f"Gateway API {cluster.release.value} ({cluster.release.source}), {cluster.channel.value} channel"
        f" ({cluster.channel.source})"
    )


def _plausible(cluster: Cluster) -> str:
    releases = cluster.releases()
    release = releases[0] if len(releases) == 1 else f"Gateway API {GATEWAY_API_VERSIONS[0]} to {GATEWAY_API_VERSIONS[-1]}"
    channels = cluster.channels()
    channel = f"the {channels[0]} channel" if len(channels) == 1 else "either channel"
    if len(releases) == 1:
        release = f"Gateway API {release}"
    return f"{release} in {channel}"


def accepted_by(pairs: list[tuple[str, str]]) -> str:
    """The (release, channel) pairs in words: `Gateway API v1.4.1 to v1.6.1's experimental
    channel and v1.6.1's standard channel`."""
    by_channel: dict[str, list[str]] = {}
    for release, channel in pairs:
        by_channel.setdefault(channel, []).append(release)
    parts = []
    for channel in sorted(by_channel, key=lambda c: c != "standard"):
        releases = sorted(by_channel[channel], key=release_key)
        parts.append(f"{_span(releases)}'s {channel} channel")
    return "Gateway API " + " and ".join(parts)


def _span(releases: list[str]) -> str:
    """Bundled releases in words: one, a run of consecutive bundled ones as `A to B`, or a list."""
    if len(releases) == 1:
        return releases[0]
    positions = [GATEWAY_API_VERSIONS.index(r) for r in releases if r in GATEWAY_API_VERSIONS]
    if len(positions) == len(releases) and positions == list(range(positions[0], positions[0] + len(positions))):
        return f"{releases[0]} to {releases[-1]}"
    return ", ".join(releases)
