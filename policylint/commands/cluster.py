"""The cluster part of `policylint config` and `check --show-config`: what the cluster runs,
declared or inferred from the input, each part with where it came from (policylint.k8s.cluster)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from policylint.commands import error

if TYPE_CHECKING:
    from policylint.config.effective import Effective
    from policylint.k8s.cluster import Declared


def describe(effective: Effective) -> str | None:
    """The description's lines, after the configuration's; None after saying why there is none
    (a usage error: a declared release or implementation that is not known)."""
    from policylint.config.effective import CLUSTER_KEYS, run_settings
    from policylint.input.sources import SourceError
    from policylint.pipeline import LintRequest, cluster_of

    values = effective.values
    sources = {key: effective.sources[key] for key in CLUSTER_KEYS}
    declared = parse_gateway_api(values["channel"], values["gateway-api-version"], values["implementations"], sources)
    if declared is None:
        return None
    paths = tuple(values["paths"])
    header = "# the cluster, declared or inferred from " + (", ".join(paths) if paths else "no input (no paths given)")
    request = LintRequest(
        paths=paths,
        crd_paths=tuple(values["crd"]),
        namespace=values["namespace"],
        declared=declared,
        helm_templates=values["helm-templates"],
        walk=run_settings(effective).walk if effective.file is not None else None,
        follow_outside_links=values["follow-outside-links"],
    )
    try:
        cluster = cluster_of(request)
    except (SourceError, OSError) as exc:
        error(exc)
        return None
    return "\n".join([header, *cluster.lines()]) + "\n"


def parse_gateway_api(
    channel: str | None,
    version: str | None,
    implementations: Sequence[str] = (),
    sources: Mapping[str, str] | None = None,
) -> Declared | None:
    """What the run declares the cluster runs (policylint.k8s.cluster), each part with where it
    was declared (`sources`: configuration key -> `FILE:LINE`; default the command line); None
    after saying what is not known (a usage error)."""
    from policylint.k8s.cluster import Declared, bundled_release
    from policylint.k8s.schemas import CHANNELS, GATEWAY_API_VERSIONS

    sources = sources or {}
    if channel is not None and channel not in CHANNELS:
        error(f"unknown Gateway API channel {channel!r}: {' or '.join(CHANNELS)}")
        return None
    version_source = sources.get("gateway-api-version", "command line")
    if version is not None:
        bundled = bundled_release(version)
        if bundled is None:
            error(
                f"Gateway API {version} is not bundled (bundled: {', '.join(GATEWAY_API_VERSIONS)}); for another release,"
                " give its CRDs with --crd and leave --gateway-api-version out"
            )
            return None
        if bundled != version:
            version_source += f", linted as {bundled} (the bundled patch release of that minor release)"
            version = bundled
    known: set[str] = set()
    if implementations:  # only then: it reads every built-in profile
        from policylint.profiles.implementations import installers

        known = {i.name for i in installers()}
    for written in implementations:
        if written.partition("@")[0] not in known:
            error(f"unknown implementation {written!r}: one of {', '.join(sorted(known))}, optionally with @VERSION")
            return None
    return Declared(
        version,
        version_source,
        channel,
        sources.get("channel", "command line"),
        tuple(implementations),
        sources.get("implementations", "command line"),
    )
