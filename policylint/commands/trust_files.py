"""What a change does to the profiles and CRDs the base's configuration names (README
"Security", the trust model).

A `profile:` file says which policy kinds policylint knows and how it checks them; a `crd:` file
(or each `*.yaml`, `*.yml`, `*.json` file under a `crd:` directory) gives the schemas, and their
CEL rules, that validate objects. Whenever there is a base to compare with, each of those files
whose content the change edits, adds or deletes is listed (`changes crd crds/x.yaml`). The edit
**loosens the gate** when it drops something the base checked, which is decided from the files
alone:

- a CRD: a CustomResourceDefinition, a version of it, or a schema node the base has and the
  change no longer has, with the constraints it held; at a schema node, an
  `x-kubernetes-validations` rule (by its `rule` text: an edited rule is a rule dropped), an
  entry of `required`, an `enum` dropped or given a value more, a `pattern`, `format` or `type`
  dropped or changed, a `maxLength`, `maxItems`, `maxProperties` or `maximum` dropped or raised,
  a `minLength`, `minItems`, `minProperties` or `minimum` dropped or lowered, `uniqueItems`,
  `exclusiveMinimum` or `exclusiveMaximum` no longer true, and `nullable` or
  `x-kubernetes-preserve-unknown-fields` made true;
- a profile: a policy kind the base's file describes and the change's does not.

Any other edit (a new rule, a profile's other settings) is listed without loosening. A file the
change's side cannot read or parse counts as dropping all it held. Schema nodes are followed
through `properties`, `items` and `additionalProperties`; other schema keywords are not judged.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator, Mapping
from typing import Any

from policylint.gate import GateChange

PROFILE = "profile"
CRD = "crd"
_SUFFIXES = (".yaml", ".yml", ".json")
# Reasons shown per file; the others are counted.
_SHOWN = 3

# keyword -> how a change of its value loosens: a value dropped or changed ("same"), dropped or
# raised ("max"), dropped or lowered ("min"), no longer true ("true"), made true ("false").
_JUDGED = {
    "pattern": "same",
    "format": "same",
    "type": "same",
    "maxLength": "max",
    "maxItems": "max",
    "maxProperties": "max",
    "maximum": "max",
    "minLength": "min",
    "minItems": "min",
    "minProperties": "min",
    "minimum": "min",
    "uniqueItems": "true",
    "exclusiveMinimum": "true",
    "exclusiveMaximum": "true",
    "nullable": "false",
    "x-kubernetes-preserve-unknown-fields": "false",
}

# A constraint: (CRD name, version, schema path, keyword, detail) -> its value.
Constraints = dict[tuple[str, str, str, str, str], Any]


def file_changes(
    key: str, tree_path: str, base: Mapping[str, bytes | str], head: Mapping[str, bytes | str], head_name: str | None
) -> list[GateChange]:
    """The changes of the files under `tree_path` (the `key` path the base's configuration names)
    from `base` to `head` (tree path -> content, or why it could not be read); `head_name` names
    the change's side in `file` (None: the working tree)."""
    changed = sorted(p for p in base.keys() | head.keys() if base.get(p) != head.get(p))
    if not changed:
        return []
    reasons = _crd_reasons(base, head) if key == CRD else _profile_reasons(base, head)
    out = []
    for path in changed:
        why = reasons.get(path, [])
        verb = "adds" if path not in base else "deletes" if path not in head else "changes"
        message = f"{verb} {key} {path}"
        problem = head.get(path)
        if isinstance(problem, str):
            message += f" (cannot be read: {problem})"
        file = path if head_name is None else f"{head_name}:{path}"
        out.append(GateChange(key, bool(why), file, 1, said(message, why)))
    return out


def said(message: str, reasons: list[str]) -> str:
    """`message`, then the first reasons and how many more."""
    if not reasons:
        return message
    more = f"; and {len(reasons) - _SHOWN} more" if len(reasons) > _SHOWN else ""
    return f"{message}: " + "; ".join(reasons[:_SHOWN]) + more


def removal_reasons(key: str, path: str, base_commit: str, root: str) -> list[str]:
    """What the files of a `key` path (relative to the working directory) at `base_commit`
    check, which removing the path from the configuration drops (none: not in the repository)."""
    from policylint.input.git import GitError
    from policylint.input.gitref import relative_to_root

    try:
        before = files_at(base_commit, relative_to_root(path, root), root, key)
    except GitError:
        return []
    reasons = _crd_reasons(before, {}) if key == CRD else _profile_reasons(before, {})
    return [reason for p in sorted(reasons) for reason in reasons[p]]


def _profile_reasons(base: Mapping[str, bytes | str], head: Mapping[str, bytes | str]) -> dict[str, list[str]]:
    after = {kind for data in head.values() for kind in _profile_kinds(data)}
    out: dict[str, list[str]] = {}
    for path, data in base.items():
        gone = [kind for kind in _profile_kinds(data) if kind not in after]
        if gone:
            out[path] = [f"no longer describes {kind}" for kind in gone]
    return out


def _profile_kinds(data: bytes | str) -> list[str]:
    from policylint.profiles.registry import ProfileError, parse_user_profile

    if isinstance(data, str):
        return []
    try:
        raw = parse_user_profile(data, "profile")
    except ProfileError:
        return []
    policies = raw.get("policies") if isinstance(raw, dict) else None
    kinds = []
    for entry in policies if isinstance(policies, list) else ():
        if isinstance(entry, dict) and isinstance(entry.get("kind"), str):
            kinds.append(f"{entry['kind']}.{entry.get('group', '')}")
    return kinds


def _crd_reasons(base: Mapping[str, bytes | str], head: Mapping[str, bytes | str]) -> dict[str, list[str]]:
    after: Constraints = {}
    for path in sorted(head):
        after.update(_constraints(head[path]))
    out: dict[str, list[str]] = {}
    for path in sorted(base):
        before = _constraints(base[path])
        reasons = [r for item, value in before.items() if (r := _loosened(item, value, after)) is not None]
        # What the change makes true that the base did not have.
        for item, value in after.items():
            crd, version, where, keyword, _ = item
            if _JUDGED.get(keyword) == "false" and value is True and before.get(item) is not True:
                if any(k[:3] == (crd, version, where) for k in before):
                    reasons.append(f"sets {keyword} at {_where(item)}")
        if reasons:
            out[path] = reasons
    return out


def _loosened(item: tuple[str, str, str, str, str], value: Any, after: Constraints) -> str | None:
    keyword = item[3]
    new = after.get(item)
    where = _where(item)
    if keyword == "x-kubernetes-validations":
        return None if item in after else f"drops the rule {_short(item[4])} at {where}"
    if keyword == "required":
        return None if item in after else f"no longer requires {item[4]} at {where}"
    if keyword == "enum":
        if new is None:
            return f"drops the enum at {where}"
        added = sorted(set(new) - set(value))
        return f"adds {', '.join(added[:3])} to the enum at {where}" if added else None
    how = _JUDGED[keyword]
    if how == "false":
        return None
    if new is None:
        return f"drops {keyword} at {where}" if how != "true" or value is True else None
    if how == "same" and new != value:
        return f"changes {keyword} at {where}"
    if how in ("max", "min"):
        old_number, new_number = _number(value), _number(new)
        if old_number is None or new_number is None:
            return f"changes {keyword} at {where}" if new != value else None
        if new_number > old_number if how == "max" else new_number < old_number:
            return f"{'raises' if how == 'max' else 'lowers'} {keyword} at {where}"
    if how == "true" and value is True and new is not True:
        return f"drops {keyword} at {where}"
    return None


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _short(text: str) -> str:
    from policylint.textsafe import escape

    return "`" + escape(text, 80) + "`"


def _where(item: tuple[str, str, str, str, str]) -> str:
    return f"{item[0]} {item[1]} {item[2] or '(root)'}"


def _constraints(data: bytes | str) -> Constraints:
    """Every judged constraint of every CRD in a file's content (none: it cannot be read)."""
    from policylint.input.load import load_bytes

    if isinstance(data, str):
        return {}
    out: Constraints = {}
    for document in load_bytes(data, "crd").documents:
        doc = document.data
        if not isinstance(doc, dict) or doc.get("kind") != "CustomResourceDefinition":
            continue
        spec: dict[str, Any] = _dict(doc.get("spec"))
        names = _dict(spec.get("names"))
        crd = f"{names.get('kind', '?')}.{spec.get('group', '?')}"
        versions = spec.get("versions")
        for version in versions if isinstance(versions, list) else ():
            if not isinstance(version, dict):
                continue
            schema = version.get("schema")
            root = schema.get("openAPIV3Schema") if isinstance(schema, dict) else None
            for where, node in _nodes(root, ""):
                for keyword, detail, value in _node_constraints(node):
                    out[(crd, str(version.get("name", "?")), where, keyword, detail)] = value
    return out


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _nodes(node: Any, where: str, depth: int = 0) -> Iterator[tuple[str, dict[str, Any]]]:
    if not isinstance(node, dict) or depth > 64:
        return
    yield where, node
    properties = node.get("properties")
    if isinstance(properties, dict):
        for name, child in properties.items():
            yield from _nodes(child, f"{where}.{name}" if where else str(name), depth + 1)
    yield from _nodes(node.get("items"), f"{where}[]", depth + 1)
    yield from _nodes(node.get("additionalProperties"), f"{where}{{}}", depth + 1)


def _node_constraints(node: Mapping[str, Any]) -> Iterator[tuple[str, str, Any]]:
    rules = node.get("x-kubernetes-validations")
    for rule in rules if isinstance(rules, list) else ():
        if isinstance(rule, dict) and isinstance(rule.get("rule"), str):
            yield "x-kubernetes-validations", rule["rule"], True
    required = node.get("required")
    for name in required if isinstance(required, list) else ():
        yield "required", str(name), True
    if isinstance(node.get("enum"), list):
        yield "enum", "", [json.dumps(v, sort_keys=True) for v in node["enum"]]
    for keyword in _JUDGED:
        if keyword in node and not isinstance(node[keyword], (dict, list)):
            yield keyword, "", node[keyword]


# -- reading each side ------------------------------------------------------------------------


def files_at(commit: str, tree_path: str, root: str, key: str) -> dict[str, bytes | str]:
    """The files of a `key` path as `commit` (or INDEX) holds them: tree path -> content, or why
    it is not read (policylint.input.gitref.read_tree: regular file blobs within the bounds)."""
    from policylint.input.gitref import read_tree

    files = read_tree(commit, tree_path, root, limit=_limit(key), suffixes=_SUFFIXES)
    return {} if files is None else {f.path: f.data if f.data is not None else str(f.problem) for f in files}


def files_on_disk(path: str, tree_path: str, root: str, key: str) -> dict[str, bytes | str]:
    """The files of a `key` path (relative to the working directory) as the working tree holds
    them, read as the run reads them: only regular files inside the repository, within the
    bounds, never blocking (policylint.input.named, policylint.input.sources)."""
    from policylint.input.named import NamedFileError, read_named

    if not os.path.lexists(path):
        return {}
    if not os.path.isdir(path) or os.path.islink(path):
        try:
            return {tree_path: read_named(path, what=key, limit=_limit(key), root=root)}
        except NamedFileError as exc:
            return {tree_path: exc.problem}
    from policylint.input.ignore import WalkFilter
    from policylint.input.load import read_bytes
    from policylint.input.sources import SourceError, discover

    try:
        sources = discover([path], walk=WalkFilter(exclude=(), respect_gitignore=False))
    except SourceError:
        return {}
    out: dict[str, bytes | str] = {}
    for source in sources:
        if not source.display.endswith(_SUFFIXES):
            continue
        name = os.path.relpath(os.path.abspath(source.fs_path or source.display), root).replace(os.sep, "/")
        data, problem = read_bytes(source)
        out[name] = data if data is not None else (problem.message if problem is not None else "not read")
    return out


def _limit(key: str) -> int:
    from policylint.input.bounds import MAX_FILE_BYTES
    from policylint.input.named import MAX_PROFILE_BYTES

    return MAX_PROFILE_BYTES if key == PROFILE else MAX_FILE_BYTES


def named_file_changes(
    base_paths: Mapping[str, list[str]], base_commit: str, head_commit: str | None, head_name: str | None, root: str
) -> list[GateChange]:
    """What the change does to each file the base's configuration names: `base_paths` is key
    (`profile`, `crd`) -> its paths relative to the working directory, read at `base_commit` and
    on the change's side: `head_commit` (a commit, INDEX) or the working tree (None)."""
    from policylint.input.git import GitError
    from policylint.input.gitref import relative_to_root

    out: list[GateChange] = []
    for key in (PROFILE, CRD):
        for path in base_paths.get(key, ()):
            try:
                tree_path = relative_to_root(path, root)
            except GitError:
                continue  # not in the repository: no commit holds it
            before = files_at(base_commit, tree_path, root, key)
            if head_commit is not None:
                after = files_at(head_commit, tree_path, root, key)
            else:
                after = files_on_disk(path, tree_path, root, key)
            out += file_changes(key, tree_path, before, after, None if head_commit is None else head_name)
    return out
