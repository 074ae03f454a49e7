"""`policylint check --watch`: what changed since the last run, and Ctrl-C's exit code."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from policylint.cli import cli
from policylint.commands.watch import EXIT_INTERRUPTED, run_watch
from tests.editor.test_server import GATEWAY, POLICY, ROUTE


@pytest.fixture
def workspace(tmp_path: Path) -> Iterator[Path]:
    (tmp_path / "gateway.yaml").write_text(GATEWAY)
    (tmp_path / "route.yaml").write_text(ROUTE)
    (tmp_path / "policy.yaml").write_text(POLICY)
    before = os.getcwd()
    os.chdir(tmp_path)
    try:
        yield tmp_path
    finally:
        os.chdir(before)


def test_each_run_shows_what_appeared_and_what_went(workspace: Path, capsys: pytest.CaptureFixture[str]) -> None:
    outputs: list[str] = []
    clears: list[int] = []

    def changes() -> Iterator[object]:
        outputs.append(capsys.readouterr().out)
        (workspace / "route.yaml").write_text(ROUTE.replace("name: web\n", "name: webx\n", 1))
        yield {"route.yaml"}
        outputs.append(capsys.readouterr().out)
        (workspace / "route.yaml").write_text(ROUTE)
        yield {"route.yaml"}
        outputs.append(capsys.readouterr().out)
        yield {"gateway.yaml"}
        outputs.append(capsys.readouterr().out)
        raise KeyboardInterrupt

    assert run_watch((), {}, changes=changes(), clear=lambda: clears.append(1)) == EXIT_INTERRUPTED
    assert len(clears) == 4
    first, broken, mended, same = (o.splitlines()[1:] for o in outputs)
    assert first == ["0 findings (0 errors): 0 new, 0 gone"]
    assert broken[0].startswith("+ policy.yaml:10:7: PL201 error: ")
    assert broken[1:] == ["1 findings (1 errors): 1 new, 0 gone"]
    assert mended[0].startswith("- policy.yaml:10:7: PL201 error: ")
    assert same == ["no change in the findings", "0 findings (0 errors): 0 new, 0 gone"]


def test_watch_takes_no_flag_it_would_ignore(workspace: Path) -> None:
    result = CliRunner().invoke(cli, ["check", "--watch", "--select", "PL2", "."])
    assert result.exit_code == 2
    assert "--watch reads the configuration file found here and PATHS only: not with --select" in result.output
