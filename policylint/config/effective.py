"""The effective settings of a run: defaults, then the configuration file, then the command line.

Each value remembers where it came from (`default`, `FILE:LINE` or `command line`), which
`policylint config` and `check --show-config` print. Paths in the file are relative to its
directory; they are rewritten relative to the working directory here, so that everything
downstream sees paths as if they had been typed on the command line.

A path the file gives (`paths`, `crd`, `profile`, `baseline`, `cache-dir`, an `output`'s
target) must stay inside the repository holding the file once symlinks are resolved, and an
`output` may not be written into `.git`: the file is part of the repository under review, and
it could otherwise have a secret read (and printed in an error), a report written over a file
anywhere, or a cache directory made and adopted anywhere. Only the command line may name a path
outside (README "Security"). The files are checked again when read (policylint.input.named).
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import field
from typing import Any

from policylint.config.load import ConfigError, LoadedConfig, Problem, key_text
from policylint.config.overrides import Overrides, PerFile
from policylint.input.ignore import WalkFilter, compile_patterns
from policylint.input.named import outside_root, shown
from policylint.settings import command_line_keys
from policylint.values import frozen, record

DEFAULT = "default"
COMMAND_LINE = "command line"

# Configuration key -> the setting (the keyword of the command, and its flag) that overrides it
# (policylint.settings). Keys without one are set in the file only.
CLI_KEYWORDS: dict[str, str] = command_line_keys()


# The keys that declare what the cluster runs (policylint.k8s.cluster): their sources are the
# declaration's provenance.
CLUSTER_KEYS = ("gateway-api-version", "channel", "implementations")


@record
class Effective:
    """Every configuration key's value and source, in the models' order."""

    values: dict[str, Any] = field(default_factory=dict)
    sources: dict[str, str] = field(default_factory=dict)
    file: LoadedConfig | None = None
    label: str | None = None  # how the file is named: its path, or `REF:PATH` read from a git ref

    def render(self) -> str:
        """One `key: value  # source` line per key (values as JSON, which YAML reads too)."""
        where = (self.label or self.file.path) if self.file is not None else "none (defaults and command line only)"
        lines = [f"# configuration file: {where}"]
        for key, value in self.values.items():
            text = json.dumps(value, sort_keys=True, ensure_ascii=False)
            lines.append(f"{key}: {text}  # {self.sources[key]}")
        return "\n".join(lines) + "\n"


def _relative_dir(loaded: LoadedConfig) -> str:
    return os.path.relpath(loaded.directory)


def resolve_path(loaded: LoadedConfig, value: str) -> str:
    """A path written in the configuration file, as seen from the working directory."""
    if os.path.isabs(value):
        return os.path.normpath(value)
    base = _relative_dir(loaded)
    return os.path.normpath(value if base == "." else os.path.join(base, value))


def _from_file(loaded: LoadedConfig, key: str, value: Any) -> Any:
    from policylint.config.model import PATH_KEYS

    if key in PATH_KEYS and value is not None:
        return [resolve_path(loaded, v) for v in value] if isinstance(value, list) else resolve_path(loaded, value)
    if key == "output":
        out = []
        for item in value:
            fmt, _, target = item.partition("=")
            out.append(f"{fmt}={resolve_path(loaded, target)}")
        return out
    return value


def build(
    loaded: LoadedConfig | None, given: Mapping[str, Any], label: str | None = None, *, from_tree: bool = False
) -> Effective:
    """The effective settings from the file (None: none) and the command-line keywords `given`
    (only the flags actually given); `label` names the file in the sources (default: its path;
    `REF:PATH` when it was read from a git ref). `from_tree`: the file was read from a commit,
    and so are the files its `profile` and `crd` name (policylint.input.gitref), whatever the
    working tree holds at their paths: those are not checked on disk."""
    from policylint.config.model import Config

    effective = Effective(file=loaded, label=label)
    model = loaded.config if loaded is not None else Config()
    for name, info in Config.model_fields.items():
        key = info.alias or name
        value = getattr(model, name)
        value = value.model_dump(by_alias=True) if hasattr(value, "model_dump") else value
        if isinstance(value, dict):
            value = {k: v.model_dump(by_alias=True) if hasattr(v, "model_dump") else v for k, v in value.items()}
        if loaded is not None and name in model.model_fields_set:
            effective.values[key] = _from_file(loaded, key, value)
            effective.sources[key] = f"{label or loaded.path}:{loaded.line((key,))}"
        else:
            effective.values[key] = value
            effective.sources[key] = DEFAULT
        keyword = CLI_KEYWORDS.get(key)
        if keyword is not None and keyword in given:
            cli_value = given[keyword]
            effective.values[key] = list(cli_value) if isinstance(cli_value, tuple) else cli_value
            effective.sources[key] = COMMAND_LINE
    if loaded is not None:
        problems = _escapes(loaded, effective, TREE_KEYS if from_tree else ())
        if problems:
            raise ConfigError(loaded.path, problems)
    return effective


# The keys naming files that a configuration read from a commit has read from that commit too.
TREE_KEYS = ("crd", "profile")


def _escapes(loaded: LoadedConfig, effective: Effective, skip: tuple[str, ...] = ()) -> list[Problem]:
    """The paths the file gives (and the command line does not override) that lead out of its
    repository (see the module docstring), but for the keys `skip`."""
    from policylint.config.model import PATH_KEYS

    problems: list[Problem] = []
    for key in (*sorted(PATH_KEYS), "output"):
        if key in skip or effective.sources.get(key) in (DEFAULT, COMMAND_LINE):
            continue
        value = effective.values.get(key)
        items = value if isinstance(value, list) else [] if value is None else [value]
        for i, item in enumerate(items):
            loc = (key, i) if isinstance(value, list) else (key,)
            path = item.partition("=")[2] if key == "output" else item
            reason = outside_root(path, loaded.root)
            if reason is None and key == "output" and ".git" in os.path.normpath(path).split(os.sep):
                reason = "it is inside .git"
            if reason is not None:
                problems.append(
                    Problem(
                        loaded.line(loc),
                        key_text(loc),
                        f"{shown(path)}: {reason}; only the command line may name a path outside the repository",
                    )
                )
    return problems


@frozen(slots=False)
class RunSettings:
    """What the configuration file adds to a run besides the flags' keywords."""

    walk: WalkFilter
    overrides: Overrides
    rule_options: dict[str, dict[str, object]]


def run_settings(effective: Effective) -> RunSettings:
    """The walk filter, the overrides and the rule options (by rule id) of `effective`."""
    from policylint.rules import REGISTRY

    values = effective.values
    loaded = effective.file
    assert loaded is not None
    directory = os.path.relpath(loaded.directory)
    walk = WalkFilter(
        exclude=(*values["exclude"], *values["extend-exclude"]),
        base=directory,
        respect_gitignore=values["respect-gitignore"],
        stop=directory,
    )
    per_file = tuple(
        PerFile(
            pattern=pattern,
            base=loaded.directory,
            spec=compile_patterns([pattern]),
            select=tuple(settings["select"]) if settings["select"] is not None else None,
            ignore=tuple(settings["ignore"]),
            severity=tuple(settings["severity"].items()),
        )
        for pattern, settings in values["per-file"].items()
    )
    by_code = {r.id: r.id for r in REGISTRY} | {r.name: r.id for r in REGISTRY}
    rule_options = {by_code.get(code, by_code.get(code.upper(), code)): dict(opts) for code, opts in values["rules"].items()}
    return RunSettings(walk, Overrides(severity=tuple(values["severity"].items()), per_file=per_file), rule_options)
