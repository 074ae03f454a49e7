"""Property-based fuzzing of the whole pipeline (CONTRIBUTING.md "Reliability").

Properties, for any input:

1. no exception escapes, and no rule fails (no PL000 internal-error finding);
2. every finding, and every related location, has a file that was linted and a
   line and column >= 1 inside that file;
3. the JSON report validates against schemas/report.schema.json;
4. the answer does not depend on the order of things: the same files created
   in another order and named in another order give a byte-identical report;
   documents shuffled within their files, or moved to other files, give the
   same findings once each position is expressed relative to the document it
   lies in (see `normalised`);
5. nor on the parse cache: cold, warm and uncached runs give the same report.

`make test` runs a small number of examples per property (seconds). For a long
run: `POLICYLINT_FUZZ_EXAMPLES=20000 pytest tests/hostile/test_fuzz.py` or
`pytest tests/hostile/test_fuzz.py --hypothesis-profile=long` (fuzz/README.md).
A failure prints the shrunk input; add it as an `@example` below.
"""

from __future__ import annotations

import json
import os
import random
import re
import tempfile
from collections import Counter
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from policylint.input.load import Document, FileResult, parse_text
from policylint.k8s.external import ExternalObjects
from policylint.pipeline import LintResult
from policylint.reporters import text as text_reporter
from policylint.reporters.json import report as json_report  # unpatched: tests/conftest.py validates every call
from tests.fuzzing import EXTERNAL_PATTERNS, Manifests, dump, manifests, yamlish_bytes, yamlish_text
from tests.lintutil import assert_valid_report, lint_paths, lint_text

# Slow (property tests over thousands of generated inputs): `make test` leaves it to `make test-all` (.ci/run).
# On every supported Python: what hostile text does to the loader is partly the interpreter's (recursion, `re`).
pytestmark = [pytest.mark.slow, pytest.mark.every_python]

# Line breaks as libyaml counts them (positions.py): bounds for "inside the file".
_LINE_BREAK = re.compile("\r\n|[\r\n\x85\u2028\u2029]")


def budget(ci: int) -> settings:
    """`ci` examples in `make test`; more with POLICYLINT_FUZZ_EXAMPLES or a non-default profile."""
    env = os.environ.get("POLICYLINT_FUZZ_EXAMPLES")
    if env:
        n = int(env)
    elif settings.get_current_profile_name() not in ("default", "policylint"):  # the suite's own: tests/conftest.py
        n = settings().max_examples  # e.g. --hypothesis-profile=long (tests/conftest.py)
    else:
        n = ci
    return settings(
        max_examples=n,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.function_scoped_fixture],
    )


# -- shared checks -------------------------------------------------------------------------------------


def _line_count(text: str) -> int:
    return len(_LINE_BREAK.findall(text)) + 1


def assert_sound(result: LintResult, texts: dict[str, str] | None = None, validate: bool = True) -> dict[str, Any]:
    """Properties 1-3 for one run; returns the JSON report (schema-checked if `validate`)."""
    assert not result.internal_error, [f.message for f in result.findings if f.rule == "PL000"]
    files = set(result.files)
    for f in result.findings:
        assert f.rule != "PL000", f.message
        for where in (f, *f.related):
            assert where.file in files, (f.rule, f.message, where)
            assert where.line >= 1 and where.column >= 1, (f.rule, f.message, where)
            if texts is not None and where.file in texts:
                assert where.line <= _line_count(texts[where.file]), (f.rule, f.message, where, texts[where.file])
    report = json_report(result)
    if validate:
        assert_valid_report(report)
    text_reporter.render(result)
    _walk_topology(result)
    return report


def _walk_topology(result: LintResult) -> None:
    """Exercise every index and topology query rules build on (some have no rule yet)."""
    index = result.index
    resolution = result.project.resolution
    for policy in resolution.policies():
        resolution.targets(policy)
    topology = result.project.topology()
    for obj in index.objects:
        topology.carries_traffic(obj)
        topology.refs_from(obj)
        topology.refs_to(obj)
        for listener in topology.listeners(obj):
            topology.routes_on(listener)
        topology.listener_sets_of(obj)
        for attachment in topology.parent_attachments(obj):
            assert attachment.ref.path.startswith("spec.parentRefs[")
        if obj.kind.endswith("Route"):
            topology.rules(obj)
    for ref_list in topology.references.values():
        for ref in ref_list:
            ref.label()


def assert_parsed_soundly(result: FileResult, text: str, file: str) -> None:
    lines = _line_count(text)
    for issue in result.issues:
        loc = issue.location
        assert loc is not None and loc.file == file, issue
        assert 1 <= loc.line <= lines and loc.column >= 1, (issue, lines)
    for doc in result.documents:
        assert isinstance(doc, Document)
        # An empty document's root lies after its `---` (past the end of `---` without a line
        # break); empty documents are no objects, so nothing is ever reported there.
        if doc.data is not None:
            assert 1 <= doc.ref.line <= lines and doc.ref.column >= 1, doc.ref


# -- 1. random text and bytes --------------------------------------------------------------------------


@budget(ci=500)
@given(text=yamlish_text())
@example(text="a: &a [*a]\n---\n{{ x }}\n\x00")
@example(text="- !!binary x\n? [a, {b: c}]\n: d\n")
@example(text="---")  # an empty document whose root lies past the end of the text
def test_random_text_through_the_loader(text: str) -> None:
    assert_parsed_soundly(parse_text(text, "t.yaml"), text, "t.yaml")


@budget(ci=200)
@given(text=yamlish_text())
def test_random_text_through_the_pipeline(text: str) -> None:
    assert_sound(lint_text(text, "t.yaml"), {"t.yaml": text.replace("\x00", " ")})


@budget(ci=200)
@given(data=yamlish_bytes())
@example(data=b"\xff\xfe")
@example(data=b"\xef\xbb\xbf\xef\xbb\xbfa: 1\n")
def test_random_bytes_through_the_pipeline(data: bytes) -> None:
    assert_sound(lint_text(data, "b.yaml"))


@budget(ci=100)
@given(
    doc=st.recursive(
        st.one_of(st.none(), st.booleans(), st.integers(), st.floats(), st.text(max_size=5)),
        lambda children: st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=4), children, max_size=3),
        max_leaves=20,
    ),
    cut=st.integers(min_value=0, max_value=10_000),
    junk=st.text(max_size=3),
)
def test_valid_yaml_with_one_edit(doc: Any, cut: int, junk: str) -> None:
    """Well-formed YAML with a few characters inserted somewhere: broken in realistic ways."""
    text = dump(doc)
    at = cut % (len(text) + 1)
    text = text[:at] + junk + text[at:]
    assert_parsed_soundly(parse_text(text, "e.yaml"), text, "e.yaml")
    assert_sound(lint_text(text, "e.yaml"))


# -- 2. structured random manifests ---------------------------------------------------------------------


@contextmanager
def written(
    m: Manifests, order: Sequence[int] | None = None, names: Sequence[str] | None = None, create: Sequence[int] | None = None
) -> Iterator[tuple[Path, list[Path], list[str]]]:
    """Write `m` to a temporary directory: files named `names`, created in the order `create`."""
    texts = m.file_texts(order)
    names = list(names) if names is not None else [f"f{i}.yaml" for i in range(m.file_count)]
    with tempfile.TemporaryDirectory(prefix="policylint-fuzz-") as tmp:
        root = Path(tmp)
        for i in create if create is not None else range(m.file_count):
            (root / names[i]).write_text(texts[i], encoding="utf-8")
        yield root, [root / n for n in names], texts


def _run(
    root: Path, paths: Sequence[Path], texts: Sequence[str], names: Sequence[str], validate: bool = True, **options: Any
) -> tuple[LintResult, dict[str, Any]]:
    result = lint_paths(paths, **options)
    report = assert_sound(result, {str(root / n): t for n, t in zip(names, texts)}, validate)
    # A finding without an object is fingerprinted with its file's name as shown, and each run
    # here lints under another temporary root: those fingerprints differ by design
    # (tests/rules/test_fingerprints.py checks them); the others must not.
    for finding in report["findings"]:
        if finding["object"] is None:
            finding["fingerprint"] = "(file name)"
    return result, report


def check_structured(m: Manifests, external: list[str], synthetic: bool) -> None:
    """Properties 1-3 on structured manifests (also the body of fuzz/fuzz_pipeline.py)."""
    names = [f"f{i}.yaml" for i in range(m.file_count)]
    with written(m) as (root, paths, texts):
        _run(
            root,
            [root] if len(paths) > 1 else paths,
            texts,
            names,
            external=ExternalObjects.parse(external),
            synthetic_rule_names=synthetic,
        )


@budget(ci=200)
@given(m=manifests(), external=st.lists(st.sampled_from(EXTERNAL_PATTERNS), max_size=2, unique=True), synthetic=st.booleans())
def test_structured_manifests(m: Manifests, external: list[str], synthetic: bool) -> None:
    check_structured(m, external, synthetic)


def _doc_spans(docs_by_file: dict[str, list[str]]) -> dict[str, list[tuple[int, int, str]]]:
    """(first line, last line, document text) of each document, per file, as `Manifests.file_texts` lays them out."""
    spans: dict[str, list[tuple[int, int, str]]] = {}
    for file, docs in docs_by_file.items():
        line = 1
        out = []
        for doc in docs:
            count = doc.count("\n") + 1  # the `---` line, then the document
            out.append((line, line + count - 1, doc))
            line += count
        spans[file] = out
    return spans


def normalised(report: dict[str, Any], root: Path, spans: dict[str, list[tuple[int, int, str]]], keep_file: bool) -> Counter[str]:
    """Findings and policies with positions made relative to the document they lie in.

    A position (file, line, column) becomes (document text, line within it,
    column) and, if `keep_file`, the file name. Identical documents are
    interchangeable, so a document is named by its text.
    """
    prefix = str(root) + "/"

    def where(file: str, line: int, column: int) -> list[Any]:
        name = file.removeprefix(prefix)
        for first, last, doc in spans.get(file, ()):
            if first <= line <= last:
                return [name if keep_file else None, doc, line - first, column]
        return [name if keep_file else None, None, line, column]

    out: Counter[str] = Counter()
    for f in report["findings"]:
        entry = dict(f)
        entry["at"] = where(f["file"], f["line"], f["column"])
        entry["related"] = sorted(json.dumps([r["message"], where(r["file"], r["line"], r["column"])]) for r in f["related"])
        for k in ("file", "line", "column"):
            del entry[k]
        out[json.dumps(entry, sort_keys=True).replace(prefix, "")] += 1
    for p in report["policies"]:
        entry = dict(p)
        entry["at"] = where(p["file"], p["line"], 1)
        del entry["file"], entry["line"]
        out[json.dumps(entry, sort_keys=True).replace(prefix, "")] += 1
    return out


@budget(ci=100)
@given(m=manifests(unique=True), seed=st.integers(min_value=0, max_value=2**32))
@example(  # identical duplicates are interchangeable
    m=Manifests(
        docs=(dump({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web", "namespace": "app"}}),) * 2,
        files=(0, 0),
        file_count=1,
    ),
    seed=1,
)
def test_output_does_not_depend_on_order(m: Manifests, seed: int) -> None:
    rnd = random.Random(seed)
    n = len(m.docs)
    names = [f"f{i}.yaml" for i in range(m.file_count)]

    def docs_by_file(order: Sequence[int], files: Sequence[int], prefix: str) -> dict[str, list[str]]:
        out: dict[str, list[str]] = {prefix + name: [] for name in names}
        for i in order:
            out[prefix + names[files[i]]].append(m.docs[i])
        return out

    with written(m) as (root, paths, texts):
        _, base = _run(root, paths, texts, names)
        base_json = json.dumps(base, indent=2).replace(str(root) + "/", "")
        base_norm = normalised(base, root, _doc_spans(docs_by_file(range(n), m.files, str(root) + "/")), keep_file=True)
        base_moved = normalised(base, root, _doc_spans(docs_by_file(range(n), m.files, str(root) + "/")), keep_file=False)

    # The same files, created in another order and named in another order (and as a directory).
    create = list(range(m.file_count))
    rnd.shuffle(create)
    with written(m, create=create) as (root, paths, texts):
        shuffled_paths = list(paths)
        rnd.shuffle(shuffled_paths)
        for args in (shuffled_paths, [root]):
            _, other = _run(root, args, texts, names, validate=False)  # compared with `base`, which is validated
            assert json.dumps(other, indent=2).replace(str(root) + "/", "") == base_json

    # Documents shuffled within their files.
    order = list(range(n))
    rnd.shuffle(order)
    with written(m, order=order, create=create) as (root, paths, texts):
        _, other = _run(root, paths, texts, names, validate=False)
        spans = _doc_spans(docs_by_file(order, m.files, str(root) + "/"))
        assert normalised(other, root, spans, keep_file=True) == base_norm

    # Documents moved to other files (as many files as before).
    moved = Manifests(m.docs, tuple(rnd.randrange(m.file_count) for _ in range(n)), m.file_count)
    with written(moved, order=order) as (root, paths, texts):
        _, other = _run(root, paths, texts, names, validate=False)
        spans = _doc_spans(docs_by_file(order, moved.files, str(root) + "/"))
        assert normalised(other, root, spans, keep_file=False) == base_moved
        assert other["summary"] == base["summary"]


@budget(ci=60)
@given(m=manifests(max_docs=8), text=yamlish_text())
@example(m=Manifests(docs=(dump({"a": float("nan"), "b": [True, 10**30, -0.0]}),), files=(0,), file_count=1), text="a: .inf\n")
# A policy with findings whose references mix a namespaced key and the same kind's key without a
# namespace: the kept whole analysis once sorted them as tuples, comparing None with a string.
@example(
    m=Manifests(
        docs=(
            "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: gw\n  labels: {}\n",
            "apiVersion: gateway.envoyproxy.io/v1alpha1\nkind: ClientTrafficPolicy\nmetadata:\n  name: gw\n"
            "  namespace: app\nspec:\n  targetRefs:\n  - group: gateway.networking.k8s.io\n    kind: Gateway\n"
            "    name: gw\n    sectionName: false\n  targetRef:\n    group: gateway.networking.k8s.io\n"
            "    kind: Gateway\n    name: gw\n    sectionName: http\n    namespace: app\n  targetSelectors: []\n"
            "  timeout:\n    http:\n      requestReceivedTimeout: 5s\n",
        ),
        files=(0, 0),
        file_count=1,
    ),
    text="",
)
def test_the_parse_cache_changes_nothing(m: Manifests, text: str) -> None:
    """A run served from the parse cache answers byte for byte like a cold one and an uncached one,
    whatever the files hold (the cache stores the loader's output in its own compact form)."""
    with written(m) as (root, paths, _), tempfile.TemporaryDirectory(prefix="policylint-fuzz-cache-") as cache:
        (root / "text.yaml").write_text(text, encoding="utf-8", errors="surrogatepass")  # lone surrogates: not UTF-8
        args = [*paths, root / "text.yaml"]
        uncached = json.dumps(json_report(lint_paths(args)))
        cold = json.dumps(json_report(lint_paths(args, cache_dir=cache)))
        assert any(Path(cache).rglob("*")), "the cold run wrote no cache entry"
        warm = json.dumps(json_report(lint_paths(args, cache_dir=cache)))
        assert cold == uncached
        assert warm == uncached
