"""The loader's results: documents, where each lives, and the issues of a file (PL001-PL008)."""

from __future__ import annotations

from dataclasses import field
from typing import Any

from policylint.findings import Issue, Location
from policylint.input.kept import Deflated
from policylint.values import frozen, record

YAML_SYNTAX_ERROR = "PL001"
DUPLICATE_KEY = "PL002"
NOT_A_MANIFEST = "PL003"
TEMPLATE_MARKERS = "PL004"
UNDECODABLE_FILE = "PL006"
RESOURCE_LIMIT = "PL007"
UNREADABLE_FILE = "PL008"

SHARED_STRING_MAX = 64
# The strings and integers the files of one run share: one object each (a port, `apiVersion`).
# One table for both: a str never equals an int, and bools (equal to 0 and 1) are not kept.
Shared = dict[Any, Any]


@frozen
class DocumentRef:
    """Where a document lives, enough to re-compose it for positions.

    `chunk_start` is the character offset where parsing (re)started after a
    syntax error, `line_offset` the line number of that offset, and
    `doc_in_chunk` the document's number counted from there.
    """

    file: str
    chunk_start: int
    line_offset: int
    doc_in_chunk: int
    line: int
    column: int


@frozen
class Document:
    ref: DocumentRef
    data: Any


@record(slots=True)
class FileResult:
    documents: list[Document]
    issues: list[Issue]
    text: str | None = None
    # The bytes this result was parsed from (policylint.input.parallel keeps them, deflated in a
    # large run: policylint.input.kept): positions of findings are resolved in what was parsed,
    # even if the file changes on disk meanwhile.
    data: bytes | Deflated | None = field(default=None, compare=False, repr=False)
    # The parse cache's key of those bytes (None: no cache, or stdin): it names the file's
    # content, for what is kept about its objects (policylint.input.verdictstore.VerdictStore).
    key: str | None = field(default=None, compare=False, repr=False)


def located_issue(rule: str, file: str, line: int, column: int, message: str) -> Issue:
    return Issue(rule_id=rule, message=message, location=Location(file, line, column))
