"""Every setting of policylint, declared once: a field of `Settings` per setting.

A field says its name (the commands' keyword), its Python type and default, and through
`setting(...)` its help, its configuration key (or none), the flag that sets it and on which
commands, whether repository configuration may set it and whether a change to it can loosen
the gate (the trust model, README "Security"). Everything else is generated from these fields:

- the click options of every command (`options(command)`, used by policylint.cli);
- the configuration model (policylint.config.model), hence its JSON Schema
  (`schemas/policylint-config.schema.json`) and the key table in README "Configuration"
  (`python -m policylint.config.reference --schema --readme`; tests/config/test_config.py fails when
  either is stale);
- which flag overrides which key (`command_line_keys()`), which keys name paths (`path_keys()`),
  and `policylint config` / `check --show-config`, which list the keys in this order.

Adding a setting is one field here plus the code that reads it (CONTRIBUTING, "What a change
touches"); tests/settings/test_settings.py checks every command's options map to exactly one field.

This module imports neither click nor pydantic at import time: `policylint PATH` starts light
(tests/k8s/test_startup.py).
"""

from __future__ import annotations

import dataclasses
import enum
from collections.abc import Callable, Iterator, Mapping, Sequence
from types import MappingProxyType
from typing import Any, TypeVar

from policylint.input.ignore import DEFAULT_EXCLUDE
from policylint.k8s.schemas import CHANNELS, GATEWAY_API_VERSIONS
from policylint.values import frozen

# The commands that take settings (policylint.cli).
CHECK, CONFIG, DIFF, EXPLAIN, GRAPH, RULES, PROFILES = "check", "config", "diff", "explain", "graph", "rules", "profiles"
COMMANDS = (CHECK, CONFIG, DIFF, EXPLAIN, GRAPH, RULES, PROFILES)
# `explain` and `graph` load the project as `check` does.
_LOADING = (CHECK, DIFF, EXPLAIN, GRAPH)
_QUERIES = (EXPLAIN, GRAPH)
_CONFIGURED = (CHECK, CONFIG, DIFF, EXPLAIN, GRAPH)

SEVERITIES = ("error", "warning", "info")
GATES = ("introduced", "all")  # policylint.commands.change
COLORS = ("auto", "always", "never")
# The baseline `--write-baseline` writes without `--baseline` (policylint.suppressions.baseline.
# DEFAULT_FILE, not imported here so that startup stays light).
DEFAULT_BASELINE = ".policylint-baseline.json"


class Repository(enum.Enum):
    """What a repository's configuration file, which is input under review in CI, may do with a setting."""

    NEVER = "never"  # no configuration key: only the command line (or the caller) sets it
    SETS = "sets"  # it may set it; a change to it is listed, and never loosens the gate
    # It may set it, but a change that loosens it fails the gate (policylint.commands.trust
    # judges each of these; tests/config/test_trust.py holds an example of each loosening).
    GATED = "gated"


@frozen(slots=False)
class Setting:
    """How one field of `Settings` is set (see the module docstring)."""

    help: str | None = None  # the flag's help
    doc: str | None = None  # the configuration key's meaning (README table, JSON Schema)
    key: str | None = None  # the configuration key; None: the command line only
    flag: tuple[str, ...] = ()  # its spellings (`--no-cache`); empty: no flag
    commands: tuple[str, ...] = ()  # the commands that take the flag
    click: Mapping[str, Any] = dataclasses.field(default_factory=dict)  # more click.option keywords (metavar, show_default...)
    per_command: Mapping[str, Mapping[str, Any]] = dataclasses.field(
        default_factory=dict
    )  # a command's own keywords (help, type...)
    choices: tuple[str, ...] = ()
    minimum: int | None = None
    case_sensitive: bool = True
    path: bool = False  # a path, relative to the configuration file's directory when the file gives it
    config_type: str | None = None  # a structured key's type, named in policylint.config.model.CONFIG_TYPES
    command_line: bool | None = None  # whether the command line may override the key; None: it does when it has a flag
    repository: Repository | None = None  # None: SETS with a key, NEVER without
    name: str = ""  # the field's name, filled in by `SETTINGS`

    @property
    def overridable(self) -> bool:
        return self.command_line if self.command_line is not None else bool(self.flag)

    @property
    def trust(self) -> Repository:
        if self.repository is not None:
            return self.repository
        return Repository.SETS if self.key is not None else Repository.NEVER


def setting(default: Any = None, **how: Any) -> Any:
    """A field of `Settings`: its default, and how it is set (`Setting`'s fields)."""
    metadata = {"setting": Setting(**how)}
    if isinstance(default, Mapping):  # read-only, yet not hashable: dataclasses wants a factory
        return dataclasses.field(default_factory=lambda: MappingProxyType(dict(default)), metadata=metadata)
    return dataclasses.field(default=default, metadata=metadata)


_EMPTY: Mapping[str, Any] = MappingProxyType({})


@frozen(slots=False)
class Settings:
    """One run's settings, whatever set them: defaults, the configuration file, the command line.

    The order of the fields with a configuration key is the order of the keys in the JSON
    Schema, the README table and `policylint config`."""

    config_file: str | None = setting(
        None,
        flag=("--config",),
        commands=_CONFIGURED,
        click={"metavar": "FILE"},
        help="Configuration file to use [default: .policylint.yaml or [tool.policylint] in pyproject.toml, searched upward to the repository root].",
    )
    isolated: bool = setting(False, flag=("--isolated",), commands=_CONFIGURED, help="Ignore every configuration file.")
    show_config: bool = setting(
        False,
        flag=("--show-config",),
        commands=(CHECK,),
        help="Print the effective configuration and where each value comes from; lint nothing.",
    )
    watch: bool = setting(
        False,
        flag=("--watch",),
        commands=(CHECK,),
        help="Lint again whenever a file changes, showing what changed since the last run; Ctrl-C stops (exit 130). Needs policylint[watch].",
    )
    paths: tuple[str, ...] = setting(
        (),
        key="paths",
        doc="Files and directories to lint when none are named on the command line.",
        path=True,
        # `check`, `explain` and `graph` take them as arguments; `diff` as --path.
        command_line=True,
        flag=("--path",),
        commands=(DIFF,),
        click={"metavar": "PATH"},
        help="Files or directories to compare (repeatable) [default: the repository root].",
    )
    exclude: tuple[str, ...] = setting(
        DEFAULT_EXCLUDE,
        key="exclude",
        repository=Repository.GATED,
        doc="Gitignore-style patterns of files and directories that directory walks leave out (replaces the default).",
    )
    extend_exclude: tuple[str, ...] = setting(
        (), key="extend-exclude", repository=Repository.GATED, doc="More patterns to leave out, added to `exclude`."
    )
    respect_gitignore: bool = setting(
        True,
        key="respect-gitignore",
        doc="Leave out what `.gitignore` files (and `.git/info/exclude`) ignore, except the files git tracks.",
    )
    helm_templates: bool = setting(
        False,
        key="helm-templates",
        doc="Lint the files of a Helm chart's `templates/` directory instead of skipping them (`--helm-templates`).",
        flag=("--helm-templates",),
        commands=(CHECK,),
        help="Lint the files of Helm charts' templates/ directories instead of skipping them.",
    )
    context_paths: tuple[str, ...] = setting(
        (),
        flag=("--context",),
        commands=(CHECK, EXPLAIN, GRAPH),
        click={"metavar": "PATH"},
        help="Also read PATH to resolve references, reporting only findings in or about the PATHS given (repeatable).",
        per_command={
            EXPLAIN: {"help": "Also read PATH to resolve references, as `check --context` does (repeatable)."},
            GRAPH: {"help": "Also read PATH to resolve references, as `check --context` does (repeatable)."},
        },
    )
    diff_base: str | None = setting(
        None,
        flag=("--diff",),
        commands=(CHECK,),
        # An optional value: policylint.cli gives it the class that refuses `--diff=-x`.
        click={"is_flag": False, "flag_value": "", "metavar": "[BASE]", "optional_value": True},
        help="Report only findings in files changed since BASE (default: the merge-base with the upstream branch), or about their objects.",
    )
    staged: bool = setting(
        False,
        flag=("--staged",),
        commands=(CHECK,),
        help="Lint the staged snapshot (git index) and report on the staged changes.",
    )
    fix: bool = setting(
        False,
        flag=("--fix",),
        commands=(CHECK,),
        help="Apply the safe fixes findings carry, editing only the nodes they fix, then report what remains.",
    )
    unsafe_fixes: bool = setting(
        False,
        flag=("--unsafe-fixes",),
        commands=(CHECK,),
        help="With --fix or --diff-fix, also apply fixes that change what the controller does.",
    )
    diff_fix: bool = setting(
        False,
        flag=("--diff-fix",),
        commands=(CHECK,),
        help="Print the fixes as a unified diff and write nothing (exit 1 when there is something to fix).",
    )
    fix_only: tuple[str, ...] = setting(
        (),
        flag=("--fix-only",),
        commands=(CHECK,),
        click={"metavar": "CODES"},
        help="Fix only these rules (id or name prefixes, or ALL); implies --fix.",
    )
    select: tuple[str, ...] = setting(
        (),
        key="select",
        repository=Repository.GATED,
        doc="Only these rules: ids or name prefixes (`--select`); empty: every rule.",
        flag=("--select",),
        commands=(CHECK,),
        click={"metavar": "CODES"},
        help="Only these rules (id or name prefixes, or ALL; comma-separated).",
    )
    ignore: tuple[str, ...] = setting(
        (),
        key="ignore",
        repository=Repository.GATED,
        doc="Skip these rules: ids or name prefixes (`--ignore`).",
        flag=("--ignore",),
        commands=(CHECK,),
        click={"metavar": "CODES"},
        help="Skip these rules (id or name prefixes, or ALL; comma-separated).",
    )
    severity: Mapping[str, str] = setting(
        _EMPTY,
        key="severity",
        repository=Repository.GATED,
        config_type="dict[str, SeverityLevel]",
        doc="Severity per rule id or name prefix, the longest prefix winning; `off` drops the rule's findings.",
    )
    rules: Mapping[str, Mapping[str, Any]] = setting(
        _EMPTY,
        key="rules",
        repository=Repository.GATED,
        config_type="dict[str, dict[str, OptionValue]]",
        doc="Rule options by rule id or name, e.g. `PL608: {max-affected: 10}` (see `policylint rule CODE`).",
    )
    per_file: Mapping[str, Mapping[str, Any]] = setting(
        _EMPTY,
        key="per-file",
        repository=Repository.GATED,
        config_type="dict[str, PerFileSettings]",
        doc="Gitignore-style pattern (relative to this file) -> `select`, `ignore` and `severity` for the files it matches.",
    )
    external: tuple[str, ...] = setting(
        (),
        key="external",
        repository=Repository.GATED,
        doc="Objects that live outside the input, as `KIND[/NS[/NAME]]` globs (`--external`).",
        flag=("--external",),
        commands=_LOADING,
        click={"metavar": "KIND[/NS[/NAME]]"},
        help="Objects that live outside the input (globs, repeatable): references to them are not errors.",
        per_command={
            DIFF: {"help": "Objects that live outside the input (globs)."},
            EXPLAIN: {"help": "Objects that live outside the input (globs)."},
            GRAPH: {"help": "Objects that live outside the input (globs)."},
        },
    )
    crd_paths: tuple[str, ...] = setting(
        (),
        key="crd",
        path=True,
        repository=Repository.GATED,
        doc="CRD files or directories describing policy kinds (`--crd`).",
        flag=("--crd",),
        commands=(*_LOADING, RULES),
        click={"metavar": "PATH"},
        help="CRD files or directories describing policy kinds.",
        per_command={
            RULES: {"help": "With --cel-coverage: these CRD files or directories instead of the bundled CRDs (repeatable)."}
        },
    )
    gateway_api_version: str | None = setting(
        None,
        key="gateway-api-version",
        repository=Repository.GATED,
        doc="The Gateway API release whose CRDs the cluster runs (`--gateway-api-version`); null: inferred from the input, else unknown.",
        flag=("--gateway-api-version",),
        commands=(CHECK, DIFF),
        click={"metavar": "VERSION"},
        help=f"The Gateway API release whose CRDs the cluster runs (bundled: {', '.join(GATEWAY_API_VERSIONS)}) [default: inferred from the input, else unknown].",
    )
    channel: str | None = setting(
        None,
        key="channel",
        repository=Repository.GATED,
        choices=CHANNELS,
        doc="The Gateway API release channel whose CRDs the cluster runs (`--channel`); null: inferred from the input, else unknown.",
        flag=("--channel",),
        commands=(CHECK, DIFF),
        help="The Gateway API release channel whose CRDs the cluster runs [default: inferred from the input, else unknown].",
    )
    implementations: tuple[str, ...] = setting(
        (),
        key="implementations",
        repository=Repository.GATED,
        doc="The Gateway API implementations the cluster runs, `NAME` or `NAME@VERSION` (`--implementation`); their installers' default channel counts when `channel` is not known, and `@VERSION` picks the vendor's bundled release of its policy CRDs for the schema rules.",
        flag=("--implementation",),
        commands=(CHECK, DIFF),
        click={"metavar": "NAME[@VERSION]"},
        help="A Gateway API implementation the cluster runs, e.g. envoy-gateway@v1.5 (repeatable): its installer's default channel counts when the channel is not known.",
    )
    profile_paths: tuple[str, ...] = setting(
        (),
        key="profile",
        path=True,
        repository=Repository.GATED,
        doc="Extra policy profile files (`--profile`).",
        flag=("--profile",),
        commands=(*_LOADING, PROFILES),
        click={"metavar": "PATH"},
        help="Extra policy profile file (repeatable).",
        per_command={PROFILES: {"help": None}},
    )
    namespace: str = setting(
        "default",
        key="namespace",
        doc="Namespace of objects that declare none (`--namespace`).",
        flag=("--namespace",),
        commands=_LOADING,
        click={"show_default": True},
        help="Namespace of objects that declare none.",
    )
    stdin_filename: str | None = setting(
        None,
        flag=("--stdin-filename",),
        commands=(CHECK,),
        click={"metavar": "NAME"},
        help="File name to report for input read from `-`.",
    )
    synthetic_rule_names: bool = setting(
        False,
        key="synthetic-rule-names",
        doc="Accept `rule-<n>` for unnamed route rules, as Kuadrant does (`--synthetic-rule-names`).",
        flag=("--synthetic-rule-names",),
        commands=(CHECK, EXPLAIN, GRAPH),
        help="Accept `rule-<n>` for unnamed route rules, as Kuadrant does (a warning instead of an error).",
        per_command={
            EXPLAIN: {"help": "Accept `rule-<n>` for unnamed route rules, as Kuadrant does."},
            GRAPH: {"help": "Accept `rule-<n>` for unnamed route rules, as Kuadrant does."},
        },
    )
    complete: bool = setting(
        False,
        key="complete",
        doc="The input is the whole cluster: a referenced object missing from it does not exist, an error (`--complete`).",
        flag=("--complete",),
        commands=(CHECK,),
        help="The input is the whole cluster: a referenced object missing from it does not exist, an error.",
    )
    fail_on: str = setting(
        "error",
        key="fail-on",
        choices=SEVERITIES,
        case_sensitive=False,
        repository=Repository.GATED,
        doc="Lowest severity that makes the exit code 1 (`--fail-on`).",
        flag=("--fail-on",),
        commands=(CHECK, DIFF),
        click={"show_default": True},
        help="Lowest severity that makes the exit code 1.",
        per_command={DIFF: {"help": "Exit 1 when the change introduces a finding of this severity or worse."}},
    )
    exit_zero: bool = setting(
        False,
        flag=("--exit-zero",),
        commands=(CHECK, DIFF),
        help="Exit 0 even when findings are reported.",
        per_command={DIFF: {"help": "Exit 0 even when the change introduces findings or loosens the gate."}},
    )
    gate: str = setting(
        "introduced",
        key="gate",
        choices=GATES,
        repository=Repository.GATED,
        doc="With `--diff` or `--staged`: fail on the findings the change introduces, or on `all` it reports (`--gate`).",
        flag=("--gate",),
        commands=(CHECK,),
        click={"show_default": True},
        help="With --diff or --staged: fail on the findings the change introduces, or on all it reports (pre-existing ones too).",
    )
    max_affected: int | None = setting(
        None,
        minimum=0,
        flag=("--max-affected",),
        commands=(CHECK, DIFF),
        click={"metavar": "N"},
        help="Report policies whose blast radius exceeds N contexts (PL608).",
        per_command={DIFF: {"help": "Exit 1 when a policy the change adds, modifies or deletes affects more than N contexts."}},
    )
    baseline: str | None = setting(
        None,
        key="baseline",
        path=True,
        repository=Repository.GATED,
        doc="Baseline file whose recorded findings are hidden (`--baseline`).",
        flag=("--baseline",),
        commands=(CHECK,),
        click={"metavar": "FILE"},
        help="Hide the findings recorded in this baseline file (docs/suppressions.md); entries that match nothing are PL906.",
    )
    write_baseline: bool = setting(
        False,
        # A flag, not an option with an optional value: click would take the next argument, a
        # path to lint, for the file to overwrite.
        flag=("--write-baseline",),
        commands=(CHECK,),
        help=f"Record this run's findings in the --baseline file [default: {DEFAULT_BASELINE}], dropping stale entries, and hide them.",
    )
    baseline_ref: str | None = setting(
        None,
        flag=("--baseline-ref",),
        commands=(CHECK,),
        click={"metavar": "REF"},
        help="Read the baseline file from this git ref (the pull request's base branch), not the working tree; report the entries the working tree adds.",
    )
    config_ref: str | None = setting(
        None,
        flag=("--config-ref",),
        commands=(CHECK, DIFF),
        click={"metavar": "REF"},
        help="Read the configuration file from this git ref (the pull request's base branch), not the working tree; report what the working tree's changes.",
        per_command={
            DIFF: {
                "help": "Read the configuration file from this git ref [default: BASE], not from HEAD or the working tree; report what the change does to it."
            }
        },
    )
    gate_base: str | None = setting(
        None,
        flag=("--gate-base",),
        commands=(CHECK,),
        click={"metavar": "REF"},
        help="Compare the configuration and the baseline with REF's and fail when the change loosens them, whatever the files reported on (the pre-commit hook: HEAD).",
    )
    require_suppression_reason: bool = setting(
        True,
        key="require-suppression-reason",
        repository=Repository.GATED,
        doc="Whether an inline suppression or annotation without ` -- reason` is a finding (PL903).",
    )
    fmt: str = setting(
        "auto",
        key="format",
        doc="Output format on standard output (`--format`); `auto`: GitHub annotations in GitHub Actions, else text.",
        flag=("--format",),
        commands=(CHECK, DIFF, EXPLAIN, GRAPH, RULES),
        click={"show_default": True},
        help="Format of standard output; auto: GitHub annotations in GitHub Actions, else text.",
        # The formats of `check` are the reporters' (policylint.cli fills them in: the registry
        # is not imported here); the other commands print their own.
        per_command={
            DIFF: {"choices": ("text", "json", "markdown"), "default": "text", "help": None},
            EXPLAIN: {"choices": ("text", "json"), "default": "text", "help": None},
            GRAPH: {"choices": ("mermaid", "dot"), "default": "mermaid", "help": None},
            RULES: {"choices": ("text", "markdown", "json"), "default": "text", "help": None},
        },
    )
    outputs: tuple[str, ...] = setting(
        (),
        key="output",
        doc="More reports written to files, each `FORMAT=PATH` (`--output`).",
        flag=("--output",),
        commands=(CHECK,),
        click={"metavar": "FORMAT=PATH"},
        help="Also write the report in FORMAT to PATH (repeatable: e.g. sarif=policylint.sarif junit=junit.xml).",
    )
    show_suppressed: bool = setting(
        False,
        flag=("--show-suppressed",),
        commands=(CHECK,),
        help="Also list the findings hidden by suppressions and the baseline.",
    )
    color: str = setting(
        "auto",
        key="color",
        choices=COLORS,
        doc="Colored text output (`--color`).",
        flag=("--color",),
        commands=(CHECK,),
        click={"show_default": True},
    )
    jobs: int = setting(
        1,
        key="jobs",
        minimum=0,
        doc="Processes parsing files and running the rules; 0: one per CPU (`--jobs`).",
        flag=("--jobs", "-j"),
        commands=(CHECK,),
        click={"show_default": True},
        help="Processes parsing files and running the rules (0: one per CPU; never more than the CPUs this process may use); small inputs use one process anyway.",
    )
    cache: bool = setting(
        True,
        key="cache",
        doc="Use the parse cache (`--no-cache` turns it off).",
        flag=("--no-cache",),
        commands=(CHECK,),
        click={"flag_value": False},
        help="Neither read nor write the parse cache.",
    )
    cache_dir: str | None = setting(
        None,
        key="cache-dir",
        path=True,
        doc="Parse cache directory (`--cache-dir`).",
        flag=("--cache-dir",),
        commands=(CHECK,),
        click={"metavar": "DIR"},
        help=(
            "Parse cache directory [default: $POLICYLINT_CACHE_DIR, else the user's cache directory, e.g."
            " ~/.cache/policylint]. Not used (with a warning) inside the linted repository, or unless"
            " this user alone can write it and policylint created it."
        ),
    )
    follow_outside_links: bool = setting(
        False,
        key="follow-outside-links",
        doc="Follow symlinks that lead outside the linted paths (`--follow-outside-links`).",
        flag=("--follow-outside-links",),
        commands=(CHECK, EXPLAIN, GRAPH),
        help="Follow symlinks that lead outside PATHS (never to a FIFO or device); otherwise each is a PL008 finding.",
    )
    # The queries' own settings.
    limit: int = setting(
        20,
        minimum=0,
        flag=("--limit",),
        commands=(EXPLAIN,),
        click={"show_default": True},
        help="Contexts listed per result or target (0: all); counts are always complete.",
    )
    focus: str | None = setting(
        None,
        flag=("--focus",),
        commands=(GRAPH,),
        click={"metavar": "KIND/NAMESPACE/NAME[#SECTION]"},
        help="Only this object's ancestors and descendants, and their policies.",
    )
    depth: int | None = setting(
        None,
        minimum=0,
        flag=("--depth",),
        commands=(GRAPH,),
        click={"metavar": "N"},
        help="Hierarchy steps from the focused object (or from the roots without --focus).",
    )
    draw_rules: bool = setting(False, flag=("--rules",), commands=(GRAPH,), help="Draw route rules as nodes of their own.")
    cel_coverage: bool = setting(
        False,
        flag=("--cel-coverage",),
        commands=(RULES,),
        help="Instead: per bundled CRD, its CEL validation rules, how many PL704 evaluates and why not the others (text or json).",
    )

    def replace(self, **changes: Any) -> Settings:
        return dataclasses.replace(self, **changes)


def _collect() -> tuple[Setting, ...]:
    out = []
    for f in dataclasses.fields(Settings):
        how: Setting = f.metadata["setting"]
        out.append(dataclasses.replace(how, name=f.name))
    return tuple(out)


SETTINGS: tuple[Setting, ...] = _collect()
BY_NAME: Mapping[str, Setting] = MappingProxyType({s.name: s for s in SETTINGS})
DEFAULTS = Settings()


def keyed() -> Iterator[Setting]:
    """The settings a configuration file may set, in the order of its keys."""
    return (s for s in SETTINGS if s.key is not None)


def command_line_keys() -> dict[str, str]:
    """Configuration key -> the setting (and keyword) the command line overrides it with."""
    return {s.key: s.name for s in keyed() if s.overridable and s.key is not None}


def path_keys() -> frozenset[str]:
    """The keys whose values are paths, resolved against the configuration file's directory."""
    return frozenset(s.key for s in keyed() if s.path and s.key is not None)


def gated_keys() -> tuple[str, ...]:
    """The keys repository configuration may set but not loosen unseen (the trust model)."""
    return tuple(s.key for s in keyed() if s.trust is Repository.GATED and s.key is not None)


def from_values(values: Mapping[str, Any], base: Settings = DEFAULTS) -> Settings:
    """`base` with `values` (by setting name; lists become tuples), unknown names refused."""
    unknown = sorted(set(values) - set(BY_NAME))
    if unknown:
        raise TypeError(f"no setting {', '.join(unknown)}")
    changes: dict[str, Any] = {k: tuple(v) if isinstance(v, list) else v for k, v in values.items()}
    return dataclasses.replace(base, **changes)


def from_keys(values: Mapping[str, Any], base: Settings = DEFAULTS) -> Settings:
    """`base` with configuration values by key (policylint.config.effective.Effective.values)."""
    names = {s.key: s.name for s in keyed()}
    return from_values({names[key]: value for key, value in values.items() if key in names}, base)


_F = TypeVar("_F", bound=Callable[..., Any])


def options(command: str, extra: Mapping[str, Mapping[str, Any]] | None = None) -> Callable[[_F], _F]:
    """A decorator giving `command` the click option of every setting it takes, in this module's
    order. `extra`: click keywords by setting name the caller adds (a choice list known only
    where the registry is imported, an option class)."""
    import click

    chosen = [s for s in SETTINGS if command in s.commands]

    def decorate(function: _F) -> _F:
        for s in reversed(chosen):
            function = click.option(*s.flag, s.name, **_click_keywords(s, command, (extra or {}).get(s.name, {})))(function)
        return function

    return decorate


def _click_keywords(s: Setting, command: str, extra: Mapping[str, Any]) -> dict[str, Any]:
    import click

    own = {**s.click, **s.per_command.get(command, {}), **extra}
    own.pop("optional_value", None)
    choices = own.pop("choices", s.choices)
    keywords: dict[str, Any] = {"default": own.pop("default", getattr(DEFAULTS, s.name))}
    help_text = own.pop("help", s.help)
    if help_text is not None:
        keywords["help"] = help_text
    default = keywords["default"]
    if isinstance(default, bool) and "is_flag" not in own:
        keywords["is_flag"] = True
    if isinstance(default, tuple):
        keywords["multiple"] = True
    if choices:
        keywords["type"] = click.Choice(list(choices), case_sensitive=s.case_sensitive)
    elif s.minimum is not None:
        keywords["type"] = click.IntRange(min=s.minimum)
    keywords.update(own)
    return keywords


def takes(command: str) -> Sequence[Setting]:
    """The settings `command` has a flag for."""
    return [s for s in SETTINGS if command in s.commands]
