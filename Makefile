# Two entry points for a fresh machine: `make local` and `make test`. Each builds the venv it needs first.
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-stamp

.PHONY: local test bench-parse bench-scheduler clean

$(STAMP): pyproject.toml
	python3 -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[dev,infra]'
	touch $(STAMP)

local: $(STAMP)
	$(VENV)/bin/updraft dags list --dags-folder examples/dags
	$(VENV)/bin/updraft dags list-import-errors --dags-folder examples/dags
	$(VENV)/bin/updraft dags test example_taskflow_etl --dags-folder examples/dags
	$(VENV)/bin/updraft dags test example_dynamic_mapping --dags-folder examples/dags

test: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/pytest

bench-parse: $(STAMP)
	$(PY) bench/parse_bench.py

bench-scheduler: $(STAMP)
	$(PY) bench/scheduler_bench.py

clean:
	rm -rf $(VENV)
