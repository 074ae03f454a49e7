"""PL0xx: problems with the input itself. Found while loading; never a traceback."""

from __future__ import annotations

from collections.abc import Iterable

from policylint.findings import Issue, Related, Severity
from policylint.project import Project
from policylint.rules.base import InputRule, Rule


class YamlSyntaxError(InputRule):
    """A document is not valid YAML; the rest of the file is parsed from the next `---`."""

    id = "PL001"
    name = "yaml-syntax-error"
    severity = Severity.ERROR


class DuplicateMappingKey(InputRule):
    """A mapping defines the same key twice."""

    id = "PL002"
    name = "duplicate-mapping-key"
    severity = Severity.ERROR


class NotAKubernetesObject(InputRule):
    """A document has no apiVersion or kind, so it is not a Kubernetes object."""

    id = "PL003"
    name = "not-a-kubernetes-object"
    severity = Severity.INFO


class UnrenderedTemplate(InputRule):
    """A file contains template markers (`{{ ... }}`): a chart or template, not a manifest."""

    id = "PL004"
    name = "unrendered-template"
    severity = Severity.ERROR


class DuplicateObject(Rule):
    """The same object (group, kind, namespace, name) is defined more than once."""

    id = "PL005"
    name = "duplicate-object"
    severity = Severity.ERROR

    def check(self, project: Project) -> Iterable[Issue]:
        for group in project.index.duplicate_groups():
            ordered = sorted(group, key=lambda o: o.sort_key())
            first = ordered[0]
            for later in ordered[1:]:
                related = [Related("first definition", object=first, path="metadata.name")]
                if later.data == first.data:
                    # Applying the same content twice changes nothing: redundant, not wrong.
                    message = f"{later.key} is defined again with identical content (first definition at {first.doc.file}:{first.doc.line})"
                    yield self.issue(later, "metadata.name", message, related=related, severity=Severity.INFO)
                    continue
                yield self.issue(
                    later,
                    "metadata.name",
                    f"{later.key} is defined again (first definition at {first.doc.file}:{first.doc.line});"
                    " the later one silently replaces the earlier when applied, and policylint checks that one",
                    related=related,
                )


class UndecodableFile(InputRule):
    """A file is binary or not valid UTF-8 (or UTF-16/32 with a byte order mark)."""

    id = "PL006"
    name = "undecodable-file"
    severity = Severity.ERROR


class InputResourceLimit(InputRule):
    """A file or document exceeds a safety limit: size, nesting, nodes, documents, alias expansion."""

    id = "PL007"
    name = "input-resource-limit"
    severity = Severity.ERROR


class UnreadableFile(InputRule):
    """An input cannot or must not be read (with --fix, written): permissions, dangling or outside symlinks, FIFOs, devices, unlistable directories."""

    id = "PL008"
    name = "unreadable-file"
    severity = Severity.ERROR


class MalformedMetadata(InputRule):
    """`metadata` has the wrong shape: missing name, or fields of the wrong type."""

    id = "PL009"
    name = "malformed-metadata"
    severity = Severity.ERROR


RULES: list[type[Rule]] = [
    YamlSyntaxError,
    DuplicateMappingKey,
    NotAKubernetesObject,
    UnrenderedTemplate,
    DuplicateObject,
    UndecodableFile,
    InputResourceLimit,
    UnreadableFile,
    MalformedMetadata,
]
