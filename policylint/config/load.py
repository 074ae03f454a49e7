"""Reading and validating one configuration file.

Every problem is a `ConfigError` naming the file, the line and the key, with a "did you mean"
where a key, a rule code or a format is misspelt; the command turns it into exit code 2
(README "Exit codes"). Lines come from the YAML node tree (PyYAML composes it with marks);
for `pyproject.toml`, which `tomllib` parses without positions, the line is found by looking
for the key in the text of the `[tool.policylint]` tables, which names the right line for every
key written once.

The file is hostile input in CI: it is read as every file named by configuration is
(policylint.input.named: a regular file, not blocking, at most 1 MiB, and, when it was found
rather than named with `--config`, inside the repository), YAML within the manifest loader's
bounds on nesting, nodes and what aliases add (policylint.input.load), TOML nested at most
`MAX_NESTING` deep; every message is capped (`MAX_PROBLEMS` of them, each `MAX_MESSAGE`
characters).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable, Mapping
from dataclasses import field
from typing import Any

from policylint.config import PYPROJECT
from policylint.input.named import MAX_CONFIG_BYTES, NamedFileError, read_named, repository_root
from policylint.textsafe import MAX_MESSAGE, truncate
from policylint.values import frozen, record

Loc = tuple[str | int, ...]

# Keys nested in one another, at most: the deepest real key is `per-file.PATTERN.severity.CODE`.
MAX_NESTING = 32
# Problems listed for one file, at most; the others are counted.
MAX_PROBLEMS = 50


@frozen(slots=False)
class Problem:
    line: int
    key: str
    message: str


class ConfigError(Exception):
    """An invalid configuration file: every problem found, each with its line and key."""

    def __init__(self, file: str, problems: list[Problem]) -> None:
        self.file = file
        self.problems = sorted(problems, key=lambda p: (p.line, p.key, p.message))
        lines = [
            truncate(f"{file}:{p.line}: {p.key + ': ' if p.key else ''}{p.message}", MAX_MESSAGE)
            for p in self.problems[:MAX_PROBLEMS]
        ]
        if len(self.problems) > MAX_PROBLEMS:
            lines.append(f"{file}: {len(self.problems) - MAX_PROBLEMS} more problems")
        super().__init__("\n".join(lines))


@record
class LoadedConfig:
    """A valid configuration file: its model, where it is, and the line of each key it sets."""

    path: str
    config: Any  # policylint.config.model.Config
    lines: dict[Loc, int] = field(default_factory=dict)
    # The repository the file belongs to (policylint.input.named.repository_root): the paths
    # it names must stay inside it (policylint.config.effective).
    root: str = ""

    @property
    def directory(self) -> str:
        return os.path.dirname(os.path.abspath(self.path))

    def line(self, loc: Loc) -> int:
        """The line of `loc`, or of its nearest parent that has one."""
        while loc:
            if loc in self.lines:
                return self.lines[loc]
            loc = loc[:-1]
        return self.lines.get((), 1)


def key_text(loc: Loc) -> str:
    """`per-file."legacy/**".severity.PL3`, `select[2]`: a key path as written in the file."""
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            bare = part.isascii() and part.replace("-", "").replace("_", "").isalnum()
            text = part if bare else f'"{part}"'
            out += f".{text}" if out else text
    return out


# -- reading ---------------------------------------------------------------------------------------


def _over_budget(text: str, file: str) -> Problem | None:
    """The first bound of the manifest loader the text crosses (nesting, nodes, what aliases add:
    a 1 KB file of nested aliases expands to billions of values), or None. Checked before the
    node tree is composed and converted, which expands aliases."""
    from policylint.input.load import RESOURCE_LIMIT, parse_text

    for issue in parse_text(text, file).issues:
        if issue.rule_id == RESOURCE_LIMIT:
            # The manifest loader says what it skips; here the whole file is refused.
            message, _, skipped = issue.message.rpartition("; ")
            if not message or "skipped" not in skipped:
                message = issue.message
            return Problem(issue.location.line if issue.location else 1, "", f"{message}; the configuration is not read")
    return None


def _yaml(text: str, file: str) -> tuple[Any, dict[Loc, int]]:
    import yaml
    from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

    from policylint.input.load import PARSER_IS_C

    over = _over_budget(text, file)
    if over is not None:
        raise ConfigError(file, [over])
    try:
        node = yaml.compose(text, Loader=yaml.CSafeLoader if PARSER_IS_C else yaml.SafeLoader)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        raise ConfigError(file, [Problem(mark.line + 1 if mark else 1, "", f"YAML syntax error: {exc.problem or exc}")]) from None
    except yaml.YAMLError as exc:
        raise ConfigError(file, [Problem(1, "", f"YAML error: {exc}")]) from None
    lines: dict[Loc, int] = {(): 1}
    problems: list[Problem] = []
    constructor = yaml.SafeLoader("")

    def convert(n: Node, loc: Loc, depth: int) -> Any:
        if depth > MAX_NESTING:
            problems.append(Problem(n.start_mark.line + 1, key_text(loc), "nested too deeply"))
            return None
        if isinstance(n, MappingNode):
            out: dict[str, Any] = {}
            for knode, vnode in n.value:
                if not isinstance(knode, ScalarNode):
                    problems.append(Problem(knode.start_mark.line + 1, key_text(loc), "a key must be a string"))
                    continue
                key = str(knode.value)
                sub: Loc = (*loc, key)
                if key in out:
                    problems.append(Problem(knode.start_mark.line + 1, key_text(sub), "key given twice"))
                lines[sub] = knode.start_mark.line + 1
                out[key] = convert(vnode, sub, depth + 1)
            return out
        if isinstance(n, SequenceNode):
            items = []
            for i, child in enumerate(n.value):
                item: Loc = (*loc, i)
                lines[item] = child.start_mark.line + 1
                items.append(convert(child, item, depth + 1))
            return items
        assert isinstance(n, ScalarNode)
        return constructor.construct_object(n, deep=True)

    if node is None:
        return {}, lines
    lines[()] = node.start_mark.line + 1
    data = convert(node, (), 0)
    if problems:
        raise ConfigError(file, problems)
    if not isinstance(data, dict):
        raise ConfigError(file, [Problem(lines[()], "", "the configuration must be a mapping of keys")])
    return data, lines


def _toml(text: str, file: str) -> tuple[Any, dict[Loc, int]]:
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - Python 3.10
        import tomli as tomllib  # type: ignore[import-not-found,unused-ignore]
    try:
        data = tomllib.loads(text)
    except RecursionError:
        # tomllib parses nested arrays and inline tables recursively.
        raise ConfigError(file, [Problem(1, "", "TOML arrays or inline tables nested too deeply to read")]) from None
    except tomllib.TOMLDecodeError as exc:
        # tomllib says where in its message: "... (at line 3, column 7)".
        message = str(exc)
        at = message.rfind("line ")
        digits = message[at + 5 :].split(",")[0].split(")")[0] if at >= 0 else ""
        line = int(digits) if digits.isdigit() else 1
        raise ConfigError(file, [Problem(line, "", f"TOML syntax error: {exc}")]) from None
    tool = data.get("tool", {}).get("policylint", {}) if isinstance(data.get("tool"), dict) else {}
    if not isinstance(tool, dict):
        raise ConfigError(file, [Problem(1, "tool.policylint", "must be a table")])
    if _nesting(tool) > MAX_NESTING:
        # Dotted keys nest without recursion in the parser; the walks below do recurse.
        raise ConfigError(file, [Problem(1, "tool.policylint", f"nested too deeply (more than {MAX_NESTING} levels)")])
    return tool, _toml_lines(text, tool)


def _nesting(value: Any) -> int:
    """How deeply tables and arrays nest in `value`, counted without recursion."""
    deepest = 0
    stack = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        deepest = max(deepest, depth)
        if depth > MAX_NESTING:
            break
        if isinstance(item, dict):
            stack.extend((child, depth + 1) for child in item.values())
        elif isinstance(item, list):
            stack.extend((child, depth + 1) for child in item)
    return deepest


_TOKEN_EDGES = frozenset(" \t{,[].\"'=}")


def _table_header(line: str) -> str | None:
    """`tool.policylint.per-file` for a `[tool.policylint.per-file]` (or `[[...]]`) line, else None."""
    stripped = line.split("#", 1)[0].strip()
    if not stripped.startswith("[") or not stripped.endswith("]"):
        return None
    return stripped.strip("[]").replace('"', "").replace("'", "").replace(" ", "")


def _has_token(line: str, token: str) -> bool:
    """Whether `token` occurs in `line` as a whole key or string (between quotes, spaces, `=`...)."""
    at = line.find(token)
    while at >= 0:
        end = at + len(token)
        if (at == 0 or line[at - 1] in _TOKEN_EDGES) and (end == len(line) or line[end] in _TOKEN_EDGES):
            return True
        at = line.find(token, at + 1)
    return False


def _toml_lines(text: str, data: Mapping[str, Any]) -> dict[Loc, int]:
    """Best-effort lines of the keys of `[tool.policylint]` (see the module docstring)."""
    text_lines = text.splitlines()
    inside: list[tuple[int, str]] = []  # (line number, line) of the policylint tables
    table = ""
    for number, line in enumerate(text_lines, 1):
        header = _table_header(line)
        if header is not None:
            table = header
        if table == "tool.policylint" or table.startswith("tool.policylint."):
            inside.append((number, line))
    lines: dict[Loc, int] = {(): inside[0][0] if inside else 1}

    def find(token: str, after: int) -> int | None:
        for number, line in inside:
            if number >= after and _has_token(line.split("#", 1)[0] if "#" not in token else line, token):
                return number
        return None

    def walk(value: Any, loc: Loc, after: int) -> None:
        if isinstance(value, dict):
            for key, child in value.items():
                found = find(str(key), after) or after
                sub: Loc = (*loc, key)
                lines[sub] = found
                walk(child, sub, found)
        elif isinstance(value, list):
            for i, child in enumerate(value):
                found = (find(child, after) if isinstance(child, str) else None) or after
                item: Loc = (*loc, i)
                lines[item] = found
                walk(child, item, after)

    walk(data, (), lines[()])
    return lines


def read(path: str | os.PathLike[str], *, confine: bool = False) -> tuple[Any, dict[Loc, int]]:
    """The raw data of a configuration file and the line of each key (ConfigError if unreadable).

    `confine`: the file was found in the repository, not named on the command line: it must
    resolve inside the repository (policylint.input.named)."""
    name = os.fspath(path)
    if not os.path.lexists(name):
        raise ConfigError(name, [Problem(1, "", "configuration file not found")])
    try:
        data = read_named(
            name, what="configuration file", limit=MAX_CONFIG_BYTES, root=repository_root(name) if confine else None
        )
    except NamedFileError as exc:
        raise ConfigError(name, [Problem(1, "", f"cannot read the configuration file: {exc.problem}")]) from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(name, [Problem(1, "", f"the configuration file is not UTF-8 text (byte {exc.start + 1})")]) from None
    if os.path.basename(name) == PYPROJECT or name.endswith(".toml"):
        return _toml(text, name)
    return _yaml(text, name)


# -- validating ------------------------------------------------------------------------------------

_TYPE_WORDS = {
    "int_type": "an integer",
    "int_parsing": "an integer",
    "bool_type": "true or false",
    "bool_parsing": "true or false",
    "string_type": "a string",
    "list_type": "a list",
    "dict_type": "a mapping",
    "none_required": "null",
}
_UNION_TAGS = frozenset({"int", "bool", "str", "list[str]", "none", "dict[str,PerFileSettings]"})


def _describe(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return f"the boolean {str(value).lower()}"
    if isinstance(value, (int, float)):
        return f"the number {value}"
    if isinstance(value, str):
        return f"the string {value!r}"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "a mapping"
    return type(value).__name__


def _suggest(word: str, candidates: Iterable[str]) -> str:
    from policylint.k8s.names import did_you_mean

    close = did_you_mean(word, candidates, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""


def _pydantic_problems(exc: Any, loaded: LoadedConfig, raw: Mapping[str, Any]) -> list[Problem]:
    from policylint.config.model import Config, PerFileSettings, aliases

    grouped: dict[Loc, list[dict[str, Any]]] = {}
    for err in exc.errors():
        loc: Loc = tuple(err["loc"])
        # A union (`int | bool | str`, `list | null`) reports one error per member, tagged.
        while loc and isinstance(loc[-1], str) and (loc[-1] in _UNION_TAGS or loc[-1].startswith("literal[")):
            loc = loc[:-1]
        grouped.setdefault(loc, []).append(err)
    problems = []
    for loc, errors in grouped.items():
        err = errors[0]
        line = loaded.line(loc)
        kind = err["type"]
        if kind == "extra_forbidden":
            level = aliases(PerFileSettings) if len(loc) == 3 and loc[0] == "per-file" else aliases(Config)
            problems.append(Problem(line, key_text(loc), f"unknown key{_suggest(str(loc[-1]), level)}"))
            continue
        value = err.get("input")
        if kind == "literal_error":
            expected = err.get("ctx", {}).get("expected", "")
            choices = [c.strip().strip("'") for c in expected.replace(" or ", ", ").split(", ")]
            message = f"must be one of {', '.join(choices)}, not {_describe(value)}"
            if isinstance(value, str):
                message += _suggest(value, choices)
        elif all(e["type"] in _TYPE_WORDS for e in errors):
            words = []
            for e in errors:
                word = _TYPE_WORDS[e["type"]]
                if word not in words:
                    words.append(word)
            message = f"must be {' or '.join(words)}, not {_describe(value)}"
        else:
            message = str(err["msg"])
        problems.append(Problem(line, key_text(loc), message))
    return problems


def _rule_problems(loaded: LoadedConfig, raw: Mapping[str, Any]) -> list[Problem]:
    """Rule codes that match no rule, and rule options that a rule does not declare."""
    from policylint.rules import REGISTRY
    from policylint.rules.base import RuleOptionError
    from policylint.rules.engine import Selection

    config = loaded.config
    problems: list[Problem] = []
    names = [*(r.id for r in REGISTRY), *(r.name for r in REGISTRY)]

    def check_codes(codes: Iterable[tuple[str, Loc]]) -> None:
        for code, loc in codes:
            if Selection(select=(code,)).unknown_codes(REGISTRY):
                problems.append(Problem(loaded.line(loc), key_text(loc), f"no rule matches {code!r}{_suggest(code, names)}"))

    def listed(key: str, values: list[str], base: Loc = ()) -> list[tuple[str, Loc]]:
        return [(code, (*base, key, i)) for i, code in enumerate(values)]

    check_codes(listed("select", config.select) + listed("ignore", config.ignore))
    check_codes((code, ("severity", code)) for code in config.severity)
    for pattern, settings in config.per_file.items():
        base: Loc = ("per-file", pattern)
        check_codes(listed("select", settings.select or [], base) + listed("ignore", settings.ignore, base))
        check_codes((code, (*base, "severity", code)) for code in settings.severity)
    by_code = {r.id: r for r in REGISTRY} | {r.name: r for r in REGISTRY}
    for code, options in config.rules.items():
        loc = ("rules", code)
        rule = by_code.get(code) or by_code.get(code.upper())
        if rule is None:
            problems.append(Problem(loaded.line(loc), key_text(loc), f"no rule {code!r}{_suggest(code, names)}"))
            continue
        for option, value in options.items():
            try:
                rule({option: value})
            except RuleOptionError as exc:
                declared = [o.name for o in rule.options]
                hint = _suggest(option, declared) if option not in declared else ""
                where: Loc = (*loc, option)
                problems.append(Problem(loaded.line(where), key_text(where), f"{exc}{hint}"))
    return problems


def _other_problems(loaded: LoadedConfig) -> list[Problem]:
    """Patterns, external object globs, formats and outputs."""
    from policylint.input.ignore import PatternError, compile_patterns
    from policylint.k8s.cluster import bundled_release
    from policylint.k8s.external import ExternalObjects, ExternalPatternError
    from policylint.k8s.schemas import GATEWAY_API_VERSIONS
    from policylint.profiles.implementations import installers
    from policylint.reporters import AUTO, FORMATS

    config = loaded.config
    problems: list[Problem] = []

    def pattern_ok(pattern: str, loc: Loc) -> None:
        try:
            compile_patterns([pattern])
        except PatternError as exc:
            problems.append(Problem(loaded.line(loc), key_text(loc), str(exc)))

    for key in ("exclude", "extend-exclude"):
        for i, pattern in enumerate(getattr(config, key.replace("-", "_"))):
            pattern_ok(pattern, (key, i))
    for pattern in config.per_file:
        pattern_ok(pattern, ("per-file", pattern))
    for i, value in enumerate(config.external):
        try:
            ExternalObjects.parse([value])
        except ExternalPatternError as exc:
            problems.append(Problem(loaded.line(("external", i)), key_text(("external", i)), str(exc)))
    if config.gateway_api_version is not None and bundled_release(config.gateway_api_version) is None:
        problems.append(
            Problem(
                loaded.line(("gateway-api-version",)),
                "gateway-api-version",
                f"Gateway API {config.gateway_api_version} is not bundled (bundled: {', '.join(GATEWAY_API_VERSIONS)});"
                " for another release, list its CRDs under `crd`",
            )
        )
    known = sorted(i.name for i in installers())
    for i, written in enumerate(config.implementations):
        if written.partition("@")[0] not in known:
            problems.append(
                Problem(
                    loaded.line(("implementations", i)),
                    key_text(("implementations", i)),
                    f"unknown implementation {written!r}: one of {', '.join(known)}, optionally with @VERSION",
                )
            )
    if config.format not in (*FORMATS, AUTO):
        choices = (*FORMATS, AUTO)
        problems.append(
            Problem(
                loaded.line(("format",)),
                "format",
                f"unknown format {config.format!r}{_suggest(config.format, choices)} (formats: {', '.join(choices)})",
            )
        )
    for i, value in enumerate(config.output):
        fmt, sep, target = value.partition("=")
        loc = ("output", i)
        if not sep or not target:
            problems.append(Problem(loaded.line(loc), key_text(loc), f"must be FORMAT=PATH, not {value!r}"))
        elif fmt not in FORMATS:
            problems.append(
                Problem(
                    loaded.line(loc),
                    key_text(loc),
                    f"unknown format {fmt!r}{_suggest(fmt, FORMATS)} (formats: {', '.join(FORMATS)})",
                )
            )
    return problems


def load(path: str | os.PathLike[str], *, confine: bool = False) -> LoadedConfig:
    """Read and validate a configuration file (ConfigError when it is not valid); `confine`: it
    was found in the repository rather than named on the command line (`read`)."""
    name = os.fspath(path)
    raw, lines = read(name, confine=confine)
    return _validated(raw, lines, name, name, repository_root(name))


def load_text(text: str, path: str, label: str, root: str) -> LoadedConfig:
    """Validate a configuration's text as `load` validates a file's (ConfigError naming it
    `label`): the file as a git ref holds it (`--config-ref`). `path` is where it sits in the
    working tree (paths in it are relative to its directory), `root` its repository."""
    if len(text.encode("utf-8")) > MAX_CONFIG_BYTES:
        raise ConfigError(label, [Problem(1, "", f"the configuration file is larger than {MAX_CONFIG_BYTES:,} bytes")])
    raw, lines = _toml(text, label) if path.endswith(".toml") else _yaml(text, label)
    return _validated(raw, lines, path, label, root)


def _validated(raw: Any, lines: dict[Loc, int], path: str, label: str, root: str) -> LoadedConfig:
    from pydantic import ValidationError

    from policylint.config.model import Config

    loaded = LoadedConfig(path, None, lines, root)
    try:
        loaded.config = Config.model_validate(raw)
    except ValidationError as exc:
        raise ConfigError(label, _pydantic_problems(exc, loaded, raw)) from None
    problems = _rule_problems(loaded, raw) + _other_problems(loaded)
    if problems:
        raise ConfigError(label, problems)
    return loaded
