# The README's two commands: `make run` and `make test`. Nothing clever.
VENV ?= .venv
PY := $(VENV)/bin/python
PORT ?= 8000
HOST ?= 127.0.0.1

.PHONY: install run test test-browser lint format messages

$(VENV)/.installed: pyproject.toml
	python3 -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e ".[test,litellm]"
	touch $@

install: $(VENV)/.installed
	scripts/ensure-frontend.sh
	$(PY) scripts/compile-messages.py

# The translation catalogs (docs/i18n.md): every marked string of the Python code and
# templates (domain django) and of the pages' modules (djangojs) into each language's
# .po, then compiled. Needs GNU gettext's xgettext (Debian: gettext).
LOCALES ?= de
MESSAGE_IGNORES := -i .venv -i var -i node_modules -i tests -i bench -i "frontend/static/vendor"
messages: install
	cd $(CURDIR) && for lang in $(LOCALES); do \
		$(PY) manage.py makemessages -d django -l $$lang --add-location=file $(MESSAGE_IGNORES) -i frontend/static && \
		$(PY) manage.py makemessages -d djangojs -l $$lang --add-location=file $(MESSAGE_IGNORES) -i "*.min.js" \
			|| exit 1; \
	done
	$(PY) scripts/compile-messages.py

# The demo agents and users (demo/): on for `make run` and the tests, never in production.
run test test-browser: export TOOLCRIB_DEMO = 1

run: install
	scripts/ensure-sandbox.sh
	$(PY) manage.py migrate --noinput
	$(PY) manage.py demo_setup
	@echo "Toolcrib on http://$(HOST):$(PORT)/  (API docs: /api/docs/, admin: /admin/)"
	$(VENV)/bin/daphne -b $(HOST) -p $(PORT) project.asgi:application

test: install
	VENV=$(VENV) scripts/test.sh

# Only the browser tests (Chromium + a live server); screenshots in var/screenshots/.
test-browser: install
	scripts/ensure-chromium.sh
	scripts/ensure-oidc-provider.sh
	SECRET_KEY=toolcrib-test-only-secret-key TOOLCRIB_FAST_HASHER=1 \
		$(VENV)/bin/pytest -q -p no:asyncio tests/browser

lint: install
	$(VENV)/bin/ruff check . && $(VENV)/bin/ruff format --check .

format: install
	$(VENV)/bin/ruff format . && $(VENV)/bin/ruff check --fix .
