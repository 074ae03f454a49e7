"""The project the process tests' scripts start a rule pool with (policylint.rules.workers): as
many objects as it takes for the pool to fork, and no verdicts kept between runs. Each script
runs in a fresh interpreter from the repository's root and imports it from there."""

from __future__ import annotations

from policylint.rules import workers


class Index:
    objects = range(workers.MIN_OBJECTS)


class Project:
    index = Index()
    kept_verdicts = None
