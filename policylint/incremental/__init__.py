"""Incremental analysis: results kept by the content they were computed from, so that a run
following a change (the pre-commit hook, `--staged`, `--diff`, an editor) does again only what
the change invalidates (docs/performance.md, "Incremental analysis").

- `memo.py`: what a whole run over a set of files finds (its findings' fingerprints), kept in the
  parse cache under a key that hashes every file's name and content, the settings that shape
  the findings and the code that computes them. The gate's base side (`commands/change.py`)
  reads it instead of linting the base again: the base of a hook run is the commit the previous
  run checked, so it is nearly always there. A staged side that analysed a part keeps what it
  found about that part, read back when the next base's findings are about it.
- `summaries.py`: per file content, the keys of the objects a file defines and what each may
  reference, and the part of the repository a scoped run found: the next scoped run walks only
  the files that changed to find its part.
- `workspace.py`: `Workspace`, the in-memory texts an editor holds over the files on disk, and
  what each edit changes in the findings (the language server's entry point): each update
  analyses the part of the workspace the edited file reaches;
- `merge.py`: the findings of a whole run from the run before an edit and the part's.

Entries live where the parse cache does and follow its rules (policylint.input.cache): outside
the checkout, in a directory only this user can write, behind a checksum, and checked on
reading; an entry that is not exactly what this package writes is a miss.
"""
