"""Where the findings of each file are, kept between runs with the file's other kept parts.

A span (policylint.input.positions `Span`) is a function of a file's text and the request (the
document's line, the path in it): while the file's bytes are the same, so is every span asked of
it. A language server keeps them in memory across updates (`KeptSpans`). A run with a cache threw
them away, and the pre-commit hook's first run after a one-file change on a repository where the
change reaches every file (the shared corpus: a finding on 44% of the objects, in 2,711 of its
3,319 files) read again every file holding a finding and worked out its findings' spans, though
only one file changed: about a tenth of that run's CPU (docs/performance.md, "The positions of
findings in unchanged files, kept between runs").

Now a run with a cache keeps them in the entry kept per file (policylint.input.keptfiles), a part
of its own beside the file's admission verdicts and rule results, named by the file's content key
(its bytes under the loader's stamp), under the code's hash: a run asks for a file's spans the
first time it asks a position in it (`CachedSpans.of`), and writes the entries of the files whose
spans it added to (`CachedSpans.finish`). Nothing is believed: a part of another shape is a miss
(the spans are worked out, as without a cache), a file new to the cache is not looked for, and a
part under another stamp (other code) is not taken.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from policylint.input.positions import KeptSpans

if TYPE_CHECKING:
    from policylint.input.keptfiles import KeptFiles
    from policylint.input.positions import PathPart, Span

# Bump when the part's layout or meaning changes.
FORMAT = 1
# Its part of the entry kept per file.
PART = "spans"

Table = dict[tuple[int, tuple["PathPart", ...]], "Span"]


class CachedSpans(KeptSpans):
    """`KeptSpans` read from and written to the entries kept per file, one table per content key."""

    def __init__(self, store: KeptFiles, stamp: bytes) -> None:
        """`store`: the entries kept per file; `stamp`: the code's hash, so that a part other code
        wrote is not taken."""
        super().__init__()
        self._store = store
        store.own(PART, FORMAT.to_bytes(2, "big") + stamp, self._text)
        # Per content key: its table (what the resolver reads and adds to) and its size as read.
        self._tables: dict[str, tuple[Table, int]] = {}

    def of(self, file: str, content: str) -> Table:
        """The spans kept of the content `content` (the file's name does not decide a span)."""
        found = self._tables.get(content)
        if found is None:
            table = decode(self._store.take(content, PART))
            found = self._tables[content] = (table, len(table))
        return found[0]

    def finish(self) -> None:
        """Mark the entries of the files whose spans this run added to, for `KeptFiles.save`; a
        table is only ever added to (`PositionResolver.prefetch`), so a longer one holds more."""
        for content, (table, size) in self._tables.items():
            if len(table) > size:
                self._store.changed(content)

    def _text(self, where: str) -> Iterator[bytes] | None:
        found = self._tables.get(where)
        if not found or not found[0]:
            return None  # written back as read, if the entry held it and this run never asked
        # In the order the spans were read and answered, which the same run's requests decide: the
        # same bytes for the same run, without sorting what a run that fills the cache writes for
        # every file with a finding (tuples are written as JSON arrays).
        rows = [(line, parts, span) for (line, parts), span in found[0].items()]
        return iter((json.dumps(rows, separators=(",", ":")).encode("utf-8", "surrogateescape"),))


def decode(text: bytes | None) -> Table:
    """A part as `CachedSpans` writes it: [[document line, [path part, ...], [line, column, end
    line, end column]], ...]; nothing when it is anything else, so that the spans are worked out."""
    if not text:
        return {}
    try:
        rows = json.loads(text)
    except ValueError:
        return {}
    if type(rows) is not list:
        return {}
    table: Table = {}
    for row in rows:
        if not (type(row) is list and len(row) == 3):
            return {}
        line, parts, span = row
        if not (_int(line) and type(parts) is list and parts and type(span) is list and len(span) == 4):
            return {}
        if not all(type(part) is str or _int(part) for part in parts) or not all(_int(n) for n in span):
            return {}
        table[(line, tuple(parts))] = (span[0], span[1], span[2], span[3])
    return table


def _int(value: Any) -> bool:
    """A line, column or list index as written: an int, not a bool, not negative."""
    return type(value) is int and value >= 0
