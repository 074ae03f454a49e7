"""libyaml's loader and PyYAML's safe resolver, asked only where a tag is read."""

from __future__ import annotations

import operator
import re
from typing import Any

import yaml
from yaml.nodes import Node, ScalarNode, SequenceNode

# The C parser is required: the pure-Python one is an order of magnitude slower.
# PyYAML wheels bundle libyaml; a build without it is reported by `policylint --version`.
# libyaml's C parser when PyYAML was built with it (its wheels bundle it); otherwise the pure-Python
# loader, which gives the same documents, errors and positions, several times slower (`policylint
# --version` and a warning on stderr say so).
PARSER_IS_C: bool = bool(getattr(yaml, "__with_libyaml__", False))

# PyYAML's safe resolver, for every plain scalar: (tag, regexp) in the order it tries them, by
# the scalar's first character ("" for an empty one); the wildcard resolvers after each list.
WILDCARD: tuple[tuple[str, re.Pattern[str]], ...] = tuple(yaml.SafeLoader.yaml_implicit_resolvers.get(None, ()))
IMPLICIT: dict[str, tuple[tuple[str, re.Pattern[str]], ...]] = {
    first: (*resolvers, *WILDCARD) for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items() if first is not None
}
_SCALAR_TAG = yaml.SafeLoader.DEFAULT_SCALAR_TAG
_SEQUENCE_TAG = yaml.SafeLoader.DEFAULT_SEQUENCE_TAG
_MAPPING_TAG = yaml.SafeLoader.DEFAULT_MAPPING_TAG


class _Resolve:
    """PyYAML's safe resolver (`BaseResolver.resolve`), asked only where a tag is read.

    The composer calls three resolver methods for every node: `descend_resolver` and
    `ascend_resolver`, which do nothing without path resolvers (the safe loader has none), and
    `resolve(kind, value, implicit)` for every node written without a tag. All three are C
    callables here, with no Python frame: the first two take the same arguments and do nothing
    with them (`operator.is_`, which answers from the two objects alone and allocates nothing,
    composed the clean corpus in 0.60–0.62 s where `slice` took 0.65–0.66 s; and `tuple`, whose
    empty tuple is one object); `resolve` is `slice`, so that the node keeps the question
    as its tag (`slice(kind, value, implicit)`) and `node_tag` answers it where a tag is read:
    the scalar values `_scalar` converts and the keys that may be `<<`. Keys are half the scalars
    and collections never need theirs; resolving every node in Python took a tenth of the load.
    `node_tag` gives every node the tag PyYAML gives it (tests/input/test_load.py compares them).
    """

    descend_resolver = staticmethod(operator.is_)  # (parent, index) -> an unused bool
    ascend_resolver = staticmethod(tuple)  # () -> the empty tuple, unused
    resolve = staticmethod(slice)  # (kind, value, implicit) -> the question, answered by `node_tag`


def node_tag(node: Node) -> str:
    """The node's tag as PyYAML's safe loader gives it: the one written, else the implicit one its
    resolver finds (a plain scalar's by its text, by first character)."""
    # Typed `str` by PyYAML; a slice here until answered (`_Resolve`).
    tag: Any = node.tag
    if tag.__class__ is not slice:
        return str(tag)
    kind, value, implicit = tag.start, tag.stop, tag.step
    if kind is ScalarNode:
        # A scalar's `implicit` is (plain, quoted): only a plain one is resolved by its text.
        if implicit[0]:
            for resolved, regexp in IMPLICIT.get(value[:1], WILDCARD):
                if regexp.match(value):
                    return resolved
        return _SCALAR_TAG
    return _SEQUENCE_TAG if kind is SequenceNode else _MAPPING_TAG


def is_merge(knode: Node) -> bool:
    """Whether a key is YAML 1.1's merge key: `!!merge` written, or the plain scalar `<<`."""
    tag: Any = knode.tag
    return (tag.__class__ is not slice or knode.value == "<<") and node_tag(knode) == _MERGE


assert not yaml.SafeLoader.yaml_path_resolvers  # what `_Resolve` leaves out


# The C callables do not have BaseResolver's signatures, which mypy compares.
class _PythonLoader(_Resolve, yaml.SafeLoader):  # type: ignore[misc]
    pass


LOADER: type[yaml.SafeLoader] | type[yaml.CSafeLoader] = _PythonLoader
if PARSER_IS_C:  # PyYAML defines CSafeLoader only when it was built with libyaml

    class _CLoader(_Resolve, yaml.CSafeLoader):  # type: ignore[misc]
        pass

    LOADER = _CLoader

_MERGE = "tag:yaml.org,2002:merge"
