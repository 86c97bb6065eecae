# trajudge: two commands. `make demo` and `make test` each create .venv if missing.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-dev

.PHONY: demo test install lint typecheck clean servers

$(BIN)/python:
	$(PY) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip

$(STAMP): pyproject.toml constraints.txt | $(BIN)/python
	$(BIN)/python -m pip install -q -c constraints.txt -e ".[dev]"
	touch $(STAMP)

install: $(STAMP)

# The tracing backends the tests start (tests/_phoenix.py, tests/backends/_mlflow_server.py) and
# the OTLP/HTTP receiver (tests/backends/_otlp_sink.py), each in a venv of its own: their
# dependencies stay out of trajudge's. The tests build it themselves when missing.
SERVERS := .venv-servers
$(SERVERS)/phoenix/.installed: servers/phoenix.txt
	$(PY) -m venv $(SERVERS)/phoenix
	$(SERVERS)/phoenix/bin/python -m pip install -q -r servers/phoenix.txt
	cp servers/phoenix.txt $@

$(SERVERS)/mlflow/.installed: servers/mlflow.txt
	$(PY) -m venv $(SERVERS)/mlflow
	$(SERVERS)/mlflow/bin/python -m pip install -q -r servers/mlflow.txt
	cp servers/mlflow.txt $@

$(SERVERS)/otelsink/.installed: servers/otelsink.txt
	$(PY) -m venv $(SERVERS)/otelsink
	$(SERVERS)/otelsink/bin/python -m pip install -q -r servers/otelsink.txt
	cp servers/otelsink.txt $@

servers: $(SERVERS)/phoenix/.installed $(SERVERS)/mlflow/.installed $(SERVERS)/otelsink/.installed

demo: $(STAMP)
	LITELLM_LOCAL_MODEL_COST_MAP=True bash examples/demo.sh

lint: $(STAMP)
	$(BIN)/ruff check src tests benchmarks
	$(BIN)/ruff format --check src tests benchmarks

typecheck: $(STAMP)
	$(BIN)/mypy

# Two workers (the machine's two cores); tests sharing one expensive resource (the embedded
# model, a Ray cluster) are grouped onto one worker by tests/conftest.py. PYTEST_WORKERS=0
# runs in one process.
PYTEST_WORKERS ?= 2

test: $(STAMP) servers
	$(BIN)/ruff check src tests benchmarks
	$(BIN)/mypy
	LITELLM_LOCAL_MODEL_COST_MAP=True $(BIN)/python -m pytest -n $(PYTEST_WORKERS) --dist loadgroup --durations=30 $(PYTEST_ARGS)

clean:
	rm -rf $(VENV) $(SERVERS) .pytest_cache .mypy_cache .ruff_cache
