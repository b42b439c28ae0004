# Two entry points for a fresh machine: `make local` and `make test`. Each builds the venv it needs first.
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-stamp
# The provider packages the tests run for real, installed ahead into the venv's requirements cache, so that the
# tests find them without the network (tests/conftest.py points UPDRAFT_REQUIREMENTS_CACHE there too). Run every
# time: when the cache has them already (the same file, the same installer), it answers in a fraction of a second.
export UPDRAFT_REQUIREMENTS_CACHE := $(abspath $(VENV))/requirements-cache

.PHONY: local test test-fast bytecode install bench-parse bench-scheduler bench-e2e bench-api bench-ui bench-capacity bench-latency bench-claims clean

$(STAMP): pyproject.toml
	python3 -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[dev,infra]'
	touch $(STAMP)

.PHONY: providers
providers: $(STAMP)
	$(VENV)/bin/updraft requirements install tests/providers/requirements.txt

# The browser tests (tests/browser) drive Debian's Chromium with Playwright (never `playwright install`): only the
# test path installs it, with apt when missing and run as root (CI runs as root on Debian); otherwise the browser
# tier skips, saying why. `make local` never needs it.
.PHONY: chromium
chromium:
	@if command -v chromium >/dev/null; then :; \
	elif command -v apt-get >/dev/null && [ "$$(id -u)" = 0 ]; then apt-get update && apt-get install -y chromium; \
	else echo "no Chromium (apt-get as root installs it): the browser tests (tests/browser) are skipped"; fi

# The provider tests (tests/functional/providers) run the real postgres provider on a throwaway PostgreSQL server
# of Debian's package (never a system service): installed with apt when missing; without apt those tests skip.
.PHONY: postgresql
postgresql:
	@if ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || command -v initdb >/dev/null; then :; \
	elif command -v apt-get >/dev/null; then apt-get update && apt-get install -y postgresql; \
	else echo "no apt-get here: install PostgreSQL yourself, or the PostgreSQL provider tests are skipped"; fi

# The venv, the package and its tools, Chromium, PostgreSQL and the test providers (what `make test` needs first).
install: $(STAMP) providers postgresql chromium

# The whole system in the foreground (Ctrl-C stops it); state survives restarts in .updraft/state. Needs only the
# venv: no Chromium, no root.
local: $(STAMP)
	$(VENV)/bin/updraft local --dags-folder examples/dags --unpause --state-dir .updraft/state

# The package's, the handlers' and the tests' helpers' bytecode, written ahead (a second when it is current): each
# xdist worker and each process a test starts (a local system, a parse child, `dags test`) imports them, and where
# nothing wrote it (a fresh clone, or PYTHONDONTWRITEBYTECODE set) every one of them compiled them again, about 5
# CPU-seconds a worker. Test modules themselves are compiled by pytest's assertion rewriting, not here.
bytecode: $(STAMP)
	$(PY) -m compileall -q -j 0 shared functions tests

# Lint, then types (mypy reads [tool.mypy] in pyproject.toml: which packages, strict where), then the suite, on
# twice as many xdist workers as cores: the whole suite waits more than it computes (local systems, Chromium, the
# deploy tier's Lambda-like processes, polls), so one worker per core left a third of the CPU idle (pytest 783 s
# with 2 workers against 662 s with 4 on 2 cores, the same hour). `make test-fast` computes: one per core.
test: $(STAMP) providers postgresql chromium bytecode
	$(VENV)/bin/ruff check .
	$(VENV)/bin/mypy
	$(VENV)/bin/pytest -n $$(( 2 * $$(nproc) ))

# The inner loop, 75-100 s on 2 cores: lint, then the unit tier and the functional tier without the tests marked
# `slow` (pyproject's markers: those that start a local system, a process or a `dags test` run, sweeps and
# benchmarks, and any test over about a second). No mypy, no browser, deploy or infra tier: `make test` runs them all.
test-fast: $(STAMP) providers bytecode
	$(VENV)/bin/ruff check .
	$(VENV)/bin/pytest -m "not slow" tests/unit tests/functional

bench-parse: $(STAMP)
	$(PY) bench/parse_bench.py

bench-scheduler: $(STAMP)
	$(PY) bench/scheduler_bench.py

bench-e2e: $(STAMP)
	$(PY) bench/e2e_bench.py

# p50/p95 of GET /dags and a trigger through local mode's API Gateway, and the API Lambda's cold import.
bench-api: $(STAMP)
	$(PY) bench/api_bench.py

bench-ui: $(STAMP)
	$(PY) bench/ui_bench.py

# Issue 19's capacity model: every DynamoDB request of seven scenarios (issue 19's five, the fan-out as 4 runs,
# the mapped run at full parallelism) charged by DynamoDB's rules (bench/README.md).
bench-capacity: $(STAMP)
	$(PY) bench/capacity_bench.py

# Claims/s for 1-8 schedulers, hop latency and fan-out wall time on moto served per-item concurrently with AWS's
# request latencies (bench/README.md, "Latency-true embedded AWS").
bench-latency: $(STAMP)
	$(PY) bench/latency_bench.py

bench-claims: $(STAMP)
	$(PY) bench/claims_processes.py

clean:
	rm -rf $(VENV)
