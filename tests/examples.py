"""How many examples a property test tries: a few hundred in `make test`, the test's full count in
`make test-all` (CI's run on the primary Python) and more on request.

A property test that compares a function with the one it replaced, or a kept result with one from
nothing, proves the same with 300 examples as with 3,000, only with less chance of meeting a rare
input; the full count is what CI runs (`POLICYLINT_FULL_EXAMPLES=1`, the Makefile's `test-all`),
`make test` the quick one, where most of a run of thousands of tiny examples is Hypothesis's own
drawing and shrinking machinery. `POLICYLINT_FUZZ_EXAMPLES=N` or a Hypothesis profile other than
the suite's (`--hypothesis-profile=long`, tests/conftest.py) asks for more, as for
tests/hostile/test_fuzz.py. A fixed-seed sweep (`count`) takes the first texts of its full
sequence: `make test`'s are a prefix of CI's.
"""

from __future__ import annotations

import os
from typing import Any

from hypothesis import settings

# The Hypothesis profiles whose example count is not a request: Hypothesis's own and the suite's.
_NO_REQUEST = ("default", "policylint")


def count(quick: int, full: int) -> int:
    """The examples a test tries: `quick` in `make test`, `full` in `make test-all`, or what was
    asked for (POLICYLINT_FUZZ_EXAMPLES, a profile of more examples)."""
    asked = os.environ.get("POLICYLINT_FUZZ_EXAMPLES")
    if asked:
        return int(asked)
    if settings.get_current_profile_name() not in _NO_REQUEST:
        return max(full, settings().max_examples)
    return full if os.environ.get("POLICYLINT_FULL_EXAMPLES") == "1" else quick


def examples(quick: int, full: int, **options: Any) -> settings:
    """`@examples(300, 3000)` for `@settings(max_examples=...)`: no deadline (tests/conftest.py)."""
    return settings(max_examples=count(quick, full), deadline=None, **options)
