"""What a run imports, and the fast paths that keep it small (issue: startup targets).

Nothing here is timed: timings belong to benchmarks/startup.py, which these tests
only smoke-run. What is pinned instead is structural: which heavy modules a
small lint imports (none of jsonschema, pydantic, policylint.k8s.validation), and
that the plain checks standing in for pydantic on well-typed input accept
exactly what the pydantic models accept, with the same values, so that the
fast path never changes an answer.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from policylint.k8s.objects import Metadata, _metadata, _validate_metadata
from policylint.profiles.policy import _parse_ref
from tests.gitrepo import git, repository
from tests.lintutil import ROOT, lint_text

# Imported only by what needs them: validation, autofix (ruamel.yaml emits the documents a fix
# adds), the JUnit report.
HEAVY = ("pydantic", "jsonschema", "policylint.k8s.validation", "ruamel.yaml", "ruamel", "policylint.autofix", "junit_xml")

_IMPORTS_OF_A_RUN = """
import json, sys
from policylint.entry import main
code = main(sys.argv[1:])
print(json.dumps({"code": code, "modules": sorted(sys.modules)}), file=sys.stderr)
"""


def _modules_of(argv: list[str], cwd: Path) -> set[str]:
    proc = subprocess.run([sys.executable, "-c", _IMPORTS_OF_A_RUN, *argv], capture_output=True, text=True, cwd=cwd, timeout=120)
    last = proc.stderr.strip().splitlines()[-1]
    result = json.loads(last)
    assert result["code"] in (0, 1), proc.stderr
    return set(result["modules"])


def test_a_small_lint_imports_neither_pydantic_nor_jsonschema(tmp_path: Path) -> None:
    # The examples are well-typed; the shipped profiles are validated by the test suite, not per run.
    modules = _modules_of([str(ROOT / "examples" / "team-a"), "--format", "json"], tmp_path)
    assert "policylint.pipeline" in modules
    assert [m for m in HEAVY if m in modules] == []


def test_a_warm_run_whose_verdicts_are_kept_does_not_import_the_cel_evaluator(tmp_path: Path) -> None:
    """The admission verdicts are kept by content between runs (policylint.input.verdictstore.VerdictStore):
    the run after the first evaluates no CEL rule, so it does not import the evaluator."""
    argv = [str(ROOT / "examples" / "team-a"), "--cache-dir", str(tmp_path / "cache")]
    assert "policylint.k8s.cel" in _modules_of(argv, tmp_path)  # the first run evaluates the rules
    assert "policylint.k8s.cel" not in _modules_of(argv, tmp_path)


# What a run that reads its result back (policylint.incremental.results) never uses: the pipeline,
# every rule, the stages, and what a run hands its base side.
_ANALYSIS = ("policylint.pipeline", "policylint.rules", "policylint.semantics", "policylint.incremental.resident")


@pytest.mark.slow
@pytest.mark.every_python  # what the standard library imports differs between Pythons
def test_the_hooks_run_again_imports_only_what_it_uses(tmp_path: Path) -> None:
    """The pre-commit hook's entry run again on the same commit reads the first run's result back:
    neither the heavy modules, nor the CEL evaluator, nor the pipeline, the rules and the stages,
    nor a reporter it does not render (the text reporter writes its summary line on standard
    error). The first run imports the pipeline and the rules: it analyses."""
    repo = tmp_path / "repo"
    repository(repo, {f"team-a/{p.name}": p.read_text() for p in sorted((ROOT / "examples" / "team-a").glob("*.yaml"))})
    with (repo / "team-a" / "routes.yaml").open("a", encoding="utf-8") as fh:
        fh.write("# edited\n")
    git(repo, "add", "-A")
    argv = ["check", "--staged", "--gate-base", "HEAD", "--format", "json", "--cache-dir", str(tmp_path / "cache")]
    first = _modules_of(argv, repo)
    assert {"policylint.pipeline", "policylint.rules", "policylint.incremental.resident"} <= first
    modules = _modules_of(argv, repo)
    assert [m for m in (*HEAVY, "policylint.k8s.cel") if m in modules] == []
    assert sorted(m for m in modules if m.startswith(_ANALYSIS)) == []
    assert {m for m in modules if m.startswith("policylint.reporters.")} == {
        "policylint.reporters.json",
        "policylint.reporters.text",
    }


# What a run imports only where it uses it (docs/performance.md, "What a process imports before its
# first file"): the schemas' archive reader, the temporary files of a new cache directory, the
# suppression comments' scanner, the other commands, the configuration's provenance and its named
# files; in an analysis, the attachment chains, the policies section, the configured overrides, the
# `--jobs` hand-backs, the context overlay and the CEL time zones.
_NOT_BEFORE_USE = (
    "zipfile",
    "tempfile",
    "shutil",
    "policylint.suppressions.comments",
    "policylint.commands.catalogue",
    "policylint.commands.query",
    "policylint.config.provenance",
    "policylint.commands.trust_files",
)
_NOT_IN_AN_ANALYSIS = (
    "policylint.attachment_chain",
    "policylint.policy_report",
    "policylint.config.overrides",
    "policylint.k8s.portableverdicts",
    "policylint.semantics.portable",
    "policylint.k8s.overlay",
    "zoneinfo",
)


def test_version_imports_neither_the_resources_nor_typing(tmp_path: Path) -> None:
    """`policylint --version`, which pre-commit and CI call most, answers from `policylint.version`:
    nothing of pathlib, json, typing or re (what `policylint.resources` imports)."""
    script = "import sys\nfrom policylint.entry import main\nmain(['--version'])\nprint(' '.join(sorted(sys.modules)), file=sys.stderr)"
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert proc.stdout.startswith("policylint, version "), proc.stdout
    modules = set(proc.stderr.split())
    assert "policylint.version" in modules
    assert sorted(modules & {"policylint.resources", "pathlib", "json", "typing", "re", "yaml"}) == []


@pytest.mark.slow
def test_the_hooks_answer_to_a_comment_and_its_analysis_import_only_what_they_use(tmp_path: Path) -> None:
    """A comment staged on a commit the hook checked is answered from that commit's analysis
    (policylint.incremental.equivalent), without the pipeline, and without the modules a run only
    uses elsewhere; a value changed is analysed, its route's CEL rules evaluated against the
    schemas read, and that imports none of an analysis's modules that it does not use."""
    repo = tmp_path / "repo"
    repository(repo, {f"team-a/{p.name}": p.read_text() for p in sorted((ROOT / "examples" / "team-a").glob("*.yaml"))})
    argv = ["check", "--staged", "--gate-base", "HEAD", "--cache-dir", str(tmp_path / "cache")]

    def staged(file: str, old: str, new: str, message: str) -> set[str]:
        path = repo / "team-a" / file
        path.write_text(path.read_text(encoding="utf-8").replace(old, new, 1), encoding="utf-8")
        git(repo, "add", "-A")
        modules = _modules_of(argv, repo)
        git(repo, "commit", "-q", "-m", message)
        return modules

    staged("routes.yaml", "\n---", "\n# edited\n---", "the first run: a new cache directory, the base analysed")
    answered = staged("services.yaml", "\n", "\n# edited\n", "a comment")
    assert "policylint.incremental.equivalent" in answered
    assert sorted(m for m in answered if m.startswith(_ANALYSIS)) == []
    assert sorted(m for m in _NOT_BEFORE_USE if m in answered) == []
    analysed = staged("routes.yaml", "value: /catalog", "value: /catalogue", "a value")
    assert {"policylint.pipeline", "policylint.k8s.cel", "zipfile"} <= analysed
    # The archive's reader and the scanner of suppression comments are an analysis's own.
    unused = {*_NOT_IN_AN_ANALYSIS, *_NOT_BEFORE_USE} - {"zipfile", "shutil", "policylint.suppressions.comments"}
    assert sorted(unused & analysed) == []


def test_malformed_input_is_still_explained_by_pydantic(tmp_path: Path) -> None:
    (tmp_path / "bad.yaml").write_text(
        "apiVersion: v1\nkind: Service\nmetadata:\n  name: web\n  namespace: app\n  labels: {tier: 3}\n"
        "---\napiVersion: gateway.networking.k8s.io/v1\nkind: BackendTLSPolicy\nmetadata: {name: tls, namespace: app}\n"
        "spec:\n  targetRefs: [{group: '', kind: Service, name: [web]}]\n"
    )
    modules = _modules_of([str(tmp_path / "bad.yaml")], tmp_path)
    assert "policylint.k8s.validation" in modules and "pydantic" in modules


def test_the_user_profile_path_still_validates_with_jsonschema(tmp_path: Path) -> None:
    profile = ROOT / "docs" / "timeoutpolicy-profile.yaml"
    modules = _modules_of(["check", "--profile", str(profile), str(ROOT / "examples" / "team-a")], tmp_path)
    assert "jsonschema" in modules


# -- the plain checks accept exactly what pydantic accepts ------------------------------------------------

_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-5, max_value=5),
    st.floats(allow_nan=False),
    st.text(max_size=4),
    st.sampled_from(["2024-01-02T03:04:05Z", "2024-01-02T03:04:05.5+02:00", "2024-01-02", "yesterday", "2024-01-02T03:04:05"]),
)
_values = st.one_of(
    _scalars,
    st.lists(_scalars, max_size=2),
    st.dictionaries(st.sampled_from(["a", "b/c", "d"]), _scalars, max_size=2),
)
_META_FIELDS = ["name", "generateName", "namespace", "labels", "annotations", "creationTimestamp", "uid"]
_REF_FIELDS = ["group", "kind", "name", "namespace", "sectionName", "port"]

_settings = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@_settings
@given(raw=st.dictionaries(st.sampled_from(_META_FIELDS), _values, max_size=6))
def test_metadata_fast_path_agrees_with_pydantic(raw: dict[str, Any]) -> None:
    fast = _metadata(raw)
    slow, errors = _validate_metadata(raw)
    if fast is None:
        assert errors, f"the fast path refused metadata pydantic accepts: {raw!r}"
    else:
        assert errors == [], f"the fast path accepted metadata pydantic refuses: {raw!r}"
        assert fast == slow
        assert isinstance(fast, Metadata)


@_settings
@given(raw=st.dictionaries(st.sampled_from(_REF_FIELDS), _values, max_size=6))
def test_target_ref_fast_path_agrees_with_pydantic(raw: dict[str, Any]) -> None:
    from policylint.k8s.validation import TargetReferenceModel, ValidationError

    ref = _parse_ref(raw, "spec.targetRef")
    try:
        model = TargetReferenceModel.model_validate(raw)
    except ValidationError:
        assert ref.errors, raw
        return
    assert ref.errors == ()
    assert (ref.group, ref.kind, ref.name, ref.namespace, ref.section_name) == (
        model.group,
        model.kind,
        model.name,
        model.namespace,
        model.sectionName,
    )


def test_metadata_errors_read_as_before() -> None:
    result = lint_text("apiVersion: v1\nkind: Service\nmetadata:\n  name: web\n  labels: {tier: 3}\n  creationTimestamp: soon\n")
    messages = sorted(f.message for f in result.findings if f.rule == "PL009")
    assert messages == [
        "metadata.creationTimestamp: 'soon' is not an RFC 3339 date-time (like 2024-01-02T03:04:05Z)",
        "metadata.labels.tier: must be a string, not int 3 (quote it in YAML)",
    ]
    assert [str(o.key) for o in result.index.objects] == ["Service default/web"]  # salvaged


# -- module-level work made cheaper, against what it replaced ----------------------------------------------


def test_the_url_hosts_refused_characters_are_those_of_the_complement_they_replaced() -> None:
    """`urls._BAD_HOST_CHAR` names the ASCII characters a host refuses; it replaced the complement
    of those allowed and of \\x80-\\U0010ffff, whose compilation cost 4 ms of every process that
    evaluates CEL. Both find the same characters, every code point tried."""
    import re

    from policylint.k8s.urls import _BAD_HOST_CHAR

    complement = re.compile(r"[^A-Za-z0-9!$&'()*+,;=:\[\]<>\"\-_.~%\x80-\U0010ffff]")
    refused = "".join(chr(c) for c in range(0x110000) if complement.match(chr(c)))
    assert refused == "".join(c for c in map(chr, range(0x80)) if _BAD_HOST_CHAR.match(c))
    assert _BAD_HOST_CHAR.findall("".join(map(chr, range(0x110000)))) == list(refused)


# -- the benchmark runs -----------------------------------------------------------------------------------


def test_startup_benchmark_runs() -> None:
    proc = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "startup.py"), "--runs", "1"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    for label in ("python -c pass", "policylint --version", "policylint, 1 file, cold", "policylint, 5 files, cold"):
        assert label in proc.stdout, proc.stdout
