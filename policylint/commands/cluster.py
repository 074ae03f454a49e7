"""The cluster part of `policylint config` and `check --show-config`: what the cluster runs,
declared or inferred from the input, each part with where it came from (policylint.k8s.cluster)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from policylint.commands import error

if TYPE_CHECKING:
    from policylint.config.effective import Effective


def describe(effective: Effective) -> str | None:
    """The description's lines, after the configuration's; None after saying why there is none
    (a usage error: a declared release or implementation that is not known)."""
    from policylint.commands.check import parse_gateway_api
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
