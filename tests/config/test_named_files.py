"""Files that configuration or a flag names (README "Security", "What it reads"): profiles,
baselines, the configuration file itself, and where reports and the cache go.

A repository's configuration is hostile input in CI. It must not make policylint print a file
from outside the repository (a profile that is one YAML scalar used to be quoted whole in the
error), block on a FIFO or `/proc/self/fd/1`, read `/dev/zero` until memory runs out, expand an
alias bomb, crash on deep TOML, write a report or create a cache directory outside the
repository, or be read itself through a symlink out of it. The command line may still name
files anywhere; they get the same regular-file, non-blocking and size checks.

A run that a regression could make hang or exhaust memory (a special file, an alias bomb, deep
nesting) is a subprocess with a timeout; the runs that read where a path leads and what the
command says of it are made in the test's process (as a process of its own, each cost several
times its lint's CPU in the interpreter's start and the package's imports).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from policylint.cli import cli
from policylint.config.load import MAX_PROBLEMS
from policylint.input.named import NamedFileError, outside_root, read_named, repository_root
from policylint.textsafe import MAX_MESSAGE
from tests.hostile.test_hostile_inputs import GOOD
from tests.lintutil import ROOT

SECRET = "ghp_" + "S3cr3tT0k3n" * 300  # one YAML scalar, 3,300 characters: far past the message cap
TIMEOUT = 30


def run(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """`check` run in this process, in `cwd`, with standard input empty. An exception is raised,
    never taken for an exit code: as a process the command would have said "internal error" and
    exited 2, which a test expecting a usage error would not tell apart."""
    before = os.getcwd()
    os.chdir(cwd)
    try:
        env = {"POLICYLINT_CACHE_DIR": str(cwd.parent / "cache-home")}
        result = CliRunner().invoke(cli, ["check", *args], prog_name="policylint", env=env)
    finally:
        os.chdir(before)
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    return subprocess.CompletedProcess(list(args), result.exit_code, result.stdout, result.stderr)


def run_process(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """`python -m policylint check` as a process, with a timeout: a regression is a hang."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "POLICYLINT_CACHE_DIR": str(cwd.parent / "cache-home")}
    return subprocess.run(
        [sys.executable, "-m", "policylint", "check", *args],
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
    )


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A repository (`.git`) with one good manifest; `../outside/secret` holds a secret."""
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    (root / "good.yaml").write_text(GOOD)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret").write_text(SECRET + "\n")
    return root


def assert_clean_usage_error(result: subprocess.CompletedProcess[str], *needles: str) -> None:
    assert result.returncode == 2, (result.returncode, result.stderr[-2000:])
    assert "Traceback" not in result.stderr and "internal error" not in result.stderr, result.stderr[-2000:]
    assert "S3cr3tT0k3n" not in result.stderr + result.stdout
    for line in result.stderr.splitlines():
        assert len(line) <= MAX_MESSAGE + len("policylint: error: "), line[:200]
    for needle in needles:
        assert needle in result.stderr, result.stderr[-2000:]


# -- defect: content of a named file in an error -------------------------------------------------


def test_a_profile_named_on_the_command_line_is_never_quoted(repo: Path) -> None:
    result = run(repo, ".", "--profile", "../outside/secret")
    assert_clean_usage_error(result, "invalid profile at (top level): must be of type object")


@pytest.mark.parametrize("value", ["../outside/secret", "ABSOLUTE", "link-out"])
def test_a_profile_from_the_configuration_stays_in_the_repository(repo: Path, value: str) -> None:
    (repo / "link-out").symlink_to(repo.parent / "outside" / "secret")
    if value == "ABSOLUTE":
        value = str(repo.parent / "outside" / "secret")
    (repo / ".policylint.yaml").write_text(f"profile: [{value!r}]\n")
    result = run(repo, ".")
    assert_clean_usage_error(result, ".policylint.yaml:1: profile[0]:", "only the command line may name a path outside")
    assert ("symlink" in result.stderr) == (value == "link-out")


def test_schema_errors_of_a_profile_name_no_key_or_value_of_it(repo: Path) -> None:
    (repo / "p.yaml").write_text(f"project: x\npolicies: []\n{SECRET[:200]}: 1\n")  # a key is at most 1,024
    result = run(repo, ".", "--profile", "p.yaml")
    assert_clean_usage_error(result, "invalid profile at (top level): has a key the profile format does not define")
    (repo / "p.yaml").write_text(f"project: x\npolicies:\n- {{group: g, kind: K, targetField: {SECRET}}}\n")
    assert_clean_usage_error(run(repo, ".", "--profile", "p.yaml"), "invalid profile at policies/0")


def test_error_messages_are_capped(repo: Path) -> None:
    long_name = "x" * 3000 + ".json"
    assert_clean_usage_error(run(repo, ".", "--baseline", long_name), "does not exist")
    (repo / ".policylint.yaml").write_text("".join(f"unknown-{i}: 1\n" for i in range(200)))
    result = run(repo, ".")
    assert_clean_usage_error(result, f"{200 - MAX_PROBLEMS} more problems")
    assert len(result.stderr.splitlines()) == MAX_PROBLEMS + 1


# -- defect: named files that block or never end ---------------------------------------------------


@pytest.mark.parametrize("flag", ["--profile", "--baseline", "--config"])
@pytest.mark.parametrize("target", ["fifo", "/dev/zero", "/proc/self/fd/1"])
def test_special_files_named_on_the_command_line_are_refused_unread(repo: Path, flag: str, target: str) -> None:
    if target == "fifo":
        os.mkfifo(repo / "fifo")
    elif not os.path.exists(target):
        pytest.skip(f"{target} does not exist on this system")  # pragma: no cover - Linux has both
    result = run_process(repo, ".", flag, target)
    assert_clean_usage_error(result, "not a regular file")


@pytest.mark.parametrize("key", ["profile", "baseline"])
def test_special_files_named_by_the_configuration_are_refused_unread(repo: Path, key: str) -> None:
    os.mkfifo(repo / "fifo")
    (repo / "zero").symlink_to("/dev/zero")
    for value, needle in (("fifo", "not a regular file: a FIFO"), ("zero", "outside the repository")):
        (repo / ".policylint.yaml").write_text(f"{key}: {value}\n" if key == "baseline" else f"{key}: [{value}]\n")
        assert_clean_usage_error(run_process(repo, "."), needle)


def test_a_named_file_over_its_bound_is_refused_unread(tmp_path: Path) -> None:
    big = tmp_path / "big"
    big.write_bytes(b"x" * 100)
    with pytest.raises(NamedFileError, match="100 bytes is more than a profile can be"):
        read_named(str(big), what="profile", limit=99)
    assert read_named(str(big), what="profile", limit=100) == b"x" * 100


# -- defect: the configuration file's own bounds ---------------------------------------------------


def test_an_alias_bomb_configuration_is_a_configuration_error(repo: Path) -> None:
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    lines += [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 10)}]" for i in range(1, 9)]
    (repo / ".policylint.yaml").write_text("\n".join([*lines, "paths: *a8", ""]))
    assert_clean_usage_error(run_process(repo, "."), "YAML aliases expand this file", "the configuration is not read")


@pytest.mark.parametrize(
    "body",
    [
        "paths = " + "[" * 5000 + "]" * 5000,
        "rules = " + "{a = " * 600 + "1" + "}" * 600,
        "rules." + ".".join(["a"] * 100) + " = 1",
    ],
    ids=["arrays", "inline-tables", "dotted-keys"],
)
def test_a_deeply_nested_pyproject_is_a_configuration_error(repo: Path, body: str) -> None:
    (repo / "pyproject.toml").write_text(f"[tool.policylint]\n{body}\n")
    assert_clean_usage_error(run_process(repo, "."), "pyproject.toml:1:", "nested too deeply")


# -- defect: the configuration file read through a symlink out -----------------------------------


def test_a_configuration_file_linked_out_of_the_repository_is_not_read(repo: Path) -> None:
    (repo / ".policylint.yaml").symlink_to(repo.parent / "outside" / "secret")
    assert_clean_usage_error(run(repo, "."), "cannot read the configuration file: not read: it leads through a symlink out")
    # Named on the command line, a file outside is read.
    (repo.parent / "outside" / "config.yaml").write_text("namespace: app\n")
    result = run(repo, ".", "--config", "../outside/config.yaml", "--format", "json")
    assert result.returncode == 0, result.stderr


def test_a_configuration_file_linked_inside_the_repository_is_read(repo: Path) -> None:
    (repo / "ci").mkdir()
    (repo / "ci" / "policylint.yaml").write_text("paths: [good.yaml]\n")
    (repo / ".policylint.yaml").symlink_to("ci/policylint.yaml")
    result = run(repo, "--format", "json")
    assert result.returncode == 0, result.stderr


def test_a_configuration_file_that_is_a_fifo_is_an_error_not_skipped(repo: Path) -> None:
    os.mkfifo(repo / ".policylint.yaml")
    assert_clean_usage_error(run_process(repo, "."), "not a regular file: a FIFO")


# -- defect: reports and the cache where the configuration says ------------------------------------


@pytest.mark.parametrize("target", ["../victim.json", "linkdir/report.json", ".git/config", "ABSOLUTE"])
def test_an_output_from_the_configuration_stays_in_the_repository(repo: Path, target: str) -> None:
    victim = repo.parent / "victim.json"
    victim.write_text("precious\n")
    (repo / "linkdir").symlink_to(repo.parent / "outside")
    if target == "ABSOLUTE":
        target = str(victim)
    (repo / ".policylint.yaml").write_text(f"output: ['json={target}']\n")
    before = sorted(p.name for p in (repo.parent / "outside").iterdir())
    assert_clean_usage_error(run(repo, "."), ".policylint.yaml:1: output[0]:")
    assert victim.read_text() == "precious\n"
    assert sorted(p.name for p in (repo.parent / "outside").iterdir()) == before
    assert not (repo / ".git" / "config").exists()


def test_outputs_inside_the_repository_and_from_the_command_line_are_written(repo: Path) -> None:
    (repo / ".policylint.yaml").write_text("output: ['json=reports/r.json']\n")
    result = run(repo, ".")
    assert result.returncode == 0, result.stderr
    assert (repo / "reports" / "r.json").is_file()
    result = run(repo, ".", "--output", "sarif=../cli.sarif")  # replaces the file's `output`
    assert result.returncode == 0, result.stderr
    assert (repo.parent / "cli.sarif").is_file()


@pytest.mark.parametrize("target", ["../made-by-policylint", "../empty"])
def test_a_cache_dir_from_the_configuration_stays_in_the_repository(repo: Path, target: str) -> None:
    (repo.parent / "empty").mkdir()
    (repo / ".policylint.yaml").write_text(f"cache-dir: {target}\n")
    assert_clean_usage_error(run(repo, "."), ".policylint.yaml:1: cache-dir:")
    assert not (repo.parent / "made-by-policylint").exists()
    assert list((repo.parent / "empty").iterdir()) == []


def test_a_baseline_from_the_configuration_is_not_written_outside(repo: Path) -> None:
    (repo / ".policylint.yaml").write_text("baseline: ../outside/b.json\n")
    assert_clean_usage_error(run(repo, ".", "--write-baseline"), ".policylint.yaml:1: baseline:")
    assert not (repo.parent / "outside" / "b.json").exists()
    # From the command line it may go anywhere.
    result = run(repo, ".", "--write-baseline", "--baseline", "../outside/b.json")
    assert result.returncode == 0, result.stderr
    assert (repo.parent / "outside" / "b.json").is_file()


# -- the pieces ------------------------------------------------------------------------------------


def test_outside_root_resolves_links_and_dots(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / "sub").mkdir()
    (tmp_path / "in").symlink_to("sub")
    (tmp_path / "out").symlink_to("/")
    root = repository_root(str(tmp_path / "sub" / ".policylint.yaml"))
    assert root == os.path.realpath(tmp_path)
    assert outside_root(str(tmp_path / "in" / "x"), root) is None
    assert outside_root(str(tmp_path / "sub" / ".." / "x"), root) is None
    assert "symlink" in (outside_root(str(tmp_path / "out" / "etc"), root) or "")
    assert "outside the repository" in (outside_root(str(tmp_path / ".." / "x"), root) or "")
