"""The shipped pre-commit hooks, run by the real `pre-commit` tool in a temporary git repository
whose configuration names this checkout as the hooks' repository: pre-commit installs the checkout
into its own environment, passes the changed files, and the hook reports what the change breaks and
nothing it did not touch.

The checkout is installed as `pre-commit try-repo` installs it (the working tree, uncommitted
changes included, as a commit of a shadow clone), but once for the module: try-repo keeps its
environments in a directory of its own that it deletes when it ends, whatever PRE_COMMIT_HOME says,
so that each test installed the checkout and its dependencies again (most of each test's time). A
configuration, as users write one, has pre-commit keep one environment per repository and revision
under PRE_COMMIT_HOME: the first test installs it and the others run the hooks from it, as a user's
second commit does. The module's tests share one worker (`xdist_group`), so that the checkout is
installed once per suite, not once per worker.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.gitrepo import commit, git, init
from tests.lintutil import ROOT
from tests.scope.test_change_gate import APP, QUICKSTART, lay_out
from tests.scope.test_git_diff import GATEWAY, OLD_MISTAKE, POLICY

# Slow (the hooks installed and run through pre-commit in real repositories): `make test` leaves it to `make test-all` (.ci/run).
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("pre-commit")]


@pytest.fixture(scope="module")
def pre_commit_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("pre-commit-home")


@dataclass(frozen=True)
class Hooks:
    """The shipped hooks as a repository's configuration names them: this checkout, at the
    revision `pre-commit try-repo` would install (`_revision`), its environment kept in `home`."""

    home: Path
    source: tuple[str, str]  # (repository, revision)
    configs: dict[str, Path]  # per hook id, a configuration naming that hook alone

    def run(self, repo: Path, hook: str, *args: str) -> subprocess.CompletedProcess[str]:
        """`pre-commit run HOOK ARGS` in `repo`."""
        env = {**os.environ, "PRE_COMMIT_HOME": str(self.home), "PRE_COMMIT_COLOR": "never"}
        return subprocess.run(
            [sys.executable, "-m", "pre_commit", "run", "--config", str(self.configs[hook]), hook, *args],
            cwd=repo,
            env=env,
            capture_output=True,
            text=True,
            check=False,
            timeout=900,
        )


@pytest.fixture(scope="module")
def hooks(tmp_path_factory: pytest.TempPathFactory, pre_commit_home: Path) -> Hooks:
    import yaml

    # Outside the test repositories, as try-repo keeps its configuration.
    scratch = tmp_path_factory.mktemp("hooks-repo")
    repo, rev = _revision(scratch)
    configs = {}
    for hook in ("policylint", "policylint-diff"):
        configs[hook] = scratch / f"{hook}.yaml"
        configs[hook].write_text(yaml.safe_dump({"repos": [{"repo": repo, "rev": rev, "hooks": [{"id": hook}]}]}))
    return Hooks(pre_commit_home, (repo, rev), configs)


def _revision(scratch: Path) -> tuple[str, str]:
    """(repository, revision) of this checkout's working tree as `pre-commit try-repo` chooses them
    (pre_commit/commands/try_repo.py, `_repo_ref`): HEAD where the tracked files are HEAD's, else a
    commit in a shadow clone of the staged files and the tracked files as they are."""
    head = git(ROOT, "rev-parse", "HEAD").strip()
    if subprocess.run(["git", "diff", "--quiet", "--no-ext-diff", "HEAD"], cwd=ROOT, check=False).returncode == 0:
        return str(ROOT), head
    shadow = scratch / "shadow-repo"
    git(scratch, "clone", "-q", str(ROOT), str(shadow))
    git(shadow, "checkout", "-q", head, "-b", "_pc_tmp")
    # The checkout's changes go to the shadow's index and objects, the checkout's own left alone.
    index, objects = (shadow / git(shadow, "rev-parse", "--git-path", name).strip() for name in ("index", "objects"))
    env = {**os.environ, "GIT_INDEX_FILE": str(index), "GIT_OBJECT_DIRECTORY": str(objects)}
    staged = git(ROOT, "diff", "--staged", "--name-only", "--no-ext-diff", "-z", "--diff-filter=ACMRTUXB").split("\0")
    for command in (["add", "--", *filter(None, staged)], ["add", "-u"]):
        subprocess.run(["git", *command], cwd=ROOT, env=env, check=True, capture_output=True)
    for key, value in (("user.name", "pre-commit"), ("user.email", "pre-commit@example.com")):
        git(shadow, "config", key, value)
    git(shadow, "commit", "-q", "--no-verify", "-m", "init")
    return str(shadow), git(shadow, "rev-parse", "HEAD").strip()


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = init(tmp_path / "repo")
    (root / "gateway.yaml").write_text(GATEWAY)
    (root / "policy.yaml").write_text(POLICY)
    (root / "legacy.yaml").write_text(OLD_MISTAKE)  # an old finding nobody touches
    commit(root)
    return root


def test_the_hooks_run_from_one_environment_of_the_checkout(repo: Path, hooks: Hooks) -> None:
    """Each run takes the environment pre-commit keeps under PRE_COMMIT_HOME for the checkout's
    revision, installed once for the module (try-repo installed one for every run, and kept none)."""
    for _ in range(2):
        proc = hooks.run(repo, "policylint", "--all-files")
        assert proc.returncode == 0 and "policylint...." in proc.stdout and "Passed" in proc.stdout, proc.stdout + proc.stderr
    with contextlib.closing(sqlite3.connect(hooks.home / "db.db")) as db:
        installed = db.execute("SELECT repo, ref, path FROM repos").fetchall()
    assert [(source, rev) for source, rev, _ in installed] == [hooks.source]
    assert len(list(Path(installed[0][2]).glob("py_env-*"))) == 1


def test_a_one_file_change_resolves_references_in_other_files(repo: Path, hooks: Hooks) -> None:
    (repo / "policy.yaml").write_text(POLICY + "# reviewed\n")
    git(repo, "add", "policy.yaml")
    proc = hooks.run(repo, "policylint", "--files", "policy.yaml")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "policylint" in proc.stdout and "Passed" in proc.stdout
    assert "PL201" not in proc.stdout and "PL410" not in proc.stdout


def test_a_change_that_breaks_a_policy_in_another_file_fails_the_commit(repo: Path, hooks: Hooks) -> None:
    (repo / "gateway.yaml").write_text(GATEWAY.replace("name: http", "name: web"))
    git(repo, "add", "gateway.yaml")
    proc = hooks.run(repo, "policylint", "--files", "gateway.yaml")
    assert proc.returncode == 1
    assert "policy.yaml:11:5: error PL301 listener http not found on Gateway edge; have: web" in proc.stdout
    assert "PL410" not in proc.stdout  # legacy.yaml was not touched


def test_the_diff_hook_reports_the_branch_against_its_base(repo: Path, hooks: Hooks) -> None:
    git(repo, "checkout", "-q", "-b", "feature")
    git(repo, "branch", "-q", "--set-upstream-to", "main")
    (repo / "gateway.yaml").write_text(GATEWAY.replace("name: http", "name: web"))
    git(repo, "commit", "-q", "-am", "rename the listener")
    proc = hooks.run(repo, "policylint-diff", "--hook-stage", "manual", "--all-files")
    assert proc.returncode == 1
    assert "error PL301" in proc.stdout and "PL410" not in proc.stdout
    base = git(repo, "rev-parse", "main").strip()
    assert f"policylint: --diff compares with the merge-base of HEAD and main ({base[:12]})" in proc.stdout


def test_the_diff_hook_without_a_base_fails_and_says_why(repo: Path, hooks: Hooks) -> None:
    # No upstream and no remote: comparing with HEAD would pass whatever the branch's commits hold.
    (repo / "gateway.yaml").write_text(GATEWAY.replace("name: http", "name: web"))
    git(repo, "commit", "-q", "-am", "rename the listener")
    proc = hooks.run(repo, "policylint-diff", "--hook-stage", "manual", "--all-files")
    assert proc.returncode == 1 and "- exit code: 2" in proc.stdout, proc.stdout + proc.stderr
    assert "no base to compare with: the branch has no upstream and there is no origin/HEAD" in proc.stdout


@pytest.fixture
def teams(tmp_path: Path) -> Path:
    """A platform directory with the shared Gateway, and team directories whose policies target
    objects in other files; two old findings under apps/ depend on platform/quickstart.yaml."""
    root = init(tmp_path / "teams")
    lay_out(root)
    commit(root)
    return root


@pytest.mark.parametrize(
    "edit",
    [
        pytest.param(lambda app: app.replace("name: shop\n  namespace", "name: store\n  namespace", 1), id="renamed"),
        pytest.param(lambda app: app.split("---\n")[1], id="document-deleted"),
    ],
)
def test_renaming_or_deleting_a_target_in_another_file_fails_the_hook(teams: Path, hooks: Hooks, edit: Any) -> None:
    (teams / "apps/team-x/app.yaml").write_text(edit(APP))
    git(teams, "add", "apps/team-x/app.yaml")
    proc = hooks.run(teams, "policylint")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "apps/team-x/policies.yaml:10:5: error PL201 HTTPRoute 'shop' not found in namespace team-x" in proc.stdout


def test_deleting_the_file_that_holds_a_target_fails_the_hook(teams: Path, hooks: Hooks) -> None:
    # pre-commit passes no deleted file to a hook: the change is read from git.
    git(teams, "rm", "-q", "apps/team-x/app.yaml")
    proc = hooks.run(teams, "policylint")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "apps/team-x/policies.yaml:10:5: error PL201 HTTPRoute 'shop' not found in namespace team-x" in proc.stdout


def test_a_comment_in_a_file_old_findings_depend_on_passes_the_hook(teams: Path, hooks: Hooks) -> None:
    (teams / "platform/quickstart.yaml").write_text(QUICKSTART + "# owned by the platform team\n")
    git(teams, "add", "platform/quickstart.yaml")
    proc = hooks.run(teams, "policylint", "--verbose")  # a hook that passes shows its output only so
    assert proc.returncode == 0, proc.stdout + proc.stderr
    # Reported, as pre-existing, and not failed on.
    assert "apps/team-x/legacy.yaml:22:5: error PL301 listener https not found on Gateway eg" in proc.stdout
    assert proc.stdout.count("    pre-existing: at HEAD too") == 2
    assert "against HEAD: 0 introduced, 2 pre-existing" in proc.stdout


def test_all_files_with_nothing_staged_fails_on_every_finding(teams: Path, hooks: Hooks) -> None:
    # `pre-commit run --all-files` in CI: no change to measure, so old findings count.
    proc = hooks.run(teams, "policylint", "--all-files")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "apps/team-x/legacy.yaml:10:5: error PL407" in proc.stdout
    assert "nothing is staged" in proc.stdout


def test_a_file_named_like_an_option_is_linted_not_obeyed(repo: Path, hooks: Hooks) -> None:
    # Read as options, these names would write the report into the tree and pass the commit.
    name = "--output=json=report.yaml"
    (repo / name).write_text("apiVersion: v1\nkind: [\n")  # the flow sequence never ends
    git(repo, "add", "--", name)
    # `--all-files`: pre-commit's own command line would take the name for an option too.
    proc = hooks.run(repo, "policylint", "--all-files")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert f"{name}:2:8: error PL001" in proc.stdout
    assert not (repo / "report.yaml").exists()


def test_a_staged_configuration_that_turns_a_rule_off_fails_the_commit(repo: Path, hooks: Hooks) -> None:
    (repo / ".policylint.yaml").write_text("fail-on: error\n")
    git(repo, "add", ".policylint.yaml")
    git(repo, "commit", "-q", "-m", "configuration")
    (repo / ".policylint.yaml").write_text("fail-on: error\nignore: [PL301]\n")
    git(repo, "add", ".policylint.yaml")
    proc = hooks.run(repo, "policylint", "--files", ".policylint.yaml")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert (
        # The staged file, as the commit will hold it.
        "gate: the change loosens the gate (against configuration at HEAD): adds 1 rule ignored by index:.policylint.yaml:2"
        in proc.stdout
    )


def test_amending_the_hook_compares_with_the_commit_replaced_and_the_recipe_with_its_parent(repo: Path, hooks: Hooks) -> None:
    # A pre-commit hook cannot tell `git commit --amend` from a commit (git gives it the same
    # arguments and environment), so the hook compares with HEAD, the commit being replaced: what
    # that commit introduced passes as pre-existing (README "pre-commit", amending).
    (repo / "gateway.yaml").write_text(GATEWAY.replace("name: http", "name: web"))
    git(repo, "commit", "-q", "--no-verify", "-am", "rename the listener")
    (repo / "gateway.yaml").write_text(GATEWAY.replace("name: http", "name: web") + "# reviewed\n")
    git(repo, "add", "gateway.yaml")
    hook = hooks.run(repo, "policylint", "--verbose")
    assert hook.returncode == 0, hook.stdout + hook.stderr
    assert "policy.yaml:11:5: error PL301 listener http not found on Gateway edge; have: web" in hook.stdout
    assert "against HEAD: 0 introduced, 2 pre-existing" in hook.stdout  # PL405 too, at both
    # The documented recipe: the staged commit against the parent of the commit it replaces.
    recipe = subprocess.run(
        [sys.executable, "-m", "policylint", "check", "--no-cache", "--staged", "--diff", "HEAD~1"],
        cwd=repo,
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )
    assert recipe.returncode == 1, recipe.stdout + recipe.stderr
    assert "policy.yaml:11:5: error PL301 listener http not found on Gateway edge; have: web" in recipe.stdout
    assert "against HEAD~1: 1 introduced, 1 pre-existing" in recipe.stderr  # the summary line
    assert "PL410" not in recipe.stdout  # legacy.yaml is older than both commits


# -- pre-push, as `pre-commit install --hook-type pre-push` runs the hooks ----------------------


@pytest.fixture
def pushing(tmp_path: Path, pre_commit_home: Path) -> Path:
    """The teams' repository with a bare remote, the shipped hooks installed for pre-push only.
    The hooks are the manifest's own (stages and entry), run from this checkout (`language:
    system`, `python -m policylint`): a real `git push` runs them as it runs an installed hook."""
    import yaml

    remote = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(remote))
    root = init(tmp_path / "pushing")
    lay_out(root)
    hooks = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))
    for hook in hooks:
        hook["entry"] = hook["entry"].replace("policylint", f"{sys.executable} -m policylint", 1) + " --no-cache"
        hook["language"] = "system"
    (root / ".pre-commit-config.yaml").write_text(yaml.safe_dump({"repos": [{"repo": "local", "hooks": hooks}]}))
    git(root, "add", ".")
    git(root, "commit", "-q", "-m", "base")
    git(root, "remote", "add", "origin", str(remote))
    env = {**os.environ, "PRE_COMMIT_HOME": str(pre_commit_home), "PYTHONPATH": str(ROOT)}
    subprocess.run([sys.executable, "-m", "pre_commit", "install", "--hook-type", "pre-push"], cwd=root, env=env, check=True)
    return root


def push(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PRE_COMMIT_COLOR": "never", "PYTHONPATH": str(ROOT)}
    return subprocess.run(["git", "push", *args], cwd=root, env=env, capture_output=True, text=True, check=False, timeout=900)


def test_the_root_push_has_no_base_and_every_finding_counts(pushing: Path) -> None:
    proc = push(pushing, "-u", "origin", "main")
    assert proc.returncode != 0, proc.stdout + proc.stderr
    out = proc.stdout + proc.stderr
    assert "the push holds the branch's root commit: there is no base: the PATHs are checked whole" in out, out
    assert "apps/team-x/legacy.yaml:10:5: error PL407" in out, out


def test_a_new_branchs_first_push_is_measured_from_where_it_forks(pushing: Path) -> None:
    git(pushing, "push", "-q", "--no-verify", "origin", "main")
    base = git(pushing, "rev-parse", "HEAD").strip()
    # A comment: the old findings about platform/ are pre-existing, and the policylint hook, which
    # would count them with nothing staged, does not run at pre-push.
    git(pushing, "checkout", "-q", "-b", "comment")
    (pushing / "platform/quickstart.yaml").write_text(QUICKSTART + "# reviewed\n")
    git(pushing, "commit", "-q", "-am", "a comment")
    # Work not committed is not what the push sends: not linted (staged, so that pre-commit,
    # which sets unstaged changes aside while hooks run, leaves it in the working tree).
    (pushing / "apps/team-x/app.yaml").write_text(APP.replace("name: shop\n  namespace", "name: store\n  namespace", 1))
    git(pushing, "add", "apps/team-x/app.yaml")
    proc = push(pushing, "-u", "origin", "comment")
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out
    assert "policylint (changes since the upstream branch)" in out and "Passed" in out
    assert not any(line.startswith("policylint.") for line in out.splitlines()), out  # the commit hook
    git(pushing, "reset", "-q", "--hard")
    # A listener renamed on a new branch: what it breaks two files away fails the push.
    git(pushing, "checkout", "-q", "--", "apps/team-x/app.yaml")
    git(pushing, "checkout", "-q", "-b", "rename", "main")
    (pushing / "platform/quickstart.yaml").write_text(QUICKSTART.replace("- name: http", "- name: web"))
    (pushing / "apps/team-x/app.yaml").write_text(
        APP.replace("    namespace: infra\n", "    namespace: infra\n    sectionName: http\n", 1)
    )
    git(pushing, "commit", "-q", "-am", "rename the listener")
    proc = push(pushing, "-u", "origin", "rename")
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0, out
    pushed = git(pushing, "rev-parse", "HEAD").strip()
    assert f"policylint: --diff compares the pushed commit {pushed[:12]} with {base[:12]} (pre-push)" in out
    assert "apps/team-x/app.yaml:10:5: error PL407" in out
    assert "apps/team-x/policies.yaml:8:5: warning PL413" in out
    assert f"against {base[:12]}: 2 introduced, 2 pre-existing" in out
