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


def yaml_parser() -> str:
    """Which YAML parser runs, told without importing PyYAML: its package holds the libyaml
    extension (`_yaml*.so` / `.pyd`) or not (PyYAML then parses in pure Python, slower)."""
    import importlib.util
    import os

    spec = importlib.util.find_spec("yaml")  # a top-level package: found, not imported
    for directory in (spec.submodule_search_locations or []) if spec is not None else []:
        try:
            names = os.listdir(directory)
        except OSError:
            continue
        if any(n.startswith("_yaml") and n.endswith((".so", ".pyd")) for n in names):
            return "YAML parser: libyaml"
    return "YAML parser: pure Python, without libyaml"
