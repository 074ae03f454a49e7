"""`policylint server`: the Language Server Protocol server (docs/editors.md).

The server is an editor's view of the same run `check` makes: `analysis` runs the pipeline over
the workspace with the editor's unsaved texts in place of the files on disk, and the other
modules read that run's typed results. `protocol` is the only module that imports pygls.

- `analysis`: the one interface to the engine: `analyse(root, overrides) -> Analysis`.
- `documents`: positions (the engine's 1-based line and column, LSP's UTF-16 offsets) and
  which object and field a cursor is on.
- `navigation`: every reference the engine resolved, for definition, references and symbols.
- `hovers`: the effective policy (`explain`'s document) and a reference's resolution as Markdown.
- `actions`: the findings' fixes and suppressions as code actions.
- `protocol`: the pygls server, the analysis thread and how edits made during an analysis coalesce.
"""
