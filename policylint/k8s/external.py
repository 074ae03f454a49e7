"""Objects that live outside the input: `--external KIND[/NAMESPACE[/NAME]]`.

README "Partial repositories"; the decision and its reason: docs/semantics.md#partial-repositories.

Many repositories hold one team's slice of a cluster: the GatewayClass, the
shared Gateway or the ReferenceGrants of another namespace are applied from
elsewhere. A reference to an object matched by an external pattern is not an
error. Patterns are shell globs; the kind matches case-insensitively
(`gatewayclass/*`, as acceptance scenario S16 writes it) and may carry its group
as `Kind.group`. For a cluster-scoped kind the second segment is the name
(`GatewayClass/eg`).
"""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable

from policylint.values import frozen


class ExternalPatternError(ValueError):
    """A pattern that cannot be parsed (exit code 2)."""


@frozen
class ExternalPattern:
    text: str
    kind: str  # lowercase glob
    group: str | None  # None: any group
    namespace: str
    name: str

    @classmethod
    def parse(cls, text: str) -> ExternalPattern:
        parts = text.strip().split("/")
        if not parts[0] or len(parts) > 3 or any(p == "" for p in parts):
            raise ExternalPatternError(
                f"--external {text!r}: expected KIND[/NAMESPACE[/NAME]], e.g. GatewayClass/* or Gateway/infra/*"
            )
        kind, _, group = parts[0].partition(".")
        namespace = parts[1] if len(parts) > 1 else "*"
        name = parts[2] if len(parts) > 2 else "*"
        return cls(text, kind.lower(), group or None, namespace, name)

    def takes_kind(self, group: str, kind: str) -> bool:
        """Whether the pattern's kind (and group, when it names one) is this kind's."""
        return fnmatch.fnmatchcase(kind.lower(), self.kind) and (self.group is None or fnmatch.fnmatchcase(group, self.group))

    def matches(self, group: str, kind: str, namespace: str | None, name: str) -> bool:
        if not self.takes_kind(group, kind):
            return False
        if namespace is None:
            # Cluster-scoped: `Kind/NAME`, or `Kind/*/NAME`.
            wanted = self.name if self.text.count("/") == 2 else self.namespace
            return fnmatch.fnmatchcase(name, wanted)
        return fnmatch.fnmatchcase(namespace, self.namespace) and fnmatch.fnmatchcase(name, self.name)


@frozen
class ExternalObjects:
    patterns: tuple[ExternalPattern, ...] = ()

    @classmethod
    def parse(cls, texts: Iterable[str]) -> ExternalObjects:
        return cls(tuple(ExternalPattern.parse(t) for t in texts))

    def __bool__(self) -> bool:
        return bool(self.patterns)

    def match(self, group: str, kind: str, namespace: str | None, name: str) -> ExternalPattern | None:
        for pattern in self.patterns:
            if pattern.matches(group, kind, namespace, name):
                return pattern
        return None

    def declares_kind(self, group: str, kind: str) -> bool:
        """Some object of this kind, anywhere, may be external (`HTTPRoute/platform/*`)."""
        return any(p.takes_kind(group, kind) for p in self.patterns)

    def covers_namespace(self, group: str, kind: str, namespace: str) -> bool:
        """Some object of this kind in `namespace` may be external (`ReferenceGrant/team-b/*`)."""
        return any(p.takes_kind(group, kind) and fnmatch.fnmatchcase(namespace, p.namespace) for p in self.patterns)


def external_hint(kind: str, namespace: str | None, name: str) -> str:
    where = f"{kind}/{namespace}/{name}" if namespace is not None else f"{kind}/{name}"
    return f"if it is defined outside this repository, declare it with --external {where}"
