"""What each policy's target references resolved to, kept between the runs of one long-lived
process with what resolving them read, and handed on while every read answers the same.

A language server analyses, after each edit, the part of the workspace the edited file reaches
(policylint.semantics.components), whose policies are mostly those of files the edit left alone:
the same `Policy` instances (`Resolution.adopt_policies`). Working their references out again was
a quarter of an update's simulation, which attaches each policy to its targets
(docs/performance.md#the-language-server); the rules read the same answers after it.

A reference's resolution (`Resolution._resolve`) is a function of its policy (the object and its
kind's profile: one `Policy` instance), of what the run is (`context`: the code, the settings that
shape the findings, `--external`, `--complete` and the synthetic rule names among them, the CRDs
and the cluster; the key the topology keeps its results under, policylint.semantics.topology.kept)
and of what it reads of the project beyond them, which `Resolution._note` records while it runs,
each with its answer:

* `lookup`: an object looked up by key (the target; the source a kind is created from), or that
  there was none, compared by identity: an edited file's objects are new instances, so a target
  whose listener was renamed is looked up, and its sections read, again;
* `namespace`: the Namespace whose labels decide whether a target is bound (`_unbound`, profile
  `boundBy`), by identity: its labels are its own;
* `scoped`: whether the run's kinds say a kind is cluster-scoped (where the target is looked up);
* `sections`: the named sections the run's kinds give a kind; with the target the same instance,
  its sections, and whether any is malformed, are the same (functions of the object and its kind's
  sections, policylint.k8s.index);
* `builtin`: the controller that serves a GatewayClass name without an object in the input;
* `made`: what makes an object in the cluster (an object of the input through a producer), in
  the words the resolution's message gives;
* `virtual`: whether a kind is a virtual one (GEP-713);
* `grant`: a ReferenceGrant check of a reference into another namespace, made again on every
  reuse: the check is both a read (its answer must mean the same, `grant_meaning`: the same
  grants' objects permitting, the same near misses) and what records which grant entries were
  used, which PL404 (reference-grant-unused) reads. A resolution whose check is this run's is
  handed on as a copy holding it.

What a policy's label selectors select is not kept: it reads every object of the selected kinds
and the labels of their Namespaces, so checking it costs what working it out does.

Each run keeps the resolutions it asked for; the next run may take those only.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any, cast

from policylint.semantics.grants import grant_meaning
from policylint.values import frozen

if TYPE_CHECKING:
    from policylint.k8s.objects import K8sObject
    from policylint.profiles.policy import Policy, TargetRef
    from policylint.semantics.grants import Reference
    from policylint.semantics.resolution import Resolution, TargetResolution

# One read recorded (`Resolution._note`): its kind, what was asked, then the answer.
Read = tuple[object, ...]


@frozen(eq=False)
class Kept:
    """One reference's resolution, the policy it was worked out for and the reads that decided it."""

    policy: Policy
    value: TargetResolution
    reads: tuple[Read, ...]


class KeptResolution:
    """The resolutions the last run of this process asked for, under that run's context."""

    def __init__(self) -> None:
        self._context: bytes | None = None
        self._last: dict[tuple[K8sObject, str], Kept] = {}
        self._next: dict[tuple[K8sObject, str], Kept] = {}
        # Whether a read answers as recorded, asked once per run: most are shared (every policy of
        # a namespace asks whether its target kinds are cluster-scoped and what their sections are).
        self._asked: dict[Read, bool] = {}
        # What the run did, for the tests and the benchmarks: resolutions handed on, worked out
        # (of which `refused`: kept, but a read answered otherwise).
        self.reused = 0
        self.resolved = 0
        self.refused = 0

    def begin(self, context: bytes | None) -> KeptResolution | None:
        """Start a run in `context` (None: nothing can be kept): what it may reuse, or None."""
        keep = context is not None and context == self._context
        self._last, self._next = (self._next if keep else {}), {}
        self._asked = {}
        self._context = context
        self.reused = self.resolved = self.refused = 0
        return self if context is not None else None

    def resolve(self, resolution: Resolution, policy: Policy, ref: TargetRef) -> TargetResolution:
        """`resolution`'s answer for `ref` of `policy`: the last run's while every read it made
        answers the same, else worked out with its reads recorded, and kept for the next run."""
        key = (policy.obj, ref.path)
        before = self._last.get(key)
        if before is not None and before.policy is policy:
            value = self._replay(resolution, before)
            if value is not None:
                self.reused += 1
                self._next[key] = before if value is before.value else Kept(policy, value, before.reads)
                return value
            self.refused += 1
        value, reads = resolution.recorded(policy, ref)
        self.resolved += 1
        self._next[key] = Kept(policy, value, reads)
        return value

    def _replay(self, resolution: Resolution, kept: Kept) -> TargetResolution | None:
        """The kept value if every read answers as it did (with this run's grant check), else None."""
        value = kept.value
        for read in kept.reads:
            if read[0] == "grant":
                check = resolution.grants().check(cast("Reference", read[1]))
                if check is value.grant:
                    continue
                if grant_meaning(check) != read[2]:
                    return None
                if value.grant is not None:  # a target not found carries no check
                    value = dataclasses.replace(value, grant=check)
                continue
            found = self._asked.get(read)
            if found is None:
                found = self._asked[read] = _answers_alike(resolution, read)
            if not found:
                return None
        return value


def _answers_alike(resolution: Resolution, read: Read) -> bool:
    """Whether asking `read` again gives the answer recorded (`Resolution._note`)."""
    kind, asked, answer = read[0], cast("tuple[Any, ...]", read[1:-1]), read[-1]
    if kind == "lookup":
        return resolution.index.get(*asked) is answer
    if kind == "namespace":
        return resolution.index.lookup("", "Namespace", None, *asked) is answer
    if kind == "scoped":
        return resolution.index.kinds.is_cluster_scoped(*asked) == answer
    if kind == "sections":
        return resolution.index.kinds.sections(*asked) == answer
    if kind == "virtual":
        return resolution.is_virtual_kind(*asked) == answer
    if kind == "made":
        made = resolution.producers().made(*asked)
        return (made.describe() if made is not None else None) == answer
    if kind == "builtin":
        return bool(resolution.builtin_classes().get(*asked) == answer)
    return False
