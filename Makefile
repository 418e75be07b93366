# Every target bootstraps its own virtual environment on first use: on a fresh machine the
# only prerequisites are python3 (3.10+) and make. `make demo` installs only the package and
# the MCP SDK (seconds); the targets that need the dev tools add them to the same .venv.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
RUN_STAMP := $(VENV)/.installed-mcp

.DEFAULT_GOAL := help
.PHONY: help venv lock install test lint format typecheck imports pytest coverage demo bench bench-peers torture fleet fuzz encodings-property differential edit-recovery clean

help:  ## List the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-12s %s\n", $$1, $$2}'

# The package and the MCP SDK, nothing else. Bytecode is compiled by the imports that need
# it, and the venv gets no pip of its own when this python's pip can install into it
# (--python, pip 22.3+): the targets that need the dev tools add pip and them later.
$(RUN_STAMP): pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv --without-pip $(VENV)
	@if $(BIN)/python -m pip --version >/dev/null 2>&1; then \
		$(BIN)/python -m pip install --quiet --no-compile -e '.[mcp]'; \
	elif $(PYTHON) -m pip --python $(BIN)/python --version >/dev/null 2>&1; then \
		$(PYTHON) -m pip --python $(BIN)/python install --quiet --no-compile -e '.[mcp]'; \
	else \
		$(PYTHON) -m venv $(VENV) && $(BIN)/python -m pip install --quiet --no-compile -e '.[mcp]'; \
	fi
	@touch $@

# The dev tools come at the versions of requirements/dev.lock (pip too), so a new release of
# one cannot turn CI red overnight; `make lock` moves them on. uv, pinned in the lock too,
# installs them: it resolves and unpacks the ~150 wheels in ~2 s of CPU where pip spends ~40.
# It writes no bytecode: the suite compiles only the modules it imports, where compiling all
# of site-packages up front (`--compile-bytecode`, ~30 s of CPU) made a fresh clone's `make
# test` cost 452 CPU-s against 429 without. Where uv cannot be installed or cannot
# install them (no wheel for this platform; a package index configured for pip only, which uv
# does not read), pip installs them as before.
LOCK := requirements/dev.lock

$(STAMP): pyproject.toml $(LOCK)
	$(PYTHON) -m venv $(VENV)
	@if $(BIN)/python -m pip install --quiet uv -c $(LOCK) && \
		$(BIN)/uv pip install --python $(BIN)/python --quiet -e '.[dev]' pip -c $(LOCK); then \
		echo "make: installed the dev tools with uv ($$($(BIN)/uv --version))"; \
	else \
		echo "make: uv could not install the dev tools; installing them with pip"; \
		$(BIN)/python -m pip install --quiet --upgrade pip -c $(LOCK) && \
		$(BIN)/python -m pip install --quiet -e '.[dev]' -c $(LOCK); \
	fi
	@touch $@ $(RUN_STAMP)

venv: $(STAMP)  ## Create .venv with the project and its dev tools (at the versions of the lock)

lock: $(STAMP)  ## Refresh requirements/dev.lock: resolve .[dev] afresh on each supported Python here
	$(BIN)/python requirements/lock.py

# Without pipx: a private virtual environment, as pipx makes one, with only the dsh-fs
# command linked into BIN_DIR. Its scripts start the venv's interpreter by absolute path, so
# an MCP host that starts it with another HOME or an empty environment still finds the
# package; the ripgrep wheel's rg stays inside the venv (dsh-fs finds it there).
INSTALL_VENV ?= $(HOME)/.local/share/dsh-fs/venv
BIN_DIR ?= $(HOME)/.local/bin

install:  ## Put the dsh-fs command on your PATH: pipx if you have it, else a private venv
	@if command -v pipx >/dev/null 2>&1; then \
		pipx install --force '.[mcp]'; \
	else \
		$(PYTHON) -m venv --clear "$(INSTALL_VENV)" && \
		"$(INSTALL_VENV)/bin/python" -m pip install --quiet '.[mcp]' && \
		mkdir -p "$(BIN_DIR)" && \
		ln -sfn "$(INSTALL_VENV)/bin/dsh-fs" "$(BIN_DIR)/dsh-fs" && \
		case ":$$PATH:" in \
			*":$(BIN_DIR):"*) echo "installed $(BIN_DIR)/dsh-fs (in $(INSTALL_VENV))";; \
			*) echo "installed $(BIN_DIR)/dsh-fs (in $(INSTALL_VENV)); $(BIN_DIR) is not on your PATH: add it, or use that full path";; \
		esac; \
	fi

# The other checks run beside the suite (it mostly waits, so mypy fits beside it on two
# cores). pytest shows its own progress; each other check prints one line when it ends (its
# output follows the suite's if it failed), and any failure fails the target.
CHECKS := lint typecheck imports

# A script's background command starts with SIGINT ignored (no job control), and exec keeps
# it so: this puts it back before running the rest of the line, so one Ctrl-C stops the
# checks beside the suite too, not only the suite.
DEFAULT_SIGINT = $(BIN)/python -c 'import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_DFL); os.execvp(sys.argv[1], sys.argv[1:])'

test: $(STAMP)  ## Every check CI runs: ruff, mypy --strict, import layers beside pytest, with progress
	@logs=$$(mktemp -d); \
	for check in $(CHECKS); do \
		( start=$$(date +%s); \
		  if $(DEFAULT_SIGINT) $(MAKE) --no-print-directory $$check >"$$logs/$$check" 2>&1; \
		  then result=passed; else result=FAILED; touch "$$logs/$$check.failed"; fi; \
		  echo "make test: $$check $$result in $$(( $$(date +%s) - start )) s" ) & \
	done; \
	$(MAKE) --no-print-directory pytest; status=$$?; \
	wait; \
	for check in $(CHECKS); do \
		if [ -e "$$logs/$$check.failed" ]; then \
			echo "make test: $$check FAILED:"; cat "$$logs/$$check"; status=1; \
		fi; \
	done; \
	rm -rf "$$logs"; exit $$status

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

# The suite mostly waits (servers starting, S3 round trips, child processes), so it runs in
# more workers than cores; work stealing keeps the long tests from ending up on one worker.
# Three, not four: each worker imports and collects the whole suite (~13 s of CPU), and the
# two cores are shared with mypy.
# `make pytest WORKERS=0` runs it in this process (what a debugger wants). Bytecode is
# written even where the environment says not to (PYTHONDONTWRITEBYTECODE): else every worker
# and every `python -m dsh_fs` child the tests start compiles src and the rewritten tests
# again (a worker's collection: 16.8 s of CPU without the cache, 9.4 s with it).
WORKERS ?= 3

pytest: $(STAMP)  ## The quick test suite, in parallel workers (WORKERS=3)
	env -u PYTHONDONTWRITEBYTECODE $(BIN)/pytest -q -m "not slow" -n $(WORKERS) --dist worksteal

coverage: $(STAMP)  ## The quick suite with line and branch coverage: a terminal report and htmlcov/
	$(BIN)/pytest -q -m "not slow" -n $(WORKERS) --dist worksteal \
		--cov --cov-report=term --cov-report=html

demo: $(RUN_STAMP)  ## Run the MCP demo: an agent session over stdio, with a stale edit refused
	$(BIN)/dsh-fs demo

bench: $(STAMP)  ## Benchmarks against raw-Python baselines (writes bench/results.md)
	$(BIN)/python -m bench

bench-peers: $(STAMP)  ## Benchmarks including peer tools, installed in a separate environment
	$(BIN)/python -m bench --peers

torture: $(STAMP)  ## Crash-consistency and lost-update torture runs, the fleet's 1,000 edits (minutes)
	$(BIN)/pytest -q -m slow tests/torture tests/fleet

fleet: $(STAMP)  ## Three replicas behind HAProxy on S3 with a Redis ledger, a few dozen racing edits (~1 min)
	$(BIN)/pytest -q -m slow tests/fleet -k "not thousand"

fuzz: $(STAMP)  ## Long hypothesis runs of the hostile-input and property suites
	HYPOTHESIS_PROFILE=fuzz $(BIN)/pytest -q -m slow tests/fuzz

encodings-property: $(STAMP)  ## SPEC §12's 10,000 random edits on every backend (DSH_FS_ENCODING_EDITS=N: another count)
	$(BIN)/pytest -q -m slow -p no:randomly --durations=0 tests/conformance/test_encodings_property.py

differential: $(STAMP)  ## Compare with the recorded upstream results (writes differential/REPORT.md)
	$(BIN)/python -m differential

edit-recovery: $(STAMP)  ## Run the edit-recovery corpus: how many near-misses are diagnosed, wrong edits
	$(BIN)/python -m edit_recovery

clean:  ## Remove the virtual environment and caches
	rm -rf $(VENV) .mypy_cache .pytest_cache .ruff_cache .coverage htmlcov build dist
