"""Incremental analysis: results kept by the content they were computed from, so that a run
following a change (the pre-commit hook, `--staged`, `--diff`, an editor) does again only what
the change invalidates (docs/performance.md, "Incremental analysis").

- `memo.py`: what a whole run over a set of files finds (its findings' fingerprints), kept in the
  parse cache under a key that hashes every file's name and content, the settings that shape
  the findings and the code that computes them. The gate's base side (`commands/change.py`)
  reads it instead of linting the base again: the base of a hook run is the commit the previous
  run checked, so it is nearly always there. A staged side that analysed a part keeps what it
  found about that part, read back when the next base's findings are about it.
- `shells.py`: per file content, what a scoped run needs of a file it does not analyse (its
  objects' identities, positions, labels, references, the problems of loading it): the next
  scoped run builds those objects without decoding the file (policylint.k8s.lazy), and reads
  only the files its part reaches.
- `summaries.py`: the part of the repository a scoped run found, read back when the same run
  comes again.
- `keptindex.py`: the directed part search's index of who reads whom, kept for the next run
  and patched for the files changed since, rather than built over every object again.
- `workspace.py`: `Workspace`, the in-memory texts an editor holds over the files on disk, and
  what each edit changes in the findings (the language server's entry point): each update
  analyses the part of the workspace the edited file reaches;
- `merge.py`: the findings of a whole run from the run before an edit and the part's.

Entries live where the parse cache does and follow its rules (policylint.input.cache): outside
the checkout, in a directory only this user can write, behind a checksum, and checked on
reading; an entry that is not exactly what this package writes is a miss.
"""
