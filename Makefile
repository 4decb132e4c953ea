# Two commands on a fresh machine: `make demo` (the main job) and `make test` (the whole suite).
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP_BASE := $(VENV)/.stamp-base
STAMP_DEV := $(VENV)/.stamp-dev

.PHONY: demo test lint typecheck unit bench clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip

$(STAMP_BASE): pyproject.toml | $(BIN)/python
	$(BIN)/pip install -q -e .
	touch $@

# torch is pinned to the CPU build that lies on this machine's disk (an unpinned torch pulls CUDA).
$(STAMP_DEV): pyproject.toml | $(BIN)/python
	$(BIN)/pip install -q torch==2.13.0
	$(BIN)/pip install -q -e '.[all,dev,integrations]'
	touch $@ $(STAMP_BASE)

demo: $(STAMP_BASE)
	$(BIN)/gpurent plan --preset llama-lora

lint: $(STAMP_DEV)
	$(BIN)/ruff check src tests benchmarks examples
	$(BIN)/ruff format --check src tests benchmarks examples
	$(BIN)/lint-imports

typecheck: $(STAMP_DEV)
	$(BIN)/mypy

unit: $(STAMP_DEV)
	$(BIN)/python -m pytest

test: lint typecheck unit

bench: $(STAMP_DEV)
	$(BIN)/python benchmarks/run_all.py $(if $(REFERENCE),--reference $(REFERENCE))

clean:
	rm -rf $(VENV) .mypy_cache .pytest_cache .ruff_cache .import_linter_cache
