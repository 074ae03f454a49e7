"""Long-run fuzzing of the loader and the whole pipeline on arbitrary bytes, with atheris.

    pip install atheris
    python fuzz/fuzz_load.py -max_total_time=3600 -dict=fuzz/yaml.dict fuzz/corpus/load

Each input is one file's bytes. Properties (CONTRIBUTING.md "Reliability"): decoding and
parsing never raise; every input problem and every document has a line and a
column >= 1; the whole pipeline (every rule, positions, both reporters) never
raises, never reports an internal error (PL000), and its JSON report matches
schemas/report.schema.json.

Without atheris, the arguments are replayed: `python fuzz/fuzz_load.py
crash-1a2b...` runs the checks on those files and shows the failure (see
fuzz/README.md for turning it into a regression test). atheris is not a
dependency of policylint or of its tests.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # `tests` is importable from a checkout

from harness import run


def check(data: bytes) -> None:
    from policylint.input.load import decode, parse_text
    from tests.hostile.test_fuzz import assert_parsed_soundly, assert_sound
    from tests.lintutil import lint_text

    text, problem = decode(data, "fuzz.yaml")
    if text is None:
        assert problem is not None and problem.location is not None
        assert problem.location.line >= 1 and problem.location.column >= 1, problem
    else:
        assert_parsed_soundly(parse_text(text, "fuzz.yaml"), text, "fuzz.yaml")
    assert_sound(lint_text(data, "fuzz.yaml"))


def main() -> int:
    # libyaml is C: instrumenting the Python around it is what matters.
    return run("fuzz/fuzz_load.py", check, ("yaml", "policylint.input.load", "policylint.pipeline"), show_input=True)


if __name__ == "__main__":
    raise SystemExit(main())
