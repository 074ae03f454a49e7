"""The tests of one `xdist_group` sent to one worker, whichever pytest runs them.

pytest-xdist's `--dist loadgroup` (pyproject.toml `addopts`) sends the tests marked
`@pytest.mark.xdist_group(NAME)` to one worker by a suffix, `@NAME`, that each worker writes into
the tests' ids before it reports its collection (`xdist/remote.py`, `pytest_collection_modifyitems`).
It writes the suffix to `Item._nodeid`, where pytest kept the id before 9.0; pytest 9 keeps it in
`Item._id` and reads `_nodeid` nowhere, so the suffix is lost, every test is a unit of its own and a
group's tests are spread over the workers, each building the group's costly module fixture again
(tests/fidelity/test_conformance.py: the Envoy Gateway oracle's run, once per worker). Where the
suffix was written and lost, it is written where pytest 9 reads the id.
"""

from __future__ import annotations

import pytest


def keep_groups(config: pytest.Config, items: list[pytest.Item]) -> None:
    if not getattr(config.option, "loadgroup", False):
        return  # not a worker of `--dist loadgroup`: no suffix to keep
    try:
        from _pytest.nodeid import NodeId
    except ImportError:  # pytest before 9 reads the id where xdist writes it
        return
    for item in items:
        suffixed = item.__dict__.get("_nodeid")
        if isinstance(suffixed, str) and suffixed != item.nodeid:
            item._id = NodeId.parse(suffixed)
