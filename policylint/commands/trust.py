"""The trust model of a run (README "Security"): which configuration and baseline the gate
applies, read from the working tree or from a git ref, and what a change does to them.

- Locally the checkout's configuration is trusted, as ruff's or ESLint's is, but never
  silently: every relaxation it makes is in the summary (policylint.config.provenance).
- `--config-ref REF` and `--baseline-ref REF` read the configuration file and the baseline
  from REF instead (as `semgrep ci --baseline-commit` takes its baseline from git), so that a
  pull request cannot loosen the gate that judges it; the profiles and CRDs a configuration
  read from REF names are read from REF too (`Trust.tree`, policylint.input.gitref). The Action
  passes the pull request's base branch (`trust: base`).
- With a base to compare with (`--diff`, `--staged`, `--gate-base`, or either ref flag), what
  the change does to the configuration, to the baseline and to the profile and CRD files the
  base's configuration names (policylint.commands.trust_files) is reported
  (policylint.gate.GateChange), and a change that loosens them fails the run.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Container, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from policylint.gate import BASELINE, CONFIGURATION, GateChange, GateReport
from policylint.values import frozen

if TYPE_CHECKING:
    from policylint.config.load import LoadedConfig
    from policylint.gate import Relaxation
    from policylint.input.gitref import TreeRef
    from policylint.suppressions.baseline import Entry

_NAMES = (".policylint.yaml", ".policylint.yml")
_PYPROJECT = "pyproject.toml"
_SEVERITY_RANK = {"info": 0, "warning": 1, "error": 2}


@frozen(slots=False)
class Trust:
    """What `check` needs to say what it trusted and to compare it with a base."""

    config: LoadedConfig | None  # the configuration applied
    label: str | None  # how it is named: its path, or `REF:PATH`
    from_file: frozenset[str]  # its keys the command line did not override
    config_ref: str | None = None
    baseline_ref: str | None = None
    # The configuration the command named or found in the working tree (`--config`, discovery),
    # as a path relative to the working directory: the change's side of a comparison.
    local_path: str | None = None
    isolated: bool = False
    # The commit the configuration was read from (`--config-ref`, `diff`'s BASE): the files its
    # `profile` and `crd` name are read from there too (None: the working tree).
    tree: TreeRef | None = None

    def files_at(self, sources: Mapping[str, str]) -> tuple[TreeRef | None, TreeRef | None]:
        """The commits the `crd` and the `profile` paths are read from (None: the working tree):
        `tree` for a key whose value the configuration read from it gave (`sources`: each key's
        source, policylint.config.effective); a flag given wins and names files on disk."""
        from policylint.config.effective import COMMAND_LINE, DEFAULT

        def at(key: str) -> TreeRef | None:
            given = self.tree is not None and self.config is not None
            return self.tree if given and sources.get(key) not in (None, DEFAULT, COMMAND_LINE) else None

        return at("crd"), at("profile")


def _decode(data: bytes, where: str) -> str:
    from policylint.config.load import ConfigError, Problem

    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(where, [Problem(1, "", f"cannot read the configuration file: {exc}")]) from None


def _has_tool_table(text: str) -> bool:
    if "policylint" not in text:
        return False
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - Python 3.10
        import tomli as tomllib  # type: ignore[import-not-found,unused-ignore]
    try:
        tool = tomllib.loads(text).get("tool")
    except tomllib.TOMLDecodeError:
        return True
    return isinstance(tool, dict) and "policylint" in tool


def config_at(commit: str, label: str, named: str | None, root: str) -> LoadedConfig | None:
    """The configuration file of `commit` (GitError, ConfigError): `named` (a path relative to
    the working directory, `--config`), else the one discovery finds in that commit's tree from
    the working directory up to the repository root. None when there is none."""
    from policylint.config.load import load_text
    from policylint.input.gitref import read_file, relative_to_root

    if named is not None:
        in_tree = relative_to_root(named, root)
        data = read_file(commit, in_tree, root, label=label)
        if data is None:
            return None
        return load_text(_decode(data, f"{label}:{in_tree}"), named, f"{label}:{in_tree}", root)
    directory = os.path.abspath(os.getcwd())
    while True:
        in_dir = relative_to_root(directory, root)
        for name in (*_NAMES, _PYPROJECT):
            in_tree = name if in_dir == "." else f"{in_dir}/{name}"
            data = read_file(commit, in_tree, root, label=label)
            if data is None:
                continue
            text = _decode(data, f"{label}:{in_tree}")
            if name == _PYPROJECT and not _has_tool_table(text):
                continue
            return load_text(text, os.path.relpath(os.path.join(root, in_tree)), f"{label}:{in_tree}", root)
        if os.path.normpath(directory) == os.path.normpath(root) or os.path.dirname(directory) == directory:
            return None
        directory = os.path.dirname(directory)


def baseline_at(commit: str, label: str, path: str, root: str) -> list[Entry]:
    """The baseline entries `path` (relative to the working directory) holds in `commit`; none
    when the commit has no such file: the base hid nothing (GitError, BaselineError)."""
    from policylint.input.gitref import read_file, relative_to_root
    from policylint.suppressions.baseline import parse

    in_tree = relative_to_root(path, root)
    data = read_file(commit, in_tree, root, label=label)
    return [] if data is None else parse(data, f"{label}:{in_tree}")


def _identity(r: Relaxation) -> tuple[str, str, str]:
    # Where in a list an entry sits does not matter, only what it says and under which key.
    key = r.key
    while key.endswith("]") and "[" in key:
        key = key[: key.rindex("[")]
    return (key, r.value, r.effect)


def config_changes(
    base: LoadedConfig | None,
    head: LoadedConfig | None,
    head_label: str | None,
    from_file: Container[str] = (),
    *,
    removed: Callable[[str, str], list[str]] | None = None,
) -> list[GateChange]:
    """What the change from `base` to `head` does to the configuration: each relaxation `head`
    adds (loosens), a less strict `fail-on` (loosens), a `profile` or `crd` path it removes whose
    files at the base checked something (`removed(key, path)` says what: loosens), every other
    key changed (does not)."""
    everything = _AllKeys()
    old: set[tuple[str, str, str]] = set()
    new: list[Relaxation] = []
    if base is not None or head is not None:
        # Imported here: the hook of a repository without a configuration file compares none.
        from policylint.config.provenance import relaxations

        old = {_identity(r) for r in relaxations(base, everything)} if base is not None else set()
        new = relaxations(head, everything, head_label) if head is not None else []
    label = head_label or (head.path if head is not None else "")
    out = [GateChange(CONFIGURATION, True, r.file, r.line, f"adds {r.message}") for r in new if _identity(r) not in old]
    loosened_keys = {r.key.split(".")[0].split("[")[0] for r in new if _identity(r) not in old}
    before = _values(base)
    after = _values(head)
    fail_before, fail_after = before.get("fail-on", "error"), after.get("fail-on", "error")
    if _SEVERITY_RANK[str(fail_after)] > _SEVERITY_RANK[str(fail_before)]:
        line = head.line(("fail-on",)) if head is not None else 1
        out.append(GateChange(CONFIGURATION, True, label, line, f"raises fail-on from {fail_before} to {fail_after}"))
        loosened_keys.add("fail-on")
    if before.get("gate", "introduced") == "all" and after.get("gate", "introduced") != "all":
        # Pre-existing findings in the change's scope no longer fail it (policylint.commands.change).
        line = head.line(("gate",)) if head is not None and "gate" in after else 1
        out.append(GateChange(CONFIGURATION, True, label, line, "gates on what the change introduces instead of all"))
        loosened_keys.add("gate")
    if base is not None and head is None:
        out.append(GateChange(CONFIGURATION, False, base.path, 1, "removes the configuration file"))
    options = _rule_option_changes(base, head, label)
    out += options
    if options:
        loosened_keys.add("rules")
    for key in _CLUSTER_KEYS:
        if before.get(key) != after.get(key):
            line = head.line((key,)) if head is not None and key in after else 1
            out.append(GateChange(CONFIGURATION, True, label, line, _cluster_change(key, before.get(key), after.get(key))))
            loosened_keys.add(key)
    for key in _READ_FILES:
        listed = _path_changes(key, before.get(key) or [], after.get(key) or [], head, label, removed)
        out += listed
        if listed:
            loosened_keys.add(key)
    for key in sorted(before.keys() | after.keys()):
        if key in loosened_keys or before.get(key) == after.get(key):
            continue
        line = head.line((key,)) if head is not None and key in after else 1
        out.append(GateChange(CONFIGURATION, False, label, line, f"changes `{key}`"))
    return out


# The keys describing the cluster the schema rules judge objects against (policylint.k8s.cluster).
# Any change of them can turn a refusal into acceptance: `channel: experimental` serves kinds and
# fields the standard channel refuses, the standard channel lacks CEL rules and patterns of the
# experimental one, a release accepts fields another refuses, and what no longer is declared is
# judged against every plausible cluster, where what one accepts is a warning, not an error. So a
# change of them loosens the gate, as a change of a CRD's validation does (README "Security").
_CLUSTER_KEYS = ("gateway-api-version", "channel", "implementations")


def _cluster_change(key: str, before: Any, after: Any) -> str:
    def shown(value: Any) -> str:
        if value is None:
            return "unset"
        return "[" + ", ".join(map(str, value)) + "]" if isinstance(value, list) else str(value)

    return (
        f"changes `{key}` from {shown(before)} to {shown(after)}: the schema rules judge objects against the cluster it"
        " describes, which may accept what the base's refused"
    )


# The keys naming files that say what is checked: a profile can add or drop a policy kind's
# checks, a CRD its schema. A path added is listed; a path removed loosens the gate when its
# files at the base describe a policy kind or hold a validation (policylint.commands.trust_files),
# and an edit of the files themselves is judged there (README "Security").
_READ_FILES = ("profile", "crd")


def _path_changes(
    key: str,
    old: Sequence[str],
    new: Sequence[str],
    head: LoadedConfig | None,
    label: str,
    removed: Callable[[str, str], list[str]] | None = None,
) -> list[GateChange]:
    out: list[GateChange] = []
    if not old and not new:
        return out
    from policylint.commands.trust_files import said  # here: most configurations name no such files

    for i, path in enumerate(new):
        if path not in old:
            line = head.line((key, i)) if head is not None else 1
            out.append(GateChange(CONFIGURATION, False, label, line, f"adds {key} {path}"))
    line = head.line((key,)) if head is not None and new else 1
    for path in old:
        if path not in new:
            reasons = removed(key, path) if removed is not None else []
            out.append(GateChange(CONFIGURATION, bool(reasons), label, line, said(f"removes {key} {path}", reasons)))
    return out


def _removal_judge(base: LoadedConfig, base_commit: str, root: str) -> Callable[[str, str], list[str]]:
    """What removing a `profile` or `crd` path (as the base's configuration writes it) drops."""

    def judge(key: str, path: str) -> list[str]:
        from policylint.commands.trust_files import removal_reasons
        from policylint.config.effective import resolve_path

        return removal_reasons(key, resolve_path(base, path), base_commit, root)

    return judge


def _options_by_rule(loaded: LoadedConfig | None) -> dict[str, tuple[str, dict[str, object]]]:
    """Rule id -> (the key as written under `rules`, its options)."""
    if loaded is None or not loaded.config.rules:
        return {}  # without the rules imported: a run read back needs none of them
    from policylint.rules import REGISTRY

    by_code = {r.id: r for r in REGISTRY} | {r.name: r for r in REGISTRY}
    out = {}
    for code, options in loaded.config.rules.items():
        rule = by_code.get(code) or by_code.get(code.upper())
        if rule is not None:
            out[rule.id] = (code, dict(options))
    return out


def _option_text(value: object) -> str:
    import json

    return "unset" if value is None else json.dumps(value)


def _rule_option_changes(base: LoadedConfig | None, head: LoadedConfig | None, label: str) -> list[GateChange]:
    """Each rule option whose value (set, or its default) the change alters. It loosens when
    the option's declaration says which way the rule reports less (RuleOption.fewer) and the
    change goes that way; an option that does not say is listed without loosening."""
    before, after = _options_by_rule(base), _options_by_rule(head)
    if not before and not after:
        return []
    from policylint.rules import REGISTRY

    out = []
    for rule in REGISTRY:
        if rule.id not in before and rule.id not in after:
            continue
        code, old_options = before.get(rule.id, (rule.id, {}))
        code, new_options = after.get(rule.id, (code, {}))
        for option in rule.options:
            old, new = old_options.get(option.name, option.default), new_options.get(option.name, option.default)
            if old == new:
                continue
            key = f"rules.{code}.{option.name}"
            line = head.line(("rules", code, option.name)) if head is not None else 1
            less = option.reports_less(old, new)
            if less is None:
                message = f"changes {key} from {_option_text(old)} to {_option_text(new)} (whether {rule.id} reports less cannot be told)"
            elif new is None:
                message = f"unsets {key} (was {_option_text(old)})"
            else:
                verb = "raises" if isinstance(old, int) and isinstance(new, int) and new > old else "lowers"
                if old is None:
                    verb = "sets"
                message = f"{verb} {key} from {_option_text(old)} to {_option_text(new)}"
            if less:
                message += f": {rule.id} reports less"
            out.append(GateChange(CONFIGURATION, bool(less), label, line, message))
    return out


class _AllKeys:
    """Every key counts as set by the file: a comparison judges the files, not this run's flags."""

    def __contains__(self, key: object) -> bool:
        return True


def _values(loaded: LoadedConfig | None) -> dict[str, Any]:
    if loaded is None:
        return {}
    config = loaded.config
    return {
        (info.alias or name): getattr(config, name)
        for name, info in type(config).model_fields.items()
        if name in config.model_fields_set
    }


def _named_file_changes(
    base: LoadedConfig, base_commit: str, head_commit: str | None, head_name: str, root: str
) -> list[GateChange]:
    from policylint.commands.trust_files import named_file_changes
    from policylint.config.effective import resolve_path

    values = _values(base)
    paths = {key: [resolve_path(base, v) for v in values.get(key) or []] for key in _READ_FILES}
    if not any(paths.values()):
        return []  # nothing named: nothing read
    return named_file_changes(paths, base_commit, head_commit, head_name, root)


def baseline_changes(base: Sequence[Entry], head: Sequence[Entry], file: str) -> list[GateChange]:
    """Entries the change adds to the baseline (each loosens: it hides a finding the base did
    not), and how many it drops (which does not)."""
    from policylint.k8s.names import plural

    old = {e.fingerprint for e in base}
    new_fingerprints = {e.fingerprint for e in head}
    out = [
        GateChange(
            BASELINE,
            True,
            file,
            e.line,
            f"adds baseline entry {e.rule} {e.object or e.file}{' ' + e.path if e.path else ''}",
        )
        for e in head
        if e.fingerprint not in old
    ]
    dropped = len(old - new_fingerprints)
    if dropped:
        out.append(GateChange(BASELINE, False, file, 1, f"drops {plural(dropped, 'baseline entry', 'baseline entries')}"))
    return out


def _short(label: str | None, commit: str) -> str:
    return label if label else commit[:12]


def gate_report(
    trust: Trust,
    *,
    baseline: str | None,
    baseline_entries: Sequence[Entry] | None,
    diff_base: str | None,
    staged: bool,
    head: str | None = None,
    gate_base: str | None = None,
) -> GateReport:
    """The run's gate section: the relaxations of the configuration applied and, when there is
    a base to compare with, what the change does to the configuration and the baseline
    (GitError, BaselineError). The change's side is the working tree, the index (`staged`) or
    the commit `head` (`policylint diff BASE HEAD`). `gate_base` (`--gate-base`) is the commit
    the comparison is made with, whatever the report scope; before a repository's first commit
    there is nothing to compare with."""
    # Imported only when used: a run without a configuration file stays light (test_config).
    relaxed: tuple[Relaxation, ...] = ()
    if trust.config is not None:
        from policylint.config.provenance import relaxations

        relaxed = tuple(relaxations(trust.config, trust.from_file, trust.label))
    baseline_label = f"{trust.baseline_ref}:{baseline}" if trust.baseline_ref and baseline else baseline
    from policylint.input import git

    if gate_base is not None:
        if gate_base == "HEAD" and not git.has_commit(os.getcwd()):
            gate_base = None  # the first commit: no base yet
        else:
            diff_base = gate_base
    if staged and diff_base is None and not git.has_commit(os.getcwd()):
        staged = False  # the index before the first commit: nothing to compare it with
    measured = diff_base is not None or staged
    if not measured and trust.config_ref is None and trust.baseline_ref is None:
        return GateReport(trust.label, baseline_label, relaxed)
    from policylint.config.load import ConfigError

    try:
        return _compared(trust, relaxed, baseline_label, _sides(diff_base, staged, head), baseline, baseline_entries)
    except ConfigError as exc:
        # The base's configuration does not validate: the comparison cannot be made.
        raise git.GitError(f"the configuration at the base does not validate: {exc}") from None


@frozen
class _Sides:
    """The two sides a change is compared between: the base's commit (None: no base to compare
    the configuration and the baseline with but the refs `--config-ref` and `--baseline-ref`
    name) and the change's (None: the working tree; else a commit or the index), in `root`."""

    root: str
    diff_base: str | None
    diff_commit: str | None
    head_commit: str | None
    head_name: str


def _sides(diff_base: str | None, staged: bool, head: str | None) -> _Sides:
    from policylint.input import git
    from policylint.input.gitref import INDEX

    measured = diff_base is not None or staged
    root = git.repository_root(os.getcwd())
    if staged and diff_base is None:
        diff_base = "HEAD"  # the index against the last commit, as a commit would be
    diff_commit = git.resolve_base(diff_base or None, root) if measured else None
    head_commit, head_name = (INDEX, "index") if staged else (None, "working tree")
    if head is not None:
        head_commit, head_name = git.resolve_base(head, root), head
    return _Sides(root, diff_base, diff_commit, head_commit, head_name)


def _compared(
    trust: Trust,
    relaxed: tuple[Relaxation, ...],
    baseline_label: str | None,
    sides: _Sides,
    baseline: str | None,
    baseline_entries: Sequence[Entry] | None,
) -> GateReport:
    changes: list[GateChange] = []
    bases: list[str] = []
    if not trust.isolated and (trust.config_ref is not None or sides.diff_commit is not None):
        bases.append(f"configuration at {_config_compared(trust, sides, changes)}")
    if baseline is not None and (trust.baseline_ref is not None or sides.diff_commit is not None):
        bases.append(f"baseline at {_baseline_compared(trust, sides, baseline, baseline_entries, changes)}")
    return GateReport(trust.label, baseline_label, relaxed, ", ".join(bases) or None, tuple(changes))


def _config_compared(trust: Trust, sides: _Sides, changes: list[GateChange]) -> str:
    """What the change does to the configuration, into `changes`; the name of the base."""
    root, diff_commit = sides.root, sides.diff_commit
    if trust.config_ref is not None:
        base_config, base_name = trust.config, trust.config_ref
    else:
        assert diff_commit is not None
        base_name = _short(sides.diff_base, diff_commit)
        base_config = config_at(diff_commit, base_name, trust.local_path if trust.config_ref is None else None, root)
    head_config, head_label = _head_config(trust, sides, changes)
    # The profiles and CRDs the base's configuration names, as the base holds them.
    base_commit = trust.tree.commit if trust.config_ref is not None and trust.tree is not None else diff_commit
    judge = None
    if base_config is not None and base_commit is not None:
        judge = _removal_judge(base_config, base_commit, root)
    changes += config_changes(base_config, head_config, head_label, removed=judge)
    if base_config is not None and base_commit is not None:
        changes += _named_file_changes(base_config, base_commit, sides.head_commit, sides.head_name, root)
    return base_name


def _head_config(trust: Trust, sides: _Sides, changes: list[GateChange]) -> tuple[LoadedConfig | None, str | None]:
    """The change's configuration and where it is from; one that does not validate is a change."""
    from policylint.config.load import ConfigError

    if trust.config_ref is None and sides.head_commit is None:
        return trust.config, trust.label
    try:
        if sides.head_commit is not None:
            head_config = config_at(sides.head_commit, sides.head_name, trust.local_path, sides.root)
            return head_config, f"{sides.head_name}:{head_config.path}" if head_config is not None else None
        if trust.local_path is not None:
            from policylint.config.load import load

            return load(trust.local_path), trust.local_path
    except ConfigError as exc:
        first = str(exc).splitlines()[0]
        changes.append(GateChange(CONFIGURATION, False, exc.file, 1, f"does not validate ({first})"))
    return None, None


def _baseline_compared(
    trust: Trust, sides: _Sides, baseline: str, baseline_entries: Sequence[Entry] | None, changes: list[GateChange]
) -> str:
    """What the change does to the baseline, into `changes`; the name of the base."""
    from policylint.suppressions import baseline as baseline_io

    if trust.baseline_ref is not None and baseline_entries is not None:
        base_entries, base_name = list(baseline_entries), trust.baseline_ref
    else:
        assert sides.diff_commit is not None
        base_name = _short(sides.diff_base, sides.diff_commit)
        base_entries = baseline_at(sides.diff_commit, base_name, baseline, sides.root)
    if sides.head_commit is not None:
        head_entries = baseline_at(sides.head_commit, sides.head_name, baseline, sides.root)
    else:
        head_entries = baseline_io.read(baseline) if os.path.isfile(baseline) else []
    changes += baseline_changes(base_entries, head_entries, baseline)
    return base_name
