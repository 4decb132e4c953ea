# Two commands on a fresh machine: `make demo` (the main job) and `make test` (the whole suite).
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP_BASE := $(VENV)/.stamp-base
STAMP_DEV := $(VENV)/.stamp-dev
# The engines whose own code checks `gpurent deploy render` output in the tests (SkyPilot's task
# loader, dstack's models, ansible-playbook/ansible-lint, the Kubernetes schemas). Their
# dependencies conflict with gpurent's and each other's pins, so they live in a venv of their own;
# the tests call them there by subprocess ($GPURENT_ENGINES_BIN).
ENGINES ?= .venv-engines
STAMP_ENGINES := $(ENGINES)/.stamp-engines
ENGINE_PACKAGES := skypilot==0.14.1 dstack==0.22.5 ansible-core==2.19.14 ansible-lint==26.10.1 \
	kubernetes-validate==1.37.0

.PHONY: demo test lint typecheck unit bench clean engines lock

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip

# constraints.txt holds the versions the dev install resolved to (pip's resolver otherwise
# backtracks for a quarter of an hour on a fresh machine); `make lock` rewrites it
$(STAMP_BASE): pyproject.toml constraints.txt | $(BIN)/python
	$(BIN)/pip install -q -c constraints.txt -e .
	touch $@

# torch is pinned to the CPU build that lies on this machine's disk (an unpinned torch pulls CUDA).
$(STAMP_DEV): pyproject.toml constraints.txt | $(BIN)/python
	$(BIN)/pip install -q torch==2.13.0
	$(BIN)/pip install -q -c constraints.txt -e '.[all,dev,integrations]'
	touch $@ $(STAMP_BASE)

# re-resolve the dev install without constraints in a scratch venv and record what it chose
lock:
	rm -rf .venv-lock && $(PYTHON) -m venv .venv-lock
	.venv-lock/bin/pip install -q torch==2.13.0
	.venv-lock/bin/pip install -q -e '.[all,dev,integrations]'
	{ sed -n '/^#/p' constraints.txt; .venv-lock/bin/pip freeze --exclude-editable | grep -v '^gpurent'; } > constraints.txt.new
	mv constraints.txt.new constraints.txt && rm -rf .venv-lock

$(STAMP_ENGINES):
	$(PYTHON) -m venv $(ENGINES)
	$(ENGINES)/bin/python -m pip install -q --upgrade pip
	$(ENGINES)/bin/pip install -q $(ENGINE_PACKAGES)
	touch $@

engines: $(STAMP_ENGINES)

demo: $(STAMP_BASE)
	$(BIN)/gpurent plan --preset llama-lora

lint: $(STAMP_DEV)
	$(BIN)/ruff check src tests benchmarks examples
	$(BIN)/ruff format --check src tests benchmarks examples
	$(BIN)/lint-imports

typecheck: $(STAMP_DEV)
	$(BIN)/mypy

# GPURENT_TEST_PG_URL (written by .ci/pg-up.sh, exported by .ci/run) reaches pytest through the
# environment: the store tests run on that PostgreSQL server too.
unit: $(STAMP_DEV) $(STAMP_ENGINES)
	GPURENT_ENGINES_BIN=$(abspath $(ENGINES))/bin $(BIN)/python -m pytest

test: lint typecheck unit

bench: $(STAMP_DEV)
	$(BIN)/python benchmarks/run_all.py $(if $(REFERENCE),--reference $(REFERENCE))

clean:
	rm -rf $(VENV) $(ENGINES) .mypy_cache .pytest_cache .ruff_cache .import_linter_cache
