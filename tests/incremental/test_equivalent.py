"""A change that leaves every object's data as it was (policylint.incremental.equivalent): the gate
answers it from the base's whole analysis, its findings in the changed files moved with their
lines, without analysing; anything else is analysed as before.

- By hand: two comment lines above a file's first document and a blank line before its second
  move its two findings (PL407 on line 10, PL301 on line 22 of tests/scope/test_change_gate.py's
  LEGACY) to lines 12 and 25, pre-existing both, with no pipeline run; the report is a run's
  without a cache, byte for byte.
- What is not such a change is analysed: a comment line inside a block scalar (content, not a
  comment), a suppression comment (it applies to lines), documents swapped, a value changed.
- An entry that is not what `remember` writes is a miss.
- The next commit's entry after an answered comment is a link to its base's entry (the base's name
  and the changed files' line maps), read back through the chain; at `MAX_LINKS` links it is
  written whole again, and never over an entry of the same files (a comment removed again). A link
  that is not what `_link` writes, or whose whole entry is gone, is a miss.
- Differential: random sequences of text edits (comments appended and inserted, blank lines,
  comment and blank lines removed, suppression comments added and removed, documents swapped,
  files re-indented or re-quoted, a value changed), staged, each run with a persistent cache and
  again without one: the exit code and the report are byte-identical, and some runs were
  answered this way.
"""

from __future__ import annotations

import json
import os
import random
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from policylint import pipeline
from policylint.cli import cli
from policylint.incremental import equivalent
from policylint.input.cache import ParseCache
from tests.gitrepo import git, init
from tests.incremental.test_incremental import _corpus, _write
from tests.scope.test_change_gate import APP, LEGACY, POLICIES, lay_out


def check(*args: str, fmt: str = "json") -> tuple[int, str]:
    result = CliRunner().invoke(cli, ["check", "--format", fmt, "--staged", "--gate-base", "HEAD", *args])
    assert result.exit_code in (0, 1), result.output
    return result.exit_code, result.stdout


@pytest.fixture
def answered(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """Whether each change was answered from the base's findings (True) or analysed (False)."""
    made: list[bool] = []
    real = equivalent.answer

    def counted(*args: Any, **kwargs: Any) -> Any:
        found = real(*args, **kwargs)
        made.append(found is not None)
        return found

    monkeypatch.setattr(equivalent, "answer", counted)
    return made


@pytest.fixture
def analyses(monkeypatch: pytest.MonkeyPatch) -> list[object]:
    made: list[object] = []
    real = pipeline._lint

    def counted(*args: Any) -> pipeline.LintResult:
        made.append(args[0])
        return real(*args)

    monkeypatch.setattr(pipeline, "_lint", counted)
    return made


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """tests/scope/test_change_gate.py's repository and a ConfigMap holding a block scalar, at a
    commit the hook checked: its whole analysis kept, with the policies section of a JSON report."""
    root = init(tmp_path / "repo")
    lay_out(root)
    (root / "apps" / "team-x" / "notes.yaml").write_text(NOTES)
    git(root, "add", ".")
    git(root, "commit", "-q", "-m", "base")
    monkeypatch.chdir(root)
    (root / "apps" / "team-x" / "app.yaml").write_text(APP.replace("port: 8080\n---", "port: 8081\n---"))
    git(root, "add", ".")
    check("--cache-dir", str(tmp_path / "cache"))
    git(root, "commit", "-q", "-m", "port")
    return root


NOTES = """\
apiVersion: v1
kind: ConfigMap
metadata:
  name: notes
  namespace: team-x
data:
  readme: |
    first
    second
"""


def _legacy(repo: Path, text: str) -> None:
    (repo / "apps" / "team-x" / "legacy.yaml").write_text(text)
    git(repo, "add", ".")


def test_comments_and_blank_lines_move_the_findings_without_an_analysis(
    repo: Path, tmp_path: Path, answered: list[bool], analyses: list[object]
) -> None:
    first, second = LEGACY.split("---\n")
    _legacy(repo, "# owned by team x\n# reviewed\n" + first + "\n---\n" + second)
    cached = check("--cache-dir", str(tmp_path / "cache"))
    assert answered == [True] and analyses == []
    report = json.loads(cached[1])
    rows = [(f["rule"], f["file"], f["line"], f["introduced"]) for f in report["findings"]]
    # LEGACY's PL407 on line 10 and PL301 on line 22, below two lines more and then one more.
    assert rows == [("PL407", "apps/team-x/legacy.yaml", 12, False), ("PL301", "apps/team-x/legacy.yaml", 25, False)]
    assert cached == check("--no-cache")
    # The next commit's base is this change's side: a comment on it is answered the same way.
    git(repo, "commit", "-q", "-m", "comments")
    _legacy(repo, (repo / "apps" / "team-x" / "legacy.yaml").read_text() + "# end\n")
    analyses.clear()
    cached = check("--cache-dir", str(tmp_path / "cache"))
    assert answered == [True, True] and analyses == []
    assert cached == check("--no-cache")


BROKEN = POLICIES.replace("name: shop-timeouts\n  namespace: team-x", "name: stray\n  namespace: team-y").replace(
    "    name: shop\n", "    name: gone\n"
)


@pytest.fixture
def decoded(monkeypatch: pytest.MonkeyPatch) -> list[list[tuple[str, str]]]:
    """The rows each answer decoded, as (rule, file)."""
    made: list[list[tuple[str, str]]] = []
    real = equivalent.Recalled.rows

    def counted(self: equivalent.Recalled, ids: Any) -> dict[int, list[Any]]:
        rows = real(self, ids)
        made.append([(row[3], row[0]) for _, row in sorted(rows.items())])
        return rows

    monkeypatch.setattr(equivalent.Recalled, "rows", counted)
    return made


def test_a_comment_decodes_the_rows_of_its_files_and_of_the_objects_referencing_theirs(
    repo: Path, tmp_path: Path, answered: list[bool], decoded: list[list[tuple[str, str]]]
) -> None:
    """The whole entry's rows are read through its index: a comment's answer decodes the rows in
    the changed file (or whose notes or fix name it) and those of the objects that reference its
    objects, which the report scope may hold, and no other. The whole analysis: the fixture's
    PL412 in app.yaml (the route `shop`, whose parent is the Gateway `eg`, sends to port 8081 of a
    Service serving 8080), LEGACY's PL407 (the route `legacy`, whose parent is `eg`) and PL301
    (the ClientTrafficPolicy `edge-tls`, whose target is `eg`), both in legacy.yaml, and a stray
    policy's PL201 in team-y/stray.yaml (its target, a route `gone`, is nowhere)."""
    stray = repo / "apps" / "team-y" / "stray.yaml"
    stray.parent.mkdir()
    stray.write_text(BROKEN)
    git(repo, "add", ".")
    report = json.loads(check("--cache-dir", str(tmp_path / "cache"))[1])
    assert [f["rule"] for f in report["findings"]] == ["PL201"]
    git(repo, "commit", "-q", "-m", "stray")
    decoded.clear()
    legacy = ("PL407", "apps/team-x/legacy.yaml"), ("PL301", "apps/team-x/legacy.yaml")
    shop, stray_row = ("PL412", "apps/team-x/app.yaml"), ("PL201", "apps/team-y/stray.yaml")
    cases = [
        # The route and the Service `shop`: the policy targeting the route has no finding.
        ("apps/team-x/app.yaml", [shop]),
        # The Gateway `eg`, referenced by both routes and the policy of LEGACY (whose findings'
        # notes name its listeners there too).
        ("platform/quickstart.yaml", [shop, *legacy]),
        ("apps/team-y/stray.yaml", [stray_row]),
        ("apps/team-x/legacy.yaml", [*legacy]),
    ]
    for file, rows in cases:
        # Each from the commit whose whole entry the run above kept: no link followed.
        path = repo / file
        path.write_text(path.read_text() + "# note\n")
        git(repo, "add", ".")
        cached = check("--cache-dir", str(tmp_path / "cache"))
        assert cached == check("--no-cache")
        assert decoded[-1] == rows, file
        git(repo, "checkout", "-q", "HEAD", "--", file)
    # A comment committed: the next answer follows its link, and reads the rows the link moves
    # (in app.yaml) to check that it moves them.
    (repo / "apps/team-x/app.yaml").write_text((repo / "apps/team-x/app.yaml").read_text() + "# note\n")
    git(repo, "add", ".")
    check("--cache-dir", str(tmp_path / "cache"))
    git(repo, "commit", "-q", "-m", "note")
    stray.write_text(stray.read_text() + "# note\n")
    git(repo, "add", ".")
    assert check("--cache-dir", str(tmp_path / "cache")) == check("--no-cache")
    assert decoded[-1] == [shop, stray_row]
    # The stray file added was analysed; the commit of app.yaml's comment read back the result of
    # the same staged change above, whose answer kept the link.
    assert answered == [False, *[True] * 5] and len(decoded) == 5


def test_the_fingerprints_kept_apart_are_written_as_remember_writes_them(tmp_path: Path) -> None:
    """The whole entry keeps the active findings' fingerprints as the list `memo.remember` writes:
    the next commit's entry is those bytes, and anything else writes nothing."""
    from policylint.incremental import memo

    cache = ParseCache(str(tmp_path / "cache"))
    found = ["0123456789abcdef", "fedcba9876543210ff"]
    memo.remember(cache, "a" * 40, reversed(found))
    memo.remember_listed(cache, "b" * 40, b'["0123456789abcdef","fedcba9876543210ff"]')
    assert bytes(cache.payload("a" * 40) or b"") == bytes(cache.payload("b" * 40) or b"x")
    assert memo.recall(cache, "b" * 40) == frozenset(found)
    for listed in (b'["0123456789abcdef",1]', b'["0123"]', b'{"a":"0123456789abcdef"}', b'["0123456789abcdef"', b"[]x"):
        memo.remember_listed(cache, "c" * 40, listed)
        assert cache.payload("c" * 40) is None, listed
    memo.remember_listed(cache, "c" * 40, b"[]")
    assert memo.recall(cache, "c" * 40) == frozenset()


@pytest.fixture
def reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The files read from disk (policylint.input.reader), by the name a run shows."""
    from policylint.input import reader

    made: list[str] = []
    # A file read as an input file, or as its staged blob (`on_disk`'s one read of its size).
    for name in ("_read_file", "_read_sized"):
        real = getattr(reader, name)

        def counted(source: Any, real: Any = real) -> Any:
            made.append(source.display)
            return real(source)

        monkeypatch.setattr(reader, name, counted)
    return made


def test_a_comment_answered_reads_the_changed_file_alone(
    repo: Path, tmp_path: Path, answered: list[bool], reads: list[str]
) -> None:
    """The staged files are named by their blobs' content keys, kept by the run before
    (policylint.incremental.blobkeys): the answer reads the changed file's bytes, once, and the
    run again none; it read all five files before."""
    _legacy(repo, "# owned by team x\n" + LEGACY)
    cached = check("--cache-dir", str(tmp_path / "cache"))
    assert answered == [True]
    assert reads == ["apps/team-x/legacy.yaml"]
    reads.clear()
    assert check("--cache-dir", str(tmp_path / "cache")) == cached
    assert answered == [True] and reads == []
    assert cached == check("--no-cache")


def test_a_comment_staged_under_an_edit_not_staged_is_answered_from_the_staged_bytes(
    repo: Path, tmp_path: Path, answered: list[bool]
) -> None:
    """The file on disk is not its staged blob: the answer reads the blob from git, and moves the
    findings as the staged text moved them (a run without a cache reads the index too)."""
    _legacy(repo, "# owned by team x\n" + LEGACY)
    (repo / "apps" / "team-x" / "legacy.yaml").write_text("# one\n# two\n# three\n" + LEGACY.replace("https", "web"))
    cached = check("--cache-dir", str(tmp_path / "cache"))
    assert answered == [True]
    rows = [(f["rule"], f["line"]) for f in json.loads(cached[1])["findings"]]
    assert rows == [("PL407", 11), ("PL301", 23)]  # one comment line above LEGACY's lines 10 and 22
    assert cached == check("--no-cache")


def test_a_value_changed_hashes_the_changed_files_bytes_alone(
    repo: Path, tmp_path: Path, answered: list[bool], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A run that analyses takes each unchanged file's content key from its staged blob's, kept by
    the run before (policylint.incremental.blobkeys), for the staged side's shells and the base's
    files alike: the bytes hashed are the changed file's, staged and at the base; the tree before
    hashed the four others' too."""
    hashed: list[bytes] = []
    real = ParseCache.key

    def counted(self: ParseCache, data: bytes, *, json: bool = False) -> str:
        hashed.append(data)
        return real(self, data, json=json)

    notes = repo / "apps" / "team-x" / "notes.yaml"
    notes.write_text(NOTES.replace("second", "third"))
    git(repo, "add", ".")
    monkeypatch.setattr(ParseCache, "key", counted)
    cached = check("--cache-dir", str(tmp_path / "cache"))
    assert answered == [False]
    # The measure of the change, the answer's check and the base side each hash the changed file's
    # base bytes (one file), the result's key and its loading its staged bytes.
    assert set(hashed) == {NOTES.encode(), NOTES.replace("second", "third").encode()}
    assert cached == check("--no-cache")


@pytest.mark.parametrize(
    "damage",
    [
        pytest.param(lambda keys, blob: {**keys, blob: "not a key"}, id="a-key-of-another-shape"),
        pytest.param(lambda keys, blob: {**keys, blob: keys[blob].upper()}, id="not-lowercase-hex"),
        pytest.param(lambda keys, blob: {**keys, blob: 12}, id="a-number"),
        pytest.param(lambda keys, blob: [keys], id="not-a-map"),
    ],
)
def test_blob_keys_that_are_not_what_save_writes_are_read_again(
    repo: Path, tmp_path: Path, answered: list[bool], reads: list[str], damage: Any
) -> None:
    """A forged entry of the blobs' content keys is a miss for what it does not hold as `save`
    writes it: those files are read and hashed, and the answer is the same."""
    from policylint.incremental.blobkeys import FORMAT, BlobKeys

    cache = ParseCache(tmp_path / "cache")
    keys = BlobKeys(cache, str(repo))
    payload = cache.payload(keys.entry)
    assert payload is not None
    kept = json.loads(bytes(payload))["keys"]
    assert len(kept) == 5  # the five files' blobs, kept by the run the fixture made
    notes = git(repo, "rev-parse", "HEAD:apps/team-x/notes.yaml").strip()
    damaged = damage(kept, notes)
    cache.put(keys.entry, json.dumps({"format": FORMAT, "keys": damaged}).encode())
    _legacy(repo, "# owned by team x\n" + LEGACY)
    cached = check("--cache-dir", str(tmp_path / "cache"))
    assert answered == [True]
    # The changed file, and the file whose key was damaged (every file when the entry is).
    if isinstance(damaged, dict):
        assert sorted(reads) == ["apps/team-x/legacy.yaml", "apps/team-x/notes.yaml"]
    else:
        assert len(reads) == len(set(reads)) == 5
    assert cached == check("--no-cache")
    # Written again whole by the run that read them.
    payload = ParseCache(tmp_path / "cache").payload(keys.entry)
    assert payload is not None and len(json.loads(bytes(payload))["keys"]) == 5


@pytest.mark.parametrize(
    "edit",
    [
        pytest.param(lambda text: text.replace("    first\n", "    first\n    # not a comment\n"), id="inside-a-block-scalar"),
        pytest.param(lambda text: text.replace("data:\n", "# policylint: disable-file=PL010\ndata:\n"), id="suppression"),
        pytest.param(lambda text: text.replace("  readme: |", "  readme:  |"), id="spaces-within-a-line"),
        pytest.param(lambda text: text.replace("second", "third"), id="a-value"),
    ],
)
def test_what_changes_data_or_lines_within_is_analysed(repo: Path, tmp_path: Path, answered: list[bool], edit: Any) -> None:
    notes = repo / "apps" / "team-x" / "notes.yaml"
    notes.write_text(edit(NOTES))
    git(repo, "add", ".")
    assert check("--cache-dir", str(tmp_path / "cache")) == check("--no-cache")
    assert answered == [False]


@pytest.mark.parametrize(
    ("edit", "diffs", "taken"),
    [
        pytest.param(lambda text: text.replace("second", "third"), 0, False, id="a-value"),
        pytest.param(lambda text: text.replace("name: notes", "name: notes-x"), 0, False, id="a-name"),
        pytest.param(lambda text: "# a note\n" + text + "\n", 1, True, id="comment-and-blank-lines"),
    ],
)
def test_a_changed_value_is_told_without_diffing_the_texts(
    repo: Path, tmp_path: Path, answered: list[bool], monkeypatch: pytest.MonkeyPatch, edit: Any, diffs: int, taken: bool
) -> None:
    """A line of data on one side and not the other declines before the two texts are diffed
    (the diff's cost grows with the file); comment and blank lines alone are still diffed once."""
    made: list[object] = []
    real = equivalent.difflib.SequenceMatcher

    def counted(*args: Any, **kwargs: Any) -> Any:
        made.append(args)
        return real(*args, **kwargs)

    monkeypatch.setattr(equivalent.difflib, "SequenceMatcher", counted)
    notes = repo / "apps" / "team-x" / "notes.yaml"
    notes.write_text(edit(NOTES))
    git(repo, "add", ".")
    assert check("--cache-dir", str(tmp_path / "cache")) == check("--no-cache")
    assert answered == [taken] and len(made) == diffs


def test_data_lines_are_counted_whatever_their_order() -> None:
    """By hand: `_data_lines` counts each line of data, not comments or blank lines."""
    assert equivalent._data_lines(["a: 1", "  # x", "", "a: 1", "b: 2"]) == {"a: 1": 2, "b: 2": 1}
    assert equivalent._data_lines(["b: 2", "a: 1", "a: 1"]) == equivalent._data_lines(["a: 1", "# y", "b: 2", "a: 1"])
    assert equivalent._data_lines(["a: 1"]) != equivalent._data_lines(["a: 1", "a: 1"])


def test_documents_swapped_are_analysed(repo: Path, tmp_path: Path, answered: list[bool]) -> None:
    first, second = LEGACY.split("---\n")
    _legacy(repo, second + "---\n" + first)
    assert check("--cache-dir", str(tmp_path / "cache")) == check("--no-cache")
    assert answered == [False]


def test_a_suppression_comment_in_the_changed_file_is_analysed(repo: Path, tmp_path: Path, answered: list[bool]) -> None:
    _legacy(
        repo,
        LEGACY.replace(
            "    sectionName: https\n---", "    # policylint: disable-next-line=PL407 -- moving soon\n    sectionName: https\n---"
        ),
    )
    cached = check("--cache-dir", str(tmp_path / "cache"))
    assert cached == check("--no-cache")
    assert answered == [False]
    report = json.loads(cached[1])
    assert [f["rule"] for f in report["findings"]] == ["PL301"]


def test_an_entry_that_is_not_what_remember_writes_is_a_miss(
    repo: Path, tmp_path: Path, answered: list[bool], monkeypatch: pytest.MonkeyPatch
) -> None:
    real = ParseCache.payload

    def forged(self: ParseCache, key: str) -> Any:
        found = real(self, key)
        # A whole entry's index is its last line.
        rows, _, index = bytes(found).rpartition(b"\n") if found is not None else (b"", b"", b"")
        if index.startswith(b'{"format":%d,"findings":' % equivalent.FORMAT):
            return memoryview(rows + b"\n" + index.replace(b'"objects":', b'"objects":"', 1))
        return found

    monkeypatch.setattr(ParseCache, "payload", forged)
    _legacy(repo, LEGACY + "# end\n")
    assert check("--cache-dir", str(tmp_path / "cache")) == check("--no-cache")
    assert answered == [False]


@pytest.mark.parametrize(
    "forge",
    [
        pytest.param(lambda d: d.replace(b'"offsets":[0,', b'"offsets":[1,'), id="rows-not-from-the-start"),
        pytest.param(lambda d: d.replace(b'"offsets":[0,', b'"offsets":[0,0,'), id="rows-out-of-order"),
        pytest.param(
            lambda d: d.replace(b'},"always":', b',"apps/team-x/legacy.yaml":[[0,99]]},"always":'), id="a-run-past-the-rows"
        ),
        pytest.param(lambda d: d.replace(b'"always":[]', b'"always":[99]'), id="a-row-past-the-rows"),
        pytest.param(
            lambda d: d.replace(b'},"policies":', b',"\\"infra\\"":[1,99999999]},"policies":'), id="a-section-past-the-end"
        ),
        pytest.param(lambda d: d.replace(b'"fingerprints":[', b'"fingerprints":[0,'), id="fingerprints-of-another-shape"),
        pytest.param(lambda d: d.replace(b'"policies":[', b'"policies":null,"x":['), id="policies-kept-and-not-located"),
    ],
)
def test_an_index_that_is_not_what_remember_writes_is_a_miss(
    repo: Path, tmp_path: Path, answered: list[bool], monkeypatch: pytest.MonkeyPatch, forge: Any
) -> None:
    """The whole entry's index (its last line) forged: where the rows start, which rows a file's
    answer reads, where a namespace's section or the fingerprints lie, whether the policies
    section is kept: the change is analysed."""
    real = ParseCache.payload
    forged_any: list[bool] = []

    def forged(self: ParseCache, key: str) -> Any:
        found = real(self, key)
        rows, _, index = bytes(found).rpartition(b"\n") if found is not None else (b"", b"", b"")
        if index.startswith(b'{"format":%d,"findings":' % equivalent.FORMAT):
            changed = forge(index)
            forged_any.append(changed != index)
            return memoryview(rows + b"\n" + changed)
        return found

    monkeypatch.setattr(ParseCache, "payload", forged)
    _legacy(repo, LEGACY + "# end\n")
    assert check("--cache-dir", str(tmp_path / "cache")) == check("--no-cache")
    assert answered == [False] and forged_any == [True]


@pytest.fixture
def written(monkeypatch: pytest.MonkeyPatch) -> list[bytes]:
    """The start of each entry of a whole analysis written: a link's or a whole one's."""
    made: list[bytes] = []
    names: set[str] = set()
    real_named, real_put = equivalent._named, ParseCache.put

    def named(*args: Any) -> str:
        name = real_named(*args)
        names.add(name)
        return name

    def recorded(self: ParseCache, key: str, payload: Any) -> None:
        data = payload if isinstance(payload, bytes) else b"".join(payload)
        if key in names:
            # A whole entry's index is its last line.
            made.append(data[:8] if data.startswith(b'{"link":') else data.rpartition(b"\n")[2][:8])
        real_put(self, key, data)

    monkeypatch.setattr(equivalent, "_named", named)
    monkeypatch.setattr(ParseCache, "put", recorded)
    return made


def _comment_committed(repo: Path, tmp_path: Path, n: int) -> tuple[int, str]:
    _legacy(repo, (repo / "apps" / "team-x" / "legacy.yaml").read_text() + f"# note {n}\n")
    cached = check("--cache-dir", str(tmp_path / "cache"))
    assert cached == check("--no-cache")
    git(repo, "commit", "-q", "-m", f"comment {n}")
    return cached


def test_the_next_commits_entry_links_to_its_base_up_to_a_bound(
    repo: Path, tmp_path: Path, answered: list[bool], written: list[bytes], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Comments committed one after another: each answer's entry for the next commit is its base's
    name and the changed file's line map, read back through the chain, until `MAX_LINKS` links
    are behind it; then the entry is written whole and the next one links to it."""
    monkeypatch.setattr(equivalent, "MAX_LINKS", 2)
    for n in range(5):
        _comment_committed(repo, tmp_path, n)
    assert answered == [True] * 5
    # The fixture's run kept the first whole entry; links to it, to the first link, then whole.
    assert written == [b'{"link":', b'{"link":', b'{"format', b'{"link":', b'{"link":']


def test_a_text_report_leaves_the_policies_section_undecoded_and_the_whole_entry_keeps_it(
    repo: Path, tmp_path: Path, answered: list[bool], written: list[bytes], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The policies section is a JSON document of its own after the rest of the entry: a text
    report's answer does not decode it (counted); the answer that writes the entry whole again
    reads it, moved with the lines, so that a JSON report after it is a run's without a cache."""
    monkeypatch.setattr(equivalent, "MAX_LINKS", 1)
    decoded: list[int] = []
    real = json.loads

    def counted(data: Any, *args: Any, **kwargs: Any) -> Any:
        value = real(data, *args, **kwargs)
        if type(value) is dict and set(value) == {"policies"}:
            decoded.append(len(value["policies"]))
        return value

    monkeypatch.setattr(equivalent.json, "loads", counted)
    legacy = repo / "apps" / "team-x" / "legacy.yaml"
    for n, fmt in enumerate(["text", "text", "json"]):
        # Above every document: the findings and the policies of the file move down a line.
        _legacy(repo, f"# note {n}\n" + legacy.read_text())
        cached = check("--cache-dir", str(tmp_path / "cache"), fmt=fmt)
        assert cached == check("--no-cache", fmt=fmt)
        git(repo, "commit", "-q", "-m", f"comment {n}")
        if n == 0:
            assert decoded == []  # a link written
        elif n == 1:
            assert len(decoded) == 1 and decoded[0] > 0  # read to write the entry whole
    assert answered == [True, True, True]
    assert written == [b'{"link":', b'{"format', b'{"link":']
    assert len(decoded) == 2  # the JSON report's


def test_a_comment_removed_again_leaves_the_entry_of_its_files_whole(
    repo: Path, tmp_path: Path, answered: list[bool], written: list[bytes]
) -> None:
    """The files go back to the fixture's commit, whose whole entry is kept: a link to the
    comment's entry written over it would make a cycle, and every later comment analysed."""
    legacy = repo / "apps" / "team-x" / "legacy.yaml"
    text = legacy.read_text()
    _comment_committed(repo, tmp_path, 0)
    _legacy(repo, text)
    assert check("--cache-dir", str(tmp_path / "cache")) == check("--no-cache")
    git(repo, "commit", "-q", "-m", "comment removed")
    _comment_committed(repo, tmp_path, 1)
    assert answered == [True, True, True]
    assert written == [b'{"link":', b'{"link":']  # the second run writes nothing


def test_the_line_map_of_a_link_is_kept_as_runs() -> None:
    # Lines 1-3 kept, two comment lines inserted after line 3, line 4 dropped (a comment).
    lines = {1: 1, 2: 2, 3: 3, 5: 6, 6: 7, 7: 8}
    assert equivalent._runs(lines) == [[1, 1, 3], [5, 6, 3]]
    base = "0" * 40
    decoded = json.loads(equivalent._link(base, {"a.yaml": lines}))
    assert decoded == {"link": 1, "base": base, "maps": [["a.yaml", [[1, 1, 3], [5, 6, 3]]]]}
    assert equivalent._linked(decoded, "f" * 40) == (base, [("a.yaml", lines)])


@pytest.mark.parametrize(
    "forge",
    [
        pytest.param(lambda d: d.replace(b'"base":"', b'"base":"../'), id="base-not-an-entry-name"),
        pytest.param(lambda d: d.replace(b'"maps":[[', b'"maps":[[1,'), id="maps-of-another-shape"),
        pytest.param(lambda d: d.replace(b'"maps":[["', b'"maps":[[7,[]],["'), id="a-file-that-is-not-a-name"),
        pytest.param(lambda d: d.replace(b"]]]]}", b",0]]]]}"), id="a-run-of-four"),
        pytest.param(lambda d: d.replace(b'"base":"', b'"base":"0').replace(b'","maps"', b'","maps"', 1)[:-1], id="truncated"),
    ],
)
def test_a_link_that_is_not_what_link_writes_is_a_miss(
    repo: Path, tmp_path: Path, answered: list[bool], monkeypatch: pytest.MonkeyPatch, forge: Any
) -> None:
    _comment_committed(repo, tmp_path, 0)
    real = ParseCache.payload

    def forged(self: ParseCache, key: str) -> Any:
        found = real(self, key)
        if found is not None and bytes(found).startswith(b'{"link":'):
            return memoryview(forge(bytes(found)))
        return found

    monkeypatch.setattr(ParseCache, "payload", forged)
    _comment_committed(repo, tmp_path, 1)
    assert answered == [True, False]


def test_a_link_whose_base_is_gone_is_a_miss(repo: Path, tmp_path: Path, answered: list[bool], written: list[bytes]) -> None:
    """The whole entry a link names pruned (or removed by hand): the change is analysed."""
    _comment_committed(repo, tmp_path, 0)
    assert written == [b'{"link":']
    for entry in (tmp_path / "cache").rglob("*"):
        if entry.is_file() and b'\n{"format":%d,"findings":' % equivalent.FORMAT in entry.read_bytes():
            entry.unlink()
    _comment_committed(repo, tmp_path, 1)
    assert answered == [True, False]


# -- differential: random text edits ---------------------------------------------------------------

RULES = ("PL201", "PL301", "PL407", "PL603", "PL702")


def _text_edit(root: Path, rng: random.Random) -> str:
    """One random edit of a file's text, in place; what it did."""
    files = sorted(p for p in root.glob("*.yaml"))
    path = rng.choice(files)
    text = path.read_text(encoding="utf-8")
    lines = text.split("\n")
    kind = rng.choice(
        ["append", "comment", "indented", "blank", "drop", "suppress", "unsuppress", "swap", "reindent", "quote", "value"]
    )
    at = rng.randrange(len(lines))
    if kind == "append":
        text += f"# note {rng.randrange(100)}\n"
    elif kind in ("comment", "indented", "blank", "suppress"):
        line = {
            "comment": "# a note",
            "indented": "    # an indented note",
            "blank": "",
            "suppress": f"# policylint: disable-next-line={rng.choice(RULES)}",
        }[kind]
        text = "\n".join([*lines[:at], line, *lines[at:]])
    elif kind in ("drop", "unsuppress"):
        marked = [
            i
            for i, x in enumerate(lines)
            if ("policylint:" in x if kind == "unsuppress" else x.strip() == "" or x.lstrip().startswith("#"))
        ]
        if marked and marked[-1] != len(lines) - 1:  # the text's last, empty piece ends it
            del lines[rng.choice([i for i in marked if i != len(lines) - 1])]
            text = "\n".join(lines)
    elif kind == "swap":
        docs = list(yaml.safe_load_all(text))
        if len(docs) > 1:
            i, j = rng.sample(range(len(docs)), 2)
            docs[i], docs[j] = docs[j], docs[i]
            text = yaml.safe_dump_all(docs, sort_keys=False)
    elif kind in ("reindent", "quote"):
        docs = list(yaml.safe_load_all(text))
        style = {"indent": 4} if kind == "reindent" else {"default_style": '"'}
        text = yaml.safe_dump_all(docs, sort_keys=False, **style)  # type: ignore[call-overload]
    elif kind == "value":
        docs = list(yaml.safe_load_all(text))
        doc = rng.choice([d for d in docs if isinstance(d, dict)] or [{}])
        if isinstance(doc.get("metadata"), dict):
            doc["metadata"].setdefault("labels", {})["edited"] = str(rng.randrange(100))
            text = yaml.safe_dump_all(docs, sort_keys=False)
    path.write_text(text, encoding="utf-8")
    return f"{kind} {path.name}"


def _differential(root: Path, cache: Path, seed: int, steps: int, n: int) -> list[bool]:
    """Whether each cached run was answered from the base's findings."""
    rng = random.Random(seed)
    init(root)
    _write(root, _corpus(seed, n, isolated=False))
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "start")
    os.chdir(root)
    made: list[bool] = []
    real = equivalent.answer

    def counted(*args: Any, **kwargs: Any) -> Any:
        found = real(*args, **kwargs)
        made.append(found is not None)
        return found

    done: list[str] = []
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(equivalent, "answer", counted)
        for step in range(steps):
            done.extend(_text_edit(root, rng) for _ in range(rng.randint(1, 2)))
            git(root, "add", "-A")
            fmt = "text" if step % 3 == 2 else "json"
            cached = check("--cache-dir", str(cache), fmt=fmt)
            assert cached == check("--no-cache", fmt=fmt), (seed, done)
            if rng.random() < 0.8:
                git(root, "commit", "-q", "--allow-empty", "-m", f"step {step}")
    return made


def test_differential_fast(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    made = _differential(tmp_path / "repo", tmp_path / "cache", seed=0, steps=12, n=30)
    assert True in made and False in made


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(4))
def test_differential(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, seed: int) -> None:
    monkeypatch.chdir(tmp_path)
    made = _differential(tmp_path / "repo", tmp_path / "cache", seed=seed, steps=20, n=120)
    assert True in made


# -- the first hook run after a whole run -----------------------------------------------------------


@pytest.fixture
def checked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """tests/scope/test_change_gate.py's repository, committed, and linted whole with a cache (a
    user's first run, or CI's), as text: no gate's run has seen it."""
    root = init(tmp_path / "repo")
    lay_out(root)
    git(root, "add", ".")
    git(root, "commit", "-q", "-m", "base")
    monkeypatch.chdir(root)
    result = CliRunner().invoke(cli, ["check", "--cache-dir", str(tmp_path / "cache"), "."])
    assert result.exit_code == 1, result.output
    return root


def test_the_first_hook_after_a_whole_run_answers_a_comment_from_what_it_found(
    checked: Path, tmp_path: Path, answered: list[bool], analyses: list[object]
) -> None:
    _legacy(checked, "# owned by team x\n" + LEGACY)
    analyses.clear()
    cached = check("--cache-dir", str(tmp_path / "cache"), fmt="text")
    assert answered == [True] and analyses == []
    assert cached == check("--no-cache", fmt="text")


def test_the_first_hook_after_a_whole_run_reads_its_base_back(checked: Path, tmp_path: Path, analyses: list[object]) -> None:
    """A value changed: the change's side is analysed, the base's findings are the whole run's."""
    (checked / "apps" / "team-x" / "app.yaml").write_text(APP.replace("port: 8080\n---", "port: 8081\n---"))
    git(checked, "add", ".")
    analyses.clear()
    cached = check("--cache-dir", str(tmp_path / "cache"))
    assert len(analyses) == 1  # the change's side alone (two on the tree before: its base's part too)
    assert cached == check("--no-cache")


def test_blob_keys_of_a_keys_shape_are_told_once_for_the_entry(tmp_path: Path) -> None:
    """An entry whose keys are all of a content key's shape is told so once (`_all_keys`), and each
    is then answered as kept; one key of another shape makes each told as it is looked up: that
    one a miss, the others answered."""
    from policylint.incremental import blobkeys
    from policylint.incremental.blobkeys import FORMAT, BlobKeys

    good = {f"{i:040x}": f"{i * 7:040x}" for i in range(1, 6)}
    assert blobkeys._all_keys(good) and blobkeys._all_keys({})
    blob = next(iter(good))
    for bad in [12, None, ["a" * 40], "A" * 40, "a" * 39, "a" * 41, "g" * 40, "\u00e9" * 40]:
        damaged = {**good, blob: bad}
        assert not blobkeys._all_keys(damaged)
        cache = ParseCache(tmp_path / "cache")
        keys = BlobKeys(cache, str(tmp_path))
        cache.put(keys.entry, json.dumps({"format": FORMAT, "keys": damaged}).encode())
        read = BlobKeys(cache, str(tmp_path))
        assert read.key(blob, json=False) is None
        assert [read.key(b, json=False) for b in list(good)[1:]] == list(good.values())[1:]
    cache.put(keys.entry, json.dumps({"format": FORMAT, "keys": good}).encode())
    read = BlobKeys(cache, str(tmp_path))
    assert [read.key(b, json=False) for b in good] == list(good.values())
    assert read.key(blob, json=True) is None  # another name: `*.json` bytes
