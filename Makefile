# Two entry points for a fresh machine: `make local` and `make test`. Each builds the venv it needs first.
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-stamp

.PHONY: local test bench-parse bench-scheduler bench-e2e bench-api clean

$(STAMP): pyproject.toml
	python3 -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[dev,infra]'
	touch $(STAMP)

# The whole system in the foreground (Ctrl-C stops it); state survives restarts in .updraft/state.
local: $(STAMP)
	$(VENV)/bin/updraft local --dags-folder examples/dags --unpause --state-dir .updraft/state

# Lint, then types (mypy reads [tool.mypy] in pyproject.toml: which packages, strict where), then the suite.
test: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/mypy
	$(VENV)/bin/pytest

bench-parse: $(STAMP)
	$(PY) bench/parse_bench.py

bench-scheduler: $(STAMP)
	$(PY) bench/scheduler_bench.py

bench-e2e: $(STAMP)
	$(PY) bench/e2e_bench.py

# p50/p95 of GET /dags and a trigger through local mode's API Gateway, and the API Lambda's cold import.
bench-api: $(STAMP)
	$(PY) bench/api_bench.py

clean:
	rm -rf $(VENV)
