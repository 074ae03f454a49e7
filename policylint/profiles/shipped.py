"""The built-in profiles (`builtin/*.yaml`) as every run reads them: their parsed data, kept in a
generated file beside them (`builtin.json`) with a hash of each YAML file it was made from.

Every run that resolves a policy reads the twelve profile files (~90 KB of YAML): parsing them was
~10 ms of CPU a run, as much as the rest of a one-file run's profile work, and the pre-commit hook
pays it on every commit (docs/performance.md, "The hook's own costs"). Decoding the same data as
JSON takes a fortieth of that, and hashing the YAML files to check it is what they say a fiftieth.
The YAML stays the source that is edited and reviewed; the JSON is written from it by
`python -m policylint.profiles.shipped` (`make profiles`), and `tests/profiles/test_shipped.py`
fails when the committed one is stale. A run whose YAML files are not those the JSON was made
from (a profile edited in a checkout, not regenerated yet) parses the YAML, as before: the JSON
only ever stands for the very bytes it was made from.
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path
from typing import Any

from policylint.resources import load_yaml_data

DIRECTORY = Path(__file__).with_name("builtin")
GENERATED = Path(__file__).with_name("builtin.json")
# Bump when the generated file's layout changes.
FORMAT = 1


def _digest(data: bytes) -> str:
    return hashlib.blake2b(data, digest_size=16).hexdigest()


def _sources() -> list[tuple[str, bytes]]:
    """Each YAML file's name and bytes, in name order."""
    return [(path.name, path.read_bytes()) for path in sorted(DIRECTORY.glob("*.yaml"))]


def documents() -> list[tuple[Path, Any]] | None:
    """Each built-in profile file's path and data, from the generated file when it was made from
    these very files; None when it was not (or is missing or unreadable): the YAML is parsed."""
    try:
        generated = json.loads(GENERATED.read_bytes())
        sources = _sources()
    except (OSError, ValueError):
        return None
    files = generated.get("files") if type(generated) is dict and generated.get("format") == FORMAT else None
    if type(files) is not list or len(files) != len(sources):
        return None
    out: list[tuple[Path, Any]] = []
    for (name, data), entry in zip(sources, files):
        if type(entry) is not list or len(entry) != 3 or entry[0] != name or entry[1] != _digest(data):
            return None
        out.append((DIRECTORY / name, entry[2]))
    return out


def generate() -> bytes:
    """The generated file's bytes: each YAML file's name, the hash of its bytes and its data."""
    files = []
    for name, data in _sources():
        parsed = load_yaml_data(DIRECTORY / name)
        _check_plain(parsed, name)
        files.append([name, _digest(data), parsed])
    text = json.dumps({"format": FORMAT, "files": files}, ensure_ascii=True, allow_nan=False, indent=None, separators=(",", ":"))
    return text.encode("ascii") + b"\n"


def _check_plain(value: Any, where: str) -> None:
    """Refuse what JSON would not give back as the YAML parser gave it: a key that is not a
    string, a date, a set, a non-finite float. Booleans, integers, floats, strings, null, maps
    and lists come back as they were."""
    cls = type(value)
    if cls is dict:
        for key, child in value.items():
            if type(key) is not str:
                raise ValueError(f"{where}: a key that is not a string: {key!r}")
            _check_plain(child, f"{where}.{key}")
    elif cls is list:
        for i, child in enumerate(value):
            _check_plain(child, f"{where}[{i}]")
    elif cls is float:
        if value != value or value in (float("inf"), float("-inf")):
            raise ValueError(f"{where}: a float JSON cannot hold: {value!r}")
    elif cls not in (str, int, bool, type(None)):
        raise ValueError(f"{where}: a value JSON cannot hold: {value!r} ({cls.__name__})")


def main() -> int:
    """Write the generated file; `--check`: exit 1 when the committed one is not what would be
    written."""
    wanted = generate()
    if sys.argv[1:] == ["--check"]:
        try:
            current = GENERATED.read_bytes()
        except OSError:
            current = b""
        if current != wanted:
            print(f"{GENERATED} is stale: run `python -m policylint.profiles.shipped`", file=sys.stderr)
            return 1
        return 0
    GENERATED.write_bytes(wanted)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
