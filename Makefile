# The README names these targets. `make run` serves the example decisions; `make test` tests.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin

.PHONY: install run test test-fast lint format smoke bench eval clean vendor screenshots a2a-sdk-venv

$(BIN)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $@

install: $(BIN)/.installed

# The official a2a-sdk in a virtualenv of its own (it also imports as `a2a`, so never in
# .venv): tests/http/test_a2a_sdk_card.py reads our agent card with it. .ci/run makes it;
# without it that one test skips, saying so.
SDK_VENV := .venv-a2a-sdk
$(SDK_VENV)/bin/.installed:
	$(PYTHON) -m venv $(SDK_VENV)
	$(SDK_VENV)/bin/pip install --quiet 'a2a-sdk>=1.0,<2' httpx
	touch $@

a2a-sdk-venv: $(SDK_VENV)/bin/.installed

run: install
	$(BIN)/cstp serve --index examples/decisions

# Three pytest-xdist workers on two cores, each test file whole on one of them (its module
# fixtures, its servers, stay shared): the third overlaps the tests that wait (deadlines,
# servers starting) with the others' CPU work, 287 s against 307 s with two, measured on
# this 2-core machine in a row. A single file runs faster without: `.venv/bin/pytest tests/x.py`.
XDIST := -n 3 --dist loadfile

test: install
	$(BIN)/pytest $(XDIST)

test-fast: install
	$(BIN)/pytest $(XDIST) -m "not slow"

lint: install
	$(BIN)/ruff check a2a tests bench scripts
	$(BIN)/ruff format --check a2a tests bench scripts
	$(BIN)/mypy
	$(BIN)/lint-imports

format: install
	$(BIN)/ruff format a2a tests bench
	$(BIN)/ruff check --fix a2a tests bench

# Smoke-test a running instance: make smoke [URL=...] [TOKEN=...]; URL defaults to $CSTP_URL,
# then http://127.0.0.1:8000.
SMOKE_URL = $(or $(URL),$(CSTP_URL),http://127.0.0.1:8000)
smoke:
	@echo "scripts/smoke.sh $(SMOKE_URL)$(if $(TOKEN), <TOKEN>,)"
	@scripts/smoke.sh $(SMOKE_URL) $(TOKEN)

eval: install
	$(BIN)/cstp eval ../shared/data/adr ../shared/data/queries-dev.jsonl data/queries-dev2.jsonl

bench: install
	$(BIN)/python bench/query_bench.py

clean:
	rm -rf $(VENV) $(SDK_VENV) var .pytest_cache .mypy_cache .ruff_cache

# The console's chart library, vendored into the package (no CDN, no build step for users).
# `make vendor` fetches the exact version from the npm registry, checks the tarball's
# SHA-256, and keeps the UMD build, its licence and its version in a2a/console/vendor/.
CHARTJS_VERSION := 4.6.1
CHARTJS_SHA256  := 9345dacdf4bb4c5d40321f4b9aafab6fe676d37a534fc0bc2d17c4c4e29c4f00
VENDOR_DIR      := a2a/console/vendor

vendor:
	@tmp=$$(mktemp -d) && trap 'rm -rf "$$tmp"' EXIT && \
	(cd "$$tmp" && npm pack --silent chart.js@$(CHARTJS_VERSION) >/dev/null) && \
	echo "$(CHARTJS_SHA256)  $$tmp/chart.js-$(CHARTJS_VERSION).tgz" | sha256sum --check --quiet && \
	tar -xzf "$$tmp/chart.js-$(CHARTJS_VERSION).tgz" -C "$$tmp" && \
	mkdir -p $(VENDOR_DIR) && \
	sed '/^\/\/# sourceMappingURL=/d' "$$tmp/package/dist/chart.umd.min.js" > $(VENDOR_DIR)/chart.umd.min.js && \
	cp "$$tmp/package/LICENSE.md" $(VENDOR_DIR)/chart.js.LICENSE.md && \
	echo "chart.js $(CHARTJS_VERSION) (npm, sha256 $(CHARTJS_SHA256))" > $(VENDOR_DIR)/VERSIONS
	@cat $(VENDOR_DIR)/VERSIONS

# PNGs of each console view for the README (needs chromium; starts its own server).
screenshots: install
	$(BIN)/python scripts/screenshots.py docs/screenshots
