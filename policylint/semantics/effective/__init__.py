"""Effective policy (GEP-713; docs/effective-policy.md): what each policy enforces where.

`facets.py` cuts policies into facets and holds the result types; `fold.py` folds one stack of
facets under the established policy's strategy (`merge.py` holds the strategies);
`simulation.py` walks every context of the topology and folds each distinct stack once;
`verdicts.py` says why a value won or lost.
"""
