"""What the loader works out once rather than per node or per file (docs/performance.md "The
loader's own work, done once"): a plain scalar's value resolved once per text for the run,
counted, and the same whatever form of the text came before; the scans of a file's whole text
before composing it, each compared with the regexp it replaced."""

from __future__ import annotations

import re
from collections import Counter
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from policylint.input import convert, load, prescan
from policylint.input.document import Shared
from policylint.input.load import parse_text
from policylint.input.templates import BRACED
from tests.examples import examples


def _data(text: str, strings: Shared | None = None) -> list[Any]:
    result = parse_text(text, "f.yaml", strings)
    assert result.issues == []
    return [document.data for document in result.documents]


def test_a_plain_scalar_is_resolved_once_per_run(monkeypatch: pytest.MonkeyPatch) -> None:
    """The resolver's regexps run once per distinct plain text of the run, not per occurrence:
    three files share the run's table, and `80`, `true` and `nginx` recur in each."""
    asked: Counter[str] = Counter()
    original = convert.node_tag

    def counting(node: Any) -> str:
        asked[node.value] += 1
        return original(node)

    monkeypatch.setattr(convert, "node_tag", counting)
    strings: Shared = {}
    text = "port: 80\nother: 80\nenabled: true\nimage: nginx\nlist: [80, true, nginx]\n"
    for _ in range(3):
        assert _data(text, strings) == [{"port": 80, "other": 80, "enabled": True, "image": "nginx", "list": [80, True, "nginx"]}]
    assert asked == {"80": 1, "true": 1, "nginx": 1}


# Texts YAML 1.1 resolves otherwise than as strings when plain, or that look as if it might; each
# with its value plain, worked out by hand from the YAML 1.1 type definitions (yaml.org/type).
PLAIN = {
    "80": 80,
    "0777": 0o777,  # octal, as Kubernetes reads it
    "0x1F": 31,
    "0b101": 5,
    "1_000": 1000,
    "1:30": 90,  # sexagesimal
    "-0": 0,
    "+12": 12,
    "0.5": 0.5,
    "1e3": "1e3",  # YAML 1.1's float needs a dot
    "1.5e3": "1.5e3",  # and a signed exponent
    "1.5e+3": 1500.0,
    "yes": True,
    "Off": False,
    "true": True,
    "n": "n",  # PyYAML's booleans (the loader's, tests/input/test_load.py) leave out `y` and `n`
    "null": None,
    "~": None,
    "2001-12-14": "2001-12-14",  # a timestamp: JSON, and so Kubernetes, has only its text
    "nginx": "nginx",
    "trueish": "trueish",
    "<<x": "<<x",
    "=": "=",
}


@pytest.mark.parametrize("quoted_first", [False, True])
def test_a_text_keeps_its_value_in_each_form_whatever_came_before(quoted_first: bool) -> None:
    """A value resolved once per text must stay the value of the plain form only: quoted, tagged
    `!!str` or as a key it is the text, and a tag written decides over the text."""
    strings: Shared = {}
    for text, value in PLAIN.items():
        plain = f"v: {text}\n"
        others = f"q: '{text}'\nd: \"{text}\"\ns: !!str {text}\n'{text}': k\n"
        docs = [others, plain] if quoted_first else [plain, others]
        for _ in range(2):
            for doc in docs:
                (data,) = _data(doc, strings)
                if doc is plain:
                    assert data == {"v": value}, text
                    assert type(data["v"]) is type(value), text
                else:
                    assert data == {"q": text, "d": text, "s": text, text: "k"}, text
    (tagged,) = _data("a: !!int '80'\nb: !!str 80\nc: !!float '2'\nd: 80\n", strings)
    assert tagged == {"a": 80, "b": "80", "c": 2.0, "d": 80}
    assert type(tagged["c"]) is float


def test_an_empty_plain_value_is_null_and_an_empty_quoted_one_a_string() -> None:
    strings: Shared = {}
    assert _data("a:\nb: ''\nc:\nd: \"\"\n", strings) == [{"a": None, "b": "", "c": None, "d": ""}]
    assert _data("- ''\n-\n- ''\n", strings) == [["", None, ""]]


def test_a_plain_scalar_that_cannot_be_read_is_reported_each_time() -> None:
    """Only values that convert are kept for the run: `.inf` and an integer beyond int64 are a
    PL001 wherever they are, in every file."""
    strings: Shared = {}
    text = "a: .inf\nb: 99999999999999999999\nc: .inf\nd: 99999999999999999999\n"
    for _ in range(2):
        result = parse_text(text, "f.yaml", strings)
        assert [(i.rule_id, i.location.line if i.location else None) for i in result.issues] == [
            ("PL001", 1),
            ("PL001", 2),
            ("PL001", 3),
            ("PL001", 4),
        ]
        assert [d.data for d in result.documents] == [
            {"a": ".inf", "b": "99999999999999999999", "c": ".inf", "d": "99999999999999999999"}
        ]


def test_merge_keys_plain_and_tagged_and_a_quoted_one_that_is_not() -> None:
    text = "b: &b {x: 1, y: 2}\nm:\n  <<: *b\n  y: 3\nt:\n  !!merge x: *b\nq:\n  '<<': *b\n"
    (data,) = _data(text)
    assert data["m"] == {"y": 3, "x": 1}
    assert data["t"] == {"x": 1, "y": 2}
    assert data["q"] == {"<<": {"x": 1, "y": 2}}


# The regexps the scans replaced, as they were.
_INDENTATION_BEFORE = "^[ \\t?:\\-]{%d,}"
_LINE_PIECES = st.lists(
    st.sampled_from([" ", "  ", "\t", "?", ":", "-", "- ", "\n", "\r", "\r\n", "a", "é", "\u2028", "\x85", "\ud800"]),
    max_size=24,
).map("".join)


@examples(300, 3000)
@given(_LINE_PIECES, st.integers(min_value=-2, max_value=6))
def test_a_line_of_openers_is_found_as_the_regexp_found_it(text: str, count: int) -> None:
    before = re.search(_INDENTATION_BEFORE % max(count, 1), text, re.M) is not None
    assert prescan._starts_a_line_with_openers(text, count) == before


_PRINTABLE_PIECES = st.lists(
    st.sampled_from(["a", " ", "\t", "\n", "\r", "\x00", "\x1b", "\x7f", "\x85", "\x9f", "é", "\ud800", "\ufffe", "\U0001f600"]),
    max_size=16,
).map("".join)


@examples(300, 3000)
@given(_PRINTABLE_PIECES)
def test_the_characters_yaml_forbids_are_found_as_the_regexp_found_them(text: str) -> None:
    bad = load._NON_PRINTABLE.search(text)
    assert load.printable(text) == (load._NON_PRINTABLE.sub(" ", text), bad.start() if bad else -1)


def _may_hold_markers_before(text: str) -> bool:
    return bool("{{" in text or "${" in text or "$(" in text or "<" in text or "PLACEHOLDER_" in text or BRACED.search(text))


@examples(200, 2000)
@given(st.lists(st.sampled_from(["{", "}", "{{", "$", "${", "$(", "<", "a", "x_1", "PLACEHOLDER_", ": ", "\n"]), max_size=10))
def test_the_files_that_may_hold_template_markers_are_those_before(pieces: list[str]) -> None:
    text = "".join(pieces)
    parse = load._FileParse(text, "f.yaml")
    assert (parse.spans is not None) == _may_hold_markers_before(text)
