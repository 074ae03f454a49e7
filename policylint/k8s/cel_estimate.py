"""The static cost estimate's former module path: it is `policylint.k8s.cel.estimate` now (with
the schema's declarations in `policylint.k8s.cel.decls`); these names stay importable from here
for code written against the old path."""

from __future__ import annotations

from policylint.k8s.cel.decls import Decl, decl_type
from policylint.k8s.cel.estimate import STATIC_COST_LIMIT, STATIC_CRD_COST_LIMIT, Costly, cost_message, estimate, refusals

__all__ = ["STATIC_COST_LIMIT", "STATIC_CRD_COST_LIMIT", "Costly", "Decl", "cost_message", "decl_type", "estimate", "refusals"]
