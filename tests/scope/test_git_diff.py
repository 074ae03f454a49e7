"""`--diff [BASE]` and `--staged`: the files a git change touched are the report scope, the
repository the load scope (policylint/input/git.py, policylint/report_scope.py).

Every test builds a real temporary git repository and runs the command in it. What is checked:
a changed Gateway that breaks a policy in an untouched file is reported on the policy; a deleted
or renamed target too; old findings in untouched files are not; `--staged` reads the index, not
the working tree; the default base is the merge-base with the upstream branch; the errors users
hit are exit code 2 with a message saying what to do; and no run changes the working tree, the
index or any ref.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from policylint.cli import cli
from tests.gitrepo import git, init, repository

CLASS = """\
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata:
  name: eg
spec:
  controllerName: gateway.envoyproxy.io/gatewayclass-controller
"""
GATEWAY = """\
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata:
  name: edge
  namespace: infra
spec:
  gatewayClassName: eg
  listeners:
  - name: http
    protocol: HTTP
    port: 80
"""
POLICY = """\
apiVersion: gateway.envoyproxy.io/v1alpha1
kind: ClientTrafficPolicy
metadata:
  name: edge-timeouts
  namespace: infra
spec:
  targetRefs:
  - group: gateway.networking.k8s.io
    kind: Gateway
    name: edge
    sectionName: http
"""
OLD_MISTAKE = """\
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata:
  name: legacy
  namespace: infra
spec: {}
"""


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    files = {"class.yaml": CLASS, "gateway.yaml": GATEWAY, "policy.yaml": POLICY, "legacy.yaml": OLD_MISTAKE}
    root = repository(tmp_path / "repo", files)
    monkeypatch.chdir(root)
    return root


def run(*args: str) -> tuple[int, list[tuple[str, str]], str]:
    result = CliRunner().invoke(cli, ["check", "--no-cache", "--format", "json", *args])
    findings = json.loads(result.stdout)["findings"] if result.stdout.startswith("{") else []
    return result.exit_code, [(f["rule"], f["file"]) for f in findings], result.stderr


def state(repo: Path) -> str:
    """A digest of the working tree, the index and every ref."""
    digest = hashlib.sha256()
    for path in sorted(repo.rglob("*")):
        if path.is_file() and "objects" not in path.parts and path.name not in ("ORIG_HEAD", "FETCH_HEAD"):
            digest.update(str(path.relative_to(repo)).encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


def test_a_change_that_breaks_a_policy_in_an_untouched_file(repo: Path) -> None:
    (repo / "gateway.yaml").write_text(GATEWAY.replace("name: http", "name: web"))
    before = state(repo)
    code, findings, err = run("--diff", "HEAD")
    assert code == 1
    # The policy's PL301 (about the changed Gateway); not the old PL410 in legacy.yaml.
    assert findings == [("PL301", "policy.yaml")]
    assert "in 1 file (+3 context files)" in err
    assert state(repo) == before


def test_no_change_reports_nothing(repo: Path) -> None:
    code, findings, _ = run("--diff", "HEAD")
    assert (code, findings) == (0, [])
    code, findings, _ = run(".")
    assert findings == [("PL410", "legacy.yaml")]  # the old finding is there, just not in scope


def _manage_another_gateway(repo: Path) -> None:
    """Commit a second Gateway in namespace infra: the repository manages Gateways there, so a
    missing one is an error, not unprovable (docs/semantics.md#partial-repositories)."""
    (repo / "class.yaml").write_text(CLASS + "---\n" + GATEWAY.replace("name: edge", "name: internal"))
    git(repo, "commit", "-q", "-am", "another Gateway")


def test_deleting_a_target_reports_the_policies_that_still_target_it(repo: Path) -> None:
    _manage_another_gateway(repo)
    (repo / "gateway.yaml").unlink()
    code, findings, _ = run("--diff", "HEAD")
    assert code == 1
    assert findings == [("PL201", "policy.yaml")]


@pytest.mark.slow
def test_deleting_the_last_gateway_of_a_namespace_reports_its_policies_as_unprovable(repo: Path) -> None:
    # The tree after the change holds no Gateway in infra: the policy's target is unprovable, a
    # warning, still reported on the untouched policy.
    (repo / "gateway.yaml").unlink()
    result = CliRunner().invoke(cli, ["check", "--no-cache", "--format", "json", "--diff", "HEAD"])
    assert result.exit_code == 0
    findings = [(f["rule"], f["file"], f["severity"]) for f in json.loads(result.stdout)["findings"]]
    assert findings == [("PL201", "policy.yaml", "warning")]


def test_renaming_a_target_reports_the_policies_that_name_the_old_one(repo: Path) -> None:
    (repo / "gateway.yaml").write_text(GATEWAY.replace("name: edge", "name: edge-v2"))
    code, findings, _ = run("--diff", "HEAD")
    assert (code, findings) == (1, [("PL201", "policy.yaml")])


def test_moving_an_object_between_files_is_not_a_finding(repo: Path) -> None:
    git(repo, "mv", "gateway.yaml", "gateways.yaml")
    (repo / "class.yaml").write_text(CLASS + "---\n" + GATEWAY)
    (repo / "gateways.yaml").unlink()
    code, findings, _ = run("--diff", "HEAD")
    assert (code, findings) == (0, [])


def test_a_new_untracked_file_is_in_scope(repo: Path) -> None:
    (repo / "extra.yaml").write_text(POLICY.replace("edge-timeouts", "extra").replace("sectionName: http", "sectionName: https"))
    code, findings, _ = run("--diff", "HEAD")
    assert (code, findings) == (1, [("PL301", "extra.yaml")])


def test_a_change_that_fixes_one_finding_and_introduces_another(repo: Path) -> None:
    (repo / "legacy.yaml").write_text(OLD_MISTAKE.replace("spec: {}", "spec:\n  parentRefs:\n  - name: nowhere\n"))
    code, findings, _ = run("--diff", "HEAD")
    # The old PL410 is fixed (the route has parentRefs now); the parent they name is missing.
    assert (code, findings) == (1, [("PL406", "legacy.yaml")])


def test_staged_reads_the_index_not_the_working_tree(repo: Path) -> None:
    # Staged: a good change. Unstaged on top: a broken one, which must not leak in.
    (repo / "gateway.yaml").write_text(GATEWAY.replace("port: 80", "port: 8080"))
    git(repo, "add", "gateway.yaml")
    (repo / "gateway.yaml").write_text(GATEWAY.replace("name: http", "name: web"))
    before = state(repo)
    code, findings, _ = run("--staged")
    assert (code, findings) == (0, [])
    # And the other way round: a broken staged change with a fix not yet staged.
    git(repo, "add", "gateway.yaml")
    (repo / "gateway.yaml").write_text(GATEWAY)
    code, findings, _ = run("--staged")
    assert (code, findings) == (1, [("PL301", "policy.yaml")])
    assert state(repo) != before  # (the test itself staged; the runs did not)


def test_staged_deletion_of_a_target(repo: Path) -> None:
    _manage_another_gateway(repo)
    git(repo, "rm", "-q", "--cached", "gateway.yaml")  # deleted in the index, still on disk
    code, findings, _ = run("--staged")
    assert (code, findings) == (1, [("PL201", "policy.yaml")])


def test_runs_leave_the_working_tree_index_and_refs_untouched(repo: Path) -> None:
    (repo / "gateway.yaml").write_text(GATEWAY.replace("name: http", "name: web"))
    git(repo, "add", "gateway.yaml")
    (repo / "policy.yaml").write_text(POLICY.replace("http", "web"))
    before = state(repo)
    for args in (["--diff", "HEAD"], ["--staged"], ["--diff"], ["--staged", "--diff", "HEAD"]):
        run(*args)
        assert state(repo) == before, args


def test_the_default_base_is_the_merge_base_with_the_upstream_branch(repo: Path) -> None:
    git(repo, "checkout", "-q", "-b", "feature")
    git(repo, "branch", "-q", "--set-upstream-to", "main")
    (repo / "gateway.yaml").write_text(GATEWAY.replace("name: http", "name: web"))
    git(repo, "commit", "-q", "-am", "rename the listener")
    # Committed on the branch: HEAD has no change, the branch does.
    assert run("--diff", "HEAD")[1] == []
    code, findings, err = run("--diff")
    assert (code, findings) == (1, [("PL301", "policy.yaml")])
    base = git(repo, "rev-parse", "main").strip()
    assert f"policylint: --diff compares with the merge-base of HEAD and main ({base[:12]})\n" in err


def test_no_upstream_and_no_remote_is_no_base(repo: Path) -> None:
    # Comparing with HEAD would report nothing on a branch whose commits break a policy.
    (repo / "gateway.yaml").write_text(GATEWAY.replace("name: http", "name: web"))
    git(repo, "commit", "-q", "-am", "rename the listener")
    code, findings, err = run("--diff")
    assert (code, findings) == (2, [])
    assert "no base to compare with: the branch has no upstream and there is no origin/HEAD" in err
    assert "--diff BASE" in err
    # The remote's default branch is the next place to look: with it, the change is found.
    git(repo, "update-ref", "refs/remotes/origin/main", "HEAD~1")
    git(repo, "symbolic-ref", "refs/remotes/origin/HEAD", "refs/remotes/origin/main")
    code, findings, err = run("--diff")
    assert (code, findings) == (1, [("PL301", "policy.yaml")])
    assert "--diff compares with the merge-base of HEAD and origin/main (" in err


def test_a_single_branch_shallow_clone_is_told_the_fetch_that_brings_the_base(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    git(repo, "checkout", "-q", "-b", "feature")
    (repo / "gateway.yaml").write_text(GATEWAY.replace("name: http", "name: web"))
    git(repo, "commit", "-q", "-am", "rename the listener")
    clone = tmp_path / "shallow"
    # As actions/checkout leaves a pull request's branch: one commit, no other branch.
    git(tmp_path, "clone", "-q", "--depth", "1", "--single-branch", "--branch", "feature", f"file://{repo}", str(clone))
    monkeypatch.chdir(clone)
    code, _, err = run("--diff", "origin/main")
    assert code == 2
    command = "git fetch origin main:refs/remotes/origin/main --depth=50"
    assert f"base 'origin/main' is not in this shallow clone: fetch it (`{command}`" in err
    git(clone, *command.split()[1:])  # the command given does bring the base in
    code, findings, _ = run("--diff", "origin/main")
    assert (code, findings) == (1, [("PL301", "policy.yaml")])


def test_not_a_repository(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "a.yaml").write_text(CLASS)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path.parent))
    code, _, err = run("--diff")
    assert code == 2
    assert "not a git repository" in err


def test_an_unknown_base(repo: Path) -> None:
    code, _, err = run("--diff", "no-such-branch")
    assert code == 2
    assert "base 'no-such-branch' is not a commit of this repository" in err


def test_a_shallow_clone_without_the_base(repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    first = git(repo, "rev-parse", "HEAD").strip()
    (repo / "gateway.yaml").write_text(GATEWAY.replace("port: 80", "port: 81"))
    git(repo, "commit", "-q", "-am", "second")
    clone = tmp_path / "shallow"
    git(tmp_path, "clone", "-q", "--depth", "1", f"file://{repo}", str(clone))
    monkeypatch.chdir(clone)
    code, _, err = run("--diff", first)
    assert code == 2
    assert "shallow clone" in err and "fetch-depth: 0" in err


def test_a_path_outside_the_repository(repo: Path, tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    code, _, err = run("--diff", "HEAD", str(outside))
    assert code == 2
    assert "is outside the git repository" in err


def test_write_baseline_refuses_a_change_scope(repo: Path) -> None:
    code, _, err = run("--diff", "HEAD", "--write-baseline")
    assert code == 2
    assert "--write-baseline records every finding" in err


def _git_requests(monkeypatch: pytest.MonkeyPatch) -> list[tuple[tuple[str, ...], bytes | None]]:
    """Every git process a run starts, with its arguments and what it was sent."""
    import subprocess

    from policylint.input import git as git_module

    asked: list[tuple[tuple[str, ...], bytes | None]] = []
    real = subprocess.run

    def run(args: list[str], *rest: object, **kwargs: object) -> object:
        if args[0] == "git":
            sent = kwargs.get("input")
            asked.append((tuple(args[1:]), sent if isinstance(sent, bytes) else None))
        return real(args, *rest, **kwargs)  # type: ignore[call-overload]

    monkeypatch.setattr(git_module.subprocess, "run", run)
    return asked


def test_a_gated_staged_run_asks_git_each_question_once_and_reads_each_blob_once(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The pre-commit hook's entry: the change, the staged files, the base's files (one blob
    # each, the same as the staged one for every file but the changed one) and the gate's
    # configuration and baseline at HEAD and in the index.
    (repo / "gateway.yaml").write_text(GATEWAY.replace("name: http", "name: web"))
    git(repo, "add", "gateway.yaml")
    (repo / "legacy.yaml").write_text(OLD_MISTAKE + "# not staged\n")
    staged = dict(line.split()[3:4] + line.split()[1:2] for line in git(repo, "ls-files", "-s").splitlines())
    old_gateway = git(repo, "rev-parse", "HEAD:gateway.yaml").strip()
    asked = _git_requests(monkeypatch)
    code, findings, _ = run("--staged", "--gate-base", "HEAD")
    assert (code, findings) == (1, [("PL301", "policy.yaml")])
    queries = [args for args, sent in asked if sent is None]
    assert len(queries) == len(set(queries)), queries
    # A file whose bytes on disk are its staged blob is read from disk; git is asked for the one
    # with an edit not staged and for the changed file's blob at the base, once each: the base's
    # other files are the staged ones.
    blobs = sorted(oid.decode() for args, sent in asked if args == ("cat-file", "--batch") and sent for oid in sent.split())
    assert blobs == sorted([staged["legacy.yaml"], old_gateway])
    # rev-parse (the top and HEAD, in one process: asked apart, that was a seventh), diff,
    # cat-file (the old blob), ls-files, cat-file (the staged blob), ls-tree (the base's files,
    # and its top tree, where the configuration's names at HEAD are looked for: asked apart, that
    # was an eighth); asked each time they were needed, that was 17 queries (6 of them again) and
    # every blob read twice.
    assert len(asked) == 6, asked
    assert [args for args in queries if args[0] == "rev-parse"] == [
        ("rev-parse", "--show-toplevel", "--verify", "--quiet", "--end-of-options", "HEAD^{commit}")
    ]
    assert not any(args[0] == "ls-tree" and "-r" not in args for args in queries)


def test_the_top_trees_listing_kept_with_a_commits_files_is_gits_own(tmp_path: Path) -> None:
    """`tree_files` keeps, within a snapshot, the listing of the commit's top tree that the gate's
    configuration lookup asks for: the same bytes as `git ls-tree -z --full-tree COMMIT`, with
    the top's files, directories, a symlink and names that sort around `/`, and none asked of git."""
    import os
    import subprocess

    from policylint.input import git as git_module

    root = tmp_path / "r"
    repository(
        root,
        {"a.yaml": "x: 1\n", "a-b.yaml": "x: 2\n", "a/b/c.yaml": "x: 3\n", "a.d/e.yaml": "x: 4\n", "z\tt.yaml": "x: 5\n"},
    )
    os.symlink("a.yaml", root / "link.yaml")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "link")
    commit = git(root, "rev-parse", "HEAD").strip()
    expected = subprocess.run(["git", "ls-tree", "-z", "--full-tree", commit], cwd=root, capture_output=True, check=True).stdout
    with git_module.snapshot():
        files = git_module.tree_files(commit, str(root))
        kept = git_module._SNAPSHOT.answers if git_module._SNAPSHOT is not None else {}
        assert kept[(str(root), ("ls-tree", "-z", "--full-tree", commit))] == expected
    assert sorted(path for path, _ in files) == ["a-b.yaml", "a.d/e.yaml", "a.yaml", "a/b/c.yaml", "z\tt.yaml"]


def test_outside_a_command_git_is_asked_again(repo: Path) -> None:
    # A long-lived process (a library caller, a test) sees the repository as it is now.
    from policylint.input import git as git_module

    before = git_module.resolve_base("HEAD", str(repo))
    (repo / "policy.yaml").write_text(POLICY.replace("http", "web"))
    git(repo, "commit", "-q", "-am", "another")
    assert git_module.resolve_base("HEAD", str(repo)) != before
    with git_module.snapshot():
        first = git_module.resolve_base("HEAD", str(repo))
        git(repo, "commit", "-q", "--allow-empty", "-m", "during")
        assert git_module.resolve_base("HEAD", str(repo)) == first  # one state per command
    assert git_module.resolve_base("HEAD", str(repo)) != first


def test_a_sha256_repository_reads_its_staged_files_from_disk(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Blobs are named by SHA-256 there: a staged file's bytes on disk are recognised all the same.
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q", "--object-format=sha256", "-b", "main")
    git(root, "config", "user.email", "dev@example.com")
    git(root, "config", "user.name", "dev")
    git(root, "config", "commit.gpgsign", "false")
    for name, text in {"class.yaml": CLASS, "gateway.yaml": GATEWAY, "policy.yaml": POLICY}.items():
        (root / name).write_text(text)
    git(root, "add", ".")
    git(root, "commit", "-q", "-m", "base")
    monkeypatch.chdir(root)
    (root / "gateway.yaml").write_text(GATEWAY.replace("name: http", "name: web"))
    git(root, "add", "gateway.yaml")
    old_gateway = git(root, "rev-parse", "HEAD:gateway.yaml").strip()
    asked = _git_requests(monkeypatch)
    code, findings, _ = run("--staged", "--gate-base", "HEAD")
    assert (code, findings) == (1, [("PL301", "policy.yaml")])
    blobs = [oid.decode() for args, sent in asked if args == ("cat-file", "--batch") and sent for oid in sent.split()]
    assert blobs == [old_gateway]
    assert len(old_gateway) == 64


def test_a_staged_file_on_disk_is_read_in_one_read_and_taken_only_as_its_blob(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file whose bytes on disk are its staged blob is read in one read of the size fstat
    gives (the read to the end of the file is one more system call per file, 3,319 in a large
    repository's hook run); one edited since, or past the size bound, is not taken for the blob:
    git's bytes are."""
    import os

    from policylint.input import bounds, reader
    from policylint.input.sources import Source

    path = tmp_path / "a.yaml"
    path.write_bytes(CLASS.encode())
    blob = hashlib.sha1(b"blob %d\0%s" % (len(CLASS), CLASS.encode())).hexdigest()
    source = Source(display="a.yaml", fs_path=str(path), blob=blob)
    reads: list[int] = []
    real = os.read

    def counted(fd: int, size: int) -> bytes:
        reads.append(size)
        return real(fd, size)

    monkeypatch.setattr(reader.os, "read", counted)
    assert reader.on_disk(source, blob) == CLASS.encode()
    assert reads == [len(CLASS) + 1]  # the tree before read again to the end of the file
    path.write_bytes(CLASS.encode() + b"# edited\n")
    assert reader.on_disk(source, blob) is None
    path.write_bytes(CLASS.encode())
    monkeypatch.setattr(bounds, "MAX_FILE_BYTES", len(CLASS) - 1)
    del reads[:]
    assert reader.on_disk(source, blob) is None
    assert reads == []  # past the bound: git reads the blob, the file is not


def test_a_staged_file_read_keeps_every_field_of_its_source(tmp_path: Path) -> None:
    """The staged snapshot names each field of a source read (`_with_content`, which `replace`
    made more slowly): a field `Source` gains must be named there too."""
    import dataclasses

    from policylint.input import staged as staged_module
    from policylint.input.sources import Source

    source = Source(
        display="a.yaml", fs_path="/x/a.yaml", problem="p", identity=(1, 2), nofollow=True, blob="0" * 40, snapshot=False
    )
    assert {f.name for f in dataclasses.fields(Source)} == {
        "display",
        "fs_path",
        "content",
        "snapshot",
        "problem",
        "identity",
        "nofollow",
        "blob",
    }
    made = staged_module._with_content(source, b"x")
    assert made == dataclasses.replace(source, content=b"x", snapshot=True, blob=None)


def test_the_index_is_listed_and_parsed_once_for_the_staged_sources(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`--staged` reads the index for two questions (the files staged but gone from the working
    tree, and each file's staged content): it is parsed once for both, and the run still reads
    a file staged and then deleted from its blob."""
    from policylint.input import git as git_module
    from policylint.input import staged as staged_module

    repo = repository(tmp_path / "repo", {"class.yaml": CLASS, "gateway.yaml": GATEWAY, "policy.yaml": POLICY})
    monkeypatch.chdir(repo)
    (repo / "gateway.yaml").write_text(GATEWAY.replace("name: http", "name: web"))
    git(repo, "add", "gateway.yaml")
    (repo / "policy.yaml").unlink()  # still staged: read from the index
    parsed: list[str] = []
    real = git_module.staged_files

    def counted(root: str) -> dict[str, str]:
        parsed.append(root)
        return real(root)

    monkeypatch.setattr(git_module, "staged_files", counted)
    monkeypatch.setattr(staged_module, "staged_files", counted)
    code, findings, _ = run("--staged", "--gate-base", "HEAD")
    assert (code, findings) == (1, [("PL301", "policy.yaml")])
    assert len(parsed) == 1


@pytest.mark.parametrize(
    ("path", "top"),
    [
        ("/srv/repo/a.yaml", "/srv/repo"),
        ("/srv/repo/apps/team-a/a.yaml", "/srv/repo"),
        ("/srv/repo", "/srv/repo"),  # the top itself: relpath's "."
        ("/srv/repository/a.yaml", "/srv/repo"),  # a sibling whose name starts with the top's
        ("/srv/other/a.yaml", "/srv/repo"),
        ("/a.yaml", "/"),
    ],
)
def test_a_path_relative_to_the_top_is_relpaths(path: str, top: str) -> None:
    """`staged._relative` answers as `os.path.relpath` for absolute, normalised paths, in the
    repository and out of it."""
    import os

    from policylint.input.staged import _relative

    assert _relative(path, top) == os.path.relpath(path, top)


def test_a_directory_named_as_path_and_as_context_is_walked_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The gate names the repository twice (PATH `.` and context `.`): it is walked once, and
    what is found, skipped and said is what two walks gave (a directory with nothing to lint is
    said twice, as before; one whose only file is not a manifest, never)."""
    from policylint.input import sources as sources_module

    walks: list[str] = []
    real = sources_module._walk

    def counted(root: str, *args: Any) -> Any:
        walks.append(root)
        return real(root, *args)

    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "class.yaml").write_text(CLASS)
    (tmp_path / "a" / "kustomization.yaml").write_text("resources: [class.yaml]\n")
    (tmp_path / "empty").mkdir()
    (tmp_path / "kust").mkdir()
    (tmp_path / "kust" / "kustomization.yaml").write_text("resources: []\n")
    monkeypatch.chdir(tmp_path)
    once = {p: sources_module.discover_all([p]) for p in ("a", "empty", "kust")}
    monkeypatch.setattr(sources_module, "_walk", counted)
    for path, alone in once.items():
        walks.clear()
        twice = sources_module.discover_all([path, f"./{path}", path])
        assert walks == [path]
        assert [s.display for s in twice.sources] == [s.display for s in alone.sources]
        assert twice.skipped == alone.skipped
        # As three walks said it: the note of a directory with nothing found or skipped, per walk.
        assert twice.notes == alone.notes * 3


def test_a_directory_named_again_adds_its_sources_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A second naming of a walked directory takes the first walk's sources as they were added:
    each is keyed (its absolute path worked out) once, where each was added again and dropped."""
    import os

    from policylint.input import sources as sources_module

    (tmp_path / "a").mkdir()
    for name in ("a/x.yaml", "a/y.yml", "b.yaml"):
        (tmp_path / name).write_text(CLASS)
    monkeypatch.chdir(tmp_path)
    alone = sources_module.discover_all(["."])
    added: list[str] = []
    keys: list[str] = []
    real = sources_module._Sources.add

    def counted(self: Any, source: Any) -> None:
        added.append(source.display)
        real(self, source)
        keys.extend(k for k, s in self.sources.items() if s is source)

    monkeypatch.setattr(sources_module._Sources, "add", counted)
    twice = sources_module.discover_all([".", "./", "."])
    assert sorted(added) == ["a/x.yaml", "a/y.yml", "b.yaml"]
    assert [s.display for s in twice.sources] == [s.display for s in alone.sources]
    # Keyed as `os.path.abspath` keys them, the working directory asked once.
    assert sorted(keys) == sorted(os.path.abspath(s.fs_path) for s in twice.sources if s.fs_path is not None)


@pytest.mark.parametrize(
    "directory", [".", "..", "a", "a/b", "/", "//", "///", "/a", "//a", "./a", "a/..", "a//b/", "../a", "a/./b"]
)
def test_a_walked_entry_is_named_as_normpath_names_it(directory: str) -> None:
    import os

    from policylint.input.sources import _below

    for name in ("x.yaml", "a b.yml", "\udcff.yaml", "..x.yaml"):
        assert _below(os.path.normpath(directory), name) == os.path.normpath(os.path.join(directory, name))


@pytest.mark.parametrize(
    ("fs_path", "reported"),
    [
        ("gateway.yaml", True),
        ("./gateway.yaml", True),
        ("sub/../gateway.yaml", True),
        ("policy.yaml", False),  # the changed policy.yaml is sub/'s
        ("sub/gateway.yaml", False),
        ("gateway.yaml/.", True),  # abspath drops the last `.`: the name of no file, but the same path
        ("sub/..", False),
        (".", False),
    ],
)
def test_the_files_a_change_reports_on_are_those_whose_absolute_path_it_touched(repo: Path, fs_path: str, reported: bool) -> None:
    """`report_files` makes absolute only the paths whose last part is a changed file's (or that
    `abspath` rewrites): the same answer as making every path absolute."""
    import os

    from policylint.input.sources import Source
    from policylint.report_scope import ChangeSet, report_files
    from policylint.request import LintRequest

    change = ChangeSet(frozenset({str(repo / "gateway.yaml"), str(repo / "sub" / "policy.yaml")}), frozenset())
    request = LintRequest(paths=(".",), change=change)
    sources = [Source(display="shown", fs_path=fs_path), Source(display="stdin", content=b"")]
    expected = frozenset(s.display for s in sources if s.fs_path is not None and os.path.abspath(s.fs_path) in change.files)
    assert report_files(request, sources) == expected == (frozenset({"shown"}) if reported else frozenset())


def test_a_commits_files_are_classified_once_per_directory_as_one_by_one(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`commit_sources` (the base side of every gate) asks each directory of the commit's tree
    once whether it is GitHub's own or under a chart's `templates/`, and names each file relative
    to the working directory without `relpath` where it lies under it: the sources, skipped files
    and names are those of every file classified alone and named by `relpath`, from the top and
    from a subdirectory (whose files outside it are named with `..`)."""
    import os

    from policylint.input import nonmanifest
    from policylint.input.commit import commit_sources

    files = {
        "apps/a.yaml": CLASS,
        "apps/b.yaml": CLASS,
        "apps/c.yml": CLASS,
        "apps/kustomization.yaml": "resources: [a.yaml]\n",
        ".github/workflows/ci.yaml": "on: push\n",
        ".github/other/x.yaml": CLASS,
        "chart/Chart.yaml": "name: c\n",
        "chart/values.yaml": "a: 1\n",
        "chart/templates/t.yaml": CLASS,
        "chart/templates/tests/u.yaml": CLASS,
        "notes/values.yaml": CLASS,  # a chart's file name, outside a chart
        "top.yaml": CLASS,
    }
    repository(tmp_path / "repo", files)
    root = str(tmp_path / "repo")
    head = git(tmp_path / "repo", "rev-parse", "HEAD").strip()
    asked: list[str] = []
    real = nonmanifest._directory

    def counted(directory: str, helm_templates: bool) -> tuple[bool, bool]:
        asked.append(directory)
        return real(directory, helm_templates)

    for cwd in (root, os.path.join(root, "apps")):
        monkeypatch.chdir(cwd)
        for helm_templates in (False, True):
            expected = sorted(
                os.path.relpath(os.path.join(root, path))
                for path in files
                if nonmanifest.classify_path(os.path.join(root, path), helm_templates=helm_templates) is None
            )
            monkeypatch.setattr(nonmanifest, "_directory", counted)
            asked.clear()
            found = commit_sources(head, root, [root], None, helm_templates)
            monkeypatch.setattr(nonmanifest, "_directory", real)
            assert sorted(s.display for s in found) == expected
            if cwd == root:  # by hand: GitHub's workflow, the kustomization, the chart's own files left out
                chart = ["chart/templates/t.yaml", "chart/templates/tests/u.yaml"] if helm_templates else []
                assert sorted(s.display for s in found) == sorted(
                    [".github/other/x.yaml", "apps/a.yaml", "apps/b.yaml", "apps/c.yml", "notes/values.yaml", "top.yaml", *chart]
                )
            # Each directory of a file whose name leaves it to its directories once (the
            # kustomization's is known by its name alone): eight of them, twelve files.
            assert sorted(asked) == sorted({os.path.dirname(os.path.join(root, p)) for p in files})


def test_the_staged_sources_are_placed_in_the_index_without_abspath_per_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`--staged` places every walked file in the index by the absolute path discovery found it
    under (`Discovery.absolute`, `staged.in_index`): each source is the file git stages, named by
    its staged blob, with a file staged and gone from the working tree read from the index and an
    untracked one left out, from the top and from a subdirectory naming the top as `..`; and
    `os.path.abspath` is asked of no file found (the tree before asked it twice per file)."""
    import os

    from policylint import request as request_module
    from policylint.request import LintRequest

    files = {f"apps/team-{i}/route-{i}.yaml": CLASS.replace("name: eg", f"name: eg-{i}") for i in range(12)}
    repo = repository(tmp_path / "repo", {**files, "class.yaml": CLASS, "policy.yaml": POLICY})
    (repo / "apps" / "team-3" / "route-3.yaml").write_text(CLASS.replace("name: eg", "name: edited"))
    git(repo, "add", "-A")
    (repo / "policy.yaml").unlink()  # staged, gone from the working tree
    (repo / "untracked.yaml").write_text(CLASS)
    staged = {}
    for line in git(repo, "ls-files", "-z", "--stage").split("\0"):
        if line:
            meta, _, name = line.partition("\t")
            staged[name] = meta.split(" ")[1]
    for where, top in ((repo, "."), (repo / "apps", "..")):
        monkeypatch.chdir(where)
        found = request_module.discover_all([top, top])
        assert found.absolute == {s.display: os.path.abspath(s.fs_path) for s in found.sources if s.fs_path is not None}
        asked: list[str] = []
        real = os.path.abspath

        def counted(path: Any, real: Any = real, asked: list[str] = asked) -> Any:
            asked.append(path)
            return real(path)

        monkeypatch.setattr(os.path, "abspath", counted)
        _, sources = request_module.discover(LintRequest(paths=(top,), context_paths=(top,), staged=True), lazy=True)
        monkeypatch.setattr(os.path, "abspath", real)
        # Only the file gone from the working tree is named from its path (`relpath`).
        gone = os.path.join(git(repo, "rev-parse", "--show-toplevel").strip(), "policy.yaml")
        assert {p for p in asked if str(p).endswith(".yaml")} == {gone}
        prefix = "" if top == "." else "../"
        assert [(s.display, s.blob or None, s.content is not None) for s in sources] == sorted(
            (prefix + name, None if name == "policy.yaml" else blob, name == "policy.yaml") for name, blob in staged.items()
        )


@pytest.mark.parametrize(
    "path",
    [
        "a.yaml",
        "apps/team-a/a.yaml",
        "apps//a.yaml",
        "./a.yaml",
        "../a.yaml",
        "apps/./a.yaml",
        "apps/../a.yaml",
        ".github/workflows/ci.yaml",
        "apps/.hidden/a.yaml",
        "chart/templates/a.yaml",
        "chart/values.yaml",
        "apps/kustomization.yaml",
        "a..b/c.yaml",
        "apps/",
    ],
)
def test_a_commit_path_taken_apart_without_normpath_classifies_as_normpath(path: str) -> None:
    """`commit._plain` says a path is its own `normpath` only where it is, and then
    `classify_in` of its last `/`'s sides answers as `classify_path` of the path (the base side
    takes a commit's paths apart so, without normpath's parse per file)."""
    import os

    from policylint.input import nonmanifest
    from policylint.input.commit import _plain

    absolute = "/srv/repo/" + path
    if _plain(path):
        assert os.path.normpath(absolute) == absolute
        directory, _, name = absolute.rpartition("/")
        assert (directory, name) == os.path.split(os.path.normpath(absolute))
        for helm in (False, True):
            assert nonmanifest.classify_in(directory, name, helm_templates=helm) == nonmanifest.classify_path(
                absolute, helm_templates=helm
            )
    assert _plain(path) == (
        path
        in (
            "a.yaml",
            "apps/team-a/a.yaml",
            "chart/templates/a.yaml",
            "chart/values.yaml",
            "apps/kustomization.yaml",
            "a..b/c.yaml",
        )
    )


def test_the_top_and_head_are_asked_of_one_process_within_a_command(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Within a command's snapshot the repository's top and HEAD's commit are asked of one git
    process, from a subdirectory of a repository whose top's name holds a newline, and are what
    each question asked alone answers; before the first commit each is asked alone (HEAD names
    no commit: the empty tree), and outside a snapshot nothing is kept."""
    import os

    from policylint.input import git as git_module

    root = repository(tmp_path / "re\npo", {"apps/class.yaml": CLASS})
    head = git(root, "rev-parse", "HEAD").strip()
    monkeypatch.chdir(root / "apps")
    asked = _git_requests(monkeypatch)
    with git_module.snapshot():
        top = git_module.repository_root(os.getcwd())
        assert (top, git_module.head_or_empty_tree(top), git_module.has_commit(os.getcwd())) == (str(root), head, True)
    assert [args[:2] for args, _ in asked] == [("rev-parse", "--show-toplevel")]
    asked.clear()
    assert git_module.repository_root(os.getcwd()) == str(root)
    assert git_module.has_commit(str(root))
    assert [args[:2] for args, _ in asked] == [("rev-parse", "--show-toplevel"), ("rev-parse", "--verify")]
    unborn = init(tmp_path / "unborn")
    monkeypatch.chdir(unborn)
    with git_module.snapshot():
        top = git_module.repository_root(os.getcwd())
        assert (top, git_module.has_commit(top)) == (str(unborn), False)
        assert git_module.head_or_empty_tree(top) == "4b825dc642cb6eb9a060e54bf8d69288fbee4904"  # SHA-1's empty tree
