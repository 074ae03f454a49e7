"""Suppressions: inline `# policylint:` comments, the `policylint.io/ignore` annotation and the
baseline file (docs/suppressions.md). `apply.apply` is the pipeline step that moves findings
into `LintResult.suppressed`; the rules about suppressions (PL9xx) are in
policylint.rules.suppressions.
"""
