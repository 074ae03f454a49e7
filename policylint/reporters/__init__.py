"""Reporters: one module per format, each with `render(result, options=None) -> str` (and
`pieces(...) -> Iterator[str]` where a report can be written in pieces), listed in `REPORTERS`.

Adding a format is one module plus one `Reporter` line here: the CLI's `--format` and
`--output` choices, the configuration file's checks, the pipeline's choice of report stages and
tests/reporters/test_output_safety.py (which runs hostile input through every listed format) all read
this table. Reporters only render: everything they show is in the `LintResult` already
(findings, suppressed findings, the per-policy section when `policies` is set, attachment chains
when `chains` is set), so rendering never computes, and cannot fail on input. What a reporter
needs of the run's surroundings (colour, the repository root, where the other outputs go) comes
in `RenderOptions`, which the command reads from the environment once.

A format read by people (text, GitHub annotations, Markdown) escapes every field taken from the
input with `policylint.textsafe.escape`; a document for programs (`syntax` json or xml) relies
on its own syntax's escaping, written with `policylint.textsafe.json_dumps` for JSON.
"""

from __future__ import annotations

import functools
import gc
import importlib
import os
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Literal, cast

from policylint.findings import Finding, Severity
from policylint.values import frozen

if TYPE_CHECKING:
    from policylint.reported import Reported

AUTO = "auto"


@frozen
class Reporter:
    name: str
    # Imported when used, so that a text run never imports the other formats.
    module: str
    summary: str
    # A document for programs, parsed rather than read line by line, in this syntax; "text" is
    # read by people (and CI logs).
    syntax: Literal["text", "json", "xml"] = "text"
    # Shows the per-policy section (targets, enforcement, blast radius): the pipeline computes
    # it, which builds the effective-policy simulation.
    policies: bool = False
    # Shows each policy finding's attachment chain (policylint.attachment_chain).
    chains: bool = False
    # Reads every object of the run, not only what `policylint.reported.Reported` holds: a run
    # for it is analysed, never read back (policylint.incremental.results).
    objects: bool = False


REPORTERS: dict[str, Reporter] = {
    r.name: r
    for r in (
        Reporter("text", "policylint.reporters.text", "path:line:col: severity RULE message [Kind ns/name]"),
        Reporter("json", "policylint.reporters.json", "the JSON report, schemaVersion 1", syntax="json", policies=True),
        Reporter("sarif", "policylint.reporters.sarif", "SARIF 2.1.0, for GitHub code scanning", syntax="json", chains=True),
        Reporter(
            "junit",
            "policylint.reporters.junit",
            "JUnit XML: a test suite per file, a test case per object and rule",
            syntax="xml",
            objects=True,
        ),
        Reporter("github", "policylint.reporters.github", "GitHub Actions workflow commands: annotations on the pull request"),
        Reporter("gitlab", "policylint.reporters.gitlab", "GitLab Code Quality report", syntax="json"),
        Reporter(
            "markdown",
            "policylint.reporters.markdown",
            "a Markdown summary for $GITHUB_STEP_SUMMARY or a pull-request comment",
            policies=True,
        ),
    )
}
FORMATS = tuple(REPORTERS)


@frozen
class RenderOptions:
    """What a reporter needs of the run besides its result."""

    color: bool = False
    # The files this run writes (`--output FORMAT=PATH`), in order: the GitHub annotations'
    # closing notice says where the full report is.
    outputs: tuple[tuple[str, str], ...] = ()
    # The directory finding paths are relative to (the working directory) and the repository
    # root that CI tools resolve paths against; "" for either: the working directory.
    cwd: str = ""
    root: str = ""
    # Prefix of links to a file at the commit under review, e.g.
    # https://github.com/OWNER/REPO/blob/SHA/ ("": links relative to the repository root).
    link_base: str = ""
    # `--fail-on`: the lowest severity that fails the run. A report that counts failures (JUnit)
    # counts only these, so that a dashboard fails exactly when the gate does.
    fail_on: Severity = Severity.ERROR
    # `--gate all`: every finding at or above `fail_on` fails the run, pre-existing ones too;
    # else, in a run that measured a change, only those it introduces (policylint.commands.change).
    gate_all: bool = False

    def repo_path(self, file: str) -> str:
        """`file` (as findings name it) relative to the repository root, with `/` separators;
        a file outside the root keeps its absolute path."""
        cwd = self.cwd or os.getcwd()
        if os.path.isabs(cwd):
            return _repo_path(cwd, self.root or cwd, file)
        return _repo_path.__wrapped__(cwd, self.root or cwd, file)  # relative: read against the process's

    def fails(self, result: Reported, finding: Finding) -> bool:
        """Whether `finding` is one the exit code fails on (policylint.commands.change.gating):
        at or above `--fail-on`, and, under the introduced gate, not at the base too."""
        if finding.severity < self.fail_on:
            return False
        return self.gate_all or result.introduced_by_change(finding) is not False


# A report names each file once per finding and note (SARIF's locations: 10,537 on the 10k shared
# corpus, for 2,711 files), and taking a path apart and joining it again cost SARIF two thirds of
# its time there: each answer is kept while the table is small. Only for an absolute working
# directory, where the answer depends on the arguments alone.
@functools.lru_cache(maxsize=4096)
def _repo_path(cwd: str, root: str, file: str) -> str:
    absolute = os.path.normpath(os.path.join(cwd, file))
    relative = os.path.relpath(absolute, root) if os.path.isabs(root) else absolute
    if relative == os.pardir or relative.startswith(os.pardir + os.sep):
        relative = absolute
    return relative.replace(os.sep, "/")


def environment_options(
    *,
    color: bool = False,
    outputs: tuple[tuple[str, str], ...] = (),
    fail_on: Severity = Severity.ERROR,
    gate_all: bool = False,
) -> RenderOptions:
    """RenderOptions for this process: the repository root is $GITHUB_WORKSPACE in a GitHub
    Actions job (paths in annotations and SARIF are relative to the checkout), else the nearest
    directory holding `.git`, else the working directory; links point at $GITHUB_SHA when a
    workflow sets it."""
    from policylint.input.ignore import repository_root

    cwd = os.getcwd()
    workspace = os.environ.get("GITHUB_WORKSPACE", "")
    if workspace and os.path.isabs(workspace) and _inside(cwd, workspace):
        root = os.path.normpath(workspace)
    else:
        root = repository_root(cwd) or cwd
    server, repository, sha = (os.environ.get(k, "") for k in ("GITHUB_SERVER_URL", "GITHUB_REPOSITORY", "GITHUB_SHA"))
    link_base = f"{server.rstrip('/')}/{repository}/blob/{sha}/" if server and repository and sha else ""
    return RenderOptions(
        color=color, outputs=outputs, cwd=cwd, root=root, link_base=link_base, fail_on=fail_on, gate_all=gate_all
    )


def _inside(path: str, directory: str) -> bool:
    relative = os.path.relpath(path, directory)
    return relative != os.pardir and not relative.startswith(os.pardir + os.sep)


def renderer(fmt: str, options: RenderOptions | None = None) -> Callable[[Reported], str]:
    render = cast("Callable[..., str]", importlib.import_module(REPORTERS[fmt].module).render)

    def rendered(result: Reported) -> str:
        # A report allocates hundreds of thousands of short-lived strings and dicts; with the
        # cyclic collector on, each of its passes would walk the whole project again (JSON on a
        # messy 10k-object repository: 1 s of collection for 0.2 s of rendering; a JUnit report
        # took three times as long). Nothing a report makes is cyclic garbage.
        was_enabled = gc.isenabled()
        gc.disable()
        try:
            return render(result, options or RenderOptions())
        finally:
            if was_enabled:
                gc.enable()

    return rendered


def streamer(fmt: str, options: RenderOptions | None = None) -> Callable[[Reported], Iterator[str]]:
    """The report in pieces, as the format's `pieces` writes it (JSON: a batch of findings or
    policies a piece), else whole: for a writer that need not hold a large report as one string. The pieces
    joined are what `renderer` returns."""
    module = importlib.import_module(REPORTERS[fmt].module)
    pieces = cast("Callable[..., Iterator[str]] | None", getattr(module, "pieces", None))
    if pieces is not None:
        return lambda result: pieces(result, options or RenderOptions())
    render = renderer(fmt, options)
    return lambda result: iter((render(result),))
