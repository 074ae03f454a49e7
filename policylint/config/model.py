"""The keys of the configuration file, as pydantic models.

`Config` is generated from the settings that have a configuration key (policylint.settings,
where every setting is declared once); `PerFileSettings` declares what a `per-file` entry
holds. Validation (`policylint.config.load`), the JSON Schema for editors
(`schemas/policylint-config.schema.json`) and the key reference in README "Configuration" are
generated from them, and tests/config/test_config.py fails when either generated file is stale. Keys are kebab-case, like the command-line flags they stand for.
Validation is strict: `jobs: "2"` is a wrong type, not 2, as a YAML file says what it means.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, create_model

from policylint.settings import DEFAULTS, Setting, Settings, keyed, path_keys


def _off(value: object) -> object:
    # YAML 1.1, which PyYAML reads, takes an unquoted `off` for the boolean false.
    return "off" if value is False else value


SeverityLevel = Annotated[Literal["off", "info", "warning", "error"], BeforeValidator(_off)]
OptionValue = int | bool | str


def _kebab(name: str) -> str:
    return name.replace("_", "-")


class _Strict(BaseModel):
    model_config = ConfigDict(
        extra="forbid", strict=True, alias_generator=_kebab, populate_by_name=True, frozen=True, use_attribute_docstrings=True
    )


class PerFileSettings(_Strict):
    """Settings for the files a `per-file` pattern matches."""

    select: list[str] | None = None
    """Rule ids or name prefixes to report in these files, in place of the global `select`."""

    ignore: list[str] = []
    """Rule ids or name prefixes not to report in these files, besides the global `ignore`."""

    severity: dict[str, SeverityLevel] = {}
    """Severity per rule id or name prefix in these files (`off` drops the rule's findings)."""


_CONFIG_DOC = "policylint configuration (`.policylint.yaml`, or `[tool.policylint]` in pyproject.toml)."


# The keys whose values are structures, named by `Setting.config_type` (policylint.settings
# declares them without importing pydantic).
CONFIG_TYPES: dict[str, Any] = {
    "dict[str, SeverityLevel]": dict[str, SeverityLevel],
    "dict[str, dict[str, OptionValue]]": dict[str, dict[str, OptionValue]],
    "dict[str, PerFileSettings]": dict[str, PerFileSettings],
}


def _annotation(s: Setting, declared: str) -> Any:
    """The key's type in the file: a list where the setting holds a tuple, the choices as a
    `Literal`, a lower bound as a constraint (`declared`: the field's annotation text)."""
    if s.config_type is not None:
        return CONFIG_TYPES[s.config_type]
    optional = declared.endswith(" | None")
    base = declared.removesuffix(" | None")
    scalar: Any = {"tuple[str, ...]": list[str], "bool": bool, "int": int, "str": str}[base]
    if s.choices:
        scalar = Literal[s.choices]
    if s.minimum is not None:
        scalar = Annotated[scalar, Field(ge=s.minimum)]
    return scalar | None if optional else scalar


def _default(value: Any) -> Any:
    if isinstance(value, tuple):
        return list(value)
    if isinstance(value, Mapping):
        return dict(value)
    return value


def _config_model() -> type[BaseModel]:
    """The model of the configuration file: one field per setting with a key (policylint.settings)."""
    declared = {f.name: str(f.type) for f in dataclasses.fields(Settings)}
    fields: dict[str, Any] = {}
    for s in keyed():
        assert s.key is not None
        default = _default(getattr(DEFAULTS, s.name))
        fields[s.key.replace("-", "_")] = (_annotation(s, declared[s.name]), Field(default=default, description=s.doc))
    return create_model("Config", __base__=_Strict, __doc__=_CONFIG_DOC, __module__=__name__, **fields)


Config = _config_model()


# Keys whose values are paths, resolved against the configuration file's directory.
PATH_KEYS = path_keys()


def aliases(model: type[BaseModel]) -> list[str]:
    return [field.alias or name for name, field in model.model_fields.items()]


def json_schema() -> dict[str, Any]:
    """The JSON Schema of the configuration file (schemas/policylint-config.schema.json)."""
    schema = Config.model_json_schema(by_alias=True)
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": "https://policylint.dev/schemas/policylint-config.schema.json",
        **schema,
    }
