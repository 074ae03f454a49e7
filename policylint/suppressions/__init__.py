"""Suppressions: inline `# policylint:` comments, the `policylint.io/ignore` annotation and the
baseline file (docs/suppressions.md). `apply.apply` is the pipeline step that moves findings
into `LintResult.suppressed`; the rules about suppressions (PL9xx) are in
policylint.rules.suppressions.
"""

# The comment that marks a suppression. Here, not in `comments`, for what only looks for it (the
# hook's answer to a comment, the shells' check for a file holding one): importing the scanner,
# its directives and their patterns would cost them a millisecond or two before their first file.
MARKER = "policylint:"
MARKER_BYTES = MARKER.encode("ascii")
