"""Kustomize patch files: YAML that sits next to manifests but describes no object.

A `kustomization.yaml` names patches by path: `patches[].path` (strategic-merge or JSON 6902),
`patchesStrategicMerge[]` and `patchesJson6902[].path` (the forms Kustomize deprecated in v5 and
still reads; Kustomize documentation, "patches", "patchesStrategicMerge", "patchesJson6902"). A
strategic-merge patch looks like a manifest, but it holds only the fields it changes of an object
the base defines: linted as a manifest it is that object "defined again" (PL005), missing every
field it leaves alone. What `kustomize build` outputs is what to lint, as for the kustomization
file itself (policylint.input.nonmanifest), so a file a kustomization names as a patch is skipped
and said in the same line.

Only the kustomization files that discovery meets are read: those it skips while walking a
directory, and those in the directory of a file named on the command line (and its parent, where
a kustomization names `patches/<file>`), which is how `pre-commit` passes a changed patch. A
kustomization that cannot be read or parsed names no patch: nothing is skipped on a guess.
"""

from __future__ import annotations

import os
from collections.abc import Iterable

from policylint.input.nonmanifest import KUSTOMIZE_FILES

# A kustomization file is a few hundred bytes; a larger file is not read (nor is it ours to judge).
_MAX_BYTES = 1 << 20


def kustomizations_near(files: Iterable[str]) -> set[str]:
    """The kustomization files in the directory of each of `files`, and in its parent."""
    found: set[str] = set()
    seen: set[str] = set()
    for file in files:
        directory = os.path.dirname(os.path.abspath(file))
        for candidate in (directory, os.path.dirname(directory)):
            if candidate in seen:
                continue
            seen.add(candidate)
            for name in KUSTOMIZE_FILES:
                path = os.path.join(candidate, name)
                if os.path.isfile(path):
                    found.add(path)
    return found


def patch_files(kustomizations: Iterable[str]) -> set[str]:
    """The absolute paths of the files `kustomizations` name as patches."""
    out: set[str] = set()
    for kustomization in kustomizations:
        directory = os.path.dirname(os.path.abspath(kustomization))
        out.update(os.path.normpath(os.path.join(directory, p)) for p in _patch_paths(kustomization))
    return out


def _patch_paths(kustomization: str) -> list[str]:
    import yaml

    try:
        with open(kustomization, "rb") as handle:
            data = handle.read(_MAX_BYTES + 1)
        if len(data) > _MAX_BYTES:
            return []
        loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
        document = yaml.load(data, Loader=loader)  # a safe loader: plain data only
    except (OSError, yaml.YAMLError, ValueError):
        return []
    if not isinstance(document, dict):
        return []
    paths: list[object] = []
    for key in ("patches", "patchesJson6902"):
        entries = document.get(key)
        if isinstance(entries, list):
            paths += [e.get("path") for e in entries if isinstance(e, dict)]
    merge = document.get("patchesStrategicMerge")
    if isinstance(merge, list):
        # An entry is a path or an inline patch (a YAML string holding a newline).
        paths += [e for e in merge if isinstance(e, str) and "\n" not in e]
    return [p for p in paths if isinstance(p, str) and p and not os.path.isabs(p) and "://" not in p]
