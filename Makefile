# The README names these targets. `make run` serves the example decisions; `make test` tests.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin

.PHONY: install run test test-fast lint format smoke bench eval clean

$(BIN)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $@

install: $(BIN)/.installed

run: install
	$(BIN)/cstp serve --index examples/decisions

test: install
	$(BIN)/pytest

test-fast: install
	$(BIN)/pytest -m "not slow"

lint: install
	$(BIN)/ruff check a2a tests bench
	$(BIN)/ruff format --check a2a tests bench
	$(BIN)/mypy

format: install
	$(BIN)/ruff format a2a tests bench
	$(BIN)/ruff check --fix a2a tests bench

# Smoke-test a running instance: make smoke URL=http://127.0.0.1:8000 TOKEN=...
smoke:
	scripts/smoke.sh $(or $(URL),http://127.0.0.1:8000) $(TOKEN)

eval: install
	$(BIN)/cstp eval ../shared/data/adr ../shared/data/queries-dev.jsonl

bench: install
	$(BIN)/python bench/query_bench.py

clean:
	rm -rf $(VENV) var .pytest_cache .mypy_cache .ruff_cache
