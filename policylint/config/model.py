"""The keys of the configuration file, as pydantic models.

The models are the single source of truth: validation (`policylint.config.load`), the JSON
Schema for editors (`schemas/policylint-config.schema.json`) and the key reference in
README "Configuration" are generated from them, and tests/test_config.py fails when either
generated file is stale. Keys are kebab-case, like the command-line flags they stand for.
Validation is strict: `jobs: "2"` is a wrong type, not 2, as a YAML file says what it means.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field

from policylint.input.ignore import DEFAULT_EXCLUDE


def _off(value: object) -> object:
    # YAML 1.1, which PyYAML reads, takes an unquoted `off` for the boolean false.
    return "off" if value is False else value


SeverityLevel = Annotated[Literal["off", "info", "warning", "error"], BeforeValidator(_off)]
FailOn = Literal["error", "warning", "info"]
Gate = Literal["introduced", "all"]  # policylint.commands.change.GATES
Color = Literal["auto", "always", "never"]
Channel = Literal["standard", "experimental"]  # policylint.k8s.schemas.CHANNELS
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


class Config(_Strict):
    """policylint configuration (`.policylint.yaml`, or `[tool.policylint]` in pyproject.toml)."""

    paths: list[str] = []
    """Files and directories to lint when none are named on the command line."""

    exclude: list[str] = list(DEFAULT_EXCLUDE)
    """Gitignore-style patterns of files and directories that directory walks leave out (replaces the default)."""

    extend_exclude: list[str] = []
    """More patterns to leave out, added to `exclude`."""

    respect_gitignore: bool = True
    """Leave out what `.gitignore` files (and `.git/info/exclude`) ignore, except the files git tracks."""

    helm_templates: bool = False
    """Lint the files of a Helm chart's `templates/` directory instead of skipping them (`--helm-templates`)."""

    select: list[str] = []
    """Only these rules: ids or name prefixes (`--select`); empty: every rule."""

    ignore: list[str] = []
    """Skip these rules: ids or name prefixes (`--ignore`)."""

    severity: dict[str, SeverityLevel] = {}
    """Severity per rule id or name prefix, the longest prefix winning; `off` drops the rule's findings."""

    rules: dict[str, dict[str, OptionValue]] = {}
    """Rule options by rule id or name, e.g. `PL608: {max-affected: 10}` (see `policylint rule CODE`)."""

    per_file: dict[str, PerFileSettings] = {}
    """Gitignore-style pattern (relative to this file) -> `select`, `ignore` and `severity` for the files it matches."""

    external: list[str] = []
    """Objects that live outside the input, as `KIND[/NS[/NAME]]` globs (`--external`)."""

    crd: list[str] = []
    """CRD files or directories describing policy kinds (`--crd`)."""

    gateway_api_version: str | None = None
    """The Gateway API release whose CRDs the cluster runs (`--gateway-api-version`); null: inferred from the input, else unknown."""

    channel: Channel | None = None
    """The Gateway API release channel whose CRDs the cluster runs (`--channel`); null: inferred from the input, else unknown."""

    implementations: list[str] = []
    """The Gateway API implementations the cluster runs, `NAME` or `NAME@VERSION` (`--implementation`); their installers' default channel counts when `channel` is not known, and `@VERSION` picks the vendor's bundled release of its policy CRDs for the schema rules."""

    profile: list[str] = []
    """Extra policy profile files (`--profile`)."""

    namespace: str = "default"
    """Namespace of objects that declare none (`--namespace`)."""

    synthetic_rule_names: bool = False
    """Accept `rule-<n>` for unnamed route rules, as Kuadrant does (`--synthetic-rule-names`)."""

    complete: bool = False
    """The input is the whole cluster: a referenced Secret or ConfigMap missing from it does not exist (`--complete`)."""

    fail_on: FailOn = "error"
    """Lowest severity that makes the exit code 1 (`--fail-on`)."""

    gate: Gate = "introduced"
    """With `--diff` or `--staged`: fail on the findings the change introduces, or on `all` it reports (`--gate`)."""

    baseline: str | None = None
    """Baseline file whose recorded findings are hidden (`--baseline`)."""

    require_suppression_reason: bool = True
    """Whether an inline suppression or annotation without ` -- reason` is a finding (PL903)."""

    format: str = "auto"
    """Output format on standard output (`--format`); `auto`: GitHub annotations in GitHub Actions, else text."""

    output: list[str] = []
    """More reports written to files, each `FORMAT=PATH` (`--output`)."""

    color: Color = "auto"
    """Colored text output (`--color`)."""

    jobs: Annotated[int, Field(ge=0)] = 1
    """Processes parsing files and running the rules; 0: one per CPU (`--jobs`)."""

    cache: bool = True
    """Use the parse cache (`--no-cache` turns it off)."""

    cache_dir: str | None = None
    """Parse cache directory (`--cache-dir`)."""

    follow_outside_links: bool = False
    """Follow symlinks that lead outside the linted paths (`--follow-outside-links`)."""


# Keys whose values are paths, resolved against the configuration file's directory.
PATH_KEYS = frozenset({"paths", "crd", "profile", "baseline", "cache-dir"})


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
