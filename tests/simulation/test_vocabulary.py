"""The vocabulary is strict: terms are not strings, are rendered by `label`, and no module
aliases a member (policylint/vocabulary.py)."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest

from policylint import vocabulary
from policylint.semantics.effective.verdicts import Lost, Won
from policylint.vocabulary import Accepted, Atomicity, Attachment, Enforcement, ReferenceStatus, Role, Term

PACKAGE = Path(__file__).resolve().parents[2] / "policylint"
TERMS = [
    *(c for c in vars(vocabulary).values() if isinstance(c, type) and issubclass(c, Term) and c is not Term),
    Won,
    Lost,
]


def test_a_term_is_not_its_word() -> None:
    # With the `str` mixin, `role == "none"` held and passed mypy; a renamed word then silently
    # made it false. A term equals only itself.
    assert Role.NONE != "none"  # type: ignore[comparison-overlap]
    assert "Accepted" not in {Accepted.ACCEPTED}
    assert not isinstance(Role.NONE, str)


def test_terms_of_two_enums_with_one_word_differ() -> None:
    # `Attachment.EXTERNAL == ReferenceStatus.EXTERNAL` held through their common word.
    assert Attachment.EXTERNAL != ReferenceStatus.EXTERNAL  # type: ignore[comparison-overlap]
    assert Accepted.CONFLICTED != Enforcement.CONFLICTED  # type: ignore[comparison-overlap]


def test_a_term_is_rendered_by_its_label_only() -> None:
    assert Role.OVERRIDE.label == "override"
    assert Atomicity.PRIORITY.label == "priority"
    assert Enforcement.PARTIALLY_ENFORCED.label == "PartiallyEnforced"
    with pytest.raises(TypeError, match="label"):
        f"{Role.NONE}"
    with pytest.raises(TypeError, match="label"):
        str(Accepted.ACCEPTED)
    with pytest.raises(TypeError):
        json.dumps({"status": Accepted.ACCEPTED})


@pytest.mark.parametrize("enum", TERMS, ids=lambda e: e.__name__)
def test_every_word_is_found_back(enum: type[Term]) -> None:
    words = [member.label for member in enum]
    assert len(set(words)) == len(words)
    assert all(enum(word).label == word for word in words)


def test_no_module_aliases_a_member() -> None:
    """`ACCEPTED = Accepted.ACCEPTED` at module level gave one member two names, and names that
    collided across modules (`ACCEPTED` of the topology was an `Attachment`, of the resolution an
    `Accepted`): members are written qualified."""
    names = {c.__name__ for c in TERMS}
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if (
                isinstance(node, ast.Assign)
                and isinstance(node.value, ast.Attribute)
                and isinstance(node.value.value, ast.Name)
                and node.value.value.id in names
            ):
                found.append(f"{path.relative_to(PACKAGE.parent)}:{node.lineno}")
    assert found == []
