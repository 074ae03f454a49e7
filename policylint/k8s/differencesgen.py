"""Writes the differences of every pair of bundled schemas of one kind
(`policylint/k8s/schema_differences.json`, read by policylint.k8s.differences): `make
differences`, or `python -m policylint.k8s.differencesgen [--check]`.

What differs between two bundled schemas is a fact of the bundled table alone: which nodes they
share, what each checks and which CEL rules each holds. A run that does not know the cluster's
release works it out for each kind it asks the other plausible schemas of (policylint.k8s.dissent),
compiling the other releases' CEL rules to compare what they read (`differences._rules_alike`);
written here once, with the sha256 of the table it was worked out from, a run reads it instead.

The file holds every `Difference` of the pairs as a row, children before their parents: the
first's and the other's node by their number in the table (null: none), whether the other checks
the value itself (`Difference.local`, which the reader makes again from the other's node), whether
its CEL rules are evaluated again, the first's node where `Difference.same` is it, whether either
has alternatives, the fields with something below (name -> row; the others named by either node
are read back as None), the additional fields' row and the items' row. `pairs` gives each ordered
pair of distinct roots of one (group, kind, version) the row of its difference (null: none).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from collections.abc import Sequence
from typing import Any

from policylint.identity import IdentityMap
from policylint.k8s.differences import DATA, _child, _difference, _route
from policylint.k8s.schemas import BUILT, _entries, _table


def generate() -> str:
    """The data file's text."""
    built, roots = _table()
    blob = BUILT[-1][1]
    numbers: IdentityMap[Any, int] = IdentityMap()
    for at, node in enumerate(built):
        numbers[node] = at
    rows: list[list[Any]] = []
    written: dict[tuple[int | None, int | None], int] = {}  # by the pair's nodes' numbers

    def number(node: Any) -> int | None:
        return None if node is None else numbers[node]

    def row(first: Any, other: Any) -> int | None:
        found = _difference(first, other)
        if found is None:
            return None
        key = (number(first), number(other))
        if key in written:
            return written[key]
        names = sorted({*((first or {}).get("properties") or {}), *((other or {}).get("properties") or {})})
        below = {name: row(_route(first, name), _route(other, name)) for name in names}
        extra = row(_child(first, "additionalProperties"), _child(other, "additionalProperties"))
        items = row(_child(first, "items"), _child(other, "items"))
        rows.append(
            [
                number(first),
                number(other),
                int(found.local is not None),
                int(found.rules),
                number(found.same),
                int(found.combined),
                {name: at for name, at in below.items() if at is not None},
                extra,
                items,
            ]
        )
        written[key] = len(rows) - 1
        return written[key]

    kinds: dict[tuple[str, str, str], set[int]] = {}
    for entry in _entries():
        kinds.setdefault((entry["group"], entry["kind"], entry["version"]), set()).add(roots[entry["schema"]])
    pairs = [
        [first, other, row(built[first], built[other])]
        for key in sorted(kinds)
        for first in sorted(kinds[key])
        for other in sorted(kinds[key])
        if first != other
    ]
    lines = [
        "{",
        f'"table": {json.dumps(hashlib.sha256(blob).hexdigest())},',
        '"differences": [',
        ",\n".join(json.dumps(r, separators=(",", ":"), sort_keys=True) for r in rows),
        "],",
        '"pairs": [',
        ",\n".join(json.dumps(p, separators=(",", ":")) for p in pairs),
        "]",
        "}",
    ]
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="fail if the committed file is not what this writes")
    args = parser.parse_args(argv)
    text = generate()
    if args.check:
        if not DATA.exists() or DATA.read_text(encoding="utf-8") != text:
            print(f"{DATA.name} is not what `python -m policylint.k8s.differencesgen` writes", file=sys.stderr)
            return 1
        return 0
    DATA.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
