# Two entry points (see README): `make run` and `make test`. Both set everything up first.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
INSTALLED := $(VENV)/.installed
COMPILED  := $(VENV)/.compiled
PORT   ?= 8501
export POOLJUDGE_DB ?= $(CURDIR)/data/pooljudge.db
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1
# Python writes its bytecode caches (__pycache__, ignored by git): the suite starts many interpreters (servers,
# worker processes) and pytest rewrites every test module; without the caches each compiles everything again.
unexport PYTHONDONTWRITEBYTECODE

.PHONY: setup run lint test prepare system-packages chromium postgresql sqlite3 bench clean

# What pip installs before uv, by the system's pip or (none there, or a failed try) the venv's own
FIRST_INSTALL := install --quiet --no-compile uv torch==2.13.0

$(INSTALLED): pyproject.toml
	# No pip of the venv's own (it took 8.5 s to create): the system's pip installs into the venv (`--python`,
	# pip >= 22.3), or, where there is none, the venv gets its own after all. uv installs pip later, for users.
	$(PYTHON) -m venv --without-pip $(VENV)
	# uv installs the project's ~110 packages in about 16 s where pip took about 50 (parallel downloads, no
	# per-file bookkeeping); it does not look in the local wheelhouse that holds torch's CPU build, so pip
	# installs torch first, and uv keeps it: it satisfies `torch>=2.2`. The CPU wheel of torch lies on local
	# disk; any other torch request pulls a multi-GB CUDA build.
	$(PYTHON) -m pip --python $(BIN)/python $(FIRST_INSTALL) \
	  || { $(BIN)/python -m ensurepip --default-pip && $(BIN)/python -m pip $(FIRST_INSTALL); }
	$(BIN)/python -m uv pip install --quiet --python $(BIN)/python -e '.[dev]' pip
	touch $@

# pip ran with --no-compile and uv compiles nothing: writing the bytecode of all ~19,000 modules installed
# costs about 70 CPU-s, most of them never imported (torch's and transformers' model zoo); the ~5,500 that the
# app and the tests import are compiled here, by importing them once.
$(COMPILED): $(INSTALLED)
	$(BIN)/python tools/compile_imported.py
	touch $@

setup: $(COMPILED)

run: setup
	$(BIN)/streamlit run serve.py --server.headless true --server.port $(PORT) --browser.gatherUsageStats false

# What the tests need from the distribution, installed in one `apt-get update` and one `apt-get install` (three
# of each took their index downloads and package triggers three times on a fresh machine): Chromium and its
# headless shell for the browser tests, a CJK font so Chinese passages render in their screenshots, PostgreSQL's
# server binaries for the tests' throwaway cluster, the sqlite3 shell.  Only what is missing is installed.
system-packages:
	@missing=""; \
	command -v chromium >/dev/null 2>&1 || missing="$$missing chromium"; \
	fc-list 2>/dev/null | grep -qi "Noto Sans CJK" || missing="$$missing fonts-noto-cjk"; \
	ls /usr/lib/postgresql/*/bin/initdb /usr/lib/postgresql/*/bin/pg_ctl >/dev/null 2>&1 || missing="$$missing postgresql"; \
	command -v sqlite3 >/dev/null 2>&1 || missing="$$missing sqlite3"; \
	command -v chromium-headless-shell >/dev/null 2>&1 || shell=chromium-headless-shell; \
	[ -z "$$missing$$shell" ] || { \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update -qq || exit 1; \
	  [ -z "$$missing" ] || $$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null || exit 1; \
	  [ -z "$$shell" ] || $$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$shell >/dev/null 2>&1 \
	    || echo "chromium-headless-shell is not available: the browser tests run on chromium"; }

# By name: each installs whatever of the above is missing (one detection, one apt-get run for all three).
chromium postgresql sqlite3: system-packages ; @:

# The conventions, checked: ruff's lint rules and format, mypy (strict on core/); config in pyproject.toml.
# lint-imports: the architecture's import contracts (layers, no circles), config in .importlinter.
lint: $(INSTALLED)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy
	$(BIN)/lint-imports

# On a fresh machine: the packages (uv, then mypy and compile_imported.py side by side: one CPU each) beside
# the system packages (downloads, dpkg); lint's mypy needs the packages installed, not their bytecode.
prepare:
	@$(MAKE) --no-print-directory -j3 setup lint system-packages

# -n auto: one pytest-xdist worker per core, each with its own templates, PostgreSQL cluster and app server;
# loadgroup keeps the tests of one xdist_group on one worker.  One torch/BLAS thread per worker: the workers
# already fill the cores, and two threads per worker would make them fight over them.
test: prepare
	OMP_NUM_THREADS=1 $(BIN)/python -m pytest -q -n auto --dist loadgroup

bench: setup
	for script in benchmarks/bench_*.py; do $(BIN)/python $$script || exit 1; done

clean:
	rm -rf $(VENV) data .pytest_cache
