# Everyday commands. `make run` and `make test` set everything up on a fresh machine.
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
PROTOS := $(shell find proto -name '*.proto' | sort)

.PHONY: setup run test proto lint bench clean

setup:
	./scripts/bootstrap

run: setup
	$(PY) manage.py migrate --noinput
	$(PY) manage.py runserver 127.0.0.1:8000

test:
	./scripts/bootstrap --tests
	$(VENV)/bin/pytest $(PYTEST_ARGS)

# Regenerates the committed Python code from proto/ (tests fail when it is stale):
# messages (*_pb2.py, *_pb2.pyi) and the connectrpc service protocols (*_connect.py).
proto:
	PATH="$(VENV)/bin:$$PATH" $(PY) -m grpc_tools.protoc -I proto --python_out=. --pyi_out=. \
		--connectrpc_out=. --connectrpc_opt=protobuf=google $(PROTOS)

lint:
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

bench: setup
	$(PY) bench/run.py

clean:
	rm -rf $(VENV) node_modules var .pytest_cache .ruff_cache
