"""Files that sit next to manifests in a real repository but are not manifests.

A GitOps repository holds Kustomize files, Helm charts, CI workflows and tool configuration
next to its manifests, and `pre-commit` hands a hook every staged `*.yaml` file. None of them
describes an object the API server would receive as written, so linting them would only make
noise (PL003, PL004, PL009). They are recognised by name, never by content, so that the
decision costs no parsing and is the same with and without the parse cache:

- Kustomize: `kustomization.yaml`, `kustomization.yml` and `Kustomization`, the three names
  `kustomize build` reads (kubectl documentation, "Declarative Management of Kubernetes Objects
  Using Kustomize"). What `kustomize build` outputs is what to lint.
- Kustomize patches: the files a kustomization names under `patches`, `patchesStrategicMerge`
  or `patchesJson6902` (the one decision read from content: policylint.input.kustomize_patches).
- Helm: in a directory holding `Chart.yaml` (a chart, Helm documentation "The Chart File
  Structure"): `Chart.yaml`, `values*.yaml`/`.yml`, `values.schema.json`, and the `templates/`
  directory, whose files are Go templates rather than YAML until `helm template` renders them
  (linted only when asked: `helm-templates`). A chart's `crds/` directory holds plain
  manifests and is linted.
- Tool configuration: GitHub Actions workflows (`.github/workflows/`), and the configuration
  files of common tools listed in `TOOL_FILES` (mkdocs, pre-commit, npm, TypeScript, ...).

One kind of file is recognised by its content instead, once it is parsed: a `.json` file whose
one value is not a Kubernetes object (no `apiVersion` and no `kind` at its top: a JWKS, a key,
a dashboard). JSON is how data travels next to manifests (Envoy Gateway's examples keep
`jwks.json` beside the policy that reads it), while a JSON manifest always names its kind.
(`json_data_files`; a YAML document without them stays PL003, info: it is more often a manifest
that lost its kind.)

Skipped files are listed in the run's one-line summary of what was not linted
(`policylint.commands.check`), never as findings.
"""

from __future__ import annotations

import fnmatch
import os
import re
from collections.abc import Collection, Iterable
from typing import Any

KUSTOMIZE = "kustomize"
KUSTOMIZE_PATCH = "kustomize-patch"  # a file a kustomization names as a patch (policylint.input.kustomize_patches)
HELM = "helm"
TOOL = "tool"
DATA = "data"  # a .json file that is no Kubernetes object (`json_data_files`)

KUSTOMIZE_FILES = frozenset({"kustomization.yaml", "kustomization.yml", "Kustomization"})
CHART_FILE = "Chart.yaml"
CHART_TEMPLATES = "templates"
_CHART_VALUES = ("values*.yaml", "values*.yml", "values.schema.json")

# Configuration files of tools, by file name (lowercase glob). Each is a well-known name with a
# fixed meaning that no Kubernetes tool reads as manifests.
TOOL_FILES = (
    "mkdocs.yml",
    "mkdocs.yaml",
    ".pre-commit-config.yaml",
    ".pre-commit-hooks.yaml",
    ".yamllint",
    ".yamllint.yaml",
    ".yamllint.yml",
    ".gitlab-ci.yml",
    ".travis.yml",
    "azure-pipelines.yml",
    "bitbucket-pipelines.yml",
    "codecov.yml",
    ".codecov.yml",
    "docker-compose*.yml",
    "docker-compose*.yaml",
    "compose.yml",
    "compose.yaml",
    "action.yml",
    "action.yaml",
    "pnpm-lock.yaml",
    "pnpm-workspace.yaml",
    ".policylint.yaml",
    ".policylint.yml",
    "package.json",
    "package-lock.json",
    "tsconfig*.json",
    "jsconfig*.json",
    "composer.json",
    "renovate.json",
    "deno.json",
    "biome.json",
    "lerna.json",
    "nx.json",
    "turbo.json",
    "angular.json",
    "tslint.json",
    "devcontainer.json",
    ".devcontainer.json",
    "cspell.json",
)
_GITHUB_DIRS = ("workflows", "ISSUE_TEMPLATE")

# The globs above as one regular expression each (`fnmatch.translate`, as `fnmatchcase` matches
# them): one match per walked file instead of one call per glob.
_TOOL_FILE = re.compile("|".join(fnmatch.translate(pattern) for pattern in TOOL_FILES))
_CHART_VALUES_FILE = re.compile("|".join(fnmatch.translate(pattern) for pattern in _CHART_VALUES))


def tool_file(name: str) -> bool:
    return _TOOL_FILE.match(name.lower()) is not None


def chart_file(name: str) -> bool:
    """A file of a chart's own directory that is not a manifest (the directory holds Chart.yaml)."""
    return name == CHART_FILE or _CHART_VALUES_FILE.match(name.lower()) is not None


def classify_name(name: str, *, in_chart: bool) -> str | None:
    """The kind of non-manifest a walked file is by its name (None: a manifest, as far as names go).
    `in_chart`: its directory holds Chart.yaml."""
    if name in KUSTOMIZE_FILES:
        return KUSTOMIZE
    if in_chart and chart_file(name):
        return HELM
    if tool_file(name):
        return TOOL
    return None


def classify_path(path: str, *, helm_templates: bool, directories: dict[str, tuple[bool, bool]] | None = None) -> str | None:
    """The kind of non-manifest a file named on the command line is (None: lint it).

    Besides its name, its directories count: a file under `.github/workflows/`, a chart's values
    file, and (unless `helm_templates`) a file under a chart's `templates/`. `directories`: what
    was found of each directory already (`_directory`), for a caller classifying many files in one
    go (a commit's tree): the same for every file of a directory, whose walk up was most of the
    cost of each file of a repository's base side.
    """
    directory, name = os.path.split(os.path.normpath(path))
    return classify_in(directory, name, helm_templates=helm_templates, directories=directories)


def classify_in(
    directory: str, name: str, *, helm_templates: bool, directories: dict[str, tuple[bool, bool]] | None = None
) -> str | None:
    """`classify_path` of a file `name` in `directory`, as `os.path.split` of its normalised path
    gives them: for a caller that has them apart already (a commit's tree, every path of which
    git lists normalised), without normpath's parse of the whole path per file."""
    if name in KUSTOMIZE_FILES:
        return KUSTOMIZE
    if tool_file(name):
        return TOOL
    found = directories.get(directory) if directories is not None else None
    if found is None:
        found = _directory(directory, helm_templates)
        if directories is not None:
            directories[directory] = found
    tools, templates = found
    if tools:
        return TOOL
    if chart_file(name) and os.path.isfile(os.path.join(directory or ".", CHART_FILE)):
        return HELM
    return HELM if templates else None


def _directory(directory: str, helm_templates: bool) -> tuple[bool, bool]:
    """Whether a file in `directory` lies under `.github/workflows/` (or another directory of
    GitHub's own files), and, unless `helm_templates`, under a chart's `templates/`."""
    current = os.path.abspath(directory or ".")
    parts = current.split(os.sep)
    tools = any(part == ".github" and parts[i + 1] in _GITHUB_DIRS for i, part in enumerate(parts[:-1]))
    if tools or helm_templates:
        return tools, False
    # A template may sit in a subdirectory of templates/ (templates/tests/).
    for _ in range(8):
        parent = os.path.dirname(current)
        if os.path.basename(current) == CHART_TEMPLATES and os.path.isfile(os.path.join(parent, CHART_FILE)):
            return False, True
        if parent == current:
            break
        current = parent
    return False, False


def json_data_files(documents: Iterable[tuple[str, Any]], files_with_issues: Collection[str]) -> set[str]:
    """The `.json` files, among those of `documents` ((file, parsed value) pairs), that hold one
    value with neither `apiVersion` nor `kind` at its top, and that loading found nothing wrong
    with (a file that is not valid JSON is PL003 or PL001 as before)."""
    values: dict[str, list[Any]] = {}
    for file, data in documents:
        if file.lower().endswith(".json") and file not in files_with_issues:
            values.setdefault(file, []).append(data)
    return {
        file
        for file, found in values.items()
        if len(found) == 1 and not (isinstance(found[0], dict) and ("apiVersion" in found[0] or "kind" in found[0]))
    }
