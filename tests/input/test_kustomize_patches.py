"""Files a kustomization names as patches are not manifests (policylint/input/kustomize_patches.py):
a base and two overlays, each patching the base's route, as a Kustomize repository lays them out.
Linted as manifests, each patch is the route "defined again" (PL005)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from policylint.cli import cli

ROUTE = """\
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata:
  name: shop
  namespace: team-x
spec:
  parentRefs:
  - name: eg
    namespace: infra
  rules:
  - backendRefs:
    - name: shop
      port: 8080
"""
# A strategic-merge patch: the route's identity and the one field it changes.
PATCH = """\
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata:
  name: shop
  namespace: team-x
spec:
  hostnames:
  - {host}
"""
JSON6902 = "- op: add\n  path: /spec/rules/0/timeouts\n  value: {request: 10s}\n"


EXTERNAL = ("--external", "Gateway/infra/eg", "--external", "Service/team-x/shop")  # not in the tree


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


@pytest.fixture
def tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    write(tmp_path / "base/route.yaml", ROUTE)
    write(tmp_path / "base/kustomization.yaml", "resources:\n- route.yaml\n")
    # The forms Kustomize reads: `patches` (strategic merge and JSON 6902 alike, by path).
    write(tmp_path / "overlays/prod/route-patch.yaml", PATCH.format(host="shop.example.com"))
    write(tmp_path / "overlays/prod/patches/timeouts.yaml", JSON6902)
    write(
        tmp_path / "overlays/prod/kustomization.yaml",
        "resources:\n- ../../base\npatches:\n- path: route-patch.yaml\n- path: patches/timeouts.yaml\n"
        "  target: {kind: HTTPRoute, name: shop}\n",
    )
    # And the deprecated ones, with an inline patch that names no file.
    write(tmp_path / "overlays/dev/route-patch.yaml", PATCH.format(host="dev.example.com"))
    write(tmp_path / "overlays/dev/timeouts.yaml", JSON6902)
    write(
        tmp_path / "overlays/dev/kustomization.yaml",
        "resources:\n- ../../base\npatchesStrategicMerge:\n- route-patch.yaml\n- |-\n  apiVersion: v1\n  kind: Service\n"
        "patchesJson6902:\n- target: {group: gateway.networking.k8s.io, version: v1, kind: HTTPRoute, name: shop}\n"
        "  path: timeouts.yaml\n",
    )
    monkeypatch.chdir(tmp_path)
    return tmp_path


def run(*args: str) -> tuple[Result, list[tuple[str, str, int]]]:
    result = CliRunner().invoke(cli, ["check", "--no-cache", "--format", "json", *args])
    assert result.exit_code in (0, 1), result.output
    report: dict[str, Any] = json.loads(result.stdout)
    return result, [(f["rule"], f["file"], f["line"]) for f in report["findings"]]


def test_patches_of_a_walked_repository_are_skipped_and_said(tree: Path) -> None:
    result, found = run(".", *EXTERNAL)
    assert found == []  # before: PL005 on each overlay's patch, PL003 on the JSON 6902 ones
    assert json.loads(result.stdout)["summary"]["files"] == 1  # base/route.yaml
    assert "not manifests, skipped: 3 Kustomize files, 4 Kustomize patches; lint what `kustomize build`" in result.stderr


def test_a_patch_named_on_the_command_line_is_skipped(tree: Path) -> None:
    # As pre-commit passes a changed patch: its kustomization is in its directory or the parent.
    result, found = run("overlays/prod/route-patch.yaml", "overlays/prod/patches/timeouts.yaml", "base/route.yaml", *EXTERNAL)
    assert found == []  # before: PL005 and PL410 on the strategic-merge patch, PL003 on the other
    assert "skipped: 2 Kustomize patches" in result.stderr


def test_a_file_no_kustomization_names_as_a_patch_is_linted(tree: Path) -> None:
    (tree / "overlays/prod/kustomization.yaml").write_text("resources:\n- ../../base\n- route-patch.yaml\n")
    _, found = run("overlays/prod", "base", *EXTERNAL)
    # A resource of its own, then: an object the base defines again, with no parentRefs.
    assert [(rule, file) for rule, file, _ in found] == [
        ("PL003", "overlays/prod/patches/timeouts.yaml"),
        ("PL005", "overlays/prod/route-patch.yaml"),
        ("PL410", "overlays/prod/route-patch.yaml"),
    ]


def test_an_unreadable_kustomization_names_no_patch(tree: Path) -> None:
    (tree / "overlays/prod/kustomization.yaml").write_text("patches: [\n")  # the flow sequence never ends
    _, found = run(
        "overlays/prod/route-patch.yaml", "base/route.yaml", "--external", "Gateway/infra/eg", "--external", "Service/team-x/shop"
    )
    assert [rule for rule, _, _ in found] == ["PL005", "PL410"]
