"""What a change introduces: the gate of `check --diff [BASE]`, `check --staged` and the
pre-commit hook (README "Diff modes and the gate").

A change is judged by what it brings, not by what it finds already there, as `policylint diff`
judges one (and as ruff's, semgrep's and SonarQube's "new code" gates do). So these runs:

- read the whole repository as context, whatever PATHs are given: the PATHs only choose which
  part of the change is reported on, so `--staged apps/` still finds the Gateway in `platform/`;
- report the findings in scope of the change (policylint.report_scope): in the files it touched,
  or about their objects, including the objects it deleted or renamed away;
- lint the base too (the commit the change is measured from, read from git objects, with the
  same configuration), and match the findings by fingerprint as `policylint diff` does: a
  finding in scope that the base has as well is pre-existing, the others are introduced;
- fail (`--gate introduced`, the default) only on introduced findings at or above `--fail-on`;
  `--gate all` fails on every finding in scope, pre-existing ones included.

`--staged` with nothing staged (`pre-commit run --all-files`, a run by hand) has no change to
measure: the PATHs are checked whole, against the repository, and every finding counts.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import field, replace
from typing import TYPE_CHECKING

from policylint.values import frozen

if TYPE_CHECKING:
    from policylint.findings import Finding
    from policylint.incremental import memo
    from policylint.incremental.resident import Resident
    from policylint.input.git import Change
    from policylint.input.sources import Source
    from policylint.k8s.objects import ObjectKey
    from policylint.pipeline import LintRequest, LintResult, Part
    from policylint.report_scope import ChangeSet
    from policylint.reported import Reported

INTRODUCED = "introduced"
ALL = "all"
GATES = (INTRODUCED, ALL)


@frozen(slots=False)
class Comparison:
    """Two runs' findings matched by fingerprint (rule, object, field path; never lines), so a
    finding that only moved is unchanged."""

    introduced: list[Finding]  # after, not before
    fixed: list[Finding]  # before, not after
    unchanged: list[Finding]  # after, and before too


def compare_findings(before: Iterable[Finding], after: Iterable[Finding]) -> Comparison:
    old = {f.fingerprint: f for f in before}
    new = {f.fingerprint: f for f in after}
    return Comparison(
        [f for k, f in new.items() if k not in old],
        [f for k, f in old.items() if k not in new],
        [f for k, f in new.items() if k in old],
    )


@frozen(slots=False)
class Measured:
    """A change as `--diff` or `--staged` sees it."""

    root: str  # the repository's top directory
    context: str  # the repository as a path to read for context, as the working directory names it
    change: ChangeSet | None  # None: nothing staged, the PATHs are checked whole
    base: str | None  # the commit (or, before the first commit, the empty tree) measured from
    base_name: str  # how messages name the base: `HEAD`, the BASE given, or a commit id
    # The commit whose tree is the change's side (a pushed commit), read from git objects; None:
    # the working tree, or the index with `--staged`.
    head: str | None = None
    # With no change to measure (`change` None): why the PATHs are checked whole.
    whole: str = "nothing is staged"
    # The changed files under the PATHs (the change considered), and outside them (not considered).
    considered: int = 0
    elsewhere: int = 0
    # Every file the change touched (git's raw diff), and what those under the PATHs that it
    # modified or removed held at the base, by their path in the repository.
    changes: tuple[Change, ...] = ()
    before_contents: Mapping[str, bytes] = field(default_factory=dict)


def _under(path: str, roots: Sequence[str]) -> bool:
    return any(path == root or path.startswith(root.rstrip(os.sep) + os.sep) for root in roots)


ZERO = "0" * 40  # git's name for "no commit" in a push


@frozen(slots=False)
class Pushed:
    """What pre-commit tells a pre-push hook of the push (pre-commit's commands/hook_impl.py,
    `_pre_push_ns`, and commands/run.py): PRE_COMMIT_FROM_REF, the remote's commit of the branch,
    or on a new branch the parent of its first commit the remote does not have; and
    PRE_COMMIT_TO_REF, the commit pushed. Neither, with PRE_COMMIT_REMOTE_NAME set: the push holds
    the branch's root commit, and there is nothing it is measured from."""

    base: str | None
    head: str | None


def pushed(environ: Mapping[str, str] | None = None) -> Pushed | None:
    """The push a pre-push hook runs for, None outside one."""
    env = os.environ if environ is None else environ
    base, head = env.get("PRE_COMMIT_FROM_REF"), env.get("PRE_COMMIT_TO_REF")
    if base and head and base != ZERO:
        return Pushed(base, head)
    if env.get("PRE_COMMIT_REMOTE_NAME"):
        return Pushed(None, None)
    return None


def measure(paths: Sequence[str], base: str | None, staged: bool, namespace: str, cache_dir: str | None = None) -> Measured:
    """The change of `--diff [BASE]` / `--staged`, restricted to `paths`: the files it touched
    under them, and what the files it modified or removed under them held at the base
    (GitError: a usage error). `--staged` alone compares the index with HEAD, as a commit would
    (before the first commit: with nothing). `cache_dir`: the parse cache, where the base's
    contents of the changed files were kept when an earlier run read them."""
    from policylint.input import git
    from policylint.report_scope import ChangeSet, keys_before

    root = git.repository_root(os.getcwd())
    for path in paths:
        if path != "-" and os.path.relpath(os.path.abspath(path), root).startswith(os.pardir):
            raise git.GitError(f"{path} is outside the git repository at {root}")
    context = os.path.relpath(root)
    push = pushed() if not staged and base is None else None
    head: str | None = None
    if push is not None and push.base is None:
        # A new root branch: no commit it is measured from, everything pushed is the change.
        return Measured(root, context, None, None, "", whole="the push holds the branch's root commit: there is no base")
    if push is not None and push.base is not None and push.head is not None:
        import click

        commit, head = git.resolve_base(push.base, root), git.resolve_base(push.head, root, what="pushed commit")
        name = commit[:12]
        click.echo(f"policylint: --diff compares the pushed commit {head[:12]} with {name} (pre-push)", err=True)
    elif staged and base is None:
        commit = git.head_or_empty_tree(root)
        name = "HEAD" if git.has_commit(root) else "the empty tree"  # before the first commit
    elif base is None:
        # The base was found, not named: say which, so that a hook's pass says what it checked.
        import click

        from policylint.textsafe import escape

        commit, described = git.default_base(root)
        click.echo(f"policylint: --diff compares with {escape(described)}", err=True)
        name = commit[:12]
    else:
        commit = git.resolve_base(base, root)
        name = base
    changed = git.changes(commit, root, staged=staged, head=head)
    if staged and base is None and not changed:
        return Measured(root, context, None, None, name)
    roots = [os.path.abspath(p) for p in paths if p != "-"]
    elsewhere = sum(1 for c in changed if not any(p is not None and _under(os.path.join(root, p), roots) for p in (c.old, c.new)))
    files = frozenset(
        os.path.join(root, c.new) for c in changed if c.new is not None and _under(os.path.join(root, c.new), roots)
    )
    old = [
        (c.old, c.old_blob)
        for c in changed
        if c.old is not None and c.old_blob is not None and _under(os.path.join(root, c.old), roots)
    ]
    blobs = git.read_blobs([blob for _, blob in old], root)
    from policylint.input.cache import open_cache

    # Never a cache inside the repository (policylint.input.cache): its authors would choose it.
    cache, _ = open_cache(cache_dir, [root])
    contents = {path: blob for (path, _), blob in zip(old, blobs) if blob is not None}
    before = keys_before(list(contents.items()), namespace, cache)
    return Measured(
        root,
        context,
        ChangeSet(files, before),
        commit,
        name,
        head,
        "",
        len(changed) - elsewhere,
        elsewhere,
        tuple(changed),
        contents,
    )


class Base:
    """The base side of a change's gate: the base's files read from git objects, linted with the
    request's configuration (rules, severities, suppressions, loading options), so that only the
    change differs between the two runs, and what earlier runs of the gate kept of what it finds
    (policylint.incremental.memo)."""

    def __init__(self, request: LintRequest, measured: Measured, resident: Resident | None = None) -> None:
        """`resident`: the change's side's, which worked out the keys of the bytes both sides read."""
        from policylint.input.commit import commit_sources

        assert measured.base is not None
        self.sources = commit_sources(measured.base, measured.root, [measured.root], request.walk, request.helm_templates)
        self.request = replace(
            request,
            sources=self.sources,
            paths=(measured.context,),
            context_paths=(),
            change=None,
            staged=False,
            report_policies=False,
            report_chains=False,
            write_baseline=None,
            show_suppressed=False,
        )
        self.kept = _Kept(self.request, self.sources, resident)
        self._whole: tuple[frozenset[str] | None] | None = None

    def whole(self) -> frozenset[str] | None:
        """What the base finds, as a previous run of the gate found it (the base of a hook run is
        nearly always the commit the previous run checked), read once."""
        if self._whole is None:
            self._whole = (self.kept.recall(),)
        return self._whole[0]

    def read_back(self, change: ChangeSet | None) -> bool:
        """Whether the base's findings will be read back rather than worked out, told before the
        change's side runs: the whole base is kept, or the staged side of the run that checked it
        kept its part, holding every object the change's files held at the base (the findings to
        match are nearly always about those). A guess that turns out wrong costs time, never a
        verdict: the base side then runs without what the change's side recorded for it."""
        if self.whole() is not None:
            return True
        kept = self.kept.members()
        return kept is not None and change is not None and change.before <= kept[0]


def introduced(
    request: LintRequest,
    findings: Sequence[Finding],
    measured: Measured,
    resident: Resident | None = None,
    base: Base | None = None,
) -> frozenset[str]:
    """The fingerprints of `findings` (a run's) that the base does not have: its findings are read
    back when an earlier run kept them, else worked out in the part of the base they can depend on,
    from what the change's side kept in `resident` (the objects of the same bytes, the part
    search's sets: policylint.incremental.resident). `base`: the base side prepared before the
    change's side ran."""
    from policylint.pipeline import lint

    if not findings or measured.base is None:
        return frozenset()  # nothing to tell apart: the base need not be read
    base = base if base is not None else Base(request, measured, resident)
    kept = base.kept
    before = base.whole()
    if before is None:
        # Else only what can match a finding reported: a finding is matched by its rule, its
        # object (or, on no object, its file) and its field path, so the base's findings about
        # the same objects and files are all that is needed, and they are a whole run's when the
        # analysis covers everything they can depend on (policylint.semantics.components).
        part = (
            frozenset(f.file for f in findings if f.object is None),
            frozenset(f.object for f in findings if f.object is not None),
        )
        before = kept.recall(part)
        if before is None:
            # What the staged side of the run that checked the base found about its part, when
            # the part it analysed covers this one (the hook's next commit).
            before = kept.recall_members(part)
        if before is None:
            # Only the part's own findings are matched: its objects are the members, not what a
            # change of them could move as well (policylint.semantics.directed `searched`).
            linted = lint(base.request, part=part, resident=resident, exact=True)
            before = frozenset(
                f.fingerprint for f in linted.findings if f.object in part[1] or (f.object is None and f.file in part[0])
            )
            if not linted.internal_error:  # a failure inside the run is not kept as what the base finds
                kept.remember(part, before)
    return frozenset(f.fingerprint for f in findings if f.fingerprint not in before)


class _Kept:
    """What earlier runs of the gate found in the base (policylint.incremental.memo)."""

    def __init__(self, request: LintRequest, sources: Sequence[Source], resident: Resident | None = None) -> None:
        """`resident`: the change's side's, which worked out the keys of the bytes both sides read."""
        from policylint.input.cache import open_cache
        from policylint.input.load import is_json_name

        self.request = request
        self.cache, _ = open_cache(request.cache_dir, [*request.paths, *request.crd_paths])
        # What a scoped run kept of its part, read once: asked before the change's side runs
        # (`Base.read_back`) and again for the findings to match (`introduced`).
        self._members: tuple[tuple[frozenset[ObjectKey], frozenset[str], frozenset[str]] | None] | None = None
        self._named: memo.Keys | None = None
        cache = self.cache
        if cache is None:
            self.files: list[tuple[str, str | None]] = []
            return
        key = cache.key if resident is None else functools.partial(resident.content_key, cache)
        self.files = [
            (s.display, key(s.content, json=is_json_name(s.display)) if s.content is not None else None) for s in sources
        ]

    def _entry(self, part: Part | None) -> str | None:
        return self._keys().key(part) if self.cache is not None else None

    def _keys(self) -> memo.Keys:
        """The entries' names over these files, their common part worked out once."""
        from policylint.incremental import memo

        if self._named is None:
            assert self.cache is not None
            self._named = memo.Keys(self.cache, self.request, self.files)
        return self._named

    def recall(self, part: Part | None = None) -> frozenset[str] | None:
        """The fingerprints kept for the whole base, or for `part` of it; None if none are."""
        from policylint.incremental import memo

        entry = self._entry(part)
        return memo.recall(self.cache, entry) if entry is not None and self.cache is not None else None

    def _members_entry(self) -> str | None:
        return self._keys().key(members=True) if self.cache is not None else None

    def members(self) -> tuple[frozenset[ObjectKey], frozenset[str], frozenset[str]] | None:
        """What a scoped run over these files kept of its part (policylint.incremental.memo.members)."""
        from policylint.incremental import memo

        if self._members is None:
            entry = self._members_entry()
            self._members = (memo.members(self.cache, entry) if entry is not None and self.cache is not None else None,)
        return self._members[0]

    def recall_members(self, part: Part) -> frozenset[str] | None:
        """The fingerprints a scoped run over these files kept, if its part covers `part`
        (`memo.recall_members`, of the entry read once)."""
        from policylint.incremental import memo

        return memo.covered(self.members(), part)

    def remember(self, part: Part, fingerprints: frozenset[str]) -> None:
        from policylint.incremental import memo

        entry = self._entry(part)
        if entry is not None and self.cache is not None:
            memo.remember(self.cache, entry, fingerprints)


def classify(
    request: LintRequest, result: LintResult, measured: Measured, resident: Resident | None = None, base: Base | None = None
) -> None:
    """Which findings the change introduces, and the report of a change: every finding it
    introduces, wherever it is (nothing else changed between the two runs, so each is caused by
    the change: a renamed listener's PL407 in the changed file and the PL413 it brings on a
    policy two files away alike), and the pre-existing findings in its scope. When part of the
    change lies outside the PATHs, that part is not considered, and a finding outside the scope
    cannot be told to come from the part that is: only the findings in scope are reported."""
    from policylint.findings import Finding

    result.base = measured.base_name
    result.change_files = (measured.considered, measured.elsewhere)
    knock_on = result.beyond_scope if measured.elsewhere == 0 else []
    result.introduced = introduced(request, [*result.findings, *knock_on], measured, resident, base)
    caused = [f for f in knock_on if f.fingerprint in result.introduced]
    if caused:
        result.findings = sorted([*result.findings, *caused], key=Finding.sort_key)


def gating(result: Reported, gate: str) -> list[Finding]:
    """The findings the exit code is decided on: the introduced ones when the run measured a
    change and `gate` is `introduced`, else every finding reported."""
    if result.introduced is None or gate == ALL:
        return list(result.findings)
    return [f for f in result.findings if f.fingerprint in result.introduced]
