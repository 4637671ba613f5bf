# The README's two commands: `make run` and `make test`. Nothing clever.
VENV ?= .venv
PY := $(VENV)/bin/python
PORT ?= 8000
HOST ?= 127.0.0.1

.PHONY: install run test lint format

$(VENV)/.installed: pyproject.toml
	python3 -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e ".[test]"
	touch $@

install: $(VENV)/.installed

run: install
	$(PY) manage.py migrate --noinput
	$(PY) manage.py demo_setup
	@echo "Toolcrib on http://$(HOST):$(PORT)/  (API docs: /api/docs/, admin: /admin/)"
	$(VENV)/bin/daphne -b $(HOST) -p $(PORT) project.asgi:application

test: install
	VENV=$(VENV) scripts/test.sh

lint: install
	$(VENV)/bin/ruff check . && $(VENV)/bin/ruff format --check .

format: install
	$(VENV)/bin/ruff format . && $(VENV)/bin/ruff check --fix .
