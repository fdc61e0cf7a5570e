# Everyday commands. `make run` and `make test` set everything up on a fresh machine.
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
PORT   ?= 8000
PROTOS := $(shell find proto -name '*.proto' | sort)
# A failed set-up leaves var/run.failed, so that `make wait` stops waiting at once.
FAILED := { mkdir -p var; touch var/run.failed; exit 1; }

.PHONY: setup run stop wait tools test proto lint migrations-check bench clean

setup:
	./scripts/bootstrap

# Installs what running needs (requirements.txt, the SDK with .venv/bin/cpctl), creates the
# database if missing, migrates, serves (deploy/gunicorn.dev.conf.py: HTTP/1.1 and h2c, reload;
# requests in var/log/requests.log, warnings on the terminal).
run:
	@rm -f var/run.failed
	@./scripts/bootstrap || $(FAILED)
	@$(PY) -m controlplane.dbsetup || $(FAILED)
	@$(PY) manage.py migrate --noinput || $(FAILED)
	@mkdir -p var/log
	@PORT=$(PORT) $(VENV)/bin/gunicorn -c deploy/gunicorn.dev.conf.py || $(FAILED)

# Stops the server `make run &` started (on $(PORT)).
stop:
	@kill $$(cat var/run-$(PORT).pid 2>/dev/null) 2>/dev/null && echo "stopped the server on port $(PORT)" || echo "no server of make run on port $(PORT)"

# Returns once `make run` (started in the background) answers /healthz.
wait:
	./scripts/wait-ready

# The dev tools: requirements-dev.txt (code generation, tests), npm's buf and oidc-provider,
# Chromium and nginx for the tests. (`make run` already installs the SDK with cpctl.)
tools:
	./scripts/bootstrap --tests

test: tools
	$(VENV)/bin/pytest $(PYTEST_ARGS)

# Regenerates the committed Python code from proto/ (tests fail when it is stale):
# messages (*_pb2.py, *_pb2.pyi) and the connectrpc service protocols (*_connect.py).
proto:
	PATH="$(VENV)/bin:$$PATH" $(PY) -m grpc_tools.protoc -I proto --python_out=. --pyi_out=. \
		--connectrpc_out=. --connectrpc_opt=protobuf=google $(PROTOS)
	$(PY) scripts/gen_sdk_proto.py

# Style, formatting, and the import-graph contracts of pyproject.toml.
lint: tools
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/lint-imports --no-cache

# Fails when a model changed without its migration. The database is created first if missing:
# makemigrations --check connects to it, and would otherwise wait out the pool's 30 s timeout.
migrations-check: tools
	$(PY) -m controlplane.dbsetup
	$(PY) manage.py makemigrations --check --dry-run

bench: setup
	$(PY) bench/run.py

clean:
	rm -rf $(VENV) node_modules var .pytest_cache .ruff_cache
