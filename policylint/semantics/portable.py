"""The policies' target resolutions written as plain values, for another process of the same run.

With `--jobs`, the child forked once the index is built runs the rules that read it alone, and the
first of them (PL201, the costliest) resolves every policy's target references; the main process,
meanwhile building the admissions and the topology, then resolved them all again for the
simulation and the later rules (docs/performance.md, "The early child's resolutions handed back").
The child now resolves them first and writes them here, each as a tuple of plain values (`write`,
marshalled), and the main process takes them as its own (`read`): the objects, sections and
references they name are this process's instances, found by their place, so that a resolution
read back is the one this process would have worked out, identities included. Resolutions are a
function of the index and the profiles, which both processes hold alike (forked from one).

A resolution that names what has no place both processes share (an object outside the index, a
section not among its target's, a ReferenceGrant check other than the shared singletons: its grants
are compared by identity) is written as None, and this process works it out itself, as it does
every reference the child did not hand back.
"""

from __future__ import annotations

import marshal
from typing import TYPE_CHECKING

from policylint.semantics.grants import NOT_NEEDED, SAME_NAMESPACE, GrantCheck
from policylint.semantics.resolution import TargetResolution
from policylint.vocabulary import Accepted, Resolved

if TYPE_CHECKING:
    from collections.abc import Mapping

    from policylint.k8s.index import ProjectIndex
    from policylint.k8s.objects import K8sObject
    from policylint.profiles.policy import TargetRef
    from policylint.semantics.resolution import Resolution

# A resolution's fields, written in this order (`_entry`): tests/input/test_processes_stages.py
# checks that they are every field of `TargetResolution`, so that a field added there is written too.
FIELDS = ("ref", "status", "detail", "target", "section", "message", "namespace", "grant", "selector")
# The ReferenceGrant checks a resolution may carry by identity (the others hold grants, which
# the rules compare by identity: not written): their codes, in this order.
_GRANTS: tuple[GrantCheck | None, ...] = (None, SAME_NAMESPACE, NOT_NEEDED)

# One reference's resolution: status and step by name, the target's place in the index (-1:
# none), the section's place among the target's (-1: none), message, namespace, grant code,
# selector. None: not written (worked out by the reader).
Entry = tuple[str, str, int, int, str, str | None, int, int | None] | None


def write(resolution: Resolution) -> bytes:
    """Every policy's target references' resolutions, in the order of `policies()` and of each
    policy's references, resolved here first (`resolve_target`)."""
    index = resolution.index
    places = {obj: place for place, obj in enumerate(index.objects)}  # by identity: a K8sObject hashes so
    entries: list[Entry] = []
    for policy in resolution.policies():
        for ref in policy.refs:
            entries.append(_entry(resolution.resolve_target(policy, ref), ref, places, index))
    return marshal.dumps(entries)


def _entry(res: TargetResolution, ref: object, places: Mapping[K8sObject, int], index: ProjectIndex) -> Entry:
    if res.ref is not ref or not any(res.grant is grant for grant in _GRANTS):
        return None
    target = -1
    if res.target is not None:
        found = places.get(res.target)
        if found is None or index.objects[found] is not res.target:
            return None  # an object outside the index (a producer's, a built-in class)
        target = found
    section = -1
    if res.section is not None:
        assert res.target is not None  # a section is a target's
        section = next((k for k, s in enumerate(index.sections(res.target)) if s is res.section), -1)
        if section < 0:
            return None
    grant = next(code for code, check in enumerate(_GRANTS) if res.grant is check)
    return (res.status.name, res.detail.name, target, section, res.message, res.namespace, grant, res.selector)


def read(resolution: Resolution, data: bytes) -> int:
    """Take what `write` wrote in another process of this run as this process's resolutions
    (`Resolution.adopt`), and how many; nothing when it does not hold one entry per reference."""
    try:
        entries = marshal.loads(data)
    except (EOFError, ValueError, TypeError):
        return 0
    policies = resolution.policies()
    if not isinstance(entries, list) or len(entries) != sum(len(policy.refs) for policy in policies):
        return 0
    index = resolution.index
    taken = 0
    at = iter(entries)
    for policy in policies:
        for ref in policy.refs:
            found = _resolution(next(at), ref, index)
            if found is not None:
                resolution.adopt(policy, ref, found)
                taken += 1
    return taken


def _resolution(entry: object, ref: TargetRef, index: ProjectIndex) -> TargetResolution | None:
    """The resolution `entry` writes, with this process's reference, object and section; None for
    an entry not written, or one that is not what `_entry` writes (worked out by the reader)."""
    if not isinstance(entry, tuple) or len(entry) != len(FIELDS) - 1:  # None: not written
        return None
    try:
        status, detail, target_at, section_at, message, namespace, grant, selector = entry
        target = index.objects[target_at] if target_at >= 0 else None
        section = index.sections(target)[section_at] if target is not None and section_at >= 0 else None
        return TargetResolution(
            ref,
            Accepted[status],
            Resolved[detail],
            target=target,
            section=section,
            message=message,
            namespace=namespace,
            grant=_GRANTS[grant],
            selector=selector,
        )
    except (IndexError, KeyError, TypeError, ValueError):
        return None
