"""The input stage: from paths to parsed documents, and back from a document path to a line.

It owns finding the files (`sources.py`, `ignore.py`, `tracked.py`, `nonmanifest.py`, `git.py`,
`gitref.py`, `named.py`), reading and parsing them within the bounds on hostile input
(`load.py`, the loader's entry points and its public face, over `reader.py` bytes to text,
`bounds.py` the bounds, `prescan.py` the checks before composing, `resolver.py` libyaml's loader
and tags, `convert.py` nodes to data, `templates.py` unrendered templates, `document.py` the
results), positions (`positions.py`, `blockpaths.py`), and making loading fast without changing
its result (`cache.py`, `parallel.py`, `kept.py`). Every problem with an input is an `Issue` with
a location (PL0xx), never an exception.
"""
