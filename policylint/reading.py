"""What a run reads before it builds objects: the files of its sources into documents, the
CustomResourceDefinitions of a `--crd` path (on disk or at a git ref), and the profiles of a
`profile:` file at a git ref (policylint.pipeline builds the project from them)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from policylint.findings import Issue
from policylint.input.cache import ParseCache
from policylint.input.ignore import WalkFilter
from policylint.input.kept import Kept
from policylint.input.load import NOT_A_MANIFEST, Document
from policylint.input.parallel import load_files
from policylint.input.sources import Source, SourceError, discover
from policylint.k8s.index import CRD_GK
from policylint.k8s.objects import split_api_version
from policylint.profiles.producers import Producer
from policylint.profiles.registry import ORIGIN_PROFILE, PolicyProfile

if TYPE_CHECKING:
    from policylint.input.gitref import TreeRef

_WHOLE = WalkFilter(exclude=(), respect_gitignore=False)


def load_sources(
    sources: Sequence[Source], cache: ParseCache | None = None, jobs: int = 1, keys: dict[str, str] | None = None
) -> tuple[list[Document], list[Issue], dict[str, str | Kept]]:
    """The documents and input issues of `sources`, and what each file was parsed from; `keys`
    receives each file's parse-cache key (its content's name)."""
    documents: list[Document] = []
    issues: list[Issue] = []
    # What each file was parsed from: its text (stdin) or its bytes, decoded only if a finding
    # needs a position in it.
    texts: dict[str, str | Kept] = {}
    for source, result in load_files(sources, cache=cache, jobs=jobs):
        documents.extend(result.documents)
        issues.extend(result.issues)
        if result.text is not None:
            texts[source.display] = result.text
        elif result.data is not None and result.documents:
            texts[source.display] = result.data
        if keys is not None and result.key is not None:
            keys[source.display] = result.key
    return documents, issues, texts


def read_crds(
    path: str, cache: ParseCache | None = None, jobs: int = 1, *, follow_outside_links: bool = False
) -> tuple[list[Document], list[str]]:
    """The CustomResourceDefinitions of one `--crd` path, and what went wrong reading its files
    (they are context, not linted: no finding, but said). Raises SourceError when the path
    gives no CRD: asked for by name, the kinds it was meant to describe would go unchecked."""
    documents, issues, _ = load_sources(
        # Named for their kinds alone: read whole, whatever `exclude` or .gitignore says.
        discover([path], follow_outside_links=follow_outside_links, walk=_WHOLE),
        cache,
        jobs,
    )
    found = [d for d in documents if is_crd(d)]
    if not found:
        raise SourceError(f"--crd {path}: {_no_crd_reason(issues)}")
    return found, [f"--crd {_located(issue)}: {issue.message}" for issue in _crd_file_problems(issues)]


# The files a `crd:` directory at a git ref gives: as a directory walk on disk reads them.
CRD_SUFFIXES = (".yaml", ".yml", ".json")


def read_crds_at(at: TreeRef, path: str, cache: ParseCache | None = None, jobs: int = 1) -> tuple[list[Document], list[str]]:
    """`read_crds` for a `crd:` path as the commit `at` holds it (policylint.input.gitref.read_tree):
    the file, or each `*.yaml`, `*.yml` and `*.json` file under the directory, named `REF:PATH`.
    Only regular file blobs within the manifest loader's bound are read: another entry under a
    directory is said and skipped, the path itself being one is a SourceError, as is a path the
    commit does not hold."""
    from policylint.input.bounds import MAX_FILE_BYTES
    from policylint.input.git import GitError
    from policylint.input.gitref import read_tree
    from policylint.input.named import shown

    try:
        in_tree = at.tree_path(path)
        files = read_tree(at.commit, in_tree, at.root, limit=MAX_FILE_BYTES, suffixes=CRD_SUFFIXES)
    except GitError as exc:
        raise SourceError(f"crd {shown(path)}: {exc}") from None
    named = shown(at.name(in_tree))
    if files is None:
        raise SourceError(f"crd {named}: {at.label} holds no such file or directory")
    if len(files) == 1 and files[0].path == in_tree and files[0].problem is not None:
        raise SourceError(f"crd {named}: {files[0].problem}")
    sources = [
        Source(display=at.name(f.path), content=f.data, snapshot=True)
        if f.data is not None
        else Source(display=at.name(f.path), problem=f.problem)
        for f in files
    ]
    documents, issues, _ = load_sources(sources, cache, jobs)
    found = [d for d in documents if is_crd(d)]
    if not found:
        raise SourceError(f"crd {named}: {_no_crd_reason(issues)}")
    return found, [f"crd {_located(issue)}: {issue.message}" for issue in _crd_file_problems(issues)]


def profiles_at(at: TreeRef, path: str) -> tuple[list[PolicyProfile], list[Producer]]:
    """The profiles of a `profile:` file as the commit `at` holds it, named `REF:PATH`: a regular
    file blob of at most MAX_PROFILE_BYTES (ProfileError otherwise)."""
    from policylint.input.git import GitError
    from policylint.input.gitref import read_file
    from policylint.input.named import MAX_PROFILE_BYTES, shown
    from policylint.profiles.producers import load_profile_document_bytes
    from policylint.profiles.registry import ProfileError

    try:
        in_tree = at.tree_path(path)
        data = read_file(at.commit, in_tree, at.root, label=at.label, limit=MAX_PROFILE_BYTES)
    except GitError as exc:
        raise ProfileError(f"profile {exc}") from None
    if data is None:
        raise ProfileError(f"profile {shown(at.name(in_tree))}: {at.label} holds no such file")
    return load_profile_document_bytes(data, at.name(in_tree), in_tree, origin=ORIGIN_PROFILE)


def _located(issue: Issue) -> str:
    where = issue.location
    return "" if where is None else f"{where.file}:{where.line}:{where.column}"


def _crd_file_problems(issues: Sequence[Issue]) -> list[Issue]:
    """What went wrong reading `--crd` files: everything but documents that are no Kubernetes
    object (a chart's values, a README's YAML), which a directory of CRDs may hold."""
    return [i for i in issues if i.rule_id != NOT_A_MANIFEST]


def _no_crd_reason(issues: Sequence[Issue]) -> str:
    problems = [f"{_located(i)}: {i.message}" for i in _crd_file_problems(issues)]
    if problems:
        shown = "; ".join(problems[:3]) + ("; ..." if len(problems) > 3 else "")
        return f"no CustomResourceDefinition could be read ({shown})"
    return "no CustomResourceDefinition in it (render Helm templates first: `helm template CHART | policylint ...`)"


def is_crd(doc: Document) -> bool:
    data = doc.data
    return (
        isinstance(data, dict)
        and data.get("kind") == CRD_GK[1]
        and isinstance(data.get("apiVersion"), str)
        and split_api_version(data["apiVersion"])[0] == CRD_GK[0]
    )
