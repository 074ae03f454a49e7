"""Long-run fuzzing of the whole pipeline on structured random manifests, with atheris.

    pip install atheris
    python fuzz/fuzz_pipeline.py -max_total_time=3600 fuzz/corpus/pipeline

atheris drives the hypothesis strategy of tests/hostile/test_fuzz.py (`manifests()`:
Gateways, ListenerSets, routes, Services, Namespaces, ReferenceGrants, CRDs and
policies of several kinds, references valid and dangling, values of the wrong
type anywhere) through hypothesis's `fuzz_one_input`, so coverage guidance
steers the generator. Properties: no exception, no internal error (PL000), every
finding and related location inside a linted file, a JSON report that matches
schemas/report.schema.json, every topology query answers.

When a property fails, the failing manifests are printed as a Python
expression: paste it into an `@example(...)` of `test_structured_manifests` in
tests/hostile/test_fuzz.py (fuzz/README.md). Without atheris, the arguments are
replayed: `python fuzz/fuzz_pipeline.py crash-1a2b...`.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # `tests` is importable from a checkout

from harness import run
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.fuzzing import EXTERNAL_PATTERNS, Manifests, manifests


@settings(database=None, deadline=None, suppress_health_check=list(HealthCheck))
@given(m=manifests(), external=st.lists(st.sampled_from(EXTERNAL_PATTERNS), max_size=2, unique=True), synthetic=st.booleans())
def structured(m: Manifests, external: list[str], synthetic: bool) -> None:
    from tests.hostile.test_fuzz import check_structured

    try:
        check_structured(m, external, synthetic)
    except Exception:
        print(f"\nfailing input:\n@example(m={m!r}, external={external!r}, synthetic={synthetic!r})", file=sys.stderr)
        raise


def main() -> int:
    return run(
        "fuzz/fuzz_pipeline.py", structured.hypothesis.fuzz_one_input, ("policylint.pipeline", "policylint.semantics.topology")
    )


if __name__ == "__main__":
    raise SystemExit(main())
