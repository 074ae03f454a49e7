"""A cache entry's JSON made in parts, for `ParseCache.put` to write as they come.

The entries that keep what a run worked out per object (the admission verdicts,
policylint.input.verdictstore.VerdictStore; the per-object rules' results,
policylint.incremental.rulecache; each a part of the entry kept per file,
policylint.input.keptfiles) are written at the end of the rules stage, where a run's
memory peaks, and are tens of MB at 100,000 objects. `json.dumps` holds every piece of the text
and then the text itself, and `.encode` a copy of it: a run that filled the cache peaked there
(docs/performance.md, "Memory at 100,000 objects on the shared corpus"). Here the members of the
one large map are encoded a batch at a time, so that no more than a batch's text is held beside
what the run keeps anyway; the bytes are those of `json.dumps` with compact separators, so an
entry is the same whichever way it was written, and the same run writes the same bytes.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from typing import Any

# The members encoded at once. The encoder holds every piece of a batch's text as a string of
# its own before joining them (about 1.4 KB for an object's results of seven rules): about 1.5 MB
# at most, against tens of MB for the whole map.
BATCH = 1024

# What `json.dumps(value, separators=(",", ":"))` writes (ASCII, non-finite floats kept), without
# the check for cycles: an entry's values are plain data the run built, never cyclic.
_ENCODER = json.JSONEncoder(ensure_ascii=True, allow_nan=True, check_circular=False, separators=(",", ":"))


def map_parts(head: str, members: Iterable[tuple[str, Any]], tail: str, batch: int | None = None) -> Iterator[bytes]:
    """The ASCII bytes of `head + json.dumps(dict(members), separators=(",", ":")) + tail`, in
    parts: `head`, then the members `batch` (default `BATCH`) at a time, then `tail`. `members`
    must not repeat a key (a map's items); raises ValueError where `json.dumps` raises for data
    JSON cannot hold."""
    batch = BATCH if batch is None else batch
    yield (head + "{").encode("ascii")
    chunk: dict[str, Any] = {}
    first = True
    for key, value in members:
        chunk[key] = value
        if len(chunk) >= batch:
            yield _members(chunk, first)
            chunk, first = {}, False
    if chunk:
        yield _members(chunk, first)
    yield ("}" + tail).encode("ascii")


def _members(chunk: dict[str, Any], first: bool) -> bytes:
    try:
        text = _ENCODER.encode(chunk)
    except (TypeError, OverflowError, RecursionError) as exc:
        raise ValueError(f"cannot encode a cache entry: {exc}") from exc
    # `{...}` without its braces, after a comma unless it opens the map.
    return (text[1:-1] if first else "," + text[1:-1]).encode("ascii")


def read_map(text: bytes | None) -> dict[str, Any]:
    """A map these parts wrote (`map_parts("", members, "")`: a part of the entry kept per file,
    policylint.input.keptfiles), read back; empty when there is none or it is not a map (never
    believed: each caller checks every key and value it takes)."""
    if text is None:
        return {}
    try:
        found = json.loads(text)
    except Exception:
        return {}
    return found if type(found) is dict else {}
