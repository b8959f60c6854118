# fay_ros — the two commands: `make run` and `make test`.
SHELL := /bin/bash
VENV := .venv
PY := $(VENV)/bin/python
export ROS_AUTOMATIC_DISCOVERY_RANGE ?= LOCALHOST

.PHONY: setup run test test-fast bench clean help

help:
	@echo "make run    - set everything up, then run the companion on offline defaults"
	@echo "make test   - set everything up, then run the whole test suite"
	@echo "make test-fast - the static checks and the core tests (no ROS graph, no processes)"
	@echo "make bench  - run the benchmarks, write docs/BENCHMARKS.md (ONLY=name to run one)"
	@echo "make setup  - only the (idempotent) setup"

setup:
	@bash scripts/setup.sh

run: setup
	@bash scripts/run.sh $(ARGS)

test: setup
	@bash scripts/test.sh $(PYTEST_ARGS)

test-fast: setup
	@bash scripts/test.sh --fast $(PYTEST_ARGS)

bench: setup
	@$(PY) -m bench.run $(ONLY)

clean:
	rm -rf build $(VENV) .pytest_cache .mypy_cache .ruff_cache
