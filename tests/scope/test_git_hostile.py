"""Git plumbing against a hostile repository (policylint/input/git.py, policylint/input/tracked.py,
policylint/cli.py).

The repository under review chooses its file names and its `.gitignore`; the command line of
a CI job may carry a value from it. What is checked, on real temporary repositories:

- a tracked file name holding a newline, a quote, a control character, a non-UTF-8 byte or a
  leading `-` is read as itself in `diff BASE HEAD`, `check --staged` and `check --diff`: no
  name can ask git for another object and shift every later file's content onto the wrong name
  (a newline once made a broken file read as its clean base version: "0 introduced", exit 0);
- a revision or a `--diff=VALUE` starting with `-` is a usage error (exit 2), never an option;
- a file git tracks is linted even when a `.gitignore` pattern matches it, while untracked
  ignored files stay out; when git cannot say what it tracks, the patterns are not applied.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from policylint.cli import cli
from policylint.input import git as gitinput
from tests.gitrepo import commit, git, init

CLEAN = """\
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata:
  name: eg
spec:
  controllerName: example.com/gateway
"""
BROKEN = "apiVersion: gateway.networking.k8s.io/v1\nkind: [\n"  # PL001
NAMELESS = "apiVersion: example.com/v1\nkind: Widget\n"  # PL009

# Hostile names and how the JSON report names them: as they are (JSON escapes what it must),
# but for bytes that are not UTF-8, shown as `\\xNN` (policylint.input.sources.display_name).
# Each newline name would, as a `REV:PATH` line for `cat-file --batch`, ask for the clean base
# version of zz.yaml (`base` is a tag on the base commit; `:` is the index).
NAMES: list[tuple[bytes, str]] = [
    (b"y\nbase:zz.yaml", "y\nbase:zz.yaml"),
    (b"y\n:zz.yaml", "y\n:zz.yaml"),
    (b"y\nHEAD:zz.yaml", "y\nHEAD:zz.yaml"),
    (b'q"uote.yaml', 'q"uote.yaml'),
    (b"tab\there.yaml", "tab\there.yaml"),
    (b"cr\rhere.yaml", "cr\rhere.yaml"),
    (b"esc\x1b[31m.yaml", "esc\x1b[31m.yaml"),
    (b"caf\xc3\xa9.yaml", "caf\u00e9.yaml"),  # core.quotePath would print it as "caf\\303\\251.yaml"
    (b"raw\xff.yaml", "raw\\xff.yaml"),  # not UTF-8
    (b"-dash.yaml", "-dash.yaml"),
    (b"--output=json=x.yaml", "--output=json=x.yaml"),
]
IDS = [ascii(name)[2:-1] for name, _ in NAMES]


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A repository whose base commit (tagged `base`) holds a clean zz.yaml."""
    root = init(tmp_path / "repo")
    (root / "zz.yaml").write_text(CLEAN)
    commit(root)
    git(root, "tag", "base")
    monkeypatch.chdir(root)
    return root


def state(repo: Path) -> str:
    """A digest of the working tree, the index and every ref (names as bytes: some are not
    UTF-8)."""
    digest = hashlib.sha256()
    for directory, _, files in sorted(os.walk(os.fsencode(repo))):
        for name in sorted(files):
            path = os.path.join(directory, name)
            if b"objects" not in path.split(b"/") and name not in (b"ORIG_HEAD", b"FETCH_HEAD"):
                with open(path, "rb") as fh:
                    digest.update(path + b"\0" + fh.read())
    return digest.hexdigest()


def write(repo: Path, name: bytes, text: str) -> None:
    with open(os.path.join(os.fsencode(repo), name), "w") as fh:
        fh.write(text)


def hostile_change(repo: Path, name: bytes) -> None:
    """zz.yaml broken and a file named `name` holding a manifest without a name, both staged."""
    (repo / "zz.yaml").write_text(BROKEN)
    write(repo, name, NAMELESS)
    git(repo, "add", "-A")


def invoke(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, result.stdout, result.stderr


def findings(*args: str) -> tuple[int, list[tuple[str, str]]]:
    code, out, err = invoke("check", "--no-cache", "--format", "json", *args)
    assert out.startswith("{"), err
    return code, sorted((f["rule"], f["file"]) for f in json.loads(out)["findings"])


# --- 1. File names are read as themselves -------------------------------------------------


@pytest.mark.parametrize(("name", "display"), NAMES, ids=IDS)
def test_staged_reads_each_hostile_name_as_itself(repo: Path, name: bytes, display: str) -> None:
    hostile_change(repo, name)
    before = state(repo)
    code, found = findings("--staged")
    assert (code, found) == (1, sorted([("PL001", "zz.yaml"), ("PL009", display)]))
    assert state(repo) == before


@pytest.mark.parametrize(("name", "display"), NAMES, ids=IDS)
def test_diff_command_reads_each_hostile_name_as_itself(repo: Path, name: bytes, display: str) -> None:
    hostile_change(repo, name)
    git(repo, "commit", "-q", "-m", "change")
    code, out, err = invoke("diff", "base", "HEAD", "--format", "json")
    assert out.startswith("{"), err
    introduced = sorted((f["rule"], f["file"]) for f in json.loads(out)["findings"]["introduced"])
    assert (code, introduced) == (1, sorted([("PL001", "zz.yaml"), ("PL009", display)]))


@pytest.mark.parametrize(("name", "display"), NAMES, ids=IDS)
def test_check_diff_reads_each_hostile_name_as_itself(repo: Path, name: bytes, display: str) -> None:
    hostile_change(repo, name)
    git(repo, "commit", "-q", "-m", "change")
    code, found = findings("--diff", "base")
    assert (code, found) == (1, sorted([("PL001", "zz.yaml"), ("PL009", display)]))


def test_the_base_content_of_every_changed_file_is_its_own(repo: Path) -> None:
    # What `--diff` reads of the base (the objects a change removed or renamed) comes from each
    # file's own blob, whatever its name: every hostile name committed, then all changed.
    for i, (name, _) in enumerate(NAMES):
        write(repo, name, f"# file {i}\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "names")
    base = git(repo, "rev-parse", "HEAD").strip()
    for name, _ in NAMES[::2]:
        os.unlink(os.path.join(os.fsencode(repo), name))
    for name, _ in NAMES[1::2]:
        write(repo, name, "# changed\n")
    changed = gitinput.changes(base, str(repo), staged=False)
    by_path = {c.old: c.old_blob for c in changed if c.old is not None}
    assert sorted(by_path) == sorted(os.fsdecode(name) for name, _ in NAMES)
    paths = list(by_path)
    blobs = gitinput.read_blobs([by_path[p] or "" for p in paths], str(repo))
    expected = {os.fsdecode(name): f"# file {i}\n".encode() for i, (name, _) in enumerate(NAMES)}
    assert dict(zip(paths, blobs)) == expected


def test_tree_and_index_listings_keep_names_whole(repo: Path) -> None:
    for name, _ in NAMES:
        write(repo, name, CLEAN)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "names")
    head = git(repo, "rev-parse", "HEAD").strip()
    expected = sorted([*(os.fsdecode(name) for name, _ in NAMES), "zz.yaml"])
    tree = gitinput.tree_files(head, str(repo))
    assert sorted(path for path, _ in tree) == expected
    assert sorted(gitinput.staged_files(str(repo))) == expected
    assert gitinput.read_blobs([blob for _, blob in tree], str(repo)) == [CLEAN.encode()] * len(expected)


def test_read_blobs_takes_object_ids_only(repo: Path) -> None:
    with pytest.raises(ValueError):
        gitinput.read_blobs(["HEAD:zz.yaml"], str(repo))
    with pytest.raises(ValueError):
        gitinput.read_blobs(["0" * 40 + "\nHEAD:zz.yaml"], str(repo))
    assert gitinput.read_blobs(["1" * 40], str(repo)) == [None]  # no such object


# --- 8. Nothing handed to git reads as an option --------------------------------------------


@pytest.mark.parametrize(
    "value", ["--exit-zero", "--isolated", "--output=json=out.json", "--select=PL000", "-", "-q", "--end-of-options"]
)
def test_a_diff_value_starting_with_a_dash_is_a_usage_error(repo: Path, value: str) -> None:
    hostile_change(repo, b"other.yaml")
    (repo / ".policylint.yaml").write_text("fail-on: info\n")
    for prefix in (["check"], []):  # `policylint --diff=...` is `check` too
        code, out, err = invoke(*prefix, "--no-cache", f"--diff={value}", ".")
        assert code == 2, (prefix, value, out, err)
        assert f"--diff: {value!r} starts with '-'" in err
        assert out == ""
    assert not (repo / "out.json").exists()


def test_a_diff_option_after_a_bare_diff_is_still_an_option(repo: Path) -> None:
    # `--diff --exit-zero`: the value is left out, as documented; the flag is the user's own. A bare
    # `--diff` compares with the remote's default branch: here, the base commit.
    hostile_change(repo, b"other.yaml")
    git(repo, "update-ref", "refs/remotes/origin/main", "base")
    git(repo, "symbolic-ref", "refs/remotes/origin/HEAD", "refs/remotes/origin/main")
    code, _ = findings("--diff", "--exit-zero")
    assert code == 0
    code, _ = findings("--diff", "base")
    assert code == 1


@pytest.mark.parametrize("args", [["-x"], ["base", "-x"], ["--upload-pack=touch pwned"], ["base", "--output=x"]])
def test_diff_revisions_starting_with_a_dash_are_usage_errors(repo: Path, args: list[str]) -> None:
    code, out, err = invoke("diff", "--", *args)
    assert code == 2, (out, err)
    what = "base" if len(args) == 1 else "head"
    assert f"{what} {args[-1]!r} starts with '-'" in err
    assert not (repo / "pwned").exists() and not (repo / "x").exists()


def test_a_diff_base_starting_with_a_dash_via_the_api_is_refused(repo: Path) -> None:
    with pytest.raises(gitinput.GitError, match="starts with '-'"):
        gitinput.resolve_base("--all", str(repo))


# --- 9. .gitignore does not hide tracked files ----------------------------------------------


def ignored_repo(repo: Path) -> None:
    """A committed `.gitignore` and, force-added behind it, broken manifests; untracked ignored
    files beside them."""
    (repo / ".gitignore").write_text("bad.yaml\nhidden/\n*.gen.yaml\n")
    (repo / "hidden").mkdir()
    (repo / "bad.yaml").write_text(BROKEN)
    (repo / "hidden" / "tracked.yaml").write_text(NAMELESS)
    (repo / "x.gen.yaml").write_text(BROKEN)
    git(repo, "add", ".gitignore")
    git(repo, "add", "-f", "bad.yaml", "hidden/tracked.yaml", "x.gen.yaml")
    git(repo, "commit", "-q", "-m", "force-added")
    (repo / "hidden" / "untracked.yaml").write_text(BROKEN)
    (repo / "y.gen.yaml").write_text(BROKEN)


TRACKED_FINDINGS = [("PL001", "bad.yaml"), ("PL001", "x.gen.yaml"), ("PL009", "hidden/tracked.yaml")]


def test_tracked_files_are_linted_though_ignored(repo: Path) -> None:
    ignored_repo(repo)
    code, found = findings(".")
    assert (code, found) == (1, TRACKED_FINDINGS)
    code, found = findings("hidden")
    assert (code, found) == (1, [("PL009", "hidden/tracked.yaml")])


def test_tracked_ignored_files_are_in_the_change_scopes(repo: Path) -> None:
    (repo / ".gitignore").write_text("bad.yaml\n")
    git(repo, "add", ".gitignore")
    git(repo, "commit", "-q", "-m", "ignore")
    (repo / "bad.yaml").write_text(BROKEN)
    git(repo, "add", "-f", "bad.yaml")
    assert findings("--staged") == (1, [("PL001", "bad.yaml")])
    assert findings("--diff", "HEAD") == (1, [("PL001", "bad.yaml")])


def test_a_symlinked_directory_is_looked_up_by_its_real_path(repo: Path) -> None:
    ignored_repo(repo)
    (repo / "hidden" / "z.gen.yaml").write_text(NAMELESS)
    git(repo, "add", "-f", "hidden/z.gen.yaml")
    (repo / "hidden" / "w.gen.yaml").write_text(BROKEN)
    (repo / "link").symlink_to("hidden")
    # Through the link, `*.gen.yaml` matches link/z.gen.yaml, which git tracks as
    # hidden/z.gen.yaml: linted; link/w.gen.yaml is not tracked: ignored. (`hidden/` does not
    # match `link/`, so the link's other files are linted, as before.)
    code, found = findings("link")
    assert (code, found) == (1, [("PL001", "link/untracked.yaml"), ("PL009", "link/tracked.yaml"), ("PL009", "link/z.gen.yaml")])


def test_respect_gitignore_off_lints_everything(repo: Path) -> None:
    ignored_repo(repo)
    (repo / ".policylint.yaml").write_text("respect-gitignore: false\n")
    code, found = findings(".")
    assert code == 1
    assert found == sorted([*TRACKED_FINDINGS, ("PL001", "hidden/untracked.yaml"), ("PL001", "y.gen.yaml")])


def test_without_git_the_ignore_files_are_not_applied(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ignored_repo(repo)
    monkeypatch.setenv("PATH", "")  # git cannot be found: nothing can be shown untracked
    code, out, err = invoke("check", "--no-cache", "--format", "json", ".")
    assert code == 1
    found = sorted((f["rule"], f["file"]) for f in json.loads(out)["findings"])
    assert found == sorted([*TRACKED_FINDINGS, ("PL001", "hidden/untracked.yaml"), ("PL001", "y.gen.yaml")])
    assert "cannot ask git which files are tracked" in err and "git is not installed" in err


def test_outside_a_repository_the_ignore_files_apply(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / ".policylint.yaml").write_text("{}\n")
    (tree / ".gitignore").write_text("bad.yaml\n")
    (tree / "bad.yaml").write_text(BROKEN)
    (tree / "ok.yaml").write_text(CLEAN)
    monkeypatch.chdir(tree)
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path))
    assert findings(".") == (0, [])


def test_git_is_not_asked_when_nothing_is_ignored(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[Any] = []
    real = gitinput._git

    def spy(args: Any, cwd: str, **kwargs: Any) -> bytes:
        calls.append(args)
        return real(args, cwd, **kwargs)

    monkeypatch.setattr(gitinput, "_git", spy)
    (repo / ".gitignore").write_text("nothing-here/\n")
    assert findings(".") == (0, [])
    assert calls == []


def test_a_tree_listing_decoded_whole_is_each_name_decoded_alone(repo: Path) -> None:
    """`tree_files` decodes git's listing at once where the file system's encoding is UTF-8: the
    files, their blobs and the top tree's bytes are those of each entry decoded alone, for every
    hostile name (one not UTF-8, one with a tab, one with a newline), in the top tree and below."""
    os.makedirs(os.path.join(os.fsencode(repo), b"d\xff\tir"))
    for name, _ in NAMES:
        write(repo, name, CLEAN)
        write(repo, b"d\xff\tir/" + name, "# below\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "names")
    head = git(repo, "rev-parse", "HEAD").strip()
    listing = gitinput._git(["ls-tree", "-r", "-t", "-z", "--full-tree", "--end-of-options", head], str(repo))
    whole = gitinput._tree_entries(listing.decode("utf-8", "surrogateescape"))
    assert whole == gitinput._tree_entries_apart(listing)
    assert len(whole[0]) == 2 * len(NAMES) + 1
    top = subprocess.run(["git", "ls-tree", "-z", "--full-tree", head], cwd=repo, check=True, capture_output=True).stdout
    assert whole[1] == top
    assert gitinput.tree_files(head, str(repo)) == whole[0]


def test_read_blobs_tells_every_object_id_or_names_the_one_that_is_not(repo: Path) -> None:
    """Object ids told at once (SHA-1 and SHA-256 lengths together), else one by one: anything but
    lowercase hex of those lengths is refused, whatever else is asked with it."""
    ids = ["1" * 40, "a" * 64]
    assert gitinput._all_object_ids(ids)
    assert gitinput.read_blobs(ids, str(repo)) == [None, None]
    for bad in ["A" * 40, "1" * 41, "1" * 39, "g" * 40, "\u00e9" * 40, "1" * 39 + "\n", ""]:
        assert not gitinput._all_object_ids([*ids, bad])
        with pytest.raises(ValueError, match="not an object id"):
            gitinput.read_blobs([*ids, bad], str(repo))
