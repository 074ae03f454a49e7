"""The baseline file: the findings a repository had when it adopted policylint.

    {"tool": "policylint", "version": 1, "entries": [
    {"fingerprint": "…", "rule": "PL201", "name": "targetref-not-found", "file": "apps/web.yaml",
     "object": "HTTPRoute web/store", "path": "spec.parentRefs[0]", "message": "…"},
    ...
    ]}

Entries match findings by fingerprint (policylint.rules.engine.fingerprint: rule, object
identity and field path; the file only for findings without an object), one entry per finding:
an edit above a finding keeps it hidden, and a new finding on another field of the same object
is not hidden. `file` (relative to the baseline's own directory) says which definition of the
object an entry was recorded for: it hides a finding in that file first, and one in another
file only when the object is defined once (it moved); a copy added in another file takes none
of the original's entries (policylint.suppressions.apply). `file` also tells which entries a
run over some files can judge stale; an entry without one (written by hand) hides a finding of
an object defined once. The other fields are for people reading a diff. One entry per line,
sorted by file, object, rule, path: a change touches only its lines.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from policylint.findings import Finding
from policylint.input.named import MAX_BASELINE_BYTES, NamedFileError, read_named, shown
from policylint.values import frozen

if TYPE_CHECKING:
    from policylint.request import LintRequest

DEFAULT_FILE = ".policylint-baseline.json"
VERSION = 1
_FIELDS = ("fingerprint", "rule", "name", "file", "object", "path", "message")
# A baseline is written by policylint and read by it; a file far larger than any repository's
# findings is a mistake (or hostile) and is refused before it is read.
MAX_BYTES = MAX_BASELINE_BYTES


class BaselineError(ValueError):
    """The baseline file cannot be read or written (a usage error, exit 2)."""


@frozen
class Entry:
    fingerprint: str
    rule: str
    name: str = ""
    file: str = ""
    object: str = ""
    path: str = ""
    message: str = ""
    line: int = 1  # where the entry sits in the baseline file (for the PL906 finding)

    @staticmethod
    def of(f: Finding, base: str = ".") -> Entry:
        """The entry recording `f`, its file written relative to `base` (the baseline's directory)."""
        return Entry(f.fingerprint, f.rule, f.name, relative(f.file, base), str(f.object) if f.object else "", f.path, f.message)

    def sort_key(self) -> tuple[str, ...]:
        return (self.file, self.object, self.rule, self.path, self.message, self.fingerprint)


def read(path: str) -> list[Entry]:
    """The entries of the baseline at `path`. Raises BaselineError naming the file and the problem,
    never quoting what it holds (`baseline:` may name any file; policylint.input.named reads it)."""
    if not os.path.lexists(path):
        raise BaselineError(f"baseline {shown(path)} does not exist (create it with --write-baseline)")
    try:
        data = read_named(path, what="baseline", limit=MAX_BYTES)
    except NamedFileError as exc:
        raise BaselineError(str(exc)) from None
    return parse(data, shown(path))


def parse(data: bytes, path: str) -> list[Entry]:
    """The entries of a baseline's content (read from `path`, or from a git ref: `--baseline-ref`)."""
    if len(data) > MAX_BYTES:
        raise BaselineError(f"baseline {path}: {len(data):,} bytes is more than a baseline can be ({MAX_BYTES:,})")
    try:
        text = data.decode("utf-8")
        document = json.loads(text)
    except UnicodeDecodeError as exc:
        raise BaselineError(f"baseline {path} is not UTF-8 text (byte {exc.start + 1})") from None
    except json.JSONDecodeError as exc:
        # The decoder's message says where, not what: "Expecting value: line 1 column 1 (char 0)".
        raise BaselineError(f"baseline {path} is not a JSON document: {exc.msg} at line {exc.lineno}") from None
    except RecursionError:
        raise BaselineError(f"baseline {path} is not a baseline: JSON nested too deeply") from None
    if not isinstance(document, dict) or not isinstance(document.get("entries"), list):
        raise BaselineError(f'baseline {path}: expected an object with an "entries" list, as --write-baseline writes')
    if document.get("version") != VERSION:
        raise BaselineError(f"baseline {path}: its version is not {VERSION}; write it again with --write-baseline")
    lines = _fingerprint_lines(text)
    entries = []
    for i, raw in enumerate(document["entries"]):
        if not isinstance(raw, dict) or not isinstance(raw.get("fingerprint"), str) or not isinstance(raw.get("rule"), str):
            raise BaselineError(f'baseline {path}: entry {i + 1} needs "fingerprint" and "rule" strings')
        values = {k: raw.get(k) for k in _FIELDS}
        for key, value in values.items():
            if value is not None and not isinstance(value, str):
                raise BaselineError(f"baseline {path}: entry {i + 1}: {key!r} must be a string")
        entries.append(Entry(**{k: v for k, v in values.items() if v is not None}, line=lines.get(raw["fingerprint"], 1)))
    return entries


def relative(file: str, base: str) -> str:
    """`file` (as the run names it, relative to the working directory) relative to `base`, with
    `/`: a baseline at the repository's root reads the same whichever directory wrote it."""
    return Path(os.path.relpath(os.path.abspath(file), os.path.abspath(base))).as_posix()


def absolute(file: str, base: str) -> str:
    """An entry's file (relative to the baseline's directory `base`) as an absolute path."""
    return os.path.normpath(os.path.join(os.path.abspath(base), file))


_FINGERPRINT = re.compile(r'"fingerprint"\s*:\s*"([^"\\]*)"')


def _fingerprint_lines(text: str) -> dict[str, int]:
    """The line of each fingerprint in the file (the first, if repeated), in one pass."""
    lines: dict[str, int] = {}
    line, counted = 1, 0
    for match in _FINGERPRINT.finditer(text):
        line += text.count("\n", counted, match.start())
        counted = match.start()
        lines.setdefault(match.group(1), line)
    return lines


def render(findings: Iterable[Finding], base: str = ".") -> str:
    """The baseline recording `findings`: one entry per line, sorted, ending with a newline.
    Files are written relative to `base`, the directory the baseline is written in."""
    entries = sorted((Entry.of(f, base) for f in findings), key=Entry.sort_key)
    lines = [json.dumps({k: getattr(e, k) for k in _FIELDS}, ensure_ascii=False, separators=(", ", ": ")) for e in entries]
    body = ",\n".join(lines)
    return f'{{"tool": "policylint", "version": {VERSION}, "entries": [\n{body}{chr(10) if lines else ""}]}}\n'


def write(path: str, findings: Sequence[Finding]) -> int:
    """Write the baseline recording `findings` to `path` (replaced whole: written next to it,
    then renamed, so an interrupted run never leaves half a baseline). Returns the entry count."""
    import tempfile

    target = Path(path)
    text = render(findings, str(target.parent))
    temporary: str | None = None
    try:
        # A new file of a name nobody can have planted (O_EXCL), renamed over the target: the
        # rename replaces a symlink there rather than writing through it.
        fd, temporary = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=str(target.parent))
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.chmod(temporary, 0o666 & ~_umask())
        os.replace(temporary, target)
    except OSError as exc:
        if temporary is not None:
            with contextlib.suppress(OSError):
                os.unlink(temporary)
        raise BaselineError(f"baseline {shown(path)} cannot be written: {exc.strerror or exc}") from None
    return len(findings)


def _umask() -> int:
    # mkstemp creates the file 0600; a baseline is committed, readable as the umask allows.
    mask = os.umask(0)
    os.umask(mask)
    return mask


def read_baseline(request: LintRequest) -> list[Entry] | None:
    """The entries of the request's baseline (None: none, or `--write-baseline` replaces it).
    Read before any work: a baseline that cannot be read is a usage error (BaselineError)."""
    if request.baseline is None or request.write_baseline is not None:
        return None
    if request.baseline_entries is not None:  # read from a git ref (`--baseline-ref`)
        return list(request.baseline_entries)
    return read(request.baseline)
