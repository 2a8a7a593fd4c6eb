# group-broker: every target creates what it needs, so a fresh clone only needs `make test` or `make run`.
PY ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-test

.PHONY: install install-test run test lint codegen bench clean

$(BIN)/python:
	$(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip

$(VENV)/.installed: pyproject.toml | $(BIN)/python
	$(BIN)/pip install -q -e .
	touch $@

install: $(VENV)/.installed

run: install
	$(BIN)/python server.py server.properties

$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/pip install -q -e '.[test]'
	touch $(STAMP)

install-test: $(STAMP)

codegen: install-test
	$(BIN)/python -m protocol.codegen

lint: install-test
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy protocol coordinator broker storage server.py
	$(BIN)/lint-imports

test: install-test lint
	$(BIN)/pytest -q -p no:cacheprovider

bench: install-test
	$(BIN)/python -m bench

clean:
	rm -rf $(VENV) build *.egg-info
