"""The `policylint.io/ignore` annotation: suppressions for every finding on one object.

    metadata:
      annotations:
        policylint.io/ignore: "PL301,PL602 until=2026-06-30 -- the listener is added by the platform team"

Unlike a comment it survives `kustomize build` and `helm template`, which drop comments. The
value has the grammar of a comment's codes (policylint.suppressions.directives).
"""

from __future__ import annotations

from policylint.input.positions import join

ANNOTATION = "policylint.io/ignore"
# The field path of the annotation in its object, where its own findings (PL901-PL905) sit.
PATH = join("metadata.annotations", ANNOTATION)
