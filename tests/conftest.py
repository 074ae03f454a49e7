"""Suite-wide pytest configuration.

`--update-golden` rewrites the golden files of tests/reporters/test_reporters.py from the
current output instead of comparing against them; review the diff before
committing it.

The `validate_json_reports` fixture validates every JSON report rendered in-process against
schemas/report.schema.json, the published contract of the JSON report (README "JSON report"). The
reporter tests use it (and one end-to-end test of the command); elsewhere a report is read for
what it says, and validating each one cost the suite several seconds.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, settings

from policylint.vocabulary import Term

# No property test is judged by the clock: a deadline or the too-slow health check times a guess,
# and fails on a busy CI machine where nothing is wrong. Example counts are untouched.
settings.register_profile("policylint", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("policylint")
# `pytest --hypothesis-profile=long` runs the fuzz tests (tests/hostile/test_fuzz.py) for longer:
# POLICYLINT_FUZZ_EXAMPLES examples per property (default 10,000). See fuzz/README.md.
settings.register_profile(
    "long",
    parent=settings.get_profile("policylint"),
    max_examples=int(os.environ.get("POLICYLINT_FUZZ_EXAMPLES") or 10_000),
)


_SAVED_ENV: dict[str, str | None] = {}


def pytest_configure(config: pytest.Config) -> None:
    """The parse cache defaults to the user's cache directory: no test, and no policylint process
    a test starts (they inherit this environment), may write there. Tests of the default location
    set their own XDG_CACHE_HOME and HOME."""
    import tempfile

    scratch = tempfile.mkdtemp(prefix="policylint-test-cache-")
    config._policylint_cache_scratch = scratch  # type: ignore[attr-defined]
    for name, value in (
        ("POLICYLINT_CACHE_DIR", os.path.join(scratch, "policylint")),
        ("XDG_CACHE_HOME", os.path.join(scratch, "xdg")),
    ):
        _SAVED_ENV[name] = os.environ.get(name)
        os.environ[name] = value
    # The suite may itself run in a CI job: what policylint reads of one (`--format auto` picks
    # GitHub annotations, reports link to the commit, colour is forced) is set by the tests that
    # test it, never inherited.
    for name in CI_ENVIRONMENT:
        _SAVED_ENV[name] = os.environ.pop(name, None)


CI_ENVIRONMENT = (
    "GITHUB_ACTIONS",
    "GITHUB_WORKSPACE",
    "GITHUB_SERVER_URL",
    "GITHUB_REPOSITORY",
    "GITHUB_SHA",
    "GITHUB_STEP_SUMMARY",
    "GITHUB_OUTPUT",
    "NO_COLOR",
    "FORCE_COLOR",
    # A pre-push hook running the suite: `check --diff` would measure that push instead.
    "PRE_COMMIT_FROM_REF",
    "PRE_COMMIT_TO_REF",
    "PRE_COMMIT_REMOTE_NAME",
)


def pytest_unconfigure(config: pytest.Config) -> None:
    import shutil

    for name, value in _SAVED_ENV.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value
    scratch = getattr(config, "_policylint_cache_scratch", None)
    if scratch is not None:
        shutil.rmtree(scratch, ignore_errors=True)


@pytest.hookimpl(trylast=True)  # after pytest-xdist's worker wrote the groups' suffixes
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """A costly module fixture's tests (`xdist_group`) run on one worker: tests/xdist_groups.py."""
    from tests.xdist_groups import keep_groups

    keep_groups(config, items)


def pytest_make_parametrize_id(config: pytest.Config, val: object, argname: str) -> str | None:
    """A vocabulary term in a test id is its word: a term refuses `str()` (policylint.vocabulary)."""
    return val.label if isinstance(val, Term) else None


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--update-golden",
        action="store_true",
        default=False,
        help="rewrite tests/reporters/golden/* from the current output",
    )


@pytest.fixture
def update_golden(request: pytest.FixtureRequest) -> bool:
    return bool(request.config.getoption("--update-golden"))


@pytest.fixture
def without_kept_results(monkeypatch: pytest.MonkeyPatch) -> None:
    """Commands that analyse on every run: for tests of what an analysis reads from the cache,
    which a run whose inputs an earlier run saw skips whole (policylint.incremental.results)."""
    from policylint.incremental import results

    monkeypatch.setattr(results, "open_results", lambda *args, **kwargs: None)


@pytest.fixture
def validate_json_reports(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Every JSON report the test renders in-process is checked against the report schema."""
    from policylint.reporters import json as json_reporter
    from tests.lintutil import assert_valid_report

    original = json_reporter.report

    def checked(result: Any) -> dict[str, Any]:
        document = original(result)
        assert_valid_report(document)
        return document

    # The command and `render` write the report in pieces (`pieces`), never through `report`:
    # the document they write is validated whole.
    original_pieces = json_reporter.pieces

    def checked_pieces(result: Any, options: Any = None) -> Iterator[str]:
        text = "".join(original_pieces(result, options))
        assert_valid_report(json.loads(text))
        yield text

    monkeypatch.setattr(json_reporter, "report", checked)
    monkeypatch.setattr(json_reporter, "pieces", checked_pieces)
    yield
