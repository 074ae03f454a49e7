"""What `policylint --version` says besides the version: which YAML parser runs.

A module of its own, importing nothing but `os` and `importlib.util` when asked: `--version` is
the command pre-commit and CI call most often, and `policylint.resources` imports pathlib, json,
functools and typing, more than the rest of that command imports together.
"""

from __future__ import annotations


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
