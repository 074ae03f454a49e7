"""The run's memo of value shapes (`cel.shape`), over the maps and lists of its documents.

The loader makes the maps and lists of one content one object for the run
(policylint.input.sharing), so among the documents' values a map's or list's identity tells its
content from every other: the memo the admission stage keeps for the run (`Catalogue.shapes`)
gives each one a token of the object, made without reading its content, where a memo of plain
values works the content out (its keys, items and scalars, and theirs). The owner keeps the maps
and lists alive while their ids are keys (`Catalogue.pinned`). Equal content held by two objects
(data the loader did not make, or two loads) has two tokens: the memo tables keyed by them miss
where they could have hit, and answer nothing wrong, since a token stands for one object, whose
content is its own.
"""

from __future__ import annotations

from typing import Any


class SharedShapes(dict[int, Any]):
    """id of a map or list of the run's documents -> its shape, a token of the object
    (`cel.shape` makes it)."""

    __slots__ = ()
