"""Locating the data shipped with policylint: rule docs, profiles, kinds and schemas.

In a wheel they live in `policylint/_data/`; in a source checkout (editable
install, tests) they are the top-level `rules/` and `schemas/` directories.
"""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any

_PACKAGE = Path(__file__).resolve().parent


@functools.cache
def data_dir(name: str) -> Path:
    for candidate in (_PACKAGE / "_data" / name, _PACKAGE.parent / name):
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError(f"policylint data directory {name!r} is missing from this installation")


@functools.cache
def load_schema(name: str) -> dict[str, Any]:
    with open(data_dir("schemas") / name, encoding="utf-8") as fh:
        schema: dict[str, Any] = json.load(fh)
    return schema


def load_yaml_data(path: Path) -> Any:
    import yaml

    loader = yaml.CSafeLoader if getattr(yaml, "__with_libyaml__", False) else yaml.SafeLoader
    with open(path, encoding="utf-8") as fh:
        return yaml.load(fh, Loader=loader)
