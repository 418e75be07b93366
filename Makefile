# Every target bootstraps its own virtual environment on first use: on a fresh machine the
# only prerequisites are python3 (3.10+) and make.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.DEFAULT_GOAL := help
.PHONY: help venv test lint format typecheck imports pytest demo bench bench-peers torture fuzz differential edit-recovery clean

help:  ## List the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-12s %s\n", $$1, $$2}'

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	@touch $@

venv: $(STAMP)  ## Create .venv with the project and its dev tools

test: lint typecheck imports pytest  ## Every check CI runs: ruff, mypy --strict, import layers, pytest

lint: $(STAMP)  ## ruff check + format check
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

format: $(STAMP)  ## Apply ruff's fixes and formatting
	$(BIN)/ruff check --fix .
	$(BIN)/ruff format .

typecheck: $(STAMP)  ## mypy --strict on src, tests, examples, bench, differential, edit_recovery
	$(BIN)/mypy

imports: $(STAMP)  ## Import-layer contracts (import-linter)
	$(BIN)/lint-imports

pytest: $(STAMP)  ## The quick test suite
	$(BIN)/pytest -q -m "not slow"

demo: $(STAMP)  ## Run the MCP demo: an agent session over stdio, with a stale edit refused
	$(BIN)/dsh-fs demo

bench: $(STAMP)  ## Benchmarks against raw-Python baselines (writes bench/results.md)
	$(BIN)/python -m bench

bench-peers: $(STAMP)  ## Benchmarks including peer tools, installed in a separate environment
	$(BIN)/python -m bench --peers

torture: $(STAMP)  ## Crash-consistency and lost-update torture runs (minutes)
	$(BIN)/pytest -q -m slow tests/torture

fuzz: $(STAMP)  ## Long hypothesis runs of the hostile-input and property suites
	HYPOTHESIS_PROFILE=fuzz $(BIN)/pytest -q -m slow tests/fuzz

differential: $(STAMP)  ## Compare with the recorded upstream results (writes differential/REPORT.md)
	$(BIN)/python -m differential

edit-recovery: $(STAMP)  ## Run the edit-recovery corpus: how many near-misses are diagnosed, wrong edits
	$(BIN)/python -m edit_recovery

clean:  ## Remove the virtual environment and caches
	rm -rf $(VENV) .mypy_cache .pytest_cache .ruff_cache build dist
