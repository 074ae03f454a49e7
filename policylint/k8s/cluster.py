"""What the target cluster runs: the Gateway API release and channel, and the implementations.

The schema rules (PL702-PL706) judge an object against the CRDs the cluster serves. A run knows
them from, in this order (docs/semantics.md#the-cluster-model):

1. the declaration: the configuration keys `gateway-api-version`, `channel` and
   `implementations`, or their flags;
2. the Gateway API CRDs in the input or given with `--crd`: their
   `gateway.networking.k8s.io/bundle-version` and `gateway.networking.k8s.io/channel`
   annotations, which every upstream CRD carries;
3. the implementations the cluster runs (declared, or shown by their CRDs in the input or by
   the `controllerName` of a GatewayClass in it) and the channel their installer ships by
   default (profile data, `gatewayAPI.channel` of an implementation);
4. otherwise nothing: the release or the channel is unknown, and a finding is an error only
   when every bundled release of the plausible channels refuses the object (`Cluster.releases`,
   `Cluster.channels`).

A vendor's policy kinds are judged against the release of that vendor the cluster runs: declared
as `implementations: [envoy-gateway@v1.8]`, else inferred from a CRD of that vendor in the input
whose schema is a bundled release's; otherwise unknown, and a finding is an error only when every
bundled release of the vendor refuses the object (`Cluster.vendor_release`).

Each part keeps where it came from (`Known.source`), which `--show-config` prints and the
findings cite.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from policylint.k8s.schemas import CHANNELS, GATEWAY_API_VERSIONS, release_key, vendor_releases
from policylint.values import frozen

if TYPE_CHECKING:
    from policylint.k8s.objects import K8sObject

BUNDLE_VERSION = "gateway.networking.k8s.io/bundle-version"
CHANNEL = "gateway.networking.k8s.io/channel"
GATEWAY_API_GROUPS = frozenset({"gateway.networking.k8s.io", "gateway.networking.x-k8s.io"})
UNKNOWN = "unknown"
# How a user declares the cluster, for the findings that cannot decide without it.
HOW_TO_DECLARE = "declare the cluster with `gateway-api-version` and `channel` in .policylint.yaml (or the flags)"


def how_to_declare_vendor(project: str) -> str:
    """How a user declares the release of a vendor the cluster runs."""
    return f"declare it with `implementations: [{project}@<release>]` in .policylint.yaml (or --implementation)"


@frozen
class Known:
    """One part of the cluster description and where it came from (`declared in FILE:LINE`,
    `inferred from ...`, `unknown`); `value` None: unknown."""

    value: str | None
    source: str = UNKNOWN


@frozen
class Installer:
    """What an implementation's installer puts into a cluster (profile data): the Gateway API
    channel its CRDs come from by default, and how the input shows the implementation runs."""

    name: str  # `envoy-gateway`, as `implementations` and `--implementation` write it
    title: str  # `Envoy Gateway`
    controller_names: tuple[str, ...] = ()
    groups: frozenset[str] = frozenset()  # the API groups of its own CRDs
    channel: str | None = None  # None: the profile does not say
    docs: str = ""
    # False: the installer leaves the Gateway API CRDs to the user, and `channel` is the one its
    # documentation has the user install; the user chose, so the channel is not inferred from it.
    installs: bool = True


@frozen
class Declared:
    """What the configuration or the command line says the cluster runs, with the sources
    (`FILE:LINE` or `command line`); None or empty: not declared."""

    gateway_api_version: str | None = None
    version_source: str = ""
    channel: str | None = None
    channel_source: str = ""
    implementations: tuple[str, ...] = ()  # `envoy-gateway` or `envoy-gateway@v1.5`
    implementations_source: str = ""


@frozen
class Cluster:
    release: Known
    channel: Known
    implementations: tuple[Known, ...] = ()
    # The release of each vendor whose CRDs are bundled (`envoy-gateway` -> `v1.8.3`), where it
    # is declared or inferred; a vendor not here is unknown (`vendor_release`).
    vendors: tuple[tuple[str, Known], ...] = ()

    def vendor_release(self, project: str) -> Known:
        """The bundled release of `project` the cluster runs, and where that came from."""
        return next((known for name, known in self.vendors if name == project), Known(None, UNKNOWN))

    @property
    def vendor_choice(self) -> tuple[tuple[str, str], ...]:
        """(project, release) of every vendor whose release is known, for the bundled schemas."""
        return tuple((name, known.value) for name, known in self.vendors if known.value is not None)

    def releases(self) -> tuple[str, ...]:
        """The bundled releases the cluster may run, newest first: the known one, else all."""
        if self.release.value is not None:
            return (self.release.value,)
        return tuple(reversed(GATEWAY_API_VERSIONS))

    def channels(self) -> tuple[str, ...]:
        """The channels the cluster may run, the standard one first: the known one, else both."""
        return (self.channel.value,) if self.channel.value is not None else CHANNELS

    @property
    def decided(self) -> bool:
        """Whether one release and one channel are known: a violation under them is an error."""
        return self.release.value is not None and self.channel.value is not None

    def lines(self) -> list[str]:
        """The description as `--show-config` prints it, each part with its source."""
        out = [
            f"cluster.gateway-api-version: {self.release.value or UNKNOWN}  # {self.release.source}",
            f"cluster.channel: {self.channel.value or UNKNOWN}  # {self.channel.source}",
        ]
        if not self.implementations:
            out.append(f"cluster.implementations: []  # {UNKNOWN}")
        for implementation in self.implementations:
            out.append(f"cluster.implementations[]: {implementation.value}  # {implementation.source}")
        for project, known in self.vendors:
            out.append(f"cluster.schemas.{project}: {known.value or UNKNOWN}  # {known.source}")
        return out


def bundled_release(version: str) -> str | None:
    """The bundled release standing for `version`: itself, else the bundled one of the same minor
    release (patch releases change no field); None when its minor release is not bundled."""
    if version in GATEWAY_API_VERSIONS:
        return version
    minor = release_key(version)[:2]
    return next((v for v in GATEWAY_API_VERSIONS if release_key(v)[:2] == minor), None)


def _where(obj: K8sObject) -> str:
    return f"{obj.kind} {obj.name} ({obj.doc.file}:{obj.doc.line})"


def infer(
    declared: Declared,
    crds: Iterable[K8sObject],
    gateway_classes: Iterable[K8sObject],
    installers: Sequence[Installer],
) -> Cluster:
    """The cluster description: the declaration, completed by what the input shows."""
    crds = [c for c in crds if isinstance(c.data, dict)]
    gateway_api_crds = [c for c in crds if _crd_group(c) in GATEWAY_API_GROUPS]
    implementations = _implementations(declared, crds, gateway_classes, installers)
    release = _release(declared, gateway_api_crds)
    channel = _channel(declared, gateway_api_crds, implementations, installers)
    vendors = _vendors(declared, crds)
    return Cluster(release, channel, tuple(k for k, _ in implementations), vendors)


def bundled_vendor_release(project: str, version: str) -> str | None:
    """The bundled release of `project` standing for `version` (`v1.8` or `v1.8.1` -> `v1.8.3`,
    the newest patch of that minor release bundled); None when that minor release is not bundled."""
    releases = vendor_releases().get(project, ())
    if version in releases:
        return version
    minor = release_key(version)[:2]
    return next((r for r in reversed(releases) if release_key(r)[:2] == minor), None)


def _vendors(declared: Declared, crds: Sequence[K8sObject]) -> tuple[tuple[str, Known], ...]:
    """The release of each vendor the declaration names with a version (`envoy-gateway@v1.8`),
    else the one a CRD of the vendor in the input shows: the bundled release whose schema of that
    kind and version is the CRD's own. A declared release that is not bundled is unknown, with the
    bundled ones named."""
    bundled = vendor_releases()
    out: dict[str, Known] = {}
    for written in declared.implementations:
        name, _, version = written.partition("@")
        if not version or name not in bundled or name in out:
            continue
        found = bundled_vendor_release(name, version)
        where = f"declared in {declared.implementations_source}: {written}"
        if found is None:
            out[name] = Known(None, f"unknown: {where}, whose CRDs are not bundled (bundled: {', '.join(bundled[name])})")
        else:
            stands = f", linted as {found} (the bundled patch release of that minor release)" if found != version else ""
            out[name] = Known(found, f"{where}{stands}")
    from policylint.k8s.schemas import releases_of_crd

    for crd in crds:
        group = _crd_group(crd)
        if group is None or group in GATEWAY_API_GROUPS:
            continue
        matched = releases_of_crd(crd.data)
        if matched is None or matched[0] in out:
            continue
        project, releases = matched
        if releases:
            # Releases that share the schema: the newest of them stands for the cluster's.
            out[project] = Known(
                releases[-1], f"inferred from {_where(crd)}: its schema is that of {project} {', '.join(releases)}"
            )
    return tuple(sorted(out.items()))


def _crd_group(crd: K8sObject) -> str | None:
    spec = crd.data.get("spec")
    group = spec.get("group") if isinstance(spec, dict) else None
    return group if isinstance(group, str) else None


def _annotated(crds: Sequence[K8sObject], annotation: str) -> tuple[dict[str, K8sObject], str]:
    """The values the CRDs give the annotation (value -> the first CRD giving it), and words
    naming the CRDs that show it."""
    found: dict[str, K8sObject] = {}
    for crd in crds:
        value = crd.annotations.get(annotation)
        if isinstance(value, str) and value:
            found.setdefault(value, crd)
    return found, ", ".join(f"{v} ({_where(c)})" for v, c in sorted(found.items()))


def _release(declared: Declared, crds: Sequence[K8sObject]) -> Known:
    if declared.gateway_api_version is not None:
        return Known(declared.gateway_api_version, f"declared in {declared.version_source}")
    found, shown = _annotated(crds, BUNDLE_VERSION)
    if len(found) > 1:
        return Known(None, f"unknown: the Gateway API CRDs in the input disagree: {shown}")
    if found:
        [(version, crd)] = found.items()
        bundled = bundled_release(version)
        if bundled is None:
            return Known(None, f"unknown: {_where(crd)} is of Gateway API {version}, whose schemas are not bundled")
        stands = f", linted as {bundled} (the bundled patch release of that minor release)" if bundled != version else ""
        return Known(bundled, f"inferred from {_where(crd)}: {BUNDLE_VERSION} {version}{stands}")
    return Known(None, UNKNOWN)


def _channel(
    declared: Declared,
    crds: Sequence[K8sObject],
    implementations: Sequence[tuple[Known, Installer | None]],
    installers: Sequence[Installer],
) -> Known:
    if declared.channel is not None:
        return Known(declared.channel, f"declared in {declared.channel_source}")
    found, shown = _annotated(crds, CHANNEL)
    found = {k: v for k, v in found.items() if k in CHANNELS}
    if len(found) > 1:
        return Known(None, f"unknown: the Gateway API CRDs in the input disagree: {shown}")
    if found:
        [(channel, crd)] = found.items()
        return Known(channel, f"inferred from {_where(crd)}: {CHANNEL} {channel}")
    shipped = {
        (i.channel, i.name): (known, i) for known, i in implementations if i is not None and i.channel is not None and i.installs
    }
    channels = {channel for channel, _ in shipped}
    if len(channels) == 1:
        (_, _), (known, installer) = next(iter(sorted(shipped.items())))
        return Known(
            installer.channel,
            f"inferred from {known.value} ({known.source}): its installer ships the {installer.channel} channel's CRDs"
            f" by default ({installer.docs})",
        )
    if len(channels) > 1:
        names = ", ".join(f"{name} ships {channel}" for channel, name in sorted(shipped))
        return Known(None, f"unknown: the implementations' installers differ ({names})")
    documented = sorted((i.name, i.channel, i.docs) for _, i in implementations if i is not None and i.channel is not None)
    if documented:
        # Istio's, NGINX Gateway Fabric's, Kuadrant's, GKE's and Linkerd's installers have the
        # user install the CRDs (their documentation names the standard channel); a user who
        # routes TCP installs the experimental one. Saying so helps; deciding would be a guess.
        said = "; ".join(
            f"{name}'s documentation installs the {channel} channel's CRDs ({docs})" for name, channel, docs in documented
        )
        return Known(None, f"unknown: the implementations' installers leave the Gateway API CRDs to the user ({said})")
    return Known(None, UNKNOWN)


def _implementations(
    declared: Declared,
    crds: Sequence[K8sObject],
    gateway_classes: Iterable[K8sObject],
    installers: Sequence[Installer],
) -> list[tuple[Known, Installer | None]]:
    by_name = {i.name: i for i in installers}
    out: dict[str, tuple[Known, Installer | None]] = {}
    for written in declared.implementations:
        name = written.partition("@")[0]
        out.setdefault(name, (Known(written, f"declared in {declared.implementations_source}"), by_name.get(name)))
    for crd in crds:
        group = _crd_group(crd)
        for installer in installers:
            if group in installer.groups and installer.name not in out:
                out[installer.name] = (Known(installer.name, f"inferred from {_where(crd)}"), installer)
    for gateway_class in gateway_classes:
        spec = gateway_class.data.get("spec") if isinstance(gateway_class.data, dict) else None
        controller = spec.get("controllerName") if isinstance(spec, dict) else None
        for installer in installers:
            if controller in installer.controller_names and installer.name not in out:
                source = f"inferred from {_where(gateway_class)}: controllerName {controller}"
                out[installer.name] = (Known(installer.name, source), installer)
    return list(out.values())
