"""The settings model (policylint.settings): every option of every command is one setting, the
configuration model is generated from the settings that have a key, and every setting that
repository configuration may not loosen unseen is judged by the trust model."""

from __future__ import annotations

from pathlib import Path

import click
import pytest

from policylint.cli import cli
from policylint.commands.trust import config_changes
from policylint.config.load import load_text
from policylint.settings import BY_NAME, DEFAULTS, SETTINGS, Repository, from_keys, from_values, gated_keys, keyed


def _commands() -> dict[str, click.Command]:
    assert isinstance(cli, click.Group)
    return dict(cli.commands)


def test_every_option_of_every_command_is_exactly_one_setting() -> None:
    seen: set[tuple[str, str]] = set()
    for name, command in _commands().items():
        dests = [p.name for p in command.params if isinstance(p, click.Option)]
        assert len(dests) == len(set(dests)), f"{name}: two options set one setting"
        for param in command.params:
            if not isinstance(param, click.Option):
                continue
            assert param.name in BY_NAME, f"`{name} {param.opts[0]}` is no setting of policylint.settings"
            setting = BY_NAME[param.name]
            assert name in setting.commands, f"`{name} {param.opts[0]}`: the setting {param.name} does not list {name}"
            assert tuple(param.opts + param.secondary_opts) == setting.flag
            seen.add((name, param.name))
    declared = {(command, s.name) for s in SETTINGS for command in s.commands}
    assert declared == seen, "a setting names a command that has no option for it"


def test_the_flags_the_settings_declare_are_the_commands_options() -> None:
    # Spot checks by hand of what the generated options do: a choice, a bound, a negative flag,
    # a repeatable option, a per-command help.
    check = _commands()["check"]
    options = {p.name: p for p in check.params if isinstance(p, click.Option)}
    fail_on = options["fail_on"]
    assert isinstance(fail_on.type, click.Choice) and list(fail_on.type.choices) == ["error", "warning", "info"]
    assert fail_on.default == "error" and fail_on.show_default is True
    jobs = options["jobs"]
    assert isinstance(jobs.type, click.IntRange) and jobs.type.min == 0 and jobs.opts == ["--jobs", "-j"]
    cache = options["cache"]
    assert cache.opts == ["--no-cache"] and cache.default is True and cache.flag_value is False
    assert options["select"].multiple and options["select"].metavar == "CODES"
    diff_fail_on = next(p for p in _commands()["diff"].params if p.name == "fail_on")
    assert diff_fail_on.help == "Exit 1 when the change introduces a finding of this severity or worse."
    graph_format = next(p for p in _commands()["graph"].params if p.name == "fmt")
    assert isinstance(graph_format.type, click.Choice) and list(graph_format.type.choices) == ["mermaid", "dot"]
    assert graph_format.default == "mermaid"


def test_the_configuration_model_has_one_key_per_keyed_setting_in_their_order() -> None:
    from policylint.config.model import Config

    fields = Config.model_fields
    assert [info.alias for info in fields.values()] == [s.key for s in keyed()]
    for s in keyed():
        info = fields[str(s.key).replace("-", "_")]
        assert info.description == s.doc
        default = info.get_default(call_default_factory=True)
        expected = getattr(DEFAULTS, s.name)
        assert default == (list(expected) if isinstance(expected, tuple) else expected), s.key


def test_the_models_types_are_the_settings() -> None:
    from pydantic import ValidationError

    from policylint.config.model import Config

    # Checked by hand against the setting declarations: a list, a choice, a bound, a nullable choice.
    Config.model_validate({"select": ["PL2"], "fail-on": "warning", "jobs": 0, "channel": None})
    for wrong in ({"select": "PL2"}, {"fail-on": "fatal"}, {"jobs": -1}, {"channel": "beta"}, {"color": True}):
        with pytest.raises(ValidationError):
            Config.model_validate(wrong)


def test_settings_from_configuration_keys_and_flags() -> None:
    settings = from_keys({"crd": ["crds"], "fail-on": "info", "per-file": {"a/**": {"ignore": ["PL2"]}}})
    assert settings.crd_paths == ("crds",) and settings.fail_on == "info"
    assert settings.per_file == {"a/**": {"ignore": ["PL2"]}}
    assert settings.namespace == "default"
    given = from_values({"exit_zero": True, "select": ("PL1",)}, settings)
    assert given.exit_zero and given.select == ("PL1",) and given.crd_paths == ("crds",)
    with pytest.raises(TypeError, match="no setting nope"):
        from_values({"nope": 1})


def test_only_keyed_settings_may_be_set_by_repository_configuration() -> None:
    for s in SETTINGS:
        if s.key is None:
            assert s.trust is Repository.NEVER, s.name
        else:
            assert s.trust in (Repository.SETS, Repository.GATED), s.name
    # What only the command line may say: nothing a pull request's configuration file can set.
    for name in ("exit_zero", "config_ref", "baseline_ref", "gate_base", "write_baseline", "isolated", "config_file"):
        assert BY_NAME[name].key is None and BY_NAME[name].trust is Repository.NEVER


# One change per gated key, from a base configuration to the head's, that loosens the gate; the
# trust model must say it does. A new gated setting needs an example here (the keys are compared).
LOOSENING: dict[str, tuple[str, str]] = {
    "exclude": ("exclude: []\n", "exclude: [manifests/]\n"),
    "extend-exclude": ("", "extend-exclude: [manifests/]\n"),
    "select": ("", "select: [PL2]\n"),
    "ignore": ("", "ignore: [PL201]\n"),
    "severity": ("", "severity: {PL201: warning}\n"),
    "rules": ("rules: {PL608: {max-affected: 5}}\n", "rules: {PL608: {max-affected: 50}}\n"),
    "per-file": ("", "per-file: {'legacy/**': {ignore: [PL2]}}\n"),
    "external": ("", "external: [Gateway/infra/*]\n"),
    "crd": ("crd: [crds]\n", "crd: []\n"),
    # The cluster description: either direction can accept what the base refused.
    "gateway-api-version": ("gateway-api-version: v1.6.1\n", "gateway-api-version: v1.0.0\n"),
    "channel": ("channel: standard\n", "channel: experimental\n"),
    "implementations": ("", "implementations: [envoy-gateway@v1.8]\n"),
    "profile": ("profile: [profile.yaml]\n", "profile: []\n"),
    "fail-on": ("fail-on: warning\n", "fail-on: error\n"),
    "gate": ("gate: all\n", "gate: introduced\n"),
    "baseline": ("", "baseline: .policylint-baseline.json\n"),
    "require-suppression-reason": ("", "require-suppression-reason: false\n"),
}


def test_every_gated_setting_has_a_loosening_example() -> None:
    assert set(LOOSENING) == set(gated_keys())


@pytest.mark.parametrize("key", sorted(LOOSENING))
def test_repository_configuration_cannot_loosen_a_gated_setting_unseen(key: str, tmp_path: Path) -> None:
    before, after = LOOSENING[key]
    path = str(tmp_path / ".policylint.yaml")
    base = load_text(before, path, "main:.policylint.yaml", str(tmp_path))
    head = load_text(after, path, ".policylint.yaml", str(tmp_path))
    # A removed profile or CRD file loosens when it checked something at the base
    # (policylint.commands.trust_files): say that it did.
    changes = config_changes(base, head, ".policylint.yaml", removed=lambda k, p: [f"{p} described a policy kind"])
    assert any(change.loosens for change in changes), (key, changes)


def test_a_setting_repository_configuration_sets_freely_does_not_loosen(tmp_path: Path) -> None:
    path = str(tmp_path / ".policylint.yaml")
    base = load_text("", path, "main:.policylint.yaml", str(tmp_path))
    head = load_text("jobs: 4\ncolor: never\nnamespace: apps\n", path, ".policylint.yaml", str(tmp_path))
    changes = config_changes(base, head, ".policylint.yaml")
    assert [(c.loosens, c.message) for c in changes] == [
        (False, "changes `color`"),
        (False, "changes `jobs`"),
        (False, "changes `namespace`"),
    ]
    assert all(BY_NAME[name].trust is Repository.SETS for name in ("jobs", "color", "namespace"))
