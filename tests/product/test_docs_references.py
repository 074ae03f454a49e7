"""Every reference in the project can be followed from the repository alone.

Rule docs are read offline (`policylint rule PL201`) and code comments by the next maintainer, so
a reference must name a public source (a GEP and its section, the Gateway API reference, a vendor
document, an upstream file at a tag) or a section of the project's own docs (CONTRIBUTING.md,
"Citing sources"). These tests check the mechanical part of that rule:

- no reference to a design or scenario document that is not in the repository;
- every `docs/<page>.md#<anchor>` (and every relative link between the docs) names a page and a
  heading that exist, so anchors stay stable when headings are edited;
- every `README "Section"` / `CONTRIBUTING.md "Section"` names an existing heading;
- the acceptance scenario ids used as test labels are all listed in
  docs/semantics.md#acceptance-scenarios;
- `helpUri` in the JSON report points at the release tag of the running version, not at `main`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from policylint import DOCS_URL, __version__
from policylint.reporters.json import help_uri

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"

# What is scanned: everything a contributor or a user reads. Upstream CRDs are vendored byte for
# byte (tests/data/crds/SOURCES.md) and are not ours to edit.
SCANNED = ("policylint", "rules", "docs", "tests", "benchmarks", "fuzz", "examples", "schemas")
SCANNED_FILES = ("README.md", "CONTRIBUTING.md", "pyproject.toml", "Makefile")
SKIPPED = (ROOT / "tests" / "data" / "crds",)
TEXT_SUFFIXES = {".py", ".md", ".yaml", ".yml", ".json", ".toml", ".txt", ".dict", ""}

# References to documents that do not exist in the repository. The patterns are assembled from
# pieces so that this file does not match them itself.
_SEED = "se" + "ed"
FORBIDDEN = [
    re.compile(r"\bdesign" + r"\.md\b"),
    re.compile(r"\bdesign brief\b"),
    re.compile(r"gateway-api-" + r"semantics"),
    re.compile(r"\bscenarios" + r"\.md\b"),
    re.compile(r"\b" + _SEED + r"s/"),
    re.compile(r"\bthe " + _SEED + r"\b(?! *=)"),
    re.compile(r"(?i)\b" + _SEED + r"('s|-style| style| policy-attachment| api-design| GEP| guide| boilerplate)"),
    re.compile(r"\bsemantics \u00a7"),
    re.compile(r"/work/|/tmp/plan"),
]
# A word each pattern above needs, in lower case: a file without any of them matches none.
FORBIDDEN_WORDS = ("design", "gateway-api-", "scenarios", _SEED, "semantics \u00a7", "/work/", "/tmp/plan")
# A section sign must be followed by a section number and its quoted name, so that the reader
# can find it in the named specification (`YAML 1.1 spec §5.4 "Line Break Characters"`).
SECTION_SIGN = re.compile("\u00a7")
NAMED_SECTION = re.compile('\u00a7[0-9.]+ "[^"]+"')

DOC_ANCHOR = re.compile(r"docs/([a-z0-9-]+\.md)#([a-z0-9-]+)")
# Relative links inside docs/ and from rules/ to docs/.
RELATIVE_LINK = re.compile(r"\]\((?:\.\./docs/)?([a-z0-9-]+\.md)#([a-z0-9-]+)\)")
QUOTED_SECTION = re.compile(r'\b(README|CONTRIBUTING\.md),? "([^"]+)"')
SCENARIO_LABEL = re.compile(r"\bS(0[1-9]|1[0-9]|20)\b")


def scanned_files() -> Iterator[Path]:
    for name in SCANNED_FILES:
        yield ROOT / name
    for top in SCANNED:
        for path in sorted((ROOT / top).rglob("*")):
            if not path.is_file() or "__pycache__" in path.parts or any(s in path.parents for s in SKIPPED):
                continue
            if path.suffix in TEXT_SUFFIXES and path.resolve() != Path(__file__).resolve():
                yield path


def read(path: Path) -> str:
    return path.read_text(encoding="utf-8", errors="replace")


def slug(heading: str) -> str:
    """The anchor GitHub gives a heading: lowercase, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"[`*_]", "", heading.strip().lower())
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(path: Path) -> set[str]:
    out: set[str] = set()
    seen: dict[str, int] = {}
    in_fence = False
    for line in read(path).splitlines():
        if line.startswith("```"):
            in_fence = not in_fence
        if in_fence or not line.startswith("#"):
            continue
        base = slug(line.lstrip("#"))
        n = seen.get(base, 0)
        seen[base] = n + 1
        out.add(base if n == 0 else f"{base}-{n}")
    return out


def headings(path: Path) -> set[str]:
    return {line.lstrip("#").strip() for line in read(path).splitlines() if re.match(r"#+ ", line)}


def test_slug_follows_github() -> None:
    # Hand-checked against GitHub's rendering of headings of this kind.
    assert slug("Where policylint had to decide") == "where-policylint-had-to-decide"
    assert slug("Unnamed route rules (decision)") == "unnamed-route-rules-decision"
    assert slug("Partial repositories (`--external`)") == "partial-repositories---external"
    assert slug("`--jobs`") == "--jobs"


def test_no_reference_to_documents_outside_the_repository() -> None:
    offences = []
    for path in scanned_files():
        text = read(path)
        # Only the files holding a word some pattern needs are searched, line by line (10 MB of
        # text, most of it fixtures).
        lowered = text.lower()
        if not any(word in lowered for word in FORBIDDEN_WORDS) and "\u00a7" not in text:
            continue
        for number, line in enumerate(text.splitlines(), 1):
            for pattern in FORBIDDEN:
                if pattern.search(line):
                    offences.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()}")
            if len(SECTION_SIGN.findall(line)) != len(NAMED_SECTION.findall(line)):
                offences.append(f"{path.relative_to(ROOT)}:{number}: a section sign without its name: {line.strip()}")
    assert offences == []


def test_the_forbidden_patterns_catch_what_they_are_for() -> None:
    # Each pattern must fire on the kind of reference it exists for, and stay quiet on the
    # ordinary uses of the same words (random number generators, named sections of public specs).
    bad = [
        "(design" + ".md \u00a71.7)",
        "gateway-api-" + "semantics.md \u00a73.6",
        "see scenarios" + ".md",
        "the " + _SEED + " policy-attachment guide",
        _SEED + "s/policy-attachment.txt",
        "(semantics \u00a78.1)",
    ]
    for text in bad:
        assert any(p.search(text) for p in FORBIDDEN) or len(SECTION_SIGN.findall(text)) != len(NAMED_SECTION.findall(text)), text
        # ...and the prefilter lets the file holding it through.
        assert any(word in text.lower() for word in FORBIDDEN_WORDS) or "\u00a7" in text, text
    fine = ["random.Random(" + _SEED + ")", "[--" + _SEED + " 1]", 'YAML 1.1 spec \u00a75.4 "Line Break Characters"']
    for text in fine:
        assert not any(p.search(text) for p in FORBIDDEN), text
        assert len(SECTION_SIGN.findall(text)) == len(NAMED_SECTION.findall(text)), text


def test_every_docs_anchor_exists() -> None:
    known = {path.name: anchors(path) for path in DOCS.glob("*.md")}
    assert {"semantics.md", "effective-policy.md", "performance.md"} <= set(known)
    missing = []
    cited = 0
    for path in scanned_files():
        text = read(path)
        refs = DOC_ANCHOR.findall(text)
        if path.parent == DOCS or path.parent == ROOT / "rules":
            refs += RELATIVE_LINK.findall(text)
        for page, anchor in refs:
            cited += 1
            if anchor not in known.get(page, set()):
                missing.append(f"{path.relative_to(ROOT)}: docs/{page}#{anchor}")
    assert missing == []
    assert cited > 100  # the rule docs and the code do cite the docs by anchor


def test_quoted_readme_and_contributing_sections_exist() -> None:
    titles = {"README": headings(ROOT / "README.md"), "CONTRIBUTING.md": headings(ROOT / "CONTRIBUTING.md")}
    missing = []
    for path in scanned_files():
        for doc, section in QUOTED_SECTION.findall(read(path)):
            if not any(title == section or title.startswith(section + " ") for title in titles[doc]):
                missing.append(f"{path.relative_to(ROOT)}: {doc} {section!r}")
    assert missing == []


def scenario_table() -> list[str]:
    text = read(DOCS / "semantics.md")
    section = text.split("\n## Acceptance scenarios\n", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"^\| (S\d\d) \|", section, flags=re.MULTILINE)


def test_acceptance_scenarios_are_listed_once_each() -> None:
    assert scenario_table() == [f"S{n:02d}" for n in range(1, 21)]


def test_every_scenario_label_used_in_tests_is_documented() -> None:
    listed = set(scenario_table())
    used = set()
    for path in (ROOT / "tests").rglob("*"):
        if path.is_file() and path.suffix in {".py", ".yaml", ".md"} and not any(s in path.parents for s in SKIPPED):
            used |= {f"S{m}" for m in SCENARIO_LABEL.findall(read(path))}
    used |= {f"S{p.name[1:3]}" for p in (ROOT / "tests" / "effective").iterdir() if re.match(r"s\d\d-", p.name)}
    assert used, "the scenario labels were not found at all"
    assert used <= listed


def test_help_uri_is_pinned_to_the_release_tag() -> None:
    assert f"https://github.com/policylint/policylint/blob/v{__version__}/rules" == DOCS_URL
    uri = help_uri("PL201", "targetref-not-found")
    assert uri == f"https://github.com/policylint/policylint/blob/v{__version__}/rules/PL201-targetref-not-found.md"
    assert "/blob/main/" not in uri
    # The path after the tag is a rule doc that exists in this checkout.
    assert (ROOT / "rules" / uri.rsplit("/", 1)[1]).is_file()


def test_readme_and_golden_report_show_the_pinned_help_uri() -> None:
    readme = read(ROOT / "README.md")
    assert f'"helpUri": "{DOCS_URL}/PL201-targetref-not-found.md"' in readme
    assert "/blob/main/rules" not in readme
    report = json.loads(read(ROOT / "tests" / "reporters" / "golden" / "report.json"))
    uris = [f["helpUri"] for f in report["findings"]]
    assert uris and all(u == f"{DOCS_URL}/{f['rule']}-{f['name']}.md" for u, f in zip(uris, report["findings"]))


@pytest.mark.parametrize("page", ["semantics.md", "effective-policy.md"])
def test_docs_pages_link_each_other_by_existing_anchors(page: str) -> None:
    # The two pages cite each other with relative links; a renamed heading must break this test.
    text = read(DOCS / page)
    links = re.findall(r"\]\(([a-z0-9-]+\.md)#([a-z0-9-]+)\)", text)
    assert links
    for target, anchor in links:
        assert anchor in anchors(DOCS / target), f"{page}: {target}#{anchor}"


def test_every_test_file_is_placed_in_the_stage_map() -> None:
    """tests/ is laid out by pipeline stage like the package: each test file sits in the directory
    tests/README.md's stage map gives its stage, so that a contributor finds the tests of the code
    they change."""
    tests = ROOT / "tests"
    listed: set[str] = set()
    for line in (tests / "README.md").read_text(encoding="utf-8").splitlines():
        row = re.match(r"\| [^|]+ \| `tests/([a-z0-9_]+)/` \|", line)
        if row:
            listed |= {f"{row.group(1)}/{name}" for name in re.findall(r"`(test_[a-z0-9_]+\.py)`", line)}
    present = {p.relative_to(tests).as_posix() for p in tests.glob("*/test_*.py")}
    assert sorted(tests.glob("test_*.py")) == [], "a test file belongs in its stage's directory"
    assert sorted(present - listed) == [], "add these to tests/README.md, in their stage's row"
    assert sorted(listed - present) == [], "tests/README.md lists files that do not exist there"
