"""The configuration file: `.policylint.yaml` or `[tool.policylint]` in `pyproject.toml`.

This module only finds the file, cheaply: a run without a configuration file imports neither
pydantic nor the models (tests/k8s/test_startup.py). `policylint.config.load` reads and validates
one, `policylint.config.model` declares its keys, `policylint.config.overrides` applies the
per-rule severities and per-file settings to the findings. README "Configuration" documents
the keys.

Discovery, as ruff and yamllint do it: from the working directory upward, the first directory
holding `.policylint.yaml`, `.policylint.yml` or a `pyproject.toml` with a `[tool.policylint]`
table wins (in that order within one directory); the search stops at the repository root
(the first directory holding `.git`), so that a checkout never picks up a file from the
directory it was cloned into. `--config PATH` names the file instead; `--isolated` reads none.

A file found this way is part of the repository under review: it is read only if it resolves
inside that repository (a `.policylint.yaml` symlink to `/proc/self/environ` is refused, not
read), as a regular file of at most `MAX_CONFIG_BYTES` (policylint.input.named). A
`.policylint.yaml` that is there but cannot be read so is found all the same, so that loading
it says what is wrong rather than a configuration further up being used instead.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from policylint.input.named import MAX_CONFIG_BYTES, NamedFileError, read_named, repository_root

YAML_NAMES = (".policylint.yaml", ".policylint.yml")
PYPROJECT = "pyproject.toml"


def has_tool_table(path: Path) -> bool:
    """Whether a pyproject.toml has a `[tool.policylint]` table (it is parsed to be sure)."""
    try:
        # A pyproject.toml that leads out of the repository, or is no regular file, is not read:
        # nothing says it meant to configure policylint.
        data = read_named(str(path), what="configuration file", limit=MAX_CONFIG_BYTES, root=repository_root(str(path)))
        text = data.decode("utf-8")
    except (NamedFileError, UnicodeDecodeError):
        return False
    if "policylint" not in text:  # the usual pyproject.toml is not even parsed
        return False
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - Python 3.10
        import tomli as tomllib  # type: ignore[import-not-found,unused-ignore]
    try:
        data = tomllib.loads(text)
    except (tomllib.TOMLDecodeError, RecursionError):
        return True  # it means to configure policylint: loading it reports the error
    tool = data.get("tool")
    return isinstance(tool, dict) and "policylint" in tool


def find_config(start: str | os.PathLike[str] = ".") -> Path | None:
    """The configuration file that applies in `start`, or None (see the module docstring)."""
    directory = Path(os.path.abspath(start))
    while True:
        for name in YAML_NAMES:
            candidate = directory / name
            if os.path.lexists(candidate):
                return candidate
        candidate = directory / PYPROJECT
        if candidate.is_file() and has_tool_table(candidate):
            return candidate
        if (directory / ".git").exists() or directory.parent == directory:
            return None
        directory = directory.parent
