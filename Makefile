# Two commands do all set-up: `make run` and `make test` (see README.md).
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
PYTEST := $(PY) -m pytest
PG_URL ?= postgres://postgres@127.0.0.1:5432/controltower
# `make run` is local use: debug on, so no secret key is needed. PORT=8123 serves elsewhere
# (a shared machine).
RUN_ENV := DEBUG=1
PORT ?= 8000

.PHONY: run test test-sqlite test-postgres test-browser lint bench clean demo token agents

$(PY):
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip

$(VENV)/.run-installed: requirements.txt | $(PY)
	$(PY) -m pip install -q -r requirements.txt
	touch $@

$(VENV)/.dev-installed: requirements.txt requirements-dev.txt | $(PY)
	$(PY) -m pip install -q -r requirements-dev.txt
	touch $@ $(VENV)/.run-installed

run: $(VENV)/.run-installed
	$(RUN_ENV) $(PY) manage.py migrate --noinput
	$(RUN_ENV) $(PY) manage.py collectstatic --noinput -v0
	@# Last before serving, so that the first admin's password is not lost in the log.
	$(RUN_ENV) $(PY) manage.py ensure_admin --url http://127.0.0.1:$(PORT)/
	@# The webhook worker runs beside the web server and stops with it (Ctrl-C stops both).
	$(RUN_ENV) $(PY) manage.py deliver & deliverer=$$!; \
	trap 'kill $$deliverer 2>/dev/null' EXIT; \
	$(RUN_ENV) $(VENV)/bin/gunicorn controltower.wsgi --bind 127.0.0.1:$(PORT) --workers 2 --threads 4 --access-logfile -

lint: $(VENV)/.dev-installed
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/mypy

test-sqlite: $(VENV)/.dev-installed
	$(PYTEST) --ignore=tests/browser

# PostgreSQL when reachable; under CI=true an unreachable server fails the run.
test-postgres: $(VENV)/.dev-installed
	@if $(PY) tests/support/postgres_reachable.py "$(PG_URL)"; then \
		DATABASE_URL="$(PG_URL)" $(PYTEST) --ignore=tests/browser; \
	elif [ "$$CI" = "true" ]; then \
		echo "PostgreSQL is not reachable at $(PG_URL), and CI=true requires it."; exit 1; \
	else \
		echo "SKIPPED: the PostgreSQL half of the suite (no server at $(PG_URL))."; \
	fi

# Playwright's sync API inside live_server needs this flag, so browser tests run alone.
test-browser: $(VENV)/.dev-installed
	DJANGO_ALLOW_ASYNC_UNSAFE=true $(PYTEST) tests/browser

# The agent tests' own parts: the real Claude Code, pinned in tests/agents (npm ci), and the
# hook types @anthropic-ai/claude-agent-sdk publishes (its sdk.d.ts, from `npm pack`: the
# installed SDK would bring a second 400 MB binary). Off CI, no npm means those tests skip.
AGENTS := tests/agents
AGENT_SDK := @anthropic-ai/claude-agent-sdk@0.3.333

# `npm install --no-save` from the lock, not `npm ci`: npm 11 leaves OpenCode's packages for
# other platforms out of the lock it writes, then `npm ci` refuses that very lock.
$(AGENTS)/node_modules/.installed: $(AGENTS)/package.json $(AGENTS)/package-lock.json
	cd $(AGENTS) && npm install --no-save --no-audit --no-fund --loglevel=error
	touch $@

$(AGENTS)/sdk.d.ts:
	cd $(AGENTS) && tarball=$$(npm pack $(AGENT_SDK) --silent) && \
		tar -xzf "$$tarball" package/sdk.d.ts -O > sdk.d.ts.part && rm "$$tarball" && \
		mv sdk.d.ts.part sdk.d.ts

agents:
	@if command -v npm >/dev/null; then \
		$(MAKE) --no-print-directory $(AGENTS)/node_modules/.installed $(AGENTS)/sdk.d.ts; \
	elif [ "$$CI" = "true" ]; then \
		echo "npm is missing, and CI=true requires the agent tests (Claude Code)."; exit 1; \
	else \
		echo "SKIPPED: the agent tests' parts (no npm): they will skip."; \
	fi

test: lint agents test-sqlite test-postgres test-browser

bench: $(VENV)/.dev-installed
	$(PY) bench/run_all.py

clean:
	rm -rf $(VENV) staticfiles .test-db.sqlite3* $(AGENTS)/node_modules $(AGENTS)/sdk.d.ts

# Load the demo logs (a dozen sessions in every state, a lapsed node, a reclaimed one and a
# message waiting) into the local database, moved so that they end just now (they were
# written as of the moment in demo/written-as-of).
demo: $(VENV)/.run-installed
	$(RUN_ENV) $(PY) manage.py migrate --noinput -v0
	$(RUN_ENV) $(PY) manage.py import_jsonl --as-if-now $$(cat demo/written-as-of) demo/

# Print a new API token for a user: make token user=admin [name=my-agent]
token: $(VENV)/.run-installed
	@$(RUN_ENV) $(PY) manage.py create_token "$(user)" --name "$(or $(name),agent)"
