"""Whether a file's shell (policylint.incremental.shells) is exactly what policylint writes: its
head, checked when it is read, and its rows, checked when first read. Anything else is not
believed (a miss, or the file's objects built from its data), never an error.
"""

from __future__ import annotations

import json
import json.scanner
from collections.abc import Callable
from datetime import datetime
from itertools import repeat
from typing import Any

# The JSON decoder's scanner, called without `json.loads`'s steps per call (the encoding told
# from the bytes, the whitespace matched around the value): the heads of 3,319 files are decoded
# per hook run, where those steps took a fifth of their decoding's time.
_SCAN: Callable[[str, int], tuple[Any, int]] = json.scanner.make_scanner(json.JSONDecoder())  # type: ignore[arg-type]


def json_value(raw: bytes) -> Any:
    """The value `raw` holds, if it is exactly one compact JSON value in ASCII, else None."""
    try:
        text = str(raw, "ascii")
        value, end = _SCAN(text, 0)
    except Exception:  # not ASCII, not JSON (StopIteration where no value starts)
        return None
    return value if end == len(text) else None


def head(decoded: dict[str, Any], rows: bytes) -> tuple[list[Any], int, list[Any], list[Any]] | None:
    """The loader's problems, the documents' count, the problems of building objects and the
    objects' names of a shell's head, if it is exactly of the shape `remember` writes, with rows."""
    issues, documents, built, names = (decoded.get(k) for k in ("issues", "documents", "built", "names"))
    if not (type(issues) is list and type(documents) is int and type(built) is list and type(names) is list):
        return None  # a file always loaded, or not an entry policylint.incremental.shells writes
    if not rows or documents < 0 or len(names) % 4 or not _names_ok(names):
        return None
    if issues and not all(_row(i, (str, str, int, int)) for i in issues):
        return None
    if built and not all(_row(b, (int, str, str, str)) and 0 <= b[0] < documents for b in built):
        return None
    return issues, documents, built, names


def _names_ok(names: list[Any]) -> bool:
    # Each object's group, kind and name strings, its metadata's namespace a string or null.
    return (
        _STRINGS.issuperset(map(type, names[0::4]))
        and _STRINGS.issuperset(map(type, names[1::4]))
        and _TEXTS.issuperset(map(type, names[2::4]))
        and _STRINGS.issuperset(map(type, names[3::4]))
    )


def rows(raw: bytes, names: list[Any], documents: int) -> tuple[list[list[int]], list[list[Any]]] | None:
    """The documents' positions and the objects' rows of a shell, if they are exactly of the
    shape `remember` writes, as many documents as its head says and the objects its head names,
    in its order."""
    decoded = json_value(raw)
    if type(decoded) is not list or len(decoded) != 2:  # the documents, the rows
        return None
    positions, rows = decoded
    if type(positions) is not list or len(positions) != documents:
        return None
    if positions and not (
        _LISTS.issuperset(map(type, positions)) and _DOCUMENTS.issuperset(map(tuple, map(map, repeat(type), positions)))
    ):
        return None
    if type(rows) is not list or 4 * len(rows) != len(names) or not all(_object_ok(o, documents) for o in rows):
        return None
    return (positions, rows) if [name for row in rows for name in row[3:7]] == names else None


def _row(value: Any, types: tuple[type, ...]) -> bool:
    return type(value) is list and len(value) == len(types) and all(type(v) is t for v, t in zip(value, types))


def _signatures(*fields: type | tuple[type, ...]) -> frozenset[tuple[type, ...]]:
    """Every tuple of types a row with these fields may have (a tuple: any of those types)."""
    out: list[tuple[type, ...]] = [()]
    for f in fields:
        choices = f if isinstance(f, tuple) else (f,)
        out = [(*row, c) for row in out for c in choices]
    return frozenset(out)


_TEXT = (str, type(None))
# An object's row (`_object_row`), checked as the types of its fields at once: the shells of a
# large repository hold tens of thousands of rows, read in every scoped run.
_OBJECT = _signatures(int, list, str, str, str, _TEXT, str, _TEXT, dict, dict, _TEXT, _TEXT, list, bool)
_REFERENCE = _signatures(_TEXT, str, bool, bool)
_STRINGS = frozenset({str})
_TEXTS = frozenset(_TEXT)
_PATH_PARTS = frozenset({str, int})
_LISTS = frozenset({list})
_DOCUMENTS = frozenset({(int,) * 5})  # a document's position: five integers


def _object_ok(row: Any, documents: int) -> bool:
    if type(row) is not list or tuple(map(type, row)) not in _OBJECT:
        return False
    document, prefix, labels, annotations, stamp, refs = row[0], row[1], row[8], row[9], row[10], row[12]
    # Each field's types as a set, with no Python call per value: ten thousand rows per run.
    # JSON keys are strings: a mapping of strings is one whose values are.
    return (
        0 <= document < documents
        and (not prefix or _PATH_PARTS.issuperset(map(type, prefix)))
        and (not labels or _STRINGS.issuperset(map(type, labels.values())))
        and (not annotations or _STRINGS.issuperset(map(type, annotations.values())))
        and (stamp is None or _timestamp(stamp))
        # Every reference a list (`map(type, r)` of a string would be its characters'), then the
        # types of each one's fields a reference's.
        and (not refs or (_LISTS.issuperset(map(type, refs)) and _REFERENCE.issuperset(map(tuple, map(map, repeat(type), refs)))))
    )


def _timestamp(value: Any) -> bool:
    if value is None:
        return True
    try:
        datetime.fromisoformat(value)
    except ValueError:
        return False
    return True
